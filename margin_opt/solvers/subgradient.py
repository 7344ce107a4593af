"""Batch subgradient descent and Pegasos on the regularized primal ERM.

Both methods minimize the average-loss form of a :class:`~margin_opt.standard_forms.PrimalERM`

``J(w, b) = λ/2 ‖w‖² [+ λ/2 b²] + (1/n) Σᵢ sᵢ ℓ(yᵢ, wᵀxᵢ + b)``

with the hinge loss ``ℓ = max(0, 1 − y f)`` (the soft-margin SVM, ``λ = 1/(C n)``)
or the ε-insensitive loss.  Step sizes are in that scale.  At a kink of the loss
the zero subgradient is taken (a point on the margin, ``y f = 1``, contributes
nothing), as in the lecture notes.

References
----------
N. Z. Shor, *Minimization Methods for Non-Differentiable Functions*, Springer 1985
(the subgradient method); S. Boyd, "Subgradient methods", lecture notes EE364b,
Stanford 2014 (step-size rules, Polyak's step, keeping the best iterate).
S. Shalev-Shwartz, Y. Singer, N. Srebro and A. Cotter, "Pegasos: primal estimated
sub-gradient solver for SVM", Math. Programming 127(1):3–30, 2011 (Fig. 1–3).
O. Shamir and T. Zhang, "Stochastic gradient descent for non-smooth optimization:
convergence results and optimal averaging schemes", ICML 2013 (polynomial-decay
averaging).
"""

from __future__ import annotations

import numbers
import time
import warnings

import numpy as np
import scipy.sparse as sp
from scipy.optimize import OptimizeResult
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_random_state

from ..losses import EPSILON_INSENSITIVE, HINGE
from ..parallel import one_blas_thread
from ..standard_forms import PrimalERM
from ..validation import check_positive
from . import _pegasos_kernels as _pk

__all__ = ["subgradient_descent", "pegasos", "SCHEDULES", "optimum_radius", "default_step_size"]

#: Step-size rules of :func:`subgradient_descent`.
SCHEDULES = ("constant", "1/sqrt(t)", "1/t", "polyak")

#: γ of the polynomial-decay average ``w̄ₜ = (1 − ρₜ) w̄ₜ₋₁ + ρₜ wₜ``, ρₜ = (γ+1)/(t+γ)
#: (Shamir & Zhang 2013); it forgets Pegasos' wild first steps (η₁ = 1/λ) quickly.
AVERAGING_GAMMA = 3.0

_NO_MU = np.zeros(0)


# --------------------------------------------------------------------------- helpers


def _check_erm(erm):
    if not isinstance(erm, PrimalERM):
        raise TypeError(f"expected a PrimalERM standard form, got {type(erm).__name__}; build "
                        "one with problem.to_primal_erm().")
    n = erm.n_samples
    if erm.X.shape[0] != n or erm.sample_weight.shape != (n,):
        raise ValueError(f"X has {erm.X.shape[0]} rows, y {n} entries and sample_weight "
                         f"shape {erm.sample_weight.shape}: they must agree (one per sample).")
    if sp.issparse(erm.X):
        X = sp.csr_matrix(erm.X, dtype=np.float64)
    else:
        X = np.ascontiguousarray(erm.X, dtype=np.float64)
    return X, np.asarray(erm.y, dtype=np.float64), np.asarray(erm.sample_weight, dtype=np.float64)


def _objective_from_f(erm, y, sw, sq_norm, b, f):
    """J given ‖w‖² and the decision values f (avoids a second product with X)."""
    reg = sq_norm + (b * b if erm.regularize_intercept else 0.0)
    return 0.5 * erm.lam * reg + float(sw @ erm.loss.value(y, f)) / y.shape[0]


def optimum_radius(erm) -> float:
    """A radius of a ball around 0 that holds the minimizer of J.

    The loss's own bound (:meth:`margin_opt.losses.Loss.optimum_radius`): for the
    hinge ``sqrt(θ mean(s)/λ)`` (``1/√λ`` for unit weights, Pegasos' Theorem 1
    argument: by strong duality λ‖w*‖² ≤ θ·mean(α) ≤ θ·mean(s)); for the
    ε-insensitive loss ``sqrt(2 J(0, 0)/λ)`` (from λ/2‖w*‖² ≤ J* ≤ J(0, 0)); ``inf``
    for λ = 0.

    Parameters
    ----------
    erm : PrimalERM

    Returns
    -------
    radius : float
        In the units of w (and of (w, b) when the intercept is regularized).
    """
    return erm.loss.optimum_radius(erm.y, erm.sample_weight, erm.lam)


def default_step_size(erm) -> float:
    """The scale D/G of the ``"1/sqrt(t)"`` schedule (ηₜ = D/(G√t)).

    D = :func:`optimum_radius` bounds ‖w*‖ and G = λD + (1/n) Σ sᵢ‖xᵢ‖ [+ mean(s)
    with an intercept] bounds the subgradient norm on that ball, the choice that
    makes the best iterate O(DG/√t) from the optimum.

    Parameters
    ----------
    erm : PrimalERM

    Returns
    -------
    step_size : float

    References
    ----------
    Y. Nesterov, *Introductory Lectures on Convex Optimization*, Kluwer 2004, §3.2.3.
    """
    X = erm.X
    sw = np.asarray(erm.sample_weight, dtype=float)
    D = optimum_radius(erm)
    G = erm.lam * D + float(sw @ _row_norms(X)) / erm.n_samples
    if erm.fit_intercept:
        G += float(sw.mean())
    return D / G


def best_intercept(erm, f0) -> float | None:
    """The b that minimizes J(w, b) for the decision values ``f0 = Xw`` (without b).

    With an unregularized intercept J is, in b alone, the convex piecewise-linear
    (1/n) Σᵢ sᵢ ℓ(yᵢ, f0ᵢ + b): its slope rises by sᵢ at each kink (the hinge's at
    b = θyᵢ − f0ᵢ, the ε-insensitive loss's at yᵢ − f0ᵢ ± ε) from −Σ sᵢ over the terms
    active at b → −∞, so the minimizer is the kink where the slope turns ≥ 0 (a weighted
    median; the middle of the flat stretch where the slope is exactly 0).  O(n log n).

    Parameters
    ----------
    erm : PrimalERM
    f0 : ndarray of shape (n_samples,)

    Returns
    -------
    b : float or None
        None where J has no such form in b (no intercept, a regularized one, another
        loss) or the weights are all zero.

    References
    ----------
    S. Shalev-Shwartz et al., "Pegasos", Math. Programming 127, 2011, §6 (the bias,
    which the step 1/(λt) does not move at the scale of λ: e.g. C = 1e-300).
    """
    if not erm.fit_intercept or erm.regularize_intercept:
        return None
    y = np.asarray(erm.y, dtype=np.float64)
    sw = np.asarray(erm.sample_weight, dtype=np.float64)
    f0 = np.asarray(f0, dtype=np.float64)
    loss = erm.loss
    if loss.code == HINGE:
        kinks, rise = y * loss.param - f0, sw
        start = float(sw[y > 0].sum())
    elif loss.code == EPSILON_INSENSITIVE:
        r = y - f0
        kinks, rise = np.concatenate([r - loss.param, r + loss.param]), np.r_[sw, sw]
        start = float(sw.sum())
    else:
        return None
    if not np.any(rise > 0) or not np.all(np.isfinite(kinks)):
        return None
    order = np.argsort(kinks, kind="stable")
    kinks, slope = kinks[order], np.cumsum(rise[order])     # slope + start right of kink k
    lo = min(int(np.searchsorted(slope, start, side="left")), kinks.size - 1)
    hi = min(int(np.searchsorted(slope, start, side="right")), kinks.size - 1)
    return float(0.5 * (kinks[lo] + kinks[hi]))


def _row_norms(X):
    if sp.issparse(X):
        return np.sqrt(np.asarray(X.multiply(X).sum(axis=1)).ravel())
    return np.sqrt(np.einsum("ij,ij->i", X, X))


def _check_int(value, name, low=1):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < low:
        raise ValueError(f"{name} must be an integer ≥ {low}, got {value!r}.")
    return int(value)


def _start_point(erm, d, w0, b0):
    if w0 is None:
        w = np.zeros(d)
    else:
        w = np.array(w0, dtype=np.float64, copy=True).ravel()
        if w.shape != (d,) or not np.all(np.isfinite(w)):
            raise ValueError(f"w0 must be a finite vector of shape ({d},) (one weight per "
                             f"feature), got shape {np.shape(w0)}.")
    if b0 is None:
        b = 0.0
    else:
        if isinstance(b0, bool) or not isinstance(b0, numbers.Real) or not np.isfinite(b0):
            raise ValueError(f"b0 must be a finite real number, got {b0!r}.")
        b = float(b0)
        if b != 0.0 and not erm.fit_intercept:
            raise ValueError(f"b0={b0!r} given but the problem has no intercept "
                             "(fit_intercept=False); drop b0 or fit an intercept.")
    return w, b


# --------------------------------------------------------------- subgradient descent


def _step_rule(erm, schedule, step_size, f_star):
    """Return ``step(t, J, sq_grad) -> η`` for the schedule, after validating it."""
    if schedule not in SCHEDULES:
        raise ValueError(f"unknown schedule {schedule!r}; choose one of {SCHEDULES}.")
    lam = erm.lam
    if schedule == "constant":
        if step_size is None:
            raise ValueError("schedule='constant' needs a step_size (in the scale of J, e.g. "
                             "step_size=0.01).")
        eta = check_positive(step_size, "step_size")
        return lambda t, J, g2: eta
    if lam == 0 and schedule == "1/t" or lam == 0 and schedule == "1/sqrt(t)" \
            and step_size is None:
        raise ValueError(f"schedule={schedule!r} needs λ > 0 for its default step; with "
                         "λ = 0 pass schedule='constant' (or '1/sqrt(t)') with a step_size.")
    if schedule == "1/t":
        c = 1.0 if step_size is None else check_positive(step_size, "step_size")
        return lambda t, J, g2: c / (lam * t)
    if schedule == "1/sqrt(t)":
        c = default_step_size(erm) if step_size is None else check_positive(step_size,
                                                                               "step_size")
        return lambda t, J, g2: c / np.sqrt(t)
    if f_star is None or isinstance(f_star, bool) or not isinstance(f_star, numbers.Real):
        raise ValueError("schedule='polyak' needs f_star, the optimal value of J (e.g. from "
                         "problem.solve(method='cvxpy-primal'), divided by C·n).")
    fs = float(f_star)
    return lambda t, J, g2: max(J - fs, 0.0) / g2 if g2 > 0 else 0.0


def subgradient_descent(erm, *, schedule="1/t", step_size=None, w0=None, b0=None, tol=1e-6,
                        max_iter=1000, f_star=None, callback=None, intercept="exact"):
    """Minimize J(w, b) of a primal ERM by (full-batch) subgradient descent.

    Each iteration takes one subgradient of the whole objective,
    ``g_w = λw + (1/n) Σ sᵢ ℓ'ᵢ xᵢ``, ``g_b = (1/n) Σ sᵢ ℓ'ᵢ [+ λb]`` with ``ℓ'ᵢ = −yᵢ``
    where ``yᵢfᵢ < 1`` and 0 elsewhere (hinge), and moves ``w ← w − ηₜ g_w``; the
    intercept either takes its step too (``b ← b − ηₜ g_b``, the lecture's update) or,
    unregularized, is set to its exact minimizer ``b*(w) = argmin_b J(w, b)``
    (:func:`best_intercept`) after each step in w (block coordinates: the b-update
    never increases J), so that the intercept, whose subgradient steps are on the scale
    of ``1/λ`` rather than of b, neither stalls (uncentred features) nor stays at 0 (a
    tiny C).

    Parameters
    ----------
    erm : PrimalERM
        The standard primal form (X dense or CSR, labels ±1, λ, sample weights,
        intercept options).
    schedule : {"constant", "1/sqrt(t)", "1/t", "polyak"}, default="1/t"
        Step-size rule, t = 1, 2, ... the iteration:
        ``"constant"``: ηₜ = step_size;
        ``"1/sqrt(t)"``: ηₜ = step_size/√t (default :func:`default_step_size`, D/G);
        ``"1/t"``: ηₜ = step_size/(λt) (default step_size 1: the deterministic Pegasos step);
        ``"polyak"``: ηₜ = (J(θₜ₋₁) − f_star)/‖g‖².
    step_size : float, optional
        Scale of the step in units of J's argument per unit of subgradient; required
        for ``"constant"``.
    w0 : array-like of shape (n_features,), optional
        Starting weights (default zeros).  Not modified.
    b0 : float, optional
        Starting intercept (default 0).  Must be 0/None without an intercept.
    tol : float, default=1e-6
        Stop when ``‖θₜ − θₜ₋₁‖ ≤ tol`` with θ = (w, b) (status ``"optimal"``).
    max_iter : int, default=1000
        Maximum number of iterations (status ``"max_iter"`` and a ConvergenceWarning).
    f_star : float, optional
        The optimal value of J, required by ``"polyak"``.
    callback : callable, optional
        Called as ``callback(t, w, b, J)`` after iteration t; returning True stops the
        run (status ``"stopped"``).  Must not modify ``w``.
    intercept : {"exact", "step"}, default="exact"
        ``"exact"``: after each step in w, b = b*(w) (where the intercept is fitted
        and not regularized and the loss is the hinge or the ε-insensitive one; the
        step otherwise); ``"step"``: b takes its subgradient step (the lecture's run).
        Both start from ``b0``.

    Returns
    -------
    result : scipy.optimize.OptimizeResult
        ``w``, ``b``: the BEST iterate by J (subgradient steps are not descent steps,
        so the last one is rarely the best); ``w_best``, ``b_best`` (the same),
        ``w_last``, ``b_last`` (the final iterate); ``fun`` J(w, b); ``nit`` the number
        of iterations; ``best_iter`` the iteration of the best one; ``status``
        (``"optimal"`` | ``"max_iter"`` | ``"stopped"``); ``success``; ``message``;
        ``history``: ``"J"`` ndarray of shape (nit + 1,), J at θ₀, θ₁, ... (entry 0 at
        the start), and ``"param_change"`` ndarray of shape (nit,), entry t−1 = ‖θₜ − θₜ₋₁‖.

    Raises
    ------
    ValueError
        Unknown schedule, missing or non-positive step_size / f_star, tol < 0,
        max_iter < 1, a start point of the wrong shape, b0 ≠ 0 without intercept, or
        an unknown ``intercept``.
    TypeError
        If ``erm`` is not a PrimalERM.

    Warns
    -----
    ConvergenceWarning
        When max_iter is reached before the tol rule.

    References
    ----------
    S. Boyd, "Subgradient methods", EE364b notes, 2014, §2–3 (step-size rules,
    the best iterate f_best, Polyak's step).
    """
    X, y, sw = _check_erm(erm)
    step = _step_rule(erm, schedule, step_size, f_star)
    tol = check_positive(tol, "tol", allow_zero=True)
    max_iter = _check_int(max_iter, "max_iter")
    n, d = X.shape
    w, b = _start_point(erm, d, w0, b0)
    lam, fit_b, reg_b = erm.lam, erm.fit_intercept, erm.fit_intercept and erm.regularize_intercept
    swn = sw / n
    if intercept not in ("exact", "step"):
        raise ValueError(f"intercept must be 'exact' or 'step', got {intercept!r}.")
    exact = intercept == "exact" and best_intercept(erm, np.zeros(n)) is not None

    f = np.asarray(X @ w).ravel() + b
    J = _objective_from_f(erm, y, sw, float(w @ w), b, f)
    hist_J, hist_dp = [J], []
    w_best, b_best, J_best, best_iter = w.copy(), b, J, 0
    status = "max_iter"
    for t in range(1, max_iter + 1):
        gf = swn * erm.loss.derivative(y, f)
        gw = lam * w + np.asarray(X.T @ gf).ravel()
        gb = (float(gf.sum()) + (lam * b if reg_b else 0.0)) if fit_b and not exact else 0.0
        eta = step(t, J, float(gw @ gw) + gb * gb)
        dw, db = eta * gw, eta * gb
        w = w - dw
        f = np.asarray(X @ w).ravel()
        if exact:
            b_new = best_intercept(erm, f)
            db, b = b - b_new, b_new
        else:
            b = b - db
        change = float(np.sqrt(dw @ dw + db * db))
        f = f + b
        J = _objective_from_f(erm, y, sw, float(w @ w), b, f)
        hist_J.append(J)
        hist_dp.append(change)
        if J < J_best:
            w_best, b_best, J_best, best_iter = w.copy(), b, J, t
        if callback is not None and callback(t, w, b, J):
            status = "stopped"
            break
        if change <= tol:
            status = "optimal"
            break
    nit = len(hist_dp)
    if status == "optimal":
        message = f"the parameter change {hist_dp[-1]:.3g} fell to tol={tol:g} at iteration {nit}."
    elif status == "stopped":
        message = f"stopped by the callback at iteration {nit}."
    else:
        message = (f"reached max_iter={max_iter} with parameter change {hist_dp[-1]:.3g} > "
                   f"tol={tol:g}.")
        warnings.warn(
            f"subgradient descent {message} Increase max_iter, loosen tol, or use a decaying "
            "schedule ('1/t', or 'polyak' given the optimal value) or method='pegasos'.",
            ConvergenceWarning, stacklevel=2)
    return OptimizeResult(
        w=w_best, b=b_best, w_best=w_best, b_best=b_best, w_last=w, b_last=b, fun=J_best,
        nit=nit, best_iter=best_iter, status=status, success=status == "optimal",
        message=message,
        history={"J": np.asarray(hist_J), "param_change": np.asarray(hist_dp)})


# --------------------------------------------------------------------------- Pegasos


def _check_gram(K, n):
    K = np.ascontiguousarray(K, dtype=np.float64)
    if K.shape != (n, n):
        raise ValueError(f"kernel_gram must be the ({n}, {n}) Gram matrix of the training "
                         f"points, got shape {K.shape}.")
    if not np.all(np.isfinite(K)):
        raise ValueError("kernel_gram contains NaN or infinity; check the kernel parameters.")
    return K


def pegasos(erm, *, batch_size=1, max_iter=None, max_time=None, projection=True, averaging=True,
            random_state=None, kernel_gram=None, callback=None, intercept="exact"):
    """Minimize J(w, b) of a primal ERM by Pegasos (stochastic subgradient, step 1/(λt)).

    Step t draws ``batch_size`` samples uniformly with replacement (set A), and sets
    ``w ← (1 − 1/t) w − (1/(λt)) (1/|A|) Σ_{i∈A} sᵢ ℓ'ᵢ xᵢ`` (the intercept likewise,
    shrunk only when regularized), then projects onto the ball of radius
    :func:`optimum_radius` (``1/√λ`` for unit weights), which holds the optimum.
    With an unregularized intercept the features are centered internally
    (``f = wᵀ(x − μ) + b̃``, μ the feature means, implicit for sparse X; the centered
    Gram matrix when kernelized), an exact reparametrization that keeps the
    intercept from stalling; results are reported in the original parametrization.

    Parameters
    ----------
    erm : PrimalERM
        The standard primal form; X dense or CSR (ignored, beyond its number of
        rows, when ``kernel_gram`` is given).
    batch_size : int, default=1
        Samples per step (k in the paper).
    max_iter : int, optional
        Number of epochs; an epoch is ``ceil(n / batch_size)`` steps.  Default: 10,
        or unlimited when ``max_time`` is given (the time is then the budget).
    max_time : float, optional
        Wall-clock budget in seconds (checked every ~65 000 draws); status
        ``"stopped"`` when it ends the run.
    projection : bool, default=True
        Project onto the ball after each step (Pegasos' optional projection).
    averaging : bool, default=True
        Return the average of the iterates (polynomial-decay weights, γ =
        :data:`AVERAGING_GAMMA`, Shamir & Zhang 2013) rather than the last one.
    random_state : int, RandomState instance or None, default=None
        Seeds the sampling; results are reproducible for a fixed seed.
    kernel_gram : ndarray of shape (n_samples, n_samples), optional
        Kernelized Pegasos: the Gram matrix K.  The iterate is ``w = Σⱼ βⱼ φ(xⱼ)``,
        ``f(x) = Σⱼ βⱼ k(xⱼ, x) + b``; the result carries ``beta`` instead of ``w``.
        Each step costs O(n·batch_size).
    callback : callable, optional
        Called as ``callback(epoch, w, b, J)`` (``beta`` for w when kernelized) after
        each epoch with the current returned iterate; True stops (``"stopped"``).
    intercept : {"exact", "step"}, default="exact"
        The intercept of each epoch's returned iterate: ``"exact"``, b*(w) =
        argmin_b J(w, b) (:func:`best_intercept`; where the intercept is fitted and not
        regularized, else as ``"step"``); ``"step"``, the steps' own (averaged) b.  The
        steps themselves are the same either way.  The step 1/(λt) moves b on the scale
        of 1/λ, not of b: with C = 1e-300 (λ = 1e300/n) the steps' b stays 0 where the
        optimum's is ±1.

    Returns
    -------
    result : scipy.optimize.OptimizeResult
        ``w`` (None when kernelized), ``b``: the best of the per-epoch returned
        iterates (the averages, or the last iterates without averaging) by J;
        ``beta`` (kernelized, else None); ``w_last``/``beta_last``, ``b_last`` the last
        raw iterate; ``w_best``, ``b_best`` (= w, b); ``fun`` J(w, b); ``nit`` epochs
        run (the last possibly partial when max_time stopped it); ``n_steps`` steps t;
        ``status`` (``"max_iter"``: the epoch budget was spent, without a warning since
        Pegasos has no convergence test; ``"stopped"``: max_time or the callback);
        ``message``; ``history``: ``"J"`` ndarray of shape (nit + 1,), J after each
        epoch (entry 0 at the start w = 0, b = 0), ``"time"`` seconds since the start,
        ``"step"`` the step count t at each entry.

    Raises
    ------
    ValueError
        λ = 0, batch_size or max_iter < 1, max_time ≤ 0, a Gram matrix of the wrong
        shape or with NaN/inf, or an unknown ``intercept``.
    TypeError
        If ``erm`` is not a PrimalERM.

    References
    ----------
    S. Shalev-Shwartz, Y. Singer, N. Srebro and A. Cotter, "Pegasos: primal estimated
    sub-gradient solver for SVM", Math. Programming 127(1):3–30, 2011, Fig. 2
    (mini-batch), Fig. 3 (kernels), §6 (intercept).
    """
    t_start = time.perf_counter()
    X, y, sw = _check_erm(erm)
    if erm.lam <= 0:
        raise ValueError("Pegasos needs λ > 0 (its step is 1/(λt)); for λ = 0 use "
                         "subgradient_descent with a constant or 1/sqrt(t) step.")
    batch_size = _check_int(batch_size, "batch_size")
    if intercept not in ("exact", "step"):
        raise ValueError(f"intercept must be 'exact' or 'step', got {intercept!r}.")
    exact = intercept == "exact" and best_intercept(erm, np.zeros(erm.n_samples)) is not None
    if max_time is not None:
        max_time = check_positive(max_time, "max_time (seconds)")
    if max_iter is None:
        max_iter = 10 if max_time is None else np.iinfo(np.int64).max
    max_iter = _check_int(max_iter, "max_iter")
    rng = check_random_state(random_state)
    it = _PegasosIterate(erm, X, y, sw, kernel_gram, batch_size, projection, averaging)
    n = erm.n_samples
    steps_per_epoch = -(-n // batch_size)
    chunk = steps_per_epoch if max_time is None else max(1, 65536 // batch_size)

    with one_blas_thread():  # products with X: no BLAS pool left spinning
        J0 = it.objective(*it.uncenter(it.iterate.v, 0.0))
        hist_J, hist_time, hist_step = [J0], [time.perf_counter() - t_start], [0]
        u_best, b_best, J_best = it.iterate.v.copy(), 0.0, J0
        t, status, epoch = 0, "max_iter", 0
        while epoch < max_iter and status == "max_iter":
            epoch += 1
            done = 0
            while done < steps_per_epoch:
                m = min(chunk, steps_per_epoch - done)
                t = it.run(rng.randint(0, n, size=m * batch_size).astype(np.int64))
                done += m
                if max_time is not None and time.perf_counter() - t_start >= max_time:
                    status = "stopped"
                    break
            u, b, Ku = it.current()
            if exact:
                b = best_intercept(erm, it.decision(u, Ku))
            J = it.objective(u, b, Ku)
            hist_J.append(J)
            hist_time.append(time.perf_counter() - t_start)
            hist_step.append(t)
            if J < J_best:
                u_best, b_best, J_best = u, b, J
            if callback is not None and callback(epoch, u, b, J) and status == "max_iter":
                status = "stopped"
    if status == "max_iter":
        message = (f"ran max_iter={max_iter} epochs ({t} steps); Pegasos has no stopping test: "
                   "compare history['J'] or certify the answer.")
    elif max_time is not None and hist_time[-1] >= max_time:
        message = f"max_time={max_time:g} s reached after {t} steps ({epoch} epochs)."
    else:
        message = f"stopped by the callback after epoch {epoch}."
    last = it.uncenter(it.iterate.v, it.iterate.b)
    out = OptimizeResult(
        b=b_best, b_best=b_best, b_last=last[1], fun=J_best, nit=epoch, n_steps=t,
        status=status, success=False, message=message,
        history={"J": np.asarray(hist_J), "time": np.asarray(hist_time),
                 "step": np.asarray(hist_step)})
    if it.kernelized:
        out.update(w=None, w_best=None, w_last=None, beta=u_best, beta_last=last[0])
    else:
        out.update(w=u_best, w_best=u_best, w_last=last[0], beta=None)
    return out


def _float_inputs(X, y, sw):
    """(X, y, sw) as the epochs take them: dense X C-contiguous float64 (a copy only
    where it is not already), y and sw contiguous float64."""
    if X is not None and not sp.issparse(X):
        X = np.ascontiguousarray(X, dtype=np.float64)
    return (X, np.ascontiguousarray(y, dtype=np.float64),
            np.ascontiguousarray(sw, dtype=np.float64))


class _PegasosIterate:
    """The iterate of :func:`pegasos` in its centered parametrization, and its J.

    An unregularized intercept makes shifting the features exact: f = wᵀ(x − μ) + b̃
    with b = b̃ − wᵀμ.  Centering decouples w and b (Pegasos §6 notes the bias breaks
    the analysis; on uncentered data it stalls).  ``iterate`` (an
    :class:`~margin_opt.solvers._pegasos_kernels.Iterate`) holds w, or β when
    kernelized, b̃, their averages and the step counter.
    """

    def __init__(self, erm, X, y, sw, kernel_gram, batch_size, projection, averaging):
        n = erm.n_samples
        X, y, sw = _float_inputs(X, y, sw)
        self.erm, self.X, self.y, self.sw, self.n = erm, X, y, sw, n
        self.kernelized = kernel_gram is not None
        self.K = _check_gram(kernel_gram, n) if self.kernelized else None
        self.averaging = bool(averaging)
        self.reg_b = erm.fit_intercept and erm.regularize_intercept
        self.center = erm.fit_intercept and not erm.regularize_intercept
        self.mu, self.Kc, self.Xc = np.zeros(0), self.K, X
        if self.center and self.kernelized:
            row = self.K.mean(axis=0)
            self.Kc = self.K - row[:, None] - row[None, :] + row.mean()
        elif self.center:
            self.mu = np.asarray(X.mean(axis=0)).ravel()
            self.Xc = X if sp.issparse(X) else X - self.mu
        d = n if self.kernelized else X.shape[1]
        self.iterate = _pk.Iterate(np.zeros(d), np.zeros(d))
        radius = optimum_radius(erm) if projection else 0.0
        self.loss = (erm.loss.code, erm.loss.param)
        self.rule = _pk.StepRule(erm.lam, batch_size, radius, erm.fit_intercept, self.reg_b,
                                 self.averaging, AVERAGING_GAMMA, *self.loss)

    def run(self, idx):
        """Steps over the sample indices ``idx``; returns the step counter after them."""
        it, rule, y, sw = self.iterate, self.rule, self.y, self.sw
        if self.kernelized:
            _pk.pegasos_epoch_gram(self.Kc, y, sw, idx, it, rule)
        elif sp.issparse(self.X):
            _pk.pegasos_epoch_csr(self.X, self.mu, y, sw, idx, it, rule)
        else:
            _pk.pegasos_epoch_dense(self.Xc, y, sw, idx, it, rule)
        return it.t

    def uncenter(self, u, b):
        """(w or β, b) of the original parametrization, and Kβ when kernelized."""
        u = u.copy()
        if self.kernelized:
            if self.center:
                u -= u.sum() / self.n
            Ku = self.K @ u
            return u, (float(b) - Ku.mean() if self.center else float(b)), Ku
        return u, (float(b) - float(u @ self.mu) if self.center else float(b)), None

    def current(self):
        """The returned iterate: the average, or the last one without averaging."""
        if self.averaging:
            return self.uncenter(self.iterate.v_avg, self.iterate.b_avg)
        return self.uncenter(self.iterate.v, self.iterate.b)

    def decision(self, u, Ku):
        """f without b at the iterate u (w, or β with Ku = Kβ when kernelized)."""
        if self.kernelized:
            return Ku
        return np.asarray(self.X @ u).ravel()

    def objective(self, u, b, Ku):
        """J at (u, b)."""
        erm, X, y, sw = self.erm, self.X, self.y, self.sw
        if self.kernelized:
            return _objective_from_f(erm, y, sw, float(u @ Ku), b, Ku + b)
        if sp.issparse(X):
            total = _pk.weighted_loss_csr(X.indptr, X.indices, X.data, _NO_MU, y, sw, u, b,
                                          *self.loss)
        else:
            total = _pk.weighted_loss_dense(X, _NO_MU, y, sw, u, b, *self.loss)
        reg = float(u @ u) + (b * b if self.reg_b else 0.0)
        return 0.5 * erm.lam * reg + total / self.n
