"""SMO's int64 state vector ``st``: the positions of its entries.

Shared by the compiled loop (:mod:`._smo_kernels`) and the row caches it reads
(:mod:`._packed_rows`), so that neither imports the other for them.
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

FULL = -1            # slot_epoch of a row valid for every column
