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
  next are inside.  Several polygons of one object are united.  The crossings
  are found without walking (:func:`_polygon_crossings`), so the work is bounded
  by the image, not by the coordinates.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._core.jsonshape import show as _show

__all__ = ["MAX_PIXELS", "MAX_POLYGON_COORDINATE", "Runs", "decode_runs", "mask_area", "mask_bbox", "mask_iou", "runs_iou",
           "to_mask"]


_SCALE = 5.0  # pycocotools' rleFrPoly upsamples the vertices by 5
MAX_POLYGON_COORDINATE = 1e14
"""The largest polygon coordinate accepted (in pixels, either sign): beyond it the 5x grid of
pycocotools' rule no longer holds whole numbers exactly in float64."""


MAX_PIXELS = 2**32 - 1
"""The most pixels of an image with masks (pycocotools' run-length counts are 32-bit)."""


def _edges(xy: np.ndarray, sizes: np.ndarray) -> tuple[np.ndarray, ...]:
    """The edges of polygons (``xy`` concatenated, ``sizes`` vertices each) as pycocotools' ``rleFrPoly``
    walks them: vertices scaled by 5 and truncated (C's ``(int)(5 * x + .5)``); each edge (the last one
    closing its polygon) oriented from its lower end along its longer axis.  Returns per edge ``xs, ys``
    (the start), ``length`` (steps), ``slope``, ``along_x`` and ``flip`` (walked from the end)."""
    x = np.trunc(_SCALE * xy[0::2] + 0.5).astype(np.int64)
    y = np.trunc(_SCALE * xy[1::2] + 0.5).astype(np.int64)
    first = np.cumsum(sizes) - sizes
    nxt = np.arange(x.size) + 1
    nxt[first + sizes - 1] = first  # the closing edge
    xs, xe, ys, ye = x, x[nxt], y, y[nxt]
    dx, dy = np.abs(xe - xs), np.abs(ys - ye)
    along_x = dx >= dy
    flip = (along_x & (xs > xe)) | (~along_x & (ys > ye))
    xs, xe = np.where(flip, xe, xs), np.where(flip, xs, xe)
    ys, ye = np.where(flip, ye, ys), np.where(flip, ys, ye)
    length = np.where(along_x, dx, dy)
    with np.errstate(invalid="ignore", divide="ignore"):  # a repeated vertex: no slope, one point
        slope = np.where(along_x, (ye - ys) / np.maximum(dx, 1), (xe - xs) / np.maximum(dy, 1))
    return xs, ys, length, slope, along_x, flip


def _step(edges: tuple[np.ndarray, ...], e: np.ndarray, t: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(u, v) of step ``t`` of edges ``e``: the walked coordinate ``start + t``, the other rounded as C's
    ``(int)(start + slope * t + .5)``."""
    xs, ys, _, slope, along_x, _ = edges
    ax = along_x[e]
    rounded = np.trunc(np.where(ax, ys[e], xs[e]) + slope[e] * t + 0.5).astype(np.int64)
    walked = t + np.where(ax, xs[e], ys[e])
    return np.where(ax, walked, rounded), np.where(ax, rounded, walked)


def _boundary(u_prev: np.ndarray, v_prev: np.ndarray, u_cur: np.ndarray, v_cur: np.ndarray, w: np.ndarray,
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """pycocotools' rule for two consecutive steps of the walk: ``(keep, column, yd)``, kept where the
    walk crosses a pixel column's centre line inside the image (``yd`` before clipping)."""
    xd = (np.where(u_cur < u_prev, u_cur, u_cur - 1) + 0.5) / _SCALE - 0.5
    keep = (u_cur != u_prev) & (np.floor(xd) == xd) & (xd >= 0) & (xd <= w - 1)
    yd = (np.where(v_cur < v_prev, v_cur, v_prev) + 0.5) / _SCALE - 0.5
    return keep, xd, yd


def _polygon_crossings(polys: list[np.ndarray], ws: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The column crossings of pycocotools' boundary walk, without walking: ``(owner, column, yd)``.

    ``rleFrPoly`` walks every edge in unit steps of the 5x grid (O(coordinates): a vertex at 1e7 is 5e7
    steps) and keeps the steps where the walked x (``u``) passes from ``5c + 2`` to ``5c + 3`` for a
    column ``c`` of the image, plus the junctions between edges.  ``u`` is monotone along an edge, so
    each column an edge spans has one such step: found directly for edges walked along x (``u`` is the
    step), by bisection on the same float expression for edges walked along y.  The work is
    O(edges x image width), and every kept step is the one pycocotools keeps, float for float.
    """
    n = len(polys)
    sizes = np.fromiter((p.size // 2 for p in polys), dtype=np.int64, count=n)
    edges = _edges(np.concatenate(polys), sizes)
    xs, _, length, _, along_x, flip = edges
    e_owner = np.repeat(np.arange(n), sizes)
    w_e = ws[e_owner]
    every = np.arange(xs.size)
    u0 = _step(edges, every, np.zeros_like(length))[0]
    u1 = _step(edges, every, length)[0]
    lo_u, hi_u = np.minimum(u0, u1), np.maximum(u0, u1)
    # columns c whose crossing 5c + 2 -> 5c + 3 lies in the edge's range of u, within the image
    c_lo = np.maximum(-((2 - lo_u) // 5), 0)
    c_hi = np.minimum((hi_u - 3) // 5, w_e - 1)
    count = np.maximum(c_hi - c_lo + 1, 0)
    e = np.repeat(every, count)
    target = 5 * (c_lo[e] + np.arange(e.size) - np.repeat(np.cumsum(count) - count, count)) + 2
    # t: the last step with u on the near side of the crossing (u <= target going up, > target going down)
    t = target - xs[e]  # along x: u is xs + t
    rising = u1[e] >= u0[e]
    ay = np.flatnonzero(~along_x[e])
    lo, hi = np.zeros(ay.size, dtype=np.int64), length[e[ay]].copy()
    while ay.size and (hi - lo > 1).any():
        mid = (lo + hi) // 2
        u_mid = _step(edges, e[ay], mid)[0]
        near = np.where(rising[ay], u_mid <= target[ay], u_mid > target[ay])
        lo, hi = np.where(near, mid, lo), np.where(near, hi, mid)
    t[ay] = lo
    ua, va = _step(edges, e, t)
    ub, vb = _step(edges, e, t + 1)
    back = flip[e]  # walked from the end: step t + 1 comes first
    keep, col, yd = _boundary(np.where(back, ub, ua), np.where(back, vb, va), np.where(back, ua, ub),
                              np.where(back, va, vb), w_e[e])
    owner, col, yd = e_owner[e][keep], col[keep], yd[keep]
    # junctions: the last step of an edge and the first of the next edge of the same polygon
    j = np.flatnonzero(e_owner[:-1] == e_owner[1:])
    up, vp = _step(edges, j, np.where(flip[j], 0, length[j]))
    uc, vc = _step(edges, j + 1, np.where(flip[j + 1], length[j + 1], 0))
    keep_j, col_j, yd_j = _boundary(up, vp, uc, vc, w_e[j])
    return (np.r_[owner, e_owner[j][keep_j]], np.r_[col, col_j[keep_j]], np.r_[yd, yd_j[keep_j]])


def to_mask(segmentation: Any, h: int, w: int) -> np.ndarray:
    """A COCO segmentation (polygons, or counts as a list or a string) as a flat
    column-major boolean mask of an ``h`` x ``w`` image (from :func:`decode_runs`)."""
    start, end = decode_runs([segmentation], [(h, w)]).take(0)
    edges = np.zeros(h * w + 1, dtype=np.int64)
    np.add.at(edges, start, 1)
    np.add.at(edges, end, -1)
    return np.cumsum(edges[:-1]) > 0


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


# ---------------------------------------------------------------------------------------------
# run lengths: masks as sorted, disjoint foreground intervals [start, end) of the column-major order
class Runs:
    """Foreground runs of many masks, concatenated: mask ``i`` has the intervals
    ``start[bounds[i]:bounds[i + 1]]``, ``end[...]`` (sorted, disjoint, non-empty)."""

    __slots__ = ("start", "end", "bounds")

    def __init__(self, start: np.ndarray, end: np.ndarray, bounds: np.ndarray) -> None:
        self.start, self.end, self.bounds = start, end, bounds

    def __len__(self) -> int:
        return self.bounds.size - 1

    def areas(self) -> np.ndarray:
        cum = np.r_[0, np.cumsum(self.end - self.start)]
        return (cum[self.bounds[1:]] - cum[self.bounds[:-1]]).astype(np.int64)

    def boxes(self, heights: np.ndarray) -> np.ndarray:
        """``[x, y, w, h]`` per mask (zeros when empty), as pycocotools' ``toBbox``: a run
        over several columns spans the whole column height."""
        n = len(self)
        out = np.zeros((n, 4))
        counts = np.diff(self.bounds)
        if self.start.size == 0:
            return out
        owner = np.repeat(np.arange(n), counts)
        h = np.asarray(heights, dtype=np.int64)[owner]
        x0, x1 = self.start // h, (self.end - 1) // h
        y0, y1 = self.start % h, (self.end - 1) % h
        multi = x0 != x1
        y0, y1 = np.where(multi, 0, y0), np.where(multi, h - 1, y1)
        has = counts > 0
        first = self.bounds[:-1][has]
        xs, xe = np.minimum.reduceat(x0, first), np.maximum.reduceat(x1, first)
        ys, ye = np.minimum.reduceat(y0, first), np.maximum.reduceat(y1, first)
        out[has] = np.column_stack([xs, ys, xe - xs + 1, ye - ys + 1])
        return out

    def take(self, index: int) -> tuple[np.ndarray, np.ndarray]:
        lo, hi = self.bounds[index], self.bounds[index + 1]
        return self.start[lo:hi], self.end[lo:hi]

    def subset(self, rows: np.ndarray) -> Runs:
        """The masks ``rows`` (an index array, any order, repeats allowed), as int64 runs."""
        rows = np.asarray(rows, dtype=np.int64)
        count = (self.bounds[rows + 1] - self.bounds[rows]).astype(np.int64)
        bounds = np.r_[0, np.cumsum(count)].astype(np.int64)
        index = np.repeat(self.bounds[rows] - bounds[:-1], count) + np.arange(int(bounds[-1]))
        return Runs(self.start[index].astype(np.int64), self.end[index].astype(np.int64), bounds)

    def compact(self) -> Runs:
        """The same runs stored as uint32 (COCO's pixel positions are below 2**32): half the memory."""
        return Runs(self.start.astype(np.uint32), self.end.astype(np.uint32), self.bounds)

    @staticmethod
    def concat(parts: list[Runs]) -> Runs:
        """The masks of several :class:`Runs`, one after the other."""
        if not parts:
            return Runs(np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(1, np.int64))
        offsets = np.cumsum([0] + [p.bounds[-1] for p in parts[:-1]])
        bounds = np.concatenate([parts[0].bounds[:1]] + [p.bounds[1:] + o for p, o in zip(parts, offsets)])
        return Runs(np.concatenate([p.start for p in parts]), np.concatenate([p.end for p in parts]),
                    bounds.astype(np.int64))

    @staticmethod
    def from_masks(masks: np.ndarray) -> Runs:
        """The foreground runs of boolean masks ``(N, H, W)`` in COCO's column-major pixel order."""
        n = masks.shape[0]
        flat = np.zeros((n, masks.shape[1] * masks.shape[2] + 2), dtype=bool)
        flat[:, 1:-1] = masks.transpose(0, 2, 1).reshape(n, flat.shape[1] - 2) != 0
        row, pos = np.nonzero(flat[:, 1:] != flat[:, :-1])  # row-major: each row's changes in order
        return Runs(pos[0::2].astype(np.int64), pos[1::2].astype(np.int64),
                    np.r_[0, np.cumsum(np.bincount(row[0::2], minlength=n))].astype(np.int64))


def _decode_strings(texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """pycocotools' compressed counts of many strings at once: (counts, bounds) with the
    counts of string ``i`` in ``counts[bounds[i]:bounds[i + 1]]``.

    A value is 1 to ~7 characters; it is assembled one character position at a time over
    the values still that long (most are one character), in bytes until the shifts."""
    n = len(texts)
    lengths = np.fromiter(map(len, texts), dtype=np.int64, count=n)
    try:
        raw = "".join(texts).encode("ascii")
    except UnicodeEncodeError:
        raise ValueError("compressed counts must be ASCII text (pycocotools' RLE string)") from None
    c = np.frombuffer(raw, dtype=np.uint8) - np.uint8(48)  # below '0' wraps to > 63
    if c.size == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(n + 1, dtype=np.int64)
    if (c > 63).any():
        raise ValueError("compressed counts hold characters outside pycocotools' alphabet ('0' to 'o')")
    last_char = np.cumsum(lengths) - 1  # of each string (an empty one: the previous string's)
    more = (c & 0x20) != 0
    more[last_char[lengths > 0]] = False  # a value never runs into the next string
    ends = np.flatnonzero(~more)
    starts = np.empty_like(ends)
    starts[0], starts[1:] = 0, ends[:-1] + 1
    size = ends - starts + 1
    low = c & np.uint8(0x1F)
    value = low[starts].astype(np.int64)
    longer, k = np.flatnonzero(size > 1), 1
    while longer.size:
        value[longer] |= low[starts[longer] + k].astype(np.int64) << (5 * k)
        k += 1
        longer = longer[size[longer] > k]
    negative = np.flatnonzero(c[ends] & np.uint8(0x10))
    value[negative] -= np.int64(1) << (5 * size[negative])  # C: x |= -1 << 5k
    bounds = np.r_[0, np.searchsorted(ends, last_char, side="right")].astype(np.int64)
    n_values = np.diff(bounds)
    j = np.arange(value.size) - np.repeat(bounds[:-1], n_values)  # index within the string
    # from the fourth count on (C: m > 2), a value is a difference from the count two places before:
    # within a string the odd-index counts are running sums of the odd-index values, those at even
    # index >= 2 of theirs
    odd = (j & 1) == 1
    even = ~odd & (j >= 2)
    cs_odd = np.cumsum(np.where(odd, value, 0))
    cs_even = np.cumsum(np.where(even, value, 0))
    before_odd = np.repeat(np.r_[0, cs_odd][bounds[:-1]], n_values)
    before_even = np.repeat(np.r_[0, cs_even][bounds[:-1]], n_values)
    counts = np.where(odd, cs_odd - before_odd, np.where(even, cs_even - before_even, value))
    return counts, bounds


def _runs_from_counts(counts: np.ndarray, bounds: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Foreground runs of many count lists: (start, end, run bounds, total count per list)."""
    n = bounds.size - 1
    owner = np.repeat(np.arange(n), np.diff(bounds))
    j = np.arange(counts.size) - bounds[owner]
    cum = np.cumsum(counts)
    before = cum - counts
    list_base = np.r_[0, cum][bounds[:-1]]
    pos = before - list_base[owner]
    fg = (j % 2 == 1) & (counts > 0)
    start, end = pos[fg], pos[fg] + counts[fg]
    run_bounds = np.r_[0, np.cumsum(np.bincount(owner[fg], minlength=n))]
    totals = np.r_[0, cum][bounds[1:]] - list_base
    return start, end, run_bounds, totals


def _polygons_runs(polys: list[np.ndarray], hs: np.ndarray, ws: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """pycocotools' ``rleFrPoly`` for many polygons at once: (start, end, run bounds) per polygon.

    The column crossings of :func:`_polygon_crossings` (every array carrying its polygon's
    index) turned into flip positions ``column * h + ceil(clip(yd, 0, h))``, flips of odd
    multiplicity kept (sorted per polygon), paired into runs."""
    n = len(polys)
    owner, column, yd = _polygon_crossings(polys, ws)
    h = hs[owner]
    yd = np.ceil(np.clip(yd, 0.0, h.astype(np.float64)))
    flips = column.astype(np.int64) * h + yd.astype(np.int64)
    f_owner = owner
    inside = flips < (hs * ws)[f_owner]
    flips, f_owner = flips[inside], f_owner[inside]
    stride = int((hs * ws).max(initial=0)) + 1
    keys, mult = np.unique(f_owner * stride + flips, return_counts=True)
    toggles = keys[mult % 2 == 1]
    t_owner = toggles // stride
    odd = np.flatnonzero(np.bincount(t_owner, minlength=n) % 2 == 1)
    toggles = np.sort(np.r_[toggles, odd * stride + hs[odd] * ws[odd]])  # an open run ends at h * w
    t_owner = toggles // stride
    per = np.bincount(t_owner, minlength=n)
    idx = np.arange(toggles.size) - np.repeat(np.cumsum(per) - per, per)
    pos = toggles - t_owner * stride
    return pos[idx % 2 == 0], pos[idx % 2 == 1], np.r_[0, np.cumsum(per // 2)]


def _unions(start: np.ndarray, end: np.ndarray, owner: np.ndarray, n: int, stride: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The union of the runs of each owner (several polygons of one object), all owners at once."""
    keys = np.r_[owner * stride + start, owner * stride + end]
    pos, inv = np.unique(keys, return_inverse=True)
    cover = np.cumsum(np.bincount(inv, weights=np.r_[np.ones(start.size), -np.ones(end.size)], minlength=pos.size))
    inside = cover > 0.5
    was = np.r_[False, inside[:-1]]
    s_key, e_key = pos[inside & ~was], pos[~inside & was]
    u_owner = s_key // stride
    return s_key - u_owner * stride, e_key - u_owner * stride, np.r_[0, np.cumsum(np.bincount(u_owner, minlength=n))]


def _flat(values: Any) -> np.ndarray | None:
    """``values`` as a 1-D array when it is a flat list, tuple or array; else None."""
    if not isinstance(values, (list, tuple, np.ndarray)):
        return None
    try:
        arr = np.asarray(values)
    except (ValueError, TypeError):  # ragged
        return None
    return arr if arr.ndim == 1 else None


def _polygon(p: Any) -> np.ndarray:
    """One polygon ``[x1, y1, x2, y2, ...]`` as float64, checked (at least 3 points, finite, at most
    :data:`MAX_POLYGON_COORDINATE` from the origin)."""
    arr = _flat(p)
    if arr is None or arr.dtype.kind not in "iuf":
        raise ValueError(f"a polygon must be a flat list of numbers x1, y1, x2, y2, ... (a segmentation is a list "
                         f"of polygons); got {_show(p)}")
    if arr.size < 6 or arr.size % 2:
        raise ValueError(f"a polygon needs at least 3 points (x, y pairs); got {arr.size} numbers")
    xy = arr.astype(np.float64)
    bad = ~(np.abs(xy) <= MAX_POLYGON_COORDINATE)  # NaN too
    if bad.any():
        raise ValueError(f"polygon coordinates must be finite numbers within +-{MAX_POLYGON_COORDINATE:g} pixels; "
                         f"got {float(xy[np.flatnonzero(bad)[0]])!r} at position {int(np.flatnonzero(bad)[0])}")
    return xy


def _rle_counts(seg: Any, h: int, w: int) -> Any:
    """The counts of a run-length segmentation ``{"size": [h, w], "counts": ...}``: the compressed
    string, or the uncompressed counts as int64; the size checked against the image's."""
    if not (isinstance(seg, dict) and "counts" in seg):
        raise ValueError("a segmentation must be a list of polygons or a dict with 'counts' and 'size'; got "
                         f"{_show(seg)}")
    size = seg.get("size", [h, w])
    if not isinstance(size, (list, tuple)) or len(size) != 2 or not all(
            isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in size):
        raise ValueError(f"'size' must be [height, width] (two integers); got {_show(size)}")
    if list(size) != [h, w]:
        raise ValueError(f"segmentation size {list(size)} differs from the image's [{h}, {w}]")
    counts = seg["counts"]
    if isinstance(counts, (bytes, str)):
        try:
            return counts.decode("ascii") if isinstance(counts, bytes) else counts
        except UnicodeDecodeError:
            raise ValueError("compressed counts must be ASCII text (pycocotools' RLE string)") from None
    arr = _flat(counts)
    if arr is None or (arr.size and arr.dtype.kind not in "iu"):
        raise ValueError("'counts' must be a list of integers (uncompressed RLE) or a string (compressed RLE); "
                         f"got {_show(counts)}")
    return arr.astype(np.int64)


_CHARS_PER_BATCH = 200_000
_POLYGONS_PER_BATCH = 256


def decode_runs(segmentations: list[Any], sizes: list[tuple[int, int]]) -> Runs:
    """The foreground runs of COCO segmentations (polygons, counts lists or compressed strings),
    each in an image of ``sizes[i] = (h, w)``; compressed strings are decoded all at once.
    A ``ValueError`` names the index of a malformed segmentation."""
    n = len(segmentations)
    pieces: list[tuple[np.ndarray, np.ndarray] | None] = [None] * n
    batches: list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = []  # items, start, end, run bounds
    strings: list[str] = []
    string_of: list[int] = []
    polys: list[np.ndarray] = []
    poly_of: list[int] = []
    for i, (seg, (h, w)) in enumerate(zip(segmentations, sizes)):
        try:
            if h * w > MAX_PIXELS:
                raise ValueError(f"an image of {h} x {w} pixels is larger than COCO masks allow (run-length counts "
                                 f"are 32-bit: at most {MAX_PIXELS} pixels); is its 'height' / 'width' right?")
            if type(seg) is dict:  # the common case, a compressed RLE of the right size: no further checks here
                counts, size = seg.get("counts"), seg.get("size")
                if type(counts) is str and type(size) is list and len(size) == 2 and type(size[0]) is int and \
                        type(size[1]) is int and size[0] == h and size[1] == w:
                    strings.append(counts)
                    string_of.append(i)
                    continue
            if isinstance(seg, list):
                if not seg:
                    pieces[i] = (np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64))
                for p in seg:
                    polys.append(_polygon(p))
                    poly_of.append(i)
                continue
            counts = _rle_counts(seg, h, w)
            if isinstance(counts, str):
                strings.append(counts)
                string_of.append(i)
                continue
            start, end, _, total = _runs_from_counts(counts, np.array([0, counts.size]))
            if total[0] != h * w or (counts < 0).any():
                raise ValueError(f"run-length counts must be non-negative and sum to h * w = {h * w}")
            pieces[i] = (start, end)
        except ValueError as exc:
            raise ValueError(f"segmentation {i}: {exc}") from None
        except (TypeError, OverflowError):
            raise ValueError(f"segmentation {i}: not a polygon list or RLE counts") from None
    lo = 0
    while lo < len(strings):  # batches of at most ~200k characters: bounded temporaries
        hi, chars = lo, 0
        while hi < len(strings) and (hi == lo or chars + len(strings[hi]) <= _CHARS_PER_BATCH):
            chars += len(strings[hi])
            hi += 1
        batch, batch_of = strings[lo:hi], string_of[lo:hi]
        try:
            counts, bounds = _decode_strings(batch)
        except ValueError as exc:
            raise ValueError(f"segmentation {batch_of[0]}: {exc}") from None
        start, end, run_bounds, totals = _runs_from_counts(counts, bounds)
        hw = np.array([sizes[i][0] * sizes[i][1] for i in batch_of], dtype=np.int64)
        owner = np.repeat(np.arange(len(batch)), np.diff(bounds))
        negative = np.bincount(owner[counts < 0], minlength=len(batch)) > 0
        bad = np.flatnonzero((totals != hw) | negative)
        if bad.size:
            i = batch_of[int(bad[0])]
            raise ValueError(f"segmentation {i}: run-length counts must be non-negative and sum to h * w = "
                             f"{int(hw[bad[0]])}")
        batches.append((np.array(batch_of, dtype=np.int64), start, end, run_bounds))
        lo = hi
    lo = 0
    while lo < len(polys):  # batches of whole objects, ~256 polygons each: bounded temporaries
        hi = min(lo + _POLYGONS_PER_BATCH, len(polys))
        while hi < len(polys) and poly_of[hi] == poly_of[hi - 1]:
            hi += 1
        objects = np.array(poly_of[lo:hi], dtype=np.int64)
        hs = np.array([sizes[i][0] for i in poly_of[lo:hi]], dtype=np.int64)
        ws = np.array([sizes[i][1] for i in poly_of[lo:hi]], dtype=np.int64)
        start, end, bounds = _polygons_runs(polys[lo:hi], hs, ws)
        if objects.size != np.unique(objects).size:  # an object of several polygons: their union
            owner = np.repeat(objects, np.diff(bounds))
            start, end, bounds = _unions(start, end, owner, n, int((hs * ws).max()) + 1)
            items = np.unique(objects)
            batches.append((items, start, end, bounds[np.r_[items, items[-1] + 1]]))
        else:
            batches.append((objects, start, end, bounds))
        lo = hi
    for i, piece in enumerate(pieces):  # counts lists and empty polygon lists, one at a time
        if piece is not None:
            batches.append((np.array([i]), piece[0], piece[1], np.array([0, piece[0].size])))
    # every batch's runs scattered to their items' places, all at once per batch
    lens = np.zeros(n, dtype=np.int64)
    for items, _, _, rb in batches:
        lens[items] = np.diff(rb)
    bounds = np.r_[0, np.cumsum(lens)]
    start_all = np.zeros(int(bounds[-1]), dtype=np.int64)
    end_all = np.zeros(int(bounds[-1]), dtype=np.int64)
    for items, start, end, rb in batches:
        count = np.diff(rb)
        dest = np.repeat(bounds[items] - rb[:-1], count) + np.arange(int(rb[-1] - rb[0])) + rb[0]
        start_all[dest] = start[rb[0]:rb[-1]]
        end_all[dest] = end[rb[0]:rb[-1]]
    return Runs(start_all, end_all, bounds)


def runs_intersections(dt: Runs, d_index: np.ndarray, gt: Runs, g_index: np.ndarray) -> np.ndarray:
    """Intersection areas of the mask pairs ``(dt[d_index[p]], gt[g_index[p]])``, on the runs.

    With ``C_g(x)`` the number of foreground pixels of ``g`` before position ``x``
    (piecewise linear over its runs, evaluated by binary search), the intersection
    with ``d`` is the sum over the runs ``[s, e)`` of ``d`` of ``C_g(e) - C_g(s)``.
    All pairs at once: each ground truth's runs shifted to a range of its own.
    """
    P = d_index.size
    if P == 0:
        return np.zeros(0, dtype=np.int64)
    stride = int(max(dt.end.max(initial=0), gt.end.max(initial=0))) + 1
    g_count = np.diff(gt.bounds)
    g_owner = np.repeat(np.arange(len(gt)), g_count)
    g_start = gt.start + g_owner * stride
    g_len = gt.end - gt.start
    # a sentinel run far to the left: every query finds a run at or before it
    g_start = np.r_[-1, g_start]
    g_len = np.r_[0, g_len]
    g_cum = np.r_[0, np.cumsum(g_len)]  # pixels before run r (r over the sentinel-prefixed list)
    d_count = np.diff(dt.bounds)[d_index]
    pair_of = np.repeat(np.arange(P), d_count)
    run = np.arange(pair_of.size) - np.repeat(np.cumsum(d_count) - d_count, d_count) + dt.bounds[d_index][pair_of]
    offset = g_index[pair_of] * stride
    base = g_cum[gt.bounds[g_index] + 1][pair_of]  # pixels of all runs before this ground truth's

    def covered(x: np.ndarray) -> np.ndarray:
        r = np.searchsorted(g_start, x, side="right") - 1
        return g_cum[r] + np.minimum(x - g_start[r], g_len[r]) - base

    inside = covered(dt.end[run] + offset) - covered(dt.start[run] + offset)
    return np.bincount(pair_of, weights=inside, minlength=P).astype(np.int64)  # exact: sums < 2**53


def runs_iou(inter: np.ndarray, d_area: np.ndarray, g_area: np.ndarray, crowd: np.ndarray) -> np.ndarray:
    """pycocotools' mask IoU from intersections and areas: ``i / u`` with ``u`` the union, or the
    detection's area for a crowd ground truth; 0 without intersection."""
    inter = inter.astype(np.float64)
    union = np.where(crowd, d_area, d_area + g_area - inter).astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(inter > 0, inter / union, 0.0)
