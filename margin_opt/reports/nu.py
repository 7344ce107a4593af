"""``margin-opt verify --model nusvc`` and ``--model nusvr``: the ν-SVC and the ν-SVR by
every method, certified, with the ν-property of each answer and the equivalent C-SVC
(C = 1/r) or ε-SVR (ε = −r) its certificate checks."""

from __future__ import annotations

from ..methods import get_method
from ..problems.nu import NuSVCProblem, NuSVRProblem
from .methods import (
    TablePrinter,
    default_methods,
    finish,
    nu_property_lines,
    run_methods,
    run_ok,
    sklearn_solution,
)

__all__ = ["verify"]

#: the certificate quantities each row keeps (the ν-property's numbers, the equivalent
#: problem's parameter)
NU_QUANTITIES = ("error_fraction", "support_fraction", "n_errors", "n_support", "r",
                 "C_equivalent", "epsilon")

#: per --model: the problem, the registry's model, scikit-learn's class, the title
MODELS = {"nusvc": (NuSVCProblem, "nu-svc", "NuSVC", "ν-SVC"),
          "nusvr": (NuSVRProblem, "nu-svr", "NuSVR", "ν-SVR")}


def _libsvm(problem):
    """LIBSVM's answer through scikit-learn's ``NuSVC`` / ``NuSVR`` (tol 1e-6), as a
    Solution in LIBSVM's ν scale (``problem.solution_from_sklearn``)."""
    import sklearn.svm

    k = problem.kernel
    regression = isinstance(problem, NuSVRProblem)
    cls = getattr(sklearn.svm, "NuSVR" if regression else "NuSVC")
    extra = {"C": problem.C} if regression else {}
    sk = cls(nu=problem.nu, kernel=k.name, gamma=k.gamma or "scale", degree=k.degree,
             coef0=k.coef0, tol=1e-6, cache_size=500, **extra)
    return sklearn_solution(problem, sk, problem.y, sample_weight=problem.sample_weight)


def _equivalent(r) -> str:
    """A row's equivalent problem: C = 1/r (ν-SVC) or ε = −r (ν-SVR)."""
    if "C_equivalent" in r:
        return f"equivalent C-SVC: C = 1/r = {r['C_equivalent']:.6g}"
    return f"equivalent ε-SVR: ε = −r = {r['epsilon']:.6g}" if "epsilon" in r else ""


def verify(dataset, *, model="nusvc", nu=0.5, C=1.0, kernel="rbf", gamma="scale",
           methods=None, stream=None):
    """Solve one ν-SVC or ν-SVR with several methods, certify each, and tabulate.

    Every answer is in LIBSVM's ν scale (:mod:`margin_opt.problems.nu`), so that
    LIBSVM's row (scikit-learn's ``NuSVC`` / ``NuSVR``, read back by
    ``solution_from_sklearn``) is certified like ours.

    Parameters
    ----------
    dataset : margin_opt.datasets.Dataset
        Binary labels for ``"nusvc"``, a continuous target for ``"nusvr"``.
    model : {"nusvc", "nusvr"}, default="nusvc"
    nu : float, default=0.5
        ν ∈ (0, 1] (scikit-learn's default); outside it (or, for the ν-SVC, above
        2 min(n₊, n₋)/n) the problem's ValueError is raised before any work.
    C : float, default=1.0
        The ν-SVR's C (LIBSVM's scale); the ν-SVC has none.
    kernel : str, default="rbf"
    gamma : {"scale", "auto"} or float, default="scale"
    methods : list of str, optional
        Registry names (:mod:`margin_opt.methods`; default: the exact ones available
        for ``"nu-svc"`` / ``"nu-svr"``: cvxpy-dual, cvxpy-primal, smo, libsvm).
    stream : file-like, optional
        Print the table there as the methods finish, then the ν-property of each
        answer with its equivalent C (or ε), and the reference's certificate.

    Returns
    -------
    report : dict
        JSON-ready: the data, the problem, one row per method (with its ν-property
        numbers and r), the reference's support table.
    text : str
    ok : bool
        True when every certificate passed (the ν-property and the equivalent
        problem's certificate included).
    """
    cls, registry, _, name = MODELS[model]
    regression = cls is NuSVRProblem
    extra = {"C": C} if regression else {}
    problem = cls(dataset.X, dataset.y, nu=nu, kernel=kernel, gamma=gamma, **extra)
    methods = list(methods or default_methods(registry, kernel, problem.n_samples))
    n, d = problem.n_samples, problem.X.shape[1]
    scale = f"C={problem.C:g}, Σ(a + a*) = νCn = {problem.delta2:g}" if regression else \
        f"Σα = νn = {problem.delta2:g}"
    title = (f"margin-opt verify: {dataset.name} (n={n}, d={d}), {name} ν={problem.nu:g} "
             f"(LIBSVM's scale: {scale}), kernel {problem.kernel.describe()}")
    printer = TablePrinter(title, stream) if stream is not None else None
    rows, solutions, ref = run_methods(problem, methods, external=_libsvm,
                                       on_row=printer and printer.row,
                                       quantities=NU_QUANTITIES)
    report = {"data": {"name": dataset.name, "n_samples": n, "n_features": d},
              "problem": {"model": model, "nu": problem.nu, **extra,
                          "kernel": problem.kernel.describe()},
              "reference": ref, "rows": rows, "ok": run_ok(rows)}
    said = ["", *nu_property_lines(
        rows, problem.nu, n, below=("margin errors", "error_fraction", "n_errors"),
        heading="ν-property (Schölkopf et al. 2000): margin errors/n ≤ ν ≤ support vectors/n",
        extra=_equivalent)]
    if ref is not None:
        cert = problem.certify(solutions[ref], tol=get_method(ref).accuracy_for(registry))
        report["support_table"] = cert.to_dict()["table"]
        said += ["", str(cert)]
    return finish(report, title, rows, ref, said, printer)
