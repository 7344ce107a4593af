"""Modules loaded on first use: a short cold start.

``import margin_opt`` imports neither cvxpy nor matplotlib; each is imported the first
time a call needs it.  Two pieces do this:

- :func:`lazy_module` stands for a module (``cp = lazy_module("cvxpy")``) and imports
  it on the first attribute read (``cp.Variable``), so a module that builds cvxpy
  problems in some of its functions does not load cvxpy for the others;
- :func:`lazy_exports` gives a package the module-level ``__getattr__`` and ``__dir__``
  (PEP 562) that import a public name's module when the name is first read.

Neither puts anything in :data:`sys.modules` before it is used, so
``"cvxpy" in sys.modules`` says whether cvxpy was really loaded.
"""

from __future__ import annotations

from importlib import import_module
from importlib.util import find_spec

__all__ = ["lazy_module", "lazy_exports"]


class _LazyModule:
    """A stand-in for a module, imported when an attribute is first read."""

    __slots__ = ("_name",)

    def __init__(self, name: str):
        self._name = name

    def __getattr__(self, attr):
        return getattr(import_module(self._name), attr)

    def __repr__(self) -> str:
        return f"<lazy module {self._name!r}>"


def lazy_module(name: str) -> _LazyModule:
    """A module imported on first use.

    Parameters
    ----------
    name : str
        The module's absolute name, e.g. ``"cvxpy"``.

    Returns
    -------
    module : object
        Reading an attribute (``module.Variable``) imports ``name`` (once: later reads
        find it in :data:`sys.modules`) and returns that attribute of the module.

    Examples
    --------
    >>> cp = lazy_module("cvxpy")      # nothing imported yet
    >>> x = cp.Variable(2)             # cvxpy imported here
    """
    return _LazyModule(name)


def lazy_exports(package: str, exports: dict, eager: dict):
    """``__getattr__`` and ``__dir__`` (PEP 562) for a package that imports on first use.

    Parameters
    ----------
    package : str
        The package's ``__name__``.
    exports : dict of str to str
        Each public name and the module (relative to ``package``, e.g.
        ``".estimators.svc"``) that defines it.
    eager : dict
        The package's ``globals()``: a name once resolved is stored there, so later
        reads do not come back to ``__getattr__``.

    Returns
    -------
    __getattr__ : callable
        Imports the module of a public name; a submodule's name (``kernels``) imports
        the submodule, as an eager ``import`` of the package used to make it an
        attribute; any other name raises AttributeError.
    __dir__ : callable
        The package's names with the public names not yet imported.
    """

    def __getattr__(name: str):
        if name in exports:
            value = getattr(import_module(exports[name], package), name)
            eager[name] = value
            return value
        if not name.startswith("__") and find_spec(f"{package}.{name}") is not None:
            return import_module(f"{package}.{name}")
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    def __dir__():
        return sorted(set(eager) | set(exports))

    return __getattr__, __dir__
