"""Boosting as explicit convex problems: the stage line search, the totally
corrective refit and the max-min-margin linear program.

Notation: ``M[i, t] = yᵢ hₜ(xᵢ)`` is the margin of weak learner ``t`` on sample
``i`` (±1 for a classifier), ``w`` are sample weights, ``α`` learner weights.

- **Stage line search** (forward stagewise additive modelling under the
  exponential loss): ``min_α Σᵢ wᵢ exp(−α mᵢ)``.  For ``mᵢ = ±1`` and ``Σ w = 1``
  it is ``(1 − ε) e^{−α} + ε e^{α}`` with the weighted error ``ε``, minimized by
  ``α = ½ log((1 − ε)/ε)`` at the value ``Z = 2√(ε(1 − ε))``.  With k classes
  (SAMME) a learner's stage margins are ``mᵢ = 1/(k − 1)`` (correct) or
  ``−1/(k − 1)²`` (wrong), and ``α = ((k − 1)²/k)(log((1 − ε)/ε) + log(k − 1))``.
- **Totally corrective refit**: ``min_{α ≥ 0} Σᵢ wᵢ exp(−(Mα)ᵢ)``, the exponential
  loss of the whole additive model, convex in all α at once; optionally with
  ``Σ α ≤ l1_bound`` (without a bound the infimum is 0 and not attained when
  some convex combination of the learners separates the data).
- **Max-min-margin LP**: ``max ρ s.t. Mα ≥ ρ, α ≥ 0, Σ α = 1``; its dual is the
  distribution over samples on which the best learner's edge is smallest.

References
----------
J. Friedman, T. Hastie and R. Tibshirani, "Additive logistic regression: a
statistical view of boosting", Ann. Statist. 28(2), 2000.
J. Zhu, H. Zou, S. Rosset and T. Hastie, "Multi-class AdaBoost", Statistics and
Its Interface 2, 2009 (SAMME, the multiclass exponential loss).
R. E. Schapire, Y. Freund, P. Bartlett and W. S. Lee, "Boosting the margin: a new
explanation for the effectiveness of voting methods", Ann. Statist. 26(5), 1998.
A. Demiriz, K. P. Bennett and J. Shawe-Taylor, "Linear programming boosting via
column generation", Machine Learning 46, 2002 (the margin LP and its dual).
M. K. Warmuth, J. Liao and G. Rätsch, "Totally corrective boosting algorithms
that maximize the margin", ICML 2006.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ..certificate import Certificate, Check
from ..display import problem_latex
from ..exceptions import SolverError
from ..lazy import lazy_module
from .cvxpy_runner import run_cvxpy

if TYPE_CHECKING:
    import cvxpy as cp
else:
    cp = lazy_module("cvxpy")  # imported on first use: the cvxpy forms only

__all__ = [
    "EPS_MIN",
    "ALPHA_MAX",
    "closed_form_alpha",
    "stage_margins",
    "weighted_error",
    "StageLineSearch",
    "TotallyCorrectiveProblem",
    "MaxMarginLP",
    "MarginLPResult",
    "certify_stagewise",
    "ALPHA_TOL",
    "LP_TOL",
]

#: Smallest weighted error used in the closed form.  A weak learner with
#: ε < EPS_MIN (a perfect one, ε = 0) gets the finite weight ALPHA_MAX.
EPS_MIN = 1e-10
#: ½ log((1 − EPS_MIN)/EPS_MIN) ≈ 11.513: the weight of a perfect weak learner,
#: the line search as if a weight of 1e-10 were misclassified.
ALPHA_MAX = 0.5 * float(np.log((1.0 - EPS_MIN) / EPS_MIN))

#: Solver options.  The exponential cone is where interior-point codes stall short of
#: 1e-6 in α (measured: CLARABEL's α errs by up to ~3e-5 at tight tolerances), while
#: SCS at eps 1e-12 reaches ~1e-12 on the (small, aggregated) line search.
_OPTIONS = {"SCS": dict(eps_abs=1e-12, eps_rel=1e-12, max_iters=200_000),
            "CLARABEL": {}, "HIGHS": {}}


def closed_form_alpha(error, n_classes=2):
    """The exponential-loss line search in closed form.

    Two classes: ``α = ½ log((1 − ε)/ε)``.  k classes (SAMME, the stage of the
    multiclass exponential loss ``exp(−fᵀY/k)``):
    ``α = ((k − 1)²/k)(log((1 − ε)/ε) + log(k − 1))``, which is the two-class value
    for k = 2.

    Parameters
    ----------
    error : float or ndarray
        Weighted error ε ∈ [0, 1] of the weak learner (weights summing to 1).
    n_classes : int, default=2

    Returns
    -------
    alpha : float or ndarray
        The minimizer; its value at ε = ``EPS_MIN`` where ε < ``EPS_MIN`` (a perfect
        learner; ``ALPHA_MAX`` for two classes).

    Raises
    ------
    ValueError
        If ε is outside [0, 1] or NaN.

    References
    ----------
    Freund and Schapire (1997); Friedman, Hastie and Tibshirani (2000), eq. (10.12)
    of *The Elements of Statistical Learning*; Zhu, Zou, Rosset and Hastie (2009),
    eq. (11) (SAMME's β).
    """
    e = np.asarray(error, dtype=float)
    if np.any(~(e >= 0) | ~(e <= 1)):
        raise ValueError(f"a weighted error must lie in [0, 1], got {error!r}.")
    safe = np.maximum(e, EPS_MIN)
    if n_classes == 2:
        a = np.where(e < EPS_MIN, ALPHA_MAX, 0.5 * np.log((1.0 - safe) / safe))
    else:
        k = float(n_classes)
        a = (k - 1) ** 2 / k * (np.log((1.0 - safe) / safe) + np.log(k - 1))
    return float(a) if np.ndim(error) == 0 else a


def stage_margins(correct, n_classes=2) -> np.ndarray:
    """Stage margins mᵢ of a k-class weak learner: 1/(k − 1) where right, −1/(k − 1)² where wrong.

    The stage objective of the multiclass exponential loss is then Σᵢ wᵢ exp(−α mᵢ)
    (±1 for two classes).

    Parameters
    ----------
    correct : ndarray of bool of shape (n_samples,)
    n_classes : int, default=2

    Returns
    -------
    margins : ndarray of shape (n_samples,)
    """
    k = n_classes
    return np.where(correct, 1.0 / (k - 1), -1.0 / (k - 1) ** 2)


def weighted_error(sample_weight, margins) -> float:
    """Weighted error ``Σ wᵢ 1[mᵢ ≤ 0] / Σ wᵢ`` of margins ``mᵢ = yᵢ h(xᵢ)``.

    Parameters
    ----------
    sample_weight : ndarray of shape (n_samples,)
    margins : ndarray of shape (n_samples,)

    Returns
    -------
    error : float
    """
    w = np.asarray(sample_weight, dtype=float)
    return float(w[np.asarray(margins) <= 0].sum() / w.sum())


def _aggregate(sample_weight, M):
    """Merge samples with identical margin rows (their weights add): exact, smaller."""
    M = np.asarray(M, dtype=float)
    w = np.asarray(sample_weight, dtype=float)
    rows, inv = np.unique(M, axis=0, return_inverse=True)
    return np.bincount(inv.ravel(), weights=w, minlength=rows.shape[0]), rows


def _solve(problem, solver):
    """Solve through the shared cvxpy runner (timings, statuses, our errors)."""
    try:
        return run_cvxpy(problem, solver=solver, tight=False, **_OPTIONS.get(solver, {})).status
    except SolverError as exc:
        raise SolverError(f"the boosting problem was not solved: {exc}") from None


class StageLineSearch:
    """The stage problem ``min_α Σᵢ wᵢ exp(−α mᵢ)`` of forward stagewise boosting.

    Parameters
    ----------
    sample_weight : ndarray of shape (n_samples,)
        Current weights ``wᵢ = exp(−yᵢ H_{m−1}(xᵢ))`` (any positive scale; they are
        normalized to sum 1).
    margins : ndarray of shape (n_samples,)
        ``mᵢ = yᵢ h(xᵢ)`` of the candidate weak learner (±1 for a classifier).

    Notes
    -----
    Samples with equal margins are merged (weights summed) before the cvxpy
    problem is built, so a ±1 learner gives a two-term problem whatever n is.
    The objective is written as ``log Σ exp(log wᵢ − α mᵢ)`` (same minimizer,
    better scaled for the conic solver).

    References
    ----------
    Hastie, Tibshirani and Friedman, *The Elements of Statistical Learning*, §10.4.
    """

    def __init__(self, sample_weight, margins):
        w = np.asarray(sample_weight, dtype=float)
        self.sample_weight = w / w.sum()
        self.margins = np.asarray(margins, dtype=float)
        self._w, rows = _aggregate(self.sample_weight, self.margins[:, None])
        self._m = rows[:, 0]

    @property
    def error(self) -> float:
        """Weighted error ε of the learner."""
        return weighted_error(self.sample_weight, self.margins)

    def objective(self, alpha) -> float:
        """``Σᵢ wᵢ exp(−α mᵢ)`` with Σ w = 1: the normalizer Z of the stage."""
        return float(self._w @ np.exp(-alpha * self._m))

    def closed_form(self) -> float:
        """``½ log((1 − ε)/ε)`` (exact for ±1 margins; ``ALPHA_MAX`` when ε = 0)."""
        return closed_form_alpha(self.error)

    def __str__(self) -> str:
        """The stage problem as a person reads it."""
        return "\n".join([
            f"AdaBoost stage line search: n = {self.margins.size} samples, "
            f"{self._m.size} distinct margins", "",
            "primal (problem.primal(), written log Σᵢ exp(log wᵢ − α mᵢ) for the conic solver):",
            "    minimize    Σᵢ wᵢ exp(−α mᵢ)",
            "    with wᵢ the normalized sample weights, mᵢ = yᵢh(xᵢ) the learner's margins",
            "", "closed form where every mᵢ = ±1 (ε the weighted error):",
            "    α = ½ log((1 − ε)/ε)"])

    def _repr_latex_(self) -> str:
        """The printed problem typeset (Jupyter's display)."""
        return problem_latex(str(self))

    def primal(self):
        """The cvxpy problem in the scalar variable ``alpha`` (printable)."""
        alpha = cp.Variable(name="alpha")
        keep = self._w > 0
        obj = cp.log_sum_exp(np.log(self._w[keep]) - alpha * self._m[keep])
        return cp.Problem(cp.Minimize(obj))

    def solve(self, solver="SCS") -> float:
        """Solve :meth:`primal` with cvxpy (SCS at eps 1e-12 by default); return α.

        Raises
        ------
        ValueError
            If the learner is perfect or useless (all margins of one sign): the
            infimum is then not attained at a finite α.
        SolverError
            If cvxpy does not reach optimality.
        """
        keep = self._w > 0
        if np.all(self._m[keep] >= 0) or np.all(self._m[keep] <= 0):
            raise ValueError("the line search has no finite minimizer: every weighted margin "
                             "has the same sign (a perfect or a useless weak learner).")
        prob = self.primal()
        _solve(prob, solver)
        return float(prob.variables()[0].value)


class TotallyCorrectiveProblem:
    """Refit all learner weights: ``min_{α ≥ 0, Σα ≤ B} Σᵢ wᵢ exp(−(Mα)ᵢ)``.

    Parameters
    ----------
    margins : ndarray of shape (n_samples, n_learners)
        ``M[i, t] = yᵢ hₜ(xᵢ)``.
    sample_weight : ndarray of shape (n_samples,), optional
        Initial sample weights (default uniform; normalized to sum 1).
    l1_bound : float, optional
        ``B``; None for no bound (then the problem may have no minimizer when the
        learners separate the data).

    References
    ----------
    Warmuth, Liao and Rätsch (2006); Hastie, Tibshirani and Friedman, §10.4.
    """

    def __init__(self, margins, sample_weight=None, l1_bound=None):
        M = np.asarray(margins, dtype=float)
        if M.ndim != 2:
            raise ValueError(f"margins must be 2-D (n_samples, n_learners), got shape {M.shape}.")
        w = np.ones(M.shape[0]) if sample_weight is None else np.asarray(sample_weight, float)
        self.margins = M
        self.sample_weight = w / w.sum()
        self.l1_bound = l1_bound
        self._w, self._M = _aggregate(self.sample_weight, M)

    def objective(self, alpha) -> float:
        """``Σᵢ wᵢ exp(−(Mα)ᵢ)`` with Σ w = 1."""
        return float(self._w @ np.exp(-(self._M @ np.asarray(alpha, dtype=float))))

    def __str__(self) -> str:
        """The refit as a person reads it."""
        n, t = self.margins.shape
        bound = "" if self.l1_bound is None else f",  Σₜ αₜ ≤ {self.l1_bound:g}"
        return "\n".join([
            f"Totally corrective boosting: n = {n} samples, T = {t} learners", "",
            "primal (problem.primal(), in log-sum-exp form):",
            "    minimize    Σᵢ wᵢ exp(−Σₜ αₜMᵢₜ)",
            f"    subject to  α ≥ 0{bound}",
            "    with Mᵢₜ = yᵢhₜ(xᵢ) the learners' margins, wᵢ the normalized sample weights"])

    def _repr_latex_(self) -> str:
        """The printed problem typeset (Jupyter's display)."""
        return problem_latex(str(self))

    def primal(self):
        """The cvxpy problem in ``alpha`` of shape (n_learners,) (log-sum-exp form)."""
        alpha = cp.Variable(self._M.shape[1], nonneg=True, name="alpha")
        keep = self._w > 0
        obj = cp.log_sum_exp(np.log(self._w[keep]) - self._M[keep] @ alpha)
        cons = [] if self.l1_bound is None else [cp.sum(alpha) <= self.l1_bound]
        return cp.Problem(cp.Minimize(obj), cons)

    def solve(self, solver="CLARABEL") -> np.ndarray:
        """Solve with cvxpy (CLARABEL by default); return α ≥ 0 of shape (n_learners,).

        Raises
        ------
        SolverError
            If cvxpy does not reach optimality (e.g. no bound on separable data).
        """
        prob = self.primal()
        _solve(prob, solver)
        return np.maximum(np.asarray(prob.variables()[0].value, dtype=float), 0.0)


@dataclass(frozen=True)
class MarginLPResult:
    """Answer of the max-min-margin LP.

    Attributes
    ----------
    margin : float
        ρ*, the largest minimum normalized margin over convex combinations.
    weights : ndarray of shape (n_learners,)
        α ≥ 0 with Σ α = 1 attaining it.
    sample_weights : ndarray of shape (n_samples,)
        The LP dual: a distribution d over samples on which every learner's
        edge ``Σᵢ dᵢ M[i, t]`` is ≤ ρ* (the hardest reweighting).
    status : str
        cvxpy's status.
    """

    margin: float
    weights: np.ndarray
    sample_weights: np.ndarray
    status: str


class MaxMarginLP:
    """``max ρ subject to Σₜ αₜ yᵢ hₜ(xᵢ) ≥ ρ ∀i, α ≥ 0, Σ α = 1``.

    Parameters
    ----------
    margins : ndarray of shape (n_samples, n_learners)
        ``M[i, t] = yᵢ hₜ(xᵢ)``.

    References
    ----------
    Schapire, Freund, Bartlett and Lee (1998); Demiriz, Bennett and Shawe-Taylor
    (2002), the LPBoost primal/dual pair.
    """

    def __init__(self, margins):
        M = np.asarray(margins, dtype=float)
        if M.ndim != 2 or M.shape[1] == 0:
            raise ValueError(f"margins must have shape (n_samples, n_learners ≥ 1), "
                             f"got {M.shape}.")
        self.margins = M
        rows, inv = np.unique(M, axis=0, return_inverse=True)
        self._rows, self._inv = rows, inv.ravel()

    def __str__(self) -> str:
        """The LP pair as a person reads it."""
        n, t = self.margins.shape
        return "\n".join([
            f"Largest minimum margin of {t} learners: n = {n} samples "
            f"({self._rows.shape[0]} distinct margin rows)", "",
            "primal (problem.primal()):",
            "    maximize    ρ",
            f"    subject to  Σₜ αₜMᵢₜ ≥ ρ,  α ≥ 0,  Σₜ αₜ = 1,   i = 1..{n}",
            "    with Mᵢₜ = yᵢhₜ(xᵢ) the learners' margins", "",
            "dual (LPBoost's: the hardest distribution d over the samples):",
            "    minimize    γ",
            f"    subject to  Σᵢ dᵢMᵢₜ ≤ γ,  d ≥ 0,  Σᵢ dᵢ = 1,   t = 1..{t}"])

    def _repr_latex_(self) -> str:
        """The printed problem typeset (Jupyter's display)."""
        return problem_latex(str(self))

    def primal(self):
        """The cvxpy LP in ``(alpha, rho)`` over the distinct margin rows (printable)."""
        alpha = cp.Variable(self._rows.shape[1], nonneg=True, name="alpha")
        rho = cp.Variable(name="rho")
        cons = [self._rows @ alpha >= rho, cp.sum(alpha) == 1]
        return cp.Problem(cp.Maximize(rho), cons)

    def solve(self, solver="HIGHS") -> MarginLPResult:
        """Solve the LP (HiGHS by default).

        Returns
        -------
        result : MarginLPResult

        Raises
        ------
        SolverError
            If cvxpy does not reach optimality.
        """
        prob = self.primal()
        status = _solve(prob, solver)
        alpha = next(v for v in prob.variables() if v.name() == "alpha")
        rho = next(v for v in prob.variables() if v.name() == "rho")
        a = np.maximum(np.asarray(alpha.value, dtype=float), 0.0)
        a = a / a.sum()
        d_rows = np.maximum(np.asarray(prob.constraints[0].dual_value, dtype=float), 0.0)
        # spread each distinct row's dual mass evenly over the samples sharing it
        counts = np.bincount(self._inv, minlength=self._rows.shape[0])
        d = d_rows[self._inv] / counts[self._inv]
        d = d / d.sum() if d.sum() > 0 else d
        return MarginLPResult(float(rho.value), a, d, status)


#: |α closed form − α cvxpy line search| tolerance, and the LP margin slack.
ALPHA_TOL = 1e-6
LP_TOL = 1e-7


def certify_stagewise(errors, stage_weights, normalizers, train_errors, error_bounds,
                      exp_bounds, *, stage_gradients=None, verified_weights=None,
                      lp_margin=None, min_margin=None, tol=1e-9, n_classes=2) -> Certificate:
    """The certificate of a stagewise exponential-loss fit (AdaBoost), round by round.

    Checks, over the rounds t with 0 < εₜ:

    - ``stage_stationarity``: each line search is solved — the derivative of the stage
      objective ``Σᵢ wᵢ exp(−α mᵢ)`` at αₜ, relative to Zₜ, is 0 (|·| ≤ ``tol``);
    - ``alpha_closed_form``: αₜ = ½ log((1 − εₜ)/εₜ) (exactly, for ±1 learners; the
      SAMME value of :func:`closed_form_alpha` for k classes);
    - ``error_le_bound``: training error ≤ the recorded bound (∏ Z, Freund and
      Schapire's bound, for two classes);
    - ``bound_le_exp_bound``: ∏ Z ≤ exp(−2 Σ γ²) (to rounding, 1e-12; two classes,
      when ``exp_bounds`` is given);
    - with ``verified_weights``: ``alpha_cvxpy`` |α − α cvxpy| ≤ :data:`ALPHA_TOL`;
    - with ``lp_margin``: ``lp_margin_ge_min_margin``, the max-min-margin LP's optimum
      is at least AdaBoost's smallest normalized margin (slack :data:`LP_TOL`).

    Parameters
    ----------
    errors, stage_weights, normalizers, train_errors, error_bounds, exp_bounds :
        ndarray of shape (n_rounds,)
        The per-round records of the fit (see :class:`margin_opt.AdaBoost`);
        ``exp_bounds`` may be None (k > 2).
    stage_gradients : ndarray of shape (n_rounds,), optional
        d/dα of the normalized stage objective at αₜ, divided by Zₜ.
    verified_weights : ndarray of shape (n_rounds,), optional
        The cvxpy line searches' α (NaN for a perfect learner).
    lp_margin, min_margin : float, optional
    tol : float, default=1e-9
    n_classes : int, default=2

    Returns
    -------
    certificate : Certificate

    References
    ----------
    Y. Freund and R. E. Schapire, JCSS 55(1), 1997 (training error ≤ ∏ Zₜ ≤
    exp(−2Σγₜ²)); J. Friedman, T. Hastie and R. Tibshirani, Ann. Statist. 28(2), 2000.
    """
    eps = np.asarray(errors, dtype=float)
    alpha = np.asarray(stage_weights, dtype=float)
    pos = (eps > 0) & (eps >= EPS_MIN)
    closed = closed_form_alpha(eps[pos], n_classes) if pos.any() else np.empty(0)
    checks = []
    if stage_gradients is not None:
        g = np.asarray(stage_gradients, dtype=float)[pos]
        checks.append(Check("stage_stationarity", float(np.max(np.abs(g), initial=0.0)), tol,
                            "max |d/dα Σ wᵢexp(−α mᵢ)| / Z at each αₜ (the line search solved)"))
    formula = "½log((1−εₜ)/εₜ)" if n_classes == 2 else "((k−1)²/k)(log((1−εₜ)/εₜ) + log(k−1))"
    bound = "∏Z" if n_classes == 2 else "∏Z·exp(Σα(k−2)/(2(k−1)²))"
    checks += [
        Check("alpha_closed_form", float(np.max(np.abs(alpha[pos] - closed), initial=0.0)),
              0.0, f"max |αₜ − {formula}| over rounds with εₜ > 0"),
        Check("error_le_bound", float(np.max(np.asarray(train_errors) - error_bounds,
                                             initial=0.0).clip(0)), 0.0,
              f"max(training error − {bound}, 0) over rounds"),
    ]
    if exp_bounds is not None:
        checks.append(Check("bound_le_exp_bound",
                            float(np.max(np.asarray(error_bounds) / exp_bounds - 1,
                                         initial=0.0).clip(0)), 1e-12,
                            "max(∏Z / exp(−2Σγ²) − 1, 0) over rounds"))
    if verified_weights is not None:
        diff = np.abs(np.asarray(verified_weights, dtype=float) - alpha)
        checks.append(Check("alpha_cvxpy", float(np.nanmax(diff, initial=0.0)), ALPHA_TOL,
                            "max |α closed form − α cvxpy line search|"))
    if lp_margin is not None:
        checks.append(Check("lp_margin_ge_min_margin", max(min_margin - lp_margin, 0.0), LP_TOL,
                            "max(AdaBoost min normalized margin − LP margin, 0)"))
    quantities = {"n_rounds": int(eps.size), "final_train_error": float(train_errors[-1])
                  if len(train_errors) else float("nan"),
                  "final_bound": float(error_bounds[-1]) if len(error_bounds) else float("nan")}
    return Certificate(checks, quantities=quantities, title="AdaBoost certificate")
