"""Run a problem with several methods, certify each, and tabulate (shared by the
SVC and SVR reports of ``margin-opt verify``)."""

from __future__ import annotations

import warnings

import numpy as np

from ..solvers import BACKENDS

__all__ = ["run_methods", "format_table"]

PRIMAL_SIDE = {"cvxpy-primal", "cvxpy-hinge", "cvxpy-loss", "subgradient", "pegasos"}


def run_methods(problem, methods, table, external=None):
    """Solve ``problem`` with each method and certify the answer.

    Parameters
    ----------
    problem : SVMProblem or SVRProblem
    methods : list of str
    table : dict
        method -> (solve keywords, certificate tolerance); keywords None means
        ``external(problem)`` produces the Solution (a peer library).
    external : callable, optional

    Returns
    -------
    rows : list of dict
        One JSON-ready row per method (an ``error`` row when a method raised).
    solutions : dict of str to Solution
    reference : str or None
        The method whose dual optimum the ``agreement`` column is measured against
        (cvxpy-dual when it passed, else the first passing method).
    """
    unknown = [m for m in methods if m not in table]
    if unknown:
        raise ValueError(f"unknown method(s) {unknown}; choose from {list(table)}.")
    rows, solutions = [], {}
    for name in methods:
        options, tol = table[name]
        row = {"method": name}
        try:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                if options is not None and options.get("method") in BACKENDS:
                    # numba loads its compiled code on the first call (~0.5 s):
                    # a first, untimed run keeps that out of the time column
                    problem.solve(**options)
                    caught.clear()
                sol = external(problem) if options is None else problem.solve(**options)
            cert = problem.certify(sol, tol=tol)
        except Exception as exc:  # a failing method is a row, not a crash
            row.update(status="error", error=f"{type(exc).__name__}: {exc}", ok=False)
            rows.append(row)
            continue
        solutions[name] = sol
        q = cert.quantities
        n_sv = int(sol.support_.size)
        row.update(
            solver=sol.solver, status=sol.status, primal=sol.primal_objective,
            dual=sol.dual_objective, gap=cert.duality_gap, kkt=cert.kkt_violation,
            n_sv=n_sv, n_free=q.get("n_free"), n_at_C=q.get("n_at_C"),
            time=sol.timings.get("total", float("nan")), compile=sol.timings.get("compile"),
            solve=sol.timings.get("solve"), n_iter=sol.n_iter, tol=tol, ok=cert.ok,
            warnings=sorted({str(w.message) for w in caught}),
            side="primal" if name in PRIMAL_SIDE else "dual")
        if not cert.ok:
            row["failed"] = cert.failed()
        rows.append(row)
    reference = next((r["method"] for r in rows if r["method"] == "cvxpy-dual" and r["ok"]),
                     next((r["method"] for r in rows if r.get("ok")), None))
    if reference is not None:
        ref = next(r for r in rows if r["method"] == reference)["dual"]
        for r in rows:
            if "primal" in r:
                val = r["primal"] if r["side"] == "primal" else r["dual"]
                r["agreement"] = abs(val - ref) / max(1.0, abs(ref))
    return rows, solutions, reference


def _fmt(v, spec):
    return f"{'-':>10}" if v is None else format(v, spec)


def format_table(title, rows, reference) -> str:
    """The rows of :func:`run_methods` as a text table."""
    lines = [f"{title}; reference: {reference}",
             f"{'method':<13}{'solver':<27}{'primal':>14}{'dual':>14}{'rel gap':>10}"
             f"{'KKT':>10}{'SVs':>12}{'time s':>9}{'vs ref':>10}{'tol':>8}  cert"]
    for r in rows:
        if r["status"] == "error":
            lines.append(f"{r['method']:<13}ERROR {r['error']}")
            continue
        sv = (f"{r['n_free']}/{r['n_at_C']}" if r.get("n_free") is not None
              else str(r["n_sv"]))
        lines.append(
            f"{r['method']:<13}{(r['solver'] or '')[:26]:<27}{r['primal']:>14.8f}"
            f"{r['dual']:>14.8f}{r['gap']:>10.1e}{r['kkt']:>10.1e}{sv:>12}"
            f"{r['time']:>9.3f}{_fmt(r.get('agreement'), '>10.1e')}{r['tol']:>8.0e}  "
            f"{'OK' if r['ok'] else 'FAIL ' + ','.join(r.get('failed', []))}")
        for w in r.get("warnings", []):
            lines.append(f"{'':13}warning: {w}")
    ok = all(r["ok"] for r in rows)
    lines.append("all certificates passed" if ok else "SOME CERTIFICATES FAILED")
    return "\n".join(lines)


def plot_histories(solutions, reference, problem, path):
    """Suboptimality J − J* of the iterative methods by iteration (log–log) to ``path``.

    J = P/(C n) is the average-loss objective, J* from the reference solution; the
    O(1/√t) and O(log t/(λt)) reference rates are drawn (see
    :func:`margin_opt.plots.convergence.plot_convergence`).  Returns False when no
    method has a history or there is no reference.
    """
    from ..plots.convergence import plot_convergence

    scale = problem.C * problem.n_samples
    runs = {}
    for k, s in solutions.items():
        if "objective" not in s.history:
            continue
        J = np.asarray(s.history["objective"]) / scale
        steps = s.extra.get("result", {}).get("n_steps")
        if k == "pegasos" and steps:  # one entry per epoch: put it at its step count
            runs[k] = (np.arange(J.size) * steps / max(1, J.size - 1), J)
        else:
            runs[k] = J
    if not runs or reference is None:
        return False
    plot_convergence(runs, reference.dual_objective / scale, lam=1.0 / scale, file=path,
                     title=f"suboptimality against iteration (n={problem.n_samples})")
    return True
