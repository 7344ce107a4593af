"""One-vs-one pairs solved and read in compiled calls (estimators.ovo._batched_pairs):
each pair's certificate is the solve path's certificate of the same answer, it fails
on a wrong answer, and a pair whose reading fails is repaired by the solve path."""

import numpy as np
import pytest
from sklearn.datasets import load_digits
from sklearn.svm import SVC as SkSVC

from margin_opt import SVC
from margin_opt.estimators import ovo
from margin_opt.kkt import READING, category_threshold, dual_qp_reading
from margin_opt.problems.svm import SVMProblem
from margin_opt.problems.svm_batch import clean, pair_solution


@pytest.fixture(scope="module")
def digits():
    X, y = load_digits(return_X_y=True)
    keep = y < 5
    return X[keep][:400] / 16.0, y[keep][:400]


def _pair_problem(est, X, y, p):
    i, j = ovo.class_pairs(est.classes_.size)[p]
    rows = np.r_[np.flatnonzero(y == est.classes_[i]), np.flatnonzero(y == est.classes_[j])]
    yp = np.where(y[rows] == est.classes_[i], 1.0, -1.0)
    return SVMProblem(X[rows], yp, C=est.C, kernel="rbf", gamma=est._kernel.gamma), rows


def _values(cert):
    return {c.name: c.value for c in cert.checks}


@pytest.mark.parametrize("kernel, weighted", [("rbf", False), ("poly", False), ("rbf", True)])
def test_compiled_reading_is_the_solve_paths_certificate(digits, kernel, weighted):
    # every pair read in compiled code (no solve path), and its certificate equal to
    # SVMProblem.certify of the same answer: the same checks, tolerances, table counts
    # and quantities (with zero and unequal sample weights: per-point bounds, points
    # fixed at 0), the values to rounding; the Solution's too; and the fit LIBSVM's
    X, y = digits
    seen = []
    run = ovo.certify_result
    params = dict(gamma=0.05) if kernel == "rbf" else dict(gamma=0.1, coef0=1.0)
    weight = np.where(np.arange(y.size) % 7 == 0, 0.0, 1.0 + np.arange(y.size) % 3) \
        if weighted else np.ones(y.size)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(ovo, "certify_result", lambda *a, **k: seen.append(a) or run(*a, **k))
        est = SVC(kernel=kernel, **params).fit(X, y, sample_weight=weight)
    assert not seen and est.certificate_.ok and len(est.certificate_) == 10
    for p, (sol, cert) in enumerate(zip(est.solutions_, est.certificate_.parts.values(),
                                        strict=True)):
        i, j = ovo.class_pairs(5)[p]
        rows = np.r_[np.flatnonzero(y == i), np.flatnonzero(y == j)]
        yp = np.where(y[rows] == i, 1.0, -1.0)
        problem = SVMProblem(X[rows], yp, kernel=kernel, sample_weight=weight[rows], **params)
        ref = problem.certify(sol, tol=est.tol)
        assert cert.ok and ref.ok and sol.certificate is cert
        assert [c.name for c in cert.checks] == [c.name for c in ref.checks]
        assert [c.description for c in cert.checks] == [c.description for c in ref.checks]
        assert [c.tol for c in cert.checks] == [c.tol for c in ref.checks]
        for name, v in _values(ref).items():
            assert abs(_values(cert)[name] - v) <= 1e-12, name
        assert [(r.category, r.count) for r in cert.table] == \
            [(r.category, r.count) for r in ref.table]
        assert set(cert.quantities) == set(ref.quantities)
        for key, v in ref.quantities.items():
            assert cert.quantities[key] == pytest.approx(v, rel=1e-12, abs=1e-12), key
        again = problem.solution_from_standard(sol.alpha, sol.b)
        np.testing.assert_allclose(sol.decision, again.decision, rtol=0, atol=1e-12)
        np.testing.assert_allclose(sol.xi, again.xi, rtol=0, atol=1e-12)
        np.testing.assert_array_equal(sol.support_, again.support_)
        np.testing.assert_array_equal(sol.dual_coef, again.dual_coef)
        assert sol.primal_objective == pytest.approx(again.primal_objective, rel=1e-12)
        assert sol.dual_objective == pytest.approx(again.dual_objective, rel=1e-12)
        assert cert.title == ref.title
    # LIBSVM at a tight tolerance: the same support vectors and decision values (the
    # multipliers themselves are known only to the conditioning of K_FF: to 1e-4)
    if weighted:
        assert any("n_fixed_C0" in c.quantities for c in est.certificate_.parts.values())
    lib = SkSVC(kernel=kernel, tol=1e-8, **params).fit(X, y, sample_weight=weight)
    if not weighted:            # (scikit-learn drops the zero-weight samples first)
        np.testing.assert_array_equal(est.support_, lib.support_)
        np.testing.assert_allclose(est.dual_coef_, lib.dual_coef_, atol=1e-4)
    np.testing.assert_allclose(est.intercept_, lib.intercept_, atol=1e-5)
    np.testing.assert_allclose(est.decision_function(X), lib.decision_function(X), atol=1e-5)


def _reading(K, yp, alpha, b, tol=1e-6):
    m = yp.size
    dec, xi, num = np.empty(m), np.empty(m), np.empty(len(READING))
    dual_qp_reading(K, yp, -np.ones(m), np.ones(m), alpha, b, tol, category_threshold(tol),
                    1e-12, dec, xi, num)
    return dec, xi, num


def test_compiled_certificate_fails_on_wrong_answers(digits):
    # the optimum of a pair certifies; answers that are wrong each way fail, on the
    # checks that SVMProblem.certify fails them on
    from scipy.optimize import OptimizeResult

    X, y = digits
    est = SVC(gamma=0.05).fit(X, y)
    sol = est.solutions_[4]
    problem, _ = _pair_problem(est, X, y, 4)
    K, yp = problem.gram(), problem.y
    alpha, b = sol.alpha.copy(), sol.b
    free = np.flatnonzero((alpha > 1e-3) & (alpha < 1 - 1e-3))
    zero = np.flatnonzero(alpha == 0)
    same = zero[yp[zero] == yp[free[0]]]
    near = same[np.argmin(yp[same] * sol.decision[same])]     # the nearest to its margin
    assert 0 < yp[near] * sol.decision[near] - 1 < 0.05
    moved = alpha.copy()
    moved[free[0]] -= 0.05                     # yᵀα kept: mass moved to a point off the margin
    moved[near] += 0.05                        # (not negligible: α > s there)
    wrong = {"optimum": (alpha, b), "b shifted": (alpha, b + 1e-3),
             "mass moved": (moved, b), "scaled": (0.9 * alpha, b),
             "equality broken": (np.where(np.arange(alpha.size) == free[0],
                                          alpha + 1e-3, alpha), b)}
    res = OptimizeResult(status="optimal", nit=1, message="", timings={"total": 0.0})
    for name, (a, bb) in wrong.items():
        dec, xi, num = _reading(K, yp, a, bb)
        assert clean(res, a, num, False)
        got, cert = pair_solution(a, yp, -np.ones(a.size), bb, dec, xi, num, res, tol=1e-6)
        ref = problem.certify(problem.solution_from_standard(a, bb), tol=1e-6)
        # the compiled table's contradictions make clean() False: the solve path reads those
        bad = num[[READING.index(k) for k in ("bad_zero", "bad_free", "bad_at_upper")]]
        assert bool(cert.ok and not bad.any()) == ref.ok == (name == "optimum"), name
        assert set(cert.failed()) == {f for f in ref.failed() if not f.startswith("table")}
        if name != "optimum":
            assert not clean(res, a, num, True) or not cert.ok
        assert got.certificate is cert


def test_pair_failing_its_reading_is_repaired_by_the_solve_path(digits, monkeypatch):
    # a pair whose compiled answer is wrong (here: corrupted after the run, and read
    # again) fails its reading; the solve path then repairs it (its attempts say so),
    # and the fit is the one of the untouched run, every pair certified
    from margin_opt.solvers.smo import batch

    X, y = digits
    ref = SVC(gamma=0.05).fit(X, y)
    run = ovo.block_pairs_run
    failed = []

    def corrupt(*args):
        run(*args)
        lo, hi = args[-8:-6]
        if lo <= 3 < hi:
            (kd, diag, diag_start, class_start, pi, pj, offsets, yv, p, C) = args[:10]
            alpha, _, out, dec, xi, num = args[-6:]
            o, e = offsets[3], offsets[4]
            alpha[o:e] *= 0.8                              # a wrong answer for pair 3
            ni = class_start[pi[3] + 1] - class_start[pi[3]]
            nj = class_start[pj[3] + 1] - class_start[pj[3]]
            Kii = diag[diag_start[pi[3]]:][:ni * ni].reshape(ni, ni)
            Kjj = diag[diag_start[pj[3]]:][:nj * nj].reshape(nj, nj)
            K = batch.block_pair_matrix(kd, Kii, Kjj, class_start[pi[3]], class_start[pj[3]])
            dual_qp_reading(K, yv[o:e], p[o:e], C[o:e], alpha[o:e], out[3, 4], 1e-6,
                            category_threshold(1e-6), 1e-12, dec[o:e], xi[o:e], num[3])

    def spy(res, alpha, num, certify):
        verdict = read(res, alpha, num, certify)
        if not verdict:
            failed.append(dict(zip(READING, num, strict=True)))
        return verdict

    read = ovo.clean
    monkeypatch.setattr(ovo, "block_pairs_run", corrupt)
    monkeypatch.setattr(ovo, "clean", spy)
    est = SVC(gamma=0.05).fit(X, y)
    # the multipliers at C, now at 0.8 C, read as free with y f < 1: the table fails
    assert len(failed) == 1 and failed[0]["bad_free"] > 0
    assert est.certificate_.ok and est.solutions_[3].attempts
    assert "fallback" in " ".join(est.solutions_[3].certificate.notes)
    assert not any(s.attempts for p, s in enumerate(est.solutions_) if p != 3)
    np.testing.assert_array_equal(est.support_, ref.support_)
    np.testing.assert_allclose(est.dual_coef_, ref.dual_coef_, atol=1e-5)
    np.testing.assert_allclose(est.intercept_, ref.intercept_, atol=1e-5)
