"""The conformance kit (margin_opt.testing): suites, references, grading, isolation, report, CLI.

References: each stored reference is re-certified by its certificate and solved again by
an independent method (LIBSVM, Clarabel); the graded solvers are LIBSVM through
scikit-learn at known tolerances; the report's numbers are checked against a hand count.
"""

import json
import math
import os
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

from margin_opt.testing import (
    FAMILIES,
    Report,
    Row,
    check,
    get_problem,
    get_reference,
    grade,
    problems,
    run_conformance,
)
from margin_opt.testing.reference import recertify
from margin_opt.testing.report import shifted_geometric_mean

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
#: the perturbations' seed of the runs below (the kit draws a fresh one by default; a
#: fixed one grades the same instances on every run)
SEED = 0
#: small problems, one or two per family: the fast subset
FAST = ["svc-duplicates-rbf-300", "svc-rank-rbf-tinygamma-200", "svc-rank-linear-d2-400",
        "svc-hugeC-linear-1e4", "svc-weights-zero-rbf-300", "svc-weights-extreme-linear-300",
        "svc-nofree-linear-200", "svc-imbalance-rbf-404", "svc-unscaled-linear-200",
        "svc-hard-linear-200", "svc-real-heart-rbf", "svc-real-breast-cancer-raw-linear"]


def libsvm(K, y, C, tol=1e-10, C_factor=1.0):
    """LIBSVM (scikit-learn) on the kit's protocol; zero bounds dropped, C = inf as 1e12."""
    from sklearn.svm import SVC

    keep = np.flatnonzero(C > 0)
    c0 = float(C.max())
    w = C[keep] / c0 if np.isfinite(c0) else np.ones(keep.size)
    est = SVC(kernel="precomputed", C=C_factor * (c0 if np.isfinite(c0) else 1e12), tol=tol,
              max_iter=10 ** 8).fit(K[np.ix_(keep, keep)], y[keep], sample_weight=w)
    alpha = np.zeros(len(y))
    alpha[keep[est.support_]] = np.abs(est.dual_coef_[0])
    return alpha, float(est.intercept_[0])


# ---------------------------------------------------------------------- the suites
def test_suites_have_the_families_and_sizes_of_the_issue():
    svc, svr = problems("svc"), problems("svr")
    assert len(svc) >= 30 and len(svr) >= 15
    fams = {p.family for p in svc}
    assert {"duplicates", "rank_deficient", "huge_C", "weights", "no_free_sv", "imbalance",
            "unscaled", "hard_margin", "real"} <= fams <= set(FAMILIES)
    assert {p.size for p in svc} == {p.size for p in svr} == {"small", "medium"}
    assert all(p.n <= 5000 for p in svc + svr)
    assert len({p.name for p in svc + svr}) == len(svc) + len(svr)
    assert [str(p) for p in problems("svc", size="small", family="weights")] == [
        "svc-weights-zero-linear-300", "svc-weights-zero-rbf-300",
        "svc-weights-extreme-linear-300", "svc-weights-extreme-rbf-400"]
    with pytest.raises(ValueError, match="unknown families"):
        problems("svc", family="nope")
    with pytest.raises(ValueError, match="suite must be"):
        problems("svm")


def test_generators_are_deterministic_and_read_only():
    p = get_problem("svc-duplicates-rbf-300")
    a, b = p.make(), p.make()
    assert all(np.array_equal(a[k], b[k]) for k in a)
    arr = p.arrays()
    assert np.array_equal(arr["K"], arr["K"].T) and set(np.unique(arr["y"])) == {-1.0, 1.0}
    with pytest.raises(ValueError):
        arr["K"][0, 0] = 1.0
    # the duplicated points really carry opposite labels
    K, y = arr["K"], arr["y"]
    same = np.isclose(K, np.diag(K)[:, None]) & np.isclose(K, np.diag(K)[None, :])
    i, j = np.nonzero(np.triu(same, 1))
    assert i.size >= 60 and np.all(y[i] != y[j])


# ---------------------------------------------------------------------- the references
@pytest.mark.parametrize("name", ["svc-duplicates-linear-200", "svc-hugeC-rbf-1e4",
                                  "svc-hard-linear-200", "svr-epsilon-zero-200"])
def test_stored_references_recertified_by_two_methods(name):
    r = recertify(get_problem(name))
    assert r["certified"], r["reason"]
    assert r["agrees"], r


@pytest.mark.slow
@pytest.mark.parametrize("problem", problems("svc") + problems("svr"), ids=str)
def test_every_stored_reference_recertified_by_two_methods(problem):
    r = recertify(problem)
    assert r["certified"], r["reason"]
    assert r["agrees"], r


def test_the_certificate_fails_a_wrong_answer_readably():
    p = get_problem("svc-duplicates-rbf-300")
    ref = get_reference(p)
    check(p, ref.coef, ref.b)                                   # the reference passes
    with pytest.raises(AssertionError, match=r"svc-duplicates-rbf-300 .*fails at tol 1e-06"):
        check(p, ref.coef * 0.99, ref.b)
    with pytest.raises(AssertionError, match="alpha has shape"):
        check(p, ref.coef[:-1], ref.b)
    g = grade(p, ref.coef, ref.b + 0.1, 1e-6, ref)              # b off the margin
    assert not g.ok and g.distance < 1e-12 and "complementary_slackness" in g.failed


# ---------------------------------------------------------------------- "done means"
def _rate(report):
    return report.success_rate


def test_careful_libsvm_passes_sloppy_and_wrong_problem_do_not():
    careful = run_conformance(libsvm, "svc", 1e-6, problems=FAST, name="libsvm-1e-10",
                              seed=SEED)
    sloppy = run_conformance(lambda K, y, C: libsvm(K, y, C, tol=0.1), "svc", 1e-6,
                             problems=FAST, seed=SEED)
    doubled = run_conformance(lambda K, y, C: libsvm(K, y, C, C_factor=2.0), "svc", 1e-6,
                              problems=FAST, seed=SEED)
    assert len(careful.rows) == len(FAST)
    assert careful.success_rate >= 0.8, str(careful)
    assert sloppy.success_rate < 0.5 * careful.success_rate, str(sloppy)
    # C doubled is another problem wherever C is finite; C = inf doubled is the same one
    finite = [r.ok for r in doubled.rows if get_problem(r.problem).family != "hard_margin"]
    assert not any(finite), str(doubled)


@pytest.mark.slow
def test_careful_libsvm_passes_80_percent_of_the_whole_svc_suite():
    careful = run_conformance(libsvm, "svc", 1e-6, seed=SEED)
    sloppy = run_conformance(lambda K, y, C: libsvm(K, y, C, tol=0.1), "svc", 1e-6, seed=SEED)
    doubled = run_conformance(lambda K, y, C: libsvm(K, y, C, C_factor=2.0), "svc", 1e-6,
                              seed=SEED)
    assert careful.success_rate >= 0.8, str(careful)
    assert sloppy.success_rate < 0.5 * careful.success_rate
    assert not any(r.ok for r in doubled.rows
                   if get_problem(r.problem).family != "hard_margin"), str(doubled)


def test_a_solver_raising_on_every_third_call_fails_exactly_those_rows():
    calls = []

    def flaky(K, y, C):
        calls.append(1)
        if len(calls) % 3 == 0:
            raise RuntimeError("third call")
        return libsvm(K, y, C)

    names = FAST[:7]
    rep = run_conformance(flaky, "svc", 1e-6, problems=names, warmup=False,
                          perturb=False)              # the rows told apart by call count
    assert [r.problem for r in rep.rows] == names
    failed = [i for i, r in enumerate(rep.rows) if not r.ok]
    assert failed == [2, 5]
    for i in failed:
        assert rep.rows[i].failed == ("exception",)
        assert "raised RuntimeError: third call" in rep.rows[i].reason


def test_wrong_answers_fail_with_the_reason():
    name = "svc-nofree-linear-200"
    answers = {
        "shape": (lambda K, y, C: (np.zeros(len(y) - 1), 0.0), "alpha has shape (199,)"),
        "nan": (lambda K, y, C: (np.full(len(y), np.nan), 0.0), "NaN or inf"),
        "dtype": (lambda K, y, C: (np.zeros(len(y), dtype=complex), 0.0), "dtype complex"),
        "tuple": (lambda K, y, C: np.zeros(len(y)), "expected (alpha, b)"),
        "status": (lambda K, y, C: (*libsvm(K, y, C), "max_iter"), "status 'max_iter'"),
        "b": (lambda K, y, C: (np.zeros(len(y)), "zero"), "b must be a real number"),
    }
    for key, (fn, why) in answers.items():
        row = run_conformance(fn, "svc", problems=[name], warmup=False).rows[0]
        assert not row.ok and why in row.reason, (key, row)


def test_a_runaway_or_crashing_solver_is_stopped_and_the_run_goes_on():
    names = ["svc-nofree-linear-200", "svc-rank-rbf-tinygamma-200", "svc-duplicates-linear-200"]

    def bad(K, y, C):
        if len(y) == 200 and C[0] == 1e-3:
            time.sleep(60)                      # past the limit: the worker is killed
        if np.allclose(C, 1.0) and K.shape[0] == 200 and np.min(K) < 0:
            os._exit(3)                         # a crash of the process
        return libsvm(K, y, C)

    t = time.perf_counter()
    rep = run_conformance(bad, "svc", 1e-6, time_limit=1, problems=names, warmup=False,
                          perturb=False)              # the problems told apart by C and K
    assert time.perf_counter() - t < 30
    assert [r.failed for r in rep.rows] == [("timeout",), (), ("crash",)], str(rep)
    assert "exit code 3" in rep.rows[2].reason
    # a thread cannot be stopped: the call is abandoned and reported as such
    rep = run_conformance(lambda K, y, C: time.sleep(3), "svc", time_limit=0.5,
                          problems=names[:1], isolation="thread", warmup=False)
    assert rep.rows[0].failed == ("timeout",) and any("abandoned" in n for n in rep.notes)


# ---------------------------------------------------------------------- the report
def test_report_numbers_against_a_hand_count(tmp_path):
    rows = [Row("a", "f1", 10, True, seconds=1.0, status="optimal"),
            Row("b", "f1", 10, False, ("duality_gap",), "gap", seconds=2.0, status="optimal"),
            Row("c", "f2", 10, True, seconds=3.0),
            Row("d", "f2", 10, False, ("status",), "st", seconds=0.5, status="max_iter"),
            Row("e", "f2", 10, False, ("timeout",), "late")]
    rep = Report("hand", "svc", 1e-6, 60.0, rows)
    assert rep.success_rate == 2 / 5 and rep.n_passed == 2 and not rep.all_passed
    # qpbenchmark's shifted geometric mean: failures charged the time limit
    expected = math.exp((math.log(11) + math.log(70) + math.log(13) + math.log(70)
                         + math.log(70)) / 5) - 10
    assert rep.shifted_geometric_mean == pytest.approx(expected, rel=1e-12)
    assert shifted_geometric_mean([0.0, 0.0]) == pytest.approx(0.0, abs=1e-12)
    h = rep.honesty()       # claimed: a, b (optimal), c (no status); d did not, e timed out
    assert (h["claimed"], h["right"], h["wrong"]) == (3, 2, ["b"])
    assert rep.by_family() == {"f1": (1, 2), "f2": (1, 3)}
    data = json.loads(rep.to_json())
    assert data["success_rate"] == 0.4 and data["rows"][4]["seconds"] is None
    assert data["honesty"]["wrong"] == ["b"]
    text = str(rep)
    assert "passed 2 of 5 (40 %)" in text and text.endswith("claimed optimal but failed: b")
    pytest.importorskip("matplotlib")
    rep.plot(tmp_path / "f.png")
    assert (tmp_path / "f.png").stat().st_size > 1000


def test_user_ci_parametrization_and_check():
    params = problems("svc", size="small", family="no_free_sv")
    assert [str(p) for p in params] == ["svc-nofree-linear-200", "svc-nofree-rbf-300"]
    for p in params:
        check(p, *libsvm(*p.args()))


def test_svr_protocol_with_beta():
    from sklearn.svm import SVR

    def svr(K, z, epsilon, C):
        keep = np.flatnonzero(C > 0)
        est = SVR(kernel="precomputed", C=C.max(), epsilon=epsilon, tol=1e-10).fit(
            K[np.ix_(keep, keep)], z[keep], sample_weight=C[keep] / C.max())
        beta = np.zeros(len(z))
        beta[keep[est.support_]] = est.dual_coef_[0]
        return beta, float(est.intercept_[0]), "optimal"

    names = ["svr-epsilon-zero-200", "svr-epsilon-wide-200", "svr-weights-zero-300"]
    rep = run_conformance(svr, "svr", 1e-6, problems=names, seed=SEED)
    assert rep.all_passed, str(rep)
    wrong = run_conformance(lambda K, z, e, C: (-svr(K, z, e, C)[0], 0.0), "svr",
                            problems=names[:1], warmup=False)
    assert not wrong.rows[0].ok


# ---------------------------------------------------------------------- the CLI
SOLVER_MODULE = '''
import numpy as np
from margin_opt.testing import get_reference, problems
from margin_opt.testing.adapters import libsvm

def honest(K, y, C):
    return libsvm(K, y, C, tol=1e-10)[:2]

def oracle(K, y, C):        # looks the public references up instead of solving
    for p in problems("svc", size="small"):
        a = p.arrays()
        if a["K"].shape == K.shape and np.array_equal(a["K"], K) and np.array_equal(a["y"], y):
            r = get_reference(p)
            return r.coef, r.b, "optimal"
    raise ValueError("not a suite problem")

def zeros(K, y, C):
    return np.zeros(len(y)), 0.0
'''


def test_cli_runs_a_module_function_from_the_current_directory(tmp_path):
    (tmp_path / "my_solver.py").write_text(textwrap.dedent(SOLVER_MODULE))
    env = dict(os.environ, PYTHONPATH=REPO)
    names = "svc-nofree-linear-200,svc-duplicates-linear-200"

    def cli(*args):
        return subprocess.run([sys.executable, "-m", "margin_opt.cli", "conformance", *args],
                              cwd=tmp_path, env=env, capture_output=True, text=True,
                              timeout=300)

    ok = cli("my_solver:honest", "--problems", names, "--json")
    assert ok.returncode == 0, ok.stderr[-2000:]
    assert json.loads(ok.stdout)["n_passed"] == 2
    # the stored references are public: a lookup passes nothing on the perturbed instances
    cheat = cli("my_solver:oracle", "--problems", names, "--json")
    assert cheat.returncode == 1 and json.loads(cheat.stdout)["n_passed"] == 0
    stored = cli("my_solver:oracle", "--problems", names, "--json", "--as-stored")
    assert stored.returncode == 0 and json.loads(stored.stdout)["n_passed"] == 2
    seeded = cli("my_solver:honest", "--problems", names, "--seed", "11")
    assert seeded.returncode == 0 and "seed=11" in seeded.stdout
    bad = cli("my_solver:zeros", "--problems", names, "--plot", str(tmp_path / "p.png"))
    assert bad.returncode == 1 and "passed 0 of 2" in bad.stdout
    assert (tmp_path / "p.png").is_file()


def test_cli_bad_module_function_is_one_clean_line(tmp_path, monkeypatch, capsys):
    from margin_opt.cli import main

    (tmp_path / "my_solver2.py").write_text("x = 1\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))     # the cwd entry the CLI adds
    for spec, why in [("no_such_module:solve", "cannot import 'no_such_module'"),
                      ("my_solver2:x", "no callable 'x'"), ("nocolon", "MODULE:FUNCTION")]:
        assert main(["conformance", spec]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and why in err, err


# ---------------------------------------------------------------------- the bench's adapters
@pytest.mark.parametrize("name", ["libsvm", "cvxpy-clarabel", "qpsolvers-piqp"])
def test_adapters_solve_in_the_protocol(name):
    from margin_opt.testing.adapters import solvers

    if name.startswith("qpsolvers"):
        pytest.importorskip("qpsolvers")
        pytest.importorskip("piqp")
    for pname in ["svc-duplicates-linear-200", "svr-epsilon-zero-200"]:
        p = get_problem(pname)
        coef, b, status = solvers(p.suite)[name](1e-8)(*p.args())
        assert status == "optimal"
        check(p, coef, b, tol=1e-6)


def test_bench_conformance_rows():
    from margin_opt.bench.conformance import format_rows, run

    rows = run(suites=("svc",), tols=(1e-6, 0.5), names=["libsvm"],
               problems=["svc-nofree-linear-200", "svc-duplicates-linear-200"])
    assert [(r["solver"], r["tol"], r["passed"], r["problems"]) for r in rows] == [
        ("libsvm", 1e-6, 2, 2), ("libsvm", 0.5, 2, 2)]
    assert "| svc | libsvm | 1e-06 | 2/2 | 100 % |" in format_rows(rows)
