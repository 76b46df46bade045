"""Coverage of bootstrap intervals for mAP, AP50, AP75 and per-class AP over images (issue 24, item 4).

A known population of images (default 20,000 synthetic images, 8 classes of very different
frequencies, jittered true detections, duplicates and background false positives) is evaluated
once: its mAP, AP50, AP75 and per-class AP are the *population values*.  Test sets of n images are
drawn from it with replacement (i.i.d. images of the population), each is bootstrapped
(:func:`precall.detection.bootstrap.bootstrap_coco`, the images resampled), and every interval
design of :data:`~precall.detection.bootstrap.INTERVAL_METHODS` is computed from the same
replicates.  Reported per n and statistic: the estimator's mean bias (mean estimate - population
value), the mean bootstrap bias estimate, and for each design the coverage of the population value
and the mean width.

A test set's evaluation needs no re-matching: matching is per (image, class), so the test set's
matched detections are the population's rows of the drawn images (copies as new images); this is
the same shortcut the bootstrap itself takes (tested equal to pycocotools on resampled sets).

    python benchmarks/sim_detection_coverage.py [--sets 200] [--resamples 400] [--sizes 150 500 1000 2000 5000]
"""

from __future__ import annotations

import argparse
import dataclasses
import platform
import sys
import time

import numpy as np

from precall import detection
from precall.detection.bootstrap import INTERVAL_METHODS, bootstrap_coco, interval_from_replicates

#: expected ground truths per image of each class (common to rare) and the chance a model finds one
CLASS_RATE = np.array([1.0, 0.6, 0.35, 0.2, 0.1, 0.06, 0.035, 0.02])
FIND = np.array([0.85, 0.75, 0.7, 0.65, 0.6, 0.55, 0.5, 0.45])


def population(n_images: int, seed: int = 0) -> tuple[dict, list]:
    """A synthetic COCO ground truth and results for ``n_images`` images."""
    rng = np.random.default_rng(seed)
    K = CLASS_RATE.size
    images = [{"id": i + 1, "width": 640, "height": 480} for i in range(n_images)]
    categories = [{"id": k + 1, "name": f"class{k + 1}"} for k in range(K)]
    anns: list[dict] = []
    results: list[dict] = []
    for img in range(1, n_images + 1):
        counts = rng.poisson(CLASS_RATE)
        for k in np.repeat(np.arange(K), counts).tolist():
            w, h = np.exp(rng.uniform(np.log(12), np.log(300), 2))
            x, y = rng.uniform(0, 640 - w), rng.uniform(0, 480 - h)
            box = np.array([x, y, w, h])
            anns.append({"id": len(anns) + 1, "image_id": img, "category_id": k + 1, "bbox": box.tolist(),
                         "area": float(w * h), "iscrowd": 0})
            if rng.random() < FIND[k]:
                for dup in range(1 + int(rng.random() < 0.15)):  # sometimes a duplicate
                    jitter = rng.normal(0, 0.07 + 0.1 * dup, 4) * [w, h, w, h]
                    wrong = rng.random() < 0.08  # a class confusion
                    results.append({"image_id": img, "category_id": int(rng.integers(1, K + 1)) if wrong else k + 1,
                                    "bbox": (box + jitter).tolist(),
                                    "score": float(1 / (1 + np.exp(-rng.normal(1.2 - dup, 1.2))))})
        for _ in range(int(rng.poisson(1.5))):  # background false positives
            w, h = np.exp(rng.uniform(np.log(12), np.log(300), 2))
            k = int(rng.choice(K, p=CLASS_RATE / CLASS_RATE.sum()))
            results.append({"image_id": img, "category_id": k + 1,
                            "bbox": [float(rng.uniform(0, 640 - w)), float(rng.uniform(0, 480 - h)), float(w), float(h)],
                            "score": float(1 / (1 + np.exp(-rng.normal(-0.8, 1.2))))})
    return {"images": images, "annotations": anns, "categories": categories}, results


class Sampler:
    """Test sets of the population evaluation: the matched rows of the drawn images, copies as new images."""

    def __init__(self, ev: detection.CocoEvaluation) -> None:
        self.ev = ev
        m = ev._matched
        self.m = m
        self.rows = np.argsort(m.image, kind="stable")
        self.row_start = np.searchsorted(m.image[self.rows], np.arange(ev.n_images + 1))
        self.groups = np.argsort(m.group_image, kind="stable")
        self.group_start = np.searchsorted(m.group_image[self.groups], np.arange(ev.n_images + 1))

    @staticmethod
    def _gather(order: np.ndarray, start: np.ndarray, drawn: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        lengths = start[drawn + 1] - start[drawn]
        offsets = np.arange(int(lengths.sum())) - np.repeat(np.cumsum(lengths) - lengths, lengths)
        return order[np.repeat(start[drawn], lengths) + offsets], np.repeat(np.arange(drawn.size), lengths)

    def test_set(self, drawn: np.ndarray) -> detection.CocoEvaluation:
        m = self.m
        rows, image = self._gather(self.rows, self.row_start, drawn)
        groups, g_image = self._gather(self.groups, self.group_start, drawn)
        sub = dataclasses.replace(m, image=image, cls=m.cls[rows], rank=m.rank[rows], score=m.score[rows],
                                  tp=m.tp[:, :, rows], ignored=m.ignored[:, :, rows], group_image=g_image,
                                  group_cls=m.group_cls[groups], group_n_gt=m.group_n_gt[:, groups])
        return dataclasses.replace(self.ev, _matched=sub, n_images=int(drawn.size), image_ids=None)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--population", type=int, default=20_000)
    parser.add_argument("--sizes", type=int, nargs="+", default=[150, 500, 1000, 2000, 5000])
    parser.add_argument("--sets", type=int, default=200, help="test sets per size")
    parser.add_argument("--resamples", type=int, default=400)
    parser.add_argument("--level", type=float, default=0.95)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    t0 = time.perf_counter()
    gt, results = population(args.population, args.seed)
    pop = detection.evaluate_coco(detection.load_coco(gt, results))
    truth = dict(zip(("mAP", "AP50", "AP75"), pop.stats[:3].tolist()))
    class_truth = np.array([r["AP"] for r in pop.per_class])
    print(f"# {platform.processor() or platform.machine()}, Python {sys.version.split()[0]}; population "
          f"{args.population} images, {len(gt['annotations'])} ground truths, {len(results)} detections "
          f"(built and evaluated in {time.perf_counter() - t0:.1f} s)")
    print(f"# population: " + ", ".join(f"{k} {v:.4f}" for k, v in truth.items())
          + "; per-class AP " + " ".join(f"{v:.3f}" for v in class_truth))
    print(f"# {args.sets} test sets per size, {args.resamples} resamples, level {args.level}")
    sampler = Sampler(pop)
    rng = np.random.default_rng(args.seed + 1)
    header = ["n", "statistic", "bias", "boot bias"] + [f"{m} cover / width" for m in INTERVAL_METHODS]
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for n in args.sizes:
        t1 = time.perf_counter()
        names = ("mAP", "AP50", "AP75", "per-class AP")
        covered = {s: {m: [] for m in INTERVAL_METHODS} for s in names}
        width = {s: {m: [] for m in INTERVAL_METHODS} for s in names}
        bias, boot_bias = {s: [] for s in names}, {s: [] for s in names}
        for _ in range(args.sets):
            ev = sampler.test_set(rng.integers(0, args.population, n))
            ci = bootstrap_coco(ev, args.resamples, confidence_level=args.level, random_state=rng)
            for s in ("mAP", "AP50", "AP75"):
                bias[s].append(ci.estimate[s] - truth[s])
                boot_bias[s].append(ci.bias[s])
                for m in INTERVAL_METHODS:
                    lo, hi = interval_from_replicates(ci.estimate[s], ci.replicates[s], args.level, m)
                    covered[s][m].append(lo <= truth[s] <= hi)
                    width[s][m].append(hi - lo)
            for k, row in enumerate(pop.per_class):
                est = ci.per_class_estimate[row["id"]]
                if est <= -1:
                    continue  # no ground truth of this class in the test set
                bias["per-class AP"].append(est - class_truth[k])
                boot_bias["per-class AP"].append(ci.per_class_bias[row["id"]])
                for m in INTERVAL_METHODS:
                    lo, hi = interval_from_replicates(est, ci.per_class_replicates[:, k], args.level, m)
                    covered["per-class AP"][m].append(lo <= class_truth[k] <= hi)
                    width["per-class AP"][m].append(hi - lo)
        for s in names:
            cells = [str(n), s, f"{np.mean(bias[s]):+.4f}", f"{np.nanmean(boot_bias[s]):+.4f}"]
            cells += [f"{100 * np.mean(covered[s][m]):.1f}% / {np.nanmean(width[s][m]):.4f}" for m in INTERVAL_METHODS]
            print("| " + " | ".join(cells) + " |")
        print(f"# n={n}: {time.perf_counter() - t1:.0f} s", flush=True)


if __name__ == "__main__":
    main()
