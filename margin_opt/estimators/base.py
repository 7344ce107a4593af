"""What the kernel estimators share: solving, storing a fitted solution, evaluating f(x)."""

from __future__ import annotations

import numpy as np
from sklearn.utils.validation import check_is_fitted, validate_data

from ..certificate import Check, CompositeCertificate
from ..methods import METHODS, stopping_options
from ..validation import check_precomputed_kernel, kernel_psd_defect

__all__ = ["fit_problem", "kernel_decision", "solve_and_certify", "check_predict_input",
           "support_kernel", "check_precomputed_fit", "mark_indefinite", "PSD_TOL"]

#: Largest :func:`~margin_opt.validation.kernel_psd_defect` of a precomputed matrix
#: that still counts as a (PSD) kernel matrix.
PSD_TOL = 1e-8


def check_precomputed_fit(K):
    """A precomputed training matrix: square, and how far from PSD it is.

    scikit-learn's estimators (and its estimator checks) accept any square matrix;
    so do ours, but a matrix that is not symmetric PSD makes the problem non-convex,
    where the KKT conditions only mean a stationary point: the certificate then says
    so (:func:`mark_indefinite`).

    Returns
    -------
    K : ndarray of shape (n_samples, n_samples)
    defect : float
        :func:`~margin_opt.validation.kernel_psd_defect`.

    Raises
    ------
    ValueError
        Not square, sparse, or non-finite.
    """
    K = check_precomputed_kernel(K, check_psd=False)
    return K, kernel_psd_defect(K)


def mark_indefinite(certificate, defect):
    """Add the failing check ``kernel_psd`` to a certificate when ``defect > PSD_TOL``."""
    if certificate is None or defect <= PSD_TOL:
        return certificate
    check = Check("kernel_psd", defect, PSD_TOL,
                  "symmetric PSD kernel matrix (max(asymmetry, −λ_min) / (max|K|·n)): the "
                  "problem is not convex, KKT means stationary only")
    parts = certificate.parts.values() if isinstance(certificate, CompositeCertificate) \
        else [certificate]
    for part in parts:
        part.checks.append(check)
    return certificate


def solve_and_certify(est, problem, *, solver=None, certify=None):
    """Solve ``problem`` with the estimator's solver and certify the answer.

    The backend's stopping tolerance follows the registry's policy
    (:func:`margin_opt.methods.stopping_options`) so that its answer certifies at
    ``est.tol``; ``est.solver_options`` override it.

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
        None when not certified.  When SMO's answer at the registry's stopping
        tolerance does not certify, SMO is run once more from it at a 100× tighter
        tolerance (unless ``solver_options`` fix ``tol``).
    """
    solver = est.solver if solver is None else solver
    options = {**stopping_options(solver, est.tol, float(np.max(problem.C_i))),
               **(est.solver_options or {})}
    sol = problem.solve(solver, **options)
    if not (est.certify if certify is None else certify):
        return sol, None
    cert = problem.certify(sol, tol=est.tol)
    if not cert.ok and METHODS[solver].stopping == "gap_over_C" \
            and "tol" not in (est.solver_options or {}):
        # SMO's rule bounds m(α) − M(α), which bounds the duality gap only up to a factor
        # (Σα + ΣCᵢ)/P: tighten it once, warm-started (the solve path's own polish,
        # issue 11, makes this redundant)
        first = sol
        sol = problem.solve(solver, **{**options, "tol": options["tol"] / 100,
                                       "alpha0": sol.variables.standard_alpha})
        sol.n_iter = (first.n_iter or 0) + (sol.n_iter or 0)
        cert = problem.certify(sol, tol=est.tol)
    return sol, cert


def fit_problem(est, problem):
    """Solve ``problem`` (:func:`solve_and_certify`) and store the fitted attributes.

    Sets ``solution_``,
    ``support_``, ``support_vectors_``, ``dual_coef_`` of shape (n_functions, n_SV),
    ``intercept_`` of shape (n_functions,), ``n_iter_``, ``coef_`` (linear kernel),
    ``certificate_`` (when ``est.certify``) and ``n_features_in_``.
    """
    sol, est.certificate_ = solve_and_certify(est, problem)
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
    return check_precomputed_kernel(X, n_train=est._n_train) if precomputed else X


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
