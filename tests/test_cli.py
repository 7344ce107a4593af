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
    from margin_opt.reports import svm as report

    monkeypatch.setitem(report.METHODS, "cvxpy-dual", ({"method": "cvxpy-dual"}, 1e-30))
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
