"""scikit-learn style ε-insensitive support vector regression on :class:`SVRProblem`."""

from __future__ import annotations

import numbers

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin, _fit_context
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import validate_data

from ..kernels import KERNELS, make_kernel
from ..methods import auto_method, method_names
from ..problems.svr import SVRProblem
from ..validation import canonical, check_libsvm_sample_weight, check_precomputed_kernel
from .base import fit_problem, kernel_decision

__all__ = ["SVR"]


class SVR(RegressorMixin, BaseEstimator):
    """ε-insensitive support vector regression solved as an explicit convex problem.

    Parameters
    ----------
    C : float, default=1.0
        Penalty of the slacks (> 0).
    epsilon : float, default=0.1
        Half-width of the insensitive tube, in target units (≥ 0).
    kernel : {"linear", "poly", "rbf", "sigmoid", "precomputed"} or callable, default="rbf"
    gamma : {"scale", "auto"} or float, default="scale"
    degree : int, default=3
    coef0 : float, default=0.0
    solver : {"auto", "cvxpy-dual", "cvxpy-primal", "smo", "dcd", "subgradient"}, default="auto"
        ``"auto"``: the registry's choice (:func:`margin_opt.methods.auto_method`):
        dual coordinate descent with w explicit (``"dcd"``) for the linear kernel on
        enough samples, SMO otherwise.
    tol : float, default=1e-6
        Tolerance of the certificate computed after fitting.  SMO stops at
        m(α) − M(α) ≤ tol / max(1, C), the subgradient method at a parameter
        change ≤ tol.
    solver_options : dict, default=None
    certify : bool, default=True

    Attributes
    ----------
    support_ : ndarray of shape (n_SV,)
    support_vectors_ : ndarray of shape (n_SV, n_features)
    dual_coef_ : ndarray of shape (1, n_SV)
        aᵢ − âᵢ of the support vectors.
    intercept_ : ndarray of shape (1,)
    coef_ : ndarray of shape (1, n_features)
        Linear kernel only.
    solution_ : Solution
    certificate_ : Certificate or None
    n_iter_ : int or None

    References
    ----------
    A. J. Smola and B. Schölkopf, "A tutorial on support vector regression",
    Statistics and Computing 14, 2004.
    """

    _parameter_constraints: dict = {
        "C": [Interval(numbers.Real, 0, None, closed="neither")],
        "epsilon": [Interval(numbers.Real, 0, None, closed="left")],
        "kernel": [StrOptions(set(KERNELS)), callable],
        "gamma": [StrOptions({"scale", "auto"}), Interval(numbers.Real, 0, None,
                                                          closed="neither")],
        "degree": [Interval(numbers.Integral, 1, None, closed="left")],
        "coef0": [Interval(numbers.Real, None, None, closed="neither")],
        "solver": [StrOptions(set(method_names("svr", estimator=True)) | {"auto"})],
        "tol": [Interval(numbers.Real, 0, None, closed="neither")],
        "solver_options": [dict, None],
        "certify": ["boolean"],
    }

    def __init__(self, C=1.0, epsilon=0.1, kernel="rbf", gamma="scale", degree=3, coef0=0.0,
                 solver="auto", tol=1e-6, solver_options=None, certify=True):
        self.C = C
        self.epsilon = epsilon
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.solver = solver
        self.tol = tol
        self.solver_options = solver_options
        self.certify = certify

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None):
        """Fit the SVR.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,), default=None
            A weight ≤ 0 leaves its sample out, as in LIBSVM.

        Returns
        -------
        self : SVR

        Raises
        ------
        ValueError
            Bad input (see :class:`SVRProblem`), one sample only.  A precomputed
            matrix that is not PSD is fitted (as by LIBSVM) and its certificate fails
            on ``kernel_psd``.
        """
        precomputed = self.kernel == "precomputed"
        X, y = validate_data(self, X, y, accept_sparse=False if precomputed else "csr",
                             dtype=np.float64, y_numeric=True)
        X = canonical(X)
        if X.shape[0] < 2:
            raise ValueError("SVR needs at least 2 samples; got n_samples = 1.")
        kernel = self.kernel
        if precomputed:     # checked here: fitted even when not PSD (as LIBSVM); the
            X = check_precomputed_kernel(X, check_psd=False)   # certificate says so
            kernel = make_kernel("precomputed")
        sample_weight = check_libsvm_sample_weight(sample_weight, X)
        problem = SVRProblem(X, y, C=self.C, epsilon=self.epsilon, kernel=kernel,
                             gamma=self.gamma, degree=self.degree, coef0=self.coef0,
                             sample_weight=sample_weight)
        solver = self.solver if self.solver != "auto" else auto_method(
            "svr", linear=problem.explicit_w, n_samples=X.shape[0])
        fit_problem(self, problem, solver)
        return self

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.pairwise = self.kernel == "precomputed"
        tags.input_tags.sparse = self.kernel != "precomputed"
        return tags

    def predict(self, X):
        """f(x) = Σᵢ(aᵢ − âᵢ)K(x, xᵢ) + b, ndarray of shape (n_samples,)."""
        return kernel_decision(self, X)
