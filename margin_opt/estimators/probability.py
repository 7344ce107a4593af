"""SVC probabilities as LIBSVM computes them: per-pair Platt sigmoids, then coupling.

For every pair problem (class i labelled +1), decision values are obtained by
5-fold cross-validation inside the pair (each fold's model never sees the samples
it scores), a sigmoid ``P(i | x, pair) = 1 / (1 + exp(A f + B))`` is fitted to them
(:func:`margin_opt.calibration.sigmoid_fit`), and at prediction time the pairwise
probabilities are coupled into class probabilities
(:func:`margin_opt.calibration.pairwise_coupling`; for two classes the sigmoid
itself).  A and B are stored in LIBSVM's convention, for decision values that are
positive for the pair's first class i (for two classes: for ``classes_[0]``, the
opposite sign of ``decision_function``), as scikit-learn's ``probA_``/``probB_``.

References
----------
C.-C. Chang and C.-J. Lin, LIBSVM, ACM TIST 2(3), 2011, §8 (probability estimates).
Lin, Lin and Weng (2007); Wu, Lin and Weng (2004): see :mod:`margin_opt.calibration`.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
from sklearn.model_selection import KFold, StratifiedKFold
from sklearn.utils import check_random_state

from ..calibration import MIN_PROB, pairwise_coupling, sigmoid_fit, sigmoid_predict
from ..methods import get_method
from ..problems.svm import SVMProblem
from .base import backend_options, solve_and_certify
from .ovo import GRAM_OPTIONS, SHARED_KERNELS, class_pairs

__all__ = ["PairCalibrator", "ovo_probabilities", "N_FOLDS"]

#: LIBSVM's number of internal cross-validation folds.
N_FOLDS = 5


class PairCalibrator:
    """Fits one Platt sigmoid per pair problem, as an ``on_pair`` hook of the OvO fit.

    Parameters
    ----------
    est : SVC
        Its ``C``, ``fit_intercept``, ``tol`` and ``solver_options`` are used.
    solver : str
        Registry method of the folds' problems.
    n_pairs : int
    sign : {1, -1}
        +1 when the pair problem's +1 class is LIBSVM's first class (k > 2), −1 for
        two classes (the pair problem has ``classes_[1]`` as +1).
    random_state : int, RandomState or None
        Shuffles the folds.
    problem_factory : callable, optional
        ``problem_factory(X_fold, y_pm, weight_fold, gram)`` → a fold's binary problem
        (the pairs' own factory of :func:`~margin_opt.estimators.ovo.fit_one_vs_one`,
        e.g. the ν-SVC's); default the C-SVC with the estimator's C.
    rescale : callable, optional
        ``rescale(solution)`` → the factor of a fold model's decision values (the
        ν-SVC's 1/r: the scale of the fitted model's ``decision_function``); default 1.

    Attributes
    ----------
    probA, probB : ndarray of shape (n_pairs,)
    """

    def __init__(self, est, solver, n_pairs, sign, random_state, problem_factory=None,
                 rescale=None):
        self.est, self.solver, self.sign = est, solver, sign
        self.problem_factory, self.rescale = problem_factory, rescale
        rng = check_random_state(random_state)
        self.seeds = rng.randint(np.iinfo(np.int32).max, size=n_pairs)
        self.probA = np.zeros(n_pairs)
        self.probB = np.zeros(n_pairs)

    def __call__(self, p, problem, solution) -> None:
        dec, y = cv_decision_values(self.est, problem, self.solver, int(self.seeds[p]),
                                    self.problem_factory, self.rescale)
        self.probA[p], self.probB[p] = sigmoid_fit(self.sign * dec, self.sign * y)


def _fold_decision(problem, sub, sol, tr, te, K):
    """Decision values of a fold's model on the held-out rows of the pair."""
    sv = sol.support_
    coef = np.asarray(sol.dual_coef)[0, sv]
    cols = tr[sv]
    if problem.kernel.name == "precomputed":
        Kte = problem.X[np.ix_(te, cols)]
    elif K is not None:
        Kte = K[np.ix_(te, cols)]
    elif sv.size:
        Kte = problem.kernel(problem.X[te], problem.X[cols])
    else:
        Kte = np.zeros((te.size, 0))
    return Kte @ coef + sol.b


def _on_pair_matrix(est, problem, solver, K) -> bool:
    """Whether the folds are solved on the pair's own kernel matrix ``K`` (their rows
    of it by index, no copy): SMO with an intercept, a finite C, a PSD kernel and no
    option beyond those of the pairs' compiled runs (:data:`.ovo.GRAM_OPTIONS`)."""
    return (K is not None and solver == "smo" and problem.fit_intercept
            and problem.kernel.name in SHARED_KERNELS
            and set(est.solver_options or {}) <= GRAM_OPTIONS
            and bool(np.all(np.isfinite(problem._qp.upper))))


def _fold_on_pair_matrix(est, problem, solver, K, tr, te):
    """A fold's model solved on the rows ``tr`` of the pair's kernel matrix ``K`` (the
    standard form's variables restricted to the fold, ``index=tr``: the same QP as the
    fold's own problem, its matrix never copied), and its decision values on ``te``;
    None where SMO gave no intercept (the caller solves the fold's own problem)."""
    qp = problem._qp
    fold = replace(qp, y=qp.y[tr], p=qp.p[tr], upper=qp.upper[tr], gram=K,
                   index=tr if qp.index is None else qp.index[tr])
    res = get_method("smo").load()(fold, **backend_options(est, problem, solver))
    if not np.isfinite(res.b):
        return None
    sv = np.flatnonzero(res.x)
    return K[np.ix_(te, fold.data_index[sv])] @ (fold.y[sv] * res.x[sv]) + float(res.b)


def cv_decision_values(est, problem, solver, seed, problem_factory=None, rescale=None):
    """Cross-validated decision values of a binary pair problem (LIBSVM's procedure).

    The samples with a positive weight are split into stratified folds (LIBSVM
    drops the others before training; fewer than 5 folds when a class has fewer
    than 5 samples, plain folds when it has one); each fold is scored by the model
    trained on the other folds, with the same C, weights and kernel.  A training
    part with one class only scores its held-out samples +1 or −1, as LIBSVM does.
    Where the pair's kernel matrix is at hand (the one-vs-one pairs that share the
    classes' blocks) and SMO solves, each fold is solved on its rows of that matrix
    (:func:`~margin_opt.solvers.smo.solve_smo` with the fold's variables indexing it)
    instead of on a copy: the same QP, to the same tolerance.  With ``problem_factory``
    (see :class:`PairCalibrator`) each fold is that factory's problem on its rows (the
    same model as the pair's: LIBSVM trains the folds with the pair's ``svm_type``), its
    decision values times ``rescale(solution)``.

    Returns
    -------
    dec : ndarray of shape (n_kept,)
    y : ndarray of shape (n_kept,)
        The ±1 labels of the kept samples.
    """
    keep = np.flatnonzero(problem.sample_weight > 0)
    y = problem.y[keep]
    n_small = int(min(np.sum(y > 0), np.sum(y < 0)))
    dec = np.zeros(keep.size)
    K = problem.data.gram_if_computed
    if n_small >= 2:
        splitter = StratifiedKFold(n_splits=min(N_FOLDS, n_small), shuffle=True,
                                   random_state=seed)
    else:   # a class with one sample: plain folds (a training part may lack it)
        splitter = KFold(n_splits=min(N_FOLDS, keep.size), shuffle=True, random_state=seed)
    folds = list(splitter.split(np.zeros(keep.size), y))
    shared = problem_factory is None and _on_pair_matrix(est, problem, solver, K)
    for tr_k, te_k in folds:
        tr, te = keep[tr_k], keep[te_k]
        y_tr = problem.y[tr]
        if np.all(y_tr > 0) or np.all(y_tr < 0):
            dec[te_k] = 1.0 if y_tr[0] > 0 else -1.0
            continue
        if shared:
            d = _fold_on_pair_matrix(est, problem, solver, K, tr, te)
            if d is not None:
                dec[te_k] = d
                continue
        X_tr = problem.X[np.ix_(tr, tr)] if problem.kernel.name == "precomputed" \
            else problem.X[tr]
        gram = None if K is None else K[np.ix_(tr, tr)]
        if problem_factory is None:
            sub = SVMProblem.from_validated(
                X_tr, y_tr, C=problem.C, kernel=problem.kernel,
                fit_intercept=problem.fit_intercept, sample_weight=problem.sample_weight[tr],
                gram=gram)
        else:
            sub = problem_factory(X_tr, y_tr, problem.sample_weight[tr], gram)
        sol, _ = solve_and_certify(est, sub, solver=solver, certify=False)
        dec[te_k] = _fold_decision(problem, sub, sol, tr, te, K)
        if rescale is not None:
            dec[te_k] *= float(rescale(sol))
    return dec, y


def ovo_probabilities(dec, probA, probB, n_classes, sign) -> np.ndarray:
    """Class probabilities from the pairs' decision values.

    Parameters
    ----------
    dec : ndarray of shape (n_samples, n_pairs)
        Decision values in the estimator's orientation.
    probA, probB : ndarray of shape (n_pairs,)
        LIBSVM-convention sigmoids.
    n_classes : int
    sign : {1, -1}
        See :class:`PairCalibrator`.

    Returns
    -------
    proba : ndarray of shape (n_samples, n_classes)
        Rows sum to 1; columns in ``classes_`` order.
    """
    r = np.clip(sigmoid_predict(sign * dec, probA, probB), MIN_PROB, 1.0 - MIN_PROB)
    if n_classes == 2:
        return np.column_stack([r[:, 0], 1.0 - r[:, 0]])
    R = np.zeros((dec.shape[0], n_classes, n_classes))
    for p, (i, j) in enumerate(class_pairs(n_classes)):
        R[:, i, j] = r[:, p]
        R[:, j, i] = 1.0 - r[:, p]
    return pairwise_coupling(R)
