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
from precall._core.text import columns, pad, percent, visible

from ._common import (ON_UNDEFINED, CliError, add_output_options, finite_arg, int_in, level_arg, on_undefined_arg,
                      print_warning_messages, resamples_arg, terminal_progress, unit_arg)
from ._format import WIDTH, fit, fmt, json_safe, json_text, legend, render_table, short_names


# ---------------------------------------------------------------------------
# class names in tables: within 80 columns unless --wide (long names shortened, a legend below)
def _shown_names(names: list[str], limit: int, wide: bool) -> tuple[list[str], list[str]]:
    """``names`` (class names) as a table shows them: as they are with ``wide``; else within ``limit``
    terminal columns, long ones shortened (:func:`~precall.cli._format.short_names`, as ``evaluate``
    does), and the lines of their legend (``classes:`` and each shortened name's full one)."""
    if wide:
        return list(names), []
    shown, renamed = short_names(list(names), limit)
    return shown, (["", "classes:", *legend(renamed)] if renamed else [])


def _class_table(header: list[str], rows: list[list[str]], *, wide: bool) -> tuple[list[str], list[str]]:
    """The lines of a table whose rows start with a class name (the key column), and of its legend:
    within 80 columns unless ``wide``, a name too wide to leave room for the widest other column
    beside it is shortened, its full name in the legend; ``wide``: the full names, no legend."""
    others = max((columns(visible(c)) for row in [header, *rows] for c in row[1:]), default=0)
    names, notes = _shown_names([row[0] for row in rows], WIDTH - 2 - others, wide)
    return render_table(header, [[name, *row[1:]] for name, row in zip(names, rows)], wide=wide), notes


# ---------------------------------------------------------------------------
# detection
def _evaluate_coco(args: argparse.Namespace, results: str, *, first: bool = True) -> Any:
    """The COCO evaluation of ``results`` against ``args.gt`` with the command's options; warnings one line
    each; a CrowdPose ground truth refused for keypoints (COCO's rules give other numbers than CrowdPose's)."""
    from .. import detection

    for path in (args.gt, results):
        _regular_file(path)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            data = detection.load_coco(args.gt, results)
            if args.iou_type == "keypoints" and data.crowd_index:
                raise CliError(f"{args.gt}: a CrowdPose ground truth (its images have 'crowdIndex'): COCO's keypoint "
                               "rules give other numbers than CrowdPose's (OKS scale 0.53 w h, AP easy / medium / "
                               "hard); run: precall detection crowdpose GT.json RESULTS.json")
            ev = detection.evaluate_coco(
                data, max_dets=None if args.max_dets is None else tuple(args.max_dets), ties=args.ties,
                iou_type=args.iou_type, iou_thresholds=args.iou_thresholds, area_ranges=args.area_ranges,
                kpt_oks_sigmas=args.kpt_oks_sigmas, use_cats=not args.no_cats,
                progress=terminal_progress("evaluating", len(data.dt_score)))
    except (ValueError, TypeError) as exc:
        raise CliError(_in_file(str(exc), args.gt, results)) from None
    messages = [str(w.message) for w in caught]  # every number -1 (the ground truth's doing): said once
    _print_warnings([m for m in messages if first or m != _no_ground_truth()], args.gt, results)
    return data, ev


def _no_ground_truth() -> str:
    """:func:`~precall.detection.evaluate_coco`'s warning that every number is -1 (the ground truth's doing)."""
    from ..detection.coco import NO_GROUND_TRUTH

    return NO_GROUND_TRUTH


def _print_warnings(messages: list[str], gt: str, results: str) -> None:
    """One line per warning, naming the file it is about: the loader's name their file already; others
    by their subject ("ground truth ...", "results ..."), else both files (a warning of the evaluation)."""
    for message in messages:
        for path in (gt, results):
            if message.startswith(f"{path}: "):
                print_warning_messages(path, [message[len(path) + 2:]])
                break
        else:
            about_gt = message.startswith("ground truth") or message == _no_ground_truth()
            source = gt if about_gt else results if message.startswith("results") \
                else f"{gt}, {results}"
            print_warning_messages(source, [message])


def cmd_detection_coco(args: argparse.Namespace) -> int:
    data, ev = _evaluate_coco(args, args.results)
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
            ci = ev.bootstrap(args.n_resamples, random_state=args.seed, method=args.ci_method,
                              progress=terminal_progress("bootstrap", 100_001) if len(data.dt_score) > 20_000 else None)
        except ValueError as exc:
            raise CliError(str(exc)) from None
    diagnostics = _diagnostics(args, data, ev)
    if args.json:
        out = {"stats": dict(zip(ev.stat_names, ev.stats.tolist())), "iou_type": ev.iou_type,
               "max_dets": list(ev.max_dets), "ties": args.ties, "per_class": ev.per_class}
        if ci is not None:
            out["ci"] = {name: list(v) for name, v in ci.intervals.items()}
            out["ci_per_class"] = {str(k): list(v) for k, v in ci.per_class.items()}
            out["ci_method"] = (f"{ci.method} bootstrap over images, {ci.n_resamples} resamples, "
                                f"level {ci.confidence_level}, seed {ci.seed}")
            out["ci_bias"] = ci.bias
            out["ci_bias_per_class"] = {str(k): v for k, v in (ci.per_class_bias or {}).items()}
        out.update(_diagnostics_json(diagnostics))
        print(json_text(json_safe(out)))
        return 0
    lines = [*fit([f"ground truth {args.gt}; results {args.results}; ties {args.ties}"], wide=args.wide), "",
             ev.to_text(width=None if args.wide else WIDTH)]
    if ci is not None:
        lines += ["", ci.to_text()]
    if args.per_class:
        areas = [k for k in ev.per_class[0] if k.startswith("AP_")] if ev.per_class else []
        rows = [[str(r["name"]), fmt(r["AP"], 3), fmt(r["AP50"], 3), fmt(r["AP75"], 3),
                 *(fmt(r[k], 3) for k in areas), fmt(r["AR"], 3), str(r["n_gt"]), str(r["n_det"])]
                for r in ev.per_class]
        table, notes = _class_table(["class", "AP", "AP50", "AP75", *areas, f"AR@{ev.max_dets[-1]}", "#GT",
                                     "#detections"], rows, wide=args.wide)
        lines += ["", *table, "(-1: no ground truth of that class in that area range)", *notes]
    lines += _diagnostics_text(diagnostics, args)
    print("\n".join(lines))
    return 0


# ---------------------------------------------------------------------------
# diagnostics of `detection coco`: --at-confidence, --confusion, --errors (issue 24)
_BEST = object()  # --at-confidence without a value: only the F1-optimal points


def _diagnostics(args: argparse.Namespace, data: Any, ev: Any) -> dict[str, Any]:
    """The operating points, confusion matrix and error breakdown asked for (and their pictures in --plot)."""
    from .. import detection

    out: dict[str, Any] = {}
    asked = [name for name, on in (("--at-confidence", args.at_confidence is not None), ("--errors", args.errors))
             if on]
    if asked and "all" not in ev.area_ranges:  # both are of the range of the first summary number
        raise CliError(f"{' and '.join(asked)} need{'s' if len(asked) == 1 else ''} an area range named 'all' (the "
                       "range of the first summary number): add one to --area-ranges, e.g. all=0:1e10")
    try:
        if args.at_confidence is not None:
            conf = None if args.at_confidence is _BEST else args.at_confidence
            out["op"] = detection.operating_points(ev, conf, iou_threshold=args.diagnostics_iou)
        if args.confusion:
            if args.iou_type == "keypoints":
                raise CliError("--confusion needs boxes or masks (--iou-type bbox or segm)")
            out["cm"] = detection.confusion_matrix(data, confidence=args.confusion_confidence,
                                                   iou_threshold=args.confusion_iou, iou_type=args.iou_type)
        if args.errors:
            if args.iou_type == "keypoints":
                raise CliError("--errors needs boxes or masks (--iou-type bbox or segm)")
            # the evaluation's matching and AP (its options, as evaluated): the baseline AP is the summary's
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                out["eb"] = detection.error_breakdown(data, iou_type=args.iou_type, iou_thresholds=ev.iou_thresholds,
                                                      max_dets=ev.max_dets, area_ranges=ev.area_ranges, ties=ev.ties,
                                                      use_cats=not args.no_cats,
                                                      recall_thresholds=ev.recall_thresholds)
            said = (ev.precision == -1).all()  # the evaluation's own warning: no ground truth counts anywhere
            _print_warnings([str(w.message) for w in caught if not (said and str(w.message) == _no_ground_truth())],
                            args.gt, args.results)
    except (ValueError, TypeError) as exc:
        raise CliError(_in_file(str(exc), args.gt, args.results)) from None
    if args.plot and out:
        _plot_diagnostics(out, args.plot)
    return out


def _plot_diagnostics(out: dict[str, Any], folder: str) -> None:
    if importlib.util.find_spec("matplotlib") is None:
        raise CliError("--plot needs matplotlib, the 'plot' extra: pip install 'precall[plot]'")
    from matplotlib.figure import Figure

    from ..plot import detection as draw

    os.makedirs(folder, exist_ok=True)  # _plot_classes created it or reported why not
    pictures = []
    if "op" in out:
        for kind in ("f1", "precision", "recall"):
            fig = Figure(figsize=(6, 6.5))
            draw.draw_confidence_curves(out["op"], kind, ax=fig.subplots())
            pictures.append((fig, f"{kind}_confidence.png"))
    if "cm" in out:
        n = len(out["cm"].labels)
        fig = Figure(figsize=(min(4 + 0.35 * n, 30), min(3.5 + 0.35 * n, 30)))
        draw.draw_confusion_matrix(out["cm"], ax=fig.subplots())
        pictures.append((fig, "confusion_matrix.png"))
    if "eb" in out:
        fig = Figure(figsize=(9, 4))
        axes = fig.subplots(1, 2)
        draw.draw_error_breakdown(out["eb"], ax=axes[0], iou_threshold=float(out["eb"].iou_thresholds[0]))
        draw.draw_error_breakdown(out["eb"], ax=axes[1], iou_threshold=None)
        pictures.append((fig, "errors.png"))
    for fig, name in pictures:
        fig.savefig(os.path.join(folder, name), dpi=90, bbox_inches="tight")
    print(f"wrote {', '.join(name for _, name in pictures)} to {folder}", file=sys.stderr)


def _diagnostics_json(out: dict[str, Any]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    if "op" in out:
        op = out["op"]
        result["operating_points"] = {"iou_threshold": op.iou_threshold, "confidence": op.confidence,
                                      "per_class": op.per_class, "common": op.common}
    if "cm" in out:
        cm = out["cm"]
        result["confusion_matrix"] = {"matrix": cm.matrix.tolist(), "labels": cm.labels,
                                      "class_ids": cm.class_ids, "confidence": cm.confidence,
                                      "iou_threshold": cm.iou_threshold, "layout": "matrix[predicted][true]"}
    if "eb" in out:
        eb = out["eb"]
        result["errors"] = {"iou_thresholds": eb.iou_thresholds.tolist(), "ap": eb.ap.tolist(),
                            "delta_ap": {k: v.tolist() for k, v in eb.delta.items()},
                            "counts": {k: v.tolist() for k, v in eb.counts.items()},
                            "mean": eb.at(None),  # over the thresholds; "AP": the summary's AP, to the bit
                            "n_fp": eb.n_fp.tolist(), "n_fn": eb.n_fn.tolist(),
                            "background_threshold": eb.background_threshold}
    return result


def _diagnostics_text(out: dict[str, Any], args: argparse.Namespace) -> list[str]:
    lines: list[str] = []
    if "op" in out:
        op = out["op"]
        c = op.common
        table, notes = _class_table(op.header(), op.rows(), wide=args.wide)
        lines += ["", *fit([f"operating points at IoU {op.iou_threshold:g} (detections with score >= the "
                            "confidence)"], wide=args.wide), *table,
                  *fit([f"best mean F1 over classes: {fmt(c['f1'], 3)} at confidence {fmt(c['threshold'], 4)} "
                        f"(mean precision {fmt(c['precision'], 3)}, recall {fmt(c['recall'], 3)})"], wide=args.wide),
                  *notes]
    if "cm" in out:
        cm = out["cm"]
        # a class name heads a row and a column: the key column and one count column within 80 columns
        names, notes = _shown_names(cm.labels[:-1], (WIDTH - 2) // 2, args.wide)
        header = [cm.header()[0], *names, cm.labels[-1]]
        rows = [[name, *row[1:]] for name, row in zip([*names, cm.labels[-1]], cm.rows())]
        lines += ["", *fit([f"confusion matrix (rows predicted, columns true; confidence >= {cm.confidence:g}, "
                            f"IoU > {cm.iou_threshold:g}; ultralytics' pairing)"], wide=args.wide),
                  *render_table(header, rows, wide=args.wide), *notes]
    if "eb" in out:
        eb = out["eb"]
        lines += ["", *fit([f"errors (TIDE): mAP points gained by fixing each type; background below IoU "
                            f"{eb.background_threshold:g}"], wide=args.wide),
                  *render_table(eb.header(), eb.rows(), wide=args.wide)]
    return lines



def cmd_detection_compare(args: argparse.Namespace) -> int:
    from .. import detection

    (_, a), (_, b) = _evaluate_coco(args, args.results_a), _evaluate_coco(args, args.results_b, first=False)
    try:
        out = detection.compare_coco(a, b, args.n_resamples, confidence_level=args.level, random_state=args.seed)
    except ValueError as exc:
        raise CliError(str(exc)) from None
    method = (f"paired percentile bootstrap over images (the same draws for both), {out.n_resamples} resamples, "
              f"level {out.confidence_level:g}, seed {out.seed}")
    names = {"mAP": 0, "AP50": 1, "AP75": 2}
    if args.json:
        print(json.dumps(json_safe({"a": args.results_a, "b": args.results_b, "iou_type": a.iou_type, "method": method,
                                    **{name: {"a": float(a.stats[i]), "b": float(b.stats[i]),
                                              "difference": out.difference[name], "ci": list(out.intervals[name]),
                                              "p_b_better": out.p_b_better[name]} for name, i in names.items()}}),
                         indent=2, allow_nan=False))
        return 0
    pct = percent(out.confidence_level)
    rows = [[name, fmt(a.stats[i], 3), fmt(b.stats[i], 3), fmt(out.difference[name], 3),
             f"[{fmt(out.intervals[name][0], 3)}, {fmt(out.intervals[name][1], 3)}]", fmt(out.p_b_better[name], 3)]
            for name, i in names.items()]
    lines = [*fit([f"ground truth {args.gt}; A {args.results_a}; B {args.results_b}; {a.iou_type}"], wide=args.wide),
             "", *render_table(["", "A", "B", "B - A", f"{pct} interval", "P(B > A)"], rows, wide=args.wide),
             *fit([f"({method}; P(B > A): the share of replicates where B is higher)"], wide=args.wide)]
    print("\n".join(lines))
    return 0


def cmd_detection_crowdpose(args: argparse.Namespace) -> int:
    from .. import detection

    for path in (args.gt, args.results):
        _regular_file(path)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            out = detection.evaluate_crowdpose(args.gt, args.results)
    except (ValueError, TypeError) as exc:
        raise CliError(_in_file(str(exc), args.gt, args.results)) from None
    _print_warnings([str(w.message) for w in caught], args.gt, args.results)
    if args.json:
        print(json_text(json_safe(out)))
        return 0
    rows = [[name, fmt(value, 3)] for name, value in out.items()]
    print("\n".join([*fit([f"ground truth {args.gt}; results {args.results}; CrowdPose's protocol (14 sigmas, OKS "
                            "scale 0.53 w h, maxDets 20; easy / medium / hard by crowdIndex)"], wide=args.wide), "",
                      *render_table(["CrowdPose", "value"], rows, wide=args.wide),
                      "(-1: no image in that crowd-index range)"]))
    return 0


def _regular_file(path: str) -> None:
    """Refuse a path that is not a regular file before it is opened (reading a FIFO would wait forever)."""
    if not os.path.isfile(path):
        raise CliError(f"{path}: " + ("not a regular file (a FIFO, device or folder); give a file"
                                      if os.path.exists(path) else "no such file"))


def _in_file(message: str, gt: str, results: str) -> str:
    """An error about a record found after loading (e.g. a mask decoded by the evaluation), prefixed with its
    file as the loader's errors are."""
    for prefix, path in (("results ", results), ("ground truth ", gt)):
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
        ax.set_title(plot.mpl(f"{plot.short_name(name)} ({n_gt} ground truths)"))
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

    ground_truth = args.annotations if args.protocol == "voc" else args.gt_dir
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            if args.protocol == "voc":
                data = detection.load_voc(args.annotations, args.detections, box_format=args.box_format)
            else:
                data = detection.load_text(args.gt_dir, args.det_dir, box_format=args.box_format)
            ev = detection.evaluate_voc(data, iou_threshold=args.iou, method=args.metric,
                                        pixel_offset=args.pixel_offset, inclusive=args.inclusive, ties=args.ties,
                                        on_undefined=on_undefined_arg(args))
    except (ValueError, TypeError, OSError) as exc:
        raise CliError(str(exc).replace("on_undefined='warn', 'nan' or a number", "--on-undefined warn, nan or "
                                        "zero")) from None
    print_warning_messages(ground_truth, [str(w.message) for w in caught])  # undefined mAP: no ground truth
    n_det = {c: int((data.dt_class == c).sum()) for c in ev.n_gt}
    try:
        progress = terminal_progress("bootstrap", 100_001) if args.ci and len(data.dt_score) > 5_000 else None
        ci = ev.bootstrap(args.n_resamples, random_state=args.seed, progress=progress) if args.ci else None
    except ValueError as exc:
        raise CliError(str(exc)) from None
    method = None if ci is None else (f"95% percentile bootstrap over images, {ci.n_resamples} resamples, "
                                      f"seed {ci.seed}")

    def interval(pair: Any) -> str:
        return "-" if pair is None else f"[{fmt(pair[0], 3)}, {fmt(pair[1], 3)}]"
    if args.plot:
        entries = [(k, c, ev.n_gt[c], [(f"IoU {ev.iou_threshold:g}", ev.tables[c])] if c in ev.tables else [])
                   for k, c in enumerate(ev.n_gt) if ev.n_gt[c] > 0]
        _plot_classes(entries, args.plot, ev.method)
    if args.json:
        print(json.dumps(json_safe({"ap": {str(k): v for k, v in ev.ap.items()}, "mAP": ev.map,
                                     "method": ev.method, "iou_threshold": ev.iou_threshold,
                                     "n_gt": {str(k): v for k, v in ev.n_gt.items()},
                                     "n_det": {str(k): v for k, v in n_det.items()},
                                     **({} if ci is None else {
                                         "ci": list(ci.intervals["mAP"]), "ci_method": method,
                                         "ci_per_class": {str(k): list(v) for k, v in ci.per_class.items()}})}),
                         indent=2))
        return 0
    if args.per_class:
        rows = [[str(c), fmt(ev.ap[c], 6) if c in ev.ap else "-", str(ev.n_gt[c]), str(n_det[c])]
                + ([interval(ci.per_class.get(c))] if ci is not None else []) for c in ev.n_gt]
        table, notes = _class_table(["class", f"AP ({ev.method}, IoU {ev.iou_threshold:g})", "#GT", "#detections"]
                                    + (["95% interval"] if ci is not None else []), rows, wide=args.wide)
        lines = [*table, f"mAP {fmt(ev.map, 6)}", "(-: no ground truth of that class)"]
    else:
        lines, notes = _voc_text(ev, args.wide)
    if ci is not None:
        lines += fit([f"mAP 95% interval {interval(ci.intervals['mAP'])} ({method})"], wide=args.wide)
    print("\n".join([*lines, *notes]))  # the legend of shortened class names last
    return 0


def _voc_text(ev: Any, wide: bool) -> tuple[list[str], list[str]]:
    """:meth:`~precall.detection.VocEvaluation.to_text`'s lines (class, AP; mAP), the names shown
    visibly and within 80 columns unless ``wide`` (long ones shortened), and the legend's lines."""
    title = f"AP ({ev.method}, IoU threshold {ev.iou_threshold:g})"
    values = [f"{v:.6f}" for v in ev.ap.values()]
    names, notes = _shown_names([str(c) for c in ev.ap], WIDTH - 2 - max(map(len, [title, *values])), wide)
    names = [visible(n) for n in names]
    width = max([len("class")] + [columns(n) for n in names])
    return [f"{pad('class', width)}  {title}", *(f"{pad(n, width)}  {v}" for n, v in zip(names, values)),
            f"{pad('mAP', width)}  {ev.map:.6f}"], notes


def _float_list(text: str) -> list[float]:
    """Numbers separated by commas (or spaces); an empty field (``0.5,,0.7``, a trailing comma) is refused,
    not skipped."""
    if not text.strip():
        raise argparse.ArgumentTypeError("expected at least one number")
    values = []
    for i, field in enumerate(text.split(","), 1):
        if not field.strip():
            raise argparse.ArgumentTypeError(f"expected numbers separated by commas; field {i} of {text!r} is empty "
                                             "(remove the extra comma)")
        try:
            values += [float(t) for t in field.split()]
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected numbers separated by commas; got {text!r}") from None
    return values


def _area_ranges(text: str) -> dict[str, tuple[float, float]]:
    """``NAME=LOW:HIGH,...``: distinct names (a repeated one is refused, as --max-dets refuses a repeated
    value: which one was meant is not known)."""
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
        if name.strip() in out:
            raise argparse.ArgumentTypeError(f"the names must be distinct; {name.strip()!r} is given twice in {text!r}")
        out[name.strip()] = (low, high)
    return out


def register(sub: Any) -> None:
    det = sub.add_parser("detection", help="object-detection mAP (COCO, PASCAL VOC, text files)",
                         description="Object-detection evaluation on precall's ranking core.")
    det_sub = det.add_subparsers(dest="protocol", metavar="PROTOCOL", required=True)
    coco = det_sub.add_parser(
        "coco",
        help="COCO bbox, segm or keypoints evaluation: pycocotools' summary numbers, exactly",
        description="Evaluate COCO-format results (boxes, segmentation masks as polygons or RLE, or "
        "keypoints: --iou-type) against COCO ground truth with pycocotools' rules (crowds, area ranges, "
        "max detections per image; OKS with per-keypoint sigmas for keypoints); print the summary "
        "numbers (12 for bbox and segm, 10 for keypoints) and, with --per-class, a per-class table.",
    )
    coco.add_argument("gt", metavar="GT.json", help="COCO ground truth (images, annotations, categories)")
    coco.add_argument("results", metavar="RESULTS.json", help="COCO results: a list of detections")
    coco.add_argument("--per-class", action="store_true", help="also print AP, AP50, AP75 per class")
    compare = det_sub.add_parser(
        "compare", help="paired bootstrap of two COCO result files on one ground truth (B - A)",
        description="Evaluate two COCO result files (two models) on the same ground truth and give the "
        "differences B - A of mAP, AP50, AP75 with paired percentile bootstrap intervals over images.")
    compare.add_argument("gt", metavar="GT.json", help="COCO ground truth")
    compare.add_argument("results_a", metavar="A.json", help="COCO results of model A")
    compare.add_argument("results_b", metavar="B.json", help="COCO results of model B")
    compare.add_argument("--level", type=level_arg, default=0.95, help="confidence level (default 0.95)")
    for sp in (coco, compare):
        sp.add_argument("--iou-type", choices=("bbox", "segm", "keypoints"), default="bbox",
                        help="box IoU (default), mask IoU of the segmentations, or keypoint OKS")
        sp.add_argument("--max-dets", type=int_in(1), nargs="+", default=None, metavar="N",
                        help="detections per image, distinct, any order (default 1 10 100; 20 for keypoints); any "
                        "number of values, e.g. 100 300 1000 for proposal recall")
        sp.add_argument("--iou-thresholds", type=_float_list, default=None, metavar="T1,T2,...",
                        help="IoU thresholds (default 0.50:0.05:0.95), e.g. 0.5,0.75")
        sp.add_argument("--area-ranges", type=_area_ranges, default=None, metavar="NAME=LO:HI,...",
                        help="area ranges (default all/small/medium/large), e.g. all=0:1e10,small=0:1024")
        sp.add_argument("--kpt-oks-sigmas", type=_float_list, default=None, metavar="S1,S2,...",
                        help="keypoint OKS sigmas, one per keypoint (default COCO's 17; CrowdPose: detection crowdpose)")
        sp.add_argument("--no-cats", action="store_true",
                        help="class-agnostic: pool all categories (pycocotools' useCats=0)")
        sp.add_argument("--ties", choices=("stable", "group"), default="stable",
                        help="stable: pycocotools' order (default); group: equal scores as one step")
        sp.add_argument("--json", action="store_true", help="print one JSON object")
        add_output_options(sp, undefined=False)
    coco.add_argument("--ci", action="store_true",
                      help="95%% bootstrap intervals over images for mAP, AP50, AP75 (and per class), with the bias")
    coco.add_argument("--plot", metavar="DIR", help="write each class's PR curves (IoU 0.5, 0.75) as PNGs in DIR")
    coco.add_argument("--ci-method", choices=("basic", "percentile", "bias-corrected", "bc"), default="basic",
                      help="--ci interval design (default basic: it covers the population mAP where percentile "
                      "intervals miss it; docs/detection.md)")
    diag = coco.add_argument_group("diagnostics (printed after the summary; pictures in --plot DIR)")
    diag.add_argument("--at-confidence", type=finite_arg, nargs="?", const=_BEST, default=None, metavar="C",
                      help="per-class precision, recall, F1 at confidence C (score >= C) and at each class's "
                      "F1-optimal confidence; without C only the F1-optimal points")
    diag.add_argument("--diagnostics-iou", type=unit_arg, default=0.5,
                      help="IoU threshold of --at-confidence (default 0.5; one of the evaluated thresholds)")
    diag.add_argument("--confusion", action="store_true",
                      help="the confusion matrix with a background row and column (ultralytics' convention)")
    diag.add_argument("--confusion-confidence", type=finite_arg, default=0.25,
                      help="--confusion: detections with score >= it (default 0.25)")
    diag.add_argument("--confusion-iou", type=unit_arg, default=0.45, help="--confusion: IoU above it pairs (default 0.45)")
    diag.add_argument("--errors", action="store_true",
                      help="TIDE error breakdown: mAP gained by fixing each error type, per IoU threshold")
    coco.set_defaults(func=cmd_detection_coco)
    compare.set_defaults(func=cmd_detection_compare)
    crowdpose = det_sub.add_parser(
        "crowdpose", help="CrowdPose keypoint AP (its 14 sigmas, OKS scale 0.53 w h, AP easy / medium / hard)",
        description="CrowdPose's protocol: pycocotools' OKS evaluation with CrowdPose's sigmas, the ground "
        "truth's area 0.53 w h of its box, maxDets 20, no area ranges, and AP over the images of each "
        "crowd-index range (easy < 0.1, medium < 0.8, hard).")
    crowdpose.add_argument("gt", metavar="GT.json", help="CrowdPose ground truth (images with 'crowdIndex')")
    crowdpose.add_argument("results", metavar="RESULTS.json", help="keypoint results")
    crowdpose.add_argument("--json", action="store_true", help="print one JSON object")
    add_output_options(crowdpose, undefined=False)
    crowdpose.set_defaults(func=cmd_detection_crowdpose)
    voc = det_sub.add_parser("voc", help="PASCAL VOC AP per class and mAP (Detectron's voc_eval rules)",
                             description="PASCAL VOC XML annotations and detections (a per-class file pattern "
                             "with one {} for the class name ({{ and }} for literal braces), lines 'image score x1 "
                             "y1 x2 y2'; or a directory of per-image files 'class score x y w h' in --box-format).")
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
        sp.add_argument("--ci", action="store_true",
                        help="95%% percentile bootstrap intervals over images for mAP (and per class)")
        add_output_options(sp, undefined=False)
        sp.add_argument("--on-undefined", choices=ON_UNDEFINED, default="warn",
                        help="mAP when no class has ground truth that counts (undefined): warn (default: nan "
                        "with a warning), nan, raise (an error, exit 2) or zero")
        sp.set_defaults(func=cmd_detection_voc)
    for sp in (coco, compare, voc, text):
        sp.add_argument("--n-resamples", type=resamples_arg,
                        default=precall.stats.DEFAULT_RESAMPLES, metavar="N",
                        help=f"bootstrap resamples (default {precall.stats.DEFAULT_RESAMPLES}, as every command)")
        sp.add_argument("--seed", type=int_in(0), default=precall.stats.DEFAULT_SEED, metavar="N",
                        help=f"bootstrap seed (default {precall.stats.DEFAULT_SEED}, as every command)")
