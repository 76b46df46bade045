"""The command line's text outputs: 80 columns, bounded ``explain``, one tie default,
multi-class end to end, and the small refusals (issue 16 items 3, 4, 5, 7, 8; issue 15's
CLI items).  Each case runs the real command on the bundled data (``tests/data``)."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import precall
from precall.cli import main

ASAH = ["--label", "outcome", "--pos-label", "Poor"]
HPC = ["--label", "obs", "--class-columns", "VF,F,M,L"]


def run(argv: list[str], capsys) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def write(path: Path, header: list[str], rows: list[list]) -> Path:
    with open(path, "w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f, lineterminator="\n")
        writer.writerow(header)
        writer.writerows(rows)
    return path


# ---------------------------------------------------------------------------
# 80 columns by default, --wide for the full tables
def _commands(d: Path) -> list[list[str]]:
    asah, hpc, two = str(d / "pROC_aSAH.csv"), str(d / "yardstick_hpc_cv.csv"), \
        str(d / "yardstick_two_class_example.csv")
    return [
        ["evaluate", asah, *ASAH, "--score", "s100b"],
        ["evaluate", asah, *ASAH, "--score", "s100b", "--ci", "--resamples", "20",
         "--at-recall", "0.5", "--at-threshold", "5", "--prevalence", "0.01", "--prevalence", "0.001"],
        ["evaluate", asah, *ASAH, "--score", "s100b", "--score", "ndka", "--score", "wfns"],
        ["evaluate", asah, *ASAH, "--score", "s100b", "--score", "ndka", "--ci", "--resamples", "20"],
        ["evaluate", two, "--label", "truth", "--pos-label", "Class1", "--score", "Class1",
         "--weight", "case_weight", "--ties", "stable"],
        ["evaluate", hpc, *HPC],
        ["evaluate", hpc, *HPC, "--weight", "case_weight", "--ci", "--resamples", "10"],
        ["compare", asah, *ASAH, "--score", "s100b", "--score", "ndka", "--score", "wfns",
         "--resamples", "20", "--metric", "roc_auc", "--metric", "voc2010", "--metric", "interpolated"],
        ["compare", hpc, "--label", "obs", "--class-columns", "VF,F,M,L", "--class-columns",
         "VF=F,F=VF,M=M,L=L", "--resamples", "10"],
        ["explain", asah, *ASAH, "--score", "s100b"],
        ["explain", asah, *ASAH, "--score", "s100b", "--ties", "stable", "--prevalence", "0.01"],
        ["explain", hpc, *HPC, "--method", "step"],
        ["demo"],
    ]


def test_every_text_output_fits_80_columns(shared_data_dir, capsys):
    widest = {}
    for argv in _commands(shared_data_dir):
        code, out, err = run(argv, capsys)
        assert code == 0, (argv, err)
        lines = out.splitlines()
        assert lines, argv
        widest[" ".join(argv[:1] + argv[2:])] = max(len(line) for line in lines)
    too_wide = {k: v for k, v in widest.items() if v > 80}
    assert not too_wide


def test_wide_prints_the_full_tables(shared_data_dir, capsys):
    asah = str(shared_data_dir / "pROC_aSAH.csv")
    code, out, _ = run(["evaluate", asah, *ASAH, "--score", "s100b", "--wide"], capsys)
    assert code == 0
    step = next(line for line in out.splitlines() if line.startswith("step "))
    assert precall.CONVENTIONS["step"].summary in step and len(step) > 80  # the description inline
    code, out, _ = run(["compare", asah, *ASAH, "--score", "s100b", "--score", "ndka", "--resamples",
                        "20", "--wide"], capsys)
    header = next(line for line in out.splitlines() if line.startswith("A "))
    assert header.split()[:3] == ["A", "B", "metric"] and " z " in header


def test_wide_tables_are_split_into_blocks_not_cut(shared_data_dir, capsys):
    # a many-class table: every class column still appears, each block repeats the key column
    d = shared_data_dir / "yardstick_hpc_cv.csv"
    code, out, _ = run(["evaluate", str(d), *HPC, "--digits", "17"], capsys)
    assert code == 0 and max(len(line) for line in out.splitlines()) <= 80
    metric_headers = [line.split() for line in out.splitlines() if line.startswith("metric ")]
    shown = {c for h in metric_headers for c in h[1:]}
    assert {"VF", "F", "M", "L", "macro", "weighted", "micro"} <= shown
    assert len(metric_headers) > 2  # 17 digits do not fit one block


# ---------------------------------------------------------------------------
# explain: bounded by default, --full for everything, one tie default
def _big(tmp_path: Path, n: int = 200_000) -> Path:
    rng = np.random.default_rng(5)
    y = (rng.random(n) < 0.1).astype(int)
    s = np.round(rng.random(n) + 0.3 * y, 4)
    path = tmp_path / "big.csv"
    np.savetxt(path, np.c_[y, s], fmt=["%d", "%.4f"], delimiter=",", header="y,s", comments="")
    return path


def test_explain_is_bounded_on_a_large_file(tmp_path, capsys):
    path = _big(tmp_path)
    code, out, err = run(["explain", str(path), "--label", "y", "--score", "s"], capsys)
    assert code == 0, err
    lines = out.splitlines()
    assert len(lines) <= 100 and max(len(line) for line in lines) <= 80
    table = precall.threshold_table(*np.loadtxt(path, delimiter=",", skiprows=1, unpack=True), pos_label=1)
    for m in precall.AP_METHODS:  # every convention's sum is still printed
        assert f"sum of {len(table.ap_terms(m))} terms = {table.average_precision(method=m):.4f}" in \
            " ".join(out.split())
    code, out, _ = run(["explain", str(path), "--label", "y", "--score", "s", "--full", "--method",
                        "step"], capsys)
    assert code == 0 and len(out.splitlines()) > len(table.thresholds)  # every rank row


def test_explain_full_reads_each_column_of_the_table_once(tmp_path, capsys, monkeypatch):
    """``explain --full`` read the table's derived columns (properties that compute the whole array) once per
    row: time quadratic in the rows (50 s at 40,000). Each is now computed a bounded number of times."""
    calls = {"precision": 0, "tn": 0, "fn": 0}
    for name in calls:
        prop = getattr(precall.ThresholdTable, name)

        def counted(self, prop=prop, name=name):
            calls[name] += 1
            return prop.fget(self)
        monkeypatch.setattr(precall.ThresholdTable, name, property(counted))
    path = _big(tmp_path, 3_000)
    code, out, err = run(["explain", str(path), "--label", "y", "--score", "s", "--full"], capsys)
    assert code == 0, err
    assert len(out.splitlines()) > 2_000 and max(calls.values()) < 50, calls


def test_explain_rank_table_at_recall_quantiles(tmp_path, capsys):
    path = _big(tmp_path, 20_000)
    code, out, _ = run(["explain", str(path), "--label", "y", "--score", "s", "--method", "step"], capsys)
    assert code == 0
    block = out.split("Rank table")[1].split("\n\n")[0].splitlines()
    header = next(i for i, line in enumerate(block) if line.startswith("rank "))
    assert block[header].split()[-2:] == ["recall", "envelope"]
    recalls = [float(line.split()[-2]) for line in block[header + 1:] if line[:1].isdigit()]
    for q in np.linspace(0, 1, 11)[1:]:  # each quantile's row is shown
        assert any(abs(r - q) < 0.01 for r in recalls), q


def test_explain_and_evaluate_share_the_tie_default(shared_data_dir, capsys):
    asah = str(shared_data_dir / "pROC_aSAH.csv")
    _, out, _ = run(["explain", asah, *ASAH, "--score", "s100b", "--method", "step"], capsys)
    ev = run(["evaluate", asah, *ASAH, "--score", "s100b", "--json"], capsys)[1]
    step = json.loads(ev)["average_precision"]["step"]
    assert f"sum of 34 terms = {step:.4f}" in out and "ties group" in out
    _, out, _ = run(["explain", asah, *ASAH, "--score", "s100b", "--ties", "stable", "--method", "step"],
                    capsys)
    note = [line for line in out.splitlines() if line.startswith("note")]
    assert len(note) == 1 and "share their score" in note[0]
    assert f"{step:.4f}" in " ".join(out.split())  # the group value is named in the note
    _, out, _ = run(["evaluate", asah, *ASAH, "--score", "s100b", "--ties", "stable"], capsys)
    assert sum(line.startswith("note") for line in out.splitlines()) == 1
    _, out, _ = run(["evaluate", asah, *ASAH, "--score", "s100b"], capsys)
    assert not any(line.startswith("note") for line in out.splitlines())  # group: no note
    _, out, _ = run(["compare", asah, *ASAH, "--score", "s100b", "--score", "ndka", "--ties", "stable",
                     "--resamples", "10"], capsys)
    assert sum(line.startswith("note") for line in out.splitlines()) == 1


# ---------------------------------------------------------------------------
# multi-class end to end
def _iris_like(tmp_path: Path) -> tuple[Path, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(2)
    y = rng.integers(0, 3, 300)
    p = rng.dirichlet([1, 1, 1], 300) + 0.5 * np.eye(3)[y]
    rows = [[int(a), *map(repr, map(float, b))] for a, b in zip(y, p)]
    path = write(tmp_path / "iris.csv", ["y", "p_setosa", "p_versicolor", "p_virginica"], rows)
    return path, y, p


def test_class_columns_mapping_and_prefix(tmp_path, capsys):
    path, y, p = _iris_like(tmp_path)
    argv = ["evaluate", str(path), "--label", "y", "--json"]
    code, out, err = run([*argv, "--class-columns", "0=p_setosa,1=p_versicolor,2=p_virginica"], capsys)
    assert code == 0, err
    mapped = json.loads(out)
    expected = precall.average_precision(y.astype(str), p, labels=["0", "1", "2"], average="macro")
    assert mapped["average_precision"]["macro"]["step"] == pytest.approx(expected, rel=1e-12)
    assert mapped["input"]["class_columns"] == {"0": "p_setosa", "1": "p_versicolor", "2": "p_virginica"}
    # a prefix: the labels are the column names minus the prefix
    path2 = write(tmp_path / "pre.csv", ["y", "p_0", "p_1", "p_2"],
                  [[int(a), *map(float, b)] for a, b in zip(y, p)])
    code, out, err = run(["evaluate", str(path2), "--label", "y", "--json", "--class-prefix", "p_"], capsys)
    assert code == 0, err
    assert json.loads(out)["average_precision"] == mapped["average_precision"]


@pytest.mark.parametrize(
    "extra, fragment",
    [
        (["--class-columns", "0=p_setosa,0=p_virginica"], "class '0' is given twice"),
        (["--class-columns", "0=p_setosa,=p_virginica"], "empty class or column"),
        (["--class-columns", "0=p_setosa,1=nope"], "nope"),
        (["--class-columns", "0=p_setosa,1=p_versicolor"], "label '2' is not a class"),
        (["--class-prefix", "q_"], "0 column(s) start with it"),
    ],
)
def test_class_mapping_errors(tmp_path, capsys, extra, fragment):
    path, _, _ = _iris_like(tmp_path)
    code, _, err = run(["evaluate", str(path), "--label", "y", *extra], capsys)
    assert code == 2 and fragment in err and len(err.strip().splitlines()) == 1


def test_compare_multiclass_is_the_paired_bootstrap_of_macro_metrics(tmp_path, capsys):
    path, y, p = _iris_like(tmp_path)
    rng = np.random.default_rng(9)
    q = p + rng.random(p.shape)
    rows = [[int(a), *map(float, b), *map(float, c)] for a, b, c in zip(y, p, q)]
    path = write(tmp_path / "two.csv", ["y", "a_0", "a_1", "a_2", "b_0", "b_1", "b_2"], rows)
    code, out, err = run(["compare", str(path), "--label", "y", "--class-prefix", "a_", "--class-prefix", "b_",
                          "--metric", "voc2010", "--resamples", "40", "--seed", "1", "--json"], capsys)
    assert code == 0, err
    test = json.loads(out)["tests"][0]
    labels = ["0", "1", "2"]
    ref = precall.stats.bootstrap_test(
        lambda t, s, sample_weight=None: precall.average_precision(
            t, s, method="voc2010", average="macro", labels=labels, sample_weight=sample_weight),
        y.astype(str), p, q, n_resamples=40, random_state=1)
    assert (test["difference"], test["low"], test["high"], test["p_value"]) == pytest.approx(
        (ref.difference, ref.low, ref.high, ref.p_value), rel=1e-12)
    assert test["metric"] == "macro AP voc2010"
    code, _, err = run(["compare", str(path), "--label", "y", "--class-prefix", "a_"], capsys)
    assert code == 2 and "at least two models" in err


def test_multiclass_csv_and_markdown_carry_the_json_numbers(shared_data_dir, capsys):
    hpc = str(shared_data_dir / "yardstick_hpc_cv.csv")
    result = json.loads(run(["evaluate", hpc, *HPC, "--json"], capsys)[1])
    code, out, _ = run(["evaluate", hpc, *HPC, "--csv"], capsys)
    assert code == 0
    rows = {r["metric"]: r for r in csv.DictReader(out.splitlines())}
    for m in precall.AP_METHODS:
        for c in ["VF", "F", "M", "L"]:
            assert float(rows[f"AP {m}"][c]) == result["per_class"][c]["average_precision"][m]
        for a in ["macro", "weighted", "micro"]:
            assert float(rows[f"AP {m}"][a]) == result["average_precision"][a][m]
    assert float(rows["ROC-AUC OvO"]["macro"]) == result["roc_auc"]["ovo"]["macro"]
    code, out, _ = run(["evaluate", hpc, *HPC, "--markdown", "--digits", "4"], capsys)
    line = next(x for x in out.splitlines() if x.startswith("| AP step |"))
    assert line.split("|")[6].strip() == f"{result['average_precision']['macro']['step']:.4f}"


NAMES = ["s\x1b[2Jx", "inv\u202eexe", 'q"uote,comma', "s\u240ax"]  # an escape, a bidi control, quotes, a symbol


def test_csv_headers_carry_score_and_class_names_as_they_are(tmp_path, capsys):
    """``--csv`` is data: the score columns' names (several --score side by side) and the classes
    (--class-columns) in its header as they are in the file, quoted by the csv module, not as
    ``visible()`` shows them on a terminal (``s\\x1b[2Jx`` would print as ``s\u241b[2Jx``, the name
    of another column); the numbers those of ``--json``."""
    rng = np.random.default_rng(2)
    y = rng.integers(0, 2, 60)
    path = write(tmp_path / "names.csv", ["y", *NAMES], [[int(t), *np.round(rng.random(4) + 0.3 * t, 3)]
                                                         for t in y])
    argv = ["evaluate", str(path), "--label", "y"] + [a for n in NAMES for a in ("--score", n)]
    code, out, err = run([*argv, "--csv"], capsys)
    assert code == 0, err
    rows = list(csv.reader(out.splitlines()))
    assert rows[0] == ["metric", *NAMES]
    models = json.loads(run([*argv, "--json"], capsys)[1])["models"]
    step = next(r for r in rows if r[0] == "AP step")
    assert [float(v) for v in step[1:]] == [models[n]["average_precision"]["step"] for n in NAMES]
    # multi-class: each class's column headed by the class as it is
    classes = [NAMES[0], NAMES[1], NAMES[3]]  # a comma separates --class-columns
    labels = [classes[i % 3] for i in range(30)]
    path = write(tmp_path / "classes.csv", ["y", *classes],
                 [[c, *np.round(rng.random(3) + 0.5 * (np.arange(3) == i % 3), 3)] for i, c in enumerate(labels)])
    code, out, err = run(["evaluate", str(path), "--label", "y", "--class-columns", ",".join(classes), "--csv"],
                         capsys)
    assert code == 0, err
    assert next(csv.reader(out.splitlines()))[:4] == ["metric", *classes]


def test_explain_per_class(shared_data_dir, capsys):
    hpc = shared_data_dir / "yardstick_hpc_cv.csv"
    code, out, err = run(["explain", str(hpc), *HPC, "--method", "voc2010"], capsys)
    assert code == 0, err
    with open(hpc, newline="", encoding="utf-8-sig") as f:
        rows = list(csv.DictReader(f))
    y = np.array([r["obs"] for r in rows])
    for c in ["VF", "F", "M", "L"]:
        assert f"== class {c!r}" in out
        s = np.array([float(r[c]) for r in rows])
        ap = precall.average_precision(y, s, pos_label=c, method="voc2010")
        assert f"= {ap:.4f}" in out
    code, out, _ = run(["explain", str(hpc), *HPC, "--class", "M"], capsys)
    assert code == 0 and "== class 'M'" in out and "== class 'VF'" not in out
    assert len(out.splitlines()) <= 110
    code, _, err = run(["explain", str(hpc), *HPC, "--class", "X"], capsys)
    assert code == 2 and "--class 'X' is not one of the classes" in err


# ---------------------------------------------------------------------------
# the small items: table-driven (argv, exit code, a fragment of the one stderr line)
def _small_cases(d: Path, tmp: Path) -> list[tuple[list[str], int, str]]:
    asah = str(d / "pROC_aSAH.csv")
    neg = str(write(tmp / "neg.csv", ["y", "s"], [[0, 0.1], [0, 0.5], [0, 0.3]]))
    return [
        (["evaluate", neg, "--label", "y", "--score", "s", "--on-undefined", "raise"], 2, "is undefined"),
        (["evaluate", neg, "--label", "y", "--score", "s", "--on-undefined", "bogus"], 2, "--on-undefined"),
        (["evaluate", neg, "--label", "y", "--score", "s", "--stream", "--on-undefined", "nan"], 2,
         "no --on-undefined"),
        (["evaluate", neg, "--label", "y", "--score", "s"], 0, "--on-undefined nan"),
    ]


def test_small_items_table(shared_data_dir, tmp_path, capsys):
    for argv, expected, fragment in _small_cases(shared_data_dir, tmp_path):
        code, _, err = run(argv, capsys)
        assert code == expected, (argv, err)
        assert fragment in err, (argv, err)
        assert "Traceback" not in err
        if expected == 2 and "usage:" not in err:  # argparse's usage errors: usage, then one line
            assert len(err.strip().splitlines()) == 1, err


def test_tiny_prevalence_is_the_library_value(shared_data_dir, capsys):
    asah = shared_data_dir / "pROC_aSAH.csv"
    code, out, err = run(["evaluate", str(asah), *ASAH, "--score", "s100b", "--prevalence", "1e-30",
                          "--json"], capsys)
    assert code == 0 and "Traceback" not in err
    with open(asah, newline="") as f:
        rows = list(csv.DictReader(f))
    y = [r["outcome"] for r in rows]
    s = [float(r["s100b"]) for r in rows]
    ev = precall.evaluate(y, s, pos_label="Poor", prevalence=1e-30)
    shown = json.loads(out)["at_prevalence"][0]["average_precision"]
    assert shown == pytest.approx(ev.average_precision, rel=1e-12)


@pytest.mark.parametrize("policy, expected", [("nan", None), ("zero", 0.0), ("warn", 0.0)])
def test_on_undefined(tmp_path, capsys, policy, expected):
    neg = write(tmp_path / "neg.csv", ["y", "s"], [[0, 0.1], [0, 0.5], [0, 0.3]])
    code, out, err = run(["evaluate", str(neg), "--label", "y", "--score", "s", "--json",
                          "--on-undefined", policy], capsys)
    assert code == 0
    result = json.loads(out)
    assert result["average_precision"]["step"] == expected  # JSON null for NaN
    assert ("average precision is undefined" in err) == (policy == "warn")  # the policy's value, chosen: silent
    # the numbers no policy gives a value (NaN whatever it is) are named but where NaN was asked for
    assert ("min AP, normalised AP and AUPRG are undefined" in err) == (policy != "nan")
    assert result["auprg"] is None and (policy == "nan") == (not err)


def test_at_threshold_above_every_score_says_undefined(shared_data_dir, capsys):
    code, out, _ = run(["evaluate", str(shared_data_dir / "pROC_aSAH.csv"), *ASAH, "--score", "s100b",
                        "--at-threshold", "5"], capsys)
    assert code == 0
    text = " ".join(out.split())
    assert "precision undefined: nothing predicted positive" in text
    code, out, _ = run(["evaluate", str(shared_data_dir / "pROC_aSAH.csv"), *ASAH, "--score", "s100b",
                        "--at-threshold", "5", "--at-threshold", "0.5", "--json"], capsys)
    points = json.loads(out)["operating_points"]
    assert points[0]["precision"] is None and points[0]["tp"] == 0 and points[0]["fp"] == 0
    assert points[1]["precision"] == pytest.approx(points[1]["tp"] / (points[1]["tp"] + points[1]["fp"]))


def test_demo_first_screen_has_no_nan_and_says_why(capsys):
    code, out, _ = run(["demo"], capsys)
    assert code == 0
    assert "nan" not in out
    assert "n/a" in out and "fractional" in " ".join(out.split())


def test_compare_tiny_p_values(shared_data_dir, capsys):
    hpc = shared_data_dir / "yardstick_hpc_cv.csv"
    code, out, _ = run(["compare", str(hpc), "--label", "obs", "--class-columns", "VF,F,M,L",
                        "--class-columns", "VF=F,F=VF,M=M,L=L", "--resamples", "20", "--metric", "voc2010"],
                       capsys)
    assert code == 0
    row = next(line for line in out.splitlines() if line.startswith("macro AP voc2010"))
    # every replicate lies on one side of 0: the bootstrap p-value is below its resolution, 1/20,
    # said so (not "0", nor a normal tail probability the replicates cannot support)
    assert row.endswith("< 0.05")
    assert " 0\n" not in out


def test_trapezoid_is_not_called_optimistic(shared_data_dir, capsys):
    _, out, _ = run(["evaluate", str(shared_data_dir / "pROC_aSAH.csv"), *ASAH, "--score", "s100b"], capsys)
    assert "optimistic" not in out and "trapezoid" in out


def test_full_disk_is_one_line_exit_2():
    if not Path("/dev/full").exists():
        pytest.skip("no /dev/full on this system")
    with open("/dev/full", "w") as full:
        proc = subprocess.run([sys.executable, "-m", "precall", "demo"], stdout=full, stderr=subprocess.PIPE,
                              text=True, check=False)
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == ["precall: error: cannot write the output: No space left on device"]


def test_non_ascii_labels_on_an_ascii_terminal(tmp_path):
    path = write(tmp_path / "cafe.csv", ["y", "s"], [["café", 0.1], ["thé", 0.5], ["café", 0.3]])
    env = {"PYTHONIOENCODING": "ascii", "PATH": "/usr/bin:/bin"}
    ok = subprocess.run([sys.executable, "-m", "precall", "evaluate", str(path), "--label", "y", "--score", "s",
                         "--pos-label", "café"], capture_output=True, env=env, check=False)
    assert ok.returncode == 0, ok.stderr
    assert b"caf\\xe9" in ok.stdout and b"Traceback" not in ok.stderr
    bad = subprocess.run([sys.executable, "-m", "precall", "evaluate", str(path), "--label", "y", "--score", "s"],
                         capture_output=True, env=env, check=False)
    assert bad.returncode == 2 and b"Traceback" not in bad.stderr and b"caf\\xe9" in bad.stderr


def test_bootstrap_reports_progress_when_the_library_takes_it(shared_data_dir, capsys, monkeypatch):
    import inspect

    import precall.cli._intervals as intervals

    if "progress" not in inspect.signature(precall.stats.bootstrap_ci).parameters:
        pytest.skip("this precall.stats takes no progress=")
    seen: dict[str, list[float]] = {}

    def recorder(label, size):
        return lambda fraction: seen.setdefault(label, []).append(fraction)

    monkeypatch.setattr(intervals, "terminal_progress", recorder)
    code, _, err = run(["evaluate", str(shared_data_dir / "pROC_aSAH.csv"), *ASAH, "--score", "s100b", "--ci",
                        "--resamples", "20"], capsys)
    assert code == 0, err
    assert set(seen) == {"bootstrap"}  # one set of resamples for every AP; ROC-AUC: DeLong, no bootstrap
    assert all(v[-1] == pytest.approx(1.0) for v in seen.values())


# ---------------------------------------------------------------------------
# intervals in bounded time (issue 16 item 2): counts, score blocks, estimates first
@pytest.fixture(scope="module")
def continuous_file(tmp_path_factory):
    rng = np.random.default_rng(16)
    n = 120_000  # continuous scores: more runs than resample="counts" draws, so score blocks
    y = (rng.random(n) < 0.3).astype(int)
    a = y + rng.normal(size=n)
    b = 0.8 * a + 0.6 * rng.normal(size=n)
    path = tmp_path_factory.mktemp("ci") / "continuous.csv"
    np.savetxt(path, np.column_stack([y, a, b]), delimiter=",", header="y,a,b", comments="", fmt=["%d", "%.17g", "%.17g"])
    return path, y, a, b


def test_evaluate_ci_prints_the_estimates_first_and_names_the_blocks(continuous_file, capsys):
    path, y, a, _ = continuous_file
    code, out, err = run(["evaluate", str(path), "--label", "y", "--score", "a", "--ci", "--resamples", "50"], capsys)
    assert code == 0, err
    lines = out.splitlines()
    assert max(len(line) for line in lines) <= 80
    table = next(i for i, line in enumerate(lines) if line.startswith("convention") and "min AP" in line)
    intervals = next(i for i, line in enumerate(lines) if line.startswith("intervals"))
    assert table < intervals  # the point estimates come before the intervals
    described = " ".join(line.strip() for line in lines[intervals:intervals + 3])
    assert "drawn as counts over" in described and "score blocks (approximate)" in described
    step = next(line for line in lines[intervals:] if line.startswith("step "))
    low, high = (float(v) for v in step.split("[")[1].rstrip("]").split(","))
    assert low < precall.average_precision(y, a) < high
    assert any(line.startswith("ROC-AUC") and "(DeLong)" in line for line in lines[intervals:])


def test_evaluate_ci_of_several_scores_names_how_each_was_drawn(continuous_file, tmp_path, capsys):
    """Several --score columns with --ci: the text says how each model's resamples were drawn (counts over
    its own score blocks, approximate; or counts of runs, exact) as one model's text does, and as JSON
    gives it; in the intervals line when every model's were drawn alike.  (It said only "stratified
    bootstrap resamples", which read as exact rows.)"""
    path, y, a, b = continuous_file
    data = tmp_path / "scores.csv"  # r and r2: to one decimal, few runs, counted exactly
    np.savetxt(data, np.column_stack([y, a, b, np.round(a, 1), np.round(b, 1)]), delimiter=",",
               header="y,a,b,r,r2", comments="", fmt=["%d", "%.17g", "%.17g", "%.1f", "%.1f"])
    for scores in (["a", "b"], ["a", "r"], ["r", "r2"]):
        argv = ["evaluate", str(data), "--label", "y", "--ci", "--resamples", "20",
                *[x for name in scores for x in ("--score", name)]]
        code, out, err = run(argv, capsys)
        assert code == 0, err
        lines = out.splitlines()
        assert max(len(line) for line in lines) <= 80
        head = " ".join(line.strip() for line in lines[:lines.index("")])
        code, js, _ = run([*argv, "--json"], capsys)
        boots = [json.loads(js)["models"][name]["intervals"]["bootstrap"] for name in scores]
        said = [("drawn as counts of score runs (exact)" if bt["n_blocks"] is None else
                 f"drawn as counts over {bt['n_blocks']} score blocks (approximate)") for bt in boots]
        assert all(bt["resample"] == "counts" for bt in boots)
        if len(set(said)) == 1:
            assert f"(percentile, seed 0) {said[0]} for AP" in head and "resamples   " not in head
        else:
            assert "resamples   " + "; ".join(f"{name!r}: {d}" for name, d in zip(scores, said)) in head
        assert ("approximate" in head) == (scores != ["r", "r2"])


def test_evaluate_ci_json_says_how_the_resamples_were_drawn(continuous_file, capsys):
    path, *_ = continuous_file
    code, out, err = run(["evaluate", str(path), "--label", "y", "--score", "a", "--ci", "--resamples", "30",
                          "--json"], capsys)
    assert code == 0, err
    boot = json.loads(out)["intervals"]["bootstrap"]
    assert boot["resample"] == "counts" and boot["n_blocks"] > 100
    code, out, err = run(["evaluate", str(path), "--label", "y", "--score", "a", "--ci", "--resamples", "30",
                          "--ties", "stable", "--json"], capsys)
    assert code == 0, err
    assert json.loads(out)["intervals"]["bootstrap"]["resample"] == "rows"  # stable ties: rows


def test_compare_prints_its_summary_first_and_blocks_both_models_jointly(continuous_file, capsys):
    path, y, a, b = continuous_file
    code, out, err = run(["compare", str(path), "--label", "y", "--score", "a", "--score", "b",
                          "--resamples", "100"], capsys)
    assert code == 0, err
    lines = out.splitlines()
    assert max(len(line) for line in lines) <= 80
    assert lines[0].startswith("file") and any(line.startswith("tests") for line in lines[:8])
    # every test computed before anything is printed: the summary says how the resamples were drawn
    assert "drawn as counts over" in " ".join(line.strip() for line in lines[:8])
    code, out, err = run(["compare", str(path), "--label", "y", "--score", "a", "--score", "b",
                          "--resamples", "100", "--json"], capsys)
    tests = json.loads(out)["tests"]
    assert [t["method"] for t in tests] == ["delong", "percentile", "percentile"]
    assert all(t["resample"] == "counts" and t["n_blocks"] for t in tests[1:])
    delong, boot = tests[0], tests[1]
    assert boot["standard_error"] == pytest.approx(delong["standard_error"], rel=0.25)
    assert boot["low"] < boot["difference"] < boot["high"]


@pytest.mark.parametrize("multiclass", [False, True])
def test_ci_estimates_are_out_before_the_resampling_starts(shared_data_dir, capsys, monkeypatch, multiclass):
    """Partial output early: when the bootstrap starts, the point estimates are already printed."""
    seen = []
    original = precall.stats.bootstrap_cis

    def spy(*args, **kwargs):
        seen.append(capsys.readouterr().out)  # what was printed before the resampling
        return original(*args, **kwargs)

    monkeypatch.setattr(precall.stats, "bootstrap_cis", spy)
    if multiclass:
        argv = ["evaluate", str(shared_data_dir / "yardstick_hpc_cv.csv"), *HPC, "--ci", "--resamples", "20"]
        estimates = "Averages (ROC-AUC"
    else:
        argv = ["evaluate", str(shared_data_dir / "pROC_aSAH.csv"), *ASAH, "--score", "s100b", "--ci",
                "--resamples", "20"]
        estimates = "ROC-AUC"
    code, out, err = run(argv, capsys)
    assert code == 0, err
    assert seen and estimates in seen[0] and "95% CI" not in seen[0]
    assert "95% CI" in out  # the intervals follow


def _nested(rng: np.random.Generator, depth: int = 0):
    r = rng.random()
    if depth > 3 or r < 0.3:
        return [1, 2.5, None, 'q"\u00e9\n\t\x1b', True, -0.0, 1e300, [], {}][rng.integers(9)]
    if r < 0.6:
        return [_nested(rng, depth + 1) for _ in range(rng.integers(5))]
    return {f"k{i}": _nested(rng, depth + 1) for i in range(rng.integers(5))}


def test_json_text_is_json_dumps_with_long_lists_a_line_an_entry():
    """The one JSON writer of the commands: ``json.dumps(indent=2)`` to the byte, but a list of more than
    ``LONG_LIST`` entries with one compact entry a line (json's C encoder: a million slices in seconds)."""
    from precall.cli._format import LONG_LIST, json_text

    rng = np.random.default_rng(0)
    for _ in range(500):
        value = _nested(rng)
        assert json_text(value) == json.dumps(value, indent=2, allow_nan=False)
    rows = [{"slice": str(i), "AP": i / 7, "nested": [i, None]} for i in range(LONG_LIST + 1)]
    text = json_text({"slices": rows, "n": 1})
    assert json.loads(text) == {"slices": rows, "n": 1}
    lines = text.splitlines()
    assert len(lines) == len(rows) + 5 and lines[2] == '    {"slice": "0", "AP": 0.0, "nested": [0, null]},'
    with pytest.raises(ValueError):
        json_text({"x": [float("nan")] * (LONG_LIST + 1)})


@pytest.mark.parametrize("n", [0, 1, 5, 1000, 1001, 2500])
def test_json_chunks_of_rows_made_a_block_at_a_time_are_json_text_of_the_list(monkeypatch, n):
    """:func:`json_chunks` writes a :class:`precall.slices.LazyRows` as :func:`json_text` writes the list it
    makes, a block of ``BLOCK`` rows a piece (a long list of rows given whole too), each block made as it is
    written; :func:`print_chunks` writes the pieces one by one, then a line feed."""
    import io

    import precall.cli._format as fmt
    import precall.slices
    from precall.slices import LazyRows

    monkeypatch.setattr(precall.slices, "BLOCK", 64)
    monkeypatch.setattr(fmt, "BLOCK", 64)
    rows = [{"slice": f'"{i}"\u00e9', "AP": i / 7, "by_values": {"g": None if i % 5 else i}} for i in range(n)]
    made = []

    def make(start: int, stop: int) -> list:
        made.append(stop - start)
        return rows[start:stop]

    doc = {"by": ["g"], "slices": LazyRows(n, make), "ranked_worst_first": [r["slice"] for r in rows], "n": n}
    want = fmt.json_text({**doc, "slices": rows})
    pieces = list(fmt.json_chunks(doc))
    assert "".join(pieces) == want and json.loads(want)["slices"] == rows
    assert made == [min(64, n - k) for k in range(0, n, 64)] and max(map(len, pieces)) < 64 * 200
    out = io.StringIO()
    fmt.print_chunks(iter(pieces), file=out)
    assert out.getvalue() == want + "\n"


def test_many_slices_as_json_text_and_full_are_complete_and_named(tmp_path, capsys):
    """``--by`` with thousands of slices: ``--json`` holds every slice, one a line, with the library's
    numbers; ``--full`` prints every slice once; a slice value holding an escape is shown, not sent."""
    rng = np.random.default_rng(1)
    n, m = 6000, 3000
    g = rng.integers(0, m, n)
    rows = ["y,p,g"] + [f"{int(rng.random() < .4)},{rng.random():.3f},{'e' + chr(27) if k == g[0] else k}"
                        for k in g]
    path = tmp_path / "many.csv"
    path.write_text("\n".join(rows) + "\n")
    assert main(["evaluate", str(path), "--label", "y", "--score", "p", "--by", "g", "--json"]) == 0
    out = capsys.readouterr().out
    got = json.loads(out)
    assert len(got["slices"]) == len(set(g.tolist())) and "\x1b" not in out
    assert main(["evaluate", str(path), "--label", "y", "--score", "p", "--by", "g", "--full"]) == 0
    text = capsys.readouterr().out
    assert "\x1b" not in text and "e\u241b" in text
    shown = {line.split()[0] for line in text.splitlines() if line.split() and line.split()[0] in
             {s["slice"] for s in got["slices"]}}
    assert len(shown) == len(got["slices"]) - 1  # all but the slice whose name holds the escape


def test_wide_characters_take_two_columns_in_every_table(tmp_path, capsys):
    """Slice names in CJK characters (two terminal columns each) and combining marks: the columns stay
    aligned and no line is wider than 80 terminal columns, on the command line and in the library."""
    import unicodedata

    def columns(text: str) -> int:  # terminal columns, independently of the code under test
        return sum(0 if unicodedata.combining(c) else 2 if unicodedata.east_asian_width(c) in "WF" else 1
                   for c in text)

    rng = np.random.default_rng(0)
    n = 1200
    y = rng.integers(0, 2, n)
    s = rng.random(n) + 0.3 * y
    g = rng.choice(["\u6771\u4eac\u90fd\u306e\u5e97\u8217" * 3, "\u5927\u962a", "plain", "cafe\u0301"], n)
    path = tmp_path / "cjk.csv"
    path.write_text("y,p,g\n" + "\n".join(f"{a},{b:.3f},{c}" for a, b, c in zip(y, s, g)) + "\n", encoding="utf-8")
    assert main(["evaluate", str(path), "--label", "y", "--score", "p", "--by", "g"]) == 0
    out = capsys.readouterr().out
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        texts = [out, str(precall.evaluate(y, s, by=g)),
                 str(precall.stats.compare_slices(y, s, by=g, n_resamples=30))]
    for text in texts:
        lines = text.splitlines()
        assert max(columns(line) for line in lines) <= 80
        blocks, block = [], []
        for line in lines:  # the tables' blocks: from a "slice" header to a blank line
            if line.split()[:1] == ["slice"]:
                block = [line]
                blocks.append(block)
            elif block and line.strip() and not line.startswith(("...", "legend")):
                block.append(line)
            else:
                block = []
        assert blocks
        for block in blocks:
            # the second column (right-aligned) ends at the same terminal column on every row of a block
            ends = set()
            for line in block[1:]:  # the rows (a header cell may hold a space: "best F1")
                name, second = line.split()[:2]
                ends.add(columns(line[:line.index(second, len(name)) + len(second)]))
            assert len(ends) == 1, block


def _render_table_before(header: list, rows: list, *, width: int = 80, wide: bool = False, left: int = 1,
                         indent: str = "", prose_last: bool = False, group: int = 1) -> list:
    """``render_table``'s text as it was before it could be written a block of rows at a time (the
    oracle): every cell made visible, every line made, then the table split when a line is too wide."""
    from precall._core.text import columns, pad, visible

    def aligned(header: list, rows: list, prose_last: bool) -> list:
        widths = [max(columns(r[i]) for r in [header, *rows]) for i in range(len(header))]
        last = len(header) - 1 if prose_last else -1

        def line(cells: list) -> str:
            parts = [pad(c, w, right=not (i < left or i == last)) for i, (c, w) in enumerate(zip(cells, widths))]
            return "  ".join(parts).rstrip()

        return [line(header), *(line(r) for r in rows)]

    header = [visible(h) for h in header]
    rows = [[visible(c) for c in row] for row in rows]
    lines = [indent + s for s in aligned(header, rows, prose_last)]
    if wide or max(columns(s) for s in lines) <= width:
        return lines
    keys = list(range(min(left, len(header))))
    colw = [max(columns(r[i]) for r in [header, *rows]) for i in range(len(header))]
    base = len(indent) + sum(colw[i] + 2 for i in keys)
    blocks, current, used = [], [], base
    for start in range(len(keys), len(header), group):
        members = list(range(start, min(start + group, len(header))))
        need = sum(colw[i] + 2 for i in members)
        if current and used + need - 2 > width:
            blocks.append(current)
            current, used = [], base
        current += members
        used += need
    blocks.append(current)
    out: list = []
    for b, block in enumerate(blocks):
        cols = keys + block
        if b:
            out.append("")
        out += [indent + s for s in aligned([header[i] for i in cols], [[r[i] for i in cols] for r in rows],
                                            prose_last and block[-1] == len(header) - 1)]
    return out


def test_render_table_text_is_the_renderer_before_whole_or_a_block_of_rows_at_a_time():
    """``render_table``'s text (aligned, split into column blocks to fit ``width``) is the renderer's before
    it could take its rows a block at a time, and ``render_table_chunks`` of the rows in blocks (some empty)
    joined is its lines joined, every row of a column block before the next one: random tables of awkward
    cells (wide CJK and full-width spaces, combining marks, controls and bidi characters shown by
    ``visible``, trailing spaces that ``rstrip`` removes, empty last columns), every option."""
    from precall.cli._format import render_table, render_table_chunks

    atoms = ["a", "bb", " ", "\u3000", "\u6771", "e\u0301", "\u0301", "\x1b", "\u202e", "\t", "x ", "", "123",
             "0.500000", "\xa0", "\U0001F600", "a long name"]
    rng = np.random.default_rng(7)

    def cell() -> str:
        return "".join(rng.choice(atoms, rng.integers(0, 5)))

    split = fitted = 0
    for _ in range(3000):
        n_columns, n_rows = int(rng.integers(1, 8)), int(rng.integers(0, 13))
        header = [cell() for _ in range(n_columns)]
        rows = [[cell() for _ in range(n_columns)] for _ in range(n_rows)]
        if rng.random() < 0.3:  # a last column of blanks: the lines' width is only known once made
            for row in rows:
                row[-1] = str(rng.choice(["", " ", "a "]))
        options = dict(width=int(rng.choice([5, 10, 20, 30, 80])), wide=bool(rng.random() < 0.1),
                       left=int(rng.integers(0, 4)), indent=str(rng.choice(["", "  ", "\u3000"])),
                       prose_last=bool(rng.random() < 0.3), group=int(rng.integers(1, 4)))
        try:
            want = _render_table_before(header, rows, **options)
        except IndexError:  # a table of key columns only that does not fit: refused as before
            with pytest.raises(IndexError):
                render_table(header, rows, **options)
            continue
        assert render_table(header, rows, **options) == want, (header, rows, options)
        size = int(rng.integers(1, 5))
        blocks = [rows[k:k + size] for k in range(0, len(rows), size)]
        blocks.insert(int(rng.integers(0, len(blocks) + 1)), [])
        calls = []
        pieces = list(render_table_chunks(header, lambda: calls.append(1) or iter(blocks), **options))
        assert "".join(pieces) == "\n".join(want), (header, rows, options)
        assert len(calls) <= 2 + n_columns  # the widths, maybe the lines' widths, each column block's rows
        whole = want == _render_table_before(header, rows, **{**options, "wide": True})
        split += not whole
        fitted += whole
    assert split > 300 and fitted > 300


# ---------------------------------------------------------------------------
# compare: everything computed before anything is printed; DeLong's zero variance; counts in number
def _tiny(tmp: Path, name: str, text: str) -> str:
    """A small input file of the audit (written here: the suite's data lives in the repository)."""
    path = tmp / name
    path.write_text(text)
    return str(path)


CMP_TWO = "y,a,b\n1,0.5,0.1\n0,0.5,0.9\n"  # one positive, one negative
CMP_CONST = "y,a,b\n0,0.5,0.1\n1,0.5,0.9\n0,0.5,0.3\n1,0.5,0.8\n"  # a constant, b a perfect ranking


@pytest.mark.parametrize("extra", [[], ["--wide"]])
def test_compare_prints_nothing_before_it_fails(tmp_path, capsys, extra):
    """DeLong's test needs two positives and two negatives: under --on-undefined raise one line on stderr,
    exit 2, and nothing on stdout (the input summary used to go out before the tests ran)."""
    path = _tiny(tmp_path, "two.csv", CMP_TWO)
    code, out, err = run(["compare", path, "--label", "y", "--score", "a", "--score", "b", "--on-undefined", "raise",
                          *extra], capsys)
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and "at least two positives" in err


CMP_ONE_POSITIVE = "y,s,t\n0,0.1,0.2\n1,0.5,0.3\n0,0.3,0.1\n0,0.4,0.1\n"  # the audit's onepos.csv


@pytest.mark.parametrize("metric", [[], ["--metric", "step"], ["--metric", "roc_auc"]])
def test_compare_one_positive_follows_on_undefined(tmp_path, capsys, metric):
    """One positive leaves DeLong's variance and every bootstrap interval undefined: compare takes
    --on-undefined (evaluate's default, warn) for every metric alike: NaN bounds with warnings naming
    only options compare has; nan: NaN without a warning; raise: one line saying why, exit 2, nothing on
    stdout; zero: the number.  (It used to stop on DeLong advising --on-undefined, which compare refused.)"""
    path = _tiny(tmp_path, "onepos.csv", CMP_ONE_POSITIVE)
    argv = ["compare", path, "--label", "y", "--score", "s", "--score", "t", "--resamples", "20", *metric]
    code, out, err = run([*argv, "--json"], capsys)
    tests = json.loads(out)["tests"]
    assert code == 0 and len(tests) == (3 if not metric else 2 if metric[1] == "roc_auc" else 1)
    assert all(t["low"] is None and t["high"] is None and t["p_value"] is None for t in tests)
    assert err and "on_undefined" not in err and "--on-undefined raise or zero" in err
    assert not metric or metric[1] != "roc_auc" or "DeLong's variance needs at least two positives" in err
    assert "variance of the ROC-AUC difference is zero" not in err
    code, out, err = run([*argv, "--on-undefined", "nan", "--json"], capsys)
    assert code == 0 and err == "" and all(t["low"] is None for t in json.loads(out)["tests"])
    code, out, err = run([*argv, "--on-undefined", "zero", "--json"], capsys)
    assert code == 0 and err == "" and all(t["low"] == 0.0 == t["high"] for t in json.loads(out)["tests"])
    code, out, err = run([*argv, "--on-undefined", "raise"], capsys)
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1
    assert "Stopped by --on-undefined raise; warn, nan or zero give a result instead" in err
    assert ("DeLong's variance needs at least two positives" if not metric or metric[1] == "roc_auc"
            else "at least two rows of each class") in err


def test_counts_agree_in_number(tmp_path, capsys):
    """``1 row``, never ``1 rows``, wherever the command line prints a count."""
    path = _tiny(tmp_path, "two.csv", CMP_TWO)
    code, out, _ = run(["compare", path, "--label", "y", "--score", "a", "--score", "b", "--metric", "step",
                        "--resamples", "20"], capsys)
    assert code == 0 and "positive '1' (1 row), negative '0' (1 row)" in out
    one = _tiny(tmp_path, "one.csv", "y,p\n1,0.5\n")
    code, out, _ = run(["evaluate", one, "--label", "y", "--score", "p"], capsys)
    assert code == 0 and "(1 row)" in out and "1 sample" in out and "1 rows" not in out and "1 samples" not in out
    code, out, _ = run(["explain", one, "--label", "y", "--score", "p"], capsys)
    assert code == 0 and "sum of 1 term " in out and "1 positive and 0 negatives" in out


def test_compare_delong_zero_variance_is_degenerate_not_nan(tmp_path, capsys):
    """A nonzero ROC-AUC difference whose DeLong variance is zero: z = -inf and p = 0 (printed
    ``< 1e-323``, the p-value rule), with a warning that the test is degenerate; never a NaN p-value
    beside an interval, whichever stats layer computed it."""
    path = _tiny(tmp_path, "const.csv", CMP_CONST)
    argv = ["compare", path, "--label", "y", "--score", "a", "--score", "b"]
    code, out, err = run(argv, capsys)
    assert code == 0
    delong = next(line for line in out.splitlines() if line.startswith("ROC-AUC  DeLong"))
    assert delong.split()[-1] == "1e-323" and "nan" not in out
    assert err.count("variance of the ROC-AUC difference is zero") == 1 and "degenerate" in err
    code, out, err = run([*argv, "--json"], capsys)
    test = json.loads(out)["tests"][0]
    assert code == 0 and test["method"] == "delong" and test["p_value"] == 0.0 and test["standard_error"] == 0.0
    assert any("is zero" in w for w in json.loads(out)["warnings"])
    code, out, _ = run([*argv, "--wide"], capsys)
    assert code == 0 and "-inf" in next(line for line in out.splitlines() if line.endswith(" DeLong"))


# ---------------------------------------------------------------------------
# data of one class: one policy in every command
NOPOS = "y,p\n0,0.1\n0,0.9\n0,0.3\n0,0.8\n"  # the audit's nopos.csv: every label 0
NONEG = "y,p\n1,0.1\n1,0.9\n1,0.3\n1,0.8\n"  # noneg.csv: every label 1
CMP_NOPOS = "y,a,b\n0,0.1,0.2\n0,0.9,0.9\n0,0.3,0.3\n0,0.8,0.8\n"


@pytest.mark.parametrize("policy", ["warn", "nan", "zero", "raise"])
def test_no_positives_one_policy_in_every_command(tmp_path, capsys, policy):
    """evaluate reports the AP by ``--on-undefined`` with warnings naming it; explain, compare and plot,
    which cannot show anything of an AP of no terms, a test of undefined numbers or a curve that divides
    by zero, stop with one line saying why and what to do, exit 2, nothing on stdout, whatever the policy."""
    nopos = _tiny(tmp_path, "nopos.csv", NOPOS)
    code, out, err = run(["evaluate", nopos, "--label", "y", "--score", "p", "--on-undefined", policy], capsys)
    assert code == (2 if policy == "raise" else 0)
    if policy == "warn":
        assert "average precision is undefined and reported as 0.0" in err and "--on-undefined" in err
        assert "min AP, normalised AP and AUPRG are undefined: the data have no positives" in err
    if policy == "raise":
        assert out == "" and len(err.splitlines()) == 1 and "--on-undefined" in err and "on_undefined=" not in err
    cmp = _tiny(tmp_path, "cmp_nopos.csv", CMP_NOPOS)
    commands = [["explain", nopos, "--label", "y", "--score", "p"],
                ["compare", cmp, "--label", "y", "--score", "a", "--score", "b"],
                ["compare", cmp, "--label", "y", "--score", "a", "--score", "b", "--json"],
                ["compare", cmp, "--label", "y", "--score", "a", "--by", "y"]]
    try:
        import matplotlib  # noqa: F401
        commands.append(["plot", nopos, "--label", "y", "--score", "p", "-o", str(tmp_path / "x.png")])
    except ImportError:  # pragma: no cover - the plot extra
        pass
    for argv in commands:
        code, out, err = run(argv, capsys)
        assert code == 2 and out == "", (argv, out)
        assert len(err.splitlines()) == 1 and "no row has the positive label '1'" in err, (argv, err)
        assert "Traceback" not in err and not (tmp_path / "x.png").exists()


def test_undefined_numbers_printed_come_with_a_warning(tmp_path, capsys):
    """Positives only: the normalised AP and AUPRG are NaN under every policy; evaluate and explain name
    them in one warning a run (with several models or sections too); JSON lists it."""
    noneg = _tiny(tmp_path, "noneg.csv", NONEG)
    named = "normalised AP and AUPRG are undefined: the data have no negatives"
    code, out, err = run(["evaluate", noneg, "--label", "y", "--score", "p"], capsys)
    assert code == 0 and "nan" in out and err.count(named) == 1 and "ROC AUC score is not defined" in err
    code, out, err = run(["evaluate", noneg, "--label", "y", "--score", "p", "--json"], capsys)
    assert code == 0 and any(named in w for w in json.loads(out)["warnings"])
    two = _tiny(tmp_path, "two.csv", "y,a,b\n1,0.1,0.2\n1,0.9,0.3\n")
    code, out, err = run(["evaluate", two, "--label", "y", "--score", "a", "--score", "b"], capsys)
    assert code == 0 and err.count(named) == 1 and err.count("ROC AUC score is not defined") == 1
    code, out, err = run(["explain", two, "--label", "y", "--score", "a", "--score", "b"], capsys)
    assert code == 0 and "nan" in out and err.count(named) == 1 and "--on-undefined" not in err


# ---------------------------------------------------------------------------
# long names: 80 columns (names shortened, a legend with the full ones), --wide whole
def _long_names_file(tmp: Path) -> tuple[str, list[str]]:
    """The audit's longnames.csv, made here: a 106-character label column, a 74-character positive
    label and two score columns of 126 characters."""
    label, pos, a, b = "label_" + "y" * 100, "pos_" + "p" * 70, "score_" + "a" * 120, "score_" + "b" * 120
    rng = np.random.default_rng(5)
    rows = [[pos if k % 2 else "neg_" + "n" * 70, rng.random(), rng.random()] for k in range(300)]
    path = write(tmp / "longnames.csv", [label, a, b], rows)
    return str(path), ["--label", label, "--pos-label", pos, "--score", a, "--score", b]


@pytest.mark.parametrize("command, extra", [
    ("evaluate", []), ("evaluate", ["--ci", "--resamples", "20"]), ("explain", [])])
def test_long_names_keep_80_columns(tmp_path, capsys, command, extra):
    path, names = _long_names_file(tmp_path)
    code, out, err = run([command, path, *names, *extra], capsys)
    assert code == 0, err
    assert max(len(line) for line in out.splitlines()) <= 80
    flat = "".join(line.strip() for line in out.splitlines())
    assert names[5] in flat and names[7] in flat  # each full name is shown (wrapped), in a legend if need be
    code, out, _ = run([command, path, *names, *extra, "--wide"], capsys)
    assert code == 0 and max(len(line) for line in out.splitlines()) > 126


def test_long_class_names_keep_80_columns(tmp_path, capsys):
    a, b = "class_" + "a" * 100, "class_" + "b" * 100
    rng = np.random.default_rng(3)
    path = write(tmp_path / "mc.csv", ["y", a, b, "c"],
                 [[[a, b, "c"][k % 3], *rng.random(3)] for k in range(60)])
    code, out, err = run(["evaluate", str(path), "--label", "y", "--class-columns", f"{a},{b},c"], capsys)
    assert code == 0, err
    assert max(len(line) for line in out.splitlines()) <= 80
    assert "classes:" in out and a in "".join(line.strip() for line in out.splitlines())


def test_by_names_the_undefined_numbers_of_one_class_slices(tmp_path, capsys):
    """``evaluate --by --json / --csv`` prints every slice's AUPRG, min AP and best F1: a slice of one
    class has them null, named in one warning (the text table does not show them: no warning there)."""
    path = _tiny(tmp_path, "by.csv", "y,p,g\n0,0.1,a\n1,0.9,a\n0,0.3,a\n1,0.8,a\n0,0.2,b\n0,0.4,b\n1,0.5,c\n1,0.6,c\n")
    named = "AUPRG, min AP and best F1 are undefined in 2 slices of one class ('b', 'c')"
    for style in ("--json", "--csv"):
        code, out, err = run(["evaluate", path, "--label", "y", "--score", "p", "--by", "g", style], capsys)
        assert code == 0 and err.count(named) == 1, err
    shown = json.loads(run(["evaluate", path, "--label", "y", "--score", "p", "--by", "g", "--json"], capsys)[1])
    assert any(named in w for w in shown["warnings"])
    code, out, err = run(["evaluate", path, "--label", "y", "--score", "p", "--by", "g"], capsys)
    assert code == 0 and "AUPRG" not in err and "1 slice not ranked is not shown" in out
    code, out, err = run(["evaluate", path, "--label", "y", "--score", "p", "--by", "g", "--json",
                          "--on-undefined", "nan"], capsys)
    assert code == 0 and err == ""


def test_a_class_without_rows_names_on_undefined_in_evaluate(tmp_path, capsys):
    """Multi-class evaluate: the warning naming a class without rows says --on-undefined sets its values."""
    path = _tiny(tmp_path, "mc.csv", "y,a,b,c\na,0.5,0.3,0.2\nb,0.2,0.5,0.3\na,0.6,0.2,0.2\nb,0.1,0.7,0.2\n")
    code, _, err = run(["evaluate", path, "--label", "y", "--class-columns", "a,b,c"], capsys)
    assert code == 0 and "class(es) 'c' have no rows" in err and "--on-undefined" in err
    assert len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("command", ["evaluate", "explain"])
def test_prevalence_on_one_class_is_refused_in_the_command_lines_words(tmp_path, capsys, command):
    noneg = _tiny(tmp_path, "noneg.csv", NONEG)
    code, out, err = run([command, noneg, "--label", "y", "--score", "p", "--prevalence", "0.1"], capsys)
    assert code == 2 and out == "" and len(err.splitlines()) == 1
    assert "drop --prevalence" in err and "`prevalence`" not in err


def test_wrap_and_legend_count_terminal_columns():
    """A legend of CJK names (two terminal columns a character) and prose with them: every line within
    80 terminal columns, the descriptions aligned, no character lost; ASCII as textwrap wraps it."""
    import textwrap
    import unicodedata

    from precall.cli._format import legend, wrap

    def columns(text: str) -> int:  # independently of the code under test
        return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)

    items = [("\u732b" * 5 + "..." + "\u732b" * 5, repr("\u732b" * 30)), ("x" * 11 + "..." + "x" * 10, repr("x" * 120)),
             ("dog", "a dog")]
    lines = legend(items)
    assert max(map(columns, lines)) <= 80
    starts = {columns(line[:line.index("'")]) for line in lines if "'" in line[:30]} | {
        columns(line[:line.index("a dog")]) for line in lines if "a dog" in line}
    assert len(starts) == 1  # the descriptions start at one terminal column
    assert "".join(line.strip() for line in lines).count("\u732b") == 40
    for prose in ("\u6771\u4eac\u90fd  " * 30,  # words: broken between them
                  "\u6771\u4eac\u90fd " * 30 + "/path/" + "\u732b" * 50 + ".json end"):  # a word wider than a line
        parts = wrap(prose)
        assert max(map(columns, parts)) <= 80 and "".join(parts).replace(" ", "") == prose.replace(" ", "")
        if "/" not in prose:  # greedy: a line ends where its next word would not fit
            assert all(columns(a) + 2 + columns(b.split()[0]) > 80 for a, b in zip(parts, parts[1:]))
    ascii_text = "word " * 40 + "x" * 30
    assert wrap(ascii_text) == textwrap.wrap(ascii_text, width=80, break_on_hyphens=False)


# ---------------------------------------------------------------------------
# many classes: the text bounded as --by bounds its slices (--top, --full), every class in JSON and CSV
def _many_classes(tmp: Path, k: int = 200, n: int = 1200, absent: int = 0) -> tuple[str, list[str]]:
    """``k`` classes ``k0``, ``k1``, ... (the last ``absent`` without rows) and a score column each."""
    classes = [f"k{j}" for j in range(k)]
    rng = np.random.default_rng(11)
    y = rng.integers(0, k - absent, n)
    s = np.round(rng.random((n, k)) + 0.2 * np.eye(k)[y], 4)
    path = write(tmp / "many.csv", ["y", *classes], [[classes[a], *row] for a, row in zip(y, s.tolist())])
    return str(path), classes


def test_many_classes_text_shows_the_worst_and_best_and_full_every_class(tmp_path, capsys):
    path, classes = _many_classes(tmp_path, absent=10)
    args = ["evaluate", path, "--label", "y", "--class-columns", ",".join(classes)]
    code, out, err = run(args, capsys)
    assert code == 0
    lines = out.splitlines()
    assert len(lines) <= 70 and max(map(len, lines)) <= 80  # 200 classes printed 400 lines and more
    assert len(err.splitlines()) == 1 and "(5 more) have no rows" in err  # 10 classes without rows: named 5
    text = " ".join(line.strip() for line in lines)
    assert ("shown: the 5 worst and best ranked classes by AP step, worst first; 180 more classes are not shown; "
            "10 classes not ranked (no rows, or an undefined AP) are not shown; --full for every class, --json or "
            "--csv for every number of every class") in text
    result = json.loads(run([*args, "--json"], capsys)[1])
    assert list(result["per_class"]) == classes  # every class
    ap = {c: v["average_precision"]["step"] for c, v in result["per_class"].items() if v["support"] > 0}
    ranked = sorted(ap, key=ap.get)
    header = next(line for line in lines if line.startswith("metric ") and "macro" not in line)
    assert header.split()[1:] == ranked[:5] + ranked[-5:][:len(header.split()) - 6]  # worst first
    shown = {c for line in lines if line.startswith("metric ") for c in line.split()[1:]}
    assert shown - {"macro", "weighted", "micro"} == set(ranked[:5] + ranked[-5:])
    code, out, _ = run([*args, "--top", "2"], capsys)
    assert code == 0 and "shown: the 2 worst and best ranked classes" in out
    code, out, _ = run([*args, "--full"], capsys)
    assert code == 0 and "shown:" not in out and len(out.splitlines()) > 300
    assert {c for line in out.splitlines() if line.startswith("metric ") for c in line.split()[1:]} >= set(classes)
    code, out, _ = run([*args, "--csv"], capsys)
    assert code == 0 and out.splitlines()[0].split(",")[1:201] == classes


def test_a_few_classes_are_all_shown_in_their_order(tmp_path, capsys):
    path, classes = _many_classes(tmp_path, k=10, n=300)
    code, out, _ = run(["evaluate", path, "--label", "y", "--class-columns", ",".join(classes)], capsys)
    assert code == 0 and "shown:" not in out
    shown = [c for line in out.splitlines() if line.startswith("metric ") for c in line.split()[1:]]
    assert shown[:10] == classes


def test_compare_of_many_classes_names_a_few_and_full_every_one(tmp_path, capsys):
    path, classes = _many_classes(tmp_path, k=120, n=600)
    spec = ",".join(classes)
    args = ["compare", path, "--label", "y", "--class-columns", spec, "--class-columns", spec, "--resamples", "10"]
    code, out, err = run(args, capsys)
    assert code == 0, err
    assert len(out.splitlines()) <= 25 and "'k0', 'k1', 'k2', 'k3', 'k4', ... (115 more)" in out
    code, out, _ = run([*args, "--full"], capsys)
    assert code == 0 and all(repr(c) in out for c in classes)


def test_compare_names_multiclass_models_alike(tmp_path, capsys):
    """Every model named by its columns (``P*`` for the columns ``P + class``), or every one numbered
    with its columns listed: never the first by its columns and the next ``model 2``."""
    rng = np.random.default_rng(2)
    classes = ["cat", "dog", "eel"]
    y = rng.integers(0, 3, 150)
    s = rng.random((150, 9)) + 0.5 * np.tile(np.eye(3)[y], 3)
    header = ["y", *classes, *(f"m2_{c}" for c in classes), *(f"a_very_long_column_name_{c}" for c in classes)]
    path = str(write(tmp_path / "three.csv", header, [[classes[a], *row] for a, row in zip(y, s.tolist())]))
    base = ["compare", path, "--label", "y", "--resamples", "10"]

    def scores(extra: list[str]) -> tuple[str, dict]:
        code, out, err = run([*base, *extra], capsys)
        assert code == 0, err
        line = next(x for x in out.splitlines() if x.startswith("scores"))
        return line, json.loads(run([*base, *extra, "--json"], capsys)[1])["input"]

    line, given = scores(["--class-columns", "cat,dog,eel", "--class-columns", "cat=m2_cat,dog=m2_dog,eel=m2_eel"])
    assert line == "scores      'cat,dog,eel', 'm2_*'"
    assert given["class_columns"]["m2_*"] == {c: f"m2_{c}" for c in classes}
    line, _ = scores(["--class-columns", "cat=dog,dog=cat,eel=eel", "--class-prefix", "m2_"])
    assert line == "scores      'dog,cat,eel', 'm2_*'"
    line, given = scores(["--class-columns", "cat,dog,eel", "--class-prefix", "a_very_long_column_name_"])
    assert given["score_columns"] == ["model 1", "model 2"]
    code, out, _ = run([*base, "--class-columns", "cat,dog,eel", "--class-prefix", "a_very_long_column_name_"],
                       capsys)
    text = " ".join(out.split())
    assert ("scores 'model 1' (columns 'cat', 'dog', 'eel'), 'model 2' (columns 'a_very_long_column_name_cat', "
            "'a_very_long_column_name_dog', 'a_very_long_column_name_eel')") in text
    assert "A = 'model 1', B = 'model 2'" in out


def test_compare_lists_multiclass_models_in_the_order_given(tmp_path, capsys):
    """--class-columns and --class-prefix models mixed: listed (and numbered model 1, model 2, ...) in
    the order of the command line; the --class-columns ones came first whatever the order given."""
    rng = np.random.default_rng(3)
    classes = ["cat", "dog", "eel"]
    y = rng.integers(0, 3, 120)
    s = rng.random((120, 9)) + 0.5 * np.tile(np.eye(3)[y], 3)
    header = ["y", *classes, *(f"p_{c}" for c in classes), *(f"a_very_long_column_name_{c}" for c in classes)]
    path = str(write(tmp_path / "three.csv", header, [[classes[a], *row] for a, row in zip(y, s.tolist())]))
    base = ["compare", path, "--label", "y", "--resamples", "10"]
    code, out, err = run([*base, "--class-prefix", "p_", "--class-columns", "cat,dog,eel"], capsys)
    assert code == 0, err
    assert "scores      'p_*', 'cat,dog,eel'" in out and "A = 'p_*', B = 'cat,dog,eel'" in out, out
    code, out, err = run([*base, "--class-prefix", "a_very_long_column_name_", "--class-columns", "cat,dog,eel",
                          "--class-prefix", "p_", "--json"], capsys)
    assert code == 0, err
    given = json.loads(out)["input"]
    assert given["score_columns"] == ["model 1", "model 2", "model 3"]
    assert [given["class_columns"][m]["cat"] for m in given["score_columns"]] == [
        "a_very_long_column_name_cat", "cat", "p_cat"]


def test_explain_of_many_classes_is_bounded(tmp_path, capsys):
    """``explain --class-columns`` of 200 classes printed 19,148 lines (every class); it explains the first
    few and says how to get the others (``--class``, ``--full``)."""
    rng = np.random.default_rng(2)
    k, n = 40, 600
    y = rng.integers(0, k, n)
    s = rng.random((n, k))
    path = tmp_path / "many.csv"
    header = "y," + ",".join(f"p_{c}" for c in range(k))
    np.savetxt(path, np.c_[y, s], fmt=["%d"] + ["%.4f"] * k, delimiter=",", header=header, comments="")
    code, out, err = run(["explain", str(path), "--label", "y", "--class-prefix", "p_"], capsys)
    assert code == 0, err
    assert len(out.splitlines()) < 600 and "35 more are not explained here" in " ".join(out.split())
    assert out.count("== class ") == 5
    code, out, _ = run(["explain", str(path), "--label", "y", "--class-prefix", "p_", "--class", "7"], capsys)
    assert code == 0 and out.count("== class ") == 1 and "class '7'" in out
    code, out, _ = run(["explain", str(path), "--label", "y", "--class-prefix", "p_", "--full"], capsys)
    assert code == 0 and out.count("== class ") == k
