"""margin_opt: margin classifiers and boosting as explicit convex optimization problems.

Every model is first a cvxpy problem (print it, read it, solve it); fast backends
(SMO, subgradient / Pegasos) solve the same standard forms; certificates (KKT
residuals, complementary slackness, duality gap, support-vector table) check any
solver's answer.
"""

from .certificate import Certificate, CompositeCertificate
from .estimators.adaboost import AdaBoost
from .estimators.ensembles import (
    Bagging,
    BaggingRegressor,
    ExtraTrees,
    ExtraTreesRegressor,
    RandomForest,
    RandomForestRegressor,
)
from .estimators.perceptron import Perceptron, novikoff_bound
from .estimators.svc import SVC
from .estimators.svr import SVR
from .exceptions import (
    CertificateError,
    ConvergenceWarning,
    InaccurateSolutionWarning,
    InfeasibleError,
    NonConvexWarning,
    NotCertifiedError,
    NotSeparableError,
    SolverError,
    UnboundedError,
)
from .kernels import Kernel, make_kernel
from .problems.multiclass import MulticlassSVMProblem
from .problems.separability import SeparabilityProblem, separability
from .problems.svm import SVMProblem
from .problems.svr import SVRProblem
from .solution import Solution
from .standard_forms import DualQP, PrimalERM
from .studies.decomposition import BiasVariance, bias_variance

__version__ = "0.1.0"

__all__ = [
    "AdaBoost",
    "Bagging",
    "BaggingRegressor",
    "BiasVariance",
    "Certificate",
    "CertificateError",
    "CompositeCertificate",
    "ConvergenceWarning",
    "DualQP",
    "ExtraTrees",
    "ExtraTreesRegressor",
    "InaccurateSolutionWarning",
    "InfeasibleError",
    "Kernel",
    "MulticlassSVMProblem",
    "NonConvexWarning",
    "NotCertifiedError",
    "NotSeparableError",
    "Perceptron",
    "PrimalERM",
    "RandomForest",
    "RandomForestRegressor",
    "SVC",
    "SVMProblem",
    "SVR",
    "SVRProblem",
    "SeparabilityProblem",
    "Solution",
    "SolverError",
    "UnboundedError",
    "bias_variance",
    "make_kernel",
    "novikoff_bound",
    "separability",
]
