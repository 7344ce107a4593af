"""Watch AdaBoost happen: errors and bounds, the margin shift, α(ε), the losses.

Run from the project root::

    python examples/adaboost_plots.py [OUTPUT_PREFIX]

It fits 200 rounds of stumps on breast_cancer (70/30 split) and writes
``docs/adaboost_errors.png``, ``_margins.png``, ``_alpha.png`` and ``_losses.png``
(or ``OUTPUT_PREFIX{errors,margins,alpha,losses}.png``).
"""

import sys

from sklearn.model_selection import train_test_split

from margin_opt.datasets import load_dataset
from margin_opt.estimators.adaboost import AdaBoost
from margin_opt.plots.boosting import save_boosting_plots


def main(prefix="docs/adaboost_"):
    data = load_dataset("breast_cancer")
    X_tr, X_te, y_tr, y_te = train_test_split(data.X, data.y, test_size=0.3, random_state=0,
                                              stratify=data.y)
    model = AdaBoost(n_estimators=200).fit(X_tr, y_tr)
    lp = model.max_margin_lp(X_tr, y_tr)
    print(f"{model.n_iter_} rounds; training error {model.train_errors_[-1]:.4f} "
          f"≤ ∏Z = {model.error_bounds_[-1]:.3e} ≤ exp(−2Σγ²) = {model.exp_bounds_[-1]:.3e}; "
          f"test error {(model.predict(X_te) != y_te).mean():.4f}")
    print(f"min normalized margin {model.margins(X_tr, y_tr).min():.4f}, "
          f"LP optimum over the same stumps {lp.margin:.4f}")
    for path in save_boosting_plots(model, X_tr, y_tr, X_te, y_te, prefix):
        print("wrote", path)


if __name__ == "__main__":
    main(*sys.argv[1:2])
