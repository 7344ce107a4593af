"""AdaBoost: forward stagewise additive modelling under the exponential loss."""

from __future__ import annotations

import warnings
from collections import deque
from numbers import Integral

import numpy as np
from scipy.special import logsumexp, softmax
from sklearn.base import BaseEstimator, ClassifierMixin, _fit_context, clone
from sklearn.utils import check_random_state, get_tags
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions
from sklearn.utils.validation import check_is_fitted, has_fit_parameter

from ..exceptions import ConvergenceWarning
from ..problems.boosting import (
    EPS_MIN,
    MaxMarginLP,
    StageLineSearch,
    TotallyCorrectiveProblem,
    certify_stagewise,
    closed_form_alpha,
    stage_margins,
)
from ..progress import progress
from ..validation import canonical, check_class_labels, check_sample_weight, validate_data
from ..weak_learners import MulticlassStumpSearch, StumpSearch

__all__ = ["AdaBoost"]

#: A weak learner whose edge γ = ½ − ε is below this is no better than chance
#: (its α would be < 1e-10): round-off must not let a useless learner in.
EDGE_TOL = 1e-10


class AdaBoost(ClassifierMixin, BaseEstimator):
    """AdaBoost (two classes) and SAMME (k classes): the stagewise fit of an exponential loss.

    At round ``t`` with weights ``wᵢ ∝ exp(−yᵢ H_{t−1}(xᵢ))`` the weak learner of least
    weighted error ``εₜ`` is fitted, weighted by the exact line search
    ``αₜ = ½ log((1 − εₜ)/εₜ)`` and added: ``Hₜ = H_{t−1} + αₜ hₜ``.  The training
    error is at most ``∏ Zₜ = ∏ 2√(εₜ(1 − εₜ)) ≤ exp(−2 Σ γₜ²)``, ``γₜ = ½ − εₜ``;
    every quantity is recorded per round so that the bounds can be checked.

    With k > 2 classes the model is f(x) ∈ ℝᵏ, Σ_c f_c = 0, under the multiclass
    exponential loss ``Σᵢ sᵢ exp(−fᵀ(xᵢ)Yᵢ/k)`` (Yᵢ = 1 at yᵢ and −1/(k − 1) elsewhere),
    i.e. ``Σᵢ sᵢ exp(−f_{yᵢ}(xᵢ)/(k − 1))``.  A learner predicting class h adds
    αₜ·g with g = 1 at h and −1/(k − 1) elsewhere; its exact line search is
    ``αₜ = ((k − 1)²/k)(log((1 − εₜ)/εₜ) + log(k − 1))`` (SAMME's weight times
    (k − 1)²/k), which for k = 2 is the two-class fit exactly; a weak learner must
    beat chance, εₜ < (k − 1)/k.  Since a misclassified point has
    f_{yᵢ} ≤ Σα(k − 2)/(2(k − 1)) (its vote is at most half), the training error is at
    most ``exp(Σα(k − 2)/(2(k − 1)²)) ∏ Zₜ``, recorded as ``error_bounds_`` (a valid but
    loose bound for k > 2; ∏ Zₜ itself for k = 2).

    Parameters
    ----------
    n_estimators : int, default=50
        Largest number of boosting rounds T.
    weak_learner : "stump" or scikit-learn classifier, default="stump"
        ``"stump"``: exact weighted decision stumps
        (:class:`~margin_opt.weak_learners.StumpSearch`, data sorted once per fit).
        With k > 2 classes :class:`~margin_opt.weak_learners.MulticlassStumpSearch`
        (one class on each side).  Otherwise any classifier whose ``fit`` accepts
        ``sample_weight``; it is cloned each round and fitted on labels ±1 (two
        classes) or on the class indices 0..k − 1.
    verify : bool, default=False
        Also solve each stage's line search with cvxpy
        (:class:`~margin_opt.problems.boosting.StageLineSearch`) and store the
        answers in ``verified_weights_``; at the end also solve the max-min-margin LP
        over the chosen learners (two classes).  Both enter ``certificate_``.  Costs
        one small conic solve per round and one LP.
    totally_corrective : bool, default=False
        After each round, refit all weights at once by minimizing the exponential
        loss of the whole model over ``α ≥ 0`` with ``Σ α ≤ Σ_s α_s`` (the ℓ1 norm
        the stagewise weights reached; the stagewise model is feasible, so the refit
        never has a larger loss) with cvxpy
        (:class:`~margin_opt.problems.boosting.TotallyCorrectiveProblem`).
    random_state : int, RandomState instance or None, default=None
        Seeds the ``random_state`` of a scikit-learn weak learner that has one
        (stumps are deterministic).

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        For two classes ``classes_[1]`` is the +1 class (``decision_function > 0``).
    n_features_in_ : int
    estimators_ : list of length ``n_iter_``
        Fitted weak learners (:class:`~margin_opt.weak_learners.Stump`,
        :class:`~margin_opt.weak_learners.MulticlassStump` or clones of
        ``weak_learner``); ``predict`` of each returns ±1 (two classes) or class indices.
    estimator_weights_ : ndarray of shape (``n_iter_``,)
        αₜ of the model (the refit weights with ``totally_corrective``).
    stage_weights_ : ndarray of shape (``n_iter_``,)
        The closed-form αₜ of each stage (equal to ``estimator_weights_`` when
        stagewise).  A perfect weak learner (εₜ < 1e-10, e.g. εₜ = 0) gets
        ``ALPHA_MAX = ½ log((1 − 1e-10)/1e-10) ≈ 11.513`` and the fit stops.
    verified_weights_ : ndarray of shape (``n_iter_``,)
        The cvxpy line-search α of each stage (``verify=True``; NaN for a perfect
        learner, whose line search has no finite minimizer); None otherwise.
    estimator_errors_ : ndarray of shape (``n_iter_``,)
        Weighted training errors εₜ (weights normalized to sum 1).
    normalizers_ : ndarray of shape (``n_iter_``,)
        ``Zₜ = Σᵢ wᵢ⁽ᵗ⁾ exp(−yᵢ(Hₜ − H_{t−1})(xᵢ))`` with Σ w⁽ᵗ⁾ = 1, i.e. the
        ratio of exponential losses of consecutive models; ``2√(εₜ(1 − εₜ))`` for a
        stagewise round with 0 < εₜ < ½ (k classes: the same ratio of the multiclass
        loss, ``(k/(k − 1)) εₜ^{(k−1)/k} ((1 − εₜ)(k − 1))^{1/k}``).
    train_errors_ : ndarray of shape (``n_iter_``,)
        Weighted fraction of training points with ``yᵢ Hₜ(xᵢ) ≤ 0`` (k classes:
        ``f_{yᵢ} ≤ max_{c≠yᵢ} f_c``; a tie counts as an error) after each round.
    error_bounds_ : ndarray of shape (``n_iter_``,)
        ``∏_{s ≤ t} Z_s`` (the normalized exponential loss of Hₜ); k classes:
        ``exp(Σ_{s ≤ t} α_s (k − 2)/(2(k − 1)²)) ∏_{s ≤ t} Z_s``.
    exp_bounds_ : ndarray of shape (``n_iter_``,) or None
        ``exp(−2 Σ_{s ≤ t} γ_s²)`` with ``γ_s = ½ − ε_s`` (two classes; None for k > 2).
    n_classes_ : int
    n_iter_ : int
        Rounds performed.
    stage_gradients_ : ndarray of shape (``n_iter_``,)
        The derivative of each stage's objective Σᵢ wᵢ exp(−α mᵢ) at αₜ, divided by
        Zₜ: 0 up to rounding when the line search is solved.
    certificate_ : Certificate
        The stagewise fit's certificate
        (:func:`~margin_opt.problems.boosting.certify_stagewise`): stage stationarity,
        α in closed form, training error ≤ ∏ Z ≤ exp(−2Σγ²); with ``verify`` also
        the cvxpy line searches and the max-min-margin LP on the training data.
    stop_reason_ : str
        ``"n_estimators"``, ``"perfect"`` (εₜ = 0) or ``"chance"`` (εₜ ≥ ½ − 1e-10,
        the learner discarded).

    Raises
    ------
    ValueError
        In ``fit``: invalid parameters or data, a weak learner without
        ``sample_weight``, or a first weak learner no better than chance (ε ≥ ½).

    Warns
    -----
    ConvergenceWarning
        When a later round's best weak learner has εₜ ≥ ½ and the fit stops early.

    Notes
    -----
    Weights are kept as log-weights ``log sᵢ − yᵢ H(xᵢ)`` and exponentiated after
    subtracting their maximum, so no weight overflows however concentrated the
    distribution becomes.  scikit-learn's ``AdaBoostClassifier`` (SAMME) on two
    classes fits the same model with weights ``2αₜ``.

    References
    ----------
    Y. Freund and R. E. Schapire, "A decision-theoretic generalization of on-line
    learning and an application to boosting", JCSS 55(1), 1997 (the bound ∏ Zₜ).
    J. Friedman, T. Hastie and R. Tibshirani, "Additive logistic regression: a
    statistical view of boosting", Ann. Statist. 28(2), 2000 (stagewise exponential loss).
    J. Zhu, H. Zou, S. Rosset and T. Hastie, "Multi-class AdaBoost", Statistics and Its
    Interface 2, 2009 (SAMME; its αₜ is ours × k/(k − 1)², as scikit-learn's
    ``AdaBoostClassifier.estimator_weights_``).
    R. E. Schapire, Y. Freund, P. Bartlett and W. S. Lee, "Boosting the margin", Ann.
    Statist. 26(5), 1998 (normalized margins).
    """

    _parameter_constraints: dict = {
        "n_estimators": [Interval(Integral, 1, None, closed="left")],
        "weak_learner": [StrOptions({"stump"}), HasMethods(["fit", "predict"])],
        "verify": ["boolean"],
        "totally_corrective": ["boolean"],
        "random_state": ["random_state"],
    }

    def __init__(self, n_estimators=50, weak_learner="stump", verify=False,
                 totally_corrective=False, random_state=None):
        self.n_estimators = n_estimators
        self.weak_learner = weak_learner
        self.verify = verify
        self.totally_corrective = totally_corrective
        self.random_state = random_state

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = (isinstance(self.weak_learner, str)
                                  or get_tags(self.weak_learner).input_tags.sparse)
        return tags

    def _learner_factory(self, X, y_index, n_classes):
        """A function w ↦ (learner, class indices it predicts on X)."""
        binary = n_classes == 2
        y_fit = np.where(y_index == 1, 1.0, -1.0) if binary else y_index
        if isinstance(self.weak_learner, str):
            search = StumpSearch(X, y_fit) if binary else \
                MulticlassStumpSearch(X, y_index, n_classes)

            def fit_stump(w):
                stump = search.best(w)
                return stump, _as_index(stump.predict(X), binary, X.shape[0], n_classes)

            return fit_stump
        if not has_fit_parameter(self.weak_learner, "sample_weight"):
            raise ValueError(
                f"weak_learner {type(self.weak_learner).__name__} does not accept "
                "sample_weight in fit; boosting reweights the data each round. Pass a "
                "classifier whose fit(X, y, sample_weight=...) exists, e.g. "
                "sklearn.tree.DecisionTreeClassifier(max_depth=1), or 'stump'.")
        rng = check_random_state(self.random_state)

        def fit_one(w):
            est = clone(self.weak_learner)
            if "random_state" in est.get_params():
                est.set_params(random_state=int(rng.randint(np.iinfo(np.int32).max)))
            est.fit(X, y_fit, sample_weight=w)
            return est, _as_index(est.predict(X), binary, X.shape[0], n_classes)

        return fit_one

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None):
        """Boost for up to ``n_estimators`` rounds.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Finite features (stumps densify sparse input).
        y : array-like of shape (n_samples,)
            Two classes or more.
        sample_weight : array-like of shape (n_samples,), optional
            Initial weights ≥ 0 (default uniform); normalized to sum 1.

        Returns
        -------
        self : AdaBoost

        Raises
        ------
        ValueError
            Invalid parameters, NaN/inf in X, one class ("one class"), continuous
            targets ("Unknown label type"), invalid weights, a weak learner without
            ``sample_weight``, a first weak learner no better than chance, or
            ``totally_corrective`` with more than two classes.
        """
        X, y = validate_data(self, X, y, accept_sparse="csr", dtype=np.float64)
        X = canonical(X)
        y_index, self.classes_ = check_class_labels(y)
        k = self.n_classes_ = self.classes_.size
        if self.totally_corrective and k > 2:
            raise ValueError("totally_corrective is implemented for two classes; use the "
                             f"stagewise fit (totally_corrective=False) for {k} classes.")
        sw = check_sample_weight(sample_weight, X)
        sw = sw / sw.sum()
        fit_one = self._learner_factory(X, y_index, k)
        rows = np.arange(X.shape[0])
        chance = (k - 1) / k
        chance_text = "½" if k == 2 else f"{chance:.4g} = (k − 1)/k"

        log_w0 = np.full(sw.shape, -np.inf)
        log_w0[sw > 0] = np.log(sw[sw > 0])
        F = np.zeros((X.shape[0], k))     # f_c(xᵢ) of the model
        f_y = np.zeros_like(sw)           # f_{yᵢ}(xᵢ); the loss is Σ sᵢ exp(−f_{yᵢ}/(k − 1))
        H_cols, learners, stage_alpha, verified, errors = [], [], [], [], []
        log_Z, train_err, alpha_model, stage_grad = [], [], np.empty(0), []
        self.stop_reason_ = "n_estimators"
        for t in progress(range(self.n_estimators), desc="AdaBoost rounds",
                          enabled=None if self.n_estimators >= 200 else False):
            log_w = log_w0 - f_y / (k - 1)
            log_w -= logsumexp(log_w)
            w = np.exp(log_w)
            learner, h = fit_one(w)
            correct = h == y_index
            m = stage_margins(correct, k)
            eps = float(w[~correct].sum())
            if eps >= chance - EDGE_TOL:
                if t == 0:
                    raise ValueError(
                        f"the first weak learner's weighted error is {eps:.4f} ≥ {chance_text}: "
                        "it is no better than chance on this data, so boosting "
                        "cannot start. Check that the features carry information, or use a "
                        "stronger weak_learner.")
                warnings.warn(
                    f"AdaBoost stopped after {t} rounds: the best weak learner on the "
                    f"reweighted data has weighted error {eps:.4f} ≥ {chance_text}, so adding it "
                    "cannot lower the exponential loss (it was discarded). Use a stronger "
                    "weak_learner (e.g. DecisionTreeClassifier(max_depth=2)) to go on.",
                    ConvergenceWarning, stacklevel=3)
                self.stop_reason_ = "chance"
                break
            alpha = closed_form_alpha(eps, k)
            learners.append(learner)
            H_cols.append(h)
            errors.append(eps)
            stage_alpha.append(alpha)
            e = w * np.exp(-alpha * m)
            stage_grad.append(float(-(e @ m) / e.sum()))   # d/dα of the stage objective / Z
            if self.verify:
                verified.append(StageLineSearch(w, m).solve() if eps > 0 else np.nan)
            if self.totally_corrective:
                y_pm = np.where(y_index == 1, 1.0, -1.0)       # two classes only
                M = np.column_stack([np.where(c == y_index, 1.0, -1.0) for c in H_cols])
                alpha_model = TotallyCorrectiveProblem(
                    M, sw, l1_bound=float(np.sum(stage_alpha))).solve()
                H = M @ alpha_model * y_pm
                F_new = np.column_stack([-H, H])
            else:
                F_new = F + alpha * _coded(h, k)
            f_y_new = F_new[rows, y_index]
            log_Z.append(float(logsumexp(log_w - (f_y_new - f_y) / (k - 1))))
            F, f_y = F_new, f_y_new
            train_err.append(float(sw[_misclassified(F, y_index)].sum()))
            if eps < EPS_MIN:
                self.stop_reason_ = "perfect"
                break

        self.estimators_ = learners
        self.stage_weights_ = np.asarray(stage_alpha)
        self.estimator_weights_ = (np.asarray(alpha_model) if self.totally_corrective
                                   else self.stage_weights_.copy())
        self.verified_weights_ = np.asarray(verified) if self.verify else None
        self.estimator_errors_ = np.asarray(errors)
        self.normalizers_ = np.exp(np.asarray(log_Z))
        self.train_errors_ = np.asarray(train_err)
        # training error ≤ exp(Σα(k − 2)/(2(k − 1)²)) ∏Z (the factor is 1 for two classes)
        self.error_bounds_ = np.exp(np.cumsum(log_Z) + np.cumsum(self.estimator_weights_)
                                    * ((k - 2) / (2.0 * (k - 1) ** 2)))
        self.exp_bounds_ = (np.exp(-2.0 * np.cumsum((0.5 - self.estimator_errors_) ** 2))
                            if k == 2 else None)
        self.n_iter_ = len(learners)
        self.stage_gradients_ = np.asarray(stage_grad)
        lp = None
        if self.verify and k == 2:
            y_pm = np.where(y_index == 1, 1.0, -1.0)
            M = np.column_stack([np.where(c == 1, 1.0, -1.0) for c in H_cols]) * y_pm[:, None]
            margins = f_y / float(np.sum(self.estimator_weights_))
            lp = (MaxMarginLP(M).solve().margin, float(margins.min()))
        self.certificate_ = certify_stagewise(
            self.estimator_errors_, self.stage_weights_, self.normalizers_, self.train_errors_,
            self.error_bounds_, self.exp_bounds_, stage_gradients=self.stage_gradients_,
            verified_weights=self.verified_weights_, lp_margin=None if lp is None else lp[0],
            min_margin=None if lp is None else lp[1], n_classes=k)
        return self

    def _check_X(self, X):
        check_is_fitted(self)
        return canonical(validate_data(self, X, accept_sparse="csr", dtype=np.float64,
                                       reset=False))

    def _y_index(self, y):
        y = np.asarray(y)
        known = np.isin(y, self.classes_)
        if not known.all():
            raise ValueError(f"y has labels {np.unique(y[~known])!r} the model was not trained "
                             f"on; use labels from classes_ = {self.classes_!r}.")
        return np.searchsorted(self.classes_, y)

    def _learner_indices(self, X):
        binary = self.classes_.size == 2
        for est in self.estimators_:
            yield _as_index(est.predict(X), binary, X.shape[0], self.classes_.size)

    def learner_outputs(self, X) -> np.ndarray:
        """Outputs of every weak learner.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        H : ndarray of shape (n_samples, ``n_iter_``)
            Two classes: hₜ(xᵢ) ∈ {−1, +1} (+1 for ``classes_[1]``); more classes: the
            predicted class index (a position in ``classes_``).
        """
        X = self._check_X(X)
        H = np.column_stack(list(self._learner_indices(X)))
        return np.where(H == 1, 1.0, -1.0) if self.classes_.size == 2 else H

    def staged_decision_function(self, X):
        """Yield the decision function after each round t = 1, …, ``n_iter_``.

        With ``totally_corrective`` the final weights are used throughout.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Yields
        ------
        decision : ndarray of shape (n_samples,) or (n_samples, n_classes)
            See :meth:`decision_function`.
        """
        return self._staged(self._check_X(X))

    def _staged_f(self, X):
        k = self.classes_.size
        F = np.zeros((X.shape[0], k))
        for a, h in zip(self.estimator_weights_, self._learner_indices(X), strict=True):
            F = F + a * _coded(h, k)
            yield F

    def _staged(self, X):
        for F in self._staged_f(X):
            yield F[:, 1] if F.shape[1] == 2 else F

    def decision_function(self, X) -> np.ndarray:
        """The additive model.

        Two classes: ``H(x) = Σₜ αₜ hₜ(x)`` (hₜ = ±1), positive meaning ``classes_[1]``.
        k classes: ``f_c(x) = Σₜ αₜ gₜ,c(x)`` with gₜ,c = 1 where hₜ predicts c and
        −1/(k − 1) elsewhere (Σ_c f_c = 0; for k = 2, f₁ = H = −f₀).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        decision : ndarray of shape (n_samples,) (two classes) or (n_samples, n_classes)
        """
        return deque(self.staged_decision_function(X), maxlen=1)[0]

    def predict(self, X) -> np.ndarray:
        """Predicted labels, ndarray of shape (n_samples,): argmax_c f_c (``classes_[1]``
        where H > 0 for two classes; ties to the first class)."""
        F = deque(self._staged_f(self._check_X(X)), maxlen=1)[0]
        return self.classes_[np.argmax(F, axis=1)]

    def staged_predict(self, X):
        """Yield the predicted labels after each round, ndarray of shape (n_samples,)."""
        for F in self._staged_f(self._check_X(X)):
            yield self.classes_[np.argmax(F, axis=1)]

    def predict_proba(self, X) -> np.ndarray:
        """Class probabilities ``softmax(f(x)/(k − 1))``; σ(2H(x)) for two classes.

        The population minimizer of the multiclass exponential loss E exp(−fᵀY/k) is
        f_c = (k − 1)(log p_c − mean_c' log p_c') (Zhu et al. 2009, Lemma 1), so
        p_c ∝ exp(f_c/(k − 1)); for two classes Friedman, Hastie and Tibshirani's
        P(y = 1 | x) = 1/(1 + e^{−2H(x)}).

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
        """
        F = deque(self._staged_f(self._check_X(X)), maxlen=1)[0]
        return softmax(F / (self.classes_.size - 1), axis=1)

    def staged_predict_proba(self, X):
        """Yield :meth:`predict_proba` after each round."""
        k = self.classes_.size
        for F in self._staged_f(self._check_X(X)):
            yield softmax(F / (k - 1), axis=1)

    def margins(self, X, y) -> np.ndarray:
        """Normalized margins ∈ [−1, 1].

        Two classes: ``yᵢ H(xᵢ) / Σₜ αₜ``.  k classes:
        ``(f_{yᵢ}(xᵢ) − max_{c≠yᵢ} f_c(xᵢ)) / (Σₜ αₜ · k/(k − 1))`` (the same for k = 2).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
            Labels from ``classes_``.

        Returns
        -------
        margins : ndarray of shape (n_samples,)

        Raises
        ------
        ValueError
            Labels not in ``classes_``.
        """
        check_is_fitted(self)
        y_index = self._y_index(y)
        total = float(np.sum(self.estimator_weights_))
        k = self.classes_.size
        if k == 2:
            return np.where(y_index == 1, 1.0, -1.0) * self.decision_function(X) / total
        F = self.decision_function(X)
        rows = np.arange(F.shape[0])
        other = F.copy()
        other[rows, y_index] = -np.inf
        return (F[rows, y_index] - other.max(axis=1)) / (total * k / (k - 1))

    def max_margin_lp(self, X, y, solver="HIGHS"):
        """The largest minimum normalized margin over the chosen weak learners (two classes).

        Solves ``max ρ s.t. yᵢ Σₜ αₜ hₜ(xᵢ) ≥ ρ, α ≥ 0, Σ α = 1`` with cvxpy
        (:class:`~margin_opt.problems.boosting.MaxMarginLP`); its ρ is at least
        ``min(self.margins(X, y))`` since AdaBoost's normalized weights are feasible.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        solver : str, default="HIGHS"

        Returns
        -------
        result : MarginLPResult
            ``.margin`` (ρ*), ``.weights`` (α, shape (``n_iter_``,)), ``.sample_weights``.

        Raises
        ------
        ValueError
            More than two classes, or labels not in ``classes_``.
        """
        check_is_fitted(self)
        if self.classes_.size != 2:
            raise ValueError("the max-min-margin LP is posed for two classes.")
        y_pm = np.where(self._y_index(y) == 1, 1.0, -1.0)
        return MaxMarginLP(y_pm[:, None] * self.learner_outputs(X)).solve(solver)


def _as_index(prediction, binary, n_samples, n_classes) -> np.ndarray:
    """Class indices from a weak learner's output (±1 for two classes, class indices
    0 … k − 1 for more).

    Raises
    ------
    ValueError
        An output of the wrong shape, not numbers, NaN/inf, or (k > 2) not class indices:
        the weak learner's predict is broken (it was fitted on y in {−1, +1}, or on
        the class indices).
    """
    prediction = np.asarray(prediction)
    what = "±1" if binary else f"class indices 0 … {n_classes - 1}"
    if prediction.shape != (n_samples,) or prediction.dtype.kind not in "biuf" or \
            not np.all(np.isfinite(prediction)):
        sample = prediction.ravel()[:3].tolist() if prediction.size else []
        raise ValueError(
            f"the weak learner's predict(X) returned shape {prediction.shape}, dtype "
            f"{prediction.dtype} (e.g. {sample}); boosting needs one finite label per sample, "
            f"shape ({n_samples},), {what}. Check the weak_learner's predict.")
    if binary:
        return (prediction > 0).astype(np.int64)
    index = prediction.astype(np.int64)
    if np.any(index != prediction) or np.any((index < 0) | (index >= n_classes)):
        raise ValueError(f"the weak learner's predict(X) returned values outside the {what} "
                         "it was fitted on. Check the weak_learner's predict.")
    return index


def _coded(h, n_classes) -> np.ndarray:
    """SAMME's coding of predictions: 1 at the predicted class, −1/(k − 1) elsewhere, (n, k)."""
    G = np.full((h.shape[0], n_classes), -1.0 / (n_classes - 1))
    G[np.arange(h.shape[0]), h] = 1.0
    return G


def _misclassified(F, y_index) -> np.ndarray:
    """f_{yᵢ} ≤ max_{c≠yᵢ} f_c (a tie counts as an error), ndarray of bool."""
    rows = np.arange(F.shape[0])
    other = F.copy()
    other[rows, y_index] = -np.inf
    return F[rows, y_index] <= other.max(axis=1)
