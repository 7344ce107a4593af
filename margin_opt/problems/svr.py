"""Vapnik's ε-insensitive support vector regression as explicit cvxpy problems.

Primal (slack form)::

    min ½‖w‖² + Σᵢ Cᵢ(ξᵢ + ξᵢ*)  s.t.  yᵢ − f(xᵢ) ≤ ε + ξᵢ,  f(xᵢ) − yᵢ ≤ ε + ξᵢ*,  ξ, ξ* ≥ 0

(loss form: ``½‖w‖² + Σᵢ Cᵢ max(0, |yᵢ − f(xᵢ)| − ε)``), f(x) = wᵀφ(x) + b.

Dual, in (a, â)::

    max −½(a − â)ᵀK(a − â) − ε Σ(aᵢ + âᵢ) + Σ yᵢ(aᵢ − âᵢ)
    s.t. 0 ≤ aᵢ, âᵢ ≤ Cᵢ,  Σ(aᵢ − âᵢ) = 0

and f(x) = Σ(aᵢ − âᵢ)K(x, xᵢ) + b.  aᵢ > 0 only for points on or above the upper
edge of the tube, âᵢ > 0 only on or below the lower edge.

References
----------
V. Vapnik, *The Nature of Statistical Learning Theory*, Springer, 1995.
A. J. Smola and B. Schölkopf, "A tutorial on support vector regression",
Statistics and Computing 14, 2004.
C.-C. Chang and C.-J. Lin, LIBSVM, ACM TIST 2(3), 2011, §2.4 (the 2n-variable form).
"""

from __future__ import annotations

import time

import cvxpy as cp
import numpy as np

from ..solution import Solution
from ..solvers import get_backend
from ..standard_forms import DualQP, PrimalERM
from ..validation import (
    check_C,
    check_data,
    check_positive,
    check_sample_weight,
    libsvm_rows,
)
from . import svr_kkt
from .cvxpy_solve import solve_cvxpy
from .kernel_data import KernelData

__all__ = ["SVRProblem"]


class SVRProblem:
    """ε-insensitive support vector regression as an explicit problem.

    Parameters
    ----------
    X : {array-like, sparse matrix} of shape (n_samples, n_features)
        Training data (the Gram matrix for ``kernel="precomputed"``); not modified.
    y : array-like of shape (n_samples,)
        Real, finite, non-constant targets.
    C : float, default=1.0
        Penalty of the slacks (> 0, finite).
    epsilon : float, default=0.1
        Half-width of the insensitive tube (≥ 0), in target units.
    kernel : {"linear", "poly", "rbf", "sigmoid", "precomputed"} or callable, default="rbf"
    gamma : {"scale", "auto"} or float, default="scale"
    degree : int, default=3
    coef0 : float, default=0.0
    sample_weight : array-like of shape (n_samples,), optional
        Cᵢ = C·sᵢ.
    feature_map : callable, optional
        Explicit feature map (w explicit in the mapped space).

    Raises
    ------
    ValueError
        ε < 0, non-finite or constant targets, a single sample, C ≤ 0 or infinite,
        and the input errors of :class:`~margin_opt.problems.svm.SVMProblem`.
    """

    def __init__(self, X, y, *, C=1.0, epsilon=0.1, kernel="rbf", gamma="scale", degree=3,
                 coef0=0.0, sample_weight=None, feature_map=None):
        X, y = check_data(X, y, y_numeric=True)
        if y.shape[0] < 2:
            raise ValueError("SVR needs at least 2 samples; got 1.")
        if np.ptp(y) == 0:
            raise ValueError(f"the targets are constant (all {y[0]!r}): there is nothing to "
                             "regress; check the target column.")
        self.y = np.asarray(y, dtype=float)
        C = check_C(C)
        if np.isinf(C):
            raise ValueError("SVR needs a finite C (there is no hard-margin regression); "
                             "use e.g. C=1.0.")
        self.C = C
        self.epsilon = check_positive(epsilon, "epsilon", allow_zero=True)
        self.data = KernelData(X, kernel, gamma=gamma, degree=degree, coef0=coef0,
                               feature_map=feature_map)
        self.kernel = self.data.kernel
        self.X = self.data.X
        self.sample_weight = check_sample_weight(sample_weight, X)
        self.C_i = self.C * self.sample_weight

    @property
    def n_samples(self) -> int:
        """Number of training samples."""
        return self.y.shape[0]

    @property
    def explicit_w(self) -> bool:
        """True when w is explicit (linear kernel or feature map)."""
        return self.data.explicit_w

    def decision_from_dual(self, dual_coef, b) -> np.ndarray:
        """f(xᵢ) = Σⱼ(aⱼ − âⱼ)K(xᵢ, xⱼ) + b, shape (n_samples,)."""
        return self.data.combination(dual_coef) + b

    # ------------------------------------------------------------------ cvxpy forms
    def primal(self, form: str = "slack") -> cp.Problem:
        """The primal as a cvxpy Problem with variables ``w``, ``b`` (and ``xi``, ``xi_star``).

        Parameters
        ----------
        form : {"slack", "loss"}, default="slack"
            ``slack``: tube constraints ``y − f ≤ ε + ξ`` (constraint 0, duals a) and
            ``f − y ≤ ε + ξ*`` (constraint 1, duals â), ξ, ξ* ≥ 0; ``loss``: the
            ε-insensitive loss written directly.

        Returns
        -------
        problem : cvxpy.Problem
        """
        if form not in ("slack", "loss"):
            raise ValueError(f"form must be 'slack' or 'loss', got {form!r}.")
        Phi = self.data.features()
        w = cp.Variable(Phi.shape[1], name="w")
        b = cp.Variable(name="b")
        f = Phi @ w + b
        reg = 0.5 * cp.sum_squares(w)
        if form == "slack":
            xi = cp.Variable(self.n_samples, name="xi")
            xi_star = cp.Variable(self.n_samples, name="xi_star")
            cons = [self.y - f <= self.epsilon + xi, f - self.y <= self.epsilon + xi_star,
                    xi >= 0, xi_star >= 0]
            problem = cp.Problem(cp.Minimize(reg + self.C_i @ (xi + xi_star)), cons)
        else:
            loss = cp.pos(cp.abs(self.y - f) - self.epsilon)
            problem = cp.Problem(cp.Minimize(reg + self.C_i @ loss))
        return problem

    def dual(self, form: str = "auto") -> cp.Problem:
        """The dual as a cvxpy Problem in ``alpha`` (a) and ``alpha_star`` (â).

        Constraints, in order: a ≥ 0, a ≤ C, â ≥ 0, â ≤ C, Σ(a − â) = 0 (its dual
        value is the intercept b).  ``form`` is as in
        :meth:`KernelData.quadratic <margin_opt.problems.kernel_data.KernelData.quadratic>`.
        """
        a = cp.Variable(self.n_samples, name="alpha")
        a_star = cp.Variable(self.n_samples, name="alpha_star")
        beta = a - a_star
        objective = (-0.5 * self.data.quadratic(beta, form) - self.epsilon * cp.sum(a + a_star)
                     + self.y @ beta)
        cons = [a >= 0, a <= self.C_i, a_star >= 0, a_star <= self.C_i, cp.sum(beta) == 0]
        return cp.Problem(cp.Maximize(objective), cons)

    # ------------------------------------------------------------------ standard forms
    def to_standard_form(self) -> DualQP:
        """LIBSVM's 2n-variable form: α = [a; â], labels +1 then −1, p = [ε − y; ε + y].

        The kernel rows of the 2n problem come from the n×n kernel through
        ``index = [0..n−1, 0..n−1]``; no 2n×2n matrix is formed.
        """
        n = self.n_samples
        X, kernel = self.data.standard_form_data()
        return DualQP(X=X, kernel=kernel, y=np.r_[np.ones(n), -np.ones(n)],
                      p=np.r_[self.epsilon - self.y, self.epsilon + self.y],
                      upper=np.r_[self.C_i, self.C_i], delta=0.0, equality=True,
                      index=np.r_[np.arange(n), np.arange(n)],
                      gram=self.data.gram_if_computed)

    def to_primal_erm(self) -> PrimalERM:
        """The average-loss form λ/2‖w‖² + (1/n)Σ sᵢ max(0, |yᵢ − fᵢ| − ε), λ = 1/(Cn)."""
        if not self.explicit_w:
            raise ValueError("the subgradient method needs the linear kernel or a "
                             "feature_map; use 'smo' or a cvxpy method for kernels.")
        return PrimalERM(X=self.data.features(), y=self.y, lam=1.0 / (self.C * self.n_samples),
                         sample_weight=self.sample_weight.copy(), fit_intercept=True,
                         loss="epsilon_insensitive", epsilon=self.epsilon)

    # ------------------------------------------------------------------ solving
    def solve(self, method: str = "cvxpy-dual", *, solver=None, form=None, verbose=False,
              **options) -> Solution:
        """Solve and return a :class:`Solution` with both sides filled.

        Parameters
        ----------
        method : {"cvxpy-dual", "cvxpy-primal", "smo", "subgradient"}, default="cvxpy-dual"
        solver : str, optional
            cvxpy solver (default CLARABEL).
        form : str, optional
            ``"slack"``/``"loss"`` for the primal, a dual form for the dual.
        **options
            Solver or backend options (``tol``, ``max_iter``...).

        Returns
        -------
        solution : Solution
            ``alpha`` = a, ``alpha_star`` = â, ``dual_coef`` = a − â.

        Raises
        ------
        SolverError, ValueError
        """
        t0 = time.perf_counter()
        if method == "cvxpy-dual":
            problem = self.dual(form or "auto")
            t_build = time.perf_counter() - t0
            status, timings, n_iter, solver = solve_cvxpy(problem, solver=solver,
                                                          verbose=verbose, **options)
            a = np.clip(problem.var_dict["alpha"].value, 0, None)
            a_star = np.clip(problem.var_dict["alpha_star"].value, 0, None)
            b = float(problem.constraints[-1].dual_value)
            sol = self.solution_from_dual(a, a_star, b, method=method, solver=solver,
                                          status=status, n_iter=n_iter)
            sol.extra["b_equality_dual"] = b
            sol.extra["b_free_sv"] = svr_kkt.intercept_from_free(
                self, a, a_star, sol.decision - b)
        elif method == "cvxpy-primal":
            problem = self.primal(form or "slack")
            t_build = time.perf_counter() - t0
            status, timings, n_iter, solver = solve_cvxpy(problem, solver=solver,
                                                          verbose=verbose, **options)
            duals = None
            if problem.constraints:
                duals = (np.clip(problem.constraints[0].dual_value, 0, None),
                         np.clip(problem.constraints[1].dual_value, 0, None))
            sol = self.solution_from_primal(problem.var_dict["w"].value,
                                            float(problem.var_dict["b"].value), duals=duals,
                                            method=method, solver=solver, status=status,
                                            n_iter=n_iter)
            sol.extra["primal_form"] = form or "slack"
        else:
            fn, kind = get_backend(method)
            std = self.to_standard_form() if kind == "dual" else self.to_primal_erm()
            t_build = time.perf_counter() - t0
            t1 = time.perf_counter()
            res = fn(std, **options)
            timings = dict(res.get("timings", {}))
            timings["solve"] = time.perf_counter() - t1
            if kind == "dual":
                n = self.n_samples
                sol = self.solution_from_dual(res.x[:n], res.x[n:], float(res.b), method=method,
                                              solver=method, status=res.status,
                                              n_iter=res.get("nit"))
            else:
                sol = self.solution_from_primal(res.w, float(res.b), method=method,
                                                solver=method, status=res.status,
                                                n_iter=res.get("nit"))
                hist = dict(res.get("history", {}))
                if "J" in hist:
                    hist["objective"] = self.C * self.n_samples * np.asarray(hist["J"])
                sol.history = hist
            sol.message = res.get("message", "")
            sol.extra["result"] = res
        sol.timings.update(build=t_build, **timings)
        sol.timings["total"] = time.perf_counter() - t0
        return sol

    # ------------------------------------------------------------------ recovery
    def solution_from_dual(self, alpha, alpha_star, b=None, *, method="external", solver=None,
                           status="optimal", n_iter=None, message="") -> Solution:
        """A :class:`Solution` from (a, â) and b (estimated from free SVs when None)."""
        a = self._check_vec(alpha, "alpha")
        a_star = self._check_vec(alpha_star, "alpha_star")
        beta = a - a_star
        f0 = self.decision_from_dual(beta, 0.0)
        if b is None:
            b = svr_kkt.intercept_from_free(self, a, a_star, f0)
        decision = f0 + float(b)
        return self._solution(a, a_star, float(b), decision, f0, None, method=method,
                              solver=solver, status=status, n_iter=n_iter, message=message)

    def solution_from_primal(self, w, b, *, duals=None, method="external", solver=None,
                             status="optimal", n_iter=None) -> Solution:
        """A :class:`Solution` from (w, b) in the coordinates of the feature matrix.

        (a, â) come from ``duals`` when given, else from the subgradient condition
        (a = C above the tube, â = C below it, zero inside, bounded least squares on
        the edges).
        """
        Phi = self.data.features()
        w = np.asarray(w, dtype=float).ravel()
        decision = np.asarray(Phi @ w).ravel() + b
        if duals is None:
            duals = svr_kkt.multipliers_from_primal(self, w, decision)
        a, a_star = self._check_vec(duals[0], "alpha"), self._check_vec(duals[1], "alpha_star")
        f0 = self.decision_from_dual(a - a_star, 0.0)
        return self._solution(a, a_star, float(b), decision, f0, w, method=method,
                              solver=solver, status=status, n_iter=n_iter)

    def _solution(self, a, a_star, b, decision, f0, w_primal, **kw):
        beta = a - a_star
        r = self.y - decision
        xi = np.maximum(0.0, r - self.epsilon)
        xi_star = np.maximum(0.0, -r - self.epsilon)
        quad = float(beta @ f0)
        if w_primal is None:
            reg = 0.5 * quad
            w = self.data.weights(beta) if self.explicit_w else None
        else:
            reg = 0.5 * float(w_primal @ w_primal)
            w = w_primal if self.explicit_w else None
        primal = reg + float(self.C_i @ (xi + xi_star))
        dual = -0.5 * quad - self.epsilon * float((a + a_star).sum()) + float(self.y @ beta)
        extra = {"alpha_star": a_star, "dual_coef": beta, "xi_star": xi_star}
        if w_primal is not None and not self.explicit_w:
            extra["w_factor"] = w_primal
        support = svr_kkt.support_indices(self, a, a_star, r)
        return Solution(alpha=a, b=b, w=w, xi=xi, decision=decision, primal_objective=primal,
                        dual_objective=dual, support_=support, extra=extra, **kw)

    def solution_from_sklearn(self, estimator) -> Solution:
        """A Solution from a fitted ``sklearn.svm.SVR`` on the same data."""
        if not hasattr(estimator, "dual_coef_"):
            raise ValueError("the scikit-learn estimator is not fitted; call fit(X, y) first.")
        if estimator.shape_fit_[0] != self.n_samples:
            raise ValueError(f"the estimator was fitted on {estimator.shape_fit_[0]} samples, "
                             f"the problem has {self.n_samples}.")
        coef = estimator.dual_coef_
        coef = np.asarray(coef.toarray() if hasattr(coef, "toarray") else coef)[0]
        beta = np.zeros(self.n_samples)
        beta[libsvm_rows(self.sample_weight)[estimator.support_]] = coef
        n_iter = getattr(estimator, "n_iter_", None)
        return self.solution_from_dual(np.maximum(beta, 0), np.maximum(-beta, 0),
                                       float(estimator.intercept_[0]), method="external",
                                       solver="LIBSVM (sklearn.svm.SVR)",
                                       n_iter=None if n_iter is None else int(np.ravel(n_iter)[0]))

    def _check_vec(self, v, name):
        v = np.array(v, dtype=float).ravel()
        if v.shape != (self.n_samples,) or not np.all(np.isfinite(v)):
            raise ValueError(f"{name} must be a finite array of shape ({self.n_samples},).")
        return v

    def certify(self, solution=None, tol=1e-6, *, alpha=None, alpha_star=None, b=None):
        """KKT certificate with the tube table (see :mod:`margin_opt.problems.svr_kkt`).

        Parameters
        ----------
        solution : Solution, optional
        tol : float, default=1e-6
        alpha, alpha_star : array-like of shape (n_samples,), optional
            Raw multipliers (a, â) from an external solver, instead of ``solution``.
        b : float, optional

        Returns
        -------
        certificate : Certificate
        """
        if solution is None:
            if alpha is None or alpha_star is None:
                raise ValueError("pass a Solution or the raw arrays alpha, alpha_star (and b).")
            solution = self.solution_from_dual(alpha, alpha_star, b)
        return svr_kkt.certify(self, solution, check_positive(tol, "tol"))

    def __repr__(self) -> str:
        return (f"SVRProblem(n_samples={self.n_samples}, C={self.C:g}, "
                f"epsilon={self.epsilon:g}, kernel={self.kernel.describe()})")

