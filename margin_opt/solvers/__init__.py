"""Backends: solvers that take a standard form (never a model or an estimator).

One module per backend behind a registry, imported on first use so that the
command line starts fast and numba compiles only what is run.

A **dual** backend is called as ``fn(qp: DualQP, **options)``; a **primal**
backend as ``fn(erm: PrimalERM, **options)``.  Both return a
:class:`scipy.optimize.OptimizeResult` with at least ``status`` (one of
:data:`margin_opt.solution.STATUSES`), ``message``, ``nit`` and, for dual
backends, ``x`` (the α of the standard form) and ``b`` (the intercept,
LIBSVM's −ρ); for primal backends ``w`` and ``b``.
"""

from __future__ import annotations

from importlib import import_module

__all__ = ["get_backend", "available_backends", "BACKENDS"]

#: name -> (module, function, form)
BACKENDS = {
    "smo": ("margin_opt.solvers.smo", "solve_smo", "dual"),
    "subgradient": ("margin_opt.solvers.subgradient", "subgradient_descent", "primal"),
    "pegasos": ("margin_opt.solvers.subgradient", "pegasos", "primal"),
}


def get_backend(name):
    """Return ``(function, form)`` of a registered backend.

    Raises
    ------
    ValueError
        Unknown name, or a backend whose module is not available.
    """
    try:
        module, func, form = BACKENDS[name]
    except KeyError:
        raise ValueError(f"unknown backend {name!r}; choose one of {sorted(BACKENDS)}.") from None
    try:
        fn = getattr(import_module(module), func)
    except (ImportError, AttributeError) as exc:
        raise ValueError(f"backend {name!r} is not available ({exc}).") from None
    return fn, form


def available_backends():
    """Names of the registered backends whose module imports."""
    out = []
    for name, (module, func, _) in BACKENDS.items():
        try:
            if hasattr(import_module(module), func):
                out.append(name)
        except ImportError:
            pass
    return out
