"""scikit-learn style support vector classifier: binary, one-vs-one, or Crammer–Singer."""

from __future__ import annotations

import numbers

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, _fit_context
from sklearn.exceptions import NotFittedError
from sklearn.utils._param_validation import Interval, Options, StrOptions
from sklearn.utils.class_weight import compute_class_weight
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import check_is_fitted

from ..exceptions import no_convergence_warnings
from ..kernels import KERNELS, ColumnMap, make_kernel
from ..kernels.expansion import evaluate, joint_expansion, ovo_expansion
from ..methods import auto_method, method_names, preferred_method
from ..parallel import blas_on_one_thread
from ..problems.multiclass import MulticlassSVMProblem
from ..validation import (
    check_class_labels,
    check_classes_weighted,
    check_libsvm_sample_weight,
    check_precomputed_kernel,
    check_solver_options,
)
from .base import (
    LIBSVM_PARAMETERS,
    KernelCoefMixin,
    check_predict_input,
    dense_attribute,
    fit_input,
    fit_status,
    input_form_attributes,
    solve_and_certify,
    warn_stopped,
)
from .ovo import fit_one_vs_one, linear_decision, ovo_votes, ovr_from_ovo
from .probability import PairCalibrator, ovo_probabilities

__all__ = ["SVC"]


class SVC(KernelCoefMixin, ClassifierMixin, BaseEstimator):
    """C-support vector classifier solved as explicit convex problems, certified.

    Two classes: one binary C-SVC (:class:`~margin_opt.problems.svm.SVMProblem`).
    More classes: one-vs-one as LIBSVM (k(k − 1)/2 binary problems, each solved and
    certified, LIBSVM's layout of the fitted attributes and its voting), or, with
    ``multi_class="crammer_singer"``, the one joint problem of Crammer and Singer
    (:class:`~margin_opt.problems.multiclass.MulticlassSVMProblem`).

    Parameters
    ----------
    C : float, default=1.0
        Penalty of the slacks (> 0); ``np.inf`` fits the hard margin.
    kernel : {"linear", "poly", "rbf", "sigmoid", "precomputed"} or callable, default="rbf"
        A callable takes X as it is (see Notes).
    gamma : {"scale", "auto"} or float, default="scale"
        As in scikit-learn: ``scale`` is 1 / (n_features · X.var()) over all of X.
    degree : int, default=3
    coef0 : float, default=0.0
    fit_intercept : bool, default=True
    class_weight : dict or "balanced", default=None
        Class c's samples get the box bound C · class_weight[c] · sample_weight.
    solver : str, default="auto"
        Method of :meth:`SVMProblem.solve`: ``"smo"`` (LIBSVM's algorithm, compiled),
        ``"cvxpy-dual"``, ``"cvxpy-primal"``, ``"subgradient"``, ``"pegasos"``.
        ``"auto"`` is the registry's choice: for one-vs-one
        :func:`margin_opt.methods.auto_method` (``"dcd"``, dual coordinate descent with
        w explicit, for the linear kernel on enough samples, else ``"smo"``); for
        Crammer–Singer :func:`~margin_opt.methods.preferred_method` (``"sequential-dual"``,
        Keerthi et al.'s method with W explicit, for the linear kernel, ``"cvxpy-dual"``
        otherwise).  Crammer–Singer takes ``"sequential-dual"``, ``"cvxpy-dual"`` and
        ``"cvxpy-primal"``.
    tol : float, default=1e-6
        Tolerance of the certificates computed after fitting.  SMO stops at
        m(α) − M(α) ≤ tol / max(1, C) (the duality gap is bounded by that times
        Σα + ΣCᵢ), the subgradient method at a parameter change ≤ tol.
    solver_options : dict, default=None
        Extra keywords for the solver (e.g. ``{"wss": "first-order"}``); they override
        ``cache_size``, ``max_iter`` and ``shrinking``.
    certify : bool, default=True
        Compute ``certificate_`` after fitting.
    multi_class : {"ovo", "crammer_singer"}, default="ovo"
        How more than two classes are fitted.
    decision_function_shape : {"ovr", "ovo"}, default="ovr"
        As in scikit-learn: for k > 2 classes, ``decision_function`` returns the
        one-vs-one values (n_samples, k(k − 1)/2) or their one-vs-rest aggregate
        (n_samples, k) (votes plus confidences, monotone with the votes).
    break_ties : bool, default=False
        With ``decision_function_shape="ovr"`` and k > 2, predict the argmax of the
        one-vs-rest values (ties between votes broken by confidence) instead of
        LIBSVM's vote (ties to the first class).
    probability : bool, default=False
        Calibrate probabilities (LIBSVM's: per-pair Platt sigmoids on 5-fold
        cross-validated decision values, then pairwise coupling); about 5× the fit.
    random_state : int, RandomState instance or None, default=None
        Shuffles the internal cross-validation of ``probability``.
    cache_size : float, default=200
        SMO's kernel row cache, in MB (scikit-learn's parameter); also the budget under
        which the one-vs-one pairs share one kernel matrix.
    max_iter : int, default=-1
        SMO's (and the subgradient methods') iteration limit per problem; -1: no limit
        (SMO's own, ``max(10**7, 100 n)``).  A fit with a run that reaches it warns
        once (``ConvergenceWarning``, in scikit-learn's words "Solver terminated early
        (max_iter=N) ..." then the solver's account) and the answer is kept, not
        repaired: ``fit_status_`` is 1 and ``certificate_`` is not ok (the answer is not
        optimal), as scikit-learn's SVC returns its model.  The cvxpy methods run to
        their own limits.
    shrinking : bool, default=True
        SMO's shrinking heuristic (the answer is the same either way).
    verbose : bool, default=False
        Progress on stdout: a line per problem solved (method, status, iterations,
        objective, duality gap, nSV), SMO's every 1000 iterations, the conic solver's
        log for the cvxpy methods.  False: nothing is printed.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    class_weight_ : ndarray of shape (n_classes,)
    support_ : ndarray of int32 of shape (n_SV,)
        Indices of the support vectors, grouped by class (LIBSVM's order).
    support_vectors_ : {ndarray, csr_matrix} of shape (n_SV, n_features)
        The training rows ``X[support_]``: a CSR matrix when fitted on sparse X (as
        scikit-learn's); for a callable kernel, the rows of X as given to ``fit`` (a
        list of strings stays a list); for ``kernel="precomputed"``, the rows of the
        training Gram matrix.
    n_support_ : ndarray of int32 of shape (n_classes,)
    dual_coef_ : {ndarray, csr_matrix} of shape (n_classes − 1, n_SV)
        One-vs-one: the coefficients yα of each SV in its k − 1 pairs (LIBSVM's
        layout); two classes: (1, n_SV), positive for ``classes_[1]``.
        Crammer–Singer: shape (n_classes, n_SV), row r the coefficients of f_r.  A CSR
        matrix when fitted on sparse X (as scikit-learn's).
    intercept_ : ndarray of shape (n_classes (n_classes − 1) / 2,)
        One per pair (Crammer–Singer: one per class).
    coef_ : {ndarray, csr_matrix} of shape (n_pairs, n_features)
        Linear kernel only: w of each pair (Crammer–Singer: of each class); other
        kernels raise scikit-learn's AttributeError.  A CSR matrix when fitted on sparse
        X (as scikit-learn's).

        The CSR attributes are ``csr_matrix``, or ``csr_array`` under scikit-learn's
        ``set_config(sparse_interface="sparray")``; prediction reads them as they are.
    n_iter_ : ndarray of int32 of shape (n_pairs,)
    fit_status_ : int
        0 when every problem was solved to its tolerance, 1 when one stopped at
        ``max_iter`` (scikit-learn's meaning).
    probA_, probB_ : ndarray of shape (n_pairs,) or (0,)
        With ``probability``: P(i | x, pair (i, j)) = 1 / (1 + exp(A d + B)) for the
        pair's value d > 0 toward i (two classes: d = −decision_function); empty
        arrays otherwise (as scikit-learn).
    solution_ : Solution
        Two classes or Crammer–Singer: the solution.
    solutions_ : list of Solution
        One per pair (one-vs-one), on the pair's data (class i, then class j).
    certificate_ : Certificate, CompositeCertificate or None
        Two classes or Crammer–Singer: the problem's certificate; one-vs-one with
        k > 2: the pairs' certificates (ok when every pair is), printing one line
        per pair.
    shape_fit_ : tuple
        Shape of the training X ((n_samples,) for a callable kernel's X without one).
    n_features_in_ : int
        Not set for a callable kernel (X is the callable's, as in scikit-learn).
    feature_names_in_ : ndarray of shape (``n_features_in_``,)
        When X has feature names (a DataFrame).

    Notes
    -----
    A callable kernel receives X as given to ``fit`` and ``predict`` (a list of
    strings, a LIL matrix: nothing is converted, as in scikit-learn) and must return
    K(A, B) of shape (len(A), len(B)) (a sparse matrix is made dense).  The fit is
    posed on the matrix K(X, X), computed once (``solution_`` and the certificate are
    those of that precomputed problem), and prediction calls ``kernel(X_new, X)`` with
    the training X, which the model keeps.

    Sparse X with at least 2¹⁶ features of which at most half hold an entry (e.g. an
    svmlight file whose largest feature index is 2·10⁹) is fitted on the columns that
    hold one (:class:`~margin_opt.kernels.ColumnMap`): the kernel values, hence the
    model, are the same, and the memory is O(nnz + n·k) for k such columns instead of
    O(n·n_features).  ``support_vectors_`` and ``coef_`` are in the user's columns;
    ``solution_`` and ``solutions_`` (w, the certificate) are the problem's, on the k
    columns.  ``gamma="scale"`` is resolved on the user's X, as scikit-learn does.

    References
    ----------
    C. Cortes and V. Vapnik, "Support-vector networks", Machine Learning 20, 1995.
    C.-W. Hsu and C.-J. Lin, "A comparison of methods for multiclass support vector
    machines", IEEE TNN 13(2), 2002.
    K. Crammer and Y. Singer, "On the algorithmic implementation of multiclass
    kernel-based vector machines", JMLR 2, 2001.
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
        "solver": [StrOptions(set(method_names("svc", estimator=True))
                              | set(method_names("multiclass", estimator=True))),
                   StrOptions({"auto"})],
        "tol": [Interval(numbers.Real, 0, None, closed="neither")],
        "solver_options": [dict, None],
        "certify": ["boolean"],
        "multi_class": [StrOptions({"ovo", "crammer_singer"})],
        "decision_function_shape": [StrOptions({"ovr", "ovo"})],
        "break_ties": ["boolean"],
        "probability": ["boolean"],
        "random_state": ["random_state"],
        **LIBSVM_PARAMETERS,
    }

    def __init__(self, C=1.0, kernel="rbf", gamma="scale", degree=3, coef0=0.0,
                 fit_intercept=True, class_weight=None, solver="auto", tol=1e-6,
                 solver_options=None, certify=True, multi_class="ovo",
                 decision_function_shape="ovr", break_ties=False, probability=False,
                 random_state=None, cache_size=200, max_iter=-1, shrinking=True,
                 verbose=False):
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
        self.multi_class = multi_class
        self.decision_function_shape = decision_function_shape
        self.break_ties = break_ties
        self.probability = probability
        self.random_state = random_state
        self.cache_size = cache_size
        self.max_iter = max_iter
        self.shrinking = shrinking
        self.verbose = verbose

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.pairwise = self.kernel == "precomputed"
        tags.input_tags.sparse = self.kernel != "precomputed"
        return tags

    def _resolved_solver(self) -> str:
        joint = self.multi_class == "crammer_singer"
        if self.solver == "auto":
            return "auto" if joint else "smo"     # Crammer–Singer: chosen with the problem
        if joint and self.solver not in method_names("multiclass", estimator=True):
            raise ValueError(
                f"multi_class='crammer_singer' is one joint problem; solver must be one of "
                f"{method_names('multiclass', estimator=True)} or 'auto', got "
                f"{self.solver!r}.")
        if not joint and self.solver not in method_names("svc", estimator=True):
            raise ValueError(
                f"solver {self.solver!r} solves the Crammer–Singer problem only; use "
                f"multi_class='crammer_singer', or one of {method_names('svc', estimator=True)}.")
        return self.solver

    def _class_weights(self, y, classes):
        if self.class_weight is None:
            return np.ones(classes.size)
        cw = np.asarray(compute_class_weight(self.class_weight, classes=classes, y=y),
                        dtype=float)
        if not np.all(np.isfinite(cw)) or np.any(cw < 0):
            raise ValueError(f"class_weight must be finite and ≥ 0, got {self.class_weight!r}.")
        return cw

    @_fit_context(prefer_skip_nested_validation=True)
    @blas_on_one_thread
    def fit(self, X, y, sample_weight=None):
        """Fit the SVM (binary, one-vs-one or Crammer–Singer).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Or the Gram matrix (n_samples, n_samples) for ``kernel="precomputed"``;
            anything a callable kernel takes (passed to it as it is).
        y : array-like of shape (n_samples,)
            Two classes or more.
        sample_weight : array-like of shape (n_samples,), default=None
            Sample i gets the box bound C · sample_weight[i] · class_weight[yᵢ]; a
            weight ≤ 0 leaves the sample out (as LIBSVM).

        Returns
        -------
        self : SVC

        Raises
        ------
        ValueError
            Bad input: one class ("one class"), continuous targets ("Unknown label
            type"), NaN/inf, a class without positive weight, a precomputed matrix
            that is not square or not PSD; a solver that does not apply.
        TypeError
            A sparse precomputed kernel (scikit-learn's "Sparse precomputed kernels are
            not supported.").
        NotSeparableError
            ``C=np.inf`` on data (of a pair) that is not separable.
        """
        check_solver_options(self.solver_options)
        solver = self._resolved_solver()
        # a callable kernel: X as given to it, the fit posed on K(X, X) (scikit-learn's)
        X, y = fit_input(self, X, y)
        precomputed = self.kernel == "precomputed" or callable(self.kernel)
        y_index, self.classes_ = check_class_labels(y)
        sw = check_libsvm_sample_weight(sample_weight, X)
        self.class_weight_ = self._class_weights(y, self.classes_)
        weight = sw * self.class_weight_[y_index]
        check_classes_weighted(y_index, weight, self.classes_)
        if self.kernel == "precomputed":    # fitted even when not PSD (as LIBSVM); the
            X = check_precomputed_kernel(X, check_psd=False)    # certificate says so
        kernel = make_kernel("precomputed" if precomputed else self.kernel, X,
                             gamma=self.gamma, degree=self.degree, coef0=self.coef0)
        self._kernel, self._n_train, self.shape_fit_ = kernel, X.shape[0], X.shape
        for name in ("solution_", "coef_", "probA_", "probB_"):
            self.__dict__.pop(name, None)
        if self.solver == "auto" and self.multi_class != "crammer_singer":
            solver = auto_method("svc", linear=kernel.is_linear, n_samples=X.shape[0],
                                 hard_margin=bool(np.isinf(self.C)))
        # sparse data whose columns are mostly empty are posed on the columns that hold
        # an entry: the same kernel values, in memory O(nnz + n·k) rather than O(n·d)
        self._columns = ColumnMap.of(X, kernel)
        X_fit = X if self._columns is None else self._columns.compress(X)
        with no_convergence_warnings():     # a run stopped short: one warning, below
            if self.multi_class == "crammer_singer":
                self._fit_crammer_singer(X_fit, y_index, weight, kernel, solver)
            else:
                self._fit_one_vs_one(X_fit, y_index, weight, kernel, solver)
        if self._columns is not None:       # the fitted attributes in the user's columns
            self.support_vectors_ = X[self.support_]
            if "coef_" in self.__dict__:
                self.coef_ = self._columns.expand(self.coef_)
        input_form_attributes(self, X)      # CSR after sparse X, as scikit-learn's
        self.fit_status_ = fit_status(self.solutions_)
        warn_stopped(self, self.solutions_)
        if not self.probability:
            self.probA_, self.probB_ = np.empty(0), np.empty(0)
        return self

    def _fit_one_vs_one(self, X, y_index, weight, kernel, solver):
        k = self.classes_.size
        n_pairs = k * (k - 1) // 2
        calibrate = None
        if self.probability:
            calibrate = PairCalibrator(self, solver, n_pairs, 1 if k > 2 else -1,
                                       self.random_state)
        fit = fit_one_vs_one(self, X, y_index, self.classes_, weight, kernel, solver=solver,
                             on_pair=calibrate)
        self._store(X, fit.support, fit.n_support, fit.dual_coef, fit.intercept, fit.n_iter,
                    fit.coef, fit.certificate)
        self.solutions_ = fit.solutions
        self._shared_gram = fit.shared_gram
        if k == 2:
            self.solution_ = fit.solutions[0]
        if calibrate is not None:
            self.probA_, self.probB_ = calibrate.probA, calibrate.probB

    def _fit_crammer_singer(self, X, y_index, weight, kernel, solver):
        if self.probability:
            raise ValueError("probability=True is calibrated per one-vs-one pair; use "
                             "multi_class='ovo' for probabilities.")
        problem = MulticlassSVMProblem(X, y_index, C=self.C, kernel=kernel,
                                       fit_intercept=self.fit_intercept, sample_weight=weight)
        if solver == "auto":
            solver = preferred_method(problem)
        sol, cert = solve_and_certify(self, problem, solver=solver)
        is_sv = np.zeros(X.shape[0], dtype=bool)
        is_sv[sol.support_] = True
        per_class = [np.flatnonzero(is_sv & (y_index == c)) for c in range(self.classes_.size)]
        support = np.concatenate(per_class).astype(np.int32)
        coef = np.asarray(sol.variables.w).T if kernel.is_linear else None
        self._store(X, support, np.array([m.size for m in per_class], dtype=np.int32),
                    np.asarray(sol.dual_coef)[:, support], np.asarray(sol.intercept, float),
                    np.array([sol.n_iter or 0], dtype=np.int32), coef, cert)
        self.solution_ = sol
        self.solutions_ = [sol]

    def _store(self, X, support, n_support, dual_coef, intercept, n_iter, coef, certificate):
        self.support_ = support
        self.support_vectors_ = X[support]
        self.n_support_ = n_support
        self.dual_coef_ = dual_coef
        self.intercept_ = intercept
        self.n_iter_ = n_iter
        self.certificate_ = certificate
        if coef is not None:
            self.coef_ = coef

    # ------------------------------------------------------------------ prediction
    def _raw_decision(self, X) -> np.ndarray:
        """(n_samples, n_pairs) one-vs-one values, or (n_samples, k) Crammer–Singer f,
        from the fitted attributes alone, by blocks of queries and support vectors (the
        pairs share each class's kernel values: :mod:`margin_opt.kernels.expansion`)."""
        X = check_predict_input(self, X)
        sv, coef = self.support_vectors_, self.__dict__.get("coef_")
        columns = self.__dict__.get("_columns")
        if columns is not None:     # fitted on the columns that hold an entry: posed there
            X, sv = columns.compress(X, rest=True), columns.compress(sv, rest=True)
            if coef is not None:
                coef = columns.compress(coef, rest=True).toarray()
        if coef is not None:
            return linear_decision(X, coef, self.intercept_)
        dual_coef = dense_attribute(self.dual_coef_)      # CSR after a sparse fit
        if self.multi_class == "crammer_singer":
            ex = joint_expansion(dual_coef, self.intercept_)
        else:
            ex = ovo_expansion(self.n_support_, dual_coef, self.intercept_)
        return evaluate(self._kernel, X, sv, ex, support=self.support_)

    def decision_function(self, X):
        """Decision values.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            For ``kernel="precomputed"``: K(X, X_train) of shape (n_samples, n_train);
            for a callable kernel, anything it takes.

        Returns
        -------
        scores : ndarray of shape (n_samples,), (n_samples, n_classes) or (n_samples, n_pairs)
            Two classes: f(x) = Σᵢ yᵢαᵢK(x, xᵢ) + b, > 0 meaning ``classes_[1]``.
            One-vs-one, k > 2: the pairs' values (> 0 votes for the pair's first class)
            with ``decision_function_shape="ovo"``, else their one-vs-rest aggregate.
            Crammer–Singer: f_r(x) of every class (two classes: f₁ − f₀).
        """
        dec = self._raw_decision(X)
        k = self.classes_.size
        if self.multi_class == "crammer_singer":
            return dec[:, 1] - dec[:, 0] if k == 2 else dec
        if k == 2:
            return dec[:, 0]
        return ovr_from_ovo(dec, k) if self.decision_function_shape == "ovr" else dec

    def predict(self, X):
        """Class labels, ndarray of shape (n_samples,).

        One-vs-one: LIBSVM's vote (a pair's value > 0 votes for its first class, else
        for the second; the first class with most votes wins), or with
        ``break_ties`` the argmax of the one-vs-rest values.  Two classes:
        ``classes_[1]`` where ``decision_function(X) ≥ 0`` (a tie at exactly 0 goes to
        ``classes_[1]``, as in scikit-learn's SVC, whose LIBSVM votes for its first
        class only when its value −f(x) is > 0).  Crammer–Singer: argmax_r f_r(x).
        """
        if self.break_ties and self.decision_function_shape == "ovo":
            raise ValueError("break_ties must be False when decision_function_shape is 'ovo'.")
        dec = self._raw_decision(X)
        k = self.classes_.size
        if self.multi_class == "crammer_singer":
            return self.classes_[np.argmax(dec, axis=1)]
        if k == 2:       # LIBSVM's vote: its value −f > 0 for classes_[0], else classes_[1]
            return self.classes_[(dec[:, 0] >= 0).astype(int)]
        if self.break_ties:
            return self.classes_[np.argmax(ovr_from_ovo(dec, k), axis=1)]
        return self.classes_[np.argmax(ovo_votes(dec, k), axis=1)]

    def _check_proba(self):
        if not self.probability:
            raise AttributeError("predict_proba is not available when probability=False; "
                                 "fit with SVC(probability=True).")
        return True

    @available_if(_check_proba)
    def predict_proba(self, X):
        """Class probabilities (LIBSVM's: Platt sigmoids per pair, pairwise coupling).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
            Columns in ``classes_`` order; rows sum to 1.  Their argmax may differ from
            ``predict`` (the vote), as in LIBSVM.

        Raises
        ------
        AttributeError
            ``probability=False``.
        NotFittedError
            Not fitted, or fitted with ``probability=False`` and the parameter set to
            True since (scikit-learn's "predict_proba is not available when fitted with
            probability=False").
        """
        check_is_fitted(self)
        if np.size(self.probA_) == 0:
            raise NotFittedError("predict_proba is not available when fitted with "
                                 "probability=False: fit again with probability=True.")
        dec = self._raw_decision(X)
        k = self.classes_.size
        return ovo_probabilities(dec, self.probA_, self.probB_, k, 1 if k > 2 else -1)

    @available_if(_check_proba)
    def predict_log_proba(self, X):
        """Logarithm of :meth:`predict_proba`, ndarray of shape (n_samples, n_classes)."""
        return np.log(self.predict_proba(X))
