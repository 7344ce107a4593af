"""Plots of a boosting run: errors with their bounds, margin distributions, α(ε), losses.

Every function takes a fitted :class:`~margin_opt.estimators.adaboost.AdaBoost`
(or nothing) and an optional matplotlib ``ax``, and returns the ``ax``.

References
----------
R. E. Schapire, Y. Freund, P. Bartlett and W. S. Lee, "Boosting the margin",
Ann. Statist. 26(5), 1998 (Fig. 1: training/test error; cumulative margins).
T. Hastie, R. Tibshirani and J. Friedman, *The Elements of Statistical Learning*,
2nd ed., 2009, Fig. 10.4 (losses as functions of the margin).
"""

from __future__ import annotations

import numpy as np

from . import figure_paths, require_matplotlib

__all__ = [
    "plot_error_curves",
    "plot_margin_distribution",
    "plot_alpha_vs_error",
    "plot_losses",
    "save_boosting_plots",
]


def _ax(ax):
    plt = require_matplotlib()
    if ax is None:
        _, ax = plt.subplots(figsize=(5.5, 4))
    return ax


def _y_pm(model, y):
    return np.where(np.asarray(y) == model.classes_[1], 1.0, -1.0)


def _staged_margins(model, X, y):
    """Normalized margins after every round, ndarray of shape (n_iter_, n_samples)."""
    y_pm = _y_pm(model, y)
    total = np.cumsum(model.estimator_weights_)
    return np.array([y_pm * F / s for F, s in zip(model.staged_decision_function(X), total,
                                                   strict=True)])


def plot_error_curves(model, X_train, y_train, X_test=None, y_test=None, ax=None):
    """Training and test error by round with the bounds ∏ Zₜ and exp(−2 Σ γₜ²).

    Parameters
    ----------
    model : fitted AdaBoost
    X_train, y_train : training data it was fitted on
    X_test, y_test : optional held-out data
    ax : matplotlib Axes, optional

    Returns
    -------
    ax : matplotlib Axes
    """
    ax = _ax(ax)
    rounds = np.arange(1, model.n_iter_ + 1)
    ax.plot(rounds, model.train_errors_, label="training error")
    if X_test is not None:
        y_pm = _y_pm(model, y_test)
        test = [np.mean(y_pm * F <= 0) for F in model.staged_decision_function(X_test)]
        ax.plot(rounds, test, label="test error")
    ax.plot(rounds, model.error_bounds_, "--", label=r"$\prod_t Z_t$")
    ax.plot(rounds, model.exp_bounds_, ":", label=r"$\exp(-2\sum_t\gamma_t^2)$")
    ax.set_yscale("log")
    ax.set_xlabel("round t")
    ax.set_ylabel("error (log scale)")
    ax.set_title("AdaBoost: errors and the training-error bound")
    ax.legend(fontsize=8)
    return ax


def plot_margin_distribution(model, X, y, rounds=None, ax=None):
    """Cumulative distribution of the normalized margins yH(x)/Σα at several rounds.

    Parameters
    ----------
    model : fitted AdaBoost
    X, y : data (usually the training set)
    rounds : sequence of int, optional
        Rounds (1-based) to draw; default about 5 spread over the run.
    ax : matplotlib Axes, optional

    Returns
    -------
    ax : matplotlib Axes
    """
    ax = _ax(ax)
    margins = _staged_margins(model, X, y)
    if rounds is None:
        rounds = sorted({r for r in (1, 5, 20, 100, 500, model.n_iter_) if r <= model.n_iter_})
    for r in rounds:
        m = np.sort(margins[r - 1])
        ax.step(m, np.arange(1, m.size + 1) / m.size, where="post", label=f"t = {r}")
    ax.axvline(0.0, color="grey", lw=0.5)
    ax.set_xlim(-1, 1)
    ax.set_xlabel(r"normalized margin $yH(x)/\sum_t\alpha_t$")
    ax.set_ylabel("cumulative fraction")
    ax.set_title("Shift of the margin distribution")
    ax.legend(fontsize=8)
    return ax


def plot_alpha_vs_error(model=None, ax=None):
    """The curve α = ½ log((1 − ε)/ε) with a fitted model's (εₜ, αₜ) on it.

    Parameters
    ----------
    model : fitted AdaBoost, optional
    ax : matplotlib Axes, optional

    Returns
    -------
    ax : matplotlib Axes
    """
    ax = _ax(ax)
    e = np.linspace(0.005, 0.995, 400)
    ax.plot(e, 0.5 * np.log((1 - e) / e), label=r"$\alpha=\frac{1}{2}\log\frac{1-\varepsilon}"
            r"{\varepsilon}$")
    if model is not None:
        ax.plot(model.estimator_errors_, model.stage_weights_, "o", ms=3, label="rounds")
    ax.axhline(0.0, color="grey", lw=0.5)
    ax.axvline(0.5, color="grey", lw=0.5)
    ax.set_xlabel(r"weighted error $\varepsilon_t$")
    ax.set_ylabel(r"$\alpha_t$")
    ax.set_title("Learner weight against its error")
    ax.legend(fontsize=8)
    return ax


def plot_losses(ax=None):
    """Hinge, exponential and 0–1 loss as functions of the margin yf(x).

    Returns
    -------
    ax : matplotlib Axes
    """
    ax = _ax(ax)
    z = np.linspace(-2, 2, 401)
    ax.plot(z, (z <= 0).astype(float), label="0–1: 1[yf ≤ 0]")
    ax.plot(z, np.maximum(0, 1 - z), label="hinge: max(0, 1 − yf)")
    ax.plot(z, np.exp(-z), label="exponential: exp(−yf)")
    ax.set_ylim(0, 4)
    ax.set_xlabel("margin yf(x)")
    ax.set_ylabel("loss")
    ax.set_title("Surrogate losses")
    ax.legend(fontsize=8)
    return ax


def save_boosting_plots(model, X_train, y_train, X_test, y_test, file) -> list:
    """Write the four plots to ``STEM-<name>.png`` beside ``file``, name in errors,
    margins, alpha, losses (see :func:`margin_opt.plots.figure_paths`).

    Returns
    -------
    paths : list of str
    """
    plt = require_matplotlib()
    where = figure_paths(file, ["errors", "margins", "alpha", "losses"])
    paths = []
    for name, draw in [
        ("errors", lambda ax: plot_error_curves(model, X_train, y_train, X_test, y_test, ax)),
        ("margins", lambda ax: plot_margin_distribution(model, X_train, y_train, ax=ax)),
        ("alpha", lambda ax: plot_alpha_vs_error(model, ax)),
        ("losses", plot_losses),
    ]:
        fig, ax = plt.subplots(figsize=(5.5, 4))
        draw(ax)
        fig.tight_layout()
        path = where[name]
        fig.savefig(path, dpi=80)
        plt.close(fig)
        paths.append(path)
    return paths
