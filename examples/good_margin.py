"""Good margin, bad margin: the SVM, the perceptron and ridge on iris (the lecture's picture).

Setosa (−1) against the other two species (+1) on sepal length and sepal width, all
150 rows (``--lecture-rows``: rows 0, 4, 8, ... as in the lecture's other iris runs).
The data is linearly separable (``margin_opt.separability`` verifies a separator), so
many hyperplanes separate it: the perceptron stops at the first one it meets, ridge
regression on the ±1 labels need not even separate, and the hard-margin SVM
(``SVC(kernel="linear", C=10000)``, as in the notes) takes the one with the largest
margin.  Each line's legend gives its geometric margin minᵢ yᵢ(w·xᵢ + b)/‖w‖ (negative:
a point on the wrong side); the SVM's margin lines f = ±1 are dashed and its support
vectors circled.  The perceptron's run is checked against Novikoff's bound.

    python examples/good_margin.py [--out DIR] [--lecture-rows]

writes ``good_margin.png`` to the current directory (or DIR).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
from sklearn.linear_model import RidgeClassifier

from margin_opt import SVC, Perceptron, novikoff_bound, separability
from margin_opt.datasets import load_dataset
from margin_opt.plots import require_matplotlib


def iris_rows(lecture_rows=False):
    """Sepal length and width, setosa = −1, the other species +1."""
    iris = load_dataset("iris-binary")
    step = 4 if lecture_rows else 1
    return iris.X[::step, :2], iris.y[::step]


def fit_lines(X, y):
    """{name: (w, b)} of the three classifiers, and the fitted SVC and perceptron."""
    svm = SVC(kernel="linear", C=10000).fit(X, y)
    perc = Perceptron(max_epochs=10_000).fit(X, y)
    ridge = RidgeClassifier().fit(X, y)
    lines = {"SVM, C = 10000": (svm.coef_[0], svm.intercept_[0]),
             "perceptron": (perc.coef_[0], perc.intercept_[0]),
             "ridge classifier": (np.ravel(ridge.coef_), float(np.ravel(ridge.intercept_)[0]))}
    return lines, svm, perc


def geometric_margin(X, y, w, b) -> float:
    """minᵢ yᵢ(w·xᵢ + b)/‖w‖ in feature units (< 0: some point misclassified)."""
    return float(np.min(y * (X @ w + b)) / np.linalg.norm(w))


def plot(X, y, lines, svm, file):
    plt = require_matplotlib()
    fig, ax = plt.subplots(figsize=(7.5, 6.5))
    for label, style in ((-1, dict(color="C0", marker="o", label="setosa (−1)")),
                         (1, dict(color="C1", marker="s", label="versicolor, virginica (+1)"))):
        pts = X[y == label]
        ax.scatter(pts[:, 0], pts[:, 1], s=22, alpha=0.75, edgecolor="none", **style)
    sv = X[svm.support_]
    ax.scatter(sv[:, 0], sv[:, 1], s=110, facecolor="none", edgecolor="k", linewidth=1.2,
               label="SVM support vectors")
    pad = 0.3
    xs = np.linspace(X[:, 0].min() - pad, X[:, 0].max() + pad, 200)
    styles = {"SVM, C = 10000": dict(color="k", lw=2.0),
              "perceptron": dict(color="C3", lw=1.6),
              "ridge classifier": dict(color="C2", lw=1.6, ls="-.")}
    for name, (w, b) in lines.items():
        m = geometric_margin(X, y, w, b)
        verdict = "good margin" if name.startswith("SVM") else "bad margin"
        ax.plot(xs, -(w[0] * xs + b) / w[1], label=f"{name}: margin {m:+.4f} ({verdict})",
                **styles[name])
    w, b = lines["SVM, C = 10000"]
    for level in (-1.0, 1.0):
        ax.plot(xs, (level - b - w[0] * xs) / w[1], color="k", lw=0.8, ls="--")
    ax.set_xlim(xs[0], xs[-1])
    ax.set_ylim(X[:, 1].min() - pad, X[:, 1].max() + pad)
    ax.set_xlabel("sepal length (cm)")
    ax.set_ylabel("sepal width (cm)")
    ax.set_title("Iris, setosa vs the rest: many separating lines, one largest margin")
    ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.11), ncol=2,
              frameon=False)
    fig.tight_layout()
    fig.savefig(file, dpi=120)
    plt.close(fig)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=".", help="folder for good_margin.png (default: .)")
    parser.add_argument("--lecture-rows", action="store_true",
                        help="iris rows 0, 4, 8, ... only (the lecture's subset)")
    args = parser.parse_args(argv)
    X, y = iris_rows(args.lecture_rows)
    sep = separability(X, y)
    print(f"separable: {sep.separable} ({sep.certificate.title.split(': ')[-1]}, "
          f"verified by {sep.method})")
    lines, svm, perc = fit_lines(X, y)
    nb = novikoff_bound(X, y)
    print(f"perceptron: {perc.n_updates_} corrections in {perc.n_epochs_} epochs; "
          f"Novikoff's bound ⌈(R/γ)²⌉ = ⌈({nb.radius:.3f}/{nb.margin:.4f})²⌉ = {nb.bound}")
    for name, (w, b) in lines.items():
        acc = np.mean(np.where(X @ w + b > 0, 1.0, -1.0) == y)
        print(f"{name:<18} w = {np.round(w, 4)}, b = {b:+.4f}: geometric margin "
              f"{geometric_margin(X, y, w, b):+.5f}, training accuracy {acc:.3f}")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    file = out / "good_margin.png"
    plot(X, y, lines, svm, file)
    print(f"wrote {file}")


if __name__ == "__main__":
    main()
