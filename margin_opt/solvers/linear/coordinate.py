"""The compiled epochs of dual coordinate descent with w explicit (liblinear's).

One epoch visits the active variables in a random order and, for each, takes the
exact minimizing step of the dual in that one coordinate: the gradient costs one
sparse dot product with w (O(nnz(xᵢ))), the update one axpy into w.  No kernel
row is ever formed.  Rows are read from CSR arrays (int32 or int64 indices, one
compiled specialization each) or from a dense C-ordered array passed flat
(``dense=True``; its ``indices``/``indptr`` are unused placeholders).

Two kinds of variables:

- :func:`epoch_margin`: one multiplier per standard-form variable t with sign yₜ,
  linear term pₜ, bound uₜ, diagonal Dₜ and data row index[t] (C-SVC, the hinge and
  the squared hinge; liblinear's ``solve_l2r_l1l2_svc``);
- :func:`epoch_tube`: one β = a − â per sample (ε-SVR, L1 and L2 losses; Ho and
  Lin's ``solve_l2r_l1l2_svr``), the standard form's two multipliers of a point
  folded into one, so one dot product per sample.

With an intercept, the equality yᵀα = Δ is handled by the augmented Lagrangian: the
gradient is read at f = Xw + b with b = λ + ρ(yᵀα − Δ) and the coordinate's
curvature is Qₜₜ + Dₜ + ρ (:mod:`margin_opt.solvers.linear.dcd` updates λ).

References
----------
C.-J. Hsieh, K.-W. Chang, C.-J. Lin, S. S. Keerthi and S. Sundararajan, "A dual
coordinate descent method for large-scale linear SVM", ICML 2008.
C.-H. Ho and C.-J. Lin, "Large-scale linear support vector regression", JMLR 13, 2012.
R.-E. Fan, K.-W. Chang, C.-J. Hsieh, X.-R. Wang and C.-J. Lin, "LIBLINEAR: a library
for large linear classification", JMLR 9, 2008.
"""

from __future__ import annotations

import llvmlite.ir as llir
import numpy as np
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic

__all__ = ["row_dot", "row_axpy", "row_norms", "weights", "spans", "epoch_margin",
           "epoch_tube", "decision", "decision_rows", "gram_rows", "compact_rows", "STATE_SIZE",
           "REC_WIDTH"]

#: float state of a run: [PG_max_old, PG_min_old, lam, rho, sum_y_alpha]
STATE_SIZE = 5
#: columns of the per-variable record read by an epoch (one cache line a variable):
#: epoch_margin [yₜ, pₜ, uₜ, Dₜ, Qₜₜ + Dₜ]; epoch_tube [zᵢ, εᵢ, uᵢ, Dᵢ, ‖xᵢ‖² + Dᵢ]
REC_WIDTH = 5
#: how far ahead (variables in the visiting order) an epoch asks for a row's data
#: and for a variable's record and span; the row itself is a cache miss at random
#: (text-like data: 48 MB of X), the hardware cannot guess the next one, and the
#: prefetch makes an epoch ~2.5x faster there (the same iterates)
_AHEAD_ROW = 1
_AHEAD_REC = 3
#: the curvature that stands in for 0 (an empty row in ε-SVR's tube step): every step
#: then reaches a bound of the box, as liblinear's division by zero does
_NO_CURVATURE = 1e-300


@intrinsic
def _prefetch(typingctx, arr, idx):
    """Ask the CPU to bring ``arr.flat[idx]`` into the cache (``llvm.prefetch``: a
    read, kept close); a hint only, no effect on the values (C-contiguous ``arr``)."""
    if not isinstance(arr, types.Array) or not isinstance(idx, types.Integer):
        return None

    def codegen(context, builder, sig, args):
        ary = context.make_array(sig.args[0])(context, builder, args[0])
        i8p = llir.IntType(8).as_pointer()
        i32 = llir.IntType(32)
        fnty = llir.FunctionType(llir.VoidType(), [i8p, i32, i32, i32])
        fn = cgutils.get_or_insert_function(builder.module, fnty, "llvm.prefetch.p0i8")
        index = context.cast(builder, args[1], sig.args[1], types.intp)
        ptr = builder.bitcast(builder.gep(ary.data, [index]), i8p)
        builder.call(fn, [ptr, llir.Constant(i32, 0), llir.Constant(i32, 3),
                          llir.Constant(i32, 1)])
        return context.get_dummy_value()
    return types.none(arr, idx), codegen


@njit(cache=True, nogil=True, inline="always")
def row_dot(dense, data, indices, indptr, d, r, w):
    """xᵣ·w for row r."""
    s = 0.0
    if dense:
        base = r * d
        for j in range(d):
            s += data[base + j] * w[j]
    else:
        for k in range(indptr[r], indptr[r + 1]):
            s += data[k] * w[indices[k]]
    return s


@njit(cache=True, nogil=True, inline="always")
def row_axpy(dense, data, indices, indptr, d, r, a, w):
    """w += a·xᵣ."""
    if dense:
        base = r * d
        for j in range(d):
            w[j] += a * data[base + j]
    else:
        for k in range(indptr[r], indptr[r + 1]):
            w[indices[k]] += a * data[k]


@njit(cache=True, nogil=True)
def row_norms(dense, data, indices, indptr, d, n):
    """‖xᵣ‖² of every row, ndarray of shape (n,)."""
    out = np.zeros(n)
    for r in range(n):
        s = 0.0
        if dense:
            base = r * d
            for j in range(d):
                s += data[base + j] * data[base + j]
        else:
            for k in range(indptr[r], indptr[r + 1]):
                s += data[k] * data[k]
        out[r] = s
    return out


@njit(cache=True, nogil=True)
def weights(dense, data, indices, indptr, d, rows, coef):
    """w = Σₜ coefₜ x_{rows[t]}, ndarray of shape (d,)."""
    w = np.zeros(d)
    for t in range(rows.shape[0]):
        _ask_row(dense, data, indices, indptr, rows, t + 2)
        if coef[t] != 0.0:
            row_axpy(dense, data, indices, indptr, d, rows[t], coef[t], w)
    return w


@njit(cache=True, nogil=True, inline="always")
def _ask_row(dense, data, indices, indptr, rows, k):
    """Prefetch the first cache lines of sparse row ``rows[k]`` (if any): rows read
    in a list's order are far apart in ``data``, beyond the hardware's guess."""
    if not dense and k < rows.shape[0]:
        lo = indptr[rows[k]]
        hi = min(indptr[rows[k] + 1], lo + 64)
        for q in range(lo, hi, 8):
            _prefetch(data, q)
        for q in range(lo, hi, 16):
            _prefetch(indices, q)


@njit(cache=True, nogil=True, inline="always")
def _rand_below(rng, k):
    """A pseudo-random integer in [0, k) (xorshift64*; ``rng`` holds the state)."""
    x = rng[0]
    x ^= x >> np.uint64(12)
    x ^= x << np.uint64(25)
    x ^= x >> np.uint64(27)
    rng[0] = x
    return np.int64((x * np.uint64(2685821657736338717)) >> np.uint64(33)) % k


@njit(cache=True, nogil=True, inline="always")
def _shuffle(order, active_size, rng):
    """A random permutation of ``order[:active_size]`` in place (Fisher–Yates)."""
    for i in range(active_size):
        j = i + _rand_below(rng, active_size - i)
        tmp = order[i]
        order[i] = order[j]
        order[j] = tmp


@njit(cache=True, nogil=True)
def spans(dense, indptr, d, rows):
    """Where each variable's data row lies in ``data``: ndarray of shape (m, 2), int64.

    ``[lo, hi)`` of row ``rows[t]`` (CSR: ``indptr[r], indptr[r + 1]``; dense, flat:
    ``r·d, r·d + d``), read by the epochs in one load beside the variable's record
    instead of through ``rows`` and ``indptr`` (two dependent loads at random).
    """
    m = rows.shape[0]
    out = np.empty((m, 2), dtype=np.int64)
    for t in range(m):
        r = rows[t]
        if dense:
            out[t, 0] = r * d
            out[t, 1] = r * d + d
        else:
            out[t, 0] = indptr[r]
            out[t, 1] = indptr[r + 1]
    return out


@njit(cache=True, nogil=True, inline="always")
def _span_dot(dense, data, indices, lo, hi, w):
    """x·w for the row stored in ``data[lo:hi]``."""
    s = 0.0
    if dense:
        for k in range(lo, hi):
            s += data[k] * w[k - lo]
    else:
        for k in range(lo, hi):
            s += data[k] * w[indices[k]]
    return s


@njit(cache=True, nogil=True, inline="always")
def _span_axpy(dense, data, indices, lo, hi, a, w):
    """w += a·x for the row stored in ``data[lo:hi]``."""
    if dense:
        for k in range(lo, hi):
            w[k - lo] += a * data[k]
    else:
        for k in range(lo, hi):
            w[indices[k]] += a * data[k]


@njit(cache=True, nogil=True, inline="always")
def _ask_ahead(dense, data, indices, span, rec, var, order, s, active_size):
    """Prefetch what the visits ``s + _AHEAD_ROW`` (its row's first cache lines) and
    ``s + _AHEAD_REC`` (its span, record and value) will read."""
    ahead = s + _AHEAD_REC
    if ahead < active_size:
        q = order[ahead]
        _prefetch(span, 2 * q)
        _prefetch(rec, REC_WIDTH * q)
        _prefetch(var, q)
    ahead = s + _AHEAD_ROW
    if ahead < active_size:
        q = order[ahead]
        lo = span[q, 0]
        hi = min(span[q, 1], lo + 64)
        for k in range(lo, hi, 8):
            _prefetch(data, k)
        if not dense:
            for k in range(lo, hi, 16):
                _prefetch(indices, k)


# the epochs are compiled without reference counting (they allocate nothing): text-like
# LinearSVC() epochs 0.74 → 0.66 s, the hinge's 0.49 → 0.42 s (A/B, quiet machine)
@njit(cache=True, nogil=True, _nrt=False)
def epoch_margin(dense, data, indices, span, d, rec, alpha, w, order, active_size, state, rng,
                 equality, delta):
    """One epoch of liblinear's dual CD over standard-form variables.

    ``rec[t]`` is (yₜ, pₜ, uₜ, Dₜ, Qₜₜ + Dₜ) and ``span[t]`` where its data row lies
    (:func:`spans`).  ``order[:active_size]`` are the active variables (shuffled
    here, shrunk ones moved past the end: liblinear's rule with the previous epoch's
    bounds ``state[0:2]``).  ``state[2]`` = λ, ``state[3]`` = ρ, ``state[4]`` = yᵀα
    (kept up to date).  Returns (new active size, PG_max, PG_min) where PG are the
    projected gradients of the augmented problem (intercept b = λ + ρ(yᵀα − Δ)
    included).
    """
    pg_max_old = state[0]
    pg_min_old = state[1]
    lam = state[2]
    rho = state[3] if equality else 0.0
    sya = state[4]
    _shuffle(order, active_size, rng)
    pg_max = -np.inf
    pg_min = np.inf
    s = 0
    while s < active_size:
        _ask_ahead(dense, data, indices, span, rec, alpha, order, s, active_size)
        t = order[s]
        if rec[t, 2] <= 0.0:     # a zero weight: α = 0 = u is fixed, never a violation
            active_size -= 1
            order[s] = order[active_size]
            order[active_size] = t
            continue
        lo = span[t, 0]
        hi = span[t, 1]
        yt = rec[t, 0]
        a = alpha[t]
        g = yt * _span_dot(dense, data, indices, lo, hi, w) + rec[t, 1] + rec[t, 3] * a
        if equality:
            g += yt * (lam + rho * (sya - delta))
        u = rec[t, 2]
        pg = 0.0
        if a == 0.0:
            if g > pg_max_old:
                active_size -= 1
                order[s] = order[active_size]
                order[active_size] = t
                continue
            elif g < 0.0:
                pg = g
        elif a >= u:
            if g < pg_min_old:
                active_size -= 1
                order[s] = order[active_size]
                order[active_size] = t
                continue
            elif g > 0.0:
                pg = g
        else:
            pg = g
        if pg > pg_max:
            pg_max = pg
        if pg < pg_min:
            pg_min = pg
        if abs(pg) > 1e-12:
            q = rec[t, 4] + rho
            # an empty row without intercept or D has no curvature: the step runs to the
            # bound the gradient points at (liblinear's -g/0 = ∓inf, clipped below)
            new = a - g / q if q > 0.0 else (np.inf if g < 0.0 else -np.inf)
            if new < 0.0:
                new = 0.0
            elif new > u:
                new = u
            step = new - a
            if step != 0.0:
                alpha[t] = new
                sya += yt * step
                _span_axpy(dense, data, indices, lo, hi, yt * step, w)
        s += 1
    state[4] = sya
    return active_size, pg_max, pg_min


@njit(cache=True, nogil=True, _nrt=False)
def epoch_tube(dense, data, indices, span, d, rec, beta, w, order, active_size, state, rng,
               equality, delta):
    """One epoch of Ho and Lin's dual CD for ε-SVR in β = a − â (one per sample).

    Minimizes ½‖Σβᵢxᵢ‖² + Σ(εᵢ|βᵢ| − zᵢβᵢ + ½Dᵢβᵢ²) over −uᵢ ≤ βᵢ ≤ uᵢ, with the
    intercept's augmented term as in :func:`epoch_margin` (b = λ + ρ(Σβ − Δ)).
    ``rec[i]`` is (zᵢ, εᵢ, uᵢ, Dᵢ, ‖xᵢ‖² + Dᵢ), ``span[i]`` where row i lies.
    ``state[0]`` is the previous epoch's largest violation (liblinear's Gmax_old).
    Returns (new active size, largest violation, 0).
    """
    g_max_old = state[0]
    lam = state[2]
    rho = state[3] if equality else 0.0
    sb = state[4]
    _shuffle(order, active_size, rng)
    v_max = 0.0
    s = 0
    while s < active_size:
        _ask_ahead(dense, data, indices, span, rec, beta, order, s, active_size)
        i = order[s]
        u = rec[i, 2]
        if u <= 0.0:             # a zero weight: β = 0 is fixed, never a violation
            active_size -= 1
            order[s] = order[active_size]
            order[active_size] = i
            continue
        lo = span[i, 0]
        hi = span[i, 1]
        bt = beta[i]
        g = _span_dot(dense, data, indices, lo, hi, w) - rec[i, 0] + rec[i, 3] * bt
        if equality:
            g += lam + rho * (sb - delta)
        e = rec[i, 1]
        gp = g + e
        gn = g - e
        viol = 0.0
        if bt == 0.0:
            if gp < 0.0:
                viol = -gp
            elif gn > 0.0:
                viol = gn
            elif gp > g_max_old and gn < -g_max_old:
                active_size -= 1
                order[s] = order[active_size]
                order[active_size] = i
                continue
        elif bt >= u:
            if gp > 0.0:
                viol = gp
            elif gp < -g_max_old:
                active_size -= 1
                order[s] = order[active_size]
                order[active_size] = i
                continue
        elif bt <= -u:
            if gn < 0.0:
                viol = -gn
            elif gn > g_max_old:
                active_size -= 1
                order[s] = order[active_size]
                order[active_size] = i
                continue
        elif bt > 0.0:
            viol = abs(gp)
        else:
            viol = abs(gn)
        if viol > v_max:
            v_max = viol
        h = rec[i, 4] + rho
        if h <= 0.0:          # an empty row without intercept or D: linear, to a bound
            h = _NO_CURVATURE
        if gp < h * bt:
            step = -gp / h
        elif gn > h * bt:
            step = -gn / h
        else:
            step = -bt
        if abs(step) >= 1e-12:
            new = bt + step
            if new < -u:
                new = -u
            elif new > u:
                new = u
            step = new - bt
            if step != 0.0:
                beta[i] = new
                sb += step
                _span_axpy(dense, data, indices, lo, hi, step, w)
        s += 1
    state[4] = sb
    return active_size, v_max, 0.0


@njit(cache=True, nogil=True)
def decision(dense, data, indices, indptr, d, n, w):
    """Xw: xᵣ·w of every row, ndarray of shape (n,)."""
    out = np.empty(n)
    for r in range(n):
        out[r] = row_dot(dense, data, indices, indptr, d, r, w)
    return out


@njit(cache=True, nogil=True)
def gram_rows(dense, data, indices, indptr, d, rows):
    """X_R X_Rᵀ of the rows R = ``rows``, ndarray of shape (len(rows), len(rows)).

    Each row in turn is scattered into a dense buffer of length d and dotted with the
    rows after it: O(|R|² nnz(xᵣ)), no sparse matrix product.
    """
    k = rows.shape[0]
    G = np.empty((k, k))
    buf = np.zeros(d)
    for a in range(k):
        r = rows[a]
        row_axpy(dense, data, indices, indptr, d, r, 1.0, buf)
        for c in range(a, k):
            v = row_dot(dense, data, indices, indptr, d, rows[c], buf)
            G[a, c] = v
            G[c, a] = v
        row_axpy(dense, data, indices, indptr, d, r, -1.0, buf)
        if not dense:                       # exact zeros again (no rounding left behind)
            for q in range(indptr[r], indptr[r + 1]):
                buf[indices[q]] = 0.0
        else:
            buf[:] = 0.0
    return G


@njit(cache=True, nogil=True)
def _compact_csr(data, indices, indptr, rows):
    """The CSR arrays of the rows ``rows`` alone, in that order (a copy, O(nnz))."""
    k = rows.shape[0]
    ptr = np.empty(k + 1, dtype=np.int64)
    ptr[0] = 0
    for t in range(k):
        ptr[t + 1] = ptr[t] + indptr[rows[t] + 1] - indptr[rows[t]]
    out_data = np.empty(ptr[k])
    out_idx = np.empty(ptr[k], dtype=indices.dtype)
    for t in range(k):
        _ask_row(False, data, indices, indptr, rows, t + 2)
        lo = indptr[rows[t]]
        for q in range(ptr[t + 1] - ptr[t]):
            out_data[ptr[t] + q] = data[lo + q]
            out_idx[ptr[t] + q] = indices[lo + q]
    return out_data, out_idx, ptr.astype(indices.dtype)


def compact_rows(X4, rows):
    """The rows ``rows`` of X copied next to each other: (X4 of them, their rows
    0..k−1).  Products repeated on the same rows (the Newton-CG steps: ~100 on a few
    thousand rows spread over a large X) then read memory in order (measured 1.35x
    faster a product on the text-like set, the copy costing about half of one).

    Parameters
    ----------
    X4 : tuple
        (dense, data, indices, indptr, d) of X.
    rows : ndarray of shape (k,), int64

    Returns
    -------
    X4_rows : tuple
    local : ndarray of shape (k,), int64
    """
    dense, data, indices, indptr, d = X4
    local = np.arange(rows.shape[0], dtype=np.int64)
    if dense:
        sub = np.ascontiguousarray(data.reshape(-1, d)[rows]).reshape(-1)
        return (True, sub, indices, indptr, d), local
    sub_data, sub_idx, sub_ptr = _compact_csr(data, indices, indptr, rows)
    return (False, sub_data, sub_idx, sub_ptr, d), local


@njit(cache=True, nogil=True)
def decision_rows(dense, data, indices, indptr, d, rows, w):
    """x_{rows[k]}·w, ndarray of shape (len(rows),)."""
    out = np.empty(rows.shape[0])
    for k in range(rows.shape[0]):
        _ask_row(dense, data, indices, indptr, rows, k + 2)
        out[k] = row_dot(dense, data, indices, indptr, d, rows[k], w)
    return out
