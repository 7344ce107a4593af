"""A one-dimensional ε-SVR: the fit, its tube, the support vectors, and the certificate.

Run::

    python examples/svr_tube.py [--out DIR]        (writes DIR/svr_tube.png)
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from margin_opt import SVRProblem
from margin_opt.plots.svr import plot_tube_1d


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("."),
                        help="folder for svr_tube.png (default: the current directory)")
    args = parser.parse_args(argv)
    rng = np.random.default_rng(0)
    x = np.sort(rng.uniform(-3, 3, 80))
    y = np.sinc(x) + 0.1 * rng.normal(size=x.size)

    problem = SVRProblem(x[:, None], y, C=5.0, epsilon=0.1, kernel="rbf", gamma=1.0)
    exact = problem.solve("cvxpy-dual")
    fast = problem.solve("smo", tol=1e-8)
    print(f"cvxpy dual optimum {exact.dual_objective:.10f}, SMO {fast.dual_objective:.10f}")
    print(problem.certify(fast, tol=1e-6))
    args.out.mkdir(parents=True, exist_ok=True)
    path = args.out / "svr_tube.png"
    plot_tube_1d(problem, exact, file=path)
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
