"""A self-contained HTML report: summary table, PR and ROC figures, rank table.

One file with nothing to fetch: the figures are inline SVG (matplotlib, the
``plot`` extra), the style is inline CSS, and there is no script.  Every
string that comes from the user (file and column names, labels, the title) is
escaped, its C0 controls and bidirectional overrides shown visibly
(:func:`precall.plot.visible`), and drawn without mathtext.  The curves
are thinned to what the pixels show (:func:`precall.plot.thin`), so the file
stays small whatever the number of rows; every number is from the full data.
The numbers come from the public API (:func:`precall.evaluate`,
:func:`precall.threshold_table`); this module only lays them out.
"""

from __future__ import annotations

import html
import io
from collections.abc import Mapping
from typing import Any

import numpy as np

from .. import _version, stats
from .._core.conventions import CONVENTIONS
from .._core.validate import AP_METHODS
from ..table import ThresholdTable, threshold_table
from . import visible

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
.figures svg { width: 100%; max-width: 40em; height: auto; }
.figures figure { margin: 0; flex: 1 1 30em; }
.note { color: #555; font-size: 0.9em; }
table.text td, table.text th { text-align: left; }
"""


def _e(value: Any) -> str:
    """A user string as HTML text: escaped, controls and bidi overrides shown visibly."""
    return html.escape(visible(value), quote=True)


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

    # drawn at 5 in and shown about 7 in wide: legend text of 9 pt reads as 12 px or more
    fig = Figure(figsize=(5.0, 5.0))
    ax = fig.subplots()
    draw(ax)
    for text in ax.get_legend().get_texts() if ax.get_legend() else ():
        text.set_fontsize(9)
    buffer = io.StringIO()
    fig.savefig(buffer, format="svg", bbox_inches="tight")
    text = buffer.getvalue()
    return text[text.index("<svg"):]  # drop the XML prolog and DOCTYPE: inline SVG


def _rank_rows(table: ThresholdTable, n_rows: int) -> list[list[str]]:
    """The first row at or past each of ``n_rows`` recalls evenly spaced in (0, 1] (the
    high-precision region gets its rows; a row reached twice is shown once), and the last row."""
    recall = table.recall
    targets = np.linspace(0, 1, n_rows + 1)[1:]
    idx = np.searchsorted(recall, targets * recall[-1] - 1e-12, side="left") if recall[-1] > 0 else np.array([])
    idx = np.unique(np.r_[np.clip(idx, 0, len(table) - 1).astype(int), len(table) - 1])
    counts = (table.tp, table.fp, table.tn, table.fn)
    rates = (table.precision, table.recall, table.fpr)
    return [[str(i + 1), _score(float(table.thresholds[i])), *(_count(float(c[i])) for c in counts),
             *(_num(float(c[i])) for c in rates)] for i in idx]


def _pairs(names: list[str], y_true: Any, y_score: Mapping[str, Any], pos_label: Any,
           weighted: bool) -> str:
    """DeLong's paired test of each pair of models (pROC's ``roc.test``), as a table."""
    if len(names) < 2:
        return ""
    if weighted:
        return ('<h2>Paired comparison</h2><p class="note">DeLong\'s paired test takes no weights; '
                "use <code>precall compare</code> for a paired bootstrap of weighted data.</p>")
    rows = []
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            t = stats.roc_auc_test(y_true, y_score[a], y_score[b], pos_label=pos_label)
            rows.append([_e(a), _e(b), _num(t.estimate_a), _num(t.estimate_b), _num(t.difference),
                         f"[{_num(t.low)}, {_num(t.high)}]", f"{t.statistic:.3f}",
                         f"{t.p_value:.4g}" if t.p_value > 0 else "&lt; 1e-300"])
    return ("<h2>Paired comparison (DeLong)</h2>"
            + _table(["model A", "model B", "AUC A", "AUC B", "A - B", "95% CI of A - B", "z", "p"], rows)
            + '<p class="note">DeLong, DeLong &amp; Clarke-Pearson (1988), as pROC\'s '
            "<code>roc.test(method=\"delong\")</code>: the two AUCs are correlated (the same samples), "
            "and the test accounts for it.</p>")


def _thin_note(band_note: str) -> str:
    from .. import plot

    return ('<p class="note">Circles: the best-F1 threshold of each model. Curves are drawn thinned to at most '
            f"{plot.THIN_BUDGET} vertices each (every point of the full curve within "
            f"{plot.THIN_CELL * 2 ** 0.5:.1g} of the drawn one, or within one cell of a coarser grid when a curve "
            f"needs more vertices); every number is from the full data.{band_note}</p>")


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
    ci: bool = False,
    n_resamples: int = 200,
) -> str:
    """The report of one or more models scored on the same labelled samples, as HTML text.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
    y_score : mapping of model name to array-like of shape (n_samples,)
    sample_weight, pos_label, ties
        As in :func:`precall.evaluate`.
    title, source, label_column : str
        Shown in the header (escaped, controls shown visibly).
    rank_rows : int, default=20
        Rows of each model's rank table: the first threshold reaching each of
        ``rank_rows`` recalls evenly spaced up to the highest.
    max_fpr : float, default=None
        Shade and quote the partial ROC-AUC (McClish) up to this FPR, in the
        figure and the summary table.
    ci : bool, default=False
        Also the bootstrap interval of each AP (``n_resamples`` percentile
        resamples; :func:`precall.stats.bootstrap_ci`) and the bands of both
        figures.  DeLong's AUC interval is always given (unweighted input).
    n_resamples : int, default=200

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
    series = plot._Series(tables.items())
    series.pos_label = pos_label if pos_label is not None else 1
    series.data = (y_true, {n: y_score[n] for n in names}, sample_weight)
    weighted = sample_weight is not None
    auc_ci = plot.intervals(series, "roc", n_resamples=n_resamples) if (ci or not weighted) else {}
    ap_ci = plot.intervals(series, "pr", ties=ties, n_resamples=n_resamples) if ci else {}
    header = ["model", *(f"AP {m}" for m in AP_METHODS), "ROC-AUC"]
    if auc_ci:
        header.append("95% CI (DeLong)" if not weighted else "95% CI (bootstrap)")
    if max_fpr is not None and max_fpr < 1:
        header.append(f"pAUC FPR <= {max_fpr:g}")
    header += ["best F1", "at score >="]
    summary = []
    for name in names:
        r = results[name]
        f1 = r.best_f1
        row = [_e(name), *(_num(r.average_precision[m]) for m in AP_METHODS), _num(r.roc_auc)]
        if auc_ci:
            low, high = auc_ci[name]
            row.append(f"[{_num(low)}, {_num(high)}]")
        if max_fpr is not None and max_fpr < 1:
            row.append(_num(tables[name].roc_auc(max_fpr=max_fpr, on_undefined="nan")))
        row += [_num(f1.f1) if f1 else "-", _score(f1.threshold) if f1 else "-"]
        summary.append(row)
    ap_table = ""
    if ap_ci:
        ap_table = ("<h3>Average precision (step), 95% bootstrap interval</h3>" + _table(
            ["model", "AP step", "95% CI"],
            [[_e(n), _num(results[n].average_precision["step"]),
              f"[{_num(ap_ci[n][0])}, {_num(ap_ci[n][1])}]"] for n in names])
            + f'<p class="note">Percentile bootstrap, {n_resamples} stratified resamples '
            "(<code>precall.stats.bootstrap_ci</code>).</p>")
    conventions = _table(["convention", "what it is", "reference"], [
        [_e(m), _e(CONVENTIONS[m].summary), _e(CONVENTIONS[m].used_by)]
        for m in AP_METHODS
    ], css="text")
    one = len(names) == 1
    pr_svg = _svg(lambda ax: plot.pr_tables(series, envelope=one, ax=ax, pos_label=series.pos_label,
                                            intervals=ap_ci, band=ci, best_f1=True))
    roc_svg = _svg(lambda ax: plot.roc_tables(series, max_fpr=max_fpr, ax=ax, pos_label=series.pos_label,
                                              intervals=auc_ci, band=ci, best_f1=True))
    rank_header = ["rank", "score >=", "TP", "FP", "TN", "FN", "precision", "recall", "FPR"]
    ranks = "".join(
        f"<h3>{_e(name)}</h3>" + _table(rank_header, _rank_rows(tables[name], rank_rows)) for name in names
    )
    weight_word = "weight" if weighted else "count"
    band_note = (f" Shaded bands: pointwise 95% bootstrap bands ({plot.CI_RESAMPLES} stratified resamples "
                 "drawn as counts over blocks of thresholds; pROC's <code>ci.se</code>)." if ci else "")
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{_e(title)}</title><style>{_STYLE}</style></head><body>",
        f"<h1>{_e(title)}</h1>",
        (f'<p class="note">data {_e(source)}; labels {_e(label_column)}, positive '
         f"{_e(pos_label if pos_label is not None else 1)}; positive {weight_word} {_count(first.n_pos)}, "
         f"negative {weight_word} {_count(first.n_neg)}, prevalence {_num(first.prevalence)}; ties "
         f"{_e(ties)}; precall {_e(_version.__version__)}</p>"),
        "<h2>Summary</h2>",
        _table(header, summary),
        ap_table,
        _pairs(names, y_true, y_score, pos_label, weighted),
        '<p class="note">The same ranking gets a different average precision from each convention:</p>',
        conventions,
        "<h2>Curves</h2>",
        f'<div class="figures"><figure>{pr_svg}</figure><figure>{roc_svg}</figure></div>',
        _thin_note(band_note),
        f"<h2>Rank tables (the first threshold reaching each of {rank_rows} recalls)</h2>",
        ranks,
        "</body></html>",
    ]
    return "\n".join(parts)
