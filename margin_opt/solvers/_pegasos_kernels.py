"""Numba hot loops of Pegasos: one epoch of mini-batch stochastic subgradient steps.

Three storage layouts share one update rule (see :func:`margin_opt.solvers.subgradient.pegasos`):
dense rows, CSR rows (``indptr``/``indices``/``data``) and a precomputed Gram matrix
(kernelized Pegasos, coefficients per training point).  Each function advances the
iterate in place over the sample indices ``idx`` (drawn with replacement by the
caller, so results are reproducible from a NumPy ``random_state``) and returns the
new step counter ``t``.

With an unregularized intercept the caller centers the features (``x − μ``: an
exact reparametrization, ``b = b̃ − wᵀμ``), which removes the ill-conditioning
between w and b that otherwise stalls the intercept.

Scalars that change (the intercept, its average) travel in ``state``:
``state = [b, b_avg, sq_norm]`` where ``sq_norm`` is the kernel methods' ‖w‖².

Losses: the numba code and parameter of a :class:`~margin_opt.losses.Loss`
(``loss_code``, ``loss_param``: the hinge ``max(0, θ − y f)`` or the ε-insensitive
``max(0, |y − f| − ε)``).  At a kink the zero subgradient is taken.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..losses import loss_derivative, loss_value


@njit(cache=True)
def _avg_rate(t, gamma):
    """Weight of the newest iterate in the polynomial-decay average (γ = 0: uniform)."""
    return (gamma + 1.0) / (t + gamma)


@njit(cache=True)
def _shrink(w, b, t, reg_b):
    """Step t's shrinkage w ← (1 − 1/t) w (and b when regularized); returns the new b."""
    shrink = 1.0 - 1.0 / t
    for m in range(w.shape[0]):
        w[m] *= shrink
    if reg_b:
        b *= shrink
    return b


@njit(cache=True)
def _project_average(w, w_avg, state, b, t, radius, reg_b, averaging, gamma, sq):
    """Project (w[, b]) onto the ball of ``radius`` (0: none), store b, update the average.

    ``sq`` is ‖w‖² when the caller knows it (kernelized), −1 to compute it here;
    returns ‖w‖² after the projection (−1 if never computed).
    """
    d = w.shape[0]
    if radius > 0.0:
        if sq < 0.0:
            sq = 0.0
            for m in range(d):
                sq += w[m] * w[m]
        tot = sq + (b * b if reg_b else 0.0)
        if tot > radius * radius:
            s = radius / np.sqrt(tot)
            for m in range(d):
                w[m] *= s
            sq *= s * s
            if reg_b:
                b *= s
    state[0] = b
    if averaging:
        rho = _avg_rate(t, gamma)
        for m in range(d):
            w_avg[m] += rho * (w[m] - w_avg[m])
        state[1] += rho * (b - state[1])
    return sq


@njit(cache=True)
def pegasos_epoch_dense(X, y, sw, idx, w, w_avg, state, t, lam, batch_size, radius,
                        fit_intercept, reg_b, averaging, gamma, loss_code, loss_param, coef):
    """One epoch over dense rows ``X`` (ndarray of shape (n, d)); returns the new ``t``."""
    n_draws = idx.shape[0]
    d = w.shape[0]
    pos = 0
    while pos < n_draws:
        k = min(batch_size, n_draws - pos)
        b = state[0]
        for j in range(k):
            i = idx[pos + j]
            f = b
            for m in range(d):
                f += X[i, m] * w[m]
            coef[j] = sw[i] * loss_derivative(loss_code, loss_param, y[i], f) / k
        t += 1
        eta = 1.0 / (lam * t)
        b = _shrink(w, b, t, reg_b)
        for j in range(k):
            c = coef[j]
            if c != 0.0:
                i = idx[pos + j]
                for m in range(d):
                    w[m] -= eta * c * X[i, m]
                if fit_intercept:
                    b -= eta * c
        _project_average(w, w_avg, state, b, t, radius, reg_b, averaging, gamma, -1.0)
        pos += k
    return t


@njit(cache=True)
def pegasos_epoch_csr(indptr, indices, data, mu, y, sw, idx, w, w_avg, state, t, lam, batch_size,
                      radius, fit_intercept, reg_b, averaging, gamma, loss_code, loss_param, coef):
    """One epoch over CSR rows (``indptr``, ``indices``, ``data``); returns the new ``t``.

    ``mu`` (ndarray of shape (d,), or of shape (0,) for none) centers the rows
    implicitly: the model is ``f = wᵀ(x − μ) + b`` without densifying X.
    """
    n_draws = idx.shape[0]
    d = w.shape[0]
    center = mu.shape[0] == d
    pos = 0
    while pos < n_draws:
        k = min(batch_size, n_draws - pos)
        b = state[0]
        wmu = 0.0
        if center:
            for m in range(d):
                wmu += w[m] * mu[m]
        for j in range(k):
            i = idx[pos + j]
            f = b - wmu
            for p in range(indptr[i], indptr[i + 1]):
                f += data[p] * w[indices[p]]
            coef[j] = sw[i] * loss_derivative(loss_code, loss_param, y[i], f) / k
        t += 1
        eta = 1.0 / (lam * t)
        b = _shrink(w, b, t, reg_b)
        csum = 0.0
        for j in range(k):
            c = coef[j]
            if c != 0.0:
                i = idx[pos + j]
                for p in range(indptr[i], indptr[i + 1]):
                    w[indices[p]] -= eta * c * data[p]
                if fit_intercept:
                    b -= eta * c
                csum += c
        if center and csum != 0.0:
            for m in range(d):
                w[m] += eta * csum * mu[m]
        _project_average(w, w_avg, state, b, t, radius, reg_b, averaging, gamma, -1.0)
        pos += k
    return t


@njit(cache=True)
def pegasos_epoch_gram(K, y, sw, idx, beta, beta_avg, state, t, lam, batch_size, radius,
                       fit_intercept, reg_b, averaging, gamma, loss_code, loss_param, coef):
    """One epoch of kernelized Pegasos on a Gram matrix ``K`` (ndarray of shape (n, n)).

    The iterate is ``w = Σⱼ βⱼ φ(xⱼ)``, so ``f(xᵢ) = (Kβ)ᵢ + b``; ``state[2]`` carries
    ‖w‖² = βᵀKβ, updated in O(batch) per step.  Returns the new ``t``.
    """
    n_draws = idx.shape[0]
    n = beta.shape[0]
    pos = 0
    fk = np.empty(coef.shape[0])
    while pos < n_draws:
        k = min(batch_size, n_draws - pos)
        b = state[0]
        for j in range(k):
            i = idx[pos + j]
            f = 0.0
            for m in range(n):
                f += K[i, m] * beta[m]
            fk[j] = f
            coef[j] = sw[i] * loss_derivative(loss_code, loss_param, y[i], f + b) / k
        t += 1
        eta = 1.0 / (lam * t)
        shrink = 1.0 - 1.0 / t
        # ‖shrink·w − η Σ cⱼ φⱼ‖² = shrink²‖w‖² − 2 shrink η Σ cⱼ fⱼ + η² Σⱼₗ cⱼcₗ K[iⱼ, iₗ]
        sq = shrink * shrink * state[2]
        cross = 0.0
        quad = 0.0
        for j in range(k):
            cj = coef[j]
            if cj != 0.0:
                ij = idx[pos + j]
                cross += cj * fk[j]
                for l in range(k):
                    if coef[l] != 0.0:
                        quad += cj * coef[l] * K[ij, idx[pos + l]]
        sq += -2.0 * shrink * eta * cross + eta * eta * quad
        if sq < 0.0:
            sq = 0.0
        for m in range(n):
            beta[m] *= shrink
        if reg_b:
            b *= shrink
        for j in range(k):
            c = coef[j]
            if c != 0.0:
                beta[idx[pos + j]] -= eta * c
                if fit_intercept:
                    b -= eta * c
        state[2] = _project_average(beta, beta_avg, state, b, t, radius, reg_b, averaging, gamma,
                                    sq)
        pos += k
    return t


@njit(cache=True)
def weighted_loss_dense(X, mu, y, sw, w, b, loss_code, loss_param):
    """Σᵢ sᵢ ℓ(yᵢ, wᵀ(xᵢ − μ) + b) over dense rows (``mu`` of shape (0,): no centering).

    Single-threaded on purpose: evaluating J once per epoch must not contend for
    cores with BLAS threads.
    """
    n, d = X.shape
    off = b
    if mu.shape[0] == d:
        for m in range(d):
            off -= w[m] * mu[m]
    total = 0.0
    for i in range(n):
        f = off
        for m in range(d):
            f += X[i, m] * w[m]
        total += sw[i] * loss_value(loss_code, loss_param, y[i], f)
    return total


@njit(cache=True)
def weighted_loss_csr(indptr, indices, data, mu, y, sw, w, b, loss_code, loss_param):
    """Σᵢ sᵢ ℓ(yᵢ, wᵀ(xᵢ − μ) + b) over CSR rows (``mu`` of shape (0,): no centering)."""
    n = y.shape[0]
    d = w.shape[0]
    off = b
    if mu.shape[0] == d:
        for m in range(d):
            off -= w[m] * mu[m]
    total = 0.0
    for i in range(n):
        f = off
        for p in range(indptr[i], indptr[i + 1]):
            f += data[p] * w[indices[p]]
        total += sw[i] * loss_value(loss_code, loss_param, y[i], f)
    return total
