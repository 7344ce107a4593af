"""What the kernel estimators share: solving, storing a fitted solution, evaluating f(x)."""

from __future__ import annotations

import numpy as np
from sklearn.utils.validation import check_array, check_is_fitted

from ..methods import stopping_options
from ..validation import check_precomputed_kernel

__all__ = ["fit_problem", "kernel_decision"]


def fit_problem(est, problem):
    """Solve ``problem`` with the estimator's solver and store the fitted attributes.

    The backend's stopping tolerance follows the registry's policy
    (:func:`margin_opt.methods.stopping_options`) so that its answer certifies at
    ``est.tol``; ``est.solver_options`` override it.  Sets ``solution_``,
    ``support_``, ``support_vectors_``, ``dual_coef_`` of shape (n_functions, n_SV),
    ``intercept_`` of shape (n_functions,), ``n_iter_``, ``coef_`` (linear kernel),
    ``certificate_`` (when ``est.certify``) and ``n_features_in_``.
    """
    options = {**stopping_options(est.solver, est.tol, float(np.max(problem.C_i))),
               **(est.solver_options or {})}
    sol = problem.solve(est.solver, **options)
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
    est.certificate_ = problem.certify(sol, tol=est.tol) if est.certify else None
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
