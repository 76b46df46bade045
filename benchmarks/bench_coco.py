"""COCO bbox evaluation: precall against pycocotools (and faster-coco-eval when installed).

A deterministic synthetic COCO set (default 5000 images, 80 classes, ~7 ground truths
per image with small/medium/large areas and ~1% crowd, ~65 detections per image) is
evaluated by each tool in a fresh process of its own (load + evaluate + summarize, on
the same generated data); time, peak resident memory growth and the 12 summary
numbers (which must agree) are reported.

    python benchmarks/bench_coco.py [--images 5000] [--output FILE]
    python benchmarks/bench_coco.py --segm [--images 500] [--repeats 3]

``--keypoints``: keypoint evaluation (OKS, COCO's 17 sigmas) of ~5 people per image.
``--segm``: mask evaluation (``iou_type="segm"``) on 640x480 images, ~7 polygon ground
truths and ~29 compressed-RLE detections per image (500 images: ~18k masks).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
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


def synthetic_segm(n_images: int, n_classes: int = 20, seed: int = 0) -> tuple[dict, list]:
    """Polygon ground truths (convex blobs) and compressed-RLE detections (jittered blobs, and
    background blobs) on 640x480 images; encoded with pycocotools' own mask API."""
    from pycocotools import mask as mask_utils

    rng = np.random.default_rng(seed)
    H, W = 480, 640
    images = [{"id": i + 1, "width": W, "height": H} for i in range(n_images)]
    categories = [{"id": c + 1, "name": f"class{c + 1}"} for c in range(n_classes)]
    anns, results = [], []

    def blob(cx, cy, rx, ry):
        n = int(rng.integers(6, 16))
        a = np.sort(rng.uniform(0, 2 * np.pi, n))
        r = rng.uniform(0.7, 1.0, n)
        px = np.clip(cx + rx * r * np.cos(a), 0, W - 1)
        py = np.clip(cy + ry * r * np.sin(a), 0, H - 1)
        return [float(v) for pair in zip(px, py) for v in pair]

    def rle(poly):
        out = mask_utils.merge(mask_utils.frPyObjects([poly], H, W))
        return {"size": [H, W], "counts": out["counts"].decode("ascii")}

    for img in images:
        for _ in range(int(rng.poisson(7))):
            cat = int(rng.integers(1, n_classes + 1))
            side = float(np.exp(rng.uniform(np.log(8), np.log(250))))
            cx, cy = rng.uniform(side / 2, W - side / 2), rng.uniform(side / 2, H - side / 2)
            poly = blob(cx, cy, side / 2, side / 2 * rng.uniform(0.6, 1.4))
            xs, ys = poly[0::2], poly[1::2]
            anns.append({"id": len(anns) + 1, "image_id": img["id"], "category_id": cat, "segmentation": [poly],
                         "area": float(mask_utils.area(mask_utils.merge(mask_utils.frPyObjects([poly], H, W)))),
                         "bbox": [min(xs), min(ys), max(xs) - min(xs), max(ys) - min(ys)],
                         "iscrowd": 0})
            for _ in range(int(rng.integers(1, 5))):
                j = rng.normal(0, 0.1 * side, 2)
                results.append({"image_id": img["id"], "category_id": cat,
                                "segmentation": rle(blob(cx + j[0], cy + j[1], side / 2, side / 2)),
                                "score": float(np.round(rng.beta(5, 2), 3))})
        for _ in range(int(rng.poisson(11))):
            side = float(np.exp(rng.uniform(np.log(8), np.log(250))))
            cx, cy = rng.uniform(side / 2, W - side / 2), rng.uniform(side / 2, H - side / 2)
            results.append({"image_id": img["id"], "category_id": int(rng.integers(1, n_classes + 1)),
                            "segmentation": rle(blob(cx, cy, side / 2, side / 2)),
                            "score": float(np.round(rng.beta(2, 5), 3))})
    return {"images": images, "annotations": anns, "categories": categories}, results


def synthetic_keypoints(n_images: int, seed: int = 0) -> tuple[dict, list]:
    """People with COCO's 17 keypoints on 640x480 images (~5 per image, some keypoints unlabelled, a few
    without any), detections jittered around them plus background ones, scores with ties."""
    rng = np.random.default_rng(seed)
    H, W = 480, 640
    images = [{"id": i + 1, "width": W, "height": H} for i in range(n_images)]
    anns, results = [], []
    for img in images:
        for _ in range(int(rng.poisson(5))):
            w, h = float(np.exp(rng.uniform(np.log(12), np.log(200)))), 0.0
            h = w * rng.uniform(1.5, 2.5)
            x, y = rng.uniform(0, W - w), rng.uniform(0, max(H - h, 1))
            kx, ky = x + rng.uniform(0, w, 17), y + rng.uniform(0, h, 17)
            v = np.where(rng.random(17) < 0.8, 2, 0) * (rng.random() > 0.05)
            kps = [float(t) for trio in zip(kx * (v > 0), ky * (v > 0), v) for t in trio]
            anns.append({"id": len(anns) + 1, "image_id": img["id"], "category_id": 1, "bbox": [x, y, w, h],
                         "area": float(w * h * 0.6), "iscrowd": 0, "keypoints": kps,
                         "num_keypoints": int((v > 0).sum())})
            for _ in range(int(rng.integers(1, 4))):
                jx, jy = rng.normal(0, 0.05 * w, 17), rng.normal(0, 0.05 * h, 17)
                results.append({"image_id": img["id"], "category_id": 1, "score": float(np.round(rng.beta(5, 2), 3)),
                                "keypoints": [float(t) for trio in zip(kx + jx, ky + jy, np.ones(17)) for t in trio]})
        for _ in range(int(rng.poisson(8))):
            x, y = rng.uniform(0, W, 17), rng.uniform(0, H, 17)
            results.append({"image_id": img["id"], "category_id": 1, "score": float(np.round(rng.beta(2, 5), 3)),
                            "keypoints": [float(t) for trio in zip(x, y, np.ones(17)) for t in trio]})
    return {"images": images, "annotations": anns, "categories": [{"id": 1, "name": "person"}]}, results


DATA = {"bbox": synthetic, "segm": synthetic_segm, "keypoints": synthetic_keypoints}


def _child(tool: str, n_images: int, kind: str = "bbox") -> None:
    """Run one tool in this (fresh) process; print time, peak RSS growth and the stats as JSON."""
    gt, results = DATA[kind](n_images)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    t0 = time.perf_counter()
    stats = TOOLS[tool](gt, results, kind)
    elapsed = time.perf_counter() - t0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before  # KiB on Linux
    print(json.dumps({"time": elapsed, "peak_mib": peak / 1024, "stats": [float(s) for s in stats]}))


def run_precall(gt, results, iou_type="bbox"):
    return detection.evaluate_coco(detection.load_coco(gt, results), iou_type=iou_type).stats


def run_pycocotools(gt, results, iou_type="bbox"):
    from pycocotools.coco import COCO
    from pycocotools.cocoeval import COCOeval

    with contextlib.redirect_stdout(io.StringIO()):
        coco = COCO()
        coco.dataset = gt
        coco.createIndex()
        ev = COCOeval(coco, coco.loadRes(results), iou_type)
        ev.evaluate()
        ev.accumulate()
        ev.summarize()
    return ev.stats


def run_faster_coco_eval(gt, results, iou_type="bbox"):
    from faster_coco_eval import COCO, COCOeval_faster

    with contextlib.redirect_stdout(io.StringIO()):
        coco = COCO()
        coco.dataset = gt
        coco.createIndex()
        ev = COCOeval_faster(coco, coco.loadRes(results), iou_type)
        ev.evaluate()
        ev.accumulate()
        ev.summarize()
    return np.asarray(ev.stats[:10 if iou_type == "keypoints" else 12])


TOOLS = {"precall": run_precall, "pycocotools": run_pycocotools, "faster-coco-eval": run_faster_coco_eval}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--images", type=int, default=None, help="default 5000 (bbox), 500 (--segm)")
    parser.add_argument("--segm", action="store_true", help="mask evaluation (iou_type='segm')")
    parser.add_argument("--keypoints", action="store_true", help="keypoint evaluation (OKS; default 5000 images)")
    parser.add_argument("--repeats", type=int, default=1, help="runs of each tool (fresh processes, interleaved)")
    parser.add_argument("--output", help="also write the markdown table here")
    parser.add_argument("--tool", choices=TOOLS, help=argparse.SUPPRESS)  # internal: one tool, one process
    args = parser.parse_args(argv)
    n_images = args.images or (500 if args.segm else 5000)
    kind = "segm" if args.segm else "keypoints" if args.keypoints else "bbox"
    if args.tool:
        _child(args.tool, n_images, kind)
        return 0
    gt, results = DATA[kind](n_images)
    print(f"  {kind}: {len(gt['images'])} images, {len(gt['annotations'])} ground truths, {len(results)} "
          "detections", flush=True)
    runs: dict[str, list[dict]] = {name: [] for name in TOOLS}
    failed: dict[str, str] = {}
    for _ in range(args.repeats):
        for name in TOOLS:  # interleaved: the tools share the machine's load
            if name in failed:
                continue
            cmd = [sys.executable, __file__, "--tool", name, "--images", str(n_images)] + (
                [f"--{kind}"] if kind != "bbox" else [])
            proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
            if proc.returncode != 0:
                failed[name] = "not installed" if "ModuleNotFoundError" in proc.stderr else "failed"
                continue
            out = json.loads(proc.stdout.strip().splitlines()[-1])
            runs[name].append(out)
            print(f"  {name}: {out['time']:.2f} s, peak RSS +{out['peak_mib']:.0f} MiB", flush=True)
    best = {name: min(r, key=lambda o: o["time"]) for name, r in runs.items() if r}
    rows = []
    for name in TOOLS:
        if name not in best:
            rows.append(f"| {name} | {failed.get(name, 'failed')} | | | |")
            continue
        o = best[name]
        diff = np.abs(np.array(o["stats"]) - np.array(best["precall"]["stats"])).max()
        ratio = o["time"] / best["precall"]["time"]
        rows.append(f"| {name} | {o['time']:.2f} | {max(r['peak_mib'] for r in runs[name]):.0f} | {ratio:.2f} | "
                    f"{diff:.1e} |")
    t = {name: o["time"] for name, o in best.items()}
    ratio = ""
    if "pycocotools" in t:
        target = {"segm": 2, "keypoints": 2}.get(kind, 8)
        ratio = f"precall is {t['pycocotools'] / t['precall']:.1f}x faster than pycocotools (target >= {target}x)"
        if "faster-coco-eval" in t:
            ratio += f"; precall / faster-coco-eval time = {t['precall'] / t['faster-coco-eval']:.2f} (target <= 1.5)"
    lines = [
        f"## COCO {kind} evaluation (load + evaluate + summarize)",
        "",
        f"- {platform.platform()}; Python {platform.python_version()}, numpy {np.__version__}, precall "
        f"{precall.__version__}; {os.cpu_count()} cores",
        f"- data: {len(gt['images'])} images, {len(gt['categories'])} classes, {len(gt['annotations'])} ground "
        f"truths, {len(results)} detections (seed 0)",
        f"- each tool in a fresh process; best of {args.repeats} runs (interleaved); peak RSS growth: the largest",
        f"- {ratio}",
        "",
        "| tool | time s | peak RSS growth MiB | time / precall's | max abs diff of the 12 numbers vs precall |",
        "|---|---:|---:|---:|---:|",
        *rows,
    ]
    emit(lines, args.output)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
