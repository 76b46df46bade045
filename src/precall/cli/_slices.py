"""``--by``: what the commands share about slices (internal): the slice columns read by
:mod:`precall.readers` as codes for :func:`precall.evaluate` (``by=``), the result renamed to the
file's values, which slices a table shows (the worst and best ``--top`` with a count of the
rest; ``--full`` all), the per-slice intervals and the text, JSON and CSV of the table."""

from __future__ import annotations

import argparse
import dataclasses
import math
import warnings
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Sequence

import numpy as np

import precall
from precall._slicing import (MAX_SLICES, IntervalSet, coded, interval_set, named_message, slice_bootstrap,
                              slice_intervals, with_values)
from precall.readers import Columns, label_counts
from precall.slices import BLOCK, MISSING, slice_codes
from precall._core.text import MIN_NAME, columns, name_limit, percent, shortened, visible

from ._common import CliError, cli_spelling, int_in, resolve_pos_label
from ._format import WIDTH, counted, fit, fmt, fmt_count, json_safe, legend, render_table, render_table_chunks
from ._intervals import CiOptions, bootstrap_kwargs, drawn_as


# ---------------------------------------------------------------------------
# options
def by_columns(values: Sequence[str] | None) -> list[str]:
    """``--by country,device`` (or repeated ``--by``): the slice column names, in order."""
    names: list[str] = []
    for text in values or []:
        for name in text.split(","):
            name = name.strip()
            if not name:
                raise CliError(f"--by {text!r}: an empty column name; give --by COL or --by COL1,COL2")
            if name in names:
                raise CliError(f"--by {text!r}: column {name!r} is given twice")
            names.append(name)
    return names


def add_slice_options(p: argparse.ArgumentParser, *, what: str, class_top: str = "", class_full: str = "") -> None:
    """``--by``, ``--min-support``, ``--top``, ``--full``: the options of every command with slices;
    ``class_top`` / ``class_full``: what ``--top`` / ``--full`` do with ``--class-columns`` /
    ``--class-prefix`` (how many classes the text shows), added to their help."""
    p.add_argument("--by", action="append", metavar="COL[,COL...]",
                   help=f"{what} per slice: each value of COL (each present combination of several columns); "
                   f"a missing value (empty field, null, NaN) is its own slice {MISSING!r}")
    p.add_argument("--min-support", type=int_in(0), default=0, metavar="N",
                   help="with --by: slices of fewer rows are reported but not ranked (default 0)")
    p.add_argument("--top", type=int_in(1), default=5, metavar="K",
                   help="with --by: show the K worst and K best ranked slices and a count of the rest"
                   + (f"; with --class-columns / --class-prefix: {class_top}" if class_top else "") + " (default 5)")
    p.add_argument("--full", action="store_true",
                   help="with --by: show every slice"
                   + (f"; with --class-columns / --class-prefix: {class_full}" if class_full else "")
                   + " (--json and --csv always give every slice" + (" and class)" if class_full else ")"))


# ---------------------------------------------------------------------------
# the slice columns as codes, the result with the file's values
def slice_input(columns: Columns) -> tuple[dict[str, np.ndarray], list[list[str]]]:
    """``by=`` for :func:`precall.evaluate` (:func:`precall._slicing.coded`: each column's codes in
    the order of its sorted values, NaN for missing) and each column's sorted values."""
    arrays, texts = {}, []
    for column in columns.by:
        values, codes = coded(column.texts, column.codes)
        arrays[column.name] = codes
        texts.append(values)
    return arrays, texts


# ---------------------------------------------------------------------------
# the sliced evaluation of one score column
@dataclass(frozen=True)
class SliceReport:
    """``evaluate --by``: one :class:`precall.SlicedEvaluation` with what the CLI knows of its input."""

    input: dict[str, Any]  # file, n_rows, label_column, score_column, weight_column, pos_label
    result: precall.SlicedEvaluation
    warnings: list[str]
    options: CiOptions | None = None
    intervals: dict[int, IntervalSet | None] | None = None  # by slice index; -1: all rows

    @property
    def source(self) -> str:
        return str(self.input["file"])


def sliced_evaluation(columns: Columns, *, name: str, label: str, score: str, weight: str | None,
                      pos_label: str | None, ties: str, recall_grid: str, on_undefined: Any,
                      min_support: int) -> SliceReport:
    """:func:`precall.evaluate` with ``by=`` the slice columns read, renamed to the file's values."""
    positive = resolve_pos_label(label_counts(columns.labels), pos_label, label, name)
    by, texts = slice_input(columns)

    def run(policy: Any) -> Any:
        return precall.evaluate(np.array(columns.labels), columns.scores, sample_weight=columns.weights,
                                pos_label=positive, ties=ties, recall_grid=recall_grid, on_undefined=policy, by=by,
                                min_support=min_support)

    source = {"file": name, "n_rows": len(columns.labels), "label_column": label, "score_column": score,
              "weight_column": weight, "pos_label": positive}
    return _named_report(run, texts, source, on_undefined)


def accumulated_evaluation(acc: Any, texts: list[list[str]], source: dict[str, Any], *, recall_grid: str,
                           on_undefined: Any, min_support: int) -> SliceReport:
    """``--stream`` / ``--engine dask`` with ``--by``: the evaluation of a
    :class:`precall.SlicedAccumulator` keyed by the in-memory route's codes
    (:func:`precall._slicing.coded_accumulator`), renamed to the file's values."""
    return _named_report(lambda policy: acc.evaluate(recall_grid=recall_grid, on_undefined=policy,
                                                     min_support=min_support), texts, source, on_undefined)


def _named_report(run: Any, texts: list[list[str]], source: dict[str, Any], on_undefined: Any) -> SliceReport:
    """The sliced result ``run(on_undefined)`` of coded slice columns, its slices and messages
    named by the file's values ``texts``."""
    name = source["file"]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            coded_result = run(on_undefined)
        except (ValueError, TypeError) as exc:
            if "slice(s) (" in str(exc):  # the undefined policy "raise": name the slices by their values
                result = run("nan")
                shown = named_message(str(exc), result, with_values(result, texts))
                raise CliError(f"{name}: {cli_spelling(shown)}") from None
            raise CliError(f"{name}: {exc}") from None
    result = with_values(coded_result, texts)
    return SliceReport(source, result,
                       list(dict.fromkeys(named_message(str(w.message), coded_result, result) for w in caught)))


def undefined_in_slices(result: Any, policy: Any) -> list[str]:
    """The warning (a list of at most one) for the numbers of ``evaluate --by --json / --csv`` that the
    slices of one class leave undefined and no ``--on-undefined`` value replaces (null in JSON): AUPRG
    (no positives or no negatives), min AP and best F1 (no positives); none under ``nan`` (NaN asked
    for) or for a result without them."""
    if policy == "nan" or getattr(result, "auprg", None) is None:
        return []
    n_pos, n_neg = np.asarray(result.n_pos), np.asarray(result.n_neg)
    one = np.flatnonzero(((n_pos == 0) | (n_neg == 0)) & np.isnan(np.asarray(result.auprg, dtype=float)))
    if not one.size:
        return []
    many = bool((n_pos[one] == 0).any())
    quantities = "AUPRG, min AP and best F1 are" if many else "AUPRG is"
    names = ", ".join(repr(result.names[i]) for i in one[:5]) + (", ..." if one.size > 5 else "")
    return [f"{quantities} undefined in {counted(one.size, 'slice')} of one class ({names}): null in --json, "
            f"empty or nan in --csv; --on-undefined sets AP's and ROC-AUC's value, {'these have' if many else 'it has'} "
            "none"]


def shown(result: Any, top: int, full: bool) -> list[int | None]:
    """The slices a text table shows: every slice (``full``: the ranked worst first, then the
    others), or the ``top`` worst and best ranked with ``None`` where the rest are counted."""
    ranked = result.ranked.tolist()
    if full:
        seen = set(ranked)
        return ranked + [i for i in range(len(result.names)) if i not in seen]
    if len(ranked) <= 2 * top:
        return ranked
    return ranked[:top] + [None] + ranked[-top:]


def resampled(result: Any, top: int, every: bool) -> list[int]:
    """The slices whose rows are resampled (intervals, tests): every ranked slice, or the ``top``
    worst and best; slices not ranked (undefined, or below ``min_support``) never."""
    return result.ranked.tolist() if every else [i for i in shown(result, top, False) if i is not None]


def with_slice_intervals(report: SliceReport, columns: Columns, *, indices: Sequence[int], ties: str,
                         recall_grid: str, ci: CiOptions, on_undefined: Any) -> SliceReport:
    """``report`` with the intervals of the slices ``indices`` and of all rows (index -1)."""
    if len(indices) > MAX_SLICES:
        raise CliError(f"--ci: {len(indices)} ranked slices to resample, each on its own rows; at most {MAX_SLICES}: "
                       "rank fewer slices with --min-support, or drop --full (text: the --top worst and best only)")
    y = np.array(columns.labels)
    by, _ = slice_input(columns)
    common: dict[str, Any] = {"pos_label": report.input["pos_label"], "ties": ties, "recall_grid": recall_grid,
                              "on_undefined": on_undefined, **bootstrap_kwargs(ci)}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            got = slice_intervals(y, columns.scores, by, slices=indices, sample_weight=columns.weights, **common)
            got[-1] = interval_set(y, columns.scores, columns.weights, **common)  # all rows: as evaluate --ci
        except (ValueError, TypeError) as exc:
            raise CliError(f"{report.source}: {exc}") from None
    messages = list(dict.fromkeys([*report.warnings, *(str(w.message) for w in caught)]))
    return dataclasses.replace(report, options=ci, intervals=got, warnings=messages)


def with_table_intervals(report: SliceReport, tables: Callable[[int], Any], labels: Sequence[str], *,
                         indices: Sequence[int], recall_grid: str, ci: CiOptions, on_undefined: Any) -> SliceReport:
    """``--stream`` / ``--engine dask`` with ``--ci``: :func:`with_slice_intervals` from each slice's
    grouped count table (``tables(i)``, -1: all rows; unweighted): its rows are the table's runs,
    each score repeated once per row of each class (``labels``: the file's two labels, so the
    bootstrap's strata are the in-memory ones), so that the intervals equal the in-memory ones
    (the percentile bootstrap and DeLong depend on the rows' counts per run, not their order)."""
    if len(indices) > MAX_SLICES:
        raise CliError(f"--ci: {len(indices)} ranked slices to resample, each on its own rows; at most {MAX_SLICES}: "
                       "rank fewer slices with --min-support, or drop --full (text: the --top worst and best only)")
    positive = report.input["pos_label"]
    negative = next(text for text in labels if text != positive)
    common: dict[str, Any] = {"pos_label": positive, "ties": "group", "recall_grid": recall_grid,
                              "on_undefined": on_undefined, **bootstrap_kwargs(ci)}
    got: dict[int, IntervalSet | None] = {}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            for i in [*sorted(set(indices)), -1]:
                table = tables(i)
                n_pos, n_neg = np.diff(table.tp, prepend=0), np.diff(table.fp, prepend=0)
                if not (n_pos.any() and n_neg.any()):
                    got[i] = None
                    continue
                y = np.repeat(np.array([positive, negative]), [int(n_pos.sum()), int(n_neg.sum())])
                s = np.concatenate([np.repeat(table.thresholds, n_pos), np.repeat(table.thresholds, n_neg)])
                got[i] = interval_set(y, s, None, **(common if i < 0 else slice_bootstrap(common, i)))
        except (ValueError, TypeError) as exc:
            raise CliError(f"{report.source}: {exc}") from None
    messages = list(dict.fromkeys([*report.warnings, *(str(w.message) for w in caught)]))
    return dataclasses.replace(report, options=ci, intervals=got, warnings=messages)


def slice_rows(columns: Columns, indices: Sequence[int]) -> dict[int, Columns]:
    """The rows of each slice in ``indices`` (in the order of the sliced result's names), as Columns."""
    by, _ = slice_input(columns)
    codes = slice_codes(by, len(columns.labels)).codes
    labels = np.array(columns.labels)
    out = {}
    for i in indices:
        rows = np.flatnonzero(codes == i)
        out[i] = Columns(labels[rows].tolist(), columns.scores[rows],
                         None if columns.weights is None else columns.weights[rows])
    return out


# ---------------------------------------------------------------------------
# output
def _interval_cell(iv: IntervalSet | None, which: str, digits: int) -> str:
    if iv is None:
        return ""
    c = iv.roc_auc if which == "roc" else iv.average_precision["step"]
    return f"[{fmt(c.low, digits)}, {fmt(c.high, digits)}]"


def slice_names_shown(names: Sequence[str], rest: Callable[[], int], *, wide: bool,
                      width: int = WIDTH) -> tuple[list[str], list[tuple[str, str]]]:
    """The slice ``names`` of a text table's rows as it shows them (:func:`precall._core.text.visible`)
    and the legend items (shown, full name) of those shortened: whole with ``wide``; else a name too
    long to fit beside the ``rest()`` of a line (the other columns and their separators: called only
    then) keeps its start and end around ``...`` within :func:`precall._core.text.name_limit`'s
    columns, distinct from every other name shown and from ``overall``."""
    texts = [visible(n) for n in names]
    longest = max(map(columns, texts), default=0)
    if wide or longest <= MIN_NAME:  # whole: a limit is never under MIN_NAME
        return texts, []
    shown = shortened(texts, name_limit(longest, rest(), width), taken=["overall"])
    return shown, [(s, repr(n)) for s, t, n in zip(shown, texts, names) if s != t]


def slice_legend(items: list[tuple[str, str]]) -> list[str]:
    """The lines below a table of the slices whose names it shortened: ``slices:`` and each one's
    full name."""
    return ["", "slices:", *legend(items)] if items else []


def rest_of_line(header: Sequence[str], rows: Any) -> int:
    """The terminal columns of a text table's line (:func:`._format.render_table`: two spaces between
    columns) but its first column: ``rows`` iterable of cell lists (their first cell left out)."""
    widths = [columns(visible(h)) for h in header[1:]]
    for row in rows:
        widths = [max(w, columns(visible(c))) for w, c in zip(widths, row[1:])]
    return sum(widths) + 2 * len(widths)


def slices_text(report: SliceReport, *, top: int, full: bool, digits: int, wide: bool,
                summary: bool = True) -> Iterator[str]:
    """The input summary (unless not ``summary``: the intervals line only) and the table of the
    shown slices (80 columns unless ``wide``), in pieces (:func:`._format.print_chunks` writes
    them): the table's rows made :data:`precall.slices.BLOCK` at a time by
    :func:`._format.render_table_chunks`, so that ``full`` of a million slices never holds every
    row's texts (the same text as :func:`._format.render_table` of every row)."""
    r = report.result
    ranked = r.ranked
    unranked = len(r.names) - ranked.size
    given = report.input
    lines = [
        f"file        {given['file']} ({counted(given['n_rows'], 'row')})",
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
    header += [f"{percent(report.options.level)} CI"] if iv is not None and report.options else []
    header += ["ROC-AUC"] + ([f"{percent(report.options.level)} CI"] if iv is not None and report.options else [])
    header += ["best F1"]

    def cells(i: int, name: str, n: int, n_pos: float, prevalence: float, ap: float, auc: float,
              f1: float | None) -> list[str]:
        out = [name, str(n), fmt_count(n_pos), fmt(prevalence, digits), fmt(ap, digits)]
        if iv is not None:
            out.append(_interval_cell(iv.get(i), "ap", digits))
        out.append(fmt(auc, digits))
        if iv is not None:
            out.append(_interval_cell(iv.get(i), "roc", digits))
        out.append(fmt(f1, digits) if f1 is not None else "-")
        return out

    prevalence = r.prevalence  # the result's own, once

    def slice_rows(at: list[int], names: Sequence[str]) -> list[list[str]]:
        """The rows of the slices ``at`` named ``names``: the numbers of ``r[r.keys[i]]`` (its
        Evaluation), from the arrays."""
        numbers = zip(at, np.asarray(r.n_samples[at]).astype(np.int64).tolist(),
                      *(np.asarray(v, dtype=np.float64).tolist() for v in (
                          r.n_pos[at], prevalence[at], r.average_precision[r.rank_by][at], r.roc_auc[at],
                          r.best_f1[at])))
        return [cells(i, name, n, p, rate, ap, auc, None if math.isnan(f1) else f1)
                for (i, n, p, rate, ap, auc, f1), name in zip(numbers, names)]

    o = r.overall
    overall = cells(-1, "overall", o.n_samples, o.n_pos, o.prevalence, o.average_precision[r.rank_by], o.roc_auc,
                    o.best_f1.f1 if o.best_f1 is not None else None)
    rest = ranked.size - 2 * top
    more = [f"... {rest} more", *[""] * (len(header) - 1)]
    if full:  # every slice: the ranked worst first, then the others (shown(r, top, True) as an array)
        others = np.ones(len(r.names), dtype=bool)
        others[ranked] = False
        entries: Any = np.concatenate([[-1], ranked, np.flatnonzero(others)])
        picked: list[int | None] = []
        at_all = entries[1:].tolist()
    else:  # the overall row (-1), the slices shown, None: the count of the rest
        picked = shown(r, top, full)
        entries = [-1, *picked]
        at_all = [i for i in picked if i is not None]

    def blocks(names: Sequence[str] | None) -> Iterator[list[list[str]]]:
        """The table's rows a block at a time, the slices named ``names`` (None: unnamed, for the
        widths of the other columns)."""
        done = 0
        for start in range(0, len(entries), BLOCK):
            block = entries[start:start + BLOCK]
            block = block.tolist() if isinstance(block, np.ndarray) else block
            at = [i for i in block if i is not None and i >= 0]
            made = iter(slice_rows(at, [""] * len(at) if names is None else names[done:done + len(at)]))
            done += len(at)
            yield [overall if i == -1 else more if i is None else next(made) for i in block]

    # the names as long as the numbers' columns leave room for beside them, the intervals' left out: the
    # tables of --ci (the estimates, then with the intervals, split into blocks of columns) name a slice alike
    kept = [j for j, h in enumerate(header) if not h.endswith(" CI")]
    names, renamed = slice_names_shown([r.names[i] for i in at_all], lambda: rest_of_line(
        [header[j] for j in kept], ([row[j] for j in kept] for rows in blocks(None) for row in rows)), wide=wide)
    yield "\n".join([*fit(lines, wide=wide), ""]) + "\n"
    yield from render_table_chunks(header, lambda: blocks(names), wide=wide)
    legend_lines = slice_legend(renamed)  # the full name of every name shortened, written a block at a time
    for start in range(0, len(legend_lines), BLOCK):
        yield "\n" + "\n".join(legend_lines[start:start + BLOCK])
    if not full and (None in picked or unranked):
        notes = [f"shown: the {min(top, ranked.size)} worst and best ranked slices"
                 + (f"; {counted(unranked, 'slice')} not ranked {'is' if unranked == 1 else 'are'} not shown"
                    if unranked else "")
                 + "; --full for every slice, --json or --csv for every number of every slice"]
        yield "\n" + "\n".join(["", *fit(notes, wide=wide)])


def _interval_json(iv: IntervalSet | None) -> Any:
    if iv is None:
        return None
    return {"average_precision": {m: {"low": c.low, "high": c.high, "method": c.method}
                                  for m, c in iv.average_precision.items()},
            "roc_auc": {"low": iv.roc_auc.low, "high": iv.roc_auc.high, "method": iv.roc_auc.method}}


def slices_json(report: SliceReport) -> dict[str, Any]:
    """Every slice's numbers (:meth:`precall.SlicedEvaluation.to_dict`, JSON-ready already; its
    slices made a block at a time as :func:`._format.json_chunks` writes them), the input, the intervals."""
    out: dict[str, Any] = {"input": json_safe(dict(report.input)), **report.result.to_dict(lazy=True)}
    if report.intervals is not None and report.options is not None:
        o = report.options
        out["intervals"] = json_safe({
            "level": o.level, "bootstrap": {"method": o.method, "n_resamples": o.n_resamples, "seed": o.seed,
                                            "stratified_by_class": {"overall": True, "slices": False}},
            "overall": _interval_json(report.intervals.get(-1)),
            "slices": {report.result.names[i]: _interval_json(v) for i, v in report.intervals.items() if i >= 0},
        })
    out["warnings"] = list(report.warnings)
    return out


def _bound(value: float) -> str:
    """An interval bound's CSV cell at full precision; undefined (NaN) empty, as the numbers' cells
    (:meth:`precall.SlicedEvaluation.csv_rows`) and JSON's ``null``."""
    return "" if math.isnan(value) else repr(float(value))


def slices_csv(report: SliceReport) -> Iterator[str]:
    """One CSV row per slice after the ``overall`` row (:meth:`precall.SlicedEvaluation.csv_rows`: a
    column per ``--by`` column with the slice's value in the file, the name, every number at full
    precision), with the intervals of AP step and ROC-AUC where computed: the lines in pieces of
    :data:`precall.slices.BLOCK` rows (:func:`._format.print_chunks` writes them, to
    :func:`._format.data_stream`).  The values are the file's, as they are (quoted where the csv
    module quotes them), as :meth:`precall.SlicedEvaluation.to_csv` writes them."""
    bounds = ["AP step low", "AP step high", "ROC-AUC low", "ROC-AUC high"] if report.intervals is not None else []
    for start in range(0, len(report.result.names) + 1, BLOCK):  # row 0: overall; row i + 1: slice i
        header, body = report.result.csv_rows(extra=bounds, start=start, stop=start + BLOCK)
        if report.intervals is not None:
            for i, cells in enumerate(body, start - 1):
                iv = report.intervals.get(i)
                cells += ["", "", "", ""] if iv is None else [_bound(iv.average_precision["step"].low),
                                                              _bound(iv.average_precision["step"].high),
                                                              _bound(iv.roc_auc.low), _bound(iv.roc_auc.high)]
        text = "\n".join(render_table(header + bounds, body, style="csv"))  # the values as they are
        if start:  # the header once: a later block's text after its header's (a quoted name may hold a line feed)
            text = text[len("\n".join(render_table(header + bounds, [], style="csv"))):]
        yield text
