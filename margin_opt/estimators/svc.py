"""scikit-learn style binary support vector classifier on :class:`SVMProblem`."""

from __future__ import annotations

import numbers

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, _fit_context
from sklearn.utils._param_validation import Interval, Options, StrOptions

from ..kernels import KERNELS
from ..methods import method_names
from ..problems.svm import SVMProblem
from .base import fit_problem, kernel_decision

__all__ = ["SVC"]


class SVC(ClassifierMixin, BaseEstimator):
    """Binary C-support vector classifier solved as an explicit convex problem.

    Parameters
    ----------
    C : float, default=1.0
        Penalty of the slacks (> 0); ``np.inf`` fits the hard margin.
    kernel : {"linear", "poly", "rbf", "sigmoid", "precomputed"} or callable, default="rbf"
    gamma : {"scale", "auto"} or float, default="scale"
        As in scikit-learn: ``scale`` is 1 / (n_features · X.var()).
    degree : int, default=3
    coef0 : float, default=0.0
    fit_intercept : bool, default=True
    class_weight : dict or "balanced", default=None
    solver : {"cvxpy-dual", "cvxpy-primal", "smo", "subgradient", "pegasos"}, default="smo"
        Method passed to :meth:`SVMProblem.solve`: SMO (LIBSVM's algorithm, compiled)
        by default, the cvxpy reference formulations, or the iterative primal methods.
    tol : float, default=1e-6
        Tolerance of the certificate computed after fitting.  SMO stops at
        m(α) − M(α) ≤ tol / max(1, C) (the duality gap is bounded by that times
        Σα + ΣCᵢ), the subgradient method at a parameter change ≤ tol.
    solver_options : dict, default=None
        Extra keywords for the solver (e.g. ``{"max_iter": 1000}``).
    certify : bool, default=True
        Compute ``certificate_`` after fitting.

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
        ``classes_[1]`` is the positive class (decision_function > 0).
    support_ : ndarray of shape (n_SV,)
        Indices of the support vectors.
    support_vectors_ : ndarray of shape (n_SV, n_features)
    dual_coef_ : ndarray of shape (1, n_SV)
        yᵢαᵢ of the support vectors (scikit-learn's convention).
    intercept_ : ndarray of shape (1,)
    coef_ : ndarray of shape (1, n_features)
        Only for the linear kernel.
    solution_ : Solution
    certificate_ : Certificate or None
    n_iter_ : int or None
    n_features_in_ : int

    References
    ----------
    C. Cortes and V. Vapnik, "Support-vector networks", Machine Learning 20, 1995.
    """

    _parameter_constraints: dict = {
        "C": [Interval(numbers.Real, 0, None, closed="neither"), Options(numbers.Real, {np.inf})],
        "kernel": [StrOptions(set(KERNELS)), callable],
        "gamma": [StrOptions({"scale", "auto"}), Interval(numbers.Real, 0, None,
                                                          closed="neither")],
        "degree": [Interval(numbers.Integral, 1, None, closed="left")],
        "coef0": [Interval(numbers.Real, None, None, closed="neither")],
        "fit_intercept": ["boolean"],
        "class_weight": [dict, StrOptions({"balanced"}), None],
        "solver": [StrOptions(set(method_names("svc", estimator=True)))],
        "tol": [Interval(numbers.Real, 0, None, closed="neither")],
        "solver_options": [dict, None],
        "certify": ["boolean"],
    }

    def __init__(self, C=1.0, kernel="rbf", gamma="scale", degree=3, coef0=0.0,
                 fit_intercept=True, class_weight=None, solver="smo", tol=1e-6,
                 solver_options=None, certify=True):
        self.C = C
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.fit_intercept = fit_intercept
        self.class_weight = class_weight
        self.solver = solver
        self.tol = tol
        self.solver_options = solver_options
        self.certify = certify

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None):
        """Fit the SVM.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Or the Gram matrix (n_samples, n_samples) for ``kernel="precomputed"``.
        y : array-like of shape (n_samples,)
            Two classes.
        sample_weight : array-like of shape (n_samples,), default=None

        Returns
        -------
        self : SVC

        Raises
        ------
        ValueError
            Bad input (see :class:`SVMProblem`); more than two classes.
        NotSeparableError
            ``C=np.inf`` on data that is not separable.
        """
        problem = SVMProblem(X, y, C=self.C, kernel=self.kernel, gamma=self.gamma,
                             degree=self.degree, coef0=self.coef0,
                             fit_intercept=self.fit_intercept, sample_weight=sample_weight,
                             class_weight=self.class_weight)
        self.classes_ = problem.classes_
        fit_problem(self, problem)
        return self

    def decision_function(self, X):
        """Signed distance-like score f(x) = Σᵢ yᵢαᵢK(x, xᵢ) + b.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            For ``kernel="precomputed"``: K(X, X_train) of shape (n_samples, n_train).

        Returns
        -------
        scores : ndarray of shape (n_samples,)
            > 0 means ``classes_[1]``.
        """
        return kernel_decision(self, X)

    def predict(self, X):
        """Class labels, ndarray of shape (n_samples,)."""
        scores = self.decision_function(X)
        return self.classes_[(scores > 0).astype(int)]
