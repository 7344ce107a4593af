"""The :class:`Report` of a conformance run: rows, success rate, times, honesty.

References
----------
S. Caron et al., qpbenchmark, https://github.com/qpsolvers/qpbenchmark (the shifted
geometric mean of times with shift 10 and failures charged the time limit; the table of
how often a solver's "solved" was right).
"""

from __future__ import annotations

import json
import math
from collections import Counter
from dataclasses import asdict, dataclass, field

__all__ = ["Row", "Report", "SUCCESS_STATUSES", "shifted_geometric_mean", "claims_success"]

#: statuses that claim an optimal answer (case-insensitive); a solver that returns no
#: status claims one implicitly
SUCCESS_STATUSES = ("optimal", "solved", "success", "converged", "ok")
#: failures where the solver returned nothing (no claim of success)
NO_ANSWER = ("exception", "timeout", "crash")
#: qpbenchmark's shift of the geometric mean of times, seconds
SHIFT = 10.0


def claims_success(status) -> bool:
    """True for no status (an implicit claim) or one of :data:`SUCCESS_STATUSES`."""
    return status is None or str(status).strip().lower() in SUCCESS_STATUSES


def shifted_geometric_mean(times, shift=SHIFT) -> float:
    """exp(mean(log(tᵢ + shift))) − shift, as qpbenchmark (NaN for no times).

    Parameters
    ----------
    times : sequence of float
        Seconds (failures already charged the time limit).
    shift : float, default=10
    """
    times = list(times)
    if not times:
        return float("nan")
    return math.exp(sum(math.log(t + shift) for t in times) / len(times)) - shift


@dataclass(frozen=True)
class Row:
    """One problem's result.

    Attributes
    ----------
    problem, family : str
    n : int
    ok : bool
        Certified at the run's tolerance and a status that is not a failure.
    failed : tuple of str
        Failed checks (``"exception"``, ``"timeout"``, ``"answer"``, ``"status"``,
        ``"reference"``, or a certificate check's name).
    reason : str
    gap : float
        Relative duality gap ``|P − D| / max(|P|, |D|)`` (NaN when not read).
    distance : float
        ``|D − D*| / max(1, |D*|)`` from the reference optimum (NaN when not read).
    seconds : float
        The solver call's wall time (NaN when it did not return).
    status : str or None
        What the solver claimed (None: it returned no status).
    """

    problem: str
    family: str
    n: int
    ok: bool
    failed: tuple = ()
    reason: str = ""
    gap: float = float("nan")
    distance: float = float("nan")
    seconds: float = float("nan")
    status: str | None = None

    @property
    def claimed_success(self) -> bool:
        """The solver claimed (or implied, by giving no status) an optimal answer; a call
        that raised, crashed or timed out returned nothing and claimed nothing."""
        if self.failed and self.failed[0] in NO_ANSWER:
            return False
        return claims_success(self.status)


@dataclass
class Report:
    """What :func:`~margin_opt.testing.run_conformance` found.

    Attributes
    ----------
    solver : str
    suite : {"svc", "svr", "oneclass"}
    tol, time_limit : float
    rows : list of Row
    isolation : str
    notes : list of str
    """

    solver: str
    suite: str
    tol: float
    time_limit: float
    rows: list = field(default_factory=list)
    isolation: str = "process"
    notes: list = field(default_factory=list)

    # ------------------------------------------------------------------ numbers
    @property
    def n_passed(self) -> int:
        return sum(r.ok for r in self.rows)

    @property
    def success_rate(self) -> float:
        """Fraction of the problems that passed (NaN for none)."""
        return self.n_passed / len(self.rows) if self.rows else float("nan")

    @property
    def all_passed(self) -> bool:
        return bool(self.rows) and self.n_passed == len(self.rows)

    def charged_times(self) -> list:
        """Each row's time, failures charged the time limit."""
        return [r.seconds if r.ok else self.time_limit for r in self.rows]

    @property
    def shifted_geometric_mean(self) -> float:
        """Shifted geometric mean of the times (shift 10 s, failures charged the limit)."""
        return shifted_geometric_mean(self.charged_times())

    def honesty(self) -> dict:
        """How often the solver's claim of success was right.

        Returns
        -------
        table : dict
            ``claimed`` (rows that claimed success, explicitly or by giving no status),
            ``right`` (of those, passed), ``rate`` (right / claimed) and ``wrong`` (the
            problems that claimed success and failed).
        """
        claimed = [r for r in self.rows if r.claimed_success]
        wrong = [r.problem for r in claimed if not r.ok]
        return {"claimed": len(claimed), "right": len(claimed) - len(wrong),
                "rate": (len(claimed) - len(wrong)) / len(claimed) if claimed else float("nan"),
                "wrong": wrong}

    def by_family(self) -> dict:
        """family -> (passed, total), in the order the families first appear."""
        total, passed = Counter(), Counter()
        for r in self.rows:
            total[r.family] += 1
            passed[r.family] += r.ok
        return {f: (passed[f], total[f]) for f in total}

    def failure_reasons(self) -> dict:
        """failed check -> number of rows it failed."""
        c = Counter()
        for r in self.rows:
            c.update(set(r.failed))
        return dict(c.most_common())

    # ------------------------------------------------------------------ faces
    def to_dict(self) -> dict:
        return {"solver": self.solver, "suite": self.suite, "tol": self.tol,
                "time_limit": self.time_limit, "isolation": self.isolation,
                "success_rate": self.success_rate, "n_passed": self.n_passed,
                "n_problems": len(self.rows),
                "shifted_geometric_mean": self.shifted_geometric_mean,
                "honesty": self.honesty(), "by_family": self.by_family(),
                "notes": list(self.notes),
                "rows": [dict(asdict(r), failed=list(r.failed)) for r in self.rows]}

    def to_json(self, **kw) -> str:
        """The report as JSON (NaN written as null)."""
        return json.dumps(_nan_to_none(self.to_dict()), **({"indent": 1} | kw))

    def __str__(self) -> str:
        h = self.honesty()
        lines = [f"conformance of {self.solver} on the {self.suite} suite at tol {self.tol:g} "
                 f"(time limit {self.time_limit:g} s, {self.isolation} isolation)",
                 f"{'problem':40s} {'family':15s} {'n':>5s} {'ok':>4s} {'gap':>8s} "
                 f"{'dist':>8s} {'time s':>8s}  status / failed"]
        for r in self.rows:
            why = "" if r.ok else f" / {', '.join(r.failed)}: {r.reason}"
            lines.append(f"{r.problem:40s} {r.family:15s} {r.n:5d} {'yes' if r.ok else 'NO':>4s} "
                         f"{_g(r.gap)} {_g(r.distance)} {_g(r.seconds, '8.3f')}  "
                         f"{r.status or '-'}{why[:160]}")
        lines += ["", f"passed {self.n_passed} of {len(self.rows)} "
                      f"({100 * self.success_rate:.0f} %); shifted geometric mean of times "
                      f"{self.shifted_geometric_mean:.3f} s (shift 10, failures charged "
                      f"{self.time_limit:g} s)",
                  "per family: " + ", ".join(f"{f} {p}/{t}" for f, (p, t) in
                                             self.by_family().items()),
                  f"honesty: claimed optimal {h['claimed']}, right {h['right']}"
                  + (f" ({100 * h['rate']:.0f} %)" if h["claimed"] else "")
                  + (f"; claimed optimal but failed: {', '.join(h['wrong'])}"
                     if h["wrong"] else "")]
        lines += [f"note: {n}" for n in self.notes]
        return "\n".join(lines)

    def plot(self, path=None, ax=None):
        """Per-family success as horizontal bars (matplotlib, imported here, Agg backend).

        Parameters
        ----------
        path : str or path-like, optional
            Write a PNG there.
        ax : matplotlib Axes, optional

        Returns
        -------
        ax : matplotlib Axes

        Raises
        ------
        ImportError
            Without matplotlib (the ``plot`` extra).
        """
        from ..plots import require_matplotlib

        plt = require_matplotlib()

        fams = self.by_family()
        names = list(fams)
        rate = [100 * p / t for p, t in fams.values()]
        if ax is None:
            fig, ax = plt.subplots(figsize=(7, 0.45 * len(names) + 1.4))
        bars = ax.barh(range(len(names)), rate, color=["tab:green" if r == 100 else
                                                       "tab:orange" if r > 0 else "tab:red"
                                                       for r in rate])
        for bar, (p, t) in zip(bars, fams.values(), strict=True):
            ax.text(min(bar.get_width() + 1, 92), bar.get_y() + bar.get_height() / 2,
                    f"{p}/{t}", va="center", fontsize=8)
        ax.set_yticks(range(len(names)), names)
        ax.invert_yaxis()
        ax.set_xlim(0, 105)
        ax.set_xlabel("problems passed (%)")
        ax.set_title(f"{self.solver}: {self.suite} suite at tol {self.tol:g} — "
                     f"{self.n_passed}/{len(self.rows)} passed", fontsize=10)
        if path is not None:
            ax.figure.tight_layout()
            ax.figure.savefig(path, dpi=110)
        return ax


def _g(v, fmt="8.1e") -> str:
    return f"{'-':>8s}" if v is None or v != v else format(v, fmt)


def _nan_to_none(obj):
    if isinstance(obj, float) and obj != obj:
        return None
    if isinstance(obj, dict):
        return {k: _nan_to_none(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_nan_to_none(v) for v in obj]
    return obj
