"""A short cold start: ``import margin_opt`` loads no heavy dependency; a fit loads
what it uses; the first compilation of the solvers says so on stderr, once.

Each check runs in a fresh interpreter (a subprocess), where ``sys.modules`` shows
what an import or a fit really loaded.
"""

import ast
import json
import os
import subprocess
import sys
import textwrap
from importlib import import_module
from pathlib import Path

import margin_opt
from margin_opt.jit import MESSAGE, QUIET_ENV

REPO = Path(__file__).resolve().parent.parent

#: what ``import margin_opt`` must not load (each is loaded on first use)
HEAVY = ("cvxpy", "numba", "matplotlib", "scipy.optimize", "scipy.sparse.linalg")


def run_python(code, **env):
    """Run ``code`` in a fresh interpreter that imports this checkout's margin_opt."""
    environ = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(REPO), os.environ.get("PYTHONPATH", "")]))
    for key, value in env.items():
        if value is None:
            environ.pop(key, None)
        else:
            environ[key] = value
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=REPO,
                          env=environ, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc


def test_import_loads_no_heavy_dependency_and_every_name_resolves():
    proc = run_python(f"""
        import json, sys
        import margin_opt
        heavy = [m for m in {HEAVY!r} if m in sys.modules]
        listed = dir(margin_opt)
        missing_in_dir = [n for n in margin_opt.__all__ if n not in listed]
        resolved = {{n: getattr(margin_opt, n).__name__ for n in margin_opt.__all__}}
        from margin_opt import SVC, SVMProblem
        try:
            margin_opt.no_such_name
        except AttributeError as exc:
            error = str(exc)
        print(json.dumps({{"heavy": heavy, "missing_in_dir": missing_in_dir,
                          "resolved": resolved, "error": error,
                          "same": SVC is margin_opt.SVC and SVMProblem is margin_opt.SVMProblem,
                          "kernels": margin_opt.kernels.__name__}}))
    """)
    report = json.loads(proc.stdout)
    assert report["heavy"] == [], f"import margin_opt loaded {report['heavy']}"
    assert report["missing_in_dir"] == []
    assert set(report["resolved"]) == set(margin_opt.__all__)
    assert report["resolved"]["SVC"] == "SVC" and report["resolved"]["SVMProblem"] == "SVMProblem"
    assert report["same"]
    assert report["kernels"] == "margin_opt.kernels"   # a submodule, as before: imported on use
    assert report["error"] == "module 'margin_opt' has no attribute 'no_such_name'"


def test_every_public_name_has_its_module():
    assert set(margin_opt.__all__) == set(margin_opt._EXPORTS)
    for name, module in margin_opt._EXPORTS.items():
        assert getattr(margin_opt, name) is getattr(import_module("margin_opt" + module), name)
    # the static view (``if TYPE_CHECKING:`` imports, for type checkers) names the same
    tree = ast.parse(Path(margin_opt.__file__).read_text(encoding="utf-8"))
    block = next(node for node in tree.body if isinstance(node, ast.If)
                 and getattr(node.test, "id", None) == "TYPE_CHECKING")
    static = {alias.name: "." + node.module for node in block.body for alias in node.names}
    assert static == margin_opt._EXPORTS


def test_a_certified_fit_does_not_import_cvxpy():
    """The default SVC certifies its SMO answer with its own KKT checks: no cvxpy."""
    proc = run_python("""
        import sys
        import numpy as np
        from margin_opt import SVC
        rng = np.random.default_rng(0)
        X = np.vstack([rng.normal(-2, 1, (30, 2)), rng.normal(2, 1, (30, 2))])
        y = np.r_[np.zeros(30), np.ones(30)]
        model = SVC().fit(X, y)
        print(model.certificate_.ok, "cvxpy" in sys.modules, "matplotlib" in sys.modules)
    """)
    assert proc.stdout.split() == ["True", "False", "False"]


# ---------------------------------------------------------------------- the compile line

PROBE = """
    import sys
    from numba import njit
    from margin_opt.losses import loss_derivative, loss_value

    @njit
    def not_ours(x):
        return x + 1.0

    not_ours(1.0)
    print("-- after a function of another package", file=sys.stderr, flush=True)
    loss_value(0, 1.0, 1.0, 0.5)
    loss_derivative(0, 1.0, 1.0, 0.5)
    loss_value(1, 0.1, 1.0, 0.5)
"""


def test_the_first_compilation_is_announced_once(tmp_path):
    cache = str(tmp_path / "numba_cache")
    cold = run_python(PROBE, NUMBA_CACHE_DIR=cache, **{QUIET_ENV: None}).stderr
    assert cold.count(MESSAGE) == 1, cold
    assert cold.index("-- after") < cold.index(MESSAGE)   # silent for others' functions
    assert len(MESSAGE.splitlines()) == 1
    warm = run_python(PROBE, NUMBA_CACHE_DIR=cache, **{QUIET_ENV: None}).stderr
    assert MESSAGE not in warm, "a load from numba's cache is not a compilation"
    quiet = run_python(PROBE, NUMBA_CACHE_DIR=str(tmp_path / "other"), **{QUIET_ENV: "1"})
    assert MESSAGE not in quiet.stderr


# ---------------------------------------------------------------------- compile what runs

def test_a_serial_call_compiles_no_parallel_function(tmp_path):
    """``state.split`` and ``state.when`` in compiled code: with None (a serial run, a
    cache without packed rows, dense data) the function they would call is neither run
    nor compiled; with an int above 1 (or an array) it is compiled and runs; the callers
    are cached by numba (a function passed as a value would be an address it cannot
    cache), so that a second process compiles nothing."""
    code = """
        import sys
        import numpy as np
        from numba import njit, prange
        from numba.core import event

        from margin_opt.solvers.smo.state import count, split, threads_if, when

        compiled = []

        class Listener(event.Listener):
            def on_start(self, ev):
                compiled.append(ev.data["dispatcher"].py_func.__name__)

            def on_end(self, ev):
                pass

        event.register("numba:compile", Listener())
        sys.path.insert(0, sys.argv[1])
        import probe_split as m

        a = np.zeros(4)
        assert m.caller(a, None, None) == (False, 1)
        assert a.tolist() == [10.0, 0, 0, 0]
        serial = sorted(set(c for c in compiled if c in ("caller", "par", "marked")))
        b = np.zeros(4)
        assert m.caller(b, 2, np.zeros(1)) == (True, 2)
        assert b.tolist() == [-1.0, 1.0, 0, 0]
        assert split(m.par)(None, a, 2) is False and count(None) == 1
        assert threads_if(3, False) == 1
        every = sorted(set(c for c in compiled if c in ("caller", "par", "marked")))
        print(",".join(serial), ",".join(every))
    """
    (tmp_path / "probe_split.py").write_text(textwrap.dedent("""
        from numba import njit, prange
        from margin_opt.solvers.smo.state import count, split, threads_if, when

        @njit(parallel=True, cache=True)
        def par(a, nthr):
            for h in prange(nthr):
                a[h] += 1.0

        @njit(cache=True)
        def marked(a):
            a[0] = -1.0
            return True

        par_threads = split(par)
        marked_if = when(marked)

        @njit(cache=True)
        def caller(a, nthr, flag):
            if not par_threads(threads_if(nthr, a.shape[0] > 1), a, nthr):
                a[0] += 10.0
            return marked_if(flag, a), count(nthr)
    """))
    cache = str(tmp_path / "cache")
    script = textwrap.dedent(code)
    env = dict(os.environ, NUMBA_CACHE_DIR=cache, PYTHONPATH=os.pathsep.join(
        [str(REPO), os.environ.get("PYTHONPATH", "")]))
    runs = [subprocess.run([sys.executable, "-c", script, str(tmp_path)], cwd=REPO, env=env,
                           capture_output=True, text=True, timeout=600) for _ in range(2)]
    for proc in runs:
        assert proc.returncode == 0, proc.stderr[-3000:]
        assert "Cannot cache" not in proc.stderr, proc.stderr[-3000:]
    # the serial call compiled the caller alone; the split one, the two functions
    assert runs[0].stdout.split() == ["caller", "caller,marked,par"]
    assert runs[1].stdout.strip() == "", "the second process loads everything from the cache"


def test_a_small_first_fit_compiles_no_reconstruction_and_no_tiles():
    """A small problem's first fit compiles only what it runs (the issue's cold-start
    case, standardized breast cancer): a run over before its first shrinking (394
    iterations < min(n, 1000) = 569) never reconstructs a gradient, and a certificate of
    ~70 000 kernel values takes Kβ from NumPy, not the compiled tiles — together ~5 s
    of a first fit's ~22 s of compilation.  A dispatcher has overloads in a fresh
    process only where Python called it (compiled, or loaded from numba's cache)."""
    proc = run_python("""
        from sklearn.datasets import load_breast_cancer
        from sklearn.preprocessing import StandardScaler

        from margin_opt import SVC
        from margin_opt.solvers.smo import rows, shrink

        X, y = load_breast_cancer(return_X_y=True)
        model = SVC().fit(StandardScaler().fit_transform(X), y)
        assert model.certificate_.ok
        assert model.n_iter_[0] < 569, model.n_iter_
        print([f.__name__ for f in (shrink.reconstruct_gradient, shrink._activate_all,
                                    rows._gemm_range) if f.overloads])
    """)
    assert proc.stdout.strip() == "[]", proc.stdout


def test_one_specialization_whatever_the_caller_passes():
    """numba compiles a function once per combination of argument types it meets, and
    each costs seconds of a cold start: a constant passed from compiled code is a
    Literal, prange's index unsigned, a memory map or a joblib worker's data read-only,
    a slice non-contiguous.  The fits and predictions below meet each kind; no
    margin_opt function is compiled for a Literal or an unsigned index, and the
    linear epochs take their inputs read-only and contiguous,
    whatever the caller holds."""
    import numpy as np
    from numba import types
    from numba.core.dispatcher import Dispatcher
    from sklearn.datasets import load_iris

    from margin_opt import SVC, Perceptron
    from margin_opt.solvers import _pegasos_kernels, perceptron

    X, y = load_iris(return_X_y=True)
    frozen = X.copy()
    frozen.flags.writeable = False
    clf = SVC(C=10.0).fit(frozen, y)                      # one-vs-one: the compiled pairs
    np.testing.assert_array_equal(clf.decision_function(frozen), clf.decision_function(X))
    SVC(kernel="poly", degree=2).fit(X[:100], y[:100]).predict(X[::2])  # binary, a slice
    yb = np.where(y == 0, 1.0, -1.0)
    a = Perceptron(max_epochs=50).fit(frozen, yb)
    b = Perceptron(max_epochs=50).fit(np.asfortranarray(X), np.repeat(yb, 2)[::2])
    np.testing.assert_array_equal(a.coef_, b.coef_)       # the same iterates either way
    from margin_opt.datasets import make_text_like
    from margin_opt.problems.multiclass import MulticlassSVMProblem
    from margin_opt.solvers.linear.crammer_singer import CSOptions
    Xt, yt = make_text_like(n_samples=300, n_features=600, nnz_per_row=20, n_classes=5)
    cs = MulticlassSVMProblem(Xt, yt, C=1.0, fit_intercept=False).solve(   # the tail's
        "sequential-dual", tol=1e-6, options=CSOptions(polish_max=0, extrapolate=2))  # steps
    assert cs.certificate.ok

    odd = []
    for name, module in list(sys.modules.items()):
        if not name.startswith("margin_opt"):
            continue
        for attr, obj in list(vars(module).items()):
            if isinstance(obj, Dispatcher) and obj.py_func.__module__ == name:
                odd += [(name, attr, str(t)) for sig in obj.signatures for t in sig
                        if isinstance(t, types.Literal) or t == types.uint64]
    assert odd == []
    for f, arg in ((perceptron._epoch_dense, 0),
                   (_pegasos_kernels.weighted_loss_dense, 0)):
        for sig in f.signatures:
            assert not sig[arg].mutable, (f, sig[arg])
    for sig in perceptron._epoch_dense.signatures:
        assert sig[1].layout == "C"
