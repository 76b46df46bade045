"""A self-contained HTML report: summary table, PR and ROC figures, rank table.

One file with nothing to fetch: the figures are inline SVG (matplotlib, the
``plot`` extra), the style is inline CSS, and the interactive curves are a small
hand-written script (``report.js``, inline) drawing SVG from the data embedded as
JSON (:func:`_interactive`): zoom and pan, a log-scale FPR, a readout of the
threshold table's row under the pointer, a threshold control moving one marker on
both curves with its confusion counts, show/hide per curve.  Without JavaScript,
and in print, the static pictures show instead.  Every
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
import json
import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from .. import _version, stats
from .._core.conventions import CONVENTIONS
from .._core.normal import p_text
from .._core.text import fixed, threshold_text, threshold_texts
from .._core.validate import AP_METHODS, check_allocation, check_number, check_on_undefined, check_probability
from ..metrics import evaluate
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
td:first-child, h3, summary { overflow-wrap: anywhere; }
thead th { background: #f3f3f3; }
.figures { display: flex; flex-wrap: wrap; gap: 1em; align-items: flex-start; }
.figures svg { width: 100%; max-width: 40em; height: auto; }
.figures figure { margin: 0; flex: 1 1 30em; }
.note { color: #555; font-size: 0.9em; }
table.text td, table.text th { text-align: left; }
table.classes td:nth-child(2), table.classes th:nth-child(2) { text-align: left; }
html.pc-js .static { display: none; }
#pc-app { position: relative; }
#pc-app svg { width: 100%; max-width: 40em; height: auto; font-size: 12px; user-select: none; touch-action: none; }
#pc-app .pc-label { font-size: 13px; }
.pc-tools button, #pc-legend button { font: inherit; margin: 0.1em; }
#pc-legend button[aria-pressed="false"] { opacity: 0.4; text-decoration: line-through; }
.pc-swatch { display: inline-block; width: 1.4em; height: 0.35em; margin-right: 0.4em; vertical-align: middle; }
.pc-tip { position: absolute; background: rgba(255, 255, 255, 0.95); border: 1px solid #888; padding: 0.3em 0.5em;
          font-size: 0.85em; pointer-events: none; white-space: pre; z-index: 2; }
.pc-controls input[type=range] { width: 24em; max-width: 60vw; vertical-align: middle; }
@media print { #pc-app { display: none !important; } html.pc-js .static { display: flex !important; }
               .figures svg { max-width: 48%; } details { display: block; } }
"""


def _e(value: Any) -> str:
    """A user string as HTML text: escaped, controls and bidi overrides shown visibly."""
    return html.escape(visible(value), quote=True)


def _num(value: float, digits: int = 4) -> str:
    """A rate or metric: fixed decimals (never ``-0.0000``)."""
    return fixed(value, digits)


def _count(value: float) -> str:
    """A count (or a weight sum): no decimals when whole."""
    return f"{value:.0f}" if float(value).is_integer() else f"{value:.6g}"


def _threshold(table: ThresholdTable, value: float) -> str:
    """A threshold of ``table`` with 6 significant digits, more where the next distinct
    threshold would print the same (:func:`precall._core.text.threshold_texts`)."""
    at = np.flatnonzero(table.thresholds == value)
    if not at.size:
        return threshold_text(value, None, 6)
    return threshold_texts(table.thresholds, 6, at[:1])[0]


def _table(header: list[str], rows: list[list[str]], css: str = "") -> str:
    head = "".join(f"<th>{_e(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in rows)
    klass = f' class="{css}"' if css else ""
    return f"<table{klass}><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _svgs(*draws: Any) -> list[str]:
    """One inline SVG per drawing function, all of one size: each drawn at 5 in on its own
    figure, then all saved with the union of their tight boxes, so the panels (PR, ROC)
    have equal widths, heights and type and their axes sit at the same place."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.transforms import Bbox

    figures = []
    for draw in draws:
        # drawn at 5 in and shown about 7 in wide: legend text of 9 pt reads as 12 px or more
        fig = Figure(figsize=(5.0, 5.0))
        FigureCanvasAgg(fig)
        ax = fig.subplots()
        draw(ax)
        for text in ax.get_legend().get_texts() if ax.get_legend() else ():
            text.set_fontsize(9)
        figures.append(fig)
    boxes = [fig.get_tightbbox(fig.canvas.get_renderer()) for fig in figures]
    box = Bbox.union(boxes).padded(0.1)
    out = []
    for fig in figures:
        buffer = io.StringIO()
        fig.savefig(buffer, format="svg", bbox_inches=box)
        text = buffer.getvalue()
        out.append(text[text.index("<svg"):])  # drop the XML prolog and DOCTYPE: inline SVG
    return out


def _rank_indices(table: ThresholdTable, n_rows: int) -> np.ndarray:
    """The first row at or past each of ``n_rows`` recalls evenly spaced in (0, 1] (the
    high-precision region gets its rows; a row reached twice is shown once), and the last row."""
    recall = table.recall
    targets = np.linspace(0, 1, n_rows + 1)[1:]
    idx = np.searchsorted(recall, targets * recall[-1] - 1e-12, side="left") if recall[-1] > 0 else np.array([])
    return np.unique(np.r_[np.clip(idx, 0, len(table) - 1).astype(int), len(table) - 1])


def _rank_rows(table: ThresholdTable, n_rows: int) -> list[list[str]]:
    """The rows of :func:`_rank_indices` as text."""
    idx = _rank_indices(table, n_rows)
    counts = (table.tp, table.fp, table.tn, table.fn)
    rates = (table.precision, table.recall, table.fpr)
    return [[str(i + 1), score, *(_count(float(c[i])) for c in counts), *(_num(float(c[i])) for c in rates)]
            for i, score in zip(idx, threshold_texts(table.thresholds, 6, idx))]


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
                         f"[{_num(t.low)}, {_num(t.high)}]", _num(t.statistic, 3),
                         f"{t.p_value:.4g}" if t.p_value > 0 else _e(p_text(t.p_value))])
    return ("<h2>Paired comparison (DeLong)</h2>"
            + _table(["model A", "model B", "AUC A", "AUC B", "A - B", "95% CI of A - B", "z", "p"], rows)
            + '<p class="note">DeLong, DeLong &amp; Clarke-Pearson (1988), as pROC\'s '
            "<code>roc.test(method=\"delong\")</code>: the two AUCs are correlated (the same samples), "
            "and the test accounts for it.</p>")


def _thin_note(band_note: str, circles: bool = True) -> str:
    from .. import plot

    return ('<p class="note">' + ("Circles: the best-F1 threshold of each model. " if circles else "")
            + "Curves are drawn thinned to at most "
            f"{plot.THIN_BUDGET} vertices each (every point of the full curve within "
            f"{plot.THIN_CELL * 2 ** 0.5:.1g} of the drawn one, or within one cell of a coarser grid when a curve "
            f"needs more vertices); every number is from the full data.{band_note}</p>")


def _conventions() -> str:
    return ('<p class="note">The same ranking gets a different average precision from each convention:</p>'
            + _table(["convention", "what it is", "reference"], [
                [_e(m), _e(CONVENTIONS[m].summary), _e(CONVENTIONS[m].used_by)] for m in AP_METHODS
            ], css="text"))


def _document(title: str, note: str, body: list[str]) -> str:
    """The HTML document: head with the inline style, the title, the data note, the body parts."""
    return "\n".join([
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{_e(title)}</title><style>{_STYLE}</style></head><body>",
        f"<h1>{_e(title)}</h1>",
        f'<p class="note">{note}</p>',
        *body,
        "</body></html>",
    ])


def _figures(pr_svg: str, roc_svg: str, interactive: str = "") -> str:
    """The curves: the interactive panels (:func:`_interactive`) and the static pictures,
    which show without JavaScript and in print."""
    return (f'<h2>Curves</h2>{interactive}<div class="figures static"><figure>{pr_svg}</figure>'
            f"<figure>{roc_svg}</figure></div>")


# ---------------------------------------------------------------------------
# the interactive curves: the data of each curve as JSON, drawn by report.js
INTERACTIVE_ROWS = 48_000
"""The rows of every curve together in the interactive data: each curve's PR and ROC
vertices are thinned (:func:`precall.plot.thin`) to a share of this, and the rank
table's rows, the best-F1 and Youden rows are always kept; every number shown is the
threshold table's row (exact counts), only the rows between are left out."""


def _curve_data(table: ThresholdTable, *, name: str, label: str, color: str, budget: int, keep: Any,
                band: bool = False, width: float | None = None, dash: str = "", band_rows: Any = None
                ) -> dict[str, Any]:
    """One curve for ``report.js``: the kept rows' TP, FP and threshold texts (those of the
    rank tables), P and N; the row the control starts at (the best F1); bands (``band``; of the
    weighted rows ``band_rows`` when given, :func:`precall.plot.pr_band`'s ``rows``).
    ``name`` is shown within :data:`precall.plot.NAME_WIDTH` characters (``label``, the legend's
    text, is given so); a shortened name's whole text is ``full`` (the legend entry's tooltip)."""
    from .. import plot

    rows = np.union1d(plot.thin(table.recall, table.precision, steps=True, budget=budget)[0],
                      plot.thin(table.fpr, table.recall, budget=budget)[0])
    start = None
    f1 = table.evaluate(on_undefined="nan").best_f1 if table.n_pos > 0 else None
    extra = list(keep)
    if f1 is not None and np.isfinite(f1.f1):
        start = int(np.flatnonzero(table.thresholds == f1.threshold)[-1])
        extra.append(start)
    if table.n_pos > 0 and table.n_neg > 0:
        youden = table.operating_point(best="youden").threshold
        extra.append(int(np.flatnonzero(table.thresholds == youden)[-1]))
    rows = np.union1d(rows, np.asarray(extra, dtype=int)).astype(int)
    out: dict[str, Any] = {
        "name": plot.short_name(name), "label": visible(label), "color": color, "P": float(table.n_pos),
        "N": float(table.n_neg), "tp": table.tp[rows].tolist(), "fp": table.fp[rows].tolist(),
        "t": threshold_texts(table.thresholds, 6, rows),
        "start": int(np.searchsorted(rows, start)) if start is not None else 0,
    }
    if out["name"] != visible(name):
        out["full"] = visible(name)
    if width is not None:
        out.update(width=width, dash=dash)
    if band and table.n_pos > 0 and table.n_neg > 0:
        out["band"] = {kind: _band_data(b) for kind, b in (
            ("pr", plot.pr_band(table, random_state=0, rows=band_rows)),
            ("roc", plot.roc_band(table, random_state=0, rows=band_rows)))}
    return out


def _finite(x: Any, y: Any) -> list[list[float]]:
    """The points of a drawn curve where both coordinates are numbers (JSON has no NaN)."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    ok = np.isfinite(x) & np.isfinite(y)
    return [x[ok].tolist(), y[ok].tolist()]


def _band_data(band: Any) -> dict[str, list[float]]:
    ok = np.isfinite(band.low) & np.isfinite(band.high)
    return {"x": band.x[ok].tolist(), "low": band.low[ok].tolist(), "high": band.high[ok].tolist()}


_APP = """<div id="pc-app" hidden>
<p class="pc-controls"><label>threshold of <select id="pc-series"></select></label>
<input type="range" id="pc-slider" min="0" max="0" step="1" value="0" aria-label="threshold row">
<label><input type="checkbox" id="pc-logfpr"> log-scale FPR</label></p>
<table id="pc-readout"><thead><tr><th>curve</th><th>score &gt;=</th><th>TP</th><th>FP</th><th>FN</th><th>TN</th>
<th>precision</th><th>recall</th><th>FPR</th><th>F1</th></tr></thead><tbody><tr><td data-k="name"></td>
<td data-k="threshold"></td><td data-k="tp"></td><td data-k="fp"></td><td data-k="fn"></td><td data-k="tn"></td>
<td data-k="precision"></td><td data-k="recall"></td><td data-k="fpr"></td><td data-k="f1"></td></tr></tbody></table>
<div class="figures"><figure><div class="pc-tools">PR <button type="button" data-chart="pr" data-zoom="in">+</button><button
type="button" data-chart="pr" data-zoom="out">&minus;</button><button type="button" data-chart="pr"
data-zoom="reset">reset</button></div><svg id="pc-pr" viewBox="0 0 440 440" role="img"
aria-label="precision-recall curves"></svg></figure><figure><div class="pc-tools">ROC <button type="button"
data-chart="roc" data-zoom="in">+</button><button type="button" data-chart="roc" data-zoom="out">&minus;</button><button
type="button" data-chart="roc" data-zoom="reset">reset</button></div><svg id="pc-roc" viewBox="0 0 440 440"
role="img" aria-label="ROC curves"></svg></figure></div>
<div id="pc-legend"></div>
<div id="pc-tip" class="pc-tip" hidden></div>
<p class="note">Interactive: the wheel or +/&minus; zoom, dragging pans, a double click resets; hover a curve
for the threshold table's row there; the slider moves the marker on both curves through the chosen curve's
thresholds (its confusion counts above); click a legend entry to show or hide its curve. The printed page shows
the static pictures.</p>
</div>"""


def _interactive(curves: list[dict[str, Any]], baseline: float | None) -> str:
    """The interactive panels: the markup, the data of ``curves`` (:func:`_curve_data`)
    as JSON and the script, all inline."""
    from importlib import resources

    script = resources.files(__package__).joinpath("report.js").read_text(encoding="utf-8")
    baseline = baseline if baseline is not None and np.isfinite(baseline) else None
    data = json.dumps({"series": curves, "baseline": baseline}, separators=(",", ":"), allow_nan=False)
    data = data.replace("<", "\\u003c")  # no "</script>" inside: JSON's own escape
    return (f'{_APP}<script type="application/json" id="pc-data">{data}</script>'
            f"<script>{script}</script>")


RANK_HEADER = ["rank", "score >=", "TP", "FP", "TN", "FN", "precision", "recall", "FPR"]


def html_report(
    y_true: Any,
    y_score: Any,
    *,
    sample_weight: Any = None,
    pos_label: Any = None,
    labels: Any = None,
    score_columns: Sequence[str] | None = None,
    ties: str = "group",
    title: str = "precall report",
    source: str = "",
    label_column: str = "",
    rank_rows: int = 20,
    max_fpr: float | None = None,
    ci: bool = False,
    n_resamples: int = stats.DEFAULT_RESAMPLES,
    progress: Any = None,
    by: Any = None,
    min_support: int = 0,
    slices_shown: int = 10,
    slice_values: Sequence[Sequence[str]] | None = None,
    on_undefined: Any = "warn",
) -> str:
    """The report of one or more models scored on the same labelled samples, or of one
    multi-class (multi-label) model, as HTML text.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,) or (n_samples, n_classes)
        Labels; a 0/1 indicator matrix for multi-label input.
    y_score : mapping of model name to array-like of shape (n_samples,), or array-like of shape (n_samples, n_classes)
        Models (binary), or one score column per class (multi-class or
        multi-label): then the report has a per-class table (support, every
        AP convention, ROC-AUC, best F1) with the macro, weighted and micro
        averages and the one-vs-one ROC-AUC (Hand & Till; multi-class), from
        :func:`precall.evaluate`, and figures with one curve per class, the
        micro-average and the macro-average curves
        (:func:`precall.plot.macro_pr_curve`, :func:`precall.plot.macro_roc_curve`)
        and one baseline.
    sample_weight, pos_label, labels, ties
        As in :func:`precall.evaluate` (``pos_label`` binary only, ``labels``
        multi-class only).
    score_columns : sequence of str, default=None
        Multi-class: the column each class's scores came from, shown beside
        the class.
    title, source, label_column : str
        Shown in the header (escaped, controls shown visibly).
    rank_rows : int, default=20
        Rows of each model's (class's) rank table: the first threshold reaching
        each of ``rank_rows`` recalls evenly spaced up to the highest.
    max_fpr : float, default=None
        Shade and quote the partial ROC-AUC (McClish) up to this FPR, in the
        figure and the summary table (of each class; the library has no
        multi-class average of it).
    ci : bool, default=False
        Also the bootstrap interval of each AP (``n_resamples`` percentile
        resamples; :func:`precall.stats.bootstrap_ci`) and the bands of both
        figures.  DeLong's AUC interval is always given (unweighted input).
        Multi-class: the intervals of the macro AP (step) and the macro ROC-AUC
        (no bands), skipped with a note above :data:`CI_MAX_CELLS` cells.
    n_resamples : int, default=2000
        :data:`precall.stats.DEFAULT_RESAMPLES`, as every command (seed :data:`precall.stats.DEFAULT_SEED`).
    progress : callable, default=None
        Multi-class ``ci``: called with the fraction of the bootstrap done.
    by, min_support
        One model: also its slices (as :func:`precall.evaluate`): the table of the
        ``slices_shown`` worst and best ranked slices with each one's intervals on its own
        rows (AP bootstrap, ROC-AUC DeLong), their forest plot
        (:func:`precall.plot.forest`) and the PR curves of the worst and best few.
    slices_shown : int, default=10
        With ``by``: the worst and best slices shown.
    slice_values : sequence of sequences of str, default=None
        With ``by`` given as codes (``precall._slicing.coded``, as the command line reads a
        file's columns): each column's values, which name the slices.
    on_undefined : "warn", "nan", "raise" or float, default="warn"
        The value of a metric the data leave undefined (the AP of a class without
        positives, the ROC-AUC of one class), in the tables and the figures' legends
        alike, as :func:`precall.evaluate` gives it: AP 0 (scikit-learn's) and ROC-AUC
        NaN with an :class:`~precall.UndefinedMetricWarning` (``"warn"``), NaN, a
        ValueError, or the number given; an undefined interval has NaN bounds (a
        ValueError under ``"raise"``), as ``precall evaluate --ci``'s.

    Returns
    -------
    str
        A complete HTML document.

    See Also
    --------
    precall.evaluate : the numbers of the summary tables.
    precall.plot.pr_curve, precall.plot.roc_curve : the figures.

    Examples
    --------
    >>> import numpy as np
    >>> from precall.report import html_report
    >>> text = html_report([0, 1, 2, 1], np.eye(3)[[0, 1, 2, 2]], labels=[0, 1, 2])
    >>> text.startswith("<!DOCTYPE html>") and "macro-average" in text
    True
    """
    rank_rows = check_number(rank_rows, "rank_rows", low=1, integer=True, hint="rows of each rank table")
    check_allocation(rank_rows, 1024, "rank_rows", hint="choose fewer rows (each is a row of HTML in the report)")
    max_fpr = None if max_fpr is None else check_probability(max_fpr, "max_fpr")
    on_undefined = check_on_undefined(on_undefined)
    if not isinstance(y_score, Mapping):
        return _multiclass_report(
            y_true, y_score, sample_weight=sample_weight, pos_label=pos_label, labels=labels,
            score_columns=score_columns, ties=ties, title=title, source=source, label_column=label_column,
            rank_rows=rank_rows, max_fpr=max_fpr, ci=ci, n_resamples=n_resamples, progress=progress,
            on_undefined=on_undefined)
    if labels is not None or score_columns is not None:
        raise ValueError("`labels` and `score_columns` go with multi-class scores (a 2-D array); "
                         "got a mapping of models")
    if by is not None and len(y_score) != 1:
        raise ValueError(f"`by` goes with one model; got {len(y_score)} models. Report the slices of each "
                         "model apart")
    slices_shown = check_number(slices_shown, "slices_shown", low=1, integer=True,
                                hint="how many worst and best slices the report shows")
    from .. import plot

    names = list(y_score)
    # one sort per model: the table gives the numbers, the figures and the rank table
    tables = {
        name: threshold_table(y_true, y_score[name], sample_weight=sample_weight, pos_label=pos_label,
                              ties=ties)
        for name in names
    }
    results = {name: tables[name].evaluate(on_undefined=on_undefined) for name in names}
    first = results[names[0]]
    series = plot._Series(tables.items())
    series.pos_label = pos_label if pos_label is not None else 1
    series.data = (y_true, {n: y_score[n] for n in names}, sample_weight)
    weighted = sample_weight is not None
    auc_ci = plot.intervals(series, "roc", n_resamples=n_resamples, on_undefined=on_undefined) \
        if (ci or not weighted) else {}
    ap_ci = plot.intervals(series, "pr", ties=ties, n_resamples=n_resamples, on_undefined=on_undefined) if ci else {}
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
            row.append(_num(tables[name].roc_auc(max_fpr=max_fpr, on_undefined=on_undefined)))
        row += [_num(f1.f1) if f1 else "-", _threshold(tables[name], f1.threshold) if f1 else "-"]
        summary.append(row)
    ap_table = ""
    if ap_ci:
        ap_table = ("<h3>Average precision (step), 95% bootstrap interval</h3>" + _table(
            ["model", "AP step", "95% CI"],
            [[_e(n), _num(results[n].average_precision["step"]),
              f"[{_num(ap_ci[n][0])}, {_num(ap_ci[n][1])}]"] for n in names])
            + f'<p class="note">Percentile bootstrap, {n_resamples} stratified resamples, seed {stats.DEFAULT_SEED} '
            "(<code>precall.stats.bootstrap_ci</code>, as <code>precall evaluate --ci</code>; without weights "
            "drawn as counts of tied-score runs, in score blocks when there are more than 32,768 of them).</p>")
    one = len(names) == 1
    pr_svg, roc_svg = _svgs(
        lambda ax: plot.pr_tables(series, envelope=one, ax=ax, pos_label=series.pos_label, intervals=ap_ci,
                                  band=ci, best_f1=True, on_undefined=on_undefined),
        lambda ax: plot.roc_tables(series, max_fpr=max_fpr, ax=ax, pos_label=series.pos_label, intervals=auc_ci,
                                   band=ci, best_f1=True, on_undefined=on_undefined))
    budget = max(500, INTERACTIVE_ROWS // (2 * len(names)))
    interactive = _interactive([
        _curve_data(tables[n], name=n, label=f"{plot.short_name(n)} (AP step {plot.value_text(results[n].average_precision['step'])}, "
                    f"AUC {plot.value_text(results[n].roc_auc)})", color=plot.PALETTE[i % len(plot.PALETTE)],
                    budget=budget, keep=_rank_indices(tables[n], rank_rows), band=ci,
                    band_rows=plot._band_rows(series, n) if ci else None)
        for i, n in enumerate(names)], baseline=first.prevalence)
    ranks = "".join(
        f"<h3>{_e(name)}</h3>" + _table(RANK_HEADER, _rank_rows(tables[name], rank_rows)) for name in names
    )
    weight_word = "weight" if weighted else "count"
    drawn = ("of the weighted rows (a drawn row counts its weight, as the intervals draw them), counted over "
             "blocks of thresholds" if weighted else "drawn as counts over blocks of thresholds")
    band_note = (f" Shaded bands: pointwise 95% bootstrap bands ({stats.bands.BAND_RESAMPLES} stratified resamples "
                 f"{drawn}, seed 0; pROC's <code>ci.se</code>)." if ci else "")
    note = (f"data {_e(source)}; labels {_e(label_column)}, positive "
            f"{_e(pos_label if pos_label is not None else 1)}; positive {weight_word} {_count(first.n_pos)}, "
            f"negative {weight_word} {_count(first.n_neg)}, prevalence {_num(first.prevalence)}; ties "
            f"{_e(ties)}; precall {_e(_version.__version__)}")
    return _document(title, note, [
        "<h2>Summary</h2>",
        _table(header, summary),
        ap_table,
        _pairs(names, y_true, y_score, pos_label, weighted),
        _conventions(),
        _figures(pr_svg, roc_svg, interactive),
        _thin_note(band_note),
        "" if by is None else _slices_section(
            y_true, y_score[names[0]], by, sample_weight=sample_weight, pos_label=pos_label, ties=ties,
            min_support=min_support, k=slices_shown, n_resamples=n_resamples, values=slice_values,
            on_undefined=on_undefined),
        f"<h2>Rank tables (the first threshold reaching each of {rank_rows} recalls)</h2>",
        ranks,
    ])


# ---------------------------------------------------------------------------
# multi-class (and multi-label) input
CI_MAX_CELLS = 10_000_000  # rows x classes: 2000 resamples of 1e6 rows x 10 classes take about a minute
"""Multi-class ``ci``: the bootstrap of the macro averages draws rows (each class column
counted over score blocks, :func:`precall.stats.bootstrap_cis`; about 20 ms of CPU per
resample at 1e6 rows x 10 classes with the ``fast`` extra), so it runs only up to this
many cells (rows x classes) and is skipped with a note above it."""

_AVERAGE_ROWS = (("macro", "macro"), ("weighted", "weighted"), ("micro", "micro"))


def _macro_intervals(y_true: Any, y_score: Any, *, sample_weight: Any, labels: Any, ties: str,
                     n_resamples: int, progress: Any, on_undefined: Any = "warn") -> dict[str, Any]:
    """The bootstrap intervals of the macro AP (step, ``"ap"``) and the macro one-vs-rest ROC-AUC
    (``"roc"``), as ``precall evaluate --class-columns --ci`` computes them
    (:func:`precall._slicing.class_intervals`: one set of row resamples for both, percentile, seed
    :data:`precall.stats.DEFAULT_SEED`); a macro average with an undefined class has NaN bounds with
    a warning naming the class (``"undefined"``: which and why, "" if none; under ``on_undefined="raise"`` a
    ValueError naming it); ``progress(fraction)``."""
    from .._slicing import class_intervals

    got = class_intervals(y_true, y_score, sample_weight, labels=labels, methods=["step"], ties=ties,
                          n_resamples=n_resamples, random_state=stats.DEFAULT_SEED, progress=progress,
                          on_undefined=on_undefined)
    return {"ap": got.average_precision["step"], "roc": got.roc_auc, "undefined": got.undefined}


def _class_curves(series: Any, result: Any, classes: list[str], rank_rows: int) -> list[dict[str, Any]]:
    """The interactive data of the classes' curves, the micro-average (black, dashed) and the
    macro-average (navy, dotted; drawn only: it has no thresholds)."""
    from .. import plot

    budget = max(500, INTERACTIVE_ROWS // (2 * (len(series) + 1)))
    curves = [
        _curve_data(table, name=f"class {c}", label=f"{plot.short_name(f'class {c}')} (AP step {plot.value_text(ev.average_precision['step'])}, "
                    f"AUC {plot.value_text(ev.roc_auc)})", color=plot.PALETTE[j % len(plot.PALETTE)], budget=budget,
                    keep=_rank_indices(table, rank_rows))
        for j, ((_, table), c, ev) in enumerate(zip(series, classes, result.per_class))]
    curves.append(_curve_data(series.micro, name="micro-average", color="#000000", budget=budget, keep=(),
                              label=f"micro-average (AP step {plot.value_text(result.average_precision['micro']['step'])}, "
                              f"AUC {plot.value_text(result.roc_auc['micro'])})", width=2.2, dash="6 2"))
    tables = [t for _, t in series]
    macro = {"pr": plot._drawn(*plot.macro_pr_curve(tables), "steps-post"),
             "roc": plot._drawn(*plot.macro_roc_curve(tables), "default")}
    curves.append({"name": "macro-average", "color": "#000080", "width": 2.2, "dash": "1 2",
                   "label": f"macro-average (AP step {plot.value_text(result.average_precision['macro']['step'])}, "
                   f"AUC {plot.value_text(result.roc_auc['macro'])})",
                   "curve": {k: _finite(x, y) for k, (x, y) in macro.items()}})
    return curves


def _undefined_classes_note(classes: list[str], result: Any, on_undefined: Any = "warn") -> str:
    """What the multi-class report shows as undefined, and why: the classes without positives
    (by ``on_undefined``: AP 0 and ROC-AUC NaN, as scikit-learn reports them; NaN; a number) or
    without negatives (ROC-AUC by the policy), the averages that include them, and the macro ROC
    curve when no class has both; "" when none is."""
    no_pos = [c for c, ev in zip(classes, result.per_class) if not ev.n_pos > 0]
    no_neg = [c for c, ev in zip(classes, result.per_class) if ev.n_pos > 0 and not ev.n_neg > 0]
    if not (no_pos or no_neg):
        return ""

    def named(names: list[str]) -> str:
        return ("class " if len(names) == 1 else "classes ") + _e(", ".join(names))

    if on_undefined == "warn":
        shown, auc = "shown as AP 0 and ROC-AUC nan, as scikit-learn reports them", "nan"
    elif on_undefined == "nan":
        shown, auc = "shown as nan", "nan"
    else:
        shown = auc = f"shown as {_num(on_undefined)}"
    parts = []
    if no_pos:
        parts.append(f"{named(no_pos)}: no positive sample, so AP and ROC-AUC are undefined ({shown}; the "
                     "averages include them)")
    if no_neg:
        parts.append(f"{named(no_neg)}: no negative sample, so ROC-AUC is undefined ({auc})")
    curve = ("" if len(no_pos) + len(no_neg) < len(classes) else
             " No class has both positives and negatives, so the macro-average ROC curve is undefined too (not drawn).")
    return f'<p class="note"><strong>Undefined:</strong> {"; ".join(parts)}.{curve}</p>'


def _multiclass_report(
    y_true: Any, y_score: Any, *, sample_weight: Any, pos_label: Any, labels: Any,
    score_columns: Sequence[str] | None, ties: str, title: str, source: str, label_column: str,
    rank_rows: int, max_fpr: float | None, ci: bool, n_resamples: int, progress: Any, on_undefined: Any = "warn",
) -> str:
    """:func:`html_report` of one score column per class: every number from
    :func:`precall.evaluate` (a :class:`precall.MultiEvaluation`), the curves from
    :func:`precall.per_class_tables` (via the plot module's series)."""
    from .. import plot

    if pos_label is not None:
        raise ValueError("`pos_label` is for binary input; with one score column per class each class "
                         "is in turn the positive one")
    if np.ndim(y_score) != 2:
        raise ValueError("`y_score` must be a mapping {model name: scores} or a 2-D array with one column "
                         f"per class; got an array of {np.ndim(y_score)} dimension(s)")
    result = evaluate(y_true, y_score, sample_weight=sample_weight, labels=labels, ties=ties,
                      on_undefined=on_undefined)
    series = plot._tables(y_true, y_score, sample_weight=sample_weight, pos_label=None, labels=labels,
                          ties=ties, label=None)
    classes = [str(c) for c in result.classes.tolist()]
    columns = list(score_columns) if score_columns is not None else None
    if columns is not None and len(columns) != len(classes):
        raise ValueError(f"`score_columns` must name one column per class ({len(classes)}); got {len(columns)}")
    if columns == classes:
        columns = None  # a column's name is its class: shown once
    weighted = sample_weight is not None
    n_rows, k = np.shape(y_score)
    partial = max_fpr is not None and max_fpr < 1
    intervals: dict[str, Any] = {}
    ci_note = ""
    if ci and n_rows * k > CI_MAX_CELLS:
        ci_note = (f'<p class="note"><strong>No intervals:</strong> the bootstrap of the macro averages counts '
                   f"every (row, class) cell of each resample; {n_rows} rows x {k} classes is more than {CI_MAX_CELLS:,} cells, "
                   "so it was skipped here. <code>precall evaluate --class-columns ... --ci</code> computes "
                   "them (it takes minutes at this size).</p>")
        warnings.warn(f"no intervals in the report: {n_rows} rows x {k} classes is more than {CI_MAX_CELLS:,} "
                      "cells; precall evaluate --class-columns ... --ci computes them", UserWarning, stacklevel=3)
    elif ci:
        intervals = _macro_intervals(y_true, y_score, sample_weight=sample_weight, labels=labels, ties=ties,
                                     n_resamples=n_resamples, progress=progress, on_undefined=on_undefined)
        undefined = intervals["undefined"]
        ci_note = (f'<p class="note">95% intervals of the macro averages: percentile bootstrap, {n_resamples} '
                   f"resamples of the rows (<code>precall.stats.bootstrap_ci</code>, seed {stats.DEFAULT_SEED}); also in the "
                   "macro-average curves' legends. No bands are drawn for classes."
                   + (f" <strong>Undefined:</strong> {_e(undefined)}." if undefined else "") + "</p>")

    header = ["class", *(["score column"] if columns else []), "support",
              *(f"AP {m}" for m in AP_METHODS), "ROC-AUC", *([f"pAUC FPR <= {max_fpr:g}"] if partial else []),
              "best F1", "at score >="]
    rows = []
    for j, (name, ev) in enumerate(zip(classes, result.per_class)):
        f1 = ev.best_f1
        rows.append([_e(name), *([_e(columns[j])] if columns else []), _count(float(result.support[j])),
                     *(_num(ev.average_precision[m]) for m in AP_METHODS), _num(ev.roc_auc),
                     *([_num(series[j][1].roc_auc(max_fpr=max_fpr, on_undefined=on_undefined))] if partial else []),
                     _num(f1.f1) if f1 else "-", _threshold(series[j][1], f1.threshold) if f1 else "-"])
    blank = [""] * (1 if columns else 0)
    tail = ["-"] * (int(partial) + 2)
    for average, shown in _AVERAGE_ROWS:
        support = _count(float(np.sum(result.support))) if average != "macro" else ""
        rows.append([f"<strong>{shown}</strong>", *blank, support,
                     *(_num(result.average_precision[average][m]) for m in AP_METHODS),
                     _num(result.roc_auc[average]), *tail])
    if intervals:
        ap, roc = intervals["ap"], intervals["roc"]
        rows.append(["<strong>macro 95% CI</strong>", *blank, "", f"[{_num(ap.low)}, {_num(ap.high)}]",
                     *(["-"] * (len(AP_METHODS) - 1)), f"[{_num(roc.low)}, {_num(roc.high)}]", *tail])
    if "ovo" in result.roc_auc:
        rows.append(["<strong>one-vs-one</strong>", *blank, "", *(["-"] * len(AP_METHODS)),
                     _num(result.roc_auc["ovo"]), *tail])
    weight_word = "weight" if weighted else "count"
    kind = "multi-label" if result.multilabel else "multi-class"
    table_note = (
        f'<p class="note">Each class against the rest. Support: the positive {weight_word} of each class. '
        "Macro: the plain mean of the classes' values; weighted: the mean weighted by support; micro: every "
        "(sample, class) pair one binary decision, pooled"
        + ("; one-vs-one: the mean AUC over pairs of classes, each pair's two AUCs averaged (Hand &amp; Till "
           "2001)" if "ovo" in result.roc_auc else "")
        + (f". The partial AUC (McClish) is per class: the library gives no {kind} average of it"
           if partial else "") + ".</p>")
    undefined_note = _undefined_classes_note(classes, result, on_undefined)
    # the legends quote the intervals that are defined
    legend_ci = {plot.MACRO: (intervals["ap"].low, intervals["ap"].high)} \
        if intervals and np.isfinite(intervals["ap"].low) else None
    roc_ci = {plot.MACRO: (intervals["roc"].low, intervals["roc"].high)} \
        if intervals and np.isfinite(intervals["roc"].low) else None
    pr_svg, roc_svg = _svgs(
        lambda ax: plot.pr_tables(series, per_class=True, micro=series.micro, macro=True, ax=ax, intervals=legend_ci,
                                  on_undefined=on_undefined),
        lambda ax: plot.roc_tables(series, max_fpr=max_fpr, ax=ax, micro=series.micro, macro=True, intervals=roc_ci,
                                   on_undefined=on_undefined))
    interactive = _interactive(_class_curves(series, result, classes, rank_rows),
                               baseline=series.micro.n_pos / (series.micro.n_pos + series.micro.n_neg))
    curves_note = (
        '<p class="note">One curve per class (that class against the rest). <em>Micro-average</em> (black, '
        "dashed): the curve of every (sample, class) pair pooled, one sort. <em>Macro-average</em> (navy, "
        "dotted): on PR the mean precision of the classes' step curves at a common recall grid (the union of "
        "the classes' recalls), its area the macro AP (step); on ROC the mean TPR at a common FPR grid (the "
        "union of the classes' FPRs, as scikit-learn's ROC example), its area the macro ROC-AUC. The PR "
        "baseline is the random classifier at the micro prevalence; the ROC one the chance diagonal.</p>")
    ranks = "".join(
        f"<details><summary>{_e(name)}</summary>" + _table(RANK_HEADER, _rank_rows(table, rank_rows))
        + "</details>" for name, table in series
    )
    shown_columns = "" if not columns else "; scores " + ", ".join(
        f"{_e(c)} from {_e(col)}" for c, col in zip(classes, columns))
    note = (f"data {_e(source)}; labels {_e(label_column)}: {len(classes)} classes ({kind}, each against the "
            f"rest){shown_columns}; {n_rows} rows" + (", weighted" if weighted else "")
            + f"; ties {_e(ties)}; precall {_e(_version.__version__)}")
    return _document(title, note, [
        "<h2>Summary (per class and averaged)</h2>",
        _table(header, rows, css="classes" if columns else ""),
        table_note,
        undefined_note,
        ci_note,
        _conventions(),
        _figures(pr_svg, roc_svg, interactive),
        curves_note,
        _thin_note("", circles=False),
        f"<h2>Rank tables of each class (the first threshold reaching each of {rank_rows} recalls)</h2>",
        ranks,
    ])


# ---------------------------------------------------------------------------
# slices (by=)
SLICE_CURVES = 3
"""The report's small multiples: the PR curves of this many worst and best slices."""


def _figure_svg(fig: Any) -> str:
    buffer = io.StringIO()
    fig.savefig(buffer, format="svg", bbox_inches="tight")
    text = buffer.getvalue()
    return text[text.index("<svg"):]


def _slices_section(y_true: Any, y_score: Any, by: Any, *, sample_weight: Any, pos_label: Any, ties: str,
                    min_support: int, k: int, n_resamples: int, values: Sequence[Sequence[str]] | None,
                    on_undefined: Any = "warn") -> str:
    """The slices of one model: the table of the shown slices with their intervals, the forest
    plot (:func:`precall.plot.forest`) and the PR curves of the worst and best few beside all rows'."""
    from matplotlib.figure import Figure

    from .. import plot
    from .._slicing import interval_set, named_message, slice_intervals, with_values
    from ..slices import slice_codes

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        coded = evaluate(y_true, y_score, sample_weight=sample_weight, pos_label=pos_label, ties=ties, by=by,
                         min_support=min_support, on_undefined=on_undefined)
        result = coded if values is None else with_values(coded, values)
        ranked = result.ranked.tolist()
        picked = ranked if len(ranked) <= 2 * k else ranked[:k] + ranked[-k:]
        pos = pos_label if pos_label is not None else 1
        iv = slice_intervals(y_true, y_score, by, slices=picked, sample_weight=sample_weight, pos_label=pos,
                             ties=ties, n_resamples=n_resamples, random_state=stats.DEFAULT_SEED, resample="auto",
                             on_undefined=on_undefined)
        # all rows: the intervals of `precall evaluate --ci` (and of `evaluate --by --ci`'s overall row)
        iv[-1] = interval_set(np.asarray(y_true), np.asarray(y_score),
                              None if sample_weight is None else np.asarray(sample_weight, dtype=np.float64),
                              pos_label=pos, ties=ties, recall_grid="reference", level=0.95,
                              n_resamples=n_resamples, random_state=stats.DEFAULT_SEED, resample="auto",
                              on_undefined=on_undefined)
    notes = list(dict.fromkeys(named_message(str(w.message), coded, result) for w in caught))
    method = result.rank_by
    rows = []
    for i in [-1, *picked]:
        ev, one = (result.overall if i < 0 else result[result.keys[i]]), iv.get(i)
        ap_ci = "" if one is None else f"[{_num(one.average_precision[method].low)}, " \
                                       f"{_num(one.average_precision[method].high)}]"
        roc_ci = "" if one is None else f"[{_num(one.roc_auc.low)}, {_num(one.roc_auc.high)}]"
        rows.append(["<b>all rows</b>" if i < 0 else _e(result.names[i]), str(ev.n_samples), _count(ev.n_pos),
                     _num(ev.prevalence), _num(ev.average_precision[method]), ap_ci, _num(ev.roc_auc), roc_ci])
    fig = Figure(figsize=(9.0, 1.9 + 0.32 * max(len(picked), 1)))
    plot.forest(result, iv, k=k, axes=fig.subplots(1, 2, sharey=True))
    forest_svg = _figure_svg(fig)
    few = ranked if len(ranked) <= 2 * SLICE_CURVES else ranked[:SLICE_CURVES] + ranked[-SLICE_CURVES:]
    codes = slice_codes(by, np.asarray(y_score).shape[0]).codes
    y, s = np.asarray(y_true), np.asarray(y_score)
    w = None if sample_weight is None else np.asarray(sample_weight)
    whole = threshold_table(y, s, sample_weight=w, pos_label=pos_label, ties=ties)
    curves = ""
    if few:
        fig = Figure(figsize=(3.2 * min(len(few), SLICE_CURVES), 3.4 * ((len(few) + SLICE_CURVES - 1) // SLICE_CURVES)))
        grid = fig.subplots((len(few) + SLICE_CURVES - 1) // SLICE_CURVES, min(len(few), SLICE_CURVES), squeeze=False)
        for ax, i in zip(grid.ravel(), few):
            rows_i = codes == i
            table = threshold_table(y[rows_i], s[rows_i], sample_weight=None if w is None else w[rows_i],
                                    pos_label=pos_label, ties=ties)
            plot.setup_pr_axes(ax)
            plot.draw_pr(ax, whole, label="all rows", color=plot._GRAY)
            plot.draw_pr(ax, table, label=result.names[i], color="C0")
            ax.set_title(plot.mpl(f"{plot.short_name(result.names[i])}: AP {result.average_precision[method][i]:.4f}"),
                         fontsize=9)
            ax.set_xlabel("Recall", fontsize=8)
            ax.set_ylabel("Precision", fontsize=8)
        for ax in grid.ravel()[len(few):]:  # a last row not full: no empty axes
            ax.set_visible(False)
        which = f"{len(few)} ranked slices" if len(few) == len(ranked) else f"{len(few)} worst and best slices"
        curves = (f"<h3>Precision-recall of the {which} (blue) beside all rows (gray)</h3>"
                  f'<div class="figures"><figure>{_figure_svg(fig)}</figure></div>')
    unranked = len(result.names) - len(ranked)
    shown = (f"the {k} worst and {k} best of {len(ranked)} ranked slices" if len(ranked) > 2 * k
             else f"all {len(ranked)} ranked slices")
    note = (f"{len(result.names)} slices by {_e(', '.join(result.columns))}; shown: {shown}"
            + (f"; {unranked} not ranked (no positives, or fewer than {result.min_support} rows)" if unranked else "")
            + f". Intervals of each slice on its own rows: AP {method} by the percentile bootstrap "
            f"({n_resamples} resamples of the slice's rows, its classes together, seed "
            f"{stats.DEFAULT_SEED}, spawned per slice as <code>precall.stats.compare_slices</code> does), ROC-AUC by "
            "DeLong (the bootstrap with weights); all rows' as <code>precall evaluate --ci</code> (resampled "
            "within each class).")
    warned = "".join(f'<p class="note">{_e(m)}</p>' for m in notes)
    return "".join([
        f"<h2>Slices by {_e(', '.join(result.columns))}</h2>",
        f'<p class="note">{note}</p>', warned,
        _table(["slice", "n", "n_pos", "prevalence", f"AP {method}", "95% CI", "ROC-AUC", "95% CI"], rows),
        f'<div class="figures"><figure>{forest_svg}</figure></div>',
        curves,
    ])
