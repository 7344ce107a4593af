"""Cross-validated C-SVC and ε-SVR over (C, γ): :class:`SVCCV`, :class:`SVRCV`.

scikit-learn's convention (``LogisticRegressionCV``, ``RidgeCV``): the grid is searched
by cross-validation, the best (C, γ) refitted on all the data, and the search is
reported in ``GridSearchCV``'s layout (``cv_results_``).  What differs is how the
models of the grid are obtained: one ε-approximate regularization path over C per
(fold, γ) (:meth:`SVMProblem.path <margin_opt.problems.base.KernelProblem.path>`)
instead of one fit per (fold, γ, C).  Every C of the grid is then scored from the model
of the path point that covers it (``path.solution_at(C)``: certified within a relative
ε of the optimum at that C), evaluated on the validation fold.

The (fold, γ) tasks run through joblib (``Parallel(n_jobs)``), so that
``with joblib.parallel_backend("dask"):`` spreads them over a Dask cluster with no
change here.

References
----------
J. Giesen, J. K. Müller, S. Laue and S. Swiercy, "Approximating concavely
parameterized optimization problems", NIPS 2012.
"""

from __future__ import annotations

import numbers
import time

import numpy as np
from joblib import Parallel, delayed
from scipy.stats import rankdata
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin, is_classifier
from sklearn.metrics import check_scoring
from sklearn.model_selection import check_cv
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted

from ..exceptions import NotCertifiedError
from ..kernels import KERNELS
from ..kernels.expansion import binary_expansion, evaluate
from ..problems.svm import SVMProblem
from ..problems.svr import SVRProblem
from ..validation import canonical, validate_data
from .svc import SVC
from .svr import SVR

__all__ = ["SVCCV", "SVRCV", "DEFAULT_C_RANGE"]

#: The range of C an integer ``Cs`` spans (log-spaced), as LogisticRegressionCV's
#: 1e-4..1e4 but narrower: an RBF C-SVC below 1e-2 is nearly constant, and above 1e2
#: a path needs many points for little change on standardized data.
DEFAULT_C_RANGE = (1e-2, 1e2)


# ---------------------------------------------------------------------- the grid
def _check_Cs(Cs):
    """``(grid, path_C)``: the Cs scored (ndarray of shape (n_Cs,)) and the ``C`` the
    paths take (a tuple range covered at eps, or a list solved point by point)."""
    if isinstance(Cs, (bool, np.bool_)):
        raise ValueError(f"Cs must be an int, a tuple (C_min, C_max[, n]) or a list of C "
                         f"values, got {Cs!r}.")
    if isinstance(Cs, numbers.Integral):
        if Cs < 1:
            raise ValueError(f"Cs={Cs}: an int Cs is the number of C values in "
                             f"{DEFAULT_C_RANGE} and must be ≥ 1.")
        lo, hi = DEFAULT_C_RANGE
        grid = np.logspace(np.log10(lo), np.log10(hi), int(Cs))
        return grid, [float(c) for c in grid]
    if isinstance(Cs, tuple):
        if len(Cs) not in (2, 3):
            raise ValueError(f"Cs=(C_min, C_max) or (C_min, C_max, n): got {len(Cs)} values.")
        lo, hi = (_positive_C(c) for c in Cs[:2])
        n = Cs[2] if len(Cs) == 3 else 10
        if isinstance(n, (bool, np.bool_)) or not isinstance(n, numbers.Integral) or n < 2:
            raise ValueError(f"the n of Cs=(C_min, C_max, n) must be an int ≥ 2, got {n!r}.")
        if not lo < hi:
            raise ValueError(f"Cs=(C_min, C_max): C_min must be below C_max, got ({lo:g}, "
                             f"{hi:g}); pass a list [C] for one value.")
        return np.logspace(np.log10(lo), np.log10(hi), int(n)), (lo, hi)
    try:
        values = np.asarray(Cs, dtype=object).ravel()
    except Exception:   # noqa: BLE001 (anything that is not a sequence)
        values = None
    if values is None or isinstance(Cs, (str, bytes, dict)):
        raise ValueError(f"Cs must be an int, a tuple (C_min, C_max[, n]) or a list of C "
                         f"values, got {type(Cs).__name__}.")
    if values.size == 0:
        raise ValueError("Cs is empty: give at least one C value (or an int, the number of "
                         f"values in {DEFAULT_C_RANGE}).")
    grid = np.array([_positive_C(c) for c in values])
    return grid, [float(c) for c in np.unique(grid)]


def _positive_C(C) -> float:
    try:
        value = float(C)
    except (TypeError, ValueError):
        raise ValueError(f"every C must be a positive number, got {C!r}.") from None
    if not (np.isfinite(value) and value > 0):
        raise ValueError(f"every C must be positive and finite (C > 0), got {C!r}.")
    return value


def _check_gammas(gammas):
    """The γ values searched: a list of positive floats or ``"scale"``/``"auto"``."""
    if gammas is None:
        return ["scale"]
    if isinstance(gammas, (str, numbers.Number)):
        gammas = [gammas]
    gammas = list(np.ravel(np.asarray(gammas, dtype=object)))
    if not gammas:
        raise ValueError("gammas is empty: give at least one γ (or None for 'scale').")
    out = []
    for g in gammas:
        if isinstance(g, str):
            if g not in ("scale", "auto"):
                raise ValueError(f"a string gamma must be 'scale' or 'auto', got {g!r}.")
            out.append(g)
            continue
        try:
            value = float(g)
        except (TypeError, ValueError):
            raise ValueError(f"every gamma must be a positive number, 'scale' or 'auto', "
                             f"got {g!r}.") from None
        if not (np.isfinite(value) and value > 0):
            raise ValueError(f"every gamma must be positive and finite, got {g!r}.")
        out.append(value)
    return out


def _check_cv_param(cv):
    if isinstance(cv, numbers.Integral) and not isinstance(cv, (bool, np.bool_)) and cv < 2:
        raise ValueError(f"cv={cv}: cross-validation needs at least 2 folds (cv ≥ 2), or a "
                         "splitter / an iterable of (train, test) splits.")


# ---------------------------------------------------------------------- scoring
class _FixedClassifier(ClassifierMixin, BaseEstimator):
    """A scorer's view of one model's decision values on the validation fold: the
    scikit-learn scorers call ``predict``/``decision_function`` on it (X is checked
    to be the fold's by its length only)."""

    def __init__(self, classes, values):
        self.classes = classes
        self.values = values

    @property
    def classes_(self):
        return self.classes

    def _check(self, X):
        if X.shape[0] != self.values.shape[0]:
            raise ValueError("this view scores its own validation fold only.")

    def decision_function(self, X):
        self._check(X)
        return self.values

    def predict(self, X):
        self._check(X)
        return self.classes[(self.values >= 0).astype(int)]    # SVC's rule at a tie


class _FixedRegressor(RegressorMixin, BaseEstimator):
    """A scorer's view of one model's predictions on the validation fold."""

    def __init__(self, values):
        self.values = values

    def predict(self, X):
        if X.shape[0] != self.values.shape[0]:
            raise ValueError("this view scores its own validation fold only.")
        return self.values


def _path_values(problem, beta, b, X_val):
    """f(x) = Σ βⱼK(x, xⱼ) + b of a path's model (β of shape (n_train,)) at the
    validation rows, shape (n_val,)."""
    beta = np.asarray(beta, dtype=float).reshape(1, -1)
    sv = np.flatnonzero(beta[0])
    ex = binary_expansion(beta[:, sv], np.array([float(b)]))
    return evaluate(problem.kernel, X_val, problem.X[sv], ex, support=sv)[:, 0]


def _model_at(path, C):
    """(β, b) of the model scored at C: on a grid path the point solved at C itself
    (certified there by the path, at its ``tol``); on a range path the covering point's
    model, certified at C by ``path.solution_at(C)`` (its accuracy certificate: within
    a relative eps of the optimum at C)."""
    if path.grid:
        point = next(p for p in path if p.C == C)
        return point.beta, point.b
    sol = path.solution_at(C)
    if not sol.certificate.ok:        # cannot happen inside the range; never score it
        raise NotCertifiedError(f"the path's model at C={C:g} does not certify at "
                                f"eps={path.eps:g}:\n{sol.certificate}")
    return np.ravel(sol.dual_coef), float(np.ravel(sol.intercept)[0])


def _fold_path(spec, X, y, train, test, gamma, grid, path_C, scorer):
    """One (fold, γ) task: the training fold's path over C and the validation score
    of every C of the grid.

    Returns
    -------
    scores : ndarray of shape (n_Cs,)
    path : Path or None
        None for more than two classes (one-vs-one fits per C, see :class:`SVCCV`).
    seconds : float
    """
    t0 = time.perf_counter()
    X_tr, y_tr, X_val, y_val = X[train], y[train], X[test], y[test]
    if spec["classifier"] and np.unique(y_tr).size > 2:
        scores = np.empty(grid.size)
        for i, C in enumerate(grid):
            est = SVC(C=C, gamma=gamma, **spec["estimator"]).fit(X_tr, y_tr)
            scores[i] = scorer(est, X_val, y_val)
        return scores, None, time.perf_counter() - t0
    if spec["classifier"]:
        problem = SVMProblem(X_tr, y_tr, gamma=gamma, **spec["problem"])
    else:
        problem = SVRProblem(X_tr, y_tr, gamma=gamma, **spec["problem"])
    path = problem.path(C=path_C, eps=spec["eps"], **spec["path"])
    scores = np.empty(grid.size)
    for i, C in enumerate(grid):
        values = _path_values(problem, *_model_at(path, float(C)), X_val)
        view = _FixedClassifier(problem.classes_, values) if spec["classifier"] else \
            _FixedRegressor(values)
        scores[i] = scorer(view, X_val, y_val)
    return scores, path, time.perf_counter() - t0


# ---------------------------------------------------------------------- estimators
_CV_PARAMETERS = {
    "Cs": "no_validation",        # checked in fit, with specific messages
    "gammas": "no_validation",
    "cv": "no_validation",
    "scoring": "no_validation",     # one metric: checked in fit
    "eps": [Interval(numbers.Real, 0, 1, closed="neither")],
    "n_jobs": [numbers.Integral, None],
    "refit": ["boolean"],
    "kernel": [StrOptions(set(KERNELS) - {"precomputed"})],
    "degree": [Interval(numbers.Integral, 1, None, closed="left")],
    "coef0": [Interval(numbers.Real, None, None, closed="neither")],
    "tol": [Interval(numbers.Real, 0, None, closed="neither")],
    "cache_size": [Interval(numbers.Real, 0, None, closed="neither")],
}


class _BaseCV(BaseEstimator):
    """What :class:`SVCCV` and :class:`SVRCV` share: the search, its report, the refit."""

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True           # CSR, as SVC and SVR take it
        return tags

    def _model_params(self) -> dict:
        """The model's own parameters, shared by its problem and its estimator."""
        raise NotImplementedError

    def _spec(self) -> dict:
        """What a (fold, γ) task needs: the problem's, the path's and the estimator's
        keywords (γ and C aside)."""
        problem = {"kernel": self.kernel, "degree": self.degree, "coef0": self.coef0,
                   **self._model_params()}
        return {"classifier": is_classifier(self), "eps": self.eps, "problem": problem,
                "path": {"cache_size": self.cache_size},
                "estimator": {**problem, "tol": self.tol, "cache_size": self.cache_size}}

    def _refit_estimator(self, C, gamma):
        raise NotImplementedError

    def fit(self, X, y, groups=None):
        """Cross-validate every (C, γ) of the grid, then refit the best on all of X.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        groups : array-like of shape (n_samples,), default=None
            For a group splitter given as ``cv``.

        Returns
        -------
        self

        Raises
        ------
        ValueError
            Empty ``Cs``, a C ≤ 0 or not finite, empty ``gammas``, a γ ≤ 0, ``cv`` < 2,
            more than one metric in ``scoring``; scikit-learn's input checks.
        NotCertifiedError
            A path point or the refit that does not certify.
        """
        self._validate_params()
        grid, path_C = _check_Cs(self.Cs)
        gammas = _check_gammas(self.gammas)
        _check_cv_param(self.cv)
        if isinstance(self.scoring, (list, tuple, set, dict)):
            raise ValueError("scoring must be one metric (a string, a callable or None); "
                             "use GridSearchCV for several metrics.")
        classifier = is_classifier(self)
        X_in, y_in = X, y        # the refit takes them as given (a DataFrame's names kept)
        X, y = validate_data(self, X, y, accept_sparse="csr", dtype=np.float64,
                             y_numeric=not classifier)
        X = canonical(X)
        if classifier:
            check_classification_targets(y)
            self.classes_ = np.unique(y)
        cv = check_cv(self.cv, y, classifier=classifier)
        splits = list(cv.split(X, y, groups))
        self.n_splits_ = len(splits)
        self.scorer_ = check_scoring(self._refit_estimator(1.0, "scale"), self.scoring)
        spec = self._spec()
        tasks = [(k, j) for k in range(len(splits)) for j in range(len(gammas))]
        t0 = time.perf_counter()
        out = Parallel(n_jobs=self.n_jobs)(
            delayed(_fold_path)(spec, X, y, splits[k][0], splits[k][1], gammas[j], grid,
                                path_C, self.scorer_) for k, j in tasks)
        self.search_time_ = time.perf_counter() - t0
        scores = np.empty((len(splits), len(gammas), grid.size))
        self.paths_ = [[None] * len(gammas) for _ in splits]
        fit_time = np.empty((len(splits), len(gammas)))
        for (k, j), (s, path, seconds) in zip(tasks, out, strict=True):
            scores[k, j], self.paths_[k][j], fit_time[k, j] = s, path, seconds
        self.Cs_, self.gammas_ = grid, gammas
        self._report(scores, fit_time, grid, gammas)
        best = self.best_params_
        self.C_, self.gamma_ = best["C"], best["gamma"]
        if self.refit:
            t0 = time.perf_counter()
            self.best_estimator_ = self._refit_estimator(self.C_, self.gamma_).fit(X_in, y_in)
            self.refit_time_ = time.perf_counter() - t0
        return self

    def _report(self, scores, fit_time, grid, gammas):
        """``cv_results_`` in GridSearchCV's layout: candidates in ParameterGrid's order
        for {"C": grid, "gamma": gammas} (C outer, γ inner)."""
        n_splits = scores.shape[0]
        # (split, γ, C) -> (split, candidate) with candidate = iC · n_γ + iγ
        per_split = scores.transpose(0, 2, 1).reshape(n_splits, -1)
        params = [{"C": float(C), "gamma": g} for C in grid for g in gammas]
        results = {}
        for name in ("C", "gamma"):
            column = np.ma.MaskedArray(np.empty(len(params), dtype=object), mask=False)
            column[:] = [p[name] for p in params]
            results[f"param_{name}"] = column
        results["params"] = params
        for k in range(n_splits):
            results[f"split{k}_test_score"] = per_split[k]
        mean = per_split.mean(axis=0)
        results["mean_test_score"] = mean
        results["std_test_score"] = per_split.std(axis=0)
        safe = np.where(np.isnan(mean), -np.inf, mean)
        results["rank_test_score"] = rankdata(-safe, method="min").astype(np.int32)
        # the path of a (fold, γ) serves all its Cs: its time, split evenly among them
        per_C = np.repeat(fit_time[:, :, None] / grid.size, grid.size, axis=2)
        per_C = per_C.transpose(0, 2, 1).reshape(n_splits, -1)
        results["mean_fit_time"] = per_C.mean(axis=0)
        results["std_fit_time"] = per_C.std(axis=0)
        self.cv_results_ = results
        self.best_index_ = int(np.argmin(results["rank_test_score"]))
        self.best_score_ = float(mean[self.best_index_])
        self.best_params_ = dict(params[self.best_index_])

    # ------------------------------------------------------------------ delegation
    def _fitted_best(self):
        check_is_fitted(self, "cv_results_")
        if not self.refit:
            raise AttributeError(f"{type(self).__name__} was fitted with refit=False: "
                                 "there is no best_estimator_ to predict with; fit with "
                                 "refit=True or fit the best_params_ yourself.")
        return self.best_estimator_

    def predict(self, X):
        """The refitted best model's prediction, ndarray of shape (n_samples,).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        """
        return self._fitted_best().predict(X)

    def score(self, X, y):
        """``scorer_`` of the refitted best model on (X, y) (accuracy or R² by default).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)

        Returns
        -------
        score : float
        """
        return float(self.scorer_(self._fitted_best(), X, y))


_DOC_PARAMS = """
    Cs : int, tuple or array-like, default=10
        The values of C searched.  A list: exactly those values; an int n: n values
        log-spaced in ``DEFAULT_C_RANGE`` (1e-2 to 1e2).  Either is solved as a grid
        path per (fold, γ) (``problem.path(C=list)``: each value solved and certified
        at eps/10, warm-started from the previous one), n solves.  A tuple
        ``(C_min, C_max)`` or ``(C_min, C_max, n)``: n (default 10) values log-spaced in
        that range, scored from one ε-path per (fold, γ) that covers the whole range
        (``problem.path(C=(C_min, C_max), eps)``; each value's model certified at it
        within a relative eps): about c/√eps solves per path whatever n (c ≈ 0.8 per
        decade of C on breast_cancer: 300 for 1e-2 to 1e2 at eps = 1e-4), which pays
        for fine grids, not coarse ones.
    gammas : array-like of float or {"scale", "auto"}, default=None
        The kernel widths searched; None: ``["scale"]`` (resolved on each training fold,
        as scikit-learn's SVC in GridSearchCV).
    cv : int, cross-validation generator or iterable, default=5
        scikit-learn's ``cv`` (:func:`sklearn.model_selection.check_cv`).
    scoring : str or callable, default=None
        One scikit-learn scorer (:func:`sklearn.metrics.check_scoring`); None: the
        estimator's ``score``.
    eps : float, default=1e-4
        The relative accuracy of every model scored: each is certified within eps of the
        optimum at its C (in (0, 1)).
    n_jobs : int, default=None
        joblib's: the (fold, γ) tasks in parallel (``joblib.parallel_backend`` chooses
        where, e.g. ``"dask"``).
    refit : bool, default=True
        Refit the best (C, γ) on all the data (``best_estimator_``).
    kernel : {"linear", "poly", "rbf", "sigmoid"}, default="rbf"
    degree : int, default=3
    coef0 : float, default=0.0
    tol : float, default=1e-6
        The certificate tolerance of the refitted model (the paths' points are solved
        at eps/10)."""

_DOC_ATTRIBUTES = """
    cv_results_ : dict of ndarray
        GridSearchCV's layout: ``params`` (list of dict), ``param_C``, ``param_gamma``
        (masked arrays), ``split{k}_test_score``, ``mean_test_score``,
        ``std_test_score``, ``rank_test_score`` (each of shape (n_candidates,), the
        candidates in ParameterGrid's order: C outer, γ inner), ``mean_fit_time`` and
        ``std_fit_time`` (a path's time divided evenly among its Cs).
    best_index_ : int
        The first candidate of rank 1 (GridSearchCV's rule).
    best_score_ : float
        Its mean validation score.
    best_params_ : dict
        ``{"C": C_, "gamma": gamma_}``.
    C_ : float
    gamma_ : float or str
        As searched (``"scale"`` is resolved by the refit on all the data).
    best_estimator_ : {est}
        Refitted on all the data at (C_, gamma_), certified (``certificate_``); only
        with ``refit=True``.
    paths_ : list of list of Path
        ``paths_[k][j]``: the path over C of split k at ``gammas_[j]``, each point
        with its certificate.
    Cs_ : ndarray of shape (n_Cs,)
        The grid of C scored.
    gammas_ : list
        The γ values searched.
    n_splits_ : int
    scorer_ : callable
    search_time_ : float
        Seconds of the cross-validation (all the (fold, γ) tasks).
    refit_time_ : float
        Seconds of the refit.
    n_features_in_ : int"""

_REFERENCES = """
    References
    ----------
    J. Giesen, J. K. Müller, S. Laue and S. Swiercy, "Approximating concavely
    parameterized optimization problems", NIPS 2012.
    J. Giesen, M. Jaggi and S. Laue, "Approximating parameterized convex optimization
    problems", ESA 2010.
    """


class SVCCV(ClassifierMixin, _BaseCV):
    __doc__ = f"""C-support vector classifier with (C, γ) chosen by cross-validation.

    For each fold and each γ, one ε-approximate regularization path over C of the
    binary C-SVC on the training fold (:meth:`SVMProblem.path
    <margin_opt.problems.base.KernelProblem.path>`); each C of the grid is scored on the
    validation fold by the model of the point that covers it (``path.solution_at(C)``,
    within a relative ``eps`` of the optimum at C, certified there).  The best (C, γ)
    (GridSearchCV's rule) is refitted as a :class:`~margin_opt.SVC`.

    More than two classes: no path (one path per class pair is left for later); each C
    of the grid is fitted by a one-vs-one :class:`~margin_opt.SVC` on the training fold
    (exact, certified), ``paths_`` holds None, and the cost grows with the grid.

    Parameters
    ----------{_DOC_PARAMS}
    fit_intercept : bool, default=True
    class_weight : dict or "balanced", default=None
        As :class:`~margin_opt.SVC`'s (resolved on each training fold).
    cache_size : float, default=200
        SMO's kernel row cache in MB (the paths' and the refit's).

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,){_DOC_ATTRIBUTES.replace("{est}", "SVC")}

    Examples
    --------
    >>> from margin_opt import SVCCV
    >>> from margin_opt.datasets import load_dataset
    >>> d = load_dataset("breast_cancer")
    >>> cv = SVCCV(Cs=[0.1, 1, 10], gammas=[0.01, 0.03]).fit(d.X, d.y)
    >>> cv.best_params_                                    # doctest: +SKIP
    {{'C': 1.0, 'gamma': 0.03}}
{_REFERENCES}"""

    _parameter_constraints: dict = {
        **_CV_PARAMETERS,
        "fit_intercept": ["boolean"],
        "class_weight": [dict, StrOptions({"balanced"}), None],
    }

    def __init__(self, Cs=10, gammas=None, cv=5, scoring=None, eps=1e-4, n_jobs=None,
                 refit=True, kernel="rbf", degree=3, coef0=0.0, tol=1e-6,
                 fit_intercept=True, class_weight=None, cache_size=200):
        self.Cs = Cs
        self.gammas = gammas
        self.cv = cv
        self.scoring = scoring
        self.eps = eps
        self.n_jobs = n_jobs
        self.refit = refit
        self.kernel = kernel
        self.degree = degree
        self.coef0 = coef0
        self.tol = tol
        self.fit_intercept = fit_intercept
        self.class_weight = class_weight
        self.cache_size = cache_size

    def _model_params(self) -> dict:
        return {"fit_intercept": self.fit_intercept, "class_weight": self.class_weight}

    def _refit_estimator(self, C, gamma):
        return SVC(C=C, gamma=gamma, **self._spec()["estimator"])

    def decision_function(self, X):
        """The refitted best model's decision values (:meth:`SVC.decision_function
        <margin_opt.SVC.decision_function>`).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        scores : ndarray of shape (n_samples,) or (n_samples, n_classes)
        """
        return self._fitted_best().decision_function(X)


class SVRCV(RegressorMixin, _BaseCV):
    __doc__ = f"""ε-support vector regression with (C, γ) chosen by cross-validation.

    For each fold and each γ, one ε-approximate regularization path over C of the
    ε-SVR on the training fold (:meth:`SVRProblem.path
    <margin_opt.problems.base.KernelProblem.path>`); each C of the grid is scored (R²
    by default) on the validation fold by the model of the covering point
    (``path.solution_at(C)``, certified within a relative ``eps`` at C).  The best
    (C, γ) is refitted as a :class:`~margin_opt.SVR`.  (``eps`` is the path's accuracy;
    ``epsilon`` the tube's half-width.)

    Parameters
    ----------{_DOC_PARAMS}
    epsilon : float, default=0.1
        Half-width of the insensitive tube, in target units (≥ 0).
    cache_size : float, default=200
        SMO's kernel row cache in MB (the paths' and the refit's).

    Attributes
    ----------{_DOC_ATTRIBUTES.replace("{est}", "SVR")}

    Examples
    --------
    >>> from margin_opt import SVRCV
    >>> from margin_opt.datasets import load_dataset
    >>> d = load_dataset("diabetes")
    >>> cv = SVRCV(Cs=(0.1, 100.0, 7), gammas=[0.01, 0.1]).fit(d.X, d.y)
    >>> round(cv.best_score_, 2)                          # doctest: +SKIP
    0.48
{_REFERENCES}"""

    _parameter_constraints: dict = {
        **_CV_PARAMETERS,
        "epsilon": [Interval(numbers.Real, 0, None, closed="left")],
    }

    def __init__(self, Cs=10, gammas=None, cv=5, scoring=None, eps=1e-4, n_jobs=None,
                 refit=True, kernel="rbf", degree=3, coef0=0.0, tol=1e-6, epsilon=0.1,
                 cache_size=200):
        self.Cs = Cs
        self.gammas = gammas
        self.cv = cv
        self.scoring = scoring
        self.eps = eps
        self.n_jobs = n_jobs
        self.refit = refit
        self.kernel = kernel
        self.degree = degree
        self.coef0 = coef0
        self.tol = tol
        self.epsilon = epsilon
        self.cache_size = cache_size

    def _model_params(self) -> dict:
        return {"epsilon": self.epsilon}

    def _refit_estimator(self, C, gamma):
        return SVR(C=C, gamma=gamma, **self._spec()["estimator"])
