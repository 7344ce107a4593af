"""Benchmark: Pegasos and batch subgradient against SGDClassifier, LinearSVC and cvxpy.

Usage:  python benchmarks/bench_subgradient.py [--quick] [--json FILE]

Same suite as ``margin-opt bench subgradient`` (margin_opt.bench.subgradient).
"""

import argparse
import json

from margin_opt.bench.subgradient import format_rows, run


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes (n = 2000)")
    parser.add_argument("--json", metavar="FILE", help="also write the rows as JSON")
    args = parser.parse_args(argv)
    rows = run(quick=args.quick)
    print(format_rows(rows))
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(rows, fh, indent=1)


if __name__ == "__main__":
    main()
