"""Every input format of the command line: the same data in CSV, TSV, gzip'd CSV,
JSON Lines, Parquet, .npz and .npy must give the same JSON; each malformed
input gives exit code 2 and one line naming the file, the row and the column."""

from __future__ import annotations

import csv
import gzip
import json
import subprocess
import sys

import numpy as np
import pytest

import precall
from precall.readers import InputError, _Progress, read_file

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")


@pytest.fixture(scope="module")
def table():
    rng = np.random.default_rng(8)
    n = 150
    y = np.where(rng.random(n) < 0.4, "pos", "neg")
    a = np.round(rng.random(n) + 0.4 * (y == "pos"), 3)
    b = np.round(rng.random(n), 3)
    w = np.round(rng.uniform(0.2, 2, n), 3)
    return {"y": y, "a": a, "b": b, "w": w}


def _write(path, cols):
    name = str(path)
    stem = name[:-3] if name.endswith(".gz") else name
    if stem.endswith((".csv", ".tsv")):
        opener = gzip.open if name.endswith(".gz") else open
        with opener(path, "wt", newline="") as fh:
            writer = csv.writer(fh, delimiter="\t" if stem.endswith(".tsv") else ",")
            writer.writerow(list(cols))
            writer.writerows(zip(*[[str(v) for v in c] for c in cols.values()]))
    elif stem.endswith(".jsonl"):
        opener = gzip.open if name.endswith(".gz") else open
        with opener(path, "wt") as fh:
            for i in range(len(cols["y"])):
                fh.write(json.dumps({k: (v[i].item() if hasattr(v[i], "item") else v[i]) for k, v in cols.items()}) + "\n")
    elif stem.endswith(".parquet"):
        pq.write_table(pa.table({k: list(v) for k, v in cols.items()}), path, row_group_size=40)
    elif stem.endswith(".npz"):
        np.savez(path, **cols)
    elif stem.endswith(".npy"):
        dtype = [(k, np.asarray(v).dtype) for k, v in cols.items()]
        arr = np.zeros(len(cols["y"]), dtype=dtype)
        for k, v in cols.items():
            arr[k] = v
        np.save(path, arr)
    return path


FORMATS = [".csv", ".tsv", ".csv.gz", ".jsonl", ".jsonl.gz", ".parquet", ".npz", ".npy"]


def _run(*argv):
    return subprocess.run([sys.executable, "-m", "precall", *map(str, argv)], capture_output=True,
                          text=True, check=False)


@pytest.mark.parametrize("suffix", FORMATS)
def test_every_format_gives_the_same_numbers(tmp_path, table, suffix):
    path = _write(tmp_path / f"data{suffix}", table)
    proc = _run("evaluate", path, "--label", "y", "--score", "a", "--pos-label", "pos", "--weight", "w", "--json")
    assert proc.returncode == 0, proc.stderr
    got = json.loads(proc.stdout)
    y, a, w = table["y"], table["a"], table["w"]
    for m in precall.AP_METHODS:
        assert got["average_precision"][m] == precall.average_precision(
            y, a, method=m, pos_label="pos", sample_weight=w)
    assert got["input"]["n_rows"] == len(y)


@pytest.mark.parametrize("suffix", [".parquet", ".npz", ".jsonl"])
def test_several_score_columns_and_compare(tmp_path, table, suffix):
    path = _write(tmp_path / f"data{suffix}", table)
    proc = _run("compare", path, "--label", "y", "--score", "a", "--score", "b", "--pos-label", "pos",
                "--resamples", "50", "--json")
    assert proc.returncode == 0, proc.stderr
    tests = json.loads(proc.stdout)["tests"]
    assert tests[0]["estimate_a"] == precall.roc_auc(table["y"], table["a"], pos_label="pos")


def _broken(table, column, index, value):
    cols = {k: np.array(v, dtype=object) for k, v in table.items()}
    cols[column][index] = value
    return cols


@pytest.mark.parametrize("suffix, where", [(".csv", "line 12"), (".jsonl", "line 11"), (".parquet", "row 11"),
                                           (".npz", "row 11")])
def test_non_finite_score_names_the_row(tmp_path, table, suffix, where):
    cols = {k: np.array(v) for k, v in table.items()}
    cols["a"] = cols["a"].astype(float)
    cols["a"][10] = np.nan
    path = _write(tmp_path / f"bad{suffix}", cols)
    proc = _run("evaluate", path, "--label", "y", "--score", "a", "--pos-label", "pos")
    assert proc.returncode == 2
    err = proc.stderr.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err
    assert str(path) in err and where in err and "column 'a'" in err and "finite" in err


def test_malformed_inputs_exit_2_with_file_row_and_column(tmp_path, table):
    cases = []
    p = tmp_path / "missing.parquet"
    _write(p, {k: v for k, v in table.items() if k != "a"})
    cases.append((p, ["no column 'a'", "--score"]))
    p = tmp_path / "null.parquet"
    pq.write_table(pa.table({"y": list(table["y"]), "a": [None] + list(table["a"][1:])}), p)
    cases.append((p, ["row 1", "column 'a'", "null"]))
    p = tmp_path / "text.jsonl"
    p.write_text('{"y": "pos", "a": 0.5}\n{"y": "neg", "a": "high"}\n')
    cases.append((p, ["line 2", "column 'a'", "must be a number"]))
    p = tmp_path / "nokey.jsonl"
    p.write_text('{"y": "pos", "a": 0.5}\n{"y": "neg"}\n')
    cases.append((p, ["line 2", "no key 'a'"]))
    p = tmp_path / "garbage.jsonl"
    p.write_text('{"y": "pos", "a": 0.5}\n{"y": "neg", \n')
    cases.append((p, ["line 2", "not valid JSON"]))
    p = tmp_path / "empty.csv"
    p.write_text("")
    cases.append((p, ["empty file"]))
    p = tmp_path / "empty.jsonl"
    p.write_text("")
    cases.append((p, ["no data rows"]))
    p = tmp_path / "plain.npy"
    np.save(p, np.arange(5.0))
    cases.append((p, ["structured array"]))
    p = tmp_path / "short.npz"
    np.savez(p, y=table["y"], a=table["a"][:-1])
    cases.append((p, ["column 'a' has 149 rows"]))
    p = tmp_path / "strings.npz"
    np.savez(p, y=table["y"], a=table["y"])
    cases.append((p, ["column 'a'", "numeric"]))
    p = tmp_path / "negative.npz"
    np.savez(p, y=table["y"], a=table["a"], w=-table["w"])
    cases.append((p, ["row 1", "column 'w'", "non-negative"]))
    p = tmp_path / "corrupt.parquet"
    p.write_bytes(b"not parquet at all")
    cases.append((p, ["not a readable Parquet file"]))
    for path, words in cases:
        args = ["evaluate", path, "--label", "y", "--score", "a", "--pos-label", "pos"]
        if "negative" in str(path):
            args += ["--weight", "w"]
        proc = _run(*args)
        assert proc.returncode == 2, (path, proc.stdout)
        err = proc.stderr.strip()
        assert len(err.splitlines()) == 1 and "Traceback" not in err, err
        assert str(path) in err
        for word in words:
            assert word in err, (path, err)


def test_read_file_multiclass_and_errors(tmp_path):
    path = _write(tmp_path / "mc.npz", {"y": np.array(["A", "B", "C", "B"]), "A": np.array([0.5, 0.2, 0.1, 0.3]),
                                        "B": np.array([0.3, 0.5, 0.2, 0.4]), "C": np.array([0.2, 0.3, 0.7, 0.3])})
    cols = read_file(str(path), label="y", score_columns=[(c, "--class-columns") for c in "ABC"],
                     classes=list("ABC"))
    assert cols.scores.shape == (4, 3) and cols.labels == ["A", "B", "C", "B"]
    with pytest.raises(InputError, match="not a class"):
        read_file(str(path), label="y", score_columns=[("A", "--class-columns"), ("B", "--class-columns")],
                  classes=["A", "B"])
    with pytest.raises(InputError, match="no such file"):
        read_file(str(tmp_path / "nope.csv"), label="y", score_columns=[("a", "--score")])


def test_progress_is_shown_only_when_enabled(capsys):
    quiet = _Progress("f.csv", 100, enabled=False)
    quiet.update(50)
    quiet.close()
    assert capsys.readouterr().err == ""
    loud = _Progress("f.csv", 100 << 20, enabled=True)
    loud.update(50 << 20)
    loud.close()
    err = capsys.readouterr().err
    assert "f.csv:  50% (52 of 105 MB)" in err and err.endswith("\r")


def test_large_csv_reports_progress_when_forced(tmp_path, capsys):
    path = tmp_path / "big.csv"
    with open(path, "w") as fh:
        fh.write("y,s\n")
        fh.writelines(f"{i % 2},{i / 1000:.3f}\n" for i in range(30000))
    cols = read_file(str(path), label="y", score_columns=[("s", "--score")], progress=True)
    assert len(cols.labels) == 30000
    assert "big.csv" in capsys.readouterr().err


STREAM = ("--stream", "--chunk-rows", "17")
DASK = ("--engine", "dask", "--scheduler", "threads")


@pytest.mark.parametrize("suffix, engine", [(".csv", STREAM), (".jsonl.gz", STREAM), (".parquet", STREAM),
                                            (".npz", STREAM), (".csv", DASK), (".parquet", DASK),
                                            (".jsonl", DASK)])
@pytest.mark.parametrize("weighted", [False, True])
def test_one_pass_engines_equal_in_memory(tmp_path, table, suffix, engine, weighted):
    if engine is DASK:
        pytest.importorskip("dask.dataframe")
    path = _write(tmp_path / f"data{suffix}", table)
    base = ["evaluate", path, "--label", "y", "--score", "a", "--pos-label", "pos", "--json"]
    if weighted:
        base += ["--weight", "w"]
    whole = _run(*base)
    streamed = _run(*base, *engine)
    assert whole.returncode == 0 and streamed.returncode == 0, streamed.stderr
    a, b = json.loads(whole.stdout), json.loads(streamed.stdout)
    for m in precall.AP_METHODS:
        assert b["average_precision"][m] == pytest.approx(a["average_precision"][m], rel=1e-12, abs=1e-15)
    assert b["roc_auc"] == pytest.approx(a["roc_auc"], rel=1e-12)
    assert b["best_f1"] == pytest.approx(a["best_f1"], rel=1e-12)
    assert b["input"] == a["input"]


def test_stream_errors(tmp_path, table):
    path = _write(tmp_path / "data.csv", table)
    proc = _run("evaluate", path, "--label", "y", "--score", "a", "--pos-label", "pos", "--stream", "--ci")
    assert proc.returncode == 2 and "--stream" in proc.stderr
    cols = {k: np.array(v) for k, v in table.items()}
    cols["a"] = cols["a"].astype(float)
    cols["a"][120] = np.inf
    bad = _write(tmp_path / "bad.csv", cols)
    proc = _run("evaluate", bad, "--label", "y", "--score", "a", "--pos-label", "pos", "--stream", "--chunk-rows", "50")
    assert proc.returncode == 2 and "line 122" in proc.stderr and "column 'a'" in proc.stderr


def test_dask_engine_on_a_local_cluster_and_errors(tmp_path, table):
    pytest.importorskip("distributed")
    path = _write(tmp_path / "data.csv", table)
    base = ["evaluate", path, "--label", "y", "--score", "a", "--pos-label", "pos", "--json"]
    whole, cluster = _run(*base), _run(*base, "--engine", "dask")  # default: a local cluster of processes
    assert cluster.returncode == 0, cluster.stderr
    assert json.loads(cluster.stdout)["average_precision"] == pytest.approx(
        json.loads(whole.stdout)["average_precision"], rel=1e-12)
    for extra, message in ((["--engine", "dask", "--ci"], "--engine dask"),
                           (["--scheduler", "threads"], "--scheduler goes with --engine dask"),
                           (["--engine", "dask", "--score", "b"], "one --score")):
        proc = _run(*base, *extra)
        assert proc.returncode == 2 and message in proc.stderr, proc.stderr
    cols = {k: np.array(v) for k, v in table.items()}
    cols["a"] = cols["a"].astype(float)
    cols["a"][120] = np.nan
    bad = _write(tmp_path / "bad.csv", cols)
    proc = _run("evaluate", bad, "--label", "y", "--score", "a", "--pos-label", "pos", "--engine", "dask",
                "--scheduler", "synchronous")
    assert proc.returncode == 2 and "line 122, column 'a'" in proc.stderr and "Traceback" not in proc.stderr, \
        proc.stderr  # the readers' message: the file is read by them first
    proc = _run("evaluate", path, "--label", "nope", "--score", "a", "--engine", "dask", "--scheduler", "threads")
    assert proc.returncode == 2 and "nope" in proc.stderr and "Traceback" not in proc.stderr, proc.stderr


def test_the_positive_mask_of_two_labels_is_their_codes():
    """Two labels, the positive one coded 1: the codes are the mask (no copy of every row), read only;
    coded 0 or among three labels: a new mask.  The library takes a boolean mask as it is."""
    from precall._core.validate import check_binary
    from precall.readers import Labels

    labels = Labels(["no", "yes"], np.array([0, 1, 1, 0, 1]))
    mask = labels.positive("yes")
    assert mask.tolist() == [False, True, True, False, True] and np.shares_memory(mask, labels.codes)
    assert not mask.flags.writeable
    assert labels.positive("no").tolist() == [True, False, False, True, False]
    assert not np.shares_memory(labels.positive("no"), labels.codes)
    three = Labels(["a", "b", "c"], np.array([0, 1, 2, 1]))
    assert three.positive("b").tolist() == [False, True, False, True]
    data = check_binary(mask, np.arange(5.0), pos_label=True)
    assert data.positive is mask
    assert check_binary(mask, np.arange(5.0), pos_label=False).positive.tolist() == [True, False, False, True, False]
