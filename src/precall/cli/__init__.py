"""The ``precall`` command line: one module per command (see :mod:`precall.cli.main`)."""

from .main import main

__all__ = ["main"]
