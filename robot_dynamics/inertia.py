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

Plain numpy, but for the projection, compiled (project_whitened: a 4x4 Cholesky test on scalars per body, and a
Jacobi eigendecomposition for a body outside) so that a controller's compiled tick calls it too.
"""
import numpy as np
from numba import njit


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
PROJECTION_WORK = 13                # rows of 4 of project_whitened's scratch: J_w, V, T (4, 4) and w (4,)


class InertiaMetric:
    """The affine-invariant metric of the pseudo-inertias at reference parameters, its gain and its projection.

    pi_ref: (10 nbodies,) reference parameters (the nominal model); regularization: J0_k + regularization
    tr(J0_k) 1 keeps a point-mass reference invertible (1e-9 1 for a massless one); in effect a body adapts little
    in the directions its reference lacks.  S, S_inv: (nb, 4, 4) J0_k^-1/2 and J0_k^1/2; basis: (nb, 10, 16)
    vec(S_k J(e_j) S_k), the whitened J(pi_k) = sum_j pi_kj basis[k, j]; whitening: (nb, 16, 10) the same map
    transposed, vec(S_k J(pi_k) S_k) = whitening[k] pi_k (project's, row by row); G: (nb, 10, 10) the metric's
    blocks.
    """

    def __init__(self, pi_ref, regularization=1e-3):
        J0 = pseudo_inertia(np.reshape(pi_ref, (-1, 10)))
        trace = np.trace(J0, axis1=-2, axis2=-1)
        J0 = J0 + np.where(trace > 0, regularization * trace, 1e-9)[:, None, None] * np.eye(4)
        w, U = np.linalg.eigh(J0)
        self.S = (U * w[:, None, :] ** -0.5) @ np.swapaxes(U, -1, -2)                # J0^-1/2, (nb, 4, 4)
        self.S_inv = (U * w[:, None, :] ** 0.5) @ np.swapaxes(U, -1, -2)
        self.basis = (self.S[:, None] @ _BASIS @ self.S[:, None]).reshape(-1, 10, 16)  # vec(S J(e_j) S)
        self.whitening = np.ascontiguousarray(np.swapaxes(self.basis, -1, -2))
        self.G = self.basis @ self.whitening                                              # (nb, 10, 10)
        self._identities = np.tile(np.eye(4), (len(J0), 1, 1))        # project's starting eigenvectors

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
        """The nearest parameters (in this metric) with J(pi_k) >= floor J0_k for every body (project_whitened).

        pi: (10 nb,)  ->  (10 nb,), a new array
        """
        pi = np.ascontiguousarray(pi, dtype=float)
        if pi.shape != (10 * len(self.G),):
            raise ValueError(f"pi has shape {pi.shape}, expected ({10 * len(self.G)},)")
        out = np.empty_like(pi)
        project_whitened(pi, self.whitening, self.S_inv, float(floor), out, self._identities.copy(),
                         np.empty((PROJECTION_WORK, 4)))
        return out


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


@njit(cache=True)
def symmetric_eigen(A, w, U, T):
    """A = U diag(w) U^T for a symmetric 4x4 A (overwritten): cyclic Jacobi rotations (Golub & Van Loan, Matrix
    Computations, section 8.5) of U^T A U, until the off-diagonal part is below 1e-16 of A's norm (quadratic
    convergence: 3-5 sweeps from U = 1, 1-2 from the eigenvectors of a nearby A).  w: (4,); U: (4, 4), in: a
    starting basis (orthonormalized here: Gram-Schmidt), out: the eigenvectors; T (4, 4): scratch."""
    n = A.shape[0]
    for j in range(n):
        for c in range(j):
            x = 0.0
            for k in range(n):
                x += U[k, j] * U[k, c]
            for k in range(n):
                U[k, j] -= x * U[k, c]
        x = 0.0
        for k in range(n):
            x += U[k, j] * U[k, j]
        x = 1.0 / np.sqrt(x)
        for k in range(n):
            U[k, j] *= x
    for i in range(n):                                                   # A <- U^T A U
        for j in range(n):
            x = 0.0
            for k in range(n):
                x += A[i, k] * U[k, j]
            T[i, j] = x
    for i in range(n):
        for j in range(n):
            x = 0.0
            for k in range(n):
                x += U[k, i] * T[k, j]
            A[i, j] = x
    norm = 0.0
    for i in range(n):
        for j in range(n):
            norm += A[i, j] * A[i, j]
    for _ in range(12):
        off = 0.0
        for i in range(n):
            for j in range(i + 1, n):
                off += A[i, j] * A[i, j]
        if off <= 1e-32 * norm:                                           # |off-diagonal| <= 1e-16 |A|
            break
        for p in range(n - 1):
            for q in range(p + 1, n):
                if A[p, q] * A[p, q] <= 1e-36 * norm:                  # converged already
                    continue
                theta = (A[q, q] - A[p, p]) / (2.0 * A[p, q])
                t = 1.0 / (abs(theta) + np.sqrt(theta * theta + 1.0))   # tan of the rotation zeroing A[p, q]
                if theta < 0.0:
                    t = -t
                c = 1.0 / np.sqrt(t * t + 1.0)
                s = t * c
                for k in range(n):                                       # A <- A R, U <- U R
                    a, b = A[k, p], A[k, q]
                    A[k, p], A[k, q] = c * a - s * b, s * a + c * b
                    a, b = U[k, p], U[k, q]
                    U[k, p], U[k, q] = c * a - s * b, s * a + c * b
                for k in range(n):                                       # A <- R^T A
                    a, b = A[p, k], A[q, k]
                    A[p, k], A[q, k] = c * a - s * b, s * a + c * b
                A[p, q] = A[q, p] = 0.0
    for i in range(n):
        w[i] = A[i, i]


@njit(cache=True)
def project_whitened(pi, whitening, S_inv, floor, out, bases, work):
    """out <- InertiaMetric.project(pi, floor): per body the whitened pseudo-inertia vec J_w = vec(S J(pi_k) S) =
    whitening[k] pi_k (J is linear in pi), its eigenvalues clipped at floor, J = S^-1 U max(w, floor) U^T S^-1 and
    pi_k = parameters_from_pseudo_inertia(J); a body already inside (J_w - floor 1 > 0: _inside, a Cholesky
    factorization on scalars, no array made, ~20x cheaper than the eigendecomposition) is copied as it is.
    pi, out: (10 nb,) (out may be pi); whitening: (nb, 16, 10) (InertiaMetric's); S_inv: (nb, 4, 4); bases:
    (nb, 4, 4), each body's starting eigenvectors, overwritten with J_w's (symmetric_eigen: a controller keeps them
    from tick to tick); work (PROJECTION_WORK, 4): scratch (nothing is allocated)."""
    for k in range(whitening.shape[0]):
        if _inside(pi, whitening, k, floor):
            for i in range(10 * k, 10 * k + 10):
                out[i] = pi[i]
        else:
            _project_body(pi, whitening, S_inv, floor, out, bases, k, work)


@njit(cache=True, inline="always")
def _whitened(pi, whitening, k, m):
    """Entry m (row-major) of body k's whitened pseudo-inertia J_w: (whitening[k] pi_k)[m], a contiguous row."""
    x = 0.0
    for j in range(10):
        x += pi[10 * k + j] * whitening[k, m, j]
    return x


@njit(cache=True)
def _inside(pi, whitening, k, floor):
    """J_w - floor 1 > 0 for body k: the pivots of its 4 x 4 Cholesky factorization, on scalars, all positive (as
    dense.cholesky_into(J_w, L, floor) says)."""
    a = _whitened(pi, whitening, k, 0) - floor
    if not a > 0.0:
        return False
    l00 = np.sqrt(a)
    l10, l20, l30 = _whitened(pi, whitening, k, 4) / l00, _whitened(pi, whitening, k, 8) / l00, \
        _whitened(pi, whitening, k, 12) / l00
    a = _whitened(pi, whitening, k, 5) - floor - l10 * l10
    if not a > 0.0:
        return False
    l11 = np.sqrt(a)
    l21 = (_whitened(pi, whitening, k, 9) - l20 * l10) / l11
    l31 = (_whitened(pi, whitening, k, 13) - l30 * l10) / l11
    a = _whitened(pi, whitening, k, 10) - floor - l20 * l20 - l21 * l21
    if not a > 0.0:
        return False
    l22 = np.sqrt(a)
    l32 = (_whitened(pi, whitening, k, 14) - l30 * l20 - l31 * l21) / l22
    return _whitened(pi, whitening, k, 15) - floor - l30 * l30 - l31 * l31 - l32 * l32 > 0.0


@njit(cache=True)
def _project_body(pi, whitening, S_inv, floor, out, bases, k, work):
    """out[10 k:10 k + 10] <- body k's parameters with the eigenvalues of its whitened pseudo-inertia clipped at
    floor (project_whitened; work: its scratch)."""
    Jw = work[:4]
    for m in range(16):
        Jw[m // 4, m % 4] = _whitened(pi, whitening, k, m)
    clipped_into(Jw, S_inv[k], floor, bases[k], work[4:], out, 10 * k)


@njit(cache=True)
def clipped_into(Jw, S_inv_k, floor, U, work, out, o):
    """out[o:o + 10] <- the parameters of J = S^-1 U max(w, floor) U^T S^-1, Jw = U diag(w) U^T a whitened
    pseudo-inertia S J S (4, 4; overwritten), its eigenvectors by symmetric_eigen from the starting basis U (4, 4;
    overwritten with them); S_inv_k = S^-1 (4, 4); work (9, 4): scratch."""
    V, T, w = work[:4], work[4:8], work[8]
    symmetric_eigen(Jw, w, U, T)                      # (T: its scratch, written next)
    for a in range(4):                                   # V = S^-1 U, T = V diag(max(w, floor))
        for b in range(4):
            x = 0.0
            for c in range(4):
                x += S_inv_k[a, c] * U[c, b]
            V[a, b] = x
            T[a, b] = x * max(w[b], floor)
    for a in range(4):                                   # Jw <- T V^T = S^-1 U max(w, floor) U^T S^-1
        for b in range(4):
            x = 0.0
            for c in range(4):
                x += T[a, c] * V[b, c]
            Jw[a, b] = x
    trace = Jw[0, 0] + Jw[1, 1] + Jw[2, 2]               # I = tr(Sigma) 1 - Sigma
    out[o] = Jw[3, 3]
    out[o + 1], out[o + 2], out[o + 3] = Jw[0, 3], Jw[1, 3], Jw[2, 3]
    out[o + 4], out[o + 5], out[o + 6] = trace - Jw[0, 0], trace - Jw[1, 1], trace - Jw[2, 2]
    out[o + 7], out[o + 8], out[o + 9] = -Jw[0, 1], -Jw[0, 2], -Jw[1, 2]
