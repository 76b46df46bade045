"""Pointwise confidence bands of ROC and PR curves by the stratified bootstrap, in bounded time.

The statistics behind :func:`precall.plot.roc_curve` / ``pr_curve`` with ``ci=True``
(the plots only draw what these return).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from .._core.validate import check_number
from ..table import ThresholdTable
from .results import _check_level, _check_random_state, _check_resamples, recorded_seed

__all__ = ["BAND_BLOCKS", "BAND_RESAMPLES", "Band", "PR_GRID", "ROC_GRID", "pr_band", "roc_band"]

# ---------------------------------------------------------------------------
# confidence bands
# Pointwise bootstrap bands of a ROC curve (pROC's ``ci.se``) and a PR curve, in bounded time.
#
# The stratified bootstrap of rows draws P positives and N negatives with
# replacement; the number drawn from any set of rows is then multinomial over
# the sets.  So a replicate is drawn directly as counts over **blocks** of
# consecutive thresholds of the table (no row is touched, no sort is repeated):
#
# * the table's rows are cut into blocks where the cumulative TP crosses a
#   multiple of P / ``blocks`` or the cumulative FP a multiple of N / ``blocks``
#   (at most ``2 * blocks + 1`` blocks, each holding at most 1/``blocks`` of the
#   positives and of the negatives unless one run of tied scores holds more);
# * a replicate's positive counts per block are ``Multinomial(P, tp_b / P)``
#   (positives no threshold reaches, in detection, are one more category), its
#   negative counts ``Multinomial(N, fp_b / N)``: exactly the block totals of a
#   stratified row bootstrap;
# * the replicate curve is known exactly at the block boundaries; between them
#   the ROC band joins them with straight lines and the PR band reads the first
#   boundary at or past the recall, so a replicate is off by at most one block
#   (1/``blocks`` = 0.05% of either class with the default 2048);
# * the band is the pointwise ``(1 - level) / 2`` and ``(1 + level) / 2``
#   percentiles over a fixed grid (201 FPRs; 100 recalls 0.01..1).
#
# Cost: O(rows) once to cut the blocks, then O(resamples x blocks): 200
# resamples over 4097 blocks whatever the number of rows.  Counts must be whole
# (unweighted input or integer weights): a multinomial needs a number of draws.
BAND_BLOCKS = 2048
BAND_RESAMPLES = 200
ROC_GRID = np.linspace(0.0, 1.0, 201)
PR_GRID = np.linspace(0.01, 1.0, 100)


class Band(NamedTuple):
    """A pointwise band: at each ``x`` of the grid, ``low`` and ``high``; ``seed`` the
    ``random_state`` given when it is a seed (an int, or a sequence of ints as a tuple), None
    for None or a generator (as :class:`~precall.stats.BootstrapResult`)."""

    x: np.ndarray
    low: np.ndarray
    high: np.ndarray
    level: float
    n_resamples: int
    n_blocks: int
    seed: int | tuple[int, ...] | None = None


def _whole(value: float, what: str) -> int:
    if not float(value).is_integer():
        raise ValueError(
            f"a confidence band resamples counts, so the {what} must be whole (unweighted input or "
            f"integer weights); got {value:g}"
        )
    return int(value)


def _check_band(level: Any, n_resamples: Any, blocks: Any, random_state: Any, grid: np.ndarray
                ) -> tuple[float, int, int, Any]:
    """The options of a band; a replicate keeps its two cumulative counts (2B + 2 values) and
    the grid's values."""
    blocks = check_number(blocks, "blocks", low=1, integer=True, hint=f"e.g. {BAND_BLOCKS}")
    level = _check_level(level)
    n_resamples = _check_resamples(n_resamples, 2 * (2 * blocks + 2) + grid.size, low=1)
    return level, n_resamples, blocks, _check_random_state(random_state)


def _replicates(table: ThresholdTable, n_resamples: int, blocks: int, random_state: Any
                ) -> tuple[np.ndarray, np.ndarray, int]:
    """Cumulative (TP, FP) of each replicate at the block boundaries, shape (R, B + 1) each
    (column 0 is the origin), and the number of blocks."""
    tp = np.asarray(table.tp, dtype=float)
    fp = np.asarray(table.fp, dtype=float)
    n_pos = _whole(table.n_pos, "positive count")
    n_neg = _whole(table.n_neg, "negative count")
    _whole(float(tp[-1]), "true positive count")
    _whole(float(fp[-1]), "false positive count")
    btp = np.floor(tp * blocks / max(n_pos, 1))
    bfp = np.floor(fp * blocks / max(n_neg, 1))
    ends = np.flatnonzero((btp[1:] != btp[:-1]) | (bfp[1:] != bfp[:-1]))
    ends = np.r_[ends, tp.size - 1]
    dtp = np.diff(np.r_[0.0, tp[ends]])
    dfp = np.diff(np.r_[0.0, fp[ends]])
    rng = np.random.default_rng(random_state)

    def draw(total: int, counts: np.ndarray) -> np.ndarray:
        if total == 0:
            return np.zeros((n_resamples, counts.size))
        pvals = np.r_[counts, total - counts.sum()] / total
        pvals = np.clip(pvals, 0.0, None)
        pvals /= pvals.sum()
        return rng.multinomial(total, pvals, size=n_resamples)[:, :-1].astype(float)

    zero = np.zeros((n_resamples, 1))
    ctp = np.hstack([zero, np.cumsum(draw(n_pos, dtp), axis=1)])
    cfp = np.hstack([zero, np.cumsum(draw(n_neg, dfp), axis=1)])
    return ctp, cfp, int(ends.size)


def _percentiles(values: np.ndarray, level: float) -> tuple[np.ndarray, np.ndarray]:
    q = 100 * np.array([(1 - level) / 2, (1 + level) / 2])
    with np.errstate(invalid="ignore"):
        low, high = np.nanpercentile(values, q, axis=0) if np.isfinite(values).any() else (
            np.full(values.shape[1], np.nan), np.full(values.shape[1], np.nan))
    return low, high


def roc_band(table: ThresholdTable, *, level: float = 0.95, n_resamples: int = BAND_RESAMPLES,
             blocks: int = BAND_BLOCKS, random_state: Any = 0) -> Band:
    """TPR band at each FPR of a fixed grid (pROC's ``ci.se`` by the stratified bootstrap)."""
    level, n_resamples, blocks, random_state = _check_band(level, n_resamples, blocks, random_state, ROC_GRID)
    ctp, cfp, nb = _replicates(table.grouped(), n_resamples, blocks, random_state)
    n_pos, n_neg = max(table.n_pos, 1), max(table.n_neg, 1)
    grid = ROC_GRID
    out = np.empty((n_resamples, grid.size))
    for i in range(n_resamples):
        fpr, tpr = cfp[i] / n_neg, ctp[i] / n_pos
        j = np.clip(np.searchsorted(fpr, grid, side="right") - 1, 0, fpr.size - 1)
        k = np.minimum(j + 1, fpr.size - 1)
        span = fpr[k] - fpr[j]
        with np.errstate(invalid="ignore", divide="ignore"):
            frac = np.where(span > 0, (grid - fpr[j]) / span, 0.0)
        out[i] = tpr[j] + frac * (tpr[k] - tpr[j])
    low, high = _percentiles(out, level)
    return Band(grid, low, high, level, n_resamples, nb, recorded_seed(random_state))


def pr_band(table: ThresholdTable, *, level: float = 0.95, n_resamples: int = BAND_RESAMPLES,
            blocks: int = BAND_BLOCKS, random_state: Any = 0) -> Band:
    """Precision band at each recall of a fixed grid: the precision where a replicate first
    reaches that recall (the stratified bootstrap)."""
    level, n_resamples, blocks, random_state = _check_band(level, n_resamples, blocks, random_state, PR_GRID)
    ctp, cfp, nb = _replicates(table, n_resamples, blocks, random_state)
    n_pos = max(table.n_pos, 1)
    grid = PR_GRID
    out = np.full((n_resamples, grid.size), np.nan)
    for i in range(n_resamples):
        recall = ctp[i, 1:] / n_pos
        j = np.searchsorted(recall, grid - 1e-12, side="left")
        ok = j < recall.size
        jj = j[ok]
        predicted = ctp[i, 1:][jj] + cfp[i, 1:][jj]
        with np.errstate(invalid="ignore", divide="ignore"):
            out[i, ok] = np.where(predicted > 0, ctp[i, 1:][jj] / predicted, np.nan)
    low, high = _percentiles(out, level)
    return Band(grid, low, high, level, n_resamples, nb, recorded_seed(random_state))
