"""scikit-learn style ν-SVC and ν-SVR on :class:`~margin_opt.problems.nu.NuSVCProblem` and
:class:`~margin_opt.problems.nu.NuSVRProblem` (SMO's ν mode, certified by default)."""

from __future__ import annotations

import numbers

import numpy as np
from sklearn.base import _fit_context
from sklearn.utils._param_validation import Interval, StrOptions

from ..exceptions import no_convergence_warnings
from ..kernels import KERNELS, ColumnMap, make_kernel
from ..methods import method_names
from ..parallel import blas_on_one_thread
from ..problems.nu import NuSVCProblem, NuSVRProblem, check_nu_range, check_nu_svc_feasible
from ..validation import (
    check_class_labels,
    check_classes_weighted,
    check_libsvm_sample_weight,
    check_precomputed_kernel,
    check_solver_options,
)
from .base import (
    LIBSVM_PARAMETERS,
    fit_input,
    fit_problem,
    fit_status,
    input_form_attributes,
    warn_stopped,
)
from .ovo import fit_one_vs_one
from .probability import N_FOLDS, PairCalibrator
from .svc import SVC
from .svr import SVR

__all__ = ["NuSVC", "NuSVR"]

_KERNEL_PARAMETERS = {
    "kernel": [StrOptions(set(KERNELS)), callable],
    "gamma": [StrOptions({"scale", "auto"}), Interval(numbers.Real, 0, None, closed="neither")],
    "degree": [Interval(numbers.Integral, 1, None, closed="left")],
    "coef0": [Interval(numbers.Real, None, None, closed="neither")],
    "tol": [Interval(numbers.Real, 0, None, closed="neither")],
    "solver_options": [dict, None],
    "certify": ["boolean"],
    # (0, 1] is checked in fit, before any kernel work, with a message that says what to do
    "nu": [numbers.Real],
    **LIBSVM_PARAMETERS,
}


class NuSVC(SVC):
    """ν-support vector classification, solved as an explicit problem and certified.

    Scikit-learn's ``sklearn.svm.NuSVC`` (LIBSVM's ``-s 1``): ν replaces C as the
    regularization parameter — an upper bound on the fraction of margin errors and a
    lower bound on the fraction of support vectors.  Binary: one
    :class:`~margin_opt.problems.nu.NuSVCProblem`; k classes: one per pair of classes,
    one-vs-one in LIBSVM's layout (as :class:`~margin_opt.SVC`), each certified.  The
    fitted attributes are LIBSVM's, in the scale of the **equivalent C-SVC**: the ν
    answer α, ρ, r gives ``dual_coef_`` = yα/r and ``intercept_`` = −ρ/r (C = 1/r).

    Parameters
    ----------
    nu : float, default=0.5
        ν ∈ (0, 1], and for every pair of classes (i, j) with weights Uᵢ, Uⱼ (sample
        counts without weights) ν ≤ 2·min(Uᵢ, Uⱼ)/(Uᵢ + Uⱼ).  Checked in ``fit``
        before any kernel value; the error gives the largest feasible ν.
    kernel : {"linear", "poly", "rbf", "sigmoid", "precomputed"} or callable, default="rbf"
    degree : int, default=3
    gamma : {"scale", "auto"} or float, default="scale"
    coef0 : float, default=0.0
    shrinking : bool, default=True
    probability : bool, default=False
        Calibrate probabilities as LIBSVM (``predict_proba``, ``predict_log_proba``,
        ``probA_``/``probB_``): per pair, a Platt sigmoid on decision values from an
        internal 5-fold stratified cross-validation whose folds are ν-SVCs with the same
        ν (LIBSVM keeps the ``svm_type``), in the equivalent C-SVC's scale of
        ``decision_function``; k > 2: Wu–Lin–Weng pairwise coupling.  A training part
        on which ν is infeasible (its classes' weights, though the pair's are fine)
        raises ValueError: LIBSVM trains it on a problem whose equality is not met.
        Costs five more fits per pair; the fits are not certified.
    tol : float, default=1e-6
        The certificate's tolerance (units of f in LIBSVM's ν scale, relative for the
        duality gap, a fraction for the ν-property); SMO stops at LIBSVM's ν rule
        m(α) − M(α) ≤ tol within each sign of y.
    cache_size : float, default=200
    class_weight : dict, "balanced" or None, default=None
        **Applied** (LIBSVM's ν-SVC ignores it silently, scikit-learn issue #30332):
        class j's samples get the bound uᵢ = sᵢ·c_j, as a sample weight would, so
        Σα = ν·Σu, the class counts c_j times in the ν-property's fractions and in
        the feasibility bound.  ``class_weight=None`` gives LIBSVM's model.
    verbose : bool, default=False
    max_iter : int, default=-1
    decision_function_shape : {"ovr", "ovo"}, default="ovr"
    break_ties : bool, default=False
    random_state : int, RandomState instance or None, default=None
        Shuffles the internal cross-validation of ``probability`` (an int: the same
        probabilities on every fit).
    solver : {"auto", "smo", "cvxpy-dual", "cvxpy-primal"}, default="auto"
        ``"auto"``: SMO's ν mode.
    solver_options : dict, default=None
    certify : bool, default=True

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    class_weight_ : ndarray of shape (n_classes,)
    support_ : ndarray of int32 of shape (n_SV,)
        Grouped by class (LIBSVM's layout).
    support_vectors_ : {ndarray, csr_matrix} of shape (n_SV, n_features)
    n_support_ : ndarray of int32 of shape (n_classes,)
    dual_coef_ : {ndarray, csr_matrix} of shape (n_classes − 1, n_SV)
        yα/r of each support vector in its pairs (CSR after a sparse fit).
    intercept_ : ndarray of shape (n_classes (n_classes − 1) / 2,)
        −ρ/r of each pair.
    coef_ : {ndarray, csr_matrix} of shape (n_pairs, n_features)
        Linear kernel only: w/r of each pair.
    fit_status_ : int
    n_iter_ : ndarray of int32 of shape (n_pairs,)
    probA_, probB_ : ndarray of shape (n_pairs,) or (0,)
        With ``probability``: P(i | x, pair (i, j)) = 1 / (1 + exp(A d + B)), d the
        pair's value positive for class i (two classes: for ``classes_[0]``, i.e.
        −``decision_function``), as scikit-learn's; else empty.
    solution_ : Solution
        Two classes: the ν problem's solution in LIBSVM's ν scale (``variables.r``).
    solutions_ : list of Solution
    certificate_ : Certificate or CompositeCertificate or None
        Each pair's: KKT residuals and duality gap of the ν problem, ``nu_property``,
        ``nu_equality``, ``margin_positive`` and ``equivalent_c_svc`` (the C-SVC with
        C = 1/r certifies α/r); quantities ``r``, ``C_equivalent``,
        ``error_fraction``, ``support_fraction``.
    shape_fit_ : tuple
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (``n_features_in_``,)

    References
    ----------
    B. Schölkopf, A. J. Smola, R. C. Williamson and P. L. Bartlett, "New support vector
    algorithms", Neural Computation 12(5), 2000, 1207–1245.
    C.-C. Chang and C.-J. Lin, "Training ν-support vector classifiers: theory and
    algorithms", Neural Computation 13(9), 2001, 2119–2147.
    """

    #: one-vs-one only (SVC's prediction reads it)
    multi_class = "ovo"

    _parameter_constraints: dict = {
        **_KERNEL_PARAMETERS,
        "class_weight": [dict, StrOptions({"balanced"}), None],
        "solver": [StrOptions(set(method_names("nu-svc", estimator=True)) | {"auto"})],
        "decision_function_shape": [StrOptions({"ovr", "ovo"})],
        "break_ties": ["boolean"],
        "probability": ["boolean"],
        "random_state": ["random_state"],
    }

    def __init__(self, *, nu=0.5, kernel="rbf", degree=3, gamma="scale", coef0=0.0,
                 shrinking=True, probability=False, tol=1e-6, cache_size=200,
                 class_weight=None, verbose=False, max_iter=-1, decision_function_shape="ovr",
                 break_ties=False, random_state=None, solver="auto", solver_options=None,
                 certify=True):
        self.nu = nu
        self.kernel = kernel
        self.degree = degree
        self.gamma = gamma
        self.coef0 = coef0
        self.shrinking = shrinking
        self.probability = probability
        self.tol = tol
        self.cache_size = cache_size
        self.class_weight = class_weight
        self.verbose = verbose
        self.max_iter = max_iter
        self.decision_function_shape = decision_function_shape
        self.break_ties = break_ties
        self.random_state = random_state
        self.solver = solver
        self.solver_options = solver_options
        self.certify = certify

    @_fit_context(prefer_skip_nested_validation=True)
    @blas_on_one_thread
    def fit(self, X, y, sample_weight=None):
        """Fit the ν-SVC (binary or one-vs-one).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Or the Gram matrix (n_samples, n_samples) for ``kernel="precomputed"``.
            Not modified.
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,), default=None
            The bounds 0 ≤ αᵢ ≤ sᵢ·c_{yᵢ} (scikit-learn's LIBSVM); a weight ≤ 0 leaves
            the sample out.

        Returns
        -------
        self : NuSVC

        Raises
        ------
        InvalidParameterError
            ν outside (0, 1], before any data or kernel work.
        ValueError
            ``"specified nu is infeasible"`` for a pair of classes (with the largest
            feasible ν), before any kernel value, or with ``probability=True`` for a
            training part of a pair's internal cross-validation; bad input as
            :class:`~margin_opt.SVC`.
        NotCertifiedError
            A pair with no answer certified at ``tol``.
        """
        nu = check_nu_range(self.nu, type(self).__name__)
        check_solver_options(self.solver_options)
        if callable(self.kernel):       # fit_input computes K(X, X): ν's feasibility first
            self._check_feasible_early(nu, y, sample_weight)
        X, y = fit_input(self, X, y)
        precomputed = self.kernel == "precomputed" or callable(self.kernel)
        y_index, self.classes_ = check_class_labels(y)
        sw = check_libsvm_sample_weight(sample_weight, X)
        self.class_weight_ = self._class_weights(y, self.classes_)
        weight = sw * self.class_weight_[y_index]
        # feasibility of every pair before any kernel value (a class left without weight
        # is infeasible for every ν: scikit-learn's "specified nu is infeasible")
        sums = np.bincount(y_index, weights=weight, minlength=self.classes_.size)
        check_nu_svc_feasible(nu, sums, self.classes_, type(self).__name__)
        check_classes_weighted(y_index, weight, self.classes_)
        if self.kernel == "precomputed":
            X = check_precomputed_kernel(X, check_psd=False)
        kernel = make_kernel("precomputed" if precomputed else self.kernel, X,
                             gamma=self.gamma, degree=self.degree, coef0=self.coef0)
        self._kernel, self._n_train, self.shape_fit_ = kernel, X.shape[0], X.shape
        for name in ("solution_", "coef_"):
            self.__dict__.pop(name, None)
        solver = "smo" if self.solver == "auto" else self.solver
        self._columns = ColumnMap.of(X, kernel)
        X_fit = X if self._columns is None else self._columns.compress(X)
        checked = kernel.name not in ("precomputed", "callable")

        def factory(Xp, y_pm, u, gram):
            return NuSVCProblem.from_validated(Xp, y_pm, nu=nu, kernel=kernel,
                                               sample_weight=u, gram=gram,
                                               scale_checked=checked)

        def rescale(sol):
            return 1.0 / sol.variables.r

        k = self.classes_.size
        calibrate = None
        if self.probability:    # LIBSVM trains the folds as ν-SVCs too (svm_type kept)
            calibrate = PairCalibrator(self, solver, k * (k - 1) // 2, 1 if k > 2 else -1,
                                       self.random_state, _fold_factory(nu, factory), rescale)
        with no_convergence_warnings():
            fit = fit_one_vs_one(self, X_fit, y_index, self.classes_, weight, kernel,
                                 solver=solver, problem_factory=factory, rescale=rescale,
                                 on_pair=calibrate)
        self._store(X_fit, fit.support, fit.n_support, fit.dual_coef, fit.intercept,
                    fit.n_iter, fit.coef, fit.certificate)
        self.solutions_ = fit.solutions
        self._shared_gram = fit.shared_gram
        if self.classes_.size == 2:
            self.solution_ = fit.solutions[0]
        if self._columns is not None:
            self.support_vectors_ = X[self.support_]
            if "coef_" in self.__dict__:
                self.coef_ = self._columns.expand(self.coef_)
        input_form_attributes(self, X)
        self.fit_status_ = fit_status(self.solutions_)
        warn_stopped(self, self.solutions_)
        if calibrate is None:
            self.probA_, self.probB_ = np.empty(0), np.empty(0)
        else:
            self.probA_, self.probB_ = calibrate.probA, calibrate.probB
        return self

    def _check_feasible_early(self, nu, y, sample_weight):
        """ν's feasibility from y and the weights alone (a callable kernel's K(X, X) is
        computed by the input validation); input errors are left to that validation."""
        try:
            y_arr = np.asarray(y).ravel()
            y_index, classes = check_class_labels(y_arr)
            sw = np.ones(y_arr.size) if sample_weight is None else \
                np.clip(np.asarray(sample_weight, dtype=float).ravel(), 0.0, None)
            weight = sw * self._class_weights(y_arr, classes)[y_index]
            sums = np.bincount(y_index, weights=weight, minlength=classes.size)
        except (TypeError, ValueError):
            return
        check_nu_svc_feasible(nu, sums, classes, type(self).__name__)


def _fold_factory(nu, factory):
    """The ν-SVC problem of a training part of the probability calibration's internal
    cross-validation, its ν's feasibility checked first.

    The pair's ν is feasible for the whole pair, and the stratified folds keep the
    classes' shares, but a training part's weights can still make it infeasible (ν at or
    near the pair's largest feasible ν, classes whose counts do not split evenly,
    unequal sample weights).  LIBSVM (``svm_binary_svc_probability`` calls ``svm_train``,
    which does not check ν) trains such a part anyway: ``solve_nu_svc`` starts the smaller
    class with every α at its bound, short of ν·l/2, and SMO's ν mode keeps each class's
    sum, so that model solves a different problem (yᵀα ≠ 0).  Here it is an error that
    says which ν would do.
    """

    def fold(Xp, y_pm, u, gram):
        U = np.array([u[y_pm < 0].sum(), u[y_pm > 0].sum()])
        if nu * U.sum() / 2.0 > U.min() * (1 + 1e-12):
            raise ValueError(
                f"specified nu is infeasible on a training part of probability=True's "
                f"internal {N_FOLDS}-fold cross-validation: its classes' weights {U[0]:g} and "
                f"{U[1]:g} need ν ≤ {2 * U.min() / U.sum():.6g} (ν = {nu:g} is feasible for the "
                "whole pair). LIBSVM trains such a part anyway, on a problem whose equality "
                "constraint is not met (scikit-learn's can end with A = 0: flat probabilities); "
                "this NuSVC does not. Lower nu to that bound, or fit with probability=False.")
        return factory(Xp, y_pm, u, gram)

    return fold


class NuSVR(SVR):
    """ν-support vector regression, solved as an explicit problem and certified.

    Scikit-learn's ``sklearn.svm.NuSVR`` (LIBSVM's ``-s 4``): the width ε of the
    insensitive tube is learned, and ν bounds the fraction of points outside it from
    above and the fraction of support vectors from below.  The fitted attributes are
    LIBSVM's: ``dual_coef_`` = a − a*, ``intercept_`` = −ρ; the learned ε is
    ``epsilon_``, and the equivalent ε-SVR (the same C, ε = ``epsilon_``) has the same
    answer (certified: ``equivalent_epsilon_svr``).

    Parameters
    ----------
    nu : float, default=0.5
        ν ∈ (0, 1], checked in ``fit`` before any kernel value.
    C : float, default=1.0
        Penalty of the slacks (LIBSVM's scale), > 0 and finite.
    kernel : {"linear", "poly", "rbf", "sigmoid", "precomputed"} or callable, default="rbf"
    degree : int, default=3
    gamma : {"scale", "auto"} or float, default="scale"
    coef0 : float, default=0.0
    shrinking : bool, default=True
    tol : float, default=1e-6
    cache_size : float, default=200
    verbose : bool, default=False
    max_iter : int, default=-1
    solver : {"auto", "smo", "cvxpy-dual", "cvxpy-primal"}, default="auto"
    solver_options : dict, default=None
    certify : bool, default=True

    Attributes
    ----------
    support_ : ndarray of int32 of shape (n_SV,)
    support_vectors_ : {ndarray, csr_matrix} of shape (n_SV, n_features)
    n_support_ : ndarray of int32 of shape (1,)
    dual_coef_ : {ndarray, csr_matrix} of shape (1, n_SV)
        a − a* of the support vectors.
    intercept_ : ndarray of shape (1,)
    coef_ : {ndarray, csr_matrix} of shape (1, n_features)
        Linear kernel only.
    epsilon_ : float
        The learned half-width of the tube (target units; LIBSVM's −r).
    fit_status_ : int
    n_iter_ : int or None
    solution_ : Solution
    certificate_ : Certificate or None
        KKT residuals and duality gap of the ν problem, ``nu_property``,
        ``nu_equality`` and ``equivalent_epsilon_svr``.
    shape_fit_ : tuple
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (``n_features_in_``,)

    References
    ----------
    B. Schölkopf, A. J. Smola, R. C. Williamson and P. L. Bartlett, "New support vector
    algorithms", Neural Computation 12(5), 2000.
    C.-C. Chang and C.-J. Lin, "LIBSVM: a library for support vector machines", ACM TIST
    2(3), 2011, §2.4.
    """

    _parameter_constraints: dict = {
        **_KERNEL_PARAMETERS,
        "C": [Interval(numbers.Real, 0, None, closed="neither")],
        "solver": [StrOptions(set(method_names("nu-svr", estimator=True)) | {"auto"})],
    }

    def __init__(self, *, nu=0.5, C=1.0, kernel="rbf", degree=3, gamma="scale", coef0=0.0,
                 shrinking=True, tol=1e-6, cache_size=200, verbose=False, max_iter=-1,
                 solver="auto", solver_options=None, certify=True):
        self.nu = nu
        self.C = C
        self.kernel = kernel
        self.degree = degree
        self.gamma = gamma
        self.coef0 = coef0
        self.shrinking = shrinking
        self.tol = tol
        self.cache_size = cache_size
        self.verbose = verbose
        self.max_iter = max_iter
        self.solver = solver
        self.solver_options = solver_options
        self.certify = certify

    @_fit_context(prefer_skip_nested_validation=True)
    @blas_on_one_thread
    def fit(self, X, y, sample_weight=None):
        """Fit the ν-SVR.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Or the Gram matrix for ``kernel="precomputed"``.  Not modified.
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,), default=None
            Bounds C·sᵢ; a weight ≤ 0 leaves the sample out.

        Returns
        -------
        self : NuSVR

        Raises
        ------
        InvalidParameterError
            ν outside (0, 1], before any data or kernel work.
        ValueError
            Bad input (one sample, constant targets, NaN/inf...).
        NotCertifiedError
            No answer certified at ``tol``.
        """
        nu = check_nu_range(self.nu, type(self).__name__)
        check_solver_options(self.solver_options)
        X, y = fit_input(self, X, y, y_numeric=True)
        if X.shape[0] < 2:
            raise ValueError("NuSVR needs at least 2 samples; got n_samples = 1.")
        if self.kernel == "precomputed":
            X = check_precomputed_kernel(X, check_psd=False)
        kernel = make_kernel("precomputed" if callable(self.kernel) else self.kernel, X,
                             gamma=self.gamma, degree=self.degree, coef0=self.coef0)
        sample_weight = check_libsvm_sample_weight(sample_weight, X)
        self._columns = ColumnMap.of(X, kernel)
        X_fit = X if self._columns is None else self._columns.compress(X)
        problem = NuSVRProblem(X_fit, y, nu=nu, C=self.C, kernel=kernel,
                               sample_weight=sample_weight)
        solver = "smo" if self.solver == "auto" else self.solver
        with no_convergence_warnings():
            sol = fit_problem(self, problem, solver)
        self.epsilon_ = float(sol.variables.epsilon)
        if self._columns is not None:
            self.n_features_in_ = X.shape[1]
            self.support_vectors_ = X[self.support_]
            if "coef_" in self.__dict__:
                self.coef_ = self._columns.expand(self.coef_)
        self.shape_fit_ = X.shape
        input_form_attributes(self, X)
        self.n_support_ = np.array([self.support_.size], dtype=np.int32)
        self.fit_status_ = fit_status([sol])
        warn_stopped(self, [sol])
        return self
