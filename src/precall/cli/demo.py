"""``precall demo``: the bundled example data and a worked example from the voc_ap tutorials."""

from __future__ import annotations

import argparse
from importlib import resources
from typing import Any

import precall
from precall.readers import read_delimited

from precall._core.validate import TIES

from ._common import digits_arg, print_warnings
from ._format import describe, fmt, render_table
from ._reports import Report, evaluate_columns, format_text

DEMO_DATA = "yardstick_two_class_example.csv"
DEMO_SOURCE = (
    "two_class_example from the R package yardstick (tidymodels), MIT license;\n"
    "  https://github.com/tidymodels/yardstick (500 rows: truth Class1/Class2, the\n"
    "  predicted probabilities Class1 and Class2, and case_weight, the case weights\n"
    "  of yardstick's tests); bundled as precall/data/" + DEMO_DATA
)
SEED_EXAMPLE = {
    "y_score": [0.65, 0.1, 0.15, 0.43, 0.97, 0.24, 0.82, 0.7, 0.32, 0.84],
    "y_true": [0, 0, 1, 0, 1, 1, 0, 1, 1, 1],
}
SEED_SOURCE = (
    "Worked example 1 of the tutorials on Detectron's voc_ap (voc_eval.py):\n"
    "  10 samples, no tied scores; evaluated with ties='stable' (one point a sample)"
)


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
        "  precall evaluate two_class_example.csv --label truth --score Class1 \\",
        "      --pos-label Class1",
        rule,
    ]
    unweighted = _demo_table(None, args.ties)
    out += [
        format_text(unweighted, args.digits, wide=args.wide, with_legend=False),
        "",
        rule,
        "2. The same data weighted by case_weight",
        "  (... --weight case_weight)",
        rule,
    ]
    weighted = _demo_table("case_weight", args.ties)
    out += [format_text(weighted, args.digits, wide=args.wide), "", rule]

    y_true, y_score = SEED_EXAMPLE["y_true"], SEED_EXAMPLE["y_score"]
    table = precall.threshold_table(y_true, y_score, ties="stable")
    result = precall.evaluate(y_true, y_score, ties="stable")
    names = list(precall.AP_METHODS)
    out += [
        "3. " + SEED_SOURCE,
        f"  scores = {y_score}",
        f"  labels = {y_true}",
        rule,
        "Rank table (precall.threshold_table(..., ties='stable')):",
        str(table),
        "",
    ]
    header = ["convention", "AP"] + (["description"] if args.wide else [])
    rows = [[m, fmt(result.average_precision[m], args.digits)] + ([describe(m)] if args.wide else [])
            for m in names]
    rows.append(["ROC-AUC", fmt(result.roc_auc, args.digits)] + ([""] if args.wide else []))
    out += render_table(header, rows, wide=args.wide, prose_last=args.wide)
    out += ["(the conventions as in the legend above)"] if not args.wide else []
    print("\n".join(out))
    for report in (unweighted, weighted):
        print_warnings(report)
    return 0



def register(sub: Any) -> None:
    demo = sub.add_parser(
        "demo",
        help="evaluate the bundled example data and a worked example from the voc_ap tutorials",
        description="Evaluate the bundled yardstick two_class_example data (unweighted and "
        "weighted) and the 10-sample worked example of the voc_ap tutorials.",
    )
    demo.add_argument("--ties", choices=TIES, default="group",
                      help="tie rule for the bundled data (default group)")
    demo.add_argument("--digits", type=digits_arg, default=6, metavar="N",
                      help="decimals in the output (default 6)")
    demo.add_argument("--wide", action="store_true",
                      help="descriptions inline in the tables, whatever the width (default: 80 columns)")
    demo.set_defaults(func=cmd_demo)
