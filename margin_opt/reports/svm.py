"""``margin-opt verify`` for the C-SVC: every method, certified, one row each."""

from __future__ import annotations

import time

from ..problems.svm import SVMProblem
from ..solution import Solution
from ..solvers import available_backends
from ..validation import libsvm_input
from .methods import format_table, plot_histories, run_methods

__all__ = ["verify", "METHODS", "default_methods"]

#: method -> (solve keywords or None for LIBSVM, certificate tolerance).  LIBSVM keeps
#: its kernel cache in single precision, so its answers are certified at 1e-5; the
#: hinge form has no constraint duals and its α is recovered by least squares.
METHODS = {
    "cvxpy-dual": ({"method": "cvxpy-dual"}, 1e-6),
    "cvxpy-primal": ({"method": "cvxpy-primal", "form": "slack"}, 1e-6),
    "cvxpy-hinge": ({"method": "cvxpy-primal", "form": "hinge"}, 1e-5),
    "smo": ({"method": "smo", "tol": 1e-6}, 1e-5),
    "libsvm": (None, 1e-5),
    "subgradient": ({"method": "subgradient", "schedule": "1/sqrt(t)", "tol": 0.0,
                     "max_iter": 5000}, 1e-2),
    "pegasos": ({"method": "pegasos", "batch_size": 10, "max_iter": 200,
                 "random_state": 0}, 1e-2),
}


#: Above this many samples a non-linear kernel's cvxpy forms (a dense n × n quadratic
#: form) are left out of the default methods: minutes to hours, and gigabytes.
CVXPY_KERNEL_MAX_N = 3000


def default_methods(kernel, n_samples=0) -> list:
    """The exact methods available: cvxpy (three forms), SMO when present, LIBSVM.

    For a non-linear kernel with more than :data:`CVXPY_KERNEL_MAX_N` samples the
    cvxpy forms are left out (ask for them with ``methods=``); SMO at tol 1e-6 is then
    the reference.
    """
    out = ["cvxpy-dual", "cvxpy-primal", "cvxpy-hinge"]
    if kernel != "linear" and n_samples > CVXPY_KERNEL_MAX_N:
        out = []
    if "smo" in available_backends():
        out.append("smo")
    return out + ["libsvm"]


def _libsvm(problem: SVMProblem) -> Solution:
    from sklearn.svm import SVC as SkSVC

    if problem.hard_margin:
        raise ValueError("LIBSVM has no hard margin; use a finite C")
    k = problem.kernel
    sk = SkSVC(C=problem.C, kernel=k.name, gamma=k.gamma or "scale", degree=k.degree,
               coef0=k.coef0, tol=1e-6, cache_size=500)
    labels = problem.classes_[(problem.y > 0).astype(int)]
    t0 = time.perf_counter()
    sk.fit(libsvm_input(problem.X), labels)
    elapsed = time.perf_counter() - t0
    sol = Solution.from_sklearn(sk, problem)
    sol.timings["total"] = elapsed
    return sol


def verify(dataset, *, C=1.0, kernel="rbf", gamma="scale", methods=None, plot=None):
    """Solve one C-SVC with several methods, certify each, and tabulate.

    Parameters
    ----------
    dataset : margin_opt.datasets.Dataset
    C : float, default=1.0
        ``inf`` poses the hard margin.
    kernel : str, default="rbf"
    gamma : {"scale", "auto"} or float, default="scale"
    methods : list of str, optional
        Names from :data:`METHODS`; default :func:`default_methods`.
    plot : str, optional
        PNG file for the suboptimality of the iterative methods by iteration.

    Returns
    -------
    report : dict
        JSON-ready: the data, the problem, one row per method.
    text : str
        The printed table.
    ok : bool
        True when every certificate passed.
    """
    problem = SVMProblem(dataset.X, dataset.y, C=C, kernel=kernel, gamma=gamma)
    methods = list(methods or default_methods(kernel, problem.n_samples))
    if not set(methods) & {"cvxpy-dual", "cvxpy-primal", "smo"}:
        methods.insert(0, "cvxpy-dual")  # the reference the iterative methods are held to
    table = dict(METHODS)
    if problem.C > 1 and not problem.hard_margin:
        # at m − M ≤ tol the gap is at most tol·(Σα + ΣCᵢ): keep the relative gap of
        # SMO's answer within its certificate tolerance at large C
        table["smo"] = ({**METHODS["smo"][0], "tol": 1e-6 / problem.C}, METHODS["smo"][1])
    rows, solutions, ref = run_methods(problem, methods, table, external=_libsvm)
    n, d = problem.n_samples, problem.X.shape[1]
    report = {"data": {"name": dataset.name, "n_samples": n, "n_features": d},
              "problem": {"model": "svc", "C": problem.C, "kernel": problem.kernel.describe()},
              "reference": ref, "rows": rows, "ok": all(r["ok"] for r in rows)}
    if plot and plot_histories(solutions, solutions.get(ref), problem, plot):
        report["plot"] = plot
    title = (f"margin-opt verify: {dataset.name} (n={n}, d={d}), C-SVC C={problem.C:g}, "
             f"kernel {problem.kernel.describe()}")
    return report, format_table(title, rows, ref), report["ok"]
