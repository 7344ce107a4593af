"""``run_conformance``: grade a solver on a suite, every call isolated.

Isolation.  By default (``isolation="process"``) the solver runs in a worker process
started once (forked where the platform forks, so a lambda or closure works; spawned
elsewhere, where ``solve`` must be picklable): the only way to stop a runaway solver —
compiled code in a loop never returns to Python, and a thread cannot be killed.  When a
call passes its time limit the worker is killed and a fresh one is started for the rest;
an exception, a crash of the worker (a segfault, ``os._exit``), NaN, a wrong shape or
dtype each fail that row with the reason, and the run goes on.  ``isolation="thread"``
runs each call in a daemon thread with a deadline: cheaper, but a call past its limit
is abandoned, not stopped (it goes on using a core until it returns), and the solver
runs in the caller's process: it is trusted.

The worker is a sandbox for code that is not trusted:

* answers come back as plain numbers, never pickled: the worker turns the returned
  ``(coef, b, status)`` into a float64 array, a float and a string, and sends their
  bytes with a JSON header (:func:`_encode`), which the parent reads with
  ``numpy.frombuffer`` and ``json.loads`` — no object of the solver's is ever built in
  the grading process;
* the worker leads its own session (``os.setsid``) and, on Linux, adopts the orphans of
  the processes it starts (a child subreaper): everything the solver started is killed
  at the end of each call, and the worker's whole tree at a time-out and at the end of
  the run; a copy of the worker forked by the solver that returns into the worker's loop
  exits at once, without answering;
* every call gets fresh copies of the arrays (read-only): a solver that writes into
  them (``setflags(write=True)`` can undo the flag) spoils only its own copy;
* the solver's output to stdout goes to stderr (``--json`` stays valid JSON).

With ``isolation="thread"`` the arrays are fresh copies too, and the working directory
and the global random states (``random``, ``numpy.random``) are restored after each
call; prints to ``sys.stdout`` go to ``sys.stderr``.

The worker builds each problem's arrays itself (the problem is sent, not its arrays:
the generators are deterministic) and times only the solver call; the parent grades the answer
(:func:`~margin_opt.testing.grading.grade`).  Before the graded calls, and again in each
fresh worker after a time-out or a crash, one untimed, ungraded call on the smallest
problem lets a solver compile or load what it needs (``warmup=False`` to skip); a
fresh worker's warm-up that passes the time limit fails the row it was started for
(the row is not tried again), so a solver that never returns costs one time limit per
row.
"""

from __future__ import annotations

import contextlib
import json
import math
import multiprocessing as mp
import os
import random
import secrets
import signal
import struct
import sys
import threading
import time
import traceback

import numpy as np

from . import suites as _suites
from .grading import grade
from .reference import get_reference, perturbed_reference
from .report import Report, Row, claims_success
from .suites import SUITES, get_problem, perturbed

__all__ = ["run_conformance", "load_solver", "ISOLATIONS"]

ISOLATIONS = ("process", "thread")
#: seconds past the time limit the parent waits for the answer to come back
GRACE = 1.0


def run_conformance(solve, suite="svc", tol=1e-6, time_limit=60, *, problems=None,
                    isolation="process", warmup=True, name=None, progress=None,
                    perturb=True, seed=None) -> Report:
    """Grade a solver on a conformance suite.

    The protocol, in plain arrays:

    * ``suite="svc"``: ``solve(K, y, C) -> (alpha, b)`` or ``(alpha, b, status)``, with
      ``K`` the n × n kernel matrix, ``y`` in {−1, +1}, ``C`` the per-sample upper bounds
      (``inf``: the hard margin), solving ``max 1ᵀα − ½αᵀQα`` s.t. ``0 ≤ αᵢ ≤ Cᵢ``,
      ``yᵀα = 0`` (Qᵢⱼ = yᵢyⱼKᵢⱼ), the decision function f = K(y∘α) + b;
    * ``suite="svr"``: ``solve(K, z, epsilon, C) -> (beta, b)`` or ``(beta, b, status)``,
      solving ``max zᵀβ − ε‖β‖₁ − ½βᵀKβ`` s.t. ``−Cᵢ ≤ βᵢ ≤ Cᵢ``, ``1ᵀβ = 0``, with
      f = Kβ + b (β = a − â of the textbook dual);
    * ``suite="oneclass"``: ``solve(K, nu) -> (alpha, rho)`` or ``(alpha, rho, status)``
      in LIBSVM's scale, solving ``min ½αᵀKα`` s.t. ``0 ≤ αᵢ ≤ 1``, ``1ᵀα = νn``, with
      f = Kα − ρ (the one-class SVM of Schölkopf et al. multiplied through by νn, as
      LIBSVM and scikit-learn's ``OneClassSVM`` solve it), graded by the one-class
      certificate with its ν-property.

    The arrays are read-only.  ``status`` is any string; "optimal", "solved", "success",
    "converged" and "ok" claim success (so does returning no status), anything else
    fails the row.

    Parameters
    ----------
    solve : callable
    suite : {"svc", "svr", "oneclass"}, default="svc"
    tol : float, default=1e-6
        The grading tolerance (:mod:`margin_opt.testing.grading`: the relative gap and
        dual residual at tol, the residuals in units of f at tol × the problem's scale).
    time_limit : float, default=60
        Seconds per call; a call past it fails (and, isolated in a process, is killed).
    problems : sequence of Problem or str, optional
        Grade only these (default: every problem of the suite,
        :func:`~margin_opt.testing.problems`).
    isolation : {"process", "thread"}, default="process"
        See the module docstring.
    warmup : bool, default=True
        One untimed call on the smallest problem first.
    name : str, optional
        The solver's name in the report (default: its ``__qualname__``).
    progress : callable, optional
        Called with each :class:`Row` as it is graded (e.g. to print it).
    perturb : bool, default=True
        Grade perturbed instances of the problems
        (:func:`~margin_opt.testing.suites.perturbed`: the samples permuted, K scaled by
        a power of two, C scaled back, the labels or targets times ±1), whose optima are
        the stored references mapped exactly: a solver that looks the public references
        up cannot pass.  False: the problems as stored.
    seed : int, optional
        The perturbations' seed (default: a fresh random one, named in the report's
        notes so that a run can be repeated).

    Returns
    -------
    report : Report

    Raises
    ------
    ValueError
        An unknown suite or isolation, tol ≤ 0, time_limit ≤ 0 or not finite, or ``solve``
        not callable.
    """
    if suite not in SUITES:
        raise ValueError(f"suite must be one of {SUITES}, got {suite!r}.")
    if isolation not in ISOLATIONS:
        raise ValueError(f"isolation must be one of {ISOLATIONS}, got {isolation!r}.")
    if not callable(solve):
        raise ValueError(f"solve must be callable, got {type(solve).__name__}.")
    tol, time_limit = float(tol), float(time_limit)
    if not tol > 0 or not time_limit > 0 or not math.isfinite(time_limit):
        raise ValueError(f"tol must be > 0 and time_limit a finite number of seconds > 0, "
                         f"got {tol} and {time_limit}.")
    todo = _suites.problems(suite) if problems is None else \
        [get_problem(p) if isinstance(p, str) else p for p in problems]
    wrong = [p.name for p in todo if p.suite != suite]
    if wrong:
        raise ValueError(f"problems {wrong} are not in the {suite} suite.")
    name = name or getattr(solve, "__qualname__", None) or repr(solve)
    report = Report(name, suite, tol, time_limit, isolation=isolation)
    if perturb:
        seed = secrets.randbits(31) if seed is None else int(seed)
        how = "ν as it is" if suite == "oneclass" else \
            "C' = C[π] / s, labels or targets times ±1"
        report.notes.append(f"graded on perturbed instances (seed={seed}): K' = s·K[π, π], "
                            f"{how}, the stored optima mapped exactly")
    posed = {p.name: perturbed(p, seed) if perturb else p for p in todo}
    first = min(todo, key=lambda p: p.n) if warmup and todo else None
    runner = _ProcessRunner(solve, first and posed[first.name]) if isolation == "process" \
        else _ThreadRunner(solve)
    try:
        if first is not None:
            runner.call(posed[first.name], time_limit)
        for prob in todo:
            ref = (lambda p=prob: perturbed_reference(p, seed)) if perturb else \
                (lambda p=prob: get_reference(p))
            row = _row(prob, posed[prob.name], runner.call(posed[prob.name], time_limit), tol,
                       time_limit, ref)
            report.rows.append(row)
            if progress is not None:
                progress(row)
    finally:
        runner.close()
    if runner.abandoned:
        report.notes.append(f"{runner.abandoned} call(s) passed the time limit in a thread "
                            "and were abandoned, not stopped (isolation='thread').")
    return report


def load_solver(spec: str):
    """The callable named ``"MODULE:FUNCTION"``, MODULE imported from the current directory.

    Parameters
    ----------
    spec : str
        E.g. ``"my_solver:solve"`` (``my_solver.py`` in the working directory) or a dotted
        module path (``"pkg.mod:solve"``).

    Returns
    -------
    solve : callable

    Raises
    ------
    ValueError
        A malformed spec, a module that cannot be imported (or that calls ``sys.exit``
        while being imported), or no callable of that name (one line, without a
        traceback).
    """
    import importlib
    import os

    module, sep, func = str(spec).partition(":")
    if not sep or not module or not func:
        raise ValueError(f"expected MODULE:FUNCTION (e.g. my_solver:solve), got {spec!r}.")
    cwd = os.getcwd()
    if cwd not in sys.path:
        sys.path.insert(0, cwd)
    try:
        mod = importlib.import_module(module)
    except SystemExit as exc:     # sys.exit() at import: a script, not a module
        raise ValueError(f"cannot import {module!r} from {cwd}: the module exited (sys.exit("
                         f"{exc.code!r})) while being imported; move its script part under "
                         "`if __name__ == \"__main__\":` so that importing it only defines "
                         "the solver.") from None
    except Exception as exc:  # noqa: BLE001 - a user's module may raise anything
        raise ValueError(f"cannot import {module!r} from {cwd}: {type(exc).__name__}: "
                         f"{exc}") from None
    obj = mod
    for part in func.split("."):
        obj = getattr(obj, part, None)
    if not callable(obj):
        raise ValueError(f"{module!r} has no callable {func!r}.")
    return obj


# ---------------------------------------------------------------------- one row
def _row(prob, posed, outcome, tol, time_limit, reference) -> Row:
    """The row of ``prob``, whose instance ``posed`` (itself or a perturbed one) the
    solver was given; ``reference()`` is that instance's reference."""
    base = dict(problem=prob.name, family=prob.family, n=prob.n)
    kind, payload, seconds = outcome
    if kind != "ok":
        return Row(**base, ok=False, failed=(kind,), reason=payload, seconds=seconds)
    coef, b, status = payload
    try:
        g = grade(posed, coef, b, tol, reference())
    except Exception as exc:  # noqa: BLE001 - an answer that breaks the certificate
        return Row(**base, ok=False, failed=("answer",), seconds=seconds, status=status,
                   reason=f"the certificate could not read the answer: "
                          f"{type(exc).__name__}: {exc}"[:300])
    failed, reasons = list(g.failed), [g.reason] if g.reason else []
    if not claims_success(status):
        failed.append("status")
        reasons.append(f"the solver reports status {status!r}")
    if seconds > time_limit:
        failed.append("timeout")
        reasons.append(f"took {seconds:.3g} s > the time limit {time_limit:g} s")
    return Row(**base, ok=not failed, failed=tuple(failed), reason="; ".join(reasons),
               gap=g.gap, distance=g.distance, seconds=seconds, status=status)


def _answer(out, suite):
    """The solver's return value as plain numbers: ``((coef, b, status), None)`` with
    coef a float64 array, b a float and status a str or None; or ``(None, reason)``.
    Runs where the solver runs (the worker process), so that only numbers leave it."""
    name, offset = _suites.PROTOCOL[suite]
    what = f"({name}, {offset})"
    try:
        if not isinstance(out, tuple | list) or len(out) not in (2, 3):
            return None, (f"returned {type(out).__name__}"
                          + (f" of length {len(out)}" if isinstance(out, tuple | list) else "")
                          + f"; expected {what} or {what[:-1]}, status)")
        status = out[2] if len(out) == 3 else None
        if status is not None and type(status) is not str:
            return None, f"status must be a string, got {type(status).__name__}"
        coef = np.asarray(out[0])
        if coef.dtype.kind not in "fiub":
            return None, f"{name} has dtype {coef.dtype}, not a real number type"
        b = np.asarray(out[1])
        if b.size != 1 or b.dtype.kind not in "fiub":
            return None, (f"{offset} must be a real number, got {type(out[1]).__name__} "
                          f"{b.shape}")
        coef = np.array(coef, dtype=np.float64, copy=True).reshape(coef.shape)
        return (coef, float(b.reshape(())), None if status is None else str(status)), None
    except Exception as exc:  # noqa: BLE001 - any object a solver may return
        return None, f"the answer could not be read: {type(exc).__name__}: {exc}"[:300]


# ---------------------------------------------------------------------- isolation
def _fresh(a):
    """A read-only copy of an array argument (each call gets its own)."""
    if isinstance(a, np.ndarray):
        a = np.array(a, copy=True)
        a.flags.writeable = False
    return a


def _call(solve, problem):
    """Run one call on fresh copies of the arrays; ``(kind, payload, seconds)`` with kind
    "ok" (payload: :func:`_answer`'s numbers), "answer" or "exception" (a reason)."""
    try:
        prob = get_problem(problem) if isinstance(problem, str) else problem
        args = tuple(_fresh(a) for a in prob.args())
    except Exception as exc:  # noqa: BLE001 - reported on the row, not raised
        return "exception", f"the problem could not be built: {type(exc).__name__}: {exc}", 0.0
    t = time.perf_counter()
    try:
        out = solve(*args)
    except BaseException as exc:  # noqa: BLE001 - everything a solver may raise
        seconds = time.perf_counter() - t
        tb = traceback.extract_tb(exc.__traceback__)
        where = f" (at {tb[-1].filename.rsplit('/', 1)[-1]}:{tb[-1].lineno})" if tb else ""
        return "exception", f"raised {type(exc).__name__}: {exc}"[:300] + where, seconds
    seconds = time.perf_counter() - t
    answer, why = _answer(out, prob.suite)
    return ("ok", answer, seconds) if why is None else ("answer", why, seconds)


def _encode(call_id, outcome) -> bytes:
    """An outcome as bytes: an 8-byte header length, a JSON header, the coefficients'
    float64 bytes (no pickle: the parent builds nothing but numbers from it)."""
    kind, payload, seconds = outcome
    head = {"call": call_id, "kind": kind, "seconds": float(seconds)}
    body = b""
    if kind == "ok":
        coef, b, status = payload
        head.update(b=b, status=status, shape=list(coef.shape))
        body = np.ascontiguousarray(coef, dtype="<f8").tobytes()
    else:
        head["reason"] = str(payload)
    h = json.dumps(head).encode()
    return struct.pack("<Q", len(h)) + h + body


def _decode(buf, call_id):
    """:func:`_encode`'s outcome back, checked: ``(kind, payload, seconds)``."""
    try:
        (hl,) = struct.unpack_from("<Q", buf)
        head = json.loads(bytes(buf[8:8 + hl]).decode())
        if head["call"] != call_id:
            raise ValueError(f"an answer to call {head['call']} came for call {call_id}")
        seconds = float(head["seconds"])
        if head["kind"] != "ok":
            return str(head["kind"]), str(head["reason"])[:300], seconds
        shape = tuple(int(v) for v in head["shape"])
        coef = np.frombuffer(buf, dtype="<f8", offset=8 + hl).astype(np.float64)
        b, status = float(head["b"]), head["status"]
        if status is not None and type(status) is not str:
            raise ValueError("a status that is not a string")
        return "ok", (coef.reshape(shape), b, status), seconds
    except Exception as exc:  # noqa: BLE001 - bytes a solver may have forged
        return "answer", f"the worker's answer could not be read ({exc})"[:300], 0.0


def _children_by_parent() -> dict:
    """{ppid: [pid, ...]} of every process (Linux /proc; {} elsewhere)."""
    out = {}
    try:
        entries = os.listdir("/proc")
    except OSError:
        return out
    for e in entries:
        if not e.isdigit():
            continue
        try:
            with open(f"/proc/{e}/stat", "rb") as f:
                ppid = int(f.read().rsplit(b")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        out.setdefault(ppid, []).append(int(e))
    return out


def _descendants(pid) -> list:
    children, found, todo = _children_by_parent(), [], [pid]
    while todo:
        for c in children.get(todo.pop(), ()):
            found.append(c)
            todo.append(c)
    return found


def _kill(pids):
    for p in pids:
        with contextlib.suppress(OSError):
            os.kill(p, signal.SIGKILL)


def _become_sandbox():
    """The worker's set-up: its own session, the orphans of its children adopted (Linux),
    killed with its parent (Linux), the solver's stdout sent to stderr."""
    with contextlib.suppress(OSError):
        os.setsid()
    if sys.platform.startswith("linux"):
        import ctypes
        with contextlib.suppress(OSError, AttributeError):
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(36, 1, 0, 0, 0)                     # PR_SET_CHILD_SUBREAPER
            libc.prctl(1, int(signal.SIGKILL), 0, 0, 0)    # PR_SET_PDEATHSIG
    with contextlib.suppress(OSError, ValueError, AttributeError):
        sys.stdout.flush()
        os.dup2(2, 1)
    sys.stdout = sys.stderr


def _reap_children(wait=5.0):
    """Kill what the solver started (the worker's descendants, orphans included: the
    worker is their subreaper) and collect their exit statuses, for at most ``wait`` s."""
    deadline = time.monotonic() + wait
    while True:
        left = _descendants(os.getpid())
        if not left:
            return
        _kill(left)
        try:
            while os.waitpid(-1, os.WNOHANG)[0]:
                pass
        except ChildProcessError:
            return
        if time.monotonic() > deadline:
            return
        time.sleep(0.001)


def _worker(conn, solve):
    me = os.getpid()
    _become_sandbox()
    while True:
        try:
            msg = conn.recv()                     # from the parent (trusted)
        except EOFError:
            return
        if msg is None:
            return
        call_id, problem = msg
        out = _call(solve, problem)
        if os.getpid() != me:                     # a copy the solver forked returned here
            os._exit(0)
        _reap_children()
        conn.send_bytes(_encode(call_id, out))


def _message(problem):
    """A registered problem travels as its name, another one as itself (pickled)."""
    try:
        return problem.name if get_problem(problem.name) is problem else problem
    except ValueError:
        return problem


class _ProcessRunner:
    """A worker process holding ``solve``; killed and restarted on a time-out."""

    abandoned = 0

    def __init__(self, solve, warmup=None):
        self.warmup = warmup
        methods = mp.get_all_start_methods()
        self.ctx = mp.get_context("fork" if "fork" in methods and sys.platform != "darwin"
                                  else "spawn")
        self.solve = solve
        self.proc = self.conn = None
        self.calls = 0

    def _start(self):
        parent, child = self.ctx.Pipe()
        try:
            self.proc = self.ctx.Process(target=_worker, args=(child, self.solve), daemon=True)
            self.proc.start()
        except Exception as exc:
            raise ValueError(f"could not start the worker process ({exc}); with the "
                             "'spawn' start method solve must be picklable (a module-level "
                             "function): or pass isolation='thread'.") from None
        child.close()
        self.conn = parent

    def call(self, problem, limit):
        if self.proc is None or not self.proc.is_alive():
            self._start()
            if self.warmup is not None and problem != self.warmup:
                kind, why, seconds = self._send(self.warmup, limit)   # untimed, ungraded
                if kind in ("timeout", "crash"):
                    return kind, f"the warm-up call of a fresh worker: {why}", seconds
        return self._send(problem, limit)

    def _send(self, problem, limit):
        t = time.perf_counter()
        self.calls += 1
        try:
            self.conn.send((self.calls, _message(problem)))
            if self.conn.poll(limit + GRACE):
                return _decode(self.conn.recv_bytes(), self.calls)
        except (EOFError, BrokenPipeError, ConnectionResetError, OSError):
            self.proc.join(1.0)
            code = self.proc.exitcode
            self._stop()
            return ("crash", f"the solver's process died (exit code {code})",
                    time.perf_counter() - t)
        self._stop()
        return ("timeout", f"no answer within the time limit of {limit:g} s: the worker "
                           "process was killed", time.perf_counter() - t)

    def _stop(self):
        """Kill the worker and everything under it (its descendants, its session)."""
        if self.proc is not None:
            pid = self.proc.pid
            if pid is not None:
                _kill(_descendants(pid))
                with contextlib.suppress(OSError):
                    os.killpg(pid, signal.SIGKILL)
            if self.proc.is_alive():
                self.proc.kill()
            self.proc.join(5.0)
        if self.conn is not None:
            self.conn.close()
        self.proc = self.conn = None

    def close(self):
        if self.proc is not None and self.proc.is_alive():
            try:
                self.conn.send(None)
                self.proc.join(2.0)
            except (BrokenPipeError, OSError):
                pass
        self._stop()


class _ThreadRunner:
    """Each call in a daemon thread with a deadline (abandoned, not stopped, when late);
    the working directory and the global random states restored after each call."""

    def __init__(self, solve):
        self.solve = solve
        self.abandoned = 0

    def call(self, problem, limit):
        box = []
        cwd, py_state = os.getcwd(), random.getstate()
        np_state = np.random.get_state()  # noqa: NPY002 - the global state a solver may seed

        def run():
            with contextlib.redirect_stdout(sys.stderr):
                box.append(_call(self.solve, problem))

        th = threading.Thread(target=run, daemon=True)
        t = time.perf_counter()
        th.start()
        th.join(limit)
        with contextlib.suppress(OSError):
            os.chdir(cwd)
        random.setstate(py_state)
        np.random.set_state(np_state)  # noqa: NPY002
        if th.is_alive():
            self.abandoned += 1
            return ("timeout", f"no answer within the time limit of {limit:g} s (the thread "
                               "was abandoned, still running)", time.perf_counter() - t)
        return box[0]

    def close(self):
        pass
