"""The file readers against independent references (the csv module, pandas) on random
files, with every parser (pyarrow, numpy's loadtxt, the exact csv reader), and every
malformed file of issue 15: exit code 2, one line on stderr naming the file, the line
or row and the column, never a traceback, also with ``--stream``."""

from __future__ import annotations

import csv
import gzip
import io
import json
from collections import Counter
from collections.abc import Sequence

import numpy as np
import pytest

import precall
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
    path.write_text('y,a\n"multi\nline",0.5\n1,1e3\n" 1 ", 2\n0,+.5\n', newline="")
    cols = read_file(str(path), label="y", score_columns=[("a", "--score")])
    assert cols.labels == ["multi\nline", "1", "1", "0"]
    assert cols.scores.tolist() == [0.5, 1000.0, 2.0, 0.5]


UNCLOSED = [
    # (where the quote opens, the file, the line and column the message names)
    ("label", 'y,p,g,u\n1,0.5,a,x\n"0,0.2,b,x\n1,0.3,b,x\n', "line 3, column 'y'"),
    ("score", 'y,p,g,u\n1,0.5,a,x\n0,"0.2,b,x\n1,0.3,b,x\n', "line 3, column 'p'"),
    ("by", 'y,p,g,u\n1,0.5,a,x\n0,0.2,"unterminated\n1,0.3,b,x\n', "line 3, column 'g'"),
    ("unused", 'y,p,g,u\n1,0.5,a,x\n0,0.2,b,"x\n1,0.3,b,x\n', "line 3, column 'u'"),
    ("crlf, no last line break", 'y,p,g,u\r\n1,0.5,a,x\r\n0,0.2,b,"x\r\n1,0.3,b,x', "line 3, column 'u'"),
    ("after a closed one", 'y,p,g,u\n1,0.5,"a\nb",x\n0,0.2,"c\n",""""\n1,0.3,"b,x\n', "line 6, column 'g'"),
    ("header", 'y,p,g,"u\n1,0.5,a,x\n', "line 1, field 4"),
]


@pytest.mark.parametrize("stream", [False, True], ids=["memory", "stream"])
@pytest.mark.parametrize("where, text, named", UNCLOSED, ids=[c[0] for c in UNCLOSED])
def test_a_quote_open_at_the_end_of_the_file_is_an_error_with_every_parser(tmp_path, capsys, parser, stream,
                                                                          where, text, named):
    """pyarrow read a quoted field still open at the end of the file as one running to it (the
    rows after it lost, exit 0); every parser now stops where that field begins."""
    path = tmp_path / "f.csv"
    path.write_bytes(text.encode())
    argv = ["evaluate", str(path), "--label", "y", "--score", "p", "--by", "g", "--pos-label", "1"]
    code = main(argv + (["--stream", "--chunk-rows", "1"] if stream else []))
    err = capsys.readouterr().err
    assert code == 2, err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert f"{path}: {named}: a quoted field is not closed before the end of the file" in err, err


def test_a_closed_quoted_field_over_several_lines_is_one_field_with_every_parser(tmp_path, parser):
    """A quoted field that does close holds the lines it spans (RFC 4180), rows or not."""
    path = tmp_path / "f.csv"
    path.write_text('y,p,g,u\n1,0.5,a,x\n0,0.2,"b\n1,0.3,c",x\n1,0.4,"d ""e""",x\n', newline="")
    for cols in (read_file(str(path), label="y", score_columns=[("p", "--score")], by=["g"]),
                 _concat_chunks(iter_file(str(path), label="y", score_columns=[("p", "--score")], by=["g"],
                                          chunk_rows=1))):
        assert list(cols.labels) == ["1", "0", "1"]
        assert cols.scores.tolist() == [0.5, 0.2, 0.4]
        assert [cols.by[0].texts[c] for c in cols.by[0].codes] == ["a", "b\n1,0.3,c", 'd "e"']


def _concat_chunks(chunks):
    return readers._concat("f.csv", chunks, None, "no rows")


@pytest.mark.parametrize("text", [t for _, t, _ in UNCLOSED] + ['y,"p"\n"1","0.5"\n"a""\n""b",0.2\n', 'y,p\n1,x"y\n',
                                                             'y,p\n"1"x,0.5\n', '\ufeff"y",p\n"1",0.5\n'])
def test_the_quote_check_of_pyarrow_s_input_is_the_same_in_any_blocks(text):
    """The quotes are checked block by block as pyarrow reads them: any cut gives the verdict of
    the whole (a quote at the end of a block; a ``""`` across two)."""
    data = text.encode()

    def verdict(cuts: list[int]) -> bool:
        scan = readers._Scan(io.BytesIO(data), delimiter=",")
        bounds = [0, *cuts, len(data)]
        return all(scan._quotes(data[a:b]) for a, b in zip(bounds, bounds[1:]) if b > a) and scan._quotes(b"")

    whole = verdict([])
    assert whole == (text.count('"') % 2 == 0 and 'x"' not in text and '"x' not in text)
    for k in range(1, len(data)):
        assert verdict([k]) == whole, k
        assert verdict(list(range(1, len(data)))) == whole


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


def _big_integers(p):
    """int64 scores beyond 2**53 in row 4 (a float64 cannot hold them: the CLI reads scores as float64)."""
    y, a = np.array([1, 0, 1, 0, 1]), np.array([0, 1, 2, 2**53 + 5, 4], dtype=np.int64)
    if p.suffix == ".npz":
        np.savez(p, y=y, a=a)
    else:
        pq.write_table(pa.table({"y": y, "a": a}), p)


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
    ("quote.csv", _csv('y,a\n1,0.5\n"0,0.1\n'), ["line 3", "column 'y'", "quoted field is not closed"]),
    ("after.csv", _csv('y,a\n1,0.5\n"0"x,0.1\n'), ["line 3", "malformed CSV"]),
    ("corrupt.csv.gz", _gz_corrupt, ["cannot read"]),
    ("empty.csv", _csv(""), ["empty file"]),
    ("header.csv", _csv("y,a\n"), ["no data rows"]),
    ("negative.csv", _csv("y,a,w\n1,0.5,1\n0,0.1,-1\n"), ["line 3", "column 'w'", "non-negative"]),
    ("bigint.npz", _big_integers, ["row 4", "column 'a'", "beyond 2**53"]),
    ("bigint.parquet", _big_integers, ["row 4", "column 'a'", "beyond 2**53"]),
    ("bigint.csv", _csv("y,a\n1,0.5\n0,9007199254740992\n1,9007199254740993\n"),
     ["line 4", "column 'a'", "9007199254740993 is an integer beyond 2**53", "as floats"]),
    ("bigint.csv.gz", lambda p: p.write_bytes(gzip.compress(b"y,a\r\n1,0.5\r\n0,-18014398509481985\r\n")),
     ["line 3", "column 'a'", "beyond 2**53"]),
    ("bigint.jsonl", _csv('{"y": 1, "a": 0.5}\n{"y": 0, "a": 9007199254740993}\n'),
     ["line 2", "column 'a'", "9007199254740993 is an integer beyond 2**53"]),
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
    assert isinstance(labels, Sequence) and not isinstance(labels, list)  # no string per row
    assert labels.codes.dtype == np.uint8 and labels.texts == ["long_label", "b"]  # 1 byte a row
    assert labels == ["long_label", "b", "long_label"] and list(labels) == ["long_label", "b", "long_label"]
    assert labels[1] == "b" and labels[1:] == ["b", "long_label"] and labels[2:].texts == ["long_label"]
    got, expected = np.array(labels), np.array(list(labels))
    assert got.dtype == expected.dtype and got.tolist() == expected.tolist()
    assert readers.label_counts(labels) == Counter(labels) == Counter({"long_label": 2, "b": 1})
    assert labels.positive("b").tolist() == [False, True, False] and not labels.positive("x").any()
    with pytest.raises(TypeError):
        labels[1] = "changed"  # type: ignore[index]



# ---------------------------------------------------------------------------
# one contract with or without pyarrow (issue 21): every case through every parser
def _outcome(path, **kw):
    """What read_file and a chunked iter_file give: (labels, scores) or the error message."""
    kw.setdefault("label", "y")
    kw.setdefault("score_columns", [("a", "--score")])
    try:
        whole = read_file(str(path), **kw)
        chunks = list(iter_file(str(path), chunk_rows=1, **kw))
    except InputError as exc:
        assert "\n" not in str(exc) and str(path) in str(exc)
        return str(exc)
    assert [lab for c in chunks for lab in c.labels] == list(whole.labels)
    np.testing.assert_array_equal(np.concatenate([c.scores for c in chunks]), whole.scores)
    return list(whole.labels), whole.scores.tolist()


@pytest.fixture(params=["pyarrow", "no-pyarrow"])
def json_parser(request, monkeypatch):
    """JSON Lines read by pyarrow's reader, or with pyarrow hidden (the ``json`` module)."""
    if request.param == "no-pyarrow":
        monkeypatch.setattr(readers, "_pyarrow", lambda: None)
    return request.param


DEEP = "[" * 600 + "]" * 600
JSON_CASES = [
    # (name, content, None for rows (checked against pandas) or the fragments of the error)
    ("plain", '{"y": 1, "a": 0.5}\n{"y": 0, "a": 0.25}\n', None),
    ("two_on_a_line", '{"y": 1, "a": 0.5} {"y": 0, "a": 0.25}\n', ["line 1", "not valid JSON"]),
    ("two_later", '{"y": 1, "a": 0.5}\n{"y": 1, "a": 0.5}{"y": 0, "a": 0.25}\n', ["line 2", "not valid JSON"]),
    ("split_object", '{"y": 1,\n "a": 0.5}\n', ["line 1", "not valid JSON"]),
    ("split_nested", '{"y": 1, "a": 0.5, "z": [1,\n2]}\n', ["line 1", "not valid JSON"]),
    ("blank_lines", '\n{"y": 1, "a": 0.5}\n  \t \n\n{"y": 0, "a": 0.25}\n\n', None),
    ("bom", '\ufeff{"y": 1, "a": 0.5}\n{"y": 0, "a": 0.25}\n', None),
    ("crlf", '{"y": 1, "a": 0.5}\r\n{"y": 0, "a": 0.25}\r\n', None),
    ("no_final_newline", '{"y": 1, "a": 0.5}\n{"y": 0, "a": 0.25}', None),
    ("trailing_comma", '{"y": 1, "a": 0.5,}\n', ["line 1", "not valid JSON"]),
    ("comment", '# a comment\n{"y": 1, "a": 0.5}\n', ["line 1", "not valid JSON"]),
    ("duplicate_key", '{"y": 1, "a": 0.1, "a": 0.5}\n{"y": 0, "y": 1, "a": 0.25}\n',
     ["line 1", "column 'a'", "occurs more than once"]),
    ("duplicate_label_key", '{"y": 1, "a": 0.1}\n{"y": 0, "a": 0.3}\n{"y": 0, "y": 1, "a": 0.25}\n',
     ["line 3", "column 'y'", "occurs more than once"]),
    ("duplicate_escaped_key", '{"y": 1, "a": 0.1, "\\u0061": 0.95}\n', ["line 1", "column 'a'", "more than once"]),
    ("number_as_string", '{"y": 1, "a": "0.5"}\n', ["line 1", "column 'a'", "must be a number"]),
    ("nan_score", '{"y": 1, "a": 0.5}\n{"y": 0, "a": NaN}\n', ["line 2", "column 'a'", "finite"]),
    ("infinity_score", '{"y": 1, "a": -Infinity}\n', ["line 1", "column 'a'", "finite; got '-Infinity'"]),
    ("e400_score", '{"y": 1, "a": 0.5}\n{"y": 1, "a": 1e400}\n', ["line 2", "column 'a'", "finite; got '1e400'"]),
    ("nan_label", '{"y": 1, "a": 0.5}\n{"y": NaN, "a": 0.25}\n', ["line 2", "column 'y'", "missing label"]),
    ("null_label", '{"y": null, "a": 0.25}\n', ["line 1", "column 'y'", "missing label"]),
    ("na_text_label", '{"y": 1, "a": 0.5}\n{"y": "NA", "a": 0.25}\n', ["line 2", "column 'y'", "missing label"]),
    ("nested_unused", '{"y": 1, "a": 0.5, "z": {"q": [1, [2, {"r": null}]]}}\n{"y": 0, "a": 0.25, "z": 3}\n', None),
    ("deep_unused", '{"y": 1, "a": 0.5, "z": ' + "[" * 500 + "]" * 500 + '}\n', None),
    ("too_deep_unused", '{"y": 1, "a": 0.5}\n{"y": 1, "a": 0.5, "z": ' + DEEP + '}\n', ["line 2", "nested too deeply"]),
    ("brackets_in_strings", '{"y": "a\\"}{[", "a": 0.5, "z": "]]]\\\\"}\n{"y": "\\\\", "a": 0.25}\n', None),
    ("huge_int_unused", '{"y": 1, "a": 0.5, "z": ' + "7" * 5000 + '}\n', None),
    ("huge_int_label", '{"y": ' + "7" * 5000 + ', "a": 0.5}\n', ["line 1", "column 'y'", "digits"]),
    ("huge_int_score", '{"y": 1, "a": ' + "7" * 5000 + '}\n', ["line 1", "column 'a'", "finite"]),
    ("bigint_score", '{"y": 1, "a": 0.5}\n{"y": 0, "a": -9007199254740993}\n',
     ["line 2", "column 'a'", "-9007199254740993 is an integer beyond 2**53"]),
    ("exact_bigint_score", '{"y": 1, "a": 0.5}\n{"y": 0, "a": 1152921504606846976}\n',  # 2**60: exact, refused
     ["line 2", "column 'a'", "beyond 2**53"]),
    ("bigint_as_float_score", '{"y": 1, "a": 9007199254740993.0}\n{"y": 0, "a": 9007199254740992}\n'
     '{"y": 0, "a": -1e300}\n', None),
    ("bad_utf8_unused", b'{"y": 1, "a": 0.5}\n{"y": 1, "a": 0.5, "z": "\xff"}\n', ["line 2", "UTF-8"]),
    ("lone_surrogate_label", '{"y": "\\ud800", "a": 0.5}\n', ["line 1", "column 'y'", "surrogate"]),
    ("nul_byte", b'{"y": 1, "a": 0.5}\x00\n', ["line 1", "not valid JSON"]),
    ("control_in_string", '{"y": "a\tb", "a": 0.5}\n', ["line 1", "not valid JSON"]),
    ("array_line", '{"y": 1, "a": 0.5}\n[1, 2]\n', ["line 2", "JSON object"]),
    ("null_line", '{"y": 1, "a": 0.5}\nnull\n', ["line 2", "JSON object"]),
    ("empty_object", '{"y": 1, "a": 0.5}\n{}\n', ["line 2", "no key 'y'"]),
    ("extra_close", '{"y": 1, "a": 0.5}}\n', ["line 1", "not valid JSON"]),
    ("long_line", '{"y": 1, "a": 0.5, "z": "' + "x" * (5 << 20) + '"}\n{"y": 0, "a": 0.25}\n', None),
    ("int_and_float_labels", '{"y": 1, "a": 0.5}\n{"y": 1.0, "a": 0.25}\n{"y": 0, "a": 0.1}\n', None),
    ("bool_after_number_labels", '{"y": 1, "a": 0.5}\n{"y": 1.0, "a": 0.25}\n{"y": true, "a": 0.1}\n',
     ["line 3", "column 'y'", "the label True is a boolean, but line 1 has a number (1)"]),
    ("text_after_number_labels", '{"y": 1, "a": 0.5}\n{"y": "p", "a": 0.25}\n',
     ["line 2", "column 'y'", "the label 'p' is a string, but line 1 has a number"]),
    ("number_text_after_number_labels", '{"y": 0, "a": 0.5}\n{"y": 1, "a": 0.5}\n{"y": "1.0", "a": 0.25}\n',
     ["line 3", "column 'y'", "the label '1.0' is a string", "one kind"]),
    ("text_then_float_labels", '{"y": "p", "a": 0.5}\n{"y": 1.0, "a": 0.25}\n{"y": true, "a": 0.1}\n',
     ["line 2", "column 'y'", "the label 1.0 is a number, but line 1 has a string ('p')"]),
    ("float_then_big_int_labels", '{"y": 0.5, "a": 0.5}\n{"y": 12345678901234567890, "a": 0.25}\n', None),
    ("first_label_missing", '{"a": 0.5}\n{"y": 1, "a": 0.25}\n', ["line 1", "no key 'y'"]),
    ("distinct_keys", "".join('{"y": %d, "a": 0.5, "k%d": [%d]}\n' % (i % 2, i, i) for i in range(3000)), None),
]


@pytest.mark.parametrize("name, content, fragments", JSON_CASES, ids=[c[0] for c in JSON_CASES])
def test_json_lines_read_the_same_with_and_without_pyarrow(tmp_path, monkeypatch, name, content, fragments):
    path = tmp_path / f"{name}.jsonl"
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    got = _outcome(path)
    monkeypatch.setattr(readers, "_pyarrow", lambda: None)
    assert _outcome(path) == got  # the same rows or the same message
    if fragments is None:
        records = [json.loads(line, parse_int=lambda t: int(t) if len(t) < 4000 else t)
                   for line in content.lstrip("\ufeff").splitlines() if line.strip()]
        labels = [readers.label_text(r["y"]) for r in records]
        assert got == (labels, [r["a"] for r in records])
        if name not in ("huge_int_unused", "deep_unused", "bom"):  # pandas' ujson: 1024 levels, 19 digits, no BOM
            frame = pd.read_json(path, lines=True, dtype=False)
            assert frame["a"].tolist() == got[1]
    else:
        for fragment in fragments:
            assert fragment in got, (fragment, got)


def test_json_shape_scan_agrees_with_the_json_module(json_parser):
    """The vectorised structure scan against ``json`` on random lines cut into random blocks."""
    rng = np.random.default_rng(5)
    pieces = ['"\\\\"', '"\\""', '"}"', '"{["', "[]", "{}", '"\\\\\\""', "1", '"a\\\\\\\\"']
    for _ in range(200):
        lines = []
        for _ in range(int(rng.integers(1, 6))):
            depth = int(rng.integers(0, 4))
            value = " ".join(pieces[k] for k in rng.integers(0, len(pieces), 3)).replace(" ", ",")
            lines.append('{"k": [' + "[" * depth + value + "]" * depth + "]}")
        text = ("\n" if rng.random() < 0.5 else "\r\n").join(lines) + "\n"
        data = text.encode()
        shape = readers._JsonShape()
        cuts = sorted(rng.integers(0, len(data), 3).tolist())
        for a, b in zip([0, *cuts], [*cuts, len(data)]):
            shape.scan(data[a:b])
        assert shape.ok and shape.values == len(lines), text
        assert shape.max_depth == max(_depth(json.loads(line)) for line in lines)


def _depth(value):
    if isinstance(value, dict):
        return 1 + max((_depth(v) for v in value.values()), default=0)
    if isinstance(value, list):
        return 1 + max((_depth(v) for v in value), default=0)
    return 0


CSV_CASES = [
    # (name, content, None for rows (checked against pandas) or the fragments of the error)
    ("quotes", 'y,a,z\n"p ""q""",0.5,"x,y"\n0,0.25,\n', None),
    ("embedded_newline", 'y,a\n"a\nb",0.5\n0,0.25\n', None),
    ("empty_unused", "y,a,z\n1,0.5,\n0,0.25,\n", None),
    ("empty_score", "y,a\n1,0.5\n0,\n", ["line 3", "column 'a'", "empty field"]),
    ("empty_label", "y,a\n1,0.5\n,0.25\n", ["line 3", "column 'y'", "empty label"]),
    ("crlf", "y,a\r\n1,0.5\r\n0,0.25\r\n", None),
    ("bom", "\ufeffy,a\n1,0.5\n0,0.25\n", None),
    ("long_label", 'y,a\n"' + "L" * 200_000 + '",0.5\n0,0.25\n', None),
    ("long_unquoted_label", "y,a\n" + "L" * 200_000 + ",0.5\n0,0.25\n", None),
    ("long_unused", 'y,a,z\n1,0.5,"' + "z, " * 100_000 + '"\n0,0.25,z\n', None),
    ("long_header", 'y,a,"' + "h" * 200_000 + '"\n1,0.5,1\n0,0.25,2\n', None),
    ("nan_label", "y,a\n1,0.5\nnan,0.25\n", ["line 3", "column 'y'", "missing label"]),
    ("NaN_label", "y,a\n1,0.5\n0,0.1\nNaN,0.25\n", ["line 4", "column 'y'", "missing label"]),
    ("NA_label", "y,a\n1,0.5\nNA,0.25\n", ["line 3", "column 'y'", "missing label"]),
    ("None_label", 'y,a\n1,0.5\n"None",0.25\n', ["line 3", "column 'y'", "missing label"]),
    ("nan_score", "y,a\n1,0.5\n0,nan\n", ["line 3", "column 'a'", "finite"]),
    ("inf_score", "y,a\n1,-inf\n", ["line 2", "column 'a'", "finite"]),
    ("bigint_score", "y,a\n1,0.5\n0,9007199254740993\n", ["line 3", "column 'a'", "beyond 2**53"]),
    ("bigint_negative", "y,a\r\n1,0.5\r\n0,-9007199254740993\r\n", ["line 3", "column 'a'", "beyond 2**53"]),
    ("bigint_plus", "y,a\n1,0.5\n0,+0009007199254740993\n", ["line 3", "column 'a'", "beyond 2**53"]),
    ("bigint_exact", "y,a\n1,0.5\n0,1152921504606846976\n", ["line 3", "column 'a'", "beyond 2**53"]),  # 2**60
    ("bigint_quoted", 'y,a\n1,0.5\n"0","9007199254740993"\n', ["line 3", "column 'a'", "beyond 2**53"]),
    ("bigint_after_quote", 'y,a\n"1",0.5\n0,9007199254740993\n', ["line 3", "column 'a'", "beyond 2**53"]),
    ("bigint_bom", "\ufeffy,a\n1,0.5\n0,9007199254740993\n", ["line 3", "column 'a'", "beyond 2**53"]),
    ("bigint_2_53", "y,a\n1,9007199254740992\n0,-9007199254740992\n", None),
    ("bigint_as_float", "y,a\n1,9007199254740993.0\n0,1e16\n1,-9007199254740993e0\n0,1e300\n", None),
    ("bad_utf8_unused", b"y,a,z\n1,0.5,x\n0,0.25,\xff\n", ["line 3", "UTF-8"]),
    ("underscore_score", "y,a\n1,0.5\n0,1_000\n", ["line 3", "column 'a'", "got '1_000', which is not one in ASCII"]),
    ("full_width_score", "y,a\n1,0.5\n0,\uff10.\uff11\n", ["line 3", "column 'a'", "not one in ASCII digits"]),
    ("arabic_indic_score", "y,a\n1,0.5\n0,\u0660.\u0661\n", ["line 3", "column 'a'", "not one in ASCII digits"]),
    ("nbsp_score", "y,a\n1,0.5\n0,\u00a00.5\n", ["line 3", "column 'a'", "not one in ASCII digits"]),
    ("underscore_weight", "y,a,w\n1,0.5,1\n0,0.25,1_0\n", ["line 3", "column 'w'", "the weight must be a number"]),
    ("e400_score", "y,a\n1,0.5\n1,1e400\n", ["line 3", "column 'a'", "must be finite; got '1e400'"]),
    ("e400_weight", "y,a,w\n1,0.5,1\n1,0.5,-1E+400\n", ["line 3", "column 'w'", "got '-1E+400'"]),
    ("huge_int_score", "y,a\n1,0.5\n0," + "9" * 400 + "\n", ["line 3", "column 'a'", "(400 characters)"]),
    ("nan_spelled_score", "y,a\n1,0.5\n0,NaN\n", ["line 3", "column 'a'", "must be finite; got 'NaN'"]),
    ("nul_unused", "y,a,z\n1,0.5,a\x00b\n0,0.25,c\n", None),
    ("many_columns", ",".join(["y", "a"] + [f"c{i}" for i in range(20_000)]) + "\n"
     + ",".join(["1", "0.5"] + ["0"] * 20_000) + "\n", None),
]


@pytest.mark.parametrize("name, content, fragments", CSV_CASES, ids=[c[0] for c in CSV_CASES])
def test_delimited_text_reads_the_same_with_every_parser(tmp_path, monkeypatch, name, content, fragments):
    path = tmp_path / f"{name}.csv"
    raw = content if isinstance(content, bytes) else content.encode()
    path.write_bytes(raw)
    original = readers._delimited_file
    outcomes = {}
    kw = {"weight": "w"} if "weight" in name else {}
    for fast in ("arrow", "numpy", None):
        monkeypatch.setattr(readers, "_delimited_file", lambda *a, fast=fast, **kw: original(*a, **{**kw, "fast": fast}))
        outcomes[fast] = _outcome(path, **kw)
    monkeypatch.setattr(readers, "_delimited_file", original)
    monkeypatch.setattr(readers, "_pyarrow", lambda: None)
    outcomes["no-pyarrow"] = _outcome(path, **kw)
    assert len({repr(o) for o in outcomes.values()}) == 1, outcomes
    got = outcomes[None]
    if fragments is None:
        frame = pd.read_csv(path, dtype={"y": str}, keep_default_na=False, encoding="utf-8")
        assert got == ([s.strip() for s in frame["y"]], frame["a"].tolist())
    else:
        for fragment in fragments:
            assert fragment in got, (fragment, got)


# ---------------------------------------------------------------------------
# a missing label stops with an error in every format (the row named by pandas' isna)
def _missing_label_files(tmp_path):
    y_float = np.array([1.0, 0.0, np.nan, 1.0])
    a = np.array([0.9, 0.2, 0.4, 0.7])
    files = []
    np.savez(tmp_path / "float.npz", y=y_float, a=a)
    files.append(tmp_path / "float.npz")
    np.savez(tmp_path / "text.npz", y=np.array(["1", "0", "nan", "1"]), a=a)
    files.append(tmp_path / "text.npz")
    arr = np.zeros(4, dtype=[("y", float), ("a", float)])
    arr["y"], arr["a"] = y_float, a
    np.save(tmp_path / "float.npy", arr)
    files.append(tmp_path / "float.npy")
    pq.write_table(pa.table({"y": y_float, "a": a}), tmp_path / "float.parquet")
    pq.write_table(pa.table({"y": pa.array([1, 0, None, 1]), "a": a}), tmp_path / "null.parquet")
    pq.write_table(pa.table({"y": ["1", "0", "NA", "1"], "a": a}), tmp_path / "na.parquet")
    files += [tmp_path / "float.parquet", tmp_path / "null.parquet", tmp_path / "na.parquet"]
    for name, token in [("nan", "NaN"), ("null", "null")]:
        (tmp_path / f"{name}.jsonl").write_text("".join(
            '{"y": %s, "a": %r}\n' % (token if k == 2 else int(v), float(a[k])) for k, v in enumerate([1, 0, 0, 1])))
        files.append(tmp_path / f"{name}.jsonl")
    for name, token in [("nan", "nan"), ("NaN", "NaN"), ("empty", ""), ("NA", "NA"), ("null", "NULL")]:
        (tmp_path / f"{name}.csv").write_text("y,a\n" + "".join(
            f"{token if k == 2 else v},{float(a[k])!r}\n" for k, v in enumerate([1, 0, 0, 1])))
        files.append(tmp_path / f"{name}.csv")
    with gzip.open(tmp_path / "nan.csv.gz", "wt") as fh:
        fh.write("y,a\n1,0.9\n0,0.2\nnan,0.4\n1,0.7\n")
    files.append(tmp_path / "nan.csv.gz")
    return files


def _pandas_first_missing(path):
    name = str(path)
    if name.endswith(".npz"):
        y = pd.Series(np.load(path)["y"])
    elif name.endswith(".npy"):
        y = pd.Series(np.load(path)["y"])
    elif name.endswith(".parquet"):
        y = pd.read_parquet(path)["y"]
    elif name.endswith(".jsonl"):
        y = pd.read_json(path, lines=True)["y"]
    else:
        y = pd.read_csv(path, dtype={"y": str})["y"]
    if not pd.api.types.is_numeric_dtype(y):  # binary formats' texts: pandas keeps them, precall's rule is read_csv's
        y = y.where(~y.isin(list(readers.MISSING_LABELS)), None)
    return int(np.flatnonzero(y.isna().to_numpy())[0])


def test_a_missing_label_stops_with_an_error_in_every_format(tmp_path, capsys, json_parser):
    for path in _missing_label_files(tmp_path):
        i = _pandas_first_missing(path)
        where = f"row {i + 1}" if str(path).endswith((".npz", ".npy", ".parquet")) else f"line {i + 2 - str(path).endswith('.jsonl')}"
        for stream in ([], ["--stream", "--chunk-rows", "2"]):
            code = main(["evaluate", str(path), "--label", "y", "--score", "a", "--pos-label", "1", *stream])
            err = capsys.readouterr().err
            assert code == 2 and err.count("\n") == 1, (path, err)
            assert str(path) in err and where in err and "column 'y'" in err, (path, where, err)
            assert "missing" in err or "empty label" in err or "null" in err, err


def test_a_missing_label_text_named_as_a_class_is_a_class(tmp_path):
    path = tmp_path / "na.csv"
    path.write_text("y,NA,EU\nNA,0.9,0.1\nEU,0.2,0.8\n")
    cols = read_file(str(path), label="y", score_columns=[("NA", "--class-columns"), ("EU", "--class-columns")],
                     classes=["NA", "EU"])
    assert cols.labels == ["NA", "EU"]
    path.write_text("y,NA,EU\nnan,0.9,0.1\nEU,0.2,0.8\n")  # a NaN is never a class
    with pytest.raises(InputError, match="line 2, column 'y': missing label"):
        read_file(str(path), label="y", score_columns=[("NA", "--class-columns"), ("EU", "--class-columns")],
                  classes=["NA", "EU", "nan"])


# ---------------------------------------------------------------------------
# column names (--class-prefix) through the readers: every format x compression, corrupt files
NAMES_TABLE = {"y": np.array(["a", "b", "a"]), "p_a": np.array([0.9, 0.2, 0.6]), "p_b": np.array([0.1, 0.8, 0.4])}


def _write_named(path):
    name = str(path)
    stem = name[:-3] if name.endswith(".gz") else name
    if stem.endswith((".csv", ".tsv")):
        frame = pd.DataFrame(NAMES_TABLE)
        frame.to_csv(path, sep="\t" if stem.endswith(".tsv") else ",", index=False)  # pandas compresses .gz
    elif stem.endswith(".jsonl"):
        pd.DataFrame(NAMES_TABLE).to_json(path, orient="records", lines=True)
    elif stem.endswith(".parquet"):
        pq.write_table(pa.table(NAMES_TABLE), path)
    elif stem.endswith(".npz"):
        np.savez(path, **NAMES_TABLE)
    else:
        arr = np.zeros(3, dtype=[(k, v.dtype) for k, v in NAMES_TABLE.items()])
        for k, v in NAMES_TABLE.items():
            arr[k] = v
        np.save(path, arr)


TEXT_SUFFIXES = [".csv", ".tsv", ".jsonl"]


@pytest.mark.parametrize("suffix", [s + gz for s in TEXT_SUFFIXES for gz in ("", ".gz")] + [".parquet", ".npz", ".npy"])
def test_column_names_of_every_format_and_compression(tmp_path, capsys, suffix):
    path = tmp_path / f"t{suffix}"
    _write_named(path)
    assert readers.column_names(str(path)) == list(NAMES_TABLE)
    code = main(["evaluate", str(path), "--label", "y", "--class-prefix", "p_", "--json"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    out = json.loads(captured.out)
    assert out["input"]["class_columns"] == {"a": "p_a", "b": "p_b"} and out["input"]["n_rows"] == 3
    cols = read_file(str(path), label="y", score_columns=[("p_a", "--class-columns"), ("p_b", "--class-columns")],
                     classes=["a", "b"])
    np.testing.assert_array_equal(cols.scores, np.column_stack([NAMES_TABLE["p_a"], NAMES_TABLE["p_b"]]))


@pytest.mark.parametrize("suffix", [".parquet.gz", ".npz.gz", ".npy.gz"])
def test_gzipped_binary_formats_are_refused_by_name(tmp_path, suffix):
    path = tmp_path / f"t{suffix}"
    path.write_bytes(gzip.compress(b"anything"))
    for read in (lambda: readers.column_names(str(path)),
                 lambda: read_file(str(path), label="y", score_columns=[("a", "--score")])):
        with pytest.raises(InputError, match="decompress it first"):
            read()


def _deep_first_line(p):
    p.write_text('{"y": "a", "p_a": 0.5, "p_b": 0.5, "z": ' + "[" * 100_000 + "]" * 100_000 + "}\n")


def _long_header(p):
    p.write_text('y,p_a,p_b,"' + "h" * 200_000 + '"\na,0.9,0.1,1\nb,0.2,0.8,2\n')


HEADER_CASES = [
    # (name, maker, fragments of the one-line error; None: read)
    ("corrupt.npz", _npz_corrupt, ["not a readable NumPy file"]),
    ("plain.npy", lambda p: np.save(p, np.arange(3.0)), ["structured array"]),
    ("corrupt.parquet", _csv(b"PAR1 not parquet at all PAR1"), ["not a readable Parquet file"]),
    ("deep.jsonl", _deep_first_line, ["line 1", "nested too deeply"]),
    ("bad.jsonl", _csv('\n{"y": "a", "p_a": }\n'), ["line 2", "not valid JSON"]),
    ("array.jsonl", _csv("[1, 2]\n"), ["line 1", "JSON object"]),
    ("empty.jsonl", _csv("\n\n"), ["no data rows"]),
    ("utf8.csv", _csv(b"y,p_\xff\n"), ["line 1", "UTF-8"]),
    ("quote.csv", _csv('y,"p_a\n'), ["line 1, field 2", "quoted field is not closed"]),
    ("empty.csv", _csv(""), ["empty file"]),
    ("corrupt.csv.gz", _gz_corrupt, ["cannot read"]),
    ("notgz.csv.gz", _csv("y,p_a,p_b\n"), ["cannot read"]),
    ("long.csv", _long_header, None),
]


@pytest.mark.parametrize("name, make, fragments", HEADER_CASES, ids=[c[0] for c in HEADER_CASES])
def test_class_prefix_header_errors_are_one_line(tmp_path, name, make, fragments):
    path = tmp_path / name
    make(path)
    proc = _cli(["evaluate", str(path), "--label", "y", "--class-prefix", "p_"])
    if fragments is None:
        assert proc.returncode == 0, proc.stderr
        return
    err = proc.stderr
    assert proc.returncode == 2 and err.count("\n") == 1 and "Traceback" not in err, err[-2000:]
    assert str(path) in err
    for fragment in fragments:
        assert fragment in err, (fragment, err)
    with pytest.raises(InputError):
        readers.column_names(str(path))


def _cli(argv, hide_pyarrow=False):
    """The command line in a subprocess: a crash (a segmentation fault) fails the test, not pytest."""
    import subprocess
    import sys
    code = ("import sys\n" + ("sys.modules['pyarrow'] = None\n" if hide_pyarrow else "")
            + "from precall.cli import main\nsys.exit(main(sys.argv[1:]))\n")
    return subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True, check=False,
                          timeout=600)


CRASH_CASES = [
    # inputs a C parser cannot be given: each read in a subprocess, with and without pyarrow
    ("deep_unused.jsonl", '{"y": 1, "a": 0.5}\n{"y": 0, "a": 0.2, "z": ' + "[" * 100_000 + "]" * 100_000 + "}\n",
     ["line 2", "nested too deeply"]),
    ("deep_objects.jsonl", '{"y": 1, "a": 0.5, "z": ' + '{"k": ' * 100_000 + "1" + "}" * 100_000 + "}\n",
     ["line 1", "nested too deeply"]),
    ("deep_label.jsonl", '{"y": ' + "[" * 100_000 + "]" * 100_000 + ', "a": 0.5}\n', ["line 1", "nested too deeply"]),
    ("deep_in_string.jsonl", '{"y": 1, "a": 0.5, "z": "' + "[" * 100_000 + '"}\n{"y": 0, "a": 0.2}\n', None),
    ("long_line.jsonl", '{"y": 1, "a": 0.5, "z": "' + "x" * (40 << 20) + '"}\n{"y": 0, "a": 0.2}\n', None),
    ("long_field.csv", 'y,a,z\n1,0.5,"' + "x" * (40 << 20) + '"\n0,0.2,c\n', None),
    ("nul.csv", "y,a,z\n1,0.5,\x00\x00\n0,0.2,c\n", None),
    ("bad_utf8.jsonl", b'{"y": 1, "a": 0.5, "z": "\xc3\x28"}\n{"y": 0, "a": 0.2}\n', ["line 1", "UTF-8"]),
]


@pytest.mark.parametrize("hide_pyarrow", [False, True], ids=["pyarrow", "no-pyarrow"])
@pytest.mark.parametrize("name, content, fragments", CRASH_CASES, ids=[c[0] for c in CRASH_CASES])
def test_no_input_crashes_the_interpreter(tmp_path, name, content, fragments, hide_pyarrow):
    path = tmp_path / name
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    proc = _cli(["evaluate", str(path), "--label", "y", "--score", "a", "--pos-label", "1", "--json"], hide_pyarrow)
    if fragments is None:
        assert proc.returncode == 0, (proc.returncode, proc.stderr[-2000:])
        assert json.loads(proc.stdout)["input"]["n_rows"] == 2
        return
    assert proc.returncode == 2, (proc.returncode, proc.stderr[-2000:])
    assert proc.stderr.count("\n") == 1 and str(path) in proc.stderr
    for fragment in fragments:
        assert fragment in proc.stderr, (fragment, proc.stderr)


@pytest.mark.parametrize("hide_pyarrow", [False, True], ids=["pyarrow", "no-pyarrow"])
@pytest.mark.parametrize("stream", [False, True], ids=["memory", "stream"])
def test_a_bad_line_after_many_blocks_is_found_before_the_parser_sees_it(tmp_path, hide_pyarrow, stream):
    """pyarrow reads blocks of 4 MB (streaming): the lines after the first blocks are checked
    (nesting, one object per line) before it is given them, and the exact reader resumes."""
    good = "".join('{"y": %d, "a": %r}\n' % (i % 2, (i % 997) / 997) for i in range(250_000))
    cases = [("deep", good + '{"y": 1, "a": 0.5, "z": ' + "[" * 100_000 + "]" * 100_000 + "}\n" + good,
              "line 250001: not usable JSON: nested too deeply"),
             ("two", good + good + '{"y": 1, "a": 0.5} {"y": 0, "a": 0.2}\n', "line 500001: not valid JSON"),
             ("ok", good + good, None)]
    for name, text, expected in cases:
        path = tmp_path / f"{name}.jsonl"
        path.write_text(text)
        argv = ["evaluate", str(path), "--label", "y", "--score", "a", "--json"]
        proc = _cli(argv + (["--stream", "--chunk-rows", "100000"] if stream else []), hide_pyarrow)
        if expected is None:
            assert proc.returncode == 0 and json.loads(proc.stdout)["input"]["n_rows"] == 500_000, proc.stderr
        else:
            assert proc.returncode == 2 and expected in proc.stderr and proc.stderr.count("\n") == 1, proc.stderr


@pytest.mark.parametrize("suffix", [".parquet", ".npz"])
def test_a_float32_score_column_stays_float32_and_gives_the_float64_numbers(tmp_path, capsys, suffix):
    """Score columns of at most 32-bit floats are held as float32 (4 bytes a row; float16 widened
    exactly), others as float64; with several columns, one dtype for all.  The numbers are those of
    the same values as float64, in the library and on the command line, whole and ``--stream``."""
    rng = np.random.default_rng(5)
    n = 3000
    y = rng.integers(0, 2, n)
    p32 = np.round(rng.random(n), 2).astype(np.float32)  # ties
    arrays = {"y": y, "p": p32, "h": p32.astype(np.float16), "i": rng.integers(-5, 5, n).astype(np.int32),
              "d": p32.astype(np.float64)}
    path = str(tmp_path / f"f32{suffix}")
    if suffix == ".npz":
        np.savez(path, **arrays)
    else:
        pq.write_table(pa.table(arrays), path)
    for column, dtype in [("p", np.float32), ("h", np.float32), ("i", np.float64), ("d", np.float64)]:
        got = read_file(path, label="y", score_columns=[(column, "--score")]).scores
        assert got.dtype == dtype and got.shape == (n,)
        np.testing.assert_array_equal(got, arrays[column].astype(np.float64))
    assert read_file(path, label="y", score_columns=[("p", "--score"), ("h", "--score")]).scores.dtype == np.float32
    assert read_file(path, label="y", score_columns=[("p", "--score"), ("d", "--score")]).scores.dtype == np.float64
    want = precall.evaluate(y, p32.astype(np.float64))
    for extra in ([], ["--stream"]):
        assert main(["evaluate", path, "--label", "y", "--score", "p", "--json", *extra]) == 0
        got = json.loads(capsys.readouterr().out)
        assert got["average_precision"] == want.average_precision, extra
        assert (got["roc_auc"], got["best_f1"]["threshold"]) == (want.roc_auc, want.best_f1.threshold)



def test_a_delimiter_beyond_ascii_reads_with_every_parser(tmp_path, parser):
    """pyarrow's parser takes ASCII delimiters only: another one is read by the next parser, not a traceback."""
    path = tmp_path / "broken_bar.csv"
    path.write_text("y\u00a6p\u00a6g\n1\u00a60.5\u00a6a\n0\u00a60.2\u00a6b\n1\u00a60.3\u00a6a\n", encoding="utf-8")
    for chunks in ([read_file(str(path), label="y", score_columns=[("p", "--score")], delimiter="\u00a6")],
                   list(iter_file(str(path), label="y", score_columns=[("p", "--score")], delimiter="\u00a6",
                                  chunk_rows=2))):
        scores = np.concatenate([c.scores for c in chunks])
        np.testing.assert_array_equal(scores, [0.5, 0.2, 0.3])


# ---------------------------------------------------------------------------
# integers beyond 2**53: refused in every format, as Parquet's integer columns are
BIG_TEXT_CASES = [
    # (name, text of the file, weight column, fragments of the error: the line and column)
    ("plain", "y,a,b\n{rows}1,9007199254740993,0.5\n", None, ["column 'a'"]),
    ("second_score", "y,a,b\n{rows}1,0.5,-9007199254740993\n", None, ["column 'b'"]),
    ("weight", "y,a,b\n{rows}1,0.5,18014398509481985\n", "b", ["column 'b'", "the weight 18014398509481985"]),
    ("crlf", "y,a,b\r\n{rows}1,9007199254740993,0.5\r\n", None, ["column 'a'"]),
    ("bom", "\ufeffy,a,b\n{rows}1,9007199254740993,0.5\n", None, ["column 'a'"]),
    ("gz", "y,a,b\n{rows}1,1152921504606846976,0.5\n", None, ["column 'a'"]),
]


@pytest.mark.parametrize("fast", ["arrow", "numpy"])
@pytest.mark.parametrize("stream", [False, True], ids=["memory", "stream"])
@pytest.mark.parametrize("name, text, weight, fragments", BIG_TEXT_CASES, ids=[c[0] for c in BIG_TEXT_CASES])
def test_an_integer_beyond_2_53_is_refused_by_the_fast_parsers_themselves(tmp_path, monkeypatch, fast, stream, name,
                                                                           text, weight, fragments):
    """pyarrow and loadtxt read the numbers as float64 (9007199254740993 as 9007199254740992.0): the
    rows at 2**53 or more are read again as text, after many blocks, among floats that large (allowed),
    without the exact reader, and the error names the line and the column."""
    n = 300_000  # several of pyarrow's 4 MB blocks
    nl = "\r\n" if name == "crlf" else "\n"
    rows = "".join(f"{i % 2},{'1e300' if i % 70_000 == 5 else (i % 997) / 997},"
                   f"{'9007199254740993.0' if i % 90_000 == 7 else 1}{nl}" for i in range(n))
    raw = text.format(rows=rows).encode()
    path = tmp_path / ("big.csv.gz" if name == "gz" else "big.csv")
    path.write_bytes(gzip.compress(raw) if name == "gz" else raw)
    original = readers._delimited_file
    monkeypatch.setattr(readers, "_delimited_file", lambda *a, **kw: original(*a, **{**kw, "fast": fast}))

    def no_exact_reader(*a, **kw):
        raise AssertionError("the exact reader was used")

    monkeypatch.setattr(readers, "_delimited_chunks", no_exact_reader)
    scores = [("a", "--score")] + ([("b", "--score")] if name == "second_score" else [])
    with pytest.raises(InputError) as error:
        if stream:
            list(iter_file(str(path), label="y", score_columns=scores, weight=weight, chunk_rows=100_000))
        else:
            read_file(str(path), label="y", score_columns=scores, weight=weight)
    message = str(error.value)
    assert message.startswith(f"{path}: line {n + 2}, ") and "\n" not in message, message
    for fragment in [*fragments, "is an integer beyond 2**53", "rescale the column", "as floats"]:
        assert fragment in message, (fragment, message)
    # the same file without that row: the floats beyond 2**53 are read (rounded, as float text asks)
    good = text.format(rows=rows).rsplit("1,", 1)[0].encode()
    path.write_bytes(gzip.compress(good) if name == "gz" else good)
    got = read_file(str(path), label="y", score_columns=scores, weight=weight)
    assert len(got.labels) == n and got.scores.reshape(n, -1)[5, 0] == 1e300
    if weight:
        assert got.weights[7] == 2.0**53


@pytest.mark.parametrize("value", [2**53, -(2**53), 2**53 + 1, -(2**53) - 1, 2**60, -(2**63), 2**64 - 1],
                         ids=["2**53", "-2**53", "2**53+1", "-2**53-1", "2**60", "-2**63", "2**64-1"])
def test_integers_beyond_2_53_are_refused_alike_in_every_format(tmp_path, monkeypatch, value):
    """One rule: an integer (an integer column of Parquet or .npz, integer text, a JSON integer) beyond
    2**53 in magnitude is refused, also when a float64 happens to hold it (2**60); 2**53 is read."""
    refused = abs(value) > 2**53
    dtype = np.uint64 if value >= 2**63 else np.int64
    y, a = np.array([1, 0, 1]), np.array([0, value, 1], dtype=dtype)
    np.savez(tmp_path / "t.npz", y=y, a=a)
    pq.write_table(pa.table({"y": y, "a": a}), tmp_path / "t.parquet")
    (tmp_path / "t.csv").write_text("y,a\n" + "".join(f"{i},{v}\n" for i, v in zip(y.tolist(), a.tolist())))
    (tmp_path / "t.jsonl").write_text("".join(f'{{"y": {i}, "a": {v}}}\n' for i, v in zip(y.tolist(), a.tolist())))
    outcomes = {}
    for suffix in ["npz", "parquet", "jsonl", "csv"]:
        outcomes[suffix] = _outcome(tmp_path / f"t.{suffix}")
    original = readers._delimited_file
    for fast in ("arrow", "numpy", None):
        monkeypatch.setattr(readers, "_delimited_file", lambda *a, fast=fast, **kw: original(*a, **{**kw, "fast": fast}))
        outcomes[f"csv-{fast}"] = _outcome(tmp_path / "t.csv")
    monkeypatch.setattr(readers, "_delimited_file", original)
    monkeypatch.setattr(readers, "_pyarrow", lambda: None)
    outcomes["jsonl-json"] = _outcome(tmp_path / "t.jsonl")
    for kind, got in outcomes.items():
        if refused:
            where = "row 2" if kind in ("npz", "parquet") else ("line 2" if "jsonl" in kind else "line 3")
            assert isinstance(got, str), (kind, got)
            assert f"{where}, column 'a': the score {value} is an integer beyond 2**53" in got, (kind, got)
        else:
            assert got == (["1", "0", "1"], [0.0, float(value), 1.0]), (kind, got)


@pytest.mark.parametrize("weight", ["18014398509481985", "18014398509481985.0"])
def test_a_json_weight_beyond_2_53_is_refused_only_as_an_integer(tmp_path, json_parser, weight):
    path = tmp_path / "w.jsonl"
    path.write_text('{"y": 1, "a": 0.5, "w": 1}\n{"y": 0, "a": 0.25, "w": %s}\n' % weight)
    got = _outcome(path, weight="w")
    if "." in weight:
        assert got == (["1", "0"], [0.5, 0.25])
    else:
        assert "line 2, column 'w': the weight 18014398509481985 is an integer beyond 2**53" in got, got


def test_the_first_integer_beyond_2_53_is_named_by_row_then_column_with_every_parser(tmp_path, monkeypatch):
    """Several numbers of 2**53 or more in a row: the message is the exact reader's (the first row, in it the
    scores in the order asked for, then the weight), whichever parser reads the file."""
    path = tmp_path / "order.csv"
    path.write_text("y,a,b,w\n1,0.5,0.5,1\n0,1e300,9007199254740993.5,18014398509481985.0\n"
                    "1,1e20,-9007199254740993,18014398509481985\n0,9007199254740993,0.5,1\n")
    original = readers._delimited_file
    outcomes = {}
    for fast in ("arrow", "numpy", None):
        monkeypatch.setattr(readers, "_delimited_file", lambda *a, fast=fast, **kw: original(*a, **{**kw, "fast": fast}))
        outcomes[fast] = _outcome(path, score_columns=[("a", "--score"), ("b", "--score")], weight="w")
    assert len(set(outcomes.values())) == 1, outcomes
    assert "line 4, column 'b': the score -9007199254740993 is an integer beyond 2**53" in outcomes[None]


@pytest.mark.parametrize("crlf", [False, True])
def test_a_file_of_many_blocks_reads_the_same_with_every_parser(tmp_path, monkeypatch, crlf):
    """Text is parsed 1 MB at a time (pyarrow's reader reads about 40 blocks ahead, numpy's parser held a
    block's text several times over): a file of a few MB crosses block boundaries inside lines, and an error
    past the first block names its own line."""
    rng = np.random.default_rng(int(crlf))
    n = 100_000
    end = "\r\n" if crlf else "\n"
    labels = np.where(rng.random(n) < 0.3, "yes", "no")
    scores = [repr(v) for v in rng.random(n).tolist()]
    body = end.join(f"{lab},{s}" for lab, s in zip(labels.tolist(), scores))
    path = tmp_path / "many.csv"
    path.write_text("y,a" + end + body + end, newline="")
    assert path.stat().st_size > 2 << 20
    bad = tmp_path / "bad.csv"
    rows = body.split(end)
    rows[77_777] = "yes,0.5x"
    bad.write_text("y,a" + end + end.join(rows) + end, newline="")
    original = readers._delimited_file
    for fast in ("arrow", "numpy", None):
        monkeypatch.setattr(readers, "_delimited_file", lambda *a, fast=fast, **kw: original(*a, **{**kw, "fast": fast}))
        got = read_file(str(path), label="y", score_columns=[("a", "--score")])
        assert list(got.labels) == labels.tolist()
        assert got.scores.ravel().tolist() == [float(s) for s in scores]
        with pytest.raises(InputError, match=r"line 77779\b.*column 'a'"):
            read_file(str(bad), label="y", score_columns=[("a", "--score")])


def test_json_lines_of_many_blocks_read_the_same_with_and_without_pyarrow(tmp_path, monkeypatch):
    """pyarrow reads JSON Lines 1 MB at a time, the whole file too (a table of the whole file held its
    label column as strings: 6.1-6.8x the columns at 1e7 rows, now 1.7-1.9x): a few MB cross block boundaries, and a
    line past the first block that pyarrow cannot read is read again by the exact reader from there."""
    pytest.importorskip("pyarrow")
    rng = np.random.default_rng(3)
    n = 100_000
    labels = np.where(rng.random(n) < 0.3, "yes", "no").tolist()
    scores = rng.random(n).tolist()
    lines = [json.dumps({"y": lab, "a": s, "other": [1, {"x": 2}]}) for lab, s in zip(labels, scores)]
    path = tmp_path / "many.jsonl"
    path.write_text("\n".join(lines) + "\n")
    assert path.stat().st_size > 2 << 20
    odd = tmp_path / "odd.jsonl"
    lines[77_777] = json.dumps({"y": "yes", "a": 2**60})  # an integer beyond 2**53: the exact reader's
    odd.write_text("\n".join(lines) + "\n")
    bad = tmp_path / "bad.jsonl"
    lines[77_777] = '{"y": "yes", "a": "0.5x"}'
    bad.write_text("\n".join(lines) + "\n")
    outcomes = []
    for arrow in (True, False):
        if not arrow:
            monkeypatch.setattr(readers, "_pyarrow", lambda: None)
        got = read_file(str(path), label="y", score_columns=[("a", "--score")])
        assert list(got.labels) == labels and got.scores.ravel().tolist() == scores
        with pytest.raises(InputError, match=r"line 77778\b"):
            read_file(str(bad), label="y", score_columns=[("a", "--score")])
        outcomes.append(_outcome(odd))
    assert outcomes[0] == outcomes[1]


# ---------------------------------------------------------------------------
# sizes declared, not trusted; input that never ends
def _npy_bomb(path, dtype, shape, body=16):
    """A .npy file whose header declares ``shape`` of ``dtype`` followed by ``body`` bytes."""
    fh = path if isinstance(path, io.BytesIO) else open(path, "wb")
    np.lib.format.write_array_header_1_0(fh, {"descr": np.lib.format.dtype_to_descr(np.dtype(dtype)),
                                             "fortran_order": False, "shape": shape})
    fh.write(b"\0" * body)
    if fh is not path:
        fh.close()


def _npz_bomb(path):
    import zipfile
    good = io.BytesIO()
    np.save(good, np.array([0.1, 0.9]))
    bad = io.BytesIO()
    _npy_bomb(bad, "<f8", (10**13,))
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as archive:
        archive.writestr("y.npy", good.getvalue())
        archive.writestr("p.npy", bad.getvalue())


@pytest.mark.parametrize("stream", [False, True], ids=["memory", "stream"])
@pytest.mark.parametrize("name", ["bomb_raw.npy", "bomb_struct.npy", "bomb.npz", "short.npy"])
def test_a_numpy_header_declaring_more_than_the_file_holds_is_refused_before_allocating(tmp_path, capsys, name,
                                                                                       stream):
    path = tmp_path / name
    if name == "bomb_raw.npy":
        _npy_bomb(path, "<f8", (10**13,))
    elif name == "bomb_struct.npy":
        _npy_bomb(path, [("y", "<i8"), ("p", "<f8")], (10**12,), body=32)
    elif name == "short.npy":  # an ordinary file cut short
        _npy_bomb(path, [("y", "<i8"), ("p", "<f8")], (3,), body=47)
    else:
        _npz_bomb(path)
    with pytest.raises(InputError, match=r"declares \d+ rows of \d+ bytes .* but holds \d+ bytes"):
        read_file(str(path), label="y", score_columns=[("p", "--score")])
    argv = ["evaluate", str(path), "--label", "y", "--score", "p"] + (["--stream"] if stream else [])
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and str(path) in err and "declares" in err and "but holds" in err, err


def test_a_device_or_a_pipe_is_refused_as_not_a_regular_file(tmp_path):
    """/dev/zero never ends (its header line grew until memory ran out); a pipe is read once, and
    precall reads a file twice: both are refused at once (the old behaviour is run under a memory
    limit, in a subprocess)."""
    import os
    fifo = tmp_path / "pipe.csv"
    os.mkfifo(fifo)
    for path, kind in (("/dev/zero", "character device"), (str(fifo), "pipe")):
        if not os.path.exists(path):
            continue
        code = ("import resource, sys\nresource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))\n"
                "from precall.cli import main\nsys.exit(main(sys.argv[1:]))\n")
        import subprocess
        import sys
        proc = subprocess.run([sys.executable, "-c", code, "evaluate", path, "--label", "y", "--score", "p"],
                              capture_output=True, text=True, timeout=120, check=False)
        assert proc.returncode == 2, proc.stderr[-2000:]
        assert proc.stderr.count("\n") == 1 and f"is a {kind}, not a regular file" in proc.stderr, proc.stderr


def test_a_header_line_is_bounded_and_a_long_value_is_counted_as_written(tmp_path, capsys):
    path = tmp_path / "nul.csv.gz"
    path.write_bytes(gzip.compress(b"\0" * (readers.MAX_HEADER_LINE + 10)))  # no line break, 17 kB compressed
    assert main(["evaluate", str(path), "--label", "y", "--score", "p"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "line 1: the header is longer than 16777216 characters" in err, err
    assert readers._clip("\0" * 1000).endswith("... (1000 characters)")  # not the 4,002 of its repr


@pytest.mark.parametrize("suffix", [".csv.gz", ".jsonl.gz"])
@pytest.mark.parametrize("extra", [[], ["--stream"]])
def test_a_data_line_of_a_gzip_file_is_bounded(tmp_path, capsys, monkeypatch, suffix, extra):
    """A ``.gz`` file has no size to bound its lines by: a few MB can hold GBs of one line, which the exact
    reader read whole into memory in search of a line break. Every line of such a stream is bounded
    (:data:`readers.MAX_STREAM_LINE`, lowered here so the file stays small); a file of that bound is read."""
    limit = 4096
    monkeypatch.setattr(readers, "MAX_STREAM_LINE", limit)
    head = b"y,p\n1,0.5\n0,0.25\n" if suffix == ".csv.gz" else b'{"y": 1, "p": 0.5}\n{"y": 0, "p": 0.25}\n'
    path = tmp_path / f"long{suffix}"
    path.write_bytes(gzip.compress(head + b"1" * (limit * 3)))  # line 3 (and on) never ends
    assert main(["evaluate", str(path), "--label", "y", "--score", "p", *extra]) == 2
    err = capsys.readouterr().err
    line = 4 if suffix == ".csv.gz" else 3  # the header is line 1 of a CSV file
    assert err.count("\n") == 1 and f"line {line}: longer than {limit} characters without a line break" in err, err
    filler = b"0" * (limit - 40)  # a line just within the bound
    ok = head + (b"1,0.75" + filler + b"\n" if suffix == ".csv.gz" else b'{"y": 1, "p": 0.75' + filler + b'}\n')
    path.write_bytes(gzip.compress(ok))
    assert main(["evaluate", str(path), "--label", "y", "--score", "p", "--json", *extra]) == 0, capsys.readouterr()


@pytest.mark.parametrize("stream", [False, True], ids=["memory", "stream"])
def test_an_error_in_the_first_block_of_a_large_json_lines_file_exits_cleanly(tmp_path, stream):
    """pyarrow's streaming reader read ahead from the Python file in its own threads: an error in the
    first block left a read pending, and the interpreter crashed (PyGILState_Release) or hung at exit."""
    lines = ['{"y": %d, "p": %r}\n' % (i % 2, (i % 997) / 997) for i in range(200_000)]
    lines[100] = '{"y": 0, "p": "x"}\n'
    path = tmp_path / "early.jsonl"
    path.write_text("".join(lines))
    for _ in range(4):  # it failed in about 2 runs of 3
        proc = _cli(["evaluate", str(path), "--label", "y", "--score", "p"] + (["--stream"] if stream else []))
        assert proc.returncode == 2, (proc.returncode, proc.stderr[-2000:])
        assert "line 101, column 'p': the score must be a number" in proc.stderr


@pytest.mark.parametrize("suffix", [".csv", ".tsv", ".jsonl", ".parquet", ".npz"])
def test_a_missing_slice_value_is_missing_by_the_labels_rule_in_every_format(tmp_path, monkeypatch, suffix):
    """NaN, nan, null, NA, None (the texts pandas reads as missing) and the empty text are the slice
    '(missing)' in every format, as they are missing labels; other texts are slices."""
    values = ["a", "NaN", "nan", "null", "NA", "", "None", "b", "-nan", "N/A"]
    y = [i % 2 for i in range(len(values))]
    p = [(i + 1) / 20 for i in range(len(values))]
    path = tmp_path / f"t{suffix}"
    if suffix in (".csv", ".tsv"):
        d = "\t" if suffix == ".tsv" else ","
        path.write_text(f"y{d}p{d}g\n" + "".join(f"{a}{d}{b}{d}{c}\n" for a, b, c in zip(y, p, values)))
    elif suffix == ".jsonl":
        path.write_text("".join(json.dumps({"y": a, "p": b, "g": c}) + "\n" for a, b, c in zip(y, p, values)))
    elif suffix == ".parquet":
        pq.write_table(pa.table({"y": y, "p": p, "g": values}), path)
    else:
        np.savez(path, y=np.array(y), p=np.array(p), g=np.array(values))
    fast = ["arrow", "numpy", None] if suffix in (".csv", ".tsv") else [None]
    original = readers._delimited_file
    for f in fast:
        monkeypatch.setattr(readers, "_delimited_file", lambda *a, f=f, **kw: original(*a, **{**kw, "fast": f}))
        for chunks in (False, True):
            if chunks:
                parts = list(iter_file(str(path), label="y", score_columns=[("p", "--score")], by=["g"], chunk_rows=3))
                column = readers._join_slices("g", [c.by[0] for c in parts])
            else:
                column = read_file(str(path), label="y", score_columns=[("p", "--score")], by=["g"]).by[0]
            got = [column.texts[k] if k >= 0 else None for k in column.codes.tolist()]
            assert got == ["a", None, None, None, None, None, None, "b", None, None], (f, chunks, got)


@pytest.mark.parametrize("given", ["1.0", "1e0", "+1.00"])
def test_a_positive_label_names_a_label_of_numbers_by_value(tmp_path, capsys, json_parser, given):
    """JSON labels 0.0 / 1.0 (their text is 0 / 1): --pos-label 1.0 is the number 1.0, as 1 == 1.0 in the
    library (it said "--pos-label '1.0' does not occur")."""
    path = tmp_path / "float_labels.jsonl"
    path.write_text('{"y": 0.0, "p": 0.1}\n{"y": 1.0, "p": 0.9}\n{"y": 0.0, "p": 0.3}\n{"y": 1.0, "p": 0.8}\n')
    assert main(["evaluate", str(path), "--label", "y", "--score", "p", "--pos-label", given, "--json"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert got["input"]["pos_label"] == "1" and got["input"]["label_counts"] == {"0": 2, "1": 2}
    text = tmp_path / "text_labels.jsonl"  # strings are compared as text: "1.0" does not name "1"
    text.write_text('{"y": "0", "p": 0.1}\n{"y": "1", "p": 0.9}\n')
    assert main(["evaluate", str(text), "--label", "y", "--score", "p", "--pos-label", given]) == 2
    assert "does not occur" in capsys.readouterr().err


@pytest.mark.parametrize("engine", [["--stream", "--chunk-rows", "2"], ["--engine", "dask", "--scheduler", "synchronous"]])
@pytest.mark.parametrize("given", ["1.0", "1e0", "1"])
def test_a_positive_label_by_value_is_the_same_label_on_every_engine(tmp_path, capsys, engine, given):
    """``--stream`` and ``--engine dask`` take ``--pos-label 1.0`` as the in-memory reader does (``--stream``
    said "does not occur"): the same JSON output."""
    path = tmp_path / "float_labels.jsonl"
    path.write_text('{"y": 0.0, "p": 0.1}\n{"y": 1.0, "p": 0.9}\n{"y": 0.0, "p": 0.3}\n{"y": 1.0, "p": 0.8}\n'
                    '{"y": 1.0, "p": 0.2}\n{"y": 0.0, "p": 0.7}\n')
    argv = ["evaluate", str(path), "--label", "y", "--score", "p", "--pos-label", given, "--json"]
    assert main(argv) == 0
    memory = json.loads(capsys.readouterr().out)
    assert main(argv + engine) == 0
    other = json.loads(capsys.readouterr().out)
    assert other["input"]["pos_label"] == memory["input"]["pos_label"] == "1"
    for key in ("average_precision", "roc_auc", "n_pos", "n_neg"):
        assert other[key] == memory[key], key
