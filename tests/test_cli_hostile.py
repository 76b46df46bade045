"""Hostile names never reach the terminal raw: a table of column, class, label and file
names holding ESC sequences, C1 controls, bidi overrides and isolates, other format
characters and line breaks, through every command and output style, on stdout and
stderr (errors included).  The one function is :func:`precall._core.text.visible`."""

from __future__ import annotations

import csv
import json
import sys
import unicodedata
from pathlib import Path

import pytest

from precall._core.text import visible
from precall.cli import main

HOSTILE = {
    "esc": "a\x1b[2Jb",  # clear the screen
    "osc": "t\x1b]0;owned\x07x",  # set the window title
    "csi8": "c\x9b31mred",  # C1 CSI
    "rlo": "inv\u202eexe.txt",  # right-to-left override
    "isolate": "x\u2066y\u2069z\u2067w",
    "marks": "m\u200e\u200f\u061cn",
    "zero-width": "z\u200bw\u200dj\ufeff",
    "tags": "tag\U000e0041\U000e007f",
    "lines": "l\u2028m\u2029n",
    "cr": "over\rwrite\bx",
    "newline": "two\nlines\tand tab",
    "del": "d\x7fel",
}
SAFE_WHITESPACE = {"\n", "\t"}  # precall's own line breaks and alignment
IN_ARGUMENTS_ONLY = {"\n", "\r"}  # line breaks inside a header are the readers' matter: names in arguments only


def _unsafe_chars(text: str) -> set[str]:
    return {c for c in text if c not in SAFE_WHITESPACE
            and unicodedata.category(c) in ("Cc", "Cf", "Zl", "Zp", "Cs")}


def run(argv, capsys):
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def _write(path: Path, header, rows) -> Path:
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(header)
        w.writerows(rows)
    return path


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("hostile")
    names = [v for v in HOSTILE.values() if not IN_ARGUMENTS_ONLY & set(v)]
    labels = [0, 1, 0, 1, 1, 0, 0, 1, 0, 1, 1, 0, 1, 0, 0, 1]
    scores = [[round(((i * 7 + 3 * k) % 11) / 11 + 0.3 * y, 3) for k in range(len(names))] for i, y in
              enumerate(labels)]
    binary = _write(d / "binary.csv", ["y", *names], [[y, *s] for y, s in zip(labels, scores)])
    # multi-class: the class labels are hostile too, one score column per class
    classes = [HOSTILE["esc"], HOSTILE["rlo"], HOSTILE["tags"]]
    rows = [[classes[i % 3], *[round(((i * 5 + k * 3) % 7) / 7 + (0.5 if k == i % 3 else 0), 3) for k in range(3)]]
            for i in range(18)]
    multi = _write(d / "multi.csv", ["y", *classes], rows)
    labels_file = _write(d / "labels.csv", ["y", "s"], [[HOSTILE["rlo"] if y else HOSTILE["esc"], s[0]]
                                                        for y, s in zip(labels, scores)])
    gt = {"images": [{"id": i} for i in (1, 2)],
          "categories": [{"id": 1, "name": HOSTILE["esc"]}, {"id": 2, "name": HOSTILE["rlo"]}],
          "annotations": [{"id": k, "image_id": i, "category_id": c, "bbox": [0, 0, 10, 10], "area": 100,
                           "iscrowd": 0} for k, (i, c) in enumerate([(1, 1), (2, 2), (2, 1)], start=1)]}
    res = [{"image_id": i, "category_id": c, "bbox": [0, 0, 10, 9], "score": 0.5 + 0.1 * k}
           for k, (i, c) in enumerate([(1, 1), (2, 2), (2, 1), (1, 2)])]
    (d / "gt.json").write_text(json.dumps(gt))
    (d / "res.json").write_text(json.dumps(res))
    return {"dir": d, "binary": str(binary), "multi": str(multi), "labels": str(labels_file), "names": names,
            "classes": classes, "gt": str(d / "gt.json"), "res": str(d / "res.json")}


def _commands(f) -> dict[str, list[str]]:
    a, b = HOSTILE["esc"], HOSTILE["rlo"]
    multi = ["--label", "y", "--class-columns", ",".join(f["classes"])]
    binary = [f["binary"], "--label", "y"]
    out = {
        "evaluate": ["evaluate", *binary, "--score", a],
        "evaluate --wide": ["evaluate", *binary, "--score", b, "--wide"],
        "evaluate --markdown": ["evaluate", *binary, "--score", a, "--markdown"],
        "evaluate --csv": ["evaluate", *binary, "--score", b, "--csv"],
        "evaluate --json": ["evaluate", *binary, "--score", a, "--json"],
        "evaluate two scores": ["evaluate", *binary, "--score", a, "--score", b],
        "evaluate two scores --markdown": ["evaluate", *binary, "--score", a, "--score", b, "--markdown"],
        "evaluate --ci": ["evaluate", *binary, "--score", a, "--ci", "--resamples", "20"],
        "evaluate hostile labels": ["evaluate", f["labels"], "--label", "y", "--score", "s",
                                    "--pos-label", HOSTILE["rlo"]],
        "evaluate --class-columns": ["evaluate", f["multi"], *multi],
        "evaluate --class-columns --wide": ["evaluate", f["multi"], *multi, "--wide"],
        "evaluate --class-columns --markdown": ["evaluate", f["multi"], *multi, "--markdown"],
        "evaluate --class-columns --csv": ["evaluate", f["multi"], *multi, "--csv"],
        "evaluate two scores --csv": ["evaluate", *binary, "--score", a, "--score", b, "--csv"],
        "evaluate --by --csv": ["evaluate", *binary, "--score", a, "--by", b, "--csv"],
        "compare --by --full": ["compare", *binary, "--score", a, "--score", b, "--by", HOSTILE["tags"],
                                "--resamples", "20", "--full"],
        "compare": ["compare", *binary, "--score", a, "--score", b, "--resamples", "20"],
        "compare --wide": ["compare", *binary, "--score", HOSTILE["isolate"], "--score", HOSTILE["tags"],
                           "--resamples", "20", "--wide"],
        "compare --class-columns": ["compare", f["multi"], *multi, "--class-columns",
                                    ",".join(reversed(f["classes"])), "--resamples", "20"],
        "explain": ["explain", *binary, "--score", a],
        "explain --full": ["explain", *binary, "--score", HOSTILE["lines"], "--full", "--wide"],
        "explain --class": ["explain", f["multi"], *multi, "--class", HOSTILE["rlo"]],
        "detection coco": ["detection", "coco", f["gt"], f["res"], "--per-class"],
        "plot": ["plot", *binary, "--score", a, "-o", str(f["dir"] / f"p{HOSTILE['esc']}.png")],
        "report": ["report", *binary, "--score", a, "--score", b, "-o", str(f["dir"] / f"r{HOSTILE['rlo']}.html"),
                   "--title", HOSTILE["osc"]],
        # errors: CliError / InputError messages and argparse's usage errors quote the names
        "missing column": ["evaluate", *binary, "--score", "no" + HOSTILE["esc"]],
        "missing file": ["evaluate", str(f["dir"] / ("none" + HOSTILE["rlo"] + ".csv")), "--label", "y",
                         "--score", a],
        "bad pos-label": ["evaluate", f["labels"], "--label", "y", "--score", "s", "--pos-label", HOSTILE["osc"]],
        "bad class": ["explain", f["multi"], *multi, "--class", HOSTILE["csi8"]],
        "bad method": ["evaluate", *binary, "--score", a, "--method", HOSTILE["esc"]],
        "bad option value": ["evaluate", *binary, "--score", a, "--prevalence", HOSTILE["cr"]],
        "unknown command": [HOSTILE["esc"]],
    }
    for name, text in HOSTILE.items():  # every kind of hostile name, as a score column (or a missing one)
        prefix = "missing " if IN_ARGUMENTS_ONLY & set(text) else ""
        out[f"{prefix}evaluate score {name}"] = ["evaluate", *binary, "--score", text]
    return out


COMMANDS = list(_commands({"binary": "b", "multi": "m", "labels": "l", "classes": ["x"], "gt": "g", "res": "r",
                           "dir": Path("d")}))


def _on_a_terminal(monkeypatch) -> None:
    """Standard output a terminal (``--csv`` is written as it is to a file or a pipe only)."""
    monkeypatch.setattr(type(sys.stdout), "isatty", lambda self: True, raising=False)


@pytest.mark.parametrize("command", COMMANDS)
def test_no_raw_control_or_bidi_character_reaches_the_terminal(files, command, capsys, monkeypatch):
    argv = _commands(files)[command]
    _on_a_terminal(monkeypatch)
    code, out, err = run(argv, capsys)
    assert code in (0, 2), (code, err)
    assert not _unsafe_chars(out), (command, sorted(map(hex, map(ord, _unsafe_chars(out)))))
    assert not _unsafe_chars(err), (command, sorted(map(hex, map(ord, _unsafe_chars(err)))))
    if command.startswith(("missing", "bad", "unknown")):
        last = err.strip().splitlines()[-1]
        assert code == 2 and "Traceback" not in err and last.startswith("precall") and "error: " in last, err
    else:
        assert code == 0, err


@pytest.mark.parametrize("command", ["evaluate two scores --csv", "evaluate --class-columns --csv",
                                     "evaluate --by --csv"])
def test_csv_to_a_file_or_a_pipe_carries_the_names_as_they_are(files, command, capsys):
    """``--csv`` is data: to a file or a pipe, each name as it is (quoted by the csv module), as the
    library's ``to_csv`` writes it; shown visibly on a terminal only (the test above)."""
    argv = _commands(files)[command]
    code, out, err = run(argv, capsys)
    assert code == 0, err
    names = {*files["names"], *files["classes"]}
    cells = {cell for row in csv.reader(out.splitlines()) for cell in row}
    assert names & cells and not {visible(n) for n in names if visible(n) != n} & cells
    assert not _unsafe_chars(err)


def test_the_names_are_still_recognisable(files, capsys, monkeypatch):
    """Shown visibly, not dropped: the escaped name appears in the output."""
    code, out, _ = run(["evaluate", files["binary"], "--label", "y", "--score", HOSTILE["rlo"]], capsys)
    assert code == 0 and (visible(HOSTILE["rlo"]) in out or repr(HOSTILE["rlo"]) in out)  # prose quotes repr
    code, out, _ = run(["evaluate", files["binary"], "--label", "y", "--score", HOSTILE["rlo"], "--markdown"],
                       capsys)
    assert code == 0 and "inv[U+202E]exe.txt" in out
    _on_a_terminal(monkeypatch)
    code, out, _ = run(["evaluate", files["multi"], "--label", "y", "--class-columns", ",".join(files["classes"]),
                        "--csv"], capsys)
    assert code == 0 and "a\u241b[2Jb" in out and "tag[U+E0041][U+E007F]" in out


def test_visible_covers_every_control_and_format_character():
    """Every character of the categories Cc, Cf, Zl, Zp, Cs of this interpreter's Unicode is shown."""
    missed = [hex(c) for c in range(sys.maxunicode + 1)
              if unicodedata.category(chr(c)) in ("Cc", "Cf", "Zl", "Zp", "Cs") and visible(chr(c)) == chr(c)]
    assert not missed, missed[:20]
    assert visible("Ünïcödé 名前 😀 a-b_c.d") == "Ünïcödé 名前 😀 a-b_c.d"  # the rest is left alone
    assert visible(visible(HOSTILE["esc"] + HOSTILE["rlo"])) == visible(HOSTILE["esc"] + HOSTILE["rlo"])


def test_the_reading_progress_line_is_cleared_without_a_visible_carriage_return(monkeypatch):
    """The CLI's stderr shows control characters visibly but for a write's leading carriage return;
    the progress line's clearing must not leave a shown U+240D before the first line of output."""
    import io

    from precall.cli.main import _Shown
    from precall.readers import _Progress

    sink = io.StringIO()
    monkeypatch.setattr(sys, "stderr", _Shown(sink))
    progress = _Progress("data.csv", 100 << 20, enabled=True)
    progress.update(50 << 20)
    progress.close()
    text = sink.getvalue()
    assert "\u240d" not in text and text.endswith("\r") and "data.csv:  50%" in text


def test_the_numba_kernel_asked_for_without_numba_is_one_line_and_exit_2(tmp_path, monkeypatch, capsys):
    """PRECALL_KERNEL=numba where numba cannot be loaded: the message naming the extra, no traceback."""
    from precall._core import backend
    from precall.cli.main import main

    path = tmp_path / "ok.csv"
    path.write_text("y,p\n" + "".join(f"{i % 2},{i / 10}\n" for i in range(10)))
    monkeypatch.setattr(backend, "_module", [None])  # as if `from . import compiled` had failed
    monkeypatch.setitem(backend._state, "kernel", "numba")  # what PRECALL_KERNEL=numba sets at import
    code = main(["evaluate", str(path), "--label", "y", "--score", "p"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err, err
    assert "precall[fast]" in err
