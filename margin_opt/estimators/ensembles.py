"""Bagging, random forests and extremely randomized trees, with vote margins and bag statistics.

The ensembles are scikit-learn's (``BaggingClassifier``, ``RandomForestClassifier``,
``ExtraTreesClassifier`` and their regressors), subclassed without changing how they
grow trees, draw bags, vote or score out of bag.  Each adds what the lecture asks of it:

- ``bag_unique_fraction_``: the fraction of the n training points that appear in each
  bag, whose expectation is ``1 − (1 − 1/n)^m`` for bags of m draws with replacement
  (≈ 1 − 1/e ≈ 0.632 when m = n);
- for classifiers, ``vote_fractions(X)`` and ``margins(X, y)``: the normalized vote
  margin, the same quantity as :meth:`margin_opt.AdaBoost.margins` with equal weights,
  so that bagging and boosting margins can be compared on one plot.

Classifiers and regressors are separate classes, as in scikit-learn: an estimator's
type (its tags, ``score``, stratified cross-validation) must not depend on the data,
and integer-valued targets cannot tell regression from classification.

References
----------
L. Breiman, "Bagging predictors", Machine Learning 24(2), 1996.
L. Breiman, "Random forests", Machine Learning 45(1), 2001 (margins of a vote).
P. Geurts, D. Ernst and L. Wehenkel, "Extremely randomized trees", Machine Learning
63(1), 2006 (the 2005 technical report of the lecture notes).
R. E. Schapire, Y. Freund, P. Bartlett and W. S. Lee, "Boosting the margin", Ann.
Statist. 26(5), 1998 (normalized margins of a weighted vote).
"""

from __future__ import annotations

import numpy as np
from sklearn import ensemble as _sk
from sklearn.utils.validation import _num_samples, check_is_fitted, validate_data

from ..validation import advise_non_numeric

__all__ = [
    "Bagging",
    "BaggingRegressor",
    "ExtraTrees",
    "ExtraTreesRegressor",
    "RandomForest",
    "RandomForestRegressor",
]

_BAG_ATTRIBUTES = """
    bag_unique_fraction_ : ndarray of shape (n_estimators,)
        Fraction of the n training points that appear in each member's bag
        (``len(unique(D_b)) / n``).  Expected value ``1 − (1 − 1/n)^m`` for bags of
        m draws with replacement (≈ 1 − 1/e ≈ 0.632 for m = n); ``m / n`` without
        replacement; 1 for a forest with ``bootstrap=False``.
    bag_size_ : int
        Draws per bag, m (``max_samples`` resolved against n).
"""


class _BagStatistics:
    """Records ``bag_unique_fraction_`` and ``bag_size_`` after scikit-learn's fit."""

    def _record_bags(self, X):
        n = _num_samples(X)
        samples = self.estimators_samples_
        self.bag_size_ = int(len(samples[0]))
        self.bag_unique_fraction_ = np.array([np.unique(s).size / n for s in samples])
        return self


class _BaggingFit(_BagStatistics):
    def fit(self, X, y, sample_weight=None, **fit_params):
        """Fit one member per bag (scikit-learn's fit), then record the bags.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,), optional
            Bags are then drawn with probabilities proportional to the weights.
        **fit_params : dict
            Passed to the members' ``fit``.

        Returns
        -------
        self
        """
        with advise_non_numeric(X):
            super().fit(X, y, sample_weight=sample_weight, **fit_params)
        return self._record_bags(X)

    def _member_inputs(self, X):
        check_is_fitted(self)
        X = validate_data(self, X, accept_sparse=["csr", "csc"], dtype=None,
                          ensure_all_finite=False, reset=False)
        full = np.arange(self.n_features_in_)
        for est, feats in zip(self.estimators_, self.estimators_features_, strict=True):
            same = feats.size == full.size and np.array_equal(feats, full)
            yield est, (X if same else X[:, feats])


class _ForestFit(_BagStatistics):
    def fit(self, X, y, sample_weight=None):
        """Grow the forest (scikit-learn's fit), then record the bags.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,), optional

        Returns
        -------
        self
        """
        with advise_non_numeric(X):
            super().fit(X, y, sample_weight=sample_weight)
        return self._record_bags(X)

    def _member_inputs(self, X):
        X = self._validate_X_predict(X)
        if self.n_outputs_ != 1:
            raise ValueError(f"vote margins are defined for one output; this forest was fitted "
                             f"on {self.n_outputs_} outputs. Fit one forest per output.")
        for est in self.estimators_:
            yield est, X


class _VoteMargins:
    """Hard-vote fractions and normalized margins of a fitted classification ensemble."""

    def vote_fractions(self, X) -> np.ndarray:
        """Fraction of the members whose prediction is each class (hard votes).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        fractions : ndarray of shape (n_samples, n_classes)
            Columns in the order of ``classes_``; each row sums to 1.

        Notes
        -----
        Members are fitted on class indices (scikit-learn encodes y), so each
        member's ``predict`` is an index into ``classes_``.  ``predict`` itself
        averages ``predict_proba`` (soft voting); for fully grown trees, whose
        leaves are pure, the two coincide.
        """
        counts = None
        for est, Xe in self._member_inputs(X):
            codes = np.asarray(est.predict(Xe)).astype(np.intp)
            if counts is None:
                counts = np.zeros((codes.shape[0], len(self.classes_)))
            counts[np.arange(codes.shape[0]), codes] += 1.0
        return counts / len(self.estimators_)

    def margins(self, X, y) -> np.ndarray:
        """Normalized vote margins ``v_y(x) − max_{j ≠ y} v_j(x)`` ∈ [−1, 1].

        ``v_j(x)`` is the fraction of members voting for class j.  For two classes
        this is ``y · (1/B) Σ_b h_b(x)`` with ``h_b = ±1``: AdaBoost's normalized margin
        ``y H(x) / Σ α`` (:meth:`margin_opt.AdaBoost.margins`) with all αₜ equal.
        A margin > 0 means the majority vote is right; 1 means unanimous.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
            Labels from ``classes_``.

        Returns
        -------
        margins : ndarray of shape (n_samples,)

        Raises
        ------
        ValueError
            Labels not in ``classes_``, or ``len(y)`` different from the rows of X.

        References
        ----------
        L. Breiman, "Random forests", Machine Learning 45(1), 2001, Sec. 2.1.
        R. E. Schapire et al., "Boosting the margin", Ann. Statist. 26(5), 1998.
        """
        check_is_fitted(self)
        y = np.asarray(y)
        known = np.isin(y, self.classes_)
        if y.ndim != 1 or not known.all():
            bad = np.unique(y[~known]) if y.ndim == 1 else y.shape
            raise ValueError(f"y must be a 1-D array of labels from classes_ = {self.classes_!r}; "
                             f"got {bad!r}.")
        v = self.vote_fractions(X)
        if v.shape[0] != y.shape[0]:
            raise ValueError(f"X has {v.shape[0]} rows but y has {y.shape[0]} labels.")
        rows = np.arange(y.shape[0])
        idx = np.searchsorted(self.classes_, y)
        true = v[rows, idx]
        others = v.copy()
        others[rows, idx] = 0.0
        return true - others.max(axis=1, initial=0.0)


_COMMON = """n_jobs : int or None, default=None
        Members fitted in parallel by joblib (so a Dask backend works).
    random_state : int, RandomState instance or None, default=None
"""


def _doc(summary, parent, params, members, score, refs, classifier=True):
    """Assemble a class docstring: what the lecture names, the rest is the parent's."""
    oob = ("oob_decision_function_ : ndarray of shape (n_samples, n_classes)\n"
           "        Out-of-bag class probabilities (``oob_score=True``)." if classifier else
           "oob_prediction_ : ndarray of shape (n_samples,)\n"
           "        Out-of-bag average prediction (``oob_score=True``).")
    classes = "classes_ : ndarray of shape (n_classes,)\n    " if classifier else ""
    methods = ("\n    Methods\n    -------\n    vote_fractions(X) : fraction of the members "
               "voting for each class.\n    margins(X, y) : normalized vote margins in "
               "[−1, 1].\n" if classifier else "")
    return f"""{summary}

    scikit-learn's :class:`~sklearn.ensemble.{parent}` (same parameters and fit; every
    parameter is documented there), with bag statistics{" and vote margins" if classifier
    else ""}.  The lecture's parameters:

    Parameters
    ----------
    {params.strip()}
    {_COMMON.strip()}

    Attributes
    ----------
    estimators_ : list of {members}
    {classes}oob_score_ : float
        {score} of the out-of-bag prediction (``oob_score=True``).
    {oob}
    {_BAG_ATTRIBUTES.strip()}
    {methods}
    References
    ----------
    {refs.strip()}
    """


_BREIMAN_BAGGING = 'L. Breiman, "Bagging predictors", Machine Learning 24(2), 1996.'
_BREIMAN_RF = 'L. Breiman, "Random forests", Machine Learning 45(1), 2001.'
_GEURTS = """P. Geurts, D. Ernst and L. Wehenkel, "Extremely randomized trees", Machine Learning
    63(1), 2006."""
_BAGS = """n_estimators : int, default=10
        Number of bags B.
    max_samples : int or float, default=None
        Bag size m: an int, a fraction of n, or None for m = n (choose m < n when the
        data set is very large).
    max_features : int or float, default=1.0
        Features drawn per bag (random subspaces; 1.0 = all).
    bootstrap : bool, default=True
        Draw bags with replacement.
    oob_score : bool, default=False
        Score each point with the members whose bag left it out."""
_FOREST = """n_estimators : int, default=100
        Number of trees (bags) B.
    max_samples : int or float, default=None
        Bag size m (None: n).
    bootstrap : bool, default={bootstrap}
    oob_score : bool, default=False
        Needs ``bootstrap=True``."""


class Bagging(_VoteMargins, _BaggingFit, _sk.BaggingClassifier):
    __doc__ = _doc(
        "Bagging classifier: one model per bootstrap replicate, majority vote.",
        "BaggingClassifier",
        """estimator : classifier, default=None
        The base learner; None means a fully grown
        :class:`~sklearn.tree.DecisionTreeClassifier` (an unstable learner, for which
        bagging helps most).
    """ + _BAGS, "fitted classifiers", "Accuracy", _BREIMAN_BAGGING)


class RandomForest(_VoteMargins, _ForestFit, _sk.RandomForestClassifier):
    __doc__ = _doc(
        "Random forest classifier: bagged deep trees, each split among m random features.",
        "RandomForestClassifier",
        _FOREST.format(bootstrap="True") + """
    max_features : {"sqrt", "log2"}, int, float or None, default="sqrt"
        Features examined per split, m ≈ √d by default.""",
        "DecisionTreeClassifier", "Accuracy", _BREIMAN_RF)


class ExtraTrees(_VoteMargins, _ForestFit, _sk.ExtraTreesClassifier):
    __doc__ = _doc(
        """Extremely randomized trees: K random attributes, a random cut each, the best kept.

    At each node K attributes are drawn, one uniformly random threshold for each, and
    the best of the K tests by the impurity ``criterion`` is installed.  Smaller K: more
    randomization, more bias, less variance.  Geurts et al. score tests by a normalized
    information gain; ``criterion="entropy"`` uses the (unnormalized) information gain,
    the default ``"gini"`` the Gini decrease.""",
        "ExtraTreesClassifier",
        _FOREST.format(bootstrap="False (Geurts et al. grow every tree on the whole "
                       "sample)") + """
    max_features : {"sqrt", "log2"}, int, float or None, default="sqrt"
        K, the attributes drawn per node (Geurts et al.'s default for classification
        is √d).
    criterion : {"gini", "entropy", "log_loss"}, default="gini\"""",
        "ExtraTreeClassifier", "Accuracy", _GEURTS)


class BaggingRegressor(_BaggingFit, _sk.BaggingRegressor):
    __doc__ = _doc(
        "Bagging regressor: one model per bootstrap replicate, predictions averaged.",
        "BaggingRegressor",
        """estimator : regressor, default=None
        The base learner; None means a fully grown regression tree.
    """ + _BAGS, "fitted regressors", "R²", _BREIMAN_BAGGING, classifier=False)


class RandomForestRegressor(_ForestFit, _sk.RandomForestRegressor):
    __doc__ = _doc(
        "Random forest regressor: bagged deep regression trees with random splits.",
        "RandomForestRegressor",
        _FOREST.format(bootstrap="True") + """
    max_features : {"sqrt", "log2"}, int, float or None, default=1.0
        Features examined per split (1.0: all d, as scikit-learn; Breiman suggests
        d/3).""",
        "DecisionTreeRegressor", "R²", _BREIMAN_RF, classifier=False)


class ExtraTreesRegressor(_ForestFit, _sk.ExtraTreesRegressor):
    __doc__ = _doc(
        "Extremely randomized regression trees (K random attributes, random cuts).",
        "ExtraTreesRegressor",
        _FOREST.format(bootstrap="False") + """
    max_features : {"sqrt", "log2"}, int, float or None, default=1.0
        K (1.0: K = d, Geurts et al.'s default for regression).""",
        "ExtraTreeRegressor", "R²", _GEURTS, classifier=False)
