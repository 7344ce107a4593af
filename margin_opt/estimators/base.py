"""What the kernel estimators share: storing a fitted solution and evaluating f(x)."""

from __future__ import annotations

import numpy as np
from sklearn.utils.validation import check_array, check_is_fitted

from ..validation import check_precomputed_kernel

__all__ = ["store_fit", "kernel_decision", "solver_options"]


def solver_options(est, problem) -> dict:
    """The keywords for ``problem.solve(est.solver, ...)``: ``est.solver_options`` plus tol.

    At m(α) − M(α) ≤ tol the duality gap of an SMO answer is at most
    tol·(Σα + ΣCᵢ), so SMO is stopped at tol / max(1, C) for the answer to certify
    at ``est.tol`` (for the hard margin the gap is at most 2·tol·P already).  The
    subgradient method stops at a parameter change ≤ tol.
    """
    options = dict(est.solver_options or {})
    if est.solver == "smo":
        c_max = float(problem.C_i.max())
        c_max = c_max if np.isfinite(c_max) else 1.0
        options.setdefault("tol", est.tol / max(1.0, min(c_max, 1e6)))
    elif est.solver == "subgradient":
        options.setdefault("tol", est.tol)
    return options


def store_fit(est, problem, sol, dual_coef, tol, certify):
    """Set the fitted attributes common to SVC and SVR on ``est``.

    ``dual_coef`` (shape (n_samples,)) are the coefficients of K(x, xᵢ) in f.  A
    representer answer (kernelized Pegasos) carries its own coefficients β in
    ``sol.extra["beta"]``: those reproduce the function the solver found, so they are
    used instead (its α, filled from the subgradient, serves the certificate).
    """
    if "beta" in sol.extra:
        dual_coef = sol.extra["beta"]
        support = np.flatnonzero(dual_coef)
    else:
        support = sol.support_
    est.n_features_in_ = problem.X.shape[1]
    est._kernel = problem.kernel
    est._n_train = problem.n_samples
    est.solution_ = sol
    est.support_ = support
    est.support_vectors_ = problem.X[support]
    est.dual_coef_ = np.asarray(dual_coef)[support][None, :]
    est.intercept_ = np.array([sol.b])
    est.n_iter_ = sol.n_iter
    if problem.kernel.is_linear:
        est.coef_ = np.asarray(sol.w)[None, :]
    est.certificate_ = problem.certify(sol, tol=tol) if certify else None


def kernel_decision(est, X) -> np.ndarray:
    """f(x) = Σᵢ dual_coef_ᵢ K(x, svᵢ) + intercept_, ndarray of shape (n_samples,).

    Raises
    ------
    NotFittedError, ValueError
        Not fitted; wrong number of features (or of kernel columns for precomputed).
    """
    check_is_fitted(est)
    name = type(est).__name__
    if est._kernel.name == "precomputed":
        K = check_precomputed_kernel(X, n_train=est._n_train)
        return K[:, est.support_] @ est.dual_coef_[0] + est.intercept_[0]
    X = check_array(X, accept_sparse="csr", dtype=np.float64)
    if X.shape[1] != est.n_features_in_:
        raise ValueError(f"X has {X.shape[1]} features, but {name} was fitted with "
                         f"{est.n_features_in_}.")
    if hasattr(est, "coef_"):
        return np.asarray(X @ est.coef_[0]).ravel() + est.intercept_[0]
    if est.support_.size == 0:
        return np.full(X.shape[0], est.intercept_[0])
    return est._kernel(X, est.support_vectors_) @ est.dual_coef_[0] + est.intercept_[0]
