"""SAMME: against scikit-learn's AdaBoostClassifier, brute force, and the two-class fit."""

import numpy as np
import pytest
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.datasets import load_digits, load_iris, make_classification
from sklearn.ensemble import AdaBoostClassifier
from sklearn.model_selection import cross_val_score
from sklearn.tree import DecisionTreeClassifier

from margin_opt import AdaBoost
from margin_opt.problems.boosting import closed_form_alpha
from margin_opt.weak_learners import MulticlassStumpSearch

RECORDS = ("estimators_", "estimator_weights_", "estimator_errors_", "normalizers_",
           "train_errors_", "error_bounds_", "exp_bounds_", "stage_gradients_")


@pytest.fixture(scope="module")
def iris():
    return load_iris(return_X_y=True)


def test_same_fit_as_sklearn_samme_with_the_same_trees(iris):
    X, y = iris
    ours = AdaBoost(weak_learner=DecisionTreeClassifier(max_depth=1), n_estimators=30,
                    random_state=0).fit(X, y)
    ref = AdaBoostClassifier(DecisionTreeClassifier(max_depth=1), n_estimators=30,
                             random_state=0).fit(X, y)
    t, k = ours.n_iter_, 3
    np.testing.assert_allclose(ours.estimator_errors_, ref.estimator_errors_[:t], atol=1e-12)
    # SAMME's α is ours × k/(k − 1)²
    np.testing.assert_allclose(ours.estimator_weights_ * k / (k - 1) ** 2,
                               ref.estimator_weights_[:t], atol=1e-12)
    np.testing.assert_array_equal(ours.predict(X), ref.predict(X))
    for ours_t, ref_t in zip(ours.staged_predict(X), ref.staged_predict(X), strict=False):
        np.testing.assert_array_equal(ours_t, ref_t)


def test_records_and_certificate(iris):
    X, y = iris
    model = AdaBoost(n_estimators=40, verify=True).fit(X, y)
    k, eps = 3, model.estimator_errors_
    assert model.certificate_.ok, model.certificate_
    assert np.all(model.train_errors_ <= model.error_bounds_)
    assert model.exp_bounds_ is None and model.n_classes_ == 3
    # Z of the multiclass exponential loss in closed form at the exact line search
    z = k / (k - 1) * eps ** ((k - 1) / k) * ((1 - eps) * (k - 1)) ** (1 / k)
    np.testing.assert_allclose(model.normalizers_, z, rtol=1e-12)
    np.testing.assert_allclose(model.verified_weights_, model.stage_weights_, atol=1e-6)
    np.testing.assert_array_equal(model.estimator_weights_, closed_form_alpha(eps, k))
    F = model.decision_function(X)
    assert F.shape == (150, 3) and np.allclose(F.sum(axis=1), 0.0)
    P = model.predict_proba(X)
    np.testing.assert_allclose(P.sum(axis=1), 1.0)
    np.testing.assert_array_equal(model.classes_[P.argmax(axis=1)], model.predict(X))
    m = model.margins(X, y)
    assert np.all(np.abs(m) <= 1 + 1e-12)
    assert np.isclose(np.mean(m <= 0), model.train_errors_[-1])
    with pytest.raises(ValueError, match="two classes"):
        model.max_margin_lp(X, y)
    with pytest.raises(ValueError, match="two classes"):
        AdaBoost(totally_corrective=True).fit(X, y)


def test_multiclass_stump_is_the_brute_force_minimum():
    rng = np.random.default_rng(0)
    X = np.round(rng.normal(size=(40, 3)), 1)          # ties: thresholds between values
    y = rng.integers(0, 4, 40)
    w = rng.random(40)
    w /= w.sum()
    best = np.inf
    for j in range(3):
        for thr in np.r_[-np.inf, np.unique(X[:, j])]:
            right = X[:, j] > thr
            err = w.sum() - max(np.bincount(y[~right], w[~right], 4)) - \
                max(np.bincount(y[right], w[right], 4))
            best = min(best, err)
    stump = MulticlassStumpSearch(X, y, 4).best(w)
    assert abs(stump.error - best) < 1e-12
    assert abs(stump.error - w[stump.predict(X) != y].sum()) < 1e-15


class _MulticlassStumpOnTwoClasses(ClassifierMixin, BaseEstimator):
    """The k-class stump search used as a ±1 learner (for the k = 2 reduction)."""

    def fit(self, X, y, sample_weight=None):
        self.classes_ = np.array([-1.0, 1.0])
        self.stump_ = MulticlassStumpSearch(X, (y > 0).astype(int), 2).best(sample_weight)
        return self

    def predict(self, X):
        return np.where(self.stump_.predict(X) == 1, 1.0, -1.0)


def test_two_classes_reduce_exactly_to_the_binary_fit():
    X, y = make_classification(300, 5, n_informative=3, random_state=4)   # no ties
    binary = AdaBoost(n_estimators=40).fit(X, y)
    samme = AdaBoost(weak_learner=_MulticlassStumpOnTwoClasses(), n_estimators=40).fit(X, y)
    for name in RECORDS[1:]:
        np.testing.assert_array_equal(getattr(samme, name), getattr(binary, name), err_msg=name)
    np.testing.assert_array_equal(samme.decision_function(X), binary.decision_function(X))
    assert binary.decision_function(X).ndim == 1
    np.testing.assert_allclose(binary.predict_proba(X)[:, 1],
                               1 / (1 + np.exp(-2 * binary.decision_function(X))))
    np.testing.assert_array_equal(closed_form_alpha(binary.estimator_errors_, 2),
                                  binary.estimator_weights_)


def test_digits_cv_within_two_points_of_sklearn():
    X, y = load_digits(return_X_y=True)
    ours = cross_val_score(AdaBoost(n_estimators=100), X, y, cv=3).mean()
    ref = cross_val_score(AdaBoostClassifier(DecisionTreeClassifier(max_depth=1),
                                             n_estimators=100), X, y, cv=3).mean()
    assert ours >= ref - 0.02
