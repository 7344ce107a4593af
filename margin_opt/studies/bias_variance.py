"""The lecture's bias–variance table on real data: error, bias, variance (and vote margins).

Classification (default breast_cancer): a stump and a deep tree (high bias / high
variance), bagged stumps and bagged trees, a random forest and extra trees, AdaBoost
on stumps and an RBF SVC.  Regression (default diabetes): linear regression, low- and high-degree
polynomial SVR, a deep tree and bagged trees.  Every model is decomposed by
:func:`~margin_opt.studies.decomposition.bias_variance` with the same bootstrap
replicates, then fitted once more on the training data for its vote margins.

The claims checked on the table: bagging reduces variance (bagged trees against the
deep tree); boosting reduces bias (AdaBoost against its stump) and increases the
margin (AdaBoost's smallest training margin, first round against last).

References
----------
Lecture notes, "Over- and underfitting", "Bagging", "Bias and variance by bootstrap".
L. Breiman, "Bias, variance and arcing classifiers", Tech. Rep. 460, UC Berkeley, 1996.
R. E. Schapire et al., "Boosting the margin", Ann. Statist. 26(5), 1998.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np
from sklearn.base import clone, is_classifier
from sklearn.linear_model import LinearRegression
from sklearn.model_selection import train_test_split
from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor
from sklearn.utils.multiclass import type_of_target

from ..estimators.adaboost import AdaBoost
from ..estimators.ensembles import Bagging, BaggingRegressor, ExtraTrees, RandomForest
from ..estimators.svc import SVC
from ..estimators.svr import SVR
from ..progress import progress as watched
from .decomposition import _seed_unset, bias_variance

__all__ = ["StudyResult", "classification_models", "regression_models", "run_study",
           "DEFAULT_DATA"]

DEFAULT_DATA = {"classification": "breast_cancer", "regression": "diabetes"}


def classification_models(n_estimators=50) -> dict:
    """The classifiers of the table, name → unfitted estimator.

    ``SVC`` runs SMO without the certificate (``certify=False``): the study fits it
    hundreds of times and only its predictions enter the decomposition.
    """
    return {
        "stump": DecisionTreeClassifier(max_depth=1),
        "deep tree": DecisionTreeClassifier(),
        "bagged stumps": Bagging(DecisionTreeClassifier(max_depth=1), n_estimators=n_estimators),
        "bagged trees": Bagging(n_estimators=n_estimators),
        "random forest": RandomForest(n_estimators=n_estimators),
        "extra trees": ExtraTrees(n_estimators=n_estimators),
        "AdaBoost": AdaBoost(n_estimators=n_estimators),
        "SVC (rbf)": SVC(C=1.0, kernel="rbf", certify=False),
    }


def regression_models(n_estimators=50, low_degree=2, high_degree=6) -> dict:
    """The regressors of the table, name → unfitted estimator (polynomial kernel
    ``(γ x·x' + 1)^degree``, γ = 1/(d Var X), C = 1, ε = 0.1)."""
    return {
        "linear": LinearRegression(),
        f"SVR poly {low_degree}": SVR(kernel="poly", degree=low_degree, coef0=1.0,
                                      certify=False),
        f"SVR poly {high_degree}": SVR(kernel="poly", degree=high_degree, coef0=1.0,
                                       certify=False),
        "deep tree": DecisionTreeRegressor(),
        "bagged trees": BaggingRegressor(n_estimators=n_estimators),
    }


@dataclass
class StudyResult:
    """What :func:`run_study` found.

    Attributes
    ----------
    data : str
    task : {"classification", "regression"}
    method : {"oob", "holdout"}
    n_bootstrap : int
    rows : list of dict
        One per model: ``model``, ``loss``, ``bias2``, ``variance``, ``net_variance``,
        ``seconds``, and for classifiers ``margin_mean``, ``margin_min`` (training
        margins, None for the SVC, which does not vote).
    margins : dict
        Model name → ndarray of training margins (voting models).
    claims : list of dict
        ``claim``, ``holds`` (bool) and ``detail`` (the numbers compared).
    boosting : tuple, optional
        ``(fitted AdaBoost, X, y)`` for the margin-distribution plot.
    """

    data: str
    task: str
    method: str
    n_bootstrap: int
    rows: list = field(default_factory=list)
    margins: dict = field(default_factory=dict)
    claims: list = field(default_factory=list)
    boosting: tuple | None = None

    def to_dict(self) -> dict:
        """JSON-ready: everything but the fitted model and the margin arrays."""
        return {"data": self.data, "task": self.task, "method": self.method,
                "n_bootstrap": self.n_bootstrap, "rows": self.rows, "claims": self.claims}

    def format(self) -> str:
        """The table and the claims as text."""
        bias = "bias" if self.task == "classification" else "bias²"
        head = f"{'model':<16} {'error':>8} {bias:>8} {'variance':>9} {'net var':>8}"
        if self.task == "classification":
            head += f" {'margin mean':>11} {'margin min':>10}"
        head += f" {'time s':>7}"
        err = "0-1 loss" if self.task == "classification" else "squared loss"
        lines = [f"bias–variance by bootstrap ({self.method}, B = {self.n_bootstrap}) on "
                 f"{self.data}: {err}", head]
        for r in self.rows:
            line = (f"{r['model']:<16} {r['loss']:8.4f} {r['bias2']:8.4f} {r['variance']:9.4f} "
                    f"{r['net_variance']:8.4f}")
            if self.task == "classification":
                line += "".join(f" {'—':>{w}}" if r[k] is None else f" {r[k]:{w}.3f}"
                                for k, w in (("margin_mean", 11), ("margin_min", 10)))
            lines.append(line + f" {r['seconds']:7.1f}")
        for c in self.claims:
            lines.append(f"{'✓' if c['holds'] else '✗'} {c['claim']}: {c['detail']}")
        return "\n".join(lines)


def _task(y):
    kind = type_of_target(y)
    if kind == "binary":
        return "classification"
    if kind in ("continuous", "multiclass") and np.unique(y).size > 10:
        return "regression"
    raise ValueError(f"the study takes two-class labels (AdaBoost and SVC are binary) or "
                     f"continuous targets; these targets are {kind!r}.")


def _claims(rows, boosting):
    by = {r["model"]: r for r in rows}
    out = []
    if "bagged trees" in by and "deep tree" in by:
        a, b = by["deep tree"]["variance"], by["bagged trees"]["variance"]
        out.append({"claim": "bagging reduces variance", "holds": bool(b < a),
                    "detail": f"deep tree {a:.4f} → bagged trees {b:.4f}"})
    if "AdaBoost" in by and "stump" in by:
        a, b = by["stump"]["bias2"], by["AdaBoost"]["bias2"]
        out.append({"claim": "boosting reduces bias", "holds": bool(b < a),
                    "detail": f"stump {a:.4f} → AdaBoost {b:.4f}"})
    if boosting is not None:
        model, X, y = boosting
        y_pm = np.where(np.asarray(y) == model.classes_[1], 1.0, -1.0)
        total = np.cumsum(model.estimator_weights_)
        staged = [float(np.min(y_pm * F / s))
                  for F, s in zip(model.staged_decision_function(X), total, strict=True)]
        out.append({"claim": "boosting increases the margin",
                    "holds": bool(staged[-1] > staged[0]),
                    "detail": f"AdaBoost's smallest training margin {staged[0]:.3f} (round 1) "
                              f"→ {staged[-1]:.3f} (round {len(staged)})"})
    return out


def run_study(data, *, method="oob", n_bootstrap=200, n_jobs=None, models=None,
              random_state=0, progress=None) -> StudyResult:
    """Decompose every model of the table on one data set.

    Parameters
    ----------
    data : Dataset
        From :func:`margin_opt.datasets.load_dataset`: two classes (classification)
        or continuous targets (regression).
    method : {"oob", "holdout"}, default="oob"
        ``"holdout"`` splits off 30 % of the data (stratified for classes) as the
        test set.
    n_bootstrap : int, default=200
        Replicates B per model.
    n_jobs : int or None, default=None
        Replicates in parallel (joblib).
    models : dict, optional
        Name → estimator; default :func:`classification_models` or
        :func:`regression_models` by the targets.
    random_state : int, default=0
        Seeds the replicates (the same for every model) and the split.
    progress : bool, optional
        A ``tqdm.auto`` bar over the models: True shows it, False hides it; by default
        it shows where a person is watching (a terminal or a Jupyter notebook, see
        :func:`margin_opt.progress.progress`).

    Returns
    -------
    result : StudyResult

    Raises
    ------
    ValueError
        Targets that are neither two classes nor continuous; see also
        :func:`~margin_opt.studies.decomposition.bias_variance`.
    """
    X, y = data.X, np.asarray(data.y)
    task = _task(y)
    if models is None:
        models = classification_models() if task == "classification" else regression_models()
    kw = {}
    X_fit, y_fit = X, y
    if method == "holdout":
        X_fit, X_te, y_fit, y_te = train_test_split(
            X, y, test_size=0.3, random_state=random_state,
            stratify=y if task == "classification" else None)
        kw = {"X_test": X_te, "y_test": y_te}
    result = StudyResult(data.name, task, method, n_bootstrap)
    items = list(models.items())
    items = watched(items, desc="bias-variance", enabled=progress)
    for name, est in items:
        t0 = time.perf_counter()
        bv = bias_variance(est, X_fit, y_fit, method=method, n_bootstrap=n_bootstrap,
                           n_jobs=n_jobs, random_state=random_state, **kw)
        row = {"model": name, **{k: bv.to_dict()[k] for k in
                                 ("loss", "bias2", "variance", "net_variance")}}
        if task == "classification":
            row.update(_margins(name, est, X_fit, y_fit, random_state, result))
        row["seconds"] = time.perf_counter() - t0
        result.rows.append(row)
    result.claims = _claims(result.rows, result.boosting)
    return result


def _margins(name, est, X, y, random_state, result):
    """Fit once on the training data; vote margins where the model votes."""
    if not is_classifier(est):
        return {"margin_mean": None, "margin_min": None}
    model = _seed_unset(clone(est), random_state).fit(X, y)
    if hasattr(model, "margins"):
        m = model.margins(X, y)
    elif hasattr(model, "tree_"):  # a single tree is a vote of one: ±1
        m = np.where(model.predict(X) == y, 1.0, -1.0)
    else:
        return {"margin_mean": None, "margin_min": None}
    result.margins[name] = m
    if isinstance(model, AdaBoost):
        result.boosting = (model, X, y)
    return {"margin_mean": float(m.mean()), "margin_min": float(m.min())}
