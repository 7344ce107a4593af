"""A pytest plugin (not a test module): scikit-learn's SVM classes replaced by margin_opt's,
so that scikit-learn's own tests of ``sklearn.svm`` run against them
(tests/test_sklearn_svm_tests.py loads it with ``-p``)."""

import json
import os

import sklearn.svm as S

import margin_opt

#: the classes of sklearn.svm that margin_opt replaces
SWAPPED = ("SVC", "SVR", "LinearSVC", "LinearSVR", "NuSVC", "NuSVR", "OneClassSVM")


def pytest_configure(config):
    config.addinivalue_line("markers", "thread_unsafe: scikit-learn's marker")
    for name in SWAPPED:
        setattr(S, name, getattr(margin_opt, name))


def pytest_generate_tests(metafunc):
    # scikit-learn's own conftest (not installed with its wheel) gives this fixture
    if "global_random_seed" in metafunc.fixturenames:
        metafunc.parametrize("global_random_seed", [42])


def pytest_collection_modifyitems(config, items):
    # MARGIN_OPT_SKLEARN_DEVIATIONS (JSON): {test function: null (every parametrization)
    # or [substrings of the parametrizations' ids]}; those items are deselected
    deviations = json.loads(os.environ.get("MARGIN_OPT_SKLEARN_DEVIATIONS", "{}"))

    def deviates(item):
        name = getattr(item, "originalname", item.name)
        if name not in deviations:
            return False
        params = deviations[name]
        return params is None or any(p in item.name for p in params)

    dropped = [it for it in items if deviates(it)]
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = [it for it in items if not deviates(it)]
