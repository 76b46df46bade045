"""The intervals of ``--ci`` and the options of ``compare``'s tests (internal): what the
commands share about the bootstrap, from :mod:`precall.stats`; computes through it only."""

from __future__ import annotations

import argparse
import inspect
from dataclasses import dataclass
from typing import Any

import numpy as np

import precall
from precall._slicing import class_intervals, interval_set

from ._common import terminal_progress


@dataclass(frozen=True)
class CiOptions:
    """How ``--ci`` and ``compare`` compute intervals and tests."""

    level: float = 0.95
    method: str = "percentile"  # bootstrap interval: percentile or bca
    n_resamples: int = precall.stats.DEFAULT_RESAMPLES
    seed: int | None = precall.stats.DEFAULT_SEED

    def describe(self, weighted: bool, drawn: str = "") -> str:
        """The intervals line; ``drawn``: how the resamples were drawn (:func:`drawn_as`)."""
        roc = "bootstrap for ROC-AUC (weighted data)" if weighted else "DeLong for ROC-AUC"
        seed = "no seed" if self.seed is None else f"seed {self.seed}"
        return (
            f"{self.level:.4g} intervals: {self.n_resamples} stratified bootstrap resamples "
            f"({self.method}, {seed}){' ' + drawn if drawn else ''} for AP; {roc}"
        )


def drawn_as(resample: str | None, n_blocks: int | None) -> str:
    """How bootstrap resamples were drawn, in words: rows, counts of runs (exact), or counts
    over score blocks (an approximation, said as such)."""
    if resample != "counts":
        if n_blocks is None:
            return "drawn as rows"
        return f"drawn as rows, counted over {n_blocks} score blocks per class (approximate)"
    if n_blocks is None:
        return "drawn as counts of score runs (exact)"
    return f"drawn as counts over {n_blocks} score blocks (approximate)"


def bootstrap_kwargs(ci: CiOptions, label: str | None = None, n_rows: int = 0,
                     paired: bool = False) -> dict[str, Any]:
    """Keyword arguments of :func:`precall.stats.bootstrap_cis` (``paired``: ``bootstrap_tests``),
    with a terminal progress callback when the work is large, and ``resample="auto"`` (counts
    where the data allow: the row bootstrap's distribution, in bounded time; ``precall.stats``
    decides)."""
    kwargs: dict[str, Any] = {"n_resamples": ci.n_resamples, "level": ci.level, "method": ci.method,
                              "random_state": ci.seed}
    function = precall.stats.bootstrap_tests if paired else precall.stats.bootstrap_cis
    if label is not None and "progress" in inspect.signature(function).parameters:
        progress = terminal_progress(label, n_rows * ci.n_resamples // 100)
        if progress is not None:
            kwargs["progress"] = progress
    kwargs["resample"] = "auto"
    return kwargs


def ci_options(args: argparse.Namespace) -> CiOptions:
    return CiOptions(args.level, args.ci_method, args.resamples, args.seed)


@dataclass(frozen=True)
class Intervals:
    """``--ci``: an interval for every AP convention and for ROC-AUC, from :mod:`precall.stats`."""

    options: CiOptions
    average_precision: dict[str, precall.stats.ConfidenceInterval]
    roc_auc: precall.stats.ConfidenceInterval
    resample: str = "rows"  # how the AP resamples were drawn: "rows" or "counts"
    n_blocks: int | None = None  # counts over score blocks (None: exact)

    @property
    def drawn(self) -> str:
        return drawn_as(self.resample, self.n_blocks)


def compute_intervals(
    labels: np.ndarray, scores: np.ndarray, weights: np.ndarray | None, *, pos_label: str,
    ties: str, recall_grid: str, ci: CiOptions, on_undefined: Any = "warn",
) -> Intervals:
    """The ``--ci`` intervals: bootstrap for every AP convention from one set of resamples
    (:func:`precall.stats.bootstrap_cis`; drawn as counts without weights and with grouped ties);
    DeLong for ROC-AUC (bootstrapped with the APs when weighted, since DeLong takes no weights)."""
    got = interval_set(labels, scores, weights, pos_label=pos_label, ties=ties, recall_grid=recall_grid,
                       on_undefined=on_undefined, **bootstrap_kwargs(ci, "bootstrap", len(labels)))
    return Intervals(ci, got.average_precision, got.roc_auc, got.resample, got.n_blocks)


@dataclass(frozen=True)
class MultiIntervals:
    """``--ci`` with ``--class-columns``: bootstrap intervals of the macro AP of each
    convention and of the macro one-vs-rest ROC-AUC (:func:`precall.stats.bootstrap_ci`)."""

    options: CiOptions
    average_precision: dict[str, precall.stats.ConfidenceInterval]
    roc_auc: precall.stats.ConfidenceInterval
    resample: str = "rows"
    n_blocks: int | None = None  # each class column counted over score blocks (None: exact)

    @property
    def level(self) -> float:
        return self.options.level

    def describe(self) -> str:
        o = self.options
        seed = "no seed" if o.seed is None else f"seed {o.seed}"
        return (f"{o.level:.4g} intervals of the macro averages: {o.n_resamples} bootstrap "
                f"resamples ({o.method}, {seed}) {drawn_as(self.resample, self.n_blocks)}")


def multiclass_intervals(
    y: np.ndarray, scores: np.ndarray, weights: np.ndarray | None, *, classes: list[str],
    methods: list[str], ties: str, recall_grid: str, ci: CiOptions, on_undefined: Any = "warn",
) -> MultiIntervals:
    """Bootstrap intervals of the macro AP of each convention and of the macro one-vs-rest
    ROC-AUC (:func:`precall._slicing.class_intervals`, as the report's): one set of row resamples
    for every convention and ROC-AUC (the joint cells of k class columns would need coarse blocks:
    the rows are drawn, each column counted over score blocks).  A macro average with a class
    whose value is undefined has NaN bounds with a warning naming the class (``"raise"``: a
    ValueError naming it; the fix printed with ``--class-columns``, :func:`._common.cli_spelling`)."""
    got = class_intervals(y, scores, weights, labels=classes, methods=methods, ties=ties, recall_grid=recall_grid,
                          on_undefined=on_undefined,
                          **bootstrap_kwargs(ci, "bootstrap", len(y) * len(classes)))
    return MultiIntervals(ci, got.average_precision, got.roc_auc, got.resample, got.n_blocks)


def method_name(method: str) -> str:
    """An interval's method as printed: DeLong, or the bootstrap's interval (percentile, bca)."""
    return "DeLong" if method == "delong" else f"bootstrap {method}"
