"""Ploen's global matrix form (paper 000) and the closed form of Modern Robotics (paper 004, eqs. (9.82)-(9.84)).

M = S^T G^T J G S and C = S^T G^T (J G ad_Gamma Gamma + C_bar) G S from robot.global_factorization, checked against
our mass_matrix and time_derivatives (seeded random trees, every joint type, fixed and floating: EXACT as in
test_identities), against Pinocchio on real robots (1e-9), and block by block against spatial.py and body_placements.
Ploen's C is a passive C other than paper 002's (test_ploen_c_is_not_paper_002_c shows where they part).
"""
import numpy as np
import pytest

import robot_dynamics as rd
from oracle import relative_error
from robot_dynamics.spatial import ad_inv, adj, skew, spatial_inertia
from test_identities import CASES, EXACT, IDS, ROUNDOFF, make
from test_pinocchio import CASES as REAL_CASES, IDS as REAL_IDS, TOL, pair


def blocks(X, nb):
    """(6 nb, 6 nb) -> (nb, nb, 6, 6), block [k, a] = X[6k:6k+6, 6a:6a+6]."""
    return X.reshape(nb, 6, nb, 6).swapaxes(1, 2)


def ancestors(robot, k):
    """k and its ancestors."""
    chain = []
    while k >= 0:
        chain.append(k)
        k = robot.model.parent[k]
    return chain


@pytest.fixture(params=CASES, ids=IDS)
def case(request):
    seed, fb = request.param
    robot = make(seed, fb)
    rng = np.random.default_rng(2000 + seed)
    q, v = robot.random_state(rng)
    return robot, rng, q, v


def test_ploen_m_and_c_on_random_trees(case):
    """Eqs. (36)-(37) give our M; Mdot = C + C^T (Prop. 2) and eq. (28) against our closed-form Mdot (paper 002,
    Prop. 6, computed without C); Ploen's C v equals ours; g = S^T G^T J G P0 gamma_0 (eq. (38)) with P0 the roots'
    Ad^-1_{0,k} from body_placements."""
    robot, rng, q, v = case
    f = robot.global_factorization(q, v)
    nb, nv = robot.nbodies, robot.nv
    assert f.S.shape == (6 * nb, nv) and f.G.shape == f.C_bar.shape == (6 * nb, 6 * nb)
    M_dot = robot.time_derivatives(q, v, rng.normal(size=nv)).M_dot
    C, C_ours = f.coriolis_matrix(), robot.coriolis_matrix(q, v)
    GS = f.G @ f.S                                                  # eq. (37) written out
    np.testing.assert_array_equal(C, GS.T @ (f.J @ f.G @ f.ad_Gamma @ f.Gamma + f.C_bar) @ GS)
    assert relative_error(f.mass_matrix(), robot.mass_matrix(q)) < EXACT
    assert relative_error(C + C.T, M_dot) < EXACT
    assert relative_error(f.mass_matrix_dot(), M_dot) < EXACT
    assert relative_error(C @ v, C_ours @ v) < EXACT
    T = robot.body_placements(q)
    P0 = np.zeros((6 * nb, 6))
    for k in np.flatnonzero(robot.model.parent < 0):
        P0[6 * k:6 * k + 6] = ad_inv(T[k, :3, :3], T[k, :3, 3])
    gamma0 = np.concatenate([-robot.gravity, np.zeros(3)])
    assert relative_error(GS.T @ f.J @ f.G @ P0 @ gamma0, robot.gravity_vector(q)) < EXACT


def test_operators_block_by_block(case):
    """G's block (k, a) is Ad^-1 of T_{a,k} (from body_placements) for a = k or an ancestor, zero otherwise, and
    G = (I - Gamma)^-1; S holds the motion subspaces (a free joint's the identity); J the body inertias, symmetric
    PSD; ad_Gamma = -adj(S_k v_k); each C_bar_k is skew and C_bar_k V_k = -adj(V_k)^T Lambda_k V_k (Prop. 1) for
    the body twists V = G S v (eq. (19)), which equal Ad^-1_{0,k} sum_{a <= k} Ad_{0,a} S_a v_a from the poses."""
    robot, _, q, v = case
    f = robot.global_factorization(q, v)
    nb, model = robot.nbodies, robot.model
    T = robot.body_placements(q)
    G, Gamma, J, adG, Cb = (blocks(x, nb) for x in (f.G, f.Gamma, f.J, f.ad_Gamma, f.C_bar))
    np.testing.assert_allclose(f.G @ (np.eye(6 * nb) - f.Gamma), np.eye(6 * nb), rtol=0, atol=EXACT)
    V = (f.G @ f.S @ v).reshape(nb, 6)
    scale = np.abs(f.G).max()
    for k in range(nb):
        above = ancestors(robot, k)
        for a in range(nb):
            if a in above:
                T_ak = np.linalg.inv(T[a]) @ T[k]
                assert relative_error(G[k, a], ad_inv(T_ak[:3, :3], T_ak[:3, 3])) < EXACT
            else:
                assert not G[k, a].any() and not J[k, a].any() and not Cb[k, a].any()
            expected = np.zeros((6, 6))
            if a == model.parent[k]:
                T_ak = np.linalg.inv(T[a]) @ T[k]
                expected = ad_inv(T_ak[:3, :3], T_ak[:3, 3])
            assert np.abs(Gamma[k, a] - expected).max() < EXACT * scale
        np.testing.assert_array_equal(G[k, k], np.eye(6))
        b = model.bodies[k]
        S_k = f.S[6 * k:6 * k + 6]
        np.testing.assert_array_equal(S_k[:, b["iv"]:b["iv"] + b["nvj"]], b["mult"] * b["Xi"][:, :b["nvj"]])
        assert np.count_nonzero(np.abs(S_k).sum(axis=0)) <= b["nvj"]
        if b["jtype"] == 3:                                          # FREE: the base twist in the base frame
            np.testing.assert_array_equal(S_k[:, b["iv"]:b["iv"] + 6], np.eye(6))
        np.testing.assert_array_equal(J[k, k], model.Lam[k])
        assert np.linalg.eigvalsh(J[k, k]).min() >= -EXACT * max(1.0, np.abs(J[k, k]).max())
        np.testing.assert_array_equal(adG[k, k], -adj(S_k @ v))
        np.testing.assert_array_equal(Cb[k, k], -Cb[k, k].T)
        bias = -adj(V[k]).T @ spatial_inertia(model.pi[k]) @ V[k]
        size = np.abs(model.Lam[k]).max() * np.abs(V[k]).max() ** 2
        np.testing.assert_allclose(Cb[k, k] @ V[k], bias, rtol=0, atol=EXACT * size)
    twists = np.array([ad_inv(T[k, :3, :3], T[k, :3, 3]) for k in range(nb)])
    for k in range(nb):
        world = sum(np.linalg.inv(twists[a]) @ f.S[6 * a:6 * a + 6] @ v for a in ancestors(robot, k))
        assert relative_error(V[k], twists[k] @ world) < EXACT


def test_ploen_c_is_not_paper_002_c():
    """The two C differ as matrices (both are passive and give the same C v).  Counter-example: one free body
    translating (w = 0).  Ploen's C_bar_k depends on w alone, so his C is 0; paper 002's body term Psi =
    Lambda adj(V) - adj(V)^T Lambda (eq. (3)) is not: [[0, m v~], [m v~, h~ v~ - v~ h~]] for V = [v; 0]."""
    urdf = """<robot name="brick"><link name="brick"><inertial><origin xyz="0.1 -0.2 0.3" rpy="0.3 0.2 0.1"/>
      <mass value="2.0"/><inertia ixx="0.3" iyy="0.4" izz="0.5" ixy="0.01" ixz="0.02" iyz="0.03"/></inertial>
      </link></robot>"""
    robot = rd.load_urdf(urdf, floating_base=True)
    q = robot.random_configuration(0)
    v = np.array([0.4, -1.1, 0.7, 0.0, 0.0, 0.0])
    C_ploen, C_002 = robot.global_factorization(q, v).coriolis_matrix(), robot.coriolis_matrix(q, v)
    Lam = robot.model.Lam[0]
    np.testing.assert_array_equal(C_ploen, np.zeros((6, 6)))
    assert relative_error(C_002, Lam @ adj(v) - adj(v).T @ Lam) < EXACT
    np.testing.assert_allclose(C_002[:3, 3:], 2.0 * skew(v[:3]), rtol=0, atol=EXACT)
    np.testing.assert_allclose(C_002 @ v, 0.0, atol=EXACT)                    # both C v = 0 (no bias force)


@pytest.mark.filterwarnings("ignore::robot_dynamics.URDFWarning")       # pr2's placeholder inertias
@pytest.mark.parametrize("name, floating_base", REAL_CASES, ids=REAL_IDS)
def test_against_pinocchio(name, floating_base):
    """Eq. (36) against Pinocchio's crba; eq. (37)'s C + C^T against Pinocchio's C + C^T (= Mdot) and C v + g
    against its rnea(q, v, 0)."""
    robot, twin = pair(name, floating_base)
    rng = np.random.default_rng(len(name))
    q, v = robot.random_state(rng)
    f = robot.global_factorization(q, v)
    C, C_pin = f.coriolis_matrix(), twin.coriolis_matrix(q, v)
    assert relative_error(f.mass_matrix(), twin.mass_matrix(q)) < TOL
    assert relative_error(C + C.T, C_pin + C_pin.T) < TOL
    assert relative_error(C @ v + robot.gravity_vector(q), twin.rnea(q, v, np.zeros(robot.nv))) < TOL


@pytest.mark.filterwarnings("ignore::robot_dynamics.URDFWarning")
def test_coupled_mimic_joints():
    """Mimic joints (mimic=True): a mimic body's S block sits in its master's column, times the multiplier."""
    robot, twin = pair("panda.urdf", False, mimic=True)
    q, v = robot.random_state(5)
    f = robot.global_factorization(q, v)
    assert relative_error(f.mass_matrix(), twin.mass_matrix(q)) < TOL
    assert relative_error(f.coriolis_matrix() @ v + robot.gravity_vector(q),
                          twin.rnea(q, v, np.zeros(robot.nv))) < TOL


def test_batch_and_out():
    """Leading batch dimensions (the compiled parallel loop) equal single states; out= is filled in place,
    strided arrays included; a wrong out is a ValueError naming the field."""
    robot = make(3, True)
    rng = np.random.default_rng(7)
    q = np.array([[robot.random_configuration(rng) for _ in range(3)] for _ in range(2)])
    v = rng.normal(size=(2, 3, robot.nv))
    f = robot.global_factorization(q, v)
    n6 = 6 * robot.nbodies
    assert f.S.shape == (2, 3, n6, robot.nv) and f.G.shape == (2, 3, n6, n6)
    one = robot.global_factorization(q[1, 2], v[1, 2])
    for name in ("S", "G", "Gamma", "J", "ad_Gamma", "C_bar"):
        assert relative_error(getattr(f, name)[1, 2], getattr(one, name)) < ROUNDOFF, name
    assert relative_error(f.mass_matrix()[1, 2], robot.mass_matrix(q[1, 2])) < EXACT
    out = rd.GlobalFactorization(*(np.full(x.shape + (2,), np.nan)[..., 0] for x in
                                   (f.S, f.G, f.Gamma, f.J, f.ad_Gamma, f.C_bar)))
    assert robot.global_factorization(q, v, out=out) is out
    for name in ("S", "G", "Gamma", "J", "ad_Gamma", "C_bar"):
        np.testing.assert_array_equal(getattr(out, name), getattr(f, name), err_msg=name)
    single = robot.global_factorization(q[0, 0], v[0, 0])
    assert robot.global_factorization(q[0, 0], v[0, 0], out=single) is single
    np.testing.assert_array_equal(single.C_bar, f.C_bar[0, 0])
    with pytest.raises(ValueError, match="out must be a GlobalFactorization"):
        robot.global_factorization(q, v, out=robot.dynamics(q[0, 0], v[0, 0]))
    out.G = np.zeros((2, 3, n6, n6 - 1))
    with pytest.raises(ValueError, match=r"out.G must be a writeable float64 array of shape \(2, 3, "):
        robot.global_factorization(q, v, out=out)


# ---- Modern Robotics, chapter 9 (paper 004): the closed form M = A^T L^T G L A of section 9.4 -------------------
# The three-link open chain of the book's software (the first three links of a UR5), in the book's conventions:
# twists [angular; linear], link frames {i} at the centres of mass, home frames M_{i-1,i}, space screws S_i,
# G_i = diag(I_i, m_i E).  Its S_1 = (1, 0, 1, 0, 1, 0) is not a unit screw: a revolute joint about
# (1, 0, 1)/sqrt(2) through (0, 0, 1) turning sqrt(2) times faster than theta_1.  A URDF axis is a unit vector, so
# here the first joint angle is phi_1 = sqrt(2) theta_1: M_theta = D M_phi D, c_theta = D c_phi, g_theta = D g_phi
# with D = diag(sqrt(2), 1, 1), and the book's published outputs at theta = (0.1, 0.1, 0.1),
# theta_dot = (0.1, 0.2, 0.3), gravity (0, 0, -9.8) are checked to within a unit of their last printed digit.
MR_M = [np.eye(4), np.eye(4), np.eye(4)]
MR_M[0][2, 3] = 0.089159
MR_M[1][:3, :3], MR_M[1][:3, 3] = [[0, 0, 1], [0, 1, 0], [-1, 0, 0]], [0.28, 0.13585, 0.0]
MR_M[2][:3, 3] = [0.0, -0.1197, 0.395]
MR_G = [np.diag([0.010267, 0.010267, 0.00666, 3.7, 3.7, 3.7]),
        np.diag([0.22689, 0.22689, 0.0151074, 8.393, 8.393, 8.393]),
        np.diag([0.0494433, 0.0494433, 0.004095, 2.275, 2.275, 2.275])]
MR_S = np.array([[1, 0, 1, 0, 1, 0], [0, 1, 0, -0.089, 0, 0], [0, 1, 0, -0.089, 0, 0.425]]) / [[2 ** 0.5], [1], [1]]
D = np.diag([2 ** 0.5, 1.0, 1.0])
PUBLISHED_M = [[2.25433380e+01, -3.07146754e-01, -7.18426391e-03], [-3.07146754e-01, 1.96850717e+00, 4.32157368e-01],
               [-7.18426391e-03, 4.32157368e-01, 1.91630858e-01]]
PUBLISHED_C = [0.26453118, -0.05505157, -0.00689132]
PUBLISHED_G = [28.40331262, -37.64094817, -5.4415892]
UNIT = 1e-8     # one unit in the last printed digit: M's mantissas (relative), c's and g's 8 decimals (absolute)


def mr_ad_of_transform(T):
    """[Ad_T] = [[R, 0], [p~ R, R]] in [angular; linear] order (chapter 3 of the book, paper 000 eq. (4))."""
    R, p = T[:3, :3], T[:3, 3]
    X = np.zeros((6, 6))
    X[:3, :3] = X[3:, 3:] = R
    X[3:, :3] = skew(p) @ R
    return X


def mr_ad(V):
    """[ad_V] = [[w~, 0], [v~, w~]] for V = (w, v)."""
    X = np.zeros((6, 6))
    X[:3, :3] = X[3:, 3:] = skew(V[:3])
    X[3:, :3] = skew(V[3:])
    return X


def mr_exp(A, theta):
    """e^{[A] theta} for a unit screw A = (w, v), |w| = 1 (paper 000, eqs. (9)-(11))."""
    W = skew(A[:3])
    T = np.eye(4)
    T[:3, :3] = np.eye(3) + np.sin(theta) * W + (1 - np.cos(theta)) * W @ W
    T[:3, 3] = (theta * np.eye(3) + (1 - np.cos(theta)) * W + (theta - np.sin(theta)) * W @ W) @ A[3:]
    return T


def mr_closed_form(theta, theta_dot, gravity):
    """M, c and g of paper 004, eqs. (9.82)-(9.84), with the operators of eqs. (9.64)-(9.70), (9.76).

    [ad_{A theta_dot}] is taken as diag(-ad_{A_i theta_dot_i}): eq. (9.58)'s [V_{i-1} seen from i, A_i] theta_dot_i is
    -ad_{A_i theta_dot_i} of that twist (Ploen's eq. (20) likewise); with the + sign printed in eq. (9.67) of this copy
    c misses the published c.  The base accelerates at -gravity (eq. (9.70) with Vdot_0 = (0, -gravity))."""
    n = len(theta)
    A, G, Gamma = np.zeros((6 * n, n)), np.zeros((6 * n, 6 * n)), np.zeros((6 * n, 6 * n))
    home, T_10 = np.eye(4), None
    for i in range(n):
        home = home @ MR_M[i]                                             # M_i = M_01 ... M_{i-1,i}
        A_i = np.linalg.solve(mr_ad_of_transform(home), MR_S[i])          # A_i = Ad_{M_i^-1} S_i, eq. (9.51)
        A[6 * i:6 * i + 6, i] = A_i
        G[6 * i:6 * i + 6, 6 * i:6 * i + 6] = MR_G[i]
        T_i_prev = np.linalg.inv(MR_M[i] @ mr_exp(A_i, theta[i]))       # T_{i,i-1}, eq. (9.50)
        if i == 0:
            T_10 = T_i_prev
        else:
            Gamma[6 * i:6 * i + 6, 6 * i - 6:6 * i] = mr_ad_of_transform(T_i_prev)   # eq. (9.68)
    L = np.linalg.inv(np.eye(6 * n) - Gamma)                             # eq. (9.76)
    V = L @ A @ theta_dot                                                # eq. (9.77), V_0 = 0
    ad_V, ad_A = np.zeros((6 * n, 6 * n)), np.zeros((6 * n, 6 * n))
    for i in range(n):
        ad_V[6 * i:6 * i + 6, 6 * i:6 * i + 6] = mr_ad(V[6 * i:6 * i + 6])
        ad_A[6 * i:6 * i + 6, 6 * i:6 * i + 6] = -mr_ad(A[6 * i:6 * i + 6, i] * theta_dot[i])
    Vdot_base = np.zeros(6 * n)
    Vdot_base[:6] = mr_ad_of_transform(T_10) @ np.concatenate([np.zeros(3), -np.asarray(gravity)])
    M = A.T @ L.T @ G @ L @ A                                            # eq. (9.82)
    c = A.T @ L.T @ (G @ L @ ad_A @ Gamma - ad_V.T @ G) @ L @ A @ theta_dot   # eq. (9.83)
    return M, c, A.T @ L.T @ G @ L @ Vdot_base                          # eq. (9.84)


def rpy(R):
    """URDF roll, pitch, yaw of R = Rz(yaw) Ry(pitch) Rx(roll)."""
    return np.arctan2(R[2, 1], R[2, 2]), np.arctan2(-R[2, 0], np.hypot(R[0, 0], R[1, 0])), np.arctan2(R[1, 0], R[0, 0])


def mr_urdf():
    """The chain as a URDF: joint frame i on the axis of S_i (its foot nearest the home frame M_i) with M_i's
    orientation, the link's inertial at M_i (its centre of mass) with G_i's mass and rotational inertia."""
    def numbers(x):
        return " ".join(repr(float(e)) for e in x)

    def origin(T):
        return f'<origin xyz="{numbers(T[:3, 3])}" rpy="{numbers(rpy(T[:3, :3]))}"/>'
    xml, home, previous = ['<robot name="mr_three_link"><link name="base"/>'], np.eye(4), np.eye(4)
    for i in range(3):
        home = home @ MR_M[i]
        w, v = MR_S[i][:3], MR_S[i][3:]
        foot = np.cross(w, v)                                            # the axis point nearest the origin
        frame = np.eye(4)
        frame[:3, :3], frame[:3, 3] = home[:3, :3], foot + ((home[:3, 3] - foot) @ w) * w
        axis, com = frame[:3, :3].T @ w, np.linalg.inv(frame) @ home
        I, m = MR_G[i][:3, :3], MR_G[i][3, 3]
        xml.append(f'<joint name="j{i + 1}" type="continuous"><parent link="{"base" if i == 0 else f"l{i}"}"/>'
                   f'<child link="l{i + 1}"/>{origin(np.linalg.inv(previous) @ frame)}'
                   f'<axis xyz="{numbers(axis)}"/></joint>'
                   f'<link name="l{i + 1}"><inertial>{origin(com)}<mass value="{numbers([m])}"/>'
                   f'<inertia ixx="{numbers([I[0, 0]])}" iyy="{numbers([I[1, 1]])}" izz="{numbers([I[2, 2]])}" '
                   f'ixy="0" ixz="0" iyz="0"/>'
                   f'</inertial></link>')
        previous = frame
    return "".join(xml) + "</robot>"


def test_modern_robotics_three_link():
    """Eqs. (9.82)-(9.84) written out in numpy, our mass_matrix, coriolis_matrix and gravity_vector, and Ploen's
    S^T G^T J G S on the book's three-link chain: equal to 1e-12 at random states, and the book's published
    outputs reproduced to the digits they are printed with."""
    robot = rd.load_urdf(mr_urdf(), gravity=(0.0, 0.0, -9.8))
    rng = np.random.default_rng(11)
    states = [(D @ [0.1, 0.1, 0.1], D @ [0.1, 0.2, 0.3])] + [tuple(rng.normal(size=(2, 3))) for _ in range(3)]
    for phi, phi_dot in states:
        M, c, g = mr_closed_form(phi, phi_dot, robot.gravity)
        f = robot.global_factorization(phi, phi_dot)
        assert relative_error(robot.mass_matrix(phi), M) < EXACT
        assert relative_error(f.mass_matrix(), M) < EXACT
        assert relative_error(robot.coriolis_matrix(phi, phi_dot) @ phi_dot, c) < EXACT
        assert relative_error(f.coriolis_matrix() @ phi_dot, c) < EXACT
        assert relative_error(robot.gravity_vector(phi), g) < EXACT
    phi, phi_dot = states[0]
    np.testing.assert_allclose(D @ robot.mass_matrix(phi) @ D, PUBLISHED_M, rtol=UNIT, atol=0)
    np.testing.assert_allclose(D @ robot.coriolis_matrix(phi, phi_dot) @ phi_dot, PUBLISHED_C, rtol=0, atol=UNIT)
    np.testing.assert_allclose(D @ robot.gravity_vector(phi), PUBLISHED_G, rtol=0, atol=UNIT)
