"""``precall evaluate``: every convention of one or more score columns, or of each class."""

from __future__ import annotations

import argparse
import csv
import dataclasses
import functools
import json
import warnings
from collections import Counter
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

import precall
from precall.readers import Columns, read_file

from ._common import (
    RECALL_GRIDS,
    TIES,
    TIES_HELP,
    CiOptions,
    CliError,
    _add_ci_options,
    _add_file_arguments,
    _bootstrap_kwargs,
    _ci_options,
    _digits,
    _emit,
    _finite,
    _int_in,
    _parse_class_columns,
    _prevalence,
    _print_warnings,
    _show_labels,
    _unit,
    resolve_pos_label,
)
from ._format import _description, _fmt, _fmt_cell, _fmt_count, _fmt_interval, _interval_dict, _json_safe, _table
from .engines import _check_single_binary, _evaluate_dask, _evaluate_stream


# ---------------------------------------------------------------------------
# evaluation and output
@dataclass(frozen=True)
class Report:
    """One evaluation with what the CLI knows about its input."""

    source: str
    n_rows: int
    label_column: str
    score_column: str
    weight_column: str | None
    pos_label: str
    label_counts: dict[str, int]
    evaluation: precall.Evaluation
    warnings: list[str]
    intervals: Intervals | None = None
    operating_points: tuple[tuple[str, float, precall.OperatingPoint | None], ...] = ()
    at_prevalence: tuple[tuple[float, precall.Evaluation], ...] = ()  # --prevalence PI



@dataclass(frozen=True)
class Intervals:
    """``--ci``: an interval for every AP convention and for ROC-AUC, from :mod:`precall.stats`."""

    options: CiOptions
    average_precision: dict[str, precall.stats.ConfidenceInterval]
    roc_auc: precall.stats.ConfidenceInterval



def compute_intervals(
    labels: np.ndarray, scores: np.ndarray, weights: np.ndarray | None, *, pos_label: str,
    ties: str, recall_grid: str, ci: CiOptions,
) -> Intervals:
    """The ``--ci`` intervals: bootstrap for each AP convention; DeLong for ROC-AUC
    (bootstrap when weighted, since DeLong takes no weights)."""
    ap = {}
    for m in precall.AP_METHODS:
        metric = functools.partial(precall.average_precision, method=m, ties=ties,
                                   recall_grid=recall_grid, pos_label=pos_label)
        ap[m] = precall.stats.bootstrap_ci(metric, labels, scores, sample_weight=weights,
                                           **_bootstrap_kwargs(ci))
    if weights is None:
        roc = precall.stats.roc_auc_ci(labels, scores, pos_label=pos_label, level=ci.level)
    else:
        roc = precall.stats.bootstrap_ci(
            functools.partial(precall.roc_auc, pos_label=pos_label), labels, scores,
            sample_weight=weights, **_bootstrap_kwargs(ci),
        )
    return Intervals(ci, ap, roc)


def evaluate_columns(
    columns: Columns,
    *,
    name: str,
    label: str,
    score: str,
    weight: str | None,
    pos_label: str | None,
    ties: str,
    recall_grid: str,
    ci: CiOptions | None = None,
    targets: Sequence[tuple[str, float]] = (),
    prevalences: Sequence[float] = (),
) -> Report:
    """Run :func:`precall.evaluate` once on the columns read from ``name``
    (and, with ``ci``, :func:`compute_intervals`; with ``prevalences``, the
    table reweighted to each, :func:`at_prevalences`)."""
    counts = Counter(columns.labels)
    positive = resolve_pos_label(counts, pos_label, label, name)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = precall.evaluate(
                np.array(columns.labels),
                columns.scores,
                sample_weight=columns.weights,
                pos_label=positive,
                ties=ties,
                recall_grid=recall_grid,
            )
            points = []
            table = None
            if targets or prevalences:
                table = precall.threshold_table(np.array(columns.labels), columns.scores,
                                                sample_weight=columns.weights, pos_label=positive,
                                                ties=ties)
                for kind, value in targets:
                    try:
                        point = table.operating_point(**{kind: value})
                    except ValueError:  # not reached: reported as such
                        point = None
                    points.append((kind, value, point))
            at_prevalence = at_prevalences(table, prevalences, recall_grid) if table is not None else ()
            intervals = None
            if ci is not None:
                intervals = compute_intervals(
                    np.array(columns.labels), columns.scores, columns.weights, pos_label=positive,
                    ties=ties, recall_grid=recall_grid, ci=ci,
                )
        except (ValueError, TypeError) as exc:
            raise CliError(f"{name}: {exc}") from None
    return Report(
        source=name,
        n_rows=len(columns.labels),
        label_column=label,
        score_column=score,
        weight_column=weight,
        pos_label=positive,
        label_counts=dict(sorted(counts.items())),
        evaluation=result,
        warnings=[str(w.message) for w in caught],
        intervals=intervals,
        operating_points=tuple(points),
        at_prevalence=at_prevalence,
    )


def at_prevalences(
    table: precall.ThresholdTable, prevalences: Sequence[float], recall_grid: str
) -> tuple[tuple[float, precall.Evaluation], ...]:
    """``--prevalence``: the evaluation of the table reweighted to each prevalence
    (:meth:`precall.ThresholdTable.at_prevalence`; ROC-AUC is unchanged)."""
    return tuple((pi, table.at_prevalence(pi).evaluate(recall_grid=recall_grid))
                 for pi in dict.fromkeys(prevalences))


def _context_columns(report: Report, digits: int) -> tuple[list[str], dict[str, list[str]]]:
    """The columns beside each convention's AP: its minimum for these class counts,
    the AP normalised by it, and the AP at each ``--prevalence``."""
    ev = report.evaluation
    header = ["min AP", "normalised"] + [f"AP at {pi:g}" for pi, _ in report.at_prevalence]
    cells = {m: [_fmt(ev.min_average_precision[m], digits), _fmt(ev.normalized_average_precision[m], digits)]
             + [_fmt(e.average_precision[m], digits) for _, e in report.at_prevalence]
             for m in precall.AP_METHODS}
    return header, cells



def format_text(report: Report, digits: int = 6) -> str:
    """The text report: input summary, an aligned table of conventions, ROC-AUC, best F1."""
    ev = report.evaluation
    pos = report.pos_label
    n_pos_rows = report.label_counts.get(pos, 0)
    negatives = {k: v for k, v in report.label_counts.items() if k != pos}
    neg_text = _show_labels(Counter(negatives)) if negatives else "none"
    lines = [
        f"file        {report.source} ({report.n_rows} rows)",
        f"label       column {report.label_column!r}: positive {pos!r} "
        f"({n_pos_rows} row{'' if n_pos_rows == 1 else 's'}), "
        f"negative {neg_text}",
        f"score       column {report.score_column!r}",
        "weight      " + (f"column {report.weight_column!r}" if report.weight_column else "none"),
        f"ties        {ev.ties} ({TIES_HELP.get(ev.ties, '')}); recall grid {ev.recall_grid}",
        "",
    ]
    names = list(precall.AP_METHODS)
    width = max(len("convention"), *(len(m) for m in names), len("prevalence"))
    values = [_fmt(ev.average_precision[m], digits) for m in names]
    vwidth = max(len("AP"), *(len(v) for v in values))
    iv = report.intervals
    cells = {}
    if iv is not None:
        cells = {m: _fmt_interval(iv.average_precision[m], digits) for m in names}
        cells["roc"] = _fmt_interval(iv.roc_auc, digits)
        lines.insert(-1, "intervals   " + iv.options.describe(report.weight_column is not None))
    cwidth = max([len(f"{iv.options.level:.0%} CI")] + [len(c) for c in cells.values()]) if iv else 0
    ci_head = f"  {f'{iv.options.level:.0%} CI'.ljust(cwidth)}" if iv else ""
    context_head, context = _context_columns(report, digits)
    widths = [max(len(h), *(len(context[m][j]) for m in names)) for j, h in enumerate(context_head)]
    context_head_text = "".join(f"  {h.rjust(w)}" for h, w in zip(context_head, widths))
    lines.append(f"{'convention'.ljust(width)}  {'AP'.rjust(vwidth)}{ci_head}{context_head_text}  description")
    for m, v in zip(names, values):
        ci_cell = f"  {cells[m].ljust(cwidth)}" if iv else ""
        context_text = "".join(f"  {c.rjust(w)}" for c, w in zip(context[m], widths))
        lines.append(f"{m.ljust(width)}  {v.rjust(vwidth)}{ci_cell}{context_text}  {_description(m)}")
    lines.append("min AP: the lowest AP any ranking of these class counts gets (Boyd et al. 2012); "
                 "normalised: (AP - min AP) / (1 - min AP)")
    lines.append("")
    roc_cell = f"  {cells['roc'].ljust(cwidth)}  {iv.roc_auc.method}" if iv else ""
    same = "  (the same at every prevalence)" if report.at_prevalence and not iv else ""
    lines.append(f"{'ROC-AUC'.ljust(width)}  {_fmt(ev.roc_auc, digits).rjust(vwidth)}{roc_cell}{same}")
    at = "".join(f"; at prevalence {pi:g}: {_fmt(e.auprg, digits)}" for pi, e in report.at_prevalence)
    lines.append(f"{'AUPRG'.ljust(width)}  {_fmt(ev.auprg, digits).rjust(vwidth)}  area under the "
                 f"precision-recall-gain curve (Flach & Kull 2015){at}")
    weight_word = "weight" if report.weight_column else "count"
    lines.append(
        f"{'prevalence'.ljust(width)}  {_fmt(ev.prevalence, digits).rjust(vwidth)}  "
        f"the random-classifier baseline; positive {weight_word} {_fmt_count(ev.n_pos)}, negative {weight_word} "
        f"{_fmt_count(ev.n_neg)}, {ev.n_samples} samples"
    )
    b = ev.best_f1
    if b is None:
        lines.append(f"{'best F1'.ljust(width)}  {'-'.rjust(vwidth)}  undefined: no positives")
    else:
        lines.append(
            f"{'best F1'.ljust(width)}  {_fmt(b.f1, digits).rjust(vwidth)}  at score >= "
            f"{b.threshold:.{digits}g}: precision {_fmt(b.precision, digits)}, "
            f"recall {_fmt(b.recall, digits)}"
        )
    for kind, value, point in report.operating_points:
        name = f"at {kind} {'=' if kind == 'threshold' else '>='} {value:g}"
        if point is None:
            lines.append(f"{name.ljust(width)}  not reached")
            continue
        lines.append(
            f"{name}: score >= {point.threshold:.{digits}g}, precision {_fmt(point.precision, digits)}, "
            f"recall {_fmt(point.recall, digits)}, FPR {_fmt(point.fpr, digits)}, F1 "
            f"{_fmt(point.f1, digits)} (TP {_fmt_count(point.tp)}, FP {_fmt_count(point.fp)}, "
            f"TN {_fmt_count(point.tn)}, FN {_fmt_count(point.fn)})"
        )
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
            for field_name in ("threshold", "precision", "recall", "fpr", "f1"):
                rows.append([f"at {kind} {value:g}: {field_name}", getattr(point, field_name), "", ""])
    return rows


def format_markdown(report: Report, digits: int = 6) -> str:
    """A GitHub-flavoured markdown table of :func:`report_rows`."""
    level = f"{report.intervals.options.level:.0%} CI" if report.intervals else None
    header = ["metric", "value"] + ([f"{level} low", f"{level} high"] if level else [])
    lines = [f"**{report.source}**: label `{report.label_column}` (positive `{report.pos_label}`), "
             f"score `{report.score_column}`, ties {report.evaluation.ties}", "",
             "| " + " | ".join(header) + " |", "|" + "---|" + "---:|" * (len(header) - 1)]
    for name, value, low, high in report_rows(report):
        cells = [name, _fmt_cell(value, digits)] + ([_fmt_cell(low, digits), _fmt_cell(high, digits)] if level else [])
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def format_csv(report: Report, digits: int = 6) -> str:
    """CSV of :func:`report_rows` (full precision; ``digits`` is ignored)."""
    import io

    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["metric", "value", "ci_low", "ci_high"])
    for row in report_rows(report):
        writer.writerow([repr(v) if isinstance(v, float) else v for v in row])
    return buffer.getvalue().rstrip("\n")


def format_side_by_side(reports: list[Report], *, digits: int = 6, style: str = "text") -> str:
    """Several models of one file, a column each: text, markdown or CSV of :func:`report_rows`."""
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
        import io

        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        writer.writerow(header)
        writer.writerows([[repr(v) if isinstance(v, float) else v for v in row] for row in body])
        return buffer.getvalue().rstrip("\n")
    text_rows = [[str(row[0]), *(_fmt_cell(v, digits) for v in row[1:])] for row in body]
    if style == "markdown":
        lines = [f"**{first.source}**: label `{first.label_column}` (positive `{first.pos_label}`), "
                 f"ties {first.evaluation.ties}", "", "| " + " | ".join(header) + " |",
                 "|" + "---|" + "---:|" * (len(header) - 1)]
        return "\n".join(lines + ["| " + " | ".join(r) + " |" for r in text_rows])
    lines = [
        f"file        {first.source} ({first.n_rows} rows)",
        f"label       column {first.label_column!r}: positive {first.pos_label!r}",
        "weight      " + (f"column {first.weight_column!r}" if first.weight_column else "none"),
        f"ties        {first.evaluation.ties}; recall grid {first.evaluation.recall_grid}",
    ]
    if with_ci:
        lines.append("intervals   " + first.intervals.options.describe(first.weight_column is not None))  # type: ignore[union-attr]
    return "\n".join([*lines, "", *_table(header, text_rows)])



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
                          "seed": iv.options.seed, "stratified": True},
            "average_precision": {m: _interval_dict(c) for m, c in iv.average_precision.items()},
            "roc_auc": _interval_dict(iv.roc_auc),
        }
    if report.operating_points:
        out["operating_points"] = [
            {"target": kind, "value": value, "reached": point is not None,
             **(dataclasses.asdict(point) if point is not None else {})}
            for kind, value, point in report.operating_points
        ]
    if report.at_prevalence:
        out["at_prevalence"] = [{"requested": pi, **e.to_dict()} for pi, e in report.at_prevalence]
    out["warnings"] = list(report.warnings)
    return _json_safe(out)


# ---------------------------------------------------------------------------
# multi-class evaluation (--class-columns)
AVERAGES = ("macro", "weighted", "micro")


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
) -> MultiReport:
    """Per-class and averaged AP / ROC-AUC from one :func:`precall.evaluate` call
    (``labels=classes``: a :class:`precall.MultiEvaluation`); no metric is computed here."""
    y = np.array(columns.labels)
    scores, w = columns.scores, columns.weights
    common: dict[str, Any] = {"labels": classes, "sample_weight": w}
    # support is shown, not used in any metric: the row count (or weight) per class
    support = [
        float(np.count_nonzero(y == c)) if w is None else float(w[y == c].sum())
        for c in classes
    ]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:  # one sort per class, the averages from the per-class values (precall.evaluate)
            result = precall.evaluate(y, scores, ties=ties, recall_grid=recall_grid, **common)
        except (ValueError, TypeError) as exc:
            raise CliError(f"{name}: {exc}") from None
    per_class_ap = {m: [float(v) for v in result.per_class_average_precision(m)] for m in methods}
    average_ap = {a: {m: float(result.average_precision[a][m]) for m in methods} for a in AVERAGES}
    per_class_auc = [float(v) for v in result.per_class_roc_auc]
    ovr = {a: float(result.roc_auc[a]) for a in AVERAGES}
    ovo = float(result.roc_auc["ovo"])
    messages: list[str] = []
    for item in caught:  # the same warning repeats once per convention and average
        text = str(item.message)
        if text not in messages:
            messages.append(text)
    return MultiReport(
        source=name,
        n_rows=len(columns.labels),
        label_column=label,
        weight_column=weight,
        classes=list(classes),
        support=support,
        methods=list(methods),
        ties=ties,
        recall_grid=recall_grid,
        per_class_ap=per_class_ap,
        per_class_roc_auc=per_class_auc,
        average_ap=average_ap,
        roc_auc_ovr=ovr,
        roc_auc_ovo_macro=ovo,
        warnings=messages,
    )



def format_multiclass_text(report: MultiReport, digits: int = 6) -> str:
    """The text report of a multi-class evaluation: a per-class table, then the averages."""
    weight_word = "weight" if report.weight_column else "rows"
    lines = [
        f"file        {report.source} ({report.n_rows} rows)",
        f"label       column {report.label_column!r}: {len(report.classes)} classes",
        "scores      columns " + ", ".join(repr(c) for c in report.classes)
        + " (one per class; a column's name is its class)",
        "weight      " + (f"column {report.weight_column!r}" if report.weight_column else "none"),
        f"ties        {report.ties} ({TIES_HELP.get(report.ties, '')}); "
        f"recall grid {report.recall_grid}",
        "",
        "Per class (one-vs-rest): AP by convention, ROC-AUC; support = "
        + ("total weight of the rows with that label" if report.weight_column
           else "number of rows with that label"),
    ]
    methods = report.methods
    header = ["class", f"support ({weight_word})", *methods, "ROC-AUC"]
    rows = [
        [c, _fmt_count(report.support[k]),
         *(_fmt(report.per_class_ap[m][k], digits) for m in methods),
         _fmt(report.per_class_roc_auc[k], digits)]
        for k, c in enumerate(report.classes)
    ]
    lines += _table(header, rows)
    lines += ["", "Averages (ROC-AUC: one-vs-rest, and one-vs-one by Hand & Till)"]
    header = ["average", *methods, "ROC-AUC"]
    auc_cell = {
        "macro": _fmt(report.roc_auc_ovr["macro"], digits),
        "weighted": _fmt(report.roc_auc_ovr["weighted"], digits),
        "micro": _fmt(report.roc_auc_ovr["micro"], digits),
    }
    rows = [
        [a, *(_fmt(report.average_ap[a][m], digits) for m in methods), auc_cell[a]]
        for a in AVERAGES
    ]
    rows.append(["OvO macro", *("-" for _ in methods), _fmt(report.roc_auc_ovo_macro, digits)])
    lines += _table(header, rows)
    lines += ["", "conventions:"]
    width = max(len(m) for m in methods)
    lines += [f"  {m.ljust(width)}  {_description(m)}" for m in methods]
    return "\n".join(lines)


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
            "class_columns": list(report.classes),
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
    return _json_safe(out)



def _evaluate_one_pass(args: argparse.Namespace) -> int:
    """``--stream`` or ``--engine dask``: binary input without holding the rows in memory."""
    option = "--stream" if args.engine == "stream" else "--engine dask"
    _check_single_binary(args, option)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        (evaluation, at), counts, positive = (_evaluate_stream if args.engine == "stream" else _evaluate_dask)(args)
    n_rows = sum(counts.values())
    report = Report(
        source=args.file, n_rows=n_rows, label_column=args.label, score_column=args.score[0],
        weight_column=args.weight, pos_label=positive, label_counts=dict(sorted(counts.items())),
        evaluation=dataclasses.replace(evaluation, n_samples=n_rows),
        warnings=[str(w.message) for w in caught if not issubclass(w.category, (DeprecationWarning,
                                                                                FutureWarning))],
        at_prevalence=tuple((pi, dataclasses.replace(e, n_samples=n_rows)) for pi, e in at),
    )
    if args.markdown or args.csv:
        _print_warnings(report)
        print((format_markdown if args.markdown else format_csv)(report, digits=args.digits))
        return 0
    return _emit(report, args, to_json_dict, format_text)


def cmd_evaluate(args: argparse.Namespace) -> int:
    if args.stream:
        if args.engine not in ("memory", "stream"):
            raise CliError("--stream is --engine stream; give one of them")
        args.engine = "stream"
    if args.scheduler is not None and args.engine != "dask":
        raise CliError("--scheduler goes with --engine dask")
    if args.engine != "memory":
        return _evaluate_one_pass(args)
    if args.class_columns is not None:
        return _evaluate_multiclass(args)
    if args.method is not None:
        raise CliError("--method applies only with --class-columns; with --score every "
                       "convention is shown")
    path = args.file
    names = list(dict.fromkeys(args.score))
    columns = read_file(path, label=args.label, score_columns=[(c, "--score") for c in names],
                        weight=args.weight, delimiter=args.delimiter)
    targets = [("recall", v) for v in args.at_recall or []]
    targets += [("precision", v) for v in args.at_precision or []]
    targets += [("threshold", v) for v in args.at_threshold or []]
    scores = columns.scores.reshape(len(columns.labels), -1)
    reports = [
        evaluate_columns(
            Columns(columns.labels, scores[:, j], columns.weights), name=path, label=args.label,
            score=name, weight=args.weight, pos_label=args.pos_label, ties=args.ties,
            recall_grid=args.recall_grid, ci=_ci_options(args) if args.ci else None, targets=targets,
            prevalences=args.prevalence or (),
        )
        for j, name in enumerate(names)
    ]
    if len(reports) > 1:
        for report in reports:
            _print_warnings(report)
        if args.json:
            print(json.dumps({"models": {r.score_column: to_json_dict(r) for r in reports}}, indent=2,
                             allow_nan=False))
        else:
            print(format_side_by_side(reports, digits=args.digits, style=(
                "markdown" if args.markdown else "csv" if args.csv else "text")))
        return 0
    report = reports[0]
    if args.markdown or args.csv:
        _print_warnings(report)
        print((format_markdown if args.markdown else format_csv)(report, digits=args.digits))
        return 0
    return _emit(report, args, to_json_dict, format_text)


def _evaluate_multiclass(args: argparse.Namespace) -> int:
    if args.markdown or args.csv or args.at_recall or args.at_precision or args.at_threshold:
        raise CliError("--markdown, --csv and --at-* apply to binary input (--score); with "
                       "--class-columns use the text or --json output")
    if args.ci:
        raise CliError("--ci applies to binary input (--score); for multi-class data use "
                       "precall.stats.bootstrap_ci with a macro average from Python")
    if args.pos_label is not None:
        raise CliError("--pos-label applies only with --score; with --class-columns each "
                       "class is in turn the positive one")
    if args.prevalence:
        raise CliError("--prevalence applies to binary input (--score); with --class-columns each "
                       "class has its own prevalence")
    classes = _parse_class_columns(args.class_columns)
    methods = list(precall.AP_METHODS) if args.method is None else list(dict.fromkeys(args.method))
    path = args.file
    columns = read_file(path, label=args.label, score_columns=[(c, "--class-columns") for c in classes],
                        weight=args.weight, classes=classes, delimiter=args.delimiter)
    report = evaluate_classes(
        columns, name=path, label=args.label, classes=classes, weight=args.weight,
        methods=methods, ties=args.ties, recall_grid=args.recall_grid,
    )
    return _emit(report, args, multiclass_json_dict, format_multiclass_text)



def register(sub: Any) -> None:
    ev = sub.add_parser(
        "evaluate",
        help="evaluate the scores in a CSV/TSV file",
        description="Read a CSV (or .tsv; optionally .gz) file with a header line. Binary "
        "(--score COL): print every average-precision convention, ROC-AUC, the prevalence, "
        "the counts and the best-F1 operating point, from one precall.evaluate call. "
        "Multi-class (--class-columns C1,C2,...: one score column per class, the class of a "
        "column being its name, so every label must be one of those names): print a "
        "per-class table (support, AP by every convention, one-vs-rest ROC-AUC) and the "
        "macro/weighted/micro AP, the macro/weighted/micro one-vs-rest ROC-AUC and the macro "
        "one-vs-one (Hand & Till) ROC-AUC. Every row is used; a malformed row is an error "
        "(exit code 2) naming its line and column.",
    )
    _add_file_arguments(ev)
    scores = ev.add_mutually_exclusive_group(required=True)
    scores.add_argument("--score", metavar="COL", action="append",
                        help="binary: column with the scores (higher = more likely positive); "
                        "repeat to show several models side by side")
    scores.add_argument("--class-columns", metavar="C1,C2,...",
                        help="multi-class: comma-separated score columns, one per class; the "
                        "class of each column is its name, and every label in --label must "
                        "be one of these names")
    ev.add_argument("--method", choices=precall.AP_METHODS, action="append", metavar="M",
                    help="with --class-columns: show only this AP convention (repeatable; "
                    "default every one: " + ", ".join(precall.AP_METHODS) + ")")
    ev.add_argument("--ties", choices=TIES, default="group",
                    help="group: equal scores share one threshold (scikit-learn, default); "
                    "stable: one operating point per row, equal scores in file order")
    ev.add_argument("--recall-grid", choices=RECALL_GRIDS, default="reference",
                    help="recall grid of voc2007/coco: the reference codes' float grids "
                    "(default) or exact k/10, k/100")
    fmt = ev.add_mutually_exclusive_group()
    fmt.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    fmt.add_argument("--markdown", action="store_true", help="binary: print a markdown table")
    fmt.add_argument("--csv", action="store_true", help="binary: print CSV (metric, value, ci_low, ci_high)")
    ev.add_argument("--at-recall", type=_unit, action="append", metavar="R",
                    help="binary: also report the operating point reaching recall R (repeatable)")
    ev.add_argument("--at-precision", type=_unit, action="append", metavar="P",
                    help="binary: the operating point of highest recall with precision >= P")
    ev.add_argument("--at-threshold", type=_finite, action="append", metavar="T",
                    help="binary: the operating point predicting positive at score >= T")
    ev.add_argument("--digits", type=_digits, default=6, metavar="N",
                    help="decimals in the text output (default 6)")
    ev.add_argument("--prevalence", type=_prevalence, action="append", metavar="PI",
                    help="binary, in memory (not --stream): also report every AP at this prevalence (share "
                    "of positives, e.g. the deployment rate 0.001), negatives reweighted; repeatable")
    ev.add_argument("--stream", action="store_true",
                    help="binary: read the file in chunks through an exact streaming accumulator (memory "
                    "grows with the distinct scores, not the rows): for files larger than memory")
    ev.add_argument("--chunk-rows", type=_int_in(1), default=1 << 18, metavar="N",
                    help="with --stream: rows per chunk of text files (default 262144)")
    ev.add_argument("--engine", choices=("memory", "stream", "dask"), default="memory",
                    help="binary, one --score: 'memory' (default) loads the columns; 'stream' is --stream; "
                    "'dask' reads the file with dask.dataframe and evaluates exactly by score ranges on a "
                    "Dask cluster (the 'dask' extra)")
    ev.add_argument("--scheduler", metavar="ADDRESS",
                    help="with --engine dask: a distributed scheduler's address (tcp://host:8786), or "
                    "'threads' / 'processes' / 'synchronous' for dask's local schedulers; default: a "
                    "local cluster of one worker process per core")
    ev.add_argument("--ci", action="store_true",
                    help="binary: add a confidence interval to every number (bootstrap for "
                    "AP, DeLong for ROC-AUC; see --level, --ci-method, --resamples, --seed)")
    _add_ci_options(ev)
    ev.set_defaults(func=cmd_evaluate)
