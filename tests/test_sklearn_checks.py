"""scikit-learn's own estimator checks (``parametrize_with_checks``) on our estimators.

The only expected failures are those scikit-learn itself marks for its peers
(``sklearn.svm.SVC`` / ``SVR``, ``AdaBoostClassifier``), with scikit-learn's reason:
fitting with a sample weight of 2 is not the same as repeating the sample, because
``gamma="scale"`` (the variance of X) and the stumps' thresholds (midpoints between
distinct values) depend on the repeated data.
"""

import warnings

import pytest
from sklearn.utils.estimator_checks import parametrize_with_checks

from margin_opt import SVC, SVR, AdaBoost

#: scikit-learn's PER_ESTIMATOR_XFAIL_CHECKS for SVC, SVR and AdaBoostClassifier
#: (sklearn/utils/_test_common/instance_generator.py, version 1.9), reason verbatim.
SKLEARN_XFAIL = {
    "check_sample_weight_equivalence_on_dense_data":
        "sample_weight is not equivalent to removing/repeating samples.",
    "check_sample_weight_equivalence_on_sparse_data":
        "sample_weight is not equivalent to removing/repeating samples.",
}

ESTIMATORS = [
    SVC(),
    SVR(),
    AdaBoost(),
    SVC(kernel="precomputed"),
    SVR(kernel="precomputed"),
    SVC(multi_class="crammer_singer"),
    SVC(probability=True, random_state=0),
]


def _expected_failures(estimator):
    return SKLEARN_XFAIL


@parametrize_with_checks(ESTIMATORS, expected_failed_checks=_expected_failures)
def test_sklearn_estimator_checks(estimator, check):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        check(estimator)


@pytest.mark.parametrize("estimator", [SVC(), SVR(), AdaBoost()])
def test_every_method_says_not_fitted(estimator):
    from sklearn.exceptions import NotFittedError

    X = [[0.0, 1.0], [1.0, 0.0]]
    for method in ("predict", "decision_function", "predict_proba", "staged_predict",
                   "learner_outputs"):
        if hasattr(estimator, method):
            with pytest.raises(NotFittedError):
                out = getattr(estimator, method)(X)
                list(out) if method.startswith("staged") else None
    if hasattr(estimator, "margins"):
        with pytest.raises(NotFittedError):
            estimator.margins(X, [0, 1])
