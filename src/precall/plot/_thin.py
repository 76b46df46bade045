"""Thin a drawn curve to what the pixels can show, lossless for the eye.

A curve of a million thresholds has a million vertices, but a 500-pixel axis
shows at most a few thousand distinct positions.  :func:`thin` keeps a subset
of the vertices (the drawn points are always points of the full curve):

1. the corners: a vertex is dropped when its neighbours and it lie on one
   horizontal or one vertical line (scikit-learn's ``drop_intermediate``
   keeps exactly the turns of a ROC curve in the same way), or on one straight
   segment for a polyline;
2. a grid of square cells of side ``cell`` (data units; the axes span [0, 1])
   is laid over the plot, and of each run of consecutive vertices in the same
   cell only the first and the last are kept.  The path between them, a
   segment or the L of a step drawstyle, stays inside that cell, as do the
   vertices dropped, so every point of the full curve is within one cell
   diagonal (``cell * sqrt(2)``) of the thinned curve, and the other way round;
3. while more than ``budget`` vertices remain, ``cell`` doubles.

With the defaults (cell 1/2048, budget 4000) the bound is 6.9e-4 (a third of
a pixel of a 700-pixel axis) unless the budget forces a coarser grid; the
cell actually used is returned.  Only drawing uses the thinned points: every
number quoted (AP, AUC, intervals) comes from the full table.
"""

from __future__ import annotations

import numpy as np

__all__ = ["BUDGET", "CELL", "thin"]

BUDGET = 4000
CELL = 1.0 / 2048


def _corners(x: np.ndarray, y: np.ndarray, steps: bool) -> np.ndarray:
    """Indices of the vertices where the drawn path turns (first and last always)."""
    n = x.size
    if n <= 2:
        return np.arange(n)
    dx0, dx1 = x[1:-1] - x[:-2], x[2:] - x[1:-1]
    dy0, dy1 = y[1:-1] - y[:-2], y[2:] - y[1:-1]
    if steps:
        # a step path's middle vertex is redundant on one horizontal line, or on one
        # vertical line walked in one direction
        flat = (dy0 == 0) & (dy1 == 0)
        upright = (dx0 == 0) & (dx1 == 0) & (dy0 * dy1 >= 0)
        drop = flat | upright
    else:
        drop = (dx0 * dy1 - dy0 * dx1 == 0) & (dx0 * dx1 + dy0 * dy1 >= 0)
    keep = np.ones(n, dtype=bool)
    keep[1:-1] = ~drop
    return np.flatnonzero(keep)


def _cells(x: np.ndarray, y: np.ndarray, cell: float) -> np.ndarray:
    """Positions within ``x``/``y`` of the first and last vertex of each run in one cell."""
    n = x.size
    if n <= 2:
        return np.arange(n)
    cx = np.floor(x / cell)
    cy = np.floor(y / cell)
    change = (cx[1:] != cx[:-1]) | (cy[1:] != cy[:-1])
    keep = np.ones(n, dtype=bool)
    keep[1:] = change  # first of a run
    keep[:-1] |= change  # last of a run
    keep[-1] = True
    return np.flatnonzero(keep)


def thin(x: np.ndarray, y: np.ndarray, *, steps: bool = False, cell: float = CELL,
         budget: int = BUDGET) -> tuple[np.ndarray, float]:
    """Indices of the vertices of ``(x, y)`` to draw, and the cell side used.

    ``steps``: the curve is drawn with a step drawstyle (``steps-post`` /
    ``steps-pre``); otherwise as straight segments.  Curves of at most
    ``budget`` vertices are returned whole (``cell`` 0).
    """
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    if x.size <= budget:
        return np.arange(x.size), 0.0
    idx = _corners(x, y, steps)
    if idx.size <= budget:
        return idx, 0.0
    while True:
        kept = idx[_cells(x[idx], y[idx], cell)]
        if kept.size <= budget:
            return kept, cell
        cell *= 2
