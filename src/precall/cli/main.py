"""The ``precall`` command line: the parser and the dispatch to one module per command.

Commands: ``evaluate`` (:mod:`.evaluate`, with ``--stream`` / ``--engine dask`` in
:mod:`._engines`), ``compare``, ``explain``, ``plot``, ``report``, ``detection`` and
``demo``, each in its own module with a ``register(sub)`` that adds its parser.
The commands read files only through :mod:`precall.readers`, compute through the
public API, and render through :mod:`._format`; they compute no metric themselves.

Exit codes: 0 success, 2 bad usage or bad input (one line on stderr, never a
traceback), 130 interrupted.
"""

from __future__ import annotations

import argparse
import io
import os
import sys
from typing import Any, Sequence

import precall
from precall._core.backend import KernelUnavailable, on_first_compile
from precall._core.text import needs_showing, visible
from precall.readers import InputError

from . import compare, demo, detection, evaluate, explain, plot, report
from ._common import PROG, CliError, cli_spelling


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Precision-recall and ROC evaluation: every average-precision "
        "convention by name, from one sort.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {precall.__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    for module in (evaluate, compare, explain, detection, report, plot, demo):
        module.register(sub)
    return parser


def _tolerant_streams() -> None:
    """Characters the terminal's encoding cannot show (a label "café" on an ASCII
    terminal) are printed as backslash escapes instead of stopping with a traceback."""
    for stream in (sys.stdout, sys.stderr):
        if isinstance(stream, io.TextIOWrapper) and stream.errors == "strict":
            try:
                stream.reconfigure(errors="backslashreplace")
            except (ValueError, OSError):  # pragma: no cover - a stream that cannot be changed
                pass


class _Shown:
    """A text stream whose writes show control, bidi and format characters visibly
    (:func:`precall._core.text.visible`), but for the newlines and tabs precall writes
    itself and a progress line's leading carriage return: whatever a command prints,
    including argparse's usage errors that quote a bad argument, and whatever name
    reaches a line by a path that forgot to escape it, nothing acts on the terminal."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        if not needs_showing(text):  # one scan of the whole text (a large --json): nothing to replace
            self._stream.write(text)
            return len(text)
        lead = "\r" if text.startswith("\r") else ""
        lines = text[len(lead):].split("\n")
        self._stream.write(lead + "\n".join("\t".join(visible(p) for p in line.split("\t")) for line in lines))
        return len(text)

    def data_stream(self) -> Any:
        """Where machine-readable output (CSV: the values as they are, quoted by the csv module, as the
        library's ``to_csv`` writes them) goes: the stream itself when it is a file or a pipe, so that
        no value is rewritten (two slices ``a\\nb`` and ``a\u240ab`` stay two), this one on a terminal,
        where nothing acts on it (:func:`._format.data_stream`)."""
        try:
            terminal = bool(self._stream.isatty())
        except (ValueError, OSError, AttributeError):  # pragma: no cover - a closed or odd stream
            terminal = False
        return self if terminal else self._stream

    def __getattr__(self, name: str) -> Any:  # flush, isatty, fileno, encoding, buffer, ...
        return getattr(self._stream, name)


def _silence_stdout() -> None:
    """Point stdout at the null device, so the interpreter's last flush cannot fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):  # pragma: no cover - stdout without a descriptor
        pass


COMPILE_NOTICE = f"{PROG}: numba compiles the fast kernels on this first run (about 20 s, once)"


def _compile_notice() -> None:
    """On a terminal, say why the first run with the ``fast`` extra is slow (numba compiles for
    this machine, then keeps the machine code in its cache)."""
    if sys.stderr.isatty():
        print(COMPILE_NOTICE, file=sys.stderr, flush=True)


on_first_compile(_compile_notice)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit code (0 ok, 2 bad usage or input)."""
    _tolerant_streams()
    streams = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = _Shown(sys.stdout), _Shown(sys.stderr)
    try:
        return _main(argv)
    finally:
        sys.stdout, sys.stderr = streams


def _main(argv: Sequence[str] | None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help, --version, usage errors
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 2)
    if args.command is None:
        parser.print_usage(sys.stderr)
        print(f"{PROG}: error: a command is required (evaluate, compare, explain, plot, report, detection, demo)", file=sys.stderr)
        return 2
    try:
        code = int(args.func(args))
        sys.stdout.flush()  # a full disk shows here, not in the interpreter's exit
        return code
    except (CliError, InputError, KernelUnavailable) as exc:
        print(f"{PROG}: error: {visible(cli_spelling(str(exc)))}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # the reader of our output went away (e.g. `precall demo | head`)
        _silence_stdout()
        return 1
    except OSError as exc:  # e.g. stdout on a full disk (ENOSPC), an unreadable file
        if exc.filename is None:
            _silence_stdout()
            print(f"{PROG}: error: cannot write the output: {exc.strerror or exc}", file=sys.stderr)
        else:
            print(f"{PROG}: error: {visible(exc.filename)}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    except (OverflowError, ZeroDivisionError) as exc:  # arithmetic the data's scale defeats
        print(f"{PROG}: error: {args.command}: the numbers are out of range "
              f"({type(exc).__name__}: {exc}); rescale the weights or the option", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
