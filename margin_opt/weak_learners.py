"""Weak learners for boosting: weighted decision stumps, found exactly.

A decision stump is ``h(x) = s`` if ``x[j] > θ`` else ``−s``: one feature ``j``,
one threshold ``θ`` and one sign (polarity) ``s ∈ {−1, +1}``; with k classes
(:class:`MulticlassStump`) it predicts one class on each side of θ.  Given sample
weights ``wᵢ ≥ 0`` the best stump minimizes the weighted error
``ε = Σᵢ wᵢ 1[h(xᵢ) ≠ yᵢ] / Σᵢ wᵢ``.

:class:`StumpSearch` sorts every feature once (``O(n d log n)``) and then finds
the exact minimizer for any weights in ``O(n d)`` by scanning cumulative
weights along each sorted feature (cumulative sums of all features at once).
Only thresholds between two distinct values are considered (ties cannot be
split), and the threshold ``−∞`` (every point on the right: the constant
classifier ``±1``) is always a candidate, so a constant feature yields the
constant classifier and the class of stumps equals that of depth-1 decision
trees (whose two leaves may agree).

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
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.validation import check_is_fitted

from .validation import (
    canonical,
    check_binary_labels,
    check_data,
    check_sample_weight,
    validate_data,
)

__all__ = ["Stump", "StumpSearch", "DecisionStump", "as_dense", "MulticlassStump",
           "MulticlassStumpSearch"]


def _scan_plan(order, split_ok):
    """What :func:`_scan_stumps` reuses across weights: the sorted sample indices but
    the last of each feature (``(d, n − 1)``, C-contiguous) and the flat positions
    where a threshold may fall."""
    return (np.ascontiguousarray(order[:, :-1], dtype=np.intp),
            np.flatnonzero(split_ok))


def _scan_stumps(order, split_ok, wy, w_neg, w_total, plan=None):
    """Best (feature, split position, polarity, error) over all stumps.

    ``order[j]`` sorts feature ``j``; ``split_ok[j, k]`` says whether the sorted
    values ``k`` and ``k + 1`` differ; ``wy = w * y``.  Position ``k = −1`` is
    the threshold −∞.  For polarity +1 (right of θ predicted +1) the error with
    the first ``k + 1`` sorted points on the left is
    ``w_neg + Σ_{i ≤ k} wy[order[i]]``; polarity −1 has ``w_total`` minus that.
    The errors of all features are cumulative sums along the rows of one
    ``(d, n − 1)`` array, accumulated from ``w_neg`` in the sorted order (the same
    sums, to the bit, as a scan adding one point at a time).

    Parameters
    ----------
    order : ndarray of int of shape (d, n)
    split_ok : ndarray of bool of shape (d, n − 1)
    wy : ndarray of shape (n,)
    w_neg, w_total : float
    plan : tuple, optional
        :func:`_scan_plan` of ``order`` and ``split_ok`` (computed when not given).

    Returns
    -------
    j, k, s, err : int, int, int, float
        The first stump of least error in the order (−∞ first, then feature by
        feature, position by position, polarity +1 before −1).
    """
    d, n = order.shape
    best_err, best_j, best_k, best_s = w_neg, 0, -1, 1
    if w_total - w_neg < best_err:
        best_err, best_s = w_total - w_neg, -1
    if n < 2 or d == 0:
        return best_j, best_k, best_s, best_err
    take, cand = _scan_plan(order, split_ok) if plan is None else plan
    if cand.size == 0:
        return best_j, best_k, best_s, best_err
    err = wy.take(take)
    err[:, 0] += w_neg                   # w_neg + wy₀, then + wy₁, … as the scan adds them
    np.cumsum(err, axis=1, out=err)
    e = err.reshape(-1)
    if cand.size < e.size:
        e = e[cand]
    flip = w_total - e
    qp, qm = int(np.argmin(e)), int(np.argmin(flip))    # the first of the least of each
    ep, em = float(e[qp]), float(flip[qm])
    if ep < em or (ep == em and qp <= qm):               # +1 before −1 at one position
        q, err_q, sign = qp, ep, 1
    else:
        q, err_q, sign = qm, em, -1
    if err_q < best_err:
        q = int(cand[q]) if cand.size < err.size else q
        best_j, best_k = divmod(q, n - 1)
        best_s, best_err = sign, err_q
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
        self._plan = _scan_plan(self.order, self.split_ok)

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
        j, k, s, _ = _scan_stumps(self.order, self.split_ok, w * self.y, w_neg, w_total,
                                  self._plan)
        thr = self._threshold(j, k)
        h_pos = self.sorted_values[j] > thr  # in sorted order of feature j
        miss = np.where(h_pos, s, -s) != self.y[self.order[j]]
        err = float(w[self.order[j]][miss].sum() / w_total)
        return Stump(int(j), float(thr), int(s), err)


def _multiclass_plan(order, y, n_classes):
    """What :func:`_scan_multiclass_stumps` reuses across weights (y and the order
    are fixed): each feature's sorted samples regrouped by class (stably), where each
    sorted position sits in that layout, the classes' first and last columns there,
    and the sorted position of each class's last point."""
    d, n = order.shape
    ys = y[order]
    perm = np.argsort(ys, axis=1, kind="stable")     # sorted positions grouped by class
    counts = np.bincount(y, minlength=n_classes)
    starts = np.concatenate([[0], np.cumsum(counts)])
    present = np.flatnonzero(counts)
    grouped = np.ascontiguousarray(np.take_along_axis(order, perm, axis=1), dtype=np.intp)
    back = np.empty((d, n), dtype=np.intp)
    np.put_along_axis(back, perm, np.arange(n, dtype=np.intp)[None, :], axis=1)
    back += (np.arange(d, dtype=np.intp) * n)[:, None]
    first_cols, last_cols = starts[present], starts[present + 1] - 1
    last_pos = perm[:, last_cols]
    col_class = np.repeat(np.arange(n_classes), counts)
    return (ys, grouped, back, starts, present, first_cols, last_cols, last_pos, col_class,
            present.size < n_classes)


def _scan_multiclass_stumps(order, split_ok, y, w, n_classes, plan=None):
    """Best (feature, split position, left class, right class, correct weight).

    With the first ``pos + 1`` sorted points of feature ``j`` on the left, the best
    classes are the heaviest class on each side; the weight predicted correctly is
    max_c L_c + max_c (T_c − L_c) for the class weights L on the left and T in total.
    Position −1 (threshold −∞) is the constant classifier.

    The same numbers as a scan adding one point at a time, in O(n d) whatever the
    number of classes: each class's left weights are cumulative sums over its own
    points (the scan's sums, to the bit); as a point enters the left side only its
    class's L grows, so max_c L_c is a running maximum of the entering classes' L
    along the sorted order, and max_c (T_c − L_c) a running maximum from the right of
    the values T_c − L_c that the leaving points' classes had (with T_c − L_c of the
    classes with no point left on the right).  The classes of the best stump are then
    read from its left weights.

    Parameters
    ----------
    order : ndarray of int of shape (d, n)
    split_ok : ndarray of bool of shape (d, n − 1)
    y : ndarray of int of shape (n,)
        Class indices in ``range(n_classes)``.
    w : ndarray of shape (n,)
        Weights ≥ 0.
    n_classes : int
    plan : tuple, optional
        :func:`_multiclass_plan` of ``order``, ``y`` and ``n_classes``.

    Returns
    -------
    j, pos, left, right, gain : int, int, int, int, float
        The first stump of greatest correct weight in the order (−∞ first, then
        feature by feature, position by position; the first heaviest class on a tie).
    """
    d, n = order.shape
    total = np.bincount(y, weights=w, minlength=n_classes)
    best_c = int(np.argmax(total))
    best_gain = float(total[best_c])
    if n < 2 or d == 0 or not split_ok.any():
        return 0, -1, best_c, best_c, best_gain
    if plan is None:
        plan = _multiclass_plan(order, y, n_classes)
    ys, grouped, back, starts, present, first_cols, last_cols, last_pos, col_class, absent = plan
    cum = w.take(grouped)                            # per class: its points in sorted order
    for c in present.tolist():
        part = cum[:, starts[c]:starts[c + 1]]
        np.cumsum(part, axis=1, out=part)            # L_c after each of its points
    entering = cum.take(back)                        # sorted: L of the class that entered
    before = np.empty_like(cum)                      # L_c before each of its points
    before[:, 1:] = cum[:, :-1]
    before[:, first_cols] = 0.0
    leaving = (total[col_class] - before).take(back)  # sorted: T_c − L_c before the point
    max_left = np.maximum.accumulate(entering[:, :-1], axis=1)
    max_right = np.maximum.accumulate(leaving[:, :0:-1], axis=1)[:, ::-1]
    ended = np.full((d, n), -np.inf)                 # T_c − L_c of classes with no point right
    ended[np.arange(d)[:, None], last_pos] = total[present] - cum[:, last_cols]
    ended = np.maximum.accumulate(ended[:, :-1], axis=1)
    if absent:
        np.maximum(ended, 0.0, out=ended)
    np.maximum(max_right, ended, out=max_right)
    gain = max_left + max_right
    gain[~split_ok] = -np.inf
    q = int(np.argmax(gain))                         # the first of the greatest gains
    jj, pos = divmod(q, n - 1)
    if not gain[jj, pos] > best_gain:
        return 0, -1, best_c, best_c, best_gain
    left = np.bincount(ys[jj, :pos + 1], weights=w[order[jj, :pos + 1]], minlength=n_classes)
    cl = int(np.argmax(left))
    cr = int(np.argmax(total - left))
    return jj, pos, cl, cr, float(gain[jj, pos])


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
    construction (as :class:`StumpSearch`), each feature's order regrouped by class at
    the first search, then :meth:`best` costs ``O(n d + n k)``.

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
        self._class_plan = None              # built on the first search

    def _plan_by_class(self):
        if self._class_plan is None:
            self._class_plan = _multiclass_plan(self.order, self.y, self.n_classes)
        return self._class_plan

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
                                                         self.n_classes, self._plan_by_class())
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

