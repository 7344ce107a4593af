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
from numba import njit
from scipy.optimize import OptimizeResult
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_random_state

from ..losses import Hinge, loss_value
from ..validation import check_positive
from . import _pegasos_kernels as _pk
from .subgradient import _NO_MU, _check_erm, _check_gram, _check_int, _compiled_inputs

__all__ = ["perceptron", "CYCLE_TOL"]

#: Relative tolerance of the repeated-state test: per coordinate, the drift between
#: the saved and the current weights must be below CYCLE_TOL times the summed
#: magnitude of the updates made in between (exact repeats have drift 0).
CYCLE_TOL = 1e-9


# --------------------------------------------------------------------------- hot loops


@njit(cache=True)
def _count(state, alpha, i, step, s, fit_intercept):
    """The intercept's part of a correction (w₀ += s) and the dual representation's."""
    if fit_intercept:
        state[0] += s
        state[1] += step
    alpha[i] += step


@njit(cache=True)
def _epoch_dense(X, y, sw, order, w, state, alpha, abs_w, eta, theta, fit_intercept):
    """One pass over dense rows in ``order``; returns the number of corrections.

    ``state = [w₀, Σ|steps on w₀|]``; ``abs_w`` accumulates Σ γsᵢ|xᵢⱼ| per feature.
    """
    d = X.shape[1]
    n_upd = 0
    for k in range(order.shape[0]):
        i = order[k]
        if sw[i] == 0.0:
            continue
        f = state[0]
        for j in range(d):
            f += w[j] * X[i, j]
        if y[i] * f <= theta:
            step = eta * sw[i]
            s = step * y[i]
            for j in range(d):
                w[j] += s * X[i, j]
                abs_w[j] += step * abs(X[i, j])
            _count(state, alpha, i, step, s, fit_intercept)
            n_upd += 1
    return n_upd


@njit(cache=True)
def _epoch_csr(indptr, indices, data, y, sw, order, w, state, alpha, abs_w, eta, theta,
               fit_intercept):
    """One pass over CSR rows (``indptr``, ``indices``, ``data``); see :func:`_epoch_dense`."""
    n_upd = 0
    for k in range(order.shape[0]):
        i = order[k]
        if sw[i] == 0.0:
            continue
        f = state[0]
        for p in range(indptr[i], indptr[i + 1]):
            f += w[indices[p]] * data[p]
        if y[i] * f <= theta:
            step = eta * sw[i]
            s = step * y[i]
            for p in range(indptr[i], indptr[i + 1]):
                w[indices[p]] += s * data[p]
                abs_w[indices[p]] += step * abs(data[p])
            _count(state, alpha, i, step, s, fit_intercept)
            n_upd += 1
    return n_upd


@njit(cache=True)
def _epoch_gram(K, y, sw, order, f0, state, alpha, abs_f, eta, theta, fit_intercept):
    """One pass of the kernel form on a Gram matrix ``K`` (ndarray of shape (n, n)).

    ``f0 = Σⱼ αⱼyⱼK[:, j]`` (f without w₀) is kept for every training point, so a
    check costs O(1) and a correction O(n); ``abs_f`` accumulates Σ γsᵢ|K[:, i]|.
    """
    n = K.shape[0]
    n_upd = 0
    for k in range(order.shape[0]):
        i = order[k]
        if sw[i] == 0.0:
            continue
        if y[i] * (f0[i] + state[0]) <= theta:
            step = eta * sw[i]
            s = step * y[i]
            for m in range(n):
                f0[m] += s * K[i, m]
                abs_f[m] += step * abs(K[i, m])
            _count(state, alpha, i, step, s, fit_intercept)
            n_upd += 1
    return n_upd


@njit(cache=True)
def _criterion(f0, b, y, sw, loss_code, theta):
    """Σᵢ sᵢ ℓ(yᵢ, f0ᵢ + b) from the decision values without intercept."""
    total = 0.0
    for i in range(y.shape[0]):
        total += sw[i] * loss_value(loss_code, theta, y[i], f0[i] + b)
    return total


# --------------------------------------------------------------------------- driver


class _Iterate:
    """The perceptron's iterate in one storage layout, and the cycle test on it.

    ``vec`` is w (primal forms) or f0 = Kβ (kernel form), ``abs_vec`` the summed
    magnitudes of the corrections on each of its coordinates, ``state`` = [w₀,
    Σ|steps on w₀|].
    """

    def __init__(self, erm, X, y, sw, kernel_gram):
        X, y, sw = _compiled_inputs(X, y, sw)
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
            X = self.X
            return _epoch_csr(X.indptr, X.indices, X.data, self.y, self.sw, order, *args)
        return _epoch_dense(self.X, self.y, self.sw, order, *args)

    def criterion(self):
        """The mean weighted criterion J = (1/n) Σ sᵢ ℓ(yᵢ, fᵢ) (the PrimalERM scale).

        Compiled single-threaded loops, as Pegasos' (a BLAS product here contends for
        the cores and was measured 10× slower on a loaded machine).
        """
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
