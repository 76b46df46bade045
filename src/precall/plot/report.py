"""A self-contained HTML report: summary table, PR and ROC figures, rank table.

One file with nothing to fetch: the figures are inline SVG (matplotlib, the
``plot`` extra), the style is inline CSS, and there is no script.  Every
string that comes from the user (file and column names, labels) is escaped.
The numbers come from the public API (:func:`precall.evaluate`,
:func:`precall.threshold_table`); this module only lays them out.
"""

from __future__ import annotations

import html
import io
from collections.abc import Mapping
from typing import Any

import numpy as np

from .. import _version
from .._core.conventions import CONVENTIONS
from .._core.validate import AP_METHODS
from ..table import ThresholdTable, threshold_table

__all__ = ["html_report"]

_STYLE = """
body { font-family: -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; margin: 2em auto;
       max-width: 70em; color: #222; line-height: 1.4; }
h1 { font-size: 1.5em; } h2 { font-size: 1.2em; margin-top: 1.6em; }
table { border-collapse: collapse; margin: 0.6em 0; font-size: 0.92em; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.6em; text-align: right; }
th:first-child, td:first-child { text-align: left; }
thead th { background: #f3f3f3; }
.figures { display: flex; flex-wrap: wrap; gap: 1em; }
.figures svg { max-width: 34em; height: auto; }
.note { color: #555; font-size: 0.9em; }
table.text td, table.text th { text-align: left; }
"""


def _e(value: Any) -> str:
    return html.escape(str(value), quote=True)


def _num(value: float, digits: int = 4) -> str:
    """A rate or metric: fixed decimals."""
    return "nan" if value is None or np.isnan(value) else f"{value:.{digits}f}"


def _count(value: float) -> str:
    """A count (or a weight sum): no decimals when whole."""
    return f"{value:.0f}" if float(value).is_integer() else f"{value:.6g}"


def _score(value: float) -> str:
    return f"{value:.6g}"


def _table(header: list[str], rows: list[list[str]], css: str = "") -> str:
    head = "".join(f"<th>{_e(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in rows)
    klass = f' class="{css}"' if css else ""
    return f"<table{klass}><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _svg(draw: Any) -> str:
    from matplotlib.figure import Figure

    fig = Figure(figsize=(5.6, 5.6))
    ax = fig.subplots()
    draw(ax)
    fig.tight_layout()
    buffer = io.StringIO()
    fig.savefig(buffer, format="svg")
    text = buffer.getvalue()
    return text[text.index("<svg"):]  # drop the XML prolog and DOCTYPE: inline SVG


def _rank_rows(table: ThresholdTable, n_rows: int) -> list[list[str]]:
    """``n_rows`` rows of the table, evenly spaced by rank (first and last included)."""
    idx = np.unique(np.linspace(0, len(table) - 1, min(n_rows, len(table))).round().astype(int))
    counts = (table.tp, table.fp, table.tn, table.fn)
    rates = (table.precision, table.recall, table.fpr)
    return [[str(i + 1), _score(float(table.thresholds[i])), *(_count(float(c[i])) for c in counts),
             *(_num(float(c[i])) for c in rates)] for i in idx]


def html_report(
    y_true: Any,
    y_score: Mapping[str, Any],
    *,
    sample_weight: Any = None,
    pos_label: Any = None,
    ties: str = "group",
    title: str = "precall report",
    source: str = "",
    label_column: str = "",
    rank_rows: int = 20,
    max_fpr: float | None = None,
) -> str:
    """The report of one or more models scored on the same labelled samples, as HTML text.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
    y_score : mapping of model name to array-like of shape (n_samples,)
    sample_weight, pos_label, ties
        As in :func:`precall.evaluate`.
    title, source, label_column : str
        Shown in the header (escaped).
    rank_rows : int, default=20
        Rows of each model's rank table, evenly spaced by rank.
    max_fpr : float, default=None
        Shade and quote the partial ROC-AUC up to this FPR.

    Returns
    -------
    str
        A complete HTML document.
    """
    from .. import plot

    names = list(y_score)
    # one sort per model: the table gives the numbers, the figures and the rank table
    tables = {
        name: threshold_table(y_true, y_score[name], sample_weight=sample_weight, pos_label=pos_label,
                                      ties=ties)
        for name in names
    }
    results = {name: tables[name].evaluate() for name in names}
    first = results[names[0]]
    header = ["model", *(f"AP {m}" for m in AP_METHODS), "ROC-AUC", "best F1", "at score >="]
    summary = []
    for name in names:
        r = results[name]
        f1 = r.best_f1
        summary.append([
            _e(name), *(_num(r.average_precision[m]) for m in AP_METHODS), _num(r.roc_auc),
            _num(f1.f1) if f1 else "-", _score(f1.threshold) if f1 else "-",
        ])
    conventions = _table(["convention", "what it is", "reference"], [
        [_e(m), _e(CONVENTIONS[m].summary), _e(CONVENTIONS[m].used_by)]
        for m in AP_METHODS
    ], css="text")
    series = list(tables.items())
    pr_svg = _svg(lambda ax: plot.pr_tables(series, envelope=len(names) == 1, ax=ax))
    roc_svg = _svg(lambda ax: plot.roc_tables(series, max_fpr=max_fpr, ax=ax))
    rank_header = ["rank", "score >=", "TP", "FP", "TN", "FN", "precision", "recall", "FPR"]
    ranks = "".join(
        f"<h3>{_e(name)}</h3>" + _table(rank_header, _rank_rows(tables[name], rank_rows)) for name in names
    )
    weight_word = "weight" if sample_weight is not None else "count"
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{_e(title)}</title><style>{_STYLE}</style></head><body>",
        f"<h1>{_e(title)}</h1>",
        f'<p class="note">data {_e(source)}; labels {_e(label_column)}, positive '
        f"{_e(pos_label if pos_label is not None else 1)}; positive {weight_word} {_count(first.n_pos)}, "
        f"negative {weight_word} {_count(first.n_neg)}, prevalence {_num(first.prevalence)}; ties "
        f"{_e(ties)}; precall {_e(_version.__version__)}</p>",
        "<h2>Summary</h2>",
        _table(header, summary),
        '<p class="note">The same ranking gets a different average precision from each convention:</p>',
        conventions,
        "<h2>Curves</h2>",
        f'<div class="figures">{pr_svg}{roc_svg}</div>',
        f"<h2>Rank tables ({rank_rows} thresholds, evenly spaced by rank)</h2>",
        ranks,
        "</body></html>",
    ]
    return "\n".join(parts)
