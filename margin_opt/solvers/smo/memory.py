"""Memory of SMO's kernel-row cache, kept for the next run in the same process.

The row cache (``cache_size`` MB, 200 by default) is one allocation, far above
glibc's largest ``mmap`` threshold (32 MB), so each run used to get fresh pages
from the operating system and paid a page fault for every page it touched, and
freed them all at its end.  On the 2-core development machine (a virtual machine,
transparent huge pages on ``madvise``, which numpy asks for) that was 0.05–0.7 s
of system time per fit of a9a.t, against SMO's own 0.3 s, most when another
library (LIBSVM, oneDAL) had run in between.  LIBSVM does not pay it: its
row-sized ``malloc`` blocks come from the C heap, which keeps what was freed.  This
module does the same for our one block: a run takes its cache's memory here and
gives it back when it ends, and the next run (a cross-validation fold, a point of
a C path, a grid search's next fit) reuses pages already touched.

What is kept (by a :class:`RowMemory`; runs use the process's :data:`POOL` unless
their options name another): buffers given back, the oldest dropped first, up to
``keep_mb`` in all (the default cache is 200 MB; one bigger than ``keep_mb``, or under 4 MB, is
freed on return).  Runs on several threads at once each take their own buffer; a
forked process keeps nothing of its parent's (and its copy of the memory is its
own).  A buffer's old contents are never read: the cache marks every slot empty
when it starts.  :func:`release` frees what is kept (e.g. before a memory-hungry
step); a pool with ``keep_mb = 0`` keeps nothing.
"""

from __future__ import annotations

import mmap
import os
import threading
import weakref

import numpy as np

__all__ = ["RowMemory", "POOL", "take", "give", "release", "kept_mb"]

_MB = 2 ** 20
#: smaller blocks are plain ``np.empty`` and not kept (faulting them in costs little)
_MIN_BYTES = 4 * _MB
_pools = weakref.WeakSet()     # every pool, emptied in a forked child


class RowMemory:
    """A pool of row-cache buffers kept between SMO runs.

    Parameters
    ----------
    keep_mb : float, default=512
        Most memory kept, MB (2**20 bytes); 0: nothing is kept.  May be changed on
        the pool; lowering it trims what is kept at the next :meth:`give`
        (:meth:`release` frees it at once).
    """

    def __init__(self, keep_mb=512):
        self.keep_mb = keep_mb
        self._lock = threading.Lock()
        self._free = []          # buffers not in use, oldest first
        _pools.add(self)

    def _forget(self):
        """In a forked child: keep nothing from the parent (its buffers are copies that
        no run of the child owns), and a fresh lock (the parent's may have been held by
        a thread that does not exist here)."""
        self._lock = threading.Lock()
        self._free = []

    def take(self, n, reserve=0):
        """A float64 buffer of at least ``n`` elements, kept or new.

        A kept buffer of at least ``n`` elements (the smallest such) is reused;
        otherwise a new one of ``max(n, reserve)`` elements is made.

        Parameters
        ----------
        n : int
            Elements needed.
        reserve : int, default=0
            Size to allocate when nothing kept fits, so that later runs with a
            slightly larger need (another data set under the same ``cache_size``)
            reuse it too.  Untouched pages of a buffer cost no memory.

        Returns
        -------
        buf : ndarray of shape (n,)
            Uninitialized; a view of the buffer, handed to :meth:`give` when the run
            ends.
        """
        n = int(n)
        with self._lock:
            fits = [k for k, b in enumerate(self._free) if b.size >= n]
            if fits:
                k = min(fits, key=lambda k: self._free[k].size)
                return self._free.pop(k)[:n]
        return _new(max(n, int(reserve)))[:n]

    def give(self, buf):
        """Hand back a buffer from :meth:`take`.

        Kept while the total stays within ``keep_mb``, the oldest dropped first; one
        below 4 MB, or above ``keep_mb`` alone, is left to be freed.

        Parameters
        ----------
        buf : ndarray
            The array :meth:`take` returned (or any view of it, or its base).  The
            caller must hold no other reference that it still reads or writes.
        """
        base = _root(buf)
        limit = self.keep_mb * _MB
        with self._lock:
            if _MIN_BYTES <= base.nbytes <= limit and not any(b is base for b in self._free):
                self._free.append(base)
            while self._free and sum(b.nbytes for b in self._free) > limit:
                self._free.pop(0)

    def release(self):
        """Free every buffer kept for the next run (their memory returns to the
        operating system: no run holds a kept buffer)."""
        with self._lock:
            self._free.clear()

    def kept_mb(self):
        """MB (2**20 bytes) of buffers kept, touched or not (a page never touched takes
        no memory).

        Returns
        -------
        mb : float
        """
        with self._lock:
            return sum(b.nbytes for b in self._free) / _MB


def _forget_after_fork():
    for pool in list(_pools):
        pool._forget()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_after_fork)


#: the process's pool, used by every run whose options name none
POOL = RowMemory()


def _new(n):
    """An uninitialized float64 array of ``n`` elements.

    From 4 MB on, in its own private anonymous memory map rather than ``np.empty``:
    numpy asks the kernel for 2 MB huge pages on large blocks, which this virtual
    machine backs slowly; in the system's default pages (4 KiB here) the first
    ``SVC()`` fit of a process took less time (docs/smo.md).  Private, so that a
    process forked from this one gets its own copy on write (a shared map would let
    the runs of two processes write one buffer).  The map is unmapped when the last
    array using it is freed.
    """
    if 8 * n < _MIN_BYTES:
        return np.empty(n)
    flags = getattr(mmap, "MAP_PRIVATE", None)
    m = mmap.mmap(-1, 8 * n) if flags is None else \
        mmap.mmap(-1, 8 * n, flags=flags | getattr(mmap, "MAP_ANONYMOUS", 0))
    return np.frombuffer(m, dtype=np.float64, count=n)


def _root(a):
    """The array that holds ``a``'s memory (``a`` itself, or the base of its views)."""
    while isinstance(a.base, np.ndarray):
        a = a.base
    return a


def take(n, reserve=0):
    """:meth:`RowMemory.take` of :data:`POOL`."""
    return POOL.take(n, reserve)


def give(buf):
    """:meth:`RowMemory.give` of :data:`POOL`."""
    POOL.give(buf)


def release():
    """Free every buffer kept for the next run (of :data:`POOL`).

    Their memory returns to the operating system (no run holds a kept buffer).
    Call it before a memory-hungry step after SMO fits.
    """
    POOL.release()


def kept_mb():
    """Memory kept for the next run (by :data:`POOL`).

    Returns
    -------
    mb : float
        MB (2**20 bytes) of buffers kept, touched or not (a page never touched
        takes no memory).
    """
    return POOL.kept_mb()
