"""The ν-property, drawn: the fractions of margin errors and of support vectors of the
fitted ν-SVC against ν, with the diagonal.

For every ν (Schölkopf et al. 2000, Proposition 5): the fraction of margin errors
(yᵢf(xᵢ) < ρ, i.e. ξᵢ > 0) is at most ν, and the fraction of support vectors (αᵢ > 0)
at least ν — the margin-error curve lies on or below the diagonal, the support-vector
curve on or above it.  The ν-SVC is feasible only for ν ≤ 2 min(n₊, n₋)/n (Chang and
Lin 2001); above it nothing is fitted and the band is shaded.

References
----------
B. Schölkopf, A. J. Smola, R. C. Williamson and P. L. Bartlett, "New support vector
algorithms", Neural Computation 12(5), 2000, Proposition 5.
C.-C. Chang and C.-J. Lin, "Training ν-support vector classifiers: theory and
algorithms", Neural Computation 13(9), 2001 (the feasible range of ν).
"""

from __future__ import annotations

import numpy as np

from . import require_matplotlib

__all__ = ["nu_fractions", "plot_nu_property"]


def nu_fractions(X, y, nus, *, kernel="rbf", gamma="scale", solver="auto"):
    """Fit a binary :class:`~margin_opt.NuSVC` for each feasible ν and read the
    ν-property's fractions from its certificate.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
    y : array-like of shape (n_samples,)
        Two classes.
    nus : array-like of float
        ν values in (0, 1]; those above the largest feasible ν are skipped.
    kernel, gamma, solver
        As for :class:`~margin_opt.NuSVC`.

    Returns
    -------
    fractions : dict
        ``nu`` (the fitted ν), ``error_fraction``, ``support_fraction`` (arrays, the
        certificates' ``error_fraction`` and ``support_fraction``), ``nu_max`` (the
        largest feasible ν, 2 min(n₊, n₋)/n) and ``skipped`` (the ν above it).
    """
    from ..estimators.nu import NuSVC
    from ..problems.nu import largest_feasible_nu

    y = np.asarray(y)
    _, counts = np.unique(y, return_counts=True)
    if counts.size != 2:
        raise ValueError(f"the ν-property figure takes two classes, got {counts.size}.")
    nu_max = largest_feasible_nu(counts)
    nus = np.asarray(nus, dtype=float)
    fitted, err, sv = [], [], []
    for nu in nus[nus <= nu_max]:
        q = NuSVC(nu=float(nu), kernel=kernel, gamma=gamma, solver=solver).fit(X, y) \
            .certificate_.quantities
        fitted.append(float(nu))
        err.append(q["error_fraction"])
        sv.append(q["support_fraction"])
    return {"nu": np.array(fitted), "error_fraction": np.array(err),
            "support_fraction": np.array(sv), "nu_max": nu_max,
            "skipped": nus[nus > nu_max]}


def plot_nu_property(X, y, nus, *, kernel="rbf", gamma="scale", solver="auto", file=None,
                     ax=None, title=None):
    """The fractions of margin errors and of support vectors of the fitted ν-SVC
    against ν, with the diagonal (margin errors ≤ ν ≤ support vectors).

    Parameters
    ----------
    X, y, nus, kernel, gamma, solver
        As for :func:`nu_fractions`.
    file : str or path-like, optional
        Save the figure there (PNG by extension).
    ax : matplotlib Axes, optional
        Axes to draw on (a new figure otherwise).
    title : str, optional

    Returns
    -------
    fig : matplotlib Figure
        Its lines are labelled ``"margin errors / n"`` and ``"support vectors / n"``
        (x: the fitted ν; y: the fractions of :func:`nu_fractions`).

    Raises
    ------
    ImportError
        Without matplotlib (the ``plot`` extra).
    """
    plt = require_matplotlib()
    f = nu_fractions(X, y, nus, kernel=kernel, gamma=gamma, solver=solver)
    if ax is None:
        fig, ax = plt.subplots(figsize=(6.4, 5.2))
    else:
        fig = ax.figure
    ax.plot([0, 1], [0, 1], color="0.45", linestyle="--", linewidth=1, label="ν (diagonal)")
    ax.fill_between(f["nu"], f["error_fraction"], f["support_fraction"], color="C0",
                    alpha=0.12, linewidth=0)
    ax.plot(f["nu"], f["support_fraction"], "o-", color="C3", markersize=4,
            label="support vectors / n")
    ax.plot(f["nu"], f["error_fraction"], "s-", color="C0", markersize=4,
            label="margin errors / n")
    if f["nu_max"] < 1.0:
        ax.axvspan(f["nu_max"], 1.0, color="0.85", zorder=0)
        ax.text((f["nu_max"] + 1.0) / 2, 0.06, f"infeasible:\nν > 2min(n₊, n₋)/n\n"
                f"= {f['nu_max']:.3f}", ha="center", va="bottom", fontsize=8, color="0.3")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.set_aspect("equal")
    ax.set_xlabel("ν")
    ax.set_ylabel("fraction of the training points")
    ax.grid(alpha=0.3)
    ax.legend(loc="upper left", fontsize=9)
    n = len(y)
    ax.set_title(title or f"the ν-property of the ν-SVC (n = {n}, kernel {kernel}):\n"
                 "margin errors / n ≤ ν ≤ support vectors / n", fontsize=10)
    if file is not None:
        fig.savefig(file, dpi=100, bbox_inches="tight")
    return fig
