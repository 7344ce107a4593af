"""Benchmark suite ``conditions``: a fit in the conditions users run it in.

Every row is timed in fresh processes (the thread count is a process's setting), side
by side with the same work on one thread (``MARGIN_OPT_NUM_THREADS=1``) or with the peer:

- ``idle``: one ``SVC(gamma=1/d)`` fit (a9a.t where the shared data folder has it,
  else the ``smo`` suite's synthetic set), default threads against one thread;
- ``two at once``: two processes fitting it at the same time, against the same pair
  on one thread each and against a pair of LIBSVM fits;
- ``beside busy loops``: one fit with two busy-loop processes beside it, default
  threads against one thread under the same load;
- ``GridSearchCV n_jobs=2``: ``GridSearchCV(SVC(), {"C": [1, 10], "gamma": [0.01, 0.05,
  "scale"]}, cv=3, n_jobs=2)`` on digits (X/16) from a fresh process (its workers'
  imports included), against scikit-learn's SVC;
- ``import``: ``import margin_opt`` against ``import sklearn.svm`` in a fresh process.

Each time is the best over ``repeats`` alternated runs; the machine's load is printed
beside the table (measure on a quiet machine: the busy rows make their own load).
margin_opt's bytecode is compiled first (``compileall``), as ``pip install`` does for
an installed package and for the peers: an editable install run with
``PYTHONDONTWRITEBYTECODE`` would otherwise compile every module in every process.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

from .peers import load_average, load_line

__all__ = ["run", "format_rows"]

_WORKER = "margin_opt.bench.conditions"


def _data(quick):
    """(X, y, name): a9a.t from the shared data folder, else the synthetic set."""
    if not quick:
        try:
            from ..datasets import load_dataset
            d = load_dataset("a9a.t")
            X = d.X.copy()           # int32 indices, as load_svmlight_file gives (LIBSVM's)
            X.indices, X.indptr = X.indices.astype("int32"), X.indptr.astype("int32")
            return X, d.y, "a9a.t"
        except Exception:                              # noqa: BLE001  (absent: synthetic)
            pass
    from .smo import synthetic
    n = 2000 if quick else 10000
    X, y = synthetic(n)
    return X, y, f"synthetic n={n}"


def _fit_once(which, quick):
    X, y, _ = _data(quick)
    gamma = 1.0 / X.shape[1]
    if which == "libsvm":
        from sklearn.svm import SVC
    else:
        from .. import SVC
        SVC(gamma=gamma).fit(X[:200], y[:200])        # first-use costs, not timed
    t = time.perf_counter()
    SVC(gamma=gamma).fit(X, y)
    return time.perf_counter() - t


def _grid_once(which):
    from sklearn.datasets import load_digits
    from sklearn.model_selection import GridSearchCV
    if which == "libsvm":
        from sklearn.svm import SVC
    else:
        from .. import SVC
    X, y = load_digits(return_X_y=True)
    grid = {"C": [1, 10], "gamma": [0.01, 0.05, "scale"]}
    t = time.perf_counter()
    GridSearchCV(SVC(), grid, cv=3, n_jobs=2).fit(X / 16, y)
    return time.perf_counter() - t


_IMPORT = ("import json, time; t = time.perf_counter(); import {}; "
           "print(json.dumps({{'seconds': time.perf_counter() - t}}))")


def _spawn(task, which, quick, one_thread=False):
    env = dict(os.environ)
    if one_thread:
        env["MARGIN_OPT_NUM_THREADS"] = "1"       # the compiled core's pool (THREADS_ENV)
    if task == "import":                  # a bare interpreter: nothing imported before
        module = "sklearn.svm" if which == "libsvm" else "margin_opt"
        cmd = [sys.executable, "-c", _IMPORT.format(module)]
    else:
        cmd = [sys.executable, "-m", _WORKER, task, which, str(int(quick))]
    return subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, text=True)


def _wait(procs, timeout=900):
    """The seconds each worker printed; every worker ended, even when one fails."""
    out = []
    try:
        for p in procs:
            stdout, _ = p.communicate(timeout=timeout)
            if p.returncode != 0:
                raise RuntimeError(f"a benchmark worker failed (exit status {p.returncode})")
            out.append(json.loads(stdout.strip().splitlines()[-1])["seconds"])
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
    return out


def _compile_bytecode():
    """Write margin_opt's bytecode, as ``pip install`` does (see the module's note)."""
    import compileall
    from pathlib import Path
    compileall.compile_dir(str(Path(__file__).resolve().parents[1]), quiet=2)


def _busy_loops(k):
    return [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(k)]


def run(quick=False, repeats=None):
    """Run the suite.

    Parameters
    ----------
    quick : bool, default=False
        The synthetic set at n = 2000 instead of a9a.t, one repeat (a smoke test).
    repeats : int, optional
        Alternated runs per row (default 3; 1 with ``quick``).

    Returns
    -------
    rows : list of dict
        ``row``, ``data``, ``ours`` (seconds), ``base`` (seconds of the comparison:
        one thread, or the peer), ``base_name``, ``ratio`` (ours / base), ``load``
        (1-minute load average before the row).
    """
    reps = repeats or (1 if quick else 3)
    _compile_bytecode()
    _, _, name = _data(quick)
    rows = []

    def best_of(variants, runs=reps, copies=1):
        """{variant: the best over ``runs`` alternated rounds of the slowest of
        ``copies`` processes started together}; a variant is ``(task, which, one)``."""
        best = dict.fromkeys(variants, float("inf"))
        for _ in range(runs):
            for key, (task, which, one) in variants.items():
                procs = [_spawn(task, which, quick, one) for _ in range(copies)]
                best[key] = min(best[key], max(_wait(procs)))
        return best

    def row(label, data, ours, base, base_name, load):
        rows.append({"row": label, "data": data, "ours": ours, "base": base,
                     "base_name": base_name, "ratio": ours / base, "load": load})

    fits = {"ours": ("fit", "ours", False), "one": ("fit", "ours", True)}
    load = load_average()                   # idle: default threads against one thread
    best = best_of(fits)
    row("idle", name, best["ours"], best["one"], "one thread", load)

    load = load_average()                   # two processes at once: the slower of each
    best = best_of({**fits, "libsvm": ("fit", "libsvm", False)}, copies=2)
    row("two at once", name, best["ours"], best["one"], "one thread each", load)
    row("two at once", name, best["ours"], best["libsvm"], "LIBSVM pair", load)

    loops = _busy_loops(2)                  # beside two busy loops
    try:
        time.sleep(0.5)
        load = load_average()
        best = best_of(fits)
    finally:
        for p in loops:
            p.kill()
            p.wait()
    row("beside 2 busy loops", name, best["ours"], best["one"], "one thread", load)

    # GridSearchCV(n_jobs=2) from a fresh process, and the import
    load = load_average()
    best = best_of({"ours": ("grid", "ours", False), "libsvm": ("grid", "libsvm", False)})
    row("GridSearchCV n_jobs=2", "digits", best["ours"], best["libsvm"], "scikit-learn",
        load)
    load = load_average()
    best = best_of({"ours": ("import", "ours", False), "libsvm": ("import", "libsvm", False)},
                   max(reps, 5))
    row("import", "-", best["ours"], best["libsvm"], "import sklearn.svm", load)
    return rows


def format_rows(rows) -> str:
    """The suite's table as text, with the load line."""
    lines = [f"conditions: fresh processes, best of the alternated runs; {load_line()}",
             f"{'row':<22} {'data':<18} {'ours s':>8} {'base s':>8} {'ratio':>6}  "
             f"{'base':<20} {'load':>5}"]
    for r in rows:
        lines.append(f"{r['row']:<22} {r['data']:<18} {r['ours']:>8.3f} {r['base']:>8.3f} "
                     f"{r['ratio']:>6.2f}  {r['base_name']:<20} {r['load']:>5.2f}")
    return "\n".join(lines)


def _main(argv):
    task, which, quick = argv[0], argv[1], bool(int(argv[2]))
    seconds = {"fit": lambda: _fit_once(which, quick), "grid": lambda: _grid_once(which)}[task]()
    print(json.dumps({"seconds": seconds}))


if __name__ == "__main__":
    _main(sys.argv[1:])
