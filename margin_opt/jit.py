"""numba's compilations of margin_opt's code, announced once per process.

The solvers are numba functions compiled on their first call and kept in numba's
on-disk cache (``cache=True``: ``__pycache__`` beside the sources, or the folder
named by ``NUMBA_CACHE_DIR``).  The first fit after an installation therefore
compiles what it runs (about 16 s of CPU for a small binary SVC, 41 s for a first
one-vs-one fit; a larger fit's parallel code, or a sparse one's, on its first use);
later processes load the compiled code
from the cache in a fraction of a second.  So that the first compilation is not silent,
:func:`announce_compiles` writes :data:`MESSAGE` to stderr the first time in a process
that numba *compiles* a margin_opt function: a load from the cache is not a
compilation (numba's ``"numba:compile"`` event fires only for a real one), and
numba functions of other packages are not margin_opt's.

Set the environment variable ``MARGIN_OPT_QUIET=1`` (:data:`QUIET_ENV`) to silence
the line.

References
----------
numba, "Event API" (``numba.core.event``):
https://numba.readthedocs.io/en/stable/developer/event_api.html
"""

from __future__ import annotations

import os
import sys
import threading

import numpy as np

__all__ = ["announce_compiles", "read_only", "csr_arrays", "MESSAGE", "QUIET_ENV"]

#: the line written to stderr at the first compilation in a process
MESSAGE = ("margin_opt: compiling the solvers for their first use (15–45 s on an idle "
           "machine, once for each kind of fit; later runs load them from numba's cache)")

#: the environment variable that silences the line (any value but "", "0", "false", "no")
QUIET_ENV = "MARGIN_OPT_QUIET"

_lock = threading.Lock()
_installed = False
_announced = False


def _quiet() -> bool:
    return os.environ.get(QUIET_ENV, "").strip().lower() not in ("", "0", "false", "no")


def _is_ours(dispatcher) -> bool:
    module = getattr(getattr(dispatcher, "py_func", None), "__module__", None) or ""
    return module == "margin_opt" or module.startswith("margin_opt.")


def _announce(event) -> None:
    """Write :data:`MESSAGE` if ``event`` starts compiling a margin_opt function and
    no line was written yet in this process (and :data:`QUIET_ENV` is not set)."""
    global _announced
    if _announced or not _is_ours(event.data.get("dispatcher")):
        return
    with _lock:
        if _announced or _quiet():
            return
        _announced = True
    print(MESSAGE, file=sys.stderr, flush=True)


def _load_tbb() -> None:
    """Load the ``tbb`` package's ``libtbb.so.12`` before numba picks its threading layer.

    The wheel puts the library in ``<prefix>/lib``, which the loader searches for the
    interpreter's own prefix but not for a virtual environment's (nor a user site's):
    there numba's TBB layer failed to import and numba fell back to GNU OpenMP.  A
    library loaded first (by its soname) satisfies numba's ``tbbpool`` wherever it is.
    """
    import ctypes
    import site

    if not sys.platform.startswith("linux"):
        return
    prefixes = [sys.prefix, sys.base_prefix, getattr(site, "USER_BASE", None) or ""]
    for prefix in dict.fromkeys(p for p in prefixes if p):
        path = os.path.join(prefix, "lib", "libtbb.so.12")
        if os.path.exists(path):
            try:
                ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
            except OSError:
                continue
            return


def announce_compiles() -> None:
    """Listen to numba's compilations; announce the first of margin_opt's on stderr.

    Called where margin_opt's numba functions are defined (the solvers package and
    the ground modules with compiled code), so it imports numba, which those modules
    import anyway; ``import margin_opt`` does not call it.  Calling it again does
    nothing.

    Notes
    -----
    The line is written at most once per process, when numba starts compiling a
    function defined in a margin_opt module, never for a load from numba's cache nor
    for other packages' functions; ``MARGIN_OPT_QUIET=1`` in the environment (read at
    that moment) silences it.  The first call also loads TBB's library from the
    ``tbb`` package (:func:`_load_tbb`), so that numba's TBB layer loads in a virtual
    environment as in the interpreter's prefix.  A worker process (joblib) that compiles writes its
    own line.
    """
    global _installed
    with _lock:
        if _installed:
            return
        _load_tbb()
        from numba.core import event

        class _CompileListener(event.Listener):
            def on_start(self, ev):
                _announce(ev)

            def on_end(self, ev):
                pass

        event.register("numba:compile", _CompileListener())
        _installed = True


def read_only(a: np.ndarray) -> np.ndarray:
    """A read-only view of ``a`` (no copy), for an argument a compiled function only reads.

    numba compiles one specialization for writeable arrays and another for read-only
    ones (a memory map, a joblib worker's data, an array a caller froze); passing every
    input of this kind as a read-only view compiles one, whatever the caller holds.

    Parameters
    ----------
    a : ndarray

    Returns
    -------
    view : ndarray
        ``a``'s data, shape and strides, with ``flags.writeable`` False.
    """
    view = a.view()
    view.flags.writeable = False
    return view


#: the largest index an int32 index array holds
_INT32_MAX = np.iinfo(np.int32).max


def csr_arrays(X):
    """``(data, indices, indptr)`` of a CSR matrix for compiled code, in one
    specialization: float64 data, and int32 indices and pointers wherever they fit (as
    scipy builds them; ``load_svmlight_file`` gives int64), int64 only past 2³¹ − 1
    stored entries or columns.

    Parameters
    ----------
    X : scipy.sparse.csr_matrix or csr_array

    Returns
    -------
    data : ndarray of shape (nnz,), float64
    indices : ndarray of shape (nnz,), int32 (int64 past the limit)
    indptr : ndarray of shape (n_rows + 1,), the same dtype as ``indices``
    """
    itype = np.int32 if max(X.nnz, X.shape[1]) <= _INT32_MAX else np.int64
    return (np.ascontiguousarray(X.data, dtype=np.float64),
            np.ascontiguousarray(X.indices, dtype=itype),
            np.ascontiguousarray(X.indptr, dtype=itype))
