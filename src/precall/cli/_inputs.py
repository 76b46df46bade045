"""What the commands read from a data file and know about its columns (internal): the score
columns of ``--score`` and of ``--class-columns`` / ``--class-prefix`` (through
:func:`precall.readers.read_file`), ties among the scores and the scores around a threshold."""

from __future__ import annotations

import argparse
from typing import Any, Iterable, Sequence

import numpy as np

from precall._core.sort import sorted_scores
from precall._core.validate import check_multi
from precall.readers import Columns, Labels, numeric_labels, positive_label, read_file

from ._common import CliError, class_pairs

_BLOCK = 1 << 20  # rows at a time in score_neighbours


def read_scores(args: argparse.Namespace, names: list[str], by: Sequence[str] = ()) -> Columns:
    """The label, weight and ``--score`` columns ``names`` of ``args.file`` (scores of shape
    (n,) for one name, (n, k) for k), and the ``--by`` slice columns ``by``.  A ``--pos-label``
    that names a label of a column of numbers by value (``1.0`` for the label ``1``) is set to
    that label's text (:func:`precall.readers.positive_label`)."""
    columns = read_file(args.file, label=args.label, score_columns=[(c, "--score") for c in names],
                        weight=args.weight, delimiter=args.delimiter, by=by)
    pos_label = getattr(args, "pos_label", None)
    if pos_label is not None:
        texts = columns.labels.texts if isinstance(columns.labels, Labels) else sorted(set(columns.labels))
        if pos_label not in texts:
            args.pos_label = positive_label(pos_label, texts, numeric_labels(args.file, args.label))
    return columns


def read_classes(args: argparse.Namespace) -> tuple[list[tuple[str, str]], Columns]:
    """The (class, column) pairs of ``--class-columns`` / ``--class-prefix`` and the columns
    read for them (scores of shape (n, k), one column per class, in that order)."""
    option = "--class-prefix" if getattr(args, "class_prefix", None) is not None else "--class-columns"
    pairs = class_pairs(args)
    columns = read_file(args.file, label=args.label, score_columns=[(col, option) for _, col in pairs],
                        weight=args.weight, classes=[c for c, _ in pairs], delimiter=args.delimiter)
    return pairs, columns


def undefined_classes(y: np.ndarray, scores: np.ndarray, weights: np.ndarray | None, classes: list[str],
                      label: str) -> str:
    """The classes whose AP or ROC-AUC is undefined (no rows of the class; every row of it), in
    words, or "" when there are none."""
    positive = check_multi(y, scores, weights, classes).positive  # the rows of positive weight
    of = " of positive weight" if weights is not None else ""
    parts = []
    for mask, what in ((~positive.any(axis=0), f"no rows{of} in column {label!r}: their AP and ROC-AUC are"),
                       (positive.all(axis=0), f"every row{of} in column {label!r}: their ROC-AUC is")):
        names = [c for c, bad in zip(classes, mask.tolist()) if bad]
        if names:
            parts.append(f"class(es) {', '.join(repr(str(c)) for c in names)} have {what} undefined")
    return "; ".join(parts)


def class_error(name: str, exc: Exception, columns: Columns, classes: list[str], label: str,
                on_undefined: Any) -> CliError:
    """The error of a library call on class columns (``evaluate``, ``plot``, ``report``): under
    ``--on-undefined raise`` the classes whose metrics are undefined (:func:`undefined_classes`) and what
    to do, in the command's options (the library cannot name the class); else the library's message."""
    if on_undefined == "raise":
        undefined = undefined_classes(np.array(columns.labels), columns.scores, columns.weights, classes, label)
        if undefined:
            return CliError(f"{name}: {undefined}, and --on-undefined raise makes that an error; leave them out "
                            "of --class-columns, or choose --on-undefined warn, nan or zero")
    return CliError(f"{name}: {exc}")


def n_tied_rows(scores: np.ndarray, weights: np.ndarray | None) -> int:
    """How many rows (with positive weight) share their score with another row."""
    s = scores if weights is None else scores[weights > 0]
    if s.size < 2:
        return 0
    s = sorted_scores(s)
    same = s[1:] == s[:-1]
    tied = np.zeros(s.size, dtype=bool)
    tied[1:] |= same
    tied[:-1] |= same
    return int(np.count_nonzero(tied))


def score_neighbours(scores: np.ndarray, weights: np.ndarray | None,
                     thresholds: Iterable[float]) -> dict[float, tuple[float, ...]]:
    """For each threshold, the nearest distinct scores below and above it (rows of positive
    weight), so that it can be printed with the digits that tell it from them."""
    s = np.asarray(scores).ravel()
    w = None if weights is None else np.asarray(weights).ravel()
    out = {}
    for t in thresholds:  # block by block: no boolean or copy of every row (the scores are finite)
        t = float(t)
        below, above = -np.inf, np.inf
        for start in range(0, s.size, _BLOCK):
            block = s[start:start + _BLOCK].astype(np.float64, copy=False)  # float32 scores: compared exactly
            if w is not None:
                block = block[w[start:start + _BLOCK] > 0]
            below = max(below, float(np.max(block, where=block < t, initial=-np.inf)))
            above = min(above, float(np.min(block, where=block > t, initial=np.inf)))
        out[t] = tuple(x for x in (below, above) if np.isfinite(x))
    return out
