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

from .display import html_table
from .exceptions import CertificateError

__all__ = ["Certificate", "Check", "TableRow", "CompositeCertificate"]


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

    def _repr_html_(self) -> str:
        """The report as HTML tables (Jupyter's display): the checks, the scalar
        quantities and the support-vector (or tube) table."""
        import html

        head = (f"<p><b>{html.escape(self.title)}: {'OK' if self.ok else 'FAILED'}</b> "
                f"(largest KKT residual {self.kkt_violation:.2e})</p>")
        notes = "".join(f"<p>note: {html.escape(n)}</p>" for n in self.notes)
        checks = html_table(["", "check", "value", "tol", "what"],
                            [("ok" if c.passed else "FAIL", c.name, f"{c.value:.3e}",
                              f"{c.tol:.1e}", c.description) for c in self.checks],
                            caption="optimality conditions")
        scalars = [(k, f"{v:.6g}" if isinstance(v, float) else str(v))
                   for k, v in self.quantities.items() if np.isscalar(v)]
        out = head + notes + checks
        if scalars:
            out += html_table(["quantity", "value"], scalars, caption="quantities")
        if self.table:
            out += html_table(
                ["category", "must have", "count", "contradicting", "first of them"],
                [(r.category, r.condition, r.count, r.n_contradicting,
                  ", ".join(str(int(i)) for i in r.contradicting[:8])
                  + ("…" if r.n_contradicting > 8 else "")) for r in self.table],
                caption="support-vector table")
        return out

    def __repr__(self) -> str:
        return (f"<Certificate {self.title!r} ok={self.ok} "
                f"kkt_violation={self.kkt_violation:.2e}>")


class CompositeCertificate:
    """A certificate made of named parts, e.g. the k(k−1)/2 pairs of a one-vs-one fit.

    Parameters
    ----------
    parts : dict of str to Certificate
        One certificate per sub-problem, in order (e.g. ``"setosa vs versicolor"``).
    title : str, default="Certificate"
    keys : list, optional
        Extra keys by which the parts may be looked up too (e.g. the label pairs
        ``(classes_[i], classes_[j])``), in the order of ``parts``.

    Attributes
    ----------
    ok : bool
        True when every part is ok.
    kkt_violation : float
        The largest residual over all parts.

    Notes
    -----
    ``cert["a vs b"]``, ``cert[("a", "b")]`` (with ``keys``) and ``cert[p]`` (the
    p-th part) give a part's :class:`Certificate`; iterating yields (name, part).
    """

    def __init__(self, parts, title="Certificate", keys=None):
        self.parts = dict(parts)
        self.title = title
        names = list(self.parts)
        self._keys = {} if keys is None else dict(zip(list(keys), names, strict=True))

    def __len__(self) -> int:
        return len(self.parts)

    def __iter__(self):
        return iter(self.parts.items())

    def __getitem__(self, key):
        if isinstance(key, (int, np.integer)):
            return list(self.parts.values())[key]
        if key in self._keys:
            return self.parts[self._keys[key]]
        return self.parts[key]

    @property
    def ok(self) -> bool:
        """True when every part is ok (and there is at least one part)."""
        return bool(self.parts) and all(c.ok for c in self.parts.values())

    @property
    def kkt_violation(self) -> float:
        """Largest normalized residual over all parts (NaN propagates)."""
        vals = [c.kkt_violation for c in self.parts.values()]
        return float(max(vals)) if vals else 0.0

    @property
    def n_contradicting(self) -> int:
        """Points contradicting their category, summed over the parts."""
        return sum(c.n_contradicting for c in self.parts.values())

    def failed(self) -> list:
        """``"part: check"`` for every failed check of every part."""
        return [f"{name}: {f}" for name, c in self.parts.items() for f in c.failed()]

    def is_optimal(self, eps: float) -> bool:
        """True when every part is optimal to ``eps``."""
        return all(c.is_optimal(eps) for c in self.parts.values())

    def assert_ok(self) -> None:
        """Raise :class:`~margin_opt.exceptions.CertificateError` unless :attr:`ok`."""
        if not self.ok:
            raise CertificateError(f"certificate failed on {', '.join(self.failed())}:\n{self}")

    def to_dict(self) -> dict:
        """JSON-ready dict: ``ok``, ``kkt_violation`` and every part's dict."""
        return {"ok": self.ok, "kkt_violation": self.kkt_violation,
                "parts": {name: c.to_dict() for name, c in self.parts.items()}}

    def __str__(self) -> str:
        n_bad = sum(not c.ok for c in self.parts.values())
        head = (f"{self.title}: {'OK' if self.ok else 'FAILED'} ({len(self.parts)} parts"
                + (f", {n_bad} failed" if n_bad else "")
                + f"; largest KKT residual {self.kkt_violation:.2e})")
        w = max([len(name) for name in self.parts] + [4])
        lines = [head]
        for name, c in self.parts.items():
            q = c.quantities
            extra = []
            gap = next((ch.value for ch in getattr(c, "checks", []) if ch.name == "duality_gap"),
                       None)
            if gap is not None:
                extra.append(f"gap {gap:.1e}")
            if "n_support" in q:
                sv = f"SVs {q['n_support']}"
                if "n_at_C" in q:
                    sv += f" ({q['n_at_C']} at C)"
                extra.append(sv)
            bad = c.failed()
            lines.append(f"  {'ok  ' if c.ok else 'FAIL'} {name:<{w}}  KKT {c.kkt_violation:.1e}  "
                         + "  ".join(extra) + (f"  failed: {', '.join(bad)}" if bad else ""))
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        """One row per part (Jupyter's display); ``cert[part]`` displays a part's tables."""
        import html

        head = (f"<p><b>{html.escape(self.title)}: {'OK' if self.ok else 'FAILED'}</b> "
                f"({len(self.parts)} parts; largest KKT residual "
                f"{self.kkt_violation:.2e})</p>")
        rows = []
        for name, c in self.parts.items():
            gap = next((ch.value for ch in getattr(c, "checks", []) if ch.name == "duality_gap"),
                       None)
            rows.append(("ok" if c.ok else "FAIL", name, f"{c.kkt_violation:.1e}",
                         "" if gap is None else f"{gap:.1e}",
                         c.quantities.get("n_support", ""), ", ".join(c.failed())))
        return head + html_table(["", "part", "KKT", "gap", "SVs", "failed"], rows)

    def __repr__(self) -> str:
        return (f"<CompositeCertificate {self.title!r} parts={len(self.parts)} ok={self.ok} "
                f"kkt_violation={self.kkt_violation:.2e}>")
