"""Weak learners for boosting: weighted decision stumps, found exactly.

A decision stump is ``h(x) = s`` if ``x[j] > θ`` else ``−s``: one feature ``j``,
one threshold ``θ`` and one sign (polarity) ``s ∈ {−1, +1}``; with k classes
(:class:`MulticlassStump`) it predicts one class on each side of θ.  Given sample
weights ``wᵢ ≥ 0`` the best stump minimizes the weighted error
``ε = Σᵢ wᵢ 1[h(xᵢ) ≠ yᵢ] / Σᵢ wᵢ``.

:class:`StumpSearch` sorts every feature once (``O(n d log n)``) and then finds
the exact minimizer for any weights in ``O(n d)`` by scanning cumulative
weights along each sorted feature (a numba loop).  Only thresholds between two
distinct values are considered (ties cannot be split), and the threshold
``−∞`` (every point on the right: the constant classifier ``±1``) is always a
candidate, so a constant feature yields the constant classifier and the class
of stumps equals that of depth-1 decision trees (whose two leaves may agree).

References
----------
Y. Freund and R. E. Schapire, "A decision-theoretic generalization of on-line
learning and an application to boosting", JCSS 55(1), 1997.
T. Hastie, R. Tibshirani and J. Friedman, *The Elements of Statistical
Learning*, 2nd ed., Springer 2009, §10.1 (stumps as weak learners).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from numba import njit
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.validation import check_is_fitted

from .jit import announce_compiles
from .validation import (
    canonical,
    check_binary_labels,
    check_data,
    check_sample_weight,
    validate_data,
)

announce_compiles()  # one line on stderr when this process first compiles our code

__all__ = ["Stump", "StumpSearch", "DecisionStump", "as_dense", "MulticlassStump",
           "MulticlassStumpSearch"]


@njit(cache=True)
def _scan_stumps(order, split_ok, wy, w_neg, w_total):
    """Best (feature, split position, polarity, error) over all stumps.

    ``order[j]`` sorts feature ``j``; ``split_ok[j, k]`` says whether the sorted
    values ``k`` and ``k + 1`` differ; ``wy = w * y``.  Position ``k = −1`` is
    the threshold −∞.  For polarity +1 (right of θ predicted +1) the error with
    the first ``k + 1`` sorted points on the left is
    ``w_neg + Σ_{i ≤ k} wy[order[i]]``; polarity −1 has ``w_total`` minus that.
    """
    d, n = order.shape
    best_err = w_neg
    best_j = 0
    best_k = -1
    best_s = 1
    if w_total - w_neg < best_err:
        best_err = w_total - w_neg
        best_s = -1
    for j in range(d):
        err = w_neg
        for k in range(n - 1):
            err += wy[order[j, k]]
            if split_ok[j, k]:
                if err < best_err:
                    best_err = err
                    best_j = j
                    best_k = k
                    best_s = 1
                if w_total - err < best_err:
                    best_err = w_total - err
                    best_j = j
                    best_k = k
                    best_s = -1
    return best_j, best_k, best_s, best_err


@dataclass(frozen=True)
class Stump:
    """A fitted decision stump ``h(x) = polarity`` if ``x[feature] > threshold`` else ``−polarity``.

    Attributes
    ----------
    feature : int
        Index of the feature tested.
    threshold : float
        θ; ``-inf`` for the constant classifier ``h ≡ polarity``.
    polarity : int
        +1 or −1.
    error : float
        Weighted training error (weights normalized to sum 1) when it was fitted.
    """

    feature: int
    threshold: float
    polarity: int
    error: float = np.nan

    def predict(self, X) -> np.ndarray:
        """±1 predictions, ndarray of shape (n_samples,), for X of shape (n_samples, n_features)."""
        return np.where(_column(X, self.feature) > self.threshold, self.polarity,
                        -self.polarity).astype(float)


def _column(X, j) -> np.ndarray:
    """Feature j of dense or sparse X as a 1-D ndarray."""
    col = X[:, j]
    return np.asarray(col.toarray() if sp.issparse(col) else col).ravel()


def as_dense(X) -> np.ndarray:
    """A C-contiguous float64 dense array of X (sparse matrices are densified)."""
    if sp.issparse(X):
        X = X.toarray()
    return np.ascontiguousarray(X, dtype=np.float64)


class StumpSearch:
    """Exact weighted-error minimization over decision stumps on fixed data.

    Sorts each feature once at construction; :meth:`best` then costs ``O(n d)``.

    Parameters
    ----------
    X : {ndarray, sparse matrix} of shape (n_samples, n_features)
        Finite training features (sparse input is densified).
    y : ndarray of shape (n_samples,)
        Labels in {−1, +1}.

    Attributes
    ----------
    order : ndarray of shape (n_features, n_samples)
        ``order[j]`` sorts feature ``j`` ascending (stable).
    sorted_values : ndarray of shape (n_features, n_samples)
    split_ok : ndarray of bool of shape (n_features, n_samples - 1)
        Whether a threshold may separate sorted positions ``k`` and ``k + 1``.
    """

    def __init__(self, X, y):
        X = as_dense(X)
        self.y = np.asarray(y, dtype=np.float64)
        if X.shape[0] < 2**31:
            idx_dtype = np.int32
        else:  # pragma: no cover - more samples than fit in memory here
            idx_dtype = np.int64
        order = np.argsort(X, axis=0, kind="stable")
        self.sorted_values = np.ascontiguousarray(np.take_along_axis(X, order, axis=0).T)
        self.order = np.ascontiguousarray(order.T, dtype=idx_dtype)
        self.split_ok = np.ascontiguousarray(self.sorted_values[:, :-1] < self.sorted_values[:, 1:])

    def _threshold(self, j, k) -> float:
        """θ between sorted positions k and k + 1 of feature j (−∞ for k = −1)."""
        if k < 0:
            return -np.inf
        a, b = self.sorted_values[j, k], self.sorted_values[j, k + 1]
        thr = a + (b - a) / 2.0
        return thr if thr < b else a   # a and b adjacent floats: the midpoint rounded up

    def best(self, sample_weight) -> Stump:
        """The stump of least weighted error (first one found on ties).

        Parameters
        ----------
        sample_weight : ndarray of shape (n_samples,)
            Weights ≥ 0, not all zero (need not sum to 1).

        Returns
        -------
        stump : Stump
            With ``error`` recomputed directly as ``Σ wᵢ 1[h(xᵢ) ≠ yᵢ] / Σ wᵢ``
            (exactly 0.0 for a perfect stump, free of scan round-off).
        """
        w = np.asarray(sample_weight, dtype=np.float64)
        w_total = float(w.sum())
        w_neg = float(w[self.y < 0].sum())
        j, k, s, _ = _scan_stumps(self.order, self.split_ok, w * self.y, w_neg, w_total)
        thr = self._threshold(j, k)
        h_pos = self.sorted_values[j] > thr  # in sorted order of feature j
        miss = np.where(h_pos, s, -s) != self.y[self.order[j]]
        err = float(w[self.order[j]][miss].sum() / w_total)
        return Stump(int(j), float(thr), int(s), err)


@njit(cache=True)
def _scan_multiclass_stumps(order, split_ok, y, w, n_classes):
    """Best (feature, split position, left class, right class, correct weight).

    With the first ``pos + 1`` sorted points of feature ``j`` on the left, the best
    classes are the heaviest class on each side; the weight predicted correctly is
    max_c L_c + max_c (T_c − L_c) for the class weights L on the left and T in total.
    Position −1 (threshold −∞) is the constant classifier.
    """
    d, n = order.shape
    total = np.zeros(n_classes)
    for i in range(n):
        total[y[i]] += w[i]
    best_c = 0
    for c in range(1, n_classes):
        if total[c] > total[best_c]:
            best_c = c
    best_gain = total[best_c]
    best_j, best_pos, best_left, best_right = 0, -1, best_c, best_c
    left = np.zeros(n_classes)
    for j in range(d):
        left[:] = 0.0
        for pos in range(n - 1):
            i = order[j, pos]
            left[y[i]] += w[i]
            if split_ok[j, pos]:
                cl, cr = 0, 0
                for c in range(1, n_classes):
                    if left[c] > left[cl]:
                        cl = c
                    if total[c] - left[c] > total[cr] - left[cr]:
                        cr = c
                gain = left[cl] + (total[cr] - left[cr])
                if gain > best_gain:
                    best_gain, best_j, best_pos, best_left, best_right = gain, j, pos, cl, cr
    return best_j, best_pos, best_left, best_right, best_gain


@dataclass(frozen=True)
class MulticlassStump:
    """A fitted k-class decision stump: class ``right`` if ``x[feature] > threshold`` else ``left``.

    Attributes
    ----------
    feature : int
    threshold : float
        θ; ``-inf`` for the constant classifier (always ``right``).
    left, right : int
        Class indices (positions in the estimator's ``classes_``).
    error : float
        Weighted training error (weights normalized to sum 1) when it was fitted.
    """

    feature: int
    threshold: float
    left: int
    right: int
    error: float = np.nan

    def predict(self, X) -> np.ndarray:
        """Class indices, ndarray of int of shape (n_samples,)."""
        return np.where(_column(X, self.feature) > self.threshold, self.right, self.left)


class MulticlassStumpSearch(StumpSearch):
    """Exact weighted-error minimization over k-class decision stumps on fixed data.

    Each side of the threshold predicts its heaviest class; sorting is done once at
    construction (as :class:`StumpSearch`), then :meth:`best` costs ``O(n d k)``.

    Parameters
    ----------
    X : {ndarray, sparse matrix} of shape (n_samples, n_features)
    y : ndarray of int of shape (n_samples,)
        Class indices in ``range(n_classes)``.
    n_classes : int
    """

    def __init__(self, X, y, n_classes):
        super().__init__(X, np.zeros(np.shape(y)[0]))
        self.y = np.ascontiguousarray(y, dtype=np.int64)
        self.n_classes = int(n_classes)

    def best(self, sample_weight) -> MulticlassStump:
        """The stump of least weighted error (first one found on ties).

        Parameters
        ----------
        sample_weight : ndarray of shape (n_samples,)
            Weights ≥ 0, not all zero.

        Returns
        -------
        stump : MulticlassStump
            ``error`` recomputed directly as ``Σ wᵢ 1[h(xᵢ) ≠ yᵢ] / Σ wᵢ``.
        """
        w = np.ascontiguousarray(sample_weight, dtype=np.float64)
        j, pos, left, right, _ = _scan_multiclass_stumps(self.order, self.split_ok, self.y, w,
                                                         self.n_classes)
        thr = self._threshold(j, pos)
        h = np.where(self.sorted_values[j] > thr, right, left)
        miss = h != self.y[self.order[j]]
        err = float(w[self.order[j]][miss].sum() / w.sum())
        return MulticlassStump(int(j), float(thr), int(left), int(right), err)


class DecisionStump(ClassifierMixin, BaseEstimator):
    """Weighted decision stump classifier (exact minimizer of the weighted error).

    A scikit-learn classifier for any two labels; AdaBoost uses
    :class:`StumpSearch` directly to sort the data only once per fit.

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
    n_features_in_ : int
    stump_ : Stump
        The fitted stump (on labels −1 for ``classes_[0]``, +1 for ``classes_[1]``).
    feature_ : int
    threshold_ : float
    polarity_ : int
    error_ : float
        Weighted training error with the weights normalized to sum 1.

    References
    ----------
    W. Iba and P. Langley, "Induction of one-level decision trees", ICML 1992.
    """

    _parameter_constraints: dict = {}

    def __init__(self):
        pass

    def fit(self, X, y, sample_weight=None):
        """Fit the stump of least weighted error.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
            Two distinct labels.
        sample_weight : array-like of shape (n_samples,), optional
            Weights ≥ 0 (default: uniform).

        Returns
        -------
        self : DecisionStump

        Raises
        ------
        ValueError
            NaN/inf in X, one class only or more than two, invalid weights.
        """
        self._validate_params()
        X, y = check_data(X, y)
        self.n_features_in_ = X.shape[1]
        y_pm, self.classes_ = check_binary_labels(y)
        sw = check_sample_weight(sample_weight, X)
        self.stump_ = StumpSearch(X, y_pm).best(sw)
        self.feature_ = self.stump_.feature
        self.threshold_ = self.stump_.threshold
        self.polarity_ = self.stump_.polarity
        self.error_ = self.stump_.error
        return self

    def decision_function(self, X) -> np.ndarray:
        """±1 (positive means ``classes_[1]``), ndarray of shape (n_samples,)."""
        check_is_fitted(self)
        X = canonical(validate_data(self, X, accept_sparse="csr", dtype=np.float64, reset=False))
        return self.stump_.predict(X)

    def predict(self, X) -> np.ndarray:
        """Predicted labels from ``classes_``, ndarray of shape (n_samples,)."""
        return self.classes_[(self.decision_function(X) > 0).astype(int)]

