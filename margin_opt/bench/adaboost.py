"""Benchmark: 200 boosted stumps, ours against scikit-learn's AdaBoostClassifier.

Both fit the same model (SAMME on two classes has weights 2αₜ) on
``make_classification`` data with d = 20; scikit-learn refits a depth-1
``DecisionTreeClassifier`` each round, we sort once and scan cumulative weights.
Times are wall-clock seconds in one process, best of ``repeats`` interleaved runs,
after a warm-up fit (first-use costs, such as imports, outside the timings).
"""

from __future__ import annotations

import inspect
import time

import numpy as np
from sklearn.datasets import make_classification
from sklearn.ensemble import AdaBoostClassifier
from sklearn.model_selection import train_test_split
from sklearn.tree import DecisionTreeClassifier

from ..estimators.adaboost import AdaBoost
from ..progress import progress

__all__ = ["run", "format_rows"]


def _sklearn_model(n_estimators):
    kw = {}
    if "algorithm" in inspect.signature(AdaBoostClassifier).parameters:  # sklearn < 1.6
        kw["algorithm"] = "SAMME"
    return AdaBoostClassifier(DecisionTreeClassifier(max_depth=1),
                              n_estimators=n_estimators, **kw)


def _timed(model, X, y):
    t0 = time.perf_counter()
    model.fit(X, y)
    return time.perf_counter() - t0, model


def run(quick=False, *, sizes=None, n_features=20, n_informative=2, n_estimators=200,
        repeats=None, random_state=0) -> list:
    """Time both implementations; one row per training-set size.

    Parameters
    ----------
    quick : bool, default=False
        Small sizes (n = 2000) and one repeat: a smoke test.
    sizes : sequence of int, optional
        Training-set sizes (default (20000, 100000)).
    n_features : int, default=20
    n_informative : int, default=2
        ``make_classification``'s default; with more informative features the Gini
        split of scikit-learn's stumps departs more often from the least-error one.
    n_estimators : int, default=200
    repeats : int, optional
        Interleaved repeats per size (default 1 quick or n ≥ 50000, else 2).
    random_state : int, default=0

    Returns
    -------
    rows : list of dict
        ``n``, ``d``, ``n_estimators``, ``time_ours``, ``time_sklearn`` (s),
        ``ratio`` (ours / sklearn), ``agreement`` (fraction of identical test
        predictions), ``first_error_ours``/``first_error_sklearn``, ``rounds``.
    """
    if sizes is None:
        sizes = (2000,) if quick else (20000, 100000)
    Xw, yw = make_classification(n_samples=300, n_features=n_features, random_state=1)
    AdaBoost(n_estimators=3).fit(Xw, yw)  # warm-up: first-use costs outside the timings
    rows = []
    for n in progress(sizes, desc="adaboost: sizes"):
        X, y = make_classification(n_samples=int(n / 0.8), n_features=n_features,
                                   n_informative=n_informative, random_state=random_state)
        X_tr, X_te, y_tr, y_te = train_test_split(X, y, train_size=n, random_state=0)
        reps = repeats or (1 if quick or n >= 50000 else 2)
        t_ours, t_sk = np.inf, np.inf
        # interleave to share the machine's load fairly
        for _ in progress(range(reps), desc=f"n = {n}: repeats"):
            t, ours = _timed(AdaBoost(n_estimators=n_estimators), X_tr, y_tr)
            t_ours = min(t_ours, t)
            t, sk = _timed(_sklearn_model(n_estimators), X_tr, y_tr)
            t_sk = min(t_sk, t)
        rows.append({
            "n": int(n), "d": n_features, "n_estimators": n_estimators,
            "time_ours": t_ours, "time_sklearn": t_sk, "ratio": t_ours / t_sk,
            "agreement": float(np.mean(ours.predict(X_te) == sk.predict(X_te))),
            "first_error_ours": float(ours.estimator_errors_[0]),
            "first_error_sklearn": float(sk.estimator_errors_[0]),
            "rounds": [int(ours.n_iter_), len(sk.estimators_)],
        })
    return rows


def format_rows(rows) -> str:
    """A plain-text table of :func:`run`'s rows."""
    head = (f"{'n':>7} {'d':>3} {'T':>4} {'ours (s)':>9} {'sklearn (s)':>11} {'ratio':>7} "
            f"{'agree':>7} {'ε₁ ours':>9} {'ε₁ sklearn':>10}")
    lines = ["AdaBoost, decision stumps: ours vs sklearn AdaBoostClassifier(max_depth=1)", head]
    for r in rows:
        lines.append(f"{r['n']:>7} {r['d']:>3} {r['n_estimators']:>4} {r['time_ours']:9.3f} "
                     f"{r['time_sklearn']:11.3f} {r['ratio']:7.3f} {r['agreement']:7.4f} "
                     f"{r['first_error_ours']:9.6f} {r['first_error_sklearn']:10.6f}")
    return "\n".join(lines)
