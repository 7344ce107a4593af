"""The squared hinge (L2-loss SVM) and the squared ε-insensitive SVR as explicit problems.

Squared hinge, primal::

    min_{w, b, ξ}  ½‖w‖² + Σᵢ Cᵢ ξᵢ²   s.t.  yᵢ(wᵀxᵢ + b) ≥ 1 − ξᵢ

(ξ may be negative in the constraint, but never is at the optimum: ξᵢ = max(0, 1 − yᵢfᵢ)),
dual::

    max_α  1ᵀα − ½ αᵀQα − Σᵢ αᵢ²/(4Cᵢ)   s.t.  α ≥ 0,  yᵀα = 0

— the standard dual with the diagonal D = diag(1/(2Cᵢ)) added to Q and no upper bound
(:class:`~margin_opt.standard_forms.DualQP` with ``diag``).  Squared ε-insensitive SVR::

    min ½‖w‖² + Σᵢ Cᵢ(ξᵢ² + ξᵢ*²)   s.t.  yᵢ − f(xᵢ) ≤ ε + ξᵢ,  f(xᵢ) − yᵢ ≤ ε + ξᵢ*

whose dual in (a, â) is the ε-SVR's with the same diagonal and no box.

KKT (stationarity in ξ gives αᵢ = 2Cᵢξᵢ), the table a certificate reads:

    α = 0 ⇒ y f ≥ 1,   α > 0 ⇒ y f = 1 − α/(2C)   (squared hinge)
    a = â = 0 ⇒ |r| ≤ ε,   a > 0 ⇒ r = ε + a/(2C),   â > 0 ⇒ r = −ε − â/(2C)   (SVR, r = y − f)

Without intercept there is no equality (liblinear's problem with ``fit_intercept=False``);
liblinear's own intercept is a regularized bias feature (``intercept_scaling``: the
estimators add the column, :mod:`margin_opt.estimators.linear`).

References
----------
C.-J. Hsieh et al., "A dual coordinate descent method for large-scale linear SVM",
ICML 2008 (the L2-loss SVM dual, D = 1/(2C)).
C.-H. Ho and C.-J. Lin, "Large-scale linear support vector regression", JMLR 13, 2012.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..certificate import TableRow
from ..kkt import category_threshold
from ..lazy import lazy_module
from .svm import SVMProblem
from .svr import SVRProblem

if TYPE_CHECKING:
    import cvxpy as cp
else:
    cp = lazy_module("cvxpy")

__all__ = ["SquaredHingeProblem", "SquaredEpsilonProblem"]


def _diag_layout(C_i, lay):
    """The layout with D = 1/(2Cᵢ) and no upper bound; Cᵢ = 0 fixes αᵢ = 0 (u = 0, D = 0)."""
    c = np.asarray(C_i, dtype=float)
    pos = c > 0
    diag = np.where(pos, 0.5 / np.where(pos, c, 1.0), 0.0)
    lay["upper"] = np.where(pos, np.inf, 0.0)
    lay["diag"] = diag
    return lay


class SquaredHingeProblem(SVMProblem):
    """The L2-loss SVM: ½‖w‖² + Σ Cᵢ max(0, 1 − yᵢ(wᵀxᵢ + b))², as an explicit problem.

    Parameters are those of :class:`~margin_opt.problems.svm.SVMProblem` (the linear
    kernel by default; C must be finite).

    Raises
    ------
    ValueError
        ``C = inf`` (the squared hinge has no hard-margin form), and the input errors
        of :class:`~margin_opt.problems.svm.SVMProblem`.
    """

    model = "svc-l2"
    formulations = ("slack", "loss")
    certificate_name = "L2-loss SVM"
    title = "L2-loss SVM (squared hinge)"

    def _set_weights(self, sw):
        if np.isinf(self.C):
            raise ValueError("the squared hinge needs a finite C (C = inf is the hard margin: "
                             "use SVMProblem(C=np.inf)).")
        super()._set_weights(sw)

    def primal(self, formulation: str = "slack") -> cp.Problem:
        """The primal in ``w``, ``b``, ``xi``: ½‖w‖² + Σ Cᵢξᵢ² s.t. yᵢfᵢ ≥ 1 − ξᵢ
        (constraint 0, whose dual values are α); ``loss``: Σ Cᵢ max(0, 1 − yᵢfᵢ)².

        Raises
        ------
        ValueError
            Unknown formulation.
        """
        Phi, w, b = self._primal_variables(formulation)
        yf = cp.multiply(self.y, Phi @ w + b)
        reg = 0.5 * cp.sum_squares(w)
        if formulation == "slack":
            xi = cp.Variable(self.n_samples, name="xi")
            return cp.Problem(cp.Minimize(reg + self.C_i @ cp.square(xi)), [yf >= 1 - xi])
        return cp.Problem(cp.Minimize(reg + self.C_i @ cp.square(cp.pos(1 - yf))))

    def dual(self, quad_form: str = "auto") -> cp.Problem:
        """The dual in ``alpha``: max 1ᵀα − ½αᵀQα − Σ αᵢ²/(4Cᵢ), α ≥ 0 (constraint 0),
        αᵢ = 0 where Cᵢ = 0 (constraint 1), yᵀα = 0 (last, with intercept)."""
        alpha = cp.Variable(self.n_samples, name="alpha")
        quad = self.data.quadratic(cp.multiply(self.y, alpha), quad_form)
        pos = self.C_i > 0
        d = np.where(pos, 0.25 / np.where(pos, self.C_i, 1.0), 0.0)
        cons = [alpha >= 0, cp.multiply(~pos, alpha) == 0]
        if self.fit_intercept:
            cons.append(self.y @ alpha == 0)
        return cp.Problem(cp.Maximize(cp.sum(alpha) - 0.5 * quad - d @ cp.square(alpha)), cons)

    def _math_lines(self, feats):
        b = " + b" if self.fit_intercept else ""
        eq = ",  Σᵢ yᵢαᵢ = 0" if self.fit_intercept else ""
        return ["primal (problem.primal('slack'); 'loss': ½‖w‖² + Σ Cᵢ max(0, 1 − yᵢfᵢ)²):",
                "    minimize    ½‖w‖² + Σᵢ Cᵢξᵢ²",
                f"    subject to  yᵢ(wᵀφ(xᵢ){b}) ≥ 1 − ξᵢ,   i = 1..{self.n_samples}",
                f"    with {feats}", "",
                "dual (problem.dual()):",
                "    maximize    Σᵢ αᵢ − ½ Σᵢⱼ αᵢαⱼ yᵢyⱼ K(xᵢ, xⱼ) − Σᵢ αᵢ²/(4Cᵢ)",
                f"    subject to  αᵢ ≥ 0{eq}", "",
                "KKT table: α = 0 ⇒ y f ≥ 1;  α > 0 ⇒ y f = 1 − α/(2C)  (ξ = α/(2C))"]

    def _layout(self) -> dict:
        """The C-SVC's layout with D = 1/(2Cᵢ) and no upper bound."""
        return _diag_layout(self.C_i, super()._layout())

    def _certificate_parts(self, res, alpha, solution, tol):
        return squared_table(self, res, alpha, tol)

    def __repr__(self) -> str:
        return (f"SquaredHingeProblem(n_samples={self.n_samples}, C={self.C:g}, "
                f"kernel={self.kernel.describe()}, fit_intercept={self.fit_intercept})")


class SquaredEpsilonProblem(SVRProblem):
    """The L2-loss SVR: ½‖w‖² + Σ Cᵢ max(0, abs(yᵢ − f(xᵢ)) − ε)², as an explicit problem.

    Parameters are those of :class:`~margin_opt.problems.svr.SVRProblem` (the linear
    kernel by default), and ``fit_intercept`` (default True).

    Raises
    ------
    ValueError
        The input errors of :class:`~margin_opt.problems.svr.SVRProblem`.
    """

    model = "svr-l2"
    certificate_name = "L2-loss SVR"
    title = "L2-loss SVR (squared ε-insensitive)"

    def __init__(self, X, y, *, C=1.0, epsilon=0.0, kernel="linear", fit_intercept=True,
                 **kw):
        super().__init__(X, y, C=C, epsilon=epsilon, kernel=kernel,
                         fit_intercept=fit_intercept, **kw)

    def primal(self, formulation: str = "slack") -> cp.Problem:
        """The primal in ``w``, ``b``, ``xi``, ``xi_star``: tube constraints 0 (duals a)
        and 1 (duals â); ``loss``: Σ Cᵢ max(0, abs(y − f) − ε)².

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
            cons = [self.y - f <= self.epsilon + xi, f - self.y <= self.epsilon + xi_star]
            return cp.Problem(cp.Minimize(reg + self.C_i @ (cp.square(xi) + cp.square(xi_star))),
                              cons)
        loss = cp.square(cp.pos(cp.abs(self.y - f) - self.epsilon))
        return cp.Problem(cp.Minimize(reg + self.C_i @ loss))

    def dual(self, quad_form: str = "auto") -> cp.Problem:
        """The dual in ``alpha`` (a), ``alpha_star`` (â): a, â ≥ 0 (constraints 0, 1),
        zero where Cᵢ = 0 (2, 3), Σ(a − â) = 0 (last, with intercept; its dual value is b)."""
        a = cp.Variable(self.n_samples, name="alpha")
        a_star = cp.Variable(self.n_samples, name="alpha_star")
        beta = a - a_star
        pos = self.C_i > 0
        d = np.where(pos, 0.25 / np.where(pos, self.C_i, 1.0), 0.0)
        objective = (-0.5 * self.data.quadratic(beta, quad_form)
                     - self.epsilon * cp.sum(a + a_star) + self.y @ beta
                     - d @ (cp.square(a) + cp.square(a_star)))
        cons = [a >= 0, a_star >= 0, cp.multiply(~pos, a) == 0, cp.multiply(~pos, a_star) == 0]
        if self.fit_intercept:
            cons.append(cp.sum(beta) == 0)
        return cp.Problem(cp.Maximize(objective), cons)

    def _math_lines(self, feats):
        e = self.epsilon
        b = " + b" if self.fit_intercept else ""
        eq = ",  Σᵢ (aᵢ − âᵢ) = 0" if self.fit_intercept else ""
        return ["primal (problem.primal('slack'); 'loss': ½‖w‖² + Σ Cᵢ max(0, |yᵢ − fᵢ| − ε)²):",
                "    minimize    ½‖w‖² + Σᵢ Cᵢ(ξᵢ² + ξᵢ*²)",
                f"    subject to  yᵢ − f(xᵢ) ≤ {e:g} + ξᵢ,  f(xᵢ) − yᵢ ≤ {e:g} + ξᵢ*,"
                f"   i = 1..{self.n_samples}",
                f"    with f(x) = wᵀφ(x){b}, {feats}", "",
                "dual (problem.dual(), in a and â):",
                f"    maximize    −½ Σᵢⱼ (aᵢ − âᵢ)(aⱼ − âⱼ)K(xᵢ, xⱼ) − {e:g} Σᵢ(aᵢ + âᵢ)"
                " + Σᵢ yᵢ(aᵢ − âᵢ) − Σᵢ (aᵢ² + âᵢ²)/(4Cᵢ)",
                f"    subject to  aᵢ, âᵢ ≥ 0{eq}", "",
                "KKT table: a = â = 0 ⇒ |r| ≤ ε;  a > 0 ⇒ r = ε + a/(2C);  "
                "â > 0 ⇒ r = −ε − â/(2C)  (r = y − f)"]

    def _layout(self) -> dict:
        """The ε-SVR's 2n-variable layout with D = 1/(2Cᵢ), no box, and the equality only
        with an intercept."""
        lay = super()._layout()
        return _diag_layout(np.r_[self.C_i, self.C_i], lay)

    def _certificate_parts(self, res, alpha, solution, tol):
        return squared_table(self, res, alpha, tol)

    def __repr__(self) -> str:
        return (f"SquaredEpsilonProblem(n_samples={self.n_samples}, C={self.C:g}, "
                f"epsilon={self.epsilon:g}, kernel={self.kernel.describe()})")


def squared_table(problem, res, alpha, tol):
    """(extra checks, table rows, quantities) of a squared-loss certificate.

    With sₜ = yₜf(x) + pₜ the margin of variable t and Dₜ = 1/(2Cₜ): αₜ = 0 ⇒ sₜ ≥ 0
    and αₜ > 0 ⇒ sₜ = −Dₜαₜ (ξₜ = αₜ/(2Cₜ)); a row lists the variables (data rows for
    the SVR's â) that contradict it by more than ``tol`` (units of f).

    A point is listed where it contradicts both readings by more than ``tol``: the
    zero one (sₜ ≥ 0) and the positive one (sₜ = −Dₜαₜ).  An interior-point answer's
    multipliers off the margin (1e-12–1e-5, where sₜ is anything ≥ 0) meet the first;
    a large multiplier with a tiny Dₜ (a heavy sample weight), whose implied slack is
    below any threshold, meets the second.  Whether a multiplier is small enough to
    stand for zero is the certificate's complementarity check (αₜ(sₜ + Dₜαₜ) at
    ``tol``), not the table's; a multiplier is counted in the positive row where its
    slack Dₜαₜ or its size (against the largest) exceeds √tol
    (:func:`margin_opt.kkt.category_threshold`).
    """
    qp = problem._qp
    s, d = res.s, qp.diag
    tau = category_threshold(tol)
    on = (d * alpha > tau) | (alpha > tau * max(float(np.max(alpha, initial=0.0)), 1.0))
    meets_zero = s >= -tol
    meets_on = np.abs(s + d * alpha) <= tol
    bad_zero = np.flatnonzero(~on & (qp.upper > 0) & ~meets_zero & ~meets_on)
    bad_on = np.flatnonzero(on & ~meets_on & ~meets_zero)
    n = problem.n_samples
    if qp.n_variables == 2 * n:          # the SVR: a then â, reported as data rows
        rows = [TableRow("a = â = 0", "|r| ≤ ε", int(np.sum(~on[:n] & ~on[n:])),
                         np.unique(bad_zero % n)),
                TableRow("a > 0", "r = ε + a/(2C)", int(on[:n].sum()), bad_on[bad_on < n]),
                TableRow("â > 0", "r = −ε − â/(2C)", int(on[n:].sum()),
                         bad_on[bad_on >= n] - n)]
        n_sv = int(np.sum(on[:n] | on[n:]))
    else:
        rows = [TableRow("α = 0", "y f(x) ≥ 1", int(np.sum(~on)), bad_zero),
                TableRow("α > 0", "y f(x) = 1 − α/(2C)", int(on.sum()), bad_on)]
        n_sv = int(on.sum())
    return [], rows, {"n_support": n_sv}
