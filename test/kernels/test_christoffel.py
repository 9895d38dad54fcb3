"""The Christoffel symbols Gamma_ijk (robot.christoffel_symbols) and the C they give (coriolis_matrix(kind=
"christoffel")), on seeded random trees with every joint type, fixed and floating, and on the real robots of
test_pinocchio.

Routes: Gamma against central differences of M along the tangent directions of integrate (h = 1e-5, the
documented 1e-7 relative of test_identities), combined by Koszul's formula -- the textbook 1/2 (dM_ij/dq_k +
dM_ik/dq_j - dM_jk/dq_i) plus, for free and planar joints, the brackets of the coordinate directions, whose
structure constants this file takes from spatial.adj and checks against the group law of integrate; the same
with the closed-form dM/dq of state_derivatives (1e-12); C against Gamma v (two closed forms, 1e-12);
Mdot = C + C^T against central differences of M (1e-7), time_derivatives and paper 002's C + C^T (1e-12);
C v against paper 002's C v, RNEA and Pinocchio's rnea (1e-12, 1e-9); C against Pinocchio's
computeCoriolisMatrix, which turns out to be the same matrix, fixed and floating (1e-9); the torsion identity
C(q, v) w - C(q, w) v = M [v, w] (1e-12), which is the symmetry C(q, v) w = C(q, w) v without free or planar
joints; mimic joints as the projection of the independent ones; and, when idyntree is importable, iDynTree's
fixed-base C (Echeandia and Wensing's Christoffel-consistent algorithm, 1e-9).
"""
import numpy as np
import pytest

import robot_dynamics as rd
from oracle import erd_path, relative_error
from random_urdf import random_urdf
from robot_dynamics.spatial import adj
from test_identities import BALL_CASES, ROUNDOFF, case_ids, make
from test_pinocchio import CASES, IDS, TOL, pair

FD_TOL, H, EXACT = 1e-7, 1e-5, 1e-12
TREES = [(seed, fb) for seed in range(6) for fb in (False, True)] + BALL_CASES   # ball joints from MJCF
TREE_IDS = case_ids(TREES)
ONE_DOF = ("revolute", "continuous", "prismatic", "fixed")        # coordinates that commute


def structure_constants(robot):
    """c (nv, nv, nv) with [X_a, X_b] = sum_l c[l, a, b] X_l for the coordinate directions of integrate: the se(3)
    bracket Xi^T adj(Xi_a) Xi_b within each free, ball or planar joint (Xi orthonormal), zero elsewhere."""
    c = np.zeros((robot.nv,) * 3)
    for joint in robot.model.joints:
        if joint.type in ("free", "floating", "ball", "planar") and joint.mimic is None:
            Xi, i = robot.model.bodies["Xi"][joint.body][:, :joint.nv], joint.idx_v
            for a in range(joint.nv):
                for b in range(joint.nv):
                    c[i:i + joint.nv, i + a, i + b] = Xi.T @ adj(Xi[:, a]) @ Xi[:, b]
    return c


def koszul(dM, M, c):
    """Gamma_ijk = M(X_i, nabla_{X_k} X_j) from dM[i, j, k] = dM_ij/dq_k and the structure constants c."""
    textbook = 0.5 * (dM + dM.transpose(0, 2, 1) - dM.transpose(2, 0, 1))       # [j, k, i] -> [i, j, k]
    brackets = 0.5 * (np.einsum("il,lkj->ijk", M, c) - np.einsum("jl,lki->ijk", M, c)
                      - np.einsum("kl,lji->ijk", M, c))
    return textbook + brackets


def central_dM(robot, q):
    """dM[i, j, k] = dM_ij/dq_k by central differences along integrate(q, +-h e_k)."""
    return np.stack([(robot.mass_matrix(robot.integrate(q, H * e)) - robot.mass_matrix(robot.integrate(q, -H * e)))
                     / (2 * H) for e in np.eye(robot.nv)], axis=-1)


def one_dof_tree(seed):
    return rd.load_urdf(random_urdf(seed, n_links=9, joint_types=ONE_DOF))


@pytest.mark.parametrize("seed, floating_base", TREES[:4], ids=TREE_IDS[:4])
def test_structure_constants_are_the_group_law_of_integrate(seed, floating_base):
    """[v, w] = log(q2^-1 q1) / e^2 for q1 = q (+) e v (+) e w, q2 = q (+) e w (+) e v (left-invariant directions),
    the O(e) error cancelled between e and -e."""
    robot = make(seed, floating_base)
    rng = np.random.default_rng(seed)
    q = robot.random_configuration(rng)
    v, w = rng.normal(size=(2, robot.nv))
    e = 1e-4

    def commutator(e):
        q1 = robot.integrate(robot.integrate(q, e * v), e * w)
        q2 = robot.integrate(robot.integrate(q, e * w), e * v)
        return robot.difference(q2, q1) / e**2

    expected = 0.5 * (commutator(e) + commutator(-e))
    assert relative_error(np.einsum("lab,a,b->l", structure_constants(robot), v, w), expected) < 1e-6


@pytest.mark.parametrize("seed, floating_base", TREES, ids=TREE_IDS)
def test_christoffel_symbols_are_kozsul_of_M(seed, floating_base):
    robot = make(seed, floating_base)
    q, v = robot.random_state(np.random.default_rng(1100 + seed))
    Gamma, M, c = robot.christoffel_symbols(q), robot.mass_matrix(q), structure_constants(robot)
    assert c.any(), "a free or planar joint: the brackets matter"
    assert relative_error(Gamma, koszul(central_dM(robot, q), M, c)) < FD_TOL
    assert relative_error(Gamma, koszul(robot.state_derivatives(q, v).dM_dq, M, c)) < EXACT


@pytest.mark.parametrize("seed", range(3))
def test_textbook_christoffel_symbols_without_free_or_planar_joints(seed):
    """Commuting coordinates: Gamma is paper 004's eq. (9.13) of central differences of M, symmetric in j, k."""
    robot = one_dof_tree(seed)
    q = robot.random_configuration(np.random.default_rng(seed))
    Gamma, dM = robot.christoffel_symbols(q), central_dM(robot, q)
    assert relative_error(Gamma, 0.5 * (dM + dM.transpose(0, 2, 1) - dM.transpose(2, 0, 1))) < FD_TOL
    assert relative_error(Gamma.transpose(0, 2, 1), Gamma) < EXACT


def check_christoffel_c(robot, q, v, w, a):
    """The properties of C = Gamma v that hold for every robot (1e-12), with the paper-002 C0; the worst errors."""
    C, C0, M = robot.coriolis_matrix(q, v, kind="christoffel"), robot.coriolis_matrix(q, v), robot.mass_matrix(q)
    bracket = np.einsum("lab,a,b->l", structure_constants(robot), v, w)
    errors = {"C = Gamma v": relative_error(C, robot.christoffel_symbols(q) @ v),
              "C + C^T = Mdot": relative_error(C + C.T, robot.time_derivatives(q, v, a).M_dot),
              "C + C^T = C0 + C0^T": relative_error(C + C.T, C0 + C0.T),
              "C v = C0 v": relative_error(C @ v, C0 @ v),
              "C v = RNEA": relative_error(C @ v, robot.inverse_dynamics(q, v, 0 * v) - robot.gravity_vector(q)),
              "C(v) w - C(w) v = M [v, w]": relative_error(C @ w - robot.coriolis_matrix(q, w, kind="christoffel") @ v,
                                                           M @ bracket)}
    bad = {k: e for k, e in errors.items() if not e < EXACT}
    assert not bad, bad
    return C, C0


@pytest.mark.parametrize("seed, floating_base", TREES, ids=TREE_IDS)
def test_christoffel_coriolis_matrix(seed, floating_base):
    robot = make(seed, floating_base)
    rng = np.random.default_rng(1200 + seed)
    q, v = robot.random_state(rng)
    w, a = rng.normal(size=(2, robot.nv))
    C, C0 = check_christoffel_c(robot, q, v, w, a)
    Mdot = (robot.mass_matrix(robot.integrate(q, v, H)) - robot.mass_matrix(robot.integrate(q, v, -H))) / (2 * H)
    assert relative_error(C + C.T, Mdot) < FD_TOL
    assert relative_error(C, C0) > 1e-3, "another matrix than paper 002's C"


@pytest.mark.parametrize("seed", range(2))
def test_christoffel_c_is_symmetric_in_its_velocities_without_free_or_planar_joints(seed):
    robot = one_dof_tree(seed)
    rng = np.random.default_rng(seed)
    q, v = robot.random_state(rng)
    w = rng.normal(size=robot.nv)
    assert relative_error(robot.coriolis_matrix(q, v, kind="christoffel") @ w,
                          robot.coriolis_matrix(q, w, kind="christoffel") @ v) < EXACT


@pytest.mark.parametrize("name, floating_base", CASES, ids=IDS)
def test_real_robots(name, floating_base):
    """Koszul of the closed-form dM/dq, the identities of the random trees, and Pinocchio: its
    computeCoriolisMatrix is this C, fixed and floating (its body-level factorization is the Christoffel one; not
    so on mimic models, test_pinocchio), and C v its rnea(q, v, 0) - g."""
    robot, twin = pair(name, floating_base)
    rng = np.random.default_rng(len(name))
    q, v = robot.random_state(rng)
    w, a = rng.normal(size=(2, robot.nv))
    Gamma, M, c = robot.christoffel_symbols(q), robot.mass_matrix(q), structure_constants(robot)
    assert relative_error(Gamma, koszul(robot.state_derivatives(q, v).dM_dq, M, c)) < EXACT
    if not floating_base:
        assert not c.any() and relative_error(Gamma.transpose(0, 2, 1), Gamma) < EXACT
    C, _ = check_christoffel_c(robot, q, v, w, a)
    assert relative_error(C, twin.coriolis_matrix(q, v)) < TOL
    assert relative_error(C @ v, twin.rnea(q, v, 0 * v) - twin.gravity_vector(q)) < TOL


def test_mimic_joints_are_the_projection():
    """q_full = G q + offset is linear, so Gamma transforms as a tensor: Gamma = Gamma_full[G, G, G]."""
    for s in range(100):
        urdf = random_urdf(s, n_links=10, joint_types=("revolute", "prismatic", "continuous", "fixed", "planar",
                                                       "floating"), mimic=True)
        full, reduced = rd.load_urdf(urdf), rd.load_urdf(urdf, mimic=True)
        if reduced.nv < full.nv and structure_constants(full).any():
            break
    assert reduced.nv < full.nv and structure_constants(full).any(), "mimic joints and a free or planar joint"
    G, offset = np.zeros((full.nv, reduced.nv)), np.zeros(full.nq)
    full_joints = {j.name: j for j in full.model.joints}
    for j in reduced.model.joints:
        f = full_joints[j.name]
        if j.mimic is None:
            G[f.idx_v:f.idx_v + f.nv, j.idx_v:j.idx_v + j.nv] = np.eye(j.nv)
        else:
            G[f.idx_v, j.idx_v] = reduced.model.bodies["mult"][j.body]
            offset[f.idx_q] = reduced.model.bodies["offset"][j.body]
    P = np.zeros((full.nq, reduced.nq))                  # q_full = P q + offset, reading the joints' q slices
    for j in reduced.model.joints:
        f = full_joints[j.name]
        if j.mimic is None:
            P[f.idx_q:f.idx_q + f.nq, j.idx_q:j.idx_q + j.nq] = np.eye(j.nq)
        else:
            P[f.idx_q, j.idx_q] = reduced.model.bodies["mult"][j.body]
    rng = np.random.default_rng(5)
    q, v = reduced.random_state(rng)
    expected = np.einsum("abc,ai,bj,ck->ijk", full.christoffel_symbols(P @ q + offset), G, G, G)
    assert relative_error(reduced.christoffel_symbols(q), expected) < EXACT
    assert relative_error(reduced.coriolis_matrix(q, v, kind="christoffel"),
                          G.T @ full.coriolis_matrix(P @ q + offset, G @ v, kind="christoffel") @ G) < EXACT


def test_kind_argument():
    robot, _ = pair("ur5_robot.urdf", False)
    rng = np.random.default_rng(4)
    q, v = robot.random_state(rng)
    default = robot.coriolis_matrix(q, v)
    np.testing.assert_array_equal(robot.coriolis_matrix(q, v, kind="paper002"), default)
    np.testing.assert_array_equal(robot.coriolis_matrix(q, v, kind="".join(["paper", "002"])), default)
    C = robot.coriolis_matrix(q, v, kind="christoffel")
    out = np.full_like(C, np.nan)
    assert robot.coriolis_matrix(q, v, out=out, kind="christoffel") is out
    np.testing.assert_array_equal(out, C)
    Q, V = np.stack([q, robot.random_configuration(rng)]), np.stack([v, rng.normal(size=robot.nv)])
    batch = robot.coriolis_matrix(Q, V, kind="christoffel")
    assert batch.shape == (2, robot.nv, robot.nv)
    assert relative_error(batch[0], C) < ROUNDOFF
    for bad in ("Christoffel", "pinocchio", None, 2):
        with pytest.raises(ValueError, match=r"kind must be one of 'paper002', 'christoffel', got "):
            robot.coriolis_matrix(q, v, kind=bad)
    with pytest.raises(ValueError, match=r"v contains non-finite values"):
        robot.coriolis_matrix(q, v * np.nan, kind="christoffel")


@pytest.mark.parametrize("name", ["ur5_robot.urdf", "panda.urdf", "kinova.urdf"])
def test_idyntree_fixed_base_coriolis_matrix(name):
    """iDynTree's C (KinDynComputations.getCoriolisAndMassMatrices, Echeandia and Wensing's Algorithm 1) is the
    Christoffel C of a fixed base: its joint block at zero base velocity.  Its base rows and columns are not
    compared (iDynTree's floating-base C is not this one)."""
    try:
        import idyntree.swig as idt
    except ImportError:
        idt = pytest.importorskip("idyntree.bindings")
    robot = rd.load_urdf(erd_path(name))
    loader = idt.ModelLoader()
    assert loader.loadReducedModelFromFile(str(erd_path(name)), [j.name for j in robot.model.joints])
    kin_dyn = idt.KinDynComputations()
    assert kin_dyn.loadRobotModel(loader.model())
    assert kin_dyn.setFrameVelocityRepresentation(idt.BODY_FIXED_REPRESENTATION)
    rng = np.random.default_rng(6)
    n = robot.nv + 6
    for _ in range(3):
        q, v = robot.random_state(rng)
        s = np.array([q[j.idx_q] for j in robot.model.joints])
        assert kin_dyn.setRobotState(idt.VectorDynSize.FromPython(s), idt.VectorDynSize.FromPython(v),
                                     idt.Vector3.FromPython(robot.gravity))
        C, M, Mdot = idt.MatrixDynSize(n, n), idt.MatrixDynSize(n, n), idt.MatrixDynSize(n, n)
        assert kin_dyn.getCoriolisAndMassMatrices(C, M, Mdot)
        assert relative_error(robot.mass_matrix(q), M.toNumPy()[6:, 6:]) < TOL
        assert relative_error(robot.coriolis_matrix(q, v, kind="christoffel"), C.toNumPy()[6:, 6:]) < TOL
