"""What the kernel estimators share: solving, storing a fitted solution, evaluating f(x)."""

from __future__ import annotations

import inspect
import numbers
import warnings

import numpy as np
import scipy.sparse as sp
from sklearn import get_config
from sklearn.utils import _safe_indexing
from sklearn.utils._param_validation import Interval, Options
from sklearn.utils.validation import _num_samples, check_consistent_length, check_is_fitted

from ..exceptions import ConvergenceWarning
from ..kernels import make_kernel
from ..kernels.expansion import binary_expansion, evaluate
from ..methods import METHODS, get_method, stopping_options
from ..problems.solve_path import finish, warn_nonconvex
from ..validation import canonical, check_precomputed_kernel, validate_data

__all__ = ["backend_options", "certify_result", "fit_problem", "kernel_decision",
           "solve_and_certify", "check_predict_input", "fit_status", "fit_input",
           "input_form_attributes", "sparse_attribute", "dense_attribute", "warn_stopped",
           "KernelCoefMixin", "LIBSVM_PARAMETERS"]

#: scikit-learn's LIBSVM parameters of SVC and SVR, for their ``_parameter_constraints``
LIBSVM_PARAMETERS = {
    "cache_size": [Interval(numbers.Real, 0, None, closed="neither")],
    "max_iter": [Interval(numbers.Integral, 1, None, closed="left"), Options(numbers.Integral,
                                                                              {-1})],
    "shrinking": ["boolean"],
    "verbose": ["verbose"],
}

#: Solution statuses of a run that stopped short of its tolerance (``fit_status_ = 1``)
STOPPED_SHORT = ("max_iter", "stalled", "stopped")


class KernelCoefMixin:
    """``coef_`` as scikit-learn's SVC and SVR have it: set for a linear kernel, and an
    AttributeError that says so for the others ("coef_ is only available when using a
    linear kernel"), fitted or not."""

    def __getattr__(self, name):
        # called only when the normal lookup fails: coef_ not set
        if name == "coef_" and self.__dict__.get("kernel", "linear") != "linear":
            raise AttributeError("coef_ is only available when using a linear kernel")
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")


def solve_and_certify(est, problem, *, solver=None, certify=None):
    """Solve ``problem`` with the estimator's solver; certified by default.

    The backend's stopping tolerance follows the registry's policy
    (:func:`margin_opt.methods.stopping_options`) so that its answer certifies at
    ``est.tol``; ``est.solver_options`` override it.  With ``est.certify`` (the
    default) the fit is certified by default: an answer whose certificate fails is
    repaired by the solve path (``fallback=True``: a tighter restart, the exact dual,
    SMO from the exact dual's answer) or :class:`~margin_opt.exceptions.NotCertifiedError`
    says why.  An iterative method (subgradient, Pegasos) is held to its documented
    accuracy instead, and its answer kept whatever its certificate says.  A kernel
    matrix that is not PSD gives a :class:`~margin_opt.exceptions.NonConvexWarning`
    and a certificate that says so.

    Parameters
    ----------
    est : estimator
        With ``solver``, ``tol``, ``solver_options`` and ``certify``.
    problem : KernelProblem or MulticlassSVMProblem
    solver : str, optional
        The registry name to use instead of ``est.solver``.
    certify : bool, optional
        Whether to certify, instead of ``est.certify``.

    Returns
    -------
    solution : Solution
    certificate : Certificate or None
        None when not certified.

    Raises
    ------
    NotCertifiedError
        No answer certified at ``est.tol``.
    NotSeparableError
        The hard margin on data that is not separable.
    """
    solver = est.solver if solver is None else solver
    certify = est.certify if certify is None else certify
    options = backend_options(est, problem, solver)
    spec = get_method(solver)
    verbose = bool(getattr(est, "verbose", False))
    if spec.route == "cvxpy":
        options["verbose"] = verbose        # the conic solver's own log
    if certify and spec.iterative:
        # a first-order method is held to the accuracy it is documented to reach, and its
        # answer is kept (its certificate reports the gap it reached)
        sol = problem.solve(solver, certify=max(est.tol, spec.accuracy_for(problem.model)),
                            **options)
    elif certify:
        # a user's iteration limit is honoured: no repair runs past it; a run it stops
        # warns (ConvergenceWarning) and keeps its answer, whose certificate says it is
        # not optimal (fit_status_ = 1), as scikit-learn's SVC returns its model
        sol = problem.solve(solver, certify=est.tol, fallback=not user_limited(est),
                            **options)
    else:
        sol = problem.solve(solver, certify=False, **options)
        warn_nonconvex(problem, stacklevel=3)
    if certify:
        note_stopped(est, sol)
    if verbose:
        report_progress(sol)
    return sol, (sol.certificate if certify else None)


def note_stopped(est, sol) -> None:
    """The certificate's note when the estimator's ``max_iter`` stopped the run."""
    if user_limited(est) and sol.status in STOPPED_SHORT and sol.certificate is not None:
        sol.certificate.notes.append(
            f"the solver stopped at max_iter={est.max_iter} ({sol.status}): this answer is "
            "not optimal; max_iter=-1 lets the solver finish.")


def user_limited(est) -> bool:
    """Whether the estimator's ``max_iter`` limits its solver (scikit-learn's -1: no)."""
    return getattr(est, "max_iter", -1) != -1


def warn_stopped(est, solutions) -> None:
    """One ``ConvergenceWarning`` for a fit whose runs stopped short (``fit_status_ = 1``)
    without a certified answer: scikit-learn's words where the estimator's ``max_iter``
    stopped one ("Solver terminated early (max_iter=N).  Consider pre-processing your
    data with StandardScaler or MinMaxScaler."), then the solver's own account of the
    first such run and how many of the fit's problems stopped.  The fit's runs are
    solved without their own warnings
    (:func:`margin_opt.exceptions.no_convergence_warnings`), so that a one-vs-one fit
    warns once, as scikit-learn's does."""
    # not reported: a run that stalled at an answer its certificate vouches for, and a
    # first-order method's (it has no stopping test to reach, or warns itself)
    stopped = [s for s in solutions if s.status in STOPPED_SHORT
               and not (s.certificate is not None and s.certificate.ok)
               and not (s.method in METHODS and METHODS[s.method].iterative)]
    if not stopped:
        return
    head = ""
    if user_limited(est) and any(s.status == "max_iter" for s in stopped):
        head = (f"Solver terminated early (max_iter={est.max_iter}).  "
                "Consider pre-processing your data with StandardScaler or MinMaxScaler. ")
    count = f" ({len(stopped)} of {len(solutions)} problems)" if len(solutions) > 1 else ""
    warnings.warn(f"{head}{stopped[0].message}{count}", ConvergenceWarning, stacklevel=3)


def fit_status(solutions) -> int:
    """scikit-learn's ``fit_status_``: 0 when every run reached its tolerance, 1 when one
    stopped short (its ``max_iter``, a stall)."""
    return int(any(s.status in STOPPED_SHORT for s in solutions))


def report_progress(sol) -> None:
    """One line on stdout for a solved problem (the estimator's ``verbose``), in the
    manner of LIBSVM's "optimization finished, #iter = ..."."""
    b = np.ravel(sol.intercept)
    print(f"[margin_opt] {sol.method}: {sol.status}, #iter = {sol.n_iter}, "
          f"obj = {float(sol.dual_objective):.6g}, duality gap = {sol.duality_gap:.3g}, "
          f"b = {', '.join(f'{v:.6g}' for v in b[:3])}{', ...' if b.size > 3 else ''}, "
          f"nSV = {np.asarray(sol.support_).size}", flush=True)


def _smo_progress(result) -> None:
    """SMO's callback under ``verbose``: its iteration, m(α) − M(α) and objective."""
    print(f"[margin_opt] smo: #iter = {result.nit}, m - M = {result.gap:.3g}, "
          f"obj = {-result.fun:.6g}", flush=True)


def backend_options(est, problem, solver, *, max_box=None) -> dict:
    """The options ``solver`` runs with on ``problem``: the registry's stopping policy
    for ``est.tol`` (:func:`margin_opt.methods.stopping_options`), then
    the estimator's ``cache_size``, ``shrinking``, ``max_iter`` (when not -1) and
    ``verbose`` (SMO's progress every 1000 iterations), then ``est.solver_options``.
    ``problem`` None: the options of problems whose largest box bound is ``max_box``
    (many problems at once: the pairs of a one-vs-one fit)."""
    max_box = float(np.max(problem.C_i)) if problem is not None else float(max_box)
    options = stopping_options(solver, est.tol, max_box)
    spec = get_method(solver)
    if spec.standard_form == "DualQP":      # scikit-learn's LIBSVM parameters
        takes = inspect.signature(spec.load()).parameters   # smo: both; dcd: no cache
        for name in ("cache_size", "shrinking"):
            if hasattr(est, name) and name in takes:
                options[name] = getattr(est, name)
        if getattr(est, "verbose", False) and spec.name == "smo":
            options["callback"] = _smo_progress
    if user_limited(est) and spec.route == "backend":
        options["max_iter"] = int(est.max_iter)
    return {**options, **(est.solver_options or {})}


def certify_result(est, problem, res, options, solver="smo"):
    """:func:`solve_and_certify` for a dual backend's result ``res`` computed by the
    caller (e.g. on a thread beside others): its Solution, certified (and repaired)
    at ``est.tol`` by :func:`margin_opt.problems.solve_path.finish`.

    Returns
    -------
    solution : Solution
    certificate : Certificate or None
        None when ``est.certify`` is False.
    """
    limited = user_limited(est)
    # a run stopped short warns once for the whole fit, from the estimator (warn_stopped)
    if est.certify:
        sol = finish(problem, solver, res, certify=est.tol, fallback=not limited, **options)
        cert = sol.certificate
        note_stopped(est, sol)
    else:
        sol, cert = finish(problem, solver, res, certify=False, **options), None
        warn_nonconvex(problem, stacklevel=3)
    if getattr(est, "verbose", False):
        report_progress(sol)
    return sol, cert


def fit_problem(est, problem, solver=None):
    """Solve ``problem`` (:func:`solve_and_certify`, by ``solver`` or ``est.solver``) and
    store the fitted attributes.

    Sets ``solution_``, ``support_``, ``support_vectors_``, ``dual_coef_`` of shape
    (n_functions, n_SV), ``intercept_`` of shape (n_functions,), ``n_iter_``,
    ``coef_`` (linear kernel), ``certificate_`` (when ``est.certify``) and
    ``n_features_in_``.
    """
    sol, est.certificate_ = solve_and_certify(est, problem, solver=solver)
    support = sol.support_
    est.n_features_in_ = problem.X.shape[1]
    est._kernel = problem.kernel
    est._n_train = problem.n_samples
    est.solution_ = sol
    est.support_ = np.asarray(support, dtype=np.int32)      # scikit-learn's dtype
    est.support_vectors_ = problem.X[support]
    est.dual_coef_ = np.asarray(sol.dual_coef)[:, support]
    est.intercept_ = np.asarray(sol.intercept, dtype=float).copy()
    est.n_iter_ = sol.n_iter
    est.__dict__.pop("coef_", None)     # a refit with another kernel
    if problem.kernel.is_linear:
        est.coef_ = np.asarray(sol.w)[None, :]
    return sol


def fit_input(est, X, y, *, y_numeric=False):
    """X and y of a kernel estimator's ``fit``, validated as scikit-learn's SVC and SVR
    take them.

    A callable kernel receives X as it is (a list of strings, a LIL matrix: whatever the
    callable takes, as scikit-learn passes it) and the fit is posed on its matrix
    K(X, X), computed once (scikit-learn's way: the problem's kernel is then
    ``"precomputed"``); the callable and X are kept for prediction, which calls it as
    ``kernel(X_new, X)`` (:func:`check_predict_input`).  Otherwise X is validated
    (CSR for sparse data; a precomputed kernel must be dense).

    Parameters
    ----------
    est : SVC or SVR
    X : {array-like, sparse matrix} of shape (n_samples, n_features), or anything a
        callable kernel takes
    y : array-like of shape (n_samples,)
    y_numeric : bool, default=False
        Regression targets (converted to float).

    Returns
    -------
    X : {ndarray, csr_matrix} of shape (n_samples, n_features)
        The validated data; K(X, X) of shape (n_samples, n_samples) for a callable.
    y : ndarray of shape (n_samples,)

    Raises
    ------
    TypeError
        A sparse precomputed kernel (scikit-learn's "Sparse precomputed kernels are not
        supported.").
    ValueError
        scikit-learn's validation errors; a callable whose values are not a finite
        real (n_samples, n_samples) matrix.
    """
    est._kernel_func = est._fit_X = None
    if callable(est.kernel):
        check_consistent_length(X, y)
        func = make_kernel(est.kernel)
        K = func(X, X)
        K, y = validate_data(est, K, y, dtype=np.float64, y_numeric=y_numeric)
        for name in ("n_features_in_", "feature_names_in_"):    # X has no features here
            est.__dict__.pop(name, None)
        est._kernel_func, est._fit_X = func, X
        return K, y
    precomputed = est.kernel == "precomputed"
    if precomputed and sp.issparse(X):
        raise TypeError("Sparse precomputed kernels are not supported. Pass the kernel "
                        "matrix K(X, X) as a dense array (K.toarray()).")
    X, y = validate_data(est, X, y, accept_sparse=False if precomputed else "csr",
                         dtype=np.float64, y_numeric=y_numeric)
    return canonical(X), y


def input_form_attributes(est, X) -> None:
    """The fitted ``support_vectors_``, ``dual_coef_`` and ``coef_`` in the form of the
    training input, as scikit-learn's SVC and SVR have them: CSR matrices after a fit on
    sparse X (:func:`sparse_attribute`), the rows of X as given to ``fit`` for a
    callable kernel (X is what the callable takes); unchanged after a fit on dense X.

    Parameters
    ----------
    est : SVC or SVR
        Fitted, ``support_vectors_`` and ``dual_coef_`` set (dense).
    X : {ndarray, csr_matrix}
        The validated training data (K(X, X) for a callable kernel).
    """
    if est.__dict__.get("_kernel_func") is not None:
        X_in = est._fit_X
        est.__dict__.pop("n_features_in_", None)        # the Gram's, not X's
        est.support_vectors_ = _safe_indexing(X_in, est.support_)
        est.shape_fit_ = X_in.shape if hasattr(X_in, "shape") else (_num_samples(X_in),)
        return
    if not sp.issparse(X):
        return
    est.support_vectors_ = sparse_attribute(est.support_vectors_)
    est.dual_coef_ = sparse_attribute(est.dual_coef_)
    if "coef_" in est.__dict__:
        est.coef_ = sparse_attribute(est.coef_)


def sparse_attribute(A):
    """A as a CSR matrix of scikit-learn's configured sparse interface
    (``sklearn.get_config()["sparse_interface"]``: ``csr_matrix`` by default,
    ``csr_array`` for ``"sparray"``), as scikit-learn stores a sparse fit's attributes.

    Parameters
    ----------
    A : {ndarray, sparse matrix} of shape (m, n)

    Returns
    -------
    A : {csr_matrix, csr_array} of shape (m, n)
    """
    A = A.tocsr() if sp.issparse(A) else sp.csr_matrix(np.atleast_2d(A))
    if get_config().get("sparse_interface", "spmatrix") == "sparray":
        return A if isinstance(A, sp.csr_array) else sp.csr_array(A)
    return A if isinstance(A, sp.csr_matrix) else sp.csr_matrix(A)


def dense_attribute(A) -> np.ndarray:
    """A fitted attribute as an ndarray (a sparse fit's CSR attributes made dense)."""
    return A.toarray() if sp.issparse(A) else np.asarray(A)


def check_predict_input(est, X):
    """Validate X at prediction time (the estimator fitted, its features, its names).

    scikit-learn's ``validate_data(reset=False)``: the wording "X has N features, but
    SVC is expecting M features as input" and the warning when the feature names
    differ from those seen in ``fit``.  For a callable kernel, X is not validated: the
    callable receives it as it is, with the training X as given to ``fit``
    (scikit-learn's contract), and its values K(X, X_train) are returned.

    Returns
    -------
    X : {ndarray, csr_matrix} of shape (n_samples, n_features)
        For ``kernel="precomputed"``, and for a callable kernel: K(X, X_train) of shape
        (n_samples, n_train).

    Raises
    ------
    NotFittedError, ValueError
        Not fitted; wrong number of features (or of kernel columns for precomputed); a
        callable that does not return K(X, X_train).
    """
    check_is_fitted(est)
    func = est.__dict__.get("_kernel_func")
    if func is not None:
        return func(X, est._fit_X)
    precomputed = est._kernel.name == "precomputed"
    try:
        X = validate_data(est, X, accept_sparse=False if precomputed else "csr",
                          dtype=np.float64, reset=False)
    except ValueError as exc:
        if not (precomputed and "features as input" in str(exc)):
            raise
        raise ValueError(f"{exc} With kernel='precomputed' pass K(X_test, X_train) of shape "
                         f"(n_test, {est._n_train}): its columns are the training samples."
                         ) from None
    return check_precomputed_kernel(X, n_train=est._n_train) if precomputed else canonical(X)


def kernel_decision(est, X) -> np.ndarray:
    """f(x) = Σᵢ dual_coef_ᵢ K(x, svᵢ) + intercept_ for a single decision function, from
    the fitted attributes alone, by blocks (:func:`margin_opt.kernels.expansion.evaluate`).

    Returns
    -------
    scores : ndarray of shape (n_samples,)

    Raises
    ------
    NotFittedError, ValueError
        See :func:`check_predict_input`.
    """
    X = check_predict_input(est, X)
    if hasattr(est, "coef_"):
        if sp.issparse(est.coef_):      # fitted on sparse X (scikit-learn's CSR coef_)
            return dense_attribute(X @ est.coef_.T)[:, 0] + est.intercept_[0]
        return np.asarray(X @ est.coef_[0]).ravel() + est.intercept_[0]
    return evaluate(est._kernel, X, est.support_vectors_,
                    binary_expansion(dense_attribute(est.dual_coef_)[:1], est.intercept_[:1]),
                    support=est.support_)[:, 0]
