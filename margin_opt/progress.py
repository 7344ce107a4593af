"""Progress bars (``tqdm.auto``) for long loops, shown only when a person is watching.

A bar is drawn when stderr is a terminal, and in a Jupyter notebook (a widget where
ipywidgets is installed, else text: ``tqdm.auto`` picks); in a pipe, a log file or a
test run the loop runs silently, so the output of ``margin-opt bench`` and of
scripts stays machine-readable.
"""

from __future__ import annotations

import sys

__all__ = ["progress", "in_notebook"]


def in_notebook() -> bool:
    """True inside a Jupyter kernel (IPython's ``ZMQInteractiveShell`` or any shell
    configured by ``IPKernelApp``); False in a terminal IPython or plain Python."""
    ipython = sys.modules.get("IPython")
    if ipython is None:
        return False
    try:
        shell = ipython.get_ipython()
    except Exception:  # an IPython without a running shell
        return False
    if shell is None:
        return False
    config = getattr(shell, "config", None) or {}
    return (type(shell).__name__ == "ZMQInteractiveShell"
            or "IPKernelApp" in config)


def progress(iterable, total=None, desc=None, enabled=None):
    """Wrap ``iterable`` in a ``tqdm.auto`` progress bar when a person is watching.

    Parameters
    ----------
    iterable : iterable
        The loop to watch.
    total : int, optional
        Number of items (default: ``len(iterable)`` where it has one).
    desc : str, optional
        Label shown before the bar.
    enabled : bool, optional
        Force the bar on (True) or off (False).  Default: on exactly when
        ``sys.stderr.isatty()`` or :func:`in_notebook`.

    Returns
    -------
    iterable
        A ``tqdm.auto.tqdm`` over ``iterable`` (a notebook widget in Jupyter, else
        text on stderr), or ``iterable`` itself when the bar is off (or tqdm is not
        installed).
    """
    if enabled is None:
        isatty = getattr(sys.stderr, "isatty", None)
        enabled = bool(isatty and isatty()) or in_notebook()
    if not enabled:
        return iterable
    try:
        import warnings

        with warnings.catch_warnings():  # "IProgress not found": tqdm falls back to text
            warnings.simplefilter("ignore")
            from tqdm.auto import tqdm
    except ImportError:  # a dependency, but never worth failing a computation over
        return iterable
    return tqdm(iterable, total=total, desc=desc, file=sys.stderr, leave=False)
