"""Intervals and comparisons per slice: is the model worse for this group than for the others?

:func:`compare_slices` gives, for every slice of ``by`` (:func:`precall.slices.slice_codes`):

* its ROC-AUC with DeLong's interval (:func:`precall.stats.roc_auc_ci` of its rows);
* its AP with the bootstrap interval of its rows (:func:`precall.stats.bootstrap_ci`:
  stratified by class within the slice, ``resample="auto"``, :data:`DEFAULT_RESAMPLES`);
* the slice against the rest of the rows (disjoint samples): the ROC-AUC difference by
  DeLong's unpaired test (pROC's ``roc.test(paired = FALSE)``) and the AP difference from the
  two independent bootstraps (the slice's and the rest's replicates subtracted in draw
  order), each with an interval, the ratio with an interval, a p-value and the p-values
  Holm-adjusted across the slices tested;
* the slices ranked worst first (by AP; undefined slices and those under ``min_support``
  rows reported, not ranked).

:meth:`SliceComparison.compare` compares two named slices from the same replicates.

**Seeds.**  Slice ``i`` (its index in ``slices``) is resampled with
``numpy.random.SeedSequence(random_state, spawn_key=(i,))`` and the rest of the rows
against it with ``spawn_key=(i, 1)``, so ``stats.bootstrap_ci(metric, y[mask], s[mask],
random_state=np.random.SeedSequence(random_state, spawn_key=(i,)))`` reproduces the slice's
interval exactly (:func:`slice_seed`).  ``random_state=None`` draws fresh entropy; a
``Generator`` gives one integer of entropy first.

**Cost.**  Each slice costs two bootstraps drawn as counts (``resample="auto"``; the one AP
convention asked for): its own rows' and the rest's.  The rest holds about all the rows, so
its cells reach ``max_cells`` (32768) from about 3e4 rows on: about 3 s a slice at the
default 2000 resamples, whatever the number of rows beyond that, i.e. time linear in the
number of slices.  At most :data:`MAX_SLICES` slices are compared (a ValueError says how
to ask for fewer); ``progress`` reports the fraction done and can stop the work.
"""

from __future__ import annotations

import functools
import math
import textwrap
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .. import metrics
from .._core.normal import isf
from .._core.text import clip, columns, pad, visible
from .._core.validate import AP_METHODS, check_binary, check_choice, check_number
from ..slices import slice_codes, slice_dicts, slices_frame
from .bootstrap import DEFAULT_RESAMPLES, DEFAULT_SEED, _check_progress, bootstrap_ci, interval_p_value
from .delong import _delong, unpaired_delong
from .results import _check_level, _check_random_state, _normal_interval

__all__ = ["SliceComparison", "SlicePair", "compare_slices", "holm", "slice_seed"]

REFERENCES = ("rest",)
MAX_SLICES = 1000
"""The most slices resampled one by one (each a bootstrap of its rows, and in :func:`compare_slices`
one of the rest of the rows too): :func:`compare_slices` and the command line's per-slice intervals."""


def holm(p_values: Any) -> np.ndarray:
    """Holm's step-down adjustment of p-values (NaN left out and kept NaN).

    ``p_(k)`` (sorted increasingly, ``k = 1..m``) becomes ``max_{j <= k} min(1, (m - j + 1) p_(j))``.

    Parameters
    ----------
    p_values : array-like
        Unadjusted p-values (NaN: not tested, left out of ``m``).

    Returns
    -------
    ndarray
        The adjusted p-values, in the input's order.

    See Also
    --------
    compare_slices : Holm-adjusted tests of every slice against the rest.

    Examples
    --------
    >>> holm([0.01, 0.04, float("nan"), 0.03]).round(2).tolist()
    [0.03, 0.06, nan, 0.06]
    """
    p = np.asarray(p_values, dtype=np.float64)
    out = np.full(p.shape, np.nan)
    idx = np.flatnonzero(~np.isnan(p))
    if not idx.size:
        return out
    order = idx[np.argsort(p[idx], kind="stable")]
    m = order.shape[0]
    scaled = np.minimum(1.0, (m - np.arange(m)) * p[order])
    out[order] = np.maximum.accumulate(scaled)
    return out


def slice_seed(random_state: Any, index: int, rest: bool = False) -> np.random.SeedSequence:
    """The seed of slice ``index`` (or of the rest of the rows against it) for ``random_state``
    (an integer entropy; see the module docstring).

    Parameters
    ----------
    random_state : int
        The comparison's seed.
    index : int
        The slice's position in the result.
    rest : bool, default=False
        The seed of the rest of the rows (the slice's reference) instead.

    Returns
    -------
    numpy.random.SeedSequence
        Pass it as ``random_state`` to :func:`bootstrap_ci` on the slice's rows to reproduce its interval.

    See Also
    --------
    compare_slices : where the seeds are used.
    """
    return np.random.SeedSequence(random_state, spawn_key=(index, 1) if rest else (index,))


def _entropy(random_state: Any) -> int:
    state = _check_random_state(random_state)
    if state is None:
        return int(np.random.SeedSequence().entropy)  # type: ignore[arg-type]
    if isinstance(state, (int, np.integer)):
        return int(state)
    return int(np.random.default_rng(state).integers(2**63))


def _bootstrap_p(diff: np.ndarray) -> float:
    """Two-sided p-value of a difference from its replicates, by the one rule of
    :func:`precall.stats.bootstrap_tests` (the smallest ``1 - level`` whose percentile
    interval excludes 0, at least one over the replicates); NaN without replicates."""
    if not np.any(~np.isnan(diff)):
        return math.nan
    return interval_p_value(diff, None, None, "percentile")[0]


def _percentiles(values: np.ndarray, level: float) -> tuple[float, float]:
    v = values[~np.isnan(values)]
    if not v.size:
        return math.nan, math.nan
    low, high = np.quantile(v, [(1.0 - level) / 2.0, (1.0 + level) / 2.0])
    return float(low), float(high)


def _log_ratio_interval(a: float, var_a: float, b: float, var_b: float, level: float) -> tuple[float, float, float]:
    """``a / b`` and its interval from the delta method on ``log(a / b)`` (independent a, b)."""
    if not (a > 0 and b > 0) or math.isnan(var_a + var_b):
        return (a / b if b else math.nan), math.nan, math.nan
    half = isf((1.0 - level) / 2.0) * math.sqrt(var_a / a**2 + var_b / b**2)
    r = a / b
    return r, r * math.exp(-half), r * math.exp(half)


@dataclass(frozen=True)
class SlicePair:
    """One slice against another sample (the rest, or another slice): differences ``a - b``
    and ratios ``a / b`` with intervals and two-sided p-values, for AP and ROC-AUC."""

    a: str
    b: str
    ap_difference: float
    ap_difference_low: float
    ap_difference_high: float
    ap_ratio: float
    ap_ratio_low: float
    ap_ratio_high: float
    ap_p_value: float
    auc_difference: float
    auc_difference_low: float
    auc_difference_high: float
    auc_ratio: float
    auc_ratio_low: float
    auc_ratio_high: float
    auc_p_value: float
    level: float

    def __str__(self) -> str:
        return (f"{visible(self.a)} - {visible(self.b)}: AP {self.ap_difference:+.4f} [{self.ap_difference_low:+.4f}, "
                f"{self.ap_difference_high:+.4f}] p={self.ap_p_value:.3g}; ROC-AUC {self.auc_difference:+.4f} "
                f"[{self.auc_difference_low:+.4f}, {self.auc_difference_high:+.4f}] p={self.auc_p_value:.3g}")


@dataclass(frozen=True)
class _Sample:
    ap: float
    ap_low: float
    ap_high: float
    replicates: np.ndarray
    auc: float
    auc_var: float
    auc_low: float
    auc_high: float
    n: int


@dataclass(frozen=True)
class SliceComparison:
    """Every slice's AP and ROC-AUC with intervals, and each slice against the rest.

    Attributes
    ----------
    names, keys, columns, n_samples, n_pos : the slices (as :class:`precall.SlicedEvaluation`)
    ap, ap_low, ap_high : ndarray
        The AP (``method``) of each slice and its bootstrap interval.
    auc, auc_low, auc_high : ndarray
        ROC-AUC and DeLong's interval.
    vs_rest : tuple of SlicePair
        Each slice against the rest of the rows.
    ap_p_holm, auc_p_holm : ndarray
        The vs-rest p-values Holm-adjusted across the slices tested.
    ranked : ndarray
        Slices ranked worst first by AP (defined, at least ``min_support`` rows).
    """

    names: tuple[str, ...]
    keys: tuple[tuple[Any, ...], ...]
    columns: tuple[str, ...]
    n_samples: np.ndarray
    n_pos: np.ndarray
    method: str
    level: float
    n_resamples: int
    random_state: int
    min_support: int
    ap: np.ndarray
    ap_low: np.ndarray
    ap_high: np.ndarray
    auc: np.ndarray
    auc_low: np.ndarray
    auc_high: np.ndarray
    vs_rest: tuple[SlicePair, ...]
    ap_p_holm: np.ndarray
    auc_p_holm: np.ndarray
    ranked: np.ndarray
    _samples: tuple[_Sample, ...] = field(repr=False, default=())

    def index(self, name: Any) -> int:
        """The index of a slice by name."""
        if name in self.names:
            return self.names.index(name)
        raise KeyError(f"no slice {visible(str(name))!r:.80}; the slices are "
                       f"{', '.join(map(repr, self.names[:5]))}" + (", ..." if len(self.names) > 5 else ""))

    def compare(self, a: Any, b: Any) -> SlicePair:
        """Slice ``a`` against slice ``b`` (disjoint): DeLong's unpaired test for ROC-AUC, the two
        slices' own bootstrap replicates for AP."""
        i, j = self.index(a), self.index(b)
        return _pair(self.names[i], self.names[j], self._samples[i], self._samples[j], self.level)

    def _table(self) -> tuple[list[str], list[list[Any]]]:
        header = ["slice", "n", "n_pos", "AP", "AP low", "AP high", "ROC-AUC", "AUC low", "AUC high",
                  "AP - rest", "AP diff low", "AP diff high", "AP ratio", "AP p", "AP p Holm",
                  "AUC - rest", "AUC diff low", "AUC diff high", "AUC ratio", "AUC p", "AUC p Holm"]
        rows = []
        for i, name in enumerate(self.names):
            r = self.vs_rest[i]
            rows.append([name, int(self.n_samples[i]), int(self.n_pos[i]), float(self.ap[i]), float(self.ap_low[i]),
                         float(self.ap_high[i]), float(self.auc[i]), float(self.auc_low[i]), float(self.auc_high[i]),
                         r.ap_difference, r.ap_difference_low, r.ap_difference_high, r.ap_ratio, r.ap_p_value,
                         float(self.ap_p_holm[i]), r.auc_difference, r.auc_difference_low, r.auc_difference_high,
                         r.auc_ratio, r.auc_p_value, float(self.auc_p_holm[i])])
        return header, rows

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: the settings, every slice's row (``{"slice": name, "by_values": {column: value},
        <numbers>}`` as :meth:`precall.SlicedEvaluation.to_dict` gives them), the ranking worst first."""
        header, rows = self._table()
        return {"by": list(self.columns), "method": self.method, "level": self.level,
                "n_resamples": self.n_resamples, "random_state": self.random_state, "min_support": self.min_support,
                "slices": slice_dicts(header, rows, self.keys, self.columns),
                "ranked_worst_first": [self.names[i] for i in self.ranked]}

    def to_frame(self) -> Any:
        """A pandas DataFrame, one row per slice, indexed by the slices' values as
        :meth:`precall.SlicedEvaluation.to_frame` (one level per ``by`` column; a ``slice`` column
        with the names); needs the ``pandas`` extra."""
        header, rows = self._table()
        return slices_frame(header, rows, self.keys, self.columns)

    def to_text(self, k: int = 5, width: int = 80) -> str:
        """At most ``width`` columns: the ``k`` worst and ``k`` best ranked slices with their
        intervals and the Holm-adjusted p-values against the rest."""
        k = check_number(k, "k", low=1, integer=True, hint="how many worst and best slices to print")
        ranked = self.ranked.tolist()
        picked = ranked if len(ranked) <= 2 * k else ranked[:k] + [-1] + ranked[-k:]
        name_w = max(5, min(16, max((columns(visible(n)) for n in self.names), default=5)))
        pct = f"{self.level:.0%}"
        lines = [*textwrap.wrap(f"{len(self.names)} slices by {', '.join(map(visible, self.columns))}; AP "
                                f"({self.method}) bootstrap and ROC-AUC DeLong {pct} intervals; vs the rest, worst "
                                "first", width),
                 f"{'slice':<{name_w}} {'n':>7} {'AP [interval]':>21} {'-rest':>7} {'pHolm':>6} "
                 f"{'ROC-AUC':>7} {'-rest':>7} {'pHolm':>6}"]
        for i in picked:
            if i < 0:
                lines.append(f"{'...':<{name_w}}  ({len(ranked) - 2 * k} more ranked slices)")
                continue
            name = pad(clip(visible(self.names[i]), name_w), name_w)
            r = self.vs_rest[i]
            lines.append(f"{name} {int(self.n_samples[i]):>7} {self.ap[i]:>6.4f} "
                         f"[{self.ap_low[i]:.4f},{self.ap_high[i]:.4f}] {r.ap_difference:>+7.4f} "
                         f"{_p(self.ap_p_holm[i]):>6} {self.auc[i]:>7.4f} {r.auc_difference:>+7.4f} "
                         f"{_p(self.auc_p_holm[i]):>6}")
        unranked = len(self.names) - len(ranked)
        if unranked:
            lines.append(f"{unranked} slice(s) not ranked (undefined, or fewer than min_support="
                         f"{self.min_support} rows)")
        return "\n".join(clip(line, width, "") for line in lines)

    def __str__(self) -> str:
        return self.to_text()


def _p(p: float) -> str:
    return "nan" if math.isnan(p) else ("<1e-4" if p < 1e-4 else f"{p:.4f}")


def _pair(a: str, b: str, x: _Sample, y: _Sample, level: float) -> SlicePair:
    d = x.replicates - y.replicates if x.replicates.size and y.replicates.size else np.zeros(0)
    d_low, d_high = _percentiles(d, level)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio_reps = x.replicates / y.replicates if d.size else np.zeros(0)
    r_low, r_high = _percentiles(ratio_reps[np.isfinite(ratio_reps)] if d.size else d, level)
    auc = unpaired_delong(x.auc, x.auc_var, x.n, y.auc, y.auc_var, y.n, level)
    ratio, ar_low, ar_high = _log_ratio_interval(x.auc, x.auc_var, y.auc, y.auc_var, level)
    with np.errstate(divide="ignore", invalid="ignore"):
        ap_ratio = x.ap / y.ap if y.ap else math.nan
    return SlicePair(a, b, x.ap - y.ap, d_low, d_high, ap_ratio, r_low, r_high, _bootstrap_p(d),
                     auc.difference, auc.low, auc.high, ratio, ar_low, ar_high, auc.p_value, level)


def _sample(y: np.ndarray, s: np.ndarray, metric: Any, n_resamples: int, level: float, seed: Any,
            progress: Any = None) -> _Sample:
    """One sample's AP interval (bootstrap; ``progress`` as :func:`bootstrap_ci` takes it) and
    ROC-AUC with DeLong's variance; NaN where undefined."""
    pos = int(np.sum(y))
    neg = y.shape[0] - pos
    if pos == 0:
        ap, low, high, reps = math.nan, math.nan, math.nan, np.zeros(0)
    else:
        ci = bootstrap_ci(metric, y, s, n_resamples=n_resamples, level=level, random_state=seed,
                          progress=progress)
        ap, low, high, reps = ci.estimate, ci.low, ci.high, ci.replicates
    if pos < 2 or neg < 2:
        auc = metrics.roc_auc(y, s, pos_label=1, on_undefined="nan") if pos and neg else math.nan
        return _Sample(ap, low, high, reps, auc, math.nan, math.nan, math.nan, y.shape[0])
    data = check_binary(y, s, None, 1)
    auc, var = _delong(data, "nan")
    lo, hi = _normal_interval(auc, math.sqrt(var), level)
    return _Sample(ap, low, high, reps, auc, var, max(lo, 0.0), min(hi, 1.0), y.shape[0])


def _part(progress: Any, k: int, parts: int) -> Any:
    """``progress`` of the whole for part ``k`` of ``parts`` equal parts (None: None)."""
    if progress is None:
        return None
    return lambda done: progress((k + done) / parts)


def compare_slices(
    y_true: Any,
    y_score: Any,
    *,
    by: Any,
    method: str = "step",
    pos_label: Any = None,
    level: float = 0.95,
    n_resamples: int = DEFAULT_RESAMPLES,
    random_state: Any = DEFAULT_SEED,
    min_support: int = 0,
    reference: str = "rest",
    progress: Any = None,
) -> SliceComparison:
    """Per-slice intervals of AP and ROC-AUC and each slice against the rest of the rows.

    Parameters
    ----------
    y_true, y_score, pos_label
        Binary input as :func:`precall.evaluate` takes it (no ``sample_weight``: DeLong
        takes none).
    by : array-like, several of them, a dict or a pandas DataFrame
        The slice of every row (as :func:`precall.evaluate`'s ``by``).
    method : str, default="step"
        The AP convention (:data:`precall.AP_METHODS`).
    level : float, default=0.95
    n_resamples : int, default=2000
        Bootstrap resamples of each slice and of each slice's rest.
    random_state : int, None or Generator, default=0
        The entropy every slice's seed derives from (module docstring, :func:`slice_seed`).
    min_support : int, default=0
        Slices with fewer rows are reported but not ranked (nor counted in Holm's adjustment).
    reference : {"rest"}, default="rest"
        What each slice is compared with: the rows of every other slice (a disjoint sample).
    progress : callable, default=None
        Called with the fraction of the work done (0 to 1) after each block of replicates of
        each slice and of its rest (a progress bar, or a way to stop: raise from it).

    Raises
    ------
    ValueError
        For more than :data:`MAX_SLICES` slices: each costs two bootstraps (the slice's rows and
        the rest's, about 3 s at 2000 resamples and 1e5 rows; module docstring), so group rare
        values of ``by`` together (or leave their rows out) first.

    Returns
    -------
    SliceComparison

    See Also
    --------
    roc_auc_test_unpaired : the test of one slice against the rest for ROC-AUC.
    precall.evaluate : ``by=`` gives every number of every slice without intervals.

    Examples
    --------
    >>> import numpy as np, precall
    >>> from precall import stats
    >>> rng = np.random.default_rng(0)
    >>> g = np.repeat(["a", "b", "c"], 200)
    >>> y = (rng.random(600) < 0.4).astype(int)
    >>> s = y * np.array([1.5, 1.0, 0.2]).repeat(200) + rng.standard_normal(600)
    >>> c = stats.compare_slices(y, s, by=g, n_resamples=200)
    >>> [c.names[i] for i in c.ranked]   # worst first
    ['c', 'b', 'a']
    >>> bool(c.auc_p_holm[2] < 0.05)
    True
    """
    check_choice(method, "method", AP_METHODS)
    check_choice(reference, "reference", REFERENCES)
    level = _check_level(level)
    n_resamples = check_number(n_resamples, "n_resamples", low=2, integer=True, hint="e.g. 2000")
    min_support = check_number(min_support, "min_support", low=0, integer=True,
                               hint="slices with fewer rows are reported but not ranked")
    progress = _check_progress(progress)
    entropy = _entropy(random_state)
    data = check_binary(y_true, y_score, None, pos_label)
    codes = slice_codes(by, data.n_samples)
    check_number(codes.m, "the number of slices", low=0, high=MAX_SLICES, integer=True,
                 hint="each slice costs a bootstrap of its rows and one of the rest of the rows; group "
                 "rare values of `by` together (or leave their rows out) to compare fewer slices")
    y = data.positive.astype(np.int64)
    s = data.scores
    metric = functools.partial(metrics.average_precision, method=method)
    order = np.argsort(codes.codes, kind="stable")
    bounds = np.concatenate([[0], np.cumsum(codes.rows())])
    samples, pairs = [], []
    for i in range(codes.m):
        rows = order[bounds[i]:bounds[i + 1]]
        rest = np.ones(y.shape[0], dtype=bool)
        rest[rows] = False
        own = _sample(y[rows], s[rows], metric, n_resamples, level, slice_seed(entropy, i),
                      _part(progress, 2 * i, 2 * codes.m))
        if rest.any():
            other = _sample(y[rest], s[rest], metric, n_resamples, level, slice_seed(entropy, i, rest=True),
                            _part(progress, 2 * i + 1, 2 * codes.m))
        else:
            other = _Sample(*([math.nan] * 3), np.zeros(0), *([math.nan] * 4), 0)
        samples.append(own)
        pairs.append(_pair(codes.names[i], "rest", own, other, level))
    n_samples = np.diff(bounds)
    n_pos = np.bincount(codes.codes, weights=y, minlength=codes.m).astype(np.int64)
    ap = np.array([x.ap for x in samples])
    ok = ~np.isnan(ap) & (n_samples >= min_support)
    tested = np.where(ok, [p.ap_p_value for p in pairs], np.nan)
    tested_auc = np.where(ok, [p.auc_p_value for p in pairs], np.nan)
    idx = np.flatnonzero(ok)
    ranked = idx[np.argsort(ap[idx], kind="stable")]
    return SliceComparison(
        codes.names, codes.keys, codes.columns, n_samples, n_pos, method, level, int(n_resamples), entropy,
        int(min_support), ap, np.array([x.ap_low for x in samples]), np.array([x.ap_high for x in samples]),
        np.array([x.auc for x in samples]), np.array([x.auc_low for x in samples]),
        np.array([x.auc_high for x in samples]), tuple(pairs), holm(tested), holm(tested_auc), ranked,
        tuple(samples),
    )
