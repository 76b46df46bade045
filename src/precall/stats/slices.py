"""Intervals and comparisons per slice: is the model worse for this group than for the others?

:func:`compare_slices` gives, for every slice of ``by`` (:func:`precall.slices.slice_codes`):

* its ROC-AUC with DeLong's interval (:func:`precall.stats.roc_auc_ci` of its rows; with
  ``sample_weight``, which DeLong does not take, the percentile interval of the slice's bootstrap);
* its AP with the bootstrap interval of its rows (:func:`precall.stats.bootstrap_ci` of them,
  ``resample="auto"``, :data:`DEFAULT_RESAMPLES`, not stratified by class: see **Strata**);
* the slice against a reference (``reference``), the difference and the ratio each with an
  interval, a two-sided p-value and the p-values Holm-adjusted across the slices ranked:

  - ``"rest"``, the rows of every other slice (a disjoint sample): ROC-AUC by DeLong's unpaired
    test (pROC's ``roc.test(paired = FALSE)``), AP from the two independent bootstraps (the
    slice's and the rest's replicates subtracted in draw order);
  - ``"overall"``, every row (the slice's rows among them, so the two estimates are correlated
    and an independent-samples test would be wrong): AP from one bootstrap stratified by slice,
    whose replicate draws the slice's rows and the rest's rows independently and takes their
    union as the overall replicate (``AP(slice*) - AP(slice* + rest*)``); ROC-AUC
    by DeLong's variance of ``AUC_slice - AUC_overall`` from the structural components of both,
    the shared cases' covariance included (:func:`precall.stats.delong.subset_delong`);

* the slices ranked worst first (by AP; undefined slices and those under ``min_support``
  rows reported, not ranked).

**Strata.**  A slice's rows are resampled as one stratum (the rest's likewise): a replicate's
positive count varies as the slice's own does from one sample of the population to another,
and the step AP moves with the prevalence, so the interval covers the slice's population AP
and the tests have their size (``benchmarks/sim_slice_coverage.py``: resampled within each
class too, the intervals covered 0.89-0.92 at 95% and the tests against all rows rejected
9-12% at 5% where the slices' positive counts vary).  ``stratified=True`` resamples each
class of each slice apart, as :func:`bootstrap_ci` does by default: the interval of the AP at
the slice's observed positive count.  DeLong's ROC-AUC variances are those of the class
counts observed (ROC-AUC does not move with the prevalence).  A replicate without a positive
(or, for ROC-AUC with weights, a negative) is undefined and left out of the percentiles.  A
slice (or a rest) with a single positive or a single negative has NaN bootstrap intervals and
comparisons, as its DeLong variance is NaN: the resamples only repeat that row
(:func:`bootstrap_ci`'s ``on_undefined``).

With ``sample_weight`` every interval and comparison is a bootstrap of the rows carrying their
weights (:func:`bootstrap_cis` of AP and ROC-AUC together; the counts bootstrap needs unweighted
rows): the slice's, and the rest's or the joint one as above; ``SliceComparison.describe``
says which method made each number.

:meth:`SliceComparison.compare` compares two named slices from the same replicates.

**Seeds.**  Slice ``i`` (its index in ``slices``) is resampled with
``numpy.random.SeedSequence(random_state, spawn_key=(i,))`` and its reference (the rest of the
rows, or the joint bootstrap against all rows) with ``spawn_key=(i, 1)``, so
``stats.bootstrap_ci(metric, y[mask], s[mask], random_state=np.random.SeedSequence(random_state,
spawn_key=(i,)))`` reproduces the slice's interval exactly whatever the reference
(:func:`slice_seed`).  ``random_state=None`` draws fresh entropy; a ``Generator`` gives one
integer of entropy first.

**Cost.**  Each slice costs two bootstraps drawn as counts (``resample="auto"``; the one AP
convention asked for): its own rows' and the reference's (the rest's rows, or every row).  The
reference holds about all the rows, so its cells reach ``max_cells`` (32768) from about 3e4
rows on: about 3 s a slice at the default 2000 resamples, whatever the number of rows beyond
that, i.e. time linear in the number of slices.  With weights both are drawn as rows: O(rows)
a resample.  At most :data:`MAX_SLICES` slices are compared (a ValueError says how to ask for
fewer); ``progress`` reports the fraction done and can stop the work.
"""

from __future__ import annotations

import functools
import math
import textwrap
from dataclasses import dataclass, field
from typing import Any, Literal, get_args

import numpy as np

from .. import metrics
from .._core.normal import isf, two_sided_p
from .._core.text import columns, fixed, legend, name_limit, percent, shortened, signed, table_lines, visible, wrap
from .._core.validate import AP_METHODS, check_binary, check_bool, check_choice, check_number
from ..slices import slice_codes, slice_dicts, slices_csv_text, slices_frame
from ._resample import (Draws, RankedColumn, cell_steps, count_design, draw_blocks, draw_counts, rank_column,
                        resample_steps)
from .bootstrap import (DEFAULT_RESAMPLES, DEFAULT_SEED, MAX_CELLS, _check_progress, bootstrap_cis,
                        interval_p_value)
from .delong import _delong, row_placements, subset_delong, unpaired_delong
from .results import _check_level, _check_random_state, _normal_interval

__all__ = ["REFERENCES", "Reference", "SliceComparison", "SlicePair", "compare_slices", "holm", "slice_seed"]

Reference = Literal["rest", "overall"]
REFERENCES: tuple[str, ...] = get_args(Reference)
"""What :func:`compare_slices` compares each slice with: the rest of the rows, or every row."""
MAX_SLICES = 1000
"""The most slices resampled one by one (each a bootstrap of its rows, and in :func:`compare_slices`
one of its reference too): :func:`compare_slices` and the command line's per-slice intervals."""


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
        The seed of the slice's reference instead: the bootstrap of the rest of the rows
        (``reference="rest"``), or the joint bootstrap of the slice's and the rest's rows
        (``reference="overall"``).

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
    interval excludes 0, at least one over the replicates; 1 when every replicate is 0); NaN
    without replicates."""
    finite = diff[~np.isnan(diff)]
    if not finite.size:
        return math.nan
    return interval_p_value(finite, None, None, "percentile")[0]


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
    return _ratio_interval(a / b, var_a / a**2 + var_b / b**2, level)


def _ratio_interval(ratio: float, log_variance: float, level: float) -> tuple[float, float, float]:
    """``ratio`` and its interval ``ratio * exp(-+ z sqrt(log_variance))``."""
    if math.isnan(log_variance) or not ratio > 0:
        return ratio, math.nan, math.nan
    half = isf((1.0 - level) / 2.0) * math.sqrt(log_variance)
    return ratio, ratio * math.exp(-half), ratio * math.exp(half)


# how each comparison was made (SlicePair.ap_method / auc_method)
INDEPENDENT = "bootstrap-independent"  # two samples' own bootstraps, replicates subtracted in draw order
JOINT = "bootstrap-joint"  # one bootstrap by slice: the slice's draws and, with the rest's, all rows'
UNPAIRED = "delong-unpaired"  # pROC's roc.test(paired = FALSE): DeLong variances of disjoint samples added
SUBSET = "delong-subset"  # DeLong's components of the slice and of all rows, their covariance included


@dataclass(frozen=True)
class SlicePair:
    """One slice against another sample (the rest, every row, or another slice): differences
    ``a - b`` and ratios ``a / b`` with intervals and two-sided p-values, for AP and ROC-AUC.

    ``ap_method`` and ``auc_method`` say how: ``"bootstrap-independent"`` (the two samples' own
    bootstraps), ``"bootstrap-joint"`` (one bootstrap of the slice and of all rows, the slice's
    draws part of all rows' draws), ``"delong-unpaired"`` (pROC's unpaired DeLong test: Student t
    with Welch-Satterthwaite df) or ``"delong-subset"`` (DeLong's variance of the slice's AUC minus
    all rows' AUC, normal z); bootstrap intervals are percentile intervals and their p-values come
    from the replicates (:func:`precall.stats.bootstrap_tests`' rule)."""

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
    ap_method: str = INDEPENDENT
    auc_method: str = UNPAIRED

    def __str__(self) -> str:
        return (f"{visible(self.a)} - {visible(self.b)}: AP {signed(self.ap_difference, 4)} "
                f"[{signed(self.ap_difference_low, 4)}, {signed(self.ap_difference_high, 4)}] p={self.ap_p_value:.3g}; "
                f"ROC-AUC {signed(self.auc_difference, 4)} [{signed(self.auc_difference_low, 4)}, "
                f"{signed(self.auc_difference_high, 4)}] p={self.auc_p_value:.3g}")


_NONE = np.zeros(0)


@dataclass(frozen=True)
class _Sample:
    ap: float
    ap_low: float
    ap_high: float
    replicates: np.ndarray
    auc: float
    auc_var: float  # DeLong's (NaN with weights: the bootstrap's replicates instead)
    auc_low: float
    auc_high: float
    n: int
    auc_replicates: np.ndarray = field(default_factory=lambda: _NONE, repr=False)  # with weights


_EMPTY = _Sample(math.nan, math.nan, math.nan, _NONE, math.nan, math.nan, math.nan, math.nan, 0)


@dataclass(frozen=True)
class SliceComparison:
    """Every slice's AP and ROC-AUC with intervals, and each slice against its reference.

    Attributes
    ----------
    names, keys, columns, n_samples, n_pos : the slices (as :class:`precall.SlicedEvaluation`: ``n_samples``
        counts the rows given, zero-weight rows too; ``n_pos`` the positive weight)
    method : str
        The AP convention.
    level, n_resamples, random_state : the intervals' level, resamples a bootstrap and entropy
        (slice ``i`` seeded :func:`slice_seed`); :attr:`seed` is ``random_state`` under the name
        the other results of :mod:`precall.stats` give their seed
    reference : {"rest", "overall"}
        What each slice is compared with: the rest of the rows, or every row.
    weighted : bool
        Whether ``sample_weight`` was given (every interval and comparison then a bootstrap).
    ap, ap_low, ap_high : ndarray
        The AP (``method``) of each slice and its bootstrap interval.
    auc, auc_low, auc_high : ndarray
        ROC-AUC and DeLong's interval (with weights: the bootstrap's).
    vs_reference : tuple of SlicePair
        Each slice against the reference (``b`` is ``"rest"`` or ``"overall"``).
    ap_p_holm, auc_p_holm : ndarray
        The p-values against the reference Holm-adjusted across the slices ranked.
    ranked : ndarray
        Slices ranked worst first by AP (defined, at least ``min_support`` rows).
    overall_ap, overall_auc : float
        AP (``method``) and ROC-AUC of every row (``precall.average_precision`` / ``roc_auc``
        of them; NaN where undefined): the reference line of :func:`precall.plot.forest`.
    stratified : bool
        Whether each slice's bootstrap was stratified by class too (module docstring, **Strata**).
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
    reference: str
    weighted: bool
    ap: np.ndarray
    ap_low: np.ndarray
    ap_high: np.ndarray
    auc: np.ndarray
    auc_low: np.ndarray
    auc_high: np.ndarray
    vs_reference: tuple[SlicePair, ...]
    ap_p_holm: np.ndarray
    auc_p_holm: np.ndarray
    ranked: np.ndarray
    _samples: tuple[_Sample, ...] = field(repr=False, default=())
    overall_ap: float = math.nan
    overall_auc: float = math.nan
    stratified: bool = False

    @property
    def seed(self) -> int:
        """The comparison's seed: ``random_state``, the entropy every slice's seed derives from
        (an int, drawn when None or a generator was given; :func:`slice_seed`)."""
        return self.random_state

    @property
    def vs_rest(self) -> tuple[SlicePair, ...]:
        """:attr:`vs_reference` of a comparison with the rest (``reference="rest"``)."""
        if self.reference != "rest":
            raise AttributeError(f"the slices were compared with {self.reference!r}, not the rest: "
                                 "read vs_reference")
        return self.vs_reference

    def index(self, name: Any) -> int:
        """The index of a slice by name."""
        if name in self.names:
            return self.names.index(name)
        raise KeyError(f"no slice {visible(str(name))!r:.80}; the slices are "
                       f"{', '.join(map(repr, self.names[:5]))}" + (", ..." if len(self.names) > 5 else ""))

    def compare(self, a: Any, b: Any) -> SlicePair:
        """Slice ``a`` against slice ``b`` (disjoint) from the slices' own intervals' draws: for
        ROC-AUC DeLong's unpaired test (with weights the two bootstraps), for AP the two
        bootstraps."""
        i, j = self.index(a), self.index(b)
        return _pair(self.names[i], self.names[j], self._samples[i], self._samples[j], self.level)

    def describe(self) -> str:
        """How every number was computed: the intervals' method, resamples and seeds, and the
        comparison with the reference."""
        seed = f"SeedSequence({self.random_state}, spawn_key=(i,))"
        strata = "slice and class" if self.stratified else "slice"
        drawn = ("rows carrying their weights" if self.weighted else
                 f"counts of each class's runs of tied scores, over score blocks above {MAX_CELLS} cells")
        auc = ("the percentile interval of the same bootstrap" if self.weighted else "DeLong's interval")
        if self.reference == "rest":
            versus = ("vs the rest of the rows (disjoint): AP by the rest's own bootstrap (seed spawn_key=(i, 1)), "
                      "the replicates subtracted in draw order; ROC-AUC by "
                      + ("the same bootstraps" if self.weighted else "DeLong's unpaired test (pROC, Student t)"))
        else:
            versus = (f"vs all rows (the slice among them): one bootstrap stratified by {strata} (seed "
                      "spawn_key=(i, 1)), the overall replicate the union of the slice's and the rest's draws, "
                      "for AP" + (" and ROC-AUC" if self.weighted else "; ROC-AUC by DeLong's variance of the "
                                  "difference from both AUCs' placements, the shared cases' covariance included "
                                  "(normal z)"))
        return (f"AP ({self.method}): percentile interval of {self.n_resamples} bootstrap resamples of each "
                f"slice's rows{' stratified by class' if self.stratified else ' (classes not stratified)'} "
                f"(slice i seeded {seed}; drawn as {drawn}); ROC-AUC: {auc}; "
                f"{versus}; differences and ratios with percentile intervals of the replicates"
                + ("" if self.weighted else " (delta-method ratio intervals for DeLong)")
                + "; p-values two-sided, Holm-adjusted across the ranked slices")

    def _footer(self) -> str:
        """The text's last words: resamples, seeds and the comparison's design (:meth:`describe` in full)."""
        if self.reference == "rest":
            design = "AP by independent bootstraps, ROC-AUC by " + ("them too" if self.weighted else "unpaired DeLong")
        else:
            design = ("AP by one bootstrap of the slice and the rest, all rows their union; ROC-AUC by "
                      + ("it too" if self.weighted else "DeLong with the shared cases' covariance"))
        design += "; strata: slice and class" if self.stratified else ""
        return (f"{self.n_resamples} resamples a slice and its reference{' (weighted rows)' if self.weighted else ''}, "
                f"seed {self.random_state} (slice i: spawn_key (i,), its reference (i, 1)); {design}; p Holm-adjusted")

    def _table(self) -> tuple[list[str], list[list[Any]]]:
        ref = self.reference
        header = ["slice", "n", "n_pos", "AP", "AP low", "AP high", "ROC-AUC", "AUC low", "AUC high",
                  f"AP - {ref}", "AP diff low", "AP diff high", "AP ratio", "AP p", "AP p Holm",
                  f"AUC - {ref}", "AUC diff low", "AUC diff high", "AUC ratio", "AUC p", "AUC p Holm"]
        rows = []
        for i, name in enumerate(self.names):
            r = self.vs_reference[i]
            n_pos = float(self.n_pos[i]) if self.weighted else int(self.n_pos[i])
            rows.append([name, int(self.n_samples[i]), n_pos, float(self.ap[i]), float(self.ap_low[i]),
                         float(self.ap_high[i]), float(self.auc[i]), float(self.auc_low[i]), float(self.auc_high[i]),
                         r.ap_difference, r.ap_difference_low, r.ap_difference_high, r.ap_ratio, r.ap_p_value,
                         float(self.ap_p_holm[i]), r.auc_difference, r.auc_difference_low, r.auc_difference_high,
                         r.auc_ratio, r.auc_p_value, float(self.auc_p_holm[i])])
        return header, rows

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: the settings, how the numbers were computed, every slice's row (``{"slice": name,
        "by_values": {column: value}, <numbers>}`` as :meth:`precall.SlicedEvaluation.to_dict` gives them),
        the ranking worst first."""
        header, rows = self._table()
        first = self.vs_reference[0] if self.vs_reference else None
        return {"by": list(self.columns), "method": self.method, "level": self.level,
                "n_resamples": self.n_resamples, "random_state": self.random_state, "min_support": self.min_support,
                "reference": self.reference, "weighted": self.weighted, "stratified": self.stratified,
                "intervals": {"average_precision": "bootstrap percentile",
                              "roc_auc": "bootstrap percentile" if self.weighted else "delong",
                              "ap_comparison": first.ap_method if first else None,
                              "auc_comparison": first.auc_method if first else None,
                              "description": self.describe()},
                "slices": slice_dicts(header, rows, self.keys, self.columns),
                "ranked_worst_first": [self.names[i] for i in self.ranked]}

    def to_csv(self, path: Any = None) -> str | None:
        """One CSV row per slice (the columns of :meth:`to_frame` after a column per ``by`` column with
        the slice's value, as :meth:`precall.SlicedEvaluation.to_csv` writes them; NaN empty); written
        to ``path`` or returned.

        Examples
        --------
        >>> import numpy as np
        >>> from precall import stats
        >>> rng = np.random.default_rng(0)
        >>> g = np.repeat(["a", "b"], 100)
        >>> y = (rng.random(200) < 0.4).astype(int)
        >>> c = stats.compare_slices(y, rng.random(200) + y, by={"region": g}, n_resamples=50)
        >>> print(c.to_csv().splitlines()[0][:32])
        region,slice,n,n_pos,AP,AP low,A
        """
        text = slices_csv_text(*self._table(), self.keys, self.columns)
        if path is None:
            return text
        with open(path, "w", encoding="utf-8", newline="") as f:
            f.write(text)
        return None

    def to_frame(self) -> Any:
        """A pandas DataFrame, one row per slice, indexed by the slices' values as
        :meth:`precall.SlicedEvaluation.to_frame` (one level per ``by`` column; a ``slice`` column
        with the names); needs the ``pandas`` extra."""
        header, rows = self._table()
        return slices_frame(header, rows, self.keys, self.columns)

    def to_text(self, k: int = 5, width: int | None = 80) -> str:
        """The ``k`` worst and ``k`` best ranked slices with their intervals and the Holm-adjusted
        p-values against the reference, then how they were computed; every line within ``width``
        terminal columns (at least 60; None: no limit): a slice name too long to fit beside the
        numbers is shortened to its start and end around ``...`` (distinct from every other name
        shown; its full name in a legend below the table), and a table still wider is split in two,
        AP's columns then ROC-AUC's (each with the names).  The numbers are never cut."""
        k = check_number(k, "k", low=1, integer=True, hint="how many worst and best slices to print")
        if width is not None:
            width = check_number(width, "width", low=60, integer=True, hint="the widest line; None: no limit")
        ranked = self.ranked.tolist()
        picked = ranked if len(ranked) <= 2 * k else ranked[:k] + [-1] + ranked[-k:]
        pct = percent(self.level)
        versus, short = ("the rest", "-rest") if self.reference == "rest" else ("all rows", "-all")
        auc = "bootstrap" if self.weighted else "DeLong"
        header = ["slice", "n", "AP [interval]", short, "pHolm", "ROC-AUC", short, "pHolm"]
        numbers = []
        for i in picked:
            if i >= 0:
                r = self.vs_reference[i]
                numbers.append([str(int(self.n_samples[i])),
                                f"{fixed(self.ap[i], 4)} [{fixed(self.ap_low[i], 4)},{fixed(self.ap_high[i], 4)}]",
                                signed(r.ap_difference, 4), _p(self.ap_p_holm[i]), fixed(self.auc[i], 4),
                                signed(r.auc_difference, 4), _p(self.auc_p_holm[i])])
        names = [visible(self.names[i]) for i in picked if i >= 0]
        rest = sum(max([columns(h), *(columns(row[j]) for row in numbers)]) + (2 if j < 2 else 1)  # the separators
                   for j, h in enumerate(header[1:]))  # as table_lines lays them: two after the names and after n
        limit = name_limit(max(map(columns, ["slice", *names])), rest, width)
        short_names = iter(shortened(names, limit))
        made = iter(numbers)
        body: list[Any] = []
        renamed = []
        for i in picked:
            if i < 0:
                body.append(f"...  ({len(ranked) - 2 * k} more ranked slices)")
                continue
            name = next(short_names)
            body.append([name, *next(made)])
            if name != visible(self.names[i]):
                renamed.append((name, repr(self.names[i])))
        title = (f"{len(self.names)} slices by {', '.join(map(visible, self.columns))}; AP ({self.method}) bootstrap "
                 f"and ROC-AUC {auc} {pct} intervals; vs {versus}, worst first")
        lines = wrap(title, width=width, hang=0) if width else [title]
        lines += table_lines(header, body, width=width, keys=2, left=1, gap=1, groups=[[2, 3, 4], [5, 6, 7]])
        unranked = len(self.names) - len(ranked)
        if unranked:
            note = f"{unranked} slice(s) not ranked (undefined, or fewer than min_support={self.min_support} rows)"
            lines += wrap(note, width=width, hang=0) if width else [note]
        if renamed:
            lines += ["", "slices:", *legend(renamed, width=width or 80, wide=width is None)]
        lines += ["", *(textwrap.wrap(self._footer(), width) if width else [self._footer()])]  # apart from the table
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.to_text()


def _p(p: float) -> str:
    return "nan" if math.isnan(p) else ("<1e-4" if p < 1e-4 else f"{p:.4f}")


def _contrast(a: float, b: float, reps_a: np.ndarray, reps_b: np.ndarray, level: float
              ) -> tuple[float, float, float, float, float, float, float]:
    """``a - b`` and ``a / b`` with the percentile intervals of the replicates' differences and
    ratios (replicates paired in draw order), and the difference's bootstrap p-value."""
    d = reps_a - reps_b if reps_a.size and reps_b.size else _NONE
    d_low, d_high = _percentiles(d, level)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratios = reps_a / reps_b if d.size else _NONE
    r_low, r_high = _percentiles(ratios[np.isfinite(ratios)], level)
    return a - b, d_low, d_high, _ratio(a, b), r_low, r_high, _bootstrap_p(d)


def _ratio(a: float, b: float) -> float:
    """``a / b``; NaN for ``b = 0``."""
    return a / b if b else math.nan


def _pair(a: str, b: str, x: _Sample, y: _Sample, level: float) -> SlicePair:
    """Two disjoint samples: AP from their own bootstraps; ROC-AUC by DeLong's unpaired test, or
    (weighted) from their bootstraps too."""
    ap = _contrast(x.ap, y.ap, x.replicates, y.replicates, level)
    if x.auc_replicates.size or y.auc_replicates.size:  # weighted: no DeLong variance
        return SlicePair(a, b, *ap, *_contrast(x.auc, y.auc, x.auc_replicates, y.auc_replicates, level), level,
                         INDEPENDENT, INDEPENDENT)
    auc = unpaired_delong(x.auc, x.auc_var, x.n, y.auc, y.auc_var, y.n, level)
    ratio, ar_low, ar_high = _log_ratio_interval(x.auc, x.auc_var, y.auc, y.auc_var, level)
    return SlicePair(a, b, *ap, auc.difference, auc.low, auc.high, ratio, ar_low, ar_high, auc.p_value, level,
                     INDEPENDENT, UNPAIRED)


def _sample(y: np.ndarray, s: np.ndarray, w: np.ndarray | None, method: str, n_resamples: int, level: float,
            seed: Any, stratified: bool, progress: Any = None) -> _Sample:
    """One sample's AP interval (bootstrap, by class when ``stratified``; ``progress`` as
    :func:`bootstrap_ci` takes it) and ROC-AUC with DeLong's variance, or with weights both from
    one bootstrap of the rows; NaN where undefined.  ``y``: 0 / 1, ``w``: positive weights or None."""
    pos = int(np.count_nonzero(y))
    neg = y.shape[0] - pos
    n = y.shape[0]
    if pos == 0:
        ap, low, high, reps = math.nan, math.nan, math.nan, _NONE
    else:
        chosen: list[Any] = [functools.partial(metrics.average_precision, method=method)]
        if w is not None and neg:
            chosen.append(metrics.roc_auc)
        # a class of one row leaves the intervals undefined (NaN, as DeLong's below two of a class),
        # and the comparisons drawn from the same replicates with them (no replicates kept)
        got = bootstrap_cis(chosen, y, s, sample_weight=w, n_resamples=n_resamples, level=level,
                            stratified=stratified, random_state=seed, progress=progress, on_undefined="nan")
        ap, low, high, reps = got[0].estimate, got[0].low, got[0].high, _defined_replicates(got[0])
        if w is not None and neg:
            auc = got[1]
            return _Sample(ap, low, high, reps, auc.estimate, math.nan, auc.low, auc.high, n,
                           _defined_replicates(auc))
    if pos < 2 or neg < 2 or w is not None:
        auc = metrics.roc_auc(y, s, sample_weight=w, on_undefined="nan") if pos and neg else math.nan
        return _Sample(ap, low, high, reps, auc, math.nan, math.nan, math.nan, n)
    auc, var = _delong(check_binary(y, s, None, 1), "nan")
    lo, hi = _normal_interval(auc, math.sqrt(var), level)
    return _Sample(ap, low, high, reps, auc, var, max(lo, 0.0), min(hi, 1.0), n)


def _defined_replicates(result: Any) -> np.ndarray:
    """The replicates of a bootstrap interval, none when the interval is undefined (a class of one
    row: :func:`bootstrap_ci`'s ``on_undefined``)."""
    return _NONE if math.isnan(result.standard_error) else result.replicates


def _part(progress: Any, k: int, parts: int) -> Any:
    """``progress`` of the whole for part ``k`` of ``parts`` equal parts (None: None)."""
    if progress is None:
        return None
    return lambda done: progress((k + done) / parts)


# ---------------------------------------------------------------------------
# each slice against every row
@dataclass(frozen=True)
class _Overall:
    """Every row (zero weights set aside), ranked once for all the slices' comparisons with it."""

    y: np.ndarray  # 0 / 1
    s: np.ndarray
    w: np.ndarray | None
    ap: float
    auc: float
    place: np.ndarray  # DeLong's placement of every row (unweighted; else empty)
    ranked: RankedColumn  # the ranked column (grouped ties) every joint replicate is counted over


def _overall(y: np.ndarray, s: np.ndarray, w: np.ndarray | None, method: str) -> _Overall:
    positive = y.astype(bool)
    pos = int(np.count_nonzero(positive))
    neg = y.shape[0] - pos
    ap = metrics.average_precision(y, s, method=method, sample_weight=w) if pos else math.nan
    place, auc = _NONE, math.nan
    if w is None and pos and neg:
        place, auc = row_placements(positive, s)
    elif pos and neg:
        auc = metrics.roc_auc(y, s, sample_weight=w)
    return _Overall(y, s, w, ap, auc, place, rank_column(s, positive, "group"))


def _joint_replicates(whole: _Overall, rows: np.ndarray, kernels: list[Any], rng: np.random.Generator,
                      n_resamples: int, estimates: list[tuple[float, float]], stratified: bool, progress: Any
                      ) -> list[tuple[np.ndarray, np.ndarray]]:
    """Each kernel's replicates on the slice ``rows`` and on every row, from one bootstrap stratified
    by slice (and class when ``stratified``): a replicate draws the slice's rows and the rest's rows
    (:mod:`._resample`'s draws), the slice's replicate is its draws, the overall one all of them.
    Without weights the draws are counts of cells (the cells of the one ranked column of every
    row by stratum, as ``resample="counts"``; over score blocks, the replicates shifted onto the
    exact ``estimates``, when the cells exceed :data:`MAX_CELLS`); with weights rows carrying their
    weights, every run counted."""
    n = whole.y.shape[0]
    in_slice = np.zeros(n, dtype=bool)
    in_slice[rows] = True
    out: list[tuple[list[np.ndarray], list[np.ndarray]]] = [([], []) for _ in kernels]

    def add(own: Any, every: Any) -> None:
        with np.errstate(divide="ignore", invalid="ignore"):
            for (mine, all_), kernel in zip(out, kernels):
                mine.append(kernel.kernel(own))
                all_.append(kernel.kernel(every))

    done = 0
    if whole.w is None:
        _, stratum = np.unique(2 * in_slice + (whole.y if stratified else 0), return_inverse=True)  # dense
        design = count_design([whole.ranked], stratum.ravel(), MAX_CELLS)
        own_cell = np.zeros(design.n_cells, dtype=bool)
        own_cell[design.cell[in_slice]] = True
        for counts in draw_counts(rng, design, n_resamples):
            add(cell_steps(design, np.where(own_cell, counts, 0))[0], cell_steps(design, counts)[0])
            done += counts.shape[0]
            if progress is not None:
                progress(done / n_resamples)
        if not design.exact:  # the blocked statistics' bootstrap, moved onto the exact estimates
            size = design.size[None, :]
            at_own, at_all = cell_steps(design, np.where(own_cell, size, 0))[0], cell_steps(design, size)[0]
            for (mine, all_), kernel, (est_own, est_all) in zip(out, kernels, estimates):
                shift_own = est_own - float(kernel.kernel(at_own)[0])
                shift_all = est_all - float(kernel.kernel(at_all)[0])
                mine[:] = [r + shift_own for r in mine]
                all_[:] = [r + shift_all for r in all_]
    else:
        classes = [whole.y == 0, whole.y == 1] if stratified else [np.ones(n, dtype=bool)]
        strata = [r for r in (np.flatnonzero(in_slice & c) for c in classes) if r.size]
        k = len(strata)
        strata += [r for r in (np.flatnonzero(~in_slice & c) for c in classes) if r.size]
        for draws in draw_blocks(rng, n, n_resamples, strata):
            own = Draws(draws.members[:k], draws.local[:k])
            add(resample_steps(whole.ranked, own, whole.w), resample_steps(whole.ranked, draws, whole.w))
            done += draws.m
            if progress is not None:
                progress(done / n_resamples)
    return [(np.concatenate(mine), np.concatenate(all_)) for mine, all_ in out]


def _versus_overall(name: str, own: _Sample, whole: _Overall, rows: np.ndarray, method: str, n_resamples: int,
                    level: float, seed: Any, stratified: bool, progress: Any) -> SlicePair:
    """Slice ``name`` (its rows ``rows``, its own sample ``own``) against every row."""
    weighted = whole.w is not None
    kernels = [metrics.metric("average_precision", method=method)]
    estimates = [(own.ap, whole.ap)]
    if weighted:
        kernels.append(metrics.metric("roc_auc"))
        estimates.append((own.auc, whole.auc))
    reps: list[tuple[np.ndarray, np.ndarray]] = [(_NONE, _NONE)] * len(kernels)
    if own.replicates.size:  # the slice's AP interval is defined (a positive, no class of one row)
        reps = _joint_replicates(whole, rows, kernels, np.random.default_rng(seed), n_resamples, estimates,
                                 stratified, progress)
    ap = _contrast(own.ap, whole.ap, *reps[0], level)
    if weighted:
        auc = _contrast(own.auc, whole.auc, *reps[1], level)
        return SlicePair(name, "overall", *ap, *auc, level, JOINT, JOINT)
    _, difference, variance, log_variance = subset_delong(whole.y.astype(bool), whole.s, rows, whole.place, whole.auc)
    if math.isnan(variance):  # fewer than two of a class in the slice: DeLong's variance is undefined
        nan = math.nan
        return SlicePair(name, "overall", *ap, own.auc - whole.auc, nan, nan, _ratio(own.auc, whole.auc), nan, nan,
                         nan, level, JOINT, SUBSET)
    sd = math.sqrt(variance)
    if sd == 0:  # the slice is every row (or no case moves either AUC): the degenerate answer
        low = high = difference
        p = 1.0 if difference == 0 else 0.0
    else:
        low, high = _normal_interval(difference, sd, level)
        p = two_sided_p(difference / sd)
    ratio, r_low, r_high = _ratio_interval(_ratio(own.auc, whole.auc), log_variance, level)
    return SlicePair(name, "overall", *ap, difference, low, high, ratio, r_low, r_high, p, level, JOINT, SUBSET)


def compare_slices(
    y_true: Any,
    y_score: Any,
    *,
    by: Any,
    sample_weight: Any = None,
    method: str = "step",
    pos_label: Any = None,
    level: float = 0.95,
    n_resamples: int = DEFAULT_RESAMPLES,
    random_state: Any = DEFAULT_SEED,
    min_support: int = 0,
    reference: Reference = "rest",
    stratified: bool = False,
    progress: Any = None,
) -> SliceComparison:
    """Per-slice intervals of AP and ROC-AUC and each slice against the rest of the rows or all rows.

    Parameters
    ----------
    y_true, y_score, pos_label
        Binary input as :func:`precall.evaluate` takes it.
    by : array-like, several of them, a dict or a pandas DataFrame
        The slice of every row (as :func:`precall.evaluate`'s ``by``).
    sample_weight : array-like of shape (n_samples,), default=None
        Non-negative row weights; zero-weight rows are set aside (a slice keeps its name and
        its count of rows given, ``n_samples``, as :func:`precall.evaluate` reports them).
        DeLong takes no weights, so with weights every interval and comparison is a bootstrap
        of the rows carrying their weights (ROC-AUC too; :meth:`SliceComparison.describe`).
        The point estimates are the weighted metrics of :func:`precall.average_precision` and
        :func:`precall.roc_auc`, so integer weights give the estimates of repeated rows; the
        intervals do not: a row of weight 2 is drawn as one row (its weight carried), not as two.
    method : str, default="step"
        The AP convention (:data:`precall.AP_METHODS`).
    level : float, default=0.95
    n_resamples : int, default=2000
        Bootstrap resamples of each slice and of each slice's reference.
    random_state : int, None or Generator, default=0
        The entropy every slice's seed derives from (module docstring, :func:`slice_seed`).
    min_support : int, default=0
        Slices with fewer rows are reported but not ranked (nor counted in Holm's adjustment).
    reference : {"rest", "overall"}, default="rest"
        What each slice is compared with (:data:`REFERENCES`).  ``"rest"``: the rows of every
        other slice, a disjoint sample (DeLong's unpaired test for ROC-AUC; the two samples'
        independent bootstraps for AP).  ``"overall"``: every row, the slice's included; the
        estimates are then correlated, so the design is paired: AP (and with weights ROC-AUC)
        from one bootstrap stratified by slice whose overall replicate is the union of the
        slice's and the rest's draws, ROC-AUC by DeLong's variance of ``AUC_slice -
        AUC_overall`` with the covariance of the shared cases
        (:func:`precall.stats.delong.subset_delong`; normal z).  The slices' own intervals
        are the same either way.
    stratified : bool, default=False
        Whether every bootstrap resamples each class apart too (within each slice and within
        the rest), holding the positive counts fixed: the intervals and tests of the AP at the
        observed counts.  By default the classes are resampled together, as a slice's positive
        count varies from sample to sample, so that an interval covers the slice's population
        AP and a test of equal APs has its size (module docstring, **Strata**).
    progress : callable, default=None
        Called with the fraction of the work done (0 to 1) after each block of replicates of
        each slice and of its reference (a progress bar, or a way to stop: raise from it).

    Raises
    ------
    ValueError
        For more than :data:`MAX_SLICES` slices: each costs two bootstraps (the slice's rows and
        the reference's, about 3 s at 2000 resamples and 1e5 rows; module docstring), so group
        rare values of ``by`` together (or leave their rows out) first.  For a ``reference`` not
        in :data:`REFERENCES`, and for weights that are negative or not one per row.

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

    Against every row, the slices' own intervals unchanged:

    >>> o = stats.compare_slices(y, s, by=g, n_resamples=200, reference="overall")
    >>> o.vs_reference[2].b, bool(o.ap_low[2] == c.ap_low[2])
    ('overall', True)
    >>> d = o.vs_reference[2]
    >>> bool(d.ap_difference == c.ap[2] - precall.average_precision(y, s)), bool(d.auc_p_value < 0.05)
    (True, True)
    """
    check_choice(method, "method", AP_METHODS)
    check_choice(reference, "reference", REFERENCES)
    stratified = check_bool(stratified, "stratified")
    level = _check_level(level)
    n_resamples = check_number(n_resamples, "n_resamples", low=2, integer=True, hint="e.g. 2000")
    min_support = check_number(min_support, "min_support", low=0, integer=True,
                               hint="slices with fewer rows are reported but not ranked")
    progress = _check_progress(progress)
    entropy = _entropy(random_state)
    data, codes, kept, n_samples = metrics._sliced_input(y_true, y_score, sample_weight, pos_label, None, None, by,
                                                         "strict")
    check_number(codes.m, "the number of slices", low=0, high=MAX_SLICES, integer=True,
                 hint="each slice costs a bootstrap of its rows and one of its reference; group "
                 "rare values of `by` together (or leave their rows out) to compare fewer slices")
    y = data.positive.astype(np.int64)
    s = data.scores
    w = data.weight
    order = np.argsort(kept, kind="stable")
    bounds = np.concatenate([[0], np.cumsum(np.bincount(kept, minlength=codes.m))])
    whole = _overall(y, s, w, method) if reference == "overall" else None
    samples, pairs = [], []
    for i in range(codes.m):
        rows = order[bounds[i]:bounds[i + 1]]
        own = _sample(y[rows], s[rows], None if w is None else w[rows], method, n_resamples, level,
                      slice_seed(entropy, i), stratified, _part(progress, 2 * i, 2 * codes.m))
        samples.append(own)
        versus = _part(progress, 2 * i + 1, 2 * codes.m)
        if whole is not None:
            pairs.append(_versus_overall(codes.names[i], own, whole, rows, method, n_resamples, level,
                                         slice_seed(entropy, i, rest=True), stratified, versus))
            continue
        rest = np.ones(y.shape[0], dtype=bool)
        rest[rows] = False
        other = _EMPTY
        if rest.any():
            other = _sample(y[rest], s[rest], None if w is None else w[rest], method, n_resamples, level,
                            slice_seed(entropy, i, rest=True), stratified, versus)
        pairs.append(_pair(codes.names[i], "rest", own, other, level))
    if w is None:
        n_pos = np.bincount(kept, weights=y, minlength=codes.m).astype(np.int64)
    else:
        n_pos = np.bincount(kept, weights=y * w, minlength=codes.m)
    ap = np.array([x.ap for x in samples])
    ok = ~np.isnan(ap) & (n_samples >= min_support)
    tested = np.where(ok, [p.ap_p_value for p in pairs], np.nan)
    tested_auc = np.where(ok, [p.auc_p_value for p in pairs], np.nan)
    idx = np.flatnonzero(ok)
    ranked = idx[np.argsort(ap[idx], kind="stable")]
    return SliceComparison(
        codes.names, codes.keys, codes.columns, n_samples, n_pos, method, level, int(n_resamples), entropy,
        int(min_support), reference, w is not None, ap, np.array([x.ap_low for x in samples]),
        np.array([x.ap_high for x in samples]), np.array([x.auc for x in samples]),
        np.array([x.auc_low for x in samples]), np.array([x.auc_high for x in samples]), tuple(pairs),
        holm(tested), holm(tested_auc), ranked, tuple(samples),
        *((whole.ap, whole.auc) if whole is not None else _all_rows(y, s, w, method)), stratified,
    )


def _all_rows(y: np.ndarray, s: np.ndarray, w: np.ndarray | None, method: str) -> tuple[float, float]:
    """AP and ROC-AUC of every row (NaN where undefined, without a warning): the reference line
    of a forest plot."""
    pos = int(np.count_nonzero(y))
    ap = metrics.average_precision(y, s, method=method, sample_weight=w) if pos else math.nan
    auc = metrics.roc_auc(y, s, sample_weight=w) if 0 < pos < y.shape[0] else math.nan
    return float(ap), float(auc)
