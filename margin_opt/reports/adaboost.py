"""``margin-opt verify --model adaboost``: the stage table and the margin LP.

For each round: εₜ, αₜ in closed form, αₜ from the cvxpy line search and their
difference, Zₜ, the training error and its bounds ∏ Zₜ ≤ exp(−2 Σ γₜ²); then the
final normalized margins against the optimum of the max-min-margin LP over the
chosen weak learners.  The checks are the fitted model's ``certificate_``
(:func:`margin_opt.problems.boosting.certify_stagewise`).
"""

from __future__ import annotations

import numpy as np
from sklearn.model_selection import train_test_split

from ..estimators.adaboost import AdaBoost

__all__ = ["verify", "DEFAULT_DATASET"]

DEFAULT_DATASET = "breast_cancer"


def verify(dataset, *, n_estimators=50, test_size=0.3, random_state=0, plot=None):
    """Fit AdaBoost with cvxpy-verified line searches and check every bound.

    Parameters
    ----------
    dataset : margin_opt.datasets.Dataset
        Binary classification data (any two labels).
    n_estimators : int, default=50
    test_size : float, default=0.3
        Fraction held out (stratified) for the test error.
    random_state : int, default=0
        Seed of the split.
    plot : str, optional
        File path prefix: write ``{plot}errors.png``, ``margins.png``, ``alpha.png``
        and ``losses.png``.

    Returns
    -------
    report : dict
        JSON-ready: per-round table, margins, LP result, certificate.
    text : str
        The printed stage table and certificate.
    ok : bool
        False if any check fails (α vs cvxpy > 1e-6, error > ∏Z, ∏Z > exp bound,
        LP margin < AdaBoost's minimum margin − 1e-7).

    Raises
    ------
    ValueError
        If the data is not binary classification.
    """
    X_tr, X_te, y_tr, y_te = train_test_split(dataset.X, dataset.y, test_size=test_size,
                                              random_state=random_state, stratify=dataset.y)
    model = AdaBoost(n_estimators=n_estimators, verify=True).fit(X_tr, y_tr)
    y_te_pm = np.where(y_te == model.classes_[1], 1.0, -1.0)
    test_err = np.array([np.mean(y_te_pm * F <= 0) for F in model.staged_decision_function(X_te)])
    margins = model.margins(X_tr, y_tr)
    lp = model.max_margin_lp(X_tr, y_tr)
    cert = model.certificate_

    eps = model.estimator_errors_
    rows = [{"round": t + 1, "error": float(eps[t]), "alpha": float(model.stage_weights_[t]),
             "alpha_cvxpy": float(model.verified_weights_[t]),
             "abs_diff": float(abs(model.verified_weights_[t] - model.stage_weights_[t])),
             "Z": float(model.normalizers_[t]), "train_error": float(model.train_errors_[t]),
             "bound": float(model.error_bounds_[t]), "exp_bound": float(model.exp_bounds_[t]),
             "test_error": float(test_err[t])} for t in range(model.n_iter_)]
    summary = {
        "n_iter": model.n_iter_, "stop_reason": model.stop_reason_,
        "train_error": float(model.train_errors_[-1]), "test_error": float(test_err[-1]),
        "min_margin": float(margins.min()), "median_margin": float(np.median(margins)),
        "lp_margin": lp.margin, "lp_n_active": int(np.sum(lp.weights > 1e-9)),
    }
    report = {"model": "adaboost", "dataset": dataset.name, "n_train": int(len(y_tr)),
              "n_test": int(len(y_te)), "n_estimators": n_estimators, "rounds": rows,
              "summary": summary, "certificate": cert.to_dict(), "ok": cert.ok}

    head = (f"{'t':>4} {'ε':>9} {'α closed':>10} {'α cvxpy':>10} {'|Δα|':>9} {'Z':>8} "
            f"{'train':>7} {'∏Z':>9} {'exp bnd':>9} {'test':>7}")
    lines = [f"AdaBoost on {dataset.name}: {len(y_tr)} train / {len(y_te)} test, "
             f"{model.n_iter_} rounds (stop: {model.stop_reason_})", head]
    for r in rows:
        lines.append(f"{r['round']:>4} {r['error']:9.5f} {r['alpha']:10.6f} "
                     f"{r['alpha_cvxpy']:10.6f} {r['abs_diff']:9.1e} {r['Z']:8.5f} "
                     f"{r['train_error']:7.4f} {r['bound']:9.3e} {r['exp_bound']:9.3e} "
                     f"{r['test_error']:7.4f}")
    lines.append(f"normalized margins yH(x)/Σα: min {summary['min_margin']:.6f}, median "
                 f"{summary['median_margin']:.6f}; LP optimum over the same "
                 f"{model.n_iter_} learners: {lp.margin:.6f} "
                 f"({summary['lp_n_active']} with weight > 0)")
    lines.append(str(cert))
    if plot:
        from ..plots.boosting import save_boosting_plots

        report["plots"] = save_boosting_plots(model, X_tr, y_tr, X_te, y_te, plot)
        lines.append("plots: " + ", ".join(report["plots"]))
    return report, "\n".join(lines), cert.ok
