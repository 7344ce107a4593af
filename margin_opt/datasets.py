"""Real data sets that need no network, and loaders for svmlight and CSV files.

Built-in names (from :mod:`sklearn.datasets`, shipped with scikit-learn):

- ``breast_cancer``: Wisconsin diagnostic, 569 × 30, malignant vs benign,
  features standardized.
- ``iris-binary``: iris, 150 × 4, setosa (label −1) vs the rest (+1).
- ``diabetes``: 442 × 10 regression, features and target standardized.

Shipped with margin_opt (package data in ``margin_opt/data``):

- ``heart_scale``: LIBSVM's example set (Statlog Heart, 270 × 13, scaled to
  [−1, 1], labels ±1), copied from the LIBSVM distribution under its licence
  (``margin_opt/data/LICENSE-LIBSVM``).  The packaged copy is always used for this
  name, so LIBSVM's canonical run (``svm-train heart_scale``: C = 1, RBF γ = 1/13,
  obj = −100.877288, nSV = 132) is reproducible from a fresh clone or a plain
  install; see :func:`packaged_data_path`.

Files in the shared data folder (see :func:`shared_data_dir`) are found by name,
e.g. ``a9a.t`` (LIBSVM's test split of the Adult data, 16281 × 123, sparse).  That
folder is ``$MARGIN_OPT_DATA`` when the environment variable is set to a folder,
otherwise ``../shared/data`` beside the project.  ``a9a.t`` is not shipped; to use it,
download it from LIBSVM's data page and point ``MARGIN_OPT_DATA`` at its folder::

    mkdir -p ~/margin_opt_data && cd ~/margin_opt_data
    curl -O https://www.csie.ntu.edu.tw/~cjlin/libsvmtools/datasets/binary/a9a.t
    export MARGIN_OPT_DATA=~/margin_opt_data

Any path to an svmlight file or a CSV file (last column the label) is accepted as
well.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from sklearn import datasets as skd
from sklearn.preprocessing import StandardScaler

__all__ = ["make_text_like",
           "Dataset", "load_dataset", "shared_data_dir", "packaged_data_path", "BUILTIN",
           "PACKAGED"]

BUILTIN = ("breast_cancer", "iris-binary", "diabetes")

#: Files shipped in ``margin_opt/data`` (package data).
PACKAGED = ("heart_scale",)

#: Known svmlight files and their feature counts (LIBSVM's distribution).
_SVMLIGHT_FEATURES = {"heart_scale": 13, "a9a.t": 123, "a9a": 123}


@dataclass(frozen=True)
class Dataset:
    """A loaded data set.

    Attributes
    ----------
    X : {ndarray, sparse matrix} of shape (n_samples, n_features)
    y : ndarray of shape (n_samples,)
        Labels (classification) or targets (regression).
    name : str
    description : str
    """

    X: object
    y: np.ndarray
    name: str
    description: str = ""

    def __repr__(self) -> str:
        """The name, the shapes and the targets in one line, no arrays."""
        kind = "sparse" if hasattr(self.X, "tocsr") else type(self.X).__name__
        y = np.asarray(self.y)
        values = np.unique(y) if y.size else y
        if y.dtype.kind in "fc" and values.size > 10:
            what = f"targets in [{y.min():.4g}, {y.max():.4g}]"
        else:
            what = f"{values.size} classes {values[:6].tolist()}" + (
                " …" if values.size > 6 else "")
        desc = f", {self.description[:60]!r}" if self.description else ""
        return (f"Dataset({self.name!r}: X {kind} {np.shape(self.X)} "
                f"{getattr(self.X, 'dtype', '')}, y {y.shape}, {what}{desc})")


def shared_data_dir() -> Path | None:
    """The folder of shared real data, or None when it is absent.

    Looked up in the environment variable ``MARGIN_OPT_DATA`` (when it names an
    existing folder), then ``../shared/data`` from the project root (the folder
    holding ``pyproject.toml``) and from the working directory.  Files shipped
    with the package (``heart_scale``) do not need it.

    Returns
    -------
    path : pathlib.Path or None
    """
    candidates = []
    if os.environ.get("MARGIN_OPT_DATA"):
        candidates.append(Path(os.environ["MARGIN_OPT_DATA"]))
    root = Path(__file__).resolve().parent.parent
    candidates += [root.parent / "shared" / "data", Path.cwd().parent / "shared" / "data"]
    for c in candidates:
        if c.is_dir():
            return c
    return None


def packaged_data_path(name: str) -> Path:
    """The path of a data file shipped with margin_opt.

    Parameters
    ----------
    name : str
        One of :data:`PACKAGED` (``"heart_scale"``).

    Returns
    -------
    path : pathlib.Path
        The file inside the installed package (``margin_opt/data/<name>``).

    Raises
    ------
    ValueError
        If ``name`` is not shipped with the package.
    FileNotFoundError
        If the installation lacks the file (a build without package data).
    """
    if name not in PACKAGED:
        raise ValueError(f"{name!r} is not shipped with margin_opt; shipped: {PACKAGED}. "
                         "Other files are found in the shared data folder (MARGIN_OPT_DATA).")
    path = Path(__file__).resolve().parent / "data" / name
    if not path.is_file():
        raise FileNotFoundError(f"{path} is missing: this installation lacks margin_opt's "
                                "package data; reinstall with `python -m pip install .`.")
    return path


def _standardize(X):
    return StandardScaler().fit_transform(X)


def load_dataset(name: str, *, standardize: bool | None = None) -> Dataset:
    """Load a built-in data set, a shared file by name, or a file by path.

    Parameters
    ----------
    name : str
        ``"breast_cancer"``, ``"iris-binary"``, ``"diabetes"``, ``"heart_scale"``
        (the packaged copy, :func:`packaged_data_path`), the name of a file in
        :func:`shared_data_dir` (e.g. ``"a9a.t"``), or a path to an svmlight file
        or a ``.csv`` file whose last column is the label.  An existing path is read
        first, so a file named ``heart_scale`` in the working directory wins.
    standardize : bool, optional
        Scale features to zero mean and unit variance.  Default: True for
        ``breast_cancer`` and ``diabetes`` (whose target is standardized too),
        False otherwise (LIBSVM's files are already scaled).  Sparse data is
        scaled without centering.

    Returns
    -------
    dataset : Dataset

    Raises
    ------
    FileNotFoundError
        If ``name`` is neither built in nor an existing file.
    ValueError
        If the file cannot be parsed as svmlight or CSV, or is a directory.
    """
    if name == "breast_cancer":
        d = skd.load_breast_cancer()
        X = _standardize(d.data) if standardize in (None, True) else d.data
        return Dataset(X, d.target.astype(float), name,
                       "Wisconsin breast cancer (569 × 30), 0 = malignant, 1 = benign")
    if name == "iris-binary":
        d = skd.load_iris()
        y = np.where(d.target == 0, -1.0, 1.0)
        X = _standardize(d.data) if standardize else d.data
        return Dataset(X, y, name, "iris (150 × 4): setosa = −1, versicolor/virginica = +1")
    if name == "diabetes":
        d = skd.load_diabetes()
        X, y = d.data, d.target.astype(float)
        if standardize in (None, True):
            X = _standardize(X)
            y = (y - y.mean()) / y.std()
        return Dataset(X, y, name, "diabetes regression (442 × 10), target standardized")
    path = Path(name)
    if name in PACKAGED and not path.exists():
        path = packaged_data_path(name)
    if not path.exists():
        shared = shared_data_dir()
        if shared is not None and (shared / name).exists():
            path = shared / name
        else:
            what = (f"no such file: {name}" if path.suffix or os.sep in name or "/" in name
                    else f"no data set {name!r}")
            raise FileNotFoundError(
                f"{what}; pass one of the built-in names {', '.join(BUILTIN + PACKAGED)}, a "
                f"file in the shared data folder ({shared or 'MARGIN_OPT_DATA, unset here'}), "
                "or the path of an svmlight file or of a CSV file (.csv, the label in the "
                "last column).")
    if path.is_dir():
        raise ValueError(f"{str(path)!r} is a directory; pass a data file (svmlight or CSV) or "
                         f"a built-in name ({', '.join(BUILTIN)}).")
    if not path.is_file():          # a FIFO, socket or device: reading it may block forever
        raise ValueError(f"{str(path)!r} is not a regular file (a FIFO, socket or device); "
                         "pass a data file (svmlight or CSV): e.g. save the stream to a file "
                         "first.")
    if path.stat().st_size == 0:
        raise ValueError(f"{str(path)!r} is empty: it holds no samples; pass a data file with "
                         "one sample per line (svmlight, or CSV with the label last).")
    return _load_file(path, standardize=bool(standardize))


def _load_file(path: Path, *, standardize: bool) -> Dataset:
    if path.suffix.lower() == ".csv":
        X, y = _read_csv(path)
    else:
        from sklearn.datasets import load_svmlight_file

        n_features = _SVMLIGHT_FEATURES.get(path.name)
        try:
            X, y = load_svmlight_file(str(path), n_features=n_features)
        except ValueError as exc:
            raise ValueError(f"could not read {path} as an svmlight file ({exc}); "
                             "pass a .csv file with the label in the last column "
                             "or a file in svmlight format.") from None
        if X.shape[0] == 0:
            raise ValueError(f"{str(path)!r} holds no samples (no data line in svmlight "
                             "format); pass a file with one sample per line.")
        if X.nnz > 0.5 * X.shape[0] * X.shape[1]:
            X = X.toarray()
    if standardize:
        X = (StandardScaler(with_mean=not hasattr(X, "tocsr")).fit_transform(X))
    desc = f"{path} ({X.shape[0]} × {X.shape[1]})"
    return Dataset(X, y if y.dtype.kind in "UO" else np.asarray(y, dtype=float), path.name,
                   desc)


def _read_csv(path: Path):
    """(X, y) of a CSV file: numeric features, the label in the last column (numbers, or
    strings kept as strings, e.g. "benign"/"malignant"); a first row that is not numeric
    is a header.

    Raises
    ------
    ValueError
        Not a text CSV file (binary content), rows of unequal length, fewer than two
        columns, or a feature that is not a number.
    """
    import csv

    try:
        with open(path, newline="", encoding="utf-8") as f:
            rows = [r for r in csv.reader(f) if any(c.strip() for c in r)]
    except (UnicodeDecodeError, csv.Error) as exc:
        raise ValueError(f"could not read {path} as a CSV file: it is not text "
                         f"({type(exc).__name__}); pass a text file of comma-separated "
                         "numbers with the label in the last column, or an svmlight "
                         "file.") from None
    if rows and not _numbers(rows[0][:-1]):
        rows = rows[1:]                   # a header
    if not rows:
        raise ValueError(f"{str(path)!r} holds no samples (no data row); pass a CSV file with "
                         "one sample per row, the label in the last column.")
    widths = {len(r) for r in rows}
    if not rows or len(widths) != 1 or widths.pop() < 2:
        raise ValueError(f"could not read {path} as a CSV file: it needs rows of equal "
                         "length with at least one feature and the label in the last "
                         f"column (rows of {sorted({len(r) for r in rows})} values).")
    for i, r in enumerate(rows):
        if not _numbers(r[:-1]):
            raise ValueError(f"could not read {path} as a CSV file: row {i + 1} has a "
                             f"feature that is not a number ({r[:-1]!r:.80}); the features "
                             "must be numbers, the label in the last column.")
    X = np.array([[float(v) for v in r[:-1]] for r in rows])
    labels = [r[-1].strip() for r in rows]
    y = np.array([float(v) for v in labels]) if _numbers(labels) else np.array(labels)
    return X, y


def _numbers(values) -> bool:
    try:
        [float(v) for v in values]
    except ValueError:
        return False
    return True


def make_text_like(n_samples=100_000, n_features=20_000, nnz_per_row=40, *, flip=0.03,
                   n_classes=2, regression=False, zipf=1.1, random_state=0):
    """A deterministic sparse, text-like data set with a planted linear rule.

    Each row has a Poisson(``nnz_per_row``) number of term draws (at least one) from
    power-law column frequencies (column j drawn with probability ∝ (j + 1)^(−zipf),
    as word frequencies), values 1 + log(count) (sublinear tf), rows scaled to unit
    Euclidean norm.  The labels follow a planted rule: sign(xᵀw*) (``n_classes=2``),
    argmaxₖ xᵀw*ₖ (more classes), with a fraction ``flip`` of them replaced by another
    class at random; with ``regression`` the target is xᵀw* plus Gaussian noise of
    0.1 times its standard deviation.

    Parameters
    ----------
    n_samples, n_features, nnz_per_row : int
    flip : float, default=0.03
    n_classes : int, default=2
    regression : bool, default=False
    zipf : float, default=1.1
    random_state : int, default=0

    Returns
    -------
    X : csr_matrix of shape (n_samples, n_features)
        float64, int32 indices, sorted.
    y : ndarray of shape (n_samples,)
        Labels 0..n_classes−1 (int), or real targets.
    """
    import scipy.sparse as sp

    rng = np.random.default_rng(random_state)
    counts = np.maximum(1, rng.poisson(nnz_per_row, n_samples))
    prob = (np.arange(1, n_features + 1, dtype=float)) ** (-zipf)
    prob /= prob.sum()
    cols = rng.permutation(n_features)[rng.choice(n_features, int(counts.sum()), p=prob)]
    rows = np.repeat(np.arange(n_samples), counts)
    X = sp.csr_matrix((np.ones(cols.size), (rows, cols)), shape=(n_samples, n_features))
    X.sum_duplicates()
    X.data = 1.0 + np.log(X.data)
    norms = np.sqrt(np.asarray(X.multiply(X).sum(axis=1)).ravel())
    X = sp.csr_matrix(sp.diags(1.0 / norms) @ X)
    X.sort_indices()
    X.indices = X.indices.astype(np.int32)
    X.indptr = X.indptr.astype(np.int32)
    k = 1 if regression or n_classes == 2 else n_classes
    W = rng.standard_normal((n_features, k))
    score = np.asarray(X @ W)
    if regression:
        f = score[:, 0]
        return X, f + 0.1 * f.std() * rng.standard_normal(n_samples)
    y = (score[:, 0] > 0).astype(int) if n_classes == 2 else score.argmax(axis=1)
    flipped = rng.random(n_samples) < flip
    y[flipped] = (y[flipped] + rng.integers(1, n_classes, flipped.sum())) % n_classes
    return X, y
