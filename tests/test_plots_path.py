"""The regularization path's figures draw the path's own numbers: its points' α, their
support vectors as the certificates count them, 1/‖w‖, the intervals and their bounds."""

import numpy as np
import pytest

from margin_opt import SVMProblem, SVRProblem
from margin_opt.datasets import load_dataset

plt = pytest.importorskip("matplotlib.pyplot")
from margin_opt.plots.path import (  # noqa: E402
    path_series,
    plot_coefficient_path,
    plot_cover,
    plot_margin_path,
    plot_path,
    plot_support_path,
)


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


@pytest.fixture(scope="module")
def svc_path():
    d = load_dataset("breast_cancer")
    return SVMProblem(d.X, d.y, kernel="rbf").path(C=(0.3, 3.0), eps=1e-2)


@pytest.fixture(scope="module")
def svr_path():
    d = load_dataset("diabetes")
    return SVRProblem(d.X, d.y, kernel="rbf").path(C=(0.3, 3.0), eps=1e-2)


def _lines(fig, prefix):
    return {line.get_gid(): line for ax in fig.axes for line in ax.get_lines()
            if str(line.get_gid()).startswith(prefix)}


def _collection(fig, gid):
    (coll,) = [c for ax in fig.axes for c in ax.collections if c.get_gid() == gid]
    return coll


def _is_png(file):
    data = file.read_bytes()
    return data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 3_000


@pytest.mark.parametrize("which", ["svc_path", "svr_path"])
def test_plot_path_writes_a_png_of_four_panels(which, request, tmp_path):
    path = request.getfixturevalue(which)
    fig = plot_path(path, file=tmp_path / "path.png")
    assert _is_png(tmp_path / "path.png")
    assert len(fig.axes) == 4
    assert all(ax.get_xscale() == "log" for ax in fig.axes)
    assert f"{len(path)} certified answers" in fig._suptitle.get_text()


@pytest.mark.parametrize("plot", [plot_coefficient_path, plot_support_path, plot_margin_path,
                                  plot_cover])
def test_each_panel_alone_writes_a_png(svc_path, plot, tmp_path):
    plot(svc_path, file=tmp_path / "panel.png")
    assert _is_png(tmp_path / "panel.png")


@pytest.mark.parametrize("scale", ["C", "libsvm"])
def test_coefficient_lines_are_the_points_alpha(svc_path, scale):
    fig = plot_coefficient_path(svc_path, scale=scale)
    lines = _lines(fig, "coef-")
    alpha = np.array([p.solution.alpha for p in svc_path])          # (points, samples)
    C = svc_path.C
    moving = np.flatnonzero(np.any(alpha != 0, axis=0))
    assert sorted(lines) == sorted(f"coef-{i}" for i in moving)
    assert 0 < moving.size < alpha.shape[1]
    for i in moving:
        line = lines[f"coef-{i}"]
        np.testing.assert_array_equal(line.get_xdata(), C)
        expected = alpha[:, i] / C if scale == "C" else alpha[:, i]
        np.testing.assert_array_equal(line.get_ydata(), expected)
    if scale == "C":
        assert np.all(alpha / C[:, None] <= 1 + 1e-12)


def test_svr_coefficient_lines_are_a_minus_a_star(svr_path):
    fig = plot_coefficient_path(svr_path)
    lines = _lines(fig, "coef-")
    coef = np.array([p.solution.alpha - p.solution.alpha_star for p in svr_path])
    assert lines
    for gid, line in lines.items():
        i = int(gid.split("-")[1])
        np.testing.assert_allclose(line.get_ydata(), coef[:, i] / svr_path.C, rtol=0,
                                   atol=1e-15)


@pytest.mark.parametrize("which", ["svc_path", "svr_path"])
def test_support_counts_are_the_certificates(which, request):
    path = request.getfixturevalue(which)
    fig = plot_support_path(path)
    lines = _lines(fig, "n_")
    s = path_series(path)
    at_bound = ("α = C",) if which == "svc_path" else ("above (a = C)", "below (â = C)")
    for k, p in enumerate(path):
        table = {row.category: row.count for row in p.certificate.table}
        assert s["n_at_bound"][k] == sum(table[c] for c in at_bound)
        assert s["n_support"][k] == p.solution.support_.size
        assert s["n_free"][k] + s["n_at_bound"][k] == s["n_support"][k]
    for name in ("n_support", "n_free", "n_at_bound"):
        np.testing.assert_array_equal(lines[name].get_xdata(), path.C)
        np.testing.assert_array_equal(lines[name].get_ydata(), s[name])
    assert s["n_at_bound"][0] > s["n_at_bound"][-1]          # C grows: fewer at the bound


def test_margin_is_one_over_the_norm_of_w(svc_path):
    fig = plot_margin_path(svc_path)
    (line,) = _lines(fig, "margin").values()
    problem = svc_path.problem
    K = problem.kernel(problem.X, problem.X)
    beta = np.array([p.solution.dual_coef[0] for p in svc_path])      # yᵢαᵢ
    expected = 1.0 / np.sqrt(np.einsum("ki,ij,kj->k", beta, K, beta))
    np.testing.assert_allclose(line.get_ydata(), expected, rtol=1e-9)
    assert fig.axes[0].get_yscale() == "log"
    assert np.all(np.diff(line.get_ydata()) < 0)             # the margin shrinks with C


def test_cover_draws_the_intervals_and_their_bounds(svc_path):
    fig = plot_cover(svc_path)
    segments = _collection(fig, "worst_bound").get_segments()
    assert len(segments) == len(svc_path)
    for seg, p in zip(segments, svc_path, strict=True):
        (x0, y0), (x1, y1) = seg
        assert (x0, x1) == pytest.approx((p.C_lo, p.C_hi), rel=1e-12)
        assert y0 == y1 == pytest.approx(p.gap_bound, rel=1e-12)
        assert p.gap_bound <= svc_path.eps
    bars = _collection(fig, "intervals").get_segments()
    np.testing.assert_allclose([(b[0][0], b[1][0]) for b in bars],
                               [(p.C_lo, p.C_hi) for p in svc_path], rtol=1e-12)
    lines = _lines(fig, "")
    np.testing.assert_array_equal(lines["gap_at_C"].get_xdata(), svc_path.C)
    np.testing.assert_allclose(lines["gap_at_C"].get_ydata(),
                               [max(p.gap_at_C, fig.axes[0].get_ylim()[0]) for p in svc_path])
    assert set(lines["eps"].get_ydata()) == {svc_path.eps}
    bound = lines["path_bound"]
    x = np.asarray(bound.get_xdata())
    assert x[0] == svc_path.C_min and x[-1] == svc_path.C_max
    assert np.all(np.asarray(bound.get_ydata()) <= svc_path.eps)   # covered everywhere
    floor = fig.axes[0].get_ylim()[0]
    np.testing.assert_array_equal(bound.get_ydata(),
                                  [max(svc_path.gap_bound(c), floor) for c in x])
    assert fig.axes[0].get_xscale() == fig.axes[0].get_yscale() == "log"


def test_grid_path_and_bad_scale(svc_path, tmp_path):
    d = load_dataset("iris-binary")
    grid = SVMProblem(d.X, d.y, kernel="linear").path(C=[0.1, 1.0, 10.0], eps=1e-2)
    plot_path(grid, file=tmp_path / "grid.png")
    assert _is_png(tmp_path / "grid.png")
    with pytest.raises(ValueError, match="scale"):
        plot_coefficient_path(svc_path, scale="unit")
