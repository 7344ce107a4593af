import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.metrics.pairwise import polynomial_kernel, rbf_kernel, sigmoid_kernel
from sklearn.svm import SVC as SkSVC

from margin_opt.kernels import (
    Kernel,
    make_kernel,
    n_polynomial_features,
    polynomial_features,
    resolve_gamma,
)

rng = np.random.default_rng(1)
X = rng.normal(size=(12, 4))
Z = rng.normal(size=(5, 4))


def test_closed_forms():
    k = make_kernel("rbf", X, gamma=0.3)
    d2 = ((Z[:, None, :] - X[None, :, :]) ** 2).sum(-1)
    np.testing.assert_allclose(k(Z, X), np.exp(-0.3 * d2), rtol=1e-12)
    k = make_kernel("poly", X, gamma=0.5, degree=2, coef0=1.0)
    np.testing.assert_allclose(k(Z, X), (0.5 * Z @ X.T + 1.0) ** 2, rtol=1e-12)
    k = make_kernel("sigmoid", X, gamma=0.1, coef0=-1.0)
    np.testing.assert_allclose(k(Z, X), np.tanh(0.1 * Z @ X.T - 1.0), rtol=1e-12)
    np.testing.assert_allclose(make_kernel("linear")(Z, X), Z @ X.T, rtol=1e-12)


@pytest.mark.parametrize("gamma", ["scale", "auto"])
def test_gamma_matches_sklearn(gamma):
    y = (X[:, 0] > 0).astype(int)
    sk = SkSVC(gamma=gamma).fit(X, y)
    assert resolve_gamma(gamma, X) == pytest.approx(sk._gamma, rel=1e-12)
    Xs = sp.random(30, 6, density=0.3, random_state=0, format="csr")
    ys = np.arange(30) % 2
    assert resolve_gamma(gamma, Xs) == pytest.approx(SkSVC(gamma=gamma).fit(Xs, ys)._gamma)


@pytest.mark.parametrize("name", ["linear", "poly", "rbf", "sigmoid"])
def test_sparse_equals_dense_and_diag(name):
    k = make_kernel(name, X)
    np.testing.assert_allclose(k(sp.csr_matrix(Z), sp.csr_matrix(X)), k(Z, X), atol=1e-12)
    np.testing.assert_allclose(k.diag(X), np.diag(k(X, X)), rtol=1e-12)
    np.testing.assert_allclose(k.diag(sp.csr_matrix(X)), np.diag(k(X, X)), rtol=1e-12)


def test_callable_and_precomputed():
    k = make_kernel(lambda A, B: polynomial_kernel(A, B, degree=2))
    np.testing.assert_allclose(k.gram(X), polynomial_kernel(X, degree=2))
    K = rbf_kernel(X)
    kp = make_kernel("precomputed")
    np.testing.assert_array_equal(kp.rows(K, [1, 3]), K[[1, 3]])
    np.testing.assert_array_equal(kp.diag(K), np.diag(K))
    with pytest.raises(ValueError, match="returned shape"):
        make_kernel(lambda A, B: np.zeros((2, 2)))(X, X)


def test_sigmoid_reference():
    np.testing.assert_allclose(make_kernel("sigmoid", X, gamma=0.2, coef0=0.5)(X, X),
                               sigmoid_kernel(X, gamma=0.2, coef0=0.5))


@pytest.mark.parametrize("bad", [0, -1.0, np.nan, np.inf, "big"])
def test_bad_gamma(bad):
    with pytest.raises(ValueError, match="gamma"):
        make_kernel("rbf", X, gamma=bad)


def test_degree2_feature_map_equals_kernel():
    """The lecture's map φ(x) = (x₁², √2 x₁x₂, x₂²) has kernel (xᵀz)²."""
    A = rng.normal(size=(7, 2))

    def phi(V):
        return np.c_[V[:, 0] ** 2, np.sqrt(2) * V[:, 0] * V[:, 1], V[:, 1] ** 2]

    k = make_kernel("poly", A, gamma=1.0, degree=2, coef0=0.0)
    np.testing.assert_allclose(phi(A) @ phi(A).T, k(A, A), rtol=1e-10, atol=1e-14)


def _with_duplicates(A):
    """A CSR matrix equal to A whose every stored entry is split into two halves
    (scipy sums duplicates), in reversed order within each row."""
    A = sp.csr_matrix(A)
    rows = np.repeat(np.arange(A.shape[0]), np.diff(A.indptr))
    r = np.concatenate([rows, rows])[::-1]
    c = np.concatenate([A.indices, A.indices])[::-1]
    v = np.concatenate([A.data, A.data])[::-1] / 2
    order = np.argsort(r, kind="stable")
    indptr = np.concatenate([[0], np.cumsum(np.bincount(r, minlength=A.shape[0]))])
    D = sp.csr_matrix((v[order], c[order], indptr), shape=A.shape)
    assert not D.has_canonical_format
    return D


@pytest.mark.parametrize("name", ["linear", "poly", "rbf", "sigmoid"])
def test_csr_with_duplicate_entries_is_read_as_its_sum(name):
    D = _with_duplicates(X)
    before = (D.data.copy(), D.indices.copy())
    k = make_kernel(name, X, gamma=0.3, degree=2, coef0=0.5)
    np.testing.assert_allclose(k(D, D), k(X, X), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(k.diag(D), k.diag(X), rtol=1e-12)
    np.testing.assert_array_equal(D.data, before[0])       # the caller's matrix untouched
    np.testing.assert_array_equal(D.indices, before[1])


def test_svc_on_csr_with_duplicate_entries_matches_dense():
    # before: SMO read a duplicated row wrongly and its certificate, computed by the
    # same row code, passed; now both the fit and the LIBSVM reference agree
    from margin_opt import SVC

    g = np.random.default_rng(3)
    A = g.normal(size=(120, 5)) * (g.uniform(size=(120, 5)) < 0.6)
    yy = (A[:, 0] + A[:, 1] > 0).astype(int)
    dense = SVC(C=10.0, gamma=0.4).fit(A, yy)
    dup = SVC(C=10.0, gamma=0.4).fit(_with_duplicates(A), yy)
    assert dup.certificate_.ok
    assert dup.solution_.dual_objective == pytest.approx(dense.solution_.dual_objective,
                                                         rel=1e-8)
    ref = SkSVC(C=10.0, gamma=0.4, tol=1e-8).fit(A, yy)
    np.testing.assert_array_equal(dup.predict(_with_duplicates(A)), ref.predict(A))


def test_rbf_accepts_lists():
    from margin_opt.kernels import rbf

    K = rbf([[1.0, 2.0], [3.0, 4.0]], [[1.0, 2.0], [3.0, 4.0]], 0.5)
    np.testing.assert_allclose(K, [[1.0, np.exp(-4.0)], [np.exp(-4.0), 1.0]], rtol=1e-15)


def _core_q(X, kernel, dense_budget, threads, rows, cols):
    """Q[rows, cols] (all labels +1: K itself) from the compiled SMO's kernel rows."""
    from margin_opt import _core
    from margin_opt.kernels import core_rows, core_spec

    n = X.shape[0]
    settings = _core.SolverSettings()
    settings.threads = threads
    smo = _core.SMO(core_spec(kernel), core_rows(X), None, np.ones(n), -np.ones(n),
                    np.ones(n), np.arange(n), np.zeros(n), True, 0.0, settings, dense_budget)
    out = np.empty((len(rows), len(cols)))
    smo.q_block(np.asarray(rows, dtype=np.int64), np.asarray(cols, dtype=np.int64), out)
    return out, smo.layout


@pytest.mark.parametrize("d", [1, 3, 4, 7, 9])
@pytest.mark.parametrize("name", ["linear", "poly", "rbf", "sigmoid"])
def test_smo_kernel_rows_equal_scikit_learn(name, d):
    # the compiled SMO's rows (dense: four features per sweep, the rest one by one; CSR
    # from its dense transpose or row by row), split over threads or not, against
    # scikit-learn's pairwise kernels, with a zero feature; RBF far from the origin with
    # duplicated points (the distances recomputed below the guard) gives exactly 1 there
    from sklearn.metrics.pairwise import pairwise_kernels

    rng = np.random.default_rng(d)
    X = rng.normal(size=(4500, d)) * (rng.random((4500, d)) < 0.7)
    X[:, 0] = 0.0
    params = {} if name == "linear" else {"gamma": 0.3}
    if name in ("poly", "sigmoid"):
        params["coef0"] = 0.5
    ker = make_kernel(name, X, **params)
    rows = [0, 5, 4499]
    cols = np.arange(X.shape[0])
    ref = pairwise_kernels(X[rows], X, metric=name, **params)
    seen = set()
    for data, budget in ((X, 0.0), (sp.csr_matrix(X), 1e9), (sp.csr_matrix(X), 0.0)):
        for threads in (1, 3):
            out, layout = _core_q(data, ker, budget, threads, rows, cols)
            seen.add(layout)
            np.testing.assert_allclose(out, ref, rtol=1e-12, atol=1e-12)
    assert seen == {"dense", "sparse-transpose", "sparse"}
    if name == "rbf":
        # dense rows far from the origin (centred by the solver), duplicated points
        dup = X.copy()
        dup[4000:4010] = dup[:10]
        far = dup + 1e3
        out, _ = _core_q(far, ker, 0.0, 1, rows, cols)
        ref = pairwise_kernels(dup[rows], dup, metric=name, **params)
        np.testing.assert_allclose(out, ref, rtol=1e-10, atol=1e-10)
        out, _ = _core_q(far, ker, 0.0, 1, list(range(10)), list(range(4000, 4010)))
        np.testing.assert_array_equal(np.diag(out), 1.0)


@pytest.mark.parametrize("d,degree,coef0", [(1, 3, 1.0), (3, 2, 0.0), (10, 3, 0.5), (4, 1, 2.0),
                                            (2, 5, 0.3)])
def test_polynomial_features_reproduce_scikit_learns_kernel(d, degree, coef0):
    from math import comb

    X = np.random.default_rng(d).normal(size=(9, d)) * 3
    Phi = polynomial_features(X, 0.3, coef0, degree)
    K = polynomial_kernel(X, degree=degree, gamma=0.3, coef0=coef0)
    assert np.abs(Phi @ Phi.T - K).max() <= 1e-14 * np.abs(K).max()
    # all monomials of degree ≤ p, or exactly p when coef0 = 0
    assert Phi.shape[1] == n_polynomial_features(d, degree, coef0) == (
        comb(d + degree, degree) if coef0 else comb(d + degree - 1, degree))


def test_polynomial_monomials_are_kept_only_where_they_are_few():
    from margin_opt import SVMProblem
    from margin_opt.problems.kernel_data import POLY_FEATURES_MAX

    rng = np.random.default_rng(0)
    y = np.repeat([-1.0, 1.0], 15)
    small = SVMProblem(rng.normal(size=(30, 4)), y, kernel="poly", degree=3, coef0=1.0)
    assert small.data.w_basis().shape == (30, 35)
    assert not small.explicit_w          # the cvxpy forms and SMO keep the kernel
    wide = rng.normal(size=(30, 20))                  # C(23, 3) = 1771 monomials
    assert 1771 > POLY_FEATURES_MAX
    assert SVMProblem(wide, y, kernel="poly", degree=3, coef0=1.0).data.w_basis() is None
    assert SVMProblem(sp.csr_matrix(rng.normal(size=(30, 4))), y, kernel="poly", degree=3,
                      coef0=1.0).data.w_basis() is None
    assert SVMProblem(rng.normal(size=(30, 4)), y, kernel="poly", degree=3,
                      coef0=-1.0).data.w_basis() is None
    assert SVMProblem(rng.normal(size=(30, 4)), y, kernel="rbf").data.w_basis() is None
    with pytest.raises(ValueError, match="coef0 ≥ 0"):
        polynomial_features(rng.normal(size=(3, 2)), 1.0, -1.0, 2)


@pytest.mark.parametrize("name", ["poly", "rbf", "sigmoid"])
def test_training_combination_equals_scikit_learn(name):
    # Kβ of the certificate by the compiled kernel engine, small and larger supports,
    # dense and sparse, against scikit-learn, on features offset by 1e3 (the RBF's
    # centring)
    import scipy.sparse as sp
    from sklearn.metrics.pairwise import pairwise_kernels

    from margin_opt.problems.kernel_data import KernelData

    rng = np.random.default_rng(5)
    X = rng.normal(size=(1200, 8)) + (1e3 if name == "rbf" else 0.0)
    params = {"gamma": 0.05} if name == "rbf" else {"gamma": 0.01, "coef0": 0.5}
    for n_support in (3, 100, 400):
        beta = np.zeros(1200)
        beta[rng.choice(1200, n_support, replace=False)] = rng.normal(size=n_support)
        ref = pairwise_kernels(X - (X.mean(axis=0) if name == "rbf" else 0.0),
                               metric=name, **params) @ beta
        for data in (X, sp.csr_matrix(X)):
            f = KernelData(data, kernel=name, **params).combination(beta)
            np.testing.assert_allclose(f, ref, rtol=1e-10, atol=1e-10 * np.abs(ref).max())


@pytest.mark.parametrize("name", ["linear", "rbf"])
def test_combination_and_weights_of_several_columns_equal_scikit_learn(name):
    # KB and ΦᵀB for k columns at once (the Crammer–Singer problem's one product), on
    # every path (explicit features, centred linear features, a kernel matrix, the
    # compiled tiles, Kernel.rows), against scikit-learn column by column; a remembered
    # 1-D answer is not returned for a 2-D question
    import scipy.sparse as sp
    from sklearn.metrics.pairwise import pairwise_kernels

    from margin_opt.problems.kernel_data import KernelData

    rng = np.random.default_rng(2)
    X = rng.normal(size=(700, 6)) + 50.0
    params = {"gamma": 0.05} if name == "rbf" else {}
    B = np.zeros((700, 3))
    B[rng.choice(700, 500, replace=False)] = rng.normal(size=(500, 3))
    K = pairwise_kernels(X, metric=name, **params)
    for data, extra in ((X, {}), (sp.csr_matrix(X), {}), (X, {"centre_linear": True})):
        if extra and name != "linear":
            continue
        kd = KernelData(data, kernel=name, **params, **extra)
        kd.combination(B[:, 0])
        F = kd.combination(B)
        assert F.shape == (700, 3)
        np.testing.assert_allclose(F, K @ B, rtol=1e-9, atol=1e-9 * np.abs(K @ B).max())
        if name == "linear":
            W = kd.weights(B)
            np.testing.assert_allclose(W, X.T @ B, rtol=1e-10, atol=1e-10 * np.abs(X.T @ B).max())
            np.testing.assert_allclose(kd.weights(B[:, 1]), X.T @ B[:, 1], rtol=1e-10)
    few = np.zeros((100, 3))
    few[rng.choice(100, 10, replace=False)] = rng.normal(size=(10, 3))
    for symmetric, cols in ((False, B), (True, few), (False, few)):   # the three branches
        kd = KernelData(X[:cols.shape[0]], kernel=name, **params)
        Kc = K[:cols.shape[0], :cols.shape[0]]
        kd.use_gram(Kc, symmetric=symmetric)
        tol = {"rtol": 1e-12, "atol": 1e-12 * np.abs(Kc).max() * cols.shape[0]}
        np.testing.assert_allclose(kd.combination(cols), Kc @ cols, **tol)
        np.testing.assert_allclose(kd.combination(cols[:, 2]), Kc @ cols[:, 2], **tol)


def test_shifted_cholesky_decides_psd_against_the_eigenvalues():
    # the PSD test's factorization of K + δI (δ = 1e-10·n·max|K|), against NumPy's
    # eigenvalues; the caller's matrix is not modified, a strided one is read as is
    from margin_opt.problems.kernel_data import _cholesky_shifted

    r = np.random.default_rng(3)
    Q, _ = np.linalg.qr(r.normal(size=(60, 60)))
    for last, psd in ((1e-3, True), (0.0, True), (-1e-3, False)):
        lam = np.linspace(1.0, 0.1, 60)
        lam[-1] = last
        K = (Q * lam) @ Q.T
        K = (K + K.T) / 2
        assert (np.linalg.eigvalsh(K)[0] >= -1e-12) == psd
        before = K.copy()
        assert _cholesky_shifted(K) == psd
        np.testing.assert_array_equal(K, before)
        big = np.zeros((120, 120))
        big[::2, ::2] = K
        assert _cholesky_shifted(big[::2, ::2]) == psd


def test_shifted_cholesky_reads_the_lower_triangle_as_eigvalsh():
    # a matrix whose lower triangle is positive definite and whose upper is not: the
    # factorization decides as numpy.linalg.eigvalsh (lower triangle) does
    from margin_opt.problems.kernel_data import _cholesky_shifted

    r = np.random.default_rng(4)
    A = r.normal(size=(30, 4))
    K = A @ A.T + 0.5 * np.eye(30)
    K[0, 7] += 50.0                         # upper triangle only: indefinite there
    assert np.linalg.eigvalsh(K)[0] > 0 and np.linalg.eigvalsh(K, UPLO="U")[0] < 0
    assert _cholesky_shifted(K)
    assert not _cholesky_shifted(K.T.copy())


def test_precomputed_kernel_above_the_exact_psd_size_is_sampled():
    # above PSDTest.exact_max the PSD test samples principal submatrices; a precomputed
    # kernel has no function to evaluate, so they are read from the matrix (this
    # raised "a precomputed kernel has no function"): the fit warns that PSD was not
    # proved whole, its certificate does not pass it, and it agrees with LIBSVM's
    from margin_opt import SVC, SVMProblem
    from margin_opt.estimators.base import solve_and_certify
    from margin_opt.exceptions import NonConvexWarning
    from margin_opt.problems.kernel_data import KernelData, PSDTest

    small = PSDTest(exact_max=30, sample=20)
    assert PSDTest() == PSDTest(exact_max=4000, sample=1000, n_samples=8)
    r = np.random.default_rng(5)
    Xp = r.normal(size=(60, 3))
    yp = np.where(Xp[:, 0] + 0.3 * r.normal(size=60) > 0, 1, -1)
    K = rbf_kernel(Xp, gamma=0.5)
    # SVC(kernel="precomputed").fit's binary problem, on Kernel("precomputed") (not
    # validated PSD up front), solved and certified by the estimators' own call (SMO:
    # what solver="auto" is here) with the small PSD test passed explicitly
    problem = SVMProblem(K, yp, kernel=Kernel("precomputed"), psd_test=small)
    with pytest.warns(NonConvexWarning, match="8 sampled 20-point principal submatrices"):
        ours, cert = solve_and_certify(SVC(kernel="precomputed"), problem, solver="smo")
    assert not cert.ok                     # PSD not proved whole: it cannot vouch
    ref = SkSVC(kernel="precomputed", tol=1e-10).fit(K, yp)
    np.testing.assert_allclose(ours.decision, ref.decision_function(K), atol=1e-5)
    # K − 2I: every principal submatrix has −1 on its diagonal, so a sampled one is
    # refused with λ_min ≤ −1 (read from the matrix, not a kernel function)
    report = KernelData(K - 2.0 * np.eye(60), Kernel("precomputed"),
                        psd_test=small).psd_report()
    assert report.psd is False and report.lambda_min <= -1.0
    assert report.method == "a 20-point principal submatrix"
