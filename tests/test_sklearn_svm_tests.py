"""scikit-learn's own tests of ``sklearn.svm`` (test_svm.py and test_sparse.py, as
installed with scikit-learn) run with its seven SVM classes replaced by margin_opt's
(tests/sklearn_svm_swap.py).  They pass but for the deviations listed here, each with its
reason (docs/svm.rst, "scikit-learn's own tests"): private internals, scikit-learn 1.9's
deprecations of its own features, and places where our contract differs on purpose."""

import json
import os
import pathlib
import subprocess
import sys

import pytest

#: scikit-learn's tests that margin_opt does not pass, and why: test function →
#: (reason, None for every parametrization or the substrings of the failing ones' ids)
DEVIATIONS = {
    # private internals
    "test_gamma_scale": ("reads the private _gamma", None),
    "test_svc_raises_error_internal_representation": ("edits the private _n_support", None),
    "test_tweak_params": ("edits the private _dual_coef_", None),
    "test_n_iter_libsvm": ("compares NuSVC's with the private _libsvm.fit's on 4 classes",
                           ["4-NuSVC"]),
    # scikit-learn 1.9 deprecating its own features
    "test_probability_raises_futurewarning": ("scikit-learn 1.9 deprecates probability=; "
                                              "ours keeps LIBSVM's calibration", None),
    "test_svc_nusvc_probA_probB_deprecated": ("the same deprecation, of probA_/probB_", None),
    # our contract, on purpose
    "test_svc": ("dense and sparse fits agree within the certificate's tol (1e-6 at "
                 "tol=1e-6), not to 1e-7: dense RBF data are centred before the kernel, "
                 "sparse ones cannot be, so the rounding differs (and the sigmoid kernel "
                 "is not PSD)", ["X_train2", "rbf-X_train3"]),
    "test_svc_iris": ("the same (dense against sparse, 1e-7)", ["poly", "rbf"]),
    "test_sparse_oneclasssvm": ("the same (dense against sparse, 1e-7)",
                                ["linear-X_train2", "rbf-X_train1", "rbf-X_train3"]),
    "test_precomputed": ("a linear kernel's dual is not unique: kernel and precomputed "
                         "fits agree to ~5e-6, not 6 decimals", None),
    "test_svc_clone_with_callable_kernel": ("the same (linear kernel against a callable)",
                                            None),
    "test_dense_liblinear_intercept_handling": ("intercept_scaling defaults to None (the "
                                                "free intercept); =1 is liblinear's", None),
    "test_sparse_liblinear_intercept_handling": ("the same default", None),
    "test_bad_input": ("a model fitted on dense X also predicts sparse (LIL) X", ["lil"]),
    "test_immutable_coef_property": ("coef_ is the fitted weights our predictions read: a "
                                     "change is not silently ignored", None),
    "test_linear_svm_convergence_warnings": ("the warning names our solver, not liblinear",
                                             None),
    "test_linearsvm_liblinear_sample_weight": ("tol is the certificate's: 1e-12 is below the "
                                               "L1 problem's rounding (NotCertifiedError)",
                                               ["LinearSVC-params0"]),
    "test_svc_nonfinite_params": ("gamma='scale' on data of zero variance gets our own "
                                  "error", None),
    "test_svr": ("constant targets are refused (nothing to regress)", None),
    "test_svr_errors": ("a callable of the wrong shape fails at fit, not at predict", None),
}


def _sklearn_svm_tests():
    import sklearn

    folder = pathlib.Path(sklearn.__file__).parent / "svm" / "tests"
    files = [folder / "test_svm.py", folder / "test_sparse.py"]
    return files if all(f.is_file() for f in files) else None


def test_scikit_learns_own_svm_tests_pass_but_for_the_listed_deviations(tmp_path):
    files = _sklearn_svm_tests()
    if files is None:
        pytest.skip("scikit-learn's tests are not installed with it")
    here = pathlib.Path(__file__).parent
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(here), os.environ.get("PYTHONPATH", "")]), "MARGIN_OPT_NUM_THREADS": "1",
        "MARGIN_OPT_SKLEARN_DEVIATIONS": json.dumps({k: v[1] for k, v in DEVIATIONS.items()})}
    out = subprocess.run(
        # rooted at scikit-learn's test folder: no ini file or conftest of a checkout or of
        # scikit-learn above it (its conftest parametrizes global_random_seed as the plugin)
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist",
         "-p", "sklearn_svm_swap", "-W", "ignore", f"--rootdir={files[0].parent}",
         f"--confcutdir={files[0].parent}", "-o", "addopts=", *map(str, files)],
        capture_output=True, text=True, cwd=tmp_path, env=env, timeout=600)
    tail = out.stdout[-3000:]
    assert out.returncode == 0, tail
    passed = int(tail.rsplit(" passed", 1)[0].split()[-1])
    assert passed >= 220 and " failed" not in tail, tail      # 228 of 286 (58 deselected)
