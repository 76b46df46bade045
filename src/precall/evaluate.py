"""One sort, many numbers: every AP convention, ROC-AUC and the best-F1 point."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from ._counts import Steps, build_steps_and_grouped, reweight_steps
from ._validate import check_binary, check_choice, check_on_undefined
from .scores import AP_METHODS, CONVENTIONS, RECALL_GRIDS, TIES, all_ap_from_steps, roc_auc_from_steps
from .space import auprg_from_steps, min_average_precision_of, normalized_average_precision

__all__ = ["Evaluation", "F1Point", "evaluate"]


@dataclass(frozen=True)
class F1Point:
    """The operating point with the highest F1 (the highest threshold among equals).

    ``threshold`` is the score at which it is reached: predict positive when
    ``score >= threshold`` (with ``ties="stable"``, the point may split a run of
    equal scores, which no threshold reproduces).
    """

    threshold: float
    f1: float
    precision: float
    recall: float


@dataclass(frozen=True)
class Evaluation:
    """Every convention from one sort of the scores.

    Attributes
    ----------
    average_precision : dict of str to float
        AP by convention name (:data:`precall.AP_METHODS`).
    roc_auc : float
        Area under the ROC curve (with grouped ties whatever ``ties`` is, so it
        equals :func:`precall.roc_auc`).
    prevalence : float
        ``n_pos / (n_pos + n_neg)``: the baseline, the precision of a random
        ranking at every recall.
    n_pos, n_neg : float
        Total positive and negative weight.
    n_samples : int or None
        Samples given (None when evaluated from a table).
    best_f1 : F1Point or None
        The operating point with the highest F1 (None without positives).
    ties : str
        The tie rule used.
    recall_grid : str
        The recall grid used by "voc2007" and "coco".
    min_average_precision : dict of str to float
        The smallest AP any ranking of these class counts gets, by convention
        (:func:`precall.min_average_precision`; Boyd et al. 2012 for "step").
        NaN without positives or with fractional positive weights.
    normalized_average_precision : dict of str to float
        ``(AP - min AP) / (1 - min AP)`` by convention: 0 for the worst
        ranking, 1 for a perfect one.
    auprg : float
        Area under the precision-recall-gain curve (Flach & Kull 2015; the
        ``prg`` package's ``calc_auprg``), ties grouped; NaN with one class.
    """

    average_precision: dict[str, float]
    roc_auc: float
    prevalence: float
    n_pos: float
    n_neg: float
    n_samples: int | None
    best_f1: F1Point | None
    ties: str
    recall_grid: str
    min_average_precision: dict[str, float]
    normalized_average_precision: dict[str, float]
    auprg: float

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dictionary of the result."""
        return asdict(self)

    def __str__(self) -> str:
        width = max(len(m) for m in AP_METHODS)
        lines = [f"AP conventions (ties={self.ties!r}, recall_grid={self.recall_grid!r}):",
                 f"  {''.ljust(width)}  {'AP':>8}  {'min AP':>8}  {'normalised':>10}"]
        for m in AP_METHODS:
            lines.append(
                f"  {m.ljust(width)}  {self.average_precision[m]:8.6f}  {self.min_average_precision[m]:8.6f}  "
                f"{self.normalized_average_precision[m]:10.6f}  {CONVENTIONS[m].summary}"
            )
        lines.append(f"ROC-AUC     {self.roc_auc:.6f}")
        lines.append(f"AUPRG       {self.auprg:.6f}  area under the precision-recall-gain curve")
        lines.append(
            f"prevalence  {self.prevalence:.6f}  random baseline (n_pos={self.n_pos:g}, n_neg={self.n_neg:g})"
        )
        if self.best_f1 is not None:
            b = self.best_f1
            lines.append(
                f"best F1     {b.f1:.6f}  at score >= {b.threshold:g} "
                f"(precision {b.precision:.6f}, recall {b.recall:.6f})"
            )
        return "\n".join(lines)


def _best_f1(steps: Steps) -> F1Point | None:
    if steps.n_pos == 0 or steps.tp.size == 0:
        return None
    tp = steps.tp.astype(np.float64)
    f1 = 2.0 * tp / (tp + steps.fp + steps.n_pos)
    k = int(np.argmax(f1))
    return F1Point(
        threshold=float(steps.thresholds[k]),
        f1=float(f1[k]),
        precision=float(tp[k] / (tp[k] + steps.fp[k])),
        recall=float(tp[k] / steps.n_pos),
    )


def evaluation_from_steps(
    steps: Steps, grouped_steps: Steps, *, ties: str, n_samples: int | None, recall_grid: str, on_undefined: Any
) -> Evaluation:
    """Build an :class:`Evaluation` from precomputed steps (internal).

    ``grouped_steps`` are the steps with grouped ties, from which ROC-AUC is
    computed whatever ``ties`` is (scikit-learn's ROC-AUC).
    """
    check_choice(recall_grid, "recall_grid", RECALL_GRIDS)
    policy = check_on_undefined(on_undefined)
    total = steps.n_pos + steps.n_neg
    ap = all_ap_from_steps(steps, recall_grid=recall_grid, policy=policy)
    low = min_average_precision_of(steps, ties=ties, recall_grid=recall_grid)
    return Evaluation(
        average_precision=ap,
        roc_auc=roc_auc_from_steps(grouped_steps, policy=policy),
        prevalence=steps.n_pos / total if total > 0 else float("nan"),
        n_pos=steps.n_pos,
        n_neg=steps.n_neg,
        n_samples=n_samples,
        best_f1=_best_f1(steps),
        ties=ties,
        recall_grid=recall_grid,
        min_average_precision=low,
        normalized_average_precision={m: normalized_average_precision(ap[m], low[m]) for m in AP_METHODS},
        auprg=auprg_from_steps(grouped_steps),
    )


def evaluate(
    y_true: Any,
    y_score: Any,
    *,
    sample_weight: Any = None,
    pos_label: Any = None,
    ties: str = "group",
    recall_grid: str = "reference",
    on_undefined: Any = "warn",
    prevalence: float | None = None,
) -> Evaluation:
    """Every AP convention, ROC-AUC, the prevalence and the best-F1 point, from one sort.

    With each AP its context: the minimum any ranking of these class counts
    could get and the AP normalised by it, the baseline (prevalence), and the
    area under the precision-recall-gain curve.

    Parameters
    ----------
    y_true, y_score, sample_weight, pos_label, ties, recall_grid, on_undefined
        As in :func:`precall.average_precision`.  ``pos_label=None`` needs labels
        in {0, 1} or {-1, 1}.
    prevalence : float in (0, 1), default=None
        Evaluate as if positives made up this share of the data (negatives
        reweighted, :meth:`ThresholdTable.at_prevalence`): every AP, the
        minimum AP, AUPRG, the best F1, ``prevalence`` and ``n_neg`` are those
        at ``prevalence``; ROC-AUC does not change.

    Returns
    -------
    Evaluation

    Examples
    --------
    >>> import precall
    >>> y = [0, 0, 1, 0, 1, 1, 0, 1, 1, 1]
    >>> s = [0.65, 0.1, 0.15, 0.43, 0.97, 0.24, 0.82, 0.7, 0.32, 0.84]
    >>> result = precall.evaluate(y, s)
    >>> round(result.average_precision["voc2007"], 6), round(result.roc_auc, 6)
    (0.80303, 0.583333)
    >>> result.best_f1.threshold
    0.15
    >>> round(result.min_average_precision["step"], 6), round(result.auprg, 6)
    (0.436243, 0.0)
    >>> round(precall.evaluate(y, s, prevalence=0.01).average_precision["step"], 6)
    0.342181
    """
    check_choice(ties, "ties", TIES)
    check_choice(recall_grid, "recall_grid", RECALL_GRIDS)
    policy = check_on_undefined(on_undefined)
    data = check_binary(y_true, y_score, sample_weight, pos_label)
    steps, grouped = build_steps_and_grouped(data, ties)  # type: ignore[arg-type]
    if prevalence is not None:
        steps, grouped = reweight_steps(steps, prevalence), reweight_steps(grouped, prevalence)
    return evaluation_from_steps(
        steps, grouped, ties=ties, n_samples=data.n_samples, recall_grid=recall_grid, on_undefined=policy
    )
