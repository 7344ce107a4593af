"""The SMO iteration, compiled (numba, ``cache=True``): LIBSVM's ``Solver::Solve`` loop.

Each iteration selects a working pair (:mod:`.select`), minimizes the dual exactly on
it, clipped to the box (:func:`_update_pair`), and updates the gradient from the two
kernel rows (fused with the first pass of the next selection) and Ḡ; every
``min(m, 1000)`` iterations the bound variables that cannot move are shrunk
(:mod:`.shrink`).  :func:`smo_run` runs it until optimal on all variables, a chunk
end, ``max_iter``, a stall or a diverging multiplier.  Without the equality yᵀα = Δ,
:func:`coordinate_run` is greedy coordinate descent on the same arrays.  Also here:
the initial gradient, the intercept and the objectives of the read-out.

Everything here works on plain arrays so that the driver (:mod:`.driver`) stays
readable.  Structures passed around: :class:`.rows.KernelArrays` ``kd`` (how kernel
rows are computed), :class:`.cache.RowCache` ``cc`` (the slots of kernel rows), ``st``
(int64 state: see :mod:`.state`).  Both are named tuples, which numba compiles to
plain tuples (attribute access costs nothing).

References
----------
J. C. Platt, "Sequential minimal optimization", MSR-TR-98-14, 1998.
R.-E. Fan, P.-H. Chen and C.-J. Lin, "Working set selection using second order
information for training SVM", JMLR 6, 2005 (WSS 2, Algorithm 1 and eq. (12)).
C.-C. Chang and C.-J. Lin, "LIBSVM: a library for support vector machines", ACM
TIST 2(3), 2011, §4.1 (stopping rule, shrinking, gradient reconstruction).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ...kkt import relative_gap as _relative_gap
from . import packed as _pk
from . import select as _ps
from .cache import get_row, scratch_row
from .select import position_row, select_pair
from .shrink import do_shrinking, shrink_maxima, unshrink
from .state import (
    N_STATE,
    R_ACTIVE_OPTIMAL,
    R_CAP,
    R_CHUNK,
    R_MAX_ITER,
    R_OPTIMAL,
    R_RECONSTRUCT,
    R_STALLED,
    S_ACTIVE,
    S_ACTIVE_SUM,
    S_COUNTER,
    S_EPOCH,
    S_FULL_ITER,
    S_ITER,
    S_MARK,
    S_PENDING,
    S_STOP_ACTIVE,
    S_UNSHRINK,
    count,
    threads_if,
)

__all__ = ["init_gradient", "smo_run", "smo_run_steps", "coordinate_run", "objectives",
           "calculate_b", "relative_gap", "start_state", "after_polish", "tighter_phase"]

# between smo_run and its loop only: shrink, or unshrink, and call the loop again
_R_SHRINK, _R_UNSHRINK = 5, 6


TAU = 1e-12          # LIBSVM's guard for non-positive curvature


@njit(cache=True, nogil=True)
def init_gradient(alpha, G, G_bar, y, p, C, index, st, kd, cc, all_cols):
    """G = Qα + p over all variables and G_bar = Σ_{α_i = C_i} C_i y_i K[index[i], :]
    (by data row: LIBSVM's Ḡ is yₜ·G_bar[index[t]])."""
    m = alpha.shape[0]
    cache = cc.cache
    for t in range(m):
        G[t] = p[t]
    G_bar[:] = 0.0
    for i in range(m):
        if alpha[i] > 0.0:
            s = get_row(i, True, index, st, kd, cc, all_cols)
            row = cache[s]
            a = alpha[i] * y[i]
            for t in range(m):
                G[t] += a * y[t] * row[index[t]]
            if alpha[i] >= C[i]:
                _axpy(C[i] * y[i], row, G_bar)


@njit(cache=True, nogil=True, fastmath={"nnan", "nsz"})
def _axpy(c, row, out):
    """out += c·row (data order, contiguous)."""
    for k in range(out.shape[0]):
        out[k] += c * row[k]


@njit(cache=True, inline="always")
def _update_pair(i, j, alpha, G, y, C, QD, Kij):
    """Analytic minimization on y_i a_i + y_j a_j = const, clipped to the box.

    Returns the old (alpha_i, alpha_j).
    """
    Ci = C[i]
    Cj = C[j]
    oi = alpha[i]
    oj = alpha[j]
    if y[i] != y[j]:
        quad = QD[i] + QD[j] - 2.0 * Kij
        if quad <= 0.0:
            quad = TAU
        delta = (-G[i] - G[j]) / quad
        diff = oi - oj
        ai = oi + delta
        aj = oj + delta
        if diff > 0.0:
            if aj < 0.0:
                aj = 0.0
                ai = diff
        else:
            if ai < 0.0:
                ai = 0.0
                aj = -diff
        if diff > Ci - Cj:
            if ai > Ci:
                ai = Ci
                aj = Ci - diff
        else:
            if aj > Cj:
                aj = Cj
                ai = Cj + diff
    else:
        quad = QD[i] + QD[j] - 2.0 * Kij
        if quad <= 0.0:
            quad = TAU
        delta = (G[i] - G[j]) / quad
        ssum = oi + oj
        ai = oi - delta
        aj = oj + delta
        if ssum > Ci:
            if ai > Ci:
                ai = Ci
                aj = ssum - Ci
        else:
            if aj < 0.0:
                aj = 0.0
                ai = ssum
        if ssum > Cj:
            if aj > Cj:
                aj = Cj
                ai = ssum - Cj
        else:
            if ai < 0.0:
                ai = 0.0
                aj = ssum
    alpha[i] = ai
    alpha[j] = aj
    return oi, oj


@njit(cache=True, inline="always")
def _update_gbar(v, old, alpha, G_bar, y, C, index, st, kd, cc, all_cols):
    was_upper = old >= C[v]
    is_upper = alpha[v] >= C[v]
    if was_upper == is_upper:
        return
    c = C[v] * y[v] if is_upper else -C[v] * y[v]
    if _pk.active(cc, st[S_EPOCH]):
        _axpy(c, scratch_row(v, index, st, kd, cc, all_cols), G_bar)
    else:
        s = get_row(v, True, index, st, kd, cc, all_cols)
        _axpy(c, cc.cache[s], G_bar)


@njit(cache=True, inline="always")
def _progress(gap, st, fout, stall_window):
    """The progress test: True when m(α) − M(α) has not halved for ``stall_window``
    iterations (``fout[1]`` holds the gap at the last mark, ``st[S_MARK]`` its iteration)."""
    if gap <= 0.5 * fout[1]:
        fout[1] = gap
        st[S_MARK] = st[S_ITER]
        return False
    return st[S_ITER] - st[S_MARK] > stall_window


@njit(cache=True, nogil=True)
def smo_run(alpha, G, G_bar, y, p, C, QD, index, perm, st, kd, cc, all_cols,
            tol, wss2, shrinking, max_iter, stop_iter, alpha_cap, stall_window, fout, pthr, pmin):
    """Run SMO iterations until optimal, ``stop_iter`` (chunk end), ``max_iter`` or a stall.

    The per-variable arrays are permuted in place by shrinking (``perm[k]`` is
    the original variable at position k).  ``fout[0]`` receives the last gap
    m(α) − M(α).  Returns one of the ``R_*`` codes: ``R_STALLED`` when the gap has
    not halved in ``stall_window`` iterations (see :func:`_progress`), ``R_CAP``
    when a multiplier exceeds ``alpha_cap`` (a diverging dual: e.g. the hard
    margin on data that no hyperplane separates), ``R_RECONSTRUCT`` when a gradient
    reconstruction is left to the caller (:func:`.shrink.reconstruct_by_tiles`, then
    this again, which finishes the step), ``R_ACTIVE_OPTIMAL`` where the active
    variables are optimal, some are shrunk and ``st[S_STOP_ACTIVE]`` asks to stop there
    (they are then left shrunk).  Passes over at least ``pmin`` active
    variables are split over ``pthr`` threads (None: a serial run, see :mod:`.state`).
    """
    m = alpha.shape[0]
    pair = np.empty(3, dtype=np.int64)
    firstf = np.empty(2)
    firsti = np.empty(2, dtype=np.int64)
    pu = np.empty(m)
    pl = np.empty(m)
    parts = np.empty((count(pthr), 4))
    red = np.empty(4)
    bufs = np.empty((3, m))          # the rows of the pair in position order; WSS 2 scratch
    btag = np.full((2, 3), -1, dtype=np.int64)
    interval = min(m, 1000)
    pending = st[S_PENDING]          # a step the last call left, after R_RECONSTRUCT
    st[S_PENDING] = 0
    while True:
        if pending:
            code = pending
            pending = 0
        else:
            code = _smo_loop(alpha, G, G_bar, y, p, C, QD, index, perm, st, kd, cc, all_cols,
                             tol, wss2, shrinking, max_iter, stop_iter, alpha_cap,
                             stall_window, fout, pthr, pmin, pair, firstf, firsti, pu, pl,
                             parts, red, bufs, btag)
        # the steps that allocate, taken here for the loop (which counts no references);
        # where one leaves its gradient reconstruction to the caller (by BLAS tiles), the
        # run returns R_RECONSTRUCT and takes the step again on the next call
        if code == _R_SHRINK:
            g1, g2 = shrink_maxima(alpha, G, y, C, st)
            if st[S_UNSHRINK] == 0 and g1 + g2 <= tol * 10.0:     # LIBSVM's early unshrinking
                if not unshrink(alpha, G, G_bar, y, p, C, QD, index, perm, st, kd, cc,
                                all_cols):
                    st[S_PENDING] = code
                    return R_RECONSTRUCT
                st[S_UNSHRINK] = 1
            do_shrinking(g1, g2, alpha, G, y, p, C, QD, index, perm, st, cc)
            st[S_COUNTER] = interval + 1     # the loop's first decrement leaves ``interval``
        elif code == _R_UNSHRINK:
            if st[S_STOP_ACTIVE]:
                return R_ACTIVE_OPTIMAL      # the caller polishes before it unshrinks
            if not unshrink(alpha, G, G_bar, y, p, C, QD, index, perm, st, kd, cc, all_cols):
                st[S_PENDING] = code
                return R_RECONSTRUCT
            st[S_COUNTER] = 2                # as LIBSVM: shrink again right after this step
        else:
            return code


#: :func:`smo_run` run by the interpreter, each of its steps compiled (the loop, the
#: shrinking, the unshrinking): what the driver (:mod:`.driver`) calls.  The loop returns
#: to it once per shrinking interval (min(m, 1000) iterations), and a fit that never
#: calls the compiled :func:`smo_run` (the batch entries do) does not compile its
#: library, which numba builds by linking and optimizing every step again (a fifth of a
#: first fit's compilation)
smo_run_steps = smo_run.py_func


@njit(cache=True, nogil=True, _nrt=False)
def _smo_loop(alpha, G, G_bar, y, p, C, QD, index, perm, st, kd, cc, all_cols, tol, wss2,
              shrinking, max_iter, stop_iter, alpha_cap, stall_window, fout, pthr, pmin, pair,
              firstf, firsti, pu, pl, parts, red, bufs, btag):
    """The loop of :func:`smo_run` on its workspace, compiled without reference counting:
    it allocates nothing, and the array views it takes every iteration (a cached row, the
    buffers of the pair) would otherwise each cost two atomic operations — about 40 % of
    an iteration on a small problem."""
    m = alpha.shape[0]
    _ps.set_pens(np.int64(0), m, alpha, y, C, pu, pl)    # α may have changed since the last call
    fresh = False
    interval = min(m, 1000)
    while True:
        if st[S_ITER] >= max_iter:
            return R_MAX_ITER
        if st[S_ITER] >= stop_iter:
            return R_CHUNK
        st[S_COUNTER] -= 1
        if st[S_COUNTER] <= 0:
            st[S_COUNTER] = interval
            if shrinking:
                return _R_SHRINK          # smo_run shrinks and calls again (fresh passes)
        nt = threads_if(pthr, st[S_ACTIVE] >= pmin)     # None: a serial run (.state)
        gap = select_pair(alpha, G, y, C, QD, index, st, kd, cc, all_cols, tol, wss2, pair,
                          fresh, firstf, firsti, pu, pl, nt, parts, red, bufs, btag)
        if pair[0] < 0:
            fout[0] = gap
            if st[S_ACTIVE] < m:
                return _R_UNSHRINK        # optimal on the active set: smo_run unshrinks
            return R_OPTIMAL
        fout[0] = gap
        if _progress(gap, st, fout, stall_window):
            return R_STALLED
        st[S_ITER] += 1
        st[S_ACTIVE_SUM] += st[S_ACTIVE]
        i = pair[0]
        j = pair[1]
        bi = pair[2]
        if bi < 0:                                 # first order: the row of i not read yet
            bi = position_row(i, np.int64(-1), index, st, kd, cc, all_cols, bufs, btag, nt)
        bj = position_row(j, bi, index, st, kd, cc, all_cols, bufs, btag, nt)
        Kij = bufs[bi, j]
        if index[i] == index[j]:
            Kij = QD[i]
        oi, oj = _update_pair(i, j, alpha, G, y, C, QD, Kij)
        _ps.set_pens(i, i + 1, alpha, y, C, pu, pl)
        _ps.set_pens(j, j + 1, alpha, y, C, pu, pl)
        dai = (alpha[i] - oi) * y[i]
        daj = (alpha[j] - oj) * y[j]
        # gradient update fused with the first pass of the next selection
        _ps.fused_update(G, y, pu, pl, bufs[bi], bufs[bj], dai, daj, st[S_ACTIVE], nt, parts,
                         red, firstf, firsti)
        fresh = True
        _update_gbar(i, oi, alpha, G_bar, y, C, index, st, kd, cc, all_cols)
        _update_gbar(j, oj, alpha, G_bar, y, C, index, st, kd, cc, all_cols)
        if alpha[i] > alpha_cap or alpha[j] > alpha_cap:
            return R_CAP


@njit(cache=True, nogil=True)
def coordinate_run(alpha, G, y, C, QD, index, st, kd, cc, all_cols, tol, max_iter, stop_iter,
                   alpha_cap, stall_window, fout):
    """Greedy single-variable coordinate descent for the form without yᵀα = Δ.

    Picks the variable whose exact step, clipped to [0, C_i], decreases the objective
    most (second-order information, as WSS 2 for pairs; the largest projected gradient
    stalled on ill-conditioned kernels, where Q_ii spans orders of magnitude), takes
    that step; stops when the largest projected-gradient violation is ≤ tol, or with
    ``R_STALLED`` / ``R_CAP`` as :func:`smo_run`.
    """
    m = alpha.shape[0]
    cache = cc.cache
    qd = np.empty(m)
    iq = np.empty(m)
    for t in range(m):
        qd[t] = QD[t] if QD[t] > 0.0 else TAU
        iq[t] = 1.0 / qd[t]
    while True:
        if st[S_ITER] >= max_iter:
            return R_MAX_ITER
        if st[S_ITER] >= stop_iter:
            return R_CHUNK
        viol = 0.0
        best = -1.0
        i = -1
        for t in range(m):
            g = G[t]
            if g < 0.0 and alpha[t] < C[t]:
                v = -g
            elif g > 0.0 and alpha[t] > 0.0:
                v = g
            else:
                continue
            if v > viol:
                viol = v
            # second order (as WSS 2): the largest decrease of the clipped exact step
            s = min(max(alpha[t] - g * iq[t], 0.0), C[t]) - alpha[t]
            dec = -(g + 0.5 * qd[t] * s) * s
            if dec > best:
                best = dec
                i = t
        fout[0] = viol
        if i < 0 or viol <= tol:
            return R_OPTIMAL
        if _progress(viol, st, fout, stall_window):
            return R_STALLED
        st[S_ITER] += 1
        st[S_ACTIVE_SUM] += m
        q = QD[i] if QD[i] > 0.0 else TAU
        old = alpha[i]
        alpha[i] = min(max(old - G[i] / q, 0.0), C[i])
        s = get_row(i, True, index, st, kd, cc, all_cols)
        row = cache[s]
        d = (alpha[i] - old) * y[i]
        for t in range(m):
            G[t] += d * y[t] * row[index[t]]
        if alpha[i] > alpha_cap:
            return R_CAP


@njit(cache=True, nogil=True)
def objectives(alpha, G, y, p, C, b):
    """(P, D): the primal ½αᵀQα + Σ uₜξₜ at the intercept b (ξₜ = max(0, −(∇ₜ + yₜb)),
    finite uₜ) and the dual −(½αᵀQα + pᵀα), in O(m) from ∇ = Qα + p."""
    quad = 0.0
    lin = 0.0
    slack = 0.0
    for t in range(alpha.shape[0]):
        quad += alpha[t] * (G[t] - p[t])
        lin += p[t] * alpha[t]
        if C[t] < np.inf:
            s = G[t] + y[t] * b
            if s < 0.0:
                slack -= C[t] * s
    return 0.5 * quad + slack, -(0.5 * quad + lin)


@njit(cache=True, nogil=True)
def calculate_b(alpha, G, y, C):
    """Intercept b = −ρ: mean of y_i∇_i over free variables, else the interval midpoint."""
    ub = np.inf
    lb = -np.inf
    nfree = 0
    sfree = 0.0
    for i in range(alpha.shape[0]):
        yG = y[i] * G[i]
        if alpha[i] >= C[i]:
            if y[i] < 0:
                ub = min(ub, yG)
            else:
                lb = max(lb, yG)
        elif alpha[i] <= 0.0:
            if y[i] > 0:
                ub = min(ub, yG)
            else:
                lb = max(lb, yG)
        else:
            nfree += 1
            sfree += yG
    if nfree > 0:
        rho = sfree / nfree
    else:
        rho = (ub + lb) / 2.0
    return -rho


# ---------------------------------------------------------------- the phases
# between the calls of the loop: the bookkeeping of a run's phases, shared by the
# driver (:mod:`.driver`, in Python) and the batch entries (:mod:`.batch`, compiled),
# so that their iterates stay the same without the polish (with it they differ: the
# batch entries take one compiled Newton step after unshrinking, the driver polishes
# on the active set first)


@njit(cache=True, nogil=True)
def start_state(m, unshrink_start):
    """The state vector ``st`` of a run over ``m`` variables at its start: every variable
    active, the first shrinking after min(m, 1000) iterations, ``st[S_UNSHRINK]`` =
    ``unshrink_start`` (:attr:`.options.SMOOptions.unshrink_start`)."""
    st = np.zeros(N_STATE, dtype=np.int64)
    st[S_COUNTER] = min(m, 1000) + 1
    st[S_ACTIVE] = m
    st[S_UNSHRINK] = unshrink_start
    return st


@njit(cache=True, nogil=True)
def after_polish(st, fout, unshrink_start):
    """After a polish (a Newton step on the free set): every active gradient is exact
    (the caller marks the shrunk ones stale, if any), and the progress test, the early
    unshrinking and the shrinking counter start afresh (a shrinking at the next
    iteration)."""
    st[S_FULL_ITER] = st[S_ITER]
    st[S_MARK] = st[S_ITER]
    fout[1] = np.inf
    st[S_UNSHRINK] = unshrink_start
    st[S_COUNTER] = 1


@njit(cache=True, nogil=True)
def relative_gap(alpha, G, y, p, C, b):
    """:func:`margin_opt.kkt.relative_gap` at the intercept b (see :func:`objectives`)."""
    P, D = objectives(alpha, G, y, p, C, b)
    return _relative_gap(P, D)


@njit(cache=True, nogil=True)
def tighter_phase(phase, floor, last_gap, gap_tol, rel_gap, shrink_lo, shrink_hi):
    """The next m − M target where m − M met ``phase`` but the relative duality gap
    ``rel_gap`` failed ``gap_tol``: the target (or the m − M reached, ``last_gap``, where
    below it) times 0.8·gap_tol / rel_gap clipped to [shrink_lo, shrink_hi] (the gap
    shrinks about in proportion to m − M; each extra phase costs a gradient
    reconstruction), and not below ``floor``."""
    shrink = min(shrink_hi, max(shrink_lo, 0.8 * gap_tol / rel_gap))
    return max(floor, min(phase, last_gap) * shrink)
