"""What the benchmark suites share: the optional oneDAL peer, alternated best-of-k
timing and the machine load printed beside every table.

oneDAL is scikit-learn-intelex (``pip install "margin_opt[intelex]"``): its
``sklearnex.svm.SVC`` / ``SVR`` (Intel oneDAL, all cores, the "thunder" working-set
method) is the fastest CPU SVM a Python user can install.  It is an optional extra:
where it is absent its column reads "—".

Quiet-machine guidance: timings are only comparable side by side in one process.
Run on an idle machine (``uptime`` load well below the core count), compile our
code first (every suite does), alternate the solvers and keep the best of k runs;
the load average is recorded with every row.
"""

from __future__ import annotations

import os
import time

__all__ = ["onedal", "best_of", "load_average", "load_line"]


def onedal(kind="SVC"):
    """``sklearnex.svm.SVC`` (or ``SVR``), or None where scikit-learn-intelex is absent."""
    try:
        from sklearnex import svm
    except ImportError:
        return None
    return getattr(svm, kind, None)


def best_of(fns, repeats):
    """Run each of ``fns`` (name -> callable) ``repeats`` times, alternating them.

    Returns
    -------
    times : dict of str to float
        The best wall time of each, seconds.
    results : dict of str to object
        The result of each one's last run.
    """
    times = {k: float("inf") for k in fns}
    results = {}
    for _ in range(max(1, int(repeats))):
        for name, fn in fns.items():
            t = time.perf_counter()
            results[name] = fn()
            times[name] = min(times[name], time.perf_counter() - t)
    return times, results


def load_average() -> float:
    """The 1-minute load average (0.0 where the platform has none)."""
    try:
        return float(os.getloadavg()[0])
    except (AttributeError, OSError):
        return 0.0


def load_line() -> str:
    """``uptime``-style load and core count, to print beside a table."""
    try:
        l1, l5, l15 = os.getloadavg()
    except (AttributeError, OSError):
        return "load average: unavailable"
    return f"load average {l1:.2f}, {l5:.2f}, {l15:.2f} on {os.cpu_count()} cores"
