"""Run a problem with several methods, certify each, and tabulate (shared by the
SVC, SVR and one-class reports of ``margin-opt verify``)."""

from __future__ import annotations

import warnings

import numpy as np

from ..methods import available, get_method, method_names, not_applicable, stopping_options

__all__ = ["run_methods", "format_table", "method_options", "default_methods",
           "nu_property_lines",
           "CVXPY_KERNEL_MAX_N", "run_ok", "TablePrinter", "finish", "sklearn_solution"]

#: Above this many samples a non-linear kernel's cvxpy forms (a dense n × n quadratic
#: form) are left out of the default methods: minutes to hours, and gigabytes.
CVXPY_KERNEL_MAX_N = 3000


def default_methods(model, kernel, n_samples=0) -> list:
    """The exact methods of ``model`` available here, the peer last.

    Every registry method that is not iterative (those that keep w explicit, such as
    ``dcd``, for the linear kernel only); for a non-linear kernel with more
    than :data:`CVXPY_KERNEL_MAX_N` samples the cvxpy forms are left out (ask for
    them with ``methods=``) and SMO at tol 1e-6 is the reference.
    """
    out = []
    for name in method_names(model):
        spec = get_method(name)
        if spec.iterative or not available(name):
            continue
        if spec.route == "cvxpy" and kernel != "linear" and n_samples > CVXPY_KERNEL_MAX_N:
            continue
        if spec.explicit_w and kernel != "linear":      # w explicit: the linear kernel only
            continue
        out.append(name)
    return out



def method_options(problem, name) -> dict:
    """The options ``margin-opt verify`` runs method ``name`` with on ``problem``.

    The registry's ``verify_options``, with a backend's stopping tolerance set by the
    registry's policy so that its answer certifies at the verify tolerance.
    """
    spec = get_method(name, problem.model)
    options = dict(spec.verify_options)
    if spec.stopping == "certified_gap" and "tol" in options:
        options.update(stopping_options(name, options["tol"], float(problem.C_i.max())))
    return options


def run_methods(problem, methods, external=None, on_row=None, quantities=()):
    """Solve ``problem`` with each method and certify the answer.

    Parameters
    ----------
    problem : SVMProblem, SVRProblem or OneClassProblem
    methods : list of str
        Registry names (:mod:`margin_opt.methods`); each is held to its documented
        accuracy (``Method.accuracy_for``).
    external : callable, optional
        ``external(problem) -> Solution`` for the peer method (LIBSVM).
    on_row : callable, optional
        ``on_row(row)`` as each method finishes (e.g. :meth:`TablePrinter.row`, so
        that a long run prints its rows as they come); the row's ``agreement`` is
        set where the reference is known by then.
    quantities : sequence of str, default=()
        Names of the certificate's quantities copied into each certified row (e.g. the
        one-class certificate's ``outlier_fraction`` and ``support_fraction``).

    Returns
    -------
    rows : list of dict
        One JSON-ready row per method (an ``error`` row when a method raised).
    solutions : dict of str to Solution
    reference : str or None
        The method whose dual optimum the ``agreement`` column is measured against
        (cvxpy-dual when it passed, else the first passing method).

    Raises
    ------
    ValueError
        A name that is not a method of this model.
    """
    specs = [get_method(m, problem.model) for m in methods]
    rows, solutions = [], {}
    waits = any(spec.name == "cvxpy-dual" for spec in specs)  # the preferred reference
    for spec in specs:
        name, tol = spec.name, spec.accuracy_for(problem.model)
        row = {"method": name, "iterative": spec.iterative, "tol": tol}
        reason = not_applicable(name, problem)
        if reason is not None:
            row.update(status="n/a", reason=reason, ok=None)
            _finish(rows, row, on_row, waits)
            continue
        options = method_options(problem, name)
        try:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                sol = external(problem) if spec.route == "peer" else \
                    problem.solve(name, certify=False, **options)
            cert = problem.certify(sol, tol=tol, **spec.certify_options())
        except Exception as exc:  # a failing method is a row, not a crash
            row.update(status="error", error=f"{type(exc).__name__}: {exc}", ok=False)
            _finish(rows, row, on_row, waits)
            continue
        solutions[name] = sol
        q = cert.quantities
        row.update(
            solver=sol.backend, status=sol.status, primal=sol.primal_objective,
            dual=sol.dual_objective, gap=cert.duality_gap, kkt=cert.kkt_violation,
            n_sv=int(sol.support_.size), n_free=q.get("n_free"),
            n_at_C=q.get("n_at_C", q.get("n_at_bound")),
            time=sol.timings.get("total", float("nan")), compile=sol.timings.get("compile"),
            solve=sol.timings.get("solve"), n_iter=sol.n_iter, tol=tol, ok=cert.ok,
            warnings=sorted({str(w.message) for w in caught}), side=spec.side,
            **{k: q[k] for k in quantities if k in q})
        if not cert.ok:
            row["failed"] = cert.failed()
        _finish(rows, row, on_row, waits)
    reference = _reference(rows)
    for r in rows:
        _set_agreement(r, rows, reference)
    return rows, solutions, reference


def _reference(rows, waits=False):
    """The method the ``vs ref`` column is measured against: cvxpy-dual where it
    passed, else the first passing exact method; None while undecided (``waits``:
    cvxpy-dual is still to run) or where none passed."""
    dual = next((r for r in rows if r["method"] == "cvxpy-dual"), None)
    if dual is not None and dual["ok"]:
        return "cvxpy-dual"
    if waits and dual is None:
        return None
    return next((r["method"] for r in rows if r.get("ok") and not r["iterative"]), None)


def _set_agreement(row, rows, reference):
    if reference is not None and "primal" in row:
        ref = next(r for r in rows if r["method"] == reference)["dual"]
        val = row["primal"] if row["side"] == "primal" else row["dual"]
        row["agreement"] = abs(val - ref) / max(1.0, abs(ref))


def _finish(rows, row, on_row, waits):
    """Append ``row`` and hand it to ``on_row`` with its agreement where known."""
    rows.append(row)
    if on_row is not None:
        _set_agreement(row, rows, _reference(rows, waits))
        on_row(row)


def sklearn_solution(problem, estimator, *args, **fit):
    """Fit a scikit-learn (LIBSVM) estimator on ``problem.X`` (and ``args``: the labels)
    and read its answer with ``problem.solution_from_sklearn``, timed (the peer row)."""
    import time

    from ..validation import libsvm_input

    t0 = time.perf_counter()
    estimator.fit(libsvm_input(problem.X), *args, **fit)
    elapsed = time.perf_counter() - t0
    sol = problem.solution_from_sklearn(estimator)
    sol.timings["total"] = elapsed
    return sol


def nu_property_lines(rows, nu, n, *, heading, below, extra=None) -> list:
    """The ν-property of each certified row, one line each: a ``heading``, then per row
    ``below``'s count / n ≤ ν ≤ support vectors / n and whether it holds (the
    certificate's ``nu_property`` check decides the row's verdict, at its tolerance).

    Parameters
    ----------
    rows : list of dict
        :func:`run_methods`'s rows, with ``support_fraction``, ``n_support`` and, for
        ``below = (name, fraction key, count key)``, its fraction and count.
    nu : float
    n : int
        The number of training points.
    heading : str
    below : tuple of (str, str, str)
        The lower side's words and its rows' keys: ("outliers", "outlier_fraction",
        "n_outliers") for the one-class SVM, margin errors for the ν-SVC and ν-SVR.
    extra : callable, optional
        ``extra(row) -> str`` appended to the row's line (e.g. its equivalent C).

    Returns
    -------
    lines : list of str
    """
    name, frac_key, count_key = below
    lines = [f"{heading}, ν = {nu:g}, n = {n}"]
    for r in rows:
        if frac_key not in r:
            continue
        low, sv = r[frac_key], r["support_fraction"]
        short = max(0.0, low - nu, nu - sv)
        verdict = "holds" if short == 0 else f"off by {short:.2g}"
        more = extra(r) if extra is not None else ""
        lines.append(f"  {r['method']:<12}  {name} {r[count_key]:>6} ({low:.4f})  ≤  "
                     f"{nu:g}  ≤  support vectors {r['n_support']:>6} ({sv:.4f})  {verdict}"
                     + (f"; {more}" if more else ""))
    return lines


def run_ok(rows) -> bool:
    """The run's verdict: every method run certified at the tolerance it is held to.

    Not-applicable rows do not count; an iterative method (subgradient, Pegasos) is
    held to its documented accuracy (``Method.accuracy_for``), not to 1e-6, and fails
    the run when it misses even that.
    """
    return not failed_methods(rows)


def failed_methods(rows) -> list:
    """The methods whose row failed (its certificate at its tolerance, or an error)."""
    return [r["method"] for r in rows if r["status"] != "n/a" and not r["ok"]]


def _cells(r):
    if r["status"] == "n/a":
        return [r["method"], "n/a", *[""] * 8, r["reason"]]
    if r["status"] == "error":
        return [r["method"], "ERROR", *[""] * 8, r["error"]]
    sv = f"{r['n_free']}/{r['n_at_C']}" if r.get("n_free") is not None else str(r["n_sv"])
    agreement = "-" if r.get("agreement") is None else f"{r['agreement']:.1e}"
    verdict = "OK" if r["ok"] else "FAIL " + ",".join(r.get("failed", []))
    if r.get("iterative"):
        verdict += f" (iterative: held to its accuracy {r['tol']:.0e}, gap {r['gap']:.1e})"
    return [r["method"], (r["solver"] or "")[:26], f"{r['primal']:.8f}", f"{r['dual']:.8f}",
            f"{r['gap']:.1e}", f"{r['kkt']:.1e}", sv, f"{r['time']:.3f}", agreement,
            f"{r['tol']:.0e}", verdict]


_HEAD = ["method", "solver", "primal", "dual", "rel gap", "KKT", "SVs", "time s", "vs ref",
         "tol", "cert"]
#: column widths: fixed, so that a row can be printed as soon as its method finishes
#: (a wider number widens its own line only; columns stay two spaces apart)
_WIDTHS = [12, 24, 14, 14, 7, 7, 7, 7, 7, 5]
_LEFT = {0, 1}


def _line(c):
    if c[1] in ("n/a", "ERROR"):
        return f"{c[0]:<{_WIDTHS[0]}}  {c[1]}: {c[-1]}"
    return "  ".join(v.ljust(_WIDTHS[k]) if k in _LEFT else v.rjust(_WIDTHS[k])
                     for k, v in enumerate(c[:-1])) + "  " + c[-1]


def _row_lines(r):
    return [_line(_cells(r))] + [f"{'':{_WIDTHS[0]}}  warning: {w}"
                                 for w in r.get("warnings", [])]


def _verdict(rows):
    failed = failed_methods(rows)
    if failed:
        slow = {r["method"]: r["tol"] for r in rows if r.get("iterative")
                and r["status"] not in ("n/a", "error")}
        return "CERTIFICATES FAILED: " + ", ".join(
            f"{m} (iterative, short of its documented accuracy {slow[m]:.0e})" if m in slow
            else m for m in failed)
    if any(r.get("iterative") and r["status"] != "n/a" for r in rows):
        return "all certificates passed (iterative methods at their documented accuracy)"
    return "all certificates passed"


def _closing(rows, reference):
    return [f"reference (vs ref): {reference or 'none, no exact method passed'}",
            _verdict(rows)]


def format_table(title, rows, reference) -> str:
    """The rows of :func:`run_methods` as a text table: the title, the header, one line
    per method (and its warnings), the reference and the verdict.

    The same lines as :class:`TablePrinter` prints while the methods run.
    """
    lines = [title, _line(_HEAD)]
    for r in rows:
        lines.extend(_row_lines(r))
    return "\n".join(lines + _closing(rows, reference))


class TablePrinter:
    """Print :func:`format_table`'s lines as the methods finish, flushing each.

    Parameters
    ----------
    title : str
        The first line (printed at once, with the header).
    stream : file-like
        Where to write (``sys.stdout`` in ``margin-opt verify``).

    Examples
    --------
    >>> import io
    >>> out = io.StringIO()
    >>> printer = TablePrinter("a title", out)
    >>> out.getvalue().splitlines()[0]
    'a title'
    """

    def __init__(self, title, stream):
        self.stream = stream
        self._write([title, _line(_HEAD)])

    def _write(self, lines):
        for line in lines:
            print(line, file=self.stream)
        flush = getattr(self.stream, "flush", None)
        if flush is not None:
            flush()

    def row(self, row):
        """One finished row of :func:`run_methods` (its ``on_row``)."""
        self._write(_row_lines(row))

    def close(self, rows, reference, extra=()):
        """The reference, the verdict, then ``extra`` lines."""
        self._write(_closing(rows, reference) + list(extra))


def finish(report, title, rows, reference, said=(), printer=None, plot=None):
    """The end of a ``verify`` report: the line saying what ``--plot`` wrote, the
    printer's closing lines (the reference, the verdict, then ``said``), the result.

    Parameters
    ----------
    report : dict
        With ``ok`` (:func:`run_ok`).
    title : str
    rows : list of dict
        :func:`run_methods`'s rows.
    reference : str or None
    said : sequence of str, default=()
        Lines after the verdict (the reference's certificate, ...).
    printer : TablePrinter, optional
        The printer that printed the rows as they came.
    plot : str, optional
        The figure's path, when ``--plot`` asked for one (written where a reference
        exists).

    Returns
    -------
    report : dict
    text : str
        :func:`format_table`'s lines, then ``said`` and the plot line.
    ok : bool
    """
    said = list(said)
    if plot:
        said.append("plot: " + plot if reference is not None else
                    "plot: no figure, since no method's answer certified.")
    if printer is not None:
        printer.close(rows, reference, said)
    return report, "\n".join([format_table(title, rows, reference), *said]), report["ok"]


def plot_histories(solutions, reference, problem, path):
    """Suboptimality J − J* of the iterative methods by iteration (log–log) to ``path``.

    J = P/(C n) is the average-loss objective, J* from the reference solution; the
    O(1/√t) and O(log t/(λt)) reference rates are drawn (see
    :func:`margin_opt.plots.convergence.plot_convergence`).  Returns False when no
    method has a history or there is no reference.
    """
    from ..plots.convergence import plot_convergence

    scale = problem.C * problem.n_samples
    runs = {}
    for k, s in solutions.items():
        if "objective" not in s.history:
            continue
        J = np.asarray(s.history["objective"]) / scale
        if "step" in s.history:  # one entry per epoch: put it at its step count
            runs[k] = (np.asarray(s.history["step"], dtype=float), J)
        else:
            runs[k] = J
    if not runs or reference is None:
        return False
    plot_convergence(runs, reference.dual_objective / scale, lam=1.0 / scale, file=path,
                     title=f"suboptimality against iteration (n={problem.n_samples})")
    return True
