"""Pointwise confidence bands of ROC and PR curves by the stratified bootstrap, in bounded time.

The statistics behind :func:`precall.plot.roc_curve` / ``pr_curve`` with ``ci=True``
(the plots only draw what these return).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from .._core.sort import stable_descending_sort
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
#
# Weighted rows (``rows=``, what the plots and the report pass for weighted
# input): the replicates draw the rows themselves, as the intervals of
# :func:`precall.stats.bootstrap_ci` do with weights: the positive rows and the
# negative rows each resampled to their number, a drawn row counting its
# weight; a replicate's weight in each block is one ``bincount`` of the drawn
# rows' blocks, and its curve is read against its own totals (the weight drawn
# varies).  Cost: O(resamples x rows).
BAND_BLOCKS = 2048
BAND_RESAMPLES = 200
ROC_GRID = np.linspace(0.0, 1.0, 201)
PR_GRID = np.linspace(0.01, 1.0, 100)


class Band(NamedTuple):
    """A pointwise band: at each ``x`` of the grid, ``low`` and ``high``; ``seed`` the
    ``random_state`` given when it is a seed (an int, or a sequence of ints as a tuple), None
    for None or a generator (as :class:`~precall.stats.BootstrapResult`); ``resample`` how the
    replicates were drawn: ``"counts"`` (counts over the blocks) or ``"rows"`` (the weighted rows
    given as ``rows``)."""

    x: np.ndarray
    low: np.ndarray
    high: np.ndarray
    level: float
    n_resamples: int
    n_blocks: int
    seed: int | tuple[int, ...] | None = None
    resample: str = "counts"  # "counts": multinomial counts over the blocks; "rows": weighted rows drawn


def _whole(value: float, what: str) -> int:
    if not float(value).is_integer():
        raise ValueError(
            f"a confidence band drawn as counts needs a whole {what} (unweighted input or integer "
            f"weights); got {value:g}: pass the table's weighted rows as `rows` to draw the rows"
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


class _Drawn(NamedTuple):
    """Cumulative (TP, FP) of each replicate at the block boundaries, shape (R, B + 1) each
    (column 0 is the origin), each replicate's positive and negative totals (R,), and the number
    of blocks."""

    tp: np.ndarray
    fp: np.ndarray
    n_pos: np.ndarray
    n_neg: np.ndarray
    n_blocks: int


def _block_ends(tp: np.ndarray, fp: np.ndarray, n_pos: float, n_neg: float, blocks: int) -> np.ndarray:
    """The last table row of each block: a block ends where the cumulative TP crosses a multiple
    of ``n_pos / blocks`` or the cumulative FP one of ``n_neg / blocks``, and at the last row."""
    btp = np.floor(tp * blocks / (n_pos if n_pos > 0 else 1))
    bfp = np.floor(fp * blocks / (n_neg if n_neg > 0 else 1))
    ends = np.flatnonzero((btp[1:] != btp[:-1]) | (bfp[1:] != bfp[:-1]))
    return np.r_[ends, tp.size - 1]


def _check_rows(rows: Any, table: ThresholdTable) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``rows`` = (scores, positive, weights) of the rows ``table`` counts: each row's table row
    (ranked as the table ranks them), and the three as arrays; a ValueError when they are not
    the table's rows."""
    try:
        scores, positive, weight = rows
    except (TypeError, ValueError):
        raise TypeError("`rows` must be (scores, positive, weights) of the rows the table counts; got "
                        f"{type(rows).__name__}") from None
    scores = np.asarray(scores, dtype=float)
    positive = np.asarray(positive, dtype=bool)
    weight = np.asarray(weight, dtype=float)
    n = scores.shape[0]
    if scores.ndim != 1 or positive.shape != (n,) or weight.shape != (n,) or n == 0:
        raise ValueError("`rows` must be three 1-D arrays of one length (scores, positive, weights); got "
                         f"shapes {scores.shape}, {positive.shape} and {weight.shape}")
    if not (np.isfinite(scores).all() and np.isfinite(weight).all() and (weight > 0).all()):
        raise ValueError("`rows` must have finite scores and positive finite weights (zero-weight rows left "
                         "out, as the table leaves them out)")
    order, s = stable_descending_sort(scores)
    if table.ties == "group":
        run = np.cumsum(np.r_[True, s[1:] != s[:-1]]) - 1
    else:
        run = np.arange(n)
    where = np.empty(n, dtype=np.int64)
    where[order] = run
    tol = 1e-9 * max(float(weight.sum()), 1.0)
    if (int(run[-1]) + 1 != len(table) or abs(float(weight[positive].sum()) - float(table.tp[-1])) > tol
            or abs(float(weight[~positive].sum()) - float(table.fp[-1])) > tol
            or abs(float(table.n_pos) - float(table.tp[-1])) > tol):
        raise ValueError("`rows` are not the rows the table counts: give the scores, positive mask and "
                         "weights the table was built from (zero-weight rows left out)")
    return where, scores, positive, weight


def _row_replicates(table: ThresholdTable, rows: Any, n_resamples: int, blocks: int, random_state: Any
                    ) -> _Drawn:
    """The replicates of a stratified bootstrap of weighted ``rows`` (each class resampled to
    its number of rows, a drawn row counting its weight), counted over the blocks."""
    where, _, positive, weight = _check_rows(rows, table)
    tp = np.asarray(table.tp, dtype=float)
    fp = np.asarray(table.fp, dtype=float)
    ends = _block_ends(tp, fp, float(tp[-1]), float(fp[-1]), blocks)
    nb = int(ends.size)
    block = np.searchsorted(ends, np.arange(tp.size))[where]  # each row's block
    rng = np.random.default_rng(random_state)

    def draw(mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        # the class's rows block after block: a replicate's block weights are sums of
        # contiguous (multiplicity x weight), with no gather of drawn rows
        b = block[mask]
        order = np.argsort(b, kind="stable")
        b, w = b[order], weight[mask][order]
        m = b.size
        cum = np.zeros((n_resamples, nb + 1))
        if m == 0:
            return cum, np.zeros(n_resamples)
        starts = np.flatnonzero(np.r_[True, b[1:] != b[:-1]])
        present = b[starts] + 1
        sums = np.zeros(nb + 1)
        for i in range(n_resamples):
            times = np.bincount(rng.integers(0, m, m), minlength=m)
            sums[present] = np.add.reduceat(w * times, starts)
            np.cumsum(sums, out=cum[i])
        return cum, cum[:, -1].copy()

    ctp, p = draw(positive)
    cfp, q = draw(~positive)
    return _Drawn(ctp, cfp, p, q, nb)


def _replicates(table: ThresholdTable, n_resamples: int, blocks: int, random_state: Any,
                rows: Any = None) -> _Drawn:
    """Each replicate's cumulative counts at the block boundaries (:class:`_Drawn`): counts
    drawn over the blocks, or the weighted ``rows`` drawn (:func:`_row_replicates`)."""
    if rows is not None:
        return _row_replicates(table, rows, n_resamples, blocks, random_state)
    tp = np.asarray(table.tp, dtype=float)
    fp = np.asarray(table.fp, dtype=float)
    n_pos = _whole(table.n_pos, "positive count")
    n_neg = _whole(table.n_neg, "negative count")
    _whole(float(tp[-1]), "true positive count")
    _whole(float(fp[-1]), "false positive count")
    ends = _block_ends(tp, fp, n_pos, n_neg, blocks)
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
    return _Drawn(ctp, cfp, np.full(n_resamples, float(max(n_pos, 1))), np.full(n_resamples, float(max(n_neg, 1))),
                  int(ends.size))


def _percentiles(values: np.ndarray, level: float) -> tuple[np.ndarray, np.ndarray]:
    q = 100 * np.array([(1 - level) / 2, (1 + level) / 2])
    with np.errstate(invalid="ignore"):
        low, high = np.nanpercentile(values, q, axis=0) if np.isfinite(values).any() else (
            np.full(values.shape[1], np.nan), np.full(values.shape[1], np.nan))
    return low, high


def _totals(total: np.ndarray) -> np.ndarray:
    """Each replicate's class total as a divisor (an empty class: 1, its counts are zero)."""
    return np.where(total > 0, total, 1.0)


def roc_band(table: ThresholdTable, *, level: float = 0.95, n_resamples: int = BAND_RESAMPLES,
             blocks: int = BAND_BLOCKS, random_state: Any = 0, rows: Any = None) -> Band:
    """TPR band at each FPR of a fixed grid (pROC's ``ci.se`` by the stratified bootstrap).

    Parameters
    ----------
    table : ThresholdTable
    level, n_resamples, blocks, random_state
        The band's level, the replicates, the blocks of thresholds and the seed.
    rows : (scores, positive, weights), default=None
        The rows ``table`` counts (zero-weight rows left out, as the table leaves them out):
        the replicates then draw these rows, each counting its weight (the stratified row
        bootstrap :func:`precall.stats.bootstrap_ci` draws with weights), instead of counts
        over the blocks; needed for weights that are not whole.  O(resamples x rows).
    """
    level, n_resamples, blocks, random_state = _check_band(level, n_resamples, blocks, random_state, ROC_GRID)
    drawn = _replicates(table.grouped(), n_resamples, blocks, random_state, rows)
    n_pos, n_neg = _totals(drawn.n_pos), _totals(drawn.n_neg)
    grid = ROC_GRID
    out = np.empty((n_resamples, grid.size))
    for i in range(n_resamples):
        fpr, tpr = drawn.fp[i] / n_neg[i], drawn.tp[i] / n_pos[i]
        j = np.clip(np.searchsorted(fpr, grid, side="right") - 1, 0, fpr.size - 1)
        k = np.minimum(j + 1, fpr.size - 1)
        span = fpr[k] - fpr[j]
        with np.errstate(invalid="ignore", divide="ignore"):
            frac = np.where(span > 0, (grid - fpr[j]) / span, 0.0)
        out[i] = tpr[j] + frac * (tpr[k] - tpr[j])
    low, high = _percentiles(out, level)
    return Band(grid, low, high, level, n_resamples, drawn.n_blocks, recorded_seed(random_state),
                "counts" if rows is None else "rows")


def pr_band(table: ThresholdTable, *, level: float = 0.95, n_resamples: int = BAND_RESAMPLES,
            blocks: int = BAND_BLOCKS, random_state: Any = 0, rows: Any = None) -> Band:
    """Precision band at each recall of a fixed grid: the precision where a replicate first
    reaches that recall (the stratified bootstrap).

    Parameters
    ----------
    table : ThresholdTable
    level, n_resamples, blocks, random_state
        The band's level, the replicates, the blocks of thresholds and the seed.
    rows : (scores, positive, weights), default=None
        The rows ``table`` counts (zero-weight rows left out, as the table leaves them out):
        the replicates then draw these rows, each counting its weight (the stratified row
        bootstrap :func:`precall.stats.bootstrap_ci` draws with weights), instead of counts
        over the blocks; needed for weights that are not whole.  O(resamples x rows).
    """
    level, n_resamples, blocks, random_state = _check_band(level, n_resamples, blocks, random_state, PR_GRID)
    drawn = _replicates(table, n_resamples, blocks, random_state, rows)
    n_pos = _totals(drawn.n_pos)
    grid = PR_GRID
    out = np.full((n_resamples, grid.size), np.nan)
    for i in range(n_resamples):
        tp, fp = drawn.tp[i, 1:], drawn.fp[i, 1:]
        recall = tp / n_pos[i]
        j = np.searchsorted(recall, grid - 1e-12, side="left")
        ok = j < recall.size
        jj = j[ok]
        predicted = tp[jj] + fp[jj]
        with np.errstate(invalid="ignore", divide="ignore"):
            out[i, ok] = np.where(predicted > 0, tp[jj] / predicted, np.nan)
    low, high = _percentiles(out, level)
    return Band(grid, low, high, level, n_resamples, drawn.n_blocks, recorded_seed(random_state),
                "counts" if rows is None else "rows")
