"""One-vs-one SVC against scikit-learn's SVC (LIBSVM): layout, values, votes, certificates."""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import load_digits, load_iris
from sklearn.metrics.pairwise import rbf_kernel
from sklearn.model_selection import cross_val_score
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC as SkSVC

from margin_opt import SVC, CompositeCertificate
from margin_opt.certificate import Certificate, Check
from margin_opt.exceptions import NonConvexWarning
from margin_opt.kernels import make_kernel


@pytest.fixture(scope="module")
def iris():
    return load_iris(return_X_y=True)


@pytest.fixture(scope="module")
def iris_fits(iris):
    X, y = iris
    ours = SVC(C=1, gamma=0.5, tol=1e-8).fit(X, y)
    ref = SkSVC(C=1, gamma=0.5, tol=1e-10).fit(X, y)
    return ours, ref


def test_iris_identical_to_libsvm(iris, iris_fits):
    X, _ = iris
    ours, ref = iris_fits
    np.testing.assert_array_equal(ours.predict(X), ref.predict(X))
    np.testing.assert_array_equal(ours.n_support_, ref.n_support_)
    np.testing.assert_array_equal(ours.support_, ref.support_)     # grouped by class
    assert ours.dual_coef_.shape == ref.dual_coef_.shape == (2, ref.support_.size)
    np.testing.assert_allclose(ours.dual_coef_, ref.dual_coef_, atol=1e-5)
    np.testing.assert_allclose(ours.intercept_, ref.intercept_, atol=1e-5)
    np.testing.assert_allclose(ours.support_vectors_, ref.support_vectors_)
    assert ours.n_iter_.shape == (3,) and ours.n_iter_.dtype == np.int32
    np.testing.assert_array_equal(ours.class_weight_, ref.class_weight_)


def test_decision_shapes_and_ties_as_sklearn(iris, iris_fits):
    X, _ = iris
    ours, ref = iris_fits
    for shape in ("ovo", "ovr"):
        d1 = ours.set_params(decision_function_shape=shape).decision_function(X)
        d2 = ref.set_params(decision_function_shape=shape).decision_function(X)
        assert d1.shape == d2.shape
        np.testing.assert_allclose(d1, d2, atol=1e-5)
    ours.set_params(decision_function_shape="ovr", break_ties=True)
    ref.set_params(decision_function_shape="ovr", break_ties=True)
    Xg = np.random.default_rng(0).uniform(X.min(0), X.max(0), size=(400, 4))
    np.testing.assert_array_equal(ours.predict(Xg), ref.predict(Xg))
    with pytest.raises(ValueError, match="break_ties"):
        ours.set_params(decision_function_shape="ovo").predict(X)
    ours.set_params(break_ties=False, decision_function_shape="ovr")
    ref.set_params(break_ties=False)
    np.testing.assert_array_equal(ours.predict(Xg), ref.predict(Xg))


def test_certificate_per_pair(iris_fits):
    ours, _ = iris_fits
    cert = ours.certificate_
    assert isinstance(cert, CompositeCertificate) and cert.ok and len(cert) == 3
    text = str(cert)
    assert text.count("\n") == 3 and "0 vs 2" in text
    assert cert[(0, 2)] is cert["0 vs 2"] is cert[1]
    assert cert[1].ok and cert[1].duality_gap < 1e-8
    assert len(ours.solutions_) == 3
    assert cert.to_dict()["parts"]["1 vs 2"]["ok"]


def test_composite_certificate_fails_with_one_part():
    good = Certificate([Check("a", 0.0, 1e-6)])
    bad = Certificate([Check("a", 1.0, 1e-6)])
    cert = CompositeCertificate({"x vs y": good, "x vs z": bad}, title="t")
    assert not cert.ok and cert.failed() == ["x vs z: a"] and cert.kkt_violation == 1.0
    assert "FAIL x vs z" in str(cert)
    with pytest.raises(Exception, match="x vs z"):
        cert.assert_ok()


def test_digits_agrees_with_libsvm_every_pair_certified():
    X, y = load_digits(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    ours = SVC().fit(X, y)
    ref = SkSVC().fit(X, y)
    assert ours.certificate_.ok and len(ours.certificate_) == 45
    assert np.mean(ours.predict(X) == ref.predict(X)) >= 0.999
    # LIBSVM stops at 1e-3, we at 1e-6: a few points at the margin may differ
    assert np.abs(ours.n_support_ - ref.n_support_).max() <= 3


def test_shared_gram_equals_own_rows(iris):
    X, y = iris
    shared = SVC(gamma=0.5).fit(X, y)
    own = SVC(gamma=0.5, solver_options={"cache_size": 0.01}).fit(X, y)
    assert shared._shared_gram and not own._shared_gram
    np.testing.assert_allclose(shared.dual_coef_, own.dual_coef_, atol=1e-5)
    np.testing.assert_allclose(shared.intercept_, own.intercept_, atol=1e-5)


def test_pairs_on_threads_give_the_sequential_fit(monkeypatch):
    # the pairs are solved side by side on worker threads; each pair's answer is
    # computed by the same code whatever thread runs it: bit for bit the one-thread fit
    from margin_opt.estimators import ovo
    from margin_opt.parallel import ThreadPolicy, use_policy

    X, y = load_digits(return_X_y=True)
    X = StandardScaler().fit_transform(X)[:600]
    y = y[:600]
    pools = []
    batch = ovo.solve_pairs

    def spy(source, options, reading, threads):    # the threads the fit asked for
        pools.append(threads)
        return batch(source, options, reading, threads)

    monkeypatch.setattr(ovo, "solve_pairs", spy)
    with use_policy(ThreadPolicy(pair_workers=3)):
        threaded = SVC().fit(X, y)
    with use_policy(ThreadPolicy(pair_workers=1)):
        sequential = SVC().fit(X, y)
    assert pools == [3, 1]               # as given, beyond the cores and the load
    with pytest.raises(ValueError, match="pair_workers"):
        ThreadPolicy(pair_workers=0)
    assert threaded.certificate_.ok and sequential.certificate_.ok
    np.testing.assert_array_equal(threaded.support_, sequential.support_)
    np.testing.assert_array_equal(threaded.dual_coef_, sequential.dual_coef_)
    np.testing.assert_array_equal(threaded.intercept_, sequential.intercept_)
    np.testing.assert_array_equal(threaded.n_iter_, sequential.n_iter_)


def test_pair_threads_only_for_smo_within_the_budget(iris, monkeypatch):
    # pegasos draws from NumPy's global generator: its pairs stay sequential, so that a
    # seeded fit repeats; the threads never hold more pair blocks than the budget allows
    from margin_opt.estimators import ovo
    from margin_opt.parallel import ThreadPolicy, fit_threads, use_policy

    X, y = iris
    fits = []
    for _ in range(3):
        np.random.seed(0)  # noqa: NPY002  (pegasos without random_state draws from it)
        fits.append(SVC(solver="pegasos", certify=False).fit(X, y).intercept_)
    np.testing.assert_array_equal(fits[0], fits[1])
    np.testing.assert_array_equal(fits[0], fits[2])
    members = [np.arange(100), np.arange(100, 200), np.arange(200, 300)]
    pairs = [(0, 1), (0, 2), (1, 2)]
    mb = 8 / 2 ** 20                              # bytes → MB
    # room for the three diagonal blocks (3·100²) and two pair blocks (200² each); the
    # thread count as the policy gives it whatever the load
    with use_policy(ThreadPolicy(watch_load=False)):
        assert ovo._pair_threads(members, pairs, (3e4 + 2 * 4e4) * mb) == \
            min(2, fit_threads())
        assert ovo._pair_threads(members, pairs, (3e4 + 2 * 4e4 - 1) * mb) == 1
    with use_policy(ThreadPolicy(others_running=lambda: 1000)):     # busy cores
        assert ovo._pair_threads(members, pairs, (3e4 + 2 * 4e4) * mb) == 1


def test_pair_callback_runs_in_pair_order_on_the_calling_thread(iris):
    # calibration (probability=True) is called pair by pair, in LIBSVM's order, on
    # the fitting thread, with each pair's own problem and answer
    import threading

    from margin_opt.estimators import ovo

    X, y = iris
    est = SVC(gamma=0.5)
    y_index = np.searchsorted(np.unique(y), y)
    seen = []

    def on_pair(p, problem, sol):
        seen.append((p, threading.get_ident(), problem.n_samples, sol.status))

    kernel = make_kernel("rbf", X, gamma=0.5)
    fit = ovo.fit_one_vs_one(est, X, y_index, np.unique(y), np.ones(len(y)), kernel,
                             solver="smo", on_pair=on_pair)
    assert [p for p, *_ in seen] == [0, 1, 2]
    assert {t for _, t, *_ in seen} == {threading.get_ident()}
    assert [n for _, _, n, _ in seen] == [idx.size for idx in fit.pair_rows]


def test_weights_string_labels_linear_coef_as_sklearn(iris):
    X, y = iris
    labels = np.array(["setosa", "versicolor", "virginica"])[y]
    sw = np.random.default_rng(1).uniform(0.5, 2.0, y.size)
    cw = {"setosa": 1.0, "versicolor": 2.0, "virginica": 0.5}
    ours = SVC(kernel="linear", C=0.5, class_weight=cw, tol=1e-8).fit(X, labels, sw)
    ref = SkSVC(kernel="linear", C=0.5, class_weight=cw, tol=1e-10).fit(X, labels, sw)
    np.testing.assert_array_equal(ours.classes_, ref.classes_)
    np.testing.assert_array_equal(ours.n_support_, ref.n_support_)
    np.testing.assert_allclose(ours.coef_, ref.coef_, atol=1e-5)
    np.testing.assert_allclose(ours.intercept_, ref.intercept_, rtol=1e-5)
    np.testing.assert_array_equal(ours.predict(X), ref.predict(X))
    assert ours.certificate_.ok


def test_sparse_and_precomputed_multiclass(iris):
    X, y = iris
    dense = SVC(gamma=0.3).fit(X, y)
    sparse = SVC(gamma=0.3).fit(sp.csr_matrix(X), y)
    np.testing.assert_allclose(sparse.decision_function(X), dense.decision_function(X),
                               atol=1e-5)
    K = rbf_kernel(X, gamma=0.3)
    pre = SVC(kernel="precomputed").fit(K, y)
    ref = SkSVC(kernel="precomputed", tol=1e-10).fit(K, y)
    np.testing.assert_allclose(pre.decision_function(K[:20]), ref.decision_function(K[:20]),
                               atol=1e-5)
    assert pre.certificate_.ok and pre.__sklearn_tags__().input_tags.pairwise
    # cross-validation slices the Gram matrix (rows and columns) because SVC is pairwise
    scores = cross_val_score(SVC(kernel="precomputed"), K, y, cv=3)
    np.testing.assert_allclose(scores, cross_val_score(SkSVC(kernel="precomputed"), K, y, cv=3))


def test_indefinite_precomputed_is_fitted_but_not_certified(iris):
    X, y = iris
    K = rbf_kernel(X, gamma=0.3) - 0.5       # not PSD
    with pytest.warns(NonConvexWarning, match="not positive semidefinite"):
        clf = SVC(kernel="precomputed").fit(K, y)
    assert not clf.certificate_.ok
    assert all("psd_kernel" in c.failed() for _, c in clf.certificate_)


def test_negative_weights_drop_samples_as_libsvm(iris):
    X, y = iris
    sw = np.ones(y.size)
    sw[::7] = -1.0
    ours = SVC(gamma=0.5, tol=1e-8).fit(X, y, sw)
    ref = SkSVC(gamma=0.5, tol=1e-10).fit(X[sw > 0], y[sw > 0])
    np.testing.assert_allclose(ours.decision_function(X), ref.decision_function(X), atol=1e-5)
    with pytest.raises(ValueError, match="class"):
        SVC().fit(X, y, np.where(y == 2, 0.0, 1.0))


def test_bad_labels_and_feature_names(iris):
    pd = pytest.importorskip("pandas")
    X, y = iris
    with pytest.raises(ValueError, match="Unknown label type"):
        SVC().fit(X, y + 0.5)
    with pytest.raises(ValueError, match="one class"):
        SVC().fit(X, np.zeros(y.size))
    df = pd.DataFrame(X, columns=["a", "b", "c", "d"])
    clf = SVC().fit(df, y)
    np.testing.assert_array_equal(clf.feature_names_in_, ["a", "b", "c", "d"])
    with pytest.warns(UserWarning, match="does not have valid feature names"):
        clf.predict(X)
    with pytest.raises(ValueError, match="feature names should match"):
        clf.predict(df.rename(columns={"a": "z"}))
    with pytest.raises(ValueError, match="is expecting 4 features as input"):
        SVC().fit(X, y).predict(X[:, :3])


def test_bench_suite_smoke():
    from margin_opt.bench.multiclass import compare, format_rows

    rows = compare("digits", tols=(1e-3,), repeats=1)
    r = rows[0]
    assert r["pairs"] == r["certified"] == 45 and r["agreement"] >= 0.999
    assert r["time_ours"] > 0 and r["time_libsvm"] > 0 and r["shared_gram"]
    text = format_rows(rows)
    assert "digits" in text and "load:" in text


@pytest.mark.parametrize("name, params", [("rbf", dict(gamma=0.3)), ("linear", {}),
                                          ("poly", dict(gamma=0.5, degree=3, coef0=1.0))])
def test_pair_kernel_blocks_equal_scikit_learn(name, params):
    # every pair's matrix from the class blocks (dsyrk + SMO's compiled transform)
    # against scikit-learn's pairwise kernels on the pair's rows; exactly symmetric,
    # duplicated points far from the origin give exactly 1 (rbf)
    from sklearn.metrics.pairwise import pairwise_kernels

    from margin_opt.estimators.ovo import ClassBlocks, class_pairs
    from margin_opt.kernels import make_kernel

    g = np.random.default_rng(5)
    X = g.normal(size=(90, 4)) + (1e3 if name == "rbf" else 0.0)
    X[80:] = X[:10]
    y = g.integers(0, 4, 90)
    members = [np.flatnonzero(y == c) for c in range(4)]
    kernel = make_kernel(name, X, **params)
    blocks = ClassBlocks(X, members, kernel)
    for i, j in class_pairs(4):
        rows = np.concatenate([members[i], members[j]])
        B = blocks.pair(i, j)
        np.testing.assert_array_equal(B, B.T)
        ref = pairwise_kernels(X[rows], metric=name, **params)
        np.testing.assert_allclose(B, ref, rtol=1e-9, atol=1e-9 * np.abs(ref).max())
        if name == "rbf":
            assert np.all(np.diag(B) == 1.0)


def test_one_vs_one_pairs_read_data_centred_once(monkeypatch):
    # the compiled pairs' problems take their rows from the data centred once (no shift
    # and centred copy per pair): the RBF kernel is translation invariant, so data
    # moved far from the origin gives the same certified fit, and each pair's standard
    # form holds its rows of the centred data
    X, y = load_digits(return_X_y=True)
    X, y = StandardScaler().fit_transform(X)[:600], y[:600]
    near, far = SVC().fit(X, y), SVC().fit(X + 1e3, y)
    assert near.certificate_.ok and far.certificate_.ok
    # both certified at tol 1e-6; SMO's paths on the two copies may part at a tie that
    # the last bit decides (on an AMD EPYC: 46 of 3456 coefficients, by up to 1.7e-6),
    # so a multiplier ~0 may be a support vector in one fit only: the coefficients are
    # compared as dense (n_classes − 1, n) arrays, zero off the support
    dense = []
    for est in (near, far):
        coef = np.zeros((est.dual_coef_.shape[0], X.shape[0]))
        coef[:, est.support_] = est.dual_coef_
        dense.append(coef)
    np.testing.assert_allclose(dense[1], dense[0], rtol=0, atol=1e-5)
    np.testing.assert_array_equal(far.predict(X + 1e3), near.predict(X))
    from margin_opt.estimators import ovo

    seen = []
    run = ovo.certify_result

    def spy(est, problem, *rest):
        seen.append(problem)
        return run(est, problem, *rest)

    # a pair whose reading is its whole story (svm_batch.clean) gets its Solution from
    # it (svm_batch.pair_solution) and has no problem object; every pair read by the
    # whole solve path instead (clean forced False), on its repair problem: the same fit
    monkeypatch.setattr(ovo, "certify_result", spy)
    monkeypatch.setattr(ovo, "clean", lambda *args, **kwargs: False)
    repaired = SVC().fit(X + 1e3, y)
    assert len(seen) == 45 and repaired.certificate_.ok
    np.testing.assert_array_equal(repaired.support_, far.support_)
    np.testing.assert_array_equal(repaired.dual_coef_, far.dual_coef_)
    np.testing.assert_array_equal(repaired.intercept_, far.intercept_)
    first = seen[0]                        # pair (0, 1): class 0's rows, then class 1's
    rows = np.concatenate([np.flatnonzero(y == 0), np.flatnonzero(y == 1)])
    Xc = X - X.mean(axis=0)
    np.testing.assert_allclose(first._qp.X, Xc[rows], atol=1e-9)
    assert first.kernel.shift is None
