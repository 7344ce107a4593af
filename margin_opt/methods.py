"""The method registry: every way margin_opt can solve (or check) a kernel problem.

One table from which everything else is derived: what ``problem.solve(method)``
dispatches to, the ``solver`` choices of the estimators (their parameter
constraints), the ``--methods`` of the command line and its help, the rows of
``margin-opt verify`` and the accuracy each is held to, and the stopping-tolerance
policy that makes a backend's answer certify at a requested tolerance.

A method has a **route**: ``cvxpy`` (the reference formulations, solved by a conic
solver), ``backend`` (a compiled solver that takes a standard form, never a model:
:class:`~margin_opt.standard_forms.DualQP` or
:class:`~margin_opt.standard_forms.PrimalERM`), or ``peer`` (another library whose
answer is certified, e.g. LIBSVM through scikit-learn).  A *variant* runs another
method with fixed options (``cvxpy-hinge`` is ``cvxpy-primal`` with
``formulation="hinge"``).  Backends are imported on first use, so the command line
starts fast and loads only what is run.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from importlib import import_module

#: SMO's duality-gap stop relative to the certificate's tolerance (see stopping_options)
GAP_MARGIN = 0.9

__all__ = ["Method", "METHODS", "get_method", "method_names", "stopping_options",
           "available", "not_applicable", "preferred_method", "PREFERRED", "auto_method",
           "LINEAR_MIN_SAMPLES"]

#: The linear kernel goes to dual coordinate descent (``dcd``) from this many samples
#: on (below, SMO's few kernel rows cost little; see auto_method)
LINEAR_MIN_SAMPLES = 2000


@dataclass(frozen=True)
class Method:
    """One entry of the registry.

    Attributes
    ----------
    name : str
        The registry name (``problem.solve(name)``, ``SVC(solver=name)``).
    route : {"cvxpy", "backend", "peer"}
    side : {"dual", "primal"}
        The variables the method computes; the other side is recovered.
    models : tuple of str
        The problem kinds it poses (``"svc"``, ``"svr"``, ``"separability"``,
        ``"multiclass"``: the Crammer–Singer SVM; ``"svc-l2"``, ``"svr-l2"``: the
        squared hinge and squared ε-insensitive losses; ``"one-class"``: the one-class
        SVM; ``"nu-svc"``, ``"nu-svr"``: the ν problems, two equalities).
    summary : str
        One line for the command line's help and the docs.
    standard_form : {"DualQP", "PrimalERM"} or None
        What a backend takes.
    backend : str or None
        ``"module:function"`` of a backend.
    accuracy : float or dict
        The relative accuracy the method is documented to reach at its verify
        settings, i.e. the tolerance its certificate is held to in
        ``margin-opt verify`` (a dict per model where they differ).
    iterative : bool
        A first-order method: it approaches the optimum at its own rate and claims
        no optimality at 1e-6; verify holds it to its ``accuracy`` (and fails the run
        when it misses that).
    stopping : {"certified_gap", "param_change"} or None
        The stopping-tolerance rule (:func:`stopping_options`).
    solve_as : str or None
        For a variant: the method it runs, with ``options``.
    options : dict
        Fixed options of a variant.
    verify_options : dict
        The options ``margin-opt verify`` runs it with.
    estimator : bool
        Selectable as an estimator's ``solver``.
    accepts_gram : bool
        A primal backend that takes ``kernel_gram`` (kernelized) when w is not explicit.
    explicit_w : bool
        A dual backend that keeps w explicitly: it needs the linear kernel or a
        feature map.
    certificate : {"kkt", "suboptimality"}
        What its answer's certificate proves at the tolerance it is held to: the KKT
        conditions and the duality gap (optimality), or, for a first-order primal
        method, that its objective is within that relative accuracy of the optimum
        (weak duality with feasible multipliers; ``problem.certify(...,
        suboptimality=True)``).
    """

    name: str
    route: str
    side: str
    models: tuple
    summary: str
    standard_form: str | None = None
    backend: str | None = None
    accuracy: object = 1e-6
    iterative: bool = False
    stopping: str | None = None
    solve_as: str | None = None
    options: dict = field(default_factory=dict)
    verify_options: dict = field(default_factory=dict)
    estimator: bool = True
    accepts_gram: bool = False
    explicit_w: bool = False
    certificate: str = "kkt"

    def certify_options(self) -> dict:
        """The keywords of ``problem.certify`` for this method's answers."""
        return {"suboptimality": True} if self.certificate == "suboptimality" else {}

    def accuracy_for(self, model: str) -> float:
        """The certificate tolerance of this method on ``model`` in verify."""
        return float(self.accuracy[model] if isinstance(self.accuracy, dict) else self.accuracy)

    def load(self):
        """The backend function (imported on first use).

        Raises
        ------
        ValueError
            If the method has no backend or its module cannot be imported.
        """
        if self.backend is None:
            raise ValueError(f"method {self.name!r} is not a backend.")
        module, func = self.backend.split(":")
        try:
            return getattr(import_module(module), func)
        except (ImportError, AttributeError) as exc:
            raise ValueError(f"backend {self.name!r} is not available ({exc}).") from None


METHODS = {m.name: m for m in (
    Method("cvxpy-dual", "cvxpy", "dual", ("svc", "svr", "separability", "multiclass",
                                           "svc-l2", "svr-l2", "one-class", "nu-svc",
                                           "nu-svr"),
           "the dual QP in cvxpy (Clarabel, tolerances 1e-11): the reference"),
    Method("cvxpy-primal", "cvxpy", "primal", ("svc", "svr", "separability", "multiclass",
                                               "svc-l2", "svr-l2", "one-class",
                                               "nu-svc", "nu-svr"),
           "the primal in cvxpy, slack form (formulation='slack'|'hinge'|'loss')"),
    Method("cvxpy-hinge", "cvxpy", "primal", ("svc",),
           "the unconstrained hinge form in cvxpy (α recovered by least squares)",
           accuracy=1e-5, solve_as="cvxpy-primal", options={"formulation": "hinge"},
           estimator=False),
    Method("cvxpy-loss", "cvxpy", "primal", ("svr",),
           "the ε-insensitive loss form in cvxpy (multipliers recovered by least squares)",
           accuracy=1e-4, solve_as="cvxpy-primal", options={"formulation": "loss"},
           estimator=False),
    Method("smo", "backend", "dual", ("svc", "svr", "one-class", "nu-svc", "nu-svr"),
           "SMO with LIBSVM's second-order working sets (compiled core): the fast default",
           standard_form="DualQP", backend="margin_opt.solvers.smo:solve_smo",
           accuracy=1e-5, stopping="certified_gap", verify_options={"tol": 1e-6, "gap_tol": 9e-7}),
    Method("dcd", "backend", "dual", ("svc", "svr", "svc-l2", "svr-l2"),
           "dual coordinate descent with w explicit (liblinear's): linear kernel",
           standard_form="DualQP", backend="margin_opt.solvers.linear:solve_dcd",
           accuracy=1e-6, stopping="certified_gap", explicit_w=True,
           verify_options={"tol": 1e-6, "gap_tol": 9e-7}),
    Method("subgradient", "backend", "primal", ("svc", "svr"),
           "batch subgradient descent on λ/2‖w‖² + mean loss (linear kernel)",
           standard_form="PrimalERM", backend="margin_opt.solvers.subgradient:subgradient_descent",
           accuracy=1e-2, iterative=True, stopping="param_change", certificate="suboptimality",
           verify_options={"schedule": "1/t", "intercept": "exact", "tol": 0.0,
                           "max_iter": 5000}),
    Method("pegasos", "backend", "primal", ("svc",),
           "Pegasos, stochastic subgradient with step 1/(λt) (kernelized when needed)",
           standard_form="PrimalERM", backend="margin_opt.solvers.subgradient:pegasos",
           accuracy=1e-2, iterative=True, accepts_gram=True, certificate="suboptimality",
           verify_options={"batch_size": 1, "max_iter": 5000, "random_state": 0}),
    Method("perceptron", "backend", "primal", ("separability",),
           "the perceptron rule on Σ max(0, −y f), λ = 0 (kernel form on the Gram matrix)",
           standard_form="PrimalERM", backend="margin_opt.solvers.perceptron:perceptron",
           accuracy=0.5, iterative=True, accepts_gram=True),
    Method("sequential-dual", "backend", "dual", ("multiclass",),
           "Crammer–Singer by the sequential dual method, W explicit (liblinear's; linear "
           "kernel)", standard_form="CrammerSingerQP",
           backend="margin_opt.solvers.linear.crammer_singer:solve_crammer_singer",
           accuracy=1e-6, stopping="certified_gap", verify_options={"tol": 1e-6}),
    Method("libsvm", "peer", "dual", ("svc", "svr", "one-class", "nu-svc", "nu-svr"),
           "LIBSVM through scikit-learn (float32 kernel cache), certified like ours",
           accuracy={"svc": 1e-5, "svr": 1e-4, "one-class": 1e-5, "nu-svc": 1e-5,
                     "nu-svr": 1e-4}, estimator=False,
           verify_options={"tol": 1e-6}),
)}


def get_method(name: str, model: str | None = None) -> Method:
    """The registry entry ``name`` (checked to pose ``model`` when given).

    Raises
    ------
    ValueError
        Unknown name, or a method that does not apply to the model; the message
        lists the valid names.
    """
    m = METHODS.get(name)
    if m is None or (model is not None and model not in m.models):
        valid = method_names(model)
        what = f" for the {model} problem" if model else ""
        raise ValueError(f"unknown method {name!r}{what}; choose one of {valid}.")
    return m


def method_names(model: str | None = None, *, route=None, estimator=None) -> list:
    """Registry names, filtered by model, route and estimator selectability."""
    return [m.name for m in METHODS.values()
            if (model is None or model in m.models) and (route is None or m.route == route)
            and (estimator is None or m.estimator == estimator)]


def available(name: str) -> bool:
    """True when the method can run here (its backend imports)."""
    m = METHODS[name]
    if m.route != "backend":
        return True
    try:
        m.load()
    except ValueError:
        return False
    return True


def not_applicable(name: str, problem) -> str | None:
    """Why method ``name`` cannot pose ``problem`` (a reason), or None when it can.

    A method that cannot pose a problem is listed as not applicable, never as a
    failure: LIBSVM has no hard margin, always an intercept, and no finite ρ for the
    one-class SVM at ν = 1; the primal ERM
    backends have no λ form of the hard margin, and the subgradient method needs w
    explicit (linear kernel or a feature map).
    """
    m = METHODS[name]
    if problem.model not in m.models:
        return f"{name} does not pose the {problem.model} problem"
    if m.route == "peer":
        if problem.hard_margin:
            return "LIBSVM has no hard margin (C = inf)"
        if not problem.fit_intercept:
            return "LIBSVM always fits an intercept"
        if problem.model == "one-class" and problem.nu == 1.0:
            return ("LIBSVM's ρ is +inf at ν = 1 (every α at its bound, ρ = (ub + lb)/2 with "
                    "ub = +inf), which scikit-learn refuses")
    if m.standard_form == "CrammerSingerQP" and not problem.data.explicit_w:
        return f"{name} keeps W explicitly: it needs the linear kernel or a feature map"
    if m.explicit_w and (problem.hard_margin or not problem.explicit_w):
        return (f"{name} has no hard margin (C = inf)" if problem.hard_margin else
                f"{name} keeps w explicit: it needs the linear kernel or a feature map")
    if m.standard_form == "PrimalERM":
        if problem.hard_margin:
            return "the hard margin has no λ form (λ = 1/(C n) = 0)"
        if not problem.explicit_w and not m.accepts_gram:
            return f"{name} needs the linear kernel or a feature map"
    return None


#: The registry's policy for ``solver="auto"``, read by :func:`preferred_method` and
#: :func:`auto_method`: per model, (method, least number of samples) in order of
#: preference; the first that poses the problem and has that many samples is chosen.
PREFERRED = {"multiclass": (("sequential-dual", 0), ("cvxpy-dual", 0)),
             "svc": (("dcd", LINEAR_MIN_SAMPLES), ("smo", 0)),
             "svr": (("dcd", LINEAR_MIN_SAMPLES), ("smo", 0)),
             "one-class": (("smo", 0),), "nu-svc": (("smo", 0),), "nu-svr": (("smo", 0),)}


def preferred_method(problem) -> str:
    """The registry's choice for ``problem`` (an estimator's ``solver="auto"``).

    The first method of :data:`PREFERRED` for the problem's model that poses it
    (:func:`not_applicable`) and has its least number of samples: for the
    Crammer–Singer SVM the sequential dual method where W is explicit (linear
    kernel), else the cvxpy dual; for the C-SVC as in :func:`auto_method`.
    """
    for name, min_n in PREFERRED.get(problem.model, ()):
        if problem.n_samples >= min_n and not_applicable(name, problem) is None:
            return name
    raise ValueError(f"no preferred method for the {problem.model} problem.")


def auto_method(model: str, *, linear: bool, n_samples: int, hard_margin: bool = False) -> str:
    """The registry's choice for ``solver="auto"`` before a problem is posed (the
    one-vs-one pairs are posed later): :data:`PREFERRED` read with the facts that
    decide applicability here, the kernel and the hard margin.

    - ``"dcd"`` (dual coordinate descent, w explicit) for the C-SVC with the linear
      kernel from :data:`LINEAR_MIN_SAMPLES` samples on: each step costs O(nnz(xᵢ))
      and no kernel row is formed, where SMO's kernel rows cost O(n·nnz) and its tail
      stalls on the rank-deficient Q of d ≪ n;
      the same for the ε-SVR (Ho and Lin's dual; ``SVR(kernel="linear")`` on
      standardized ``make_regression`` data, both certified at 1e-6 with the same
      objective: n = 5000, d = 20 0.46 s against SMO's 0.98 s; n = 20000, d = 20 3.9 s
      against 18.7 s; n = 20000, d = 100 55 s against 69 s);
    - ``"smo"`` otherwise (other kernels, small problems, the hard margin).

    Parameters
    ----------
    model : {"svc", "svr"}
    linear : bool
        The kernel is linear (w explicit).
    n_samples : int
    hard_margin : bool, default=False

    Returns
    -------
    name : str
    """
    for name, min_n in PREFERRED.get(model, ()):
        if n_samples >= min_n and (not METHODS[name].explicit_w
                                   or (linear and not hard_margin)):
            return name
    return "smo"


def stopping_options(name: str, tol: float, max_box: float) -> dict:
    """The backend options that make an answer certify at ``tol``.

    - ``certified_gap`` (SMO): stop at m(α) − M(α) ≤ tol AND a relative duality gap
      ≤ 0.9·tol (``gap_tol``; SMO measures it from its gradient, the certificate
      recomputes it from α alone — they agreed to 1e-9 relative in every run
      measured, so 10 % is a wide margin), so that "optimal at tol" means
      "certifies at tol".
    - ``param_change`` (subgradient): stop at a parameter change ≤ tol.

    Parameters
    ----------
    name : str
        Registry name.
    tol : float
        The certificate tolerance wanted.
    max_box : float
        The largest box bound Cᵢ (``inf`` for the hard margin).

    Returns
    -------
    options : dict
    """
    rule = METHODS[name].stopping
    if rule == "certified_gap":
        return {"tol": tol, "gap_tol": GAP_MARGIN * tol}
    if rule == "param_change":
        return {"tol": tol}
    return {}
