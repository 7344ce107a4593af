"""Benchmark suite ``scale``: how SMO's time grows with n, against oneDAL.

Our SMO at tol 1e-3 and ``sklearnex.svm.SVC`` (oneDAL, where scikit-learn-intelex
is installed; else LIBSVM) on the synthetic set of the ``smo`` suite
(``make_classification(n, 20, 10 informative, flip_y=0.05)`` standardized, RBF
γ = 0.05, C = 1, 200 MB cache) at n = 2500 … 40000, side by side in one process,
alternated, best of ``repeats``.  The ratio should not grow with n.
"""

from __future__ import annotations

import numpy as np

from .peers import best_of, load_average, load_line, onedal
from .smo import _warm_up, svc_dual_qp, synthetic

__all__ = ["run", "format_rows"]

SIZES = (2500, 5000, 10000, 20000, 40000)
QUICK_SIZES = (500, 1000)


def run(quick=False, sizes=None, repeats=None, tol=1e-3, cache_size=200):
    """Run the suite.

    Parameters
    ----------
    quick : bool, default=False
        Small sizes, one repeat (a smoke test).
    sizes : sequence of int, optional
    repeats : int, optional
        Alternated runs per size (default 3 up to n = 10000, 1 above).
    tol : float, default=1e-3
    cache_size : float, default=200

    Returns
    -------
    rows : list of dict
        ``n``, ``peer`` ("oneDAL" or "LIBSVM"), ``time_ours``, ``time_peer``,
        ``ratio``, ``iter_ours``, ``nsv_ours``, ``load``.
    """
    from sklearn.svm import SVC

    from ..solvers.smo import solve_smo

    _warm_up()
    sizes = sizes or (QUICK_SIZES if quick else SIZES)
    DAL = onedal("SVC")
    peer, Peer = ("oneDAL", DAL) if DAL is not None else ("LIBSVM", SVC)
    rows = []
    for n in sizes:
        X, y = synthetic(int(n))
        qp = svc_dual_qp(X, y, 1.0, 0.05)
        reps = repeats or (1 if quick else (3 if n <= 10000 else 1))
        load = load_average()
        times, out = best_of({
            "ours": lambda qp=qp: solve_smo(qp, tol=tol, cache_size=cache_size),
            "peer": lambda X=X, y=y: Peer(C=1.0, kernel="rbf", gamma=0.05, tol=tol,
                                          cache_size=cache_size).fit(X, y)}, reps)
        res = out["ours"]
        rows.append({"n": int(n), "peer": peer, "time_ours": times["ours"],
                     "time_peer": times["peer"], "ratio": times["ours"] / times["peer"],
                     "iter_ours": int(res.nit), "nsv_ours": int(np.count_nonzero(res.x)),
                     "repeats": int(reps), "load": load})
    return rows


def format_rows(rows) -> str:
    """The suite's table as text, with the load line."""
    lines = [f"scale: SMO at tol 1e-3 vs the peer, synthetic RBF γ = 0.05, C = 1; {load_line()}",
             f"{'n':>7} {'peer':<7} {'ours s':>8} {'peer s':>8} {'ratio':>6} {'iter':>7} "
             f"{'nSV':>6} {'load':>5}"]
    for r in rows:
        lines.append(f"{r['n']:>7} {r['peer']:<7} {r['time_ours']:>8.3f} {r['time_peer']:>8.3f} "
                     f"{r['ratio']:>6.2f} {r['iter_ours']:>7} {r['nsv_ours']:>6} "
                     f"{r['load']:>5.2f}")
    return "\n".join(lines)
