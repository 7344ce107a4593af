"""SMO: LIBSVM's algorithm for the standard dual QP.

``min_α ½αᵀQα + pᵀα  s.t.  yᵀα = Δ,  0 ≤ αᵢ ≤ uᵢ``  (:class:`~margin_opt.standard_forms.DualQP`):
C-SVC, the hard margin and ε-SVR are all this one form, so this is the only SMO in the
project.  The iterations are compiled ahead of time (``margin_opt._core.SMO``, in
src/core/smo.hpp: LIBSVM's concepts as classes — the kernel items, the row cache, Q's
rows, the solver with its working-set selection, shrinking and gradient
reconstruction).  The modules here, in the order a reader may take them:

``options``
    :class:`SMOOptions`: the knobs a person may set.
``polish``
    The Newton step on the free set (one factorization, an active-set step).
``driver``
    :func:`solve_smo`: checks, the run and its phases (SMO, polish, gap test), the result.

References
----------
J. C. Platt, "Sequential minimal optimization", MSR-TR-98-14, 1998.
R.-E. Fan, P.-H. Chen and C.-J. Lin, "Working set selection using second order
information for training support vector machines", JMLR 6:1889–1918, 2005.
C.-C. Chang and C.-J. Lin, "LIBSVM: a library for support vector machines", ACM
TIST 2(3), 2011.
"""

from .driver import WSS, run_status, solve_smo
from .options import SMOOptions

__all__ = ["solve_smo", "run_status", "WSS", "SMOOptions"]
