"""Evaluation at scale: exact streaming (:class:`Accumulator`), binned bounds
(:mod:`.binned`), and the score-range algorithm behind :mod:`precall.dask` (:mod:`.ranges`).
"""

from __future__ import annotations

from .accumulator import Accumulator
from .binned import Bounded

__all__ = ["Accumulator", "Bounded"]
