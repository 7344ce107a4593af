"""Benchmark suite ``multiclass``: certified one-vs-one SVC against scikit-learn's SVC.

Both fit all k(k − 1)/2 pairs on the same standardized data with the same kernel
(RBF, ``gamma="scale"``), C = 1 and cache (200 MB), side by side in one process; our
kernels JIT-compiled first, runs alternated and the best of ``repeats`` kept.  Ours
is timed as a user gets it: every pair solved and certified (``SVC(tol=…)``: SMO
stops where the certificate holds at that tolerance, then each pair is certified).
Rows at ``tol=1e-3`` (LIBSVM's default stopping tolerance, ours certified at 1e-3)
and at our default ``tol=1e-6``.  BLAS runs on one thread (LIBSVM is
single-threaded), and ``uptime`` is printed beside the table: the machine is shared.

Data: ``load_digits`` (1797 × 64, 10 classes, 45 pairs) and
``make_classification(20000, 20, n_informative=10, n_classes=5)`` (10 pairs).
"""

from __future__ import annotations

import os
import subprocess
import time

import numpy as np

__all__ = ["run", "format_rows", "DATASETS"]

DATASETS = ("digits", "classification-20000")
QUICK = ("digits", "classification-3000")


def load(name):
    """Standardized (X, y) of a suite data set."""
    from sklearn.datasets import load_digits, make_classification
    from sklearn.preprocessing import StandardScaler

    if name == "digits":
        X, y = load_digits(return_X_y=True)
    else:
        n = int(name.split("-")[1])
        X, y = make_classification(n, 20, n_informative=10, n_classes=5, random_state=0)
    return StandardScaler().fit_transform(X), y


def compare(name, *, tols=(1e-3, 1e-6), repeats=3):
    """Time ours (each ``tol``) and scikit-learn's SVC, alternated; JSON-ready rows."""
    from sklearn.svm import SVC as SkSVC
    from threadpoolctl import threadpool_limits

    from ..estimators.svc import SVC

    X, y = load(name)
    best = {"libsvm": np.inf, **{t: np.inf for t in tols}}
    fits = {}
    with threadpool_limits(1):
        for _ in range(repeats):
            t0 = time.perf_counter()
            fits["libsvm"] = SkSVC().fit(X, y)
            best["libsvm"] = min(best["libsvm"], time.perf_counter() - t0)
            for tol in tols:
                t0 = time.perf_counter()
                fits[tol] = SVC(tol=tol).fit(X, y)
                best[tol] = min(best[tol], time.perf_counter() - t0)
    ref = fits["libsvm"]
    pred_ref = ref.predict(X)
    rows = []
    for tol in tols:
        ours = fits[tol]
        cert = ours.certificate_
        rows.append({
            "data": name, "n": int(X.shape[0]), "d": int(X.shape[1]),
            "classes": int(ours.classes_.size), "pairs": len(cert), "tol": tol,
            "time_ours": best[tol], "time_libsvm": best["libsvm"],
            "ratio": best[tol] / best["libsvm"],
            "agreement": float(np.mean(ours.predict(X) == pred_ref)),
            "nsv_ours": int(ours.n_support_.sum()), "nsv_libsvm": int(ref.n_support_.sum()),
            "certified": sum(c.ok for _, c in cert), "kkt_max": cert.kkt_violation,
            "shared_gram": bool(ours._shared_gram), "repeats": repeats})
    return rows


def run(quick=False, datasets=None, repeats=None):
    """Run the suite (``quick``: digits and n = 3000, one repeat).

    Returns
    -------
    rows : list of dict
    """
    from ..estimators.svc import SVC

    X, y = load("digits")
    SVC().fit(X[:200], y[:200])                                 # JIT compile first
    names = datasets or (QUICK if quick else DATASETS)
    rows = []
    for name in names:
        rows += compare(name, repeats=repeats or (1 if quick else 3))
    return rows


def format_rows(rows) -> str:
    """The suite's table as text, with the machine's load."""
    try:
        load = subprocess.run(["uptime"], capture_output=True, text=True, check=False
                              ).stdout.strip()
    except OSError:     # no uptime here: the load averages, as uptime prints them
        load = "load average: " + ", ".join(f"{v:.2f}" for v in os.getloadavg())
    lines = ["multiclass: certified one-vs-one SVC (margin_opt) vs sklearn.svm.SVC (LIBSVM), "
             "RBF gamma=scale, C=1, best of repeats, BLAS on 1 thread",
             f"{'data':<22}{'n':>6}{'k':>3}{'tol':>7}{'ours s':>9}{'LIBSVM s':>10}{'ratio':>7}"
             f"{'agree':>8}{'nSV':>13}{'certified':>11}{'max KKT':>9}"]
    for r in rows:
        lines.append(
            f"{r['data']:<22}{r['n']:>6}{r['classes']:>3}{r['tol']:>7.0e}{r['time_ours']:>9.3f}"
            f"{r['time_libsvm']:>10.3f}{r['ratio']:>7.2f}{100 * r['agreement']:>7.2f}%"
            f"{r['nsv_ours']:>7}/{r['nsv_libsvm']:<5}{r['certified']:>6}/{r['pairs']:<4}"
            f"{r['kkt_max']:>9.1e}")
    lines.append(f"load: {load}")
    return "\n".join(lines)
