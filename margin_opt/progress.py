"""Progress bars (tqdm) for long loops, shown only when a person is watching.

A bar is drawn on stderr when stderr is a terminal; in a pipe, a log file, a test
run or a notebook cell capturing stderr the loop runs silently, so the output of
``margin-opt bench`` and of scripts stays machine-readable.
"""

from __future__ import annotations

import sys

__all__ = ["progress"]


def progress(iterable, total=None, desc=None, enabled=None):
    """Wrap ``iterable`` in a tqdm progress bar when stderr is a terminal.

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
        ``sys.stderr.isatty()``.

    Returns
    -------
    iterable
        A ``tqdm.tqdm`` over ``iterable`` writing to stderr, or ``iterable`` itself
        when the bar is off (or tqdm is not installed).
    """
    if enabled is None:
        isatty = getattr(sys.stderr, "isatty", None)
        enabled = bool(isatty and isatty())
    if not enabled:
        return iterable
    try:
        from tqdm import tqdm
    except ImportError:  # a dependency, but never worth failing a computation over
        return iterable
    return tqdm(iterable, total=total, desc=desc, file=sys.stderr, leave=False)
