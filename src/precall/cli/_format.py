"""Text, markdown, CSV and JSON rendering of result tables (internal; computes nothing)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

import precall


def _description(method: str) -> str:
    convention = precall.CONVENTIONS.get(method)
    return getattr(convention, "summary", "") if convention is not None else ""


def _fmt(value: float, digits: int) -> str:
    return "nan" if value is None or math.isnan(value) else f"{value:.{digits}f}"


def _fmt_interval(ci: Any, digits: int) -> str:
    return f"[{_fmt(ci.low, digits)}, {_fmt(ci.high, digits)}]"


def _interval_dict(ci: Any) -> dict[str, Any]:
    out = {"low": ci.low, "high": ci.high, "method": ci.method, "standard_error": ci.standard_error}
    if isinstance(ci, precall.stats.BootstrapResult):
        out["n_degenerate"] = ci.n_degenerate
    return out


def _fmt_count(value: float) -> str:
    return f"{value:.0f}" if float(value).is_integer() else f"{value:.6g}"



def _fmt_cell(value: Any, digits: int) -> str:
    if isinstance(value, float):
        return _fmt(value, digits) if not float(value).is_integer() or abs(value) < 1 else _fmt_count(value)
    return str(value)


def _json_safe(value: Any) -> Any:
    if isinstance(value, float):
        return None if not math.isfinite(value) else value
    if isinstance(value, dict):
        return {k: _json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_safe(v) for v in value]
    if isinstance(value, np.generic):
        return _json_safe(value.item())
    return value



def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    """Aligned lines: the first column left-aligned, the others right-aligned."""
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]

    def line(cells: list[str]) -> str:
        first = cells[0].ljust(widths[0])
        rest = [c.rjust(wd) for c, wd in zip(cells[1:], widths[1:])]
        return "  ".join([first, *rest]).rstrip()

    return [line(header), *(line(r) for r in rows)]
