"""The public API: every real URDF loads, bad arrays are refused by name, conventions hold, the CLI works."""
import io
import json

import numpy as np
import pytest

import robot_dynamics as rd
from oracle import erd_urdfs, relative_error
from robot_dynamics.bundled import bundled_names, bundled_urdf
from robot_dynamics.cli import main as cli

ALL_URDFS = erd_urdfs()


def test_example_robot_data_has_69_urdfs():
    assert len(ALL_URDFS) == 69


@pytest.mark.parametrize("path", ALL_URDFS, ids=[p.name for p in ALL_URDFS])
@pytest.mark.filterwarnings("ignore::robot_dynamics.URDFWarning")
def test_every_example_robot_data_urdf_loads(path):
    """Every URDF loads with a fixed and a floating base and gives finite dynamics at a random state
    (ur3.urdf is an empty <robot>: it loads with nothing to move, and has no root link for a floating base)."""
    for floating_base in (False, True):
        if path.name == "ur3.urdf" and floating_base:
            with pytest.raises(rd.URDFError, match="empty"):
                rd.load_urdf(path, floating_base=True)
            continue
        robot = rd.load_urdf(path, floating_base=floating_base)
        assert robot.nq == robot.nv + (1 if floating_base else 0) + sum(
            j.nq - j.nv for j in robot.model.joints if j.mimic is None and not (floating_base and j.body == 0))
        q, v = robot.random_state(np.random.default_rng(0))
        d = robot.dynamics(q, v, v_ref=v, a_ref=v)
        for x in (d.M, d.C, d.g, d.com, d.J_com, d.Y):
            assert np.all(np.isfinite(x))
        assert np.allclose(d.M, d.M.T, rtol=0, atol=1e-12 * max(1.0, np.abs(d.M).max(initial=0.0)))


def test_xml_string_equals_path():
    path = bundled_urdf("arm7")
    a, b = rd.load_urdf(path), rd.load_urdf(path.read_text())
    q = a.random_configuration(1)
    np.testing.assert_array_equal(a.mass_matrix(q), b.mass_matrix(q))


def test_floating_base_conventions(quadruped):
    """nq = nv + 1; moving the base by a world offset changes nothing but the CoM; gravity on the base is m g."""
    robot = quadruped
    assert robot.nq == robot.nv + 1 and robot.joint_names[0] != robot.root_link
    q = robot.random_configuration(2)
    shifted = q.copy()
    shifted[:3] += [1.0, -2.0, 3.0]
    np.testing.assert_allclose(robot.mass_matrix(shifted), robot.mass_matrix(q), rtol=0, atol=1e-12)
    np.testing.assert_allclose(robot.com_position(shifted) - robot.com_position(q), [1.0, -2.0, 3.0], atol=1e-12)
    # The base's linear rows of g hold the total weight, expressed in the base frame.
    T0 = robot.body_placements(q)[0]
    np.testing.assert_allclose(robot.gravity_vector(q)[:3], -robot.total_mass * T0[:3, :3].T @ robot.gravity,
                               atol=1e-10)


def test_non_unit_quaternion_is_normalized(quadruped):
    q = quadruped.random_configuration(3)
    scaled = q.copy()
    scaled[3:7] *= 2.5
    assert relative_error(quadruped.mass_matrix(scaled), quadruped.mass_matrix(q)) < 1e-14
    assert relative_error(quadruped.dynamics(scaled[None], np.zeros((1, 18))).M[0], quadruped.mass_matrix(q)) < 1e-14
    assert scaled[3:7] @ scaled[3:7] > 6.0, "the caller's array is left as it was"


@pytest.mark.parametrize("call, culprit", [
    (lambda r, q, v: r.mass_matrix(q[:-1]), r"q must have shape \(\.\.\., nq=19\)"),
    (lambda r, q, v: r.coriolis_matrix(q, v[:-1]), r"v must have shape \(\.\.\., nv=18\)"),
    (lambda r, q, v: r.regressor(q, v, v, np.append(v, 1.0)), r"a_ref must have shape \(\.\.\., nv=18\)"),
    (lambda r, q, v: r.inverse_dynamics(q, v, np.full(18, np.nan)), r"a contains non-finite"),
    (lambda r, q, v: r.gravity_vector(np.where(np.arange(19) == 8, np.inf, q)), r"q contains non-finite"),
    (lambda r, q, v: r.forward_dynamics(q, v, "x"), r"tau must be a numeric array"),
    (lambda r, q, v: r.mass_matrix(np.where((np.arange(19) >= 3) & (np.arange(19) < 7), 0.0, q)),
     r"q\[3:7\] is a zero quaternion"),
    (lambda r, q, v: r.dynamics(np.stack([q, q]), np.stack([v, v, v])), r"v has batch shape \(3,\)"),
    (lambda r, q, v: r.dynamics(q, v, v_ref=v), r"both v_ref and a_ref"),
    (lambda r, q, v: r.with_parameters(np.ones(5)), r"pi must be a finite array of shape \(130,\)"),
    (lambda r, q, v: r.with_gravity([0.0, np.nan, 1.0]), r"gravity must be a finite array"),
])
def test_bad_arrays_name_the_culprit(quadruped, call, culprit):
    q, v = quadruped.random_state(4)
    with pytest.raises(ValueError, match=culprit):
        call(quadruped, q, v)


def test_bundled_robots_load():
    names = bundled_names()
    assert {"planar_2link", "arm7", "quadruped", "torso_two_arm", "humanoid"} <= set(names)
    for name in names:
        robot = rd.load_urdf(bundled_urdf(name), floating_base=name in ("quadruped", "humanoid"))
        assert robot.total_mass > 0


def test_planar_two_link_matches_the_textbook():
    """The two-link planar arm's M and C in closed form (paper 004, section 8.1 example), with the numbers written
    in urdf/planar_2link.urdf (so that parsing and model building are checked too)."""
    robot = rd.load_urdf(bundled_urdf("planar_2link"))
    q, v = np.array([0.4, -1.1]), np.array([0.7, -0.3])
    m1 = m2 = 1.0                          # <mass value="1"/>
    c1 = c2 = 0.5                          # <inertial><origin xyz="0.5 0 0"/>
    I1 = I2 = 0.08354166667                # <inertia izz>, about the CoM
    l1 = 1.0                               # joint 2 <origin xyz="1 0 0"/>
    co = np.cos(q[1])
    M = np.array([[I1 + I2 + m1 * c1**2 + m2 * (l1**2 + c2**2 + 2 * l1 * c2 * co), I2 + m2 * (c2**2 + l1 * c2 * co)],
                  [I2 + m2 * (c2**2 + l1 * c2 * co), I2 + m2 * c2**2]])
    h = -m2 * l1 * c2 * np.sin(q[1])
    C = np.array([[h * v[1], h * (v[0] + v[1])], [-h * v[0], 0.0]])
    assert relative_error(robot.mass_matrix(q), M) < 1e-12
    assert relative_error(robot.coriolis_matrix(q, v) @ v, C @ v) < 1e-12


def run_cli(*argv):
    out = io.StringIO()
    return cli(list(argv), out=out), out.getvalue()


def test_cli_inspect_and_compute():
    code, text = run_cli("inspect", "arm7")
    assert code == 0 and "nv = 7" in text and "joint7" in text
    code, text = run_cli("compute", "quadruped", "--floating-base", "--json", "--v-ref", *["0.1"] * 18,
                         "--a-ref", *["0.2"] * 18)
    result = json.loads(text)
    robot = rd.load_urdf(bundled_urdf("quadruped"), floating_base=True)
    d = robot.dynamics(robot.neutral(), np.zeros(18), np.full(18, 0.1), np.full(18, 0.2))
    assert code == 0
    np.testing.assert_array_equal(np.array(result["M"]), d.M)
    np.testing.assert_array_equal(np.array(result["Y"]), d.Y)
    code, text = run_cli("compute", "planar_2link", "--q", "0.1,0.2", "--v", "1", "2")
    assert code == 0 and "M(q): mass matrix" in text and "C(q, v)" in text


def test_cli_errors_exit_2(capsys):
    assert run_cli("compute", "arm7", "--q", "1", "2")[0] == 2
    assert "q must have shape" in capsys.readouterr().err
    assert run_cli("inspect", "<robot name='x'><link name='a'/><link name='a'/></robot>")[0] == 2
    assert "'a'" in capsys.readouterr().err
    assert run_cli("inspect", "no_such_robot")[0] == 2
    assert "no bundled robot named 'no_such_robot'" in capsys.readouterr().err


@pytest.mark.filterwarnings("ignore::robot_dynamics.URDFWarning")
def test_dangling_mimic_matters_only_when_mimics_are_coupled():
    """alex_psyonic_hands.urdf mimics a joint that does not exist: harmless with independent mimic DoFs."""
    path = next(p for p in ALL_URDFS if p.name == "alex_psyonic_hands.urdf")
    assert rd.load_urdf(path).nv > 0
    with pytest.raises(rd.URDFError, match="joint 'Left_index_q2' mimics unknown joint 'index_q1'"):
        rd.load_urdf(path, mimic=True)


def test_library_does_not_import_ros():
    """Only robot_dynamics.ros imports rclpy: the library and its controllers work without ROS."""
    import subprocess
    import sys
    code = ("import sys, robot_dynamics, robot_dynamics.controllers, robot_dynamics.cli; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('rclpy', 'std_msgs', 'sensor_msgs')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_threads_sharing_a_robot_get_their_own_results(quadruped):
    """Each method fills its results within one compiled call (which holds the GIL), so threads sharing a Robot
    and its scratch workspace never see each other's intermediate values, however often they switch."""
    import sys
    import threading

    rng = np.random.default_rng(11)
    states = [quadruped.random_state(rng) for _ in range(4)]
    expected = [(quadruped.mass_matrix(q), quadruped.body_placements(q), quadruped.dynamics(q, v, v, v).Y)
                for q, v in states]
    failures = []

    def work(i):
        q, v = states[i]
        for _ in range(300):
            got = (quadruped.mass_matrix(q), quadruped.body_placements(q), quadruped.dynamics(q, v, v, v).Y)
            if not all(np.array_equal(a, b) for a, b in zip(got, expected[i])):
                failures.append(i)
                return

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)                  # switch threads as often as the interpreter allows
    try:
        threads = [threading.Thread(target=work, args=(i,)) for i in range(len(states))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(interval)
    assert not failures


def test_cli_prints_the_time_derivatives():
    """compute --derivatives prints Mdot (= C + C^T) and gdot, and Cdot given --a; the JSON matches the library."""
    code, text = run_cli("compute", "arm7", "--q", *["0.3"] * 7, "--v", *["0.5"] * 7, "--derivatives", "--a",
                         *["1"] * 7, "--json")
    assert code == 0
    got = json.loads(text)
    robot = rd.load_urdf(bundled_urdf("arm7"))
    t = robot.time_derivatives(np.full(7, 0.3), np.full(7, 0.5), np.ones(7))
    for name in ("M_dot", "g_dot", "J_com_dot", "C_dot"):
        np.testing.assert_allclose(got[name], getattr(t, name), rtol=0, atol=1e-12, err_msg=name)
    code, text = run_cli("compute", "arm7", "--v", *["0.5"] * 7, "--derivatives")
    assert code == 0 and "dM/dt along q' = v" in text and "dC/dt" not in text
    with pytest.raises(SystemExit):                                 # --a belongs to --derivatives
        run_cli("compute", "arm7", "--a", *["1"] * 7)
