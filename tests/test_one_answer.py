"""One answer: the same quantity, asked through any function, command or engine, is the same number.

Every command that prints a quantity (evaluate, compare, explain, plot, report) is run on the same
file with the same options, and every shared number is compared with the others and with the
library (:func:`precall.score` of a :class:`precall.Metric`, :mod:`precall.stats` with its
defaults), intervals included.  The metric value itself is checked to be a value: frozen,
hashable, picklable, equal when built through any route.
"""

from __future__ import annotations

import csv
import dataclasses
import functools
import json
import pickle
import re
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import precall
from precall import stats
from precall.cli import main

ASAH = Path(__file__).parent / "data" / "pROC_aSAH.csv"
BASE = [str(ASAH), "--label", "outcome", "--pos-label", "Poor"]


def _asah() -> tuple[np.ndarray, dict[str, np.ndarray]]:
    with ASAH.open() as f:
        rows = list(csv.DictReader(f))
    y = np.array([r["outcome"] == "Poor" for r in rows]).astype(int)
    return y, {c: np.array([float(r[c]) for r in rows]) for c in ("s100b", "ndka", "wfns")}


def _out(args: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    code = main(args)
    captured = capsys.readouterr()
    assert code == 0, captured.err
    return captured.out


# ---------------------------------------------------------------------------
# the metric value
def test_a_metric_is_a_frozen_hashable_picklable_value():
    m = precall.metric("average_precision", method="voc2007")
    assert m == precall.Metric("average_precision", method="voc2007")
    assert {m: 1}[precall.metric("average_precision", method="voc2007")] == 1
    assert pickle.loads(pickle.dumps(m)) == m
    with pytest.raises(dataclasses.FrozenInstanceError):
        m.method = "step"  # type: ignore[misc]
    # options that do not apply are normalised, so equal quantities are equal values
    assert precall.metric("roc_auc", ties="stable", max_fpr=1) == precall.metric("roc_auc")
    assert precall.metric("roc_auc", max_fpr=0.1).name == "ROC-AUC (max_fpr=0.1)"


@pytest.mark.parametrize("options,error", [
    ({"method": "nope"}, ValueError), ({"max_fpr": float("nan")}, ValueError), ({"max_fpr": 0}, ValueError),
    ({"max_fpr": "0.1"}, TypeError), ({"average": "mean"}, ValueError), ({"on_undefined": [1]}, TypeError),
])
def test_a_metric_value_is_validated_when_built(options, error):
    measure = "roc_auc" if "max_fpr" in options else "average_precision"
    with pytest.raises(error, match=next(iter(options))):
        precall.metric(measure, **options)


@pytest.mark.parametrize("method", precall.AP_METHODS)
@pytest.mark.parametrize("ties", ["group", "stable"])
def test_the_public_functions_are_the_metric_value_scored(method, ties):
    rng = np.random.default_rng(3)
    y = rng.integers(0, 2, 300)
    s = np.round(rng.random(300), 1)
    w = rng.random(300)
    value = precall.metric("average_precision", method=method, ties=ties)
    assert precall.score(value, y, s, sample_weight=w) == precall.average_precision(
        y, s, method=method, ties=ties, sample_weight=w)
    evaluation = precall.evaluate(y, s, ties=ties)
    assert precall.score(value, y, s) == evaluation.average_precision[method]
    assert precall.score(precall.metric("roc_auc"), y, s) == evaluation.roc_auc
    assert precall.score(precall.metric("best_f1", ties=ties), y, s) == evaluation.best_f1.f1


def test_a_metric_value_bootstraps_as_its_function_does():
    y, cols = _asah()
    s = cols["s100b"]
    value = precall.metric("average_precision", method="coco")
    partial = functools.partial(precall.average_precision, method="coco")
    lam = stats.bootstrap_ci(value, y, s)
    assert (lam.low, lam.high) == (stats.bootstrap_ci(partial, y, s).low, stats.bootstrap_ci(partial, y, s).high)
    assert lam.resample == "counts"  # a metric value is counted (the default "auto" draws counts)
    # a user callable is called on each resample's rows; its interval has the row bootstrap's law
    wrapped = stats.bootstrap_ci(lambda t, u: precall.average_precision(t, u, method="coco"), y, s)
    assert wrapped.resample == "rows"
    rows = stats.bootstrap_ci(value, y, s, resample="rows")
    assert (wrapped.low, wrapped.high) == (rows.low, rows.high)


# ---------------------------------------------------------------------------
# every command, the same numbers
def test_evaluate_report_plot_explain_and_the_library_agree(tmp_path, capsys):
    y, cols = _asah()
    s = cols["s100b"]
    ev = json.loads(_out(["evaluate", *BASE, "--score", "s100b", "--ci", "--json"], capsys))
    iv = ev["intervals"]
    assert (iv["bootstrap"]["n_resamples"], iv["bootstrap"]["seed"]) == (stats.DEFAULT_RESAMPLES, stats.DEFAULT_SEED)
    # the library with its defaults: the same numbers and the same intervals
    values = [precall.metric("average_precision", method=m) for m in precall.AP_METHODS]
    library = stats.bootstrap_cis(values, y, s)
    for m, value, res in zip(precall.AP_METHODS, values, library):
        assert ev["average_precision"][m] == precall.score(value, y, s) == res.estimate
        assert (iv["average_precision"][m]["low"], iv["average_precision"][m]["high"]) == (res.low, res.high)
        single = stats.bootstrap_ci(value, y, s)  # one metric alone: the same draw
        assert (single.low, single.high) == (res.low, res.high)
    delong = stats.roc_auc_ci(y, s)
    assert ev["roc_auc"] == delong.estimate == precall.roc_auc(y, s)
    assert (iv["roc_auc"]["low"], iv["roc_auc"]["high"]) == (delong.low, delong.high)

    # report --ci: the same AP interval and DeLong interval, at the report's 4 digits
    out = tmp_path / "r.html"
    _out(["report", *BASE, "--score", "s100b", "--ci", "-o", str(out)], capsys)
    html = out.read_text(encoding="utf-8")
    step = iv["average_precision"]["step"]
    assert f"[{step['low']:.4f}, {step['high']:.4f}]" in html
    assert f"[{iv['roc_auc']['low']:.4f}, {iv['roc_auc']['high']:.4f}]" in html
    assert f"seed {stats.DEFAULT_SEED}" in html and f"{stats.DEFAULT_RESAMPLES} stratified resamples" in html

    # plot --ci: the legend's AP and AUC intervals (the function the command draws with)
    plot = pytest.importorskip("precall.plot")
    ax = plot.pr_curve(y, s, label="s100b", ci=True)
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert f"s100b (AP step = {ev['average_precision']['step']:.3f} [{step['low']:.3f}, {step['high']:.3f}])" in legend
    ax = plot.roc_curve(y, s, label="s100b", ci=True)
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert f"s100b (AUC = {ev['roc_auc']:.3f} [{iv['roc_auc']['low']:.3f}, {iv['roc_auc']['high']:.3f}])" in legend

    # explain: its table of every convention's AP
    text = _out(["explain", *BASE, "--score", "s100b"], capsys)
    for m in precall.AP_METHODS:
        row = re.search(rf"^\s*{m}\s+([0-9.]+)\s+([0-9.]+)\s+([-0-9.]+)", text, re.MULTILINE)
        assert row is not None, m
        digits = len(row.group(1).split(".")[1])
        assert row.group(1) == f"{ev['average_precision'][m]:.{digits}f}"
        assert row.group(2) == f"{ev['min_average_precision'][m]:.{digits}f}"


def test_fractional_weights_evaluate_report_and_plot_give_the_same_intervals(tmp_path, capsys):
    """Weights that are not whole: ``evaluate --ci`` bootstraps the rows with their weights, and
    ``report --ci`` / ``plot --ci`` print and draw those intervals (their bands draw the same
    weighted rows) instead of refusing the data."""
    rng = np.random.default_rng(3)
    n = 400
    y = rng.integers(0, 2, n)
    s = np.round(rng.normal(y * 0.8, 1.0), 3)
    w = np.round(rng.random(n) + 0.05, 3)
    path = tmp_path / "w.csv"
    path.write_text("y,s,w\n" + "".join(f"{a},{b},{c}\n" for a, b, c in zip(y, s, w)), encoding="utf-8")
    base = [str(path), "--label", "y", "--score", "s", "--weight", "w"]
    iv = json.loads(_out(["evaluate", *base, "--ci", "--json"], capsys))["intervals"]
    step, auc = iv["average_precision"]["step"], iv["roc_auc"]
    out = tmp_path / "r.html"
    _out(["report", *base, "--ci", "-o", str(out)], capsys)
    html = out.read_text(encoding="utf-8")
    assert f"[{step['low']:.4f}, {step['high']:.4f}]" in html
    assert f"[{auc['low']:.4f}, {auc['high']:.4f}]" in html
    assert "Shaded bands" in html and "weighted rows" in html
    _out(["plot", *base, "--ci", "-o", str(tmp_path / "p.svg")], capsys)
    plot = pytest.importorskip("precall.plot")
    ax = plot.pr_curve(y, s, sample_weight=w, label="s", ci=True)
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert any(f"[{step['low']:.3f}, {step['high']:.3f}]" in text for text in legend), legend
    ax = plot.roc_curve(y, s, sample_weight=w, label="s", ci=True)
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert any(f"[{auc['low']:.3f}, {auc['high']:.3f}]" in text for text in legend), legend


def test_compare_agrees_with_evaluate_and_its_p_value_with_its_interval(capsys):
    y, cols = _asah()
    cmp = json.loads(_out(["compare", *BASE, "--score", "s100b", "--score", "ndka", "--json",
                           "--metric", "roc_auc", "--metric", "step"], capsys))
    for column, key in (("s100b", "estimate_a"), ("ndka", "estimate_b")):
        ev = json.loads(_out(["evaluate", *BASE, "--score", column, "--json"], capsys))
        for t in cmp["tests"]:
            expected = ev["roc_auc"] if t["metric"] == "ROC-AUC" else ev["average_precision"]["step"]
            assert t[key] == expected, (column, t["metric"])
    level = cmp["tests"][0]["level"]
    for t in cmp["tests"]:
        assert (t["low"] > 0 or t["high"] < 0) == (t["p_value"] < 1 - level), t
        if t["method"] != "delong":
            assert t["p_method"] == "bootstrap"
    delong = stats.roc_auc_test(y, cols["s100b"], cols["ndka"])
    row = next(t for t in cmp["tests"] if t["method"] == "delong")
    assert (row["low"], row["high"], row["p_value"]) == (delong.low, delong.high, delong.p_value)


@pytest.mark.parametrize("method", ["percentile", "bca"])
@pytest.mark.parametrize("shift", [0.0, 0.3, 1.0, 3.0])
def test_a_bootstrap_p_value_is_below_alpha_exactly_when_the_interval_excludes_zero(method, shift):
    rng = np.random.default_rng(11)
    y = rng.integers(0, 2, 400)
    a = rng.normal(size=400) + y
    b = a + rng.normal(size=400) * 0.7 - shift * y * rng.random(400)
    for level in (0.5, 0.8, 0.9, 0.95, 0.99):
        t = stats.bootstrap_test(precall.average_precision, y, a, b, level=level, method=method,
                                 n_resamples=500)
        assert t.p_method == "bootstrap" and 0 < t.p_value <= 1
        if t.p_value > t.p_resolution:  # resolved: the interval decides as the p-value does
            assert (t.low > 0 or t.high < 0) == (t.p_value < 1 - level), (level, t)
        else:
            assert t.low > 0 or t.high < 0


# ---------------------------------------------------------------------------
# every engine, the same number for the same metric value
_ENGINE_METRICS = [precall.metric("average_precision", method=m) for m in precall.AP_METHODS] + [
    precall.metric("roc_auc"), precall.metric("roc_auc", max_fpr=0.3), precall.metric("best_f1")]


@pytest.mark.parametrize("weighted", [False, True])
def test_in_memory_accumulator_and_dask_give_the_metric_values_same_number(weighted):
    rng = np.random.default_rng(8)
    n = 3000
    y = rng.integers(0, 2, n)
    s = np.round(rng.random(n), 2)  # ties
    w = rng.random(n) if weighted else None
    acc = precall.Accumulator()
    for part in np.array_split(np.arange(n), 7):
        acc.update(y[part], s[part], sample_weight=None if w is None else w[part])
    dask_array = pytest.importorskip("dask.array")
    yd, sd = dask_array.from_array(y, chunks=700), dask_array.from_array(s, chunks=700)
    wd = None if w is None else dask_array.from_array(w, chunks=700)
    from precall import dask as pdask

    for m in _ENGINE_METRICS:
        expected = precall.score(m, y, s, sample_weight=w)
        assert acc.score(m) == pytest.approx(expected, rel=1e-12, abs=1e-15), m
        assert pdask.score(m, yd, sd, sample_weight=wd) == pytest.approx(expected, rel=1e-12, abs=1e-15), m
        if not weighted and m.measure == "roc_auc" and m.max_fpr is None:
            assert acc.score(m) == expected  # exact integers


def test_the_accumulator_averages_classes_as_the_library():
    rng = np.random.default_rng(9)
    y = rng.integers(0, 3, 500)
    s = rng.random((500, 3))
    acc = precall.Accumulator(labels=[0, 1, 2]).update(y, s)
    for average in ("macro", "weighted", None):
        m = precall.metric("average_precision", average=average)
        np.testing.assert_allclose(acc.score(m), precall.score(m, y, s), rtol=1e-12)
    with pytest.raises(ValueError, match="micro"):
        acc.score(precall.metric("average_precision", average="micro"))
    with pytest.raises(ValueError, match="ties"):
        precall.Accumulator().update([0, 1], [0.2, 0.4]).score(precall.metric("average_precision", ties="stable"))


# ---------------------------------------------------------------------------
# detection: the commands and the library on the same files
COCO = Path(__file__).parent / "data" / "coco_val2014_100"


def test_detection_commands_agree_with_each_other_and_the_library(capsys):
    from precall import detection

    gt, res = COCO / "instances_val2014_100.json", COCO / "instances_val2014_fakebbox100_results.json"
    plain = json.loads(_out(["detection", "coco", str(gt), str(res), "--json"], capsys))
    per_class = json.loads(_out(["detection", "coco", str(gt), str(res), "--json", "--per-class"], capsys))
    reordered = json.loads(_out(["detection", "coco", str(gt), str(res), "--json", "--per-class", "--area-ranges",
                                 "small=0:1024,medium=1024:9216,large=9216:1e10,all=0:1e10"], capsys))
    ev = detection.evaluate_coco(detection.load_coco(gt, res))
    library = dict(zip(ev.stat_names, ev.stats))
    assert plain["stats"] == per_class["stats"]
    for name, value in plain["stats"].items():
        assert value == library[name], name
        assert reordered["stats"][name] == value, name  # "all" listed last: the same numbers by name
    table = {row["id"]: row for row in per_class["per_class"]}
    for row in reordered["per_class"]:
        for key in ("AP", "AP50", "AP75", "AR", "n_gt"):
            assert row[key] == table[row["id"]][key], (row["id"], key)
    # the per-class AP averages to the summary mAP over classes with ground truth (pycocotools' mean)
    present = [row["AP"] for row in per_class["per_class"] if row["n_gt"] > 0]
    assert np.mean(present) == pytest.approx(plain["stats"]["AP"], rel=1e-12)
    # mAP at IoU 0.5 by the coco convention from the library's per-class tables is AP50
    assert ev.mean_average_precision("coco", iou_threshold=0.5) == pytest.approx(plain["stats"]["AP50"], rel=1e-12)


@pytest.mark.parametrize("engine", [[], ["--stream"], ["--engine", "dask", "--scheduler", "synchronous"]])
@pytest.mark.parametrize("suffix", [".csv", ".tsv"])
def test_every_engine_reads_the_file_by_the_readers_rules(tmp_path, capsys, engine, suffix):
    """One dispatch and one missing-label rule, whichever engine reads the file."""
    pytest.importorskip("dask.dataframe")
    sep = "\t" if suffix == ".tsv" else ","
    good = tmp_path / f"good{suffix}"
    good.write_text(sep.join(["y", "s"]) + "\n" + "\n".join(f"{i % 2}{sep}{(i * 7 % 10) / 10}" for i in range(40)) + "\n")
    out = json.loads(_out(["evaluate", str(good), "--label", "y", "--score", "s", "--json", *engine], capsys))
    y = np.array([i % 2 for i in range(40)])
    s = np.array([(i * 7 % 10) / 10 for i in range(40)])
    assert out["average_precision"]["step"] == pytest.approx(precall.average_precision(y, s), rel=1e-15)
    bad = tmp_path / f"bad{suffix}"
    bad.write_text(good.read_text() + sep.join(["NA", "0.5"]) + "\n")
    assert main(["evaluate", str(bad), "--label", "y", "--score", "s", *engine]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and str(bad) in err[0] and "label" in err[0], err


def test_detection_coco_help_names_every_iou_type(capsys):
    try:
        assert main(["detection", "coco", "--help"]) == 0
    except SystemExit as exc:  # argparse's own exit
        assert exc.code == 0
    text = " ".join(capsys.readouterr().out.split())
    for word in ("bbox", "segm", "keypoints", "10 for keypoints", "12 for bbox and segm"):
        assert word in text


# ---------------------------------------------------------------------------
# evaluate --by: in memory, streamed and on Dask, the same table, JSON and CSV
def _sliced_file(tmp_path: Path, kind: str) -> Path:
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(3)
    n = 2400
    y = (rng.random(n) < 0.3).astype(int)
    frame = pd.DataFrame({
        "y": y, "p": np.round(rng.random(n) * 0.6 + y * rng.random(n) * 0.4, 2),  # ties
        "country": rng.choice(["de", "fr", "us", "it", "pl", ""], n), "week": rng.integers(1, 13, n),
        "w": np.round(rng.random(n) * 2, 1),
        "n": rng.integers(0, 2, n),  # a slice column named like a column of the output
    })
    frame.loc[frame.country == "pl", "y"] = 0  # a slice without positives: the undefined policy
    path = tmp_path / f"sliced.{kind}"
    if kind == "parquet":
        frame.assign(country=frame.country.replace("", None)).to_parquet(path)
    elif kind == "jsonl":
        frame.assign(country=frame.country.replace("", None)).to_json(path, orient="records", lines=True)
    else:
        frame.to_csv(path, index=False)
    return path


ENGINES = [["--stream", "--chunk-rows", "333"], ["--engine", "dask", "--scheduler", "synchronous"]]


@pytest.mark.parametrize("kind", ["csv", "parquet", "jsonl"])
@pytest.mark.parametrize("engine", ENGINES, ids=["stream", "dask"])
@pytest.mark.parametrize("options", [
    ["--by", "country,week", "--json", "--min-support", "30"],
    ["--by", "week,country", "--csv"],
    ["--by", "country", "--top", "2"],
    ["--by", "country,week", "--full", "--on-undefined", "nan"],
    ["--by", "country", "--json", "--ci", "--resamples", "200", "--full"],
    ["--by", "week", "--ci", "--resamples", "100", "--top", "3", "--level", "0.9", "--seed", "7"],
    ["--by", "week,country,n", "--csv", "--on-undefined", "nan"],
    ["--by", "n,country", "--json", "--on-undefined", "nan"],
], ids=["json", "csv", "text", "full", "ci-json", "ci-text", "csv-3", "json-n"])
def test_evaluate_by_is_one_answer_on_every_engine(tmp_path, capsys, kind, engine, options):
    """Every number, name, rank and interval of ``evaluate --by`` equal in memory, streamed and on
    Dask: the output byte for byte (each slice's intervals from its count table: the same counts
    bootstrap and DeLong as its rows), warnings included."""
    if "dask" in engine:
        pytest.importorskip("dask.dataframe")
    argv = ["evaluate", str(_sliced_file(tmp_path, kind)), "--label", "y", "--score", "p", *options]
    memory = main(argv), *capsys.readouterr()
    other = main([*argv, *engine]), *capsys.readouterr()
    assert memory[0] == 0 and other == memory
    if "--ci" in options:
        assert "[" in memory[1] or '"intervals"' in memory[1]
    by = options[options.index("--by") + 1].split(",")
    if "--json" in options:  # each slice's value in each --by column: the file's text, null for missing
        slices = json.loads(memory[1])["slices"]
        assert all(list(s["by_values"]) == by for s in slices)
        assert {s["by_values"]["country"] for s in slices} == {"de", "fr", "us", "it", "pl", None}
    if "--csv" in options:  # a column of each (a column named n: "by n") before the slice's name
        heads = ["by n" if c == "n" else c for c in by]
        assert memory[1].splitlines()[0].startswith(",".join([*heads, "slice", "n,"]))


@pytest.mark.parametrize("engine", ENGINES, ids=["stream", "dask"])
def test_evaluate_by_weighted_engines_equal_to_rounding(tmp_path, capsys, engine):
    if "dask" in engine:
        pytest.importorskip("dask.dataframe")
    argv = ["evaluate", str(_sliced_file(tmp_path, "csv")), "--label", "y", "--score", "p", "--weight", "w",
            "--by", "country", "--json"]
    memory = json.loads(_out(argv, capsys))
    other = json.loads(_out([*argv, *engine], capsys))
    assert [s["slice"] for s in other["slices"]] == [s["slice"] for s in memory["slices"]]
    for a, b in zip(memory["slices"], other["slices"]):
        for key, value in a.items():
            if isinstance(value, float):
                assert b[key] == pytest.approx(value, rel=1e-12, abs=1e-15, nan_ok=True), key
            else:
                assert b[key] == value, key


@pytest.mark.parametrize("engine", ENGINES, ids=["stream", "dask"])
def test_evaluate_by_typed_parquet_columns_one_answer(tmp_path, capsys, engine):
    """Slice columns of every Parquet type the readers take (dates, booleans, categories, nullable
    integers, floats with NaN) name and order the slices alike on every engine."""
    pd = pytest.importorskip("pandas")
    if "dask" in engine:
        pytest.importorskip("dask.dataframe")
    rng = np.random.default_rng(1)
    n = 1500
    y = (rng.random(n) < 0.3).astype(int)
    path = tmp_path / "types.parquet"
    pd.DataFrame({
        "y": y, "p": np.round(rng.random(n) * 0.5 + y * rng.random(n) * 0.5, 3),
        "day": pd.to_datetime("2024-01-01") + pd.to_timedelta(rng.integers(0, 4, n), unit="D"),
        "flag": rng.random(n) < 0.5, "cat": pd.Categorical(rng.choice(["x", "y"], n)),
        "ni": pd.array(np.where(rng.random(n) < 0.1, None, rng.integers(0, 3, n)), dtype="Int64"),
        "f": np.where(rng.random(n) < 0.1, np.nan, rng.integers(0, 3, n).astype(float)),
    }).to_parquet(path)
    for by in ("day,flag", "cat,ni", "f"):
        argv = ["evaluate", str(path), "--label", "y", "--score", "p", "--by", by, "--json"]
        memory = _out(argv, capsys)
        assert _out([*argv, *engine], capsys) == memory, by
        cols = by.split(",")
        for s in json.loads(memory)["slices"]:  # each value as the readers give it: the text of the name
            texts = ["(missing)" if v is None else v for v in s["by_values"].values()]
            assert list(s["by_values"]) == cols and all(isinstance(v, str) for v in s["by_values"].values() if v)
            assert s["slice"] == (texts[0] if len(cols) == 1 else ", ".join(f"{c}={v}" for c, v in zip(cols, texts)))


def test_multiclass_intervals_over_score_blocks_are_one_answer(tmp_path, capsys):
    # enough rows that each class column is counted over score blocks: evaluate --ci, the
    # report's intervals and the library give the same interval, and say how it was drawn
    from precall.plot.report import _macro_intervals

    rng = np.random.default_rng(27)
    n, k = 40000, 10  # thousands of runs per column: more than 32768 // 10
    y = rng.integers(0, k, n)
    s = rng.random((n, k)) + 0.2 * np.eye(k)[y]
    path = tmp_path / "classes.csv"
    with path.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["y"] + [f"p{c}" for c in range(k)])
        w.writerows([[str(y[i])] + [repr(float(v)) for v in s[i]] for i in range(n)])
    spec = ",".join(f"{c}=p{c}" for c in range(k))
    out = json.loads(_out(["evaluate", str(path), "--label", "y", "--class-columns", spec, "--ci",
                           "--resamples", "300", "--json"], capsys))
    labels = [str(c) for c in range(k)]
    step, auc = stats.bootstrap_cis([functools.partial(precall.average_precision, average="macro", labels=labels),
                                     functools.partial(precall.roc_auc, average="macro", labels=labels)],
                                    y.astype(str), s, n_resamples=300)
    assert step.n_blocks is not None and step.resample == "rows"
    boot = out["intervals"]["bootstrap"]
    assert (boot["resample"], boot["n_blocks"]) == ("rows", step.n_blocks)
    got = out["intervals"]["average_precision"]["step"]
    assert (got["low"], got["high"]) == (step.low, step.high)
    assert (out["intervals"]["roc_auc"]["low"], out["intervals"]["roc_auc"]["high"]) == (auc.low, auc.high)
    text = _out(["evaluate", str(path), "--label", "y", "--class-columns", spec, "--ci", "--resamples", "300"], capsys)
    assert f"counted over {step.n_blocks} score blocks per class (approximate)" in " ".join(text.split())
    report = _macro_intervals(y.astype(str), s, sample_weight=None, labels=labels, ties="group", n_resamples=300,
                              progress=None)
    assert (report["ap"].low, report["ap"].high) == (step.low, step.high)
    assert (report["roc"].low, report["roc"].high) == (auc.low, auc.high)


@pytest.mark.filterwarnings("ignore")
@settings(max_examples=150, deadline=None)
@given(st.integers(2, 60).flatmap(lambda n: st.tuples(
    st.lists(st.integers(0, 6), min_size=n, max_size=n),  # few distinct scores: runs of ties
    st.lists(st.booleans(), min_size=n, max_size=n),
    st.one_of(st.none(), st.lists(st.sampled_from([0.5, 1.0, 3.0]), min_size=n, max_size=n)),
    st.sampled_from([np.float64, np.float32, np.int16]),
    st.integers(0, 2),
)), st.sampled_from(["numpy", "numba"]))
def test_roc_auc_and_auprg_are_the_grouped_ties_numbers_whatever_ties_is(case, kernel):
    """ROC-AUC and AUPRG always group ties: ``evaluate`` with ``ties="stable"`` gives the bits of
    ``ties="group"``, also where positives tie only with each other (their stable steps, one a positive,
    are not the grouped ones: AUPRG's sum over them was another float in the last bits), and where
    the compiled route computes them beside the sort (rows repeated: long runs, past ``SHARED_LIKELY``
    when forced)."""
    from unittest import mock

    from precall._core import backend, steps

    values, labels, weight, dtype, scale = case
    y = np.repeat(np.array(labels, dtype=int), 2**scale)
    s = np.repeat(np.array(values), 2**scale).astype(dtype)
    w = None if weight is None else np.repeat(np.array(weight), 2**scale)
    previous = backend.set_kernel(kernel)
    try:
        for shared in (False, True):
            with mock.patch.object(steps, "_shared_likely", lambda scores: shared):
                a = precall.evaluate(y, s, sample_weight=w, ties="stable", on_undefined="nan")
                b = precall.evaluate(y, s, sample_weight=w, ties="group", on_undefined="nan")
            for name in ("roc_auc", "auprg"):
                assert repr(getattr(a, name)) == repr(getattr(b, name)), (name, shared)
    finally:
        backend.set_kernel(previous)
