"""SMO vs scikit-learn's SVC (LIBSVM): a thin script over :mod:`margin_opt.bench.smo`.

Usage (from the project root)::

    python benchmarks/bench_smo.py                 # n = 1000, 5000, 20000 and a9a.t
    python benchmarks/bench_smo.py --quick
    python benchmarks/bench_smo.py --sizes 1000 5000 --no-data --json smo.json
    python benchmarks/bench_smo.py --memory 50000  # adds the peak-RSS row
"""

import argparse

from margin_opt.bench.smo import format_rows, run


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small sizes, one repeat")
    ap.add_argument("--sizes", type=int, nargs="+", help="synthetic sizes")
    ap.add_argument("--no-data", action="store_true", help="skip the shared a9a.t")
    ap.add_argument("--tol", type=float, default=1e-3)
    ap.add_argument("--ref-tol", type=float, default=1e-6)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--memory", type=int, default=0, metavar="N",
                    help="also report the peak RSS of an N-point RBF run")
    ap.add_argument("--json", metavar="PATH", help="write the rows as JSON")
    a = ap.parse_args(argv)
    rows = run(quick=a.quick, sizes=a.sizes, json=a.json,
               datasets=() if a.no_data else ("a9a.t",), tol=a.tol, ref_tol=a.ref_tol,
               repeats=a.repeats, memory=a.memory or False)
    print(format_rows(rows))


if __name__ == "__main__":
    main()
