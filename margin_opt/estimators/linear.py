"""LinearSVC and LinearSVR: liblinear's interface, the lecture's problems, certified.

Both solve their problem by dual coordinate descent with w explicit (method ``dcd``,
:mod:`margin_opt.solvers.linear`) and certify the answer at ``tol`` by default.  The
intercept is the lecture's: **free** (unregularized), the multiplier of yᵀα = 0.
``intercept_scaling=s`` poses liblinear's problem instead: a constant feature of
value s is appended and its weight w_b regularized like the others (b = s·w_b, the
problem ½‖w‖² + ½w_b² + C Σ loss), so that the answer is liblinear's.

Sparse X with at least 2¹⁶ features of which at most half hold an entry (e.g. an
svmlight file whose largest feature index is 2·10⁹) is fitted on the columns that hold
one (:class:`~margin_opt.kernels.ColumnMap`), as by :class:`~margin_opt.SVC`: every
inner product, hence the answer, is the same (w is zero in the other columns), and the
memory is O(nnz + n·k) for k such columns instead of O(n·n_features).  ``coef_`` is in
the user's columns (a CSR matrix where a dense array would exceed
:data:`~margin_opt.kernels.DENSE_COEF_BYTES`); ``solution_`` and ``solutions_`` (w, the
certificate) are the problems', on the k columns.

References
----------
R.-E. Fan, K.-W. Chang, C.-J. Hsieh, X.-R. Wang and C.-J. Lin, "LIBLINEAR: a library
for large linear classification", JMLR 9, 2008.
C.-J. Hsieh et al., "A dual coordinate descent method for large-scale linear SVM",
ICML 2008.  C.-H. Ho and C.-J. Lin, "Large-scale linear support vector regression",
JMLR 13, 2012.  K. Crammer and Y. Singer, "On the algorithmic implementation of
multiclass kernel-based vector machines", JMLR 2, 2001.
"""

from __future__ import annotations

import numbers

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin, _fit_context
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.class_weight import compute_class_weight
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted

from ..certificate import CompositeCertificate
from ..exceptions import NotCertifiedError
from ..kernels import ColumnMap
from ..methods import method_names
from ..parallel import blas_on_one_thread
from ..problems.l1_svm import L1SVMProblem
from ..problems.multiclass import MulticlassSVMProblem
from ..problems.squared import SquaredEpsilonProblem, SquaredHingeProblem
from ..problems.svm import SVMProblem
from ..problems.svr import SVRProblem
from ..validation import (
    canonical,
    check_classes_weighted,
    check_label_types,
    check_libsvm_sample_weight,
    validate_data,
)

__all__ = ["LinearSVC", "LinearSVR"]


#: liblinear's stopping rule for ``-s 5`` (its default eps), where penalty="l1" starts;
#: tightened until the duality gap certifies
L1_START_TOL = 0.01


def _with_bias(X, scaling):
    """X with a constant column of value ``scaling`` appended (liblinear's bias feature)."""
    col = np.full((X.shape[0], 1), float(scaling))
    return sp.hstack([X, sp.csr_matrix(col)], format="csr") if sp.issparse(X) \
        else np.hstack([X, col])


class _LinearBase(BaseEstimator):
    """What LinearSVC and LinearSVR share: the data, the solve, the read-out."""

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags

    def _features(self, X):
        """X validated for prediction (the fitted number of features)."""
        check_is_fitted(self, "coef_")
        return validate_data(self, X, accept_sparse="csr", dtype=np.float64, reset=False,
                             accept_large_sparse=True)

    def _data(self, X, y):
        X, y = validate_data(self, X, y, accept_sparse="csr", dtype=np.float64,
                             accept_large_sparse=True)
        return canonical(X), y

    def _pose(self, X):
        """The data the problems are posed on: sparse X whose columns are mostly empty
        on the columns that hold an entry (``_columns``, the same inner products in
        memory O(nnz + n·k) rather than O(n·d)), else X itself."""
        self._columns = ColumnMap.of(X, "linear")
        return X if self._columns is None else self._columns.compress(X)

    def _user_columns(self, W):
        """Weights W of shape (m, k) on the posed columns back in the user's: W itself
        without a column map, else (m, n_features), dense up to
        :data:`~margin_opt.kernels.DENSE_COEF_BYTES`, else CSR."""
        columns = self.__dict__.get("_columns")
        return W if columns is None else columns.expand(W)

    def _scores(self, X):
        """Xwᵀ + b of every fitted function, ndarray of shape (n_samples, n_functions)."""
        X = self._features(X)
        coef, columns = self.coef_, self.__dict__.get("_columns")
        if columns is not None:     # posed on the columns that hold an entry: w is zero
            X = columns.compress(X)                 # off them, so are the other columns
            coef = columns.compress(coef if sp.issparse(coef) else np.atleast_2d(coef))
            coef = coef.toarray()
        out = X @ coef.T if coef.ndim == 2 else (X @ coef)[:, None]
        return np.asarray(out.toarray() if sp.issparse(out) else out) + self.intercept_

    def _report(self, sols):
        """With ``verbose``, one line per solve on stdout (as liblinear prints its own)."""
        if self.verbose:
            for sol in sols:
                print(f"[{type(self).__name__}] {sol.method}: {sol.status} after "
                      f"{int(sol.n_iter or 0)} iterations; {sol.message}", flush=True)

    def densify(self):
        """Make ``coef_`` a dense ndarray again (after :meth:`sparsify`).

        As scikit-learn's ``SparseCoefMixin.densify``: the default layout, needed
        before pickling for a library that expects it.

        Returns
        -------
        self
        """
        check_is_fitted(self, "coef_")
        if sp.issparse(self.coef_):
            dense = self.coef_.toarray()
            self.coef_ = dense[0] if self._coef_1d else dense
        return self

    def sparsify(self):
        """Store ``coef_`` as a CSR matrix (scikit-learn's ``SparseCoefMixin.sparsify``).

        Worth it where most weights are zero (an L1 penalty, text-like data): the
        matrix then takes less memory and products with sparse X are cheaper.  The
        predictions are the same.

        Returns
        -------
        self
        """
        check_is_fitted(self, "coef_")
        if not sp.issparse(self.coef_):
            self.coef_ = sp.csr_matrix(np.atleast_2d(self.coef_))
        return self

    def _design(self, X):
        """The problem's features and intercept flag: X with liblinear's bias column
        (``intercept_scaling``), or X with the free intercept (or none)."""
        if self.fit_intercept and self.intercept_scaling is not None:
            return _with_bias(X, self.intercept_scaling), False
        return X, bool(self.fit_intercept)

    def _solve(self, problem):
        """Solve by ``dcd``; certified at ``tol`` by default (NotCertifiedError otherwise)."""
        opts = dict(tol=self.tol, gap_tol=0.9 * self.tol, max_iter=self.max_iter,
                    random_state=0 if self.random_state is None else int(self.random_state))
        if self.certify:
            sol = problem.solve("dcd", certify=self.tol, fallback=True, **opts)
            return sol, sol.certificate
        return problem.solve("dcd", certify=False, **opts), None

    def _read(self, sol, d):
        """(w, b) in the user's features from a solution on the design matrix."""
        w = np.asarray(sol.w, dtype=float)
        if self.fit_intercept and self.intercept_scaling is not None:
            return w[:d].copy(), float(w[d] * self.intercept_scaling)
        return w.copy(), float(sol.b)


class LinearSVC(ClassifierMixin, _LinearBase):
    """Linear SVM classifier with liblinear's interface, solved and certified here.

    Minimizes ``½‖w‖² + C Σᵢ cᵢ ℓ(yᵢ(wᵀxᵢ + b))`` with ℓ the hinge ``max(0, 1 − m)``
    or the squared hinge ``max(0, 1 − m)²`` (one problem per class, one-vs-rest), or
    the Crammer–Singer joint problem; the intercept b free (the lecture's problem) or
    liblinear's regularized bias column (``intercept_scaling``).

    Parameters
    ----------
    loss : {"squared_hinge", "hinge"}, default="squared_hinge"
    C : float, default=1.0
        Penalty > 0 (per sample C·sample_weightᵢ·class_weight[yᵢ]).
    fit_intercept : bool, default=True
    intercept_scaling : float or None, default=None
        None: the free, unregularized intercept (the dual's yᵀα = 0).  A number s:
        liblinear's problem, a constant feature s whose weight is regularized
        (b = s·w_b): the answer then equals scikit-learn's ``LinearSVC`` with the same
        ``intercept_scaling``.
    multi_class : {"ovr", "crammer_singer"}, default="ovr"
        One-vs-rest binary problems, or the Crammer–Singer problem
        (:class:`~margin_opt.problems.multiclass.MulticlassSVMProblem`).
    class_weight : dict, "balanced" or None, default=None
    tol : float, default=1e-6
        The certificate's tolerance: m(α) − M(α) (or the projected gradient without
        intercept) and the relative duality gap; the solver stops when they hold.
    max_iter : int, default=10000
        Epochs of coordinate descent (each a pass over the active samples).
    random_state : int or None, default=None
        Seed of the epochs' permutations (None: 0; the answer is certified either way).
    dual : {"auto", True, False}, default="auto"
        Accepted for scikit-learn compatibility: the L2 problems are solved in the dual
        (with w kept explicitly), the L1 problem in the primal, whatever its value (the
        same optimum); scikit-learn's unsupported sets raise as there.
    certify : bool, default=True
        Certify the fit (``certificate_``); raise NotCertifiedError when it fails.
    penalty : {"l2", "l1"}, default="l2"
        The regularizer: ½‖w‖², as scikit-learn's default, or ‖w‖₁ — liblinear's
        ``-s 5`` problem min ‖w‖₁ + C Σ cᵢ max(0, 1 − yᵢwᵀxᵢ)² (sparse weights;
        :class:`~margin_opt.problems.l1_svm.L1SVMProblem`), with the squared hinge and
        ``dual=False`` or "auto" only, its intercept liblinear's penalized bias column
        (``intercept_scaling``, 1 where None), solved by primal coordinate descent and
        certified by its duality gap and the subgradient conditions.
    verbose : int, default=0
        > 0: one line per solve on stdout (the method, its status, iterations and
        stopping measure), as liblinear prints its own.

    Attributes
    ----------
    coef_ : {ndarray, csr_matrix} of shape (1, n_features) or (n_classes, n_features)
        A CSR matrix where the fit was posed on the non-empty columns of sparse X (see
        the module's notes) and a dense array would exceed
        :data:`~margin_opt.kernels.DENSE_COEF_BYTES`.
    intercept_ : ndarray of shape (1,) or (n_classes,)
    classes_ : ndarray of shape (n_classes,)
    n_iter_ : int
        The largest number of epochs over the problems.
    certificate_ : Certificate, CompositeCertificate or None
    solutions_ : list of Solution
    n_features_in_ : int

    Raises
    ------
    ValueError
        One class, NaN/inf (also stored in sparse X), a class without positive weight,
        ``intercept_scaling`` ≤ 0, scikit-learn's unsupported sets ("Unsupported set of
        arguments": ``penalty="l1"`` with the hinge loss or ``dual=True``, the hinge
        loss with ``dual=False``).
    NotCertifiedError
        No certified answer at ``tol`` (raise ``max_iter`` or ``tol``).

    References
    ----------
    C.-J. Hsieh et al., ICML 2008; R.-E. Fan et al., JMLR 9, 2008.

    Examples
    --------
    >>> from sklearn.datasets import make_classification
    >>> from margin_opt.estimators.linear import LinearSVC
    >>> X, y = make_classification(200, 5, random_state=0)
    >>> clf = LinearSVC().fit(X, y)
    >>> clf.certificate_.ok
    True
    """

    _parameter_constraints = {
        "loss": [StrOptions({"squared_hinge", "hinge"})],
        "C": [Interval(numbers.Real, 0, None, closed="neither")],
        "fit_intercept": ["boolean"],
        "intercept_scaling": [Interval(numbers.Real, 0, None, closed="neither"), None],
        "multi_class": [StrOptions({"ovr", "crammer_singer"})],
        "class_weight": [dict, StrOptions({"balanced"}), None],
        "tol": [Interval(numbers.Real, 0, None, closed="neither")],
        "max_iter": [Interval(numbers.Integral, 1, None, closed="left")],
        "random_state": ["random_state"],
        "dual": [StrOptions({"auto"}), "boolean"],
        "certify": ["boolean"],
        "penalty": [StrOptions({"l2", "l1"})],
        "verbose": ["verbose"],
    }

    _coef_1d = False        # coef_ is (n_functions, n_features) dense

    def __init__(self, loss="squared_hinge", C=1.0, fit_intercept=True, intercept_scaling=None,
                 multi_class="ovr", class_weight=None, tol=1e-6, max_iter=10000,
                 random_state=None, dual="auto", certify=True, penalty="l2", verbose=0):
        self.loss = loss
        self.C = C
        self.fit_intercept = fit_intercept
        self.intercept_scaling = intercept_scaling
        self.multi_class = multi_class
        self.class_weight = class_weight
        self.tol = tol
        self.max_iter = max_iter
        self.random_state = random_state
        self.dual = dual
        self.certify = certify
        self.penalty = penalty
        self.verbose = verbose

    @_fit_context(prefer_skip_nested_validation=True)
    @blas_on_one_thread
    def fit(self, X, y, sample_weight=None):
        """Fit the linear SVM.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,), default=None
            A weight ≤ 0 leaves the sample out.

        Returns
        -------
        self : LinearSVC

        Raises
        ------
        ValueError
            See the class docstring.
        """
        self._check_combination()
        X, y = self._data(X, y)
        check_label_types(y)
        check_classification_targets(y)
        self.classes_, y_index = np.unique(y, return_inverse=True)
        k = self.classes_.size
        if k < 2:
            raise ValueError(f"LinearSVC needs samples of at least 2 classes; got 1 class "
                             f"({self.classes_[0]!r}).")
        sw = check_libsvm_sample_weight(sample_weight, X)
        cw = np.ones(k) if self.class_weight is None else np.asarray(
            compute_class_weight(self.class_weight, classes=self.classes_, y=y), dtype=float)
        weight = sw * cw[y_index]
        check_classes_weighted(y_index, weight, self.classes_)
        X = self._pose(X)
        d = X.shape[1]
        if self.multi_class == "crammer_singer":
            self._fit_crammer_singer(X, y_index, weight)
            return self
        if self.penalty == "l1":
            self._fit_l1(X, y_index, weight)
            return self
        Xd, free_b = self._design(X)
        P = SVMProblem if self.loss == "hinge" else SquaredHingeProblem
        targets = [y_index == 1] if k == 2 else [y_index == c for c in range(k)]
        sols, certs, coef, intercept = [], [], [], []
        for positive in targets:
            problem = P(Xd, positive.astype(float), C=self.C, kernel="linear",
                        fit_intercept=free_b, sample_weight=weight)
            sol, cert = self._solve(problem)
            w, b = self._read(sol, d)
            sols.append(sol)
            certs.append(cert)
            coef.append(w)
            intercept.append(b)
        self._store_ovr(np.vstack(coef), np.asarray(intercept, dtype=float), sols, certs,
                        "one-vs-rest linear SVM certificate")
        return self

    def _store_ovr(self, W, b, sols, certs, title):
        """The fitted attributes of one-vs-rest problems: coef_ (W in the user's
        columns), intercept_, n_iter_, solutions_ and the certificate (one problem's,
        or ``title``'s composite)."""
        self.coef_ = self._user_columns(W)
        self.intercept_ = b
        self.n_iter_ = int(max(s.n_iter or 0 for s in sols))
        self.solutions_ = sols
        self._report(sols)
        if not self.certify:
            self.certificate_ = None
        elif len(certs) == 1:
            self.certificate_ = certs[0]
        else:
            self.certificate_ = CompositeCertificate(
                {f"{c} vs rest": cert for c, cert in zip(self.classes_, certs, strict=True)},
                title=title, keys=list(self.classes_))

    def _check_combination(self):
        """scikit-learn's (liblinear's) unsupported combinations, in its words: the L1
        penalty with the hinge loss or with ``dual=True``, the hinge loss with
        ``dual=False``."""
        loss, penalty, dual = self.loss, self.penalty, self.dual
        if (loss, penalty) == ("hinge", "l1") or (penalty, dual) == ("l1", True) or \
                (loss, penalty, dual) == ("hinge", "l2", False):
            what = ("penalty='l1' is liblinear's primal problem: use loss='squared_hinge' "
                    "and dual=False (or 'auto')" if penalty == "l1" else
                    "the hinge loss is solved in the dual: use dual=True (or 'auto')")
            raise ValueError(f"Unsupported set of arguments: {what}. Parameters: "
                             f"penalty='{penalty}', loss='{loss}', dual={dual}")

    def _fit_l1(self, X, y_index, weight):
        """liblinear's ``-s 5``, one problem per class (one-vs-rest): min ‖w‖₁ + Σ Cᵢ
        max(0, 1 − yᵢwᵀxᵢ)² (:class:`~margin_opt.problems.l1_svm.L1SVMProblem`), the
        intercept liblinear's bias column (``intercept_scaling``, 1 where None: the L1
        problem has no free intercept), by primal coordinate descent certified by its
        duality gap; the cvxpy primal where that fails."""
        d = X.shape[1]
        scaling = 1.0 if self.intercept_scaling is None else float(self.intercept_scaling)
        Xd = _with_bias(X, scaling) if self.fit_intercept else X
        k = self.classes_.size
        targets = [y_index == 1] if k == 2 else [y_index == c for c in range(k)]
        seed = 0 if self.random_state is None else int(self.random_state)
        sols = []
        for positive in targets:
            problem = L1SVMProblem(Xd, np.where(positive, 1.0, -1.0), C=self.C,
                                   sample_weight=weight)
            cert_tol = self.tol if self.certify else None
            sol = problem.solve("cd", certify=cert_tol, tol=L1_START_TOL,
                                max_iter=self.max_iter, random_state=seed)
            if self.certify and not sol.certificate.ok:
                sol = problem.solve("cvxpy-primal", certify=cert_tol)
                if not sol.certificate.ok:
                    raise NotCertifiedError(
                        f"no answer of the L1-regularized problem certified at tol={self.tol:g}"
                        f" (coordinate descent, then the cvxpy primal: "
                        f"{', '.join(sol.certificate.failed())} failed); raise tol or max_iter.")
            sols.append(sol)
        W = np.vstack([np.asarray(s.variables.w, dtype=float) for s in sols])
        self._store_ovr(np.ascontiguousarray(W[:, :d]),
                        W[:, d] * scaling if self.fit_intercept else np.zeros(len(sols)),
                        sols, [s.certificate for s in sols],
                        "one-vs-rest L1 linear SVM certificate")

    def _fit_crammer_singer(self, X, y_index, weight):
        """The Crammer–Singer problem through its own solve path (the registry's fastest
        backend for it where there is one, else the cvxpy dual)."""
        d = X.shape[1]                  # the posed columns (before liblinear's bias column)
        if self.intercept_scaling is not None and self.fit_intercept:
            X = _with_bias(X, self.intercept_scaling)
            fit_b = False
        else:
            fit_b = bool(self.fit_intercept)
        problem = MulticlassSVMProblem(X, y_index, C=self.C, kernel="linear",
                                       fit_intercept=fit_b, sample_weight=weight)
        backends = method_names("multiclass", route="backend")
        method = backends[0] if backends else "cvxpy-dual"
        opts = {"tol": self.tol} if backends else {}
        if self.certify:
            sol = problem.solve(method, certify=self.tol if backends else True, fallback=True,
                                **opts)
        else:
            sol = problem.solve(method, certify=False, **opts)
        W = np.asarray(sol.variables.w, dtype=float).T           # (k, d')
        b = np.asarray(sol.intercept, dtype=float).ravel()
        if W.shape[1] > d:                                         # the bias column
            b = W[:, d] * self.intercept_scaling
            W = W[:, :d]
        self.coef_ = self._user_columns(np.ascontiguousarray(W))
        self.intercept_ = b if b.size == W.shape[0] else np.zeros(W.shape[0])
        self.n_iter_ = int(sol.n_iter or 0)
        self.solutions_ = [sol]
        self.certificate_ = sol.certificate if self.certify else None
        self._report([sol])

    def decision_function(self, X):
        """Decision values Xwᵀ + b.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        scores : ndarray of shape (n_samples,) for two classes, else (n_samples, n_classes)
        """
        out = self._scores(X)
        return out.ravel() if out.shape[1] == 1 else out

    def predict(self, X):
        """Class labels: the sign of f for two classes, else the largest fₖ.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
        """
        scores = self.decision_function(X)
        idx = (scores > 0).astype(int) if scores.ndim == 1 else scores.argmax(axis=1)
        return self.classes_[idx]


class LinearSVR(RegressorMixin, _LinearBase):
    """Linear support vector regression with liblinear's interface, certified here.

    Minimizes ``½‖w‖² + C Σᵢ sᵢ ℓ(yᵢ − wᵀxᵢ − b)`` with ℓ the ε-insensitive loss
    ``max(0, |r| − ε)`` or its square; b free (the lecture's problem) or liblinear's
    regularized bias column (``intercept_scaling``).

    Parameters
    ----------
    epsilon : float, default=0.0
    tol : float, default=1e-6
        The certificate's tolerance (see :class:`LinearSVC`).
    C : float, default=1.0
    loss : {"epsilon_insensitive", "squared_epsilon_insensitive"}, default="epsilon_insensitive"
    fit_intercept : bool, default=True
    intercept_scaling : float or None, default=None
        As :class:`LinearSVC`'s.
    dual : {"auto", True, False}, default="auto"
        Accepted for scikit-learn compatibility (always solved in the dual).
    random_state : int or None, default=None
    max_iter : int, default=10000
    certify : bool, default=True
    verbose : int, default=0
        As :class:`LinearSVC`'s.

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,), or csr_matrix of shape (1, n_features)
        A CSR matrix (two-dimensional, as scikit-learn's ``sparsify`` makes a 1-D
        ``coef_``) where the fit was posed on the non-empty columns of sparse X (see the
        module's notes) and a dense array would exceed
        :data:`~margin_opt.kernels.DENSE_COEF_BYTES`.
    intercept_ : ndarray of shape (1,)
    n_iter_ : int
    certificate_ : Certificate or None
    solution_ : Solution
    n_features_in_ : int

    Raises
    ------
    ValueError
        Constant targets, a single sample, NaN/inf (also stored in sparse X).
    NotCertifiedError
        No certified answer at ``tol``.

    References
    ----------
    C.-H. Ho and C.-J. Lin, "Large-scale linear support vector regression", JMLR 13, 2012.
    """

    _parameter_constraints = {
        "epsilon": [Interval(numbers.Real, 0, None, closed="left")],
        "tol": [Interval(numbers.Real, 0, None, closed="neither")],
        "C": [Interval(numbers.Real, 0, None, closed="neither")],
        "loss": [StrOptions({"epsilon_insensitive", "squared_epsilon_insensitive"})],
        "fit_intercept": ["boolean"],
        "intercept_scaling": [Interval(numbers.Real, 0, None, closed="neither"), None],
        "dual": [StrOptions({"auto"}), "boolean"],
        "random_state": ["random_state"],
        "max_iter": [Interval(numbers.Integral, 1, None, closed="left")],
        "certify": ["boolean"],
        "verbose": ["verbose"],
    }

    _coef_1d = True         # coef_ is (n_features,) dense

    def __init__(self, epsilon=0.0, tol=1e-6, C=1.0, loss="epsilon_insensitive",
                 fit_intercept=True, intercept_scaling=None, dual="auto", random_state=None,
                 max_iter=10000, certify=True, verbose=0):
        self.epsilon = epsilon
        self.tol = tol
        self.C = C
        self.loss = loss
        self.fit_intercept = fit_intercept
        self.intercept_scaling = intercept_scaling
        self.dual = dual
        self.random_state = random_state
        self.max_iter = max_iter
        self.certify = certify
        self.verbose = verbose

    @_fit_context(prefer_skip_nested_validation=True)
    @blas_on_one_thread
    def fit(self, X, y, sample_weight=None):
        """Fit the linear SVR.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,), default=None

        Returns
        -------
        self : LinearSVR
        """
        X, y = self._data(X, y)
        if X.shape[0] < 2:
            raise ValueError("LinearSVR needs at least 2 samples; got 1 sample.")
        sw = check_libsvm_sample_weight(sample_weight, X)
        X = self._pose(X)
        Xd, free_b = self._design(X)
        P = SVRProblem if self.loss == "epsilon_insensitive" else SquaredEpsilonProblem
        problem = P(Xd, np.asarray(y, dtype=float), C=self.C, epsilon=self.epsilon,
                    kernel="linear", sample_weight=sw, fit_intercept=free_b)
        sol, cert = self._solve(problem)
        w, b = self._read(sol, X.shape[1])
        coef = self._user_columns(w[None, :])
        self.coef_ = coef if sp.issparse(coef) else coef[0]
        self.intercept_ = np.array([b])
        self.n_iter_ = int(sol.n_iter or 0)
        self.solution_ = sol
        self.certificate_ = cert
        self._report([sol])
        return self

    def predict(self, X):
        """Predicted targets Xw + b.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
        """
        return self._scores(X)[:, 0]
