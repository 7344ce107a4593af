"""Pegasos' steps: one epoch of mini-batch stochastic subgradient steps.

Three storage layouts share one update rule (see :func:`margin_opt.solvers.subgradient.pegasos`):
dense rows, CSR rows (``indptr``/``indices``/``data``) and a precomputed Gram matrix
(kernelized Pegasos, coefficients per training point).  Each function advances the
iterate in place over the sample indices ``idx`` (drawn with replacement by the
caller, so results are reproducible from a NumPy ``random_state``) and returns the
new step counter ``t``.

With an unregularized intercept the caller centers the features (``x − μ``: an
exact reparametrization, ``b = b̃ − wᵀμ``), which removes the ill-conditioning
between w and b that otherwise stalls the intercept.

The rule of a run is a :class:`StepRule`; what the steps change is an :class:`Iterate`
(w or β, its average, the intercept and its average, ‖w‖² of the kernel layout, the
step counter).

Losses: the integer code and parameter of a :class:`~margin_opt.losses.Loss`
(``loss_code``, ``loss_param``: the hinge ``max(0, θ − y f)`` or the ε-insensitive
``max(0, |y − f| − ε)``).  At a kink the zero subgradient is taken.

How the steps run.  Each step reads its margins at the iterate the previous step
left, so the steps run one after the other; what is done per step is kept to a few
scalar operations, and the work on vectors is done once per block of draws:

- the iterate is kept as ``w = s·v`` (the shrinkage ``1 − 1/t`` and the projection
  scale s alone) and the polynomial-decay average as ``w̄ = A·u + C·v`` (a step
  updates the scalars A and C);
- at the start of a block of draws (rows zⱼ, centered where the caller centers),
  the margins ``vᵀzⱼ`` and the Gram matrix ``G = Z Zᵀ`` of the block are computed
  by matrix products;
- a step's update ``v ← v − Σⱼ aⱼzⱼ`` changes the margins of the block's later
  draws by ``−Σⱼ aⱼGⱼ·`` (one vector operation) and ‖v‖² by
  ``−2Σⱼ aⱼvᵀzⱼ + aᵀGa`` (the projection's norm); v and u themselves are updated
  at the end of the block, by one product with Zᵀ each.

The iterates are those of the step rule written out per coordinate, to rounding.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from scipy.linalg.blas import daxpy as _daxpy

from ..losses import HINGE, loss_value

#: Blocks of draws hold about sqrt(BLOCK_WORK / d) draws (the Gram matrix of a block
#: costs d·length² while its fixed cost is a few dozen vector operations), at least
#: BLOCK_MIN and at most BLOCK_MAX (rounded to whole mini-batches).
BLOCK_WORK, BLOCK_MIN, BLOCK_MAX = 250_000, 16, 256

#: Sparse rows with at most this many columns make dense blocks (BLAS products);
#: wider ones stay sparse (scipy's products).
DENSE_BLOCK_COLUMNS = 512

#: A block ends early when the scale s falls below this (from 1 at its start; the
#: projection can shrink it fast): w̄ = A·u + C·v then adds terms up to 1/s times
#: larger than w̄ itself, so 1/s bounds the relative rounding of the average.
_MIN_SCALE = 1.0 / 256.0


def _block_length(d, batch_size, n_draws):
    length = int(math.sqrt(BLOCK_WORK / max(d, 1)))
    length = max(BLOCK_MIN, min(BLOCK_MAX, length))
    length = max(1, length // batch_size) * batch_size
    return max(1, min(length, n_draws))


def _dense_block(Z):
    """(Z, its Gram matrix Z Zᵀ, the applier adding Σⱼ cⱼzⱼ) of the dense rows Z."""
    def apply(target, c):
        target += c @ Z[:c.shape[0]]
    return Z, Z @ Z.T, apply


@dataclass(frozen=True)
class StepRule:
    """The rule of a Pegasos run.

    Parameters
    ----------
    lam : float
        λ (the step is 1/(λt)).
    batch_size : int
        Draws per step.
    radius : float
        Radius of the projection ball (0: none).
    fit_intercept, reg_b : bool
        An intercept, and whether it is regularized.
    averaging : bool
        Keep the polynomial-decay average.
    gamma : float
        γ of that average.
    loss_code : int
        :data:`margin_opt.losses.HINGE` or the ε-insensitive code.
    loss_param : float
        The loss's θ or ε.
    """

    lam: float
    batch_size: int
    radius: float
    fit_intercept: bool
    reg_b: bool
    averaging: bool
    gamma: float
    loss_code: int
    loss_param: float


@dataclass
class Iterate:
    """What the steps change, in place.

    Parameters
    ----------
    v, v_avg : ndarray of shape (d,)
        The iterate (w, or β of the Gram layout) and its average.
    b, b_avg : float
        The intercept and its average.
    sq_norm : float
        ‖w‖² = βᵀKβ, carried by the Gram layout.
    t : int
        Steps taken so far.
    """

    v: np.ndarray
    v_avg: np.ndarray
    b: float = 0.0
    b_avg: float = 0.0
    sq_norm: float = 0.0
    t: int = 0


class _Scalars:
    """The scalars of a run: the step t, the scales s (w = s·v), A and C (w̄ = A·u + C·v),
    the intercept b and its average, and ‖v‖² (``sqv``)."""

    __slots__ = ("t", "s", "A", "C", "b", "b_avg", "sqv")

    def __init__(self, t, b, b_avg, sqv):
        self.t, self.s, self.A, self.C = t, 1.0, 1.0, 0.0
        self.b, self.b_avg, self.sqv = b, b_avg, sqv


def _deriv(hinge, param, y, f):
    """The loss's subgradient ∂ℓ/∂f at one draw (0 at the kink)."""
    if hinge:
        return -y if y * f < param else 0.0
    r = y - f
    return -1.0 if r > param else (1.0 if r < -param else 0.0)


def _block_steps(sc, P, G, yb, swb, v, u, opt, k):
    """The steps of ``k`` draws each over one block (the last step may take fewer);
    returns (draws done, av, au).

    ``v`` must become ``v − Σⱼ avⱼzⱼ`` and ``u`` ``u + Σⱼ auⱼzⱼ`` (the caller applies
    them).  The margins of a step's draws are read before its updates; each update
    then adds ``−aⱼG[j, j+1:]`` to the corrections of the later draws of the block
    and updates ‖v‖² with the margin that the step's earlier updates left.  A block
    ends early where the scale s falls below :data:`_MIN_SCALE`.
    """
    lam, radius, fit_intercept, reg_b, averaging, gamma, hinge, param, need_sq = opt
    nb = len(P)
    Pl, yl, swl = P.tolist(), yb.tolist(), swb.tolist()
    gd = np.diagonal(G).tolist()
    Gf = np.ascontiguousarray(G, dtype=np.float64).reshape(-1)
    corr = np.zeros(nb)
    av = [0.0] * nb
    au = [0.0] * nb
    r2 = radius * radius
    t, s, A, C, b, b_avg, sqv = sc.t, sc.s, sc.A, sc.C, sc.b, sc.b_avg, sc.sqv
    done = nb
    j0 = 0
    if k == 1 and t > 0:                 # one draw per step, no first step: the fast loop
        g1 = gamma + 1.0
        for j in range(nb):
            yj = yl[j]
            dot = Pl[j] + corr.item(j)
            f = s * dot + b
            if hinge:
                c = -yj if yj * f < param else 0.0
            else:
                c = yj - f
                c = -1.0 if c > param else (1.0 if c < -param else 0.0)
            c = swl[j] * c
            t += 1
            eta = 1.0 / (lam * t)
            shrink = 1.0 - 1.0 / t
            s *= shrink
            if reg_b:
                b *= shrink
            if c != 0.0:
                a = eta * c / s
                if need_sq:
                    sqv += a * (a * gd[j] - 2.0 * dot)
                    if sqv < 0.0:
                        sqv = 0.0
                if j + 1 < nb:           # corr[j+1:] −= a·G[j, j+1:]
                    _daxpy(Gf, corr, nb - j - 1, -a, j * nb + j + 1, 1, j + 1, 1)
                av[j] = a
                if averaging:
                    au[j] = a * C / A
                if fit_intercept:
                    b -= eta * c
            if radius > 0.0:
                tot = s * s * sqv + (b * b if reg_b else 0.0)
                if tot > r2:
                    fac = radius / math.sqrt(tot)
                    s *= fac
                    if reg_b:
                        b *= fac
            if averaging:
                rho = g1 / (t + gamma)
                A *= 1.0 - rho
                C = C * (1.0 - rho) + rho * s
                b_avg += rho * (b - b_avg)
            if s < _MIN_SCALE:
                done = j + 1
                break
        j0 = nb
    coef = [0.0] * k
    while j0 < nb:
        kk = min(k, nb - j0)
        for q in range(kk):
            j = j0 + q
            f = s * (Pl[j] + corr.item(j)) + b
            coef[q] = swl[j] * _deriv(hinge, param, yl[j], f) / kk
        t += 1
        eta = 1.0 / (lam * t)
        shrink = 1.0 - 1.0 / t
        if shrink == 0.0:                # t = 1: w ← 0 (the first step from t = 0)
            if averaging:
                u *= A
                u += C * v
                A, C = 1.0, 0.0
            v[:] = 0.0
            Pl = [0.0] * nb
            corr[:] = 0.0
            s, sqv = 1.0, 0.0
        else:
            s *= shrink
        if reg_b:
            b *= shrink
        for q in range(kk):
            c = coef[q]
            if c == 0.0:
                continue
            j = j0 + q
            a = eta * c / s
            if need_sq:
                sqv += a * (a * gd[j] - 2.0 * (Pl[j] + corr.item(j)))
                if sqv < 0.0:
                    sqv = 0.0
            if j + 1 < nb:               # corr[j+1:] −= a·G[j, j+1:]
                _daxpy(Gf, corr, nb - j - 1, -a, j * nb + j + 1, 1, j + 1, 1)
            av[j] = a
            if averaging:
                au[j] = a * C / A
            if fit_intercept:
                b -= eta * c
        if radius > 0.0:
            tot = s * s * sqv + (b * b if reg_b else 0.0)
            if tot > r2:
                fac = radius / math.sqrt(tot)
                s *= fac
                if reg_b:
                    b *= fac
        if averaging:
            rho = (gamma + 1.0) / (t + gamma)
            if rho >= 1.0:               # t = 1: the average is the iterate
                u[:] = 0.0
                au = [0.0] * nb
                A, C = 1.0, s
            else:
                A *= 1.0 - rho
                C = C * (1.0 - rho) + rho * s
            b_avg += rho * (b - b_avg)
        j0 += kk
        if s < _MIN_SCALE:
            done = j0
            break
    sc.t, sc.s, sc.A, sc.C, sc.b, sc.b_avg, sc.sqv = t, s, A, C, b, b_avg, sqv
    return done, np.array(av[:done]), np.array(au[:done])


def _run(rows_of, n_cols, y, sw, idx, it, rule, track_sq):
    """The steps over ``idx`` for any layout, on ``it`` (an :class:`Iterate`) by ``rule``.

    ``rows_of(rows)`` returns ``(P, G, apply)`` for the draws ``rows`` of a block:
    P the margins ``vᵀzⱼ`` at the current v, G the block's Gram matrix ``zᵢᵀzⱼ`` and
    ``apply(target, c)`` adding ``Σⱼ cⱼzⱼ`` over the block's first ``len(c)`` draws
    to ``target`` in place.  ``track_sq``: ‖w‖² is carried in ``it.sq_norm`` (the Gram
    layout); else, where the projection needs it, it is computed from v at each block.
    """
    n_draws = idx.shape[0]
    if n_draws == 0:
        return
    r = rule
    averaging, k, v, u = bool(r.averaging), int(r.batch_size), it.v, it.v_avg
    opt = (float(r.lam), float(r.radius), bool(r.fit_intercept), bool(r.reg_b), averaging,
           float(r.gamma), r.loss_code == HINGE, float(r.loss_param),
           r.radius > 0.0 or track_sq)
    sc = _Scalars(int(it.t), float(it.b), float(it.b_avg),
                  float(it.sq_norm) if track_sq else 0.0)
    length = _block_length(n_cols, k, n_draws)
    pos = 0
    while pos < n_draws:
        if sc.s != 1.0 or sc.C != 0.0:          # fold the scales: w = v, w̄ = u
            if averaging:
                u *= sc.A
                u += sc.C * v
                sc.A, sc.C = 1.0, 0.0
            v *= sc.s
            sc.sqv *= sc.s * sc.s
            sc.s = 1.0
        rows = idx[pos:pos + min(length, n_draws - pos)]
        if opt[-1] and not track_sq:
            sc.sqv = float(v @ v)
        P, G, apply = rows_of(rows)
        P = np.asarray(P, dtype=np.float64).reshape(-1)
        yb, swb = y[rows], sw[rows]
        done, av, au = _block_steps(sc, P, G, yb, swb, v, u, opt, k)
        apply(v, -av)
        if averaging:
            apply(u, au)
        pos += done
    if averaging:
        u *= sc.A
        u += sc.C * v
    v *= sc.s
    it.b, it.t = sc.b, sc.t
    if averaging:
        it.b_avg = sc.b_avg
    if track_sq:
        it.sq_norm = sc.s * sc.s * sc.sqv


def pegasos_epoch_dense(X, y, sw, idx, it, rule):
    """One epoch over dense rows ``X``, on ``it`` in place.

    Parameters
    ----------
    X : ndarray of shape (n, d)
        The rows, centered by the caller where the intercept is unregularized.
    y, sw : ndarray of shape (n,)
        Targets and sample weights.
    idx : ndarray of int of shape (n_draws,)
        The drawn samples, ``rule.batch_size`` per step (the last step may take fewer).
    it : Iterate
        w (shape (d,)), its average, b, its average and t, updated in place.
    rule : StepRule
    """
    X = np.asarray(X)

    def rows_of(rows):
        Z, G, apply = _dense_block(X[rows])
        return Z @ it.v, G, apply

    _run(rows_of, X.shape[1], y, sw, idx, it, rule, False)


def csr_rows(indptr, indices, data, rows):
    """The CSR arrays (data, indices, pointers) of the rows ``rows``, in their order."""
    starts = indptr[rows]
    lens = indptr[rows + 1] - starts
    ptr = np.zeros(rows.shape[0] + 1, dtype=np.int64)
    np.cumsum(lens, out=ptr[1:])
    take = np.repeat(starts - ptr[:-1], lens) + np.arange(ptr[-1])
    return data[take], indices[take], ptr


def pegasos_epoch_csr(X, mu, y, sw, idx, it, rule):
    """One epoch over the rows of a CSR matrix ``X``, on ``it`` in place.

    ``mu`` (ndarray of shape (d,), or of shape (0,) for none) centers the rows
    implicitly: the model is ``f = wᵀ(x − μ) + b`` without densifying X.  Blocks of
    rows with at most :data:`DENSE_BLOCK_COLUMNS` columns are made dense; wider ones
    use sparse products.  The other parameters are those of
    :func:`pegasos_epoch_dense`.
    """
    indptr, indices, data = X.indptr, X.indices, X.data
    w = it.v
    d = w.shape[0]
    center = mu.shape[0] == d
    mu_sq = float(mu @ mu) if center else 0.0

    def rows_of(rows):
        bdata, bind, bptr = csr_rows(indptr, indices, data, rows)
        nb = rows.shape[0]
        if d <= DENSE_BLOCK_COLUMNS:
            row = np.repeat(np.arange(nb), np.diff(bptr))
            Z = np.bincount(row * d + bind, weights=bdata, minlength=nb * d).reshape(nb, d)
            if center:
                Z -= mu
            Z, G, apply = _dense_block(Z)
            return Z @ w, G, apply
        Xb = sp.csr_matrix((bdata, bind, bptr), shape=(nb, d))
        P = np.asarray(Xb @ w).ravel()
        G = np.asarray((Xb @ Xb.T).toarray())
        if center:
            xm = np.asarray(Xb @ mu).ravel()
            P -= float(w @ mu)
            G = G - xm[:, None] - xm[None, :] + mu_sq

        def apply(target, c):
            m = c.shape[0]
            target += np.asarray((Xb if m == nb else Xb[:m]).T @ c).ravel()
            if center:
                target -= float(c.sum()) * mu
        return P, G, apply

    _run(rows_of, d, y, sw, idx, it, rule, False)


def pegasos_epoch_gram(K, y, sw, idx, it, rule):
    """One epoch of kernelized Pegasos on a Gram matrix ``K`` (ndarray of shape (n, n)).

    The iterate is ``w = Σⱼ βⱼ φ(xⱼ)`` (``it.v`` = β), so ``f(xᵢ) = (Kβ)ᵢ + b``;
    ``it.sq_norm`` carries ‖w‖² = βᵀKβ, updated in O(batch) per step.  The other
    parameters are those of :func:`pegasos_epoch_dense`.
    """
    beta = it.v
    n = beta.shape[0]

    def rows_of(rows):
        if rows.shape[0] * n <= 1 << 18:
            P = K[rows] @ beta
        else:                                       # no copy of many long rows
            P = np.array([K[i] @ beta for i in rows.tolist()])

        def apply(target, c):
            np.add.at(target, rows[:c.shape[0]], c)
        return P, K[np.ix_(rows, rows)], apply

    _run(rows_of, n, y, sw, idx, it, rule, True)


def weighted_loss_dense(X, mu, y, sw, w, b, loss_code, loss_param):
    """Σᵢ sᵢ ℓ(yᵢ, wᵀ(xᵢ − μ) + b) over dense rows (``mu`` of shape (0,): no centering)."""
    off = float(b) - (float(w @ mu) if mu.shape[0] == X.shape[1] else 0.0)
    f = X @ w
    f += off
    return float(sw @ loss_value(loss_code, loss_param, y, f))


def weighted_loss_csr(indptr, indices, data, mu, y, sw, w, b, loss_code, loss_param):
    """Σᵢ sᵢ ℓ(yᵢ, wᵀ(xᵢ − μ) + b) over CSR rows (``mu`` of shape (0,): no centering)."""
    n, d = y.shape[0], w.shape[0]
    off = float(b) - (float(w @ mu) if mu.shape[0] == d else 0.0)
    f = np.asarray(sp.csr_matrix((data, indices, indptr), shape=(n, d)) @ w).ravel()
    f += off
    return float(sw @ loss_value(loss_code, loss_param, y, f))
