"""``precall compare``: paired tests of score columns on the same rows."""

from __future__ import annotations

import argparse
import dataclasses
import functools
import itertools
import math
import warnings
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import numpy as np

import precall
from precall._core.text import percent
from precall._core.validate import RECALL_GRIDS, TIES
from precall.readers import Columns, label_counts, read_file
from precall.slices import by_headers, by_values

from ._common import (
    CliError,
    add_ci_options,
    add_file_arguments,
    add_output_options,
    class_columns_from_prefix,
    digits_arg,
    emit,
    on_undefined_arg,
    parse_class_mapping,
    print_warning_messages,
    print_warnings,
    resolve_pos_label,
    show_labels,
    terminal_progress,
)
from ._format import WIDTH, counted, fit, fmt, fmt_count, fmt_p, json_safe, json_text, listed, render_table
from ._inputs import n_tied_rows, read_scores
from ._intervals import CiOptions, bootstrap_kwargs, ci_options, drawn_as
from ._slices import (MAX_SLICES, add_slice_options, by_columns, resampled, rest_of_line, slice_input, slice_legend,
                      slice_names_shown, slice_rows, sliced_evaluation)


# ---------------------------------------------------------------------------
# compare: paired tests of several score columns
@dataclass(frozen=True)
class Comparison:
    """``precall compare``: every pair of score columns, every metric, from :mod:`precall.stats`."""

    source: str
    n_rows: int
    label_column: str
    score_columns: list[str]
    weight_column: str | None
    pos_label: str
    label_counts: dict[str, int]
    options: CiOptions
    ties: str
    rows: list[tuple[str, str, str, precall.stats.PairedComparison]]  # (A, B, metric, test)
    warnings: list[str]
    classes: list[str] = field(default_factory=list)  # multi-class: the classes (macro averages)
    n_tied: int = 0  # with --ties stable: the most rows of one score column sharing a score
    model_columns: dict[str, list[str]] = field(default_factory=dict)  # multi-class: each model's columns


COMPARE_METRICS = ("roc_auc", *precall.AP_METHODS)


def compare_columns(
    columns: Columns, *, name: str, label: str, score_columns: list[str], weight: str | None,
    pos_label: str | None, metrics: list[str], ties: str, recall_grid: str, ci: CiOptions,
    n_tied: int = 0, on_undefined: Any = "warn",
) -> Comparison:
    """Paired tests of every pair of score columns: DeLong (ROC-AUC, unweighted
    data) and the paired bootstrap of every chosen metric from one set of resamples
    (:func:`precall.stats.bootstrap_tests`; drawn as joint counts of both models' score
    blocks without weights and with grouped ties).  A class of one row leaves DeLong's
    variance and every bootstrap interval undefined: ``on_undefined`` (``--on-undefined``)
    says what they are, for every metric alike (DeLong first: ``"raise"`` stops before any
    resample is drawn)."""
    counts = label_counts(columns.labels)
    positive = resolve_pos_label(counts, pos_label, label, name)
    refuse_one_class(counts, positive, label, name)
    n_pos = counts[positive]
    delong_defined = min(n_pos, sum(counts.values()) - n_pos) >= 2  # else its variance is the policy's
    labels = np.array(columns.labels)
    rows: list[tuple[str, str, str, precall.stats.PairedComparison]] = []
    functions = [functools.partial(precall.roc_auc, pos_label=positive) if metric == "roc_auc" else
                 functools.partial(precall.average_precision, method=metric, ties=ties, recall_grid=recall_grid,
                                   pos_label=positive) for metric in metrics]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            for (i, a), (j, b) in itertools.combinations(enumerate(score_columns), 2):
                sa, sb = columns.scores[:, i], columns.scores[:, j]
                delong = None
                if "roc_auc" in metrics and columns.weights is None:
                    delong = precall.stats.roc_auc_test(labels, sa, sb, level=ci.level, pos_label=positive,
                                                         on_undefined=on_undefined)
                tests = precall.stats.bootstrap_tests(
                    functions, labels, sa, sb, sample_weight=columns.weights, on_undefined=on_undefined,
                    **bootstrap_kwargs(ci, f"bootstrap {a} - {b}", len(labels), paired=True))
                for metric, test in zip(metrics, tests):
                    if metric == "roc_auc" and delong is not None:
                        rows.append((a, b, "ROC-AUC", _zero_variance(delong) if delong_defined else delong))
                    rows.append((a, b, "ROC-AUC" if metric == "roc_auc" else f"AP {metric}", test))
        except (ValueError, TypeError) as exc:
            raise CliError(f"{name}: {exc}") from None
    messages = [str(w.message) for w in caught]
    messages += [zero_variance_warning(a, b) for a, b, _, t in rows if delong_defined and _degenerate(t)]
    return Comparison(
        name, len(columns.labels), label, list(score_columns), weight, positive,
        dict(sorted(counts.items())), ci, ties, rows, list(dict.fromkeys(messages)), n_tied=n_tied,
    )


def _degenerate(t: precall.stats.PairedComparison) -> bool:
    """DeLong's test of two different ROC-AUCs whose difference has zero variance."""
    return t.method == "delong" and t.standard_error == 0 and t.difference != 0


def _zero_variance(t: precall.stats.PairedComparison) -> precall.stats.PairedComparison:
    """DeLong's test as :func:`precall.stats.roc_auc_test` gives it, but a nonzero difference with zero
    variance always z = +-inf and p = 0 (as the unpaired test gives it; an older stats layer gave NaN)."""
    if _degenerate(t) and not (math.isinf(t.statistic) and t.p_value == 0):
        return dataclasses.replace(t, statistic=math.copysign(math.inf, t.difference), p_value=0.0)
    return t


def zero_variance_warning(a: str, b: str) -> str:
    """The warning of :func:`_degenerate`: the test is degenerate."""
    return (f"DeLong's test of {a!r} - {b!r}: the variance of the ROC-AUC difference is zero (degenerate: "
            "every case adds the same to it, as with a constant score or a perfect ranking), so z is +-inf, p "
            "is 0 and the interval has no width: the normal approximation says nothing here; read the "
            "bootstrap rows")


def refuse_one_class(counts: Counter[str], positive: str, label: str, name: str) -> None:
    """:class:`CliError` when the rows are of one class: the metrics compared are undefined for every
    model (ROC-AUC, and AP without positives), so there is nothing to test, whatever the undefined
    policy would make of them."""
    n_pos = counts.get(positive, 0)
    if 0 < n_pos < sum(counts.values()):
        return
    missing = "no row has the positive label" if n_pos == 0 else "every row has the positive label"
    raise CliError(f"{name}: column {label!r}: {missing} {positive!r} ({show_labels(counts)}): ROC-AUC, "
                   "and AP without positives, are undefined for every model (evaluate reports them by "
                   "--on-undefined), and a test of undefined numbers says nothing; compare needs rows of "
                   "both classes (check --pos-label)")


def compare_multiclass(
    columns: Columns, *, name: str, label: str, models: list[tuple[str, list[str]]], classes: list[str],
    weight: str | None, metrics: list[str], ties: str, recall_grid: str, ci: CiOptions,
    n_tied: int = 0, on_undefined: Any = "warn",
) -> Comparison:
    """Paired bootstrap (:func:`precall.stats.bootstrap_test`) of the macro AP / macro
    one-vs-rest ROC-AUC of every pair of models; ``columns.scores`` holds the models'
    class columns side by side, ``len(classes)`` each; ``on_undefined`` as in
    :func:`compare_columns`."""
    labels = np.array(columns.labels)
    k = len(classes)
    rows: list[tuple[str, str, str, precall.stats.PairedComparison]] = []
    counts = label_counts(columns.labels)
    absent = [c for c in classes if str(c) not in counts]
    if absent:
        raise CliError(f"{name}: class(es) {listed([repr(str(c)) for c in absent], 5)} have no rows in column "
                       f"{label!r}: their AP and ROC-AUC, and so the macro averages, are undefined, and a test "
                       "of undefined numbers says nothing; leave them out of every model's class columns")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            functions = [functools.partial(precall.roc_auc, average="macro", labels=classes) if metric == "roc_auc"
                         else functools.partial(precall.average_precision, method=metric, average="macro",
                                                labels=classes, ties=ties, recall_grid=recall_grid)
                         for metric in metrics]
            for (i, (a, _)), (j, (b, _)) in itertools.combinations(enumerate(models), 2):
                sa, sb = columns.scores[:, i * k:(i + 1) * k], columns.scores[:, j * k:(j + 1) * k]
                tests = precall.stats.bootstrap_tests(  # rows: the joint cells of 2k columns are too many
                    functions, labels, sa, sb, sample_weight=columns.weights, on_undefined=on_undefined,
                    **bootstrap_kwargs(ci, f"bootstrap {a} - {b}", len(labels) * k, paired=True))
                rows += [(a, b, "macro ROC-AUC" if metric == "roc_auc" else f"macro AP {metric}", test)
                         for metric, test in zip(metrics, tests)]
        except (ValueError, TypeError) as exc:
            raise CliError(f"{name}: {exc}") from None
    return Comparison(
        name, len(columns.labels), label, [m for m, _ in models], weight, "", dict(sorted(counts.items())),
        ci, ties, rows, list(dict.fromkeys(str(w.message) for w in caught)), list(classes), n_tied,
        {m: list(cols) for m, cols in models},
    )


def _describe_tests(report: Comparison) -> str:
    o = report.options
    seed = "no seed" if o.seed is None else f"seed {o.seed}"
    delong = "" if report.weight_column or report.classes else "; DeLong for ROC-AUC too"
    boot = next((t for *_, t in report.rows if t.method != "delong"), None)
    drawn = "" if boot is None else " " + drawn_as(boot.resample, boot.n_blocks)
    return (
        f"paired, two-sided, {o.level:.4g} intervals; {o.n_resamples} stratified bootstrap "
        f"resamples ({o.method}, {seed}){drawn} for every metric{delong}; ties {report.ties}"
    )


#: the most classes (and class columns) the header of a multi-class comparison names without --full
NAMED_CLASSES = 5


def comparison_header(report: Comparison, wide: bool = False, full: bool = False) -> list[str]:
    """The input summary of a comparison (file, labels, scores, weights, tests), as lines; of a
    multi-class comparison the first :data:`NAMED_CLASSES` classes (and columns of each numbered
    model) are named, every one with ``full``."""
    pos = report.pos_label
    negatives = {k: v for k, v in report.label_counts.items() if k != pos}
    limit = None if full else NAMED_CLASSES
    if report.classes:
        label_line = (f"label       column {report.label_column!r}: {len(report.classes)} classes "
                      + listed([repr(c) for c in report.classes], limit))
    else:
        label_line = (f"label       column {report.label_column!r}: positive {pos!r} "
                      f"({counted(report.label_counts.get(pos, 0), 'row')}), negative "
                      f"{show_labels(Counter(negatives)) if negatives else 'none'}")
    lines = [
        f"file        {report.source} ({counted(report.n_rows, 'row')})",
        label_line,
        "scores      " + _scores_line(report, limit),
        "weight      " + (f"column {report.weight_column!r}" if report.weight_column else "none"),
        "tests       " + _describe_tests(report),
    ]
    if report.ties == "stable" and report.n_tied:
        lines.append(f"note        up to {report.n_tied} rows of a column share their score with another row; "
                     "with --ties stable their order in the file decides the APs (--ties group, the "
                     "default, does not depend on it)")
    return fit(lines, wide=wide)


def _scores_line(report: Comparison, limit: int | None) -> str:
    """The names of the models; of multi-class models numbered ``model 1``, ``model 2``, ...
    (:func:`model_names`) each one's class columns too (at most ``limit``, in the order of the classes)."""
    names = report.score_columns
    if not report.model_columns or names != [f"model {k + 1}" for k in range(len(names))]:
        return ", ".join(repr(c) for c in names)
    return ", ".join(f"{name!r} (columns {listed([repr(c) for c in report.model_columns[name]], limit)})"
                     for name in names)


def format_comparison_text(report: Comparison, digits: int = 4, wide: bool = False, summary: bool = True,
                           full: bool = False) -> str:
    """Input summary (unless not ``summary``: :func:`comparison_header`; ``full``: naming every class),
    then for each pair of models one row per (metric, test); 80 columns unless ``wide`` (``wide``: one
    table with the models' names, z and the method)."""
    lines = comparison_header(report, wide, full) if summary else []
    level = f"{percent(report.options.level)} CI of A - B"

    p_of = _p_text

    def test_name(t: precall.stats.PairedComparison) -> str:
        return "DeLong" if t.method == "delong" else ("bootstrap " + t.method if wide else "bootstrap")

    if wide:
        header = ["A", "B", "metric", "A value", "B value", "A - B", level, "z", "p", "method"]
        body = [[a, b, metric, fmt(t.estimate_a, digits), fmt(t.estimate_b, digits),
                 fmt(t.difference, digits), f"[{fmt(t.low, digits)}, {fmt(t.high, digits)}]",
                 fmt(t.statistic, 3), p_of(t), test_name(t)] for a, b, metric, t in report.rows]
        return "\n".join([*lines, "", *render_table(header, body, wide=True, left=3, prose_last=True)])
    pairs = list(dict.fromkeys((a, b) for a, b, _, _ in report.rows))
    for a, b in pairs:
        lines += ["", *fit([f"A = {a!r}, B = {b!r}"])]
        header = ["metric", "test", "A", "B", "A - B", level, "p"]
        body = [[metric, test_name(t), fmt(t.estimate_a, digits), fmt(t.estimate_b, digits),
                 fmt(t.difference, digits), f"[{fmt(t.low, digits)}, {fmt(t.high, digits)}]",
                 p_of(t)] for x, y, metric, t in report.rows if (x, y) == (a, b)]
        lines += render_table(header, body, left=2)
    lines += ["", "p: two-sided; DeLong: normal p-value of z = (A - B) / SE (z: --wide, --json); "
              "bootstrap: from the same resamples as its interval, which excludes 0 exactly when "
              f"p < {1 - report.options.level:.2g}"]
    if not summary:  # the summary went out before the resamples were drawn: say how they were
        boot = next((t for *_, t in report.rows if t.method != "delong"), None)
        if boot is not None:
            lines.append(f"bootstrap resamples {drawn_as(boot.resample, boot.n_blocks)}")
    return "\n".join(fit(lines))


def _p_text(t: precall.stats.PairedComparison) -> str:
    """A test's p-value as printed (a bootstrap's below its resolution as ``< resolution``)."""
    if t.p_resolution is not None and t.p_value <= t.p_resolution:
        return f"< {t.p_resolution:.2g}"
    return fmt_p(t.p_value)


def comparison_json_dict(report: Comparison) -> dict[str, Any]:
    """One JSON-ready object: the input and every test."""
    tests = []
    for a, b, metric, t in report.rows:
        tests.append({
            "a": a, "b": b, "metric": metric, "method": t.method, "estimate_a": t.estimate_a,
            "estimate_b": t.estimate_b, "difference": t.difference, "low": t.low, "high": t.high,
            "level": t.level, "statistic": t.statistic, "p_value": t.p_value, "p_method": t.p_method,
            "p_resolution": t.p_resolution,
            "standard_error": t.standard_error, "n_resamples": t.n_resamples,
            "n_degenerate": t.n_degenerate, "resample": t.resample, "n_blocks": t.n_blocks,
        })
    return json_safe({
        "input": {
            "file": report.source, "n_rows": report.n_rows, "label_column": report.label_column,
            "score_columns": report.score_columns, "weight_column": report.weight_column,
            "classes": report.classes or None,
            "class_columns": {m: dict(zip(report.classes, cols)) for m, cols in report.model_columns.items()}
            or None,
            "pos_label": report.pos_label or None, "label_counts": report.label_counts,
        },
        "bootstrap": {"method": report.options.method, "n_resamples": report.options.n_resamples,
                      "seed": report.options.seed, "stratified": True},
        "ties": report.ties,
        "tests": tests,
        "warnings": list(report.warnings),
    })



class _ClassModel(argparse.Action):
    """``--class-columns`` / ``--class-prefix``: appended to its own list (``args.class_columns``,
    ``args.class_prefix``), as ``action="append"``, and ``(kind, value)`` to ``args.class_models``: every
    multi-class model in the order given on the command line, whichever option gave it."""

    def __call__(self, parser: Any, namespace: argparse.Namespace, values: Any, option_string: Any = None) -> None:
        setattr(namespace, self.dest, [*(getattr(namespace, self.dest, None) or []), values])
        kind = "prefix" if self.dest == "class_prefix" else "cols"
        namespace.class_models = [*(getattr(namespace, "class_models", None) or []), (kind, values)]


def _models(args: argparse.Namespace) -> list[tuple[str, list[tuple[str, str]]]] | None:
    """Multi-class models: (name, [(class, column), ...]) from repeated ``--class-columns``
    / ``--class-prefix``, in the order given (``args.class_models``, :class:`_ClassModel`); None for
    binary input (``--score``)."""
    specs = getattr(args, "class_models", None) or (
        [("cols", v) for v in args.class_columns or []] + [("prefix", v) for v in args.class_prefix or []])
    if not specs:
        return None
    if args.score:
        raise CliError("give --score (binary) or --class-columns / --class-prefix (multi-class), not both")
    models = []
    for kind, value in specs:
        pairs = (class_columns_from_prefix(args.file, value, args.delimiter) if kind == "prefix"
                 else parse_class_mapping(value))
        models.append((f"{value}*" if kind == "prefix" else value, pairs))
    if len(models) < 2:
        raise CliError("compare needs at least two models: repeat --class-columns (or --class-prefix), "
                       "one per model")
    first = sorted(c for c, _ in models[0][1])
    for name, pairs in models[1:]:
        if sorted(c for c, _ in pairs) != first:
            raise CliError(f"model {name!r} has the classes {sorted(c for c, _ in pairs)}, model "
                           f"{models[0][0]!r} has {first}; every model needs a column for each class")
    return models


MODEL_NAME = 24
"""The longest name of a multi-class model: longer ones, or names alike, number every model."""


def _pattern(columns: list[str], classes: list[str]) -> str | None:
    """``P*S`` when every class's column is ``P + class + S`` (``P`` or ``S`` not empty): the model's
    columns as ``--class-prefix P`` would name them; None otherwise."""
    first, column = classes[0], columns[0]
    for start in range(len(column) - len(first) + 1):
        if column[start:start + len(first)] != first:
            continue
        prefix, suffix = column[:start], column[start + len(first):]
        if (prefix or suffix) and all(col == prefix + c + suffix for c, col in zip(classes, columns)):
            return f"{prefix}*{suffix}"
    return None


def model_names(models: list[list[str]], classes: list[str]) -> list[str]:
    """The names of multi-class models from their class columns (in the order of ``classes``):
    ``P*S`` when each column is ``P + class + S`` (a ``--class-prefix P`` model is ``P*``), else the
    columns joined by commas; when a name is longer than :data:`MODEL_NAME` characters or two are
    alike, every model is ``model 1``, ``model 2``, ... (the header then lists each one's columns)."""
    names = [_pattern(cols, classes) or ",".join(cols) for cols in models]
    if len(set(names)) < len(names) or any(len(name) > MODEL_NAME for name in names):
        return [f"model {k + 1}" for k in range(len(models))]
    return names


def _emit_comparison(report: Comparison, args: argparse.Namespace) -> int:
    """Every test computed, then the warnings and the whole report (JSON or text): an error on
    the way leaves nothing half-written on stdout."""
    return emit(report, args, comparison_json_dict, functools.partial(format_comparison_text, full=args.full))


def _holm_by_test(parts: list[tuple[int, Comparison]]) -> dict[tuple[int, str, str, str, str], float]:
    """Holm-adjusted p-values across the slices (by index; not the overall row, -1), one family per
    (pair of models, metric, test)."""
    families: dict[tuple[str, str, str, str], list[tuple[int, float]]] = {}
    for i, c in parts:
        if i < 0:
            continue
        for a, b, metric, t in c.rows:
            families.setdefault((a, b, metric, t.method), []).append((i, t.p_value))
    out = {}
    for (a, b, metric, method), members in families.items():
        adjusted = precall.stats.holm([p for _, p in members])
        out.update({(i, a, b, metric, method): float(q) for (i, _), q in zip(members, adjusted)})
    return out


def _untested_reasons(result: Any, i: int, one_class: bool) -> list[str]:
    """Why the slice ``i`` of ``result`` has no test: not ranked (no positives: its AP is undefined;
    fewer than ``--min-support`` rows), or ranked but of one class (no negatives: its ROC-AUC is
    undefined; ``one_class``).  Empty for a slice that is tested."""
    reasons = []
    if not result.n_pos[i] > 0:
        reasons.append("no positives")
    if result.n_samples[i] < result.min_support:
        reasons.append(f"fewer than {result.min_support} rows (--min-support)")
    if one_class and not reasons:
        reasons.append("no negatives")
    return reasons


def _untested_counts(untested: dict[int, list[str]]) -> str:
    """The slices not tested counted by reason: ``2 without positives, 1 below --min-support``."""
    kinds = Counter("without positives" if r[0] == "no positives" else "without negatives"
                    if r[0] == "no negatives" else "below --min-support" for r in untested.values())
    return ", ".join(f"{n} {kind}" for kind, n in kinds.items())


def _one_class_warning(result: Any, untested: dict[int, list[str]]) -> list[str]:
    """The warning (a list of at most one) naming the slices of one class, which have no test: the
    numbers compared are undefined there (ROC-AUC, and AP without positives), as ``compare`` refuses
    rows of one class whatever the undefined policy.  Slices left out by ``--min-support`` only are
    counted in the output, not warned about (the option asked for it)."""
    one = [i for i, r in untested.items() if "no positives" in r or "no negatives" in r]
    if not one:
        return []
    names = ", ".join(f"{result.names[i]!r} ({'no positives' if 'no positives' in untested[i] else 'no negatives'})"
                      for i in one[:5]) + (f", ... ({len(one) - 5} more)" if len(one) > 5 else "")
    return [f"{counted(len(one), 'slice')} of one class not tested: {names}: ROC-AUC, and AP without positives, "
            "are undefined there and a test of undefined numbers says nothing; --full or --json lists every "
            "slice not tested with the reason"]


def _compare_slices(args: argparse.Namespace, metrics: list[str]) -> int:
    """``--by``: the paired comparison of the models on all rows and on each shown slice's rows (the
    slices ranked by the first model's step AP: the ``--top`` worst and best, every one with ``--full``
    or ``--json``).  Every slice is accounted for: a slice not ranked (no positives, fewer than
    ``--min-support`` rows) or of one class has no test, and is counted in the text (listed with the
    reason with ``--full``) and listed under ``not_tested`` with the reason in JSON; the slices of one
    class are named in a warning."""
    if args.class_columns or args.class_prefix:
        raise CliError("--by compares --score columns (binary); per class: one --score of each class")
    scores = list(dict.fromkeys(args.score or []))
    if len(scores) == 1:
        return _slices_vs_reference(args, scores[0], metrics)
    if args.reference is not None:
        raise CliError("--reference applies to --by with one --score (each slice against the rest or all rows); "
                       "with several --score columns the models are compared on each slice's rows: drop it")
    if len(scores) < 2:
        raise CliError("compare needs at least two different --score columns")
    columns = read_scores(args, scores, by_columns(args.by))
    # the ranking only (by the first model's AP, defined slices only): no value of an undefined slice is
    # reported, so no policy applies (NaN, no warning); the slices without a test are accounted for below
    first = sliced_evaluation(Columns(columns.labels, columns.scores[:, 0], columns.weights, columns.by),
                              name=args.file, label=args.label, score=scores[0], weight=args.weight,
                              pos_label=args.pos_label, ties=args.ties, recall_grid=args.recall_grid,
                              on_undefined="nan", min_support=args.min_support)
    result = first.result
    every = args.full or args.json
    # Holm's family is every ranked slice: all are tested (the text shows the --top worst and best of them)
    # unless there are more than MAX_SLICES, when the text shows its slices without Holm's adjustment
    family = len(result.ranked) <= MAX_SLICES
    picked = resampled(result, args.top, every or family)
    if len(picked) > MAX_SLICES:
        raise CliError(f"--by: {len(picked)} ranked slices to compare, each by its own resamples; at most "
                       f"{MAX_SLICES}: rank fewer slices with --min-support, or drop --full")
    shown_slices = set(picked if every else resampled(result, args.top, False))
    ranked = set(result.ranked.tolist())
    # not ranked: no test (their reasons); ranked but of one class: found below
    untested = {i: _untested_reasons(result, i, False) for i in range(len(result.names)) if i not in ranked}
    parts: list[tuple[int, Comparison]] = []
    todo = [(-1, columns), *slice_rows(columns, picked).items()]
    # each slice tested on its own rows: a progress line on a terminal when the slices' rows are many
    progress = terminal_progress("slices tested", len(columns.labels) * ci_options(args).n_resamples // 200)
    for done, (i, rows) in enumerate(todo):
        if progress is not None:
            progress(done / len(todo))
        name = "overall" if i < 0 else result.names[i]
        if i >= 0 and len(label_counts(rows.labels)) < 2:  # a slice of one class has no test (all rows: an error)
            untested[i] = _untested_reasons(result, i, True)
            continue
        parts.append((i, compare_columns(
            rows, name=f"{args.file} [{name}]" if i >= 0 else args.file, label=args.label, score_columns=scores,
            weight=args.weight, pos_label=first.input["pos_label"], metrics=metrics, ties=args.ties,
            recall_grid=args.recall_grid, ci=ci_options(args), on_undefined=on_undefined_arg(args))))
    if progress is not None:
        progress(1.0)
    untested = dict(sorted(untested.items()))
    holm = _holm_by_test(parts) if family else {}
    # every warning of the computation, one line each: the ranking's and the slices of one class (the
    # file's), then every test's (its slice's; JSON: in the slice's entry)
    messages = list(dict.fromkeys([*first.warnings, *_one_class_warning(result, untested)]))
    print_warning_messages(args.file, messages)
    for _, c in parts:
        print_warnings(c)
    heads = by_headers(result.columns)  # each slice's values, as evaluate --by --json gives them
    if args.json:
        # every slice by its name; the overall comparison apart, so that no slice value can take its place
        dicts = {i: comparison_json_dict(c) for i, c in parts}
        for i, c in parts:
            for entry, (a, b, metric, t) in zip(dicts[i]["tests"], c.rows):
                entry["p_holm"] = holm.get((i, a, b, metric, t.method))
        overall = dicts.pop(-1, None)
        slices = {result.names[i]: {"by_values": by_values(result.keys[i], heads), **d} for i, d in dicts.items()}
        not_tested = {result.names[i]: {"by_values": by_values(result.keys[i], heads),
                                        "n": int(result.n_samples[i]), "n_pos": float(result.n_pos[i]),
                                        "n_neg": float(result.n_neg[i]), "reason": "; ".join(reasons)}
                      for i, reasons in untested.items()}
        print(json_text(json_safe({"input": {**first.input, "score_columns": scores}, "by": list(result.columns),
                                   "min_support": result.min_support, "n_slices": len(result.names),
                                   "overall": overall, "slices": slices, "not_tested": not_tested,
                                   "ranked_worst_first": [result.names[i] for i in result.ranked],
                                   "warnings": messages})))
        return 0
    parts = [(i, c) for i, c in parts if i < 0 or i in shown_slices]
    lines = comparison_header(parts[0][1], args.wide) if parts else []
    lines += fit([f"slices      {len(result.names)} by {', '.join(result.columns)}; {len(ranked)} ranked by AP "
                  f"step of {scores[0]!r}"
                  + (f"; {len(untested)} not tested ({_untested_counts(untested)})" if untested else "")
                  + "; shown: all rows and "
                  + ("every ranked slice" if args.full else f"the {args.top} worst and best ranked")],
                 wide=args.wide)
    level = f"{percent(args.level)} CI of A - B"
    header = ["slice", "metric", "test", "A", "B", "A - B", level, "p", "Holm p"][:None if family else -1]
    tables = []  # each pair's rows, the slice's index first (-1: all rows)
    for a, b in itertools.combinations(scores, 2):
        body = [[i, metric, "DeLong" if t.method == "delong" else "bootstrap", fmt(t.estimate_a, args.digits),
                 fmt(t.estimate_b, args.digits), fmt(t.difference, args.digits),
                 f"[{fmt(t.low, args.digits)}, {fmt(t.high, args.digits)}]", _p_text(t),
                 "" if (i, x, y, metric, t.method) not in holm else fmt_p(holm[i, x, y, metric, t.method])]
                for i, c in parts for x, y, metric, t in c.rows if (x, y) == (a, b)]
        tables.append((a, b, [row[:len(header)] for row in body]))
    # the slices' names as the tables show them: shortened alike in every table (a legend below them)
    listed = [i for i, _ in parts if i >= 0] + (list(untested) if args.full else [])
    names, renamed = slice_names_shown([result.names[i] for i in listed], lambda: rest_of_line(
        header, (row for _, _, body in tables for row in body)), wide=args.wide)
    name_of = {-1: "overall", **dict(zip(listed, names))}
    for a, b, body in tables:
        lines += ["", *fit([f"A = {a!r}, B = {b!r}"]),
                  *render_table(header, [[name_of[row[0]], *row[1:]] for row in body], wide=args.wide, left=3)]
    if untested and args.full:  # every slice without a test, with the reason
        lines += ["", *fit([f"not tested: {counted(len(untested), 'slice')}"]),
                  *render_table(["slice", "n", "n_pos", "reason"],
                                [[name_of[i], str(int(result.n_samples[i])), fmt_count(result.n_pos[i]),
                                  "; ".join(reasons)] for i, reasons in untested.items()],
                                wide=args.wide, prose_last=True)]
    lines += slice_legend(renamed)
    holm_note = ("Holm p: adjusted (Holm) across every ranked slice tested, for each metric and test (the overall "
                 "row is not one of them)" if family else
                 f"no Holm p: more than {MAX_SLICES} ranked slices to test (rank fewer with --min-support)")
    every_slice = ("--json for every slice" if family else
                   f"--json and --full test at most {MAX_SLICES} ranked slices (rank fewer with --min-support)")
    lines += ["", *fit([f"p: two-sided, each slice tested on its own rows; {holm_note}; {every_slice}"],
                       wide=args.wide)]
    if untested and not args.full:
        k = len(untested)
        lines += fit([f"not tested: {counted(k, 'slice')} ({_untested_counts(untested)}) "
                      f"{'is' if k == 1 else 'are'} not shown; --full or --json lists each with the reason"],
                     wide=args.wide)
    print("\n".join(lines))
    return 0


def _slices_vs_reference(args: argparse.Namespace, score: str, metrics: list[str]) -> int:
    """``--by`` with one ``--score``: each slice against the rest of the rows or all rows
    (``--reference``; :func:`precall.stats.compare_slices`: the slice's AP and ROC-AUC intervals, the
    differences from the reference with Holm's p-values; with ``--weight`` every interval a bootstrap of
    the weighted rows), the slices named and ordered as ``evaluate --by`` names them."""
    aps = [m for m in metrics if m != "roc_auc"]
    if len(aps) > 1:
        raise CliError(f"--by with one --score compares one AP convention with the {args.reference or 'rest'}; "
                       f"got --metric {', '.join(aps)}: give one")
    if args.ci_method != "percentile":  # compare_slices' intervals are percentile intervals (and DeLong's)
        raise CliError(f"--ci-method {args.ci_method}: --by with one --score gives percentile bootstrap intervals "
                       "(and DeLong's for ROC-AUC); leave --ci-method out")
    if args.on_undefined != "warn":  # compare_slices has no policy: a slice it cannot test is NaN, not ranked
        raise CliError(f"--on-undefined {args.on_undefined}: --by with one --score reports a slice without an "
                       "interval or test as NaN, named in the output; leave --on-undefined out")
    columns = read_scores(args, [score], by_columns(args.by))
    first = sliced_evaluation(columns, name=args.file, label=args.label, score=score, weight=args.weight,
                              pos_label=args.pos_label, ties=args.ties, recall_grid=args.recall_grid,
                              on_undefined="nan", min_support=args.min_support)
    refuse_one_class(label_counts(columns.labels), first.input["pos_label"], args.label, args.file)
    by, _ = slice_input(columns)
    ci = ci_options(args)
    reference = args.reference or precall.stats.REFERENCES[0]
    progress = terminal_progress(f"slices vs {'the rest' if reference == 'rest' else 'all rows'}",
                                 len(columns.labels) * ci.n_resamples // 50)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = precall.stats.compare_slices(
                np.array(columns.labels), columns.scores, by=by, sample_weight=columns.weights,
                method=aps[0] if aps else "step", pos_label=first.input["pos_label"], level=ci.level,
                n_resamples=ci.n_resamples, random_state=ci.seed, min_support=args.min_support,
                reference=reference, progress=progress)
        except (ValueError, TypeError) as exc:
            raise CliError(f"{args.file}: {exc}") from None
    # the same slices, in the same order, with the file's values
    result = dataclasses.replace(result, names=first.result.names, keys=first.result.keys)
    print_warning_messages(args.file, list(dict.fromkeys(str(w.message) for w in caught)))
    if args.json:
        print(json_text(json_safe({"input": {**first.input, "score_columns": [score]}, **result.to_dict()})))
        return 0
    k = len(result.names) if args.full else args.top
    print(result.to_text(k=max(k, 1), width=None if args.wide else WIDTH))
    return 0


def cmd_compare(args: argparse.Namespace) -> int:
    metrics = list(dict.fromkeys(args.metric)) if args.metric else ["roc_auc", "step"]
    if args.by:
        return _compare_slices(args, metrics)
    if args.reference is not None:
        raise CliError("--reference applies with --by (each slice against the rest or all rows)")
    models = _models(args)
    path = args.file
    if models is not None:
        if args.pos_label is not None:
            raise CliError("--pos-label applies only with --score; with --class-columns each class is in "
                           "turn the positive one")
        classes = [c for c, _ in models[0][1]]
        ordered = [dict(pairs) for _, pairs in models]
        names = model_names([[m[c] for c in classes] for m in ordered], classes)
        all_columns = [(m[c], "--class-columns") for m in ordered for c in classes]
        columns = read_file(path, label=args.label, score_columns=all_columns, weight=args.weight,
                            classes=classes, delimiter=args.delimiter)
        report = compare_multiclass(
            columns, name=path, label=args.label, models=[(n, [m[c] for c in classes]) for n, m in
                                                          zip(names, ordered)],
            classes=classes, weight=args.weight, metrics=metrics, ties=args.ties,
            recall_grid=args.recall_grid, ci=ci_options(args),
            n_tied=_n_tied_columns(columns, args.ties), on_undefined=on_undefined_arg(args),
        )
        return _emit_comparison(report, args)
    scores = list(dict.fromkeys(args.score or []))
    if len(scores) < 2:
        raise CliError("compare needs at least two different --score columns")
    columns = read_scores(args, scores)
    report = compare_columns(
        columns, name=path, label=args.label, score_columns=scores, weight=args.weight,
        pos_label=args.pos_label, metrics=metrics, ties=args.ties, recall_grid=args.recall_grid,
        ci=ci_options(args), n_tied=_n_tied_columns(columns, args.ties), on_undefined=on_undefined_arg(args),
    )
    return _emit_comparison(report, args)


def _n_tied_columns(columns: Columns, ties: str) -> int:
    """The most rows of one score column sharing a score (only counted, and only shown, with
    ``--ties stable``)."""
    if ties != "stable":
        return 0
    scores = columns.scores.reshape(len(columns.labels), -1)
    return max(n_tied_rows(scores[:, j], columns.weights) for j in range(scores.shape[1]))



def register(sub: Any) -> None:
    cmp = sub.add_parser(
        "compare",
        help="paired tests: do two (or more) score columns differ on the same samples?",
        description="Compare score columns of one file on the same rows: for every pair, "
        "DeLong's test of the ROC-AUCs (pROC's roc.test; unweighted data) and a paired "
        "stratified bootstrap of each chosen metric, with the difference, its confidence "
        "interval, z and the two-sided p-value.",
    )
    add_file_arguments(cmp)
    cmp.add_argument("--score", action="append", metavar="COL",
                     help="a score column (give two or more: --score A --score B; with --by, one compares each "
                     "slice with the rest or, --reference overall, with all rows)")
    cmp.add_argument("--class-columns", action=_ClassModel, metavar="C1,C2,...",
                     help="multi-class: one model's score columns, one per class (C1,C2,... named as "
                     "the classes, or LABEL=COLUMN pairs); repeat for each model; the macro AP and "
                     "macro one-vs-rest ROC-AUC are compared by a paired bootstrap")
    cmp.add_argument("--class-prefix", action=_ClassModel, metavar="P",
                     help="multi-class: one model's columns are P + LABEL for each class; repeatable (the "
                     "models, of either option, in the order given)")
    cmp.add_argument("--metric", choices=COMPARE_METRICS, action="append", metavar="M",
                     help="roc_auc or an AP convention (repeatable; default roc_auc and step)")
    cmp.add_argument("--ties", choices=TIES, default="group", help="tie rule for AP (default group)")
    cmp.add_argument("--recall-grid", choices=RECALL_GRIDS, default="reference",
                     help="recall grid of voc2007/coco (default reference)")
    cmp.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    cmp.add_argument("--digits", type=digits_arg, default=4, metavar="N",
                     help="decimals in the text output (default 4)")
    add_ci_options(cmp)
    add_slice_options(cmp, what="the paired comparison of the models",
                      class_full="name every class and class column in the header")
    cmp.add_argument("--reference", choices=precall.stats.REFERENCES, default=None,
                     help="with --by and one --score: compare each slice with the rest of the rows (default; "
                     "disjoint: unpaired DeLong and independent bootstraps) or with all rows (the slice among "
                     "them: one bootstrap by slice and class, DeLong with the shared cases)")
    add_output_options(cmp)
    cmp.set_defaults(func=cmd_compare)
