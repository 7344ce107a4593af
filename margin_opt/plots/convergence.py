"""Convergence plot: suboptimality J − J* against iteration, log–log, with reference rates.

References
----------
S. Boyd, "Subgradient methods", EE364b notes, 2014 (O(1/√t) for the subgradient
method); S. Shalev-Shwartz et al., "Pegasos", Math. Programming 127, 2011,
Theorem 1 (O(log t/(λt)) for λ-strongly convex objectives).
"""

from __future__ import annotations

import numpy as np

from . import require_matplotlib

__all__ = ["plot_convergence"]


def _xy(trace):
    if isinstance(trace, tuple):
        t, J = (np.asarray(a, dtype=float) for a in trace)
    else:
        J = np.asarray(trace, dtype=float)
        t = np.arange(J.shape[0], dtype=float)
    return t, J


def plot_convergence(runs, J_star, *, lam=None, best_so_far=True, ax=None, file=None, title=None,
                     floor=1e-12):
    """Plot ``J(θₜ) − J*`` against t on log–log axes, one line per run.

    Parameters
    ----------
    runs : dict of str to ndarray or tuple of ndarray
        Label -> J per iteration (ndarray of shape (T + 1,), entry 0 at the start),
        or -> ``(t, J)`` with the iteration count of each entry (for Pegasos: steps
        at the end of each epoch).  Entries at t = 0 are not drawn (log axis).
    J_star : float
        The optimal value of J (e.g. from cvxpy).
    lam : float, optional
        λ of the objective; when given, the O(log t/(λt)) reference line is drawn
        beside the O(1/√t) one.  Both are anchored to the runs at t = 10.
    best_so_far : bool, default=True
        Draw ``min_{s≤t} J(θₛ) − J*`` (the best iterate, which the solvers return)
        rather than the raw, non-monotone ``J(θₜ) − J*``.
    ax : matplotlib Axes, optional
        Axes to draw on (a new figure otherwise).
    file : str or path-like, optional
        Save the figure there (PNG by extension).
    title : str, optional
    floor : float, default=1e-12
        Suboptimality is clipped below at this value so that it can be drawn.

    Returns
    -------
    ax : matplotlib Axes

    Raises
    ------
    ImportError
        Without matplotlib (the ``plot`` extra).
    ValueError
        If ``runs`` is empty.
    """
    if not runs:
        raise ValueError("runs is empty: pass at least one label -> J trace.")
    plt = require_matplotlib()
    if ax is None:
        _, ax = plt.subplots(figsize=(7, 4.8))
    t_max, anchor = 1.0, []
    for label, trace in runs.items():
        t, J = _xy(trace)
        if best_so_far:
            J = np.minimum.accumulate(J)
        keep = t > 0
        t, gap = t[keep], np.maximum(J[keep] - J_star, floor)
        if t.size == 0:
            continue
        ax.loglog(t, gap, label=label, lw=1.4)
        t_max = max(t_max, t[-1])
        near = np.searchsorted(t, 10.0)
        if near < t.size:
            anchor.append(gap[near])
    y0 = float(np.median(anchor)) if anchor else 1.0
    tt = np.logspace(1, np.log10(max(t_max, 20.0)), 100)
    ax.loglog(tt, y0 * np.sqrt(10.0 / tt), "k--", lw=1, label="O(1/√t)")
    if lam is not None:
        ref = np.log(tt) / (lam * tt)
        ax.loglog(tt, y0 * ref / ref[0], "k:", lw=1.2, label=f"O(log t/(λt)), λ = {lam:g}")
    ax.set_xlabel("iteration t (Pegasos: stochastic steps)")
    ax.set_ylabel("min over s ≤ t of J(θₛ) − J*" if best_so_far else "J(θₜ) − J*")
    ax.set_title(title or "Suboptimality against iteration")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    if file is not None:
        ax.figure.tight_layout()
        ax.figure.savefig(file, dpi=110)
    return ax
