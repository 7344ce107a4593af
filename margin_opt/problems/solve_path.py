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

import inspect
import time
import warnings
from contextlib import nullcontext
from dataclasses import dataclass

import numpy as np

from ..exceptions import (
    ConvergenceWarning,
    InaccurateSolutionWarning,
    NonConvexWarning,
    NotCertifiedError,
    SolverError,
    no_convergence_warnings,
)
from ..kkt import restore_equality
from ..methods import get_method, method_names, stopping_options
from ..parallel import one_blas_thread
from ..validation import check_positive
from .cvxpy_runner import run_cvxpy

__all__ = ["solve", "finish", "warn_nonconvex", "FallbackOptions", "FALLBACK_MAX_N"]

#: With ``fallback``, the exact cvxpy dual is tried up to this many samples for a
#: kernel problem whose dual needs the dense n × n quadratic form (any n when the
#: kernel is linear or w is explicit: the dual is then written through the features):
#: the default of :attr:`FallbackOptions.exact_max_n`.
FALLBACK_MAX_N = 2500


@dataclass(frozen=True)
class FallbackOptions:
    """How :func:`solve` repairs an answer that does not certify (``fallback=``).

    ``fallback=True`` means ``FallbackOptions()``; pass an instance to change a knob.

    Parameters
    ----------
    exact_max_n : int, default=2500
        Samples (n) up to which the exact cvxpy dual, then the cvxpy primal, are tried
        as repairs of a kernel problem, whose cvxpy dual holds the dense n × n kernel
        matrix (n² doubles: 2500 samples, 50 MB, and an interior-point solve of
        seconds to minutes); beyond, they are skipped and the error's advice says so.
        A linear kernel or an explicit w is tried at any n (its dual is written through
        the features).

    Raises
    ------
    ValueError
        ``exact_max_n`` < 0.
    """

    exact_max_n: int = FALLBACK_MAX_N

    def __post_init__(self):
        if int(self.exact_max_n) < 0:
            raise ValueError(f"exact_max_n must be >= 0, got {self.exact_max_n}.")


def _fallback_options(fallback) -> FallbackOptions | None:
    """The repair settings of ``fallback`` (None: no repair)."""
    if isinstance(fallback, FallbackOptions):
        return fallback
    return FallbackOptions() if fallback else None


def solve(problem, method="cvxpy-dual", *, solver=None, formulation=None, quad_form=None,
          verbose=False, certify=True, fallback=False, **options):
    """Solve ``problem`` by ``method``; see :meth:`KernelProblem.solve`.

    With ``certify`` (the default) the answer is certified before it is returned
    (``Solution.certificate``) at the accuracy the method claims: the ``tol`` a dual
    backend was run at, the registry's accuracy for the others (or ``certify`` itself
    when it is a number).  ``status == "optimal"`` is kept only when the certificate
    holds; otherwise it becomes ``"optimal_inaccurate"`` with an
    :class:`~margin_opt.exceptions.InaccurateSolutionWarning` — or, with ``fallback``,
    the answer is repaired: a dual backend is restarted from it at a 100× tighter
    tolerance, then the exact cvxpy dual (failing that, the cvxpy primal) is solved
    where the problem's size allows (:attr:`FallbackOptions.exact_max_n`; ``fallback``
    may be a :class:`FallbackOptions` instead of True), each followed, where w can
    be written down, by the exact active-set refinement in the primal
    (:mod:`margin_opt.solvers.active_set`), then SMO is warm-started from the last
    answer; what was tried is in ``Solution.attempts`` and the certificate's notes, and
    when nothing certifies :class:`NotCertifiedError` says why.  The first run's
    ``ConvergenceWarning`` is not issued with ``fallback``: a run that stops short is
    repaired or listed in the error.

    Raises
    ------
    ValueError
        Unknown method for this model, a peer method (it is run by the reports, not
        here), or cvxpy-only options given to a backend.
    NotCertifiedError
        With ``fallback``, when no answer certifies.
    """
    name, spec, formulation, options = _resolve(problem, method, formulation, options)
    fallback = _fallback_options(fallback)
    if spec.route == "backend" and (solver is not None or formulation is not None
                                    or quad_form is not None):
        raise ValueError(f"solver=, formulation= and quad_form= apply to the cvxpy "
                         f"methods, not to {method!r}; pass its own options instead.")
    t0 = time.perf_counter()
    if spec.route == "backend" and getattr(problem, "hard_margin", False):
        problem.require_separable()     # a backend cannot prove infeasibility: the LP does
    # a dual backend's run (SMO) and its certificate on one BLAS thread: their heavy
    # products run on the compiled core's threads, and the BLAS pool that a dot product
    # from Python wakes would spin on the cores they need (one_blas_thread).
    # Not the primal backends: their products are BLAS calls from Python.
    on_core = spec.route == "backend" and spec.standard_form == "DualQP"
    with one_blas_thread() if on_core else nullcontext():
        if fallback is not None and certify is not False:
            # a first run that stops short is repaired below, or NotCertifiedError lists
            # it: its ConvergenceWarning would only be noise beside a certified answer
            with no_convergence_warnings():
                sol = _run(problem, name, spec, solver, formulation, quad_form, verbose,
                           options)
        else:
            sol = _run(problem, name, spec, solver, formulation, quad_form, verbose, options)
    if certify is not False:
        tol = _certify_tol(problem, spec, options, certify)
        with one_blas_thread() if on_core else nullcontext():
            sol = _certified(problem, sol, spec, tol, options, fallback)
    sol.timings["total"] = time.perf_counter() - t0
    return sol


def finish(problem, method, res, *, certify=True, fallback=False, **options):
    """The rest of :func:`solve` for a dual backend's result computed by the caller.

    For callers that run many small problems' solvers side by side on threads (the
    pairs of a one-vs-one fit, :func:`margin_opt.solvers.smo.solve_smo_gram`) and
    read, certify and repair the answers here, on one thread: the Solution of ``res``
    is made and certified exactly as :func:`solve` makes and certifies its own run's.

    Parameters
    ----------
    problem : KernelProblem
    method : str
        The registry name of a dual backend (``"smo"``) whose result ``res`` is.
    res : scipy.optimize.OptimizeResult
        The backend's result on ``problem.to_standard_form()``.
    certify, fallback, **options
        As :func:`solve` (``fallback``: a bool or a :class:`FallbackOptions`;
        ``options``: the backend's, for a repair).

    Returns
    -------
    solution : Solution

    Raises
    ------
    ValueError
        A method that is not a dual backend.
    NotCertifiedError
        With ``fallback``, when no answer certifies.
    """
    name, spec, _, options = _resolve(problem, method, None, options)
    fallback = _fallback_options(fallback)
    if spec.route != "backend" or spec.standard_form != "DualQP":
        raise ValueError(f"finish takes the result of a dual backend (smo), not {method!r}.")
    t0 = time.perf_counter()
    with one_blas_thread():
        sol = _backend_solution(problem, spec, res, 0.0, float(res.timings["total"]))
        sol.method = name
        if certify is not False:
            sol = _certified(problem, sol, spec, _certify_tol(problem, spec, options, certify),
                             options, fallback)
    sol.timings["total"] = time.perf_counter() - t0 + float(res.timings["total"])
    return sol


def _resolve(problem, method, formulation, options):
    """(registry name, the method actually run, formulation, options) for ``method``."""
    spec = get_method(method, problem.model)
    if spec.route == "peer":
        raise ValueError(f"{method!r} is another library's solver; it is run and certified by "
                         "margin-opt verify, not by problem.solve.")
    if spec.solve_as is None:
        return spec.name, spec, formulation, options
    opts = dict(spec.options)
    formulation = opts.pop("formulation", formulation)
    return spec.name, get_method(spec.solve_as, problem.model), formulation, {**opts, **options}


def _run(problem, name, spec, solver, formulation, quad_form, verbose, options):
    t0 = time.perf_counter()
    if spec.route == "cvxpy":
        sol = _solve_cvxpy(problem, spec, solver, formulation, quad_form, verbose, options)
    else:
        sol = _solve_backend(problem, spec, options)
    sol.method = name
    sol.timings["total"] = time.perf_counter() - t0
    return sol


def _claimed_tol(problem, spec, options):
    """The accuracy a method claims: a dual backend's ``tol``, else the registry's."""
    if spec.standard_form in ("DualQP", "CrammerSingerQP"):
        return float(options.get("tol", 1e-3))
    return spec.accuracy_for(problem.model)


def _certify_tol(problem, spec, options, certify):
    """The tolerance of ``certify``: True → the method's claim, else the number given."""
    return _claimed_tol(problem, spec, options) if certify is True else \
        check_positive(certify, "certify (a tolerance)")


def _certified(problem, sol, spec, tol, options, fallback):
    """Certify ``sol`` at ``tol``; keep "optimal" only if it holds; repair with ``fallback``
    (a :class:`FallbackOptions`, or None: no repair)."""
    cert = problem.certify(sol, tol=tol, **spec.certify_options())
    sol.record_certificate(cert)
    if cert.ok:
        return sol
    if "psd_kernel" in cert.failed():
        if sol.status == "optimal":
            sol.status = "optimal_inaccurate"
        warn_nonconvex(problem, stacklevel=4)
        if fallback is not None and sol.status in ("max_iter", "stalled"):   # not repaired
            warnings.warn(sol.message, ConvergenceWarning, stacklevel=4)
        return sol
    if fallback is None:
        if sol.status == "optimal":
            sol.status = "optimal_inaccurate"
            warnings.warn(f"{sol.method} reported optimal, but its certificate fails at "
                          f"tol={tol:g} on {', '.join(cert.failed())}; status set to "
                          "optimal_inaccurate. Check solution.certificate, or solve with "
                          "fallback=True.", InaccurateSolutionWarning, stacklevel=4)
        return sol
    attempts = [_attempt(sol, cert)]
    last = sol
    max_n = fallback.exact_max_n
    # the exact dual, then the primal (on a badly scaled low-rank kernel, e.g. a
    # polynomial one with entries ~1e6, the interior-point solver can fail on the dual
    # and certify the primal, whose variables are the kernel factor's few coordinates)
    for repair in (_tighter, _exact_in("cvxpy-dual", max_n), _active_set,
                   _exact_in("cvxpy-primal", max_n), _active_set, _warm_from,
                   _exact_in("cvxpy-dual", max_n, TIGHT_CLARABEL), _warm_from,
                   _exact_in("cvxpy-primal", max_n, TIGHT_CLARABEL), _warm_from):
        new = repair(problem, last, spec, tol, options)
        if new is None:
            continue
        last = new
        new_cert = problem.certify(new, tol=tol)
        attempts.append(_attempt(new, new_cert))
        if new_cert.ok:
            new_cert.notes.append("fallback: " + "; ".join(
                f"{a['method']} ended {a['status']}" + (f", failing {', '.join(a['failed'])}"
                                                       if a["failed"] else "")
                for a in attempts[:-1]) + f"; this answer is from {new.method}.")
            new.record_certificate(new_cert, attempts)
            return new
    raise NotCertifiedError(
        "no answer certified at tol=" + f"{tol:g}: " + "; ".join(
            f"{a['method']} ended {a['status']}, failing {', '.join(a['failed'])}"
            for a in attempts) + ". " + _advice(problem, _rounding_advice(problem, last, tol),
                                                max_n))


def warn_nonconvex(problem, stacklevel=2) -> bool:
    """Warn (NonConvexWarning) when the kernel matrix is not provably PSD; True if it warned."""
    if problem.data.psd_by_construction:
        return False
    rep = problem.data.psd_report()
    if rep.psd is True:
        return False
    what = (f"is not positive semidefinite on this data (λ_min = {rep.lambda_min:.3g}, "
            f"{rep.method})" if rep.psd is False else f"could not be proved PSD ({rep.method})")
    warnings.warn(f"the {problem.kernel.describe()} kernel matrix {what}: the problem is not "
                  "convex, so the answer is a stationary point that no certificate can call "
                  "optimal (status optimal_inaccurate; certificate.ok is False). Use rbf or "
                  "poly, or a PSD precomputed kernel.", NonConvexWarning, stacklevel=stacklevel)
    return True


def _attempt(sol, cert):
    return {"method": sol.method, "status": sol.status, "failed": cert.failed(),
            "time": sol.timings.get("total", float("nan"))}


def _tighter(problem, sol, spec, tol, options):
    """A dual backend restarted from its answer at a 100× tighter tolerance."""
    if spec.standard_form not in ("DualQP", "CrammerSingerQP") or sol.status != "optimal":
        return None
    start = sol.variables.alpha if spec.standard_form == "CrammerSingerQP" else \
        problem.warm_start(sol.variables.standard_alpha)
    opts = {**options, "tol": float(options.get("tol", 1e-3)) / 100, "alpha0": start}
    if options.get("gap_tol") is not None:
        opts["gap_tol"] = float(options["gap_tol"]) / 100
    with no_convergence_warnings():
        new = _run(problem, sol.method, spec, None, None, None, False, opts)
    new.timings["total"] += sol.timings.get("total", 0.0)
    return new


#: Clarabel's settings of the last repairs: the interior point run to a gap and
#: feasibility of 1e-12 (its defaults stop at 1e-8), for problems whose multipliers span
#: many orders of magnitude (sample weights 1e3–1e4 times C ~1e3: a Crammer–Singer fit
#: whose default answers fail complementarity by 4e-6 certifies at 3e-8)
TIGHT_CLARABEL = {"tol_gap_abs": 1e-12, "tol_gap_rel": 1e-12, "tol_feas": 1e-12,
                  "tol_ktratio": 1e-10, "max_iter": 500}


def _exact_in(name, max_n, settings=None):
    """A repair by the exact cvxpy form ``name``, where the problem's size allows
    (a kernel problem of at most ``max_n`` samples), with the solver's default
    tolerances or the given ``settings`` (:data:`TIGHT_CLARABEL`)."""

    def repair(problem, sol, spec, tol, options):
        if (settings is None and sol.method == name) or name not in \
                method_names(problem.model) or (_sized_by_n(problem)
                                                and problem.n_samples > max_n):
            return None
        try:
            new = _run(problem, name, get_method(name, problem.model), None, None, None,
                       False, dict(settings or {}))
        except (SolverError, ValueError, TypeError, KeyError):   # settings of another solver
            return None
        new.timings["total"] += sol.timings.get("total", 0.0)
        return new

    repair.__doc__ = f"The exact {name}, where its size allows" + \
        (", at tight tolerances." if settings else ".")
    return repair


#: the dual backend a repair warm-starts from the latest answer, first that the model has
WARM_BACKENDS = ("smo", "sequential-dual")


def _warm_from(problem, sol, spec, tol, options):
    """The model's dual backend (SMO; the sequential dual for Crammer–Singer) warm-started
    from the latest answer (e.g. an inaccurate interior-point one): SMO's Newton polish
    solves the KKT system of the free set exactly, and the sequential dual started there
    converges where it stopped at max_iter from zero (Crammer–Singer with weights ~1e3)."""
    names = method_names(problem.model)
    name = next((m for m in WARM_BACKENDS if m in names), None)
    if name is None or sol.method == name:
        return None
    if name == "smo":
        if not hasattr(sol.variables, "standard_alpha"):
            return None
        start = problem.warm_start(sol.variables.standard_alpha)
    else:
        start = sol.variables.alpha
    opts = {**stopping_options(name, tol, float(np.max(problem.C_i))), "alpha0": start}
    try:
        with no_convergence_warnings():
            new = _run(problem, name, get_method(name, problem.model), None, None, None, False,
                       opts)
    except (SolverError, ValueError):
        return None
    new.timings["total"] += sol.timings.get("total", 0.0)
    return new


def _active_set(problem, sol, spec, tol, options):
    """The exact active-set refinement of the latest answer in the primal, on the
    features Φ of :meth:`KernelData.w_basis` (X, a feature map, a polynomial kernel's
    monomials; :mod:`margin_opt.solvers.active_set`): where f = Kβ cannot be known to
    ``tol`` in double precision (unscaled features, large multipliers), f = Φw can."""
    from dataclasses import replace

    from ..kernels import make_kernel
    from ..solvers import active_set

    alpha = getattr(sol.variables, "standard_alpha", None)
    if alpha is None or sol.method == "active-set" or not hasattr(problem, "_qp"):
        return None
    Phi = problem.data.w_basis()
    if Phi is None:
        return None
    qp = problem._qp
    own_linear = qp.kernel.is_linear
    if not own_linear:                  # the same dual, written on the monomials
        qp = replace(qp, X=Phi, kernel=make_kernel("linear"), gram=None)
    if not active_set.applies(qp):
        return None
    t0 = time.perf_counter()
    meta = dict(method="active-set", backend="margin_opt (primal, lstsq)")
    # the centred data of the problem's own linear kernel (never for the monomials of
    # another kernel: its backend form holds X, not Φ)
    centred = problem.backend_form() if own_linear and hasattr(problem, "backend_form") \
        else qp
    if centred.X is not qp.X:
        # a linear kernel with an intercept: first on the centred data (its least
        # squares far better conditioned on offset features), kept where it certifies
        res = _refine(active_set, replace(qp, X=centred.X), alpha, tol)
        if res is not None:
            free = np.flatnonzero((res.x > 0) & (res.x < qp.upper))
            a = restore_equality(np.array(res.x, dtype=float), qp.y, qp.upper, qp.delta,
                                 prefer=free)       # Σβ = 0: the kernel form on X
            new = problem.solution_from_weights(
                res.w, res.b - problem.data.standard_intercept_shift(w=res.w), a,
                status=res.status, n_iter=res.nit, message=res.message, **meta)
            if problem.certify(new, tol=tol).ok:
                new.timings["total"] = time.perf_counter() - t0 + sol.timings.get("total", 0.0)
                return new
    res = _refine(active_set, qp, alpha, tol)
    if res is None:         # no exact active set from this start: keep the start instead
        return None
    new = problem.solution_from_weights(res.w, res.b, res.x, status=res.status,
                                        n_iter=res.nit, message=res.message, **meta)
    new.timings["total"] = time.perf_counter() - t0 + sol.timings.get("total", 0.0)
    return new


def _refine(active_set, qp, alpha, tol):
    """The refinement's result when it reached an exact active set, else None."""
    try:
        res = active_set.refine_linear(qp, alpha, tol=tol)
    except (ValueError, np.linalg.LinAlgError):     # a repair that cannot run is skipped
        return None
    return res if res.success else None


def _explicit(problem) -> bool:
    return problem.data.explicit_w if hasattr(problem, "data") else True


def _sized_by_n(problem) -> bool:
    """Whether the exact cvxpy repairs are limited to ``exact_max_n`` samples: a kernel
    problem (its dual holds the n × n matrix), and the Crammer–Singer problem whatever
    its kernel (n · k dual variables and n · k margin constraints)."""
    return not _explicit(problem) or problem.model == "multiclass"


def _rounding_advice(problem, sol, tol) -> str:
    """Where the residuals are at the rounding level of f = Kβ, say so (and by how much)."""
    alpha = getattr(sol.variables, "standard_alpha", None)
    if alpha is None or not hasattr(problem, "data"):
        return ""
    level, k_max = problem.data.rounding_level(problem.coefficients(alpha))
    if not level >= 0.1 * tol:
        return ""
    floor = 10.0 ** np.ceil(np.log10(10.0 * level))
    remedies = ["scale the features so that the kernel entries are O(1)"]
    if not getattr(problem, "hard_margin", False):
        remedies.append("use a smaller C")
    if floor <= 1e-2:
        remedies.append(f"ask for tol ≥ {floor:.0e}")
        limit = ""
    else:
        limit = " (nor any useful tolerance at this scale)"
    return (f"These residuals are at the rounding level of this problem: f = Kβ is known only "
            f"to ~{level:.1g} in double precision (u·maxᵢ Σⱼ|Kᵢⱼβⱼ|, kernel entries up to "
            f"{k_max:.2g}, multipliers up to {float(np.max(alpha)):.2g}), which tol={tol:g} "
            f"cannot see past{limit}: " + ", ".join(remedies[:-1])
            + (" or " if len(remedies) > 1 else "") + remedies[-1] + ".")


def _advice(problem, rounding="", max_n=FALLBACK_MAX_N) -> str:
    if _sized_by_n(problem) and problem.n_samples > max_n:
        return (rounding + " " if rounding else "") + (
            f"The exact fallback (cvxpy-dual) was not tried at n = {problem.n_samples} > "
            f"{max_n} with a kernel or k classes at once: scale the features "
            "(StandardScaler), use a "
            "smaller C, or call problem.solve('cvxpy-dual') yourself.")
    return rounding or "Scale the features (e.g. StandardScaler) or use a smaller C."


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


def _check_backend_options(spec, fn, options):
    """A specific error for an option the backend does not take (not Python's TypeError
    from inside the solve)."""
    params = inspect.signature(fn).parameters
    if any(p.kind is p.VAR_KEYWORD for p in params.values()):
        return
    unknown = sorted(set(options) - set(params))
    if unknown:
        takes = ", ".join(name for name, p in params.items() if p.kind is p.KEYWORD_ONLY)
        raise ValueError(f"method {spec.name!r} takes no option {', '.join(map(repr, unknown))};"
                         f" its options are: {takes} (tuning knobs go in the method's "
                         "options object, passed as options=...)")


def _solve_backend(problem, spec, options):
    t0 = time.perf_counter()
    fn = spec.load()
    _check_backend_options(spec, fn, options)
    shifted = False
    if spec.standard_form == "DualQP":
        shifted = hasattr(problem, "backend_form")
        std = problem.backend_form() if shifted else problem.to_standard_form()
        shifted = shifted and std.X is not problem.data.standard_form_data()[0]
    elif spec.standard_form == "CrammerSingerQP":
        std = problem.to_crammer_singer_qp()
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
    return _backend_solution(problem, spec, res, t_build, time.perf_counter() - t1,
                             shifted=shifted)


def _backend_solution(problem, spec, res, t_build, t_run, shifted=False):
    """The Solution of a backend's result ``res`` (its OptimizeResult); ``shifted``: run
    on :meth:`KernelProblem.backend_form`'s centred data (its intercept converted)."""
    t1 = time.perf_counter()
    meta = dict(backend=spec.name, status=res.status, n_iter=res.get("nit"),
                message=res.get("message", ""), raw=res, formulation=spec.standard_form)
    _check_finite(res, spec.name)
    if spec.standard_form == "DualQP":
        alpha = np.asarray(res.x, dtype=float)
        problem.check_dual_answer(alpha, spec.name)
        b = float(res.b) if np.isfinite(res.b) else None   # e.g. every point of a class weightless
        if b is not None and shifted:
            # the intercept on centred data (a linear kernel) → the user's
            b -= problem.data.standard_intercept_shift(beta=problem.coefficients(alpha))
        sol = problem.solution_from_standard(alpha, b, **meta)
    elif spec.standard_form == "CrammerSingerQP":      # W explicit, with the multipliers λ
        sol = problem.solution_from_primal(res.w, res.b, alpha=res.x, **meta)
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
                       recover=time.perf_counter() - t1)
    return sol


def _check_finite(res, name):
    """SolverError when a backend returned non-finite variables (overflow in its loops)."""
    arrays = [res.get(k) for k in ("x", "w", "beta") if res.get(k) is not None]
    if not all(np.isfinite(np.asarray(a, dtype=float)).all() for a in arrays):
        raise SolverError(f"{name} returned NaN or infinite variables ({res.get('message', '')}): "
                          "the problem is badly scaled for it; scale the features (e.g. "
                          "StandardScaler) or use solver='cvxpy-dual'.")
