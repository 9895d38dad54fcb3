"""Identification of the drives (issue 27, item 3): armature and each friction model with the inertial parameters,
from simulated logs built here by an independent route.

- The data: arm7 along an excitation trajectory, sampled exactly (q, v, a of the Fourier series), whose true
  inertial parameters are 20 % off its URDF's (as in test_identification.py), with an armature per joint and each
  friction law written out from the literature (friction_laws.py, the sign exact):
      tau = ID_rigid(q, v, a; pi_true) + Ia_true a + tau_f(v),
  the rigid inverse dynamics of a robot without drives plus the drives' part written here, not the library's
  drive regressor.
- Noise-free: the identified base parameters are K theta_true (K of the base map, theta_true = [pi; Ia; friction
  coefficients]) to 1e-6 (the issue's bound), a nonlinear model's nonlinear parameters to 1e-6, and the written-back
  robot predicts the torques of other states.
- 1 % torque noise (Gaussian, standard deviation 1 % of each joint's torque range): every base parameter and every
  nonlinear parameter within 3 of its standard deviations of the truth, and the standard deviations honest (the
  RMS of the errors over them between 0.5 and 1.5).  v and a stay exact, so that the only noise is the one the
  standard deviations account for.
- Which armatures the data cannot separate: against numpy's SVD rank of the regressor with and without each
  armature column, and, for arm7's first two joints, against the physics (link k's inertia about its joint's axis,
  which passes through both links' origins, only ever multiplies qdd_k in row k: the armature's column).
- The comparison of friction models, through the command line: on a Stribeck log the Stribeck model has the
  lowest held-out RMS, at the noise actually added; the drives are handed to drive_files' writers.
"""

import numpy as np
import pytest
import yaml

import robot_dynamics as rd
from friction_laws import law, random_parameters
from robot_dynamics.bundled import bundled_urdf
from robot_dynamics.inertia import parameters_from_pseudo_inertia, pseudo_inertia
from robot_dynamics.friction import MODELS
from robot_dynamics.identification import excitation_trajectory, identify
from robot_dynamics.identification.base import random_states
from robot_dynamics.identification.logs import Log, write_log

EXACT = 1e-6            # relative error of noise-free estimates (the bound)
SIGMAS = 3.0            # noisy estimates: within this many standard deviations (the bound)
PRIOR_ARMATURE = 0.05   # the robot's armature before identification: what an inseparable one is held at
N = 7


def perturbed(pi, rng):
    """Physical parameters 20 % away from pi: J_k -> A J_k A^T, A = 1 + 0.2 N(0, 1) (PSD stays PSD)."""
    J = pseudo_inertia(np.reshape(pi, (-1, 10)))
    A = np.eye(4) + 0.2 * rng.normal(size=J.shape)
    return parameters_from_pseudo_inertia(A @ J @ np.swapaxes(A, -1, -2)).reshape(-1)


@pytest.fixture(scope="module")
def arm():
    """arm7 with a prior armature of PRIOR_ARMATURE on every joint."""
    return rd.load_urdf(bundled_urdf("arm7")).with_drives(armature=PRIOR_ARMATURE)


@pytest.fixture(scope="module")
def truth(arm):
    """pi_true, the true armatures, friction parameters of each model, and (q, v, a, rigid + armature torques) of
    10 s at 200 Hz along an excitation trajectory."""
    pi = perturbed(arm.parameters, np.random.default_rng(1))
    rng = np.random.default_rng(5)
    armature = rng.uniform(0.01, 0.5, N)
    friction = {name: random_parameters(name, rng, N) for name in MODELS}
    q, v, a = excitation_trajectory(arm, rng=0, maxiter=0).sample(np.arange(2000) * 0.005)
    rigid = arm.with_drives(armature=0.0).with_parameters(pi)                 # no drives: the rigid body alone
    return pi, armature, friction, (q, v, a, rigid.inverse_dynamics(q, v, a) + armature * a)


def theta_true(pi, armature, name, p):
    """[pi; armatures; each linear coefficient of each joint], the regressor's order (friction.py's table)."""
    cls = MODELS[name]
    return np.concatenate([pi, armature, *(p[field] for field in cls.coefficients)])


def rank(W):
    """The rank by SVD, singular values above 1e-9 of the largest: the base-parameter map's relative tolerance
    (base.TOLERANCE), under which a URDF's rounded angles (1e-10) make no new parameter."""
    s = np.linalg.svd(W, compute_uv=False)
    return int(np.sum(s > 1e-9 * s[0]))


def held_armatures(arm):
    """Joints whose armature column lies in the span of the inertial columns, by SVD at random states (not the
    QR of the base-parameter map)."""
    q, v, a = random_states(arm, 40, np.random.default_rng(9))
    W = arm.regressor(q, v, v, a).reshape(-1, 10 * arm.nbodies)
    held = []
    for j in range(N):
        column = np.zeros((len(q), N))
        column[:, j] = a[:, j]
        if rank(np.column_stack([W, column.reshape(-1)])) == rank(W):
            held.append(f"Ia_{arm.coordinate_names[j]}")
    return held


def test_the_first_two_armatures_are_the_links_inertias_about_their_axes(arm):
    """arm7's joints 1 and 2 turn about their links' z axes, which pass through both links' origins (joint 2's
    origin is on joint 1's axis, its axis perpendicular to it): Izz of link k enters the torques as qdd_k in row k
    only, exactly the armature's column, so the data see Izz_k + Ia_k; joint 3's armature is separable.  (The
    URDF's rpy -1.570796327 is -pi/2 to 2e-10: link 2's Izz leaks that much into row 1.)"""
    q, v, a = random_states(arm, 30, np.random.default_rng(4))
    Y = arm.regressor(q, v, v, a)
    izz = rd.PARAMETER_NAMES.index("Izz")
    for k in (0, 1):
        column = np.zeros((len(q), N))
        column[:, k] = a[:, k]
        np.testing.assert_allclose(Y[..., 10 * k + izz], column, rtol=0, atol=1e-9 * np.abs(a).max())
    assert held_armatures(arm) == ["Ia_joint1", "Ia_joint2"]


@pytest.mark.parametrize("name", MODELS)
def test_noise_free_logs_give_the_drives(arm, truth, name):
    """Noise-free recovery of the identifiable combinations, the armatures the data cannot separate held at the
    prior (the link's inertia takes the rest), and a written-back robot whose rigid inverse dynamics plus armature
    and friction torques are the true ones at other states (beyond 0.1 rad/s, where the smoothed sign is the
    sign to 5e-9)."""
    pi, armature, friction, (q, v, a, tau) = truth
    p = friction[name]
    result = identify(arm, q, v, a, tau + law(name, p, v, smooth=False), friction=name, armature=True)
    np.testing.assert_allclose(result.base_values, result.base.values(theta_true(pi, armature, name, p)),
                               rtol=EXACT, atol=0)
    assert result.held == held_armatures(arm)
    held = np.array([f"Ia_{j}" in result.held for j in arm.coordinate_names])
    np.testing.assert_allclose(result.armature[~held], armature[~held], rtol=EXACT)
    assert np.all(result.armature[held] == PRIOR_ARMATURE)
    cls = MODELS[name]
    for field in cls.nonlinear:
        np.testing.assert_allclose(getattr(result.model, field), p[field], rtol=EXACT, err_msg=field)
    assert result.nonlinear_std is None or result.nonlinear_std.shape == (N, len(cls.nonlinear))

    identified = result.identified_robot(arm)
    model = identified.model.drives.model
    assert model is None if cls.plain else type(model) is cls                   # viscous, Coulomb: the drives' own
    np.testing.assert_array_equal(identified.damping, result.model.damping)
    np.testing.assert_array_equal(identified.friction, result.model.friction)
    q2, v2, a2 = random_states(arm, 20, np.random.default_rng(8))
    v2 = np.where(v2 > 0, 0.1, -0.1) + v2
    expected = (arm.with_drives(armature=0.0).with_parameters(pi).inverse_dynamics(q2, v2, a2) + armature * a2
                + law(name, p, v2, smooth=False))
    got = (identified.with_drives(armature=0.0).inverse_dynamics(q2, v2, a2) + identified.armature * a2
           + identified.friction_torque(v2))
    np.testing.assert_allclose(got, expected, rtol=0, atol=EXACT * np.abs(expected).max())


@pytest.mark.parametrize("name", MODELS)
def test_one_percent_noise_keeps_every_estimate_within_three_sigmas(arm, truth, name):
    pi, armature, friction, (q, v, a, tau) = truth
    p = friction[name]
    tau = tau + law(name, p, v, smooth=False)
    tau = tau + np.random.default_rng(2).normal(size=tau.shape) * 0.01 * np.ptp(tau, axis=0)
    result = identify(arm, q, v, a, tau, friction=name, armature=True)
    z = (result.base_values - result.base.values(theta_true(pi, armature, name, p))) / result.base_std
    cls = MODELS[name]
    if cls.nonlinear:
        eta = np.array([p[field] for field in cls.nonlinear]).T                       # (N, m)
        z = np.concatenate([z, ((result.model.nonlinear_values().T - eta) / result.nonlinear_std).ravel()])
    assert np.all(np.abs(z) < SIGMAS), (np.abs(z).max(), [result.base.names[i] for i in np.argsort(-np.abs(z))[:3]
                                                          if i < result.base.rank])
    assert 0.5 < np.sqrt(np.mean(z**2)) < 1.5


def test_consistent_and_ordinary_fits_with_drives(arm, truth):
    """The consistent fit takes the drives' columns as it takes friction (unconstrained, the held armatures out of
    its variables): noise-free, both recover the base parameters, the consistent one physically."""
    pi, armature, friction, (q, v, a, tau) = truth
    p = friction["offset"]
    for method in ("ols", "consistent"):
        result = identify(arm, q, v, a, tau + law("offset", p, v, smooth=False), method=method, friction="offset",
                          armature=True)
        np.testing.assert_allclose(result.base_values, result.base.values(theta_true(pi, armature, "offset", p)),
                                   rtol=EXACT, atol=0, err_msg=method)
        assert np.all(result.armature[:2] == PRIOR_ARMATURE)
    assert np.all(np.linalg.eigvalsh(pseudo_inertia(result.parameters.reshape(-1, 10)))[:, 0] >= -1e-12)


def test_drive_columns_take_the_dask_route(arm, truth):
    """The normal equations with armature and offset columns are the same on Dask's local threads."""
    from robot_dynamics.identification import dask_normal_equations, normal_equations
    q, v, a, tau = (x[:300] for x in truth[3])
    got = dask_normal_equations(arm, q, v, a, tau, friction="offset", armature=True, chunks=70)
    expected = normal_equations(arm, q, v, a, tau, "offset", armature=True)
    for x, y in zip(got[:3], expected[:3]):
        np.testing.assert_allclose(x, y, rtol=0, atol=1e-10 * np.abs(y).max())
    with pytest.raises(ValueError, match="a nonlinear friction model is fitted in memory"):
        identify(arm, q, v, a, tau, friction="sigmoid", chunks=100)


def test_cli_compares_the_models_and_writes_the_drives_back(tmp_path, arm, truth, capsys):
    """``identify --friction-model all --armature`` on a Stribeck log with 0.5 % noise (of arm7 as its URDF says,
    the armatures the data cannot separate at the robot's prior: the corrected URDF stays physical) prints a row
    per model
    (compare_friction_models), the Stribeck model marked best with a held-out RMS at the noise added to the
    held-out samples (within 10 %, joint by joint), no friction far above it; it identifies with that model and
    writes the identified drives with drive_files' writers, the Stribeck model as its viscous and Coulomb levels,
    which load back from the drives file and the written URDF."""
    from robot_dynamics.cli import main

    _, armature, friction, (q, v, a, _) = truth
    armature = np.concatenate([[0.0, 0.0], armature[2:]])             # where held, the URDF's (none): the prior
    tau = (arm.with_drives(armature=0.0).inverse_dynamics(q, v, a) + armature * a
           + law("stribeck", friction["stribeck"], v, smooth=False))
    added = np.random.default_rng(3).normal(size=tau.shape) * 0.005 * np.ptp(tau, axis=0)
    tau = tau + added
    write_log(tmp_path / "log.npz", Log(np.arange(len(q)) * 0.005, q, v, a, tau, arm.joint_names))
    files = {name: str(tmp_path / name) for name in ("p.yaml", "ros.yaml", "d.yaml", "arm.urdf")}
    assert main(["identify", str(bundled_urdf("arm7")), str(tmp_path / "log.npz"), "--friction-model", "all",
                 "--armature", "--out", files["p.yaml"], "--ros-params", files["ros.yaml"], "--drives",
                 files["d.yaml"], "--write-urdf", files["arm.urdf"]]) == 0
    text = capsys.readouterr().out
    rows = {line.split()[0]: line.split() for line in text.split("per joint coordinate)\n")[1].split("\n\n")[0]
            .splitlines()[1:]}
    assert list(rows) == ["none", "viscous", "coulomb", "offset", "sigmoid", "stribeck"]
    assert rows["stribeck"][1] == "*" and sum(row[1] == "*" for row in rows.values()) == 1
    held_out = np.array(rows["stribeck"][5:], dtype=float)
    floor = np.sqrt(np.mean(added[1500:] ** 2, axis=0))
    np.testing.assert_allclose(held_out, floor, rtol=0.1)
    assert float(rows["none"][3]) > 5 * np.sqrt(np.mean(floor**2))
    assert "identified with the stribeck model" in text and "held at their prior" in text

    saved = yaml.safe_load(open(files["p.yaml"]))
    assert saved["friction_model"] == "stribeck" and list(saved["armature"]) == arm.joint_names
    base = {row["name"]: (row["value"], row["std"]) for row in saved["identification"]["base_parameters"]}
    p = friction["stribeck"]
    for j, joint in enumerate(arm.joint_names):                      # the file's drives: the truth within 3 std
        for symbol, key, true in (("Fc", "coulomb", p["friction"]), ("Fs", "static", p["static"]),
                                  ("Fv", "viscous", p["damping"]), ("Ia", None, armature)):
            value, std = base.get(f"{symbol}_{joint}", (saved["armature"][joint], 0.0))
            assert value == (saved["friction"][joint][key] if key else saved["armature"][joint])
            assert abs(value - true[j]) <= SIGMAS * std, (symbol, joint)
    robot = rd.load_urdf(bundled_urdf("arm7"), drives=files["d.yaml"])     # the files hold coefficients: the
    assert "the stribeck model as its viscous and Coulomb levels" in text      # model's viscous and Coulomb levels
    np.testing.assert_array_equal(robot.armature, list(saved["armature"].values()))
    for field, key in (("damping", "viscous"), ("friction", "coulomb")):
        np.testing.assert_array_equal(getattr(robot, field), [saved["friction"][j][key] for j in arm.joint_names])
    written = rd.load_urdf(files["arm.urdf"])
    np.testing.assert_array_equal(written.damping, robot.damping)
    np.testing.assert_array_equal(written.friction, robot.friction)
    ros = yaml.safe_load(open(files["ros.yaml"]))
    (section,) = ros.values()
    assert section["ros__parameters"]["drives"]["armature"] == [float(x) for x in robot.armature]


def test_no_friction_by_name_subtracts_the_drives_known_friction():
    """friction="none" is friction=False: the drives' friction, known, comes off the torques before the rigid body is
    fitted, so that noise-free torques of a robot with friction leave no residual."""
    robot = rd.load_urdf(bundled_urdf("arm7")).with_drives(damping=0.3, friction=0.8)
    rng = np.random.default_rng(3)
    q, v, a = (rng.uniform(-2.0, 2.0, (200, robot.nv)), rng.normal(size=(200, robot.nv)),
               rng.normal(size=(200, robot.nv)))
    tau = robot.inverse_dynamics(q, v, a) + robot.friction_torque(v)
    by_name = identify(robot, q, v, a, tau, method="ols", friction="none")
    assert np.all(by_name.residual_rms < 1e-6 * np.sqrt(np.mean(tau**2, axis=0)))   # round-off of |r|^2's sums: 4e-8
    np.testing.assert_array_equal(by_name.theta, identify(robot, q, v, a, tau, method="ols", friction=False).theta)
