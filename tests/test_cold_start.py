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

#: a numba function of a margin_opt module (as margin_opt.jit tells its own), cached in a
#: file of the test's folder: the probe needs no margin_opt solver to be compiled
PROBE_MODULE = """
from numba import njit


@njit(cache=True)
def ours(x):
    return x + 2.0
"""

PROBE = """
    import sys
    from numba import njit
    import margin_opt
    from margin_opt.jit import announce_compiles

    margin_opt.__path__.append({folder!r})       # margin_opt._cold_start_probe
    from margin_opt import _cold_start_probe

    announce_compiles()

    @njit
    def not_ours(x):
        return x + 1.0

    not_ours(1.0)
    print("-- after a function of another package", file=sys.stderr, flush=True)
    _cold_start_probe.ours(1.0)
    _cold_start_probe.ours(1)
"""


def test_the_first_compilation_is_announced_once(tmp_path):
    cache = str(tmp_path / "numba_cache")
    (tmp_path / "_cold_start_probe.py").write_text(PROBE_MODULE, encoding="utf-8")
    probe = PROBE.format(folder=str(tmp_path))
    cold = run_python(probe, NUMBA_CACHE_DIR=cache, **{QUIET_ENV: None}).stderr
    assert cold.count(MESSAGE) == 1, cold
    assert cold.index("-- after") < cold.index(MESSAGE)   # silent for others' functions
    assert len(MESSAGE.splitlines()) == 1
    warm = run_python(probe, NUMBA_CACHE_DIR=cache, **{QUIET_ENV: None}).stderr
    assert MESSAGE not in warm, "a load from numba's cache is not a compilation"
    quiet = run_python(probe, NUMBA_CACHE_DIR=str(tmp_path / "other"), **{QUIET_ENV: "1"})
    assert MESSAGE not in quiet.stderr


def test_one_specialization_whatever_the_caller_passes():
    """numba compiles a function once per combination of argument types it meets, and
    each costs seconds of a cold start: a constant passed from compiled code is a
    Literal, prange's index unsigned, a memory map or a joblib worker's data read-only,
    a slice non-contiguous.  The fits and predictions below meet each kind; no
    margin_opt function is compiled for a Literal or an unsigned index, whatever the
    caller holds (the perceptron, plain NumPy, gives the same iterates on read-only
    and Fortran-ordered data)."""
    import numpy as np
    from numba import types
    from numba.core.dispatcher import Dispatcher
    from sklearn.datasets import load_iris

    from margin_opt import SVC, Perceptron

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


def test_kernel_svms_fit_and_predict_without_numba():
    """SVC and SVR (SMO in the compiled core, built by the install) fit, certify, predict
    and unpickle in a fresh process without importing numba: nothing is compiled at run
    time for them (issue 44; the linear solvers are still numba)."""
    proc = run_python("""
        import pickle, sys
        import numpy as np
        import scipy.sparse as sp
        from sklearn.datasets import load_iris, load_diabetes

        from margin_opt import SVC, SVR

        X, y = load_iris(return_X_y=True)
        models = [SVC().fit(X, y), SVC().fit(X[:100], y[:100]),
                  SVC(probability=True, random_state=0).fit(X, y),
                  SVC(kernel="poly", degree=2).fit(sp.csr_matrix(X), y),
                  SVC(kernel="precomputed").fit(X @ X.T, y)]
        Xd, t = load_diabetes(return_X_y=True)
        models.append(SVR(C=10.0).fit(Xd, t))
        assert all(m.certificate_.ok for m in models)
        again = pickle.loads(pickle.dumps(models[0]))
        assert (again.predict(X) == models[0].predict(X)).all()
        models[2].predict_proba(X)
        print("numba" in sys.modules)
    """)
    assert proc.stdout.strip() == "False", proc.stdout
