"""The :class:`Certificate`: a plain report of optimality conditions.

Which conditions a model has is its problem's knowledge
(``problem.certify(solution)``); the report type, its tolerances, pass/fail logic
and its table are shared by every model.

References
----------
S. Boyd and L. Vandenberghe, *Convex Optimization*, CUP 2004, §5.5.3 (KKT
conditions), §5.3 (duality gap as a certificate of suboptimality).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .exceptions import CertificateError

__all__ = ["Certificate", "Check", "TableRow"]


@dataclass(frozen=True)
class Check:
    """One scalar optimality condition: ``value ≤ tol`` passes.

    Attributes
    ----------
    name : str
        Short identifier, e.g. ``"primal_residual"``.
    value : float
        The measured (normalized, dimensionless) residual, ≥ 0.
    tol : float
        The tolerance it is held to.
    description : str
        What was measured and how it was normalized.
    """

    name: str
    value: float
    tol: float
    description: str = ""

    def __post_init__(self):
        object.__setattr__(self, "value", float(self.value) + 0.0)  # no "-0.000e+00"

    @property
    def passed(self) -> bool:
        """True when the residual is within tolerance (NaN fails)."""
        return bool(self.value <= self.tol)


@dataclass(frozen=True)
class TableRow:
    """One row of a support-vector (or tube) table.

    Attributes
    ----------
    category : str
        E.g. ``"α = 0"``.
    condition : str
        What the margin must satisfy in that category, e.g. ``"y f(x) ≥ 1"``.
    count : int
        Points in the category.
    contradicting : ndarray of int
        Indices of the points whose margin contradicts the category.
    """

    category: str
    condition: str
    count: int
    contradicting: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=int))

    @property
    def n_contradicting(self) -> int:
        """Number of points contradicting their category."""
        return int(self.contradicting.size)


class Certificate:
    """Optimality report: residuals with tolerances, objectives and a KKT table.

    Parameters
    ----------
    checks : list of Check
        Scalar conditions; the certificate passes when all pass and no table row
        has contradicting points.
    table : list of TableRow
        Categories of points by their multipliers against their margins (the
        lecture notes' support-vector table).
    quantities : dict of str to float
        Other numbers worth reporting (objectives, absolute gap, counts).
    title : str, default="Certificate"
    notes : list of str, optional
        What the reader must know to read the verdict: what the certificate cannot
        vouch for (e.g. a non-convex problem), or how the answer was obtained (a
        fallback).  Printed under the title.

    Attributes
    ----------
    ok : bool
        All checks pass and no point contradicts its category.
    kkt_violation : float
        The largest normalized residual among the checks.

    Notes
    -----
    Each check is also an attribute, e.g. ``cert.primal_residual``,
    ``cert.duality_gap`` (relative) or ``cert.mvp_gap``; ``cert.quantities``
    holds the unnormalized numbers (``duality_gap_abs``, objectives...).
    """

    def __init__(self, checks, table=(), quantities=None, title="Certificate", notes=()):
        self.checks = list(checks)
        self.table = list(table)
        self.quantities = dict(quantities or {})
        self.title = title
        self.notes = list(notes)

    def __getattr__(self, name):
        for c in self.__dict__.get("checks", ()):
            if c.name == name:
                return c.value
        q = self.__dict__.get("quantities", {})
        if name in q:
            return q[name]
        raise AttributeError(name)

    @property
    def ok(self) -> bool:
        """True when every check passes and no point contradicts its category."""
        return all(c.passed for c in self.checks) and not any(
            r.n_contradicting for r in self.table)

    @property
    def kkt_violation(self) -> float:
        """Largest normalized residual (NaN propagates)."""
        vals = [c.value for c in self.checks]
        return float(max(vals)) if vals else 0.0

    @property
    def n_contradicting(self) -> int:
        """Points whose multiplier contradicts their margin, over all table rows."""
        return sum(r.n_contradicting for r in self.table)

    def failed(self) -> list:
        """Names of failed checks and table rows."""
        out = [c.name for c in self.checks if not c.passed]
        out += [f"table[{r.category}]" for r in self.table if r.n_contradicting]
        return out

    def is_optimal(self, eps: float) -> bool:
        """True when every residual is ≤ ``eps`` and the table has no contradiction."""
        return all(c.value <= eps for c in self.checks) and self.n_contradicting == 0

    def assert_ok(self) -> None:
        """Raise :class:`~margin_opt.exceptions.CertificateError` unless :attr:`ok`."""
        if not self.ok:
            raise CertificateError(
                f"certificate failed on {', '.join(self.failed())}:\n{self}")

    def to_dict(self) -> dict:
        """JSON-ready dict of every number in the report."""
        return {
            "ok": self.ok,
            "kkt_violation": self.kkt_violation,
            "checks": {c.name: {"value": float(c.value), "tol": float(c.tol),
                                "passed": c.passed} for c in self.checks},
            "table": [{"category": r.category, "condition": r.condition, "count": int(r.count),
                       "n_contradicting": r.n_contradicting,
                       "contradicting": [int(i) for i in r.contradicting[:20]]}
                      for r in self.table],
            "quantities": {k: (float(v) if np.isscalar(v) else v)
                           for k, v in self.quantities.items()},
            "notes": list(self.notes),
        }

    def __str__(self) -> str:
        lines = [f"{self.title}: {'OK' if self.ok else 'FAILED'}"
                 f" (largest KKT residual {self.kkt_violation:.2e})"]
        lines += [f"  note: {n}" for n in self.notes]
        w = max([len(c.name) for c in self.checks] + [10])
        for c in self.checks:
            mark = "ok  " if c.passed else "FAIL"
            lines.append(f"  {mark} {c.name:<{w}} {c.value:10.3e}  (tol {c.tol:.1e})  "
                         f"{c.description}")
        for k, v in self.quantities.items():
            if np.isscalar(v):
                lines.append(f"       {k:<{w}} {v:>10.6g}" if isinstance(v, float)
                             else f"       {k:<{w}} {v!s:>10}")
        if self.table:
            cw = max(len(r.category) for r in self.table)
            dw = max(len(r.condition) for r in self.table)
            lines.append(f"  {'category':<{cw}}  {'must have':<{dw}}  {'count':>6}  contradicting")
            for r in self.table:
                idx = ", ".join(str(int(i)) for i in r.contradicting[:8])
                more = "…" if r.n_contradicting > 8 else ""
                lines.append(f"  {r.category:<{cw}}  {r.condition:<{dw}}  {r.count:>6}  "
                             f"{r.n_contradicting}" + (f" [{idx}{more}]" if idx else ""))
        return "\n".join(lines)

    def __repr__(self) -> str:
        return (f"<Certificate {self.title!r} ok={self.ok} "
                f"kkt_violation={self.kkt_violation:.2e}>")
