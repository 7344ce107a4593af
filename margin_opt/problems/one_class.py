"""The one-class SVM (support of a distribution) as explicit cvxpy problems.

Primal, as Schölkopf et al. (2001) pose it::

    min_{w, ξ, ρ}  ½‖w‖² + 1/(νn) Σᵢ ξᵢ − ρ   s.t.  ⟨w, φ(xᵢ)⟩ ≥ ρ − ξᵢ,  ξᵢ ≥ 0

(with sample weights sᵢ the slack of xᵢ costs sᵢ/(νΣs), LIBSVM's per-sample bound),
dual::

    min_α  ½ αᵀKα   s.t.  0 ≤ αᵢ ≤ 1/(νn),  Σᵢ αᵢ = 1,

and f(x) = Σᵢ αᵢK(xᵢ, x) − ρ: x is in the estimated support (an inlier) where
f(x) > 0.  ν ∈ (0, 1] bounds both ways what the answer does (the ν-property): at
most a fraction ν of the points are outliers (ξᵢ > 0), at least a fraction ν are
support vectors (αᵢ > 0).

**Scales.** LIBSVM (and so scikit-learn's ``OneClassSVM``) solves the same problem
multiplied through by s = νΣs (νn without weights): 0 ≤ αᵢ ≤ sᵢ, Σα = νΣs, and its
decision function, ρ, w and ξ are s times those above (its objectives s² times).
Everything this module returns is in LIBSVM's scale — the standard form
(:meth:`OneClassProblem.to_standard_form`), the Solution (``alpha``, ``xi``,
``dual_coef``, ``intercept`` = −ρ, the objectives) and the certificate — except the
two cvxpy problems, which are written in the paper's scale; their answers are
multiplied by s when they are read (:attr:`OneClassProblem.scale`).  The sign of f,
hence every prediction and the support vectors, is the same in both.

In LIBSVM's standard form (:class:`~margin_opt.standard_forms.DualQP`) the problem is
y = 1, p = 0, uᵢ = sᵢ and Δ = νΣs::

    min ½αᵀKα   s.t.  Σα = νΣs,  0 ≤ αᵢ ≤ sᵢ,

so the one SMO of the C-SVC and the ε-SVR solves it, and ρ is read from the answer as
LIBSVM reads it: the mean of (Kα)ᵢ over the free multipliers (0 < αᵢ < sᵢ), else the
midpoint of the interval the bounded ones allow.

References
----------
B. Schölkopf, J. C. Platt, J. Shawe-Taylor, A. J. Smola and R. C. Williamson,
"Estimating the support of a high-dimensional distribution", Neural Computation 13(7),
2001, 1443–1471 (the primal, the dual and the ν-property, Proposition 4).
C.-C. Chang and C.-J. Lin, "LIBSVM: a library for support vector machines",
ACM TIST 2(3), 2011, §2.3 (the scaled dual) and §4.1.3 (ρ).
"""

from __future__ import annotations

import numbers
from typing import TYPE_CHECKING

import numpy as np
from sklearn.utils._param_validation import InvalidParameterError
from sklearn.utils.validation import _num_samples

from ..lazy import lazy_module
from ..solution import OneClassVariables
from ..validation import check_data, check_sample_weight
from . import one_class_kkt
from .base import KernelProblem
from .kernel_data import KernelData

if TYPE_CHECKING:
    import cvxpy as cp
else:
    cp = lazy_module("cvxpy")  # imported on first use: the cvxpy forms only

__all__ = ["OneClassProblem", "check_nu"]


def check_nu(nu, owner: str = "OneClassProblem") -> float:
    """ν as a float, checked to make the one-class problem feasible: 0 < ν ≤ 1.

    Called before any data or kernel work, so that a wrong ν costs nothing.

    Parameters
    ----------
    nu : float
    owner : str, default="OneClassProblem"
        The class named in the message.

    Returns
    -------
    nu : float

    Raises
    ------
    InvalidParameterError
        (a ValueError) ν not a real number in (0, 1]: ν > 1 asks for Σα = νΣs, more
        than the box 0 ≤ αᵢ ≤ sᵢ holds (infeasible); ν ≤ 0 leaves no support vector.
        The message starts with scikit-learn's words.
    """
    ok = isinstance(nu, numbers.Real) and not isinstance(nu, bool) and 0.0 < float(nu) <= 1.0
    if ok:
        return float(nu)
    why = ("the dual asks for Σα = ν·n with 0 ≤ αᵢ ≤ 1, which no α meets for ν > 1"
           if isinstance(nu, numbers.Real) and not isinstance(nu, bool) and float(nu) > 1
           else "ν is the fraction of the training points allowed to be outliers and the "
                "least fraction that are support vectors, so it must be positive")
    raise InvalidParameterError(
        f"The 'nu' parameter of {owner} must be a float in the range (0.0, 1.0]. Got {nu!r} "
        f"instead. The one-class problem is infeasible there: {why}. Choose the fraction "
        "of training points you accept as outliers, e.g. nu=0.1 (nu=0.5 is the default).")


class OneClassProblem(KernelProblem):
    """The one-class SVM (Schölkopf et al., 2001) as an explicit problem.

    Parameters
    ----------
    X : {array-like, sparse matrix} of shape (n_samples, n_features)
        Training data; for ``kernel="precomputed"`` the Gram matrix of shape
        (n_samples, n_samples).  Copied/converted, never modified.
    nu : float, default=0.5
        ν ∈ (0, 1]: an upper bound on the fraction of outliers and a lower bound on the
        fraction of support vectors.  Checked first, before any data or kernel work.
    kernel : {"linear", "poly", "rbf", "sigmoid", "precomputed"} or callable, default="rbf"
    gamma : {"scale", "auto"} or float, default="scale"
    degree : int, default=3
    coef0 : float, default=0.0
    sample_weight : array-like of shape (n_samples,), optional
        Weights sᵢ ≥ 0: LIBSVM's per-sample bounds 0 ≤ αᵢ ≤ sᵢ with Σα = νΣs (a zero
        weight fixes αᵢ = 0, as LIBSVM's dropping the sample does).
    feature_map : callable, optional
        An explicit feature map φ: X of shape (n, d) -> ndarray of shape (n, D); the
        kernel is then φ(x)ᵀφ(z) and w is explicit.
    psd_test : PSDTest, optional
        As in :class:`~margin_opt.problems.svm.SVMProblem`.

    Attributes
    ----------
    nu : float
    scale : float
        s = ν·Σsᵢ (νn without weights): LIBSVM's multipliers, ρ, f and ξ are s times the
        paper's, its objectives s² times.
    C_i : ndarray of shape (n_samples,)
        The box bounds uᵢ = sᵢ of the standard form (LIBSVM's scale).
    y : ndarray of shape (n_samples,)
        All ones: the labels of the standard form.

    Raises
    ------
    InvalidParameterError
        ν outside (0, 1] (:func:`check_nu`), before anything else.
    ValueError
        Bad input: NaN/inf, empty X, negative or all-zero weights, gamma ≤ 0, a
        precomputed kernel that is not square, symmetric and PSD.

    Notes
    -----
    See the module docstring for the two scales.  For a non-linear kernel the primal
    is written through a pivoted Cholesky factor K = LLᵀ, as for the C-SVC.

    References
    ----------
    B. Schölkopf et al., "Estimating the support of a high-dimensional distribution",
    Neural Computation 13(7), 2001.
    """

    model = "one-class"
    dual_names = ("alpha",)
    formulations = ("slack",)
    variables_type = OneClassVariables
    certificate_name = "one-class SVM"
    title = "one-class SVM"

    def __init__(self, X, *, nu=0.5, kernel="rbf", gamma="scale", degree=3, coef0=0.0,
                 sample_weight=None, feature_map=None, psd_test=None):
        self.nu = check_nu(nu, type(self).__name__)
        X, _ = check_data(X, np.ones(_num_samples(X)))
        # no centring of a linear kernel: Σα = νΣs ≠ 0, so K is not translation invariant
        self.data = KernelData(X, kernel, gamma=gamma, degree=degree, coef0=coef0,
                               feature_map=feature_map, psd_test=psd_test)
        self.feature_map = feature_map
        self.kernel = self.data.kernel
        self.X = self.data.X
        self.sample_weight = check_sample_weight(sample_weight, self.X)
        self._instance_weight = self.sample_weight
        self.C_i = self.sample_weight.copy()
        self.y = np.ones(self.n_samples)
        self.fit_intercept = True
        self.scale = self.nu * float(np.sum(self.sample_weight))

    def decision_from_dual(self, alpha, b) -> np.ndarray:
        """f(xᵢ) = Σⱼ αⱼK(xᵢ, xⱼ) + b (b = −ρ) on the training points, shape (n_samples,)."""
        return self.data.combination(np.asarray(alpha, dtype=float)) + b

    # ------------------------------------------------------------------ cvxpy forms
    def primal(self, formulation: str = "slack") -> cp.Problem:
        """The primal as a cvxpy Problem in the paper's scale, variables ``w``, ``rho``, ``xi``.

        ``min ½‖w‖² + Σᵢ (sᵢ/(νΣs)) ξᵢ − ρ`` s.t. ``Φw ≥ ρ − ξ`` (constraint 0, whose
        dual values are the paper's α) and ``ξ ≥ 0``, Φ the features (X, φ(X), or the
        kernel factor L).

        Parameters
        ----------
        formulation : {"slack"}, default="slack"

        Returns
        -------
        problem : cvxpy.Problem

        Raises
        ------
        ValueError
            Unknown formulation.
        """
        Phi, w, rho = self._primal_variables(formulation, intercept="rho")
        xi = cp.Variable(self.n_samples, name="xi")
        cost = (self.C_i / self.scale) @ xi
        return cp.Problem(cp.Minimize(0.5 * cp.sum_squares(w) + cost - rho),
                          [Phi @ w >= rho - xi, xi >= 0])

    def dual(self, quad_form: str = "auto") -> cp.Problem:
        """The dual as a cvxpy Problem in the paper's scale, in the variable ``alpha``.

        ``min ½αᵀKα`` s.t. ``α ≥ 0`` (constraint 0), ``α ≤ sᵢ/(νΣs)`` (constraint 1)
        and ``Σα = 1`` (the last; cvxpy's dual value of it is −ρ).

        Parameters
        ----------
        quad_form : {"auto", "features", "quad_form", "factor"}, default="auto"
            How αᵀKα is written (:meth:`KernelData.quadratic
            <margin_opt.problems.kernel_data.KernelData.quadratic>`).

        Returns
        -------
        problem : cvxpy.Problem
        """
        alpha = cp.Variable(self.n_samples, name="alpha")
        cons = [alpha >= 0, alpha <= self.C_i / self.scale, cp.sum(alpha) == 1]
        return cp.Problem(cp.Minimize(0.5 * self.data.quadratic(alpha, quad_form)), cons)

    def _read_cvxpy_dual(self, cvx):
        alpha = np.clip(np.asarray(cvx.var_dict["alpha"].value, dtype=float), 0.0, None)
        # cvxpy's multiplier of Σα = 1 is −ρ (its Lagrangian adds it times Σα − 1, and is
        # stationary at (Kα)ᵢ = ρ on the free αᵢ): b = −ρ, in LIBSVM's scale
        b = float(cvx.constraints[-1].dual_value)
        return self.scale * alpha, self.scale * b

    def _read_cvxpy_primal(self, cvx):
        w = np.asarray(cvx.var_dict["w"].value, dtype=float)
        rho = float(cvx.var_dict["rho"].value)
        alpha = np.clip(np.asarray(cvx.constraints[0].dual_value, dtype=float), 0.0, None)
        return self.scale * w, -self.scale * rho, self.scale * alpha

    # ------------------------------------------------------------------ standard forms
    def _layout(self) -> dict:
        """y = 1, p = 0, uᵢ = sᵢ, Σα = νΣs: LIBSVM's scaled dual."""
        n = self.n_samples
        return dict(y=np.ones(n), p=np.zeros(n), upper=self.C_i.copy(), delta=self.scale,
                    equality=True)

    def to_primal_erm(self):
        """Not posed: the one-class primal's −ρ term has no average-loss form.

        Raises
        ------
        ValueError
            Always; use a dual method (smo, cvxpy-dual) or cvxpy-primal.
        """
        raise ValueError("the one-class SVM has no λ (average-loss) form: its primal has the "
                         "term −ρ; use smo, cvxpy-dual or cvxpy-primal.")

    def _alpha_from_coefficients(self, beta):
        return np.maximum(np.asarray(beta, dtype=float), 0.0)

    def _variables(self, alpha, xi, **kw):
        return OneClassVariables(alpha=alpha, xi=xi, **kw)

    def _check_sklearn(self, estimator):
        if type(estimator).__name__ != "OneClassSVM":
            raise ValueError(f"a one-class problem reads a fitted sklearn.svm.OneClassSVM, "
                             f"got {type(estimator).__name__}.")
        if float(estimator.nu) != self.nu:
            raise ValueError(f"the estimator was fitted with nu={estimator.nu}, the problem "
                             f"has nu={self.nu}: pose the problem with the estimator's nu.")

    # ------------------------------------------------------------------ as mathematics
    def _weighted(self) -> bool:
        return not np.all(self.sample_weight == self.sample_weight[0])

    def _headline(self) -> str:
        n, d = self.X.shape
        return (f"{self.title}: n = {n} samples, d = {d} features, kernel "
                f"{self._kernel_words()}, ν = {self.nu:g}"
                + (", sample weights sᵢ" if self._weighted() else ""))

    def _math_lines(self, feats):
        bound = "sᵢ/(νΣs)" if self._weighted() else f"1/(νn) = {1.0 / self.scale:.4g}"
        return ["primal (problem.primal(); Schölkopf et al. 2001):",
                f"    minimize    ½‖w‖² + Σᵢ cᵢξᵢ − ρ,   cᵢ = {bound}",
                f"    subject to  wᵀφ(xᵢ) ≥ ρ − ξᵢ,  ξᵢ ≥ 0,   i = 1..{self.n_samples}",
                f"    with {feats}", "",
                "dual (problem.dual()):",
                "    minimize    ½ Σᵢⱼ αᵢαⱼ K(xᵢ, xⱼ)",
                "    subject to  0 ≤ αᵢ ≤ cᵢ,  Σᵢ αᵢ = 1", "",
                "decision: f(x) = Σᵢ αᵢK(xᵢ, x) − ρ, an inlier where f(x) > 0"]

    def _standard_form_lines(self) -> list:
        u = "sᵢ" if self._weighted() else f"{self.sample_weight[0]:g}"
        return [f"standard form (SMO; problem.to_standard_form()), LIBSVM's scale: × νΣs = "
                f"{self.scale:g}, {self.n_samples} variables:",
                f"    min ½αᵀKα  s.t. Σα = {self.scale:g}, 0 ≤ α ≤ {u}  (y = 1, p = 0)"]

    # ------------------------------------------------------------------ certificate
    def _certificate_parts(self, res, alpha, solution, tol):
        return one_class_kkt.table(self, res, alpha, solution, tol)

    def __repr__(self) -> str:
        return (f"OneClassProblem(n_samples={self.n_samples}, nu={self.nu:g}, "
                f"kernel={self.kernel.describe()})")
