"""One-vs-one pairs solved side by side (estimators.ovo: each pair's kernel block copied
out of one shared matrix, solved by ``solve_smo`` and read by
:func:`margin_opt.kkt.dual_qp_reading` on a worker thread, then turned into its Solution
and certificate by :func:`margin_opt.problems.svm_batch.pair_solution` where the
reading is its whole story): each pair's certificate is the solve path's certificate of
the same answer, it fails on a wrong answer as the solve path's does, and a pair whose
reading or certificate fails is repaired by the solve path."""

import numpy as np
import pytest
from sklearn.datasets import load_digits
from sklearn.svm import SVC as SkSVC

from margin_opt import SVC, _core
from margin_opt.estimators import ovo
from margin_opt.kernels import make_kernel
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
def test_pair_certificates_are_the_solve_paths(digits, kernel, weighted):
    # every pair read on its worker thread and made by svm_batch.pair_solution (none
    # through the solve path, ovo.certify_result), its certificate equal to
    # SVMProblem.certify of the same answer on the pair's own problem: the same checks,
    # tolerances, table counts and quantities (with zero and unequal sample weights:
    # per-point bounds, points fixed at 0), the values to rounding; the Solution's too;
    # and the fit LIBSVM's
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
        assert cert.ok and ref.ok and sol.certificate is cert and not sol.attempts
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


def _reading(K, yp, alpha, b, tol=1e-6, upper=None):
    m = yp.size
    upper = np.ones(m) if upper is None else upper
    dec, xi, num = np.empty(m), np.empty(m), np.empty(len(READING))
    dual_qp_reading(K, yp, -np.ones(m), upper, alpha, b, tol, category_threshold(tol),
                    1e-12, dec, xi, num)
    return dec, xi, num


def test_pair_certificate_fails_on_wrong_answers(digits):
    # the optimum of a pair certifies; answers that are wrong each way fail, each on the
    # checks that its error breaks, and the reading's certificate (pair_solution) fails
    # them on the checks that SVMProblem.certify fails them on (its table's
    # contradictions make clean() False: the solve path reads those)
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
    wrong = {"optimum": (alpha, b, set()),
             "b shifted": (alpha, b + 1e-3, {"complementary_slackness"}),
             "mass moved": (moved, b, {"complementary_slackness", "mvp_gap"}),
             "scaled": (0.9 * alpha, b, {"duality_gap", "mvp_gap"}),
             "equality broken": (np.where(np.arange(alpha.size) == free[0], alpha + 1e-3,
                                          alpha), b, {"dual_residual"})}
    res = OptimizeResult(status="optimal", nit=1, message="", timings={"total": 0.0})
    for name, (a, bb, breaks) in wrong.items():
        ref = problem.certify(problem.solution_from_standard(a, bb), tol=1e-6)
        assert ref.ok == (name == "optimum"), name
        assert breaks <= set(ref.failed()), name
        dec, xi, num = _reading(K, yp, a, bb)
        assert clean(res, a, num, False)
        got, cert = pair_solution(a, yp, -np.ones(a.size), bb, dec, xi, num, res, tol=1e-6)
        bad = num[[READING.index(k) for k in ("bad_zero", "bad_free", "bad_at_upper")]]
        assert bool(cert.ok and not bad.any()) == ref.ok, name
        assert set(cert.failed()) == {f for f in ref.failed() if not f.startswith("table")}
        if name != "optimum":
            assert not clean(res, a, num, True) or not cert.ok
        assert got.certificate is cert


def _corrupting(batch, index):
    """ovo.solve_pairs with the answer of pair number ``index`` made wrong after its run
    (the multipliers scaled by 0.8: those at C now read as free with y f < 1), and read
    again on its kernel block, as the batch reads an answer."""

    def corrupt(source, options, reading, threads):
        answers = batch(source, options, reading, threads)
        res, _ = answers[index]
        i, j = source.pairs[index]
        ni, nj = source.sizes[i], source.sizes[j]
        K = np.empty((ni + nj, ni + nj))
        source.classes.pair(int(i), int(j), K)
        start = np.r_[0, np.cumsum(source.sizes)]
        upper = np.r_[source.upper[start[i]:start[i + 1]], source.upper[start[j]:start[j + 1]]]
        res.x = 0.8 * res.x
        answers[index] = (res, _reading(K, np.r_[np.ones(ni), -np.ones(nj)], res.x,
                                        float(res.b), tol=reading[0], upper=upper))
        return answers

    return corrupt


@pytest.mark.parametrize("trust_reading", [False, True])
def test_pair_failing_its_certificate_is_repaired_by_the_solve_path(digits, monkeypatch,
                                                                    trust_reading):
    # a pair whose answer is wrong (here: corrupted after its run on the worker, and
    # read again) is not clean (its table contradicts the categories), or, where the
    # reading is taken as clean (trust_reading: clean() forced True), fails its
    # certificate; the solve path then repairs it (its attempts say so), and the fit is
    # the one of the untouched runs, every pair certified
    X, y = digits
    ref = SVC(gamma=0.05).fit(X, y)
    failed, repaired = [], []
    read, certify = ovo.clean, ovo.certify_result

    def spy(res, alpha, num, cert_on):
        verdict = read(res, alpha, num, cert_on)
        if not verdict:
            failed.append(dict(zip(READING, num, strict=True)))
        return True if trust_reading else verdict

    def through_path(est, problem, *rest):
        repaired.append(problem)
        return certify(est, problem, *rest)

    monkeypatch.setattr(ovo, "solve_pairs", _corrupting(ovo.solve_pairs, 3))
    monkeypatch.setattr(ovo, "clean", spy)
    monkeypatch.setattr(ovo, "certify_result", through_path)
    est = SVC(gamma=0.05).fit(X, y)
    # the multipliers at C, now at 0.8 C, read as free with y f < 1: the table fails
    assert len(failed) == 1 and failed[0]["bad_free"] > 0
    assert len(repaired) == 1 and repaired[0].y.size == est.solutions_[3].alpha.size
    first = est.solutions_[3].attempts[0]
    assert first["status"] == "optimal" and "table[0 < α < C]" in first["failed"]
    assert est.certificate_.ok and est.solutions_[3].certificate.ok
    assert "fallback" in " ".join(est.solutions_[3].certificate.notes)
    assert not any(s.attempts for p, s in enumerate(est.solutions_) if p != 3)
    np.testing.assert_array_equal(est.support_, ref.support_)
    np.testing.assert_allclose(est.dual_coef_, ref.dual_coef_, atol=1e-5)
    np.testing.assert_allclose(est.intercept_, ref.intercept_, atol=1e-5)


@pytest.mark.parametrize("name", ["rbf", "linear", "poly"])
def test_pair_blocks_are_the_pairs_kernel_matrices(digits, name):
    """ClassBlocks.pair (computed by the core from the classes' rows, or copied out of
    the whole matrix for sparse data) is the kernel matrix of the pair's rows to
    rounding, exactly symmetric; the core refuses what does not fit."""
    import scipy.sparse as sp

    from margin_opt.kernels import engine_gram

    X, y = digits
    members = [np.flatnonzero(y == c) for c in range(5)]
    kernel = make_kernel(name, X)
    dense = ovo.ClassBlocks(X, members, kernel)
    sparse = ovo.ClassBlocks(sp.csr_matrix(X), members, kernel)
    assert dense.K is None and sparse.K is not None
    K = engine_gram(kernel, X[np.concatenate(members)])
    for i, j in ovo.class_pairs(5):
        r = np.r_[dense.start[i]:dense.stop[i], dense.start[j]:dense.stop[j]]
        B = dense.pair(i, j)
        np.testing.assert_array_equal(B, B.T)
        np.testing.assert_allclose(B, K[np.ix_(r, r)], rtol=1e-13, atol=1e-13)
        np.testing.assert_array_equal(sparse.pair(i, j), sparse.K[np.ix_(r, r)])
    with pytest.raises(ValueError):
        _core.pair_block(sparse.K, 0, 10, X.shape[0] - 5, 10, np.empty((20, 20)))
    with pytest.raises(ValueError):
        _core.pair_block(sparse.K, 0, 10, 20, 10, np.empty((19, 19)))
    with pytest.raises(ValueError):
        dense._classes.pair(0, 5, np.empty((10, 10)))
    with pytest.raises(ValueError):
        dense._classes.pair(0, 1, np.empty((10, 10)))
