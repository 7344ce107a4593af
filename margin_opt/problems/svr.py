"""Vapnik's ε-insensitive support vector regression as explicit cvxpy problems.

Primal (slack form)::

    min ½‖w‖² + Σᵢ Cᵢ(ξᵢ + ξᵢ*)  s.t.  yᵢ − f(xᵢ) ≤ ε + ξᵢ,  f(xᵢ) − yᵢ ≤ ε + ξᵢ*,  ξ, ξ* ≥ 0

(loss form: ``½‖w‖² + Σᵢ Cᵢ max(0, |yᵢ − f(xᵢ)| − ε)``), f(x) = wᵀφ(x) + b.

Dual, in (a, â)::

    max −½(a − â)ᵀK(a − â) − ε Σ(aᵢ + âᵢ) + Σ yᵢ(aᵢ − âᵢ)
    s.t. 0 ≤ aᵢ, âᵢ ≤ Cᵢ,  Σ(aᵢ − âᵢ) = 0

and f(x) = Σ(aᵢ − âᵢ)K(x, xᵢ) + b.  aᵢ > 0 only for points on or above the upper
edge of the tube, âᵢ > 0 only on or below the lower edge.

References
----------
V. Vapnik, *The Nature of Statistical Learning Theory*, Springer, 1995.
A. J. Smola and B. Schölkopf, "A tutorial on support vector regression",
Statistics and Computing 14, 2004.
C.-C. Chang and C.-J. Lin, LIBSVM, ACM TIST 2(3), 2011, §2.4 (the 2n-variable form).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..lazy import lazy_module
from ..losses import EpsilonInsensitive
from ..solution import SVRVariables
from ..validation import (
    check_bool,
    check_box_bounds,
    check_C,
    check_data,
    check_positive,
    check_sample_weight,
)
from . import svr_kkt
from .base import KernelProblem
from .kernel_data import KernelData

if TYPE_CHECKING:
    import cvxpy as cp
else:
    cp = lazy_module("cvxpy")  # imported on first use: the cvxpy forms only

__all__ = ["SVRProblem"]


class SVRProblem(KernelProblem):
    """ε-insensitive support vector regression as an explicit problem.

    Parameters
    ----------
    X : {array-like, sparse matrix} of shape (n_samples, n_features)
        Training data (the Gram matrix for ``kernel="precomputed"``); not modified.
    y : array-like of shape (n_samples,)
        Real, finite, non-constant targets.
    C : float, default=1.0
        Penalty of the slacks (> 0, finite).
    epsilon : float, default=0.1
        Half-width of the insensitive tube (≥ 0), in target units.
    kernel : {"linear", "poly", "rbf", "sigmoid", "precomputed"} or callable, default="rbf"
    gamma : {"scale", "auto"} or float, default="scale"
    degree : int, default=3
    coef0 : float, default=0.0
    sample_weight : array-like of shape (n_samples,), optional
        Cᵢ = C·sᵢ.
    feature_map : callable, optional
        Explicit feature map (w explicit in the mapped space).
    psd_test : PSDTest, optional
        How the kernel matrix is tested for positive semidefiniteness when its kernel
        is not PSD by construction (:class:`~margin_opt.problems.kernel_data.PSDTest`;
        default ``PSDTest()``).
    fit_intercept : bool, default=True
        Whether f has the (unregularized) intercept b; without it the dual has no
        equality Σ(aᵢ − âᵢ) = 0 (liblinear's ``fit_intercept=False``).

    Raises
    ------
    ValueError
        ε < 0, non-finite or constant targets, a single sample, C ≤ 0 or infinite,
        and the input errors of :class:`~margin_opt.problems.svm.SVMProblem`.
    """

    def __init__(self, X, y, *, C=1.0, epsilon=0.1, kernel="rbf", gamma="scale", degree=3,
                 coef0=0.0, sample_weight=None, feature_map=None, psd_test=None,
                 fit_intercept=True):
        X, y = check_data(X, y, y_numeric=True)
        if y.shape[0] < 2:
            raise ValueError("SVR needs at least 2 samples; got 1.")
        if np.ptp(y) == 0:
            raise ValueError(f"the targets are constant (all {y[0]!r}): there is nothing to "
                             "regress; check the target column.")
        self.y = np.asarray(y, dtype=float)
        C = check_C(C)
        if np.isinf(C):
            raise ValueError("SVR needs a finite C (there is no hard-margin regression); "
                             "use e.g. C=1.0.")
        self.C = C
        self.epsilon = check_positive(epsilon, "epsilon", allow_zero=True)
        self.data = KernelData(X, kernel, gamma=gamma, degree=degree, coef0=coef0,
                               feature_map=feature_map, psd_test=psd_test,
                               centre_linear=bool(fit_intercept))
        self.feature_map = feature_map
        self.kernel = self.data.kernel
        self.X = self.data.X
        self.sample_weight = check_sample_weight(sample_weight, X)
        self._instance_weight = self.sample_weight
        self.C_i = check_box_bounds(self.C, self.sample_weight)
        self.fit_intercept = check_bool(fit_intercept, "fit_intercept")

    model = "svr"
    dual_names = ("alpha", "alpha_star")
    formulations = ("slack", "loss")
    variables_type = SVRVariables
    certificate_name = "SVR"
    title = "ε-SVR"

    def decision_from_dual(self, dual_coef, b) -> np.ndarray:
        """f(xᵢ) = Σⱼ(aⱼ − âⱼ)K(xᵢ, xⱼ) + b, shape (n_samples,)."""
        return self.data.combination(dual_coef) + b

    # ------------------------------------------------------------------ cvxpy forms
    def primal(self, formulation: str = "slack") -> cp.Problem:
        """The primal as a cvxpy Problem with variables ``w``, ``b`` (and ``xi``, ``xi_star``).

        Parameters
        ----------
        formulation : {"slack", "loss"}, default="slack"
            ``slack``: tube constraints ``y − f ≤ ε + ξ`` (constraint 0, duals a) and
            ``f − y ≤ ε + ξ*`` (constraint 1, duals â), ξ, ξ* ≥ 0; ``loss``: the
            ε-insensitive loss written directly.

        Returns
        -------
        problem : cvxpy.Problem

        Raises
        ------
        ValueError
            Unknown formulation.
        """
        Phi, w, b = self._primal_variables(formulation)
        f = Phi @ w + b
        reg = 0.5 * cp.sum_squares(w)
        if formulation == "slack":
            xi = cp.Variable(self.n_samples, name="xi")
            xi_star = cp.Variable(self.n_samples, name="xi_star")
            cons = [self.y - f <= self.epsilon + xi, f - self.y <= self.epsilon + xi_star,
                    xi >= 0, xi_star >= 0]
            return cp.Problem(cp.Minimize(reg + self.C_i @ (xi + xi_star)), cons)
        loss = cp.pos(cp.abs(self.y - f) - self.epsilon)
        return cp.Problem(cp.Minimize(reg + self.C_i @ loss))

    def dual(self, quad_form: str = "auto") -> cp.Problem:
        """The dual as a cvxpy Problem in ``alpha`` (a) and ``alpha_star`` (â).

        Constraints, in order: a ≥ 0, a ≤ C, â ≥ 0, â ≤ C, Σ(a − â) = 0 (with an
        intercept; its dual value is the intercept b).  ``quad_form`` is as in
        :meth:`KernelData.quadratic <margin_opt.problems.kernel_data.KernelData.quadratic>`.
        """
        a = cp.Variable(self.n_samples, name="alpha")
        a_star = cp.Variable(self.n_samples, name="alpha_star")
        beta = a - a_star
        objective = (-0.5 * self.data.quadratic(beta, quad_form)
                     - self.epsilon * cp.sum(a + a_star) + self.y @ beta)
        cons = [a >= 0, a <= self.C_i, a_star >= 0, a_star <= self.C_i]
        if self.fit_intercept:
            cons.append(cp.sum(beta) == 0)
        return cp.Problem(cp.Maximize(objective), cons)

    def _read_cvxpy_dual(self, cvx):
        a = np.clip(cvx.var_dict["alpha"].value, 0, None)
        a_star = np.clip(cvx.var_dict["alpha_star"].value, 0, None)
        b = float(cvx.constraints[-1].dual_value) if self.fit_intercept else 0.0
        return np.r_[a, a_star], b

    def _read_cvxpy_primal(self, cvx):
        alpha = None
        if cvx.constraints:
            alpha = np.r_[np.clip(cvx.constraints[0].dual_value, 0, None),
                          np.clip(cvx.constraints[1].dual_value, 0, None)]
        b = float(cvx.var_dict["b"].value) if self.fit_intercept else 0.0
        return cvx.var_dict["w"].value, b, alpha

    # ------------------------------------------------------------------ standard forms
    def _math_lines(self, feats):
        n, e = self.n_samples, self.epsilon
        return ["primal (problem.primal('slack'); 'loss': ½‖w‖² + Σ Cᵢ max(0, |yᵢ − fᵢ| − ε)):",
                "    minimize    ½‖w‖² + Σᵢ Cᵢ(ξᵢ + ξᵢ*)",
                f"    subject to  yᵢ − f(xᵢ) ≤ {e:g} + ξᵢ,  f(xᵢ) − yᵢ ≤ {e:g} + ξᵢ*,  ξ, ξ* ≥ 0,"
                f"   i = 1..{n}",
                f"    with f(x) = wᵀφ(x){' + b' if self.fit_intercept else ''}, {feats}", "",
                "dual (problem.dual(), in a and â):",
                f"    maximize    −½ Σᵢⱼ (aᵢ − âᵢ)(aⱼ − âⱼ)K(xᵢ, xⱼ) − {e:g} Σᵢ(aᵢ + âᵢ)"
                " + Σᵢ yᵢ(aᵢ − âᵢ)",
                "    subject to  0 ≤ aᵢ, âᵢ ≤ Cᵢ"
                + (",  Σᵢ (aᵢ − âᵢ) = 0" if self.fit_intercept else ""), "",
                f"targets: {n} values in [{self.y.min():.4g}, {self.y.max():.4g}], ε = {e:g} "
                "(target units)"]

    def _layout(self) -> dict:
        """LIBSVM's 2n-variable form: α = [a; â], labels +1 then −1, p = [ε − y; ε + y].

        The kernel rows of the 2n problem come from the n×n kernel through
        ``index = [0..n−1, 0..n−1]``; no 2n×2n matrix is formed.
        """
        n = self.n_samples
        return dict(y=np.r_[np.ones(n), -np.ones(n)],
                    p=np.r_[self.epsilon - self.y, self.epsilon + self.y],
                    upper=np.r_[self.C_i, self.C_i], delta=0.0, equality=self.fit_intercept,
                    index=np.r_[np.arange(n), np.arange(n)])

    def _loss(self):
        return EpsilonInsensitive(self.epsilon)

    def _alpha_from_coefficients(self, beta):
        return np.r_[np.maximum(beta, 0), np.maximum(-beta, 0)]

    def _variables(self, alpha, xi, **kw):
        n = self.n_samples
        return SVRVariables(alpha=alpha[:n], alpha_star=alpha[n:], xi=xi[:n], xi_star=xi[n:],
                            **kw)

    # ------------------------------------------------------------------ certificate
    def _certified_alpha(self, alpha):
        """At ε = 0 only a − â is determined: read it as (max(β, 0), max(−β, 0))."""
        if self.epsilon > 0:
            return alpha
        beta = alpha[:self.n_samples] - alpha[self.n_samples:]
        return self._alpha_from_coefficients(beta)

    def warm_start(self, alpha):
        """(a, â) → (max(a − â, 0), max(â − a, 0)): the same f, still feasible, and a dual
        objective higher by 2ε·Σ min(aᵢ, âᵢ) — an interior-point answer, which keeps both
        away from 0, would otherwise leave SMO a degenerate direction to wander in."""
        alpha = np.asarray(alpha, dtype=float)
        return self._alpha_from_coefficients(alpha[:self.n_samples] - alpha[self.n_samples:])

    def _certificate_parts(self, res, alpha, solution, tol):
        return svr_kkt.table(self, res, alpha, tol)

    def __repr__(self) -> str:
        return (f"SVRProblem(n_samples={self.n_samples}, C={self.C:g}, "
                f"epsilon={self.epsilon:g}, kernel={self.kernel.describe()})")
