"""How the core compiles its few kernels: numba's ``njit``, cached on disk, releasing the GIL.

Used by :mod:`varimp_core.forests.multiway_kernel` and
:mod:`varimp_core.exact.binary_kernel`.  Without numba the functions stay plain Python
(correct, much slower) and ``HAVE_NUMBA`` is False.
"""

from __future__ import annotations

try:  # pragma: no cover - which branch runs depends on the environment
    import numba

    def jit(fn):
        """``fn`` compiled without the GIL, cached on disk where the folder is writable."""
        try:
            return numba.njit(cache=True, nogil=True)(fn)
        except Exception:   # no writable cache directory for this file: compile each process
            return numba.njit(cache=False, nogil=True)(fn)

    HAVE_NUMBA = True
except ImportError:  # pragma: no cover
    def jit(fn):
        return fn

    HAVE_NUMBA = False

__all__ = ["HAVE_NUMBA", "jit"]
