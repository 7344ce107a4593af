"""The C-SVC of the lecture notes, drawn: the boundary with its margins and support vectors
(two features, RBF kernel) and the support-vector table as a picture (30 features).

Run::

    python examples/svc_pictures.py [--out DIR]

It writes ``svc_boundary.png`` (make_moons, RBF γ = 1, C = 1, solved by SMO at tol
1e-8) and ``svc_margins.png`` (breast_cancer, RBF, C = 1, cvxpy dual) into DIR
(default: the current directory), and prints each certificate, whose table counts are
the counts in the pictures' legends.  The pictures in ``docs/`` are ``--out docs``.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from sklearn.datasets import make_moons

from margin_opt import SVMProblem
from margin_opt.datasets import load_dataset
from margin_opt.plots.svc import plot_decision_boundary, plot_margins_vs_alpha


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("."),
                        help="folder for the two PNG files (default: the current directory)")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)

    X, y = make_moons(120, noise=0.25, random_state=0)
    moons = SVMProblem(X, y, C=1.0, kernel="rbf", gamma=1.0)
    sol = moons.solve("smo", tol=1e-8)
    print(moons.certify(sol, tol=1e-6))
    path = args.out / "svc_boundary.png"
    plot_decision_boundary(moons, sol, file=path)
    print(f"wrote {path}")

    data = load_dataset("breast_cancer")
    cancer = SVMProblem(data.X, data.y, C=1.0, kernel="rbf")
    sol = cancer.solve("cvxpy-dual")
    print(cancer.certify(sol, tol=1e-6))
    path = args.out / "svc_margins.png"
    plot_margins_vs_alpha(cancer, sol, file=path)
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
