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
    * ``ci=True``: a pointwise 95% band (:func:`roc_band`, :func:`pr_band`: the
      stratified bootstrap drawn as counts over at most 4097 blocks of
      thresholds, 200 resamples, like pROC's ``ci.se``) and the interval of
      the AP / AUC in the legend (:func:`precall.stats.roc_auc_ci`, DeLong;
      :func:`precall.stats.bootstrap_ci` for AP).
    * ``best_f1=True`` / ``points=[("recall", 0.9), ("threshold", 0.5)]``:
      operating points marked, each with its threshold in the legend.
    * Multi-class: one curve per class, the micro-average curve, one baseline
      (no operating points: one legend entry per curve).

How it is drawn
    Curves are thinned to what the pixels show (:func:`thin`:
    every turn kept, then at most 8000 vertices per curve, each point of the
    full curve within 7e-4 of the drawn one); every number quoted comes from
    the full table.  Legends sit below the axes, never over the data.  Axis
    labels name the positive label as scikit-learn's Displays do.  User
    strings are drawn as written: no mathtext, control characters shown
    (:func:`visible`, :func:`mpl`).  A name longer than :data:`NAME_WIDTH`
    (40) characters (a model, a class, a slice, the positive label) keeps its
    start and end around ``...`` in a legend or on an axis, as the command
    line's tables shorten it, so the figure keeps its size whatever the names;
    ``max_name=None`` draws whole names, ``max_name=k`` keeps ``k`` characters
    (the whole names stay the keys of ``intervals``).

Undefined numbers
    An AP or AUC quoted in a legend that the data leave undefined (a class
    without positives; a ROC curve of one class) follows ``on_undefined``, the
    one policy of :func:`precall.evaluate` (``"warn"``, the default: AP 0 as
    scikit-learn and AUC NaN, with an :class:`~precall.UndefinedMetricWarning`;
    ``"nan"``; ``"raise"``; or a number), so a legend quotes the number the
    metrics and ``precall evaluate`` give; an interval the data leave undefined
    has NaN bounds (with the warning under ``"warn"`` or a number) or, under
    ``"raise"``, is a ValueError.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from .. import stats
from ..stats.bands import Band, pr_band, roc_band  # the statistics; drawn by draw_band
from ..stats.results import recorded_seed, seed_text
from .._core.text import columns, drawable, percent, shorten, threshold_text, threshold_texts, values_text, visible
from .._core.validate import (
    check_allocation, check_binary, check_multi, check_number, check_numbers, check_options, check_prevalence,
    check_probability, is_multi,
)
from .._slicing import interval_policy
from ..metrics import average_precision
from ..multiclass import macro_pr_curve, macro_roc_curve, per_class_tables  # re-exported: drawn here
from ..space import min_precision, pr_from_roc
from ..table import ThresholdTable, table_of, threshold_table

__all__ = [
    "Band",
    "draw_band",
    "draw_pr",
    "draw_roc",
    "draw_unachievable",
    "forest",
    "intervals",
    "macro_pr_curve",
    "macro_roc_curve",
    "mpl",
    "place_legend",
    "pr_band",
    "pr_curve",
    "pr_prevalences",
    "pr_tables",
    "roc_band",
    "roc_curve",
    "roc_tables",
    "setup_pr_axes",
    "setup_roc_axes",
    "short_name",
    "thin",
    "visible",
]

_ISO_F1 = (0.2, 0.4, 0.6, 0.8)
PALETTE = (
    "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#bcbd22", "#556b2f",
    "#aec7e8", "#ffbb78", "#98df8a", "#ff9896", "#c5b0d5", "#c49c94", "#f7b6d2", "#9edae5", "#dbdb8d", "#393b79",
)
"""The curves' colours, in order: matplotlib's ``tab10`` with its gray replaced by a dark
olive (the baselines are gray), then ``tab20``'s light tones: 10 models or classes get 10
clearly distinct colours (``tests/test_plot_defects.py`` checks their CIELAB distances)."""
_GRAY = "0.55"
_MACRO = "navy"
MACRO = "macro-average"  # the name of the macro-average curve (its key in ``intervals``)


# ---------------------------------------------------------------------------
# user strings
# User strings (file, column and label names, titles) made safe to show.
#
# * :func:`visible` (:mod:`precall._core.text`, shared with the CLI): controls,
#   bidi and other format characters shown visibly (``\x1b`` -> ``␛``, U+202E ->
#   ``[U+202E]``): nothing can reorder or hide the text around it (Trojan Source,
#   CVE-2021-42574), and a name is one line.
# * :func:`mpl`: :func:`visible` as the font can draw it (:func:`drawable`: ``\x1b``,
#   not a Control Picture that DejaVu Sans lacks, with a warning for each), then every
#   ``$`` escaped, so matplotlib never parses a user string as mathtext (``$\\foo$``
#   is drawn as written, and no parse error is raised or logged).
def mpl(value: Any) -> str:
    """:func:`visible` as the font draws it (:func:`precall._core.text.drawable`), with ``$`` escaped
    for matplotlib (no mathtext from user strings)."""
    return drawable(value).replace("$", r"\$")


NAME_WIDTH = 40
"""The most characters (terminal columns: a CJK character takes two) of a name in a legend, a
tick label or an axis label: a longer name keeps its start and end around ``...``
(:func:`precall._core.text.shorten`, the rule of the command line's tables).  The drawing
functions take ``max_name`` (default this; None: whole names)."""


def _max_name(max_name: Any) -> int | None:
    """``max_name`` checked: None (whole names) or an integer of at least 9 characters."""
    if max_name is None:
        return None
    return check_number(max_name, "max_name", low=9, integer=True,
                        hint="the most characters of a name in a legend, or None for whole names")


def short_name(name: Any, max_name: int | None = NAME_WIDTH) -> str:
    """``name`` as a picture shows it (:func:`visible`), within ``max_name`` characters (its start
    and end around ``...``; None: whole), not yet escaped for matplotlib (:func:`mpl` does that)."""
    text = visible(name)
    max_name = _max_name(max_name)
    return text if max_name is None else shorten(text, max_name)


def _short_names(names: list[str], max_name: int | None) -> list[str]:
    """:func:`short_name` of each curve's name; names that would read alike once shortened end in
    `` #k``, k the curve's place (1, 2, ...), so that no two legend entries read the same."""
    shown = [short_name(n, max_name) for n in names]
    if max_name is None or len(set(shown)) == len(set(names)):
        return shown
    seen: dict[str, int] = {}
    for s in shown:
        seen[s] = seen.get(s, 0) + 1
    out = []
    for k, (s, n) in enumerate(zip(shown, names)):
        tag = f" #{k + 1}"
        out.append(s if seen[s] == 1 or s == visible(n) else short_name(n, max(max_name - len(tag), 9)) + tag)
    return out


# ---------------------------------------------------------------------------
# thinning
# Thin a drawn curve to what the pixels can show, lossless for the eye.
#
# A curve of a million thresholds has a million vertices, but a 500-pixel axis
# shows at most a few thousand distinct positions.  :func:`thin` keeps a subset
# of the vertices (the drawn points are always points of the full curve):
#
# 1. the corners: a vertex is dropped when its neighbours and it lie on one
#    horizontal or one vertical line (scikit-learn's ``drop_intermediate``
#    keeps exactly the turns of a ROC curve in the same way), or on one straight
#    segment for a polyline;
# 2. a grid of square cells of side ``cell`` (data units; the axes span [0, 1])
#    is laid over the plot, and of each run of consecutive vertices in the same
#    cell only the first is kept (and the curve's last vertex).  A dropped
#    vertex is within one cell diagonal (``cell * sqrt(2)``) of its run's first
#    vertex, which is on the thinned curve; the thinned piece from one run's
#    first vertex to the next run's first vertex and the full curve's piece
#    from the run's last vertex to the same point start within a cell diagonal
#    of each other and end together, so they stay within a cell diagonal of
#    each other all along (for straight segments and for the L of a step
#    drawstyle alike);
# 3. while more than ``budget`` vertices remain, ``cell`` doubles.
#
# With the defaults (cell 1/2048, budget 8000) the bound is 6.9e-4 (a third of
# a pixel of a 700-pixel axis) unless the budget forces a coarser grid; the
# cell actually used is returned.  Only drawing uses the thinned points: every
# number quoted (AP, AUC, intervals) comes from the full table.
THIN_BUDGET = 8000
THIN_CELL = 1.0 / 2048


def _corners(x: np.ndarray, y: np.ndarray, steps: bool) -> np.ndarray:
    """Indices of the vertices where the drawn path turns (first and last always)."""
    n = x.size
    if n <= 2:
        return np.arange(n)
    dx0, dx1 = x[1:-1] - x[:-2], x[2:] - x[1:-1]
    dy0, dy1 = y[1:-1] - y[:-2], y[2:] - y[1:-1]
    if steps:
        # a step path's middle vertex is redundant on one horizontal line, or on one
        # vertical line walked in one direction
        flat = (dy0 == 0) & (dy1 == 0)
        upright = (dx0 == 0) & (dx1 == 0) & (dy0 * dy1 >= 0)
        drop = flat | upright
    else:
        drop = (dx0 * dy1 - dy0 * dx1 == 0) & (dx0 * dx1 + dy0 * dy1 >= 0)
    keep = np.ones(n, dtype=bool)
    keep[1:-1] = ~drop
    return np.flatnonzero(keep)


def _differ(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``a != b`` with NaN equal to NaN."""
    return (a != b) & ~(np.isnan(a) & np.isnan(b))


def _cells(x: np.ndarray, y: np.ndarray, cell: float) -> np.ndarray:
    """Positions within ``x``/``y`` of the first vertex of each run in one cell (and the last vertex)."""
    n = x.size
    if n <= 2:
        return np.arange(n)
    cx = np.floor(x / cell)
    cy = np.floor(y / cell)
    # NaN (a curve of a class without positives: recall 0 / 0) is one cell of its own: NaN != NaN made
    # every NaN vertex a run, and :func:`thin` doubled its cell for ever
    change = _differ(cx[1:], cx[:-1]) | _differ(cy[1:], cy[:-1])
    keep = np.ones(n, dtype=bool)
    keep[1:] = change  # the first vertex of each run
    keep[-1] = True
    return np.flatnonzero(keep)


def thin(x: np.ndarray, y: np.ndarray, *, steps: bool = False, cell: float = THIN_CELL,
         budget: int = THIN_BUDGET) -> tuple[np.ndarray, float]:
    """Indices of the vertices of ``(x, y)`` to draw, and the cell side used.

    ``steps``: the curve is drawn with a step drawstyle (``steps-post`` /
    ``steps-pre``); otherwise as straight segments.  Curves of at most
    ``budget`` vertices are returned whole (``cell`` 0).
    """
    cell = check_number(cell, "cell", low=0, low_open=True, hint="the side of a grid cell, in axis units")
    budget = check_number(budget, "budget", low=2, integer=True, hint="the most vertices to draw")
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    if x.size <= budget:
        return np.arange(x.size), 0.0
    idx = _corners(x, y, steps)
    if idx.size <= budget:
        return idx, 0.0
    finite = np.concatenate([x[np.isfinite(x)], y[np.isfinite(y)]])
    span = float(finite.max() - finite.min()) if finite.size else 0.0
    while True:
        kept = idx[_cells(x[idx], y[idx], cell)]
        if kept.size <= budget:
            return kept, cell
        if cell > 4 * span + 1:  # the finite vertices share a cell or two: what is left alternates with
            step = -(-(kept.size - 1) // (budget - 1))  # non-finite ones; every step-th, and the last
            return np.unique(np.r_[kept[:-1:step], kept[-1]]), cell
        cell *= 2


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


class _Series(list):  # type: ignore[type-arg]
    """(name, table) of each curve, with what the drawing needs besides."""

    pos_label: Any = None
    micro: ThresholdTable | None = None
    data: Any = None  # (y_true, {name: scores}, sample_weight) for the intervals


def _band_rows(series: Any, name: str) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """The weighted rows (scores, positive, weights) of model ``name`` of ``series``: its bands
    draw them as :func:`intervals` draws them (:func:`pr_band`'s ``rows``); None without weights
    (or without the raw data): the bands draw counts over blocks of thresholds."""
    data = getattr(series, "data", None)
    if data is None or data[2] is None or name not in data[1]:
        return None
    y_true, scores, weight = data
    rows = check_binary(y_true, scores[name], weight, series.pos_label)
    return rows.scores, rows.positive, rows.weight  # type: ignore[return-value]


def _series_name(y_score: Any, label: str | None) -> str:
    if label is not None:
        return str(label)
    name = getattr(y_score, "name", None)  # a pandas Series names its model
    return str(name) if name is not None and not isinstance(y_score, np.ndarray) else "model"


def _tables(
    y_true: Any, y_score: Any, *, sample_weight: Any, pos_label: Any, labels: Any, ties: str,
    label: str | None,
) -> _Series:
    """(name, table) for each curve: one model, several models, or each class (then also
    the micro-average table: every (sample, class) pair one binary decision)."""
    check_options(ties=ties)
    out = _Series()
    if isinstance(y_score, Mapping):
        if not y_score:
            raise ValueError("`y_score` as a mapping must name at least one model; got an empty mapping")
        for name, s in y_score.items():
            data = check_binary(y_true, s, sample_weight, pos_label)
            out.append((str(name), table_of(data, ties)))
            out.pos_label = data.pos_label
        out.data = (y_true, {str(k): v for k, v in y_score.items()}, sample_weight)
        return out
    if is_multi(y_true, y_score, labels):
        tables = per_class_tables(y_true, y_score, sample_weight=sample_weight, labels=labels, ties=ties)
        out.extend((f"class {c}", t) for c, t in tables.items())
        data = check_multi(y_true, y_score, sample_weight, labels)
        k = data.scores.shape[1]
        w = None if data.weight is None else np.repeat(data.weight, k)
        out.micro = threshold_table(data.positive.ravel(), data.scores.ravel(), sample_weight=w, pos_label=True,
                                    ties=ties)
        return out
    data = check_binary(y_true, y_score, sample_weight, pos_label)
    name = _series_name(y_score, label)
    out.append((name, table_of(data, ties)))
    out.pos_label = data.pos_label
    out.data = (y_true, {name: y_score}, sample_weight)
    return out


_FONT_SIZES = ("xx-small", "x-small", "small", "medium", "large", "x-large", "xx-large", "smaller", "larger")
TWO_COLUMNS = 42
"""A legend of more than 8 entries takes two columns when its longest entry has at most this many
characters (two such columns are about as wide as a panel), one column otherwise."""


LEGEND_ENTRIES = 20
"""The most legend entries of the curves of models or classes (each curve's own: its line, envelope,
points) a figure shows by default: past it the first ones, then one entry ``... and K more``, then
the entries of the figure (micro- and macro-average, baseline, chance); every curve is drawn.  The
functions that draw them take ``max_legend`` (default this; None: every entry)."""


def _max_legend(max_legend: Any) -> int | None:
    """``max_legend`` checked: None (every entry) or a whole number of at least 1."""
    if max_legend is None:
        return None
    return check_number(max_legend, "max_legend", low=1, integer=True,
                        hint="the most legend entries of the curves, or None for every one")


def _legend_ids(ax: Any) -> set[int]:
    """The ids of the legend handles of ``ax`` (before curves are drawn: :func:`_curve_entries`)."""
    return {id(h) for h in ax.get_legend_handles_labels()[0]}


def _curve_entries(ax: Any, before: set[int]) -> None:
    """Mark the legend handles of ``ax`` not in ``before`` (:func:`_legend_ids`) as the entries of the
    curves of models or classes, which :func:`place_legend` caps at ``max_entries``."""
    for handle in ax.get_legend_handles_labels()[0]:
        if id(handle) not in before:
            handle._precall_curve = True


def place_legend(ax: Any, *, fontsize: float = 9, ncol: int | None = None, max_entries: int | None = None) -> Any:
    """The legend below the axes (never over the curves): by default in two columns when it has
    more than 8 entries of at most :data:`TWO_COLUMNS` characters, else in one.  ``max_entries``: the
    most entries of the curves of models or classes shown (the first ones, then ``... and K more``;
    the figure's other entries all shown; None: every entry), so that a legend of hundreds of classes
    keeps the figure's size."""
    if not (isinstance(fontsize, str) and fontsize in _FONT_SIZES):
        fontsize = check_number(fontsize, "fontsize", low=0, low_open=True,
                                hint=f"points, or one of {', '.join(_FONT_SIZES)}")
    if ncol is not None:
        ncol = check_number(ncol, "ncol", low=1, integer=True, hint="legend columns, or None")
    max_entries = _max_legend(max_entries)
    handles, labels = ax.get_legend_handles_labels()
    # a model drawn with its band: one entry, the band behind its line; the bands' meaning as the title
    bands = {id(h._precall_band): h._precall_band for h in handles if hasattr(h, "_precall_band")}
    entries = [((h._precall_band, h) if hasattr(h, "_precall_band") else h, text)
               for h, text in zip(handles, labels) if id(h) not in bands]
    curves = [k for k, (h, _) in enumerate(entries)
              if getattr(h[-1] if isinstance(h, tuple) else h, "_precall_curve", False)]
    if max_entries is not None and len(curves) > max_entries:  # the first ones, then how many more
        from matplotlib.lines import Line2D

        hidden = set(curves[max_entries:])
        more = (Line2D([], [], ls="none"), f"... and {len(hidden)} more")
        last = curves[max_entries - 1]
        entries = [*entries[:last + 1], more, *(e for k, e in enumerate(entries) if k > last and k not in hidden)]
    handles, labels = [h for h, _ in entries], [t for _, t in entries]
    notes = [next((b._precall_band_title for b in bands.values()), None), getattr(ax, "_precall_interval_note", None)]
    title = "\n".join(n for n in notes if n) or None
    if ncol is None:
        ncol = 2 if len(labels) > 8 and max(map(columns, labels)) <= TWO_COLUMNS else 1
    return ax.legend(handles, labels, loc="upper center", bbox_to_anchor=(0.5, -0.13), fontsize=fontsize,
                     ncol=ncol, frameon=False, borderaxespad=0.0, handlelength=2.2, columnspacing=1.2,
                     title=title, title_fontsize=fontsize)


def _positive(pos_label: Any, max_name: int | None = NAME_WIDTH) -> str:
    return "" if pos_label is None else f" (Positive label: {mpl(short_name(pos_label, max_name))})"


def _iso_f1_levels(iso_f1: Any) -> tuple[float, ...]:
    """The iso-F1 levels of ``iso_f1``: True for the usual ones, False for none, or levels in (0, 1)."""
    if isinstance(iso_f1, (bool, np.bool_)):
        return _ISO_F1 if iso_f1 else ()
    if iso_f1 is None:
        return ()
    return tuple(check_numbers(iso_f1, "iso_f1", low=0, high=1, low_open=True, high_open=True, min_len=0,
                               hint="F1 levels of the iso-F1 curves, or True / False").tolist())


def setup_pr_axes(ax: Any, *, iso_f1: bool | tuple[float, ...] = False, pos_label: Any = None,
                  max_name: int | None = NAME_WIDTH) -> Any:
    """Labels, limits [0, 1], equal aspect and (optionally) iso-F1 curves of a PR plot (the positive
    label in the axis labels within ``max_name`` characters, :func:`short_name`)."""
    levels = _iso_f1_levels(iso_f1)
    for f in levels:
        r = np.linspace(f / 2 + 1e-9, 1, 200)
        p = f * r / (2 * r - f)
        keep = p <= 1
        ax.plot(r[keep], p[keep], color=_GRAY, lw=0.6, alpha=0.6, ls="-", zorder=0)
        ax.annotate(f"F1={f:g}", xy=(0.98, f / (2 - f)), fontsize=7, color=_GRAY, ha="right", va="bottom")
    ax.set_xlabel("Recall" + _positive(pos_label, max_name))
    ax.set_ylabel("Precision" + _positive(pos_label, max_name))
    ax.set_xlim(-0.01, 1.01)
    ax.set_ylim(-0.01, 1.01)
    ax.set_aspect("equal")
    ax.grid(True, alpha=0.25)
    ax.set_prop_cycle(color=PALETTE)
    return ax


def setup_roc_axes(ax: Any, *, chance: bool = True, pos_label: Any = None, max_name: int | None = NAME_WIDTH) -> Any:
    """Labels, limits [0, 1], equal aspect and the chance diagonal of a ROC plot (the positive label
    in the axis labels within ``max_name`` characters)."""
    if chance:
        ax.plot([0, 1], [0, 1], color=_GRAY, ls="--", lw=1, label="chance (AUC = 0.5)")
    ax.set_xlabel("False Positive Rate" + _positive(pos_label, max_name))
    ax.set_ylabel("True Positive Rate" + _positive(pos_label, max_name))
    ax.set_xlim(-0.01, 1.01)
    ax.set_ylim(-0.01, 1.01)
    ax.set_aspect("equal")
    ax.grid(True, alpha=0.25)
    ax.set_prop_cycle(color=PALETTE)
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


def value_text(value: float, interval: Any = None) -> str:
    """A metric and its interval ``(low, high)`` as text: 3 decimals, more while two
    distinct numbers print alike or one other than 0 or 1 prints as 0 or 1
    (:func:`precall._core.text.value_digits`: 0.9996 is not 1.000)."""
    values = [value] if interval is None else [value, *interval]
    texts = values_text(values)
    return texts[0] if interval is None else f"{texts[0]} [{texts[1]}, {texts[2]}]"


def _drawn(x: np.ndarray, y: np.ndarray, style: str) -> tuple[np.ndarray, np.ndarray]:
    """The vertices to draw: :func:`precall.plot.thin.thin` (all of them for a short curve)."""
    idx, _ = thin(x, y, steps=style.startswith("steps"))
    return np.asarray(x)[idx], np.asarray(y)[idx]


def _envelope_curve(table: ThresholdTable) -> tuple[np.ndarray, np.ndarray]:
    """The voc2010 envelope as steps from recall 0, ending at the last recall reached: the
    sentinel tail of precision 0 (area 0) is not drawn, so no vertical line reads as the model."""
    x, y, _ = _convention_curve(table, "voc2010")
    positive = np.flatnonzero(y > 0)
    end = positive[-1] + 1 if positive.size else 1
    return x[:end], y[:end]


def draw_band(ax: Any, band: Any, *, color: Any, label: str | None = None) -> Any:
    """Shade a pointwise band (:func:`precall.plot.roc_band` / ``pr_band``): a light fill
    with its two edges drawn thin in the model's colour, so overlapping bands of several
    models stay apart (the fills alone blend into one muddy colour).  Drawn by
    :func:`draw_pr` / :func:`draw_roc`, the band joins its model's legend entry
    (:func:`place_legend`: one entry per model with its band; what the bands are in the
    legend's title)."""
    ok = np.isfinite(band.low) & np.isfinite(band.high)
    text = label if label is not None else (
        f"{percent(band.level)} band (bootstrap, {band.n_resamples} resamples)")
    if label is None and any(c.get_label() == text for c in ax.collections):
        text = "_band"
    fill = ax.fill_between(band.x[ok], band.low[ok], band.high[ok], color=color, alpha=0.1, lw=0, label=text,
                           zorder=1)
    for edge in (band.low[ok], band.high[ok]):
        ax.plot(band.x[ok], edge, color=color, lw=0.6, alpha=0.8, ls=(0, (3, 1.5)), zorder=2, label="_band edge")
    fill._precall_band_title = (f"shaded: pointwise {percent(band.level)} bands (bootstrap, {band.n_resamples} "
                                f"resamples, {seed_text(band.seed)})")
    ax._precall_last_band = fill
    return ax


MARKER_SIZE = 7.0  # points: the smallest marker
MARKER_STEP = 5.0  # points: a marker drawn where another is grows by this, beneath it
_NEAR = 0.025  # data units (the axes span [0, 1]): markers closer than this would cover each other


def _mark(ax: Any, x: float, y: float, *, color: Any, marker: str, label: str, text: str | None = None) -> Any:
    """One operating point as a hollow marker.  A marker where others already are
    (within :data:`_NEAR`) is drawn larger and beneath them, so each shows as a ring
    around the smaller ones: no marker hides another.  ``text``: printed beside it
    (its threshold, as pROC's ``print.thres``)."""
    near = [m for m in getattr(ax, "_precall_marks", ()) if abs(m[0] - x) < _NEAR and abs(m[1] - y) < _NEAR]
    size = max([MARKER_SIZE - MARKER_STEP, *(m[2] for m in near)]) + MARKER_STEP
    (line,) = ax.plot([x], [y], ls="none", marker=marker, ms=size, mfc="white", mec=color, mew=1.6, label=label,
                      zorder=5 - 0.01 * len(near))
    ax._precall_marks = [*getattr(ax, "_precall_marks", ()), (x, y, size)]
    if text is not None:
        ax.annotate(text, (x, y), xytext=(size / 2 + 3, -(size / 2 + 3) - 3 * len(near)), textcoords="offset points",
                    fontsize=7.5, color=color, ha="left", va="top", zorder=6,
                    bbox={"boxstyle": "round,pad=0.15", "fc": "white", "ec": "none", "alpha": 0.8})
    return line


def _threshold_shown(table: ThresholdTable, value: float) -> str:
    """A threshold with 4 significant digits, more where a neighbouring distinct score would print the same."""
    at = np.flatnonzero(table.thresholds == value)
    if not at.size:
        return threshold_text(value, None, 4)
    return threshold_texts(table.thresholds, 4, at[:1])[0]


POINT_KINDS = ("recall", "precision", "threshold", "best")
BEST_NAMES = {"youden": "Youden J", "closest": "closest to (0, 1)"}


def _points(table: ThresholdTable, best_f1: bool, points: Any) -> list[tuple[str, Any, str]]:
    """(legend text, OperatingPoint, marker) of each operating point to mark: the best F1
    (circle), ``("best", "youden" | "closest")`` (square, triangle) and targets (diamond)."""
    out: list[tuple[str, Any, str]] = []
    if best_f1 and table.n_pos > 0:
        f1 = table.evaluate(on_undefined="nan").best_f1
        if f1 is not None and np.isfinite(f1.f1):
            op = table.operating_point(threshold=f1.threshold)
            out.append((f"best F1 {value_text(f1.f1)} (score \u2265 {_threshold_shown(table, f1.threshold)})", op,
                        "o"))
    for kind, value in points or ():
        if kind not in POINT_KINDS:
            raise ValueError(f"an operating point is ({' | '.join(map(repr, POINT_KINDS))}, value); got {kind!r}")
        op = table.operating_point(**{kind: value})
        shown = _threshold_shown(table, op.threshold)
        if kind == "best":
            j = op.recall - op.fpr if value == "youden" else float(np.hypot(1 - op.recall, op.fpr))
            what = "J" if value == "youden" else "distance"
            out.append((f"{BEST_NAMES[value]}: {what} {value_text(j)} (score \u2265 {shown})", op,
                        "s" if value == "youden" else "^"))
            continue
        out.append((f"{kind} {value:g} (score \u2265 {shown})", op, "D"))
    return out


def _draw_points(ax: Any, table: ThresholdTable, *, label: str, color: Any, best_f1: bool, points: Any,
                 roc: bool, print_thresholds: bool) -> None:
    """Mark the operating points of :func:`_points` on a PR (``roc=False``) or ROC axes."""
    for words, op, marker in _points(table, best_f1, points):
        x, y = (op.fpr, op.recall) if roc else (op.recall, op.precision)
        _mark(ax, x, y, color=color, marker=marker, label=f"{label}: {words}",
              text=_threshold_shown(table, op.threshold) if print_thresholds else None)


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
    interval: Any = None,
    band: bool = False,
    best_f1: bool = False,
    points: Any = None,
    print_thresholds: bool = False,
    random_state: Any = 0,
    max_name: int | None = NAME_WIDTH,
    on_undefined: Any = "warn",
    band_rows: Any = None,
    **line_kw: Any,
) -> Any:
    """Draw one table's PR curve as ``method`` measures it (and the envelope, the 11
    points, the baseline, a band, operating points) on ``ax``; returns ``ax``.

    The curve is the one the convention sums (:func:`_convention_curve`): for the
    grid conventions the kernel's own points (:meth:`~precall.ThresholdTable.ap_terms`),
    so the drawn 11 points average to the ``voc2007`` AP and the 101 points to the
    ``coco`` AP.  The legend gives the AP by ``method`` (from the full table; the
    drawn vertices are thinned, :mod:`precall.plot.thin`) and ``interval``
    (``(low, high)``) when given; the baseline is drawn in the curve's colour unless
    ``baseline_color`` is given.  ``band``: the bootstrap band of precision at each
    recall (:func:`precall.plot.pr_band`; ``band_rows``: its ``rows``, the table's weighted
    rows, drawn as rows).  ``best_f1`` and ``points``
    (``[(kind, value)]``, kind ``"recall"``, ``"precision"`` or ``"threshold"``, as
    :meth:`~precall.ThresholdTable.operating_point`; ``("best", "youden" | "closest")``
    for Youden's and the closest-to-(0, 1) points) mark operating points, each
    threshold printed beside its marker with ``print_thresholds``.  ``label`` is
    drawn within ``max_name`` characters (:func:`short_name`; None: whole).
    ``on_undefined``: the AP of a table without positives, as :func:`precall.evaluate`
    gives it (default ``"warn"``: 0 with a warning).
    """
    label = mpl(short_name(label, max_name))
    ap = table.average_precision(method=method, on_undefined=on_undefined)
    x, y, style = _convention_curve(table, method)
    if method == "voc2010":
        x, y = _envelope_curve(table)
    elif method in ("voc2007", "coco"):  # the grid points past the last recall reached are 0: not drawn
        positive = np.flatnonzero(y > 0)
        x, y = x[:positive[-1] + 1], y[:positive[-1] + 1] if positive.size else (x[:1], y[:1])
    dx, dy = _drawn(x, y, style)
    (line,) = ax.plot(dx, dy, drawstyle=style, color=color, zorder=3,
                      label=f"{label} (AP {method} = {value_text(ap, interval)})", **line_kw)
    color = line.get_color()
    if band and table.n_pos > 0:
        draw_band(ax, pr_band(table, random_state=random_state, rows=band_rows), color=color)
        line._precall_band = ax._precall_last_band
    if envelope and table.n_pos > 0 and method != "voc2010":
        ap10 = table.average_precision(method="voc2010", on_undefined="nan")
        ex, ey = _drawn(*_envelope_curve(table), "steps-pre")
        ax.plot(ex, ey, drawstyle="steps-pre", color=color, ls=(0, (4, 2)), lw=1, alpha=0.75, zorder=2,
                label=f"{label} envelope (AP voc2010 = {value_text(ap10)})")
    if eleven_point and table.n_pos > 0:
        terms = table.ap_terms("voc2007")
        ax.plot(terms.recall, terms.precision, ls="none", marker="o", ms=4, color=color, zorder=4,
                label=f"{label} 11 points (AP voc2007 = {value_text(terms.value)})")
    if baseline:
        total = table.n_pos + table.n_neg
        prevalence = table.n_pos / total if total else float("nan")
        text = (f"random classifier (prevalence {prevalence:.3f})" if baseline_color is not None
                else f"{label}: random ({prevalence:.3f})")
        ax.axhline(prevalence, color=color if baseline_color is None else baseline_color, ls=":", lw=1,
                   label=text, zorder=1)
    _draw_points(ax, table, label=label, color=color, best_f1=best_f1, points=points, roc=False,
                 print_thresholds=print_thresholds)
    return ax


def draw_unachievable(ax: Any, table: ThresholdTable, *, color: Any = _GRAY, label: str | None = None,
                      points: int = 201) -> Any:
    """Shade the unachievable region of ``table``'s class counts: precision below
    ``r P / (r P + N)`` at recall ``r`` (Boyd et al. 2012), no ranking goes there;
    hatched, with its edge drawn, so it shows on screen and in print."""
    points = check_number(points, "points", low=2, integer=True, hint="recalls at which the floor is drawn")
    check_allocation(points, 64, "points", hint="choose fewer points (a few hundred draw a smooth edge)")
    r = np.linspace(0.0, 1.0, points)
    floor = min_precision(r, n_pos=table.n_pos, n_neg=table.n_neg)
    from matplotlib.colors import to_rgba

    # the fill light, the hatching and the edge in full colour: a region 1% high still shows
    ax.fill_between(r, 0.0, floor, facecolor=to_rgba(color, 0.22), edgecolor=to_rgba(color, 0.9), hatch="////",
                    lw=0, label=label if label is not None else "unachievable (no ranking reaches it)", zorder=0)
    ax.plot(r, floor, color=color, lw=1.4, zorder=1, label="_unachievable edge")
    return ax


def draw_roc(
    ax: Any,
    table: ThresholdTable,
    *,
    label: str = "model",
    shade: bool = True,
    max_fpr: float | None = None,
    color: Any = None,
    interval: Any = None,
    band: bool = False,
    best_f1: bool = False,
    points: Any = None,
    print_thresholds: bool = False,
    random_state: Any = 0,
    max_name: int | None = NAME_WIDTH,
    on_undefined: Any = "warn",
    band_rows: Any = None,
    **line_kw: Any,
) -> Any:
    """Draw one table's ROC curve on ``ax``, the area shaded; returns ``ax``.

    ``interval``: ``(low, high)`` of the AUC for the legend; ``band``: the bootstrap
    band of TPR at each FPR (:func:`precall.plot.roc_band`, pROC's ``ci.se``; ``band_rows``:
    its ``rows``, the table's weighted rows, drawn as rows);
    ``best_f1`` / ``points``: operating points marked as in :func:`draw_pr`;
    ``label`` within ``max_name`` characters (:func:`short_name`; None: whole);
    ``on_undefined``: the AUC of a table of one class, as :func:`precall.evaluate` gives it
    (default ``"warn"``: NaN with a warning).
    """
    max_fpr = _max_fpr(max_fpr)
    label = mpl(short_name(label, max_name))
    curve = table.roc_curve(drop_intermediate=True)  # the corners: the same polyline
    auc = table.roc_auc(on_undefined=on_undefined)
    text = f"{label} (AUC = {value_text(auc, interval)}"
    if max_fpr is not None and max_fpr < 1:
        partial = table.roc_auc(max_fpr=max_fpr, on_undefined=on_undefined)
        text += f"; FPR <= {max_fpr:g}: {value_text(partial)}"
    fx, ty = _drawn(curve.fpr, curve.tpr, "default")
    (line,) = ax.plot(fx, ty, color=color, label=text + ")", zorder=3, **line_kw)
    if shade and not band:  # the band is the shading to read when there is one
        ax.fill_between(fx, ty, color=line.get_color(), alpha=0.15, lw=0, zorder=0)
    if band and table.n_pos > 0 and table.n_neg > 0:
        draw_band(ax, roc_band(table, random_state=random_state, rows=band_rows), color=line.get_color())
        line._precall_band = ax._precall_last_band
    _draw_points(ax, table, label=label, color=line.get_color(), best_f1=best_f1, points=points, roc=True,
                 print_thresholds=print_thresholds)
    return ax


def _max_fpr(max_fpr: Any) -> float | None:
    """``max_fpr`` checked as :func:`precall.roc_auc` checks it (None: no partial AUC)."""
    return None if max_fpr is None else check_probability(max_fpr, "max_fpr")


def _max_fpr_region(ax: Any, max_fpr: float | None) -> None:
    if max_fpr is not None and max_fpr < 1:
        ax.axvspan(0, max_fpr, color=_GRAY, alpha=0.12, lw=0, zorder=0,
                   label=f"partial AUC region (FPR <= {max_fpr:g}, McClish)")


class Intervals(dict):
    """:func:`intervals`' ``{model: (low, high)}``, with ``note``: what they are (the legend says it)."""

    def __init__(self, *args: Any, note: str = "", **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.note = note


def _note_intervals(ax: Any, drawn: Mapping[str, tuple[float, float]] | None) -> None:
    """Keep what the intervals drawn on ``ax`` are, for :func:`place_legend`'s title."""
    note = getattr(drawn, "note", "")
    if drawn and note:
        ax._precall_interval_note = note


def intervals(series: _Series, kind: str, *, method: str = "step", ties: str = "group",
              n_resamples: int = stats.DEFAULT_RESAMPLES, random_state: Any = stats.DEFAULT_SEED,
              on_undefined: Any = "warn") -> dict[str, tuple[float, float]]:
    """95% interval of each model's AP (``kind="pr"``: :func:`precall.stats.bootstrap_ci`,
    percentile, ``n_resamples``; drawn as counts of tied-score runs, score blocks past
    :data:`precall.stats.MAX_CELLS` cells, unless weighted or ``ties="stable"``) or ROC-AUC
    (``"roc"``: :func:`precall.stats.roc_auc_ci`, DeLong; the percentile bootstrap with
    weights), from the raw data the series was built from.  Where the interval is undefined
    (fewer than two of a class) its bounds follow ``on_undefined`` as ``precall evaluate --ci``'s
    (:func:`precall._slicing.interval_policy`): NaN with a warning (``"warn"``, the default, or a
    number), NaN (``"nan"``) or a ValueError (``"raise"``)."""
    policy = interval_policy(on_undefined)
    if series.data is None:
        return {}
    y_true, scores, weight = series.data
    if kind == "pr" or weight is not None:
        how = (f"percentile bootstrap, {n_resamples} resamples, "
               f"{seed_text(recorded_seed(random_state))}")
    else:
        how = "DeLong"
    out = Intervals(note=f"[ ]: 95% intervals of {'AP' if kind == 'pr' else 'AUC'} ({how})")
    for name, s in scores.items():
        if kind == "pr":
            metric = functools.partial(average_precision, method=method, ties=ties, pos_label=series.pos_label)
            ci = stats.bootstrap_ci(metric, y_true, s, sample_weight=weight, n_resamples=n_resamples,
                                    random_state=random_state, resample="auto", on_undefined=policy)
        elif weight is None:
            ci = stats.roc_auc_ci(y_true, s, pos_label=series.pos_label, on_undefined=policy)
        else:
            ci = stats.roc_auc_ci(y_true, s, pos_label=series.pos_label, sample_weight=weight,
                                  method="percentile", n_resamples=n_resamples, random_state=random_state,
                                  on_undefined=policy)
        out[name] = (ci.low, ci.high)
    return out


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
    ci: bool = False,
    best_f1: bool = False,
    points: Any = None,
    macro: bool = False,
    print_thresholds: bool = False,
    max_name: int | None = NAME_WIDTH,
    on_undefined: Any = "warn",
    max_legend: int | None = LEGEND_ENTRIES,
) -> Any:
    """Precision-recall curve(s) of one model, several models, or each class.

    Parameters
    ----------
    y_true, sample_weight, pos_label, labels, ties
        As in :func:`precall.average_precision`.
    y_score : array-like, or mapping of name to array-like
        One model's scores (a pandas Series' name is the model's name); ``{name:
        scores}`` to overlay several models; a 2-D array with multi-class or
        multi-label ``y_true`` for one curve per class, the micro-average curve
        and one baseline.
    method : str, default="step"
        The AP convention drawn and quoted in the legend.
    envelope, eleven_point : bool, default=False
        Also draw the VOC2010 precision envelope (dashed) / the VOC2007 11 points.
    baseline : bool, default=True
        The random classifier (precision = prevalence).
    iso_f1 : bool or tuple of float, default=False
        Curves of equal F1 (True: 0.2, 0.4, 0.6, 0.8).
    label : str, default=None
        Legend name of a single model (default: the Series' name, else "model").
    ax : matplotlib Axes, default=None
        Where to draw; a new figure when None (with ``prevalence``: a new
        figure with the ROC panel beside, ``ax.figure.axes[1]``).
    prevalence : float or sequence of float in [1e-300, 1), default=None
        One model only: also draw its PR curve at each of these prevalences
        (the deployment rates), with the AP of each in the legend, and its
        ROC curve once beside (:func:`pr_prevalences`).
    unachievable : bool, default=None
        Shade the unachievable region (precision below ``r P / (r P + N)``);
        by default only with ``prevalence``, for each prevalence drawn.
    roc_ax : matplotlib Axes, default=None
        With ``prevalence`` and a given ``ax``: where to draw the ROC curve
        (not drawn when None).
    ci : bool, default=False
        Models only: the 95% bootstrap band of precision at each recall and
        the AP's 95% interval in the legend (:func:`intervals`).
    best_f1 : bool, default=False
        Mark the best-F1 point of each curve, its threshold in the legend.
    points : sequence of (kind, value), default=None
        Operating points to mark, kind ``"recall"``, ``"precision"`` or
        ``"threshold"``, or ``("best", "youden")`` / ``("best", "closest")``
        (Youden's index, the point closest to the ROC corner (0, 1))
        (:meth:`precall.ThresholdTable.operating_point`).  Markers at the same
        place are drawn in growing sizes, so none hides another.
    print_thresholds : bool, default=False
        Print each marked point's threshold beside it on the curve (pROC's
        ``print.thres``).
    macro : bool, default=False
        Classes only: also the macro-average curve (:func:`macro_pr_curve`:
        mean precision at the union of the classes' recalls; its area is the
        macro step AP), as ``precall report`` draws it.
    max_name : int or None, default=NAME_WIDTH (40)
        The most characters of a name (model, class, positive label) in the
        legend and the axis labels: a longer one keeps its start and end
        around ``...`` (:func:`short_name`); None draws whole names.
    on_undefined : "warn", "nan", "raise" or float, default="warn"
        The AP quoted for a curve without positives (a class without rows), as
        :func:`precall.evaluate` gives it: 0 with an
        :class:`~precall.UndefinedMetricWarning` (``"warn"``, scikit-learn's),
        NaN, a ValueError, or the number given; with ``ci``, an undefined
        interval's bounds (:func:`intervals`).
    max_legend : int or None, default=LEGEND_ENTRIES (20)
        The most legend entries of the models' or classes' curves: past it the
        first ones and one entry ``... and K more`` (every curve is drawn, and
        the micro-average and baseline are always in the legend), so that the
        figure keeps its size whatever the number of classes; None: every entry.

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
    >>> ax.get_xlabel()
    'Recall (Positive label: 1)'
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
                              unachievable=True if unachievable is None else unachievable, ax=ax, roc_ax=roc_ax,
                              pos_label=series.pos_label, best_f1=best_f1, points=points,
                              print_thresholds=print_thresholds, max_name=max_name, on_undefined=on_undefined)
    per_class = series.micro is not None
    if ci and per_class:
        raise ValueError("`ci` draws the bands of models; got one curve per class. Plot a class as a model")
    ax = pr_tables(series, per_class=per_class, method=method, envelope=envelope, eleven_point=eleven_point,
                   baseline=baseline, iso_f1=iso_f1, ax=ax, micro=series.micro, pos_label=series.pos_label,
                   intervals=intervals(series, "pr", method=method, ties=ties, on_undefined=on_undefined)
                   if ci else None, band=ci, best_f1=best_f1, points=points, legend=False,
                   macro=macro and per_class, print_thresholds=print_thresholds, max_name=max_name,
                   on_undefined=on_undefined)
    if unachievable:
        for _, table in series:
            draw_unachievable(ax, table)
    place_legend(ax, max_entries=max_legend)
    return ax


def _prevalences(prevalence: Any) -> list[float]:
    values = [prevalence] if np.ndim(prevalence) == 0 else list(prevalence)
    if not values:
        raise ValueError("`prevalence` must name at least one prevalence in [1e-300, 1); got an empty sequence")
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
    pos_label: Any = None,
    best_f1: bool = False,
    points: Any = None,
    print_thresholds: bool = False,
    max_name: int | None = NAME_WIDTH,
    on_undefined: Any = "warn",
) -> Any:
    """One table's PR curve at its own prevalence and at each of ``prevalence``
    (:meth:`~precall.ThresholdTable.at_prevalence`), each with its baseline and
    (dotted, precision = prevalence) and (``unachievable``) its unachievable
    region; the ROC curve once on ``roc_ax``.  ``best_f1`` / ``points``: marked on
    each PR curve (the best F1 moves with the prevalence) and once on the ROC curve.
    ``label`` and ``pos_label`` are drawn within ``max_name`` characters (:func:`short_name`);
    ``on_undefined`` as in :func:`pr_curve`.

    With ``ax=None`` a figure with two panels is made (PR, then ROC); returns
    the PR axes.
    """
    values = _prevalences(prevalence)
    label = short_name(label, max_name)  # shortened before the prevalence is added to it
    if ax is None:
        _matplotlib()
        import matplotlib.pyplot as plt

        fig, (ax, roc_ax) = plt.subplots(1, 2, figsize=(11, 6.5))
    setup_pr_axes(ax, iso_f1=iso_f1, pos_label=pos_label, max_name=max_name)
    total = table.n_pos + table.n_neg
    own = table.n_pos / total if total else float("nan")
    for pi, t in [(own, table)] + [(pi, table.at_prevalence(pi)) for pi in values]:
        draw_pr(ax, t, label=f"{label} at prevalence {pi:.3g}", method=method, best_f1=best_f1, points=points,
                print_thresholds=print_thresholds, max_name=None, on_undefined=on_undefined)
        color = ax.get_lines()[-1].get_color()
        ax.axhline(pi, color=color, ls=":", lw=1, label="_random baseline")  # precision = prevalence
        if unachievable:
            draw_unachievable(ax, t, color=color, label=f"unachievable at prevalence {pi:.3g}")
    place_legend(ax, ncol=1)
    if roc_ax is not None:
        setup_roc_axes(roc_ax, pos_label=pos_label, max_name=max_name)
        draw_roc(roc_ax, table.grouped(), label=f"{label} (every prevalence)", best_f1=best_f1, points=points,
                 print_thresholds=print_thresholds, max_name=None, on_undefined=on_undefined)
        place_legend(roc_ax)
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
    micro: ThresholdTable | None = None,
    pos_label: Any = None,
    intervals: Mapping[str, tuple[float, float]] | None = None,
    band: bool = False,
    best_f1: bool = False,
    points: Any = None,
    legend: bool = True,
    macro: bool = False,
    print_thresholds: bool = False,
    max_name: int | None = NAME_WIDTH,
    on_undefined: Any = "warn",
    max_legend: int | None = LEGEND_ENTRIES,
) -> Any:
    """:func:`pr_curve` of tables already built: ``(name, table)`` for each curve.

    ``per_class``: the tables are classes of one problem; ``micro``: their
    micro-average table (drawn in black, with the one baseline at its
    prevalence); ``macro``: also their macro-average curve
    (:func:`macro_pr_curve`, dotted navy, its step AP the mean of the classes').
    Otherwise models on the same labels (one gray baseline).
    ``intervals``: ``{name: (low, high)}`` of the AP for the legend (the key
    ``"macro-average"`` for the macro curve).  Names are drawn within ``max_name``
    characters (:func:`short_name`; two that would read alike end in `` #k``).
    ``on_undefined``: the AP of a table without positives (and so the macro AP), and
    ``max_legend``, the most legend entries of the curves, as in :func:`pr_curve`.
    """
    ax = _axes(ax)
    _note_intervals(ax, intervals)
    setup_pr_axes(ax, iso_f1=iso_f1, pos_label=None if per_class else pos_label, max_name=max_name)
    thin_lines = per_class and len(series) > 1
    shown = _short_names([name for name, _ in series], max_name)
    before = _legend_ids(ax)
    for i, ((name, table), label) in enumerate(zip(series, shown)):
        draw_pr(ax, table, label=label, max_name=None, method=method, envelope=envelope and not per_class,
                eleven_point=eleven_point and not per_class,
                baseline=baseline and not per_class and i == 0, baseline_color=_GRAY,
                interval=(intervals or {}).get(name), band=band, best_f1=best_f1 and not per_class,
                band_rows=_band_rows(series, name) if band else None,
                points=None if per_class else points, print_thresholds=print_thresholds,
                on_undefined=on_undefined, **({"lw": 1.2, "alpha": 0.9} if thin_lines else {}))
    _curve_entries(ax, before)
    if per_class:
        reference = micro if micro is not None else (series[0][1] if len(series) == 1 else None)
        if micro is not None:
            draw_pr(ax, micro, label="micro-average", method=method, color="black", lw=2.2, ls=(0, (5, 1.5)),
                    on_undefined=on_undefined)
        if macro:
            tables = [t for _, t in series]
            ap = float(np.mean([t.average_precision(method="step", on_undefined=on_undefined) for t in tables]))
            rx, px = _drawn(*macro_pr_curve(tables), "steps-post")
            ax.plot(rx, px, drawstyle="steps-post", color=_MACRO, lw=2.2, ls=(0, (1, 1)), zorder=4,
                    label=f"macro-average (AP step = {value_text(ap, (intervals or {}).get(MACRO))})")
        if baseline and reference is not None:
            total = reference.n_pos + reference.n_neg
            prevalence = reference.n_pos / total if total else float("nan")
            ax.axhline(prevalence, color=_GRAY, ls=":", lw=1, zorder=1,
                       label=f"random classifier (micro prevalence {prevalence:.3f})")
    if legend:
        place_legend(ax, max_entries=max_legend)
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
    ci: bool = False,
    best_f1: bool = False,
    points: Any = None,
    macro: bool = False,
    print_thresholds: bool = False,
    max_name: int | None = NAME_WIDTH,
    on_undefined: Any = "warn",
    max_legend: int | None = LEGEND_ENTRIES,
) -> Any:
    """ROC curve(s) of one model, several models, or each class (one-vs-rest, with the
    micro-average curve).

    Parameters
    ----------
    y_true, y_score, sample_weight, pos_label, labels, label, ax, best_f1, points, print_thresholds, max_name
        As in :func:`pr_curve`.
    max_fpr : float, default=None
        Shade the region FPR <= max_fpr and quote the partial AUC (McClish).
    shade : bool, default=None
        Shade the area under each curve; by default only for a single curve.
    ci : bool, default=False
        Models only: the 95% bootstrap band of TPR at each FPR (pROC's
        ``ci.se``) and DeLong's interval of the AUC in the legend.
    macro : bool, default=False
        Classes only: also the macro-average curve (:func:`macro_roc_curve`:
        mean TPR at the union of the classes' FPRs, as scikit-learn's example;
        its area is the macro ROC-AUC), as ``precall report`` draws it.
    on_undefined : "warn", "nan", "raise" or float, default="warn"
        The AUC quoted for a curve of one class (a class without rows, or of
        every row), as :func:`precall.evaluate` gives it: NaN with an
        :class:`~precall.UndefinedMetricWarning` (``"warn"``), NaN, a
        ValueError, or the number given; with ``ci``, an undefined interval's
        bounds (:func:`intervals`).
    max_legend : int or None, default=LEGEND_ENTRIES (20)
        As in :func:`pr_curve`.

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
    if ci and series.micro is not None:
        raise ValueError("`ci` draws the bands of models; got one curve per class. Plot a class as a model")
    return roc_tables(series, max_fpr=max_fpr, shade=shade, ax=ax, micro=series.micro,
                      pos_label=None if series.micro is not None else series.pos_label,
                      intervals=intervals(series, "roc", on_undefined=on_undefined) if ci else None, band=ci,
                      best_f1=best_f1, points=points, macro=macro and series.micro is not None,
                      print_thresholds=print_thresholds, max_name=max_name, on_undefined=on_undefined,
                      max_legend=max_legend)


def roc_tables(
    series: list[tuple[str, ThresholdTable]], *, max_fpr: float | None = None, shade: bool | None = None,
    ax: Any = None, micro: ThresholdTable | None = None, pos_label: Any = None,
    intervals: Mapping[str, tuple[float, float]] | None = None, band: bool = False, best_f1: bool = False,
    points: Any = None, macro: bool = False, print_thresholds: bool = False, max_name: int | None = NAME_WIDTH,
    on_undefined: Any = "warn", max_legend: int | None = LEGEND_ENTRIES,
) -> Any:
    """:func:`roc_curve` of tables already built (``(name, table)``; ROC uses each
    table's grouped form, as :func:`precall.roc_auc`); ``micro``: the micro-average
    table of classes, drawn in black; ``macro``: also the classes' macro-average
    curve (:func:`macro_roc_curve`, dotted navy, its AUC the mean of the classes',
    ``intervals["macro-average"]`` beside it).  Names within ``max_name`` characters,
    as :func:`pr_tables` draws them; ``on_undefined`` and ``max_legend`` as in :func:`roc_curve`."""
    max_fpr = _max_fpr(max_fpr)
    ax = _axes(ax)
    _note_intervals(ax, intervals)
    setup_roc_axes(ax, pos_label=pos_label, max_name=max_name)
    _max_fpr_region(ax, max_fpr)
    shade = len(series) == 1 if shade is None else shade
    # classes: the partial AUCs are left out of the legend (one entry a curve, short)
    quoted = max_fpr if micro is None else None
    before = _legend_ids(ax)
    for (name, table), label in zip(series, _short_names([name for name, _ in series], max_name)):
        draw_roc(ax, table.grouped(), label=label, max_name=None, shade=shade, max_fpr=quoted,
                 interval=(intervals or {}).get(name), band=band, best_f1=best_f1 and micro is None,
                 band_rows=_band_rows(series, name) if band else None,
                 points=points if micro is None else None, print_thresholds=print_thresholds,
                 on_undefined=on_undefined, **({"lw": 1.2, "alpha": 0.9} if micro is not None else {}))
    _curve_entries(ax, before)
    if micro is not None:  # classes: a compact legend, no operating points
        draw_roc(ax, micro.grouped(), label="micro-average", shade=False, color="black",
                 lw=2.2, ls=(0, (5, 1.5)), on_undefined=on_undefined)
    if macro:
        tables = [t for _, t in series]
        auc = float(np.mean([t.roc_auc(on_undefined=on_undefined) for t in tables]))
        fx, ty = _drawn(*macro_roc_curve(tables), "default")
        ax.plot(fx, ty, color=_MACRO, lw=2.2, ls=(0, (1, 1)), zorder=4,
                label=f"macro-average (AUC = {value_text(auc, (intervals or {}).get(MACRO))})")
    place_legend(ax, max_entries=max_legend)
    return ax


# ---------------------------------------------------------------------------
# the data objects' ``.plot()`` methods: attached by the package (:mod:`precall`), drawn here
def plot_table(table: ThresholdTable, kind: str = "pr", *, ax: Any = None, label: str = "model",
               **kwargs: Any) -> Any:
    """Draw a table's PR curve (``kind="pr"``) or ROC curve (``"roc"``); returns the Axes.

    What :meth:`precall.ThresholdTable.plot` calls.  ``kwargs`` go to :func:`draw_pr`
    (``method``, ``envelope``, ``eleven_point``, ``baseline``) or :func:`draw_roc`
    (``shade``, ``max_fpr``).
    """
    if kind not in ("pr", "roc"):
        raise ValueError(f"`kind` must be 'pr' or 'roc'; got {kind!r}")
    ax = _axes(ax)
    if kind == "pr":
        setup_pr_axes(ax)
        draw_pr(ax, table, label=label, **kwargs)
    else:
        setup_roc_axes(ax)
        draw_roc(ax, table, label=label, **kwargs)
    place_legend(ax)
    return ax


def plot_curve(curve: Any, *, ax: Any = None, label: str | None = None, **line_kw: Any) -> Any:
    """Draw a :class:`precall.PrecisionRecallCurve` as steps (the curve step AP sums) or a
    :class:`precall.RocCurve` with the chance diagonal; returns the Axes.  What their
    ``.plot()`` methods call."""
    ax = _axes(ax)
    label = None if label is None else mpl(short_name(label))
    if hasattr(curve, "precision"):
        setup_pr_axes(ax)
        ax.plot(curve.recall, curve.precision, drawstyle="steps-post", label=label, **line_kw)
        if label is None:
            return ax
    else:
        setup_roc_axes(ax)
        ax.plot(curve.fpr, curve.tpr, label=label, **line_kw)
    place_legend(ax)
    return ax


# ---------------------------------------------------------------------------
# slices
def _finite(value: float) -> float | None:
    return None if math.isnan(value) else value


def forest(result: Any, intervals: Mapping[int, Any] | None = None, *, k: int = 10, level: float = 0.95,
           axes: Any = None, max_name: int | None = NAME_WIDTH) -> Any:
    """A forest plot of a :class:`precall.SlicedEvaluation`: each shown slice's AP (the
    convention it is ranked by) and ROC-AUC as a point with its interval, the value of all
    rows as a dashed reference line; returns the two Axes.  Of a
    :class:`precall.stats.SliceComparison`: its slices' values and intervals (its level), and
    all rows' values as the reference line.

    Parameters
    ----------
    result : SlicedEvaluation or SliceComparison
        ``precall.evaluate(..., by=...)``, or ``precall.stats.compare_slices(...)`` (then
        ``intervals`` and ``level`` are its own).
    intervals : mapping of int to interval set, default=None
        By slice index (``-1``: all rows), objects with ``average_precision[method]``
        and ``roc_auc`` intervals (``low``, ``high``), or None for a slice without one
        (the command line's ``--ci``); no interval lines without it.
    k : int, default=10
        The ``k`` worst and ``k`` best ranked slices are shown (worst at the top; every
        ranked slice when there are at most ``2 k``), a dotted line between the two groups.
    level : float, default=0.95
        The intervals' level, for the legend.
    axes : pair of Axes, default=None
        Where to draw (default: a new figure of two panels sharing the slices).
    max_name : int or None, default=NAME_WIDTH (40)
        The most characters of a slice's name (and of a ``by`` column's) on the
        axes (:func:`short_name`); None: whole names.
    """
    k = check_number(k, "k", low=1, integer=True, hint="how many worst and best slices to show")
    level = check_probability(level, "level")
    ranked = result.ranked.tolist()
    split = len(ranked) > 2 * k
    picked = ranked[:k] + ranked[-k:] if split else ranked
    if axes is None:
        _matplotlib()
        import matplotlib.pyplot as plt

        height = 1.9 + 0.32 * max(len(picked), 1)
        fig, axes = plt.subplots(1, 2, sharey=True, figsize=(9.0, height))
        fig.subplots_adjust(bottom=min(0.5, 1.25 / height))  # room for the axis labels and the legends below
    ys = np.arange(len(picked))[::-1].astype(float)
    if split:
        ys[k:] -= 1.0  # a gap between the worst and the best
    if hasattr(result, "vs_reference"):  # stats.compare_slices: its values and intervals (no row of all rows)
        method, level = result.method, result.level
        panels = [(f"AP {method}", np.asarray(result.ap), _finite(result.overall_ap),
                   lambda i: (result.ap_low[i], result.ap_high[i])),
                  ("ROC-AUC", np.asarray(result.auc), _finite(result.overall_auc),
                   lambda i: (result.auc_low[i], result.auc_high[i]))]
    else:
        method = result.rank_by

        def of(part: Callable[[Any], Any]) -> Callable[[int], tuple[float, float] | None]:
            def bounds(i: int) -> tuple[float, float] | None:
                iv = intervals.get(i) if intervals else None
                return None if iv is None else (part(iv).low, part(iv).high)
            return bounds

        panels = [(f"AP {method}", result.average_precision[method], result.overall.average_precision[method],
                   of(lambda iv: iv.average_precision[method])),
                  ("ROC-AUC", result.roc_auc, result.overall.roc_auc, of(lambda iv: iv.roc_auc))]
    for ax, (title, values, overall, interval) in zip(axes, panels):
        shown = values[picked] if picked else np.zeros(0)
        got = [(y, interval(i)) for y, i in zip(ys, picked) if interval(i) is not None]
        if got:
            ax.hlines([y for y, _ in got], [lo for _, (lo, _) in got], [hi for _, (_, hi) in got], color="C0",
                      linewidth=1.6, label=f"{percent(level)} interval")
        ax.plot(shown, ys, "o", color="C0", markersize=5, label=title)
        if overall is not None:
            ax.axvline(overall, color=_GRAY, linestyle="--", linewidth=1, label=f"all rows: {overall:.4f}")
        if split:
            ax.axhline(ys[k - 1] - 1.0, color=_GRAY, linestyle=":", linewidth=0.8)
        ax.set_xlabel(title)
        ax.grid(axis="x", alpha=0.3)
        legend = place_legend(ax)
        # below the tick labels and the axis label whatever the panel's height (a few slices make it short,
        # and a fraction of it would put the legend over the label)
        from matplotlib.transforms import ScaledTranslation  # noqa: PLC0415 - matplotlib is loaded by now

        legend.set_bbox_to_anchor((0.5, 0.0), transform=ax.transAxes + ScaledTranslation(
            0.0, -0.45, ax.figure.dpi_scale_trans))
    axes[0].set_yticks(ys, [mpl(name) for name in _short_names([result.names[i] for i in picked], max_name)])
    axes[0].set_ylim(float(ys.min(initial=0)) - 0.7, float(ys.max(initial=0)) + 0.7)
    worst = f"the {k} worst and {k} best of {len(ranked)} ranked slices" if split else f"{len(ranked)} ranked slices"
    by = ", ".join(short_name(c, max_name) for c in result.columns)
    axes[0].set_title(mpl(f"by {by}: {worst}, worst at the top"), loc="left", fontsize=10)
    return axes
