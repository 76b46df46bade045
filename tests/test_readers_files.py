"""The file readers against independent references (the csv module, pandas) on random
files, with every parser (pyarrow, numpy's loadtxt, the exact csv reader), and every
malformed file of issue 15: exit code 2, one line on stderr naming the file, the line
or row and the column, never a traceback, also with ``--stream``."""

from __future__ import annotations

import csv
import gzip
import io
import json

import numpy as np
import pytest

import precall.readers as readers
from precall.cli import main
from precall.readers import InputError, iter_file, read_file

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")
pd = pytest.importorskip("pandas")

PARSERS = ["arrow", "numpy", "exact"]


@pytest.fixture(params=PARSERS)
def parser(request, monkeypatch):
    """Force one parser of delimited text."""
    original = readers._delimited_file

    def forced(*args, **kw):
        kw["fast"] = None if request.param == "exact" else request.param
        return original(*args, **kw)

    monkeypatch.setattr(readers, "_delimited_file", forced)
    return request.param


# ---------------------------------------------------------------------------
# random files against the csv module and pandas
LABEL_POOL = ["pos", "neg", "a,b", 'say "hi"', " padded ", "x\ny", "ü", "1", "0", "true"]


def _random_file(tmp_path, rng, *, quoting, crlf, bom, gz, trailing, delimiter, name="r"):
    n = int(rng.integers(1, 400))
    pool = LABEL_POOL if quoting else ["pos", "neg", "1", "0", " sp", "ü"]
    labels = [pool[k] for k in rng.integers(0, len(pool), n)]
    a = np.round(rng.normal(size=n), int(rng.integers(1, 10)))
    b = rng.random(n)
    w = np.round(rng.uniform(0, 3, n), 3)
    w[0] = 1.0
    text = io.StringIO(newline="")
    writer = csv.writer(text, delimiter=delimiter, lineterminator="\r\n" if crlf else "\n",
                        quoting=csv.QUOTE_MINIMAL)
    writer.writerow(["id", "y", "a", "b", "w"])
    for i in range(n):
        writer.writerow([i, labels[i], repr(float(a[i])), repr(float(b[i])), repr(float(w[i]))])
    data = ("\ufeff" if bom else "") + text.getvalue() + ("\r\n" if crlf else "\n") * trailing
    suffix = ".tsv" if delimiter == "\t" else ".csv"
    path = tmp_path / f"{name}{suffix}{'.gz' if gz else ''}"
    raw = data.encode("utf-8")
    path.write_bytes(gzip.compress(raw) if gz else raw)
    return str(path), raw


def _reference(raw: bytes, delimiter: str):
    rows = list(csv.reader(io.StringIO(raw.decode("utf-8-sig"), newline=""), delimiter=delimiter, strict=True))
    rows = [r for r in rows[1:] if r]
    return [r[1].strip() for r in rows], np.array([[float(r[2]), float(r[3])] for r in rows]), \
        np.array([float(r[4]) for r in rows])


@pytest.mark.parametrize("seed", range(12))
def test_random_delimited_files_match_the_csv_module_and_pandas(tmp_path, parser, seed):
    rng = np.random.default_rng(seed)
    opts = {"quoting": bool(seed % 2), "crlf": bool(seed % 3 == 0), "bom": bool(seed % 4 == 1),
            "gz": bool(seed % 5 == 2), "trailing": int(seed % 3), "delimiter": "\t" if seed % 6 == 5 else ","}
    path, raw = _random_file(tmp_path, rng, **opts)
    labels, scores, weights = _reference(raw, opts["delimiter"])
    cols = read_file(path, label="y", score_columns=[("a", "--score"), ("b", "--score")], weight="w")
    assert cols.labels == labels
    assert list(np.array(cols.labels)) == labels
    np.testing.assert_array_equal(cols.scores, scores)
    np.testing.assert_array_equal(cols.weights, weights)
    frame = pd.read_csv(path, sep=opts["delimiter"], dtype={"y": str}, keep_default_na=False)
    np.testing.assert_array_equal(frame[["a", "b"]].to_numpy(), scores)
    assert [s.strip() for s in frame["y"]] == labels
    chunks = list(iter_file(path, label="y", score_columns=[("a", "--score")], weight="w", chunk_rows=7))
    assert all(len(c.labels) <= 7 for c in chunks)
    assert [lab for c in chunks for lab in c.labels] == labels
    np.testing.assert_array_equal(np.concatenate([c.scores for c in chunks]), scores[:, 0])


@pytest.mark.parametrize("seed", range(4))
def test_random_parquet_npz_and_jsonl_match_the_columns(tmp_path, seed):
    rng = np.random.default_rng(100 + seed)
    n = int(rng.integers(1, 300))
    kinds = {"str": np.array(["p", "n", " q "])[rng.integers(0, 3, n)], "int": rng.integers(-1, 2, n),
             "float": rng.integers(0, 2, n).astype(float), "bool": rng.random(n) < 0.5}
    for kind, y in kinds.items():
        a = rng.random(n)
        expected = [readers.label_text(v) for v in y.tolist()]
        pq.write_table(pa.table({"y": y, "a": a}), tmp_path / "t.parquet", row_group_size=37)
        np.savez(tmp_path / "t.npz", y=y, a=a)
        with open(tmp_path / "t.jsonl", "w") as fh:
            fh.writelines(json.dumps({"y": v, "a": s}) + "\n" for v, s in zip(y.tolist(), a.tolist()))
        for name in ("t.parquet", "t.npz", "t.jsonl"):
            path = str(tmp_path / name)
            cols = read_file(path, label="y", score_columns=[("a", "--score")])
            assert cols.labels == expected, (kind, name)
            np.testing.assert_array_equal(cols.scores, a)
            chunks = list(iter_file(path, label="y", score_columns=[("a", "--score")], chunk_rows=10))
            assert [lab for c in chunks for lab in c.labels] == expected


def test_quoted_newlines_and_odd_numbers_fall_back_to_the_exact_reader(tmp_path, parser):
    path = tmp_path / "odd.csv"
    path.write_text('y,a\n"multi\nline",0.5\n1,1_000\n" 1 ", 2\n0,+.5\n', newline="")
    cols = read_file(str(path), label="y", score_columns=[("a", "--score")])
    assert cols.labels == ["multi\nline", "1", "1", "0"]
    assert cols.scores.tolist() == [0.5, 1000.0, 2.0, 0.5]


# ---------------------------------------------------------------------------
# malformed files: one line, exit 2, file + line/row + column
def _csv(text):
    return lambda p: p.write_bytes(text.encode() if isinstance(text, str) else text)


def _deep_jsonl(p):
    p.write_text('{"y": 1, "a": 0.5}\n{"y": 0, "a": ' + "[" * 100_000 + "]" * 100_000 + "}\n")


def _npz_object(p):
    np.savez(p, y=np.array([1, 0], dtype=object), a=np.array([0.2, 0.4]))


def _npz_corrupt(p):
    np.savez(p, y=np.array([1, 0]), a=np.array([0.2, 0.4]))
    data = bytearray(p.read_bytes())
    data[len(data) // 2: len(data) // 2 + 40] = b"\x00" * 40
    p.write_bytes(bytes(data[: len(data) - 30]))


def _parquet_duplicate(p):
    table = pa.Table.from_arrays([pa.array([1, 0]), pa.array([0.2, 0.4]), pa.array([0.1, 0.3])], names=["y", "a", "a"])
    pq.write_table(table, p)


def _parquet_corrupt_page(p):
    n = 2000
    pq.write_table(pa.table({"y": np.arange(n) % 2, "a": np.random.default_rng(0).random(n)}), p,
                   compression="snappy", row_group_size=500)
    data = bytearray(p.read_bytes())
    chunk = pq.ParquetFile(p).metadata.row_group(2).column(1)
    for k in range(chunk.data_page_offset + 30, chunk.data_page_offset + chunk.total_compressed_size - 10, 7):
        data[k] = 0xFF
    p.write_bytes(bytes(data))


def _wide_header(p):
    p.write_text(",".join(f"column_{i}" for i in range(1_000_000)) + "\n" + ",".join(["1"] * 1_000_000) + "\n")


def _gz_corrupt(p):
    rng = np.random.default_rng(1)
    data = gzip.compress(b"y,a\n" + "".join(f"{i % 2},{v}\n" for i, v in enumerate(rng.random(5000))).encode())
    p.write_bytes(data[:200] + b"\x00" * 50 + data[250:])


CASES = [
    # (name, maker, fragments that must all be in the message)
    ("huge.jsonl", _csv('{"y": 1, "a": 0.5}\n{"y": 0, "a": 1' + "0" * 400 + "}\n"), ["line 2", "column 'a'", "finite"]),
    ("digits.jsonl", _csv('{"y": 1, "a": 0.5}\n{"y": 0, "a": ' + "7" * 5000 + "}\n"), ["line 2", "digits"]),
    ("deep.jsonl", _deep_jsonl, ["line 2", "nested too deeply"]),
    ("bad.jsonl", _csv('{"y": 1, "a": 0.5}\n{"y": 0, "a": }\n'), ["line 2", "not valid JSON"]),
    ("objects.npz", _npz_object, ["'y'", "dtype object"]),
    ("empty.npy", _csv(b""), ["empty"]),
    ("corrupt.npz", _npz_corrupt, ["NumPy"]),
    ("dup.parquet", _parquet_duplicate, ["column 'a'", "appears 2 times"]),
    ("page.parquet", _parquet_corrupt_page, ["rows 1001-1500", "column 'a'", "corrupt"]),
    ("wide.csv", _wide_header, ["line 1", "no column 'y'", "(1000000 columns)"]),
    ("tabs.csv", _csv("y\ta\n1\t0.5\n"), ["no column 'y'", "--delimiter tab"]),
    ("semi.csv", _csv("y;a\n1;0.5\n"), ["no column 'y'", "--delimiter ;"]),
    ("blank.csv", _csv("y,a\n1,0.5\n\n0,0.2\n"), ["line 3", "empty line"]),
    ("blankcrlf.csv", _csv("y,a\r\n1,0.5\r\n\r\n0,0.2\r\n"), ["line 3", "empty line"]),
    ("text.csv", _csv("y,a\n1,0.5\n0,high\n"), ["line 3", "column 'a'", "must be a number"]),
    ("empty_field.csv", _csv("y,a\n1,0.5\n0,\n"), ["line 3", "column 'a'", "empty field"]),
    ("nan.csv", _csv("y,a\n1,0.5\n0,0.1\n1,nan\n"), ["line 4", "column 'a'", "finite"]),
    ("nanquoted.csv", _csv('y,a\n"1",0.5\n"0\n",0.1\n1,inf\n'), ["line 5", "column 'a'", "finite"]),
    ("fields.csv", _csv("y,a\n1,0.5\n0,0.1,7\n"), ["line 3", "3 fields"]),
    ("short.csv", _csv("y,a\n1,0.5\n0\n"), ["line 3", "column 'a' is missing"]),
    ("nolabel.csv", _csv("y,a\n1,0.5\n  ,0.1\n"), ["line 3", "column 'y'", "empty label"]),
    ("utf8.csv", _csv(b"y,a\n1,0.5\n\xff,0.1\n"), ["line 3", "UTF-8"]),
    ("quote.csv", _csv('y,a\n1,0.5\n"0,0.1\n'), ["line 3", "malformed CSV"]),
    ("corrupt.csv.gz", _gz_corrupt, ["cannot read"]),
    ("empty.csv", _csv(""), ["empty file"]),
    ("header.csv", _csv("y,a\n"), ["no data rows"]),
    ("negative.csv", _csv("y,a,w\n1,0.5,1\n0,0.1,-1\n"), ["line 3", "column 'w'", "non-negative"]),
]


@pytest.mark.parametrize("stream", [False, True], ids=["memory", "stream"])
@pytest.mark.parametrize("name, make, fragments", CASES, ids=[c[0] for c in CASES])
def test_malformed_file_gives_one_line_and_exit_2(tmp_path, capsys, name, make, fragments, stream):
    path = tmp_path / name
    make(path)
    argv = ["evaluate", str(path), "--label", "y", "--score", "a", "--pos-label", "1"]
    if "negative" in name:
        argv += ["--weight", "w"]
    if stream:
        argv += ["--stream", "--chunk-rows", "2"]  # (the first chunk must hold --pos-label: the CLI checks it there)
    code = main(argv)
    err = capsys.readouterr().err
    assert code == 2, err
    assert err.count("\n") == 1 and "Traceback" not in err, err[:500]
    assert len(err) < 600, err[:600]
    assert str(path) in err
    for fragment in fragments:
        assert fragment in err, (fragment, err)


@pytest.mark.parametrize("name, make, fragments", [c for c in CASES if c[0].endswith((".csv", ".gz"))],
                         ids=[c[0] for c in CASES if c[0].endswith((".csv", ".gz"))])
def test_malformed_delimited_text_gives_the_same_message_with_every_parser(tmp_path, parser, name, make, fragments):
    path = tmp_path / name
    make(path)
    weight = "w" if "negative" in name else None
    with pytest.raises(InputError) as whole:
        read_file(str(path), label="y", score_columns=[("a", "--score")], weight=weight)
    if name == "header.csv":  # no rows: the caller's check for a stream
        return
    with pytest.raises(InputError) as streamed:
        list(iter_file(str(path), label="y", score_columns=[("a", "--score")], weight=weight, chunk_rows=1))
    for fragment in fragments:
        assert fragment in str(streamed.value)
        assert fragment in str(whole.value)


@pytest.mark.parametrize("given", ["\\t", "tab", "TAB", "\t"])
def test_delimiter_tab_in_every_spelling(tmp_path, capsys, given):
    path = tmp_path / "t.csv"
    path.write_text("y\ta\n1\t0.9\n0\t0.1\n")
    assert main(["evaluate", str(path), "--label", "y", "--score", "a", "--delimiter", given, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["input"]["n_rows"] == 2


@pytest.mark.parametrize("given", ["ab", "", '"', "\\n"])
def test_delimiter_other_than_one_character_is_a_usage_error(tmp_path, capsys, given):
    path = tmp_path / "t.csv"
    path.write_text("y,a\n1,0.9\n0,0.1\n")
    assert main(["evaluate", str(path), "--label", "y", "--score", "a", "--delimiter", given]) == 2
    err = capsys.readouterr().err
    assert "--delimiter" in err and "one character" in err and "Traceback" not in err


def test_trailing_blank_lines_are_allowed_and_no_row_is_dropped(tmp_path, parser):
    path = tmp_path / "t.csv"
    path.write_text("y,a\n1,0.9\n0,0.1\n\n\n\r\n")
    cols = read_file(str(path), label="y", score_columns=[("a", "--score")])
    assert cols.labels == ["1", "0"] and cols.scores.tolist() == [0.9, 0.1]


def test_parquet_without_pyarrow_names_the_extra(tmp_path, monkeypatch):
    path = tmp_path / "t.parquet"
    pq.write_table(pa.table({"y": [1, 0], "a": [0.5, 0.2]}), path)
    import builtins
    real = builtins.__import__

    def no_pyarrow(name, *args, **kw):
        if name.startswith("pyarrow"):
            raise ImportError(name)
        return real(name, *args, **kw)

    monkeypatch.setattr(builtins, "__import__", no_pyarrow)
    with pytest.raises(InputError, match=r"precall\[parquet\]"):
        read_file(str(path), label="y", score_columns=[("a", "--score")])
    path = tmp_path / "t.csv"  # delimited text still reads, by numpy
    path.write_text("y,a\n1,0.5\n0,0.2\n")
    assert read_file(str(path), label="y", score_columns=[("a", "--score")]).labels == ["1", "0"]


def test_labels_convert_to_the_same_array_as_a_list(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("y,a\nlong_label,0.5\nb,0.2\nlong_label,0.1\n")
    labels = read_file(str(path), label="y", score_columns=[("a", "--score")]).labels
    assert isinstance(labels, list)
    got, expected = np.array(labels), np.array(list(labels))
    assert got.dtype == expected.dtype and got.tolist() == expected.tolist()
    labels[1] = "changed"  # a changed list converts as a list
    assert np.array(labels).tolist() == ["long_label", "changed", "long_label"]

