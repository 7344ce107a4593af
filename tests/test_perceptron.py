"""The perceptron: primal and kernel form, dual representation, Novikoff's bound, cycles.

References: scikit-learn's ``Perceptron`` (the same cyclic rule with ``shuffle=False``),
the closed forms of the rule (w = Σαᵢyᵢxᵢ, scale invariance in γ), the definition of
the criterion recomputed with numpy, the max-margin separator of the augmented data
written out directly in cvxpy, and XOR (not separable; separable with an RBF kernel).
"""

import runpy
from pathlib import Path

import cvxpy as cp
import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import load_iris
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import Perceptron as SkPerceptron

from margin_opt import NotSeparableError, Perceptron, SeparabilityProblem, novikoff_bound
from margin_opt.losses import EpsilonInsensitive, Hinge
from margin_opt.methods import get_method
from margin_opt.solvers.perceptron import perceptron
from margin_opt.standard_forms import PrimalERM

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def blobs(seed, n=60, d=3, gap=1.5, through_origin=False):
    """Gaussian points labelled by a random hyperplane, those within gap/2 of it dropped
    (separable; by a hyperplane through the origin when ``through_origin``)."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) + (0.0 if through_origin else 2.0)
    u = rng.normal(size=d)
    u /= np.linalg.norm(u)
    s = X @ u - (0.0 if through_origin else np.median(X @ u))
    keep = np.abs(s) > gap / 2
    return X[keep], np.where(s[keep] > 0, 1.0, -1.0)


def criterion(X, y, w, b):
    """J(w, w₀) = Σ max(0, −yᵢ(w·xᵢ + w₀)), the lecture's perceptron criterion."""
    return float(np.maximum(0.0, -y * (X @ w + b)).sum())


# ---------------------------------------------------------------------- the rule


@pytest.mark.parametrize("fit_intercept", [True, False])
def test_same_run_as_sklearn_perceptron(lecture_iris, fit_intercept):
    """scikit-learn's Perceptron with shuffle=False runs the same cyclic rule."""
    X, y = lecture_iris
    ours = Perceptron(fit_intercept=fit_intercept).fit(X, y)
    assert ours.converged_
    sk = SkPerceptron(shuffle=False, tol=None, eta0=1.0, max_iter=ours.n_epochs_,
                      fit_intercept=fit_intercept).fit(X, y)
    np.testing.assert_allclose(ours.coef_, sk.coef_, rtol=0, atol=1e-12)
    np.testing.assert_allclose(ours.intercept_, sk.intercept_, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(ours.predict(X), y)


def test_lecture_iris_within_novikoff_bound(lecture_iris):
    X, y = lecture_iris
    model = Perceptron().fit(X, y)
    nb = novikoff_bound(X, y)
    assert model.converged_ and model.certificate_.ok
    assert 0 < model.n_updates_ <= nb.bound
    assert model.n_updates_ == 20 and nb.bound == 2355   # regression values of this data
    assert model.criterion_[-1] == 0.0 and model.criterion_[0] > 0
    assert np.all(y * model.decision_function(X) > 0)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("shuffle", [False, True])
def test_updates_within_novikoff_bound(seed, shuffle):
    X, y = blobs(seed)
    model = Perceptron(shuffle=shuffle, random_state=seed, eta0=0.3).fit(X, y)
    assert model.converged_
    assert model.n_updates_ <= novikoff_bound(X, y).bound
    X0, y0 = blobs(seed, through_origin=True)
    noint = Perceptron(fit_intercept=False, shuffle=shuffle, random_state=seed).fit(X0, y0)
    assert noint.converged_
    assert noint.n_updates_ <= novikoff_bound(X0, y0, fit_intercept=False).bound


def test_novikoff_margin_is_the_max_margin_of_the_augmented_data(lecture_iris):
    """ŵ from the hard-margin SVM without intercept on [1, x]; reference: the same
    problem written out in cvxpy, min ‖w‖² s.t. yᵢ w·zᵢ ≥ 1 (margin 1/‖w‖)."""
    X, y = lecture_iris
    Z = np.hstack([np.ones((len(y), 1)), X])
    w = cp.Variable(3)
    cp.Problem(cp.Minimize(cp.sum_squares(w)), [cp.multiply(y, Z @ w) >= 1]).solve()
    nb = novikoff_bound(X, y)
    assert nb.margin == pytest.approx(1 / np.linalg.norm(w.value), rel=1e-6)
    assert nb.radius == pytest.approx(np.linalg.norm(Z, axis=1).max(), rel=1e-12)
    assert nb.bound == np.ceil((nb.radius / nb.margin) ** 2)
    np.testing.assert_allclose(nb.w_hat, w.value, rtol=1e-5)
    smo = novikoff_bound(X, y, method="smo", tol=1e-8)
    assert abs(smo.bound - nb.bound) <= 0.01 * nb.bound


def test_novikoff_on_non_separable_data_raises(xor):
    XOR_X, XOR_Y = xor
    with pytest.raises(NotSeparableError, match=r"not linearly separable.*\[1, x\].*separability"):
        novikoff_bound(XOR_X, XOR_Y)


def test_dual_representation_reproduces_coef(lecture_iris):
    X, y = lecture_iris
    model = Perceptron(eta0=0.5).fit(X, y)
    a = model.alpha_
    assert a.shape == (len(y),) and np.all(a >= 0)
    assert a.sum() == pytest.approx(0.5 * model.n_updates_)
    np.testing.assert_allclose(model.coef_[0], X.T @ (a * y), rtol=1e-12, atol=1e-12)
    assert model.intercept_[0] == pytest.approx(a @ y, abs=1e-12)
    np.testing.assert_array_equal(model.support_, np.flatnonzero(a))
    np.testing.assert_allclose(model.dual_coef_[0], (a * y)[model.support_])


def test_step_size_only_scales_the_weights(lecture_iris):
    """From w = 0 every iterate with step γ is γ times the iterate with step 1."""
    X, y = lecture_iris
    one, tenth = Perceptron(eta0=1.0).fit(X, y), Perceptron(eta0=0.1).fit(X, y)
    assert one.n_updates_ == tenth.n_updates_
    np.testing.assert_allclose(tenth.coef_, 0.1 * one.coef_, rtol=1e-12)
    np.testing.assert_allclose(tenth.alpha_, 0.1 * one.alpha_, rtol=1e-12)


def test_criterion_after_each_epoch_is_the_definition(lecture_iris):
    """The cyclic run is a prefix of itself: the run stopped after k epochs has the
    weights of epoch k, whose criterion (recomputed) is criterion_[k − 1]."""
    X, y = lecture_iris
    full = Perceptron().fit(X, y)
    assert full.criterion_.shape == (full.n_epochs_,)
    for k in range(1, full.n_epochs_ + 1):
        with pytest.warns(ConvergenceWarning) if k < full.n_epochs_ else _no_warning():
            part = Perceptron(max_epochs=k).fit(X, y)
        assert full.criterion_[k - 1] == pytest.approx(
            criterion(X, y, part.coef_[0], part.intercept_[0]), abs=1e-9)


class _no_warning:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def test_sparse_rows_give_the_same_run(lecture_iris):
    X, y = lecture_iris
    dense = Perceptron().fit(X, y)
    sparse = Perceptron().fit(sp.csr_matrix(X), y)
    np.testing.assert_allclose(sparse.coef_, dense.coef_, rtol=1e-14)
    np.testing.assert_array_equal(sparse.alpha_, dense.alpha_)
    np.testing.assert_array_equal(sparse.predict(sp.csr_matrix(X)), y)


def test_shuffle_is_reproducible():
    X, y = blobs(3)
    a = Perceptron(shuffle=True, random_state=7).fit(X, y)
    b = Perceptron(shuffle=True, random_state=7).fit(X, y)
    np.testing.assert_array_equal(a.alpha_, b.alpha_)


# ---------------------------------------------------------------------- kernel form


def test_kernel_form_on_the_linear_gram_is_the_primal_rule(lecture_iris):
    X, y = lecture_iris
    primal = Perceptron().fit(X, y)
    dual = Perceptron(kernel="precomputed").fit(X @ X.T, y)
    np.testing.assert_array_equal(dual.alpha_, primal.alpha_)
    assert dual.n_updates_ == primal.n_updates_ and not hasattr(dual, "coef_")
    Xt = X[:7] + 0.05
    np.testing.assert_allclose(dual.decision_function(Xt @ X.T), primal.decision_function(Xt),
                               rtol=1e-10, atol=1e-10)


def test_kernel_perceptron_separates_xor_with_rbf(xor):
    XOR_X, XOR_Y = xor
    model = Perceptron(kernel="rbf", gamma=1.0).fit(XOR_X, XOR_Y)
    assert model.converged_ and model.certificate_.ok
    np.testing.assert_array_equal(model.predict(XOR_X), XOR_Y)
    assert model.n_updates_ <= novikoff_bound(XOR_X, XOR_Y, kernel="rbf", gamma=1.0).bound
    # f(x) = Σ αⱼyⱼK(xⱼ, x) + w₀ written out
    K = np.exp(-((XOR_X[:, None] - XOR_X[None]) ** 2).sum(-1))
    np.testing.assert_allclose(model.decision_function(XOR_X),
                               K @ (model.alpha_ * XOR_Y) + model.intercept_[0], rtol=1e-12)


# ---------------------------------------------------------------------- non-separable


def test_linear_xor_cycles_warns_and_certifies(xor):
    XOR_X, XOR_Y = xor
    with pytest.warns(ConvergenceWarning, match="not separable"):
        model = Perceptron(max_epochs=1000).fit(XOR_X, XOR_Y)
    assert not model.converged_ and model.n_epochs_ < 10   # the cycle is seen at once
    lam = model.farkas_
    # the definition, written out: λ ≥ 0, 1 per class, Σλᵢyᵢxᵢ = 0 (the hulls meet)
    assert np.all(lam >= 0)
    assert lam[XOR_Y > 0].sum() == pytest.approx(1) and lam[XOR_Y < 0].sum() == pytest.approx(1)
    np.testing.assert_allclose(XOR_X.T @ (lam * XOR_Y), 0, atol=1e-12)


def test_kernel_form_cycles_like_the_primal_rule():
    """Versicolor vs virginica on sepal features (not separable, decimal data): the cyclic
    run returns to a state after a few hundred epochs; the kernel form on the linear Gram
    matrix sees the same cycle, and both certificates verify."""
    data = load_iris()
    keep = data.target > 0
    X, y = data.data[keep][:, :2], np.where(data.target[keep] == 2, 1.0, -1.0)
    with pytest.warns(ConvergenceWarning, match="cycles"):
        primal = Perceptron(max_epochs=5000).fit(X, y)
    with pytest.warns(ConvergenceWarning, match="cycles"):
        dual = Perceptron(kernel="precomputed", max_epochs=5000).fit(X @ X.T, y)
    assert primal.n_epochs_ == dual.n_epochs_ < 5000
    np.testing.assert_array_equal(primal.alpha_, dual.alpha_)
    for lam in (primal.farkas_, dual.farkas_):
        assert lam[y > 0].sum() == pytest.approx(1) and lam[y < 0].sum() == pytest.approx(1)
        g = X.T @ (lam * y)
        assert np.all(np.abs(g) <= 1e-9 * (np.abs(X).T @ lam))


def test_max_epochs_warns_that_the_data_may_not_be_separable():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 2))
    y = np.where(rng.random(40) < 0.5, 1.0, -1.0)
    with pytest.warns(ConvergenceWarning, match="may not be separable.*separability"):
        model = Perceptron(max_epochs=5).fit(X, y)
    assert not model.converged_ and model.n_epochs_ == 5 and model.farkas_ is None
    assert not model.certificate_.ok


# ---------------------------------------------------------------------- the backend


def test_backend_is_registered_and_runs_on_the_solve_path(lecture_iris):
    X, y = lecture_iris
    spec = get_method("perceptron", "separability")
    assert spec.route == "backend" and spec.standard_form == "PrimalERM" and spec.accepts_gram
    problem = SeparabilityProblem(X, y)
    sol = problem.solve("perceptron")
    assert sol.backend == "perceptron" and sol.status == "optimal"
    n = len(y)
    np.testing.assert_allclose(sol.history["objective"], n * sol.raw.history["J"])
    assert sol.primal_objective == 0.0 == criterion(X, y, sol.w, sol.b)


def test_backend_callback_stops_the_run(lecture_iris):
    X, y = lecture_iris
    seen = []

    def stop_after_two(epoch, w, w0, n_updates):
        seen.append((epoch, n_updates))
        return epoch == 2

    res = perceptron(PrimalERM(X, y, 0.0, np.ones(len(y)), loss=Hinge(0.0)),
                     callback=stop_after_two)
    assert res.status == "stopped" and res.nit == 2
    assert [n for _, n in seen] == res.history["updates"].tolist()


def test_backend_validates_its_standard_form(lecture_iris):
    X, y = lecture_iris
    ones = np.ones(len(y))
    with pytest.raises(ValueError, match="no regularizer"):
        perceptron(PrimalERM(X, y, 0.1, ones, loss=Hinge(0.0)))
    with pytest.raises(ValueError, match="perceptron criterion"):
        perceptron(PrimalERM(X, y, 0.0, ones, loss=EpsilonInsensitive(0.1)))
    with pytest.raises(ValueError, match="eta0"):
        perceptron(PrimalERM(X, y, 0.0, ones, loss=Hinge(0.0)), eta0=0.0)
    with pytest.raises(ValueError, match="kernel_gram"):
        perceptron(PrimalERM(X, y, 0.0, ones, loss=Hinge(0.0)), kernel_gram=np.eye(3))


def test_margin_perceptron_threshold(lecture_iris):
    """Hinge(θ): corrections while yᵢfᵢ ≤ θ; converged means every yᵢfᵢ > θ."""
    X, y = blobs(1)
    res = perceptron(PrimalERM(X, y, 0.0, np.ones(len(y)), loss=Hinge(5.0)), max_epochs=5000)
    assert res.status == "optimal"
    assert np.min(y * (X @ res.w + res.b)) > 5.0


def test_estimator_rejects_bad_parameters(lecture_iris):
    X, y = lecture_iris
    with pytest.raises(ValueError, match="eta0"):
        Perceptron(eta0=0.0).fit(X, y)
    with pytest.raises(ValueError, match="max_epochs"):
        Perceptron(max_epochs=0).fit(X, y)
    with pytest.raises(ValueError, match="single class"):
        Perceptron().fit(X, np.ones(len(y)))


def test_good_margin_example(tmp_path, capsys):
    """The notes' picture: on all of iris (sepal features, setosa vs the rest) the SVM's
    margin is the largest, the perceptron's positive, ridge's not even positive."""
    pytest.importorskip("matplotlib")
    example = runpy.run_path(str(EXAMPLES / "good_margin.py"))
    X, y = example["iris_rows"]()
    lines, svm, perc = example["fit_lines"](X, y)
    margins = {k: example["geometric_margin"](X, y, *v) for k, v in lines.items()}
    assert margins["SVM, C = 10000"] > margins["perceptron"] > 0 > margins["ridge classifier"]
    assert perc.n_updates_ <= novikoff_bound(X, y).bound
    example["main"](["--out", str(tmp_path)])
    assert (tmp_path / "good_margin.png").stat().st_size > 10_000
    assert "wrote" in capsys.readouterr().out
