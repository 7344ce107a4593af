"""Platt scaling (Lin–Lin–Weng), pairwise coupling (Wu–Lin–Weng) and SVC probabilities."""

import cvxpy as cp
import numpy as np
import pytest
from scipy.optimize import minimize
from sklearn.datasets import load_breast_cancer, load_iris
from sklearn.metrics import log_loss
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC as SkSVC

from margin_opt import SVC
from margin_opt.calibration import pairwise_coupling, sigmoid_fit, sigmoid_loss, sigmoid_predict

# scikit-learn 1.9 deprecates SVC(probability=True) (for CalibratedClassifierCV); it is
# still LIBSVM's procedure, the reference here
pytestmark = pytest.mark.filterwarnings("ignore:.*probab:FutureWarning")


def _sklearn_proba(**kw):
    return SkSVC(probability=True, **kw)


def test_sigmoid_fit_is_the_maximum_likelihood():
    rng = np.random.default_rng(0)
    f = rng.normal(size=300)
    y = np.where(rng.random(300) < 1 / (1 + np.exp(-3 * f + 0.5)), 1, -1)
    A, B = sigmoid_fit(f, y)
    n_pos, n_neg = np.sum(y > 0), np.sum(y < 0)
    t = np.where(y > 0, (n_pos + 1) / (n_pos + 2), 1 / (n_neg + 2))
    ref = minimize(lambda v: sigmoid_loss(v[0], v[1], f, t), [0.0, 0.0], method="BFGS",
                   options={"gtol": 1e-10})
    np.testing.assert_allclose([A, B], ref.x, atol=1e-5)
    assert A < 0
    p = sigmoid_predict(np.array([-1e4, 0.0, 1e4]), A, B)   # no overflow at the extremes
    assert p[0] < 1e-12 and p[2] > 1 - 1e-12 and np.all(np.isfinite(p))


def test_pairwise_coupling_solves_method_2():
    rng = np.random.default_rng(1)
    k, n = 4, 5
    r = np.clip(rng.random((n, k, k)), 0.05, 0.95)
    r = np.triu(r, 1) + np.tril(1 - np.swapaxes(r, 1, 2), -1)
    p = pairwise_coupling(r)
    np.testing.assert_allclose(p.sum(axis=1), 1.0)
    for s in range(n):
        q = cp.Variable(k)
        terms = [r[s, j, i] * q[i] - r[s, i, j] * q[j] for i in range(k) for j in range(k)
                 if i != j]
        prob = cp.Problem(cp.Minimize(sum(cp.square(t) for t in terms)), [cp.sum(q) == 1, q >= 0])
        prob.solve(solver="CLARABEL")
        np.testing.assert_allclose(p[s], q.value, atol=1e-6)
    two = pairwise_coupling(np.array([[[0.0, 0.3], [0.7, 0.0]]]))
    np.testing.assert_allclose(two, [[0.3, 0.7]])


def test_breast_cancer_log_loss_within_10_percent_of_libsvm():
    X, y = load_breast_cancer(return_X_y=True)
    Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.3, random_state=0, stratify=y)
    sc = StandardScaler().fit(Xtr)
    Xtr, Xte = sc.transform(Xtr), sc.transform(Xte)
    ours = SVC(probability=True, random_state=0).fit(Xtr, ytr)
    ref = _sklearn_proba(random_state=0).fit(Xtr, ytr)
    ll_ours, ll_ref = log_loss(yte, ours.predict_proba(Xte)), log_loss(yte, ref.predict_proba(Xte))
    assert ll_ours <= 1.1 * ll_ref
    np.testing.assert_allclose(ours.predict_log_proba(Xte), np.log(ours.predict_proba(Xte)))
    # LIBSVM's sign convention: A < 0 on the values positive for classes_[0]
    assert ours.probA_.shape == (1,) and np.sign(ours.probA_) == np.sign(ref.probA_)


def test_iris_probabilities_close_to_libsvm():
    X, y = load_iris(return_X_y=True)
    ours = SVC(gamma=0.5, probability=True, random_state=0).fit(X, y)
    ref = _sklearn_proba(gamma=0.5, random_state=0).fit(X, y)
    p = ours.predict_proba(X)
    assert p.shape == (150, 3) and np.allclose(p.sum(axis=1), 1.0)
    assert np.abs(p - ref.predict_proba(X)).max() < 0.05
    assert ours.probA_.shape == ours.probB_.shape == (3,)


def test_proba_only_with_probability():
    X, y = load_iris(return_X_y=True)
    clf = SVC().fit(X, y)
    assert not hasattr(clf, "predict_proba")
    with pytest.raises(AttributeError, match="predict_proba"):
        clf.predict_proba(X)
    with pytest.raises(ValueError, match="ovo"):
        SVC(multi_class="crammer_singer", probability=True).fit(X, y)


def test_tiny_classes_still_calibrate():
    X = np.array([[0.0, 0.0], [0.1, 0.2], [1.0, 1.0], [1.1, 0.9], [2.0, 0.0], [0.0, 2.0]])
    y = np.array([0, 0, 1, 1, 2, 3])        # classes 2 and 3 have one sample each
    clf = SVC(probability=True, random_state=0).fit(X, y)
    p = clf.predict_proba(X)
    assert p.shape == (6, 4) and np.allclose(p.sum(axis=1), 1.0) and np.all(p > 0)


def test_folds_on_the_pairs_matrix_are_the_folds_own_problems():
    """The cross-validated decision values of a pair whose kernel matrix is at hand
    (each fold solved on its rows of it, no copy) are those of the folds' own problems
    solved through the whole solve path, to the tolerance."""
    from sklearn.metrics.pairwise import rbf_kernel

    from margin_opt.estimators import probability
    from margin_opt.kernels import make_kernel
    from margin_opt.problems.svm import SVMProblem

    X, y = load_breast_cancer(return_X_y=True)
    X = StandardScaler().fit_transform(X)[:300]
    y = np.where(y[:300] == 1, 1.0, -1.0)
    w = np.linspace(0.5, 2.0, y.size)
    est = SVC(gamma=0.05)
    kernel = make_kernel("rbf", X, gamma=0.05)
    args = dict(C=1.0, kernel=kernel, sample_weight=w)
    shared = SVMProblem.from_validated(X, y, **args, gram=rbf_kernel(X, gamma=0.05))
    own = SVMProblem.from_validated(X, y, **args)
    assert probability._on_pair_matrix(est, shared, "smo", shared.data.gram_if_computed)
    assert not probability._on_pair_matrix(est, own, "smo", own.data.gram_if_computed)
    d_shared, y_shared = probability.cv_decision_values(est, shared, "smo", 7)
    d_own, y_own = probability.cv_decision_values(est, own, "smo", 7)
    np.testing.assert_array_equal(y_shared, y_own)
    np.testing.assert_allclose(d_shared, d_own, atol=1e-4)
    assert np.corrcoef(d_shared, y_shared)[0, 1] > 0.5       # not all ±1 fallbacks
