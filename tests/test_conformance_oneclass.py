"""The conformance kit's oneclass suite: ``solve(K, nu) -> (alpha, rho[, status])`` in
LIBSVM's scale (0 ≤ α ≤ 1, Σα = νn, f = Kα − ρ), graded by the one-class certificate.

References: every stored reference is re-certified and solved again by an independent
method (Clarabel, LIBSVM); the graded solvers are our SMO, scikit-learn's OneClassSVM
(LIBSVM) and two wrong solvers whose rows must name the checks they fail.
"""

import sys
import textwrap
from functools import partial

import numpy as np
import pytest

from margin_opt.testing import (
    FAMILIES,
    check,
    get_problem,
    get_reference,
    grade,
    problems,
    run_conformance,
)
from margin_opt.testing.adapters import libsvm, smo
from margin_opt.testing.reference import perturbed_reference, recertify
from margin_opt.testing.suites import perturbation, perturbed

#: the perturbations' seed of the runs below (fixed: the same instances on every run)
SEED = 0
#: ν = 1: every α = 1, so ρ is only bounded below (ρ ≥ max Kα)
NU_ONE = {"oneclass-nu-one-rbf-200", "oneclass-nu-one-linear-200"}


def c_svc_box(K, nu):
    """Wrong: the paper's scale (0 ≤ α ≤ 1/(νn), Σα = 1, ρ/(νn)) handed over as LIBSVM's,
    as a solver that maps ν to a C-SVC-style box 1/(νn) and does not rescale would."""
    alpha, rho, status = smo(K, nu, tol=1e-8)
    s = nu * K.shape[0]
    return alpha / s, rho / s, status


def rho_off(K, nu):
    """Wrong by a little: the exact α with ρ moved by 1e-3."""
    alpha, rho, status = smo(K, nu, tol=1e-8)
    return alpha, rho + 1e-3, status


# ---------------------------------------------------------------------- the suite
def test_suite_has_the_problems_that_break_one_class_solvers():
    ps = problems("oneclass")
    assert len(ps) >= 15 and len({p.name for p in ps}) == len(ps)
    fams = {p.family for p in ps}
    assert {"duplicates", "rank_deficient", "nu", "no_free_sv", "kernel_scale", "unscaled",
            "outliers", "real"} <= fams <= set(FAMILIES)
    nus = {p.arrays()["nu"] for p in ps}
    assert min(nus) <= 1e-3 and 1.0 in nus
    for p in ps:
        K, nu = p.args()
        assert K.shape == (p.n, p.n) and np.array_equal(K, K.T) and 0 < nu <= 1
        with pytest.raises(ValueError):
            K[0, 0] = 1.0                                   # read-only
    # duplicated points are exact copies; the rank-deficient kernels are
    K = get_problem("oneclass-duplicates-rbf-300").arrays()["K"]
    assert np.sum(np.triu(np.isclose(K, 1.0, rtol=0, atol=1e-15), 1)) >= 60
    ev = np.linalg.eigvalsh(get_problem("oneclass-rank-linear-d2-400").arrays()["K"])
    assert np.sum(ev > 1e-9 * ev.max()) == 2
    # the kernel scales: entries ~1e-5 and ~1e9
    assert get_problem("oneclass-scale-tiny-linear-200").arrays()["K"].max() < 1e-4
    assert get_problem("oneclass-unscaled-linear-200").arrays()["K"].max() > 1e9


@pytest.mark.parametrize("problem", problems("oneclass"), ids=str)
def test_stored_references_recertified_by_two_methods(problem):
    r = recertify(problem)
    assert r["certified"], r["reason"]
    assert r["agrees"], r
    ref = get_reference(problem)
    alpha = ref.coef
    assert np.all((alpha >= 0) & (alpha <= 1))
    assert abs(alpha.sum() - problem.arrays()["nu"] * problem.n) <= 1e-9 * problem.n


def test_references_of_the_degenerate_problems():
    """ν = 1: every α = 1; the narrow RBF: every point free, on the boundary."""
    for name in NU_ONE:
        np.testing.assert_allclose(get_reference(get_problem(name)).coef, 1.0)
    a = get_reference(get_problem("oneclass-scale-narrow-rbf-300")).coef
    assert np.all((a > 1e-6) & (a < 1 - 1e-6))


def test_perturbed_instance_maps_the_optimum_exactly():
    """K' = s·K[π, π] with ν and the box as they are: α'* = α*[π], ρ'* = s·ρ*."""
    p = get_problem("oneclass-real-heart-rbf")
    for seed in (0, 1, 2):
        q, pert = perturbed(p, seed), perturbation(p, seed)
        assert pert.sign == 1.0 and q.args()[1] == p.args()[1]
        ref, mapped = get_reference(p), perturbed_reference(p, seed)
        np.testing.assert_array_equal(mapped.coef, ref.coef[pert.permutation])
        assert mapped.b == pert.scale * ref.b
        assert grade(q, mapped.coef, mapped.b, 1e-9, mapped).ok


def test_check_and_the_protocols_names():
    p = get_problem("oneclass-outliers-rbf-300")
    ref = get_reference(p)
    check(p, ref.coef, ref.b)
    with pytest.raises(AssertionError, match="oneclass-outliers-rbf-300 .*fails at tol"):
        check(p, ref.coef, ref.b - 0.01)               # ρ off: f off on the boundary
    g = grade(p, ref.coef[:-1], ref.b, 1e-6, ref)
    assert g.failed == ("answer",) and "alpha has shape" in g.reason
    rows = run_conformance(lambda K, nu: (np.zeros(len(K)), "rho"), "oneclass",
                           problems=[p], warmup=False).rows
    assert "rho must be a real number" in rows[0].reason


# ---------------------------------------------------------------------- solvers graded
def test_our_smo_passes_every_problem():
    rep = run_conformance(partial(smo, tol=1e-8), "oneclass", 1e-6, seed=SEED,
                          name="smo-1e-8")
    assert len(rep.rows) == len(problems("oneclass"))
    assert rep.all_passed, str(rep)
    assert rep.honesty()["wrong"] == []


def test_sklearn_oneclass_passes_all_but_nu_one():
    """scikit-learn's OneClassSVM (LIBSVM, tol 1e-10) passes every problem except ν = 1:
    there every α is at its bound, LIBSVM takes ρ = (ub + lb)/2 with ub = +inf, and
    scikit-learn refuses the non-finite intercept (ValueError)."""
    rep = run_conformance(partial(libsvm, tol=1e-10), "oneclass", 1e-6, seed=SEED,
                          name="sklearn OneClassSVM")
    failed = {r.problem: r for r in rep.rows if not r.ok}
    assert set(failed) == NU_ONE, str(rep)
    for r in failed.values():
        assert r.failed == ("exception",) and "not finite" in r.reason
    assert rep.honesty()["wrong"] == []                 # it never claimed a wrong answer


#: the ρ-off solver's rows that pass: ρ + 1e-3 is still optimal where ρ is not pinned by
#: a free multiplier (ν = 1, and the linear problems whose optimum has every support
#: vector at its bound), and within tol × scale where f is ~1e2–1e10 (the tolerance is
#: in units of f)
RHO_OFF_PASSES = NU_ONE | {"oneclass-duplicates-linear-200", "oneclass-rank-linear-d2-400",
                           "oneclass-unscaled-linear-200", "oneclass-outliers-linear-300",
                           "oneclass-real-breast-cancer-raw-linear"}
def test_wrong_solvers_fail_and_the_rows_name_the_checks():
    box = run_conformance(c_svc_box, "oneclass", 1e-6, seed=SEED)
    assert box.n_passed == 0, str(box)
    for r in box.rows:             # Σα = 1, not νn; another problem's objective
        assert {"dual_residual", "duality_gap", "reference"} <= set(r.failed), r
        assert "dual_residual" in r.reason and r.status == "optimal"
    assert box.honesty()["right"] == 0

    off = run_conformance(rho_off, "oneclass", 1e-6, seed=SEED)
    assert {r.problem for r in off.rows if r.ok} == RHO_OFF_PASSES, str(off)
    for r in off.rows:
        if not r.ok:
            assert "complementary_slackness" in r.failed and "nu_property" in r.failed, r
            assert r.distance < 1e-10                   # α is right: only ρ is wrong
    cancer = next(r for r in off.rows if r.problem == "oneclass-real-breast-cancer-rbf")
    assert "table: 0 < α < s" in cancer.failed and "6 points in '0 < α < s'" in cancer.reason


def test_adapters_solve_in_the_protocol():
    from margin_opt.testing.adapters import solvers

    p = get_problem("oneclass-real-heart-rbf")
    hand = solvers("oneclass")
    assert "pegasos" not in hand and {"smo", "libsvm", "cvxpy-clarabel"} <= set(hand)
    for name in ("smo", "libsvm", "cvxpy-clarabel"):
        alpha, rho, status = hand[name](1e-9)(*p.args())
        assert status == "optimal", name
        check(p, alpha, rho, tol=1e-6)


SOLVER_MODULE = '''
from margin_opt.testing.adapters import smo

def honest(K, nu):
    return smo(K, nu, tol=1e-8)

def paper_scale(K, nu):
    alpha, rho, status = smo(K, nu, tol=1e-8)
    return alpha / (nu * len(K)), rho / (nu * len(K))
'''


def test_cli_grades_a_one_class_solver(tmp_path, monkeypatch, capsys):
    import json

    from margin_opt.cli import main

    (tmp_path / "my_oneclass.py").write_text(textwrap.dedent(SOLVER_MODULE))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))     # the cwd entry the CLI adds
    names = "oneclass-nu-tiny-rbf-300,oneclass-real-heart-rbf"
    assert main(["conformance", "my_oneclass:honest", "--suite", "oneclass", "--problems",
                 names, "--json", "--seed", "3"]) == 0
    assert json.loads(capsys.readouterr().out)["n_passed"] == 2
    assert main(["conformance", "my_oneclass:paper_scale", "--suite", "oneclass",
                 "--problems", names]) == 1
    out = capsys.readouterr().out
    assert "on the oneclass suite" in out and "passed 0 of 2" in out and "dual_residual" in out
    assert main(["conformance", "my_oneclass:honest", "--suite", "oneclass", "--problems",
                 "svc-nofree-linear-200"]) == 2
    assert "not in the oneclass suite" in capsys.readouterr().err
