"""Why is mAP low: a TIDE-style error breakdown (Bolya et al., ECCV 2020) on precall's own matching.

Every false positive at an IoU threshold ``t`` (a detection neither matched nor ignored by
pycocotools' matching, :mod:`~precall.detection.coco`) gets one error type, tested in ``tidecv``'s
order, with ``b`` the background threshold (default 0.1) and IoUs against the image's non-ignored
ground truths (not crowd, not flagged ``ignore``):

1. ``background`` when the image has no ground truth;
2. ``localisation``: the best same-class IoU (first of equal ones) is in ``[b, t]``;
3. ``classification``: the best IoU with another class's ground truth is ``>= t``;
4. ``duplicate``: a same-class ground truth already matched at ``t`` has IoU ``>= t``;
5. ``background``: the best IoU with any ground truth is ``<= b``;
6. ``both`` otherwise (tidecv's ``OtherError``, "Both" in its table).

A ground truth left unmatched is ``missed`` unless a localisation or classification error
points at it.  Each type is *fixed* by an oracle and the mAP recomputed (COCO's 101-point AP, by
the core's ``coco`` convention); ``delta`` is the gain (never below 0, as tidecv):
localisation / classification errors become true positives of the ground truth's class (only the
highest-scoring such error per ground truth; the others are removed), duplicate, both and
background errors are removed, missed ground truths are removed from the count.  The special
errors: ``false positives`` (every true positive ranked above every false positive) and ``false
negatives`` (the unmatched ground truths removed from the count); their gains may be of either sign.

Undefined numbers: without a class with ground truth (an empty ground truth, or none in the
``all`` area range) the mAP is undefined, and so is every gain: all are -1, pycocotools'
convention as :func:`~precall.detection.evaluate_coco`'s, with the same warning.  A fix that leaves
no class to average (e.g. the false-negative fix when no class has a true positive nor a
detection) gains 0: the mean it leaves is never subtracted as the number -1 (tidecv: its mean is
then over the classes with detections only, each AP 0, so its gain is 0 too).

tidecv evaluates one threshold (0.5); here every IoU threshold of the evaluation is broken down
and the means over thresholds explain mAP@[.5:.95].  The matching and the AP take
:func:`~precall.detection.evaluate_coco`'s options (``ties``, ``use_cats``, the ``all`` area range,
``max_dets``), so the breakdown's AP is the evaluation's under any of them.

Equal to ``tidecv`` on its default settings (tested) where the two protocols agree; where they
differ precall keeps pycocotools' rules:

* at most ``max_dets`` detections per image *and class* (tidecv: per image);
* a detection matched to a crowd (or ``ignore``) ground truth is ignored and is no error (tidecv
  ignores it for AP but still counts and may fix it);
* among equal IoUs the later ground truth is matched (pycocotools; tidecv: the first);
* classes without ground truth are left out of the mean (tidecv counts them as AP 0);
* equal scores keep precall's order (image, then rank), where tidecv's order changes with each fix
  (``ties="group"``: they are one step of each AP).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .._core.conventions import grid_precisions
from .._core.steps import steps_from_counts
from .._core.undefined import UndefinedMetricWarning
from .._core.validate import check_number
from ._match import _content_keys, _Groups, _iou, _match, _segm_ious
from .coco import NO_GROUND_TRUTH, _mean_valid, _pooled_classes, check_coco_options
from .io import DetectionSet

__all__ = ["ERROR_TYPES", "SPECIAL_ERROR_TYPES", "ErrorBreakdown", "error_breakdown"]

#: the six main error types, in tidecv's table order (its short names Cls, Loc, Both, Dupe, Bkg, Miss)
ERROR_TYPES: tuple[str, ...] = ("classification", "localisation", "both", "duplicate", "background", "missed")
#: the two special error types (tidecv's FalsePos, FalseNeg)
SPECIAL_ERROR_TYPES: tuple[str, ...] = ("false positives", "false negatives")
_SHORT = {"classification": "Cls", "localisation": "Loc", "both": "Both", "duplicate": "Dupe", "background": "Bkg",
          "missed": "Miss", "false positives": "FP", "false negatives": "FN"}
_CLS, _LOC, _BOTH, _DUP, _BKG = range(5)


@dataclass(frozen=True)
class ErrorBreakdown:
    """The error breakdown of a COCO evaluation at each IoU threshold.

    Attributes
    ----------
    iou_thresholds : ndarray of shape (T,)
    ap : ndarray of shape (T,)
        mAP at each threshold (COCO's AP, all areas; equal to the evaluation's; -1 without a class
        with ground truth).
    delta : dict of str to ndarray of shape (T,)
        For each of :data:`ERROR_TYPES` and :data:`SPECIAL_ERROR_TYPES`: the mAP gained by fixing
        errors of that type alone (-1 where the mAP is -1; 0 where the fix leaves no class).
    counts : dict of str to ndarray of shape (T,)
        The number of errors of each main type.
    n_fp, n_fn : ndarray of shape (T,)
        False positives (counted detections not matched) and false negatives (ground truths not
        matched) at each threshold.
    background_threshold : float
    """

    iou_thresholds: np.ndarray
    ap: np.ndarray
    delta: dict[str, np.ndarray]
    counts: dict[str, np.ndarray]
    n_fp: np.ndarray
    n_fn: np.ndarray
    background_threshold: float
    # (T, R, K) interpolated precision of the evaluation (-1: class left out): mAP@[.5:.95] summed as
    # pycocotools sums it, the same bits as CocoEvaluation.stats[0]
    _precision: np.ndarray | None = field(default=None, repr=False, compare=False)

    def at(self, iou_threshold: float | None = None) -> dict[str, float]:
        """``{"AP": ..., error type: delta AP, ...}`` at one threshold, or (None) the means over the
        thresholds (``"AP"``: mAP@[.5:.95] as pycocotools sums it, to the bit)."""
        if iou_threshold is None:
            pick = np.arange(self.iou_thresholds.size)
        else:
            pick = np.flatnonzero(np.isclose(self.iou_thresholds, iou_threshold))
            if pick.size == 0:
                raise ValueError(f"`iou_threshold` must be one of {self.iou_thresholds.tolist()}; got {iou_threshold!r}")
        if self._precision is not None:
            out = {"AP": _mean_valid(self._precision[pick])}
        else:
            out = {"AP": float(self.ap[pick].mean())}
        out.update({k: float(v[pick].mean()) for k, v in self.delta.items()})
        return out

    def rows(self) -> list[list[str]]:
        """Table rows: one per threshold, then the mean (``0.50:0.95``): AP, the eight delta APs (x100,
        tidecv's unit; ``-1`` where undefined, no class with ground truth), #FP, #FN."""
        names = (*ERROR_TYPES, *SPECIAL_ERROR_TYPES)

        def points(values: list[float], undefined: bool) -> list[str]:
            return ["-1" if undefined else f"{100 * v:.2f}" for v in values]

        out = []
        for t, iou in enumerate(self.iou_thresholds.tolist()):
            out.append([f"{iou:.2f}", *points([self.ap[t], *(self.delta[k][t] for k in names)], self.ap[t] == -1),
                        str(int(self.n_fp[t])), str(int(self.n_fn[t]))])
        if self.iou_thresholds.size > 1:
            mean = self.at(None)
            lo, hi = self.iou_thresholds[0], self.iou_thresholds[-1]
            out.append([f"{lo:.2f}:{hi:.2f}", *points([mean["AP"], *(mean[k] for k in names)], mean["AP"] == -1),
                        "", ""])
        return out

    @staticmethod
    def header() -> list[str]:
        return ["IoU", "AP", *(_SHORT[k] for k in (*ERROR_TYPES, *SPECIAL_ERROR_TYPES)), "#FP", "#FN"]


def _class_aps(cls: np.ndarray, key: tuple[np.ndarray, ...], tp: np.ndarray, n_gt: np.ndarray,
               recall_thresholds: np.ndarray, listed: np.ndarray,
               step_keys: tuple[np.ndarray, ...] = ()) -> np.ndarray:
    """(R, K) COCO interpolated precision per recall threshold and class of detections with classes
    ``cls``, ranked by ``key`` (lexsort keys, last primary) within each class, true positive or not
    (a class's AP is the mean of its column): -1 for the classes not ``listed`` (no ground truth in
    the evaluation); a listed class whose fix removed every ground truth scores 0 while it has
    detections and -1 without (tidecv's ``get_ap`` and ``is_empty``).  ``step_keys``: none, a step per
    detection (``ties="stable"``); else arrays whose equal values in consecutive ranks of a class make
    one step (``ties="group"``: the score, so equal scores are one step, as :func:`evaluate_coco`)."""
    K = n_gt.size
    order = np.lexsort((*key, cls))
    c, t = cls[order], tp[order]
    bounds = np.searchsorted(c, np.arange(K + 1))
    if step_keys:  # a new step where the class or any of the step keys changes
        first = np.ones(c.size, dtype=bool)
        if c.size:
            same = c[1:] == c[:-1]
            for values in step_keys:
                v = values[order]
                same &= v[1:] == v[:-1]
            first[1:] = ~same
        starts = np.flatnonzero(first)  # (runs,): the first rank of each step
        step_cls = c[starts]
        t_pos = np.add.reduceat(t.astype(np.float64), starts) if starts.size else np.zeros(0)
        t_neg = np.add.reduceat((~t).astype(np.float64), starts) if starts.size else np.zeros(0)
        bounds = np.searchsorted(step_cls, np.arange(K + 1))
    else:
        t_pos, t_neg = t.astype(np.float64), (~t).astype(np.float64)
    valid = np.flatnonzero((n_gt > 0) & listed)
    out = -np.ones((recall_thresholds.size, K))
    out[:, listed & (n_gt <= 0) & (np.diff(bounds) > 0)] = 0.0
    if valid.size == 0:
        return out
    width = max(int(np.diff(bounds)[valid].max()), 1)
    pos = np.zeros((valid.size, width))
    neg = np.zeros_like(pos)
    for j, k in enumerate(valid.tolist()):
        size = bounds[k + 1] - bounds[k]
        pos[j, :size], neg[j, :size] = t_pos[bounds[k]:bounds[k + 1]], t_neg[bounds[k]:bounds[k + 1]]
    steps = steps_from_counts(pos, neg, n_gt[valid].astype(np.float64))
    out[:, valid] = grid_precisions(steps, "coco", thresholds=recall_thresholds).T
    return out


def _mean_ap(precision: np.ndarray) -> float:
    """mAP of an (R, K) block of :func:`_class_aps`, summed as pycocotools' ``summarize`` (-1: no class)."""
    return _mean_valid(precision)


def _gain(fixed: float, base: float) -> float:
    """The mAP gained by a fix, ``fixed - base``: -1 (undefined) when ``base`` is (no class with ground
    truth); 0 when ``fixed`` is (the fix leaves no class to average: nothing gained, as tidecv)."""
    if base == -1:
        return -1.0
    return 0.0 if fixed == -1 else fixed - base


def _image_ious(data: DetectionSet, iou_type: str, d_rows: np.ndarray, g_rows: np.ndarray) -> np.ndarray:
    """(D, G) IoU of detections and ground truths of one image, every class (ground truths not crowd)."""
    if iou_type == "segm":
        grp = _Groups(np.zeros(1, np.int64), np.zeros(1, np.int64), d_rows[None, :], g_rows[None, :])
        return _segm_ious(data, grp)[0]
    return _iou(data.dt_box[d_rows], data.gt_box[g_rows], np.zeros(g_rows.size, dtype=bool))


def error_breakdown(
    data: DetectionSet,
    *,
    iou_type: str = "bbox",
    iou_thresholds: Any = None,
    max_dets: int | tuple[int, ...] = 100,
    area_ranges: dict[str, tuple[float, float]] | None = None,
    ties: str = "stable",
    use_cats: bool = True,
    background_threshold: float = 0.1,
    recall_thresholds: Any = None,
) -> ErrorBreakdown:
    """TIDE's error breakdown (tidecv) on pycocotools' matching, at every IoU threshold.

    The matching and the AP are :func:`~precall.detection.evaluate_coco`'s with the same options
    (``iou_thresholds``, ``max_dets``, ``area_ranges``, ``ties``, ``use_cats``, ``recall_thresholds``),
    so that ``error_breakdown(data, **options).at(None)["AP"]`` is ``evaluate_coco(data,
    **options).stats[0]`` and ``.at(0.5)["AP"]`` its ``stats[1]``, to the bit.

    Parameters
    ----------
    data : DetectionSet
        From :func:`~precall.detection.load_coco`.
    iou_type : {"bbox", "segm"}, default="bbox"
    iou_thresholds : array-like, default=None
        Default COCO's 0.50:0.05:0.95; ``[0.5]`` is tidecv's default run.
    max_dets : int or tuple of int, default=100
        Detections kept per image and class; a tuple (:func:`~precall.detection.evaluate_coco`'s
        ``max_dets``): its largest value.
    area_ranges : dict of name to (low, high), default=None
        As :func:`~precall.detection.evaluate_coco`'s (default pycocotools' ranges): the breakdown is
        of the range named ``"all"`` (a ``ValueError`` without one): ground truths outside it are
        ignored, and so are unmatched detections outside it.
    ties : {"stable", "group"}, default="stable"
        As :func:`~precall.detection.evaluate_coco`: ``"stable"`` pycocotools' order; ``"group"``:
        equal scores are one step of each AP (the original's and every fixed one's), and detections
        and ground truths are matched in the order of their content (the breakdown does not depend on
        the order of either file).
    use_cats : bool, default=True
        ``False``: class-agnostic, as :func:`~precall.detection.evaluate_coco` (pycocotools'
        ``useCats=0``): every category pooled as one class, so no false positive is a classification
        error.
    background_threshold : float, default=0.1
        Below it (inclusive) a false positive overlaps nothing: a background error.
    recall_thresholds : array-like, default=None
        pycocotools' ``np.linspace(0, 1, 101)`` by default; tidecv uses ``[i / 100 for i in range(101)]``,
        which differs in the last bit at 10 of the 101 points (pass it to reproduce tidecv where a recall
        falls exactly on one of them, as after the false-negative fix).

    Returns
    -------
    ErrorBreakdown

    Examples
    --------
    >>> from precall import detection
    >>> gt = {"images": [{"id": 1}], "categories": [{"id": 1, "name": "a"}, {"id": 2, "name": "b"}],
    ...       "annotations": [{"id": 1, "image_id": 1, "category_id": 1, "bbox": [0, 0, 10, 10], "area": 100},
    ...                       {"id": 2, "image_id": 1, "category_id": 2, "bbox": [50, 50, 10, 10], "area": 100}]}
    >>> res = [{"image_id": 1, "category_id": 1, "bbox": [0, 0, 10, 10], "score": 0.9},
    ...        {"image_id": 1, "category_id": 1, "bbox": [50, 50, 10, 10], "score": 0.8}]
    >>> eb = detection.error_breakdown(detection.load_coco(gt, res), iou_thresholds=[0.5])
    >>> eb.counts["classification"].tolist(), eb.counts["missed"].tolist()
    ([1], [0])
    >>> round(eb.at(0.5)["classification"], 3)
    0.5
    """
    if iou_type not in ("bbox", "segm"):
        raise ValueError(f"`iou_type` must be 'bbox' or 'segm' (the error types are of boxes and masks); got "
                         f"{iou_type!r}")
    if np.ndim(max_dets) == 0:
        max_dets = (check_number(max_dets, "max_dets", low=1, high=10**9, integer=True,
                                 hint="detections kept per image and class, e.g. 100"),)
    opts = check_coco_options(iou_thresholds=iou_thresholds, max_dets=max_dets, iou_type=iou_type,
                              recall_thresholds=recall_thresholds, area_ranges=area_ranges, ties=ties,
                              use_cats=use_cats)
    if "all" not in opts["area_ranges"]:
        raise ValueError(f"`area_ranges` must have a range named 'all' (the error breakdown is of it, as the "
                         f"first summary number); got {list(opts['area_ranges'])}")
    bg = check_number(background_threshold, "background_threshold", low=0, high=1,
                      hint="an IoU, e.g. 0.1 (tidecv's default)")
    if iou_type == "segm" and (data.gt_segm is None or data.dt_segm is None or data.image_hw is None):
        raise ValueError("iou_type='segm' needs segmentations: load the data with load_coco")
    thresholds, recall_thresholds = opts["iou_thresholds"], opts["recall_thresholds"]
    if (thresholds <= bg).any():
        raise ValueError(f"`background_threshold` must be below every IoU threshold; got {bg} with "
                         f"`iou_thresholds` {thresholds.tolist()}")
    if not use_cats:  # the pooled data of evaluate_coco(use_cats=False): one class, pycocotools' order
        data = _pooled_classes(data)
    lo, hi = opts["area_ranges"]["all"]
    m = _match(data, thresholds, [(lo, hi)], opts["max_dets"][-1], ties, None, iou_type, None, with_gt=True)
    T, K, N = thresholds.size, data.classes.size, m.score.size
    tp, ignored, gt_of = m.tp[0], m.ignored[0], m.gt_row[0]  # (T, N)
    n_gt = np.bincount(m.group_cls, weights=m.group_n_gt[0], minlength=K).astype(np.int64)
    listed = n_gt > 0  # the classes of the mean (pycocotools: those with ground truth)
    # the evaluated ground truths: listed images and classes, not crowd, not ignore, area in "all"
    cls_index = {c: k for k, c in enumerate(data.classes.tolist())}
    img_index = {c: i for i, c in enumerate(data.images.tolist())}
    g_cls = np.array([cls_index.get(c, -1) for c in data.gt_class.tolist()], dtype=np.int64)
    g_img = np.array([img_index.get(c, -1) for c in data.gt_image.tolist()], dtype=np.int64)
    g_cls_at = np.r_[g_cls, -1]  # the class of a ground-truth row, -1 of none (target -1; no ground truth)
    g_valid = ((g_cls >= 0) & (g_img >= 0) & ~data.gt_crowd & ~data.gt_ignore
               & (data.gt_area >= lo) & (data.gt_area <= hi))
    g_rows = np.flatnonzero(g_valid)
    if ties == "stable":  # input order within an image: the first of equal IoUs is the first given
        g_rows = g_rows[np.argsort(g_img[g_rows], kind="stable")]
    else:  # the order of their content (as the matching's): the first of equal IoUs whatever the file order
        g_keys = (*_content_keys(data, "gt", g_rows), *(data.gt_box[g_rows, i] for i in (3, 2, 1, 0)),
                  data.gt_area[g_rows])
        g_rows = g_rows[np.lexsort((*g_keys, g_cls[g_rows], g_img[g_rows]))]
    g_bounds = np.searchsorted(g_img[g_rows], np.arange(data.images.size + 1))
    used = np.zeros((T, data.gt_box.shape[0] + 1), dtype=bool)  # the extra column: -1 (unmatched)
    t_idx, n_idx = np.nonzero(tp)
    used[t_idx, gt_of[t_idx, n_idx]] = True
    used = used[:, :-1]
    # per detection: best same-class IoU (and its ground truth), best other-class IoU (and its), best
    # IoU with any ground truth, best IoU with a same-class ground truth matched at each threshold
    same_iou, other_iou, any_iou = np.zeros(N), np.zeros(N), np.zeros(N)
    same_gt, other_gt = np.full(N, -1), np.full(N, -1)
    dup_iou = np.zeros((T, N))
    has_gt = np.zeros(N, dtype=bool)
    det_order = np.lexsort((m.rank, m.cls, m.image))
    d_bounds = np.searchsorted(m.image[det_order], np.arange(data.images.size + 1))
    for i in range(data.images.size):
        dets = det_order[d_bounds[i]:d_bounds[i + 1]]
        gts = g_rows[g_bounds[i]:g_bounds[i + 1]]
        if dets.size == 0 or gts.size == 0:
            continue
        has_gt[dets] = True
        iou = _image_ious(data, iou_type, m.dt_row[dets], gts)  # (D, G)
        same = m.cls[dets][:, None] == g_cls[gts][None, :]
        s, o = np.where(same, iou, 0.0), np.where(same, 0.0, iou)
        j = s.argmax(axis=1)
        same_iou[dets], same_gt[dets] = s[np.arange(dets.size), j], gts[j]
        j = o.argmax(axis=1)
        other_iou[dets], other_gt[dets] = o[np.arange(dets.size), j], gts[j]
        any_iou[dets] = iou.max(axis=1)
        dup_iou[:, dets] = np.where(used[:, gts][:, None, :], s[None], 0.0).max(axis=2)
    # precall's order of the merged ranking: decreasing score, image, rank (also the order errors are met)
    key = (m.rank, m.image, -m.score)
    meet = np.lexsort((m.rank, -m.score, m.image))  # tidecv meets the errors image by image, by score
    ap = np.zeros(T)
    delta = {k: np.zeros(T) for k in (*ERROR_TYPES, *SPECIAL_ERROR_TYPES)}
    counts = {k: np.zeros(T, dtype=np.int64) for k in ERROR_TYPES}
    n_fp, n_fn = np.zeros(T, dtype=np.int64), np.zeros(T, dtype=np.int64)
    precision = np.zeros((T, recall_thresholds.size, K))
    group = ties == "group"

    def aps(rows: np.ndarray, cls: np.ndarray, positive: np.ndarray, n: np.ndarray,
            order: tuple[np.ndarray, ...] = key, step_keys: tuple[np.ndarray, ...] = (m.score,)) -> np.ndarray:
        """:func:`_class_aps` of the detections ``rows`` (a mask) of classes ``cls``, true positives
        ``positive``, ``n`` ground truths per class, ranked by ``order``; with ``ties="group"`` equal
        values of ``step_keys`` (the score) in consecutive ranks are one step (as evaluate_coco's)."""
        return _class_aps(cls[rows], tuple(k[rows] for k in order), positive[rows], n, recall_thresholds,
                          listed, tuple(v[rows] for v in step_keys) if group else ())

    for t, pos_t in enumerate(thresholds.tolist()):
        is_tp = tp[t]
        fp = ~tp[t] & ~ignored[t]
        kind = np.full(N, -1)
        rest = fp.copy()
        for code, hit in ((_BKG, ~has_gt), (_LOC, (bg <= same_iou) & (same_iou <= pos_t)),
                          (_CLS, other_iou >= pos_t), (_DUP, dup_iou[t] >= pos_t), (_BKG, any_iou <= bg)):
            now = rest & hit
            kind[now] = code
            rest &= ~hit
        kind[rest] = _BOTH
        target = np.where(kind == _LOC, same_gt, np.where(kind == _CLS, other_gt, -1))
        pointing = (target >= 0)
        pointing[pointing] = ~used[t, target[pointing]]  # errors at a ground truth not matched: fixable
        # the highest-scoring fixable error per ground truth is fixed (the first met among equal scores)
        fixable = meet[pointing[meet]]
        best = np.zeros(N, dtype=bool)
        if fixable.size:
            by_gt = fixable[np.lexsort((np.arange(fixable.size), -m.score[fixable], target[fixable]))]
            first = np.r_[True, target[by_gt][1:] != target[by_gt][:-1]]
            best[by_gt[first]] = True
        unmatched = g_valid.copy()
        unmatched[used[t]] = False
        usable = np.zeros_like(unmatched)
        usable[target[pointing]] = True
        missed = unmatched & ~usable
        miss_per_class = np.bincount(g_cls[missed], minlength=K)
        fn_per_class = np.bincount(g_cls[unmatched], minlength=K)
        counted = is_tp | fp
        precision[t] = aps(counted, m.cls, is_tp, n_gt)
        ap[t] = _mean_ap(precision[t])
        for name, code in (("classification", _CLS), ("localisation", _LOC), ("both", _BOTH),
                           ("duplicate", _DUP), ("background", _BKG)):
            counts[name][t] = int((kind == code).sum())
            keep = counted & (kind != code)
            fixed = (kind == code) & best
            cls = np.where(fixed & (kind == _CLS), g_cls_at[target], m.cls)
            keep |= fixed
            new = _mean_ap(aps(keep, cls, is_tp | fixed, n_gt))
            delta[name][t] = _gain(max(new, ap[t]), ap[t])
        counts["missed"][t] = int(missed.sum())
        new = _mean_ap(aps(counted, m.cls, is_tp, n_gt - miss_per_class))
        delta["missed"][t] = _gain(max(new, ap[t]), ap[t])
        # every true positive above every false positive (a step: equal scores of one kind)
        ranked_first = (m.rank, m.image, -m.score, ~is_tp)
        delta["false positives"][t] = _gain(_mean_ap(aps(counted, m.cls, is_tp, n_gt, ranked_first,
                                                         (m.score, is_tp))), ap[t])
        delta["false negatives"][t] = _gain(_mean_ap(aps(counted, m.cls, is_tp, n_gt - fn_per_class)), ap[t])
        n_fp[t], n_fn[t] = int(fp.sum()), int(unmatched.sum())
    if (ap == -1).all():  # no class with ground truth: every number undefined (-1), said as evaluate_coco says it
        import warnings

        warnings.warn(NO_GROUND_TRUTH, UndefinedMetricWarning, stacklevel=2)
    return ErrorBreakdown(thresholds, ap, delta, counts, n_fp, n_fn, float(bg), precision)
