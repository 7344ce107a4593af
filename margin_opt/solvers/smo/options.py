"""The tuning knobs of SMO, in one typed, frozen object (:class:`SMOOptions`).

What used to be module-level switches and constants of the SMO modules (read at run
time, changed by tests through monkeypatching) is a field here, with today's value as
its default.  A run takes one :class:`SMOOptions` (``solve_smo(qp, options=...)``,
the batch entries likewise) and hands it, or the fields it needs, down to the
modules; no module reads a knob from another module's globals.  The defaults were
measured on the 2-core development machine (docs/smo.md); the other values are for
experiments and tests (e.g. ``SMOOptions(packed_rows=False)`` to compare).

Constants of the compiled code (LIBSVM's τ, the RBF guard, tile sizes) are not here:
numba compiles them in, and a change means a recompilation.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ...parallel import ThreadPolicy
from .memory import RowMemory
from .rows import NARROW_MIN_BYTES
from .state import UNSHRINK_START

__all__ = ["SMOOptions", "DEFAULT"]


@dataclass(frozen=True)
class SMOOptions:
    """Tuning knobs of an SMO run; the defaults are the measured ones.

    Parameters
    ----------
    alpha_cap : float, default=1e12
        A multiplier above this stops the run as ``"stalled"``: the dual diverges
        (e.g. a hard margin on data that no hyperplane separates).
    stall_min : int, default=100_000
        Progress window, in iterations: m − M must halve within ``max(stall_min, 10 m)``
        iterations, or the run stops as ``"stalled"``.
    tol_floor : float, default=1e-15
        Relative to the gradient's scale: an m − M target below it is rounding, and the
        gap test stops tightening there.
    gap_shrink : tuple of two floats, default=(0.25, 0.5)
        Where m − M met ``tol`` but the duality gap failed ``gap_tol``, the next m − M
        target is the last times a factor in this range (``0.8·gap_tol / gap`` clipped
        to it).
    unshrink_start : int, default=1
        ``st[S_UNSHRINK]`` at the start of a phase: 1 skips LIBSVM's early unshrinking
        (every variable made active once m − M ≤ 10·tol; see
        :data:`.state.UNSHRINK_START`), 0 restores it.
    packed_rows : bool, default=True
        Re-cut the row cache into packed rows once shrinking leaves few rows active
        (:mod:`.packed`); False only to compare (the pair steps are the same either
        way; the sums over the free rows may differ in the last bit).
    row_par_min : int, default=4096
        Kernel rows of at least this many columns are split over the threads.
    narrow_min_bytes : int, default=4 MiB
        The dense transpose of sparse data is kept in single precision from this size
        on where its values are all single-precision numbers
        (:data:`.rows.NARROW_MIN_BYTES`; the kernel values are the same to the bit).
    pass_par_min : int, default=8192
        Passes over at least this many active variables are split over the threads.
    polish_tol : float, default=1e-3
        With ``polish``, SMO runs to this m − M before the first Newton polish.
    polish_at : tuple of float, default=(1e-5,)
        After the first polish, SMO stops again at these m − M (those above ``tol``)
        for another polish that reuses (extends) the first one's factor.
    polish_max : int, default=4
        Polishes per run, at most.
    enter_polish : bool, default=True
        After the first polish, a second at once with the bound variables that violate
        the optimality conditions let into the free set (:func:`.polish.entering`).
    polish_max_free : int, default=3000
        Largest free set polished (the dense factorization costs O(n_F³) for n_F free
        variables).
    damping : float, default=1e-12
        Relative damping δ of the Newton system (δ = damping × max(1, largest diagonal
        entry of K_FF)), so that a singular Q_FF stays solvable.
    pin_rounds : int, default=8
        Active-set rounds of one polish (variables leaving the box pinned, solved again).
    pin_max : int, default=64
        Pinned variables (or n_F / 16 where larger) beyond which the rounds stop, and the
        most variables by which a kept factor is extended or pinned.
    box_rounds : int, default=20
        Without the equality (no intercept): projected Newton rounds taken where
        coordinate descent stalls (:func:`.polish.box_newton`), at most ``polish_max``
        times a run.
    box_iter : int, default=60
        The most interior-point iterations of one such round (each one Cholesky
        factorization of the round's K_FF plus the barrier's diagonal).
    single : bool, default=True
        The polish's Cholesky factor in single precision (checked and refined in double,
        or redone in double); False: in double from the start.
    solve_rtol : float, default=1e-4
        Relative residual (max norm, per right-hand side) the first solve on a
        single-precision factor must reach.
    refine : int, default=3
        Refinement steps of a single-precision solve before the factor is redone in
        double.
    check_rows : int, default=128
        Rows of the first solve's residual sampled to decide whether to refine at all.
    flops_per_smo_unit : float, default=100.0
        Flops of the dense factorization per unit of SMO work (one active variable in
        one iteration): the exchange rate of the polish's cost test.
    overhead_smo_units : float, default=200_000.0
        The fixed cost of a polish (its Python and LAPACK calls), in SMO units.
    early_factor : bool, default=True
        Compute the first polish's factor on a second thread while SMO approaches the
        polish tolerance (:class:`.polish.EarlyFactor`).
    early_at : float, default=10.0
        Start the early factorization once m − M ≤ ``early_at`` × the polish tolerance.
    early_chunk : int, default=500
        SMO's iterations between two looks at m − M for the early factorization.
    early_min_free : int, default=256
        Smallest free set worth the early factorization's thread.
    block_q_max : int, default=512
        Largest working set of the decomposition (``block_size``).
    block_local : float, default=0.1
        The decomposition's local tolerance: max(tol, this × the subproblem's m − M).
    block_chunk : int, default=64
        Kernel rows computed per matrix product by the decomposition's row cache.
    newton_max_free : int, default=256
        Largest free set of the compiled Newton step of the batch entries
        (:mod:`.batch`).
    memory : RowMemory or None, default=None
        Where the row cache's memory comes from and goes back to
        (:class:`.memory.RowMemory`); None: the process's shared pool
        (:data:`.memory.POOL`).
    threads : ThreadPolicy or None, default=None
        How many threads the run splits its rows and passes over, and when it looks
        at the load again (:class:`margin_opt.parallel.ThreadPolicy`); None: the
        default policy.
    thread_check_iter : int, default=2000
        Iterations between two looks at the load (:class:`margin_opt.parallel.FitThreads`,
        itself at most one reading per ``ThreadPolicy.check_every`` seconds) where more
        than one thread is allowed: a fit that started on an idle machine goes down to
        the cores another process leaves it, and back; 0: never re-read.  The
        iterates do not depend on it.
    interrupt_work : int, default=10_000_000
        The compiled loop returns to Python every max(100, ``interrupt_work`` // m)
        iterations (m variables), so that a Ctrl-C (KeyboardInterrupt, which compiled
        code cannot see) reaches the user: at n = 50 000 (RBF, d = 20, rows not cached)
        an iteration takes ~0.7 ms, 200 of them ~0.15 s; on small problems the chunks
        are long enough that the returns cost nothing measurable.  The iterates do not
        depend on it; 0: one compiled call to the end.

    Raises
    ------
    ValueError
        ``thread_check_iter`` or ``interrupt_work`` < 0 or ``early_chunk`` < 1 (or not
        integers).
    TypeError
        ``threads`` not a ThreadPolicy.
    """

    alpha_cap: float = 1e12
    stall_min: int = 100_000
    tol_floor: float = 1e-15
    gap_shrink: tuple = (0.25, 0.5)
    unshrink_start: int = UNSHRINK_START
    packed_rows: bool = True
    row_par_min: int = 4096
    narrow_min_bytes: int = NARROW_MIN_BYTES
    pass_par_min: int = 8192
    polish_tol: float = 1e-3
    polish_at: tuple = (1e-5,)
    polish_max: int = 4
    enter_polish: bool = True
    polish_max_free: int = 3000
    damping: float = 1e-12
    pin_rounds: int = 8
    pin_max: int = 64
    box_rounds: int = 20
    box_iter: int = 60
    single: bool = True
    solve_rtol: float = 1e-4
    refine: int = 3
    check_rows: int = 128
    flops_per_smo_unit: float = 100.0
    overhead_smo_units: float = 200_000.0
    early_factor: bool = True
    early_at: float = 10.0
    early_chunk: int = 500
    early_min_free: int = 256
    block_q_max: int = 512
    block_local: float = 0.1
    block_chunk: int = 64
    newton_max_free: int = 256
    memory: RowMemory | None = field(default=None, compare=False)
    threads: ThreadPolicy | None = None
    thread_check_iter: int = 2000
    interrupt_work: int = 10_000_000

    def __post_init__(self):
        for name, low in (("thread_check_iter", 0), ("early_chunk", 1),
                          ("interrupt_work", 0)):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or \
                    value < low:
                raise ValueError(f"SMOOptions.{name} must be an integer >= {low}, got "
                                 f"{value!r}.")
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
