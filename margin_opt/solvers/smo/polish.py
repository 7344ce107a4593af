"""The Newton polish of SMO's free set: one factorization, an active-set step on it.

SMO (first order) converges fast to a loose tolerance and then slowly: at
m(α) − M(α) ≈ 1e-3 the free multipliers (0 < αₜ < uₜ) of the answer are usually the
final ones, and the rest of the run only tunes their values.  On a fixed free set F,
with the others held at their bounds, the dual is an equality-constrained quadratic
whose minimizer solves one symmetric system,

    [Q_FF  y_F] [Δ]   [−∇_F]
    [y_Fᵀ   0 ] [ν] = [  0 ]

(without the equality, no intercept: Q_FF Δ = −∇_F; with the ν forms' second equality
eᵀα = Δ₂, a second multiplier: the constraint rows are y_Fᵀ and e_Fᵀ, so that each sign's
sum over F stays).  :func:`newton_step` takes that
step on one Cholesky factor of Q_FF (damped by δ = :data:`DAMPING` × its largest
diagonal entry, so that a singular Q_FF stays solvable); the variables the full step
would take out of the box are pinned to the bound they cross and the step is solved
again on the same factor (the pins are extra equality rows of a small Schur system: a
primal-dual active-set iteration), and a ratio test is the last resort.  The solver
then sets the new multipliers and brings every gradient up to date from Q's rows
(:meth:`margin_opt._core.SMO.assign`); SMO resumes from there to the requested
tolerance, so the answer is SMO's, certified by the same stopping rule, only reached
sooner.  A step that would not decrease the dual objective is dropped.

References
----------
J. Nocedal and S. J. Wright, *Numerical Optimization*, 2nd ed., Springer 2006,
§16.1 (equality-constrained QP, the KKT system) and §16.5 (active-set steps).
"""

from __future__ import annotations

import numpy as np
import scipy.linalg as sla

__all__ = ["Face", "newton_step", "max_free", "worth_it", "DAMPING", "PIN_ROUNDS"]

#: relative damping of Q_FF (times its largest diagonal entry, at least 1)
DAMPING = 1e-12
#: active-set rounds of one step (variables reaching a bound pinned, solved again)
PIN_ROUNDS = 16
#: the largest free set polished (the factorization costs |F|³/3 flops)
MAX_FREE = 3000



#: flops of the factorization per unit of SMO work (one active variable in one
#: iteration): the exchange rate of :func:`worth_it` (measured, docs/smo.md)
FLOPS_PER_SMO_UNIT = 100.0


def worth_it(n_free: int, smo_work: float, overhead: float) -> bool:
    """Whether a polish of ``n_free`` variables, with its fixed cost ``overhead`` (SMO
    units, :attr:`.options.SMOOptions.polish_overhead`), costs less than the SMO work
    done so far (``smo_work`` active variables summed over the iterations): the
    first-order tail it replaces is typically of that order.  Small problems
    (one-vs-one pairs) finish their tail faster than a factorization and its calls."""
    cost = n_free ** 3 / 3.0 + FLOPS_PER_SMO_UNIT * overhead
    return cost <= FLOPS_PER_SMO_UNIT * max(smo_work, 0.0)


def max_free(budget_bytes: float) -> int:
    """The largest free set whose Q_FF (|F|² doubles) fits a quarter of the budget, and
    at most :data:`MAX_FREE`."""
    return int(min(MAX_FREE, np.sqrt(max(budget_bytes, 0.0) / 4 / 8)))


class Face:
    """A polish's variables W and the Cholesky factor L of Q_WW + δI (δ =
    :data:`DAMPING` × its largest diagonal entry, at least 1), kept for the next polish
    of the same run.

    Q_WW itself is not kept: its products are L(Lᵀd) (the damping changes them by
    δ‖d‖, far below any tolerance), so a face holds one |W|² array, factored in the
    place of the kernel block it was given.  (Each array of a few MB is a fresh mapping
    that numpy asks the kernel to back with huge pages; where memory is fragmented the
    kernel compacts it first: with five such arrays per polish, one ε-SVR fit in three
    at n = 5000 took 1–2 s instead of 0.46 s.)

    Between two polish stops the free set barely changes (ε-SVR at n = 5000: 1896 and
    1895 variables), and a second factorization cost as much as the first (58 ms of a
    0.49 s fit).  The next polish reuses this one: the variables that left the free set
    are pinned where they are (rows of the step's small Schur system), those that
    joined extend the factor by one block (L₂₁ = Q₂₁L₁₁⁻ᵀ, L₂₂ = chol(Q₂₂ + δI −
    L₂₁L₂₁ᵀ): O(|W|²r) for r new ones instead of O(|W|³/3)).  The solves with the
    constraint columns [y, e_p] are kept, so that a pin round solves only its new ones.

    Parameters
    ----------
    W : ndarray of shape (k,), int
        The variables (positions in the standard form).
    Q : ndarray of shape (k, k)
        Q_WW, symmetric; overwritten by the factor.

    Raises
    ------
    numpy.linalg.LinAlgError
        Q_WW + δI is not positive definite (an indefinite kernel).
    """

    def __init__(self, W, Q):
        self.W = np.asarray(W)
        k = Q.shape[0]
        self.delta = DAMPING * max(1.0, float(np.max(np.diag(Q)))) if k else DAMPING
        Q[np.diag_indices(k)] += self.delta
        # Q symmetric: its transpose is the same matrix in Fortran order, factored in place
        self.L = sla.cholesky(Q.T if Q.flags.c_contiguous else Q, lower=True,
                              overwrite_a=True, check_finite=False)
        self.columns = {}                              # constraint key -> Q⁻¹ column

    def product(self, d):
        """(Q_WW + δI) d.

        Parameters
        ----------
        d : ndarray of shape (k,)

        Returns
        -------
        ndarray of shape (k,)
        """
        return self.L @ (self.L.T @ d)

    def solve(self, B):
        """(Q_WW + δI)⁻¹B for B of shape (k,) or (k, r)."""
        return sla.cho_solve((self.L, True), B, check_finite=False)

    def column(self, key, make):
        """Q⁻¹ of the constraint column ``key`` (``make()`` builds it), kept."""
        if key not in self.columns:
            self.columns[key] = self.solve(make())
        return self.columns[key]

    def extend(self, new, Q_cross, Q_new):
        """Add the variables ``new`` to W and their block to the factor.

        Parameters
        ----------
        new : ndarray of shape (r,), int
            The variables that joined.
        Q_cross : ndarray of shape (k, r)
            Q[W, new].
        Q_new : ndarray of shape (r, r)
            Q[new, new]; overwritten.

        Raises
        ------
        numpy.linalg.LinAlgError
            The extended block is not positive definite (W is left as it was).
        """
        L = self.L
        L21 = sla.solve_triangular(L, Q_cross, lower=True, check_finite=False).T
        Q_new[np.diag_indices(Q_new.shape[0])] += self.delta
        Q_new -= L21 @ L21.T
        L22 = sla.cholesky(Q_new, lower=True, check_finite=False)      # may raise
        k, r = L.shape[0], L22.shape[0]
        # Fortran order, as LAPACK's solves read it (a C-ordered factor is copied by
        # every cho_solve: the reused step took twice the new one's time)
        Lw = np.zeros((k + r, k + r), order="F")
        Lw[:k, :k] = L                                  # its upper triangle is zero
        Lw[k:, :k] = L21
        Lw[k:, k:] = L22
        self.W, self.L, self.columns = np.concatenate([self.W, new]), Lw, {}


def _solve(factor, g, eqs, pinned):
    """Δ minimizing ½ΔᵀQΔ + gᵀΔ subject to Δ_pinned = 0 and vᵀΔ = 0 for each (key, v) of
    ``eqs`` (none; y; y and e), from the factor of Q: the constraints are the rows of
    A = [vᵀ…; e_pinned], their multipliers from the small Schur system A Q⁻¹ Aᵀ (solved
    in the least-squares sense: with two equalities and one sign left free, y and e are
    dependent on the free set)."""
    k = g.size
    rows = np.flatnonzero(pinned)
    Qg = factor.solve(g)
    cols, rows_of_a = [], []
    for key, v in eqs:
        cols.append(factor.column(key, lambda v=v: v))
        rows_of_a.append(v)
    for r in rows:
        cols.append(factor.column(int(r), lambda r=r: np.eye(1, k, int(r)).ravel()))
        rows_of_a.append(int(r))
    if not cols:
        return -Qg
    QA = np.column_stack(cols)                       # Q⁻¹Aᵀ, (k, n_eq)
    AQA = np.empty((len(cols), len(cols)))           # A Q⁻¹ Aᵀ, row by row of A
    AQg = np.empty(len(cols))
    for i, a in enumerate(rows_of_a):
        pin = isinstance(a, int)
        AQA[i] = QA[a] if pin else (a @ QA)
        AQg[i] = Qg[a] if pin else (a @ Qg)
    lam = np.linalg.lstsq(AQA, -AQg, rcond=None)[0]
    return -(Qg + QA @ lam)


def newton_step(face, grad, alpha, upper, y, equality, pinned=None, two_equalities=False):
    """The polished values of the face's multipliers, or None where the step does not pay.

    A primal active-set iteration on one factorization: from the current point, the
    Newton step on the variables not pinned (y_WᵀΔ = 0 kept with ``equality``); where it
    would leave the box, the point moves as far as the box allows, the variables that
    reach a bound are pinned there and the step is solved again, at most
    :data:`PIN_ROUNDS` times.  The objective falls at every move.

    Parameters
    ----------
    face : Face
        The variables W and the factor of Q_WW (Qₜₛ = yₜyₛK(xₜ, xₛ)).
    grad : ndarray of shape (k,)
        ∇_W = (Qα + p)_W.
    alpha, upper, y : ndarray of shape (k,)
        The multipliers, their upper bounds and signs.
    equality : bool
        Keep y_Wᵀα_W (the problem has yᵀα = Δ).
    pinned : ndarray of bool of shape (k,), optional
        Variables held where they are from the start (those of a reused face that left
        the free set).
    two_equalities : bool, default=False
        Keep e_Wᵀα_W as well (the ν forms' eᵀα = Δ₂, with ``equality``): a second
        multiplier in the KKT system; the step then keeps each sign's sum over W.

    Returns
    -------
    ndarray of shape (k,) or None
        The new α_W inside the box, with the same y_Wᵀα_W (with ``equality``; and
        e_Wᵀα_W with ``two_equalities``) and a lower dual objective; None where nothing
        decreases it.

    References
    ----------
    Nocedal and Wright (2006), §16.1 and §16.5; for two equalities, Chang and Lin,
    "LIBSVM", ACM TIST 2(3), 2011, §4.2 (the ν forms' constraints).
    """
    k = alpha.size
    if k == 0:
        return None
    factor = face
    pinned = np.zeros(k, dtype=bool) if pinned is None else pinned.copy()
    eqs = ([("y", y)] if equality else []) + \
        ([("e", np.ones(k))] if equality and two_equalities else [])
    a = alpha.copy()
    for _ in range(PIN_ROUNDS):
        g = grad + face.product(a - alpha)
        step = _solve(factor, g, eqs, pinned)
        step[pinned] = 0.0
        if equality and two_equalities:
            # each sign's sum over the free ones exactly (yᵀΔ = eᵀΔ = 0)
            for part in (~pinned & (y > 0), ~pinned & (y < 0)):
                if part.any():
                    step[part] -= float(step[part].sum()) / int(part.sum())
        elif equality:
            # y_FᵀΔ = 0 exactly (a nearly singular Q_FF leaves rounding in the solve)
            free = ~pinned
            step[free] -= y[free] * (float(y[free] @ step[free]) / max(1, int(free.sum())))
        with np.errstate(divide="ignore", invalid="ignore"):
            room = np.where(step > 0, (upper - a) / step,
                            np.where(step < 0, -a / step, np.inf))
        t = min(1.0, float(np.min(room)))
        if not t > 0.0 and t != 1.0:
            hit = room <= 0.0
            if (hit & ~pinned).any():
                pinned |= hit                  # already at a bound: pin, and solve again
                continue
            break
        a = a + t * step
        if t >= 1.0:
            break
        hit = room <= t
        a[hit & (step > 0)] = upper[hit & (step > 0)]      # exactly at the bound it reached
        a[hit & (step < 0)] = 0.0
        pinned |= hit
    a = np.clip(a, 0.0, upper)
    d = a - alpha
    decrease = float(grad @ d + 0.5 * d @ face.product(d))
    if not decrease < 0.0:
        return None
    scale = 1e-12 * max(1.0, float(np.abs(alpha).sum()))
    if equality and abs(float(y @ d)) > scale:
        return None
    if equality and two_equalities and abs(float(d.sum())) > scale:
        return None
    return a
