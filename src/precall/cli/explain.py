"""``precall explain``: the rank table and the terms that sum to each convention."""

from __future__ import annotations

import argparse
import warnings
from typing import Any, Sequence

import numpy as np

import precall
from precall._core.conventions import GRID_METHODS  # their terms come in runs of equal precision
from precall._core.text import clip, columns, threshold_texts, visible
from precall._core.validate import RECALL_GRIDS, TIES
from precall.readers import label_counts

from ._common import (
    CliError,
    add_file_arguments,
    digits_arg,
    int_in,
    prevalence_arg,
    print_warning_messages,
    resolve_pos_label,
)
from ._format import WIDTH, counted, describe, fit, fmt, fmt_count, render_table
from ._inputs import n_tied_rows, read_classes, read_scores
from ._reports import at_prevalences, undefined_without_class


# ---------------------------------------------------------------------------
# explain: the rank table and the terms of every convention
SUMMARY_ROWS = 24  # rank tables up to this many rows are shown whole
SUMMARY_TERMS = 8  # term tables up to this many rows are shown whole
TOP_TERMS = 6  # otherwise: at most this many of the largest terms ...
TERM_SHARE = 0.8  # ... enough to carry this share of the AP when possible


def _rank_rows(table: precall.ThresholdTable, digits: int, indices: Sequence[int] | None = None,
               gaps: bool = True) -> list[list[str]]:
    """Rows of the rank table (all, or those at ``indices``, 0-based; with ``gaps``, a gap is a
    ``...`` row)."""
    n = len(table.thresholds)
    chosen = range(n) if indices is None else indices
    dtp = np.diff(table.tp, prepend=0)
    dfp = np.diff(table.fp, prepend=0)
    stable = table.ties == "stable"
    chosen = list(chosen)
    scores = dict(zip(chosen, threshold_texts(table.thresholds, digits, chosen)))
    # the table's derived columns are properties that compute the whole array: read each once (per row,
    # ``explain --full`` took time quadratic in the rows: 50 s at 40,000)
    tp, fp, tn, fn = table.tp, table.fp, table.tn, table.fn
    precision, recall, envelope = table.precision, table.recall, table.precision_envelope
    rows: list[list[str]] = []
    previous = -1
    for i in chosen:
        if gaps and i > previous + 1 and previous >= 0:
            hidden = i - previous - 1
            rows.append(["...", f"({hidden} row{'' if hidden == 1 else 's'})", *[""] * 8])
        previous = i
        a, b = dtp[i], dfp[i]
        if stable or (min(a, b) == 0 and max(a, b) == 1):
            label = "pos" if a > 0 else "neg"
        else:
            label = f"+{fmt_count(a)} / -{fmt_count(b)}"
        rows.append([str(i + 1), scores[i], label, fmt_count(tp[i]), fmt_count(fp[i]), fmt_count(tn[i]),
                     fmt_count(fn[i]), fmt(precision[i], digits), fmt(recall[i], digits), fmt(envelope[i], digits)])
    return rows


def recall_quantile_rows(recall: np.ndarray, quantiles: int = 10) -> list[int]:
    """The rows (0-based) where recall first reaches 0, 1/q, ..., 1, plus the first and last rows."""
    n = len(recall)
    targets = np.linspace(0.0, 1.0, quantiles + 1)
    picks = np.searchsorted(recall, targets - 1e-12, side="left")
    return sorted({0, n - 1, *(int(i) for i in picks if i < n)})


def _term_rows(terms: Any, digits: int, keep: np.ndarray | None = None) -> list[list[str]]:
    """One row a term (those in ``keep``, a boolean mask, when given); grid conventions merge
    runs of equal precision."""
    w, p, c, r = terms.weight, terms.precision, terms.contributions, terms.recall
    n = len(terms)
    if terms.method not in GRID_METHODS:
        index = range(n) if keep is None else np.flatnonzero(keep)
        return [[fmt(r[i], digits), fmt(w[i], digits), fmt(p[i], digits), fmt(c[i], digits)]
                for i in index]
    rows = []
    start = 0
    for i in range(1, n + 1):
        if i == n or p[i] != p[start]:
            if keep is None or keep[start:i].any():
                span = fmt(r[start], 2) if i - 1 == start else f"{fmt(r[start], 2)}..{fmt(r[i - 1], 2)}"
                rows.append([f"{span} ({i - start} pt)", f"{i - start}/{n}", fmt(p[start], digits),
                             fmt(float(c[start:i].sum()), digits)])
            start = i
    return rows


def _run_starts(terms: Any) -> np.ndarray:
    """The index of each term's row: grid conventions merge runs of equal precision."""
    n = len(terms)
    if terms.method not in GRID_METHODS or n == 0:
        return np.arange(n)
    new_run = np.r_[True, terms.precision[1:] != terms.precision[:-1]]
    return np.cumsum(new_run) - 1


RECALL_BANDS = 5  # the summary sums many small terms by recall fifth (0-0.2, ..., 0.8-1)


def _band_rows(terms: Any, digits: int, bands: int = RECALL_BANDS) -> list[list[str]]:
    """The terms summed by recall band (``bands`` equal bands; a term's recall is where it ends)."""
    r = np.asarray(terms.recall, dtype=float)
    band = np.clip(np.ceil(r * bands - 1e-9).astype(int) - 1, 0, bands - 1)
    rows = []
    for k in range(bands):
        inside = band == k
        if not inside.any():
            continue
        gained = float(terms.weight[inside].sum())
        total = float(terms.contributions[inside].sum())
        mean = fmt(total / gained, digits) if gained > 0 else "-"
        rows.append([f"{k / bands:.1f}..{(k + 1) / bands:.1f}", fmt(gained, digits), mean,
                     str(int(inside.sum())), fmt(total, digits)])
    return rows


def _plural(n: int, unit: str) -> str:
    """``terms`` / ``runs`` for ``n`` of them (``term`` / ``run`` for one)."""
    return unit[:-1] if n == 1 else unit


def largest_terms(terms: Any) -> np.ndarray | None:
    """A mask of the terms to show: None (all) for short tables, else the rows of largest
    contribution, fewest first, until they carry ``TERM_SHARE`` of the AP (at most ``TOP_TERMS``)."""
    run = _run_starts(terms)
    n_rows = int(run[-1]) + 1 if len(run) else 0
    if n_rows <= SUMMARY_TERMS:
        return None
    per_row = np.bincount(run, weights=terms.contributions, minlength=n_rows)
    order = np.argsort(-per_row, kind="stable")
    total = float(per_row.sum())
    carried = np.cumsum(per_row[order])
    k = int(np.searchsorted(carried, TERM_SHARE * total, side="left")) + 1 if total > 0 else 1
    chosen = np.zeros(n_rows, dtype=bool)
    chosen[order[:min(max(k, 1), TOP_TERMS)]] = True
    return chosen[run]


def format_explanation(
    table: precall.ThresholdTable, *, source: str, label: str, score: str, pos_label: str,
    methods: list[str], recall_grid: str, max_rows: int | None, digits: int,
    prevalences: Sequence[float] = (), full: bool = False, wide: bool = False, tie_note: str = "",
    header: bool = True,
) -> str:
    """The rank table, per convention the terms that sum to its AP, and what to read the
    AP against (:func:`format_context`).  Summarised unless ``full``: the rank table at
    recall quantiles (or its first and last ``max_rows / 2`` rows), for each convention the
    terms carrying most of its AP with one line for the rest; 80 columns unless ``wide``."""
    ties_text = "one row per sample, equal scores in file order" if table.ties == "stable" else \
        "one row per distinct score; label +P / -N: the positives / negatives at that score"
    lines = []
    if header:
        lines += [f"file        {source}"]
    lines += [
        f"label       column {label!r}, positive {pos_label!r}: {fmt_count(table.n_pos)} positive, "
        f"{fmt_count(table.n_neg)} negative",
        f"score       column {score!r}; ties {table.ties} ({ties_text})",
    ]
    if tie_note:
        lines.append("note        " + tie_note)
    lines.append("")
    n = len(table.thresholds)
    head = ["rank", "score", "label", "TP", "FP", "TN", "FN", "precision", "recall", "envelope"]
    if full or n <= (max_rows or SUMMARY_ROWS):
        lines.append("Rank table: predict positive at this row and above.")
        rows = _rank_rows(table, digits)
    elif max_rows is not None:
        half = max_rows // 2
        lines.append(f"Rank table: predict positive at this row and above (first and last {half} "
                     f"of {n} rows; --full for all).")
        rows = _rank_rows(table, digits, [*range(half), *range(n - half, n)])
    else:
        lines.append(f"Rank table: predict positive at this row and above; of its {n} rows, those where "
                     "recall first reaches 0, 0.1, ..., 1 (--full for all).")
        rows = _rank_rows(table, digits, recall_quantile_rows(np.asarray(table.recall)), gaps=False)
    rendered = render_table(head, rows, wide=wide, left=1)
    if not wide and max(len(x) for x in render_table(head, rows, wide=True)) > WIDTH:  # large counts: TN and FN follow from FP, TP
        keep_cols = [i for i, h in enumerate(head) if h not in ("TN", "FN")]
        rendered = render_table([head[i] for i in keep_cols], [[r[i] for i in keep_cols] for r in rows], left=1)
        rendered.append("(TN = negatives - FP, FN = positives - TP; --wide shows them)")
    lines = fit(lines, wide=wide) + rendered
    lines += ["", *fit(["envelope = the best precision at this recall or beyond (VOC's interpolated "
                        "precision)."], wide=wide)]
    for m in methods:
        terms = table.ap_terms(m, recall_grid=recall_grid)
        convention = precall.CONVENTIONS[m]
        width_name = "share" if m in GRID_METHODS else "recall gained"
        keep = None if full else largest_terms(terms)
        title = [f"{m}: {describe(m)}", f"  AP = {convention.formula}"] if full else \
            [f"{m}: AP = {convention.formula}"]  # the summary: descriptions are in evaluate's legend
        block = fit(["", *title], wide=wide)
        if keep is not None and float(terms.contributions[keep].sum()) < 0.5 * terms.value:
            # many small terms: the largest few say little; sum them by recall band instead
            block += render_table(["recall", width_name, "mean precision", "terms", "sum"],
                                  _band_rows(terms, digits), wide=wide, indent="  ")
            block += fit([f"  sum of {counted(len(terms), 'term')} = {fmt(terms.value, digits)}, shown by recall "
                          "fifth (--full: every term)"], wide=wide)
            lines += block
            continue
        block += render_table(["recall", width_name, "precision", "term"], _term_rows(terms, digits, keep),
                              wide=wide, indent="  ")
        if keep is not None:
            left_out = float(terms.contributions[~keep].sum())
            run = _run_starts(terms)
            n_rows_all = int(run[-1]) + 1
            n_shown = int(np.unique(run[keep]).size)
            share = f", {left_out / terms.value:.0%} of the AP" if terms.value > 0 else ""
            # count one kind of thing: terms, or (grid conventions) runs of terms of equal precision
            unit = "terms" if n_rows_all == len(terms) else "runs"
            rest = n_rows_all - n_shown
            shown = (f"the {n_shown} largest {_plural(n_shown, unit)} of {n_rows_all}" if unit == "terms" else
                     f"{n_rows_all} runs of equal precision, the {n_shown} largest {_plural(n_shown, 'runs')}")
            block += fit([f"  sum of {counted(len(terms), 'term')} = {fmt(terms.value, digits)}; shown: {shown}; the other "
                          f"{rest} {_plural(rest, unit)} sum to {fmt(left_out, digits)}{share} (--full: every term)"],
                         wide=wide)
        else:
            block.append(f"  sum of {counted(len(terms), 'term')} = {fmt(terms.value, digits)}")
        lines += block
    lines += ["", *format_context(table, methods=methods, recall_grid=recall_grid, digits=digits,
                                  prevalences=prevalences, wide=wide)]
    return "\n".join(lines)


def format_context(
    table: precall.ThresholdTable, *, methods: list[str], recall_grid: str, digits: int,
    prevalences: Sequence[float] = (), wide: bool = False,
) -> list[str]:
    """``explain``: the baseline, the minimum AP and the normalised AP of each
    convention, AUPRG, and the AP at each ``--prevalence`` (from ``table.evaluate()``)."""
    ev = table.evaluate(recall_grid=recall_grid, on_undefined="nan")
    at = at_prevalences(table, prevalences, recall_grid)
    lines = [
        "What to read the AP against:",
        f"  baseline (random ranking: precision = prevalence) {fmt(ev.prevalence, digits)}",
        f"  min AP: the lowest AP any ranking of {counted(table.n_pos, 'positive')} and "
        f"{counted(table.n_neg, 'negative')} gets (all negatives first; Boyd et al. 2012)",
        "  normalised AP = (AP - min AP) / (1 - min AP)",
    ]
    header = ["convention", "AP", "min AP", "normalised"] + [f"AP at {pi:g}" for pi, _ in at]
    rows = [[m, fmt(ev.average_precision[m], digits), fmt(ev.min_average_precision[m], digits),
             fmt(ev.normalized_average_precision[m], digits),
             *(fmt(e.average_precision[m], digits) for _, e in at)] for m in methods]
    lines = fit(lines, wide=wide) + render_table(header, rows, wide=wide, indent="  ")
    auprg = f"  AUPRG (area under the precision-recall-gain curve, Flach & Kull 2015) {fmt(ev.auprg, digits)}"
    lines += fit([auprg + "".join(f"; at prevalence {pi:g}: {fmt(e.auprg, digits)}" for pi, e in at)],
                 wide=wide)
    return lines


def _tie_note(scores: np.ndarray, weights: np.ndarray | None, table: precall.ThresholdTable,
              labels: np.ndarray, positive: str, recall_grid: str, digits: int) -> str:
    """With ``--ties stable`` and tied scores: one line saying the file order decides,
    and the step AP of ``--ties group``."""
    n_tied = n_tied_rows(scores, weights)
    if table.ties != "stable" or not n_tied:
        return ""
    grouped = precall.average_precision(labels, scores, sample_weight=weights, pos_label=positive,
                                        ties="group", recall_grid=recall_grid, on_undefined="nan")
    return (f"{n_tied} rows share their score with another row; with --ties stable their order in "
            f"the file decides the table and the APs (step AP {fmt(grouped, digits)} with --ties group, "
            "the default)")


NO_TERMS = ("its AP is undefined (evaluate reports it by --on-undefined: 0.0 with a warning by default) and "
            "has no terms to explain")


def _explain_one(args: argparse.Namespace, path: str, labels: np.ndarray, scores: np.ndarray,
                 weights: np.ndarray | None, positive: str, score: str, header: bool = True,
                 messages: list[str] | None = None, no_positives: str = "") -> str:
    """One section of ``explain``; its warnings appended to ``messages``.  Without positives there is
    nothing to explain (an AP of no terms): :class:`CliError` ``no_positives`` (what to do), whatever
    the undefined policy would make of the AP."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        table = precall.threshold_table(labels, scores, sample_weight=weights, pos_label=positive,
                                        ties=args.ties)
        if table.n_pos == 0:
            raise CliError(no_positives)
        methods = list(dict.fromkeys(args.method)) if args.method else list(precall.AP_METHODS)
        note = _tie_note(scores, weights, table, labels, positive, args.recall_grid, args.digits)
        text = format_explanation(table, source=path, label=args.label, score=score,
                                  pos_label=positive, methods=methods, recall_grid=args.recall_grid,
                                  max_rows=args.max_rows, digits=args.digits,
                                  prevalences=args.prevalence or (), full=args.full, wide=args.wide,
                                  tie_note=note, header=header)
    if messages is not None:
        messages += [str(w.message) for w in caught]
        messages += undefined_without_class(table.evaluate(recall_grid=args.recall_grid, on_undefined="nan"),
                                            option=False)
    return text


def _section(title: str, wide: bool = False) -> list[str]:
    """A blank line and ``== title ====...`` (78 wide): one per class or score column explained; a
    title too long for the line is shortened with ``...`` unless ``wide`` (the section's own lines
    give the full names)."""
    if not wide and columns(visible(title)) > 72:  # terminal columns, as shown
        text = visible(title)
        title = clip(text, 48, mark="") + "..." + clip(text[::-1], 21, mark="")[::-1]
    rule = f"== {title} "
    return ["", rule + "=" * max(0, 78 - columns(visible(rule)))]


CLASSES_SHOWN = 5
"""Classes ``explain --class-columns`` explains without ``--class`` or ``--full`` (about 95 lines each)."""


def cmd_explain(args: argparse.Namespace) -> int:
    path = args.file
    if args.class_columns is not None or args.class_prefix is not None:
        if args.score is not None or args.pos_label is not None:
            raise CliError("give --score (binary, with --pos-label) or --class-columns / --class-prefix "
                           "(multi-class: each class in turn against the rest), not both")
        pairs, columns = read_classes(args)
        classes = [c for c, _ in pairs]
        unknown = [c for c in args.class_ or [] if c not in classes]
        if unknown:
            raise CliError(f"--class {unknown[0]!r} is not one of the classes "
                           + ", ".join(repr(c) for c in classes))
        labels = np.array(columns.labels)
        present = set(label_counts(columns.labels))
        parts = fit([f"file        {path}: {len(classes)} classes, each explained against the rest"],
                    wide=args.wide)
        messages: list[str] = []
        chosen = [c for c in classes if not args.class_ or c in args.class_]
        if not args.class_ and not args.full and len(chosen) > CLASSES_SHOWN:  # bounded: the first few
            chosen = chosen[:CLASSES_SHOWN]
            rest = len(classes) - CLASSES_SHOWN
            parts += fit([f"shown: the first {CLASSES_SHOWN} classes; {rest} more are not explained here: "
                          "--class LABEL explains one (repeatable), --full every class (and every row)"],
                         wide=args.wide)
        try:
            for k, (c, col) in enumerate(pairs):
                if c not in chosen:
                    continue
                parts += _section(f"class {c!r} (score column {col!r})", args.wide)
                others = [o for o in classes if o != c and o in chosen]
                hint = (f"explain the other classes with --class {' --class '.join(others)}" if others
                        else "explain data with rows of this class")
                no_positives = (f"{path}: class {c!r} has no rows" + (" of positive weight" if c in present else "")
                                + f" in column {args.label!r}: {NO_TERMS}; {hint}")
                if c not in present:
                    raise CliError(no_positives)
                parts.append(_explain_one(args, path, labels, columns.scores[:, k], columns.weights, c, col,
                                          header=False, messages=messages, no_positives=no_positives))
        except (ValueError, TypeError) as exc:
            raise CliError(f"{path}: {exc}") from None
        print_warning_messages(path, list(dict.fromkeys(messages)))
        print("\n".join(parts))
        return 0
    if args.class_:
        raise CliError("--class goes with --class-columns / --class-prefix (multi-class input)")
    if args.score is None:
        raise CliError("give --score COL (binary) or --class-columns / --class-prefix (multi-class)")
    names = list(dict.fromkeys(args.score))  # each --score explained in turn, a section each
    columns = read_scores(args, names)
    positive = resolve_pos_label(label_counts(columns.labels), args.pos_label, args.label, path)
    labels = np.array(columns.labels)
    scores = columns.scores.reshape(len(labels), -1)
    parts = [] if len(names) == 1 else fit(
        [f"file        {path}: {len(names)} score columns, each explained in turn"], wide=args.wide)
    messages: list[str] = []
    no_positives = (f"{path}: column {args.label!r}: no row has the positive label {positive!r}"
                    + (" with a positive weight" if columns.weights is not None else "")
                    + f": {NO_TERMS}; give data with positives, or another --pos-label")
    try:
        for j, name in enumerate(names):
            if len(names) > 1:
                parts += _section(f"score column {name!r}", args.wide)
            parts.append(_explain_one(args, path, labels, scores[:, j], columns.weights, positive, name,
                                      header=len(names) == 1, messages=messages, no_positives=no_positives))
    except (ValueError, TypeError) as exc:
        raise CliError(f"{path}: {exc}") from None
    print_warning_messages(path, list(dict.fromkeys(messages)))
    print("\n".join(parts))
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
        "Summarised by default (the rank table at recall quantiles, the largest terms of each AP); "
        "--full prints everything.",
    )
    add_file_arguments(ex)
    ex.add_argument("--score", metavar="COL", action="append",
                    help="binary: column with the scores (repeat to explain several, one section each)")
    ex.add_argument("--class-columns", metavar="C1,C2,...",
                    help="multi-class: one score column per class (C1,C2,... named as the classes, or "
                    "LABEL=COLUMN pairs); each class is explained against the rest")
    ex.add_argument("--class-prefix", metavar="P",
                    help="multi-class: the columns P + LABEL are the classes' scores")
    ex.add_argument("--class", dest="class_", action="append", metavar="LABEL",
                    help="multi-class: explain only this class (repeatable; default the first "
                    f"{CLASSES_SHOWN} classes, every class with --full)")
    ex.add_argument("--ties", choices=TIES, default="group",
                    help="group (default, as scikit-learn and the other commands): one row per distinct "
                    "score; stable: one row per sample, equal scores in file order (the tutorials' rank "
                    "tables)")
    ex.add_argument("--method", choices=precall.AP_METHODS, action="append", metavar="M",
                    help="explain only this convention (repeatable; default all)")
    ex.add_argument("--recall-grid", choices=RECALL_GRIDS, default="reference",
                    help="recall grid of voc2007/coco (default reference)")
    ex.add_argument("--max-rows", type=int_in(2), default=None, metavar="N",
                    help="show the first and last N/2 rank-table rows (default: the rows where recall "
                    f"reaches 0, 0.1, ..., 1 when there are more than {SUMMARY_ROWS})")
    ex.add_argument("--full", action="store_true",
                    help="print every rank-table row and every term, and with --class-columns every class "
                    "(long for large files)")
    ex.add_argument("--wide", action="store_true",
                    help="print the tables on one block each whatever the width (default: 80 columns)")
    ex.add_argument("--digits", type=digits_arg, default=4, metavar="N",
                    help="decimals of precision, recall and the terms (default 4); a score gets this many "
                    "significant digits, more where the next distinct score would print the same")
    ex.add_argument("--prevalence", type=prevalence_arg, action="append", metavar="PI",
                    help="also show each AP at this prevalence (negatives reweighted); repeatable")
    ex.set_defaults(func=cmd_explain)
