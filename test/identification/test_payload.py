"""Payload identification (issue 28, item 3) on physics we did not write: MuJoCo (RK4 at 1 kHz) simulates panda and
ur5 from example-robot-data carrying an off-axis box their descriptions lack, bolted to a link by a fixed joint
(panda: 0.5 kg on panda_hand, a link fixed to the body panda_link7 at an angle; ur5: 3 kg on the body wrist_3_link,
its drives with armature and viscous damping in both models), over 10 s of three sines per joint tracked by
computed torque with the description's model.  The log holds MuJoCo's q, v, qacc and the applied torque.

Done when: mass within 2 % and CoM within 5 mm noise-free; within 5 % and 1 cm with 1 % torque noise (and a 16-bit
encoder), from measured v, a and from t, q, tau alone.  Noise-free with MuJoCo's accelerations the payload is
exact to rounding, which is what is asserted; the standard deviations are checked against the spread of the
estimates over noise draws, the condition number against the singular values of the stacked regressor, the
written URDF against Pinocchio.  The figures over more payloads are benchmarks/bench_payload.py's.
"""
import functools
import re

import numpy as np
import pytest

import robot_dynamics as rd
from mujoco_twin import Payload, box_inertia, payload_log, with_sensor_noise
from oracle import assert_pinocchio_torques
from robot_dynamics.identification.consistent import is_consistent
from robot_dynamics.identification.logs import Log, load_parameters, write_log
from robot_dynamics.identification.payload import save_payload, write_payload_urdf
from robot_dynamics.spatial import PARAMETER_NAMES

ARMS = {
    "panda": dict(payload=Payload("panda_hand", 0.5, (0.04, -0.03, 0.10), box_inertia(0.5, (0.08, 0.06, 0.05)))),
    "ur5": dict(payload=Payload("wrist_3_link", 3.0, (0.03, 0.05, 0.07), box_inertia(3.0, (0.12, 0.10, 0.08))),
                armature=np.linspace(0.4, 0.1, 6), damping=np.linspace(3.0, 0.5, 6)),
}
COMPACT = dict(payload=Payload("wrist_3_link", 1.0, (0.03, 0.04, 0.05), box_inertia(1.0, (0.03, 0.03, 0.03))))
INERTIA_NAMES = list(PARAMETER_NAMES[4:])


@functools.lru_cache(maxsize=None)
def log_of(name, compact=False):
    """The MuJoCo log of ARMS[name] (or of ur5 with the COMPACT payload; 10 s at 1 kHz), made once per session."""
    return payload_log(name, **(COMPACT if compact else ARMS[name]))


@pytest.fixture(scope="module", params=list(ARMS))
def arm(request):
    return log_of(request.param)


def com_error(result, payload):
    return np.abs(result.com - np.asarray(payload.com)).max()


def test_the_log_is_the_payload_arms_dynamics(arm):
    """MuJoCo's torques are those of our model of the arm with the payload (its drives included) to rounding, and
    the payload's share of them is what the description's model misses."""
    L = arm
    expected = L.truth.inverse_dynamics(L.q, L.v, L.a) + L.truth.friction_torque(L.v)
    np.testing.assert_allclose(L.tau, expected, rtol=0, atol=1e-10 * np.abs(L.tau).max())
    missed = L.tau - L.nominal.inverse_dynamics(L.q, L.v, L.a) - L.nominal.friction_torque(L.v)
    assert np.abs(missed).max() > 0.02 * np.abs(L.tau).max()


def test_noise_free_log_gives_the_payload_to_rounding(arm):
    L, p = arm, arm.payload
    r = rd.identify_payload(L.nominal, L.q, L.v, L.a, L.tau, p.link)
    assert r.frame == p.link and r.body == L.nominal.body_names[L.nominal.model.frames[p.link].body]
    assert r.not_identified == [] and r.rank == 10 and r.n_samples == len(L.t) and not r.constrained
    assert abs(r.mass - p.mass) < 1e-10 * p.mass
    assert com_error(r, p) < 1e-10
    np.testing.assert_allclose(r.inertia, p.inertia, rtol=0, atol=1e-9 * np.abs(p.inertia).max())
    assert np.all(r.residual_rms < 1e-8 * np.abs(L.tau).max())


@pytest.mark.parametrize("measured", [True, False], ids=["v,a measured", "from t, q"])
def test_one_percent_torque_noise(arm, measured):
    """A 16-bit encoder and 1 % torque noise: within 5 % / 1 cm (done-when), and within 4 standard deviations;
    noise-free from t, q, tau alone (v, a filtered from q): within 2 % / 5 mm."""
    L, p = arm, arm.payload
    q, tau = with_sensor_noise(L.q, L.tau, rng=1)
    kinds = dict(v=L.v, a=L.a) if measured else dict(t=L.t)
    r = rd.identify_payload(L.nominal, q, tau=tau, body=p.link, **kinds)
    assert abs(r.mass - p.mass) < 0.05 * p.mass and com_error(r, p) < 0.01
    assert abs(r.mass - p.mass) < 4 * r.mass_std
    assert np.all(np.abs(r.com - p.com) < 4 * r.com_std)
    assert is_consistent(r.parameters) and r.not_identified == []
    if not measured:
        assert r.n_samples == np.count_nonzero((L.t >= 0.2) & (L.t <= L.t[-1] - 0.2))   # 2 / cutoff (10 Hz) off
        clean = rd.identify_payload(L.nominal, L.q, tau=L.tau, body=p.link, t=L.t)
        assert abs(clean.mass - p.mass) < 0.02 * p.mass and com_error(clean, p) < 0.005


def test_standard_deviations_are_the_spread_over_noise_draws():
    """ur5, 1 % torque noise drawn 30 times on the same motion: the reported standard deviations of mass and CoM
    are the estimates' spread (within the 13 % a sample of 30 allows, 3 times over)."""
    L = log_of("ur5")
    results = [rd.identify_payload(L.nominal, L.q, L.v, L.a, with_sensor_noise(L.q, L.tau, resolution=0, rng=k)[1],
                                   "wrist_3_link") for k in range(30)]
    spread = np.std([[r.mass, *r.com] for r in results], axis=0, ddof=1)
    reported = np.mean([[r.mass_std, *r.com_std] for r in results], axis=0)
    assert np.all((spread > 0.6 * reported) & (spread < 1.4 * reported)), (spread, reported)


def test_an_unphysical_weighted_fit_is_made_consistent_at_the_least_cost():
    """ur5 with a compact 1 kg cube (3 cm: second moments about its CoM of 4e-5 kg m^2) and 1 % torque noise: the
    weighted least-squares fit (numpy's lstsq on the explicitly stacked, weighted rows) has a pseudo-inertia that
    is not positive semi-definite; the result's is, and its weighted residual is the least among physical
    parameters: no more than the truth's, the midpoint's between them (chi^2 and the physical set are convex), or
    what BFGS finds over J = L L^T (L lower triangular: another parametrization, another optimizer)."""
    import scipy.optimize
    from robot_dynamics.controllers import parameters_from_pseudo_inertia, pseudo_inertia

    L = log_of("ur5", compact=True)
    p = L.payload
    q, tau = with_sensor_noise(L.q, L.tau, resolution=0, rng=0)
    r = rd.identify_payload(L.nominal, q, L.v, L.a, tau, p.link)
    assert r.constrained and is_consistent(r.parameters) and r.rank == 10
    assert abs(r.mass - p.mass) < 0.05 * p.mass and com_error(r, p) < 0.01

    k = L.nominal.body_names.index(p.link)
    rows = np.sqrt(r.weights)[:, None]
    Y = (L.nominal.regressor(q, L.v, L.v, L.a)[..., 10 * k:10 * k + 10] * rows).reshape(-1, 10)
    y = ((tau - L.nominal.inverse_dynamics(q, L.v, L.a) - L.nominal.friction_torque(L.v)) * rows[:, 0]).reshape(-1)
    unconstrained = np.linalg.lstsq(Y, y, rcond=None)[0]
    R = np.linalg.qr(Y, mode="r")

    def excess(pi):                                           # chi^2(pi) - chi^2(unconstrained) = |R (pi - pi*)|^2
        return np.sum((R @ (pi - unconstrained)) ** 2)

    def cholesky_excess(x):
        factor = np.zeros((4, 4))
        factor[np.tril_indices(4)] = x
        return excess(parameters_from_pseudo_inertia(factor @ factor.T))

    assert not is_consistent(unconstrained)
    starts = [np.linalg.cholesky(pseudo_inertia(pi))[np.tril_indices(4)] for pi in (p.parameters(), r.parameters)]
    bfgs = min(scipy.optimize.minimize(cholesky_excess, x, method="BFGS", options={"gtol": 1e-10}).fun
               for x in starts)
    truth = p.parameters()
    assert 0 < excess(r.parameters) <= min(excess(truth), excess((truth + r.parameters) / 2), bfgs) + 1e-6


def test_condition_number_is_that_of_the_stacked_weighted_columns():
    """The condition number from the normal equations equals the ratio of singular values of the explicitly
    stacked regressor of the payload's body (rows of joint j times sqrt(w_j), columns scaled to unit norm)."""
    L = log_of("ur5")
    q, tau = with_sensor_noise(L.q, L.tau, rng=2)
    r = rd.identify_payload(L.nominal, q, L.v, L.a, tau, "wrist_3_link")
    k = L.nominal.body_names.index("wrist_3_link")
    Y = L.nominal.regressor(q, L.v, L.v, L.a)[..., 10 * k:10 * k + 10] * np.sqrt(r.weights)[:, None]
    Y = Y.reshape(-1, 10)
    assert r.condition == pytest.approx(np.linalg.cond(Y / np.linalg.norm(Y, axis=0)), rel=1e-8)


def test_static_poses_give_mass_and_com_and_say_the_inertia_is_not_identified(arm):
    """At rest (v = a = 0, MuJoCo's gravity torques with the payload) in 12 poses: the inertia's columns vanish,
    rank 4; mass and CoM exact, the inertia about the CoM the prior (zero, or the one given), its standard
    deviations nan.  Each pose held 0.5 s with 1 % torque noise: within 5 % / 1 cm.  One pose cannot tell the CoM
    along gravity: a ValueError says so."""
    L, p = arm, arm.payload
    rng = np.random.default_rng(3)
    Q = np.array([L.nominal.random_configuration(rng) for _ in range(12)])
    zero = np.zeros((len(Q), L.nominal.nv))
    tau = np.array([L.twin.bias(q, np.zeros(L.nominal.nv)) for q in Q])
    r = rd.identify_payload(L.nominal, Q, zero, zero, tau, p.link)
    assert r.not_identified == INERTIA_NAMES and r.rank == 4 and np.isfinite(r.condition)
    assert abs(r.mass - p.mass) < 1e-10 * p.mass and com_error(r, p) < 1e-10
    assert np.abs(r.inertia).max() < 1e-15 and np.all(np.isnan(r.inertia_std)) and np.all(np.isnan(r.std[4:]))
    assert np.all(np.isfinite(r.std[:4])) and np.all(np.isfinite(r.com_std))
    prior = box_inertia(p.mass, (0.1, 0.1, 0.1))
    held = rd.identify_payload(L.nominal, Q, zero, zero, tau, p.link, inertia=prior)
    np.testing.assert_allclose(held.inertia, prior, rtol=0, atol=1e-15)
    assert abs(held.mass - p.mass) < 1e-10 * p.mass

    held = np.repeat(np.arange(len(Q)), 500)                   # each pose held 0.5 s, logged at 1 kHz
    _, noisy = with_sensor_noise(Q[held], tau[held], resolution=0, rng=4)
    r = rd.identify_payload(L.nominal, Q[held], zero[held], zero[held], noisy, p.link)
    assert abs(r.mass - p.mass) < 0.05 * p.mass and com_error(r, p) < 0.01 and r.not_identified == INERTIA_NAMES
    assert abs(r.mass - p.mass) < 4 * r.mass_std and np.all(np.abs(r.com - p.com) < 4 * r.com_std)
    with pytest.raises(ValueError, match=f"do not determine the mass and CoM of a payload on '{p.link}'"):
        rd.identify_payload(L.nominal, Q[held][:500], zero[held][:500], zero[held][:500], noisy[:500], p.link)


def test_a_short_noisy_motion_gives_mass_and_com_with_the_inertia_held():
    """0.5 s of ur5's motion with 20 % torque noise: the inertia is not determined (a standard deviation beyond a
    1 kg mass 10 cm away), so mass and CoM alone are fitted, with the inertia about the CoM held at the prior and its
    inertia about the origin the parallel-axis one of the fitted mass and CoM; they are within 4 standard
    deviations of the truth."""
    from robot_dynamics.spatial import parameters_from_inertial

    L, n = log_of("ur5"), 500
    p = L.payload
    _, tau = with_sensor_noise(L.q[:n], L.tau[:n], torque=0.2, resolution=0, rng=0)
    r = rd.identify_payload(L.nominal, L.q[:n], L.v[:n], L.a[:n], tau, "wrist_3_link")
    assert r.not_identified == INERTIA_NAMES
    np.testing.assert_allclose(r.parameters, parameters_from_inertial(r.mass, r.com, np.zeros((3, 3))), rtol=0,
                               atol=1e-12 * np.abs(r.parameters).max())
    assert abs(r.mass - p.mass) < 4 * r.mass_std and np.all(np.abs(r.com - p.com) < 4 * r.com_std)


def test_writers_urdf_yaml_and_the_adaptive_controllers_start(arm, tmp_path):
    """The URDF with the payload appended loads (ours) to the starting estimate -- the description's parameters
    with the payload added to its body, which is the MuJoCo arm's -- and Pinocchio's inverse dynamics of the same
    file is that estimate's; every other byte of the file is the original's.  The YAML holds the result."""
    import yaml
    from robot_dynamics.controllers import RelativeGains

    L, p = arm, arm.payload
    r = rd.identify_payload(L.nominal, L.q, L.v, L.a, L.tau, p.link)
    estimate = r.starting_estimate(L.nominal)
    np.testing.assert_allclose(estimate, L.truth.parameters, rtol=0, atol=1e-9 * np.abs(estimate).max())
    controller = RelativeGains().slotine_li(L.nominal, estimate, L.q[0])
    np.testing.assert_allclose(controller.pi_hat, estimate, rtol=1e-12, atol=1e-15)       # its start, as given

    source, out = tmp_path / "arm.urdf", tmp_path / "arm_payload.urdf"
    source.write_text(L.urdf)
    write_payload_urdf(source, out, r, name="camera")
    loaded = rd.load_urdf(out)
    np.testing.assert_allclose(loaded.parameters, estimate, rtol=0, atol=1e-12 * np.abs(estimate).max())
    assert out.read_text().replace(r.urdf_link("camera"), "") == L.urdf
    assert_pinocchio_torques(loaded, out, estimate, seed=5)
    with pytest.raises(ValueError, match="already has a link or joint 'camera'"):
        write_payload_urdf(out, tmp_path / "twice.urdf", r, name="camera")

    save_payload(tmp_path / "payload.yaml", r, L.nominal)
    saved = yaml.safe_load((tmp_path / "payload.yaml").read_text())
    assert (saved["body"], saved["frame"], saved["mass"]) == (r.body, r.frame, r.mass)
    assert saved["com"] == list(r.com) and saved["not_identified"] == []
    assert [saved["inertia"][k] for k in ("ixx", "iyy", "izz", "ixy", "ixz", "iyz")] == \
        [r.inertia[i, j] for i, j in ((0, 0), (1, 1), (2, 2), (0, 1), (0, 2), (1, 2))]
    assert list(saved["parameters"].values()) == list(r.parameters)
    assert list(saved["identification"]["residual_rms"]) == L.nominal.coordinate_names


def test_cli_identify_payload_from_a_positions_only_log(tmp_path, capsys):
    """``robot-dynamics identify-payload URDF log.csv --body wrist_3_link --drives drives.yaml`` on ur5's noisy
    t, q, tau: the printed mass and CoM are identify_payload's on the same log (v, a filtered from q, the drives
    from the file), and the files written read back to the result."""
    import yaml
    from robot_dynamics.cli import main
    from robot_dynamics.drive_files import write_drives

    L = log_of("ur5")
    q, tau = with_sensor_noise(L.q, L.tau, rng=6)
    files = {name: tmp_path / name for name in ("ur5.urdf", "log.csv", "drives.yaml", "p.yaml", "ros.yaml",
                                                "out.urdf")}
    files["ur5.urdf"].write_text(L.urdf)
    write_log(files["log.csv"], Log(L.t, q, None, None, tau, L.nominal.joint_names))
    write_drives(L.nominal, files["drives.yaml"])
    assert main(["identify-payload", str(files["ur5.urdf"]), str(files["log.csv"]), "--body", "wrist_3_link",
                 "--drives", str(files["drives.yaml"]), "--out", str(files["p.yaml"]), "--ros-params",
                 str(files["ros.yaml"]), "--write-urdf", str(files["out.urdf"])]) == 0
    text = capsys.readouterr().out
    expected = rd.identify_payload(L.nominal, q, tau=tau, body="wrist_3_link", t=L.t)
    printed = dict((name, float(value)) for value, name in re.findall(r"^ *(\S+) +\S+  (mass|com [xyz]) ", text, re.M))
    assert printed["mass"] == pytest.approx(expected.mass, rel=1e-5)
    assert [printed[f"com {x}"] for x in "xyz"] == pytest.approx(expected.com, rel=1e-5)
    assert f"{expected.n_samples:,} samples" in text and "condition number of the payload's regressor" in text
    assert yaml.safe_load(files["p.yaml"].read_text())["mass"] == expected.mass
    np.testing.assert_array_equal(load_parameters(files["ros.yaml"], L.nominal), expected.starting_estimate(L.nominal))
    np.testing.assert_allclose(rd.load_urdf(files["out.urdf"]).parameters, expected.starting_estimate(L.nominal),
                               rtol=0, atol=1e-12 * L.nominal.parameters.max())

    assert main(["identify-payload", str(files["ur5.urdf"]), str(files["log.csv"]), "--body", "gripper"]) == 2
    error = capsys.readouterr().err.splitlines()
    assert len(error) == 1 and "body 'gripper' is not a link of" in error[0]


@pytest.mark.parametrize("kwargs, culprit", [
    (dict(body=None), "body is required"),
    (dict(body="gripper"), "body 'gripper' is not a link of"),
    (dict(body="world"), "link 'world' is fixed to the world"),
    (dict(inertia=np.diag([1.0, 1.0, 3.0])), "is not the inertia of a body"),
    (dict(v=None), "give both v and a, or neither"),
])
def test_bad_input_is_named(kwargs, culprit):
    L, n = log_of("ur5"), 500
    arguments = dict(v=L.v[:n], a=L.a[:n], tau=L.tau[:n], body="wrist_3_link")
    arguments.update(kwargs)
    with pytest.raises(ValueError, match=re.escape(culprit)):
        rd.identify_payload(L.nominal, L.q[:n], **arguments)


def test_exact_data_decide_identifiability_without_overflow():
    """Exact (simulated) torques can leave no residual at all, sigma^2 at its floor 1e-300: whether every direction
    is determined is still decided (A / sigma^2 overflowed, a RuntimeWarning, an error here, by chance of round-off:
    test_a_negative_mass_is_refused failed on one build of the kernels and passed on another)."""
    from robot_dynamics.identification.payload import _SCALE, _determined

    A = np.diag(np.logspace(2, 14, 10))
    assert _determined((None, A, 1e-300, None), np.arange(10))
    scaled = np.linalg.eigvalsh(A * np.outer(_SCALE, _SCALE))[0]
    assert _determined((None, A, 0.5 * scaled, None), np.arange(10))
    assert not _determined((None, A, 2.0 * scaled, None), np.arange(10))


def test_a_negative_mass_is_refused():
    """Torques short of the arm's own by a 0.2 kg mass: no payload to identify."""
    from robot_dynamics.controllers import with_payload

    L, n = log_of("ur5"), 500
    lighter = with_payload(L.nominal, "wrist_3_link", -0.2, (0.0, 0.0, 0.05))
    tau = lighter.inverse_dynamics(L.q[:n], L.v[:n], L.a[:n]) + L.nominal.friction_torque(L.v[:n])
    with pytest.raises(ValueError, match=r"the identified payload mass is -0.2 kg .*no payload on 'wrist_3_link'"):
        rd.identify_payload(L.nominal, L.q[:n], L.v[:n], L.a[:n], tau, "wrist_3_link")
