"""The explicit map φ(x) = (x₁², √2x₁x₂, x₂²) and the kernel (xᵀz)² pose the same SVM."""

import numpy as np
import pytest
from sklearn.datasets import make_circles

from margin_opt import SVMProblem
from margin_opt.plots.kernel_trick import degree2_feature_map, plane_in_box


@pytest.fixture(scope="module")
def circles():
    return make_circles(200, factor=0.3, noise=0.05, random_state=0)


@pytest.fixture(scope="module")
def both(circles):
    X, y = circles
    lifted = SVMProblem(X, y, C=10.0, feature_map=degree2_feature_map)
    kernel = SVMProblem(X, y, C=10.0, kernel="poly", degree=2, gamma=1.0, coef0=0.0)
    return lifted, lifted.solve("cvxpy-dual"), kernel, kernel.solve("cvxpy-dual")


def test_map_realizes_the_kernel(circles):
    X = circles[0][:20]
    Phi = degree2_feature_map(X)
    np.testing.assert_allclose(Phi @ Phi.T, (X @ X.T) ** 2, rtol=1e-12, atol=1e-14)
    with pytest.raises(ValueError, match="R²"):
        degree2_feature_map(np.ones((3, 3)))


def test_same_svm_both_ways(both, circles):
    lifted, sol_phi, kernel, sol_k = both
    assert lifted.certify(sol_phi).ok and kernel.certify(sol_k).ok
    assert sol_phi.dual_objective == pytest.approx(sol_k.dual_objective, rel=1e-6)
    np.testing.assert_allclose(sol_phi.decision, sol_k.decision, atol=1e-5)
    rng = np.random.default_rng(0)
    G = rng.uniform(-1.2, 1.2, (300, 2))  # new points: the kernel expansion against φ(x)ᵀw + b
    f_kernel = kernel.kernel(G, kernel.X) @ (kernel.y * sol_k.alpha) + sol_k.b
    np.testing.assert_allclose(degree2_feature_map(G) @ sol_phi.w + sol_phi.b, f_kernel,
                               atol=1e-5)


def test_lifted_data_is_plane_separable(both, circles):
    """The circles, not linearly separable in R², are separated by the plane in R³."""
    lifted, sol_phi, _, _ = both
    y = lifted.y
    margins = y * (degree2_feature_map(circles[0]) @ sol_phi.w + sol_phi.b)
    assert np.all(margins > 0)
    linear = SVMProblem(*circles, C=10.0, kernel="linear").solve("cvxpy-dual")
    assert np.mean(y * linear.decision > 0) < 0.75


def test_plane_section_of_a_box():
    # z₁ + z₃ = 1 in the unit cube: the square through (1,0,0), (0,0,1) and across z₂
    P = plane_in_box(np.array([1.0, 0.0, 1.0]), -1.0, np.zeros(3), np.ones(3))
    assert P.shape == (4, 3)
    np.testing.assert_allclose(P[:, 0] + P[:, 2], 1.0)
    assert plane_in_box(np.array([1.0, 1.0, 1.0]), 10.0, np.zeros(3), np.ones(3)).shape == (0, 3)
    # a corner cut: a triangle
    assert plane_in_box(np.array([1.0, 1.0, 1.0]), -0.5, np.zeros(3), np.ones(3)).shape == (3, 3)


def test_figure(both, tmp_path):
    pytest.importorskip("matplotlib")
    import matplotlib.pyplot as plt

    from margin_opt.plots.kernel_trick import plot_kernel_trick

    lifted, sol_phi, kernel, sol_k = both
    fig = plot_kernel_trick(lifted, sol_phi, file=tmp_path / "kt.png")
    assert len(fig.axes) == 2 and fig.axes[1].name == "3d"
    assert (tmp_path / "kt.png").stat().st_size > 20_000
    fig_k = plot_kernel_trick(kernel, sol_k)  # the kernel problem: φ by default
    assert fig_k.axes[1].get_title() == fig.axes[1].get_title()
    plt.close("all")
