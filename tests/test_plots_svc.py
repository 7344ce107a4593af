"""The C-SVC pictures draw what the certificate says: the same support vectors and counts."""

import numpy as np
import pytest
from sklearn.datasets import make_classification, make_moons

from margin_opt import SVMProblem

plt = pytest.importorskip("matplotlib.pyplot")
from margin_opt.plots.svc import (  # noqa: E402
    decision_on,
    plot_decision_boundary,
    plot_margins_vs_alpha,
)


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


@pytest.fixture(scope="module")
def moons():
    X, y = make_moons(80, noise=0.25, random_state=0)
    return SVMProblem(X, y, C=1.0, kernel="rbf", gamma=1.0)


@pytest.fixture(scope="module")
def wide():
    X, y = make_classification(150, n_features=6, n_informative=4, flip_y=0.1, random_state=1)
    return SVMProblem(X, y, C=0.5, kernel="poly", degree=2, gamma=0.2, coef0=1.0)


def _offsets(fig, gid):
    (coll,) = [c for ax in fig.axes for c in ax.collections if c.get_gid() == gid]
    return np.asarray(coll.get_offsets())


def _same_rows(A, B):
    key = lambda M: np.asarray(sorted(map(tuple, np.round(M, 12))))  # noqa: E731
    return A.shape == B.shape and np.array_equal(key(A), key(B))


def _solve(problem, method):
    """A tight optimum: SMO at tol 1e-8 (its default 1e-3 leaves margins off by 1e-3)."""
    return problem.solve(method, **({"tol": 1e-8} if method == "smo" else {}))


def _draw(plot, problem, sol, path):
    fig = plot(problem, sol, file=path)
    assert path.stat().st_size > 10_000
    return fig


def _cert_counts(cert):
    return {row.category: row.count for row in cert.table}


@pytest.mark.parametrize("method", ["smo", "cvxpy-dual"])
def test_boundary_rings_exactly_the_support_vectors(moons, method, tmp_path):
    sol = _solve(moons, method)
    fig = _draw(plot_decision_boundary, moons, sol, tmp_path / "boundary.png")
    X, C = moons.X, moons.C_i
    ringed = np.vstack([_offsets(fig, "sv_free"), _offsets(fig, "sv_bounded")])
    assert _same_rows(ringed, X[sol.support_])
    bounded = sol.support_[sol.alpha[sol.support_] >= (1 - 1e-3) * C[sol.support_]]
    assert _same_rows(_offsets(fig, "sv_bounded"), X[bounded])
    assert 0 < bounded.size < sol.support_.size
    margins = moons.y * decision_on(moons, sol, X)  # f recomputed from α and b
    assert _same_rows(_offsets(fig, "violators"), X[margins < 1 - 1e-6])
    counts = _cert_counts(moons.certify(sol, tol=1e-6))
    assert _offsets(fig, "sv_free").shape[0] == counts["0 < α < C"]
    assert _offsets(fig, "sv_bounded").shape[0] == counts["α = C"]


def test_boundary_contours_are_the_margins(moons):
    """The dashed lines pass through the free support vectors (f = ±1 there)."""
    sol = moons.solve("smo", tol=1e-10)
    fig = plot_decision_boundary(moons, sol, resolution=400)
    ax = fig.axes[0]
    free = _offsets(fig, "sv_free")
    dashed = [c for c in ax.collections if hasattr(c, "levels") and list(c.levels) == [-1, 1]]
    (contour,) = dashed
    verts = np.vstack([p.vertices for p in contour.get_paths()])
    dist = np.min(np.linalg.norm(free[:, None, :] - verts[None, :, :], axis=2), axis=1)
    span = np.ptp(moons.X, axis=0).max()
    assert dist.max() < 0.01 * span


def test_boundary_needs_two_features(wide):
    sol = wide.solve("smo")
    with pytest.raises(ValueError, match="two features"):
        plot_decision_boundary(wide, sol)


@pytest.mark.parametrize("method", ["smo", "cvxpy-dual"])
def test_margins_vs_alpha_counts_are_the_certificate_table(wide, method, tmp_path):
    sol = _solve(wide, method)
    fig = _draw(plot_margins_vs_alpha, wide, sol, tmp_path / "table.png")
    cert = wide.certify(sol, tol=1e-6)
    counts = _cert_counts(cert)
    assert _offsets(fig, "category_zero").shape[0] == counts["α = 0"]
    assert _offsets(fig, "category_free").shape[0] == counts["0 < α < C"]
    assert _offsets(fig, "category_at_C").shape[0] == counts["α = C"]
    assert _offsets(fig, "contradicting").shape[0] == cert.n_contradicting == 0
    pts = _offsets(fig, "category_free")
    np.testing.assert_allclose(pts[:, 1], 1.0, atol=1e-6)  # yf = 1 on the margin


def test_margins_vs_alpha_shows_contradictions(wide):
    """An early-stopped SMO leaves points outside their bands; the crosses are the cert's."""
    sol = wide.solve("smo", tol=0.5)
    fig = plot_margins_vs_alpha(wide, sol, tol=1e-6)
    cert = wide.certify(sol, tol=1e-6)
    assert cert.n_contradicting > 0
    assert _offsets(fig, "contradicting").shape[0] == cert.n_contradicting


def test_hard_margin(tmp_path):
    rng = np.random.default_rng(0)
    X = np.vstack([rng.normal(-2.5, 1, (25, 2)), rng.normal(2.5, 1, (25, 2))])
    y = np.r_[-np.ones(25), np.ones(25)]
    problem = SVMProblem(X, y, C=np.inf, kernel="linear")
    sol = problem.solve("cvxpy-dual")
    fig = plot_decision_boundary(problem, sol, file=tmp_path / "hard.png")
    assert _same_rows(_offsets(fig, "sv_free"), X[sol.support_])
    assert _offsets(fig, "sv_bounded").shape[0] == 0
    assert _offsets(fig, "violators").shape[0] == 0
    fig = plot_margins_vs_alpha(problem, sol, file=tmp_path / "hard_table.png")
    counts = _cert_counts(problem.certify(sol, tol=1e-6))
    assert _offsets(fig, "category_free").shape[0] == counts["0 < α < C"]
    assert not [c for c in fig.axes[0].collections if c.get_gid() == "category_at_C"]


def test_categories_are_the_certificates_at_a_loose_tolerance(wide):
    # at tol = 1 the certificate reads α as 0 below τ = 1/2 of C (kkt.category_threshold),
    # not below √tol·C = C (which would put every point in "zero"): the pictures' masks
    # count what its table counts
    from margin_opt.plots.svc import sv_categories

    sol = _solve(wide, "smo")
    counts = _cert_counts(wide.certify(sol, tol=1.0))
    cats = {k: int(v.sum()) for k, v in sv_categories(wide, sol, tol=1.0).items()}
    assert counts["α = C"] > 0
    assert cats == {"zero": counts["α = 0"], "free": counts["0 < α < C"],
                    "at_C": counts["α = C"]}
