"""The thread policy: how many threads a fit may use (the compiled core's and BLAS's).

Every layer asks here; nothing else decides.  The rules, and why:

1. **The compiled core's pool** (``margin_opt._core``, ``src/core/pool.cpp``) runs the
   parallel loops: SMO's kernel rows, prediction's expansions, the certificates' sums.
   Its idle workers sleep (after a short watch for the next call), a forked child
   starts its own pool on its first parallel call, and every block is computed by the
   same code whatever thread takes it: nothing to refuse here but the counts below.
2. **The user's limits and parallel jobs**: never more threads than the cores this
   process may use (its CPU affinity), than :data:`THREADS_ENV` sets
   (``MARGIN_OPT_NUM_THREADS``, else ``OMP_NUM_THREADS``, which joblib's process
   workers set to their share of the cores, ``cpu_count // n_jobs``: one thread each
   for two jobs on two cores), nor than :attr:`ThreadPolicy.max_threads`.
3. **Busy cores**: where the tasks of other processes that are running at the moment
   (``/proc/loadavg``'s runnable count less this process's running threads) leave
   fewer free cores than threads, a fit uses the free ones (at least one).  The
   reading is taken when a fit starts and again during it
   (:class:`FitThreads`), at most every :attr:`ThreadPolicy.check_every` seconds: a
   reading with fewer free cores takes threads away at once (a parallel call whose
   worker thread has lost its core waits for it; with two agreeing readings needed
   either way, one SMO fit at n = 20 000 took 5.4 s against 0.95 s once, under a load
   that came and went, not reproduced since), and two readings in a row must agree to
   give them back.

The answer never depends on the thread count: every split computes each entry by the
same code, and reductions break ties by position.
"""

from __future__ import annotations

import contextvars
import functools
import os
import threading
import time
from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import dataclass

__all__ = ["ThreadPolicy", "FitThreads", "use_policy", "current_policy", "fit_threads",
           "core_threads", "one_blas_thread", "all_blas_threads", "blas_on_one_thread",
           "THREADS_ENV", "show_config"]

#: the environment variables that bound the compiled core's pool, the first one set
#: wins: margin_opt's own, then OpenMP's, which joblib's process workers set to their
#: share of the cores (``cpu_count // n_jobs``), as scikit-learn's OpenMP loops read it
THREADS_ENV = ("MARGIN_OPT_NUM_THREADS", "OMP_NUM_THREADS")


def _before_fork():
    _lock.acquire()          # no fork while another thread changes the BLAS limit


def _after_fork_in_parent():
    _lock.release()


def _after_fork_in_child():
    """A forked child has only the forking thread: the contexts other threads had open
    are gone (a limit they held stays set, one thread, and is never lifted here)."""
    global _lock, _lifted
    _lock = threading.Lock()
    mine = _inside.get(threading.get_ident())   # the forking thread's own contexts
    _inside.clear()
    if mine:
        _inside[threading.get_ident()] = mine
    else:
        _lifted = 0                             # a lift is by the one thread inside


def _runnable_tasks() -> int | None:
    """Tasks (threads) running or ready to run on the whole machine, from the fourth
    field of ``/proc/loadavg``; None where it cannot be read (not Linux)."""
    try:
        with open("/proc/loadavg", "rb") as f:
            return int(f.read().split()[3].split(b"/")[0])
    except (OSError, ValueError, IndexError):
        return None


def _own_running() -> int:
    """This process's threads in state R (running or runnable)."""
    n = 0
    try:
        tasks = os.listdir("/proc/self/task")
    except OSError:
        return 1
    for t in tasks:
        try:
            with open(f"/proc/self/task/{t}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue
        # the state follows the command name, which is in parentheses
        if stat[stat.rfind(b")") + 2:stat.rfind(b")") + 3] == b"R":
            n += 1
    return max(n, 1)


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _others_running() -> int | None:
    """Tasks of other processes running at this moment (None where unknown)."""
    total = _runnable_tasks()
    if total is None:
        return None
    return max(0, total - _own_running())


@dataclass(frozen=True)
class ThreadPolicy:
    """How a fit chooses its thread count (the rules of :mod:`margin_opt.parallel`).

    Parameters
    ----------
    max_threads : int or None, default=None
        An upper bound of one's own, below the cores and :data:`THREADS_ENV` (None: no
        bound but those).
    watch_load : bool, default=True
        Rule 3: use only the cores that other processes leave free.
    check_every : float, default=0.05
        Seconds between two readings of the load during a fit.
    others_running : callable or None, default=None
        ``() -> int or None``: the tasks of other processes running now (None: read
        from ``/proc``; tests pass a reading of their own).
    pair_workers : int or None, default=None
        Worker threads that solve a one-vs-one fit's pairs side by side
        (:func:`margin_opt.estimators.ovo.fit_one_vs_one`, where the pairs share the
        kernel matrix and SMO solves them).  None: by the rules above, one fewer than
        :func:`core_threads` (the fitting thread keeps a core), at least 1, no more than
        the pairs or the cache budget's blocks.  An int ≥ 1 is taken as given, beyond
        those rules (a test of the threaded path on any machine, a benchmark); the
        answer is the same for any count.

    Raises
    ------
    ValueError
        ``pair_workers`` < 1.
    """

    max_threads: int | None = None
    watch_load: bool = True
    check_every: float = 0.05
    others_running: Callable[[], int | None] | None = None
    pair_workers: int | None = None

    def __post_init__(self):
        if self.pair_workers is not None and int(self.pair_workers) < 1:
            raise ValueError(f"pair_workers must be None or >= 1, got {self.pair_workers}.")


_DEFAULT = ThreadPolicy()
_policy = contextvars.ContextVar("margin_opt_thread_policy", default=_DEFAULT)


@contextmanager
def use_policy(policy: ThreadPolicy):
    """A context manager making ``policy`` the default :class:`ThreadPolicy` of the fits
    started in it (in this thread and context), e.g. ``ThreadPolicy(watch_load=False)``
    for a benchmark that should use every thread whatever the load, or
    ``ThreadPolicy(max_threads=1)``.

    Parameters
    ----------
    policy : ThreadPolicy
    """
    if not isinstance(policy, ThreadPolicy):
        raise TypeError(f"policy must be a ThreadPolicy, got {type(policy).__name__}.")
    token = _policy.set(policy)
    try:
        yield policy
    finally:
        _policy.reset(token)


def current_policy() -> ThreadPolicy:
    """The :class:`ThreadPolicy` in force here: the one of the innermost
    :func:`use_policy`, else ``ThreadPolicy()``.

    Returns
    -------
    ThreadPolicy
    """
    return _policy.get()


def _env_threads() -> int | None:
    """The bound :data:`THREADS_ENV` sets (None: none set, or not a positive integer)."""
    for name in THREADS_ENV:
        value = os.environ.get(name, "").strip()
        if value:
            try:
                n = int(value.split(",")[0])      # OpenMP's nested form "2,1": the outer
            except ValueError:
                return None
            return n if n >= 1 else None
    return None


def _core_allowed(policy: ThreadPolicy) -> int:
    """Threads rule 2 allows the compiled core's pool (before the load is looked at):
    the cores, within :data:`THREADS_ENV` and ``policy.max_threads``."""
    n = _cores()
    env = _env_threads()
    if env is not None:
        n = min(n, env)
    if policy.max_threads is not None:
        n = min(n, int(policy.max_threads))
    return max(1, n)


def _free(policy: ThreadPolicy, n: int) -> int:
    """Rule 3: of ``n`` threads, those the other processes' running tasks leave cores
    for (at least one)."""
    if n <= 1 or not policy.watch_load:
        return n
    others = (policy.others_running or _others_running)()
    if others is None:
        return n
    # /proc/loadavg counts the whole machine's tasks (a container's host's too): set
    # against all its CPUs, and the result capped by the cores this process may use
    free = min(_cores(), (os.cpu_count() or _cores()) - others)
    return max(1, min(n, free))


def core_threads(policy: ThreadPolicy | None = None) -> int:
    """Threads for a call of the compiled core (``margin_opt._core``) now: the cores,
    within :data:`THREADS_ENV` (a joblib worker's share), ``policy.max_threads`` and
    the cores other processes leave free (rule 3), at least 1.

    Parameters
    ----------
    policy : ThreadPolicy, optional
        The rules' settings (default: the one of :func:`use_policy`, else
        ``ThreadPolicy()``).

    Returns
    -------
    int
        The thread count, ≥ 1.
    """
    policy = policy or _policy.get()
    return _free(policy, _core_allowed(policy))


def fit_threads(policy: ThreadPolicy | None = None) -> int:
    """Threads for one fit's compiled loops now: :func:`core_threads` (the compiled
    core's pool runs them all), at least 1.

    Parameters
    ----------
    policy : ThreadPolicy, optional
        The rules' settings (default: the one of :func:`use_policy`, else
        ``ThreadPolicy()``).

    Returns
    -------
    int
        The thread count, ≥ 1.
    """
    return core_threads(policy)


class FitThreads:
    """The thread count of one running fit, re-read while it runs.

    ``threads`` starts as :func:`core_threads`; :meth:`refresh` (called between chunks
    of iterations) reads the load again at most every ``policy.check_every`` seconds,
    lowers the count at once to a reading's free cores, and raises it when two readings
    in a row agree on a higher one.

    Parameters
    ----------
    policy : ThreadPolicy, optional
        The rules' settings (default: the one of :func:`use_policy`, else
        ``ThreadPolicy()``).
    """

    def __init__(self, policy: ThreadPolicy | None = None):
        self.policy = policy or _policy.get()
        self.allowed = _core_allowed(self.policy)
        self.threads = _free(self.policy, self.allowed)
        self.changes = 0
        self._pending = None
        self._last = time.perf_counter()

    @property
    def watching(self) -> bool:
        """True where the count can change (more than one thread allowed, load watched)."""
        return self.allowed > 1 and self.policy.watch_load

    def refresh(self) -> int:
        """The thread count to use from now on (re-reading the load when due)."""
        if not self.watching:
            return self.threads
        now = time.perf_counter()
        if now - self._last < self.policy.check_every:
            return self.threads
        self._last = now
        n = _free(self.policy, self.allowed)
        if n == self.threads:
            self._pending = None
        elif n < self.threads:                # a core taken: give it up at once
            self.threads, self._pending = n, None
            self.changes += 1
        elif self._pending == n:
            self.threads, self._pending = n, None
            self.changes += 1
        else:
            self._pending = n
        return self.threads


_controller = None
_lock = threading.Lock()
_inside = {}        # thread ident → one_blas_thread contexts it has open
_limiter = None     # the limit they hold (None while all_blas_threads lifts it)
_lifted = 0         # all_blas_threads contexts that lifted it


def _set(limit: bool):
    """Set (``limit``) or restore the one-thread limit; the caller holds ``_lock``.

    threadpoolctl ≥ 3.8 lets only one "controlling" thread change a process-wide
    OpenBLAS pool and silently ignores the others, while these contexts are entered and
    left from any thread (the pairs of a one-vs-one fit, concurrent fits): every change
    is made under ``_lock`` by the thread at hand, which takes control for it and hands
    it back afterwards.
    """
    global _limiter
    from threadpoolctl import OpenBLASController
    clear = getattr(OpenBLASController, "clear_controlling_thread", None)
    if clear is not None:
        clear(force=True)
    try:
        if limit:
            _limiter = _controller.limit(limits=1, user_api="blas")
        else:
            limiter, _limiter = _limiter, None
            limiter.restore_original_limits()
    finally:
        if clear is not None:
            clear(force=True)


@contextmanager
def one_blas_thread():
    """A context manager limiting BLAS's thread pools to one thread (threadpoolctl).

    The pools are looked up once per process: ``threadpool_limits`` scans the loaded
    libraries on every call (~4 ms), which costs more than a small problem's solve
    (45 pairs of ~360 samples on digits).  Nested uses (from any thread) cost nothing:
    the first to enter sets the limit and the last to leave restores it.

    Why one thread: where the compiled core's threads do the work, a BLAS pool woken by
    any BLAS call from Python (a dot product of 20 000 values is split over the pool)
    keeps its threads spinning for a while after the call, taking a core from the
    core's threads (60–160 ms of CPU per SVC fit at n = 20 000).  OpenMP's limits are
    left alone: they are per thread, so a limit set by the thread that opens the first
    context could not be restored by the thread that closes the last.
    """
    global _controller
    me = threading.get_ident()
    with _lock:
        if _controller is None:
            import scipy.linalg  # noqa: F401  (its BLAS/LAPACK loaded before the look)
            from threadpoolctl import ThreadpoolController
            _controller = ThreadpoolController()
        if not _inside and not _lifted:
            _set(True)
        _inside[me] = _inside.get(me, 0) + 1    # only once the limit is set (it may raise)
    try:
        yield
    finally:
        with _lock:
            _inside[me] -= 1
            if not _inside[me]:
                del _inside[me]
            if not _inside and _limiter is not None:
                _set(False)


def blas_on_one_thread(method):
    """Decorate an estimator's ``fit``: the whole fit runs under :func:`one_blas_thread`.

    The compiled core's pool does a fit's parallel work; BLAS called from Python in
    between (a product of X with a vector, a certificate's sums) would otherwise wake
    BLAS's own pool, whose threads start (OpenBLAS: each allocates its buffers on its
    first call, ~60–100 ms on a fresh 2-core VM) and then spin for a while on the cores
    the pool needs.  One limit for the whole fit, instead of one per solver call, sets
    it once.  Measured: the first ``SVC().fit`` on digits in a fresh process 172–181 ms
    → 68–96 ms (the second fit 83–87 → 59–64 ms, later ones ~52 ms either way).

    Parameters
    ----------
    method : callable
        ``fit(self, *args, **kwargs)``.

    Returns
    -------
    callable
        The same method, run with BLAS limited to one thread (the limit restored on
        return or on an exception).
    """
    @functools.wraps(method)
    def fit(self, *args, **kwargs):
        with one_blas_thread():
            return method(self, *args, **kwargs)
    return fit


@contextmanager
def all_blas_threads(policy: ThreadPolicy | None = None):
    """A context manager lifting :func:`one_blas_thread`'s limit for one large dense
    factorization (e.g. the Cholesky of a 4000 × 4000 kernel matrix: 0.55 s on one
    thread, 0.34 s on two), set again on leaving.  Nothing where no limit is set, or
    where another thread has a :func:`one_blas_thread` context open (the pairs of a
    one-vs-one fit: lifting the limit for one would lift it for all), nor where
    :func:`core_threads` (under ``policy``) allows one thread (busy cores, a parallel
    job)."""
    global _lifted
    me = threading.get_ident()
    spare = core_threads(policy) > 1         # busy cores: the factorization stays on one
    with _lock:
        lift = spare and _limiter is not None and set(_inside) == {me}
        if lift:
            _set(False)
            _lifted += 1
    try:
        yield
    finally:
        if lift:
            with _lock:
                _lifted -= 1
                if _inside and not _lifted and _limiter is None:
                    _set(True)


def show_config(file=None) -> dict:
    """Print, and return, what runs the compiled loops in this process: the compiled
    core's instruction-set build and its threads, BLAS.

    Parameters
    ----------
    file : file-like, optional
        Where to print (default: ``sys.stdout``); ``False``: print nothing.

    Returns
    -------
    config : dict
        ``version``, ``core_isa`` ("base", "v3" = AVX2 + FMA, "v4" = AVX-512),
        ``core_threads`` (:func:`core_threads` now), ``blas`` (threadpoolctl's entries:
        library, version and threads).
    """
    import sys
    from importlib.metadata import PackageNotFoundError, version

    from ._core import instruction_set

    try:
        __version__ = version("margin_opt")
    except PackageNotFoundError:        # run from a source tree that was not installed
        __version__ = "unknown"

    import scipy.linalg  # noqa: F401  (its BLAS loaded before the look)
    from threadpoolctl import threadpool_info

    blas = [{"library": i.get("internal_api"), "version": i.get("version"),
             "threads": i.get("num_threads")} for i in threadpool_info()
            if i.get("user_api") == "blas"]
    config = {"version": __version__, "core_isa": instruction_set(),
              "core_threads": core_threads(), "blas": blas}
    if file is not False:
        names = {"base": "x86-64 baseline", "v3": "x86-64-v3, AVX2 + FMA",
                 "v4": "x86-64-v4, AVX-512"}
        b = ", ".join(f"{e['library']} {e['version']} ({e['threads']} threads)" for e in blas)
        print(f"margin_opt {__version__}: compiled core for {names.get(config['core_isa'])}, "
              f"{config['core_threads']} thread(s); BLAS {b or 'none'}",
              file=file or sys.stdout)
    return config


if hasattr(os, "register_at_fork"):
    os.register_at_fork(before=_before_fork, after_in_parent=_after_fork_in_parent,
                        after_in_child=_after_fork_in_child)
