"""Shared fixtures: small real data sets and the shared data folder."""

import numpy as np
import pytest

from margin_opt.datasets import load_dataset, shared_data_dir


@pytest.fixture(scope="session")
def breast_cancer():
    return load_dataset("breast_cancer")


@pytest.fixture(scope="session")
def breast_cancer_raw():
    """scikit-learn's breast cancer data, features unscaled (0.001 to 4000), y in {0, 1}."""
    from sklearn.datasets import load_breast_cancer

    return load_breast_cancer(return_X_y=True)


@pytest.fixture(scope="session")
def heart_scale():
    return load_dataset("heart_scale")      # ships with the package (LIBSVM's example set)


@pytest.fixture(scope="session")
def a9a():
    if shared_data_dir() is None or not (shared_data_dir() / "a9a.t").exists():
        pytest.skip("../shared/data/a9a.t is absent (a fresh clone has no shared data)")
    return load_dataset("a9a.t")


@pytest.fixture()
def separable():
    """Two Gaussian blobs far apart: linearly separable."""
    rng = np.random.default_rng(0)
    X = np.vstack([rng.normal(-3, 1, (20, 2)), rng.normal(3, 1, (20, 2))])
    y = np.r_[-np.ones(20), np.ones(20)]
    return X, y


@pytest.fixture(scope="session")
def lecture_iris():
    """The lecture notes' rows: iris rows 0, 4, 8, ..., sepal length and width, setosa = −1."""
    iris = load_dataset("iris-binary")
    return iris.X[::4, :2], iris.y[::4]


@pytest.fixture(scope="session")
def xor():
    """XOR on the unit square's corners: (0, 0), (1, 1) are −1; (0, 1), (1, 0) are +1."""
    return np.array([[0.0, 0.0], [1.0, 1.0], [0.0, 1.0], [1.0, 0.0]]), \
        np.array([-1.0, -1.0, 1.0, 1.0])
