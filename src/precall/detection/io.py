"""Reading detection data: COCO JSON, PASCAL VOC XML and per-image text files.

Everything becomes a :class:`DetectionSet`: flat arrays of ground truths and
detections in input order (the order decides ties).  Errors name the file and
the record or line.
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .._core.jsonshape import show as _show

__all__ = ["BOX_FORMATS", "DetectionSet", "DetectionWarning", "load_coco", "load_text", "load_voc"]


class DetectionWarning(UserWarning):
    """Input that precall evaluates under a documented choice, where pycocotools
    would give a different (or no) answer: annotation ids that are missing, 0 or
    repeated; boxes of zero width or height; annotations on images or classes the
    ground truth does not list."""


def _warn(message: str, source: str = "") -> None:
    """A :class:`DetectionWarning`, after ``source`` (the file it is about and ``": "``, or nothing
    for parsed JSON): each warning names the file it is about, as each error does."""
    import warnings

    warnings.warn(source + message, DetectionWarning, stacklevel=4)


def _is_int(value: Any) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def _flag(value: Any, where: str, key: str) -> bool:
    """A 0/1 flag of a record (``iscrowd``, ``ignore``): 0, 1, False or True; anything else is refused
    (pycocotools reads ``iscrowd`` both as a truth value and as ``int()``, which disagree on ``"0"``)."""
    if isinstance(value, (bool, np.bool_)) or (isinstance(value, (int, float, np.integer, np.floating))
                                                and value in (0, 1)):
        return bool(value)
    raise ValueError(f"{where}: {key!r} must be 0 or 1 (or false / true); got {_show(value)}")


ID_RANGE = (-2**63, 2**63 - 1)
"""Image, category and annotation ids are 64-bit integers (numpy's int64): the inclusive range."""
_ID_RULE = f"ids must be integers from {ID_RANGE[0]} to {ID_RANGE[1]} (64-bit); renumber"


def _in_id_range(value: Any) -> bool:
    return ID_RANGE[0] <= value <= ID_RANGE[1]  # False for NaN


def _number_id(value: Any, where: str, key: str) -> Any:
    """An ``image_id`` / ``category_id`` of a record: a number within :data:`ID_RANGE` (an id that
    matches none is not evaluated)."""
    original = value
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)) or (
            isinstance(value, (float, np.floating)) and not np.isfinite(value)):
        if isinstance(value, _HugeInt):
            value = int(ID_RANGE[1]) * 10  # an integer too long to convert: out of range, as it is shown
        else:
            raise ValueError(f"{where}: {key!r} must be an integer id; got {_show(value)}")
    if not _in_id_range(value):
        what = {"image_id": "images", "category_id": "categories"}.get(key, "records")
        raise ValueError(f"{where}: {key!r} {_show(original)} is out of range: {_ID_RULE} the {what}")
    if isinstance(value, (float, np.floating)) and not float(value).is_integer():
        raise ValueError(f"{where}: {key!r} must be an integer id; got {_show(original)}, which no id equals")
    return int(value)  # a float equal to an id is that id (pycocotools' dictionaries), as an integer: one
    # float in a column of int64 ids made numpy hold them all as floats, 2**60 + 1 then 2**60


def _area(value: Any, where: str) -> float:
    """A record's ``area``: a finite non-negative number."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)) \
            or not 0 <= value < np.inf:
        raise ValueError(f"{where}: 'area' must be a finite number >= 0 (pixels); got {_show(value)}")
    try:
        return float(value)
    except OverflowError:  # an integer beyond the range of a float
        raise ValueError(f"{where}: 'area' must be a finite number >= 0 (pixels); got {_show(value)}") from None


def _image_size(img: dict[str, Any], i: int) -> tuple[int, int]:
    """(height, width) of a ground-truth image, 0 when absent; refuses non-integers and negatives."""
    out = []
    for key in ("height", "width"):
        value = img.get(key, 0)
        if not _is_int(value) or value < 0:
            raise ValueError(f"ground truth image {i}: {key!r} must be an integer >= 0 (pixels); got {_show(value)}")
        out.append(int(value))
    return out[0], out[1]


def _ids(records: Any, what: str) -> list[int]:
    """The integer ``id`` of each record; refuses a missing, non-integer or repeated id."""
    if not isinstance(records, list):
        raise ValueError(f"ground truth: {what}s must be a list of objects with an integer 'id'")
    ids: list[int] = []
    first: dict[int, int] = {}
    for i, rec in enumerate(records):
        if not isinstance(rec, dict) or "id" not in rec:
            raise ValueError(f"ground truth {what} {i}: no 'id' (COCO {what}s need an integer 'id')")
        value = rec["id"]
        if not _is_int(value) and not isinstance(value, _HugeInt):
            raise ValueError(f"ground truth {what} {i}: 'id' must be an integer (as COCO defines it); got "
                             f"{_show(value)}")
        if isinstance(value, _HugeInt) or not _in_id_range(value):
            plural = "categories" if what == "category" else what + "s"
            raise ValueError(f"ground truth {what} {i}: 'id' {_show(value)} is out of range: {_ID_RULE} the {plural} "
                             "(and the records that refer to them)")
        value = int(value)
        if value in first:
            raise ValueError(f"ground truth {what}s {first[value]} and {i} have the same 'id' {value}; ids must be unique")
        first[value] = i
        ids.append(value)
    return ids


MAX_NAME_BYTES = 255


def _class_name(c: dict[str, Any], i: int) -> str:
    name = c.get("name", c["id"])
    if not isinstance(name, (str, int)) or isinstance(name, bool):
        raise ValueError(f"ground truth category {i}: 'name' must be a string; got {_show(name)}")
    name = str(name)
    if "\x00" in name:
        raise ValueError(f"ground truth category {i}: 'name' contains a NUL character; remove it")
    if len(name.encode("utf-8")) > MAX_NAME_BYTES:
        raise ValueError(f"ground truth category {i}: 'name' is {len(name.encode('utf-8'))} bytes long; "
                         f"class names must be at most {MAX_NAME_BYTES} bytes (UTF-8)")
    return name


def _check_sizes(boxes: np.ndarray, what: str, records: Any = None, source: str = "") -> None:
    """Refuse negative widths or heights (naming the first record); warn about zero ones (after ``source``)."""
    negative = (boxes[:, 2] < 0) | (boxes[:, 3] < 0)
    if negative.any():
        i = int(np.flatnonzero(negative)[0])
        shown = records[i]["bbox"] if records is not None else boxes[i].tolist()
        raise ValueError(f"{what} {i}: 'bbox' {_show(shown)} has a negative width or height; COCO boxes are "
                         "[x, y, width, height]")
    zero = (boxes[:, 2] == 0) | (boxes[:, 3] == 0)
    if zero.any():
        _warn(f"{int(zero.sum())} {what}s have a box of zero width or height (the first: {what} "
              f"{int(np.flatnonzero(zero)[0])}); their box IoU is 0 with everything", source)


def _annotation_ids(anns: list[dict[str, Any]], source: str = "") -> None:
    """Warn (after ``source``) when annotation ids are missing, not integers, 0 or repeated (pycocotools
    mishandles those); refuse an integer id beyond :data:`ID_RANGE`."""
    ids = [a.get("id") for a in anns]
    for i, v in enumerate(ids):
        if isinstance(v, _HugeInt) or (_is_int(v) and not _in_id_range(v)):
            raise ValueError(f"ground truth annotation {i}: 'id' {_show(v)} is out of range: {_ID_RULE} the "
                             "annotations")
    bad = sum(1 for v in ids if not _is_int(v))
    zero = sum(1 for v in ids if _is_int(v) and v == 0)
    good = [int(v) for v in ids if _is_int(v)]
    repeated = len(good) - len(set(good))
    problems = [f"{n} {text}" for n, text in ((bad, "missing or not an integer"), (zero, "equal to 0"),
                                              (repeated, "repeating an earlier id")) if n]
    if problems:
        _warn("ground truth annotation ids: " + ", ".join(problems) + "; precall evaluates every annotation "
              "as its own object (ids are not used), pycocotools would not (it treats id 0 as unmatched and "
              "keeps one annotation per id)", source)

@dataclass(frozen=True)
class DetectionSet:
    """Ground truths and detections of a set of images, as flat arrays.

    Boxes are ``[x, y, w, h]`` float64.  Ground truths: ``gt_image``,
    ``gt_class``, ``gt_box``, ``gt_area`` (the area used for area ranges),
    ``gt_crowd``, ``gt_ignore``.  Detections: ``dt_image``, ``dt_class``,
    ``dt_box``, ``dt_score``.  Rows keep the order of the input files (it
    decides ties).  ``images`` and ``classes`` list the evaluated ids, sorted;
    ``class_names`` maps a class id to its name.
    """

    images: np.ndarray
    classes: np.ndarray
    gt_image: np.ndarray
    gt_class: np.ndarray
    gt_box: np.ndarray
    gt_area: np.ndarray
    gt_crowd: np.ndarray
    gt_ignore: np.ndarray
    dt_image: np.ndarray
    dt_class: np.ndarray
    dt_box: np.ndarray
    dt_score: np.ndarray
    class_names: dict[Any, str] = field(default_factory=dict)
    dt_area: np.ndarray | None = None  # area for the area ranges (default w * h)
    gt_segm: list[Any] | None = None  # COCO segmentations, for iou_type="segm"
    dt_segm: list[Any] | None = None
    image_hw: dict[Any, tuple[int, int]] | None = None
    gt_keypoints: list[Any] | None = None  # COCO keypoints [x1, y1, v1, ...], for iou_type="keypoints"
    dt_keypoints: Any = None  # a list (None where absent), or an (n, 3k) array when read at once
    gt_num_keypoints: list[Any] | None = None
    _xyxy: tuple[np.ndarray, np.ndarray] | None = field(default=None, repr=False)  # boxes as read (VOC, text)
    # the masks already decoded (a ``_rle.Runs``, one mask per row), so that nothing is decoded twice
    gt_runs: Any = field(default=None, repr=False)
    dt_runs: Any = field(default=None, repr=False)
    # image id -> CrowdPose's ``crowdIndex``, when the ground truth's images have one (a CrowdPose set)
    crowd_index: dict[Any, Any] | None = field(default=None, repr=False)

    def select_images(self, images: Any) -> DetectionSet:
        """The same set restricted to some images (ids of :attr:`images`; unknown ids are refused)."""
        wanted = set(np.asarray(images, dtype=self.images.dtype).tolist())
        unknown = wanted - set(self.images.tolist())
        if unknown:
            raise ValueError(f"`images`: {sorted(unknown, key=str)[:5]} are not images of this set")
        g = np.flatnonzero([m in wanted for m in self.gt_image.tolist()])
        d = np.flatnonzero([m in wanted for m in self.dt_image.tolist()])
        return self._take(g, d, images=np.array(sorted(wanted), dtype=self.images.dtype))

    def _take(self, g: np.ndarray, d: np.ndarray, **changes: Any) -> DetectionSet:
        """The ground-truth rows ``g`` and detection rows ``d`` (index arrays, in that order)."""

        def rows(values: Any, keep: np.ndarray) -> Any:
            if values is None:
                return None
            if isinstance(values, list):
                return [values[i] for i in keep.tolist()]
            return values[keep]

        out = DetectionSet(
            images=self.images, classes=self.classes,
            gt_image=self.gt_image[g], gt_class=self.gt_class[g], gt_box=self.gt_box[g], gt_area=self.gt_area[g],
            gt_crowd=self.gt_crowd[g], gt_ignore=self.gt_ignore[g], dt_image=self.dt_image[d],
            dt_class=self.dt_class[d], dt_box=self.dt_box[d], dt_score=self.dt_score[d],
            class_names=self.class_names, dt_area=rows(self.dt_area, d), gt_segm=rows(self.gt_segm, g),
            dt_segm=rows(self.dt_segm, d), image_hw=self.image_hw, gt_keypoints=rows(self.gt_keypoints, g),
            dt_keypoints=rows(self.dt_keypoints, d), gt_num_keypoints=rows(self.gt_num_keypoints, g),
            _xyxy=None if self._xyxy is None else (self._xyxy[0][g], self._xyxy[1][d]),
            gt_runs=None if self.gt_runs is None else self.gt_runs.subset(g),
            dt_runs=None if self.dt_runs is None else self.dt_runs.subset(d), crowd_index=self.crowd_index,
        )
        if changes:
            import dataclasses

            out = dataclasses.replace(out, **changes)
        return out


KEPT_RUNS = 2**25
"""The most foreground runs of result masks that :func:`load_coco` keeps once decoded (uint32: at
most 256 MiB), so that the evaluation does not decode them again; beyond it they are decoded again
per chunk of the matching, and memory stays bounded by a chunk."""


_BOM = b"\xef\xbb\xbf"


def _regular(path: Any, where: str) -> None:
    """Refuse anything but a regular file before opening it (a FIFO would block the read forever)."""
    if not os.path.isfile(path):
        raise ValueError(f"{where}: " + ("not a regular file (a FIFO, device or folder); give a file"
                                         if os.path.exists(path) else "no such file"))


def _read_bytes(path: Any, where: str) -> bytes:
    _regular(path, where)
    try:
        with open(path, "rb") as fh:
            return fh.read()
    except OSError as exc:
        raise ValueError(f"{where}: cannot read: {exc.strerror or exc}") from None


def _position(data: bytes, offset: int) -> str:
    """``line L, column C`` (C in bytes, lines ended by ``\\n``, ``\\r\\n`` or ``\\r``) of byte ``offset``."""
    head = data[:offset].replace(b"\r\n", b"\n").replace(b"\r", b"\n")
    line, column = head.count(b"\n") + 1, len(head) - head.rfind(b"\n")
    return f"line {line}, column {column}"


def _utf8(data: bytes, where: str) -> str:
    """``data`` decoded as UTF-8, a BOM at the start skipped (as the CSV and JSON Lines readers do);
    anything else is refused naming the line, column and byte offset of the first bad byte."""
    start = len(_BOM) if data.startswith(_BOM) else 0
    try:
        return data[start:].decode("utf-8")
    except UnicodeDecodeError as exc:
        at = start + exc.start
        raise ValueError(f"{where}: {_position(data, at)} (byte offset {at}): not valid UTF-8 text (byte "
                         f"0x{data[at]:02x}); save the file as UTF-8") from None


def _read_text(path: str) -> str:
    """A text file as UTF-8 (a BOM allowed), its errors naming the file and the line."""
    return _utf8(_read_bytes(path, path), path)


def _lines(text: str) -> list[str]:
    """The lines of ``text`` ended by ``\\n``, ``\\r\\n`` or ``\\r`` (as files are read in text mode)."""
    return text.replace("\r\n", "\n").replace("\r", "\n").split("\n")


class _HugeInt(str):
    """A JSON integer of more digits than ``int`` converts (``sys.get_int_max_str_digits``): kept as
    its text, shown as what it is; every id, number or flag check refuses it."""

    def __repr__(self) -> str:
        return f"<an integer of {len(self.lstrip('-'))} digits>"


_INT_DIGITS = getattr(sys, "get_int_max_str_digits", lambda: 0)() or 1 << 62


def _json_int(text: str) -> Any:
    return int(text) if len(text) <= _INT_DIGITS else _HugeInt(text)


def _load_json(obj: Any, what: str) -> Any:
    """A JSON file (a path) parsed, or ``obj`` itself (parsed JSON).  The bytes are checked first: UTF-8
    (a BOM allowed) and nested at most :data:`~precall._core.jsonshape.MAX_JSON_DEPTH` levels (Python's
    parser recurses per level); integers too long to convert are kept as :class:`_HugeInt` (refused
    where they are used, naming the record)."""
    if not isinstance(obj, (str, os.PathLike)):
        return obj
    from .._core.jsonshape import MAX_JSON_DEPTH, json_depth

    where = f"{what} {os.fspath(obj)!r}"
    data = _read_bytes(obj, where)
    text = _utf8(data, where)
    depth = json_depth(data)
    del data
    if depth > MAX_JSON_DEPTH:
        raise ValueError(f"{where}: not usable JSON: nested too deeply (more than {MAX_JSON_DEPTH} levels of "
                         "arrays and objects; a COCO file has a few); check that it is the right file")
    try:
        try:
            return json.loads(text)
        except ValueError as exc:  # an integer of more digits than int converts
            if isinstance(exc, json.JSONDecodeError) or "digits" not in str(exc):
                raise
            return json.loads(text, parse_int=_json_int)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{where}: not valid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}") from None
    except RecursionError:  # not reached within MAX_JSON_DEPTH; kept for a caller deep in its own stack
        raise ValueError(f"{where}: not usable JSON: nested too deeply") from None


def _boxes(records: list[dict[str, Any]], what: str, rows: Any = None) -> np.ndarray:
    """The ``bbox`` of each record, checked; errors name ``rows[i]`` (default ``i``)."""
    boxes = np.zeros((len(records), 4))
    for i, r in enumerate(records):
        b = r.get("bbox")
        if not isinstance(b, (list, tuple)) or len(b) != 4 or not all(
                isinstance(v, (int, float)) and not isinstance(v, bool) for v in b):
            raise ValueError(f"{what} {i if rows is None else int(rows[i])}: 'bbox' must be [x, y, w, h] (numbers); "
                             f"got {_show(b)}")
        try:
            boxes[i] = b
        except OverflowError:  # an integer beyond the range of a float
            boxes[i] = np.inf
    if not np.isfinite(boxes).all():
        i = int(np.flatnonzero(~np.isfinite(boxes).all(axis=1))[0])
        raise ValueError(f"{what} {i if rows is None else int(rows[i])}: 'bbox' must be finite; got "
                         f"{_show(records[i]['bbox'])}")
    return boxes


def load_coco(gt: Any, results: Any) -> DetectionSet:
    """Read COCO ground truth and bbox results (paths, or already-parsed JSON).

    ``results`` is the COCO results format: a list of ``{"image_id",
    "category_id", "bbox", "score"}``, or a dict with an ``"annotations"`` list.
    Every result must name an image of the ground truth (as pycocotools
    requires); results of classes the ground truth does not have are kept but
    not evaluated.  Image, category and annotation ids (and a result's ``id``,
    when it has one) are integers within 64 bits (:data:`ID_RANGE`).  Errors and
    :class:`DetectionWarning` s name the file they are about (when given a path)
    and the record.
    """
    return _load_coco_named(gt, results, _source(gt), _source(results))


def _source(obj: Any) -> str:
    """What a message about ``obj`` starts with: its path and ``": "``, or nothing for parsed JSON."""
    return f"{os.fspath(obj)}: " if isinstance(obj, (str, os.PathLike)) else ""


def _load_coco_named(gt: Any, results: Any, gt_source: str, results_source: str) -> DetectionSet:
    """:func:`load_coco` whose errors and warnings about the ground truth start with ``gt_source``
    (a file name and ``": "``, or ``""``) and those about the results with ``results_source``: for
    callers that hand over JSON they read themselves (``evaluate_crowdpose``)."""
    try:
        return _load_coco(gt, results, gt_source, results_source)
    except ValueError as exc:
        message = str(exc)
        for source, prefix in ((gt_source, "ground truth"), (results_source, "results")):
            if source and message.startswith(prefix + " ") and source[:-2] not in message:
                message = source + message
        raise ValueError(message) from None


def _load_coco(gt: Any, results: Any, gt_source: str = "", results_source: str = "") -> DetectionSet:
    g = _load_json(gt, "ground truth")
    r = _load_json(results, "results")
    if not isinstance(g, dict) or "annotations" not in g or "images" not in g:
        raise ValueError("ground truth: a COCO dataset needs 'images' and 'annotations' lists")
    if isinstance(r, dict):
        r = r.get("annotations", None)
    if not isinstance(r, list):
        raise ValueError("results: a COCO results file is a list of detections (or a dict with 'annotations')")
    images = np.array(sorted(_ids(g["images"], "image")), dtype=np.int64)
    categories = g.get("categories") or []
    classes = np.array(sorted(_ids(categories, "category")), dtype=np.int64)
    names = {int(c["id"]): _class_name(c, i) for i, c in enumerate(categories)}
    anns = g["annotations"]
    if not isinstance(anns, list):
        raise ValueError("ground truth: 'annotations' must be a list")
    gt_image, gt_class = np.empty(len(anns), dtype=np.int64), np.empty(len(anns), dtype=np.int64)
    for i, a in enumerate(anns):
        if not isinstance(a, dict):
            raise ValueError(f"ground truth annotation {i}: not an object")
        for key in ("image_id", "category_id", "bbox"):
            if key not in a:
                raise ValueError(f"ground truth annotation {i}: no {key!r}")
        gt_image[i] = _number_id(a["image_id"], f"ground truth annotation {i}", "image_id")
        gt_class[i] = _number_id(a["category_id"], f"ground truth annotation {i}", "category_id")
    _annotation_ids(anns, gt_source)
    outside = int(np.count_nonzero(~np.isin(gt_image, images) | ~np.isin(gt_class, classes)))
    if outside:
        _warn(f"{outside} ground truth annotations name an image or category the ground truth does not list; "
              "they are not evaluated (as in pycocotools)", gt_source)
    gt_box = _boxes(anns, "ground truth annotation")
    _check_sizes(gt_box, "ground truth annotation", anns, gt_source)
    gt_area = np.array([_area(a["area"], f"ground truth annotation {i}") if "area" in a else float(b[2] * b[3])
                        for i, (a, b) in enumerate(zip(anns, gt_box))])
    gt_crowd = np.array([_flag(a.get("iscrowd", 0), f"ground truth annotation {i}", "iscrowd")
                         for i, a in enumerate(anns)], dtype=bool)
    gt_ignore = np.array([_flag(a.get("ignore", 0), f"ground truth annotation {i}", "ignore")
                          for i, a in enumerate(anns)], dtype=bool)
    image_set = set(images.tolist())
    image_hw = {img["id"]: _image_size(img, i) for i, img in enumerate(g["images"])}
    # pycocotools' loadRes: box results if the first has a box, else segmentation results
    # (area = mask area, box = the mask's extent when absent)
    kind = "bbox"
    if r and isinstance(r[0], dict) and r[0].get("bbox") in (None, []):
        kind = "keypoints" if "keypoints" in r[0] and "segmentation" not in r[0] else "segm"
    segm_results = kind == "segm"
    dt_image, dt_class = np.empty(len(r), dtype=np.int64), np.empty(len(r), dtype=np.int64)
    for i, d in enumerate(r):
        if not isinstance(d, dict):
            raise ValueError(f"results detection {i}: not an object")
        for key in ("image_id", "category_id", {"segm": "segmentation"}.get(kind, kind), "score"):
            if key not in d:
                raise ValueError(f"results detection {i}: no {key!r}")
        dt_image[i] = _number_id(d["image_id"], f"results detection {i}", "image_id")
        dt_class[i] = _number_id(d["category_id"], f"results detection {i}", "category_id")
        if isinstance(d.get("id"), _HugeInt) or (_is_int(d.get("id")) and not _in_id_range(d["id"])):  # not used
            raise ValueError(f"results detection {i}: 'id' {_show(d['id'])} is out of range: {_ID_RULE} the detections "
                             "or leave 'id' out (results are numbered as read)")
        if dt_image[i] not in image_set:
            raise ValueError(
                f"results detection {i}: image_id {_show(d['image_id'])} is not an image of the ground truth"
            )
    unlisted = int(np.count_nonzero(~np.isin(dt_class, classes)))
    if unlisted:  # never dropped unsaid: pycocotools evaluates the listed categories only
        _warn(f"{unlisted} results detection{'s name a category' if unlisted > 1 else ' names a category'} the "
              "ground truth does not list; not evaluated (as in pycocotools)", results_source)
    dt_area = None
    dt_runs = None
    if segm_results:
        from ._rle import Runs, decode_runs

        dt_area = np.zeros(len(r))
        mask_box = np.zeros((len(r), 4))  # pycocotools' loadRes: a result without 'bbox' gets its mask's
        kept: list[Any] | None = []  # the decoded runs, kept for the matching while they fit the budget
        n_kept = 0
        chunk = 2_000  # the runs of a chunk of masks at a time; no full-image mask is ever built
        for lo in range(0, len(r), chunk):
            part = r[lo:lo + chunk]
            sizes = [image_hw[i] for i in dt_image[lo:lo + len(part)].tolist()]
            try:
                runs = decode_runs([d["segmentation"] for d in part], sizes)
            except ValueError as exc:
                text = str(exc)
                index, _, rest = text[len("segmentation "):].partition(": ")
                where = lo + int(index.split("..")[0]) if index.split("..")[0].isdigit() else lo
                raise ValueError(f"results detection {where}: 'segmentation': {rest or text}") from None
            dt_area[lo:lo + len(part)] = runs.areas()
            if kept is not None:
                n_kept += runs.start.size
                kept = kept + [runs.compact()] if n_kept <= KEPT_RUNS else None
            mask_box[lo:lo + len(part)] = runs.boxes(np.array([hw[0] for hw in sizes], dtype=np.int64))
        dt_runs = Runs.concat(kept) if kept is not None else None
    dt_keypoints: Any = [d.get("keypoints") for d in r]
    whole = None
    if kind == "keypoints":
        whole = _keypoint_matrix(dt_keypoints, len(r))
    if whole is not None:  # pycocotools' loadRes: the box and area of the keypoints' extent, all records at once
        x, y = whole[:, 0::3], whole[:, 1::3]
        x0, x1, y0, y1 = x.min(axis=1), x.max(axis=1), y.min(axis=1), y.max(axis=1)
        dt_area = (x1 - x0) * (y1 - y0)
        kp_box = np.column_stack([x0, y0, x1 - x0, y1 - y0])
        dt_keypoints = whole  # read once: the matching takes the array
    elif kind == "keypoints":  # pycocotools' loadRes: the box and area of the keypoints' extent (all of them)
        r = list(r)
        dt_area = np.zeros(len(r))
        for i, d in enumerate(r):
            kp = _keypoint_array(d["keypoints"], f"results detection {i}")
            x, y = kp[0::3], kp[1::3]
            x0, x1, y0, y1 = np.min(x), np.max(x), np.min(y), np.max(y)
            dt_area[i] = (x1 - x0) * (y1 - y0)
            r[i] = dict(d, bbox=[float(x0), float(y0), float(x1 - x0), float(y1 - y0)])
    if segm_results:  # boxes given are read (and checked) as given, the others are the masks' extents
        dt_box = mask_box
        given = np.flatnonzero(["bbox" in d for d in r])
        if given.size:
            dt_box[given] = _boxes([r[i] for i in given.tolist()], "results detection", given)
    elif whole is not None:
        dt_box = kp_box
    else:
        dt_box = _boxes(r, "results detection")
    if kind == "bbox":  # segmentation results: the box is the mask's extent, zero when the mask is empty
        _check_sizes(dt_box, "results detection", r, results_source)
    dt_score = np.zeros(len(r))
    for i, d in enumerate(r):
        if isinstance(d["score"], bool) or not isinstance(d["score"], (int, float)):
            raise ValueError(f"results detection {i}: 'score' must be a number; got {_show(d['score'])}")
        try:
            dt_score[i] = d["score"]
        except OverflowError:  # an integer beyond the range of a float
            dt_score[i] = np.inf
    if not np.isfinite(dt_score).all():
        i = int(np.flatnonzero(~np.isfinite(dt_score))[0])
        raise ValueError(f"results detection {i}: 'score' must be finite; got {_show(r[i]['score'])}")
    return DetectionSet(
        images=images, classes=classes,
        gt_image=gt_image, gt_class=gt_class,
        gt_box=gt_box, gt_area=gt_area, gt_crowd=gt_crowd, gt_ignore=gt_ignore,
        dt_image=dt_image, dt_class=dt_class,
        dt_box=dt_box, dt_score=dt_score, class_names=names, dt_area=dt_area,
        gt_segm=[a.get("segmentation") for a in anns],
        dt_segm=[d.get("segmentation") for d in r], image_hw=image_hw,
        gt_keypoints=[a.get("keypoints") for a in anns], dt_keypoints=dt_keypoints,
        gt_num_keypoints=[a.get("num_keypoints") for a in anns], dt_runs=dt_runs,
        crowd_index={img["id"]: img["crowdIndex"] for img in g["images"] if "crowdIndex" in img} or None,
    )


def _keypoint_matrix(values: Any, n: int) -> np.ndarray | None:
    """``n`` records' keypoints as one (n, 3k) float64 array when every record has the same number of
    finite values (k >= 1); None otherwise (then each record is read, and refused, on its own)."""
    if isinstance(values, np.ndarray):
        return values if values.ndim == 2 and values.shape[0] == n else None
    if values is None or n == 0 or any(v is None for v in values):
        return None
    try:
        whole = np.array(values, dtype=np.float64)
    except (TypeError, ValueError):
        return None
    if whole.ndim != 2 or whole.shape[1] == 0 or whole.shape[1] % 3 or not np.isfinite(whole).all():
        return None
    return whole


def _keypoint_array(values: Any, where: str) -> np.ndarray:
    try:
        kp = np.asarray(values, dtype=np.float64).ravel()
    except (TypeError, ValueError):
        raise ValueError(f"{where}: 'keypoints' must be a list of numbers x1, y1, v1, x2, ...") from None
    if kp.size == 0 or kp.size % 3 or not np.isfinite(kp).all():
        raise ValueError(f"{where}: 'keypoints' must be finite numbers x1, y1, v1, x2, y2, v2, ... "
                         f"(a multiple of 3); got {kp.size} values")
    return kp



BOX_FORMATS = ("xyxy", "xywh", "cxcywh")


def _to_xyxy(boxes: np.ndarray, box_format: str) -> np.ndarray:
    if box_format == "xyxy":
        return boxes.copy()
    if box_format == "xywh":
        return np.column_stack([boxes[:, 0], boxes[:, 1], boxes[:, 0] + boxes[:, 2], boxes[:, 1] + boxes[:, 3]])
    cx, cy, w, h = boxes.T
    return np.column_stack([cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2])


def _xyxy_to_xywh(b: np.ndarray) -> np.ndarray:
    return np.column_stack([b[:, 0], b[:, 1], b[:, 2] - b[:, 0], b[:, 3] - b[:, 1]])


def _check_corners(b: Any, where: str, box_format: str) -> None:
    """Refuse a box whose corners are inverted (x2 < x1 or y2 < y1) once read in ``box_format``."""
    if b[2] < b[0] or b[3] < b[1]:
        hint = {"xyxy": "x1 y1 x2 y2 with x2 >= x1 and y2 >= y1", "xywh": "x y w h with w, h >= 0",
                "cxcywh": "cx cy w h with w, h >= 0"}[box_format]
        raise ValueError(f"{where}: the box reads as x1={b[0]:g} y1={b[1]:g} x2={b[2]:g} y2={b[3]:g} "
                         f"(x2 < x1 or y2 < y1): a box in {box_format!r} is {hint}; is --box-format / "
                         "`box_format` right?")


def _parse_lines(path: str, fields: int, what: str) -> list[tuple[int, list[str]]]:
    """Non-blank lines of ``path`` split on white space, each with ``fields`` fields."""
    out = []
    for line_no, line in enumerate(_lines(_read_text(path)), 1):
        parts = line.split()
        if not parts:
            continue
        if len(parts) != fields:
            raise ValueError(f"{path}: line {line_no}: expected {fields} fields ({what}); got {len(parts)}")
        out.append((line_no, parts))
    return out


def _numbers(path: str, line_no: int, texts: list[str], names: str) -> list[float]:
    try:
        values = [float(t) for t in texts]
    except ValueError:
        raise ValueError(f"{path}: line {line_no}: {names} must be numbers; got {' '.join(texts)!r}") from None
    if not all(np.isfinite(values)):
        raise ValueError(f"{path}: line {line_no}: {names} must be finite; got {' '.join(texts)!r}")
    return values


def _text_files(folder: str, what: str) -> list[str]:
    if not os.path.isdir(folder):
        raise ValueError(f"{what} {folder!r}: not a directory")
    return sorted(f for f in os.listdir(folder) if f.endswith(".txt"))


def _assemble(gts: list[tuple], dts: list[tuple], images: list[str], box_format: str) -> DetectionSet:
    """DetectionSet from (image, class, xyxy box, difficult) and (image, class, xyxy box, score) rows."""
    classes = sorted({g[1] for g in gts} | {d[1] for d in dts})
    gt_box = _xyxy_to_xywh(np.array([g[2] for g in gts], dtype=np.float64).reshape(-1, 4))
    dt_box = _xyxy_to_xywh(np.array([d[2] for d in dts], dtype=np.float64).reshape(-1, 4))
    return DetectionSet(
        images=np.array(sorted(set(images)), dtype=object), classes=np.array(classes, dtype=object),
        gt_image=np.array([g[0] for g in gts], dtype=object), gt_class=np.array([g[1] for g in gts], dtype=object),
        gt_box=gt_box, gt_area=gt_box[:, 2] * gt_box[:, 3], gt_crowd=np.zeros(len(gts), dtype=bool),
        gt_ignore=np.array([g[3] for g in gts], dtype=bool),
        dt_image=np.array([d[0] for d in dts], dtype=object), dt_class=np.array([d[1] for d in dts], dtype=object),
        dt_box=dt_box, dt_score=np.array([d[3] for d in dts], dtype=np.float64),
        class_names={c: str(c) for c in classes},
        # the corners as read: x + w need not give x2 back to the last bit
        _xyxy=(np.array([g[2] for g in gts], dtype=np.float64).reshape(-1, 4),
               np.array([d[2] for d in dts], dtype=np.float64).reshape(-1, 4)),
    )


def load_text(
    gt_dir: str,
    det_dir: str,
    *,
    box_format: str = "xywh",
    relative: bool = False,
    image_sizes: dict[str, tuple[float, float]] | None = None,
) -> DetectionSet:
    """Per-image text files: ground truths ``class x y w h`` (an optional sixth field
    ``difficult``), detections ``class score x y w h``; the image is the file name
    without ``.txt``.  ``box_format`` reads the four numbers as ``xywh``, ``xyxy``
    or ``cxcywh``; ``relative=True`` scales them by ``image_sizes[image] = (width,
    height)`` (YOLO-style files).  ``difficult`` is a number equal to 0 or 1 (``0``,
    ``1``, ``0.0``, ``1.0``) or ``false`` / ``true`` in any letter case.  A malformed
    line raises ``ValueError`` naming the file and the line (and the column)."""
    if box_format not in BOX_FORMATS:
        raise ValueError(f"`box_format` must be one of {BOX_FORMATS}; got {box_format!r}")
    if relative and image_sizes is None:
        raise ValueError("`relative=True` needs `image_sizes`: {image: (width, height)}")
    gts: list[tuple] = []
    dts: list[tuple] = []
    images: list[str] = []

    def box(path: str, image: str, line_no: int, texts: list[str]) -> list[float]:
        b = np.array(_numbers(path, line_no, texts, "the box coordinates"))
        if relative:
            if image not in image_sizes:  # type: ignore[operator]
                raise ValueError(f"{path}: image {image!r} has no entry in `image_sizes`")
            w, h = image_sizes[image]  # type: ignore[index]
            b = b * [w, h, w, h]
        out = _to_xyxy(b[None, :], box_format)[0].tolist()
        _check_corners(out, f"{path}: line {line_no}", box_format)
        return out

    for name in _text_files(gt_dir, "gt_dir"):
        path, image = os.path.join(gt_dir, name), name[:-4]
        images.append(image)
        lines = [(i, ln.split()) for i, ln in enumerate(_lines(_read_text(path)), 1) if ln.split()]
        for line_no, parts in lines:
            if len(parts) not in (5, 6):
                raise ValueError(f"{path}: line {line_no}: expected 'class x y w h [difficult]'; got {len(parts)} fields")
            difficult = len(parts) == 6 and _difficult(parts[5], f"{path}: line {line_no}, column 6")
            gts.append((image, parts[0], box(path, image, line_no, parts[1:5]), difficult))
    for name in _text_files(det_dir, "det_dir"):
        path, image = os.path.join(det_dir, name), name[:-4]
        images.append(image)
        for line_no, parts in _parse_lines(path, 6, "class score x y w h"):
            score = _numbers(path, line_no, parts[1:2], "the score")[0]
            dts.append((image, parts[0], box(path, image, line_no, parts[2:6]), score))
    return _assemble(gts, dts, images, box_format)


def _read_xml(path: str) -> tuple[Any, dict[Any, int]]:
    """The root element of an XML file and the line where each element starts.

    Parsed by expat (as :func:`xml.etree.ElementTree.parse`), building the same elements, with the
    line of each; a document type with entity declarations is refused (a VOC annotation has none;
    no entity is ever expanded or fetched)."""
    import xml.etree.ElementTree as ET
    from xml.parsers import expat

    builder = ET.TreeBuilder()
    parser = expat.ParserCreate()
    line: dict[Any, int] = {}

    def start(tag: str, attrs: dict[str, str]) -> None:
        line[builder.start(tag, attrs)] = parser.CurrentLineNumber

    def entity(*_: Any) -> None:
        raise ValueError(f"{path}: line {parser.CurrentLineNumber}: an entity declaration; VOC annotations have "
                         "none (entities are not expanded): remove the <!DOCTYPE ...> part")

    parser.StartElementHandler = start
    parser.EndElementHandler = builder.end
    parser.CharacterDataHandler = builder.data
    parser.EntityDeclHandler = entity
    parser.buffer_text = True
    _regular(path, path)
    try:
        with open(path, "rb") as fh:
            parser.ParseFile(fh)
    except expat.ExpatError as exc:
        raise ValueError(f"{path}: line {exc.lineno}: malformed XML: {expat.ErrorString(exc.code)}: line "
                         f"{exc.lineno}, column {exc.offset}") from None  # as ElementTree says it
    except OSError as exc:
        raise ValueError(f"{path}: cannot read: {exc.strerror or exc}") from None
    return builder.close(), line


def _difficult(text: str, where: str) -> bool:
    """A ``difficult`` flag as written: 0 or 1 (any number equal to them, e.g. ``0.0``, ``1.0``) or
    false / true (any letter case); anything else is refused (it was read as difficult before)."""
    if text.lower() in ("true", "false"):
        return text.lower() == "true"
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if value in (0.0, 1.0):
        return value == 1.0
    raise ValueError(f"{where}: 'difficult' must be 0 or 1 (or false / true); got {text!r:.80}")


_PATTERN_RULE = ("a per-class pattern holds exactly one {} (replaced by each class name) and no other field; "
                 "write a literal { or } as {{ or }}")


def _class_pattern(detections: str) -> str | None:
    """The folder part of a per-class detection pattern (the text before ``{}`` up to its last
    separator), or None when ``detections`` is a directory; a pattern with anything but exactly one
    ``{}`` is refused naming the argument."""
    import string

    if ("{" not in detections and "}" not in detections) or os.path.isdir(detections):
        return None
    try:
        parts = list(string.Formatter().parse(detections))
    except ValueError as exc:  # a single { or }
        raise ValueError(f"`detections` pattern {detections!r} is not a valid pattern ({exc}); "
                         f"{_PATTERN_RULE}") from None
    fields = [("{" + (name or "") + ("!" + conv if conv else "") + (":" + spec if spec else "") + "}")
              for _, name, spec, conv in parts if name is not None]
    if fields != ["{}"]:
        shown = ", ".join(fields) if fields else "none"
        raise ValueError(f"`detections` pattern {detections!r} has the fields {shown}; {_PATTERN_RULE}")
    prefix = ""
    for literal, name, _, _ in parts:
        prefix += literal
        if name is not None:
            break
    return os.path.dirname(prefix)


def _confined(cls: str, folder: str) -> str | None:
    """Why the class name ``cls`` put in a pattern whose folder is ``folder`` could name a file
    outside it (a separator, ``.`` or ``..``, a drive or absolute path, NUL), or None."""
    seps = {"/", "\\", os.sep} | ({os.altsep} if os.altsep else set())
    if "\x00" in cls:
        return "a NUL character"
    if any(sep in cls for sep in seps):
        return "a path separator"
    if cls in (".", ".."):
        return f"the folder name {cls!r}"
    if os.path.isabs(cls) or os.path.splitdrive(cls)[0]:
        return "an absolute path"
    return None


def load_voc(annotations_dir: str, detections: str, *, box_format: str = "xyxy") -> DetectionSet:
    """PASCAL VOC XML annotations (``difficult`` honoured: 0 or 1, or false / true as in
    :func:`load_text`; absent or empty: 0) and detections.  Errors name the file and the
    line of the element at fault.

    ``detections`` is either a Detectron-style per-class file pattern containing
    ``{}`` (formatted with each class name; lines ``image_id score x1 y1 x2 y2``),
    or a directory of per-image text files ``class score x y w h`` read in
    ``box_format``.  The image is the XML file name without ``.xml``.
    """
    if not os.path.isdir(annotations_dir):
        raise ValueError(f"annotations_dir {annotations_dir!r}: not a directory")
    folder = _class_pattern(detections)  # checked before any file is read
    gts: list[tuple] = []
    images: list[str] = []
    first_seen: dict[str, str] = {}  # class -> "file: line N" of its first object
    for name in sorted(f for f in os.listdir(annotations_dir) if f.endswith(".xml")):
        path, image = os.path.join(annotations_dir, name), name[:-4]
        images.append(image)
        root, line = _read_xml(path)
        for obj in root.iter("object"):
            cls = (obj.findtext("name") or "").strip()
            bb = obj.find("bndbox")
            if not cls or bb is None:
                raise ValueError(f"{path}: line {line[obj]}: an <object> without <name> or <bndbox>")
            coords = []
            for key in ("xmin", "ymin", "xmax", "ymax"):
                node = bb.find(key)
                if node is None:
                    raise ValueError(f"{path}: line {line[bb]}: the <bndbox> of object {cls!r} has no <{key}>")
                text = (node.text or "").strip()
                try:
                    value = float(text)
                except ValueError:
                    value = float("nan")
                if not np.isfinite(value):
                    raise ValueError(f"{path}: line {line[node]}: <{key}> of object {cls!r} must be a finite "
                                     f"number (pixels); got {text!r:.80}")
                coords.append(value)
            _check_corners(coords, f"{path}: line {line[bb]}: object {cls!r}", "xyxy")
            node = obj.find("difficult")
            difficult = node is not None and _difficult((node.text or "").strip() or "0",
                                                        f"{path}: line {line[node]}: <difficult>")
            gts.append((image, cls, coords, difficult))
            first_seen.setdefault(cls, f"{path}: line {line[obj]}")
    dts: list[tuple] = []
    where: list[str] = []  # each detection's file and line (where its image is named)
    if folder is not None:
        for cls in sorted({g[1] for g in gts}):
            path = detections.format(cls)
            reason = _confined(cls, folder)
            rel = os.path.relpath(os.path.normpath(path), folder or os.curdir)
            if reason is None and (rel == os.pardir or rel.startswith(os.pardir + os.sep)):
                reason = "a path outside the folder"  # cannot happen after the checks above; kept as a guard
            if reason is not None:
                raise ValueError(f"{first_seen[cls]}: class {cls!r} cannot name a file of the pattern {detections!r} "
                                 f"({reason}: {path!r} could lie outside the pattern's folder); class names in a "
                                 "per-class pattern must be plain file-name parts (no '/', '\\', '.', '..', NUL): "
                                 "rename the class, or give a directory of per-image detection files")
            if not os.path.exists(path):
                continue
            for line_no, parts in _parse_lines(path, 6, "image_id score x1 y1 x2 y2"):
                values = _numbers(path, line_no, parts[1:], "the score and box")
                _check_corners(values[1:], f"{path}: line {line_no}", "xyxy")
                dts.append((parts[0], cls, values[1:], values[0]))
                where.append(f"{path}: line {line_no}, column 1")
    else:
        if box_format not in BOX_FORMATS:
            raise ValueError(f"`box_format` must be one of {BOX_FORMATS}; got {box_format!r}")
        for name in _text_files(detections, "detections"):
            path, image = os.path.join(detections, name), name[:-4]
            for line_no, parts in _parse_lines(path, 6, "class score x y w h"):
                values = _numbers(path, line_no, parts[1:], "the score and box")
                corners = _to_xyxy(np.array([values[1:]]), box_format)[0].tolist()
                _check_corners(corners, f"{path}: line {line_no}", box_format)
                dts.append((image, parts[0], corners, values[0]))
                where.append(f"{path}: line {line_no}")  # the image: the file's name
    known = set(images)
    for d, at in zip(dts, where):
        if d[0] not in known:
            raise ValueError(f"{at}: detection on image {d[0]!r}, which has no annotation file in "
                             f"{annotations_dir!r} (no {d[0] + '.xml'!r}): remove the detection or add the annotation")
    return _assemble(gts, dts, images, box_format)
