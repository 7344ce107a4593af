"""AdaBoost against its closed forms, its bounds, cvxpy, and scikit-learn."""

import warnings

import numpy as np
import pytest
from sklearn.datasets import make_classification
from sklearn.dummy import DummyClassifier
from sklearn.ensemble import AdaBoostClassifier
from sklearn.model_selection import train_test_split
from sklearn.neighbors import KNeighborsClassifier
from sklearn.tree import DecisionTreeClassifier

from margin_opt.datasets import load_dataset
from margin_opt.estimators.adaboost import AdaBoost
from margin_opt.exceptions import ConvergenceWarning
from margin_opt.problems.boosting import ALPHA_MAX, closed_form_alpha
from margin_opt.weak_learners import DecisionStump


@pytest.fixture(scope="module")
def cancer():
    d = load_dataset("breast_cancer")
    return train_test_split(d.X, d.y, test_size=0.3, random_state=0, stratify=d.y)


@pytest.fixture(scope="module")
def fitted(cancer):
    Xtr, _, ytr, _ = cancer
    return AdaBoost(n_estimators=100).fit(Xtr, ytr)


def _sklearn(n_estimators=100, estimator=None, **kw):
    return AdaBoostClassifier(estimator or DecisionTreeClassifier(max_depth=1),
                              n_estimators=n_estimators, **kw)


def test_alpha_is_the_closed_form_exactly(fitted):
    eps = fitted.estimator_errors_
    assert np.array_equal(fitted.estimator_weights_, 0.5 * np.log((1 - eps) / eps))
    assert np.array_equal(fitted.estimator_weights_, closed_form_alpha(eps))


def test_alpha_matches_cvxpy_line_search(cancer):
    Xtr, _, ytr, _ = cancer
    model = AdaBoost(n_estimators=25, verify=True).fit(Xtr, ytr)
    assert model.verified_weights_.shape == (25,)
    assert np.abs(model.verified_weights_ - model.estimator_weights_).max() <= 1e-6


def test_bounds_hold_every_round(fitted):
    eps = fitted.estimator_errors_
    assert np.all((eps > 0) & (eps < 0.5))
    assert np.allclose(fitted.normalizers_, 2 * np.sqrt(eps * (1 - eps)), rtol=1e-12)
    assert np.allclose(fitted.error_bounds_, np.cumprod(fitted.normalizers_), rtol=1e-10)
    assert np.all(fitted.train_errors_ <= fitted.error_bounds_)
    assert np.all(fitted.error_bounds_ <= fitted.exp_bounds_ * (1 + 1e-12))


def test_train_errors_match_staged_predictions(cancer, fitted):
    Xtr, _, ytr, _ = cancer
    y_pm = np.where(ytr == fitted.classes_[1], 1, -1)
    staged = [np.mean(y_pm * F <= 0) for F in fitted.staged_decision_function(Xtr)]
    assert np.allclose(staged, fitted.train_errors_)
    assert np.array_equal(F_last := list(fitted.staged_decision_function(Xtr))[-1],
                          fitted.decision_function(Xtr))
    assert np.array_equal(fitted.predict(Xtr), fitted.classes_[(F_last > 0).astype(int)])


def test_same_model_as_sklearn_with_our_stump(cancer, fitted):
    # scikit-learn's SAMME loop with our stump as its estimator: weights 2α, same errors
    Xtr, Xte, ytr, _ = cancer
    sk = _sklearn(100, DecisionStump()).fit(Xtr, ytr)
    assert np.allclose(sk.estimator_weights_, 2 * fitted.estimator_weights_, atol=1e-10)
    assert np.allclose(sk.estimator_errors_, fitted.estimator_errors_, atol=1e-12)
    assert np.array_equal(sk.predict(Xte), fitted.predict(Xte))


@pytest.mark.parametrize("data", ["breast_cancer", "make_classification"])
def test_agrees_with_sklearn_depth1_trees(data, cancer, fitted):
    if data == "breast_cancer":
        Xtr, Xte, ytr, _ = cancer
        ours = fitted
    else:
        X, y = make_classification(n_samples=3000, n_features=20, random_state=0)
        Xtr, Xte, ytr, _ = train_test_split(X, y, test_size=0.3, random_state=0)
        ours = AdaBoost(n_estimators=100).fit(Xtr, ytr)
    sk = _sklearn(100).fit(Xtr, ytr)
    assert ours.estimator_errors_[0] == pytest.approx(sk.estimator_errors_[0], abs=1e-12)
    assert ours.estimator_weights_[0] * 2 == pytest.approx(sk.estimator_weights_[0], abs=1e-10)
    assert np.mean(ours.predict(Xte) == sk.predict(Xte)) >= 0.98


def test_sklearn_weak_learner_reproduces_sklearn_adaboost(cancer):
    Xtr, Xte, ytr, _ = cancer
    tree = DecisionTreeClassifier(max_depth=2)
    ours = AdaBoost(n_estimators=30, weak_learner=tree, random_state=3).fit(Xtr, ytr)
    sk = _sklearn(30, tree, random_state=3).fit(Xtr, ytr)
    assert np.allclose(2 * ours.estimator_weights_, sk.estimator_weights_, atol=1e-10)
    assert np.array_equal(ours.predict(Xte), sk.predict(Xte))


def test_lp_margin_at_least_adaboost_min_margin(cancer, fitted):
    Xtr, _, ytr, _ = cancer
    margins = fitted.margins(Xtr, ytr)
    assert np.all(np.abs(margins) <= 1 + 1e-12)
    lp = fitted.max_margin_lp(Xtr, ytr)
    assert lp.weights.shape == (fitted.n_iter_,)
    assert lp.margin >= margins.min() - 1e-9
    H = fitted.learner_outputs(Xtr)
    y_pm = np.where(ytr == fitted.classes_[1], 1, -1)
    assert (y_pm * (H @ lp.weights)).min() == pytest.approx(lp.margin, abs=1e-7)


def test_margins_keep_growing_after_zero_training_error(cancer):
    Xtr, _, ytr, _ = cancer
    model = AdaBoost(n_estimators=300).fit(Xtr, ytr)
    r0 = int(np.argmax(model.train_errors_ == 0))
    assert model.train_errors_[r0] == 0 and r0 < 150
    y_pm = np.where(ytr == model.classes_[1], 1, -1)
    alphas = np.cumsum(model.estimator_weights_)
    staged = list(model.staged_decision_function(Xtr))
    early = y_pm * staged[r0] / alphas[r0]
    late = y_pm * staged[-1] / alphas[-1]
    assert early.min() > 0
    assert late.min() > early.min()


def test_perfect_weak_learner_stops_with_finite_weight():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(80, 3))
    y = np.where(X[:, 1] > 0.2, "b", "a")
    model = AdaBoost(n_estimators=10).fit(X, y)
    assert model.n_iter_ == 1 and model.stop_reason_ == "perfect"
    assert model.estimator_errors_[0] == 0.0
    assert model.estimator_weights_[0] == ALPHA_MAX
    assert model.train_errors_[-1] == 0.0
    assert model.error_bounds_[-1] <= model.exp_bounds_[-1]
    assert np.array_equal(model.predict(X), y)


def test_chance_learner_stops_with_warning():
    X = np.zeros((10, 2))
    y = np.array([1] * 7 + [0] * 3)
    with pytest.warns(ConvergenceWarning, match="≥ ½"):
        model = AdaBoost(n_estimators=5, weak_learner=DummyClassifier()).fit(X, y)
    assert model.n_iter_ == 1 and model.stop_reason_ == "chance"
    with pytest.raises(ValueError, match="no better than chance"):
        AdaBoost().fit(np.zeros((4, 2)), [0, 1, 0, 1])


def test_concentrated_weights_do_not_overflow():
    # label noise makes the weights pile onto a few points; weights spanning 1e-300..1
    rng = np.random.default_rng(1)
    X = rng.normal(size=(300, 5))
    y = np.where(X[:, 0] + X[:, 1] > 0, 1, -1)
    y[:6] *= -1
    sw = np.where(rng.random(300) < 0.5, 1e-300, 1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        model = AdaBoost(n_estimators=400).fit(X, y, sample_weight=sw)
    for name in ("estimator_weights_", "normalizers_", "error_bounds_", "train_errors_"):
        assert np.all(np.isfinite(getattr(model, name))), name
    assert np.all(model.train_errors_ <= model.error_bounds_ + 1e-300)


def test_totally_corrective_lowers_the_loss(cancer):
    Xtr, _, ytr, _ = cancer
    stage = AdaBoost(n_estimators=15).fit(Xtr, ytr)
    tc = AdaBoost(n_estimators=15, totally_corrective=True, verify=True).fit(Xtr, ytr)
    assert np.all(tc.estimator_weights_ >= 0)
    assert tc.estimator_weights_.sum() <= tc.stage_weights_.sum() * (1 + 1e-6)
    assert np.all(tc.train_errors_ <= tc.error_bounds_)
    assert np.all(tc.normalizers_ <= 2 * np.sqrt(
        tc.estimator_errors_ * (1 - tc.estimator_errors_)) * (1 + 1e-6))
    assert np.abs(tc.verified_weights_ - tc.stage_weights_).max() <= 1e-6
    assert tc.estimators_[0] == stage.estimators_[0]
    assert tc.estimator_weights_[0] != stage.estimator_weights_[0]  # refit moved it


def test_input_validation_and_no_mutation():
    X, y = make_classification(n_samples=60, n_features=4, random_state=0)
    X0, y0 = X.copy(), y.copy()
    sw = np.linspace(1, 2, 60)
    sw0 = sw.copy()
    AdaBoost(n_estimators=3).fit(X, y, sample_weight=sw)
    assert np.array_equal(X, X0) and np.array_equal(y, y0) and np.array_equal(sw, sw0)
    with pytest.raises(ValueError, match="n_estimators"):
        AdaBoost(n_estimators=0).fit(X, y)
    with pytest.raises(ValueError, match="sample_weight"):
        AdaBoost(weak_learner=KNeighborsClassifier()).fit(X, y)
    with pytest.raises(ValueError, match="one class"):
        AdaBoost().fit(X, np.ones(60))
    Xn = X.copy()
    Xn[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        AdaBoost().fit(Xn, y)
    model = AdaBoost(n_estimators=3).fit(X, y)
    with pytest.raises(ValueError, match="classes_"):
        model.margins(X, y + 5)
    with pytest.raises(ValueError, match="features"):
        model.predict(X[:, :3])


def test_verify_report_and_plots(tmp_path):
    pytest.importorskip("matplotlib")
    from margin_opt.reports.adaboost import verify

    report, text, ok = verify(load_dataset("breast_cancer"), n_estimators=12,
                              plot=str(tmp_path / "ada_"))
    assert ok and report["ok"]
    assert len(report["rounds"]) == 12 and "α cvxpy" in text
    checks = report["certificate"]["checks"]
    assert checks["alpha_cvxpy"]["value"] <= 1e-6
    assert report["summary"]["lp_margin"] >= report["summary"]["min_margin"] - 1e-7
    for p in report["plots"]:
        assert (tmp_path / p.split("/")[-1]).stat().st_size > 1000


def test_verify_rejects_regression_data():
    from margin_opt.reports.adaboost import verify

    with pytest.raises(ValueError):
        verify(load_dataset("diabetes"))


def test_bench_quick_smoke():
    from margin_opt.bench.adaboost import format_rows, run

    rows = run(quick=True, sizes=(600,), n_estimators=20)
    r = rows[0]
    assert r["rounds"] == [20, 20] and r["time_ours"] > 0 and 0 <= r["agreement"] <= 1
    # our stump minimizes the weighted error; sklearn's tree the Gini impurity
    assert r["first_error_ours"] <= r["first_error_sklearn"] + 1e-12
    assert "ratio" in format_rows(rows)
