"""SMO's int64 state vector ``st`` (the positions of its entries), the run's codes,
and the compiled code's thread count, which decides what numba compiles.

Shared by the compiled loop (:mod:`.loop`), shrinking (:mod:`.shrink`), the row
caches it reads (:mod:`.cache`, :mod:`.packed`) and the drivers (:mod:`.driver`,
:mod:`.batch`), so that none imports another for them.

Serial and split runs
---------------------
A pass or a kernel row is split over ``nthr`` threads by a ``parallel=True`` function
(:func:`split`), which numba compiles into every compiled caller above it, whether it
runs or not: on a cold cache that was a third of a first small fit's compilation.  A run
that can never split (one thread allowed, or every row and pass below the options'
thresholds: :attr:`.options.SMOOptions.row_par_min`, ``pass_par_min``) passes ``None``
for the thread count instead of an int; its compiled functions are then specialized
for ``None`` and a call made by :func:`split` compiles to ``False``, so the parallel
functions are neither typed nor compiled for it.  The iterates are the same either way
(every split computes each value by the same code as the serial pass).  Likewise a call
made by
:func:`when` compiles the code of packed rows only for a cache that packs, and the code
of sparse rows only for data that have a CSC copy.
"""

from numba import types
from numba.extending import overload

# int64 state vector
S_ITER, S_COUNTER, S_ACTIVE, S_UNSHRINK, S_EPOCH, S_TICK = 0, 1, 2, 3, 4, 5
S_ROWS_FULL, S_ROWS_PARTIAL, S_HITS, S_MISSES, S_ACTIVE_SUM, S_MARK = 6, 7, 8, 9, 10, 11
S_LAYOUT = 12        # bumped whenever the positions of the variables change
#: the iteration at which every variable was last active with an exact gradient (set
#: by :func:`unshrink` and by the caller after a polish): while S_ITER still equals
#: it no multiplier has moved since, and the shrunk variables' gradients still hold
S_FULL_ITER = 13
S_GEMM = 14          # gradient reconstructions by BLAS tiles (see reconstruct_gradient)
S_RECONSTRUCT = 15   # gradient reconstructions, all ways
#: the step :func:`.loop.smo_run` still owes before its loop: 0 none, or the loop's code
#: (shrink, unshrink) whose gradient reconstruction was left to the caller by BLAS tiles
#: (:data:`R_RECONSTRUCT`)
S_PENDING = 16
#: 1: :func:`.loop.smo_run` returns :data:`R_ACTIVE_OPTIMAL` where the active variables
#: are optimal and some are shrunk, instead of unshrinking them (the driver polishes
#: there first: one gradient reconstruction then serves both, see :mod:`.driver`)
S_STOP_ACTIVE = 17
N_STATE = 18

#: st[S_UNSHRINK] at the start of a phase of SMO (:mod:`.driver` and :mod:`.batch` alike,
#: so that their iterates stay the same): 1, LIBSVM's early unshrinking (every variable
#: made active and its gradient reconstructed once m − M ≤ 10·tol) counted as done, i.e.
#: skipped.  Every phase ends with that reconstruction and the check of all variables
#: anyway; the early one cost a reconstruction per phase (ε-SVR at n = 5000: ~9 ms of
#: 0.25 s) and changes SMO's path only where a variable was shrunk too early (then a few
#: iterations more or fewer: 120 random problems, 0.5 % more in all; docs/smo.md)
UNSHRINK_START = 1

FULL = -1            # slot_epoch of a row valid for every column

# return codes of the run loop (:func:`.loop.smo_run`)
R_OPTIMAL, R_CHUNK, R_MAX_ITER, R_STALLED, R_CAP = 0, 1, 2, 3, 4
#: the run stopped for a gradient reconstruction by BLAS tiles, which its caller does
#: in Python (:func:`.shrink.reconstruct_by_tiles`) before calling it again
R_RECONSTRUCT = 7
#: optimal on the active set, the shrunk variables not checked (``st[S_STOP_ACTIVE]``)
R_ACTIVE_OPTIMAL = 8


def _serial(nthr) -> bool:
    return isinstance(nthr, (types.NoneType, types.Omitted)) or nthr is None


def split(fn):
    """``call(nthr, *args)``: ``fn(*args)`` where ``nthr`` is an int above 1 (True),
    else False.

    In compiled code, with ``nthr`` None (a serial run) ``call`` is the constant False
    and ``fn`` (a ``parallel=True`` function) is neither typed nor compiled.  ``fn`` is
    named in ``call``'s code, never passed as a value (a function passed as a value is
    an address that numba cannot cache).
    """
    def call(nthr, *args):
        if nthr is not None and nthr > 1:
            fn(*args)
            return True
        return False

    @overload(call, jit_options={"cache": True, "nogil": True})
    def _compiled(nthr, *args):
        if _serial(nthr):
            return lambda nthr, *args: False

        def impl(nthr, *args):
            if nthr > 1:
                fn(*args)
                return True
            return False
        return impl

    return call


def when(fn):
    """``call(x, *args)``: ``fn(*args)`` (a bool) where ``x`` is not None, else False.

    In compiled code, where ``x`` is None (a cache without packed rows, dense data
    without a CSC copy) ``call`` is the constant False and ``fn`` is not compiled.
    """
    def call(x, *args):
        return x is not None and fn(*args)

    @overload(call, jit_options={"cache": True, "nogil": True})
    def _compiled(x, *args):
        if _serial(x):
            return lambda x, *args: False
        return lambda x, *args: fn(*args)

    return call


def threads_if(nthr, want):
    """``nthr`` where ``want``, else 1; None (a serial run) stays None."""
    if nthr is None:
        return None
    return nthr if want else 1


def count(nthr) -> int:
    """The number of parts a split makes: ``max(nthr, 1)``; 1 for None."""
    return 1 if nthr is None else max(nthr, 1)


@overload(threads_if, jit_options={"cache": True, "nogil": True})
def _threads_if_compiled(nthr, want):
    if _serial(nthr):
        return lambda nthr, want: None
    return lambda nthr, want: nthr if want else 1


@overload(count, jit_options={"cache": True, "nogil": True})
def _count_compiled(nthr):
    if _serial(nthr):
        return lambda nthr: 1
    return lambda nthr: max(nthr, 1)
