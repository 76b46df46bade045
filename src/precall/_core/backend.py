"""Which kernel runs the one sort's pass: numpy (always there) or compiled (numba, the ``fast`` extra).

The choice is explicit and never changes a number: both kernels give the same
bits (``tests/test_compiled.py``).  It is set by :func:`set_kernel` or the
environment variable ``PRECALL_KERNEL`` read at import:

* ``"auto"`` (default): the compiled pass when numba is installed and the input has
  at least :data:`MIN_COMPILED` samples (below that, numba's import and the load of
  its cached machine code cost more than they save), and at every size once a call has
  loaded it in this process (those costs are paid; the compiled passes are then faster
  from 30 rows up); numpy otherwise;
* ``"numpy"``: numpy only;
* ``"numba"``: the compiled pass at every size (:class:`KernelUnavailable`, an
  ``ImportError`` naming the extra, when numba is missing), where one exists: unweighted
  input with a ``-0.0`` score, or with 64-bit integer scores, takes numpy's sort
  (the same numbers), and :func:`last_kernel` then says ``"numpy"``.

:func:`last_kernel` says which one ran last.
"""

from __future__ import annotations

import itertools
import os
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from types import ModuleType
from typing import Any

__all__ = ["KERNELS", "MIN_COMPILED", "MIN_BESIDE", "beside", "compiled", "on_first_compile", "share_out", "get_kernel",
           "last_kernel", "set_kernel"]

KERNELS = ("auto", "numpy", "numba")

MIN_COMPILED = 1_000_000
"""Samples from which ``"auto"`` loads and takes the compiled pass (``docs/internals.md``, "Latency": where it pays);
once loaded, ``"auto"`` takes it at every size."""


def _checked(name: object, source: str = "kernel") -> str:
    if not isinstance(name, str) or name not in KERNELS:
        raise ValueError(f"`{source}` must be one of 'auto', 'numpy', 'numba'; got {name!r}")
    return name


_ENV = os.environ.get("PRECALL_KERNEL", "auto").strip().lower() or "auto"
_state = {"kernel": _ENV, "last": "none"}
_module: list[ModuleType | None] = []  # the compiled module once imported ([None]: numba is missing)


def set_kernel(name: str) -> str:
    """Choose the kernel of the sort's pass; the numbers are the same with either.

    Parameters
    ----------
    name : {"auto", "numpy", "numba"}
        ``"auto"`` (the default, or the environment variable ``PRECALL_KERNEL``): the
        compiled pass (numba, ``pip install 'precall[fast]'``) for inputs of at least
        ``MIN_COMPILED`` samples when numba is installed, and for every input once it has
        been loaded in this process; else numpy; ``"numpy"``: numpy only; ``"numba"``: the
        compiled pass at every size where one exists (see the module's notes; ``ImportError``
        without numba).

    Returns
    -------
    str
        The previous choice.

    See Also
    --------
    last_kernel : which kernel ran last.

    Examples
    --------
    >>> import precall
    >>> previous = precall.set_kernel("numpy")
    >>> precall.average_precision([0, 1, 1, 0], [0.1, 0.8, 0.4, 0.3])
    1.0
    >>> precall.last_kernel()
    'numpy'
    >>> _ = precall.set_kernel(previous)
    """
    previous = _state["kernel"]
    _state["kernel"] = _checked(name)
    return previous


def get_kernel() -> str:
    """The current choice (``"auto"``, ``"numpy"`` or ``"numba"``)."""
    kernel = _state["kernel"]
    return _checked(kernel, "PRECALL_KERNEL" if kernel is _ENV else "kernel")


def last_kernel() -> str:
    """``"numpy"`` or ``"numba"``: the kernel of the most recent binary sort (``"none"`` before any).

    Set by the binary metrics and ``evaluate`` (the steps); the curves and tables are numpy.
    """
    return _state["last"]


class KernelUnavailable(ImportError):
    """The kernel asked for (``"numba"``) cannot be loaded: numba is missing or broken."""


def _load() -> ModuleType | None:
    if not _module:
        try:
            from . import compiled as module
        except ImportError:
            module = None
        else:
            module.on_compile(_first_compile)
        _module.append(module)
    return _module[0]


_notices: list[Callable[[], None]] = []  # on_first_compile's callbacks
_compiled_here: list[bool] = []  # [True] once numba has begun compiling a pass of ours in this process


def on_first_compile(callback: Callable[[], None]) -> None:
    """Have ``callback()`` called once, when numba begins to compile a pass of the compiled kernel
    in this process: the first use of the ``fast`` extra with this numba on this machine, which
    takes about 15-20 s for ``evaluate`` on a million rows (later processes load the machine
    code from numba's cache, in milliseconds).  The command line's notice on a terminal; the
    library itself prints nothing."""
    _notices.append(callback)


def _first_compile() -> None:
    """numba begins to compile a pass of ours (:func:`compiled.on_compile`'s callback)."""
    if not _compiled_here:
        _compiled_here.append(True)
        for callback in list(_notices):
            callback()


def compiled(n: int) -> ModuleType | None:
    """The compiled module when the current choice takes it for ``n`` samples, else None.

    ``"auto"`` takes it from :data:`MIN_COMPILED` samples, and at any size once it is loaded:
    the numbers of a call whose sort was compiled (fewer steps than rows) and every later call
    in the process then run compiled too."""
    choice = get_kernel()
    if choice == "numpy" or (choice == "auto" and n < MIN_COMPILED and not (_module and _module[0] is not None)):
        return None
    module = _load()
    if module is None and choice == "numba":
        raise KernelUnavailable(
            "`kernel='numba'` needs numba: pip install 'precall[fast]' (or set_kernel('auto') / PRECALL_KERNEL=auto "
            "to use numpy when it is missing)"
        )
    return module


def ran(name: str) -> None:
    """Record the kernel that ran (for :func:`last_kernel`)."""
    _state["last"] = name


MIN_BESIDE = 1 << 18
"""Rows from which :func:`beside` runs work in a second thread (below, a thread's hand-over costs
about what the work does)."""

_pool: dict[int, ThreadPoolExecutor] = {}  # by process id: a forked child makes its own (its parent's thread is not in it)
_pool_lock = threading.Lock()


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def _threads_allowed() -> bool:
    """``PRECALL_THREADS=1`` (read at each call) keeps every computation in the caller's thread."""
    return os.environ.get("PRECALL_THREADS", "").strip() != "1" and _cores() > 1


def in_two(rows: int) -> bool:
    """Whether :func:`beside` runs work of ``rows`` rows in a second thread (from
    :data:`MIN_BESIDE` rows, when the process may use more than one core and
    ``PRECALL_THREADS`` is not ``1``)."""
    return rows >= MIN_BESIDE and _threads_allowed()


def beside(rows: int, fn: Callable[..., Any], *args: Any) -> Future:
    """``fn(*args)`` in a second thread, as a :class:`~concurrent.futures.Future`, when the work
    is over :data:`MIN_BESIDE` rows, the process may use more than one core and
    ``PRECALL_THREADS`` is not ``1``; else run now, in this thread (the future is then done).

    For two independent parts of one computation on disjoint outputs (``by=``: the overall
    steps and numbers beside the slices'), whose compiled passes release the GIL: the result
    is the same whichever thread computes it, only the wall time changes."""
    if in_two(rows):
        pid = os.getpid()
        with _pool_lock:
            if pid not in _pool:
                _pool.clear()
                _pool[pid] = ThreadPoolExecutor(max_workers=1, thread_name_prefix="precall")
            pool = _pool[pid]
        return pool.submit(fn, *args)
    done: Future = Future()
    try:
        done.set_result(fn(*args))
    except Exception as exc:  # raised by .result(), as from the thread
        done.set_exception(exc)
    return done


def share_out(jobs: list[Any], run: Callable[[Any], None], work: Callable[[Any], int]) -> None:
    """``run(job)`` for every job, largest ``work`` first, by this thread and (from
    :data:`MIN_BESIDE` units of work in all, as :func:`beside` decides) the second one, each
    taking the next job as it is free, so that both finish together; the second thread starts
    after whatever was given to it before.  The jobs must write disjoint outputs."""
    sizes = [work(job) for job in jobs]
    ordered = [jobs[i] for i in sorted(range(len(jobs)), key=lambda i: -sizes[i])]
    taken = itertools.count()  # next() of a count is atomic under the GIL

    def drain() -> None:
        while (i := next(taken)) < len(ordered):
            run(ordered[i])

    other = beside(sum(sizes), drain) if len(ordered) > 1 else None
    drain()
    if other is not None:
        other.result()
