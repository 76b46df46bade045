"""Many binary problems at once, as rows of 2-D count arrays (internal).

Two users: ``average="samples"`` (each sample ranks its k classes; one
``np.argsort(axis=1)`` sorts every row) and the bootstrap (each resample is a
vector of counts over the runs of one sorted input).  Both reduce to
:func:`steps_from_counts`: per problem, the positives and negatives of each run
of equal scores, runs in decreasing score order.  A run may be empty (no sample
drawn; or, for ``average="samples"``, a rank that is not the last of its run):
it repeats the counts above it, adds ``dtp = 0`` to every sum, its precision
never exceeds that of the step above it, and it never is the first run to
reach a recall; so every convention of :mod:`precall.scores`, written here over
axis 1, gives the same value as on the runs alone.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["RowSteps", "row_ap", "row_coco_precision", "row_roc_auc", "row_steps", "steps_from_counts"]

_VOC07_GRID = np.arange(0.0, 1.1, 0.1)  # as scores._VOC07_GRID (Detectron's floats)
_COCO_GRID = np.linspace(0.0, 1.00, int(np.round((1.00 - 0.0) / 0.01)) + 1, endpoint=True)


@dataclass(frozen=True)
class RowSteps:
    """Per-problem counts, arrays of shape (m, R): R runs of each of m problems.

    Runs are in decreasing score order; a run may hold no sample (then it
    repeats the counts above it and adds nothing to any metric).  ``n_pos`` and
    ``n_neg`` have shape (m, 1).
    """

    tp: np.ndarray  # cumulative TP at the end of the run
    fp: np.ndarray  # cumulative FP at the end of the run
    dtp: np.ndarray  # positives in the run (its step; 0 off the steps)
    tp_prev: np.ndarray  # TP just above the run
    fp_prev: np.ndarray  # FP just above the run
    n_pos: np.ndarray
    n_neg: np.ndarray


def steps_from_counts(pos: np.ndarray, neg: np.ndarray, n_pos: np.ndarray | None = None) -> RowSteps:
    """Counts per run (m, R) of positives and negatives, runs in decreasing score order.

    ``n_pos`` (m,) is the total positive weight of each problem when it
    exceeds the positives ranked (detection: ground truths never found).
    """
    tp = np.cumsum(pos, axis=1)
    fp = np.cumsum(neg, axis=1)
    total = tp[:, -1:] if n_pos is None else np.asarray(n_pos, dtype=np.float64).reshape(-1, 1)
    return RowSteps(tp, fp, pos, tp - pos, fp - neg, total, fp[:, -1:])


def _descending_stable(scores: np.ndarray) -> np.ndarray:
    """Per-row order by decreasing score, equal scores in column order."""
    k = scores.shape[1]
    ascending = np.argsort(scores[:, ::-1], axis=1, kind="stable")
    return (k - 1 - ascending)[:, ::-1]


def row_steps(scores: np.ndarray, positive: np.ndarray, ties: str) -> RowSteps:
    """The count tables of each row of ``scores`` (n, k) against ``positive`` (n, k).

    Rank ``j`` of a row is column ``j``.  With grouped ties a run's samples are
    all counted at its last rank; its other ranks are empty runs.
    """
    n, k = scores.shape
    order = _descending_stable(scores)
    y = np.take_along_axis(positive, order, axis=1)
    if ties != "group":
        del order
        pos = y.astype(np.int64)
        return steps_from_counts(pos, 1 - pos)
    s = np.take_along_axis(scores, order, axis=1)
    del order
    run_end = np.ones((n, k), dtype=bool)
    run_end[:, :-1] = s[:, 1:] != s[:, :-1]
    tp = np.cumsum(y, axis=1, dtype=np.int64)
    fp = np.arange(1, k + 1, dtype=np.int64) - tp

    def per_run(cum: np.ndarray) -> np.ndarray:
        at_end = np.where(run_end, cum, 0)
        above = np.zeros_like(at_end)  # the count at the previous run's end
        above[:, 1:] = np.maximum.accumulate(at_end, axis=1)[:, :-1]
        return np.where(run_end, cum - above, 0)

    return steps_from_counts(per_run(tp), per_run(fp))


def _safe_divide(num: np.ndarray, den: np.ndarray, default: float) -> np.ndarray:
    """``num / den`` where ``den > 0``, else ``default`` (one pass, no temporaries)."""
    num, den = np.broadcast_arrays(num, den)
    out = np.full(num.shape, default, dtype=np.float64)
    np.divide(num, den, out=out, where=den > 0)
    return out


def _envelope(precision: np.ndarray) -> np.ndarray:
    return np.maximum.accumulate(precision[:, ::-1], axis=1)[:, ::-1]


def _grid_values(r: RowSteps, env: np.ndarray, n_points: int, grid: str, reference: np.ndarray) -> np.ndarray:
    """(m, n_points): the envelope at the first rank reaching each recall threshold (0 past the end).

    Long rows (many runs: detection, bootstrap) search each row once; short rows
    (``average="samples"``: a few classes, many rows) compare every threshold
    with every rank at once.
    """
    m, runs = env.shape
    padded = np.concatenate([env, np.zeros((m, 1))], axis=1)
    idx = np.empty((m, n_points), dtype=np.int64)
    with np.errstate(invalid="ignore", divide="ignore"):
        if runs >= 256:
            for i in range(m):  # cumulative counts only grow: one search per row
                if grid == "reference":
                    idx[i] = np.searchsorted(r.tp[i] / r.n_pos[i, 0], reference, side="left")
                else:  # exact: first rank with TP * (n_points - 1) >= j * P, on the counts
                    scaled = r.tp[i] * float(n_points - 1)
                    idx[i] = np.searchsorted(scaled, np.arange(n_points) * r.n_pos[i, 0], side="left")
        else:
            recall = r.tp / r.n_pos
            for j in range(n_points):
                if grid == "reference":
                    below = recall < reference[j]
                else:
                    below = r.tp * (n_points - 1) < j * r.n_pos
                idx[:, j] = below.sum(axis=1)
    return np.take_along_axis(padded, idx, axis=1)


def row_ap(r: RowSteps, method: str, grid: str) -> np.ndarray:
    """AP of each row by ``method`` (rows without positives give NaN)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        P = r.n_pos.astype(np.float64)
        tp = r.tp.astype(np.float64)
        precision = _safe_divide(tp, tp + r.fp, 0.0)  # 0 for an empty leading run
        if method == "step":
            out = np.sum(r.dtp * precision, axis=1, keepdims=True) / P
        elif method == "voc2010":
            out = np.sum(r.dtp / P * _envelope(precision), axis=1, keepdims=True)
        elif method == "voc2007":
            acc = np.zeros(r.tp.shape[0])
            values = _grid_values(r, _envelope(precision), 11, grid, _VOC07_GRID)
            for j in range(11):
                acc = acc + values[:, j] / 11.0  # Detectron's order of additions
            out = acc[:, None]
        elif method == "coco":
            out = np.mean(row_coco_precision(r, grid), axis=1, keepdims=True)
        elif method == "trapezoid":
            prev = _safe_divide(r.tp_prev.astype(np.float64), r.tp_prev + r.fp_prev, 1.0)
            out = np.sum(r.dtp * (prev + precision), axis=1, keepdims=True) / 2.0 / P
        elif method == "interpolated":
            out = np.sum(_interpolated_areas(r), axis=1, keepdims=True) / P
        else:  # pragma: no cover - validated by the caller
            raise ValueError(f"unknown method {method!r}")
    out = out[:, 0]
    out[r.n_pos[:, 0] == 0] = np.nan
    return out


def row_coco_precision(r: RowSteps, grid: str = "reference", thresholds: np.ndarray | None = None) -> np.ndarray:
    """(m, R): pycocotools' interpolated precision at each recall threshold of
    each row (the envelope of ``TP / (TP + FP + eps)``, 0 past the last recall).

    ``thresholds``: the recall thresholds (default pycocotools' 101); with them
    only ``grid="reference"`` applies.
    """
    tp = r.tp.astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        env = _envelope(tp / (r.fp + tp + np.spacing(1)))
        if thresholds is not None:
            return _grid_values(r, env, thresholds.size, "reference", thresholds)
        return _grid_values(r, env, 101, grid, _COCO_GRID)


def _interpolated_areas(r: RowSteps) -> np.ndarray:
    """Davis & Goadrich's area of each step (see ``scores._ap_interpolated``)."""
    step = r.dtp > 0
    d = np.where(step, r.dtp, 1).astype(np.float64)
    a = r.tp_prev.astype(np.float64)
    fa = r.fp_prev.astype(np.float64)
    slope = (r.fp - fa) / d
    c = slope + 1.0
    b = a + fa
    area = d / c + (a * slope - fa) / c / c * np.log1p(_safe_divide(d * c, b, 0.0))
    return np.where(step, area, 0.0)


def row_roc_auc(r: RowSteps, max_fpr: float | None = None) -> np.ndarray:
    """ROC-AUC of each row (NaN where a row has one class).

    The full area is exact in integers.  With ``max_fpr`` the area left of
    ``max_fpr`` is summed segment by segment (each run's segment clipped, its
    end point interpolated linearly as scikit-learn does) and McClish
    standardised.
    """
    P, N = r.n_pos[:, 0], r.n_neg[:, 0]
    with np.errstate(invalid="ignore", divide="ignore"):
        if max_fpr is None or max_fpr == 1:
            twice_above = np.sum(r.dtp * (r.fp_prev + r.fp), axis=1)
            total = 2 * P * N
            out = (total - twice_above) / total
        else:
            x0, x1 = r.fp_prev / r.n_neg, r.fp / r.n_neg
            y0, y1 = r.tp_prev / r.n_pos, r.tp / r.n_pos
            x_end = np.minimum(x1, max_fpr)
            width = x_end - x0
            inside = width > 0
            slope = _safe_divide(y1 - y0, x1 - x0, 0.0)
            y_end = y0 + slope * width
            area = np.sum(np.where(inside, width * (y0 + y_end) / 2.0, 0.0), axis=1)
            min_area, max_area = 0.5 * max_fpr**2, max_fpr
            out = 0.5 * (1 + (area - min_area) / (max_area - min_area))
    out[(P == 0) | (N == 0)] = np.nan
    return out
