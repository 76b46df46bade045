"""The binary report every command that evaluates one score column prints (internal):
:class:`Report` (one :func:`precall.evaluate` with what the CLI knows of its input), how it
is computed (:func:`evaluate_columns`) and its text (:func:`format_text`); ``evaluate`` and
``demo`` use it."""

from __future__ import annotations

import dataclasses
import math
import warnings
from collections import Counter
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

import precall
from precall._core.text import percent, threshold_text
from precall.readers import Columns, Labels, label_counts

from ._common import TIES_HELP, CliError, resolve_pos_label, show_labels
from ._format import WIDTH, counted, describe, fit, fmt, fmt_count, fmt_interval, legend, render_table, wrap
from ._inputs import n_tied_rows, score_neighbours
from ._intervals import CiOptions, Intervals, compute_intervals, method_name


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
    n_tied: int = 0  # rows whose score another row shares (shown with --ties stable)
    #: the distinct scores next to each printed threshold (best F1, --at-*), so that the
    #: threshold prints with the digits that tell it from them (empty: not known, e.g. --stream)
    neighbours: dict[float, tuple[float, ...]] = dataclasses.field(default_factory=dict)

    def threshold(self, value: float, digits: int) -> str:
        """A threshold of this report as text (:func:`precall._core.text.threshold_text`)."""
        return threshold_text(value, self.neighbours.get(float(value)), digits)


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
    on_undefined: Any = "warn",
    overwrite_scores: bool = False,
) -> Report:
    """Run :func:`precall.evaluate` once on the columns read from ``name``
    (and, with ``ci``, :func:`compute_intervals`; with ``prevalences``, the
    table reweighted to each, :func:`at_prevalences`).  ``overwrite_scores``: the
    caller no longer needs the scores in row order, so that, when nothing else here
    reads them so (no targets, prevalences or intervals), the sort may take their memory
    (``overwrite_y_score``)."""
    counts = label_counts(columns.labels)
    positive = resolve_pos_label(counts, pos_label, label, name)
    y_true, y_pos = binary_labels(columns.labels, positive)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = precall.evaluate(
                y_true,
                columns.scores,
                sample_weight=columns.weights,
                pos_label=y_pos,
                ties=ties,
                recall_grid=recall_grid,
                on_undefined=on_undefined,
                overwrite_y_score=overwrite_scores and not (targets or prevalences or ci),
            )
            points = []
            table = None
            if targets or prevalences:
                table = precall.threshold_table(y_true, columns.scores, sample_weight=columns.weights,
                                                pos_label=y_pos, ties=ties)
                for kind, value in targets:
                    try:
                        point = table.operating_point(**{kind: value})
                    except ValueError:  # not reached: reported as such
                        point = None
                    points.append((kind, value, point))
            at_prevalence = (at_prevalences(table, prevalences, recall_grid, n_samples=result.n_samples)
                             if table is not None else ())
            intervals = None
            if ci is not None:
                intervals = compute_intervals(
                    np.array(columns.labels), columns.scores, columns.weights, pos_label=positive,
                    ties=ties, recall_grid=recall_grid, ci=ci, on_undefined=on_undefined,
                )
        except (ValueError, TypeError) as exc:
            raise CliError(f"{name}: {exc}") from None
        except (OverflowError, ZeroDivisionError) as exc:
            raise CliError(f"{name}: {numeric_failure(exc, prevalences)}") from None
    return Report(
        source=name,
        n_rows=len(columns.labels),
        label_column=label,
        score_column=score,
        weight_column=weight,
        pos_label=positive,
        label_counts=dict(sorted(counts.items())),
        evaluation=result,
        warnings=[str(w.message) for w in caught] + undefined_without_class(result, on_undefined),
        intervals=intervals,
        operating_points=tuple(points),
        at_prevalence=at_prevalence,
        n_tied=n_tied_rows(columns.scores, columns.weights) if ties == "stable" else 0,  # only shown then
        neighbours=score_neighbours(columns.scores, columns.weights, [
            *([] if result.best_f1 is None else [result.best_f1.threshold]),
            *(p.threshold for _, _, p in points if p is not None)]),
    )


def binary_labels(labels: Sequence[str], positive: str) -> tuple[np.ndarray, Any]:
    """``y_true`` and ``pos_label`` for the library from the labels read and the positive label: the
    boolean column of ``positive`` (1 byte a row) and True when the reader gave the labels as codes,
    else the labels as an array and ``positive``.  Every number of a binary evaluation depends on
    which rows are positive only."""
    if isinstance(labels, Labels):
        return labels.positive(positive), True
    return np.array(labels), positive


def with_intervals(report: Report, columns: Columns, *, ties: str, recall_grid: str, ci: CiOptions,
                   on_undefined: Any = "warn") -> Report:
    """``report`` (computed without ``ci``) with its ``--ci`` intervals (:func:`compute_intervals`),
    holding only the warnings the intervals raised: the CLI prints the point estimates first."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            intervals = compute_intervals(
                np.array(columns.labels), columns.scores, columns.weights, pos_label=report.pos_label,
                ties=ties, recall_grid=recall_grid, ci=ci, on_undefined=on_undefined,
            )
        except (ValueError, TypeError) as exc:
            raise CliError(f"{report.source}: {exc}") from None
    return dataclasses.replace(report, intervals=intervals, warnings=[str(w.message) for w in caught])


def numeric_failure(exc: Exception, prevalences: Sequence[float]) -> str:
    """One line for an arithmetic failure of the library (an extreme --prevalence or weights)."""
    if prevalences:
        shown = ", ".join(f"{pi:g}" for pi in prevalences)
        return (f"--prevalence {shown}: the negatives' weight needed for it cannot be represented "
                f"({type(exc).__name__}: {exc}); give a prevalence nearer the data's")
    return f"the weights are too extreme to evaluate ({type(exc).__name__}: {exc}); rescale them"


def at_prevalences(
    table: precall.ThresholdTable, prevalences: Sequence[float], recall_grid: str, *, n_samples: int | None = None
) -> tuple[tuple[float, precall.Evaluation], ...]:
    """``--prevalence``: the evaluation of the table reweighted to each prevalence
    (:meth:`precall.ThresholdTable.at_prevalence`; ROC-AUC is unchanged), of the ``n_samples``
    rows given, as :func:`precall.evaluate` with ``prevalence`` and the one-pass engines count them."""
    return tuple((pi, dataclasses.replace(table.at_prevalence(pi).evaluate(recall_grid=recall_grid),
                                          n_samples=n_samples))
                 for pi in dict.fromkeys(prevalences))


def ties_note(report: Report) -> list[str]:
    """One line when tied scores meet ``--ties stable`` (the numbers then depend on the file order)."""
    n_tied = report.n_tied
    if report.evaluation.ties != "stable" or not n_tied:
        return []
    return [f"note        {n_tied} rows share their score with another row; with --ties stable "
            "their order in the file decides the numbers (--ties group, the default, does not "
            "depend on it)"]


def point_name(kind: str, value: Any) -> str:
    """The name of an ``--at-*`` operating point: ``at recall >= 0.9``, ``best Youden J``."""
    if kind == "best":
        return {"youden": "best Youden J (TPR - FPR)", "closest": "closest to ROC (0, 1)"}[value]
    return f"at {kind} {'=' if kind == 'threshold' else '>='} {value:g}"


def point_text(report: Report, kind: str, value: Any, point: precall.OperatingPoint | None,
               digits: int) -> str:
    """One ``--at-*`` operating point as a line."""
    name = point_name(kind, value)
    if point is None:
        return f"{name}: not reached"
    predicted = point.tp + point.fp
    precision = ("undefined: nothing predicted positive" if predicted == 0
                 else fmt(point.precision, digits))
    return (
        f"{name}: score >= {report.threshold(point.threshold, digits)}, precision {precision}, "
        f"recall {fmt(point.recall, digits)}, FPR {fmt(point.fpr, digits)}, F1 "
        f"{fmt(point.f1, digits)} (TP {fmt_count(point.tp)}, FP {fmt_count(point.fp)}, "
        f"TN {fmt_count(point.tn)}, FN {fmt_count(point.fn)})"
    )


def point_dict(point: precall.OperatingPoint) -> dict[str, Any]:
    """An operating point's fields; precision NaN (JSON null) when nothing is predicted positive (0/0)."""
    out = dataclasses.asdict(point)
    if point.tp + point.fp == 0:
        out["precision"] = float("nan")
    return out


def undefined_without_class(ev: precall.Evaluation, policy: Any = "warn", option: bool = True) -> list[str]:
    """The warning (a list of at most one) for the numbers of ``ev`` that the data of one class leave
    undefined and that no ``--on-undefined`` value replaces (they are printed NaN): the minimum AP
    (no positives), the normalised AP and AUPRG.  AP and ROC-AUC take their value from the policy
    and the library warns of them; ``policy`` ``"nan"`` asked for NaN: no warning.  ``option``: the
    command takes ``--on-undefined`` (the warning says what it sets)."""
    if policy == "nan" or (ev.n_pos > 0 and ev.n_neg > 0):
        return []
    names = []
    if not _min_ap_undefined(ev) and any(math.isnan(v) for v in ev.min_average_precision.values()):
        names.append("min AP")
    if any(math.isnan(v) for v in ev.normalized_average_precision.values()):
        names.append("normalised AP")
    if math.isnan(ev.auprg):
        names.append("AUPRG")
    if not names:
        return []
    shown = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
    missing = "positives" if ev.n_pos == 0 else "negatives"
    why = "; --on-undefined sets AP's and ROC-AUC's value, these have none" if option else ""
    return [f"{shown} {'is' if len(names) == 1 else 'are'} undefined: the data have no {missing} "
            f"(printed nan{why})"]


def _min_ap_undefined(ev: precall.Evaluation) -> bool:
    """The minimum AP is NaN for fractional weights (it is defined for counts)."""
    return all(math.isnan(v) for v in ev.min_average_precision.values()) and \
        any(not float(n).is_integer() for n in (ev.n_pos, ev.n_neg))


def format_text(report: Report, digits: int = 6, wide: bool = False, with_legend: bool = True) -> str:
    """The text report: input summary, a table of conventions (AP, interval, min AP,
    normalised, AP at each prevalence), ROC-AUC, AUPRG, the prevalence, best F1, the
    operating points, and a legend (unless not ``with_legend``); 80 columns unless ``wide``
    (descriptions in the table)."""
    ev = report.evaluation
    pos = report.pos_label
    n_pos_rows = report.label_counts.get(pos, 0)
    negatives = {k: v for k, v in report.label_counts.items() if k != pos}
    neg_text = show_labels(Counter(negatives)) if negatives else "none"
    lines = [
        f"file        {report.source} ({counted(report.n_rows, 'row')})",
        f"label       column {report.label_column!r}: positive {pos!r} "
        f"({counted(n_pos_rows, 'row')}), "
        f"negative {neg_text}",
        f"score       column {report.score_column!r}",
        "weight      " + (f"column {report.weight_column!r}" if report.weight_column else "none"),
        f"ties        {ev.ties} ({TIES_HELP.get(ev.ties, '')}); recall grid {ev.recall_grid}",
        *ties_note(report),
    ]
    iv = report.intervals
    if iv is not None:
        lines.append("intervals   " + iv.options.describe(report.weight_column is not None, iv.drawn))
    lines.append("")
    names = list(precall.AP_METHODS)
    no_min = _min_ap_undefined(ev)
    header = ["convention", "AP"]
    if iv is not None:
        header.append(f"{percent(iv.options.level)} CI")
    header += ["min AP", "normalised"] + [f"AP at {pi:g}" for pi, _ in report.at_prevalence]
    if wide:
        header.append("description")
    rows = []
    for m in names:
        row = [m, fmt(ev.average_precision[m], digits)]
        if iv is not None:
            row.append(fmt_interval(iv.average_precision[m], digits))
        if no_min:
            row += ["n/a", "n/a"]
        else:
            row += [fmt(ev.min_average_precision[m], digits), fmt(ev.normalized_average_precision[m], digits)]
        row += [fmt(e.average_precision[m], digits) for _, e in report.at_prevalence]
        if wide:
            row.append(describe(m))
        rows.append(row)
    width = max(len("convention"), *(len(m) for m in names), len("prevalence"))
    vwidth = max(len(r[1]) for r in rows)
    lines += render_table(header, rows, wide=wide, prose_last=wide)
    lines.append("")
    key = lambda text: text.ljust(width)  # noqa: E731
    roc = f"{key('ROC-AUC')}  {fmt(ev.roc_auc, digits).rjust(vwidth)}"
    if iv is not None:
        roc += f"  {fmt_interval(iv.roc_auc, digits)} ({method_name(iv.roc_auc.method)})"
    elif report.at_prevalence:
        roc += "  (the same at every prevalence)"
    lines.append(roc)
    at = "".join(f"; at prevalence {pi:g}: {fmt(e.auprg, digits)}" for pi, e in report.at_prevalence)
    lines.append(f"{key('AUPRG')}  {fmt(ev.auprg, digits).rjust(vwidth)}{'  ' + at[2:] if at else ''}")
    weight_word = "weight" if report.weight_column else "count"
    hang = width + vwidth + 4
    big = 10**9 if wide else WIDTH
    lines += wrap(
        f"{key('prevalence')}  {fmt(ev.prevalence, digits).rjust(vwidth)}  "
        f"positive {weight_word} {fmt_count(ev.n_pos)}, negative {weight_word} "
        f"{fmt_count(ev.n_neg)}, {counted(ev.n_samples, 'sample')}", hang=hang, width=big
    )
    b = ev.best_f1
    if b is None:
        lines.append(f"{key('best F1')}  {'-'.rjust(vwidth)}  undefined: no positives")
    else:
        lines += wrap(
            f"{key('best F1')}  {fmt(b.f1, digits).rjust(vwidth)}  at score >= "
            f"{report.threshold(b.threshold, digits)}: precision {fmt(b.precision, digits)}, "
            f"recall {fmt(b.recall, digits)}", hang=hang, width=big
        )
    for kind, value, point in report.operating_points:
        lines += wrap(point_text(report, kind, value, point, digits), hang=2, width=10**9 if wide else WIDTH)
    if not with_legend:
        return "\n".join(fit(lines, wide=wide))
    lines += ["", "legend:"]
    items = [] if wide else [(m, describe(m)) for m in names]
    min_text = "the lowest AP any ranking of these class counts gets (Boyd et al. 2012)"
    if no_min:
        min_text = ("n/a: the weights are fractional, and the minimum AP is defined for counts "
                    "of positives and negatives")
    items += [
        ("min AP", min_text),
        ("normalised", "(AP - min AP) / (1 - min AP)"),
    ]
    if report.at_prevalence:
        items.append(("AP at PI", "the AP with the negatives reweighted to prevalence PI"))
    if iv is not None:
        items.append((f"{percent(iv.options.level)} CI", "bootstrap for AP; " + method_name(iv.roc_auc.method)
                      + " for ROC-AUC"))
    items += [
        ("AUPRG", "area under the precision-recall-gain curve (Flach & Kull 2015)"),
        ("prevalence", "the random-classifier baseline of every AP"),
    ]
    lines += legend(items, wide=wide)
    return "\n".join(fit(lines, wide=wide))
