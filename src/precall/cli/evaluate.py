"""``precall evaluate``: every convention of one or more score columns, or of each class."""

from __future__ import annotations

import argparse
import dataclasses
import functools
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np

import precall
from precall._core.text import columns, percent
from precall._core.validate import AVERAGES as _LIBRARY_AVERAGES
from precall._core.validate import RECALL_GRIDS, TIES
from precall.readers import Columns
from precall.table import BEST_POINTS

from ._common import (
    TIES_HELP,
    CliError,
    add_ci_options,
    add_file_arguments,
    add_output_options,
    class_warnings,
    digits_arg,
    emit,
    finite_arg,
    int_in,
    on_undefined_arg,
    prevalence_arg,
    print_warning_messages,
    print_warnings,
    unit_arg,
)
from ._engines import (
    ENGINES,
    check_single_binary,
    dask_slices,
    evaluate_dask,
    evaluate_spark,
    evaluate_stream,
    read_spark,
    spark_slices,
    stream_slices,
)
from ._format import (WIDTH, counted, data_stream, describe, fit, fmt, fmt_cell, fmt_count, fmt_interval,
                      interval_dict, json_chunks, json_safe, json_text, legend, listed, print_chunks, render_table,
                      short_names)
from ._inputs import class_error, read_classes, read_scores
from ._intervals import CiOptions, MultiIntervals, ci_options, method_name, multiclass_intervals
from ._slices import (
    accumulated_evaluation,
    add_slice_options,
    by_columns,
    resampled,
    sliced_evaluation,
    slices_csv,
    slices_json,
    slices_text,
    undefined_in_slices,
    with_slice_intervals,
    with_table_intervals,
)
from ._reports import (
    Report,
    evaluate_columns,
    format_text,
    numeric_failure,
    point_dict,
    ties_note,
    undefined_without_class,
    with_intervals,
)


# ---------------------------------------------------------------------------
# evaluation and output


def format_intervals(report: Report, digits: int = 6, wide: bool = False) -> str:
    """The ``--ci`` part printed after the point estimates: how the intervals were computed,
    each convention's AP and interval, and ROC-AUC's; 80 columns unless ``wide``."""
    ev, iv = report.evaluation, report.intervals
    assert iv is not None
    lines = fit(["", "intervals   " + iv.options.describe(report.weight_column is not None, iv.drawn), ""],
                wide=wide)
    rows = [[m, fmt(ev.average_precision[m], digits), fmt_interval(iv.average_precision[m], digits)]
            for m in precall.AP_METHODS]
    lines += render_table(["convention", "AP", f"{percent(iv.options.level)} CI"], rows, wide=wide)
    width = max(len(r[0]) for r in rows + [["convention"]])
    vwidth = max(len(r[1]) for r in rows)
    lines += fit([f"{'ROC-AUC'.ljust(width)}  {fmt(ev.roc_auc, digits).rjust(vwidth)}  "
                  f"{fmt_interval(iv.roc_auc, digits)} ({method_name(iv.roc_auc.method)})"], wide=wide)
    return "\n".join(lines)


def report_rows(report: Report) -> list[list[Any]]:
    """The binary report as rows (metric, value, CI low, CI high) for --markdown and --csv."""
    ev, iv = report.evaluation, report.intervals

    def ci(c: Any) -> list[Any]:
        return [c.low, c.high] if c is not None else ["", ""]

    rows = [[f"AP {m}", ev.average_precision[m], *ci(iv.average_precision[m] if iv else None)]
            for m in precall.AP_METHODS]
    rows.append(["ROC-AUC", ev.roc_auc, *ci(iv.roc_auc if iv else None)])
    rows += [[f"min AP {m}", ev.min_average_precision[m], "", ""] for m in precall.AP_METHODS]
    rows += [[f"normalised AP {m}", ev.normalized_average_precision[m], "", ""] for m in precall.AP_METHODS]
    rows.append(["AUPRG", ev.auprg, "", ""])
    for pi, e in report.at_prevalence:
        rows += [[f"AP {m} at prevalence {pi:g}", e.average_precision[m], "", ""] for m in precall.AP_METHODS]
        rows += [[f"normalised AP {m} at prevalence {pi:g}", e.normalized_average_precision[m], "", ""]
                 for m in precall.AP_METHODS]
        rows.append([f"AUPRG at prevalence {pi:g}", e.auprg, "", ""])
    rows += [["prevalence", ev.prevalence, "", ""], ["n_pos", ev.n_pos, "", ""], ["n_neg", ev.n_neg, "", ""]]
    if ev.best_f1 is not None:
        rows += [["best F1", ev.best_f1.f1, "", ""], ["best F1 threshold", ev.best_f1.threshold, "", ""]]
    for kind, value, point in report.operating_points:
        if point is not None:
            shown = point_dict(point)
            for field_name in ("threshold", "precision", "recall", "fpr", "f1"):
                key = f"best {value}" if kind == "best" else f"at {kind} {value:g}"
                rows.append([f"{key}: {field_name}", shown[field_name], "", ""])
    return rows


def _cell(report: Report, name: str, value: Any, digits: int) -> str:
    """A value of :func:`report_rows` as text: a threshold with the digits that tell it from
    the scores next to it (:meth:`Report.threshold`), anything else by :func:`fmt_cell`."""
    if name.endswith("threshold") and isinstance(value, float):
        return report.threshold(value, digits)
    return fmt_cell(value, digits)


def format_markdown(report: Report, digits: int = 6) -> str:
    """A GitHub-flavoured markdown table of :func:`report_rows`."""
    level = f"{percent(report.intervals.options.level)} CI" if report.intervals else None
    header = ["metric", "value"] + ([f"{level} low", f"{level} high"] if level else [])
    rows = [[name, _cell(report, name, value, digits)] + ([fmt_cell(low, digits), fmt_cell(high, digits)] if level else [])
            for name, value, low, high in report_rows(report)]
    lines = [f"**{report.source}**: label `{report.label_column}` (positive `{report.pos_label}`), "
             f"score `{report.score_column}`, ties {report.evaluation.ties}", ""]
    return "\n".join(lines + render_table(header, rows, style="markdown"))


def format_csv(report: Report, digits: int = 6) -> str:
    """CSV of :func:`report_rows` (full precision; ``digits`` is ignored)."""
    rows = [[repr(v) if isinstance(v, float) else str(v) for v in row] for row in report_rows(report)]
    return "\n".join(render_table(["metric", "value", "ci_low", "ci_high"], rows, style="csv"))


def format_side_by_side(reports: list[Report], *, digits: int = 6, style: str = "text",
                        wide: bool = False) -> str:
    """Several models of one file, a column each: text, markdown or CSV of :func:`report_rows`
    (text: 80 columns unless ``wide``; wider tables are split into blocks of models)."""
    first = reports[0]
    per_model = [report_rows(r) for r in reports]
    with_ci = first.intervals is not None
    header = ["metric"]
    for r in reports:
        header += [r.score_column] + ([f"{r.score_column} low", f"{r.score_column} high"] if with_ci else [])
    body: list[list[Any]] = []
    for i, row in enumerate(per_model[0]):
        cells: list[Any] = [row[0]]
        for rows in per_model:
            cells += rows[i][1:] if with_ci else rows[i][1:2]
        body.append(cells)
    if style == "csv":
        return "\n".join(render_table(header, [[repr(v) if isinstance(v, float) else str(v) for v in row]
                                               for row in body], style="csv"))
    width = 3 if with_ci else 1  # cells per model
    text_rows = [[str(row[0]), *(_cell(reports[k // width], str(row[0]), v, digits) if k % width == 0
                                 else fmt_cell(v, digits) for k, v in enumerate(row[1:]))] for row in body]
    group = 1
    names, renamed = [r.score_column for r in reports], []
    if style == "text" and not wide:  # a model's column within 80 columns: long names shortened, a legend below
        key = max(columns(row[0]) for row in text_rows)
        cells = max((columns(c) for row in text_rows for c in row[1:]), default=0)
        ci_cell = 2 + columns(f"[{'0' * cells}, {'0' * cells}]") if with_ci else 0
        names, renamed = short_names(names, WIDTH - key - 2 - ci_cell)
    if style == "text" and with_ci and not wide:  # a model's interval as one cell: [low, high]
        level = f"{percent(first.intervals.options.level)} CI"  # type: ignore[union-attr]
        header = ["metric"]
        for name in names:
            header += [name, level]
        text_rows = [[row[0], *(cell for k in range(len(reports)) for cell in (
            row[1 + 3 * k], f"[{row[2 + 3 * k]}, {row[3 + 3 * k]}]" if row[2 + 3 * k] else ""))]
            for row in text_rows]
        group = 2
    elif style == "text" and not wide:
        header = ["metric", *names]
    if style == "markdown":
        lines = [f"**{first.source}**: label `{first.label_column}` (positive `{first.pos_label}`), "
                 f"ties {first.evaluation.ties}", ""]
        return "\n".join(lines + render_table(header, text_rows, style="markdown"))
    lines = [
        f"file        {first.source} ({counted(first.n_rows, 'row')})",
        f"label       column {first.label_column!r}: positive {first.pos_label!r}",
        "weight      " + (f"column {first.weight_column!r}" if first.weight_column else "none"),
        f"ties        {first.evaluation.ties}; recall grid {first.evaluation.recall_grid}",
        *ties_note(max(reports, key=lambda r: r.n_tied)),
    ]
    if with_ci:  # how each model's resamples were drawn: the single model's words when alike, else by model
        drawn = dict.fromkeys(r.intervals.drawn for r in reports)  # type: ignore[union-attr]
        options = first.intervals.options  # type: ignore[union-attr]
        lines.append("intervals   " + options.describe(first.weight_column is not None,
                                                       next(iter(drawn)) if len(drawn) == 1 else ""))
        if len(drawn) > 1:
            lines.append("resamples   " + "; ".join(f"{name!r}: {r.intervals.drawn}"  # type: ignore[union-attr]
                                                    for name, r in zip(names, reports)))
    table = render_table(header, text_rows, wide=wide, group=group)
    shown = ["", "models:", *legend(renamed, wide=wide)] if renamed else []
    return "\n".join([*fit(lines, wide=wide), "", *table, *shown])


def to_json_dict(report: Report) -> dict[str, Any]:
    """One JSON-ready object: the input description and :meth:`Evaluation.to_dict`."""
    out: dict[str, Any] = {
        "input": {
            "file": report.source,
            "n_rows": report.n_rows,
            "label_column": report.label_column,
            "score_column": report.score_column,
            "weight_column": report.weight_column,
            "pos_label": report.pos_label,
            "label_counts": report.label_counts,
        },
    }
    out.update(report.evaluation.to_dict())
    iv = report.intervals
    if iv is not None:
        out["intervals"] = {
            "level": iv.options.level,
            "bootstrap": {"method": iv.options.method, "n_resamples": iv.options.n_resamples,
                          "seed": iv.options.seed, "stratified": True, "resample": iv.resample,
                          "n_blocks": iv.n_blocks},
            "average_precision": {m: interval_dict(c) for m, c in iv.average_precision.items()},
            "roc_auc": interval_dict(iv.roc_auc),
        }
    if report.operating_points:
        out["operating_points"] = [
            {"target": kind, "value": value, "reached": point is not None,
             **(point_dict(point) if point is not None else {})}
            for kind, value, point in report.operating_points
        ]
    if report.at_prevalence:
        out["at_prevalence"] = [{"requested": pi, **e.to_dict()} for pi, e in report.at_prevalence]
    out["warnings"] = list(report.warnings)
    return json_safe(out)


# ---------------------------------------------------------------------------
# multi-class evaluation (--class-columns)
#: the averages of multi-class input (the library's, but "samples", which is multi-label's)
AVERAGES = tuple(a for a in _LIBRARY_AVERAGES if a != "samples")


@dataclass(frozen=True)
class MultiReport:
    """A multi-class evaluation: per-class and averaged values, all from the public API.

    ``per_class_ap[method]`` and ``per_class_roc_auc`` list one value per class,
    in the order of ``classes``; ``average_ap[average][method]`` is the macro,
    weighted or micro AP; ``roc_auc_ovr[average]`` (macro, weighted, micro) and
    ``roc_auc_ovo_macro`` (Hand & Till) are the ROC-AUC averages.
    """

    source: str
    n_rows: int
    label_column: str
    weight_column: str | None
    classes: list[str]
    support: list[float]
    methods: list[str]
    ties: str
    recall_grid: str
    per_class_ap: dict[str, list[float]]
    per_class_roc_auc: list[float]
    average_ap: dict[str, dict[str, float]]
    roc_auc_ovr: dict[str, float]
    roc_auc_ovo_macro: float
    warnings: list[str]
    score_columns: list[str] = dataclasses.field(default_factory=list)
    intervals: MultiIntervals | None = None


def evaluate_classes(
    columns: Columns,
    *,
    name: str,
    label: str,
    classes: list[str],
    weight: str | None,
    methods: list[str],
    ties: str,
    recall_grid: str,
    score_columns: list[str] | None = None,
    ci: CiOptions | None = None,
    on_undefined: Any = "warn",
) -> MultiReport:
    """Per-class and averaged AP / ROC-AUC from one :func:`precall.evaluate` call
    (``labels=classes``: a :class:`precall.MultiEvaluation`); with ``ci``, bootstrap
    intervals of the macro averages (:func:`multiclass_intervals`); no metric is computed here."""
    y = np.array(columns.labels)
    scores, w = columns.scores, columns.weights
    common: dict[str, Any] = {"labels": classes, "sample_weight": w}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:  # one sort per class, the averages from the per-class values (precall.evaluate)
            result = precall.evaluate(y, scores, ties=ties, recall_grid=recall_grid,
                                      on_undefined=on_undefined, **common)
        except (ValueError, TypeError) as exc:
            raise class_error(name, exc, columns, classes, label, on_undefined) from None
        except (OverflowError, ZeroDivisionError) as exc:
            raise CliError(f"{name}: {numeric_failure(exc, ())}") from None
    per_class_ap = {m: [float(v) for v in result.per_class_average_precision(m)] for m in methods}
    average_ap = {a: {m: float(result.average_precision[a][m]) for m in methods} for a in AVERAGES}
    per_class_auc = [float(v) for v in result.per_class_roc_auc]
    ovr = {a: float(result.roc_auc[a]) for a in AVERAGES}
    ovo = float(result.roc_auc["ovo"])
    # the same warning repeats once per convention and average
    messages = class_warnings([str(item.message) for item in caught], classes, columns.labels, label,
                              option=True)
    report = MultiReport(
        source=name,
        n_rows=len(columns.labels),
        label_column=label,
        weight_column=weight,
        classes=list(classes),
        support=[float(v) for v in result.support],  # the positive rows (or weight) of each class
        methods=list(methods),
        ties=ties,
        recall_grid=recall_grid,
        per_class_ap=per_class_ap,
        per_class_roc_auc=per_class_auc,
        average_ap=average_ap,
        roc_auc_ovr=ovr,
        roc_auc_ovo_macro=ovo,
        warnings=messages,
        score_columns=list(score_columns or classes),
        intervals=None,
    )
    if ci is None:
        return report
    return multiclass_with_intervals(report, columns, ci=ci, on_undefined=on_undefined)


def multiclass_with_intervals(report: MultiReport, columns: Columns, *, ci: CiOptions,
                              on_undefined: Any = "warn") -> MultiReport:
    """``report`` with the bootstrap intervals of its macro averages (:func:`multiclass_intervals`)
    and the warnings they raised."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            intervals = multiclass_intervals(np.array(columns.labels), columns.scores, columns.weights,
                                             classes=report.classes, methods=report.methods, ties=report.ties,
                                             recall_grid=report.recall_grid, ci=ci, on_undefined=on_undefined)
        except (ValueError, TypeError) as exc:
            raise CliError(f"{report.source}: {exc}") from None
    messages = class_warnings([*report.warnings, *(str(w.message) for w in caught)], report.classes,
                              columns.labels, report.label_column, option=True)
    return dataclasses.replace(report, intervals=intervals, warnings=messages)


def format_multiclass_text(report: MultiReport, digits: int = 6, wide: bool = False, *, top: int = 5,
                           full: bool = False) -> str:
    """The text report of a multi-class evaluation: a per-class table (of more than ``2 top``
    classes the ``top`` worst and ``top`` best, :func:`shown_classes`, unless ``full``), then the
    averages (and, with ``--ci``, :func:`format_multiclass_intervals`); 80 columns unless ``wide``."""
    text = _multiclass_estimates_text(report, digits, wide, top=top, full=full)
    if report.intervals is not None:
        text += "\n\n" + format_multiclass_intervals(report, digits, wide)
    return text


def ranked_classes(report: MultiReport) -> list[int]:
    """The classes with rows (support above 0) and a defined AP, worst first by the AP of the
    first convention shown (``report.methods[0]``; ties in the classes' order): those
    :func:`shown_classes` picks from, as ``--by`` ranks its slices."""
    ap = np.asarray(report.per_class_ap[report.methods[0]], dtype=np.float64)
    ok = np.flatnonzero((np.asarray(report.support) > 0) & np.isfinite(ap))
    return ok[np.argsort(ap[ok], kind="stable")].tolist()


def shown_classes(report: MultiReport, top: int, full: bool) -> list[int] | None:
    """The classes the text table shows, by index: None for every class in its order (``full``,
    or at most ``2 top`` classes), else the ``top`` worst and ``top`` best ranked
    (:func:`ranked_classes`), worst first, as ``evaluate --by`` shows its slices."""
    if full or len(report.classes) <= 2 * top:
        return None
    ranked = ranked_classes(report)
    return ranked if len(ranked) <= 2 * top else ranked[:top] + ranked[-top:]


#: the most classes (or class columns) the header line of a bounded text report names
NAMED_CLASSES = 5


def _multiclass_estimates_text(report: MultiReport, digits: int, wide: bool, *, top: int = 5,
                               full: bool = False) -> str:
    weight_word = "weight" if report.weight_column else "rows"
    picked = shown_classes(report, top, full)
    limit = None if picked is None else NAMED_CLASSES
    if report.score_columns == report.classes:
        scores_line = ("scores      columns " + listed([repr(c) for c in report.classes], limit)
                       + " (one per class; a column's name is its class)")
    else:
        scores_line = "scores      " + listed(
            [f"class {c!r}: column {col!r}" for c, col in zip(report.classes, report.score_columns)], limit)
    lines = [
        f"file        {report.source} ({counted(report.n_rows, 'row')})",
        f"label       column {report.label_column!r}: {len(report.classes)} classes",
        scores_line,
        "weight      " + (f"column {report.weight_column!r}" if report.weight_column else "none"),
        f"ties        {report.ties} ({TIES_HELP.get(report.ties, '')}); "
        f"recall grid {report.recall_grid}",
        "",
        "Per class (one-vs-rest): AP by convention, ROC-AUC; support = "
        + ("total weight of the rows with that label" if report.weight_column
           else "number of rows with that label"),
    ]
    methods = report.methods
    at = list(range(len(report.classes))) if picked is None else picked
    classes = [report.classes[k] for k in at]
    rows = [[f"support ({weight_word})", *(fmt_count(report.support[k]) for k in at)]]
    rows += [[m, *(fmt(report.per_class_ap[m][k], digits) for k in at)] for m in methods]
    rows.append(["ROC-AUC", *(fmt(report.per_class_roc_auc[k], digits) for k in at)])
    names, renamed = (list(classes), []) if wide else short_names(
        list(classes), WIDTH - 2 - max(columns(r[0]) for r in rows))  # a class's column within 80 columns
    header = ["metric", *names]
    lines = fit(lines, wide=wide) + render_table(header, rows, wide=wide)
    if picked is not None:  # the worst and best of many classes, as evaluate --by shows its slices
        ranked = len(ranked_classes(report))
        unranked = len(report.classes) - ranked
        rest = ranked - len(picked)
        lines += ["", *fit([f"shown: the {min(top, ranked)} worst and best ranked classes by AP {methods[0]}, "
                            "worst first"
                            + (f"; {counted(rest, 'more class', 'more classes')} "
                               f"{'is' if rest == 1 else 'are'} not shown" if rest else "")
                            + (f"; {counted(unranked, 'class', 'classes')} not ranked (no rows, or an undefined AP) "
                               f"{'is' if unranked == 1 else 'are'} not shown" if unranked else "")
                            + "; --full for every class, --json or --csv for every number of every class"],
                           wide=wide)]
    if renamed:
        lines += ["", "classes:", *legend(renamed)]
    lines += ["", "Averages (ROC-AUC: one-vs-rest; OvO: one-vs-one macro, Hand & Till)"]
    rows = [[m, *(fmt(report.average_ap[a][m], digits) for a in AVERAGES)] for m in methods]
    rows.append(["ROC-AUC", *(fmt(report.roc_auc_ovr[a], digits) for a in AVERAGES)])
    rows.append(["ROC-AUC OvO", fmt(report.roc_auc_ovo_macro, digits), "-", "-"])
    lines += render_table(["metric", *AVERAGES], rows, wide=wide)
    lines += ["", "conventions:"]
    lines += legend([(m, describe(m)) for m in methods], wide=wide)
    return "\n".join(lines)


def format_multiclass_intervals(report: MultiReport, digits: int = 6, wide: bool = False) -> str:
    """``--ci`` with ``--class-columns``: the macro averages and their intervals, with how they
    were drawn (printed after the estimates, which come first)."""
    iv = report.intervals
    assert iv is not None
    lines = fit(["intervals   " + iv.describe()], wide=wide)
    rows = [[m, fmt(report.average_ap["macro"][m], digits), fmt_interval(iv.average_precision[m], digits)]
            for m in report.methods]
    rows.append(["ROC-AUC", fmt(report.roc_auc_ovr["macro"], digits), fmt_interval(iv.roc_auc, digits)])
    lines += render_table(["metric", "macro", f"{percent(iv.level)} CI"], rows, wide=wide)
    return "\n".join(lines)


def format_multiclass_table(report: MultiReport, *, digits: int = 6, style: str = "markdown") -> str:
    """``--markdown`` / ``--csv`` with ``--class-columns``: one row per metric (support, each AP
    convention, ROC-AUC one-vs-rest, ROC-AUC one-vs-one), one column per class and average
    (and the macro interval with ``--ci``); CSV at full precision."""
    iv = report.intervals
    header = ["metric", *report.classes, *AVERAGES] + (["macro low", "macro high"] if iv is not None else [])
    body: list[list[Any]] = [["support", *report.support, *([""] * (len(AVERAGES) + (2 if iv else 0)))]]
    for m in report.methods:
        body.append([f"AP {m}", *report.per_class_ap[m], *(report.average_ap[a][m] for a in AVERAGES)]
                    + ([iv.average_precision[m].low, iv.average_precision[m].high] if iv is not None else []))
    body.append(["ROC-AUC", *report.per_class_roc_auc, *(report.roc_auc_ovr[a] for a in AVERAGES)]
                + ([iv.roc_auc.low, iv.roc_auc.high] if iv is not None else []))
    body.append(["ROC-AUC OvO", *([""] * len(report.classes)), report.roc_auc_ovo_macro, "", ""]
                + (["", ""] if iv is not None else []))
    if style == "csv":
        rows = [[repr(float(v)) if isinstance(v, (float, np.floating)) else str(v) for v in row] for row in body]
        return "\n".join(render_table(header, rows, style="csv"))
    rows = [[str(row[0]), *(fmt_cell(float(v), digits) if isinstance(v, (float, np.floating)) else str(v)
                            for v in row[1:])] for row in body]
    lines = [f"**{report.source}**: label `{report.label_column}`, {len(report.classes)} classes, "
             f"ties {report.ties}", ""]
    return "\n".join(lines + render_table(header, rows, style="markdown"))


def multiclass_json_dict(report: MultiReport) -> dict[str, Any]:
    """One JSON-ready object with the same content as :func:`format_multiclass_text`."""
    per_class = {
        c: {
            "support": report.support[k],
            "average_precision": {m: report.per_class_ap[m][k] for m in report.methods},
            "roc_auc": report.per_class_roc_auc[k],
        }
        for k, c in enumerate(report.classes)
    }
    out: dict[str, Any] = {
        "input": {
            "file": report.source,
            "n_rows": report.n_rows,
            "label_column": report.label_column,
            "class_columns": dict(zip(report.classes, report.score_columns)),
            "weight_column": report.weight_column,
        },
        "ties": report.ties,
        "recall_grid": report.recall_grid,
        "classes": list(report.classes),
        "per_class": per_class,
        "average_precision": report.average_ap,
        "roc_auc": {
            "ovr": dict(report.roc_auc_ovr),
            "ovo": {"macro": report.roc_auc_ovo_macro},
        },
        "warnings": list(report.warnings),
    }
    if report.intervals is not None:
        iv = report.intervals
        out["intervals"] = {
            "level": iv.level, "average": "macro",
            "bootstrap": {"method": iv.options.method, "n_resamples": iv.options.n_resamples,
                          "seed": iv.options.seed, "stratified": True, "resample": iv.resample,
                          "n_blocks": iv.n_blocks},
            "average_precision": {m: interval_dict(c) for m, c in iv.average_precision.items()},
            "roc_auc": interval_dict(iv.roc_auc),
        }
    return json_safe(out)


def _evaluate_one_pass(args: argparse.Namespace) -> int:
    """``--stream`` or ``--engine dask``: binary input without holding the rows in memory."""
    option = "--stream" if args.engine == "stream" else f"--engine {args.engine}"
    check_single_binary(args, option)
    if args.class_prefix is not None or args.on_undefined != "warn":
        raise CliError(f"{option} takes one --score column and no --on-undefined; drop those options")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        engine = {"stream": evaluate_stream, "dask": evaluate_dask, "spark": evaluate_spark}[args.engine]
        (evaluation, at), counts, positive = engine(args)
    n_rows = sum(counts.values())
    report = Report(
        source=args.file, n_rows=n_rows, label_column=args.label, score_column=args.score[0],
        weight_column=args.weight, pos_label=positive, label_counts=dict(sorted(counts.items())),
        evaluation=dataclasses.replace(evaluation, n_samples=n_rows),
        warnings=[str(w.message) for w in caught if not issubclass(w.category, (DeprecationWarning,
                                                                                FutureWarning))]
        + undefined_without_class(evaluation),
        at_prevalence=tuple((pi, dataclasses.replace(e, n_samples=n_rows)) for pi, e in at),
    )
    if args.markdown or args.csv:
        print_warnings(report)
        print((format_markdown if args.markdown else format_csv)(report, digits=args.digits),
              file=data_stream() if args.csv else None)
        return 0
    return emit(report, args, to_json_dict, format_text)


def _read(args: argparse.Namespace, names: list[str], by: list[str] | tuple[()] = ()) -> Any:
    """The columns: from the file, or collected by Spark (``--engine spark --ci``:
    :func:`._engines.read_spark`, checked as the file reader checks them)."""
    return read_spark(args, names, by) if args.engine == "spark" else read_scores(args, names, by)


def cmd_evaluate(args: argparse.Namespace) -> int:
    if args.stream:
        if args.engine not in ("memory", "stream"):
            raise CliError("--stream is --engine stream; give one of them")
        args.engine = "stream"
    if args.scheduler is not None and args.engine != "dask":
        raise CliError("--scheduler goes with --engine dask")
    if args.master is not None and args.engine != "spark":
        raise CliError("--master goes with --engine spark")
    if args.by:
        return _evaluate_slices(args)
    if args.engine == "spark" and args.ci and (args.class_columns is not None or args.class_prefix is not None):
        raise CliError("--engine spark takes --score columns (binary input); drop --class-columns / --class-prefix")
    if args.engine != "memory" and not (args.engine == "spark" and args.ci):
        return _evaluate_one_pass(args)
    # --engine spark --ci: the rows collected by Spark, then everything as in memory (read_scores)
    if args.class_columns is not None or args.class_prefix is not None:
        return _evaluate_multiclass(args)
    if args.method is not None:
        raise CliError("--method applies only with --class-columns; with --score every "
                       "convention is shown")
    path = args.file
    names = list(dict.fromkeys(args.score))
    columns = _read(args, names)
    targets = [("recall", v) for v in args.at_recall or []]
    targets += [("precision", v) for v in args.at_precision or []]
    targets += [("threshold", v) for v in args.at_threshold or []]
    targets += [("best", v) for v in dict.fromkeys(args.at_best or [])]
    scores = columns.scores.reshape(len(columns.labels), -1)
    # text: the estimates first (flushed), then the intervals, which take longer; under
    # --on-undefined raise every number first, so that an error comes before any output
    if (args.ci and len(names) == 1 and not (args.json or args.markdown or args.csv)
            and on_undefined_arg(args) != "raise"):
        return _estimates_then_intervals(args, Columns(columns.labels, scores[:, 0], columns.weights), names[0],
                                         targets)
    reports = [
        evaluate_columns(
            Columns(columns.labels, scores[:, j], columns.weights), name=path, label=args.label,
            score=name, weight=args.weight, pos_label=args.pos_label, ties=args.ties,
            recall_grid=args.recall_grid, ci=ci_options(args) if args.ci else None, targets=targets,
            prevalences=args.prevalence or (), on_undefined=on_undefined_arg(args), overwrite_scores=len(names) == 1,
        )
        for j, name in enumerate(names)
    ]
    if len(reports) > 1:  # each warning once, however many models share it
        print_warning_messages(path, list(dict.fromkeys(m for r in reports for m in r.warnings)))
        if args.json:
            print(json_text({"models": {r.score_column: to_json_dict(r) for r in reports}}))
        else:
            print(format_side_by_side(reports, digits=args.digits, style=(
                "markdown" if args.markdown else "csv" if args.csv else "text"), wide=args.wide),
                  file=data_stream() if args.csv else None)
        return 0
    report = reports[0]
    if args.markdown or args.csv:
        print_warnings(report)
        print((format_markdown if args.markdown else format_csv)(report, digits=args.digits),
              file=data_stream() if args.csv else None)
        return 0
    return emit(report, args, to_json_dict, format_text)


def _estimates_then_intervals(args: argparse.Namespace, columns: Columns, score: str,
                              targets: list[tuple[str, float]]) -> int:
    """``--ci`` as text: the point estimates printed (and flushed) first, then the intervals,
    which take longer (a progress bar on a terminal's stderr meanwhile)."""
    kwargs: dict[str, Any] = {"ties": args.ties, "recall_grid": args.recall_grid, "on_undefined": on_undefined_arg(args)}
    report = evaluate_columns(columns, name=args.file, label=args.label, score=score, weight=args.weight,
                              pos_label=args.pos_label, targets=targets, prevalences=args.prevalence or (),
                              **kwargs)
    print_warnings(report)
    print(format_text(report, digits=args.digits, wide=args.wide), flush=True)
    report = with_intervals(report, columns, ci=ci_options(args), **kwargs)
    print_warnings(report)
    print(format_intervals(report, digits=args.digits, wide=args.wide))
    return 0


def _evaluate_slices(args: argparse.Namespace) -> int:
    """``--by``: every number per slice (one :func:`precall.evaluate` with ``by=``; ``--stream``,
    ``--engine dask`` and ``spark``: one :class:`precall.SlicedAccumulator`, the same numbers), the worst and best
    ``--top`` slices as a table, every slice with ``--full``, ``--json`` or ``--csv``."""
    engine = "--stream" if args.engine == "stream" else f"--engine {args.engine}"
    accumulated = args.engine in ("stream", "dask")
    given = [flag for flag, on in (("--class-columns", args.class_columns), ("--class-prefix", args.class_prefix),
                                   ("--ties " + args.ties, args.engine != "memory" and args.ties != "group"),
                                   ("--at-recall", args.at_recall), ("--at-precision", args.at_precision),
                                   ("--at-threshold", args.at_threshold), ("--prevalence", args.prevalence),
                                   ("--markdown", args.markdown), ("--method", args.method)) if on]
    if given:
        raise CliError(f"--by goes with one --score (in memory, --stream, --engine dask or spark); drop "
                       f"{', '.join(given)} (per class: one --score of each class; the slices' points: --json)")
    names = list(dict.fromkeys(args.score))
    if len(names) != 1:
        raise CliError(f"--by evaluates one --score column; got {len(names)} ({', '.join(map(repr, names))}): "
                       "compare models per slice with precall compare --by")
    if accumulated and args.ci and (args.weight or args.ci_method != "percentile"):
        raise CliError(f"--ci with {engine} --by draws each slice's counts per score, which needs "
                       + ("no --weight (the weighted bootstrap resamples rows)" if args.weight else
                          f"--ci-method percentile (--ci-method {args.ci_method} leaves rows out)")
                       + ": evaluate in memory (drop " + engine + ") for "
                       + ("weighted intervals" if args.weight else f"--ci-method {args.ci_method}"))
    by = by_columns(args.by)
    columns = tables = None
    if accumulated or (args.engine == "spark" and not args.ci):  # one exact accumulator per slice, keyed as
        # in memory (the values' texts by the readers' rules): the same numbers; Spark's merged on the executors
        got = {"stream": stream_slices, "dask": dask_slices, "spark": spark_slices}[args.engine](args, by)
        if args.ci and len(got.counts) != 2:
            raise CliError(f"{args.file}: column {args.label!r}: --ci with {engine} --by needs two labels (the "
                           f"bootstrap's strata); got {len(got.counts)}: evaluate in memory (drop {engine})")
        source = {"file": args.file, "n_rows": sum(got.counts.values()), "label_column": args.label,
                  "score_column": names[0], "weight_column": args.weight, "pos_label": got.positive}
        report = accumulated_evaluation(got.accumulator, got.values, source, recall_grid=args.recall_grid,
                                        on_undefined=on_undefined_arg(args), min_support=args.min_support)
        at = [{v: float(code) for code, v in enumerate(values)} for values in got.values]
        keys = [tuple(None if v is None else at[j][v] for j, v in enumerate(key))
                for key in report.result.keys]  # each slice's key in the accumulator: its values' codes
        tables = (lambda i: got.accumulator.table(None if i < 0 else keys[i]))  # noqa: E731
    else:  # in memory, or --engine spark --ci: the rows collected by Spark, then as in memory
        columns = _read(args, names, by)
        report = sliced_evaluation(columns, name=args.file, label=args.label, score=names[0], weight=args.weight,
                                   pos_label=args.pos_label, ties=args.ties, recall_grid=args.recall_grid,
                                   on_undefined=on_undefined_arg(args), min_support=args.min_support)
    text = not (args.json or args.csv)
    # text: the estimates first (flushed), then the intervals, which take longer; under
    # --on-undefined raise every number first, so that an error comes before any output
    streamed = args.ci and text and on_undefined_arg(args) != "raise"
    if args.ci:
        if streamed:
            print_warning_messages(report.source, report.warnings)
            print_chunks(slices_text(report, top=args.top, full=args.full, digits=args.digits, wide=args.wide),
                         flush=True)
            print()
        picked = resampled(report.result, args.top, args.full or not text)
        shown_before = set(report.warnings) if streamed else set()
        if tables is not None:
            report = with_table_intervals(report, tables, sorted(got.counts), indices=picked,
                                          recall_grid=args.recall_grid, ci=ci_options(args),
                                          on_undefined=on_undefined_arg(args))
        else:
            report = with_slice_intervals(report, columns, indices=picked, ties=args.ties,
                                          recall_grid=args.recall_grid, ci=ci_options(args),
                                          on_undefined=on_undefined_arg(args))
        report = dataclasses.replace(report, warnings=[m for m in report.warnings if m not in shown_before])
    if not text:  # the numbers of every slice: those no policy gives a value named too
        report = dataclasses.replace(report, warnings=[*report.warnings, *undefined_in_slices(
            report.result, on_undefined_arg(args))])
    print_warning_messages(report.source, report.warnings)
    if args.json:  # every slice, written a block at a time
        print_chunks(json_chunks(slices_json(report)))
    elif args.csv:
        print_chunks(slices_csv(report), file=data_stream())
    else:  # streamed, the summary went out with the estimates; every slice (--full) a block at a time
        print_chunks(slices_text(report, top=args.top, full=args.full, digits=args.digits, wide=args.wide,
                                 summary=not streamed))
    return 0


def _evaluate_multiclass(args: argparse.Namespace) -> int:
    if args.at_recall or args.at_precision or args.at_threshold or args.at_best:
        raise CliError("--at-* apply to binary input (--score); with --class-columns each class has "
                       "its own operating points")
    if args.pos_label is not None:
        raise CliError("--pos-label applies only with --score; with --class-columns each "
                       "class is in turn the positive one")
    if args.prevalence:
        raise CliError("--prevalence applies to binary input (--score); with --class-columns each "
                       "class has its own prevalence")
    pairs, columns = read_classes(args)
    classes = [c for c, _ in pairs]
    score_columns = [col for _, col in pairs]
    methods = list(precall.AP_METHODS) if args.method is None else list(dict.fromkeys(args.method))
    path = args.file
    text = not (args.json or args.markdown or args.csv)
    # text: the estimates first (flushed), then the intervals, which take longer; under
    # --on-undefined raise every number first, so that an error comes before any output
    stream = args.ci and text and on_undefined_arg(args) != "raise"
    report = evaluate_classes(
        columns, name=path, label=args.label, classes=classes, weight=args.weight,
        methods=methods, ties=args.ties, recall_grid=args.recall_grid, score_columns=score_columns,
        ci=ci_options(args) if args.ci and not stream else None, on_undefined=on_undefined_arg(args),
    )
    if stream:
        print_warnings(report)
        print(format_multiclass_text(report, digits=args.digits, wide=args.wide, top=args.top, full=args.full),
              flush=True)
        shown = set(report.warnings)
        report = multiclass_with_intervals(report, columns, ci=ci_options(args), on_undefined=on_undefined_arg(args))
        print_warning_messages(report.source, [m for m in report.warnings if m not in shown])
        print("\n" + format_multiclass_intervals(report, digits=args.digits, wide=args.wide))
        return 0
    if args.markdown or args.csv:
        print_warnings(report)
        print(format_multiclass_table(report, digits=args.digits, style="markdown" if args.markdown else "csv"),
              file=data_stream() if args.csv else None)
        return 0
    return emit(report, args, multiclass_json_dict,
                functools.partial(format_multiclass_text, top=args.top, full=args.full))


def register(sub: Any) -> None:
    ev = sub.add_parser(
        "evaluate",
        help="evaluate the scores of a data file (CSV/TSV, JSON Lines, Parquet, .npz/.npy)",
        description="Read a data file (CSV or TSV with a header line, JSON Lines, optionally .gz; "
        "Parquet; .npz or .npy with named columns). Binary "
        "(--score COL): print every average-precision convention, ROC-AUC, the prevalence, "
        "the counts and the best-F1 operating point, from one precall.evaluate call. "
        "Multi-class (--class-columns C1,C2,...: one score column per class, the class of a "
        "column being its name, so every label must be one of those names): print a "
        "per-class table (support, AP by every convention, one-vs-rest ROC-AUC) and the "
        "macro/weighted/micro AP, the macro/weighted/micro one-vs-rest ROC-AUC and the macro "
        "one-vs-one (Hand & Till) ROC-AUC. Every row is used; a malformed row is an error "
        "(exit code 2) naming its line and column.",
    )
    add_file_arguments(ev)
    scores = ev.add_mutually_exclusive_group(required=True)
    scores.add_argument("--score", metavar="COL", action="append",
                        help="binary: column with the scores (higher = more likely positive); "
                        "repeat to show several models side by side")
    scores.add_argument("--class-columns", metavar="C1,C2,...",
                        help="multi-class: comma-separated score columns, one per class; the "
                        "class of each column is its name, or give LABEL=COLUMN pairs "
                        "(0=p_setosa,1=p_versicolor,...); every label in --label must be one "
                        "of the classes")
    scores.add_argument("--class-prefix", metavar="P",
                        help="multi-class: every column named P + LABEL is the score of class "
                        "LABEL (--class-prefix p_ : columns p_0, p_1, ... for labels 0, 1, ...)")
    ev.add_argument("--method", choices=precall.AP_METHODS, action="append", metavar="M",
                    help="with --class-columns / --class-prefix: show only this AP convention (repeatable; "
                    "default every one: " + ", ".join(precall.AP_METHODS) + ")")
    ev.add_argument("--ties", choices=TIES, default="group",
                    help="group: equal scores share one threshold (scikit-learn, default); "
                    "stable: one operating point per row, equal scores in file order")
    ev.add_argument("--recall-grid", choices=RECALL_GRIDS, default="reference",
                    help="recall grid of voc2007/coco: the reference codes' float grids "
                    "(default) or exact k/10, k/100")
    fmt = ev.add_mutually_exclusive_group()
    fmt.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    fmt.add_argument("--markdown", action="store_true", help="print a markdown table")
    fmt.add_argument("--csv", action="store_true",
                     help="print CSV (binary: metric, value, ci_low, ci_high; multi-class: metric, a column "
                     "per class and per average; --by: a row per slice), full precision; to a file or a pipe "
                     "the names and slice values as they are, quoted where needed, as the library's to_csv")
    ev.add_argument("--at-recall", type=unit_arg, action="append", metavar="R",
                    help="binary: also report the operating point reaching recall R (repeatable)")
    ev.add_argument("--at-precision", type=unit_arg, action="append", metavar="P",
                    help="binary: the operating point of highest recall with precision >= P")
    ev.add_argument("--at-threshold", type=finite_arg, action="append", metavar="T",
                    help="binary: the operating point predicting positive at score >= T")
    ev.add_argument("--at-best", choices=BEST_POINTS, action="append",
                    help="binary: the best operating point by Youden's index (max TPR - FPR) or the one "
                    "closest to the ROC corner (0, 1) (pROC's coords(x = \"best\"); repeatable)")
    ev.add_argument("--digits", type=digits_arg, default=6, metavar="N",
                    help="decimals in the text and markdown output (default 6; thresholds get the "
                    "significant digits that tell them from the scores next to them; CSV and JSON: full "
                    "precision)")
    ev.add_argument("--prevalence", type=prevalence_arg, action="append", metavar="PI",
                    help="binary (also with --stream and --engine): also report every AP at this prevalence "
                    "(share of positives, e.g. the deployment rate 0.001), negatives reweighted; repeatable")
    ev.add_argument("--stream", action="store_true",
                    help="binary: read the file in chunks through an exact streaming accumulator (memory "
                    "grows with the distinct scores, not the rows): for files larger than memory")
    ev.add_argument("--chunk-rows", type=int_in(1, 10**12), default=1 << 18, metavar="N",
                    help="with --stream: rows per chunk of text files (default 262144, at most 1e12)")
    ev.add_argument("--engine", choices=ENGINES, default="memory",
                    help="binary, one --score: 'memory' (default) loads the columns; 'stream' is --stream; "
                    "'dask' reads the file with dask.dataframe and evaluates exactly by score ranges on a "
                    "Dask cluster (the 'dask' extra); 'spark' reads a Parquet file or a table name with "
                    "Spark and evaluates exactly by score ranges on its executors (the 'spark' extra); with --by: "
                    "one exact accumulator per chunk or partition, merged (--ci: stream and dask unweighted, "
                    "from the count tables); 'spark' with --ci collects the columns (at most 1e7 rows) and "
                    "prints what 'memory' prints, intervals included")
    ev.add_argument("--master", metavar="URL",
                    help="with --engine spark: the Spark master (spark://host:7077, yarn, local[4]); default: "
                    "the active session, else local[*]")
    ev.add_argument("--scheduler", metavar="ADDRESS",
                    help="with --engine dask: a distributed scheduler's address (tcp://host:8786), or "
                    "'threads' / 'processes' / 'synchronous' for dask's local schedulers; default: a "
                    "local cluster of one worker process per core")
    ev.add_argument("--ci", action="store_true",
                    help="add a confidence interval to every AP convention and to ROC-AUC (binary: "
                    "bootstrap for AP, DeLong for ROC-AUC, the bootstrap with --weight; multi-class: "
                    "bootstrap of the macro AP and macro ROC-AUC; see --level, --ci-method, --resamples, "
                    "--seed)")
    add_ci_options(ev)
    add_slice_options(ev, what="every number",
                      class_top="of more than 2 K classes, the text shows the K worst and K best by AP",
                      class_full="every class in the text")
    add_output_options(ev)
    ev.set_defaults(func=cmd_evaluate)
