"""Benchmark suite ``linear``: dual coordinate descent (``dcd``) against liblinear.

The rows of issue 31, side by side in one process, best of alternated runs (our code
compiled first), with the machine's load beside them; liblinear is scikit-learn's
``LinearSVC`` / ``LinearSVR`` at its defaults (tol 1e-4, max_iter 1000, dual=True).

- ``SVC(kernel="linear", C=1)`` (the free intercept, certified at 1e-6; the registry
  routes it to dcd) against ``LinearSVC(loss="hinge")`` on a9a.t
  (``load_svmlight_file(n_features=123)``) and on the text-like set
  (:func:`margin_opt.datasets.make_text_like`: n = 100 000, d = 20 000, ~40 non-zeros
  a row);
- ``LinearSVC()`` (squared hinge) against ``LinearSVC(dual=True)`` and ``LinearSVR()``
  against ``LinearSVR(loss="epsilon_insensitive", dual=True)`` on the text-like set.
- Crammer–Singer: ``SVC(kernel="linear", multi_class="crammer_singer",
  fit_intercept=False)`` against ``LinearSVC(multi_class="crammer_singer",
  fit_intercept=False)`` (the same problem, no intercept) on digits and on the 10-class
  text-like set, n = 50 000 (:mod:`margin_opt.bench.crammer_singer`'s data; that suite
  has the detailed columns).

liblinear's intercept is a regularized bias column, ours free: the problems differ
by that (docs/linear.md); each row says whether ours is certified at 1e-6 and gives
both primal objectives of OUR problem (liblinear's answer read in it) for scale.
"""

from __future__ import annotations

import numpy as np

from ..progress import progress

__all__ = ["run", "run_a9a", "format_rows", "crammer_singer_rows"]

#: the text-like set's size (quick: a smoke test)
TEXT = dict(n_samples=100_000, n_features=20_000, nnz_per_row=40)
QUICK_TEXT = dict(n_samples=5_000, n_features=2_000, nnz_per_row=40)


def _a9a():
    from sklearn.datasets import load_svmlight_file

    from ..datasets import shared_data_dir

    root = shared_data_dir()
    if root is None or not (root / "a9a.t").exists():
        return None
    return load_svmlight_file(str(root / "a9a.t"), n_features=123)


def _row(name, data, fns, repeats, ours_key, peer_key, objective):
    from .peers import best_of, load_average

    load = load_average()
    times, out = best_of(fns, repeats)
    ours, peer = out[ours_key], out[peer_key]
    cert = getattr(ours, "certificate_", None)
    return {"row": name, "data": data, "time_ours": times[ours_key],
            "time_liblinear": times[peer_key], "ratio": times[ours_key] / times[peer_key],
            "certified": None if cert is None else bool(cert.ok),
            "method": getattr(getattr(ours, "solution_", None), "method", "dcd"),
            "obj_ours": objective(_dense(ours.coef_).ravel(),
                                  float(np.ravel(ours.intercept_)[0])),
            "obj_liblinear": objective(peer.coef_.ravel(),
                                       float(np.ravel(peer.intercept_)[0])),
            "iter_liblinear": int(np.max(peer.n_iter_)), "repeats": repeats, "load": load}


def _dense(w) -> np.ndarray:
    """coef_ as an ndarray (an SVC fitted on sparse X has scikit-learn's CSR coef_)."""
    return w.toarray() if hasattr(w, "toarray") else np.asarray(w)


def _svc_objective(X, y, C, squared=False):
    yy = np.where(y == np.unique(y)[1], 1.0, -1.0)

    def obj(w, b):
        xi = np.maximum(0.0, 1.0 - yy * (np.asarray(X @ w).ravel() + b))
        return 0.5 * float(w @ w) + C * float(np.sum(xi ** 2 if squared else xi))
    return obj


def _svr_objective(X, y, C, eps):
    def obj(w, b):
        r = np.maximum(0.0, np.abs(y - np.asarray(X @ w).ravel() - b) - eps)
        return 0.5 * float(w @ w) + C * float(r.sum())
    return obj


def _a9a_row(X64, y9, reps):
    """The a9a.t row: ours on the data as loaded (int64 indices), liblinear on an int32
    copy (scikit-learn refuses int64 indices)."""
    import warnings

    from sklearn.exceptions import ConvergenceWarning
    from sklearn.svm import LinearSVC as LibSVC

    from ..estimators.svc import SVC

    X32 = X64.copy()
    X32.indices, X32.indptr = X32.indices.astype(np.int32), X32.indptr.astype(np.int32)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)   # liblinear at max_iter
        return _row('SVC(kernel="linear", C=1) vs LinearSVC(loss="hinge")', "a9a.t",
                    {"ours": lambda: SVC(kernel="linear", C=1.0).fit(X64, y9),
                     "liblinear": lambda: LibSVC(loss="hinge").fit(X32, y9)},
                    reps, "ours", "liblinear", _svc_objective(X64, y9, 1.0))


def run_a9a(repeats=7):
    """Only the a9a.t row (``python -m margin_opt.bench.linear``): compiled first on
    its first 2500 rows, then best of ``repeats`` alternated runs.

    Returns
    -------
    rows : list of dict
        One row, or none where ``../shared/data/a9a.t`` is absent.
    """
    from ..estimators.svc import SVC

    a9a = _a9a()
    if a9a is None:
        return []
    X64, y9 = a9a
    SVC(kernel="linear", C=1.0).fit(X64[:2500], y9[:2500])     # compile first
    return [_a9a_row(X64, y9, repeats)]


def run(quick=False, repeats=None):
    """Run the suite.

    Returns
    -------
    rows : list of dict
    """
    import warnings

    from sklearn.exceptions import ConvergenceWarning
    from sklearn.svm import LinearSVC as LibSVC
    from sklearn.svm import LinearSVR as LibSVR

    from ..datasets import make_text_like
    from ..estimators.linear import LinearSVC, LinearSVR
    from ..estimators.svc import SVC

    reps = repeats or (1 if quick else 3)
    text = QUICK_TEXT if quick else TEXT
    Xs, ys = make_text_like(**text, random_state=0)
    Xr, yr = make_text_like(**text, regression=True, random_state=1)
    LinearSVC().fit(Xs[:300], ys[:300])                 # compile first
    LinearSVR().fit(Xr[:300], yr[:300])
    sets = []
    a9a = _a9a()
    sets.append((f"text {Xs.shape[0]}×{Xs.shape[1]}", Xs, ys, Xs))
    if a9a is not None:
        SVC(kernel="linear", C=1.0).fit(a9a[0][:2500], a9a[1][:2500])   # compile first
    rows = [] if a9a is None else [_a9a_row(*a9a, reps)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)   # liblinear at max_iter
        for name, X, y, Xp in progress(sets, desc="linear: SVC(kernel='linear')"):
            rows.append(_row('SVC(kernel="linear", C=1) vs LinearSVC(loss="hinge")', name,
                             {"ours": lambda X=X, y=y: SVC(kernel="linear", C=1.0).fit(X, y),
                              "liblinear": lambda Xp=Xp, y=y: LibSVC(loss="hinge").fit(Xp, y)},
                             reps, "ours", "liblinear", _svc_objective(X, y, 1.0)))
        name = f"text {Xs.shape[0]}×{Xs.shape[1]}"
        rows.append(_row("LinearSVC() vs LinearSVC(dual=True)", name,
                         {"ours": lambda: LinearSVC().fit(Xs, ys),
                          "liblinear": lambda: LibSVC(dual=True).fit(Xs, ys)},
                         reps, "ours", "liblinear", _svc_objective(Xs, ys, 1.0, True)))
        rows.append(_row('LinearSVR() vs LinearSVR(loss="epsilon_insensitive", dual=True)',
                         name, {"ours": lambda: LinearSVR().fit(Xr, yr),
                                "liblinear": lambda: LibSVR(loss="epsilon_insensitive",
                                                            dual=True).fit(Xr, yr)},
                         reps, "ours", "liblinear", _svr_objective(Xr, yr, 1.0, 0.0)))
        rows += crammer_singer_rows(quick=quick, repeats=reps)
    return rows


def crammer_singer_rows(quick=False, repeats=3, datasets=None):
    """The Crammer–Singer rows: digits and the 10-class text-like set (quick: n = 5 000).

    Parameters
    ----------
    quick : bool, default=False
    repeats : int, default=3
    datasets : sequence of str, optional
        Names as :func:`margin_opt.bench.crammer_singer.load` reads them (``"digits"``,
        ``"text-<n>"``); None: the suite's.

    Returns
    -------
    rows : list of dict
        In this suite's row format; the objective is the Crammer–Singer primal.
    """
    from sklearn.svm import LinearSVC as LibSVC

    from ..estimators.svc import SVC
    from . import crammer_singer as cs

    X, y = cs.load("digits")
    SVC(kernel="linear", multi_class="crammer_singer", fit_intercept=False).fit(
        X[:200], y[:200])                                       # compile first
    rows = []
    for name in datasets or (cs.QUICK if quick else cs.DATASETS):
        X, y = cs.load(name)
        k = np.unique(y).size

        def objective(w, b, X=X, y=y, k=k):               # no intercept: b is 0
            return cs.primal_objective(X, y, w.reshape(k, -1).T)

        data = name if name == "digits" else f"text {X.shape[0]}×{X.shape[1]}"
        rows.append(_row('Crammer–Singer: SVC(kernel="linear") vs LinearSVC, no intercept', data,
                         {"ours": lambda X=X, y=y: SVC(
                             kernel="linear", multi_class="crammer_singer",
                             fit_intercept=False).fit(X, y),
                          "liblinear": lambda X=X, y=y: LibSVC(
                              multi_class="crammer_singer", fit_intercept=False).fit(X, y)},
                         repeats, "ours", "liblinear", objective))
    return rows


def format_rows(rows) -> str:
    """The suite's table as text, with the load line."""
    from .peers import load_line

    cert = {True: "OK", False: "FAIL", None: "—"}
    lines = ["linear: margin_opt (certified at 1e-6, free intercept) vs liblinear "
             f"(scikit-learn defaults: tol 1e-4, max_iter 1000); {load_line()}",
             f"{'work':<64}{'data':<18}{'ours s':>8}{'liblinear s':>12}{'ratio':>7}"
             f"{'cert':>6}{'method':>16}{'P ours':>13}{'P liblinear':>13}{'load':>6}"]
    for r in rows:
        lines.append(f"{r['row']:<64}{r['data']:<18}{r['time_ours']:>8.3f}"
                     f"{r['time_liblinear']:>12.3f}{r['ratio']:>7.2f}"
                     f"{cert[r['certified']]:>6}{r['method']:>16}{r['obj_ours']:>13.6g}"
                     f"{r['obj_liblinear']:>13.6g}{r.get('load', 0.0):>6.2f}")
    return "\n".join(lines)


if __name__ == "__main__":      # python -m margin_opt.bench.linear [repeats]: the a9a.t row
    import sys

    print(format_rows(run_a9a(int(sys.argv[1]) if len(sys.argv) > 1 else 7)))
