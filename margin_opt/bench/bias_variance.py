"""Benchmark: holdout bias–variance of a decision tree, ours (joblib) against mlxtend's.

Both run ``n_rounds`` bootstrap rounds of ``DecisionTreeClassifier(random_state=0)`` on
breast_cancer (70/30 split, seed 0) with 0-1 loss and the same seed, so they draw the
same bootstrap samples and report the same loss, bias and variance.  mlxtend fits the
rounds one after another; ours fits them through joblib with ``n_jobs`` workers.  One
process, runs alternated (mlxtend, ours with n_jobs = 1, ours with ``n_jobs``), best of
``repeats`` kept; the worker pool is started by a warm-up run (its time is reported as
``cold``).  mlxtend is an optional peer: without it the suite reports a skip.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time

from sklearn.model_selection import train_test_split
from sklearn.tree import DecisionTreeClassifier

from ..datasets import load_dataset
from ..studies.decomposition import bias_variance

__all__ = ["run", "format_rows"]


def _load():
    """The machine's load as ``uptime`` prints it (or os.getloadavg where it is absent)."""
    if shutil.which("uptime"):
        out = subprocess.run(["uptime"], capture_output=True, text=True, check=False)
        if out.returncode == 0:
            return out.stdout.strip()
    return "load average: " + ", ".join(f"{x:.2f}" for x in os.getloadavg())


def _timed(fn):
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


def run(quick=False, *, n_rounds=None, n_jobs=2, repeats=None, random_state=0) -> list:
    """Time both implementations side by side.

    Parameters
    ----------
    quick : bool, default=False
        20 rounds, one repeat: a smoke test.
    n_rounds : int, optional
        Bootstrap rounds (default 200).
    n_jobs : int, default=2
        Workers of the parallel run.
    repeats : int, optional
        Alternated repeats, best kept (default 3; 1 when quick).
    random_state : int, default=0
        The seed given to both (same bootstrap samples).

    Returns
    -------
    rows : list of dict
        One per implementation: ``impl``, ``n_jobs``, ``rounds``, ``best_s``, ``times``,
        ``ratio`` (best / mlxtend's best), ``loss``, ``bias``, ``variance``, ``cold_s``
        (first call, pool start included), ``load_before``, ``load_after``.  Without
        mlxtend: one row ``{"skipped": reason}``.
    """
    try:
        from mlxtend.evaluate import bias_variance_decomp
    except ImportError:
        return [{"skipped": "mlxtend is not installed (python -m pip install mlxtend)"}]
    n_rounds = n_rounds or (20 if quick else 200)
    repeats = repeats or (1 if quick else 3)
    d = load_dataset("breast_cancer")
    X_tr, X_te, y_tr, y_te = train_test_split(d.X, d.y, test_size=0.3, random_state=0)
    tree = DecisionTreeClassifier(random_state=0)

    def ours(jobs):
        r = bias_variance(tree, X_tr, y_tr, method="holdout", X_test=X_te, y_test=y_te,
                          n_bootstrap=n_rounds, n_jobs=jobs, random_state=random_state)
        return r.loss, r.bias2, r.variance

    def mlxtend():
        return tuple(float(v) for v in bias_variance_decomp(
            tree, X_tr, y_tr, X_te, y_te, loss="0-1_loss", num_rounds=n_rounds,
            random_seed=random_state))

    runs = [("mlxtend", 1, mlxtend), ("margin_opt", 1, lambda: ours(1)),
            ("margin_opt", n_jobs, lambda: ours(n_jobs))]
    load_before = _load()
    cold = [_timed(fn)[0] for _, _, fn in runs]  # warm-up: starts the worker pool
    times = [[] for _ in runs]
    results = [None] * len(runs)
    for _ in range(repeats):
        for k, (_, _, fn) in enumerate(runs):
            t, results[k] = _timed(fn)
            times[k].append(t)
    load_after = _load()
    ref = min(times[0])
    return [{"impl": name, "n_jobs": jobs, "rounds": n_rounds, "best_s": min(times[k]),
             "times": times[k], "ratio": min(times[k]) / ref, "loss": results[k][0],
             "bias": results[k][1], "variance": results[k][2], "cold_s": cold[k],
             "load_before": load_before, "load_after": load_after}
            for k, (name, jobs, _) in enumerate(runs)]


def format_rows(rows) -> str:
    """A plain-text table of :func:`run`'s rows, with the machine's load."""
    if rows and "skipped" in rows[0]:
        return f"bias-variance: skipped: {rows[0]['skipped']}"
    head = (f"{'impl':<11} {'n_jobs':>6} {'rounds':>6} {'best s':>7} {'ratio':>6} "
            f"{'cold s':>7} {'loss':>8} {'bias':>8} {'variance':>8}  times s")
    lines = ["bias-variance (holdout, 0-1 loss): DecisionTreeClassifier on breast_cancer "
             "(398 train / 171 test), ours vs mlxtend bias_variance_decomp", head]
    for r in rows:
        lines.append(f"{r['impl']:<11} {r['n_jobs']:>6} {r['rounds']:>6} {r['best_s']:7.3f} "
                     f"{r['ratio']:6.2f} {r['cold_s']:7.3f} {r['loss']:8.5f} {r['bias']:8.5f} "
                     f"{r['variance']:8.5f}  " + " ".join(f"{t:.3f}" for t in r["times"]))
    lines.append(f"load before: {rows[0]['load_before']}")
    lines.append(f"load after:  {rows[0]['load_after']}")
    return "\n".join(lines)
