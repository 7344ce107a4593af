import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.metrics.pairwise import polynomial_kernel, rbf_kernel, sigmoid_kernel
from sklearn.svm import SVC as SkSVC

from margin_opt.kernels import make_kernel, resolve_gamma

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
