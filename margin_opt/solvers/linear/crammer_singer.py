"""The sequential dual method for the Crammer–Singer multiclass SVM, W kept explicitly.

The dual (:class:`~margin_opt.standard_forms.CrammerSingerQP`, in liblinear's
variables β = C∘Y − λ) is

    min_β  ½ Σ_r ‖w_r‖² − Σᵢ β_{i yᵢ},   w_r = Σᵢ βᵢᵣ xᵢ,
    s.t.   βᵢᵣ ≤ Cᵢ δ_{yᵢ r},   Σ_r βᵢᵣ = 0   (every sample i).

Its constraints separate by sample, so the method of Keerthi et al. (2008) visits the
samples in a random order (here by random blocks of neighbouring samples, which read
as short streams in memory) and solves each one's sub-problem over its k variables
*exactly*: with Aᵢ = ‖xᵢ‖² and the gradient Gᵢᵣ = w_rᵀxᵢ + eᵢᵣ (eᵢᵣ = 1 − δ_{yᵢ r}),
the new βᵢ minimizes ½Aᵢ‖βᵢ‖² + Σ_r Bᵣβᵢᵣ with Bᵣ = Gᵢᵣ − Aᵢβᵢᵣ over the same set, whose
solution is βᵢᵣ = min(Cᵢδ_{yᵢ r}, (θ − Bᵣ)/Aᵢ) with θ the root of the piecewise linear
Σ_r min(…) = 0, found by sorting Dᵣ = Bᵣ + AᵢCᵢδ_{yᵢ r} (Crammer and Singer 2001, §6).
One step costs O(k · nnz(xᵢ) + k log k); W is updated in O(nnz(xᵢ)) per changed class.

Coordinate steps converge linearly, slowly on problems near the hard margin (large C),
where the duality gap Σᵢ Cᵢ ξᵢ-like terms need violations at the rounding level.  So
the passes first stop at a moderate violation and :func:`polish` solves the
optimality conditions on the active set they found (the free variables βᵢᵣ <
Cᵢδ_{yᵢ r}) exactly, as LIBSVM-style solvers end with a Newton step on the free set;
the polished answer is kept only when it meets the stop, else the passes go on.

Past that point the active set is settled and the passes converge linearly, at a rate
set by the conditioning of the free variables' Gram matrix.  Each pass over the shrunk
samples is then followed by an exact step in the span of the pass's displacement of β
and the two previous passes' (the dual is quadratic, so its minimizer on that subspace
needs only inner products of the displacements of W, and the step is shortened to stay
in the box): a subspace-minimizing acceleration of the coordinate passes, in the spirit
of conjugate directions, that halves the passes of the tail.

A sample is optimal when max_r Gᵢᵣ ≤ min_{r: βᵢᵣ < Cᵢδ} Gᵢᵣ; the difference is its
violation, the complementary slackness of its margin constraints in the units of f.
Shrinking drops a class r of sample i while βᵢᵣ is at its bound (0, or Cᵢ for r = yᵢ)
and Gᵢᵣ is below the free minimum, and the sample when one class is left (its β is
then fixed); every shrunk variable is restored and checked before the method stops.
The stop asks for a violation ≤ ``tol`` on a full pass AND a relative duality gap
≤ ``gap_tol`` computed from W (O(nnz · k)), so that the answer certifies at ``tol``.

Unregularized intercepts (``intercept=True``) add the coupling Σᵢ βᵢᵣ = 0 per class.
They are handled by the method of multipliers (the proximal point method on b in the
primal): each inner problem adds ρ/2 Σ_r (Σᵢβᵢᵣ)² + Σ_r b_r Σᵢβᵢᵣ, i.e. the same
sub-problems with Aᵢ + ρ and Gᵢᵣ + b_r + ρ Σⱼβⱼᵣ, after which b ← b + ρ Σᵢβᵢ; b
converges to the intercepts and Σᵢβᵢ to 0.

References
----------
S. S. Keerthi, S. Sundararajan, K.-W. Chang, C.-J. Hsieh and C.-J. Lin, "A sequential
dual method for large scale multi-class linear SVMs", KDD 2008.
K. Crammer and Y. Singer, "On the algorithmic implementation of multiclass
kernel-based vector machines", JMLR 2:265–292, 2001.
R.-E. Fan, K.-W. Chang, C.-J. Hsieh, X.-R. Wang and C.-J. Lin, "LIBLINEAR: a library
for large linear classification", JMLR 9:1871–1874, 2008.
D. P. Bertsekas, *Constrained Optimization and Lagrange Multiplier Methods*, Academic
Press 1982, ch. 2 (the method of multipliers).
"""

from __future__ import annotations

import numbers
import time
import warnings
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from scipy.optimize import OptimizeResult
from sklearn.exceptions import ConvergenceWarning

from ... import _core
from ...kkt import relative_gap
from ...parallel import all_blas_threads, one_blas_thread
from ...standard_forms import CrammerSingerQP
from .coordinate import linear_x

__all__ = ["solve_crammer_singer", "CSOptions", "polish"]


#: the first shrinking tolerance: every variable is restored when a pass's violation falls
#: below it, and it is multiplied by _SHRINK_DECAY (down to ``tol``)
_SHRINK_START = 1.0
_SHRINK_DECAY = 0.5
#: with intercepts, each inner problem is solved to a violation of
#: max(tol, _INNER_TOL · ‖Σᵢβᵢ‖∞ / max(1, max Cᵢ))
_INNER_TOL = 0.1
#: where a polish may apply, the passes first stop at a violation of max(tol, _POLISH_FROM)
#: and try it (a failed polish costs one solve; the passes then go on to ``tol``)
_POLISH_FROM = 1e-2
#: the subspace steps stop for the rest of the call when a pass's violation exceeds this many
#: times the smallest one since the last restore (a degenerate dual near the rounding floor of
#: its objective, where they move the margins by more than they gain); a restore starts the
#: comparison again (its new samples raise the violation legitimately)
_EXTRAPOLATE_GUARD = 4.0


@dataclass(frozen=True)
class CSOptions:
    """Tuning of the sequential dual method.

    Parameters
    ----------
    rho : float or None, default=None
        The multiplier method's penalty for intercepts; None: the mean ‖xᵢ‖² of the
        samples with Cᵢ > 0 (a bias column of the features' scale).
    polish_max : int, default=2000
        The exact finish (:func:`polish`) is tried when its linear system has at most
        this many unknowns (0: never).
    polish_work : float, default=30.0
        Beyond ``polish_cheap`` unknowns, a polish is tried only when its factorization
        is cheap beside the passes done: its q unknowns must satisfy
        q³/3 ≤ polish_work · (passes · nnz(X) · n_classes), a deterministic count (an
        LU's multiply-adds run some 30× faster than the passes' memory-bound ones).  On
        wide sparse data the passes reach a small violation in a few cheap passes, where
        an LU of thousands of unknowns would cost many times more (a 600 × 20 000
        text-like set: 6 s against 0.02 s).
    polish_cheap : int, default=256
        A polish of at most this many unknowns is always allowed (its LU is cheap).
    shuffle_block : int, default=16
        The passes visit the samples in a random order of blocks of this many
        consecutive (active) samples, which lie close in memory; 1: a uniformly random
        order (liblinear's).  On a 50 000 × 20 000 text-like set, 16 made a pass ~20 %
        cheaper for a few % more passes (CPU time, 3 seeds: 4.80–4.85 s against
        5.33–6.12 s).
    extrapolate : int, default=2
        Once the passes aim at ``tol``, each pass over the shrunk set is followed by
        an exact step in the span of its displacement and the ``extrapolate`` previous
        ones (0: none; at most 2): the dual's minimizer on that subspace, shortened to
        stay in the box, found from inner products of the W displacements alone.  On
        the 50 000 × 20 000 ten-class text-like set the passes to the certified 1e-6
        fall from 381 to 181 (188 with 1; with ``tail_shrink_decay``).  Memory: this
        many + 1 displacements of β on the visited samples and of W.
    extrapolate_reach : float, default=2.0
        A step moves W by at most this many times the pass's own move (its norm): on a
        degenerate dual a long step along a nearly flat direction gains a rounding-size
        amount and moves every margin by as much.
    tail_shrink_decay : float, default=0.1
        The shrinking tolerance's decay (``_SHRINK_DECAY`` before) once the passes aim
        at ``tol`` with the subspace steps: the active set is settled there, and each
        restore repeats a full pass (about three shrunk passes' cost) that finds little
        to restore.  On the text-like set: 14
        restores instead of 24, ~11 % less CPU (best of 4: 2.57 s against 2.90 s).
    extrapolate_width : float, default=1.0
        A step sweeps W (n_features × n_classes) three times: it is taken only while
        n_features ≤ this times the nonzeros of the samples the pass visits (on wide
        sparse data with few active samples the sweeps would cost more than the pass).
    extrapolate_patience : int, default=20
        The steps also stop for the rest of the call when this many passes in a row
        do not lower the smallest violation since the last restore: on the binary iris
        problem with intercepts (seeds 1 and 6 of 12) a pass and a step undid each
        other, the violation stuck at 0.007 until max_iter.
    support_first : bool, default=True
        Once the passes aim at ``tol``, lay the samples out support-first (those with
        βᵢ ≠ 0 together, a copy of X's rows): the shrunk passes then read their samples
        as streams (on the 10-class text-like set a shrunk pass costs ~25 % less).
    support_first_at : float, default=0.1
        Where that layout is made: the passes first stop at a full pass with violation
        ≤ this (when it is above the violation aimed at), where the active set is
        nearly settled, and the samples are laid out then; else at the switch to
        ``tol``.

    Raises
    ------
    ValueError
        A value ≤ 0, or ``extrapolate`` not 0, 1 or 2.
    """

    rho: float | None = None
    polish_max: int = 2000
    polish_work: float = 30.0
    polish_cheap: int = 256
    shuffle_block: int = 16
    extrapolate: int = 2
    extrapolate_reach: float = 2.0
    tail_shrink_decay: float = 0.1
    extrapolate_width: float = 1.0
    extrapolate_patience: int = 20
    support_first: bool = True
    support_first_at: float = 0.1

    def __post_init__(self):
        if isinstance(self.shuffle_block, bool) or int(self.shuffle_block) < 1:
            raise ValueError(f"shuffle_block must be an integer >= 1, got "
                             f"{self.shuffle_block!r}.")
        if isinstance(self.extrapolate, bool) or \
                not isinstance(self.extrapolate, numbers.Integral) or \
                self.extrapolate not in (0, 1, 2):
            raise ValueError(f"extrapolate must be 0, 1 or 2, got {self.extrapolate!r}.")
        for name in ("polish_max", "polish_cheap", "extrapolate_patience"):
            if int(getattr(self, name)) < 0:
                raise ValueError(f"{name} must be >= 0, got {getattr(self, name)!r}.")
        if not 0 < self.tail_shrink_decay < 1:
            raise ValueError(f"tail_shrink_decay must be in (0, 1), got "
                             f"{self.tail_shrink_decay!r}.")
        for name in ("polish_work", "extrapolate_reach", "extrapolate_width",
                     "support_first_at"):
            if not getattr(self, name) > 0:
                raise ValueError(f"{name} must be > 0, got {getattr(self, name)!r}.")
        if not isinstance(self.support_first, (bool, np.bool_)):
            raise ValueError(f"support_first must be a bool, got {self.support_first!r}.")
        if self.rho is not None and not (np.isfinite(self.rho) and self.rho > 0):
            raise ValueError(f"rho must be a finite number > 0 or None, got {self.rho!r}.")


# --------------------------------------------------------------------------- compiled core
# The passes (their shuffle, shrinking, exact sub-problems and subspace steps), W from β
# and the objectives are C++ (src/core/crammer_singer.cpp, margin_opt._core.cs_*): one
# call runs the passes of an inner problem with the GIL released.

def _weights(x, beta, W):
    """W = Σᵢ xᵢ βᵢᵀ (recomputed from β, in place)."""
    _core.cs_weights(x, beta, W)


def _objectives(x, y, C, beta, W, b):
    """(primal, dual, max violation) at (W, b, β); f = XW + b, ξ from f."""
    return _core.cs_objectives(x, y, C, beta, W, b)


def _restore(order, cls, n_cls, k):
    """Every class of the samples ``order`` back (their class lists the identity)."""
    n_cls[order] = k
    cls[order] = np.arange(k, dtype=cls.dtype)


# --------------------------------------------------------------------------- exact finish


def polish(X, y, C, beta, b, intercept, max_size):
    """The exact solution on the active set of ``beta`` (a Newton step), or None.

    The free variables E = {(i, r): βᵢᵣ < Cᵢδ_{yᵢ r}} of the samples with βᵢ ≠ 0 keep
    their bounds' complement; the others are set to their bounds.  On E the optimality
    conditions are linear: Gᵢᵣ + νᵢ (+ b_r) = 0 for (i, r) ∈ E, Σ_r βᵢᵣ = 0 (and
    Σᵢ βᵢᵣ = 0 with intercepts), with Gᵢᵣ = w_rᵀxᵢ + eᵢᵣ and w_r = Σᵢ βᵢᵣxᵢ; the
    correction of least norm is solved for (least squares: K_E is singular when the
    free samples outnumber the features) and the bounds clipped.  Whether the result
    is optimal is for the caller to check (the duality gap); the active set of a run
    stopped at a small violation is usually the optimal one.

    Parameters
    ----------
    X : {ndarray, csr_matrix} of shape (n_samples, n_features)
    y : ndarray of int of shape (n_samples,)
    C : ndarray of shape (n_samples,)
    beta : ndarray of shape (n_samples, n_classes)
        Feasible β (not modified).
    b : ndarray of shape (n_classes,)
        The intercepts at which ``beta`` was solved (zeros without).
    intercept : bool
    max_size : int
        Give up (None) when the linear system has more unknowns.

    Returns
    -------
    (beta, b) or None
    """
    import scipy.linalg as sla

    n, k = beta.shape
    rows = np.arange(n)
    Y = np.zeros((n, k), dtype=bool)
    Y[rows, y] = True
    upper = np.where(Y, C[:, None], 0.0)
    beta = np.minimum(beta, upper)
    free = beta < upper
    support = (beta < 0).any(axis=1) & (C > 0)
    beta = np.where(support[:, None], np.where(free, beta, upper), 0.0)
    free &= support[:, None]
    ei, er = np.nonzero(free)                   # row-major: grouped by sample
    m = ei.size
    first = np.r_[True, ei[1:] != ei[:-1]] if m else np.zeros(0, dtype=bool)
    q = np.flatnonzero(~first)                  # the entries left after Σ_r βᵢᵣ = 0
    # intercepts: k − 1 of them (b is determined up to a constant, and the k-th class
    # sum Σᵢβᵢᵣ = 0 follows from the others and the samples' sums)
    size = q.size + (k - 1 if intercept else 0)
    if m == 0 or size > max_size:
        return None
    pivot = np.maximum.accumulate(np.where(first, np.arange(m), 0))
    pq = pivot[q]
    F = np.asarray(X @ np.asarray(X.T @ beta)) + b
    G = F + 1.0 - Y
    Xe = X[ei]
    # the Gram matrix of the free entries' rows: a sparse product for CSR input (never
    # the m × n_features dense copy, which costs O(m² · n_features) on wide text data)
    gram = (Xe @ Xe.T).toarray() if sp.issparse(Xe) else np.asarray(Xe) @ np.asarray(Xe).T
    K = np.where(er[:, None] == er[None, :], gram, 0.0)
    # Δ = Δ0 + T Δ': Δ0 restores each sample's Σ_r βᵢᵣ = 0 on its first free entry, T's
    # columns move mass from an entry to its sample's first one (ν eliminated)
    d0 = np.zeros(m)
    d0[first] = -beta[support].sum(axis=1)
    g = G[ei, er] + K @ d0
    Kt = K[np.ix_(q, q)] - K[np.ix_(q, pq)] - K[np.ix_(pq, q)] + K[np.ix_(pq, pq)]
    M = np.zeros((size, size))
    M[:q.size, :q.size] = Kt
    rhs = np.zeros(size)
    rhs[:q.size] = -(g[q] - g[pq])
    if intercept:
        R = np.zeros((m, k))
        R[np.arange(m), er] = 1.0
        Rt = (R[q] - R[pq])[:, :k - 1]
        M[:q.size, q.size:] = Rt
        M[q.size:, :q.size] = Rt.T
        rhs[q.size:] = -(beta.sum(axis=0) + R.T @ d0)[:k - 1]
    # K_E is singular when the free samples outnumber the features: a ridge of rounding
    # size (a proximal term) makes the system solvable and picks a correction of nearly
    # least norm; two refinement steps remove its bias
    ridge = 1e-12 * max(1.0, float(np.max(np.diag(Kt), initial=0.0)))
    Mr = M.copy()
    Mr[np.arange(q.size), np.arange(q.size)] += ridge
    try:
        # both cores only where they are free (inside one_blas_thread, as the solver
        # calls it; untouched otherwise)
        with warnings.catch_warnings(), np.errstate(all="ignore"), all_blas_threads():
            warnings.simplefilter("ignore", sla.LinAlgWarning)   # a singular one: checked
            lu = sla.lu_factor(Mr, check_finite=False)
            sol = sla.lu_solve(lu, rhs, check_finite=False)
            for _ in range(2):
                sol += sla.lu_solve(lu, rhs - M @ sol, check_finite=False)
    except (np.linalg.LinAlgError, ValueError):
        return None
    if not np.all(np.isfinite(sol)):
        return None
    delta = d0.copy()
    delta[q] += sol[:q.size]
    np.subtract.at(delta, pq, sol[:q.size])
    new = beta.copy()
    new[ei, er] += delta
    new = np.minimum(new, upper)
    b_new = b + np.r_[sol[q.size:], 0.0] if intercept else b
    b_new = b_new - b_new.mean() if intercept else b_new   # only differences matter
    return new, b_new


# --------------------------------------------------------------------------- driver


def _try_polish(Xs, x, y, C, beta, W, b, intercept, max_size, tol, gap_tol, scale):
    """(β, b, primal, dual, violation) of a polish that meets the stop, or None."""
    # one BLAS thread (its LU on both where they are free): a pool of two woken on a
    # busy machine spins against the other process, and on into the passes after it
    # (digits at load 2: the whole solve 0.45–0.53 s against 0.25–0.35 s on one thread)
    with one_blas_thread():
        out = polish(Xs, y, C, beta, b, intercept, max_size)
    if out is None:
        return None
    new, b_new = out
    W_new = np.empty_like(W)
    _weights(x, new, W_new)
    primal, dual, viol = _objectives(x, y, C, new, W_new, b_new)
    gap = relative_gap(primal, dual)
    sums = np.abs(new.sum(axis=1)).max(initial=0.0)
    if intercept:
        sums = max(sums, np.abs(new.sum(axis=0)).max(initial=0.0))
    if viol <= tol and sums <= 0.1 * tol * scale and (gap_tol is None or gap <= gap_tol):
        W[:] = W_new
        return new, b_new, primal, dual, viol
    return None


def _support_first(Xs, beta, order, n_active, n_free, arrays):
    """Lay the samples out support-first: the permutation ``perm`` (the samples with
    βᵢ ≠ 0, then the others, each in increasing order), X's rows and the per-sample
    ``arrays`` (their rows) in that order, and ``order`` renamed (its active part
    ``order[:n_active]`` and the shrunk samples after it each kept apart).

    Once the passes have found the active set (here ~15 000 of the 50 000 samples of
    the 10-class text-like set), they visit only those samples; laid out together, a
    block of the visit order reads X's rows, β's and the class lists as one stream
    instead of rows ~3 apart (a shrunk pass 6.6 → 4.8 ms there).  The cost is one
    copy of X (O(nnz)), made once.

    Returns
    -------
    (perm, Xs, x, arrays)
        ``x`` the :class:`margin_opt._core.LinearX` of the new ``Xs``.
    """
    n = beta.shape[0]
    sup = (beta != 0.0).any(axis=1)
    perm = np.concatenate([np.flatnonzero(sup), np.flatnonzero(~sup)])
    inv = np.empty(n, dtype=np.int64)
    inv[perm] = np.arange(n)
    Xs = Xs.tocsr()[perm] if sp.issparse(Xs) else Xs[perm]
    order[:n_active] = np.sort(inv[order[:n_active]])
    order[n_active:n_free] = np.sort(inv[order[n_active:n_free]])
    return perm, Xs, linear_x(Xs), tuple(np.ascontiguousarray(a[perm]) for a in arrays)


def _check_int(value, name, low):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < low:
        raise ValueError(f"{name} must be an integer ≥ {low}, got {value!r}.")
    return int(value)


def _start(alpha0, Y, C):
    """β from the multipliers λ0 (a feasible start), or zeros."""
    n, k = Y.shape
    if alpha0 is None:
        return np.zeros((n, k))
    lam = np.array(alpha0, dtype=np.float64, copy=True)
    if lam.shape != (n, k) or not np.all(np.isfinite(lam)):
        raise ValueError(f"alpha0 must be finite multipliers λ of shape {(n, k)}, got shape "
                         f"{np.shape(alpha0)}.")
    scale = max(1.0, float(C.max(initial=0.0)))
    if lam.min(initial=0.0) < -1e-9 * scale or \
            np.abs(lam.sum(axis=1) - C).max(initial=0.0) > 1e-9 * scale:
        raise ValueError("alpha0 must be feasible: λ ≥ 0 with Σ_r λᵢᵣ = Cᵢ in every row.")
    lam = np.clip(lam, 0.0, None)
    lam *= np.divide(C, lam.sum(axis=1), out=np.zeros(n), where=lam.sum(axis=1) > 0)[:, None]
    beta = C[:, None] * Y - lam
    beta[C <= 0] = 0.0
    return beta


def solve_crammer_singer(std: CrammerSingerQP, *, tol=1e-3, gap_tol=None, max_iter=100_000,
                         shrinking=True, random_state=0, alpha0=None, callback=None,
                         options: CSOptions | None = None) -> OptimizeResult:
    """Solve the Crammer–Singer dual by the sequential dual method (W explicit).

    Parameters
    ----------
    std : CrammerSingerQP
        The problem (dense or CSR X, int32 or int64 indices).
    tol : float, default=1e-3
        Stop when every sample's violation max_r Gᵢᵣ − min_{free r} Gᵢᵣ ≤ tol on a full
        pass (units of f), and, with intercepts, ‖Σᵢβᵢ‖∞ ≤ tol · max(1, max Cᵢ).
    gap_tol : float or None, default=None
        Also require the relative duality gap ``|P − D| / max(|P|, |D|)`` ≤ gap_tol
        (:func:`margin_opt.kkt.relative_gap`)
        (measured from W in O(nnz · k)); the violation tolerance is divided by 10
        until it holds.  None: no gap test.
    max_iter : int, default=100000
        Passes over the data (all inner problems together; a pass over the samples
        not shrunk counts as one).
    shrinking : bool, default=True
    random_state : int, default=0
        Seed of the sample order.
    alpha0 : ndarray of shape (n_samples, n_classes), optional
        A feasible start in the multipliers λ (λ ≥ 0, Σ_r λᵢᵣ = Cᵢ).
    callback : callable, optional
        Called after every pass as ``callback(n_iter, violation, W)``; returning True
        stops the run (status ``"callback"``).
    options : CSOptions, optional

    Returns
    -------
    result : scipy.optimize.OptimizeResult
        ``x`` the multipliers λ of shape (n_samples, n_classes), ``beta`` = C∘Y − λ,
        ``w`` of shape (n_features, n_classes), ``b`` of shape (n_classes,) (zeros
        without intercepts), ``status`` ("optimal", "max_iter" or "callback"),
        ``success``, ``nit`` (passes), ``violation``, ``primal``, ``dual``, ``gap``,
        ``message``, ``timings``.

    Raises
    ------
    TypeError
        ``std`` is not a CrammerSingerQP.
    ValueError
        Bad tolerances, max_iter, alpha0 or callback.
    """
    t0 = time.perf_counter()
    if not isinstance(std, CrammerSingerQP):
        raise TypeError(f"solve_crammer_singer takes a CrammerSingerQP, got "
                        f"{type(std).__name__}.")
    options = CSOptions() if options is None else options
    if not isinstance(options, CSOptions):
        raise TypeError(f"options must be a CSOptions, got {type(options).__name__}.")
    if not (np.isfinite(tol) and tol > 0):
        raise ValueError(f"tol must be a finite number > 0, got {tol!r}.")
    if gap_tol is not None and not (np.isfinite(gap_tol) and gap_tol > 0):
        raise ValueError(f"gap_tol must be a finite number > 0 or None, got {gap_tol!r}.")
    max_iter = _check_int(max_iter, "max_iter", 1)
    seed = _check_int(0 if random_state is None else random_state, "random_state", 0)
    if callback is not None and not callable(callback):
        raise ValueError(f"callback must be callable, got {callback!r}.")
    k = int(std.n_classes)
    y = np.ascontiguousarray(std.y, dtype=np.int64)
    n = y.size
    C = np.ascontiguousarray(std.upper, dtype=np.float64)
    # X as the passes read it (x), and as the polish does (Xs)
    Xs = std.X if sp.issparse(std.X) else np.ascontiguousarray(std.X, dtype=np.float64)
    x = linear_x(Xs)
    d = std.X.shape[1]
    nnz = int(np.count_nonzero(Xs)) if x.is_dense else int(x.nnz)
    Y = np.zeros((n, k))
    Y[np.arange(n), y] = 1.0
    beta = _start(alpha0, Y, C)
    sq = x.row_norms()
    used = C > 0
    intercept = bool(std.intercept)
    rho = 0.0
    if intercept:
        rho = float(options.rho) if options.rho is not None else \
            max(float(sq[used].mean()) if used.any() else 1.0, 1e-12)
    A = sq + rho
    # a sample with xᵢ = 0 and no intercept: its sub-problem is linear, solved once
    lone = used & (A <= 0)
    if lone.any():
        beta[lone] = -C[lone, None] / max(k - 1, 1)
        beta[lone, y[lone]] = C[lone]
    order = np.flatnonzero(used & (A > 0)).astype(np.int64)
    n_free = order.size
    cls = np.tile(np.arange(k, dtype=np.int32), (n, 1))      # 4 bytes a class: less to read
    n_cls = np.full(n, k, dtype=np.int64)
    W = np.zeros((d, k))
    _weights(x, beta, W)
    b = np.zeros(k)
    s = beta.sum(axis=0)
    scale = max(1.0, float(C.max(initial=0.0)))
    samples = _core.CSSamples(y, C, A, beta, cls, n_cls)
    # the shrinking state, carried from call to call, and the sample order's generator
    state = _core.CSState(n_active=n_free, eps_shrink=float(_SHRINK_START), full=True,
                          rng=(seed * 0x9E3779B97F4A7C15 + 1) % 2 ** 64 or 1)
    t_setup = time.perf_counter() - t0
    # a polish may apply when the free variables can be few: try it from _POLISH_FROM
    may_polish = options.polish_max > 0 and min(n, options.polish_max) > 0
    eps = max(float(tol), _POLISH_FROM) if may_polish else float(tol)
    nit, viol, status, polished, restores = 0, np.inf, "max_iter", False, 0
    perm = None             # the samples' layout once support-first (None: as given)
    primal = dual = np.nan
    step = 1 if callback is not None else max_iter
    while nit < max_iter:
        # a first stop at a loose violation, where the active set is known, to lay the
        # samples out support-first
        early = options.support_first and perm is None and options.support_first_at > eps
        inner_eps = options.support_first_at if early else eps
        if intercept:
            inner_eps = max(inner_eps, _INNER_TOL * float(np.abs(s).max()) / scale)
        settings = _core.CSSettings(
            rho=rho, shrinking=bool(shrinking), eps=float(inner_eps),
            decay=_SHRINK_DECAY if eps > tol or not options.extrapolate else
            options.tail_shrink_decay, max_passes=min(step, max_iter - nit),
            block=int(options.shuffle_block),
            # the subspace steps once the passes aim at tol (a polish from _POLISH_FROM is
            # tried first, on the active set that plain passes found)
            history=int(options.extrapolate) if eps <= tol else 0,
            reach=float(options.extrapolate_reach), guard=float(_EXTRAPOLATE_GUARD),
            width=float(options.extrapolate_width),
            patience=int(options.extrapolate_patience))
        ran = _core.cs_passes(x, samples, W, b, s, order, state, settings)
        nit += ran.passes
        restores += ran.restores
        viol = ran.violation
        if callback is not None and callback(nit, float(viol), W):
            status = "callback"
            break
        if not ran.converged:
            continue
        if early:
            perm, Xs, x, (y, C, A, beta, cls, n_cls) = _support_first(
                Xs, beta, order, state.n_active, n_free, (y, C, A, beta, cls, n_cls))
            samples = _core.CSSamples(y, C, A, beta, cls, n_cls)
            if viol > eps:
                continue
            # the full pass that ended the call already meets eps (a warm start)
        # W from β (no drift), then the certificate's own numbers at the effective b
        _weights(x, beta, W)
        b_eff = b + rho * s
        primal, dual, viol = _objectives(x, y, C, beta, W, b_eff)
        feasible = (not intercept) or float(np.abs(s).max()) <= tol * scale
        gap = relative_gap(primal, dual)
        if feasible and viol <= tol and (gap_tol is None or gap <= gap_tol):
            status = "optimal"
            break
        # the LU's q³/3 multiply-adds bounded by the passes' (passes · nnz · k)
        size = min(options.polish_max, max(
            int(options.polish_cheap),
            int(np.cbrt(3.0 * options.polish_work * nit * max(nnz, 1) * k))))
        if may_polish and size > 0:
            done = _try_polish(Xs, x, y, C, beta, W, b_eff, intercept, size, tol, gap_tol,
                               scale)
            if done is not None:
                beta, b_pol, primal, dual, viol = done
                b, s, status, polished = b_pol - rho * beta.sum(axis=0), beta.sum(axis=0), \
                    "optimal", True
                break
        if intercept:
            b = b_eff               # the multiplier step b ← b + ρ Σᵢβᵢ
            # the gradients moved with b: every variable back, from the violation reached
            _restore(order, cls, n_cls, k)
            state.n_active, state.full = n_free, True
            state.eps_shrink = min(_SHRINK_START, 2.0 * viol)
        if eps > tol:
            eps = float(tol)        # the polish did not certify: passes down to tol
            if options.support_first and perm is None:
                perm, Xs, x, (y, C, A, beta, cls, n_cls) = _support_first(
                    Xs, beta, order, state.n_active, n_free, (y, C, A, beta, cls, n_cls))
                samples = _core.CSSamples(y, C, A, beta, cls, n_cls)
        elif feasible and viol <= tol:
            # the gap is left: ask for a smaller violation
            eps = max(min(eps, viol) / 10.0, 1e-15)
    b_out = b + rho * s if intercept else np.zeros(k)
    if status != "optimal":
        _weights(x, beta, W)
        primal, dual, viol = _objectives(x, y, C, beta, W, b_out)
    gap = relative_gap(primal, dual)
    message = {"optimal": f"optimal: violation {viol:.2g} ≤ tol, relative gap {gap:.2g}"
                          + (" (after the exact finish on the active set)" if polished else ""),
               "max_iter": f"stopped at max_iter={max_iter} passes (violation {viol:.2g}, "
                           f"relative gap {gap:.2g}); raise max_iter or tol",
               "callback": "stopped by the callback"}[status]
    if status == "max_iter":
        warnings.warn(f"the sequential dual method {message}.", ConvergenceWarning,
                      stacklevel=2)
    if perm is not None:
        beta_p, beta = beta, np.empty_like(beta)
        beta[perm] = beta_p
        C = np.ascontiguousarray(std.upper, dtype=np.float64)
    lam = C[:, None] * Y - beta
    np.clip(lam, 0.0, None, out=lam)
    t_total = time.perf_counter() - t0
    return OptimizeResult(x=lam, beta=beta, w=W, b=b_out, status=status,
                          success=status == "optimal", nit=nit, violation=float(viol),
                          primal=float(primal), dual=float(dual), gap=float(gap),
                          message=message, rho=rho, polished=polished, restores=restores,
                          timings={"setup": t_setup, "solve": t_total - t_setup,
                                   "total": t_total})
