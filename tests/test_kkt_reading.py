"""The compiled reading of a C-SVC dual (:func:`margin_opt.kkt.dual_qp_reading`,
src/core/reading.cpp) against its NumPy statement (:func:`_numpy_reading`, through
:func:`margin_opt.kkt._residual_pass`, the solve path's per-variable pass): the same
decision values, slacks and numbers to rounding, the same counts, on random answers with
multipliers at 0 and at C, infinite and zero bounds, and non-finite answers; and the
core's checks of the shapes (a ValueError, never a read out of bounds)."""

import numpy as np
import pytest

from margin_opt import _core, kkt
from margin_opt.kkt import READING, category_threshold, dual_qp_reading
from margin_opt.problems.base import SV_THRESHOLD


def _numpy_reading(K, y, p, up, alpha, b, tol, tau, sv_threshold):
    """(decision, xi, num) of :func:`dual_qp_reading`, in NumPy."""
    m = y.shape[0]
    beta = y * alpha
    nz = np.flatnonzero(beta)
    f0 = beta[nz] @ K[nz] if nz.size else np.zeros(m)
    quad = float(beta @ f0)
    fin = np.isfinite(up)
    scale = max(0.0, float(np.max(up[fin], initial=0.0)))
    decision = f0 + b
    xi = np.maximum(0.0, -(y * decision + p))
    s, zero, free, at_u, r = kkt._residual_pass(y, p, up, None, alpha, xi, decision, f0,
                                                np.zeros(m), tau, max(1.0, scale), True)
    support = alpha != 0.0
    negligible = 0
    if scale > 0.0:
        with np.errstate(invalid="ignore"):
            keep = (alpha > sv_threshold * scale) & (alpha / scale >= np.maximum(0.0, s))
        negligible = int(np.count_nonzero(support & ~keep))
    num = np.empty(len(READING))
    num[:4] = r
    num[4] = abs(float(y @ alpha))
    num[5] = quad
    num[6] = float(up[fin] @ xi[fin])
    with np.errstate(invalid="ignore"):
        num[7:] = (np.count_nonzero(zero), np.count_nonzero(free), np.count_nonzero(at_u),
                   np.count_nonzero(support), np.count_nonzero(zero & (s < -tol)),
                   np.count_nonzero(free & (np.abs(s) > tol)),
                   np.count_nonzero(at_u & (s > tol)), negligible)
    return decision, xi, num


def _case(rng, m, kind):
    Z = rng.standard_normal((m, 3))
    K = np.exp(-0.5 * ((Z[:, None, :] - Z[None, :, :]) ** 2).sum(-1))
    K = np.triu(K) + np.triu(K, 1).T                 # exactly symmetric
    y = np.where(rng.random(m) < 0.5, 1.0, -1.0)
    up = rng.uniform(0.5, 2.0, m)
    if kind == "inf":
        up[:] = np.inf
    elif kind == "mixed":
        up[rng.random(m) < 0.2] = np.inf
        up[rng.random(m) < 0.2] = 0.0
    elif kind == "zero":
        up[:] = 0.0
    alpha = rng.uniform(0.0, 1.0, m) * np.where(np.isfinite(up), up, 3.0)
    pick = rng.random(m)
    alpha[pick < 0.3] = 0.0                              # at 0
    at_c = (pick > 0.7) & np.isfinite(up)
    alpha[at_c] = up[at_c]                               # at C
    alpha[up == 0] = 0.0
    alpha[rng.random(m) < 0.05] = 1e-14                  # negligible ones
    if kind == "nan":
        alpha[0] = np.nan
    b = float(rng.standard_normal())
    return K, y, -np.ones(m), up, alpha, b


@pytest.mark.parametrize("kind", ["box", "inf", "mixed", "zero", "nan"])
@pytest.mark.parametrize("m", [1, 2, 17, 60])
def test_compiled_reading_is_the_numpy_one(kind, m):
    rng = np.random.default_rng(m * 7 + len(kind))
    for _ in range(5):
        K, y, p, up, alpha, b = _case(rng, m, kind)
        for tol in (1e-3, 1.0):
            tau = category_threshold(tol)
            dec, xi, num = np.empty(m), np.empty(m), np.empty(len(READING))
            dual_qp_reading(K, y, p, up, alpha, b, tol, tau, SV_THRESHOLD, dec, xi, num)
            d0, x0, n0 = _numpy_reading(K, y, p, up, alpha, b, tol, tau, SV_THRESHOLD)
            np.testing.assert_allclose(dec, d0, rtol=1e-12, atol=1e-12)
            np.testing.assert_allclose(xi, x0, rtol=1e-12, atol=1e-12)
            np.testing.assert_allclose(num[:7], n0[:7], rtol=1e-12, atol=1e-12)
            if kind != "nan":
                # the counts at the thresholds: exact unless a value sits within rounding
                np.testing.assert_array_equal(num[7:], n0[7:])
            else:
                assert np.isnan(num[:4]).all()


def test_reading_of_all_zero_multipliers():
    m = 5
    K = np.eye(m)
    y = np.array([1.0, -1.0, 1.0, -1.0, 1.0])
    dec, xi, num = np.empty(m), np.empty(m), np.empty(len(READING))
    dual_qp_reading(K, y, -np.ones(m), np.ones(m), np.zeros(m), 0.5, 1e-3,
                    category_threshold(1e-3), SV_THRESHOLD, dec, xi, num)
    d0, x0, n0 = _numpy_reading(K, y, -np.ones(m), np.ones(m), np.zeros(m), 0.5, 1e-3,
                                category_threshold(1e-3), SV_THRESHOLD)
    np.testing.assert_array_equal(dec, d0)
    np.testing.assert_array_equal(xi, x0)
    np.testing.assert_array_equal(num, n0)


def test_reading_checks_shapes():
    m = 4
    args = [np.eye(m), np.ones(m), -np.ones(m), np.ones(m), np.zeros(m), 0.0, 1e-3, 0.0, 0.0,
            np.empty(m), np.empty(m), np.empty(len(READING))]
    assert _core.READING_SIZE == len(READING)
    for k, bad in ((0, np.eye(m + 1)), (3, np.ones(m - 1)), (9, np.empty(m + 1)),
                   (11, np.empty(len(READING) - 1))):
        wrong = list(args)
        wrong[k] = bad
        with pytest.raises(ValueError):
            dual_qp_reading(*wrong)
