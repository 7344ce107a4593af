"""Benchmark rows: the Crammer–Singer SVM (sequential dual method) against liblinear.

``LinearSVC(multi_class="crammer_singer", fit_intercept=False)`` (liblinear's
Solver_MCSVM_CS at scikit-learn's defaults, tol 1e-4, max_iter 1000) and ours,
``SVC(kernel="linear", multi_class="crammer_singer", fit_intercept=False)``, certified at
1e-6, solve the same problem: min ½Σ_r‖w_r‖² + C Σᵢ max_r (1 − δ_{yᵢr} + w_rᵀxᵢ − w_{yᵢ}ᵀxᵢ)
with no intercept (liblinear's "intercept" would be a regularized bias column; our
``fit_intercept=True`` is the free intercept of Hsu and Lin, another problem).  Both
run side by side in one process, alternated, the best of ``repeats`` kept, with the
load average printed beside them (the machine may be shared).

Data: ``load_digits`` (1797 × 64, 10 classes, raw pixels 0–16) and a 10-class
text-like set (:func:`margin_opt.datasets.make_text_like` with ``n_classes=10``:
n = 50 000, d = 20 000, ~40 term draws a row, the label the argmax of a planted linear
rule per class with 3 % flipped), the generator of ``margin-opt bench linear``.
"""

from __future__ import annotations

import time
import warnings

import numpy as np

__all__ = ["run", "format_rows", "DATASETS"]

DATASETS = ("digits", "text-50000")
QUICK = ("digits", "text-5000")
#: the text-like sets' number of classes
N_CLASSES = 10


def load(name):
    """(X, y) of a row's data set: ``digits`` (raw pixels) or ``text-<n>``."""
    if name == "digits":
        from sklearn.datasets import load_digits

        return load_digits(return_X_y=True)
    from ..datasets import make_text_like

    return make_text_like(n_samples=int(name.split("-")[1]), n_classes=N_CLASSES)


def primal_objective(X, y, W, C=1.0):
    """½‖W‖² + C Σᵢ max_r (1 − δ_{yᵢr} + fᵢᵣ − f_{iyᵢ}) of weights W (n_features, k)."""
    F = np.asarray(X @ W)
    n = F.shape[0]
    Fy = F[np.arange(n), y]
    F = F + 1.0
    F[np.arange(n), y] -= 1.0
    return 0.5 * float(np.sum(W * W)) + C * float(np.sum(F.max(axis=1) - Fy))


def compare(name, *, repeats=3):
    """Ours (certified at 1e-6) and liblinear (defaults) on one data set, alternated.

    Returns
    -------
    row : dict
        Best times, their ratio, the load average, both primal objectives (liblinear's
        from its ``coef_``), prediction agreement, our passes and certificate.
    """
    from sklearn.svm import LinearSVC

    from ..estimators.svc import SVC
    from .peers import load_average

    X, y = load(name)
    best = {"ours": np.inf, "liblinear": np.inf}
    fits = {}
    loads = []
    for _ in range(repeats):
        loads.append(load_average())
        t0 = time.perf_counter()
        fits["ours"] = SVC(kernel="linear", multi_class="crammer_singer",
                           fit_intercept=False).fit(X, y)
        best["ours"] = min(best["ours"], time.perf_counter() - t0)
        t0 = time.perf_counter()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            fits["liblinear"] = LinearSVC(multi_class="crammer_singer",
                                          fit_intercept=False).fit(X, y)
        best["liblinear"] = min(best["liblinear"], time.perf_counter() - t0)
    ours, lib = fits["ours"], fits["liblinear"]
    p_ours = ours.certificate_.quantities["primal_objective"]
    p_lib = primal_objective(X, y, lib.coef_.T)
    return {"data": name, "n": int(X.shape[0]), "d": int(X.shape[1]),
            "classes": int(ours.classes_.size), "time_ours": best["ours"],
            "time_liblinear": best["liblinear"], "ratio": best["ours"] / best["liblinear"],
            "load": float(np.mean(loads)), "passes": int(ours.n_iter_[0]),
            "liblinear_iter": int(np.max(lib.n_iter_)),
            "liblinear_converged": not any("converge" in str(w.message) for w in caught),
            "certified": bool(ours.certificate_.ok), "gap": float(
                ours.certificate_.quantities["duality_gap_abs"]) / max(1.0, abs(p_ours)),
            "polished": bool(ours.solution_.raw.get("polished", False)),
            "primal_ours": p_ours, "primal_liblinear": p_lib,
            "excess_liblinear": (p_lib - p_ours) / p_ours,
            "agreement": float(np.mean(ours.predict(X) == lib.predict(X))),
            "repeats": repeats}


def run(quick=False, datasets=None, repeats=None):
    """The rows (``quick``: digits and a 5 000-sample text-like set, two repeats).

    Returns
    -------
    rows : list of dict
    """
    from ..estimators.svc import SVC

    X, y = load("digits")
    SVC(kernel="linear", multi_class="crammer_singer", fit_intercept=False).fit(
        X[:200], y[:200])                                       # warm up first
    from ..datasets import make_text_like

    Xt, yt = make_text_like(n_samples=300, n_features=500, n_classes=N_CLASSES)
    SVC(kernel="linear", multi_class="crammer_singer", fit_intercept=False).fit(Xt, yt)
    names = datasets or (QUICK if quick else DATASETS)
    return [compare(name, repeats=repeats or (2 if quick else 3)) for name in names]


def format_rows(rows) -> str:
    """The rows as a table, with the load average beside them."""
    from .peers import load_line

    lines = ["crammer-singer: SVC(kernel='linear', multi_class='crammer_singer', "
             "fit_intercept=False) certified at 1e-6 vs liblinear's "
             "LinearSVC(multi_class='crammer_singer', fit_intercept=False) at tol 1e-4, "
             "max_iter 1000 (the same problem, no intercept); best of alternated runs",
             f"{'data':<12}{'n':>7}{'d':>7}{'k':>4}{'ours s':>9}{'liblin s':>10}{'ratio':>7}"
             f"{'load':>6}{'passes':>8}{'lib it':>8}{'cert':>6}{'gap':>9}"
             f"{'lib P excess':>13}{'agree':>8}"]
    for r in rows:
        lines.append(
            f"{r['data']:<12}{r['n']:>7}{r['d']:>7}{r['classes']:>4}{r['time_ours']:>9.3f}"
            f"{r['time_liblinear']:>10.3f}{r['ratio']:>7.2f}{r['load']:>6.1f}{r['passes']:>8}"
            f"{r['liblinear_iter']:>7}{'' if r['liblinear_converged'] else '*'}"
            f"{'yes' if r['certified'] else 'NO':>6}{r['gap']:>9.1e}"
            f"{r['excess_liblinear']:>13.1e}{100 * r['agreement']:>7.2f}%")
    lines.append("lib P excess: (liblinear's primal − our certified optimum) / optimum; "
                 "* liblinear warned that it did not converge")
    lines.append(load_line())
    return "\n".join(lines)
