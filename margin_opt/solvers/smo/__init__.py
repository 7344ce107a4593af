"""SMO: LIBSVM's algorithm for the standard dual QP, one module per concept.

``min_α ½αᵀQα + pᵀα  s.t.  yᵀα = Δ,  0 ≤ αᵢ ≤ uᵢ``  (:class:`~margin_opt.standard_forms.DualQP`):
C-SVC, the hard margin and ε-SVR are all this one form, so this is the only SMO in the
project.  The modules, in the order a reader may take them (each imports only those
before it):

``state``
    The int64 state vector of a run (iteration, active set, counters) and its codes;
    what the compiled code is specialized on (a serial run's thread count None:
    ``split``, ``when``), so that a run compiles only what it can run.
``rows``
    Kernel rows ``K[r, ·]`` and blocks ``K[rows, cols]``, ``Kβ``: compiled, tiled,
    split over threads (LIBSVM's ``Kernel``).
``memory``
    The row cache's memory, kept for the next run of the process.
``options``
    :class:`SMOOptions`: the tuning knobs, a frozen dataclass (with ``memory``).
``packed``
    Packed rows: the cache's memory re-cut to the active columns of a shrunk run.
``cache``
    The row cache (LIBSVM's ``Cache``) and sums of the rows it holds.
``select``
    Working-set selection: the pair, by LIBSVM's second-order rule, and its passes.
``shrink``
    Shrinking and gradient reconstruction.
``loop``
    The compiled iteration (LIBSVM's ``Solver::Solve`` loop) and its read-outs.
``polish``
    The Newton polish of the free set, its Cholesky factor, the early factorization.
``blocks``
    The working-set decomposition (ThunderSVM's): large problems in blocks of q.
``driver``
    :func:`solve_smo`: checks, the run and its phases (polish, gap test), the result.
``batch``
    Many small problems on a given kernel matrix in one compiled call each
    (:func:`solve_smo_gram`, :func:`solve_block_pair`: the pairs of one-vs-one).

References
----------
J. C. Platt, "Sequential minimal optimization", MSR-TR-98-14, 1998.
R.-E. Fan, P.-H. Chen and C.-J. Lin, "Working set selection using second order
information for training support vector machines", JMLR 6:1889–1918, 2005.
C.-C. Chang and C.-J. Lin, "LIBSVM: a library for support vector machines", ACM
TIST 2(3), 2011.
"""

from .batch import block_pair_matrix, solve_block_pair, solve_smo_gram
from .driver import WSS, run_status, solve_smo
from .options import SMOOptions

__all__ = ["solve_smo", "solve_smo_gram", "solve_block_pair", "block_pair_matrix",
           "run_status", "WSS", "SMOOptions"]
