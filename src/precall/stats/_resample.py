"""Resamples as counts over an input ranked once (internal; used by :mod:`precall.stats`).

A *ranked column* is one binary problem (a score column against its positives)
sorted once: every row gets the id of its *run* (its equal scores under
``ties="group"``, the row alone under ``ties="stable"``), runs numbered in
decreasing score order, and consecutive runs without a positive merged into one
(they only add false positives between two steps, so no AP convention and no
ROC area can tell them apart).  A row's *code* is ``2 * run + is_positive``.

A resample (a bootstrap replicate, or the data less a jackknife group) is a
multiset of rows.  Its per-run counts of positive and negative weight, one
``np.bincount`` of the drawn rows' codes, are all that any metric of
:mod:`precall._core.conventions` needs: O(n) per replicate and no new sort.  A replicate
is therefore evaluated exactly as the original rows with integer weights (the
number of times each row was drawn, times its ``sample_weight``); with
``ties="group"`` that equals evaluating the resampled rows themselves.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator

import numpy as np

from .._core.sort import stable_descending_sort
from .._core.steps import Steps, steps_from_counts
from ._segments import passes, segment_sums

__all__ = [
    "CellDesign",
    "ColumnSegments",
    "Draws",
    "Multiplicities",
    "RankedColumn",
    "blocked_column",
    "column_segments",
    "cell_steps",
    "count_design",
    "draw_counts",
    "draw_blocks",
    "full_steps",
    "jackknife_groups",
    "leave_out_cells",
    "leave_out_steps",
    "rank_column",
    "resample_steps",
]

_CELLS = 1 << 22  # drawn rows (or count cells) per block: bounds the temporaries


@dataclass(frozen=True)
class RankedColumn:
    """One binary problem ranked once: the code of every row and the number of runs."""

    code: np.ndarray  # (n_rows,) int64: 2 * run + is_positive
    n_runs: int


def rank_column(scores: np.ndarray, positive: np.ndarray, ties: str) -> RankedColumn:
    """Rank one column (one sort) and give every row its run code."""
    n = scores.shape[0]
    order, s = stable_descending_sort(scores)
    y = positive[order]
    new_run = np.ones(n, dtype=bool)
    if ties == "group":
        new_run[1:] = s[1:] != s[:-1]
    run = np.cumsum(new_run) - 1
    n_runs = int(run[-1]) + 1 if n else 0
    has_pos = np.zeros(n_runs, dtype=bool)
    has_pos[run[y]] = True
    # a block starts at every run with a positive and at the run after one
    starts = np.ones(n_runs, dtype=bool)
    starts[1:] = has_pos[1:] | has_pos[:-1]
    block = np.cumsum(starts) - 1
    code = np.empty(n, dtype=np.int64)
    code[order] = 2 * block[run] + y
    return RankedColumn(code, int(block[-1]) + 1 if n else 0)


def _steps(counts: np.ndarray, m: int, n_runs: int) -> Steps:
    c = counts.reshape(m, n_runs, 2)
    return steps_from_counts(c[:, :, 1], c[:, :, 0])


@dataclass(frozen=True)
class Draws:
    """A block of ``m`` bootstrap replicates: in each stratum, ``local[s]`` (m, size)
    draws positions among the stratum's rows ``members[s]``."""

    members: list[np.ndarray]
    local: list[np.ndarray]

    @property
    def m(self) -> int:
        return int(self.local[0].shape[0])

    def rows(self) -> np.ndarray:
        """The drawn row indices, (m, n), stratum after stratum."""
        if len(self.local) == 1 and self.members[0] is _ALL:
            return self.local[0]
        return np.concatenate([mem[loc] for mem, loc in zip(self.members, self.local)], axis=1)


_ALL = np.empty(0, dtype=np.int64)  # marks "every row, in order" (no strata)


def resample_steps(col: RankedColumn, draws: Draws, weight: np.ndarray | None) -> Steps:
    """Per-run counts of a block of replicates: for each replicate and stratum,
    one ``bincount`` of the drawn rows' codes (no row index materialised).

    One replicate at a time keeps the bins (2 x runs) in cache; a single
    ``bincount`` over the whole block, with per-replicate offsets, scatters
    into m times more bins and is about 3x slower.
    """
    m = draws.m
    width = 2 * col.n_runs
    counts = np.zeros((m, width), dtype=np.int64 if weight is None else np.float64)
    for members, local in zip(draws.members, draws.local):
        code = col.code if members is _ALL else col.code[members]
        w = None if weight is None else (weight if members is _ALL else weight[members])
        for i in range(m):
            rows = local[i]
            counts[i] += np.bincount(code[rows], weights=None if w is None else w[rows], minlength=width)
    return _steps(counts, m, col.n_runs)


# ---------------------------------------------------------------------------
# the same row draws, counted by multiplicities
#
# A block of m replicates is held as each row's multiplicity (how many times it
# was drawn) in each replicate: an (n, m) matrix of small counts, one row per
# input row, laid out stratum after stratum.  A column's per-run counts for the
# m replicates are then the sums of those rows over each run (or score block),
# taken in the column's order: one pass over n rows of m bytes per column
# (:mod:`._segments`, compiled with numba when installed), instead of a gather
# and a bincount of n drawn codes per replicate and column.  The counts are the
# same integers as :func:`resample_steps` gives for the same draws.
_MULTIPLICITY_BYTES = 1 << 27  # rows x replicates held at once (uint8): 128 MB
_MULTIPLICITY_REPLICATES = 128  # at most this many replicates a block (one pass per column a block)


@dataclass(frozen=True)
class ColumnSegments:
    """A ranked column's rows grouped by code, in the stratum-after-stratum layout of
    :class:`Multiplicities`: the rows ``order[bounds[g]:bounds[g + 1]]`` have code ``present[g]``."""

    order: np.ndarray
    bounds: np.ndarray
    present: np.ndarray
    n_runs: int
    code: np.ndarray  # each row's code, in the layout


def _layout(n: int, strata: list[np.ndarray] | None) -> tuple[np.ndarray | None, np.ndarray]:
    """Each row's place in the layout (None: the rows' own order) and the strata's offsets."""
    if strata is None:
        return None, np.array([0, n], dtype=np.int64)
    position = np.empty(n, dtype=np.int64)
    position[np.concatenate(strata)] = np.arange(n, dtype=np.int64)
    return position, np.concatenate([[0], np.cumsum([s.shape[0] for s in strata])]).astype(np.int64)


def column_segments(col: RankedColumn, strata: list[np.ndarray] | None) -> ColumnSegments:
    """The rows of ``col`` grouped by code (one stable sort of the codes), in the layout of
    :class:`Multiplicities` for these ``strata``."""
    position, _ = _layout(col.code.shape[0], strata)
    code = col.code
    if position is not None:
        code = np.empty_like(col.code)
        code[position] = col.code
    order = np.argsort(code, kind="stable")
    sorted_code = code[order]
    starts = np.flatnonzero(np.r_[True, sorted_code[1:] != sorted_code[:-1]]) if code.shape[0] else np.zeros(0, int)
    bounds = np.concatenate([starts, [code.shape[0]]]).astype(np.int64)
    return ColumnSegments(order.astype(np.int64), bounds, sorted_code[starts], col.n_runs, code)


class Multiplicities:
    """Up to ``capacity`` replicates' row multiplicities as small unsigned counts.

    ``add(draws, i)`` puts replicate ``i`` of a block of :func:`draw_blocks` in the next
    row of a (capacity, n) matrix (per stratum one ``bincount`` of its drawn positions:
    contiguous writes); ``all_steps(segments)`` gives the columns' per-run counts of the
    replicates held; ``clear`` empties the block.
    """

    def __init__(self, n: int, n_resamples: int, strata: list[np.ndarray] | None, width: int = 0) -> None:
        # at most 128 replicates, 128 MB of multiplicities and _CELLS counts of the widest
        # column (``width`` = 2 x its runs) a block: the per-run counts of every row's own run
        # (continuous scores, resample="rows") would otherwise be 128 x 2n int64 per column
        self.capacity = max(1, min(n_resamples, _MULTIPLICITY_REPLICATES, _MULTIPLICITY_BYTES // max(n, 1),
                                   _CELLS // max(width, 1)))
        self.times = np.zeros((self.capacity, n), dtype=np.uint8)
        self.offsets = _layout(n, strata)[1]
        self.filled = 0
        self._by_row: np.ndarray | None = None

    @property
    def full(self) -> bool:
        return self.filled == self.capacity

    def add(self, draws: Draws, i: int) -> None:
        for s, local in enumerate(draws.local):
            lo, hi = int(self.offsets[s]), int(self.offsets[s + 1])
            times = np.bincount(local[i], minlength=hi - lo)
            if times.shape[0] and int(times.max()) > np.iinfo(self.times.dtype).max:  # a row drawn 256 times
                self.times = self.times.astype(np.int64)
            self.times[self.filled, lo:hi] = times
        self.filled += 1
        self._by_row = None

    def all_steps(self, segments: list[ColumnSegments]) -> list[Steps]:
        """Each column's per-run counts of the replicates held: compiled (``set_kernel``), segment sums of the
        transposed (n, replicates) matrix; else per replicate one ``bincount`` of each column's
        codes weighted by the multiplicities (float64 sums of small integers: exact, the same
        integers; about 4x faster in numpy than ``add.reduceat`` of the gathered rows)."""
        m = self.filled
        counts = [np.zeros((m, 2 * seg.n_runs), dtype=np.int64) for seg in segments]
        if passes(self.times.shape[1]) is not None:
            if self._by_row is None:
                self._by_row = np.ascontiguousarray(self.times[:m].T)
            for seg, c in zip(segments, counts):
                c[:, seg.present] = segment_sums(self._by_row, seg.order, seg.bounds).T
        else:
            for r in range(m):
                weight = self.times[r].astype(np.float64)
                for seg, c in zip(segments, counts):
                    c[r] = np.bincount(seg.code, weights=weight, minlength=2 * seg.n_runs)
        return [_steps(c, m, seg.n_runs) for seg, c in zip(segments, counts)]

    def clear(self) -> None:
        self.filled = 0
        self._by_row = None


def leave_out_steps(
    col: RankedColumn, members: np.ndarray, sizes: np.ndarray, weight: np.ndarray | None
) -> Steps:
    """Per-run counts of the data less each group: group ``g`` is the next
    ``sizes[g]`` entries of ``members`` (row indices)."""
    g = sizes.shape[0]
    width = 2 * col.n_runs
    base = np.bincount(col.code, weights=weight, minlength=width)
    group = np.repeat(np.arange(g, dtype=np.int64), sizes)
    w = None if weight is None else weight[members]
    removed = np.bincount(col.code[members] + group * width, weights=w, minlength=g * width)
    counts = base[None, :] - removed.reshape(g, width)
    return _steps(counts, g, col.n_runs)


def draw_blocks(
    rng: np.random.Generator, n: int, n_resamples: int, strata: list[np.ndarray] | None
) -> Iterator[Draws]:
    """Bootstrap draws, blocks of replicates.

    Without strata a block is ``rng.integers(0, n, (m, n))``, the draw
    ``scipy.stats.bootstrap`` makes (so a single block reproduces its resamples
    with the same generator).  With strata, every stratum is resampled to its
    own size, stratum after stratum.
    """
    per_block = max(1, min(n_resamples, _CELLS // max(n, 1)))
    for start in range(0, n_resamples, per_block):
        m = min(per_block, n_resamples - start)
        if strata is None:
            yield Draws([_ALL], [rng.integers(0, n, (m, n))])
        else:
            yield Draws(strata, [rng.integers(0, s.shape[0], (m, s.shape[0])) for s in strata])


_JACKKNIFE_EXACT = 2000  # leave-one-out up to this many rows
_JACKKNIFE_GROUPS = 1000  # above it: this many random groups of rows


def jackknife_groups(
    rng: np.random.Generator, n: int, width: int | None = None
) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """Blocks of jackknife groups as (members, sizes): leave-one-out for up to
    2000 rows, else 1000 groups of a random partition of the rows; a block holds
    as many groups as fit when each group's counts span ``width`` cells (default 2n)."""
    if n <= _JACKKNIFE_EXACT:
        members, sizes = np.arange(n, dtype=np.int64), np.ones(n, dtype=np.int64)
    else:
        members = rng.permutation(n).astype(np.int64)
        sizes = np.diff(np.linspace(0, n, _JACKKNIFE_GROUPS + 1).round().astype(np.int64))
    bounds = np.concatenate([[0], np.cumsum(sizes)])
    per_block = max(1, _CELLS // max(2 * n if width is None else width, 1))
    for g0 in range(0, sizes.shape[0], per_block):
        g1 = min(g0 + per_block, sizes.shape[0])
        yield members[bounds[g0] : bounds[g1]], sizes[g0:g1]


def jackknife_description(n: int) -> str:
    """How :func:`jackknife_groups` splits ``n`` rows, for result objects."""
    if n <= _JACKKNIFE_EXACT:
        return "leave-one-out"
    return f"{_JACKKNIFE_GROUPS} random groups of rows"


# ---------------------------------------------------------------------------
# resampling counts, not rows
#
# Without weights and with grouped ties, a stratified row bootstrap replicate
# draws each stratum's rows with replacement, so the number of draws landing in
# each *cell* (a set of rows: here the rows sharing a stratum and a score run,
# or a block of runs, in every column) is Multinomial(stratum size, cell size /
# stratum size), independently across strata (without strata: one multinomial
# over all cells with the total n).  Drawing those counts directly is the same
# distribution at O(cells) per replicate instead of O(n).
#
# When there are more cells than a budget (continuous scores: about one run per
# row), consecutive runs of each column are merged into *score blocks*, cut
# where the cumulative positives cross a multiple of P / B or the negatives a
# multiple of N / B (at most 2B + 1 blocks, each holding at most 1/B of either
# class unless one run holds more; as :mod:`precall.stats.bands`), and also
# where ``H * log2(1 + count above)`` of either class crosses an integer, with
# H = floor(B / 128) slots per doubling, and never within the first 128 rows of
# either class: the top of the ranking, where the highest precisions (the
# envelope at recall 0 of voc2007, voc2010, coco) are decided by a few rows,
# keeps its runs (with B = 8192 blocks then hold at most 1.1% of the count
# above; about 256 + H log2(n) more blocks per class).  B halves until the joint
# cells of all the columns fit the budget.
_MIN_BLOCKS = 64  # B below this (slots of each class per column) is refused: too coarse
_TOP = 128  # runs above which fewer than this many of either class lie are never merged


def _run_counts(col: RankedColumn) -> np.ndarray:
    """Rows per run (runs in decreasing score order) and class: (runs, 2), negatives then positives."""
    return np.bincount(col.code, minlength=2 * col.n_runs).reshape(col.n_runs, 2)


def _blocks_of_runs(counts: np.ndarray, blocks: int | None) -> tuple[np.ndarray, int]:
    """Each run's block and the number of blocks, from :func:`_run_counts`;
    ``blocks=None``: every run its own block."""
    n_runs = counts.shape[0]
    if blocks is None:
        return np.arange(n_runs, dtype=np.int64), n_runs
    before = np.cumsum(counts, axis=0) - counts  # (runs, 2): negatives, positives above each run
    total = np.maximum(counts.sum(axis=0), 1)
    key = before * blocks // total  # the (negative, positive) slot where each run starts
    head = np.floor(blocks // 128 * np.log2(1.0 + before)).astype(np.int64)  # finer at the top
    head = np.where(before < _TOP, before, head + _TOP)  # the top runs stay exact
    starts = np.ones(n_runs, dtype=bool)
    starts[1:] = (key[1:] != key[:-1]).any(axis=1) | (head[1:] != head[:-1]).any(axis=1)
    block = np.cumsum(starts) - 1
    return block, int(block[-1]) + 1


@dataclass(frozen=True)
class CellDesign:
    """The cells a counts replicate draws, and how each column reads them.

    ``cell`` (n,) is each row's cell; ``size`` (C,) the rows per cell;
    ``stratum_cells`` the cells of each stratum (one entry without strata);
    ``codes[k]`` (C,) the code ``2 * block + is_positive`` of each cell in
    column ``k``, ``widths[k]`` that column's number of blocks; ``exact`` is
    False when runs were merged into blocks.
    """

    cell: np.ndarray
    size: np.ndarray
    stratum_cells: list[np.ndarray]
    codes: list[np.ndarray]
    widths: list[int]
    exact: bool

    @property
    def n_cells(self) -> int:
        return int(self.size.shape[0])

    @property
    def n_blocks(self) -> int:
        """The most blocks (or runs) of any column."""
        return max(self.widths)


def _dense(key: np.ndarray, bound: int) -> tuple[np.ndarray, int]:
    """``key`` (values below ``bound``) renumbered 0.. in increasing order, and the count."""
    if bound <= max(4 * key.shape[0], 1 << 20):
        present = np.bincount(key, minlength=bound) > 0
        ids = np.cumsum(present) - 1
        return ids[key], int(ids[-1]) + 1 if bound else 0
    values, inverse = np.unique(key, return_inverse=True)
    return inverse.astype(np.int64, copy=False), int(values.shape[0])


def _joint_cells(cols: list[RankedColumn], run_counts: list[np.ndarray], stratum: np.ndarray | None,
                 blocks: int | None, max_cells: int) -> tuple[np.ndarray, int, list[np.ndarray], list[int]] | None:
    """Each row's joint cell (dense ids), the number of cells and, per column, each
    row's blocked code; None as soon as the cells cannot fit ``max_cells``."""
    runs = [_blocks_of_runs(counts, blocks) for counts in run_counts]
    if max(width for _, width in runs) > max_cells:  # a column's blocks alone are too many
        return None
    n = cols[0].code.shape[0]
    step = n // (8 * max_cells)
    if len(cols) > 1 and step > 1 and _cells(cols, runs, stratum, slice(None, None, step), max_cells) is None:
        return None  # a sample of the rows already has too many cells
    return _cells(cols, runs, stratum, slice(None), max_cells)


def _cells(cols: list[RankedColumn], runs: list[tuple[np.ndarray, int]], stratum: np.ndarray | None,
           rows: slice, max_cells: int) -> tuple[np.ndarray, int, list[np.ndarray], list[int]] | None:
    n = cols[0].code[rows].shape[0]
    key = np.zeros(n, dtype=np.int64) if stratum is None else stratum[rows].astype(np.int64)
    n_keys = 1 if stratum is None else int(stratum.max()) + 1
    row_codes, widths = [], []
    for col, (block, width) in zip(cols, runs):
        run_code = col.code[rows]
        code = 2 * block[run_code >> 1] + (run_code & 1)
        key, n_keys = _dense(key * (2 * width) + code, n_keys * 2 * width)  # dense: no overflow
        if n_keys > max_cells:
            return None
        row_codes.append(code)
        widths.append(width)
    return key, n_keys, row_codes, widths


def count_design(cols: list[RankedColumn], stratum: np.ndarray | None, max_cells: int) -> CellDesign:
    """The cells of the rows over the columns (all ranked from the same rows):
    every run its own block when the joint cells fit ``max_cells``, else score
    blocks, halving until they fit.  ``stratum`` (n,) dense stratum ids or None."""
    blocks: int | None = None
    run_counts = [_run_counts(col) for col in cols]
    # the first blocked try: a column's blocks alone fit; joint cells grow like the product
    # of the columns' blocks, so start near the K-th root of the budget
    start = max_cells // 4 if len(cols) == 1 else 1 << int(np.log2(4 * max_cells ** (1 / len(cols))))
    while True:
        joint = _joint_cells(cols, run_counts, stratum, blocks, max_cells)
        if joint is not None:
            cell, n_cells, row_codes, widths = joint
            break
        blocks = max(start, 1) if blocks is None else blocks // 2
        if blocks < _MIN_BLOCKS:
            raise ValueError(_too_many_cells(cols, run_counts, stratum, max_cells))
    size = np.bincount(cell, minlength=n_cells)
    row_of = np.empty(n_cells, dtype=np.int64)
    row_of[cell] = np.arange(cell.shape[0], dtype=np.int64)  # a row of each cell (all alike)
    codes = [c[row_of] for c in row_codes]
    if stratum is None:
        stratum_cells = [np.arange(n_cells)]
    else:
        s = stratum[row_of]
        stratum_cells = [np.flatnonzero(s == k) for k in range(int(stratum.max()) + 1)]
    return CellDesign(cell, size, stratum_cells, codes, widths, blocks is None)


def blocked_column(col: RankedColumn, max_runs: int) -> RankedColumn:
    """``col`` with consecutive runs merged into score blocks (the cuts of :func:`_blocks_of_runs`,
    B halving from ``max_runs // 2`` to :data:`_MIN_BLOCKS`) until it has at most ``max_runs``;
    ``col`` itself when it fits."""
    if col.n_runs <= max_runs:
        return col
    counts = _run_counts(col)
    blocks = 1 << max(int(np.log2(max(max_runs // 2, 1))), 0)
    while True:
        block, width = _blocks_of_runs(counts, blocks)
        if width <= max_runs or blocks <= _MIN_BLOCKS:
            break
        blocks //= 2
    return RankedColumn(2 * block[col.code >> 1] + (col.code & 1), width)


def full_steps(col: RankedColumn) -> Steps:
    """The steps of the data itself (every row once): a batch of one."""
    return _steps(np.bincount(col.code, minlength=2 * col.n_runs), 1, col.n_runs)


def _too_many_cells(cols: list[RankedColumn], run_counts: list[np.ndarray], stratum: np.ndarray | None,
                    max_cells: int) -> str:
    """Why ``resample="counts"`` is refused: how many cells the coarsest blocks still make, and what to pass."""
    joint = _joint_cells(cols, run_counts, stratum, _MIN_BLOCKS, 1 << 62)
    needed = joint[1] if joint is not None else max_cells + 1
    what = (f"the {len(cols)} score columns rank the rows so differently that their joint cells"
            if len(cols) > 1 else "the score column's blocks")
    return (
        f"`max_cells` must be at least {needed} for resample='counts' on this data; got {max_cells}: "
        f"even at the coarsest score blocks ({_MIN_BLOCKS} per class and column, the top {_TOP} rows "
        f"of each class kept apart) {what} number {needed}. Pass max_cells={needed} or more "
        "(memory and time grow with it), or use resample='rows'"
    )


def cell_steps(design: CellDesign, counts: np.ndarray) -> list[Steps]:
    """Each column's steps from ``counts`` (m, C) of the cells."""
    out = []
    for code, width in zip(design.codes, design.widths):
        per_code = np.zeros((counts.shape[0], 2 * width), dtype=counts.dtype)
        order = np.argsort(code, kind="stable")
        sorted_code = code[order]
        starts = np.flatnonzero(np.r_[True, sorted_code[1:] != sorted_code[:-1]])
        per_code[:, sorted_code[starts]] = np.add.reduceat(counts[:, order], starts, axis=1)
        out.append(_steps(per_code, counts.shape[0], width))
    return out


def draw_counts(rng: np.random.Generator, design: CellDesign, n_resamples: int) -> Iterator[np.ndarray]:
    """Blocks of replicates as cell counts (m, C): per stratum one multinomial
    of the stratum's size over its cells, in proportion to their sizes."""
    per_block = max(1, min(n_resamples, _CELLS // max(design.n_cells, 1)))
    for start in range(0, n_resamples, per_block):
        m = min(per_block, n_resamples - start)
        counts = np.zeros((m, design.n_cells), dtype=np.int64)
        for cells in design.stratum_cells:
            size = design.size[cells]
            total = int(size.sum())
            counts[:, cells] = rng.multinomial(total, size / total, size=m)
        yield counts


def leave_out_cells(design: CellDesign, members: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """Cell counts (g, C) of the data less each group (the next ``sizes[g]`` rows of ``members``)."""
    g, c = sizes.shape[0], design.n_cells
    group = np.repeat(np.arange(g, dtype=np.int64), sizes)
    removed = np.bincount(design.cell[members] + group * c, minlength=g * c).reshape(g, c)
    return design.size[None, :] - removed
