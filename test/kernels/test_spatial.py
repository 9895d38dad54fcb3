"""The spatial layer's operators (paper 002, appendix) against their defining identities."""
import numpy as np

from robot_dynamics.spatial import (ad_inv, adj, momentum_matrix, parameters_from_inertial, quaternion_rotation,
                                    rotation_quaternion, rpy_rotation, skew, spatial_inertia, transform_parameters)

EXACT = 1e-12


def random_parameters(rng):
    a, b = rng.uniform(0.1, 1.0, 2)
    R = rpy_rotation(rng.uniform(-np.pi, np.pi, 3))
    inertia = R @ np.diag([a, b, rng.uniform(abs(a - b), a + b)]) @ R.T
    return parameters_from_inertial(rng.uniform(0.5, 3.0), rng.normal(size=3), inertia)


def test_momentum_is_linear_in_the_parameters(rng):
    """Lambda(pi) v = A(v) pi (paper 002, Prop. 1, eqs. (8)-(12))."""
    for _ in range(5):
        pi, v = random_parameters(rng), rng.normal(size=6)
        np.testing.assert_allclose(spatial_inertia(pi) @ v, momentum_matrix(v) @ pi, rtol=0, atol=EXACT)


def test_lie_bracket_and_adjoint(rng):
    """adj(v) v = 0 (paper 002, remark 2); adj(a) b = -adj(b) a; Ad^-1 (R, p) inverts Ad = [[R, p~ R], [0, R]];
    Ad^-1 adj(v) Ad = adj(Ad^-1 v)."""
    v, w = rng.normal(size=(2, 6))
    np.testing.assert_allclose(adj(v) @ v, 0.0, atol=EXACT)
    np.testing.assert_allclose(adj(v) @ w, -adj(w) @ v, atol=EXACT)
    R, p = rpy_rotation(rng.normal(size=3)), rng.normal(size=3)
    Ad = np.block([[R, skew(p) @ R], [np.zeros((3, 3)), R]])
    np.testing.assert_allclose(ad_inv(R, p) @ Ad, np.eye(6), atol=EXACT)
    np.testing.assert_allclose(ad_inv(R, p) @ adj(v) @ Ad, adj(ad_inv(R, p) @ v), atol=EXACT)


def test_parameters_move_with_their_frame(rng):
    """Lambda in a frame where the body sits at (R, p) is Ad^-T Lambda Ad^-1 (the congruence of spatial inertias)."""
    pi = random_parameters(rng)
    R, p = rpy_rotation(rng.normal(size=3)), rng.normal(size=3)
    X = ad_inv(R, p)
    np.testing.assert_allclose(spatial_inertia(transform_parameters(pi, R, p)), X.T @ spatial_inertia(pi) @ X,
                               atol=EXACT)


def test_quaternions_round_trip(rng):
    for _ in range(5):
        quat = rng.normal(size=4)
        quat /= np.linalg.norm(quat)
        back = rotation_quaternion(quaternion_rotation(quat))
        np.testing.assert_allclose(back, quat * np.sign(quat[3]), atol=EXACT)
        np.testing.assert_allclose(quaternion_rotation(back) @ quaternion_rotation(back).T, np.eye(3), atol=EXACT)


def test_compiled_regressor_block_is_its_definition(rng):
    """regressor.world_block writes out Ad_{0,k}^-T (A(alpha) - adj(v)^T A(u)) (paper 002, eq. (16), remark 4)
    column by column; here it is rebuilt from the reference operators: Ad^-T = ad_inv(R, p)^T."""
    from robot_dynamics.algorithms.regressor import world_block
    for _ in range(5):
        alpha, u, v = rng.normal(size=(3, 6))
        R, p = rpy_rotation(rng.uniform(-np.pi, np.pi, 3)), rng.normal(size=3)
        W = np.empty((6, 10))
        world_block(alpha, u, v, R, p, W)
        expected = ad_inv(R, p).T @ (momentum_matrix(alpha) - adj(v).T @ momentum_matrix(u))
        np.testing.assert_allclose(W, expected, rtol=0, atol=EXACT)


def test_compiled_operators_are_the_spatial_layer(rng):
    """operators.py writes spatial.py's operators out on scalars (for the kernels); each against its definition.
    Inertias: a random spatial inertia, and a random symmetric 6x6 (an articulated inertia)."""
    from robot_dynamics.algorithms import operators as op
    for _ in range(5):
        pi, x, s, f = random_parameters(rng), *rng.normal(size=(3, 6))
        R, p = rpy_rotation(rng.uniform(-np.pi, np.pi, 3)), rng.normal(size=3)
        X, L = ad_inv(R, p), spatial_inertia(pi)
        Ad = np.block([[R, skew(p) @ R], [np.zeros((3, 3)), R]])
        for got, expected in ((op.ad_inv_times(R, p, x), X @ x), (op.ad_times(R, p, x), Ad @ x),
                              (op.ad_inv_transpose_times(R, p, *f), X.T @ f),
                              (op.ad_transpose_times(R, p, f), Ad.T @ f),
                              (op.adj_times(s, x), adj(s) @ x),
                              (op.spatial_inertia_times(pi, *x), L @ x), (op.bias_force(pi, x), -adj(x).T @ L @ x),
                              (op.force_cross(s, *f), -adj(s).T @ f),
                              (op.rotate(R, *x[:3]), R @ x[:3]), (op.rotate_transpose(R, *x[:3]), R.T @ x[:3])):
            np.testing.assert_allclose(np.array(got), expected, rtol=0, atol=EXACT)
        B = rng.normal(size=(6, 6))
        expected = B + adj(x).T @ L
        op.add_adj_transpose_inertia(pi, x, B)
        np.testing.assert_allclose(B, expected, rtol=0, atol=EXACT)
        out = np.empty(10)
        op.inertia_rate(pi, s, out)
        np.testing.assert_allclose(spatial_inertia(out), -(adj(s).T @ L + L @ adj(s)), rtol=0, atol=EXACT)
        op.transform_parameters(pi, R, p, out)
        np.testing.assert_allclose(out, transform_parameters(pi, R, p), rtol=0, atol=EXACT)
        A = rng.normal(size=(6, 6))
        A = A + A.T
        P = rng.normal(size=(6, 6))
        P = P + P.T
        expected = P + X.T @ A @ X
        op.add_transformed_inertia(R, p, A, P)
        np.testing.assert_allclose(P, expected, rtol=0, atol=EXACT)
