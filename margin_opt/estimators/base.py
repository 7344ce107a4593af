"""What the kernel estimators share: solving, storing a fitted solution, evaluating f(x)."""

from __future__ import annotations

import numpy as np
from sklearn.utils.validation import check_is_fitted, validate_data

from ..methods import get_method, stopping_options
from ..problems.solve_path import finish, warn_nonconvex
from ..validation import canonical, check_precomputed_kernel

__all__ = ["backend_options", "certify_result", "fit_problem", "kernel_decision",
           "solve_and_certify", "check_predict_input", "support_kernel"]


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
    if certify and spec.iterative:
        # a first-order method is held to the accuracy it is documented to reach, and its
        # answer is kept (its certificate reports the gap it reached)
        sol = problem.solve(solver, certify=max(est.tol, spec.accuracy_for(problem.model)),
                            **options)
    elif certify:
        sol = problem.solve(solver, certify=est.tol, fallback=True, **options)
    else:
        sol = problem.solve(solver, certify=False, **options)
        warn_nonconvex(problem, stacklevel=3)
    return sol, (sol.certificate if certify else None)


def backend_options(est, problem, solver) -> dict:
    """The options ``solver`` runs with on ``problem``: the registry's stopping policy
    for ``est.tol`` (:func:`margin_opt.methods.stopping_options`), then
    ``est.solver_options``."""
    return {**stopping_options(solver, est.tol, float(np.max(problem.C_i))),
            **(est.solver_options or {})}


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
    if est.certify:
        sol = finish(problem, solver, res, certify=est.tol, fallback=True, **options)
        return sol, sol.certificate
    sol = finish(problem, solver, res, certify=False, **options)
    warn_nonconvex(problem, stacklevel=3)
    return sol, None


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
    est.support_ = support
    est.support_vectors_ = problem.X[support]
    est.dual_coef_ = np.asarray(sol.dual_coef)[:, support]
    est.intercept_ = np.asarray(sol.intercept, dtype=float).copy()
    est.n_iter_ = sol.n_iter
    if problem.kernel.is_linear:
        est.coef_ = np.asarray(sol.w)[None, :]
    return sol


def check_predict_input(est, X):
    """Validate X at prediction time (the estimator fitted, its features, its names).

    scikit-learn's ``validate_data(reset=False)``: the wording "X has N features, but
    SVC is expecting M features as input" and the warning when the feature names
    differ from those seen in ``fit``.

    Returns
    -------
    X : {ndarray, csr_matrix} of shape (n_samples, n_features)
        For ``kernel="precomputed"``: K(X, X_train) of shape (n_samples, n_train).

    Raises
    ------
    NotFittedError, ValueError
        Not fitted; wrong number of features (or of kernel columns for precomputed).
    """
    check_is_fitted(est)
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


def support_kernel(est, X) -> np.ndarray:
    """K(X, support_vectors_) of shape (n_samples, n_SV) for validated X."""
    if est._kernel.name == "precomputed":
        return X[:, est.support_]
    if est.support_.size == 0:
        return np.zeros((X.shape[0], 0))
    return est._kernel(X, est.support_vectors_)


def kernel_decision(est, X) -> np.ndarray:
    """f(x) = Σᵢ dual_coef_ᵢ K(x, svᵢ) + intercept_ for a single decision function.

    Returns
    -------
    scores : ndarray of shape (n_samples,)

    Raises
    ------
    NotFittedError, ValueError
        See :func:`check_predict_input`.
    """
    X = check_predict_input(est, X)
    coef, b = est.dual_coef_[0], est.intercept_[0]
    if hasattr(est, "coef_"):
        return np.asarray(X @ est.coef_[0]).ravel() + b
    return support_kernel(est, X) @ coef + b
