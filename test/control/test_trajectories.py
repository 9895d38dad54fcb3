"""Reference trajectories: interpolation conditions at the points, derivatives against finite differences."""
import numpy as np
import pytest

from robot_dynamics.controllers import PiecewiseTrajectory, Reference, SumOfSines, quintic_waypoints

FD_STEP = 1e-6
FD_TOL = 1e-7          # central differences of smooth polynomials and sines: error ~ h^2 |q'''| + eps / h ~ 1e-10


def random_points(rng, N=5, n=3):
    times = np.cumsum(rng.uniform(0.3, 1.0, N)) - 0.2
    return times, rng.normal(size=(N, n)), rng.normal(size=(N, n)), rng.normal(size=(N, n))


def assert_derivatives(trajectory, t):
    """v and a match central differences of q and v at times t away from the points."""
    plus, minus = trajectory(t + FD_STEP), trajectory(t - FD_STEP)
    ref = trajectory(t)
    np.testing.assert_allclose(ref.v, (plus.q - minus.q) / (2 * FD_STEP), atol=FD_TOL)
    np.testing.assert_allclose(ref.a, (plus.v - minus.v) / (2 * FD_STEP), atol=FD_TOL)


@pytest.mark.parametrize("given", ["positions", "velocities", "accelerations"])
def test_piecewise_passes_through_the_points(rng, given):
    times, q, v, a = random_points(rng)
    trajectory = PiecewiseTrajectory(times, q, v if given != "positions" else None,
                                     a if given == "accelerations" else None)
    assert trajectory.degree == {"positions": 1, "velocities": 3, "accelerations": 5}[given]
    interior = times[1:-1]
    np.testing.assert_allclose(trajectory(times).q, q, atol=1e-12)
    if given != "positions":
        np.testing.assert_allclose(trajectory(interior).v, v[1:-1], atol=1e-12)
        # the end of each segment meets the next point's velocity too (left limit)
        np.testing.assert_allclose(trajectory(times[1:] - 1e-12).v, v[1:], atol=1e-9)
    if given == "accelerations":
        np.testing.assert_allclose(trajectory(interior).a, a[1:-1], atol=1e-12)
        np.testing.assert_allclose(trajectory(times[1:] - 1e-12).a, a[1:], atol=1e-8)


@pytest.mark.parametrize("given", ["positions", "velocities", "accelerations"])
def test_piecewise_derivatives_match_finite_differences(rng, given):
    times, q, v, a = random_points(rng)
    trajectory = PiecewiseTrajectory(times, q, v if given != "positions" else None,
                                     a if given == "accelerations" else None)
    midpoints = 0.5 * (times[:-1] + times[1:])
    assert_derivatives(trajectory, midpoints)


def test_linear_segments_are_straight_lines(rng):
    times, q, _, _ = random_points(rng)
    trajectory = PiecewiseTrajectory(times, q)
    s = 0.3
    ref = trajectory(times[1] + s * (times[2] - times[1]))
    np.testing.assert_allclose(ref.q, (1 - s) * q[1] + s * q[2], atol=1e-12)
    np.testing.assert_allclose(ref.v, (q[2] - q[1]) / (times[2] - times[1]), atol=1e-12)
    np.testing.assert_allclose(ref.a, 0.0)


def test_holds_the_first_and_last_points(rng):
    times, q, v, a = random_points(rng)
    trajectory = PiecewiseTrajectory(times, q, v, a)
    for t, point in [(times[0] - 1.0, q[0]), (times[-1], q[-1]), (times[-1] + 5.0, q[-1])]:
        ref = trajectory(t)
        np.testing.assert_allclose(ref.q, point, atol=1e-12)
        np.testing.assert_array_equal(ref.v, 0.0)
        np.testing.assert_array_equal(ref.a, 0.0)


def test_single_point_is_held(rng):
    trajectory = PiecewiseTrajectory([0.5], [[1.0, 2.0]])
    for t in (0.0, 0.5, 3.0):
        np.testing.assert_array_equal(trajectory(t).q, [1.0, 2.0])
        np.testing.assert_array_equal(trajectory(t).v, 0.0)


def test_scalar_and_array_times_agree(rng):
    times, q, v, a = random_points(rng)
    trajectory = PiecewiseTrajectory(times, q, v, a)
    t = np.linspace(times[0] - 0.5, times[-1] + 0.5, 17)
    batch = trajectory(t)
    assert batch.q.shape == (17, 3)
    for i, ti in enumerate(t):
        single = trajectory(ti)
        assert single.q.shape == (3,)
        np.testing.assert_allclose(single.q, batch.q[i], atol=1e-14)
        np.testing.assert_allclose(single.a, batch.a[i], atol=1e-14)


@pytest.mark.parametrize("given", ["positions", "velocities", "accelerations"])
@pytest.mark.parametrize("N", [1, 2, 5])
def test_evaluate_writes_the_calls_numbers(rng, given, N):
    """evaluate(t, out), the compiled tick, is __call__(t) bit for bit: before the first point, at every point,
    inside every segment, at and after the last; into out's arrays, which it returns."""
    times, q, v, a = random_points(rng, N)
    trajectory = PiecewiseTrajectory(times, q, *{"positions": (), "velocities": (v,), "accelerations": (v, a)}[given])
    out = Reference(np.empty(3), np.empty(3), np.empty(3))
    inside = times[:-1] + rng.uniform(0, 1, N - 1) * np.diff(times)
    t = np.concatenate([times, inside, [times[0] - 0.3, times[-1] + 0.3]])
    for ti in t:
        expected = trajectory(ti)
        assert trajectory.evaluate(ti, out) is out
        for got, want in zip(out, expected):
            assert np.array_equal(got, want)


def test_quintic_waypoints_rest_at_every_waypoint(rng):
    times, q, _, _ = random_points(rng)
    trajectory = quintic_waypoints(times, q)
    np.testing.assert_allclose(trajectory(times).q, q, atol=1e-12)
    np.testing.assert_allclose(trajectory(times[1:-1]).v, 0.0, atol=1e-10)
    np.testing.assert_allclose(trajectory(times[1:-1]).a, 0.0, atol=1e-9)
    assert_derivatives(trajectory, np.linspace(times[0], times[-1], 23)[1:-1])


def test_quintic_rest_to_rest_profile_is_the_minimum_jerk_polynomial():
    """One segment from 0 to 1 in time 1 is 10 s^3 - 15 s^4 + 6 s^5."""
    trajectory = quintic_waypoints([0.0, 1.0], [[0.0], [1.0]])
    s = np.linspace(0, 1, 11)
    np.testing.assert_allclose(trajectory(s).q[:, 0], 10 * s**3 - 15 * s**4 + 6 * s**5, atol=1e-12)


@pytest.mark.parametrize("bad", [
    dict(times=[0.0, 0.0, 1.0]),
    dict(positions=np.zeros((3, 2, 1))),
    dict(velocities=np.zeros((2, 2))),
    dict(accelerations=np.zeros((3, 2))),
    dict(positions=[[0.0, 1.0], [np.nan, 0.0], [1.0, 1.0]]),
])
def test_piecewise_rejects_inconsistent_points(bad):
    args = dict(times=[0.0, 1.0, 2.0], positions=np.zeros((3, 2)), velocities=None, accelerations=None)
    args.update(bad)
    with pytest.raises(ValueError):
        PiecewiseTrajectory(**args)


def test_sum_of_sines_derivatives(rng):
    n, K = 4, 3
    trajectory = SumOfSines(rng.normal(size=n), rng.uniform(0.1, 0.5, (n, K)), [1.0, 2.3, 4.1],
                            rng.uniform(0, 2 * np.pi, (n, K)))
    t = np.linspace(0.0, 3.0, 13)
    assert_derivatives(trajectory, t)
    assert trajectory(0.7).q.shape == (n,)
    assert trajectory(t).q.shape == (13, n)


def test_sum_of_sines_closed_form():
    trajectory = SumOfSines([0.5], [[2.0]], [3.0], [[0.25]])
    t = 0.4
    ref = trajectory(t)
    np.testing.assert_allclose(ref.q, 0.5 + 2.0 * np.sin(3.0 * t + 0.25), rtol=1e-14)
    np.testing.assert_allclose(ref.v, 6.0 * np.cos(3.0 * t + 0.25), rtol=1e-14)
    np.testing.assert_allclose(ref.a, -18.0 * np.sin(3.0 * t + 0.25), rtol=1e-14)
