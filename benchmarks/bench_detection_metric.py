"""The training-loop API: precall.detection.MeanAveragePrecision against torchmetrics'
MeanAveragePrecision (backends pycocotools and faster_coco_eval) at 5000 images.

The synthetic COCO bbox set of bench_coco.py (80 classes, ~7 ground truths and ~65
detections per image) as per-image dicts of CPU torch tensors (xyxy, float32), fed in
batches of 16 images; time of all update() calls + compute(), peak RSS growth, and the
12 numbers (torchmetrics reports float32).  Each tool in a fresh process of its own.

    python benchmarks/bench_detection_metric.py [--images 5000] [--repeats 1] [--output FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import time

import numpy as np

from _timing import emit
from bench_coco import synthetic

NAMES = ["map", "map_50", "map_75", "map_small", "map_medium", "map_large", "mar_1", "mar_10", "mar_100",
         "mar_small", "mar_medium", "mar_large"]
TOOLS = ("precall", "torchmetrics-pycocotools", "torchmetrics-faster_coco_eval")


def batches(n_images: int, batch: int = 16):
    import torch

    gt, results = synthetic(n_images)
    by_img_gt: dict[int, list] = {}
    by_img_dt: dict[int, list] = {}
    for a in gt["annotations"]:
        by_img_gt.setdefault(a["image_id"], []).append(a)
    for r in results:
        by_img_dt.setdefault(r["image_id"], []).append(r)

    def xyxy(boxes):
        b = np.array(boxes, dtype=np.float64).reshape(-1, 4)
        return torch.from_numpy(np.column_stack([b[:, :2], b[:, :2] + b[:, 2:]]).astype(np.float32))

    preds, targets = [], []
    for img in gt["images"]:
        anns, dets = by_img_gt.get(img["id"], []), by_img_dt.get(img["id"], [])
        targets.append({"boxes": xyxy([a["bbox"] for a in anns]),
                        "labels": torch.tensor([a["category_id"] for a in anns], dtype=torch.int64),
                        "iscrowd": torch.tensor([a["iscrowd"] for a in anns], dtype=torch.int64),
                        "area": torch.tensor([a["area"] for a in anns], dtype=torch.float32)})
        preds.append({"boxes": xyxy([r["bbox"] for r in dets]),
                      "scores": torch.tensor([r["score"] for r in dets], dtype=torch.float32),
                      "labels": torch.tensor([r["category_id"] for r in dets], dtype=torch.int64)})
    return [(preds[i:i + batch], targets[i:i + batch]) for i in range(0, len(preds), batch)]


def _child(tool: str, n_images: int) -> None:
    data = batches(n_images)
    if tool == "precall":
        from precall.detection import MeanAveragePrecision

        metric = MeanAveragePrecision()
    else:
        sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))
        from oracles import torchvision_stand_in  # torchvision's box_convert where torchvision cannot load
        from torchmetrics.detection.mean_ap import MeanAveragePrecision as TM

        torchvision_stand_in()
        metric = TM(iou_type="bbox", backend=tool.split("-", 1)[1])
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    t0 = time.perf_counter()
    for p, t in data:
        metric.update(p, t)
    out = metric.compute()
    elapsed = time.perf_counter() - t0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    stats = [float(out[k]) for k in NAMES]
    print(json.dumps({"time": elapsed, "peak_mib": peak / 1024, "stats": stats}))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--images", type=int, default=5000)
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--output")
    parser.add_argument("--tool", choices=TOOLS, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.tool:
        _child(args.tool, args.images)
        return 0
    runs: dict[str, list[dict]] = {t: [] for t in TOOLS}
    failed: dict[str, str] = {}
    for _ in range(args.repeats):
        for tool in TOOLS:
            if tool in failed:
                continue
            proc = subprocess.run([sys.executable, __file__, "--tool", tool, "--images", str(args.images)],
                                  capture_output=True, text=True, check=False)
            if proc.returncode != 0:
                failed[tool] = "not installed" if "ModuleNotFoundError" in proc.stderr else "failed"
                print(f"  {tool}: {failed[tool]}: {proc.stderr.strip().splitlines()[-1:]}", flush=True)
                continue
            out = json.loads(proc.stdout.strip().splitlines()[-1])
            runs[tool].append(out)
            print(f"  {tool}: {out['time']:.2f} s, peak RSS +{out['peak_mib']:.0f} MiB", flush=True)
    best = {t: min(r, key=lambda o: o["time"]) for t, r in runs.items() if r}
    rows = []
    for tool in TOOLS:
        if tool not in best:
            rows.append(f"| {tool} | {failed.get(tool, 'failed')} | | | |")
            continue
        o = best[tool]
        diff = np.abs(np.array(o["stats"]) - np.array(best["precall"]["stats"])).max() if "precall" in best else float("nan")
        rows.append(f"| {tool} | {o['time']:.2f} | {max(r['peak_mib'] for r in runs[tool]):.0f} | "
                    f"{o['time'] / best['precall']['time']:.2f} | {diff:.1e} |")
    try:
        import torch
        import torchmetrics

        versions = f"torch {torch.__version__}, torchmetrics {torchmetrics.__version__}"
    except ImportError:
        versions = "torch/torchmetrics not installed"
    lines = [
        "## Training-loop API: MeanAveragePrecision, update() in batches of 16 + compute()",
        "",
        f"- {platform.platform()}; Python {platform.python_version()}, numpy {np.__version__}, {versions}; "
        f"{os.cpu_count()} cores",
        f"- {args.images} images (bench_coco.py's synthetic set), CPU float32 tensors, xyxy; each tool in a fresh "
        f"process, best of {args.repeats}",
        "",
        "| tool | time s | peak RSS growth MiB | time / precall's | max abs diff of the 12 numbers vs precall |",
        "|---|---:|---:|---:|---:|",
        *rows,
    ]
    emit(lines, args.output)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
