"""The :class:`Solution` every method returns, whichever side it solved."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

__all__ = ["Solution", "STATUSES"]

#: cvxpy's status vocabulary, used by every backend.
STATUSES = ("optimal", "optimal_inaccurate", "max_iter", "stopped", "infeasible", "unbounded")


@dataclass(eq=False)
class Solution:
    """A primal–dual answer to a margin problem, from any solver.

    Whichever side a method solves, the other is recovered by the problem, so
    every field is filled.  Build one with ``problem.solve(...)``, from raw arrays
    with ``problem.solution_from_dual(alpha, b)``, or from a fitted scikit-learn
    estimator with :meth:`from_sklearn`.

    Attributes
    ----------
    alpha : ndarray of shape (n_samples,)
        Dual variables αᵢ (for the SVR: the multipliers aᵢ of the upper tube edge).
    b : float
        Intercept (0.0 without intercept).
    w : ndarray of shape (n_features,) or None
        Primal weights where the kernel is linear (or an explicit feature map is
        used); None otherwise.
    xi : ndarray of shape (n_samples,)
        Slacks ξᵢ (for the SVR: of the upper edge).
    decision : ndarray of shape (n_samples,)
        f(xᵢ) on the training points.
    primal_objective : float
        ½‖w‖² + Σ Cᵢξᵢ (kernelized: ½αᵀQα + Σ Cᵢξᵢ).
    dual_objective : float
        1ᵀα − ½αᵀQα, the maximized form (LIBSVM prints its negative as "obj").
    status : str
        One of :data:`STATUSES` (cvxpy's vocabulary plus ``max_iter``/``stopped``
        for iterative solvers).
    method : str
        ``"cvxpy-dual"``, ``"cvxpy-primal"``, ``"smo"``, ``"external"``, ...
    solver : str or None
        The underlying solver (e.g. ``"CLARABEL"``, ``"LIBSVM (sklearn.svm.SVC)"``).
    n_iter : int or None
        Iterations the solver reported.
    timings : dict of str to float
        Seconds spent, e.g. ``{"compile": ..., "solve": ..., "total": ...}``.
    support_ : ndarray of int
        Indices with αᵢ > 0 (above a relative threshold of 1e-7·max(C) for
        interior-point answers whose zeros are only approximately zero).
    history : dict of str to ndarray
        Per-iteration traces of iterative methods (e.g. ``"objective"``).
    message : str
        The solver's last word.
    extra : dict
        Model-specific quantities (e.g. ``alpha_star`` and ``dual_coef`` of the SVR,
        ``beta`` of a kernel primal).
    """

    alpha: np.ndarray
    b: float
    w: np.ndarray | None
    xi: np.ndarray
    decision: np.ndarray
    primal_objective: float
    dual_objective: float
    status: str = "optimal"
    method: str = "external"
    solver: str | None = None
    n_iter: int | None = None
    timings: dict = field(default_factory=dict)
    support_: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=int))
    history: dict = field(default_factory=dict)
    message: str = ""
    extra: dict = field(default_factory=dict)

    @property
    def duality_gap(self) -> float:
        """Primal minus dual objective (≥ 0 up to solver accuracy)."""
        return float(self.primal_objective - self.dual_objective)

    @property
    def alpha_star(self):
        """â of the SVR (None for classifiers)."""
        return self.extra.get("alpha_star")

    @property
    def dual_coef(self):
        """Coefficients of K(x, xᵢ) in f: yᵢαᵢ for the SVC, aᵢ − âᵢ for the SVR."""
        return self.extra.get("dual_coef")

    @classmethod
    def from_sklearn(cls, estimator, problem) -> Solution:
        """Turn a fitted scikit-learn ``SVC`` (LIBSVM) or ``SVR`` into a Solution.

        Parameters
        ----------
        estimator : sklearn.svm.SVC or sklearn.svm.SVR
            Fitted on the same data, kernel and C as ``problem`` (binary for SVC).
        problem : SVMProblem or SVRProblem
            The problem the estimator solved; it recovers the primal side.

        Returns
        -------
        solution : Solution
            With ``method="external"`` and ``solver="LIBSVM (sklearn.svm.SVC)"``.

        Raises
        ------
        ValueError
            If the estimator is not fitted or does not match the problem's size.
        """
        return problem.solution_from_sklearn(estimator)

    def summary(self) -> dict:
        """Scalars of the solution as a JSON-ready dict."""
        return {
            "method": self.method,
            "solver": self.solver,
            "status": self.status,
            "primal_objective": float(self.primal_objective),
            "dual_objective": float(self.dual_objective),
            "duality_gap": self.duality_gap,
            "b": float(self.b),
            "n_support": int(self.support_.size),
            "n_iter": None if self.n_iter is None else int(self.n_iter),
            "timings": {k: float(v) for k, v in self.timings.items()},
        }
