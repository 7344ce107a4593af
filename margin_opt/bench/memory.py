"""Benchmark suite ``memory``: the peak memory of SMO on a problem whose kernel matrix
would not fit.

One RBF C-SVC (``make_classification(n, 20 features)``, standardized, γ = 1/20,
C = 1) solved by SMO with its 200 MB row cache in a fresh process
(:func:`margin_opt.bench.smo.memory_probe`): the resident set before the solve
(data, compiled code), its peak, and the size the n × n kernel matrix would have
taken.
"""

from __future__ import annotations

from .smo import memory_probe

__all__ = ["run", "format_rows"]


def run(quick=False, *, sizes=None, cache_size=200.0) -> list:
    """One row per size: n = 50 000 (5000 with ``quick``), or ``sizes``.

    Parameters
    ----------
    quick : bool, default=False
    sizes : list of int, optional
    cache_size : float, default=200.0
        SMO's row cache, MB.

    Returns
    -------
    rows : list of dict
        :func:`~margin_opt.bench.smo.memory_probe`'s rows (``peak_rss_mb``,
        ``rss_before_mb``, ``nxn_mb``, ``time_ours``, ...).
    """
    sizes = list(sizes or ([5000] if quick else [50000]))
    return [memory_probe(n, cache_size) for n in sizes]


def format_rows(rows) -> str:
    """The rows as text lines under the load line."""
    from .peers import load_line

    lines = [f"SMO's memory: peak resident set of one RBF solve in a fresh process; "
             f"{load_line()}"]
    for r in rows:
        lines.append(f"n = {r['n']:>6}, d = {r['d']}: {r['time_ours']:.2f} s, {r['iter_ours']} "
                     f"iterations, peak RSS {r['peak_rss_mb']:.0f} MB (before the solve "
                     f"{r['rss_before_mb']:.0f} MB, cache {r['cache_mb']:.0f} MB); the n × n "
                     f"matrix would take {r['nxn_mb']:.0f} MB")
    return "\n".join(lines)
