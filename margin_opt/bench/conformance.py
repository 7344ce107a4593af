"""Suite ``conformance``: every solver at hand graded by the conformance kit.

The solvers of :func:`margin_opt.testing.adapters.solvers` (our SMO and Pegasos, LIBSVM,
oneDAL where installed, cvxpy with Clarabel, OSQP and SCS, the qpsolvers backends
installed) graded by :func:`margin_opt.testing.run_conformance` at tol 1e-3, 1e-6 and
1e-9, each solver's own stopping tolerance set to the grading one.

Run ``margin-opt bench conformance [--quick]``; ``--quick`` grades the small problems at
tol 1e-6 only, with a time limit of 20 s.
"""

from __future__ import annotations

__all__ = ["run", "format_rows", "TOLS"]

TOLS = (1e-3, 1e-6, 1e-9)
#: seconds per call
TIME_LIMIT = 60.0


def run(quick=False, *, suites=("svc", "svr"), tols=None, names=None, time_limit=None,
        problems=None, progress=None) -> list:
    """Grade every solver at hand; one row per (suite, solver, tol).

    Parameters
    ----------
    quick : bool, default=False
        The small problems only, at tol 1e-6 only, time limit 20 s.
    suites : sequence of {"svc", "svr"}
    tols : sequence of float, optional
        Default 1e-3, 1e-6, 1e-9 (1e-6 with ``quick``).
    names : sequence of str, optional
        Only these solvers (:func:`margin_opt.testing.adapters.solvers`).
    time_limit : float, optional
        Seconds per call (default 60, 20 with ``quick``).
    problems : sequence of str, optional
        Only these problems (names; each graded in its own suite).
    progress : callable, optional
        Called with each finished row.

    Returns
    -------
    rows : list of dict
    """
    from ..testing import problems as suite_problems
    from ..testing import run_conformance
    from ..testing.adapters import solvers
    from .peers import load_line

    tols = tols or ((1e-6,) if quick else TOLS)
    limit = time_limit or (20.0 if quick else TIME_LIMIT)
    rows = []
    for suite in suites:
        probs = suite_problems(suite, size="small" if quick else None)
        if problems is not None:
            probs = [p for p in probs if p.name in set(problems)]
        if not probs:
            continue
        for name, factory in solvers(suite).items():
            if names and name not in names:
                continue
            for tol in tols:
                rep = run_conformance(factory(tol), suite, tol, limit, problems=probs,
                                      name=name)
                h = rep.honesty()
                row = {"suite": suite, "solver": name, "tol": tol,
                       "passed": rep.n_passed, "problems": len(rep.rows),
                       "success_rate": rep.success_rate,
                       "sgm_seconds": rep.shifted_geometric_mean,
                       "claimed": h["claimed"], "claimed_right": h["right"],
                       "failures": rep.failure_reasons(), "load": load_line(),
                       "failed_problems": [r.problem for r in rep.rows if not r.ok]}
                rows.append(row)
                if progress is not None:
                    progress(row)
    return rows


def format_rows(rows) -> str:
    """The results table (markdown)."""
    lines = ["| suite | solver | tol | passed | success | shifted GM (s) | claimed optimal: "
             "right | main failures |", "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        fails = ", ".join(f"{k} {v}" for k, v in list(r["failures"].items())[:3])
        lines.append(f"| {r['suite']} | {r['solver']} | {r['tol']:g} | {r['passed']}/"
                     f"{r['problems']} | {100 * r['success_rate']:.0f} % | "
                     f"{r['sgm_seconds']:.3f} | {r['claimed_right']}/{r['claimed']} | "
                     f"{fails} |")
    if rows:
        lines.append(f"\n{rows[-1]['load']}")
    return "\n".join(lines)
