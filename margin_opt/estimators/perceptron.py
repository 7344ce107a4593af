"""The perceptron as a scikit-learn style classifier, and Novikoff's bound on its corrections.

The perceptron is the ``perceptron`` method of the separability problem
(:class:`~margin_opt.problems.separability.SeparabilityProblem`): it runs the
perceptron rule on the PrimalERM with λ = 0 and the perceptron criterion
(:mod:`margin_opt.solvers.perceptron`), in its primal form for the linear kernel
and in its dual (kernel) form otherwise.

References
----------
F. Rosenblatt, Psychological Review 65(6), 1958.
A. B. J. Novikoff, "On convergence proofs on perceptrons", Symposium on the
Mathematical Theory of Automata, Polytechnic Institute of Brooklyn, 1962.
M. A. Aizerman, E. M. Braverman and L. I. Rozonoer, Automation and Remote Control 25, 1964.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin, _fit_context
from sklearn.utils._param_validation import Interval, StrOptions

from ..exceptions import NotSeparableError
from ..kernels import KERNELS
from ..problems.kernel_data import KernelData
from ..problems.separability import SeparabilityProblem
from ..problems.svm import SVMProblem
from ..solution import Solution
from ..validation import check_binary_labels, check_data, validate_data
from .base import kernel_decision

__all__ = ["Perceptron", "novikoff_bound", "NovikoffBound"]


class Perceptron(ClassifierMixin, BaseEstimator):
    """Rosenblatt's perceptron, primal or kernel (dual) form, with its dual representation.

    Classifies by ``sgn(f(x))``, ``f(x) = w·x + w₀`` (kernel form:
    ``f(x) = Σⱼ αⱼyⱼK(xⱼ, x) + w₀``), and learns by looping through the examples while
    any is misclassified (``yᵢf(xᵢ) ≤ 0``), correcting on each:
    ``w ← w + γyᵢxᵢ``, ``w₀ ← w₀ + γyᵢ``, ``αᵢ ← αᵢ + γ``.

    Parameters
    ----------
    kernel : {"linear", "poly", "rbf", "sigmoid", "precomputed"} or callable, default="linear"
        ``"linear"`` runs the primal rule on w; any other kernel the dual form on
        the Gram matrix (a check O(1), a correction O(n)).
    eta0 : float, default=1.0
        The step γ > 0.  From w = 0 the corrections do not depend on it; w, w₀ and α
        scale with it.
    fit_intercept : bool, default=True
        Learn w₀ (the lecture's augmented coordinate 1); False: through the origin.
    max_epochs : int, default=1000
        Passes over the data before giving up with a ConvergenceWarning.
    shuffle : bool, default=False
        A new random order each epoch (default: the data's order, as in the lecture).
    random_state : int, RandomState instance or None, default=None
        Seeds the order when ``shuffle``.
    gamma : {"scale", "auto"} or float, default="scale"
    degree : int, default=3
    coef0 : float, default=0.0
        Kernel parameters, as in :class:`margin_opt.SVC`.

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
        ``classes_[1]`` is the +1 class (decision_function > 0).
    coef_ : ndarray of shape (1, n_features)
        w (linear kernel only).
    intercept_ : ndarray of shape (1,)
        w₀ (0 without intercept).
    alpha_ : ndarray of shape (n_samples,)
        The dual representation: αᵢ is the sum of the step sizes of the corrections
        on example i (0 for examples never used); ``w = Σαᵢyᵢxᵢ``, ``w₀ = Σαᵢyᵢ``.
    support_ : ndarray of shape (n_SV,)
        Examples with αᵢ > 0.
    support_vectors_ : ndarray of shape (n_SV, n_features)
    dual_coef_ : ndarray of shape (1, n_SV)
        αᵢyᵢ of the support examples.
    n_updates_ : int
        Corrections made.
    n_epochs_ : int
        Passes made (when converged, the last one made no correction).
    n_iter_ : int
        Same as ``n_epochs_`` (scikit-learn's name).
    converged_ : bool
        True when an epoch made no correction: every example has yᵢf(xᵢ) > 0.
    criterion_ : ndarray of shape (``n_epochs_``,)
        The perceptron criterion J(w, w₀) = Σᵢ max(0, −yᵢf(xᵢ)) after each epoch.
    farkas_ : ndarray of shape (n_samples,) or None
        When the weights returned to an earlier state: the corrections in between,
        normalized to sum 1 over each class, a verified Farkas certificate that the
        data is not separable (``Σλᵢyᵢφ(xᵢ) = 0``).  None otherwise.
    certificate_ : Certificate
        The verification of the answer (:meth:`SeparabilityProblem.certify`): a
        separator when converged, the Farkas certificate after a cycle, failed after
        max_epochs.
    solution_ : Solution
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (``n_features_in_``,)
        When X has feature names (a DataFrame); predicting on other names, or the same
        in another order, is scikit-learn's error.

    Warns
    -----
    ConvergenceWarning
        When max_epochs is reached or the weights cycle: the data may not be (is not)
        separable.

    See Also
    --------
    margin_opt.separability : the LP that decides separability, with a certificate.
    novikoff_bound : the bound on ``n_updates_`` on separable data.

    References
    ----------
    F. Rosenblatt, Psychological Review 65(6), 1958; M. A. Aizerman et al. 1964 (kernel form).
    """

    _parameter_constraints: dict = {
        "kernel": [StrOptions(set(KERNELS)), callable],
        "eta0": [Interval(numbers.Real, 0, None, closed="neither")],
        "fit_intercept": ["boolean"],
        "max_epochs": [Interval(numbers.Integral, 1, None, closed="left")],
        "shuffle": ["boolean"],
        "random_state": ["random_state"],
        "gamma": [StrOptions({"scale", "auto"}), Interval(numbers.Real, 0, None,
                                                          closed="neither")],
        "degree": [Interval(numbers.Integral, 1, None, closed="left")],
        "coef0": [Interval(numbers.Real, None, None, closed="neither")],
    }

    def __init__(self, kernel="linear", *, eta0=1.0, fit_intercept=True, max_epochs=1000,
                 shuffle=False, random_state=None, gamma="scale", degree=3, coef0=0.0):
        self.kernel = kernel
        self.eta0 = eta0
        self.fit_intercept = fit_intercept
        self.max_epochs = max_epochs
        self.shuffle = shuffle
        self.random_state = random_state
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Run the perceptron rule until no example is misclassified (or max_epochs).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Or the Gram matrix (n_samples, n_samples) for ``kernel="precomputed"``.
        y : array-like of shape (n_samples,)
            Two classes.

        Returns
        -------
        self : Perceptron

        Raises
        ------
        ValueError
            Bad input (NaN/inf, one class or three, bad kernel parameters).
        """
        # scikit-learn's validation: n_features_in_ and feature_names_in_ (a DataFrame's
        # columns), checked again by predict and decision_function
        X, y = validate_data(self, X, y, accept_sparse=False if self.kernel == "precomputed"
                             else "csr", dtype=np.float64)
        problem = SeparabilityProblem(X, y, kernel=self.kernel, gamma=self.gamma,
                                      degree=self.degree, coef0=self.coef0,
                                      fit_intercept=self.fit_intercept)
        sol = problem.solve("perceptron", eta0=self.eta0, max_epochs=self.max_epochs,
                            shuffle=self.shuffle, random_state=self.random_state)
        raw = sol.raw
        self.classes_ = problem.classes_
        self.n_features_in_ = problem.X.shape[1]
        self._kernel, self._n_train = problem.kernel, problem.n_samples
        self.solution_ = sol
        self.alpha_ = np.array(raw.alpha, dtype=float)
        self.support_ = np.flatnonzero(self.alpha_ > 0)
        self.support_vectors_ = problem.X[self.support_]
        self.dual_coef_ = (problem.y * self.alpha_)[self.support_][None, :]
        self.intercept_ = np.array([sol.b])
        if problem.kernel.is_linear:
            self.coef_ = np.asarray(sol.w, dtype=float)[None, :]
        self.n_updates_ = int(raw.n_updates)
        self.n_epochs_ = self.n_iter_ = int(raw.nit)
        self.converged_ = raw.status == "optimal"
        self.criterion_ = np.asarray(sol.history["objective"], dtype=float)[1:]
        self.certificate_ = problem.certify(sol)
        self.farkas_ = None
        if self.certificate_.ok and not self.certificate_.quantities["separable"]:
            self.farkas_ = sol.variables.farkas.copy()
        return self

    def decision_function(self, X):
        """f(x) = w·x + w₀, or Σⱼ αⱼyⱼK(xⱼ, x) + w₀ for a kernel.

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
        """Class labels sgn(f(x)) (f = 0 goes to ``classes_[0]``), ndarray of shape (n_samples,)."""
        scores = self.decision_function(X)
        return self.classes_[(scores > 0).astype(int)]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.classifier_tags.multi_class = False
        return tags


@dataclass(frozen=True, eq=False)
class NovikoffBound:
    """Novikoff's bound on the perceptron's corrections, and what it is made of.

    Attributes
    ----------
    bound : int
        ⌈R²/γ²⌉ = ⌈R² ‖ŵ‖² / minᵢ(ŵ·yᵢzᵢ)²⌉: no run of the perceptron from w = 0
        makes more corrections on this data (for any step γ > 0 and any order).
    radius : float
        R = maxᵢ ‖zᵢ‖, zᵢ = [1, xᵢ] (or φ(xᵢ) augmented; xᵢ without intercept).
    margin : float
        γ = minᵢ yᵢŵ·zᵢ / ‖ŵ‖, the geometric margin of ŵ on the augmented data.
    w_hat : ndarray of shape (n_features + 1,) or None
        ŵ = [ŵ₀, ŵ] (linear kernel; [ŵ] without intercept), scaled so that
        minᵢ yᵢŵ·zᵢ = 1 up to the solver's accuracy.  None for other kernels.
    solution : Solution
        The hard-margin SVM's answer that gave ŵ.
    """

    bound: int
    radius: float
    margin: float
    w_hat: np.ndarray | None
    solution: Solution


def novikoff_bound(X, y, *, kernel="linear", gamma="scale", degree=3, coef0=0.0,
                   fit_intercept=True, method="cvxpy-dual", **options) -> NovikoffBound:
    """The lecture's bound on the number of perceptron corrections, at its best ŵ.

    With augmented vectors zᵢ = [1, xᵢ], w₁ = 0 and γ = 1, the perceptron makes at
    most ``⌈max‖zᵢ‖² ‖ŵ‖² / minᵢ(ŵ·yᵢzᵢ)²⌉`` corrections for any separating ŵ.  The
    ŵ that makes it smallest maximizes the geometric margin of the augmented data
    through the origin: the hard-margin SVM without intercept on zᵢ
    (``SVMProblem(Z, y, C=np.inf, fit_intercept=False)``).  The ratio is computed
    from the ŵ the solver returns, so it is a valid bound whatever the solver's
    accuracy (a slightly suboptimal ŵ only loosens it).

    Parameters
    ----------
    X : {array-like, sparse matrix} of shape (n_samples, n_features)
        The data (the Gram matrix for ``kernel="precomputed"``).
    y : array-like of shape (n_samples,)
        Two classes.
    kernel : str or callable, default="linear"
        For the kernel perceptron: zᵢ = [1, φ(xᵢ)], i.e. the kernel 1 + K(x, x').
    gamma, degree, coef0 : kernel parameters, as in :class:`Perceptron`.
    fit_intercept : bool, default=True
        Augment with the coordinate 1 (the perceptron's w₀); False: zᵢ = xᵢ.
    method : {"cvxpy-dual", "smo", "cvxpy-primal"}, default="cvxpy-dual"
        How the hard-margin SVM is solved.
    **options
        Passed to ``SVMProblem.solve``.

    Returns
    -------
    bound : NovikoffBound
        ``bound``, ``radius`` R and ``margin`` γ (bound = ⌈(R/γ)²⌉).

    Raises
    ------
    NotSeparableError
        When the (augmented) data is not separable: there is no bound, the perceptron
        never stops.
    ValueError
        Bad input.

    References
    ----------
    A. B. J. Novikoff, 1962; the lecture notes' convergence theorem.
    """
    X, y_raw = check_data(X, y)
    yy, _ = check_binary_labels(y_raw)
    if kernel == "linear":
        if fit_intercept:
            ones = np.ones((X.shape[0], 1))
            Z = sp.hstack([sp.csr_matrix(ones), X], format="csr") if sp.issparse(X) \
                else np.hstack([ones, X])
        else:
            Z = X
        problem = SVMProblem(Z, yy, C=np.inf, kernel="linear", fit_intercept=False)
        sq_norms = np.asarray(Z.multiply(Z).sum(axis=1)).ravel() if sp.issparse(Z) \
            else np.einsum("ij,ij->i", Z, Z)
    else:
        K = KernelData(X, kernel, gamma=gamma, degree=degree, coef0=coef0).gram()
        K = K + 1.0 if fit_intercept else K
        problem = SVMProblem(K, yy, C=np.inf, kernel="precomputed", fit_intercept=False)
        sq_norms = np.diag(K)
    try:
        sol = problem.solve(method, **options)
    except NotSeparableError:
        what = ("x" if kernel == "linear" else "φ(x)")
        what = f"[1, {what}]" if fit_intercept else what
        raise NotSeparableError(
            f"novikoff_bound: the data is not linearly separable (the vectors {what} "
            "admit no separating ŵ), so there is no bound: the perceptron never stops on it. "
            "margin_opt.separability(X, y) gives a Farkas certificate; use a kernel for a "
            "bound in its feature space.") from None
    beta = yy * sol.alpha
    f = problem.data.combination(beta)               # ŵ·zᵢ on the training points
    w_sq = float(beta @ f)
    m = float(np.min(yy * f))
    if not m > 0:
        raise NotSeparableError(f"novikoff_bound: the solver's ŵ does not separate the data "
                                f"(min yᵢŵ·zᵢ = {m:.3g}); try method='cvxpy-dual'.")
    radius_sq = float(np.max(sq_norms))
    ratio = radius_sq * w_sq / (m * m)
    w_hat = None if sol.w is None else np.asarray(sol.w, dtype=float) / m
    return NovikoffBound(bound=int(math.ceil(ratio)), radius=math.sqrt(radius_sq),
                         margin=m / math.sqrt(w_sq), w_hat=w_hat, solution=sol)
