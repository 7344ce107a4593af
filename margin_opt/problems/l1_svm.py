"""The L1-regularized L2-loss linear SVM (liblinear's ``-s 5``) as an explicit problem.

Primal::

    min_w  ‖w‖₁ + Σᵢ Cᵢ ξᵢ²   s.t.  yᵢ wᵀxᵢ ≥ 1 − ξᵢ

(ξᵢ = max(0, 1 − yᵢwᵀxᵢ) at the optimum; the intercept, as liblinear's, is a bias column
of X and is penalized with the rest of w).  Its Lagrange dual::

    max_α  Σᵢ αᵢ − Σᵢ αᵢ²/(4Cᵢ)   s.t.  ‖Xᵀ(y∘α)‖_∞ ≤ 1,  α ≥ 0

(stationarity in ξ gives αᵢ = 2Cᵢξᵢ; in w, the subgradient condition
Xᵀ(y∘α) ∈ ∂‖w‖₁).  There is no kernel dual — the penalty is not a norm of Φw — so the
certificate is the duality gap at a dual point read from w: α = 2Cξ(w), scaled into the
feasible set (the scale that maximizes the dual along α), and the optimality conditions
of the primal: for every feature, wⱼ > 0 ⇒ gⱼ = −1, wⱼ < 0 ⇒ gⱼ = 1, wⱼ = 0 ⇒ |gⱼ| ≤ 1,
with g = −Xᵀ(y∘α) the gradient of the loss.

References
----------
G.-X. Yuan, K.-W. Chang, C.-J. Hsieh and C.-J. Lin, "A comparison of optimization methods
and software for large-scale L1-regularized linear classification", JMLR 11, 2010.
R.-E. Fan et al., "LIBLINEAR: a library for large linear classification", JMLR 9, 2008
(its ``-s 5``, the solver of scikit-learn's ``LinearSVC(penalty="l1", dual=False)``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import scipy.sparse as sp

from ..certificate import Certificate, Check
from ..kkt import relative_gap
from ..lazy import lazy_module
from ..solution import Solution
from ..solvers.linear.l1 import solve_l1_squared_hinge

if TYPE_CHECKING:
    import cvxpy as cp
else:
    cp = lazy_module("cvxpy")  # imported on first use: the cvxpy forms only

__all__ = ["L1SVMProblem", "L1Variables"]

#: a weight at most this times max(1, ‖w‖_∞) is read as zero by the certificate's
#: optimality conditions (an interior-point answer's zeros are ~1e-10)
ZERO_WEIGHT = 1e-6

#: the methods that solve it: liblinear's primal coordinate descent (compiled) and the
#: cvxpy primal (the reference)
METHODS = ("cd", "cvxpy-primal")


@dataclass(frozen=True)
class L1Variables:
    """The weights w (n_features,) and the dual point α (n_samples,) read from them."""

    w: np.ndarray
    alpha: np.ndarray


class L1SVMProblem:
    """``min ‖w‖₁ + Σ Cᵢ max(0, 1 − yᵢwᵀxᵢ)²`` on data X (no separate intercept).

    Parameters
    ----------
    X : {array-like, sparse matrix} of shape (n_samples, n_features)
        liblinear's bias column, where wanted, is one of its columns.
    y : array-like of shape (n_samples,)
        Labels ±1 (or 0/1, read as −1/+1).
    C : float, default=1.0
        The loss's weight, > 0.
    sample_weight : array-like of shape (n_samples,), optional
        Cᵢ = C·sᵢ (≥ 0).

    Raises
    ------
    ValueError
        C ≤ 0 or not finite, labels other than two values, negative weights, shapes
        that do not match, NaN or inf in X.
    """

    certificate_name = "L1-regularized squared-hinge SVM"

    def __init__(self, X, y, C=1.0, sample_weight=None):
        X = X.tocsr().astype(np.float64) if sp.issparse(X) else np.asarray(X, dtype=np.float64)
        if X.ndim != 2:
            raise ValueError(f"X must be 2-D (n_samples, n_features); got shape {X.shape}.")
        values = X.data if sp.issparse(X) else X
        if not np.isfinite(values).all():
            raise ValueError("X holds NaN or inf; remove or impute them first.")
        y = np.asarray(y, dtype=np.float64).ravel()
        if y.size != X.shape[0]:
            raise ValueError(f"y has {y.size} labels for {X.shape[0]} samples.")
        labels = np.unique(y)
        if labels.size > 2 or not set(labels) <= {-1.0, 0.0, 1.0}:
            raise ValueError(f"y must hold ±1 (or 0/1); got {labels[:5]}.")
        if not (np.isfinite(C) and C > 0):
            raise ValueError(f"C must be a positive finite number, got {C!r}.")
        s = np.ones(y.size) if sample_weight is None else \
            np.asarray(sample_weight, dtype=np.float64).ravel()
        if s.size != y.size or not (np.isfinite(s).all() and (s >= 0).all()):
            raise ValueError("sample_weight must be finite, ≥ 0, one per sample.")
        self.X, self.y, self.C = X, np.where(y > 0, 1.0, -1.0), float(C)
        self.C_i = self.C * s

    @property
    def n_samples(self) -> int:
        return self.X.shape[0]

    def _f(self, w):
        return np.asarray(self.X @ w, dtype=np.float64).ravel()

    def primal_objective(self, w) -> float:
        """‖w‖₁ + Σ Cᵢ max(0, 1 − yᵢwᵀxᵢ)²."""
        xi = np.maximum(0.0, 1.0 - self.y * self._f(w))
        return float(np.abs(w).sum() + self.C_i @ (xi * xi))

    def dual_point(self, w) -> np.ndarray:
        """A feasible dual point read from w: α = t·2Cξ(w), t the scale in
        [0, 1/‖Xᵀ(y∘α)‖_∞] that maximizes the dual along α (the optimum's α at the
        optimum), ndarray of shape (n_samples,)."""
        xi = np.maximum(0.0, 1.0 - self.y * self._f(w))
        a = 2.0 * self.C_i * xi
        if not a.any():
            return a
        v = np.abs(np.asarray(self.X.T @ (self.y * a)).ravel()).max()
        quad = float(np.sum(np.divide(a * a, 2.0 * self.C_i, out=np.zeros_like(a),
                                      where=self.C_i > 0)))
        t = float(a.sum()) / quad if quad > 0 else np.inf
        return a * min(t, 1.0 / v if v > 0 else np.inf)

    def dual_objective(self, alpha) -> float:
        """Σ αᵢ − Σ αᵢ²/(4Cᵢ) (the terms with Cᵢ = 0 have αᵢ = 0)."""
        return float(alpha.sum() - np.sum(np.divide(alpha * alpha, 4.0 * self.C_i,
                                                    out=np.zeros_like(alpha),
                                                    where=self.C_i > 0)))

    def measure(self, w) -> float:
        """The largest of the certificate's measures of w (:meth:`certify`): what a
        solver stops on."""
        return max(c.value for c in self.certify(w).checks)

    def primal(self) -> cp.Problem:
        """The primal in cvxpy (variables w, ξ), printable."""
        n, d = self.X.shape
        w, xi = cp.Variable(d, name="w"), cp.Variable(n, name="xi")
        X = self.X
        cons = [cp.multiply(self.y, X @ w) >= 1 - xi, xi >= 0]
        return cp.Problem(cp.Minimize(cp.norm1(w) + cp.sum(cp.multiply(self.C_i, cp.square(xi)))),
                          cons)

    def dual(self) -> cp.Problem:
        """The dual in cvxpy (variable α), printable."""
        n = self.n_samples
        alpha = cp.Variable(n, name="alpha")
        keep = self.C_i > 0
        quad = cp.sum(cp.multiply(1.0 / (4.0 * self.C_i[keep]), cp.square(alpha[keep])))
        cons = [alpha >= 0, cp.norm_inf(self.X.T @ cp.multiply(self.y, alpha)) <= 1]
        if not keep.all():
            cons.append(alpha[~keep] == 0)
        return cp.Problem(cp.Maximize(cp.sum(alpha) - quad), cons)

    def certify(self, w, tol=1e-6) -> Certificate:
        """The checks of w: the relative duality gap at its dual point
        (:meth:`dual_point`) and the primal's optimality conditions per feature.

        Parameters
        ----------
        w : ndarray of shape (n_features,)
        tol : float, default=1e-6

        Returns
        -------
        Certificate
        """
        w = np.asarray(w, dtype=np.float64).ravel()
        alpha = self.dual_point(w)
        primal, dual = self.primal_objective(w), self.dual_objective(alpha)
        xi = np.maximum(0.0, 1.0 - self.y * self._f(w))
        g = -np.asarray(self.X.T @ (self.y * 2.0 * self.C_i * xi)).ravel()
        # an interior-point answer's zeros are ~1e-10: read as zero below ZERO_WEIGHT
        small = np.abs(w) <= ZERO_WEIGHT * max(1.0, float(np.abs(w).max(initial=0.0)))
        viol = np.where(small, np.maximum(0.0, np.abs(g) - 1.0),
                        np.abs(g + np.sign(w)))
        checks = [
            Check("duality_gap", relative_gap(primal, dual), tol,
                  "|P − D| / max(|P|, |D|), D at α = 2Cξ(w) scaled into ‖Xᵀ(y∘α)‖_∞ ≤ 1"),
            Check("optimality", float(viol.max()) if viol.size else 0.0, tol,
                  "max over features of the subgradient condition's violation: "
                  "|gⱼ ± 1| where wⱼ ≠ 0, (|gⱼ| − 1)₊ where wⱼ = 0 (g: the loss's gradient)"),
        ]
        return Certificate(checks, (), {"primal_objective": primal, "dual_objective": dual,
                                        "nonzero_weights": int(np.count_nonzero(w))},
                           title=f"{self.certificate_name} certificate")

    def solve(self, method="cd", *, certify=1e-6, tol=1e-4, max_iter=1000, random_state=0):
        """Solve by ``method`` and certify at ``certify``.

        Parameters
        ----------
        method : {"cd", "cvxpy-primal"}, default="cd"
            liblinear's primal coordinate descent (compiled; on until the duality gap is
            ≤ 0.9·certify), or the cvxpy primal (Clarabel).
        certify : float or None, default=1e-6
            The certificate's tolerance; None: no certificate.
        tol : float, default=1e-4
            "cd": liblinear's relative stopping rule to start from.
        max_iter : int, default=1000
            "cd": passes over the features, in all.
        random_state : int, default=0
            "cd": the visiting order's seed.

        Returns
        -------
        Solution
            ``variables`` (:class:`L1Variables`), ``certificate``.

        Raises
        ------
        ValueError
            An unknown method.
        """
        if method == "cd":
            res = solve_l1_squared_hinge(
                self.X, self.y, self.C_i, self.measure, tol=tol, max_iter=max_iter,
                gap_tol=None if certify is None else 0.9 * certify, random_state=random_state)
            w, status, nit, msg, raw, timings = (res.x, res.status, res.nit, res.message, res,
                                                 dict(res.timings))
        elif method == "cvxpy-primal":
            prob = self.primal()
            prob.solve(solver=cp.CLARABEL)
            w = np.asarray(prob.variables()[0].value, dtype=np.float64)
            status, nit, msg, raw = "optimal", None, prob.status, prob
            timings = {"total": float(prob.solver_stats.solve_time or 0.0)}
        else:
            raise ValueError(f"method must be one of {METHODS}, got {method!r}.")
        alpha = self.dual_point(w)
        sol = Solution(variables=L1Variables(w=w, alpha=alpha),
                       dual_coef=(self.y * alpha)[None], intercept=np.zeros(1),
                       decision=self._f(w), primal_objective=self.primal_objective(w),
                       dual_objective=self.dual_objective(alpha),
                       support_=np.flatnonzero(alpha), status=status, method=method,
                       backend="liblinear -s 5 (CDN)" if method == "cd" else "CLARABEL",
                       n_iter=nit, message=msg, formulation="L1 primal", raw=raw,
                       timings=timings)
        if certify is not None:
            cert = self.certify(w, certify)
            sol.record_certificate(cert)
        return sol
