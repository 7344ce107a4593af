# ruff: noqa: NPY002  (the legacy global random state is what thread isolation restores)
"""The conformance kit as a sandbox for solvers that are not trusted (issue 45): each
hostile solver fails its rows or is contained, leaves no process behind, and an honest
solver graded afterwards in the same session is graded as before.  The honest solver is
LIBSVM through scikit-learn (the reference the kit's own tests use)."""

import json
import os
import pickle
import random
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

from margin_opt.testing import get_problem, run_conformance
from margin_opt.testing.adapters import libsvm

PROBLEMS = ["svc-duplicates-linear-200", "svc-hugeC-linear-1e4"]
#: one seed for every run here: the honest grades are compared from run to run
SEED = 7


def honest(K, y, C):
    return libsvm(K, y, C, tol=1e-10)[:2]


def _grades(report):
    return [(r.problem, r.ok) for r in report.rows]


@pytest.fixture(scope="module")
def honest_grades():
    report = run_conformance(honest, "svc", problems=PROBLEMS, time_limit=30, seed=SEED)
    assert all(ok for _, ok in _grades(report)), report
    return _grades(report)


def _alive(pid) -> bool:
    """Running (not gone, not a zombie waiting to be reaped)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            state = f.read().rsplit(b")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in (b"Z", b"X")


class Evil:
    """An object whose unpickling runs code: it writes a file (and would patch the
    grader) wherever it is unpickled."""

    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (open, (self.marker, "w"))

    def __float__(self):
        return 0.0


def test_a_pickle_borne_answer_never_runs_in_the_grader(tmp_path, honest_grades):
    marker = str(tmp_path / "ran-in-parent")

    def evil_status(K, y, C):
        return np.zeros(len(y)), 0.0, Evil(marker)

    def evil_coef(K, y, C):
        return np.array([Evil(marker)] * len(y), dtype=object), 0.0

    def evil_b(K, y, C):
        return honest(K, y, C)[0], Evil(marker)

    for solver in (evil_status, evil_coef, evil_b):
        report = run_conformance(solver, "svc", problems=PROBLEMS, time_limit=30, seed=SEED)
        assert not any(r.ok for r in report.rows), report
        assert all("answer" in r.failed for r in report.rows), [r.failed for r in report.rows]
    assert not os.path.exists(marker)
    assert _grades(run_conformance(honest, "svc", problems=PROBLEMS, seed=SEED)) == honest_grades


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_fork_and_return_and_fork_and_sleep_leave_nothing_behind(tmp_path, honest_grades):
    pids = tmp_path / "pids"

    def fork_and_return(K, y, C):
        answer = honest(K, y, C)
        os.fork()                                  # both return into the worker's loop
        with open(pids, "a") as f:
            f.write(f"{os.getpid()}\n")
        return answer

    def fork_and_sleep(K, y, C):
        if os.fork() == 0:
            with open(pids, "a") as f:
                f.write(f"{os.getpid()}\n")
            if os.fork() == 0:                     # a grandchild, orphaned at once
                with open(pids, "a") as f:
                    f.write(f"{os.getpid()}\n")
                time.sleep(600)
            os._exit(0)
        time.sleep(0.2)
        return honest(K, y, C)

    for solver in (fork_and_return, fork_and_sleep):
        report = run_conformance(solver, "svc", problems=PROBLEMS, time_limit=30, seed=SEED)
        assert _grades(report) == honest_grades, report
    time.sleep(0.2)
    seen = [int(p) for p in pids.read_text().split()]
    assert len(seen) >= 6
    assert not [p for p in seen if _alive(p)]
    assert _grades(run_conformance(honest, "svc", problems=PROBLEMS, seed=SEED)) == honest_grades


@pytest.mark.parametrize("isolation", ["process", "thread"])
def test_writes_into_the_inputs_spoil_only_the_solvers_own_copy(isolation, honest_grades):
    before = {name: get_problem(name).arrays()["K"].copy() for name in PROBLEMS}

    def vandal(K, y, C):
        answer = honest(K, y, C)
        for a in (K, y, C):
            a.setflags(write=True)
            a[...] = 0
        return answer

    report = run_conformance(vandal, "svc", problems=PROBLEMS, time_limit=30,
                             isolation=isolation, seed=SEED)
    assert _grades(report) == honest_grades, report
    for name in PROBLEMS:
        np.testing.assert_array_equal(get_problem(name).arrays()["K"], before[name])
    assert _grades(run_conformance(honest, "svc", problems=PROBLEMS,
                                   isolation=isolation, seed=SEED)) == honest_grades


def test_thread_isolation_restores_the_directory_and_the_random_states(tmp_path):
    cwd = os.getcwd()
    np.random.seed(1)
    random.seed(1)
    want = (np.random.random(), random.random())
    np.random.seed(1)
    random.seed(1)

    def meddler(K, y, C):
        os.chdir(tmp_path)
        np.random.seed(99)
        random.seed(99)
        return honest(K, y, C)

    run_conformance(meddler, "svc", problems=PROBLEMS[:1], isolation="thread", warmup=False,
                    seed=SEED)
    assert os.getcwd() == cwd
    assert (np.random.random(), random.random()) == want


@pytest.mark.parametrize("limit", [np.inf, float("nan"), 0, -1])
def test_an_infinite_or_non_positive_time_limit_is_refused(limit):
    with pytest.raises(ValueError, match="time_limit a finite number of seconds"):
        run_conformance(honest, "svc", problems=PROBLEMS[:1], time_limit=limit)


def test_a_solver_that_never_returns_costs_one_time_limit_per_row():
    def forever(K, y, C):
        while True:
            time.sleep(0.05)

    t = time.perf_counter()
    report = run_conformance(forever, "svc", problems=PROBLEMS, time_limit=0.5, seed=SEED)
    elapsed = time.perf_counter() - t
    assert [r.failed for r in report.rows] == [("timeout",), ("timeout",)]
    # the first worker's warm-up and each row: (0.5 + 1 s of grace) each, not twice that
    assert elapsed < 3 * (0.5 + 1.0) + 3.0, elapsed


def test_json_stays_json_when_the_solver_prints(tmp_path):
    (tmp_path / "loud.py").write_text(textwrap.dedent("""
        from margin_opt.testing.adapters import libsvm

        def solve(K, y, C):
            print("hello from the solver")
            return libsvm(K, y, C, tol=1e-10)[:2]
    """))
    proc = subprocess.run([sys.executable, "-m", "margin_opt.cli", "conformance", "loud:solve",
                           "--json", "--problems", PROBLEMS[0]], cwd=tmp_path,
                          capture_output=True, text=True, timeout=300)
    data = json.loads(proc.stdout)
    assert data and "hello from the solver" in proc.stderr


def test_the_answer_crosses_as_bytes_without_pickle():
    from margin_opt.testing.runner import _decode, _encode

    coef = np.arange(5.0)
    kind, (c, b, status), seconds = _decode(_encode(7, ("ok", (coef, 1.5, "optimal"), 0.25)), 7)
    assert kind == "ok" and b == 1.5 and status == "optimal" and seconds == 0.25
    np.testing.assert_array_equal(c, coef)
    stale = _decode(_encode(6, ("ok", (coef, 1.5, None), 0.1)), 7)
    assert stale[0] == "answer" and "call 6" in stale[1]
    forged = _decode(pickle.dumps(("ok", coef, 0.1)), 7)
    assert forged[0] == "answer"


@pytest.mark.parametrize("name", ["svc-duplicates-linear-200", "svc-hugeC-linear-1e4",
                                  "svc-real-heart-rbf", "svr-epsilon-zero-200"])
def test_a_perturbed_instance_has_the_stored_optimum_mapped_and_a_lookup_fails(name):
    """The mapped reference passes on the perturbed instance at its own certified
    tolerance (the mapping is exact), while the stored answer read as it is (what a
    lookup by name returns) fails there."""
    from margin_opt.testing import get_reference, grade
    from margin_opt.testing.reference import perturbed_reference
    from margin_opt.testing.suites import perturbed

    p = get_problem(name)
    base = get_reference(p)
    for seed in (1, 2, 3):
        q, ref = perturbed(p, seed), perturbed_reference(p, seed)
        assert grade(q, ref.coef, ref.b, max(base.certified_tol, 1e-9), ref).ok
        assert not grade(q, base.coef, base.b, 1e-6, ref).ok
