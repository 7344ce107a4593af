"""SMO on a kernel matrix at hand, in one compiled call: for many small problems.

The same SMO as :func:`margin_opt.solvers.smo.solve_smo` (its compiled loop
:func:`~.loop.smo_run`, the same working-set selection, shrinking and stopping
rule, the same duality-gap test with its tightening of m − M), driven from compiled
code instead of Python: set-up, the run, the gap test and the read-out are one call
that releases the GIL.  For a problem of a few hundred variables ``solve_smo``'s
Python between its phases costs more than the iterations (0.3 ms set-up and read-out
against 0.2–0.5 ms of SMO for a digits pair of ~360 samples), and 45 such pairs make
a one-vs-one fit; here the pairs run side by side on threads without taking turns on
the GIL.

What it does differently: instead of ``solve_smo``'s polish (a factorization kept and
extended across polishes, pinning rounds, blocks within the cache budget: worth it on
the long tails of large problems, and ~0.4 ms of Python and LAPACK calls), one Newton
step on the free set in compiled code (:func:`newton_free_step`) where the free set is
small; no callbacks, warm starts or row cache (the whole matrix is given).  The answer
is held to the rule of ``solve_smo``: m(α) − M(α) ≤ tol and, with ``gap_tol``, the
relative duality gap ≤ gap_tol; with ``polish=False`` its iterates are those of
``solve_smo(polish=False)``, bit for bit.

References
----------
Fan, Chen and Lin, JMLR 6 (2005), WSS 2; Chang and Lin, LIBSVM (2011), §4.1, §5.1;
Nocedal and Wright, *Numerical Optimization*, 2nd ed. (2006), §16.1 (the Newton step
of an equality-constrained quadratic).
"""

from __future__ import annotations

import time
from collections import namedtuple

import numpy as np
from numba import njit
from scipy.optimize import OptimizeResult

from ...kkt import dual_qp_reading
from . import cache as _cache
from . import driver as _smo
from . import loop as _loop
from . import packed as _pk
from . import rows as _rows
from . import shrink as _shrink
from . import state as _st
from .driver import run_status
from .options import SMOOptions, resolve

__all__ = ["solve_smo_gram", "solve_block_pair", "gram_run", "block_pair_matrix",
           "block_pair_run", "block_pairs_run", "pair_settings", "pair_result"]

#: the knobs of :class:`~.options.SMOOptions` that the compiled run reads, as a named
#: tuple (numba compiles it to a plain tuple): the alpha cap, the polish tolerance, the
#: floor of m − M, the gap test's range of factors, ``st[S_UNSHRINK]`` at a phase's
#: start, the Newton step's largest free set (its factorization is |F|³/6 flops in plain
#: loops: at 256, ~3 ms, more than the tail it saves on a problem that small) and the
#: damping of Q_FF, as the polish's
Knobs = namedtuple("Knobs", ["alpha_cap", "polish_tol", "tol_floor", "shrink_lo", "shrink_hi",
                             "unshrink_start", "newton_max_free", "damping"])


def knobs(opts: SMOOptions) -> Knobs:
    """The :class:`Knobs` of ``opts``."""
    lo, hi = opts.gap_shrink
    return Knobs(float(opts.alpha_cap), float(opts.polish_tol), float(opts.tol_floor),
                 float(lo), float(hi), int(opts.unshrink_start), int(opts.newton_max_free),
                 float(opts.damping))


_BIG = np.iinfo(np.int64).max

# the run's read-out: code, iterations, m − M, relative gap, b
_O_CODE, _O_NIT, _O_GAP, _O_REL, _O_B, _O_NEWTON = range(6)


@njit(cache=True, nogil=True)
def _arrays(K, m):
    """The kernel arrays and the row cache of a whole matrix K (every row valid), for
    a serial run (no thread count: see :mod:`.state`)."""
    n = K.shape[0]
    e2 = np.zeros((1, 1))
    ef = np.zeros(1)
    ei = np.zeros(1, dtype=np.int64)
    kd = _rows.KernelArrays(_rows.K_PRECOMPUTED, 1.0, 0.0, 1, False, e2, e2, ef, ef, ei, ei,
                         np.zeros((1, 1)), np.empty(max(m, n), dtype=np.int64),
                         np.empty(max(m, 1)), None, ei, ei, np.arange(n), None, _BIG, e2, ef,
                         np.full(1, -1, dtype=np.int64))
    pmeta = np.zeros(_pk.N_PMETA, dtype=np.int64)
    cc = _cache.RowCache(K, np.arange(n), np.arange(n), np.full(n, _st.FULL, dtype=np.int64),
                     np.zeros(n, dtype=np.int64), np.zeros((1, 1)), None, pmeta,
                     np.full(1, -1, dtype=np.int64), np.zeros(1, dtype=np.int64),
                     np.zeros(1, dtype=np.int64), np.full(1, -1, dtype=np.int64),
                     np.full(1, -1, dtype=np.int64), np.zeros(2, dtype=np.int64),
                     np.zeros(2, dtype=np.int64), np.zeros(1))
    return kd, cc


@njit(cache=True, nogil=True)
def _unpermute(values, perm):
    out = np.empty_like(values)
    for k in range(perm.shape[0]):
        out[perm[k]] = values[k]
    return out


@njit(cache=True, nogil=True)
def newton_free_step(K, alpha, G, G_bar, y, C, index, max_free, damping):
    """One Newton step on the free multipliers F (0 < αₜ < Cₜ), the others held at
    their bounds: the equality-constrained quadratic on F,
    ``[Q_FF y_F; y_Fᵀ 0][Δ; ν] = [−∇_F; 0]``, solved through the Cholesky factor of
    Q_FF + δI (two solves: Δ = u − νv with u = H⁻¹(−∇_F), v = H⁻¹y_F, ν = y_Fᵀu / y_Fᵀv),
    then damped to stay in the box (the first bound crossed is met exactly), and ∇
    and Ḡ brought up to date from K.  The dual objective falls by t(1 − t/2)ΔᵀQ_FFΔ
    ≥ 0.  Nothing is done (False) for no free variable, more than ``max_free``, or a
    factor that breaks down (Q_FF not numerically PSD)."""
    m = alpha.shape[0]
    nf = 0
    for t in range(m):
        if 0.0 < alpha[t] < C[t]:
            nf += 1
    if nf == 0 or nf > max_free:
        return False
    F = np.empty(nf, dtype=np.int64)
    k = 0
    for t in range(m):
        if 0.0 < alpha[t] < C[t]:
            F[k] = t
            k += 1
    H = np.empty((nf, nf))
    dmax = 0.0
    for a in range(nf):
        ra = index[F[a]]
        for b in range(nf):
            H[a, b] = y[F[a]] * y[F[b]] * K[ra, index[F[b]]]
        dmax = max(dmax, H[a, a])
    delta = damping * max(dmax, 1.0)
    for a in range(nf):
        H[a, a] += delta
    # Cholesky H = LLᵀ in place (lower triangle)
    for j in range(nf):
        s = H[j, j]
        for p in range(j):
            s -= H[j, p] * H[j, p]
        if not s > 0.0:
            return False
        d = np.sqrt(s)
        H[j, j] = d
        for i in range(j + 1, nf):
            s = H[i, j]
            for p in range(j):
                s -= H[i, p] * H[j, p]
            H[i, j] = s / d
    u = np.empty(nf)
    v = np.empty(nf)
    for a in range(nf):
        u[a] = -G[F[a]]
        v[a] = y[F[a]]
    _chol_solve(H, u)
    _chol_solve(H, v)
    yu = 0.0
    yv = 0.0
    for a in range(nf):
        yu += y[F[a]] * u[a]
        yv += y[F[a]] * v[a]
    if not yv > 0.0:
        return False
    nu = yu / yv
    step = np.empty(nf)
    ys = 0.0
    for a in range(nf):
        step[a] = u[a] - nu * v[a]
        ys += y[F[a]] * step[a]
    # y_Fᵀ(u − νv) = 0 only to rounding, and u, v are O(1/δ) along the null space of a
    # rank-deficient Q_FF (a linear kernel with more free points than features): the
    # step is projected back onto y_FᵀΔ = 0 (y_Fᵀy_F = |F|), or yᵀα would drift
    ys /= nf
    t_max = 1.0
    hit = -1
    for a in range(nf):
        d = step[a] - ys * y[F[a]]
        step[a] = d
        ta = t_max
        if d > 0.0:
            ta = (C[F[a]] - alpha[F[a]]) / d
        elif d < 0.0:
            ta = -alpha[F[a]] / d
        if ta < t_max:
            t_max = ta
            hit = a
    # the decrease of the dual: −t(gᵀΔ) − ... computed as gᵀΔ + t/2 ΔᵀQΔ < 0
    gd = 0.0
    for a in range(nf):
        gd += G[F[a]] * step[a]
    if not gd < 0.0:
        return False
    for a in range(nf):
        v_ = F[a]
        old = alpha[v_]
        new = old + t_max * step[a]
        if a == hit:
            new = C[v_] if step[a] > 0.0 else 0.0
        new = min(max(new, 0.0), C[v_])
        da = (new - old) * y[v_]
        alpha[v_] = new
        if da != 0.0:
            row = K[index[v_]]
            for t in range(m):
                G[t] += y[t] * da * row[index[t]]
            if new >= C[v_]:
                cy = C[v_] * y[v_]
                for c in range(G_bar.shape[0]):
                    G_bar[c] += cy * row[c]
    return True


@njit(cache=True, nogil=True, inline="always")
def _chol_solve(L, b):
    n = b.shape[0]
    for i in range(n):
        s = b[i]
        for p in range(i):
            s -= L[i, p] * b[p]
        b[i] = s / L[i, i]
    for i in range(n - 1, -1, -1):
        s = b[i]
        for p in range(i + 1, n):
            s -= L[p, i] * b[p]
        b[i] = s / L[i, i]


@njit(cache=True, nogil=True)
def gram_run(K, y, p, C, index, tol, gap_tol, wss2, shrinking, max_iter, stall_window, kn,
             polish):
    """SMO from α = 0 to ``tol`` (and ``gap_tol`` when > 0) on the whole matrix K;
    with ``polish`` and tol < 1e-3, SMO to 1e-3, one Newton step on the free set
    (:func:`newton_free_step`), then SMO on to ``tol`` (the same stopping rule).

    Returns (α, ∇, out) in the variables' order; ``out`` holds the code, the
    iterations, m − M, the relative duality gap, b and the number of Newton steps
    (see ``_O_*``).
    """
    m = y.shape[0]
    kd, cc = _arrays(K, m)
    all_cols = kd.all_cols
    alpha = np.zeros(m)
    G = np.empty(m)
    G_bar = np.zeros(K.shape[0])
    y = y.copy()
    p = p.copy()
    C = C.copy()
    index = index.copy()
    QD = np.empty(m)
    for t in range(m):
        QD[t] = K[index[t], index[t]]
    perm = np.arange(m)
    st = _loop.start_state(m, kn.unshrink_start)
    fout = np.array([np.inf, np.inf])
    _loop.init_gradient(alpha, G, G_bar, y, p, C, index, st, kd, cc, all_cols)
    gmax = 1.0
    for t in range(m):
        gmax = max(gmax, abs(G[t]))
    floor = kn.tol_floor * gmax
    phase = max(tol, kn.polish_tol) if polish else tol
    rel = np.nan
    n_newton = 0
    while True:
        code = _loop.smo_run(alpha, G, G_bar, y, p, C, QD, index, perm, st, kd, cc, all_cols,
                          phase, wss2, shrinking, max_iter, st[_st.S_ITER] + max_iter,
                          kn.alpha_cap, stall_window, fout, None, np.int64(_BIG))
        _shrink.unshrink(alpha, G, G_bar, y, p, C, QD, index, perm, st, kd, cc, all_cols)
        if code == _st.R_OPTIMAL and phase > tol:        # at the polish tolerance
            if newton_free_step(K, alpha, G, G_bar, y, C, index, kn.newton_max_free,
                                kn.damping):
                n_newton += 1
                # every gradient exact, the progress test from here (as solve_smo)
                _loop.after_polish(st, fout, kn.unshrink_start)
            phase = tol
            continue
        rel = _loop.relative_gap(alpha, G, y, p, C, _loop.calculate_b(alpha, G, y, C))
        if code != _st.R_OPTIMAL or gap_tol <= 0.0 or rel <= gap_tol:
            break
        if phase <= floor:
            code = _st.R_STALLED
            break
        # as solve_smo: go on at a tighter m − M, by the factor the gap asks for
        phase = _loop.tighter_phase(phase, floor, fout[0], gap_tol, rel, kn.shrink_lo,
                                    kn.shrink_hi)
        st[_st.S_UNSHRINK] = kn.unshrink_start
    out = np.array([float(code), float(st[_st.S_ITER]), fout[0], rel,
                    _loop.calculate_b(alpha, G, y, C), float(n_newton)])
    return _unpermute(alpha, perm), _unpermute(G, perm), out


@njit(cache=True, nogil=True)
def block_pair_matrix(kd, Kii, Kjj, i0, j0):
    """The kernel matrix [[K_ii, K_ij], [K_ji, K_jj]] of two row ranges of the data of
    ``kd`` (rows i0 … i0 + len(K_ii), then j0 … j0 + len(K_jj)), from their diagonal
    blocks: K_ji by one product of the two ranges (BLAS) turned into kernel values by
    the compiled transform of SMO's rows, and K_ij its mirror (exactly symmetric)."""
    ni = Kii.shape[0]
    nj = Kjj.shape[0]
    m = ni + nj
    B = np.empty((m, m))
    Kji = np.dot(kd.X[j0:j0 + nj], kd.X[i0:i0 + ni].T)
    cols = np.arange(i0, i0 + ni)
    sqc = kd.sq[i0:i0 + ni]
    kbuf = np.empty(ni, dtype=np.int64)
    if kd.kind != _rows.K_LINEAR:
        for r in range(nj):
            _rows.kernel_values(j0 + r, Kji[r], np.int64(0), ni, sqc, cols, np.bool_(False),
                                kd, kbuf)
    for r in range(ni):
        B[r, :ni] = Kii[r]
        for c in range(nj):
            B[r, ni + c] = Kji[c, r]
    for r in range(nj):
        B[ni + r, :ni] = Kji[r]
        B[ni + r, ni:] = Kjj[r]
    return B


@njit(cache=True, nogil=True)
def block_pair_run(kd, Kii, Kjj, i0, j0, y, p, C, tol, gap_tol, wss2, shrinking, max_iter,
                   stall_window, kn, polish):
    """:func:`block_pair_matrix` then :func:`gram_run` on it, in one call (no GIL):
    (K, α, ∇, out)."""
    K = block_pair_matrix(kd, Kii, Kjj, i0, j0)
    alpha, G, out = gram_run(K, y, p, C, np.arange(K.shape[0]), tol, gap_tol, wss2,
                             shrinking, max_iter, stall_window, kn, polish)
    return K, alpha, G, out


@njit(cache=True, nogil=True)
def block_pairs_run(kd, diag, diag_start, class_start, pair_i, pair_j, offsets, y, p, C, tol,
                    gap_tol, wss2, shrinking, max_iter, stall_window, kn, polish, cert_tol,
                    tau, sv_threshold, lo, hi, alpha_out, grad_out, out, decision, xi, num):
    """Pairs ``lo`` … ``hi − 1`` of many problems on two class ranges each, in one call
    (no GIL): for pair q, the kernel matrix of classes ``pair_i[q]`` and ``pair_j[q]``
    (:func:`block_pair_matrix` from their diagonal blocks), SMO on it (:func:`gram_run`,
    the very call of :func:`block_pair_run`) and the certificate's numbers of its answer
    (:func:`margin_opt.kkt.dual_qp_reading`) while the matrix is at hand.

    Parameters
    ----------
    kd : KernelArrays
        Of the dense data grouped by class.
    diag : ndarray of shape (Σ n_c²,)
        The classes' diagonal blocks K_cc, flattened one after the other, from
        ``diag_start[c]``.
    diag_start : ndarray of int of shape (n_classes,)
    class_start : ndarray of int of shape (n_classes + 1,)
        The rows of class c are ``class_start[c]`` … ``class_start[c + 1] − 1``.
    pair_i, pair_j : ndarray of int of shape (n_pairs,)
    offsets : ndarray of int of shape (n_pairs + 1,)
        Pair q's variables are ``offsets[q]`` … ``offsets[q + 1] − 1`` of the
        per-variable arrays (class ``pair_i[q]``'s rows, then ``pair_j[q]``'s).
    y, p, C : ndarray of shape (offsets[-1],)
    tol, gap_tol, wss2, shrinking, kn, polish
        As :func:`gram_run`.
    max_iter, stall_window : ndarray of int of shape (n_pairs,)
    cert_tol, tau, sv_threshold : float
        As :func:`margin_opt.kkt.dual_qp_reading`'s ``tol``, ``tau``, ``sv_threshold``.
    lo, hi : int
    alpha_out, grad_out, decision, xi : ndarray of shape (offsets[-1],)
        Written: α, ∇, f (with b) and ξ of each pair, in its variables' order.
    out : ndarray of shape (n_pairs, 6)
        Written: :func:`gram_run`'s ``out`` of each pair.
    num : ndarray of shape (n_pairs, len(margin_opt.kkt.READING))
        Written.
    """
    for q in range(lo, hi):
        ci = pair_i[q]
        cj = pair_j[q]
        ni = class_start[ci + 1] - class_start[ci]
        nj = class_start[cj + 1] - class_start[cj]
        Kii = diag[diag_start[ci]:diag_start[ci] + ni * ni].reshape((ni, ni))
        Kjj = diag[diag_start[cj]:diag_start[cj] + nj * nj].reshape((nj, nj))
        o = offsets[q]
        e = offsets[q + 1]
        K = block_pair_matrix(kd, Kii, Kjj, class_start[ci], class_start[cj])
        alpha, G, res = gram_run(K, y[o:e], p[o:e], C[o:e], np.arange(e - o), tol, gap_tol,
                                 wss2, shrinking, max_iter[q], stall_window[q], kn, polish)
        alpha_out[o:e] = alpha
        grad_out[o:e] = G
        out[q] = res
        dual_qp_reading(K, y[o:e], p[o:e], C[o:e], alpha, res[_O_B], cert_tol, tau,
                        sv_threshold, decision[o:e], xi[o:e], num[q])


def pair_settings(sizes, *, tol=1e-3, gap_tol=None, polish=True, shrinking=True,
                  wss="second-order", max_iter=None, options=None, **ignored) -> dict:
    """The arguments of :func:`block_pairs_run` for problems of ``sizes`` variables
    under :func:`solve_smo_gram`'s options, checked as it checks them.

    Returns
    -------
    settings : dict
        ``tol``, ``gap_tol``, ``wss2``, ``shrinking``, ``max_iter`` and ``stall_window``
        (ndarrays of int, one per problem), ``kn``, ``polish``, and ``opts`` (the
        :class:`~.options.SMOOptions`).

    Raises
    ------
    ValueError
        As :func:`solve_smo_gram`: a bad ``tol``, ``gap_tol``, ``wss`` or ``max_iter``.
    """
    opts = resolve(options)
    sizes = np.asarray(sizes, dtype=np.int64)
    largest = int(sizes.max(initial=1))
    limit = _smo._check_options(tol, 1.0, wss, max_iter, 1, largest, shrinking)
    # the default limit grows with the size, max(10⁷, 100 m): each problem its own
    limits = np.full(sizes.size, limit, dtype=np.int64) if max_iter is not None else \
        np.maximum(_smo._DEFAULT_MAX_ITER, 100 * sizes)
    if gap_tol is not None and not (isinstance(gap_tol, (int, float, np.number))
                                    and np.isfinite(gap_tol) and gap_tol > 0):
        raise ValueError(f"gap_tol must be a positive finite number or None, got {gap_tol!r}.")
    return {"tol": float(tol), "gap_tol": -1.0 if gap_tol is None else float(gap_tol),
            "wss2": wss == "second-order", "shrinking": bool(shrinking), "max_iter": limits,
            "stall_window": np.maximum(int(opts.stall_window(0)), 10 * sizes),  # max(., 10 m)
            "kn": knobs(opts), "polish": bool(polish), "opts": opts}


def pair_result(alpha, G, out, p, settings, q, tol, gap_tol, seconds):
    """Problem q's OptimizeResult (as :func:`solve_smo_gram`'s) from the arrays of
    :func:`block_pairs_run`; ``seconds``: its share of the batch's time."""
    code, nit, gap, rel = int(out[_O_CODE]), int(out[_O_NIT]), out[_O_GAP], out[_O_REL]
    max_iter = int(settings["max_iter"][q])
    status, msg = run_status(code, False, nit, gap, rel, tol, gap_tol, max_iter,
                             settings["opts"].alpha_cap)
    return OptimizeResult(
        x=alpha, b=float(out[_O_B]), grad=G, fun=float(0.5 * alpha @ (G + p)), nit=nit,
        status=status, success=status == "optimal", message=msg, gap=float(gap),
        duality_gap=float(rel), n_polish=int(out[_O_NEWTON]),
        cache={"full_matrix": True, "n_slots": int(alpha.size)},
        timings={"setup": 0.0, "solve": seconds, "total": seconds})


def _options(qp, tol, gap_tol, wss, max_iter, options):
    """solve_smo's checks of the QP and the options; (arrays and options, max_iter, the
    :class:`~.options.SMOOptions`)."""
    opts = resolve(options)
    if not qp.equality or qp.delta != 0.0:
        raise ValueError("SMO on a given kernel matrix needs the equality yᵀα = 0 (an "
                         "intercept); use solve_smo.")
    y, p, C, _ = _smo._check_qp(qp)
    max_iter = _smo._check_options(tol, 1.0, wss, max_iter, 1, y.shape[0])
    if gap_tol is not None and not (isinstance(gap_tol, (int, float, np.number))
                                    and np.isfinite(gap_tol) and gap_tol > 0):
        raise ValueError(f"gap_tol must be a positive finite number or None, got {gap_tol!r}.")
    return (y, p, C, float(tol), -1.0 if gap_tol is None else float(gap_tol),
            wss == "second-order"), max_iter, opts


def solve_smo_gram(qp, *, tol=1e-3, gap_tol=None, polish=True, shrinking=True,
                   wss="second-order", max_iter=None, options=None,
                   **ignored):
    """Solve a :class:`~margin_opt.standard_forms.DualQP` whose kernel matrix is given.

    Parameters
    ----------
    qp : DualQP
        With ``qp.gram`` of shape (n_data, n_data) (float64; only read) and the
        equality yᵀα = 0 (an intercept).
    tol : float, default=1e-3
        Stop when m(α) − M(α) ≤ tol (LIBSVM's rule).
    gap_tol : float, optional
        Also require the relative duality gap ``|P − D| / max(|P|, |D|)`` ≤ gap_tol
        (see :func:`margin_opt.solvers.smo.solve_smo`).
    polish : bool, default=True
        For ``tol`` below 1e-3: SMO to 1e-3, one compiled Newton step on the free set
        (:func:`newton_free_step`, at most ``options.newton_max_free`` free variables),
        then SMO on to ``tol`` by the same stopping rule.  False: SMO all the way (the
        very iterates of ``solve_smo(polish=False)``).
    shrinking : bool, default=True
    wss : {"second-order", "first-order"}, default="second-order"
    max_iter : int, optional
        Iteration limit (None: ``max(10**7, 100 m)``).
    options : SMOOptions, optional
        Tuning knobs (:class:`~margin_opt.solvers.smo.options.SMOOptions`: those of the
        compiled run, e.g. ``newton_max_free``); None: the defaults.
    **ignored
        Options of :func:`~margin_opt.solvers.smo.solve_smo` that do not apply here
        (``cache_size``).

    Returns
    -------
    result : scipy.optimize.OptimizeResult
        As :func:`~margin_opt.solvers.smo.solve_smo`: ``x`` (α, ndarray of shape (m,)),
        ``b``, ``grad``, ``fun``, ``nit``, ``status``, ``success``, ``message``, ``gap``,
        ``duality_gap``, ``n_polish`` (Newton steps taken), ``cache`` and ``timings``
        (seconds).
        A ``ConvergenceWarning`` when it stops short.

    Raises
    ------
    ValueError
        No kernel matrix, or no equality yᵀα = 0 (use ``solve_smo``).
    """
    t0 = time.perf_counter()
    if qp.gram is None:
        raise ValueError("solve_smo_gram needs the kernel matrix (qp.gram); use solve_smo.")
    args, max_iter, opts = _options(qp, tol, gap_tol, wss, max_iter, options)
    K = np.require(qp.gram, np.float64, ["C"])
    index = np.ascontiguousarray(qp.data_index, dtype=np.int64)
    if K.ndim != 2 or K.shape[0] != K.shape[1]:
        raise ValueError(f"the kernel matrix must be square, got shape {K.shape}.")
    if index.min() < 0 or index.max() >= K.shape[0]:
        raise ValueError(f"qp.index must hold rows of the kernel matrix, in [0, {K.shape[0]}).")
    t1 = time.perf_counter()
    y, p, C, tol_, gtol, wss2 = args
    alpha, G, out = gram_run(K, y, p, C, index, tol_, gtol, wss2, bool(shrinking), max_iter,
                             opts.stall_window(y.shape[0]), knobs(opts), bool(polish))
    return _result(alpha, G, out, p, tol, gap_tol, max_iter, K.shape[0], t0, t1, opts)


def solve_block_pair(kd, Kii, Kjj, i0, j0, qp, *, tol=1e-3, gap_tol=None, polish=True,
                     shrinking=True, wss="second-order", max_iter=None, options=None,
                     **ignored):
    """The kernel matrix of two row ranges (:func:`block_pair_matrix`) and SMO on it
    (:func:`solve_smo_gram`), in one compiled call that releases the GIL.

    Parameters
    ----------
    kd : KernelArrays
        Of the dense data (:func:`~margin_opt.solvers.smo.rows.named_kernel_arrays`).
    Kii, Kjj : ndarray of shape (ni, ni) and (nj, nj)
        The kernel matrices of rows i0 … i0 + ni − 1 and j0 … j0 + nj − 1.
    i0, j0 : int
    qp : DualQP
        The problem on those rows (first range, then second): its ``y``, ``p`` and
        ``upper`` are used (its ``gram`` is not needed).
    tol, gap_tol, polish, shrinking, wss, max_iter, options, **ignored
        As :func:`solve_smo_gram`.

    Returns
    -------
    K : ndarray of shape (ni + nj, ni + nj)
    result : scipy.optimize.OptimizeResult
        As :func:`solve_smo_gram`.
    """
    t0 = time.perf_counter()
    args, max_iter, opts = _options(qp, tol, gap_tol, wss, max_iter, options)
    y, p, C, tol_, gtol, wss2 = args
    t1 = time.perf_counter()
    K, alpha, G, out = block_pair_run(kd, Kii, Kjj, int(i0), int(j0), y, p, C, tol_, gtol,
                                      wss2, bool(shrinking), max_iter,
                                      opts.stall_window(y.shape[0]), knobs(opts),
                                      bool(polish))
    return K, _result(alpha, G, out, p, tol, gap_tol, max_iter, K.shape[0], t0, t1, opts)


def _result(alpha, G, out, p, tol, gap_tol, max_iter, n_data, t0, t1, opts):
    t2 = time.perf_counter()
    code, nit, gap, rel = int(out[_O_CODE]), int(out[_O_NIT]), out[_O_GAP], out[_O_REL]
    status, msg = run_status(code, False, nit, gap, rel, tol, gap_tol, max_iter,
                             opts.alpha_cap)
    return OptimizeResult(
        x=alpha, b=float(out[_O_B]), grad=G, fun=float(0.5 * alpha @ (G + p)), nit=nit,
        status=status, success=status == "optimal", message=msg, gap=float(gap),
        duality_gap=float(rel), n_polish=int(out[_O_NEWTON]),
        cache={"full_matrix": True, "n_slots": int(n_data)},
        timings={"setup": t1 - t0, "solve": t2 - t1, "total": time.perf_counter() - t0})
