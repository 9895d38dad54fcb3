"""The spatial operators of paper 002 (appendix) for the compiled kernels: spatial.py's operators, name for name,
written out on scalars so that nothing allocates.  Twists and wrenches are [linear; angular].

    spatial.py                       here (x, f: 6-vectors; results are 6-tuples unless said)
    ad_inv(R, p) @ x                 ad_inv_times(R, p, x)
    Ad(R, p) @ x                     ad_times(R, p, x)
    ad_inv(R, p).T @ f               ad_inv_transpose_times(R, p, f0, ..., f5)
    Ad(R, p).T @ f                   ad_transpose_times(R, p, f)
    adj(s) @ x                       adj_times(s, x)
    spatial_inertia(pi) @ x          spatial_inertia_times(pi, x0, ..., x5)
    -adj(s).T @ f                    force_cross(s, f0, ..., f5)
    -adj(v).T @ spatial_inertia(pi) @ v                bias_force(pi, v)
    B += adj(V).T @ spatial_inertia(pi)                add_adj_transpose_inertia(pi, V, B)
    transform_parameters(pi, R, p)                     transform_parameters(pi, R, p, out)
    -(adj(s).T @ L + L @ adj(s)), L = spatial_inertia(pi)   spatial_inertia(inertia_rate(pi, s, out))
    I_p += ad_inv(R, p).T @ I @ ad_inv(R, p)           add_transformed_inertia(R, p, I, I_p)

test/kernels/test_spatial.py checks every one of them against spatial.py.  Tuples stay in registers.  The helpers
are numba functions that the kernels call, not copies numba inlines into its IR (inline="always" types and lowers
their code again at each call site: ~2x slower type inference and lowering at first use, 113 s -> 62 s cold for
six quantities in benchmarks/compile_phases.py; issue 26).  LLVM then inlines most of them.  Those it would leave
as calls inside a per-body loop are `forced` (numba's forceinline: LLVM's alwaysinline, nothing more for numba's
own passes), because such a call passes each array as a struct and reference-counts it: the ABA's
add_transformed_inertia, transform_parameters, add_adj_transpose_inertia, the 6x6 products and the derivatives'
small operators.  Forcing them made single-state forward dynamics 6-9 % faster, C 7-11 %, the state
derivatives 11-17 %, the time derivatives 9-16 % and the bundle 2-6 % (2-6 %, 5-9 % and 3-6 % with the C
extension off; against Pinocchio, min of alternating processes, the five benchmark robots), at the same compile
time.  `inline` and `scalar` set forceinline=False outright: numba otherwise inherits the flag from the
caller that compiles a helper first, which would make the machine code depend on the order of compilation.
6x6 products are loops over the columns (LLVM unrolls them) rather than 36 written-out terms.  In the small ones
multiply-adds may be fused
(CONTRACT: one rounding instead of two; no other fast-math liberty, so NaN and inf behave as IEEE 754 says).
"""
from numba import njit

CONTRACT = {"contract"}
inline = njit(cache=True, fastmath=CONTRACT, forceinline=False)    # small, array-touching: called (see above)
scalar = njit(cache=True, fastmath=CONTRACT, forceinline=False)    # on scalars alone: LLVM inlines it
forced = njit(cache=True, fastmath=CONTRACT, forceinline=True)     # in per-body loops: always inlined by LLVM


@scalar
def cross(a0, a1, a2, b0, b1, b2):
    """a x b of two 3-vectors given by their components."""
    return a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0


@inline
def rotate(R, x0, x1, x2):
    """R x."""
    return (R[0, 0] * x0 + R[0, 1] * x1 + R[0, 2] * x2, R[1, 0] * x0 + R[1, 1] * x1 + R[1, 2] * x2,
            R[2, 0] * x0 + R[2, 1] * x1 + R[2, 2] * x2)


@inline
def rotate_transpose(R, x0, x1, x2):
    """R^T x."""
    return (R[0, 0] * x0 + R[1, 0] * x1 + R[2, 0] * x2, R[0, 1] * x0 + R[1, 1] * x1 + R[2, 1] * x2,
            R[0, 2] * x0 + R[1, 2] * x1 + R[2, 2] * x2)


@inline
def dot6(a, b):
    """a^T b of two 6-vectors."""
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3] + a[4] * b[4] + a[5] * b[5]


@inline
def store6(out, x):
    """out <- the 6-tuple x."""
    out[0], out[1], out[2], out[3], out[4], out[5] = x[0], x[1], x[2], x[3], x[4], x[5]


@inline
def store_column(M, c, x):
    """M[:, c] <- the 6-tuple x (no column view)."""
    M[0, c], M[1, c], M[2, c], M[3, c], M[4, c], M[5, c] = x[0], x[1], x[2], x[3], x[4], x[5]


@inline
def add6(out, x):
    """out += the 6-tuple x."""
    out[0], out[1], out[2] = out[0] + x[0], out[1] + x[1], out[2] + x[2]
    out[3], out[4], out[5] = out[3] + x[3], out[4] + x[4], out[5] + x[5]


@inline
def add(x, y):
    """x + y of two 6-vectors, as a tuple."""
    return x[0] + y[0], x[1] + y[1], x[2] + y[2], x[3] + y[3], x[4] + y[4], x[5] + y[5]


@inline
def subtract(x, y):
    """x - y of two 6-vectors, as a tuple."""
    return x[0] - y[0], x[1] - y[1], x[2] - y[2], x[3] - y[3], x[4] - y[4], x[5] - y[5]


@inline
def negative(x):
    """-x of a 6-vector, as a tuple."""
    return -x[0], -x[1], -x[2], -x[3], -x[4], -x[5]


@inline
def unit(c):
    """e_c, the c-th unit 6-vector, as a tuple."""
    return (1.0 if c == 0 else 0.0, 1.0 if c == 1 else 0.0, 1.0 if c == 2 else 0.0, 1.0 if c == 3 else 0.0,
            1.0 if c == 4 else 0.0, 1.0 if c == 5 else 0.0)


@inline
def dot_columns(X, c, Y, d):
    """X[:, c]^T Y[:, d] for two 6-row matrices (no column views)."""
    return (X[0, c] * Y[0, d] + X[1, c] * Y[1, d] + X[2, c] * Y[2, d] + X[3, c] * Y[3, d] + X[4, c] * Y[4, d]
            + X[5, c] * Y[5, d])


@forced
def matrix_times(B, x):
    """B x for a 6x6 B, as a tuple."""
    r0 = r1 = r2 = r3 = r4 = r5 = 0.0
    for c in range(6):
        xc = x[c]
        r0 += B[0, c] * xc
        r1 += B[1, c] * xc
        r2 += B[2, c] * xc
        r3 += B[3, c] * xc
        r4 += B[4, c] * xc
        r5 += B[5, c] * xc
    return r0, r1, r2, r3, r4, r5


@forced
def matrix_transpose_times(B, x):
    """B^T x for a 6x6 B, as a tuple."""
    r0 = r1 = r2 = r3 = r4 = r5 = 0.0
    for c in range(6):
        xc = x[c]
        r0 += B[c, 0] * xc
        r1 += B[c, 1] * xc
        r2 += B[c, 2] * xc
        r3 += B[c, 3] * xc
        r4 += B[c, 4] * xc
        r5 += B[c, 5] * xc
    return r0, r1, r2, r3, r4, r5


@inline
def ad_inv_times(R, p, x):
    """Ad^-1 x = [R^T (x_v - p x x_w); R^T x_w]: a twist given in the frame where (R, p) poses frame k, seen
    from frame k."""
    y0, y1, y2 = cross(p[0], p[1], p[2], x[3], x[4], x[5])
    v0, v1, v2 = rotate_transpose(R, x[0] - y0, x[1] - y1, x[2] - y2)
    w0, w1, w2 = rotate_transpose(R, x[3], x[4], x[5])
    return v0, v1, v2, w0, w1, w2


@inline
def ad_times(R, p, x):
    """Ad x = [R x_v + p x R x_w; R x_w]: a twist of frame k (posed at (R, p)) in the outer frame."""
    w0, w1, w2 = rotate(R, x[3], x[4], x[5])
    v0, v1, v2 = rotate(R, x[0], x[1], x[2])
    y0, y1, y2 = cross(p[0], p[1], p[2], w0, w1, w2)
    return v0 + y0, v1 + y1, v2 + y2, w0, w1, w2


@inline
def ad_inv_transpose_times(R, p, f0, f1, f2, f3, f4, f5):
    """Ad^-T f = [R f_v; R f_w + p x R f_v]: a wrench on frame k (posed at (R, p)) in the outer frame."""
    g0, g1, g2 = rotate(R, f0, f1, f2)
    n0, n1, n2 = rotate(R, f3, f4, f5)
    m0, m1, m2 = cross(p[0], p[1], p[2], g0, g1, g2)
    return g0, g1, g2, n0 + m0, n1 + m1, n2 + m2


@inline
def ad_transpose_times(R, p, f):
    """Ad^T f = [R^T f_v; R^T (f_w - p x f_v)]: a wrench in the outer frame, seen from frame k (posed at (R, p)).
    For a free joint (Xi = E_6) it is S^T f for all six world axes S = Ad at once."""
    y0, y1, y2 = cross(p[0], p[1], p[2], f[0], f[1], f[2])
    v0, v1, v2 = rotate_transpose(R, f[0], f[1], f[2])
    w0, w1, w2 = rotate_transpose(R, f[3] - y0, f[4] - y1, f[5] - y2)
    return v0, v1, v2, w0, w1, w2


@forced
def adj_times(s, x):
    """adj(s) x = [s_w x x_v + s_v x x_w; s_w x x_w], the Lie bracket [s, x] (paper 002, appendix)."""
    a0, a1, a2 = cross(s[3], s[4], s[5], x[0], x[1], x[2])
    b0, b1, b2 = cross(s[0], s[1], s[2], x[3], x[4], x[5])
    c0, c1, c2 = cross(s[3], s[4], s[5], x[3], x[4], x[5])
    return a0 + b0, a1 + b1, a2 + b2, c0, c1, c2


@forced
def force_cross(s, f0, f1, f2, f3, f4, f5):
    """s x* f = -adj(s)^T f = [s_w x f_v; s_v x f_v + s_w x f_w]: the rate of a wrench f carried by the twist s
    (the dual of adj)."""
    a0, a1, a2 = cross(s[3], s[4], s[5], f0, f1, f2)
    b0, b1, b2 = cross(s[0], s[1], s[2], f0, f1, f2)
    c0, c1, c2 = cross(s[3], s[4], s[5], f3, f4, f5)
    return a0, a1, a2, b0 + c0, b1 + c1, b2 + c2


@forced
def spatial_inertia_times(pi, x0, x1, x2, x3, x4, x5):
    """Lambda(pi) x = [m x_v - h x x_w; h x x_v + I x_w] with h = m c (paper 002, appendix): from the ten
    parameters in 24 multiplications instead of 36."""
    m, h0, h1, h2 = pi[0], pi[1], pi[2], pi[3]
    y0, y1, y2 = cross(h0, h1, h2, x3, x4, x5)
    z0, z1, z2 = cross(h0, h1, h2, x0, x1, x2)
    return (m * x0 - y0, m * x1 - y1, m * x2 - y2,
            pi[4] * x3 + pi[7] * x4 + pi[8] * x5 + z0,
            pi[7] * x3 + pi[5] * x4 + pi[9] * x5 + z1,
            pi[8] * x3 + pi[9] * x4 + pi[6] * x5 + z2)


@inline
def bias_force(pi, v):
    """-adj(v)^T Lambda v = [w x l; v_v x l + w x k] with [l; k] = Lambda v, w = v_w: the velocity term of
    paper 002, eq. (2)."""
    v0, v1, v2, v3, v4, v5 = v[0], v[1], v[2], v[3], v[4], v[5]
    l0, l1, l2, k0, k1, k2 = spatial_inertia_times(pi, v0, v1, v2, v3, v4, v5)
    f0, f1, f2 = cross(v3, v4, v5, l0, l1, l2)
    g0, g1, g2 = cross(v0, v1, v2, l0, l1, l2)
    e0, e1, e2 = cross(v3, v4, v5, k0, k1, k2)
    return f0, f1, f2, g0 + e0, g1 + e1, g2 + e2


@forced
def add_adj_transpose_inertia(pi, V, B):
    """B += adj(V)^T Lambda(pi) = [[-m w~, w~ h~], [-m v~ - w~ h~, v~ h~ - w~ I]] for the twist V = [v; w]."""
    m = pi[0]
    v0, v1, v2, w0, w1, w2 = V[0], V[1], V[2], V[3], V[4], V[5]
    h0, h1, h2 = pi[1], pi[2], pi[3]
    W = ((0.0, -w2, w1), (w2, 0.0, -w0), (-w1, w0, 0.0))              # w~, v~, h~ and I as nested tuples
    Vx = ((0.0, -v2, v1), (v2, 0.0, -v0), (-v1, v0, 0.0))
    H = ((0.0, -h2, h1), (h2, 0.0, -h0), (-h1, h0, 0.0))
    I = ((pi[4], pi[7], pi[8]), (pi[7], pi[5], pi[9]), (pi[8], pi[9], pi[6]))
    for i in range(3):
        for j in range(3):
            WH = W[i][0] * H[0][j] + W[i][1] * H[1][j] + W[i][2] * H[2][j]
            VH = Vx[i][0] * H[0][j] + Vx[i][1] * H[1][j] + Vx[i][2] * H[2][j]
            WI = W[i][0] * I[0][j] + W[i][1] * I[1][j] + W[i][2] * I[2][j]
            B[i, j] -= m * W[i][j]
            B[i, 3 + j] += WH
            B[3 + i, j] -= m * Vx[i][j] + WH
            B[3 + i, 3 + j] += VH - WI


@forced
def inertia_rate(pi, s, out):
    """out <- the parameters of Lambdadot = -(adj(s)^T Lambda + Lambda adj(s)): the rate of a world-frame inertia
    carried by the twist s = [s_v; s_w] -- mdot = 0, hdot = s_w x h + m s_v,
    Idot = [s_w] I - I [s_w] + 2 (h.s_v) E - s_v h^T - h s_v^T (I about the origin).  ~60 flops, not a 6x6 product."""
    m, h0, h1, h2 = pi[0], pi[1], pi[2], pi[3]
    v0, v1, v2, w0, w1, w2 = s[0], s[1], s[2], s[3], s[4], s[5]
    a00, a11, a22, a01, a02, a12 = pi[4], pi[5], pi[6], pi[7], pi[8], pi[9]
    c0, c1, c2 = cross(w0, w1, w2, h0, h1, h2)
    out[0] = 0.0
    out[1], out[2], out[3] = c0 + m * v0, c1 + m * v1, c2 + m * v2
    # [w] I row i, column j: (w x I[:, j])_i;  I [w] = -([w] I)^T, so [w] I - I [w] = X + X^T with X = [w] I
    x00, x10, x20 = cross(w0, w1, w2, a00, a01, a02)
    x01, x11, x21 = cross(w0, w1, w2, a01, a11, a12)
    x02, x12, x22 = cross(w0, w1, w2, a02, a12, a22)
    hv = 2.0 * (h0 * v0 + h1 * v1 + h2 * v2)
    out[4] = 2.0 * x00 + hv - 2.0 * v0 * h0
    out[5] = 2.0 * x11 + hv - 2.0 * v1 * h1
    out[6] = 2.0 * x22 + hv - 2.0 * v2 * h2
    out[7] = x01 + x10 - v0 * h1 - h0 * v1
    out[8] = x02 + x20 - v0 * h2 - h0 * v2
    out[9] = x12 + x21 - v1 * h2 - h1 * v2


@inline
def store_inertia(pi, M):
    """M <- Lambda(pi) = [[m E, -h~], [h~, I]] (6, 6), the matrix that spatial_inertia_times applies."""
    m, h0, h1, h2 = pi[0], pi[1], pi[2], pi[3]
    M[0, 0], M[0, 1], M[0, 2], M[0, 3], M[0, 4], M[0, 5] = m, 0.0, 0.0, 0.0, h2, -h1
    M[1, 0], M[1, 1], M[1, 2], M[1, 3], M[1, 4], M[1, 5] = 0.0, m, 0.0, -h2, 0.0, h0
    M[2, 0], M[2, 1], M[2, 2], M[2, 3], M[2, 4], M[2, 5] = 0.0, 0.0, m, h1, -h0, 0.0
    M[3, 0], M[3, 1], M[3, 2], M[4, 0], M[4, 1], M[4, 2] = 0.0, -h2, h1, h2, 0.0, -h0
    M[5, 0], M[5, 1], M[5, 2] = -h1, h0, 0.0
    M[3, 3], M[3, 4], M[3, 5], M[4, 3], M[4, 4], M[4, 5] = pi[4], pi[7], pi[8], pi[7], pi[5], pi[9]
    M[5, 3], M[5, 4], M[5, 5] = pi[8], pi[9], pi[6]


@forced
def transform_parameters(pi, R, p, out):
    """out <- pi of a body posed at (R, p), in the outer frame (spatial.transform_parameters):
    h' = R h + m p,  I' = R I R^T + m (|p|^2 E - p p^T) + 2 (p.h) E - p h^T - h p^T  with h = R h_body."""
    m = pi[0]
    a00, a11, a22, a01, a02, a12 = pi[4], pi[5], pi[6], pi[7], pi[8], pi[9]
    t00, t10, t20 = rotate(R, a00, a01, a02)                        # T = R I, column by column
    t01, t11, t21 = rotate(R, a01, a11, a12)
    t02, t12, t22 = rotate(R, a02, a12, a22)
    h0, h1, h2 = rotate(R, pi[1], pi[2], pi[3])
    p0, p1, p2 = p[0], p[1], p[2]
    diag = m * (p0 * p0 + p1 * p1 + p2 * p2) + 2.0 * (p0 * h0 + p1 * h1 + p2 * h2)
    out[0] = m
    out[1], out[2], out[3] = h0 + m * p0, h1 + m * p1, h2 + m * p2
    out[4] = t00 * R[0, 0] + t01 * R[0, 1] + t02 * R[0, 2] + diag - m * p0 * p0 - 2.0 * p0 * h0
    out[5] = t10 * R[1, 0] + t11 * R[1, 1] + t12 * R[1, 2] + diag - m * p1 * p1 - 2.0 * p1 * h1
    out[6] = t20 * R[2, 0] + t21 * R[2, 1] + t22 * R[2, 2] + diag - m * p2 * p2 - 2.0 * p2 * h2
    out[7] = t00 * R[1, 0] + t01 * R[1, 1] + t02 * R[1, 2] - m * p0 * p1 - p0 * h1 - h0 * p1
    out[8] = t00 * R[2, 0] + t01 * R[2, 1] + t02 * R[2, 2] - m * p0 * p2 - p0 * h2 - h0 * p2
    out[9] = t10 * R[2, 0] + t11 * R[2, 1] + t12 * R[2, 2] - m * p1 * p2 - p1 * h2 - h1 * p2


@forced
def rotate_block(R, M, i0, j0):
    """R B R^T for the 3x3 block B = M[i0:i0+3, j0:j0+3], row by row as a 9-tuple."""
    t00, t10, t20 = rotate(R, M[i0, j0], M[i0 + 1, j0], M[i0 + 2, j0])            # T = R B, column by column
    t01, t11, t21 = rotate(R, M[i0, j0 + 1], M[i0 + 1, j0 + 1], M[i0 + 2, j0 + 1])
    t02, t12, t22 = rotate(R, M[i0, j0 + 2], M[i0 + 1, j0 + 2], M[i0 + 2, j0 + 2])
    r00, r01, r02 = rotate(R, t00, t01, t02)                                       # row i of T R^T is R T[i]
    r10, r11, r12 = rotate(R, t10, t11, t12)
    r20, r21, r22 = rotate(R, t20, t21, t22)
    return r00, r01, r02, r10, r11, r12, r20, r21, r22


@inline
def rotate_symmetric(R, M, i0):
    """R S R^T for the symmetric S = M[i0:i0+3, i0:i0+3], read from its upper triangle; the upper triangle of the
    result (00, 01, 02, 11, 12, 22) as a 6-tuple."""
    m00, m01, m02 = M[i0, i0], M[i0, i0 + 1], M[i0, i0 + 2]
    m11, m12, m22 = M[i0 + 1, i0 + 1], M[i0 + 1, i0 + 2], M[i0 + 2, i0 + 2]
    t00, t10, t20 = rotate(R, m00, m01, m02)                                       # T = R S, column by column
    t01, t11, t21 = rotate(R, m01, m11, m12)
    t02, t12, t22 = rotate(R, m02, m12, m22)
    r00, r01, r02 = rotate(R, t00, t01, t02)                                       # row i of T R^T is R T[i]
    _, r11, r12 = rotate(R, t10, t11, t12)
    r22 = R[2, 0] * t20 + R[2, 1] * t21 + R[2, 2] * t22
    return r00, r01, r02, r11, r12, r22


@inline
def add_symmetric3(M, i0, x00, x01, x02, x11, x12, x22):
    """M[i0:i0+3, i0:i0+3] += the symmetric 3x3 given by its upper triangle."""
    M[i0, i0] += x00
    M[i0, i0 + 1] += x01
    M[i0, i0 + 2] += x02
    M[i0 + 1, i0] += x01
    M[i0 + 1, i0 + 1] += x11
    M[i0 + 1, i0 + 2] += x12
    M[i0 + 2, i0] += x02
    M[i0 + 2, i0 + 1] += x12
    M[i0 + 2, i0 + 2] += x22


@inline
def add_off_diagonal(M, x00, x01, x02, x10, x11, x12, x20, x21, x22):
    """M[0:3, 3:6] += X and M[3:6, 0:3] += X^T."""
    M[0, 3], M[0, 4], M[0, 5] = M[0, 3] + x00, M[0, 4] + x01, M[0, 5] + x02
    M[1, 3], M[1, 4], M[1, 5] = M[1, 3] + x10, M[1, 4] + x11, M[1, 5] + x12
    M[2, 3], M[2, 4], M[2, 5] = M[2, 3] + x20, M[2, 4] + x21, M[2, 5] + x22
    M[3, 0], M[3, 1], M[3, 2] = M[3, 0] + x00, M[3, 1] + x10, M[3, 2] + x20
    M[4, 0], M[4, 1], M[4, 2] = M[4, 0] + x01, M[4, 1] + x11, M[4, 2] + x21
    M[5, 0], M[5, 1], M[5, 2] = M[5, 0] + x02, M[5, 1] + x12, M[5, 2] + x22


@forced
def add_transformed_inertia(R, p, I, I_p):
    """I_p += Ad^-T I Ad^-1 for a symmetric 6x6 I of frame k posed at (R, p), read from its upper triangle: the
    inertia in the outer frame (paper 003, Algorithm 8.1's I^A_p += X^T I^a X).  Written out by blocks: with
    Ad^-1 = [[R^T, -R^T P], [0, R^T]] (P = p~) and I = [[A, B], [B^T, C]], rotate the blocks, A' = R A R^T,
    B' = R B R^T, C' = R C R^T, then shift:
        Ad^-T I Ad^-1 = [[A', B' - A' P], [(B' - A' P)^T, C' + P B' + (P B')^T - P A' P]]."""
    a00, a01, a02, a11, a12, a22 = rotate_symmetric(R, I, 0)
    b00, b01, b02, b10, b11, b12, b20, b21, b22 = rotate_block(R, I, 0, 3)
    c00, c01, c02, c11, c12, c22 = rotate_symmetric(R, I, 3)
    p0, p1, p2 = p[0], p[1], p[2]
    n00, n01, n02 = cross(a00, a01, a02, p0, p1, p2)               # N = A' P: row i of N = row i of A' x p
    n10, n11, n12 = cross(a01, a11, a12, p0, p1, p2)
    n20, n21, n22 = cross(a02, a12, a22, p0, p1, p2)
    k00, k10, k20 = cross(p0, p1, p2, b00, b10, b20)               # K = P B': column j of K = p x column j of B'
    k01, k11, k21 = cross(p0, p1, p2, b01, b11, b21)
    k02, k12, k22 = cross(p0, p1, p2, b02, b12, b22)
    l00, _, _ = cross(p0, p1, p2, n00, n10, n20)                   # L = P N = P A' P (symmetric): its upper half
    l01, l11, _ = cross(p0, p1, p2, n01, n11, n21)
    l02, l12, l22 = cross(p0, p1, p2, n02, n12, n22)
    add_symmetric3(I_p, 0, a00, a01, a02, a11, a12, a22)
    add_off_diagonal(I_p, b00 - n00, b01 - n01, b02 - n02, b10 - n10, b11 - n11, b12 - n12, b20 - n20, b21 - n21,
                     b22 - n22)
    add_symmetric3(I_p, 3, c00 + 2.0 * k00 - l00, c01 + k01 + k10 - l01, c02 + k02 + k20 - l02,
                   c11 + 2.0 * k11 - l11, c12 + k12 + k21 - l12, c22 + 2.0 * k22 - l22)
