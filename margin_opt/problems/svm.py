"""The binary C-SVC (and hard-margin SVM) as explicit cvxpy problems.

Primal (slack form)::

    min_{w, b, ξ}  ½‖w‖² + Σᵢ Cᵢ ξᵢ   s.t.  yᵢ(wᵀφ(xᵢ) + b) ≥ 1 − ξᵢ,  ξᵢ ≥ 0

(hinge form: ``min ½‖w‖² + Σᵢ Cᵢ max(0, 1 − yᵢ f(xᵢ))``; hard margin: C = ∞, no ξ).

Dual::

    max_α  1ᵀα − ½ αᵀQα   s.t.  0 ≤ αᵢ ≤ Cᵢ,  yᵀα = 0,   Qᵢⱼ = yᵢyⱼK(xᵢ, xⱼ)

(no equality without intercept, no upper bound for the hard margin).

References
----------
C. Cortes and V. Vapnik, "Support-vector networks", Machine Learning 20, 1995.
B. Schölkopf and A. J. Smola, *Learning with Kernels*, MIT Press, 2002, ch. 7.
C.-C. Chang and C.-J. Lin, "LIBSVM: a library for support vector machines",
ACM TIST 2(3), 2011.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from sklearn.utils.class_weight import compute_class_weight

from ..exceptions import NotSeparableError
from ..lazy import lazy_module
from ..losses import Hinge
from ..solution import SVCVariables
from ..validation import (
    check_binary_labels,
    check_bool,
    check_box_bounds,
    check_C,
    check_data,
    check_positive,
    check_sample_weight,
)
from . import svm_kkt
from .base import KernelProblem
from .kernel_data import KernelData

if TYPE_CHECKING:
    import cvxpy as cp
else:
    cp = lazy_module("cvxpy")  # imported on first use: the cvxpy forms only

__all__ = ["SVMProblem"]


class SVMProblem(KernelProblem):
    """The binary soft-margin (C-SVC) or hard-margin SVM as an explicit problem.

    Parameters
    ----------
    X : {array-like, sparse matrix} of shape (n_samples, n_features)
        Training data; for ``kernel="precomputed"`` the Gram matrix of shape
        (n_samples, n_samples).  Copied/converted, never modified.
    y : array-like of shape (n_samples,)
        Two distinct labels.  ``classes_[0]`` (the smaller, as sorted by
        ``np.unique``) becomes −1 and ``classes_[1]`` becomes +1, as in
        scikit-learn (``decision_function > 0`` means ``classes_[1]``).
    C : float, default=1.0
        Penalty of the slacks, > 0; ``np.inf`` poses the hard margin.
    kernel : {"linear", "poly", "rbf", "sigmoid", "precomputed"} or callable, default="linear"
    gamma : {"scale", "auto"} or float, default="scale"
    degree : int, default=3
    coef0 : float, default=0.0
    fit_intercept : bool, default=True
        Whether there is an (unregularized) intercept b; without it the dual has
        no equality constraint.
    sample_weight : array-like of shape (n_samples,), optional
        Non-negative weights; sample i gets the box bound Cᵢ = C·sᵢ·c_{yᵢ}.
    class_weight : dict, "balanced" or None, default=None
        Per-class multipliers c of C, as in scikit-learn.
    feature_map : callable, optional
        An explicit feature map φ: X of shape (n, d) -> ndarray of shape (n, D).
        The primal is then linear in φ(x) with an explicit ``w`` of shape (D,),
        and the kernel is φ(x)ᵀφ(z) (``kernel`` is ignored).
    psd_test : PSDTest, optional
        How the kernel matrix is tested for positive semidefiniteness when its kernel
        is not PSD by construction (:class:`~margin_opt.problems.kernel_data.PSDTest`;
        default ``PSDTest()``).

    Attributes
    ----------
    y : ndarray of shape (n_samples,)
        Labels mapped to ±1.
    classes_ : ndarray of shape (2,)
    C_i : ndarray of shape (n_samples,)
        Per-sample box bounds (``inf`` for the hard margin).
    kernel : Kernel
        The resolved kernel.

    Raises
    ------
    ValueError
        On bad input: NaN/inf, empty X, one or three classes, mismatched lengths,
        C ≤ 0, gamma ≤ 0, negative sample weights, a precomputed kernel of the
        wrong shape or not PSD.

    Notes
    -----
    For a non-linear kernel the primal is written in the representer form
    ``f = Kβ + b`` with regularizer ``½βᵀKβ``, through a factor ``K = LLᵀ``
    (LAPACK's pivoted Cholesky, exact to rounding, rank r ≤ n): with
    ``w = Lᵀβ`` of shape (r,), ``f = Lw + b`` and ``½βᵀKβ = ½‖w‖²``.  The
    variable ``w`` is thus the weight vector in the coordinates of the
    *empirical feature map* x ↦ L[i]; ``Solution.w`` stays None (no input-space w).
    """

    def __init__(self, X, y, *, C=1.0, kernel="linear", gamma="scale", degree=3, coef0=0.0,
                 fit_intercept=True, sample_weight=None, class_weight=None, feature_map=None,
                 psd_test=None):
        X, y_raw = check_data(X, y)
        y_pm, classes = check_binary_labels(y_raw)
        data = KernelData(X, kernel, gamma=gamma, degree=degree, coef0=coef0,
                          feature_map=feature_map, psd_test=psd_test,
                          centre_linear=bool(fit_intercept))
        self._assign(data, y_pm, classes, C, fit_intercept,
                     check_sample_weight(sample_weight, data.X))
        if class_weight is not None:
            cw = compute_class_weight(class_weight, classes=np.array([-1.0, 1.0]), y=self.y) \
                if class_weight == "balanced" else self._class_weight_dict(class_weight)
            self._set_weights(self._instance_weight * np.where(self.y > 0, cw[1], cw[0]))

    @classmethod
    def from_validated(cls, X, y, *, C, kernel, fit_intercept=True, sample_weight,
                       gram=None, scale_checked=False, centred=False,
                       psd_test=None, centre_linear=True) -> SVMProblem:
        """The problem on data that is already validated, e.g. one pair of a one-vs-one fit.

        The constructor's input checks are skipped (they cost more than solving a small
        pair): the caller vouches for the arguments.

        Parameters
        ----------
        X : {ndarray, csr_matrix} of shape (n_samples, n_features)
            Finite float64 data; for a precomputed kernel the Gram block
            (n_samples, n_samples).
        y : ndarray of shape (n_samples,)
            Labels ±1 (both present).
        C : float
        kernel : Kernel
            Resolved (e.g. ``gamma`` from the whole training set).
        fit_intercept : bool, default=True
        sample_weight : ndarray of shape (n_samples,)
            Finite weights ≥ 0 (class weights included).
        gram : ndarray of shape (n_samples, n_samples), optional
            The kernel matrix, when the caller has it (:meth:`KernelData.use_gram`).
        scale_checked : bool, default=False
            The caller has run :func:`~margin_opt.problems.kernel_data.check_scale` on
            rows including these (e.g. the whole training set of a one-vs-one fit).
        centred : bool, default=False
            X is already centred for the RBF distances (see
            :class:`~margin_opt.problems.kernel_data.KernelData`).
        psd_test : PSDTest, optional
            As the constructor's.
        centre_linear : bool, default=True
            With an intercept, a linear kernel's sums and standard form on centred data
            (:class:`~margin_opt.problems.kernel_data.KernelData`); False where the
            caller's solver runs on the uncentred kernel matrix (shared blocks).

        Returns
        -------
        problem : SVMProblem
            With ``classes_ = [-1, 1]``.

        Raises
        ------
        ValueError
            C ≤ 0, zero weights under the hard margin, or features whose kernel values
            overflow (unless ``scale_checked``).
        """
        problem = cls.__new__(cls)
        data = KernelData(X, kernel, scale_checked=scale_checked, centred=centred,
                          psd_test=psd_test,
                          centre_linear=centre_linear and gram is None and bool(fit_intercept))
        if gram is not None:
            data.use_gram(gram)
        problem._assign(data, np.asarray(y, dtype=float), np.array([-1.0, 1.0]), C,
                        fit_intercept, sample_weight)
        return problem

    def _assign(self, data, y_pm, classes, C, fit_intercept, sample_weight):
        self.y, self.classes_ = y_pm, classes
        self.C = check_C(C)
        self.hard_margin = bool(np.isinf(self.C))
        self.fit_intercept = check_bool(fit_intercept, "fit_intercept")
        self.data = data
        self.feature_map = data.feature_map
        self.kernel = data.kernel
        self.X = data.X
        self._instance_weight = sample_weight
        self._set_weights(sample_weight)

    def _set_weights(self, sw):
        if self.hard_margin and np.any(sw == 0):
            raise ValueError("the hard margin (C = inf) needs positive sample and class "
                             "weights: a weight of 0 would drop the point's constraint; remove "
                             "those points instead, or use a finite C.")
        self.sample_weight = sw
        self.C_i = check_box_bounds(self.C, sw)

    def _class_weight_dict(self, class_weight):
        if not isinstance(class_weight, dict):
            raise ValueError("class_weight must be a dict {label: weight}, 'balanced' or None.")
        unknown = [k for k in class_weight if k not in set(self.classes_.tolist())]
        if unknown:
            raise ValueError(f"class_weight has keys {unknown} that are not classes of y "
                             f"({list(self.classes_)}).")
        out = []
        for label in self.classes_:
            wgt = class_weight.get(label, class_weight.get(label.item() if hasattr(label, "item")
                                                           else label, 1.0))
            out.append(check_positive(wgt, f"class_weight[{label!r}]", allow_zero=True))
        return np.array(out)

    # ------------------------------------------------------------------ factories
    @classmethod
    def from_lambda(cls, X, y, lam, **kw):
        """The λ form of the lecture notes, ``λ/2‖w‖² + (1/n) Σᵢ max(0, 1 − yᵢ(wᵀxᵢ + b))``.

        It is the C form with ``C = 1/(λn)`` and the intercept not regularized:
        its minimizers (w, b) are the same and ``J* = λ P*`` where P* is the C-form
        optimum ``½‖w‖² + C Σ ξᵢ``.

        Parameters
        ----------
        X, y : see :class:`SVMProblem`
        lam : float
            Regularization strength λ > 0.
        **kw
            Other :class:`SVMProblem` parameters (not ``C``).

        Returns
        -------
        problem : SVMProblem

        Raises
        ------
        ValueError
            If λ ≤ 0 or ``C`` is passed as well.
        """
        lam = check_positive(lam, "lam")
        if "C" in kw:
            raise ValueError("from_lambda sets C = 1/(lam n); do not pass C as well.")
        n = np.shape(y)[0]
        return cls(X, y, C=1.0 / (lam * n), **kw)

    model = "svc"
    dual_names = ("alpha",)
    formulations = ("slack", "hinge")
    variables_type = SVCVariables
    certificate_name = "SVM"

    @property
    def title(self) -> str:
        """``"hard-margin SVM"`` or ``"C-SVC"``."""
        return "hard-margin SVM" if self.hard_margin else "C-SVC"

    def decision_from_dual(self, alpha, b) -> np.ndarray:
        """f(xᵢ) = Σⱼ αⱼyⱼK(xᵢ, xⱼ) + b on the training points, shape (n_samples,)."""
        return self.data.combination(self.y * alpha) + b

    # ------------------------------------------------------------------ cvxpy forms
    def primal(self, formulation: str = "slack") -> cp.Problem:
        """The primal as a cvxpy Problem with variables named ``w``, ``b`` and ``xi``.

        Parameters
        ----------
        formulation : {"slack", "hinge"}, default="slack"
            ``slack``: ½‖w‖² + Σ Cᵢξᵢ with margin constraints ``yᵢfᵢ ≥ 1 − ξᵢ``
            (constraint 0, whose dual values are α) and ``ξ ≥ 0``; ``hinge``: the
            unconstrained ½‖w‖² + Σ Cᵢ max(0, 1 − yᵢfᵢ).  The hard margin has the
            constraints ``yᵢfᵢ ≥ 1`` in both.

        Returns
        -------
        problem : cvxpy.Problem
            Minimization; ``problem.var_dict`` holds ``w`` (and ``b``, ``xi``).

        Raises
        ------
        ValueError
            Unknown formulation.
        """
        Phi, w, b = self._primal_variables(formulation)
        yf = cp.multiply(self.y, Phi @ w + b)
        reg = 0.5 * cp.sum_squares(w)
        if self.hard_margin:
            return cp.Problem(cp.Minimize(reg), [yf >= 1])
        if formulation == "slack":
            xi = cp.Variable(self.n_samples, name="xi")
            return cp.Problem(cp.Minimize(reg + self.C_i @ xi), [yf >= 1 - xi, xi >= 0])
        return cp.Problem(cp.Minimize(reg + self.C_i @ cp.pos(1 - yf)))

    def dual(self, quad_form: str = "auto") -> cp.Problem:
        """The dual as a cvxpy Problem in the variable ``alpha``.

        ``max 1ᵀα − ½αᵀQα`` s.t. ``α ≥ 0`` (constraint 0), ``α ≤ C`` (constraint 1,
        absent for the hard margin) and ``yᵀα = 0`` (last constraint, absent
        without intercept); each bound is an explicit constraint so its dual value
        exists.

        Parameters
        ----------
        quad_form : {"auto", "features", "quad_form", "factor"}, default="auto"
            How αᵀQα is written.  ``features``: ‖Φᵀ(y∘α)‖² with Φ = X (linear) or
            φ(X); ``quad_form``: ``quad_form(α, psd_wrap(Q))`` with the dense Q;
            ``factor``: ‖Lᵀ(y∘α)‖² with the pivoted Cholesky factor of K.  ``auto``
            is ``features`` where w is explicit, else ``factor`` when K has
            numerical rank ≤ n/4 and ``quad_form`` otherwise — the fastest exact
            forms measured (``margin-opt bench cvxpy-dual``).

        Returns
        -------
        problem : cvxpy.Problem
        """
        alpha = cp.Variable(self.n_samples, name="alpha")
        quad = self.data.quadratic(cp.multiply(self.y, alpha), quad_form)
        cons = [alpha >= 0]
        if not self.hard_margin:
            cons.append(alpha <= self.C_i)
        if self.fit_intercept:
            cons.append(self.y @ alpha == 0)
        return cp.Problem(cp.Maximize(cp.sum(alpha) - 0.5 * quad), cons)

    def _read_cvxpy_dual(self, cvx):
        alpha = np.clip(np.asarray(cvx.var_dict["alpha"].value, dtype=float), 0.0, None)
        b = float(cvx.constraints[-1].dual_value) if self.fit_intercept else 0.0
        return alpha, b

    def _read_cvxpy_primal(self, cvx):
        w = np.asarray(cvx.var_dict["w"].value, dtype=float)
        b = float(cvx.var_dict["b"].value) if self.fit_intercept else 0.0
        alpha = None
        if cvx.constraints:
            alpha = np.clip(np.asarray(cvx.constraints[0].dual_value, dtype=float), 0, None)
        return w, b, alpha

    # ------------------------------------------------------------------ standard forms
    def _math_lines(self, feats):
        n = self.n_samples
        b = " + b" if self.fit_intercept else ""
        if self.hard_margin:
            primal = ["primal (problem.primal(); the hard margin):",
                      "    minimize    ½‖w‖²",
                      f"    subject to  yᵢ(wᵀφ(xᵢ){b}) ≥ 1,   i = 1..{n}"]
            box = "αᵢ ≥ 0"
        else:
            primal = ["primal (problem.primal('slack'); 'hinge': ½‖w‖² + Σ Cᵢ max(0, 1 − yᵢfᵢ)):",
                      "    minimize    ½‖w‖² + Σᵢ Cᵢξᵢ",
                      f"    subject to  yᵢ(wᵀφ(xᵢ){b}) ≥ 1 − ξᵢ,  ξᵢ ≥ 0,   i = 1..{n}"]
            box = "0 ≤ αᵢ ≤ Cᵢ"
        eq = ",  Σᵢ yᵢαᵢ = 0" if self.fit_intercept else ""
        neg, pos = (c.item() if hasattr(c, "item") else c for c in self.classes_)
        counts = int(np.sum(self.y < 0)), int(np.sum(self.y > 0))
        return primal + [f"    with {feats}", "",
                         "dual (problem.dual()):",
                         "    maximize    Σᵢ αᵢ − ½ Σᵢⱼ αᵢαⱼ yᵢyⱼ K(xᵢ, xⱼ)",
                         f"    subject to  {box}{eq}", "",
                         f"labels: {neg!r} → −1 ({counts[0]} samples), {pos!r} → +1 "
                         f"({counts[1]} samples)"]

    def _layout(self) -> dict:
        """C-SVC: ``p = −1``, ``u = Cᵢ`` (inf for the hard margin), yᵀα = 0 with intercept."""
        return dict(y=self.y.copy(), p=-np.ones(self.n_samples), upper=self.C_i.copy(),
                    delta=0.0, equality=self.fit_intercept)

    def _loss(self):
        return Hinge(1.0)

    def _alpha_from_coefficients(self, beta):
        return np.abs(beta)

    def _variables(self, alpha, xi, **kw):
        return SVCVariables(alpha=alpha, xi=xi, **kw)

    def infeasible_error(self, status):
        """:class:`NotSeparableError` for the hard margin, None otherwise."""
        if not self.hard_margin:
            return None
        return NotSeparableError(
            "the hard-margin SVM (C = inf) is infeasible: the data is not linearly separable "
            f"in the feature space (solver status {status}). Use a finite C, e.g. C=1.0 "
            "(the soft margin), or a more flexible kernel.")

    def check_dual_answer(self, alpha, where):
        """Hard margin: multipliers above 1e8 suggest a diverging dual; the separability LP
        decides (:meth:`require_separable`), never the size of α alone."""
        if self.hard_margin and np.max(alpha, initial=0.0) > 1e8:
            self.require_separable()

    def require_separable(self):
        """Hard margin: decide separability rigorously, or raise :class:`NotSeparableError`.

        Solves the separability LP pair on this problem's data
        (:func:`margin_opt.problems.separability.decide`, sharing the kernel matrix);
        the error quotes its verified Farkas certificate: weights on the points whose
        convex hulls meet.

        Returns
        -------
        result : SeparabilityResult
            When separable.

        Raises
        ------
        NotSeparableError
            With the Farkas certificate's support and residual.
        """
        from .separability import SeparabilityProblem, decide

        res = decide(SeparabilityProblem.from_problem(self))
        if not res.separable:
            support = np.flatnonzero(res.farkas)
            raise NotSeparableError(
                "the hard-margin SVM (C = inf) is infeasible: the data is not separable in the "
                f"feature space. A verified Farkas certificate puts weights on {support.size} "
                f"points (e.g. {support[:6].tolist()}) whose convex hulls meet (relative "
                f"residual {res.residual:.1e}). Use a finite C, e.g. C=1.0 (the soft margin), "
                "or a more flexible kernel.")
        return res

    def _check_sklearn(self, estimator):
        if len(getattr(estimator, "classes_", [])) != 2:
            raise ValueError("only a binary scikit-learn SVC can be turned into a Solution.")

    # ------------------------------------------------------------------ certificate
    def _certificate_parts(self, res, alpha, solution, tol):
        return svm_kkt.table(self, res, alpha, solution, tol)

    def __repr__(self) -> str:
        C = "inf (hard margin)" if self.hard_margin else f"{self.C:g}"
        return (f"SVMProblem(n_samples={self.n_samples}, C={C}, kernel={self.kernel.describe()}, "
                f"fit_intercept={self.fit_intercept})")
