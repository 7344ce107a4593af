"""Linear solvers: the dual with w kept explicitly (liblinear's family).

``coordinate``
    X as the compiled core's epochs of dual coordinate descent and row operations
    read it (:class:`margin_opt._core.LinearX`).
``face``
    Newton steps on the face of the free variables (dense active-set, projected
    Newton-CG) that end coordinate descent's tail; the exact solve on a working set.
``primal_newton``
    Few features: Newton's method on the Huber-smoothed primal in (w, b), down a
    continuation in the smoothing, that finds the face of the free multipliers.
``dcd``
    :func:`solve_dcd`: C-SVC with and without the free intercept, the squared hinge,
    ε-SVR (L1 and L2 losses) on a linear :class:`~margin_opt.standard_forms.DualQP`.
``crammer_singer``
    :func:`solve_crammer_singer`: the sequential dual method for the Crammer–Singer SVM
    (a :class:`~margin_opt.standard_forms.CrammerSingerQP`).
"""

from .dcd import DCDOptions, solve_dcd

__all__ = ["solve_dcd", "DCDOptions"]
