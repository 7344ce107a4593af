"""The sequential dual method for Crammer–Singer: cvxpy's optimum, liblinear's, its certificate.

References: the cvxpy Crammer–Singer forms (Clarabel, tolerances 1e-11) and liblinear's
Solver_MCSVM_CS (``LinearSVC(multi_class="crammer_singer", fit_intercept=False)``, the
same problem: no intercept, C·sample_weight per sample).
"""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import load_iris, load_wine
from sklearn.exceptions import ConvergenceWarning
from sklearn.preprocessing import StandardScaler
from sklearn.svm import LinearSVC

from margin_opt import SVC, MulticlassSVMProblem
from margin_opt.exceptions import UnboundedError
from margin_opt.solvers.linear.crammer_singer import CSOptions, polish, solve_crammer_singer


def _blobs(n, d, k, seed, spread=1.0):
    rng = np.random.default_rng(seed)
    y = np.arange(n) % k
    X = rng.normal(size=(k, d))[y] * 1.5 + spread * rng.normal(size=(n, d))
    return X, y


CASES = {
    # name: (n, d, k, seed, C, weights, csr index dtype or None, fit_intercept)
    "dense-3": (60, 4, 3, 0, 1.0, False, None, False),
    "weights-zeros-5": (80, 6, 5, 1, 2.0, True, None, False),
    "csr32-4": (70, 10, 4, 2, 0.5, False, np.int32, False),
    "csr64-weights-8": (96, 12, 8, 3, 1.0, True, np.int64, False),
    "intercept-3": (60, 4, 3, 4, 1.0, False, None, True),
    "intercept-weights-6": (72, 5, 6, 5, 3.0, True, np.int32, True),
}


def _case(name):
    n, d, k, seed, C, weighted, csr, fi = CASES[name]
    X, y = _blobs(n, d, k, seed)
    w = None
    if weighted:
        w = np.random.default_rng(seed).uniform(0.2, 3.0, n)
        w[:3] = 0.0
    if csr is not None:
        X[np.abs(X) < 0.5] = 0.0
        X = sp.csr_matrix(X)
        X.indices = X.indices.astype(csr)
        X.indptr = X.indptr.astype(csr)
    return MulticlassSVMProblem(X, y, C=C, fit_intercept=fi, sample_weight=w)


@pytest.mark.parametrize("name", sorted(CASES))
def test_objective_equals_cvxpy_optimum(name):
    p = _case(name)
    ref = p.solve("cvxpy-dual")
    assert p.certify(ref).ok
    sol = p.solve("sequential-dual", tol=1e-7, gap_tol=1e-8)
    assert sol.certificate.ok, sol.certificate
    assert sol.status == "optimal"
    for obj in (sol.primal_objective, sol.dual_objective):
        assert abs(obj - ref.primal_objective) <= 1e-6 * ref.primal_objective
    # the weights are the certified answer's: W = Σᵢ βᵢ xᵢ, f = XW + b
    np.testing.assert_allclose(sol.decision, ref.decision, atol=1e-3 * np.abs(ref.decision).max())
    if sp.issparse(p.X):
        assert p.X.indices.dtype == np.dtype(CASES[name][6])      # input not converted


@pytest.mark.parametrize("loader", [load_iris, load_wine])
def test_agrees_with_liblinear(loader):
    X, y = loader(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    w = np.random.default_rng(0).uniform(0.5, 2.0, y.size)
    p = MulticlassSVMProblem(X, y, C=1.0, fit_intercept=False, sample_weight=w)
    sol = p.solve("sequential-dual", tol=1e-8, gap_tol=1e-9)
    ref = LinearSVC(multi_class="crammer_singer", fit_intercept=False, C=1.0, tol=1e-10,
                    max_iter=1_000_000).fit(X, y, sample_weight=w)
    W = ref.coef_.T
    F = X @ W
    P_ref = 0.5 * np.sum(W ** 2) + np.sum(w * ((F + 1 - p.Y).max(axis=1) - F[np.arange(y.size), y]))
    assert abs(sol.primal_objective - P_ref) <= 1e-7 * P_ref
    np.testing.assert_allclose(sol.variables.w, W, atol=1e-5)


def test_certificate_fails_on_a_perturbed_answer():
    p = _case("weights-zeros-5")
    sol = p.solve("sequential-dual", tol=1e-8, gap_tol=1e-9)
    assert p.certify(sol).ok
    lam = sol.variables.alpha
    # feasible multipliers moved 1 % toward the uniform split: the gap opens
    moved = 0.99 * lam + 0.01 * p.C_i[:, None] / p.n_classes
    wrong = p.solution_from_standard(moved)
    cert = p.certify(wrong)
    assert not cert.ok and "duality_gap" in cert.failed()
    # W moved off Σᵢ βᵢxᵢ: stationarity fails
    w_bad = sol.variables.w * 1.01
    cert = p.certify(p.solution_from_primal(w_bad, None, alpha=lam))
    assert not cert.ok and "dual_residual" in cert.failed()


def test_zero_weight_samples_leave_the_problem():
    X, y = _blobs(60, 4, 3, 7)
    w = np.random.default_rng(7).uniform(0.5, 2.0, 60)
    w[[0, 5, 9]] = 0.0
    keep = w > 0
    with_zeros = MulticlassSVMProblem(X, y, fit_intercept=True, sample_weight=w)
    without = MulticlassSVMProblem(X[keep], y[keep], fit_intercept=True, sample_weight=w[keep])
    ref = without.solve("cvxpy-dual").primal_objective
    for method, opts in (("cvxpy-dual", {}), ("cvxpy-primal", {}),
                         ("sequential-dual", {"tol": 1e-8, "gap_tol": 1e-9})):
        sol = with_zeros.solve(method, **opts)
        assert sol.certificate.ok, (method, sol.certificate)
        assert abs(sol.primal_objective - ref) <= 1e-6 * ref, method
        np.testing.assert_array_equal(sol.variables.alpha[~keep], 0.0)


def _item4_data():
    """Issue 35 item 4's kind: 101 samples, 4 classes separable by a planted rule,
    weights with ratio 165 and four zeros, C = 7.3e5 (box bounds up to 1.2e8)."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 3))
    F = X @ rng.normal(size=(3, 4))
    top = np.sort(F, axis=1)
    keep = (top[:, -1] - top[:, -2]) > 0.3
    X, y = X[keep][:101], F[keep][:101].argmax(axis=1)
    w = np.exp(rng.uniform(0, np.log(165), 101))
    w[[0, 1, 2, 3]] = 0.0
    w[4], w[5] = 1.0, 165.0
    return X, y, w


@pytest.mark.parametrize("fit_intercept", [True, False])
def test_large_C_with_zero_weights_certifies(fit_intercept):
    # today's code: UnboundedError from Clarabel although the dual's set is compact
    X, y, w = _item4_data()
    clf = SVC(kernel="linear", multi_class="crammer_singer", C=7.3e5,
              fit_intercept=fit_intercept).fit(X, y, sample_weight=w)
    assert clf.certificate_.ok
    # the separable data's optimum is the hard margin's: every training label right
    np.testing.assert_array_equal(clf.predict(X), y)
    # an independent reference: the hard margin (no slack; its multipliers are far below
    # every Cᵢ ≥ 7.3e5 on the kept samples, so it is the optimum), a well-scaled QP
    import cvxpy as cp

    keep = w > 0
    Xk, Y = X[keep], np.eye(4)[y[keep]]
    W = cp.Variable((3, 4))
    b = cp.Variable(4) if fit_intercept else np.zeros(4)
    F = Xk @ W + np.ones((Xk.shape[0], 1)) @ cp.reshape(b, (1, 4), order="C")
    Fy = cp.sum(cp.multiply(Y, F), axis=1)
    hard = cp.Problem(cp.Minimize(0.5 * cp.sum_squares(W)),
                      [cp.reshape(Fy, (Xk.shape[0], 1), order="C") @ np.ones((1, 4)) - F
                       >= 1 - Y])
    hard.solve(solver="CLARABEL")
    lam_max = max(float(np.max(c.dual_value)) for c in hard.constraints)
    assert lam_max < 1e-3 * 7.3e5           # the hard margin's multipliers fit every box
    ref = hard.value
    assert abs(clf.certificate_.quantities["primal_objective"] - ref) <= 1e-6 * ref


def test_cvxpy_never_reports_unbounded():
    # the cvxpy forms are scaled by max Cᵢ: no UnboundedError for a problem with an optimum
    X, y, w = _item4_data()
    p = MulticlassSVMProblem(X, y, C=7.3e5, sample_weight=w)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for method in ("cvxpy-dual", "cvxpy-primal"):
            try:
                p.solve(method, certify=False)
            except UnboundedError:     # pragma: no cover - the defect
                pytest.fail(f"{method} reported a bounded problem unbounded")


def test_weights_beyond_the_C_limit_are_refused():
    # today's code: UnboundedError; the C ≤ 1e12 rule applies to C · weight
    X, y = _blobs(30, 3, 3, 8)
    with pytest.raises(ValueError, match=r"C · sample_weight reaches 1e\+13"):
        SVC(kernel="linear", multi_class="crammer_singer").fit(X, y,
                                                               sample_weight=np.full(30, 1e13))
    with pytest.raises(ValueError, match="scale the weights down"):
        MulticlassSVMProblem(X, y, C=10.0, sample_weight=np.full(30, 2e11))


def test_warm_start_max_iter_callback_and_options():
    p = _case("csr32-4")
    std = p.to_crammer_singer_qp()
    res = solve_crammer_singer(std, tol=1e-8, gap_tol=1e-9)
    assert res.status == "optimal"
    warm = solve_crammer_singer(std, tol=1e-8, gap_tol=1e-9, alpha0=res.x)
    assert warm.status == "optimal" and warm.nit <= 2
    assert abs(warm.primal - res.primal) <= 1e-9 * res.primal
    with pytest.warns(ConvergenceWarning, match="max_iter=3"):
        short = solve_crammer_singer(std, tol=1e-12, max_iter=3, options=CSOptions(polish_max=0))
    assert short.status == "max_iter" and short.nit == 3
    seen = []
    stopped = solve_crammer_singer(std, tol=1e-8,
                                   callback=lambda it, v, W: seen.append(v) or it >= 2)
    assert stopped.status == "callback" and len(seen) == 2
    # without shrinking and without the finish: the same optimum
    plain = solve_crammer_singer(std, tol=1e-9, gap_tol=1e-9, shrinking=False,
                                 options=CSOptions(polish_max=0))
    assert abs(plain.primal - res.primal) <= 1e-7 * res.primal
    with pytest.raises(ValueError, match="alpha0 must be feasible"):
        solve_crammer_singer(std, alpha0=np.ones_like(res.x))
    with pytest.raises(ValueError, match="polish_max"):
        CSOptions(polish_max=-1)
    assert polish(std.X, std.y, std.upper, np.zeros_like(res.x), np.zeros(4), False, 10) is None


def test_registry_routes_the_linear_kernel_only():
    X, y = load_iris(return_X_y=True)
    clf = SVC(kernel="linear", multi_class="crammer_singer", fit_intercept=False).fit(X, y)
    assert clf.solution_.method == "sequential-dual" and clf.certificate_.ok
    rbf = MulticlassSVMProblem(X[::3], y[::3], kernel="rbf")
    with pytest.raises(ValueError, match="needs the linear kernel"):
        rbf.solve("sequential-dual")
    with pytest.raises(ValueError, match="Crammer–Singer problem only"):
        SVC(solver="sequential-dual").fit(X, y)


def test_the_exact_finish_on_csr_equals_the_dense_one():
    # the finish's Gram block is a sparse product for CSR input; the dense input's
    # product is the independent reference, and a polished answer certifies
    p = _case("csr64-weights-8")
    std = p.to_crammer_singer_qp()
    res = solve_crammer_singer(std, tol=1e-3, options=CSOptions(polish_max=0))
    Xd = std.X.toarray()
    for intercept in (False, True):
        b = np.zeros(std.n_classes)
        sparse_out = polish(std.X, std.y, std.upper, res.beta, b, intercept, 2000)
        dense_out = polish(Xd, std.y, std.upper, res.beta, b, intercept, 2000)
        assert sparse_out is not None and dense_out is not None
        np.testing.assert_allclose(sparse_out[0], dense_out[0], atol=1e-9)
        np.testing.assert_allclose(sparse_out[1], dense_out[1], atol=1e-9)


@pytest.mark.parametrize("work", [1e-12, 1e6])
def test_the_finish_gate_keeps_the_cvxpy_optimum(work):
    # a gate that never lets the finish run (1e-12) or always does (1e6): the same
    # certified optimum, the cvxpy dual's (Clarabel) the reference
    p = _case("weights-zeros-5")
    ref = p.solve("cvxpy-dual")
    sol = p.solve("sequential-dual", tol=1e-7, gap_tol=1e-8,
                  options=CSOptions(polish_work=work, polish_cheap=0))
    assert sol.certificate.ok, sol.certificate
    assert abs(sol.primal_objective - ref.primal_objective) <= 1e-6 * ref.primal_objective
    if work < 1:
        assert not sol.raw["polished"]              # the gate holds it back whatever the path
    with pytest.raises(ValueError, match="polish_work"):
        CSOptions(polish_work=0.0)
    with pytest.raises(ValueError, match="polish_cheap"):
        CSOptions(polish_cheap=-1)


@pytest.mark.parametrize("data", ["digits", "text"])
def test_bench_data_subsamples_equal_the_cvxpy_optimum(data):
    # the "objectives equal to an independent cvxpy optimum on subsamples" for
    # the two Crammer–Singer bench sets: 120 digits (raw pixels, near the hard margin)
    # and a 10-class text-like set (CSR, 400 features), the default certified fit
    from sklearn.datasets import load_digits

    from margin_opt.datasets import make_text_like

    if data == "digits":
        X, y = load_digits(return_X_y=True)
        X, y = X[:120], y[:120]
    else:
        X, y = make_text_like(n_samples=120, n_features=400, nnz_per_row=20, n_classes=10)
    p = MulticlassSVMProblem(X, y, C=1.0, fit_intercept=False)
    ref = p.solve("cvxpy-dual")
    assert p.certify(ref).ok
    clf = SVC(kernel="linear", multi_class="crammer_singer", fit_intercept=False).fit(X, y)
    assert clf.solution_.method == "sequential-dual" and clf.certificate_.ok
    P = clf.certificate_.quantities["primal_objective"]
    assert abs(P - ref.primal_objective) <= 1e-6 * ref.primal_objective


def test_block_order_is_a_permutation_of_blocks_and_keeps_the_optimum():
    from margin_opt._core import CSState, cs_shuffle

    rng = np.random.default_rng(0)
    order = rng.permutation(103).astype(np.int64)
    state = CSState(rng=12345)
    for block in (1, 4, 16):
        before = order[:97].copy()
        cs_shuffle(order, 97, block, state, 103)
        assert sorted(order[:97]) == sorted(before)               # a permutation
        if block > 1:                  # the sorted entries' blocks, each kept contiguous
            srt = np.sort(before)
            chunks = [srt[i:i + block] for i in range(0, srt.size, block)]
            pos = {v: t for t, v in enumerate(order[:97])}
            for ch in chunks:
                start = pos[ch[0]]
                assert list(order[start:start + ch.size]) == list(ch)
    # the order changes the path, not the answer: the cvxpy optimum whatever the block
    p = _case("csr64-weights-8")
    ref = p.solve("cvxpy-dual")
    for block in (1, 5):
        sol = p.solve("sequential-dual", tol=1e-7, gap_tol=1e-8,
                      options=CSOptions(shuffle_block=block))
        assert sol.certificate.ok
        assert abs(sol.primal_objective - ref.primal_objective) <= 1e-6 * ref.primal_objective
    with pytest.raises(ValueError, match="shuffle_block"):
        CSOptions(shuffle_block=0)


@pytest.mark.parametrize("name", ["dense-3", "csr32-4", "csr64-weights-8", "weights-zeros-5",
                                  "intercept-weights-6"])
def test_subspace_steps_reach_the_cvxpy_optimum(name):
    # the exact finish off (polish_max=0): the passes and their subspace steps
    # (extrapolate 1 and 2, and 0 as the plain passes) must reach the Clarabel optimum,
    # weights, zero weights, CSR and free intercepts included
    p = _case(name)
    ref = p.solve("cvxpy-dual")
    for history in (0, 1, 2):
        sol = p.solve("sequential-dual", tol=1e-7, gap_tol=1e-8,
                      options=CSOptions(polish_max=0, extrapolate=history))
        assert sol.status == "optimal" and sol.certificate.ok, (history, sol.certificate)
        assert abs(sol.primal_objective - ref.primal_objective) <= \
            1e-6 * ref.primal_objective, history


def test_subspace_steps_stop_where_they_no_longer_help():
    # a degenerate dual (70 samples, 10 features, 4 classes): near the rounding floor of
    # the objective the steps lower it by ~1e-15 while moving the margins by more than
    # the violation asked for.  Without the guard that turns them off when a pass's
    # violation grows, this solve ran to max_iter at a violation of 1e-5 (gap 1e-5).
    std = _case("csr32-4").to_crammer_singer_qp()
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        res = solve_crammer_singer(std, tol=1e-7, gap_tol=1e-8, max_iter=20_000,
                                   options=CSOptions(polish_max=0, extrapolate=1))
    assert res.status == "optimal" and res.violation <= 1e-7 and res.gap <= 1e-8
    ref = _case("csr32-4").solve("cvxpy-dual")
    assert abs(res.primal - ref.primal_objective) <= 1e-6 * ref.primal_objective


def test_subspace_steps_on_text_like_data_agree_with_cvxpy_and_liblinear():
    # a 5-class text-like subsample where the passes (not the exact finish) do the work:
    # the certified answer with the steps equals the Clarabel optimum to 1e-6, and
    # liblinear's (tol 1e-8) primal objective read in the same problem agrees to 1e-5
    from margin_opt.bench.crammer_singer import primal_objective
    from margin_opt.datasets import make_text_like

    X, y = make_text_like(n_samples=300, n_features=600, nnz_per_row=20, n_classes=5)
    p = MulticlassSVMProblem(X, y, C=1.0, fit_intercept=False)
    ref = p.solve("cvxpy-dual")
    assert p.certify(ref).ok
    sol = p.solve("sequential-dual", tol=1e-6, gap_tol=0.9e-6,
                  options=CSOptions(polish_max=0, extrapolate=1))
    assert sol.certificate.ok
    assert abs(sol.primal_objective - ref.primal_objective) <= 1e-6 * ref.primal_objective
    lib = LinearSVC(multi_class="crammer_singer", fit_intercept=False, tol=1e-8,
                    max_iter=100_000).fit(X, y)
    P_lib = primal_objective(X, y, lib.coef_.T)
    assert abs(P_lib - ref.primal_objective) <= 1e-5 * ref.primal_objective


def test_subspace_step_options_are_checked():
    for bad in (-1, 3, True, 1.5):
        with pytest.raises(ValueError, match="extrapolate must be 0, 1 or 2"):
            CSOptions(extrapolate=bad)
    with pytest.raises(ValueError, match="extrapolate_reach"):
        CSOptions(extrapolate_reach=0.0)
    for bad in (0.0, 1.0):
        with pytest.raises(ValueError, match="tail_shrink_decay"):
            CSOptions(tail_shrink_decay=bad)
    with pytest.raises(ValueError, match="extrapolate_width"):
        CSOptions(extrapolate_width=0.0)


@pytest.mark.parametrize("width", [1e-9, 1e9])
def test_steps_on_wide_data_keep_the_cvxpy_optimum(width):
    # n_features far above the visited nonzeros: the steps are skipped (width 1e-9) or
    # forced (1e9); both answers are the Clarabel optimum, so either rule is safe
    from margin_opt.datasets import make_text_like

    X, y = make_text_like(n_samples=150, n_features=3000, nnz_per_row=10, n_classes=4)
    p = MulticlassSVMProblem(X, y, C=1.0, fit_intercept=False)
    ref = p.solve("cvxpy-dual")
    sol = p.solve("sequential-dual", tol=1e-7, gap_tol=1e-8,
                  options=CSOptions(polish_max=0, extrapolate=2, extrapolate_width=width))
    assert sol.certificate.ok
    assert abs(sol.primal_objective - ref.primal_objective) <= 1e-6 * ref.primal_objective


@pytest.mark.parametrize("support_first", [True, False])
def test_steps_that_undo_the_passes_stop(support_first):
    # the binary iris problem with free intercepts (its first 100 samples): on main,
    # seeds 1 and 6 of these 12 ran to max_iter (and seeds 0 and 5 with the support-first
    # layout), a pass and a subspace step undoing each other at a violation of ~0.006.
    # The patience rule turns the steps off there; every seed reaches Clarabel's optimum
    X, y = load_iris(return_X_y=True)
    p = MulticlassSVMProblem(X[:100], y[:100], C=1.0)
    ref = p.solve("cvxpy-dual")
    std = p.to_crammer_singer_qp()
    for seed in range(12):
        with warnings.catch_warnings():
            warnings.simplefilter("error", ConvergenceWarning)
            res = solve_crammer_singer(std, tol=1e-6, gap_tol=9e-7, max_iter=20_000,
                                       random_state=seed,
                                       options=CSOptions(support_first=support_first))
        assert res.status == "optimal", seed
        assert abs(res.primal - ref.primal_objective) <= 1e-6 * ref.primal_objective, seed


@pytest.mark.parametrize("name", ["csr64-weights-8", "weights-zeros-5", "intercept-weights-6"])
@pytest.mark.parametrize("at", [10.0, 1e-9])
def test_support_first_layout_keeps_the_optimum_and_the_sample_order(name, at):
    # the samples laid out support-first (at the first stop, at ≥ 10, or at the switch
    # to tol, at 1e-9): the answer is Clarabel's optimum, and the multipliers come back
    # in the caller's order: W rebuilt from them is the W returned
    p = _case(name)
    ref = p.solve("cvxpy-dual")
    std = p.to_crammer_singer_qp()
    for sf in (True, False):
        res = solve_crammer_singer(std, tol=1e-7, gap_tol=1e-8,
                                   options=CSOptions(support_first=sf, support_first_at=at))
        assert res.status == "optimal"
        assert abs(res.primal - ref.primal_objective) <= 1e-6 * ref.primal_objective
        Y = np.zeros_like(res.x)
        Y[np.arange(Y.shape[0]), std.y] = 1.0
        beta = std.upper[:, None] * Y - res.x
        np.testing.assert_allclose(np.asarray(std.X.T @ beta), res.w, atol=1e-9)
        np.testing.assert_allclose(beta, res.beta, atol=1e-12)
    with pytest.raises(ValueError, match="support_first"):
        CSOptions(support_first=1)
    with pytest.raises(ValueError, match="support_first_at"):
        CSOptions(support_first_at=0.0)
    with pytest.raises(ValueError, match="extrapolate_patience"):
        CSOptions(extrapolate_patience=-1)
