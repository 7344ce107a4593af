"""Training data seen through a kernel: Gram matrix, factor, feature matrix, f = Kβ.

Shared by every kernel model (C-SVC, ε-SVR): the cvxpy formulations are linear in a
feature matrix Φ (X for the linear kernel, φ(X) for an explicit feature map, the
pivoted Cholesky factor L of K otherwise), and the quadratic term βᵀKβ is written
in the fastest exact form.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import numpy as np
import scipy.sparse as sp
from scipy.linalg import lapack

from ..exceptions import SolverError
from ..kernels import Kernel, make_kernel, n_polynomial_features, polynomial_features, row_sq_norms
from ..kernels.expansion import KINDS, evaluate, joint_expansion
from ..lazy import lazy_module
from ..parallel import all_blas_threads
from ..validation import check_precomputed_kernel

if TYPE_CHECKING:
    import cvxpy as cp
else:
    cp = lazy_module("cvxpy")  # imported on first use: the cvxpy forms only

__all__ = ["KernelData", "kernel_factor", "check_scale", "QUAD_FORMS", "PSDReport",
           "PSDTest", "PSD_EXACT_MAX"]

#: How the dual's quadratic term βᵀKβ can be written (:meth:`KernelData.quadratic`).
QUAD_FORMS = ("auto", "features", "quad_form", "factor")
#: samples up to which :meth:`KernelData.rounding_level` reads the kernel matrix itself
#: (the default of its ``exact_max``)
ROUNDING_EXACT_MAX = 2500
#: A polynomial kernel on dense data has its feature map (the scaled monomials,
#: :func:`~margin_opt.kernels.polynomial_features`) computed for the primal refinement
#: and the certificate (:meth:`KernelData.w_basis`) up to this many monomials (a cubic
#: kernel in 10 features has 286) …
POLY_FEATURES_MAX = 300
#: … and this many entries of Φ (32 MB).
POLY_FEATURES_CELLS = 2 ** 22


#: Up to this many samples the PSD test of a kernel matrix is exact (one Cholesky):
#: the default of :attr:`PSDTest.exact_max`.
PSD_EXACT_MAX = 4000


@dataclass(frozen=True)
class PSDTest:
    """How the PSD test of a kernel matrix (:meth:`KernelData.psd_report`) is run.

    Parameters
    ----------
    exact_max : int, default=4000
        Samples up to which the whole matrix is tested (one Cholesky factorization of
        K + δI, the smallest eigenvalue when it fails): O(n³) time, n² doubles of
        memory (4000 samples: 128 MB, about half a second on one core).
    sample : int, default=1000
        Beyond ``exact_max``, the size (points) of each random principal submatrix
        tested instead.  A non-PSD submatrix proves K is not PSD; PSD ones prove
        nothing.
    n_samples : int, default=8
        The number of such submatrices (drawn with seed 0).

    Raises
    ------
    ValueError
        ``exact_max`` < 0, ``sample`` < 1 or ``n_samples`` < 1.
    """

    exact_max: int = PSD_EXACT_MAX
    sample: int = 1000
    n_samples: int = 8

    def __post_init__(self):
        if int(self.exact_max) < 0 or int(self.sample) < 1 or int(self.n_samples) < 1:
            raise ValueError(f"PSDTest needs exact_max >= 0, sample >= 1 and n_samples >= 1, "
                             f"got {self}.")


class KernelData:
    """Data X with a kernel; computes K, its factor and Kβ once and on demand.

    Parameters
    ----------
    X : {ndarray, csr_matrix} of shape (n_samples, n_features)
        Validated data (the Gram matrix for ``kernel="precomputed"``).
    kernel, gamma, degree, coef0 : see :func:`margin_opt.kernels.make_kernel`
    feature_map : callable, optional
        Explicit feature map φ; the kernel is then φ(x)ᵀφ(z).
    scale_checked : bool, default=False
        The caller has run :func:`check_scale` on these rows already (e.g. on the
        whole training set of which X is a subset): not repeated.
    centred : bool, default=False
        Dense X is already centred for the RBF kernel's distances (rows of data the
        caller centred once, e.g. the pairs of a one-vs-one fit): no shift of its own
        (the kernel is translation invariant, so the values are K's either way; the
        centring only keeps ‖x‖² + ‖z‖² − 2xᵀz from cancelling).
    psd_test : PSDTest, optional
        How :meth:`psd_report` tests K (default ``PSDTest()``: exact up to 4000
        samples, else 8 sampled 1000-point principal submatrices).
    centre_linear : bool, default=False
        The problem has an intercept (Σⱼβⱼ = 0), which makes the linear kernel
        translation invariant as RBF is: for dense X its sums are computed on the
        centred data X − m (m the mean row), Kβ = (X − m)v + (m·v)1 with
        v = Xᵀβ = (X − m)ᵀβ + (Σβ)m, exact for any β, and the standard form (SMO, the
        active-set refinement) is posed on X − m, whose intercept differs by m·w
        (:meth:`standard_intercept_shift`).  On features offset far from the origin
        (1e4) the sums then keep their precision: f is known to u·Σⱼ|(xᵢ − m)·(xⱼ − m)βⱼ|
        instead of u·Σⱼ|xᵢ·xⱼβⱼ|.  The kernel matrix, w, b and every answer stay those
        of the user's uncentred X.

    Raises
    ------
    ValueError
        Bad kernel parameters, a bad precomputed kernel or feature map output.
    """

    def __init__(self, X, kernel="linear", *, gamma="scale", degree=3, coef0=0.0,
                 feature_map=None, scale_checked=False, centred=False,
                 psd_test: PSDTest | None = None, centre_linear=False):
        if psd_test is not None and not isinstance(psd_test, PSDTest):
            raise TypeError(f"psd_test must be a PSDTest, got {type(psd_test).__name__}.")
        self.psd_test = PSDTest() if psd_test is None else psd_test
        self.feature_map = feature_map
        if feature_map is not None:
            Phi = np.asarray(feature_map(X), dtype=float)
            if Phi.ndim != 2 or Phi.shape[0] != X.shape[0] or not np.all(np.isfinite(Phi)):
                raise ValueError("feature_map(X) must return a finite array of shape "
                                 f"(n_samples, n_features_mapped); got shape {Phi.shape}.")
            self.kernel = Kernel("callable", func=lambda A, B: feature_map(A) @ feature_map(B).T)
            self._features = Phi
        else:
            if kernel == "precomputed":      # the string: validated PSD here
                X = check_precomputed_kernel(X)
                self._validated_psd = True
            self.kernel = make_kernel(kernel, X, gamma=gamma, degree=degree, coef0=coef0)
            if self.kernel.name == "rbf" and not centred and not sp.issparse(X) and X.shape[0]:
                # translation invariant: distances on centred data keep their precision
                self.kernel = replace(self.kernel, shift=X.mean(axis=0))
            self._features = X if self.kernel.is_linear else None
        self._centre = None
        if centre_linear and self.kernel.name == "linear" and not sp.issparse(X) \
                and X.ndim == 2 and X.shape[0]:
            self._centre = X.mean(axis=0)
            self._centred_X = X - self._centre
        self.X = X
        self._gram = None
        self._gram_symmetric = False      # use_gram(symmetric=True): Kβ reads rows
        self._factor = None
        self._psd = None
        self._validated_psd = getattr(self, "_validated_psd", False)
        if self.kernel.name not in ("precomputed", "callable") and not scale_checked:
            check_scale(X, self.kernel)

    @property
    def n_samples(self) -> int:
        return self.X.shape[0]

    @property
    def explicit_w(self) -> bool:
        """True when w lives in an explicit feature space (linear kernel or feature map)."""
        return self._features is not None

    def w_basis(self):
        """The matrix Φ in whose coordinates an answer's ``w`` is read, or None.

        The features of an explicit w (:meth:`features`); for a polynomial kernel of few
        monomials (:data:`POLY_FEATURES_MAX`) on dense data its scaled monomials
        (:func:`~margin_opt.kernels.polynomial_features`, computed once), so that an
        answer refined in the primal can carry w and have f = Φw read to u·Σₖ|Φᵢₖwₖ|
        (on unscaled data far more precisely than f = Kβ); None otherwise.  The
        cvxpy forms and SMO do not use the monomials.
        """
        if self._features is not None:
            return self._features
        if "_monomials" not in self.__dict__:
            self._monomials = _monomials(self.X, self.kernel) if self.feature_map is None \
                else None
        return self._monomials

    def gram(self) -> np.ndarray:
        """The kernel matrix K of shape (n_samples, n_samples), computed once."""
        if self._gram is None:
            self._gram = self.kernel.gram(self.X)
        return self._gram

    def use_gram(self, K, *, symmetric=False) -> None:
        """Take the kernel matrix from the caller instead of computing it.

        For sub-problems of a larger one (the pairs of a one-vs-one fit): their
        kernel matrix is a block of a matrix computed once.

        Parameters
        ----------
        K : ndarray of shape (n_samples, n_samples)
            K(X, X) for this data and kernel (not checked beyond its shape: the
            caller vouches for it); kept, not copied.
        symmetric : bool, default=False
            The caller vouches that K is exactly symmetric (Kᵢⱼ is the very value of
            Kⱼᵢ, as in the one-vs-one pairs' blocks): Kβ over few nonzero βⱼ then reads
            those rows of K instead of its columns (contiguous memory: ~10× faster on
            a matrix just written by another thread, 360 × 360 with 30 nonzeros).

        Raises
        ------
        ValueError
            A matrix of the wrong shape.
        """
        K = np.asarray(K, dtype=np.float64)
        if K.shape != (self.n_samples, self.n_samples):
            raise ValueError(f"the kernel matrix must have shape {(self.n_samples,) * 2}, got "
                             f"{K.shape}.")
        self._gram = K
        self._gram_symmetric = bool(symmetric)
        self.__dict__.pop("_last_combination", None)
        self.__dict__.pop("_last_weights", None)

    @property
    def psd_by_construction(self) -> bool:
        """True when K is PSD by theorem: linear, RBF, polynomial with γ > 0 and coef0 ≥ 0,
        an explicit feature map, or a precomputed matrix validated PSD at construction
        (``kernel="precomputed"``; a ``Kernel("precomputed")`` object is not validated
        and is checked like a callable)."""
        k = self.kernel
        return (self.feature_map is not None or k.name in ("linear", "rbf")
                or self._validated_psd or (k.name == "poly" and k.coef0 >= 0))

    def psd_report(self) -> PSDReport:
        """Whether K is positive semidefinite on this data, checked once.

        PSD-by-construction kernels are not checked.  Otherwise, up to
        ``psd_test.exact_max`` samples (:class:`PSDTest`), a Cholesky factorization of
        K + δI (δ = 1e-10·n·max(1, max|Kᵢⱼ|), the rounding of K) proves λ_min ≥ −δ, and
        when it fails the smallest eigenvalue is computed (Lanczos); beyond,
        ``psd_test.n_samples`` principal submatrices of ``psd_test.sample`` random points
        are tested the same way — a non-PSD one proves K is not PSD, while PSD samples
        prove nothing.

        Returns
        -------
        report : PSDReport
        """
        if self._psd is None:
            self._psd = _psd_report(self, self.psd_test)
        return self._psd

    def require_psd(self) -> None:
        """ValueError unless K is PSD (the cvxpy forms need a convex problem)."""
        rep = self.psd_report()
        if rep.psd is False:
            raise ValueError(
                f"the {self.kernel.describe()} kernel matrix is not positive semidefinite on "
                f"this data (smallest eigenvalue {rep.lambda_min:.3g}), so the problem is not "
                "convex: the cvxpy forms and the kernel factor K = LLᵀ need a PSD kernel. The "
                "sigmoid kernel is indefinite for most "
                "gamma/coef0: use rbf/poly, a smaller gamma with a negative coef0, or a PSD "
                "precomputed kernel; SMO still finds a stationary point.")

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
        self.require_psd()
        if self._factor is None:
            self._factor = kernel_factor(self.gram())
        return self._factor

    def weights(self, beta) -> np.ndarray:
        """w = Φᵀβ in the coordinates of :meth:`features`.

        The last result is remembered (reading an answer and certifying it ask for the
        same w); a copy is returned either way.

        Parameters
        ----------
        beta : array-like of shape (n_samples,) or (n_samples, k)
            Coefficients of the training points; k columns give k weight vectors in
            one product (the Crammer–Singer problem's classes).

        Returns
        -------
        w : ndarray of shape (r,) or (r, k)
            r = n_features for the linear kernel, the rank of the factor otherwise.
        """
        beta = np.asarray(beta, dtype=float)
        memo = self.__dict__.get("_last_weights")
        if memo is not None and np.array_equal(memo[0], beta):
            return memo[1].copy()
        if self._centre is not None:
            if beta.ndim == 1:
                w = self._centred_X.T @ beta + math.fsum(beta) * self._centre
            else:
                sums = np.array([math.fsum(col) for col in beta.T])
                w = self._centred_X.T @ beta + np.outer(self._centre, sums)
        else:
            w = np.asarray(self.features().T @ beta)
            w = w.ravel() if beta.ndim == 1 else w
        self._last_weights = (beta.copy(), w.copy())
        return w

    def backend_data(self):
        """``(X, kernel)`` on which a dual backend (SMO) is run: the centred data for a
        linear kernel with ``centre_linear`` (the same dual on the feasible set, its
        sums precise on features offset far from the origin; its intercept differs from
        the user's by :meth:`standard_intercept_shift`), else
        :meth:`standard_form_data`."""
        return (self._centred_X, self.kernel) if self._centre is not None \
            else self.standard_form_data()

    def standard_intercept_shift(self, *, w=None, beta=None) -> float:
        """m·w: the intercept of a backend run on :meth:`backend_data` (on X − m, see
        ``centre_linear``) minus the user's, for weights ``w`` (or those of
        coefficients ``beta``); 0 where the backend runs on X itself."""
        if self._centre is None:
            return 0.0
        w = self.weights(beta) if w is None else np.asarray(w, dtype=float)
        return float(self._centre @ w)

    def combination(self, beta) -> np.ndarray:
        """Kβ = Σⱼ βⱼK(·, xⱼ) on the training points.

        Parameters
        ----------
        beta : array-like of shape (n_samples,) or (n_samples, k)
            Coefficients; k columns give KB in one pass.

        Returns
        -------
        f : ndarray of shape (n_samples,) or (n_samples, k)
            A copy (the remembered result is never handed out).

        Notes
        -----
        Computed from β alone (never from a solver's gradient): for poly, rbf and
        sigmoid as the kernel expansion over the support at the training points, by
        the compiled kernel engine (:func:`margin_opt.kernels.expansion.evaluate`:
        blocks, BLAS, the core's threads, memory O(block + n·d); RBF distances on
        centred data, small ones recomputed exactly).
        The last result is remembered, so that reading an answer and certifying it
        compute Kβ once.
        """
        beta = np.asarray(beta, dtype=float)
        memo = self.__dict__.get("_last_combination")
        if memo is not None and np.array_equal(memo[0], beta):
            return memo[1].copy()
        nz = np.flatnonzero(beta if beta.ndim == 1 else np.any(beta != 0, axis=1))
        if self._centre is not None:
            v = self.weights(beta)
            f = self._centred_X @ v + self._centre @ v
        elif self.explicit_w:
            f = np.asarray(self._features @ self.weights(beta))
            f = f.ravel() if beta.ndim == 1 else f
        elif self._gram is not None:
            # a product with the whole matrix beats copying out a quarter of its
            # columns or more (365 × 365, 150 columns: 18 µs against 66 µs)
            if self._gram_symmetric and 2 * nz.size < self.n_samples:
                f = self._gram[nz].T @ beta[nz]         # Kβ = Kᵀβ: the rows are contiguous
            elif 4 * nz.size >= self.n_samples:
                f = self._gram @ beta
            else:
                f = self._gram[:, nz] @ beta[nz]
        elif nz.size == 0:
            return np.zeros(beta.shape)
        elif self.kernel.name in KINDS:
            coefs = beta[nz, None] if beta.ndim == 1 else beta[nz]
            f = evaluate(self.kernel, self.X, self.X[nz],
                         joint_expansion(coefs.T, np.zeros(coefs.shape[1])))
            f = f[:, 0] if beta.ndim == 1 else f
        else:
            f = self.kernel.rows(self.X, nz).T @ beta[nz]
        self._last_combination = (beta.copy(), f.copy())
        return f

    def diag_root(self) -> np.ndarray:
        """√max(Kᵢᵢ, 0) of every training point, shape (n_samples,), computed once (the
        Cauchy–Schwarz bound |Kᵢⱼ| ≤ √(KᵢᵢKⱼⱼ) of a PSD kernel)."""
        if "_diag_root" not in self.__dict__:
            diag = np.diagonal(self._gram) if self._gram is not None else \
                self.kernel.diag(self.X)
            self._diag_root = np.sqrt(np.maximum(np.asarray(diag, dtype=float), 0.0))
        return self._diag_root

    def rounding_level(self, beta, exact=True, *, exact_max=ROUNDING_EXACT_MAX,
                       uncentred=False) -> tuple:
        """How precisely f = Kβ is known in double precision: u·maxᵢ Σⱼ |Kᵢⱼβⱼ|.

        Every residual a certificate reads from f (margins, the m − M gap,
        complementarity) carries rounding errors of this order, whoever computes f:
        a tolerance below it cannot be met or checked in double precision (kernel
        entries ~1e7 from unscaled features, times multipliers ~1e3, put it near 1e-5).
        Exact from the kernel matrix up to ``exact_max`` samples (or when it is at
        hand), else the Cauchy–Schwarz bound |Kᵢⱼ| ≤ √(KᵢᵢKⱼⱼ) of a PSD kernel.

        Parameters
        ----------
        beta : ndarray of shape (n_samples,)
        exact : bool, default=True
            False: the bound (no product with the kernel matrix, its diagonal only),
            unless the matrix is at hand and the kernel may be indefinite.
        exact_max : int, default=2500
            Samples up to which the kernel matrix is computed for the exact level when
            it is not at hand (n² doubles: 2500 samples, 50 MB); beyond, the bound
            (a precomputed kernel is always read exactly).
        uncentred : bool, default=False
            For a linear kernel summed on centred data (``centre_linear``): the level of
            the sums on the user's X instead, u·maxᵢ Σⱼ|xᵢ·xⱼ βⱼ| — how precisely
            ``dual_coef_ @ support_vectors_`` itself is known.

        Returns
        -------
        level : float
        k_max : float
            The largest |Kᵢⱼ| with βⱼ ≠ 0 (beyond the exact size its bound
            max √Kᵢᵢ · max √Kⱼⱼ).
        """
        signed = np.asarray(beta, dtype=float)
        beta = np.abs(signed)
        nz = np.flatnonzero(beta)
        if nz.size == 0:
            return 0.0, 0.0
        u = np.finfo(float).eps / 2
        if self._centre is not None and not uncentred:
            # Kβ = (X − m)v + (m·v)1: the centred sums, then one constant
            Xc = self._centred_X
            root = np.sqrt(np.einsum("ij,ij->i", Xc, Xc))
            if exact and self.n_samples <= exact_max:
                Ks = np.abs(Xc @ Xc[nz].T)
                sums = Ks @ beta[nz]
                k_max = float(Ks.max())
            else:
                sums = root * float(root[nz] @ beta[nz])
                k_max = float(root.max() * root[nz].max())
            # the constant m·v (v = (X − m)ᵀβ + (Σβ)m, Σβ summed exactly): its rounding
            sigma = abs(math.fsum(signed))
            v = np.abs(Xc[nz]).T @ beta[nz] + sigma * np.abs(self._centre)
            const = float(np.abs(self._centre) @ v)
            return float(u * (sums.max() + const)), k_max
        K = self._gram
        # the bound needs |Kᵢⱼ| ≤ √(KᵢᵢKⱼⱼ): a matrix at hand of a kernel that may be
        # indefinite (sigmoid, precomputed) is read exactly
        if exact or (K is not None and not self.psd_by_construction):
            if K is None and (self.n_samples <= exact_max
                              or self.kernel.name == "precomputed"):
                K = self.gram()
            if K is not None:
                Ks = np.abs(K[:, nz])
                return float(u * (Ks @ beta[nz]).max()), float(Ks.max())
        root = self.diag_root()
        return float(u * root.max() * (root[nz] @ beta[nz])), float(root.max() * root[nz].max())

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
        else ``quad_form`` (measured fastest by ``margin-opt bench cvxpy-dual``).
        """
        self.require_psd()
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
            Phi = self.w_basis()
            if Phi is None or Phi.shape[1] != w.size:
                raise ValueError(f"the solution's w has {w.size} coordinates, but this "
                                 "problem's explicit features have "
                                 f"{'none' if Phi is None else Phi.shape[1]}.")
            w_dual = np.asarray(Phi.T @ beta).ravel()
            return (np.asarray(Phi @ w).ravel(), 0.5 * float(w @ w),
                    float(np.abs(w - w_dual).max(initial=0.0)) / max(1.0, np.abs(w).max()),
                    "‖w − Σβᵢφ(xᵢ)‖∞ / max(1, ‖w‖∞)")
        if w_factor is not None:
            fp = self.features() @ w_factor
            return (fp, 0.5 * float(w_factor @ w_factor),
                    float(np.abs(fp - f0).max()) / max(1.0, np.abs(f0).max()),
                    "‖f_primal − f_dual‖∞ / max(1, ‖f‖∞) (kernel)")
        return f0, 0.5 * float(beta @ f0), 0.0, "holds by construction (kernel, dual point)"

    def standard_form_data(self):
        """``(X, kernel)`` for a :class:`~margin_opt.standard_forms.DualQP`, formed once
        (the centred copy of RBF data is shared by the standard forms; never modified)."""
        if "_standard_form_data" not in self.__dict__:
            if self.feature_map is not None:
                out = self._features, make_kernel("linear")
            elif self.kernel.shift is not None:
                out = self.X - self.kernel.shift, replace(self.kernel, shift=None)
            else:
                out = self.X, self.kernel
            self._standard_form_data = out
        return self._standard_form_data


def _monomials(X, kernel):
    """Φ of a polynomial kernel with few monomials on dense data, else None."""
    if kernel.name != "poly" or sp.issparse(X) or kernel.coef0 < 0 or X.ndim != 2:
        return None
    n_mono = n_polynomial_features(X.shape[1], kernel.degree, kernel.coef0)
    if n_mono > POLY_FEATURES_MAX or n_mono * X.shape[0] > POLY_FEATURES_CELLS:
        return None
    return polynomial_features(X, kernel.gamma, kernel.coef0, kernel.degree)


def check_scale(X, kernel):
    """ValueError when the kernel values of X overflow float64 (e.g. features ×1e200)."""
    sq = row_sq_norms(X)
    with np.errstate(over="ignore"):
        m = float(np.max(sq, initial=0.0))
        if kernel.name == "poly":
            try:
                m = (kernel.gamma * m + abs(kernel.coef0)) ** kernel.degree
            except OverflowError:       # a Python float's power raises rather than inf
                m = np.inf
        finite = np.isfinite(m) and np.isfinite(4.0 * m)
    if not finite:
        what = ("the features are too large" if kernel.name != "poly" else
                "the features, gamma or degree are too large")
        lower = "; or lower gamma or degree" if kernel.name == "poly" else ""
        raise ValueError(
            f"{what} for the {kernel.describe()} kernel: its values overflow float64 "
            f"(largest ‖x‖² is {float(np.max(sq, initial=0.0)):.3g}). Scale the features, "
            f"e.g. with sklearn.preprocessing.StandardScaler{lower}.")


@dataclass(frozen=True)
class PSDReport:
    """The PSD test of a kernel matrix.

    Attributes
    ----------
    psd : bool or None
        True: PSD (by construction, or proved by a Cholesky of K + δI); False: not
        PSD (proved by a matrix or a principal submatrix); None: not decided (only
        submatrices were tested and they were PSD).
    lambda_min : float
        The smallest eigenvalue found (of K or of the failing submatrix); 0 when
        not computed.
    scale : float
        max(1, largest |eigenvalue| bound) used to normalize it.
    method : str
        How it was decided.
    """

    psd: bool | None
    lambda_min: float
    scale: float
    method: str


def _cholesky_shifted(K) -> bool:
    """Whether LAPACK factorizes K + δI, δ = 1e-10·n·max(1, max|K|), from K's lower
    triangle (as :func:`numpy.linalg.eigvalsh` reads it).  The one copy is of Kᵀ in
    Fortran order, the layout LAPACK takes, whose upper triangle is K's lower one
    (K + δ·eye in C order made two more of n²: n = 4000, 0.56 → 0.48 s on one thread,
    peak 244 → 122 MB)."""
    delta = 1e-10 * K.shape[0] * max(1.0, float(np.abs(K).max(initial=0.0)))
    A = np.asarray(K, dtype=np.float64).T.copy(order="F")
    A[np.diag_indices_from(A)] += delta
    _, info = lapack.dpotrf(A, lower=0, clean=0, overwrite_a=1)
    return info == 0


def _lambda_min(K) -> float:
    from scipy.sparse.linalg import eigsh

    if K.shape[0] <= 200:
        return float(np.linalg.eigvalsh(K)[0])
    return float(eigsh(K, k=1, which="SA", return_eigenvectors=False)[0])


def _psd_report(data, test: PSDTest) -> PSDReport:
    if data.psd_by_construction:
        return PSDReport(True, 0.0, 1.0, "PSD by construction")
    # a factorization of up to 4000 × 4000: on all of BLAS's threads, even within a solve
    with all_blas_threads():
        return _psd_test(data, test)


def _psd_test(data, test: PSDTest) -> PSDReport:
    n = data.n_samples
    if n <= test.exact_max:
        K = data.gram()
        scale = max(1.0, float(np.abs(K).max(initial=0.0)) * n)
        if _cholesky_shifted(K):
            return PSDReport(True, 0.0, scale, "Cholesky of K + δI")
        return PSDReport(False, _lambda_min(K), scale, f"smallest eigenvalue of K (n = {n})")
    rng = np.random.default_rng(0)
    for _ in range(test.n_samples):
        idx = np.sort(rng.choice(n, test.sample, replace=False))
        if data.kernel.name == "precomputed":        # X is the kernel matrix
            K = data.kernel.rows(data.X, idx)[:, idx]
        else:
            K = data.kernel(data.X[idx], data.X[idx])
        if not _cholesky_shifted(K):
            return PSDReport(False, _lambda_min(K), max(1.0, float(np.abs(K).max()) * test.sample),
                             f"a {test.sample}-point principal submatrix")
    return PSDReport(None, 0.0, 1.0, f"{test.n_samples} sampled {test.sample}-point principal "
                     f"submatrices were PSD; n = {n} > {test.exact_max} was not tested whole")


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
