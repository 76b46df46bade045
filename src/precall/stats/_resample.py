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

__all__ = [
    "Draws",
    "RankedColumn",
    "draw_blocks",
    "jackknife_groups",
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
    rng: np.random.Generator, n: int
) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """Blocks of jackknife groups as (members, sizes): leave-one-out for up to
    2000 rows, else 1000 groups of a random partition of the rows."""
    if n <= _JACKKNIFE_EXACT:
        members, sizes = np.arange(n, dtype=np.int64), np.ones(n, dtype=np.int64)
    else:
        members = rng.permutation(n).astype(np.int64)
        sizes = np.diff(np.linspace(0, n, _JACKKNIFE_GROUPS + 1).round().astype(np.int64))
    bounds = np.concatenate([[0], np.cumsum(sizes)])
    per_block = max(1, _CELLS // max(2 * n, 1))  # a group's counts span up to 2n cells
    for g0 in range(0, sizes.shape[0], per_block):
        g1 = min(g0 + per_block, sizes.shape[0])
        yield members[bounds[g0] : bounds[g1]], sizes[g0:g1]


def jackknife_description(n: int) -> str:
    """How :func:`jackknife_groups` splits ``n`` rows, for result objects."""
    if n <= _JACKKNIFE_EXACT:
        return "leave-one-out"
    return f"{_JACKKNIFE_GROUPS} random groups of rows"
