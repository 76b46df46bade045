"""Slices on the command line and in the pictures: the readers' ``--by`` columns in every format,
``evaluate --by`` / ``compare --by`` / ``report --by``, and :func:`precall.plot.forest`.

References: pandas (what a file holds, per group), scikit-learn (each slice's AP and ROC-AUC),
:mod:`precall.stats` on each slice's own rows (its intervals and tests)."""

from __future__ import annotations

import csv
import io
import json
import warnings
import math
import unicodedata
from pathlib import Path
from typing import Sequence

import numpy as np
import pytest

import oracles
import precall
from precall.cli._format import fmt_p
from precall import readers
from precall.cli import main

pd = pytest.importorskip("pandas")
sklearn_metrics = pytest.importorskip("sklearn.metrics")


def _frame(seed: int = 0, n: int = 1500) -> "pd.DataFrame":
    rng = np.random.default_rng(seed)
    y = (rng.random(n) < 0.3).astype(int)
    df = pd.DataFrame({
        "y": y,
        "p": np.round(rng.random(n) * 0.5 + y * rng.random(n) * 0.5, 3),
        "q": np.round(rng.random(n) * 0.5 + y * rng.random(n) * 0.4, 3),
        "country": rng.choice(["de", "fr", "us", "it", "pl", ""], n),
        "device": rng.choice(["ios", "android", "web"], n),
        "week": rng.integers(1, 13, n),
    })
    df.loc[df.country == "pl", "y"] = 0  # a slice without positives
    return df


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("slices")
    df = _frame()
    out = {"csv": d / "a.csv", "tsv": d / "a.tsv", "jsonl": d / "a.jsonl", "parquet": d / "a.parquet",
           "npz": d / "a.npz", "csv.gz": d / "a.csv.gz"}
    df.to_csv(out["csv"], index=False)
    df.to_csv(out["csv.gz"], index=False)
    df.to_csv(out["tsv"], index=False, sep="\t")
    records = [{"y": int(r.y), "p": float(r.p), "q": float(r.q), "country": r.country or None,
                "device": r.device, "week": int(r.week)} for r in df.itertuples()]
    out["jsonl"].write_text("\n".join(json.dumps(r) for r in records) + "\n")
    pq = df.copy()
    pq["country"] = pq.country.replace("", None)
    pq.to_parquet(out["parquet"])
    np.savez(out["npz"], **{c: df[c].to_numpy().astype(str) if df[c].dtype == object or c in ("country", "device")
                            else df[c].to_numpy() for c in df})
    return out


def _values(column: readers.SliceColumn) -> list:
    return [None if c < 0 else column.texts[c] for c in column.codes.tolist()]


# ---------------------------------------------------------------------------
# readers: the slice columns of every format, missing values as code -1
@pytest.mark.parametrize("kind", ["csv", "csv.gz", "tsv", "jsonl", "parquet", "npz"])
@pytest.mark.parametrize("chunk_rows", [None, 7, 1000])
def test_readers_give_the_slice_columns_pandas_reads(files, kind, chunk_rows):
    df = _frame()
    want = {"country": [None if v == "" else v for v in df.country], "week": [str(v) for v in df.week]}
    kw = {"label": "y", "score_columns": [("p", "--score")], "by": ["country", "week"]}
    if chunk_rows is None:
        cols = readers.read_file(str(files[kind]), **kw)
        parts = [cols]
    else:
        parts = list(readers.iter_file(str(files[kind]), chunk_rows=chunk_rows, **kw))
    for j, name in enumerate(["country", "week"]):
        assert [c.by[j].name for c in parts] == [name] * len(parts)
        assert sum((_values(c.by[j]) for c in parts), []) == want[name]


@pytest.mark.parametrize("route", ["numpy", "exact"])
def test_the_fallback_parsers_agree(files, tmp_path, monkeypatch, route):
    """Without pyarrow (numpy's loadtxt), and the exact csv reader (a quoted field sends the file there)."""
    df = _frame()
    path = files["csv"]
    if route == "numpy":
        monkeypatch.setattr(readers, "_pyarrow", lambda: None)
    else:
        path = tmp_path / "quoted.csv"
        df.assign(device='"' + df.device + '"').to_csv(path, index=False, quoting=csv.QUOTE_NONE, escapechar="\\")
        text = path.read_text().replace('\\"', '"')
        path.write_text(text)
    cols = readers.read_file(str(path), label="y", score_columns=[("p", "--score")], by=["country", "device"])
    assert _values(cols.by[0]) == [None if v == "" else v for v in df.country]
    assert _values(cols.by[1]) == list(df.device)


BAD_READS = [  # (file text, suffix, by, message part)
    ("y,p\n1,0.5\n", ".csv", ["country"], "no column 'country' (given by --by)"),
    ('{"y": 1, "p": 0.5, "c": [1]}\n', ".jsonl", ["c"], "line 1, column 'c': a slice value (--by) must be"),
    ('{"y": 1, "p": 0.5, "c": "a"}\n{"y": 0, "p": 0.2}\n', ".jsonl", ["c"], "line 2: no key 'c' (given by --by)"),
    ("y,p,c\n1,0.5,a\n0,0.3\n", ".csv", ["c"], "line 3: 2 fields, the header has 3, so column 'c' is missing"),
]


@pytest.mark.parametrize("text,suffix,by,message", BAD_READS)
def test_bad_slice_columns_named_by_line_and_column(tmp_path, text, suffix, by, message):
    path = tmp_path / f"bad{suffix}"
    path.write_text(text)
    with pytest.raises(readers.InputError, match=".*" + message.replace("(", r"\(").replace(")", r"\)")
                       .replace("[", r"\[")):
        readers.read_file(str(path), label="y", score_columns=[("p", "--score")], by=by)


def test_parquet_nested_slice_column_refused(tmp_path):
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    path = tmp_path / "nested.parquet"
    pq.write_table(pa.table({"y": [0, 1], "p": [0.1, 0.9], "c": [[1], [2]]}), path)
    with pytest.raises(readers.InputError, match="column 'c' \\(given by --by\\): a slice value must be"):
        readers.read_file(str(path), label="y", score_columns=[("p", "--score")], by=["c"])


def test_parquet_nulls_allowed_in_slice_columns_only(tmp_path):
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    path = tmp_path / "nulls.parquet"
    pq.write_table(pa.table({"y": [0, 1, 1], "p": [0.1, 0.9, 0.4], "c": ["a", None, "a"]}), path)
    cols = readers.read_file(str(path), label="y", score_columns=[("p", "--score")], by=["c"])
    assert _values(cols.by[0]) == ["a", None, "a"]
    with pytest.raises(readers.InputError, match="row 2, column 'c': a null"):
        readers.read_file(str(path), label="c", score_columns=[("p", "--score")], by=["c"])


# ---------------------------------------------------------------------------
# evaluate --by: every slice's numbers, against scikit-learn on pandas' groups
def _run(argv, capsys) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def _json(argv, capsys) -> dict:
    code, out, err = _run([*argv, "--json"], capsys)
    assert code == 0, err
    return json.loads(out)


@pytest.mark.parametrize("kind", ["csv", "parquet", "jsonl", "npz"])
def test_evaluate_by_equals_scikit_learn_per_group(files, capsys, kind):
    df = _frame()
    got = _json(["evaluate", files[kind], "--label", "y", "--score", "p", "--by", "country,device",
                 "--on-undefined", "nan"], capsys)
    rows = {s["slice"]: s for s in got["slices"]}
    groups = df.assign(country=df.country.replace("", None)).groupby(["country", "device"], dropna=False)
    assert len(rows) == groups.ngroups
    for (country, device), g in groups:
        name = f"country={'(missing)' if country is None or country != country else country}, device={device}"
        row = rows[name]
        assert row["n"] == len(g)
        if g.y.any():
            assert row["AP step"] == pytest.approx(sklearn_metrics.average_precision_score(g.y, g.p), abs=1e-12)
            assert row["ROC-AUC"] == pytest.approx(sklearn_metrics.roc_auc_score(g.y, g.p), abs=1e-12)
        else:  # the policy: nan
            assert row["AP step"] is None and row["ROC-AUC"] is None
    assert got["overall"]["AP step"] == pytest.approx(sklearn_metrics.average_precision_score(df.y, df.p), abs=1e-12)


def test_numeric_slice_values_sorted_as_numbers(files, capsys):
    got = _json(["evaluate", files["csv"], "--label", "y", "--score", "p", "--by", "week"], capsys)
    assert [s["slice"] for s in got["slices"]] == [str(w) for w in range(1, 13)]  # not 1, 10, 11, 12, 2, ...


POLICIES = [  # (--on-undefined, exit code, AP of the slice without positives, stderr part)
    ("warn", 0, 0.0, "warning: "),
    ("nan", 0, None, ""),
    ("zero", 0, 0.0, ""),
    ("raise", 2, None, "error: "),
]


@pytest.mark.parametrize("policy,code,ap,stderr", POLICIES)
def test_slice_without_positives_follows_the_policy(files, capsys, policy, code, ap, stderr):
    argv = ["evaluate", files["csv"], "--label", "y", "--score", "p", "--by", "country", "--on-undefined", policy]
    got_code, out, err = _run([*argv, "--json"], capsys)
    assert got_code == code
    if stderr:
        assert stderr in err and "'pl'" in err  # named by its value, not by a code
        assert "on_undefined=" not in err  # the CLI's spelling: --on-undefined
    if code == 2:
        assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
        return
    pl = next(s for s in json.loads(out)["slices"] if s["slice"] == "pl")
    assert pl["AP step"] == ap
    assert "pl" not in json.loads(out)["ranked_worst_first"]


def test_missing_values_are_their_own_slice(files, capsys):
    df = _frame()
    got = _json(["evaluate", files["csv"], "--label", "y", "--score", "p", "--by", "country"], capsys)
    missing = next(s for s in got["slices"] if s["slice"] == "(missing)")
    assert missing["n"] == int((df.country == "").sum()) > 0
    assert sum(s["n"] for s in got["slices"]) == len(df)  # no row dropped


def test_min_support_reports_but_does_not_rank(files, capsys):
    df = _frame()
    sizes = df.groupby(["country", "device"]).size()
    cut = int(sizes.median())
    got = _json(["evaluate", files["csv"], "--label", "y", "--score", "p", "--by", "country,device",
                 "--min-support", cut], capsys)
    small = {s["slice"] for s in got["slices"] if s["n"] < cut}
    assert small and not small & set(got["ranked_worst_first"])
    assert len(got["slices"]) == len(sizes)
    ranked_ap = [next(s["AP step"] for s in got["slices"] if s["slice"] == n) for n in got["ranked_worst_first"]]
    assert ranked_ap == sorted(ranked_ap)  # worst first


@pytest.mark.parametrize("extra", [[], ["--top", "2"], ["--full"], ["--ci", "--resamples", "50"],
                                   ["--by", "week"], ["--digits", "17"], ["--stream", "--ci", "--resamples", "50"]])
def test_text_fits_80_columns(files, capsys, extra):
    code, out, err = _run(["evaluate", files["csv"], "--label", "y", "--score", "p", "--by", "country,device",
                           *extra], capsys)
    assert code == 0, err
    assert max(len(line) for line in out.splitlines()) <= 80


def test_long_slice_names_cut_in_text_whole_in_json(tmp_path, capsys):
    df = _frame(3, 300).assign(name=lambda d: np.where(d.index % 2, "x" * 200, "short"))
    path = tmp_path / "long.csv"
    df.to_csv(path, index=False)
    code, out, _ = _run(["evaluate", path, "--label", "y", "--score", "p", "--by", "name"], capsys)
    assert code == 0 and max(len(line) for line in out.splitlines()) <= 80
    got = _json(["evaluate", path, "--label", "y", "--score", "p", "--by", "name"], capsys)
    assert "x" * 200 in {s["slice"] for s in got["slices"]}


def test_many_distinct_values_stay_bounded(tmp_path, capsys):
    n = 200_000
    rng = np.random.default_rng(5)
    path = tmp_path / "many.parquet"
    pd.DataFrame({"y": rng.integers(0, 2, n), "p": rng.random(n).round(3), "id": np.arange(n) // 2}).to_parquet(path)
    code, out, err = _run(["evaluate", path, "--label", "y", "--score", "p", "--by", "id", "--top", "4"], capsys)
    assert code == 0
    lines = out.splitlines()
    assert len(lines) < 30 and max(len(x) for x in lines) <= 80
    assert "more" in out and "100000 by id" in out
    assert len(err.splitlines()) <= 2 and all(len(x) < 1000 for x in err.splitlines())  # a few names, a count
    code, out, _ = _run(["evaluate", path, "--label", "y", "--score", "p", "--by", "id", "--csv"], capsys)
    assert code == 0 and len(out.splitlines()) == n // 2 + 2  # header, overall, every slice


def test_csv_and_json_agree(files, capsys):
    got = _json(["evaluate", files["csv"], "--label", "y", "--score", "p", "--by", "device"], capsys)
    code, out, _ = _run(["evaluate", files["csv"], "--label", "y", "--score", "p", "--by", "device", "--csv"],
                        capsys)
    rows = list(csv.DictReader(io.StringIO(out)))
    assert [r["slice"] for r in rows] == ["overall"] + [s["slice"] for s in got["slices"]]
    for r, s in zip(rows[1:], got["slices"]):
        assert float(r["AP step"]) == s["AP step"] and float(r["ROC-AUC"]) == s["ROC-AUC"]


@pytest.mark.parametrize("kind", ["csv", "parquet", "jsonl"])
def test_json_and_csv_carry_each_by_columns_value(files, capsys, kind):
    """``--json``: each slice's ``by_values``, the file's value in each ``--by`` column (its text; null
    for missing); ``--csv``: a column of each before the name: the groups of pandas, in their order."""
    df = _frame()
    cols = ["country", "week", "device"]
    argv = ["evaluate", files[kind], "--label", "y", "--score", "p", "--by", ",".join(cols)]
    got = _json(argv, capsys)
    sizes = df.assign(country=df.country.replace("", None)).groupby(cols, dropna=False, sort=True).size()
    want = [{"country": None if pd.isna(c) else c, "week": str(w), "device": d} for c, w, d in sizes.index]
    assert [s["by_values"] for s in got["slices"]] == want
    assert [s["n"] for s in got["slices"]] == sizes.tolist()
    code, out, _ = _run([*argv, "--csv"], capsys)
    assert code == 0
    table = pd.read_csv(io.StringIO(out), dtype=str, keep_default_na=False)
    assert list(table.columns[:5]) == [*cols, "slice", "n"]
    assert table.iloc[0][cols].tolist() == ["", "", ""] and table.iloc[0]["slice"] == "overall"
    assert table[cols].iloc[1:].to_dict("records") == [{k: v or "" for k, v in row.items()} for row in want]
    assert table["slice"].iloc[1:].tolist() == [s["slice"] for s in got["slices"]]
    typed = pd.read_csv(io.StringIO(out), skiprows=[1], index_col=cols)  # pandas reads the slices back
    assert [(None if pd.isna(c) else c, w, d) for c, w, d in typed.index] == \
        [(None if pd.isna(c) else c, int(w), d) for c, w, d in sizes.index]


def test_a_by_column_named_n_or_slice(tmp_path, capsys):
    """A ``--by`` column named like a column of the output is headed ``by NAME`` in the CSV; its
    values are in ``by_values`` under its own name."""
    path = tmp_path / "named.csv"
    path.write_text("y,p,n,slice\n" + "\n".join(f"{i % 2},{(i * 7 % 10) / 10},{i % 3},{'ab'[i % 2]}"
                                                  for i in range(60)) + "\n")
    argv = ["evaluate", str(path), "--label", "y", "--score", "p", "--by", "n,slice", "--on-undefined", "nan"]
    code, out, _ = _run([*argv, "--csv"], capsys)
    assert code == 0
    rows = list(csv.DictReader(io.StringIO(out)))
    assert out.splitlines()[0].startswith("by n,by slice,slice,n,n_pos,")
    assert [(r["by n"], r["by slice"], r["slice"], r["n"]) for r in rows[:3]] == [
        ("", "", "overall", "60"), ("0", "a", "n=0, slice=a", "10"), ("0", "b", "n=0, slice=b", "10")]
    got = _json(argv, capsys)
    assert got["slices"][0]["by_values"] == {"n": "0", "slice": "a"} and got["slices"][0]["n"] == 10


def test_ci_intervals_are_each_slices_own(files, capsys):
    df = _frame()
    got = _json(["evaluate", files["csv"], "--label", "y", "--score", "p", "--by", "device", "--ci",
                 "--resamples", "200"], capsys)
    iv = got["intervals"]["slices"]
    assert set(iv) == {s["slice"] for s in got["slices"]}
    for device, g in df.groupby("device"):
        delong = precall.stats.roc_auc_ci(g.y.to_numpy(), g.p.to_numpy())
        assert iv[device]["roc_auc"]["low"] == pytest.approx(delong.low, abs=1e-12)
        assert iv[device]["roc_auc"]["high"] == pytest.approx(delong.high, abs=1e-12)
        ap = next(s["AP step"] for s in got["slices"] if s["slice"] == device)
        boot = precall.stats.bootstrap_ci(
            lambda y, s: sklearn_metrics.average_precision_score(y, s), g.y.to_numpy(), g.p.to_numpy(),
            n_resamples=200, random_state=0)
        a = iv[device]["average_precision"]["step"]
        assert a["low"] <= ap <= a["high"]
        # the bootstrap's spread: the same scale as an independent one of scikit-learn's AP
        assert (a["high"] - a["low"]) == pytest.approx(boot.high - boot.low, rel=0.5)
    overall = precall.stats.roc_auc_ci(df.y.to_numpy(), df.p.to_numpy())
    assert got["intervals"]["overall"]["roc_auc"]["low"] == pytest.approx(overall.low, abs=1e-12)


def _json_text_before(value, level: int = 0) -> str:
    """The commands' JSON writer as it was before ``--json`` was written a block at a time (every
    slice's dict and the whole text in memory): the oracle of the bytes."""
    pad, inner = "  " * level, "  " * (level + 1)
    if isinstance(value, dict) and value:
        items = (f"{inner}{json.dumps(str(k))}: {_json_text_before(v, level + 1)}" for k, v in value.items())
        return "{\n" + ",\n".join(items) + f"\n{pad}}}"
    if isinstance(value, (list, tuple)) and value:
        if len(value) > 1000:
            items = (inner + json.dumps(v, allow_nan=False, separators=(", ", ": ")) for v in value)
        else:
            items = (inner + _json_text_before(v, level + 1) for v in value)
        return "[\n" + ",\n".join(items) + f"\n{pad}]"
    return json.dumps(value, allow_nan=False)


@pytest.fixture
def small_blocks(monkeypatch):
    """Blocks of 64 slices (not 10,000): a few hundred slices are written in several."""
    import precall.cli._format
    import precall.cli._slices
    import precall.slices

    for module in (precall.slices, precall.cli._format, precall.cli._slices):
        monkeypatch.setattr(module, "BLOCK", 64)


AWKWARD = ['say "hi"', "back\\slash", "caf\u00e9", "\u6771\u4eac", "tab\there", "e\x1b[2J", "", "overall",
           "(missing)", "comma,semi;", "emoji \U0001F600", "\u202eevil", "1", "1.0"]


def _awkward_file(path: Path, n_slices: int, seed: int = 3, values: Sequence[str] = AWKWARD) -> Path:
    """About ``n_slices`` slices of two columns: names with quotes, backslashes, wide and control
    characters, the words ``overall`` and ``(missing)``, and missing values (empty fields) in both
    (the first column's ``values``)."""
    rng = np.random.default_rng(seed)
    n = 4 * n_slices
    a = rng.choice(values, n)
    b = np.where(rng.random(n) < 0.05, "", rng.integers(0, n_slices // len(values) + 1, n).astype(str))
    y = (rng.random(n) < 0.4).astype(int)
    p = np.round(rng.random(n) * 0.6 + 0.4 * y * rng.random(n), 3)
    with open(path, "w", newline="", encoding="utf-8") as f:
        csv.writer(f, lineterminator="\n").writerows([["y", "p", "a", "b"], *zip(y, p, a, b)])
    return path


def _report_of(monkeypatch, name: str) -> list:
    """The reports the command hands to ``precall.cli.evaluate.<name>`` (``slices_json``, ``slices_csv``)."""
    import precall.cli.evaluate as evaluate_cli

    seen, real = [], getattr(evaluate_cli, name)
    monkeypatch.setattr(evaluate_cli, name, lambda report: seen.append(report) or real(report))
    return seen


@pytest.mark.parametrize("n_slices", [300, 2500])  # the slices' list as json.dumps(indent=2); one entry a line
def test_json_and_csv_written_a_block_at_a_time_are_the_whole_texts(tmp_path, capsys, monkeypatch, small_blocks,
                                                                    n_slices):
    """``--json`` and ``--csv`` are written a block of slices at a time: the bytes of the text made whole
    from every slice's dict (the writer before) and from every row, and ``json.loads`` gives the slices
    back; awkward names (quotes, unicode, escapes), missing values, two ``--by`` columns."""
    from precall.cli._format import json_safe, render_table

    path = _awkward_file(tmp_path / "awkward.csv", n_slices)
    argv = ["evaluate", path, "--label", "y", "--score", "p", "--by", "a,b", "--on-undefined", "nan"]
    seen = _report_of(monkeypatch, "slices_json")
    code, out, err = _run([*argv, "--json"], capsys)
    assert code == 0, err
    (report,) = seen
    result = report.result
    assert 64 * 3 < len(result.names) and (len(result.names) > 1000) == (n_slices > 1000)
    whole = {"input": json_safe(dict(report.input)), **result.to_dict(), "warnings": list(report.warnings)}
    assert out == _json_text_before(whole) + "\n"
    got = json.loads(out)
    assert got == whole and [s["slice"] for s in got["slices"]] == list(result.names)
    assert {s["by_values"]["a"] for s in got["slices"]} == {v or None for v in AWKWARD}

    seen = _report_of(monkeypatch, "slices_csv")
    code, out, err = _run([*argv, "--csv"], capsys)
    assert code == 0, err
    header, body = seen[0].result.csv_rows()
    assert out == "\n".join(render_table(header, body, style="csv")) + "\n"
    rows = list(csv.reader(io.StringIO(out)))
    # data: the names as they are (the library's to_csv), not as visible() shows them on a terminal
    assert len(rows) == len(result.names) + 2 and [r[2] for r in rows[2:]] == list(result.names)
    assert out == result.to_csv()


def test_csv_intervals_follow_their_slices_across_blocks(tmp_path, capsys, small_blocks):
    """``--ci --csv`` written a block at a time: each row's interval cells are its own slice's (the
    ``--json`` intervals), the overall row's the overall interval, an unranked slice's empty."""
    path = _awkward_file(tmp_path / "awkward.csv", 150, seed=4)
    argv = ["evaluate", path, "--label", "y", "--score", "p", "--by", "a,b", "--on-undefined", "nan", "--ci",
            "--resamples", "20"]
    got = _json(argv, capsys)
    code, out, err = _run([*argv, "--csv"], capsys)
    assert code == 0, err
    rows = list(csv.DictReader(io.StringIO(out)))
    assert len(rows) == len(got["slices"]) + 1 > 64 * 2
    intervals = [got["intervals"]["overall"], *(got["intervals"]["slices"].get(s["slice"]) for s in got["slices"])]
    for row, iv in zip(rows, intervals):
        cells = [row[k] for k in ("AP step low", "AP step high", "ROC-AUC low", "ROC-AUC high")]
        if iv is None:
            assert cells == ["", "", "", ""], row["slice"]
            continue
        want = [iv["average_precision"]["step"]["low"], iv["average_precision"]["step"]["high"],
                iv["roc_auc"]["low"], iv["roc_auc"]["high"]]
        assert [None if c == "" else float(c) for c in cells] == want, row["slice"]  # NaN: empty (JSON: null)
    assert all(any(iv is not None for iv in intervals[k:k + 64]) for k in range(0, len(intervals), 64))


#: names the text table cuts to 28 terminal columns: wide characters (two columns each, one cut between
#: them), a control and a bidi character past the cut, trailing spaces, a combining mark
LONG_NAMES = ["\u6771\u4eac\u90fd\u306e\u5e97" * 4, "x" * 40 + "\x1b[2J", "trailing  ", "\u202b" + "y" * 30,
              "cafe\u0301 " * 6, "\u5927\u962a \"quoted\" \u5927\u962a"]


def _slices_text_before(report, *, top: int, full: bool, digits: int, wide: bool, summary: bool = True) -> str:
    """``slices_text`` as it was before ``--full`` was written a block at a time (every shown row's
    cells from its slice's Evaluation, ``r[key]``, then ``render_table`` of every row): the oracle."""
    from precall.cli._format import fit, fmt, fmt_count, render_table
    from precall.cli._intervals import drawn_as
    from precall.cli._slices import _interval_cell, rest_of_line, shown, slice_legend, slice_names_shown

    r = report.result
    ranked = r.ranked
    unranked = len(r.names) - ranked.size
    given = report.input
    lines = [
        f"file        {given['file']} ({given['n_rows']} row{'' if given['n_rows'] == 1 else 's'})",
        f"label       column {given['label_column']!r}: positive {given['pos_label']!r}",
        f"score       column {given['score_column']!r}"
        + (f"; weight column {given['weight_column']!r}" if given["weight_column"] else ""),
        f"slices      {len(r.names)} by {', '.join(r.columns)}; {ranked.size} ranked, worst first by AP "
        f"{r.rank_by}" + (f"; {unranked} not ranked (no positives, or fewer than --min-support "
                          f"{r.min_support} rows)" if unranked else ""),
    ]
    iv = report.intervals
    if iv is not None and report.options is not None:
        some = next((v for v in iv.values() if v is not None), None)
        drawn = drawn_as(some.resample, some.n_blocks) if some is not None else ""
        lines.append("intervals   " + report.options.describe(given["weight_column"] is not None, drawn)
                     + "; each slice resampled on its own rows, its classes together (all rows: by class)")
    if not summary:
        lines = lines[4:]
    header = ["slice", "n", "n_pos", "prevalence", f"AP {r.rank_by}"]
    header += [f"{report.options.level:.0%} CI"] if iv is not None and report.options else []
    header += ["ROC-AUC"] + ([f"{report.options.level:.0%} CI"] if iv is not None and report.options else [])
    header += ["best F1"]

    def row(i: int) -> list:
        ev = r.overall if i < 0 else r[r.keys[i]]
        cells = ["overall" if i < 0 else i, str(ev.n_samples), fmt_count(ev.n_pos),
                 fmt(ev.prevalence, digits), fmt(ev.average_precision[r.rank_by], digits)]
        if iv is not None:
            cells.append(_interval_cell(iv.get(i), "ap", digits))
        cells.append(fmt(ev.roc_auc, digits))
        if iv is not None:
            cells.append(_interval_cell(iv.get(i), "roc", digits))
        cells.append(fmt(ev.best_f1.f1, digits) if ev.best_f1 is not None else "-")
        return cells

    picked = shown(r, top, full)
    rest = ranked.size - 2 * top
    body = [row(-1)]
    for i in picked:
        body.append(row(i) if i is not None else [f"... {rest} more", *[""] * (len(header) - 1)])
    at = [i for i in picked if i is not None]  # the names shortened to fit beside the other columns
    kept = [j for j, h in enumerate(header) if not h.endswith(" CI")]  # the intervals' columns aside
    names, renamed = slice_names_shown([r.names[i] for i in at], lambda: rest_of_line(
        [header[j] for j in kept], [[row[j] for j in kept] for row in body]), wide=wide)
    name_of = dict(zip(at, names))
    body = [[name_of[row[0]] if isinstance(row[0], int) else row[0], *row[1:]] for row in body]
    out = [*fit(lines, wide=wide), "", *render_table(header, body, wide=wide), *slice_legend(renamed)]
    notes = []
    if not full and (None in picked or unranked):
        notes.append(f"shown: the {min(top, ranked.size)} worst and best ranked slices"
                     + (f"; {unranked} slice{'' if unranked == 1 else 's'} not ranked "
                        f"{'is' if unranked == 1 else 'are'} not shown" if unranked else "")
                     + "; --full for every slice, --json or --csv for every number of every slice")
    return "\n".join(out + ([""] + fit(notes, wide=wide) if notes else []))


@pytest.fixture
def tiny_blocks(monkeypatch):
    """Blocks of 7 slices (not 10,000): every block boundary is crossed many times."""
    import precall.cli._format
    import precall.cli._slices
    import precall.slices

    for module in (precall.slices, precall.cli._format, precall.cli._slices):
        monkeypatch.setattr(module, "BLOCK", 7)


def _texts_of(monkeypatch) -> list:
    """The reports and options the command hands to ``precall.cli.evaluate.slices_text``."""
    import precall.cli.evaluate as evaluate_cli

    seen, real = [], evaluate_cli.slices_text
    monkeypatch.setattr(evaluate_cli, "slices_text",
                        lambda report, **kw: seen.append((report, kw)) or real(report, **kw))
    return seen


def _columns(text: str) -> int:
    """Terminal columns, independently of the code under test: two for a wide character, none for a
    combining mark."""
    return sum(0 if unicodedata.combining(c) else 2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


@pytest.mark.parametrize("extra,blocks", [(["--full"], 1), (["--full", "--wide"], 1), (["--full", "--digits", "12"], 2),
                                          (["--full", "--digits", "2"], 1), ([], 1),
                                          (["--top", "3", "--min-support", "9", "--wide"], 1)])
def test_full_text_written_a_block_at_a_time_is_the_whole_table(tmp_path, capsys, monkeypatch, tiny_blocks, extra,
                                                               blocks):
    """The text table (``--full``: every slice) is written a block of 7 slices at a time, its columns'
    widths from a first pass over the rows: the bytes of the whole table made at once from every slice's
    Evaluation, split into column blocks (every row of one, then the next) to fit 80 columns unless
    ``--wide``; thousands of slices of two columns with quotes, wide (CJK) and control and bidi
    characters, long names shortened (a legend of their full names below), missing values."""
    from precall.cli._slices import slices_text

    path = _awkward_file(tmp_path / "awkward.csv", 2500, values=AWKWARD + LONG_NAMES)
    seen = _texts_of(monkeypatch)
    code, out, err = _run(["evaluate", path, "--label", "y", "--score", "p", "--by", "a,b", *extra], capsys)
    assert code == 0, err
    ((report, options),) = seen
    assert out == _slices_text_before(report, **options) + "\n"
    names = report.result.names
    assert len(names) > 7 * 300 and any(n.startswith("a=\u6771") for n in names) and "b=(missing)" in " ".join(names)
    lines = out.splitlines()
    headers = [i for i, line in enumerate(lines) if line.startswith("slice ")]
    assert len(headers) == blocks
    end = lines.index("slices:") - 1 if "slices:" in lines else len(lines)  # the legend of the names shortened
    assert ("slices:" in lines) == ("--full" in extra and "--wide" not in extra)
    if "--full" in extra:  # each column block: its header, the overall row, every slice
        assert [b - a - 2 for a, b in zip(headers, [*headers[1:], end + 1])] == [len(names) + 1] * blocks
        pieces = list(slices_text(report, **options))  # a piece a block of rows: never every row's text
        assert "".join(pieces) + "\n" == out and len(pieces) > blocks * len(names) / 7
        assert max(piece.count("\n") for piece in pieces) <= 7 + 2
    assert max(map(_columns, lines)) <= 80 or "--wide" in extra


def test_full_text_with_intervals_written_a_block_at_a_time(tmp_path, capsys, monkeypatch, tiny_blocks):
    """``--full --ci``: the estimates (flushed first), then every ranked slice's intervals, both tables
    written a block of 7 slices at a time as the whole tables, split into column blocks to fit 80 columns."""
    path = _awkward_file(tmp_path / "awkward.csv", 150, seed=4, values=AWKWARD + LONG_NAMES)
    seen = _texts_of(monkeypatch)
    code, out, err = _run(["evaluate", path, "--label", "y", "--score", "p", "--by", "a,b", "--full", "--ci",
                           "--resamples", "20"], capsys)
    assert code == 0, err
    (estimates, first), (intervals, second) = seen
    assert intervals.intervals is not None and not second["summary"]
    assert out == (_slices_text_before(estimates, **first) + "\n\n" + _slices_text_before(intervals, **second)
                   + "\n")
    assert max(map(_columns, out.splitlines())) <= 80 and out.count("\nslice ") >= 3


BAD_CLI = [
    (["--score", "p", "--score", "q", "--by", "country"], "compare models per slice with precall compare --by"),
    (["--class-columns", "p,q", "--by", "country"], "--by goes with one --score"),
    (["--score", "p", "--by", "country", "--stream", "--ties", "stable"], "drop --ties stable"),
    (["--score", "p", "--by", "country", "--stream", "--ci", "--ci-method", "bca"],
     "needs --ci-method percentile (--ci-method bca leaves rows out): evaluate in memory (drop --stream)"),
    (["--score", "p", "--by", "country", "--engine", "dask", "--ci", "--weight", "q"],
     "needs no --weight (the weighted bootstrap resamples rows): evaluate in memory (drop --engine dask)"),
    (["--score", "p", "--by", "country", "--engine", "spark", "--ties", "stable"], "drop --ties stable"),
    (["--score", "p", "--by", "country,"], "an empty column name"),
    (["--score", "p", "--by", "country,country"], "given twice"),
    (["--score", "p", "--by", "nope"], "no column 'nope' (given by --by)"),
    (["--score", "p", "--by", "country", "--min-support", "-1"], "--min-support"),
    (["--score", "p", "--by", "country", "--top", "0"], "--top"),
    (["--score", "p", "--by", "country", "--top", "nan"], "--top"),
    (["--score", "p", "--by", "country", "--prevalence", "0.1"], "drop --prevalence"),
]


@pytest.mark.parametrize("argv,message", BAD_CLI)
def test_bad_options_one_line_exit_2(files, capsys, argv, message):
    code, out, err = _run(["evaluate", files["csv"], "--label", "y", *argv], capsys)
    assert code == 2
    assert message in err and "Traceback" not in err
    assert len([x for x in err.splitlines() if "error: " in x]) == 1


ENGINES = [["--stream", "--chunk-rows", "100"], ["--engine", "dask", "--scheduler", "synchronous"]]


@pytest.mark.parametrize("engine", ENGINES, ids=["stream", "dask"])
@pytest.mark.parametrize("kind", ["csv", "parquet"])
def test_engines_name_a_missing_slice_column(files, capsys, engine, kind):
    if "dask" in engine:
        pytest.importorskip("dask.dataframe")
    code, out, err = _run(["evaluate", files[kind], "--label", "y", "--score", "p", "--by", "device,nope", *engine],
                          capsys)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith(f"precall: error: {files[kind]}: ")
    assert "no column 'nope' (given by --by)" in err


@pytest.mark.parametrize("engine", ENGINES, ids=["stream", "dask"])
@pytest.mark.parametrize("line,column,message", [
    ("1,abc,de,ios,3", "column 'p'", "the score must be a number; got 'abc'"),
    ("1,0.5,de", None, "3 fields, the header has"),
    (",0.5,de,ios,3", "column 'y'", "label"),
])
def test_engines_name_a_bad_row_by_line_and_column(tmp_path, capsys, engine, line, column, message):
    """A bad row far into the file (after the first chunk): the readers' one-line error with the
    file, the line and the column, whichever engine reads the file."""
    if "dask" in engine:
        pytest.importorskip("dask.dataframe")
    rows = ["y,p,country,device,week"] + [f"{i % 2},{(i * 7 % 10) / 10},de,ios,{i % 3}" for i in range(300)]
    rows.insert(251, line)  # line 252 of the file
    path = tmp_path / "bad.csv"
    path.write_text("\n".join(rows) + "\n")
    code, out, err = _run(["evaluate", path, "--label", "y", "--score", "p", "--by", "country", *engine], capsys)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith(f"precall: error: {path}: line 252")
    assert message in err and (column is None or column in err)


@pytest.mark.parametrize("engine", ENGINES, ids=["stream", "dask"])
def test_engines_ci_needs_two_labels(tmp_path, capsys, engine):
    """Three labels make three bootstrap strata in memory, which a count table of positives and
    negatives cannot reproduce: refused in one line; without --ci the slices are evaluated."""
    if "dask" in engine:
        pytest.importorskip("dask.dataframe")
    path = tmp_path / "three.csv"
    path.write_text("y,p,g\n" + "\n".join(f"{'abc'[i % 3]},{(i * 7 % 10) / 10},{i % 2}" for i in range(60)) + "\n")
    argv = ["evaluate", path, "--label", "y", "--score", "p", "--pos-label", "a", "--by", "g", *engine]
    code, out, err = _run([*argv, "--ci"], capsys)
    assert code == 2 and "needs two labels" in err and err.count("\n") == 1
    assert _json(argv, capsys)["slices"] == _json(argv[:-len(engine)], capsys)["slices"]


# ---------------------------------------------------------------------------
# compare --by: the paired tests on each slice's rows
def test_compare_by_tests_each_slice_on_its_rows(files, capsys):
    df = _frame()
    got = _json(["compare", files["csv"], "--label", "y", "--score", "p", "--score", "q", "--by", "device",
                 "--resamples", "100"], capsys)
    assert set(got["slices"]) == {"ios", "android", "web"}  # all rows apart: a slice value cannot be taken for it
    assert all(got["slices"][d]["by_values"] == {"device": d} for d in got["slices"])
    for device, g in [("overall", df), *df.groupby("device")]:
        want = precall.stats.roc_auc_test(g.y.to_numpy(), g.p.to_numpy(), g.q.to_numpy())
        tests = (got["overall"] if device == "overall" else got["slices"][device])["tests"]
        delong = next(t for t in tests if t["method"] == "delong")
        assert delong["difference"] == pytest.approx(want.difference, abs=1e-12)
        assert delong["p_value"] == pytest.approx(want.p_value, rel=1e-9)
    # Holm across the slices (not the overall row), one family per metric and test
    slices = list(got["slices"])
    for k, test in enumerate(got["overall"]["tests"]):
        assert test["p_holm"] is None
        p = [got["slices"][name]["tests"][k]["p_value"] for name in slices]
        m = len(p)
        order = np.argsort(p, kind="stable")
        expected = np.maximum.accumulate([min(1.0, (m - j) * p[i]) for j, i in enumerate(order)])
        for j, i in enumerate(order):
            assert got["slices"][slices[i]]["tests"][k]["p_holm"] == pytest.approx(expected[j], rel=1e-12)


def test_compare_by_text_shows_the_json_holm_p_values(tmp_path, capsys):
    """The text shows the --top worst and best slices, each with the Holm p-value of the family of every
    ranked slice: the number --json gives for it (not one adjusted among the shown slices only).  A slice
    value "overall" is a slice like any other (named 'overall', quoted)."""
    rng = np.random.default_rng(3)
    n = 4000
    y = (rng.random(n) < 0.4).astype(int)
    a = np.round(rng.random(n) + 0.5 * y, 2)
    b = np.round(0.6 * a + 0.8 * rng.random(n) + 0.15 * y, 2)
    g = np.where(rng.integers(0, 12, n) == 0, "overall", rng.integers(0, 12, n).astype(str))
    path = tmp_path / "h.csv"
    path.write_text("y,a,b,g\n" + "\n".join(f"{u},{v},{w},{k}" for u, v, w, k in zip(y, a, b, g)) + "\n")
    argv = ["compare", str(path), "--label", "y", "--score", "a", "--score", "b", "--by", "g", "--metric",
            "roc_auc", "--resamples", "50", "--top", "2"]
    got = _json(argv, capsys)
    assert "'overall'" in got["slices"] and got["slices"]["'overall'"]["tests"][0]["p_holm"] is not None
    assert got["overall"]["tests"][0]["p_holm"] is None
    code, out, _ = _run([*argv, "--wide"], capsys)
    assert code == 0
    rows = [line.split() for line in out.splitlines() if "DeLong" in line.split()[2:3]]
    assert len(rows) == 5  # all rows, the 2 worst and the 2 best
    for row in rows[1:]:
        test = next(t for t in got["slices"][row[0]]["tests"] if t["method"] == "delong")
        assert row[-1] == fmt_p(test["p_holm"]), row


def test_compare_by_text_fits_and_tests_ranked_slices_only(files, capsys):
    code, out, err = _run(["compare", files["csv"], "--label", "y", "--score", "p", "--score", "q", "--by",
                           "country", "--resamples", "50", "--full"], capsys)
    assert code == 0, err
    assert max(len(x) for x in out.splitlines()) <= 80
    tests, untested = out.split("\nnot tested: ")
    assert "\npl " not in tests  # no positives: not ranked, no test; listed with the reason
    assert [line.split() for line in untested.splitlines() if line.startswith("pl ")] == [
        ["pl", str(int((_frame().country == "pl").sum())), "0", "no", "positives"]]
    assert "every ranked slice" in " ".join(out.split())
    assert out.count("\nde ") % 3 == 0 and "\nde " in out  # DeLong, bootstrap ROC-AUC and AP, in each block


def _untested_file(path: Path) -> "pd.DataFrame":
    """Slices of every kind compare --by cannot test: one without positives, one of positives only, and
    (with --min-support) small ones of both classes."""
    rng = np.random.default_rng(11)
    n = 1600
    g = rng.choice(["big", "mid", "small", "nopos", "allpos", "tiny"], n, p=[0.34, 0.24, 0.15, 0.12, 0.1, 0.05])
    y = (rng.random(n) < 0.45).astype(int)
    y[g == "nopos"], y[g == "allpos"] = 0, 1
    df = pd.DataFrame({"y": y, "a": np.round(rng.random(n) * 0.6 + 0.4 * y * rng.random(n), 2),
                       "b": np.round(rng.random(n) * 0.6 + 0.3 * y * rng.random(n), 2), "g": g})
    df.to_csv(path, index=False)
    return df


@pytest.mark.parametrize("support", ["none", "mid"])
def test_compare_by_accounts_for_every_slice_it_does_not_test(tmp_path, capsys, support):
    """``compare --by``: every slice is tested or listed under ``not_tested`` with the reason (JSON), counted
    in the text (each listed with ``--full``), and the slices of one class named in one warning line: no
    slice vanishes (a slice without positives, of positives only, below --min-support).  The reference:
    each group's counts from pandas."""
    df = _untested_file(tmp_path / "u.csv")
    groups = df.groupby("g").y.agg(["size", "sum"])
    cut = 0 if support == "none" else int(groups.loc["small", "size"]) + 1  # small and tiny below it
    want = {}
    for name, (size, pos) in groups.iterrows():
        reasons = (["no positives"] if pos == 0 else []) + ([f"fewer than {cut} rows (--min-support)"]
                                                            if size < cut else [])
        want[name] = "; ".join(reasons or (["no negatives"] if pos == size else []))
    assert sum(1 for r in want.values() if r) >= (2 if cut == 0 else 4)
    argv = ["compare", tmp_path / "u.csv", "--label", "y", "--score", "a", "--score", "b", "--by", "g",
            "--resamples", "30", "--min-support", cut]
    code, out, err = _run([*argv, "--json"], capsys)
    assert code == 0, err
    got = json.loads(out)
    assert set(got["slices"]) == {k for k, r in want.items() if not r}
    assert {k: v["reason"] for k, v in got["not_tested"].items()} == {k: r for k, r in want.items() if r}
    assert set(got["slices"]) | set(got["not_tested"]) == set(groups.index) and got["n_slices"] == len(groups)
    for name, entry in got["not_tested"].items():
        assert (entry["n"], entry["n_pos"], entry["by_values"]) == (groups.loc[name, "size"],
                                                                     groups.loc[name, "sum"], {"g": name})
    one_class = [k for k, r in want.items() if r.startswith(("no positives", "no negatives"))]
    lines = err.strip().splitlines()
    assert all(line.startswith("precall: warning: ") for line in lines) and len(lines) == 1, err
    assert all(f"'{k}'" in lines[0] for k in one_class) and got["warnings"] == [lines[0].split(": ", 3)[3]]
    # the text: counted by default, each listed with its reason with --full; the same warning
    k = sum(1 for r in want.values() if r)
    code, text, err2 = _run(argv, capsys)
    assert code == 0 and err2 == err and max(len(x) for x in text.splitlines()) <= 80
    assert f"not tested: {k} slices (" in text and "--full or --json lists each with the reason" in text
    code, text, _ = _run([*argv, "--full"], capsys)
    assert code == 0 and max(len(x) for x in text.splitlines()) <= 80
    tables, listed = text.split(f"\nnot tested: {k} slices\n")
    rows = {line.split()[0]: line.split(None, 3) for line in listed.splitlines()[1:k + 1]}
    assert {name: r[3] for name, r in rows.items()} == {name: r for name, r in want.items() if r}
    assert all(f"\n{name} " not in tables for name in rows)  # no test rows for them


def test_compare_by_tests_what_evaluate_by_ranks(tmp_path, capsys):
    """The slices compare --by tests are the ones evaluate --by ranks (less those of one class), and both
    give every slice: evaluate in its slices, compare in its slices and not_tested."""
    _untested_file(tmp_path / "u.csv")
    common = [tmp_path / "u.csv", "--label", "y", "--score", "a", "--by", "g", "--min-support", "150"]
    ev = _json(["evaluate", *common], capsys)
    cmp = _json(["compare", *common, "--score", "b", "--resamples", "20"], capsys)
    negatives = {s["slice"] for s in ev["slices"] if s["n"] > s["n_pos"]}
    assert set(cmp["slices"]) == set(ev["ranked_worst_first"]) & negatives
    assert set(cmp["slices"]) | set(cmp["not_tested"]) == {s["slice"] for s in ev["slices"]}
    assert cmp["ranked_worst_first"] == ev["ranked_worst_first"]


HOSTILE_VALUES = ["a\nb", "a\u240ab", "t\tab", "e\x1b[2Jc", "r\u202elo", 'q"uote,comma']


def _hostile_slices(path: Path) -> tuple[list[int], list[float], list[str]]:
    rng = np.random.default_rng(5)
    n = 240
    g = [HOSTILE_VALUES[i % len(HOSTILE_VALUES)] for i in range(n)]
    y = (rng.random(n) < 0.4).astype(int).tolist()
    p = [round(float(v), 3) for v in rng.random(n) * 0.6 + 0.4 * np.array(y)]
    with open(path, "w", newline="", encoding="utf-8") as f:
        csv.writer(f, lineterminator="\n").writerows([["y", "p", "g"], *zip(y, p, g)])
    return y, p, g


@pytest.mark.parametrize("engine", [[], ["--stream"], ["--ci", "--resamples", "20"], "blocks of 2"])
def test_evaluate_by_csv_carries_the_slice_values_as_they_are(tmp_path, capsys, monkeypatch, engine):
    """``evaluate --by --csv`` is data: each slice's value as it is in the file (a line feed, a tab, an
    escape, a bidi control), quoted by the csv module, so that "a\\nb" and "a\u240ab" stay two slices:
    the library's ``to_csv`` of the same columns, byte for byte (with --ci: its cells before the
    intervals'; written 2 slices at a time too), and the values ``--json`` gives."""
    if engine == "blocks of 2":
        from precall.cli import _slices

        monkeypatch.setattr(_slices, "BLOCK", 2)
        engine = []
    y, p, g = _hostile_slices(tmp_path / "h.csv")
    argv = ["evaluate", tmp_path / "h.csv", "--label", "y", "--score", "p", "--by", "g", *engine]
    code, out, err = _run([*argv, "--csv"], capsys)
    assert code == 0, err
    want = precall.evaluate(np.array(y), np.array(p), by={"g": g}).to_csv()
    rows = list(csv.reader(io.StringIO(out)))
    assert sorted(r[0] for r in rows[2:]) == sorted(HOSTILE_VALUES)  # six slices, six values
    assert [r[1] for r in rows[2:]] == [r[0] for r in rows[2:]]  # the name of a slice of one column: its value
    if "--ci" in engine:
        assert [r[:-4] for r in rows] == list(csv.reader(io.StringIO(want)))
    else:
        assert out == want
    got = _json(argv, capsys)
    assert [s["by_values"]["g"] for s in got["slices"]] == [r[0] for r in rows[2:]]


def test_evaluate_by_csv_on_a_terminal_is_shown_visibly(tmp_path, capsys, monkeypatch):
    """On a terminal the CSV is shown as everything else (nothing acts on the terminal); to a file or a
    pipe it is the values as they are (the test above)."""
    from precall._core.text import visible

    _hostile_slices(tmp_path / "h.csv")
    monkeypatch.setattr(type(__import__("sys").stdout), "isatty", lambda self: True, raising=False)
    code, out, err = _run(["evaluate", tmp_path / "h.csv", "--label", "y", "--score", "p", "--by", "g", "--csv"],
                          capsys)
    assert code == 0, err
    assert "\x1b" not in out and "\u202e" not in out and visible("e\x1b[2Jc") in out and "r[U+202E]lo" in out


# ---------------------------------------------------------------------------
# report --by and the forest plot
matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")


def test_report_by_has_the_slices_section(files, tmp_path, capsys):
    out = tmp_path / "r.html"
    code, _, err = _run(["report", files["csv"], "--label", "y", "--score", "p", "--by", "country,device",
                         "--top", "3", "-o", out], capsys)
    assert code == 0, err
    html = out.read_text()
    section = html[html.index("<h2>Slices by country, device</h2>"):html.index("<h2>Rank tables")]
    table = section[section.index("<table"):section.index("</table>")]
    assert table.count("<tr>") == 1 + 1 + 6  # header, all rows, 3 worst and 3 best
    assert section.count("<svg") == 2  # the forest plot and the small multiples
    # all rows' intervals are evaluate --ci's (the seed and resamples the report's, its defaults)
    from precall.plot.report import _num
    whole = _json(["evaluate", files["csv"], "--label", "y", "--score", "p", "--ci"], capsys)["intervals"]
    first = table[table.index("all rows"):].split("</tr>")[0]
    for part in (whole["average_precision"]["step"], whole["roc_auc"]):
        assert f"[{_num(part['low'])}, {_num(part['high'])}]" in first
    assert "country=pl" not in table  # not ranked: no positives


def _forest_data():
    df = _frame(7, 2000)
    result = precall.evaluate(df.y, df.p, by=df.country, on_undefined="nan")
    return df, result


@pytest.mark.parametrize("k", [1, 2, 10])
def test_forest_draws_one_interval_per_shown_slice(k):
    from matplotlib.collections import LineCollection

    from precall._slicing import slice_intervals

    df, result = _forest_data()
    ranked = result.ranked.tolist()
    iv = slice_intervals(df.y, df.p, df.country, slices=ranked, pos_label=1, n_resamples=50)
    axes = precall.plot.forest(result, iv, k=k)
    shown = len(ranked) if len(ranked) <= 2 * k else 2 * k
    for ax, title in zip(axes, ["AP step", "ROC-AUC"]):
        segments = sum(len(c.get_segments()) for c in ax.collections if isinstance(c, LineCollection))
        assert segments == shown
        texts = [t.get_text() for t in ax.get_legend().get_texts()]
        assert texts[:2] == ["95% interval", title] and texts[2].startswith("all rows: ")
    assert len(axes[0].get_yticks()) == shown
    labels = [t.get_text() for t in axes[0].get_yticklabels()]
    assert labels[0] == result.names[ranked[0]]  # the worst at the top
    matplotlib.pyplot.close("all")


def test_forest_of_compare_slices_draws_its_own_intervals():
    from matplotlib.collections import LineCollection

    df, _ = _forest_data()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cs = precall.stats.compare_slices(df.y, df.p, by=df.country, n_resamples=50, level=0.9)
    axes = precall.plot.forest(cs, k=2)
    ranked = cs.ranked.tolist()
    shown = ranked if len(ranked) <= 4 else ranked[:2] + ranked[-2:]
    for ax, low, high in zip(axes, (cs.ap_low, cs.auc_low), (cs.ap_high, cs.auc_high)):
        segments = [seg for c in ax.collections if isinstance(c, LineCollection) for seg in c.get_segments()]
        assert [tuple(seg[:, 0]) for seg in segments] == [(low[i], high[i]) for i in shown]
        assert [t.get_text() for t in ax.get_legend().get_texts()][0] == "90% interval"
    matplotlib.pyplot.close("all")


@pytest.mark.parametrize("reference", ["rest", "overall"])
def test_forest_of_compare_slices_draws_all_rows_as_its_reference_line(reference):
    """The comparison's all-rows values are those of the metrics on every row (whatever the
    reference), drawn as the dashed line, and the figure keeps its axis labels and legends."""
    df, _ = _forest_data()
    y, p = df.y.to_numpy(), df.p.to_numpy()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cs = precall.stats.compare_slices(y, p, by=df.country, n_resamples=20, method="voc2010", reference=reference)
    assert cs.overall_ap == precall.average_precision(y, p, method="voc2010")
    assert cs.overall_auc == pytest.approx(precall.roc_auc(y, p), abs=1e-15)
    axes = precall.plot.forest(cs, k=2)
    for ax, value in zip(axes, (cs.overall_ap, cs.overall_auc)):
        dashed = [line for line in ax.get_lines() if line.get_linestyle() == "--"]
        assert len(dashed) == 1 and dashed[0].get_xdata()[0] == value
        assert ax.get_legend().get_texts()[-1].get_text() == f"all rows: {value:.4f}"
    fig = axes[0].figure
    fig.canvas.draw()
    box = fig.bbox
    for ax in axes:  # the axis label and the legend inside the figure
        for artist in (ax.xaxis.label, ax.get_legend()):
            extent = artist.get_window_extent()
            assert extent.y0 >= box.y0 - 1 and extent.y1 <= box.y1 + 1
    matplotlib.pyplot.close("all")


def test_forest_without_intervals_draws_points_only():
    from matplotlib.collections import LineCollection

    _, result = _forest_data()
    axes = precall.plot.forest(result, k=2)
    assert not [c for c in axes[0].collections if isinstance(c, LineCollection)]
    assert [t.get_text() for t in axes[0].get_legend().get_texts()][0] == "AP step"
    matplotlib.pyplot.close("all")


@pytest.mark.parametrize("bad", [{"k": 0}, {"k": float("nan")}, {"level": 1.5}])
def test_forest_options_checked(bad):
    _, result = _forest_data()
    with pytest.raises(ValueError, match=next(iter(bad))):
        precall.plot.forest(result, **bad)


def test_slice_values_as_codes_name_slices_as_values():
    """The CLI passes codes; the names must be those of evaluate on the values themselves."""
    from precall._slicing import coded, with_values

    df = _frame(9, 500)
    texts, codes = np.unique(df.country.to_numpy(), return_inverse=True)
    values = {"country": df.country.replace("", None), "device": df.device}
    want = precall.evaluate(df.y, df.p, by=values, on_undefined="nan")
    country = coded([t for t in texts.tolist() if t], np.where(texts[codes] == "", -1, codes - (texts[0] == "")))
    device = coded(*[list(x) for x in [np.unique(df.device)]], np.unique(df.device, return_inverse=True)[1])
    got = with_values(precall.evaluate(df.y, df.p, by={"country": country[1], "device": device[1]},
                                       on_undefined="nan"), [country[0], device[0]])
    assert got.names == want.names and got.keys == want.keys
    assert math.isnan(got.roc_auc[got.names.index("country=pl, device=ios")])
    assert got.average_precision["step"].tolist()[:3] == want.average_precision["step"].tolist()[:3]


@pytest.mark.parametrize("engine", [[], ["--stream"]], ids=["memory", "stream"])
def test_slice_intervals_are_compare_slices_ones_and_overall_is_evaluate_ci(tmp_path, capsys, engine):
    """One answer for a slice's AP interval: ``evaluate --by --ci`` seeds slice i as
    ``stats.compare_slices`` does (``slice_seed(seed, i)``), and its overall row is ``evaluate --ci``'s."""
    rng = np.random.default_rng(2)
    n = 3000
    y = (rng.random(n) < 0.35).astype(int)
    p = np.round(rng.random(n) * 0.8 + 0.3 * y, 2)
    c = rng.choice(["DE", "FR", "IT"], n)
    path = tmp_path / "d.csv"
    path.write_text("y,p,country\n" + "\n".join(f"{a},{b},{k}" for a, b, k in zip(y, p, c)) + "\n")
    argv = ["evaluate", str(path), "--label", "y", "--score", "p", "--ci", "--seed", "7", "--json"]
    got = _json([*argv, "--by", "country", *engine], capsys)["intervals"]
    want = precall.stats.compare_slices(y, p, by=c, random_state=7)
    assert got["bootstrap"]["stratified_by_class"] == {"overall": True, "slices": want.stratified}
    for name in want.names:
        i = want.index(name)
        step = got["slices"][name]["average_precision"]["step"]
        assert (step["low"], step["high"]) == (want.ap_low[i], want.ap_high[i]), name
    whole = _json(argv, capsys)["intervals"]["average_precision"]["step"]
    assert (got["overall"]["average_precision"]["step"]["low"], got["overall"]["average_precision"]["step"]["high"]) \
        == (whole["low"], whole["high"])


def test_compare_by_one_score_is_each_slice_against_the_rest(tmp_path, capsys):
    """``compare --by`` with one --score: stats.compare_slices of the file's rows (the same numbers, seeds
    and names), as text in 80 columns and as JSON."""
    rng = np.random.default_rng(5)
    n = 2400
    y = (rng.random(n) < 0.35).astype(int)
    p = np.round(rng.random(n) * 0.8 + 0.3 * y, 2)
    c = rng.choice(["DE", "FR", "IT", "PL"], n)
    path = tmp_path / "d.csv"
    path.write_text("y,p,country\n" + "\n".join(f"{a},{b},{k}" for a, b, k in zip(y, p, c)) + "\n")
    argv = ["compare", str(path), "--label", "y", "--score", "p", "--by", "country", "--resamples", "100",
            "--seed", "3", "--metric", "coco"]
    got = _json(argv, capsys)
    want = precall.stats.compare_slices(y, p, by={"country": c}, method="coco", n_resamples=100,
                                        random_state=3).to_dict()
    assert got["slices"] == want["slices"] and got["ranked_worst_first"] == want["ranked_worst_first"]
    assert [s["by_values"] for s in got["slices"]] == [{"country": k} for k in ["DE", "FR", "IT", "PL"]]
    code, out, _ = _run(argv, capsys)
    assert code == 0 and max(map(len, out.splitlines())) <= 80 and "vs the rest" in " ".join(out.split())
    assert got["reference"] == "rest" and got["intervals"]["roc_auc"] == "delong"


@pytest.mark.parametrize("reference", ["rest", "overall"])
@pytest.mark.parametrize("weighted", [False, True])
def test_compare_by_one_score_against_a_reference_with_weights(tmp_path, capsys, reference, weighted):
    """``compare --by --reference {rest,overall} [--weight W]`` is stats.compare_slices(reference=...,
    sample_weight=...) of the file's rows; the text and the JSON say the reference and the methods."""
    rng = np.random.default_rng(6)
    n = 1500
    y = (rng.random(n) < 0.35).astype(int)
    p = np.round(rng.random(n) * 0.8 + 0.3 * y, 2)
    c = rng.choice(["DE", "FR", "IT"], n)
    w = rng.integers(0, 4, n)  # zero weights too: those rows are set aside
    path = tmp_path / "d.csv"
    path.write_text("y,p,country,w\n" + "\n".join(f"{a},{b},{k},{v}" for a, b, k, v in zip(y, p, c, w)) + "\n")
    argv = ["compare", str(path), "--label", "y", "--score", "p", "--by", "country", "--resamples", "60",
            "--seed", "4", "--reference", reference] + (["--weight", "w"] if weighted else [])
    got = _json(argv, capsys)
    want = precall.stats.compare_slices(y, p, by={"country": c}, sample_weight=w if weighted else None, n_resamples=60,
                                        random_state=4, reference=reference).to_dict()
    assert got["slices"] == want["slices"] and got["reference"] == reference and got["weighted"] == weighted
    assert got["intervals"] == want["intervals"] and got["input"]["weight_column"] == ("w" if weighted else None)
    assert all(f"AP - {reference}" in row for row in got["slices"])
    code, out, _ = _run(argv, capsys)
    text = " ".join(out.split())
    assert code == 0 and max(map(len, out.splitlines())) <= 80
    assert ("vs the rest" if reference == "rest" else "vs all rows") in text
    assert ("ROC-AUC bootstrap" if weighted else "ROC-AUC DeLong") in text and "seed 4" in text


def test_compare_reference_only_with_by_and_one_score(tmp_path, capsys):
    path = tmp_path / "d.csv"
    path.write_text("y,a,b,g\n" + "\n".join(f"{i % 2},{i / 10},{(i * 7 % 10) / 10},{'xy'[i % 3 == 0]}"
                                            for i in range(40)) + "\n")
    for extra in (["--score", "a", "--score", "b", "--by", "g"], ["--score", "a", "--score", "b"]):
        code, _, err = _run(["compare", str(path), "--label", "y", *extra, "--reference", "overall"], capsys)
        assert code == 2 and err.count("\n") == 1 and "--reference" in err
    code, _, err = _run(["compare", str(path), "--label", "y", "--score", "a", "--by", "g", "--reference", "all"],
                        capsys)
    assert code == 2 and "rest" in err and "overall" in err  # argparse's choices: the library's REFERENCES


def test_compare_by_one_score_refuses_an_interval_method_it_does_not_use(tmp_path, capsys):
    """compare_slices' intervals are percentile bootstraps (and DeLong's): --ci-method bca is refused
    in one line rather than ignored."""
    path = tmp_path / "d.csv"
    path.write_text("y,a,g\n" + "\n".join(f"{i % 2},{i / 10},{'xy'[i % 3 == 0]}" for i in range(40)) + "\n")
    code, out, err = _run(["compare", str(path), "--label", "y", "--score", "a", "--by", "g", "--ci-method", "bca"],
                          capsys)
    assert code == 2 and err.count("\n") == 1 and "--ci-method bca" in err and not out
    code, out, err = _run(["compare", str(path), "--label", "y", "--score", "a", "--by", "g", "--on-undefined",
                           "nan"], capsys)
    assert code == 2 and err.count("\n") == 1 and "--on-undefined nan" in err and not out


def test_compare_by_a_slice_of_one_positive_follows_on_undefined(tmp_path, capsys):
    """A slice with one positive has no DeLong variance and no bootstrap interval: its tests are NaN with
    the warnings (--on-undefined, evaluate's default), the other slices tested as ever; under
    --on-undefined raise one line and exit 2.  (It stopped the whole command, advising an option compare
    did not have.)"""
    path = tmp_path / "by.csv"
    path.write_text("y,s,t,g\n0,0.1,0.2,a\n1,0.5,0.3,a\n0,0.3,0.1,a\n0,0.4,0.1,a\n0,0.1,0.2,b\n1,0.5,0.3,b\n"
                    "0,0.3,0.1,b\n1,0.4,0.1,b\n0,0.2,0.6,b\n")
    argv = ["compare", str(path), "--label", "y", "--score", "s", "--score", "t", "--by", "g", "--resamples", "20"]
    code, out, err = _run([*argv, "--json"], capsys)
    assert code == 0, err
    got = json.loads(out)
    assert all(t["p_value"] is None for t in got["slices"]["a"]["tests"])
    assert all(t["p_value"] is not None for t in got["slices"]["b"]["tests"])
    assert "at least two positives" in err and "on_undefined" not in err
    code, out, err = _run([*argv, "--on-undefined", "raise"], capsys)
    assert code == 2 and not out and err.count("\n") == 1 and "Stopped by --on-undefined raise" in err


def test_csv_leaves_an_undefined_interval_bound_empty_as_every_nan_cell(tmp_path, capsys):
    """``--by --ci --csv``: DeLong's bounds of a slice with one positive are NaN: empty cells, as the
    numbers' NaN cells and JSON's null, not the text ``nan``."""
    rng = np.random.default_rng(0)
    n = 600
    g = np.repeat(["a", "b", "c"], 200)
    y = (rng.random(n) < 0.4).astype(int)
    y[400:] = 0
    y[450] = 1  # slice c: one positive
    p = np.round(rng.random(n), 3)
    path = tmp_path / "one.csv"
    path.write_text("y,p,g\n" + "\n".join(f"{a},{b},{c}" for a, b, c in zip(y, p, g)) + "\n")
    code, out, err = _run(["evaluate", path, "--label", "y", "--score", "p", "--by", "g", "--ci", "--resamples", "50",
                           "--csv"], capsys)
    assert code == 0, err
    rows = {r["slice"]: r for r in csv.DictReader(io.StringIO(out))}
    assert rows["c"]["ROC-AUC low"] == rows["c"]["ROC-AUC high"] == "" and "nan" not in out.lower()
    assert float(rows["a"]["ROC-AUC low"]) < float(rows["a"]["ROC-AUC high"])
    got = _json(["evaluate", path, "--label", "y", "--score", "p", "--by", "g", "--ci", "--resamples", "50"], capsys)
    assert got["intervals"]["slices"]["c"]["roc_auc"]["low"] is None


@pytest.mark.parametrize("countries", [2, 5])
def test_report_small_multiples_draw_no_empty_axes(tmp_path, countries):
    """The slices' curves fill rows of three: a last row not full leaves no empty axes behind."""
    rng = np.random.default_rng(countries)
    n = 3000
    g = rng.choice(list("ABCDEFG")[:countries], n)
    y = (rng.random(n) < 0.3).astype(int)
    p = np.round(rng.random(n) * 0.7 + 0.3 * y, 3)
    from precall.report import html_report

    html = html_report(y, {"model": p}, by={"country": g}, n_resamples=50)
    section = html[html.index("<h2>Slices by country</h2>"):html.index("<h2>Rank tables")]
    curves = section[section.index("Precision-recall of the"):]
    assert curves.count('<g id="axes_') == countries  # one axes a slice shown (at most 2 x 3)


# ---------------------------------------------------------------------------
# long slice names: shortened apart (a legend of the full names), whole with --wide
#: names alike for their first 30 characters and more (the text tables cut them to 28 columns, 16 in
#: compare, with "~": one text for two slices): at the end, in the middle only, two-column characters
ALIKE = ["customer_segment_enterprise_region_north", "customer_segment_enterprise_region_south",
         "customer_segment_" + "x" * 14 + "A" + "x" * 14 + "_tier",
         "customer_segment_" + "x" * 14 + "B" + "x" * 14 + "_tier",
         "\u6771\u4eac" * 10 + "\u5e97", "\u6771\u4eac" * 10 + "\u99c5", "short"]


def _alike_file(tmp_path: Path) -> Path:
    rng = np.random.default_rng(7)
    g = np.repeat(ALIKE, 120)
    y = (rng.random(g.size) < 0.45).astype(int)
    p = np.round(rng.random(g.size) * 0.6 + 0.4 * y * rng.random(g.size), 3)
    q = np.round(rng.random(g.size) * 0.7 + 0.3 * y * rng.random(g.size), 3)
    path = tmp_path / "alike.csv"
    with open(path, "w", newline="", encoding="utf-8") as f:
        csv.writer(f, lineterminator="\n").writerows([["y", "p", "q", "g"], *zip(y, p, q, g)])
    return path


def _row_names(lines: list[str]) -> list[str]:
    """The first cell of every row of every table (a line after one starting ``slice `` up to a blank
    line; the names have no spaces)."""
    names, inside = [], False
    for line in lines:
        if line.startswith("slice "):
            inside = True
        elif not line.strip():
            inside = False
        elif inside and not line.startswith("..."):
            names.append(line.split()[0])
    return names


def _check_names_apart(out: str, wide: bool) -> None:
    """Each slice's row named by one text of its own: the name whole, or (not ``wide``) shortened with
    ``...`` and its full name in the legend; every line within 80 columns unless ``wide``."""
    lines = out.splitlines()
    legend = oracles.slice_legend(lines)
    shown = {name: legend.get(name, name) for name in ALIKE}
    assert len(set(shown.values())) == len(ALIKE), shown  # no two slices alike
    rows = set(_row_names(lines)) - {"overall"}
    assert rows == set(shown.values()), (rows, shown)
    assert "~" not in "".join(rows)
    if wide:
        assert not legend and rows == set(ALIKE)
    else:
        assert max(map(_columns, lines)) <= 80
        assert set(legend) == {n for n in ALIKE if _columns(n) > 24}  # the long ones shortened, each in the legend
        assert all("..." in s and _columns(s) < _columns(n) for n, s in legend.items())


@pytest.mark.parametrize("extra", [[], ["--full"], ["--wide"], ["--ci", "--resamples", "20"]])
def test_evaluate_by_names_long_slices_apart(tmp_path, capsys, extra):
    """``evaluate --by``: slices whose names differ only past their 30th character (or only in the
    middle) print as different texts, shortened around ``...`` with a legend of the full names, the
    lines within 80 columns; ``--wide`` prints them whole.  (The table cut them to 28 columns with
    ``~``: two slices printed alike, with ``--wide`` and ``--full`` too.)"""
    path = _alike_file(tmp_path)
    code, out, err = _run(["evaluate", path, "--label", "y", "--score", "p", "--by", "g", *extra], capsys)
    assert code == 0, err
    _check_names_apart(out, "--wide" in extra)
    if "--ci" in extra:  # both tables (the estimates, then the intervals) name every slice, alike
        legends = out.split("\nslices:\n")
        assert len(legends) == 3 and legends[1].split("\n\n")[0].strip() == legends[2].split("\n\n")[0].strip()


@pytest.mark.parametrize("scores", [["p"], ["p", "q"]])
@pytest.mark.parametrize("extra", [[], ["--wide"], ["--full"]])
def test_compare_by_names_long_slices_apart(tmp_path, capsys, scores, extra):
    """``compare --by``, one score (each slice against the rest) or two (the models on each slice's
    rows): long slice names shortened apart with a legend, every line within 80 columns and every
    number whole; ``--wide``: the names whole.  (They were cut to 16 columns, or 28, with ``~``.)"""
    path = _alike_file(tmp_path)
    argv = ["compare", path, "--label", "y", *[a for s in scores for a in ("--score", s)], "--by", "g",
            "--resamples", "20", *extra]
    code, out, err = _run(argv, capsys)
    assert code == 0, err
    _check_names_apart(out, "--wide" in extra)
    if len(scores) == 1:  # every slice's numbers, whole (the lines were cut at 80 columns)
        got = json.loads(_run([*argv, "--json"], capsys)[1])
        tokens = set(out.split())
        for s in got["slices"]:
            r = s["AUC - rest"]
            assert {f"{s['ROC-AUC']:.4f}", f"{r:+.4f}", f"{s['AP']:.4f}"} <= tokens, s["slice"]
