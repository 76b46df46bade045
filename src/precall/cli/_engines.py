"""``evaluate --stream`` and ``--engine dask``: binary input without holding the rows in memory."""

from __future__ import annotations

import argparse
import contextlib
import os
from collections import Counter
from typing import Any, Iterator

import numpy as np

import precall
from precall.readers import iter_file, label_counts, label_text

from ._common import CliError, resolve_pos_label


#: ``evaluate --engine``: in memory (the default), streamed through an Accumulator, on Dask
ENGINES = ("memory", "stream", "dask")

def check_single_binary(args: argparse.Namespace, option: str) -> None:
    if args.class_columns is not None or len(args.score) != 1:
        raise CliError(f"{option} takes one --score column (binary input)")
    if args.ties != "group" or args.ci or args.at_recall or args.at_precision or args.at_threshold or args.at_best:
        raise CliError(f"{option} evaluates with grouped ties and no --ci / --at-*; drop those options")


Evaluations = tuple[precall.Evaluation, tuple[tuple[float, precall.Evaluation], ...]]


def evaluate_stream(args: argparse.Namespace) -> tuple[Evaluations, Counter[str], str]:
    """``--stream``: the file in chunks through an exact :class:`precall.Accumulator`."""
    path, score = args.file, args.score[0]
    counts: Counter[str] = Counter()
    acc = positive = None
    for chunk in iter_file(path, label=args.label, score_columns=[(score, "--score")], weight=args.weight,
                           delimiter=args.delimiter, chunk_rows=args.chunk_rows):
        counts.update(label_counts(chunk.labels))
        if acc is None:  # a given --pos-label need not occur in the first chunk: checked on the whole file below
            positive = args.pos_label if args.pos_label is not None else resolve_pos_label(
                label_counts(chunk.labels), None, args.label, path)
            acc = precall.Accumulator(pos_label=positive)
        try:
            acc.update(np.array(chunk.labels), chunk.scores, sample_weight=chunk.weights)
        except (ValueError, TypeError) as exc:
            raise CliError(f"{path}: {exc}") from None
    if acc is None:
        raise CliError(f"{path}: no data rows")
    if resolve_pos_label(counts, args.pos_label, args.label, path) != positive:
        raise CliError(f"{path}: column {args.label!r}: the labels of the whole file do not give the "
                       f"positive label of the first chunk ({positive!r}); name it with --pos-label")
    prevalences = list(dict.fromkeys(args.prevalence or ()))
    try:  # from the steps, computed once: the full table is never built
        evaluation, *at = acc.evaluations([None, *prevalences], recall_grid=args.recall_grid)
    except ValueError as exc:
        raise CliError(f"{path}: {exc}") from None
    return (evaluation, tuple(zip(prevalences, at))), counts, positive  # type: ignore[return-value]


_DASK_SCHEDULERS = ("synchronous", "threads", "processes")


def evaluate_dask(args: argparse.Namespace) -> tuple[Evaluations, Counter[str], str]:
    """``--engine dask``: the file read by dask.dataframe, evaluated by score ranges on a
    Dask cluster (a local one by default, ``--scheduler`` an address or a local scheduler)."""
    try:
        import dask
        import dask.dataframe as dd
        import pandas

        import precall.dask as pdask
    except ImportError:
        raise CliError("--engine dask needs the 'dask' extra: pip install 'precall[dask]'") from None
    path, score = args.file, args.score[0]
    if "://" not in path and not os.path.exists(path):  # remote paths are for the workers to read
        raise CliError(f"{path}: no such file")
    columns = [args.label, score] + ([args.weight] if args.weight else [])
    lower = path.lower()
    try:
        if lower.endswith((".parquet", ".pq", "/")) or os.path.isdir(path):  # a file or a folder of them
            frame = dd.read_parquet(path, columns=columns, blocksize="64MiB")
        elif lower.endswith((".jsonl", ".jsonl.gz", ".ndjson")):
            frame = dd.read_json(path, lines=True, blocksize=None if lower.endswith(".gz") else 1 << 26)
        elif lower.endswith((".csv", ".tsv", ".txt", ".csv.gz", ".tsv.gz")):
            sep = args.delimiter or ("\t" if ".tsv" in lower else ",")
            frame = dd.read_csv(path, sep=sep, dtype={args.label: str},
                                blocksize=None if lower.endswith(".gz") else "64MiB")
        else:
            raise CliError(f"{path}: --engine dask reads Parquet, CSV / TSV and JSON Lines files; use --stream "
                           "for other formats")
        missing = [c for c in columns if c not in frame.columns]
        if missing:
            raise CliError(f"{path}: no column {missing[0]!r}; the columns are {list(frame.columns)}")
        frame = frame[columns]
    except (ValueError, OSError, KeyError) as exc:
        raise CliError(f"{path}: {exc}") from None
    with _dask_scheduler(dask, args.scheduler):
        raw = frame[args.label].value_counts(dropna=False).compute()
        counts: Counter[str] = Counter()
        texts = {}
        for value, n in raw.items():
            if pandas.isna(value):
                raise CliError(f"{path}: column {args.label!r}: {n} rows have no label; fill or drop them")
            texts[value] = label_text(value)
            counts[texts[value]] += int(n)
        positive = resolve_pos_label(counts, args.pos_label, args.label, path)
        is_positive = frame[args.label].isin([v for v, text in texts.items() if text == positive])
        weight = frame[args.weight] if args.weight else None
        prevalences = list(dict.fromkeys(args.prevalence or ()))
        try:  # one pass: every prevalence reduces the same range steps
            evaluation, *at = pdask.evaluations(is_positive, frame[score], sample_weight=weight, pos_label=True,
                                                recall_grid=args.recall_grid, prevalences=[None, *prevalences])
        except (ValueError, TypeError) as exc:
            raise CliError(f"{path}: {exc}") from None
    return (evaluation, tuple(zip(prevalences, at))), counts, positive


@contextlib.contextmanager
def _dask_scheduler(dask: Any, scheduler: str | None) -> Iterator[None]:
    """A local Dask cluster for the evaluation (default), a named local scheduler, or an address."""
    if scheduler in _DASK_SCHEDULERS:
        with dask.config.set(scheduler=scheduler):
            yield
        return
    try:
        import distributed
    except ImportError:
        raise CliError("--engine dask without a local --scheduler needs distributed: pip install "
                       "'precall[dask]'") from None
    if scheduler is None:
        with distributed.LocalCluster(n_workers=os.cpu_count() or 1, threads_per_worker=1, processes=True,
                                      dashboard_address=None, silence_logs=40) as cluster, \
                distributed.Client(cluster):
            yield
        return
    try:
        client = distributed.Client(scheduler, timeout=30)
    except (OSError, ValueError, TimeoutError) as exc:
        raise CliError(f"--scheduler {scheduler}: cannot connect: {exc}") from None
    with client:
        yield
