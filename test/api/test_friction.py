"""Friction models (friction.py, issue 27 item 3): each model's torque against its law written out from the
literature (friction_laws.py), the derivatives it claims against central finite differences, the regressor columns
against the torque they must reproduce, the offset model against asymmetric Coulomb friction, Pinocchio's names
(damping, friction) against the limits of each law, and the drives' checks.

Finite differences: central, step h = 1e-6 (rad/s), error O(h^2 f''') + O(eps f / h): 1e-7 relative to the
largest derivative is the documented tolerance (the smoothed sign's derivative reaches 1 / COULOMB_VELOCITY =
100, its third derivative 2e6, so FD points stay 5 COULOMB_VELOCITY from zero, where it is 1e3 smaller).
"""
import numpy as np
import pytest

import robot_dynamics as rd
from friction_laws import law, random_parameters
from robot_dynamics.bundled import bundled_urdf
from robot_dynamics.drives import COULOMB_VELOCITY, Drives
from robot_dynamics.friction import (MODELS, CoulombFriction, OffsetFriction, SigmoidFriction, StribeckFriction,
                                     ViscousFriction, drive_column_names, drive_physical,
                                     drive_regressor)

N = 5                   # coordinates of the models below
FD_STEP, FD_TOLERANCE = 1e-6, 1e-7


def velocities(rng, shape, margin=0.0):
    """Velocities of both signs, at least margin away from zero, spanning 1e-3 .. 3 rad/s."""
    magnitude = margin + 10 ** rng.uniform(-3, 0.5, shape)
    return np.where(rng.random(shape) < 0.5, -1.0, 1.0) * magnitude


@pytest.mark.parametrize("name", MODELS)
def test_torque_is_the_law(name, rng):
    """torque(v) equals the law for a batch (3, 4, N) and a single state, the sign smoothed as Drives' is."""
    p = random_parameters(name, rng, N)
    model = MODELS[name](**p)
    v = velocities(rng, (3, 4, N))
    expected = law(name, p, v)
    np.testing.assert_allclose(model.torque(v), expected, rtol=1e-13, atol=1e-13 * np.abs(expected).max())
    np.testing.assert_allclose(model.torque(v[1, 2]), expected[1, 2], rtol=1e-13, atol=1e-13)
    assert model.name == name and model.nv == N


@pytest.mark.parametrize("name", MODELS)
def test_velocity_derivative_is_the_torques(name, rng):
    p = random_parameters(name, rng, N)
    model = MODELS[name](**p)
    v = velocities(rng, (50, N), margin=5 * COULOMB_VELOCITY)
    fd = (model.torque(v + FD_STEP) - model.torque(v - FD_STEP)) / (2 * FD_STEP)
    got = model.velocity_derivative(v)
    np.testing.assert_allclose(got, fd, rtol=0, atol=FD_TOLERANCE * np.abs(got).max())


def test_the_drives_slope_is_their_torques(rng):
    """Drives.slope (the simulator's implicit friction), without a model, with one, and with a model that has only
    torque(v): the central difference of Drives.torque, across the smoothed sign's width too."""
    class Cubic:
        def torque(self, v):
            return 0.3 * v ** 3

    plain = Drives.zero(N).replaced([str(i) for i in range(N)], damping=rng.uniform(0, 1, N),
                                    friction=rng.uniform(0, 2, N))
    for drives in (plain, plain.replaced([str(i) for i in range(N)], model=SigmoidFriction(
            **random_parameters("sigmoid", rng, N))), Drives.zero(N).replaced([], model=Cubic())):
        v = rng.uniform(-3, 3, (50, N)) * COULOMB_VELOCITY
        fd = (drives.torque(v + FD_STEP) - drives.torque(v - FD_STEP)) / (2 * FD_STEP)
        np.testing.assert_allclose(drives.slope(v), fd, rtol=0, atol=FD_TOLERANCE * np.abs(fd).max())


@pytest.mark.parametrize("name", ["sigmoid", "stribeck"])
@pytest.mark.parametrize("smooth", [True, False], ids=["smooth", "exact"])
def test_nonlinear_derivatives_of_the_basis(name, smooth, rng):
    """d B_i / d theta_l (variable projection's Jacobian) against central differences in each nonlinear
    parameter."""
    cls = MODELS[name]
    p = random_parameters(name, rng, N)
    theta = np.array([p[field] for field in cls.nonlinear])
    v = velocities(rng, (40, N))
    got = cls.basis_nonlinear_derivatives(v, theta, smooth)
    for l in range(len(theta)):
        h = np.zeros_like(theta)
        h[l] = FD_STEP * np.maximum(1.0, np.abs(theta[l]))
        fd = (cls.basis(v, theta + h, smooth) - cls.basis(v, theta - h, smooth)) / (2 * h[l])
        np.testing.assert_allclose(got[..., l, :], fd, rtol=0, atol=FD_TOLERANCE * np.abs(fd).max(), err_msg=l)


@pytest.mark.parametrize("name", MODELS)
def test_regressor_columns_give_the_drive_torque(name, rng):
    """drive_regressor(robot, v, a) [armature; coefficients] = armature a + tau_f(v): with the sign smoothed, the
    model's torque; with the exact sign, the law with sign(v).  A floating base's six rows are zero; the names
    follow the columns."""
    robot = rd.load_urdf(bundled_urdf("quadruped"), floating_base=True)
    n_f = robot.nv - 6
    p = {key: np.concatenate([np.zeros(6) if key != "phi2" and key != "stribeck_velocity" else np.ones(6), value])
         for key, value in random_parameters(name, rng, n_f).items()}
    model = MODELS[name](**p)
    armature = rng.uniform(0.01, 0.5, n_f)
    v, a = velocities(rng, (7, robot.nv)), rng.normal(size=(7, robot.nv))
    theta = np.concatenate([armature, model.coefficient_values()[:, 6:].reshape(-1)])
    for smooth in (True, False):
        Y = drive_regressor(robot, v, a, armature=True, model=model, smooth=smooth)
        expected = law(name, p, v, smooth)
        expected[:, 6:] += armature * a[:, 6:]
        expected[:, :6] = 0.0
        np.testing.assert_allclose(Y @ theta, expected, rtol=0, atol=1e-13 * np.abs(expected).max())
        assert np.all(Y[:, :6] == 0)
    names = drive_column_names(robot, model=name)
    assert len(names) == Y.shape[-1] and names[0] == f"Ia_{robot.coordinate_names[6]}"
    assert names[n_f] == f"{MODELS[name].symbols[0]}_{robot.coordinate_names[6]}"
    out = np.full_like(Y, np.nan)
    assert drive_regressor(robot, v, a, model=model, out=out) is out
    np.testing.assert_array_equal(out, Y)


@pytest.mark.parametrize("name", ("viscous", "coulomb", "offset"))
def test_physical_columns_are_the_dissipative_ones(name, rng):
    """drive_physical marks the armatures and each coefficient whose basis function only dissipates (its power
    Y_k(v) v_k >= 0 at every velocity) -- what an adaptive law keeps >= 0 -- and leaves the others' sign free."""
    robot = rd.load_urdf(bundled_urdf("quadruped"), floating_base=True)
    v = velocities(rng, (400, robot.nv))
    power = np.einsum("tjk,tj->tk", drive_regressor(robot, v, armature=False, model=name, smooth=False), v)
    dissipative = power.min(axis=0) >= 0
    n_f = robot.nv - 6
    np.testing.assert_array_equal(drive_physical(robot, False, name), dissipative)
    np.testing.assert_array_equal(drive_physical(robot, True, name), np.r_[np.ones(n_f, bool), dissipative])
    assert len(drive_physical(robot, True, name)) == len(drive_column_names(robot, True, name))
    assert dissipative.any() and (name != "offset" or not dissipative.all())


def test_offset_is_asymmetric_coulomb_on_a_moving_joint(rng):
    """Levels F_c+ (v > 0) and -F_c- (v < 0) are the offset model with F_c = (F_c+ + F_c-) / 2, F_o = (F_c+ - F_c-)
    / 2, wherever v != 0 (exact sign; with the smoothed sign, beyond 10 COULOMB_VELOCITY to 5e-9 of F_c)."""
    up, down = rng.uniform(0.5, 3.0, N), rng.uniform(0.5, 3.0, N)
    damping = rng.uniform(0.1, 1.0, N)
    model = OffsetFriction(damping, (up + down) / 2, (up - down) / 2)
    v = velocities(rng, (200, N))
    asymmetric = damping * v + np.where(v > 0, up, -down)
    exact = np.einsum("tki,ki->ti", OffsetFriction.basis(v, (), smooth=False), model.coefficient_values())
    np.testing.assert_allclose(exact, asymmetric, rtol=1e-14)
    far = np.abs(v) > 10 * COULOMB_VELOCITY
    np.testing.assert_allclose(model.torque(v)[far], asymmetric[far], rtol=0, atol=5e-9 * up.max())


@pytest.mark.parametrize("name", MODELS)
def test_pinocchio_names_are_the_viscous_slope_and_the_coulomb_level(name, rng):
    """damping is the slope far from zero minus what the level adds, friction the mean of the levels at +-V:
    (tau(V) - tau(-V)) / 2 = damping V + friction for V large (the sigmoid's levels are phi1 (1 - sigma(phi2
    phi3)) and -phi1 sigma(phi2 phi3), their mean phi1 / 2)."""
    p = random_parameters(name, rng, N)
    model = MODELS[name](**p)
    V = 40.0                                             # phi2 V >= 120 and V / v_s >= 130: the levels are reached
    half = (model.torque(np.full(N, V)) - model.torque(np.full(N, -V))) / 2
    slope = (model.torque(np.full(N, V)) - model.torque(np.full(N, V / 2))) / (V / 2)
    level = {"viscous": np.zeros(N), "sigmoid": p.get("phi1", 0) / 2}.get(name, p.get("friction"))
    np.testing.assert_allclose(slope, p["damping"], rtol=1e-12)
    np.testing.assert_allclose(half - p["damping"] * V, level, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(model.friction, half - p["damping"] * V, rtol=1e-12, atol=1e-12)   # the measured level
    model = MODELS[name](**random_parameters(name, rng, 7))
    robot = rd.load_urdf(bundled_urdf("arm7")).with_drives(armature=0.1, model=model)
    np.testing.assert_array_equal(robot.damping, model.damping)
    np.testing.assert_array_equal(robot.friction, model.friction)
    v = velocities(rng, (6, 7))
    np.testing.assert_allclose(robot.friction_torque(v), model.torque(v), rtol=1e-15, atol=1e-15)
    assert robot.model.drives.model is (None if name in ("viscous", "coulomb") else model)   # the drives' own law


def test_coulomb_model_is_the_drives_default(rng):
    """CoulombFriction(damping, friction) is what Drives(damping, friction) applies without a model."""
    damping, friction = rng.uniform(0.1, 2.0, N), rng.uniform(0.1, 2.0, N)
    drives = Drives.zero(N).replaced([f"j{i}" for i in range(N)], damping=damping, friction=friction)
    v = velocities(rng, (30, N))
    np.testing.assert_allclose(CoulombFriction(damping, friction).torque(v), drives.torque(v), rtol=1e-15,
                               atol=1e-15)


def test_bad_models_and_drives_are_refused_by_name(rng):
    with pytest.raises(ValueError, match=r"SigmoidFriction.phi2\[1\] = -2.0: must be a finite number > 0"):
        SigmoidFriction(np.ones(3), np.ones(3), [1.0, -2.0, 1.0], np.zeros(3))
    with pytest.raises(ValueError, match=r"StribeckFriction.static: expected an array of shape \(3,\)"):
        StribeckFriction(np.ones(3), np.ones(3), np.ones(2), np.ones(3))
    with pytest.raises(ValueError, match=r"ViscousFriction.damping\[0\] = nan"):
        ViscousFriction([np.nan])
    with pytest.raises(ValueError, match=r"v: expected shape \(\.\.\., 3\)"):
        CoulombFriction(np.ones(3), np.ones(3)).torque(np.ones(4))
    robot = rd.load_urdf(bundled_urdf("arm7"))
    with pytest.raises(ValueError, match="damping: give it through the friction model"):
        robot.with_drives(damping=1.0, model=ViscousFriction(np.ones(7)))
    with pytest.raises(ValueError, match="model: a friction model of 7 coordinates, got 6"):
        robot.with_drives(model=ViscousFriction(np.ones(6)))
    with pytest.raises(ValueError, match=r"damping\[2\] \(coordinate 'joint3'\) = -1.0"):
        robot.with_drives(model=ViscousFriction([1, 1, -1, 1, 1, 1, 1.0]))
    stribeck = robot.with_drives(model=StribeckFriction(*np.ones((3, 7)), np.full(7, 0.1)))
    with pytest.raises(ValueError, match=r"friction: these drives' friction model \(StribeckFriction\) holds"):
        stribeck.with_drives(friction=2.0)
    np.testing.assert_array_equal(stribeck.with_drives(armature=0.2).friction, np.ones(7))   # the model kept
    back = stribeck.with_drives(model=CoulombFriction(np.full(7, 0.5), np.full(7, 2.0)))      # and replaced
    assert back.model.drives.model is None and np.all(back.friction == 2.0) and np.all(back.damping == 0.5)
    v = np.ones((2, 7))
    with pytest.raises(ValueError, match="the sigmoid model is nonlinear in phi2, phi3"):
        drive_regressor(robot, v, v, model="sigmoid")
    with pytest.raises(ValueError, match="a is required for the armature columns"):
        drive_regressor(robot, v)
    with pytest.raises(ValueError, match="unknown friction model 'lugre'"):
        drive_regressor(robot, v, v, model="lugre")
    with pytest.raises(ValueError, match=r"nonlinear: expected finite values of shape \(1, 7\)"):
        drive_regressor(robot, v, v, model="stribeck", nonlinear=np.ones((1, 6)))
