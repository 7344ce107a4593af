"""The margin-opt command line on real data."""

import json

import pytest

from margin_opt import cli


def test_verify_default_breast_cancer(capsys):
    assert cli.main(["verify"]) == 0
    out = capsys.readouterr().out
    assert "breast_cancer" in out and "cvxpy-dual" in out and "libsvm" in out
    assert "all certificates passed" in out


def test_verify_json_heart_scale(capsys, heart_scale):
    assert cli.main(["verify", "heart_scale", "--json", "--methods",
                     "cvxpy-dual,cvxpy-primal,libsvm"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["data"]["n_samples"] == 270 and report["ok"]
    rows = {r["method"]: r for r in report["rows"]}
    assert rows["cvxpy-primal"]["agreement"] < 1e-6
    assert rows["libsvm"]["agreement"] < 1e-6


def test_verify_exit_code_on_failure(capsys, monkeypatch):
    import dataclasses

    from margin_opt import methods

    strict = dataclasses.replace(methods.METHODS["cvxpy-dual"], accuracy=1e-30)
    monkeypatch.setitem(methods.METHODS, "cvxpy-dual", strict)
    assert cli.main(["verify", "iris-binary", "--methods", "cvxpy-dual"]) == 1
    assert "FAIL" in capsys.readouterr().out


def test_bad_arguments(capsys):
    assert cli.main(["verify", "no-such-data"]) == 2
    assert "no data set" in capsys.readouterr().err
    assert cli.main(["verify", "iris-binary", "--C", "-1"]) == 2
    with pytest.raises(SystemExit):
        cli.main(["verify", "--gamma", "wide"])


@pytest.mark.parametrize("model,extra", [("svc", ["--kernel", "linear"]), ("svr", []),
                                         ("adaboost", ["--n-estimators", "10"])])
def test_fit(capsys, model, extra):
    data = {"svc": "iris-binary", "svr": "diabetes", "adaboost": "iris-binary"}[model]
    assert cli.main(["fit", data, "--model", model, "--json", *extra]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["training_score"] > 0.3
    if model != "adaboost":
        assert summary["certificate"]["ok"] and summary["method"] == "smo"


def test_default_methods_scale_with_n():
    from margin_opt.reports.methods import default_methods

    assert default_methods("svc", "rbf", 500)[0] == "cvxpy-dual"
    large = default_methods("svc", "rbf", 20000)
    assert "cvxpy-dual" not in large and large[-2:] == ["smo", "libsvm"]
    assert "cvxpy-dual" in default_methods("svc", "linear", 20000)


def test_verify_sparse_libsvm_row(capsys, a9a):
    """LIBSVM is fed 32-bit sparse indices; SMO and LIBSVM agree on a sparse subsample."""
    import numpy as np

    from margin_opt.datasets import Dataset
    from margin_opt.reports import svm as report

    idx = np.random.default_rng(0).choice(a9a.X.shape[0], 400, replace=False)
    data = Dataset(a9a.X[idx], a9a.y[idx], "a9a-400")
    rep, text, ok = report.verify(data, methods=["cvxpy-dual", "smo", "libsvm"])
    assert ok, text
    assert all(r["agreement"] < 1e-6 for r in rep["rows"])
