"""The command line: ``precall evaluate`` / ``precall demo`` and ``python -m precall``.

Numbers are checked against scikit-learn computed here on the same data;
every malformed input must give exit code 2 and one line naming the file,
the line and the column, never a traceback.
"""

from __future__ import annotations

import csv
import gzip
import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import precall
from precall.cli import main
from precall.cli._format import describe

sklearn_metrics = pytest.importorskip("sklearn.metrics")
average_precision_score = sklearn_metrics.average_precision_score
roc_auc_score = sklearn_metrics.roc_auc_score


# ---------------------------------------------------------------------------
# helpers
def write_csv(path: Path, header: list[str], rows: list[list], delimiter: str = ",") -> Path:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "wt", newline="", encoding="utf-8") as f:
        writer = csv.writer(f, delimiter=delimiter, lineterminator="\n")
        writer.writerow(header)
        writer.writerows(rows)
    return path


@pytest.fixture
def data():
    rng = np.random.default_rng(7)
    n = 200
    y = (rng.random(n) < 0.3).astype(int)
    score = np.round(rng.random(n) + 0.4 * y, 2)  # rounded: ties
    weight = rng.uniform(0.1, 3.0, n)
    return y, score, weight


@pytest.fixture
def csv_file(tmp_path, data):
    y, score, weight = data
    rows = [[int(a), repr(float(b)), repr(float(c))] for a, b, c in zip(y, score, weight)]
    return write_csv(tmp_path / "scores.csv", ["y", "score", "w"], rows)


def run_json(argv, capsys) -> dict:
    code = main([*argv, "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    return json.loads(out)


def run_error(argv, capsys) -> str:
    code = main(argv)
    out, err = capsys.readouterr()
    assert code == 2, (out, err)
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("precall: error: ")
    return lines[0]


# ---------------------------------------------------------------------------
# values
def test_json_matches_sklearn(csv_file, data, capsys):
    y, score, _ = data
    result = run_json(["evaluate", str(csv_file), "--label", "y", "--score", "score"], capsys)
    assert set(result["average_precision"]) == set(precall.AP_METHODS)
    assert result["average_precision"]["step"] == pytest.approx(
        average_precision_score(y, score), abs=1e-12
    )
    assert result["roc_auc"] == pytest.approx(roc_auc_score(y, score), abs=1e-12)
    assert result["n_samples"] == len(y)
    assert result["n_pos"] == y.sum()
    assert result["n_neg"] == len(y) - y.sum()
    assert result["prevalence"] == pytest.approx(y.mean())
    assert result["input"]["pos_label"] == "1"
    assert set(result["best_f1"]) == {"threshold", "f1", "precision", "recall"}
    assert result["warnings"] == []


def test_json_equals_library_evaluate(csv_file, data, capsys):
    y, score, weight = data
    result = run_json(
        ["evaluate", str(csv_file), "--label", "y", "--score", "score", "--weight", "w",
         "--ties", "stable"],
        capsys,
    )
    expected = precall.evaluate(y, score, sample_weight=weight, ties="stable").to_dict()
    # undefined for weighted positives: NaN in Python, null in JSON
    for key in ("min_average_precision", "normalized_average_precision"):
        assert all(np.isnan(v) for v in expected.pop(key).values())
        assert all(v is None for v in result[key].values())
    for key, value in expected.items():
        if isinstance(value, str):
            assert result[key] == value, key
        else:
            assert result[key] == pytest.approx(value, rel=1e-12, abs=1e-12), key


def test_weighted_matches_sklearn(csv_file, data, capsys):
    y, score, weight = data
    result = run_json(
        ["evaluate", str(csv_file), "--label", "y", "--score", "score", "--weight", "w"], capsys
    )
    assert result["average_precision"]["step"] == pytest.approx(
        average_precision_score(y, score, sample_weight=weight), abs=1e-12
    )
    assert result["roc_auc"] == pytest.approx(
        roc_auc_score(y, score, sample_weight=weight), abs=1e-12
    )
    assert result["n_pos"] == pytest.approx(weight[y == 1].sum())


def test_text_output(csv_file, data, capsys):
    y, score, _ = data
    code = main(["evaluate", str(csv_file), "--label", "y", "--score", "score"])
    out, err = capsys.readouterr()
    assert code == 0, err
    values = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) >= 2 and (parts[0] in precall.AP_METHODS or parts[0] == "ROC-AUC") \
                and parts[0] not in values:  # the legend below repeats the names
            values[parts[0]] = float(parts[1])
    assert set(values) == {*precall.AP_METHODS, "ROC-AUC"}
    assert values["step"] == pytest.approx(average_precision_score(y, score), abs=1e-6)
    assert values["ROC-AUC"] == pytest.approx(roc_auc_score(y, score), abs=1e-6)
    joined = " ".join(out.split())
    for method in precall.AP_METHODS:  # each convention is described (in the legend, wrapped)
        assert " ".join(describe(method).split()) in joined
    assert "best F1" in out and "prevalence" in out


def test_string_labels_need_pos_label(tmp_path, capsys):
    path = write_csv(tmp_path / "s.csv", ["truth", "p"],
                     [["yes", 0.9], ["no", 0.2], ["yes", 0.6], ["no", 0.7]])
    message = run_error(["evaluate", str(path), "--label", "truth", "--score", "p"], capsys)
    assert str(path) in message and "'truth'" in message
    assert "'no'" in message and "'yes'" in message and "--pos-label" in message

    result = run_json(["evaluate", str(path), "--label", "truth", "--score", "p",
                       "--pos-label", "yes"], capsys)
    y = [1, 0, 1, 0]
    s = [0.9, 0.2, 0.6, 0.7]
    assert result["average_precision"]["step"] == pytest.approx(average_precision_score(y, s))
    assert result["roc_auc"] == pytest.approx(roc_auc_score(y, s))


def test_pos_label_absent(csv_file, capsys):
    message = run_error(["evaluate", str(csv_file), "--label", "y", "--score", "score",
                         "--pos-label", "2"], capsys)
    assert "'2'" in message and "'y'" in message and "'0'" in message


@pytest.mark.parametrize(
    "labels, positive",
    [(["-1", "1"], "1"), (["true", "false"], "true"), (["False", "True"], "True"),
     (["0.0", "1.0"], "1.0")],
)
def test_default_positive_label(tmp_path, capsys, labels, positive):
    rows = [[labels[i % 2], s] for i, s in enumerate([0.1, 0.8, 0.3, 0.4, 0.9, 0.2])]
    path = write_csv(tmp_path / "b.csv", ["t", "s"], rows)
    result = run_json(["evaluate", str(path), "--label", "t", "--score", "s"], capsys)
    assert result["input"]["pos_label"] == positive
    y = [int(r[0] == positive) for r in rows]
    s = [r[1] for r in rows]
    assert result["average_precision"]["step"] == pytest.approx(average_precision_score(y, s))


@pytest.mark.parametrize("labels", [["\uff10", "\uff11"], ["0", "\uff11"], ["\u0660", "\u0661"], ["0", "1_0"]])
def test_labels_python_reads_as_numbers_are_not_taken_for_zero_and_one(tmp_path, capsys, labels):
    """A label column of full-width or Arabic-Indic digits, or ``1_0``: ``float`` reads
    them as numbers, the text parsers do not, so the positive class is not guessed (it was: full-width
    ``\uff11`` was taken as the positive ``1``); ``--pos-label`` names it, and then the labels are text."""
    rows = [[labels[i % 2], s] for i, s in enumerate([0.1, 0.8, 0.3, 0.4, 0.9, 0.2])]
    path = write_csv(tmp_path / "w.csv", ["t", "s"], rows)
    message = run_error(["evaluate", str(path), "--label", "t", "--score", "s"], capsys)
    assert "positive class is ambiguous" in message and "--pos-label" in message
    result = run_json(["evaluate", str(path), "--label", "t", "--score", "s", "--pos-label", labels[1]], capsys)
    y = [int(r[0] == labels[1]) for r in rows]
    assert result["average_precision"]["step"] == pytest.approx(average_precision_score(y, [r[1] for r in rows]))


def test_multiclass_one_vs_rest(tmp_path, capsys):
    rows = [["a", 0.9], ["b", 0.8], ["c", 0.7], ["a", 0.6], ["b", 0.1], ["a", 0.3]]
    path = write_csv(tmp_path / "m.csv", ["t", "s"], rows)
    run_error(["evaluate", str(path), "--label", "t", "--score", "s"], capsys)
    result = run_json(["evaluate", str(path), "--label", "t", "--score", "s",
                       "--pos-label", "a"], capsys)
    y = [int(r[0] == "a") for r in rows]
    assert result["average_precision"]["step"] == pytest.approx(
        average_precision_score(y, [r[1] for r in rows])
    )


def test_gzip_and_tsv(tmp_path, data, capsys):
    y, score, _ = data
    rows = [[int(a), float(b)] for a, b in zip(y, score)]
    expected = average_precision_score(y, score)
    for name, delimiter in (("d.csv.gz", ","), ("d.tsv", "\t"), ("d.tsv.gz", "\t")):
        path = write_csv(tmp_path / name, ["y", "score"], rows, delimiter=delimiter)
        result = run_json(["evaluate", str(path), "--label", "y", "--score", "score"], capsys)
        assert result["average_precision"]["step"] == pytest.approx(expected, abs=1e-12), name


def test_one_class_warns_and_json_is_valid(tmp_path, capsys):
    path = write_csv(tmp_path / "one.csv", ["y", "s"], [[1, 0.2], [1, 0.5], [1, 0.9]])
    code = main(["evaluate", str(path), "--label", "y", "--score", "s", "--json"])
    out, err = capsys.readouterr()
    assert code == 0
    result = json.loads(out)  # NaN is written as null
    assert result["roc_auc"] is None
    assert result["warnings"]
    assert "precall: warning:" in err and str(path) in err


# ---------------------------------------------------------------------------
# malformed input: exit code 2, one line naming file, line and column
GOOD = [["1", "0.9"], ["0", "0.4"], ["1", "0.7"], ["0", "0.1"]]


@pytest.mark.parametrize(
    "rows, line, column, words",
    [
        ([*GOOD[:2], ["1", "abc"], *GOOD[2:]], 4, "s", ["number", "'abc'"]),
        ([*GOOD[:3], ["0", ""]], 5, "s", ["number", "empty"]),
        ([*GOOD, ["0", "nan"]], 6, "s", ["finite", "'nan'"]),
        ([["1", "inf"], *GOOD], 2, "s", ["finite", "'inf'"]),
        ([*GOOD[:1], ["", "0.5"], *GOOD[1:]], 3, "y", ["empty label"]),
    ],
)
def test_bad_score_or_label(tmp_path, capsys, rows, line, column, words):
    path = write_csv(tmp_path / "bad.csv", ["y", "s"], rows)
    message = run_error(["evaluate", str(path), "--label", "y", "--score", "s"], capsys)
    assert str(path) in message
    assert f"line {line}" in message
    assert f"column '{column}'" in message
    for word in words:
        assert word in message


def test_negative_weight(tmp_path, capsys):
    rows = [["1", "0.9", "1"], ["0", "0.4", "2"], ["1", "0.7", "-0.5"]]
    path = write_csv(tmp_path / "w.csv", ["y", "s", "w"], rows)
    message = run_error(
        ["evaluate", str(path), "--label", "y", "--score", "s", "--weight", "w"], capsys
    )
    assert str(path) in message and "line 4" in message and "column 'w'" in message
    assert "non-negative" in message and "'-0.5'" in message


@pytest.mark.parametrize("value, word", [("x", "number"), ("nan", "finite")])
def test_bad_weight(tmp_path, capsys, value, word):
    rows = [["1", "0.9", "1"], ["0", "0.4", value]]
    path = write_csv(tmp_path / "w.csv", ["y", "s", "w"], rows)
    message = run_error(
        ["evaluate", str(path), "--label", "y", "--score", "s", "--weight", "w"], capsys
    )
    assert "line 3" in message and "column 'w'" in message and word in message


@pytest.mark.parametrize("engine", [[], ["--stream"], ["--engine", "dask", "--scheduler", "synchronous"]])
def test_subnormal_weight_is_refused_on_its_line(tmp_path, capsys, engine):
    rows = [["1", "0.9", "1"], ["0", "0.4", "0"], ["1", "0.7", "5e-324"]]
    path = write_csv(tmp_path / "w.csv", ["y", "s", "w"], rows)
    message = run_error(["evaluate", str(path), "--label", "y", "--score", "s", "--weight", "w", *engine], capsys)
    assert "line 4" in message and "column 'w'" in message and "'5e-324'" in message
    assert "0 or at least 2.2250738585072014e-308" in message


def test_all_zero_weights(tmp_path, capsys):
    path = write_csv(tmp_path / "z.csv", ["y", "s", "w"], [["1", "0.9", "0"], ["0", "0.4", "0"]])
    message = run_error(
        ["evaluate", str(path), "--label", "y", "--score", "s", "--weight", "w"], capsys
    )
    assert "column 'w'" in message and "zero" in message


@pytest.mark.parametrize("option", ["--label", "--score", "--weight"])
def test_missing_column(csv_file, capsys, option):
    argv = {"--label": "y", "--score": "score"}
    argv[option] = "nope"
    args = ["evaluate", str(csv_file)]
    for key, value in argv.items():
        args += [key, value]
    message = run_error(args, capsys)
    assert str(csv_file) in message and "line 1" in message
    assert "'nope'" in message and option in message
    assert "'y', 'score', 'w'" in message  # the available columns


def test_empty_file(tmp_path, capsys):
    path = tmp_path / "empty.csv"
    path.write_text("")
    message = run_error(["evaluate", str(path), "--label", "y", "--score", "s"], capsys)
    assert str(path) in message and "empty" in message


def test_header_only(tmp_path, capsys):
    path = tmp_path / "header.csv"
    path.write_text("y,s\n")
    message = run_error(["evaluate", str(path), "--label", "y", "--score", "s"], capsys)
    assert str(path) in message and "no data rows" in message and "line 1" in message


def test_missing_file(tmp_path, capsys):
    path = tmp_path / "nowhere.csv"
    message = run_error(["evaluate", str(path), "--label", "y", "--score", "s"], capsys)
    assert str(path) in message and "no such file" in message


def test_short_row_and_blank_line(tmp_path, capsys):
    path = tmp_path / "ragged.csv"
    path.write_text("y,s\n1,0.9\n0\n1,0.3\n")
    message = run_error(["evaluate", str(path), "--label", "y", "--score", "s"], capsys)
    assert "line 3" in message and "column 's'" in message and "1 fields" in message

    path.write_text("y,s\n1,0.9\n\n0,0.3\n")
    message = run_error(["evaluate", str(path), "--label", "y", "--score", "s"], capsys)
    assert "line 3" in message and "empty line" in message

    path.write_text("y,s\n1,0.9\n0,0.3\n\n\n")  # trailing blank lines are not rows
    result = run_json(["evaluate", str(path), "--label", "y", "--score", "s"], capsys)
    assert result["n_samples"] == 2


def test_line_numbers_count_physical_lines(tmp_path, capsys):
    # a quoted field spanning two lines: the bad row after it is on line 5
    path = tmp_path / "quoted.csv"
    path.write_text('y,s,note\n1,0.9,"two\nlines"\n0,0.3,x\n1,oops,y\n')
    message = run_error(["evaluate", str(path), "--label", "y", "--score", "s"], capsys)
    assert "line 5" in message and "'oops'" in message


def test_usage_errors_return_2(capsys):
    assert main([]) == 2
    assert main(["evaluate"]) == 2
    assert main(["evaluate", "x.csv", "--label", "y", "--score", "s", "--ties", "bad"]) == 2
    capsys.readouterr()
    assert main(["--version"]) == 0
    assert precall.__version__ in capsys.readouterr().out


# ---------------------------------------------------------------------------
# demo
def test_demo(capsys):
    code = main(["demo"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "yardstick" in out and "MIT" in out and "two_class_example" in out
    assert "case_weight" in out
    # the seed example: rank table and every convention
    assert "ThresholdTable: 10 rows (ties='stable')" in out
    for method in precall.AP_METHODS:
        assert method in out
    assert "0.768849" in out and "0.791667" in out and "0.803030" in out


def test_demo_numbers_match_sklearn(capsys):
    from importlib import resources

    resource = resources.files("precall") / "data" / "yardstick_two_class_example.csv"
    with resource.open("r", encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f))
    y = np.array([r["truth"] == "Class1" for r in rows], dtype=int)
    s = np.array([float(r["Class1"]) for r in rows])
    w = np.array([float(r["case_weight"]) for r in rows])
    main(["demo"])
    out = capsys.readouterr().out
    assert f"{average_precision_score(y, s):.6f}" in out
    assert f"{roc_auc_score(y, s):.6f}" in out
    assert f"{average_precision_score(y, s, sample_weight=w):.6f}" in out
    assert f"{roc_auc_score(y, s, sample_weight=w):.6f}" in out


def test_python_dash_m_demo():
    proc = subprocess.run(
        [sys.executable, "-m", "precall", "demo"],
        capture_output=True, text=True, timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert "yardstick" in proc.stdout and "MIT" in proc.stdout


def test_python_dash_m_error_exit_code(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "precall", "evaluate", str(tmp_path / "missing.csv"),
         "--label", "y", "--score", "s"],
        capture_output=True, text=True, timeout=120,
    )
    assert proc.returncode == 2
    assert proc.stderr.startswith("precall: error: ") and "Traceback" not in proc.stderr


# ---------------------------------------------------------------------------
# multi-class: --class-columns
HPC_CLASSES = ["VF", "F", "M", "L"]


@pytest.fixture
def hpc_cv(shared_data_dir):
    path = shared_data_dir / "yardstick_hpc_cv.csv"
    if not path.is_file():
        pytest.skip(f"{path} not found")
    with open(path, newline="", encoding="utf-8-sig") as f:
        rows = list(csv.DictReader(f))
    y = np.array([r["obs"] for r in rows])
    scores = np.array([[float(r[c]) for c in HPC_CLASSES] for r in rows])
    weights = np.array([float(r["case_weight"]) for r in rows])
    return path, y, scores, weights


@pytest.mark.parametrize("weighted", [False, True])
def test_class_columns_match_sklearn(hpc_cv, capsys, weighted):
    label_binarize = pytest.importorskip("sklearn.preprocessing").label_binarize
    path, y, scores, weights = hpc_cv
    argv = ["evaluate", str(path), "--label", "obs", "--class-columns", ",".join(HPC_CLASSES)]
    w = None
    if weighted:
        argv += ["--weight", "case_weight"]
        w = weights
    result = run_json(argv, capsys)

    assert result["classes"] == HPC_CLASSES
    assert list(result["per_class"]) == HPC_CLASSES
    y_bin = label_binarize(y, classes=HPC_CLASSES)
    for k, c in enumerate(HPC_CLASSES):
        entry = result["per_class"][c]
        assert set(entry["average_precision"]) == set(precall.AP_METHODS)
        expected = average_precision_score(y_bin[:, k], scores[:, k], sample_weight=w)
        assert entry["average_precision"]["step"] == pytest.approx(expected, rel=1e-9)
        support = np.sum(y == c) if w is None else w[y == c].sum()
        assert entry["support"] == pytest.approx(support, rel=1e-12)

    for average in ("macro", "weighted", "micro"):
        assert set(result["average_precision"][average]) == set(precall.AP_METHODS)
    assert result["average_precision"]["macro"]["step"] == pytest.approx(
        average_precision_score(y_bin, scores, average="macro", sample_weight=w), rel=1e-9
    )
    # scikit-learn wants sorted labels here: reorder the columns to match (macro is
    # invariant to the class order)
    order = np.argsort(HPC_CLASSES)
    assert result["roc_auc"]["ovr"]["macro"] == pytest.approx(
        roc_auc_score(y, scores[:, order], multi_class="ovr",
                      labels=[HPC_CLASSES[i] for i in order], average="macro",
                      sample_weight=w),
        rel=1e-9,
    )
    assert set(result["roc_auc"]["ovr"]) == {"macro", "weighted", "micro"}
    # micro one-vs-rest: every (row, class) cell pooled, as roc_auc_score on the indicator
    assert result["roc_auc"]["ovr"]["micro"] == pytest.approx(
        roc_auc_score(y_bin, scores, average="micro", sample_weight=w), rel=1e-9
    )
    assert result["roc_auc"]["ovo"]["macro"] == pytest.approx(
        precall.roc_auc(y, scores, labels=HPC_CLASSES, multi_class="ovo", sample_weight=w),
        rel=1e-12,
    )
    assert result["warnings"] == []


def test_class_columns_text_and_method(hpc_cv, capsys):
    path = hpc_cv[0]
    code = main(["evaluate", str(path), "--label", "obs", "--class-columns", "VF,F,M,L"])
    out, err = capsys.readouterr()
    assert code == 0, err
    for word in ("support", *precall.AP_METHODS, "ROC-AUC", "macro", "weighted", "micro",
                 "ROC-AUC OvO", "VF", "L"):
        assert word in out
    result = run_json(["evaluate", str(path), "--label", "obs", "--class-columns", "VF,F,M,L",
                       "--method", "voc2007", "--ties", "stable"], capsys)
    assert set(result["average_precision"]["macro"]) == {"voc2007"}
    assert result["ties"] == "stable"


def _small_multiclass(tmp_path) -> Path:
    rows = [["a", 0.7, 0.2, 0.1], ["b", 0.2, 0.5, 0.3], ["c", 0.1, 0.3, 0.6],
            ["d", 0.3, 0.3, 0.4], ["a", 0.5, 0.4, 0.1]]
    return write_csv(tmp_path / "mc.csv", ["y", "a", "b", "c"], rows)


def test_class_columns_unknown_label(tmp_path, capsys):
    path = _small_multiclass(tmp_path)
    message = run_error(["evaluate", str(path), "--label", "y", "--class-columns", "a,b,c"],
                        capsys)
    assert str(path) in message and "line 5" in message and "column 'y'" in message
    assert "'d'" in message and "'a', 'b', 'c'" in message


def test_class_columns_with_score_is_usage_error(tmp_path, capsys):
    path = _small_multiclass(tmp_path)
    code = main(["evaluate", str(path), "--label", "y", "--score", "a",
                 "--class-columns", "a,b,c"])
    err = capsys.readouterr().err
    assert code == 2 and "not allowed with" in err and "Traceback" not in err


def test_class_columns_missing_column(tmp_path, capsys):
    path = _small_multiclass(tmp_path)
    message = run_error(["evaluate", str(path), "--label", "y", "--class-columns", "a,b,zz"],
                        capsys)
    assert str(path) in message and "line 1" in message and "'zz'" in message
    assert "--class-columns" in message and "'y', 'a', 'b', 'c'" in message


@pytest.mark.parametrize("spec, word", [("a,a,b", "twice"), ("a,,b", "empty"), ("a", "two")])
def test_class_columns_bad_spec(tmp_path, capsys, spec, word):
    path = _small_multiclass(tmp_path)
    message = run_error(["evaluate", str(path), "--label", "y", "--class-columns", spec], capsys)
    assert word in message


def test_class_columns_rejects_pos_label_and_method_needs_it(tmp_path, capsys):
    path = _small_multiclass(tmp_path)
    message = run_error(["evaluate", str(path), "--label", "y", "--class-columns", "a,b,c",
                         "--pos-label", "a"], capsys)
    assert "--pos-label" in message
    message = run_error(["evaluate", str(path), "--label", "y", "--score", "a",
                         "--pos-label", "a", "--method", "step"], capsys)
    assert "--method" in message


# ---------------------------------------------------------------------------
# --ci and compare (precall.stats)
def test_evaluate_ci_matches_the_stats_api(csv_file, data, capsys):
    import functools

    from precall import stats

    y, score, _ = data
    result = run_json(["evaluate", str(csv_file), "--label", "y", "--score", "score", "--ci",
                       "--resamples", "300", "--seed", "5", "--level", "0.9"], capsys)
    iv = result["intervals"]
    assert iv["level"] == 0.9 and iv["bootstrap"] == {
        "method": "percentile", "n_resamples": 300, "seed": 5, "stratified": True, "resample": "counts",
        "n_blocks": None}
    # one set of resamples for every convention, drawn as counts (unweighted, grouped ties)
    every = stats.bootstrap_cis([functools.partial(precall.average_precision, method=m) for m in precall.AP_METHODS],
                                y, score, n_resamples=300, level=0.9, random_state=5, resample="counts")
    for m, expected in zip(precall.AP_METHODS, every):
        got = iv["average_precision"][m]
        assert (got["low"], got["high"]) == (expected.low, expected.high), m
        assert got["low"] <= result["average_precision"][m] <= got["high"]
    delong = stats.roc_auc_ci(y, score, level=0.9)
    assert iv["roc_auc"]["method"] == "delong"
    assert (iv["roc_auc"]["low"], iv["roc_auc"]["high"]) == (delong.low, delong.high)


@pytest.mark.parametrize("level,shown", [("0.999", "99.9%"), ("0.975", "97.5%"), ("0.9999", "99.99%"),
                                         ("0.95", "95%")])
def test_every_ci_header_prints_the_level_with_the_digits_it_has(level, shown, capsys):
    """A level is never rounded to a whole percent (0.999 is not "100% CI"): evaluate's, its
    slices' and compare's headers print it as :func:`precall._core.text.percent` does."""
    asah = Path(__file__).parent / "data" / "pROC_aSAH.csv"
    base = [str(asah), "--label", "outcome", "--pos-label", "Poor", "--score", "s100b", "--level", level,
            "--resamples", "200"]
    outputs = {
        "evaluate": ["evaluate", *base, "--ci"],
        "evaluate --by": ["evaluate", *base, "--ci", "--by", "gender"],
        "compare": ["compare", *base, "--score", "ndka"],
    }
    for what, argv in outputs.items():
        assert main(argv) == 0, what
        out = capsys.readouterr().out
        headers = re.findall(r"\S+% CI", out)
        assert headers and set(headers) == {f"{shown} CI"}, (what, headers)


def test_evaluate_ci_weighted_bootstraps_roc_auc(csv_file, data, capsys):
    y, score, w = data
    result = run_json(["evaluate", str(csv_file), "--label", "y", "--score", "score", "--weight", "w", "--ci",
                       "--resamples", "200", "--ci-method", "bca"], capsys)
    roc = result["intervals"]["roc_auc"]
    assert roc["method"] == "bca" and roc["n_degenerate"] == 0
    assert roc["low"] < result["roc_auc"] < roc["high"]


def test_evaluate_ci_text_shows_the_intervals(csv_file, capsys):
    assert main(["evaluate", str(csv_file), "--label", "y", "--score", "score", "--ci",
                 "--resamples", "100"]) == 0
    out = capsys.readouterr().out
    assert "95% CI" in out and "(DeLong)" in out and "100 stratified bootstrap resamples" in out
    assert out.count("[") >= 7  # six conventions and ROC-AUC


@pytest.fixture
def two_models(tmp_path):
    rng = np.random.default_rng(3)
    n = 150
    y = (rng.random(n) < 0.4).astype(int)
    a = np.round(rng.normal(size=n) + y, 3)
    b = np.round(a + rng.normal(size=n), 3)
    rows = [[int(t), repr(float(p)), repr(float(q))] for t, p, q in zip(y, a, b)]
    return write_csv(tmp_path / "models.csv", ["y", "a", "b"], rows), y, a, b


def test_compare_matches_the_stats_api(two_models, capsys):
    import functools

    from precall import stats

    path, y, a, b = two_models
    result = run_json(["compare", str(path), "--label", "y", "--score", "a", "--score", "b",
                       "--metric", "roc_auc", "--metric", "voc2010", "--resamples", "250"], capsys)
    tests = result["tests"]
    assert [(t["metric"], t["method"]) for t in tests] == [
        ("ROC-AUC", "delong"), ("ROC-AUC", "percentile"), ("AP voc2010", "percentile")]
    delong = stats.roc_auc_test(y, a, b)
    assert tests[0]["statistic"] == delong.statistic and tests[0]["p_value"] == delong.p_value
    # one set of resamples for both metrics, drawn as joint counts (unweighted, grouped ties)
    _, boot = stats.bootstrap_tests([precall.roc_auc, functools.partial(precall.average_precision, method="voc2010")],
                                    y, a, b, n_resamples=250, random_state=0, resample="counts")
    assert tests[2]["resample"] == "counts"
    assert (tests[2]["low"], tests[2]["high"], tests[2]["p_value"]) == (boot.low, boot.high, boot.p_value)
    assert tests[2]["difference"] == pytest.approx(
        precall.average_precision(y, a, method="voc2010") - precall.average_precision(y, b, method="voc2010"))


def test_compare_text_and_subprocess(two_models):
    path, *_ = two_models
    proc = subprocess.run(
        [sys.executable, "-m", "precall", "compare", str(path), "--label", "y", "--score", "a",
         "--score", "b", "--resamples", "100"],
        capture_output=True, text=True, check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert "DeLong" in proc.stdout and "bootstrap" in proc.stdout and "(percentile, seed 0)" in proc.stdout
    assert "AP step" in proc.stdout and "95% CI of A - B" in proc.stdout


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--score", "a"], "at least two different --score"),
        (["--score", "a", "--score", "nope"], "nope"),
        (["--score", "a", "--score", "b", "--level", "1.5"], "--level"),
        (["--score", "a", "--score", "b", "--resamples", "1"], "--resamples"),
        (["--score", "a", "--score", "b", "--seed", "x"], "--seed"),
    ],
)
def test_compare_bad_usage_exits_2(two_models, capsys, extra, message):
    path, *_ = two_models
    assert main(["compare", str(path), "--label", "y", *extra]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_ci_with_class_columns_bootstraps_the_macro_averages(hpc_cv, capsys):
    path, y, scores, _ = hpc_cv
    result = run_json(["evaluate", str(path), "--label", "obs", "--class-columns", "VF,F,M,L", "--ci",
                       "--resamples", "30", "--seed", "3", "--method", "coco"], capsys)
    iv = result["intervals"]
    ap = precall.stats.bootstrap_ci(
        lambda t, s, sample_weight=None: precall.average_precision(
            t, s, method="coco", average="macro", labels=HPC_CLASSES, sample_weight=sample_weight),
        y, scores, n_resamples=30, random_state=3)
    assert (iv["average_precision"]["coco"]["low"], iv["average_precision"]["coco"]["high"]) == \
        pytest.approx((ap.low, ap.high), rel=1e-12)
    roc = precall.stats.bootstrap_ci(
        lambda t, s, sample_weight=None: precall.roc_auc(t, s, average="macro", labels=HPC_CLASSES,
                                                         sample_weight=sample_weight),
        y, scores, n_resamples=30, random_state=3)
    assert (iv["roc_auc"]["low"], iv["roc_auc"]["high"]) == pytest.approx((roc.low, roc.high), rel=1e-12)
    assert iv["roc_auc"]["low"] < result["roc_auc"]["ovr"]["macro"] < iv["roc_auc"]["high"]


# ---------------------------------------------------------------------------
# explain
SEED_ROWS = list(zip([0, 0, 1, 0, 1, 1, 0, 1, 1, 1], [0.65, 0.1, 0.15, 0.43, 0.97, 0.24, 0.82, 0.7, 0.32, 0.84]))


def test_explain_prints_the_rank_table_and_every_sum(tmp_path, capsys):
    path = write_csv(tmp_path / "seed.csv", ["y", "s"], [list(r) for r in SEED_ROWS])
    assert main(["explain", str(path), "--label", "y", "--score", "s", "--digits", "6", "--full"]) == 0
    out = capsys.readouterr().out
    y, s = zip(*SEED_ROWS)
    for m in precall.AP_METHODS:
        ap = precall.average_precision(y, s, method=m, ties="stable")
        assert f"{m}: {describe(m)}" in " ".join(out.split("\n"))
        assert f"= {ap:.6f}" in out
    # the seed table: rank 3 is the negative at 0.82, TP 2, FP 1, precision 2/3, envelope 3/4
    row = next(line for line in out.splitlines() if line.startswith("3 "))
    assert row.split() == ["3", "0.82", "neg", "2", "1", "3", "4", "0.666667", "0.333333", "0.750000"]
    assert "0.00..0.30 (4 pt)" in out  # voc2007: four grid points at precision 1


def test_explain_grouped_ties_one_method_and_truncation(tmp_path, capsys):
    rng = np.random.default_rng(1)
    rows = [[int(a), round(float(b), 2)] for a, b in zip(rng.integers(0, 2, 300), rng.random(300))]
    path = write_csv(tmp_path / "big.csv", ["y", "s"], rows)
    assert main(["explain", str(path), "--label", "y", "--score", "s", "--ties", "group",
                 "--method", "coco", "--max-rows", "10"]) == 0
    out = capsys.readouterr().out
    assert "coco:" in out and "step:" not in out and "rows)" in out
    table = out.split("Rank table")[1].split("\n\n")[0]
    assert " / -" in table  # grouped label column: +positives / -negatives


def test_explain_needs_an_unambiguous_positive_label(tmp_path, capsys):
    path = write_csv(tmp_path / "neg.csv", ["y", "s"], [[0, 0.1], [0, 0.2]])
    assert main(["explain", str(path), "--label", "y", "--score", "s", "--pos-label", "0"]) == 0
    capsys.readouterr()
    path = write_csv(tmp_path / "neg2.csv", ["y", "s"], [["a", 0.1], ["b", 0.2]])
    assert main(["explain", str(path), "--label", "y", "--score", "s"]) == 2
    assert "--pos-label" in capsys.readouterr().err


# ---------------------------------------------------------------------------
# operating points, --markdown, --csv
def test_operating_points_match_the_table(csv_file, data, capsys):
    y, score, _ = data
    result = run_json(["evaluate", str(csv_file), "--label", "y", "--score", "score", "--at-recall", "0.8",
                       "--at-precision", "0.7", "--at-threshold", "0.5", "--at-precision", "1.0"], capsys)
    table = precall.threshold_table(y, score)
    points = result["operating_points"]
    assert [(p["target"], p["value"]) for p in points] == [
        ("recall", 0.8), ("precision", 0.7), ("precision", 1.0), ("threshold", 0.5)]
    for p in points:
        try:
            expected = table.operating_point(**{p["target"]: p["value"]})
        except ValueError:
            assert p["reached"] is False
            continue
        assert p["reached"] is True
        for field in ("threshold", "tp", "fp", "tn", "fn", "precision", "recall", "fpr", "f1"):
            assert p[field] == getattr(expected, field), field


def test_markdown_and_csv_carry_the_json_numbers(csv_file, capsys):
    argv = ["evaluate", str(csv_file), "--label", "y", "--score", "score", "--at-recall", "0.5"]
    result = run_json(argv, capsys)
    assert main([*argv, "--csv"]) == 0
    rows = list(csv.reader(capsys.readouterr().out.splitlines()))
    assert rows[0] == ["metric", "value", "ci_low", "ci_high"]
    values = {r[0]: float(r[1]) for r in rows[1:]}
    for m in precall.AP_METHODS:
        assert values[f"AP {m}"] == result["average_precision"][m]
    assert values["ROC-AUC"] == result["roc_auc"]
    assert values["at recall 0.5: precision"] == result["operating_points"][0]["precision"]
    assert main([*argv, "--markdown", "--digits", "4"]) == 0
    out = capsys.readouterr().out
    assert f"| AP step | {result['average_precision']['step']:.4f} |" in out
    assert main([*argv, "--markdown", "--json"]) == 2  # one output format at a time


def test_binary_only_options_are_refused_with_class_columns(tmp_path, capsys):
    path = write_csv(tmp_path / "mc.csv", ["y", "A", "B", "C"],
                     [["A", 0.5, 0.3, 0.2], ["B", 0.2, 0.5, 0.3], ["C", 0.1, 0.2, 0.7]])
    assert main(["evaluate", str(path), "--label", "y", "--class-columns", "A,B,C", "--at-recall", "0.5"]) == 2
    assert "apply to binary input" in capsys.readouterr().err


def test_several_scores_side_by_side(tmp_path, capsys):
    rng = np.random.default_rng(4)
    y = rng.integers(0, 2, 80)
    a, b = np.round(rng.random(80) + 0.3 * y, 2), np.round(rng.random(80), 2)
    path = write_csv(tmp_path / "ab.csv", ["y", "a", "b"], [[int(p), q, r] for p, q, r in zip(y, a, b)])
    base = ["evaluate", str(path), "--label", "y"]
    both = run_json([*base, "--score", "a", "--score", "b"], capsys)["models"]
    assert list(both) == ["a", "b"]
    for name in ("a", "b"):
        alone = run_json([*base, "--score", name], capsys)
        assert both[name] == alone
    assert main([*base, "--score", "a", "--score", "b", "--csv"]) == 0
    rows = list(csv.reader(capsys.readouterr().out.splitlines()))
    assert rows[0] == ["metric", "a", "b"]
    step = next(r for r in rows if r[0] == "AP step")
    assert [float(step[1]), float(step[2])] == [both["a"]["average_precision"]["step"],
                                                both["b"]["average_precision"]["step"]]
    assert main([*base, "--score", "a", "--score", "b"]) == 0
    out = capsys.readouterr().out
    assert "metric" in out and f"{both['b']['roc_auc']:.6f}" in out


# ---------------------------------------------------------------------------
# class imbalance: --prevalence, min AP, normalised AP, AUPRG
def _deployment_weights(y, weight, pi):
    """Negatives' weights scaled so that positives are pi of the total (the definition)."""
    w = np.ones(len(y)) if weight is None else np.asarray(weight, dtype=float)
    factor = (1 - pi) / pi * w[y == 1].sum() / w[y == 0].sum()
    return np.where(y == 1, w, w * factor)


@pytest.mark.parametrize("weighted", [False, True])
def test_prevalence_json_matches_sklearn_on_reweighted_data(csv_file, data, capsys, weighted):
    y, score, weight = data
    argv = ["evaluate", str(csv_file), "--label", "y", "--score", "score", "--prevalence", "0.001",
            "--prevalence", "0.05"] + (["--weight", "w"] if weighted else [])
    result = run_json(argv, capsys)
    assert [e["requested"] for e in result["at_prevalence"]] == [0.001, 0.05]
    for entry in result["at_prevalence"]:
        pi = entry["requested"]
        w2 = _deployment_weights(y, weight if weighted else None, pi)
        assert entry["average_precision"]["step"] == pytest.approx(
            average_precision_score(y, score, sample_weight=w2), rel=1e-9)
        assert entry["prevalence"] == pytest.approx(pi, rel=1e-12)
        assert entry["roc_auc"] == pytest.approx(result["roc_auc"], rel=1e-12)
    # the rows given, as precall.evaluate(prevalence=) and --stream / --engine dask count them
    assert [e["n_samples"] for e in result["at_prevalence"]] == [len(y)] * 2 == [
        precall.evaluate(y, score, prevalence=0.05).n_samples] * 2
    for engine in (["--stream"], ["--engine", "dask", "--scheduler", "synchronous"]):
        streamed = run_json([*argv, *engine], capsys)
        assert [e["n_samples"] for e in streamed["at_prevalence"]] == [len(y)] * 2
    # the test-set numbers are unchanged, and carry their context
    assert result["average_precision"]["step"] == pytest.approx(
        average_precision_score(y, score, sample_weight=weight if weighted else None), rel=1e-12)
    library = precall.evaluate(y, score, sample_weight=weight if weighted else None)
    assert result["auprg"] == library.auprg
    if weighted:  # fractional weights on the positives: no count, no minimum
        assert result["min_average_precision"]["step"] is None
    else:
        assert result["min_average_precision"]["step"] == precall.min_average_precision(
            int(y.sum()), int((1 - y).sum()))
        assert result["normalized_average_precision"] == library.normalized_average_precision


def test_prevalence_text_and_csv(csv_file, data, capsys):
    y, score, _ = data
    argv = ["evaluate", str(csv_file), "--label", "y", "--score", "score", "--prevalence", "0.01"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    header = next(line for line in out.splitlines() if line.startswith("convention"))
    assert header.split()[:6] == ["convention", "AP", "min", "AP", "normalised", "AP"] and "AP at 0.01" in header
    step = next(line.split() for line in out.splitlines() if line.startswith("step "))
    at = precall.average_precision(y, score, prevalence=0.01)
    assert float(step[1]) == pytest.approx(average_precision_score(y, score), abs=5e-7)
    assert float(step[2]) == pytest.approx(precall.min_average_precision(int(y.sum()), int((1 - y).sum())), abs=5e-7)
    assert float(step[4]) == pytest.approx(at, abs=5e-7)
    assert "AUPRG" in out and "random-classifier baseline" in out
    assert main([*argv, "--csv"]) == 0
    values = {r[0]: float(r[1]) for r in list(csv.reader(capsys.readouterr().out.splitlines()))[1:]}
    assert values["AP step at prevalence 0.01"] == at
    assert values["AUPRG"] == precall.auprg(y, score)
    assert values["min AP voc2010"] == pytest.approx(y.mean(), rel=1e-12)  # the envelope's minimum: pi


@pytest.mark.parametrize("engine", [("--stream", "--chunk-rows", "37"), ("--engine", "dask", "--scheduler", "threads")])
def test_one_pass_engines_carry_the_context_and_prevalence(csv_file, capsys, engine):
    if "dask" in engine:
        pytest.importorskip("dask.dataframe")
    argv = ["evaluate", str(csv_file), "--label", "y", "--score", "score", "--weight", "w",
            "--prevalence", "0.02", "--prevalence", "0.3"]
    memory, other = run_json(argv, capsys), run_json([*argv, *engine], capsys)
    assert other["auprg"] == pytest.approx(memory["auprg"], rel=1e-12)
    assert other["min_average_precision"] == memory["min_average_precision"]  # None: weights are not counts
    assert len(other["at_prevalence"]) == 2
    for a, b in zip(memory["at_prevalence"], other["at_prevalence"]):
        assert a["requested"] == b["requested"]
        assert b["average_precision"] == pytest.approx(a["average_precision"], rel=1e-12)
        assert b["auprg"] == pytest.approx(a["auprg"], rel=1e-12)
        assert b["roc_auc"] == pytest.approx(a["roc_auc"], rel=1e-12)
        assert b["prevalence"] == pytest.approx(a["requested"], rel=1e-12)


def test_prevalence_bad_usage(csv_file, tmp_path, capsys):
    base = ["evaluate", str(csv_file), "--label", "y", "--score", "score"]
    assert main([*base, "--prevalence", "1"]) == 2
    assert "in [1e-300, 1)" in capsys.readouterr().err
    path = write_csv(tmp_path / "mc.csv", ["y", "A", "B"], [["A", 0.5, 0.3], ["B", 0.2, 0.5]])
    message = run_error(["evaluate", str(path), "--label", "y", "--class-columns", "A,B", "--prevalence", "0.1"],
                        capsys)
    assert "--prevalence applies to binary input" in message
    only = write_csv(tmp_path / "one.csv", ["y", "s"], [[1, 0.2], [1, 0.5]])
    message = run_error(["evaluate", str(only), "--label", "y", "--score", "s", "--prevalence", "0.1"], capsys)
    assert "--prevalence 0.1: the data have no negatives" in message


def test_explain_shows_the_context(tmp_path, capsys):
    seed = list(zip([0, 0, 1, 0, 1, 1, 0, 1, 1, 1],
                                        [0.65, 0.1, 0.15, 0.43, 0.97, 0.24, 0.82, 0.7, 0.32, 0.84]))
    path = write_csv(tmp_path / "seed.csv", ["y", "s"], [list(r) for r in seed])
    y, s = [r[0] for r in seed], [r[1] for r in seed]
    assert main(["explain", str(path), "--label", "y", "--score", "s", "--prevalence", "0.1", "--digits", "6"]) == 0
    out = capsys.readouterr().out
    assert "baseline (random ranking: precision = prevalence) 0.600000" in out
    ev = precall.evaluate(y, s)  # explain's default: ties="group", as every command
    at = precall.evaluate(y, s, prevalence=0.1)
    rows = {line.split()[0]: line.split() for line in out.splitlines() if line.startswith("  ") and
            line.split() and line.split()[0] in precall.AP_METHODS}
    for m in precall.AP_METHODS:
        assert rows[m][1:] == [f"{v:.6f}" for v in (ev.average_precision[m], ev.min_average_precision[m],
                                                    ev.normalized_average_precision[m], at.average_precision[m])]
    auprg = f"{ev.auprg:.6f}".replace("-0.000000", "0.000000")  # -7e-17 prints as 0, not -0
    assert f"AUPRG (area under the precision-recall-gain curve, Flach & Kull 2015) {auprg}" in \
        " ".join(out.split())  # wrapped to 80 columns


def test_stream_with_a_pos_label_absent_from_the_first_chunk(tmp_path, capsys):
    """--pos-label is checked on the whole file, not on the first chunk (the first chunk has no '1')."""
    rows = ["y,s"] + [f"0,{0.1 + 0.001 * i}" for i in range(5)] + [f"2,{0.5 + 0.001 * i}" for i in range(5)] + \
        [f"1,{0.9 - 0.01 * i}" for i in range(5)]
    path = tmp_path / "late_positive.csv"
    path.write_text("\n".join(rows) + "\n")
    assert main(["evaluate", str(path), "--label", "y", "--score", "s", "--pos-label", "1", "--stream",
                 "--chunk-rows", "4", "--json"]) == 0
    streamed = json.loads(capsys.readouterr().out)
    assert main(["evaluate", str(path), "--label", "y", "--score", "s", "--pos-label", "1", "--json"]) == 0
    in_memory = json.loads(capsys.readouterr().out)
    assert streamed["average_precision"] == in_memory["average_precision"]
    assert main(["evaluate", str(path), "--label", "y", "--score", "s", "--pos-label", "7", "--stream",
                 "--chunk-rows", "4"]) == 2
    assert "--pos-label '7' does not occur" in capsys.readouterr().err


@pytest.mark.parametrize("value", ["1e20", "9223372036854775808", "1000000000001"])
def test_a_huge_chunk_rows_is_refused_naming_the_option(csv_file, capsys, value):
    """--chunk-rows past int64 was an OverflowError naming no option ("rescale the weights or the option")."""
    assert main(["evaluate", str(csv_file), "--label", "y", "--score", "score", "--stream", "--chunk-rows",
                 value]) == 2
    err = capsys.readouterr().err
    assert err.strip().splitlines()[-1].endswith(
        f"argument --chunk-rows: must be a whole number in [1, 1e+12]; got '{value}'"), err
    assert "Overflow" not in err and "Traceback" not in err


ONE_CLASS = {"no positive": (["0,0.1,1", "0,0.2,2", "0,0.3,1"], ["average precision", "ROC-AUC"]),
             "no negative": (["1,0.1,1", "1,0.2,2", "1,0.3,1"], ["ROC-AUC"]),
             "a negative of weight 0": (["1,0.1,1", "1,0.2,2", "1,0.3,1", "0,0.4,0"], ["ROC-AUC"])}


@pytest.mark.parametrize("case, weighted", [(c, w) for c in ONE_CLASS for w in (False, True)
                                            if w or c != "a negative of weight 0"])
def test_ci_on_one_class_follows_the_undefined_policy(tmp_path, capsys, case, weighted):
    """``--ci`` on data of one class: the point estimates by the undefined policy, and the interval of
    each metric undefined there NaN with one warning naming it (the others computed), exit 0, whether
    ROC-AUC's interval is DeLong's or (weighted) the bootstrap's; ``--on-undefined raise``: exit 2."""
    rows, undefined = ONE_CLASS[case]
    path = tmp_path / "one.csv"
    path.write_text("y,s,w\n" + "\n".join(rows) + "\n")
    args = ["evaluate", str(path), "--label", "y", "--score", "s", "--ci", "--json",
            *(["--weight", "w"] if weighted else [])]
    assert main(args) == 0
    captured = capsys.readouterr()
    got = json.loads(captured.out)["intervals"]
    for name in ("average precision", "ROC-AUC"):
        shown = [got["roc_auc"]] if name == "ROC-AUC" else list(got["average_precision"].values())
        for interval in shown:
            assert (interval["low"] is None) == (name in undefined), (name, interval)
        assert (f"{name} is undefined on the data" in captured.err) == (name in undefined)
    assert main(args + ["--on-undefined", "raise"]) == 2
    assert capsys.readouterr().err.strip().splitlines()[-1].startswith(f"precall: error: {path}: ")


@pytest.mark.parametrize("command", ["evaluate", "plot", "report"])
def test_a_class_without_rows_is_named_in_one_warning(tmp_path, capsys, command):
    """The library's undefined-metric warnings cannot say which class; the CLI names it, once."""
    if command != "evaluate":
        pytest.importorskip("matplotlib")
    rng = np.random.default_rng(4)
    y = rng.integers(0, 2, 60)
    path = write_csv(tmp_path / "m.csv", ["y", "p_0", "p_1", "p_2"],
                     [[int(a), *np.round(b, 4)] for a, b in zip(y, rng.random((60, 3)))])
    out = {"evaluate": [], "plot": ["-o", str(tmp_path / "m.png")], "report": ["-o", str(tmp_path / "m.html")]}
    code = main([command, str(path), "--label", "y", "--class-columns", "0=p_0,1=p_1,2=p_2", *out[command]])
    err = capsys.readouterr().err
    assert code == 0
    warned = [line for line in err.splitlines() if line.startswith("precall: warning:")]
    assert len(warned) == 1 and "class(es) '2' have no rows in column 'y'" in warned[0], err


@pytest.mark.parametrize("fmt", ["csv", "jsonl", "parquet"])
@pytest.mark.parametrize("column", ["score", "weight"])
@pytest.mark.parametrize("by", [False, True], ids=["all rows", "--by"])
def test_dask_refuses_an_integer_beyond_2_53_as_the_readers_do(tmp_path, capsys, fmt, column, by):
    """pandas reads integer text beside floats as float64, rounding 9007199254740993 to its neighbour (a
    tie the data do not have); Parquet and JSON integers as int64.  ``--engine dask`` refused neither:
    now a score or weight of 2**53 or more sends the file to the readers, which name the line (row)
    and column, as the in-memory command does; floats that large, written as floats, are read."""
    pytest.importorskip("dask.dataframe")
    big = 2**53 + 1
    rows = [[1, 0.5, 1.0, "a"], [0, 0.25, 2.0, "b"], [1, 0.75, 1.0, "a"], [0, 0.125, 1.0, "b"]]
    rows[1][1 if column == "score" else 2] = big
    head = ["y", "s", "w", "g"]
    if fmt == "csv":
        path = write_csv(tmp_path / "big.csv", head, rows)
    elif fmt == "jsonl":
        path = tmp_path / "big.jsonl"
        path.write_text("".join(json.dumps(dict(zip(head, r))) + "\n" for r in rows))
    else:
        pa, pq = pytest.importorskip("pyarrow"), pytest.importorskip("pyarrow.parquet")
        path = tmp_path / "big.parquet"
        cols = list(zip(*rows))
        pq.write_table(pa.table({"y": list(cols[0]), "s": pa.array(cols[1], type=pa.int64() if column == "score" else
                                                                        pa.float64()),
                                 "w": pa.array(cols[2], type=pa.int64() if column == "weight" else pa.float64()),
                                 "g": list(cols[3])}), path)
    argv = ["evaluate", str(path), "--label", "y", "--score", "s", "--weight", "w", *(["--by", "g"] if by else [])]
    memory = run_error(argv, capsys)
    dask = run_error([*argv, "--engine", "dask", "--scheduler", "threads"], capsys)
    where = {"csv": "line 3", "jsonl": "line 2", "parquet": "row 2"}[fmt]
    assert dask == memory and "beyond 2**53" in dask and f"{where}, column '{'s' if column == 'score' else 'w'}'" \
        in dask, dask
    if fmt == "csv":  # the same magnitude written as a float: read, the same numbers as in memory
        path.write_text(path.read_text().replace(str(big), "9007199254740993.0"))
        assert run_json([*argv, "--engine", "dask", "--scheduler", "threads"], capsys) == run_json(argv, capsys)


def test_ci_with_a_class_of_one_row_says_the_intervals_are_undefined(tmp_path, capsys):
    """evaluate --ci on one positive: the bootstrap's AP intervals and DeLong's ROC-AUC interval
    are undefined alike (null, one warning each), whatever the policy but 'raise' (exit 2)."""
    y = [1] + [0] * 30
    path = write_csv(tmp_path / "one.csv", ["y", "s"], [[a, (30 - i) / 30] for i, a in enumerate(y)])
    base = ["evaluate", str(path), "--label", "y", "--score", "s", "--ci", "--resamples", "50"]
    for policy in ("warn", "zero"):
        code = main([*base, "--json", "--on-undefined", policy])
        out, err = capsys.readouterr()
        assert code == 0, err
        got = json.loads(out)["intervals"]
        assert all(ci["low"] is None and ci["high"] is None for ci in got["average_precision"].values())
        assert got["roc_auc"]["low"] is None and got["roc_auc"]["high"] is None
        assert err.count("at least two rows of each class") == 1
    code = main([*base, "--json", "--on-undefined", "nan"])
    out, err = capsys.readouterr()
    assert code == 0 and "at least two" not in err
    message = run_error([*base, "--on-undefined", "raise"], capsys)
    assert "at least two rows of each class" in message


@pytest.mark.parametrize("by", [False, True], ids=["all rows", "--by"])
def test_binary_ci_under_raise_fails_before_any_output(tmp_path, capsys, by):
    """Binary --ci on a class of one row (its bootstrap intervals undefined): under --on-undefined raise
    the text output stops before anything is printed, as --class-columns does (it printed the point
    estimates first, then exited 2); the other policies still print the estimates, then the intervals."""
    y = [1] + [0] * 30
    path = write_csv(tmp_path / "one.csv", ["y", "s", "g"], [[a, (30 - i) / 30, "a"] for i, a in enumerate(y)])
    base = ["evaluate", str(path), "--label", "y", "--score", "s", "--ci", "--resamples", "50",
            *(["--by", "g"] if by else [])]
    code = main([*base, "--on-undefined", "raise"])
    out, err = capsys.readouterr()
    assert code == 2 and out == "" and err.count("\n") == 1, (out, err)
    assert err.startswith(f"precall: error: {path}: ") and "at least two rows of each class" in err, err
    code = main(base)
    out, err = capsys.readouterr()
    assert code == 0 and out.count("file        ") == 1 and "at least two rows of each class" in err
    assert out.index("intervals   ") > out.index("slice" if by else "convention"), out


def _classes_csv(tmp_path, labels, seed=5):
    rng = np.random.default_rng(seed)
    return write_csv(tmp_path / "m.csv", ["y", "a", "b", "c"],
                     [[label, *np.round(row, 4)] for label, row in zip(labels, rng.random((len(labels), 3)))])


def test_class_columns_ci_with_a_class_without_rows_follows_the_undefined_policy(tmp_path, capsys):
    """evaluate --class-columns --ci with a class without rows: the intervals of the macro averages
    that include it are NaN with one warning naming the class and the fix (--class-columns), exit 0,
    in text (after the estimates) and JSON alike; --on-undefined raise: one line naming the class and
    the fix, nothing on stdout, exit 2.  It printed the table, then exited 2 with "ROC-AUC is undefined
    on the input ... cannot be bootstrapped" (no class named); JSON printed nothing; with zero the
    error told a command-line user to "leave those classes out of `labels`"."""
    labels = np.random.default_rng(6).choice(["a", "b"], 80)
    path = _classes_csv(tmp_path, labels)
    base = ["evaluate", str(path), "--label", "y", "--class-columns", "a,b,c", "--ci", "--resamples", "50",
            "--method", "step"]
    for policy in ("warn", "zero", "nan"):
        code = main([*base, "--on-undefined", policy])
        out, err = capsys.readouterr()
        assert code == 0, err
        said = [line for line in err.splitlines() if "confidence interval" in line]
        assert len(said) == 1 and "class 'c'" in said[0] and "--class-columns" in said[0], err
        assert "`labels`" not in said[0]
        tail = out.rstrip().splitlines()[-2:]
        assert tail[0].startswith("step") and tail[1].startswith("ROC-AUC"), out
        assert all(line.endswith("[nan, nan]") for line in tail), out
        got = run_json([*base, "--on-undefined", policy], capsys)["intervals"]
        assert got["average_precision"]["step"]["low"] is None and got["roc_auc"]["high"] is None
    for extra in ([], ["--json"], ["--csv"]):
        code = main([*base, "--on-undefined", "raise", *extra])
        out, err = capsys.readouterr()
        lines = err.strip().splitlines()
        assert code == 2 and out == "" and len(lines) == 1, (out, err)
        assert "'c'" in lines[0] and "--class-columns" in lines[0] and "`labels`" not in lines[0], err


def test_class_columns_ci_under_raise_fails_before_any_output(tmp_path, capsys):
    """A class of one row leaves the bootstrap intervals undefined: under --on-undefined raise the text
    output stops before anything is printed (it printed the whole table first, then exited 2)."""
    path = _classes_csv(tmp_path, ["a"] * 30 + ["b"] * 30 + ["c"])
    base = ["evaluate", str(path), "--label", "y", "--class-columns", "a,b,c", "--ci", "--resamples", "50"]
    code = main([*base, "--on-undefined", "raise"])
    out, err = capsys.readouterr()
    assert code == 2 and out == "" and err.count("\n") == 1, (out, err)
    assert "at least two rows of each class" in err and "class 'c'" in err and "on_undefined" not in err, err
    code = main(base)
    out, err = capsys.readouterr()
    assert code == 0 and "[nan, nan]" in out and "class 'c'" in err
