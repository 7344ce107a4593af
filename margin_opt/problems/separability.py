"""Linear separability as a linear program, with its Farkas alternative as the dual.

The lecture notes pose "find w, b with yᵢ(w·φ(xᵢ) + b) ≥ 1 for all i" (the
perceptron's other fitting approach: a linear constraint satisfaction problem /
linear program).  Exactly one of two systems has a solution (Farkas' lemma, in
Gordan's form):

- a separator: w, b with ``yᵢ(w·φᵢ + b) ≥ 1`` for every i;
- a **Farkas certificate**: λ ≥ 0 with ``Σᵢ λᵢyᵢφᵢ = 0``, summing to 1 over each
  class (``Σλᵢyᵢ = 0`` is the intercept's row): then ``Σ_{yᵢ=+1} λᵢφᵢ =
  Σ_{yᵢ=−1} λᵢφᵢ`` is a point of both convex hulls, which no hyperplane can
  separate.  Without intercept: λ ≥ 0, ``Σλᵢ = 1``, ``Σλᵢyᵢφᵢ = 0``.

Both come from one bounded LP pair, always feasible and solved to optimality::

    primal ("margin"):  max t   s.t.  yᵢ(w·φᵢ + b) ≥ t  (multipliers λᵢ),  −1 ≤ w ≤ 1
    dual:               min ‖Σᵢ λᵢyᵢφᵢ‖₁  s.t.  λ ≥ 0,  Σλᵢ = 1,  Σλᵢyᵢ = 0 (intercept)

t* > 0 ⇔ separable, and then (w, b)/t* solves the notes' LP; t* = 0 ⇔ the dual's
λ (times 2 with an intercept: each class then sums to 1) is a Farkas certificate.
The notes' LP itself is the formulation ``"feasibility"`` (infeasible on data that
is not separable: :class:`~margin_opt.exceptions.NotSeparableError`, no certificate).

φ is x for the linear kernel, an explicit feature map, or the rows of the pivoted
Cholesky factor L of the kernel matrix (K = LLᵀ): separability in the kernel's
feature space is separability of the rows of L.

Every answer is **verified** before it is believed (:meth:`SeparabilityProblem.certify`):
a separator by recomputing yᵢfᵢ with a bound on its rounding error, a Farkas
certificate by its residual in relative terms (HiGHS and Clarabel are accurate to
about 1e-7 relative, so raw data of any scale is handled alike).

References
----------
J. Farkas, "Theorie der einfachen Ungleichungen", J. reine angew. Math. 124, 1902;
P. Gordan, Math. Ann. 6, 1873 (the alternative).
K. P. Bennett and O. L. Mangasarian, "Robust linear programming discrimination of
two linearly inseparable sets", Optimization Methods and Software 1, 1992 (LP
discrimination).
S. Boyd and L. Vandenberghe, *Convex Optimization*, CUP 2004, §5.8 (theorems of
alternatives), §8.6 (linear discrimination).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import scipy.sparse as sp
from scipy import linalg

from ..certificate import Certificate, Check
from ..display import problem_latex
from ..exceptions import NotSeparableError, SolverError
from ..lazy import lazy_module
from ..losses import Hinge
from ..solution import Solution
from ..standard_forms import PrimalERM
from ..validation import check_binary_labels, check_data, check_positive
from .base import KernelProblem
from .kernel_data import KernelData
from .solve_path import solve as _solve

if TYPE_CHECKING:
    import cvxpy as cp
else:
    cp = lazy_module("cvxpy")  # imported on first use: the cvxpy forms only

__all__ = ["separability", "decide", "SeparabilityResult", "SeparabilityProblem",
           "SeparabilityVariables", "farkas_residual", "UNIT_ROUNDOFF", "FARKAS_TOL"]

#: u = 2⁻⁵³, the unit roundoff of float64.
UNIT_ROUNDOFF = 2.0 ** -53

#: Default relative tolerance of a Farkas certificate (about HiGHS's feasibility
#: tolerance; the simplex answers measured are at 1e-15).
FARKAS_TOL = 1e-7

#: A separator passes when the rounding bound of every yᵢfᵢ is below this
#: fraction of yᵢfᵢ (so every yᵢfᵢ > 0 in exact arithmetic, with room to spare).
SEPARATION_TOL = 0.5


@dataclass(eq=False, kw_only=True)
class SeparabilityVariables:
    """Variables of a separability answer.

    Attributes
    ----------
    w : ndarray of shape (n_features,) or None
        Explicit weights (linear kernel or a feature map).
    w_factor : ndarray of shape (r,) or None
        Weights in the coordinates of the kernel factor L (an LP answer on a kernel).
    beta : ndarray of shape (n_samples,) or None
        Representer coefficients f = Kβ + b (the kernel perceptron: β = α∘y).
    alpha : ndarray of shape (n_samples,)
        The dual side: the LP's multipliers λ of the margin constraints (normalized
        to Σλ = 1), or the perceptron's summed step sizes (w = Σαᵢyᵢφᵢ).
    farkas : ndarray of shape (n_samples,) or None
        The Farkas candidate the method offers (λ ≥ 0 summing to 1 per class, or in
        all without intercept), verified by :meth:`SeparabilityProblem.certify`.
    """

    w: np.ndarray | None = None
    w_factor: np.ndarray | None = None
    beta: np.ndarray | None = None
    alpha: np.ndarray
    farkas: np.ndarray | None = None


def farkas_residual(Phi, y, lam, fit_intercept=True, per_feature=True) -> float:
    """The relative residual of ``Σᵢ λᵢyᵢφᵢ = 0`` (and ``Σλᵢyᵢ = 0`` with intercept).

    Parameters
    ----------
    Phi : {ndarray, sparse matrix} of shape (n_samples, r)
        Features φᵢ (X, φ(X) or the kernel factor L).
    y : ndarray of shape (n_samples,)
        Labels ±1.
    lam : ndarray of shape (n_samples,)
        Weights λ ≥ 0.
    fit_intercept : bool, default=True
        Include the intercept's row Σλᵢyᵢ (the coordinate 1 of [1, φᵢ]).
    per_feature : bool, default=True
        True: ``maxⱼ |Σᵢλᵢyᵢφᵢⱼ| / Σᵢλᵢ|φᵢⱼ|`` — each coordinate against the size of
        its own terms, so the test does not change when a feature is rescaled (raw
        features of very different scales, e.g. breast cancer's 0.001 to 4000).
        False: ``‖Σλᵢyᵢφᵢ‖₂ / Σλᵢ‖φᵢ‖₂`` — for kernel factors, whose coordinates are
        an arbitrary basis of the feature space.  A coordinate with no terms counts 0.

    Returns
    -------
    residual : float
        0 for an exact certificate; ≤ 1 always.
    """
    lam = np.asarray(lam, dtype=float)
    g = np.asarray(Phi.T @ (y * lam)).ravel()
    if per_feature:
        absPhi = abs(Phi) if sp.issparse(Phi) else np.abs(Phi)
        scale = np.asarray(absPhi.T @ lam).ravel()
        if fit_intercept:
            g, scale = np.r_[lam @ y, g], np.r_[lam.sum(), scale]
        ratio = np.divide(np.abs(g), scale, out=np.zeros_like(g), where=scale > 0)
        return float(ratio.max(initial=0.0))
    sq = np.asarray(Phi.multiply(Phi).sum(axis=1)).ravel() if sp.issparse(Phi) \
        else np.einsum("ij,ij->i", Phi, Phi)
    if fit_intercept:
        g, sq = np.r_[lam @ y, g], sq + 1.0
    scale = float(lam @ np.sqrt(sq))
    return float(np.linalg.norm(g) / scale) if scale > 0 else 0.0


class SeparabilityProblem:
    """Is the data linearly separable (in a kernel's feature space)? The LP pair.

    Parameters
    ----------
    X : {array-like, sparse matrix} of shape (n_samples, n_features)
        Training data (the Gram matrix for ``kernel="precomputed"``).  Not modified.
    y : array-like of shape (n_samples,)
        Two labels; ``classes_[0]`` → −1, ``classes_[1]`` → +1.
    kernel : {"linear", "poly", "rbf", "sigmoid", "precomputed"} or callable, default="linear"
    gamma, degree, coef0 : see :func:`margin_opt.kernels.make_kernel`
    fit_intercept : bool, default=True
        Whether the separator has an intercept b.
    feature_map : callable, optional
        An explicit feature map φ (w then lives in its space).

    Attributes
    ----------
    y : ndarray of shape (n_samples,)
    classes_ : ndarray of shape (2,)
    kernel : Kernel
    data : KernelData

    Raises
    ------
    ValueError
        NaN/inf, one class or three, bad kernel parameters.

    Notes
    -----
    Methods (:mod:`margin_opt.methods`, model ``"separability"``): ``cvxpy-primal``
    (the margin LP, or the notes' feasibility LP with ``formulation="feasibility"``),
    ``cvxpy-dual`` (the hull-distance LP) and ``perceptron`` (the perceptron rule on
    the criterion Σ max(0, −yᵢfᵢ): a separator when it converges, a Farkas
    certificate when its weights return to an earlier state).
    """

    model = "separability"
    formulations = ("margin", "feasibility")
    certificate_name = "Separability"
    variables_type = SeparabilityVariables

    def __init__(self, X, y, *, kernel="linear", gamma="scale", degree=3, coef0=0.0,
                 fit_intercept=True, feature_map=None):
        X, y_raw = check_data(X, y)
        self.y, self.classes_ = check_binary_labels(y_raw)
        self.fit_intercept = bool(fit_intercept)
        self.data = KernelData(X, kernel, gamma=gamma, degree=degree, coef0=coef0,
                               feature_map=feature_map)
        self.kernel = self.data.kernel
        self.X = self.data.X

    @classmethod
    def from_problem(cls, problem) -> SeparabilityProblem:
        """The separability problem of another kernel problem's data (e.g. a hard margin).

        Shares its :class:`KernelData`, so a kernel matrix or factor it has computed is
        not computed again.

        Parameters
        ----------
        problem : SVMProblem or another problem with ``data``, ``y`` (±1),
            ``classes_`` and ``fit_intercept``

        Returns
        -------
        separability_problem : SeparabilityProblem
        """
        self = cls.__new__(cls)
        self.y, self.classes_ = problem.y, problem.classes_
        self.fit_intercept = bool(problem.fit_intercept)
        self.data = problem.data
        self.kernel, self.X = self.data.kernel, self.data.X
        return self

    # ------------------------------------------------------------------ data views
    # The kernel problems' views of ``self.data`` and their primal variables (w, b):
    # the same code, without their standard dual QP.
    n_samples = KernelProblem.n_samples
    explicit_w = KernelProblem.explicit_w
    gram = KernelProblem.gram
    features = KernelProblem.features
    _primal_variables = KernelProblem._primal_variables
    _primal_decision = KernelProblem._primal_decision

    @property
    def erm_scale(self) -> float:
        """n: the perceptron criterion Σᵢ max(0, −yᵢfᵢ) is n times the ERM's mean J."""
        return float(self.n_samples)

    def to_primal_erm(self) -> PrimalERM:
        """The perceptron criterion ``(1/n) Σᵢ max(0, −yᵢfᵢ)`` as a PrimalERM (λ = 0).

        Returns
        -------
        erm : PrimalERM
            ``loss=Hinge(0.0)``, unit weights; X is the feature matrix where w is
            explicit, else the data (a kernel backend then takes the Gram matrix).
        """
        return PrimalERM(X=self.features() if self.explicit_w else self.X, y=self.y.copy(),
                         lam=0.0, sample_weight=np.ones(self.n_samples),
                         fit_intercept=self.fit_intercept, loss=Hinge(0.0))

    # ------------------------------------------------------------------ cvxpy forms
    def primal(self, formulation: str = "margin") -> cp.Problem:
        """The separability LP as a cvxpy Problem (variables ``w``, ``b``, ``t``).

        Parameters
        ----------
        formulation : {"margin", "feasibility"}, default="margin"
            ``margin``: maximize t s.t. ``yᵢ(w·φᵢ + b) ≥ t`` (constraint 0, its dual
            values are λ) and ``−1 ≤ w ≤ 1`` (constraints 1, 2): always feasible and
            bounded, t* > 0 exactly when the data is separable.  ``feasibility``: the
            notes' LP, minimize 0 s.t. ``yᵢ(w·φᵢ + b) ≥ 1``; infeasible when not
            separable.

        Returns
        -------
        problem : cvxpy.Problem

        Raises
        ------
        ValueError
            Unknown formulation.
        """
        Phi, w, b = self._primal_variables(formulation)
        yf = cp.multiply(self.y, Phi @ w + b)
        if formulation == "feasibility":
            return cp.Problem(cp.Minimize(0), [yf >= 1])
        t = cp.Variable(name="t")
        return cp.Problem(cp.Maximize(t), [yf >= t, w <= 1, w >= -1])

    def dual(self, quad_form=None) -> cp.Problem:
        """The dual of the margin LP: the ℓ₁ distance of the classes' (scaled) hulls.

        ``min Σⱼ sⱼ`` s.t. ``λ ≥ 0`` (constraint 0), ``s ≥ Φᵀ(y∘λ)`` (1),
        ``s ≥ −Φᵀ(y∘λ)`` (2), ``Σλ = 1`` (3) and ``yᵀλ = 0`` (4, with intercept);
        i.e. ``min ‖Σλᵢyᵢφᵢ‖₁``.  Its optimum equals the margin LP's t*; at 0 the λ
        meet the Farkas alternative.  The dual values of (1) − (2) are w, of (4) b.

        Parameters
        ----------
        quad_form : ignored
            Accepted for the shared solve path (the LP has no quadratic term).

        Returns
        -------
        problem : cvxpy.Problem
        """
        Phi = self.features()
        lam = cp.Variable(self.n_samples, name="lam")
        s = cp.Variable(Phi.shape[1], name="s")
        g = Phi.T @ cp.multiply(self.y, lam)
        cons = [lam >= 0, s >= g, s >= -g, cp.sum(lam) == 1]
        if self.fit_intercept:
            cons.append(self.y @ lam == 0)
        return cp.Problem(cp.Minimize(cp.sum(s)), cons)

    def _read_cvxpy_primal(self, cvx):
        w = np.asarray(cvx.var_dict["w"].value, dtype=float)
        b = float(cvx.var_dict["b"].value) if self.fit_intercept else 0.0
        lam = None
        if "t" in cvx.var_dict:
            lam = np.clip(np.asarray(cvx.constraints[0].dual_value, dtype=float), 0.0, None)
        return w, b, lam

    def _read_cvxpy_dual(self, cvx):
        lam = np.clip(np.asarray(cvx.var_dict["lam"].value, dtype=float), 0.0, None)
        b = float(cvx.constraints[4].dual_value) if self.fit_intercept else 0.0
        return lam, b

    def infeasible_error(self, status):
        """:class:`NotSeparableError` (the feasibility LP is infeasible)."""
        return NotSeparableError(
            f"the separability LP yᵢ(w·φ(xᵢ) + b) ≥ 1 is infeasible (solver status {status}): "
            "the data is not linearly separable in the feature space. The margin LP "
            "(formulation='margin', the default of margin_opt.separability) also gives a "
            "Farkas certificate.")

    def check_dual_answer(self, alpha, where: str) -> None:
        """The LP's multipliers are always bounded (Σλ = 1): nothing to check."""

    # ------------------------------------------------------------------ solving
    def solve(self, method: str = "cvxpy-primal", *, solver=None, formulation=None,
              verbose=False, **options) -> Solution:
        """Solve by a registry method: ``cvxpy-primal``, ``cvxpy-dual`` or ``perceptron``.

        Parameters
        ----------
        method : str, default="cvxpy-primal"
        solver : str, optional
            cvxpy solver of the LP (default CLARABEL; ``"HIGHS"`` is the LP solver
            :func:`margin_opt.separability` uses).
        formulation : {"margin", "feasibility"}, optional
            The primal LP's form (default ``"margin"``).
        verbose : bool, default=False
        **options
            Solver options, or the perceptron's (``eta0``, ``max_epochs``, ...).

        Returns
        -------
        solution : Solution
            Variables :class:`SeparabilityVariables`; check it with :meth:`certify`.

        Raises
        ------
        NotSeparableError
            The feasibility LP on data that is not separable.
        SolverError, ValueError
        """
        return _solve(self, method, solver=solver, formulation=formulation,
                      verbose=verbose, **options)

    # ------------------------------------------------------------------ answers
    def _farkas_candidate(self, lam):
        """λ ≥ 0 normalized to sum 1 per class (with intercept) or in all; None if it cannot."""
        if lam is None:
            return None
        lam = np.clip(np.asarray(lam, dtype=float), 0.0, None)
        if self.fit_intercept:
            pos, neg = lam[self.y > 0].sum(), lam[self.y < 0].sum()
            if pos <= 0 or neg <= 0:
                return None
            return np.where(self.y > 0, lam / pos, lam / neg)
        total = lam.sum()
        return lam / total if total > 0 else None

    def _solution(self, decision, b, alpha, farkas, *, w=None, w_factor=None, beta=None,
                  **meta) -> Solution:
        """The Solution of any method; objectives per formulation (see :meth:`certify`)."""
        alpha = np.zeros(self.n_samples) if alpha is None else np.asarray(alpha, dtype=float)
        yf = self.y * decision
        form = meta.get("formulation")
        if form == "PrimalERM":        # the perceptron: its criterion, whose minimum is 0
            primal, dual = float(np.maximum(0.0, -yf).sum()), 0.0
        elif form in ("feasibility", "interpolation"):   # no objective: a feasible point
            primal = dual = 0.0
        else:                          # the margin LP in min form: −t and −‖Σλyφ‖₁
            primal = -float(yf.min())
            lam = alpha / alpha.sum() if alpha.sum() > 0 else alpha
            dual = -float(np.abs(np.asarray(self.features().T @ (self.y * lam))).sum())
        top = float(alpha.max(initial=0.0))
        support = np.flatnonzero(alpha > 1e-12 * top) if top > 0 else np.empty(0, dtype=int)
        variables = SeparabilityVariables(w=w, w_factor=w_factor, beta=beta, alpha=alpha,
                                          farkas=farkas)
        return Solution(variables=variables, dual_coef=(self.y * alpha)[None, :],
                        intercept=np.array([float(b)]), decision=decision,
                        primal_objective=primal, dual_objective=dual, support_=support, **meta)

    def solution_from_primal(self, w, b, *, alpha=None, beta=None, **meta) -> Solution:
        """A Solution from weights w (in the coordinates of :meth:`features`) and b.

        Parameters
        ----------
        w : ndarray of shape (r,)
        b : float
        alpha : ndarray of shape (n_samples,), optional
            Multipliers of the margin constraints (the LP's λ); for the perceptron
            they are read from its result (``meta["raw"]``: α, and the cycle's Δα as
            the Farkas candidate).
        beta : ndarray of shape (n_samples,), optional
            Representer coefficients the method returned.
        **meta
            Envelope fields.

        Returns
        -------
        solution : Solution
        """
        Phi, w, b, decision = self._primal_decision(w, b)
        alpha, farkas = self._dual_side(alpha, meta)
        explicit = self.explicit_w
        return self._solution(decision, b, alpha, farkas, w=w if explicit else None,
                              w_factor=None if explicit else w, beta=beta, **meta)

    def solution_from_representer(self, beta, b, **meta) -> Solution:
        """A Solution from f = Kβ + b (the kernel perceptron); α, cycle from ``meta["raw"]``."""
        beta = np.asarray(beta, dtype=float).ravel()
        b = float(b) if self.fit_intercept else 0.0
        alpha, farkas = self._dual_side(None, meta)
        return self._solution(self.data.combination(beta) + b, b, alpha, farkas, beta=beta,
                              **meta)

    def solution_from_standard(self, alpha, b=None, **meta) -> Solution:
        """A Solution from the dual LP's λ (w and b from its constraints' multipliers).

        Parameters
        ----------
        alpha : ndarray of shape (n_samples,)
            λ of :meth:`dual`.
        b : float, optional
            The dual value of ``yᵀλ = 0``.
        **meta
            Envelope fields; ``meta["raw"]`` is the solved cvxpy dual.
        """
        cons = meta["raw"].constraints
        w = np.asarray(cons[1].dual_value - cons[2].dual_value, dtype=float)
        return self.solution_from_primal(w, 0.0 if b is None else b, alpha=alpha, **meta)

    def _dual_side(self, alpha, meta):
        """(α, Farkas candidate) of an answer: the LP's λ, or the perceptron's α and cycle."""
        raw = meta.get("raw")
        if alpha is None and isinstance(raw, dict) and "alpha" in raw:
            cycle = raw.get("cycle")
            return raw["alpha"], self._farkas_candidate(cycle["alpha_diff"] if cycle else None)
        return alpha, self._farkas_candidate(alpha)

    # ------------------------------------------------------------------ certificate
    def _rounding_bound(self, variables, b) -> np.ndarray:
        """A bound on the rounding error of each computed f(xᵢ) (Higham's γ_k)."""
        if variables.beta is not None:
            M, v = self.gram(), variables.beta
        else:
            M = self.features()
            v = variables.w if variables.w is not None else variables.w_factor
        absM = abs(M) if sp.issparse(M) else np.abs(M)
        k = M.shape[1] + 2
        gamma = k * UNIT_ROUNDOFF / (1.0 - k * UNIT_ROUNDOFF)
        return gamma * (np.asarray(absM @ np.abs(v)).ravel() + abs(b))

    def verify_farkas(self, lam, tol=FARKAS_TOL) -> Certificate:
        """Check that λ is a Farkas certificate: the classes' convex hulls meet.

        Parameters
        ----------
        lam : array-like of shape (n_samples,)
            The candidate (not modified).
        tol : float, default=1e-7
            Tolerance of each relative residual.

        Returns
        -------
        certificate : Certificate
            Checks ``farkas_residual`` (:func:`farkas_residual`: per feature for
            explicit features, in norm for kernel factors), ``farkas_sign``
            (max(0, −min λ)) and ``farkas_normalization`` (``|Σ_class λ − 1|``, or
            ``|Σλ − 1|`` without intercept); ``ok`` when all hold.

        Raises
        ------
        ValueError
            λ of the wrong shape or not finite, tol ≤ 0.
        """
        tol = check_positive(tol, "tol")
        lam = np.array(lam, dtype=float).ravel()
        if lam.shape != (self.n_samples,) or not np.all(np.isfinite(lam)):
            raise ValueError(f"lam must be a finite array of shape ({self.n_samples},).")
        if self.fit_intercept:
            sums = [lam[self.y > 0].sum(), lam[self.y < 0].sum()]
            norm_desc = "max |Σ_{class} λᵢ − 1| over both classes"
        else:
            sums = [lam.sum()]
            norm_desc = "|Σλᵢ − 1|"
        per_feature = self.explicit_w
        residual = farkas_residual(self.features(), self.y, np.clip(lam, 0.0, None),
                                   self.fit_intercept, per_feature=per_feature)
        checks = [
            Check("farkas_residual", residual, tol,
                  ("maxⱼ |Σλᵢyᵢφᵢⱼ| / Σλᵢ|φᵢⱼ|" if per_feature else "‖Σλᵢyᵢφᵢ‖ / Σλᵢ‖φᵢ‖")
                  + (" (with the intercept's row Σλᵢyᵢ)" if self.fit_intercept else "")),
            Check("farkas_sign", max(0.0, -float(lam.min())), tol, "max(0, −min λᵢ)"),
            Check("farkas_normalization", max(abs(s - 1.0) for s in sums), tol, norm_desc),
        ]
        return Certificate(checks, quantities={"separable": False,
                                               "n_support": int(np.sum(lam > 0))},
                           title="Farkas certificate (the classes' convex hulls meet)")

    def certify(self, solution, tol=FARKAS_TOL) -> Certificate:
        """Verify an answer: its separator, or else its Farkas certificate.

        The answer separates when every recomputed yᵢfᵢ exceeds twice its rounding
        bound (so yᵢfᵢ > 0 in exact arithmetic for the computed w, b): check
        ``separation`` = max over i of bound/yᵢfᵢ ≤ 0.5.  Otherwise its Farkas
        candidate is checked (:meth:`verify_farkas`); an answer with neither fails.

        Parameters
        ----------
        solution : Solution
            Of this problem (any method).
        tol : float, default=1e-7
            Tolerance of the Farkas residuals (relative).

        Returns
        -------
        certificate : Certificate
            ``quantities``: ``separable`` (the side verified, or the side claimed when
            it fails), ``margin_min`` (min yᵢfᵢ of the answer).

        Raises
        ------
        TypeError, ValueError
            Not a Solution of a separability problem of this size.
        """
        if not isinstance(solution, Solution) or \
                not isinstance(solution.variables, SeparabilityVariables):
            raise TypeError("certify takes a Solution of a separability problem "
                            "(problem.solve(...)).")
        if np.size(solution.decision) != self.n_samples:
            raise ValueError("the solution belongs to another problem (other data).")
        v = solution.variables
        yf = self.y * np.asarray(solution.decision, dtype=float)
        m = float(yf.min())
        who = solution.method + (f", {solution.backend}" if solution.backend else "")
        if m > 0 or v.farkas is None:
            bound = self._rounding_bound(v, solution.b)
            ratio = float(np.max(bound / yf)) if m > 0 else np.inf
            check = Check("separation", ratio, SEPARATION_TOL,
                          "max rounding bound of yᵢfᵢ / yᵢfᵢ (< 1: every yᵢfᵢ > 0 exactly)")
            if check.passed or v.farkas is None:
                what = "a separator" if m > 0 else "no separator and no Farkas certificate"
                return Certificate([check], quantities={"separable": m > 0, "margin_min": m},
                                   title=f"{self.certificate_name} certificate ({who}): {what}")
        cert = self.verify_farkas(v.farkas, tol)
        cert.quantities["margin_min"] = m
        cert.title = f"{self.certificate_name} certificate ({who}): the hulls meet"
        return cert

    def __str__(self) -> str:
        """The LP pair as a person reads it: the margin LP, its dual and the notes' LP."""
        n, d = self.n_samples, self.data.X.shape[1]
        fb, yl = ("wᵀφ(xᵢ) + b", ",  Σᵢ yᵢλᵢ = 0") if self.fit_intercept else ("wᵀφ(xᵢ)", "")
        b = "intercept b" if self.fit_intercept else "no intercept"
        lines = [f"{self.certificate_name}: n = {n} samples, d = {d} features, kernel "
                 f"{self.kernel.describe()}, {b}",
                 "", "primal (problem.primal('margin'); separable exactly when t > 0):",
                 "    maximize    t",
                 f"    subject to  yᵢ({fb}) ≥ t,  −1 ≤ w ≤ 1,   i = 1..{n}", "",
                 "dual (problem.dual(); the ℓ1 distance of the hulls, 0 where they meet):",
                 "    minimize    ‖Σᵢ λᵢyᵢφ(xᵢ)‖₁",
                 f"    subject to  λ ≥ 0,  Σᵢ λᵢ = 1{yl}", "",
                 "feasibility (problem.primal('feasibility'), the lecture's LP):",
                 "    find        w, b",
                 f"    subject to  yᵢ({fb}) ≥ 1,   i = 1..{n}"]
        return "\n".join(lines)

    def _repr_latex_(self) -> str:
        """The printed problem typeset (Jupyter's display)."""
        return problem_latex(str(self))

    def __repr__(self) -> str:
        return (f"SeparabilityProblem(n_samples={self.n_samples}, "
                f"kernel={self.kernel.describe()}, fit_intercept={self.fit_intercept})")


# --------------------------------------------------------------------------- the decision


@dataclass(frozen=True, eq=False)
class SeparabilityResult:
    """The verified answer of :func:`separability`.

    Attributes
    ----------
    separable : bool
    w : ndarray of shape (n_features,) or (r,), or None
        A separator scaled so that ``min yᵢ(w·φᵢ + b) ≥ 1`` (the notes' LP); in the
        coordinates of the kernel factor L for a non-linear kernel
        (``problem.features()``).  None when not separable.
    b : float or None
        Its intercept (0.0 without intercept).
    farkas : ndarray of shape (n_samples,) or None
        The verified Farkas certificate when not separable: λ ≥ 0 summing to 1 over
        each class (in all without intercept) with ``Σλᵢyᵢφᵢ = 0``; its support are
        the points whose hulls meet.
    margin_min : float
        ``min yᵢfᵢ`` of the answer: ≥ 1 for the scaled separator; ≤ 0 (≈ 0 for the LP)
        when not separable.
    residual : float
        The verified relative Farkas residual (:func:`farkas_residual`); NaN when
        separable.
    method : str
        ``"interpolation"`` (a full-rank feature matrix: f = y exactly), or the
        registry method that decided.
    certificate : Certificate
        The verification (:meth:`SeparabilityProblem.certify`).
    solution : Solution
        The method's answer, unscaled.
    problem : SeparabilityProblem
    """

    separable: bool
    w: np.ndarray | None
    b: float | None
    farkas: np.ndarray | None
    margin_min: float
    residual: float
    method: str
    certificate: Certificate
    solution: Solution
    problem: SeparabilityProblem

    def __repr__(self) -> str:
        if self.separable:
            return (f"SeparabilityResult(separable=True, margin_min={self.margin_min:.6g}, "
                    f"method={self.method!r})")
        return (f"SeparabilityResult(separable=False, residual={self.residual:.2e}, "
                f"support={np.flatnonzero(self.farkas).tolist()[:10]}, method={self.method!r})")


def separability(X, y, *, kernel=None, gamma="scale", degree=3, coef0=0.0, fit_intercept=True,
                 feature_map=None, method="cvxpy-primal", solver="HIGHS", tol=FARKAS_TOL,
                 **options) -> SeparabilityResult:
    """Decide whether two classes are linearly separable, with a verified certificate.

    Solves the LP pair of :class:`SeparabilityProblem` (by default the margin LP
    with HiGHS, whose multipliers are the Farkas candidate) and verifies the answer:
    a separator by recomputing every yᵢfᵢ against its rounding bound, a Farkas
    certificate by its relative residual.  When the feature matrix has full row
    rank (an RBF kernel on distinct points, or more features than samples) the data
    is separable and ``Φw = y`` is solved directly (a triangular solve on the kernel
    factor) before any LP.

    Parameters
    ----------
    X : {array-like, sparse matrix} of shape (n_samples, n_features)
        Data of any scale (the Gram matrix for ``kernel="precomputed"``).  Not modified.
    y : array-like of shape (n_samples,)
        Two labels (``classes_[1]`` is +1).
    kernel : {None, "linear", "poly", "rbf", "sigmoid", "precomputed"} or callable, default=None
        None is the linear kernel; otherwise separability in the kernel's feature
        space (through the pivoted Cholesky factor K = LLᵀ).
    gamma, degree, coef0 : see :func:`margin_opt.kernels.make_kernel`
    fit_intercept : bool, default=True
        Separate by w·φ + b (True) or through the origin (False).
    feature_map : callable, optional
        An explicit feature map φ instead of a kernel.
    method : {"cvxpy-primal", "cvxpy-dual", "perceptron"}, default="cvxpy-primal"
        The registry method that decides (model ``"separability"``).
    solver : str, default="HIGHS"
        cvxpy's LP solver (``"CLARABEL"`` works too).
    tol : float, default=1e-7
        Relative tolerance of the Farkas residuals.  "Not separable" means: the
        classes' hulls meet after moving each feature of the points by at most
        ``tol`` of the size of its terms (of the feature-space norm for kernels).
    **options
        Passed to the method's solver.

    Returns
    -------
    result : SeparabilityResult

    Raises
    ------
    SolverError
        Neither a separator nor a Farkas certificate verifies (the classes are
        separable, if at all, by a margin below the solver's accuracy): the message
        carries the certificate; try ``solver="CLARABEL"`` or rescale the data.
    ValueError
        Bad input (NaN/inf, one class, bad kernel parameters, unknown method).

    References
    ----------
    S. Boyd and L. Vandenberghe, *Convex Optimization*, CUP 2004, §5.8.3, §8.6.1.
    """
    problem = SeparabilityProblem(X, y, kernel="linear" if kernel is None else kernel,
                                  gamma=gamma, degree=degree, coef0=coef0,
                                  fit_intercept=fit_intercept, feature_map=feature_map)
    return decide(problem, method=method, solver=solver, tol=tol, **options)


def decide(problem, *, method="cvxpy-primal", solver="HIGHS", tol=FARKAS_TOL,
           **options) -> SeparabilityResult:
    """:func:`separability` on a :class:`SeparabilityProblem` already built.

    E.g. ``decide(SeparabilityProblem.from_problem(svm_problem))`` for a hard-margin
    SVM's data, sharing its kernel matrix.  Parameters, returns and raises as
    :func:`separability`.
    """
    tol = check_positive(tol, "tol")
    Phi = problem.features()
    if not sp.issparse(Phi) and Phi.shape[1] >= problem.n_samples:
        w, how = _interpolant(Phi, problem.y)
        sol = problem.solution_from_primal(w, 0.0, method="interpolation", backend=how,
                                           formulation="interpolation")
        cert = problem.certify(sol, tol)
        if cert.ok:
            return _result(problem, sol, cert, "interpolation")
    if method not in ("cvxpy-primal", "cvxpy-dual"):
        solver = None
    sol = problem.solve(method, solver=solver, **options)
    cert = problem.certify(sol, tol)
    if not cert.ok:
        raise SolverError(
            f"separability undecided by {method} ({sol.backend}): neither a separator nor a "
            f"Farkas certificate verifies at tol={tol:g}; the classes are separable, if at all, "
            f"by a margin below the solver's accuracy. Try solver='CLARABEL', a larger tol, or "
            f"rescale the data.\n{cert}")
    return _result(problem, sol, cert, method)


def _interpolant(Phi, y):
    """w with Φw = y for a feature matrix of full row rank: (w, how).

    A pivoted Cholesky factor of full rank is lower triangular up to a row
    permutation (row ``piv[k]`` ends at column k): a triangular solve, O(n²).
    Otherwise least squares (LAPACK gelsd).
    """
    n, r = Phi.shape
    if r == n:
        last = r - 1 - np.argmax(Phi[:, ::-1] != 0, axis=1)
        perm = np.argsort(last, kind="stable")
        if np.array_equal(last[perm], np.arange(n)) and np.all(np.diag(Phi[perm]) != 0):
            return linalg.solve_triangular(Phi[perm], y[perm], lower=True), "triangular solve"
    return linalg.lstsq(Phi, y, lapack_driver="gelsd")[0], "least squares"


def _result(problem, sol, cert, method) -> SeparabilityResult:
    v = sol.variables
    if cert.quantities["separable"]:
        w = v.w if v.w is not None else v.w_factor
        b = sol.b
        if w is None:   # a kernel perceptron's answer: its weights in the factor coordinates
            w = np.asarray(problem.features().T @ v.beta).ravel()
        w, b, margin = _scale_to_one(problem, w, b)
        return SeparabilityResult(True, w, b, None, margin, float("nan"), method, cert, sol,
                                  problem)
    return SeparabilityResult(False, None, None, v.farkas.copy(), cert.margin_min,
                              cert.farkas_residual, method, cert, sol, problem)


def _scale_to_one(problem, w, b):
    """(w, b) scaled so that min yᵢ(w·φᵢ + b) ≥ 1 holds as computed; and that minimum."""
    Phi = problem.features()
    for _ in range(8):
        m = float(np.min(problem.y * (np.asarray(Phi @ w).ravel() + b)))
        if m >= 1.0:
            break
        s = (1.0 / m) * (1.0 + 8 * UNIT_ROUNDOFF * (Phi.shape[1] + 2))
        w, b = w * s, b * s
    return w, float(b), m
