"""The thread policy (margin_opt/parallel.py): the user's limits, parallel jobs, busy
cores, fork."""

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from margin_opt.parallel import (
    THREADS_ENV,
    FitThreads,
    ThreadPolicy,
    core_threads,
    fit_threads,
)


def _reading(values):
    """A load reading that returns ``values`` one after another (the last repeated)."""
    values = list(values)

    def read():
        return values.pop(0) if len(values) > 1 else values[0]
    return read


def _cores():
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()


def _allowed():
    """The threads the policy allows here before the load is looked at."""
    return core_threads(ThreadPolicy(watch_load=False))


def test_busy_cores_leave_one_thread():
    n = _allowed()
    assert 1 <= n <= _cores()
    idle = ThreadPolicy(others_running=lambda: 0)
    busy = ThreadPolicy(others_running=lambda: os.cpu_count())
    assert fit_threads(busy) == core_threads(busy) == 1
    assert fit_threads(idle) == core_threads(idle) == n
    if n >= 2:
        # one other task running on two cores: one core left
        one_other = ThreadPolicy(others_running=lambda: os.cpu_count() - 1)
        assert fit_threads(one_other) == 1
    assert fit_threads(ThreadPolicy(max_threads=1, others_running=lambda: 0)) == 1
    # the load unknown (not Linux): the allowed count
    unknown = ThreadPolicy(others_running=lambda: None)
    assert fit_threads(unknown) == fit_threads(idle)
    assert fit_threads(ThreadPolicy(watch_load=False)) == fit_threads(idle)


def test_the_users_limits_bound_the_count(monkeypatch):
    # MARGIN_OPT_NUM_THREADS, else OMP_NUM_THREADS (joblib's workers set it), and
    # max_threads: never more threads than any of them, nor than the cores
    for name in THREADS_ENV:
        monkeypatch.delenv(name, raising=False)
    free = ThreadPolicy(watch_load=False)
    assert core_threads(free) == _cores()
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    assert core_threads(free) == fit_threads(free) == FitThreads(free).threads == 1
    monkeypatch.setenv("OMP_NUM_THREADS", "1,1")               # OpenMP's nested form
    assert core_threads(free) == 1
    monkeypatch.setenv("MARGIN_OPT_NUM_THREADS", "2")         # margin_opt's own first
    assert core_threads(free) == min(2, _cores())
    monkeypatch.setenv("MARGIN_OPT_NUM_THREADS", "1")
    monkeypatch.setenv("OMP_NUM_THREADS", "64")
    assert core_threads(free) == 1
    monkeypatch.setenv("MARGIN_OPT_NUM_THREADS", "many")      # not a count: no bound
    assert core_threads(free) == _cores()
    monkeypatch.delenv("MARGIN_OPT_NUM_THREADS")
    monkeypatch.delenv("OMP_NUM_THREADS")
    assert core_threads(ThreadPolicy(max_threads=1, watch_load=False)) == 1
    assert FitThreads(ThreadPolicy(max_threads=1, watch_load=False)).threads == 1


def test_the_count_drops_at_once_and_comes_back_after_two_agreeing_readings():
    # a core taken by another process stalls every parallel region whose worker lost
    # it: one busy reading takes the threads away; two idle readings in a row give them
    # back, so a load that comes and goes keeps the fit on one thread
    full = _allowed()
    if full < 2:
        pytest.skip("one thread here")
    busy = os.cpu_count()          # every CPU of the machine taken by others
    read = _reading([0, busy, 0, busy, 0, 0, busy])
    ft = FitThreads(ThreadPolicy(check_every=0.0, others_running=read))
    assert ft.threads == full                      # reading 0
    assert ft.refresh() == 1                       # one busy reading: one thread at once
    assert ft.refresh() == 1                       # idle once: not yet back
    assert ft.refresh() == 1                       # busy again
    assert ft.refresh() == 1                       # idle once
    assert ft.refresh() == full                    # idle twice in a row: all threads
    assert ft.refresh() == 1
    assert ft.changes == 3


def test_readings_are_spaced_by_check_every():
    if _allowed() < 2:
        pytest.skip("one thread here: the load is never read")
    calls = []

    def read():
        calls.append(1)
        return 0
    ft = FitThreads(ThreadPolicy(check_every=3600.0, others_running=read))
    for _ in range(100):
        ft.refresh()
    assert len(calls) <= 1


_FORK_SCRIPT = textwrap.dedent("""
    import multiprocessing as mp
    import numpy as np
    from sklearn.datasets import make_classification
    from margin_opt import _core
    from margin_opt.kernels import make_kernel
    from margin_opt.parallel import ThreadPolicy
    from margin_opt.solvers.smo import SMOOptions, solve_smo
    from margin_opt.standard_forms import DualQP

    # rows of 9000 entries are split over the core's pool (src/core/smo.hpp's
    # ROW_SPLIT_MIN), whatever the load: the parent runs parallel jobs before it forks
    X, y = make_classification(9000, 20, random_state=0)
    y = np.where(y > 0, 1.0, -1.0)
    QP = DualQP(X=X, kernel=make_kernel("rbf", X, gamma=0.05), y=y, p=-np.ones_like(y),
                upper=np.ones_like(y))
    OPTS = SMOOptions(threads=ThreadPolicy(watch_load=False))

    def fit(seed):
        return solve_smo(QP, tol=1e-6, options=OPTS).x

    if __name__ == "__main__":
        parent = fit(0)
        print("workers", _core.pool_workers(), flush=True)
        with mp.get_context("fork").Pool(2) as pool:
            out = pool.map_async(fit, [1, 2]).get(timeout=240)
        diff = max(float(np.max(np.abs(o - parent))) for o in out)
        print("children", len(out), "diff", diff)
""")


@pytest.mark.skipif(sys.platform != "linux", reason="fork is Linux's default start method")
def test_a_fork_pool_after_a_fit_completes_with_the_parents_answers(tmp_path):
    # the core's pool is re-created in a forked child (its workers do not survive the
    # fork); the children's SMO runs are the parent's, whatever their thread count
    if _cores() < 2:
        pytest.skip("one core here: no parallel job before the fork")
    script = tmp_path / "fork_after_fit.py"
    script.write_text(_FORK_SCRIPT)
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          timeout=280, cwd=os.getcwd())
    assert proc.returncode == 0, proc.stderr[-2000:]
    lines = proc.stdout.strip().splitlines()
    assert int(lines[0].split()[1]) >= 1, proc.stdout      # the parent's pool had workers
    assert lines[-1].startswith("children 2 diff"), proc.stdout
    assert float(lines[-1].split()[-1]) == 0.0


def test_a_run_changes_its_thread_count_with_the_load_and_keeps_its_iterates():
    # the thread count re-read during a run (FitThreads through SMOOptions) changes only
    # how kernel rows are split: the iterates are those of one thread and of all
    from sklearn.datasets import make_classification
    from sklearn.preprocessing import StandardScaler

    from margin_opt.kernels import make_kernel
    from margin_opt.solvers.smo import SMOOptions, solve_smo
    from margin_opt.standard_forms import DualQP

    if _cores() < 2:
        pytest.skip("one core here")
    busy = os.cpu_count()          # every CPU of the machine taken by others
    X, y = make_classification(9000, 10, flip_y=0.1, random_state=3)   # rows split
    X = StandardScaler().fit_transform(X)
    y = np.where(y > 0, 1.0, -1.0)
    qp = DualQP(X=X, kernel=make_kernel("rbf", X, gamma=0.1), y=y, p=-np.ones_like(y),
                upper=np.ones_like(y))
    runs = {}
    for name, policy in [("all", ThreadPolicy(watch_load=False)),
                         ("one", ThreadPolicy(max_threads=1)),
                         ("changing", ThreadPolicy(check_every=0.0,
                                                   others_running=_reading(
                                                       [0, 0, busy, busy] * 500)))]:
        opts = SMOOptions(threads=policy, thread_check_iter=25)
        runs[name] = solve_smo(qp, tol=1e-6, options=opts)
    assert runs["all"].cache["threads"] >= 2 and runs["one"].cache["threads"] == 1
    assert runs["changing"].cache["thread_changes"] >= 2
    assert runs["all"].cache["thread_changes"] == 0
    for name in ("one", "changing"):
        assert runs[name].nit == runs["all"].nit
        np.testing.assert_array_equal(runs[name].x, runs["all"].x)
        assert runs[name].b == runs["all"].b


@pytest.mark.parametrize("bad", [{"thread_check_iter": -1}, {"thread_check_iter": 100.0},
                                 {"interrupt_work": -5}, {"threads": 2}])
def test_smo_options_refuse_looks_that_would_never_advance(bad):
    # a look every ≤ 0 iterations made the run return at once, forever (review finding)
    from margin_opt.solvers.smo import SMOOptions

    with pytest.raises((ValueError, TypeError), match="SMOOptions"):
        SMOOptions(**bad)


def test_show_config_says_what_runs_in_one_line(capsys):
    import margin_opt
    from margin_opt import _core

    config = margin_opt.show_config()
    line = capsys.readouterr().out
    assert line.count("\n") == 1 and "compiled core for x86-64" in line
    assert config["core_isa"] == _core.instruction_set()
    assert config["core_threads"] >= 1
    assert set(config) == {"version", "core_isa", "core_threads", "blas"}
    silent = margin_opt.show_config(file=False)           # the threads follow the load
    assert capsys.readouterr().out == "" and silent["core_isa"] == config["core_isa"]


def _core_threads_here(_):
    from margin_opt.parallel import core_threads, fit_threads

    policy = ThreadPolicy(watch_load=False)
    return os.environ.get("OMP_NUM_THREADS"), core_threads(policy), fit_threads(policy)


def test_the_core_pool_takes_a_joblib_workers_share_of_the_cores():
    """joblib's process workers set OMP_NUM_THREADS to their share of the cores; the
    compiled core's pool keeps within it (one thread each for two jobs on two cores)."""
    from joblib import Parallel, delayed

    out = Parallel(n_jobs=2)(delayed(_core_threads_here)(i) for i in range(2))
    for env, threads, fit in out:
        assert env is not None and threads == fit == min(int(env), _cores())
