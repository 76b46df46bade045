"""Pictures of the curves: precision-recall and ROC, as the metrics measure them.

matplotlib is the optional ``plot`` extra (``pip install 'precall[plot]'``),
imported only when a function here is called.  Every function draws on the
``ax`` it is given (or on a new figure's axes) and returns the ``Axes``.  The
numbers come from the public API (:func:`precall.threshold_table` and the
table's methods); nothing here computes a metric of its own.

What is drawn
    * The PR curve as the AP convention of ``method`` sums it: the step curve
      for step AP (each recall interval (R_{n-1}, R_n] at the precision P_n of
      its threshold), straight segments for the trapezoid, Davis & Goadrich's
      curve, the envelope (voc2010), the 11 points (voc2007) or the 101 points
      (coco) that the kernel averages.
    * ``envelope=True``: the precision envelope (maximum precision at recall >=
      r), whose area is VOC2010 / Detectron ``voc_ap``.
    * ``eleven_point=True``: the 11 points averaged by VOC2007.
    * The random classifier's PR curve (precision = prevalence) and, with
      ``iso_f1=True``, curves of equal F1.
    * ROC with the area shaded (one model), the chance diagonal, and with
      ``max_fpr`` the region FPR <= max_fpr whose McClish-standardised partial
      AUC is given in the legend.
    * Several models (``y_score`` a mapping ``{name: scores}``) overlaid with
      their AP / AUC in the legend; multi-class or multi-label ``y_score``
      (2-D) drawn one curve per class, one-vs-rest.
    * ``prevalence=[...]``: one model's PR curve at the test set's prevalence
      and at each given one (:meth:`precall.ThresholdTable.at_prevalence`), each
      with its baseline and its unachievable region (precision below
      ``r P / (r P + N)``, :func:`precall.min_precision`) shaded; the ROC curve,
      the same at every prevalence, drawn once on a panel beside.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from .._core.validate import check_prevalence, is_multi
from ..multiclass import per_class_tables
from ..space import min_precision, pr_from_roc
from ..table import ThresholdTable, threshold_table

__all__ = [
    "draw_pr", "draw_roc", "draw_unachievable", "pr_curve", "pr_prevalences", "pr_tables", "roc_curve", "roc_tables",
    "setup_pr_axes", "setup_roc_axes",
]

_ISO_F1 = (0.2, 0.4, 0.6, 0.8)
_GRAY = "0.55"


def _matplotlib() -> Any:
    try:
        import matplotlib
    except ImportError:  # pragma: no cover - depends on the environment
        raise ImportError(
            "precall.plot needs matplotlib, the 'plot' extra: pip install 'precall[plot]'"
        ) from None
    return matplotlib


def _axes(ax: Any) -> Any:
    if ax is not None:
        return ax
    _matplotlib()
    import matplotlib.pyplot as plt

    _, ax = plt.subplots(figsize=(5.5, 5.5))
    return ax


def _tables(
    y_true: Any, y_score: Any, *, sample_weight: Any, pos_label: Any, labels: Any, ties: str,
    label: str | None,
) -> list[tuple[str, ThresholdTable]]:
    """(name, table) for each curve: one model, several models, or each class."""
    if isinstance(y_score, Mapping):
        if not y_score:
            raise ValueError("`y_score` as a mapping must name at least one model; got an empty mapping")
        return [
            (str(name), threshold_table(y_true, s, sample_weight=sample_weight, pos_label=pos_label, ties=ties))
            for name, s in y_score.items()
        ]
    if is_multi(y_true, y_score, labels):
        tables = per_class_tables(y_true, y_score, sample_weight=sample_weight, labels=labels, ties=ties)
        return [(f"class {c}", t) for c, t in tables.items()]
    table = threshold_table(y_true, y_score, sample_weight=sample_weight, pos_label=pos_label, ties=ties)
    return [(label if label is not None else "model", table)]


def setup_pr_axes(ax: Any, *, iso_f1: bool | tuple[float, ...] = False) -> Any:
    """Labels, limits [0, 1], equal aspect and (optionally) iso-F1 curves of a PR plot."""
    levels = _ISO_F1 if iso_f1 is True else tuple(iso_f1) if iso_f1 else ()
    for f in levels:
        r = np.linspace(f / 2 + 1e-9, 1, 200)
        p = f * r / (2 * r - f)
        keep = p <= 1
        ax.plot(r[keep], p[keep], color=_GRAY, lw=0.6, alpha=0.6, ls="-", zorder=0)
        ax.annotate(f"F1={f:g}", xy=(0.98, f / (2 - f)), fontsize=7, color=_GRAY, ha="right", va="bottom")
    ax.set_xlabel("Recall")
    ax.set_ylabel("Precision")
    ax.set_xlim(-0.01, 1.01)
    ax.set_ylim(-0.01, 1.01)
    ax.set_aspect("equal")
    ax.grid(True, alpha=0.25)
    return ax


def setup_roc_axes(ax: Any, *, chance: bool = True) -> Any:
    """Labels, limits [0, 1], equal aspect and the chance diagonal of a ROC plot."""
    if chance:
        ax.plot([0, 1], [0, 1], color=_GRAY, ls="--", lw=1, label="chance (AUC = 0.5)")
    ax.set_xlabel("False positive rate")
    ax.set_ylabel("True positive rate (recall)")
    ax.set_xlim(-0.01, 1.01)
    ax.set_ylim(-0.01, 1.01)
    ax.set_aspect("equal")
    ax.grid(True, alpha=0.25)
    return ax


def _convention_curve(table: ThresholdTable, method: str) -> tuple[np.ndarray, np.ndarray, str]:
    """(recall, precision, drawstyle) of the curve ``method`` sums: scikit-learn's points as steps
    (step) or joined by straight lines (trapezoid), Davis & Goadrich's interpolation
    (interpolated), and for the envelope conventions the kernel's own terms: the envelope
    (voc2010), the 11 points (voc2007) and the 101 points (coco)."""
    if table.n_pos == 0 or method in ("step", "trapezoid"):
        curve = table.precision_recall_curve()
        return curve.recall, curve.precision, "steps-post" if method == "step" else "default"
    if method == "interpolated":
        roc = table.grouped().roc_curve(drop_intermediate=False)
        points = pr_from_roc(roc.fpr, roc.tpr, n_pos=table.n_pos, n_neg=max(table.n_neg, 1e-300), interpolate=True)
        return points.recall, points.precision, "default"
    terms = table.ap_terms(method)
    if method == "voc2010":  # the envelope over each recall gained, from recall 0
        return np.r_[0.0, terms.recall], np.r_[terms.precision[0], terms.precision], "steps-pre"
    return terms.recall, terms.precision, "steps-post"  # voc2007 / coco: the grid points averaged


def draw_pr(
    ax: Any,
    table: ThresholdTable,
    *,
    label: str = "model",
    method: str = "step",
    envelope: bool = False,
    eleven_point: bool = False,
    baseline: bool = False,
    baseline_color: Any = None,
    color: Any = None,
    **line_kw: Any,
) -> Any:
    """Draw one table's PR curve as ``method`` measures it (and the envelope, the 11
    points, the baseline) on ``ax``; returns ``ax``.

    The curve is the one the convention sums (:func:`_convention_curve`): for the
    grid conventions the kernel's own points (:meth:`~precall.ThresholdTable.ap_terms`),
    so the drawn 11 points average to the ``voc2007`` AP and the 101 points to the
    ``coco`` AP.  The legend gives the AP by ``method``; the baseline is drawn in
    the curve's colour unless ``baseline_color`` is given.
    """
    ap = table.average_precision(method=method, on_undefined="nan")
    x, y, style = _convention_curve(table, method)
    (line,) = ax.plot(x, y, drawstyle=style, color=color, label=f"{label} (AP {method} = {ap:.3f})", **line_kw)
    color = line.get_color()
    if envelope and table.n_pos > 0:
        ap10 = table.average_precision(method="voc2010", on_undefined="nan")
        ex, ey, estyle = _convention_curve(table, "voc2010")
        ax.plot(ex, ey, drawstyle=estyle, color=color, ls="--", lw=1, label=f"{label} envelope (AP voc2010 = {ap10:.3f})")
    if eleven_point and table.n_pos > 0:
        terms = table.ap_terms("voc2007")
        ax.plot(terms.recall, terms.precision, ls="none", marker="o", ms=4, color=color,
                label=f"{label} 11 points (AP voc2007 = {terms.value:.3f})")
    if baseline:
        total = table.n_pos + table.n_neg
        prevalence = table.n_pos / total if total else float("nan")
        text = (f"random classifier (prevalence {prevalence:.3f})" if baseline_color is not None
                else f"{label}: random ({prevalence:.3f})")
        ax.axhline(prevalence, color=color if baseline_color is None else baseline_color, ls=":", lw=1,
                   label=text)
    return ax


def draw_unachievable(ax: Any, table: ThresholdTable, *, color: Any = _GRAY, label: str | None = None,
                      points: int = 201) -> Any:
    """Shade the unachievable region of ``table``'s class counts: precision below
    ``r P / (r P + N)`` at recall ``r`` (Boyd et al. 2012), no ranking goes there."""
    r = np.linspace(0.0, 1.0, points)
    floor = min_precision(r, n_pos=table.n_pos, n_neg=table.n_neg)
    ax.fill_between(r, 0.0, floor, color=color, alpha=0.12, lw=0,
                    label=label if label is not None else "unachievable (no ranking reaches it)")
    return ax


def draw_roc(
    ax: Any,
    table: ThresholdTable,
    *,
    label: str = "model",
    shade: bool = True,
    max_fpr: float | None = None,
    color: Any = None,
    **line_kw: Any,
) -> Any:
    """Draw one table's ROC curve on ``ax``, the area shaded; returns ``ax``."""
    curve = table.roc_curve(drop_intermediate=False)
    auc = table.roc_auc(on_undefined="nan")
    text = f"{label} (AUC = {auc:.3f}"
    if max_fpr is not None and max_fpr < 1:
        text += f"; FPR <= {max_fpr:g}: {table.roc_auc(max_fpr=max_fpr, on_undefined='nan'):.3f}"
    (line,) = ax.plot(curve.fpr, curve.tpr, color=color, label=text + ")", **line_kw)
    if shade:
        ax.fill_between(curve.fpr, curve.tpr, color=line.get_color(), alpha=0.15, lw=0)
    return ax


def _max_fpr_region(ax: Any, max_fpr: float | None) -> None:
    if max_fpr is not None and max_fpr < 1:
        ax.axvspan(0, max_fpr, color=_GRAY, alpha=0.12, lw=0,
                   label=f"partial AUC region (FPR <= {max_fpr:g}, McClish)")


def pr_curve(
    y_true: Any,
    y_score: Any,
    *,
    sample_weight: Any = None,
    pos_label: Any = None,
    labels: Any = None,
    ties: str = "group",
    method: str = "step",
    envelope: bool = False,
    eleven_point: bool = False,
    baseline: bool = True,
    iso_f1: bool | tuple[float, ...] = False,
    label: str | None = None,
    ax: Any = None,
    prevalence: Any = None,
    unachievable: bool | None = None,
    roc_ax: Any = None,
) -> Any:
    """Precision-recall curve(s) of one model, several models, or each class.

    Parameters
    ----------
    y_true, sample_weight, pos_label, labels, ties
        As in :func:`precall.average_precision`.
    y_score : array-like, or mapping of name to array-like
        One model's scores; ``{name: scores}`` to overlay several models; a 2-D
        array with multi-class or multi-label ``y_true`` for one curve per class.
    method : str, default="step"
        The AP convention quoted in the legend.
    envelope, eleven_point : bool, default=False
        Also draw the VOC2010 precision envelope / the VOC2007 11 points.
    baseline : bool, default=True
        The random classifier (precision = prevalence).
    iso_f1 : bool or tuple of float, default=False
        Curves of equal F1 (True: 0.2, 0.4, 0.6, 0.8).
    label : str, default=None
        Legend name of a single model.
    ax : matplotlib Axes, default=None
        Where to draw; a new figure when None (with ``prevalence``: a new
        figure with the ROC panel beside, ``ax.figure.axes[1]``).
    prevalence : float or sequence of float in (0, 1), default=None
        One model only: also draw its PR curve at each of these prevalences
        (the deployment rates), with the AP of each in the legend, and its
        ROC curve once beside (:func:`pr_prevalences`).
    unachievable : bool, default=None
        Shade the unachievable region (precision below ``r P / (r P + N)``);
        by default only with ``prevalence``, for each prevalence drawn.
    roc_ax : matplotlib Axes, default=None
        With ``prevalence`` and a given ``ax``: where to draw the ROC curve
        (not drawn when None).

    Returns
    -------
    matplotlib.axes.Axes
        The PR axes.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> from precall import plot
    >>> ax = plot.pr_curve([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8], envelope=True)
    >>> [t.get_text() for t in ax.get_legend().get_texts()][:2]
    ['model (AP step = 0.833)', 'model envelope (AP voc2010 = 0.833)']
    >>> ax = plot.pr_curve([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8], prevalence=[0.1])
    >>> [t.get_text() for t in ax.get_legend().get_texts()]  # doctest: +NORMALIZE_WHITESPACE
    ['model at prevalence 0.5 (AP step = 0.833)', 'unachievable at prevalence 0.5',
     'model at prevalence 0.1 (AP step = 0.591)', 'unachievable at prevalence 0.1']
    """
    series = _tables(y_true, y_score, sample_weight=sample_weight, pos_label=pos_label, labels=labels,
                     ties=ties, label=label)
    if prevalence is not None:
        if len(series) != 1:
            raise ValueError(
                f"`prevalence` overlays one model's PR curve at several prevalences; got {len(series)} "
                "curves (several models or classes). Plot one model at a time"
            )
        return pr_prevalences(series[0][1], prevalence, label=series[0][0], method=method, iso_f1=iso_f1,
                              unachievable=True if unachievable is None else unachievable, ax=ax, roc_ax=roc_ax)
    per_class = len(series) > 1 and not isinstance(y_score, Mapping)
    ax = pr_tables(series, per_class=per_class, method=method, envelope=envelope, eleven_point=eleven_point,
                   baseline=baseline, iso_f1=iso_f1, ax=ax)
    if unachievable:
        for _, table in series:
            draw_unachievable(ax, table)
        ax.legend(loc="lower left", fontsize=8)
    return ax


def _prevalences(prevalence: Any) -> list[float]:
    values = [prevalence] if np.ndim(prevalence) == 0 else list(prevalence)
    if not values:
        raise ValueError("`prevalence` must name at least one prevalence in (0, 1); got an empty sequence")
    return [check_prevalence(v) for v in values]


def pr_prevalences(
    table: ThresholdTable,
    prevalence: Any,
    *,
    label: str = "model",
    method: str = "step",
    iso_f1: bool | tuple[float, ...] = False,
    unachievable: bool = True,
    ax: Any = None,
    roc_ax: Any = None,
) -> Any:
    """One table's PR curve at its own prevalence and at each of ``prevalence``
    (:meth:`~precall.ThresholdTable.at_prevalence`), each with its baseline and
    (dotted, precision = prevalence) and (``unachievable``) its unachievable
    region; the ROC curve once on ``roc_ax``.

    With ``ax=None`` a figure with two panels is made (PR, then ROC); returns
    the PR axes.
    """
    values = _prevalences(prevalence)
    if ax is None:
        _matplotlib()
        import matplotlib.pyplot as plt

        fig, (ax, roc_ax) = plt.subplots(1, 2, figsize=(11, 5.5))
    setup_pr_axes(ax, iso_f1=iso_f1)
    total = table.n_pos + table.n_neg
    own = table.n_pos / total if total else float("nan")
    for pi, t in [(own, table)] + [(pi, table.at_prevalence(pi)) for pi in values]:
        draw_pr(ax, t, label=f"{label} at prevalence {pi:.3g}", method=method)
        color = ax.get_lines()[-1].get_color()
        ax.axhline(pi, color=color, ls=":", lw=1, label="_random baseline")  # precision = prevalence
        if unachievable:
            draw_unachievable(ax, t, color=color, label=f"unachievable at prevalence {pi:.3g}")
    ax.legend(loc="upper right", fontsize=7)
    if roc_ax is not None:
        setup_roc_axes(roc_ax)
        draw_roc(roc_ax, table.grouped(), label=f"{label} (every prevalence)")
        roc_ax.legend(loc="lower right", fontsize=8)
    return ax


def pr_tables(
    series: list[tuple[str, ThresholdTable]],
    *,
    per_class: bool = False,
    method: str = "step",
    envelope: bool = False,
    eleven_point: bool = False,
    baseline: bool = True,
    iso_f1: bool | tuple[float, ...] = False,
    ax: Any = None,
) -> Any:
    """:func:`pr_curve` of tables already built: ``(name, table)`` for each curve.

    ``per_class``: the tables are classes of one problem (a baseline each);
    otherwise models on the same labels (one gray baseline).
    """
    ax = _axes(ax)
    setup_pr_axes(ax, iso_f1=iso_f1)
    for i, (name, table) in enumerate(series):
        draw_pr(ax, table, label=name, method=method, envelope=envelope, eleven_point=eleven_point,
                baseline=baseline and (per_class or i == 0),
                baseline_color=None if per_class else _GRAY)
    ax.legend(loc="lower left", fontsize=8)
    return ax


def roc_curve(
    y_true: Any,
    y_score: Any,
    *,
    sample_weight: Any = None,
    pos_label: Any = None,
    labels: Any = None,
    max_fpr: float | None = None,
    shade: bool | None = None,
    label: str | None = None,
    ax: Any = None,
) -> Any:
    """ROC curve(s) of one model, several models, or each class (one-vs-rest).

    Parameters
    ----------
    y_true, y_score, sample_weight, pos_label, labels, label, ax
        As in :func:`pr_curve`.
    max_fpr : float, default=None
        Shade the region FPR <= max_fpr and quote the partial AUC (McClish).
    shade : bool, default=None
        Shade the area under each curve; by default only for a single curve.

    Returns
    -------
    matplotlib.axes.Axes

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> from precall import plot
    >>> ax = plot.roc_curve([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8])
    >>> [t.get_text() for t in ax.get_legend().get_texts()]
    ['chance (AUC = 0.5)', 'model (AUC = 0.750)']
    """
    series = _tables(y_true, y_score, sample_weight=sample_weight, pos_label=pos_label, labels=labels,
                     ties="group", label=label)
    return roc_tables(series, max_fpr=max_fpr, shade=shade, ax=ax)


def roc_tables(
    series: list[tuple[str, ThresholdTable]], *, max_fpr: float | None = None, shade: bool | None = None,
    ax: Any = None,
) -> Any:
    """:func:`roc_curve` of tables already built (``(name, table)``; ROC uses each
    table's grouped form, as :func:`precall.roc_auc`)."""
    ax = _axes(ax)
    setup_roc_axes(ax)
    _max_fpr_region(ax, max_fpr)
    shade = len(series) == 1 if shade is None else shade
    for name, table in series:
        draw_roc(ax, table.grouped(), label=name, shade=shade, max_fpr=max_fpr)
    ax.legend(loc="lower right", fontsize=8)
    return ax
