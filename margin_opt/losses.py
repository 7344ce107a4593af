"""Margin losses of the primal ERM form: value, a subgradient, and their integer codes.

A loss object is what :class:`~margin_opt.standard_forms.PrimalERM` carries; the
primal solvers read its integer ``code`` and ``param`` to evaluate the same loss
on arrays of samples (:func:`loss_value`, :func:`loss_derivative`).

- :class:`Hinge` ``ℓ(y, f) = max(0, θ − y f)``: θ = 1 is the soft-margin SVM, θ = 0
  the perceptron criterion of the lecture notes.
- :class:`EpsilonInsensitive` ``ℓ(y, f) = max(0, |y − f| − ε)``: Vapnik's SVR loss.

At a kink the zero subgradient is taken (a point exactly on the margin, or on the
edge of the tube, contributes nothing), as in the lecture notes.

References
----------
V. Vapnik, *The Nature of Statistical Learning Theory*, Springer, 1995.
F. Rosenblatt, "The perceptron", Psychological Review 65(6), 1958 (the criterion).
S. Shalev-Shwartz et al., "Pegasos", Math. Programming 127, 2011, Thm. 1 (the ball).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["Loss", "Hinge", "EpsilonInsensitive", "loss_value", "loss_derivative",
           "HINGE", "EPSILON_INSENSITIVE"]

#: integer codes of the loss families
HINGE, EPSILON_INSENSITIVE = 0, 1


def _result(out):
    """A 0-d result as a NumPy float scalar, any other as the array."""
    return out[()] if out.ndim == 0 else out


def loss_value(code, param, y, f):
    """ℓ(y, f) of the loss with integer ``code`` and parameter θ or ε, elementwise.

    Parameters
    ----------
    code : int
        :data:`HINGE` (``max(0, θ − y f)``); any other code is the ε-insensitive
        loss ``max(0, |y − f| − ε)``.
    param : float
        θ or ε.
    y, f : float or array_like
        Targets and decision values (broadcast together).

    Returns
    -------
    value : float or ndarray
        A float for scalar ``y`` and ``f``, else an ndarray of their broadcast shape.
    """
    y = np.asarray(y, dtype=np.float64)
    f = np.asarray(f, dtype=np.float64)
    if code == HINGE:
        return _result(np.maximum(0.0, param - y * f))
    return _result(np.maximum(0.0, np.abs(y - f) - param))


def loss_derivative(code, param, y, f):
    """A subgradient ∂ℓ/∂f (0 at the kink) of the loss with integer ``code``, elementwise.

    Parameters
    ----------
    code : int
        :data:`HINGE` (``−y`` where ``y f < θ``, else 0); any other code is the
        ε-insensitive loss (−1 where ``y − f > ε``, +1 where ``y − f < −ε``, else 0).
    param : float
        θ or ε.
    y, f : float or array_like
        Targets and decision values (broadcast together).

    Returns
    -------
    derivative : float or ndarray
        A float for scalar ``y`` and ``f``, else an ndarray of their broadcast shape.
    """
    y = np.asarray(y, dtype=np.float64)
    f = np.asarray(f, dtype=np.float64)
    if code == HINGE:
        return _result(np.where(y * f < param, -y, 0.0))
    r = y - f
    return _result(np.where(r > param, -1.0, np.where(r < -param, 1.0, 0.0)))


def _set_nonnegative(obj, field, what, hint):
    """Store ``float(obj.field)`` after checking it is finite and ≥ 0 (else ValueError)."""
    value = getattr(obj, field)
    v = float(value) if isinstance(value, (int, float, np.number)) and \
        not isinstance(value, bool) else float("nan")
    if not (np.isfinite(v) and v >= 0):
        raise ValueError(f"{what} must be a finite number ≥ 0, got {value!r}{hint}.")
    object.__setattr__(obj, field, v)


@dataclass(frozen=True)
class Loss:
    """Base of the margin losses: vectorized value and subgradient, integer code.

    Attributes
    ----------
    code : int
        The loss family's code for :func:`loss_value` and :func:`loss_derivative`
        (:data:`HINGE` or :data:`EPSILON_INSENSITIVE`).
    param : float
        The threshold θ of the hinge or the tube half-width ε.
    """

    code = -1

    @property
    def param(self) -> float:  # pragma: no cover - overridden
        raise NotImplementedError

    def value(self, y, f) -> np.ndarray:
        """ℓ(yᵢ, fᵢ) per sample, ndarray of shape (n_samples,)."""
        raise NotImplementedError

    def derivative(self, y, f) -> np.ndarray:
        """A subgradient ∂ℓ/∂f per sample (0 at the kink), ndarray of shape (n_samples,)."""
        raise NotImplementedError

    def optimum_radius(self, y, sample_weight, lam) -> float:
        """Radius of a ball around 0 holding the minimizer w* of λ/2‖w‖² + mean(s ℓ).

        From λ/2‖w*‖² ≤ J* ≤ J(0, 0): ``sqrt(2 J(0, 0) / λ)``; ``inf`` when λ = 0.
        """
        if lam == 0:
            return float("inf")
        j0 = float(np.asarray(sample_weight) @ self.value(np.asarray(y), 0.0)) / len(y)
        return float(np.sqrt(2.0 * j0 / lam))


@dataclass(frozen=True)
class Hinge(Loss):
    """The hinge loss ``max(0, θ − y f)`` with labels y ∈ {−1, +1}.

    Parameters
    ----------
    threshold : float, default=1.0
        θ ≥ 0: 1 for the soft-margin SVM, 0 for the perceptron criterion
        ``max(0, −y f)`` of the lecture notes.

    Raises
    ------
    ValueError
        If θ is negative or not finite.
    """

    threshold: float = 1.0
    code = HINGE

    def __post_init__(self):
        _set_nonnegative(self, "threshold", "the hinge threshold",
                         " (1 for the SVM, 0 for the perceptron)")

    @property
    def param(self) -> float:
        """θ."""
        return self.threshold

    def value(self, y, f) -> np.ndarray:
        return np.maximum(0.0, self.threshold - np.asarray(y) * f)

    def derivative(self, y, f) -> np.ndarray:
        y = np.asarray(y)
        return np.where(y * f < self.threshold, -y, 0.0)

    def optimum_radius(self, y, sample_weight, lam) -> float:
        """``sqrt(θ mean(s) / λ)`` (Pegasos' Theorem 1 argument, ``1/√λ`` for θ = s = 1).

        By strong duality λ‖w*‖² = θ·mean(α) − (slack cost) ≤ θ·mean(s).
        """
        if lam == 0:
            return float("inf")
        return float(np.sqrt(self.threshold * float(np.mean(sample_weight)) / lam))

    def __str__(self) -> str:
        return f"hinge max(0, {self.threshold:g} − y f)"


@dataclass(frozen=True)
class EpsilonInsensitive(Loss):
    """Vapnik's ε-insensitive loss ``max(0, |y − f| − ε)``.

    Parameters
    ----------
    epsilon : float, default=0.1
        Tube half-width ε ≥ 0, in target units.

    Raises
    ------
    ValueError
        If ε is negative or not finite.
    """

    epsilon: float = 0.1
    code = EPSILON_INSENSITIVE

    def __post_init__(self):
        _set_nonnegative(self, "epsilon", "epsilon", " (the tube half-width, target units)")

    @property
    def param(self) -> float:
        """ε."""
        return self.epsilon

    def value(self, y, f) -> np.ndarray:
        return np.maximum(0.0, np.abs(np.asarray(y) - f) - self.epsilon)

    def derivative(self, y, f) -> np.ndarray:
        r = np.asarray(y) - f
        return np.where(r > self.epsilon, -1.0, 0.0) + np.where(r < -self.epsilon, 1.0, 0.0)

    def __str__(self) -> str:
        return f"ε-insensitive max(0, |y − f| − {self.epsilon:g})"
