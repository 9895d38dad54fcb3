"""Issue 13 (reliability), item 6: URDF text as the parser reads it.  Text with a byte-order mark or in
UTF-16/32 is XML, not a path; text that is neither is not quoted whole; a URDF number is an xs:double.
"""
import pytest

from reliability_helpers import SMALL, link, robot_xml
from robot_dynamics.urdf import URDFError, parse_urdf


@pytest.mark.parametrize("encode", [
    lambda s: "\ufeff" + s,
    lambda s: ("\ufeff" + s).encode("utf-8"),
    lambda s: s.encode("utf-16"),
    lambda s: s.encode("utf-16-le"),
    lambda s: s.encode("utf-16-be"),
    lambda s: s.encode("utf-32"),
    lambda s: '<?xml version="1.0" encoding="UTF-16"?>\n' + s,
    lambda s: ('<?xml version="1.0" encoding="UTF-16"?>\n' + s).encode("utf-16"),
    lambda s: ("\n  " + s).encode("utf-16-le"),
    lambda s: ("\n  " + s).encode("utf-32-be"),
], ids=["str BOM", "UTF-8 BOM", "UTF-16 BOM", "UTF-16-LE", "UTF-16-BE", "UTF-32", "str declared UTF-16",
        "UTF-16 declared", "UTF-16-LE blank first", "UTF-32-BE blank first"])
def test_text_with_a_byte_order_mark_or_in_utf16_is_xml(encode, tmp_path):
    """Such text used to be taken for a file path (the error quoted the whole document); a file of it loads too."""
    text = encode(SMALL)
    path = tmp_path / "robot.urdf"
    path.write_bytes(text if isinstance(text, bytes) else b"")
    for source in (text, path) if isinstance(text, bytes) else (text,):
        description = parse_urdf(source)
        assert (description.root, [j.name for j in description.joints]) == ("a", ["j"])


def test_text_that_is_neither_xml_nor_a_path_is_not_quoted_whole():
    text = "robot " * 2000
    with pytest.raises(URDFError, match=r"cannot read URDF file '.{0,80}\.\.\.': .*must start with '<'") as error:
        parse_urdf(text)
    assert len(str(error.value)) < 300


@pytest.mark.parametrize("number, accepted", [
    ("1_0", False), ("\u0661\u0660", False), ("\uff11", False), ("0x10", False), ("1e", False), ("1.2.3", False),
    ("infinity", False), ("1,5", False), ("1.5\u00a0", False),
    ("10", True), ("+1.", True), ("-.5", True), ("1E+05", True), ("1e-3", True), ("  2.5", True), ("007", True),
], ids=repr)
def test_urdf_numbers_are_xs_double(number, accepted):
    """float() accepts '1_0' and Arabic-Indic or full-width digits; a URDF number is an xs:double."""
    xml = robot_xml(link("a", xyz=f"{number} 0 0"))
    if accepted:
        assert parse_urdf(xml).links["a"].inertial.com[0] == float(number)
    else:
        with pytest.raises(URDFError, match="link 'a': <origin xyz=.* (is not a list of numbers|non-finite)"):
            parse_urdf(xml)
