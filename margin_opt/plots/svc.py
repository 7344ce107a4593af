"""Pictures of a C-SVC solution: the decision boundary in 2-D, the KKT table in any dimension.

- :func:`plot_decision_boundary`: for two features and any kernel, the boundary
  f(x) = 0 (solid), the margins f(x) = ±1 (dashed), the support vectors ringed (free,
  0 < α < C, and bounded, α = C, drawn differently) and the margin violators
  (yf(x) < 1) marked.
- :func:`plot_margins_vs_alpha`: for any number of features, the functional margins
  yᵢf(xᵢ) against αᵢ/Cᵢ with the three categories of the support-vector table and the
  band each must lie in (α = 0 ⇒ yf ≥ 1, 0 < α < C ⇒ yf = 1, α = C ⇒ yf ≤ 1): the
  certificate's table as a picture.

Points are put in categories as :meth:`SVMProblem.certify` puts them: αᵢ counts as 0
when αᵢ ≤ τ·Cᵢ and as Cᵢ when αᵢ ≥ (1 − τ)Cᵢ, τ = min(√tol, 1/2)
(:func:`margin_opt.kkt.category_threshold`), so the counts in the legends are
those of ``problem.certify(solution, tol)``.

References
----------
C. Cortes and V. Vapnik, "Support-vector networks", Machine Learning 20, 1995
(the soft margin and its support vectors).  C. M. Bishop, *Pattern Recognition and
Machine Learning*, Springer 2006, Fig. 7.2 and 7.4 (the boundary, margins and support
vectors of a kernel SVM).
"""

from __future__ import annotations

import numpy as np

from ..kkt import box_categories, category_threshold
from . import axes_for as _figure_ax
from . import class_label as _label

__all__ = ["decision_on", "plot_decision_boundary", "plot_margins_vs_alpha", "sv_categories"]

_CLASS_STYLE = {-1.0: dict(color="C0", marker="o"), 1.0: dict(color="C3", marker="^")}


def sv_categories(problem, solution, tol=1e-6):
    """Masks of the support-vector table, as the certificate forms them.

    Parameters
    ----------
    problem : SVMProblem
    solution : Solution
    tol : float, default=1e-6
        The certificate's tolerance; α is judged at 0 or C with the certificate's
        threshold τ = min(√tol, 1/2) (:func:`margin_opt.kkt.category_threshold`).

    Returns
    -------
    categories : dict of str to ndarray of bool, shape (n_samples,)
        ``"zero"`` (α = 0), ``"free"`` (0 < α < C) and ``"at_C"`` (α = C; empty for
        the hard margin).  Points with Cᵢ = 0 are in none.
    """
    alpha = np.asarray(solution.alpha, dtype=float)
    zero, free, at_c = box_categories(alpha, problem.C_i, category_threshold(tol),
                                      problem._alpha_scale(alpha))
    return {"zero": zero, "free": free, "at_C": at_c}


def _save(fig, file):
    if file is not None:
        fig.tight_layout()
        fig.savefig(file, dpi=110, bbox_inches="tight")
    return fig


def _legend_outside(ax):
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0)


def _dense(X):
    return np.asarray(X.toarray() if hasattr(X, "toarray") else X, dtype=float)


def decision_on(problem, solution, points):
    """f(x) = Σⱼ αⱼyⱼK(x, xⱼ) + b at new points.

    Parameters
    ----------
    problem : SVMProblem
    solution : Solution
    points : ndarray of shape (m, n_features)

    Returns
    -------
    f : ndarray of shape (m,)
    """
    beta = np.asarray(solution.dual_coef, dtype=float)[0]
    sv = np.flatnonzero(beta)
    if sv.size == 0:
        return np.full(points.shape[0], float(solution.b))
    return problem.kernel(points, problem.X[sv]) @ beta[sv] + float(solution.b)


def plot_decision_boundary(problem, solution, *, tol=1e-6, resolution=250, padding=0.1,
                           ax=None, file=None, title=None):
    """The C-SVC of two features: boundary, margins, support vectors and violators.

    Parameters
    ----------
    problem : SVMProblem
        With X of shape (n_samples, 2), any kernel but ``"precomputed"``.
    solution : Solution
        From ``problem.solve(...)`` (or ``problem.solution_from_dual``).
    tol : float, default=1e-6
        Tolerance of the categories (see :func:`sv_categories`) and of the
        violators: a point is marked when yᵢf(xᵢ) < 1 − tol.
    resolution : int, default=250
        Grid points per axis on which f is evaluated.
    padding : float, default=0.1
        Margin around the data, as a fraction of its range.
    ax : matplotlib Axes, optional
        Axes to draw on (a new figure otherwise).
    file : str or path-like, optional
        Save the figure there (PNG by extension).
    title : str, optional

    Returns
    -------
    fig : matplotlib Figure

    Raises
    ------
    ValueError
        If X does not have exactly two features or the kernel is precomputed
        (f cannot be evaluated on a grid).
    ImportError
        Without matplotlib (the ``plot`` extra).
    """
    if problem.X.shape[1] != 2 or problem.kernel.name == "precomputed":
        raise ValueError("plot_decision_boundary needs X with two features and a kernel "
                         f"(got X of shape {problem.X.shape}, kernel "
                         f"{problem.kernel.name!r}); use plot_margins_vs_alpha otherwise.")
    ax = _figure_ax(ax, (9, 5.5))
    X, y = _dense(problem.X), problem.y
    lo, hi = X.min(axis=0), X.max(axis=0)
    pad = padding * np.where(hi > lo, hi - lo, 1.0)
    g0 = np.linspace(lo[0] - pad[0], hi[0] + pad[0], resolution)
    g1 = np.linspace(lo[1] - pad[1], hi[1] + pad[1], resolution)
    G0, G1 = np.meshgrid(g0, g1)
    F = decision_on(problem, solution, np.c_[G0.ravel(), G1.ravel()]).reshape(G0.shape)

    ax.contourf(G0, G1, F, levels=[min(F.min(), -1.0) - 1, 0.0, max(F.max(), 1.0) + 1],
                colors=["C0", "C3"], alpha=0.12)
    ax.contour(G0, G1, F, levels=[0.0], colors="k", linewidths=1.8)
    ax.contour(G0, G1, F, levels=[-1.0, 1.0], colors="k", linewidths=1.0, linestyles="--")
    for label, style in _CLASS_STYLE.items():
        mask = y == label
        name = problem.classes_[int(label > 0)]
        sign = "+1" if label > 0 else "−1"
        ax.scatter(X[mask, 0], X[mask, 1], s=22, edgecolor="none",
                   label=f"y = {sign} (class {_label(name)}): {mask.sum()}", **style)
    cats = sv_categories(problem, solution, tol)
    sv = np.zeros(y.size, dtype=bool)
    sv[np.asarray(solution.support_, dtype=int)] = True
    bounded = sv & cats["at_C"]
    free = sv & ~bounded
    ax.scatter(X[free, 0], X[free, 1], s=110, facecolor="none", edgecolor="k", linewidth=1.3,
               label=f"support vector, {'α > 0' if problem.hard_margin else '0 < α < C'}: "
                     f"{free.sum()}", gid="sv_free")
    ax.scatter(X[bounded, 0], X[bounded, 1], s=150, marker="s", facecolor="none",
               edgecolor="C2", linewidth=1.3, gid="sv_bounded",
               label=None if problem.hard_margin else f"support vector, α = C: {bounded.sum()}")
    margins = y * np.asarray(solution.decision, dtype=float)
    viol = margins < 1 - tol
    ax.scatter(X[viol, 0], X[viol, 1], s=30, marker="x", color="k", linewidth=1.0,
               label=f"margin violator, yf(x) < 1: {viol.sum()}", gid="violators")
    ax.plot([], [], "k-", lw=1.8, label="f(x) = 0")
    ax.plot([], [], "k--", lw=1.0, label="f(x) = ±1")
    ax.set_xlim(g0[0], g0[-1])
    ax.set_ylim(g1[0], g1[-1])
    ax.set_xlabel("x₁")
    ax.set_ylabel("x₂")
    model = "hard-margin SVM" if problem.hard_margin else f"C-SVC, C = {problem.C:g}"
    ax.set_title(title or f"{model}, {problem.kernel.describe()}: "
                 f"{int(sv.sum())} support vectors", fontsize=10)
    _legend_outside(ax)
    return _save(ax.figure, file)


def plot_margins_vs_alpha(problem, solution, *, tol=1e-6, ax=None, file=None, title=None):
    """Functional margins yᵢf(xᵢ) against αᵢ/Cᵢ, by support-vector category, with KKT bands.

    At an optimum every point lies in its band: α = 0 at yf ≥ 1, 0 < α < C on
    yf = 1, α = C at yf ≤ 1.  Points outside their band (the certificate's
    "contradicting" column) are marked with a red cross.  Works for any number of
    features and any kernel.  For the one-class SVM (``problem.model == "one-class"``)
    the margin is f(xᵢ) = Σⱼ αⱼK(xⱼ, xᵢ) − ρ and the boundary is f = 0 (its table:
    α = 0 ⇒ f ≥ 0, 0 < α < s ⇒ f = 0, α = s ⇒ f ≤ 0, in LIBSVM's scale).

    Parameters
    ----------
    problem : SVMProblem or OneClassProblem
    solution : Solution
    tol : float, default=1e-6
        The certificate's tolerance: categories as in :func:`sv_categories`, a point
        contradicts its category when its margin is off its band by more than tol.
    ax : matplotlib Axes, optional
    file : str or path-like, optional
        Save the figure there (PNG by extension).
    title : str, optional

    Returns
    -------
    fig : matplotlib Figure

    Raises
    ------
    ImportError
        Without matplotlib (the ``plot`` extra).
    """
    ax = _figure_ax(ax, (9.5, 4.8))
    alpha = np.asarray(solution.alpha, dtype=float)
    hard = bool(problem.hard_margin)
    one_class = getattr(problem, "model", None) == "one-class"
    # the boundary's level, the margin's and the bound's names
    level, f, u = (0.0, "f", "s") if one_class else (1.0, "yf", "C")
    amax = float(alpha.max(initial=0.0))
    scale = np.full(alpha.size, amax if amax > 0 else 1.0) if hard \
        else np.where(problem.C_i > 0, problem.C_i, 1.0)
    a = alpha / scale
    m = problem.y * np.asarray(solution.decision, dtype=float)
    cats = sv_categories(problem, solution, tol)
    bad = {"zero": m < level - tol, "free": np.abs(m - level) > tol, "at_C": m > level + tol}
    lo = min(float(m.min(initial=level)), 0.0) - 0.2
    hi = max(float(m.max(initial=level)), level + 1.0) + 0.2
    w = 0.025
    ax.fill_between([-w, w], level, hi, color="C0", alpha=0.15, lw=0)
    thick = 0.01 * (hi - lo)
    ax.fill_between([w, 1 + w if hard else 1 - w], level - thick, level + thick, color="C1",
                    alpha=0.25, lw=0)
    if not hard:
        ax.fill_between([1 - w, 1 + w], lo, level, color="C2", alpha=0.15, lw=0)
    ax.axhline(level, color="k", ls="--", lw=0.8)
    ax.axhline(0.0, color="0.5", lw=0.5)
    rows = [("zero", "α = 0", f"{f} ≥ {level:g}", dict(color="C0", marker=".", s=14)),
            ("free", f"0 < α < {u}" if not hard else "α > 0", f"{f} = {level:g}",
             dict(color="C1", marker="o", s=22)),
            ("at_C", f"α = {u}", f"{f} ≤ {level:g}", dict(color="C2", marker="s", s=18))]
    for key, name, band, style in rows:
        if hard and key == "at_C":
            continue
        mask = cats[key]
        ax.scatter(a[mask], m[mask], label=f"{name} (must have {band}): {mask.sum()}",
                   gid=f"category_{key}", **style)
    contra = np.zeros(alpha.size, dtype=bool)
    for key in ("zero", "free", "at_C"):
        contra |= cats[key] & bad[key]
    ax.scatter(a[contra], m[contra], marker="x", color="red", s=50,
               label=f"contradicting its band: {contra.sum()}", gid="contradicting")
    ax.set_xlim(-2 * w, 1 + 2 * w)
    ax.set_ylim(lo, hi)
    ax.set_xlabel("αᵢ / max α" if hard else f"αᵢ / {u}ᵢ")
    ax.set_ylabel("f(xᵢ) = Σⱼ αⱼK(xⱼ, xᵢ) − ρ" if one_class else "functional margin yᵢ f(xᵢ)")
    rule = ("hard margin: α = 0 ⇒ yf ≥ 1, α > 0 ⇒ yf = 1" if hard else
            " ".join(f"{name} ⇒ {band}," for _, name, band, _ in rows)[:-1])
    ax.set_title(title or f"Support-vector table, {rule}", fontsize=9)
    _legend_outside(ax)
    return _save(ax.figure, file)
