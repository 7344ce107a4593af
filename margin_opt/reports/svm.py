"""``margin-opt verify`` for the C-SVC: every method, certified, one row each."""

from __future__ import annotations

import time
import warnings

import numpy as np

from ..problems.svm import SVMProblem
from ..solution import Solution
from ..solvers import available_backends

__all__ = ["verify", "METHODS", "default_methods"]

#: method name -> (how it is run, certificate tolerance)
METHODS = {
    "cvxpy-dual": ({"method": "cvxpy-dual"}, 1e-6),
    "cvxpy-primal": ({"method": "cvxpy-primal", "form": "slack"}, 1e-6),
    "cvxpy-hinge": ({"method": "cvxpy-primal", "form": "hinge"}, 1e-5),
    "smo": ({"method": "smo", "tol": 1e-6}, 1e-5),
    "libsvm": (None, 1e-5),
    "subgradient": ({"method": "subgradient"}, 1e-2),
    "pegasos": ({"method": "pegasos"}, 1e-2),
}


def default_methods(kernel) -> list:
    """The methods run by default: the exact ones that are available for the kernel."""
    out = ["cvxpy-dual", "cvxpy-primal", "cvxpy-hinge"]
    if "smo" in available_backends():
        out.append("smo")
    out.append("libsvm")
    return out


def _run_libsvm(problem: SVMProblem, X, y, kernel, C, gamma, tol):
    from sklearn.svm import SVC as SkSVC

    if problem.hard_margin:
        raise ValueError("LIBSVM has no hard margin; use a finite C")
    sk = SkSVC(C=C, kernel=kernel, gamma=problem.kernel.gamma or "scale",
               degree=problem.kernel.degree, coef0=problem.kernel.coef0, tol=tol,
               cache_size=500)
    t0 = time.perf_counter()
    sk.fit(X, y)
    elapsed = time.perf_counter() - t0
    sol = Solution.from_sklearn(sk, problem)
    sol.timings["total"] = elapsed
    return sol


def verify(dataset, *, C=1.0, kernel="rbf", gamma="scale", methods=None, plot=None):
    """Solve one SVM with several methods, certify each, and tabulate.

    Parameters
    ----------
    dataset : margin_opt.datasets.Dataset
    C : float, default=1.0
    kernel : str, default="rbf"
    gamma : {"scale", "auto"} or float, default="scale"
    methods : list of str, optional
        Names from :data:`METHODS`; default :func:`default_methods`.
    plot : str, optional
        File for a convergence plot of iterative methods (where available).

    Returns
    -------
    report : dict
        JSON-ready: the data, the problem and one row per method.
    text : str
        The printed table.
    ok : bool
        True when every certificate passed.
    """
    problem = SVMProblem(dataset.X, dataset.y, C=C, kernel=kernel, gamma=gamma)
    methods = list(methods or default_methods(kernel))
    unknown = [m for m in methods if m not in METHODS]
    if unknown:
        raise ValueError(f"unknown method(s) {unknown}; choose from {list(METHODS)}.")
    rows, solutions = [], {}
    for name in methods:
        options, tol = METHODS[name]
        row = {"method": name}
        try:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                if options is None:
                    sol = _run_libsvm(problem, dataset.X, dataset.y, kernel, C, gamma, 1e-6)
                else:
                    sol = problem.solve(**options)
            cert = problem.certify(sol, tol=tol)
        except Exception as exc:  # a failing method is a row, not a crash
            row.update(status="error", error=f"{type(exc).__name__}: {exc}", ok=False)
            rows.append(row)
            continue
        solutions[name] = sol
        zero_free_c = cert.quantities
        row.update(
            solver=sol.solver, status=sol.status, primal=sol.primal_objective,
            dual=sol.dual_objective, gap=cert.duality_gap, kkt=cert.kkt_violation,
            n_free=zero_free_c["n_free"], n_at_C=zero_free_c["n_at_C"],
            time=sol.timings.get("total", float("nan")),
            compile=sol.timings.get("compile"), solve=sol.timings.get("solve"),
            tol=tol, ok=cert.ok, warnings=[str(w.message) for w in caught],
            side="primal" if name in ("cvxpy-primal", "cvxpy-hinge", "subgradient",
                                      "pegasos") else "dual")
        if not cert.ok:
            row["failed"] = cert.failed()
        rows.append(row)
    ref_name = next((r["method"] for r in rows if r["method"] == "cvxpy-dual" and r["ok"]),
                    next((r["method"] for r in rows if r.get("ok")), None))
    if ref_name is not None:
        ref = next(r for r in rows if r["method"] == ref_name)["dual"]
        for r in rows:
            if "primal" in r:
                val = r["primal"] if r["side"] == "primal" else r["dual"]
                r["agreement"] = abs(val - ref) / max(1.0, abs(ref))
    n, d = problem.n_samples, problem.X.shape[1]
    report = {"data": {"name": dataset.name, "n_samples": n, "n_features": d},
              "problem": {"C": problem.C, "kernel": problem.kernel.describe()},
              "reference": ref_name, "rows": rows, "ok": all(r["ok"] for r in rows)}
    if plot:
        _plot_history(solutions, plot)
        report["plot"] = plot
    return report, format_table(report), report["ok"]


def _plot_history(solutions, path):
    from ..plots import require_matplotlib

    hist = {k: s.history["objective"] for k, s in solutions.items() if "objective" in s.history}
    if not hist:
        return
    plt = require_matplotlib()
    ref = min(s.dual_objective for s in solutions.values())
    fig, ax = plt.subplots(figsize=(6, 4))
    for k, h in hist.items():
        t = np.arange(1, len(h) + 1)
        ax.loglog(t, np.maximum(np.asarray(h) - ref, 1e-12), label=k)
    ax.set_xlabel("iteration")
    ax.set_ylabel("primal objective − optimum")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def _fmt(v, spec):
    return "-" if v is None else format(v, spec)


def format_table(report) -> str:
    """The verify table as text."""
    d, p = report["data"], report["problem"]
    lines = [f"margin-opt verify: {d['name']} (n={d['n_samples']}, d={d['n_features']}), "
             f"C-SVC C={p['C']:g}, kernel {p['kernel']}; reference: {report['reference']}",
             f"{'method':<13}{'solver':<27}{'primal':>14}{'dual':>14}{'rel gap':>10}"
             f"{'KKT':>10}{'SV free/C':>11}{'time s':>9}{'vs ref':>10}{'tol':>8}  cert"]
    for r in report["rows"]:
        if r["status"] == "error":
            lines.append(f"{r['method']:<13}ERROR {r['error']}")
            continue
        sv = f"{r['n_free']}/{r['n_at_C']}"
        lines.append(
            f"{r['method']:<13}{(r['solver'] or '')[:26]:<27}{r['primal']:>14.8f}"
            f"{r['dual']:>14.8f}{r['gap']:>10.1e}{r['kkt']:>10.1e}{sv:>11}"
            f"{r['time']:>9.3f}{_fmt(r.get('agreement'), '>10.1e')}{r['tol']:>8.0e}  "
            f"{'OK' if r['ok'] else 'FAIL ' + ','.join(r.get('failed', []))}")
        for w in r.get("warnings", []):
            lines.append(f"{'':13}warning: {w}")
    lines.append("all certificates passed" if report["ok"] else "SOME CERTIFICATES FAILED")
    return "\n".join(lines)
