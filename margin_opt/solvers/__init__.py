"""Backends: solvers that take a standard form (never a model or an estimator).

One module per backend; the method registry (:mod:`margin_opt.methods`) names them
and imports each on first use, so that the command line starts fast.

A backend that takes the standard dual is called as ``fn(qp: DualQP, **options)``;
one that takes the primal ERM as ``fn(erm: PrimalERM, **options)``.  Both return a
:class:`scipy.optimize.OptimizeResult` with at least ``status`` (one of
:data:`margin_opt.solution.STATUSES`), ``message``, ``nit`` and, for the dual, ``x``
(the α of the standard form) and ``b`` (the intercept, LIBSVM's −ρ); for the primal
``w`` (or ``beta`` when kernelized) and ``b``; optionally ``history`` and
``timings``.
"""
