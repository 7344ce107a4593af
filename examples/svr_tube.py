"""A one-dimensional ε-SVR: the fit, its tube, the support vectors, and the certificate.

    python examples/svr_tube.py [FILE.png]
"""

import sys

import numpy as np

from margin_opt import SVRProblem
from margin_opt.plots.svr import plot_tube_1d

rng = np.random.default_rng(0)
x = np.sort(rng.uniform(-3, 3, 80))
y = np.sinc(x) + 0.1 * rng.normal(size=x.size)

problem = SVRProblem(x[:, None], y, C=5.0, epsilon=0.1, kernel="rbf", gamma=1.0)
exact = problem.solve("cvxpy-dual")
fast = problem.solve("smo", tol=1e-8)
print(f"cvxpy dual optimum {exact.dual_objective:.10f}, SMO {fast.dual_objective:.10f}")
print(problem.certify(fast, tol=1e-6))
out = sys.argv[1] if len(sys.argv) > 1 else "svr_tube.png"
plot_tube_1d(problem, exact, file=out)
print(f"wrote {out}")
