"""The Crammer–Singer multiclass SVM as one explicit problem, primal and dual.

With k classes, decision functions f_r(x) = w_rᵀφ(x) + b_r and prediction
argmax_r f_r(x), the primal (slack form) is::

    min_{W, b, ξ}  ½ Σ_r ‖w_r‖² + Σᵢ Cᵢ ξᵢ
    s.t.  f_{yᵢ}(xᵢ) − f_r(xᵢ) ≥ 1 − δ_{yᵢ r} − ξᵢ     for every i and every class r

(the row r = yᵢ reads ξᵢ ≥ 0).  With multipliers λᵢᵣ ≥ 0 of these constraints and
βᵢᵣ = Cᵢδ_{yᵢ r} − λᵢᵣ, stationarity gives w_r = Σᵢ βᵢᵣφ(xᵢ), Σ_r λᵢᵣ = Cᵢ and
(with intercepts) Σᵢ βᵢᵣ = 0, so the dual is::

    max_β  Σᵢ β_{i yᵢ} − ½ Σ_r β_rᵀ K β_r
    s.t.   βᵢᵣ ≤ Cᵢ δ_{yᵢ r},   Σ_r βᵢᵣ = 0 (every i),   Σᵢ βᵢᵣ = 0 (every r, with intercepts)

and f_r(x) = Σᵢ βᵢᵣ K(x, xᵢ) + b_r.  The intercepts enter only through differences
f_{yᵢ} − f_r, so they are determined up to a common constant; they are reported with
Σ_r b_r = 0.  Crammer and Singer's original has no intercepts
(``fit_intercept=False``) and writes the dual in τ = β / C.

References
----------
K. Crammer and Y. Singer, "On the algorithmic implementation of multiclass
kernel-based vector machines", JMLR 2:265–292, 2001 (problem (2), dual (16)).
C.-W. Hsu and C.-J. Lin, "A comparison of methods for multiclass support vector
machines", IEEE TNN 13(2), 2002, §2.3 (the version with intercepts).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..display import problem_latex
from ..exceptions import SolverError
from ..lazy import lazy_module
from ..solution import MulticlassVariables, Solution
from ..standard_forms import CrammerSingerQP
from ..validation import (
    C_MAX,
    check_C,
    check_class_labels,
    check_data,
    check_positive,
    check_sample_weight,
)
from . import multiclass_kkt
from .kernel_data import KernelData
from .solve_path import solve as _solve

if TYPE_CHECKING:
    import cvxpy as cp
else:
    cp = lazy_module("cvxpy")  # imported on first use: the cvxpy forms only

__all__ = ["MulticlassSVMProblem", "check_box_bounds"]

#: Relative floor under which a multiplier never counts as a support vector.
SV_THRESHOLD = 1e-12


def check_box_bounds(C_i) -> None:
    """Refuse per-sample bounds Cᵢ = C · weightᵢ above :data:`~margin_opt.validation.C_MAX`.

    Raises
    ------
    ValueError
        Some Cᵢ > C_MAX (1e12), where a bound is numerically infinite for the solvers
        (the rule on C, applied to C · sample_weight · class_weight).
    """
    top = float(np.max(C_i, initial=0.0))
    if top > C_MAX:
        i = int(np.argmax(C_i))
        raise ValueError(
            f"C · sample_weight reaches {top:g} (sample {i}), above {C_MAX:g}, where a box "
            "bound is numerically infinite for the solvers: scale the weights down (or C), "
            f"so that every C · weight ≤ {C_MAX:g}.")


class MulticlassSVMProblem:
    """The Crammer–Singer multiclass SVM as an explicit convex problem.

    Parameters
    ----------
    X : {array-like, sparse matrix} of shape (n_samples, n_features)
        Training data; the Gram matrix (n_samples, n_samples) for
        ``kernel="precomputed"``.  Never modified.
    y : array-like of shape (n_samples,)
        Labels of two classes or more; ``classes_`` is ``np.unique(y)``.
    C : float, default=1.0
        Penalty of the slacks (> 0, finite).
    kernel : {"linear", "poly", "rbf", "sigmoid", "precomputed"}, callable or Kernel,
        default="linear"
    gamma : {"scale", "auto"} or float, default="scale"
    degree : int, default=3
    coef0 : float, default=0.0
    fit_intercept : bool, default=True
        Intercepts b_r (unregularized); False is Crammer and Singer's original.
    sample_weight : array-like of shape (n_samples,), optional
        Weights ≥ 0; sample i gets Cᵢ = C · weightᵢ.

    Attributes
    ----------
    y : ndarray of int of shape (n_samples,)
        Class index of each sample.
    classes_ : ndarray of shape (n_classes,)
    Y : ndarray of shape (n_samples, n_classes)
        One-hot labels, Yᵢᵣ = δ_{yᵢ r}.
    C_i : ndarray of shape (n_samples,)
    kernel : Kernel
    n_samples, n_classes : int

    Raises
    ------
    ValueError
        Bad data (NaN/inf, one class, continuous targets), C ≤ 0 or infinite, bad
        weights or kernel parameters.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> X, y = load_iris(return_X_y=True)
    >>> problem = MulticlassSVMProblem(X, y, C=1.0)
    >>> print(problem.dual())                         # doctest: +SKIP
    >>> sol = problem.solve("cvxpy-dual")
    >>> problem.certify(sol).ok
    True
    """

    model = "multiclass"
    formulations = ("slack",)
    variables_type = MulticlassVariables
    certificate_name = "Crammer–Singer SVM"

    def __init__(self, X, y, *, C=1.0, kernel="linear", gamma="scale", degree=3, coef0=0.0,
                 fit_intercept=True, sample_weight=None):
        X, y_raw = check_data(X, y)
        self.y, self.classes_ = check_class_labels(y_raw)
        self.C = check_C(C)
        if np.isinf(self.C):
            raise ValueError("the Crammer–Singer SVM needs a finite C (its dual bounds "
                             "Σ_r λᵢᵣ = Cᵢ); use e.g. C=1.0.")
        self.fit_intercept = bool(fit_intercept)
        self.data = KernelData(X, kernel, gamma=gamma, degree=degree, coef0=coef0)
        self.kernel = self.data.kernel
        self.X = self.data.X
        self.sample_weight = check_sample_weight(sample_weight, self.X)
        self.C_i = self.C * self.sample_weight
        check_box_bounds(self.C_i)
        #: samples with Cᵢ > 0; the others (weight 0) leave the problem: their β is 0
        self.kept = np.flatnonzero(self.C_i > 0)
        #: the cvxpy forms are divided by this (max(1, max Cᵢ)), their variables by it
        self.cvxpy_scale = max(1.0, float(self.C_i.max()))
        self.n_classes = self.classes_.size
        self.Y = np.zeros((self.n_samples, self.n_classes))
        self.Y[np.arange(self.n_samples), self.y] = 1.0

    @property
    def n_samples(self) -> int:
        """Number of training samples."""
        return self.X.shape[0]

    def solve(self, method: str = "cvxpy-dual", *, solver=None, formulation=None,
              quad_form=None, verbose=False, **options) -> Solution:
        """Solve the problem; see :meth:`margin_opt.problems.base.KernelProblem.solve`.

        Parameters
        ----------
        method : {"cvxpy-dual", "cvxpy-primal", "sequential-dual"}, default="cvxpy-dual"
            ``"sequential-dual"``: the sequential dual method of Keerthi et al. (2008)
            with W explicit (linear kernel;
            :func:`~margin_opt.solvers.linear.crammer_singer.solve_crammer_singer`,
            options ``tol``, ``gap_tol``, ``max_iter``, ``shrinking``,
            ``random_state``, ``alpha0``, ``callback``).
        solver : str, optional
            cvxpy solver (default CLARABEL).
        formulation, quad_form : str, optional
            The primal's formulation (``"slack"``) / how the dual writes Σ β_rᵀKβ_r.
        **options
            cvxpy solver settings.

        Returns
        -------
        solution : Solution
            ``dual_coef`` of shape (n_classes, n_samples) (βᵀ), ``intercept`` of shape
            (n_classes,), ``decision`` of shape (n_samples, n_classes), variables
            :class:`~margin_opt.solution.MulticlassVariables` (λ and ξ).

        Raises
        ------
        ValueError
            A method that does not pose this model.
        SolverError
        """
        return _solve(self, method, solver=solver, formulation=formulation,
                      quad_form=quad_form, verbose=verbose, **options)

    # ------------------------------------------------------------------ cvxpy forms
    def primal(self, formulation: str = "slack") -> cp.Problem:
        """The primal as a cvxpy Problem in ``W`` (r, k), ``b`` (k,) and ``xi`` (n_kept,).

        Over the samples with Cᵢ > 0 (``kept``), the objective divided by
        ``cvxpy_scale`` (see :meth:`dual`).

        W is in the coordinates of :meth:`KernelData.features` (X for the linear
        kernel, the pivoted Cholesky factor of K otherwise).  Constraint r holds the
        n margin constraints against class r (their dual values are λ[:, r]).

        Raises
        ------
        ValueError
            Unknown formulation.
        """
        if formulation not in self.formulations:
            raise ValueError(f"formulation must be one of {self.formulations}, got "
                             f"{formulation!r}.")
        Phi = self.data.features()[self.kept]
        k = self.n_classes
        s = self.cvxpy_scale
        Y = self.Y[self.kept]
        W = cp.Variable((Phi.shape[1], k), name="W")
        b = cp.Variable(k, name="b") if self.fit_intercept else np.zeros(k)
        xi = cp.Variable(self.kept.size, name="xi")
        f = [Phi @ W[:, r] + b[r] for r in range(k)]
        f_y = sum(cp.multiply(Y[:, r], f[r]) for r in range(k))
        margins = [f_y - f[r] >= (1.0 - Y[:, r]) - xi for r in range(k)]
        objective = (0.5 * cp.sum_squares(W) + self.C_i[self.kept] @ xi) / s
        return cp.Problem(cp.Minimize(objective), margins)

    def dual(self, quad_form: str = "auto") -> cp.Problem:
        """The dual as a cvxpy Problem in ``beta`` of shape (n_kept, n_classes).

        Over the samples with Cᵢ > 0 (``kept``; a zero-weight sample's β is 0), and,
        when some Cᵢ > 1, in β / s with s = max Cᵢ (``cvxpy_scale``: the objective
        divided by s), so that the conic solver sees bounds ≤ 1 (at Cᵢ ~ 1e8 Clarabel
        reported the bounded problem unbounded).

        ``max Σᵢ β_{i yᵢ} − ½ Σ_r β_rᵀKβ_r`` s.t. ``β ≤ C∘Y`` (constraint 0),
        ``Σ_r βᵢᵣ = 0`` (constraint 1) and, with intercepts, ``Σᵢ βᵢᵣ = 0`` for the first
        k − 1 classes (constraint 2; the last follows from constraint 1).

        Parameters
        ----------
        quad_form : {"auto", "features", "quad_form", "factor"}, default="auto"
            How each β_rᵀKβ_r is written (:meth:`KernelData.quadratic`).
        """
        k = self.n_classes
        s = self.cvxpy_scale
        tau = cp.Variable((self.kept.size, k), name="beta")
        if self.kept.size == self.n_samples:
            quad = sum(self.data.quadratic(tau[:, r], quad_form) for r in range(k))
        else:       # zero-weight samples left: their β (zero) is put back in place
            lift = self._lift()
            quad = sum(self.data.quadratic(lift @ tau[:, r], quad_form) for r in range(k))
        C = self.C_i[self.kept] / s
        Y = self.Y[self.kept]
        cons = [tau <= C[:, None] * Y, cp.sum(tau, axis=1) == 0]
        if self.fit_intercept:
            cons.append(cp.sum(tau[:, :k - 1], axis=0) == 0)
        return cp.Problem(cp.Maximize(cp.sum(cp.multiply(Y, tau)) - 0.5 * s * quad), cons)

    def _lift(self):
        """The (n_samples, n_kept) selection matrix that puts the kept rows' β in place."""
        import scipy.sparse as sp

        m = self.kept.size
        return sp.csr_matrix((np.ones(m), (self.kept, np.arange(m))), shape=(self.n_samples, m))

    def _intercept(self, b):
        b = np.zeros(self.n_classes) if not self.fit_intercept else np.asarray(b, float).ravel()
        return b - b.mean()

    def _read_cvxpy_dual(self, cvx):
        beta = np.zeros((self.n_samples, self.n_classes))
        beta[self.kept] = self.cvxpy_scale * np.asarray(cvx.var_dict["beta"].value, dtype=float)
        alpha = np.clip(self.C_i[:, None] * self.Y - beta, 0.0, None)
        b = np.zeros(self.n_classes)
        if self.fit_intercept:
            b[:-1] = np.asarray(cvx.constraints[2].dual_value, dtype=float)
        return alpha, self._intercept(b)

    def _read_cvxpy_primal(self, cvx):
        W = np.asarray(cvx.var_dict["W"].value, dtype=float)
        b = cvx.var_dict["b"].value if self.fit_intercept else None
        alpha = np.zeros((self.n_samples, self.n_classes))
        alpha[self.kept] = self.cvxpy_scale * np.column_stack(
            [np.asarray(c.dual_value, dtype=float) for c in cvx.constraints])
        alpha[self.kept] = np.clip(alpha[self.kept], 0.0, None)
        # a sample that left the problem (Cᵢ = 0) has λᵢ = 0 = Cᵢ: nothing to fill
        return W, self._intercept(b), alpha

    def infeasible_error(self, status):
        """The error for a cvxpy status "infeasible" or "unbounded", which this problem
        cannot have (always feasible, ξ large enough; the dual's set is compact): a
        :class:`~margin_opt.exceptions.SolverError` saying that the solver failed."""
        return SolverError(
            f"the conic solver reported the Crammer–Singer problem {status}, which it cannot "
            "be (it always has an optimum): a numerical failure. Scale the features, use a "
            "smaller C or smaller weights, or the linear kernel's solver "
            "(solver='sequential-dual', fit_intercept=False).")

    def to_crammer_singer_qp(self) -> CrammerSingerQP:
        """The standard form of the sequential dual method (explicit features only).

        Raises
        ------
        ValueError
            A kernel without explicit features (w lives in the kernel's space).
        """
        if not self.data.explicit_w:
            raise ValueError("the sequential dual method keeps W explicitly: it needs the "
                             "linear kernel (or a feature map); use solver='cvxpy-dual' for "
                             f"the {self.kernel.describe()} kernel.")
        return CrammerSingerQP(self.data.features(), self.y, self.C_i, self.n_classes,
                               intercept=self.fit_intercept)

    def check_dual_answer(self, alpha, where: str) -> None:
        """Nothing to check: the dual is bounded."""

    # ------------------------------------------------------------------ recovery
    def _check_alpha(self, alpha) -> np.ndarray:
        alpha = np.array(alpha, dtype=float)
        shape = (self.n_samples, self.n_classes)
        if alpha.shape != shape:
            raise ValueError(f"alpha must have shape {shape}, got {alpha.shape}.")
        if not np.all(np.isfinite(alpha)):
            raise ValueError("alpha contains NaN or infinity.")
        return alpha

    def coefficients(self, alpha) -> np.ndarray:
        """β = C∘Y − λ from the multipliers λ, ndarray of shape (n_samples, n_classes)."""
        return self.C_i[:, None] * self.Y - alpha

    def combination(self, beta) -> np.ndarray:
        """Kβ for all columns at once: f_r without b on the training points, shape (n, k)."""
        return self.data.combination(np.asarray(beta, dtype=float))

    def margins(self, decision) -> np.ndarray:
        """mᵢ = f_{yᵢ}(xᵢ) − max_{r ≠ yᵢ} f_r(xᵢ), ndarray of shape (n_samples,)."""
        other = np.where(self.Y > 0, -np.inf, decision)
        return decision[np.arange(self.n_samples), self.y] - other.max(axis=1)

    def support_indices(self, alpha, decision) -> np.ndarray:
        """Samples whose coefficients are active: β_{i yᵢ} = Cᵢ − λ_{i yᵢ} > 0, read robustly.

        As for the binary SVM: β_{i yᵢ} > 1e-12·C and β_{i yᵢ}/C ≥ (mᵢ − 1)₊ (the
        multiplier more active than its constraint is slack).
        """
        beta_y = (self.C_i - alpha[np.arange(self.n_samples), self.y])
        scale = float(self.C_i.max(initial=0.0))
        if scale <= 0:
            return np.empty(0, dtype=int)
        on = (beta_y > SV_THRESHOLD * scale) & \
            (beta_y / scale >= np.maximum(0.0, self.margins(decision) - 1.0))
        return np.flatnonzero(on)

    def _build(self, alpha, b, decision, f0, reg, *, w=None, w_factor=None, **meta):
        beta = self.coefficients(alpha)
        slack = (1.0 - self.Y) + decision - decision[np.arange(self.n_samples), self.y][:, None]
        xi = np.maximum(0.0, slack.max(axis=1))
        primal = reg + float(self.C_i @ xi)
        dual = float(np.sum(self.Y * beta)) - 0.5 * float(np.sum(beta * f0))
        variables = MulticlassVariables(alpha=alpha, xi=xi, w=w, w_factor=w_factor)
        return Solution(variables=variables, dual_coef=beta.T.copy(), intercept=b,
                        decision=decision, primal_objective=primal, dual_objective=dual,
                        support_=self.support_indices(alpha, decision), **meta)

    def solution_from_standard(self, alpha, b=None, **meta) -> Solution:
        """A :class:`Solution` from the multipliers λ (n_samples, n_classes) and b (k,).

        Parameters
        ----------
        alpha : array-like of shape (n_samples, n_classes)
            λ ≥ 0 with Σ_r λᵢᵣ = Cᵢ (copied).
        b : array-like of shape (n_classes,), optional
            Intercepts (zeros when None or without intercepts); centred to Σ b = 0.
        **meta
            Envelope fields (``method``, ``backend``, ``status``, ``n_iter``...).

        Returns
        -------
        solution : Solution
        """
        alpha = self._check_alpha(alpha)
        b = self._intercept(np.zeros(self.n_classes) if b is None else b)
        beta = self.coefficients(alpha)
        f0 = self.combination(beta)
        w = None
        if self.data.explicit_w:
            w = self.data.weights(beta)
        return self._build(alpha, b, f0 + b, f0, 0.5 * float(np.sum(beta * f0)), w=w, **meta)

    def solution_from_primal(self, w, b, *, alpha=None, **meta) -> Solution:
        """A :class:`Solution` from primal weights W (r, k) and b, with the multipliers λ.

        Raises
        ------
        ValueError
            Without ``alpha`` (multipliers are not recovered from a primal point here),
            or arrays of the wrong shape.
        """
        if alpha is None:
            raise ValueError("pass the multipliers alpha (λ) with the primal point.")
        Phi = self.data.features()
        w = np.asarray(w, dtype=float)
        if w.shape != (Phi.shape[1], self.n_classes):
            raise ValueError(f"w must have shape {(Phi.shape[1], self.n_classes)}, got "
                             f"{w.shape}.")
        alpha = self._check_alpha(alpha)
        b = self._intercept(np.zeros(self.n_classes) if b is None else b)
        decision = np.asarray(Phi @ w) + b
        f0 = self.combination(self.coefficients(alpha))
        explicit = self.data.explicit_w
        return self._build(alpha, b, decision, f0, 0.5 * float(np.sum(w * w)),
                           w=w if explicit else None, w_factor=None if explicit else w, **meta)

    # ------------------------------------------------------------------ certificate
    def certify(self, solution, tol=1e-6):
        """Check the KKT conditions and the duality gap of an answer.

        Parameters
        ----------
        solution : Solution
            With :class:`~margin_opt.solution.MulticlassVariables` of this problem.
        tol : float, default=1e-6

        Returns
        -------
        certificate : Certificate
            Checks ``primal_residual``, ``dual_residual``, ``complementary_slackness``,
            ``duality_gap``; the table of samples by β_{i yᵢ} against their margins
            (:mod:`margin_opt.problems.multiclass_kkt`).

        Raises
        ------
        TypeError, ValueError
            Not a Solution, or a solution of another problem.
        """
        tol = check_positive(tol, "tol")
        if not isinstance(solution, Solution):
            raise TypeError(f"certify takes a margin_opt Solution, got "
                            f"{type(solution).__name__}.")
        if not isinstance(solution.variables, MulticlassVariables) or \
                np.shape(solution.variables.alpha) != (self.n_samples, self.n_classes):
            raise ValueError("the solution does not belong to this problem (certify a "
                             "Crammer–Singer solution of the same data).")
        return multiclass_kkt.certify(self, solution, tol)

    def __str__(self) -> str:
        """The problem as a person reads it: sizes, primal and dual."""
        n, d = self.n_samples, self.data.X.shape[1]
        b, plus_b = ("intercepts bᵣ", " + bᵣ") if self.fit_intercept else ("no intercepts", "")
        lines = [f"{self.certificate_name}: n = {n} samples, k = {self.n_classes} classes, "
                 f"d = {d} features, kernel {self.kernel.describe()}, C = {self.C:g}, {b}", "",
                 "primal (problem.primal()):",
                 "    minimize    ½ Σᵣ ‖wᵣ‖² + Σᵢ Cᵢξᵢ",
                 "    subject to  Σₛ Yᵢₛ fₛ(xᵢ) − fᵣ(xᵢ) ≥ 1 − Yᵢᵣ − ξᵢ,   "
                 f"i = 1..{n},  r = 1..{self.n_classes}",
                 f"    with fᵣ(x) = wᵣᵀφ(x){plus_b} and Y the one-hot labels", "",
                 "dual (problem.dual()):",
                 "    maximize    Σᵢᵣ Yᵢᵣβᵢᵣ − ½ Σᵣ Σᵢⱼ βᵢᵣβⱼᵣ K(xᵢ, xⱼ)",
                 "    subject to  βᵢᵣ ≤ CᵢYᵢᵣ,  Σᵣ βᵢᵣ = 0"
                 + (",  Σᵢ βᵢᵣ = 0" if self.fit_intercept else "")]
        return "\n".join(lines)

    def _repr_latex_(self) -> str:
        """The printed problem typeset (Jupyter's display)."""
        return problem_latex(str(self))

    def __repr__(self) -> str:
        return (f"MulticlassSVMProblem(n_samples={self.n_samples}, n_classes={self.n_classes}, "
                f"C={self.C:g}, kernel={self.kernel.describe()}, "
                f"fit_intercept={self.fit_intercept})")
