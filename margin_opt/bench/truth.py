"""Suite ``truth``: the default fit on random problems from the families that broke before.

Each problem is drawn from the families of issue 11: n 5–200, d 1–10, linear / poly /
RBF kernels, C from 1e-3 to 1e4, imbalanced classes, duplicated points with opposite
labels, sample weights with zeros, some without intercept, a quarter ε-SVR.  The
default ``SVC()`` / ``SVR()`` (with the problem's kernel, C and ε) is fitted and its
certificate read; the cvxpy dual (the primal where its solver fails) gives the
reference optimum.  The seed is drawn from
the operating system unless given, and printed, so a run can be repeated.

Reported: how many fits certified, the slowest fit, the largest duality gap and the
largest distance of a fit's objective from the reference; and the exported-model check
(:func:`exported_model_check`): whether each certified fit's ``decision_function`` on
its training data reproduces the f its certificate read, and for a linear kernel
whether ``coef_`` equals ``dual_coef_ @ support_vectors_``, to the tolerance.
"""

from __future__ import annotations

import os
import time
import warnings

import numpy as np

from ..progress import progress

__all__ = ["run", "format_rows", "draw_problem", "exported_model_check"]


def draw_problem(rng):
    """One problem of the families: ``(model, X, y, params, sample_weight)``."""
    n, d = int(rng.integers(5, 201)), int(rng.integers(1, 11))
    X = rng.normal(size=(n, d)) * 10.0 ** rng.uniform(-1, 1)
    kernel = str(rng.choice(["linear", "poly", "rbf"]))
    kw = {}
    if kernel != "linear":
        kw["gamma"] = float(10.0 ** rng.uniform(-2, 0.5) / d)
    if kernel == "poly":
        kw.update(degree=int(rng.integers(1, 4)), coef0=1.0)
    C = float(10.0 ** rng.uniform(-3, 4))
    weights = None
    if rng.uniform() < 0.5:
        weights = rng.uniform(0, 2, n) * (rng.uniform(size=n) > 0.2)
        weights[0] = max(weights[0], 0.5)
    if rng.uniform() < 0.25:
        y = X @ rng.normal(size=d) + rng.normal(scale=0.3, size=n)
        eps = float(rng.choice([0.0, 0.05, 0.3])) * float(np.std(y))
        return "svr", X, y, dict(C=C, epsilon=eps, kernel=kernel, **kw), weights
    y = (rng.uniform(size=n) < rng.uniform(0.05, 0.5)).astype(int)
    y[:2] = [0, 1]
    if rng.uniform() < 0.5:
        k = int(rng.integers(1, max(2, n // 4 + 1)))
        X[n - k:] = X[:k]
        y[n - k:] = 1 - y[:k]
    if weights is not None:
        weights[1] = max(weights[1], 0.5)
    return "svc", X, y, dict(C=C, kernel=kernel, fit_intercept=bool(rng.uniform() > 0.2),
                             **kw), weights


def exported_model_check(est, X, tol=None) -> dict:
    """Whether a certified fit's attributes are the answer its certificate read.

    The fitted model's values on the training data (``decision_function``, or
    ``predict`` for a regressor: computed from ``support_vectors_``, ``dual_coef_``,
    ``intercept_``, and ``coef_`` for a linear kernel) are compared with the f the
    certificate read (``solution_.decision``), and for a linear kernel ``coef_`` with
    ``dual_coef_ @ support_vectors_`` (as the values X(coef_ − dual_coef_ @ sv)ᵀ they
    give), in units of max(1, max|f|).  Each must be within ``tol`` plus twice the
    rounding level of the sums Σⱼ βⱼK(x, svⱼ), u·maxᵢ Σⱼ|βⱼK(xᵢ, svⱼ)|, which double
    precision cannot resolve (computed here from the attributes, u = 2⁻⁵³).

    Parameters
    ----------
    est : SVC or SVR
        Fitted with one decision function (two classes or a regressor).
    X : {ndarray, sparse matrix} of shape (n_samples, n_features)
        Its training data.
    tol : float, optional
        The tolerance (default ``est.tol``).

    Returns
    -------
    check : dict
        ``f_dev`` and ``coef_dev`` (scaled deviations; ``coef_dev`` NaN without
        ``coef_``), ``level`` (scaled rounding level), ``bound`` (tol + 2·level) and
        ``ok``.
    """
    import scipy.sparse as sp

    tol = float(est.tol if tol is None else tol)
    f_cert = np.asarray(est.solution_.decision, dtype=float)
    values = est.decision_function(X) if hasattr(est, "decision_function") else est.predict(X)
    scale = max(1.0, float(np.abs(f_cert).max(initial=0.0)))
    # (CSR after a fit on sparse X, as scikit-learn's)
    dual_coef = est.dual_coef_.toarray() if sp.issparse(est.dual_coef_) else est.dual_coef_
    beta = np.asarray(dual_coef, dtype=float)[0]
    if est.support_.size:
        Ksv = est._kernel(X, est.support_vectors_) if est._kernel.name != "precomputed" \
            else np.asarray(X)[:, est.support_]
        Ksv = np.asarray(Ksv.toarray() if sp.issparse(Ksv) else Ksv)
        level = np.finfo(float).eps / 2 * float((np.abs(Ksv) @ np.abs(beta)).max())
    else:
        level = 0.0
    level /= scale
    f_dev = float(np.abs(np.asarray(values, dtype=float) - f_cert).max(initial=0.0)) / scale
    coef_dev = float("nan")
    if hasattr(est, "coef_"):
        coef = est.coef_.toarray() if sp.issparse(est.coef_) else est.coef_
        w = np.asarray(dual_coef @ est.support_vectors_).ravel() if est.support_.size \
            else np.zeros(coef.shape[1])
        coef_dev = float(np.abs(np.asarray(X @ (coef[0] - w))).max(initial=0.0)) / scale
    bound = tol + 2 * level
    ok = f_dev <= bound and not coef_dev > bound
    return {"f_dev": f_dev, "coef_dev": coef_dev, "level": level, "bound": bound, "ok": ok}


def _one(case):
    from .. import SVC, SVR, SVMProblem, SVRProblem

    model, X, y, params, weights = case
    Problem, Estimator = (SVMProblem, SVC) if model == "svc" else (SVRProblem, SVR)
    row = {"model": model, "n": int(X.shape[0]), "d": int(X.shape[1]),
           "kernel": params["kernel"], "C": params["C"], "weights": weights is not None,
           "intercept": params.get("fit_intercept", True)}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = time.perf_counter()
        try:
            est = Estimator(**params).fit(X, y, sample_weight=weights)
        except Exception as exc:  # a failing fit is a row, not a crash
            row.update(ok=False, error=f"{type(exc).__name__}: {exc}",
                       seconds=time.perf_counter() - t)
            return row
        row["seconds"] = time.perf_counter() - t
        ref = _reference(Problem(X, y, sample_weight=weights, **params))
    cert = est.certificate_
    scale = max(1.0, abs(ref.dual_objective))
    row.update(ok=bool(cert.ok), method=est.solution_.method, gap=float(cert.duality_gap),
               vs_ref=abs(est.solution_.dual_objective - ref.dual_objective) / scale,
               fallback=bool(est.solution_.attempts))
    if cert.ok:
        ex = exported_model_check(est, X)
        row.update(exported_ok=ex["ok"], f_dev=ex["f_dev"], coef_dev=ex["coef_dev"])
    return row


def _reference(problem):
    """The cvxpy dual's answer; the primal's where the dual's solver fails."""
    from ..exceptions import SolverError

    try:
        return problem.solve("cvxpy-dual")
    except SolverError:
        return problem.solve("cvxpy-primal")


def run(quick=False, n_problems=None, seed=None):
    """Fit ``n_problems`` random problems (200; 20 with ``quick``) and read their certificates.

    Returns
    -------
    rows : list of dict
        One per problem, then a summary row (``"summary": True``) with the seed.
    """
    seed = int.from_bytes(os.urandom(4), "little") if seed is None else int(seed)
    n_problems = n_problems or (20 if quick else 200)
    rng = np.random.default_rng(seed)
    rows = [_one(draw_problem(rng)) for _ in progress(range(n_problems), desc="truth")]
    done = [r for r in rows if "error" not in r]
    summary = {"summary": True, "seed": seed, "n_problems": n_problems,
               "certified": sum(r["ok"] for r in rows),
               "errors": len(rows) - len(done),
               "fallbacks": sum(r.get("fallback", False) for r in done),
               "worst_seconds": max(r["seconds"] for r in rows),
               "median_seconds": float(np.median([r["seconds"] for r in rows])),
               "worst_gap": max((r["gap"] for r in done), default=float("nan")),
               "worst_vs_ref": max((r["vs_ref"] for r in done), default=float("nan"))}
    checked = [r for r in done if "exported_ok" in r]
    coefs = [r["coef_dev"] for r in checked if np.isfinite(r["coef_dev"])]
    summary.update(exported_checked=len(checked),
                   exported_ok=sum(r["exported_ok"] for r in checked),
                   worst_f_dev=max((r["f_dev"] for r in checked), default=float("nan")),
                   worst_coef_dev=max(coefs, default=float("nan")),
                   linear_checked=len(coefs))
    return rows + [summary]


def format_rows(rows) -> str:
    """The summary, and every problem that did not certify."""
    s = rows[-1]
    lines = [f"truth sweep: seed {s['seed']}, {s['n_problems']} problems; certified "
             f"{s['certified']}/{s['n_problems']} ({s['fallbacks']} after a fallback, "
             f"{s['errors']} errors); fit time median {s['median_seconds']:.3f} s, worst "
             f"{s['worst_seconds']:.2f} s; worst duality gap {s['worst_gap']:.1e}, worst "
             f"distance from the cvxpy optimum {s['worst_vs_ref']:.1e}"]
    lines.append(f"exported model: {s['exported_ok']}/{s['exported_checked']} certified fits "
                 "reproduce their certified f (decision_function on the training data) and, "
                 f"for the {s['linear_checked']} linear ones, coef_ = dual_coef_ @ "
                 f"support_vectors_; worst f deviation {s['worst_f_dev']:.1e}, worst coef_ "
                 f"deviation {s['worst_coef_dev']:.1e} (units of max(1, |f|))")
    for r in rows[:-1]:
        if not r["ok"]:
            lines.append(f"  not certified: {r}")
        elif not r.get("exported_ok", True):
            lines.append(f"  exported model differs: {r}")
    return "\n".join(lines)
