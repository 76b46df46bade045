"""COCO bbox evaluation: precall against pycocotools (and faster-coco-eval when installed).

A deterministic synthetic COCO set (default 5000 images, 80 classes, ~7 ground truths
per image with small/medium/large areas and ~1% crowd, ~65 detections per image) is
evaluated by each tool in a fresh process of its own (load + evaluate + summarize, on
the same generated data); time, peak resident memory growth and the 12 summary
numbers (which must agree) are reported.

    python benchmarks/bench_coco.py [--images 5000] [--output FILE]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import platform
import resource
import subprocess
import sys
import time

import numpy as np

import precall
from _timing import emit
from precall import detection


def synthetic(n_images: int, n_classes: int = 80, seed: int = 0) -> tuple[dict, list]:
    rng = np.random.default_rng(seed)
    images = [{"id": i + 1, "width": 640, "height": 480} for i in range(n_images)]
    categories = [{"id": c + 1, "name": f"class{c + 1}"} for c in range(n_classes)]
    anns, results = [], []
    for img in images:
        for _ in range(int(rng.poisson(7))):
            cat = int(rng.integers(1, n_classes + 1))
            side = float(np.exp(rng.uniform(np.log(8), np.log(300))))
            w, h = side * rng.uniform(0.6, 1.4), side * rng.uniform(0.6, 1.4)
            x, y = rng.uniform(0, 640 - min(w, 600)), rng.uniform(0, 480 - min(h, 440))
            box = [float(x), float(y), float(w), float(h)]
            anns.append({"id": len(anns) + 1, "image_id": img["id"], "category_id": cat, "bbox": box,
                         "area": float(w * h * 0.8), "iscrowd": int(rng.random() < 0.01)})
            for _ in range(int(rng.integers(1, 5))):  # detections near the object
                jitter = rng.normal(0, 0.12, 4) * [w, h, w, h]
                results.append({"image_id": img["id"], "category_id": cat,
                                "bbox": [float(v) for v in np.array(box) + jitter],
                                "score": float(np.round(rng.beta(5, 2), 3))})
        n_fp = max(0, 65 - 3 * 7)
        for _ in range(int(rng.poisson(n_fp))):  # background detections
            w, h = np.exp(rng.uniform(np.log(8), np.log(300), 2))
            results.append({"image_id": img["id"], "category_id": int(rng.integers(1, n_classes + 1)),
                            "bbox": [float(rng.uniform(0, 600)), float(rng.uniform(0, 440)), float(w), float(h)],
                            "score": float(np.round(rng.beta(2, 5), 3))})
    return {"images": images, "annotations": anns, "categories": categories}, results


def _child(tool: str, n_images: int) -> None:
    """Run one tool in this (fresh) process; print time, peak RSS growth and the stats as JSON."""
    gt, results = synthetic(n_images)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    t0 = time.perf_counter()
    stats = TOOLS[tool](gt, results)
    elapsed = time.perf_counter() - t0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before  # KiB on Linux
    print(json.dumps({"time": elapsed, "peak_mib": peak / 1024, "stats": [float(s) for s in stats]}))


def run_precall(gt, results):
    return detection.evaluate_coco(detection.load_coco(gt, results)).stats


def run_pycocotools(gt, results):
    from pycocotools.coco import COCO
    from pycocotools.cocoeval import COCOeval

    with contextlib.redirect_stdout(io.StringIO()):
        coco = COCO()
        coco.dataset = gt
        coco.createIndex()
        ev = COCOeval(coco, coco.loadRes(results), "bbox")
        ev.evaluate()
        ev.accumulate()
        ev.summarize()
    return ev.stats


def run_faster_coco_eval(gt, results):
    from faster_coco_eval import COCO, COCOeval_faster

    with contextlib.redirect_stdout(io.StringIO()):
        coco = COCO()
        coco.dataset = gt
        coco.createIndex()
        ev = COCOeval_faster(coco, coco.loadRes(results), "bbox")
        ev.evaluate()
        ev.accumulate()
        ev.summarize()
    return np.asarray(ev.stats[:12])


TOOLS = {"precall": run_precall, "pycocotools": run_pycocotools, "faster-coco-eval": run_faster_coco_eval}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--images", type=int, default=5000)
    parser.add_argument("--output", help="also write the markdown table here")
    parser.add_argument("--tool", choices=TOOLS, help=argparse.SUPPRESS)  # internal: one tool, one process
    args = parser.parse_args(argv)
    if args.tool:
        _child(args.tool, args.images)
        return 0
    gt, results = synthetic(args.images)
    print(f"  {len(gt['images'])} images, {len(gt['annotations'])} ground truths, {len(results)} detections",
          flush=True)
    rows, stats = [], {}
    for name in TOOLS:
        proc = subprocess.run([sys.executable, __file__, "--tool", name, "--images", str(args.images)],
                              capture_output=True, text=True, check=False)
        if proc.returncode != 0:
            reason = "not installed" if "ModuleNotFoundError" in proc.stderr else "failed"
            rows.append(f"| {name} | {reason} | | |")
            continue
        out = json.loads(proc.stdout.strip().splitlines()[-1])
        stats[name] = np.array(out["stats"])
        print(f"  {name}: {out['time']:.2f} s, peak RSS +{out['peak_mib']:.0f} MiB", flush=True)
        rows.append(f"| {name} | {out['time']:.2f} | {out['peak_mib']:.0f} | "
                    f"{np.abs(stats[name] - stats['precall']).max():.1e} |")
    ratio = ""
    if "pycocotools" in stats:
        t = {line.split("|")[1].strip(): float(line.split("|")[2]) for line in rows
             if "not installed" not in line and "failed" not in line}
        ratio = f"precall is {t['pycocotools'] / t['precall']:.1f}x faster than pycocotools (target >= 8x)"
        if "faster-coco-eval" in t:
            ratio += f"; precall / faster-coco-eval time = {t['precall'] / t['faster-coco-eval']:.2f} (target <= 1.5)"
    lines = [
        "## COCO bbox evaluation (load + evaluate + summarize)",
        "",
        f"- {platform.platform()}; Python {platform.python_version()}, numpy {np.__version__}, precall "
        f"{precall.__version__}",
        f"- data: {len(gt['images'])} images, {len(gt['categories'])} classes, {len(gt['annotations'])} ground "
        f"truths, {len(results)} detections (seed 0)",
        f"- {ratio}",
        "",
        "| tool | time s | peak RSS growth MiB | max abs diff of the 12 numbers vs precall |",
        "|---|---:|---:|---:|",
        *rows,
    ]
    emit(lines, args.output)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
