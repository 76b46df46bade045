"""Optional compiled passes (numba, the ``fast`` extra), each with its numpy twin.

A compiled pass is a plain Python function over numpy arrays written for numba;
:func:`compiled` returns it compiled (``numba.njit(cache=True)``) when numba is
installed and the mode allows it, else ``None``, and the caller then runs the
numpy route, which stays the reference and the test oracle: both give the same
integers, so the choice never changes a number.

The mode is explicit: ``PRECALL_COMPILED`` = ``auto`` (default: numba when it is
installed and the work has at least :data:`AUTO_MIN_SIZE` elements, or
:data:`LOADED_MIN_SIZE` once numba is imported), ``numba``
(always; an ``ImportError`` naming the extra when it is missing) or ``numpy``
(never); :func:`set_mode` changes it at run time and :func:`mode` / :func:`active`
say which one is in force.  Why a size: importing numba and loading the compiled
passes from its disk cache costs about a second once per process (the first
compilation after an install about 5 s), which a pass only wins back on millions
of rows.
"""

from __future__ import annotations

import functools
import os
import sys
import types
from typing import Any, Callable, Literal

__all__ = ["active", "compiled", "compiled_with", "mode", "set_mode"]

Mode = Literal["auto", "numba", "numpy"]
_MODES = ("auto", "numba", "numpy")
AUTO_MIN_SIZE = 4_000_000  # "auto" compiles work of at least this many elements,
LOADED_MIN_SIZE = 1 << 14  # or of this many once numba is imported in the process
_mode: list[str] = [os.environ.get("PRECALL_COMPILED", "auto").strip().lower() or "auto"]


def _check(value: Any) -> str:
    if value not in _MODES:
        raise ValueError(f"`PRECALL_COMPILED` / set_mode must be one of {', '.join(map(repr, _MODES))}; got "
                         f"{value!r}")
    return value


def mode() -> str:
    """The mode in force: ``"auto"``, ``"numba"`` or ``"numpy"``."""
    return _check(_mode[0])


def set_mode(value: Mode) -> str:
    """Set the mode (``"auto"``, ``"numba"`` or ``"numpy"``); returns the previous one."""
    previous = mode()
    _mode[0] = _check(value)
    return previous


@functools.cache
def _numba() -> Any:
    try:
        import numba
    except ImportError:
        return None
    return numba


def active(size: int | None = None) -> str:
    """``"numba"`` when compiled passes run (on work of ``size`` elements), else ``"numpy"``."""
    m = mode()
    if m == "auto" and size is not None and size < AUTO_MIN_SIZE:  # small work pays only once numba is here
        loaded = "numba" in sys.modules and _numba() is not None
        m = "numba" if loaded and size >= LOADED_MIN_SIZE else "numpy"
    if m == "numpy":
        return "numpy"
    if _numba() is None:
        if m == "numba":
            raise ImportError("PRECALL_COMPILED=numba needs numba: pip install 'precall[fast]'")
        return "numpy"
    return "numba"


@functools.cache
def _compile(fn: Callable[..., Any]) -> Callable[..., Any]:
    return _numba().njit(cache=True, nogil=True)(fn)


def compiled(fn: Callable[..., Any], size: int) -> Callable[..., Any] | None:
    """``fn`` compiled by numba (once, cached on disk) for work of ``size`` elements, or ``None``
    when compiled passes are off for it (the caller then takes its numpy route)."""
    return _compile(fn) if active(size) == "numba" else None


@functools.cache
def _compile_with(fn: Callable[..., Any], helpers: tuple[tuple[str, Callable[..., Any]], ...]) -> Callable[..., Any]:
    scope = dict(fn.__globals__)
    scope.update((name, _compile(helper)) for name, helper in helpers)
    linked = types.FunctionType(fn.__code__, scope, fn.__name__, fn.__defaults__, fn.__closure__)
    linked.__qualname__, linked.__module__ = fn.__qualname__, fn.__module__
    return _compile(linked)


def compiled_with(fn: Callable[..., Any], size: int, **helpers: Callable[..., Any]) -> Callable[..., Any] | None:
    """:func:`compiled` for a pass that calls other plain functions (``name=function``): each is
    compiled too and the pass sees the compiled ones under those names."""
    return _compile_with(fn, tuple(sorted(helpers.items()))) if active(size) == "numba" else None
