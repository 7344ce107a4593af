"""The kernel trick, drawn: concentric circles lifted by φ(x) = (x₁², √2 x₁x₂, x₂²) to a plane.

For x, z in R², φ(x)ᵀφ(z) = x₁²z₁² + 2x₁x₂z₁z₂ + x₂²z₂² = (xᵀz)²: the homogeneous
polynomial kernel of degree 2 (``kernel="poly", degree=2, gamma=1, coef0=0``) is the
inner product after the map, so an SVM with that kernel is a linear SVM on φ(x).
A circle x₁² + x₂² = r² is the plane z₁ + z₃ = r² in the lifted space; the boundary
that the SVM finds in R² is the preimage of its separating plane wᵀz + b = 0.

References
----------
B. Schölkopf and A. J. Smola, *Learning with Kernels*, MIT Press 2002, §2.1
(the degree-2 monomial feature map and the polynomial kernel).
"""

from __future__ import annotations

import numpy as np

from . import require_matplotlib
from .svc import plot_decision_boundary

__all__ = ["degree2_feature_map", "plane_in_box", "plot_kernel_trick"]


def degree2_feature_map(X):
    """φ(x) = (x₁², √2 x₁x₂, x₂²), whose inner products are the kernel (xᵀz)².

    Parameters
    ----------
    X : ndarray of shape (n_samples, 2)

    Returns
    -------
    Phi : ndarray of shape (n_samples, 3)

    Raises
    ------
    ValueError
        If X does not have two columns.
    """
    X = np.asarray(X, dtype=float)
    if X.ndim != 2 or X.shape[1] != 2:
        raise ValueError(f"the degree-2 map here takes points of R², got shape {X.shape}.")
    x1, x2 = X[:, 0], X[:, 1]
    return np.c_[x1 * x1, np.sqrt(2.0) * x1 * x2, x2 * x2]


def plane_in_box(w, b, lo, hi):
    """The polygon where the plane wᵀz + b = 0 cuts the box lo ≤ z ≤ hi in R³.

    Parameters
    ----------
    w : ndarray of shape (3,)
    b : float
    lo, hi : ndarray of shape (3,)

    Returns
    -------
    vertices : ndarray of shape (m, 3)
        The corners of the section in order around it (m = 0 when the plane misses
        the box, else 3 to 6).
    """
    corners = np.array([[(lo, hi)[(c >> d) & 1][d] for d in range(3)] for c in range(8)])
    vals = corners @ w + b
    pts = []
    for a in range(8):
        for d in range(3):
            c = a | (1 << d)
            if c == a:
                continue
            if vals[a] == 0:
                pts.append(corners[a])
            if vals[a] * vals[c] < 0:
                t = vals[a] / (vals[a] - vals[c])
                pts.append(corners[a] + t * (corners[c] - corners[a]))
    if len(pts) < 3:
        return np.empty((0, 3))
    P = np.unique(np.round(np.array(pts), 12), axis=0)
    center = P.mean(axis=0)
    u = P[0] - center
    u /= np.linalg.norm(u)
    v = np.cross(w / np.linalg.norm(w), u)
    return P[np.argsort(np.arctan2((P - center) @ v, (P - center) @ u))]


def plot_kernel_trick(problem, solution, *, feature_map=None, file=None, fig=None,
                      view=(15, -105)):
    """Two panels: the 2-D data with the SVM's boundary, and φ(X) with the separating plane.

    Parameters
    ----------
    problem : SVMProblem
        On X of shape (n_samples, 2), posed with ``feature_map=`` or with the
        kernel that the map realizes (e.g. ``kernel="poly", degree=2, gamma=1,
        coef0=0`` for :func:`degree2_feature_map`).
    solution : Solution
    feature_map : callable, optional
        φ: ndarray of shape (n, 2) -> ndarray of shape (n, 3).  Default:
        ``problem.feature_map``, else :func:`degree2_feature_map`.
    file : str or path-like, optional
        Save the figure there (PNG by extension).
    fig : matplotlib Figure, optional
        Figure to draw on (a new one otherwise).
    view : tuple of float, default=(15, -105)
        Elevation and azimuth (degrees) of the 3-D panel; the default looks along
        the √2 x₁x₂ axis, where a circle's plane z₁ + z₃ = r² is seen nearly edge-on.

    Returns
    -------
    fig : matplotlib Figure

    Raises
    ------
    ValueError
        If X does not have two features or φ does not map to R³.
    ImportError
        Without matplotlib (the ``plot`` extra).
    """
    phi = feature_map or getattr(problem, "feature_map", None) or degree2_feature_map
    X = np.asarray(problem.X, dtype=float)
    Z = np.asarray(phi(X), dtype=float)
    if X.shape[1] != 2 or Z.ndim != 2 or Z.shape[1] != 3:
        raise ValueError("plot_kernel_trick draws a map from R² to R³; got X of shape "
                         f"{X.shape} mapped to shape {Z.shape}.")
    plt = require_matplotlib()
    if fig is None:
        fig = plt.figure(figsize=(13, 5.5))
    ax2d = fig.add_subplot(1, 2, 1)
    plot_decision_boundary(problem, solution, ax=ax2d,
                           title="input space: the boundary f(x) = 0 and margins f = ±1")
    ax2d.set_aspect("equal")
    ax2d.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.12), ncol=2)
    ax3d = fig.add_subplot(1, 2, 2, projection="3d")
    y = problem.y
    w = Z.T @ (y * np.asarray(solution.alpha, dtype=float))  # w = Σ αᵢyᵢφ(xᵢ)
    b = float(solution.b)
    for label, color, marker in ((-1.0, "C0", "o"), (1.0, "C3", "^")):
        m = y == label
        ax3d.scatter(Z[m, 0], Z[m, 1], Z[m, 2], color=color, marker=marker, s=12,
                     depthshade=False)
    lo, hi = Z.min(axis=0), Z.max(axis=0)
    section = plane_in_box(w, b, lo, hi)
    if section.shape[0]:
        from mpl_toolkits.mplot3d.art3d import Poly3DCollection

        ax3d.add_collection3d(Poly3DCollection([section], facecolor="0.3", alpha=0.25,
                                               edgecolor="k", linewidth=0.6))
    ax3d.set_xlim(lo[0], hi[0])
    ax3d.set_ylim(lo[1], hi[1])
    ax3d.set_zlim(lo[2], hi[2])
    ax3d.set_xlabel("x₁²")
    ax3d.set_ylabel("√2 x₁x₂")
    ax3d.set_zlabel("x₂²")
    ax3d.set_title(f"lifted by φ: the plane wᵀφ(x) + b = 0\n"
                   f"w = ({w[0]:.3g}, {w[1]:.3g}, {w[2]:.3g}), b = {b:.3g}", fontsize=10)
    ax3d.view_init(elev=view[0], azim=view[1])
    if file is not None:
        fig.savefig(file, dpi=110, bbox_inches="tight")
    return fig
