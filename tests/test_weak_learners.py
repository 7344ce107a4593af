"""Weighted decision stumps against brute force and scikit-learn's depth-1 trees."""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.tree import DecisionTreeClassifier

from margin_opt.weak_learners import DecisionStump, Stump, StumpSearch


def brute_force_error(X, y, w):
    """Least weighted error over every (feature, threshold, sign), by enumeration."""
    best = min(w[y > 0].sum(), w[y < 0].sum())  # constant classifiers
    for j in range(X.shape[1]):
        for thr in np.unique(X[:, j]):
            for s in (1, -1):
                h = np.where(X[:, j] > thr, s, -s)
                best = min(best, w[h != y].sum())
    return best / w.sum()


def _data(seed, n=40, d=4, levels=5):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, levels, size=(n, d)).astype(float)  # many ties
    X[:, 0] = 3.0  # a constant feature
    y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    w = rng.random(n) ** 3
    w[rng.random(n) < 0.2] = 0.0  # some zero weights
    if w.sum() == 0:
        w[0] = 1.0
    return X, y, w


@pytest.mark.parametrize("seed", range(25))
def test_stump_is_exact_minimizer(seed):
    X, y, w = _data(seed)
    stump = StumpSearch(X, y).best(w)
    assert stump.error == pytest.approx(brute_force_error(X, y, w), abs=1e-12)
    # the reported error is the error of the stump returned
    h = stump.predict(X)
    assert stump.error == pytest.approx(w[h != y].sum() / w.sum(), abs=1e-15)
    # a threshold never splits tied values: it lies strictly between data values
    if np.isfinite(stump.threshold):
        assert not np.any(X[:, stump.feature] == stump.threshold)


def test_constant_features_give_constant_classifier():
    X = np.ones((6, 3))
    y = np.array([1, 1, 1, -1, -1, 1.0])
    stump = StumpSearch(X, y).best(np.ones(6))
    assert stump.threshold == -np.inf
    assert np.all(stump.predict(X) == 1.0)
    assert stump.error == pytest.approx(2 / 6)


def test_perfect_stump_has_error_exactly_zero():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 5))
    y = np.where(X[:, 3] > 0.1, -1.0, 1.0)
    stump = StumpSearch(X, y).best(rng.random(200))
    assert stump.error == 0.0
    assert (stump.feature, stump.polarity) == (3, -1)


def test_adjacent_floats_threshold_separates():
    a = 1.0
    b = np.nextafter(a, 2.0)
    X = np.array([[a], [a], [b], [b]])
    y = np.array([-1.0, -1.0, 1.0, 1.0])
    stump = StumpSearch(X, y).best(np.ones(4))
    assert stump.error == 0.0
    assert np.array_equal(stump.predict(X), y)


@pytest.mark.parametrize("seed", range(5))
def test_never_worse_than_sklearn_depth1_tree(seed):
    # a depth-1 tree splits by Gini, our stump by the weighted error itself
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(300, 6))
    y = np.where(X[:, 0] + 0.5 * X[:, 1] + rng.normal(size=300) > 0, 1.0, -1.0)
    w = rng.random(300)
    tree = DecisionTreeClassifier(max_depth=1).fit(X, y, sample_weight=w)
    tree_err = w[tree.predict(X) != y].sum() / w.sum()
    ours = StumpSearch(X, y).best(w).error
    assert ours <= tree_err + 1e-12


def test_decision_stump_classifier_any_labels_and_sparse():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(100, 4))
    labels = np.where(X[:, 2] > 0.3, "yes", "no")
    clf = DecisionStump().fit(X, labels)
    assert list(clf.classes_) == ["no", "yes"]
    assert clf.error_ == 0.0 and clf.feature_ == 2
    assert np.array_equal(clf.predict(X), labels)
    clf_sp = DecisionStump().fit(sp.csr_matrix(X), labels)
    assert clf_sp.stump_ == clf.stump_
    assert np.array_equal(clf_sp.predict(sp.csr_matrix(X)), labels)


def test_decision_stump_rejects_bad_input_and_keeps_it():
    X = np.array([[0.0], [1.0], [2.0]])
    with pytest.raises(ValueError, match="single class"):
        DecisionStump().fit(X, [1, 1, 1])
    with pytest.raises(ValueError, match="NaN"):
        DecisionStump().fit([[np.nan], [1.0]], [0, 1])
    w = np.array([1.0, 2.0, 3.0])
    DecisionStump().fit(X, [0, 1, 1], sample_weight=w)
    assert np.array_equal(w, [1.0, 2.0, 3.0])


def test_stump_predict_is_pm_one():
    s = Stump(feature=1, threshold=0.5, polarity=-1)
    X = np.array([[9.0, 0.0], [9.0, 1.0]])
    assert np.array_equal(s.predict(X), [1.0, -1.0])
