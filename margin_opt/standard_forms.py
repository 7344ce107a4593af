"""Standard forms that solvers take: the LIBSVM dual QP and the regularized primal ERM.

Solvers never see a model or an estimator, only one of these.  A problem
(:mod:`margin_opt.problems`) knows how to write itself in a standard form and how
to read a solver's answer back.

References
----------
C.-C. Chang and C.-J. Lin, "LIBSVM: a library for support vector machines",
ACM TIST 2(3), 2011, eq. (8) (the general dual form all LIBSVM formulations share).
S. Shalev-Shwartz, Y. Singer, N. Srebro and A. Cotter, "Pegasos: primal estimated
sub-gradient solver for SVM", Math. Programming 127, 2011 (the λ-regularized primal).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .kernels import Kernel

__all__ = ["DualQP", "PrimalERM", "violating_pair_gap", "box_categories"]


@dataclass(frozen=True, eq=False)
class DualQP:
    """The LIBSVM standard dual quadratic program.

    ``min_α ½αᵀQα + pᵀα  s.t.  yᵀα = Δ,  0 ≤ αᵢ ≤ uᵢ``  with
    ``Qᵢⱼ = yᵢyⱼ K(x_{index[i]}, x_{index[j]})``.

    C-SVC and the hard margin (u = ∞) have ``index = arange(n)``, ``p = −1``;
    ε-SVR has 2n variables with ``index = [0..n−1, 0..n−1]`` and labels +1 then −1,
    so Q is never formed beyond the n×n kernel.

    Parameters
    ----------
    X : {ndarray, sparse matrix} of shape (n_data, n_features)
        Training data (for a precomputed kernel: the Gram matrix, (n_data, n_data)).
    kernel : Kernel
        Resolved kernel; ``kernel.rows(X, idx)`` gives rows of K on demand.
    y : ndarray of shape (m,)
        Signs ±1 of the variables.
    p : ndarray of shape (m,)
        Linear term.
    upper : ndarray of shape (m,)
        Upper bounds uᵢ > 0 (``np.inf`` for the hard margin).
    delta : float, default=0.0
        Right-hand side Δ of the equality constraint.
    equality : bool, default=True
        Whether the constraint yᵀα = Δ is present (it comes from an unregularized
        intercept; without intercept there is none).
    index : ndarray of shape (m,) of int, optional
        Data row of each variable (default ``arange(m)``).
    gram : ndarray of shape (n_data, n_data), optional
        The kernel matrix if the caller already has it (it is not recomputed).
    """

    X: object
    kernel: Kernel
    y: np.ndarray
    p: np.ndarray
    upper: np.ndarray
    delta: float = 0.0
    equality: bool = True
    index: np.ndarray | None = None
    gram: np.ndarray | None = None

    @property
    def n_variables(self) -> int:
        """Number m of dual variables."""
        return self.y.shape[0]

    @property
    def data_index(self) -> np.ndarray:
        """Data row of each variable, ndarray of shape (m,)."""
        return np.arange(self.n_variables) if self.index is None else self.index

    def kernel_rows(self, idx) -> np.ndarray:
        """Kernel rows ``K[index[idx], index]``, ndarray of shape (len(idx), m)."""
        di = self.data_index
        rows = np.atleast_1d(di[idx])
        if self.gram is not None:
            K = self.gram[rows]
        else:
            K = self.kernel.rows(self.X, rows)
        return K if self.index is None else K[:, di]

    def q_rows(self, idx) -> np.ndarray:
        """Rows of Q = (yyᵀ)∘K, ndarray of shape (len(idx), m)."""
        idx = np.atleast_1d(idx)
        return self.y[idx, None] * self.y[None, :] * self.kernel_rows(idx)

    def objective(self, alpha) -> float:
        """The minimized objective ½αᵀQα + pᵀα (LIBSVM's "obj")."""
        alpha = np.asarray(alpha, dtype=float)
        nz = np.flatnonzero(alpha)
        if nz.size == 0:
            return 0.0
        Qa = self.q_rows(nz).T @ alpha[nz]
        return float(0.5 * alpha @ Qa + self.p @ alpha)


@dataclass(frozen=True, eq=False)
class PrimalERM:
    """The regularized empirical-risk form of a linear margin model.

    ``J(w, b) = λ/2 ‖w‖² [+ λ/2 b² if regularize_intercept] + (1/n) Σᵢ sᵢ ℓ(yᵢ, wᵀxᵢ + b)``

    with the hinge loss ``ℓ = max(0, 1 − y f)`` (classification) or the
    ε-insensitive loss ``ℓ = max(0, |y − f| − ε)`` (regression).  The C form
    ``½‖w‖² + C Σ sᵢ ℓᵢ`` is the same problem with ``λ = 1/(C n)``; its objective
    is ``C n J``.

    Parameters
    ----------
    X : {ndarray, sparse matrix} of shape (n_samples, n_features)
        Features (an explicit feature map already applied, if any).
    y : ndarray of shape (n_samples,)
        ±1 labels (hinge) or real targets (ε-insensitive).
    lam : float
        Regularization strength λ > 0.
    sample_weight : ndarray of shape (n_samples,)
        Per-sample loss weights sᵢ ≥ 0 (C·sᵢ is the C-form box bound).
    fit_intercept : bool, default=True
        Whether there is an intercept b.
    regularize_intercept : bool, default=False
        Whether λ/2 b² is added (the lecture notes regularize all but the bias).
    loss : {"hinge", "epsilon_insensitive"}, default="hinge"
    epsilon : float, default=0.0
        Tube half-width for the ε-insensitive loss.
    """

    X: object
    y: np.ndarray
    lam: float
    sample_weight: np.ndarray
    fit_intercept: bool = True
    regularize_intercept: bool = False
    loss: str = "hinge"
    epsilon: float = 0.0

    @property
    def n_samples(self) -> int:
        """Number of training samples n."""
        return self.y.shape[0]

    def losses(self, w, b=0.0) -> np.ndarray:
        """Per-sample losses ℓᵢ (unweighted), ndarray of shape (n_samples,)."""
        f = np.asarray(self.X @ w).ravel() + b
        if self.loss == "hinge":
            return np.maximum(0.0, 1.0 - self.y * f)
        return np.maximum(0.0, np.abs(self.y - f) - self.epsilon)

    def objective(self, w, b=0.0) -> float:
        """J(w, b) in the average-loss scale."""
        reg = float(w @ w) + (b * b if self.regularize_intercept else 0.0)
        return 0.5 * self.lam * reg + float(self.sample_weight @ self.losses(w, b)) / self.n_samples


def violating_pair_gap(y, alpha, grad, upper, tau=0.0, zero_scale=None) -> float:
    """LIBSVM's optimality measure m(α) − M(α) of the standard dual.

    ``m(α) = max_{t ∈ I_up} −yₜ∇ₜ`` and ``M(α) = min_{t ∈ I_low} −yₜ∇ₜ`` with
    ``I_up = {αₜ < uₜ, yₜ = 1} ∪ {αₜ > 0, yₜ = −1}`` and
    ``I_low = {αₜ < uₜ, yₜ = −1} ∪ {αₜ > 0, yₜ = 1}``; α is optimal iff the gap is
    ≤ 0 (LIBSVM stops when it is ≤ tol).

    Parameters
    ----------
    y : ndarray of shape (m,)
        Signs ±1.
    alpha : ndarray of shape (m,)
    grad : ndarray of shape (m,)
        ∇ = Qα + p.
    upper : ndarray of shape (m,)
        Upper bounds (``inf`` allowed; 0 fixes the variable, e.g. a zero sample weight).
    tau : float, default=0.0
        Relative threshold: αₜ counts as at its upper bound when αₜ ≥ (1 − τ)uₜ and
        at zero when αₜ ≤ τ·uₜ (τ·zero_scale where uₜ is infinite), for answers of
        interior-point solvers whose bounds are met only approximately.
    zero_scale : float, optional
        Scale for the zero threshold of unbounded variables (default 1).

    Returns
    -------
    gap : float
        max(0, m(α) − M(α)); 0 when one of the sets is empty.

    References
    ----------
    R.-E. Fan, P.-H. Chen and C.-J. Lin, JMLR 6, 2005, eq. (9).
    """
    finite = np.isfinite(upper)
    ref = np.where(finite, upper, 1.0 if zero_scale is None else zero_scale)
    below_u = ~finite | (alpha < (1 - tau) * np.where(finite, upper, 0.0))
    above_0 = alpha > tau * ref
    g = -y * grad
    pos = y > 0
    movable = upper > 0  # a variable with uᵢ = 0 is fixed at 0 and in neither set
    i_up = ((below_u & pos) | (above_0 & ~pos)) & movable
    i_low = ((below_u & ~pos) | (above_0 & pos)) & movable
    if not i_up.any() or not i_low.any():
        return 0.0
    return float(max(0.0, g[i_up].max() - g[i_low].min()))


def box_categories(v, upper, tau):
    """Masks (at_zero, free, at_upper) of variables in boxes [0, uᵢ], threshold tau.

    vᵢ counts as 0 when vᵢ ≤ τuᵢ and as uᵢ when vᵢ ≥ (1 − τ)uᵢ (answers of
    interior-point solvers meet their bounds only approximately).  Variables with
    uᵢ = 0 are fixed and in none of the three.

    Returns
    -------
    at_zero, free, at_upper : ndarray of bool, shape (m,)
    """
    fixed = upper == 0
    zero = (v <= tau * upper) & ~fixed
    at_u = (v >= (1 - tau) * upper) & ~zero & ~fixed
    return zero, ~zero & ~at_u & ~fixed, at_u

