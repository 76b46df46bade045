"""A self-contained HTML report (public path of :mod:`precall.plot.report`; needs the ``plot`` extra)."""

from __future__ import annotations

from .plot.report import html_report

__all__ = ["html_report"]
