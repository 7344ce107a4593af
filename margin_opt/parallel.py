"""The thread policy: how many threads a fit may use (numba, BLAS).

numba's own setting decides (``NUMBA_NUM_THREADS`` or :func:`numba.set_num_threads`;
by default one per core).  Splitting pays only where starting a parallel region
costs little against the work split: with the TBB or OpenMP threading layers it
costs 1–8 µs (measured on the 2-core development machine), with numba's fallback
"workqueue" layer ~60 µs, more than a whole kernel row of 20 000 columns — there SMO
stays on one thread.  The answer never depends on this: every split computes each
entry by the same code, and reductions break ties by position.
"""

from __future__ import annotations

import threading
from contextlib import contextmanager

import numba
import numpy as np
import scipy.linalg  # noqa: F401  (its BLAS/LAPACK loaded before the controller looks)
from numba import njit, prange
from threadpoolctl import OpenBLASController, ThreadpoolController

__all__ = ["smo_threads", "threading_layer", "one_blas_thread", "all_blas_threads"]

_CHEAP_LAYERS = ("tbb", "omp")


@njit(parallel=True, cache=True)
def _touch(a):
    for h in prange(a.shape[0]):
        a[h] = h


def threading_layer() -> str:
    """The threading layer numba uses (starting it once if it has not run yet)."""
    try:
        return numba.threading_layer()
    except ValueError:
        _touch(np.zeros(2))
        return numba.threading_layer()


def smo_threads() -> int:
    """Threads for SMO's long rows and passes: numba's thread count, or 1 where the
    threading layer is "workqueue" (its launches cost more than they save)."""
    n = int(numba.get_num_threads())
    if n <= 1:
        return 1
    return n if threading_layer() in _CHEAP_LAYERS else 1


_controller = None
_lock = threading.Lock()
_inside = {}        # thread ident → one_blas_thread contexts it has open
_limiter = None     # the limit they hold (None while all_blas_threads lifts it)
_lifted = 0         # all_blas_threads contexts that lifted it


def _set(limit: bool):
    """Set (``limit``) or restore the one-thread limit; the caller holds ``_lock``.

    threadpoolctl ≥ 3.8 lets only one "controlling" thread change a process-wide
    OpenBLAS pool and silently ignores the others, while these contexts are entered and
    left from any thread (the pairs of a one-vs-one fit, concurrent fits): every change
    is made under ``_lock`` by the thread at hand, which takes control for it and hands
    it back afterwards.
    """
    global _limiter
    clear = getattr(OpenBLASController, "clear_controlling_thread", None)
    if clear is not None:
        clear(force=True)
    try:
        if limit:
            _limiter = _controller.limit(limits=1, user_api="blas")
        else:
            limiter, _limiter = _limiter, None
            limiter.restore_original_limits()
    finally:
        if clear is not None:
            clear(force=True)


@contextmanager
def one_blas_thread():
    """A context manager limiting BLAS's thread pools to one thread (threadpoolctl).

    The pools are looked up once per process: ``threadpool_limits`` scans the loaded
    libraries on every call (~4 ms), which costs more than a small problem's solve
    (45 pairs of ~360 samples on digits).  Nested uses (from any thread) cost nothing:
    the first to enter sets the limit and the last to leave restores it.

    Why one thread: where numba's threads do the work, BLAS is called from each of them
    (one thread each), and a pool woken by any BLAS call from Python (a dot product of
    20 000 values is split over the pool) keeps its threads spinning for a while after
    the call, taking a core from numba's threads (60–160 ms of CPU per SVC fit at
    n = 20 000).  OpenMP's limits are left alone: they are per thread, so a limit set
    by the thread that opens the first context could not be restored by the thread
    that closes the last.
    """
    global _controller
    me = threading.get_ident()
    with _lock:
        if _controller is None:
            _controller = ThreadpoolController()
        if not _inside and not _lifted:
            _set(True)
        _inside[me] = _inside.get(me, 0) + 1    # only once the limit is set (it may raise)
    try:
        yield
    finally:
        with _lock:
            _inside[me] -= 1
            if not _inside[me]:
                del _inside[me]
            if not _inside and _limiter is not None:
                _set(False)


@contextmanager
def all_blas_threads():
    """A context manager lifting :func:`one_blas_thread`'s limit for one large dense
    factorization (e.g. the Cholesky of a 4000 × 4000 kernel matrix: 0.55 s on one
    thread, 0.34 s on two), set again on leaving.  Nothing where no limit is set, or
    where another thread has a :func:`one_blas_thread` context open (the pairs of a
    one-vs-one fit: lifting the limit for one would lift it for all)."""
    global _lifted
    me = threading.get_ident()
    with _lock:
        lift = _limiter is not None and set(_inside) == {me}
        if lift:
            _set(False)
            _lifted += 1
    try:
        yield
    finally:
        if lift:
            with _lock:
                _lifted -= 1
                if _inside and not _lifted and _limiter is None:
                    _set(True)
