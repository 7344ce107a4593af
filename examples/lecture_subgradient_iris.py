"""The lecture's run of subgradient descent on the soft-margin SVM, reproduced.

Iris rows 0, 4, 8, ... (every fourth), features sepal length and sepal width,
setosa = −1 and the other two species +1.  The objective is the average-loss form

    J(w, b) = λ/2 ‖w‖² + (1/n) Σ max(0, 1 − yᵢ(wᵀxᵢ + b)),   λ = 0.1,

the bias not regularized; constant step 0.01 from w = (1, 1), b = 1; stop when the
parameter change ‖θₜ − θₜ₋₁‖ ≤ 5e-4.  The lecture printed J every 1000 iterations,
from ``Iteration 0. J: 3.728947`` to ``Iteration 21000. J: 0.304293``; this prints
the same numbers, then how far the final J is from the cvxpy optimum.

Run:  python examples/lecture_subgradient_iris.py [--plot] [--out DIR]
(``--plot`` also writes DIR/subgradient_convergence.png; DIR defaults to the current directory.)
"""

from __future__ import annotations

import argparse
from pathlib import Path

import cvxpy as cp
import numpy as np

from margin_opt.datasets import load_dataset
from margin_opt.solvers.subgradient import subgradient_descent
from margin_opt.standard_forms import PrimalERM

LAM, STEP, W0, B0, TOL = 0.1, 0.01, (1.0, 1.0), 1.0, 5e-4


def lecture_problem() -> PrimalERM:
    """The lecture's data and objective as a PrimalERM (38 samples, 2 features)."""
    iris = load_dataset("iris-binary")  # setosa = −1, the others +1
    X, y = iris.X[::4, :2], iris.y[::4]  # rows 0, 4, 8, ...; sepal length and width
    return PrimalERM(X, y, LAM, np.ones(y.shape[0]), fit_intercept=True,
                     regularize_intercept=False)


def cvxpy_optimum(erm: PrimalERM) -> float:
    """min J by Clarabel: the same objective written out in cvxpy."""
    w, b = cp.Variable(erm.X.shape[1]), cp.Variable()
    hinge = cp.pos(1 - cp.multiply(erm.y, erm.X @ w + b))
    prob = cp.Problem(cp.Minimize(erm.lam / 2 * cp.sum_squares(w) + cp.sum(hinge) / erm.n_samples))
    return prob.solve(solver="CLARABEL")


def run():
    """The lecture's run; returns (result, printed lines, J*)."""
    erm = lecture_problem()
    # intercept="step": b takes its own subgradient step, as in the lecture
    result = subgradient_descent(erm, schedule="constant", step_size=STEP, w0=W0, b0=B0,
                                 tol=TOL, max_iter=100_000, intercept="step")
    J = result.history["J"]
    lines = [f"Iteration {k}. J: {J[k]:.6f}" for k in range(0, result.nit + 1, 1000)]
    J_star = cvxpy_optimum(erm)
    J_last = J[-1]
    lines += [
        f"Stopped after {result.nit} iterations ({result.status}): parameter change "
        f"{result.history['param_change'][-1]:.2e} <= {TOL:g}.",
        f"Final J = {J_last:.6f} at w = {np.round(result.w_last, 4)}, b = {result.b_last:.4f}",
        f"cvxpy optimum J* = {J_star:.6f}: the final J is {J_last - J_star:.2e} above it "
        f"({(J_last - J_star) / J_star:.2%}).",
    ]
    return result, lines, J_star


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--plot", action="store_true",
                        help="also plot suboptimality vs iteration for every schedule and "
                             "Pegasos (subgradient_convergence.png)")
    parser.add_argument("--out", type=Path, default=Path("."),
                        help="folder for the plot (default: the current directory)")
    args = parser.parse_args(argv)
    result, lines, J_star = run()
    print("\n".join(lines))
    if args.plot:
        from margin_opt.bench.subgradient import convergence_runs
        from margin_opt.plots.convergence import plot_convergence

        runs = convergence_runs(lecture_problem(), J_star, max_iter=20_000)
        runs["constant 0.01 (lecture)"] = result.history["J"]
        args.out.mkdir(parents=True, exist_ok=True)
        path = args.out / "subgradient_convergence.png"
        plot_convergence(runs, J_star, lam=LAM, file=path,
                         title="Lecture iris SVM, λ = 0.1: J − J* vs iteration")
        print(f"wrote {path}")


if __name__ == "__main__":
    main()
