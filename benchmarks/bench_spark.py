"""Spark: every AP convention and ROC-AUC with precall.spark against MLlib's one metric (issue 26).

Writes N rows (float32 scores, 10% positives, ~N distinct scores) to Parquet, reads them
with a local Spark session (local[2] by default) and caches the DataFrame, then times:
(a) precall.spark.evaluate, mode="ranges" (six AP conventions, ROC-AUC, best F1);
(b) precall.spark.evaluate, mode="collect" (Arrow to the driver, in-memory precall);
(c) toPandas() + precall.evaluate;
(d) MLlib's BinaryClassificationEvaluator().evaluate(df): one metric (areaUnderROC), numBins=1000;
(e) the same for areaUnderPR.
Each number is the median of --repeats runs after one warm-up (on the same table, or with
--small-warmup on a 1e5-row table of the same kind: the Python workers and the JIT, not the
cache, for large N); the differences from in-memory precall on the same arrays are printed too.

    python benchmarks/bench_spark.py [--rows 1e6] [--master local[2]] [--repeats 3] [--output FILE]
                                     [--no-warmup | --small-warmup] [--only-roc]
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import tempfile
import warnings

import numpy as np

import precall
from _timing import emit, median_time


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=float, default=1e6)
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--output")
    parser.add_argument("--no-warmup", action="store_true", help="skip the warm-up call (for large N)")
    parser.add_argument("--small-warmup", action="store_true", help="warm up on 1e5 rows instead (for large N)")
    parser.add_argument("--only-roc", action="store_true", help="time MLlib's areaUnderROC only")
    args = parser.parse_args()
    n = int(args.rows)
    warnings.simplefilter("ignore")
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    import pyarrow as pa
    import pyarrow.parquet as pq
    import pyspark
    from pyspark.ml.evaluation import BinaryClassificationEvaluator
    from pyspark.sql import SparkSession

    import precall.spark as pspark

    spark = (SparkSession.builder.master(args.master).config("spark.ui.enabled", "false")
             .config("spark.driver.memory", "4g").getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    with tempfile.TemporaryDirectory() as tmp:
        def frames(rows, name):
            rng = np.random.default_rng(0)
            y = (rng.random(rows) < 0.1).astype(np.int8)
            s = (rng.random(rows) + 0.3 * y).astype(np.float32)
            path = os.path.join(tmp, f"{name}.parquet")
            pq.write_table(pa.table({"y": y, "s": s}), path, row_group_size=1 << 20)
            df = spark.read.parquet(path).cache()
            df.count()
            mllib_frame = df.selectExpr("cast(y as double) as label", "cast(s as double) as score").cache()
            mllib_frame.count()
            return y, s, df, mllib_frame

        def calls(df, mllib_frame):
            def to_pandas():
                pdf = df.toPandas()
                return precall.evaluate(pdf["y"].to_numpy(), pdf["s"].to_numpy())

            def mllib(metric):
                return BinaryClassificationEvaluator(rawPredictionCol="score", labelCol="label",
                                                     metricName=metric).evaluate(mllib_frame)

            return {
                "precall.spark ranges: 6 AP + ROC-AUC + best F1": lambda: pspark.evaluate(df, "y", "s",
                                                                                           mode="ranges"),
                "precall.spark collect: 6 AP + ROC-AUC + best F1": lambda: pspark.evaluate(df, "y", "s",
                                                                                            mode="collect"),
                "toPandas() + precall.evaluate": to_pandas,
                "MLlib evaluate(): areaUnderROC only": lambda: mllib("areaUnderROC"),
                "MLlib evaluate(): areaUnderPR only": lambda: mllib("areaUnderPR"),
            }

        if args.small_warmup:
            for fn in calls(*frames(100_000, "small")[2:]).values():
                fn()
        y, s, df, mllib_frame = frames(n, "scores")
        expected = precall.evaluate(y, s)
        runs = calls(df, mllib_frame)
        if args.only_roc:
            del runs["MLlib evaluate(): areaUnderPR only"]
        lines = [f"Spark {pyspark.__version__}, {args.master}, {n:.0e} rows (float32 scores, 10% positives), "
                 f"{platform.python_implementation()} {platform.python_version()}, {os.cpu_count()} cores",
                 "", "| what | seconds | result |", "|---|---:|---|"]
        times = {}
        for name, fn in runs.items():
            if not (args.no_warmup or args.small_warmup):
                fn()  # warm-up (JIT, Python workers)
            times[name], out = median_time(fn, args.repeats)
            if isinstance(out, precall.Evaluation):
                worst = max(abs(out.average_precision[m] - expected.average_precision[m]) for m in precall.AP_METHODS)
                result = (f"max AP difference from in-memory {worst:.1e}; ROC-AUC "
                          f"{'identical' if out.roc_auc == expected.roc_auc else f'{out.roc_auc - expected.roc_auc:.1e}'}")
            else:
                ref = expected.roc_auc if "ROC" in name else expected.average_precision["step"]
                result = f"{out:.10f} (precall: {ref:.10f})"
            lines.append(f"| {name} | {times[name]:.2f} | {result} |")
            print(lines[-1], file=sys.stderr, flush=True)  # as measured: a long run shows its progress
        mine = times["precall.spark ranges: 6 AP + ROC-AUC + best F1"]
        lines += ["", f"precall.spark ranges / MLlib's one metric (areaUnderROC): "
                  f"{mine / times['MLlib evaluate(): areaUnderROC only']:.2f}x"]
        emit(lines, args.output)
    spark.stop()


if __name__ == "__main__":
    main()
