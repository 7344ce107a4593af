"""Exceptions and warnings raised by margin_opt.

Every error says what went wrong and what to do about it; none of them is a raw
solver traceback.
"""

import threading
import warnings
from contextlib import contextmanager

from sklearn.exceptions import ConvergenceWarning

__all__ = [
    "ConvergenceWarning",
    "InaccurateSolutionWarning",
    "MarginOptError",
    "NotSeparableError",
    "SolverError",
    "InfeasibleError",
    "UnboundedError",
    "CertificateError",
    "NotCertifiedError",
    "NonConvexWarning",
    "no_convergence_warnings",
]


class MarginOptError(RuntimeError):
    """Base class of the errors margin_opt raises after validation succeeded."""


class SolverError(MarginOptError):
    """A solver stopped without an answer (numerical failure, missing solver...)."""


class InfeasibleError(SolverError):
    """The optimization problem has no feasible point."""


class UnboundedError(SolverError):
    """The optimization problem is unbounded."""


class NotSeparableError(InfeasibleError, ValueError):
    """A hard-margin SVM was posed on data that no hyperplane separates.

    The hard-margin primal ``min ½‖w‖² s.t. yᵢ(wᵀxᵢ + b) ≥ 1`` is infeasible
    exactly when the two classes cannot be separated in the feature space
    (equivalently its dual is unbounded).  Use a finite ``C`` (the soft margin).
    """


class InaccurateSolutionWarning(UserWarning):
    """The solver reported ``optimal_inaccurate``: the answer may not be optimal."""


class CertificateError(MarginOptError, AssertionError):
    """A certificate of optimality failed (raised by ``Certificate.assert_ok``)."""


class NotCertifiedError(SolverError):
    """No method reached an answer whose certificate holds (the default fit's last word).

    The message lists what was tried and why each answer failed, and what to do.
    """


class NonConvexWarning(UserWarning):
    """The kernel matrix is not (or not provably) positive semidefinite: the problem is not
    convex, and an answer is a stationary point that no certificate can call optimal."""


_QUIET = threading.RLock()


@contextmanager
def no_convergence_warnings():
    """A context in which ``ConvergenceWarning`` is ignored (an inner solve that is
    not the answer: a repair attempt, a block subproblem).

    Held under one process-wide lock: the one-vs-one pairs are solved on several
    threads, and ``warnings.catch_warnings`` saves and restores the process's filters,
    which, interleaved between threads, would leave them changed for good.
    """
    with _QUIET, warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        yield
