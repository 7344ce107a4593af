"""Pictures of an ε-approximate path over C (:class:`~margin_opt.problems.path.Path`).

- :func:`plot_coefficient_path`: each multiplier αᵢ of the points' certified answers
  against C on a log axis (the ε-SVR: aᵢ − âᵢ), in LIBSVM's scale or divided by C,
  as in Hastie, Rosset, Tibshirani and Zhu (2004);
- :func:`plot_support_path`: the support vectors against C, free (0 < α < C) and at
  the bound (α = C);
- :func:`plot_margin_path`: the geometric margin 1/‖w‖ = 1/√(βᵀKβ) against C;
- :func:`plot_cover`: the certificate of the cover: each point's interval of C, its
  bound on the relative suboptimality over that interval, the path's bound at every C
  and the ε line;
- :func:`plot_path`: the four side by side in one figure.

What is drawn is read from the path's points and nothing else (:func:`path_series`),
so that a figure shows the answers the path certified.  The support vectors are the
solutions' ``support_`` (αᵢ ≠ 0); one is at its bound as the points' certificates
count it, αₜ ≥ (1 − τ)uₜ with τ = min(√tol, 1/2) at the path's ``tol``
(:func:`margin_opt.kkt.category_threshold`), and free otherwise.

References
----------
T. Hastie, S. Rosset, R. Tibshirani and J. Zhu, "The entire regularization path for
the support vector machine", JMLR 5, 2004 (the multipliers against the
regularization parameter, the margin and the elbow along the path).
J. Giesen, J. K. Müller, S. Laue and S. Swiercy, "Approximating concavely
parameterized optimization problems", NIPS 2012 (the ε-path and its intervals).
"""

from __future__ import annotations

import io
import math

import numpy as np

from ..kkt import box_categories, category_threshold
from ..validation import check_box_bounds
from . import axes_for, class_label, require_matplotlib

__all__ = ["path_series", "plot_coefficient_path", "plot_support_path", "plot_margin_path",
           "plot_cover", "plot_path"]

#: The scales of :func:`plot_coefficient_path`: αᵢ/C (in [0, 1], Hastie et al.'s) or
#: LIBSVM's αᵢ (in [0, Cᵢ]).
SCALES = ("C", "libsvm")
#: Gaps drawn on the log axis of :func:`plot_cover` are clipped below at this value
#: (an answer exact to rounding may have a bound of 0 at its own C).
GAP_FLOOR = 1e-16
#: The C axis shows the range and the intervals' ends beyond it, up to this factor.
WIDEN = 1.25
#: Where the path's bound is drawn: this many values of C per decade.
PER_DECADE = 400
#: Resolution of the saved figures (dots per inch).
DPI = 110
#: Colours of a saved PNG's palette: the hundreds of antialiased lines of the
#: multipliers make a full-colour PNG of ~0.5 MB, the palette one a quarter of it
#: and indistinguishable.
PALETTE = 256
#: Pillow's fast octree quantizer (``Image.Quantize.FASTOCTREE``; the number works
#: on every Pillow matplotlib accepts).
FAST_OCTREE = 2
_CLASS_COLOR = {-1.0: "C0", 1.0: "C3"}


def path_series(path) -> dict:
    """The numbers the figures draw, one entry per point of ``path`` (in increasing C).

    Parameters
    ----------
    path : Path
        Of a C-SVC or an ε-SVR (``problem.path(...)``).

    Returns
    -------
    series : dict of str to ndarray
        ``C`` (n_points,); ``coef`` (n_points, n_samples): αᵢ of each point's solution
        (the ε-SVR: aᵢ − âᵢ), LIBSVM's scale; ``n_support`` (the solution's
        ``support_``: αᵢ ≠ 0), ``n_at_bound`` (those at the bound, α = C, as the
        point's certificate counts them) and ``n_free`` (the others, 0 < α < C), ints;
        ``margin``: 1/‖w‖ = 1/√(βᵀKβ) (inf where w = 0); ``C_lo``, ``C_hi``,
        ``gap_at_C``, ``gap_bound``: each point's interval, its bound at its own C
        and its largest bound over the interval (NaN where a grid point covers no
        interval); ``certified``: bool, each point's certificate holds.
    """
    problem = path.problem
    tau = category_threshold(path.tol)
    rows = {k: [] for k in ("C", "coef", "n_support", "n_free", "n_at_bound", "margin",
                            "C_lo", "C_hi", "gap_at_C", "gap_bound", "certified")}
    for p in path.points:
        sol = p.solution
        alpha = np.asarray(p.alpha, dtype=float)
        upper = check_box_bounds(p.C, problem.sample_weight)
        upper = np.tile(upper, alpha.size // upper.size)       # the ε-SVR: [a; â]
        # at the bound as the certificate counts it, per sample (the ε-SVR: a or â)
        at_u = box_categories(alpha, upper, tau)[2].reshape(-1, problem.n_samples)
        support = np.zeros(problem.n_samples, dtype=bool)
        support[np.asarray(sol.support_, dtype=int)] = True
        at_bound = support & at_u.any(axis=0)
        coef = sol.alpha if problem.model == "svc" else sol.dual_coef[0]
        quad = p.bound.quad
        rows["C"].append(p.C)
        rows["coef"].append(np.asarray(coef, dtype=float))
        rows["n_support"].append(int(support.sum()))
        rows["n_free"].append(int((support & ~at_bound).sum()))
        rows["n_at_bound"].append(int(at_bound.sum()))
        rows["margin"].append(1.0 / math.sqrt(quad) if quad > 0 else math.inf)
        rows["C_lo"].append(p.C_lo)
        rows["C_hi"].append(p.C_hi)
        rows["gap_at_C"].append(p.gap_at_C)
        rows["gap_bound"].append(p.gap_bound)
        rows["certified"].append(p.certificate is not None and bool(p.certificate.ok))
    out = {k: np.array(v) for k, v in rows.items()}
    out["coef"] = np.array(rows["coef"], dtype=float).reshape(len(path), -1)
    return out


def _save(fig, file):
    """Save to ``file``; a ``.png`` with a palette of :data:`PALETTE` colours."""
    if file is None:
        return fig
    fig.tight_layout()
    if not str(file).lower().endswith(".png"):
        fig.savefig(file, dpi=DPI)
        return fig
    from PIL import Image  # matplotlib's own dependency

    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=DPI)
    buf.seek(0)
    with Image.open(buf) as im:
        im.convert("RGB").quantize(PALETTE, method=FAST_OCTREE).save(file, optimize=True)
    return fig


def _name(path) -> str:
    return "C-SVC" if path.problem.model == "svc" else "ε-SVR"


def _xlim(path):
    """The C axis: the range, widened to the intervals' ends (at most by WIDEN)."""
    ends = path.intervals[np.all(np.isfinite(path.intervals), axis=1)]
    lo = min(path.C_min, float(np.min(ends[:, 0], initial=path.C_min)))
    hi = max(path.C_max, float(np.max(ends[:, 1], initial=path.C_max)))
    return max(lo, path.C_min / WIDEN), min(hi, path.C_max * WIDEN)


def _log_C(ax, path):
    ax.set_xscale("log")
    ax.set_xlim(*_xlim(path))
    ax.set_xlabel("C (log scale)")
    ax.grid(True, which="major", color="0.9", lw=0.6)


def plot_coefficient_path(path, *, scale="C", ax=None, file=None, title=None):
    """Each multiplier of the path's answers against C: the regularization path.

    One line per sample that is a support vector at some point of the path, through
    the points' certified answers (the samples with α = 0 everywhere are not drawn);
    a C-SVC's lines are coloured by class.  At small C every multiplier sits at its
    bound; as C grows they leave it for the margin (free) or for 0.

    Parameters
    ----------
    path : Path
    scale : {"C", "libsvm"}, default="C"
        ``"C"``: αᵢ/C, in [0, 1] (the scale of Hastie et al.'s figure, whose
        multipliers are in [0, 1]); ``"libsvm"``: αᵢ, in [0, Cᵢ].  The ε-SVR's
        coefficient aᵢ − âᵢ is in [−1, 1] or [−Cᵢ, Cᵢ].
    ax : matplotlib Axes, optional
    file : str or path-like, optional
        Save the figure there (PNG by extension).
    title : str, optional

    Returns
    -------
    fig : matplotlib Figure
        Sample i's line has the gid ``"coef-i"``.

    Raises
    ------
    ValueError
        An unknown ``scale``.
    ImportError
        Without matplotlib (the ``plot`` extra).

    References
    ----------
    T. Hastie, S. Rosset, R. Tibshirani and J. Zhu, "The entire regularization path for
    the support vector machine", JMLR 5, 2004, Figure 6 (αᵢ against λ = 1/C).
    """
    if scale not in SCALES:
        raise ValueError(f"scale must be one of {SCALES} (αᵢ/C or LIBSVM's αᵢ), got "
                         f"{scale!r}.")
    ax = axes_for(ax, (7, 4.5))
    s = path_series(path)
    C, coef = s["C"], s["coef"]
    y = coef / C[:, None] if scale == "C" else coef
    svc = path.problem.model == "svc"
    moving = np.flatnonzero(np.any(coef != 0, axis=0))
    for i in moving:
        color = _CLASS_COLOR[float(path.problem.y[i])] if svc else "C0"
        ax.plot(C, y[:, i], color=color, lw=0.6, alpha=0.45, gid=f"coef-{i}")
    if svc:
        for label, color in _CLASS_COLOR.items():
            cls = path.problem.classes_[int(label > 0)]
            ax.plot([], [], color=color, lw=1.2,
                    label=f"y = {'+1' if label > 0 else '−1'} (class {class_label(cls)})")
        ax.legend(fontsize=8, loc="best")
    what = "αᵢ" if svc else "aᵢ − âᵢ"
    ax.set_ylabel((f"{what} / C" if svc else f"({what}) / C") if scale == "C"
                  else f"{what} (LIBSVM scale)")
    _log_C(ax, path)
    ax.set_title(title or f"{what} of {moving.size} of the {coef.shape[1]} samples "
                 f"along the path ({len(path)} answers)", fontsize=10)
    return _save(ax.figure, file)


def plot_support_path(path, *, ax=None, file=None, title=None):
    """The support vectors of the path's answers against C: free and at the bound.

    Parameters
    ----------
    path : Path
    ax : matplotlib Axes, optional
    file : str or path-like, optional
    title : str, optional

    Returns
    -------
    fig : matplotlib Figure
        Lines with gids ``"n_support"``, ``"n_free"``, ``"n_at_bound"``.
    """
    ax = axes_for(ax, (7, 4.5))
    s = path_series(path)
    C = s["C"]
    svc = path.problem.model == "svc"
    free, bound = ("0 < α < C", "α = C") if svc else \
        ("on an edge, 0 < a or â < C", "outside, a or â = C")
    ax.plot(C, s["n_support"], "k-", marker=".", ms=4, lw=1.2,
            label="all, α ≠ 0" if svc else "all, a − â ≠ 0",
            gid="n_support")
    ax.plot(C, s["n_at_bound"], "C2-", marker="s", ms=3, lw=1.0, label=f"at the bound, {bound}",
            gid="n_at_bound")
    ax.plot(C, s["n_free"], "C1-", marker="o", ms=3, lw=1.0, label=f"free, {free}",
            gid="n_free")
    ax.set_ylim(bottom=0)
    ax.set_ylabel("support vectors")
    ax.legend(fontsize=8, loc="best")
    _log_C(ax, path)
    ax.set_title(title or "Support vectors along the path", fontsize=10)
    return _save(ax.figure, file)


def plot_margin_path(path, *, ax=None, file=None, title=None):
    """The geometric margin 1/‖w‖ of the path's answers against C (log–log).

    ‖w‖² = βᵀKβ with the kernel (β the answer's coefficients, f = Kβ + b): the margin
    shrinks as C grows and fewer margin violations are paid for.

    Parameters
    ----------
    path : Path
    ax : matplotlib Axes, optional
    file : str or path-like, optional
    title : str, optional

    Returns
    -------
    fig : matplotlib Figure
        The line has the gid ``"margin"``.
    """
    ax = axes_for(ax, (7, 4.5))
    s = path_series(path)
    ax.plot(s["C"], s["margin"], "C4-", marker=".", ms=4, lw=1.2, gid="margin")
    ax.set_yscale("log")
    ax.set_ylabel("1/‖w‖ = 1/√(βᵀKβ)")
    _log_C(ax, path)
    what = "Margin 1/‖w‖" if path.problem.model == "svc" else "1/‖w‖ (the flatness of f)"
    ax.set_title(title or f"{what} along the path", fontsize=10)
    return _save(ax.figure, file)


def plot_cover(path, *, ax=None, file=None, title=None):
    """The cover's certificate: each point's interval of C and its bounds, against C.

    Drawn on a log–log plane: each point's bound (P − D)/D on the relative
    suboptimality of its model at every C of its interval (thin; it reaches ε at the
    interval's ends), the point's own gap at its C (dots), its worst bound over its
    interval (a step over the interval), the path's bound at every C (the smallest
    over the points that cover C: what ``path.solution_at(C)`` is certified to; bold)
    and ε (dashed).  Along the bottom, the intervals themselves on two alternating
    rows, so that their overlaps show.

    Parameters
    ----------
    path : Path
    ax : matplotlib Axes, optional
    file : str or path-like, optional
    title : str, optional

    Returns
    -------
    fig : matplotlib Figure
        Gids: ``"worst_bound"`` (a LineCollection, one segment per point:
        (C_lo, gap_bound) to (C_hi, gap_bound)), ``"gap_at_C"``, ``"path_bound"``,
        ``"eps"``, ``"intervals"``.
    """
    ax = axes_for(ax, (7, 4.5))
    s = path_series(path)
    lo, hi = path.C_min, path.C_max
    has = np.isfinite(s["C_lo"]) & np.isfinite(s["gap_bound"])
    # the intervals' ends, as far as the axis shows (C_hi may be inf, C_lo 0)
    C_lo = np.clip(np.where(has, s["C_lo"], np.nan), lo / WIDEN, hi * WIDEN)
    C_hi = np.clip(np.where(has, s["C_hi"], np.nan), lo / WIDEN, hi * WIDEN)
    gaps = s["gap_at_C"][np.isfinite(s["gap_at_C"]) & (s["gap_at_C"] > 0)]
    # log y: a strip below the lowest gap for the intervals' bars, room above ε for
    # the legend
    low = math.log10(max(float(np.min(gaps, initial=path.eps / 10)), GAP_FLOOR))
    span = max(math.log10(path.eps) - low, 1.0)
    bottom, top = 10.0 ** (low - 0.18 * span), 10.0 ** (math.log10(path.eps) + 0.42 * span)
    for k, p in enumerate(path.points):
        if not has[k]:
            continue
        c = np.geomspace(C_lo[k], C_hi[k], 60)
        ax.plot(c, np.maximum(p.bound.gap(c), bottom), color=f"C{k % 2}", lw=0.6,
                alpha=0.6)
    ax.plot([], [], color="C0", lw=0.6, label="a point's bound over its interval")
    ax.plot([], [], color="C0", lw=3, label="the intervals (bars, two rows)")
    ax.hlines(s["gap_bound"][has], C_lo[has], C_hi[has], colors="C2", lw=1.6,
              label="its worst bound (the table's 'bound')", gid="worst_bound")
    grid = np.union1d(np.geomspace(lo, hi, max(2, int(PER_DECADE * math.log10(hi / lo)) + 1)),
                      s["C"][(s["C"] >= lo) & (s["C"] <= hi)])
    env = np.full(grid.shape, np.inf)          # path.gap_bound at each C of the grid
    for p in path.points:
        at = (grid >= p.C_lo) & (grid <= p.C_hi)
        env[at] = np.minimum(env[at], p.bound.gap(grid[at]))
    ax.plot(grid, np.maximum(env, bottom), "k-", lw=1.6, label="the path's bound at C",
            gid="path_bound")
    ax.plot(s["C"], np.maximum(s["gap_at_C"], bottom), "ko", ms=3,
            label="a point's gap at its own C", gid="gap_at_C")
    ax.axhline(path.eps, color="C3", ls="--", lw=1.2, label=f"ε = {path.eps:g}", gid="eps")
    ax.set_yscale("log")
    ax.set_ylim(bottom, top)
    # the intervals, along the bottom (y in axes coordinates)
    rows = np.where(np.arange(len(path)) % 2 == 0, 0.035, 0.075)[has]
    ax.hlines(rows, C_lo[has], C_hi[has], colors=np.array(["C0", "C1"])[np.arange(
              len(path)) % 2][has], lw=3, transform=ax.get_xaxis_transform(),
              gid="intervals")
    ax.set_ylabel("bound on (P − D)/D")
    _log_C(ax, path)
    ax.legend(fontsize=7, loc="upper left", ncol=2)
    what = "grid of" if path.grid else "cover by"
    ax.set_title(title or f"Certified {what} {len(path)} intervals (bars), ε = {path.eps:g}",
                 fontsize=10)
    return _save(ax.figure, file)


def plot_path(path, *, scale="C", file=None, title=None):
    """The path in one figure: multipliers, support vectors, margin and cover against C.

    Four panels sharing the log axis of C: :func:`plot_coefficient_path`,
    :func:`plot_support_path`, :func:`plot_margin_path` and :func:`plot_cover`.

    Parameters
    ----------
    path : Path
        Of a C-SVC or an ε-SVR.
    scale : {"C", "libsvm"}, default="C"
        The multipliers' scale (:func:`plot_coefficient_path`).
    file : str or path-like, optional
        Save the figure there (PNG by extension).
    title : str, optional
        The figure's title (default: the model, data size, kernel, range and ε).

    Returns
    -------
    fig : matplotlib Figure

    Raises
    ------
    ValueError
        An unknown ``scale``.
    ImportError
        Without matplotlib (the ``plot`` extra).
    """
    plt = require_matplotlib()
    fig, axes = plt.subplots(2, 2, figsize=(12, 8))
    plot_coefficient_path(path, scale=scale, ax=axes[0, 0])
    plot_support_path(path, ax=axes[0, 1])
    plot_margin_path(path, ax=axes[1, 0])
    plot_cover(path, ax=axes[1, 1])
    problem = path.problem
    kernel = "explicit φ" if problem.feature_map is not None else problem.kernel.describe()
    fig.suptitle(title or f"ε-path of the {_name(path)} (n = {problem.n_samples}, kernel "
                 f"{kernel}), C in [{path.C_min:g}, {path.C_max:g}], ε = {path.eps:g}: "
                 f"{len(path)} certified answers", fontsize=11)
    return _save(fig, file)
