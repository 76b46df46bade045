"""precall.spark on a local Spark session: every convention equals in-memory precall, the
same bits for any partitioning, ranges and collect modes agree, MLlib's areas reproduced
from the table, bad columns and rows refused on the driver, the CLI engine.

Skipped without pyspark or Java, unless ``PRECALL_REQUIRE_SPARK=1`` (CI), which
makes a missing component a failure."""

from __future__ import annotations

import json
import os
import shutil
import sys
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import precall
import precall.spark as pspark

pytestmark = pytest.mark.spark
REQUIRED = os.environ.get("PRECALL_REQUIRE_SPARK") == "1"
# float weights: every route sums them compensated, within about an ulp of the exact sums whatever the
# order of the rows (Spark has none), so every AP convention is within this of in memory (issue 26);
# docs/scaling.md, "Exact and stable"
WEIGHTED_ABS = 1e-15


def _missing(what: str) -> None:
    if REQUIRED:
        pytest.fail(f"PRECALL_REQUIRE_SPARK=1 but {what}")
    pytest.skip(what)


@pytest.fixture(scope="session")
def spark():
    try:
        from pyspark.sql import SparkSession
    except ImportError:
        _missing("pyspark is not installed")
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        _missing("Java is not installed (Spark needs a JVM: openjdk-17-jre-headless)")
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)  # the workers import this precall
    session = (SparkSession.builder.master("local[2]").appName("precall-tests")
               .config("spark.ui.enabled", "false").config("spark.sql.shuffle.partitions", "4")
               .config("spark.sql.execution.arrow.pyspark.enabled", "true")
               .config("spark.driver.extraJavaOptions", "-Dlog4j.rootLogger=ERROR").getOrCreate())
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


def _data(n=6000, seed=0):
    rng = np.random.default_rng(seed)
    y = (rng.random(n) < 0.3).astype(np.int64)
    s = np.round(rng.random(n) + 0.35 * y, 2)  # ~135 distinct scores: ties across every partition
    s[:40], s[40:80] = -0.0, 0.0  # equal to Python and Spark, never split
    s[80:600] = 0.5  # one heavy tie
    w = rng.uniform(0.1, 3.0, n)
    w[600:650] = 0.0  # set aside, as in memory
    return y, s, w


@pytest.fixture(scope="module")
def data(spark):
    import pandas as pd

    y, s, w = _data()
    frame = spark.createDataFrame(pd.DataFrame({"y": y, "s": s, "w": w}))
    return y, s, w, {p: frame.repartition(p).cache() for p in (1, 3, 7)}


def _numbers(ev):
    return [*(ev.average_precision[m] for m in precall.AP_METHODS), ev.roc_auc, ev.auprg, ev.best_f1.f1,
            ev.best_f1.threshold, ev.n_pos, ev.n_neg]


@pytest.mark.parametrize("weighted", [False, True])
def test_every_convention_equals_in_memory_for_any_partitioning(data, weighted):
    y, s, w, frames = data
    kw = {"weight": "w"} if weighted else {}
    expected = precall.evaluate(y, s, sample_weight=w if weighted else None)
    runs = {(p, mode): pspark.evaluate(frame, "y", "s", mode=mode, n_ranges=5, **kw)
            for p, frame in frames.items() for mode in ("ranges", "collect")}
    for (p, mode), ev in runs.items():
        # the same bits for 1, 3 and 7 partitions (cut points and in-range order do not depend on them)
        assert _numbers(ev) == _numbers(runs[1, mode]), (p, mode)
        assert ev.n_samples == y.size
        if weighted:
            continue
        for m in precall.AP_METHODS:
            assert ev.average_precision[m] == pytest.approx(expected.average_precision[m], rel=0, abs=1e-15), (p, m)
        assert ev.roc_auc == expected.roc_auc  # an exact ratio of integers
        assert ev.best_f1 == expected.best_f1
    if weighted:
        _assert_weighted_bound(y, s, w, expected, runs[7, "ranges"], runs[7, "collect"])


def _assert_weighted_bound(y, s, w, expected, ranges, collect):
    """With float weights (docs/scaling.md, "Exact and stable"): collect mode is in-memory
    precall on the rows in the canonical order (score, label, weight), bit for bit; the score
    ranges and in-memory precall are each within 4.5e-16 (four ulps below 1) of the value on
    exactly summed cumulative weights rounded once (the oracle): every cumulative weight is
    within about an ulp of the exact sum on both (compensated sums; for the ranges a correctly
    rounded prefix and one rounding to shift), so they agree within 1e-15 (issue 26)."""
    import oracles
    from precall.table import trusted_table

    order = np.lexsort((w, y, -s))
    canonical = precall.evaluate(y[order], s[order], sample_weight=w[order])
    assert _numbers(collect) == _numbers(canonical)
    pts = oracles.exactly_rounded_points(y, s, w)
    exact = _numbers(trusted_table(np.array(pts.thresholds), np.array(pts.tp), np.array(pts.fp), pts.n_pos, pts.n_neg,
                                   "group").evaluate())
    memory, got = _numbers(expected), _numbers(ranges)
    for k, name in enumerate([*precall.AP_METHODS, "ROC-AUC", "AUPRG"]):
        assert abs(got[k] - exact[k]) <= 4.5e-16, (name, got[k] - exact[k])
        assert abs(memory[k] - exact[k]) <= 4.5e-16, (name, memory[k] - exact[k])
        assert abs(got[k] - memory[k]) <= WEIGHTED_ABS, name
    assert got[-2:] == pytest.approx(exact[-2:], rel=1e-15)  # n_pos and n_neg: the exact totals, rounded


def test_weighted_ranges_equal_in_memory_where_a_plain_cumsum_drifts(spark):
    """200000 weighted rows (scikit-learn's sequential cumsum put in-memory precall 2.3e-15 from
    the exact value at 1e5 rows, docs/scaling.md): the ranges of 1 and 5 partitions, every AP
    convention within 1e-15 of in memory, the same bits for both partitionings."""
    import pandas as pd

    y, s, w = _data(200_000, seed=4)
    w = np.where(np.arange(w.size) % 3 == 0, 0.1, w)  # tenths, whose plain sums drift most
    frame = spark.createDataFrame(pd.DataFrame({"y": y, "s": s, "w": w}))
    expected = precall.evaluate(y, s, sample_weight=w)
    runs = [pspark.evaluate(frame.repartition(p), "y", "s", weight="w", mode="ranges", n_ranges=6) for p in (1, 5)]
    assert _numbers(runs[0]) == _numbers(runs[1])
    for m in precall.AP_METHODS:
        assert runs[0].average_precision[m] == pytest.approx(expected.average_precision[m], rel=0, abs=WEIGHTED_ABS), m
    assert runs[0].roc_auc == pytest.approx(expected.roc_auc, rel=0, abs=WEIGHTED_ABS)


def test_prevalences_tables_partial_auc_and_single_metrics(data):
    y, s, w, frames = data
    frame = frames[3]
    evs = pspark.evaluations(frame, "y", "s", prevalences=[None, 0.01], mode="ranges", n_ranges=4)
    at = precall.evaluate(y, s, prevalence=0.01)
    for m in precall.AP_METHODS:
        assert evs[1].average_precision[m] == pytest.approx(at.average_precision[m], rel=1e-14, abs=1e-15)
    table = pspark.threshold_table(frame, "y", "s", weight="w", mode="ranges", n_ranges=4)
    ref = precall.threshold_table(y, s, sample_weight=w)
    np.testing.assert_array_equal(table.thresholds, ref.thresholds)
    np.testing.assert_allclose(table.tp, ref.tp, rtol=1e-15)  # both within about an ulp of the exact sums
    np.testing.assert_allclose(table.fp, ref.fp, rtol=1e-15)
    unweighted = pspark.threshold_table(frame, "y", "s", mode="ranges", n_ranges=4)
    np.testing.assert_array_equal(unweighted.tp, precall.threshold_table(y, s).tp)
    assert pspark.roc_auc(frame, "y", "s", max_fpr=0.2, mode="ranges") == pytest.approx(
        precall.roc_auc(y, s, max_fpr=0.2), rel=1e-14)
    assert pspark.average_precision(frame, "y", "s", method="coco", mode="auto") == pytest.approx(
        precall.average_precision(y, s, method="coco"), abs=1e-15)


def test_string_labels_and_the_positive_label(spark):
    import pandas as pd

    y, s, _ = _data(2000, seed=1)
    labels = np.where(y == 1, "spam", "ham")
    frame = spark.createDataFrame(pd.DataFrame({"label": labels, "score": s.astype(np.float32)}))
    for mode in ("ranges", "collect"):
        got = pspark.average_precision(frame, "label", "score", pos_label="spam", mode=mode, n_ranges=3)
        assert got == pytest.approx(precall.average_precision(labels, s.astype(np.float32), pos_label="spam"),
                                    abs=1e-15)
        # roc_auc's pos_label=None takes the greater label, as scikit-learn's roc_auc_score
        assert pspark.roc_auc(frame, "label", "score", mode=mode) == precall.roc_auc(labels, s.astype(np.float32))
        with pytest.raises(ValueError, match="positive class is ambiguous"):
            pspark.evaluate(frame, "label", "score", mode=mode)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        one_class = frame.where("label = 'ham'")
        assert np.isnan(pspark.roc_auc(one_class, "label", "score", on_undefined="nan", mode="ranges"))


BAD_ROWS = [  # (column values, the error's words)
    ({"s": [0.1, None, 0.3]}, "`score` column 's' must not be null"),
    ({"s": [0.1, float("nan"), 0.3]}, "`score` column 's' must be finite"),
    ({"s": [0.1, float("inf"), 0.3]}, "`score` column 's' must be finite"),
    ({"y": [1, None, 0]}, "`label` column 'y' must not be null"),
    ({"w": [1.0, -2.0, 1.0]}, "`weight` column 'w' must be non-negative"),
    ({"w": [1.0, float("nan"), 1.0]}, "`weight` column 'w' must be finite"),
    ({"w": [0.0, 0.0, 0.0]}, "at least one positive weight"),
]


@pytest.mark.parametrize("change,words", BAD_ROWS, ids=[w for _, w in BAD_ROWS])
def test_bad_rows_are_refused_on_the_driver(spark, change, words):
    from pyspark.sql.types import DoubleType, LongType, StructField, StructType

    columns = {"y": [1, 0, 0], "s": [0.1, 0.2, 0.3], "w": [1.0, 1.0, 1.0], **change}
    schema = StructType([StructField("y", LongType()), StructField("s", DoubleType()), StructField("w", DoubleType())])
    frame = spark.createDataFrame(list(zip(*columns.values())), schema)
    for mode in ("ranges", "collect"):
        with pytest.raises(ValueError, match=words.replace("`", ".").replace("(", ".")):
            pspark.evaluate(frame, "y", "s", weight="w", mode=mode)


BAD_OPTIONS = [
    ({"label": "nope"}, ValueError, "`label` must name a column"),
    ({"score": "name"}, TypeError, "`score` column 'name' must hold numeric scores"),
    ({"weight": "name"}, TypeError, "`weight` column 'name' must hold numeric weights"),
    ({"score": 3}, TypeError, "`score` must be a column name"),
    ({"mode": "fast"}, ValueError, "`mode` must be one of"),
    ({"n_ranges": 0}, ValueError, "`n_ranges` must be"),
    ({"n_ranges": 2.5}, ValueError, "`n_ranges` must be"),
    ({"collect_rows": float("nan")}, ValueError, "`collect_rows` must be"),
    ({"pos_label": 7}, ValueError, "`pos_label` must be one of the labels"),
    ({"recall_grid": "fine"}, ValueError, "recall_grid"),
]


@pytest.mark.parametrize("change,error,words", BAD_OPTIONS, ids=[w for _, _, w in BAD_OPTIONS])
def test_bad_options_name_the_parameter(spark, change, error, words):
    frame = spark.createDataFrame([(1, 0.9, "a"), (0, 0.1, "b")], ["y", "s", "name"])
    kw = {"label": "y", "score": "s", **change}
    with pytest.raises(error, match=words.replace("`", ".")):
        pspark.evaluate(frame, kw.pop("label"), kw.pop("score"), **kw)
    with pytest.raises(TypeError, match="`df` must be a Spark DataFrame"):
        pspark.evaluate(np.zeros(3), "y", "s")


@pytest.mark.parametrize("num_bins", [0, 25])
@pytest.mark.parametrize("weighted", [False, True])
def test_mllib_areas_reproduce_mllib(data, num_bins, weighted):
    """MLlib's own BinaryClassificationEvaluator on one partition (its down-sampling groups
    distinct scores within a partition) against mllib_areas of precall's table."""
    from pyspark.ml.evaluation import BinaryClassificationEvaluator

    y, s, w, frames = data
    kw = {"weight": "w"} if weighted else {}
    comparison = pspark.compare_mllib(frames[1], "y", "s", num_bins=num_bins, **kw)
    table = precall.threshold_table(y, s, sample_weight=w if weighted else None)
    pr, roc = pspark.mllib_areas(table, num_bins=num_bins)
    assert comparison.area_under_pr == pytest.approx(pr, rel=1e-13)
    assert comparison.area_under_roc == pytest.approx(roc, rel=1e-13)
    frame = frames[1].selectExpr("cast(y as double) as label", "s", "w")
    direct = BinaryClassificationEvaluator(rawPredictionCol="s", labelCol="label", metricName="areaUnderPR",
                                           numBins=num_bins, **({"weightCol": "w"} if weighted else {}))
    assert direct.evaluate(frame) == pytest.approx(pr, rel=1e-13)
    diffs = comparison.differences()
    assert diffs["areaUnderPR - AP (step)"] == pytest.approx(pr - comparison.evaluation.average_precision["step"])
    if num_bins == 0 and not weighted:  # the unbinned ROC trapezoid is the exact AUC up to rounding
        assert roc == pytest.approx(precall.roc_auc(y, s), rel=1e-14)


def test_cli_engine_spark(spark, tmp_path):
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    from precall.cli import main

    y, s, w = _data(3000, seed=2)
    path = tmp_path / "scores.parquet"
    pq.write_table(pa.table({"y": y, "s": s, "w": w}), path)
    outputs = {}
    for engine in ("memory", "spark"):
        out = _run_cli(main, [str(path), "--label", "y", "--score", "s", "--weight", "w", "--json",
                              "--engine", engine])
        outputs[engine] = json.loads(out)
    mem, spk = outputs["memory"], outputs["spark"]
    assert spk["input"] == mem["input"]
    for m in precall.AP_METHODS:
        assert spk["average_precision"][m] == pytest.approx(mem["average_precision"][m], rel=0, abs=WEIGHTED_ABS)
    text = _run_cli(main, [str(path), "--label", "y", "--score", "s", "--engine", "spark"])
    assert "voc2007" in text and "ROC-AUC" in text
    spark.createDataFrame([(1, 0.9), (0, 0.1)], ["y", "s"]).createOrReplaceTempView("precall_scores")
    assert "ROC-AUC" in _run_cli(main, ["precall_scores", "--label", "y", "--score", "s", "--engine", "spark"])
    for argv, words in [  # a file's column: the readers' message, as in memory
        ([str(path), "--label", "y", "--score", "nope", "--engine", "spark"], "no column 'nope' (given by --score)"),
        (["no/such/dir/x.parquet", "--label", "y", "--score", "s", "--engine", "spark"], "no such file"),
        ([str(path), "--label", "y", "--score", "s", "--master", "local[1]"], "--master goes with --engine spark"),
    ]:
        err = _run_cli(main, argv, code=2)
        assert words in err and len(err.strip().splitlines()) == 1, err


def test_cli_engine_spark_stderr_holds_precall_lines_only(tmp_path):
    """A fresh session in its own process (as a user's command starts one): the JVM's output (log4j
    banners and warnings, "Using incubator modules", [Stage N] progress bars) stays off the
    terminal, so an error is the one line of precall, a result has a clean stderr, and a JVM that
    cannot start is one line saying what Java said."""
    pytest.importorskip("pyspark")
    pa = pytest.importorskip("pyarrow")
    import subprocess

    import pyarrow.parquet as pq

    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        _missing("Java is not installed (Spark needs a JVM: openjdk-17-jre-headless)")
    path = tmp_path / "t.parquet"
    pq.write_table(pa.table({"y": [0, 1] * 50, "s": [i / 100 for i in range(100)]}), path)
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable,
           "PYTHONPATH": os.pathsep.join([os.path.dirname(os.path.dirname(precall.__file__)),
                                         os.environ.get("PYTHONPATH", "")])}

    def run(*argv):
        return subprocess.run([sys.executable, "-m", "precall", "evaluate", str(path), "--engine", "spark", *argv],
                              capture_output=True, text=True, timeout=600, env=env)

    bad = run("--label", "nope", "--score", "s")
    assert bad.returncode == 2 and bad.stderr.splitlines() == [
        f"precall: error: {path}: no column 'nope' (given by --label); the columns are 'y', 's'"], bad.stderr
    good = run("--label", "y", "--score", "s", "--json")
    assert good.returncode == 0 and good.stderr == "", good.stderr
    assert json.loads(good.stdout)["input"]["n_rows"] == 100
    master = run("--label", "y", "--score", "s", "--master", "nope://x")
    lines = master.stderr.splitlines()
    assert master.returncode == 2 and len(lines) == 1, master.stderr
    assert lines[0].startswith("precall: error: --master nope://x: cannot start Spark") and "Master must" in lines[0]


def test_cli_engine_spark_refuses_an_integer_beyond_2_53_as_the_readers_do(spark, tmp_path):
    """A 64-bit integer score or weight column beyond 2**53: the in-memory command refuses it (the readers
    hold scores as float64), and so does ``--engine spark``, with the readers' message for a file and the
    column named for a table; 2**53 itself, and an int32 column, are read."""
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    from precall.cli import main

    for column in ("s", "w"):
        for value, refused in ((2**53 + 1, True), (-(2**53) - 1, True), (2**53, False)):
            if column == "w" and value < 0:
                continue  # a negative weight: refused first for its sign (the scan's check)
            data = {"y": [1, 0, 1, 0], "s": pa.array([1, 2, 3, 4], pa.int64()), "w": pa.array([1, 2, 1, 1], pa.int64())}
            data[column] = pa.array([1, value, 3, 4], pa.int64())
            path = tmp_path / f"big_{column}_{value}.parquet"
            pq.write_table(pa.table(data), path)
            argv = [str(path), "--label", "y", "--score", "s", "--weight", "w"]
            if refused:
                memory = _run_cli(main, argv, code=2)
                spk = _run_cli(main, [*argv, "--engine", "spark"], code=2)
                assert spk == memory and f"row 2, column '{column}'" in spk and "beyond 2**53" in spk, spk
            else:
                assert json.loads(_run_cli(main, [*argv, "--json", "--engine", "spark"]))["roc_auc"] == \
                    json.loads(_run_cli(main, [*argv, "--json"]))["roc_auc"]
    spark.createDataFrame([(1, 2**53 + 1), (0, 1)], ["y", "s"]).createOrReplaceTempView("precall_big")
    err = _run_cli(main, ["precall_big", "--label", "y", "--score", "s", "--engine", "spark"], code=2)
    assert "precall_big: column 's': the score 9007199254740993 is an integer beyond 2**53" in err, err


def _run_cli(main, argv, code=0, both=False):
    import contextlib
    import io

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        got = main(["evaluate", *argv])
    assert got == code, err.getvalue()
    if both:  # what the command prints and what it says on stderr (its warnings)
        return out.getvalue(), err.getvalue()
    return out.getvalue() if code == 0 else err.getvalue()


# ---------------------------------------------------------------------------
# by=: the SlicedEvaluation of in-memory by=, for any partitioning
def _sliced_data(n=4000, seed=3):
    """Ties (2-decimal scores, one heavy tie), a string column with nulls and empty strings,
    an integer column with nulls, booleans, dates, and a slice ("zz") without positives."""
    import datetime

    import pandas as pd

    y, s, w = _data(n, seed)
    rng = np.random.default_rng(seed)
    country = rng.choice(np.array(["fr", "de", "us", "", None], dtype=object), n, p=[0.3, 0.3, 0.2, 0.1, 0.1])
    country[:25] = "zz"
    y[:25] = 0  # "zz": no positives (AP undefined, not ranked)
    device = rng.integers(-2, 3, n).astype(object)
    device[rng.random(n) < 0.05] = None
    flag = rng.random(n) < 0.5
    day = np.array([datetime.date(2024, 1, 1) + datetime.timedelta(days=int(d)) for d in rng.integers(0, 3, n)],
                   dtype=object)
    frame = pd.DataFrame({"y": y, "s": s, "w": w, "country": country, "device": pd.array(device, dtype="Int64"),
                          "flag": flag, "day": day})
    return frame, {"country": country, "device": device, "flag": flag, "day": np.array([str(d) for d in day],
                                                                                         dtype=object)}


@pytest.fixture(scope="module")
def sliced(spark):
    from pyspark.sql.types import BooleanType, DateType, DoubleType, LongType, StringType, StructField, StructType

    frame, values = _sliced_data()
    schema = StructType([StructField("y", LongType()), StructField("s", DoubleType()), StructField("w", DoubleType()),
                         StructField("country", StringType()), StructField("device", LongType()),
                         StructField("flag", BooleanType()), StructField("day", DateType())])
    rows = [(int(a), float(b), float(c), d, e, bool(f), g) for a, b, c, d, e, f, g in zip(
        frame["y"], frame["s"], frame["w"], values["country"], values["device"], values["flag"], frame["day"])]
    df = spark.createDataFrame(rows, schema).cache()
    return frame, values, {p: df.repartition(p) for p in (1, 3, 7)}


def _sliced_numbers(r):
    arrays = [r.n_samples, r.n_pos, r.n_neg, r.roc_auc, r.auprg, r.best_f1, r.best_f1_threshold,
              r.best_f1_precision, r.best_f1_recall, r.ranked]
    arrays += [d[m] for d in (r.average_precision, r.min_average_precision, r.normalized_average_precision)
               for m in precall.AP_METHODS]
    return [np.asarray(a, dtype=np.float64) for a in arrays] + [np.array(_numbers(r.overall), dtype=np.float64)]


def _assert_same(got, want, tol=0.0):
    assert got.names == want.names and got.keys == want.keys and got.columns == want.columns
    assert got.min_support == want.min_support and got.overall.n_samples == want.overall.n_samples
    for a, b in zip(_sliced_numbers(got), _sliced_numbers(want), strict=True):
        if tol:
            np.testing.assert_allclose(a, b, rtol=tol, atol=tol)
        else:  # bit for bit, NaN where NaN
            np.testing.assert_array_equal(a, b)


BY_CASES = [  # (by, min_support, weighted)
    ("country", 0, False),
    (["country", "device"], 30, False),
    (["flag", "day", "device"], 0, False),
    (["country", "flag"], 10, True),
]


@pytest.mark.parametrize("by,min_support,weighted", BY_CASES, ids=[f"{b}-{m}-{w}" for b, m, w in BY_CASES])
def test_by_equals_in_memory_for_any_partitioning(sliced, by, min_support, weighted):
    frame, values, frames = sliced
    names = [by] if isinstance(by, str) else by
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the slice without positives
        want = precall.evaluate(frame["y"].to_numpy(), frame["s"].to_numpy(),
                                sample_weight=frame["w"].to_numpy() if weighted else None,
                                by={n: values[n] for n in names}, min_support=min_support)
        runs = {p: pspark.evaluate(df, "y", "s", by=by, min_support=min_support,
                                   **({"weight": "w"} if weighted else {})) for p, df in frames.items()}
    assert "(missing)" in " ".join(want.names) or by[0] == "flag"
    for p, got in runs.items():
        _assert_same(got, want, tol=1e-15 if weighted else 0.0)
    if by == "country":  # "" and null are one slice, "(missing)", last; "zz" has no positives, is not ranked
        assert want.names == ("de", "fr", "us", "zz", "(missing)")
        zz = want.names.index("zz")
        assert runs[3].n_pos[zz] == 0 and zz not in runs[3].ranked.tolist()


def test_by_undefined_policy_and_bad_options(sliced, spark):
    frame, values, frames = sliced
    df = frames[3]
    with pytest.warns(precall.UndefinedMetricWarning):
        pspark.evaluate(df, "y", "s", by="country")
    with pytest.raises(ValueError, match="slice"):
        pspark.evaluate(df, "y", "s", by="country", on_undefined="raise")
    from pyspark.sql.types import DecimalType

    odd = df.withColumn("price", df["s"].cast(DecimalType(10, 2)))
    for kw, error, words in [
        ({"by": "nope"}, ValueError, "`by` must name a column"),
        ({"by": 3}, TypeError, "`by` must be a column name or a non-empty list"),
        ({"by": []}, TypeError, "`by` must be a column name or a non-empty list"),
        ({"by": ["country", "country"]}, ValueError, "`by` must name each column once"),
        ({"by": "country", "prevalence": 0.1}, ValueError, "`prevalence`, `n_ranges` and `mode` are not available"),
        ({"by": "country", "n_ranges": 3}, ValueError, "not available with `by`"),
        ({"by": "country", "mode": "collect"}, ValueError, "not available with `by`"),
        ({"by": "country", "min_support": -1}, ValueError, "`min_support` must be"),
        ({"by": "country", "min_support": 1.5}, ValueError, "`min_support` must be"),
        ({"by": "country", "recall_grid": "fine"}, ValueError, "recall_grid"),
        ({"by": "country", "pos_label": 7}, ValueError, "`pos_label` must be one of the labels"),
    ]:
        with pytest.raises(error, match=words.replace("`", ".")):
            pspark.evaluate(df, "y", "s", **kw)
    with pytest.raises(TypeError, match="`by` column 'price' must hold slice values"):
        pspark.evaluate(odd, "y", "s", by="price")
    bad = spark.createDataFrame([(1, 0.9, "a"), (0, None, "b")], "y long, s double, c string")
    with pytest.raises(ValueError, match="`score` column 's' must not be null"):
        pspark.evaluate(bad, "y", "s", by="c")


def test_cli_engine_spark_by(sliced, tmp_path):
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    from precall.cli import main

    frame, _, _ = sliced
    path = tmp_path / "sliced.parquet"
    pq.write_table(pa.Table.from_pandas(frame[["y", "s", "country", "device"]], preserve_index=False), path)
    common = [str(path), "--label", "y", "--score", "s", "--by", "country,device", "--min-support", "20"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mem = json.loads(_run_cli(main, [*common, "--json"]))
        spk = json.loads(_run_cli(main, [*common, "--json", "--engine", "spark"]))
        assert _run_cli(main, [*common, "--csv", "--engine", "spark"]) == _run_cli(main, [*common, "--csv"])
        text = _run_cli(main, [*common, "--full", "--engine", "spark"])
        assert text == _run_cli(main, [*common, "--full"])
    assert spk == mem  # the same slices, names, order and numbers as in memory
    assert "country=(missing)" in text and "device=-2" in text
    for argv, words in [
        ([*common, "--engine", "spark", "--ties", "stable"], "--ties stable"),  # (--stream, dask: test_one_answer)
        ([str(path), "--label", "y", "--score", "s", "--by", "nope", "--engine", "spark"], "`by` must name a column"),
    ]:
        err = _run_cli(main, argv, code=2)
        assert words in err and len(err.strip().splitlines()) == 1, err


def test_cli_engine_spark_reads_slice_values_and_labels_by_the_readers_rules(spark, tmp_path):
    """``--engine spark`` names slice values and reads labels as the readers do, so its output is the
    in-memory one: a text the readers read as missing (``NA``, ``None``, ``NaN``, ``nan``, ``N/A``, empty,
    spaces) is the slice ``(missing)``, as a null, a float NaN (float64 or float32) and a null date are;
    values of one text (``" fr "`` and ``"fr"``) are one slice, and labels of one text (``" 1"`` and
    ``"1"``) one label (Spark used to keep each text its own slice and count ``" 1"`` as a negative); a
    label the readers read as missing (``NA``, a NaN, a null) is refused with the readers' line."""
    import datetime

    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    from precall.cli import main

    n = 240
    rng = np.random.default_rng(8)

    def cycle(values):
        return [values[i % len(values)] for i in range(n)]

    path = tmp_path / "texts.parquet"
    pq.write_table(pa.table({
        "y": pa.array(cycle(["1", "0", " 1", "0 "])), "p": np.round(rng.random(n), 2),
        "s": pa.array(cycle(["fr", "NaN", "None", "NA", None, " fr ", "", "nan", "N/A", "  ", "de"])),
        "f": pa.array(cycle([1.5, float("nan"), None, 1e300, -0.0, 0.0, 2.0])),
        "f32": pa.array(cycle([0.1, float("nan"), None, 2.5, 7.0]), type=pa.float32()),
        "d": pa.array(cycle([datetime.date(2020, 1, 2), None, datetime.date(1999, 12, 31)]), type=pa.date32()),
    }), path)
    common = [str(path), "--label", "y", "--score", "p"]
    for extra in (["--by", "s", "--csv"], ["--by", "f,f32,d", "--json"], ["--json"]):
        mem, said = _run_cli(main, [*common, *extra], both=True)
        assert _run_cli(main, [*common, *extra, "--engine", "spark"], both=True) == (mem, said), extra
        if extra[:2] == ["--by", "s"]:  # the slices of memory: de, fr (" fr " too) and (missing)
            assert [line.split(",")[1:3] for line in mem.splitlines()[2:]] == [
                ["de", "21"], ["fr", "44"], ["(missing)", "175"]], mem
    assert json.loads(mem)["input"]["label_counts"] == {"0": 120, "1": 120}  # " 1" is the label 1
    zeros = tmp_path / "zeros.parquet"  # -0.0 and 0.0: one label (Arrow's value counts keep them apart)
    pq.write_table(pa.table({"y": pa.array(cycle([1.0, 0.0, -0.0])), "p": np.round(rng.random(n), 2)}), zeros)
    mem = _run_cli(main, [str(zeros), "--label", "y", "--score", "p", "--json"])
    assert _run_cli(main, [str(zeros), "--label", "y", "--score", "p", "--json", "--engine", "spark"]) == mem
    assert json.loads(mem)["input"]["label_counts"] == {"0": 160, "1": 80}
    for labels in (["1", "0", "NA"], [1.0, 0.0, float("nan")], [1, 0, None]):
        bad = tmp_path / f"labels_{len(str(labels))}.parquet"
        pq.write_table(pa.table({"y": pa.array(cycle(labels)), "p": np.round(rng.random(n), 2)}), bad)
        argv = [str(bad), "--label", "y", "--score", "p"]
        memory = _run_cli(main, argv, code=2)
        assert _run_cli(main, [*argv, "--engine", "spark"], code=2) == memory and "row 3, column 'y'" in memory, \
            memory


SCORE_BY_CASES = [  # (partitions, weighted, AP convention, max_fpr, by)
    (1, False, "step", None, "country"),
    (3, False, "voc2010", 0.3, ["country", "device"]),
    (7, False, "coco", None, ["flag", "day"]),
    (1, True, "voc2007", None, ["country", "flag"]),
    (3, True, "interpolated", None, "country"),
    (7, True, "trapezoid", 0.5, ["country", "device"]),
]


def _assert_same_values(got, want, tol=0.0):
    assert got.names == want.names and got.keys == want.keys and got.columns == want.columns
    assert got.metric == want.metric and got.min_support == want.min_support
    np.testing.assert_array_equal(got.n_samples, want.n_samples)
    np.testing.assert_array_equal(got.defined, want.defined)
    for a, b in ((got.values, want.values), (got.overall, want.overall), (got.n_pos, want.n_pos),
                 (got.n_neg, want.n_neg)):
        if tol:  # metrics absolute, weight sums relative
            np.testing.assert_allclose(a, b, rtol=tol, atol=tol)
        else:
            np.testing.assert_array_equal(a, b)
    if not tol:
        np.testing.assert_array_equal(got.ranked, want.ranked)
        assert got.to_csv() == want.to_csv()


def _assert_same_tables(got, want, tol=0.0):
    assert got.names == want.names and got.keys == want.keys and got.min_support == want.min_support
    np.testing.assert_array_equal(got.n_samples, want.n_samples)
    for a, b in [*((got[k], want[k]) for k in want.names), (got.overall, want.overall)]:
        np.testing.assert_array_equal(a.thresholds, b.thresholds)
        assert a.thresholds.dtype == b.thresholds.dtype and a.tp.dtype == b.tp.dtype
        if tol:  # relative: cumulative weights
            np.testing.assert_allclose(a.tp, b.tp, rtol=tol)
            np.testing.assert_allclose(a.fp, b.fp, rtol=tol)
        else:
            np.testing.assert_array_equal(a.tp, b.tp)
            np.testing.assert_array_equal(a.fp, b.fp)
    if not tol:
        assert got.to_csv() == want.to_csv()


@pytest.mark.parametrize("p,weighted,method,max_fpr,by", SCORE_BY_CASES,
                         ids=[f"{p}-{w}-{m}-{f}" for p, w, m, f, _ in SCORE_BY_CASES])
def test_single_metrics_and_tables_by_equal_in_memory(sliced, p, weighted, method, max_fpr, by):
    """average_precision / roc_auc / threshold_table with by=: the SlicedValues and SlicedTables
    of the in-memory functions on the same rows (bit for bit without weights)."""
    frame, values, frames = sliced
    df = frames[p]
    names = [by] if isinstance(by, str) else by
    slices = {n: values[n] for n in names}
    y, s = frame["y"].to_numpy(), frame["s"].to_numpy()
    w = frame["w"].to_numpy() if weighted else None
    kw = {"weight": "w"} if weighted else {}
    tol = 1e-15 if weighted else 0.0  # per-score sums merged across partitions, then compensated cumsums
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the slice without positives
        want = precall.average_precision(y, s, sample_weight=w, method=method, by=slices, min_support=20)
        got = pspark.average_precision(df, "y", "s", method=method, by=by, min_support=20, **kw)
        _assert_same_values(got, want, tol)
        want = precall.roc_auc(y, s, sample_weight=w, max_fpr=max_fpr, by=slices, on_undefined="nan")
        got = pspark.roc_auc(df, "y", "s", max_fpr=max_fpr, by=by, on_undefined="nan", **kw)
        _assert_same_values(got, want, tol)
    want = precall.threshold_table(y, s, sample_weight=w, by=slices)
    got = pspark.threshold_table(df, "y", "s", by=by, **kw)
    _assert_same_tables(got, want, 1e-15 if weighted else 0.0)


def test_single_metrics_by_float32_labels_and_options(spark):
    import pandas as pd

    y, s, _ = _data(1500, seed=4)
    labels = np.where(y == 1, "spam", "ham")
    group = np.where(np.arange(y.size) % 3 == 0, "a", "b").astype(object)
    df = spark.createDataFrame(pd.DataFrame({"label": labels, "score": s.astype(np.float32), "g": group}))
    s32 = s.astype(np.float32)
    # roc_auc takes the greater label without pos_label, as in memory; AP needs it
    _assert_same_values(pspark.roc_auc(df, "label", "score", by="g"), precall.roc_auc(labels, s32, by={"g": group}))
    _assert_same_values(pspark.average_precision(df, "label", "score", pos_label="spam", by="g"),
                        precall.average_precision(labels, s32, pos_label="spam", by={"g": group}))
    _assert_same_tables(pspark.threshold_table(df, "label", "score", pos_label="spam", by="g"),
                        precall.threshold_table(labels, s32, pos_label="spam", by={"g": group}))
    for call, kw, words in [
        (pspark.average_precision, {"mode": "collect"}, "`mode` and `n_ranges` are not available with `by`"),
        (pspark.roc_auc, {"n_ranges": 3}, "not available with `by`"),
        (pspark.threshold_table, {"mode": "ranges"}, "not available with `by`"),
        (pspark.average_precision, {"min_support": -1}, "`min_support` must be"),
        (pspark.average_precision, {"method": "nope"}, "method"),
        (pspark.threshold_table, {"by": "nope"}, "`by` must name a column"),
    ]:
        with pytest.raises(ValueError, match=words.replace("`", ".")):
            call(df, "label", "score", pos_label="spam", **{"by": "g", **kw})


def test_cli_engine_spark_ci_prints_the_in_memory_intervals(spark, tmp_path, monkeypatch):
    """--engine spark --ci collects the columns (Spark's row order: the file's) and prints what
    --engine memory --ci prints: estimates, intervals (method, resamples, seed), slices."""
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    import precall.cli._engines as engines
    from precall.cli import main

    y, s, w = _data(2500, seed=5)
    rng = np.random.default_rng(5)
    path = tmp_path / "ci.parquet"
    pq.write_table(pa.table({"y": y, "s": s.astype(np.float32), "w": w, "c": rng.choice(["a", "b", "c"], y.size)}),
                   path)
    common = [str(path), "--label", "y", "--score", "s", "--ci", "--resamples", "200"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for extra in ([], ["--json", "--weight", "w", "--ci-method", "bca"], ["--by", "c", "--json"],
                      ["--at-recall", "0.8", "--seed", "3"]):
            memory = _run_cli(main, [*common, *extra])
            assert _run_cli(main, [*common, *extra, "--engine", "spark"]) == memory, extra
            assert "interval" in memory.lower() or "ci" in memory
        monkeypatch.setattr(engines, "SPARK_CI_ROWS", 100)
        for argv, words in [
            ([*common, "--engine", "spark"], "--ci with --engine spark brings the rows to the driver, at most 100; "
                                             "this table has 2,500. Drop --ci"),
            ([str(path), "--label", "y", "--class-prefix", "p_", "--ci", "--engine", "spark"],
             "--engine spark takes --score columns"),
        ]:
            err = _run_cli(main, argv, code=2)
            assert words in err and len(err.strip().splitlines()) == 1, err
