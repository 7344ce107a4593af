"""Kernel expansions by blocks (margin_opt.kernels.expansion) against scikit-learn:
its fitted models' own decision values, and its pairwise kernels."""

import tracemalloc

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn import svm
from sklearn.datasets import load_iris, make_classification
from sklearn.metrics import pairwise

from margin_opt import SVC, SVR
from margin_opt.kernels import expansion as E
from margin_opt.kernels import make_kernel

SMALL = E.ExpansionOptions(tile=7, max_rows=5, block_bytes=4096)   # many blocks and tiles


def _reference(name, A, B, gamma=0.3, coef0=0.5, degree=3):
    if name == "rbf":
        return pairwise.rbf_kernel(A, B, gamma=gamma)
    if name == "poly":
        return pairwise.polynomial_kernel(A, B, degree=degree, gamma=gamma, coef0=coef0)
    if name == "sigmoid":
        return pairwise.sigmoid_kernel(A, B, gamma=gamma, coef0=coef0)
    return pairwise.linear_kernel(A, B)


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("name", ["rbf", "poly", "sigmoid", "linear"])
def test_ovo_layout_equals_pairwise_kernels(name, sparse):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(90, 6))
    if sparse:
        X[X < 0.4] = 0.0
        X = sp.csr_matrix(X)
    SV = X[:30]
    n_support = np.array([12, 0, 8, 10])            # a class without support vectors
    dual_coef = rng.normal(size=(3, 30))
    intercept = rng.normal(size=6)
    K = _reference(name, X, SV)
    stop = np.cumsum(n_support)
    start = stop - n_support
    ref = np.column_stack([
        K[:, start[i]:stop[i]] @ dual_coef[j - 1, start[i]:stop[i]]
        + K[:, start[j]:stop[j]] @ dual_coef[i, start[j]:stop[j]] + intercept[p]
        for p, (i, j) in enumerate((i, j) for i in range(4) for j in range(i + 1, 4))])
    kernel = make_kernel(name, X, gamma=0.3, coef0=0.5, degree=3)
    ex = E.ovo_expansion(n_support, dual_coef, intercept)
    one = E.evaluate(kernel, X, SV, ex, options=SMALL, nthr=1)
    two = E.evaluate(kernel, X, SV, ex, options=SMALL, nthr=2)
    np.testing.assert_allclose(one, ref, rtol=1e-12, atol=1e-12 * np.abs(ref).max())
    np.testing.assert_array_equal(one, two)          # the split changes nothing
    np.testing.assert_allclose(E.evaluate(kernel, X, SV, ex), one, rtol=1e-12, atol=1e-13)


def test_scikit_learn_models_attributes_give_its_decision_values():
    """The expansion of LIBSVM's own fitted attributes is LIBSVM's decision_function."""
    X, y = load_iris(return_X_y=True)
    kernel = make_kernel("rbf", X, gamma=0.5)
    ovo = svm.SVC(gamma=0.5, decision_function_shape="ovo").fit(X, y)
    got = E.evaluate(kernel, X, ovo.support_vectors_,
                     E.ovo_expansion(ovo.n_support_, ovo.dual_coef_, ovo.intercept_),
                     options=SMALL)
    np.testing.assert_allclose(got, ovo.decision_function(X), rtol=1e-12, atol=1e-12)
    reg = svm.SVR(gamma=0.5).fit(X, y)
    got = E.evaluate(kernel, X, reg.support_vectors_,
                     E.binary_expansion(reg.dual_coef_, reg.intercept_))[:, 0]
    np.testing.assert_allclose(got, reg.predict(X), rtol=1e-12, atol=1e-12)


def test_queries_equal_to_support_vectors_far_from_the_origin():
    """Where ‖x‖² + ‖s‖² − 2xᵀs has lost its digits (a point far from the origin, a
    query equal to a support vector) the values are those of the unshifted data."""
    rng = np.random.default_rng(1)
    X = rng.normal(size=(40, 3))
    kernel = make_kernel("rbf", X, gamma=2.0)
    ex = E.binary_expansion(rng.normal(size=(1, 10)), [0.1])
    near = E.evaluate(kernel, X, X[:10], ex)
    far = E.evaluate(kernel, X + 1e6, X[:10] + 1e6, ex)
    np.testing.assert_allclose(far, near, rtol=1e-9, atol=1e-9)
    sq = sp.csr_matrix(X + 1e4)
    np.testing.assert_allclose(E.evaluate(kernel, sq, sq[:10], ex), near, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("sparse", [False, True])
def test_estimators_agree_with_scikit_learn(sparse):
    X, y = make_classification(300, 8, n_informative=5, n_classes=3, random_state=0)
    Xq = X[::-1] + 0.1
    if sparse:
        X, Xq = sp.csr_matrix(np.where(X > 0, X, 0)), sp.csr_matrix(np.where(Xq > 0, Xq, 0))
    for shape in ("ovo", "ovr"):
        ours = SVC(gamma=0.2, tol=1e-10, decision_function_shape=shape).fit(X, y)
        ref = svm.SVC(gamma=0.2, tol=1e-10, decision_function_shape=shape).fit(X, y)
        np.testing.assert_allclose(ours.decision_function(Xq), ref.decision_function(Xq),
                                   rtol=1e-6, atol=1e-6)
        np.testing.assert_array_equal(ours.predict(Xq), ref.predict(Xq))
    yr = np.asarray((X @ np.ones(8)) if not sparse else X.sum(axis=1)).ravel()
    ours = SVR(gamma=0.2, tol=1e-10).fit(X, yr)
    ref = svm.SVR(gamma=0.2, tol=1e-10).fit(X, yr)
    np.testing.assert_allclose(ours.predict(Xq), ref.predict(Xq), rtol=1e-6, atol=1e-6)


def test_precomputed_and_callable_kernels_go_by_blocks():
    X, y = load_iris(return_X_y=True)
    K = pairwise.rbf_kernel(X, X, gamma=0.5)
    ref = svm.SVC(kernel="precomputed", decision_function_shape="ovo", tol=1e-10).fit(K, y)
    ours = SVC(kernel="precomputed", decision_function_shape="ovo", tol=1e-10).fit(K, y)
    np.testing.assert_allclose(ours.decision_function(K), ref.decision_function(K), atol=1e-6)
    ex = E.binary_expansion(np.ones((1, 5)), [0.0])
    f = make_kernel(lambda A, B: A @ B.T)
    got = E.evaluate(f, X, X[:5], ex, options=SMALL)[:, 0]
    np.testing.assert_allclose(got, (X @ X[:5].T).sum(axis=1), rtol=1e-12)


def test_options_are_checked():
    with pytest.raises(ValueError, match="tile"):
        E.ExpansionOptions(tile=0)


def test_a_million_queries_hold_only_the_block_budget_beyond_the_output():
    """decision_function on 10⁶ points holds the output, the support vectors' prepared
    copy and the block budget: never the 10⁶ × n_SV kernel matrix (numpy's
    allocations, which tracemalloc sees)."""
    X, y = make_classification(200, 2, n_informative=2, n_redundant=0, random_state=0)
    model = SVC(gamma=1.0).fit(X, y)
    n_sv = model.support_vectors_.shape[0]
    Xq = np.random.default_rng(0).normal(size=(1_000_000, 2))
    out_bytes = Xq.shape[0] * 8
    budget = E.ExpansionOptions().block_bytes
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        dec = model.decision_function(Xq)
        peak = tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()
    assert dec.shape == (Xq.shape[0],)
    assert peak - out_bytes <= budget, (peak, out_bytes)
    assert Xq.shape[0] * n_sv * 8 > 4 * budget      # the whole matrix would not fit
    np.testing.assert_allclose(dec[:50], svm.SVC(gamma=1.0).fit(X, y).decision_function(Xq[:50]),
                               atol=1e-2)


def test_bench_predict_rows_run_and_print():
    from margin_opt.bench import predict as bench

    rows = bench.run(quick=True, rows=["ovo"])
    assert rows[0]["certified"] and rows[0]["time_ours"] > 0 and rows[0]["peer"] == "libsvm"
    text = bench.format_rows(rows)
    assert "one-vs-one fit" in text and "every pair certified" in text and "load average" in text


def test_kernel_overflow_on_the_queries_is_a_clear_error():
    X, y = load_iris(return_X_y=True)
    model = SVC(kernel="poly", degree=3, gamma=0.1).fit(X, y)
    with pytest.raises(ValueError, match="overflowed on these queries.*scale the features"):
        model.decision_function(X * 1e120)
