"""Pictures of the ε-SVR: the fitted function with its tube, and residuals by category."""

from __future__ import annotations

import numpy as np

from . import require_matplotlib

__all__ = ["plot_tube_1d", "plot_tube_residuals"]


def _marks(problem, solution, tol=1e-6):
    C = problem.C_i
    a, a_star = solution.alpha, solution.alpha_star
    tau = np.sqrt(tol)
    return {"inside the tube (a = â = 0)": (a <= tau * C) & (a_star <= tau * C),
            "on an edge (0 < a or â < C)": ((a > tau * C) & (a < (1 - tau) * C))
            | ((a_star > tau * C) & (a_star < (1 - tau) * C)),
            "outside (a or â = C)": (a >= (1 - tau) * C) | (a_star >= (1 - tau) * C)}


_STYLE = {"inside the tube (a = â = 0)": dict(color="0.6", marker=".", s=12),
          "on an edge (0 < a or â < C)": dict(facecolor="none", edgecolor="C3", marker="o", s=45),
          "outside (a or â = C)": dict(color="C1", marker="x", s=30)}


def _finish(ax, xlabel, ylabel, file):
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.legend(fontsize=8)
    if file:
        ax.figure.tight_layout()
        ax.figure.savefig(file, dpi=120)
    return ax


def plot_tube_1d(problem, solution, *, grid=None, ax=None, file=None):
    """A one-dimensional fit f(x) with the tube f ± ε, its edges and support vectors.

    Parameters
    ----------
    problem : SVRProblem
        Fitted on X of shape (n_samples, 1).
    solution : Solution
    grid : ndarray of shape (m,), optional
        Points where f is drawn (default: 400 points over the data range).
    ax : matplotlib Axes, optional
    file : str, optional
        Save the figure there (PNG).

    Returns
    -------
    ax : matplotlib Axes

    Raises
    ------
    ValueError
        If X has more than one feature.
    """
    X = problem.X
    if X.shape[1] != 1:
        raise ValueError("plot_tube_1d needs one feature; use plot_tube_residuals otherwise.")
    plt = require_matplotlib()
    if ax is None:
        _, ax = plt.subplots(figsize=(7, 4))
    x = np.asarray(X[:, 0].toarray() if hasattr(X, "toarray") else X[:, 0]).ravel()
    g = np.linspace(x.min(), x.max(), 400) if grid is None else np.asarray(grid)
    sv = solution.support_
    coef = solution.dual_coef[0, sv]
    f = problem.kernel(g[:, None], X[sv]) @ coef + solution.b if sv.size else \
        np.full(g.shape, solution.b)
    eps = problem.epsilon
    ax.plot(g, f, color="C0", lw=2, label="f(x)")
    ax.fill_between(g, f - eps, f + eps, color="C0", alpha=0.15, label=f"tube ±ε (ε={eps:g})")
    ax.plot(g, f + eps, "C0--", lw=0.8)
    ax.plot(g, f - eps, "C0--", lw=0.8)
    for label, mask in _marks(problem, solution).items():
        ax.scatter(x[mask], problem.y[mask], label=f"{label}: {mask.sum()}", **_STYLE[label])
    return _finish(ax, "x", "y", file)


def plot_tube_residuals(problem, solution, *, ax=None, file=None):
    """Residuals yᵢ − f(xᵢ) against f(xᵢ) with the band ±ε, points by tube category.

    Works for any number of features; the tube table of the certificate, drawn.
    """
    plt = require_matplotlib()
    if ax is None:
        _, ax = plt.subplots(figsize=(7, 4))
    r = problem.y - solution.decision
    eps = problem.epsilon
    ax.axhspan(-eps, eps, color="C0", alpha=0.15, label=f"tube |r| ≤ ε (ε={eps:g})")
    for label, mask in _marks(problem, solution).items():
        ax.scatter(solution.decision[mask], r[mask], label=f"{label}: {mask.sum()}",
                   **_STYLE[label])
    return _finish(ax, "f(x)", "residual y − f(x)", file)
