"""The Newton polish's step (:func:`margin_opt.solvers.smo.polish.newton_step`): one
Cholesky factor of the free set's block of Q, pins for the variables the step would take
out of the box.

The reference for every step is the equality-constrained quadratic's KKT system solved
here by NumPy (``np.linalg.solve`` of the bordered matrix), and the objective
gᵀΔ + ½ΔᵀQΔ computed here."""

import numpy as np
import pytest

from margin_opt.solvers.smo import polish as pol


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


def _signs(n, seed=0):
    return np.where(np.random.default_rng(seed).random(n) < 0.5, 1.0, -1.0)


def _bordered_step(Q, g, y):
    """Δ of min gᵀΔ + ½ΔᵀQΔ s.t. yᵀΔ = 0, by NumPy's dense solve of the KKT system."""
    k = g.size
    A = np.zeros((k + 1, k + 1))
    A[:k, :k], A[:k, k], A[k, :k] = Q, y, y
    return np.linalg.solve(A, np.r_[-g, 0.0])[:k]


@pytest.mark.parametrize("equality", [True, False])
def test_step_inside_the_box_solves_the_kkt_system(equality):
    n = 200
    Q = _matrix(n, 1e3)
    y = _signs(n)
    alpha = np.full(n, 0.5)
    g = 1e-4 * np.random.default_rng(1).standard_normal(n)   # a short step: no pin
    face = pol.Face(np.arange(n), Q.copy())
    new = pol.newton_step(face, g, alpha, np.ones(n), y, equality)
    ref = _bordered_step(Q, g, y) if equality else np.linalg.solve(Q, -g)
    assert new is not None
    # to the damping's effect, δ·cond(Q) = 1e-12 · 1e3 relative
    np.testing.assert_allclose(new - alpha, ref, rtol=0, atol=1e-8 * np.abs(ref).max())
    if equality:
        assert abs(y @ (new - alpha)) <= 1e-14


@pytest.mark.parametrize("equality", [True, False])
def test_step_leaving_the_box_is_pinned_inside_it(equality):
    # a long step: variables pinned at the bounds they cross (or the ratio test); the
    # answer lies in the box, keeps yᵀΔ = 0 and decreases the objective, and no more
    # than the unconstrained minimizer does
    n = 150
    Q = _matrix(n, 1e2, seed=2)
    y = _signs(n, seed=2)
    rng = np.random.default_rng(3)
    alpha = rng.uniform(0.1, 0.9, n)
    upper = np.ones(n)
    g = rng.standard_normal(n)
    face = pol.Face(np.arange(Q.shape[0]), Q.copy())
    new = pol.newton_step(face, g, alpha, upper, y, equality)
    assert new is not None
    assert np.all(new >= 0) and np.all(new <= upper)
    assert np.any((new == 0) | (new == upper))           # some variables at a bound
    step = new - alpha
    if equality:
        assert abs(y @ step) <= 1e-12 * n
    decrease = g @ step + 0.5 * step @ Q @ step
    full = _bordered_step(Q, g, y) if equality else np.linalg.solve(Q, -g)
    assert g @ full + 0.5 * full @ Q @ full <= decrease < 0


def test_no_step_at_the_minimizer():
    # at the minimizer on the free set (∇_F = ν y_F: nothing to gain along yᵀΔ = 0)
    # the step does not decrease the objective and is dropped (None)
    n = 100
    Q = _matrix(n, 1e2, seed=4)
    y = _signs(n, seed=4)
    face = pol.Face(np.arange(n), Q.copy())
    assert pol.newton_step(face, 0.37 * y, np.full(n, 0.5), np.ones(n), y, True) is None


def test_indefinite_block_has_no_face():
    # an eigenvalue of −1e-3 (an indefinite kernel, e.g. sigmoid): no factor of
    # Q + δI, no face (the driver then takes no step)
    n = 120
    Q = _matrix(n, 1e3, seed=5, last=-1e-3)
    with pytest.raises(np.linalg.LinAlgError):
        pol.Face(np.arange(n), Q.copy())


@pytest.mark.parametrize("equality", [True, False])
def test_a_reused_face_steps_as_a_new_one(equality):
    # a face of 150 variables extended by 20 (the block Cholesky update) has the factor
    # of the 170 computed at once; with 12 of its variables pinned, its step is the step
    # of a new face on the other 158 (the next polish reuses the last one's factor)
    n = 170
    Q = _matrix(n, 1e3, seed=7)
    y = _signs(n, seed=7)
    rng = np.random.default_rng(8)
    g = rng.standard_normal(n)
    alpha = rng.uniform(0.2, 0.8, n)
    face = pol.Face(np.arange(150), Q[:150, :150].copy())
    face.extend(np.arange(150, n), Q[:150, 150:].copy(), Q[150:, 150:].copy())
    whole = pol.Face(np.arange(n), Q.copy())
    np.testing.assert_allclose(face.L, whole.L, rtol=1e-10, atol=1e-12)
    out = np.zeros(n, bool)
    out[rng.choice(n, 12, replace=False)] = True
    reused = pol.newton_step(face, g, alpha, np.ones(n), y, equality, out)
    keep = ~out
    fresh = pol.newton_step(pol.Face(np.flatnonzero(keep), Q[np.ix_(keep, keep)]), g[keep],
                            alpha[keep], np.ones(keep.sum()), y[keep], equality)
    assert reused is not None and fresh is not None
    np.testing.assert_array_equal(reused[out], alpha[out])
    np.testing.assert_allclose(reused[keep], fresh, rtol=1e-8, atol=1e-10)


def test_max_free_fits_a_quarter_of_the_budget():
    # |F|² doubles of Q_FF within a quarter of the cache budget, and MAX_FREE at most
    for budget in (2.0 ** 20, 200 * 2.0 ** 20, 4 * 2.0 ** 30):
        k = pol.max_free(budget)
        assert k <= pol.MAX_FREE
        assert k * k * 8 <= budget / 4 and (k == pol.MAX_FREE or (k + 1) ** 2 * 8 > budget / 4)
    assert pol.max_free(0.0) == 0
