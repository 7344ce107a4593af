"""Exceptions and warnings raised by margin_opt.

Every error says what went wrong and what to do about it; none of them is a raw
solver traceback.
"""

import threading
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
    "convergence_warnings_silenced",
    "WARNINGS_LOCK",
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


#: held by code that changes the process's warning filters (``warnings.catch_warnings``
#: is not thread-safe: interleaved between threads it leaves them changed for good)
WARNINGS_LOCK = threading.RLock()
_local = threading.local()


@contextmanager
def no_convergence_warnings():
    """A context in which this thread's solves do not warn ``ConvergenceWarning`` (an
    inner solve that is not the answer: a repair attempt, a block subproblem).

    A flag of the calling thread, read where the warning is issued
    (:func:`convergence_warnings_silenced`), not a change of the process's filters:
    the one-vs-one pairs are solved on several threads, and another pair's genuine
    warning must not be lost meanwhile.
    """
    _local.quiet = getattr(_local, "quiet", 0) + 1
    try:
        yield
    finally:
        _local.quiet -= 1


def convergence_warnings_silenced() -> bool:
    """True inside :func:`no_convergence_warnings` on this thread."""
    return getattr(_local, "quiet", 0) > 0
