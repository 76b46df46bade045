"""The ``precall`` command line: ``precall evaluate FILE.csv ...``, ``precall compare`` and ``precall demo``.

This module is presentation only.  It reads a delimited text file with the
standard library, checks every row (a bad row is an error naming the file, the
line and the column; no row is ever dropped), hands the columns to
:func:`precall.evaluate` and prints the :class:`precall.Evaluation` it returns.
With ``--class-columns C1,C2,...`` (one score column per class, named by its
class) it instead calls :func:`precall.average_precision` and
:func:`precall.roc_auc` with ``labels=[C1, C2, ...]`` for the per-class values
and their averages.  ``--ci`` adds intervals from :mod:`precall.stats`
(bootstrap for AP, DeLong for ROC-AUC); ``precall compare`` runs its paired
tests on two or more score columns.  It computes no metric itself.

Exit codes: 0 success, 2 bad usage or bad input (one line on stderr, never a
traceback), 130 interrupted.
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import dataclasses
import functools
import importlib.util
import itertools
import json
import math
import os
import sys
import warnings
from collections import Counter
from dataclasses import dataclass
from importlib import resources
from typing import Any, Callable, Iterator, Sequence

import numpy as np

import precall
from precall.readers import Columns, InputError, label_text, iter_file, read_delimited, read_file

__all__ = ["main"]

PROG = "precall"
TIES = ("group", "stable")
RECALL_GRIDS = ("reference", "exact")

TIES_HELP = {
    "group": "equal scores share one threshold, as scikit-learn",
    "stable": "one operating point per row, equal scores in file order",
}

DEMO_DATA = "yardstick_two_class_example.csv"
DEMO_SOURCE = (
    "two_class_example from the R package yardstick (tidymodels), MIT license;\n"
    "  https://github.com/tidymodels/yardstick  (500 rows: truth Class1/Class2, the\n"
    "  predicted probabilities Class1 and Class2, and case_weight, the case weights of\n"
    "  yardstick's tests); bundled as precall/data/" + DEMO_DATA
)
SEED_EXAMPLE = {
    "y_score": [0.65, 0.1, 0.15, 0.43, 0.97, 0.24, 0.82, 0.7, 0.32, 0.84],
    "y_true": [0, 0, 1, 0, 1, 1, 0, 1, 1, 1],
}
SEED_SOURCE = (
    "Worked example 1 of the seed tutorials on Detectron's voc_ap (voc_eval.py):\n"
    "  10 samples, no tied scores; evaluated with ties='stable' (one point per sample)"
)

_MAX_LABELS_SHOWN = 10


class CliError(Exception):
    """A user-facing error: printed as one line, exit code 2."""


# ---------------------------------------------------------------------------
# the positive label
def _default_positive(seen: list[str]) -> str | None:
    """The positive label when the labels are {0, 1}, {-1, 1} or {false, true}; else None."""
    lowered = {s.lower() for s in seen}
    if len(lowered) == len(seen) and lowered <= {"true", "false"}:
        for s in seen:
            if s.lower() == "true":
                return s
        return "true"
    try:
        values = [float(s) for s in seen]
    except ValueError:
        return None
    if len(set(values)) != len(seen):  # e.g. both "1" and "1.0": ambiguous
        return None
    if set(values) <= {0.0, 1.0} or set(values) <= {-1.0, 1.0}:
        for s, v in zip(seen, values):
            if v == 1.0:
                return s
        return "1"
    return None


def _show_labels(counts: Counter[str]) -> str:
    items = [
        f"{lab!r} ({n} row{'' if n == 1 else 's'})"
        for lab, n in sorted(counts.items())[:_MAX_LABELS_SHOWN]
    ]
    more = f", ... ({len(counts)} labels in all)" if len(counts) > _MAX_LABELS_SHOWN else ""
    return ", ".join(items) + more


def resolve_pos_label(counts: Counter[str], pos_label: str | None, column: str, name: str) -> str:
    """The positive label, as a string, or :class:`CliError` asking for ``--pos-label``."""
    if pos_label is not None:
        if pos_label not in counts:
            raise CliError(
                f"{name}: column {column!r}: --pos-label {pos_label!r} does not occur; "
                f"the labels seen are {_show_labels(counts)}"
            )
        return pos_label
    positive = _default_positive(sorted(counts))
    if positive is None:
        raise CliError(
            f"{name}: column {column!r}: the labels are not {{0, 1}}, {{-1, 1}} or "
            f"{{false, true}}, so the positive class is ambiguous; the labels seen are "
            f"{_show_labels(counts)}; name the positive one with --pos-label"
        )
    return positive


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
class CiOptions:
    """How ``--ci`` and ``compare`` compute intervals and tests."""

    level: float = 0.95
    method: str = "percentile"  # bootstrap interval: percentile or bca
    n_resamples: int = 2000
    seed: int | None = 0

    def describe(self, weighted: bool) -> str:
        roc = "bootstrap for ROC-AUC (weighted data)" if weighted else "DeLong for ROC-AUC"
        seed = "no seed" if self.seed is None else f"seed {self.seed}"
        return (
            f"{self.level:.4g} intervals: {self.n_resamples} stratified bootstrap resamples "
            f"({self.method}, {seed}) for AP; {roc}"
        )


@dataclass(frozen=True)
class Intervals:
    """``--ci``: an interval for every AP convention and for ROC-AUC, from :mod:`precall.stats`."""

    options: CiOptions
    average_precision: dict[str, precall.stats.ConfidenceInterval]
    roc_auc: precall.stats.ConfidenceInterval


def _bootstrap_kwargs(ci: CiOptions) -> dict[str, Any]:
    return {"n_resamples": ci.n_resamples, "level": ci.level, "method": ci.method,
            "random_state": ci.seed}


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
    """Per-class and averaged AP / ROC-AUC via :func:`precall.average_precision` and
    :func:`precall.roc_auc` (``labels=classes``); no metric is computed here."""
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
        try:
            per_class_ap: dict[str, list[float]] = {}
            average_ap: dict[str, dict[str, float]] = {a: {} for a in AVERAGES}
            for m in methods:
                ap_kw = dict(common, method=m, ties=ties, recall_grid=recall_grid)
                per_class_ap[m] = [
                    float(v) for v in precall.average_precision(y, scores, average=None, **ap_kw)
                ]
                for a in AVERAGES:
                    average_ap[a][m] = float(
                        precall.average_precision(y, scores, average=a, **ap_kw)
                    )
            per_class_auc = [
                float(v)
                for v in precall.roc_auc(y, scores, average=None, multi_class="ovr", **common)
            ]
            ovr = {
                a: float(precall.roc_auc(y, scores, average=a, multi_class="ovr", **common))
                for a in AVERAGES
            }
            ovo = float(precall.roc_auc(y, scores, average="macro", multi_class="ovo", **common))
        except (ValueError, TypeError) as exc:
            raise CliError(f"{name}: {exc}") from None
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


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    """Aligned lines: the first column left-aligned, the others right-aligned."""
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]

    def line(cells: list[str]) -> str:
        first = cells[0].ljust(widths[0])
        rest = [c.rjust(wd) for c, wd in zip(cells[1:], widths[1:])]
        return "  ".join([first, *rest]).rstrip()

    return [line(header), *(line(r) for r in rows)]


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


def _parse_class_columns(text: str) -> list[str]:
    names = [c.strip() for c in text.split(",")]
    if any(not c for c in names):
        raise CliError(f"--class-columns {text!r}: empty column name; give C1,C2,...")
    seen: set[str] = set()
    for c in names:
        if c in seen:
            raise CliError(f"--class-columns {text!r}: column {c!r} is given twice")
        seen.add(c)
    if len(names) < 2:
        raise CliError(
            f"--class-columns {text!r}: needs at least two columns (one per class); "
            "for one score column use --score"
        )
    return names


def _print_warning_messages(source: str, messages: Sequence[str]) -> None:
    for message in messages:
        first = message.splitlines()[0] if message else message
        print(f"{PROG}: warning: {source}: {first}", file=sys.stderr)


def _print_warnings(report: Report | MultiReport | Comparison) -> None:
    _print_warning_messages(report.source, report.warnings)


def _emit(report: Any, args: argparse.Namespace, as_json: Callable[[Any], dict[str, Any]],
          as_text: Callable[..., str]) -> int:
    """Warnings to stderr, then the report as JSON (``--json``) or text; exit code 0."""
    _print_warnings(report)
    if args.json:
        print(json.dumps(as_json(report), indent=2, allow_nan=False))
    else:
        print(as_text(report, digits=args.digits))
    return 0


# ---------------------------------------------------------------------------
# compare: paired tests of several score columns
@dataclass(frozen=True)
class Comparison:
    """``precall compare``: every pair of score columns, every metric, from :mod:`precall.stats`."""

    source: str
    n_rows: int
    label_column: str
    score_columns: list[str]
    weight_column: str | None
    pos_label: str
    label_counts: dict[str, int]
    options: CiOptions
    ties: str
    rows: list[tuple[str, str, str, precall.stats.PairedComparison]]  # (A, B, metric, test)
    warnings: list[str]


COMPARE_METRICS = ("roc_auc", *precall.AP_METHODS)


def compare_columns(
    columns: Columns, *, name: str, label: str, score_columns: list[str], weight: str | None,
    pos_label: str | None, metrics: list[str], ties: str, recall_grid: str, ci: CiOptions,
) -> Comparison:
    """Paired tests of every pair of score columns: DeLong (ROC-AUC, unweighted
    data) and the paired bootstrap (every chosen metric)."""
    counts = Counter(columns.labels)
    positive = resolve_pos_label(counts, pos_label, label, name)
    labels = np.array(columns.labels)
    rows = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            for (i, a), (j, b) in itertools.combinations(enumerate(score_columns), 2):
                sa, sb = columns.scores[:, i], columns.scores[:, j]
                for metric in metrics:
                    if metric == "roc_auc":
                        f = functools.partial(precall.roc_auc, pos_label=positive)
                        if columns.weights is None:
                            test = precall.stats.roc_auc_test(labels, sa, sb, level=ci.level,
                                                              pos_label=positive)
                            rows.append((a, b, "ROC-AUC", test))
                    else:
                        f = functools.partial(precall.average_precision, method=metric, ties=ties,
                                              recall_grid=recall_grid, pos_label=positive)
                    test = precall.stats.bootstrap_test(f, labels, sa, sb, sample_weight=columns.weights,
                                                        **_bootstrap_kwargs(ci))
                    rows.append((a, b, "ROC-AUC" if metric == "roc_auc" else f"AP {metric}", test))
        except (ValueError, TypeError) as exc:
            raise CliError(f"{name}: {exc}") from None
    return Comparison(
        name, len(columns.labels), label, list(score_columns), weight, positive,
        dict(sorted(counts.items())), ci, ties, rows, [str(w.message) for w in caught],
    )


def _describe_tests(report: Comparison) -> str:
    o = report.options
    seed = "no seed" if o.seed is None else f"seed {o.seed}"
    delong = "" if report.weight_column else "; DeLong for ROC-AUC too"
    return (
        f"paired, two-sided, {o.level:.4g} intervals; {o.n_resamples} stratified bootstrap "
        f"resamples ({o.method}, {seed}) for every metric{delong}; ties {report.ties}"
    )


def format_comparison_text(report: Comparison, digits: int = 4) -> str:
    """Input summary and one aligned row per (pair, metric, method)."""
    pos = report.pos_label
    negatives = {k: v for k, v in report.label_counts.items() if k != pos}
    lines = [
        f"file        {report.source} ({report.n_rows} rows)",
        f"label       column {report.label_column!r}: positive {pos!r} "
        f"({report.label_counts.get(pos, 0)} rows), negative "
        f"{_show_labels(Counter(negatives)) if negatives else 'none'}",
        "scores      " + ", ".join(repr(c) for c in report.score_columns),
        "weight      " + (f"column {report.weight_column!r}" if report.weight_column else "none"),
        "tests       " + _describe_tests(report),
        "",
    ]
    level = f"{report.options.level:.0%} CI of A - B"
    header = ["A", "B", "metric", "A value", "B value", "A - B", level, "z", "p", "method"]
    body = []
    for a, b, metric, t in report.rows:
        method = "DeLong" if t.method == "delong" else f"bootstrap {t.method}"
        body.append([
            a, b, metric, _fmt(t.estimate_a, digits), _fmt(t.estimate_b, digits),
            _fmt(t.difference, digits), f"[{_fmt(t.low, digits)}, {_fmt(t.high, digits)}]",
            _fmt(t.statistic, 3), f"{t.p_value:.3g}", method,
        ])
    lines += _table(header, body)
    return "\n".join(lines)


def comparison_json_dict(report: Comparison) -> dict[str, Any]:
    """One JSON-ready object: the input and every test."""
    tests = []
    for a, b, metric, t in report.rows:
        tests.append({
            "a": a, "b": b, "metric": metric, "method": t.method, "estimate_a": t.estimate_a,
            "estimate_b": t.estimate_b, "difference": t.difference, "low": t.low, "high": t.high,
            "level": t.level, "statistic": t.statistic, "p_value": t.p_value,
            "standard_error": t.standard_error, "n_resamples": t.n_resamples,
            "n_degenerate": t.n_degenerate,
        })
    return _json_safe({
        "input": {
            "file": report.source, "n_rows": report.n_rows, "label_column": report.label_column,
            "score_columns": report.score_columns, "weight_column": report.weight_column,
            "pos_label": report.pos_label, "label_counts": report.label_counts,
        },
        "bootstrap": {"method": report.options.method, "n_resamples": report.options.n_resamples,
                      "seed": report.options.seed, "stratified": True},
        "ties": report.ties,
        "tests": tests,
        "warnings": list(report.warnings),
    })


def _ci_options(args: argparse.Namespace) -> CiOptions:
    return CiOptions(args.level, args.ci_method, args.resamples, args.seed)


def cmd_compare(args: argparse.Namespace) -> int:
    scores = list(dict.fromkeys(args.score))
    if len(scores) < 2:
        raise CliError("compare needs at least two different --score columns")
    path = args.file
    columns = read_file(path, label=args.label, score_columns=[(c, "--score") for c in scores],
                        weight=args.weight, delimiter=args.delimiter)
    metrics = list(dict.fromkeys(args.metric)) if args.metric else ["roc_auc", "step"]
    report = compare_columns(
        columns, name=path, label=args.label, score_columns=scores, weight=args.weight,
        pos_label=args.pos_label, metrics=metrics, ties=args.ties, recall_grid=args.recall_grid,
        ci=_ci_options(args),
    )
    return _emit(report, args, comparison_json_dict, format_comparison_text)


# ---------------------------------------------------------------------------
# explain: the rank table and the terms of every convention
def _rank_rows(table: precall.ThresholdTable, digits: int) -> list[list[str]]:
    dtp = np.diff(table.tp, prepend=0)
    dfp = np.diff(table.fp, prepend=0)
    stable = table.ties == "stable"
    rows = []
    columns = zip(table.thresholds, dtp, dfp, table.tp, table.fp, table.tn, table.fn,
                  table.precision, table.recall, table.precision_envelope)
    for i, (thr, a, b, tp, fp, tn, fn, p, r, env) in enumerate(columns, 1):
        label = ("pos" if a > 0 else "neg") if stable else f"+{_fmt_count(a)} / -{_fmt_count(b)}"
        rows.append([str(i), f"{thr:.{digits}g}", label, _fmt_count(tp), _fmt_count(fp), _fmt_count(tn),
                     _fmt_count(fn), _fmt(p, digits), _fmt(r, digits), _fmt(env, digits)])
    return rows


def _term_rows(terms: Any, digits: int) -> list[list[str]]:
    """One row a term; grid conventions merge runs of equal precision."""
    w, p, c, r = terms.weight, terms.precision, terms.contributions, terms.recall
    if terms.method not in ("voc2007", "coco"):
        return [[_fmt(r[i], digits), _fmt(w[i], digits), _fmt(p[i], digits), _fmt(c[i], digits)]
                for i in range(len(terms))]
    rows = []
    start = 0
    for i in range(1, len(terms) + 1):
        if i == len(terms) or p[i] != p[start]:
            span = _fmt(r[start], 2) if i - 1 == start else f"{_fmt(r[start], 2)}..{_fmt(r[i - 1], 2)}"
            rows.append([f"{span} ({i - start} pt)", f"{i - start}/{len(terms)}", _fmt(p[start], digits),
                         _fmt(float(c[start:i].sum()), digits)])
            start = i
    return rows


def format_explanation(
    table: precall.ThresholdTable, *, source: str, label: str, score: str, pos_label: str,
    methods: list[str], recall_grid: str, max_rows: int, digits: int, prevalences: Sequence[float] = (),
) -> str:
    """The seed-style rank table, per convention the terms that sum to its AP, and
    what to read the AP against (:func:`format_context`)."""
    ties_text = "one row per sample, equal scores in file order" if table.ties == "stable" else \
        "one row per distinct score (label column: positives / negatives at that score)"
    lines = [
        f"file        {source}",
        f"label       column {label!r}, positive {pos_label!r}: {_fmt_count(table.n_pos)} positive, "
        f"{_fmt_count(table.n_neg)} negative",
        f"score       column {score!r}; ties {table.ties} ({ties_text})",
        "",
        "Rank table: predict positive at this row and above.",
    ]
    header = ["rank", "score", "label", "TP", "FP", "TN", "FN", "precision", "recall", "envelope"]
    rows = _rank_rows(table, digits)
    if len(rows) > max_rows:
        half = max_rows // 2
        hidden = len(rows) - 2 * half
        rows = rows[:half] + [["...", f"({hidden} rows)", *[""] * 8]] + rows[-half:]
    lines += _table(header, rows)
    lines += ["", "envelope = the best precision at this recall or beyond (VOC's interpolated precision)."]
    for m in methods:
        terms = table.ap_terms(m, recall_grid=recall_grid)
        convention = precall.CONVENTIONS[m]
        width_name = "share" if m in ("voc2007", "coco") else "recall gained"
        lines += [
            "",
            f"{m}: {convention.summary}",
            f"  AP = {convention.formula}",
        ]
        lines += ["  " + s for s in _table(["recall", width_name, "precision", "term"], _term_rows(terms, digits))]
        lines.append(f"  sum of {len(terms)} terms = {_fmt(terms.value, digits)}")
    lines += ["", "AP by convention: " + ", ".join(
        f"{m} {_fmt(table.average_precision(method=m, recall_grid=recall_grid), digits)}" for m in methods)]
    lines += ["", *format_context(table, methods=methods, recall_grid=recall_grid, digits=digits,
                                  prevalences=prevalences)]
    return "\n".join(lines)


def format_context(
    table: precall.ThresholdTable, *, methods: list[str], recall_grid: str, digits: int,
    prevalences: Sequence[float] = (),
) -> list[str]:
    """``explain``: the baseline, the minimum AP and the normalised AP of each
    convention, AUPRG, and the AP at each ``--prevalence`` (from ``table.evaluate()``)."""
    ev = table.evaluate(recall_grid=recall_grid, on_undefined="nan")
    at = at_prevalences(table, prevalences, recall_grid)
    lines = [
        "What to read the AP against:",
        f"  baseline (random ranking: precision = prevalence) {_fmt(ev.prevalence, digits)}",
        f"  min AP: the lowest AP any ranking of {_fmt_count(table.n_pos)} positives and "
        f"{_fmt_count(table.n_neg)} negatives gets (all negatives first; Boyd et al. 2012)",
        "  normalised AP = (AP - min AP) / (1 - min AP)",
    ]
    header = ["convention", "AP", "min AP", "normalised"] + [f"AP at {pi:g}" for pi, _ in at]
    rows = [[m, _fmt(ev.average_precision[m], digits), _fmt(ev.min_average_precision[m], digits),
             _fmt(ev.normalized_average_precision[m], digits),
             *(_fmt(e.average_precision[m], digits) for _, e in at)] for m in methods]
    lines += ["  " + s for s in _table(header, rows)]
    auprg = f"  AUPRG (area under the precision-recall-gain curve, Flach & Kull 2015) {_fmt(ev.auprg, digits)}"
    lines.append(auprg + "".join(f"; at prevalence {pi:g}: {_fmt(e.auprg, digits)}" for pi, e in at))
    return lines


def cmd_explain(args: argparse.Namespace) -> int:
    path = args.file
    columns = read_file(path, label=args.label, score_columns=[(args.score, "--score")],
                        weight=args.weight, delimiter=args.delimiter)
    positive = resolve_pos_label(Counter(columns.labels), args.pos_label, args.label, path)
    try:
        table = precall.threshold_table(np.array(columns.labels), columns.scores,
                                        sample_weight=columns.weights, pos_label=positive, ties=args.ties)
        if table.n_pos == 0:
            raise ValueError(f"no row has the positive label {positive!r}: AP has no terms")
        methods = list(dict.fromkeys(args.method)) if args.method else list(precall.AP_METHODS)
        text = format_explanation(table, source=path, label=args.label, score=args.score,
                                  pos_label=positive, methods=methods, recall_grid=args.recall_grid,
                                  max_rows=args.max_rows, digits=args.digits,
                                  prevalences=args.prevalence or ())
    except (ValueError, TypeError) as exc:
        raise CliError(f"{path}: {exc}") from None
    print(text)
    return 0


# ---------------------------------------------------------------------------
# plot
PLOT_FORMATS = (".png", ".svg", ".pdf")


def cmd_plot(args: argparse.Namespace) -> int:
    out = args.output
    suffix = os.path.splitext(out)[1].lower()
    if suffix not in PLOT_FORMATS:
        raise CliError(f"-o {out!r}: the file name must end in {', '.join(PLOT_FORMATS)}")
    if args.class_columns is not None and args.pos_label is not None:
        raise CliError("--pos-label applies only with --score; with --class-columns each class is "
                       "in turn the positive one")
    try:
        from matplotlib.figure import Figure
    except ImportError:
        raise CliError("precall plot needs matplotlib, the 'plot' extra: "
                       "pip install 'precall[plot]'") from None
    from . import plot

    path = args.file
    if args.class_columns is not None:
        classes = _parse_class_columns(args.class_columns)
        columns = read_file(path, label=args.label, score_columns=[(c, "--class-columns") for c in classes],
                            weight=args.weight, classes=classes, delimiter=args.delimiter)
        y_true: Any = np.array(columns.labels)
        y_score: Any = columns.scores
        common: dict[str, Any] = {"labels": classes}
    else:
        names = list(dict.fromkeys(args.score))
        columns = read_file(path, label=args.label, score_columns=[(c, "--score") for c in names],
                            weight=args.weight, delimiter=args.delimiter)
        y_true = np.array(columns.labels)
        positive = resolve_pos_label(Counter(columns.labels), args.pos_label, args.label, path)
        scores = columns.scores.reshape(len(columns.labels), -1)
        y_score = {name: scores[:, j] for j, name in enumerate(names)}
        common = {"pos_label": positive}
    kinds = ["pr", "roc"] if args.kind == "both" else [args.kind]
    fig = Figure(figsize=(5.8 * len(kinds), 5.8))
    axes = fig.subplots(1, len(kinds), squeeze=False)[0]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            for ax, kind in zip(axes, kinds):
                if kind == "pr":
                    if args.prevalence:  # one model at its own and each given prevalence
                        plot.pr_curve(y_true, y_score, sample_weight=columns.weights, ties=args.ties,
                                      method=args.method, iso_f1=args.iso_f1, ax=ax,
                                      prevalence=list(dict.fromkeys(args.prevalence)), **common)
                        continue
                    plot.pr_curve(y_true, y_score, sample_weight=columns.weights, ties=args.ties,
                                  method=args.method, envelope=args.envelope,
                                  eleven_point=args.eleven_point, iso_f1=args.iso_f1, ax=ax, **common)
                else:
                    plot.roc_curve(y_true, y_score, sample_weight=columns.weights, max_fpr=args.max_fpr,
                                   ax=ax, **common)
        except (ValueError, TypeError) as exc:
            raise CliError(f"{path}: {exc}") from None
    if args.title:
        fig.suptitle(args.title)
    fig.tight_layout()
    try:
        fig.savefig(out, dpi=args.dpi, bbox_inches="tight")
    except OSError as exc:
        raise CliError(f"-o {out!r}: cannot write the figure: {exc.strerror or exc}") from None
    _print_warning_messages(path, [str(w.message) for w in caught])
    print(f"wrote {out}", file=sys.stderr)
    return 0


# ---------------------------------------------------------------------------
# detection
def cmd_detection_coco(args: argparse.Namespace) -> int:
    from . import detection

    for path in (args.gt, args.results):
        if not os.path.isfile(path):
            raise CliError(f"{path}: no such file")
    try:
        data = detection.load_coco(args.gt, args.results)
        ev = detection.evaluate_coco(data, max_dets=tuple(args.max_dets), ties=args.ties, iou_type=args.iou_type,
                                     progress=_terminal_progress("evaluating", len(data.dt_score)))
    except (ValueError, TypeError) as exc:
        raise CliError(str(exc)) from None
    if args.plot:
        _plot_classes(ev, args.plot)
    if args.json:
        out = {"stats": dict(zip(detection.CocoEvaluation.STAT_NAMES, ev.stats.tolist())),
               "max_dets": list(ev.max_dets), "ties": args.ties, "per_class": ev.per_class}
        print(json.dumps(_json_safe(out), indent=2, allow_nan=False))
        return 0
    lines = [f"ground truth {args.gt}; results {args.results}; ties {args.ties}", "", ev.to_text()]
    if args.per_class:
        rows = [[str(r["name"]), _fmt(r["AP"], 3), _fmt(r["AP50"], 3), _fmt(r["AP75"], 3), str(r["n_gt"]),
                 str(r["n_det"])] for r in ev.per_class]
        lines += ["", *_table(["class", "AP", "AP50", "AP75", "#GT", "#detections"], rows),
                  "(AP -1: no ground truth of that class)"]
    print("\n".join(lines))
    return 0


def _terminal_progress(label: str, size: int) -> Callable[[float], None] | None:
    """``\rLABEL: 42%`` on a terminal for large inputs (more than 100 000 items); None otherwise."""
    if size <= 100_000 or not sys.stderr.isatty():
        return None
    shown = [-1]

    def report(fraction: float) -> None:
        pct = int(100 * fraction)
        if pct != shown[0]:
            shown[0] = pct
            end = "\n" if pct >= 100 else ""
            print(f"\r{label}: {pct:3d}%", end=end, file=sys.stderr, flush=True)

    return report


def _plot_classes(ev: Any, folder: str) -> None:
    """One PNG per class with ground truth: its PR curves at IoU 0.5 and 0.75 (``--plot DIR``)."""
    if importlib.util.find_spec("matplotlib") is None:
        raise CliError("--plot needs matplotlib, the 'plot' extra: pip install 'precall[plot]'")
    from matplotlib.figure import Figure

    from . import plot

    try:
        os.makedirs(folder, exist_ok=True)
    except OSError as exc:
        raise CliError(f"--plot {folder!r}: cannot create the folder: {exc.strerror or exc}") from None
    written = 0
    for row in ev.per_class:
        if row["n_gt"] == 0:
            continue
        fig = Figure(figsize=(5.5, 5.5))
        ax = fig.subplots()
        plot.setup_pr_axes(ax)
        drawn = 0
        for iou in (0.5, 0.75):
            try:
                table = ev.threshold_table(row["id"], iou_threshold=iou)
            except ValueError:  # no counted detection at this IoU
                continue
            plot.draw_pr(ax, table, label=f"IoU {iou:g}", method="coco")
            drawn += 1
        ax.set_title(f"{row['name']} ({row['n_gt']} ground truths)")
        if drawn:
            ax.legend(loc="lower left", fontsize=8)
        else:
            ax.text(0.5, 0.5, "no detection of this class", ha="center", va="center")
        safe = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in str(row["name"]))
        fig.savefig(os.path.join(folder, f"{row['id']}_{safe}.png"), dpi=90)
        written += 1
    print(f"wrote {written} figures to {folder}", file=sys.stderr)


def cmd_detection_voc(args: argparse.Namespace) -> int:
    from . import detection

    try:
        if args.protocol == "voc":
            data = detection.load_voc(args.annotations, args.detections, box_format=args.box_format)
        else:
            data = detection.load_text(args.gt_dir, args.det_dir, box_format=args.box_format)
        ev = detection.evaluate_voc(data, iou_threshold=args.iou, method=args.metric,
                                    pixel_offset=args.pixel_offset, inclusive=args.inclusive, ties=args.ties)
    except (ValueError, TypeError, OSError) as exc:
        raise CliError(str(exc)) from None
    if args.json:
        print(json.dumps(_json_safe({"ap": {str(k): v for k, v in ev.ap.items()}, "mAP": ev.map,
                                     "method": ev.method, "iou_threshold": ev.iou_threshold,
                                     "n_gt": {str(k): v for k, v in ev.n_gt.items()}}), indent=2))
    else:
        print(ev.to_text())
    return 0


# ---------------------------------------------------------------------------
# report
def cmd_report(args: argparse.Namespace) -> int:
    out = args.output
    if not out.lower().endswith((".html", ".htm")):
        raise CliError(f"-o {out!r}: the report is HTML; the file name must end in .html")
    if importlib.util.find_spec("matplotlib") is None:
        raise CliError("precall report needs matplotlib, the 'plot' extra: pip install 'precall[plot]'")
    from .report import html_report

    path = args.file
    names = list(dict.fromkeys(args.score))
    columns = read_file(path, label=args.label, score_columns=[(c, "--score") for c in names],
                        weight=args.weight, delimiter=args.delimiter)
    positive = resolve_pos_label(Counter(columns.labels), args.pos_label, args.label, path)
    scores = columns.scores.reshape(len(columns.labels), -1)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            text = html_report(
                np.array(columns.labels), {n: scores[:, j] for j, n in enumerate(names)},
                sample_weight=columns.weights, pos_label=positive, ties=args.ties,
                title=args.title or f"precall report: {os.path.basename(path)}", source=path,
                label_column=args.label, rank_rows=args.rank_rows, max_fpr=args.max_fpr,
            )
        except (ValueError, TypeError) as exc:
            raise CliError(f"{path}: {exc}") from None
    try:
        with open(out, "w", encoding="utf-8") as fh:
            fh.write(text)
    except OSError as exc:
        raise CliError(f"-o {out!r}: cannot write the report: {exc.strerror or exc}") from None
    _print_warning_messages(path, [str(w.message) for w in caught])
    print(f"wrote {out}", file=sys.stderr)
    return 0


# ---------------------------------------------------------------------------
# commands
def _check_single_binary(args: argparse.Namespace, option: str) -> None:
    if args.class_columns is not None or len(args.score) != 1:
        raise CliError(f"{option} takes one --score column (binary input)")
    if args.ties != "group" or args.ci or args.at_recall or args.at_precision or args.at_threshold:
        raise CliError(f"{option} evaluates with grouped ties and no --ci / --at-*; drop those options")


Evaluations = tuple[precall.Evaluation, tuple[tuple[float, precall.Evaluation], ...]]


def _evaluate_stream(args: argparse.Namespace) -> tuple[Evaluations, Counter[str], str]:
    """``--stream``: the file in chunks through an exact :class:`precall.Accumulator`."""
    path, score = args.file, args.score[0]
    counts: Counter[str] = Counter()
    acc = positive = None
    for chunk in iter_file(path, label=args.label, score_columns=[(score, "--score")], weight=args.weight,
                           delimiter=args.delimiter, chunk_rows=args.chunk_rows):
        counts.update(chunk.labels)
        if acc is None:
            positive = resolve_pos_label(Counter(chunk.labels), args.pos_label, args.label, path)
            acc = precall.Accumulator(pos_label=positive)
        try:
            acc.update(np.array(chunk.labels), chunk.scores, sample_weight=chunk.weights)
        except (ValueError, TypeError) as exc:
            raise CliError(f"{path}: {exc}") from None
    if acc is None:
        raise CliError(f"{path}: no data rows")
    if resolve_pos_label(counts, args.pos_label, args.label, path) != positive:
        raise CliError(f"{path}: column {args.label!r}: the labels of the whole file do not give the "
                       f"positive label of the first chunk ({positive!r}); name it with --pos-label")
    prevalences = list(dict.fromkeys(args.prevalence or ()))
    try:  # from the steps, computed once: the full table is never built
        evaluation, *at = acc.evaluations([None, *prevalences], recall_grid=args.recall_grid)
    except ValueError as exc:
        raise CliError(f"{path}: {exc}") from None
    return (evaluation, tuple(zip(prevalences, at))), counts, positive  # type: ignore[return-value]


_DASK_SCHEDULERS = ("synchronous", "threads", "processes")


def _evaluate_dask(args: argparse.Namespace) -> tuple[Evaluations, Counter[str], str]:
    """``--engine dask``: the file read by dask.dataframe, evaluated by score ranges on a
    Dask cluster (a local one by default, ``--scheduler`` an address or a local scheduler)."""
    try:
        import dask
        import dask.dataframe as dd
        import pandas

        import precall.dask as pdask
    except ImportError:
        raise CliError("--engine dask needs the 'dask' extra: pip install 'precall[dask]'") from None
    path, score = args.file, args.score[0]
    if "://" not in path and not os.path.exists(path):  # remote paths are for the workers to read
        raise CliError(f"{path}: no such file")
    columns = [args.label, score] + ([args.weight] if args.weight else [])
    lower = path.lower()
    try:
        if lower.endswith((".parquet", ".pq", "/")) or os.path.isdir(path):  # a file or a folder of them
            frame = dd.read_parquet(path, columns=columns, blocksize="64MiB")
        elif lower.endswith((".jsonl", ".jsonl.gz", ".ndjson")):
            frame = dd.read_json(path, lines=True, blocksize=None if lower.endswith(".gz") else 1 << 26)
        elif lower.endswith((".csv", ".tsv", ".txt", ".csv.gz", ".tsv.gz")):
            sep = args.delimiter or ("\t" if ".tsv" in lower else ",")
            frame = dd.read_csv(path, sep=sep, dtype={args.label: str},
                                blocksize=None if lower.endswith(".gz") else "64MiB")
        else:
            raise CliError(f"{path}: --engine dask reads Parquet, CSV / TSV and JSON Lines files; use --stream "
                           "for other formats")
        missing = [c for c in columns if c not in frame.columns]
        if missing:
            raise CliError(f"{path}: no column {missing[0]!r}; the columns are {list(frame.columns)}")
        frame = frame[columns]
    except (ValueError, OSError, KeyError) as exc:
        raise CliError(f"{path}: {exc}") from None
    with _dask_scheduler(dask, args.scheduler):
        raw = frame[args.label].value_counts(dropna=False).compute()
        counts: Counter[str] = Counter()
        texts = {}
        for value, n in raw.items():
            if pandas.isna(value):
                raise CliError(f"{path}: column {args.label!r}: {n} rows have no label; fill or drop them")
            texts[value] = label_text(value)
            counts[texts[value]] += int(n)
        positive = resolve_pos_label(counts, args.pos_label, args.label, path)
        is_positive = frame[args.label].isin([v for v, text in texts.items() if text == positive])
        weight = frame[args.weight] if args.weight else None
        prevalences = list(dict.fromkeys(args.prevalence or ()))
        try:  # one pass: every prevalence reduces the same range steps
            evaluation, *at = pdask.evaluations(is_positive, frame[score], sample_weight=weight, pos_label=True,
                                                recall_grid=args.recall_grid, prevalences=[None, *prevalences])
        except (ValueError, TypeError) as exc:
            raise CliError(f"{path}: {exc}") from None
    return (evaluation, tuple(zip(prevalences, at))), counts, positive


@contextlib.contextmanager
def _dask_scheduler(dask: Any, scheduler: str | None) -> Iterator[None]:
    """A local Dask cluster for the evaluation (default), a named local scheduler, or an address."""
    if scheduler in _DASK_SCHEDULERS:
        with dask.config.set(scheduler=scheduler):
            yield
        return
    try:
        import distributed
    except ImportError:
        raise CliError("--engine dask without a local --scheduler needs distributed: pip install "
                       "'precall[dask]'") from None
    if scheduler is None:
        with distributed.LocalCluster(n_workers=os.cpu_count() or 1, threads_per_worker=1, processes=True,
                                      dashboard_address=None, silence_logs=40) as cluster, \
                distributed.Client(cluster):
            yield
        return
    try:
        client = distributed.Client(scheduler, timeout=30)
    except (OSError, ValueError, TimeoutError) as exc:
        raise CliError(f"--scheduler {scheduler}: cannot connect: {exc}") from None
    with client:
        yield


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


def _demo_table(weight: str | None, ties: str) -> Report:
    name = f"precall/data/{DEMO_DATA}"
    resource = resources.files("precall") / "data" / DEMO_DATA
    with resource.open("r", encoding="utf-8-sig", newline="") as stream:
        columns = read_delimited(stream, name, label="truth", score_columns=[("Class1", "--score")],
                                 weight=weight)
    return evaluate_columns(
        columns, name=name, label="truth", score="Class1", weight=weight,
        pos_label="Class1", ties=ties, recall_grid="reference",
    )


def cmd_demo(args: argparse.Namespace) -> int:
    rule = "=" * 78
    out = [
        "precall demo: every average-precision convention, ROC-AUC and the best-F1 point,",
        "each block from one precall.evaluate call.",
        "",
        rule,
        "1. Bundled data, unweighted",
        "Data: " + DEMO_SOURCE,
        "Equivalent command:",
        "  precall evaluate two_class_example.csv --label truth --score Class1 --pos-label Class1",
        rule,
    ]
    unweighted = _demo_table(None, args.ties)
    out += [
        format_text(unweighted, args.digits),
        "",
        rule,
        "2. The same data weighted by case_weight",
        "  (... --weight case_weight)",
        rule,
    ]
    weighted = _demo_table("case_weight", args.ties)
    out += [format_text(weighted, args.digits), "", rule]

    y_true, y_score = SEED_EXAMPLE["y_true"], SEED_EXAMPLE["y_score"]
    table = precall.threshold_table(y_true, y_score, ties="stable")
    result = precall.evaluate(y_true, y_score, ties="stable")
    names = list(precall.AP_METHODS)
    width = max(len("convention"), *(len(m) for m in names))
    out += [
        "3. " + SEED_SOURCE,
        f"  scores = {y_score}",
        f"  labels = {y_true}",
        rule,
        "Rank table (precall.threshold_table(..., ties='stable')):",
        str(table),
        "",
        f"{'convention'.ljust(width)}  {'AP'.rjust(8)}  description",
    ]
    for m in names:
        out.append(f"{m.ljust(width)}  {_fmt(result.average_precision[m], args.digits).rjust(8)}  "
                   f"{_description(m)}")
    out.append(f"{'ROC-AUC'.ljust(width)}  {_fmt(result.roc_auc, args.digits).rjust(8)}")
    print("\n".join(out))
    for report in (unweighted, weighted):
        _print_warnings(report)
    return 0


# ---------------------------------------------------------------------------
# argument parsing
def _int_in(low: int, high: int | None = None) -> Callable[[str], int]:
    """An argparse type: an integer in [low, high] (no upper bound when high is None)."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be an integer; got {text!r}") from None
        if value < low or (high is not None and value > high):
            bound = f"between {low} and {high}" if high is not None else f"at least {low}"
            raise argparse.ArgumentTypeError(f"must be {bound}; got {value}")
        return value

    return parse


_digits = _int_in(1, 17)
_resamples = _int_in(2)


def _seed(text: str) -> int | None:
    return None if text.strip().lower() == "none" else _int_in(0)(text)


def _level(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number in (0, 1); got {text!r}") from None
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(f"must be in (0, 1), e.g. 0.95; got {text!r}")
    return value


def _unit(text: str) -> float:
    value = _finite(text)
    if not 0 <= value <= 1:
        raise argparse.ArgumentTypeError(f"must be in [0, 1]; got {text!r}")
    return value


def _prevalence(text: str) -> float:
    value = _finite(text)
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(f"must be in (0, 1), the share of positives, e.g. 0.001; got {text!r}")
    return value


def _finite(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number; got {text!r}") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"must be finite; got {text!r}")
    return value


def _add_file_arguments(p: argparse.ArgumentParser) -> None:
    """FILE, --label, --pos-label, --weight and --delimiter: every command that reads data."""
    p.add_argument("file", metavar="FILE",
                   help="the data: .csv, .tsv, .jsonl (optionally .gz), .parquet, .npz or .npy")
    p.add_argument("--label", required=True, metavar="COL", help="column with the true labels")
    p.add_argument("--pos-label", metavar="V",
                   help="the positive label, compared as text; every other label is negative. "
                   "Needed unless the labels are {0,1}, {-1,1} or {false,true}")
    p.add_argument("--weight", metavar="COL", help="column with non-negative sample weights")
    p.add_argument("--delimiter", metavar="CHAR",
                   help="field delimiter of text files (default: tab for .tsv/.tab, comma otherwise)")


def _add_ci_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--level", type=_level, default=0.95, metavar="L",
                   help="confidence level of the intervals (default 0.95)")
    p.add_argument("--ci-method", choices=precall.stats.BOOTSTRAP_METHODS, default="percentile",
                   help="bootstrap interval: percentile (default) or bca")
    p.add_argument("--resamples", type=_resamples, default=2000, metavar="N",
                   help="bootstrap resamples (default 2000)")
    p.add_argument("--seed", type=_seed, default=0, metavar="N",
                   help="random seed of the bootstrap (default 0, so runs repeat; 'none' for fresh "
                   "randomness)")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Precision-recall and ROC evaluation: every average-precision "
        "convention by name, from one sort.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {precall.__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

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

    cmp = sub.add_parser(
        "compare",
        help="paired tests: do two (or more) score columns differ on the same samples?",
        description="Compare score columns of one file on the same rows: for every pair, "
        "DeLong's test of the ROC-AUCs (pROC's roc.test; unweighted data) and a paired "
        "stratified bootstrap of each chosen metric, with the difference, its confidence "
        "interval, z and the two-sided p-value.",
    )
    _add_file_arguments(cmp)
    cmp.add_argument("--score", required=True, action="append", metavar="COL",
                     help="a score column (give two or more: --score A --score B)")
    cmp.add_argument("--metric", choices=COMPARE_METRICS, action="append", metavar="M",
                     help="roc_auc or an AP convention (repeatable; default roc_auc and step)")
    cmp.add_argument("--ties", choices=TIES, default="group", help="tie rule for AP (default group)")
    cmp.add_argument("--recall-grid", choices=RECALL_GRIDS, default="reference",
                     help="recall grid of voc2007/coco (default reference)")
    cmp.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    cmp.add_argument("--digits", type=_digits, default=4, metavar="N",
                     help="decimals in the text output (default 4)")
    _add_ci_options(cmp)
    cmp.set_defaults(func=cmd_compare)

    ex = sub.add_parser(
        "explain",
        help="the rank table and the terms that sum to each AP convention (small files)",
        description="Print the seed-style rank table (rank, score, label, TP, FP, TN, FN, "
        "precision, recall, precision envelope) and, for each AP convention, the terms "
        "(recall width x precision) whose sum is its value, so the differences between the "
        "conventions can be read off; then what to read the AP against: the baseline (prevalence), the "
        "minimum AP for the class counts, the normalised AP and AUPRG (and the AP at each --prevalence). "
        "Meant for small files: long tables are cut to --max-rows.",
    )
    _add_file_arguments(ex)
    ex.add_argument("--score", required=True, metavar="COL", help="column with the scores")
    ex.add_argument("--ties", choices=TIES, default="stable",
                    help="stable (default here, as the seed tables): one row per sample; group: one "
                    "row per distinct score")
    ex.add_argument("--method", choices=precall.AP_METHODS, action="append", metavar="M",
                    help="explain only this convention (repeatable; default all)")
    ex.add_argument("--recall-grid", choices=RECALL_GRIDS, default="reference",
                    help="recall grid of voc2007/coco (default reference)")
    ex.add_argument("--max-rows", type=_int_in(2), default=60, metavar="N",
                    help="rank-table rows shown (first and last N/2; default 60)")
    ex.add_argument("--digits", type=_digits, default=4, metavar="N",
                    help="decimals (default 4)")
    ex.add_argument("--prevalence", type=_prevalence, action="append", metavar="PI",
                    help="also show each AP at this prevalence (negatives reweighted); repeatable")
    ex.set_defaults(func=cmd_explain)

    det = sub.add_parser("detection", help="object-detection mAP (COCO, PASCAL VOC, text files)",
                         description="Object-detection evaluation on precall's ranking core.")
    det_sub = det.add_subparsers(dest="protocol", metavar="PROTOCOL", required=True)
    coco = det_sub.add_parser(
        "coco",
        help="COCO bbox or segm evaluation: pycocotools' 12 numbers, exactly",
        description="Evaluate COCO-format bbox results against COCO ground truth with pycocotools' "
        "rules (crowds, area ranges, max detections per image); print the 12 summary numbers "
        "(and a per-class table).",
    )
    coco.add_argument("gt", metavar="GT.json", help="COCO ground truth (images, annotations, categories)")
    coco.add_argument("results", metavar="RESULTS.json", help="COCO results: a list of detections")
    coco.add_argument("--per-class", action="store_true", help="also print AP, AP50, AP75 per class")
    coco.add_argument("--iou-type", choices=("bbox", "segm"), default="bbox",
                      help="box IoU (default) or mask IoU of the segmentations")
    coco.add_argument("--max-dets", type=_int_in(1), nargs=3, default=[1, 10, 100], metavar="N",
                      help="detections per image for the three AR numbers (default 1 10 100)")
    coco.add_argument("--ties", choices=("stable", "group"), default="stable",
                      help="stable: pycocotools' order (default); group: equal scores as one step")
    coco.add_argument("--json", action="store_true", help="print one JSON object")
    coco.add_argument("--plot", metavar="DIR", help="write each class's PR curves (IoU 0.5, 0.75) as PNGs in DIR")
    coco.set_defaults(func=cmd_detection_coco)
    voc = det_sub.add_parser("voc", help="PASCAL VOC AP per class and mAP (Detectron's voc_eval rules)",
                             description="PASCAL VOC XML annotations and detections (a per-class file pattern "
                             "with {} for the class name, lines 'image score x1 y1 x2 y2'; or a directory of "
                             "per-image files 'class score x y w h' in --box-format).")
    voc.add_argument("annotations", metavar="ANNOTATIONS_DIR")
    voc.add_argument("detections", metavar="DETECTIONS")
    text = det_sub.add_parser("text", help="per-image text files (class x y w h / class score x y w h)",
                              description="Ground truths 'class x y w h [difficult]' and detections "
                              "'class score x y w h', one file per image (the file name is the image).")
    text.add_argument("gt_dir", metavar="GT_DIR")
    text.add_argument("det_dir", metavar="DET_DIR")
    for sp, default_format in ((voc, "xyxy"), (text, "xywh")):
        sp.add_argument("--iou", type=_unit, default=0.5, help="IoU threshold (default 0.5)")
        sp.add_argument("--metric", choices=precall.AP_METHODS, default="voc2010",
                        help="AP convention (default voc2010; voc2007 for the 11-point metric)")
        sp.add_argument("--box-format", choices=("xyxy", "xywh", "cxcywh"), default=default_format,
                        help=f"coordinates of per-image text files (default {default_format})")
        sp.add_argument("--pixel-offset", type=float, default=1.0,
                        help="added to box sides in the IoU (VOC: 1, the default; 0: continuous boxes)")
        sp.add_argument("--inclusive", action="store_true", help="IoU >= threshold counts (default >)")
        sp.add_argument("--ties", choices=("stable", "group"), default="stable", help="tie rule (default stable)")
        sp.add_argument("--json", action="store_true", help="print one JSON object")
        sp.set_defaults(func=cmd_detection_voc)

    rp = sub.add_parser(
        "report",
        help="write one self-contained HTML report (summary, PR and ROC figures, rank tables)",
        description="Write one HTML file that needs nothing else to open: the summary table "
        "(every AP convention, ROC-AUC, best F1) of each score column, the PR and ROC figures "
        "(inline SVG) and each model's rank table at --rank-rows thresholds. Needs matplotlib "
        "(pip install 'precall[plot]').",
    )
    _add_file_arguments(rp)
    rp.add_argument("--score", required=True, action="append", metavar="COL",
                    help="a score column (repeat to compare several models)")
    rp.add_argument("-o", "--output", required=True, metavar="OUT.html", help="the HTML file to write")
    rp.add_argument("--ties", choices=TIES, default="group", help="tie rule (default group)")
    rp.add_argument("--rank-rows", type=_int_in(2, 10000), default=20, metavar="N",
                    help="rows of each rank table, evenly spaced by rank (default 20)")
    rp.add_argument("--max-fpr", type=_level, metavar="F", help="shade and quote the partial ROC-AUC")
    rp.add_argument("--title", help="the report's title")
    rp.set_defaults(func=cmd_report)

    pl = sub.add_parser(
        "plot",
        help="draw PR and/or ROC curves to a PNG, SVG or PDF file",
        description="Draw the precision-recall curve (the step curve step AP measures, with the "
        "prevalence baseline; optionally the VOC2010 envelope, the VOC2007 11 points and iso-F1 "
        "curves) and/or the ROC curve (area shaded, chance diagonal, optional max-FPR region) of "
        "one or more score columns, or of each class with --class-columns. Needs matplotlib "
        "(pip install 'precall[plot]').",
    )
    _add_file_arguments(pl)
    plot_scores = pl.add_mutually_exclusive_group(required=True)
    plot_scores.add_argument("--score", action="append", metavar="COL",
                             help="a score column (repeat to overlay several models)")
    plot_scores.add_argument("--class-columns", metavar="C1,C2,...",
                             help="multi-class: one score column per class, one curve per class")
    pl.add_argument("-o", "--output", required=True, metavar="OUT",
                    help="output file: .png, .svg or .pdf")
    pl.add_argument("--kind", choices=("pr", "roc", "both"), default="both",
                    help="which curves (default both, side by side)")
    pl.add_argument("--method", choices=precall.AP_METHODS, default="step",
                    help="AP convention quoted in the legend (default step)")
    pl.add_argument("--envelope", action="store_true", help="draw the VOC2010 precision envelope")
    pl.add_argument("--eleven-point", action="store_true", help="mark the VOC2007 11 points")
    pl.add_argument("--iso-f1", action="store_true", help="draw curves of equal F1")
    pl.add_argument("--max-fpr", type=_level, metavar="F",
                    help="shade FPR <= F on the ROC plot and quote the partial AUC")
    pl.add_argument("--ties", choices=TIES, default="group", help="tie rule (default group)")
    pl.add_argument("--prevalence", type=_prevalence, action="append", metavar="PI",
                    help="one --score: also draw the PR curve at prevalence PI (repeatable), each with its "
                    "baseline and unachievable region shaded; the ROC curve does not change")
    pl.add_argument("--title", help="figure title")
    pl.add_argument("--dpi", type=_int_in(20, 1200), default=110, help="resolution of a PNG (default 110)")
    pl.set_defaults(func=cmd_plot)

    demo = sub.add_parser(
        "demo",
        help="evaluate the bundled example data and the seed worked example",
        description="Evaluate the bundled yardstick two_class_example data (unweighted and "
        "weighted) and the 10-sample worked example of the seed tutorials.",
    )
    demo.add_argument("--ties", choices=TIES, default="group",
                      help="tie rule for the bundled data (default group)")
    demo.add_argument("--digits", type=_digits, default=6, metavar="N",
                      help="decimals in the output (default 6)")
    demo.set_defaults(func=cmd_demo)
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
