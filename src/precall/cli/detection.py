"""``precall detection coco | voc | text``: object-detection mAP."""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys
import warnings
from typing import Any

import precall

from ._common import CliError, add_output_options, int_in, print_warning_messages, terminal_progress, unit_arg
from ._format import fit, fmt, json_safe, render_table


# ---------------------------------------------------------------------------
# detection
def cmd_detection_coco(args: argparse.Namespace) -> int:
    from .. import detection

    for path in (args.gt, args.results):
        if not os.path.isfile(path):
            raise CliError(f"{path}: no such file")
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            data = detection.load_coco(args.gt, args.results)
            ev = detection.evaluate_coco(
                data, max_dets=None if args.max_dets is None else tuple(args.max_dets), ties=args.ties,
                iou_type=args.iou_type, iou_thresholds=args.iou_thresholds, area_ranges=args.area_ranges,
                kpt_oks_sigmas=args.kpt_oks_sigmas, use_cats=not args.no_cats,
                progress=terminal_progress("evaluating", len(data.dt_score)))
    except (ValueError, TypeError) as exc:
        raise CliError(_in_file(str(exc), args)) from None
    print_warning_messages(args.results, [str(w.message) for w in caught])
    if args.plot:
        entries = []
        for row in ev.per_class:
            if row["n_gt"] == 0:
                continue
            curves = []
            for iou in (0.5, 0.75):
                try:
                    curves.append((f"IoU {iou:g}", ev.threshold_table(row["id"], iou_threshold=iou)))
                except ValueError:  # no counted detection at this IoU, or not an evaluated threshold
                    continue
            entries.append((row["id"], row["name"], row["n_gt"], curves))
        _plot_classes(entries, args.plot, "coco")
    ci = None
    if args.ci:
        try:
            ci = ev.bootstrap(args.n_resamples, random_state=args.seed,
                              progress=terminal_progress("bootstrap", 100_001) if len(data.dt_score) > 20_000 else None)
        except ValueError as exc:
            raise CliError(str(exc)) from None
    if args.json:
        out = {"stats": dict(zip(ev.stat_names, ev.stats.tolist())), "iou_type": ev.iou_type,
               "max_dets": list(ev.max_dets), "ties": args.ties, "per_class": ev.per_class}
        if ci is not None:
            out["ci"] = {name: list(v) for name, v in ci.intervals.items()}
            out["ci_per_class"] = {str(k): list(v) for k, v in ci.per_class.items()}
            out["ci_method"] = (f"percentile bootstrap over images, {ci.n_resamples} resamples, "
                                f"level {ci.confidence_level}, seed {args.seed}")
        print(json.dumps(json_safe(out), indent=2, allow_nan=False))
        return 0
    lines = [*fit([f"ground truth {args.gt}; results {args.results}; ties {args.ties}"], wide=args.wide), "",
             ev.to_text()]
    if ci is not None:
        lines += ["", ci.to_text() + f" ({ci.n_resamples} resamples, seed {args.seed})"]
    if args.per_class:
        areas = [k for k in ev.per_class[0] if k.startswith("AP_")] if ev.per_class else []
        rows = [[str(r["name"]), fmt(r["AP"], 3), fmt(r["AP50"], 3), fmt(r["AP75"], 3),
                 *(fmt(r[k], 3) for k in areas), fmt(r["AR"], 3), str(r["n_gt"]), str(r["n_det"])]
                for r in ev.per_class]
        lines += ["", *render_table(["class", "AP", "AP50", "AP75", *areas, f"AR@{ev.max_dets[-1]}", "#GT",
                                     "#detections"], rows, wide=args.wide),
                  "(-1: no ground truth of that class in that area range)"]
    print("\n".join(lines))
    return 0



def _in_file(message: str, args: argparse.Namespace) -> str:
    """An error about a record found after loading (e.g. a mask decoded by the evaluation), prefixed with its
    file as the loader's errors are."""
    for prefix, path in (("results ", args.results), ("ground truth ", args.gt)):
        if message.startswith(prefix) and path not in message:
            return f"{path}: {message}"
    return message


def _figure_path(folder: str, class_id: Any, name: Any) -> str:
    """``DIR/<id>_<name>.png`` confined to ``folder``: the id an integer (else the sanitised text), the
    name reduced to letters, digits, ``-``, ``_`` and inner dots, at most 80 characters."""
    ident = str(int(class_id)) if isinstance(class_id, int) else _safe(str(class_id))
    base = f"{ident}_{_safe(str(name))}"[:120] + ".png"
    path = os.path.join(folder, base)
    root = os.path.realpath(folder)
    if os.path.dirname(os.path.realpath(path)) != root:  # cannot happen with the names above; kept as a guard
        raise CliError(f"--plot: the file name {base!r} for class {name!r} would leave {folder!r}")
    return path


def _safe(text: str) -> str:
    safe = "".join(ch if (ch.isascii() and ch.isalnum()) or ch in "-_." else "_" for ch in text)[:80]
    return safe.strip(".") or "_"


def _plot_classes(entries: list[tuple[Any, Any, int, list[tuple[str, Any]]]], folder: str, method: str) -> None:
    """One PNG per class: ``entries`` are (id, name, #ground truths, [(label, table), ...]); each
    table drawn with the AP convention's curve ``method`` (``--plot DIR``), progress on a terminal."""
    if importlib.util.find_spec("matplotlib") is None:
        raise CliError("--plot needs matplotlib, the 'plot' extra: pip install 'precall[plot]'")
    from matplotlib.figure import Figure

    from .. import plot

    try:
        os.makedirs(folder, exist_ok=True)
    except OSError as exc:
        raise CliError(f"--plot {folder!r}: cannot create the folder: {exc.strerror or exc}") from None
    progress = terminal_progress("plotting", 100_001) if len(entries) > 10 else None  # ~0.3 s per figure
    for i, (ident, name, n_gt, curves) in enumerate(entries):
        if progress is not None:
            progress(i / len(entries))
        fig = Figure(figsize=(5.0, 5.0))  # the style of precall plot / report: legend below the axes
        ax = fig.subplots()
        plot.setup_pr_axes(ax)
        for label, table in curves:
            plot.draw_pr(ax, table, label=label, method=method)
        ax.set_title(plot.mpl(f"{name} ({n_gt} ground truths)"))
        if curves:
            plot.place_legend(ax)
        else:
            ax.text(0.5, 0.5, "no detection of this class", ha="center", va="center")
        fig.savefig(_figure_path(folder, ident, name), dpi=90, bbox_inches="tight")
    if progress is not None:
        progress(1.0)
    print(f"wrote {len(entries)} figures to {folder}", file=sys.stderr)


def cmd_detection_voc(args: argparse.Namespace) -> int:
    from .. import detection

    try:
        if args.protocol == "voc":
            data = detection.load_voc(args.annotations, args.detections, box_format=args.box_format)
        else:
            data = detection.load_text(args.gt_dir, args.det_dir, box_format=args.box_format)
        ev = detection.evaluate_voc(data, iou_threshold=args.iou, method=args.metric,
                                    pixel_offset=args.pixel_offset, inclusive=args.inclusive, ties=args.ties)
    except (ValueError, TypeError, OSError) as exc:
        raise CliError(str(exc)) from None
    n_det = {c: int((data.dt_class == c).sum()) for c in ev.n_gt}
    if args.plot:
        entries = [(k, c, ev.n_gt[c], [(f"IoU {ev.iou_threshold:g}", ev.tables[c])] if c in ev.tables else [])
                   for k, c in enumerate(ev.n_gt) if ev.n_gt[c] > 0]
        _plot_classes(entries, args.plot, ev.method)
    if args.json:
        print(json.dumps(json_safe({"ap": {str(k): v for k, v in ev.ap.items()}, "mAP": ev.map,
                                     "method": ev.method, "iou_threshold": ev.iou_threshold,
                                     "n_gt": {str(k): v for k, v in ev.n_gt.items()},
                                     "n_det": {str(k): v for k, v in n_det.items()}}), indent=2))
    elif args.per_class:
        rows = [[str(c), fmt(ev.ap[c], 6) if c in ev.ap else "-", str(ev.n_gt[c]), str(n_det[c])] for c in ev.n_gt]
        print("\n".join([*render_table(["class", f"AP ({ev.method}, IoU {ev.iou_threshold:g})", "#GT", "#detections"],
                                       rows, wide=args.wide), f"mAP {fmt(ev.map, 6)}", "(-: no ground truth of that class)"]))
    else:
        print(ev.to_text())
    return 0



def _float_list(text: str) -> list[float]:
    try:
        values = [float(t) for t in text.replace(",", " ").split()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected numbers separated by commas; got {text!r}") from None
    if not values:
        raise argparse.ArgumentTypeError("expected at least one number")
    return values


def _area_ranges(text: str) -> dict[str, tuple[float, float]]:
    out: dict[str, tuple[float, float]] = {}
    for part in text.split(","):
        name, _, rng = part.partition("=")
        lo, _, hi = rng.partition(":")
        try:
            low, high = float(lo), float(hi)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected NAME=LOW:HIGH,...; got {part!r}") from None
        if not name.strip() or not low <= high:
            raise argparse.ArgumentTypeError(f"expected NAME=LOW:HIGH with LOW <= HIGH; got {part!r}")
        out[name.strip()] = (low, high)
    return out


def register(sub: Any) -> None:
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
    coco.add_argument("--iou-type", choices=("bbox", "segm", "keypoints"), default="bbox",
                      help="box IoU (default), mask IoU of the segmentations, or keypoint OKS")
    coco.add_argument("--max-dets", type=int_in(1), nargs="+", default=None, metavar="N",
                      help="detections per image, distinct, any order (default 1 10 100; 20 for keypoints); any number "
                      "of values, e.g. 100 300 1000 for proposal recall")
    coco.add_argument("--iou-thresholds", type=_float_list, default=None, metavar="T1,T2,...",
                      help="IoU thresholds (default 0.50:0.05:0.95), e.g. 0.5,0.75")
    coco.add_argument("--area-ranges", type=_area_ranges, default=None, metavar="NAME=LO:HI,...",
                      help="area ranges (default all/small/medium/large), e.g. all=0:1e10,small=0:1024")
    coco.add_argument("--kpt-oks-sigmas", type=_float_list, default=None, metavar="S1,S2,...",
                      help="keypoint OKS sigmas, one per keypoint (default COCO's 17)")
    coco.add_argument("--ci", action="store_true",
                      help="95%% percentile bootstrap intervals over images for mAP, AP50, AP75 (and per class)")
    coco.add_argument("--n-resamples", type=int_in(1), default=1000, help="bootstrap resamples (default 1000)")
    coco.add_argument("--seed", type=int_in(0), default=0, help="bootstrap seed (default 0)")
    coco.add_argument("--no-cats", action="store_true",
                      help="class-agnostic: pool all categories (pycocotools' useCats=0)")
    coco.add_argument("--ties", choices=("stable", "group"), default="stable",
                      help="stable: pycocotools' order (default); group: equal scores as one step")
    coco.add_argument("--json", action="store_true", help="print one JSON object")
    coco.add_argument("--plot", metavar="DIR", help="write each class's PR curves (IoU 0.5, 0.75) as PNGs in DIR")
    add_output_options(coco, undefined=False)
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
        sp.add_argument("--iou", type=unit_arg, default=0.5, help="IoU threshold (default 0.5)")
        sp.add_argument("--metric", choices=precall.AP_METHODS, default="voc2010",
                        help="AP convention (default voc2010; voc2007 for the 11-point metric)")
        sp.add_argument("--box-format", choices=("xyxy", "xywh", "cxcywh"), default=default_format,
                        help=f"coordinates of per-image text files (default {default_format})")
        sp.add_argument("--pixel-offset", type=float, default=1.0,
                        help="added to box sides in the IoU (VOC: 1, the default; 0: continuous boxes)")
        sp.add_argument("--inclusive", action="store_true", help="IoU >= threshold counts (default >)")
        sp.add_argument("--ties", choices=("stable", "group"), default="stable", help="tie rule (default stable)")
        sp.add_argument("--json", action="store_true", help="print one JSON object")
        sp.add_argument("--per-class", action="store_true", help="a table of AP, #GT and #detections per class")
        sp.add_argument("--plot", metavar="DIR", help="write each class's PR curve as a PNG in DIR")
        add_output_options(sp, undefined=False)
        sp.set_defaults(func=cmd_detection_voc)
