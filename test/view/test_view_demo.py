"""The views of the adaptive demo and of identification (issue 40), without a browser: `robot-dynamics demo
--view` draws the simulated arm and the controller's estimate as it learns, the payload body's estimated mass
moving toward the truth; `identify --view` draws the identified inertias beside the URDF's; `--view` without viser
is an error naming the extra."""
import importlib.util
import sys

import numpy as np
import pytest

from robot_dynamics import demo

needs_view = pytest.mark.skipif(importlib.util.find_spec("viser") is None,
                                reason="the view extra is not installed: pip install -e '.[view]'")


def test_view_without_viser_is_an_error_naming_the_extra(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "viser", None)              # `import viser` raises ImportError
    assert demo.main(["--view", "--in-process", "--duration", "2"]) == 2
    assert 'pip install -e ".[view]"' in capsys.readouterr().err


@needs_view
def test_demo_view_draws_the_loop_as_it_learns():
    """Over a 2 s loop (not held to real time) the view is redrawn: its q is a state the simulator reached (the
    reference minus the recorded error at a recorded tick), its "estimate" one of the controller's recorded
    estimates, not the first, the payload body's mass nearer the truth than the initial guess; "truth" is the
    arm with its payload."""
    sc = demo.make_scenario(2.0, 1000.0)
    view = demo.LiveView(sc, port=8160, realtime=False)
    try:
        rec = demo.run_in_process(sc, lambda t: None, view)
        drawn = view.viewer.parameters["estimate"].reshape(-1)
        tick = next(i for i, pi in enumerate(rec.pi_hat) if np.array_equal(pi, drawn))
        assert tick > 0
        np.testing.assert_allclose(view.viewer.q, sc.reference(rec.t[tick]).q - rec.e[tick], rtol=0, atol=1e-12)
        np.testing.assert_array_equal(view.viewer.parameters["truth"].reshape(-1), sc.truth.parameters)
        k = 10 * view.k
        assert abs(drawn[k] - sc.truth.parameters[k]) < abs(sc.pi_hat0[k] - sc.truth.parameters[k])
        assert "estimate" in view.mass.content and f"{drawn[k]:.3f} kg" in view.mass.content
    finally:
        view.viewer.close()


def test_identify_view_without_viser_is_refused_before_identifying(monkeypatch, capsys, tmp_path):
    """The extra is checked before the logs are read: a log that does not exist is not what the error names."""
    from robot_dynamics.cli import main
    monkeypatch.setitem(sys.modules, "viser", None)
    assert main(["identify", "planar_2link", str(tmp_path / "missing.npz"), "--view"]) == 2
    assert capsys.readouterr().err.endswith('identify --view needs the view extra (viser): pip install -e ".[view]"\n')


@needs_view
def test_identified_inertias_beside_the_urdf():
    """The parameters identified from noiseless torques (the inverse dynamics of random states of planar_2link,
    which they explain to 1e-9) are drawn beside the URDF's, under the URL the command prints."""
    import io

    import robot_dynamics as rd
    from robot_dynamics.bundled import bundled_urdf
    from robot_dynamics.cli import show_identified
    from robot_dynamics.identification import identify
    path = bundled_urdf("planar_2link")
    robot = rd.load_urdf(path)
    rng = np.random.default_rng(0)
    q, v, a = (rng.uniform(-2, 2, (200, robot.nv)) for _ in range(3))
    result = identify(robot, q, v, a, robot.inverse_dynamics(q, v, a))
    out = io.StringIO()
    viewer = show_identified(robot, path, result, out, wait=False)
    try:
        assert viewer.url in out.getvalue()
        np.testing.assert_array_equal(viewer.parameters["identified"].reshape(-1), result.parameters)
        np.testing.assert_allclose(result.predict(robot, q, v, a), robot.inverse_dynamics(q, v, a), atol=1e-9)
    finally:
        viewer.close()
