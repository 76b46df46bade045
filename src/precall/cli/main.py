"""The ``precall`` command line: the parser and the dispatch to one module per command.

Commands: ``evaluate`` (:mod:`.evaluate`, with ``--stream`` / ``--engine dask`` in
:mod:`.engines`), ``compare``, ``explain``, ``plot``, ``report``, ``detection`` and
``demo``, each in its own module with a ``register(sub)`` that adds its parser.
The commands read files only through :mod:`precall.readers`, compute through the
public API, and render through :mod:`._format`; they compute no metric themselves.

Exit codes: 0 success, 2 bad usage or bad input (one line on stderr, never a
traceback), 130 interrupted.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Sequence

import precall
from precall.readers import InputError

from . import compare, demo, detection, evaluate, explain, plot, report
from ._common import PROG, CliError


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


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit code (0 ok, 2 bad usage or input)."""
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
        return int(args.func(args))
    except (CliError, InputError) as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # the reader of our output went away (e.g. `precall demo | head`)
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
