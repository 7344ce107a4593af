"""The :class:`Solution` every method returns: an envelope around typed variables.

The envelope (status, method, backend, iterations, timings, history, objectives,
the raw solver output) is the same for every model; the variables are typed per
model family (:class:`SVCVariables`, :class:`SVRVariables`, :class:`OneClassVariables`
and, for k outputs, :class:`MulticlassVariables`).  Every kernel model's decision functions are
``f_k(x) = Σⱼ dual_coef[k, j] K(x, xⱼ) + intercept[k]``, so ``dual_coef`` and
``intercept`` are fields of the envelope with shapes that hold for any number of
functions.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

__all__ = ["Solution", "SVCVariables", "SVRVariables", "OneClassVariables", "MulticlassVariables",
           "STATUSES"]

#: cvxpy's status vocabulary, used by every backend (``max_iter``/``stopped`` for
#: iterative solvers that ended without their convergence test; ``stalled`` for one
#: whose progress test stopped it: no proof of anything, the caller falls back).
STATUSES = ("optimal", "optimal_inaccurate", "max_iter", "stopped", "stalled", "infeasible",
            "unbounded")


@dataclass(eq=False, kw_only=True)
class _KernelVariables:
    """What every kernel model's primal point may carry beside its multipliers.

    Attributes
    ----------
    w : ndarray of shape (n_features,) or None
        Primal weights where they are explicit (linear kernel or a feature map), or
        an answer refined in the primal on a polynomial kernel's monomials (their
        coordinates: ``problem.data.w_basis()``).
    w_factor : ndarray of shape (r,) or None
        A kernel primal answer's weights in the coordinates of the kernel factor
        K = LLᵀ (the cvxpy primal, or a representer answer), else None.
    beta : ndarray of shape (n_samples,) or None
        Representer coefficients f = Kβ + b when the solver returned those itself
        (kernelized Pegasos); the multipliers were then filled for the certificate.
    """

    w: np.ndarray | None = None
    w_factor: np.ndarray | None = None
    beta: np.ndarray | None = None


@dataclass(eq=False, kw_only=True)
class _OneMultiplierVariables(_KernelVariables):
    """One multiplier and one slack per sample: the standard form's own variables."""

    alpha: np.ndarray
    xi: np.ndarray

    @property
    def standard_alpha(self) -> np.ndarray:
        """α of the standard dual QP, shape (n_samples,)."""
        return self.alpha

    @property
    def standard_xi(self) -> np.ndarray:
        """Primal slack of each standard-form variable, shape (n_samples,)."""
        return self.xi


@dataclass(eq=False, kw_only=True)
class SVCVariables(_OneMultiplierVariables):
    """Variables of the binary C-SVC (and hard margin).

    Attributes
    ----------
    alpha : ndarray of shape (n_samples,)
        Dual variables αᵢ ∈ [0, Cᵢ].
    xi : ndarray of shape (n_samples,)
        Slacks ξᵢ = max(0, 1 − yᵢfᵢ) (zeros are not enforced for the hard margin:
        a positive ξᵢ there is a primal infeasibility the certificate reports).
    """


@dataclass(eq=False, kw_only=True)
class SVRVariables(_KernelVariables):
    """Variables of the ε-SVR.

    Attributes
    ----------
    alpha, alpha_star : ndarray of shape (n_samples,)
        Multipliers a of the upper tube edge and â of the lower one, in [0, Cᵢ].
    xi, xi_star : ndarray of shape (n_samples,)
        Slacks above and below the tube.
    """

    alpha: np.ndarray
    alpha_star: np.ndarray
    xi: np.ndarray
    xi_star: np.ndarray

    @property
    def standard_alpha(self) -> np.ndarray:
        """α = [a; â] of LIBSVM's 2n-variable form, shape (2 n_samples,)."""
        return np.r_[self.alpha, self.alpha_star]

    @property
    def standard_xi(self) -> np.ndarray:
        """[ξ; ξ*], shape (2 n_samples,)."""
        return np.r_[self.xi, self.xi_star]


@dataclass(eq=False, kw_only=True)
class OneClassVariables(_OneMultiplierVariables):
    """Variables of the one-class SVM, in LIBSVM's scale (that of ``to_standard_form``).

    Attributes
    ----------
    alpha : ndarray of shape (n_samples,)
        Multipliers αᵢ ∈ [0, sᵢ] with Σα = ν·Σs (sᵢ the sample weights, 1 by default):
        νΣs times those of Schölkopf et al.'s dual (0 ≤ αᵢ ≤ sᵢ/(νΣs), Σα = 1).
    xi : ndarray of shape (n_samples,)
        Slacks ξᵢ = max(0, ρ − ⟨w, φ(xᵢ)⟩) = max(0, −f(xᵢ)), in the same scale.
    """


@dataclass(eq=False, kw_only=True)
class MulticlassVariables(_KernelVariables):
    """Variables of a joint multiclass problem with k decision functions.

    Attributes
    ----------
    alpha : ndarray of shape (n_samples, n_classes)
        Dual variables.
    xi : ndarray of shape (n_samples,)
        Slacks.
    """

    alpha: np.ndarray
    xi: np.ndarray


@dataclass(eq=False, kw_only=True, repr=False)
class Solution:
    """A primal–dual answer to a margin problem, from any solver.

    Whichever side a method solves, the other is recovered by the problem, so every
    field is filled.  Build one with ``problem.solve(...)``, from raw arrays with
    ``problem.solution_from_dual(...)``, or from a fitted scikit-learn estimator with
    :meth:`from_sklearn`.

    Attributes
    ----------
    variables : SVCVariables, SVRVariables or MulticlassVariables
        The model's primal and dual variables.
    dual_coef : ndarray of shape (n_functions, n_samples)
        Coefficients of K(x, xⱼ) in each decision function: yⱼαⱼ for the SVC,
        aⱼ − âⱼ for the SVR, β for a representer answer.
    intercept : ndarray of shape (n_functions,)
        b of each decision function (0 without intercept).
    decision : ndarray of shape (n_samples,) or (n_samples, n_functions)
        f(xᵢ) on the training points (from the primal variables).
    primal_objective : float
        The primal objective at the primal point (½‖w‖² + Σ Cᵢξᵢ for the SVC).
    dual_objective : float
        The dual objective at the dual point, in its maximized form
        −(½αᵀQα + pᵀα) of the standard dual (1ᵀα − ½αᵀQα for the SVC;
        LIBSVM prints the negative as "obj").
    support_ : ndarray of int
        Indices of the support vectors: the points whose coefficient is nonzero,
        read robustly for interior-point answers (a multiplier counts when it
        exceeds 1e-12·max C and its constraint is more active than slack; see
        :meth:`margin_opt.problems.base.KernelProblem.support_indices`).
    status : str
        One of :data:`STATUSES`.
    method : str
        The registry name (``"cvxpy-dual"``, ``"smo"``, ...) or ``"external"``.
    backend : str or None
        The underlying solver (``"CLARABEL"``, ``"smo"``, ``"LIBSVM (sklearn.svm.SVC)"``).
    n_iter : int or None
        Iterations the solver reported.
    timings : dict of str to float
        Seconds: ``build`` (the formulation or standard form), ``compile``/``solve``/
        ``unpack`` (cvxpy) or the backend's own ``setup``/``solve``, and ``total``.
    history : dict of str to ndarray
        Per-iteration traces of iterative methods (``"objective"`` in the C scale,
        ``"step"``: the iteration each entry belongs to).
    message : str
        The solver's last word.
    formulation : str or None
        The formulation solved: ``"slack"``, ``"hinge"``, ``"loss"`` (cvxpy primal),
        the dual's quadratic form (``"dual: quad_form"``...), or the standard form.
    raw : object
        The solver's own output (the backend's OptimizeResult, or the cvxpy Problem).
    certificate : Certificate or None
        The certificate the solve path computed (``problem.solve(certify=...)``).
    attempts : list of dict
        With ``fallback``: the answers tried before this one (method, status, the
        checks that failed, seconds).
    """

    variables: object
    dual_coef: np.ndarray
    intercept: np.ndarray
    decision: np.ndarray
    primal_objective: float
    dual_objective: float
    support_: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=int))
    status: str = "optimal"
    method: str = "external"
    backend: str | None = None
    n_iter: int | None = None
    timings: dict = field(default_factory=dict)
    history: dict = field(default_factory=dict)
    message: str = ""
    formulation: str | None = None
    raw: object = None
    certificate: object = None
    attempts: list = field(default_factory=list)

    def record_certificate(self, certificate, attempts=None) -> Solution:
        """Record the certificate the solve path computed for this answer.

        Parameters
        ----------
        certificate : Certificate
            This answer's certificate (``problem.certify(self)``).
        attempts : list of dict, optional
            The answers tried before this one (``fallback``); left as it is when None.

        Returns
        -------
        self : Solution
        """
        self.certificate = certificate
        if attempts is not None:
            self.attempts = attempts
        return self

    def __getstate__(self):
        """Pickle without a cvxpy Problem in ``raw`` (its solver objects do not pickle)."""
        state = self.__dict__.copy()
        if type(self.raw).__module__.split(".")[0] == "cvxpy":
            state["raw"] = None
        return state

    # ---------------------------------------------------------------- the variables
    def _var(self, name):
        try:
            return getattr(self.variables, name)
        except AttributeError:
            raise AttributeError(f"a {type(self.variables).__name__} solution has no "
                                 f"{name!r}") from None

    @property
    def alpha(self) -> np.ndarray:
        """The dual variables α (for the SVR: the multipliers a of the upper edge)."""
        return self._var("alpha")

    @property
    def alpha_star(self) -> np.ndarray:
        """â of the SVR (AttributeError for other models)."""
        return self._var("alpha_star")

    @property
    def xi(self) -> np.ndarray:
        """Slacks ξ (for the SVR: above the tube)."""
        return self._var("xi")

    @property
    def w(self):
        """Explicit primal weights (in the coordinates of the problem's
        ``data.w_basis()``: the features, or a polynomial kernel's monomials), or None."""
        return self._var("w")

    @property
    def b(self) -> float:
        """The intercept of a single decision function."""
        if np.size(self.intercept) != 1:
            raise AttributeError(f"this solution has {np.size(self.intercept)} intercepts; "
                                 "read Solution.intercept.")
        return float(np.ravel(self.intercept)[0])

    @property
    def duality_gap(self) -> float:
        """Primal minus dual objective (≥ 0 up to solver accuracy)."""
        return float(self.primal_objective - self.dual_objective)

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
            With ``method="external"`` and ``backend="LIBSVM (sklearn.svm.SVC)"``.

        Raises
        ------
        ValueError
            If the estimator is not fitted or does not match the problem's size.
        TypeError
            ``problem`` is not a problem (e.g. None).
        """
        if not hasattr(problem, "solution_from_sklearn"):
            raise TypeError(
                f"Solution.from_sklearn needs the problem the estimator solved (an SVMProblem "
                f"or SVRProblem on the same data, kernel and C), got {type(problem).__name__}: "
                "e.g. Solution.from_sklearn(sk, SVMProblem(X, y, C=sk.C, kernel=sk.kernel)).")
        return problem.solution_from_sklearn(estimator)

    # ---------------------------------------------------------------- displays
    def _display_rows(self) -> list:
        """(name, value) pairs of the key numbers and the shapes, no arrays."""
        def shape(a):
            return "None" if a is None else f"array{tuple(np.shape(a))}"

        var = self.variables
        fields = getattr(var, "__dataclass_fields__", {})
        parts = ", ".join(f"{k} {shape(getattr(var, k))}" for k in fields
                          if getattr(var, k) is not None)
        gap = self.duality_gap
        rows = [("status", self.status), ("method", f"{self.method} ({self.backend})"),
                ("primal_objective", f"{self.primal_objective:.10g}"),
                ("dual_objective", f"{self.dual_objective:.10g}"),
                ("duality_gap", f"{gap:.3e} (relative "
                                f"{abs(gap) / max(1.0, abs(self.primal_objective)):.1e})"),
                ("intercept", ", ".join(f"{v:.6g}" for v in np.ravel(self.intercept)[:6])
                 + (" …" if np.size(self.intercept) > 6 else "")),
                ("support_", f"{self.support_.size} of {np.shape(self.decision)[0]} samples"),
                ("dual_coef", shape(self.dual_coef)),
                ("variables", f"{type(var).__name__}({parts})"),
                ("n_iter", str(self.n_iter)),
                ("time", f"{self.timings['total']:.3g} s" if "total" in self.timings else "—")]
        if self.formulation:
            rows.append(("formulation", self.formulation))
        if self.certificate is not None:
            rows.append(("certificate", f"{'OK' if self.certificate.ok else 'FAILED'} "
                                        f"(largest KKT residual "
                                        f"{self.certificate.kkt_violation:.2e})"))
        if self.attempts:
            rows.append(("attempts", ", ".join(str(a.get("method", "?"))
                                               for a in self.attempts)))
        if self.message:
            rows.append(("message", self.message[:200]))
        return rows

    def __repr__(self) -> str:
        """A screenful: the key numbers and the arrays' shapes (print the fields for
        the arrays themselves)."""
        return "\n".join(["Solution("] + [f"  {k:<17} {v}" for k, v in self._display_rows()]
                         + [")"])

    def _repr_html_(self) -> str:
        """The key numbers as an HTML table (Jupyter's display), then the certificate's
        tables where the solve path certified the answer."""
        from .display import html_table

        out = html_table(["Solution", ""], self._display_rows())
        if self.certificate is not None and hasattr(self.certificate, "_repr_html_"):
            out += self.certificate._repr_html_()
        return out

    def summary(self) -> dict:
        """Scalars of the solution as a JSON-ready dict."""
        out = {
            "method": self.method,
            "backend": self.backend,
            "status": self.status,
            "primal_objective": float(self.primal_objective),
            "dual_objective": float(self.dual_objective),
            "duality_gap": self.duality_gap,
            "intercept": [float(v) for v in np.ravel(self.intercept)],
            "n_support": int(self.support_.size),
            "n_iter": None if self.n_iter is None else int(self.n_iter),
            "timings": {k: float(v) for k, v in self.timings.items()},
        }
        if np.size(self.intercept) == 1:
            out["b"] = self.b
        return out
