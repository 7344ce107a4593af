"""The polish's first factorization, started early on the core SMO leaves idle.

Below :data:`~margin_opt.solvers.smo.PASS_PAR_MIN` active variables SMO's passes run
on one thread, and once most kernel rows are cached the second core has little to
do.  The free set settles well before SMO reaches the polish tolerance: on the
ε-SVR at n = 5000, at m(α) − M(α) = 9e-3 the free set (1871 variables) differs from
the one at 1e-3 (1890) in 49 variables, 34 to enter and 15 to leave.  So, once
m − M is within :data:`EARLY_AT` times the polish tolerance, the kernel block K_FF
of the free set and its Cholesky factor (:class:`._smo_polish.Factor`) are computed
on a second thread while SMO goes on; the polish then extends that factor by the
variables that became free and pins those that left (:func:`._smo_polish._reuse`,
as between its own polishes), or factorizes afresh where too many changed.

The answer does not depend on the thread's timing: the free set is taken at a fixed
iteration (SMO looks at m − M every :data:`CHUNK` iterations, which does not change
its path), the factor is the one the polish would compute for that set, and the
polish waits for it.  The thread reads only what SMO does not write: the data (or
the given kernel matrix) and copies of the free set's rows and ids; its kernel block
is computed without a parallel region (:func:`.kernel_blocks.symmetric_block` with
one thread) and its LAPACK call on one BLAS thread.
"""

from __future__ import annotations

import threading

import numpy as np

from . import _smo_kernels as _k
from . import _smo_polish as _pol
from . import kernel_blocks as _kb
from ..parallel import one_blas_thread

__all__ = ["EarlyFactor", "possible", "start", "EARLY_AT", "CHUNK", "MIN_FREE"]

#: start once m − M ≤ EARLY_AT × the polish tolerance
EARLY_AT = 10.0
#: SMO's iterations between two looks at m − M
CHUNK = 500
#: smallest free set worth a thread (a factorization of ~256² takes ~1 ms)
MIN_FREE = 256


class EarlyFactor:
    """The thread computing the factor of K_UU for the free variables ``U`` (ids in the
    unshrunk order) and its result; :meth:`take` waits for it."""

    def __init__(self, run, U, rows):
        self.U = U
        self._factor = None
        self._thread = threading.Thread(target=self._compute, args=(run.kd, run.gram, rows),
                                        name="margin-opt-early-factor", daemon=True)
        self._thread.start()

    def _compute(self, kd, gram, rows):
        try:
            with one_blas_thread():
                K = gram[np.ix_(rows, rows)] if gram is not None else \
                    _kb.symmetric_block(kd, rows, nthr=1)
                fac = _pol.Factor(K, self.U, _pol.DAMPING)
            self._factor = fac if fac.L is not None else None
        except Exception:             # e.g. MemoryError: the polish factorizes itself
            self._factor = None

    def take(self):
        """The :class:`._smo_polish.Factor`, or None (it failed); waits for the thread."""
        self._thread.join()
        fac, self._factor = self._factor, None
        return fac


def possible(run) -> bool:
    """True where the thread can compute K_FF without reading what SMO writes: a dense
    named kernel (the data) or a given kernel matrix (never the row cache)."""
    return run.equality and (run.gram is not None or _kb.dense_named(run.kd))


def start(run, budget_bytes):
    """An :class:`EarlyFactor` for the free set of ``run`` as it is now, or None (a
    free set below :data:`MIN_FREE`, above :func:`._smo_polish.max_free`, or one
    whose polish would not be worth it yet)."""
    a, C = run.alpha, run.C
    pos = np.flatnonzero((a > 0.0) & (a < C))      # free variables are never shrunk
    if pos.size < MIN_FREE or pos.size > _pol.max_free(budget_bytes) or \
            not _pol.worth_it(pos.size, run.st[_k.S_ACTIVE_SUM]):
        return None
    ids = run.perm[pos]
    order = np.argsort(ids)
    try:
        return EarlyFactor(run, ids[order], np.ascontiguousarray(run.index[pos][order]))
    except RuntimeError:            # no thread to be had: the polish factorizes itself
        return None
