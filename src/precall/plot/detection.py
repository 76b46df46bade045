"""Pictures of a detector's diagnostics: confidence curves, the confusion matrix, the error breakdown.

Each function draws a result object of :mod:`precall.detection` (nothing is computed here) on the
``ax`` it is given, or on a new figure's axes, and returns the ``Axes``; matplotlib is imported
when one is called (the ``plot`` extra).  Class names are drawn as written (:func:`precall.plot.mpl`),
within ``max_name`` characters (:data:`precall.plot.NAME_WIDTH` by default: a longer name keeps its start
and end around ``...``; None: whole names).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._core.validate import check_choice
from . import NAME_WIDTH, _axes, _short_names, mpl, place_legend

__all__ = ["draw_confidence_curves", "draw_confusion_matrix", "draw_error_breakdown"]

_CURVES = {"f1": (3, "F1"), "precision": (1, "Precision"), "recall": (2, "Recall")}


def draw_confidence_curves(op: Any, kind: str = "f1", *, ax: Any = None, max_classes: int = 20,
                           max_name: int | None = NAME_WIDTH) -> Any:
    """F1 (or precision, recall) against the confidence, one curve per class (the first ``max_classes``
    with ground truth) and the mean over classes; each class's curve is exact (one step per distinct
    score) and the F1-optimal common confidence is marked.

    Parameters
    ----------
    op : OperatingPoints
        From :func:`precall.detection.operating_points`.
    kind : {"f1", "precision", "recall"}, default="f1"
    ax : matplotlib Axes, default=None
    max_classes : int, default=20
    max_name : int or None, default=NAME_WIDTH (40)
        The most characters of a class name in the legend; None: whole names.
    """
    kind = check_choice(kind, "kind", tuple(_CURVES))
    column, label = _CURVES[kind]
    ax = _axes(ax)
    grid = np.linspace(0, 1, 1001)
    curves = []
    drawn = [row for row in op.per_class if row["n_gt"] != 0]  # the classes with ground truth
    names = _short_names([str(row["name"]) for row in drawn[:max_classes]], max_name)  # those in the legend
    for row in drawn:
        curve = op.curves[row["id"]]
        thr, values = curve[0], curve[column]
        k = np.searchsorted(-thr, -grid, side="right") - 1  # the point of the lowest threshold >= x
        on_grid = np.where(k >= 0, values[np.maximum(k, 0)] if values.size else 0.0, 0.0)
        curves.append(on_grid)
        if len(curves) <= max_classes:
            ax.step(np.r_[thr, 0.0] if thr.size else [0.0], np.r_[values, values[-1:]] if values.size else [0.0],
                    where="post", lw=0.8, alpha=0.6, label=mpl(names[len(curves) - 1]))
    if curves:
        ax.plot(grid, np.mean(curves, axis=0), color="black", lw=2, label="mean over classes (on a 0.001 grid)")
    common = op.common
    if kind == "f1" and not np.isnan(common["threshold"]):
        ax.axvline(common["threshold"], color="black", ls=":", lw=1,
                   label=f"best mean F1 {common['f1']:.3f} at {common['threshold']:.3f}")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1.02)
    ax.set_xlabel("Confidence (detections with score >= it)")
    ax.set_ylabel(f"{label} (IoU {op.iou_threshold:g})")
    place_legend(ax, fontsize=8)
    return ax


def draw_confusion_matrix(cm: Any, *, ax: Any = None, normalize: bool = True,
                          max_name: int | None = NAME_WIDTH) -> Any:
    """The confusion matrix as an image: rows the predicted class, columns the true class, background
    last; ``normalize`` divides each column by its total (the share of each true class's objects, and of
    the background detections), counts written in the cells; class names within ``max_name`` characters."""
    ax = _axes(ax)
    m = cm.matrix.astype(np.float64)
    shown = m / np.maximum(m.sum(axis=0, keepdims=True), 1) if normalize else m
    image = ax.imshow(shown, cmap="Blues", vmin=0, vmax=1 if normalize else max(float(m.max()), 1.0))
    n = m.shape[0]
    if n <= 30:
        for i in range(n):
            for j in range(n):
                if m[i, j]:
                    ax.text(j, i, f"{int(m[i, j])}", ha="center", va="center", fontsize=7,
                            color="white" if shown[i, j] > 0.6 * image.get_clim()[1] else "black")
    labels = [mpl(label) for label in _short_names([str(label) for label in cm.labels], max_name)]
    ax.set_xticks(range(n), labels, rotation=90, fontsize=7)
    ax.set_yticks(range(n), labels, fontsize=7)
    ax.set_xlabel("True")
    ax.set_ylabel("Predicted")
    ax.set_title(f"confidence >= {cm.confidence:g}, IoU > {cm.iou_threshold:g}"
                 + (" (columns normalised)" if normalize else ""), fontsize=9)
    ax.figure.colorbar(image, ax=ax, fraction=0.046, pad=0.04)
    return ax


def draw_error_breakdown(eb: Any, *, ax: Any = None, iou_threshold: float | None = 0.5) -> Any:
    """Bars of the mAP gained by fixing each error type (tidecv's summary), at one IoU threshold or
    (``iou_threshold=None``) the means over the thresholds; values in AP points (x100)."""
    from ..detection.tide import ERROR_TYPES, SPECIAL_ERROR_TYPES

    ax = _axes(ax)
    values = eb.at(iou_threshold)
    names = [*ERROR_TYPES, *SPECIAL_ERROR_TYPES]
    undefined = values["AP"] == -1  # no class with ground truth: every number -1, no bar
    heights = [0.0 if undefined else 100 * values[k] for k in names]
    colors = ["#4C72B0"] * len(ERROR_TYPES) + ["#8C8C8C"] * len(SPECIAL_ERROR_TYPES)
    bars = ax.barh(range(len(names)), heights, color=colors)
    ax.set_yticks(range(len(names)), names)
    ax.invert_yaxis()
    for bar, h in zip(bars, heights):
        ax.text(bar.get_width(), bar.get_y() + bar.get_height() / 2, " -1" if undefined else f" {h:.2f}",
                va="center", fontsize=8)
    where = "IoU 0.50:0.95 (mean)" if iou_threshold is None else f"IoU {iou_threshold:g}"
    shown = "undefined (-1: no ground truth)" if undefined else f"{100 * values['AP']:.2f}"
    ax.set_xlabel(f"mAP gained by fixing (points); mAP {shown} at {where}")
    ax.set_title("errors (TIDE): main in blue, special in grey", fontsize=9)
    return ax
