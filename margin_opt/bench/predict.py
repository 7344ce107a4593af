"""Benchmark suite ``predict``: using a fitted model, and the small fits of a model
search, against scikit-learn (LIBSVM) and oneDAL (scikit-learn-intelex, where
installed), side by side in one process, runs alternated and the best kept, the load
printed beside the table (the machine may be shared: read the ratios).

Rows
----
- ``decision_function dense``: ``SVC(gamma=0.05)`` fitted on
  ``make_classification(20000, 20)`` standardized, its decision values on 100 000
  standardized points (another draw); against oneDAL's model of the same data.
- ``predict sparse a9a.t``: ``SVC(gamma=1/123)`` fitted on a9a.t (the shared data
  folder; skipped where absent), predicting its 16 281 sparse rows; against oneDAL.
- ``probability fit``: ``SVC(probability=True, gamma=0.05)`` on a 3-class
  ``make_classification(5000, 20)`` standardized, against LIBSVM's, with each one's
  log-loss on 2000 held-out points.
- ``one-vs-one digits``: ``SVC(gamma=0.05)`` on ``load_digits`` (X / 16, 45 pairs,
  every pair certified at 1e-6) against LIBSVM's SVC at its defaults; ours as the
  thread policy gives (two threads where a core is free) and on one thread.
- ``GridSearchCV digits``: ``GridSearchCV(SVC(), {"C": [1, 10], "gamma": [0.01, 0.05,
  "scale"]}, cv=3, n_jobs=1)`` on digits (X / 16) against the same search of
  scikit-learn's SVC, in this process (warm); and with ``n_jobs=2`` (joblib's workers
  started by a first search, then kept).

The prediction rows also give each one's CPU time (all its threads, one more run):
the work done, which a shared machine's load changes far less than the wall time.
``quick``: small sizes, one repeat (a smoke test).
"""

from __future__ import annotations

import warnings

import numpy as np

__all__ = ["run", "format_rows"]


def _blobs(n, n_classes=2, seed=0):
    from sklearn.datasets import make_classification
    from sklearn.preprocessing import StandardScaler

    X, y = make_classification(n, 20, n_informative=10 if n_classes > 2 else 2,
                               n_classes=n_classes, random_state=seed)
    return StandardScaler().fit_transform(X), y


def _cpu(fns) -> dict:
    """CPU seconds of one more run of each (all the process's threads): the work
    done, which the other processes' load changes far less than the wall time."""
    import time

    out = {}
    for name, fn in fns.items():
        t = time.process_time()
        fn()
        out[name] = time.process_time() - t
    return out


def _row(work, data, times, ours="ours", peer=None, **extra):
    peer = peer or ("onedal" if times.get("onedal") is not None else "libsvm")
    t_peer = times.get(peer)
    return {"work": work, "data": data, "time_ours": times[ours],
            "time_libsvm": times.get("libsvm"), "time_onedal": times.get("onedal"),
            "peer": peer, "ratio": None if t_peer is None else times[ours] / t_peer, **extra}


def decision_dense(quick=False, repeats=3):
    from sklearn.svm import SVC as SkSVC

    from ..estimators.svc import SVC
    from .peers import best_of, load_average, onedal

    n, m = (2000, 10000) if quick else (20000, 100000)
    X, y = _blobs(n)
    Xq, _ = _blobs(m, seed=1)
    ours = SVC(gamma=0.05).fit(X, y)
    ours.decision_function(Xq[:100])                 # compiled first
    fns = {"ours": lambda: ours.decision_function(Xq)}
    DAL = onedal("SVC")
    if DAL is not None:
        dal = DAL(gamma=0.05).fit(X, y)
        fns["onedal"] = lambda: dal.decision_function(Xq)
    lib = SkSVC(gamma=0.05).fit(X, y)
    load = load_average()
    times, out = best_of(fns, repeats)
    cpu = _cpu(fns)
    sub = slice(0, 2000)
    ref = lib.decision_function(Xq[sub])
    return _row("decision_function dense", f"{n} train, {m} queries, d=20", times,
                n_sv=int(ours.support_.size),
                max_diff_libsvm=float(np.max(np.abs(out["ours"][sub] - ref))),
                cpu=cpu, load=load, repeats=repeats)


def predict_a9a(quick=False, repeats=3):
    from ..datasets import load_dataset
    from ..estimators.svc import SVC
    from .peers import best_of, load_average, onedal

    d = load_dataset("a9a.t")
    X, y = d.X, d.y
    if quick:
        X, y = X[:3000], y[:3000]
    ours = SVC(gamma=1 / 123).fit(X, y)
    ours.predict(X[:100])
    fns = {"ours": lambda: ours.predict(X)}
    DAL = onedal("SVC")
    if DAL is not None:
        dal = DAL(gamma=1 / 123).fit(X, y)
        fns["onedal"] = lambda: dal.predict(X)
    load = load_average()
    times, out = best_of(fns, repeats)
    cpu = _cpu(fns)
    agree = None if "onedal" not in out else int(np.sum(out["ours"] != out["onedal"]))
    return _row("predict sparse", f"a9a.t {X.shape[0]} rows", times,
                n_sv=int(ours.support_.size), disagreements_onedal=agree, cpu=cpu,
                load=load, repeats=repeats)


def probability_fit(quick=False, repeats=3):
    from sklearn.metrics import log_loss
    from sklearn.svm import SVC as SkSVC

    from ..estimators.svc import SVC
    from .peers import best_of, load_average

    n = 1000 if quick else 5000
    X, y = _blobs(n + 2000, n_classes=3)
    Xt, yt, Xh, yh = X[:n], y[:n], X[n:], y[n:]
    SVC(probability=True, gamma=0.05).fit(Xt[:200], yt[:200])
    fns = {"ours": lambda: SVC(probability=True, gamma=0.05, random_state=0).fit(Xt, yt),
           "libsvm": lambda: SkSVC(probability=True, gamma=0.05, random_state=0).fit(Xt, yt)}
    load = load_average()
    with warnings.catch_warnings():        # scikit-learn 1.9 deprecates probability=True
        warnings.simplefilter("ignore", FutureWarning)
        times, out = best_of(fns, repeats)
    ll = {k: float(log_loss(yh, m.predict_proba(Xh))) for k, m in out.items()}
    return _row("probability fit", f"3 classes, n={n}", times, peer="libsvm",
                log_loss_ours=ll["ours"], log_loss_libsvm=ll["libsvm"],
                log_loss_ratio=ll["ours"] / ll["libsvm"], load=load, repeats=repeats)


def _digits():
    from sklearn.datasets import load_digits

    X, y = load_digits(return_X_y=True)
    return X / 16.0, y


def ovo_digits(quick=False, repeats=9):
    from sklearn.svm import SVC as SkSVC
    from threadpoolctl import threadpool_limits

    from ..estimators.svc import SVC
    from ..parallel import ThreadPolicy, fit_threads, use_policy
    from .peers import best_of, load_average

    def one_thread():
        with use_policy(ThreadPolicy(max_threads=1)):
            return SVC(gamma=0.05).fit(X, y)

    X, y = _digits()
    SVC(gamma=0.05).fit(X[:300], y[:300])
    fns = {"ours": lambda: SVC(gamma=0.05).fit(X, y), "ours_1thread": one_thread,
           "libsvm": lambda: SkSVC(gamma=0.05).fit(X, y)}
    load, threads = load_average(), fit_threads()
    with threadpool_limits(1):
        times, out = best_of(fns, repeats)
    cert = out["ours"].certificate_
    return _row("one-vs-one fit", "digits, 45 pairs, gamma=0.05", times, peer="libsvm",
                certified=bool(cert.ok and out["ours_1thread"].certificate_.ok),
                one_thread=times["ours_1thread"], threads=threads, load=load,
                repeats=repeats)


def grid_digits(quick=False, repeats=3, n_jobs=1):
    from sklearn.model_selection import GridSearchCV
    from sklearn.svm import SVC as SkSVC

    from ..estimators.svc import SVC
    from .peers import best_of, load_average

    X, y = _digits()
    grid = {"C": [1, 10], "gamma": [0.01, 0.05, "scale"]}
    GridSearchCV(SVC(), grid, cv=3, n_jobs=n_jobs).fit(X, y)        # workers started
    fns = {"ours": lambda: GridSearchCV(SVC(), grid, cv=3, n_jobs=n_jobs).fit(X, y),
           "libsvm": lambda: GridSearchCV(SkSVC(), grid, cv=3, n_jobs=n_jobs).fit(X, y)}
    load = load_average()
    times, out = best_of(fns, repeats)
    return _row(f"GridSearchCV n_jobs={n_jobs}", "digits, 6 settings × 3 folds", times,
                peer="libsvm", best_ours=out["ours"].best_params_,
                best_libsvm=out["libsvm"].best_params_, load=load, repeats=repeats)


def run(quick=False, repeats=None, rows=None):
    """Run the suite.

    Parameters
    ----------
    quick : bool, default=False
        Small sizes, one repeat.
    repeats : int, optional
        Alternated runs per row (the best is kept).
    rows : sequence of str, optional
        A subset of "dense", "a9a", "probability", "ovo", "grid", "grid2" (n_jobs=2).

    Returns
    -------
    rows : list of dict
    """
    from ..progress import progress

    table = {"dense": decision_dense, "a9a": predict_a9a, "probability": probability_fit,
             "ovo": ovo_digits, "grid": grid_digits,
             "grid2": lambda **kw: grid_digits(n_jobs=2, **kw)}
    out = []
    for name in progress(list(rows or table), desc="predict: rows"):
        kw = {} if repeats is None and not quick else {"repeats": 1 if quick else repeats}
        try:
            out.append(table[name](quick=quick, **kw))
        except FileNotFoundError as exc:                  # a9a.t absent: say so
            out.append({"work": name, "skipped": str(exc)})
    return out


def format_rows(rows) -> str:
    """The suite's table as text, with the load line."""
    from .peers import load_line

    def f(v, spec=".3f"):
        return "—" if v is None else format(v, spec)

    lines = ["| work | data | ours (s) | LIBSVM (s) | oneDAL (s) | ratio (vs) | notes | load |",
             "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        if "skipped" in r:
            lines.append(f"| {r['work']} | skipped: {r['skipped']} | | | | | | |")
            continue
        notes = []
        if "max_diff_libsvm" in r:
            notes.append(f"max |Δ| vs LIBSVM {r['max_diff_libsvm']:.1e}, {r['n_sv']} SVs")
        if r.get("disagreements_onedal") is not None:
            notes.append(f"{r['disagreements_onedal']} labels differ from oneDAL's")
        if "log_loss_ours" in r:
            notes.append(f"log-loss {r['log_loss_ours']:.4f} vs {r['log_loss_libsvm']:.4f}")
        if r.get("cpu", {}).get(r["peer"]):
            c = r["cpu"]
            notes.append(f"CPU {c['ours']:.2f} vs {c[r['peer']]:.2f} s "
                         f"({c['ours'] / c[r['peer']]:.2f}×)")
        if r.get("one_thread") is not None:
            notes.append(f"one thread {r['one_thread']:.3f} s "
                         f"({r['one_thread'] / r['time_' + r['peer']]:.2f}×); the policy gave "
                         f"{r['threads']} at the start")
        if "certified" in r:
            notes.append("every pair certified" if r["certified"] else "NOT certified")
        if "best_ours" in r:
            notes.append(f"best {r['best_ours']} vs {r['best_libsvm']}")
        lines.append(f"| {r['work']} | {r['data']} | {f(r['time_ours'])} | "
                     f"{f(r['time_libsvm'])} | {f(r['time_onedal'])} | "
                     f"{f(r['ratio'], '.2f')}× ({r['peer']}) | {'; '.join(notes)} | "
                     f"{r['load']:.1f} |")
    return "\n".join(lines) + "\n" + load_line()
