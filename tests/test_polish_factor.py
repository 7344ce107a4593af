"""The polish's Cholesky factor in single precision: checked, refined, redone in double.

The reference for every solve is the residual B − (K + δI)X computed here by NumPy in
double, and SciPy's double-precision solve."""

import numpy as np
import pytest
import scipy.linalg as sla

from margin_opt.solvers.smo import cache as held
from margin_opt.solvers.smo import polish as pol
from margin_opt.solvers.smo.options import DEFAULT, SMOOptions


def _matrix(n, cond, seed=0, last=None):
    """A symmetric matrix with eigenvalues from 1 down to 1/cond (the last one
    replaced by ``last`` where given)."""
    rng = np.random.default_rng(seed)
    Q, _ = np.linalg.qr(rng.standard_normal((n, n)))
    lam = np.geomspace(1.0, 1.0 / cond, n)
    if last is not None:
        lam[-1] = last
    K = (Q * lam) @ Q.T
    return (K + K.T) / 2


def _rel_residual(K, d, B, X):
    R = B - K @ X - d * X
    return float((np.abs(R).max(axis=0) / np.abs(B).max(axis=0)).max())


def test_single_precision_solve_meets_its_residual_and_later_solves_refine_alike():
    K = _matrix(300, 1e5)
    fac = pol.Factor(K, np.arange(300))
    assert fac.L.dtype == np.float32                     # spotrf succeeded
    rng = np.random.default_rng(1)
    B = rng.standard_normal((300, 3))
    X = fac.solve(B)
    assert _rel_residual(K, fac.d, B, X) <= DEFAULT.solve_rtol
    assert fac.steps >= 1                                # cond 1e5 needs a refinement
    B2 = rng.standard_normal((300, 2))                   # unchecked, refined alike
    assert _rel_residual(K, fac.d, B2, fac.solve(B2)) <= 10 * DEFAULT.solve_rtol
    assert fac.L.dtype == np.float32
    z = rng.standard_normal(300)
    assert fac.quad(z) == pytest.approx(z @ K @ z, rel=1e-12)


def test_single_precision_too_coarse_is_redone_in_double():
    # cond 3e7: spotrf still succeeds, but three refinements from it cannot reach 1e-4
    # (at 1e7 they just do, at 1e8 spotrf fails)
    K = _matrix(300, 3e7)
    fac = pol.Factor(K, np.arange(300))
    assert fac.L.dtype == np.float32
    B = np.random.default_rng(2).standard_normal((300, 2))
    X = fac.solve(B)
    assert fac.L.dtype == np.float64
    assert _rel_residual(K, fac.d, B, X) <= 1e-8
    np.testing.assert_allclose(X, sla.solve(K + fac.d * np.eye(300), B), rtol=1e-6,
                               atol=1e-6 * np.abs(X).max())


def test_not_positive_definite_in_single_precision_factors_in_double():
    # an eigenvalue of −1e-9: spotrf fails, dpotrf needs a larger damping
    K = _matrix(300, 1e8, last=-1e-9)
    fac = pol.Factor(K, np.arange(300))
    assert fac.L.dtype == np.float64 and fac.d > DEFAULT.damping
    B = np.random.default_rng(3).standard_normal((300, 1))
    assert _rel_residual(K, fac.d, B, fac.solve(B)) <= 1e-6


def test_fallback_raises_the_damping_where_double_needs_it():
    # spotrf succeeds on a matrix with an eigenvalue of −1e-11, refinement against it
    # cannot converge, dpotrf needs δ raised: the solve is that of K + (raised δ)I
    K = _matrix(300, 1e4, seed=1, last=-1e-11)
    fac = pol.Factor(K, np.arange(300))
    assert fac.L.dtype == np.float32
    B = np.random.default_rng(9).standard_normal((300, 2))
    X = fac.solve(B)
    assert fac.L.dtype == np.float64 and fac.d > DEFAULT.damping
    # K + δI has an eigenvalue of ~9e-11: a backward-stable solve leaves ~1e-7
    assert _rel_residual(K, fac.d, B, X) <= 1e-5


def test_solve_gives_none_where_no_damping_factorizes():
    # the single factor of a positive definite matrix, then K_UU far from it (an
    # eigenvalue of −1e-3): the check fails, dpotrf fails at every damping, and the
    # solve says so (None); the polish's directions then give None too
    fac = pol.Factor(_matrix(200, 1e3), np.arange(200))
    assert fac.L.dtype == np.float32
    fac.K = _matrix(200, 1e3, seed=5, last=-1e-3)
    assert fac.solve(np.ones((200, 1))) is None and fac.L is None
    y = np.where(np.arange(200) % 2 == 0, 1.0, -1.0)
    newton = pol._Constrained(fac, y, np.ones(200), np.zeros(0, dtype=np.int64))
    assert newton.direction() is None


def test_extended_single_factor_solves_the_extended_matrix():
    n, k = 300, 20
    K = _matrix(n + k, 1e4, seed=4)
    U, N = np.arange(n), np.arange(n, n + k)
    fac = pol.Factor(K[:n, :n].copy(), U)
    assert fac.L.dtype == np.float32
    fac.solve(np.ones((n, 1)))
    assert fac.steps is not None                         # checked on the first factor
    assert fac.extend(K[:n, n:].copy(), K[n:, n:].copy(), N)
    assert fac.L.shape == (n + k, n + k) and fac.L.dtype == np.float32
    assert fac.steps is None                             # the extended one is checked anew
    np.testing.assert_array_equal(fac.K, K)
    B = np.random.default_rng(6).standard_normal((n + k, 2))
    assert _rel_residual(K, fac.d, B, fac.solve(B)) <= DEFAULT.solve_rtol


def test_two_extensions_kept_as_blocks_give_the_whole_matrixs_products():
    # an extension appends K_UN and K_NN as blocks (no copy of K_UU): products, rows and
    # zᵀKz by the blocks equal NumPy's on the whole matrix; the solve after the second
    # extension meets the residual; K then puts the whole matrix together
    n, k1, k2 = 250, 15, 9
    K = _matrix(n + k1 + k2, 1e4, seed=9)
    fac = pol.Factor(K[:n, :n].copy(), np.arange(n))
    u = n
    for k in (k1, k2):
        assert fac.extend(K[:u, u:u + k].copy(), K[u:u + k, u:u + k].copy(),
                          np.arange(u, u + k))
        u += k
    assert len(fac._ext) == 2
    rng = np.random.default_rng(10)
    X = rng.standard_normal((u, 3))
    np.testing.assert_allclose(fac._kmat(X), K @ X, rtol=1e-12, atol=1e-12)
    S = np.array([0, 7, n - 1, n, n + k1 - 1, n + k1, u - 1])
    np.testing.assert_array_equal(fac._krows(S), K[S])
    z = X[:, 0]
    assert fac.quad(z) == pytest.approx(z @ K @ z, rel=1e-12)
    B = rng.standard_normal((u, 2))
    assert _rel_residual(K, fac.d, B, fac.solve(B)) <= DEFAULT.solve_rtol
    assert len(fac._ext) == 2                            # nothing put together so far
    np.testing.assert_array_equal(fac.K, K)
    assert fac._ext == []


def test_double_factor_when_single_is_off():
    double = SMOOptions(single=False)
    K = _matrix(200, 1e5)
    fac = pol.Factor(K, np.arange(200), double)
    assert fac.L.dtype == np.float64 and fac.K is None    # no refinement: K released
    B = np.ones((200, 1))
    assert _rel_residual(K, fac.d, B, fac.solve(B)) <= 1e-9
    z = np.random.default_rng(7).standard_normal(200)
    assert fac.quad(z) == pytest.approx(z @ K @ z, rel=1e-9)
    k = 10
    K2 = _matrix(200 + k, 1e4, seed=8)
    fac = pol.Factor(K2[:200, :200].copy(), np.arange(200), double)
    assert fac.extend(K2[:200, 200:], K2[200:, 200:], np.arange(200, 200 + k))
    B = np.ones((200 + k, 1))
    assert fac.K is None and _rel_residual(K2, fac.d, B, fac.solve(B)) <= 1e-9


@pytest.mark.parametrize("nthr", [1, 2, 3])
def test_update_sweep_over_held_rows_split_over_threads(nthr):
    """The polish's update and the gradient reconstruction read the rows the cache
    holds in place: split by columns over threads the sweep gives NumPy's
    coefsᵀ K[rows], and one thread's sums bit for bit
    (each entry adds its terms in the same order); zero coefficients are skipped."""
    rng = np.random.default_rng(3)
    cache = rng.standard_normal((300, 1201))          # odd width: uneven shares
    slots = rng.choice(300, size=240, replace=False)
    coefs = rng.standard_normal((240, 2))
    coefs[::3, 1] = 0.0
    out0 = rng.standard_normal((2, 1201))
    expect = out0 + coefs.T @ cache[slots]
    one = out0.copy()
    held.accumulate(cache, slots, coefs, one, 1)
    split = out0.copy()
    held.accumulate(cache, slots, coefs, split, nthr)
    assert slots.size * cache.shape[1] >= held.PAR_ENTRIES      # the split path is taken
    np.testing.assert_allclose(split, expect, rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(split, one)
