"""Solvers at hand in the kit's protocol: LIBSVM, oneDAL, our SMO and Pegasos, QP solvers.

Each function takes the arrays of :func:`~margin_opt.testing.run_conformance` —
``(K, y, C)`` for the svc suite, ``(K, z, epsilon, C)`` for svr, ``(K, nu)`` for
oneclass — and returns ``(alpha or beta, b, status)`` (oneclass: ``(alpha, rho,
status)`` in LIBSVM's scale); ``tol`` is the solver's own stopping tolerance.

* :func:`libsvm` — LIBSVM via scikit-learn ``SVC/SVR/OneClassSVM(kernel="precomputed")``
  (zero bounds dropped, C = inf as 1e12, per-sample bounds as ``sample_weight``);
* :func:`onedal_solve` — scikit-learn-intelex's ``SVC/SVR`` (where installed);
* :func:`smo`, :func:`pegasos` — ours, through :class:`~margin_opt.SVMProblem` /
  :class:`~margin_opt.SVRProblem` / :class:`~margin_opt.OneClassProblem` on the
  precomputed kernel;
* :func:`cvxpy_dual` — the dual QP written in cvxpy (Clarabel, OSQP, SCS); b (−ρ) is the
  equality constraint's dual value;
* :func:`qpsolvers_dual` — the dual QP (svr: the 2n-variable form in (a, â)) through
  qpsolvers (``pip install qpsolvers piqp proxsuite quadprog``); b (−ρ) is the equality
  constraint's multiplier.
"""

from __future__ import annotations

import warnings
from functools import partial

import numpy as np

__all__ = ["libsvm", "onedal_solve", "smo", "pegasos", "cvxpy_dual", "qpsolvers_dual",
           "solvers"]

#: C = inf given to solvers that need a finite bound
BIG_C = 1e12


def _status(ok):
    return "optimal" if ok else "not_converged"


# ---------------------------------------------------------------------- LIBSVM, oneDAL
def _sklearn_like(svc_cls, svr_cls, tol, *args):
    """The protocol on a scikit-learn-style SVC / SVR with a precomputed kernel."""
    K, t, eps, C = (args[0], args[1], None, args[2]) if len(args) == 3 else args
    keep = np.flatnonzero(C > 0)
    c0 = float(C.max())
    finite = np.isfinite(c0)
    w = C[keep] / c0 if finite else np.ones(keep.size)
    Kk = np.ascontiguousarray(K[np.ix_(keep, keep)])
    kw = dict(kernel="precomputed", C=c0 if finite else BIG_C, tol=tol, max_iter=10 ** 8)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if eps is None:
            est = svc_cls(**kw).fit(Kk, t[keep], sample_weight=w)
        else:
            est = svr_cls(epsilon=eps, **kw).fit(Kk, t[keep], sample_weight=w)
    coef = np.zeros(K.shape[0])
    dc = np.asarray(est.dual_coef_)[0]
    coef[keep[np.asarray(est.support_)]] = np.abs(dc) if eps is None else dc
    status = getattr(est, "fit_status_", 0)
    return coef, float(np.ravel(est.intercept_)[0]), _status(status == 0)


def _one_class_like(cls, tol, K, nu):
    """The oneclass protocol on a scikit-learn-style ``OneClassSVM`` with a precomputed
    kernel: its ``dual_coef_`` are LIBSVM's α (0 ≤ α ≤ 1, Σα = νn), its
    ``intercept_`` is −ρ."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = cls(kernel="precomputed", nu=nu, tol=tol, max_iter=10 ** 8).fit(K)
    alpha = np.zeros(K.shape[0])
    alpha[np.asarray(est.support_)] = np.asarray(est.dual_coef_)[0]
    status = getattr(est, "fit_status_", 0)
    return alpha, -float(np.ravel(est.intercept_)[0]), _status(status == 0)


def libsvm(*args, tol=1e-3):
    """LIBSVM (scikit-learn) in the kit's protocol (svc, svr or oneclass by the number
    of args)."""
    from sklearn.svm import SVC, SVR, OneClassSVM

    if len(args) == 2:
        return _one_class_like(OneClassSVM, tol, *args)
    return _sklearn_like(SVC, SVR, tol, *args)


def onedal_solve(*args, tol=1e-3):
    """scikit-learn-intelex's SVC / SVR (oneDAL) in the kit's protocol."""
    from sklearnex.svm import SVC, SVR

    return _sklearn_like(SVC, SVR, tol, *args)


# ---------------------------------------------------------------------- ours
def _problem(args):
    from ..kernels import make_kernel
    from ..problems.one_class import OneClassProblem
    from ..problems.svm import SVMProblem
    from ..problems.svr import SVRProblem

    kern = make_kernel("precomputed")
    if len(args) == 2:
        return OneClassProblem(args[0], nu=args[1], kernel=kern)
    K, t, eps, C = (args[0], args[1], None, args[2]) if len(args) == 3 else args
    c0 = float(C.max())
    w = C / c0 if np.isfinite(c0) else np.ones_like(C)
    if eps is None:
        return SVMProblem.from_validated(K, t, C=c0, kernel=kern, sample_weight=w, gram=K)
    return SVRProblem(K, t, C=c0, epsilon=eps, kernel=kern, sample_weight=w)


def _answer(sol, args):
    """(coef, b) of a Solution in the protocol of the suite ``args`` belong to: (α, b),
    (β = a − â, b) or, for oneclass, (α, ρ = −b)."""
    v = sol.variables
    if len(args) == 2:
        return v.alpha, -float(sol.b)
    return (v.alpha if len(args) == 3 else v.alpha - v.alpha_star), float(sol.b)


def smo(*args, tol=1e-3):
    """Our SMO in the kit's protocol."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sol = _problem(args).solve("smo", tol=tol, certify=False)
    return *_answer(sol, args), sol.status


def pegasos(*args, tol=1e-3, epochs=200):
    """Our kernel Pegasos (svc) in the kit's protocol; tol is not used (fixed epochs)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sol = _problem(args).solve("pegasos", certify=False, max_iter=epochs,
                                   random_state=0)
    return *_answer(sol, args), "optimal"


# ---------------------------------------------------------------------- QP solvers
def cvxpy_dual(*args, solver="CLARABEL", tol=1e-6):
    """The dual QP in cvxpy (psd_wrap of K) with ``solver``; b from the equality's dual
    (oneclass: ρ, the multiplier of 1ᵀα = νn)."""
    import cvxpy as cp

    if len(args) == 2:       # oneclass: (K, nu), C = 1 and Σα = νn as the equality
        K, nu = args
        t, eps, C = None, None, np.ones(K.shape[0])
    else:
        K, t, eps, C = (args[0], args[1], None, args[2]) if len(args) == 3 else args
    n = K.shape[0]
    opts = {"CLARABEL": dict(tol_gap_abs=tol, tol_gap_rel=tol, tol_feas=tol),
            "OSQP": dict(eps_abs=tol, eps_rel=tol, max_iter=100000),
            "SCS": dict(eps_abs=tol, eps_rel=tol, max_iters=100000)}[solver]
    up = np.where(np.isfinite(C), C, BIG_C)
    Kw = cp.psd_wrap(K)
    if t is None:
        a = cp.Variable(n)
        obj = -0.5 * cp.quad_form(a, Kw)
        cons = [a >= 0, a <= up, cp.sum(a) == nu * n]
    elif eps is None:
        a = cp.Variable(n)
        obj = cp.sum(a) - 0.5 * cp.quad_form(cp.multiply(t, a), Kw)
        cons = [a >= 0, a <= up, t @ a == 0]
    else:
        a = cp.Variable(n)
        obj = t @ a - eps * cp.norm1(a) - 0.5 * cp.quad_form(a, Kw)
        cons = [a >= -up, a <= up, cp.sum(a) == 0]
    prob = cp.Problem(cp.Maximize(obj), cons)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        prob.solve(solver=solver, **opts)
    if a.value is None:
        return np.zeros(n), 0.0, str(prob.status)
    coef = np.asarray(a.value, dtype=float)
    if eps is None:
        coef = np.clip(coef, 0.0, None)
    b = float(cons[-1].dual_value)
    return coef, -b if t is None else b, str(prob.status)


def qpsolvers_dual(*args, solver="piqp", tol=1e-6):
    """The dual QP through qpsolvers; svr in the 2n-variable form (a, â); oneclass
    ``min ½αᵀKα``, 0 ≤ α ≤ 1, 1ᵀα = νn (ρ from the equality's multiplier)."""
    import qpsolvers

    rhs = np.zeros(1)
    if len(args) == 2:
        K, nu = args
        t, eps, C, rhs = None, None, np.ones(K.shape[0]), np.array([nu * K.shape[0]])
    else:
        K, t, eps, C = (args[0], args[1], None, args[2]) if len(args) == 3 else args
    n = K.shape[0]
    up = np.where(np.isfinite(C), C, BIG_C)
    if t is None:
        P, q, A, lb, ub = K, np.zeros(n), np.ones((1, n)), np.zeros(n), up
    elif eps is None:
        P = (t[:, None] * K) * t[None, :]
        q, A, lb, ub = -np.ones(n), t[None, :].astype(float), np.zeros(n), up
    else:
        P = np.block([[K, -K], [-K, K]])
        q = np.r_[eps - t, eps + t]
        A, lb, ub = np.r_[np.ones(n), -np.ones(n)][None, :], np.zeros(2 * n), np.r_[up, up]
    P = 0.5 * (P + P.T) + 1e-12 * np.eye(P.shape[0]) * (solver == "quadprog")
    opts = {"piqp": dict(eps_abs=tol, eps_rel=tol), "proxqp": dict(eps_abs=tol, eps_rel=tol),
            "osqp": dict(eps_abs=tol, eps_rel=tol, max_iter=100000),
            "scs": dict(eps_abs=tol, eps_rel=tol), "clarabel": dict(tol_gap_abs=tol,
                                                                   tol_gap_rel=tol,
                                                                   tol_feas=tol),
            "highs": dict(dual_feasibility_tolerance=tol, primal_feasibility_tolerance=tol),
            }.get(solver, {})
    prob = qpsolvers.Problem(P, q, None, None, A, rhs, lb, ub)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sol = qpsolvers.solve_problem(prob, solver=solver, **opts)
    if sol.x is None:
        return np.zeros(n), 0.0, "failed"
    x = np.asarray(sol.x, dtype=float)
    coef = np.clip(x, 0.0, None) if eps is None else x[:n] - x[n:]
    b = float(sol.y[0]) if sol.y is not None else 0.0
    return coef, -b if t is None else b, "optimal" if sol.found else "failed"


def solvers(suite="svc") -> dict:
    """name -> ``factory(tol) -> solve``: the solvers at hand for ``suite``."""
    out = {"smo": lambda tol: partial(smo, tol=tol), "libsvm": lambda tol: partial(libsvm, tol=tol)}
    if suite == "svc":
        out["pegasos"] = lambda tol: partial(pegasos, tol=tol)
    from importlib.util import find_spec

    if find_spec("sklearnex") is not None and suite != "oneclass":
        out["onedal"] = lambda tol: partial(onedal_solve, tol=tol)
    for s in ("CLARABEL", "OSQP", "SCS"):
        out[f"cvxpy-{s.lower()}"] = lambda tol, s=s: partial(cvxpy_dual, solver=s, tol=tol)
    try:
        import qpsolvers
        names = [s for s in qpsolvers.available_solvers if s in
                 ("piqp", "proxqp", "quadprog", "highs")]
    except ImportError:
        names = []
    for s in names:
        out[f"qpsolvers-{s}"] = lambda tol, s=s: partial(qpsolvers_dual, solver=s, tol=tol)
    return out
