"""How one answer to a conformance problem is graded: the certificate, scale-aware.

An answer passes at tolerance ``tol`` when the problem's certificate
(:meth:`SVMProblem.certify <margin_opt.problems.base.KernelProblem.certify>` on the
plain arrays) holds with

* the dual residual (box 0 ≤ α ≤ C, yᵀα = 0 — or 1ᵀβ = 0, or 1ᵀα = νn —, ÷ max(1, C))
  at ``tol``;
* every check read in the units of f (primal residual, complementary slackness, the
  m(α) − M(α) gap of the KKT conditions, the support-vector / tube table) at
  ``tol × scale``, where ``scale = max(1, maxᵢ Σⱼ |Kᵢⱼ β*ⱼ|)`` is the magnitude of the
  terms of f = Kβ at the reference optimum β* (fixed per problem, so an answer cannot
  loosen its own tolerance).  This is the relative criterion of OSQP (residuals against
  the magnitude of the terms that make them), where qpbenchmark's are absolute: double
  precision knows f only to ``u × scale`` (u = 1.1e-16), and a solver that keeps Q in
  single precision (LIBSVM's ``Qfloat``) to about ``6e-8 × scale``;
* the duality gap |P − D| of the answer's own primal point at
  ``tol × max(1, |P|, scale × ‖β*‖₁)``: P − D = Σᵢ αᵢsᵢ + Σᵢ(Cᵢ − αᵢ)ξᵢ sums the
  margins weighted by the multipliers, so margins known to tol × scale give a gap known
  to tol × scale × ‖β*‖₁ (at C = 1e4 the relative |P − D| / max(1, |P|) of an answer
  exact to 1e-10 in its objective is ~1e-5); the report's ``gap`` is that relative one;
* and — the strict test of optimality — its dual objective within ``2 tol`` (relative)
  of the certified reference optimum D*: |D − D*| / max(1, |D*|) ≤ 2 tol, the exact
  suboptimality of a feasible dual point.

The one-class suite is graded by the one-class certificate
(:class:`~margin_opt.problems.one_class.OneClassProblem`, LIBSVM's scale: b = −ρ, so the
primal objective and the duality gap carry the term Δ·b = −νn·ρ), whose ``nu_property``
check (outliers / n ≤ ν ≤ support vectors / n, outliers being the points with
f(xᵢ) < −tol × scale) is a fraction held to ``tol`` itself: one point too many fails.

References
----------
S. Caron et al., qpbenchmark, https://github.com/qpsolvers/qpbenchmark (success
criteria: primal residual, dual residual, duality gap).
B. Stellato et al., "OSQP: an operator splitting solver for quadratic programs",
Math. Prog. Comp. 12, 2020, §3.4 (relative termination criteria).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np

from ..kkt import GAP_FLOOR

__all__ = ["Grade", "grade", "certifying_problem", "read_answer", "dual_objective", "term_scale"]

#: checks held to ``tol`` itself (dimensionless); the others to ``tol × scale``
RELATIVE_CHECKS = ("dual_residual", "nu_property")
#: the objective's distance from the reference, in units of tol, that still passes
REFERENCE_FACTOR = 2.0


@dataclass(frozen=True)
class Grade:
    """The verdict on one answer.

    Attributes
    ----------
    ok : bool
    failed : tuple of str
        The names of the failed checks (``"answer"`` when the answer could not be read,
        ``"reference"`` when the objective is off the reference optimum).
    reason : str
        One line: why it failed ("" when it passed).
    gap : float
        The relative duality gap ``|P − D| / max(|P|, |D|)`` (NaN when not read).
    distance : float
        ``|D − D*| / max(1, |D*|)``: the dual objective's distance from the reference
        optimum.
    tol, scale : float
        The tolerance and the problem's scale (see the module docstring).
    certificate : Certificate or None
    """

    ok: bool
    failed: tuple = ()
    reason: str = ""
    gap: float = float("nan")
    distance: float = float("nan")
    tol: float = float("nan")
    scale: float = 1.0
    certificate: object = field(default=None, repr=False, compare=False)


@lru_cache(maxsize=4)
def certifying_problem(problem):
    """The :class:`SVMProblem` / :class:`SVRProblem` / :class:`OneClassProblem` that
    certifies answers to a problem.

    Posed on the data X and kernel that made K (so the kernel is PSD by construction:
    linear or RBF), with K itself as its kernel matrix (the very numbers the solver saw)
    and the per-sample bounds as sample weights; built once per process (the last few).
    """
    from ..kernels import make_kernel
    from ..problems.one_class import OneClassProblem
    from ..problems.svm import SVMProblem
    from ..problems.svr import SVRProblem

    a = problem.arrays()
    kw = {} if a["kernel"] in ("linear", "precomputed") else {"gamma": a["gamma"]}
    if problem.suite == "oneclass":     # the kernel object: K is PSD by construction
        prob = OneClassProblem(a["X"], nu=a["nu"],
                               kernel=make_kernel(a["kernel"], a["X"], **kw))
        prob.data.use_gram(a["K"])
        return prob
    C = a["C"]
    c0 = float(C.max())
    w = np.ones_like(C) if np.isinf(c0) else C / c0
    if problem.suite == "svc":
        return SVMProblem.from_validated(a["X"], a["y"], C=c0,
                                         kernel=make_kernel(a["kernel"], a["X"], **kw),
                                         sample_weight=w, gram=a["K"], scale_checked=True)
    prob = SVRProblem(a["X"], a["z"], C=c0, epsilon=a["epsilon"], kernel=a["kernel"],
                      sample_weight=w, **kw)
    prob.data.use_gram(a["K"])
    return prob


def read_answer(problem, coef, b):
    """Check an answer's types and shapes; ``(coef, b, None)`` or ``(None, None, reason)``.

    Parameters
    ----------
    problem : Problem
    coef : array-like of shape (n,)
        α (svc, oneclass) or β (svr).
    b : float
        b, or ρ for the oneclass suite.
    """
    from .suites import PROTOCOL

    name, offset = PROTOCOL[problem.suite]
    try:
        arr = np.asarray(coef)
    except Exception as exc:  # noqa: BLE001 - any object a solver may return
        return None, None, f"{name} is not an array ({type(exc).__name__})"
    if arr.dtype.kind not in "fiub":
        return None, None, f"{name} has dtype {arr.dtype}, not a real number type"
    if arr.shape != (problem.n,):
        return None, None, f"{name} has shape {arr.shape}, expected ({problem.n},)"
    arr = arr.astype(np.float64)
    if not np.all(np.isfinite(arr)):
        return None, None, f"{name} has {int(np.sum(~np.isfinite(arr)))} NaN or inf entries"
    try:
        bb = np.asarray(b)
    except Exception:  # noqa: BLE001
        bb = np.asarray(None)
    if bb.size != 1 or bb.dtype.kind not in "fiub":
        return None, None, f"{offset} must be a real number, got {type(b).__name__} {bb.shape}"
    bb = float(bb.reshape(()))
    if not np.isfinite(bb):
        return None, None, f"{offset} is {bb}"
    return arr, bb, None


def dual_objective(problem, coef) -> float:
    """The dual objective of α (svc: 1ᵀα − ½αᵀQα; oneclass: −½αᵀKα, to be maximized) or
    β (svr: zᵀβ − ε‖β‖₁ − ½βᵀKβ)."""
    a = problem.arrays()
    if problem.suite == "oneclass":
        return float(-0.5 * coef @ (a["K"] @ coef))
    if problem.suite == "svc":
        beta = a["y"] * coef
        return float(coef.sum() - 0.5 * beta @ (a["K"] @ beta))
    return float(a["z"] @ coef - a["epsilon"] * np.abs(coef).sum()
                 - 0.5 * coef @ (a["K"] @ coef))


def term_scale(problem, coef) -> float:
    """``max(1, maxᵢ Σⱼ |Kᵢⱼβⱼ|)`` for α (svc, β = y∘α; oneclass, β = α) or β (svr)."""
    a = problem.arrays()
    beta = a["y"] * coef if problem.suite == "svc" else coef
    nz = np.flatnonzero(beta)
    if nz.size == 0:
        return 1.0
    return max(1.0, float((np.abs(a["K"][:, nz]) @ np.abs(beta[nz])).max()))


def grade(problem, coef, b, tol, reference) -> Grade:
    """Grade an answer (see the module docstring).

    Parameters
    ----------
    problem : Problem
    coef : array-like of shape (n,)
        α for the svc suite, β (f = Kβ + b) for svr, α (f = Kα − ρ) for oneclass.
    b : float
        b, or ρ for the oneclass suite.
    tol : float
    reference : Reference
        The problem's reference (:func:`margin_opt.testing.get_reference`).

    Returns
    -------
    grade : Grade
    """
    ref = reference
    coef, b, why = read_answer(problem, coef, b)
    if why is not None:
        return Grade(False, ("answer",), why, tol=tol, scale=ref.scale)
    prob = certifying_problem(problem)
    if problem.suite == "svc":
        cert = prob.certify(alpha=coef, b=b, tol=tol * ref.scale)
    elif problem.suite == "oneclass":
        cert = prob.certify(alpha=coef, b=-b, tol=tol * ref.scale)
    else:
        cert = prob.certify(alpha=np.maximum(coef, 0.0), alpha_star=np.maximum(-coef, 0.0),
                            b=b, tol=tol * ref.scale)
    failed, parts = [], []
    P = float(cert.quantities.get("primal_objective", np.nan))
    D = float(cert.quantities.get("dual_objective", np.nan))
    # the certificate's duality_gap is |P − D| / max(|P|, |D|) (margin_opt.kkt.relative_gap)
    gap_limit = tol * max(1.0, abs(P), ref.scale * float(np.abs(ref.coef).sum())) \
        / max(abs(P), abs(D), GAP_FLOOR)
    for c in cert.checks:
        limit = gap_limit if c.name == "duality_gap" else \
            tol if c.name in RELATIVE_CHECKS else tol * ref.scale
        if not c.value <= limit:
            failed.append(c.name)
            parts.append(f"{c.name} {c.value:.2g} > {limit:.2g}")
    for row in cert.table:
        if row.n_contradicting:
            failed.append(f"table: {row.category}")
            parts.append(f"{row.n_contradicting} points in '{row.category}' break "
                         f"'{row.condition}'")
    D = dual_objective(problem, coef)
    distance = abs(D - ref.objective) / max(1.0, abs(ref.objective))
    if not distance <= REFERENCE_FACTOR * tol:
        failed.append("reference")
        parts.append(f"dual objective {D:.10g} is {distance:.2g} (relative) from the "
                     f"reference optimum {ref.objective:.10g}")
    gap = next((c.value for c in cert.checks if c.name == "duality_gap"), float("nan"))
    return Grade(not failed, tuple(failed), "; ".join(parts), gap, distance, tol, ref.scale,
                 cert)
