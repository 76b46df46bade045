"""``precall report``: one self-contained HTML file."""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
import warnings
from typing import Any

import numpy as np

from precall.readers import label_counts, read_file

from ._common import TIES, CliError, _add_file_arguments, _int_in, _level, _print_warning_messages, resolve_pos_label


# ---------------------------------------------------------------------------
# report
def cmd_report(args: argparse.Namespace) -> int:
    out = args.output
    if not out.lower().endswith((".html", ".htm")):
        raise CliError(f"-o {out!r}: the report is HTML; the file name must end in .html")
    if importlib.util.find_spec("matplotlib") is None:
        raise CliError("precall report needs matplotlib, the 'plot' extra: pip install 'precall[plot]'")
    from ..report import html_report

    path = args.file
    names = list(dict.fromkeys(args.score))
    columns = read_file(path, label=args.label, score_columns=[(c, "--score") for c in names],
                        weight=args.weight, delimiter=args.delimiter)
    positive = resolve_pos_label(label_counts(columns.labels), args.pos_label, args.label, path)
    scores = columns.scores.reshape(len(columns.labels), -1)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            text = html_report(
                np.array(columns.labels), {n: scores[:, j] for j, n in enumerate(names)},
                sample_weight=columns.weights, pos_label=positive, ties=args.ties,
                title=args.title or f"precall report: {os.path.basename(path)}", source=path,
                label_column=args.label, rank_rows=args.rank_rows, max_fpr=args.max_fpr, ci=args.ci,
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



def register(sub: Any) -> None:
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
                    help="rows of each rank table: the first threshold reaching each of N recalls evenly "
                    "spaced up to the highest (default 20)")
    rp.add_argument("--max-fpr", type=_level, metavar="F", help="shade and quote the partial ROC-AUC")
    rp.add_argument("--ci", action="store_true",
                    help="also each AP's bootstrap interval (200 resamples) and 95%% bands on both figures")
    rp.add_argument("--title", help="the report's title")
    rp.set_defaults(func=cmd_report)
