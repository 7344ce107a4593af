"""The knobs of an SMO run a person may set, in one typed, frozen object
(:class:`SMOOptions`).

What the run does not need a person to choose is a named constant where it is used:
LIBSVM's τ and the row split (src/core/smo.hpp), the polish's damping and pin rounds
(:mod:`.polish`), the gap test's factors (:mod:`.driver`).  The defaults, and the
effect of each knob, are measured in docs/smo.md.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...parallel import ThreadPolicy

__all__ = ["SMOOptions", "DEFAULT", "resolve"]


@dataclass(frozen=True)
class SMOOptions:
    """The knobs of an SMO run; the defaults are the measured ones.

    Parameters
    ----------
    alpha_cap : float, default=1e12
        A multiplier above this stops the run as ``"stalled"``: the dual diverges (e.g.
        a hard margin on data that no hyperplane separates).
    stall_min : int, default=100_000
        Progress window, in iterations: m − M must halve within ``max(stall_min, 10 m)``
        iterations (m variables), or the run stops as ``"stalled"``.
    polish_at : tuple of float, default=(1e-3, 1e-5)
        With ``polish``, SMO stops at each of these m − M above ``tol`` for a Newton
        polish of the free set (:mod:`.polish`), then goes on to ``tol``.
    polish_max_free : int, default=3000
        Largest free set polished (the factorization costs |F|³/3 flops).
    polish_overhead : float, default=200_000
        A polish's fixed cost (its Python and LAPACK calls), in units of SMO work (one
        active variable in one iteration): a polish is taken where |F|³/300 plus this
        is at most the SMO work done so far (:func:`.polish.worth_it`), so that small
        problems (one-vs-one pairs) finish their short tail by SMO; 0: polish
        whenever the factorization alone pays.
    threads : ThreadPolicy or None, default=None
        How many threads the run splits its kernel rows over, and when it looks at the
        load again (:class:`margin_opt.parallel.ThreadPolicy`); None: the default policy.
    thread_check_iter : int, default=2000
        Iterations between two looks at the load where more than one thread is allowed
        (:class:`margin_opt.parallel.FitThreads`): a fit that started on an idle machine
        goes down to the cores another process leaves it, and back; 0: never.  The
        iterates do not depend on it.
    interrupt_work : int, default=10_000_000
        The compiled loop returns to Python every max(100, ``interrupt_work`` // m)
        iterations, so that a Ctrl-C reaches the user; 0: one compiled call to the end.
        The iterates do not depend on it.

    Raises
    ------
    ValueError
        ``stall_min``, ``polish_max_free``, ``thread_check_iter`` or ``interrupt_work``
        not a non-negative integer; ``alpha_cap`` not positive.
    TypeError
        ``threads`` not a ThreadPolicy.
    """

    alpha_cap: float = 1e12
    stall_min: int = 100_000
    polish_at: tuple = (1e-3, 1e-5)
    polish_max_free: int = 3000
    polish_overhead: float = 200_000.0
    threads: ThreadPolicy | None = None
    thread_check_iter: int = 2000
    interrupt_work: int = 10_000_000

    def __post_init__(self):
        for name in ("stall_min", "polish_max_free", "thread_check_iter", "interrupt_work"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0:
                raise ValueError(f"SMOOptions.{name} must be an integer >= 0, got {value!r}.")
        if not (isinstance(self.alpha_cap, (int, float)) and self.alpha_cap > 0):
            raise ValueError(f"SMOOptions.alpha_cap must be positive, got {self.alpha_cap!r}.")
        if not (isinstance(self.polish_overhead, (int, float)) and self.polish_overhead >= 0):
            raise ValueError("SMOOptions.polish_overhead must be a number >= 0, got "
                             f"{self.polish_overhead!r}.")
        if self.threads is not None and not isinstance(self.threads, ThreadPolicy):
            raise TypeError("SMOOptions.threads must be a margin_opt.parallel.ThreadPolicy or "
                            f"None, got {type(self.threads).__name__}.")

    def stall_window(self, m: int) -> int:
        """The progress window of a run over ``m`` variables: ``max(stall_min, 10 m)``."""
        return max(int(self.stall_min), 10 * int(m))


#: the defaults
DEFAULT = SMOOptions()


def resolve(options) -> SMOOptions:
    """``options``, or :data:`DEFAULT` for None; TypeError for anything else."""
    if options is None:
        return DEFAULT
    if not isinstance(options, SMOOptions):
        raise TypeError(f"options must be an SMOOptions or None, got {type(options).__name__}.")
    return options
