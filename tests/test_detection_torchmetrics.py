"""precall.detection.MeanAveragePrecision as a drop-in for torchmetrics' MeanAveragePrecision.

Compared with torchmetrics itself (pycocotools backend; faster-coco-eval too when installed) on
random sets in many configurations: box formats, float dtypes (float16 / float32 / float64 /
bfloat16), tensors with ``requires_grad``, empty images with ``labels=torch.tensor([])``, class
metrics, micro averaging, ``iou_type`` bbox / segm / both, extended summary; and ``torch.distributed``
with two CPU processes (gloo on localhost) against one process seeing every image.

torch and torchmetrics are in the ``test`` extra; these tests skip without them unless
``PRECALL_REQUIRE_TORCH=1`` (CI), which makes a missing torch a failure.  torchmetrics needs
torchvision only for ``box_convert``; where torchvision cannot be imported (its PyPI wheels are
built for CUDA torch), a stand-in with torchvision's own operations is installed for the test.
"""

from __future__ import annotations

import datetime
import importlib
import os
import socket
import time

import numpy as np
import pytest

import precall
from precall import detection

REQUIRE = os.environ.get("PRECALL_REQUIRE_TORCH") == "1"


def _require(name: str):
    """``import name``, skipping the test without it (failing under PRECALL_REQUIRE_TORCH=1)."""
    if REQUIRE:
        return importlib.import_module(name)
    return pytest.importorskip(name)


torch = _require("torch")
pytest.importorskip("pycocotools")
from test_detection import synthetic  # noqa: E402
from test_detection_metric import _per_image  # noqa: E402
from oracles import torchvision_stand_in  # noqa: E402


@pytest.fixture(scope="module")
def tm():
    """torchmetrics' MeanAveragePrecision class (with a torchvision stand-in when torchvision cannot load)."""
    _require("torchmetrics")
    restore = torchvision_stand_in()
    try:
        yield importlib.import_module("torchmetrics.detection.mean_ap").MeanAveragePrecision
    finally:
        restore()


def _backends():
    out = ["pycocotools"]
    try:
        import faster_coco_eval  # noqa: F401
        out.append("faster_coco_eval")
    except ImportError:
        pass
    return out


def _tensors(images, dtype=None, grad=False):
    out = []
    for d in images:
        t = {}
        for k, v in d.items():
            v = torch.from_numpy(np.asarray(v))
            if dtype is not None and k in ("boxes", "scores"):
                v = v.to(dtype)
            if grad and k in ("boxes", "scores"):
                v = v.detach().clone().requires_grad_(True)
            t[k] = v
        out.append(t)
    return out


def _assert_close(ours, theirs, skip=()):
    """Every key torchmetrics gives, equal within its float32 rounding (values in [-1, 1])."""
    assert set(theirs) - set(skip) <= set(ours), sorted(set(theirs) - set(ours))
    for key, value in theirs.items():
        if key in skip:
            continue
        expected = value.double().numpy() if hasattr(value, "double") else np.asarray(value, dtype=np.float64)
        got = np.asarray(ours[key], dtype=np.float64)
        assert got.shape == expected.shape, (key, got.shape, expected.shape)
        tol = 0 if key == "classes" else 1e-7
        np.testing.assert_allclose(got, expected, rtol=0, atol=tol, err_msg=key)


def _run(metric, preds, targets, batch=8):
    for lo in range(0, len(preds), batch):
        metric.update(preds[lo:lo + batch], targets[lo:lo + batch])
    return metric.compute()


def _pair(tm, backend="pycocotools", **options):
    theirs = tm(backend=backend, **options)
    ours = detection.MeanAveragePrecision(**options, iou_thresholds=theirs.iou_thresholds,
                                          rec_thresholds=theirs.rec_thresholds)  # its float32 values
    return ours, theirs


CONFIGS = [  # (seed, options, dtype of boxes and scores, requires_grad)
    (0, {"box_format": "xyxy"}, torch.float32, False),
    (1, {"box_format": "xywh"}, torch.float64, True),
    (2, {"box_format": "cxcywh"}, torch.float32, False),
    (3, {"box_format": "xyxy", "class_metrics": True}, torch.float16, False),
    (4, {"box_format": "xywh", "class_metrics": True, "average": "micro"}, torch.bfloat16, True),
    (5, {"box_format": "xyxy", "extended_summary": True}, torch.float32, True),
    (6, {"box_format": "xyxy", "max_detection_thresholds": [1, 5, 20], "class_metrics": True}, torch.float64, False),
    (7, {"box_format": "cxcywh", "average": "micro"}, torch.float16, False),
]


@pytest.mark.parametrize("backend", _backends())
@pytest.mark.parametrize("seed, options, dtype, grad", CONFIGS)
def test_bbox_equals_torchmetrics(tm, backend, seed, options, dtype, grad):
    gt, results = synthetic(400 + seed)
    preds, targets = _per_image(gt, results, options.get("box_format", "xyxy"))
    if seed % 2:  # half the configurations: torchmetrics' default area (0: the box's)
        for t in targets:
            t.pop("area")
    p, t = _tensors(preds, dtype, grad), _tensors(targets)
    ours, theirs = _pair(tm, backend, **options)
    mdt = options.get("max_detection_thresholds", [1, 10, 100])
    if mdt[-1] != 100 and backend == "pycocotools":  # its first number uses 100 (cocoapi #558); precall
        skip = ("map", "map_per_class")                    # and faster-coco-eval max_dets[-1]
    else:
        skip = ()
    expected = _run(theirs, p, t)
    got = _run(ours, p, t)
    _assert_close(got, expected, skip=skip + (("scores", "ious") if options.get("extended_summary") else ()))
    assert float(got["map_50"]) > 0.2  # a set where something is found
    if skip:
        assert float(expected["map"]) == -1 and float(got["map"]) == float(got.evaluations["bbox"].stats[0]) > 0


def test_empty_targets_of_any_dtype_and_grad(tm):
    """torchmetrics' own edge cases: images without ground truth (labels=torch.tensor([]), float32),
    images without detections, tensors that require grad."""
    gt, results = synthetic(430)
    preds, targets = _per_image(gt, results)
    p, t = _tensors(preds, torch.float32, grad=True), _tensors(targets)
    p.append({"boxes": torch.tensor([[1.0, 2.0, 30.0, 40.0]], requires_grad=True),
              "scores": torch.tensor([0.7], requires_grad=True), "labels": torch.tensor([int(preds[0]["labels"][0])
                                                                                        if len(preds[0]["labels"]) else 1])})
    t.append({"boxes": torch.zeros((0, 4)), "labels": torch.tensor([])})  # float32 labels, no box
    p.append({"boxes": torch.tensor([]), "scores": torch.tensor([]), "labels": torch.tensor([])})
    t.append({"boxes": torch.tensor([[5.0, 5.0, 50.0, 60.0]]), "labels": torch.tensor([3])})
    ours, theirs = _pair(tm, class_metrics=True)
    _assert_close(_run(ours, p, t), _run(theirs, p, t))
    none = detection.MeanAveragePrecision()
    none.update([{"boxes": torch.tensor([]), "scores": torch.tensor([]), "labels": torch.tensor([])}],
                [{"boxes": torch.tensor([]), "labels": torch.tensor([])}])
    with pytest.warns(precall.UndefinedMetricWarning, match="every number is undefined"):  # the one policy
        assert float(none.compute()["map"]) == -1


def _mask_set(seed, n_images=24, h=36, w=52):
    """Random images of boolean masks (every image with ground truth: torchmetrics drops the others)."""
    rng = np.random.default_rng(seed)
    preds, targets = [], []

    def blob(cx, cy, rx, ry):
        yy, xx = np.mgrid[:h, :w]
        return ((xx - cx) / max(rx, 0.6)) ** 2 + ((yy - cy) / max(ry, 0.6)) ** 2 <= 1

    for _ in range(n_images):
        gm, gl, pm, pl, ps = [], [], [], [], []
        for _ in range(int(rng.integers(1, 5))):
            cx, cy, rx, ry = rng.uniform(0, w), rng.uniform(0, h), rng.uniform(2, 14), rng.uniform(2, 10)
            label = int(rng.integers(0, 3))
            gm.append(blob(cx, cy, rx, ry)), gl.append(label)
            for _ in range(int(rng.integers(0, 3))):
                j = rng.normal(0, 1.5, 4)
                pm.append(blob(cx + j[0], cy + j[1], rx + j[2], ry + j[3])), pl.append(label)
                ps.append(rng.uniform(0.3, 1))
        for _ in range(int(rng.integers(0, 3))):
            pm.append(blob(rng.uniform(0, w), rng.uniform(0, h), rng.uniform(2, 8), rng.uniform(2, 8)))
            pl.append(int(rng.integers(0, 3))), ps.append(rng.uniform(0, 0.6))

        def boxes(masks):
            out = []
            for m in masks:
                ys, xs = np.nonzero(m)
                out.append([xs.min(), ys.min(), xs.max() + 1, ys.max() + 1] if xs.size else [0, 0, 0, 0])
            return np.array(out, dtype=np.float32).reshape(-1, 4)

        targets.append({"masks": np.array(gm, dtype=bool).reshape(-1, h, w), "labels": np.array(gl),
                        "boxes": boxes(gm)})
        preds.append({"masks": np.array(pm, dtype=bool).reshape(-1, h, w), "labels": np.array(pl, dtype=np.int64),
                      "scores": np.array(ps, dtype=np.float32), "boxes": boxes(pm)})
    return preds, targets


@pytest.mark.parametrize("backend", _backends())
@pytest.mark.parametrize("iou_type, options", [
    ("segm", {}), (("bbox", "segm"), {"class_metrics": True}), (("segm", "bbox"), {"average": "micro"})])
def test_masks_equal_torchmetrics(tm, backend, iou_type, options):
    preds, targets = _mask_set(7 + len(options))
    if iou_type == "segm":  # boxes are optional with masks only
        for d in preds + targets:
            d.pop("boxes")
    p, t = _tensors(preds), _tensors(targets)
    ours, theirs = _pair(tm, backend, iou_type=iou_type, **options)
    got = _run(ours, p, t)
    _assert_close(got, _run(theirs, p, t))
    if len(iou_type) == 2:
        assert {"bbox_map", "segm_map", "bbox_mar_100", "segm_map_per_class"} <= set(got)
        assert set(got.evaluations) == {"bbox", "segm"}


def test_result_keys_for_log_dict(tm):
    """The keys of torchmetrics' result, each a number (or an array for the per-class values)."""
    gt, results = synthetic(440)
    preds, targets = _per_image(gt, results)
    ours, theirs = _pair(tm, class_metrics=True)
    got, expected = _run(ours, preds, targets), _run(theirs, _tensors(preds), _tensors(targets))
    assert list(got) == list(expected) or set(got) == set(expected)
    for key in ("map", "map_50", "mar_100", "mar_small"):
        assert isinstance(got[key], float)  # np.float64: a number for any logger
    assert got["map_per_class"].shape == got["classes"].shape == expected["classes"].shape


def test_options_refused_as_torchmetrics_does_or_named(tm):
    for kwargs, error, match in [
        ({"iou_type": "keypoints"}, ValueError, "`iou_type` must be 'bbox', 'segm' or a tuple"),
        ({"iou_type": ()}, ValueError, "`iou_type`"),
        ({"average": "weighted"}, ValueError, "`average` must be 'macro' or 'micro'"),
        ({"backend": "mine"}, ValueError, "`backend` must be"),
        ({"class_metrics": 1}, TypeError, "`class_metrics` must be True or False"),
        ({"rec_thresholds": [0.5], "recall_thresholds": [0.5]}, ValueError, "not both"),
        ({"max_detection_thresholds": [0, 10, 100]}, ValueError, "max_dets"),
        ({"sync_on_step": True}, TypeError, "unexpected keyword argument 'sync_on_step'"),
    ]:
        with pytest.raises(error, match=match):
            detection.MeanAveragePrecision(**kwargs)
    metric = detection.MeanAveragePrecision(dist_sync_on_step=False, compute_on_cpu=True)  # torchmetrics' kwargs
    assert metric.to("cpu") is metric


def test_forward_returns_the_batch_and_accumulates(tm):
    gt, results = synthetic(450)
    preds, targets = _per_image(gt, results)
    ours, theirs = _pair(tm)
    p, t = _tensors(preds), _tensors(targets)
    _assert_close(ours(p[:10], t[:10]), theirs(p[:10], t[:10]))
    ours.update(p[10:], t[10:]), theirs.update(p[10:], t[10:])
    _assert_close(ours.compute(), theirs.compute())


# --------------------------------------------------------------------------- torch.distributed
def _worker(rank, world, port, preds, targets, out_dir):
    import torch.distributed as dist

    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world,
                            timeout=datetime.timedelta(seconds=120))
    try:
        metric = detection.MeanAveragePrecision(class_metrics=True)
        half = len(preds) // 2
        lo, hi = (0, half) if rank == 0 else (half, len(preds))
        for k in range(lo, hi, 5):  # this process's shard, in batches
            metric.update(preds[k:min(k + 5, hi)], targets[k:min(k + 5, hi)])
        mine = len(metric)
        auto = metric.compute()  # sync_on_compute: every process's images
        metric.sync()
        synced = len(metric)
        explicit = metric.compute()
        metric.unsync()
        local = metric.evaluation().stats
        np.savez(os.path.join(out_dir, f"rank{rank}.npz"), auto=np.array([auto[k] for k in sorted(auto) if
                                                                         np.ndim(auto[k]) == 0]),
                 explicit=np.array([explicit[k] for k in sorted(explicit) if np.ndim(explicit[k]) == 0]),
                 per_class=auto["map_per_class"], counts=np.array([mine, synced, len(metric)]), local=local)
    finally:
        dist.destroy_process_group()


def test_dist_sync_with_two_processes(tmp_path):
    """Two CPU processes (gloo, localhost): compute() on each equals one process that saw every image."""
    mp = _require("torch.multiprocessing")
    if not torch.distributed.is_available():
        pytest.skip("torch.distributed is not available in this build")
    gt, results = synthetic(460)
    preds, targets = _per_image(gt, results)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    context = mp.spawn(_worker, args=(2, port, preds, targets, str(tmp_path)), nprocs=2, join=False)
    deadline = time.monotonic() + 300  # bounded: never a hang
    try:
        while not context.join(timeout=5):
            assert time.monotonic() < deadline, "the two processes did not finish in 300 s"
    finally:
        for process in context.processes:
            if process.is_alive():
                process.kill()
    whole = detection.MeanAveragePrecision(class_metrics=True)
    whole.update(preds, targets)
    expected = whole.compute()
    scalars = np.array([expected[k] for k in sorted(expected) if np.ndim(expected[k]) == 0])
    half = len(preds) // 2
    for rank, n_local in ((0, half), (1, len(preds) - half)):
        out = np.load(tmp_path / f"rank{rank}.npz")
        np.testing.assert_array_equal(out["auto"], scalars)
        np.testing.assert_array_equal(out["explicit"], scalars)
        np.testing.assert_array_equal(out["per_class"], expected["map_per_class"])
        assert out["counts"].tolist() == [n_local, len(preds), n_local]
        alone = detection.MeanAveragePrecision()
        alone.update(preds[:half] if rank == 0 else preds[half:], targets[:half] if rank == 0 else targets[half:])
        np.testing.assert_array_equal(out["local"], alone.evaluation().stats)


class _DeviceTensor:
    """A tensor on another device, as torch's: numpy cannot read it (``__array__`` fails), ``.detach()``
    and ``.cpu()`` bring it to the host."""

    def __init__(self, tensor):
        self.tensor = tensor

    def __array__(self, *args, **kwargs):
        raise TypeError("can't convert cuda:0 device type tensor to numpy. Use Tensor.cpu() first")

    def detach(self):
        return self

    def cpu(self):
        return self.tensor.detach().cpu()

    def numpy(self):
        raise TypeError("can't convert cuda:0 device type tensor to numpy")


def test_any_device_and_bfloat16_xyxy_in_float32():
    """A tensor on another device is brought to the host; bfloat16 xyxy boxes are converted to xywh in
    float32 (exact for bfloat16 inputs), where torchmetrics rounds the width to bfloat16."""
    gt, results = synthetic(470)
    preds, targets = _per_image(gt, results, "xyxy")
    host = _tensors(preds, torch.bfloat16)
    moved = [{k: _DeviceTensor(v) for k, v in d.items()} for d in host]
    widened = [{k: (v.float() if v.dtype == torch.bfloat16 else v) for k, v in d.items()} for d in host]
    results_ = []
    for p in (moved, host, widened):
        metric = detection.MeanAveragePrecision()
        metric.update(p, _tensors(targets))
        results_.append(metric.evaluation().precision)
    np.testing.assert_array_equal(results_[0], results_[1])
    np.testing.assert_array_equal(results_[1], results_[2])
