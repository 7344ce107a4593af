"""Training data seen through a kernel: Gram matrix, factor, feature matrix, f = Kβ.

Shared by every kernel model (C-SVC, ε-SVR): the cvxpy formulations are linear in a
feature matrix Φ (X for the linear kernel, φ(X) for an explicit feature map, the
pivoted Cholesky factor L of K otherwise), and the quadratic term βᵀKβ is written
in the fastest exact form.
"""

from __future__ import annotations

import cvxpy as cp
import numpy as np
from scipy.linalg import lapack

from ..exceptions import SolverError
from ..kernels import Kernel, make_kernel
from ..solvers import kernel_blocks as _kb
from ..validation import check_precomputed_kernel

__all__ = ["KernelData", "kernel_factor", "QUAD_FORMS"]

#: How the dual's quadratic term βᵀKβ can be written (:meth:`KernelData.quadratic`).
QUAD_FORMS = ("auto", "features", "quad_form", "factor")


class KernelData:
    """Data X with a kernel; computes K, its factor and Kβ once and on demand.

    Parameters
    ----------
    X : {ndarray, csr_matrix} of shape (n_samples, n_features)
        Validated data (the Gram matrix for ``kernel="precomputed"``).
    kernel, gamma, degree, coef0 : see :func:`margin_opt.kernels.make_kernel`
    feature_map : callable, optional
        Explicit feature map φ; the kernel is then φ(x)ᵀφ(z).

    Raises
    ------
    ValueError
        Bad kernel parameters, a bad precomputed kernel or feature map output.
    """

    def __init__(self, X, kernel="linear", *, gamma="scale", degree=3, coef0=0.0,
                 feature_map=None):
        self.feature_map = feature_map
        if feature_map is not None:
            Phi = np.asarray(feature_map(X), dtype=float)
            if Phi.ndim != 2 or Phi.shape[0] != X.shape[0] or not np.all(np.isfinite(Phi)):
                raise ValueError("feature_map(X) must return a finite array of shape "
                                 f"(n_samples, n_features_mapped); got shape {Phi.shape}.")
            self.kernel = Kernel("callable", func=lambda A, B: feature_map(A) @ feature_map(B).T)
            self._features = Phi
        else:
            if kernel == "precomputed":
                X = check_precomputed_kernel(X)
            self.kernel = make_kernel(kernel, X, gamma=gamma, degree=degree, coef0=coef0)
            self._features = X if self.kernel.is_linear else None
        self.X = X
        self._gram = None
        self._factor = None

    @property
    def n_samples(self) -> int:
        return self.X.shape[0]

    @property
    def explicit_w(self) -> bool:
        """True when w lives in an explicit feature space (linear kernel or feature map)."""
        return self._features is not None

    def gram(self) -> np.ndarray:
        """The kernel matrix K of shape (n_samples, n_samples), computed once.

        Raises
        ------
        ValueError
            For a sigmoid or callable kernel whose matrix is not PSD on this data.
        """
        if self._gram is None:
            K = self.kernel.gram(self.X)
            if self.kernel.name in ("sigmoid", "callable") and self.feature_map is None:
                _check_psd(K, self.kernel.describe())
            self._gram = K
        return self._gram

    @property
    def gram_if_computed(self):
        """K if it has been computed already, else None."""
        return self._gram

    def features(self):
        """The matrix Φ the primal is linear in, shape (n_samples, r).

        X for the linear kernel, φ(X) for a feature map, else the pivoted Cholesky
        factor L of K (K = LLᵀ, r its numerical rank).
        """
        if self._features is not None:
            return self._features
        if self._factor is None:
            self._factor = kernel_factor(self.gram())
        return self._factor

    def weights(self, beta) -> np.ndarray:
        """w = Φᵀβ in the coordinates of :meth:`features`, shape (r,)."""
        return np.asarray(self.features().T @ beta).ravel()

    def combination(self, beta) -> np.ndarray:
        """Kβ = Σⱼ βⱼK(·, xⱼ) on the training points, shape (n_samples,).

        Computed from β alone (never from a solver's gradient): for poly, rbf and
        sigmoid by blocks of kernel rows over the support (BLAS, in parallel, memory
        O(block + n·d); RBF distances on centred data, small ones recomputed
        exactly, see :mod:`margin_opt.solvers.kernel_blocks`).  The last result is
        remembered, so that reading an answer and certifying it compute Kβ once.
        """
        beta = np.asarray(beta, dtype=float)
        if self.explicit_w:
            return np.asarray(self._features @ (self._features.T @ beta)).ravel()
        nz = np.flatnonzero(beta)
        if self._gram is not None:
            return self._gram[:, nz] @ beta[nz]
        if nz.size == 0:
            return np.zeros(self.n_samples)
        memo = self.__dict__.get("_last_combination")
        if memo is not None and np.array_equal(memo[0], beta):
            return memo[1].copy()
        if self.kernel.name in _kb.KINDS:
            if "_blocks" not in self.__dict__:
                self._blocks = _kb.named_kernel_arrays(self.X, self.kernel, 2.0 ** 26)
            kd, csr = self._blocks
            f = _kb.combination(kd, None, csr, nz, beta[nz, None])[:, 0]
        else:
            f = self.kernel.rows(self.X, nz).T @ beta[nz]
        self._last_combination = (beta.copy(), f.copy())
        return f

    def resolve_quad_form(self, form: str) -> str:
        """The quadratic form actually used for ``form`` (see :meth:`quadratic`)."""
        if form not in QUAD_FORMS:
            raise ValueError(f"quad_form must be one of {QUAD_FORMS}, got {form!r}.")
        if form == "auto":
            if self.explicit_w:
                return "features"
            return "factor" if self.features().shape[1] <= self.n_samples // 4 else "quad_form"
        if form == "features" and not self.explicit_w:
            raise ValueError("quad_form='features' needs the linear kernel or a feature_map; "
                             "use 'quad_form' or 'factor'.")
        return form

    def quadratic(self, beta: cp.Expression, quad_form: str = "auto") -> cp.Expression:
        """βᵀKβ as a cvxpy expression, in the fastest exact form.

        ``features``: ‖Φᵀβ‖²; ``quad_form``: ``quad_form(β, psd_wrap(K))``;
        ``factor``: ‖Lᵀβ‖² with the pivoted Cholesky factor.  ``auto`` picks
        ``features`` where w is explicit, ``factor`` when K has numerical rank ≤ n/4,
        else ``quad_form`` (measured fastest in ``benchmarks/bench_cvxpy_dual.py``).
        """
        if self.resolve_quad_form(quad_form) == "quad_form":
            return cp.quad_form(beta, cp.psd_wrap(self.gram()))
        return cp.sum_squares(self.features().T @ beta)

    def primal_point(self, variables, beta, f0):
        """The primal side of an answer, for a certificate.

        Parameters
        ----------
        variables : SVCVariables or SVRVariables
            With ``w`` (explicit features), or ``w_factor`` (w in the coordinates of
            the kernel factor), or neither (a dual answer).
        beta : ndarray of shape (n_samples,)
            The dual coefficients of f (yᵢαᵢ for the SVC, aᵢ − âᵢ for the SVR).
        f0 : ndarray of shape (n_samples,)
            Kβ, f from the dual side without b.

        Returns
        -------
        f0_primal : ndarray of shape (n_samples,)
            f without b from the primal variables.
        reg : float
            ½‖w‖² (½βᵀKβ for a dual answer).
        stationarity : float
            Normalized residual of w = Σβᵢφ(xᵢ).
        description : str
        """
        w_factor = variables.w_factor
        if variables.w is not None:
            w = np.asarray(variables.w, dtype=float)
            w_dual = self.weights(beta)
            return (np.asarray(self.features() @ w).ravel(), 0.5 * float(w @ w),
                    float(np.abs(w - w_dual).max(initial=0.0)) / max(1.0, np.abs(w).max()),
                    "‖w − Σβᵢφ(xᵢ)‖∞ / max(1, ‖w‖∞)")
        if w_factor is not None:
            fp = self.features() @ w_factor
            return (fp, 0.5 * float(w_factor @ w_factor),
                    float(np.abs(fp - f0).max()) / max(1.0, np.abs(f0).max()),
                    "‖f_primal − f_dual‖∞ / max(1, ‖f‖∞) (kernel)")
        return f0, 0.5 * float(beta @ f0), 0.0, "holds by construction (kernel, dual point)"

    def standard_form_data(self):
        """``(X, kernel)`` for a :class:`~margin_opt.standard_forms.DualQP`."""
        if self.feature_map is not None:
            return self._features, make_kernel("linear")
        return self.X, self.kernel


def _check_psd(K, what):
    """Raise a ValueError when K is not PSD beyond rounding (the problem is not convex)."""
    lam = np.linalg.eigvalsh(K)
    if lam[0] < -1e-10 * max(1.0, abs(lam[-1])) * K.shape[0]:
        raise ValueError(
            f"the {what} kernel matrix is not positive semidefinite on this data (smallest "
            f"eigenvalue {lam[0]:.3g}), so the problem is not convex. The sigmoid kernel "
            "is indefinite for most gamma/coef0; use rbf/poly, or a smaller gamma with a "
            "negative coef0, or pass a PSD precomputed kernel.")


def kernel_factor(K: np.ndarray) -> np.ndarray:
    """A factor L with K = LLᵀ by LAPACK's pivoted Cholesky (``dpstrf``).

    Parameters
    ----------
    K : ndarray of shape (n, n)
        Symmetric positive semidefinite.

    Returns
    -------
    L : ndarray of shape (n, r)
        r is the numerical rank at LAPACK's default tolerance (n·eps·max diag), so
        ``‖K − LLᵀ‖`` is at rounding level.

    Raises
    ------
    SolverError
        If LAPACK reports an error.

    References
    ----------
    N. J. Higham, "Cholesky factorization", WIREs Comp. Stat. 1, 2009.
    """
    n = K.shape[0]
    c, piv, rank, info = lapack.dpstrf(np.array(K, dtype=float, order="F"), lower=1)
    if info < 0:
        raise SolverError(f"pivoted Cholesky failed (LAPACK info={info}).")
    L = np.zeros((n, rank))
    L[piv - 1] = np.tril(c)[:, :rank]
    return L
