"""``precall plot``: PR and ROC figures to a file."""

from __future__ import annotations

import argparse
import os
import sys
import warnings
from typing import Any

import numpy as np

import precall
from precall._core.validate import TIES
from precall.table import BEST_POINTS
from precall.stats.bands import BAND_RESAMPLES
from precall.readers import label_counts

from ._common import (
    CliError,
    add_file_arguments,
    add_on_undefined_option,
    class_warnings,
    finite_arg,
    int_in,
    max_fpr_arg,
    on_undefined_arg,
    prevalence_arg,
    print_warning_messages,
    resolve_pos_label,
    show_labels,
    unit_arg,
)
from ._inputs import class_error, read_classes, read_scores


# ---------------------------------------------------------------------------
# plot
class _AtPoint(argparse.Action):
    """--at-recall / --at-precision / --at-threshold into one list of (kind, value), in order."""

    def __call__(self, parser: Any, namespace: Any, values: Any, option_string: Any = None) -> None:
        kind = self.metavar_kind  # type: ignore[attr-defined]
        getattr(namespace, self.dest).append((kind, values))


def _at(kind: str) -> type:
    return type(f"_At{kind.title()}", (_AtPoint,), {"metavar_kind": kind})


PLOT_FORMATS = (".png", ".svg", ".pdf")


def _refuse_undefined_curves(counts: Any, positive: str, label: str, path: str, kind: str) -> None:
    """:class:`CliError` when a curve asked for is undefined on rows of one class: the PR curve's recall
    and the ROC curve's TPR divide by the positives, the ROC curve's FPR by the negatives.  No
    undefined-metric policy draws a curve; the PR curve of positives only is drawn."""
    n_pos = counts.get(positive, 0)
    if n_pos == 0:
        raise CliError(f"{path}: column {label!r}: no row has the positive label {positive!r} "
                       f"({show_labels(counts)}): recall and TPR divide by the positives, so there is no PR or "
                       "ROC curve to draw; plot data with both classes (check --pos-label)")
    if n_pos == sum(counts.values()) and kind != "pr":
        raise CliError(f"{path}: column {label!r}: every row has the positive label {positive!r}: the ROC "
                       "curve's FPR divides by the negatives, so there is no ROC curve to draw; plot data with "
                       "both classes, or the PR curve alone with --kind pr")


def _save(fig: Any, out: str, dpi: int) -> None:
    """Lay out the panels and write ``fig``: the panels' spacing made for their tick and axis labels
    only (a legend of many classes is taller than the figure, and the layout could not be applied),
    then the file cropped to everything drawn, the legends below the axes included."""
    legends = [ax.get_legend() for ax in fig.axes if ax.get_legend() is not None]
    for legend in legends:
        legend.set_in_layout(False)
    fig.tight_layout()
    for legend in legends:
        legend.set_in_layout(True)
    try:
        fig.savefig(out, dpi=dpi, bbox_inches="tight")
    except OSError as exc:
        raise CliError(f"-o {out!r}: cannot write the figure: {exc.strerror or exc}") from None


def cmd_plot(args: argparse.Namespace) -> int:
    out = args.output
    suffix = os.path.splitext(out)[1].lower()
    if suffix not in PLOT_FORMATS:
        raise CliError(f"-o {out!r}: the file name must end in {', '.join(PLOT_FORMATS)}")
    if args.kind == "pr" and args.max_fpr is not None:
        raise CliError("--max-fpr is the ROC plot's partial AUC; it has no meaning with --kind pr")
    for flag, name in ((args.envelope, "--envelope"), (args.eleven_point, "--eleven-point"),
                       (args.iso_f1, "--iso-f1"), (args.prevalence, "--prevalence")):
        if args.kind == "roc" and flag:
            raise CliError(f"{name} draws on the PR plot; it has no meaning with --kind roc")
    multi = args.class_columns is not None or args.class_prefix is not None
    if multi and args.pos_label is not None:
        raise CliError("--pos-label applies only with --score; with --class-columns / --class-prefix each "
                       "class is in turn the positive one")
    try:
        from matplotlib.figure import Figure
    except ImportError:
        raise CliError("precall plot needs matplotlib, the 'plot' extra: "
                       "pip install 'precall[plot]'") from None
    from .. import plot

    path = args.file
    if multi:
        pairs, columns = read_classes(args)
        classes = [c for c, _ in pairs]
        y_true: Any = np.array(columns.labels)
        y_score: Any = columns.scores
        common: dict[str, Any] = {"labels": classes}
    else:
        names = list(dict.fromkeys(args.score))
        columns = read_scores(args, names)
        y_true = np.array(columns.labels)
        counts = label_counts(columns.labels)
        positive = resolve_pos_label(counts, args.pos_label, args.label, path)
        _refuse_undefined_curves(counts, positive, args.label, path, args.kind)
        scores = columns.scores.reshape(len(columns.labels), -1)
        y_score = {name: scores[:, j] for j, name in enumerate(names)}
        common = {"pos_label": positive}
    if multi and (args.ci or args.at_points):
        raise CliError("--ci and --at-* draw on one model's curves; with --class-columns / --class-prefix "
                       "plot a class as a --score column")
    on_undefined = on_undefined_arg(args)
    marks = {"best_f1": args.best_f1, "points": args.at_points or None, "ci": args.ci,
             "print_thresholds": args.print_thresholds, "on_undefined": on_undefined}
    legend = {"max_legend": None if args.full else plot.LEGEND_ENTRIES}
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
                                      prevalence=list(dict.fromkeys(args.prevalence)), best_f1=args.best_f1,
                                      points=args.at_points or None, print_thresholds=args.print_thresholds,
                                      on_undefined=on_undefined, **common)
                        continue
                    plot.pr_curve(y_true, y_score, sample_weight=columns.weights, ties=args.ties,
                                  method=args.method, envelope=args.envelope,
                                  eleven_point=args.eleven_point, iso_f1=args.iso_f1, ax=ax, **marks, **legend,
                                  **common)
                else:
                    plot.roc_curve(y_true, y_score, sample_weight=columns.weights, max_fpr=args.max_fpr,
                                   ax=ax, **marks, **legend, **common)
        except (ValueError, TypeError) as exc:
            if multi:  # under --on-undefined raise: the classes named (the library cannot name them)
                raise class_error(path, exc, columns, classes, args.label, on_undefined) from None
            raise CliError(f"{path}: {exc}") from None
        if args.title:
            fig.suptitle(plot.mpl(args.title))  # drawn as written: no mathtext from user text
        _save(fig, out, args.dpi)
    messages = [str(w.message) for w in caught]
    if multi:
        messages = class_warnings(messages, classes, columns.labels, args.label, option=True)
    print_warning_messages(path, messages)
    print(f"wrote {out}", file=sys.stderr)
    return 0



def register(sub: Any) -> None:
    pl = sub.add_parser(
        "plot",
        help="draw PR and/or ROC curves to a PNG, SVG or PDF file",
        description="Draw the precision-recall curve (the step curve step AP measures, with the "
        "prevalence baseline; optionally the VOC2010 envelope, the VOC2007 11 points and iso-F1 "
        "curves) and/or the ROC curve (area shaded, chance diagonal, optional max-FPR region) of "
        "one or more score columns, or of each class with --class-columns. Needs matplotlib "
        "(pip install 'precall[plot]').",
    )
    add_file_arguments(pl)
    plot_scores = pl.add_mutually_exclusive_group(required=True)
    plot_scores.add_argument("--score", action="append", metavar="COL",
                             help="a score column (repeat to overlay several models)")
    plot_scores.add_argument("--class-columns", metavar="C1,C2,...",
                             help="multi-class: one score column per class, C1,C2,... (each named as its "
                             "class) or LABEL1=C1,LABEL2=C2,...: one curve per class and the micro-average")
    plot_scores.add_argument("--class-prefix", metavar="P",
                             help="multi-class: every column named P + LABEL is the score of class LABEL")
    pl.add_argument("-o", "--output", required=True, metavar="OUT",
                    help="output file: .png, .svg or .pdf")
    pl.add_argument("--kind", choices=("pr", "roc", "both"), default="both",
                    help="which curves (default both, side by side)")
    pl.add_argument("--method", choices=precall.AP_METHODS, default="step",
                    help="AP convention quoted in the legend (default step)")
    pl.add_argument("--envelope", action="store_true", help="draw the VOC2010 precision envelope")
    pl.add_argument("--eleven-point", action="store_true", help="mark the VOC2007 11 points")
    pl.add_argument("--iso-f1", action="store_true", help="draw curves of equal F1")
    pl.add_argument("--max-fpr", type=max_fpr_arg, metavar="F",
                    help="shade FPR <= F on the ROC plot and quote the partial AUC (F in (0, 1]; 1 is "
                    "the full AUC)")
    pl.add_argument("--ties", choices=TIES, default="group", help="tie rule (default group)")
    pl.add_argument("--prevalence", type=prevalence_arg, action="append", metavar="PI",
                    help="one --score: also draw the PR curve at prevalence PI (repeatable), each with its "
                    "baseline and unachievable region shaded; the ROC curve does not change")
    pl.add_argument("--ci", action="store_true",
                    help=f"95%% bands (bootstrap, {BAND_RESAMPLES} resamples over blocks "
                    "of thresholds; pROC's ci.se) and the 95%% interval of the AUC (DeLong; the bootstrap with "
                    f"--weight) and of the AP (bootstrap: {precall.stats.DEFAULT_RESAMPLES} resamples, seed "
                    f"{precall.stats.DEFAULT_SEED}, as evaluate --ci) in the legend")
    pl.add_argument("--best-f1", action=argparse.BooleanOptionalAction, default=True,
                    help="mark the best-F1 point with its threshold (default on)")
    pl.set_defaults(at_points=[])
    pl.add_argument("--at-recall", type=unit_arg, action=_at("recall"), metavar="R", dest="at_points",
                    help="mark the operating point at recall R, its threshold in the legend (repeatable)")
    pl.add_argument("--at-precision", type=unit_arg, action=_at("precision"), metavar="P", dest="at_points",
                    help="mark the operating point at precision P (repeatable)")
    pl.add_argument("--at-threshold", type=finite_arg, action=_at("threshold"), metavar="T", dest="at_points",
                    help="mark the operating point at score >= T (repeatable)")
    pl.add_argument("--at-best", choices=BEST_POINTS, action=_at("best"), dest="at_points",
                    help="mark the best point by Youden's index (TPR - FPR) or the point closest to the ROC "
                    "corner (0, 1), as pROC's print.thres = \"best\" (repeatable)")
    pl.add_argument("--print-thresholds", action="store_true",
                    help="print each marked point's threshold beside it on the curve (pROC's print.thres)")
    pl.add_argument("--title", help="figure title")
    pl.add_argument("--dpi", type=int_in(20, 1200), default=110, help="resolution of a PNG (default 110)")
    pl.add_argument("--full", action="store_true",
                    help="every curve's entry in the legends (default: the first 20 models' or classes' entries, "
                    "then '... and K more', so that the figure keeps its size; every curve is drawn)")
    add_on_undefined_option(pl)
    pl.set_defaults(func=cmd_plot)
