"""The shared pieces: the method registry, the solve path, the typed Solution, losses.

References: cvxpy optima of the same objectives, closed forms of the losses, and
the behaviour of the problems before the solve path was shared (objectives agree).
"""

import ast
import importlib.machinery
import importlib.util
import pathlib
import re

import cvxpy as cp
import numpy as np
import pytest
from sklearn.datasets import make_classification, make_regression

from margin_opt import SVC, SVR, AdaBoost, SVMProblem, SVRProblem
from margin_opt.losses import EpsilonInsensitive, Hinge, loss_derivative, loss_value
from margin_opt.methods import METHODS, get_method, method_names, stopping_options
from margin_opt.problems.boosting import certify_stagewise
from margin_opt.solution import SVCVariables, SVRVariables
from margin_opt.solvers.subgradient import pegasos, subgradient_descent
from margin_opt.standard_forms import PrimalERM


@pytest.fixture(scope="module")
def clf_data():
    X, y = make_classification(80, 4, n_informative=3, n_redundant=0, random_state=1)
    return X, y


@pytest.fixture(scope="module")
def reg_data():
    X, y = make_regression(60, 3, noise=5.0, random_state=2)
    return X, (y - y.mean()) / y.std()


# ---------------------------------------------------------------------- the registry

def test_estimator_solvers_come_from_the_registry():
    svc = SVC._parameter_constraints["solver"][0].options
    svr = SVR._parameter_constraints["solver"][0].options
    # SVC also takes the Crammer–Singer methods (multi_class="crammer_singer")
    assert svc == set(method_names("svc", estimator=True)) | \
        set(method_names("multiclass", estimator=True)) == \
        {"cvxpy-dual", "cvxpy-primal", "smo", "dcd", "subgradient", "pegasos", "sequential-dual"}
    assert svr == {"auto", "cvxpy-dual", "cvxpy-primal", "smo", "dcd", "subgradient"}
    assert "libsvm" in method_names("svc") and "libsvm" not in svc


def test_stopping_policy_is_written_once():
    assert stopping_options("smo", 1e-6, 1.0) == {"tol": 1e-6, "gap_tol": pytest.approx(9e-7)}
    assert stopping_options("smo", 1e-6, 100.0) == {"tol": 1e-6, "gap_tol": pytest.approx(9e-7)}
    assert stopping_options("smo", 1e-6, np.inf) == {"tol": 1e-6, "gap_tol": pytest.approx(9e-7)}
    assert stopping_options("subgradient", 1e-4, 10.0) == {"tol": 1e-4}
    assert stopping_options("cvxpy-dual", 1e-6, 10.0) == {}


def test_unknown_or_inapplicable_method_is_named(clf_data, reg_data):
    p = SVRProblem(*reg_data)
    with pytest.raises(ValueError, match="unknown method 'pegasos' for the svr problem"):
        p.solve("pegasos")
    with pytest.raises(ValueError, match="another library"):
        p.solve("libsvm")
    with pytest.raises(ValueError, match="apply to the cvxpy methods"):
        SVMProblem(*clf_data).solve("smo", solver="SCS")


def test_variants_run_as_their_base_method(clf_data):
    p = SVMProblem(*clf_data, C=1.0)
    hinge = p.solve("cvxpy-hinge")
    assert hinge.method == "cvxpy-hinge" and hinge.formulation == "hinge"
    dual = p.solve("cvxpy-dual")
    assert abs(hinge.primal_objective - dual.dual_objective) < 1e-6 * dual.dual_objective
    assert get_method("cvxpy-hinge").accuracy_for("svc") == 1e-5
    assert METHODS["libsvm"].accuracy_for("svr") == 1e-4


# ---------------------------------------------------------------------- the solve path

def test_backend_timings_are_the_backends_own(clf_data):
    sol = SVMProblem(*clf_data, kernel="rbf").solve("smo", tol=1e-6)
    t = sol.timings
    assert {"build", "setup", "solve", "backend_total", "recover", "total"} <= set(t)
    assert t["setup"] + t["solve"] <= t["backend_total"] + 1e-9
    assert t["total"] >= t["build"] + t["backend_total"]
    assert sol.backend == "smo" and sol.raw.nit == sol.n_iter and sol.formulation == "DualQP"


def test_primal_backend_history_in_the_C_scale(clf_data):
    p = SVMProblem(*clf_data, C=0.5)
    sol = p.solve("pegasos", max_iter=5, random_state=0)
    J = sol.raw.history["J"]
    np.testing.assert_allclose(sol.history["objective"], p.erm_scale * J)
    np.testing.assert_array_equal(sol.history["step"], sol.raw.history["step"])
    assert sol.history["step"][-1] == sol.raw.n_steps


# ---------------------------------------------------------------------- typed Solution

def test_solution_variables_are_typed(clf_data, reg_data):
    svc = SVMProblem(*clf_data).solve()
    svr = SVRProblem(*reg_data).solve()
    assert isinstance(svc.variables, SVCVariables) and isinstance(svr.variables, SVRVariables)
    assert svc.dual_coef.shape == (1, 80) and svc.intercept.shape == (1,)
    np.testing.assert_allclose(svc.dual_coef[0], SVMProblem(*clf_data).y * svc.alpha)
    np.testing.assert_allclose(svr.dual_coef[0], svr.alpha - svr.alpha_star)
    with pytest.raises(AttributeError, match="SVCVariables solution has no 'alpha_star'"):
        _ = svc.alpha_star
    assert svr.variables.standard_alpha.shape == (120,)


def test_certify_rejects_a_solution_of_another_problem(clf_data, reg_data):
    svc_p, svr_p = SVMProblem(*clf_data), SVRProblem(*reg_data)
    with pytest.raises(ValueError, match="is SVRProblem"):
        svr_p.certify(svc_p.solve())
    other = SVMProblem(clf_data[0][:50], clf_data[1][:50]).solve()
    with pytest.raises(ValueError, match="belongs to another problem"):
        svc_p.certify(other)
    with pytest.raises(ValueError, match="alpha, alpha_star"):
        svr_p.certify(alpha=np.zeros(60))


def test_svr_loss_form_dual_is_a_true_lower_bound(reg_data):
    """The multipliers recovered from a primal point keep Σ(a − â) = 0 exactly, so the
    dual objective at them cannot exceed the optimum (weak duality)."""
    p = SVRProblem(*reg_data, C=1.0, epsilon=0.1)
    opt = p.solve("cvxpy-dual").dual_objective
    loss = p.solve("cvxpy-primal", formulation="loss")
    assert abs(np.sum(loss.alpha - loss.alpha_star)) < 1e-12
    assert loss.dual_objective <= opt + 1e-9
    assert p.certify(loss, tol=1e-4).ok


# ---------------------------------------------------------------------- losses

def test_losses_match_their_coded_functions():
    rng = np.random.default_rng(0)
    y, f = np.sign(rng.normal(size=50)), rng.normal(scale=2, size=50)
    for loss in (Hinge(1.0), Hinge(0.0), EpsilonInsensitive(0.3)):
        yy = y if isinstance(loss, Hinge) else rng.normal(size=50)
        np.testing.assert_array_equal(loss.value(yy, f), [
            loss_value(loss.code, loss.param, a, b) for a, b in zip(yy, f, strict=True)])
        np.testing.assert_array_equal(
            loss.derivative(yy, f),
            [loss_derivative(loss.code, loss.param, a, b) for a, b in zip(yy, f, strict=True)])
    assert Hinge(0.0).value(np.array([1.0, -1.0]), np.array([-2.0, -2.0])).tolist() == [2.0, 0.0]
    with pytest.raises(ValueError, match="threshold"):
        Hinge(-1.0)
    with pytest.raises(TypeError, match="Loss"):
        PrimalERM(np.eye(2), np.ones(2), 1.0, np.ones(2), loss="hinge")


def test_lambda_zero_is_allowed_where_it_makes_sense(clf_data):
    """λ = 0 with the perceptron criterion max(0, −y f): its minimum is 0 on separable
    data; the subgradient method reaches it with a constant step; Pegasos (1/(λt))
    refuses it."""
    X = np.array([[2.0, 1.0], [1.0, 2.0], [-1.0, -2.0], [-2.0, -1.0]])
    y = np.array([1.0, 1.0, -1.0, -1.0])
    erm = PrimalERM(X, y, 0.0, np.ones(4), loss=Hinge(0.0))
    assert erm.objective(np.zeros(2)) == 0.0   # w = 0 is a (trivial) minimizer
    r = subgradient_descent(erm, schedule="constant", step_size=1.0, w0=[-1.0, 0.0],
                            max_iter=50, tol=0.0)
    assert r.fun == 0.0 and np.all(y * (X @ r.w + r.b) >= 0)
    with pytest.raises(ValueError, match="λ > 0"):
        pegasos(erm)
    with pytest.raises(ValueError, match="λ > 0"):
        subgradient_descent(erm)              # 1/t needs λ
    with pytest.raises(ValueError, match="≥ 0"):
        PrimalERM(X, y, -1.0, np.ones(4))


def test_hinge_radius_holds_the_optimum(clf_data):
    X, y01 = clf_data
    y = np.where(y01 > 0, 1.0, -1.0)
    for theta in (1.0, 0.5):
        erm = PrimalERM(X, y, 0.05, np.ones(80), loss=Hinge(theta))
        w, b = cp.Variable(4), cp.Variable()
        cp.Problem(cp.Minimize(0.025 * cp.sum_squares(w)
                               + cp.sum(cp.pos(theta - cp.multiply(y, X @ w + b))) / 80)).solve()
        assert np.linalg.norm(w.value) <= erm.loss.optimum_radius(y, np.ones(80), 0.05) + 1e-6


# ---------------------------------------------------------------------- AdaBoost

def test_adaboost_certificate_is_built_by_its_problem(clf_data):
    X, y = clf_data
    model = AdaBoost(n_estimators=15).fit(X, y)
    cert = model.certificate_
    assert cert.ok and cert.stage_stationarity < 1e-12
    # a wrong stage weight: the line search is no longer solved
    bad = model.stage_weights_.copy()
    bad[3] *= 1.01
    eps = model.estimator_errors_
    grad = ((1 - eps) * np.exp(-bad) - eps * np.exp(bad)) / \
        ((1 - eps) * np.exp(-bad) + eps * np.exp(bad))
    wrong = certify_stagewise(eps, bad, model.normalizers_, model.train_errors_,
                              model.error_bounds_, model.exp_bounds_, stage_gradients=-grad)
    assert not wrong.ok and set(wrong.failed()) == {"stage_stationarity", "alpha_closed_form"}


# ---------------------------------------------------------------------- the import graph

_ROOT = pathlib.Path(__file__).resolve().parent.parent / "margin_opt"


def _module_names():
    """{dotted name: path} of every module of margin_opt (a package by its __init__)."""
    out = {}
    for path in _ROOT.rglob("*.py"):
        parts = list(path.relative_to(_ROOT.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def _is_extension(name) -> bool:
    """Whether ``name`` is a compiled extension module (``from margin_opt import _core``
    imports that module, not the package's names)."""
    try:
        spec = importlib.util.find_spec(name)
    except (ModuleNotFoundError, ValueError):     # a name inside a module
        return False
    return spec is not None and spec.origin is not None and \
        spec.origin.endswith(tuple(importlib.machinery.EXTENSION_SUFFIXES))


def _imports(name, path, modules):
    """The margin_opt modules that module ``name`` imports, at module level or inside a
    function: ``import a.b``, ``from a import b`` (b a module: that module; else a),
    relative or absolute.  The packages above an imported module are not counted (Python
    initializes them first, whoever imports what)."""
    is_pkg = path.name == "__init__.py"
    here = name if is_pkg else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name in modules)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = here.split(".")
                base = base[:len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if not (target == "margin_opt" or target.startswith("margin_opt.")):
                continue
            for alias in node.names:
                sub = f"{target}.{alias.name}"
                found.add(sub if sub in modules or _is_extension(sub) else target)
    found.discard(name)
    return {m for m in found if m in modules}


def _cycles(graph):
    """The strongly connected components of more than one module (Tarjan), each as one
    cycle through it (a list of modules, the first repeated at its end)."""
    index, low, on, stack, comps = {}, {}, set(), [], []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                comps.append(set(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    cycles = []
    for comp in comps:                  # a path from the first module back to it
        start = min(comp)
        prev, todo = {start: None}, [start]
        end = None
        while todo and end is None:
            v = todo.pop(0)
            for w in sorted(graph[v] & comp):
                if w == start:
                    end = v
                    break
                if w not in prev:
                    prev[w] = v
                    todo.append(w)
        path = []
        while end is not None:           # back from the last module to the first
            path.append(end)
            end = prev[end]
        cycles.append(path[::-1] + [start])
    return cycles


def test_no_import_cycles_among_margin_opt_modules():
    modules = _module_names()
    graph = {name: _imports(name, path, modules) for name, path in modules.items()}
    # relative imports, function-level ones and names from packages are read
    assert "margin_opt.solvers.smo.polish" in graph["margin_opt.solvers.smo.driver"]
    assert "margin_opt.methods" in graph["margin_opt.estimators.ovo"]
    assert "margin_opt" not in graph["margin_opt.solvers.smo.driver"]    # its _core only
    cycles = _cycles(graph)
    assert not cycles, "import cycles:\n" + "\n".join(" -> ".join(c) for c in cycles)


def test_estimators_import_nothing_from_the_solvers():
    """Estimators reach a backend through the method registry (DESIGN.md's layers), so
    that the solvers can change beneath them."""
    modules = _module_names()
    for name, path in modules.items():
        if name.startswith("margin_opt.estimators"):
            bad = sorted(m for m in _imports(name, path, modules)
                         if m.startswith("margin_opt.solvers"))
            assert not bad, f"{name} imports {bad}"


def test_the_cycle_finder_finds_a_cycle():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _cycles(graph) == [["a", "b", "c", "a"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_smo_is_one_package_of_concepts():
    solvers = _ROOT / "solvers"
    assert not sorted(p.name for p in solvers.glob("_smo_*.py"))
    gone = {"smo.py", "smo_gram.py", "kernel_blocks.py", "row_memory.py", "_kernel_rows.py",
            "_packed_rows.py", "_held_rows.py", "_early_factor.py"}
    assert not gone & {p.name for p in solvers.glob("*.py")}
    assert (solvers / "smo" / "__init__.py").is_file()


def test_smo_modules_assign_no_attributes_of_the_run():
    """The polish, the blocks and the early factor get what they need as arguments and
    return what the driver applies: outside the driver no SMO module assigns an
    attribute of a ``run`` (``run.x = ...``, ``run.x += ...``)."""
    for path in sorted((_ROOT / "solvers" / "smo").glob("*.py")):
        if path.name == "driver.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets = node.targets if isinstance(node, ast.Assign) else \
                [node.target] if isinstance(node, (ast.AugAssign, ast.AnnAssign)) else []
            for t in targets:
                where = f"{path.name}:{node.lineno}"
                assert not (isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name)
                            and t.value.id == "run"), f"{where} assigns an attribute of run"


# ---------------------------------------------------------------------- tuning knobs

_TESTS = pathlib.Path(__file__).resolve().parent
_SWITCH = re.compile(r"_*[A-Z][A-Z0-9_]*")


def _switch_patches(source, filename="<test>"):
    """``file:line name`` of every monkeypatch of an UPPER_CASE module attribute in
    ``source``: ``<mp>.setattr(obj, "NAME", ...)`` / ``<mp>.delattr(obj, "NAME")`` and
    the dotted forms ``<mp>.setattr("module.NAME", ...)`` / ``<mp>.delattr("module.NAME")``
    (any receiver: ``monkeypatch``, a ``MonkeyPatch.context()``)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr in ("setattr", "delattr")
                and isinstance(node.func.value, ast.Name)):
            continue
        strings = [a.value if isinstance(a, ast.Constant) and isinstance(a.value, str)
                   else None for a in node.args[:2]]
        name = None
        if len(strings) > 1 and strings[1] is not None and not isinstance(
                node.args[0], ast.Constant):
            name = strings[1]                                 # (obj, "NAME", value)
        elif strings and strings[0] is not None and "." in strings[0]:
            name = strings[0].rpartition(".")[2]              # ("module.NAME", value)
        if name is not None and _SWITCH.fullmatch(name):
            found.append(f"{filename}:{node.lineno} {name}")
    return found


def test_no_test_monkeypatches_a_module_switch():
    """Tuning lives in typed options that a caller passes (DESIGN.md): no test changes
    an UPPER_CASE module attribute to steer the code (a function patched to inject a
    fault or to spy on a call is fine)."""
    offenders = [hit for path in sorted(_TESTS.glob("*.py"))
                 for hit in _switch_patches(path.read_text(encoding="utf-8"), path.name)]
    assert not offenders, "tests monkeypatch module switches:\n" + "\n".join(offenders)


def test_the_switch_finder_finds_switches():
    source = '''
def test_a(monkeypatch):
    monkeypatch.setattr(kkt, "EXACT_BAND", 0)
    monkeypatch.setattr("margin_opt.problems.solve_path.FALLBACK_MAX_N", 10)
    monkeypatch.delattr(mod, "_PRIVATE_MAX")
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(kernel_data, "PSD_SAMPLE", 20)
    monkeypatch.setattr(ovo, "_finish_pair", spy)
    monkeypatch.setattr("margin_opt.estimators.ovo.certify_result", broken)
    monkeypatch.setattr(sys, "stderr", stream)
    monkeypatch.setenv("NUMBA_NUM_THREADS", "1")
    setattr(obj, "NAME", 1)
'''
    assert _switch_patches(source, "t.py") == [
        "t.py:3 EXACT_BAND", "t.py:4 FALLBACK_MAX_N", "t.py:5 _PRIVATE_MAX",
        "t.py:7 PSD_SAMPLE"]
