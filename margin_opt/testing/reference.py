"""The reference optimum of each conformance problem, certified by two independent methods.

Each problem's reference is computed by three methods on its plain arrays:

* ``smo`` — our SMO (LIBSVM's algorithm with a Newton polish) at tol 1e-10, cold;
* ``libsvm`` — LIBSVM through scikit-learn (``SVC/SVR/OneClassSVM(kernel="precomputed")``)
  at tol 1e-12 (zero bounds dropped, C = inf as 1e12);
* ``clarabel`` — the cvxpy dual solved by Clarabel (an interior-point method), then
  refined by SMO warm-started from it at tol 1e-11 (n ≤ 1000);
* ``clarabel-primal`` — the same from the cvxpy primal (slack form, the kernel's
  pivoted Cholesky factor), its constraints' multipliers refined the same way;

each answer is graded (:func:`margin_opt.testing.grading.grade`) against the best one
at a tolerance ladder 1e-10, 1e-9, …; the reference is the answer certified at the
smallest tolerance (``certified_tol``), and a second method must confirm it: its dual
objective within 1e-8 (relative) of the reference's (:data:`AGREEMENT`).  The
answers are stored with the package (``margin_opt/testing/data/references.json`` +
``.npz``: objective, α or β, b (ρ for the oneclass suite), scale and each method's
objective); problems not stored
are computed on first use and cached under ``$MARGIN_OPT_CACHE`` (default
``~/.cache/margin_opt``).

Regenerate with ``python -m margin_opt.testing.reference`` (minutes).

References
----------
C.-C. Chang and C.-J. Lin, "LIBSVM", ACM TIST 2(3), 2011.
P. J. Goulart and Y. Chen, "Clarabel: an interior-point solver for conic programs with
quadratic objectives", arXiv:2405.12762, 2024.
"""

from __future__ import annotations

import json
import os
import time
import warnings
from dataclasses import dataclass, field
from functools import cache, lru_cache, partial
from pathlib import Path

import numpy as np

from .grading import certifying_problem, dual_objective, grade, term_scale

__all__ = ["Reference", "get_reference", "perturbed_reference", "check", "compute_reference",
           "recertify", "DATA_DIR", "TOL_LADDER"]

DATA_DIR = Path(__file__).resolve().parent / "data"
#: tolerances tried, strictest first, for ``certified_tol``
TOL_LADDER = (1e-10, 1e-9, 1e-8, 1e-7, 1e-6)
#: the relative distance of a second method's dual objective that confirms the reference
AGREEMENT = 1e-8
#: largest n at which the Clarabel method runs
CLARABEL_MAX = 1000


@dataclass(frozen=True)
class Reference:
    """A problem's reference optimum.

    Attributes
    ----------
    name : str
    objective : float
        The dual objective D* (svc: 1ᵀα − ½αᵀQα; svr: zᵀβ − ε‖β‖₁ − ½βᵀKβ; oneclass:
        −½αᵀKα in LIBSVM's scale).
    coef : ndarray of shape (n,)
        α* (svc, oneclass) or β* (svr).
    b : float
        b*, or ρ* for the oneclass suite (the protocol's second value).
    scale : float
        ``max(1, maxᵢ Σⱼ|Kᵢⱼβ*ⱼ|)``: the grading's scale of f.
    certified_tol : float
        The smallest tolerance of :data:`TOL_LADDER` at which the reference passes.
    methods : dict
        Per method: ``objective``, ``certified_tol`` (its own, None when none),
        ``distance`` (of its objective from D*, relative) and ``seconds``.
    """

    name: str
    objective: float
    coef: np.ndarray = field(repr=False)
    b: float
    scale: float
    certified_tol: float
    methods: dict = field(default_factory=dict, repr=False)

    def to_record(self) -> dict:
        """The JSON part (everything but ``coef``)."""
        return {"objective": self.objective, "b": self.b, "scale": self.scale,
                "certified_tol": self.certified_tol, "methods": self.methods}


# ---------------------------------------------------------------------- the methods
def _smo(problem):
    sol = certifying_problem(problem).solve("smo", tol=1e-10, certify=False)
    return _answer(problem, sol)


def _answer(problem, sol):
    """(coef, b) of a Solution in the problem's protocol (oneclass: (α, ρ = −b))."""
    v = sol.variables
    if problem.suite == "oneclass":
        return v.alpha, -float(sol.b)
    return (v.alpha if problem.suite == "svc" else v.alpha - v.alpha_star), float(sol.b)


def _libsvm(problem):
    from .adapters import libsvm

    coef, b, _ = libsvm(*problem.args(), tol=1e-12)
    return coef, b


def _clarabel(problem, method="cvxpy-dual"):
    prob = certifying_problem(problem)
    sol = prob.solve(method, certify=False)
    refined = prob.solve("smo", tol=1e-11, certify=False,
                         alpha0=prob.warm_start(sol.variables.standard_alpha))
    return _answer(problem, refined)


METHODS = {"smo": _smo, "libsvm": _libsvm, "clarabel": _clarabel,
           "clarabel-primal": partial(_clarabel, method="cvxpy-primal")}


def compute_reference(problem) -> Reference:
    """Solve a problem by the three methods and certify the best answer.

    Parameters
    ----------
    problem : Problem

    Returns
    -------
    reference : Reference

    Raises
    ------
    RuntimeError
        When no answer passes at 1e-6, or no second method confirms it.
    """
    answers, methods = {}, {}
    for name, fn in METHODS.items():
        if name.startswith("clarabel") and problem.n > CLARABEL_MAX:
            continue
        t = time.perf_counter()
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                coef, b = fn(problem)
        except Exception as exc:  # noqa: BLE001 - a failed method is recorded
            methods[name] = {"objective": None, "certified_tol": None,
                             "seconds": time.perf_counter() - t, "error": str(exc)[:200]}
            continue
        answers[name] = (np.asarray(coef, dtype=float), b)
        methods[name] = {"objective": dual_objective(problem, answers[name][0]),
                         "seconds": time.perf_counter() - t}
    if not answers:
        raise RuntimeError(f"{problem.name}: no method produced an answer: {methods}")
    best = max(answers, key=lambda k: methods[k]["objective"])
    coef, b = answers[best]
    provisional = Reference(problem.name, methods[best]["objective"], coef, b,
                            term_scale(problem, coef), np.nan)
    for name, (c, bb) in answers.items():
        methods[name]["certified_tol"] = next(
            (t for t in TOL_LADDER if grade(problem, c, bb, t, reference=provisional).ok), None)
    ranked = [m for m in answers if methods[m]["certified_tol"] is not None]
    if not ranked:
        raise RuntimeError(f"{problem.name}: no method's answer certifies at 1e-6: {methods}")
    best = min(ranked, key=lambda m: (methods[m]["certified_tol"], -methods[m]["objective"]))
    coef, b = answers[best]
    D = methods[best]["objective"]
    for name in answers:
        methods[name]["distance"] = abs(methods[name]["objective"] - D) / max(1.0, abs(D))
    confirmed = [m for m in answers if m != best and methods[m]["distance"] <= AGREEMENT]
    if not confirmed:
        raise RuntimeError(f"{problem.name}: no second method agrees with {best} to "
                           f"{AGREEMENT:g}: {methods}")
    return Reference(problem.name, D, coef, b, term_scale(problem, coef),
                     methods[best]["certified_tol"], methods)


# ---------------------------------------------------------------------- storage
def _cache_dir() -> Path:
    return Path(os.environ.get("MARGIN_OPT_CACHE", Path.home() / ".cache" / "margin_opt")) \
        / "conformance"


@lru_cache(maxsize=1)
def _stored() -> tuple:
    path = DATA_DIR / "references.json"
    if not path.is_file():
        return {}, {}
    records = json.loads(path.read_text())
    with np.load(DATA_DIR / "references.npz") as z:
        coefs = {k: z[k] for k in z.files}
    return records, coefs


def _from_record(name, rec, coef) -> Reference:
    return Reference(name, float(rec["objective"]), np.asarray(coef, dtype=float),
                     float(rec["b"]), float(rec["scale"]), float(rec["certified_tol"]),
                     rec.get("methods", {}))


def _checked(problem, path):
    """The reference cached at ``path`` where it holds: its dual objective is the one
    recorded, and its answer passes its own certificate at its ``certified_tol``; None
    where the file cannot be read or does not hold (anyone who can write the cache
    could otherwise make any answer the reference)."""
    try:
        with np.load(path, allow_pickle=False) as z:
            ref = _from_record(problem.name, json.loads(str(z["record"])), z["coef"])
        if ref.coef.shape != (problem.n,) or not np.all(np.isfinite(ref.coef)):
            return None
        D = dual_objective(problem, ref.coef)
        if not abs(D - ref.objective) <= 1e-12 * max(1.0, abs(D)):
            return None
        ok = grade(problem, ref.coef, ref.b, ref.certified_tol, reference=ref).ok
    except Exception:  # noqa: BLE001 - a damaged or forged file is recomputed
        return None
    return ref if ok else None


@cache
def get_reference(problem) -> Reference:
    """The stored reference of a problem (computed and cached when not stored; a cached
    one is used only where it passes its own certificate, else computed again).

    Parameters
    ----------
    problem : Problem

    Returns
    -------
    reference : Reference
    """
    records, coefs = _stored()
    if problem.name in records and problem.name in coefs:
        return _from_record(problem.name, records[problem.name], coefs[problem.name])
    cache = _cache_dir() / f"{problem.name}.npz"
    if cache.is_file():
        ref = _checked(problem, cache)
        if ref is not None:
            return ref
    ref = compute_reference(problem)
    try:
        cache.parent.mkdir(parents=True, exist_ok=True)
        np.savez_compressed(cache, coef=ref.coef, record=json.dumps(ref.to_record()))
    except OSError:                 # a read-only home: computed again next time
        pass
    return ref


def perturbed_reference(problem, seed) -> Reference:
    """The reference of the perturbed instance :func:`~margin_opt.testing.suites.perturbed`
    ``(problem, seed)``, mapped from the problem's own: α'* = α*[π] / s (svr:
    β'* = σ·β*[π] / s), b'* = σ·b*, D'* = D* / s (exact: a permutation, a power of two
    and a sign); oneclass (K' = s·K[π, π], the box and ν unchanged): α'* = α*[π],
    ρ'* = s·ρ*, D'* = s·D*.

    Parameters
    ----------
    problem : Problem
    seed : int

    Returns
    -------
    reference : Reference
        Named as the perturbed instance.
    """
    from .suites import perturbation, perturbed

    base, p = get_reference(problem), perturbation(problem, seed)
    q = perturbed(problem, seed)
    if problem.suite == "oneclass":
        coef = base.coef[p.permutation]
        return Reference(q.name, base.objective * p.scale, coef, base.b * p.scale,
                         term_scale(q, coef), base.certified_tol, base.methods)
    coef = base.coef[p.permutation] / p.scale
    if problem.suite == "svr":
        coef = p.sign * coef
    return Reference(q.name, base.objective / p.scale, coef, p.sign * base.b,
                     term_scale(q, coef), base.certified_tol, base.methods)


def recertify(problem, tol=None, *, method=None) -> dict:
    """Check a stored reference again, by two methods: its certificate and a new solve.

    Parameters
    ----------
    problem : Problem
    tol : float, optional
        Default: the reference's ``certified_tol``.
    method : str, optional
        The method solved again (a key of :data:`METHODS`); default: the first one, other
        than the reference's own, that confirmed it when it was computed.

    Returns
    -------
    result : dict
        ``certified`` (the stored answer passes at ``tol``), ``reason``, ``method`` and
        ``distance`` (its new answer's dual objective from D*, relative) and ``agrees``
        (distance ≤ :data:`AGREEMENT`).
    """
    ref = get_reference(problem)
    tol = ref.certified_tol if tol is None else tol
    own = grade(problem, ref.coef, ref.b, tol, reference=ref)
    if method is None:
        own_method = min(ref.methods, key=lambda m: ref.methods[m].get("distance", np.inf))
        method = next(m for m in METHODS if m != own_method
                      and ref.methods.get(m, {}).get("distance", np.inf) <= AGREEMENT)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        coef, _ = METHODS[method](problem)
    distance = abs(dual_objective(problem, np.asarray(coef, dtype=float)) - ref.objective) \
        / max(1.0, abs(ref.objective))
    return {"certified": own.ok, "reason": own.reason, "method": method,
            "distance": distance, "agrees": distance <= AGREEMENT}


def check(problem, alpha, b, tol=1e-6) -> None:
    """Assert that an answer passes against the problem's reference (for a user's tests).

    Parameters
    ----------
    problem : Problem
        From :func:`margin_opt.testing.problems`.
    alpha : array-like of shape (n,)
        α (svc; oneclass, f = Kα − ρ) or β (svr, f = Kβ + b).
    b : float
        b, or ρ for the oneclass suite.
    tol : float, default=1e-6

    Raises
    ------
    AssertionError
        Naming the problem, the failed checks with their values and limits, and the
        certificate's table.
    """
    g = grade(problem, alpha, b, tol, get_reference(problem))
    if not g.ok:
        lines = [f"{problem.name} ({problem.family}, n = {problem.n}) fails at tol {tol:g} "
                 f"(scale {g.scale:.3g}): {g.reason}"]
        if g.certificate is not None:
            lines.append(str(g.certificate))
        raise AssertionError("\n".join(lines))


def _main(argv=None) -> int:
    import argparse

    from .suites import SUITES, problems

    p = argparse.ArgumentParser(description="regenerate the stored conformance references")
    p.add_argument("names", nargs="*")
    args = p.parse_args(argv)
    DATA_DIR.mkdir(exist_ok=True)
    records, coefs = (dict(d) for d in _stored())
    for suite in SUITES:
        for prob in problems(suite):
            if args.names and prob.name not in args.names:
                continue
            t = time.perf_counter()
            try:
                ref = compute_reference(prob)
            except RuntimeError as exc:
                print(f"FAILED {exc}", flush=True)
                continue
            records[prob.name] = ref.to_record()
            coefs[prob.name] = ref.coef
            m = {k: v.get("certified_tol") for k, v in ref.methods.items()}
            print(f"{prob.name:40s} D* {ref.objective:.12g} scale {ref.scale:.3g} certified "
                  f"{ref.certified_tol:g} {m} ({time.perf_counter() - t:.1f} s)", flush=True)
            (DATA_DIR / "references.json").write_text(json.dumps(records, indent=1,
                                                                 sort_keys=True))
            np.savez_compressed(DATA_DIR / "references.npz", **coefs)
    return 0


if __name__ == "__main__":
    raise SystemExit(_main())
