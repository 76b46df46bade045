"""Evaluation at scale: exact streaming (:class:`Accumulator`, per slice :class:`SlicedAccumulator`), binned bounds
(:mod:`.binned`), and the score-range algorithm behind :mod:`precall.dask` (:mod:`.ranges`).
"""

from __future__ import annotations

from .accumulator import Accumulator
from .binned import Bounded
from .sliced import SlicedAccumulator

__all__ = ["Accumulator", "Bounded", "SlicedAccumulator"]
