"""Input validation shared by every problem and estimator.

Built on :mod:`sklearn.utils.validation`; adds the checks specific to margin
problems (two classes, C > 0, a PSD precomputed kernel) with messages that say
what to do.  Nothing passed in is modified: arrays are converted, never edited.
"""

from __future__ import annotations

import numbers
from contextlib import contextmanager

import numpy as np
import scipy.sparse as sp
from sklearn.utils.multiclass import check_classification_targets, unique_labels
from sklearn.utils.validation import _check_sample_weight, check_array, check_X_y
from sklearn.utils.validation import validate_data as _sklearn_validate_data

__all__ = [
    "canonical",
    "check_data",
    "check_binary_labels",
    "check_class_labels",
    "check_label_types",
    "check_solver_options",
    "check_libsvm_sample_weight",
    "check_classes_weighted",
    "kernel_psd_defect",
    "check_C",
    "check_box_bounds",
    "check_sample_weight",
    "check_precomputed_kernel",
    "check_positive",
    "check_bool",
    "libsvm_input",
    "libsvm_rows",
    "validate_data",
    "non_numeric_features_hint",
    "advise_non_numeric",
]


def canonical(X):
    """X itself, or for a sparse matrix with duplicate or unsorted entries a copy
    with them summed and sorted (X is not modified).

    scipy allows a CSR row to store one column several times (the value is their
    sum); element-wise products (squared norms) and the merges of sorted rows in
    the kernels would read such a row wrongly.
    """
    if sp.issparse(X) and not X.has_canonical_format:
        X = X.copy()
        X.sum_duplicates()
    return X


def check_data(X, y, *, y_numeric=False):
    """Validate training data.

    Parameters
    ----------
    X : {array-like, sparse matrix} of shape (n_samples, n_features)
    y : array-like of shape (n_samples,)
    y_numeric : bool, default=False
        Require numeric finite targets (regression).

    Returns
    -------
    X : {ndarray, csr_matrix} of shape (n_samples, n_features), float64
        Sparse X in canonical form (:func:`canonical`).
    y : ndarray of shape (n_samples,)

    Raises
    ------
    ValueError
        Empty X, NaN or inf in X (or y), mismatched lengths, X not 2-D, strings or
        categories in X (the message names the columns and says how to encode them).
    """
    X_in = X
    try:
        X, y = check_X_y(X, y, accept_sparse="csr", dtype=np.float64, y_numeric=y_numeric,
                         ensure_all_finite=True)
        X = canonical(X)
    except ValueError as exc:
        msg = str(exc)
        hint = ""
        if "NaN" in msg or "infinity" in msg:
            hint = " Remove or impute the non-finite entries (e.g. sklearn.impute.SimpleImputer)."
        elif "inconsistent numbers of samples" in msg:
            hint = " X and y must have one row / entry per sample."
        else:
            hint = non_numeric_features_hint(X_in, msg)
        raise ValueError(msg + hint) from None
    if y_numeric:
        try:
            y = np.asarray(y, dtype=np.float64)
        except (TypeError, ValueError):
            raise ValueError("y must hold numbers (regression targets); got values such as "
                             f"{y[:3]!r}.") from None
    if y_numeric and not np.all(np.isfinite(y)):
        raise ValueError("y contains NaN or infinity; targets must be finite.")
    return X, y


#: The largest number of columns a message names.
_COLUMNS_SHOWN = 5


def _non_numeric_columns(X) -> list:
    """The columns of X (a DataFrame, an array or nested lists) that hold strings or
    non-numeric categories; [] when none is found or X cannot be read as a table."""
    dtypes = getattr(X, "dtypes", None)
    if dtypes is not None and hasattr(dtypes, "items"):           # a pandas DataFrame
        out = []
        for name, dt in dtypes.items():
            kind = getattr(getattr(dt, "categories", None), "dtype", dt)
            if getattr(kind, "kind", "O") not in "biuf":
                out.append(name)
        return out
    if sp.issparse(X):
        return []
    try:
        A = np.asarray(X, dtype=object)
    except (TypeError, ValueError):
        return []
    if A.ndim != 2:
        return []
    strings = np.vectorize(lambda v: isinstance(v, (str, bytes)), otypes=[bool])(A) \
        if A.size else np.zeros(A.shape, dtype=bool)
    return np.flatnonzero(strings.any(axis=0)).tolist()


def non_numeric_features_hint(X, message) -> str:
    """The advice appended to a conversion error when X holds strings or categories.

    Parameters
    ----------
    X : object
        The features as the user passed them (before any conversion).
    message : str
        The error that the conversion to float raised.

    Returns
    -------
    hint : str
        ". X has non-numeric (string or categorical) column(s) [...]; ... Encode such
        columns first, e.g. with sklearn.preprocessing.OneHotEncoder ..." when ``message``
        is a failed conversion and X has such columns (at most five are named); ""
        otherwise.
    """
    if "convert" not in message and "string" not in message:
        return ""
    cols = _non_numeric_columns(X)
    if not cols:
        return ""
    shown = repr(list(cols[:_COLUMNS_SHOWN]))
    more = f" and {len(cols) - _COLUMNS_SHOWN} more" if len(cols) > _COLUMNS_SHOWN else ""
    stop = "" if message.rstrip().endswith(".") else "."
    return (f"{stop} X has non-numeric (string or categorical) column(s) {shown}{more}; the "
            "models take numbers only. Encode such columns first, e.g. with "
            "sklearn.preprocessing.OneHotEncoder (or OrdinalEncoder for ordered categories) "
            "in a sklearn.compose.ColumnTransformer, chained before the model by "
            "sklearn.pipeline.make_pipeline.")


def validate_data(estimator, /, X="no_validation", y="no_validation", **kwargs):
    """scikit-learn's ``sklearn.utils.validation.validate_data``, whose error for X
    holding strings or categories names the columns and says how to encode them
    (:func:`non_numeric_features_hint`).

    Parameters
    ----------
    estimator : estimator instance
    X, y, **kwargs
        As for scikit-learn's ``validate_data``.

    Returns
    -------
    The validated X, y or (X, y), as scikit-learn's ``validate_data``.

    Raises
    ------
    ValueError
        scikit-learn's errors; "could not convert string to float" with the advice.
    """
    with advise_non_numeric(X):
        return _sklearn_validate_data(estimator, X, y, **kwargs)


@contextmanager
def advise_non_numeric(X):
    """A context whose ValueError from converting X's strings to numbers gets the advice
    of :func:`non_numeric_features_hint` (e.g. around a scikit-learn ``fit``)."""
    try:
        yield
    except ValueError as exc:
        hint = non_numeric_features_hint(X, str(exc))
        if not hint:
            raise
        raise ValueError(f"{exc}{hint}") from None


def check_binary_labels(y):
    """Map two labels to −1/+1.

    Parameters
    ----------
    y : ndarray of shape (n_samples,)
        Any two distinct labels.

    Returns
    -------
    y_pm : ndarray of shape (n_samples,)
        −1.0 for ``classes[0]`` and +1.0 for ``classes[1]``, where ``classes`` is
        ``np.unique(y)`` (sorted; the same convention as scikit-learn, whose
        ``decision_function > 0`` means ``classes_[1]``).
    classes : ndarray of shape (2,)

    Raises
    ------
    ValueError
        One class only, or more than two; labels that mix types (strings and numbers)
        or are continuous (scikit-learn's "Unknown label type").
    """
    _check_label_types(y)
    check_classification_targets(y)
    classes = unique_labels(y)
    if classes.size < 2:
        raise ValueError(
            f"y has a single class ({classes[0]!r} only; one class is not enough): a "
            "classifier needs samples of two classes.")
    if classes.size > 2:
        raise ValueError(
            f"Only binary classification is supported: y has {classes.size} classes but "
            "this model is binary; pass two classes "
            "(e.g. one class against the rest) or use sklearn.multiclass.OneVsRestClassifier.")
    return np.where(y == classes[1], 1.0, -1.0), classes


def _check_label_types(y):
    """ValueError when an object array of labels mixes strings with other types."""
    y = np.asarray(y)
    if y.dtype != object:
        return
    kinds = {isinstance(v, str) for v in y.ravel()}
    if len(kinds) > 1:
        ex = [next(v for v in y.ravel() if isinstance(v, str) == k) for k in (True, False)]
        raise ValueError(f"y mixes strings and other labels (e.g. {ex[0]!r} and {ex[1]!r}); "
                         "use labels of one type, e.g. y.astype(str).")


def check_positive(value, name, *, allow_inf=False, allow_zero=False):
    """Return ``float(value)`` after checking it is a positive number.

    Raises
    ------
    ValueError
        If it is not a real number, NaN, ≤ 0 (< 0 with ``allow_zero``), or
        infinite without ``allow_inf``.
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"{name} must be a real number, got {value!r}.")
    v = float(value)
    if np.isnan(v) or (v < 0 if allow_zero else v <= 0):
        raise ValueError(f"{name} must be {'≥' if allow_zero else '>'} 0, got {value!r}.")
    if np.isinf(v) and not allow_inf:
        raise ValueError(f"{name} must be finite, got {value!r}.")
    return v


def check_bool(value, name):
    """Return ``bool(value)`` after checking it is a boolean (numpy booleans included).

    Raises
    ------
    ValueError
        For anything else (e.g. the string ``"no"``, which Python would read as True).
    """
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    raise ValueError(f"{name} must be True or False, got {value!r}.")


#: The largest finite C accepted: beyond it a box bound is numerically infinite for the
#: solvers (the interior-point scaling and SMO's bounds lose all precision).
C_MAX = 1e12


def check_C(C):
    """Check the regularization parameter: C > 0, ``np.inf`` meaning the hard margin.

    Raises
    ------
    ValueError
        If C ≤ 0 or NaN (the message suggests a positive value such as C=1.0), or a
        finite C above :data:`C_MAX` (use ``np.inf`` for the hard margin).
    """
    try:
        C = check_positive(C, "C", allow_inf=True)
    except ValueError as exc:
        raise ValueError(f"{exc} Use a positive C (e.g. C=1.0; np.inf for the hard margin).") \
            from None
    if np.isfinite(C) and C > C_MAX:
        raise ValueError(f"C={C:g} is above {C_MAX:g}, where a box bound is numerically "
                         "infinite for the solvers: use C=np.inf for the hard margin, or a "
                         f"C ≤ {C_MAX:g}.")
    return C


def check_box_bounds(C, sample_weight):
    """The per-sample bounds Cᵢ = C·sample_weightᵢ, each within :data:`C_MAX`.

    Parameters
    ----------
    C : float
        Checked by :func:`check_C` (``np.inf``: the hard margin, bounds infinite).
    sample_weight : ndarray of shape (n_samples,)
        Checked weights ≥ 0 (class weights folded in).

    Returns
    -------
    C_i : ndarray of shape (n_samples,)

    Raises
    ------
    ValueError
        A finite C whose product with a weight is above :data:`C_MAX` (the box bound
        is then numerically infinite, as for C > C_MAX): the message says which and
        what to do.
    """
    with np.errstate(over="ignore"):
        C_i = C * sample_weight
    if np.isfinite(C):
        big = float(np.max(C_i, initial=0.0))
        if not big <= C_MAX:
            raise ValueError(
                f"C · sample_weight reaches {big:.3g}, above {C_MAX:g}, where a box bound is "
                "numerically infinite for the solvers (C={C:g}, largest weight "
                f"{float(np.max(sample_weight)):.3g}). Only the products C·weightᵢ matter: "
                "rescale the weights (e.g. divide them by their maximum) or C so that every "
                f"product is ≤ {C_MAX:g}; use C=np.inf for the hard margin.")
    return C_i


def check_sample_weight(sample_weight, X):
    """Validate non-negative per-sample weights.

    Returns
    -------
    sample_weight : ndarray of shape (n_samples,)
        A new array (ones when None).

    Raises
    ------
    ValueError
        Wrong length, negative, NaN or infinite weights, or all weights zero.
    """
    try:
        sw = _check_sample_weight(sample_weight, X, dtype=np.float64, ensure_non_negative=True,
                                  copy=True)
    except ValueError as exc:
        raise ValueError(f"{exc} sample_weight must hold one finite weight ≥ 0 per sample.") \
            from None
    if not np.all(np.isfinite(sw)):
        raise ValueError("sample_weight contains NaN or infinity; weights must be finite.")
    if not np.any(sw > 0):
        raise ValueError("sample_weight is zero everywhere; at least one weight must be > 0.")
    return sw


#: Relative tolerance of the symmetry of a precomputed training kernel:
#: |Kᵢⱼ − Kⱼᵢ| ≤ SYMMETRY_RTOL · max(1, max|K|) (:func:`check_precomputed_kernel`).
SYMMETRY_RTOL = 1e-10


def check_precomputed_kernel(K, *, n_train=None, check_psd=True, tol=1e-8):
    """Validate a precomputed kernel matrix.

    Parameters
    ----------
    K : array-like of shape (n_samples, n_samples) at training time, or
        (n_test, n_train) at prediction time (pass ``n_train``).
    n_train : int, optional
        Expected number of columns at prediction time.
    check_psd : bool, default=True
        At training time, require positive semidefiniteness (smallest eigenvalue
        ≥ −tol·max(1, max|K|)·n).  Symmetry is required at training time either way:
        |Kᵢⱼ − Kⱼᵢ| ≤ :data:`SYMMETRY_RTOL` · max(1, max|K|).
    tol : float, default=1e-8

    Returns
    -------
    K : ndarray, float64 (a new array or a read-only view is never modified)

    Raises
    ------
    ValueError
        Not square at training time, wrong number of columns, not symmetric, not
        PSD, or non-finite entries.
    """
    if sp.issparse(K):
        raise ValueError("a precomputed kernel must be a dense array; call K.toarray() first.")
    K = check_array(K, dtype=np.float64, ensure_all_finite=True)
    if n_train is not None:
        if K.shape[1] != n_train:
            raise ValueError(
                f"precomputed kernel has {K.shape[1]} columns but the model was trained on "
                f"{n_train} samples; pass K(X_test, X_train) of shape (n_test, {n_train}).")
        return K
    if K.shape[0] != K.shape[1]:
        raise ValueError(
            f"a precomputed training kernel must be square (n_samples, n_samples), got "
            f"shape {K.shape}; pass K(X_train, X_train).")
    scale = max(1.0, float(np.abs(K).max(initial=0.0)))
    asym = np.abs(K - K.T)
    worst = float(asym.max(initial=0.0))
    if worst > SYMMETRY_RTOL * scale:
        i, j = np.unravel_index(int(np.argmax(asym)), asym.shape)
        raise ValueError(
            f"the precomputed kernel is not symmetric: K[{i}, {j}] = {K[i, j]:.17g} but "
            f"K[{j}, {i}] = {K[j, i]:.17g} (|K − Kᵀ| up to {worst:.3g}, above "
            f"{SYMMETRY_RTOL:g} × max(1, max|K|)); a kernel matrix is symmetric. Check "
            "how it was computed, or pass (K + K.T) / 2 if the asymmetry is round-off.")
    if check_psd:
        lam_min = float(np.linalg.eigvalsh(K)[0]) if K.shape[0] else 0.0
        if lam_min < -tol * scale * max(1, K.shape[0]):
            raise ValueError(
                f"the precomputed kernel is not positive semidefinite (smallest eigenvalue "
                f"{lam_min:.3g}); a valid kernel matrix is PSD. Check the kernel function, or "
                "add a multiple of the identity if the defect is round-off.")
    return K


def libsvm_input(X):
    """X as scikit-learn's LIBSVM wrapper takes it: sparse data with 32-bit indices.

    ``sklearn.svm.SVC.fit`` refuses CSR matrices with 64-bit indices, which
    validation may produce; dense arrays pass through unchanged.
    """
    if not sp.issparse(X):
        return X
    X = sp.csr_matrix(X)
    return sp.csr_matrix((X.data, X.indices.astype(np.int32), X.indptr.astype(np.int32)),
                         shape=X.shape)


def libsvm_rows(sample_weight):
    """Row of the data of each training instance LIBSVM saw, ndarray of int.

    LIBSVM drops instances whose weight is 0 before training, so scikit-learn's
    ``support_`` indexes the remaining rows; ``libsvm_rows(sw)[support_]`` maps
    them back to rows of X.
    """
    return np.flatnonzero(np.asarray(sample_weight) > 0)



def check_solver_options(options) -> dict:
    """Check the common keys of an estimator's ``solver_options`` (a dict or None).

    ``cache_size``, ``tol`` and ``gap_tol``: positive numbers; ``max_iter``: a positive
    integer or None; ``shrinking`` and ``polish``: True or False (Python would read the
    string "no" as true); ``callback``: a callable or None.  Other keys are left to the
    solver.

    Returns
    -------
    options : dict
        The same entries (a new dict; {} for None).

    Raises
    ------
    ValueError
        A value of the wrong kind, saying which key and what it takes.
    """
    if options is None:
        return {}
    if not isinstance(options, dict):
        raise ValueError(f"solver_options must be a dict or None, got {type(options).__name__}.")
    for key, value in options.items():
        if key in ("cache_size", "tol", "gap_tol") and not (value is None and key == "gap_tol"):
            if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real) \
                    or not np.isfinite(value) or value <= 0:
                raise ValueError(f"solver_options[{key!r}] must be a positive number"
                                 f"{' (MB)' if key == 'cache_size' else ''}, got {value!r}.")
        elif key == "max_iter" and value is not None:
            if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral) \
                    or value < 1:
                raise ValueError(f"solver_options['max_iter'] must be a positive integer or "
                                 f"None, got {value!r}.")
        elif key in ("shrinking", "polish"):
            check_bool(value, f"solver_options[{key!r}]")
        elif key == "callback" and value is not None and not callable(value):
            raise ValueError(f"solver_options['callback'] must be a callable or None, got "
                             f"{value!r}.")
    return dict(options)


def check_label_types(y):
    """ValueError when labels mix strings with numbers (they cannot be sorted into
    ``classes_``; numpy's error would be "'<' not supported between 'int' and 'str'").

    Parameters
    ----------
    y : array-like of shape (n_samples,)
    """
    y = np.asarray(y)
    if y.dtype != object:
        return
    strings = np.array([isinstance(v, str) for v in y.ravel()], dtype=bool)
    if strings.any() and not strings.all():
        s, o = y.ravel()[strings][0], y.ravel()[~strings][0]
        raise ValueError(
            f"y mixes strings and other labels (e.g. {s!r} and {o!r}): the classes cannot be "
            "ordered. Use one type for every label, e.g. y = np.asarray(y).astype(str).")


def check_class_labels(y):
    """Encode classification targets as class indices (two classes or more).

    Parameters
    ----------
    y : ndarray of shape (n_samples,)
        Discrete labels (numbers or strings).

    Returns
    -------
    y_index : ndarray of int of shape (n_samples,)
        Position of each label in ``classes``.
    classes : ndarray of shape (n_classes,)
        ``np.unique(y)`` (sorted, as scikit-learn's ``classes_``).

    Raises
    ------
    ValueError
        Continuous targets ("Unknown label type", scikit-learn's wording), or one
        class only.
    """
    check_label_types(y)
    check_classification_targets(y)
    classes, y_index = np.unique(y, return_inverse=True)
    if classes.size < 2:
        raise ValueError(
            f"y has one class only ({classes[0]!r}): a classifier needs samples of at least "
            "two classes.")
    return y_index.ravel(), classes


def check_libsvm_sample_weight(sample_weight, X):
    """Per-sample weights with LIBSVM's semantics: a weight ≤ 0 drops its sample.

    LIBSVM (and so scikit-learn's ``SVC``/``SVR``) removes the samples whose weight
    is not positive before training; giving them the weight 0 (box bound Cᵢ = 0,
    multiplier fixed at 0) is the same problem.

    Parameters
    ----------
    sample_weight : array-like of shape (n_samples,), scalar or None
    X : {ndarray, sparse matrix} of shape (n_samples, n_features)

    Returns
    -------
    sample_weight : ndarray of shape (n_samples,)
        A new array, ≥ 0 (negative weights set to 0; ones when None).

    Raises
    ------
    ValueError
        Wrong shape, NaN or infinite weights, or no positive weight at all.
    """
    sw = _check_sample_weight(sample_weight, X, dtype=np.float64, copy=True,
                              allow_all_zero_weights=True)
    if not np.all(np.isfinite(sw)):
        raise ValueError("sample_weight contains NaN or infinity; weights must be finite.")
    if not np.any(sw > 0):
        # scikit-learn's (and LIBSVM's) words first: code that matches them keeps working
        raise ValueError("Invalid input - all samples have zero or negative weights. "
                         "sample_weight is zero or negative for every sample; at least one "
                         "weight must be > 0 (samples with weight ≤ 0 are left out, as LIBSVM "
                         "does).")
    return np.maximum(sw, 0.0)


def check_classes_weighted(y_index, sample_weight, classes):
    """Raise unless every class keeps at least one sample of positive weight.

    Parameters
    ----------
    y_index : ndarray of int of shape (n_samples,)
    sample_weight : ndarray of shape (n_samples,)
    classes : ndarray of shape (n_classes,)

    Raises
    ------
    ValueError
        A class whose samples all have weight 0 (it could never be predicted and its
        pairs would have no data).
    """
    mass = np.bincount(y_index, weights=sample_weight, minlength=classes.size)
    empty = classes[mass <= 0]
    if empty.size:
        # with one class left, scikit-learn's (and LIBSVM's) words first
        same = "Invalid input - all samples with positive weights belong to the same " \
            "class. " if classes.size - empty.size <= 1 else ""
        raise ValueError(
            f"{same}class {empty.tolist()} has no sample with positive weight (sample_weight × "
            "class_weight): every class in y needs one. Drop that class from y, or give its "
            "samples a positive weight.")


def kernel_psd_defect(K) -> float:
    """How far a square matrix is from a symmetric positive semidefinite kernel matrix.

    Parameters
    ----------
    K : ndarray of shape (n, n)

    Returns
    -------
    defect : float
        max(‖K − Kᵀ‖_max, −λ_min((K + Kᵀ)/2)) / (max(1, ‖K‖_max) · max(1, n)); 0 for a
        PSD matrix up to rounding (:func:`check_precomputed_kernel` refuses a matrix
        whose defect exceeds 1e-8).
    """
    K = np.asarray(K, dtype=float)
    n = K.shape[0]
    if n == 0:
        return 0.0
    scale = max(1.0, float(np.abs(K).max())) * max(1, n)
    asym = float(np.abs(K - K.T).max())
    lam_min = float(np.linalg.eigvalsh(0.5 * (K + K.T))[0])
    return max(asym, -lam_min, 0.0) / scale
