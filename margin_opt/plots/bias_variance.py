"""Plots of the bias–variance study: error/bias/variance bars and vote-margin distributions.

The margin curves are the cumulative distributions of normalized margins drawn by
:func:`margin_opt.plots.boosting.plot_margin_distribution` for one AdaBoost run, here
for several voting models on one axis (bagging, forests and boosting compared).

References
----------
R. E. Schapire, Y. Freund, P. Bartlett and W. S. Lee, "Boosting the margin", Ann.
Statist. 26(5), 1998 (Fig. 1: cumulative margin distributions).
"""

from __future__ import annotations

import numpy as np

from . import require_matplotlib
from .boosting import _ax, plot_margin_distribution

__all__ = ["plot_bias_variance_bars", "plot_margin_cdfs", "save_study_plot"]


def plot_bias_variance_bars(result, ax=None):
    """Error, bias and variance of every model of a study, as grouped horizontal bars.

    Parameters
    ----------
    result : StudyResult
        From :func:`margin_opt.studies.bias_variance.run_study`.
    ax : matplotlib Axes, optional

    Returns
    -------
    ax : matplotlib Axes
    """
    ax = _ax(ax)
    classification = result.task == "classification"
    names = [r["model"] for r in result.rows]
    y = np.arange(len(names))
    bias = "bias" if classification else "bias²"
    series = [("loss", "error" if classification else "squared error"), ("bias2", bias),
              ("variance", "variance")]
    h = 0.27
    for k, (key, label) in enumerate(series):
        ax.barh(y + (k - 1) * h, [r[key] for r in result.rows], height=h, label=label)
    ax.set_yticks(y, names)
    ax.invert_yaxis()
    values = [r[key] for r in result.rows for key, _ in series]
    if max(values) > 50 * np.median(values):
        ax.set_xscale("log")
    ax.set_xlabel(("0-1 loss" if classification else "squared loss")
                  + f" ({result.method}, B = {result.n_bootstrap})")
    ax.set_title(f"Bias and variance on {result.data}")
    ax.legend(fontsize=8, loc="lower right")
    return ax


def plot_margin_cdfs(margins, ax=None):
    """Cumulative distributions of normalized vote margins of several models.

    Parameters
    ----------
    margins : dict
        Model name → ndarray of shape (n_samples,) of margins in [−1, 1]
        (e.g. ``Bagging.margins(X, y)``, ``AdaBoost.margins(X, y)``).
    ax : matplotlib Axes, optional

    Returns
    -------
    ax : matplotlib Axes
    """
    ax = _ax(ax)
    for name, m in margins.items():
        m = np.sort(np.asarray(m, dtype=float))
        ax.step(np.r_[-1.0, m, 1.0], np.r_[0.0, np.arange(1, m.size + 1) / m.size, 1.0],
                where="post", label=name)
    ax.axvline(0.0, color="grey", lw=0.5)
    ax.set_xlim(-1.02, 1.02)
    ax.set_xlabel("normalized vote margin")
    ax.set_ylabel("cumulative fraction of training points")
    ax.set_title("Training margins of the voting models")
    ax.legend(fontsize=8, loc="upper left")
    return ax


def save_study_plot(result, path) -> str:
    """Write the study's figure: bars, and for classification the margin plots too.

    Classification: three panels (bars; margin distributions of the voting models;
    AdaBoost's margins at several rounds).  Regression: the bars.

    Parameters
    ----------
    result : StudyResult
    path : str
        PNG file to write.

    Returns
    -------
    path : str
    """
    plt = require_matplotlib()
    panels = 3 if result.task == "classification" and result.margins else 1
    fig, axes = plt.subplots(1, panels, figsize=(5.5 * panels, 4.2), squeeze=False)
    plot_bias_variance_bars(result, axes[0, 0])
    if panels == 3:
        voting = {k: v for k, v in result.margins.items() if k not in ("stump", "deep tree")}
        plot_margin_cdfs(voting, axes[0, 1])
        if result.boosting is not None:
            model, X, y = result.boosting
            plot_margin_distribution(model, X, y, ax=axes[0, 2])
            axes[0, 2].set_title("AdaBoost: the margins grow with the rounds")
    fig.tight_layout()
    fig.savefig(path, dpi=80)
    plt.close(fig)
    return path
