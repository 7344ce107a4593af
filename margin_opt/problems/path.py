"""ε-approximate regularization paths over C (C-SVC and ε-SVR): the :class:`Path`.

A path is a finite set of answers whose certified intervals of C cover a range
[C_min, C_max]: for every C in it, some answer is provably within a relative ε of the
optimum at C.  What makes one answer cover an interval is a duality gap that can be
evaluated for every C from numbers the answer already has.

Take an answer at C₀ to the standard dual (:class:`~margin_opt.standard_forms.DualQP`):
multipliers α₀, coefficients β₀ (f₀ = Kβ₀), intercept b₀.  Only the box depends on C
(uₜ = C·ŭₜ); p, y and Q do not.  At C = tC₀:

- **the model is kept.**  The primal point (w₀, b₀) of α₀, with its slacks ξ₀, is
  feasible at every C, and its objective is linear in C:
  ``P(t) = ½q + t·S``, q = β₀ᵀKβ₀, S = Σₜ u₀ₜξ₀ₜ (the slack cost at C₀);
- **the multipliers are rescaled.**  sα₀ is dual feasible at C for 0 ≤ s ≤ t·r,
  r = minₜ u₀ₜ/α₀ₜ ≥ 1 over α₀ₜ > 0 (box and yᵀα = 0 kept), with the dual objective
  ``D(s) = s·L − ½s²q``, L = −pᵀα₀; the path takes the best of them,
  ``s(t) = min(t·r, L/q)``.

So the bound ``(P(t) − D(s(t))) / D(s(t))`` on the relative suboptimality of the
model at C (weak duality: D ≤ P* ≤ P) costs O(1) per C after an O(m) reading of the
answer.  ``P − (1 + ε)D`` is convex in t (linear minus a concave non-decreasing
function), so the Cs where the bound is ≤ ε form one interval, found in closed form
(the roots of a quadratic on t ≤ L/(qr), of a linear function beyond).  At an exact
answer with r = 1 the gap is ``½q(t − 1)²`` on that first piece: it grows
quadratically away from C₀, each interval is Θ(√ε) wide in log C, and a path needs
O(1/√ε) points — the bound of Giesen et al. (2012), which is tight.

Scaling the model with the multipliers instead (w = tw₀, f = t(f₀ + b₀), the scaled
b; ``problem.solution_from_standard(t·α₀, t·b₀)``) leaves a gap that grows linearly
in |t − 1| (the points on the margin leave it), and the path would need O(1/ε) points
(Giesen, Jaggi and Laue, 2010): measured on breast_cancer in ``docs/paths.md``.

The points are chosen adaptively: the first at C_min, each next one predicted where
its interval should start at the end of the covered range (its lower width
extrapolated from the last point's), warm-started by the nearest answer's multipliers
rescaled to the new box; a prediction too far is kept and followed by a nearer one,
and the path is the fewest of the answers whose intervals cover the range.  Every
answer is solved and certified at its own C by the one solve path
(:func:`margin_opt.problems.solve_path.solve`) at ``tol`` (ε/10 by default).

References
----------
J. Giesen, M. Jaggi and S. Laue, "Approximating parameterized convex optimization
problems", ESA 2010, LNCS 6346; ACM Trans. Algorithms 9(1), 2012.
J. Giesen, J. K. Müller, S. Laue and S. Swiercy, "Approximating concavely
parameterized optimization problems", NIPS 2012.
"""

from __future__ import annotations

import copy
import inspect
import math
import time
from dataclasses import dataclass, field

import numpy as np

from ..certificate import Certificate
from ..display import html_table
from ..exceptions import NotCertifiedError
from ..methods import get_method, stopping_options
from ..parallel import one_blas_thread
from ..solution import Solution
from ..standard_forms import DualQP
from ..validation import check_box_bounds, check_C, check_positive
from .screening import Screening, screen

__all__ = ["Path", "PathPoint", "GapBound", "regularization_path", "problem_at",
           "COVER_MARGIN"]

#: The intervals end where the bound reaches (1 − COVER_MARGIN)·ε, so that a
#: certificate recomputed at an interval's end (P and D summed anew, the model's f read
#: through the features) passes at ε with room for rounding (measured: 1e-12 relative).
COVER_MARGIN = 1e-3
#: Default accuracy of each point's solve and certificate, relative to ε: a point's
#: own gap g shrinks its interval by a factor of about √(1 − g/ε) (5 % at ε/10).
POINT_TOL = 0.1
#: A predicted next point is placed so that its lower width is this fraction of the
#: width extrapolated from the last points (widths shrink slowly as C grows).
PREDICT = 0.9
#: Predictions tried before the next point is placed at the end of the covered range
#: itself (which always connects).
TRIES = 2
#: The most answers one path may solve (a guard against a runaway range or ε).
MAX_SOLVES = 100_000
#: Rows of the printed table shown at each end of a long path.
SHOWN = 8
#: The models whose only C-dependence is the box 0 ≤ α ≤ C·ŭ.
MODELS = ("svc", "svr")


@dataclass(frozen=True)
class GapBound:
    """The duality-gap bound of one answer at every C, from five numbers.

    At C = tC₀ the answer's model (w₀, b₀) is kept and its multipliers are rescaled to
    s(t)α₀, s(t) = min(t·reach, lin/quad) (see the module docstring):
    ``P(t) = ½·quad + t·slack`` and ``D = s·lin − ½s²·quad``.

    Attributes
    ----------
    C : float
        C₀, where the answer was solved.
    quad : float
        q = β₀ᵀKβ₀ = α₀ᵀQα₀ (twice the regularizer ½‖w₀‖²).
    lin : float
        L = −pᵀα₀ (1ᵀα₀ for the C-SVC).
    slack : float
        S = Σₜ u₀ₜξ₀ₜ, the slack cost of (w₀, b₀) at C₀.
    reach : float
        r = minₜ u₀ₜ/α₀ₜ over α₀ₜ > 0: sα₀ is in the box at C = tC₀ for s ≤ t·r.
    """

    C: float
    quad: float
    lin: float
    slack: float
    reach: float

    @property
    def _s_star(self) -> float:
        """The unconstrained maximizer L/q of D(s) (inf when q = 0)."""
        return self.lin / self.quad if self.quad > 0 else math.inf

    def scale(self, C):
        """The factor s of the multipliers at C: min(reach·C/C₀, lin/quad).

        Parameters
        ----------
        C : float or array-like of shape (k,)

        Returns
        -------
        s : ndarray of shape () or (k,)
        """
        t = np.asarray(C, dtype=float) / self.C
        return np.minimum(t * self.reach, self._s_star)

    def objectives(self, C):
        """(P, D) at C: the kept model's primal objective and the rescaled dual's.

        Parameters
        ----------
        C : float or array-like of shape (k,)

        Returns
        -------
        primal, dual : float or ndarray of shape (k,)
        """
        t = np.asarray(C, dtype=float) / self.C
        s = self.scale(C)
        primal = 0.5 * self.quad + t * self.slack
        dual = s * self.lin - 0.5 * s * s * self.quad
        return primal, dual

    def gap(self, C):
        """The bound (P − D)/D on the relative suboptimality of the model at C.

        The quantity ``problem.certify(..., suboptimality=True)`` holds to ε (it
        implies :func:`margin_opt.kkt.relative_gap` ≤ ε too).

        Parameters
        ----------
        C : float or array-like of shape (k,)

        Returns
        -------
        gap : float or ndarray of shape (k,)
            0 where P = D = 0 (w = 0 and no slack: optimal at every C); inf where the
            rescaled dual is not positive.
        """
        primal, dual = self.objectives(C)
        with np.errstate(divide="ignore", invalid="ignore"):
            g = np.where(dual > 0, (primal - dual) / np.where(dual > 0, dual, 1.0), np.inf)
        g = np.where((primal == 0) & (dual == 0), 0.0, g)
        return float(g) if g.ndim == 0 else g

    def interval(self, eps) -> tuple:
        """The interval [C_lo, C_hi] of C where :meth:`gap` ≤ eps, in closed form.

        F(t) = P(t) − (1 + eps)·D(t) is convex in t = C/C₀: a quadratic while
        s = t·reach, linear (slope ``slack`` ≥ 0) once s = lin/quad.

        Parameters
        ----------
        eps : float

        Returns
        -------
        C_lo, C_hi : float
            ``(nan, nan)`` when the bound exceeds eps everywhere; C_hi may be inf.
        """
        e1 = 1.0 + eps
        q, L, S, r, R = self.quad, self.lin, self.slack, self.reach, 0.5 * self.quad
        empty = (math.nan, math.nan)
        if R == 0.0 and S == 0.0 and L == 0.0:          # w = 0, no slack: P = D = 0
            return 0.0, math.inf
        if not (r > 0 and math.isfinite(r)) or L <= 0:
            return empty
        if q <= 0:                                      # F(t) = t(S − e1·r·L)
            return (0.0, math.inf) if S < e1 * r * L else empty
        t_k = L / q / r                                 # where s reaches L/q
        d_star = L * L / (2.0 * q)
        a, b, c = 0.5 * e1 * r * r * q, S - e1 * r * L, R
        disc = b * b - 4.0 * a * c
        roots = None
        if b < 0 and disc >= 0:
            big = -b + math.sqrt(disc)
            roots = (2.0 * c / big, big / (2.0 * a))
        at_kink = R + t_k * S - e1 * d_star
        if at_kink <= 0:                # the kink is covered: lo on the quadratic, hi beyond
            lo = roots[0] if roots is not None else 0.0
            hi = (e1 * d_star - R) / S if S > 0 else math.inf
        elif roots is not None and roots[1] < t_k:
            lo, hi = roots
        else:
            return empty
        return lo * self.C, hi * self.C


@dataclass(frozen=True)
class PathPoint:
    """One answer of a :class:`Path` and the interval of C it covers.

    Attributes
    ----------
    C : float
        Where it was solved.
    solution : Solution
        The answer at C (``solution.raw`` is not kept).
    certificate : Certificate
        Its KKT certificate at C, at the path's ``tol``.
    C_lo, C_hi : float
        The interval where its bound is ≤ (1 − :data:`COVER_MARGIN`)·ε (C_hi may be inf;
        both NaN when the answer does not cover even its own C, which a range path never
        keeps).
    gap_at_C : float
        The bound at C itself (the answer's own gap, in the measure of the bound).
    gap_bound : float
        The largest bound over [C_lo, C_hi] (at one of its ends: the bound is
        quasiconvex in C).
    bound : GapBound
        The numbers the bound is computed from.
    alpha : ndarray of shape (n_variables,)
        The answer's standard-form multipliers α₀.
    beta : ndarray of shape (n_samples,)
        Its coefficients β₀ (f₀ = Kβ₀).
    b : float
        Its intercept b₀.
    screening : Screening or None
        With ``screening=True``, the samples decided at C from the answer the point was
        warm-started from (:func:`margin_opt.problems.screening.screen`), left out of
        its solve; None where none was done (the first point, an SVR, ``screening``
        off).
    """

    C: float
    solution: Solution = field(repr=False)
    certificate: Certificate = field(repr=False)
    C_lo: float
    C_hi: float
    gap_at_C: float
    gap_bound: float
    bound: GapBound = field(repr=False)
    alpha: np.ndarray = field(repr=False)
    beta: np.ndarray = field(repr=False)
    b: float = 0.0
    screening: Screening | None = field(default=None, repr=False)

    def covers(self, C) -> bool:
        """Whether C is in [C_lo, C_hi]."""
        return bool(self.C_lo <= C <= self.C_hi)


class Path:
    """An ε-approximate regularization path over C: answers whose intervals cover a range.

    Made by :meth:`SVMProblem.path <margin_opt.problems.base.KernelProblem.path>` (or
    :func:`regularization_path`); see the module :mod:`margin_opt.problems.path` for
    the bound.

    Parameters
    ----------
    problem : SVMProblem or SVRProblem
        The problem the path is of (not modified; its own C plays no part).
    points : sequence of PathPoint
        In increasing C.
    eps : float
        The accuracy the intervals guarantee.
    C_range : tuple of float
        (C_min, C_max) covered (a range path), or the smallest and largest grid value.
    method : str
        The registry method each point was solved by.
    tol : float
        The accuracy each point was solved and certified to.
    grid : bool, default=False
        The points are a given grid (each solved and certified; not a cover).
    n_solves : int, optional
        Answers solved (a range path may solve predictions it does not keep); default
        ``len(points)``.
    timings : dict, optional
        Seconds: ``solve`` (the points' solve path, certificates included), ``total``.

    Attributes
    ----------
    points : tuple of PathPoint
    eps, tol, method, grid, n_solves, timings, problem
        As given.
    C_min, C_max : float
        ``C_range``.

    Notes
    -----
    ``len(path)`` is the number of points; ``path[k]`` a point; iterating gives the
    points; ``print(path)`` a table of them.

    References
    ----------
    J. Giesen, J. K. Müller, S. Laue and S. Swiercy, "Approximating concavely
    parameterized optimization problems", NIPS 2012.
    """

    def __init__(self, problem, points, eps, C_range, method, tol, *, grid=False,
                 n_solves=None, timings=None):
        self.problem = problem
        self.points = tuple(points)
        self.eps = float(eps)
        self.C_min, self.C_max = (float(c) for c in C_range)
        self.method = method
        self.tol = float(tol)
        self.grid = bool(grid)
        self.n_solves = len(self.points) if n_solves is None else int(n_solves)
        self.timings = dict(timings or {})

    def __len__(self) -> int:
        return len(self.points)

    def __iter__(self):
        return iter(self.points)

    def __getitem__(self, k) -> PathPoint:
        return self.points[k]

    @property
    def C(self) -> np.ndarray:
        """The points' C, ndarray of shape (n_points,)."""
        return np.array([p.C for p in self.points])

    @property
    def intervals(self) -> np.ndarray:
        """The points' [C_lo, C_hi], ndarray of shape (n_points, 2)."""
        return np.array([(p.C_lo, p.C_hi) for p in self.points]).reshape(-1, 2)

    def covers(self, C) -> bool:
        """Whether some point's interval holds C."""
        return any(p.covers(C) for p in self.points)

    def gap_bound(self, C) -> float:
        """The smallest bound at C over the points that cover it (inf if none does).

        Parameters
        ----------
        C : float

        Returns
        -------
        gap : float
            ≤ ε wherever the path covers C.
        """
        C = _check_C_value(C)
        return min((p.bound.gap(C) for p in self.points if p.covers(C)), default=math.inf)

    def point_at(self, C) -> PathPoint:
        """The point whose bound is smallest at C, among those that cover it.

        Raises
        ------
        ValueError
            C ≤ 0 or not finite, or no point covers C.
        """
        C = _check_C_value(C)
        cover = [p for p in self.points if p.covers(C)]
        if not cover:
            raise ValueError(
                f"no point of this path covers C={C:g} (its intervals span "
                f"[{self.points[0].C_lo:.6g}, {self.points[-1].C_hi:.6g}]"
                + (", a grid path: only around its points" if self.grid else "")
                + "); make a path whose range holds it: problem.path(C=(C_min, C_max)).")
        return min(cover, key=lambda p: p.bound.gap(C))

    def solution_at(self, C) -> Solution:
        """The covering answer at C, certified AT C (``solution.certificate``).

        The covering point's model (w₀, b₀: its decision function) with its multipliers
        rescaled to C (s·α₀, the best feasible point on the ray of α₀), made and
        certified by a copy of the problem at C: ``certify(solution, tol=eps,
        suboptimality=True)`` checks that the model is feasible, the multipliers are
        exactly feasible at C, and (P − D)/D ≤ ε, so that the model's objective at C is
        within a relative ε of the optimum (weak duality).  The bound is not read from
        the path: the certificate computes P and D anew from the arrays.

        Parameters
        ----------
        C : float

        Returns
        -------
        solution : Solution
            ``method`` that of the path, ``status`` ``"optimal"`` when the certificate
            holds (else ``"optimal_inaccurate"``), ``dual_coef`` and ``intercept`` the
            point's model (β₀, b₀), ``certificate`` the accuracy certificate at C.

        Raises
        ------
        ValueError
            C ≤ 0, not finite, or outside every interval of the path.
        """
        point = self.point_at(C)
        C = float(C)
        at = problem_at(self.problem, C)
        s = float(point.bound.scale(C))
        alpha = np.minimum(s * point.alpha, at._qp.upper)    # in the box, to rounding
        w = at.data.weights(point.beta)          # the point's w, in features() coordinates
        sol = at.solution_from_primal(
            w, point.b, alpha=alpha, beta=point.beta, method=self.method,
            backend=f"ε-path: the answer at C={point.C:.6g}, multipliers × {s:.6g}",
            status="optimal", message=f"the model of the point at C={point.C:.6g} "
            f"(bound {point.bound.gap(C):.3g} at C={C:.6g})")
        cert = at.certify(sol, tol=self.eps, suboptimality=True)
        if not cert.ok:
            sol.status = "optimal_inaccurate"
        return sol.record_certificate(cert)

    # ------------------------------------------------------------------ display
    _HEAD = ("k", "C", "covers C in", "gap at C", "bound", "n_SV", "iter", "status")

    def _rows(self):
        rows = []
        for k, p in enumerate(self.points):
            sol = p.solution
            rows.append((str(k), f"{p.C:.6g}", f"[{p.C_lo:.6g}, {p.C_hi:.6g}]",
                         f"{p.gap_at_C:.1e}", f"{p.gap_bound:.1e}", str(sol.support_.size),
                         "" if sol.n_iter is None else str(sol.n_iter), sol.status))
        return rows

    def _title(self) -> str:
        what = "grid" if self.grid else "ε-path"
        name = getattr(self.problem, "title", type(self.problem).__name__)
        span = f"C in [{self.C_min:.6g}, {self.C_max:.6g}]"
        kernel = "explicit feature map φ" if self.problem.feature_map is not None else \
            self.problem.kernel.describe()
        return (f"{what} of the {name} (n = {self.problem.n_samples}, kernel {kernel}), "
                f"{span}, eps = {self.eps:g}: "
                f"{_count(len(self), 'point')} ({_count(self.n_solves, 'solve')} by "
                f"{self.method}, tol "
                f"{self.tol:g}, {self.timings.get('total', math.nan):.3g} s)")

    def __repr__(self) -> str:
        kind = "grid" if self.grid else "range"
        return (f"Path({_count(len(self), 'point')}, {kind} C in [{self.C_min:.6g}, "
                f"{self.C_max:.6g}], eps={self.eps:g}, method={self.method!r}, "
                f"n_solves={self.n_solves})")

    def __str__(self) -> str:
        rows = self._rows()
        if len(rows) > 2 * SHOWN + 1:
            rows = rows[:SHOWN] + [("…",) + ("",) * 7] + rows[-SHOWN:]
        table = [self._HEAD, *rows]
        widths = [max(len(r[j]) for r in table) for j in range(len(self._HEAD))]
        lines = ["  ".join(c.rjust(w) for c, w in zip(r, widths, strict=True)) for r in table]
        return "\n".join([self._title(), *lines])

    def _repr_html_(self) -> str:
        """The table for a notebook (:func:`margin_opt.display.html_table`)."""
        return html_table(self._HEAD, self._rows(), caption=self._title())


# ---------------------------------------------------------------------- building
def problem_at(problem, C):
    """A copy of ``problem`` at another C, sharing its data (the original is unchanged).

    The constructors validate the data and build the kernel data (its matrix, the
    factor a kernel model's primal point is read through) anew; none of it depends on
    C, so the copy shares it read-only and takes only C's own checks.

    Parameters
    ----------
    problem : SVMProblem or SVRProblem
    C : float
        Finite, > 0.

    Returns
    -------
    problem : the same type

    Raises
    ------
    ValueError
        C ≤ 0, not finite, or C·weights above the solvers' range.
    """
    C = check_C(C)
    if not math.isfinite(C):
        raise ValueError("a path's C must be finite (the hard margin has no box to scale).")
    new = copy.copy(problem)
    new.__dict__.pop("_qp_cache", None)            # the box of the standard form is C's
    new.C = C
    new.C_i = check_box_bounds(C, problem.sample_weight)
    if "hard_margin" in problem.__dict__:
        new.hard_margin = False
    return new


def _count(k, noun) -> str:
    """``"1 point"``, ``"3 points"``."""
    return f"{k} {noun}{'' if k == 1 else 's'}"


def _check_C_value(C) -> float:
    try:
        C = float(C)
    except (TypeError, ValueError):
        raise ValueError(f"C must be a positive number, got {C!r}.") from None
    if not (math.isfinite(C) and C > 0):
        raise ValueError(f"C must be a positive finite number, got {C!r}.")
    return C


def _check_eps(eps) -> float:
    if isinstance(eps, bool) or not isinstance(eps, (int, float, np.number)):
        raise ValueError(f"eps must be a number in (0, 1), got {eps!r}.")
    eps = float(eps)
    if not 0.0 < eps < 1.0:
        raise ValueError(f"eps must be in (0, 1) (a relative accuracy, e.g. 1e-6), got {eps!r}: "
                         + ("eps ≤ 0 asks for the exact path, which has a point at every "
                            "breakpoint; use a small eps instead." if eps <= 0 else
                            "eps ≥ 1 certifies nothing (an objective within 100 % of the "
                            "optimum)."))
    return eps


def _check_range(C):
    """``(grid, values)``: a tuple (C_min, C_max) is a range, a list or array a grid."""
    if isinstance(C, tuple):
        if len(C) != 2:
            raise ValueError(f"C=(C_min, C_max) takes two values, got {len(C)}; pass a list "
                             "for a grid of C values.")
        lo, hi = (_check_C_value(c) for c in C)
        if lo >= hi:
            raise ValueError(f"C_min must be below C_max, got C=({lo:g}, {hi:g}); pass a "
                             "list [C] to solve at one value.")
        return False, (lo, hi)
    if isinstance(C, (list, np.ndarray)):
        values = np.unique([_check_C_value(c) for c in np.ravel(np.asarray(C, dtype=object))])
        if values.size == 0:
            raise ValueError("the grid of C values is empty.")
        return True, tuple(float(c) for c in values)
    raise ValueError(f"C must be a tuple (C_min, C_max) (a range to cover) or a list of "
                     f"values (a grid), got {type(C).__name__}.")


def _reading(at, sol):
    """(GapBound, α₀, β₀, b₀) of an answer ``sol`` to the problem ``at`` (at its C)."""
    qp = at._qp
    alpha = np.array(sol.variables.standard_alpha, dtype=float)
    beta = at.coefficients(alpha)
    f0 = at.data.combination(beta)
    b = sol.b if at.fit_intercept else 0.0
    xi = np.maximum(0.0, -at._margins(f0 + b))
    finite = np.isfinite(qp.upper)
    pos = alpha > 0
    # α₀ = 0 (an ε-SVR whose tube holds every point): any s will do, s = t
    reach = float(np.min(qp.upper[pos] / alpha[pos])) if pos.any() else 1.0
    bound = GapBound(C=at.C, quad=float(beta @ f0), lin=-float(qp.p @ alpha),
                     slack=float(qp.upper[finite] @ xi[finite]), reach=reach)
    return bound, alpha, beta, b


class _Builder:
    """Solves and reads the points of one path (the solve path's options fixed)."""

    def __init__(self, problem, eps, method, tol, fallback, options, screening=False):
        self.problem, self.eps, self.method = problem, eps, method
        spec = self.spec = get_method(method, problem.model)
        self.tol = eps * POINT_TOL if tol is None else check_positive(tol, "tol")
        self.fallback = fallback
        self.options = dict(options)
        self.warm = (spec.route == "backend" and spec.standard_form == "DualQP"
                     and "alpha0" in inspect.signature(spec.load()).parameters
                     and "alpha0" not in options)
        self.stopping = spec.stopping is not None
        # screening reduces the DualQP a warm-startable backend is run on (the C-SVC's)
        self.screening = bool(screening) and self.warm and problem.model == "svc"
        self.cover_eps = eps * (1.0 - COVER_MARGIN)
        self.n_solves = 0
        self.seconds = 0.0

    def solve(self, C, start=None) -> PathPoint:
        """The point at C, warm-started from the point ``start`` where the method can."""
        if self.n_solves >= MAX_SOLVES:
            raise RuntimeError(f"the path has solved {MAX_SOLVES} answers without covering "
                               "its range: use a larger eps or a narrower range.")
        t0 = time.perf_counter()
        at = problem_at(self.problem, C)
        opts = dict(self.options)
        if self.stopping:
            box = float(np.max(at.C_i, initial=0.0))
            opts = {**stopping_options(self.method, self.tol, box), **opts}
        if self.warm and start is not None:
            scaled = np.clip(start.alpha * (C / start.C), 0.0, at._qp.upper)
            opts["alpha0"] = at.warm_start(scaled)
        scr = screen(self.problem, start, C) if self.screening and start is not None \
            else None
        if scr is not None and scr.n_screened:
            sol = self._reduced(at, scr, opts)
        else:
            sol = at.solve(self.method, certify=self.tol, fallback=self.fallback, **opts)
        sol.raw = None                        # the backend's arrays: not kept on a path
        bound, alpha, beta, b = _reading(at, sol)
        lo, hi = bound.interval(self.cover_eps)
        ends = [bound.gap(c) for c in (lo, hi) if 0 < c < math.inf]
        if hi == math.inf:
            ends.append(bound.gap(C * 1e12))
        point = PathPoint(C=float(C), solution=sol, certificate=sol.certificate, C_lo=lo,
                          C_hi=hi, gap_at_C=bound.gap(C),
                          gap_bound=max(ends, default=math.nan), bound=bound, alpha=alpha,
                          beta=beta, b=float(b), screening=scr)
        self.n_solves += 1
        self.seconds += time.perf_counter() - t0
        return point

    def _reduced(self, at, scr, opts):
        """The answer at C from the DualQP reduced to the unscreened samples, certified
        on the FULL problem at C; the full solve path (warm-started from it) where that
        certificate fails.

        The screened multipliers are fixed (αᵢ = 0, or αᵢ = uᵢ for the set U):
        ``p_F ← p_F + Q_{F,U}α_U`` and ``Δ ← Δ − y_Uᵀα_U``; the backend runs on the free
        variables F (``index`` = their data rows), and its b is the full problem's (the
        same equality, the same multiplier)."""
        qp = at.to_standard_form()
        free, up = scr.free, scr.at_upper
        alpha = np.zeros(qp.n_variables)
        alpha[up] = qp.upper[up]
        meta = dict(method=self.method, formulation="DualQP",
                    backend=f"{self.spec.name} on the {free.size} unscreened of "
                            f"{qp.n_variables} variables")
        with one_blas_thread():
            b, sol = None, None
            if free.size:
                p = qp.p[free].copy()
                if up.size:
                    rows = qp.kernel_rows(up)[:, free]          # K[U, F]
                    p += qp.y[free] * (rows.T @ (qp.y[up] * alpha[up]))
                reduced = DualQP(X=qp.X, kernel=qp.kernel, y=qp.y[free], p=p,
                                 upper=qp.upper[free], delta=qp.delta - float(qp.y[up] @ alpha[up]),
                                 equality=qp.equality, index=qp.data_index[free], gram=qp.gram)
                ropts = dict(opts)
                if "alpha0" in ropts:
                    ropts["alpha0"] = np.asarray(ropts["alpha0"], dtype=float)[free]
                try:
                    res = self.spec.load()(reduced, **ropts)
                except ValueError:           # e.g. an infeasible Δ: only a wrong screening
                    res = None
                if res is not None and np.all(np.isfinite(res.x)):
                    alpha[free] = res.x
                    b = float(res.b) if np.isfinite(res.b) else None
                    meta.update(status=res.status, n_iter=res.get("nit"),
                                message=res.get("message", ""))
                else:
                    alpha = None
            if alpha is not None:
                meta.setdefault("status", "optimal")
                sol = at.solution_from_standard(alpha, b, **meta)
                cert = at.certify(sol, tol=self.tol, **self.spec.certify_options())
                sol.record_certificate(cert)
        if sol is not None and sol.certificate.ok:
            return sol
        if sol is not None and self.warm:
            opts = {**opts, "alpha0": at.warm_start(sol.variables.standard_alpha)}
        return at.solve(self.method, certify=self.tol, fallback=self.fallback, **opts)

    def own(self, point) -> PathPoint:
        """``point``, or NotCertifiedError when it does not cover its own C."""
        if not point.covers(point.C):
            raise NotCertifiedError(
                f"the answer at C={point.C:.6g} has a gap bound of {point.gap_at_C:.3g} at its "
                f"own C, above eps={self.eps:g}: it covers no interval. Solve the points more "
                f"accurately (tol below {self.tol:g}) or use a larger eps.")
        return point


def _covered(points, start):
    """The end of the covered range [start, end] by the union of the points' intervals."""
    end = start
    for p in sorted(points, key=lambda p: p.C_lo):
        if p.C_lo > end:
            break
        end = max(end, p.C_hi)
    return end


def _fewest(points, C_min, C_max):
    """The fewest points whose intervals cover [C_min, C_max] (greedy: each step the one
    reaching furthest among those that start within the covered range)."""
    chosen, end = [], C_min
    while True:
        best = max((p for p in points if p.C_lo <= end), key=lambda p: p.C_hi)
        if best.C_hi <= end:            # cannot happen after _cover; never loop on it
            raise RuntimeError(f"the points do not cover [{C_min:g}, {C_max:g}] beyond "
                               f"{end:g}.")
        chosen.append(best)
        end = best.C_hi
        if end >= C_max:
            return sorted(chosen, key=lambda p: p.C)


def _nearest(points, C):
    """The point nearest to C in log C (the warm start of a solve at C)."""
    return min(points, key=lambda p: abs(math.log(p.C / C)))


def _left_width(point) -> float:
    """ln(C/C_lo): the width of a point's interval below its C, in log C."""
    return math.log(point.C / point.C_lo) if point.C_lo > 0 else math.inf


def _cover(build, C_min, C_max):
    """Every point solved to cover [C_min, C_max] (predictions that fell short included)."""
    first = build.own(build.solve(C_min))
    points = [first]
    width = prev = _left_width(first)
    end = _covered(points, C_min)
    while end < C_max:
        guess = PREDICT * width * min(1.0, width / prev)
        for attempt in range(TRIES + 1):
            C = min(end * math.exp(guess), C_max) if attempt < TRIES else end
            point = build.own(build.solve(C, _nearest(points, C)))
            points.append(point)
            left = _left_width(point)
            if point.C_lo <= end:
                break
            guess = PREDICT * left          # the local width, read where it fell short
        prev, width = width, left
        end = _covered(points, C_min)
    return points


def regularization_path(problem, C, *, eps=1e-6, method="smo", tol=None, fallback=True,
                        screening=False, **options) -> Path:
    """An ε-approximate regularization path of a C-SVC or ε-SVR over C.

    Parameters
    ----------
    problem : SVMProblem or SVRProblem
        Its data, kernel, weights and ε-tube; its own C is not used and not modified.
    C : tuple (C_min, C_max) or list of float
        A range to cover (0 < C_min < C_max < inf), or a grid: each value solved and
        certified (intervals reported, not a cover).
    eps : float, default=1e-6
        The relative accuracy guaranteed at every C of the range: ``path.solution_at(C)``
        is within a relative eps of the optimum at C, certified.  In (0, 1).
    method : str, default="smo"
        The registry method each point is solved by (``problem.solve(method)``);
        warm-started from the nearest point where the backend takes ``alpha0``.
    tol : float, optional
        The accuracy each point is solved and certified to (its KKT certificate at its
        own C); default ``eps/10``.  Must leave each point's own gap below eps.
    fallback : bool or FallbackOptions, default=True
        The solve path's repair of a point that does not certify (else NotCertifiedError).
    screening : bool, default=False
        C-SVC with a warm-startable DualQP backend (SMO): screen each point's samples
        from the answer it is warm-started from
        (:func:`margin_opt.problems.screening.screen`, safe), solve the DualQP reduced
        to the others, and certify the answer on the full problem at C (the full solve
        path where that fails).  Off by default: the path's answers and timings stay
        those measured in ``docs/paths.md``; the screened counts are in
        ``point.screening``.
    **options
        The backend's options (e.g. ``cache_size``; the stopping options
        :func:`margin_opt.methods.stopping_options` gives for ``tol`` are the defaults).

    Returns
    -------
    path : Path

    Raises
    ------
    ValueError
        A model other than the C-SVC and the ε-SVR (the squared losses' dual depends on
        C beyond the box), C_min ≤ 0, C_min ≥ C_max, a C that is not finite, eps
        outside (0, 1), an unknown method.
    NotCertifiedError
        A point that does not certify at ``tol``, or whose own gap exceeds eps.

    References
    ----------
    J. Giesen, M. Jaggi and S. Laue, "Approximating parameterized convex optimization
    problems", ESA 2010 / ACM Trans. Algorithms 9(1), 2012.
    J. Giesen, J. K. Müller, S. Laue and S. Swiercy, "Approximating concavely
    parameterized optimization problems", NIPS 2012.
    """
    t0 = time.perf_counter()
    if getattr(problem, "model", None) not in MODELS:
        raise ValueError(
            f"ε-paths over C are made for the C-SVC (SVMProblem) and the ε-SVR (SVRProblem), "
            f"whose dual depends on C only through its box; not for "
            f"{type(problem).__name__} (model {getattr(problem, 'model', None)!r}).")
    eps = _check_eps(eps)
    grid, values = _check_range(C)
    build = _Builder(problem, eps, method, tol, fallback, options, screening)
    if grid:
        points = []
        for c in values:
            points.append(build.solve(c, points[-1] if points else None))
        kept, span = points, (values[0], values[-1])
    else:
        points = _cover(build, *values)
        kept, span = _fewest(points, *values), values
    return Path(problem, kept, eps, span, method, build.tol, grid=grid,
                n_solves=build.n_solves,
                timings={"solve": build.seconds, "total": time.perf_counter() - t0})
