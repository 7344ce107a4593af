"""Working-set decomposition around SMO: large problems in blocks of q variables.

The manner of ThunderSVM (Wen et al. 2018) and oneDAL's "thunder" method: at each
outer step the q most violating variables (half of them new, half kept from the
previous step) form a working set B; the subproblem on B, with the other
variables fixed, is the same standard dual QP of size q,

    min ½α_BᵀQ_BBα_B + (∇_B − Q_BBα_B)ᵀα_B   s.t.  y_Bᵀα_B = y_Bᵀα_B(old),  0 ≤ α_B ≤ u_B,

and is solved by the one SMO core (:func:`.driver.solve_smo`, handed in by the
driver, on the q × q kernel block) to a local tolerance; the gradient of all m variables is then
updated once, ∇ += Q_{:,B}Δα_B, from the kernel rows of B.  Per outer step the
O(m) work is one selection and one product with q rows, instead of two O(m)
passes per pair step, and new kernel rows come q/2 at a time from one matrix
product (BLAS) — the memory-bound inner loop of pair SMO becomes a GEMM.

The answer is SMO's: the run stops on the same rule (m(α) − M(α) ≤ tol over all
variables, from the exact gradient).

References
----------
Z. Wen, J. Shi, Q. Li, B. He and J. Chen, "ThunderSVM: a fast SVM library on GPUs
and CPUs", JMLR 19(21), 2018 (working sets, the local tolerance).
T. Joachims, "Making large-scale SVM learning practical", in *Advances in Kernel
Methods*, MIT Press 1999 (decomposition with working sets of size q).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ...exceptions import no_convergence_warnings
from ...kernels import Kernel
from ...standard_forms import DualQP
from . import cache as _cache
from . import rows as _rows
from . import state as _k
from .options import DEFAULT

__all__ = ["BlockRows", "run_blocks", "block_size", "exact_gradient"]

_PRE = Kernel("precomputed")


def block_size(m, n_data, budget_bytes, opts=DEFAULT) -> int:
    """The working-set size q for m variables within the cache budget (0: pairs), at
    most ``opts.block_q_max``."""
    rows = int(budget_bytes // (4 * n_data))
    return int(min(opts.block_q_max, rows // 2, m)) // 2 * 2


@njit(cache=True)
def _gather(store, slots, cols, out):
    """out[i, j] = store[slots[i], cols[j]]."""
    for i in range(slots.shape[0]):
        row = store[slots[i]]
        for j in range(cols.shape[0]):
            out[i, j] = row[cols[j]]


class BlockRows:
    """Kernel rows by data row in ``capacity`` slots, least recently used evicted.

    Rows are kept in single precision, as LIBSVM's cache keeps them: twice as many fit
    the budget.  Missing ones come ``chunk`` at a time from one block of kernel rows
    (:func:`.rows.kernel_block`: a BLAS product turned into kernel values by the one
    compiled transform of SMO's rows), rounded to single precision.  The gradient
    itself stays in double; the caller recomputes it exactly in double before any
    final test (:func:`exact_gradient`), so only the path, never the answer, depends
    on the single-precision rows.
    """

    def __init__(self, kd, gram, csr, capacity, chunk=DEFAULT.block_chunk):
        self.chunk = int(chunk)
        self.kd, self.gram, self.csr = kd, gram, csr
        n_data = kd.all_cols.size if gram is None else gram.shape[0]
        self.store = np.empty((capacity, n_data), dtype=np.float32)
        self.slot_of = np.full(n_data, -1, dtype=np.int64)
        self.row_of = np.full(capacity, -1, dtype=np.int64)
        self.stamp = np.zeros(capacity, dtype=np.int64)
        self.clock = 0
        self.computed = 0

    def _compute(self, rows, slots):
        step = self.chunk
        for c in range(0, rows.size, step):
            r, s = rows[c:c + step], slots[c:c + step]
            self.store[s] = _rows.kernel_block(self.kd, self.gram, self.csr, r)

    def slots(self, rows):
        """Slots holding the data rows ``rows`` (distinct), computing missing ones."""
        self.clock += 1
        s = self.slot_of[rows]
        missing = rows[s < 0]
        if missing.size:
            self.stamp[s[s >= 0]] = self.clock            # protect the rows in use
            free = np.argpartition(self.stamp, missing.size - 1)[:missing.size]
            old = self.row_of[free]
            self.slot_of[old[old >= 0]] = -1
            self.row_of[free] = missing
            self.slot_of[missing] = free
            self._compute(missing, free)
            self.computed += missing.size
            s = self.slot_of[rows]
        self.stamp[s] = self.clock
        return s


def exact_gradient(kd, gram, csr, block_bytes, a, y, p, C, index, G, G_bar):
    """∇ = Qα + p of every variable and Ḡ = Σ_{αₜ=uₜ} uₜyₜK[index[t], :] (by data row),
    in double, into ``G`` and ``G_bar``, from blocks of kernel rows (``block_bytes``
    each at most) over the nonzero multipliers (after single-precision steps)."""
    nz = np.flatnonzero(a)
    rows, inv = np.unique(index[nz], return_inverse=True)
    coefs = np.zeros((rows.size, 2))
    np.add.at(coefs[:, 0], inv, y[nz] * a[nz])
    at_u = a[nz] >= C[nz]
    np.add.at(coefs[:, 1], inv[at_u], y[nz][at_u] * C[nz][at_u])
    if rows.size:
        v = _rows.combination(kd, gram, csr, rows, coefs, block_bytes=block_bytes)
    else:
        v = np.zeros((G_bar.shape[0], 2))
    G[:] = p + y * v[index, 0]
    G_bar[:] = v[:, 1]


def _select(g, up, low, keep, q):
    """Working set: ``keep`` and the most violating new variables, q in all — in turn
    the largest gₜ = −yₜ∇ₜ of I_up and the smallest of I_low (a free variable is in
    both; it is taken once)."""
    taken = np.zeros(g.size, dtype=bool)
    taken[keep] = True
    n_new = q - keep.size
    gu = np.where(up & ~taken, g, -np.inf)
    gl = np.where(low & ~taken, -g, -np.inf)
    k = min(n_new, g.size)
    top_u = np.argpartition(-gu, k - 1)[:k]
    top_l = np.argpartition(-gl, k - 1)[:k]
    top_u = top_u[np.argsort(-gu[top_u])]
    top_l = top_l[np.argsort(-gl[top_l])]
    top_u = top_u[np.isfinite(gu[top_u])]
    top_l = top_l[np.isfinite(gl[top_l])]
    both = np.empty(top_u.size + top_l.size, dtype=np.int64)
    nu = min(top_u.size, top_l.size)
    both[0:2 * nu:2], both[1:2 * nu:2] = top_u[:nu], top_l[:nu]
    both[2 * nu:] = np.concatenate([top_u[nu:], top_l[nu:]])
    _, first = np.unique(both, return_index=True)
    new = both[np.sort(first)][:n_new]
    return np.concatenate([keep, new])


def run_blocks(solve, rows_cache, a, G, y, C, index, st, fout, stall_window, tol, q, max_iter,
               opts=DEFAULT):
    """Outer steps until m(α) − M(α) ≤ tol; returns a ``state.R_*`` code.

    Every variable is active; α (``a``) and ∇ (``G``) are updated in place,
    ``st[S_ITER]`` counts the inner SMO iterations and ``fout[0]`` holds the last gap.
    Each subproblem is solved by ``solve`` (the one SMO core,
    :func:`.driver.solve_smo`, passed by the driver) on its kernel block from
    ``rows_cache`` (a :class:`BlockRows`).  Stops with ``R_STALLED`` when the gap has
    not halved within ``stall_window`` inner iterations, ``R_MAX_ITER`` at ``max_iter``.
    """
    ws = np.empty(0, dtype=np.int64)
    pos, neg = y > 0, y < 0
    while True:
        below, above = a < C, a > 0.0
        up = (pos & below) | (neg & above)
        low = (pos & above) | (neg & below)
        g = -y * G
        m_val = g[up].max(initial=-np.inf)
        M_val = g[low].min(initial=np.inf)
        gap = m_val - M_val
        fout[0] = gap
        if gap <= tol or not np.isfinite(gap):
            return _k.R_OPTIMAL
        if st[_k.S_ITER] >= max_iter:
            return _k.R_MAX_ITER
        if gap <= 0.5 * fout[1]:
            fout[1] = gap
            st[_k.S_MARK] = st[_k.S_ITER]
        elif st[_k.S_ITER] - st[_k.S_MARK] > stall_window:
            return _k.R_STALLED
        ws = _select(g, up, low, ws[ws.size - q // 2:] if ws.size else ws, q)
        data_rows, inv = np.unique(index[ws], return_inverse=True)
        slots = rows_cache.slots(data_rows)
        K_BB = np.empty((data_rows.size, ws.size))          # float64 from float32 rows
        _gather(rows_cache.store, slots, index[ws], K_BB)
        K_BB = np.ascontiguousarray(K_BB[inv])
        yB, aB = y[ws], a[ws].copy()
        pB = G[ws] - yB * (K_BB @ (yB * aB))
        gB = -yB * G[ws]
        upB, lowB = up[ws], low[ws]
        local = gB[upB].max(initial=-np.inf) - gB[lowB].min(initial=np.inf)
        sub = DualQP(X=K_BB, kernel=_PRE, y=yB, p=pB, upper=C[ws], delta=float(yB @ aB),
                     gram=K_BB)
        with no_convergence_warnings():     # a subproblem cut short is not the answer
            res = solve(sub, tol=max(tol, opts.block_local * local), alpha0=aB,
                            polish=False, shrinking=False, cache_size=1.0, options=opts,
                            max_iter=max(1, min(100 * ws.size,
                                                int(max_iter - st[_k.S_ITER]))))
        st[_k.S_ITER] += max(1, res.nit)
        delta = res.x - aB
        moved = np.flatnonzero(delta)
        if moved.size == 0:
            ws = np.empty(0, dtype=np.int64)       # nothing to gain here: a fresh set next
            continue
        a[ws[moved]] = res.x[moved]
        coef = np.zeros(data_rows.size)
        np.add.at(coef, inv[moved], yB[moved] * delta[moved])
        vT = np.zeros((1, rows_cache.store.shape[1]))
        _cache.accumulate(rows_cache.store, slots, coef.reshape(-1, 1), vT, 1)
        G += y * vT[0][index]
