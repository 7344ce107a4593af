"""The ν-SVC and the ν-SVR (Schölkopf et al., 2000) as explicit cvxpy problems.

**ν-SVC.**  Primal, as Schölkopf et al. pose it (with per-sample weights uᵢ, U = Σu;
uᵢ = 1, U = n without weights)::

    min_{w, b, ρ, ξ}  ½‖w‖² − νρ + (1/U) Σᵢ uᵢξᵢ
    s.t.  yᵢ(wᵀφ(xᵢ) + b) ≥ ρ − ξᵢ,  ξᵢ ≥ 0,  ρ ≥ 0,

dual::

    min_α  ½ αᵀQα   s.t.  0 ≤ αᵢ ≤ uᵢ/U,  yᵀα = 0,  eᵀα = ν,   Qᵢⱼ = yᵢyⱼK(xᵢ, xⱼ).

ν ∈ (0, 1] is an upper bound on the fraction of margin errors (ξᵢ > 0) and a lower
bound on the fraction of support vectors (the ν-property).  LIBSVM (Chang and Lin,
2001) solves the dual multiplied through by U — ``0 ≤ α ≤ u``, ``eᵀα = νU`` — with the
equality eᵀα = νU in place of the paper's eᵀα ≥ ν: they are the same problem whenever
the optimal margin ρ is positive (Chang and Lin 2001, Theorem 2; ρ = 0 is the
degenerate case where LIBSVM's rescaling divides by zero and the certificate fails on
``margin_positive``).  In that scale (``to_standard_form``, the Solution, the
certificate) the primal reads

    min ½‖w‖² + Σ uᵢξᵢ + νU·c   s.t.  yᵢ(wᵀφ(xᵢ) + b) + c + ξᵢ ≥ 0,  ξ ≥ 0,

c = −r the multiplier of eᵀα = νU (r = Uρ the margin, LIBSVM's ``r``) and b = −ρ_LIBSVM
the multiplier of yᵀα = 0: the standard form (:class:`~margin_opt.standard_forms.DualQP`)
``y, p = 0, u, Δ = 0, Δ₂ = νU``, solved by the one SMO in its ν mode.

**Equivalent C-SVC.**  At its optimum, the ν-SVC answer α is optimal for
``min ½αᵀQα − r·eᵀα, 0 ≤ α ≤ u, yᵀα = 0`` (the second equality's Lagrangian
relaxation at its multiplier); divided by r, α/r is the C-SVC's optimum with Cᵢ = uᵢ/r
and intercept b/r (LIBSVM's rescaling, ``dual_coef_ = yα/r``, ``intercept_ = −ρ/r``).
The certificate checks exactly that, with the C-SVC's own certificate
(:meth:`NuSVCProblem.equivalent_problem`).

**ν-SVR.**  Primal in LIBSVM's scale (Schölkopf et al.'s with their C equal to LIBSVM's
C times n; Chang and Lin 2011, §2.4), per-sample bounds uᵢ = C·sᵢ::

    min_{w, b, ε, ξ, ξ*}  ½‖w‖² + Σ uᵢ(ξᵢ + ξᵢ*) + ν(Σu)·ε
    s.t.  zᵢ − f(xᵢ) ≤ ε + ξᵢ,  f(xᵢ) − zᵢ ≤ ε + ξᵢ*,  ξ, ξ* ≥ 0,

ε a variable (the tube's width is learned), dual in (a, a*)::

    min ½(a − a*)ᵀK(a − a*) − zᵀ(a − a*)
    s.t.  0 ≤ a, a* ≤ u,  Σ(a − a*) = 0,  Σ(a + a*) = νΣu,

LIBSVM's 2n-variable standard form with p = [−z, z], u = [C·s; C·s], Δ = 0 and
Δ₂ = νΣu.  The multiplier of the second equality is c = ε = −r.  The equivalent
ε-SVR is the ε-SVR with the same C and **ε = −r**, with the same (a, a*) and b —
no rescaling: the relaxed form ``min ½αᵀQα + (p + c)ᵀα`` is the ε-SVR's standard
form with p = [ε − z, ε + z] exactly.  (Where ε < 0, which only a ν > 1 could ask
for, there is no ε-SVR to reduce to, and the certificate says so.)

References
----------
B. Schölkopf, A. J. Smola, R. C. Williamson and P. L. Bartlett, "New support vector
algorithms", Neural Computation 12(5), 2000, 1207–1245 (the ν-SVC and ν-SVR, the
ν-property, Propositions 1 and 5).
C.-C. Chang and C.-J. Lin, "Training ν-support vector classifiers: theory and
algorithms", Neural Computation 13(9), 2001, 2119–2147 (the scaled dual, feasibility
ν ≤ 2min(n₊, n₋)/n, the equivalent C = 1/r).
C.-C. Chang and C.-J. Lin, "LIBSVM: a library for support vector machines", ACM TIST
2(3), 2011, §2.2, §2.4 and §4.2.
"""

from __future__ import annotations

import copy
import numbers
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import numpy as np
from sklearn.utils._param_validation import InvalidParameterError
from sklearn.utils.class_weight import compute_class_weight

from ..certificate import Certificate, Check
from ..kkt import intercept_from_gradient, relative_gap
from ..lazy import lazy_module
from ..solution import SVCVariables, SVRVariables
from ..validation import (
    check_binary_labels,
    check_C,
    check_data,
    check_sample_weight,
)
from . import nu_kkt
from .base import KernelProblem
from .kernel_data import KernelData

if TYPE_CHECKING:
    import cvxpy as cp
else:
    cp = lazy_module("cvxpy")  # imported on first use: the cvxpy forms only

__all__ = ["NuSVCProblem", "NuSVRProblem", "NuSVCVariables", "NuSVRVariables",
           "check_nu_range", "check_nu_svc_feasible", "largest_feasible_nu"]


def check_nu_range(nu, owner: str) -> float:
    """ν as a float in (0, 1], checked before any data or kernel work.

    Raises
    ------
    InvalidParameterError
        (a ValueError) ν not a real number in (0, 1]; scikit-learn's words first.
    """
    if isinstance(nu, numbers.Real) and not isinstance(nu, bool) and 0.0 < float(nu) <= 1.0:
        return float(nu)
    raise InvalidParameterError(
        f"The 'nu' parameter of {owner} must be a float in the range (0.0, 1.0]. Got {nu!r} "
        "instead. ν bounds the fraction of margin errors from above and the fraction of "
        "support vectors from below, so it lies in (0, 1]; e.g. nu=0.5 (the default).")


def largest_feasible_nu(class_weight_sums) -> float:
    """The largest ν for which every pair of classes is feasible: min over pairs of
    2·min(Uᵢ, Uⱼ)/(Uᵢ + Uⱼ), Uᵢ the weight (sample count without weights) of class i.

    Parameters
    ----------
    class_weight_sums : array-like of shape (n_classes,)

    Returns
    -------
    nu_max : float
    """
    U = np.asarray(class_weight_sums, dtype=float)
    best = 1.0
    for i in range(U.size):
        for j in range(i + 1, U.size):
            best = min(best, 2.0 * min(U[i], U[j]) / (U[i] + U[j]))
    return float(best)


def check_nu_svc_feasible(nu, class_weight_sums, classes=None, owner="NuSVC") -> None:
    """ν-SVC's feasibility for every pair of classes, before any kernel work.

    The pair (i, j) asks for Σ_{class i} α = Σ_{class j} α = ν(Uᵢ + Uⱼ)/2 with
    0 ≤ α ≤ u: feasible exactly when ν(Uᵢ + Uⱼ)/2 ≤ min(Uᵢ, Uⱼ) (Chang and Lin 2001,
    with weights: Uᵢ the sum of class i's bounds uₜ = sample weight × class weight).

    Raises
    ------
    ValueError
        ``"specified nu is infeasible"`` (scikit-learn's words) with the pair and the
        largest feasible ν.
    """
    U = np.asarray(class_weight_sums, dtype=float)
    for i in range(U.size):
        for j in range(i + 1, U.size):
            if nu * (U[i] + U[j]) / 2.0 > min(U[i], U[j]) * (1 + 1e-12):
                names = (f"classes {classes[i]!r} and {classes[j]!r}" if classes is not None
                         else f"classes {i} and {j}")
                if min(U[i], U[j]) <= 0.0:      # a class without weight: no ν > 0 at all
                    empty = i if U[i] <= 0.0 else j
                    label = classes[empty] if classes is not None else empty
                    raise ValueError(
                        f"specified nu is infeasible: {owner}'s class {label!r} has no sample "
                        "with positive weight (sample_weight × class_weight), so no ν > 0 is "
                        "feasible for its pairs. Drop that class from y, or give its samples "
                        "a positive weight.")
                raise ValueError(
                    f"specified nu is infeasible: {owner}'s pair of {names} (weights "
                    f"{U[i]:g} and {U[j]:g}) needs ν·(Uᵢ + Uⱼ)/2 ≤ min(Uᵢ, Uⱼ), i.e. "
                    f"ν ≤ {2 * min(U[i], U[j]) / (U[i] + U[j]):.6g}; the largest ν feasible "
                    f"for every pair is {largest_feasible_nu(U):.6g}. Lower nu (or balance "
                    "the classes' weights).")


@dataclass(eq=False, kw_only=True)
class NuSVCVariables(SVCVariables):
    """Variables of the ν-SVC in LIBSVM's scale: α ∈ [0, u], Σα = νU, slacks ξ, and
    ``c`` = −r, the multiplier of eᵀα = νU (r: the margin ρ of Schölkopf et al. times U)."""

    c: float = float("nan")

    @property
    def r(self) -> float:
        """r = −c (LIBSVM's ``r``; the equivalent C-SVC has C = 1/r)."""
        return -float(self.c)


@dataclass(eq=False, kw_only=True)
class NuSVRVariables(SVRVariables):
    """Variables of the ν-SVR (LIBSVM's scale): (a, a*) ∈ [0, u]², Σ(a + a*) = νΣu,
    slacks, and ``c`` = ε, the tube's half-width (−r of LIBSVM)."""

    c: float = float("nan")

    @property
    def epsilon(self) -> float:
        """ε = c, the learned half-width of the tube (target units)."""
        return float(self.c)


class _TwoEqualities(KernelProblem):
    """What the ν problems share: the second equality eᵀα = Δ₂ and its multiplier c.

    Every reading and check of the one-equality machinery is applied to the **relaxed**
    standard form ``p + c`` (no second equality) at the answer's own c: its KKT
    conditions with eᵀα = Δ₂ are the ν problem's, and its objectives differ from the ν
    problem's by c·Δ₂ (primal) and c·eᵀα (dual).
    """

    fit_intercept = True

    @property
    def delta2(self) -> float:
        """Δ₂ of the second equality eᵀα = Δ₂ (LIBSVM's scale)."""
        return float(self._qp.delta2)

    def _relaxed(self, c) -> _TwoEqualities:
        """A view of the problem whose standard form is ``p + c`` without eᵀα = Δ₂."""
        view = copy.copy(self)
        view._qp_cache = replace(self._qp, p=self._qp.p + float(c), delta2=None)
        view._c = float(c)
        return view

    def read_multipliers(self, alpha):
        """(b, c) from α by LIBSVM's ν rule (Solver_NU::calculate_rho): per sign of y,
        r± = the mean gradient over its free variables (else the midpoint of its bounded
        ones'); b = −ρ = −(r₊ − r₋)/2, c = −r = −(r₊ + r₋)/2.

        Parameters
        ----------
        alpha : array-like of shape (n_variables,)

        Returns
        -------
        b, c : float
        """
        alpha = self._check_alpha(alpha)
        qp = self._qp
        grad = self._gradient(alpha, self.data.combination(self.coefficients(alpha)))
        scale = self._alpha_scale(alpha)
        level = []
        for sign in (qp.y > 0, qp.y < 0):
            ones = np.ones(int(sign.sum()))
            level.append(-intercept_from_gradient(ones, alpha[sign], grad[sign],
                                                  qp.upper[sign], zero_scale=scale))
        r_pos, r_neg = level
        return -0.5 * (r_pos - r_neg), -0.5 * (r_pos + r_neg)

    def _split(self, b, meta):
        """(b, c) of an answer: a pair (b, c) from a cvxpy reading, the backend's r, or
        None: read from α."""
        if isinstance(b, tuple):
            return b
        raw = meta.get("raw")
        r = getattr(raw, "r", None) if raw is not None and not hasattr(raw, "var_dict") \
            else None
        if b is not None and r is not None and np.isfinite(r):
            return float(b), -float(r)
        return None, None

    def _fix_objectives(self, sol, c):
        alpha = sol.variables.standard_alpha
        sol.primal_objective += c * self.delta2
        sol.dual_objective += c * float(np.sum(alpha))
        return sol

    def solution_from_standard(self, alpha, b=None, **meta):
        """A Solution from standard-form α; ``b`` may be None (read by the ν rule), the
        intercept (with a backend's result ``raw.r`` in ``meta``), or a pair (b, c).

        Returns
        -------
        solution : Solution
            Variables in LIBSVM's scale with ``c``; objectives of the ν problem.
        """
        b, c = self._split(b, meta)
        if c is None:
            b, c = self.read_multipliers(alpha)
        view = self._relaxed(c)
        sol = KernelProblem.solution_from_standard(view, alpha, b, **meta)
        return self._fix_objectives(sol, c)

    def solution_from_primal(self, w, b, *, alpha=None, beta=None, **meta):
        """A Solution from a primal point; ``b`` is the pair (b, c) (c = −r, or ε)."""
        if not isinstance(b, tuple):
            raise ValueError("a ν problem's primal point has two multipliers: pass b=(b, c).")
        b, c = b
        view = self._relaxed(c)
        sol = KernelProblem.solution_from_primal(view, w, b, alpha=alpha, beta=beta, **meta)
        return self._fix_objectives(sol, c)

    def solution_from_weights(self, w, b, alpha, **meta):
        """As :meth:`KernelProblem.solution_from_weights`, c read from α by the ν rule."""
        _, c = self.read_multipliers(alpha)
        sol = KernelProblem.solution_from_weights(self._relaxed(c), w, b, alpha, **meta)
        return self._fix_objectives(sol, c)

    def kkt_intercept(self, alpha) -> float:
        """b by LIBSVM's ν rule (:meth:`read_multipliers`)."""
        if "_c" in self.__dict__:
            return KernelProblem.kkt_intercept(self, alpha)
        return self.read_multipliers(alpha)[0]

    def _variables(self, alpha, xi, **kw):
        return self._typed(alpha, xi, c=self.__dict__.get("_c", float("nan")), **kw)

    def to_primal_erm(self):
        """Not posed: the ν problems' primal has the term νΣu·c, no average-loss form.

        Raises
        ------
        ValueError
            Always; use smo, cvxpy-dual or cvxpy-primal.
        """
        raise ValueError(f"the {self.title} has no λ (average-loss) form; use smo, "
                         "cvxpy-dual or cvxpy-primal.")

    # ------------------------------------------------------------------ certificate
    def certify(self, solution=None, tol=1e-6, *, b=None, suboptimality=False, **dual):
        """The ν problem's certificate: KKT residuals and duality gap of the two-equality
        problem, the ν-property, and the equivalent one-equality problem's own
        certificate (C-SVC with C = 1/r, or ε-SVR with ε = −r).

        Parameters
        ----------
        solution : Solution, optional
        tol : float, default=1e-6
            Residuals in units of f (LIBSVM's scale), the duality gap relative, the
            ν-property a fraction; the equivalent problem's certificate is held to
            tol·max(1, 1/r) for the ν-SVC (its f is the ν-SVC's divided by r), tol for
            the ν-SVR.
        b : float, optional
            With raw arrays: their intercept (read by the ν rule when None).
        suboptimality : bool, default=False
            Not posed for the ν problems (no first-order method solves them).
        **dual
            Raw arrays by :attr:`dual_names` instead of ``solution``.

        Returns
        -------
        certificate : Certificate
            Checks of :meth:`KernelProblem.certify` on the relaxed form (with
            ``duality_gap`` that of the ν problem), ``nu_equality`` (|eᵀα − Δ₂| ÷
            max(1, max u)), ``nu_property``, ``margin_positive`` (ν-SVC: r > 0) and
            ``equivalent_c_svc`` / ``equivalent_epsilon_svr``.
        """
        if suboptimality:
            raise ValueError("the ν problems have no accuracy certificate (no first-order "
                             "method poses them); certify optimality.")
        if solution is None:
            solution = self._solution_from_raw(dual, b)
        elif dual or b is not None:
            raise ValueError("pass either a Solution or raw arrays, not both.")
        self._check_solution(solution)
        c = float(solution.variables.c)
        if not np.isfinite(c):
            _, c = self.read_multipliers(solution.variables.standard_alpha)
        view = self._relaxed(c)
        base = KernelProblem.certify(view, solution, tol)
        alpha = np.asarray(solution.variables.standard_alpha, dtype=float)
        scale = self._alpha_scale(alpha)
        P = base.quantities["primal_objective"] + c * self.delta2
        D = base.quantities["dual_objective"] + c * float(alpha.sum())
        checks = []
        for chk in base.checks:
            if chk.name == "duality_gap":
                # P − D of the ν problem is the relaxed one's plus c(Δ₂ − eᵀα): the
                # rounding floor of the relaxed check carries over
                floor = chk.tol - tol
                chk = Check("duality_gap", relative_gap(P, D), tol + floor,
                            "|P − D| / max(|P|, |D|) of the ν problem (P with νU·c)")
            elif chk.name == "mvp_gap":
                chk = Check("mvp_gap", base.quantities["nu_mvp_gap"], tol,
                            "LIBSVM's ν rule: max over the signs of y of m(α) − M(α) within "
                            "the sign (its stopping rule)")
            checks.append(chk)
        checks.append(Check("nu_equality", abs(float(alpha.sum()) - self.delta2) / scale, tol,
                            "|eᵀα − Δ₂| ÷ max(1, max u): the second equality"))
        more, notes, extra = nu_kkt.equivalent_checks(self, solution, c, tol)
        checks += more
        quantities = {**base.quantities, "primal_objective": P, "dual_objective": D,
                      "duality_gap_abs": P - D, "b": solution.b, "c": c, **extra}
        who = solution.method + (f", {solution.backend}" if solution.backend else "")
        return Certificate(checks, base.table, quantities,
                           title=f"{self.certificate_name} certificate ({who})",
                           notes=base.notes + notes)

    def _solution_from_raw(self, dual, b):
        unknown = sorted(set(dual) - set(self.dual_names))
        missing = [n for n in self.dual_names if dual.get(n) is None]
        if unknown or missing:
            raise ValueError(f"pass a Solution or the raw arrays {', '.join(self.dual_names)} "
                             f"(and b)" + (f"; unknown keywords {unknown}." if unknown else "."))
        return self.solution_from_dual(*(dual[n] for n in self.dual_names), b=b)

    def _certificate_parts(self, res, alpha, solution, tol):
        return nu_kkt.table(self, res, alpha, solution, tol)


class NuSVCProblem(_TwoEqualities):
    """The binary ν-SVC (Schölkopf et al., 2000) as an explicit problem.

    Parameters
    ----------
    X : {array-like, sparse matrix} of shape (n_samples, n_features)
        Training data; for ``kernel="precomputed"`` the Gram matrix (n_samples,
        n_samples).  Copied/converted, never modified.
    y : array-like of shape (n_samples,)
        Two labels; ``classes_[1]`` becomes +1 (scikit-learn's convention).
    nu : float, default=0.5
        ν ∈ (0, 1], and ν ≤ 2·min(U₊, U₋)/(U₊ + U₋) (feasibility).  Checked before any
        kernel work.
    kernel : {"linear", "poly", "rbf", "sigmoid", "precomputed"} or callable, default="rbf"
    gamma : {"scale", "auto"} or float, default="scale"
    degree : int, default=3
    coef0 : float, default=0.0
    sample_weight : array-like of shape (n_samples,), optional
        Weights sᵢ ≥ 0: the bounds uᵢ = sᵢ·c_{yᵢ} (scikit-learn's LIBSVM: 0 ≤ αᵢ ≤ sᵢ,
        Σα = νΣs).
    class_weight : dict, "balanced" or None, default=None
        Per-class factors c of the bounds, uᵢ = sᵢ·c_{yᵢ}, so Σα = νΣu.  LIBSVM's ν-SVC
        ignores class weights (scikit-learn issue #30332); here a class weight acts as
        a sample weight on every sample of its class: class j's samples count c_j times
        in the ν-property's fractions and in the bound 1/U of the primal.
    feature_map : callable, optional
    psd_test : PSDTest, optional

    Attributes
    ----------
    y : ndarray of shape (n_samples,)
    classes_ : ndarray of shape (2,)
    C_i : ndarray of shape (n_samples,)
        The bounds uᵢ of the standard form (LIBSVM's scale).
    scale : float
        U = Σu: LIBSVM's multipliers, w, b, r and ξ are U times the paper's, its
        objectives U² times.

    Raises
    ------
    InvalidParameterError
        ν outside (0, 1].
    ValueError
        ν infeasible for the classes' weights (with the largest feasible ν), and the
        input errors of :class:`~margin_opt.problems.svm.SVMProblem`.

    References
    ----------
    B. Schölkopf et al., "New support vector algorithms", Neural Computation 12(5), 2000.
    C.-C. Chang and C.-J. Lin, "Training ν-support vector classifiers: theory and
    algorithms", Neural Computation 13(9), 2001.
    """

    model = "nu-svc"
    dual_names = ("alpha",)
    formulations = ("slack",)
    variables_type = NuSVCVariables
    certificate_name = "ν-SVC"
    title = "ν-SVC"

    def __init__(self, X, y, *, nu=0.5, kernel="rbf", gamma="scale", degree=3, coef0=0.0,
                 sample_weight=None, class_weight=None, feature_map=None, psd_test=None):
        nu = check_nu_range(nu, type(self).__name__)
        X, y_raw = check_data(X, y)
        y_pm, classes = check_binary_labels(y_raw)
        sw = check_sample_weight(sample_weight, X)
        if class_weight is not None:
            if isinstance(class_weight, dict):
                cw = np.array([float(class_weight.get(c.item() if hasattr(c, "item") else c,
                                                      1.0)) for c in classes])
            else:
                cw = compute_class_weight(class_weight, classes=np.array([-1.0, 1.0]), y=y_pm)
            if not np.all(np.isfinite(cw)) or np.any(cw < 0):
                raise ValueError(f"class_weight must be finite and ≥ 0, got {class_weight!r}.")
            sw = sw * np.where(y_pm > 0, cw[1], cw[0])
        check_nu_svc_feasible(nu, [sw[y_pm < 0].sum(), sw[y_pm > 0].sum()], classes,
                              type(self).__name__)
        data = KernelData(X, kernel, gamma=gamma, degree=degree, coef0=coef0,
                          feature_map=feature_map, psd_test=psd_test, centre_linear=True)
        self._assign(data, y_pm, classes, nu, sw)

    @classmethod
    def from_validated(cls, X, y, *, nu, kernel, sample_weight, gram=None,
                       scale_checked=False) -> NuSVCProblem:
        """The problem on validated data (a pair of a one-vs-one fit): ν's range and
        the pair's feasibility are the caller's (checked for every pair before any
        kernel work), the input checks skipped.

        Parameters
        ----------
        X : {ndarray, csr_matrix} of shape (n_samples, n_features)
        y : ndarray of shape (n_samples,)
            ±1, both present.
        nu : float
        kernel : Kernel
        sample_weight : ndarray of shape (n_samples,)
            The bounds u (sample × class weights).
        gram : ndarray of shape (n_samples, n_samples), optional
        scale_checked : bool, default=False

        Returns
        -------
        problem : NuSVCProblem
        """
        problem = cls.__new__(cls)
        data = KernelData(X, kernel, scale_checked=scale_checked,
                          centre_linear=gram is None)
        if gram is not None:
            data.use_gram(gram)
        problem._assign(data, np.asarray(y, dtype=float), np.array([-1.0, 1.0]), float(nu),
                        np.asarray(sample_weight, dtype=float))
        return problem

    def _assign(self, data, y_pm, classes, nu, u):
        self.nu = nu
        self.y, self.classes_ = y_pm, classes
        self.data = data
        self.feature_map = data.feature_map
        self.kernel = data.kernel
        self.X = data.X
        self.sample_weight = u
        self._instance_weight = u
        self.C_i = u.copy()
        self.C = 1.0
        self.scale = float(u.sum())

    def _typed(self, alpha, xi, **kw):
        return NuSVCVariables(alpha=alpha, xi=xi, **kw)

    def decision_from_dual(self, alpha, b) -> np.ndarray:
        """f(xᵢ) = Σⱼ αⱼyⱼK(xᵢ, xⱼ) + b on the training points (LIBSVM's ν scale)."""
        return self.data.combination(self.y * alpha) + b

    # ------------------------------------------------------------------ cvxpy forms
    def primal(self, formulation: str = "slack") -> cp.Problem:
        """The primal in the paper's scale, variables ``w``, ``b``, ``rho``, ``xi``.

        ``min ½‖w‖² − νρ + Σᵢ (uᵢ/U)ξᵢ`` s.t. ``y∘(Φw + b) ≥ ρ − ξ`` (constraint 0,
        whose dual values are the paper's α), ``ξ ≥ 0`` and ``ρ ≥ 0``.

        Parameters
        ----------
        formulation : {"slack"}, default="slack"

        Returns
        -------
        problem : cvxpy.Problem
        """
        Phi, w, b = self._primal_variables(formulation)
        rho = cp.Variable(name="rho")
        xi = cp.Variable(self.n_samples, name="xi")
        yf = cp.multiply(self.y, Phi @ w + b)
        cost = 0.5 * cp.sum_squares(w) - self.nu * rho + (self.C_i / self.scale) @ xi
        return cp.Problem(cp.Minimize(cost), [yf >= rho - xi, xi >= 0, rho >= 0])

    def dual(self, quad_form: str = "auto") -> cp.Problem:
        """The dual in the paper's scale, variable ``alpha``.

        ``min ½αᵀQα`` s.t. ``α ≥ 0`` (0), ``α ≤ u/U`` (1), ``yᵀα = 0`` (2; its
        multiplier is b) and ``eᵀα = ν`` (3; its multiplier is c = −ρ).

        Parameters
        ----------
        quad_form : {"auto", "features", "quad_form", "factor"}, default="auto"

        Returns
        -------
        problem : cvxpy.Problem
        """
        alpha = cp.Variable(self.n_samples, name="alpha")
        quad = self.data.quadratic(cp.multiply(self.y, alpha), quad_form)
        cons = [alpha >= 0, alpha <= self.C_i / self.scale, self.y @ alpha == 0,
                cp.sum(alpha) == self.nu]
        return cp.Problem(cp.Minimize(0.5 * quad), cons)

    def _read_cvxpy_dual(self, cvx):
        U = self.scale
        alpha = np.clip(np.asarray(cvx.var_dict["alpha"].value, dtype=float), 0.0, None)
        b = float(cvx.constraints[2].dual_value)
        c = float(cvx.constraints[3].dual_value)
        return U * alpha, (U * b, U * c)

    def _read_cvxpy_primal(self, cvx):
        U = self.scale
        w = np.asarray(cvx.var_dict["w"].value, dtype=float)
        b = float(cvx.var_dict["b"].value)
        rho = float(cvx.var_dict["rho"].value)
        alpha = np.clip(np.asarray(cvx.constraints[0].dual_value, dtype=float), 0.0, None)
        return U * w, (U * b, -U * rho), U * alpha

    def _layout(self) -> dict:
        """y, p = 0, u, yᵀα = 0 and eᵀα = νU: LIBSVM's ν-SVC."""
        n = self.n_samples
        return dict(y=self.y.copy(), p=np.zeros(n), upper=self.C_i.copy(), delta=0.0,
                    equality=True, delta2=self.nu * self.scale)

    def _alpha_from_coefficients(self, beta):
        return np.abs(beta)

    def _check_sklearn(self, estimator):
        if type(estimator).__name__ != "NuSVC" or len(estimator.classes_) != 2:
            raise ValueError("a ν-SVC problem reads a fitted binary sklearn.svm.NuSVC.")

    def solution_from_sklearn(self, estimator):
        """A Solution from a fitted binary scikit-learn ``NuSVC`` on the same data.

        Its ``dual_coef_`` = yα/r and ``intercept_`` = −ρ/r are in the C-SVC's scale; r is
        recovered from Σα = νU (r = νU / Σ|dual_coef_|) and the answer returned in
        LIBSVM's ν scale.
        """
        self._check_sklearn(estimator)
        coef = estimator.dual_coef_
        coef = np.asarray(coef.toarray() if hasattr(coef, "toarray") else coef)[0]
        r = self.delta2 / float(np.abs(coef).sum())
        beta = np.zeros(self.n_samples)
        beta[estimator.support_] = coef * r
        b = float(estimator.intercept_[0]) * r
        alpha = np.abs(beta)
        return self.solution_from_standard(alpha, (b, -r), method="external",
                                           backend="LIBSVM (sklearn.svm.NuSVC)")

    # ------------------------------------------------------------------ equivalent C-SVC
    def equivalent_problem(self, r):
        """The C-SVC on the same data with Cᵢ = uᵢ/r (C = 1/r without weights), sharing
        this problem's kernel data.

        Parameters
        ----------
        r : float
            The ν-SVC's margin in LIBSVM's scale (> 0).

        Returns
        -------
        problem : SVMProblem
        """
        from .svm import SVMProblem

        problem = SVMProblem.__new__(SVMProblem)
        problem._assign(self.data, self.y, self.classes_, 1.0 / float(r), True,
                        self.sample_weight.copy())
        return problem

    def equivalent_solution(self, solution, r=None):
        """The ν answer as the equivalent C-SVC's answer: α/r, b/r (LIBSVM's rescaling).

        Parameters
        ----------
        solution : Solution
            Of this problem.
        r : float, optional
            The rescaling (default the answer's own, −c).

        Returns
        -------
        problem : SVMProblem
        solution : Solution
        """
        r = solution.variables.r if r is None else float(r)
        problem = self.equivalent_problem(r)
        sol = problem.solution_from_standard(solution.variables.alpha / r, solution.b / r,
                                             method=solution.method, backend=solution.backend)
        return problem, sol

    # ------------------------------------------------------------------ as mathematics
    def _headline(self) -> str:
        n, d = self.X.shape
        weighted = not np.all(self.C_i == self.C_i[0])
        return (f"{self.title}: n = {n} samples, d = {d} features, kernel "
                f"{self._kernel_words()}, ν = {self.nu:g}" + (", weights uᵢ" if weighted else ""))

    def _math_lines(self, feats):
        return ["primal (problem.primal(); Schölkopf et al. 2000):",
                "    minimize    ½‖w‖² − νρ + (1/U) Σᵢ uᵢξᵢ",
                "    subject to  yᵢ(wᵀφ(xᵢ) + b) ≥ ρ − ξᵢ,  ξᵢ ≥ 0,  ρ ≥ 0,   "
                f"i = 1..{self.n_samples}",
                f"    with {feats}, U = Σu = {self.scale:g}", "",
                "dual (problem.dual()):",
                "    minimize    ½ Σᵢⱼ αᵢαⱼ yᵢyⱼ K(xᵢ, xⱼ)",
                "    subject to  0 ≤ αᵢ ≤ uᵢ/U,  Σᵢ yᵢαᵢ = 0,  Σᵢ αᵢ = ν", "",
                "equivalent C-SVC: C = 1/r, α/r, b/r (r = Uρ, LIBSVM's rescaling)"]

    def _standard_form_lines(self) -> list:
        return [f"standard form (SMO's ν mode; problem.to_standard_form()), LIBSVM's scale "
                f"(× U = {self.scale:g}), {self.n_samples} variables:",
                f"    min ½αᵀQα  s.t. yᵀα = 0, eᵀα = νU = {self.delta2:g}, 0 ≤ α ≤ u"]

    def __repr__(self) -> str:
        return (f"NuSVCProblem(n_samples={self.n_samples}, nu={self.nu:g}, "
                f"kernel={self.kernel.describe()})")


class NuSVRProblem(_TwoEqualities):
    """ν-support vector regression (Schölkopf et al., 2000) as an explicit problem.

    Parameters
    ----------
    X : {array-like, sparse matrix} of shape (n_samples, n_features)
        Not modified.
    y : array-like of shape (n_samples,)
        Real, finite, non-constant targets z.
    nu : float, default=0.5
        ν ∈ (0, 1]: an upper bound on the fraction of points outside the tube, a lower
        bound on the fraction of support vectors.
    C : float, default=1.0
        Penalty of the slacks (LIBSVM's scale: the paper's C is this times n).
    kernel, gamma, degree, coef0, feature_map, psd_test
        As :class:`~margin_opt.problems.svr.SVRProblem`.
    sample_weight : array-like of shape (n_samples,), optional
        uᵢ = C·sᵢ.

    Raises
    ------
    InvalidParameterError
        ν outside (0, 1].
    ValueError
        C ≤ 0 or infinite, and the input errors of the ε-SVR.

    References
    ----------
    B. Schölkopf et al., "New support vector algorithms", Neural Computation 12(5), 2000.
    """

    model = "nu-svr"
    dual_names = ("alpha", "alpha_star")
    formulations = ("slack",)
    variables_type = NuSVRVariables
    certificate_name = "ν-SVR"
    title = "ν-SVR"

    def __init__(self, X, y, *, nu=0.5, C=1.0, kernel="rbf", gamma="scale", degree=3,
                 coef0=0.0, sample_weight=None, feature_map=None, psd_test=None):
        self.nu = check_nu_range(nu, type(self).__name__)
        C = check_C(C)
        if np.isinf(C):
            raise ValueError("ν-SVR needs a finite C; use e.g. C=1.0.")
        X, y = check_data(X, y, y_numeric=True)
        if y.shape[0] < 2 or np.ptp(y) == 0:
            raise ValueError("ν-SVR needs at least 2 samples with targets that are not all "
                             "equal.")
        self.y = np.asarray(y, dtype=float)
        self.C = C
        self.sample_weight = check_sample_weight(sample_weight, X)
        self._instance_weight = self.sample_weight
        self.C_i = C * self.sample_weight
        self.data = KernelData(X, kernel, gamma=gamma, degree=degree, coef0=coef0,
                               feature_map=feature_map, psd_test=psd_test, centre_linear=True)
        self.feature_map = feature_map
        self.kernel = self.data.kernel
        self.X = self.data.X

    def _typed(self, alpha, xi, **kw):
        n = self.n_samples
        return NuSVRVariables(alpha=alpha[:n], alpha_star=alpha[n:], xi=xi[:n], xi_star=xi[n:],
                              **kw)

    def decision_from_dual(self, dual_coef, b) -> np.ndarray:
        """f(xᵢ) = Σⱼ(aⱼ − aⱼ*)K(xᵢ, xⱼ) + b, shape (n_samples,)."""
        return self.data.combination(dual_coef) + b

    def primal(self, formulation: str = "slack") -> cp.Problem:
        """The primal in LIBSVM's scale, variables ``w``, ``b``, ``epsilon``, ``xi``,
        ``xi_star``: ``min ½‖w‖² + uᵀ(ξ + ξ*) + ν(Σu)ε`` s.t. ``z − f ≤ ε + ξ``
        (constraint 0, duals a), ``f − z ≤ ε + ξ*`` (constraint 1, duals a*), ξ, ξ* ≥ 0.

        Returns
        -------
        problem : cvxpy.Problem
        """
        Phi, w, b = self._primal_variables(formulation)
        eps = cp.Variable(name="epsilon")
        xi = cp.Variable(self.n_samples, name="xi")
        xi_star = cp.Variable(self.n_samples, name="xi_star")
        f = Phi @ w + b
        cost = 0.5 * cp.sum_squares(w) + self.C_i @ (xi + xi_star) \
            + self.nu * float(self.C_i.sum()) * eps
        return cp.Problem(cp.Minimize(cost), [self.y - f <= eps + xi, f - self.y <= eps + xi_star,
                                              xi >= 0, xi_star >= 0])

    def dual(self, quad_form: str = "auto") -> cp.Problem:
        """The dual in ``alpha`` (a) and ``alpha_star`` (a*), as the standard form:
        ``min ½βᵀKβ − zᵀβ`` (β = a − a*) s.t. a ≥ 0, a ≤ u, a* ≥ 0, a* ≤ u,
        Σβ = 0 (multiplier b), Σ(a + a*) = νΣu (multiplier c = ε).

        Returns
        -------
        problem : cvxpy.Problem
        """
        a = cp.Variable(self.n_samples, name="alpha")
        a_star = cp.Variable(self.n_samples, name="alpha_star")
        beta = a - a_star
        objective = 0.5 * self.data.quadratic(beta, quad_form) - self.y @ beta
        cons = [a >= 0, a <= self.C_i, a_star >= 0, a_star <= self.C_i, cp.sum(beta) == 0,
                cp.sum(a + a_star) == self.nu * float(self.C_i.sum())]
        return cp.Problem(cp.Minimize(objective), cons)

    def _read_cvxpy_dual(self, cvx):
        a = np.clip(cvx.var_dict["alpha"].value, 0, None)
        a_star = np.clip(cvx.var_dict["alpha_star"].value, 0, None)
        return np.r_[a, a_star], (float(cvx.constraints[4].dual_value),
                                  float(cvx.constraints[5].dual_value))

    def _read_cvxpy_primal(self, cvx):
        alpha = np.r_[np.clip(cvx.constraints[0].dual_value, 0, None),
                      np.clip(cvx.constraints[1].dual_value, 0, None)]
        b = float(cvx.var_dict["b"].value)
        eps = float(cvx.var_dict["epsilon"].value)
        return cvx.var_dict["w"].value, (b, eps), alpha

    def _layout(self) -> dict:
        """LIBSVM's solve_nu_svr: 2n variables, p = [−z, z], u = [C·s; C·s], Δ = 0,
        Δ₂ = νΣu."""
        n = self.n_samples
        return dict(y=np.r_[np.ones(n), -np.ones(n)], p=np.r_[-self.y, self.y],
                    upper=np.r_[self.C_i, self.C_i], delta=0.0, equality=True,
                    index=np.r_[np.arange(n), np.arange(n)],
                    delta2=self.nu * float(self.C_i.sum()))

    def _alpha_from_coefficients(self, beta):
        return np.r_[np.maximum(beta, 0), np.maximum(-beta, 0)]

    def _check_sklearn(self, estimator):
        if type(estimator).__name__ != "NuSVR":
            raise ValueError("a ν-SVR problem reads a fitted sklearn.svm.NuSVR.")

    def solution_from_sklearn(self, estimator):
        """A Solution from a fitted scikit-learn ``NuSVR`` (dual_coef_ = a − a*,
        intercept_ = −ρ; ε read by the ν rule)."""
        self._check_sklearn(estimator)
        coef = estimator.dual_coef_
        coef = np.asarray(coef.toarray() if hasattr(coef, "toarray") else coef)[0]
        beta = np.zeros(self.n_samples)
        beta[estimator.support_] = coef
        alpha = self._alpha_from_coefficients(beta)
        b, c = self.read_multipliers(alpha)
        return self.solution_from_standard(alpha, (float(estimator.intercept_[0]), c),
                                           method="external",
                                           backend="LIBSVM (sklearn.svm.NuSVR)")

    def equivalent_problem(self, epsilon):
        """The ε-SVR on the same data with the same C (bounds u) and this ε, sharing the
        kernel data.

        Raises
        ------
        ValueError
            ε < 0: no ε-SVR (the relaxed form is not an ε-SVR's).
        """
        from .svr import SVRProblem

        if not epsilon >= 0:
            raise ValueError(f"the ν-SVR's ε = {epsilon:g} < 0 has no equivalent ε-SVR.")
        problem = SVRProblem.__new__(SVRProblem)
        problem.__dict__.update(y=self.y, C=self.C, epsilon=float(epsilon), data=self.data,
                                feature_map=self.feature_map, kernel=self.kernel, X=self.X,
                                sample_weight=self.sample_weight,
                                _instance_weight=self._instance_weight, C_i=self.C_i.copy(),
                                fit_intercept=True)
        return problem

    def equivalent_solution(self, solution, epsilon=None):
        """The ν answer as the equivalent ε-SVR's answer: the same (a, a*) and b.

        Returns
        -------
        problem : SVRProblem
        solution : Solution
        """
        eps = solution.variables.epsilon if epsilon is None else float(epsilon)
        problem = self.equivalent_problem(eps)
        v = solution.variables
        # (a − a*)₊, (a* − a)₊: the same f; the ε-SVR's dual objective higher by
        # 2εΣmin(a, a*), 0 at a ν optimum with ε > 0 (a·a* = 0 there)
        beta = v.alpha - v.alpha_star
        sol = problem.solution_from_standard(self._alpha_from_coefficients(beta), solution.b,
                                             method=solution.method, backend=solution.backend)
        return problem, sol

    def _headline(self) -> str:
        n, d = self.X.shape
        return (f"{self.title}: n = {n} samples, d = {d} features, kernel "
                f"{self._kernel_words()}, ν = {self.nu:g}, C = {self.C:g}")

    def _math_lines(self, feats):
        return ["primal (problem.primal(); Schölkopf et al. 2000 in LIBSVM's scale):",
                "    minimize    ½‖w‖² + Σᵢ Cᵢ(ξᵢ + ξᵢ*) + ν(ΣC)·ε",
                "    subject to  zᵢ − f(xᵢ) ≤ ε + ξᵢ,  f(xᵢ) − zᵢ ≤ ε + ξᵢ*,  ξ, ξ* ≥ 0",
                f"    with f(x) = wᵀφ(x) + b, {feats}", "",
                "dual (problem.dual(), in a and a*):",
                "    minimize    ½ Σᵢⱼ (aᵢ − aᵢ*)(aⱼ − aⱼ*)K(xᵢ, xⱼ) − Σᵢ zᵢ(aᵢ − aᵢ*)",
                "    subject to  0 ≤ aᵢ, aᵢ* ≤ Cᵢ,  Σᵢ(aᵢ − aᵢ*) = 0,  Σᵢ(aᵢ + aᵢ*) = νΣC", "",
                "equivalent ε-SVR: the same C, ε = the learned ε, the same (a, a*) and b"]

    def _standard_form_lines(self) -> list:
        return [f"standard form (SMO's ν mode; problem.to_standard_form()), "
                f"{2 * self.n_samples} variables:",
                f"    min ½αᵀQα + pᵀα  s.t. yᵀα = 0, eᵀα = {self.delta2:g}, 0 ≤ α ≤ u, "
                "p = [−z, z]"]

    def __repr__(self) -> str:
        return (f"NuSVRProblem(n_samples={self.n_samples}, nu={self.nu:g}, C={self.C:g}, "
                f"kernel={self.kernel.describe()})")
