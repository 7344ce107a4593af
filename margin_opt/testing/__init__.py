"""The conformance kit: grade any SVM solver on problems that break solvers.

``margin_opt.testing`` holds named suites of C-SVC, ε-SVR and one-class SVM problems
(duplicated points with opposite labels, rank-deficient kernels, huge C, zero and extreme
weights, no free support vector, imbalance, unscaled features, the hard margin, ν near 0
and ν = 1, outliers, real data), each with a
reference optimum certified and confirmed by two independent methods, and grades a
solver given in plain arrays:

>>> from margin_opt.testing import run_conformance
>>> report = run_conformance(my_solve, suite="svc", tol=1e-6)   # doctest: +SKIP
>>> print(report)                                               # doctest: +SKIP

Modules: :mod:`~margin_opt.testing.suites` (the problems and their families),
:mod:`~margin_opt.testing.grading` (the scale-aware certificate of one answer),
:mod:`~margin_opt.testing.reference` (the stored references, :func:`check` for a user's
tests), :mod:`~margin_opt.testing.adapters` (the solvers at hand in the protocol),
:mod:`~margin_opt.testing.runner` (:func:`run_conformance`, the isolation of each call) and
:mod:`~margin_opt.testing.report` (:class:`Report`).
"""

from .grading import Grade, grade
from .reference import Reference, check, get_reference
from .report import Report, Row
from .runner import run_conformance
from .suites import FAMILIES, SUITES, Problem, get_problem, problems

__all__ = ["run_conformance", "problems", "check", "grade", "get_problem", "get_reference",
           "Report", "Row", "Grade", "Problem", "Reference", "FAMILIES", "SUITES"]
