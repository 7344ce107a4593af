"""Standard forms that solvers take: the LIBSVM dual QP, the regularized primal ERM and the
Crammer–Singer dual.

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

from dataclasses import dataclass, field

import numpy as np

from .kernels import Kernel
from .losses import Hinge, Loss

__all__ = ["DualQP", "PrimalERM", "CrammerSingerQP"]


@dataclass(frozen=True, eq=False)
class DualQP:
    """The LIBSVM standard dual quadratic program.

    ``min_α ½αᵀQα + pᵀα  s.t.  yᵀα = Δ,  0 ≤ αᵢ ≤ uᵢ``  with
    ``Qᵢⱼ = yᵢyⱼ K(x_{index[i]}, x_{index[j]})``, and for the ν forms a second
    equality ``eᵀα = Δ₂`` (``delta2``).

    C-SVC and the hard margin (u = ∞) have ``index = arange(n)``, ``p = −1``;
    ε-SVR has 2n variables with ``index = [0..n−1, 0..n−1]`` and labels +1 then −1,
    so Q is never formed beyond the n×n kernel.  ν-SVC in LIBSVM's scale has
    ``p = 0``, ``u = 1``, Δ = 0 and Δ₂ = νn; ν-SVR the ε-SVR's 2n variables with
    ``p = [−z, z]`` (targets z), ``u = C``, Δ = 0 and Δ₂ = Cνn (Chang and Lin, 2011,
    §2.2 and §2.5).

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
    diag : ndarray of shape (m,), optional
        A diagonal D added to Q (the squared hinge and squared ε-insensitive losses:
        ``Dₜₜ = 1/(2Cₜ)``, with ``upper = inf``): the form is then
        ``min ½αᵀ(Q + D)α + pᵀα``.  None: D = 0.
    delta2 : float, optional
        Right-hand side Δ₂ of the second equality ``eᵀα = Δ₂`` of the ν forms (with
        ``equality``; LIBSVM's Solver_NU holds both).  None: no second equality.

    References
    ----------
    C.-C. Chang and C.-J. Lin, "LIBSVM: a library for support vector machines", ACM
    TIST 2(3), 2011, eq. (8) and §4.2 (the ν forms' two equalities).
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
    diag: np.ndarray | None = None
    delta2: float | None = None

    @property
    def two_equalities(self) -> bool:
        """Whether eᵀα = Δ₂ is held as well as yᵀα = Δ (the ν forms)."""
        return self.delta2 is not None

    @property
    def n_variables(self) -> int:
        """Number m of dual variables."""
        return self.y.shape[0]

    @property
    def n_data(self) -> int:
        """Number of data rows (of X, or of the Gram matrix)."""
        return (self.gram if self.gram is not None else self.X).shape[0]

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
        """The minimized objective ½αᵀ(Q + D)α + pᵀα (LIBSVM's "obj")."""
        alpha = np.asarray(alpha, dtype=float)
        nz = np.flatnonzero(alpha)
        if nz.size == 0:
            return 0.0
        Qa = self.q_rows(nz).T @ alpha[nz]
        extra = 0.0 if self.diag is None else 0.5 * float(self.diag @ (alpha * alpha))
        return float(0.5 * alpha @ Qa + self.p @ alpha) + extra


@dataclass(frozen=True, eq=False)
class PrimalERM:
    """The regularized empirical-risk form of a linear margin model.

    ``J(w, b) = λ/2 ‖w‖² [+ λ/2 b² if regularize_intercept] + (1/n) Σᵢ sᵢ ℓ(yᵢ, wᵀxᵢ + b)``

    with a margin loss ℓ (:mod:`margin_opt.losses`): the hinge ``max(0, 1 − y f)``
    (classification), the perceptron criterion ``max(0, −y f)`` (λ = 0) or the
    ε-insensitive loss ``max(0, |y − f| − ε)`` (regression).  The C form
    ``½‖w‖² + C Σ sᵢ ℓᵢ`` is the same problem with ``λ = 1/(C n)``; its objective
    is ``C n J``.

    Parameters
    ----------
    X : {ndarray, sparse matrix} of shape (n_samples, n_features)
        Features (an explicit feature map already applied, if any).
    y : ndarray of shape (n_samples,)
        ±1 labels (hinge) or real targets (ε-insensitive).
    lam : float
        Regularization strength λ ≥ 0 (0: no regularizer, e.g. the perceptron).
    sample_weight : ndarray of shape (n_samples,)
        Per-sample loss weights sᵢ ≥ 0 (C·sᵢ is the C-form box bound).
    fit_intercept : bool, default=True
        Whether there is an intercept b.
    regularize_intercept : bool, default=False
        Whether λ/2 b² is added (the lecture notes regularize all but the bias).
    loss : Loss, default=Hinge()
        :class:`~margin_opt.losses.Hinge` or :class:`~margin_opt.losses.EpsilonInsensitive`.

    Raises
    ------
    TypeError
        If ``loss`` is not a :class:`~margin_opt.losses.Loss`.
    ValueError
        If λ is negative or not finite.
    """

    X: object
    y: np.ndarray
    lam: float
    sample_weight: np.ndarray
    fit_intercept: bool = True
    regularize_intercept: bool = False
    loss: Loss = field(default_factory=Hinge)

    def __post_init__(self):
        if not isinstance(self.loss, Loss):
            raise TypeError(f"loss must be a margin_opt.losses.Loss (Hinge(), "
                            f"EpsilonInsensitive(epsilon)), got {self.loss!r}.")
        lam = self.lam
        if isinstance(lam, bool) or not isinstance(lam, (int, float, np.number)) \
                or not np.isfinite(lam) or lam < 0:
            raise ValueError(f"lam (λ = 1/(C n)) must be a finite number ≥ 0, got {lam!r}.")

    @property
    def n_samples(self) -> int:
        """Number of training samples n."""
        return self.y.shape[0]

    def losses(self, w, b=0.0) -> np.ndarray:
        """Per-sample losses ℓᵢ (unweighted), ndarray of shape (n_samples,)."""
        return self.loss.value(self.y, np.asarray(self.X @ w).ravel() + b)

    def objective(self, w, b=0.0) -> float:
        """J(w, b) in the average-loss scale."""
        reg = float(w @ w) + (b * b if self.regularize_intercept else 0.0)
        return 0.5 * self.lam * reg + float(self.sample_weight @ self.losses(w, b)) / self.n_samples


@dataclass(frozen=True, eq=False)
class CrammerSingerQP:
    """The Crammer–Singer dual with an explicit W (linear kernel).

    ``min_β ½ Σ_r ‖Σᵢ βᵢᵣ xᵢ‖² − Σᵢ β_{i yᵢ}``  s.t.  ``βᵢᵣ ≤ uᵢ δ_{yᵢ r}``,
    ``Σ_r βᵢᵣ = 0`` (every i) and, with ``intercept``, ``Σᵢ βᵢᵣ = 0`` (every r); the
    weights are ``W = Σᵢ xᵢ βᵢᵀ`` of shape (n_features, n_classes).  The multipliers of
    the margin constraints are ``λ = u∘Y − β ≥ 0`` with ``Σ_r λᵢᵣ = uᵢ``.

    Parameters
    ----------
    X : {ndarray, csr_matrix} of shape (n_samples, n_features)
    y : ndarray of int of shape (n_samples,)
        Class index of each sample, in ``0 .. n_classes − 1``.
    upper : ndarray of shape (n_samples,)
        Per-sample bounds uᵢ = Cᵢ ≥ 0 (a sample with uᵢ = 0 has β = 0: it leaves the problem).
    n_classes : int
    intercept : bool, default=False
        Unregularized intercepts b_r (the equality constraints Σᵢ βᵢᵣ = 0).
    """

    X: object
    y: np.ndarray
    upper: np.ndarray
    n_classes: int
    intercept: bool = False

    @property
    def n_samples(self) -> int:
        """Number of samples n."""
        return self.y.shape[0]
