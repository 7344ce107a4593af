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


def test_hard_margin_verify_lists_libsvm_as_not_applicable(capsys):
    assert cli.main(["verify", "iris-binary", "--C", "inf", "--kernel", "linear"]) == 0
    out = capsys.readouterr().out
    assert "libsvm" in out and "n/a: LIBSVM has no hard margin" in out and "ERROR" not in out


def test_verify_columns_are_sized_to_their_numbers(capsys):
    """Large objectives (the raw hard margin on breast_cancer) no longer run together."""
    assert cli.main(["verify", "breast_cancer", "--C", "inf", "--kernel", "linear",
                     "--methods", "cvxpy-dual,cvxpy-primal"]) == 0
    lines = capsys.readouterr().out.splitlines()
    head = lines[1].split()
    row = lines[2].split()
    assert head[:4] == ["method", "solver", "primal", "dual"] and len(row) >= 10
    assert abs(float(row[2]) - float(row[3])) < 1e-3 * float(row[3])


def test_iterative_methods_do_not_fail_the_run(capsys, tmp_path):
    plot = tmp_path / "conv.png"
    code = cli.main(["verify", "iris-binary", "--kernel", "linear", "--methods",
                     "subgradient,pegasos", "--plot", str(plot)])
    out = capsys.readouterr().out
    assert code == 0 and "iterative" in out and "not counted" in out
    assert (tmp_path / "conv-margins.png").exists() and (tmp_path / "conv-convergence.png").exists()


@pytest.mark.parametrize("model,names", [("svc", ["f.png"]), ("svr", ["f.png"]),
                                         ("adaboost", ["f-errors.png", "f-margins.png",
                                                       "f-alpha.png", "f-losses.png"])])
def test_verify_plot_writes_well_named_pngs(capsys, tmp_path, model, names):
    data = {"svc": "iris-binary", "svr": "diabetes", "adaboost": "iris-binary"}[model]
    extra = ["--n-estimators", "5"] if model == "adaboost" else []
    assert cli.main(["verify", data, "--model", model, "--plot", str(tmp_path / "f.png"),
                     *extra]) == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(names)
    assert "plot" in capsys.readouterr().out


def test_fit_iterative_solver_exits_zero_and_adaboost_prints_its_certificate(capsys):
    assert cli.main(["fit", "iris-binary", "--kernel", "linear", "--solver", "pegasos"]) == 0
    assert cli.main(["fit", "iris-binary", "--model", "adaboost", "--n-estimators", "5"]) == 0
    assert "AdaBoost certificate: OK" in capsys.readouterr().out


def test_print_problem_is_mathematics():
    import numpy as np

    from margin_opt import SVMProblem, SVRProblem
    from margin_opt.datasets import load_dataset

    d = load_dataset("breast_cancer")
    text = str(SVMProblem(d.X, d.y, kernel="rbf"))
    assert len(text.splitlines()) <= 40 and "minimize" in text and "maximize" in text
    assert "n = 569" in text and "rbf(gamma=" in text and "C = 1" in text
    hard = str(SVMProblem(d.X, d.y, C=np.inf, kernel="linear"))
    assert "hard-margin SVM" in hard and "pegasos" not in hard.splitlines()[-1]
    r = load_dataset("diabetes")
    assert "ε = 0.1" in str(SVRProblem(r.X, r.y)) and len(str(SVRProblem(r.X, r.y))
                                                           .splitlines()) <= 40
