"""The ``margin-opt`` command line.

- ``margin-opt verify [DATA]``: one model solved by every method, each certified.
- ``margin-opt fit [DATA]``: one estimator fitted, its summary and certificate.
- ``margin-opt path [DATA]``: an ε-path over C (C-SVC or ε-SVR), each point certified.
- ``margin-opt bench [SUITE ...]``: benchmarks side by side with the peer libraries.
- ``margin-opt study bias-variance [DATA]``: the lecture's bias–variance table on real data.
- ``margin-opt conformance MODULE:FUNCTION``: grade your own solver (:mod:`margin_opt.testing`).

Exit status: 0 success, 1 a failed certificate or conformance row, 2 bad arguments or
data, 130 interrupted (Ctrl-C: one line on stderr, no partial plot file left).
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import sys
import time
from importlib import import_module
from pathlib import Path

from .bench import SUITES
from .methods import get_method, method_names

__all__ = ["main"]

DEFAULT_DATA = {"svc": "breast_cancer", "svr": "diabetes", "adaboost": "breast_cancer",
                "oneclass": "breast_cancer", "nusvc": "breast_cancer", "nusvr": "diabetes"}
REPORTS = {"svc": "margin_opt.reports.svm", "svr": "margin_opt.reports.svr",
           "adaboost": "margin_opt.reports.adaboost",
           "oneclass": "margin_opt.reports.one_class", "nusvc": "margin_opt.reports.nu",
           "nusvr": "margin_opt.reports.nu"}
#: the registry's model of each --model that has one
REGISTRY_MODEL = {"svc": "svc", "svr": "svr", "oneclass": "one-class", "nusvc": "nu-svc",
                  "nusvr": "nu-svr"}


#: The smallest sample size ``bench --sizes`` takes (below it a synthetic set may hold
#: one class, or too few samples for a train/test split).
MIN_BENCH_SIZE = 10


def _int_at_least(low, why=""):
    """An argparse type: an integer ≥ ``low`` (``why``: the reason, for the message)."""
    def parse(value):
        try:
            n = int(value)
        except ValueError:
            n = None
        if n is None or n < low:
            raise argparse.ArgumentTypeError(f"must be an integer ≥ {low}{why}, got {value!r}")
        return n
    return parse


def _n_jobs(value):
    """An argparse type: joblib's n_jobs, a positive integer or -1 (every core)."""
    try:
        n = int(value)
    except ValueError:
        n = 0
    if n < 1 and n != -1:
        raise argparse.ArgumentTypeError(f"must be a positive integer (processes) or -1 (one "
                                         f"per core), got {value!r}")
    return n


def _names(value):
    """An argparse type: a comma-separated list of names, none of them empty."""
    names = [n.strip() for n in value.split(",")]
    if not all(names):
        raise argparse.ArgumentTypeError(
            f"{value!r} names no problem{'' if value.strip() else ' (it is empty)'}: give "
            "comma-separated problem names without empty entries, or leave --problems out "
            "for the whole suite")
    return names


class _Version(argparse.Action):
    """``--version``: the version and :func:`margin_opt.show_config`'s line, then exit."""

    def __call__(self, parser, namespace, values, option_string=None):
        from .parallel import show_config

        show_config()
        parser.exit()


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
               "  margin-opt verify --model oneclass      one-class SVM on breast_cancer\n"
               "  margin-opt verify --model nusvc --nu 0.2  ν-SVC on breast_cancer\n"
               "  margin-opt fit --model adaboost         one estimator and its certificate\n"
               "  margin-opt path --plot path.png         ε-path over C in [0.1, 10], certified\n"
               "  margin-opt bench smo --quick            SMO against LIBSVM, small sizes\n\n"
               "'margin-opt COMMAND --help' lists the options of a command.")
    p.add_argument("--version", action=_Version, nargs=0,
                   help="the version and what runs the compiled loops (margin_opt.show_config)")
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
    v.add_argument("--nu", type=float, default=0.5, help="ν in (0, 1] of oneclass, nusvc, "
                   "nusvr: at most this fraction of outliers (margin errors), at least this "
                   "fraction of support vectors")
    v.add_argument("--n-estimators", type=int, default=50, help="AdaBoost rounds")
    v.add_argument("--methods", default=None,
                   help="comma-separated registry names (None: every method that suits the "
                   "size); " + "; ".join(f"{m}: " + ",".join(method_names(r))
                                         for m, r in REGISTRY_MODEL.items()))
    v.add_argument("--plot", default=None, help="write a plot to this PNG file; an existing "
                   "directory: into it, as verify-MODEL-DATA.png (several figures: "
                   "STEM-PART.png beside it)")
    v.add_argument("--json", action="store_true", help="print the report as JSON")

    f = sub.add_parser("fit", help="fit one estimator and print its summary and certificate",
                       **command)
    f.add_argument("data", nargs="?", default=None, help="as for verify")
    f.add_argument("--model", choices=sorted(REPORTS), default=None, help=MODEL_HELP)
    f.add_argument("--solver", default=None,
                   help="; ".join(f"{m}: " + ", ".join(method_names(r, estimator=True))
                                  for m, r in REGISTRY_MODEL.items()) + " (None: smo)")
    f.add_argument("--C", type=float, default=1.0, help="penalty C (inf: hard margin)")
    f.add_argument("--kernel", default="rbf", help="linear, poly, rbf or sigmoid")
    f.add_argument("--gamma", type=_gamma, default="scale",
                   help="RBF/poly/sigmoid width: scale, auto or a number")
    f.add_argument("--epsilon", type=float, default=0.1, help="SVR tube half-width")
    f.add_argument("--nu", type=float, default=0.5, help="ν in (0, 1] of oneclass, nusvc, "
                   "nusvr")
    f.add_argument("--n-estimators", type=int, default=50, help="AdaBoost rounds")
    f.add_argument("--json", action="store_true", help="print the summary as JSON")

    r = sub.add_parser("path", help="an ε-path over C: answers whose certified intervals "
                       "cover [C_min, C_max]", **command)
    r.add_argument("data", nargs="?", default=None,
                   help=DATA_HELP + "; None: breast_cancer, or diabetes for --model svr")
    r.add_argument("--model", choices=["svc", "svr"], default=None, help=MODEL_HELP)
    r.add_argument("--C-min", type=float, default=0.1, help="the smallest C covered (> 0)")
    r.add_argument("--C-max", type=float, default=10.0, help="the largest C covered")
    r.add_argument("--eps", type=float, default=1e-3, help="the relative accuracy in (0, 1) "
                   "certified at every C of the range")
    r.add_argument("--kernel", default="rbf", help="linear, poly, rbf or sigmoid")
    r.add_argument("--gamma", type=_gamma, default="scale",
                   help="RBF/poly/sigmoid width: scale, auto or a number")
    r.add_argument("--epsilon", type=float, default=0.1, help="SVR tube half-width")
    r.add_argument("--plot", default=None, help="write the path's figure (multipliers, "
                   "support vectors, margin and cover against C) to this PNG file; an "
                   "existing directory: into it, as path-MODEL-DATA.png")
    r.add_argument("--json", action="store_true", help="print the path as JSON")

    b = sub.add_parser("bench", help="benchmarks side by side with the peer libraries",
                       **command)
    b.add_argument("suites", nargs="*", default=[],
                   help=", ".join(SUITES) + " ([]: all available)")
    b.add_argument("--quick", action="store_true", help="small sizes (a smoke test)")
    b.add_argument("--sizes", type=_int_at_least(MIN_BENCH_SIZE, " (the smallest size)"),
                   nargs="+", default=None, help=f"sample sizes, each ≥ {MIN_BENCH_SIZE}, for "
                   "the suites that take them (None: the suite's)")
    b.add_argument("--repeats", type=_int_at_least(1), default=None,
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
    s.add_argument("--n-jobs", type=_n_jobs, default=None,
                   help="replicates in parallel: a positive number of processes or -1 for "
                   "one per core (joblib; None: one)")
    s.add_argument("--plot", default=None, help="write the study's figure to this PNG file; "
                   "an existing directory: into it, as bias-variance-DATA.png")
    s.add_argument("--json", action="store_true", help="print the result as JSON")

    c = sub.add_parser("conformance", help="grade your own solver on the conformance suites "
                       "(margin_opt.testing)",
                       **command)
    c.add_argument("solver", metavar="MODULE:FUNCTION", help="svc: FUNCTION(K, y, C) -> "
                   "(alpha, b[, status]); svr: FUNCTION(K, z, epsilon, C) -> (beta, b[, status]); "
                   "oneclass: FUNCTION(K, nu) -> (alpha, rho[, status]) in LIBSVM's scale; "
                   "MODULE is imported from the current directory")
    c.add_argument("--suite", choices=["svc", "svr", "oneclass"], default="svc",
                   help="which suite")
    c.add_argument("--tol", type=float, default=1e-6, help="the tolerance graded")
    c.add_argument("--time-limit", type=float, default=60.0, help="seconds per call")
    c.add_argument("--problems", type=_names, default=None, help="comma-separated problem "
                   "names (None: the whole suite)")
    c.add_argument("--json", action="store_true", help="print the report as JSON")
    c.add_argument("--seed", type=int, default=None, help="the seed of the perturbed "
                   "instances graded (None: a fresh one, named in the report's notes)")
    c.add_argument("--as-stored", action="store_true", help="grade the problems as stored, "
                   "not perturbed instances (a solver could then look the public answers up)")
    c.add_argument("--plot", default=None, help="write the per-family success to this PNG; "
                   "an existing directory: into it, as conformance-SUITE.png")
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


def _plot_path(args, name):
    """Resolve ``--plot`` before the work starts: an existing directory gets the file
    ``name`` inside it; a path whose directory does not exist is refused up front."""
    if not args.plot:
        return
    path = Path(args.plot)
    if path.is_dir():
        args.plot = str(path / name)
        return
    if args.plot.endswith(("/", os.sep)):
        raise ValueError(f"--plot {args.plot}: no such directory; create it first, or pass "
                         "the path of a PNG file.")
    if not path.parent.is_dir():
        raise ValueError(f"--plot {args.plot}: the directory {str(path.parent)!r} does not "
                         "exist; create it first, or pass a path in an existing directory.")


def _stem(data) -> str:
    """The data set's name for a file name (a path's stem, e.g. cancer for cancer.csv)."""
    return Path(str(data.name)).stem or "data"


def _remove_partial_plots(plot, since):
    """Delete the plot files this run wrote (``plot``, ``plot.png`` and the ``STEM-PART``
    siblings of :func:`margin_opt.plots.figure_paths`, modified since the run began):
    an interrupted run leaves no partial output."""
    if not plot:
        return
    path = Path(plot)
    folder, stem = glob.escape(str(path.parent)), glob.escape(path.stem)
    for pattern in (stem + ".*", stem + "-*", glob.escape(path.name)):
        for f in glob.glob(os.path.join(folder, pattern)):
            try:    # 1 s of slack: a file system's clock may lag time.time() a little
                if os.path.isfile(f) and os.stat(f).st_mtime >= since - 1.0:
                    os.unlink(f)
            except OSError:
                pass


def _verify(args) -> int:
    data, args.model = _data_and_model(args)
    _plot_path(args, f"verify-{args.model}-{_stem(data)}.png")
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
    elif args.model == "oneclass":
        report, text, ok = module.verify(data, nu=args.nu, kernel=args.kernel or "rbf",
                                         gamma=args.gamma, methods=methods, plot=args.plot,
                                         stream=stream)
    elif args.model in ("nusvc", "nusvr"):
        if args.plot:
            raise ValueError(f"--plot: verify --model {args.model} draws no figure; for the "
                             "ν-property use margin_opt.plots.nu.plot_nu_property.")
        report, text, ok = module.verify(data, model=args.model, nu=args.nu, C=args.C,
                                         kernel=args.kernel or "rbf", gamma=args.gamma,
                                         methods=methods, stream=stream)
    else:
        report, text, ok = module.verify(data, n_estimators=args.n_estimators, plot=args.plot)
        stream = None
    if stream is None:
        print(json.dumps(report, indent=2, default=float) if args.json else text)
    return 0 if ok else 1


def _fit(args) -> int:
    import time

    from . import SVC, SVR, AdaBoost, NuSVC, NuSVR, OneClassSVM

    data, args.model = _data_and_model(args)
    solver = {"solver": args.solver} if args.solver else {}
    if args.model == "svc":
        est = SVC(C=args.C, kernel=args.kernel, gamma=args.gamma, **solver)
    elif args.model == "svr":
        est = SVR(C=args.C, epsilon=args.epsilon, kernel=args.kernel, gamma=args.gamma,
                  **solver)
    elif args.model == "oneclass":
        est = OneClassSVM(nu=args.nu, kernel=args.kernel, gamma=args.gamma, **solver)
    elif args.model == "nusvc":
        est = NuSVC(nu=args.nu, kernel=args.kernel, gamma=args.gamma, **solver)
    elif args.model == "nusvr":
        est = NuSVR(nu=args.nu, C=args.C, kernel=args.kernel, gamma=args.gamma, **solver)
    else:
        est = AdaBoost(n_estimators=args.n_estimators)
    t0 = time.perf_counter()
    est.fit(data.X, data.y)
    elapsed = time.perf_counter() - t0
    summary = {"data": data.name, "n_samples": int(data.X.shape[0]), "model": repr(est),
               "fit_seconds": elapsed}
    if args.model == "oneclass":     # no labels to score: the fraction predicted inliers
        summary["inlier_fraction"] = float((est.predict(data.X) == 1).mean())
    else:
        summary["training_score"] = float(est.score(data.X, data.y))
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


def _path(args) -> int:
    from .exceptions import NotCertifiedError
    from .reports.path import run_path

    data, args.model = _data_and_model(args)
    if args.model not in ("svc", "svr"):
        raise ValueError(f"margin-opt path takes --model svc or svr, got {args.model!r}.")
    _plot_path(args, f"path-{args.model}-{_stem(data)}.png")
    try:
        report, text, ok = run_path(data, model=args.model, C_min=args.C_min,
                                    C_max=args.C_max, eps=args.eps, kernel=args.kernel,
                                    gamma=args.gamma, epsilon=args.epsilon, plot=args.plot)
    except NotCertifiedError as exc:
        print(f"margin-opt path: {exc}", file=sys.stderr)
        return 1
    print(json.dumps(report, indent=2, default=float) if args.json else text)
    return 0 if ok else 1


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
    _plot_path(args, f"bias-variance-{_stem(data)}.png")
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

    _plot_path(args, f"conformance-{args.suite}.png")
    solve = load_solver(args.solver)
    report = run_conformance(solve, args.suite, args.tol, args.time_limit,
                             problems=args.problems, name=args.solver,
                             perturb=not args.as_stored, seed=args.seed)
    print(report.to_json() if args.json else report)
    if args.plot:
        report.plot(args.plot)
    return 0 if report.all_passed else 1


def main(argv=None) -> int:
    """Entry point of the ``margin-opt`` console script.

    Returns
    -------
    status : int
        0 success, 1 a failed certificate or conformance row, 2 bad arguments or data
        (one line on stderr), 130 interrupted by Ctrl-C (SIGINT): one line
        "margin-opt: interrupted" on stderr, and the plot files the run had begun to
        write removed; 141 (128 + SIGPIPE) when the reader of the output went away
        (``margin-opt verify | head``), quietly, as a shell tool ends.
    """
    args, since = None, time.time()
    try:
        args = _parser().parse_args(argv)
        return {"verify": _verify, "fit": _fit, "path": _path, "bench": _bench,
                "study": _study, "conformance": _conformance}[args.command](args)
    except (ValueError, FileNotFoundError, IsADirectoryError, PermissionError) as exc:
        print(f"margin-opt: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        _remove_partial_plots(getattr(args, "plot", None), since)
        print("margin-opt: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # the rest of the output goes nowhere (Python would report the pipe again when it
        # flushes stdout at exit)
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141


if __name__ == "__main__":
    sys.exit(main())
