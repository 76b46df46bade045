"""COCO matching: which detection takes which ground truth, per area range and IoU threshold (internal)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .io import DetectionSet


def _iou(dt: np.ndarray, gt: np.ndarray, crowd: np.ndarray) -> np.ndarray:
    """IoU of boxes (..., D, 4) x (..., G, 4) -> (..., D, G), as pycocotools' ``bbIou``:
    for crowd ground truths the intersection over the detection's area."""
    dx, dy, dw, dh = (dt[..., :, None, i] for i in range(4))
    gx, gy, gw, gh = (gt[..., None, :, i] for i in range(4))
    w = np.minimum(dx + dw, gx + gw) - np.maximum(dx, gx)
    h = np.minimum(dy + dh, gy + gh) - np.maximum(dy, gy)
    inter = np.where((w > 0) & (h > 0), w * h, 0.0)
    da, ga = dw * dh, gw * gh
    union = np.where(crowd[..., None, :], da, da + ga - inter)
    with np.errstate(invalid="ignore", divide="ignore"):
        out = np.where(inter > 0, inter / union, 0.0)
    return out


@dataclass
class _Groups:
    """(image, class) groups padded to D detections and G ground truths."""

    image: np.ndarray  # (B,) index into images
    cls: np.ndarray  # (B,) index into classes
    dt_rows: np.ndarray  # (B, D) detection row (-1 padding), by decreasing score (stable)
    gt_rows: np.ndarray  # (B, G) ground-truth row (-1 padding), input order


def _content_keys(data: DetectionSet, kind: str, rows: np.ndarray) -> tuple[np.ndarray, ...]:
    """Sort keys from a record's segmentation (a CRC of its JSON text), for orders that do not depend on
    the input order when boxes are equal; none when there are no segmentations."""
    import json
    import zlib

    segms = data.gt_segm if kind == "gt" else data.dt_segm
    if segms is None or not any(s is not None for s in segms):
        runs = data.gt_runs if kind == "gt" else data.dt_runs
        if runs is None:
            return ()
        mine = runs.subset(rows)  # masks given as arrays (MeanAveragePrecision): a CRC of their runs
        return (np.array([zlib.crc32(np.concatenate(mine.take(i)).tobytes()) for i in range(rows.size)],
                         dtype=np.int64),)
    return (np.array([zlib.crc32(json.dumps(segms[r], sort_keys=True, default=str).encode()) for r in rows.tolist()],
                     dtype=np.int64),)


def _groups(data: DetectionSet, max_det: int, ties: str) -> list[_Groups]:
    """Group detections and ground truths by (image, class), in buckets of similar size."""
    img_index = {v: i for i, v in enumerate(data.images.tolist())}
    cls_index = {v: i for i, v in enumerate(data.classes.tolist())}
    gt_keep = np.array([c in cls_index and m in img_index for c, m in zip(data.gt_class.tolist(), data.gt_image.tolist())], dtype=bool)
    dt_keep = np.array([c in cls_index for c in data.dt_class.tolist()], dtype=bool)
    K = len(cls_index)
    gt_rows = np.flatnonzero(gt_keep)
    dt_rows = np.flatnonzero(dt_keep)
    gt_key = np.array([img_index[m] * K + cls_index[c] for m, c in zip(data.gt_image[gt_rows].tolist(), data.gt_class[gt_rows].tolist())], dtype=np.int64)
    dt_key = np.array([img_index[m] * K + cls_index[c] for m, c in zip(data.dt_image[dt_rows].tolist(), data.dt_class[dt_rows].tolist())], dtype=np.int64)
    # detections: by group, then decreasing score, stable; ground truths: by group, input order
    if ties == "stable":
        tie_break: tuple[np.ndarray, ...] = (np.arange(dt_rows.size),)
    else:  # equal scores in box order: the result does not depend on the input order
        dt_area = data.dt_area if data.dt_area is not None else data.dt_box[:, 2] * data.dt_box[:, 3]
        tie_break = (*_content_keys(data, "dt", dt_rows), dt_area[dt_rows],
                     *(data.dt_box[dt_rows, i] for i in (3, 2, 1, 0)))
    dt_order = np.lexsort((*tie_break, -data.dt_score[dt_rows], dt_key))
    dt_rows, dt_key = dt_rows[dt_order], dt_key[dt_order]
    if ties == "stable":  # ground truths in input order (pycocotools: the later of equal IoUs wins)
        gt_order = np.argsort(gt_key, kind="stable")
    else:  # in the order of their content, so that ties between equal IoUs do not depend on the input order
        g_keys = (*_content_keys(data, "gt", gt_rows), *(data.gt_box[gt_rows, i] for i in (3, 2, 1, 0)),
                  data.gt_area[gt_rows], data.gt_crowd[gt_rows], data.gt_ignore[gt_rows])
        gt_order = np.lexsort((*g_keys, gt_key))
    gt_rows, gt_key = gt_rows[gt_order], gt_key[gt_order]
    keys = np.union1d(gt_key, dt_key)
    d_lo, d_hi = np.searchsorted(dt_key, keys, "left"), np.searchsorted(dt_key, keys, "right")
    g_lo, g_hi = np.searchsorted(gt_key, keys, "left"), np.searchsorted(gt_key, keys, "right")
    n_dt = np.minimum(d_hi - d_lo, max_det)
    n_gt = g_hi - g_lo
    out = []
    size = np.maximum(n_dt, 1) * np.maximum(n_gt, 1)
    bucket = np.ceil(np.log2(size)).astype(int)
    for b in np.unique(bucket):
        sel = np.flatnonzero(bucket == b)
        D, G = max(int(n_dt[sel].max()), 1), max(int(n_gt[sel].max()), 1)
        dr = np.full((sel.size, D), -1, dtype=np.int64)
        gr = np.full((sel.size, G), -1, dtype=np.int64)
        for j, s in enumerate(sel):
            dr[j, : n_dt[s]] = dt_rows[d_lo[s] : d_lo[s] + n_dt[s]]
            gr[j, : n_gt[s]] = gt_rows[g_lo[s] : g_hi[s]]
        out.append(_Groups(keys[sel] // K, keys[sel] % K, dr, gr))
    return out


@dataclass
class _Matched:
    """For every evaluated detection (one row each), per area range and IoU threshold."""

    image: np.ndarray  # (N,) image index
    cls: np.ndarray  # (N,) class index
    rank: np.ndarray  # (N,) rank of the detection in its (image, class) group
    score: np.ndarray  # (N,)
    tp: np.ndarray  # (A, T, N) bool: matched to a non-ignored ground truth
    ignored: np.ndarray  # (A, T, N) bool
    n_gt: np.ndarray  # (A, K) non-ignored ground truths per class
    group_image: np.ndarray | None = None  # (P,) image index of each (image, class) group with ground truths
    group_cls: np.ndarray | None = None  # (P,) class index
    group_n_gt: np.ndarray | None = None  # (A, P) non-ignored ground truths of the group
    gt_row: np.ndarray | None = None  # (A, T, N) ground-truth row matched (-1: none); only with ``with_gt``
    dt_row: np.ndarray | None = None  # (N,) the detection's row in the DetectionSet; only with ``with_gt``
    n_gt_any_area: np.ndarray | None = None  # (K,) ground truths per class not ignored, of any area


def _decode(data: DetectionSet, kind: str, rows: np.ndarray) -> Any:
    """The foreground runs of the masks of some ground truths or detections (rows)."""
    from ._rle import decode_runs

    cached = data.gt_runs if kind == "gt" else data.dt_runs
    if cached is not None:  # decoded once already (load_coco, MeanAveragePrecision)
        return cached.subset(rows)
    segms, images = (data.gt_segm, data.gt_image) if kind == "gt" else (data.dt_segm, data.dt_image)
    what = "ground truth annotation" if kind == "gt" else "results detection"
    picked, sizes = [], []
    for r in rows.tolist():
        seg = segms[r]  # type: ignore[index]
        if seg is None:
            raise ValueError(f"{what} {r}: no 'segmentation' (iou_type='segm' needs one for every record)")
        picked.append(seg)
        sizes.append(data.image_hw[images[r]])  # type: ignore[index]
    try:
        return decode_runs(picked, sizes)
    except ValueError as exc:
        text = str(exc)
        if text.startswith("segmentation "):
            index, _, rest = text[len("segmentation "):].partition(": ")
            first = index.split("..")[0]
            if first.isdigit():
                raise ValueError(f"{what} {int(rows[int(first)])}: 'segmentation': {rest}") from None
        raise ValueError(f"{what}: 'segmentation': {text}") from None


_PAIRS_PER_CHUNK = 2_000


def _segm_ious(data: DetectionSet, grp: _Groups) -> np.ndarray:
    """(B, D, G) mask IoUs of a bucket of groups, on run lengths, a bounded number of pairs at a time
    (only the masks of those pairs are decoded; nothing is kept between chunks)."""
    from ._rle import runs_intersections, runs_iou

    B, D = grp.dt_rows.shape
    G = grp.gt_rows.shape[1]
    ious = np.zeros((B, D, G))
    n_pairs = (grp.dt_rows >= 0).sum(axis=1) * (grp.gt_rows >= 0).sum(axis=1)
    lo = 0
    while lo < B:
        hi = lo + max(1, int(np.searchsorted(np.cumsum(n_pairs[lo:]), _PAIRS_PER_CHUNK, "right")))
        dr, gr = grp.dt_rows[lo:hi], grp.gt_rows[lo:hi]
        valid = (dr >= 0)[:, :, None] & (gr >= 0)[:, None, :]
        b, d, g = np.nonzero(valid)
        if b.size:
            d_rows, g_rows = dr[b, d], gr[b, g]
            d_unique, d_local = np.unique(d_rows, return_inverse=True)
            g_unique, g_local = np.unique(g_rows, return_inverse=True)
            d_runs, g_runs = _decode(data, "dt", d_unique), _decode(data, "gt", g_unique)
            inter = runs_intersections(d_runs, d_local, g_runs, g_local)
            ious[lo + b, d, g] = runs_iou(inter, d_runs.areas()[d_local], g_runs.areas()[g_local],
                                          data.gt_crowd[g_rows])
        lo = hi
    return ious


def _keypoint_arrays(data: DetectionSet, k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(N_gt, 3k) and (N_dt, 3k) keypoints, and the ground truths without labelled keypoints
    (``num_keypoints == 0``, or no ``keypoints``: pycocotools ignores those)."""
    from .io import _keypoint_array, _keypoint_matrix

    def stack(values: Any, n: int, what: str, required: bool) -> np.ndarray:
        whole = _keypoint_matrix(values, n)  # every record with the same number of keypoints: at once
        if whole is not None and whole.shape[1] == 3 * k:
            return whole
        out = np.zeros((n, 3 * k))
        for i, v in enumerate([None] * n if values is None else values):
            if v is None:
                if required:
                    raise ValueError(f"{what} {i}: no 'keypoints' (iou_type='keypoints' needs them)")
                continue
            kp = _keypoint_array(v, f"{what} {i}")
            if kp.size != 3 * k:
                raise ValueError(f"{what} {i}: {kp.size // 3} keypoints, but the sigmas are for {k}; pass "
                                 "`kpt_oks_sigmas` with one sigma per keypoint")
            out[i] = kp
        return out

    gt = stack(data.gt_keypoints, data.gt_box.shape[0], "ground truth annotation", False)
    dt = stack(data.dt_keypoints, data.dt_box.shape[0], "results detection", True)
    labelled = (gt[:, 2::3] > 0).sum(axis=1)
    num = data.gt_num_keypoints or [None] * gt.shape[0]
    no_kp = np.array([(n == 0) if n is not None else (c == 0) for n, c in zip(num, labelled.tolist())], dtype=bool)
    return gt, dt, no_kp.reshape(-1)


def _oks(grp: _Groups, gt_kp: np.ndarray, dt_kp: np.ndarray, gt_box: np.ndarray, gt_area: np.ndarray,
         sigmas: np.ndarray) -> np.ndarray:
    """(B, D, G) object keypoint similarity, pycocotools' ``computeOks`` operation for operation
    (one ground truth at a time, its detections at once, so that every sum is the same)."""
    B, D = grp.dt_rows.shape
    G = grp.gt_rows.shape[1]
    out = np.zeros((B, D, G))
    variances = (sigmas * 2) ** 2
    k = sigmas.size
    for b in range(B):
        d_rows = grp.dt_rows[b][grp.dt_rows[b] >= 0]
        if d_rows.size == 0:
            continue
        d = dt_kp[d_rows]
        xd, yd = d[:, 0::3], d[:, 1::3]
        for j, g_row in enumerate(grp.gt_rows[b][grp.gt_rows[b] >= 0].tolist()):
            g = gt_kp[g_row]
            xg, yg, vg = g[0::3], g[1::3], g[2::3]
            k1 = np.count_nonzero(vg > 0)
            bb = gt_box[g_row]
            x0, x1 = bb[0] - bb[2], bb[0] + bb[2] * 2
            y0, y1 = bb[1] - bb[3], bb[1] + bb[3] * 2
            if k1 > 0:
                dx, dy = xd - xg, yd - yg
            else:
                z = np.zeros(k)
                dx = np.maximum(z, x0 - xd) + np.maximum(z, xd - x1)
                dy = np.maximum(z, y0 - yd) + np.maximum(z, yd - y1)
            e = (dx**2 + dy**2) / variances / (gt_area[g_row] + np.spacing(1)) / 2
            if k1 > 0:
                e = e[:, vg > 0]
            out[b, : d_rows.size, j] = np.sum(np.exp(-e), axis=1) / e.shape[1]
    return out


def _match(
    data: DetectionSet, thresholds: np.ndarray, area_ranges: list[tuple[float, float]], max_det: int, ties: str,
    progress: Any = None, iou_type: str = "bbox", sigmas: np.ndarray | None = None, with_gt: bool = False,
) -> _Matched:
    T, A, K = thresholds.size, len(area_ranges), data.classes.size
    thr = np.minimum(thresholds, 1 - 1e-10)
    parts: dict[str, list[np.ndarray]] = {k: [] for k in ("image", "cls", "rank", "score", "tp", "ignored", "gt_row", "dt_row")}
    n_gt = np.zeros((A, K), dtype=np.int64)
    n_gt_any_area = np.zeros(K, dtype=np.int64)
    dt_area = data.dt_area if data.dt_area is not None else data.dt_box[:, 2] * data.dt_box[:, 3]
    # one extra row at the end of every per-record array: the padding index -1 reads it
    dt_box, gt_box = np.vstack([data.dt_box, np.zeros((1, 4))]), np.vstack([data.gt_box, np.zeros((1, 4))])
    dt_area, dt_score = np.r_[dt_area, 0.0], np.r_[data.dt_score, 0.0]
    gt_area, gt_crowd = np.r_[data.gt_area, 0.0], np.r_[data.gt_crowd, False]
    gt_ignore = np.r_[data.gt_ignore, False]
    if iou_type == "keypoints":
        assert sigmas is not None
        gt_kp, dt_kp, no_kp = _keypoint_arrays(data, sigmas.size)
        gt_ignore = np.r_[data.gt_ignore | no_kp, False]
    groups = _groups(data, max_det, ties)
    group_counts: list[list[np.ndarray]] = [[] for _ in range(A)]
    total = sum(g.dt_rows.size for g in groups) or 1
    done = 0
    for grp in groups:
        done += grp.dt_rows.size
        if progress is not None:
            progress(0.8 * done / total)
        B, D = grp.dt_rows.shape
        G = grp.gt_rows.shape[1]
        dvalid, gvalid = grp.dt_rows >= 0, grp.gt_rows >= 0
        drow, grow = grp.dt_rows, grp.gt_rows  # -1 (padding) reads the extra last row of the padded arrays
        crowd = gt_crowd[grow] & gvalid
        if iou_type == "segm":
            ious = _segm_ious(data, grp)
        elif iou_type == "keypoints":
            ious = _oks(grp, gt_kp, dt_kp, data.gt_box, data.gt_area, sigmas)
        else:
            ious = _iou(dt_box[drow], gt_box[grow], crowd)  # (B, D, G)
        ious[~(dvalid[:, :, None] & gvalid[:, None, :])] = -1.0
        tp = np.zeros((A, T, B, D), dtype=bool)
        ignored = np.zeros((A, T, B, D), dtype=bool)
        gt_of = np.full((A, T, B, D) if with_gt else (0,), -1, dtype=np.int64)
        np.add.at(n_gt_any_area, grp.cls, (gvalid & ~gt_ignore[grow] & ~gt_crowd[grow]).sum(axis=1))
        for a, (lo, hi) in enumerate(area_ranges):
            area = gt_area[grow]
            gt_ig = gt_ignore[grow] | gt_crowd[grow] | (area < lo) | (area > hi)
            gt_ig &= gvalid
            counted = (gvalid & ~gt_ig).sum(axis=1)
            np.add.at(n_gt[a], grp.cls, counted)
            group_counts[a].append(counted)
            taken = np.zeros((B, T, G), dtype=bool)
            reusable = crowd[:, None, :]
            for d in range(D):
                iou_d = ious[:, d, None, :]  # (B, 1, G)
                ok = (~taken | reusable) & (iou_d >= thr[None, :, None])  # (B, T, G)
                best = np.full((B, T), -1, dtype=np.int64)
                for group_ig in (False, True):  # non-ignored ground truths first
                    cand = ok & (gt_ig[:, None, :] == group_ig)
                    value = np.where(cand, iou_d, -np.inf)
                    last = G - 1 - np.argmax(value[..., ::-1], axis=-1)  # last index of the maximum
                    found = cand.any(axis=-1) & (best < 0)
                    best = np.where(found, last, best)
                matched = best >= 0
                b_idx, t_idx = np.nonzero(matched)
                taken[b_idx, t_idx, best[b_idx, t_idx]] = True
                m_ig = np.zeros((B, T), dtype=bool)
                m_ig[b_idx, t_idx] = gt_ig[b_idx, best[b_idx, t_idx]]
                tp[a, :, :, d] = (matched & ~m_ig).T
                outside = (dt_area[drow[:, d]] < lo) | (dt_area[drow[:, d]] > hi)
                ignored[a, :, :, d] = (m_ig | (~matched & outside[:, None])).T
                if with_gt:
                    gt_of[a, :, :, d] = np.where(matched, np.take_along_axis(grow, np.maximum(best, 0), axis=1), -1).T
        sel = dvalid.ravel()
        parts["image"].append(np.repeat(grp.image, D)[sel])
        parts["cls"].append(np.repeat(grp.cls, D)[sel])
        parts["rank"].append(np.tile(np.arange(D), B)[sel])
        parts["score"].append(dt_score[drow].ravel()[sel])
        parts["tp"].append(tp.reshape(A, T, B * D)[:, :, sel])
        parts["ignored"].append(ignored.reshape(A, T, B * D)[:, :, sel])
        if with_gt:
            parts["gt_row"].append(gt_of.reshape(A, T, B * D)[:, :, sel])
            parts["dt_row"].append(drow.ravel()[sel])
    empty = {"tp": np.zeros((A, T, 0), dtype=bool), "ignored": np.zeros((A, T, 0), dtype=bool),
             "score": np.zeros(0), "gt_row": np.zeros((A, T, 0), dtype=np.int64)}
    cat = {k: np.concatenate(v, axis=-1) if v else empty.get(k, np.zeros(0, dtype=np.int64)) for k, v in parts.items()}
    g_counts = np.array([np.concatenate(c) if c else np.zeros(0, np.int64) for c in group_counts]).reshape(A, -1)
    g_image = np.concatenate([g.image for g in groups]) if groups else np.zeros(0, np.int64)
    g_cls = np.concatenate([g.cls for g in groups]) if groups else np.zeros(0, np.int64)
    return _Matched(cat["image"], cat["cls"], cat["rank"], cat["score"], cat["tp"].astype(bool),
                    cat["ignored"].astype(bool), n_gt, g_image, g_cls, g_counts,
                    cat["gt_row"] if with_gt else None, cat["dt_row"] if with_gt else None, n_gt_any_area)
