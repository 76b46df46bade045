"""Every numeric option of the non-detection library API goes through one validator
(``check_number`` / ``check_numbers`` in ``_core/validate.py``): NaN, infinities, values out of
range, bools and strings are refused with the one message shape ("`name` must be ...; got ...")
naming the option; a ``ValueError`` for a bad value, a ``TypeError`` for a bad type.

(``precall.stats``, ``precall.detection``, the readers and the CLI have their own tables.)
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import precall
from precall import scale  # noqa: F401  (the accumulator's package)

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from precall import plot  # noqa: E402
from precall.plot import report  # noqa: E402

Y = np.array([0, 1, 1, 0, 1, 0, 0, 1, 1, 0])
S = np.array([0.1, 0.9, 0.35, 0.4, 0.8, 0.2, 0.35, 0.6, 0.3, 0.7])
Y3 = np.array([0, 1, 2, 0, 1, 2, 0, 1, 2, 1])
S3 = np.random.default_rng(0).random((10, 3))
TABLE = precall.threshold_table(Y, S)


def _dask():
    dask = pytest.importorskip("dask")
    import dask.array as da

    import precall.dask as pdask

    return dask, pdask, da.from_array(Y, chunks=4), da.from_array(S, chunks=4)


def _on_dask(name, **kw):
    dask, pdask, dy, ds = _dask()
    with dask.config.set(scheduler="synchronous"):
        result = getattr(pdask, name)(dy, ds, **kw)
        return result.table() if name == "accumulate" else result


def _axes():
    return plt.subplots()[1]


# (option, out-of-range values, how to call with the option set to v)
OPTIONS = {
    "average_precision(prevalence)": ("prevalence", [0, 1, -0.5], lambda v: precall.average_precision(Y, S, prevalence=v)),
    "evaluate(prevalence)": ("prevalence", [0, 1.5], lambda v: precall.evaluate(Y, S, prevalence=v)),
    "roc_auc(max_fpr)": ("max_fpr", [0, 1.5, -1], lambda v: precall.roc_auc(Y, S, max_fpr=v)),
    "roc_auc(max_fpr), multi-class": ("max_fpr", [0, 2], lambda v: precall.roc_auc(Y3, S3 / S3.sum(1, keepdims=True),
                                                                              max_fpr=v, multi_class="ovr")),
    "precision_recall_curve(prevalence)": ("prevalence", [0, 1], lambda v: precall.precision_recall_curve(
        Y, S, prevalence=v)),
    "auprg(prevalence)": ("prevalence", [1, -1], lambda v: precall.auprg(Y, S, prevalence=v)),
    "precision_recall_gain_curve(prevalence)": ("prevalence", [0], lambda v: precall.precision_recall_gain_curve(
        Y, S, prevalence=v)),
    "ThresholdTable.at_prevalence": ("prevalence", [0, 1], lambda v: TABLE.at_prevalence(v)),
    "ThresholdTable.roc_auc(max_fpr)": ("max_fpr", [0, 1.01], lambda v: TABLE.roc_auc(max_fpr=v)),
    "ThresholdTable.operating_point(recall)": ("recall", [-0.1, 1.1], lambda v: TABLE.operating_point(recall=v)),
    "ThresholdTable.operating_point(precision)": ("precision", [-0.1, 2], lambda v: TABLE.operating_point(
        precision=v)),
    "ThresholdTable.operating_point(threshold)": ("threshold", [], lambda v: TABLE.operating_point(threshold=v)),
    "ThresholdTable.to_text(max_rows)": ("max_rows", [0, -3, 2.5], lambda v: TABLE.to_text(max_rows=v)),
    "ThresholdTable(n_pos)": ("n_pos", [-1, 3], lambda v: precall.ThresholdTable(
        TABLE.thresholds, TABLE.tp, TABLE.fp, v, TABLE.n_neg)),
    "ThresholdTable(n_neg)": ("n_neg", [-1, 3], lambda v: precall.ThresholdTable(
        TABLE.thresholds, TABLE.tp, TABLE.fp, TABLE.n_pos, v)),
    "min_precision(recall)": ("recall", [-0.5, 1.5], lambda v: precall.min_precision(v, n_pos=3, n_neg=4)),
    "min_precision(n_pos)": ("n_pos", [0, -1], lambda v: precall.min_precision(0.5, n_pos=v, n_neg=4)),
    "min_precision(n_neg)": ("n_neg", [-1], lambda v: precall.min_precision(0.5, n_pos=3, n_neg=v)),
    "min_average_precision(n_pos)": ("n_pos", [0, 2.5], lambda v: precall.min_average_precision(v, 3)),
    "min_average_precision(n_neg)": ("n_neg", [-1], lambda v: precall.min_average_precision(3, v)),
    "pr_from_roc(n_pos)": ("n_pos", [0], lambda v: precall.pr_from_roc([0.0, 1.0], [0.5, 1.0], n_pos=v, n_neg=2)),
    "roc_from_pr(n_neg)": ("n_neg", [0], lambda v: precall.roc_from_pr([1.0, 0.5], [0.5, 1.0], n_pos=2, n_neg=v)),
    "Accumulator(bins)": ("bins", [0, -2, 2.5], lambda v: precall.Accumulator(bins=v, score_range=(0, 1))),
    "Accumulator(score_range)": ("score_range", [], lambda v: precall.Accumulator(bins=4, score_range=(v, 2))),
    "Accumulator(score_range), high": ("score_range", [], lambda v: precall.Accumulator(bins=4, score_range=(-1, v))),
    "Accumulator.evaluate(prevalence)": ("prevalence", [0, 1], lambda v: precall.Accumulator().update(Y, S).evaluate(
        prevalence=v)),
    "Accumulator.evaluations(prevalences)": ("prevalences", [0, 1], lambda v: precall.Accumulator().update(
        Y, S).evaluations([0.5, v])),
    "dask.accumulate(split_every)": ("split_every", [1, 0, 2.5], lambda v: _on_dask("accumulate", split_every=v)),
    "dask.evaluate(prevalence)": ("prevalence", [0, 1], lambda v: _on_dask("evaluate", prevalence=v)),
    "dask.evaluate(n_ranges)": ("n_ranges", [0, -1, 1.5], lambda v: _on_dask("evaluate", n_ranges=v)),
    "dask.evaluations(prevalences)": ("prevalences", [1], lambda v: _on_dask("evaluations", prevalences=[v])),
    "dask.threshold_table(n_ranges)": ("n_ranges", [0], lambda v: _on_dask("threshold_table", n_ranges=v)),
    "dask.roc_auc(max_fpr)": ("max_fpr", [0, 1.5], lambda v: _on_dask("roc_auc", max_fpr=v)),
    "plot.thin(cell)": ("cell", [0, -1], lambda v: plot.thin(np.linspace(0, 1, 9000), np.linspace(0, 1, 9000),
                                                              cell=v)),
    "plot.thin(budget)": ("budget", [0, 1, 2.5], lambda v: plot.thin(np.linspace(0, 1, 50), np.linspace(0, 1, 50),
                                                                   budget=v)),
    "plot.place_legend(fontsize)": ("fontsize", [0, -1], lambda v: plot.place_legend(_axes(), fontsize=v)),
    "plot.place_legend(ncol)": ("ncol", [0, 1.5], lambda v: plot.place_legend(_axes(), ncol=v)),
    "plot.draw_unachievable(points)": ("points", [1, 0, 2.5], lambda v: plot.draw_unachievable(_axes(), TABLE,
                                                                                              points=v)),
    "plot.setup_pr_axes(iso_f1)": ("iso_f1", [0, 1, 1.5], lambda v: plot.setup_pr_axes(_axes(), iso_f1=(0.5, v))),
    "plot.pr_curve(prevalence)": ("prevalence", [0, 1], lambda v: plot.pr_curve(Y, S, prevalence=v)),
    "plot.pr_curve(prevalence list)": ("prevalence", [0, 1], lambda v: plot.pr_curve(Y, S, prevalence=[0.2, v])),
    "plot.pr_prevalences(prevalence)": ("prevalence", [0, 1], lambda v: plot.pr_prevalences(TABLE, [v])),
    "plot.pr_curve(points recall)": ("recall", [1.5], lambda v: plot.pr_curve(Y, S, points=[("recall", v)])),
    "plot.roc_curve(max_fpr)": ("max_fpr", [0, 1.5], lambda v: plot.roc_curve(Y, S, max_fpr=v)),
    "plot.roc_tables(max_fpr)": ("max_fpr", [0, 1.5], lambda v: plot.roc_tables([("m", TABLE)], max_fpr=v)),
    "plot.draw_roc(max_fpr)": ("max_fpr", [0, 1.5], lambda v: plot.draw_roc(_axes(), TABLE, max_fpr=v)),
    "report.html_report(rank_rows)": ("rank_rows", [0, -1, 2.5], lambda v: report.html_report(Y, {"m": S}, rank_rows=v)),
    "report.html_report(max_fpr)": ("max_fpr", [0, 1.5], lambda v: report.html_report(Y, {"m": S}, max_fpr=v)),
}

BAD = {  # kind: (value, error type)
    "nan": (float("nan"), ValueError),
    "+inf": (float("inf"), ValueError),
    "-inf": (float("-inf"), ValueError),
    "numpy nan": (np.float32("nan"), ValueError),
    "bool": (True, TypeError),
    "string": ("0.5", TypeError),
    "complex": (0.5 + 0j, TypeError),
}

CASES = [(name, kind) for name in OPTIONS for kind in BAD] + [
    (name, f"out of range {v!r}") for name, (_, values, _) in OPTIONS.items() for v in values]


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


@pytest.mark.parametrize("name,kind", CASES, ids=[f"{n}-{k}" for n, k in CASES])
def test_bad_numeric_option_is_refused_naming_it(name, kind):
    option, _, call = OPTIONS[name]
    if kind in BAD:
        value, error = BAD[kind]
    else:
        value, error = eval(kind.removeprefix("out of range ")), ValueError  # noqa: S307 - repr of a number
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(error) as info:
            call(value)
    message = str(info.value)
    assert f"`{option}`" in message, message
    assert "must be" in message and "; got" in message, message


@pytest.mark.parametrize("name", sorted(OPTIONS))
def test_a_good_value_is_accepted(name):
    # the table's calls work with a valid value, so each refusal above is the option's
    option, _, call = OPTIONS[name]
    good = {"prevalence": 0.25, "prevalences": 0.25, "max_fpr": 0.5, "recall": 0.5, "precision": 0.5,
            "threshold": 0.5, "max_rows": 4, "n_pos": None, "n_neg": None, "bins": 4, "score_range": 1.5,
            "split_every": 2, "n_ranges": 2, "cell": 0.01, "budget": 10, "fontsize": 8, "ncol": 2, "points": 11,
            "iso_f1": 0.8, "rank_rows": 5}[option]
    if name.startswith("ThresholdTable(n_"):
        good = getattr(TABLE, option)
    elif option in ("n_pos", "n_neg"):
        good = 3
    if name == "Accumulator(score_range)":
        good = 0.5
    if name == "roc_auc(max_fpr), multi-class":
        good = 1.0  # scikit-learn's only value for multi-class input
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        call(good)


# ------------------------------------------------------------------ allocation bounds
# every size parameter is checked against what it would allocate before anything is allocated
# (check_allocation: 8 GiB at most): a ValueError naming the option and the size, never a MemoryError
SIZES = {
    "Accumulator(bins)": ("bins", 10**12, lambda v: precall.Accumulator(bins=v, score_range=(0, 1))),
    "Accumulator(bins), per class": ("bins", 10**8, lambda v: precall.Accumulator(
        bins=v, score_range=(0, 1), labels=np.arange(4))),
    "Accumulator(bins as edges)": ("bins", None, None),  # edges are the user's own array: already allocated
    "dask n_ranges": ("n_ranges", 10**9, lambda v: _on_dask("evaluate", n_ranges=v)),
    "dask.threshold_table(n_ranges)": ("n_ranges", 10**9, lambda v: _on_dask("threshold_table", n_ranges=v)),
    "plot.draw_unachievable(points)": ("points", 10**12, lambda v: plot.draw_unachievable(_axes(), TABLE, points=v)),
    "report.html_report(rank_rows)": ("rank_rows", 10**12, lambda v: report.html_report(Y, {"m": S}, rank_rows=v)),
}


@pytest.mark.parametrize("name", [n for n, (_, v, _) in SIZES.items() if v is not None])
def test_size_parameter_is_bounded_before_allocating(name):
    option, huge, call = SIZES[name]
    with pytest.raises(ValueError, match=rf"`{option}` = {huge} would allocate .* \(limit 8.0 GiB\)"):
        call(huge)


def test_binned_accumulator_allocation_counts_every_class():
    # 10**8 bins: 3.0 GiB for one table (accepted, not allocated here), 11.9 GiB for four
    from precall._core.validate import MAX_ALLOCATION_BYTES
    from precall.scale.binned import BIN_BYTES, edges_of

    assert 10**8 * BIN_BYTES <= MAX_ALLOCATION_BYTES < 4 * 10**8 * BIN_BYTES
    with pytest.raises(ValueError, match="would allocate 11.9 GiB"):
        edges_of(10**8, (0, 1), n_classes=4)
