"""Benchmark suite ``smo``: our SMO against LIBSVM and oneDAL, side by side.

Our SMO, scikit-learn's SVC (LIBSVM) and, where scikit-learn-intelex is installed,
``sklearnex.svm.SVC`` (oneDAL) solve the same C-SVC dual (same data, kernel, C,
tol, 200 MB cache) in one process, and ``margin_opt.SVC()`` is timed at its
defaults (tol 1e-6, certificate included); our kernels are JIT-compiled on a
small problem before any timing, runs alternate and the best of ``repeats`` is
kept, so the ratios are robust to other load on the machine (whose load average is
recorded with every row).  Each
objective (½αᵀQα − 1ᵀα, LIBSVM's "obj") is evaluated by the same code from
the returned α and compared with a tight reference (our SMO at ``ref_tol``).

Suites: synthetic ``make_classification(n, 20, n_informative=10, flip_y=0.05)``
standardized, RBF γ = 1/20, C = 1, and the shared ``a9a.t`` (sparse), RBF γ = 1/123,
C = 1.  :func:`memory_probe` reports the peak RSS of an n = 50000 RBF run in a
child process.
"""

from __future__ import annotations

import json as _json
import resource
import subprocess
import sys
import time
import warnings

import numpy as np
import scipy.sparse as sp

from ..progress import progress
from ..validation import libsvm_input

__all__ = ["run", "format_rows", "memory_probe", "synthetic", "svc_dual_qp", "compare"]

SIZES = (1000, 5000, 20000)
QUICK_SIZES = (500, 2000)


def synthetic(n, random_state=0):
    """The issue's synthetic set: ``make_classification(n, 20, 10 informative, flip_y=0.05)``.

    Returns
    -------
    X : ndarray of shape (n, 20), standardized
    y : ndarray of shape (n,) in {−1, +1}
    """
    from sklearn.datasets import make_classification
    from sklearn.preprocessing import StandardScaler

    X, y = make_classification(n, 20, n_informative=10, flip_y=0.05, random_state=random_state)
    return StandardScaler().fit_transform(X), np.where(y > 0, 1.0, -1.0)


def svc_dual_qp(X, y, C, gamma):
    """The C-SVC dual with an RBF kernel as a :class:`~margin_opt.standard_forms.DualQP`."""
    from ..kernels import make_kernel
    from ..standard_forms import DualQP

    return DualQP(X=X, kernel=make_kernel("rbf", X, gamma=gamma), y=y, p=-np.ones(y.size),
                  upper=np.full(y.size, float(C)))


def _objective(qp, alpha, chunk=256):
    """½αᵀQα + pᵀα from kernel rows of the support vectors, ``chunk`` rows at a time."""
    nz = np.flatnonzero(alpha)
    quad = 0.0
    for s in range(0, nz.size, chunk):
        idx = nz[s:s + chunk]
        quad += float((alpha[idx] * qp.y[idx]) @ (qp.kernel_rows(idx)[:, nz] @ (alpha[nz]
                                                                                 * qp.y[nz])))
    return 0.5 * quad + float(qp.p @ alpha)


def _warm_up():
    """Run every path the timed runs use once, outside the timings (their imports, the
    compiled core's pool started)."""
    from ..estimators.svc import SVC as OurSVC
    from ..solvers.smo import solve_smo

    X, y = synthetic(200)
    solve_smo(svc_dual_qp(X, y, 1.0, 0.05))
    solve_smo(svc_dual_qp(sp.csr_matrix(X), y, 1.0, 0.05), cache_size=0.001)
    with warnings.catch_warnings():                  # parallel whole rows (n ≥ 8192)
        warnings.simplefilter("ignore")
        solve_smo(svc_dual_qp(np.tile(X, (50, 1)), np.tile(y, 50), 1.0, 0.05), max_iter=3)
    OurSVC(gamma=0.05).fit(X, y)
    OurSVC(gamma=0.05).fit(sp.csr_matrix(X), y)


def compare(X, y, *, name, C=1.0, gamma, tol=1e-3, ref_tol=1e-6, repeats=3, cache_size=200,
            default=True):
    """Time our SMO, LIBSVM, oneDAL (where installed) and ``margin_opt.SVC()`` on one
    problem, alternated, best of ``repeats``; return one JSON-ready row.

    Parameters
    ----------
    X : {ndarray, sparse matrix} of shape (n, d)
    y : ndarray of shape (n,) in {−1, +1}
    name : str
        Data set label.
    C, gamma : float
        Box bound and RBF coefficient.
    tol : float, default=1e-3
        Stopping tolerance of the three solvers (m − M ≤ tol).
    ref_tol : float, default=1e-6
        Tolerance of the reference run (our SMO) the objectives are measured from.
    repeats : int, default=3
        Alternating runs of each; the best time is kept.
    cache_size : float, default=200
        Kernel cache of each, MB.
    default : bool, default=True
        Also time ``margin_opt.SVC(C=C, kernel="rbf", gamma=gamma)`` at its defaults
        (tol 1e-6, certificate included) and record whether the certificate holds.

    Returns
    -------
    row : dict
        Times (``time_ours``, ``time_libsvm``, ``time_onedal`` or None,
        ``time_default``), ratios, objectives and their distance from the reference,
        nSV, iterations, and the load average.
    """
    from sklearn.svm import SVC

    from ..estimators.svc import SVC as OurSVC
    from ..solvers.smo import solve_smo
    from .peers import best_of, load_average, onedal

    qp = svc_dual_qp(X, y, C, gamma)
    Xl = libsvm_input(X)
    fns = {"ours": lambda: solve_smo(qp, tol=tol, cache_size=cache_size),
           "libsvm": lambda: SVC(C=C, kernel="rbf", gamma=gamma, tol=tol,
                                 cache_size=cache_size).fit(Xl, y)}
    DAL = onedal("SVC")
    if DAL is not None:
        fns["onedal"] = lambda: DAL(C=C, kernel="rbf", gamma=gamma, tol=tol,
                                    cache_size=cache_size).fit(X, y)
    if default:
        fns["default"] = lambda: OurSVC(C=C, kernel="rbf", gamma=gamma).fit(X, y)
    load = load_average()
    times, out = best_of(fns, repeats)
    res, svc = out["ours"], out["libsvm"]
    a_lib = np.zeros(y.size)
    coef = svc.dual_coef_
    a_lib[svc.support_] = np.abs(np.asarray(coef.todense() if sp.issparse(coef) else coef)[0])
    ref = solve_smo(qp, tol=ref_tol, gap_tol=ref_tol, cache_size=cache_size)
    obj_ref = _objective(qp, ref.x)
    obj_ours, obj_lib = _objective(qp, res.x), _objective(qp, a_lib)
    t_dal = times.get("onedal")
    row = {
        "data": name, "n": int(X.shape[0]), "d": int(X.shape[1]), "sparse": sp.issparse(X),
        "kernel": f"rbf(gamma={gamma:.4g})", "C": float(C), "tol": float(tol),
        "time_ours": times["ours"], "time_libsvm": times["libsvm"], "time_onedal": t_dal,
        "ratio": times["ours"] / times["libsvm"],
        "ratio_onedal": times["ours"] / t_dal if t_dal else None,
        "obj_ours": obj_ours, "obj_libsvm": obj_lib, "obj_ref": obj_ref, "ref_tol": ref_tol,
        "rel_err_ours": abs(obj_ours - obj_ref) / abs(obj_ref),
        "rel_err_libsvm": abs(obj_lib - obj_ref) / abs(obj_ref),
        "nsv_ours": int(np.count_nonzero(res.x)), "nsv_libsvm": int(svc.support_.size),
        "iter_ours": int(res.nit), "iter_libsvm": int(np.sum(svc.n_iter_)),
        "b_ours": float(res.b), "b_libsvm": float(svc.intercept_[0]),
        "cache_rows_computed": res.cache["misses"],
        "repeats": int(repeats), "load": load,
    }
    if default:
        est = out["default"]
        row.update(time_default=times["default"], default_certified=bool(est.certificate_.ok),
                   default_vs_onedal=times["default"] / t_dal if t_dal else None,
                   default_vs_libsvm=times["default"] / times["libsvm"])
    return row


def run(quick=False, sizes=None, json=None, *, datasets=("a9a.t",), tol=1e-3, ref_tol=1e-6,
        repeats=5, memory=False, default=True):
    """Run the suite and return its rows.

    Parameters
    ----------
    quick : bool, default=False
        Small sizes (500, 2000), no real data, one repeat: a smoke test.
    sizes : sequence of int, optional
        Synthetic sizes (default 1000, 5000, 20000).
    json : str or path, optional
        Also write the rows as JSON to this file.
    datasets : sequence of str, default=("a9a.t",)
        Shared data sets to add (RBF γ = 1/n_features, C = 1); skipped with a note
        where the shared data folder is absent.
    tol, ref_tol : float
        Solver and reference tolerances (see :func:`compare`).
    repeats : int, default=5
        Alternating repeats for n ≤ 5000 (two above: each takes seconds).
    memory : bool or int, default=False
        Also run :func:`memory_probe` (True: n = 50000) and add its row.
    default : bool, default=True
        Also time ``margin_opt.SVC()`` at its defaults, certificate included.

    Returns
    -------
    rows : list of dict
    """
    from ..datasets import load_dataset, shared_data_dir

    if quick:
        sizes, datasets, repeats = sizes or QUICK_SIZES, (), 1
    sizes = SIZES if sizes is None else tuple(int(s) for s in sizes)
    _warm_up()
    rows = []
    for n in progress(sizes, desc="smo: sizes"):
        X, y = synthetic(n)
        rows.append(compare(X, y, name="synthetic", gamma=1 / 20, tol=tol, ref_tol=ref_tol,
                            repeats=repeats if n <= 5000 else min(repeats, 2),
                            default=default))
    for name in datasets:
        if shared_data_dir() is None:
            rows.append({"data": name, "skipped": "shared data folder ../shared/data absent"})
            continue
        ds = load_dataset(name)
        y = np.where(ds.y > 0, 1.0, -1.0)
        rows.append(compare(ds.X, y, name=name, gamma=1 / ds.X.shape[1], tol=tol,
                            ref_tol=ref_tol, repeats=min(repeats, 2), default=default))
    if memory:
        rows.append(memory_probe(50000 if memory is True else int(memory)))
    if json is not None:
        with open(json, "w") as fh:
            _json.dump(rows, fh, indent=2)
    return rows


def _rss_mb():
    """(current, peak) resident set size of this process in MB.

    From ``/proc/self/status`` (VmRSS, VmHWM) where it exists: ``ru_maxrss`` would
    also count the parent's memory at fork time, which survives ``exec`` on Linux.
    """
    try:
        with open("/proc/self/status") as fh:
            kv = dict(line.split(":", 1) for line in fh if ":" in line)
        return int(kv["VmRSS"].split()[0]) / 1024, int(kv["VmHWM"].split()[0]) / 1024
    except (OSError, KeyError, ValueError):
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        return peak, peak


def _memory_child(n, cache_size=200.0):
    """Child process of :func:`memory_probe`: print one JSON line."""
    from ..solvers.smo import solve_smo

    _warm_up()
    X, y = synthetic(n)
    qp = svc_dual_qp(X, y, 1.0, 1 / 20)
    base, _ = _rss_mb()
    t = time.perf_counter()
    res = solve_smo(qp, cache_size=cache_size)
    elapsed = time.perf_counter() - t
    _, peak = _rss_mb()
    print(_json.dumps({"data": "memory", "n": n, "d": 20, "kernel": "rbf(gamma=0.05)",
                       "cache_mb": cache_size, "rss_before_mb": base, "peak_rss_mb": peak,
                       "solver_extra_mb": peak - base, "nxn_mb": n * n * 8 / 2**20,
                       "time_ours": elapsed, "iter_ours": int(res.nit),
                       "status": res.status, "nsv_ours": int(np.count_nonzero(res.x))}))


def memory_probe(n=50000, cache_size=200.0):
    """Peak RSS (MB) of one RBF SMO run on n synthetic points, in a fresh process.

    Reports the RSS after loading data and compiling (``rss_before_mb``), the peak
    (``peak_rss_mb``) and the n×n matrix size it avoided (``nxn_mb``).
    """
    code = f"from margin_opt.bench.smo import _memory_child; _memory_child({int(n)}, {cache_size})"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    return _json.loads(out.stdout.strip().splitlines()[-1])


def _fmt(v, spec):
    return "—" if v is None else format(v, spec)


def format_rows(rows):
    """The rows as a plain-text table (one line per problem) under the load line."""
    from .peers import load_line

    head = (f"{'data':<10} {'n':>6} {'d':>4} {'oneDAL s':>9} {'LIBSVM s':>9} {'ours s':>8} "
            f"{'÷DAL':>5} {'÷LIB':>5} {'SVC() s':>8} {'÷DAL':>5} {'÷LIB':>5} {'cert':>4} "
            f"{'|Δ|/ref ours':>12} {'|Δ|/ref lib':>11} {'nSV':>11} {'iter':>13} {'load':>5}")
    lines = [f"SMO at tol 1e-3 vs LIBSVM and oneDAL; SVC() = margin_opt.SVC() defaults "
             f"(tol 1e-6, certificate included); {load_line()}", head, "-" * len(head)]
    for r in rows:
        if "skipped" in r:
            lines.append(f"{r['data']:<10} skipped: {r['skipped']}")
        elif r.get("data") == "memory":
            lines.append(f"memory     {r['n']:>6} {r['d']:>4} {r['kernel']:<16} "
                         f"{r['time_ours']:>8.2f}  peak RSS {r['peak_rss_mb']:.0f} MB "
                         f"(before solve {r['rss_before_mb']:.0f} MB, cache {r['cache_mb']:.0f}"
                         f" MB, n×n would be {r['nxn_mb']:.0f} MB)")
        else:
            cert = {True: "OK", False: "FAIL", None: "—"}[r.get("default_certified")]
            lines.append(
                f"{r['data']:<10} {r['n']:>6} {r['d']:>4} {_fmt(r['time_onedal'], '9.3f')} "
                f"{r['time_libsvm']:>9.3f} {r['time_ours']:>8.3f} "
                f"{_fmt(r['ratio_onedal'], '5.2f')} {r['ratio']:>5.2f} "
                f"{_fmt(r.get('time_default'), '8.3f')} "
                f"{_fmt(r.get('default_vs_onedal'), '5.2f')} "
                f"{_fmt(r.get('default_vs_libsvm'), '5.2f')} {cert:>4} "
                f"{r['rel_err_ours']:>12.1e} {r['rel_err_libsvm']:>11.1e} "
                f"{r['nsv_ours']:>5}/{r['nsv_libsvm']:<5} {r['iter_ours']:>6}/{r['iter_libsvm']:<6}"
                f" {r.get('load', 0.0):>5.2f}")
    return "\n".join(lines)
