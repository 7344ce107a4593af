"""margin_opt: margin classifiers and boosting as explicit convex optimization problems.

Every model is first a cvxpy problem (print it, read it, solve it); fast backends
(SMO, subgradient / Pegasos) solve the same standard forms; certificates (KKT
residuals, complementary slackness, duality gap, support-vector table) check any
solver's answer.

``import margin_opt`` is quick: it imports none of the public names' modules (nor
cvxpy or matplotlib); each is imported when its name is first read
(``margin_opt.SVC``, ``from margin_opt import SVC``).
"""

from typing import TYPE_CHECKING

from .lazy import lazy_exports

if TYPE_CHECKING:  # the static view of the names below (type checkers, IDEs)
    from .certificate import Certificate, CompositeCertificate
    from .estimators.adaboost import AdaBoost
    from .estimators.cv import SVCCV, SVRCV
    from .estimators.ensembles import (
        Bagging,
        BaggingRegressor,
        ExtraTrees,
        ExtraTreesRegressor,
        RandomForest,
        RandomForestRegressor,
    )
    from .estimators.linear import LinearSVC, LinearSVR
    from .estimators.nu import NuSVC, NuSVR
    from .estimators.one_class import OneClassSVM
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
    from .parallel import show_config
    from .problems.l1_svm import L1SVMProblem
    from .problems.multiclass import MulticlassSVMProblem
    from .problems.nu import NuSVCProblem, NuSVRProblem
    from .problems.one_class import OneClassProblem
    from .problems.separability import SeparabilityProblem, separability
    from .problems.squared import SquaredEpsilonProblem, SquaredHingeProblem
    from .problems.svm import SVMProblem
    from .problems.svr import SVRProblem
    from .solution import Solution
    from .standard_forms import DualQP, PrimalERM
    from .studies.decomposition import BiasVariance, bias_variance

__version__ = "0.1.0"

#: each public name and the module that defines it, imported on the name's first read
_EXPORTS = {
    "Certificate": ".certificate",
    "CompositeCertificate": ".certificate",
    "AdaBoost": ".estimators.adaboost",
    "SVCCV": ".estimators.cv",
    "SVRCV": ".estimators.cv",
    "Bagging": ".estimators.ensembles",
    "BaggingRegressor": ".estimators.ensembles",
    "ExtraTrees": ".estimators.ensembles",
    "ExtraTreesRegressor": ".estimators.ensembles",
    "RandomForest": ".estimators.ensembles",
    "RandomForestRegressor": ".estimators.ensembles",
    "LinearSVC": ".estimators.linear",
    "LinearSVR": ".estimators.linear",
    "NuSVC": ".estimators.nu",
    "NuSVR": ".estimators.nu",
    "OneClassSVM": ".estimators.one_class",
    "novikoff_bound": ".estimators.perceptron",
    "Perceptron": ".estimators.perceptron",
    "SVC": ".estimators.svc",
    "SVR": ".estimators.svr",
    "CertificateError": ".exceptions",
    "ConvergenceWarning": ".exceptions",
    "InaccurateSolutionWarning": ".exceptions",
    "InfeasibleError": ".exceptions",
    "NonConvexWarning": ".exceptions",
    "NotCertifiedError": ".exceptions",
    "NotSeparableError": ".exceptions",
    "SolverError": ".exceptions",
    "UnboundedError": ".exceptions",
    "Kernel": ".kernels",
    "make_kernel": ".kernels",
    "MulticlassSVMProblem": ".problems.multiclass",
    "L1SVMProblem": ".problems.l1_svm",
    "NuSVCProblem": ".problems.nu",
    "NuSVRProblem": ".problems.nu",
    "OneClassProblem": ".problems.one_class",
    "separability": ".problems.separability",
    "SeparabilityProblem": ".problems.separability",
    "SquaredEpsilonProblem": ".problems.squared",
    "SquaredHingeProblem": ".problems.squared",
    "SVMProblem": ".problems.svm",
    "SVRProblem": ".problems.svr",
    "Solution": ".solution",
    "DualQP": ".standard_forms",
    "PrimalERM": ".standard_forms",
    "show_config": ".parallel",
    "bias_variance": ".studies.decomposition",
    "BiasVariance": ".studies.decomposition",
}

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())

__all__ = [
    "AdaBoost",
    "Bagging",
    "BaggingRegressor",
    "bias_variance",
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
    "LinearSVC",
    "LinearSVR",
    "make_kernel",
    "MulticlassSVMProblem",
    "NonConvexWarning",
    "NotCertifiedError",
    "NotSeparableError",
    "novikoff_bound",
    "L1SVMProblem",
    "NuSVC",
    "NuSVCProblem",
    "NuSVR",
    "NuSVRProblem",
    "OneClassProblem",
    "OneClassSVM",
    "Perceptron",
    "PrimalERM",
    "RandomForest",
    "RandomForestRegressor",
    "separability",
    "SeparabilityProblem",
    "show_config",
    "Solution",
    "SolverError",
    "SquaredEpsilonProblem",
    "SquaredHingeProblem",
    "SVC",
    "SVCCV",
    "SVMProblem",
    "SVR",
    "SVRCV",
    "SVRProblem",
    "UnboundedError",
]
