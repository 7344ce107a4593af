"""Bagging, random forest and extra trees: bag statistics, vote margins, out-of-bag scores.

References: the closed form 1 − (1 − 1/n)^m for the fraction of points in a bag (and
its exact variance), scikit-learn's own ensembles and their predict_proba, and the
definitions of the out-of-bag estimate and of the normalized vote margin.
"""

import numpy as np
import pytest
from sklearn import ensemble as sk
from sklearn.datasets import load_iris
from sklearn.dummy import DummyClassifier, DummyRegressor
from sklearn.tree import DecisionTreeClassifier

from margin_opt import (
    AdaBoost,
    Bagging,
    BaggingRegressor,
    ExtraTrees,
    ExtraTreesRegressor,
    RandomForest,
    RandomForestRegressor,
)
from margin_opt.datasets import load_dataset


def _unique_fraction_moments(n, m):
    """Mean and variance of |unique(bag)| / n for m draws with replacement from n points."""
    q1, q2 = (1 - 1 / n) ** m, (1 - 2 / n) ** m
    var_count = n * q1 * (1 - q1) + n * (n - 1) * (q2 - q1 ** 2)
    return 1 - q1, var_count / n ** 2


@pytest.mark.parametrize("n,m", [(5, None), (40, 20)])
def test_bag_unique_fraction_matches_closed_form(n, m):
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(n, 2)), np.arange(n) % 2
    B = 600
    bag = Bagging(DummyClassifier(), n_estimators=B, max_samples=m, random_state=0).fit(X, y)
    mean, var = _unique_fraction_moments(n, m or n)
    se = np.sqrt(var / B)
    assert bag.bag_size_ == (m or n)
    assert bag.bag_unique_fraction_.shape == (B,)
    assert abs(bag.bag_unique_fraction_.mean() - mean) < 4 * se
    assert abs(bag.bag_unique_fraction_.var() - var) < 0.2 * var
    if m is None:  # the finite-n form, not its limit 1 − 1/e, is what a bag of 5 gives
        assert abs(bag.bag_unique_fraction_.mean() - (1 - np.exp(-1))) > 4 * se


def test_bag_unique_fraction_forests_and_regressors(breast_cancer):
    X, y = breast_cancer.X, breast_cancer.y
    n = X.shape[0]
    mean, var = _unique_fraction_moments(n, n)
    for model in (RandomForest(n_estimators=200, max_depth=1, random_state=0),
                  ExtraTrees(n_estimators=200, max_depth=1, bootstrap=True, random_state=0),
                  BaggingRegressor(DummyRegressor(), n_estimators=200, random_state=0),
                  RandomForestRegressor(n_estimators=200, max_depth=1, random_state=0)):
        f = model.fit(X, y).bag_unique_fraction_
        assert abs(f.mean() - mean) < 4 * np.sqrt(var / f.size), type(model).__name__
    # Geurts et al. grow each extra tree on the whole sample: every point is in every "bag"
    et = ExtraTreesRegressor(n_estimators=5, random_state=0).fit(X, y)
    np.testing.assert_array_equal(et.bag_unique_fraction_, np.ones(5))
    # without replacement a bag of m points holds m distinct points
    sub = Bagging(n_estimators=5, max_samples=0.5, bootstrap=False, random_state=0).fit(X, y)
    np.testing.assert_allclose(sub.bag_unique_fraction_, int(0.5 * n) / n)


@pytest.mark.parametrize("cls,sk_cls", [(Bagging, sk.BaggingClassifier),
                                        (RandomForest, sk.RandomForestClassifier),
                                        (ExtraTrees, sk.ExtraTreesClassifier)])
def test_margins_equal_soft_vote_of_pure_trees(breast_cancer, cls, sk_cls):
    """Fully grown trees have pure leaves, so hard votes = scikit-learn's averaged proba."""
    X, y = breast_cancer.X, breast_cancer.y
    ours = cls(n_estimators=25, random_state=3).fit(X, y)
    ref = sk_cls(n_estimators=25, random_state=3).fit(X, y)
    p = ref.predict_proba(X[::3])
    yi = y[::3].astype(int)
    rows = np.arange(yi.size)
    expected = p[rows, yi] - p[rows, 1 - yi]
    np.testing.assert_allclose(ours.margins(X[::3], y[::3]), expected, atol=1e-12)
    np.testing.assert_array_equal(ours.predict(X), ref.predict(X))


def test_binary_margins_are_adaboost_margins_with_equal_weights(breast_cancer):
    """y · mean of ±1 votes: AdaBoost's y H(x) / Σα with every α equal (random subspaces)."""
    X, y = breast_cancer.X, breast_cancer.y
    bag = Bagging(DecisionTreeClassifier(max_depth=2), n_estimators=15, max_features=0.4,
                  random_state=0).fit(X, y)
    y_pm = np.where(y == bag.classes_[1], 1.0, -1.0)
    votes = np.column_stack([2.0 * e.predict(X[:, f]) - 1.0 for e, f in
                             zip(bag.estimators_, bag.estimators_features_, strict=True)])
    np.testing.assert_allclose(bag.margins(X, y), y_pm * votes.mean(axis=1), atol=1e-12)
    # the same numbers from AdaBoost's own margins(): an AdaBoost whose learners are the bag's
    ada = AdaBoost(n_estimators=1).fit(X, y)
    ada.estimators_ = [_Columns(e, f) for e, f in zip(bag.estimators_, bag.estimators_features_,
                                                      strict=True)]
    ada.estimator_weights_ = np.full(15, 0.3)
    np.testing.assert_allclose(ada.margins(X, y), bag.margins(X, y), atol=1e-12)


class _Columns:
    """A bag member seen as a ±1 weak learner on all columns."""

    def __init__(self, est, features):
        self.est, self.features = est, features

    def predict(self, X):
        return 2.0 * self.est.predict(X[:, self.features]) - 1.0


def test_multiclass_margins_and_vote_fractions():
    X, y = load_iris(return_X_y=True)
    labels = np.array(["setosa", "versicolor", "virginica"])[y]
    rf = RandomForest(n_estimators=30, max_depth=2, random_state=0).fit(X, labels)
    v = rf.vote_fractions(X)
    np.testing.assert_allclose(v.sum(axis=1), 1.0)
    codes = np.column_stack([t.predict(X).astype(int) for t in rf.estimators_])
    for k in range(3):
        np.testing.assert_allclose(v[:, k], (codes == k).mean(axis=1))
    m = rf.margins(X, labels)
    assert np.all((m >= -1) & (m <= 1))
    rows = np.arange(y.size)
    others = np.where(np.eye(3, dtype=bool)[y], -np.inf, v).max(axis=1)
    np.testing.assert_allclose(m, v[rows, y] - others)
    assert np.all(v.argmax(axis=1)[m > 0] == y[m > 0])  # a positive margin: a right majority
    assert np.all(v.argmax(axis=1)[m < 0] != y[m < 0])
    assert np.any(m < 1)  # depth-2 trees disagree somewhere


def test_margin_errors(breast_cancer):
    X, y = breast_cancer.X, breast_cancer.y
    bag = Bagging(n_estimators=3, random_state=0).fit(X, y)
    with pytest.raises(ValueError, match="classes_"):
        bag.margins(X, np.full(y.shape, 7.0))
    with pytest.raises(ValueError, match="rows"):
        bag.margins(X[:10], y[:11])
    with pytest.raises(ValueError, match="one output"):
        RandomForest(n_estimators=3).fit(X, np.c_[y, y]).margins(X, y)
    from sklearn.exceptions import NotFittedError

    with pytest.raises(NotFittedError):
        RandomForest().margins(X, y)


def test_random_forest_oob_score_close_to_sklearn(breast_cancer):
    X, y = breast_cancer.X, breast_cancer.y
    ours = RandomForest(n_estimators=300, oob_score=True, random_state=0).fit(X, y)
    ref = sk.RandomForestClassifier(n_estimators=300, oob_score=True, random_state=1).fit(X, y)
    assert abs(ours.oob_score_ - ref.oob_score_) <= 0.03
    assert ours.oob_decision_function_.shape == (X.shape[0], 2)


def test_oob_decision_function_is_the_out_of_bag_average(breast_cancer):
    """Recompute the OOB estimate from its definition: the members whose bag left x out."""
    X, y = breast_cancer.X, breast_cancer.y
    bag = Bagging(n_estimators=40, oob_score=True, random_state=0).fit(X, y)
    total = np.zeros((X.shape[0], 2))
    for est, samples in zip(bag.estimators_, bag.estimators_samples_, strict=True):
        out = np.setdiff1d(np.arange(X.shape[0]), samples)
        total[out] += est.predict_proba(X[out])
    expected = total / total.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(bag.oob_decision_function_, expected, atol=1e-12)
    assert bag.oob_score_ == pytest.approx(np.mean(bag.classes_[expected.argmax(1)] == y))
    reg = BaggingRegressor(n_estimators=40, oob_score=True, random_state=0).fit(X, y)
    assert reg.oob_prediction_.shape == (X.shape[0],)


def test_estimators_keep_sklearn_parameters_and_api(breast_cancer):
    from sklearn.base import clone, is_classifier, is_regressor

    for cls in (Bagging, RandomForest, ExtraTrees):
        assert is_classifier(cls())
        assert clone(cls(n_estimators=7)).get_params()["n_estimators"] == 7
    for cls in (BaggingRegressor, RandomForestRegressor, ExtraTreesRegressor):
        assert is_regressor(cls())
    assert RandomForest().max_features == "sqrt"  # m ≈ √d features per split
    X = breast_cancer.X.copy()
    Bagging(n_estimators=2, random_state=0).fit(X, breast_cancer.y)
    np.testing.assert_array_equal(X, breast_cancer.X)  # nothing passed in is modified


def test_smaller_k_lowers_extra_trees_variance():
    """Geurts et al.: fewer random attributes per node, more bias and less variance."""
    from margin_opt import bias_variance

    d = load_dataset("diabetes")
    kw = {"n_bootstrap": 30, "random_state": 0}
    k1 = bias_variance(ExtraTreesRegressor(n_estimators=10, max_features=1), d.X, d.y, **kw)
    kd = bias_variance(ExtraTreesRegressor(n_estimators=10, max_features=None), d.X, d.y, **kw)
    assert k1.variance < kd.variance
    assert k1.bias2 > kd.bias2


# scikit-learn's estimator checks of the ensembles: tests/test_sklearn_checks.py
