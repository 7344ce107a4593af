"""``margin-opt verify`` prints each row as its method finishes, and the streamed
lines are the table it returns."""

import io

import numpy as np
from sklearn.svm import SVC as LibSVC

from margin_opt import Solution, SVMProblem
from margin_opt.datasets import load_dataset
from margin_opt.reports import svm as svm_report
from margin_opt.reports.methods import TablePrinter, format_table, run_methods


class Recording(io.StringIO):
    def __init__(self):
        super().__init__()
        self.flushes = 0

    def flush(self):
        self.flushes += 1
        super().flush()


def test_rows_are_printed_before_the_next_method_runs():
    d = load_dataset("iris-binary")
    problem = SVMProblem(d.X, d.y, C=1.0, kernel="linear")
    out = Recording()
    printer = TablePrinter("title", out)
    seen = {}

    def peer(p):  # runs after cvxpy-dual and smo: their rows must be out already
        seen["before_peer"] = out.getvalue()
        sk = LibSVC(C=1.0, kernel="linear", tol=1e-8).fit(d.X, d.y)
        return Solution.from_sklearn(sk, p)

    rows, _, ref = run_methods(problem, ["cvxpy-dual", "smo", "libsvm"], external=peer,
                               on_row=printer.row)
    lines = seen["before_peer"].splitlines()
    assert lines[0] == "title" and lines[1].split()[:2] == ["method", "solver"]
    assert [line.split()[0] for line in lines[2:]] == ["cvxpy-dual", "smo"]
    assert out.flushes >= 3 and ref == "cvxpy-dual"
    # the live agreement is the final one (the reference ran first); LIBSVM's optimum
    # is an independent reference for cvxpy's
    assert rows[2]["agreement"] < 1e-6
    printer.close(rows, ref)
    assert out.getvalue().rstrip("\n") == format_table("title", rows, ref)


def test_verify_streams_the_returned_table():
    out = io.StringIO()
    report, text, ok = svm_report.verify(load_dataset("iris-binary"), kernel="linear",
                                         methods=["cvxpy-dual", "smo"], stream=out)
    assert ok and out.getvalue().rstrip("\n") == text
    assert "reference (vs ref): cvxpy-dual" in text and text.endswith("all certificates passed")
    smo = next(r for r in report["rows"] if r["method"] == "smo")
    assert np.isfinite(smo["agreement"]) and smo["agreement"] < 1e-5
