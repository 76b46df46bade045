"""``precall explain``: the rank table and the terms that sum to each convention."""

from __future__ import annotations

import argparse
from collections import Counter
from typing import Any, Sequence

import numpy as np

import precall
from precall.readers import read_file

from ._common import RECALL_GRIDS, TIES, CliError, _add_file_arguments, _digits, _int_in, _prevalence, resolve_pos_label
from ._format import _fmt, _fmt_count, _table
from .evaluate import at_prevalences


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
    """The rank table, per convention the terms that sum to its AP, and
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



def register(sub: Any) -> None:
    ex = sub.add_parser(
        "explain",
        help="the rank table and the terms that sum to each AP convention (small files)",
        description="Print the rank table (rank, score, label, TP, FP, TN, FN, "
        "precision, recall, precision envelope) and, for each AP convention, the terms "
        "(recall width x precision) whose sum is its value, so the differences between the "
        "conventions can be read off; then what to read the AP against: the baseline (prevalence), the "
        "minimum AP for the class counts, the normalised AP and AUPRG (and the AP at each --prevalence). "
        "Meant for small files: long tables are cut to --max-rows.",
    )
    _add_file_arguments(ex)
    ex.add_argument("--score", required=True, metavar="COL", help="column with the scores")
    ex.add_argument("--ties", choices=TIES, default="stable",
                    help="stable (default here, as the tutorials' rank tables): one row per sample; group: one "
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
