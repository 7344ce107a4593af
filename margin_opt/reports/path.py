"""``margin-opt path``: an ε-path over C on a data set, its table and its figure."""

from __future__ import annotations

import math

__all__ = ["run_path"]


def _number(x):
    """A float for JSON: None where it is not finite (an interval open to the right)."""
    x = float(x)
    return x if math.isfinite(x) else None


def run_path(dataset, *, model="svc", C_min=0.1, C_max=10.0, eps=1e-3, kernel="rbf",
             gamma="scale", epsilon=0.1, plot=None):
    """Compute the ε-path of a C-SVC or ε-SVR over [C_min, C_max] and tabulate it.

    Parameters
    ----------
    dataset : margin_opt.datasets.Dataset
    model : {"svc", "svr"}, default="svc"
    C_min, C_max : float, default=0.1, 10.0
        The range of C covered.
    eps : float, default=1e-3
        The relative accuracy certified at every C of the range.
    kernel : str, default="rbf"
    gamma : {"scale", "auto"} or float, default="scale"
    epsilon : float, default=0.1
        The ε-SVR's tube half-width.
    plot : str, optional
        Write :func:`margin_opt.plots.path.plot_path`'s figure there (PNG).

    Returns
    -------
    report : dict
        JSON-ready: the data, the problem, the path's settings and one row per point
        (C, its interval, its gap and worst bound, its support vectors, margin,
        iterations, status, whether its certificate holds); ``ok``.
    text : str
        The path's table (``str(path)``) and a closing line.
    ok : bool
        True when every point's certificate holds.

    Raises
    ------
    ValueError
        Bad data or arguments (C_min ≥ C_max, eps outside (0, 1), ...), as the
        problem and :func:`margin_opt.problems.path.regularization_path` say.
    NotCertifiedError
        A point that did not certify (the message says which).
    """
    from ..plots.path import path_series
    from ..problems.svm import SVMProblem
    from ..problems.svr import SVRProblem

    if model == "svc":
        problem = SVMProblem(dataset.X, dataset.y, kernel=kernel, gamma=gamma)
    elif model == "svr":
        problem = SVRProblem(dataset.X, dataset.y, epsilon=epsilon, kernel=kernel, gamma=gamma)
    else:
        raise ValueError(f"margin-opt path takes --model svc or svr (ε-paths over C are made "
                         f"for the C-SVC and the ε-SVR), got {model!r}.")
    path = problem.path(C=(C_min, C_max), eps=eps)
    s = path_series(path)
    points = [{"C": float(s["C"][k]), "C_lo": _number(s["C_lo"][k]),
               "C_hi": _number(s["C_hi"][k]), "gap_at_C": _number(s["gap_at_C"][k]),
               "gap_bound": _number(s["gap_bound"][k]), "n_support": int(s["n_support"][k]),
               "n_free": int(s["n_free"][k]), "n_at_bound": int(s["n_at_bound"][k]),
               "margin": _number(s["margin"][k]), "n_iter": p.solution.n_iter,
               "status": p.solution.status, "certified": bool(s["certified"][k])}
              for k, p in enumerate(path.points)]
    ok = bool(s["certified"].all())
    n, d = problem.n_samples, dataset.X.shape[1]
    report = {"data": {"name": dataset.name, "n_samples": n, "n_features": d},
              "problem": {"model": model, "kernel": problem.kernel.describe(),
                          **({"epsilon": problem.epsilon} if model == "svr" else {})},
              "C_min": path.C_min, "C_max": path.C_max, "eps": path.eps,
              "method": path.method, "tol": path.tol, "n_points": len(path),
              "n_solves": path.n_solves, "seconds": path.timings.get("total"),
              "points": points, "ok": ok}
    failed = len(path) - int(s["certified"].sum())
    lines = [str(path),
             f"all {len(path)} points certified: every C in [{path.C_min:g}, {path.C_max:g}] "
             f"has an answer within eps = {path.eps:g}" if ok else
             f"FAIL: {failed} of {len(path)} points not certified"]
    if plot:
        from ..plots import require_matplotlib
        from ..plots.path import plot_path

        require_matplotlib().close(plot_path(path, file=plot))
        report["plots"] = [str(plot)]
        lines.append(f"plot: {plot}")
    return report, "\n".join(lines), ok
