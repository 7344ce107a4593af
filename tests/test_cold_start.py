"""A short cold start: ``import margin_opt`` loads no heavy dependency; a fit loads
what it uses, and nothing is compiled at run time (the compiled core is built by the
install).

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

REPO = Path(__file__).resolve().parent.parent

#: what ``import margin_opt`` must not load (each is loaded on first use)
HEAVY = ("cvxpy", "matplotlib", "scipy.optimize", "scipy.sparse.linalg")


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
    """The default SVC certifies its SMO answer with its own KKT checks: no cvxpy; nor
    do the ν-SVC, the one-class SVM and the L1 LinearSVC (their problems import cvxpy
    for their printed forms only)."""
    proc = run_python("""
        import sys
        import numpy as np
        from margin_opt import SVC, LinearSVC, NuSVC, OneClassSVM
        rng = np.random.default_rng(0)
        X = np.vstack([rng.normal(-2, 1, (30, 2)), rng.normal(2, 1, (30, 2))])
        y = np.r_[np.zeros(30), np.ones(30)]
        models = [SVC().fit(X, y), NuSVC().fit(X, y), OneClassSVM().fit(X),
                  LinearSVC(penalty="l1", dual=False).fit(X, y)]
        print(all(m.certificate_.ok for m in models), "cvxpy" in sys.modules,
              "matplotlib" in sys.modules)
    """)
    assert proc.stdout.split() == ["True", "False", "False"]


def test_read_only_and_strided_inputs_give_the_same_answers():
    """A read-only array (a memory map, a joblib worker's data), a Fortran-ordered one
    and a slice give the answers of a plain array."""
    import numpy as np
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


def test_kernel_svms_fit_and_predict_without_a_run_time_compiler():
    """SVC and SVR (SMO in the compiled core, built by the install) fit, certify, predict
    and unpickle in a fresh process without importing a run-time compiler (issue 44)."""
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


#: every estimator exported by margin_opt fitted and used on tiny data, and every
#: registry method an SVC, SVR or OneClassSVM takes as its ``solver`` (a few iterations for the
#: first-order ones); prints whether a run-time compiler was imported
EVERY_FIT = """
    import inspect, sys, warnings
    import numpy as np
    import scipy.sparse as sp
    from sklearn.base import is_classifier, is_outlier_detector, is_regressor
    from sklearn.datasets import load_iris, make_regression

    import margin_opt
    from margin_opt.methods import METHODS, method_names

    warnings.simplefilter("ignore")                  # few iterations: not converged
    X, y = load_iris(return_X_y=True)
    rows = np.r_[0:15, 50:65, 100:115]               # 45 rows, three classes
    X, y = X[rows], y[rows]
    yb = (y > 0).astype(int)
    Xr, t = make_regression(40, 4, noise=0.5, random_state=0)
    small = {"n_estimators": 3, "max_epochs": 20}    # where the constructor takes them
    used = []
    for name in margin_opt.__all__:
        cls = getattr(margin_opt, name)
        if not (inspect.isclass(cls) and hasattr(cls, "fit") and hasattr(cls, "predict")):
            continue
        params = inspect.signature(cls).parameters
        est = cls(**{k: v for k, v in small.items() if k in params})
        if is_classifier(est):
            est.fit(X, yb).predict(X)
            for data in ((X, y), (sp.csr_matrix(X), yb)):   # where the estimator takes them
                try:
                    est.fit(*data).predict(data[0])
                except (TypeError, ValueError):
                    pass
        elif is_regressor(est):
            est.fit(Xr, t).predict(Xr)
        elif is_outlier_detector(est):
            est.fit(X).predict(X)
        else:
            continue
        used.append(name)
    for model, cls, data in (("svc", margin_opt.SVC, (X, y)), ("svc", margin_opt.SVC, (X, yb)),
                             ("svr", margin_opt.SVR, (Xr, t)),
                             ("one-class", margin_opt.OneClassSVM, (X,)),
                             ("nu-svc", margin_opt.NuSVC, (X, y)),
                             ("nu-svr", margin_opt.NuSVR, (Xr, t))):
        for m in method_names(model, estimator=True):
            first_order = METHODS[m].iterative
            est = cls(kernel="linear", solver=m, certify=not first_order,
                      solver_options={"max_iter": 50} if first_order else None)
            est.fit(*data).predict(data[0])
            used.append(cls.__name__ + "/" + m)
    for multi in ("ovr", "crammer_singer"):
        margin_opt.LinearSVC(multi_class=multi).fit(X, y).predict(X)
    margin_opt.LinearSVC(dual=False).fit(X, yb).predict(X)
    margin_opt.LinearSVR(loss="squared_epsilon_insensitive").fit(Xr, t).predict(Xr)
    margin_opt.show_config(file=False)
    print(" ".join(used))
    print("numba" in sys.modules)
"""


def test_no_estimator_nor_method_imports_a_run_time_compiler():
    """Fitting and predicting with every exported estimator, and with every method an
    SVC or SVR takes as its solver, imports no run-time compiler in a fresh process:
    every compiled loop is the core's, built by the install."""
    proc = run_python(EVERY_FIT)
    used, loaded = proc.stdout.strip().splitlines()[-2:]
    estimators = {n for n in margin_opt.__all__ if hasattr(getattr(margin_opt, n), "fit")
                  and hasattr(getattr(margin_opt, n), "predict")}
    assert estimators <= set(used.split()), used
    assert {"SVC/smo", "SVC/dcd", "SVR/smo", "SVR/dcd"} <= set(used.split()), used
    assert loaded == "False", "a fit imported a run-time compiler"
