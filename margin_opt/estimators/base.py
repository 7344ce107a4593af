"""What the kernel estimators share: solving, storing a fitted solution, evaluating f(x)."""

from __future__ import annotations

import numpy as np
from sklearn.utils.validation import check_array, check_is_fitted

from ..methods import get_method, stopping_options
from ..problems.solve_path import warn_nonconvex
from ..validation import check_precomputed_kernel

__all__ = ["fit_problem", "kernel_decision"]


def fit_problem(est, problem):
    """Solve ``problem`` with the estimator's solver and store the fitted attributes.

    The backend's stopping tolerance follows the registry's policy
    (:func:`margin_opt.methods.stopping_options`) so that its answer certifies at
    ``est.tol``; ``est.solver_options`` override it.  With ``est.certify`` (the
    default) the fit is certified by default: an answer whose certificate fails is
    repaired by the solve path (``fallback=True``) or
    :class:`~margin_opt.exceptions.NotCertifiedError` is raised (an iterative method —
    subgradient, Pegasos — is held to its documented accuracy instead, and its answer
    kept whatever its certificate says); a kernel matrix that
    is not PSD gives a :class:`~margin_opt.exceptions.NonConvexWarning` and a
    certificate that says so.  Sets ``solution_``,
    ``support_``, ``support_vectors_``, ``dual_coef_`` of shape (n_functions, n_SV),
    ``intercept_`` of shape (n_functions,), ``n_iter_``, ``coef_`` (linear kernel),
    ``certificate_`` (when ``est.certify``) and ``n_features_in_``.
    """
    options = {**stopping_options(est.solver, est.tol, float(np.max(problem.C_i))),
               **(est.solver_options or {})}
    spec = get_method(est.solver)
    if est.certify and spec.iterative:
        # a first-order method is held to the accuracy it is documented to reach, and its
        # answer is kept (its certificate reports the gap it reached)
        sol = problem.solve(est.solver, certify=max(est.tol, spec.accuracy_for(problem.model)),
                            **options)
    elif est.certify:
        # certified by default: an answer whose certificate fails at est.tol is repaired
        # (a tighter restart, the exact dual) or NotCertifiedError says why
        sol = problem.solve(est.solver, certify=est.tol, fallback=True, **options)
    else:
        sol = problem.solve(est.solver, certify=False, **options)
        warn_nonconvex(problem, stacklevel=3)
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
    est.certificate_ = sol.certificate if est.certify else None
    return sol


def kernel_decision(est, X) -> np.ndarray:
    """f(x) = Σᵢ dual_coef_ᵢ K(x, svᵢ) + intercept_ for a single decision function.

    Returns
    -------
    scores : ndarray of shape (n_samples,)

    Raises
    ------
    NotFittedError, ValueError
        Not fitted; wrong number of features (or of kernel columns for precomputed).
    """
    check_is_fitted(est)
    name = type(est).__name__
    coef, b = est.dual_coef_[0], est.intercept_[0]
    if est._kernel.name == "precomputed":
        K = check_precomputed_kernel(X, n_train=est._n_train)
        return K[:, est.support_] @ coef + b
    X = check_array(X, accept_sparse="csr", dtype=np.float64)
    if X.shape[1] != est.n_features_in_:
        raise ValueError(f"X has {X.shape[1]} features, but {name} was fitted with "
                         f"{est.n_features_in_}.")
    if hasattr(est, "coef_"):
        return np.asarray(X @ est.coef_[0]).ravel() + b
    if est.support_.size == 0:
        return np.full(X.shape[0], b)
    return est._kernel(X, est.support_vectors_) @ coef + b
