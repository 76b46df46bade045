"""``precall report``: one self-contained HTML file."""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
import warnings
from typing import Any

import numpy as np

from precall._core.validate import TIES
from precall.stats import DEFAULT_RESAMPLES, DEFAULT_SEED
from precall.readers import label_counts

from ._common import (
    CliError,
    add_file_arguments,
    add_on_undefined_option,
    class_warnings,
    int_in,
    max_fpr_arg,
    on_undefined_arg,
    print_warning_messages,
    resolve_pos_label,
    terminal_progress,
)
from ._inputs import class_error, read_classes, read_scores
from ._slices import add_slice_options, by_columns, slice_input


# ---------------------------------------------------------------------------
# report
def cmd_report(args: argparse.Namespace) -> int:
    out = args.output
    if not out.lower().endswith((".html", ".htm")):
        raise CliError(f"-o {out!r}: the report is HTML; the file name must end in .html")
    if importlib.util.find_spec("matplotlib") is None:
        raise CliError("precall report needs matplotlib, the 'plot' extra: pip install 'precall[plot]'")
    given = [flag for flag, value in (("--score", args.score), ("--class-columns", args.class_columns),
                                      ("--class-prefix", args.class_prefix)) if value is not None]
    if len(given) != 1:
        shown = " and ".join(given) if given else "no score columns"
        raise CliError(f"{shown}: give --score (models) or --class-columns / --class-prefix (classes)")
    if args.by and args.score is None:
        raise CliError("--by goes with --score (one binary model); per class: one --score of each class")
    if args.score is None and args.pos_label is not None:
        raise CliError(f"--pos-label applies only with --score; with {given[0]} each class is in turn the "
                       "positive one")
    from ..report import html_report

    path = args.file
    multi = args.class_columns is not None or args.class_prefix is not None
    if multi:  # one score column per class: the one class-column parser of evaluate
        pairs, columns = read_classes(args)
        classes = [c for c, _ in pairs]
        y_score: Any = columns.scores
        kind: dict[str, Any] = {"labels": classes, "score_columns": [col for _, col in pairs]}
        if args.ci:  # the macro averages' bootstrap: a progress line on a terminal when it is long
            kind["progress"] = terminal_progress("bootstrap of the macro averages",
                                                 len(columns.labels) * len(classes) * 2)
    else:
        names = list(dict.fromkeys(args.score))
        if args.by and len(names) != 1:
            raise CliError(f"--by reports the slices of one --score column; got {len(names)}: write one report "
                           "per model, or compare them per slice with precall compare --by")
        columns = read_scores(args, names, by_columns(args.by))
        kind = {"pos_label": resolve_pos_label(label_counts(columns.labels), args.pos_label, args.label, path)}
        scores = columns.scores.reshape(len(columns.labels), -1)
        y_score = {n: scores[:, j] for j, n in enumerate(names)}
        if args.by:
            by, texts = slice_input(columns)
            kind.update(by=by, slice_values=texts, min_support=args.min_support, slices_shown=args.top)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            text = html_report(
                np.array(columns.labels), y_score, sample_weight=columns.weights, ties=args.ties,
                title=args.title or f"precall report: {os.path.basename(path)}", source=path,
                label_column=args.label, rank_rows=args.rank_rows, max_fpr=args.max_fpr, ci=args.ci,
                on_undefined=on_undefined_arg(args), **kind,
            )
        except (ValueError, TypeError) as exc:
            if multi:  # under --on-undefined raise: the classes named (the library cannot name them)
                raise class_error(path, exc, columns, classes, args.label, on_undefined_arg(args)) from None
            raise CliError(f"{path}: {exc}") from None
    try:
        with open(out, "w", encoding="utf-8") as fh:
            fh.write(text)
    except OSError as exc:
        raise CliError(f"-o {out!r}: cannot write the report: {exc.strerror or exc}") from None
    messages = [str(w.message) for w in caught]
    if multi:
        messages = class_warnings(messages, classes, columns.labels, args.label, option=True)
    print_warning_messages(path, messages)
    print(f"wrote {out}", file=sys.stderr)
    return 0



def register(sub: Any) -> None:
    rp = sub.add_parser(
        "report",
        help="write one self-contained HTML report (summary, PR and ROC figures, rank tables)",
        description="Write one HTML file that needs nothing else to open: the summary table "
        "(every AP convention, ROC-AUC, best F1) of each score column, the PR and ROC figures "
        "(inline SVG) and each model's rank table at --rank-rows thresholds. Multi-class "
        "(--class-columns / --class-prefix): the same of each class against the rest, with the "
        "macro, weighted and micro averages, the one-vs-one ROC-AUC, and the micro- and "
        "macro-average curves. Needs matplotlib (pip install 'precall[plot]').",
    )
    add_file_arguments(rp)
    rp.add_argument("--score", action="append", metavar="COL",
                    help="a score column (repeat to compare several models)")
    rp.add_argument("--class-columns", metavar="C1,C2,...",
                    help="multi-class: one score column per class, C1,C2,... (each named as its class) or "
                    "LABEL1=C1,LABEL2=C2,...: a per-class table with the macro/weighted/micro averages, and "
                    "curves of each class, the micro- and the macro-average")
    rp.add_argument("--class-prefix", metavar="P",
                    help="multi-class: every column named P + LABEL is the score of class LABEL")
    rp.add_argument("-o", "--output", required=True, metavar="OUT.html", help="the HTML file to write")
    rp.add_argument("--ties", choices=TIES, default="group", help="tie rule (default group)")
    rp.add_argument("--rank-rows", type=int_in(2, 10000), default=20, metavar="N",
                    help="rows of each rank table: the first threshold reaching each of N recalls evenly "
                    "spaced up to the highest (default 20)")
    rp.add_argument("--max-fpr", type=max_fpr_arg, metavar="F",
                    help="shade and quote the partial ROC-AUC up to FPR F (in (0, 1])")
    rp.add_argument("--ci", action="store_true",
                    help=f"also the 95%% interval of each model's step AP (bootstrap: {DEFAULT_RESAMPLES} "
                    f"resamples, seed {DEFAULT_SEED}, as evaluate --ci) and 95%% bands on both figures; "
                    "multi-class: the intervals of the macro step AP and macro ROC-AUC (no bands; skipped with "
                    "a note above 10 million cells, rows x classes)")
    rp.add_argument("--title", help="the report's title")
    add_on_undefined_option(rp)
    add_slice_options(rp, what="also a section of the slices: a table, a forest plot of each slice's AP and "
                      "ROC-AUC with its interval (all rows as the reference line) and the PR curves of the worst "
                      "and best few,")
    rp.set_defaults(func=cmd_report)
