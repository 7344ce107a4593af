"""SMO's int64 state vector ``st`` (the positions of its entries) and the run's codes.

Shared by the compiled loop (:mod:`.loop`), shrinking (:mod:`.shrink`), the row
caches it reads (:mod:`.cache`, :mod:`.packed`) and the drivers (:mod:`.driver`,
:mod:`.batch`), so that none imports another for them.
"""

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
N_STATE = 16

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
