"""Slices for the presentation layers (internal): intervals of every AP convention and of ROC-AUC
for all rows or for each slice, and slice columns given as codes named by their values.

Slice columns read from a file come as distinct texts and a code per row; they are passed to
``precall.evaluate(by=...)`` as codes (:func:`coded`: float, in the order of the sorted texts,
NaN for missing: no Python string per row, whose sort would cost more than the evaluation) and
the result is named by the texts afterwards (:func:`with_values`).

:func:`interval_set` is the one place that decides how ``precall evaluate --ci``
computes its intervals (one set of stratified bootstrap resamples for the six AP
conventions, drawn as counts where :mod:`precall.stats` can; DeLong for ROC-AUC,
the bootstrap with weights); :func:`slice_intervals` applies it to the rows of each
slice of ``by`` (the command line's ``--by ... --ci``, the report's forest plot), each slice's
bootstrap with the seed and strata of :func:`precall.stats.compare_slices` (:func:`slice_bootstrap`:
the slice's rows as one stratum, classes together), so a slice's interval is one number by
every route; the interval of all rows stays that of ``evaluate --ci`` (stratified by class).

This is the first version of the per-slice intervals: a loop over the slices asked
for (the shown ones: the worst and best few), each on its own rows.  When
:mod:`precall.stats` gains intervals computed for all slices at once, only
:func:`slice_intervals` changes; its callers read :class:`IntervalSet` values.
"""

from __future__ import annotations

import ast
import dataclasses
import functools
import math
import re
import warnings
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np

from . import stats
from ._core.undefined import UndefinedMetricWarning
from ._core.validate import AP_METHODS, check_multi, check_number
from .metrics import average_precision, roc_auc
from ._core.text import visible
from .slices import slice_codes, slice_names
from .stats.slices import MAX_SLICES

__all__ = ["IntervalSet", "class_intervals", "coded", "coded_accumulator", "interval_policy", "interval_set",
           "named_message",
           "slice_bootstrap", "slice_intervals", "with_values"]

@dataclass(frozen=True)
class IntervalSet:
    """An interval for every AP convention (bootstrap) and for ROC-AUC (DeLong, or the bootstrap
    with weights); ``resample`` and ``n_blocks`` say how the AP resamples were drawn."""

    average_precision: dict[str, Any]
    roc_auc: Any
    resample: str = "rows"
    n_blocks: int | None = None
    undefined: str = ""  # which intervals are undefined (NaN bounds) and why, in words; "" if none is


def interval_set(y_true: np.ndarray, y_score: np.ndarray, sample_weight: np.ndarray | None, *, pos_label: Any,
                 ties: str, recall_grid: str, level: float, on_undefined: Any = "warn",
                 **bootstrap: Any) -> IntervalSet:
    """The intervals of one set of rows; ``bootstrap``: the keywords of
    :func:`precall.stats.bootstrap_cis` (``n_resamples``, ``method``, ``random_state``, ...).

    A metric undefined on the rows (AP without a positive; ROC-AUC without a positive or a
    negative, of positive weight) has no interval: under ``on_undefined="raise"`` a ValueError,
    else NaN bounds with an :class:`~precall.UndefinedMetricWarning`, the other intervals computed
    (the policy of the point estimates, and of DeLong's NaN below two of a class).  A class of one
    row leaves the bootstrap's intervals undefined (:func:`precall.stats.bootstrap_ci`) under
    :func:`interval_policy`."""
    y = np.asarray(y_true)
    positive = y == pos_label
    counted = np.ones(y.shape[0], dtype=bool) if sample_weight is None else np.asarray(sample_weight) > 0
    has_pos, has_neg = bool((positive & counted).any()), bool((~positive & counted).any())
    method = bootstrap.get("method", "percentile")
    # functools.partial with pos_label, not precall.metric(...) on labels == pos_label: a metric value
    # holds no data, and True/False labels would order the bootstrap's strata otherwise (other draws)
    metrics: list[Any] = [functools.partial(average_precision, method=m, ties=ties, recall_grid=recall_grid,
                                            pos_label=pos_label, on_undefined=on_undefined)
                          for m in (AP_METHODS if has_pos else ())]
    if sample_weight is not None and has_pos and has_neg:
        metrics.append(functools.partial(roc_auc, pos_label=pos_label, on_undefined=on_undefined))
    results = stats.bootstrap_cis(metrics, y, y_score, sample_weight=sample_weight, level=level,
                                  on_undefined=interval_policy(on_undefined), **bootstrap) if metrics else []
    if has_pos:
        ap = dict(zip(AP_METHODS, results))
    else:
        nan = _no_interval("average precision", "no positive sample", level, method, on_undefined)
        ap = dict.fromkeys(AP_METHODS, nan)
    if not (has_pos and has_neg):
        roc = _no_interval("ROC-AUC", "one class only", level, "delong" if sample_weight is None else method,
                           on_undefined)
    elif sample_weight is None:
        roc = stats.roc_auc_ci(y, y_score, pos_label=pos_label, level=level,
                               on_undefined=interval_policy(on_undefined))
    else:
        roc = results[-1]
    return IntervalSet(ap, roc, results[0].resample if results else "rows", results[0].n_blocks if results else None)


def _classes_text(names: list[Any]) -> str:
    return ("class " if len(names) == 1 else "classes ") + ", ".join(repr(c) for c in names)


def class_intervals(y_true: Any, y_score: Any, sample_weight: Any, *, labels: Any, methods: Sequence[str],
                    ties: str, recall_grid: str = "reference", on_undefined: Any = "warn",
                    **bootstrap: Any) -> IntervalSet:
    """The intervals of the macro AP of each convention in ``methods`` and of the macro
    one-vs-rest ROC-AUC of one score column per class (``labels``), from one set of row resamples
    (:func:`precall.stats.bootstrap_cis`): the intervals of ``evaluate --class-columns --ci`` and of
    the multi-class report.  ``bootstrap``: the keywords of :func:`precall.stats.bootstrap_cis`.

    A macro average with a class whose value is undefined on the rows (AP: no positive; ROC-AUC: no
    positive or no negative, of positive weight) has no interval, as :func:`interval_set`'s binary
    metrics: under ``on_undefined="raise"`` a ValueError, else NaN bounds with one
    :class:`~precall.UndefinedMetricWarning` for all of them, the other intervals computed.  Both
    name the classes and say what to do (leave them out of ``labels`` and their columns out of
    ``y_score``; the command line says ``--class-columns``: ``cli._common.cli_spelling``);
    ``undefined`` of the result says it too."""
    data = check_multi(y_true, y_score, sample_weight, labels)  # the rows of positive weight
    classes = data.classes.tolist()
    no_pos = ~data.positive.any(axis=0)
    no_neg = ~no_pos & data.positive.all(axis=0)
    level = bootstrap.get("level", 0.95)
    method = bootstrap.get("method", "percentile")
    metrics: dict[str, Any] = {}
    if not no_pos.any():
        metrics.update({m: functools.partial(average_precision, method=m, ties=ties, average="macro", labels=labels,
                                             recall_grid=recall_grid, on_undefined=on_undefined) for m in methods})
    if not (no_pos | no_neg).any():
        metrics["roc"] = functools.partial(roc_auc, average="macro", labels=labels, on_undefined=on_undefined)
    message = ""
    if len(metrics) < len(methods) + 1:
        reasons = []
        for mask, what in ((no_pos, "positive"), (no_neg, "negative")):
            names = [c for c, bad in zip(classes, mask.tolist()) if bad]
            if names:
                reasons.append(f"{_classes_text(names)} {'has' if len(names) == 1 else 'have'} no {what} sample")
        bad = [c for c, b in zip(classes, (no_pos | no_neg).tolist()) if b]
        which = "the macro ROC-AUC is" if metrics else "the macro AP and the macro ROC-AUC are"
        one = "it has" if metrics else "they have"
        # leaving them out helps where other classes remain (not with one class in every row)
        their = "its column" if len(bad) == 1 else "their columns"
        advice = "" if len(bad) == len(classes) else (
            f"leave {_classes_text(bad)} out ({their} of `y_true` and `y_score`)" if data.multilabel
            else f"leave {_classes_text(bad)} out of `labels` and {their} out of `y_score`")
        message = (f"{which} undefined on the data ({'; '.join(reasons)}), so {one} no confidence interval")
        if on_undefined == "raise":
            raise ValueError(message + (f"; {advice}" if advice else ""))
        message += f": {'its' if metrics else 'their'} bounds are NaN"
        warnings.warn(message + (f"; {advice} for the interval of the others' average" if advice else ""),
                      UndefinedMetricWarning, stacklevel=2)
    results = dict(zip(metrics, stats.bootstrap_cis(list(metrics.values()), y_true, y_score,
                                                    sample_weight=sample_weight,
                                                    on_undefined=interval_policy(on_undefined), **bootstrap)
                       )) if metrics else {}
    nan = float("nan")
    missing = stats.ConfidenceInterval(nan, nan, nan, level, method, nan)
    first = next(iter(results.values()), None)
    return IntervalSet({m: results.get(m, missing) for m in methods}, results.get("roc", missing),
                       first.resample if first is not None else "rows", first.n_blocks if first is not None else None,
                       message)


def interval_policy(on_undefined: Any) -> str:
    """The ``on_undefined`` of a bootstrap's interval under the policy of the metrics (an
    evaluation's or a command's): ``"raise"`` and ``"nan"`` as given, else ``"warn"`` (NaN bounds
    with the warning: a number stands for an undefined metric value, not for its interval's
    bounds, as :func:`_no_interval`)."""
    return on_undefined if on_undefined in ("raise", "nan") else "warn"


def _no_interval(metric: str, reason: str, level: float, method: str, on_undefined: Any) -> stats.ConfidenceInterval:
    """The interval of a metric undefined on the data: NaN bounds with a warning, or the policy's
    ValueError."""
    message = f"{metric} is undefined on the data ({reason}), so it has no confidence interval"
    if on_undefined == "raise":
        raise ValueError(message)
    warnings.warn(f"{message}: its bounds are NaN", UndefinedMetricWarning, stacklevel=3)
    nan = float("nan")
    return stats.ConfidenceInterval(nan, nan, nan, level, method, nan)


def slice_intervals(y_true: Any, y_score: Any, by: Any, *, slices: Sequence[int], sample_weight: Any = None,
                    pos_label: Any, ties: str = "group", recall_grid: str = "reference", level: float = 0.95,
                    on_undefined: Any = "warn", **bootstrap: Any) -> dict[int, IntervalSet | None]:
    """:func:`interval_set` of the rows of each slice in ``slices`` (indices in the order of
    ``precall.evaluate(..., by=by).names``; an integer seed becomes each slice's own,
    :func:`slice_bootstrap`); ``None`` for a slice with one class (no interval: its AP or ROC-AUC
    is undefined).  At most :data:`MAX_SLICES` slices."""
    y = np.asarray(y_true)
    s = np.asarray(y_score, dtype=np.float64)
    w = None if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
    wanted = sorted(set(int(i) for i in slices))
    check_number(len(wanted), "the number of slices", low=0, high=MAX_SLICES, integer=True,
                 hint="each slice's intervals are a bootstrap of its own rows; ask for fewer slices "
                 "(e.g. with a higher min_support)")
    codes = slice_codes(by, y.shape[0]).codes
    order = np.argsort(codes, kind="stable")
    bounds = np.searchsorted(codes[order], np.arange(int(codes.max(initial=-1)) + 2))
    out: dict[int, IntervalSet | None] = {}
    for i in wanted:
        rows = order[bounds[i]:bounds[i + 1]] if i + 1 < bounds.shape[0] else order[:0]
        if w is not None:
            rows = rows[w[rows] > 0]
        positive = y[rows] == pos_label
        if rows.size == 0 or positive.all() or not positive.any():
            out[i] = None
            continue
        out[i] = interval_set(y[rows], s[rows], None if w is None else w[rows], pos_label=pos_label, ties=ties,
                              recall_grid=recall_grid, level=level, on_undefined=on_undefined,
                              **slice_bootstrap(bootstrap, i))
    return out


def slice_bootstrap(bootstrap: dict[str, Any], index: int) -> dict[str, Any]:
    """The bootstrap keywords of slice ``index`` as :func:`precall.stats.compare_slices` draws
    it, so that a slice's interval is the same number by every route: an integer seed becomes
    the slice's own (:func:`precall.stats.slice_seed`; another ``random_state`` is kept), and the
    classes are not stratified unless ``stratified`` is given (``compare_slices``' **Strata**)."""
    seed = bootstrap.get("random_state")
    out = {"stratified": False, **bootstrap}
    if isinstance(seed, (int, np.integer)) and not isinstance(seed, bool):
        out["random_state"] = stats.slice_seed(int(seed), index)
    return out


# ---------------------------------------------------------------------------
# slice columns as codes, named by their values
def coded(texts: Sequence[str], codes: np.ndarray) -> tuple[list[str], np.ndarray]:
    """A text column (distinct ``texts``, ``codes`` into them, -1 missing) as ``by=`` codes: the
    texts sorted (as numbers when all are finite numbers), each row's rank among them as a float,
    NaN for missing (which the slices put last)."""
    texts = list(texts)
    try:
        keys = [float(x) for x in texts]
        numeric = all(math.isfinite(k) for k in keys)
    except ValueError:
        numeric = False
    order = sorted(range(len(texts)), key=(lambda i: (keys[i], texts[i])) if numeric else texts.__getitem__)
    rank = np.empty(len(texts) + 1, dtype=np.float64)
    rank[order] = np.arange(len(texts))
    rank[-1] = np.nan  # code -1: missing
    return [texts[i] for i in order], rank[np.asarray(codes, dtype=np.int64)]


def coded_accumulator(acc: Any, text_of: Callable[[int, Any], str]) -> tuple[Any, list[list[str]]]:
    """A :class:`precall.SlicedAccumulator` keyed by any values (``text_of(column, value)``: a
    value's text, the empty text for missing) rekeyed to the :func:`coded` codes of their texts,
    so that it evaluates as ``precall.evaluate(..., by=coded codes)`` of all its rows (slices of
    equal text merged), and each column's texts in code order (for :func:`with_values`)."""
    width = len(acc.columns or ())
    texts: list[dict[str, None]] = [{} for _ in range(width)]
    named = {}
    for key in acc.keys:
        named[key] = tuple("" if v is None else text_of(j, v) for j, v in enumerate(key))
        for j, text in enumerate(named[key]):
            if text:
                texts[j].setdefault(text)
    values, codes = [], []
    for column in texts:
        ordered, rank = coded(list(column), np.arange(len(column)))
        values.append(ordered)
        codes.append(dict(zip(column, rank.tolist())))
    return acc.relabel(lambda key: tuple(None if not t else codes[j][t] for j, t in enumerate(named[key]))), values


def with_values(result: Any, values: Sequence[Sequence[str]]) -> Any:
    """A sliced result of :func:`coded` columns with their values as keys and names (named as
    :func:`precall.slices.slice_codes` names slices: ``value``, or ``col=value, col=value`` for
    several columns; missing as :data:`precall.slices.MISSING`)."""
    keys = tuple(tuple(None if v is None or (isinstance(v, float) and math.isnan(v)) else values[j][int(v)]
                       for j, v in enumerate(key)) for key in result.keys)
    return dataclasses.replace(result, keys=keys, names=slice_names(keys, result.columns))


def named_message(message: str, coded_result: Any, named: Any) -> str:
    """A message of the slices naming (at most a few) slices by their codes (``'3.0'``), with their
    values."""
    head, sep, rest = message.partition("slice(s) (")
    if not sep:
        return message
    listed, close, tail = rest.partition("):")

    def value(match: Any) -> str:
        try:
            i = coded_result.names.index(ast.literal_eval(match.group(0)))
        except (ValueError, SyntaxError):
            return match.group(0)
        return repr(visible(named.names[i]))

    return head + sep + re.sub(r"'(?:[^'\\]|\\.)*'", value, listed) + close + tail
