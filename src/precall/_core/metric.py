"""A metric is a value: what it measures, how classes average, its name, its undefined policy.

:class:`Metric` is small, frozen, hashable and picklable, and holds no state
(state stays in :class:`precall.Accumulator`), so it can be a dict key, be
printed in a result, or be shipped to a worker.  It carries the one
computation of its quantity over :class:`~precall._core.steps.Steps` (``m``
problems at once: one problem, bootstrap replicates, slices), which every route
uses: the public functions build one (:func:`precall.average_precision`,
:func:`precall.roc_auc`, :func:`precall.metric`), and :mod:`precall.stats`
(by counts or rows), the plots, the report and the command line consume it.

What it does not hold is how to read the data (``pos_label``, ``labels``,
``sample_weight``): those belong to the data, not to the quantity.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Literal

import numpy as np

from . import conventions
from .evaluation import best_f1_points
from .steps import Steps
from .undefined import NO_POSITIVES, ONE_CLASS_ROC, undefined
from .validate import (
    AVERAGES,
    check_choice,
    check_number,
    check_on_undefined,
    check_options,
)

__all__ = ["MEASURES", "Measure", "Metric"]

Measure = Literal["average_precision", "roc_auc", "best_f1"]
MEASURES: tuple[str, ...] = ("average_precision", "roc_auc", "best_f1")

_LABELS = {"average_precision": "AP", "roc_auc": "ROC-AUC", "best_f1": "best F1"}


@dataclass(frozen=True)
class Metric:
    """A metric as a value: the quantity, its options, how classes average and its policy.

    Build one with :func:`precall.metric` (or ``Metric(...)``); the public
    functions build the same value from their keyword options.

    Parameters
    ----------
    measure : {"average_precision", "roc_auc", "best_f1"}
        The quantity: AP in a convention, ROC-AUC (full or partial), the
        highest F1 over the operating points.
    method : str, default="step"
        The AP convention (:data:`precall.AP_METHODS`); AP only.
    ties : {"group", "stable"}, default="group"
        How equal scores are ranked (ROC-AUC is always grouped).
    recall_grid : {"reference", "exact"}, default="reference"
        The recall grid of ``voc2007`` / ``coco``.
    max_fpr : float in (0, 1] or None, default=None
        ROC-AUC only: the McClish-standardised partial AUC up to this FPR
        (1 is the full AUC, as scikit-learn).
    average : {"macro", "weighted", "micro", "samples"} or None, default="macro"
        How the classes of multi-class / multi-label input are combined.
    multi_class : {"ovr", "ovo"}, default="ovr"
        ROC-AUC of multi-class input: one-vs-rest or Hand & Till's one-vs-one.
    on_undefined : "warn", "nan", "raise" or float, default="warn"
        The policy where the quantity is undefined (no positives; for ROC-AUC
        one class).

    Examples
    --------
    >>> from precall import metric
    >>> m = metric("average_precision", method="voc2007")
    >>> m.name, m.key
    ('AP (voc2007)', 'voc2007')
    >>> metric("roc_auc", max_fpr=0.1).name
    'ROC-AUC (max_fpr=0.1)'
    >>> m == metric("average_precision", method="voc2007"), hash(m) == hash(metric("average_precision", method="voc2007"))
    (True, True)
    """

    measure: str = "average_precision"
    method: str = "step"
    ties: str = "group"
    recall_grid: str = "reference"
    max_fpr: float | None = None
    average: str | None = "macro"
    multi_class: str = "ovr"
    on_undefined: Any = "warn"

    def __post_init__(self) -> None:
        check_choice(self.measure, "measure", MEASURES)
        check_options(method=self.method, ties=self.ties, recall_grid=self.recall_grid,
                      multi_class=self.multi_class)
        if self.average is not None:
            check_choice(self.average, "average", AVERAGES)
        object.__setattr__(self, "on_undefined", check_on_undefined(self.on_undefined))
        if self.max_fpr is not None:
            if self.measure != "roc_auc":
                raise ValueError(f"`max_fpr` applies to measure='roc_auc'; got measure={self.measure!r}")
            max_fpr = check_number(self.max_fpr, "max_fpr", low=0, high=1, low_open=True)
            object.__setattr__(self, "max_fpr", None if max_fpr == 1 else max_fpr)
        if self.measure == "roc_auc":  # ROC-AUC is a property of the grouped curve
            object.__setattr__(self, "ties", "group")
        if self.measure != "average_precision":
            object.__setattr__(self, "method", "step")
            object.__setattr__(self, "recall_grid", "reference")
        if self.measure != "roc_auc":
            object.__setattr__(self, "multi_class", "ovr")

    # ------------------------------------------------------------------ names
    @property
    def key(self) -> str:
        """The short name the command line uses as a row key (``step``, ``voc2007``, ``ROC-AUC``, ...)."""
        if self.measure == "average_precision":
            return self.method
        if self.measure == "roc_auc":
            return "ROC-AUC" if self.max_fpr is None else f"pAUC@{self.max_fpr:g}"
        return "best F1"

    @property
    def name(self) -> str:
        """How output names the quantity (``AP (step)``, ``ROC-AUC (max_fpr=0.1)``, ...)."""
        label = _LABELS[self.measure]
        if self.measure == "average_precision":
            extra = [self.method] + ([f"ties={self.ties}"] if self.ties != "group" else []) + (
                [f"recall_grid={self.recall_grid}"] if self.recall_grid != "reference" else [])
            return f"{label} ({', '.join(extra)})"
        if self.measure == "roc_auc" and self.max_fpr is not None:
            return f"{label} (max_fpr={self.max_fpr:g})"
        if self.measure == "best_f1" and self.ties != "group":
            return f"{label} (ties={self.ties})"
        return label

    def __str__(self) -> str:
        return self.name

    def with_policy(self, on_undefined: Any) -> "Metric":
        """The same metric with another undefined policy (the bootstrap uses ``"nan"``)."""
        return replace(self, on_undefined=on_undefined)

    # ------------------------------------------------------------ computation
    @property
    def grouped(self) -> bool:
        """Whether the computation reads grouped steps (the same ranking whatever ``ties``)."""
        return self.ties == "group"

    def kernel(self, steps: Steps) -> np.ndarray:
        """The quantity of each of the ``m`` problems of ``steps`` (shape ``(m,)``), NaN where it
        is undefined (:meth:`undefined_rows`; :meth:`value` applies the policy instead)."""
        if self.measure == "average_precision":
            return conventions.ap(steps, self.method, self.recall_grid)  # type: ignore[arg-type]
        if self.measure == "roc_auc":
            return conventions.roc_auc(steps, self.max_fpr)
        return best_f1_points(steps)[1]  # NaN where undefined, as ROC-AUC

    def undefined_rows(self, steps: Steps) -> np.ndarray:
        """Which of the ``m`` problems the quantity is undefined for."""
        if self.measure == "roc_auc":
            return (steps.n_pos == 0) | (steps.n_neg == 0)
        return steps.n_pos == 0

    def value(self, steps: Steps) -> float:
        """One problem's value, the undefined policy applied (``steps`` has ``m = 1``)."""
        if bool(self.undefined_rows(steps)[0]):
            if self.measure == "roc_auc":
                return undefined("ROC AUC", ONE_CLASS_ROC, float("nan"), self.on_undefined, stacklevel=5)
            name = "average precision" if self.measure == "average_precision" else "F1"
            return undefined(name, NO_POSITIVES, 0.0, self.on_undefined, stacklevel=5)
        return float(self.kernel(steps)[0])
