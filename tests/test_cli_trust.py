"""Output a careful reader trusts (issue 22 item 6) and options declared once (item 4).

Each class of failure, table-driven: thresholds that print alike although they differ
(explain's rank tables, the best-F1 and --at-* lines, markdown, the HTML report's rank
tables), values that print as ``-0.000``, ``explain`` with several ``--score``, the
term summary counting two kinds of things, numeric options refused by one rule with
their own example, and CLI choices that are not the library's declarations.
"""

from __future__ import annotations

import argparse
import ast
import itertools
import re
from pathlib import Path

import numpy as np
import pytest
from sklearn.metrics import precision_recall_curve

import precall
from precall._core.text import fixed, threshold_text, threshold_texts
from precall._core.validate import AP_METHODS, RECALL_GRIDS, TIES
from precall.cli import main
from precall.cli.main import build_parser

CLI = Path(__file__).resolve().parent.parent / "src" / "precall" / "cli"


def run(argv: list[str], capsys) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def write(path: Path, header: list[str], rows: list[list]) -> Path:
    path.write_text(",".join(header) + "\n" + "".join(",".join(repr(v) if isinstance(v, float) else str(v)
                                                                for v in r) + "\n" for r in rows))
    return path


# ---------------------------------------------------------------------------
# thresholds: distinct thresholds print distinctly, equal ones alike
#: scores that collide at 4 or 6 significant digits, each class of collision
COLLIDING = {
    "near one": [1.0, 0.99999999, 0.99999998, 0.9999999, 0.999999, 0.99999, 0.5, 0.2],
    "large": [1234567.0, 1234567.5, 1234568.0, 1234560.0, 1000.0, 10.0, 1.0, 0.0],
    "tiny": [3e-9, 2.5e-9, 2e-9, 1.0000001e-9, 1e-9, 1e-12, 0.0, -1e-12],
    "negative": [-0.1, -0.10000001, -0.10000002, -0.2, -5.0, -5.000001, -7.0, -9.0],
    "one ulp": [0.3, np.nextafter(0.3, 0), np.nextafter(np.nextafter(0.3, 0), 0), 0.1, 0.6, 0.7, 0.2, 0.25],
}


def _scores_file(tmp_path: Path, values: list[float], repeat: int = 2) -> tuple[Path, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(7)
    s = np.repeat(np.asarray(values, dtype=float), repeat)
    y = (rng.random(s.size) < 0.5).astype(int)
    y[:2], y[-2:] = 1, 0
    return write(tmp_path / "s.csv", ["y", "s"], [[a, float(b)] for a, b in zip(y, s)]), y, s


def _nearest(text: str, distinct: np.ndarray) -> float:
    """The distinct score a printed threshold reads as (closest to its value)."""
    return float(distinct[np.argmin(np.abs(distinct - float(text)))])


@pytest.mark.parametrize("digits", [1, 4, 6])
@pytest.mark.parametrize("case", sorted(COLLIDING))
def test_explain_rank_table_prints_every_distinct_threshold_distinctly(case, digits, tmp_path, capsys):
    path, y, s = _scores_file(tmp_path, COLLIDING[case])
    code, out, err = run(["explain", str(path), "--label", "y", "--score", "s", "--full", "--digits", str(digits),
                          "--method", "step"], capsys)
    assert code == 0, err
    rows = [line.split() for line in out.splitlines() if re.match(r"^\d+ ", line)]
    distinct = np.unique(s)[::-1]
    shown = [r[1] for r in rows]
    assert len(shown) == distinct.size and len(set(shown)) == distinct.size  # one text a threshold
    assert [_nearest(t, distinct) for t in shown] == list(distinct)  # each reads as its own score


@pytest.mark.parametrize("case", sorted(COLLIDING))
def test_stable_ties_print_equal_thresholds_alike(case, tmp_path, capsys):
    path, y, s = _scores_file(tmp_path, COLLIDING[case], repeat=3)
    code, out, err = run(["explain", str(path), "--label", "y", "--score", "s", "--full", "--ties", "stable",
                          "--method", "step"], capsys)
    assert code == 0, err
    shown = [line.split()[1] for line in out.splitlines() if re.match(r"^\d+ ", line)]
    ordered = np.sort(s)[::-1]
    assert len(shown) == ordered.size
    for (a, ta), (b, tb) in itertools.pairwise(zip(ordered, shown)):
        assert (ta == tb) == (a == b)


@pytest.mark.parametrize("case", sorted(COLLIDING))
def test_best_f1_and_operating_point_thresholds_name_their_score(case, tmp_path, capsys):
    path, y, s = _scores_file(tmp_path, COLLIDING[case])
    distinct = np.unique(s)
    code, out, err = run(["evaluate", str(path), "--label", "y", "--score", "s", "--digits", "4",
                          "--at-recall", "1"], capsys)
    assert code == 0, err
    text = " ".join(out.split())
    best = re.search(r"best F1 \S+ at score >= (\S+):", text).group(1)
    ev = precall.evaluate(y, s)
    assert _nearest(best, distinct) == ev.best_f1.threshold  # the library's best threshold, named alone
    at = re.search(r"at recall >= 1: score >= (\S+),", text).group(1)
    assert _nearest(at, distinct) == s[y == 1].min()  # recall 1 is reached at the lowest positive score
    code, out, err = run(["evaluate", str(path), "--label", "y", "--score", "s", "--digits", "4", "--markdown"],
                         capsys)
    cell = re.search(r"\| best F1 threshold \| (\S+) \|", out).group(1)
    assert _nearest(cell, distinct) == ev.best_f1.threshold


def test_best_f1_threshold_is_scikit_learns(tmp_path, capsys):
    """The threshold the line names is the one where scikit-learn's PR curve has its best F1."""
    path, y, s = _scores_file(tmp_path, COLLIDING["near one"])
    code, out, _ = run(["evaluate", str(path), "--label", "y", "--score", "s"], capsys)
    p, r, t = precision_recall_curve(y, s)
    f1 = np.divide(2 * p * r, p + r, out=np.zeros_like(p), where=p + r > 0)[:-1]
    best = re.search(r"best F1 \S+ at score >= (\S+):", " ".join(out.split())).group(1)
    assert _nearest(best, np.unique(s)) in set(t[f1 == f1.max()])


@pytest.mark.parametrize("case", sorted(COLLIDING))
def test_report_rank_tables_print_thresholds_distinctly(case):
    pytest.importorskip("matplotlib")
    from precall.report import html_report

    s = np.repeat(np.asarray(COLLIDING[case], dtype=float), 2)
    y = np.tile([1, 0], s.size // 2)
    html = html_report(y, {"m": s}, rank_rows=50)
    rank = html[html.index("Rank tables"):]
    shown = re.findall(r"<tr><td>\d+</td><td>([^<]+)</td>", rank)
    distinct = np.unique(s)[::-1]
    assert shown and len(set(shown)) == len(shown)
    assert [_nearest(t, distinct) for t in shown] == sorted({_nearest(t, distinct) for t in shown}, reverse=True)


@pytest.mark.parametrize("values", [
    [0.5, 0.49999999, 0.4999999, 0.3], [1e300, 9.999999e299, 1.0], [2.0, 2.0, 1.9999999999999998],
    [-0.0, 0.0, -1e-300], list(np.linspace(0, 1, 1001)),
])
@pytest.mark.parametrize("digits", [1, 3, 6, 17])
def test_threshold_texts_against_brute_force(values, digits):
    """Brute force: every pair of distinct sorted values prints differently (not only adjacent
    ones), equal values alike, each text at least ``digits`` significant digits or exact."""
    t = np.sort(np.asarray(values, dtype=float))[::-1]
    texts = threshold_texts(t, digits)
    for (a, ta), (b, tb) in itertools.combinations(zip(t, texts), 2):
        assert (ta == tb) == (a == b), (a, b, ta, tb)
    for v, text in zip(t, texts):
        assert text == f"{v:.{digits}g}".lstrip("-" if float(f"{v:.{digits}g}") == 0 else "") or \
            len(re.sub(r"[^0-9]", "", text.split("e")[0]).lstrip("0")) > digits or float(text) == v
    sub = [0, len(t) - 1]
    assert threshold_texts(t, digits, sub) == [texts[i] for i in sub]  # rows shown or not: the same text
    assert threshold_text(float(t[0]), None, digits) in {texts[0]} | {repr(float(t[0]))} or \
        float(threshold_text(float(t[0]), None, digits)) == t[0]


# ---------------------------------------------------------------------------
# no negative zero anywhere in text output
@pytest.mark.parametrize("value,digits,expected", [
    (-6.938893903907228e-17, 6, "0.000000"), (-0.0, 4, "0.0000"), (-4e-5, 4, "0.0000"), (-5.1e-5, 4, "-0.0001"),
    (0.0, 0, "0"), (-0.4, 0, "0"), (-0.6, 0, "-1"), (float("nan"), 3, "nan"), (None, 3, "nan"), (1.5, 1, "1.5"),
])
def test_fixed_never_prints_a_negative_zero(value, digits, expected):
    assert fixed(value, digits) == expected
    if value is not None and value == value:  # the reference: Python's rounding, sign dropped at zero
        reference = f"{value:.{digits}f}"
        assert expected == (reference[1:] if float(reference) == 0 and reference.startswith("-") else reference)


NEGATIVE_ZERO = re.compile(r"(?<![\w.])-0(\.0+)?(?![\d.e])")


@pytest.mark.parametrize("value,digits,expected", [
    (-1.6666666666666666e299, 6, "-1.666667e+299"), (2.5e16, 3, "2.500e+16"), (-1e300, 1, "-1.0e+300"),
    (9.99e15, 2, "9990000000000000.00"), (float("inf"), 3, "inf"), (float("-inf"), 3, "-inf"),
])
def test_fixed_prints_huge_values_in_bounded_form(value, digits, expected):
    """AUPRG at prevalence 1e-300 is -1.67e299 (right by definition): fixed notation printed it in 300
    digits. From 1e16 on (no fraction left in a double) the one formatter writes scientific notation."""
    assert fixed(value, digits) == expected


@pytest.mark.parametrize("extra", [[], ["--markdown"], ["--csv"], ["--wide"]])
def test_huge_auprg_at_an_extreme_prevalence_is_printed_bounded(extra, tmp_path, capsys):
    path = write(tmp_path / "toy.csv", ["y", "s"], [[0, 0.1], [1, 0.4], [1, 0.35], [0, 0.8], [1, 0.6], [0, 0.2]])
    code, out, err = run(["evaluate", str(path), "--label", "y", "--score", "s", "--prevalence", "1e-300", *extra],
                         capsys)
    assert code == 0, err
    assert re.search(r"-1\.66666\d*e\+299", out), out  # CSV: every digit of the double (repr)
    assert not re.search(r"\d{20}", out), out  # no number of 300 digits
    if extra in ([], ["--markdown"]):
        assert "-1.666667e+299" in out
    if not extra:
        assert max(len(line) for line in out.splitlines()) <= 80
    ev = precall.evaluate([0, 1, 1, 0, 1, 0], [0.1, 0.4, 0.35, 0.8, 0.6, 0.2], prevalence=1e-300)
    assert "AUPRG       -1.666667e+299" in str(ev)


def _seed(tmp_path: Path) -> Path:
    # AUPRG of this ranking is -7e-17 (printed -0.000000 before)
    seed = [(0, 0.65), (0, 0.1), (1, 0.15), (0, 0.43), (1, 0.97), (1, 0.24), (0, 0.82), (1, 0.7), (1, 0.32),
            (1, 0.84)]
    return write(tmp_path / "seed.csv", ["y", "s", "t"], [[a, b, round(1 - b, 2)] for a, b in seed])


@pytest.mark.parametrize("extra", [[], ["--wide"], ["--markdown"], ["--prevalence", "0.1"], ["--score", "t"],
                                   ["--digits", "1"], ["--at-recall", "0.5"]])
def test_evaluate_prints_no_negative_zero(extra, tmp_path, capsys):
    assert precall.evaluate([0, 0, 1, 0, 1, 1, 0, 1, 1, 1],
                            [0.65, 0.1, 0.15, 0.43, 0.97, 0.24, 0.82, 0.7, 0.32, 0.84]).auprg < 0
    code, out, err = run(["evaluate", str(_seed(tmp_path)), "--label", "y", "--score", "s", *extra], capsys)
    assert code == 0, err
    assert not NEGATIVE_ZERO.search(out), out


@pytest.mark.parametrize("argv", [
    ["explain", "--score", "s", "--prevalence", "0.1"],
    ["explain", "--score", "s", "--ties", "stable", "--full"],
    ["compare", "--score", "s", "--score", "t", "--resamples", "50", "--metric", "step"],
    ["compare", "--score", "s", "--score", "t", "--resamples", "50", "--wide"],
])
def test_other_commands_print_no_negative_zero(argv, tmp_path, capsys):
    path = _seed(tmp_path)
    code, out, err = run([argv[0], str(path), "--label", "y", *argv[1:]], capsys)
    assert code == 0, err
    assert not NEGATIVE_ZERO.search(out), out


def test_the_negative_zero_pattern_can_fail():
    assert NEGATIVE_ZERO.search("AUPRG -0.000000") and NEGATIVE_ZERO.search("[-0.0000, 1]")
    assert not NEGATIVE_ZERO.search("-0.0001 x-0.0 1e-05 0.000 -0.5")


# ---------------------------------------------------------------------------
# explain with several --score: one section each, each the single explanation
@pytest.mark.parametrize("names", [["s", "t"], ["t", "s"], ["s", "t", "s"], ["s", "t", "u"]])
def test_explain_explains_every_score(names, tmp_path, capsys):
    path = _seed(tmp_path)
    text = path.read_text().splitlines()
    path.write_text("\n".join([text[0] + ",u", *(line + f",{i % 3}" for i, line in enumerate(text[1:]))]) + "\n")
    args = [a for n in names for a in ("--score", n)]
    code, out, err = run(["explain", str(path), "--label", "y", *args], capsys)
    assert code == 0, err
    unique = list(dict.fromkeys(names))
    sections = re.split(r"\n\n== score column '(\w+)' =+\n", out)
    assert sections[1::2] == unique
    for name, body in zip(sections[1::2], sections[2::2]):
        code, alone, _ = run(["explain", str(path), "--label", "y", "--score", name], capsys)
        assert body.strip("\n") == alone[alone.index("label       "):].strip("\n")  # the same, but the file line


# ---------------------------------------------------------------------------
# the term summary counts one kind of thing
def _counts(line: str) -> tuple[str, int, int, int]:
    m = re.search(r"shown: (?:the (\d+) largest (terms?|runs?) of (\d+)|(\d+) runs of equal precision, the "
                  r"(\d+) largest (runs?)); the other (\d+) (terms?|runs?) sum", line)
    assert m, line
    if m.group(1):
        return m.group(2).rstrip("s"), int(m.group(1)), int(m.group(3)), int(m.group(7))
    assert m.group(8).rstrip("s") == "run"
    return "run", int(m.group(5)), int(m.group(4)), int(m.group(7))


@pytest.mark.parametrize("method", AP_METHODS)
@pytest.mark.parametrize("n", [60, 400])
def test_the_left_out_line_counts_one_kind_of_thing(method, n, tmp_path, capsys):
    rng = np.random.default_rng(n)
    y = (rng.random(n) < 0.4).astype(int)
    s = np.round(rng.random(n) * 0.6 + 0.4 * y, 3)
    path = write(tmp_path / "d.csv", ["y", "s"], [[a, float(b)] for a, b in zip(y, s)])
    code, out, err = run(["explain", str(path), "--label", "y", "--score", "s", "--method", method], capsys)
    assert code == 0, err
    text = " ".join(out.split())
    if "left out" in text:
        pytest.fail("the old wording mixes terms and groups: " + text)
    if "shown:" not in text:
        return  # shown whole, or by recall fifth
    unit, shown, total, other = _counts(text)
    terms = precall.threshold_table(y, s).ap_terms(method)
    runs = sum(1 for _ in itertools.groupby(terms.precision)) if method in ("voc2007", "coco") else len(terms)
    assert unit == ("run" if runs != len(terms) else "term") and total == runs and shown + other == runs


# ---------------------------------------------------------------------------
# numeric options: one rule (check_number), the option named, its own example
@pytest.mark.parametrize("command,option,bad,takes", [
    ("plot", "--max-fpr", "0", "(0, 1]"), ("plot", "--max-fpr", "1.5", "(0, 1]"), ("plot", "--max-fpr", "nan", "(0, 1]"),
    ("report", "--max-fpr", "-0.1", "(0, 1]"), ("evaluate", "--level", "1", "(0, 1)"),
    ("evaluate", "--level", "inf", "(0, 1)"), ("compare", "--level", "x", "(0, 1)"),
    ("evaluate", "--prevalence", "0", "[1e-300, 1)"), ("explain", "--prevalence", "1", "[1e-300, 1)"),
    ("evaluate", "--prevalence", "1e-310", "[1e-300, 1)"), ("plot", "--prevalence", "1e-320", "[1e-300, 1)"),
    ("evaluate", "--at-recall", "1.01", "[0, 1]"), ("plot", "--at-precision", "-1", "[0, 1]"),
    ("evaluate", "--at-threshold", "nan", "finite"), ("evaluate", "--digits", "0", "[1, 17]"),
    ("evaluate", "--digits", "2.5", "[1, 17]"), ("explain", "--max-rows", "1", "[2, inf)"),
    ("evaluate", "--resamples", "1", "[2, inf)"), ("compare", "--seed", "-1", "[0, inf)"),
    ("report", "--rank-rows", "10001", "[2, 10000]"), ("plot", "--dpi", "5", "[20, 1200]"),
])
def test_numeric_options_refused_by_one_rule(command, option, bad, takes, tmp_path, capsys):
    path = _seed(tmp_path)
    argv = [command, str(path), "--label", "y", "--score", "s", "--score", "t", option, bad]
    if command in ("plot", "report"):
        argv += ["-o", str(tmp_path / ("x.png" if command == "plot" else "x.html"))]
    code, out, err = run(argv, capsys)
    assert code == 2 and out == ""
    last = err.strip().splitlines()[-1]
    assert f"argument {option}: must be " in last and takes in last and last.endswith(f"got {bad!r}")
    if option == "--max-fpr":
        assert "0.95" not in last and "e.g. 0.1" in last  # its own example, not a confidence level's


@pytest.mark.parametrize("value", ["1", "0.5", "1e-3"])
def test_max_fpr_takes_up_to_one(value, tmp_path, capsys):
    pytest.importorskip("matplotlib")
    code, _, err = run(["plot", str(_seed(tmp_path)), "--label", "y", "--score", "s", "--kind", "roc",
                        "--max-fpr", value, "-o", str(tmp_path / "x.svg")], capsys)
    assert code == 0, err


# ---------------------------------------------------------------------------
# every choice list is the library's declaration
def _subparsers() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(sub.choices)


LIBRARY = {"--ties": TIES, "--recall-grid": RECALL_GRIDS, "--method": AP_METHODS,
           "--ci-method": precall.stats.BOOTSTRAP_METHODS, "--metric": ("roc_auc", *AP_METHODS),
           "--reference": precall.stats.REFERENCES}


def test_choices_are_the_librarys_declarations():
    seen = set()
    for name, parser in _subparsers().items():
        for action in parser._actions:
            option = next((o for o in action.option_strings if o.startswith("--")), None)
            if option in LIBRARY and action.choices is not None:
                assert tuple(action.choices) == tuple(LIBRARY[option]), (name, option)
                seen.add(option)
    assert seen == set(LIBRARY)


def _string_tuples(path: Path) -> list[tuple[int, tuple[str, ...]]]:
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, (ast.Tuple, ast.List)) and len(node.elts) >= 2 and all(
                isinstance(e, ast.Constant) and isinstance(e.value, str) for e in node.elts):
            out.append((node.lineno, tuple(e.value for e in node.elts)))
    return out


DECLARED = {"AP_METHODS": AP_METHODS, "TIES": TIES, "RECALL_GRIDS": RECALL_GRIDS,
            "AVERAGES": precall._core.validate.AVERAGES, "BOOTSTRAP_METHODS": precall.stats.BOOTSTRAP_METHODS,
            "RESAMPLE_MODES": precall.stats.RESAMPLE_MODES, "REFERENCES": precall.stats.REFERENCES}


@pytest.mark.parametrize("path", sorted(p for p in CLI.glob("*.py") if p.name != "detection.py"),
                         ids=lambda p: p.name)
def test_no_literal_list_of_a_librarys_option_values(path):
    """A literal tuple or list of two or more values of one library option is a second declaration."""
    found = [f"{path.name}:{line} {values} repeats {name}" for line, values in _string_tuples(path)
             for name, declared in DECLARED.items() if set(values) <= set(declared)]
    assert not found, "\n".join(found)


def test_the_literal_scan_can_fail(tmp_path):
    fake = tmp_path / "x.py"
    fake.write_text('TIES = ("group", "stable")\nx = ["macro", "micro"]\n')
    assert [v for _, v in _string_tuples(fake)] == [("group", "stable"), ("macro", "micro")]


def test_report_help_quotes_the_reports_limit():
    from precall.plot.report import CI_MAX_CELLS

    text = " ".join(_subparsers()["report"].format_help().split())
    assert f"{CI_MAX_CELLS / 1e6:g} million cells" in text
    assert f"{precall.stats.DEFAULT_RESAMPLES} resamples, seed {precall.stats.DEFAULT_SEED}" in text


# ---------------------------------------------------------------------------
# --ci: the library's intervals whichever way the positive label sorts
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("positive", ["Class1", "Class2"])  # sorts first / last among the labels
def test_ci_is_the_librarys_bootstrap_whichever_label_is_positive(positive, weighted, shared_data_dir, capsys):
    import functools
    import json

    path = shared_data_dir / "yardstick_two_class_example.csv"
    argv = ["evaluate", str(path), "--label", "truth", "--pos-label", positive, "--score", "Class1", "--ci",
            "--resamples", "200", "--json"] + (["--weight", "case_weight"] if weighted else [])
    code, out, err = run(argv, capsys)
    assert code == 0, err
    shown = json.loads(out)["intervals"]["average_precision"]
    rows = np.genfromtxt(path, delimiter=",", names=True, dtype=None, encoding="utf-8")
    y, s = rows["truth"].astype(str), rows["Class1"].astype(float)
    w = rows["case_weight"].astype(float) if weighted else None
    reference = precall.stats.bootstrap_cis(
        [functools.partial(precall.average_precision, method=m, pos_label=positive) for m in AP_METHODS], y, s,
        sample_weight=w, n_resamples=200, random_state=precall.stats.DEFAULT_SEED)
    for m, ci in zip(AP_METHODS, reference):
        assert (shown[m]["low"], shown[m]["high"]) == (ci.low, ci.high)
