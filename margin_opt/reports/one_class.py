"""``margin-opt verify --model oneclass``: the one-class SVM by every method, certified,
with the ν-property of each answer."""

from __future__ import annotations

from ..methods import get_method
from ..problems.one_class import OneClassProblem
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

#: the certificate quantities each row keeps (the ν-property's numbers)
NU_QUANTITIES = ("outlier_fraction", "support_fraction", "n_outliers", "n_support")


def _libsvm(problem: OneClassProblem):
    """LIBSVM's answer through scikit-learn's ``OneClassSVM`` (tol 1e-6), as a Solution."""
    from sklearn.svm import OneClassSVM as SkOneClassSVM

    k = problem.kernel
    sk = SkOneClassSVM(nu=problem.nu, kernel=k.name, gamma=k.gamma or "scale",
                       degree=k.degree, coef0=k.coef0, tol=1e-6, cache_size=500)
    return sklearn_solution(problem, sk)


def verify(dataset, *, nu=0.5, kernel="rbf", gamma="scale", methods=None, plot=None,
           stream=None):
    """Solve one one-class SVM with several methods, certify each, and tabulate.

    The labels of ``dataset`` are not used: the one-class SVM estimates the support of
    the data X.  Every answer is in LIBSVM's scale (Σα = νn, 0 ≤ α ≤ 1, f = Kα − ρ;
    :class:`~margin_opt.problems.one_class.OneClassProblem`), so that LIBSVM's row
    (scikit-learn's ``OneClassSVM``) is certified like ours.

    Parameters
    ----------
    dataset : margin_opt.datasets.Dataset
    nu : float, default=0.5
        ν ∈ (0, 1] (scikit-learn's default); outside it the problem's
        ``InvalidParameterError`` (a ValueError) is raised before any work.
    kernel : str, default="rbf"
    gamma : {"scale", "auto"} or float, default="scale"
    methods : list of str, optional
        Registry names (:mod:`margin_opt.methods`; default: the exact ones available
        for ``"one-class"``: cvxpy-dual, cvxpy-primal, smo, libsvm).
    plot : str, optional
        PNG file: the reference answer's f(xᵢ) against αᵢ/sᵢ by support-vector
        category (:func:`margin_opt.plots.svc.plot_margins_vs_alpha`).
    stream : file-like, optional
        Print the table there as the methods finish (see
        :func:`margin_opt.reports.svm.verify`), then the ν-property of each answer and
        the reference's certificate.

    Returns
    -------
    report : dict
        JSON-ready: the data, the problem, one row per method (with its ν-property
        numbers), the reference's support table.
    text : str
    ok : bool
        True when every certificate passed (the ν-property included).

    Raises
    ------
    InvalidParameterError
        ν outside (0, 1].
    """
    problem = OneClassProblem(dataset.X, nu=nu, kernel=kernel, gamma=gamma)
    methods = list(methods or default_methods("one-class", kernel, problem.n_samples))
    n, d = problem.n_samples, problem.X.shape[1]
    title = (f"margin-opt verify: {dataset.name} (n={n}, d={d}), one-class SVM "
             f"ν={problem.nu:g} (LIBSVM's scale: Σα = νn = {problem.scale:g}), kernel "
             f"{problem.kernel.describe()}")
    printer = TablePrinter(title, stream) if stream is not None else None
    rows, solutions, ref = run_methods(problem, methods, external=_libsvm,
                                       on_row=printer and printer.row,
                                       quantities=NU_QUANTITIES)
    report = {"data": {"name": dataset.name, "n_samples": n, "n_features": d},
              "problem": {"model": "oneclass", "nu": problem.nu,
                          "kernel": problem.kernel.describe()},
              "reference": ref, "rows": rows, "ok": run_ok(rows)}
    said = ["", *nu_property_lines(
        rows, problem.nu, n, below=("outliers", "outlier_fraction", "n_outliers"),
        heading="ν-property (Schölkopf et al. 2001, Prop. 4): outliers/n ≤ ν ≤ support "
                "vectors/n")]
    if ref is not None:
        tol = get_method(ref).accuracy_for("one-class")
        cert = problem.certify(solutions[ref], tol=tol)
        report["support_table"] = cert.to_dict()["table"]
        said += ["", str(cert)]
    if plot and ref is not None:
        from ..plots.svc import plot_margins_vs_alpha

        r = next(r for r in rows if r["method"] == ref)
        plot_margins_vs_alpha(problem, solutions[ref], tol=tol, file=plot,
                              title=f"{ref}: one-class SVM, ν-property: outliers "
                                    f"{r['n_outliers']} ≤ νn = {problem.scale:g} ≤ support "
                                    f"vectors {r['n_support']} (n = {n})")
        report["plots"] = [plot]
    return finish(report, title, rows, ref, said, printer, plot)
