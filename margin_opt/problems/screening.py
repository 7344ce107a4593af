"""Safe screening of the binary C-SVC between the points of a path over C.

An answer at C₀ and a primal/dual pair feasible at C bound where the unknown optimum at
C can be; samples whose margin is decided over that whole region have a known
multiplier at C (0 or Cᵢ), and can be left out of the solve at C.

**The sphere** (the gap-safe sphere of Ndiaye, Fercoq, Gramfort and Salmon, JMLR 2017,
for the C-SVC as in Shibagaki et al., ICML 2016; the setting of Ogawa, Suzuki and
Takeuchi, ICML 2013: a path's previous answer screens the next C).  The primal
``P(w, b) = ½‖w‖² + Σᵢ Cᵢ max(0, 1 − yᵢ(wᵀφ(xᵢ) + b))`` is 1-strongly convex in w
(not in b): for any (ŵ, b̂), ``P(ŵ, b̂) − P* ≥ ½‖ŵ − w*‖²`` (0 is a subgradient at the
optimum (w*, b*)).  With any dual-feasible α̃ at C (0 ≤ α̃ ≤ C, yᵀα̃ = 0), weak
duality P* ≥ D(α̃) gives

    ‖w* − ŵ‖ ≤ r = √(2·(P(ŵ, b̂) − D(α̃))),

so that aᵢ* = w*ᵀφ(xᵢ) lies in [âᵢ − rᵢ, âᵢ + rᵢ], rᵢ = r·√Kᵢᵢ, âᵢ = ŵᵀφ(xᵢ) (the
kernel: both read through K).  :func:`screen` takes (ŵ, b̂) = the point's kept model and
α̃ = its multipliers rescaled to C — the pair ``Path.solution_at`` certifies, whose gap
the path's :class:`~margin_opt.problems.path.GapBound` bounds.

**The intercept** (no strong convexity in b; our derivation, not taken from the
papers).  b* minimizes the convex, piecewise-linear
``h(b) = Σᵢ Cᵢ max(0, 1 − yᵢ(aᵢ* + b))`` (w* fixed), so its right derivative is ≥ 0
and its left derivative ≤ 0 at b*.  Each is monotone in every aᵢ*; taking each aᵢ* at
the end of its interval that makes the right derivative largest (aᵢ* = âᵢ + rᵢ) gives a
non-decreasing step function of b that is ≥ 0 at b*, hence b* ≥ b_lo, its first
non-negative point; likewise b* ≤ b_hi from the left derivative (aᵢ* = âᵢ − rᵢ).  Then
yᵢf*(xᵢ) ∈ [yᵢâᵢ − rᵢ + min yᵢ[b_lo, b_hi], yᵢâᵢ + rᵢ + max yᵢ[b_lo, b_hi]], and by
complementary slackness (for every primal-dual optimal pair):

- lower bound > 1 ⇒ α*ᵢ = 0;
- upper bound < 1 ⇒ ξ*ᵢ > 0 ⇒ α*ᵢ = Cᵢ.

Without an intercept b* = 0.  Assumptions: a PSD kernel (the sphere is in its feature
space), a finite C, and P(ŵ, b̂), D(α̃) computed in floating point: the gap is enlarged
by 1e-12·(|P| + |D|) and the breakpoints' sums compared with a relative slack of 1e-12,
both on the safe side.

References
----------
K. Ogawa, Y. Suzuki and I. Takeuchi, "Safe screening of non-support vectors in pathwise
SVM computation", ICML 2013.
E. Ndiaye, O. Fercoq, A. Gramfort and J. Salmon, "Gap safe screening rules for
sparsity enforcing penalties", JMLR 18, 2017.
A. Shibagaki, M. Karasuyama, K. Hatano and I. Takeuchi, "Simultaneous safe screening of
features and samples in doubly sparse modeling", ICML 2016 (arXiv:1602.02485).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ..validation import check_box_bounds, check_C

__all__ = ["Screening", "screen", "screen_sphere", "GAP_ROUNDING"]

#: The duality gap a sphere is built from is enlarged by this fraction of |P| + |D|:
#: room for the rounding of the two sums (and of yᵀα̃ = 0, kept to rounding).
GAP_ROUNDING = 1e-12


@dataclass(frozen=True)
class Screening:
    """The samples whose multiplier at C is decided before solving.

    Attributes
    ----------
    C : float
        Where the multipliers are decided.
    at_zero : ndarray of int
        Samples with α*ᵢ = 0 at C (margin provably > 1).
    at_upper : ndarray of int
        Samples with α*ᵢ = Cᵢ at C (margin provably < 1).
    radius : float
        r, the bound on ‖w* − ŵ‖ the rule used.
    gap : float
        The absolute duality gap at C r was computed from (r = √(2·gap)).
    b_range : tuple of float
        [b_lo, b_hi], where the optimal intercept lies (0, 0 without intercept).
    n_samples : int
    low, high : ndarray of shape (n_samples,)
        The interval of every yᵢf*(xᵢ) (f* the optimal decision function at C).
    """

    C: float
    at_zero: np.ndarray
    at_upper: np.ndarray
    radius: float
    gap: float
    b_range: tuple
    n_samples: int
    low: np.ndarray = field(default=None, repr=False)
    high: np.ndarray = field(default=None, repr=False)

    @property
    def n_screened(self) -> int:
        """Samples decided (to 0 or to Cᵢ)."""
        return int(self.at_zero.size + self.at_upper.size)

    @property
    def fraction(self) -> float:
        """The screened fraction of the samples."""
        return self.n_screened / self.n_samples if self.n_samples else 0.0

    @property
    def free(self) -> np.ndarray:
        """The samples left to solve, ndarray of int."""
        mask = np.ones(self.n_samples, dtype=bool)
        mask[self.at_zero] = False
        mask[self.at_upper] = False
        return np.flatnonzero(mask)

    def __repr__(self) -> str:
        return (f"Screening(C={self.C:.6g}: {self.at_zero.size} at 0, {self.at_upper.size} "
                f"at C of {self.n_samples} ({100 * self.fraction:.1f} %), "
                f"radius={self.radius:.3g})")


def screen(problem, point, C) -> Screening:
    """The safe screening at C from a path point (an answer at C₀) of a binary C-SVC.

    The sphere is centred at the point's model (ŵ, b̂) = (Σⱼβ₀ⱼφ(xⱼ), b₀), its radius
    √(2·(P − D)) from the gap at C of that model and the point's multipliers rescaled
    to C (s·α₀, the pair of ``Path.solution_at``); see the module docstring for the
    rule and the intercept.

    Parameters
    ----------
    problem : SVMProblem
        The problem of the path (its own C is not used).
    point : PathPoint
        The answer at C₀ (``alpha``, ``beta``, ``b``, ``bound``).
    C : float
        Where to screen, finite and > 0.

    Returns
    -------
    screening : Screening

    Raises
    ------
    ValueError
        Not a C-SVC (``problem.model != "svc"``), or C not a positive finite number.
    """
    _check_svc(problem)
    C, Ci = _box(problem, C)
    a_hat = problem.data.combination(point.beta)           # ŵᵀφ(xᵢ)
    xi = np.maximum(0.0, 1.0 - problem.y * (a_hat + point.b))
    primal = 0.5 * float(point.beta @ a_hat) + float(Ci @ xi)
    s = float(point.bound.scale(C))
    alpha = np.minimum(s * point.alpha, Ci)
    # D(sα₀) = s·1ᵀα₀ − ½s²·β₀ᵀKβ₀ (the clip above moves α by rounding only)
    dual = float(np.sum(alpha)) - 0.5 * s * s * float(point.beta @ a_hat)
    gap = max(primal - dual, 0.0) + GAP_ROUNDING * (abs(primal) + abs(dual))
    return screen_sphere(problem, C, a_hat, math.sqrt(2.0 * gap), gap=gap)


def screen_sphere(problem, C, a_hat, radius, *, gap=math.nan) -> Screening:
    """The samples decided at C when ‖w* − ŵ‖ ≤ ``radius``.

    The rule itself, for any sphere (the tests shrink it to show that a smaller radius
    is unsafe).

    Parameters
    ----------
    problem : SVMProblem
        Its own C is not used.
    C : float
        Where to screen (the box Cᵢ = C·weightᵢ), finite and > 0.
    a_hat : ndarray of shape (n_samples,)
        ŵᵀφ(xᵢ), the sphere's centre's decision values without intercept.
    radius : float
        ≥ 0.
    gap : float, optional
        Recorded in the result.

    Returns
    -------
    screening : Screening
    """
    _check_svc(problem)
    C, Ci = _box(problem, C)
    y = problem.y
    ri = float(radius) * problem.data.diag_root()
    lo_a, hi_a = a_hat - ri, a_hat + ri
    if problem.fit_intercept:
        b_lo, b_hi = _intercept_range(y, Ci, lo_a, hi_a)
    else:
        b_lo = b_hi = 0.0
    # yᵢf*(xᵢ) = yᵢaᵢ* + yᵢb*
    low = np.where(y > 0, lo_a + b_lo, -(hi_a + b_hi))
    high = np.where(y > 0, hi_a + b_hi, -(lo_a + b_lo))
    weighted = Ci > 0                   # Cᵢ = 0: α = 0 = Cᵢ already, nothing to decide
    return Screening(C=C, at_zero=np.flatnonzero(weighted & (low > 1.0)),
                     at_upper=np.flatnonzero(weighted & (high < 1.0)),
                     radius=float(radius), gap=float(gap), b_range=(float(b_lo), float(b_hi)),
                     n_samples=int(y.size), low=low, high=high)


def _intercept_range(y, Ci, lo_a, hi_a):
    """[b_lo, b_hi] ∋ b* when every aᵢ* ∈ [lo_aᵢ, hi_aᵢ] (the module docstring).

    h⁺(b), the largest right derivative of h over the box, is −S₊ plus the Cᵢ of the
    positives with b ≥ 1 − hi_aᵢ and of the negatives with b ≥ −1 − hi_aᵢ (S₊ = Σ₊Cᵢ):
    b_lo is the first breakpoint where it reaches 0.  h⁻(b), the smallest left
    derivative, is −S₊ plus the Cᵢ of the points with b > 1 − lo_aᵢ (positives) or
    b > −1 − lo_aᵢ (negatives): b_hi is the first breakpoint past which it is > 0.
    """
    pos = y > 0
    s_pos = float(np.sum(Ci[pos]))
    slack = 1e-12 * float(np.sum(Ci))
    t_up = np.where(pos, 1.0, -1.0) - hi_a          # h⁺'s breakpoints
    t_dn = np.where(pos, 1.0, -1.0) - lo_a          # h⁻'s breakpoints
    b_lo = _first_reaching(t_up, Ci, s_pos - slack, strict=False)
    b_hi = _first_reaching(t_dn, Ci, s_pos + slack, strict=True)
    return (-math.inf if b_lo is None else b_lo), (math.inf if b_hi is None else b_hi)


def _first_reaching(points, weights, level, strict):
    """The smallest breakpoint where the running sum of weights (in increasing order of
    the points, ties summed together) reaches ``level`` (exceeds it if ``strict``);
    None if never."""
    if level < 0 or (level == 0 and not strict):
        return None                      # already there below every breakpoint
    order = np.argsort(points, kind="stable")
    sums = np.cumsum(weights[order])
    hit = sums > level if strict else sums >= level
    k = int(np.argmax(hit)) if hit.any() else -1
    if k < 0:
        return None
    return float(points[order][k])


def _box(problem, C):
    """(C, Cᵢ = C·weightᵢ) of ``problem`` at C (as ``problem_at`` poses it)."""
    C = check_C(C)
    if not math.isfinite(C):
        raise ValueError("screening needs a finite C (the hard margin has no box).")
    return C, np.asarray(check_box_bounds(C, problem.sample_weight), dtype=float)


def _check_svc(problem):
    if getattr(problem, "model", None) != "svc" or getattr(problem, "hard_margin", False):
        raise ValueError(f"safe screening is made for the soft-margin binary C-SVC "
                         f"(SVMProblem with a finite C), not for {type(problem).__name__} "
                         f"(model {getattr(problem, 'model', None)!r}).")
