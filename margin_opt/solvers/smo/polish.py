"""The Newton polish of SMO's free set, its Cholesky factor, and the early factorization.

SMO (first order) converges fast to a loose tolerance and then slowly: at
m(α) − M(α) ≈ 1e-3 the free multipliers (0 < αₜ < uₜ) of the answer are usually
the final ones, and the rest of the run only tunes their values.  On a fixed
free set F, with the others held at their bounds, the dual is an
equality-constrained quadratic whose minimizer solves one symmetric system,

    [Q_FF  y_F] [Δ]   [−∇_F]
    [y_Fᵀ   0 ] [ν] = [  0 ]          (ν is then the intercept b),

so :func:`polish` takes that Newton step (damped; the variables the full step
would take out of the box are pinned to the bound they cross and the step is
solved again on the same factorization, a primal-dual active-set iteration, with
a ratio test as the last resort) and brings the gradient of every variable up to
date with one blocked product against the kernel columns of F.  The factor is
kept for the next polish of the run, which extends it by the variables that became
free (O(|F|²) each) and pins those that left, instead of factorizing again.  It is
computed in single precision (half the time); the first solve on each factor is
checked against K_FF in double and refined, or the factor redone in double
(:class:`Factor`).
SMO then resumes from the polished point to the requested tolerance: the answer
is SMO's, certified by the same stopping rule, only reached sooner.  The polish
never increases the dual objective: a step that would (pinned variables, rounding
in an ill-conditioned Q_FF) is dropped.

Kernel blocks come from :mod:`.rows` (BLAS, a bounded number of rows at a time, so
that memory stays within the cache budget).

The early factorization (:class:`EarlyFactor`): the first polish's factor, started
early on the core SMO leaves idle.  Below ``pass_par_min`` active variables SMO's passes run
on one thread, and once most kernel rows are cached the second core has little to
do.  The free set settles well before SMO reaches the polish tolerance: on the
ε-SVR at n = 5000, at m(α) − M(α) = 9e-3 the free set (1871 variables) differs from
the one at 1e-3 (1890) in 49 variables, 34 to enter and 15 to leave.  So, once
m − M is within ``early_at`` times the polish tolerance, the kernel block K_FF
of the free set and its Cholesky factor (:class:`Factor`) are computed
on a second thread while SMO goes on; the polish then extends that factor by the
variables that became free and pins those that left (:func:`_reuse`,
as between its own polishes), or factorizes afresh where too many changed.

The answer does not depend on the thread's timing: the free set is taken at a fixed
iteration (SMO looks at m − M every ``early_chunk`` iterations, which does not change
its path), the factor is the one the polish would compute for that set, and the
polish waits for it.  The thread reads only what SMO does not write: the data (or
the given kernel matrix) and copies of the free set's rows and ids; its kernel block
is computed without a parallel region (:func:`.rows.symmetric_block` with
one thread) and its LAPACK call on one BLAS thread.

References
----------
J. Nocedal and S. J. Wright, *Numerical Optimization*, 2nd ed., Springer 2006,
§16.1 (equality-constrained QP, the KKT system) and §16.5 (active-set steps).
"""

from __future__ import annotations

import threading
from collections import namedtuple

import numpy as np
import scipy.linalg as sla

from ...parallel import one_blas_thread
from . import cache as _cache
from . import packed as _pk
from . import rows as _rows
from .options import DEFAULT
from .state import FULL, S_ACTIVE, S_EPOCH, S_TICK

__all__ = ["KernelSource", "Duals", "polish", "box_newton", "max_free", "worth_it", "entering",
           "Factor", "EarlyFactor", "possible", "start"]

#: Where the polish's kernel rows come from: the run's kernel arrays ``kd``, the given
#: kernel matrix ``gram`` (or None), the CSR data ``csr`` (or None), the row cache ``cc``
#: and the state ``st`` (rows the cache holds whole are read in place; rows computed in
#: blocks may be seeded into it), the numba threads ``nthr`` and the data rows ``n_data``
KernelSource = namedtuple("KernelSource", ["kd", "gram", "csr", "cc", "st", "nthr", "n_data"])
#: The run's arrays a polish reads: α, ∇ and Ḡ (updated in place), y, the upper bounds
#: C, the data rows ``index`` of the variables, Δ of yᵀα = Δ (None: no equality, the
#: form without an intercept, whose Newton step on F is K_FF's alone) and ``perm``
#: (``perm[k]``: the variable at position k, as shrinking left them; a kept factor
#: names its variables by these ids, so that it outlives a reordering)
Duals = namedtuple("Duals", ["alpha", "G", "G_bar", "y", "C", "index", "delta", "perm"])

def worth_it(n_free: int, smo_work: float, opts=DEFAULT) -> bool:
    """Polish only when its factorizations (all rounds together) and its fixed cost
    come to less than the SMO work done so far (the first-order tail it replaces is
    typically of that order); the exchange rate and the fixed cost are
    ``opts.flops_per_smo_unit`` and ``opts.overhead_smo_units``."""
    rate = opts.flops_per_smo_unit
    cost = n_free ** 3 / 3.0 + rate * opts.overhead_smo_units
    return cost <= rate * max(smo_work, 0.0)


def max_free(budget_bytes: float, opts=DEFAULT) -> int:
    """Largest free set whose :class:`Factor`, kept between polishes (12 bytes per
    entry of K_FF: the single-precision L and K_UU in double), fits a quarter of
    ``budget_bytes``, as the gradient update's blocks do; an extension peaks at 20
    bytes per entry (L, K_UU and the extended K), a factorization in double at 16."""
    return int(min(opts.polish_max_free, np.sqrt(max(budget_bytes, 0.0) / 48.0)))


class Factor:
    """Lower Cholesky factor L of K_UU + δI over the variables U (positions in the
    unshrunk order), kept between the polishes of one run: the next polish extends it
    by the variables that became free (O(|U|²) each) and pins those that left, instead
    of factorizing again.

    The factor is single precision where LAPACK's ``spotrf`` succeeds (half the time
    of ``dpotrf``; δ is below float32's resolution there, so it is the factor of K_UU
    itself, and δ enters through the refinement's residual); K_UU is kept in double
    beside it, the first solve on each factor is checked against it and refined, and
    later ones reuse its refinement count (:meth:`solve`); the factor is redone in
    double where single precision does not reach ``opts.solve_rtol``.  ``quad`` is
    computed from K_UU.  Factors are Fortran-ordered, as LAPACK takes them (a
    C-ordered matrix would be copied on every call); K_UU is symmetric, so its
    transpose is factorized.  An extension appends K_UN and K_NN to K_UU as blocks,
    copying nothing (:attr:`K` puts them together where a whole matrix is needed: the
    fallback to a double factor, or a caller).
    """

    def __init__(self, K, U, opts=DEFAULT):
        self.opts = opts
        self.d = opts.damping * max(1.0, float(np.diag(K).max()))
        self.U = U
        self.K = K
        self.L = None
        self.steps = None           # refinement steps of a solve (None: not checked yet)
        if opts.single:
            try:
                self.L = sla.cholesky(K.T.astype(np.float32, order="F"), lower=True,
                                      overwrite_a=True, check_finite=False)
                return
            except np.linalg.LinAlgError:
                pass
        self._double()

    def _double(self):
        """Factorize K_UU + δI in double (δ raised ×100 up to 3 times where not
        positive definite); L None where it fails.  K_UU is then released (the
        double factor needs no refinement)."""
        idx = np.diag_indices_from(self.K)
        self.L = None
        for _ in range(4):
            A = self.K.T.copy(order="F")
            A[idx] += self.d
            try:
                self.L = sla.cholesky(A, lower=True, overwrite_a=True, check_finite=False)
                self.K = None
                return
            except np.linalg.LinAlgError:
                self.d *= 100.0

    @property
    def K(self):
        """K_UU in double, ndarray of shape (|U|, |U|), or None (released)."""
        if self._K0 is not None and self._ext:
            K = self._K0
            for A, N in self._ext:
                K = np.block([[K, A], [A.T, N]])
            self._K0, self._ext = K, []
        return self._K0

    @K.setter
    def K(self, value):
        self._K0, self._ext = value, []

    def _kmat(self, X):
        """K_UU @ X by the blocks (X of shape (|U|,) or (|U|, k))."""
        Y = self._K0 @ X[:self._K0.shape[0]]
        u = self._K0.shape[0]
        for A, N in self._ext:
            k = A.shape[1]
            top, bot = X[:u], X[u:u + k]
            Y = np.concatenate([Y + A @ bot, A.T @ top + N @ bot])
            u += k
        return Y

    def _krows(self, S):
        """Rows S (sorted: the blocks give them in increasing order) of K_UU."""
        if np.any(np.diff(S) < 0):
            raise ValueError("_krows needs sorted rows")
        return self._rows_at(len(self._ext), S)

    def _rows_at(self, level, S):
        if level == 0:
            return self._K0[S]
        A, N = self._ext[level - 1]
        u = A.shape[0]
        top, bot = S[S < u], S[S >= u] - u
        return np.vstack([np.hstack([self._rows_at(level - 1, top), A[top]]),
                          np.hstack([A.T[bot], N[bot]])])

    def solve(self, B):
        """(K_UU + δI)⁻¹B, ndarray of shape (|U|, k), or None (no factor).

        With the single-precision factor, the first solve after a factorization or
        an extension is checked against K_UU in double and refined (at most
        ``opts.refine`` steps) until its relative residual is ≤ ``opts.solve_rtol``;
        the later solves on the same factor take as many refinement steps, unchecked
        (the residual is a product with K_UU, as costly as the solve).  Where the
        check fails, the factor is redone in double, δ raised where it must be: the
        check is made on the first solve after a factorization or an extension, before
        any other solve of the polish, so nothing solved with the old δ is mixed in."""
        if self.L is None:
            return None
        if self.L.dtype == np.float64:
            return sla.cho_solve((self.L, True), B, check_finite=False)
        X = self._solve32(B)
        if self.steps is not None:
            for _ in range(self.steps):
                X += self._solve32(self._residual(B, X))
            return X
        rtol, refine = self.opts.solve_rtol, self.opts.refine
        scale = np.maximum(np.abs(B).max(axis=0), np.finfo(float).tiny)
        S = np.linspace(0, B.shape[0] - 1, min(B.shape[0], self.opts.check_rows)).astype(np.int64)
        R = B[S] - self._krows(S) @ X - self.d * X[S]
        if float((np.abs(R).max(axis=0) / scale).max(initial=0.0)) <= rtol / 2:
            self.steps = 0              # the sample passes with a margin: no refinement
            return X
        for steps in range(refine + 1):
            R = self._residual(B, X)
            if float((np.abs(R).max(axis=0) / scale).max(initial=0.0)) <= rtol:
                self.steps = steps
                return X
            if steps < refine:
                X += self._solve32(R)
        self._double()
        return self.solve(B)        # by the double factor now (or None)

    def _residual(self, B, X):
        """B − (K_UU + δI)X, in double."""
        return B - self._kmat(X) - self.d * X

    def _solve32(self, B):
        """(L Lᵀ)⁻¹B with the single-precision factor, in double."""
        X = sla.cho_solve((self.L, True), B.astype(np.float32), check_finite=False)
        return X.astype(np.float64)

    def extend(self, K_UN, K_NN, N) -> bool:
        """Append the variables N (kernel blocks K[U, N], K[N, N]); False where the
        Schur complement is not positive definite (then factorize afresh)."""
        L = self.L
        L21t = sla.solve_triangular(L, K_UN.astype(L.dtype), lower=True, check_finite=False)
        L21t64 = L21t.astype(np.float64)
        S = K_NN - L21t64.T @ L21t64
        S[np.diag_indices_from(S)] += self.d
        try:
            L22 = sla.cholesky(S.astype(L.dtype), lower=True, overwrite_a=True,
                               check_finite=False)
        except np.linalg.LinAlgError:
            return False
        u, k = L.shape[0], N.size
        out = np.zeros((u + k, u + k), dtype=L.dtype, order="F")
        out[:u, :u] = L
        out[u:, :u] = L21t.T
        out[u:, u:] = L22
        self.L = out
        del L                               # the old factor released before K grows
        self.U = np.concatenate([self.U, N])
        if self._K0 is not None:
            self._ext.append((K_UN, K_NN))
            self.steps = None
        return True

    def quad(self, z) -> float:
        """zᵀK_UUz (from K_UU where kept, else from the double factor, the damping
        taken out again)."""
        if self._K0 is not None:
            return float(z @ self._kmat(z))
        w = self.L.T @ z
        return float(w @ w) - self.d * float(z @ z)


class _Constrained:
    """Newton directions on F from one factorization, with variables pinned.

    Minimizes ½ΔᵀQΔ + gᵀΔ subject to yᵀΔ = 0 (with ``equality``) and Δ_r = c_r for the
    pinned positions r (variables sent to a bound), Q = DKD + δI with D = diag(y), D² = I,
    so that (Q + δI)⁻¹ = D(K + δI)⁻¹D: K + δI is factorized once (never Q) and each
    pinned variable costs one more triangular solve (a bordered system, solved by its
    Schur complement of size 1 + #pinned, #pinned without the equality), never a new
    factorization.
    """

    def __init__(self, fac, y, g, pos, equality=True):
        """``fac``: the :class:`Factor` of K + δI; ``pos``: positions pinned where
        they are (Δ = 0) from the start; ``equality``: the constraint yᵀΔ = 0."""
        self.fac, self.y, self.eq = fac, y, int(bool(equality))
        e = self.eq
        B = np.zeros((y.size, 1 + e + pos.size))
        B[:, 0] = y * g
        if e:
            B[:, 1] = 1.0
        B[pos, 1 + e + np.arange(pos.size)] = y[pos]          # D e_r
        self.W = fac.solve(B)                                  # (K+δI)⁻¹[Dg, (1,) De_r]
        self.pos = pos.astype(np.int64)
        self.val = np.zeros(pos.size)

    def pin(self, pos, val) -> bool:
        """Pin the positions ``pos`` at Δ = ``val`` (one more solve for all of them);
        False where the factor failed."""
        E = np.zeros((self.y.size, pos.size))
        E[pos, np.arange(pos.size)] = self.y[pos]             # D e_r
        sol = self.fac.solve(E)
        if sol is None:
            return False
        self.W = np.column_stack([self.W, sol])
        self.pos = np.concatenate([self.pos, pos])
        self.val = np.concatenate([self.val, val])
        return True

    def direction(self):
        """Δ (None when the bordered system is singular or the factor failed)."""
        y, W, pos = self.y, self.W, self.pos
        if W is None:
            return None
        w0, W1 = W[:, 0], W[:, 1:]
        # Bᵀ = rows of the constraint matrix in the scaled variables: [1ᵀ; (D e_r)ᵀ]
        # (without the equality, [(D e_r)ᵀ] only)
        e = self.eq
        S = np.vstack([W1.sum(axis=0, keepdims=True)[:e], y[pos, None] * W1[pos]])
        r = np.concatenate([[w0.sum()][:e], y[pos] * w0[pos]])
        rhs = -(np.concatenate([[0.0][:e], self.val]) + r)
        try:
            lam = np.linalg.solve(S, rhs)
        except np.linalg.LinAlgError:
            return None
        d = -y * (w0 + W1 @ lam)
        d[pos] = self.val                    # exact where pinned
        return d if np.all(np.isfinite(d)) else None


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


def _update_and_seed(src, rows, coefs, block_bytes):
    """K[:, rows] @ coefs: the rows SMO holds whole read in place, the others by
    :func:`.rows.combination` where rows come from a dense transpose, else by
    blocks of rows that also go into SMO's row cache."""
    cc, st = src.cc, src.st
    n_data = src.n_data
    outT = np.zeros((coefs.shape[1], n_data))   # the sweep's layout; out is its transpose
    out = outT.T
    step = max(1, int(block_bytes // (8 * n_data)))
    n_slots = cc.cache.shape[0]
    # (never into memory that packed rows hold: their layout may outlive an unshrinking
    # where ``index`` uses few data rows)
    seed = src.gram is None and cc.store.shape[0] == n_slots and \
        not _pk.active(cc, st[S_EPOCH])
    # whole rows SMO already holds are used as they are
    slot = cc.slot_of_row[rows]
    held = slot >= 0
    held[held] = cc.slot_epoch[slot[held]] == FULL
    if held.any():
        _cache.accumulate(cc.cache, slot[held], coefs[held], outT, src.nthr)
        rows, coefs = rows[~held], coefs[~held]
    if rows.size and _rows.by_tiles(src.kd, src.gram):
        # compiled BLAS tiles on both threads, no block in memory (0.34 → 0.09 s for
        # 1241 free rows at n = 20000); seeding the cache with the rows saved SMO's
        # tail 6 of its 10 263 computed rows there, and none at n = 5000
        out += _rows.combination(src.kd, src.gram, src.csr, rows, coefs, nthr=src.nthr)
        return out
    for s in range(0, rows.size, step):
        r = rows[s:s + step]
        blk = _rows.kernel_block(src.kd, src.gram, src.csr, r)
        out += blk.T @ coefs[s:s + step]
        if seed:
            _seed_rows(cc, st, r, blk, n_slots >= n_data)
    return out


def _active_product(src, rows, coefs, cols, block_bytes):
    """K[cols][:, rows] @ coefs, ndarray of shape (len(cols),), for data rows ``rows``
    (with ``coefs``) and ``cols`` (the active variables' data rows), by blocks of rows
    of at most ``block_bytes`` (:func:`_block`)."""
    out = np.zeros(cols.size)
    step = max(1, int(block_bytes // (8 * max(1, cols.size))))
    for s in range(0, rows.size, step):
        out += _block(src, rows[s:s + step], cols).T @ coefs[s:s + step]
    return out


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
    cc.slot_epoch[slots] = FULL
    st[S_TICK] += 1
    cc.slot_tick[slots] = st[S_TICK]


def _block(src, rows, cols=None):
    """K[rows][:, cols] (data rows; ``cols`` None: K[rows][:, rows]): on dense data
    with a named kernel K[rows][:, rows] by :func:`.rows.symmetric_block`
    (half a product, on the numba threads: 6 against 11 ms for the 1890 free rows of
    the ε-SVR at n = 5000), else read from SMO's row cache where it holds every row
    whole (no kernel evaluation), else computed by BLAS."""
    cc = src.cc
    kd = src.kd
    if cols is None:
        if src.gram is None and _rows.dense_named(kd):
            return _rows.symmetric_block(kd, rows, nthr=src.nthr)
        cols = rows
    if src.gram is None:
        slot = cc.slot_of_row[rows]
        if np.all(slot >= 0) and np.all(cc.slot_epoch[slot] == FULL):
            return cc.cache[np.ix_(slot, cols)]
    return _rows.kernel_block(src.kd, src.gram, src.csr, rows, cols)


def _reuse(src, fac, index, free, budget_bytes, opts):
    """The factor ``fac`` of the previous polish extended to ``free``, or None (none kept,
    too many variables pinned or added, too large, or the extension failed); variables
    by id (``index[u]``: the data row of variable u)."""
    if fac is None:
        return None
    new = free[~np.isin(free, fac.U)]
    n_gone = fac.U.size - (free.size - new.size)
    if n_gone + new.size > max(opts.pin_max, free.size // 16) or \
            fac.U.size + new.size > max_free(budget_bytes, opts):
        return None
    if new.size:
        if np.isin(index[new], index[fac.U]).any():
            return None         # ε-SVR: α and α* of one point, K_UU singular: factor afresh
        K_UN = _block(src, index[fac.U], index[new])
        K_NN = _block(src, index[new])
        if not fac.extend(K_UN, K_NN, new):
            return None
    return fac


def entering(run, k_max=None, min_violation=0.0, opts=DEFAULT):
    """Bound variables that violate the KKT conditions at the intercept of the free set
    (those SMO's tail would bring into it), the ``k_max`` largest violations above
    ``min_violation`` first; ndarray of int (ids, sorted; all variables active).
    ``k_max`` None: half of what :func:`_reuse` extends a kept factor by (the other half
    for the variables that leave the free set).  With ρ the mean of yₜ∇ₜ over the free
    variables (0 without the equality), a variable at 0 with y = +1 or at C with
    y = −1 needs yₜ∇ₜ ≥ ρ, the other two yₜ∇ₜ ≤ ρ.  At most one variable per data row
    is let in, none on the row of a free variable (ε-SVR: α and α* of one point in the
    free set make K_UU singular)."""
    a, G, y, C, index = run.alpha, run.G, run.y, run.C, run.index
    yG = y * G
    free = (a > 0.0) & (a < C)
    n_free = int(np.count_nonzero(free))
    if n_free == 0:
        return np.zeros(0, dtype=np.int64)
    if k_max is None:
        k_max = max(opts.pin_max, n_free // 16) // 2
    rho = float(yG[free].mean()) if getattr(run, "equality", True) else 0.0   # no b: 0
    low = (a <= 0.0) & ~free
    up = (a >= C) & ~free
    need_above = (low & (y > 0)) | (up & (y < 0))
    viol = np.where(need_above, rho - yG, yG - rho)
    viol[free] = -np.inf
    cand = np.flatnonzero(viol > min_violation)
    cand = cand[np.argsort(-viol[cand], kind="stable")]        # the largest first
    taken = np.zeros(run.n_data, dtype=bool)
    taken[index[free]] = True
    out = []
    for t in cand:
        if len(out) == k_max:
            break
        if not taken[index[t]]:
            taken[index[t]] = True
            out.append(t)
    return np.sort(np.asarray(out, dtype=np.int64))


def polish(src, duals, factor, budget_bytes, smo_work, force=False, extra=None,
           opts=DEFAULT):
    """One Newton polish of the free set.

    Parameters
    ----------
    src : KernelSource
        Where kernel rows come from (the kernel arrays and the row cache of the run).
    duals : Duals
        The arrays of the run; ``alpha``, ``G`` and ``G_bar`` are updated in place.
    factor : Factor or None
        The factor kept from the previous polish (or the early one), extended or
        pinned to the free set where that is cheaper than a new one.
    budget_bytes : float
        The cache budget: the factor and the gradient update's blocks stay within it.
    smo_work : float
        SMO's work so far (active variables summed over the iterations), against which
        :func:`worth_it` weighs a new factorization.
    force : bool, default=False
        Polish even where it costs more than SMO's tail would (SMO has stalled).
    extra : ndarray of int, optional
        Bound variables let into the free set (:func:`entering`).
    opts : SMOOptions

    Returns
    -------
    done : bool
        False where there is nothing to do (no free variable, or a free set above
        :func:`max_free`), where it would cost more than it saves, or where the step
        failed or would not decrease the dual (α, ∇ and Ḡ then unchanged).
    factor : Factor or None
        The factor to keep for the next polish (None: none worth keeping).
    """
    a, G, G_bar, y, C, index = duals.alpha, duals.G, duals.G_bar, duals.y, duals.C, duals.index
    free = np.flatnonzero((a > 0.0) & (a < C))
    if extra is not None and extra.size and free.size:
        free = np.union1d(free, extra)       # bound variables let in: not pinned at first
    if free.size == 0 or free.size > max_free(budget_bytes, opts):
        return False, factor
    # the factor names its variables by id (perm[position]); F is their positions now
    perm = duals.perm
    pos_of = np.empty_like(perm)
    pos_of[perm] = np.arange(perm.size)
    fac = _reuse(src, factor, index[pos_of], perm[free], budget_bytes, opts)
    if fac is None:
        if not force and not worth_it(free.size, smo_work, opts):
            return False, None
        fac = Factor(_block(src, index[free]), perm[free], opts)
        if fac.L is None:
            return False, None
    F = pos_of[fac.U]
    a_old = a.copy()
    g0 = G[F].copy()
    yF, aF, CF = y[F], a[F].copy(), C[F]
    gone = np.flatnonzero((aF <= 0.0) | (aF >= CF))    # left the free set: stay at the bound
    if extra is not None and extra.size:
        gone = gone[~np.isin(F[gone], extra)]
    newton = _Constrained(fac, yF, g0, gone, equality=duals.delta is not None)
    slack = 1e-12 * CF
    d = None
    for _ in range(opts.pin_rounds):
        d = newton.direction()
        if d is None:
            break
        new = aF + d
        low, up = new < -slack, new > CF + slack
        out = low | up
        out[newton.pos] = False
        if not out.any():
            break
        # the variables that leave the box are pinned to the bound they cross
        # (a primal-dual active-set step), the rest solved again on the same factor
        pos = np.flatnonzero(out)
        if newton.pos.size + pos.size > max(opts.pin_max, F.size // 16):
            break
        if not newton.pin(pos, np.where(low[pos], 0.0, CF[pos]) - aF[pos]):
            d = None
            break
    if d is None:
        return False, None
    new = aF + d
    if np.any((new < -slack) | (new > CF + slack)):
        # not feasible after the rounds: step towards it as far as the box allows
        with np.errstate(divide="ignore", invalid="ignore"):
            room = np.where(d > 0, (CF - aF) / d, np.where(d < 0, -aF / d, np.inf))
        t = min(1.0, float(room.min(initial=np.inf)))
        if t <= 0.0:
            return False, fac
        hitting = room <= t * (1.0 + 1e-12)
        new = aF + t * d
        new[hitting & (d < 0)] = 0.0
        new[hitting & (d > 0)] = CF[hitting & (d > 0)]
    a[F] = np.clip(new, 0.0, CF)
    free = F
    # the restore moves active variables only: a shrunk one (at a bound, pinned) that it
    # moved would be missing from the shrunk gradients the next unshrinking rebuilds
    # from Ḡ and the active free variables
    na = int(src.st[S_ACTIVE])
    if duals.delta is not None and not _restore_on(a, y, C, duals.delta, free[free < na]):
        a[:] = a_old
        return False, fac
    step = a[free] - a_old[free]
    ys = y[free] * step
    if float(g0 @ step + 0.5 * fac.quad(ys)) > 0.0:
        a[:] = a_old                # a step spoilt by rounding (ill-conditioned Q_FF)
        return False, None
    changed = np.flatnonzero(a != a_old)
    if changed.size == 0:
        return True, fac
    if changed[-1] >= na:
        # a shrunk variable moved (never, as the step pins them and the restore leaves
        # them alone): its term would be missing from the rebuilt shrunk gradients
        a[:] = a_old
        return False, fac
    da = (a[changed] - a_old[changed]) * y[changed]
    was_up, is_up = a_old[changed] >= C[changed], a[changed] >= C[changed]
    dbar = np.where(is_up & ~was_up, C[changed], np.where(was_up & ~is_up, -C[changed], 0.0))
    dbar = dbar * y[changed]
    coefs = np.column_stack([da, dbar])
    # several variables may share a data row (ε-SVR): sum their coefficients per row
    rows, inv = np.unique(index[changed], return_inverse=True)
    summed = np.zeros((rows.size, 2))
    np.add.at(summed, inv, coefs)
    if na < a.shape[0]:
        # some variables shrunk (each at a bound, none moved: pinned, and not restored
        # above): the active gradients
        # from the changed rows on the active columns only, Ḡ (every data row) from the
        # rows whose variables reached or left their upper bound; the shrunk gradients
        # are reconstructed from Ḡ when SMO unshrinks
        G[:na] += y[:na] * _active_product(src, rows, summed[:, 0], index[:na],
                                           budget_bytes / 4)
        bar = summed[:, 1] != 0
        if bar.any():
            G_bar += _update_and_seed(src, rows[bar], summed[bar, 1:], budget_bytes / 4)[:, 0]
        return True, fac
    v = _update_and_seed(src, rows, summed, budget_bytes / 4)
    G += y * v[index, 0]
    if np.any(dbar != 0):
        G_bar += v[:, 1]
    return True, fac


def _qmul(K, y, v):
    """Q v with Q = DKD, D = diag(y)."""
    return y * (K @ (y * v))


def _box_interior(K, g, y, a, C, delta, max_iter):
    """The step s (in α) that minimizes gᵀs + ½sᵀQs over the box 0 ≤ a + s ≤ C of the
    variables F, Q = DKD (D = diag(y)), the others held: Mehrotra's predictor-corrector
    interior-point method (each iteration one Cholesky factorization of K_FF plus the
    barrier's diagonal, since (Q + Λ) = D(K + Λ)D), then a crossover to the exact
    optimum: the variables the interior point puts nearer their bound than their
    multiplier is large go to that bound, and the rest solve K_ff's Newton system with
    those held; of that point (where it is in the box), the interior point with those
    variables put on their bounds and the interior point itself, the lowest is taken.
    An active-set method changes one bound per factorization: on an RBF kernel at
    n = 3000 whose coordinate descent stalls with 1170 variables free and 89 at C, the
    optimum has 406 free and 450 at C, hundreds of changes; the interior point takes
    some 30 factorizations whatever the active set.
    Returns zeros where no point found decreases the objective."""
    m = a.size
    fin = np.isfinite(C)
    Cf = np.where(fin, C, 0.0)
    # the start: the middle of the box (not near α, which is at the wrong bound for
    # hundreds of variables where coordinate descent stalled)
    x = np.where(fin, 0.5 * Cf, np.maximum(a, 1.0))
    w = np.where(fin, Cf - x, 1.0)                   # (1: no upper bound, zu = 0 there)
    grad = g + _qmul(K, y, x - a)
    sz = max(1.0, float(np.abs(grad).max()))
    zl = np.maximum(grad, 0.0) + 1e-2 * sz          # the multipliers of x ≥ 0
    zu = np.where(fin, np.maximum(-grad, 0.0) + 1e-2 * sz, 0.0)   # of x ≤ C
    n_bounds = m + int(fin.sum())
    diag = np.diag_indices(m)
    rd = wi = fac = None

    def newton(rl, ru):
        # Q dx − dzl + dzu = −rd, zl dx + x dzl = −rl, −zu dx + w dzu = −ru
        rhs = -rd - rl / x + ru * wi
        dx = y * sla.cho_solve(fac, y * rhs, check_finite=False)
        return dx, (-rl - zl * dx) / x, np.where(fin, (-ru + zu * dx) * wi, 0.0)

    def longest(dx, dzl, dzu):
        t = 1.0
        for v, dv in ((x, dx), (w, np.where(fin, -dx, 0.0)), (zl, dzl), (zu, dzu)):
            neg = dv < 0.0
            if neg.any():
                t = min(t, float((-v[neg] / dv[neg]).min()))
        return t

    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        for _ in range(max_iter):
            rd = grad - zl + zu
            wi = np.where(fin, 1.0 / w, 0.0)
            comp = float(x @ zl) + float(w @ zu)
            size = float((np.abs(grad) + zl + zu) @ np.maximum(x, a))
            if not comp > 1e-13 * max(1.0, size):
                break
            H = K.copy()
            H[diag] += zl / x + zu * wi + delta
            try:
                fac = sla.cho_factor(H, lower=True, overwrite_a=True, check_finite=True)
            except (np.linalg.LinAlgError, ValueError):
                break
            dx, dzl, dzu = newton(x * zl, w * zu)                        # predictor
            t = longest(dx, dzl, dzu)
            comp_aff = float((x + t * dx) @ (zl + t * dzl)) + \
                float((w - t * dx) @ (zu + t * dzu))
            sigma_mu = (comp_aff / comp) ** 3 * comp / n_bounds
            dx, dzl, dzu = newton(x * zl + dx * dzl - sigma_mu,            # corrector
                                  np.where(fin, w * zu - dx * dzu - sigma_mu, 0.0))
            t = 0.99 * longest(dx, dzl, dzu)
            if not (np.isfinite(t) and t >= 1e-10 and np.all(np.isfinite(dx))
                    and np.all(np.isfinite(dzl)) and np.all(np.isfinite(dzu))):
                break
            x = x + t * dx
            w = np.where(fin, w - t * dx, 1.0)
            zl = zl + t * dzl
            zu = np.where(fin, zu + t * dzu, 0.0)
            grad = grad + t * _qmul(K, y, dx)
    H = fac = None                      # memory back before the crossover's block

    def change(s):              # the objective's change along s: gᵀs + ½sᵀQs
        return float(g @ s + 0.5 * s @ _qmul(K, y, s))

    inner = np.clip(x, 0.0, np.where(fin, Cf, np.inf)) - a
    f_inner = change(inner)
    # crossover: the bounds the interior point reads, then the exact solve on the rest.
    # The points with exact bounds are preferred where the objective is the same to
    # rounding (on a kernel of low numerical rank the optimal set is a face along which
    # it is flat, and the interior point, at its centre, may be lower by 1e-14)
    even = 1e-11 * max(1.0, abs(f_inner), float(np.abs(g) @ np.abs(inner)))
    best, f_best = inner, f_inner
    low = zl > x
    up = fin & (zu > w) & ~low
    snap = a + inner
    snap[low], snap[up] = 0.0, Cf[up]
    s_snap = snap - a
    f_snap = change(s_snap)
    if f_snap <= f_best + even:
        best, f_best = s_snap, f_snap
    f = np.flatnonzero(~(low | up))
    if f.size:
        b = np.flatnonzero(low | up)
        s_b = np.zeros(m)
        s_b[b] = s_snap[b]
        r = g[f] + _qmul(K, y, s_b)[f]
        A = K[np.ix_(f, f)]
        A[np.diag_indices_from(A)] += delta
        try:
            z = sla.cho_solve(sla.cho_factor(A, lower=True, overwrite_a=True,
                                             check_finite=False), -(y[f] * r),
                              check_finite=False)
            s_x = s_b.copy()
            s_x[f] = y[f] * z
            xf = a[f] + s_x[f]
            if np.all(np.isfinite(xf)) and np.all(xf >= -1e-12 * np.maximum(Cf[f], 1.0)) \
                    and np.all(~fin[f] | (xf <= Cf[f] * (1 + 1e-12))):
                s_x[f] = np.clip(xf, 0.0, np.where(fin[f], Cf[f], np.inf)) - a[f]
                f_x = change(s_x)
                if f_x <= min(f_best, f_inner) + even:
                    best, f_best = s_x, f_x
        except (np.linalg.LinAlgError, ValueError):
            pass
    return best if f_best < 0.0 else np.zeros(m)


def box_newton(src, duals, budget_bytes, tol, rounds, opts=DEFAULT):
    """Newton rounds for the form without the equality (no intercept), the box QP
    min ½αᵀQα + pᵀα, 0 ≤ α ≤ u, where coordinate descent stalls on an ill-conditioned Q.

    Each round takes the variables F that can move downhill (free, or at a bound with
    the gradient pointing into the box; at most :func:`max_free`, the free ones first,
    then the largest violations; below that, as many bound variables again whose
    gradient is nearest to zero), solves the box QP on them with the others held
    (:func:`_box_interior`: an interior-point method on K_FF, at most ``opts.box_iter``
    factorizations, and a crossover to the exact optimum), and brings the gradient of
    every variable up to date as the polish does (:func:`_update_and_seed`).  The rounds
    stop once the largest projected gradient is ≤ ``tol``, or where a round does not
    move.

    Returns the number of rounds that decreased the objective (α and ∇ updated in place).

    References
    ----------
    J. Nocedal and S. J. Wright, *Numerical Optimization*, 2nd ed., Springer 2006, §16.6
    (interior-point methods for QP, Mehrotra's predictor-corrector); S. Mehrotra, "On the
    implementation of a primal-dual interior point method", SIAM J. Optim. 2(4), 1992.
    """
    a, G, y, C, index = duals.alpha, duals.G, duals.y, duals.C, duals.index
    cap = max_free(budget_bytes, opts)
    done = 0
    for _ in range(rounds):
        down = ((a > 0.0) & (G > 0.0)) | ((a < C) & (G < 0.0))
        if not down.any() or float(np.abs(G[down]).max()) <= tol:
            break
        free = (a > 0.0) & (a < C)
        F = np.flatnonzero(down | free)
        # the working set: all of them where a factor may hold them, else the free
        # variables first and then the largest violations (a small working set makes the
        # rounds a decomposition method, slow where hundreds of bounds change); padded
        # with as many bound variables again whose gradient is nearest to pointing into
        # the box, those the round's step would make violate next (at n = 3000: 8 and 11
        # rounds against 25 and 30 without)
        if F.size > cap:
            order = np.lexsort((-np.abs(G[F]), ~free[F]))
            F = np.sort(F[order[:cap]])
        else:
            rest = np.flatnonzero(~(down | free) & (C > 0.0))   # (C = 0: fixed)
            k = min(cap - F.size, F.size, rest.size)
            if k > 0:
                near = rest[np.argsort(np.abs(G[rest]), kind="stable")[:k]]
                F = np.sort(np.concatenate([F, near]))
        K = _block(src, index[F])
        delta = opts.damping * max(1.0, float(np.diag(K).max()))
        yF, aF, CF = y[F], a[F], C[F]
        step = _box_interior(K, G[F], yF, aF, CF, delta, opts.box_iter)
        changed = step != 0.0
        if not changed.any():
            break
        a[F] = np.clip(aF + step, 0.0, CF)
        step = a[F] - aF
        rows, inv = np.unique(index[F[changed]], return_inverse=True)
        summed = np.zeros((rows.size, 1))
        np.add.at(summed, inv, (yF * step)[changed, None])
        v = _update_and_seed(src, rows, summed, budget_bytes / 4)
        G += y * v[index, 0]
        done += 1
    return done


# ---------------------------------------------------------------- the early factor

class EarlyFactor:
    """The thread computing the factor of K_UU for the free variables ``U`` (ids in the
    unshrunk order) and its result; :meth:`take` waits for it."""

    def __init__(self, kd, gram, U, rows, opts=DEFAULT):
        self.U = U
        self.opts = opts
        self._factor = None
        self._thread = threading.Thread(target=self._compute, args=(kd, gram, rows),
                                        name="margin-opt-early-factor", daemon=True)
        self._thread.start()

    def _compute(self, kd, gram, rows):
        try:
            with one_blas_thread():
                K = gram[np.ix_(rows, rows)] if gram is not None else \
                    _rows.symmetric_block(kd, rows, nthr=1)
                fac = Factor(K, self.U, self.opts)
            self._factor = fac if fac.L is not None else None
        except Exception:             # e.g. MemoryError: the polish factorizes itself
            self._factor = None

    def take(self):
        """The :class:`Factor`, or None (it failed); waits for the thread."""
        self._thread.join()
        fac, self._factor = self._factor, None
        return fac


def possible(src) -> bool:
    """True where the thread can compute K_FF without reading what SMO writes: a dense
    named kernel (the data) or a given kernel matrix (never the row cache)."""
    return src.gram is not None or _rows.dense_named(src.kd)


def start(src, alpha, C, perm, index, smo_work, budget_bytes, opts=DEFAULT):
    """An :class:`EarlyFactor` for the free set of α as it is now (``perm[k]``: the
    variable at position k, ``index``: the data rows by position), or None (a
    free set below ``opts.early_min_free``, above :func:`max_free`, or one
    whose polish would not be worth it yet)."""
    pos = np.flatnonzero((alpha > 0.0) & (alpha < C))   # free variables are never shrunk
    if pos.size < opts.early_min_free or pos.size > max_free(budget_bytes, opts) or \
            not worth_it(pos.size, smo_work, opts):
        return None
    ids = perm[pos]
    order = np.argsort(ids)
    try:
        return EarlyFactor(src.kd, src.gram, ids[order], np.ascontiguousarray(index[pos][order]),
                           opts)
    except RuntimeError:            # no thread to be had: the polish factorizes itself
        return None
