"""The named conformance problems: families of C-SVC, ε-SVR and one-class SVM instances
that break solvers.

Every problem is given to a solver in plain arrays (the protocol of
:func:`margin_opt.testing.run_conformance`):

* C-SVC: ``K`` (n × n kernel matrix), ``y`` in {−1, +1}, ``C`` (per-sample upper
  bounds, ``inf`` for the hard margin) — the dual ``max 1ᵀα − ½αᵀQα``,
  ``0 ≤ αᵢ ≤ Cᵢ``, ``yᵀα = 0``, ``Qᵢⱼ = yᵢyⱼKᵢⱼ``, the intercept b free;
* ε-SVR: ``K``, ``z`` (real targets), ``epsilon``, ``C`` — the dual in β = a − â,
  ``max zᵀβ − ε‖β‖₁ − ½βᵀKβ``, ``−Cᵢ ≤ βᵢ ≤ Cᵢ``, ``1ᵀβ = 0``, with f = Kβ + b;
* one-class SVM: ``K``, ``nu`` — LIBSVM's scaled dual ``min ½αᵀKα``, ``0 ≤ αᵢ ≤ 1``,
  ``1ᵀα = νn``, with f = Kα − ρ (Schölkopf et al., 2001, multiplied through by νn).

The families are those that break solvers: duplicated points with opposite labels,
rank-deficient kernels (tiny γ, linear with d ≪ n), huge C (1e4–1e8), zero and
extreme sample weights (ratio 1e4), no free support vector (b only bounded), class
imbalance 1:100, unscaled features (entries ~1e4, offsets), the hard margin on
nearly inseparable data, and real data (heart_scale, breast_cancer, diabetes, an
a9a.t subsample where the shared data folder is present); for the one-class SVM also ν
near 0 and ν = 1, kernel entries tiny and huge, the narrow RBF (K ≈ I) and far outliers.
Every generator is seeded: the same arrays on every machine (up to the last bits of the
kernel products).

References
----------
S. Caron et al., qpbenchmark: benchmarks for quadratic programming solvers in
Python, https://github.com/qpsolvers/qpbenchmark (the test-set idea).
C.-C. Chang and C.-J. Lin, "LIBSVM: a library for support vector machines",
ACM TIST 2(3), 2011 (heart_scale, a9a).
B. Schölkopf, J. C. Platt, J. Shawe-Taylor, A. J. Smola and R. C. Williamson,
"Estimating the support of a high-dimensional distribution", Neural Computation 13(7),
2001 (the one-class SVM).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache, lru_cache, partial

import numpy as np
from scipy.spatial.distance import cdist

__all__ = ["Problem", "problems", "get_problem", "SUITES", "FAMILIES", "PROTOCOL",
           "Perturbation", "perturbation", "perturbed"]

#: the suites by name
SUITES = ("svc", "svr", "oneclass")
#: per suite, the names of what a solver returns: (coefficients, offset)
PROTOCOL = {"svc": ("alpha", "b"), "svr": ("beta", "b"), "oneclass": ("alpha", "rho")}
#: each family and what it does to a solver
FAMILIES = {
    "duplicates": "duplicated points with opposite labels (or targets): a singular Q, "
                  "ties in the working-set choice",
    "rank_deficient": "kernels of tiny numerical rank (RBF with tiny γ, linear with d ≪ n)",
    "huge_C": "C from 1e4 to 1e8: multipliers of that size, f = Kβ read to its rounding",
    "weights": "zero and extreme per-sample bounds (ratio 1e4)",
    "no_free_sv": "every support vector at a bound: b only bounded, not pinned",
    "imbalance": "classes 1:100",
    "unscaled": "features ~1e4 with offsets (kernel entries ~1e8)",
    "hard_margin": "C = inf on data separable by a hair",
    "epsilon": "ε = 0 (a − â not unique in a, â) and ε wider than the targets (β = 0)",
    "outliers": "heavy-tailed targets (svr), points far from the rest (oneclass): most "
                "multipliers at their bound",
    "nu": "ν near 0: Σα = νn carried by a few multipliers (below one: by free ones only)",
    "kernel_scale": "kernel entries ~1e-6 (f and ρ that small), the narrow RBF (K ≈ I: "
                    "every point on the boundary)",
    "real": "real data: heart_scale, breast_cancer, diabetes, a9a.t (where present)",
}
#: sizes: small n ≤ 500, medium n ≤ 5000
SMALL, MEDIUM = 500, 5000


@dataclass(frozen=True)
class Problem:
    """One named conformance problem.

    Parameters
    ----------
    name : str
        Unique, e.g. ``"svc-duplicates-rbf-300"`` (the pytest id).
    suite : {"svc", "svr", "oneclass"}
    family : str
        A key of :data:`FAMILIES`.
    n : int
        Samples.
    description : str
    make : callable
        ``make() -> dict`` of the arrays: ``K``, ``y``, ``C`` (svc), ``K``, ``z``,
        ``epsilon``, ``C`` (svr) or ``K``, ``nu`` (oneclass).  Seeded: deterministic.
    needs_shared_data : bool, default=False
        Built from the shared data folder (:func:`margin_opt.datasets.shared_data_dir`);
        absent from :func:`problems` where the folder is absent.
    """

    name: str
    suite: str
    family: str
    n: int
    description: str
    make: object = field(repr=False, compare=False)
    needs_shared_data: bool = False

    @property
    def size(self) -> str:
        """``"small"`` (n ≤ 500) or ``"medium"``."""
        return "small" if self.n <= SMALL else "medium"

    def arrays(self) -> dict:
        """The problem's arrays (computed once per process, the last few kept).

        Returns
        -------
        arrays : dict
            ``K`` ndarray of shape (n, n), ``y`` ndarray of shape (n,) in {−1, +1} and
            ``C`` ndarray of shape (n,) for the svc suite; ``K``, ``z`` of shape (n,),
            ``epsilon`` (float) and ``C`` for svr; ``K`` and ``nu`` (float) for
            oneclass; and what made K: ``X`` of shape
            (n, d), ``kernel`` ("linear" or "rbf") and ``gamma``.  Read-only arrays: a
            solver that writes into its input fails loudly instead of spoiling the next
            check.
        """
        return _arrays(self)

    def args(self) -> tuple:
        """The positional arguments of the solver call: ``(K, y, C)``,
        ``(K, z, epsilon, C)`` or ``(K, nu)``."""
        a = self.arrays()
        if self.suite == "oneclass":
            return a["K"], a["nu"]
        return (a["K"], a["y"], a["C"]) if self.suite == "svc" else \
            (a["K"], a["z"], a["epsilon"], a["C"])

    def __str__(self) -> str:
        return self.name


@lru_cache(maxsize=6)
def _arrays(problem: Problem) -> dict:
    out = problem.make()
    for v in out.values():
        if isinstance(v, np.ndarray):
            v.setflags(write=False)
    return out


# ---------------------------------------------------------------------- kernels
def _linear(X):
    K = X @ X.T
    return 0.5 * (K + K.T)


def _rbf(X, gamma):
    return np.exp(-gamma * cdist(X, X, "sqeuclidean"))


def _gamma_scale(X):
    """scikit-learn's gamma="scale": 1 / (d · Var X)."""
    return 1.0 / (X.shape[1] * X.var())


def _kernel(X, kernel, gamma=None) -> dict:
    """The kernel matrix K of X and what made it (X, the kernel's name and γ)."""
    X = np.asarray(X, dtype=float)
    if kernel == "linear":
        return {"K": _linear(X), "X": X, "kernel": "linear", "gamma": None}
    gamma = _gamma_scale(X) if gamma is None else float(gamma)
    return {"K": _rbf(X, gamma), "X": X, "kernel": "rbf", "gamma": gamma}


def _blobs(rng, n, d=2, sep=1.0, n_pos=None):
    n_pos = n // 2 if n_pos is None else n_pos
    y = np.r_[np.ones(n_pos), -np.ones(n - n_pos)]
    X = rng.standard_normal((n, d))
    X[:, 0] += sep * y
    return X, y


def _svc(G, y, C):
    C = np.broadcast_to(np.asarray(C, dtype=float), y.shape).copy()
    return {**G, "K": np.ascontiguousarray(G["K"]), "y": np.asarray(y, dtype=float), "C": C}


def _svr(G, z, epsilon, C):
    C = np.broadcast_to(np.asarray(C, dtype=float), z.shape).copy()
    return {**G, "K": np.ascontiguousarray(G["K"]), "z": np.asarray(z, dtype=float),
            "epsilon": float(epsilon), "C": C}


def _svc_duplicates(n, kernel, seed):
    rng = np.random.default_rng(seed)
    m = n - n // 5
    X, y = _blobs(rng, m, d=3, sep=1.0)
    dup = rng.choice(m, n - m, replace=False)
    return _svc(_kernel(np.r_[X, X[dup]], kernel), np.r_[y, -y[dup]], 1.0)


def _svc_rank(n, kernel, d, gamma_factor, seed, C=1.0):
    rng = np.random.default_rng(seed)
    X, y = _blobs(rng, n, d=d, sep=0.8)
    gamma = None if kernel == "linear" else gamma_factor * _gamma_scale(X)
    return _svc(_kernel(X, kernel, gamma), y, C)


def _svc_huge_C(n, kernel, C, seed):
    rng = np.random.default_rng(seed)
    X, y = _blobs(rng, n, d=2, sep=1.5)
    return _svc(_kernel(X, kernel), y, C)


def _svc_weights(n, kernel, mode, seed):
    rng = np.random.default_rng(seed)
    X, y = _blobs(rng, n, d=4, sep=1.0)
    if mode == "zero":
        C = np.where(rng.random(n) < 0.3, 0.0, 1.0)
    else:                                    # bounds 1e-2 and 1e2: ratio 1e4
        C = np.where(rng.random(n) < 0.5, 1e-2, 1e2)
    return _svc(_kernel(X, kernel), y, C)


def _svc_no_free(n, kernel, seed):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 5))
    y = np.r_[np.ones(n // 2), -np.ones(n - n // 2)]   # random labels, balanced
    return _svc(_kernel(X, kernel), y, 1e-3)


def _svc_imbalance(n_minor, kernel, seed, C=10.0, sep=2.0):
    rng = np.random.default_rng(seed)
    n = 101 * n_minor
    X, y = _blobs(rng, n, d=3, sep=sep, n_pos=n_minor)
    return _svc(_kernel(X, kernel), y, C)


def _svc_unscaled(n, kernel, seed):
    rng = np.random.default_rng(seed)
    X, y = _blobs(rng, n, d=3, sep=1.0)
    X = X * np.array([1e4, 1.0, 1e2]) + np.array([3e4, -1e3, 5e2])   # entries ~1e4, offsets
    K = _kernel(X, kernel, gamma=None)
    return _svc(K, y, 1.0 if kernel == "rbf" else 1e-6)


def _svc_hard(n, kernel, margin, seed):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((4 * n, 2))
    s = X[:, 0] + 0.5 * X[:, 1] ** 2 * (kernel == "rbf")
    keep = np.flatnonzero(np.abs(s) > margin)[:n]
    X, s = X[keep], s[keep]
    y = np.where(s > 0, 1.0, -1.0)
    gamma = 0.5 if kernel == "rbf" else None
    return _svc(_kernel(X, kernel, gamma), y, np.inf)


def _real_svc(name, kernel, n, seed, C=1.0):
    from ..datasets import load_dataset

    if name == "breast_cancer_raw":
        d = load_dataset("breast_cancer", standardize=False)
    else:
        d = load_dataset(name)
    X = d.X.toarray() if hasattr(d.X, "toarray") else np.asarray(d.X, dtype=float)
    y = np.where(d.y == np.unique(d.y)[0], -1.0, 1.0)
    if n < X.shape[0]:
        idx = np.sort(np.random.default_rng(seed).choice(X.shape[0], n, replace=False))
        X, y = X[idx], y[idx]
    return _svc(_kernel(X, kernel), y, C)


# ---------------------------------------------------------------------- svr data
def _sinc(rng, n, d=1, noise=0.1):
    X = rng.uniform(-3, 3, (n, d))
    z = np.sinc(X[:, 0]) + noise * rng.standard_normal(n)
    return X, z


def _svr_duplicates(n, kernel, seed):
    rng = np.random.default_rng(seed)
    m = n - n // 4
    X, z = _sinc(rng, m, d=2)
    dup = rng.choice(m, n - m, replace=False)
    return _svr(_kernel(np.r_[X, X[dup]], kernel), np.r_[z, z[dup] + 0.5], 0.05, 1.0)


def _svr_rank(n, kernel, d, gamma_factor, seed):
    rng = np.random.default_rng(seed)
    X, z = _sinc(rng, n, d=d)
    gamma = None if kernel == "linear" else gamma_factor * _gamma_scale(X)
    return _svr(_kernel(X, kernel, gamma), z, 0.05, 10.0)


def _svr_huge_C(n, kernel, C, seed):
    rng = np.random.default_rng(seed)
    X, z = _sinc(rng, n, d=2, noise=0.2)
    return _svr(_kernel(X, kernel), z, 0.1, C)


def _svr_weights(n, mode, seed):
    rng = np.random.default_rng(seed)
    X, z = _sinc(rng, n, d=2)
    C = (np.where(rng.random(n) < 0.3, 0.0, 1.0) if mode == "zero"
         else np.where(rng.random(n) < 0.5, 1e-2, 1e2))
    return _svr(_kernel(X, "rbf"), z, 0.05, C)


def _svr_epsilon(n, epsilon, seed):
    rng = np.random.default_rng(seed)
    X, z = _sinc(rng, n, d=2)
    return _svr(_kernel(X, "rbf"), z, epsilon, 1.0)


def _svr_outliers(n, kernel, seed):
    rng = np.random.default_rng(seed)
    X, z = _sinc(rng, n, d=2, noise=0.0)
    z = z + 0.3 * rng.standard_cauchy(n)
    return _svr(_kernel(X, kernel), z, 0.1, 1.0)


def _svr_unscaled(n, seed):
    rng = np.random.default_rng(seed)
    X, z = _sinc(rng, n, d=2)
    X = X * np.array([1e4, 1e2]) + np.array([2e4, -3e2])
    return _svr(_kernel(X, "rbf"), 1e3 * z + 5e3, 10.0, 1.0)


def _svr_real(name, kernel, n, seed, C=1.0, epsilon=0.1):
    from ..datasets import load_dataset

    d = load_dataset(name)
    X = d.X.toarray() if hasattr(d.X, "toarray") else np.asarray(d.X, dtype=float)
    z = np.asarray(d.y, dtype=float)
    if n < X.shape[0]:
        idx = np.sort(np.random.default_rng(seed).choice(X.shape[0], n, replace=False))
        X, z = X[idx], z[idx]
    return _svr(_kernel(X, kernel), z, epsilon, C)


def _svr_friedman(n, seed):
    from sklearn.datasets import make_friedman1

    X, z = make_friedman1(n, 5, noise=1.0, random_state=seed)
    return _svr(_kernel(X, "rbf"), (z - z.mean()) / z.std(), 0.1, 10.0)


# ---------------------------------------------------------------------- one-class data
def _oc(G, nu):
    return {**G, "K": np.ascontiguousarray(G["K"]), "nu": float(nu)}


def _oc_cloud(n, kernel, nu, seed, *, d=3, gamma_factor=1.0, scale=1.0, shift=0.0,
              n_dup=0, n_far=0):
    """A Gaussian cloud of n points (the last ``n_dup`` copies of others, ``n_far`` of
    them at distance 8 in random directions), times ``scale`` plus ``shift`` per feature."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n - n_dup - n_far, d))
    if n_far:
        u = rng.standard_normal((n_far, d))
        X = np.r_[X, 8.0 * u / np.linalg.norm(u, axis=1, keepdims=True)]
    if n_dup:
        X = np.r_[X, X[rng.choice(X.shape[0], n_dup, replace=False)]]
    X = X * np.asarray(scale, dtype=float) + np.asarray(shift, dtype=float)
    gamma = None if kernel == "linear" else gamma_factor * _gamma_scale(X)
    return _oc(_kernel(X, kernel, gamma), nu)


def _oc_real(name, kernel, n, nu, seed, gamma=None):
    from ..datasets import load_dataset

    d = load_dataset("breast_cancer", standardize=False) if name == "breast_cancer_raw" \
        else load_dataset(name)
    X = d.X.toarray() if hasattr(d.X, "toarray") else np.asarray(d.X, dtype=float)
    if n < X.shape[0]:
        X = X[np.sort(np.random.default_rng(seed).choice(X.shape[0], n, replace=False))]
    return _oc(_kernel(X, kernel, gamma), nu)


# ---------------------------------------------------------------------- the suites
def _svc_problems():
    P = partial(Problem, suite="svc")
    return [
        P(name="svc-duplicates-linear-200", family="duplicates", n=200,
          description="40 of 200 points duplicated with the opposite label, linear",
          make=partial(_svc_duplicates, 200, "linear", 1)),
        P(name="svc-duplicates-rbf-300", family="duplicates", n=300,
          description="60 of 300 points duplicated with the opposite label, RBF",
          make=partial(_svc_duplicates, 300, "rbf", 2)),
        P(name="svc-duplicates-rbf-1500", family="duplicates", n=1500,
          description="300 of 1500 points duplicated with the opposite label, RBF",
          make=partial(_svc_duplicates, 1500, "rbf", 3)),
        P(name="svc-rank-rbf-tinygamma-200", family="rank_deficient", n=200,
          description="RBF with γ = 1e-4 × scale: numerical rank ~5",
          make=partial(_svc_rank, 200, "rbf", 3, 1e-4, 4)),
        P(name="svc-rank-rbf-tinygamma-500", family="rank_deficient", n=500,
          description="RBF with γ = 1e-3 × scale, C = 100",
          make=partial(_svc_rank, 500, "rbf", 5, 1e-3, 5, 100.0)),
        P(name="svc-rank-linear-d2-400", family="rank_deficient", n=400,
          description="linear kernel, d = 2 ≪ n: rank 2",
          make=partial(_svc_rank, 400, "linear", 2, 1.0, 6)),
        P(name="svc-rank-linear-d1-300", family="rank_deficient", n=300,
          description="linear kernel, d = 1: rank 1, C = 10",
          make=partial(_svc_rank, 300, "linear", 1, 1.0, 7, 10.0)),
        P(name="svc-rank-linear-d3-2000", family="rank_deficient", n=2000,
          description="linear kernel, d = 3, n = 2000",
          make=partial(_svc_rank, 2000, "linear", 3, 1.0, 8)),
        P(name="svc-hugeC-linear-1e4", family="huge_C", n=200,
          description="overlapping blobs, linear, C = 1e4",
          make=partial(_svc_huge_C, 200, "linear", 1e4, 9)),
        P(name="svc-hugeC-rbf-1e4", family="huge_C", n=200,
          description="overlapping blobs, RBF, C = 1e4",
          make=partial(_svc_huge_C, 200, "rbf", 1e4, 10)),
        P(name="svc-hugeC-rbf-1e6", family="huge_C", n=150,
          description="overlapping blobs, RBF, C = 1e6",
          make=partial(_svc_huge_C, 150, "rbf", 1e6, 11)),
        P(name="svc-hugeC-linear-1e6", family="huge_C", n=100,
          description="overlapping blobs, linear, C = 1e6",
          make=partial(_svc_huge_C, 100, "linear", 1e6, 12)),
        P(name="svc-weights-zero-linear-300", family="weights", n=300,
          description="30 % of the bounds are 0 (points that must get α = 0), linear",
          make=partial(_svc_weights, 300, "linear", "zero", 13)),
        P(name="svc-weights-zero-rbf-300", family="weights", n=300,
          description="30 % of the bounds are 0, RBF",
          make=partial(_svc_weights, 300, "rbf", "zero", 14)),
        P(name="svc-weights-extreme-linear-300", family="weights", n=300,
          description="bounds 1e-2 and 1e2 (ratio 1e4), linear",
          make=partial(_svc_weights, 300, "linear", "extreme", 15)),
        P(name="svc-weights-extreme-rbf-400", family="weights", n=400,
          description="bounds 1e-2 and 1e2 (ratio 1e4), RBF",
          make=partial(_svc_weights, 400, "rbf", "extreme", 16)),
        P(name="svc-nofree-linear-200", family="no_free_sv", n=200,
          description="random balanced labels, C = 1e-3: every α at C, b only bounded",
          make=partial(_svc_no_free, 200, "linear", 17)),
        P(name="svc-nofree-rbf-300", family="no_free_sv", n=300,
          description="random balanced labels, RBF, C = 1e-3",
          make=partial(_svc_no_free, 300, "rbf", 18)),
        P(name="svc-nofree-rbf-2000", family="no_free_sv", n=2000,
          description="random balanced labels, RBF, C = 1e-3, n = 2000",
          make=partial(_svc_no_free, 2000, "rbf", 19)),
        P(name="svc-imbalance-linear-404", family="imbalance", n=404,
          description="4 positives against 400 negatives, overlapping, linear, C = 1",
          make=partial(_svc_imbalance, 4, "linear", 20, 1.0, 1.0)),
        P(name="svc-imbalance-rbf-404", family="imbalance", n=404,
          description="4 positives against 400 negatives, overlapping, RBF, C = 1",
          make=partial(_svc_imbalance, 4, "rbf", 21, 1.0, 1.0)),
        P(name="svc-imbalance-rbf-2020", family="imbalance", n=2020,
          description="20 positives against 2000 negatives, RBF, C = 10",
          make=partial(_svc_imbalance, 20, "rbf", 22)),
        P(name="svc-unscaled-linear-200", family="unscaled", n=200,
          description="features ~1e4 with offsets, linear (K ~1e9), C = 1e-6",
          make=partial(_svc_unscaled, 200, "linear", 23)),
        P(name="svc-unscaled-rbf-300", family="unscaled", n=300,
          description="features ~1e4 with offsets, RBF at gamma='scale' (one feature rules)",
          make=partial(_svc_unscaled, 300, "rbf", 24)),
        P(name="svc-hard-linear-200", family="hard_margin", n=200,
          description="C = inf, linearly separable with a gap of 1e-3",
          make=partial(_svc_hard, 200, "linear", 5e-4, 25)),
        P(name="svc-hard-linear-400", family="hard_margin", n=400,
          description="C = inf, linearly separable with a gap of 1e-2",
          make=partial(_svc_hard, 400, "linear", 5e-3, 26)),
        P(name="svc-hard-rbf-300", family="hard_margin", n=300,
          description="C = inf, a parabola boundary, RBF (γ = 0.5), gap 1e-2",
          make=partial(_svc_hard, 300, "rbf", 5e-3, 27)),
        P(name="svc-real-heart-rbf", family="real", n=270,
          description="heart_scale (LIBSVM's example), RBF γ = 1/13, C = 1",
          make=partial(_real_svc, "heart_scale", "rbf", 270, 0)),
        P(name="svc-real-heart-linear-C100", family="real", n=270,
          description="heart_scale, linear, C = 100",
          make=partial(_real_svc, "heart_scale", "linear", 270, 0, 100.0)),
        P(name="svc-real-breast-cancer-rbf", family="real", n=569,
          description="breast_cancer standardized, RBF, C = 10",
          make=partial(_real_svc, "breast_cancer", "rbf", 569, 0, 10.0)),
        P(name="svc-real-breast-cancer-raw-linear", family="real", n=300,
          description="breast_cancer raw features (up to ~4000, unscaled), linear, C = 1e-4",
          make=partial(_real_svc, "breast_cancer_raw", "linear", 300, 28, 1e-4)),
        P(name="svc-real-a9a-linear-2000", family="real", n=2000,
          description="a9a.t subsample (2000 of 16281), linear, C = 1",
          make=partial(_real_svc, "a9a.t", "linear", 2000, 29), needs_shared_data=True),
        P(name="svc-real-a9a-rbf-1000", family="real", n=1000,
          description="a9a.t subsample (1000 of 16281), RBF, C = 1",
          make=partial(_real_svc, "a9a.t", "rbf", 1000, 30), needs_shared_data=True),
    ]


def _svr_problems():
    P = partial(Problem, suite="svr")
    return [
        P(name="svr-duplicates-rbf-200", family="duplicates", n=200,
          description="50 of 200 points duplicated with targets moved by 0.5, RBF",
          make=partial(_svr_duplicates, 200, "rbf", 101)),
        P(name="svr-duplicates-linear-300", family="duplicates", n=300,
          description="75 of 300 points duplicated with targets moved by 0.5, linear",
          make=partial(_svr_duplicates, 300, "linear", 102)),
        P(name="svr-rank-rbf-tinygamma-300", family="rank_deficient", n=300,
          description="RBF with γ = 1e-4 × scale, C = 10",
          make=partial(_svr_rank, 300, "rbf", 2, 1e-4, 103)),
        P(name="svr-rank-linear-d1-400", family="rank_deficient", n=400,
          description="linear, d = 1, C = 10",
          make=partial(_svr_rank, 400, "linear", 1, 1.0, 104)),
        P(name="svr-hugeC-rbf-1e4", family="huge_C", n=200,
          description="noisy sinc, RBF, C = 1e4",
          make=partial(_svr_huge_C, 200, "rbf", 1e4, 105)),
        P(name="svr-hugeC-rbf-1e6", family="huge_C", n=150,
          description="noisy sinc, RBF, C = 1e6",
          make=partial(_svr_huge_C, 150, "rbf", 1e6, 106)),
        P(name="svr-hugeC-linear-1e4", family="huge_C", n=200,
          description="noisy sinc, linear, C = 1e4",
          make=partial(_svr_huge_C, 200, "linear", 1e4, 107)),
        P(name="svr-weights-zero-300", family="weights", n=300,
          description="30 % of the bounds are 0, RBF",
          make=partial(_svr_weights, 300, "zero", 108)),
        P(name="svr-weights-extreme-300", family="weights", n=300,
          description="bounds 1e-2 and 1e2 (ratio 1e4), RBF",
          make=partial(_svr_weights, 300, "extreme", 109)),
        P(name="svr-epsilon-zero-200", family="epsilon", n=200,
          description="ε = 0: a and â not unique, β is",
          make=partial(_svr_epsilon, 200, 0.0, 110)),
        P(name="svr-epsilon-wide-200", family="no_free_sv", n=200,
          description="ε wider than the targets' spread: β = 0, b only bounded",
          make=partial(_svr_epsilon, 200, 2.0, 111)),
        P(name="svr-outliers-rbf-300", family="outliers", n=300,
          description="Cauchy noise: most multipliers at their bound, RBF",
          make=partial(_svr_outliers, 300, "rbf", 112)),
        P(name="svr-outliers-linear-300", family="outliers", n=300,
          description="Cauchy noise, linear",
          make=partial(_svr_outliers, 300, "linear", 113)),
        P(name="svr-unscaled-rbf-300", family="unscaled", n=300,
          description="features ~1e4 with offsets, targets ~5e3 ± 1e3, RBF, ε = 10",
          make=partial(_svr_unscaled, 300, 114)),
        P(name="svr-real-diabetes-rbf", family="real", n=442,
          description="diabetes (standardized), RBF, C = 1",
          make=partial(_svr_real, "diabetes", "rbf", 442, 0)),
        P(name="svr-real-diabetes-linear-C100", family="real", n=442,
          description="diabetes (standardized), linear, C = 100",
          make=partial(_svr_real, "diabetes", "linear", 442, 0, 100.0)),
        P(name="svr-friedman-rbf-1500", family="real", n=1500,
          description="Friedman #1 (scikit-learn's generator), RBF, C = 10",
          make=partial(_svr_friedman, 1500, 115)),
    ]


def _oneclass_problems():
    P = partial(Problem, suite="oneclass")
    unscaled = dict(scale=(1e4, 1.0, 1e2), shift=(3e4, -1e3, 5e2))
    return [
        P(name="oneclass-duplicates-rbf-300", family="duplicates", n=300,
          description="60 of 300 points duplicated, RBF, ν = 0.2",
          make=partial(_oc_cloud, 300, "rbf", 0.2, 201, n_dup=60)),
        P(name="oneclass-duplicates-linear-200", family="duplicates", n=200,
          description="50 of 200 points duplicated, linear (cloud off the origin), ν = 0.3",
          make=partial(_oc_cloud, 200, "linear", 0.3, 202, shift=2.0, n_dup=50)),
        P(name="oneclass-rank-rbf-tinygamma-300", family="rank_deficient", n=300,
          description="RBF with γ = 1e-4 × scale: numerical rank ~4, ν = 0.3",
          make=partial(_oc_cloud, 300, "rbf", 0.3, 203, gamma_factor=1e-4)),
        P(name="oneclass-rank-linear-d2-400", family="rank_deficient", n=400,
          description="linear kernel, d = 2 ≪ n: rank 2, ν = 0.5",
          make=partial(_oc_cloud, 400, "linear", 0.5, 204, d=2, shift=2.0)),
        P(name="oneclass-nu-tiny-rbf-300", family="nu", n=300,
          description="ν = 1e-3: Σα = νn = 0.3, below one multiplier's bound, RBF",
          make=partial(_oc_cloud, 300, "rbf", 1e-3, 205)),
        P(name="oneclass-nu-small-rbf-500", family="nu", n=500,
          description="ν = 0.01: Σα = 5, RBF",
          make=partial(_oc_cloud, 500, "rbf", 0.01, 206)),
        P(name="oneclass-nu-tiny-linear-200", family="nu", n=200,
          description="ν = 2e-3: Σα = 0.4, linear",
          make=partial(_oc_cloud, 200, "linear", 2e-3, 207, shift=2.0)),
        P(name="oneclass-nu-one-rbf-200", family="no_free_sv", n=200,
          description="ν = 1: every α = 1, ρ only bounded (ρ ≥ max Kα), RBF",
          make=partial(_oc_cloud, 200, "rbf", 1.0, 208)),
        P(name="oneclass-nu-one-linear-200", family="no_free_sv", n=200,
          description="ν = 1: every α = 1, ρ only bounded, linear",
          make=partial(_oc_cloud, 200, "linear", 1.0, 209, shift=2.0)),
        P(name="oneclass-scale-tiny-linear-200", family="kernel_scale", n=200,
          description="features ~1e-3: kernel entries ~1e-5, ν = 0.2, linear",
          make=partial(_oc_cloud, 200, "linear", 0.2, 210, scale=1e-3, shift=2e-3)),
        P(name="oneclass-scale-narrow-rbf-300", family="kernel_scale", n=300,
          description="RBF with γ = 1e3 × scale: K ≈ I, every point on the boundary, ν = 0.3",
          make=partial(_oc_cloud, 300, "rbf", 0.3, 211, gamma_factor=1e3)),
        P(name="oneclass-unscaled-linear-200", family="unscaled", n=200,
          description="features ~1e4 with offsets, linear (K ~1e9), ν = 0.2",
          make=partial(_oc_cloud, 200, "linear", 0.2, 212, **unscaled)),
        P(name="oneclass-unscaled-rbf-300", family="unscaled", n=300,
          description="features ~1e4 with offsets, RBF at gamma='scale' (one feature rules), "
                      "ν = 0.1",
          make=partial(_oc_cloud, 300, "rbf", 0.1, 213, **unscaled)),
        P(name="oneclass-outliers-rbf-300", family="outliers", n=300,
          description="15 points at distance 8 from a unit cloud, RBF, ν = 0.1",
          make=partial(_oc_cloud, 300, "rbf", 0.1, 214, n_far=15)),
        P(name="oneclass-outliers-linear-300", family="outliers", n=300,
          description="15 points at distance 8 from a cloud off the origin, linear, ν = 0.05",
          make=partial(_oc_cloud, 300, "linear", 0.05, 215, shift=2.0, n_far=15)),
        P(name="oneclass-real-breast-cancer-rbf", family="real", n=569,
          description="breast_cancer standardized, RBF at gamma='scale', ν = 0.5 (margin-opt "
                      "verify --model oneclass)",
          make=partial(_oc_real, "breast_cancer", "rbf", 569, 0.5, 0)),
        P(name="oneclass-real-heart-rbf", family="real", n=270,
          description="heart_scale, RBF γ = 1/13, ν = 0.1",
          make=partial(_oc_real, "heart_scale", "rbf", 270, 0.1, 0, 1 / 13)),
        P(name="oneclass-real-breast-cancer-raw-linear", family="real", n=300,
          description="breast_cancer raw features (up to ~4000), linear (K ~1e7), ν = 0.05",
          make=partial(_oc_real, "breast_cancer_raw", "linear", 300, 0.05, 216)),
    ]


@cache
def _all() -> dict:
    out = {}
    for p in _svc_problems() + _svr_problems() + _oneclass_problems():
        if p.name in out:     # pragma: no cover - a typo in the table
            raise RuntimeError(f"two conformance problems are named {p.name!r}")
        out[p.name] = p
    return out


def problems(suite: str = "svc", *, size=None, family=None, names=None) -> list:
    """The problems of a suite, e.g. as pytest parameters.

    Parameters
    ----------
    suite : {"svc", "svr", "oneclass"}, default="svc"
    size : {"small", "medium"}, optional
        Only this size (small: n ≤ 500; medium: n ≤ 5000).
    family : str or sequence of str, optional
        Only these families (:data:`FAMILIES`).
    names : sequence of str, optional
        Only these problems, in this order.

    Returns
    -------
    problems : list of Problem
        Their ``str`` is their name, so ``pytest.mark.parametrize("problem",
        problems("svc"), ids=str)`` names each test case.  Problems built from the
        shared data folder (a9a.t) are left out where it is absent.

    Raises
    ------
    ValueError
        An unknown suite, size, family or name.

    Examples
    --------
    >>> import pytest
    >>> from margin_opt.testing import problems, check
    >>> @pytest.mark.parametrize("problem", problems("svc", size="small"), ids=str)
    ... def test_my_solver(problem):
    ...     alpha, b = my_solver(*problem.args())
    ...     check(problem, alpha, b)
    """
    from ..datasets import shared_data_dir

    if suite not in SUITES:
        raise ValueError(f"suite must be one of {SUITES}, got {suite!r}.")
    if size not in (None, "small", "medium"):
        raise ValueError(f"size must be 'small', 'medium' or None, got {size!r}.")
    fams = None if family is None else ({family} if isinstance(family, str) else set(family))
    if fams is not None and fams - set(FAMILIES):
        raise ValueError(f"unknown families {sorted(fams - set(FAMILIES))}; choose from "
                         f"{sorted(FAMILIES)}.")
    shared = shared_data_dir() is not None and (shared_data_dir() / "a9a.t").is_file()
    pool = [p for p in _all().values() if p.suite == suite
            and (shared or not p.needs_shared_data)]
    if names is not None:
        by = {p.name: p for p in pool}
        missing = [n for n in names if n not in by]
        if missing:
            raise ValueError(f"unknown {suite} problems {missing}; see "
                             "margin_opt.testing.problems(suite).")
        pool = [by[n] for n in names]
    return [p for p in pool if (size is None or p.size == size)
            and (fams is None or p.family in fams)]


def get_problem(name: str) -> Problem:
    """The problem of this name (any suite).

    Raises
    ------
    ValueError
        No such problem.
    """
    try:
        return _all()[name]
    except KeyError:
        raise ValueError(f"no conformance problem named {name!r}.") from None


# ---------------------------------------------------------------------- perturbed instances
@dataclass(frozen=True)
class Perturbation:
    """How a perturbed instance was made from its problem: K' = s·K[π, π], C' = C[π] / s,
    y' = σ·y[π] (svr: z' = σ·z[π]), with s a power of two and σ = ±1; oneclass: K' =
    s·K[π, π] only (ν and the box 0 ≤ α ≤ 1 as they are, σ = 1).

    The optimum maps exactly: α'* = α*[π] / s (svr: β'* = σ·β*[π] / s), b'* = σ·b*, the
    dual objective D'* = D* / s; oneclass: α'* = α*[π], ρ'* = s·ρ*, D'* = s·D*.  Every
    operation is exact in floating point (a
    permutation, a power of two, a sign), so the instance is as hard as its problem for
    every solver, single precision included; what changes is every array a solver
    could look its answer up by.

    Attributes
    ----------
    permutation : ndarray of int of shape (n,)
    scale : float
    sign : float
    """

    permutation: np.ndarray = field(repr=False, compare=False)
    scale: float
    sign: float


def perturbation(problem: Problem, seed: int) -> Perturbation:
    """The perturbation of ``problem`` drawn from ``seed`` (deterministic)."""
    rng = np.random.default_rng([int(seed), problem.n])
    pi, scale, sign = (rng.permutation(problem.n), 2.0 ** int(rng.integers(-2, 3)),
                       float(rng.choice([-1.0, 1.0])))
    return Perturbation(pi, scale, 1.0 if problem.suite == "oneclass" else sign)


def _perturbed_arrays(problem: Problem, seed: int) -> dict:
    a, p = problem.arrays(), perturbation(problem, seed)
    pi, s = p.permutation, p.scale
    K = np.ascontiguousarray(s * a["K"][np.ix_(pi, pi)])
    out = {"K": K, "X": K, "kernel": "precomputed", "gamma": None}
    if problem.suite == "oneclass":
        return {**out, "nu": a["nu"]}
    out["C"] = a["C"][pi] / s
    if problem.suite == "svc":
        out["y"] = p.sign * a["y"][pi]
    else:
        out.update(z=p.sign * a["z"][pi], epsilon=a["epsilon"])
    return out


def perturbed(problem: Problem, seed: int) -> Problem:
    """A perturbed instance of ``problem`` (:class:`Perturbation`), as a problem of its
    own, named ``"<name>~<seed>"``: what :func:`~margin_opt.testing.run_conformance`
    grades by default, so that a solver that looks its answers up (the stored
    references are public) cannot pass without solving.

    Parameters
    ----------
    problem : Problem
    seed : int

    Returns
    -------
    Problem
        Its arrays are ``K'``, ``y'`` (``z'``), ``C'`` (and ``epsilon``), or ``K'`` and
        ``nu``, with the kernel "precomputed" (``X`` is ``K'``).
    """
    return Problem(f"{problem.name}~{int(seed)}", problem.suite, problem.family, problem.n,
                   problem.description, partial(_perturbed_arrays, problem, int(seed)),
                   problem.needs_shared_data)
