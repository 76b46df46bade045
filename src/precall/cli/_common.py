"""What every command shares: errors, the positive label, option types, warnings, progress (internal)."""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from typing import Any, Callable, Sequence

import precall
from precall import readers
from precall._core.validate import MIN_PREVALENCE, check_number

from ._format import json_text, listed

PROG = "precall"

TIES_HELP = {
    "group": "equal scores share one threshold, as scikit-learn",
    "stable": "one operating point per row, equal scores in file order",
}

_MAX_LABELS_SHOWN = 10


class CliError(Exception):
    """A user-facing error: printed as one line, exit code 2."""


# ---------------------------------------------------------------------------
# the positive label
def _default_positive(seen: list[str]) -> str | None:
    """The positive label when the labels are {0, 1}, {-1, 1} or {false, true}; else None."""
    lowered = {s.lower() for s in seen}
    if len(lowered) == len(seen) and lowered <= {"true", "false"}:
        for s in seen:
            if s.lower() == "true":
                return s
        return "true"
    if not all(readers.is_number_text(s) for s in seen):  # float() reads "１", "1_0", "٠": not the parsers' numbers
        return None
    values = [float(s) for s in seen]
    if len(set(values)) != len(seen):  # e.g. both "1" and "1.0": ambiguous
        return None
    if set(values) <= {0.0, 1.0} or set(values) <= {-1.0, 1.0}:
        for s, v in zip(seen, values):
            if v == 1.0:
                return s
        return "1"
    return None


def show_labels(counts: Counter[str]) -> str:
    items = [
        f"{lab!r} ({n} row{'' if n == 1 else 's'})"
        for lab, n in sorted(counts.items())[:_MAX_LABELS_SHOWN]
    ]
    more = f", ... ({len(counts)} labels in all)" if len(counts) > _MAX_LABELS_SHOWN else ""
    return ", ".join(items) + more


def resolve_pos_label(counts: Counter[str], pos_label: str | None, column: str, name: str) -> str:
    """The positive label, as a string, or :class:`CliError` asking for ``--pos-label``."""
    if pos_label is not None:
        if pos_label not in counts:
            raise CliError(
                f"{name}: column {column!r}: --pos-label {pos_label!r} does not occur; "
                f"the labels seen are {show_labels(counts)}"
            )
        return pos_label
    positive = _default_positive(sorted(counts))
    if positive is None:
        raise CliError(
            f"{name}: column {column!r}: the labels are not {{0, 1}}, {{-1, 1}} or "
            f"{{false, true}}, so the positive class is ambiguous; the labels seen are "
            f"{show_labels(counts)}; name the positive one with --pos-label"
        )
    return positive



def parse_class_mapping(text: str) -> list[tuple[str, str]]:
    """``C1,C2,...`` (a column's name is its class) or ``L1=C1,L2=C2,...`` (label = column):
    the (class label, score column) pairs, in order."""
    pairs = []
    for item in text.split(","):
        label, sep, column = item.partition("=")
        label, column = label.strip(), column.strip()
        if not sep:
            column = label
        if not label or not column:
            raise CliError(f"--class-columns {text!r}: empty class or column name in {item.strip()!r}; "
                           "give C1,C2,... or LABEL1=C1,LABEL2=C2,...")
        pairs.append((label, column))
    for what, values in (("class", [p[0] for p in pairs]), ("column", [p[1] for p in pairs])):
        seen: set[str] = set()
        for v in values:
            if v in seen:
                raise CliError(f"--class-columns {text!r}: {what} {v!r} is given twice")
            seen.add(v)
    if len(pairs) < 2:
        raise CliError(
            f"--class-columns {text!r}: needs at least two columns (one per class); "
            "for one score column use --score"
        )
    return pairs


def class_columns_from_prefix(path: str, prefix: str, delimiter: str | None = None) -> list[tuple[str, str]]:
    """``--class-prefix P``: every column named P + LABEL is the score of class LABEL."""
    names = readers.column_names(path, delimiter)  # the readers' formats, decompression and errors
    pairs = [(c[len(prefix):], c) for c in names if c.startswith(prefix) and len(c) > len(prefix)]
    if len(pairs) < 2:
        shown = ", ".join(repr(c) for c in names[:10]) + (", ..." if len(names) > 10 else "")
        raise CliError(f"{path}: --class-prefix {prefix!r}: {len(pairs)} column(s) start with it "
                       f"(at least two needed, one per class); the columns are {shown}")
    return pairs


def class_pairs(args: Any) -> list[tuple[str, str]]:
    """The (class label, score column) pairs of ``--class-columns`` or ``--class-prefix``."""
    if args.class_prefix is not None:
        return class_columns_from_prefix(args.file, args.class_prefix, args.delimiter)
    return parse_class_mapping(args.class_columns)


def cli_spelling(message: str) -> str:
    """The library's advice about ``on_undefined=...`` as the CLI's ``--on-undefined``."""
    return (message.replace("Choose another result with on_undefined='nan', 'raise' or a number",
                            "Choose another result with --on-undefined nan, raise or zero")
            .replace("Choose another result than NaN with on_undefined='raise' or a number",
                     "Choose another result with --on-undefined raise or zero")
            .replace("Stopped by on_undefined='raise'; 'warn', 'nan' or a number give a result instead",
                     "Stopped by --on-undefined raise; warn, nan or zero give a result instead")
            .replace("Choose another result with on_undefined='raise' or a number",
                     "Choose another result with --on-undefined raise or zero")
            .replace("cannot reweight to `prevalence` ", "cannot reweight to --prevalence ")
            .replace("or drop `prevalence`", "or drop --prevalence")
            .replace(" out of `labels` and its column out of `y_score`", " out of --class-columns")
            .replace(" out of `labels` and their columns out of `y_score`", " out of --class-columns"))


def print_warning_messages(source: str, messages: Sequence[str]) -> None:
    """Each message's first line once (matplotlib warns of a glyph missing from its font at every
    drawing of the text), in the CLI's spelling, on stderr."""
    for first in dict.fromkeys(cli_spelling(message.splitlines()[0] if message else message) for message in messages):
        print(f"{PROG}: warning: {source}: {first}", file=sys.stderr)


_CLASS_UNDEFINED = ("No positive", "No negative", "Only one class")  # the library's undefined-metric warnings


def class_warnings(messages: Sequence[str], classes: Sequence[Any], labels: Sequence[str],
                   label_column: str, option: bool = False) -> list[str]:
    """Multi-class warnings, each once: the library's undefined-metric warnings (which
    cannot say which class) replaced by one naming the classes without rows, and one naming a
    class of every row (its ROC-AUC has no negatives) (``option``: and the command's
    ``--on-undefined``, which sets their values)."""
    counts = readers.label_counts(labels)  # by the codes when the reader gave them
    absent = [c for c in classes if not counts.get(str(c))]
    every = [c for c in classes if len(labels) and counts.get(str(c)) == len(labels)]
    named = []
    if absent:
        named.append(f"class(es) {listed([repr(str(c)) for c in absent], 5)} have no rows in column "
                     f"{label_column!r}: their AP and ROC-AUC are undefined (AP 0 and ROC-AUC NaN by default, as "
                     "scikit-learn reports them; the averages include them"
                     + ("; --on-undefined chooses other values" if option else "")
                     + "); leave them out of the class columns to average over the others")
    if every:
        named.append(f"class(es) {listed([repr(str(c)) for c in every], 5)} have every row in column "
                     f"{label_column!r}: their ROC-AUC is undefined, having no negatives (NaN by default, as "
                     "scikit-learn reports it; the averages include it"
                     + ("; --on-undefined chooses another value" if option else "") + ")")
    out = [m for m in dict.fromkeys(messages) if m not in named]
    if named:
        out = named + [m for m in out if not m.startswith(_CLASS_UNDEFINED)]
    return out


def print_warnings(report: Any) -> None:
    """Print the warnings a report collected (it has `.source` and `.warnings`)."""
    print_warning_messages(report.source, report.warnings)


def emit(report: Any, args: argparse.Namespace, as_json: Callable[[Any], dict[str, Any]],
          as_text: Callable[..., str]) -> int:
    """Warnings to stderr, then the report as JSON (``--json``) or text; exit code 0."""
    print_warnings(report)
    if args.json:
        print(json_text(as_json(report)))
    else:
        print(as_text(report, digits=args.digits, wide=getattr(args, "wide", False)))
    return 0



def terminal_progress(label: str, size: int) -> Callable[[float], None] | None:
    """``\rLABEL: 42%`` on a terminal for large inputs (more than 100 000 items); None otherwise."""
    if size <= 100_000 or not sys.stderr.isatty():
        return None
    shown = [-1]

    def report(fraction: float) -> None:
        pct = int(100 * fraction)
        if pct != shown[0]:
            shown[0] = pct
            end = "\n" if pct >= 100 else ""
            print(f"\r{label}: {pct:3d}%", end=end, file=sys.stderr, flush=True)

    return report



# ---------------------------------------------------------------------------
# argument parsing
def number_arg(*, integer: bool = False, low: float | None = None, high: float | None = None,
               low_open: bool = False, high_open: bool = False, hint: str = "") -> Callable[[str], Any]:
    """An argparse type for a numeric option, checked by the library's one rule
    (:func:`precall._core.validate.check_number`): the message says what the option takes
    (and ``hint``) and the text given; argparse names the option."""

    def parse(text: str) -> Any:
        try:
            value: Any = int(text) if integer else float(text)
        except ValueError:
            try:  # "1e3" or "2.0" for a whole number: checked as the number it is
                value = float(text)
            except ValueError:
                value = text  # not a number at all: check_number says what it takes
        try:
            return check_number(value, "value", integer=integer, low=low, high=high, low_open=low_open,
                                high_open=high_open, hint=hint)
        except (TypeError, ValueError) as exc:
            rule = str(exc).removeprefix("`value` ").rpartition("; got ")[0]
            raise argparse.ArgumentTypeError(f"{rule}; got {text!r}") from None

    return parse


def int_in(low: int, high: int | None = None) -> Callable[[str], int]:
    """An argparse type: a whole number in [low, high] (no upper bound when high is None)."""
    return number_arg(integer=True, low=low, high=high)


digits_arg = int_in(1, 17)
resamples_arg = int_in(2)
level_arg = number_arg(low=0, high=1, low_open=True, high_open=True, hint="a confidence level, e.g. 0.95")
unit_arg = number_arg(low=0, high=1)
prevalence_arg = number_arg(low=MIN_PREVALENCE, high=1, high_open=True,
                            hint="the share of positives, e.g. 0.001")
finite_arg = number_arg()
max_fpr_arg = number_arg(low=0, high=1, low_open=True,
                         hint="the largest false-positive rate of the partial ROC-AUC, e.g. 0.1; 1 is the full AUC")


def seed_arg(text: str) -> int | None:
    """``--seed``: a non-negative whole number, or ``none`` for fresh randomness."""
    return None if text.strip().lower() == "none" else int_in(0)(text)


def add_file_arguments(p: argparse.ArgumentParser) -> None:
    """FILE, --label, --pos-label, --weight and --delimiter: every command that reads data."""
    p.add_argument("file", metavar="FILE",
                   help="the data: .csv, .tsv, .jsonl (optionally .gz), .parquet, .npz or .npy")
    p.add_argument("--label", required=True, metavar="COL", help="column with the true labels")
    p.add_argument("--pos-label", metavar="V",
                   help="the positive label, compared as text; every other label is negative. "
                   "Needed unless the labels are {0,1}, {-1,1} or {false,true}")
    p.add_argument("--weight", metavar="COL", help="column with non-negative sample weights")

    def delimiter(text: str) -> str:
        named = {"tab": "\t", "\\t": "\t", "comma": ",", "semicolon": ";", "pipe": "|", "space": " "}
        value = named.get(text.lower() if text.isalpha() else text, text)
        if len(value) != 1 or value in "\r\n\"":
            raise argparse.ArgumentTypeError(
                f"must be one character (or tab, \\t, comma, semicolon, pipe, space); got {text[:20]!r}"
                + ("..." if len(text) > 20 else ""))
        return value

    p.add_argument("--delimiter", metavar="CHAR", type=delimiter,
                   help="field delimiter of text files: one character, or tab (also \\t), comma, semicolon, "
                   "pipe, space (default: tab for .tsv/.tab, comma otherwise)")


ON_UNDEFINED = ("warn", "nan", "raise", "zero")


def on_undefined_arg(args: argparse.Namespace) -> Any:
    """``--on-undefined`` as the library's ``on_undefined`` (``zero``: the number 0.0)."""
    value = getattr(args, "on_undefined", "warn")
    return 0.0 if value == "zero" else value


def add_on_undefined_option(p: argparse.ArgumentParser) -> None:
    """``--on-undefined``: the one undefined-metric policy of every command that prints or draws
    numbers (read with :func:`on_undefined_arg`)."""
    p.add_argument("--on-undefined", choices=ON_UNDEFINED, default="warn",
                   help="a metric undefined for the data (AP without positives, ROC-AUC with one "
                   "class): warn (default: AP 0.0 as scikit-learn, ROC-AUC nan, with a warning), "
                   "nan, raise (an error, exit 2) or zero")


def add_output_options(p: argparse.ArgumentParser, *, undefined: bool = True) -> None:
    """``--wide`` (and ``--on-undefined``, :func:`add_on_undefined_option`): shared by the commands
    that print tables."""
    p.add_argument("--wide", action="store_true",
                   help="print the full tables on one block each, descriptions inline, whatever the "
                   "width (default: fit 80 columns, long descriptions in a legend)")
    if undefined:
        add_on_undefined_option(p)


def add_ci_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--level", type=level_arg, default=0.95, metavar="L",
                   help="confidence level of the intervals (default 0.95)")
    p.add_argument("--ci-method", choices=precall.stats.BOOTSTRAP_METHODS, default="percentile",
                   help="bootstrap interval: percentile (default) or bca")
    p.add_argument("--resamples", type=resamples_arg, default=precall.stats.DEFAULT_RESAMPLES, metavar="N",
                   help=f"bootstrap resamples (default {precall.stats.DEFAULT_RESAMPLES}, as every command)")
    p.add_argument("--seed", type=seed_arg, default=precall.stats.DEFAULT_SEED, metavar="N",
                   help=f"random seed of the bootstrap (default {precall.stats.DEFAULT_SEED}, as every command, "
                   "so runs repeat; 'none' for fresh randomness)")
