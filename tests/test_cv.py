"""Cross-validated SVMs (margin_opt.estimators.cv: SVCCV, SVRCV), against scikit-learn's
GridSearchCV over sklearn.svm.SVC / SVR on the same splits (LIBSVM: an independent
solver, no path).

Tolerances: every model the CV estimators score is within a relative ``eps`` of the
optimum in objective, which bounds no single prediction: a validation point on the
boundary may flip, moving an accuracy by 1/n_val.  A list of Cs is solved point by
point (at eps/10 = 1e-5, LIBSVM here at tol 1e-6): the scores agree exactly on
breast_cancer and to 1e-5 in R² on diabetes; a range of Cs is scored from the covering
points of an ε-path (eps = 1e-4): exactly on breast_cancer, to 3e-3 in R² on diabetes
(the models differ by up to that in objective; measured 1.0e-3 on the mean, 3.1e-3 on
a split).  The tests assert 1/n_val for accuracies and 1e-4 / 1e-2 for R², and the same
best (C, γ).
"""

import numpy as np
import pytest
from sklearn import svm
from sklearn.model_selection import GridSearchCV, KFold, StratifiedKFold

from margin_opt import SVC, SVCCV, SVR, SVRCV
from margin_opt.datasets import load_dataset

CS = [0.1, 0.3, 1.0, 3.0, 10.0]
GAMMAS = [0.01, 0.03, 0.1]


@pytest.fixture(scope="module")
def cancer():
    d = load_dataset("breast_cancer")        # 569 × 30, standardized
    return d.X, d.y


@pytest.fixture(scope="module")
def diabetes():
    d = load_dataset("diabetes")             # 442 × 10, standardized, y standardized
    return d.X, d.y


@pytest.fixture(scope="module")
def cancer_fit(cancer):
    X, y = cancer
    return SVCCV(Cs=CS, gammas=GAMMAS, cv=StratifiedKFold(5)).fit(X, y)


def _reference(estimator, X, y, Cs, gammas, cv, **kw):
    return GridSearchCV(estimator, {"C": list(Cs), "gamma": list(gammas)}, cv=cv,
                        **kw).fit(X, y)


def _assert_agree(ours, ref, n_splits, tol):
    assert ours.cv_results_["params"] == ref.cv_results_["params"]
    for key in ["mean_test_score", *(f"split{k}_test_score" for k in range(n_splits))]:
        np.testing.assert_allclose(ours.cv_results_[key], ref.cv_results_[key], rtol=0,
                                   atol=tol, err_msg=key)
    assert ours.best_params_ == ref.best_params_
    assert ours.best_index_ == ref.best_index_
    assert ours.best_score_ == pytest.approx(ref.best_score_, abs=tol)


def test_svccv_grid_agrees_with_gridsearchcv(cancer, cancer_fit):
    X, y = cancer
    ref = _reference(svm.SVC(tol=1e-6), X, y, CS, GAMMAS, StratifiedKFold(5))
    n_val = min(len(test) for _, test in StratifiedKFold(5).split(X, y))
    _assert_agree(cancer_fit, ref, 5, 1.0 / n_val)
    np.testing.assert_array_equal(cancer_fit.cv_results_["rank_test_score"],
                                  ref.cv_results_["rank_test_score"])
    np.testing.assert_allclose(cancer_fit.cv_results_["std_test_score"],
                               ref.cv_results_["std_test_score"], atol=1.0 / n_val)
    assert list(cancer_fit.cv_results_["param_C"]) == list(ref.cv_results_["param_C"])


def test_svccv_range_path_agrees_with_gridsearchcv(cancer):
    """Cs as a range: one ε-path per (fold, γ) covers [0.1, 10]; its 5 log-spaced Cs are
    scored from the covering points."""
    X, y = cancer
    ours = SVCCV(Cs=(0.1, 10.0, 5), gammas=[0.03], cv=3).fit(X, y)
    np.testing.assert_allclose(ours.Cs_, np.logspace(-1, 1, 5))
    ref = _reference(svm.SVC(tol=1e-6), X, y, ours.Cs_, [0.03], StratifiedKFold(3))
    _assert_agree(ours, ref, 3, 1.0 / 189)
    for path in (row[0] for row in ours.paths_):
        assert not path.grid and path.C_min == 0.1 and path.C_max == 10.0
        assert all(p.certificate.ok for p in path)
        for C in ours.Cs_:      # every C scored is covered, certified at that C
            cert = path.solution_at(C).certificate
            assert cert.ok and cert.duality_gap <= 1e-4


def test_svrcv_agrees_with_gridsearchcv(diabetes):
    X, y = diabetes
    Cs, gammas = [0.3, 1.0, 3.0, 10.0], [0.01, 0.1]
    ours = SVRCV(Cs=Cs, gammas=gammas, cv=KFold(5)).fit(X, y)
    ref = _reference(svm.SVR(tol=1e-6), X, y, Cs, gammas, KFold(5))
    _assert_agree(ours, ref, 5, 1e-4)
    assert isinstance(ours.best_estimator_, SVR) and ours.best_estimator_.certificate_.ok
    assert ours.score(X, y) == pytest.approx(ref.score(X, y), abs=1e-4)


def test_svrcv_range_path_agrees_with_gridsearchcv(diabetes):
    X, y = diabetes
    ours = SVRCV(Cs=(0.3, 30.0, 5), gammas=[0.03], cv=KFold(3)).fit(X, y)
    ref = _reference(svm.SVR(tol=1e-6), X, y, ours.Cs_, [0.03], KFold(3))
    _assert_agree(ours, ref, 3, 1e-2)


def test_refit_is_certified_and_delegates(cancer, cancer_fit):
    X, y = cancer
    cv = cancer_fit
    best = cv.best_estimator_
    assert isinstance(best, SVC) and best.certificate_.ok
    assert (best.C, best.gamma) == (cv.C_, cv.gamma_) == (cv.best_params_["C"],
                                                            cv.best_params_["gamma"])
    np.testing.assert_array_equal(cv.predict(X), best.predict(X))
    np.testing.assert_array_equal(cv.decision_function(X), best.decision_function(X))
    assert cv.score(X, y) == best.score(X, y)
    np.testing.assert_array_equal(cv.classes_, np.unique(y))
    ref = svm.SVC(C=cv.C_, gamma=cv.gamma_, tol=1e-6).fit(X, y)
    assert np.mean(cv.predict(X) == ref.predict(X)) >= 1 - 1 / X.shape[0]


def test_paths_are_kept_with_their_certificates(cancer_fit):
    cv = cancer_fit
    assert len(cv.paths_) == cv.n_splits_ == 5 and all(len(row) == 3 for row in cv.paths_)
    for row in cv.paths_:
        for gamma, path in zip(GAMMAS, row, strict=True):
            assert path.grid and np.allclose(path.C, CS)
            assert path.problem.kernel.gamma == gamma
            assert all(p.certificate.ok for p in path)
    per_C = cv.cv_results_["mean_fit_time"]
    assert per_C.shape == (len(CS) * len(GAMMAS),) and np.all(per_C > 0)


def test_default_gamma_is_scale_per_fold(cancer):
    X, y = cancer
    ours = SVCCV(Cs=[0.3, 3.0], cv=3).fit(X, y)
    ref = _reference(svm.SVC(tol=1e-6), X, y, [0.3, 3.0], ["scale"], StratifiedKFold(3))
    _assert_agree(ours, ref, 3, 1 / 189)
    assert ours.gamma_ == "scale" and ours.best_estimator_.gamma == "scale"


def test_scoring_through_decision_values(cancer):
    """A scorer that reads decision_function (ROC AUC) gets the path model's values."""
    X, y = cancer
    ours = SVCCV(Cs=[0.1, 1.0, 10.0], gammas=[0.03], cv=3, scoring="roc_auc").fit(X, y)
    ref = _reference(svm.SVC(tol=1e-6), X, y, [0.1, 1.0, 10.0], [0.03], StratifiedKFold(3),
                     scoring="roc_auc")
    _assert_agree(ours, ref, 3, 1e-4)


def test_multiclass_falls_back_to_fits_per_C():
    from sklearn.datasets import load_iris

    X, y = load_iris(return_X_y=True)
    ours = SVCCV(Cs=[0.1, 1.0, 10.0], gammas=[0.1, 1.0], cv=5).fit(X, y)
    ref = _reference(svm.SVC(tol=1e-6), X, y, [0.1, 1.0, 10.0], [0.1, 1.0],
                     StratifiedKFold(5))
    _assert_agree(ours, ref, 5, 1 / 30)
    assert all(p is None for row in ours.paths_ for p in row)
    assert ours.decision_function(X[:4]).shape == (4, 3)


def test_refit_false_keeps_the_search_only(cancer):
    X, y = cancer
    cv = SVCCV(Cs=[1.0], gammas=[0.03], cv=2, refit=False).fit(X, y)
    assert cv.best_params_ == {"C": 1.0, "gamma": 0.03} and not hasattr(cv, "best_estimator_")
    with pytest.raises(AttributeError, match="refit=False"):
        cv.predict(X)


@pytest.mark.parametrize("params, match", [
    ({"Cs": []}, "Cs is empty"),
    ({"Cs": [1.0, 0.0]}, r"C > 0"),
    ({"Cs": [-1.0]}, r"C > 0"),
    ({"Cs": 0}, "must be ≥ 1"),
    ({"Cs": (10.0, 1.0)}, "C_min must be below C_max"),
    ({"Cs": (0.0, 1.0)}, r"C > 0"),
    ({"Cs": "many"}, "Cs must be"),
    ({"cv": 1}, r"at least 2 folds"),
    ({"gammas": []}, "gammas is empty"),
    ({"gammas": [0.1, 0.0]}, "gamma must be positive"),
    ({"gammas": ["wide"]}, "'scale' or 'auto'"),
    ({"scoring": ["accuracy", "f1"]}, "one metric"),
])
def test_bad_input_gets_a_specific_error(cancer, params, match):
    X, y = cancer
    with pytest.raises(ValueError, match=match):
        SVCCV(**params).fit(X, y)


def test_parallel_gives_the_same_results(cancer, cancer_fit):
    X, y = cancer
    par = SVCCV(Cs=CS, gammas=GAMMAS, cv=StratifiedKFold(5), n_jobs=2).fit(X, y)
    for key, value in cancer_fit.cv_results_.items():
        if "time" not in key and key != "params":
            np.testing.assert_array_equal(par.cv_results_[key], value, err_msg=key)
    assert par.best_params_ == cancer_fit.best_params_


def test_dask_backend_gives_the_same_results(cancer):
    distributed = pytest.importorskip("dask.distributed")
    import joblib

    X, y = cancer
    est = SVCCV(Cs=[0.3, 3.0], gammas=[0.01, 0.1], cv=3)
    serial = est.fit(X, y).cv_results_["mean_test_score"].copy()
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster), joblib.parallel_backend("dask"):
        est.fit(X, y)
    np.testing.assert_array_equal(est.cv_results_["mean_test_score"], serial)
    assert est.best_estimator_.certificate_.ok
