"""Bias and variance of a learner, estimated by bootstrap (out of bag or on a test set).

For each bootstrap replicate ``D_b`` of the training data a fresh clone ``h_b`` is
fitted.  Predictions are then pooled per point into the *main prediction* ``h̄(x)`` (the
mean for squared loss, the majority vote for 0-1 loss) and split into bias and variance.

- ``method="oob"`` (the lecture notes): ``h_b`` predicts the points it did not see,
  ``T_b = D − D_b``; for a point x left out by K of the B replicates, ``h̄(x)`` is the
  mean of those K predictions, the bias ``y − h̄(x)`` and the variance
  ``1/(K − 1) Σ_k (h̄(x) − h_k(x))²``.
- ``method="holdout"``: every ``h_b`` predicts a separate test set, as mlxtend's
  ``bias_variance_decomp`` does; for squared loss ``loss = bias² + variance`` exactly.

All bootstrap indices and seeds are drawn up front from one generator, and the
replicates run through joblib, so the result does not depend on ``n_jobs`` or on the
joblib backend (``with joblib.parallel_backend("dask"): ...`` runs them on a cluster).

References
----------
Lecture notes, "Bias and variance by bootstrap" (out-of-bag estimate, B a few hundred).
P. Domingos, "A unified bias-variance decomposition and its applications", ICML 2000
(0-1 loss: bias, variance and net variance).
S. Raschka, mlxtend ``bias_variance_decomp`` (the holdout estimate).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from functools import reduce
from numbers import Integral, Real

import numpy as np
from joblib import Parallel, delayed, effective_n_jobs
from sklearn.base import clone, is_classifier
from sklearn.utils import _safe_indexing, check_random_state
from sklearn.utils.validation import check_array, check_X_y

__all__ = ["BiasVariance", "bias_variance", "bootstrap_indices"]

LOSSES = ("squared", "0-1")
#: Tasks per joblib worker: replicates are grouped into this many chunks per worker, enough
#: to balance the load, few enough that dispatching costs nothing next to fitting.
TASKS_PER_WORKER = 4
METHODS = ("oob", "holdout")


@dataclass(frozen=True)
class BiasVariance:
    """Result of :func:`bias_variance`.

    Attributes
    ----------
    loss : float
        Expected loss: the mean over points of the mean loss of the single models
        (test error for 0-1 loss, mean squared error for squared loss).
    bias2 : float
        Squared loss: mean of ``(y − h̄(x))²``.  0-1 loss: the fraction of points whose
        main prediction (majority vote) is wrong, Domingos' bias (0 or 1 per point, so
        it is its own square).
    variance : float
        Mean of the per-point variances.
    net_variance : float
        ``loss − bias2``.  Squared holdout: equal to ``variance``; squared OOB:
        ``mean((K − 1)/K · variance(x))``; 0-1 loss: Domingos' net variance, the
        variance on unbiased points minus the (weighted) variance on biased ones.
    point_loss : ndarray of shape (n_points,)
    point_bias : ndarray of shape (n_points,)
        Squared loss: the signed bias ``y − h̄(x)``; 0-1 loss: ``1[h̄(x) ≠ y]``.
    point_variance : ndarray of shape (n_points,)
        Squared loss: ``1/B Σ (h̄ − h_b)²`` (holdout) or ``1/(K − 1) Σ (h̄ − h_k)²``
        (OOB); 0-1 loss: the fraction of models disagreeing with the main prediction.
    main_prediction : ndarray of shape (n_points,)
        ``h̄(x)``: mean prediction or majority label (ties to the smallest label).
    n_models : ndarray of shape (n_points,)
        Models that predicted each point: B (holdout) or K (OOB).  Points the OOB
        estimate cannot use (K = 0, or K < 2 for squared loss) are NaN in the
        per-point arrays and left out of the means.
    method : {"oob", "holdout"}
    loss_function : {"squared", "0-1"}
    n_bootstrap : int
        B.
    bag_size : int
        Draws per replicate, m.

    Notes
    -----
    The points are the training points (OOB) or the test points (holdout).
    """

    loss: float
    bias2: float
    variance: float
    net_variance: float
    point_loss: np.ndarray
    point_bias: np.ndarray
    point_variance: np.ndarray
    main_prediction: np.ndarray
    n_models: np.ndarray
    method: str
    loss_function: str
    n_bootstrap: int
    bag_size: int

    def to_dict(self, per_point: bool = False) -> dict:
        """The numbers as a JSON-ready dict (per-point arrays as lists if ``per_point``)."""
        out = {k: getattr(self, k) for k in ("loss", "bias2", "variance", "net_variance",
                                             "method", "loss_function", "n_bootstrap",
                                             "bag_size")}
        if per_point:
            for k in ("point_loss", "point_bias", "point_variance", "n_models"):
                out[k] = getattr(self, k).tolist()
        return out


def _bag_size(max_samples, n):
    if max_samples is None:
        return n
    if isinstance(max_samples, Integral) and not isinstance(max_samples, bool):
        if max_samples < 1:
            raise ValueError(f"max_samples = {max_samples}: a bag needs at least one draw; "
                             "pass an int ≥ 1, a fraction in (0, 1] or None (m = n).")
        return int(max_samples)
    if isinstance(max_samples, Real) and 0 < max_samples <= 1:
        return max(1, int(max_samples * n))
    raise ValueError(f"max_samples must be None, an int ≥ 1 or a fraction in (0, 1]; "
                     f"got {max_samples!r}.")


def bootstrap_indices(n, n_bootstrap, bag_size=None, random_state=None) -> np.ndarray:
    """Draw B bootstrap replicates of ``range(n)`` up front, with replacement.

    Replicate b is ``rng.choice(n, m)``, drawn in order from one generator: the same
    indices as mlxtend's ``bias_variance_decomp`` for the same integer seed.

    Parameters
    ----------
    n : int
        Points to draw from.
    n_bootstrap : int
        Replicates B.
    bag_size : int, optional
        Draws per replicate m (default n).
    random_state : int, RandomState instance or None

    Returns
    -------
    indices : ndarray of shape (n_bootstrap, bag_size)
    """
    rng = check_random_state(random_state)
    m = n if bag_size is None else bag_size
    return np.array([rng.choice(n, size=m, replace=True) for _ in range(n_bootstrap)])


def _seed_unset(estimator, seed):
    """Give every ``random_state`` left at None (nested ones too) a seed drawn from ``seed``."""
    params = estimator.get_params(deep=True)
    keys = sorted(k for k, v in params.items()
                  if v is None and (k == "random_state" or k.endswith("__random_state")))
    if keys:
        rs = np.random.RandomState(seed)
        estimator.set_params(**{k: int(rs.randint(np.iinfo(np.int32).max)) for k in keys})
    return estimator


def _fit_predict(estimator, X, y, idx, seed, X_eval):
    """One replicate: fit a clone on ``X[idx]`` and predict ``X_eval`` (None: the OOB rows)."""
    est = _seed_unset(clone(estimator), seed)
    est.fit(_safe_indexing(X, idx), _safe_indexing(y, idx))
    if X_eval is None:
        oob = np.ones(X.shape[0], dtype=bool)
        oob[idx] = False
        if not oob.any():  # the replicate drew every point: nothing to predict
            return np.asarray(_safe_indexing(y, np.flatnonzero(oob)))
        X_eval = _safe_indexing(X, np.flatnonzero(oob))
    return np.asarray(est.predict(X_eval)).ravel()


def _fit_predict_chunk(estimator, X, y, indices, seeds, X_eval):
    """Several replicates in one task (fewer dispatches and fewer copies of X)."""
    return [_fit_predict(estimator, X, y, idx, seed, X_eval)
            for idx, seed in zip(indices, seeds, strict=True)]


def _check_inputs(estimator, X, y, method, X_test, y_test, loss, n_bootstrap):
    if not (hasattr(estimator, "fit") and hasattr(estimator, "predict")):
        raise TypeError(f"estimator must have fit and predict (a scikit-learn estimator); got "
                        f"{type(estimator).__name__}.")
    if method not in METHODS:
        raise ValueError(f"method must be 'oob' or 'holdout'; got {method!r}.")
    if loss is None:
        loss = "0-1" if is_classifier(estimator) else "squared"
    if loss not in LOSSES:
        raise ValueError(f"loss must be 'squared', '0-1' or None (from the estimator type); "
                         f"got {loss!r}.")
    if not isinstance(n_bootstrap, Integral) or n_bootstrap < 2:
        raise ValueError(f"n_bootstrap must be an int ≥ 2 (the lecture uses a few hundred); "
                         f"got {n_bootstrap!r}.")
    numeric = loss == "squared"
    X, y = check_X_y(X, y, accept_sparse="csr", ensure_all_finite=False, y_numeric=numeric)
    if method == "holdout":
        if X_test is None or y_test is None:
            raise ValueError("method='holdout' needs X_test and y_test (a test set the "
                             "replicates never see); or use method='oob'.")
        X_test, y_test = check_X_y(X_test, y_test, accept_sparse="csr",
                                   ensure_all_finite=False, y_numeric=numeric)
        if X_test.shape[1] != X.shape[1]:
            raise ValueError(f"X_test has {X_test.shape[1]} features, X has {X.shape[1]}.")
    elif X_test is not None or y_test is not None:
        raise ValueError("X_test and y_test are used by method='holdout' only; the OOB "
                         "estimate predicts each training point with the replicates that "
                         "left it out.")
    if numeric:
        for name, v in (("y", y), ("y_test", y_test)):
            if v is not None and not np.all(np.isfinite(check_array(v, ensure_2d=False))):
                raise ValueError(f"{name} has NaN or inf; squared loss needs finite targets.")
    return X, y, X_test, y_test, loss


def bias_variance(estimator, X, y, *, method="oob", X_test=None, y_test=None, loss=None,
                  n_bootstrap=200, max_samples=None, n_jobs=None,
                  random_state=None) -> BiasVariance:
    """Bias–variance decomposition of a learner by bootstrap.

    Parameters
    ----------
    estimator : scikit-learn estimator
        Cloned for every replicate (never fitted itself).  A ``random_state`` left at
        None (nested ones too) gets a per-replicate seed drawn up front; an int is kept.
    X : {array-like, sparse matrix} of shape (n_samples, n_features)
        Training data (the replicates are drawn from it).
    y : array-like of shape (n_samples,)
    method : {"oob", "holdout"}, default="oob"
        ``"oob"``: each replicate predicts the training points it left out (the
        lecture's estimator).  ``"holdout"``: each replicate predicts ``X_test``.
    X_test : {array-like, sparse matrix} of shape (n_test, n_features), optional
        Test set, ``method="holdout"`` only.
    y_test : array-like of shape (n_test,), optional
    loss : {"squared", "0-1"} or None, default=None
        None: ``"0-1"`` for a classifier, ``"squared"`` otherwise.
    n_bootstrap : int, default=200
        Replicates B (≥ 2).
    max_samples : int, float or None, default=None
        Bag size m: an int, a fraction of n, or None (m = n).
    n_jobs : int or None, default=None
        Replicates fitted in parallel by joblib (None: 1, or the active backend's
        default inside ``joblib.parallel_backend``).
    random_state : int, RandomState instance or None, default=None
        Seeds the bootstrap indices and the per-replicate seeds.  With an int the
        indices are those of mlxtend's ``bias_variance_decomp(random_seed=...)``.

    Returns
    -------
    result : BiasVariance
        ``loss``, ``bias2``, ``variance``, ``net_variance`` and the per-point arrays.

    Raises
    ------
    TypeError
        ``estimator`` without fit/predict.
    ValueError
        Unknown ``method`` or ``loss``, ``n_bootstrap < 2``, a bad ``max_samples``,
        missing or unexpected test data, invalid or non-finite (squared loss) targets.

    Warns
    -----
    UserWarning
        OOB only: some points were left out by too few replicates (K = 0, or K < 2
        for squared loss) and are excluded; increase ``n_bootstrap``.

    Notes
    -----
    Memory: the indices and the predictions take O(B · n) numbers.

    References
    ----------
    Lecture notes, "Bias and variance by bootstrap".
    P. Domingos, "A unified bias-variance decomposition and its applications", ICML 2000.
    """
    X, y, X_test, y_test, loss = _check_inputs(estimator, X, y, method, X_test, y_test, loss,
                                               n_bootstrap)
    n = X.shape[0]
    m = _bag_size(max_samples, n)
    rng = check_random_state(random_state)
    indices = bootstrap_indices(n, n_bootstrap, m, rng)
    seeds = rng.randint(np.iinfo(np.int32).max, size=n_bootstrap)
    X_eval = X_test if method == "holdout" else None
    # TASKS_PER_WORKER chunks of consecutive replicates per worker: the replicates (and so
    # the result) are fixed above, only their grouping into tasks depends on the backend
    n_tasks = min(n_bootstrap, TASKS_PER_WORKER * effective_n_jobs(n_jobs))
    chunks = np.array_split(np.arange(n_bootstrap), n_tasks)
    preds = [p for chunk in Parallel(n_jobs=n_jobs)(
        delayed(_fit_predict_chunk)(estimator, X, y, indices[c], seeds[c], X_eval)
        for c in chunks) for p in chunk]
    y_eval = np.asarray(y_test if method == "holdout" else y)
    P, mask = _prediction_matrix(preds, indices, y_eval.shape[0], oob=method == "oob")
    decompose = _squared if loss == "squared" else _zero_one
    parts = decompose(P, mask, y_eval, oob=method == "oob")
    return BiasVariance(**parts, method=method, loss_function=loss, n_bootstrap=n_bootstrap,
                        bag_size=m)


def _prediction_matrix(preds, indices, n_eval, oob):
    """Stack the replicates' predictions: (B, n_eval) values and the mask of those made."""
    mask = np.ones((len(preds), n_eval), dtype=bool)
    if not oob:
        return np.vstack(preds), mask
    for b, idx in enumerate(indices):
        mask[b, idx] = False
    P = np.empty(mask.shape, dtype=reduce(np.promote_types, (p.dtype for p in preds)))
    for b, p in enumerate(preds):
        P[b, mask[b]] = p
    return P, mask


def _usable(K, need, oob):
    ok = K >= need
    if not ok.any():
        raise ValueError(f"no point was left out by at least {need} replicates, so nothing "
                         "can be estimated; increase n_bootstrap (the lecture uses a few "
                         "hundred).")
    if oob and not ok.all():
        how = "by no replicate" if need == 1 else f"by fewer than {need} replicates"
        warnings.warn(f"{int((~ok).sum())} of {K.size} points were left out {how} and are "
                      "excluded from the OOB estimate; increase n_bootstrap (a point is left "
                      "out of each replicate with probability ≈ 1/e).", UserWarning,
                      stacklevel=4)
    return ok


def _summary(point_loss, point_bias2, point_variance):
    loss = float(np.nanmean(point_loss))
    bias2 = float(np.nanmean(point_bias2))
    return {"loss": loss, "bias2": bias2, "variance": float(np.nanmean(point_variance)),
            "net_variance": loss - bias2}


def _squared(P, mask, y, oob):
    P = P.astype(float)
    K = mask.sum(axis=0)
    ok = _usable(K, 2 if oob else 1, oob)
    W = np.where(mask, 1.0, 0.0)
    Kf = np.where(ok, K, np.nan)
    Pz = np.where(mask, P, 0.0)
    main = Pz.sum(axis=0) / Kf
    point_loss = (W * (Pz - y) ** 2).sum(axis=0) / Kf
    ddof = 1 if oob else 0
    point_variance = (W * (Pz - main) ** 2).sum(axis=0) / (Kf - ddof)
    point_bias = y - main
    return {**_summary(point_loss, point_bias ** 2, point_variance),
            "point_loss": point_loss, "point_bias": point_bias,
            "point_variance": point_variance, "main_prediction": main, "n_models": K}


def _zero_one(P, mask, y, oob):
    classes, codes = np.unique(np.concatenate([y, P[mask]]), return_inverse=True)
    y_code = codes[:y.size]
    C = np.full(mask.shape, -1, dtype=np.intp)
    C[mask] = codes[y.size:]
    K = mask.sum(axis=0)
    ok = _usable(K, 1, oob)
    counts = np.zeros((y.size, classes.size))
    cols = np.arange(y.size)
    for row, m in zip(C, mask, strict=True):
        counts[cols[m], row[m]] += 1.0
    main = counts.argmax(axis=1)  # ties: the smallest label, as mlxtend
    Kf = np.where(ok, K, np.nan)
    point_loss = ((C != y_code) & mask).sum(axis=0) / Kf
    point_variance = ((C != main) & mask).sum(axis=0) / Kf
    point_bias = np.where(ok, (main != y_code).astype(float), np.nan)
    return {**_summary(point_loss, point_bias, point_variance),
            "point_loss": point_loss, "point_bias": point_bias,
            "point_variance": point_variance, "main_prediction": classes[main],
            "n_models": K}
