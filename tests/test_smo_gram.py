"""SMO on a kernel matrix at hand (``qp.gram``: a precomputed kernel, or a one-vs-one
pair's block copied out of one shared matrix) and the one-vs-one pairs solved by
``solve_smo`` on worker threads (estimators/ovo.py)."""

import dataclasses

import numpy as np
import pytest
from sklearn.datasets import load_digits
from sklearn.metrics.pairwise import pairwise_kernels
from sklearn.preprocessing import StandardScaler
from test_smo import assert_kkt, cvxpy_optimum, data, svc_qp

from margin_opt import SVC
from margin_opt.exceptions import ConvergenceWarning
from margin_opt.kernels import make_kernel
from margin_opt.parallel import ThreadPolicy, use_policy
from margin_opt.solvers.smo import SMOOptions, solve_smo


def _with_gram(qp):
    return dataclasses.replace(qp, gram=qp.kernel.gram(qp.X))


@pytest.mark.parametrize("tol, gap_tol", [(1e-3, None), (1e-6, 9e-7), (1e-8, 9e-9),
                                          (1e-2, 1e-7)])   # the gap test tightens m − M
@pytest.mark.parametrize("weighted", [False, True])
def test_given_kernel_matrix_is_the_rows_answer_and_the_cvxpy_optimum(tol, gap_tol, weighted):
    # the kernel matrix given (qp.gram) or rows computed from X: the same stopping rule
    # and gap test, the same number of iterations (the values differ in the last bits
    # only), the KKT conditions at tol from Qα + p afresh, and the optimum of the exact
    # dual (per-point bounds, some 0, when weighted)
    X, y = data(150, seed=3)
    C = np.where(np.arange(150) % 7 == 0, 0.0, 2.0) + np.arange(150) % 3 if weighted else 1.0
    rows = svc_qp(X, y, C=C, gamma=0.4)
    qp = _with_gram(rows)
    ref = solve_smo(rows, tol=tol, gap_tol=gap_tol, polish=False)
    res = solve_smo(qp, tol=tol, gap_tol=gap_tol, polish=False)
    assert res.status == ref.status == "optimal" and res.cache["layout"] == "matrix"
    assert res.nit == ref.nit > 0
    np.testing.assert_allclose(res.x, ref.x, rtol=0, atol=1e-10)
    assert abs(res.fun - ref.fun) <= 1e-12 * abs(ref.fun)
    assert_kkt(qp, res, tol)
    if gap_tol is not None:
        assert res.duality_gap <= gap_tol
    if gap_tol is not None and gap_tol <= 1e-6:
        fun, _ = cvxpy_optimum(qp)
        assert abs(res.fun - fun) <= 1e-6 * max(1.0, abs(fun))


@pytest.mark.parametrize("weighted", [False, True])
def test_newton_step_on_the_free_set_reaches_the_cvxpy_optimum(weighted):
    # SMO to 1e-3, a Newton step on the free set (its block of Q read from the matrix),
    # SMO on to tol: the same stopping rule, fewer iterations, the optimum of the exact
    # dual; the step keeps α in the box and yᵀα = 0, and ∇ exact (assert_kkt recomputes it).
    # 150 variables: by default a polish does not pay here (polish.worth_it), so its
    # fixed cost is set to 0; with the defaults SMO's tail runs to tol, as without polish
    X, y = data(150, seed=3)
    C = np.where(np.arange(150) % 7 == 0, 0.0, 2.0) + np.arange(150) % 3 if weighted else 1.0
    qp = _with_gram(svc_qp(X, y, C=C, gamma=0.4))
    eager = SMOOptions(polish_overhead=0)
    plain = solve_smo(qp, tol=1e-8, gap_tol=9e-9, polish=False, options=eager)
    res = solve_smo(qp, tol=1e-8, gap_tol=9e-9, options=eager)
    assert res.status == "optimal" and res.n_polish >= 1 and plain.n_polish == 0
    assert res.nit < plain.nit
    assert_kkt(qp, res, 1e-8)
    fun, _ = cvxpy_optimum(qp)
    assert abs(res.fun - fun) <= 1e-9 * max(1.0, abs(fun))
    assert res.fun <= plain.fun + 1e-9 * abs(plain.fun)
    at_1e3 = solve_smo(qp, tol=1e-3, options=eager)   # no polish at LIBSVM's tolerance
    assert at_1e3.n_polish == 0
    default = solve_smo(qp, tol=1e-8, gap_tol=9e-9)    # too small to pay: no polish
    assert default.status == "optimal" and default.n_polish == 0
    assert abs(default.fun - fun) <= 1e-9 * max(1.0, abs(fun))


def test_max_iter_warns_on_a_given_matrix():
    X, y = data(80)
    with pytest.warns(ConvergenceWarning, match="max_iter=3"):
        res = solve_smo(_with_gram(svc_qp(X, y)), max_iter=3)
    assert res.status == "max_iter" and res.nit == 3 and not res.success


@pytest.mark.parametrize("name, params", [
    ("rbf", dict(gamma=0.3)),
    ("linear", {}),            # Q_FF singular at the polish (found: |yᵀα| = 1.6e-5)
    ("poly", dict(gamma=0.5, degree=3, coef0=1.0))])
def test_class_blocks_against_scikit_learn(name, params):
    # the one-vs-one pairs' kernel blocks (ovo.ClassBlocks: one matrix of the data
    # grouped by class, each pair's block copied out): exactly symmetric, scikit-learn's
    # values; rbf far from the origin, with duplicated points, gives exactly 1; SMO on
    # the block reaches the optimum of SMO on the pair's rows (to the kernel values'
    # rounding far from the origin)
    from margin_opt.estimators.ovo import ClassBlocks

    g = np.random.default_rng(2)
    X = g.normal(size=(70, 4)) + (1e3 if name == "rbf" else 0.0)
    X[60:] = X[20:30]
    kernel = make_kernel(name, X, **params)
    members = [np.arange(0, 25), np.arange(25, 45), np.arange(45, 70)]
    blocks = ClassBlocks(X, members, kernel)
    for i, j in [(0, 1), (0, 2), (1, 2)]:
        B = blocks.pair(i, j)
        rows = np.r_[members[i], members[j]]
        np.testing.assert_array_equal(B, B.T)
        ref = pairwise_kernels(X[rows], metric=name, **params)
        np.testing.assert_allclose(B, ref, rtol=1e-9, atol=1e-9 * np.abs(ref).max())
        if name == "rbf":
            same = np.all(X[rows][:, None] == X[rows][None], axis=2)
            assert np.all(B[same] == 1.0)
        qp = svc_qp(X[rows], np.r_[np.ones(members[i].size), -np.ones(members[j].size)],
                    kernel=name, **params)
        on_block = solve_smo(dataclasses.replace(qp, gram=B), tol=1e-9)
        on_rows = solve_smo(qp, tol=1e-9)
        assert on_block.status == on_rows.status == "optimal"
        for res in (on_block, on_rows):
            assert abs(qp.y @ res.x) <= 1e-9 * (1 + res.x.sum())
        assert abs(on_block.fun - on_rows.fun) <= 1e-8 * abs(on_rows.fun)


def _spy_batch(monkeypatch):
    """Records the compiled batch's calls (its thread count, its settled pairs) and the
    pairs the whole driver ran (``_pair_run``)."""
    from margin_opt.estimators import ovo

    seen = {"threads": [], "settled": 0, "driver": []}
    batch, run = ovo.solve_pairs, ovo._pair_run

    def spied_batch(source, options, reading, threads):
        answers = batch(source, options, reading, threads)
        seen["threads"].append(threads)
        seen["settled"] += sum(a is not None for a in answers)
        return answers

    def spied_run(blocks, lay, *rest):
        seen["driver"].append(lay.pair)
        return run(blocks, lay, *rest)

    monkeypatch.setattr(ovo, "solve_pairs", spied_batch)
    monkeypatch.setattr(ovo, "_pair_run", spied_run)
    return seen


def _same_fit(a, b):
    np.testing.assert_array_equal(a.support_, b.support_)
    np.testing.assert_array_equal(a.dual_coef_, b.dual_coef_)
    np.testing.assert_array_equal(a.intercept_, b.intercept_)
    np.testing.assert_array_equal(a.n_iter_, b.n_iter_)


def test_one_vs_one_pairs_are_those_of_the_whole_solve_path(monkeypatch):
    # the pairs' first phase in the compiled batch (kernel block + SMO + intercept +
    # gap test + the certificate's reading, then pair_solution or solve_path.finish)
    # against the whole solve path per pair (solver_options outside ovo.GRAM_OPTIONS
    # send every pair through it): with the same options the fit bit for bit.  Pairs
    # of ~100 samples: a polish does not pay (polish.worth_it), so with the defaults no
    # pair polishes, and the fit is the one without the polish, bit for bit, at tol
    # 1e-3 and 1e-6; every pair settles in the batch (its gap test tightening m − M as
    # the driver does)
    X, y = load_digits(return_X_y=True)
    X = StandardScaler().fit_transform(X)[:500]
    y = y[:500]
    seen = _spy_batch(monkeypatch)
    for tol in (1e-3, 1e-6):
        seen.update(settled=0, driver=[])
        fast = SVC(tol=tol).fit(X, y)
        settled, driver = seen["settled"], len(seen["driver"])
        assert settled == 45 and driver == 0
        same = SVC(tol=tol, solver_options={"polish": True}).fit(X, y)
        path = SVC(tol=tol, solver_options={"polish": False}).fit(X, y)
        assert (seen["settled"], len(seen["driver"])) == (settled, driver)   # no batch
        assert fast.certificate_.ok and len(fast.certificate_) == 45
        sol = fast.solutions_[7]
        assert sol.status == "optimal" and sol.method == "smo" and sol.certificate.ok
        assert sol.timings["total"] > 0
        assert all(s.raw.n_polish == 0 for s in fast.solutions_)
        for other in (same, path):
            _same_fit(fast, other)
    # pairs of ~1200 samples (all of digits, three classes): there the polish pays at
    # 1e-6 with the defaults, so the first phase ends at a polish stop and the whole
    # driver solves each pair; the fit is the solve path's with the same options bit
    # for bit, and the optimum without the polish to the tolerance, in fewer iterations
    X, y = load_digits(return_X_y=True)
    X, y = StandardScaler().fit_transform(X), y % 3
    seen.update(settled=0, driver=[])
    fast = SVC(tol=1e-6).fit(X, y)
    assert seen["settled"] == 0 and len(seen["driver"]) == 3
    same = SVC(tol=1e-6, solver_options={"polish": True}).fit(X, y)
    path = SVC(tol=1e-6, solver_options={"polish": False}).fit(X, y)
    assert fast.certificate_.ok and len(fast.certificate_) == 3
    assert all(s.raw.n_polish > 0 for s in fast.solutions_)
    _same_fit(fast, same)
    np.testing.assert_allclose(fast.dual_coef_, path.dual_coef_, atol=1e-5)
    np.testing.assert_allclose(fast.intercept_, path.intercept_, atol=1e-5)
    assert fast.n_iter_.sum() < path.n_iter_.sum()


@pytest.mark.parametrize("kernel", ["rbf", "linear"])
def test_one_vs_one_pairs_do_not_depend_on_the_threads_or_the_batch(monkeypatch, kernel):
    # each pair runs on one thread: one, two or three threads give the same fit bit for
    # bit; and a pair left to the driver (here: every pair, as if none settled in the
    # batch) is the batch's answer bit for bit (the batch is the driver's first phase)
    from margin_opt.estimators import ovo

    X, y = load_digits(return_X_y=True)
    X = StandardScaler().fit_transform(X)[:400]
    y = y[:400] % 5
    seen = _spy_batch(monkeypatch)
    fits = []
    for workers in (1, 2, 3):
        with use_policy(ThreadPolicy(pair_workers=workers)):
            fits.append(SVC(kernel=kernel, C=0.1).fit(X, y))
    assert seen["threads"] == [1, 2, 3]
    assert seen["settled"] == 30 and not seen["driver"]
    with use_policy(ThreadPolicy(max_threads=1)):
        fits.append(SVC(kernel=kernel, C=0.1).fit(X, y))
    assert seen["threads"][-1] == 1
    batch = ovo.solve_pairs
    monkeypatch.setattr(ovo, "solve_pairs",
                        lambda *args: [None] * len(batch(*args)))
    del seen["driver"][:]
    fits.append(SVC(kernel=kernel, C=0.1).fit(X, y))
    assert len(seen["driver"]) == 10
    for other in fits[1:]:
        assert other.certificate_.ok
        _same_fit(fits[0], other)


def test_one_vs_one_pair_stopped_short_is_repaired_and_certified():
    # a pair whose run stops at max_iter goes through the solve path's repairs
    # (finish → _certified with fallback): the fit is certified, the attempts recorded,
    # and the first run's ConvergenceWarning is not issued
    import warnings

    X, y = load_digits(return_X_y=True)
    X = StandardScaler().fit_transform(X)[:150]
    y = y[:150] % 3
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        est = SVC(solver_options={"max_iter": 4}).fit(X, y)
    assert est.certificate_.ok
    for sol in est.solutions_:
        assert sol.attempts[0]["status"] == "max_iter"
        assert "fallback" in " ".join(sol.certificate.notes)


def test_combination_reads_rows_of_a_symmetric_matrix():
    # the pairs' blocks are exactly symmetric: Kβ over few nonzeros reads K's rows
    # (contiguous) instead of its columns, the same values as the whole product
    from margin_opt.problems.kernel_data import KernelData

    X, _ = data(200, seed=4)
    data_ = KernelData(X, "rbf", gamma=0.3)
    K = pairwise_kernels(X, metric="rbf", gamma=0.3)
    K = np.triu(K) + np.triu(K, 1).T                     # exactly symmetric
    beta = np.zeros(200)
    beta[[3, 50, 51, 120, 199]] = [0.5, -1.0, 2.0, -0.25, 1.0]
    for symmetric in (False, True):
        data_.use_gram(K, symmetric=symmetric)
        f = data_.combination(beta)
        np.testing.assert_allclose(f, K @ beta, rtol=1e-14, atol=1e-14)
    assert data_._gram_symmetric
    data_.use_gram(K)                                     # a new matrix: not vouched for
    assert not data_._gram_symmetric


def test_one_vs_one_hard_margin_keeps_the_separability_test():
    # a hard-margin pair is not run on the workers: the solve path's separability LP
    # decides first, and non-separable classes are NotSeparableError
    from sklearn.datasets import load_iris

    from margin_opt.exceptions import NotSeparableError

    X, y = load_iris(return_X_y=True)
    with pytest.raises(NotSeparableError, match="Farkas"):
        SVC(C=np.inf, kernel="linear").fit(X, y)
    X3 = np.r_[X[y == 0], X[y == 0] + 10, X[y == 0] + 20]
    est = SVC(C=np.inf, kernel="linear").fit(X3, np.repeat([0, 1, 2], 50))
    assert est.certificate_.ok and est.score(X3, np.repeat([0, 1, 2], 50)) == 1.0


def test_newton_step_keeps_the_equality_on_a_rank_deficient_kernel():
    # a linear kernel with more free points than features: Q_FF is singular, and
    # y_FᵀΔ = 0 must still hold after the step (review finding of the earlier solver:
    # |yᵀα| up to 1.7e-6 before the step was projected back onto it; the compiled
    # solver's first polish.newton_step: up to 3e-6 again).  The step itself is checked, from
    # SMO's point at 1e-3 (where the polish takes it): yᵀα kept to 1e-12, α in the box,
    # the dual not increased.  The whole solve is then held to what its status
    # guarantees: "optimal" is the cvxpy optimum and KKT at tol; a run that stops short
    # says so.  (Which seeds SMO's tail finishes depends on the rounding of K = XXᵀ:
    # no one seed's status is asserted.)
    import warnings

    from sklearn.datasets import make_classification

    from margin_opt.solvers.smo.polish import Face, newton_step

    worst = 0.0
    optimal = singular = taken = 0
    for seed in range(12):
        X, y = make_classification(175, 4 + seed % 6, n_informative=3, n_redundant=0,
                                   flip_y=0.1, random_state=seed)
        X = StandardScaler().fit_transform(X)
        qp = _with_gram(svc_qp(X, y, C=0.12 + seed, kernel="linear"))
        yv, C = qp.y, qp.upper
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)   # where it stalls
            at_1e3 = solve_smo(qp, tol=1e-3, polish=False)
        alpha = at_1e3.x.copy()
        F = np.flatnonzero((alpha > 0) & (alpha < C))
        singular += F.size > X.shape[1]                  # Q_FF singular: rank ≤ d < |F|
        face = Face(F, qp.q_rows(F)[:, F].copy())
        new = newton_step(face, at_1e3.grad[F], alpha[F], C[F], yv[F], True)
        if new is not None:
            taken += 1
            worst = max(worst, abs(yv[F] @ (new - alpha[F])) / max(1.0, alpha.max()))
            assert np.all(new >= 0) and np.all(new <= C[F])
            moved = alpha.copy()
            moved[F] = new
            assert qp.objective(moved) <= at_1e3.fun + 1e-12 * abs(at_1e3.fun)

        with warnings.catch_warnings(record=True) as record:
            warnings.simplefilter("always", ConvergenceWarning)
            res = solve_smo(qp, tol=1e-6, gap_tol=9e-7)
        assert abs(yv @ res.x) <= 1e-9 * (1 + res.x.sum())
        assert np.all(res.x >= 0) and np.all(res.x <= C)
        if res.status == "optimal":
            optimal += 1
            assert_kkt(qp, res, 1e-6)
            # the relative duality gap ≤ gap_tol bounds the distance to the optimum
            fun, _ = cvxpy_optimum(qp)
            assert abs(res.fun - fun) <= 9e-7 * max(1.0, abs(fun))
        else:
            assert res.status == "stalled" and not res.success and record
    assert worst <= 1e-12
    assert singular >= 8 and taken >= 8 and optimal >= 9


def test_one_vs_one_linear_pairs_certify_without_repairs():
    # the review's reproducer: a linear 3-class fit whose pair (0, 2) failed
    # dual_residual after the Newton step and went through a repair
    from sklearn.datasets import make_classification

    X, y = make_classification(525, 7, n_informative=3, n_redundant=0, n_classes=3,
                               flip_y=0.1, random_state=0)
    X = StandardScaler().fit_transform(X)
    est = SVC(kernel="linear", C=0.12).fit(X, y)
    assert est.certificate_.ok
    assert not any(s.attempts for s in est.solutions_)      # no pair repaired


def test_one_vs_one_uncertified_pairs_stopped_short_warn():
    # without a certificate nothing repairs a pair that stops at max_iter: the fit's
    # ConvergenceWarning is issued, once for the pairs (as scikit-learn's), saying how many
    X, y = load_digits(return_X_y=True)
    X = StandardScaler().fit_transform(X)[:150]
    with pytest.warns(ConvergenceWarning, match=r"max_iter=4.*\(3 of 3 problems\)") as record:
        est = SVC(certify=False, solver_options={"max_iter": 4}).fit(X, y[:150] % 3)
    assert sum(issubclass(w.category, ConvergenceWarning) for w in record) == 1
    assert [s.status for s in est.solutions_] == ["max_iter"] * 3


@pytest.mark.parametrize("options, match", [({"wss": "bogus"}, "wss"),
                                            ({"gap_tol": -1.0}, "gap_tol"),
                                            ({"max_iter": 0}, "max_iter"),
                                            ({"max_iter": 2.5}, "max_iter")])
def test_bad_options_raise_on_a_matrix_and_in_the_pairs(options, match):
    X, y = data(60)
    qp = _with_gram(svc_qp(X, y))
    with pytest.raises(ValueError, match=match):
        solve_smo(qp, **options)
    Xd, yd = load_digits(return_X_y=True)
    with pytest.raises(ValueError, match=match):
        SVC(solver_options=options).fit(StandardScaler().fit_transform(Xd)[:90], yd[:90] % 3)
