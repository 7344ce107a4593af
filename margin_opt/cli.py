"""The ``margin-opt`` command line.

- ``margin-opt verify [DATA]``: one model solved by every method, each certified.
- ``margin-opt fit [DATA]``: one estimator fitted, its summary and certificate.
- ``margin-opt bench [SUITE ...]``: benchmarks side by side with the peer libraries.
- ``margin-opt study bias-variance [DATA]``: the lecture's bias–variance table on real data.
- ``margin-opt conformance MODULE:FUNCTION``: grade your own solver (:mod:`margin_opt.testing`).
"""

from __future__ import annotations

import argparse
import json
import sys
from importlib import import_module

from .bench import SUITES
from .methods import get_method, method_names

__all__ = ["main"]

DEFAULT_DATA = {"svc": "breast_cancer", "svr": "diabetes", "adaboost": "breast_cancer"}
REPORTS = {"svc": "margin_opt.reports.svm", "svr": "margin_opt.reports.svr",
           "adaboost": "margin_opt.reports.adaboost"}


def _gamma(value):
    if value in ("scale", "auto"):
        return value
    try:
        return float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"gamma must be 'scale', 'auto' or a number, "
                                         f"got {value!r}") from None


def _parser():
    p = argparse.ArgumentParser(
        prog="margin-opt", formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Margin classifiers and boosting as explicit convex optimization problems:\n"
                    "solved in cvxpy and by fast backends (SMO, subgradient / Pegasos), every\n"
                    "answer certified (KKT residuals, duality gap, support-vector table).",
        epilog="examples:\n"
               "  margin-opt verify                       C-SVC on breast_cancer, every method\n"
               "  margin-opt verify heart_scale --C 1 --gamma 0.0769\n"
               "  margin-opt verify --model svr           ε-SVR on diabetes\n"
               "  margin-opt fit --model adaboost         one estimator and its certificate\n"
               "  margin-opt bench smo --quick            SMO against LIBSVM, small sizes\n\n"
               "'margin-opt COMMAND --help' lists the options of a command.")
    sub = p.add_subparsers(dest="command", required=True)

    v = sub.add_parser("verify", help="solve a model with every method and certify each")
    v.add_argument("data", nargs="?", help="built-in name (breast_cancer, iris-binary, "
                   "diabetes, heart_scale), a file of the shared data folder (a9a.t) or a path "
                   "(svmlight/CSV)")
    v.add_argument("--model", choices=sorted(REPORTS), default="svc")
    v.add_argument("--C", type=float, default=1.0, help="penalty C (inf: hard margin)")
    v.add_argument("--kernel", default=None, help="linear, poly, rbf, sigmoid "
                   "(default rbf; linear when only linear methods are asked for)")
    v.add_argument("--gamma", type=_gamma, default="scale")
    v.add_argument("--epsilon", type=float, default=0.1, help="SVR tube half-width")
    v.add_argument("--n-estimators", type=int, default=50, help="AdaBoost rounds")
    v.add_argument("--methods", default=None,
                   help="comma-separated registry names; svc: " + ",".join(method_names("svc"))
                   + "; svr: " + ",".join(method_names("svr")))
    v.add_argument("--plot", default=None, help="write a plot to this PNG file")
    v.add_argument("--json", action="store_true", help="print the report as JSON")

    f = sub.add_parser("fit", help="fit one estimator and print its summary and certificate")
    f.add_argument("data", nargs="?", help="as for verify")
    f.add_argument("--model", choices=sorted(REPORTS), default="svc")
    f.add_argument("--solver", default=None,
                   help="svc: " + ", ".join(method_names("svc", estimator=True)) + "; svr: "
                   + ", ".join(method_names("svr", estimator=True)) + " (default smo)")
    f.add_argument("--C", type=float, default=1.0)
    f.add_argument("--kernel", default="rbf")
    f.add_argument("--gamma", type=_gamma, default="scale")
    f.add_argument("--epsilon", type=float, default=0.1)
    f.add_argument("--n-estimators", type=int, default=50)
    f.add_argument("--json", action="store_true")

    b = sub.add_parser("bench", help="benchmarks side by side with the peer libraries")
    b.add_argument("suites", nargs="*", help=", ".join(SUITES) + " (default: all available)")
    b.add_argument("--quick", action="store_true", help="small sizes (a smoke test)")
    b.add_argument("--json", action="store_true")

    s = sub.add_parser("study", help="experiments over estimators (bias-variance by bootstrap)")
    s.add_argument("study", choices=["bias-variance"])
    s.add_argument("data", nargs="?", help="as for verify: two classes or continuous targets "
                   "(default breast_cancer, or diabetes with --task regression)")
    s.add_argument("--task", choices=["classification", "regression"], default=None,
                   help="picks the default data when DATA is not given")
    s.add_argument("--method", choices=["oob", "holdout"], default="oob")
    s.add_argument("--n-bootstrap", type=int, default=200, help="bootstrap replicates B")
    s.add_argument("--n-jobs", type=int, default=None, help="replicates in parallel (joblib)")
    s.add_argument("--plot", default=None, help="write the study's figure to this PNG file")
    s.add_argument("--json", action="store_true")

    c = sub.add_parser("conformance", help="grade your own solver on the conformance suites "
                       "(margin_opt.testing)")
    c.add_argument("solver", metavar="MODULE:FUNCTION", help="svc: FUNCTION(K, y, C) -> "
                   "(alpha, b[, status]); svr: FUNCTION(K, z, epsilon, C) -> (beta, b[, status]); "
                   "MODULE is imported from the current directory")
    c.add_argument("--suite", choices=["svc", "svr"], default="svc")
    c.add_argument("--tol", type=float, default=1e-6)
    c.add_argument("--time-limit", type=float, default=60.0, help="seconds per call")
    c.add_argument("--problems", default=None, help="comma-separated problem names (default: "
                   "the whole suite)")
    c.add_argument("--json", action="store_true")
    c.add_argument("--plot", default=None, help="write the per-family success to this PNG")
    return p


def _verify(args) -> int:
    from .datasets import load_dataset

    data = load_dataset(args.data or DEFAULT_DATA[args.model])
    methods = args.methods.split(",") if args.methods else None
    try:
        module = import_module(REPORTS[args.model])
    except ImportError:
        print(f"margin-opt: the {args.model} report is not available in this version.",
              file=sys.stderr)
        return 2
    if args.model == "svc":
        linear_only = methods and set(methods) <= {"subgradient", "pegasos"}
        kernel = args.kernel or ("linear" if linear_only else "rbf")
        report, text, ok = module.verify(data, C=args.C, kernel=kernel, gamma=args.gamma,
                                         methods=methods, plot=args.plot)
    elif args.model == "svr":
        report, text, ok = module.verify(data, C=args.C, epsilon=args.epsilon,
                                         kernel=args.kernel or "rbf", gamma=args.gamma,
                                         methods=methods, plot=args.plot)
    else:
        report, text, ok = module.verify(data, n_estimators=args.n_estimators, plot=args.plot)
    print(json.dumps(report, indent=2, default=float) if args.json else text)
    return 0 if ok else 1


def _fit(args) -> int:
    import time

    from . import SVC, SVR, AdaBoost
    from .datasets import load_dataset

    data = load_dataset(args.data or DEFAULT_DATA[args.model])
    solver = {"solver": args.solver} if args.solver else {}
    if args.model == "svc":
        est = SVC(C=args.C, kernel=args.kernel, gamma=args.gamma, **solver)
    elif args.model == "svr":
        est = SVR(C=args.C, epsilon=args.epsilon, kernel=args.kernel, gamma=args.gamma,
                  **solver)
    else:
        est = AdaBoost(n_estimators=args.n_estimators)
    t0 = time.perf_counter()
    est.fit(data.X, data.y)
    elapsed = time.perf_counter() - t0
    summary = {"data": data.name, "n_samples": int(data.X.shape[0]), "model": repr(est),
               "fit_seconds": elapsed, "training_score": float(est.score(data.X, data.y))}
    cert = getattr(est, "certificate_", None)
    if hasattr(est, "solution_"):
        summary.update(est.solution_.summary())
    if cert is not None:
        summary["certificate"] = cert.to_dict()
    if args.json:
        print(json.dumps(summary, indent=2, default=float))
    else:
        for k, v in summary.items():
            if k != "certificate":
                print(f"{k:>18}: {v}")
        if cert is not None:
            print(cert)
    iterative = args.solver is not None and get_method(args.solver).iterative
    if iterative and cert is not None and not cert.ok:
        print(f"note: {args.solver} is an iterative method: its certificate reports the gap it "
              "reached against its documented accuracy and does not set the exit status.",
              file=sys.stderr)
        return 0
    return 0 if cert is None or cert.ok else 1


def _bench(args) -> int:
    from .bench import SUITES

    names = args.suites or list(SUITES)
    unknown = [s for s in names if s not in SUITES]
    if unknown:
        print(f"margin-opt bench: unknown suite(s) {unknown}; choose from {list(SUITES)}",
              file=sys.stderr)
        return 2
    out = {}
    for name in names:
        try:
            module = import_module(SUITES[name])
        except ImportError:
            if args.suites:
                print(f"margin-opt bench: suite {name!r} is not available", file=sys.stderr)
                return 2
            continue
        rows = module.run(quick=args.quick)
        out[name] = rows
        if not args.json:
            print(module.format_rows(rows), flush=True)
            print()
    if args.json:
        print(json.dumps(out, indent=2, default=float))
    return 0


def _study(args) -> int:
    from .datasets import load_dataset
    from .studies.bias_variance import DEFAULT_DATA, run_study

    data = load_dataset(args.data or DEFAULT_DATA[args.task or "classification"])
    result = run_study(data, method=args.method, n_bootstrap=args.n_bootstrap,
                       n_jobs=args.n_jobs, progress=sys.stderr.isatty())
    if args.plot:
        from .plots.bias_variance import save_study_plot

        save_study_plot(result, args.plot)
    print(json.dumps(result.to_dict(), indent=2, default=float) if args.json
          else result.format())
    return 0


def _conformance(args) -> int:
    from .testing.runner import load_solver, run_conformance

    solve = load_solver(args.solver)
    names = args.problems.split(",") if args.problems else None
    report = run_conformance(solve, args.suite, args.tol, args.time_limit, problems=names,
                             name=args.solver)
    print(report.to_json() if args.json else report)
    if args.plot:
        report.plot(args.plot)
    return 0 if report.all_passed else 1


def main(argv=None) -> int:
    """Entry point of the ``margin-opt`` console script."""
    args = _parser().parse_args(argv)
    try:
        return {"verify": _verify, "fit": _fit, "bench": _bench,
                "study": _study, "conformance": _conformance}[args.command](args)
    except (ValueError, FileNotFoundError) as exc:
        print(f"margin-opt: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
