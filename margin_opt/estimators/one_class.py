"""scikit-learn style one-class SVM (novelty detection) on :class:`OneClassProblem`."""

from __future__ import annotations

import numbers

import numpy as np
from sklearn.base import BaseEstimator, OutlierMixin, _fit_context
from sklearn.utils._param_validation import Interval, StrOptions

from ..kernels import KERNELS, make_kernel
from ..methods import auto_method, method_names
from ..parallel import blas_on_one_thread
from ..problems.one_class import OneClassProblem, check_nu
from ..validation import (
    canonical,
    check_libsvm_sample_weight,
    check_precomputed_kernel,
    check_solver_options,
    validate_data,
)
from .base import (
    LIBSVM_PARAMETERS,
    KernelCoefMixin,
    fit_problem,
    fit_status,
    input_form_attributes,
    kernel_decision,
)

__all__ = ["OneClassSVM"]


class OneClassSVM(KernelCoefMixin, OutlierMixin, BaseEstimator):
    """Unsupervised outlier detection by the one-class SVM, solved as an explicit problem.

    Estimates a region that holds most of the training data: f(x) = Σᵢ αᵢK(xᵢ, x) − ρ
    is positive inside it.  The parameters, the fitted attributes and their values are
    scikit-learn's ``sklearn.svm.OneClassSVM`` (LIBSVM's ``-s 2``) in LIBSVM's scale;
    the fit is certified by default (:attr:`certificate_`, with the ν-property).

    Parameters
    ----------
    kernel : {"linear", "poly", "rbf", "sigmoid", "precomputed"} or callable, default="rbf"
    degree : int, default=3
    gamma : {"scale", "auto"} or float, default="scale"
    coef0 : float, default=0.0
    tol : float, default=1e-6
        Tolerance of the certificate computed after fitting (units of f for the
        residuals, relative for the duality gap, a fraction for the ν-property); SMO
        stops at m(α) − M(α) ≤ tol, LIBSVM's rule.
    nu : float, default=0.5
        ν ∈ (0, 1]: an upper bound on the fraction of training points that are
        outliers and a lower bound on the fraction that are support vectors.  Checked
        first in ``fit``, before the data or any kernel value.
    shrinking : bool, default=True
        SMO's shrinking heuristic (the answer is the same either way).
    cache_size : float, default=200
        SMO's kernel row cache, in MB.
    verbose : bool, default=False
        Progress on stdout (a line for the solved problem, SMO's every 1000
        iterations, the conic solver's log).
    max_iter : int, default=-1
        SMO's iteration limit; -1: no limit.  A run that reaches it warns
        (``ConvergenceWarning``) and keeps its answer: ``fit_status_`` is 1 and
        ``certificate_`` is not ok, as scikit-learn returns its model.
    solver : {"auto", "smo", "cvxpy-dual", "cvxpy-primal"}, default="auto"
        ``"auto"``: SMO on LIBSVM's standard form.
    solver_options : dict, default=None
        Options of the solver (override the stopping policy).
    certify : bool, default=True
        Certify the answer (``certificate_``); one that does not certify is repaired
        by the solve path, or :class:`~margin_opt.exceptions.NotCertifiedError`.

    Attributes
    ----------
    support_ : ndarray of int32 of shape (n_SV,)
        Indices of the support vectors (αᵢ ≠ 0).
    support_vectors_ : {ndarray, sparse matrix} of shape (n_SV, n_features)
    n_support_ : ndarray of int32 of shape (1,)
    dual_coef_ : ndarray of shape (1, n_SV)
        αᵢ of the support vectors in LIBSVM's scale: 0 < αᵢ ≤ sᵢ (the sample weight, 1
        by default), Σα = ν·Σs.  Schölkopf et al.'s multipliers are these ÷ νΣs.
    intercept_ : ndarray of shape (1,)
        −ρ, LIBSVM's scale.
    offset_ : ndarray of shape (1,)
        ρ = −intercept_: ``decision_function = score_samples − offset_``.
    coef_ : ndarray of shape (1, n_features)
        w = Σᵢ αᵢxᵢ, linear kernel only; other kernels raise scikit-learn's
        AttributeError.
    fit_status_ : int
        0 when solved to its tolerance, 1 when stopped short (``max_iter``).
    shape_fit_ : tuple
        Shape of the training X.
    solution_ : Solution
        The certified answer (its ``alpha``, ``xi``, objectives in LIBSVM's scale).
    certificate_ : Certificate or None
        KKT residuals, the duality gap, the support table and the ``nu_property``
        check (quantities ``outlier_fraction``, ``support_fraction``, ``rho``).
    n_iter_ : int or None
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (``n_features_in_``,)
        When X has feature names (a DataFrame).

    Notes
    -----
    Sample weights are LIBSVM's: sample i gets the bound 0 ≤ αᵢ ≤ sᵢ and Σα = νΣs; a
    weight ≤ 0 leaves the sample out.  At ν = 1 every αᵢ = sᵢ and any ρ ≥ maxᵢ(Kα)ᵢ is
    optimal: the model takes ρ = maxᵢ(Kα)ᵢ (LIBSVM returns an infinite ρ there, which
    scikit-learn refuses).  Sparse data is fitted on all its columns (no column map,
    unlike :class:`~margin_opt.SVC` and :class:`~margin_opt.SVR`).

    References
    ----------
    B. Schölkopf, J. C. Platt, J. Shawe-Taylor, A. J. Smola and R. C. Williamson,
    "Estimating the support of a high-dimensional distribution", Neural Computation
    13(7), 2001.
    C.-C. Chang and C.-J. Lin, "LIBSVM: a library for support vector machines",
    ACM TIST 2(3), 2011, §2.3.
    """

    _parameter_constraints: dict = {
        "kernel": [StrOptions(set(KERNELS)), callable],
        "degree": [Interval(numbers.Integral, 1, None, closed="left")],
        "gamma": [StrOptions({"scale", "auto"}), Interval(numbers.Real, 0, None,
                                                          closed="neither")],
        "coef0": [Interval(numbers.Real, None, None, closed="neither")],
        "tol": [Interval(numbers.Real, 0, None, closed="neither")],
        # (0, 1] is checked by check_nu in fit, with a message that says what to do
        "nu": [numbers.Real],
        "solver": [StrOptions(set(method_names("one-class", estimator=True)) | {"auto"})],
        "solver_options": [dict, None],
        "certify": ["boolean"],
        **LIBSVM_PARAMETERS,
    }

    def __init__(self, *, kernel="rbf", degree=3, gamma="scale", coef0=0.0, tol=1e-6, nu=0.5,
                 shrinking=True, cache_size=200, verbose=False, max_iter=-1, solver="auto",
                 solver_options=None, certify=True):
        self.kernel = kernel
        self.degree = degree
        self.gamma = gamma
        self.coef0 = coef0
        self.tol = tol
        self.nu = nu
        self.shrinking = shrinking
        self.cache_size = cache_size
        self.verbose = verbose
        self.max_iter = max_iter
        self.solver = solver
        self.solver_options = solver_options
        self.certify = certify

    @_fit_context(prefer_skip_nested_validation=True)
    @blas_on_one_thread
    def fit(self, X, y=None, sample_weight=None):
        """Fit the one-class SVM to X.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Or the Gram matrix (n_samples, n_samples) for ``kernel="precomputed"``.
            Not modified.
        y : None
            Ignored (scikit-learn's API).
        sample_weight : array-like of shape (n_samples,), default=None
            LIBSVM's per-sample bounds 0 ≤ αᵢ ≤ sᵢ (Σα = νΣs); a weight ≤ 0 leaves its
            sample out.

        Returns
        -------
        self : OneClassSVM

        Raises
        ------
        InvalidParameterError
            ν outside (0, 1], before any data or kernel work (a ValueError).
        ValueError
            Bad input: NaN/inf, empty X, no positive weight, a precomputed matrix that
            is not square.  A precomputed matrix that is not PSD is fitted (as by
            LIBSVM) and its certificate fails on ``psd_kernel``.
        NotCertifiedError
            No answer certified at ``tol``.
        """
        nu = check_nu(self.nu, type(self).__name__)
        check_solver_options(self.solver_options)
        precomputed = self.kernel == "precomputed"
        X = validate_data(self, X, accept_sparse=False if precomputed else "csr",
                          dtype=np.float64)
        X = canonical(X)
        if precomputed:     # fitted even when not PSD (as LIBSVM); the certificate says so
            X = check_precomputed_kernel(X, check_psd=False)
        kernel = make_kernel(self.kernel, X, gamma=self.gamma, degree=self.degree,
                             coef0=self.coef0)
        sample_weight = check_libsvm_sample_weight(sample_weight, X)
        problem = OneClassProblem(X, nu=nu, kernel=kernel, sample_weight=sample_weight)
        solver = self.solver if self.solver != "auto" else auto_method(
            "one-class", linear=problem.explicit_w, n_samples=X.shape[0])
        sol = fit_problem(self, problem, solver)
        self.offset_ = -self.intercept_
        self.shape_fit_ = X.shape
        self.n_support_ = np.array([self.support_.size], dtype=np.int32)
        self.fit_status_ = fit_status([sol])
        input_form_attributes(self, X)      # CSR after sparse X, as scikit-learn's
        return self

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.pairwise = self.kernel == "precomputed"
        tags.input_tags.sparse = self.kernel != "precomputed"
        return tags

    def decision_function(self, X):
        """f(x) = Σᵢ αᵢK(xᵢ, x) − ρ: positive inside the estimated support (inliers).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            For ``kernel="precomputed"``: K(X, X_train) of shape (n_samples, n_train).

        Returns
        -------
        dec : ndarray of shape (n_samples,)
            In LIBSVM's scale (νΣs times Schölkopf et al.'s f).
        """
        return kernel_decision(self, X)

    def score_samples(self, X):
        """The unshifted score Σᵢ αᵢK(xᵢ, x) = decision_function(X) + offset_.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        score : ndarray of shape (n_samples,)
        """
        return self.decision_function(X) + self.offset_[0]

    def predict(self, X):
        """+1 for inliers (f(x) > 0), −1 for outliers (f(x) ≤ 0), as LIBSVM decides.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        y_pred : ndarray of int of shape (n_samples,)
        """
        return np.where(self.decision_function(X) > 0, 1, -1).astype(np.intp)
