"""The benchmark suites run by name (``margin-opt bench SUITE``) at tiny sizes.

Not timed: each suite's rows are checked for what they compute (every cvxpy form of
the dual reaches the naive form's optimum; the memory row counts what it says).
"""

import pytest

from margin_opt import cli
from margin_opt.bench import SUITES, run_suite


def test_every_suite_module_has_run_and_format_rows():
    from importlib import import_module

    for name, path in SUITES.items():
        module = import_module(path)
        assert callable(module.run) and callable(module.format_rows), name


def test_cvxpy_dual_forms_reach_the_same_optimum():
    rows, text = run_suite("cvxpy-dual", sizes=[60])
    naive = next(r for r in rows if r["form"] == "naive quad_form")["dual_objective"]
    assert len(rows) == 4
    for r in rows:  # the naive form (cvxpy's own quad_form) is the independent reference
        assert abs(r["dual_objective"] - naive) <= 1e-6 * max(1.0, abs(naive)), r
    assert "factor (pivoted chol)" in text and "load average" in text


def test_cvxpy_dual_poly2_and_unknown_form():
    rows, _ = run_suite("cvxpy-dual", sizes=[50], kernel="poly2", forms=("quad_form",))
    assert {r["kernel"] for r in rows} == {"poly2"}
    assert abs(rows[0]["dual_objective"] - rows[1]["dual_objective"]) < 1e-6 * rows[0][
        "dual_objective"]
    with pytest.raises(ValueError, match="unknown form"):
        run_suite("cvxpy-dual", sizes=[50], forms=("nope",))


def test_memory_row_in_a_fresh_process():
    rows, text = run_suite("memory", sizes=[400])
    (r,) = rows
    assert r["n"] == 400 and r["nxn_mb"] == pytest.approx(400 * 400 * 8 / 2**20)
    assert r["peak_rss_mb"] >= r["rss_before_mb"] > 0
    assert r["status"] == "optimal" and 0 < r["nsv_ours"] <= 400
    assert "peak RSS" in text


def test_run_suite_refuses_what_a_suite_does_not_take():
    with pytest.raises(ValueError, match="takes no --sizes"):
        run_suite("conditions", sizes=[10])
    with pytest.raises(ValueError, match="unknown benchmark suite"):
        run_suite("nope")


def test_cli_bench_passes_sizes(capsys):
    assert cli.main(["bench", "cvxpy-dual", "--sizes", "50"]) == 0
    out = capsys.readouterr().out
    assert out.count("\n    50 rbf") == 4
    assert cli.main(["bench", "conditions", "--sizes", "50"]) == 2
    assert "takes no --sizes" in capsys.readouterr().err


def test_linear_suite_crammer_singer_rows():
    # the Crammer–Singer rows of `bench linear` on a tiny 10-class text-like set: ours
    # certified, its primal objective at most liblinear's (scikit-learn's
    # LinearSVC(multi_class="crammer_singer"), the independent reference, read in the
    # same problem) and within liblinear's tol-1e-4 accuracy of it
    from margin_opt.bench.linear import crammer_singer_rows, format_rows

    (row,) = crammer_singer_rows(repeats=1, datasets=("text-300",))
    assert row["certified"] is True and row["method"] == "sequential-dual"
    assert row["obj_ours"] <= row["obj_liblinear"] * (1 + 1e-9)
    assert row["obj_liblinear"] - row["obj_ours"] <= 1e-3 * row["obj_ours"]
    assert "Crammer–Singer" in format_rows([row]) and row["data"] == "text 300×20000"
