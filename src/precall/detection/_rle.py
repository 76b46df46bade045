"""COCO segmentation masks for ``iou_type="segm"`` (internal; numpy only).

COCO stores a mask as run-length counts over the image in column-major order,
alternating background and foreground runs, starting with background.  Three
forms occur: polygons (lists of ``x1, y1, x2, y2, ...``), uncompressed counts
(a list, for crowds) and compressed counts (a string, in results).  This module
turns each into a flat boolean mask, reproducing pycocotools' own rules so that
areas and IoUs are the same integers:

* compressed counts: each count is a little-endian sequence of 5-bit groups
  stored as characters from ``'0'`` (48), bit 5 set while more groups follow,
  bit 4 of the last group the sign; from the third count on, the value is a
  difference from the count two places before;
* polygons: vertices scaled by 5 and rounded, every edge walked one unit step
  at a time along its longer axis, and a pixel column's boundary kept where the
  walk crosses its centre line; the pixels from each such boundary down to the
  next are inside.  Several polygons of one object are united.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["mask_area", "mask_bbox", "mask_iou", "to_mask"]


def _counts_from_string(text: str) -> list[int]:
    data = text.encode("ascii")
    counts: list[int] = []
    p = 0
    while p < len(data):
        value, shift, more = 0, 0, True
        while more:
            c = data[p] - 48
            value |= (c & 0x1F) << shift
            more = bool(c & 0x20)
            p += 1
            shift += 5
            if not more and c & 0x10:
                value |= -1 << shift
        if len(counts) > 2:
            value += counts[-2]
        counts.append(value)
    return counts


def _from_counts(counts: list[int], h: int, w: int) -> np.ndarray:
    runs = np.asarray(counts, dtype=np.int64)
    if runs.sum() != h * w or (runs < 0).any():
        raise ValueError(f"run-length counts must be non-negative and sum to h * w = {h * w}")
    values = np.zeros(runs.size, dtype=bool)
    values[1::2] = True
    return np.repeat(values, runs)


def _boundary_points(xy: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The polygon's edges walked in unit steps on the 5x grid: (u, v) per step.

    Each edge is walked along its longer axis from its lower end, the other
    coordinate rounded (C's ``(int)(a + s * t + .5)``); all edges at once.
    """
    scale = 5.0
    x = np.trunc(scale * xy[0::2] + 0.5).astype(np.int64)
    y = np.trunc(scale * xy[1::2] + 0.5).astype(np.int64)
    x, y = np.append(x, x[0]), np.append(y, y[0])
    xs, xe, ys, ye = x[:-1], x[1:], y[:-1], y[1:]
    dx, dy = np.abs(xe - xs), np.abs(ys - ye)
    along_x = dx >= dy
    flip = (along_x & (xs > xe)) | (~along_x & (ys > ye))
    xs, xe = np.where(flip, xe, xs), np.where(flip, xs, xe)
    ys, ye = np.where(flip, ye, ys), np.where(flip, ys, ye)
    length = np.where(along_x, dx, dy)
    with np.errstate(invalid="ignore", divide="ignore"):  # a repeated vertex: no slope, one point
        slope = np.where(along_x, (ye - ys) / np.maximum(dx, 1), (xe - xs) / np.maximum(dy, 1))
    count = length + 1
    edge = np.repeat(np.arange(xs.size), count)
    d = np.arange(edge.size) - np.repeat(np.cumsum(count) - count, count)
    step = np.where(flip[edge], length[edge] - d, d)
    rounded = np.where(along_x[edge], ys[edge], xs[edge]) + slope[edge] * step + 0.5
    rounded = np.trunc(rounded).astype(np.int64)
    u = np.where(along_x[edge], step + xs[edge], rounded)
    v = np.where(along_x[edge], rounded, step + ys[edge])
    return u, v


def _from_polygon(polygon: Any, h: int, w: int) -> np.ndarray:
    xy = np.asarray(polygon, dtype=np.float64).ravel()
    if xy.size < 6 or xy.size % 2:
        raise ValueError(f"a polygon needs at least 3 points (x, y pairs); got {xy.size} numbers")
    u, v = _boundary_points(xy)
    scale = 5.0
    moved = np.flatnonzero(u[1:] != u[:-1]) + 1  # steps that change column on the 5x grid
    cur, prev = u[moved], u[moved - 1]
    xd = (np.where(cur < prev, cur, cur - 1) + 0.5) / scale - 0.5
    keep = (np.floor(xd) == xd) & (xd >= 0) & (xd <= w - 1)  # pixel-centre crossings inside the image
    yd = (np.where(v[moved] < v[moved - 1], v[moved], v[moved - 1]) + 0.5) / scale - 0.5
    yd = np.ceil(np.clip(yd, 0.0, float(h)))
    flips = xd[keep].astype(np.int64) * h + yd[keep].astype(np.int64)
    # the mask flips at each boundary position (column-major); equal positions cancel in pairs
    count = np.bincount(flips, minlength=h * w + 1)[: h * w]
    return (np.cumsum(count) & 1).astype(bool)


def to_mask(segmentation: Any, h: int, w: int) -> np.ndarray:
    """A COCO segmentation (polygons, or counts as a list or a string) as a flat
    column-major boolean mask of an ``h`` x ``w`` image."""
    if isinstance(segmentation, list):
        mask = np.zeros(h * w, dtype=bool)
        for polygon in segmentation:
            mask |= _from_polygon(polygon, h, w)
        return mask
    if isinstance(segmentation, dict) and "counts" in segmentation:
        size = segmentation.get("size", [h, w])
        if list(size) != [h, w]:
            raise ValueError(f"segmentation size {list(size)} differs from the image's [{h}, {w}]")
        counts = segmentation["counts"]
        if isinstance(counts, (bytes, str)):
            counts = _counts_from_string(counts.decode("ascii") if isinstance(counts, bytes) else counts)
        return _from_counts(list(counts), h, w)
    raise ValueError("a segmentation must be a list of polygons or a dict with 'counts' and 'size'")


def mask_area(mask: np.ndarray) -> int:
    return int(np.count_nonzero(mask))


def mask_bbox(mask: np.ndarray, h: int, w: int) -> list[float]:
    """``[x, y, w, h]`` of the mask's pixels (zeros when empty), as pycocotools' ``toBbox``."""
    grid = mask.reshape(w, h)  # column-major: one row per image column
    cols = np.flatnonzero(grid.any(axis=1))
    if cols.size == 0:
        return [0.0, 0.0, 0.0, 0.0]
    rows = np.flatnonzero(grid.any(axis=0))
    return [float(cols[0]), float(rows[0]), float(cols[-1] - cols[0] + 1), float(rows[-1] - rows[0] + 1)]


def mask_iou(dt: list[np.ndarray], gt: list[np.ndarray], crowd: np.ndarray) -> np.ndarray:
    """(D, G) IoU of masks; for crowd ground truths the intersection over the detection's area."""
    if not dt or not gt:
        return np.zeros((len(dt), len(gt)))
    exact = np.float32 if dt[0].size < 2**24 else np.float64  # integer sums stay exact
    d, g = np.stack(dt), np.stack(gt)
    inside = np.flatnonzero(d.any(axis=0) | g.any(axis=0))  # only pixels some mask covers
    d, g = d[:, inside].astype(exact), g[:, inside].astype(exact)
    inter = d @ g.T
    d_area = d.sum(axis=1)[:, None].astype(np.float64)
    g_area = g.sum(axis=1)[None, :].astype(np.float64)
    inter = inter.astype(np.float64)
    union = np.where(crowd[None, :], d_area, d_area + g_area - inter)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(union > 0, inter / union, 0.0)
