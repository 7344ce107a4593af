"""Kernel blocks by BLAS and the Newton polish of SMO's free set.

SMO (first order) converges fast to a loose tolerance and then slowly: at
m(α) − M(α) ≈ 1e-3 the free multipliers (0 < αₜ < uₜ) of the answer are usually
the final ones, and the rest of the run only tunes their values.  On a fixed
free set F, with the others held at their bounds, the dual is an
equality-constrained quadratic whose minimizer solves one symmetric system,

    [Q_FF  y_F] [Δ]   [−∇_F]
    [y_Fᵀ   0 ] [ν] = [  0 ]          (ν is then the intercept b),

so :func:`polish` takes that Newton step (damped, kept inside the box by a ratio
test; variables that reach a bound leave F and the step is repeated) and brings
the gradient of every variable up to date with one blocked product against the
kernel columns of F.  SMO then resumes from the polished point to the requested
tolerance: the answer is SMO's, certified by the same stopping rule, only reached
sooner.  The polish never increases the dual objective (a step along a descent
direction of a convex quadratic, no longer than its minimizer).

Kernel blocks come from :mod:`.kernel_blocks` (BLAS, a bounded number of rows at
a time, so that memory stays within the cache budget).

References
----------
J. Nocedal and S. J. Wright, *Numerical Optimization*, 2nd ed., Springer 2006,
§16.1 (equality-constrained QP, the KKT system) and §16.5 (active-set steps).
"""

from __future__ import annotations

import numpy as np
import scipy.linalg as sla
from numba import njit

from . import _smo_kernels as _k
from . import kernel_blocks as _kb

__all__ = ["polish", "max_free"]

#: largest free set polished (the dense factorization is O(|F|³))
MAX_FREE = 3000
#: relative damping of the Newton system (Levenberg–Marquardt): singular Q_FF
#: (a linear kernel with more free points than features) stays solvable
DAMPING = 1e-12
ROUNDS = 6


#: flops of the dense factorization per unit of SMO work (one active variable in one
#: iteration): LAPACK at ~5 GFlop/s against ~8 ns per variable and iteration of SMO,
#: measured on the 2-core development machine
FLOPS_PER_SMO_UNIT = 40.0


def worth_it(n_free: int, smo_work: float) -> bool:
    """Polish only when its factorizations (all rounds together) cost less than the
    SMO work done so far (the first-order tail it replaces is typically of that
    order)."""
    return n_free ** 3 / 3.0 <= FLOPS_PER_SMO_UNIT * max(smo_work, 0.0)


def max_free(budget_bytes: float) -> int:
    """Largest free set whose |F|² system fits a quarter of ``budget_bytes``."""
    return int(min(MAX_FREE, np.sqrt(max(budget_bytes, 0.0) / 32.0)))


def _newton_direction(K, y, g, damping):
    """Δ, ν of the damped KKT system (Q + δI)Δ + yν = −g, yᵀΔ = 0, by Cholesky.

    Q = DKD with D = diag(y), D² = I, so (Q + δI)⁻¹ = D(K + δI)⁻¹D: K + δI is
    factorized (never Q), and u = (Q + δI)⁻¹g = D(K + δI)⁻¹Dg, v = (Q + δI)⁻¹y =
    D(K + δI)⁻¹1.
    """
    diag = np.diag(K).copy()
    d = damping * max(1.0, float(diag.max()))
    idx = np.diag_indices_from(K)
    for _ in range(4):
        A = K.copy()
        A[idx] += d
        try:
            c = sla.cho_factor(A, lower=True, overwrite_a=True, check_finite=False)
            break
        except np.linalg.LinAlgError:
            d *= 100.0
    else:
        return None, None
    uv = sla.cho_solve(c, np.column_stack([y * g, np.ones_like(y)]), check_finite=False)
    den = float(uv[:, 1].sum())                  # yᵀv
    nu = -float(uv[:, 0].sum()) / den if den > 0 else 0.0
    return -y * (uv[:, 0] + nu * uv[:, 1]), nu


def _restore_on(a, y, C, delta, F) -> bool:
    """Make yᵀα = Δ exact again by moving the variables of F within their box."""
    excess = float(y @ a) - delta
    scale = max(1.0, float(np.abs(a[F]).max(initial=0.0)))
    for i in F:
        if abs(excess) <= 1e-15 * scale:
            return True
        d = -excess * y[i]
        d = max(d, -a[i]) if d < 0 else min(d, C[i] - a[i])
        a[i] += d
        excess += y[i] * d
    return abs(excess) <= 1e-12 * scale


def _update_and_seed(run, rows, coefs, block_bytes):
    """K[:, rows] @ coefs by blocks of rows; the rows also go into SMO's row cache
    (the free variables are those the remaining pair steps work on)."""
    cc, st = run.cc, run.st
    n_data = run.n_data
    out = np.zeros((n_data, coefs.shape[1]))
    step = max(1, int(block_bytes // (8 * n_data)))
    n_slots = cc.cache.shape[0]
    seed = run.gram is None and cc.store.shape[0] == n_slots
    # whole rows SMO already holds are used as they are
    slot = cc.slot_of_row[rows]
    held = slot >= 0
    held[held] = cc.slot_epoch[slot[held]] == _k.FULL
    if held.any():
        _accumulate2(cc.cache, slot[held], coefs[held], out)
        rows, coefs = rows[~held], coefs[~held]
    for s in range(0, rows.size, step):
        r = rows[s:s + step]
        blk = _kb.kernel_block(run.kd, run.gram, run.csr, r)
        out += blk.T @ coefs[s:s + step]
        if seed:
            _seed_rows(cc, st, r, blk, n_slots >= n_data)
    return out


@njit(cache=True)
def _accumulate2(cache, slots, coefs, out):
    """out[:, j] += Σₖ coefs[k, j]·cache[slots[k]] (rows read in place)."""
    n, k = out.shape
    for i in range(slots.shape[0]):
        row = cache[slots[i]]
        for j in range(k):
            c = coefs[i, j]
            if c != 0.0:
                for t in range(n):
                    out[t, j] += c * row[t]


def _seed_rows(cc, st, rows, blk, direct):
    """Put the full kernel rows ``blk`` of data rows ``rows`` into the LRU cache."""
    keep = cc.slot_of_row[rows] < 0
    rows, blk = rows[keep], blk[keep]
    if rows.size == 0:
        return
    if direct:
        slots = rows
    else:
        k = min(rows.size, cc.slot_tick.size)
        slots = np.argpartition(cc.slot_tick, k - 1)[:k]
        rows, blk = rows[:k], blk[:k]
        old = cc.row_of_slot[slots]
        cc.slot_of_row[old[old >= 0]] = -1
    cc.store[slots] = blk
    cc.row_of_slot[slots] = rows
    cc.slot_of_row[rows] = slots
    cc.slot_epoch[slots] = _k.FULL
    st[_k.S_TICK] += 1
    cc.slot_tick[slots] = st[_k.S_TICK]


def polish(run, budget_bytes) -> bool:
    """One Newton polish of the free set of ``run`` (an ``_SMORun``, all variables active).

    Updates ``run.alpha``, ``run.G`` and ``run.G_bar`` in place.  Returns False when
    there is nothing to do (no free variable, or a free set above :func:`max_free`).
    """
    a, G, y, C, index = run.alpha, run.G, run.y, run.C, run.index
    free = np.flatnonzero((a > 0.0) & (a < C))
    if free.size == 0 or free.size > max_free(budget_bytes) or \
            not worth_it(free.size, run.st[_k.S_ACTIVE_SUM]):
        return False
    a_old = a.copy()
    F = free
    K_FF = _kb.kernel_block(run.kd, run.gram, run.csr, index[F], index[F])
    gF = G[F].copy()
    K0, g0 = K_FF, gF.copy()
    budget = FLOPS_PER_SMO_UNIT * float(run.st[_k.S_ACTIVE_SUM])   # see worth_it
    for _ in range(ROUNDS):
        budget -= F.size ** 3 / 3.0
        if budget < 0.0:
            break
        yF = y[F]
        delta, _nu = _newton_direction(K_FF, yF, gF, DAMPING)
        if delta is None:
            break
        aF, CF = a[F], C[F]
        with np.errstate(divide="ignore", invalid="ignore"):
            room = np.where(delta > 0, (CF - aF) / delta, np.where(delta < 0, -aF / delta,
                                                                   np.inf))
        t = min(1.0, float(room.min(initial=np.inf)))
        if t <= 0.0:
            break
        hitting = room <= t * (1.0 + 1e-12)
        aF_new = aF + t * delta
        aF_new[hitting & (delta < 0)] = 0.0
        aF_new[hitting & (delta > 0)] = CF[hitting & (delta > 0)]
        aF_new = np.clip(aF_new, 0.0, CF)
        a[F] = aF_new
        gF = gF + yF * (K_FF @ (yF * (aF_new - aF)))
        hit = hitting | (aF_new <= 0.0) | (aF_new >= CF)
        if t >= 1.0 or not hit.any():
            break
        keep = ~hit
        F, gF, K_FF = F[keep], gF[keep], K_FF[np.ix_(keep, keep)]
        if F.size == 0:
            break
    if not _restore_on(a, y, C, run.delta, free):
        a[:] = a_old
        return False
    step = a[free] - a_old[free]
    ys = y[free] * step
    if float(g0 @ step + 0.5 * ys @ (K0 @ ys)) > 0.0:
        a[:] = a_old                # a step spoilt by rounding (ill-conditioned Q_FF)
        return False
    changed = np.flatnonzero(a != a_old)
    if changed.size == 0:
        return True
    da = (a[changed] - a_old[changed]) * y[changed]
    was_up, is_up = a_old[changed] >= C[changed], a[changed] >= C[changed]
    dbar = np.where(is_up & ~was_up, C[changed], np.where(was_up & ~is_up, -C[changed], 0.0))
    dbar = dbar * y[changed]
    coefs = np.column_stack([da, dbar])
    # several variables may share a data row (ε-SVR): sum their coefficients per row
    rows, inv = np.unique(index[changed], return_inverse=True)
    summed = np.zeros((rows.size, 2))
    np.add.at(summed, inv, coefs)
    v = _update_and_seed(run, rows, summed, budget_bytes / 4)
    G += y * v[index, 0]
    if np.any(dbar != 0):
        run.G_bar += v[:, 1]
    return True
