"""The one solve path of every problem: dispatch → cvxpy or a backend → the Solution.

``problem.solve(method, ...)`` of every model lands here.  The method registry
(:mod:`margin_opt.methods`) says what the name means; the problem supplies its
formulation (``primal``/``dual``), its standard form (``to_standard_form`` /
``to_primal_erm``), the reading of an answer (``_read_cvxpy_*``,
``solution_from_standard``, ``solution_from_primal``, ``solution_from_representer``)
and its infeasibility error; the envelope (method, backend, status, iterations,
timings, history, the raw output) is filled here and nowhere else.

Timings, in seconds: ``build`` (the cvxpy formulation or the standard form),
``compile``/``solve``/``unpack`` for cvxpy or the backend's own ``setup``/``solve``,
``recover`` (the other side of the answer) and ``total``.

In the manner of scipy's ``minimize`` dispatch and qpsolvers' ``solve_problem``.
"""

from __future__ import annotations

import time

import numpy as np

from ..methods import get_method
from .cvxpy_runner import run_cvxpy

__all__ = ["solve"]


def solve(problem, method="cvxpy-dual", *, solver=None, formulation=None, quad_form=None,
          verbose=False, **options):
    """Solve ``problem`` by ``method``; see :meth:`KernelProblem.solve`.

    Raises
    ------
    ValueError
        Unknown method for this model, a peer method (it is run by the reports, not
        here), or cvxpy-only options given to a backend.
    """
    spec = get_method(method, problem.model)
    if spec.solve_as is not None:
        opts = dict(spec.options)
        formulation = opts.pop("formulation", formulation)
        spec_name = spec.name
        spec = get_method(spec.solve_as, problem.model)
        options = {**opts, **options}
    else:
        spec_name = spec.name
    t0 = time.perf_counter()
    if spec.route == "cvxpy":
        sol = _solve_cvxpy(problem, spec, solver, formulation, quad_form, verbose, options)
    elif spec.route == "backend":
        if solver is not None or formulation is not None or quad_form is not None:
            raise ValueError(f"solver=, formulation= and quad_form= apply to the cvxpy "
                             f"methods, not to {method!r}; pass its own options instead.")
        sol = _solve_backend(problem, spec, options)
    else:
        raise ValueError(f"{method!r} is another library's solver; it is run and certified by "
                         "margin-opt verify, not by problem.solve.")
    sol.method = spec_name
    sol.timings["total"] = time.perf_counter() - t0
    return sol


def _solve_cvxpy(problem, spec, solver, formulation, quad_form, verbose, options):
    t0 = time.perf_counter()
    if spec.side == "dual":
        if formulation is not None:
            raise ValueError("formulation= chooses the cvxpy primal's form; the dual takes "
                             "quad_form=.")
        qf = problem.data.resolve_quad_form(quad_form or "auto")
        cvx = problem.dual(qf)
        label = f"dual ({qf})"
    else:
        if quad_form is not None:
            raise ValueError("quad_form= chooses how the cvxpy dual writes αᵀQα; the primal "
                             "takes formulation=.")
        label = formulation or problem.formulations[0]
        cvx = problem.primal(label)
    t_build = time.perf_counter() - t0
    run = run_cvxpy(cvx, solver=solver, verbose=verbose, on_infeasible=problem.infeasible_error,
                    on_unbounded=problem.infeasible_error, **options)
    t1 = time.perf_counter()
    meta = dict(backend=run.solver, status=run.status, n_iter=run.n_iter, raw=cvx,
                formulation=label)
    if spec.side == "dual":
        alpha, b = problem._read_cvxpy_dual(cvx)
        problem.check_dual_answer(alpha, "cvxpy-dual")
        sol = problem.solution_from_standard(alpha, b, **meta)
    else:
        w, b, alpha = problem._read_cvxpy_primal(cvx)
        sol = problem.solution_from_primal(w, b, alpha=alpha, **meta)
    sol.timings.update(build=t_build, **run.timings, recover=time.perf_counter() - t1)
    return sol


def _solve_backend(problem, spec, options):
    t0 = time.perf_counter()
    fn = spec.load()
    if spec.standard_form == "DualQP":
        std = problem.to_standard_form()
    else:
        std = problem.to_primal_erm()
        if not problem.explicit_w:
            if not spec.accepts_gram:
                raise ValueError(f"method {spec.name!r} needs the linear kernel or a "
                                 "feature_map; use 'pegasos' (kernelized) or a dual method "
                                 "(smo, cvxpy-dual) for kernels.")
            options = {**options, "kernel_gram": problem.gram()}
    t_build = time.perf_counter() - t0
    t1 = time.perf_counter()
    res = fn(std, **options)
    t_run = time.perf_counter() - t1
    meta = dict(backend=spec.name, status=res.status, n_iter=res.get("nit"),
                message=res.get("message", ""), raw=res, formulation=spec.standard_form)
    if spec.standard_form == "DualQP":
        if res.status == "unbounded":
            raise problem.infeasible_error(f"unbounded ({res.message})") or \
                ValueError(f"{spec.name}: {res.message}")
        alpha = np.asarray(res.x, dtype=float)
        problem.check_dual_answer(alpha, spec.name)
        sol = problem.solution_from_standard(alpha, float(res.b), **meta)
    elif res.get("beta") is not None:
        sol = problem.solution_from_representer(res.beta, float(res.b), **meta)
    else:
        sol = problem.solution_from_primal(res.w, float(res.b), **meta)
    hist = dict(res.get("history", {}))
    if "J" in hist:
        hist["objective"] = problem.erm_scale * np.asarray(hist["J"], dtype=float)
    sol.history = hist
    timings = dict(res.get("timings", {}))
    timings.setdefault("solve", t_run)
    timings.pop("total", None)
    sol.timings.update(build=t_build, **timings, backend_total=t_run,
                       recover=time.perf_counter() - t1 - t_run)
    return sol
