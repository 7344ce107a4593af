"""Probabilities from decision values: Platt's sigmoid and pairwise coupling.

- :func:`sigmoid_fit` fits ``P(y = +1 | f) = 1 / (1 + exp(A f + B))`` to decision
  values f by maximum likelihood with Platt's smoothed targets, by the Newton
  method with backtracking of Lin, Lin and Weng (2007), which is what LIBSVM runs.
- :func:`pairwise_coupling` turns the k(k − 1)/2 pairwise probabilities
  rᵢⱼ ≈ P(y = i | y ∈ {i, j}, x) into class probabilities p: method 2 of Wu, Lin and
  Weng (2004), ``min ½ Σᵢ Σ_{j≠i} (rⱼᵢ pᵢ − rᵢⱼ pⱼ)²`` s.t. Σ p = 1, solved exactly
  (a (k + 1) × (k + 1) linear system per sample; its solution is ≥ 0, Theorem 2 of the
  paper).  LIBSVM reaches the same point by an iteration stopped at 0.005/k.

References
----------
J. C. Platt, "Probabilistic outputs for support vector machines and comparisons to
regularized likelihood methods", in *Advances in Large Margin Classifiers*, 1999.
H.-T. Lin, C.-J. Lin and R. C. Weng, "A note on Platt's probabilistic outputs for
support vector machines", Machine Learning 68, 2007 (Algorithm 1).
T.-F. Wu, C.-J. Lin and R. C. Weng, "Probability estimates for multi-class
classification by pairwise coupling", JMLR 5, 2004 (method 2, eq. (15)–(16)).
"""

from __future__ import annotations

import numpy as np

__all__ = ["sigmoid_fit", "sigmoid_predict", "sigmoid_loss", "pairwise_coupling",
           "MIN_PROB"]

#: LIBSVM clips the pairwise probabilities to [MIN_PROB, 1 − MIN_PROB].
MIN_PROB = 1e-7


def _targets(labels):
    pos = np.asarray(labels) > 0
    n_pos = int(pos.sum())
    n_neg = pos.size - n_pos
    return np.where(pos, (n_pos + 1.0) / (n_pos + 2.0), 1.0 / (n_neg + 2.0)), n_pos, n_neg


def sigmoid_loss(A, B, dec, targets) -> float:
    """Negative log-likelihood ``Σ −tᵢ log pᵢ − (1 − tᵢ) log(1 − pᵢ)``, pᵢ = 1/(1 + e^{A fᵢ + B}).

    Written as Σ tᵢzᵢ + log(1 + e^{−zᵢ}) (zᵢ = A fᵢ + B ≥ 0) or
    (tᵢ − 1)zᵢ + log(1 + e^{zᵢ}) (zᵢ < 0), which never overflows.
    """
    z = A * np.asarray(dec, dtype=float) + B
    return float(np.sum(np.where(z >= 0, targets * z + np.log1p(np.exp(-np.abs(z))),
                                 (targets - 1.0) * z + np.log1p(np.exp(-np.abs(z))))))


def sigmoid_fit(dec, labels, *, max_iter=100, min_step=1e-10, sigma=1e-12, eps=1e-5):
    """Fit Platt's sigmoid to decision values (Lin, Lin and Weng's Newton method).

    Parameters
    ----------
    dec : array-like of shape (n_samples,)
        Decision values f, from models that did not see the sample (cross-validation).
    labels : array-like of shape (n_samples,)
        > 0 for the positive class, else negative.
    max_iter : int, default=100
    min_step : float, default=1e-10
        Smallest step of the backtracking line search.
    sigma : float, default=1e-12
        Added to the Hessian's diagonal (kept positive definite).
    eps : float, default=1e-5
        Stop when both gradient components are below it in absolute value.

    Returns
    -------
    A, B : float
        ``P(positive | f) = 1 / (1 + exp(A f + B))`` (A < 0 when larger f means the
        positive class).

    Notes
    -----
    Targets are Platt's ``(N₊ + 1)/(N₊ + 2)`` and ``1/(N₋ + 2)`` (no overfitting to
    0/1); start at A = 0, B = log((N₋ + 1)/(N₊ + 1)); each Newton step is halved until
    the sufficient-decrease condition f(new) < f + 10⁻⁴·step·∇fᵀd holds.
    """
    f = np.asarray(dec, dtype=float).ravel()
    t, n_pos, n_neg = _targets(np.asarray(labels).ravel())
    A, B = 0.0, float(np.log((n_neg + 1.0) / (n_pos + 1.0)))
    fval = sigmoid_loss(A, B, f, t)
    for _ in range(max_iter):
        z = A * f + B
        e = np.exp(-np.abs(z))
        p = np.where(z >= 0, e / (1.0 + e), 1.0 / (1.0 + e))   # 1/(1 + exp(z))
        q = 1.0 - p
        d2 = p * q
        h11 = sigma + float(f @ (f * d2))
        h22 = sigma + float(d2.sum())
        h21 = float(f @ d2)
        d1 = t - p
        g1, g2 = float(f @ d1), float(d1.sum())
        if abs(g1) < eps and abs(g2) < eps:
            break
        det = h11 * h22 - h21 * h21
        dA = -(h22 * g1 - h21 * g2) / det
        dB = -(-h21 * g1 + h11 * g2) / det
        gd = g1 * dA + g2 * dB
        step = 1.0
        while step >= min_step:
            nA, nB = A + step * dA, B + step * dB
            nf = sigmoid_loss(nA, nB, f, t)
            if nf < fval + 1e-4 * step * gd:
                A, B, fval = nA, nB, nf
                break
            step /= 2.0
        if step < min_step:
            break
    return A, B


def sigmoid_predict(dec, A, B) -> np.ndarray:
    """``1 / (1 + exp(A f + B))`` without overflow, ndarray of the shape of ``dec``."""
    z = A * np.asarray(dec, dtype=float) + B
    e = np.exp(-np.abs(z))
    return np.where(z >= 0, e / (1.0 + e), 1.0 / (1.0 + e))


def pairwise_coupling(r) -> np.ndarray:
    """Class probabilities from pairwise ones (Wu, Lin and Weng's method 2).

    Parameters
    ----------
    r : ndarray of shape (n_samples, n_classes, n_classes)
        rᵢⱼ ≈ P(y = i | y ∈ {i, j}, x), with rⱼᵢ = 1 − rᵢⱼ (the diagonal is ignored).

    Returns
    -------
    p : ndarray of shape (n_samples, n_classes)
        The minimizer of ``½ pᵀQp`` s.t. Σ p = 1, with Qₜₜ = Σ_{j≠t} rⱼₜ² and
        Qₜⱼ = −rⱼₜrₜⱼ; rows sum to 1.

    Notes
    -----
    The optimality conditions are the linear system [Q 1; 1ᵀ 0][p; b] = [0; 1], solved
    for all samples at once.  Q is positive semidefinite and the system is
    nonsingular when every rᵢⱼ ∈ (0, 1) (LIBSVM clips them to [1e-7, 1 − 1e-7]).
    """
    r = np.asarray(r, dtype=float)
    n, k, _ = r.shape
    off = ~np.eye(k, dtype=bool)
    rT = np.swapaxes(r, 1, 2)
    Q = np.where(off, -rT * r, 0.0)                            # Qₜⱼ = −rⱼₜ rₜⱼ
    Q[:, np.arange(k), np.arange(k)] = np.sum(np.where(off, rT ** 2, 0.0), axis=2)
    M = np.zeros((n, k + 1, k + 1))
    M[:, :k, :k] = Q
    M[:, :k, k] = 1.0
    M[:, k, :k] = 1.0
    rhs = np.zeros((n, k + 1, 1))
    rhs[:, k, 0] = 1.0
    p = np.linalg.solve(M, rhs)[:, :k, 0]
    p = np.clip(p, 0.0, None)
    return p / p.sum(axis=1, keepdims=True)
