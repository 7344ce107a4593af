"""The problem protocol and the base every kernel problem (C-SVC, ε-SVR) shares.

A kernel problem is an instance of the LIBSVM standard dual QP
(:class:`~margin_opt.standard_forms.DualQP`: labels yₜ, linear term pₜ, bounds uₜ,
data row index[t] of each variable t) with a primal whose constraints are
sₜ + ξₜ ≥ 0, sₜ = yₜf(x_{index[t]}) + pₜ (see :mod:`margin_opt.kkt`).  Everything
that follows from that alone is written here once: the standard forms, the
recovery of the other side of an answer, the intercept, the support vectors, the
KKT checks and the duality gap, the reading of a LIBSVM answer.  A concrete problem
adds only what is its own:

- its data and hyperparameters (``__init__``) and its standard-form layout
  (:meth:`KernelProblem._layout`: y, p, u, index) and primal loss (``_loss``);
- its cvxpy formulations (``primal``, ``dual``) and how to read their answers back
  (``_read_cvxpy_dual``, ``_read_cvxpy_primal``);
- its typed variables (``_variables``) and its certificate's table and quantities
  (``_certificate_parts``);
- its infeasibility error (``infeasible_error``), if it can be infeasible.

Solving goes through :func:`margin_opt.problems.solve_path.solve`, the one solve
path of every problem.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from .. import kkt
from ..certificate import Certificate, Check
from ..display import problem_latex
from ..lazy import lazy_module
from ..methods import method_names, not_applicable
from ..solution import Solution
from ..standard_forms import DualQP, PrimalERM
from ..validation import check_positive, libsvm_rows
from .path import regularization_path as _regularization_path
from .solve_path import solve as _solve

if TYPE_CHECKING:
    import cvxpy as cp
else:
    cp = lazy_module("cvxpy")  # imported on first use: the cvxpy forms only

__all__ = ["KernelProblem", "SV_THRESHOLD", "SUPPORT_BUDGET", "FEASIBILITY_TOL"]

#: Relative floor under which a multiplier is a candidate to be dropped
#: (:meth:`KernelProblem.drop_negligible`).
SV_THRESHOLD = 1e-12
#: How far dropping negligible multipliers may move f, relative to max(1, max|f|)
#: (:meth:`KernelProblem.drop_negligible`): 1000× below the default tolerance.
SUPPORT_BUDGET = 1e-9
#: The dual feasibility an accuracy certificate (``certify(suboptimality=True)``)
#: holds the multipliers to, relative to their scale: their dual objective must be a
#: lower bound on the optimum.
FEASIBILITY_TOL = 1e-9


class KernelProblem:
    """Base of the kernel problems; see the module docstring for what a subclass adds.

    Subclasses set, in ``__init__``: ``data`` (a
    :class:`~margin_opt.problems.kernel_data.KernelData`), ``kernel``, ``X``, ``y``,
    ``C``, ``C_i``, ``sample_weight`` (the weights LIBSVM would see as instance
    weights in ``_instance_weight``) and ``fit_intercept``.
    """

    #: registry key of the model (:mod:`margin_opt.methods`)
    model = ""
    #: names of the model's dual vectors, which make up the standard form's α in order
    dual_names = ("alpha",)
    #: the cvxpy primal formulations; the first is the default
    formulations = ("slack",)
    #: the typed variables of the model's Solution
    variables_type = None
    hard_margin = False

    # ------------------------------------------------------------------ data views
    @property
    def n_samples(self) -> int:
        """Number of training samples."""
        return self.X.shape[0]

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

    @property
    def erm_scale(self) -> float:
        """C·n: the C-form objective is ``erm_scale`` times the average-loss J."""
        return self.C * self.n_samples

    # ------------------------------------------------------------------ standard forms
    def _layout(self) -> dict:  # pragma: no cover - abstract
        """``dict(y=, p=, upper=, index=, delta=, equality=)`` of the standard dual."""
        raise NotImplementedError

    def _loss(self):  # pragma: no cover - abstract
        """The :class:`~margin_opt.losses.Loss` of the primal ERM form."""
        raise NotImplementedError

    @property
    def _qp(self) -> DualQP:
        """The standard form's layout (no kernel matrix attached), built once."""
        if "_qp_cache" not in self.__dict__:
            X, kernel = self.data.standard_form_data()
            self._qp_cache = DualQP(X=X, kernel=kernel, **self._layout())
        return self._qp_cache

    def to_standard_form(self) -> DualQP:
        """The LIBSVM standard dual ``min ½αᵀQα + pᵀα, yᵀα = Δ, 0 ≤ α ≤ u``.

        Returns
        -------
        qp : DualQP
            New arrays (a backend may keep them); the kernel matrix is attached when
            it has been computed already.  With a feature map the data is φ(X) with
            the linear kernel.
        """
        X, kernel = self.data.standard_form_data()
        lay = {k: (v.copy() if isinstance(v, np.ndarray) else v)
               for k, v in self._layout().items()}
        return DualQP(X=X, kernel=kernel, gram=self.data.gram_if_computed, **lay)

    def backend_form(self) -> DualQP:
        """:meth:`to_standard_form` as a dual backend of the solve path runs it: on
        centred data for a linear kernel with an intercept
        (:meth:`KernelData.backend_data`), whose intercept is the user's plus
        ``data.standard_intercept_shift``; else the standard form itself."""
        X, kernel = self.data.backend_data()
        if X is self.data.standard_form_data()[0]:
            return self.to_standard_form()
        lay = {k: (v.copy() if isinstance(v, np.ndarray) else v)
               for k, v in self._layout().items()}
        return DualQP(X=X, kernel=kernel, **lay)

    def to_primal_erm(self) -> PrimalERM:
        """The average-loss form ``λ/2‖w‖² + (1/n) Σ sᵢ ℓ(yᵢ, fᵢ)``, ``λ = 1/(C n)``.

        Returns
        -------
        erm : PrimalERM
            X is the feature matrix where w is explicit, else the data (a kernelized
            backend then takes the Gram matrix).  Per-sample weights sᵢ = Cᵢ/C;
            intercept not regularized.

        Raises
        ------
        ValueError
            For the hard margin (λ = 0 has no average-loss form).
        """
        if self.hard_margin:
            raise ValueError("the hard margin (C = inf) has no λ form; use a finite C or a "
                             "dual method (cvxpy-dual, smo).")
        return PrimalERM(X=self.features() if self.explicit_w else self.X, y=self.y,
                         lam=1.0 / self.erm_scale, sample_weight=self.sample_weight.copy(),
                         fit_intercept=self.fit_intercept, loss=self._loss())

    # ------------------------------------------------------------------ solving
    def solve(self, method: str = "cvxpy-dual", *, solver=None, formulation=None,
              quad_form=None, verbose=False, certify=True, fallback=False,
              **options) -> Solution:
        """Solve the problem and return a :class:`~margin_opt.solution.Solution`.

        Parameters
        ----------
        method : str, default="cvxpy-dual"
            A registry name (:mod:`margin_opt.methods`): ``"cvxpy-dual"``,
            ``"cvxpy-primal"``, ``"smo"``, ``"subgradient"``, ``"pegasos"`` (where
            the model admits it), or a variant such as ``"cvxpy-hinge"``.
        solver : str, optional
            cvxpy solver of the cvxpy methods (default CLARABEL).
        formulation : str, optional
            The cvxpy primal's formulation (see :meth:`primal`).
        quad_form : str, optional
            How the cvxpy dual writes its quadratic term (see :meth:`dual`).
        verbose : bool, default=False
        certify : bool or float, default=True
            Certify the answer before returning it (``solution.certificate``), at the
            accuracy the method claims (a dual backend's ``tol``, else the registry's
            accuracy), or at this tolerance when a number.  ``"optimal"`` is reported
            only when the certificate holds; otherwise ``"optimal_inaccurate"`` and an
            :class:`~margin_opt.exceptions.InaccurateSolutionWarning`.
        fallback : bool or FallbackOptions, default=False
            Repair an answer that does not certify: restart a dual backend from it at
            a 100× tighter tolerance, then solve the exact cvxpy dual where the size
            allows; raise :class:`~margin_opt.exceptions.NotCertifiedError` when
            nothing certifies (the estimators' default).  A
            :class:`~margin_opt.problems.solve_path.FallbackOptions` repairs with its
            settings (True: the defaults).
        **options
            Solver options (cvxpy solver settings, or the backend's keywords such as
            ``tol``, ``max_iter``, ``cache_size``).

        Returns
        -------
        solution : Solution
            Both sides filled; ``timings`` has ``build``, the solver's own phases
            and ``total``.

        Raises
        ------
        NotSeparableError
            Hard margin (C = inf) on data that is not separable in the feature space.
        SolverError
            The solver failed (our exception, not a cvxpy traceback).
        ValueError
            Unknown method, or options that do not apply to it.
        """
        return _solve(self, method, solver=solver, formulation=formulation,
                      quad_form=quad_form, verbose=verbose, certify=certify,
                      fallback=fallback, **options)

    def path(self, C, eps=1e-6, method="smo", **options):
        """An ε-approximate regularization path over C (the C-SVC and the ε-SVR).

        Answers at finitely many C whose certified intervals cover ``C=(C_min, C_max)``:
        for every C there, ``path.solution_at(C)`` is within a relative ``eps`` of the
        optimum at C, proved by its certificate at C.  The problem (its C included) is
        not modified.  See :func:`margin_opt.problems.path.regularization_path`.

        Parameters
        ----------
        C : tuple (C_min, C_max) or list of float
            A range to cover, or a grid of values (each solved and certified).
        eps : float, default=1e-6
            The relative accuracy, in (0, 1).
        method : str, default="smo"
            The registry method each point is solved by (warm-started where it can be).
        **options
            ``tol`` (each point's accuracy, default eps/10), ``fallback`` (default
            True), and the backend's options.

        Returns
        -------
        path : margin_opt.problems.path.Path

        Raises
        ------
        ValueError
            Another model, C_min ≤ 0, C_min ≥ C_max, eps outside (0, 1).
        NotCertifiedError
            A point that does not certify.

        References
        ----------
        J. Giesen, J. K. Müller, S. Laue and S. Swiercy, "Approximating concavely
        parameterized optimization problems", NIPS 2012.
        """
        return _regularization_path(self, C, eps=eps, method=method, **options)

    def _primal_variables(self, formulation, intercept="b"):
        """Check ``formulation``; the feature matrix Φ and the primal's cvxpy ``w`` and
        intercept (a variable named ``intercept``: ``b``, the one-class SVM's ``rho``).

        Raises
        ------
        ValueError
            A formulation that is not one of :attr:`formulations`.
        """
        if formulation not in self.formulations:
            raise ValueError(f"formulation must be one of {self.formulations}, got "
                             f"{formulation!r}.")
        Phi = self.features()
        w = cp.Variable(Phi.shape[1], name="w")
        b = cp.Variable(name=intercept) if self.fit_intercept else 0.0
        return Phi, w, b

    # ------------------------------------------------------------------ as mathematics
    def __str__(self) -> str:
        """The problem as a person reads it: sizes, primal, dual and standard form."""
        feats = ("φ(x) = x" if self.kernel.is_linear and self.feature_map is None else
                 "φ given" if self.feature_map is not None else
                 "φ(xᵢ) the rows of the kernel factor L, K = LLᵀ (the empirical feature map)")
        lines = [self._headline(), ""]
        lines += self._math_lines(feats)
        lines += ["", *self._standard_form_lines(),
                  "solve: problem.solve(method) with method in "
                  + ", ".join(m for m in method_names(self.model, estimator=True)
                              if not_applicable(m, self) is None)]
        return "\n".join(lines)

    def _kernel_words(self) -> str:
        """The kernel as the headline names it."""
        return self.kernel.describe() if self.feature_map is None else "explicit feature map φ"

    def _headline(self) -> str:
        """The first printed line: the name, the sizes, the kernel, C and the intercept."""
        n, d = self.X.shape
        box = self.C_i[np.isfinite(self.C_i)]
        cs = (f"C = {self.C:g}" if self.C_i.size and np.all(self.C_i == self.C)
              else f"C = {self.C:g}, Cᵢ = C·sᵢ in [{box.min():.3g}, {box.max():.3g}]")
        name = getattr(self, "title", self.certificate_name)
        return (f"{name}: n = {n} samples, d = {d} features, kernel {self._kernel_words()}, "
                f"{cs}, intercept {'b' if self.fit_intercept else 'none (b = 0)'}")

    def _standard_form_lines(self) -> list:
        """The printed standard form (what SMO solves)."""
        qp = self._qp
        eq = f"yᵀα = {qp.delta:g}, " if qp.equality else ""
        return ["standard form (SMO; problem.to_standard_form()), "
                f"{qp.n_variables} variables:",
                f"    min ½αᵀQα + pᵀα  s.t. {eq}0 ≤ α ≤ u,  Qₜₛ = yₜyₛK(x_index[t], x_index[s])"]

    def _repr_latex_(self) -> str:
        """The printed problem typeset: Jupyter's display of it (one renderer,
        :func:`margin_opt.display.problem_latex`)."""
        return problem_latex(str(self))

    def _math_lines(self, feats):  # pragma: no cover - abstract
        """The primal and dual of the model as text lines."""
        raise NotImplementedError

    def infeasible_error(self, status):
        """The error for an infeasible or unbounded answer, or None for the generic one."""
        return None

    def check_dual_answer(self, alpha, where: str) -> None:
        """Raise when a dual answer proves the problem infeasible (default: never)."""

    # ------------------------------------------------------------------ recovery
    def _check_alpha(self, alpha, name="alpha") -> np.ndarray:
        alpha = _real_array(alpha, name)
        m = self._qp.n_variables
        if alpha.shape != (m,):
            raise ValueError(f"{name} must have shape ({m},), got {alpha.shape}.")
        if not np.isfinite(alpha).all():
            raise ValueError(f"{name} contains NaN or infinity.")
        return alpha

    def coefficients(self, alpha) -> np.ndarray:
        """β with f = Σⱼ βⱼK(·, xⱼ) + b from standard-form α, ndarray of shape (n_samples,)."""
        return kkt.coefficients(self._qp, alpha)

    def _alpha_scale(self, alpha) -> float:
        """max(1, largest finite Cᵢ), or max(1, max α) without upper bounds."""
        up = self._qp.upper
        finite = up[np.isfinite(up)]
        if finite.size:
            return max(1.0, float(finite.max()))
        return max(1.0, float(np.max(alpha, initial=0.0)))

    def _gradient(self, alpha, f0) -> np.ndarray:
        """∇ = Qα + p (+ Dα, the squared losses) of the standard dual, from f0 = Kβ."""
        qp = self._qp
        grad = qp.y * f0[qp.data_index] + qp.p
        return grad if qp.diag is None else grad + qp.diag * alpha

    def _slack_cost(self, xi) -> float:
        """The primal's slack term: Σ uₜξₜ over finite uₜ, + Σ ξₜ²/(2Dₜ) (= Cₜξₜ²) with
        a diagonal D (the squared losses)."""
        qp = self._qp
        finite = np.isfinite(qp.upper)
        cost = float(qp.upper[finite] @ xi[finite])
        if qp.diag is not None:
            sq = qp.diag > 0
            cost += float(np.sum(xi[sq] ** 2 / (2.0 * qp.diag[sq])))
        return cost

    def _diag_term(self, alpha) -> float:
        """½αᵀDα of the dual (0 without a diagonal)."""
        d = self._qp.diag
        return 0.0 if d is None else 0.5 * float(d @ (alpha * alpha))

    def _margins(self, decision) -> np.ndarray:
        """sₜ = yₜf(x_{index[t]}) + pₜ of every standard-form variable."""
        qp = self._qp
        return qp.y * decision[qp.data_index] + qp.p

    def kkt_intercept(self, alpha) -> float:
        """The intercept the KKT conditions give for standard-form α (LIBSVM's rule).

        The mean of −yₜ∇ₜ over the free multipliers, else the midpoint of the
        interval the bounded ones allow (:func:`margin_opt.kkt.intercept_from_gradient`).
        0 without intercept.

        Parameters
        ----------
        alpha : array-like of shape (n_variables,)

        Returns
        -------
        b : float
        """
        alpha = self._check_alpha(alpha)
        if not self.fit_intercept:
            return 0.0
        qp = self._qp
        f0 = self.data.combination(self.coefficients(alpha))
        return kkt.intercept_from_gradient(qp.y, alpha, self._gradient(alpha, f0), qp.upper,
                                           zero_scale=self._alpha_scale(alpha))

    def support_indices(self, alpha) -> np.ndarray:
        """Data rows with a nonzero multiplier: the support vectors of the exported model.

        Every multiplier that is not exactly 0 counts, so that the fitted model
        (``dual_coef_`` on ``support_vectors_``) is the very function the certificate
        reads.  An interior-point answer's multipliers that are negligible are set to
        exactly 0 before (:meth:`drop_negligible`), and the certificate is computed on
        that result.

        Returns
        -------
        support : ndarray of int
            Sorted data rows.
        """
        rows = np.zeros(self._qp.n_data, dtype=bool)      # sorted, each row once
        rows[self._qp.data_index[alpha != 0]] = True
        return np.flatnonzero(rows)

    def drop_negligible(self, alpha, decision):
        """α with the multipliers set to 0 whose sum moves f on the training points by
        at most :data:`SUPPORT_BUDGET` · max(1, max|f|), or None when none is dropped.

        An interior-point solver returns αₜsₜ ≈ μ > 0 instead of exact zeros.  A
        multiplier is a candidate when αₜ ≤ SV_THRESHOLD·scale or αₜ/scale < (sₜ)₊
        (scale = the largest finite Cᵢ, or max α for the hard margin: its constraint
        more slack than it is active).  All candidates are dropped when their exact
        effect Σ yₜαₜK(xᵢ, x_{index[t]}) on every training point is within the budget;
        else, for a kernel PSD by construction, those of smallest effect while the
        Cauchy–Schwarz bound abs(Σ yₜαₜK(x, xⱼ)) ≤ √K(x, x) · Σ αₜ√Kⱼⱼ stays within it;
        else none.  The certificate is then computed on the result, so that the answer
        it vouches for is the exported model (``support_``, ``dual_coef_``).

        Parameters
        ----------
        alpha : ndarray of shape (n_variables,)
        decision : ndarray of shape (n_samples,)
            f on the training points (with b).

        Returns
        -------
        alpha : ndarray of shape (n_variables,) or None
        """
        qp = self._qp
        up = qp.upper
        finite = up[np.isfinite(up)]
        scale = float(finite.max()) if finite.size else float(np.max(alpha, initial=0.0))
        if scale <= 0:
            return None
        s = self._margins(decision)
        keep = (alpha > SV_THRESHOLD * scale) & (alpha / scale >= np.maximum(0.0, s))
        cand = np.flatnonzero((alpha != 0) & ~keep)
        if cand.size == 0:
            return None
        budget = SUPPORT_BUDGET * max(1.0, float(np.abs(decision).max(initial=0.0)))
        dropped = np.zeros_like(alpha)
        dropped[cand] = alpha[cand]
        effect = self.data.combination(self.coefficients(dropped))
        if float(np.abs(effect).max(initial=0.0)) > budget:
            if not self.data.psd_by_construction:
                return None
            root = self.data.diag_root()
            cost = np.abs(alpha[cand]) * root[qp.data_index[cand]]
            order = np.argsort(cost, kind="stable")
            total = np.cumsum(cost[order]) * float(root.max(initial=0.0))
            cand = cand[order[:int(np.searchsorted(total, budget, side="right"))]]
            if cand.size == 0:
                return None
        alpha = alpha.copy()
        alpha[cand] = 0.0
        return alpha

    def _build(self, alpha, b, decision, f0, reg, *, w=None, w_factor=None, beta=None,
               **meta) -> Solution:
        qp = self._qp
        s = self._margins(decision)
        xi = np.maximum(0.0, -s)
        coef = self.coefficients(alpha)
        primal = reg + self._slack_cost(xi) + kkt.intercept_cost(qp, b)
        dual = -(0.5 * float(coef @ f0) + float(qp.p @ alpha)) - self._diag_term(alpha)
        support = self.support_indices(alpha) if beta is None else np.flatnonzero(beta)
        variables = self._variables(alpha, xi, w=w, w_factor=w_factor, beta=beta)
        return Solution(variables=variables, dual_coef=(coef if beta is None else beta)[None, :],
                        intercept=np.array([float(b)]), decision=decision,
                        primal_objective=primal, dual_objective=dual, support_=support, **meta)

    def solution_from_standard(self, alpha, b=None, **meta) -> Solution:
        """A :class:`Solution` from standard-form multipliers α (any solver's).

        Parameters
        ----------
        alpha : array-like of shape (n_variables,)
            Copied.
        b : float, optional
            Intercept; when None, :meth:`kkt_intercept`.
        **meta
            Envelope fields (``method``, ``backend``, ``status``, ``n_iter``, ``message``).

        Returns
        -------
        solution : Solution

        Raises
        ------
        ValueError
            α of the wrong shape or with non-finite entries.
        """
        alpha = self._check_alpha(alpha)
        coef = self.coefficients(alpha)
        f0 = self.data.combination(coef)
        given = b is not None
        if not self.fit_intercept:
            b = 0.0
        elif b is None:
            b = self.kkt_intercept(alpha)
        pruned = self.drop_negligible(alpha, f0 + float(b))
        if pruned is not None:          # the certificate reads the exported model
            alpha = pruned
            coef = self.coefficients(alpha)
            f0 = self.data.combination(coef)
            if self.fit_intercept and not given:
                b = self.kkt_intercept(alpha)
        w = self.data.weights(coef) if self.explicit_w else None
        return self._build(alpha, float(b), f0 + float(b), f0, 0.5 * float(coef @ f0), w=w,
                           **meta)

    def solution_from_dual(self, *arrays, b=None, **meta) -> Solution:
        """A :class:`Solution` from the model's dual variables (any solver's).

        Called as ``solution_from_dual(alpha, b)`` for the SVC and
        ``solution_from_dual(alpha, alpha_star, b)`` for the SVR (the names are
        :attr:`dual_names`; ``b`` may also be passed by keyword).

        Parameters
        ----------
        *arrays : array-like of shape (n_samples,)
            The dual vectors in the order of :attr:`dual_names` (copied), optionally
            followed by the intercept b.
        b : float, optional
            Intercept; when None the KKT rule (:meth:`kkt_intercept`): the mean over
            the free multipliers (for the SVC, of yᵢ − ΣⱼαⱼyⱼKᵢⱼ; for the SVR,
            r ∓ ε), else the midpoint of the interval the bounded ones allow.
        **meta
            Envelope fields: ``method``, ``backend``, ``status``, ``n_iter``, ``message``.

        Returns
        -------
        solution : Solution

        Raises
        ------
        ValueError
            Arrays of the wrong shape or with non-finite entries.
        TypeError
            The wrong number of arrays.
        """
        k = len(self.dual_names)
        if len(arrays) not in (k, k + 1):
            raise TypeError(f"pass the arrays {', '.join(self.dual_names)} (and b), got "
                            f"{len(arrays)} positional arguments.")
        if len(arrays) == k + 1:
            b = arrays[k]
        parts = []
        if b is not None:
            b = _real_scalar(b, "b")
        for v, name in zip(arrays[:k], self.dual_names, strict=True):
            v = _real_array(v, name)
            if v.shape != (self.n_samples,) or not np.all(np.isfinite(v)):
                raise ValueError(f"{name} must be a finite array of shape ({self.n_samples},).")
            parts.append(v)
        return self.solution_from_standard(np.concatenate(parts), b, **meta)

    def solution_from_primal(self, w, b, *, alpha=None, beta=None, exact_band=kkt.EXACT_BAND,
                             **meta) -> Solution:
        """A :class:`Solution` from primal weights (in the coordinates of :meth:`features`).

        When ``alpha`` is not given (subgradient methods, the hinge or loss forms)
        it is filled from the subgradient optimality condition and made exactly
        feasible (:func:`margin_opt.kkt.multipliers_from_primal`).

        Parameters
        ----------
        w : ndarray of shape (r,)
        b : float
        alpha : array-like of shape (n_variables,), optional
        beta : ndarray of shape (n_samples,), optional
            Representer coefficients the solver returned (f = Kβ + b).
        exact_band : int, default=2000
            The fill's bands of up to this many variables are solved exactly, larger
            ones by projected gradient (see
            :func:`~margin_opt.kkt.multipliers_from_primal`); unused with ``alpha``.

        Returns
        -------
        solution : Solution
        """
        Phi, w, b, decision = self._primal_decision(w, b)
        reg = 0.5 * float(w @ w)
        if alpha is None:
            s = self._margins(decision)
            primal = reg + self._slack_cost(np.maximum(0.0, -s)) + \
                kkt.intercept_cost(self._qp, b)
            alpha = kkt.multipliers_from_primal(self._qp, Phi, w, decision,
                                                dual_objective=self._dual_objective,
                                                primal_objective=primal, exact_band=exact_band)
        alpha = self._check_alpha(alpha)
        alpha = _first(self.drop_negligible(alpha, decision), alpha)
        f0 = self.data.combination(self.coefficients(alpha))
        explicit = self.explicit_w
        return self._build(alpha, b, decision, f0, reg, w=w if explicit else None,
                           w_factor=None if explicit else w, beta=beta, **meta)

    def solution_from_weights(self, w, b, alpha, **meta) -> Solution:
        """A :class:`Solution` with w in the coordinates of :meth:`KernelData.w_basis`
        (the features of an explicit w, or a polynomial kernel's monomials).

        Parameters
        ----------
        w : ndarray of shape (r,)
        b : float
        alpha : array-like of shape (n_variables,)
        **meta
            Envelope fields.

        Returns
        -------
        solution : Solution
            Its ``w`` is the given w; its decision values are Φw + b.

        Raises
        ------
        ValueError
            The problem has no such coordinates, or w has the wrong size.
        """
        Phi = self.data.w_basis()
        w = np.asarray(w, dtype=float).ravel()
        if Phi is None or w.size != Phi.shape[1]:
            raise ValueError("w must have one entry per column of problem.data.w_basis() "
                             "(the features, or a polynomial kernel's monomials).")
        b = float(b) if self.fit_intercept else 0.0
        alpha = self._check_alpha(alpha)
        decision = np.asarray(Phi @ w).ravel() + b
        alpha = _first(self.drop_negligible(alpha, decision), alpha)
        f0 = self.data.combination(self.coefficients(alpha))
        return self._build(alpha, b, decision, f0, 0.5 * float(w @ w), w=w, **meta)

    def _primal_decision(self, w, b):
        """(Φ, w, b, f) of a primal point: w checked against Φ, b = 0 without intercept."""
        Phi = self.features()
        w = np.asarray(w, dtype=float).ravel()
        if w.shape[0] != Phi.shape[1]:
            raise ValueError(f"w has {w.shape[0]} entries, expected {Phi.shape[1]}.")
        b = float(b) if self.fit_intercept else 0.0
        return Phi, w, b, np.asarray(Phi @ w).ravel() + b

    def solution_from_representer(self, beta, b, **meta) -> Solution:
        """A :class:`Solution` from representer coefficients, f = Kβ + b.

        β reproduces the function the solver found and is the solution's
        ``dual_coef``; the multipliers are filled from the subgradient condition for
        the certificate.
        """
        beta = np.asarray(beta, dtype=float).ravel()
        return self.solution_from_primal(self.data.weights(beta), b, beta=beta, **meta)

    def _dual_objective(self, alpha) -> float:
        coef = self.coefficients(alpha)
        return -(0.5 * float(coef @ self.data.combination(coef)) + float(self._qp.p @ alpha)) \
            - self._diag_term(alpha)

    def _alpha_from_coefficients(self, beta) -> np.ndarray:  # pragma: no cover - abstract
        """Standard-form α whose coefficients are β (the reading of a LIBSVM answer)."""
        raise NotImplementedError

    def solution_from_sklearn(self, estimator) -> Solution:
        """A Solution from a fitted scikit-learn ``SVC``/``SVR`` on the same data.

        See :meth:`margin_opt.solution.Solution.from_sklearn`.
        """
        if not hasattr(estimator, "dual_coef_"):
            raise ValueError("the scikit-learn estimator is not fitted; call fit(X, y) first.")
        self._check_sklearn(estimator)
        if estimator.shape_fit_[0] != self.n_samples:
            raise ValueError(f"the estimator was fitted on {estimator.shape_fit_[0]} samples, "
                             f"the problem has {self.n_samples}.")
        coef = estimator.dual_coef_
        coef = np.asarray(coef.toarray() if hasattr(coef, "toarray") else coef)[0]
        beta = np.zeros(self.n_samples)
        beta[libsvm_rows(self._instance_weight)[estimator.support_]] = coef
        n_iter = getattr(estimator, "n_iter_", None)
        return self.solution_from_standard(
            self._alpha_from_coefficients(beta), float(estimator.intercept_[0]),
            method="external", backend=f"LIBSVM (sklearn.svm.{type(estimator).__name__})",
            n_iter=None if n_iter is None else int(np.ravel(n_iter)[0]))

    def _check_sklearn(self, estimator) -> None:
        """Model-specific checks of a scikit-learn estimator (default: none)."""

    # ------------------------------------------------------------------ certificate
    def _check_solution(self, solution) -> None:
        if not isinstance(solution, Solution):
            raise TypeError(f"certify takes a margin_opt Solution, got "
                            f"{type(solution).__name__}; pass raw arrays by keyword instead.")
        if not isinstance(solution.variables, self.variables_type):
            raise ValueError(
                f"this is a {type(solution.variables).__name__[:-9]} solution, but the problem "
                f"is {type(self).__name__}: certify a solution of this problem.")
        m = self._qp.n_variables
        if np.size(solution.variables.standard_alpha) != m or \
                np.size(solution.intercept) != 1:
            raise ValueError(f"the solution has {np.size(solution.variables.standard_alpha)} "
                             f"multipliers but this problem has {m}: it belongs to another "
                             "problem (other data).")

    def certify(self, solution=None, tol=1e-6, *, b=None, suboptimality=False,
                **dual) -> Certificate:
        """Check the KKT conditions and the duality gap of an answer.

        Parameters
        ----------
        solution : Solution, optional
            Any solver's answer (ours, LIBSVM's via :meth:`Solution.from_sklearn`).
        tol : float, default=1e-6
            Tolerance on each normalized residual and on the margins in the table
            (the support-vector table of the SVC, the tube table of the SVR).  Hold
            an iterative method to its own accuracy (e.g. LIBSVM's ``tol``).
        b : float, optional
            With raw arrays: their intercept (from the KKT conditions when None).
        suboptimality : bool, default=False
            Certify the accuracy of the objective instead of optimality (the
            certificate of a first-order method held to its documented accuracy,
            e.g. subgradient descent and Pegasos at 1e-2): the primal point is feasible,
            the multipliers are exactly feasible (box and yᵀα = Δ, to
            :data:`FEASIBILITY_TOL` of their scale), and P − D ≤ tol · D, so that by
            weak duality (D ≤ P* ≤ P) the answer's objective P is within a relative
            tol of the optimum P*, whatever the scale of the problem (C = 1e-300
            included).  The KKT residuals are reported (quantities ``kkt_*``), not held:
            a first-order method reaches its objective's accuracy long before its w
            and its multipliers satisfy the KKT conditions to the same tolerance.
        **dual : array-like of shape (n_samples,)
            Raw dual variables from an external solver instead of ``solution``, by
            the names of :attr:`dual_names`: ``alpha=`` (SVC), ``alpha=`` and
            ``alpha_star=`` (SVR).

        Returns
        -------
        certificate : Certificate
            The checks of :func:`margin_opt.kkt.dual_qp_checks` and the model's table
            (with ``suboptimality``: the checks ``primal_residual``,
            ``dual_feasibility`` and ``suboptimality``).

        Raises
        ------
        ValueError
            No answer given, unknown keywords, or a solution of another problem.
        """
        tol = check_positive(tol, "tol")
        if solution is None:
            unknown = sorted(set(dual) - set(self.dual_names))
            missing = [n for n in self.dual_names if dual.get(n) is None]
            if unknown or missing:
                raise ValueError(f"pass a Solution or the raw arrays "
                                 f"{', '.join(self.dual_names)} (and b)"
                                 + (f"; unknown keywords {unknown}." if unknown else "."))
            solution = self.solution_from_dual(*(dual[n] for n in self.dual_names), b=b)
        elif dual or b is not None:
            raise ValueError("pass either a Solution or raw arrays, not both.")
        self._check_solution(solution)
        qp = self._qp
        v = solution.variables
        alpha = self._certified_alpha(np.asarray(v.standard_alpha, dtype=float))
        kept = np.isfinite(qp.upper) if qp.diag is None else \
            np.isfinite(qp.upper) | (qp.diag > 0)
        xi = np.where(kept, np.asarray(v.standard_xi, dtype=float), 0.0)
        b = solution.b if self.fit_intercept else 0.0
        coef = self.coefficients(alpha)
        f0 = self.data.combination(coef)
        fp0, reg, stationarity, stat_desc = self.data.primal_point(v, coef, f0)
        quad, through_w = None, []
        level = self._unreadable_level(coef, tol) if v.w is not None else None
        if level is not None:
            # f = Kβ cannot be read to tol: the gradient and βᵀKβ are read through w, and
            # β must still reproduce f = Φw to within what double precision can see
            w_dual = np.asarray(self.data.w_basis().T @ coef).ravel()
            quad = float(w_dual @ w_dual)
            # β in double reproduces f only to about the level of its sums on the user's
            # data (where Kβ itself is summed on centred data, those are less precise)
            level = max(level, self.data.rounding_level(coef, uncentred=True)[0])
            through_w = [Check("f_consistency", float(np.abs(fp0 - f0).max(initial=0.0)),
                               tol + 2 * level, "max|Φw − Kβ| (units of f) ≤ tol + 2 × the "
                               f"rounding level of Kβ ({level:.1g}): f read through w")]
        res = kkt.dual_qp_checks(
            qp, alpha, xi, kkt.PrimalReading(f0, fp0 + b, reg, stationarity, stat_desc,
                                             f0_gradient=fp0 if through_w else None,
                                             quad=quad, b=b),
            tol, self._alpha_scale(alpha))
        checks_kkt = self._gap_at_rounding(res, alpha, coef, level, tol)
        quantities = {"primal_objective": res.primal_objective,
                      "dual_objective": res.dual_objective,
                      "duality_gap_abs": res.primal_objective - res.dual_objective, "b": b}
        checks, table, more = self._certificate_parts(res, alpha, solution, tol)
        quantities.update(more)
        psd_checks, notes = self._psd_part()
        who = solution.method + (f", {solution.backend}" if solution.backend else "")
        if suboptimality:
            return self._suboptimality_certificate(res, alpha, tol, quantities, psd_checks,
                                                   notes, who)
        return Certificate(checks_kkt + through_w + checks + psd_checks, table, quantities,
                           title=f"{self.certificate_name} certificate ({who})", notes=notes)

    def _gap_at_rounding(self, res, alpha, coef, level, tol) -> list:
        """``res.checks`` with the duality gap held to ``tol`` plus what double precision
        cannot resolve: where f = Kβ is known only to its rounding level (units of f;
        ``level`` where the caller has it, else read here when the gap fails), every
        slack ξₜ is known to that level, so P − D to 2·level·Σₜuₜ (the bounds; Σα where
        they are infinite), relative to max(|P|, |D|).  The gap is otherwise relative to
        the objective alone (:func:`margin_opt.kkt.relative_gap`)."""
        gap = next((c for c in res.checks if c.name == "duality_gap"), None)
        if gap is None or gap.passed:
            return res.checks
        if level is None:
            level = self.data.rounding_level(coef)[0]
        qp = self._qp
        finite = np.isfinite(qp.upper)
        weight = float(np.sum(qp.upper[finite])) + float(np.sum(np.abs(alpha[~finite])))
        P, D = res.primal_objective, res.dual_objective
        floor = 2.0 * level * weight / max(abs(P), abs(D), kkt.GAP_FLOOR)
        return [Check(c.name, c.value, tol + floor, c.description + f" ≤ tol + {floor:.2g}, "
                      f"the rounding of P − D where f is known to {level:.1g}")
                if c.name == "duality_gap" else c for c in res.checks]

    def _suboptimality_certificate(self, res, alpha, tol, quantities, psd_checks, notes, who):
        """The certificate of :meth:`certify` with ``suboptimality``: P within a relative
        ``tol`` of the optimum, proved by weak duality with feasible multipliers."""
        qp = self._qp
        finite = np.isfinite(qp.upper)
        # the multipliers' own scale (not max(1, C): with C = 1e-300 every α is ~1e-300)
        scale = max(float(np.max(qp.upper[finite], initial=0.0)),
                    float(np.max(np.abs(alpha), initial=0.0)), np.finfo(float).tiny)
        box = max(float(np.max(-alpha, initial=0.0)),
                  float(np.max(alpha[finite] - qp.upper[finite], initial=0.0)))
        eq = abs(float(qp.y @ alpha) - qp.delta) if qp.equality else 0.0
        P, D = res.primal_objective, res.dual_objective
        if D > 0:
            rel = abs(P - D) / D
        else:       # D ≤ 0 ≤ P* ≤ P: a relative accuracy is proved only by P = 0
            rel = 0.0 if P == D == 0 else float("inf")
        checks = [
            res.checks[0],
            Check("dual_feasibility", max(box, eq) / scale, FEASIBILITY_TOL,
                  "box and yᵀα = Δ ÷ max(C, max α): D is a lower bound on P* only at a "
                  "feasible α"),
            Check("suboptimality", rel, tol,
                  "(P − D) / D ≥ (P − P*) / P* (weak duality: D ≤ P* ≤ P)"),
        ]
        quantities = {**quantities, "duality_gap": rel,
                      **{f"kkt_{c.name}": c.value for c in res.checks[1:]
                         if c.name != "duality_gap"}}
        notes = [f"an accuracy certificate: the objective is proved within a relative {tol:g} "
                 "of the optimum; the KKT residuals (kkt_*) are reported, not held, as for "
                 "a first-order method's answer.", *notes]
        return Certificate(checks + psd_checks, (), quantities,
                           title=f"{self.certificate_name} accuracy certificate ({who})",
                           notes=notes)

    def _unreadable_level(self, coef, tol):
        """The rounding level of f = Kβ where it is ≥ tol/10 (f cannot be read to tol in
        double precision), else None: a bound first, the exact level only where the
        bound does not settle it."""
        if self.data.rounding_level(coef, exact=False)[0] < 0.1 * tol:
            return None
        level = self.data.rounding_level(coef)[0]
        return level if level >= 0.1 * tol else None

    def _psd_part(self):
        """The ``psd_kernel`` check for kernels that are not PSD by construction."""
        if self.data.psd_by_construction:
            return [], []
        rep = self.data.psd_report()
        desc = f"max(0, −λ_min)/max(1, ‖K‖) by {rep.method}"
        if rep.psd is True:
            return [Check("psd_kernel", 0.0, 0.0, desc)], []
        if rep.psd is False:
            value = max(0.0, -rep.lambda_min) / rep.scale
            note = (f"the kernel matrix is not positive semidefinite (λ_min = "
                    f"{rep.lambda_min:.3g}, {rep.method}): the problem is not convex, and the "
                    "KKT conditions only make this a stationary point of a non-convex problem, "
                    "not an optimum.")
            return [Check("psd_kernel", max(value, np.finfo(float).tiny), 0.0, desc)], [note]
        note = (f"convexity could not be verified ({rep.method}): the certificate cannot vouch "
                "that this stationary point is an optimum.")
        return [Check("psd_kernel", float("nan"), 0.0, "not decided: " + rep.method)], [note]

    def _certified_alpha(self, alpha) -> np.ndarray:
        """The multipliers the certificate reads (a canonical representative)."""
        return alpha

    def warm_start(self, alpha) -> np.ndarray:
        """A good starting point for a dual backend from standard-form α (default: α)."""
        return np.asarray(alpha, dtype=float)

    def _certificate_parts(self, res, alpha, solution, tol):  # pragma: no cover - abstract
        """(extra checks, table rows, quantities) of the model's certificate."""
        raise NotImplementedError


def _first(a, b):
    """``a`` unless it is None, else ``b``."""
    return b if a is None else a


def _real_array(v, name) -> np.ndarray:
    """``v`` as a new 1-D float array; ValueError for complex or non-numeric values (numpy
    would drop an imaginary part with only a ComplexWarning)."""
    a = np.asarray(v)
    if np.iscomplexobj(a):
        raise ValueError(f"{name} is complex; the multipliers of these problems are real: "
                         f"pass the real part (np.real({name})) if the imaginary part is "
                         "round-off, else check the solver.")
    try:
        return np.array(a, dtype=float).ravel()
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be an array of real numbers, got dtype {a.dtype}.") \
            from None


def _real_scalar(v, name) -> float:
    """``v`` as a float; ValueError unless it is one real number."""
    a = np.asarray(v)
    if a.size != 1 or np.iscomplexobj(a) or a.dtype.kind not in "biuf":
        raise ValueError(f"{name} must be one real number (the intercept), got "
                         f"{v!r}.")
    return float(a.ravel()[0])
