"""The perceptron rule on the primal ERM with the perceptron criterion, primal and kernel form.

The perceptron (Rosenblatt 1958) classifies by ``sgn(w·x + w₀)`` and learns by
looping through the examples while any is misclassified, correcting on each
misclassified one (``yᵢfᵢ ≤ θ``, θ = 0)::

    w ← w + γ sᵢ yᵢ xᵢ,    w₀ ← w₀ + γ sᵢ yᵢ,    αᵢ ← αᵢ + γ sᵢ

(γ = ``eta0``, sᵢ the sample weight, 1 in the lecture).  It is stochastic
subgradient descent with a constant step on the perceptron criterion
``J(w, w₀) = Σᵢ sᵢ max(0, θ − yᵢ(w·xᵢ + w₀))`` — the
:class:`~margin_opt.standard_forms.PrimalERM` with λ = 0 and the loss
:class:`~margin_opt.losses.Hinge` ``(θ)`` — except that a point exactly on the
boundary (yᵢfᵢ = θ) is corrected too (``sgn(0)`` classifies nothing; Novikoff's
theorem needs it, and from w = 0 every point starts there).

The dual representation ``w = Σ αᵢyᵢxᵢ``, ``w₀ = Σ αᵢyᵢ`` (αᵢ the summed step sizes
of the updates on example i, 0 for examples never used) is kept alongside, so
the kernel form — ``f(x) = Σⱼ αⱼyⱼK(xⱼ, x) + w₀`` on a Gram matrix — runs the same
rule with the same α.

Non-separable data: the perceptron never stops, but its weights stay bounded
(Block & Levin 1970) and often return exactly to an earlier state.  The weights
after each epoch are compared with a saved state (Brent's cycle detection: the
saved state moves at epochs 1, 2, 4, 8, ...); a return with updates in between
means ``Σ Δαᵢyᵢ[1, xᵢ] = 0`` for the update counts Δα ≥ 0 made in between — a
Farkas certificate that no hyperplane separates the data (the problem layer
normalizes and verifies it, :mod:`margin_opt.problems.separability`).

References
----------
F. Rosenblatt, "The perceptron: a probabilistic model for information storage and
organization in the brain", Psychological Review 65(6), 1958.
A. B. J. Novikoff, "On convergence proofs on perceptrons", Symposium on the
Mathematical Theory of Automata, 1962 (the bound on the number of corrections).
H. D. Block and S. A. Levin, "On the boundedness of an iterative procedure for
solving a system of linear inequalities", Proc. AMS 26, 1970 (cycling).
M. A. Aizerman, E. M. Braverman and L. I. Rozonoer, "Theoretical foundations of the
potential function method in pattern recognition learning", Automation and Remote
Control 25, 1964 (the kernel form).
R. P. Brent, "An improved Monte Carlo factorization algorithm", BIT 20, 1980 (the
cycle detection).
"""

from __future__ import annotations

import warnings

import numpy as np
import scipy.sparse as sp
from scipy.linalg.blas import daxpy as _daxpy
from scipy.optimize import OptimizeResult
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_random_state

from ..losses import Hinge, loss_value
from ..parallel import one_blas_thread
from ..validation import check_positive
from . import _pegasos_kernels as _pk
from .subgradient import _NO_MU, _check_erm, _check_gram, _check_int, _float_inputs

__all__ = ["perceptron", "CYCLE_TOL"]

#: Relative tolerance of the repeated-state test: per coordinate, the drift between
#: the saved and the current weights must be below CYCLE_TOL times the summed
#: magnitude of the updates made in between (exact repeats have drift 0).
CYCLE_TOL = 1e-9


# --------------------------------------------------------------------------- hot loops
#
# An epoch visits the examples in ``order`` by blocks, each in one of two ways, chosen
# by how often the block before corrected:
#
# - "search" (few corrections): the margins of the block's examples are computed at
#   once with the current weights, the first example with yᵢfᵢ ≤ θ is corrected, and
#   the margins of the rest of the block are computed again with the corrected weights
#   (the examples before it were checked with the weights they saw, which had not
#   changed); the block length adapts to the distance between corrections;
# - "scan" (many corrections): the examples are checked one by one, each margin read
#   from the margins at the block's start plus the corrections made since: a
#   correction on example k changes the margin of a later example j by γsₖyₖxₖᵀxⱼ
#   (the block's Gram matrix; one axpy) and w₀ by γsₖyₖ; the weights take the block's
#   corrections at its end.  The kernel form keeps the margins of every point anyway.

#: Block lengths of the search: the first, the smallest and the largest (and at most
#: BLOCK_ELEMENTS values of a gathered block).
BLOCK_START, BLOCK_MIN, BLOCK_MAX, BLOCK_ELEMENTS = 64, 16, 4096, 1 << 19

#: Corrections per example visited above which the next block is scanned one by one.
SCAN_RATE = 1.0 / 16.0

#: A scanned block holds about sqrt(SCAN_WORK / d) examples (its Gram matrix costs
#: d·length², its fixed cost is a few dozen vector operations), 16 to 256.
SCAN_WORK = 250_000

#: Sparse rows with at most this many columns are visited as dense blocks.
DENSE_BLOCK_COLUMNS = 512


def _next_block(length, n_corrections, cap):
    """The length of the next searched block: doubled after a block without
    corrections, else about twice the mean distance between its corrections."""
    return min(cap, max(BLOCK_MIN, (2 * length) // (n_corrections + 1)))


def _block_cap(d):
    return max(BLOCK_MIN, min(BLOCK_MAX, BLOCK_ELEMENTS // max(d, 1)))


def _scan_length(d):
    return max(16, min(256, int(np.sqrt(SCAN_WORK / max(d, 1)))))


def _is_identity(order, n):
    return order.shape[0] == n and (n == 0 or (order[0] == 0 and order[-1] == n - 1
                                               and bool(np.all(np.diff(order) == 1))))


def _visit_labels(y, sw, rows):
    """yᵢ of the examples ``rows``, NaN where sᵢ = 0 (never corrected: NaN·f ≤ θ is False)."""
    return np.where(sw[rows] != 0.0, y[rows], np.nan)


def _search_block(margins, yb, rows, sw, w_update, state, alpha, eta, theta, fit_intercept):
    """Correct the examples of one block in turn, searching for each next correction.

    ``margins(k)`` gives the decision values without w₀ of the block's examples
    ``k, k + 1, …`` at the current weights; ``w_update(k, s)`` adds ``s·xₖ`` to the
    weights.  Returns the positions in the block of the corrections and their steps.
    """
    done, steps = [], []
    k0 = 0
    nb = rows.shape[0]
    while k0 < nb:
        f = margins(k0)
        f += state[0]
        f *= yb[k0:]
        viol = f <= theta
        k = int(viol.argmax())
        if not viol[k]:
            break
        k += k0
        i = rows[k]
        step = eta * sw[i]
        s = step * yb[k]
        w_update(k, s)
        if fit_intercept:
            state[0] += s
            state[1] += step
        alpha[i] += step
        done.append(k)
        steps.append(step)
        k0 = k + 1
    return done, steps


def _scan_block(Xb, yb, rows, sw, w, state, alpha, eta, theta, fit_intercept):
    """Correct the examples of one dense block ``Xb`` in turn, one check each (see the
    notes above); ``w`` takes the corrections at the end.  Returns (positions, steps)."""
    nb = rows.shape[0]
    P = (Xb @ w).tolist()
    Gf = np.ascontiguousarray(Xb @ Xb.T).reshape(-1)
    corr = np.zeros(nb)
    yl, sl, rl = yb.tolist(), sw[rows].tolist(), rows.tolist()
    w0, sb = float(state[0]), float(state[1])
    done, steps, coefs = [], [], []
    for k in range(nb):
        yk = yl[k]
        if yk * (P[k] + corr.item(k) + w0) <= theta:
            step = eta * sl[k]
            s = step * yk
            if k + 1 < nb:                       # corr[k+1:] += s·(XbXbᵀ)[k, k+1:]
                _daxpy(Gf, corr, nb - k - 1, s, k * nb + k + 1, 1, k + 1, 1)
            if fit_intercept:
                w0 += s
                sb += step
            alpha[rl[k]] += step
            done.append(k)
            steps.append(step)
            coefs.append(s)
    state[0], state[1] = w0, sb
    if done:
        w += np.asarray(coefs) @ Xb[done]
    return done, steps


def _dense_epoch(blocks, n_visits, d, y, sw, w, state, alpha, abs_w, eta, theta, fit_intercept):
    """The epoch of dense blocks: ``blocks(pos, end)`` gives (rows, Xb) of the visits
    ``pos … end − 1``; returns the number of corrections."""
    cap, scan_len = _block_cap(d), _scan_length(d)
    length, pos, n_upd, scan = BLOCK_START, 0, 0, False
    while pos < n_visits:
        end = min(n_visits, pos + (scan_len if scan else length))
        rows, Xb = blocks(pos, end)
        yb = _visit_labels(y, sw, rows)
        if scan:
            done, steps = _scan_block(Xb, yb, rows, sw, w, state, alpha, eta, theta,
                                      fit_intercept)
        else:
            def margins(k0, Xb=Xb):
                return Xb[k0:] @ w

            def w_update(k, s, Xb=Xb):
                np.add(w, s * Xb[k], out=w)

            done, steps = _search_block(margins, yb, rows, sw, w_update, state, alpha, eta,
                                        theta, fit_intercept)
        if done:
            abs_w += np.asarray(steps) @ np.abs(Xb[done])
        n_upd += len(done)
        scan = len(done) > SCAN_RATE * (end - pos)
        length = _next_block(end - pos, len(done), cap)
        pos = end
    return n_upd


def _epoch_dense(X, y, sw, order, w, state, alpha, abs_w, eta, theta, fit_intercept):
    """One pass over dense rows in ``order``; returns the number of corrections.

    ``state = [w₀, Σ|steps on w₀|]``; ``abs_w`` accumulates Σ γsᵢ|xᵢⱼ| per feature.
    All of ``w``, ``state``, ``alpha`` and ``abs_w`` are updated in place.
    """
    identity = _is_identity(order, X.shape[0])

    def blocks(pos, end):
        rows = order[pos:end]
        return rows, (X[pos:end] if identity else X[rows])

    return _dense_epoch(blocks, order.shape[0], X.shape[1], y, sw, w, state, alpha, abs_w,
                        eta, theta, fit_intercept)


def _csr_block(indptr, indices, data, rows, contiguous):
    """The CSR arrays (data, indices, pointers) of the rows ``rows``, in their order."""
    if contiguous:
        lo, hi = indptr[rows[0]], indptr[rows[-1] + 1]
        return data[lo:hi], indices[lo:hi], indptr[rows[0]:rows[-1] + 2] - lo
    return _pk.csr_rows(indptr, indices, data, rows)


def _dense_rows(bdata, bindices, bptr, d):
    """The rows of a CSR block as a dense ndarray (duplicate entries summed)."""
    nb = bptr.shape[0] - 1
    row = np.repeat(np.arange(nb), np.diff(bptr))
    flat = np.bincount(row * d + bindices, weights=bdata, minlength=nb * d)
    return flat.reshape(nb, d)


def _epoch_csr(X, y, sw, order, w, state, alpha, abs_w, eta, theta, fit_intercept):
    """One pass over the rows of a CSR matrix X (sorted indices); see
    :func:`_epoch_dense`.

    With at most :data:`DENSE_BLOCK_COLUMNS` columns the blocks are made dense (the
    very arithmetic of :func:`_epoch_dense` on the same rows); with more, the blocks
    are searched, their margins summed over the stored entries.
    """
    indptr, indices, data = X.indptr, X.indices, X.data
    n, d = y.shape[0], w.shape[0]
    identity = _is_identity(order, n)
    if d <= DENSE_BLOCK_COLUMNS:
        def blocks(pos, end):
            rows = order[pos:end]
            return rows, _dense_rows(*_csr_block(indptr, indices, data, rows, identity), d)

        return _dense_epoch(blocks, order.shape[0], d, y, sw, w, state, alpha, abs_w, eta,
                            theta, fit_intercept)
    length, pos, n_upd = BLOCK_START, 0, 0
    while pos < order.shape[0]:
        end = min(order.shape[0], pos + length)
        rows = order[pos:end]
        bdata, bind, bptr = _csr_block(indptr, indices, data, rows, identity)
        brow = np.repeat(np.arange(rows.shape[0]), np.diff(bptr))

        def margins(k0, bdata=bdata, bind=bind, bptr=bptr, brow=brow):
            lo = bptr[k0]
            return np.bincount(brow[lo:] - k0, weights=bdata[lo:] * w[bind[lo:]],
                               minlength=bptr.shape[0] - 1 - k0)

        def w_update(k, s, bdata=bdata, bind=bind, bptr=bptr):
            lo, hi = bptr[k], bptr[k + 1]
            np.add.at(w, bind[lo:hi], s * bdata[lo:hi])

        done, steps = _search_block(margins, _visit_labels(y, sw, rows), rows, sw, w_update,
                                    state, alpha, eta, theta, fit_intercept)
        for k, step in zip(done, steps, strict=True):
            lo, hi = bptr[k], bptr[k + 1]
            np.add.at(abs_w, bind[lo:hi], step * np.abs(bdata[lo:hi]))
        n_upd += len(done)
        length = _next_block(end - pos, len(done), BLOCK_MAX)
        pos = end
    return n_upd


def _epoch_gram(K, y, sw, order, f0, state, alpha, abs_f, eta, theta, fit_intercept):
    """One pass of the kernel form on a Gram matrix ``K`` (C-contiguous ndarray of
    shape (n, n)).

    ``f0 = Σⱼ αⱼyⱼK[:, j]`` (f without w₀) is kept for every training point, so a
    check costs O(1) and a correction O(n); ``abs_f`` accumulates Σ γsᵢ|K[:, i]|.
    """
    n = K.shape[0]
    Kf = K.reshape(-1)
    length, pos, n_upd, scan = BLOCK_START, 0, 0, False
    while pos < order.shape[0]:
        end = min(order.shape[0], pos + (BLOCK_START if scan else length))
        rows = order[pos:end]
        yb = _visit_labels(y, sw, rows)
        if scan:
            yl, sl, rl = yb.tolist(), sw[rows].tolist(), rows.tolist()
            w0, sb = float(state[0]), float(state[1])
            done, steps = [], []
            for k in range(rows.shape[0]):
                i, yk = rl[k], yl[k]
                if yk * (f0.item(i) + w0) <= theta:
                    step = eta * sl[k]
                    s = step * yk
                    _daxpy(Kf, f0, n, s, i * n, 1, 0, 1)        # f0 += s·K[i]
                    if fit_intercept:
                        w0 += s
                        sb += step
                    alpha[i] += step
                    done.append(k)
                    steps.append(step)
            state[0], state[1] = w0, sb
        else:
            def margins(k0, rows=rows):
                return f0[rows[k0:]]

            def w_update(k, s, rows=rows):
                np.add(f0, s * K[rows[k]], out=f0)

            done, steps = _search_block(margins, yb, rows, sw, w_update, state, alpha, eta,
                                        theta, fit_intercept)
        if done:
            abs_f += np.asarray(steps) @ np.abs(K[rows[done]])
        n_upd += len(done)
        scan = len(done) > SCAN_RATE * (end - pos)
        length = _next_block(end - pos, len(done), BLOCK_MAX)
        pos = end
    return n_upd


def _criterion(f0, b, y, sw, loss_code, theta):
    """Σᵢ sᵢ ℓ(yᵢ, f0ᵢ + b) from the decision values without intercept."""
    return float(sw @ loss_value(loss_code, theta, y, f0 + b))


# --------------------------------------------------------------------------- driver


class _Iterate:
    """The perceptron's iterate in one storage layout, and the cycle test on it.

    ``vec`` is w (primal forms) or f0 = Kβ (kernel form), ``abs_vec`` the summed
    magnitudes of the corrections on each of its coordinates, ``state`` = [w₀,
    Σ|steps on w₀|].
    """

    def __init__(self, erm, X, y, sw, kernel_gram):
        X, y, sw = _float_inputs(X, y, sw)
        self.erm, self.X, self.y, self.sw = erm, X, y, sw
        self.kernelized = kernel_gram is not None
        n = erm.n_samples
        if self.kernelized:
            self.K = _check_gram(kernel_gram, n)
            d = n
        else:
            self.K = None
            d = X.shape[1]
        self.vec, self.abs_vec = np.zeros(d), np.zeros(d)
        self.state, self.alpha = np.zeros(2), np.zeros(n)

    def epoch(self, order, eta, theta):
        """One pass over ``order``; returns the number of corrections."""
        args = (self.vec, self.state, self.alpha, self.abs_vec, eta, theta,
                self.erm.fit_intercept)
        if self.kernelized:
            return _epoch_gram(self.K, self.y, self.sw, order, *args)
        if sp.issparse(self.X):
            return _epoch_csr(self.X, self.y, self.sw, order, *args)
        return _epoch_dense(self.X, self.y, self.sw, order, *args)

    def criterion(self):
        """The mean weighted criterion J = (1/n) Σ sᵢ ℓ(yᵢ, fᵢ) (the PrimalERM scale)."""
        loss, X, b = self.erm.loss, self.X, self.state[0]
        args = (self.y, self.sw, self.vec, b, loss.code, loss.param)
        if self.kernelized:
            total = _criterion(self.vec, b, self.y, self.sw, loss.code, loss.param)
        elif sp.issparse(X):
            total = _pk.weighted_loss_csr(X.indptr, X.indices, X.data, _NO_MU, *args)
        else:
            total = _pk.weighted_loss_dense(X, _NO_MU, *args)
        return total / self.y.shape[0]

    def snapshot(self):
        return (self.vec.copy(), self.abs_vec.copy(), self.state.copy(), self.alpha.copy())

    def returned_to(self, snap, tol):
        """True when the iterate equals ``snap`` up to ``tol`` × the corrections since."""
        vec, abs_vec, state, alpha = snap
        if not np.any(self.alpha > alpha):
            return False
        ok = np.all(np.abs(self.vec - vec) <= tol * (self.abs_vec - abs_vec))
        return bool(ok and abs(self.state[0] - state[0]) <= tol * (self.state[1] - state[1]))


def _check_perceptron_erm(erm):
    if not isinstance(erm.loss, Hinge):
        raise ValueError(f"the perceptron needs the perceptron criterion, loss=Hinge(0.0) "
                         f"(Hinge(θ) for a margin θ), got {erm.loss}.")
    if erm.lam != 0:
        raise ValueError(f"the perceptron has no regularizer: pass lam=0.0, got {erm.lam!r} "
                         "(for λ > 0 use pegasos or subgradient_descent).")
    if erm.fit_intercept and erm.regularize_intercept:
        raise ValueError("regularize_intercept applies to λ > 0; the perceptron has none.")


def perceptron(erm, *, eta0=1.0, max_epochs=1000, shuffle=False, random_state=None,
               kernel_gram=None, cycle_tol=CYCLE_TOL, callback=None):
    """Fit a primal ERM with the perceptron criterion by the perceptron rule.

    Epoch after epoch the examples are visited in order (a fresh random order per
    epoch with ``shuffle``) and every example with ``yᵢfᵢ ≤ θ`` *at its visit* is
    corrected: ``w += γsᵢyᵢxᵢ``, ``w₀ += γsᵢyᵢ``, ``αᵢ += γsᵢ``.  The run stops after
    the first epoch without a correction (every example then has yᵢfᵢ > θ).

    Parameters
    ----------
    erm : PrimalERM
        ``lam=0.0`` and ``loss=Hinge(0.0)`` (the perceptron criterion; ``Hinge(θ)``
        corrects while yᵢfᵢ ≤ θ, the perceptron with margin θ); X dense or CSR, labels
        ±1; ``sample_weight`` multiplies the steps (an example of weight 0 is never
        visited); ``fit_intercept`` adds w₀ (the augmented coordinate 1).  X is
        ignored, beyond its number of rows, when ``kernel_gram`` is given.
    eta0 : float, default=1.0
        The step γ > 0.  From w = 0 the corrections made do not depend on it (every
        iterate is γ times that of γ = 1); w, w₀ and α scale with it.
    max_epochs : int, default=1000
        Passes over the data before giving up (status ``"max_iter"``).
    shuffle : bool, default=False
        Visit the examples in a new random order each epoch (``random_state``).
    random_state : int, RandomState instance or None, default=None
        Seeds the order when ``shuffle``.
    kernel_gram : ndarray of shape (n_samples, n_samples), optional
        The kernel (dual) form: f(xᵢ) = Σⱼ αⱼyⱼKᵢⱼ + w₀; the result carries ``beta``
        (= α∘y) instead of ``w``.  A check costs O(1), a correction O(n).
    cycle_tol : float, default=CYCLE_TOL
        Relative tolerance of the repeated-state test (0: exact repeats only).
    callback : callable, optional
        ``callback(epoch, w_or_beta, w0, n_updates)`` after each epoch; True stops the
        run (status ``"stopped"``).  Must not modify its arguments.

    Returns
    -------
    result : scipy.optimize.OptimizeResult
        ``w`` (None when kernelized) or ``beta`` = α∘y, ``b`` (w₀), ``alpha`` ndarray of
        shape (n_samples,) (the dual representation: summed step sizes per example),
        ``n_updates`` (corrections made), ``nit`` (epochs run, the last one without
        corrections when converged), ``status`` (``"optimal"``: converged;
        ``"infeasible"``: the weights returned to an earlier state, so the data is not
        separable and ``cycle`` holds the evidence; ``"max_iter"``; ``"stopped"``),
        ``success``, ``message``, ``cycle`` (None, or a dict with ``alpha_diff``: the
        step sums Δα ≥ 0 between the two equal states, ``epochs``: the two epochs),
        ``history``: ``"J"`` ndarray of shape (nit + 1,), the mean criterion
        (1/n)Σsᵢℓᵢ at the start and after each epoch, ``"updates"`` ndarray of shape
        (nit,), corrections per epoch.

    Raises
    ------
    ValueError
        λ ≠ 0, a loss other than the hinge, eta0 ≤ 0, max_epochs < 1, a bad Gram matrix.
    TypeError
        If ``erm`` is not a PrimalERM.

    Warns
    -----
    ConvergenceWarning
        When the run ends without converging (max_epochs, or a repeated state): the
        data may not be separable.

    References
    ----------
    F. Rosenblatt, Psychological Review 65(6), 1958; A. B. J. Novikoff, 1962 (at most
    ⌈R²‖ŵ‖²/minᵢ(ŵ·yᵢzᵢ)²⌉ corrections from w = 0 on separable data, zᵢ = [1, xᵢ]);
    R. P. Brent, BIT 20, 1980 (cycle detection).
    """
    X, y, sw = _check_erm(erm)
    _check_perceptron_erm(erm)
    eta = check_positive(eta0, "eta0")
    max_epochs = _check_int(max_epochs, "max_epochs")
    cycle_tol = check_positive(cycle_tol, "cycle_tol", allow_zero=True)
    rng = check_random_state(random_state)
    theta = erm.loss.param
    it = _Iterate(erm, X, y, sw, kernel_gram)
    n = erm.n_samples
    order = np.arange(n, dtype=np.int64)

    with one_blas_thread():  # products with X: no BLAS pool left spinning
        hist_J, hist_upd = [it.criterion()], []
        status, cycle = "max_iter", None
        saved, saved_epoch, power, steps = None, 0, 1, 0
        for epoch in range(1, max_epochs + 1):
            if shuffle:
                order = rng.permutation(n).astype(np.int64)
            n_upd = it.epoch(order, eta, theta)
            hist_upd.append(n_upd)
            hist_J.append(it.criterion())
            if n_upd == 0:
                status = "optimal"
                break
            if saved is not None and it.returned_to(saved, cycle_tol):
                status = "infeasible"
                cycle = {"alpha_diff": it.alpha - saved[3], "epochs": (saved_epoch, epoch)}
                break
            steps += 1
            if saved is None or steps == power:  # Brent: move the saved state, double the lag
                saved, saved_epoch, steps = it.snapshot(), epoch, 0
                power *= 2
            if callback is not None and callback(epoch, it.vec, it.state[0], n_upd):
                status = "stopped"
                break
    nit = len(hist_upd)
    n_updates = int(sum(hist_upd))
    if status == "optimal":
        message = (f"converged: no correction in epoch {nit} ({n_updates} corrections in "
                   "all); every example has y f > θ.")
    elif status == "infeasible":
        message = (f"the weights after epoch {cycle['epochs'][1]} equal those after epoch "
                   f"{cycle['epochs'][0]}: the perceptron cycles, so the data is not "
                   "separable (the corrections in between give a Farkas certificate).")
    elif status == "stopped":
        message = f"stopped by the callback after epoch {nit}."
    else:
        message = (f"reached max_epochs={max_epochs} with {hist_upd[-1]} corrections in the "
                   "last epoch: the data may not be separable.")
    if status in ("max_iter", "infeasible"):
        warnings.warn(
            f"perceptron: {message} Decide with margin_opt.separability(X, y) (an LP with a "
            "Farkas certificate), or use a kernel or a soft-margin SVC"
            + (", or raise max_epochs." if status == "max_iter" else "."),
            ConvergenceWarning, stacklevel=2)
    beta = it.alpha * y
    out = OptimizeResult(
        b=float(it.state[0]), alpha=it.alpha, n_updates=n_updates, nit=nit, status=status,
        success=status == "optimal", message=message, cycle=cycle,
        history={"J": np.asarray(hist_J), "updates": np.asarray(hist_upd, dtype=np.int64)})
    if it.kernelized:
        out.update(w=None, beta=beta)
    else:
        out.update(w=it.vec, beta=None)
    return out
