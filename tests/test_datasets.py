import numpy as np
import pytest
from sklearn.datasets import dump_svmlight_file, load_breast_cancer

from margin_opt.datasets import load_dataset


def test_builtins():
    d = load_dataset("breast_cancer")
    assert d.X.shape == (569, 30)
    np.testing.assert_allclose(d.X.mean(axis=0), 0, atol=1e-12)
    iris = load_dataset("iris-binary")
    assert (iris.y == -1).sum() == 50 and (iris.y == 1).sum() == 100
    diab = load_dataset("diabetes")
    assert diab.X.shape == (442, 10) and abs(diab.y.std() - 1) < 1e-12


def test_files(tmp_path):
    raw = load_breast_cancer()
    p = tmp_path / "bc.svm"
    dump_svmlight_file(raw.data[:50], raw.target[:50], str(p))
    d = load_dataset(str(p))
    np.testing.assert_allclose(np.asarray(d.X.todense() if hasattr(d.X, "todense") else d.X),
                               raw.data[:50], rtol=1e-6)
    c = tmp_path / "bc.csv"
    np.savetxt(c, np.c_[raw.data[:20], raw.target[:20]], delimiter=",")
    d = load_dataset(str(c))
    assert d.X.shape == (20, 30) and set(d.y) <= {0.0, 1.0}
    with pytest.raises(FileNotFoundError, match="no such file: .*missing.svm; pass one of"):
        load_dataset(str(tmp_path / "missing.svm"))
    with pytest.raises(FileNotFoundError, match="no data set 'missing'"):
        load_dataset("missing")


def test_shared(heart_scale, a9a):
    assert heart_scale.X.shape == (270, 13)
    assert a9a.X.shape == (16281, 123)
