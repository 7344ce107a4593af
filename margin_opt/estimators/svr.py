"""scikit-learn style ε-insensitive support vector regression on :class:`SVRProblem`."""

from __future__ import annotations

import numbers

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin, _fit_context
from sklearn.utils._param_validation import Interval, StrOptions

from ..exceptions import InfeasibleError, NotCertifiedError, no_convergence_warnings
from ..kernels import KERNELS, ColumnMap, make_kernel
from ..kernels.expansion import binary_expansion, evaluate
from ..methods import auto_method, method_names
from ..parallel import blas_on_one_thread
from ..problems.svr import SVRProblem
from ..validation import (
    C_MAX,
    check_libsvm_sample_weight,
    check_precomputed_kernel,
    check_solver_options,
)
from .base import (
    LIBSVM_PARAMETERS,
    STOPPED_SHORT,
    KernelCoefMixin,
    check_predict_input,
    dense_attribute,
    fit_input,
    fit_problem,
    fit_status,
    input_form_attributes,
    kernel_decision,
    warn_stopped,
)

__all__ = ["SVR"]


class SVR(KernelCoefMixin, RegressorMixin, BaseEstimator):
    """ε-insensitive support vector regression solved as an explicit convex problem.

    Parameters
    ----------
    C : float, default=1.0
        Penalty of the slacks (> 0).  ``np.inf`` (accepted as by scikit-learn, "a very
        large C") asks for every target within ``epsilon``: fitted as
        C = :data:`~margin_opt.validation.C_MAX` with every positive sample weight 1,
        whose bound the multipliers of a feasible tube do not reach (where they do, or
        no answer certifies, no function of the kernel is within ``epsilon`` of every
        target and the fit raises, see :meth:`fit`).
    epsilon : float, default=0.1
        Half-width of the insensitive tube, in target units (≥ 0).
    kernel : {"linear", "poly", "rbf", "sigmoid", "precomputed"} or callable, default="rbf"
        A callable takes X as it is (see Notes).
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
    cache_size : float, default=200
        SMO's kernel row cache, in MB (scikit-learn's parameter).
    max_iter : int, default=-1
        SMO's (and the subgradient method's) iteration limit; -1: no limit.  A run that
        reaches it warns (``ConvergenceWarning``, in scikit-learn's words "Solver
        terminated early (max_iter=N) ..." then the solver's account) and its answer is
        kept, not repaired: ``fit_status_`` is 1 and ``certificate_`` is not ok, as
        scikit-learn's SVR returns its model.  The cvxpy methods run to their own limits.
    shrinking : bool, default=True
        SMO's shrinking heuristic (the answer is the same either way).
    verbose : bool, default=False
        Progress on stdout (a line for the solved problem, SMO's every 1000
        iterations, the conic solver's log); False: nothing is printed.

    Attributes
    ----------
    support_ : ndarray of int32 of shape (n_SV,)
    support_vectors_ : {ndarray, csr_matrix} of shape (n_SV, n_features)
        The training rows ``X[support_]``: a CSR matrix when fitted on sparse X (as
        scikit-learn's); for a callable kernel, the rows of X as given to ``fit``; for
        ``kernel="precomputed"``, the rows of the training Gram matrix.
    n_support_ : ndarray of int32 of shape (1,)
        The number of support vectors (scikit-learn's layout for regression).
    dual_coef_ : {ndarray, csr_matrix} of shape (1, n_SV)
        aᵢ − âᵢ of the support vectors; a CSR matrix when fitted on sparse X (as
        scikit-learn's).
    intercept_ : ndarray of shape (1,)
    coef_ : {ndarray, csr_matrix} of shape (1, n_features)
        Linear kernel only; other kernels raise scikit-learn's AttributeError.  A CSR
        matrix when fitted on sparse X (as scikit-learn's).

        The CSR attributes are ``csr_matrix``, or ``csr_array`` under scikit-learn's
        ``set_config(sparse_interface="sparray")``; prediction reads them as they are.
    fit_status_ : int
        0 when solved to its tolerance, 1 when stopped at ``max_iter``.
    shape_fit_ : tuple
        Shape of the training X ((n_samples,) for a callable kernel's X without one).
    solution_ : Solution
    certificate_ : Certificate or None
    n_iter_ : int or None
    n_features_in_ : int
        Not set for a callable kernel (X is the callable's, as in scikit-learn).
    feature_names_in_ : ndarray of shape (``n_features_in_``,)
        When X has feature names (a DataFrame).

    Notes
    -----
    A callable kernel receives X as given to ``fit`` and ``predict`` (nothing is
    converted, as in scikit-learn) and must return K(A, B) of shape (len(A), len(B)) (a
    sparse matrix is made dense).  The fit is posed on the matrix K(X, X), computed once
    (``solution_`` and the certificate are those of that precomputed problem), and
    prediction calls ``kernel(X_new, X)`` with the training X, which the model keeps.

    Sparse X with at least 2¹⁶ features of which at most half hold an entry (e.g. an
    svmlight file whose largest feature index is 2·10⁹) is fitted on the columns that
    hold one (:class:`~margin_opt.kernels.ColumnMap`), as by :class:`SVC`: the kernel
    values, hence the model, are the same, and the memory is O(nnz + n·k) for k such
    columns instead of O(n·n_features).  ``support_vectors_`` and ``coef_`` are in the
    user's columns; ``solution_`` (w, the certificate) is the problem's, on the k
    columns.  ``gamma="scale"`` is resolved on the user's X, as scikit-learn does.

    References
    ----------
    A. J. Smola and B. Schölkopf, "A tutorial on support vector regression",
    Statistics and Computing 14, 2004.
    """

    _parameter_constraints: dict = {
        "C": [Interval(numbers.Real, 0, None, closed="right")],     # np.inf: scikit-learn's
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
        **LIBSVM_PARAMETERS,
    }

    def __init__(self, C=1.0, epsilon=0.1, kernel="rbf", gamma="scale", degree=3, coef0=0.0,
                 solver="auto", tol=1e-6, solver_options=None, certify=True, cache_size=200,
                 max_iter=-1, shrinking=True, verbose=False):
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
        self.cache_size = cache_size
        self.max_iter = max_iter
        self.shrinking = shrinking
        self.verbose = verbose

    @_fit_context(prefer_skip_nested_validation=True)
    @blas_on_one_thread
    def fit(self, X, y, sample_weight=None):
        """Fit the SVR.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Or the Gram matrix (n_samples, n_samples) for ``kernel="precomputed"``;
            anything a callable kernel takes (passed to it as it is).
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
        TypeError
            A sparse precomputed kernel (scikit-learn's "Sparse precomputed kernels are
            not supported.").
        InfeasibleError
            ``C=np.inf`` where the multipliers reach the bound that stands for infinity:
            no function of the kernel is within ``epsilon`` of every target.
        NotCertifiedError
            No answer certified (with ``C=np.inf``: the message says that an infeasible
            tube is the likely cause).
        """
        # a callable kernel: X as given to it, the fit posed on K(X, X) (scikit-learn's)
        X, y = fit_input(self, X, y, y_numeric=True)
        if X.shape[0] < 2:
            raise ValueError("SVR needs at least 2 samples; got n_samples = 1.")
        if self.kernel == "precomputed":    # checked here: fitted even when not PSD (as
            X = check_precomputed_kernel(X, check_psd=False)   # LIBSVM); its certificate says so
        # resolved on the user's X (gamma="scale" reads its n_features and variance)
        kernel = make_kernel("precomputed" if callable(self.kernel) else self.kernel, X,
                             gamma=self.gamma, degree=self.degree, coef0=self.coef0)
        sample_weight = check_libsvm_sample_weight(sample_weight, X)
        check_solver_options(self.solver_options)
        C = self.C
        if np.isinf(C):     # scikit-learn's C=inf: no slack, the limit of a large C
            C, sample_weight = C_MAX, (sample_weight > 0).astype(float)
        # sparse data whose columns are mostly empty are posed on the columns that hold
        # an entry: the same kernel values, in memory O(nnz + n·k) rather than O(n·d)
        self._columns = ColumnMap.of(X, kernel)
        X_fit = X if self._columns is None else self._columns.compress(X)
        problem = SVRProblem(X_fit, y, C=C, epsilon=self.epsilon, kernel=kernel,
                             sample_weight=sample_weight)
        solver = self.solver if self.solver != "auto" else auto_method(
            "svr", linear=problem.explicit_w, n_samples=X.shape[0])
        with no_convergence_warnings():     # a run stopped short: one warning, below
            try:
                sol = fit_problem(self, problem, solver)
            except NotCertifiedError as exc:
                if not np.isinf(self.C):
                    raise
                raise NotCertifiedError(
                    f"{_no_tube(self.epsilon)} No answer was certified, as when no function "
                    "of this kernel is within epsilon of every target (the multipliers then "
                    "grow without bound): use a finite C (e.g. C=1.0) or a larger epsilon. "
                    f"The solve path: {exc}") from None
        if np.isinf(self.C) and sol.status not in STOPPED_SHORT and \
                np.max(np.abs(self.dual_coef_), initial=0.0) >= 0.5 * C_MAX:
            raise InfeasibleError(f"{_no_tube(self.epsilon)} Its multipliers reached the "
                                  f"bound C = {C_MAX:g}: no function of this kernel is within "
                                  "epsilon of every target. Use a finite C (e.g. C=1.0) or a "
                                  "larger epsilon.")
        if self._columns is not None:       # the fitted attributes in the user's columns
            self.n_features_in_ = X.shape[1]
            self.support_vectors_ = X[self.support_]
            if "coef_" in self.__dict__:
                self.coef_ = self._columns.expand(self.coef_)
        self.shape_fit_ = X.shape
        input_form_attributes(self, X)      # CSR after sparse X, as scikit-learn's
        self.n_support_ = np.array([self.support_.size], dtype=np.int32)
        self.fit_status_ = fit_status([sol])
        warn_stopped(self, [sol])
        return self

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.pairwise = self.kernel == "precomputed"
        tags.input_tags.sparse = self.kernel != "precomputed"
        return tags

    def predict(self, X):
        """f(x) = Σᵢ(aᵢ − âᵢ)K(x, xᵢ) + b.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            For ``kernel="precomputed"``: K(X, X_train) of shape (n_samples, n_train);
            for a callable kernel, anything it takes.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
        """
        columns = self.__dict__.get("_columns")
        if columns is None:
            return kernel_decision(self, X)
        # fitted on the columns that hold an entry: the queries posed there, with their
        # entries in the other columns kept as one column of their norm (RBF distances)
        X = check_predict_input(self, X)
        X = columns.compress(X, rest=True)
        if "coef_" in self.__dict__:
            w = columns.compress(self.coef_, rest=True).toarray()[0]
            return np.asarray(X @ w).ravel() + self.intercept_[0]
        return evaluate(self._kernel, X, columns.compress(self.support_vectors_, rest=True),
                        binary_expansion(dense_attribute(self.dual_coef_)[:1],
                                         self.intercept_[:1]),
                        support=self.support_)[:, 0]


def _no_tube(epsilon) -> str:
    """The start of SVR(C=np.inf)'s errors: what was asked and how it was fitted."""
    return (f"SVR(C=np.inf) asks for every target within epsilon={epsilon:g} of the "
            f"prediction (no slack, scikit-learn's limit of a large C), fitted as C = "
            f"{C_MAX:g}, the largest box bound the solvers resolve.")
