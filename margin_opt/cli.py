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

from . import __version__
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


class _Formatter(argparse.RawDescriptionHelpFormatter, argparse.ArgumentDefaultsHelpFormatter):
    """The examples as written, and every option's default shown."""


class _CommandParser(argparse.ArgumentParser):
    """A command's parser that takes its positionals before, between or after the options
    (``study bias-variance --n-bootstrap 5 iris-binary``): argparse's intermixed parsing."""

    _intermixed = False

    def parse_known_args(self, args=None, namespace=None):
        if self._intermixed:        # the two passes of parse_known_intermixed_args
            return super().parse_known_args(args, namespace)
        self._intermixed = True
        try:
            return self.parse_known_intermixed_args(args, namespace)
        finally:
            self._intermixed = False


DATA_HELP = ("built-in name (breast_cancer, iris-binary, diabetes, heart_scale), a file of the "
             "shared data folder (a9a.t) or a path (svmlight, or CSV with the label last)")
MODEL_HELP = "the model; None: svr when the data's target is continuous, else svc"


def _parser():
    p = argparse.ArgumentParser(
        prog="margin-opt", formatter_class=_Formatter,
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
    p.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = p.add_subparsers(dest="command", required=True, parser_class=_CommandParser)
    command = {"formatter_class": _Formatter}

    v = sub.add_parser("verify", help="solve a model with every method and certify each",
                       **command)
    v.add_argument("data", nargs="?", default=None,
                   help=DATA_HELP + "; None: breast_cancer, or diabetes for --model svr")
    v.add_argument("--model", choices=sorted(REPORTS), default=None, help=MODEL_HELP)
    v.add_argument("--C", type=float, default=1.0, help="penalty C (inf: hard margin)")
    v.add_argument("--kernel", default=None, help="linear, poly, rbf, sigmoid "
                   "(None: rbf; linear when only linear methods are asked for)")
    v.add_argument("--gamma", type=_gamma, default="scale",
                   help="RBF/poly/sigmoid width: scale, auto or a number")
    v.add_argument("--epsilon", type=float, default=0.1, help="SVR tube half-width")
    v.add_argument("--n-estimators", type=int, default=50, help="AdaBoost rounds")
    v.add_argument("--methods", default=None,
                   help="comma-separated registry names (None: every method that suits the "
                   "size); svc: " + ",".join(method_names("svc")) + "; svr: "
                   + ",".join(method_names("svr")))
    v.add_argument("--plot", default=None, help="write a plot to this PNG file")
    v.add_argument("--json", action="store_true", help="print the report as JSON")

    f = sub.add_parser("fit", help="fit one estimator and print its summary and certificate",
                       **command)
    f.add_argument("data", nargs="?", default=None, help="as for verify")
    f.add_argument("--model", choices=sorted(REPORTS), default=None, help=MODEL_HELP)
    f.add_argument("--solver", default=None,
                   help="svc: " + ", ".join(method_names("svc", estimator=True)) + "; svr: "
                   + ", ".join(method_names("svr", estimator=True)) + " (None: smo)")
    f.add_argument("--C", type=float, default=1.0, help="penalty C (inf: hard margin)")
    f.add_argument("--kernel", default="rbf", help="linear, poly, rbf or sigmoid")
    f.add_argument("--gamma", type=_gamma, default="scale",
                   help="RBF/poly/sigmoid width: scale, auto or a number")
    f.add_argument("--epsilon", type=float, default=0.1, help="SVR tube half-width")
    f.add_argument("--n-estimators", type=int, default=50, help="AdaBoost rounds")
    f.add_argument("--json", action="store_true", help="print the summary as JSON")

    b = sub.add_parser("bench", help="benchmarks side by side with the peer libraries",
                       **command)
    b.add_argument("suites", nargs="*", default=[],
                   help=", ".join(SUITES) + " ([]: all available)")
    b.add_argument("--quick", action="store_true", help="small sizes (a smoke test)")
    b.add_argument("--sizes", type=int, nargs="+", default=None,
                   help="sample sizes, for the suites that take them (None: the suite's)")
    b.add_argument("--repeats", type=int, default=None,
                   help="best of this many alternated runs (None: the suite's)")
    b.add_argument("--json", action="store_true", help="print the rows as JSON")

    s = sub.add_parser("study", help="experiments over estimators (bias-variance by bootstrap)",
                       **command)
    s.add_argument("study", choices=["bias-variance"], help="the study to run")
    s.add_argument("data", nargs="?", default=None, help="as for verify: two classes or "
                   "continuous targets (None: breast_cancer, or diabetes with --task "
                   "regression)")
    s.add_argument("--task", choices=["classification", "regression"], default=None,
                   help="picks the default data when DATA is not given")
    s.add_argument("--method", choices=["oob", "holdout"], default="oob",
                   help="out-of-bag or held-out estimates of bias and variance")
    s.add_argument("--n-bootstrap", type=int, default=200, help="bootstrap replicates B")
    s.add_argument("--n-jobs", type=int, default=None,
                   help="replicates in parallel (joblib; None: one)")
    s.add_argument("--plot", default=None, help="write the study's figure to this PNG file")
    s.add_argument("--json", action="store_true", help="print the result as JSON")

    c = sub.add_parser("conformance", help="grade your own solver on the conformance suites "
                       "(margin_opt.testing)",
                       **command)
    c.add_argument("solver", metavar="MODULE:FUNCTION", help="svc: FUNCTION(K, y, C) -> "
                   "(alpha, b[, status]); svr: FUNCTION(K, z, epsilon, C) -> (beta, b[, status]); "
                   "MODULE is imported from the current directory")
    c.add_argument("--suite", choices=["svc", "svr"], default="svc", help="which suite")
    c.add_argument("--tol", type=float, default=1e-6, help="the tolerance graded")
    c.add_argument("--time-limit", type=float, default=60.0, help="seconds per call")
    c.add_argument("--problems", default=None, help="comma-separated problem names (None: "
                   "the whole suite)")
    c.add_argument("--json", action="store_true", help="print the report as JSON")
    c.add_argument("--plot", default=None, help="write the per-family success to this PNG")
    return p


def _data_and_model(args):
    """The data set and the model: ``--model`` when given, else svr for a continuous
    target (diabetes, a regression CSV) and svc otherwise."""
    from sklearn.utils.multiclass import type_of_target

    from .datasets import load_dataset

    if args.data is None:
        model = args.model or "svc"
        return load_dataset(DEFAULT_DATA[model]), model
    data = load_dataset(args.data)
    if args.model is not None:
        return data, args.model
    return data, "svr" if type_of_target(data.y) == "continuous" else "svc"


def _verify(args) -> int:
    data, args.model = _data_and_model(args)
    methods = args.methods.split(",") if args.methods else None
    try:
        module = import_module(REPORTS[args.model])
    except ImportError:
        print(f"margin-opt: the {args.model} report is not available in this version.",
              file=sys.stderr)
        return 2
    stream = None if args.json else sys.stdout  # svc, svr: each row as its method ends
    if args.model == "svc":
        linear_only = methods and set(methods) <= {"subgradient", "pegasos"}
        kernel = args.kernel or ("linear" if linear_only else "rbf")
        report, text, ok = module.verify(data, C=args.C, kernel=kernel, gamma=args.gamma,
                                         methods=methods, plot=args.plot, stream=stream)
    elif args.model == "svr":
        report, text, ok = module.verify(data, C=args.C, epsilon=args.epsilon,
                                         kernel=args.kernel or "rbf", gamma=args.gamma,
                                         methods=methods, plot=args.plot, stream=stream)
    else:
        report, text, ok = module.verify(data, n_estimators=args.n_estimators, plot=args.plot)
        stream = None
    if stream is None:
        print(json.dumps(report, indent=2, default=float) if args.json else text)
    return 0 if ok else 1


def _fit(args) -> int:
    import time

    from . import SVC, SVR, AdaBoost

    data, args.model = _data_and_model(args)
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
    from .bench import SUITES, run_suite

    names = args.suites or list(SUITES)
    unknown = [s for s in names if s not in SUITES]
    if unknown:
        print(f"margin-opt bench: unknown suite(s) {unknown}; choose from {list(SUITES)}",
              file=sys.stderr)
        return 2
    out = {}
    for name in names:
        try:
            rows, text = run_suite(name, quick=args.quick, sizes=args.sizes,
                                   repeats=args.repeats)
        except ImportError:
            if args.suites:
                print(f"margin-opt bench: suite {name!r} is not available", file=sys.stderr)
                return 2
            continue
        out[name] = rows
        if not args.json:
            print(text, flush=True)
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
    except (ValueError, FileNotFoundError, IsADirectoryError, PermissionError) as exc:
        print(f"margin-opt: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
