"""Working-set selection: the pair (i, j) of SMO, and the O(active) passes it takes.

:func:`select_pair` picks LIBSVM's pair: i the maximal violator, j by the second-order
rule (WSS 2) from the row of i, gathered in position order (:func:`position_row`).

The passes, compiled to branch-free, vectorizable loops:

Per iteration SMO makes two passes over its active variables: the gradient update
fused with the first half of the next selection (m = max over I_up of gₜ = −yₜ∇ₜ and
M = min over I_low, with their positions), and the second-order selection of j
(Fan, Chen & Lin 2005, WSS 2).  Written with branches on the labels and bounds, or
with a running (value, index) pair, they cost ~3.5 ns per variable here: the branches
are unpredictable and the index reduction is one long dependency chain.  Here:

* membership of I_up / I_low is kept in two penalty arrays (0, or :data:`BIG` for a
  variable outside the set), so that gₜ − pu[t] and gₜ + pl[t] are plain arithmetic;
  a variable's membership changes only when its α does (the pair, a polish, a
  shrinking), and the caller refreshes the penalties there (:func:`set_pens`);
* the maxima and minima are taken per chunk of :data:`CH` variables with LLVM's
  ``maxnum``/``minnum`` (which vectorize; numba's own ``max`` does not), and the
  position is found afterwards by scanning the winning chunk for the extreme value
  (for WSS 2 among the values the pass kept, so that the scan has no divisions);
* large passes are split over threads (:func:`fused_update`, :func:`second_order_j` with
  ``nthr > 1``), each part reducing its own chunks.

The answer does not depend on the chunking or the number of threads: every element
is computed by the same expression (fast-math limited to ``nnan``/``nsz``, no
reassociation or contraction of the element arithmetic), a maximum is exact whatever
the order, and ties go to the last position, as in LIBSVM's scalar loops
(``>=`` / ``<=``).

References
----------
R.-E. Fan, P.-H. Chen and C.-J. Lin, "Working set selection using second order
information for training support vector machines", JMLR 6:1889–1918, 2005.
C.-C. Chang and C.-J. Lin, "LIBSVM", ACM TIST 2(3), 2011, §4.1 (``select_working_set``).
"""

from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba import njit, prange, types
from numba.extending import intrinsic

from . import packed as _pk
from .cache import get_row
from .state import S_ACTIVE, S_EPOCH, S_LAYOUT, S_TICK, split, when

__all__ = ["BIG", "CH", "set_pens", "first_pass", "gather", "fused_update", "second_order_j",
           "position_row", "select_pair"]

#: penalty of a variable outside I_up (in ``pu``) or I_low (in ``pl``); sums with it
#: stay far above any gradient (|∇| < 1e250 is checked by the alpha cap long before)
BIG = 1e300
#: variables per chunk of a reduction
CH = 256
#: LIBSVM's guard for non-positive curvature
TAU = 1e-12
#: element arithmetic: no NaN (a NaN gradient is caught by the caller's cap), signed
#: zeros equal; no reassociation, contraction or reciprocal: every element is exact
#: IEEE arithmetic, the same in the vector loop and in the scalar scan
_FV = {"nnan", "nsz"}


def _minmax(name):
    @intrinsic
    def op(typingctx, a, b):
        sig = types.float64(types.float64, types.float64)

        def codegen(context, builder, signature, args):
            fnty = ir.FunctionType(ir.DoubleType(), [ir.DoubleType(), ir.DoubleType()])
            fn = builder.module.declare_intrinsic(name, fnty=fnty)
            # max/min are associative and commutative: reassociation cannot change them
            return builder.call(fn, args, fastmath=("nnan", "nsz", "reassoc"))

        return sig, codegen

    return op


#: ``llvm.maxnum`` / ``llvm.minnum`` (numba's ``max`` is a compare and a select
#: without fast-math flags, which the loop vectorizer does not reduce)
fmax = _minmax("llvm.maxnum.f64")
fmin = _minmax("llvm.minnum.f64")


@njit(cache=True, nogil=True, _nrt=False)
def set_pens(lo, hi, alpha, y, C, pu, pl):
    """pu[t] = 0 for t in I_up, else BIG; pl[t] = 0 for t in I_low, else BIG (t in [lo, hi)).

    I_up = {y = +1, α < C} ∪ {y = −1, α > 0}; I_low = {y = +1, α > 0} ∪ {y = −1, α < C}.
    """
    for t in range(lo, hi):
        a = alpha[t]
        below = a < C[t]
        above = a > 0.0
        if y[t] > 0.0:
            up, low = below, above
        else:
            up, low = above, below
        pu[t] = 0.0 if up else BIG
        pl[t] = 0.0 if low else BIG


@njit(cache=True, nogil=True, fastmath=_FV, _nrt=False)
def _last_up(G, y, pu, s, e, v):
    for t in range(e - 1, s - 1, -1):
        if -y[t] * G[t] - pu[t] == v:
            return t
    return -1


@njit(cache=True, nogil=True, fastmath=_FV, _nrt=False)
def _last_low(G, y, pl, s, e, v):
    for t in range(e - 1, s - 1, -1):
        if -y[t] * G[t] + pl[t] == v:
            return t
    return -1


@njit(cache=True, inline="always")
def _keep(mu, ml, s, best):
    """Fold one chunk's (max, min) into best = [max, its chunk, min, its chunk]: the
    later chunk wins ties."""
    if mu >= best[0]:
        best[0] = mu
        best[1] = s
    if ml <= best[2]:
        best[2] = ml
        best[3] = s


@njit(cache=True, inline="always")
def _start(best):
    best[0] = -np.inf
    best[1] = -1
    best[2] = np.inf
    best[3] = -1


@njit(cache=True, nogil=True, fastmath=_FV, _nrt=False)
def _first_range(G, y, pu, pl, lo, hi, res):
    """res = (max gu, its chunk, min gl, its chunk) over [lo, hi)."""
    _start(res)
    for s in range(lo, hi, CH):
        e = min(s + CH, hi)
        Gs, ys, pus, pls = G[s:e], y[s:e], pu[s:e], pl[s:e]
        mu = -np.inf
        ml = np.inf
        for k in range(e - s):
            g = -ys[k] * Gs[k]
            mu = fmax(mu, g - pus[k])
            ml = fmin(ml, g + pls[k])
        _keep(mu, ml, s, res)


@njit(cache=True, nogil=True, fastmath=_FV, _nrt=False)
def _update_range(G, y, pu, pl, bi, bj, dai, daj, lo, hi, res):
    """∇ₜ += yₜ(bi[t]·dai + bj[t]·daj) (the rows of the pair in position order), fused
    with :func:`_first_range`."""
    _start(res)
    for s in range(lo, hi, CH):
        e = min(s + CH, hi)
        Gs, ys, pus, pls, bis, bjs = G[s:e], y[s:e], pu[s:e], pl[s:e], bi[s:e], bj[s:e]
        mu = -np.inf
        ml = np.inf
        for k in range(e - s):
            yk = ys[k]
            gt = Gs[k] + yk * (bis[k] * dai + bjs[k] * daj)
            Gs[k] = gt
            g = -yk * gt
            mu = fmax(mu, g - pus[k])
            ml = fmin(ml, g + pls[k])
        _keep(mu, ml, s, res)


@njit(cache=True, nogil=True, fastmath=_FV, _nrt=False)
def _gather_range(row, index, buf, lo, hi):
    for s in range(lo, hi, CH):
        e = min(s + CH, hi)
        ix, b = index[s:e], buf[s:e]
        for k in range(e - s):
            b[k] = row[ix[k]]


@njit(cache=True, nogil=True, fastmath=_FV, _nrt=False)
def _od(gmax, yk, gk, plk, c, ri, qi, qk, rowc):
    """The WSS 2 value −(m − gₜ)²/aᵢₜ of one variable, or ≥ BIG/2 outside the candidates."""
    gd = gmax + yk * gk
    kit = qi if c == ri else rowc
    quad = qi + qk - 2.0 * kit
    quad = quad if quad > 0.0 else TAU
    pen = 0.0 if gd > 0.0 else BIG
    return -(gd * gd) / quad + plk + pen


@njit(cache=True, nogil=True, fastmath=_FV, _nrt=False)
def _wss2_range(G, y, pl, QD, index, bi, ri, qi, gmax, lo, hi, res, od):
    """res = (min od, its chunk) over [lo, hi); ``bi`` the row of i in position order;
    every value is kept in ``od`` for the position scan."""
    best = np.inf
    cb = -1
    for s in range(lo, hi, CH):
        e = min(s + CH, hi)
        Gs, ys, pls, qs, ix, bis = G[s:e], y[s:e], pl[s:e], QD[s:e], index[s:e], bi[s:e]
        ods = od[s:e]
        mn = np.inf
        for k in range(e - s):
            v = _od(gmax, ys[k], Gs[k], pls[k], ix[k], ri, qi, qs[k], bis[k])
            ods[k] = v
            mn = fmin(mn, v)
        if mn <= best:
            best = mn
            cb = s
    res[0] = best
    res[1] = cb


@njit(cache=True, nogil=True, _nrt=False)
def _last_od(od, s, e, v):
    # the kept values, not recomputed: a scan without divisions (it cost 3.7× the pass)
    for t in range(e - 1, s - 1, -1):
        if od[t] == v:
            return t
    return -1


@njit(cache=True, parallel=True)
def _first_par(G, y, pu, pl, na, nthr, parts):
    step = ((na + nthr - 1) // nthr + CH - 1) // CH * CH
    for h in prange(nthr):
        _first_range(G, y, pu, pl, min(na, h * step), min(na, (h + 1) * step), parts[h])


@njit(cache=True, parallel=True)
def _update_par(G, y, pu, pl, bi, bj, dai, daj, na, nthr, parts):
    step = ((na + nthr - 1) // nthr + CH - 1) // CH * CH
    for h in prange(nthr):
        _update_range(G, y, pu, pl, bi, bj, dai, daj, min(na, h * step),
                      min(na, (h + 1) * step), parts[h])


@njit(cache=True, parallel=True)
def _wss2_par(G, y, pl, QD, index, bi, ri, qi, gmax, na, nthr, parts, od):
    step = ((na + nthr - 1) // nthr + CH - 1) // CH * CH
    for h in prange(nthr):
        _wss2_range(G, y, pl, QD, index, bi, ri, qi, gmax, min(na, h * step),
                    min(na, (h + 1) * step), parts[h], od)


@njit(cache=True, parallel=True)
def _gather_par(row, index, buf, na, nthr):
    step = ((na + nthr - 1) // nthr + CH - 1) // CH * CH
    for h in prange(nthr):
        _gather_range(row, index, buf, min(na, h * step), min(na, (h + 1) * step))


@njit(cache=True, nogil=True, _nrt=False)
def _combine_pairs(parts, nthr, out):
    """Merge per-part (max, chunk, min, chunk): the later part wins ties."""
    _start(out)
    for h in range(nthr):
        if parts[h, 1] >= 0 and parts[h, 0] >= out[0]:
            out[0] = parts[h, 0]
            out[1] = parts[h, 1]
        if parts[h, 3] >= 0 and parts[h, 2] <= out[2]:
            out[2] = parts[h, 2]
            out[3] = parts[h, 3]


@njit(cache=True, nogil=True, _nrt=False)
def _positions(G, y, pu, pl, na, red, firstf, firsti):
    """From (max, chunk, min, chunk) to m, M and their positions (−1: empty set)."""
    Gmax, cu, Mmin, cl = red[0], np.int64(red[1]), red[2], np.int64(red[3])
    imax = -1
    jmax = -1
    if cu >= 0 and Gmax > -0.5 * BIG:
        imax = _last_up(G, y, pu, cu, min(cu + CH, na), Gmax)
    if cl >= 0 and Mmin < 0.5 * BIG:
        jmax = _last_low(G, y, pl, cl, min(cl + CH, na), Mmin)
    firstf[0] = Gmax if imax >= 0 else -np.inf
    firstf[1] = Mmin if jmax >= 0 else np.inf
    firsti[0] = imax
    firsti[1] = jmax


@njit(cache=True, nogil=True)
def _first_split(G, y, pu, pl, na, nthr, parts, red):
    _first_par(G, y, pu, pl, na, nthr, parts)
    _combine_pairs(parts, nthr, red)


@njit(cache=True, nogil=True, _nrt=False)
def first_pass(G, y, pu, pl, na, nthr, parts, red, firstf, firsti):
    """m = max_{I_up} g and M = min_{I_low} g over the first ``na`` positions, with the
    last position of each (ties: LIBSVM's ``>=``), into ``firstf`` / ``firsti``;
    ``nthr`` threads (None: a serial run, see :mod:`.state`)."""
    if not _first_threads(nthr, G, y, pu, pl, na, nthr, parts, red):
        _first_range(G, y, pu, pl, np.int64(0), na, red)
    _positions(G, y, pu, pl, na, red, firstf, firsti)


@njit(cache=True, nogil=True, _nrt=False)
def gather(row, index, buf, na, nthr):
    """buf[t] = row[index[t]] for t < na: a row kept by data row, in position order.

    One tight pass over a row that is usually cold (in main memory): the passes that
    follow read ``buf`` contiguously, vectorized, from the processor's caches.
    """
    if not _gather_threads(nthr, row, index, buf, na, nthr):
        _gather_range(row, index, buf, np.int64(0), na)


@njit(cache=True, nogil=True)
def _update_split(G, y, pu, pl, bi, bj, dai, daj, na, nthr, parts, red):
    _update_par(G, y, pu, pl, bi, bj, dai, daj, na, nthr, parts)
    _combine_pairs(parts, nthr, red)


@njit(cache=True, nogil=True, _nrt=False)
def fused_update(G, y, pu, pl, bi, bj, dai, daj, na, nthr, parts, red, firstf, firsti):
    """The gradient update of a pair step (``bi``, ``bj``: the rows of i and j in
    position order) fused with :func:`first_pass` of the next selection."""
    if not _update_threads(nthr, G, y, pu, pl, bi, bj, dai, daj, na, nthr, parts, red):
        _update_range(G, y, pu, pl, bi, bj, dai, daj, np.int64(0), na, red)
    _positions(G, y, pu, pl, na, red, firstf, firsti)


@njit(cache=True, nogil=True)
def _wss2_split(G, y, pl, QD, index, bi, ri, qi, gmax, na, nthr, parts, red, od):
    _wss2_par(G, y, pl, QD, index, bi, ri, qi, gmax, na, nthr, parts, od)
    red[0] = np.inf
    red[1] = -1
    for h in range(nthr):
        if parts[h, 1] >= 0 and parts[h, 0] <= red[0]:
            red[0] = parts[h, 0]
            red[1] = parts[h, 1]


@njit(cache=True, nogil=True, _nrt=False)
def second_order_j(G, y, pl, QD, index, bi, i, gmax, na, nthr, parts, red, od):
    """j of WSS 2 for the pair (i, j): argmin over I_low with m − gₜ > 0 of
    −(m − gₜ)²/(Kᵢᵢ + Kₜₜ − 2Kᵢₜ) (last position on ties), or −1; ``bi`` the row
    of i in position order, ``od`` scratch of length ≥ ``na``."""
    ri = index[i]
    qi = QD[i]
    if not _wss2_threads(nthr, G, y, pl, QD, index, bi, ri, qi, gmax, na, nthr, parts, red,
                         od):
        _wss2_range(G, y, pl, QD, index, bi, ri, qi, gmax, np.int64(0), na, red, od)
    cb = np.int64(red[1])
    if cb < 0 or red[0] >= 0.5 * BIG:
        return -1
    return _last_od(od, cb, min(cb + CH, na), red[0])


#: the parallel passes, called where a run splits (compiled only for a run that may)
_first_threads = split(_first_split)
_gather_threads = split(_gather_par)
_update_threads = split(_update_split)
_wss2_threads = split(_wss2_split)


# ---------------------------------------------------------------- the pair

@njit(cache=True, nogil=True)
def _gather_packed(r, st, kd, cc, buf, nthr):
    """:func:`gather` of the packed row of data row r where rows come packed (True);
    False, nothing done, where they do not."""
    if not _pk.active(cc, st[S_EPOCH]):
        return False
    gather(_pk.row(r, st, kd, cc), cc.cidx, buf, st[S_ACTIVE], nthr)
    return True


#: packed rows, compiled only for a cache that packs
_gather_packed_if = when(_gather_packed)


@njit(cache=True, inline="always")
def position_row(v, avoid, index, st, kd, cc, all_cols, bufs, btag, nthr):
    """Which of the two buffers ``bufs`` holds the row of variable v in position order
    (over the active set), gathering it from the row cache when neither does;
    ``avoid`` is a buffer that must be kept (−1: none).  ``btag[b]`` = (data row,
    layout, last use) of buffer b."""
    r = index[v]
    st[S_TICK] += 1
    for b in range(2):
        if b != avoid and btag[b, 0] == r and btag[b, 1] == st[S_LAYOUT]:
            btag[b, 2] = st[S_TICK]
            return b
    if avoid >= 0:
        b = 1 - avoid
    else:
        b = 0 if btag[0, 2] <= btag[1, 2] else 1
    if not _gather_packed_if(cc.flat, r, st, kd, cc, bufs[b], nthr):
        s = get_row(v, False, index, st, kd, cc, all_cols)
        gather(cc.cache[s], index, bufs[b], st[S_ACTIVE], nthr)
    btag[b, 0] = r
    btag[b, 1] = st[S_LAYOUT]
    btag[b, 2] = st[S_TICK]
    return b


@njit(cache=True, inline="always")
def select_pair(alpha, G, y, C, QD, index, st, kd, cc, all_cols, tol, wss2, out, fresh,
                firstf, firsti, pu, pl, nthr, parts, red, bufs, btag):
    """Working pair (out[0], out[1]) and the gap m(α) − M(α); returns the gap.

    Returns with out[0] = −1 when the gap is below ``tol`` (optimal on the active set).
    With g_t = −y_t∇_t: I_up = {y=+1, α<C} ∪ {y=−1, α>0}, I_low the mirror image,
    m = max_{I_up} g, M = min_{I_low} g.  When ``fresh`` the first pass (m, M and
    their positions in ``firstf``/``firsti``) was already done by the gradient
    update.  The passes are those above (``pu``/``pl``: the set penalties);
    with WSS 2 the row of i is left in position order in ``bufs[out[2]]``.
    """
    na = st[S_ACTIVE]
    if not fresh:
        first_pass(G, y, pu, pl, na, nthr, parts, red, firstf, firsti)
    Gmax = firstf[0]
    Mmin = firstf[1]
    imax = firsti[0]
    jmax = firsti[1]
    gap = Gmax - Mmin
    out[0] = -1
    out[2] = -1
    if imax < 0 or jmax < 0 or gap < tol:
        return gap
    if not wss2:
        out[0] = imax
        out[1] = jmax
        return gap
    i = imax
    b = position_row(i, np.int64(-1), index, st, kd, cc, all_cols, bufs, btag, nthr)
    j = second_order_j(G, y, pl, QD, index, bufs[b], i, Gmax, na, nthr, parts, red, bufs[2])
    if j < 0:
        return gap
    out[0] = i
    out[1] = j
    out[2] = b
    return gap

