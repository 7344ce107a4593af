"""Watch AdaBoost happen: errors and bounds, the margin shift, α(ε), the losses.

Run::

    python examples/adaboost_plots.py [--out DIR]

It fits 200 rounds of stumps on breast_cancer (70/30 split) and writes
``adaboost-errors.png``, ``adaboost-margins.png``, ``adaboost-alpha.png`` and
``adaboost-losses.png`` into DIR (default: the current directory).  The pictures in
``docs/`` are made with ``--out docs`` from the project root.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from sklearn.model_selection import train_test_split

from margin_opt.datasets import load_dataset
from margin_opt.estimators.adaboost import AdaBoost
from margin_opt.plots.boosting import save_boosting_plots


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("."),
                        help="folder for the four PNG files (default: the current directory)")
    args = parser.parse_args(argv)
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
    args.out.mkdir(parents=True, exist_ok=True)
    for path in save_boosting_plots(model, X_tr, y_tr, X_te, y_te, str(args.out / "adaboost.png")):
        print("wrote", path)


if __name__ == "__main__":
    main()
