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

import numpy as np
from numba import njit

__all__ = ["row_dot", "row_axpy", "row_norms", "weights", "epoch_margin", "epoch_tube",
           "decision", "decision_rows", "gram_rows", "STATE_SIZE"]

#: float state of a run: [PG_max_old, PG_min_old, lam, rho, sum_y_alpha]
STATE_SIZE = 5


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
        if coef[t] != 0.0:
            row_axpy(dense, data, indices, indptr, d, rows[t], coef[t], w)
    return w


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
def epoch_margin(dense, data, indices, indptr, d, rows, y, p, upper, diag, qd, alpha, w,
                 order, active_size, state, rng, equality, delta):
    """One epoch of liblinear's dual CD over standard-form variables.

    ``order[:active_size]`` are the active variables (shuffled here, shrunk ones
    moved past the end: liblinear's rule with the previous epoch's bounds
    ``state[0:2]``).  ``state[2]`` = λ, ``state[3]`` = ρ, ``state[4]`` = yᵀα
    (kept up to date).  Returns (new active size, PG_max, PG_min, m, M) where PG
    are the projected gradients of the augmented problem (intercept b = λ + ρ(yᵀα −
    Δ) included) and m, M LIBSVM's max/min of −yₜ∇ₜ over I_up / I_low with ∇ the
    gradient without b.
    """
    pg_max_old = state[0]
    pg_min_old = state[1]
    lam = state[2]
    rho = state[3]
    sya = state[4]
    _shuffle(order, active_size, rng)
    pg_max = -np.inf
    pg_min = np.inf
    m_up = -np.inf
    m_low = np.inf
    s = 0
    while s < active_size:
        t = order[s]
        r = rows[t]
        u = upper[t]
        yt = y[t]
        grad0 = yt * row_dot(dense, data, indices, indptr, d, r, w) + p[t] + diag[t] * alpha[t]
        b = lam + rho * (sya - delta) if equality else 0.0
        g = grad0 + yt * b
        a = alpha[t]
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
        if u > 0.0:
            v = -yt * grad0
            if (a < u and yt > 0) or (a > 0 and yt < 0):
                if v > m_up:
                    m_up = v
            if (a < u and yt < 0) or (a > 0 and yt > 0):
                if v < m_low:
                    m_low = v
        if pg > pg_max:
            pg_max = pg
        if pg < pg_min:
            pg_min = pg
        if abs(pg) > 1e-12:
            h = qd[t] + diag[t] + (rho if equality else 0.0)
            new = a - g / h
            if new < 0.0:
                new = 0.0
            elif new > u:
                new = u
            step = new - a
            if step != 0.0:
                alpha[t] = new
                sya += yt * step
                row_axpy(dense, data, indices, indptr, d, r, yt * step, w)
        s += 1
    state[4] = sya
    return active_size, pg_max, pg_min, m_up, m_low


@njit(cache=True, nogil=True)
def epoch_tube(dense, data, indices, indptr, d, z, eps, upper, diag, qd, beta, w, order,
               active_size, state, rng, equality, delta):
    """One epoch of Ho and Lin's dual CD for ε-SVR in β = a − â (one per sample).

    Minimizes ½‖Σβᵢxᵢ‖² + Σ(εᵢ|βᵢ| − zᵢβᵢ + ½Dᵢβᵢ²) over −uᵢ ≤ βᵢ ≤ uᵢ, with the
    intercept's augmented term as in :func:`epoch_margin` (b = λ + ρ(Σβ − Δ)).
    ``state[0]`` is the previous epoch's largest violation (liblinear's Gmax_old).
    Returns (new active size, largest violation, 0, m, M) with m, M LIBSVM's
    quantities of the standard form (a, â) without b.
    """
    g_max_old = state[0]
    lam = state[2]
    rho = state[3]
    sb = state[4]
    _shuffle(order, active_size, rng)
    v_max = 0.0
    m_up = -np.inf
    m_low = np.inf
    s = 0
    while s < active_size:
        i = order[s]
        u = upper[i]
        bt = beta[i]
        f0 = row_dot(dense, data, indices, indptr, d, i, w)
        b = lam + rho * (sb - delta) if equality else 0.0
        g = f0 + b - z[i] + diag[i] * bt
        e = eps[i]
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
        if u > 0.0:
            # the standard form's a (y = +1, ∇ = f0 − z + ε + Dβ) and â (y = −1,
            # ∇ = −f0 + z + ε − Dβ): −y∇ of each, without b
            va = -(f0 - z[i] + e + diag[i] * max(bt, 0.0))
            vb = -f0 + z[i] + e + diag[i] * max(-bt, 0.0)
            a_pos = bt > 0.0
            a_neg = bt < 0.0
            if bt < u:                  # a below its bound: I_up; â above 0: I_up
                m_up = max(m_up, va)
            if a_pos:                   # a above 0: I_low
                m_low = min(m_low, va)
            if a_neg:                   # â > 0: I_up
                m_up = max(m_up, vb)
            if bt > -u:                 # â below its bound: I_low
                m_low = min(m_low, vb)
        if viol > v_max:
            v_max = viol
        h = qd[i] + diag[i] + (rho if equality else 0.0)
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
                row_axpy(dense, data, indices, indptr, d, i, step, w)
        s += 1
    state[4] = sb
    return active_size, v_max, 0.0, m_up, m_low


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
def decision_rows(dense, data, indices, indptr, d, rows, w):
    """x_{rows[k]}·w, ndarray of shape (len(rows),)."""
    out = np.empty(rows.shape[0])
    for k in range(rows.shape[0]):
        out[k] = row_dot(dense, data, indices, indptr, d, rows[k], w)
    return out
