"""Bias–variance by bootstrap: against mlxtend's bias_variance_decomp, exact identities
(squared loss = bias² + variance; Domingos' 0-1 decomposition), the closed form of the
out-of-bag count, and independence from n_jobs and the joblib backend (Dask included).
"""

import warnings

import joblib
import numpy as np
import pytest
from sklearn.base import clone
from sklearn.ensemble import RandomForestClassifier
from sklearn.model_selection import train_test_split
from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

from margin_opt import Bagging, BaggingRegressor, BiasVariance, RandomForest, bias_variance
from margin_opt.datasets import load_dataset
from margin_opt.studies.decomposition import bootstrap_indices


@pytest.fixture(scope="module")
def diabetes_split():
    d = load_dataset("diabetes")
    return train_test_split(d.X, d.y, test_size=0.3, random_state=0)


@pytest.fixture(scope="module")
def cancer_split():
    d = load_dataset("breast_cancer")
    return train_test_split(d.X, d.y, test_size=0.3, random_state=0)


def _mlxtend():
    return pytest.importorskip("mlxtend.evaluate", reason="mlxtend is not installed "
                               "(pip install mlxtend)")


def _holdout(est, split, **kw):
    X_tr, X_te, y_tr, y_te = split
    return bias_variance(est, X_tr, y_tr, method="holdout", X_test=X_te, y_test=y_te, **kw)


def test_regression_tree_holdout_within_15_percent_of_mlxtend(diabetes_split):
    mlx = _mlxtend()
    X_tr, X_te, y_tr, y_te = diabetes_split
    tree = DecisionTreeRegressor()
    loss, bias2, var = mlx.bias_variance_decomp(tree, X_tr, y_tr, X_te, y_te, loss="mse",
                                                num_rounds=100, random_seed=123)
    ours = _holdout(tree, diabetes_split, n_bootstrap=100, random_state=7)
    assert ours.loss == pytest.approx(loss, rel=0.15)
    assert ours.bias2 == pytest.approx(bias2, rel=0.15)
    assert ours.variance == pytest.approx(var, rel=0.15)


def test_same_seed_gives_mlxtends_numbers(diabetes_split, cancer_split):
    """The same bootstrap indices (one RandomState, choice(n, n) per round) and a fixed tree
    seed: both decompositions must agree to round-off, squared and 0-1."""
    mlx = _mlxtend()
    for split, est, loss in ((diabetes_split, DecisionTreeRegressor(random_state=0), "mse"),
                             (cancer_split, DecisionTreeClassifier(random_state=0),
                              "0-1_loss")):
        X_tr, X_te, y_tr, y_te = split
        ref = mlx.bias_variance_decomp(est, X_tr, y_tr, X_te, y_te, loss=loss,
                                       num_rounds=60, random_seed=5)
        ours = _holdout(est, split, n_bootstrap=60, random_state=5)
        np.testing.assert_allclose([ours.loss, ours.bias2, ours.variance], ref, rtol=1e-12)
        assert ours.loss_function == ("squared" if loss == "mse" else "0-1")


def test_squared_loss_identities(diabetes_split):
    X_tr, X_te, y_tr, y_te = diabetes_split
    r = _holdout(DecisionTreeRegressor(max_depth=4), diabetes_split, n_bootstrap=40,
                 random_state=0)
    assert isinstance(r, BiasVariance) and r.n_models.tolist() == [40] * y_te.size
    assert r.loss == pytest.approx(r.bias2 + r.variance, rel=1e-12)
    np.testing.assert_allclose(r.point_loss, r.point_bias ** 2 + r.point_variance, rtol=1e-10)
    np.testing.assert_allclose(r.point_bias, y_te - r.main_prediction)
    # out of bag: the notes' variance has 1/(K − 1), so loss = bias² + (K − 1)/K · variance
    o = bias_variance(DecisionTreeRegressor(max_depth=4), X_tr, y_tr, n_bootstrap=40,
                      random_state=0)
    K = o.n_models
    np.testing.assert_allclose(o.point_loss, o.point_bias ** 2 + (K - 1) / K * o.point_variance,
                               rtol=1e-10)
    assert o.net_variance == pytest.approx(np.mean((K - 1) / K * o.point_variance))


def test_oob_predictions_by_hand(diabetes_split):
    """h̄(x) is the mean over the K replicates that left x out (replicates redone here)."""
    X_tr, _, y_tr, _ = diabetes_split
    tree = DecisionTreeRegressor(max_depth=3, random_state=0)
    B = 12
    with pytest.warns(UserWarning, match="fewer than 2"):  # B = 12 leaves a few points out
        r = bias_variance(tree, X_tr, y_tr, n_bootstrap=B, random_state=3)
    idx = bootstrap_indices(X_tr.shape[0], B, random_state=3)
    preds = np.full((B, X_tr.shape[0]), np.nan)
    for b in range(B):
        out = np.setdiff1d(np.arange(X_tr.shape[0]), idx[b])
        preds[b, out] = clone(tree).fit(X_tr[idx[b]], y_tr[idx[b]]).predict(X_tr[out])
    K = np.sum(~np.isnan(preds), axis=0)
    np.testing.assert_array_equal(r.n_models, K)
    ok = K >= 2
    main = np.nanmean(preds[:, ok], axis=0)
    np.testing.assert_allclose(r.main_prediction[ok], main)
    np.testing.assert_allclose(r.point_variance[ok], np.nanvar(preds[:, ok], axis=0, ddof=1))
    assert np.isnan(r.point_variance[~ok]).all()


def test_zero_one_domingos_decomposition(cancer_split):
    """Two classes, no noise: loss(x) = B(x) + (1 − 2B(x)) V(x) exactly (Domingos 2000)."""
    X_tr, X_te, y_tr, y_te = cancer_split
    for r in (_holdout(DecisionTreeClassifier(), cancer_split, n_bootstrap=30, random_state=1),
              bias_variance(DecisionTreeClassifier(), X_tr, y_tr, n_bootstrap=30,
                            random_state=1)):
        B, V = r.point_bias, r.point_variance
        np.testing.assert_allclose(r.point_loss, B + (1 - 2 * B) * V, atol=1e-12)
        assert r.loss == pytest.approx(r.bias2 + r.net_variance)
        assert set(np.unique(B)) <= {0.0, 1.0}
    # string labels work the same way
    labels = np.array(["benign", "malignant"])[y_tr.astype(int)]
    s = bias_variance(DecisionTreeClassifier(), X_tr, labels, n_bootstrap=30, random_state=1)
    assert s.loss == pytest.approx(r.loss) and s.main_prediction.dtype.kind == "U"


def test_oob_count_matches_closed_form(diabetes_split):
    """A point is left out of a replicate with probability (1 − 1/n)^n."""
    X_tr, _, y_tr, _ = diabetes_split
    n, B = X_tr.shape[0], 200
    r = bias_variance(DecisionTreeRegressor(max_depth=1), X_tr, y_tr, n_bootstrap=B,
                      random_state=0)
    p = (1 - 1 / n) ** n
    assert r.n_models.mean() / B == pytest.approx(p, abs=4 * np.sqrt(p * (1 - p) / (n * B)))
    half = bias_variance(DecisionTreeRegressor(max_depth=1), X_tr, y_tr, n_bootstrap=B,
                         max_samples=0.5, random_state=0)
    m = int(0.5 * n)
    assert half.bag_size == m
    assert half.n_models.mean() / B == pytest.approx((1 - 1 / n) ** m, abs=0.01)


@pytest.mark.parametrize("method", ["oob", "holdout"])
def test_bagging_lowers_the_trees_variance(diabetes_split, method):
    X_tr, X_te, y_tr, y_te = diabetes_split
    kw = {"n_bootstrap": 25, "random_state": 0}
    if method == "holdout":
        kw.update(X_test=X_te, y_test=y_te)
    tree = bias_variance(DecisionTreeRegressor(), X_tr, y_tr, method=method, **kw)
    bag = bias_variance(BaggingRegressor(n_estimators=15), X_tr, y_tr, method=method, **kw)
    assert bag.variance < 0.5 * tree.variance
    assert bag.loss < tree.loss


def test_classifier_bagging_lowers_variance(cancer_split):
    X_tr, _, y_tr, _ = cancer_split
    kw = {"n_bootstrap": 25, "random_state": 0}
    tree = bias_variance(DecisionTreeClassifier(), X_tr, y_tr, **kw)
    bag = bias_variance(Bagging(n_estimators=15), X_tr, y_tr, **kw)
    assert tree.loss_function == "0-1" and bag.variance < tree.variance


def test_result_does_not_depend_on_n_jobs_or_backend(cancer_split):
    X_tr, _, y_tr, _ = cancer_split
    est = RandomForestClassifier(n_estimators=5)  # random_state None: seeded per replicate
    kw = {"n_bootstrap": 12, "random_state": 4}
    ref = bias_variance(est, X_tr, y_tr, n_jobs=1, **kw)
    runs = [bias_variance(est, X_tr, y_tr, n_jobs=2, **kw)]
    with joblib.parallel_backend("threading", n_jobs=2):
        runs.append(bias_variance(est, X_tr, y_tr, **kw))
    for r in runs:
        np.testing.assert_array_equal(r.point_loss, ref.point_loss)
        np.testing.assert_array_equal(r.main_prediction, ref.main_prediction)
    assert est.get_params()["random_state"] is None and not hasattr(est, "estimators_")


@pytest.fixture()
def environment_kept():
    """This process's environment as it was, after the test: distributed's Nanny writes
    its ``distributed.nanny.pre-spawn-environ`` (OMP_NUM_THREADS=1, MKL_NUM_THREADS=1,
    OPENBLAS_NUM_THREADS=1, MALLOC_TRIM_THRESHOLD_) into ``os.environ`` of the process
    that starts the cluster, before it spawns a worker, and never takes it back.  Left
    there, every later test of the same pytest worker ran as a joblib worker's share of
    one thread (margin_opt.parallel.THREADS_ENV reads OMP_NUM_THREADS), and so did its
    subprocesses: test_parallel's fork-pool and thread-count tests failed after this one."""
    import os

    saved = dict(os.environ)
    yield
    for key in set(os.environ) - set(saved):
        del os.environ[key]
    for key, value in saved.items():
        if os.environ.get(key) != value:
            os.environ[key] = value


def test_dask_cluster_gives_the_same_results(cancer_split, environment_kept):
    """Replicates, bags and forests through joblib's Dask backend on two worker processes."""
    distributed = pytest.importorskip("distributed", reason="dask[distributed] not installed")
    X_tr, _, y_tr, _ = cancer_split
    kw = {"n_bootstrap": 16, "random_state": 2}
    forest = RandomForest(n_estimators=20, oob_score=True, random_state=0)
    ref = bias_variance(DecisionTreeClassifier(), X_tr, y_tr, n_jobs=1, **kw)
    ref_forest = clone(forest).set_params(n_jobs=1).fit(X_tr, y_tr)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the cluster's own start-up notices
        with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                      dashboard_address=None) as cluster, \
                distributed.Client(cluster), joblib.parallel_backend("dask"):
            got = bias_variance(DecisionTreeClassifier(), X_tr, y_tr, **kw)
            got_forest = clone(forest).set_params(n_jobs=2).fit(X_tr, y_tr)
            got_bag = Bagging(n_estimators=6, n_jobs=2, random_state=0).fit(X_tr, y_tr)
    np.testing.assert_array_equal(got.point_loss, ref.point_loss)
    assert (got.loss, got.bias2, got.variance) == (ref.loss, ref.bias2, ref.variance)
    assert got_forest.oob_score_ == ref_forest.oob_score_
    np.testing.assert_array_equal(got_forest.margins(X_tr, y_tr),
                                  ref_forest.margins(X_tr, y_tr))
    ref_bag = Bagging(n_estimators=6, random_state=0).fit(X_tr, y_tr)
    np.testing.assert_array_equal(got_bag.bag_unique_fraction_, ref_bag.bag_unique_fraction_)


def test_seeds_and_inputs(cancer_split):
    X_tr, _, y_tr, _ = cancer_split
    X0, y0 = X_tr.copy(), y_tr.copy()
    a = bias_variance(DecisionTreeClassifier(), X_tr, y_tr, n_bootstrap=20, random_state=0)
    b = bias_variance(DecisionTreeClassifier(), X_tr, y_tr, n_bootstrap=20, random_state=0)
    np.testing.assert_array_equal(a.point_loss, b.point_loss)
    np.testing.assert_array_equal(X_tr, X0)
    np.testing.assert_array_equal(y_tr, y0)
    d = a.to_dict(per_point=True)
    assert d["method"] == "oob" and len(d["point_loss"]) == y_tr.size


def test_bad_input(cancer_split, diabetes_split):
    X_tr, X_te, y_tr, y_te = cancer_split
    tree = DecisionTreeClassifier()
    with pytest.raises(ValueError, match="X_test and y_test"):
        bias_variance(tree, X_tr, y_tr, method="holdout")
    with pytest.raises(ValueError, match="holdout' only"):
        bias_variance(tree, X_tr, y_tr, X_test=X_te, y_test=y_te)
    with pytest.raises(ValueError, match="method"):
        bias_variance(tree, X_tr, y_tr, method="cv")
    with pytest.raises(ValueError, match="loss"):
        bias_variance(tree, X_tr, y_tr, loss="hinge")
    with pytest.raises(ValueError, match="n_bootstrap"):
        bias_variance(tree, X_tr, y_tr, n_bootstrap=1)
    with pytest.raises(ValueError, match="max_samples"):
        bias_variance(tree, X_tr, y_tr, max_samples=1.5)
    with pytest.raises(ValueError, match="max_samples"):
        bias_variance(tree, X_tr, y_tr, max_samples=0)
    with pytest.raises(ValueError, match="features"):
        bias_variance(tree, X_tr, y_tr, method="holdout", X_test=X_te[:, :3], y_test=y_te)
    with pytest.raises(TypeError, match="fit and predict"):
        bias_variance(object(), X_tr, y_tr)
    y_nan = y_tr.copy()
    y_nan[0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        bias_variance(DecisionTreeRegressor(), X_tr, y_nan, loss="squared")


def test_too_few_replicates_warn_then_fail(diabetes_split):
    X_tr, _, y_tr, _ = diabetes_split
    with pytest.warns(UserWarning, match="increase n_bootstrap"):
        r = bias_variance(DecisionTreeRegressor(max_depth=2), X_tr, y_tr, n_bootstrap=4,
                          random_state=0)
    used = r.n_models >= 2
    assert np.isfinite(r.loss) and np.isnan(r.point_loss[~used]).all() and used.any()
    with pytest.raises(ValueError, match="increase n_bootstrap"):
        bias_variance(DecisionTreeRegressor(), X_tr[:1], y_tr[:1], n_bootstrap=2)


def test_study_cli_classification_table_json_and_plot(capsys, tmp_path, cancer_split):
    from margin_opt import cli
    from margin_opt.studies.bias_variance import classification_models

    pytest.importorskip("matplotlib")
    png = tmp_path / "study.png"
    assert cli.main(["study", "bias-variance", "--n-bootstrap", "4", "--method", "holdout",
                     "--json", "--plot", str(png)]) == 0
    report = __import__("json").loads(capsys.readouterr().out)
    assert report["data"] == "breast_cancer" and report["task"] == "classification"
    rows = {r["model"]: r for r in report["rows"]}
    assert list(rows) == list(classification_models())
    # the study's split is stratified 70/30 with seed 0; its numbers are bias_variance's
    from margin_opt.datasets import load_dataset

    d = load_dataset("breast_cancer")
    X_tr, X_te, y_tr, y_te = train_test_split(d.X, d.y, test_size=0.3, random_state=0,
                                              stratify=d.y)
    direct = bias_variance(DecisionTreeClassifier(), X_tr, y_tr, method="holdout",
                           X_test=X_te, y_test=y_te, n_bootstrap=4, random_state=0)
    assert rows["deep tree"]["loss"] == direct.loss
    assert rows["deep tree"]["margin_min"] == 1.0  # a deep tree fits its training set
    assert rows["SVC (rbf)"]["margin_mean"] is None
    assert -1 <= rows["AdaBoost"]["margin_min"] <= rows["AdaBoost"]["margin_mean"] <= 1
    claims = {c["claim"]: c for c in report["claims"]}
    assert set(claims) == {"bagging reduces variance", "boosting reduces bias",
                           "boosting increases the margin"}
    assert claims["bagging reduces variance"]["holds"] == (
        rows["bagged trees"]["variance"] < rows["deep tree"]["variance"])
    assert png.read_bytes()[:4] == b"\x89PNG"


def test_study_regression_text(capsys):
    from margin_opt import cli

    assert cli.main(["study", "bias-variance", "--task", "regression", "--n-bootstrap", "4",
                     "--method", "holdout"]) == 0
    out = capsys.readouterr().out
    assert "diabetes: squared loss" in out and "SVR poly 6" in out and "bias²" in out
    assert "margin" not in out.splitlines()[1]


def test_study_rejects_multiclass_targets():
    from margin_opt.datasets import Dataset
    from margin_opt.studies.bias_variance import run_study

    X = np.random.default_rng(0).normal(size=(30, 2))
    with pytest.raises(ValueError, match="two-class"):
        run_study(Dataset(X, np.arange(30) % 3, "three"), n_bootstrap=2)


def test_bench_suite_quick_agrees_with_mlxtend():
    _mlxtend()
    from margin_opt.bench import SUITES
    from margin_opt.bench.bias_variance import format_rows, run

    assert SUITES["bias-variance"] == "margin_opt.bench.bias_variance"
    rows = run(quick=True, n_rounds=10)
    assert [(r["impl"], r["n_jobs"]) for r in rows] == [("mlxtend", 1), ("margin_opt", 1),
                                                         ("margin_opt", 2)]
    for r in rows[1:]:
        assert (r["loss"], r["bias"], r["variance"]) == pytest.approx(
            (rows[0]["loss"], rows[0]["bias"], rows[0]["variance"]), rel=1e-12)
    assert "load" in format_rows(rows)


def test_study_with_own_models_and_progress_bar(capsys):
    from margin_opt.datasets import load_dataset
    from margin_opt.studies.bias_variance import run_study

    d = load_dataset("diabetes")
    models = {"deep tree": DecisionTreeRegressor(), "bagged trees": BaggingRegressor(
        n_estimators=5)}
    r = run_study(d, method="holdout", n_bootstrap=3, models=models, progress=True)
    assert "bias-variance" in capsys.readouterr().err  # tqdm's bar, on stderr
    assert [row["model"] for row in r.rows] == list(models)
    assert r.claims[0]["holds"] == (r.rows[1]["variance"] < r.rows[0]["variance"])
