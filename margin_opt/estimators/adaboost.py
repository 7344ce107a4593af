"""AdaBoost: forward stagewise additive modelling under the exponential loss."""

from __future__ import annotations

import warnings
from collections import deque
from numbers import Integral

import numpy as np
from scipy.special import logsumexp
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions
from sklearn.utils.validation import check_is_fitted, has_fit_parameter, validate_data

from ..exceptions import ConvergenceWarning
from ..problems.boosting import (
    EPS_MIN,
    MaxMarginLP,
    StageLineSearch,
    TotallyCorrectiveProblem,
    certify_stagewise,
    closed_form_alpha,
)
from ..progress import progress
from ..validation import check_binary_labels, check_data, check_sample_weight
from ..weak_learners import StumpSearch

__all__ = ["AdaBoost"]

#: A weak learner whose edge γ = ½ − ε is below this is no better than chance
#: (its α would be < 1e-10): round-off must not let a useless learner in.
EDGE_TOL = 1e-10


class AdaBoost(ClassifierMixin, BaseEstimator):
    """Discrete AdaBoost for two classes, as the stagewise fit of an exponential-loss model.

    At round ``t`` with weights ``wᵢ ∝ exp(−yᵢ H_{t−1}(xᵢ))`` the weak learner of least
    weighted error ``εₜ`` is fitted, weighted by the exact line search
    ``αₜ = ½ log((1 − εₜ)/εₜ)`` and added: ``Hₜ = H_{t−1} + αₜ hₜ``.  The training
    error is at most ``∏ Zₜ = ∏ 2√(εₜ(1 − εₜ)) ≤ exp(−2 Σ γₜ²)``, ``γₜ = ½ − εₜ``;
    every quantity is recorded per round so that the bounds can be checked.

    Parameters
    ----------
    n_estimators : int, default=50
        Largest number of boosting rounds T.
    weak_learner : "stump" or scikit-learn classifier, default="stump"
        ``"stump"``: exact weighted decision stumps
        (:class:`~margin_opt.weak_learners.StumpSearch`, data sorted once per fit).
        Otherwise any classifier whose ``fit`` accepts ``sample_weight``; it is
        cloned each round and fitted on labels ±1.
    verify : bool, default=False
        Also solve each stage's line search with cvxpy
        (:class:`~margin_opt.problems.boosting.StageLineSearch`) and store the
        answers in ``verified_weights_``; at the end also solve the max-min-margin LP
        over the chosen learners.  Both enter ``certificate_``.  Costs one small
        conic solve per round and one LP.
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
    classes_ : ndarray of shape (2,)
        ``classes_[1]`` is the +1 class (``decision_function > 0``).
    n_features_in_ : int
    estimators_ : list of length ``n_iter_``
        Fitted weak learners (:class:`~margin_opt.weak_learners.Stump` or clones of
        ``weak_learner``); ``predict`` of each returns ±1.
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
        stagewise round with 0 < εₜ < ½.
    train_errors_ : ndarray of shape (``n_iter_``,)
        Weighted fraction of training points with ``yᵢ Hₜ(xᵢ) ≤ 0`` (a tie counts as
        an error) after each round.
    error_bounds_ : ndarray of shape (``n_iter_``,)
        ``∏_{s ≤ t} Z_s`` (the normalized exponential loss of Hₜ).
    exp_bounds_ : ndarray of shape (``n_iter_``,)
        ``exp(−2 Σ_{s ≤ t} γ_s²)`` with ``γ_s = ½ − ε_s``.
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

    def _learner_factory(self, X, y_pm):
        if isinstance(self.weak_learner, str):
            search = StumpSearch(X, y_pm)
            return search.best
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
            return est.fit(X, y_pm, sample_weight=w)

        return fit_one

    def fit(self, X, y, sample_weight=None):
        """Boost for up to ``n_estimators`` rounds.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Finite features (stumps densify sparse input).
        y : array-like of shape (n_samples,)
            Two distinct labels.
        sample_weight : array-like of shape (n_samples,), optional
            Initial weights ≥ 0 (default uniform); normalized to sum 1.

        Returns
        -------
        self : AdaBoost

        Raises
        ------
        ValueError
            Invalid parameters, NaN/inf in X, not exactly two classes, invalid
            weights, a weak learner without ``sample_weight``, or a first weak
            learner no better than chance.
        """
        self._validate_params()
        X, y = check_data(X, y)
        y_pm, self.classes_ = check_binary_labels(y)
        self.n_features_in_ = X.shape[1]
        sw = check_sample_weight(sample_weight, X)
        sw = sw / sw.sum()
        fit_one = self._learner_factory(X, y_pm)

        log_w0 = np.full(sw.shape, -np.inf)
        log_w0[sw > 0] = np.log(sw[sw > 0])
        F = np.zeros_like(sw)
        H_cols, learners, stage_alpha, verified, errors = [], [], [], [], []
        log_Z, train_err, alpha_model, stage_grad = [], [], np.empty(0), []
        self.stop_reason_ = "n_estimators"
        for t in progress(range(self.n_estimators), desc="AdaBoost rounds",
                          enabled=None if self.n_estimators >= 200 else False):
            log_w = log_w0 - y_pm * F
            log_w -= logsumexp(log_w)
            w = np.exp(log_w)
            learner = fit_one(w)
            h = np.asarray(learner.predict(X), dtype=float)
            m = y_pm * h
            eps = float(w[m <= 0].sum())
            if eps >= 0.5 - EDGE_TOL:
                if t == 0:
                    raise ValueError(
                        f"the first weak learner's weighted error is {eps:.4f} ≥ ½: it is no "
                        "better than chance on this data, so boosting cannot start. Check "
                        "that the features carry information, or use a stronger weak_learner.")
                warnings.warn(
                    f"AdaBoost stopped after {t} rounds: the best weak learner on the "
                    f"reweighted data has weighted error {eps:.4f} ≥ ½, so adding it cannot "
                    "lower the exponential loss (it was discarded). Use a stronger "
                    "weak_learner (e.g. DecisionTreeClassifier(max_depth=2)) to go on.",
                    ConvergenceWarning, stacklevel=2)
                self.stop_reason_ = "chance"
                break
            alpha = closed_form_alpha(eps)
            learners.append(learner)
            H_cols.append(h)
            errors.append(eps)
            stage_alpha.append(alpha)
            e = w * np.exp(-alpha * m)
            stage_grad.append(float(-(e @ m) / e.sum()))   # d/dα of the stage objective / Z
            if self.verify:
                verified.append(StageLineSearch(w, m).solve() if eps > 0 else np.nan)
            if self.totally_corrective:
                M = y_pm[:, None] * np.column_stack(H_cols)
                alpha_model = TotallyCorrectiveProblem(
                    M, sw, l1_bound=float(np.sum(stage_alpha))).solve()
                F_new = M @ alpha_model * y_pm
            else:
                F_new = F + alpha * h
            log_Z.append(float(logsumexp(log_w - y_pm * (F_new - F))))
            F = F_new
            train_err.append(float(sw[y_pm * F <= 0].sum()))
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
        self.error_bounds_ = np.exp(np.cumsum(log_Z))
        self.exp_bounds_ = np.exp(-2.0 * np.cumsum((0.5 - self.estimator_errors_) ** 2))
        self.n_iter_ = len(learners)
        self.stage_gradients_ = np.asarray(stage_grad)
        lp = None
        if self.verify:
            margins = y_pm * F / float(np.sum(self.estimator_weights_))
            lp = (MaxMarginLP(y_pm[:, None] * np.column_stack(H_cols)).solve().margin,
                  float(margins.min()))
        self.certificate_ = certify_stagewise(
            self.estimator_errors_, self.stage_weights_, self.normalizers_, self.train_errors_,
            self.error_bounds_, self.exp_bounds_, stage_gradients=self.stage_gradients_,
            verified_weights=self.verified_weights_, lp_margin=None if lp is None else lp[0],
            min_margin=None if lp is None else lp[1])
        return self

    def _check_X(self, X):
        check_is_fitted(self)
        return validate_data(self, X, accept_sparse="csr", dtype=np.float64, reset=False)

    def _y_pm(self, y):
        y = np.asarray(y)
        known = np.isin(y, self.classes_)
        if not known.all():
            raise ValueError(f"y has labels {np.unique(y[~known])!r} the model was not trained "
                             f"on; use labels from classes_ = {self.classes_!r}.")
        return np.where(y == self.classes_[1], 1.0, -1.0)

    def learner_outputs(self, X) -> np.ndarray:
        """Outputs ``hₜ(xᵢ)`` ∈ {−1, +1} of every weak learner.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        H : ndarray of shape (n_samples, ``n_iter_``)
        """
        X = self._check_X(X)
        return np.column_stack([np.asarray(e.predict(X), dtype=float)
                                for e in self.estimators_])

    def staged_decision_function(self, X):
        """Yield ``H_t(X) = Σ_{s ≤ t} α_s h_s(X)`` after each round t = 1, …, ``n_iter_``.

        With ``totally_corrective`` the final weights are used throughout.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Yields
        ------
        decision : ndarray of shape (n_samples,)
        """
        return self._staged(self._check_X(X))

    def _staged(self, X):
        F = np.zeros(X.shape[0])
        for a, est in zip(self.estimator_weights_, self.estimators_, strict=True):
            F = F + a * np.asarray(est.predict(X), dtype=float)
            yield F

    def decision_function(self, X) -> np.ndarray:
        """``H(x) = Σₜ αₜ hₜ(x)``; positive means ``classes_[1]``.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        decision : ndarray of shape (n_samples,)
        """
        return deque(self.staged_decision_function(X), maxlen=1)[0]

    def predict(self, X) -> np.ndarray:
        """Predicted labels, ndarray of shape (n_samples,) (``classes_[1]`` where H > 0)."""
        return self.classes_[(self.decision_function(X) > 0).astype(int)]

    def margins(self, X, y) -> np.ndarray:
        """Normalized margins ``yᵢ H(xᵢ) / Σₜ αₜ`` ∈ [−1, 1].

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
        y_pm = self._y_pm(y)
        return y_pm * self.decision_function(X) / float(np.sum(self.estimator_weights_))

    def max_margin_lp(self, X, y, solver="HIGHS"):
        """The largest minimum normalized margin over the chosen weak learners.

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
        """
        y_pm = self._y_pm(y)
        return MaxMarginLP(y_pm[:, None] * self.learner_outputs(X)).solve(solver)
