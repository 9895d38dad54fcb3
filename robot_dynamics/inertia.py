"""Layer 1: the geometry of inertial parameters -- the pseudo-inertia, its affine-invariant metric and the
log-det divergence.

A body's parameters pi_k = [m, m c, I_xx, I_yy, I_zz, I_xy, I_xz, I_yz] (inertia about the body origin,
spatial.PARAMETER_NAMES) belong to some non-negative mass distribution iff its pseudo-inertia

    J(pi_k) = [[Sigma, m c], [m c^T, m]] >= 0,    Sigma = 1/2 tr(I) 1 - I      (the second moment of mass)

(Wensing, Kim & Slotine, "Linear matrix inequalities for physically consistent inertial parameter
identification", RA-L 2018).  J is linear in pi_k, so the physical set is a convex cone.  On the cone J > 0,

- ``InertiaMetric(pi_ref)``: the affine-invariant metric at a reference J0_k, ||dpi_k||^2 = ||S_k J(dpi_k) S_k||_F^2
  with S_k = J0_k^-1/2, its gain blockdiag(gamma_k G_k^-1) and the projection onto J >= floor J0 in that metric
  (controllers/adaptive.py says why a controller wants both);
- ``log_det_metric``: the same metric at the estimate itself, the Hessian of F(pi) = -sum_k log det J(pi_k);
- ``log_det_divergence``: the Bregman divergence of that F (Lee, Kwon & Park 2018; Wensing & Slotine 2018).

Plain numpy.
"""
import numpy as np


def _pseudo_inertia_map():
    """B (10, 16) with vec J(pi_k) = pi_k B: J is linear in pi (the column j of B is J(e_j))."""
    B = np.zeros((10, 4, 4))
    for j, (rows, cols, value) in enumerate([
            ([3], [3], 1.0),                                              # m
            ([0, 3], [3, 0], 1.0), ([1, 3], [3, 1], 1.0), ([2, 3], [3, 2], 1.0),      # h = m c
            ([1, 2], [1, 2], 0.5), ([0, 2], [0, 2], 0.5), ([0, 1], [0, 1], 0.5)]):   # I_xx, I_yy, I_zz
        B[j, rows, cols] = value
    B[4, 0, 0] = B[5, 1, 1] = B[6, 2, 2] = -0.5                         # 1/2 tr(I) 1 - I on the diagonal
    for j, (a, b) in zip((7, 8, 9), ((0, 1), (0, 2), (1, 2))):          # -I_xy, -I_xz, -I_yz off it
        B[j, a, b] = B[j, b, a] = -1.0
    return B.reshape(10, 16)


_PSEUDO_INERTIA = _pseudo_inertia_map()


def pseudo_inertia(pi):
    """J(pi_k) = [[1/2 tr(I) 1 - I, h], [h^T, m]] per body.  pi: (..., 10)  ->  (..., 4, 4)"""
    pi = np.asarray(pi, dtype=float)
    return (pi @ _PSEUDO_INERTIA).reshape(pi.shape[:-1] + (4, 4))


def parameters_from_pseudo_inertia(J):
    """Inverse of ``pseudo_inertia``: I = tr(Sigma) 1 - Sigma.  J: (..., 4, 4) symmetric  ->  (..., 10)"""
    Sigma = J[..., :3, :3]
    I = np.trace(Sigma, axis1=-2, axis2=-1)[..., None, None] * np.eye(3) - Sigma
    return np.concatenate([J[..., 3, 3:4], J[..., :3, 3],
                           np.stack([I[..., 0, 0], I[..., 1, 1], I[..., 2, 2],
                                     I[..., 0, 1], I[..., 0, 2], I[..., 1, 2]], -1)], axis=-1)


_BASIS = _PSEUDO_INERTIA.reshape(10, 4, 4)              # J(e_j), (10, 4, 4)


class InertiaMetric:
    """The affine-invariant metric of the pseudo-inertias at reference parameters, its gain and its projection.

    pi_ref: (10 nbodies,) reference parameters (the nominal model); regularization: J0_k + regularization
    tr(J0_k) 1 keeps a point-mass reference invertible (1e-9 1 for a massless one); in effect a body adapts little
    in the directions its reference lacks.
    """

    def __init__(self, pi_ref, regularization=1e-3):
        J0 = pseudo_inertia(np.reshape(pi_ref, (-1, 10)))
        trace = np.trace(J0, axis1=-2, axis2=-1)
        J0 = J0 + np.where(trace > 0, regularization * trace, 1e-9)[:, None, None] * np.eye(4)
        w, U = np.linalg.eigh(J0)
        self.S = (U * w[:, None, :] ** -0.5) @ np.swapaxes(U, -1, -2)                # J0^-1/2, (nb, 4, 4)
        self.S_inv = (U * w[:, None, :] ** 0.5) @ np.swapaxes(U, -1, -2)
        self._A = (self.S[:, None] @ _BASIS @ self.S[:, None]).reshape(-1, 10, 16)     # vec(S J(e_j) S)
        self.G = self._A @ np.swapaxes(self._A, -1, -2)                                  # (nb, 10, 10)

    def matrix(self):
        """blockdiag(G_k): ||dpi||^2 = dpi^T G dpi.  -> (10 nb, 10 nb)"""
        return _block_diagonal(self.G)

    def gain(self, gamma=1.0):
        """Gamma = blockdiag(gamma_k G_k^-1), for which ``project`` is the Gamma^-1-metric projection.

        gamma: scalar or (nbodies,)  ->  (10 nb, 10 nb)
        """
        gamma = np.broadcast_to(np.asarray(gamma, dtype=float), (len(self.G),))
        return _block_diagonal(gamma[:, None, None] * np.linalg.inv(self.G))

    def project(self, pi, floor=0.0):
        """The nearest parameters (in this metric) with J(pi_k) >= floor J0_k for every body.  (10 nb,) -> (10 nb,)"""
        # whitened, J0 -> 1: S J(pi_k) S = sum_j pi_kj vec(S J(e_j) S), as J is linear in pi
        J = np.einsum("kj,kjm->km", np.reshape(pi, (-1, 10)), self._A).reshape(-1, 4, 4)
        w, U = np.linalg.eigh(J)
        J = (U * np.maximum(w, floor)[:, None, :]) @ np.swapaxes(U, -1, -2)
        return parameters_from_pseudo_inertia(self.S_inv @ J @ self.S_inv).reshape(-1)


def log_det_metric(pi):
    """The Hessian of F(pi) = -sum_k log det J(pi_k) per body: H_k[i, j] = tr(J_k^-1 J(e_i) J_k^-1 J(e_j)), the
    affine-invariant metric at the estimate itself (Lee, Kwon & Park 2018; Wensing & Slotine 2018).

    pi: (10 nb,) with every J(pi_k) > 0  ->  (nb, 10, 10)
    """
    J_inv = np.linalg.inv(pseudo_inertia(np.reshape(pi, (-1, 10))))
    X = np.einsum("kab,jbc->kjac", J_inv, _BASIS)                                    # J^-1 J(e_j)
    return np.einsum("kiab,kjba->kij", X, X)


def log_det_divergence(pi, pi_hat):
    """The Bregman divergence of F(pi) = -sum_k log det J(pi_k): sum_k tr(J_hat^-1 J) - log det(J_hat^-1 J) - 4,
    zero iff pi_hat = pi, infinite as J(pi_hat_k) becomes singular.  pi, pi_hat: (10 nb,) physical  ->  float"""
    J = pseudo_inertia(np.reshape(pi, (-1, 10)))
    J_hat = pseudo_inertia(np.reshape(pi_hat, (-1, 10)))
    A = np.linalg.solve(J_hat, J)
    sign, logdet = np.linalg.slogdet(A)
    if np.any(sign <= 0):
        return np.inf
    return float(np.sum(np.trace(A, axis1=-2, axis2=-1) - logdet - 4.0))


def _block_diagonal(blocks):
    n, b, _ = blocks.shape
    out = np.zeros((n * b, n * b))
    for k in range(n):
        out[k * b:(k + 1) * b, k * b:(k + 1) * b] = blocks[k]
    return out
