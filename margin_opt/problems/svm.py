"""The binary C-SVC (and hard-margin SVM) as explicit cvxpy problems.

Primal (slack form)::

    min_{w, b, ξ}  ½‖w‖² + Σᵢ Cᵢ ξᵢ   s.t.  yᵢ(wᵀφ(xᵢ) + b) ≥ 1 − ξᵢ,  ξᵢ ≥ 0

(hinge form: ``min ½‖w‖² + Σᵢ Cᵢ max(0, 1 − yᵢ f(xᵢ))``; hard margin: C = ∞, no ξ).

Dual::

    max_α  1ᵀα − ½ αᵀQα   s.t.  0 ≤ αᵢ ≤ Cᵢ,  yᵀα = 0,   Qᵢⱼ = yᵢyⱼK(xᵢ, xⱼ)

(no equality without intercept, no upper bound for the hard margin).

References
----------
C. Cortes and V. Vapnik, "Support-vector networks", Machine Learning 20, 1995.
B. Schölkopf and A. J. Smola, *Learning with Kernels*, MIT Press, 2002, ch. 7.
C.-C. Chang and C.-J. Lin, "LIBSVM: a library for support vector machines",
ACM TIST 2(3), 2011.
"""

from __future__ import annotations

import time

import cvxpy as cp
import numpy as np
from sklearn.utils.class_weight import compute_class_weight

from ..exceptions import NotSeparableError
from ..solution import Solution
from ..solvers import get_backend
from ..standard_forms import DualQP, PrimalERM
from ..validation import (
    check_binary_labels,
    check_C,
    check_data,
    check_positive,
    check_sample_weight,
    libsvm_rows,
)
from . import svm_kkt
from .cvxpy_solve import solve_cvxpy
from .kernel_data import KernelData

__all__ = ["SVMProblem"]


class SVMProblem:
    """The binary soft-margin (C-SVC) or hard-margin SVM as an explicit problem.

    Parameters
    ----------
    X : {array-like, sparse matrix} of shape (n_samples, n_features)
        Training data; for ``kernel="precomputed"`` the Gram matrix of shape
        (n_samples, n_samples).  Copied/converted, never modified.
    y : array-like of shape (n_samples,)
        Two distinct labels.  ``classes_[0]`` (the smaller, as sorted by
        ``np.unique``) becomes −1 and ``classes_[1]`` becomes +1, as in
        scikit-learn (``decision_function > 0`` means ``classes_[1]``).
    C : float, default=1.0
        Penalty of the slacks, > 0; ``np.inf`` poses the hard margin.
    kernel : {"linear", "poly", "rbf", "sigmoid", "precomputed"} or callable, default="linear"
    gamma : {"scale", "auto"} or float, default="scale"
    degree : int, default=3
    coef0 : float, default=0.0
    fit_intercept : bool, default=True
        Whether there is an (unregularized) intercept b; without it the dual has
        no equality constraint.
    sample_weight : array-like of shape (n_samples,), optional
        Non-negative weights; sample i gets the box bound Cᵢ = C·sᵢ·c_{yᵢ}.
    class_weight : dict, "balanced" or None, default=None
        Per-class multipliers c of C, as in scikit-learn.
    feature_map : callable, optional
        An explicit feature map φ: X of shape (n, d) -> ndarray of shape (n, D).
        The primal is then linear in φ(x) with an explicit ``w`` of shape (D,),
        and the kernel is φ(x)ᵀφ(z) (``kernel`` is ignored).

    Attributes
    ----------
    y : ndarray of shape (n_samples,)
        Labels mapped to ±1.
    classes_ : ndarray of shape (2,)
    C_i : ndarray of shape (n_samples,)
        Per-sample box bounds (``inf`` for the hard margin).
    kernel : Kernel
        The resolved kernel.
    n_samples : int

    Raises
    ------
    ValueError
        On bad input: NaN/inf, empty X, one or three classes, mismatched lengths,
        C ≤ 0, gamma ≤ 0, negative sample weights, a precomputed kernel of the
        wrong shape or not PSD.

    Notes
    -----
    For a non-linear kernel the primal is written in the representer form
    ``f = Kβ + b`` with regularizer ``½βᵀKβ``, through a factor ``K = LLᵀ``
    (LAPACK's pivoted Cholesky, exact to rounding, rank r ≤ n): with
    ``w = Lᵀβ`` of shape (r,), ``f = Lw + b`` and ``½βᵀKβ = ½‖w‖²``.  The
    variable ``w`` is thus the weight vector in the coordinates of the
    *empirical feature map* x ↦ L[i]; ``Solution.w`` stays None (no input-space w).
    """

    def __init__(self, X, y, *, C=1.0, kernel="linear", gamma="scale", degree=3, coef0=0.0,
                 fit_intercept=True, sample_weight=None, class_weight=None, feature_map=None):
        X, y_raw = check_data(X, y)
        self.y, self.classes_ = check_binary_labels(y_raw)
        self.C = check_C(C)
        self.hard_margin = bool(np.isinf(self.C))
        self.fit_intercept = bool(fit_intercept)
        self.data = KernelData(X, kernel, gamma=gamma, degree=degree, coef0=coef0,
                               feature_map=feature_map)
        self.feature_map = feature_map
        self.kernel = self.data.kernel
        self.X = X = self.data.X
        sw = check_sample_weight(sample_weight, X)
        self._instance_weight = sw
        if class_weight is not None:
            cw = compute_class_weight(class_weight, classes=np.array([-1.0, 1.0]), y=self.y) \
                if class_weight == "balanced" else self._class_weight_dict(class_weight)
            sw = sw * np.where(self.y > 0, cw[1], cw[0])
        if self.hard_margin and np.any(sw == 0):
            raise ValueError("the hard margin (C = inf) needs positive sample and class "
                             "weights: a weight of 0 would drop the point's constraint; remove "
                             "those points instead, or use a finite C.")
        self.sample_weight = sw
        self.C_i = self.C * sw

    def _class_weight_dict(self, class_weight):
        if not isinstance(class_weight, dict):
            raise ValueError("class_weight must be a dict {label: weight}, 'balanced' or None.")
        unknown = [k for k in class_weight if k not in set(self.classes_.tolist())]
        if unknown:
            raise ValueError(f"class_weight has keys {unknown} that are not classes of y "
                             f"({list(self.classes_)}).")
        out = []
        for label in self.classes_:
            wgt = class_weight.get(label, class_weight.get(label.item() if hasattr(label, "item")
                                                           else label, 1.0))
            out.append(check_positive(wgt, f"class_weight[{label!r}]", allow_zero=True))
        return np.array(out)

    # ------------------------------------------------------------------ factories
    @classmethod
    def from_lambda(cls, X, y, lam, **kw):
        """The λ form of the lecture notes, ``λ/2‖w‖² + (1/n) Σᵢ max(0, 1 − yᵢ(wᵀxᵢ + b))``.

        It is the C form with ``C = 1/(λn)`` and the intercept not regularized:
        its minimizers (w, b) are the same and ``J* = λ P*`` where P* is the C-form
        optimum ``½‖w‖² + C Σ ξᵢ``.

        Parameters
        ----------
        X, y : see :class:`SVMProblem`
        lam : float
            Regularization strength λ > 0.
        **kw
            Other :class:`SVMProblem` parameters (not ``C``).

        Returns
        -------
        problem : SVMProblem

        Raises
        ------
        ValueError
            If λ ≤ 0 or ``C`` is passed as well.
        """
        lam = check_positive(lam, "lam")
        if "C" in kw:
            raise ValueError("from_lambda sets C = 1/(lam n); do not pass C as well.")
        n = np.shape(y)[0]
        return cls(X, y, C=1.0 / (lam * n), **kw)

    # ------------------------------------------------------------------ data views
    @property
    def n_samples(self) -> int:
        """Number of training samples."""
        return self.y.shape[0]

    @property
    def explicit_w(self) -> bool:
        """True when w lives in an explicit feature space (linear kernel or feature map)."""
        return self.data.explicit_w

    def gram(self) -> np.ndarray:
        """The kernel matrix K of shape (n_samples, n_samples), computed once."""
        return self.data.gram()

    def features(self):
        """The matrix Φ the primal is linear in (see :meth:`KernelData.features`)."""
        return self.data.features()

    def decision_from_dual(self, alpha, b) -> np.ndarray:
        """f(xᵢ) = Σⱼ αⱼyⱼK(xᵢ, xⱼ) + b on the training points, shape (n_samples,)."""
        return self.data.combination(self.y * alpha) + b

    # ------------------------------------------------------------------ cvxpy forms
    def primal(self, form: str = "slack") -> cp.Problem:
        """The primal as a cvxpy Problem with variables named ``w``, ``b`` and ``xi``.

        Parameters
        ----------
        form : {"slack", "hinge"}, default="slack"
            ``slack``: ½‖w‖² + Σ Cᵢξᵢ with margin constraints ``yᵢfᵢ ≥ 1 − ξᵢ``
            (constraint 0, whose dual values are α) and ``ξ ≥ 0``; ``hinge``: the
            unconstrained ½‖w‖² + Σ Cᵢ max(0, 1 − yᵢfᵢ).  The hard margin has the
            constraints ``yᵢfᵢ ≥ 1`` in both forms.

        Returns
        -------
        problem : cvxpy.Problem
            Minimization; ``problem.var_dict`` holds ``w`` (and ``b``, ``xi``).

        Raises
        ------
        ValueError
            Unknown form.
        """
        if form not in ("slack", "hinge"):
            raise ValueError(f"form must be 'slack' or 'hinge', got {form!r}.")
        Phi = self.features()
        w = cp.Variable(Phi.shape[1], name="w")
        b = cp.Variable(name="b") if self.fit_intercept else 0.0
        f = Phi @ w + b
        yf = cp.multiply(self.y, f)
        reg = 0.5 * cp.sum_squares(w)
        if self.hard_margin:
            cons = [yf >= 1]
            problem = cp.Problem(cp.Minimize(reg), cons)
        elif form == "slack":
            xi = cp.Variable(self.n_samples, name="xi")
            cons = [yf >= 1 - xi, xi >= 0]
            problem = cp.Problem(cp.Minimize(reg + self.C_i @ xi), cons)
        else:
            problem = cp.Problem(cp.Minimize(reg + self.C_i @ cp.pos(1 - yf)))
        return problem

    def dual(self, form: str = "auto") -> cp.Problem:
        """The dual as a cvxpy Problem in the variable ``alpha``.

        ``max 1ᵀα − ½αᵀQα`` s.t. ``α ≥ 0`` (constraint 0), ``α ≤ C`` (constraint 1,
        absent for the hard margin) and ``yᵀα = 0`` (last constraint, absent
        without intercept); each bound is an explicit constraint so its dual value
        exists.

        Parameters
        ----------
        form : {"auto", "features", "quad_form", "factor"}, default="auto"
            How αᵀQα is written.  ``features``: ‖Φᵀ(y∘α)‖² with Φ = X (linear) or
            φ(X); ``quad_form``: ``quad_form(α, psd_wrap(Q))`` with the dense Q;
            ``factor``: ‖Lᵀ(y∘α)‖² with the pivoted Cholesky factor of K.  ``auto``
            is ``features`` where w is explicit, else ``factor`` when K has
            numerical rank ≤ n/4 and ``quad_form`` otherwise — the fastest exact
            forms measured (see ``benchmarks/bench_cvxpy_dual.py``).

        Returns
        -------
        problem : cvxpy.Problem
        """
        alpha = cp.Variable(self.n_samples, name="alpha")
        quad = self.data.quadratic(cp.multiply(self.y, alpha), form)
        cons = [alpha >= 0]
        if not self.hard_margin:
            cons.append(alpha <= self.C_i)
        if self.fit_intercept:
            cons.append(self.y @ alpha == 0)
        return cp.Problem(cp.Maximize(cp.sum(alpha) - 0.5 * quad), cons)

    # ------------------------------------------------------------------ standard forms
    def to_standard_form(self) -> DualQP:
        """The LIBSVM standard dual ``min ½αᵀQα − 1ᵀα, yᵀα = 0, 0 ≤ α ≤ Cᵢ``.

        Returns
        -------
        qp : DualQP
            ``p = −1``, ``upper = C_i`` (inf for the hard margin), no equality
            without intercept.  With a feature map the data is φ(X) with the linear
            kernel.
        """
        X, kernel = self.data.standard_form_data()
        return DualQP(X=X, kernel=kernel, y=self.y.copy(), p=-np.ones(self.n_samples),
                      upper=self.C_i.copy(), delta=0.0, equality=self.fit_intercept,
                      gram=self.data.gram_if_computed)

    def to_primal_erm(self) -> PrimalERM:
        """The average-loss form ``λ/2‖w‖² + (1/n) Σ sᵢ hinge``, ``λ = 1/(C n)``.

        Returns
        -------
        erm : PrimalERM
            Per-sample weights ``sᵢ = Cᵢ / C``; intercept not regularized.

        Raises
        ------
        ValueError
            For the hard margin (λ = 0 has no average-loss form).
        """
        if self.hard_margin:
            raise ValueError("the hard margin (C = inf) has no λ form; use a finite C or a "
                             "dual method (cvxpy-dual, smo).")
        return PrimalERM(X=self.features() if self.explicit_w else self.X, y=self.y,
                         lam=1.0 / (self.C * self.n_samples),
                         sample_weight=self.sample_weight.copy(),
                         fit_intercept=self.fit_intercept)

    # ------------------------------------------------------------------ solving
    def solve(self, method: str = "cvxpy-dual", *, solver=None, form=None, verbose=False,
              **options) -> Solution:
        """Solve the problem and return a :class:`Solution` with both sides filled.

        Parameters
        ----------
        method : str, default="cvxpy-dual"
            ``"cvxpy-dual"``, ``"cvxpy-primal"``, or a registered backend
            (``"smo"``, ``"subgradient"``, ``"pegasos"``; see
            :mod:`margin_opt.solvers`).
        solver : str, optional
            cvxpy solver for the cvxpy methods (default CLARABEL).
        form : str, optional
            Passed to :meth:`primal` (``"slack"``/``"hinge"``) or :meth:`dual`.
        verbose : bool, default=False
        **options
            Solver options (cvxpy solver settings, or the backend's keywords such
            as ``tol``, ``max_iter``, ``cache_size``).

        Returns
        -------
        solution : Solution

        Raises
        ------
        NotSeparableError
            Hard margin (C = inf) on data that is not linearly separable in the
            feature space.
        SolverError
            The solver failed (our exception, not a cvxpy traceback).
        ValueError
            Unknown method.
        """
        t0 = time.perf_counter()
        if method == "cvxpy-dual":
            sol = self._solve_cvxpy_dual(form or "auto", solver, verbose, options)
        elif method == "cvxpy-primal":
            sol = self._solve_cvxpy_primal(form or "slack", solver, verbose, options)
        else:
            fn, kind = get_backend(method)
            if kind == "dual":
                sol = self._solve_dual_backend(method, fn, options)
            else:
                sol = self._solve_primal_backend(method, fn, options)
        sol.timings["total"] = time.perf_counter() - t0
        return sol

    def _not_separable(self, status):
        return NotSeparableError(
            "the hard-margin SVM (C = inf) is infeasible: the data is not linearly separable "
            f"in the feature space (solver status {status}). Use a finite C, e.g. C=1.0 "
            "(the soft margin), or a more flexible kernel.")

    def _solve_cvxpy_dual(self, form, solver, verbose, options):
        t0 = time.perf_counter()
        problem = self.dual(form)
        t_build = time.perf_counter() - t0
        status, timings, n_iter, solver = solve_cvxpy(
            problem, solver=solver, verbose=verbose, on_unbounded=self._not_separable,
            on_infeasible=self._not_separable if self.hard_margin else None, **options)
        alpha = np.clip(np.asarray(problem.var_dict["alpha"].value, dtype=float), 0.0, None)
        if self.hard_margin and alpha.max() > 1e8:
            raise self._not_separable("unbounded (α diverging)")
        b_eq = float(problem.constraints[-1].dual_value) if self.fit_intercept else 0.0
        sol = self.solution_from_dual(alpha, b_eq, method="cvxpy-dual", solver=solver,
                                      status=status, n_iter=n_iter)
        sol.extra["b_equality_dual"] = b_eq
        sol.extra["b_free_sv"] = svm_kkt.intercept_from_free(self, alpha, sol.decision - b_eq)
        sol.extra["dual_form"] = self.data.resolve_form(form)
        sol.timings.update(build=t_build, **timings)
        return sol

    def _solve_cvxpy_primal(self, form, solver, verbose, options):
        t0 = time.perf_counter()
        problem = self.primal(form)
        t_build = time.perf_counter() - t0
        status, timings, n_iter, solver = solve_cvxpy(
            problem, solver=solver, verbose=verbose,
            on_infeasible=self._not_separable if self.hard_margin else None, **options)
        w = np.asarray(problem.var_dict["w"].value, dtype=float)
        b = float(problem.var_dict["b"].value) if self.fit_intercept else 0.0
        alpha = None
        if problem.constraints:
            alpha = np.clip(np.asarray(problem.constraints[0].dual_value, dtype=float), 0, None)
        sol = self.solution_from_primal(w, b, alpha=alpha, method="cvxpy-primal",
                                        solver=solver, status=status, n_iter=n_iter)
        sol.extra["primal_form"] = form
        sol.timings.update(build=t_build, **timings)
        return sol

    def _solve_dual_backend(self, method, fn, options):
        t0 = time.perf_counter()
        qp = self.to_standard_form()
        res = fn(qp, **options)
        t1 = time.perf_counter()
        if self.hard_margin and (res.get("status") == "unbounded"
                                 or np.max(res.x, initial=0.0) > 1e8):
            raise self._not_separable(f"{method}: {res.get('message', 'α diverging')}")
        sol = self.solution_from_dual(np.asarray(res.x, dtype=float), float(res.b),
                                      method=method, solver=method,
                                      status=res.get("status", "optimal"),
                                      n_iter=res.get("nit"), message=res.get("message", ""))
        sol.timings.update(res.get("timings", {}))
        sol.timings["solve"] = t1 - t0
        sol.extra["result"] = res
        return sol

    def _solve_primal_backend(self, method, fn, options):
        t0 = time.perf_counter()
        erm = self.to_primal_erm()
        if not self.explicit_w:
            if method != "pegasos":
                raise ValueError(f"method {method!r} needs the linear kernel or a feature_map; "
                                 "use 'pegasos' (kernelized) or a dual method for kernels.")
            options = {**options, "kernel_gram": self.gram()}
        res = fn(erm, **options)
        t1 = time.perf_counter()
        scale = self.C * self.n_samples
        if res.get("beta") is not None:
            beta = np.asarray(res.beta, dtype=float)
            sol = self.solution_from_representer(beta, float(res.b), method=method,
                                                 solver=method, status=res.status,
                                                 n_iter=res.get("nit"))
        else:
            sol = self.solution_from_primal(np.asarray(res.w, dtype=float), float(res.b),
                                            method=method, solver=method, status=res.status,
                                            n_iter=res.get("nit"))
        sol.message = res.get("message", "")
        hist = dict(res.get("history", {}))
        if "J" in hist:
            hist["objective"] = scale * np.asarray(hist["J"], dtype=float)
        sol.history = hist
        sol.timings["solve"] = t1 - t0
        sol.extra["result"] = res
        return sol

    # ------------------------------------------------------------------ recovery
    def solution_from_dual(self, alpha, b=None, *, method="external", solver=None,
                           status="optimal", n_iter=None, message="") -> Solution:
        """Build a :class:`Solution` from dual variables (any solver's).

        Parameters
        ----------
        alpha : array-like of shape (n_samples,)
            Dual variables (copied).
        b : float, optional
            Intercept; when None it is the average of ``yᵢ − ΣⱼαⱼyⱼKᵢⱼ`` over the
            free support vectors, else the midpoint of the feasible interval.
        method, solver, status, n_iter, message
            Recorded in the Solution.

        Returns
        -------
        solution : Solution

        Raises
        ------
        ValueError
            If ``alpha`` has the wrong shape or non-finite entries.
        """
        alpha = self._check_alpha(alpha)
        f0 = self.decision_from_dual(alpha, 0.0)
        if b is None:
            b = svm_kkt.intercept_from_free(self, alpha, f0) if self.fit_intercept else 0.0
        b = float(b) if self.fit_intercept else 0.0
        decision = f0 + b
        xi = np.maximum(0.0, 1.0 - self.y * decision)
        w = self.data.weights(self.y * alpha) if self.explicit_w else None
        quad = float((self.y * alpha) @ f0)
        primal = 0.5 * quad + svm_kkt.slack_cost(self, xi)
        dual = float(alpha.sum() - 0.5 * quad)
        return Solution(alpha=alpha, b=b, w=w, xi=xi, decision=decision,
                        primal_objective=primal, dual_objective=dual, status=status,
                        method=method, solver=solver, n_iter=n_iter,
                        support_=svm_kkt.support_indices(self, alpha, decision), message=message,
                        extra={"dual_coef": self.y * alpha})

    def solution_from_primal(self, w, b, *, alpha=None, method="external", solver=None,
                             status="optimal", n_iter=None) -> Solution:
        """Build a :class:`Solution` from primal variables (w in the coordinates of Φ).

        When ``alpha`` is not given (subgradient methods, the hinge form) it is
        filled from the subgradient optimality condition: αᵢ = Cᵢ where yᵢfᵢ < 1,
        0 where yᵢfᵢ > 1, and on the margin the values in [0, Cᵢ] that best satisfy
        stationarity w = Σαᵢyᵢφ(xᵢ) and yᵀα = 0 (bounded least squares).

        Parameters
        ----------
        w : ndarray of shape (n_features,) or (r,)
            Weights in the feature coordinates of :meth:`features`.
        b : float
        alpha : ndarray of shape (n_samples,), optional

        Returns
        -------
        solution : Solution
        """
        Phi = self.features()
        w = np.asarray(w, dtype=float).ravel()
        if w.shape[0] != Phi.shape[1]:
            raise ValueError(f"w has {w.shape[0]} entries, expected {Phi.shape[1]}.")
        b = float(b) if self.fit_intercept else 0.0
        decision = np.asarray(Phi @ w).ravel() + b
        xi = np.maximum(0.0, 1.0 - self.y * decision)
        if alpha is None:
            alpha = svm_kkt.alpha_from_primal(self, w, decision)
        alpha = self._check_alpha(alpha)
        f0 = self.decision_from_dual(alpha, 0.0)
        primal = 0.5 * float(w @ w) + svm_kkt.slack_cost(self, xi)
        dual = float(alpha.sum() - 0.5 * (self.y * alpha) @ f0)
        extra = {"dual_coef": self.y * alpha}
        if not self.explicit_w:
            extra["w_factor"] = w
        return Solution(alpha=alpha, b=b, w=w if self.explicit_w else None, xi=xi,
                        decision=decision, primal_objective=primal, dual_objective=dual,
                        status=status, method=method, solver=solver, n_iter=n_iter,
                        support_=svm_kkt.support_indices(self, alpha, decision), extra=extra)

    def solution_from_representer(self, beta, b, **kw) -> Solution:
        """Build a :class:`Solution` from representer coefficients, f = Kβ + b.

        The primal point is (β, b) with regularizer ½βᵀKβ (kept in
        ``extra["beta"]``, the coefficients that reproduce f); α is filled from the
        subgradient as in :meth:`solution_from_primal` for the certificate.
        """
        beta = np.asarray(beta, dtype=float).ravel()
        sol = self.solution_from_primal(self.data.weights(beta), b, **kw)
        sol.extra["beta"] = beta
        return sol

    def solution_from_sklearn(self, estimator) -> Solution:
        """A Solution from a fitted ``sklearn.svm.SVC`` on the same data (see
        :meth:`Solution.from_sklearn`)."""
        if not hasattr(estimator, "dual_coef_"):
            raise ValueError("the scikit-learn estimator is not fitted; call fit(X, y) first.")
        if len(getattr(estimator, "classes_", [])) != 2:
            raise ValueError("only a binary scikit-learn SVC can be turned into a Solution.")
        if estimator.shape_fit_[0] != self.n_samples:
            raise ValueError(f"the estimator was fitted on {estimator.shape_fit_[0]} samples, "
                             f"the problem has {self.n_samples}.")
        coef = estimator.dual_coef_
        coef = np.asarray(coef.toarray() if hasattr(coef, "toarray") else coef)[0]
        alpha = np.zeros(self.n_samples)
        alpha[libsvm_rows(self._instance_weight)[estimator.support_]] = np.abs(coef)
        n_iter = getattr(estimator, "n_iter_", [None])
        return self.solution_from_dual(alpha, float(estimator.intercept_[0]), method="external",
                                       solver="LIBSVM (sklearn.svm.SVC)",
                                       n_iter=None if n_iter is None else int(n_iter[0]))

    def _check_alpha(self, alpha):
        alpha = np.array(alpha, dtype=float).ravel()
        if alpha.shape != (self.n_samples,):
            raise ValueError(f"alpha must have shape ({self.n_samples},), got {alpha.shape}.")
        if not np.all(np.isfinite(alpha)):
            raise ValueError("alpha contains NaN or infinity.")
        return alpha

    # ------------------------------------------------------------------ certificate
    def certify(self, solution=None, tol=1e-6, *, alpha=None, b=None):
        """Check the KKT conditions and the duality gap of an answer.

        Parameters
        ----------
        solution : Solution, optional
            Any solver's answer (ours, LIBSVM's via :meth:`Solution.from_sklearn`).
        tol : float, default=1e-6
            Tolerance on each normalized residual and on the margins in the
            support-vector table.  Use the solver's own accuracy (e.g. LIBSVM's
            ``tol``) for iterative methods.
        alpha : array-like of shape (n_samples,), optional
            Raw dual variables from an external solver, instead of ``solution``.
        b : float, optional
            Its intercept (estimated from the free support vectors when None).

        Returns
        -------
        certificate : Certificate
            See :mod:`margin_opt.problems.svm_kkt` for the conditions.

        Raises
        ------
        ValueError
            If neither a solution nor alpha is given.
        """
        if solution is None:
            if alpha is None:
                raise ValueError("pass a Solution or the raw arrays alpha (and b).")
            solution = self.solution_from_dual(alpha, b)
        return svm_kkt.certify(self, solution, check_positive(tol, "tol"))

    def __repr__(self) -> str:
        C = "inf (hard margin)" if self.hard_margin else f"{self.C:g}"
        return (f"SVMProblem(n_samples={self.n_samples}, C={C}, kernel={self.kernel.describe()}, "
                f"fit_intercept={self.fit_intercept})")
