"""One front door: every entry point gives the same value, or the same error type, on the same input.

Entry points: the in-memory functions, the table, ``evaluate``, the streaming
:class:`precall.Accumulator`, :mod:`precall.dask`, :mod:`precall.stats` (the
bootstrap's and DeLong's estimates) and the command line (``--json``; an error
there is exit code 2, compared with ``ValueError``).
"""

from __future__ import annotations

import contextlib
import io
import json
import warnings

import numpy as np
import pytest

import precall
from precall import stats
from precall.cli import main

dask = pytest.importorskip("dask")
import dask.array as da  # noqa: E402

import precall.dask as pdask  # noqa: E402

_Y = np.array([0, 1, 1, 0, 1, 0, 0, 1, 1, 0, 1, 0])
_S = np.array([0.1, 0.9, 0.35, 0.4, 0.8, 0.2, 0.35, 0.6, 0.3, 0.7, 0.5, 0.05])
_W = np.array([1.0, 2.0, 0.5, 1.0, 3.0, 1.0, 0.25, 1.0, 2.0, 1.0, 1.0, 0.5])

CASES = {
    "binary 0/1": (_Y, _S, None, None),
    "weighted": (_Y, _S, _W, None),
    "labels 1/2": (_Y + 1, _S, None, None),  # AP: ambiguous positive; ROC-AUC: the greater label
    "labels 1/2, pos_label": (_Y + 1, _S, None, 2),
    "string labels": (np.where(_Y == 1, "yes", "no"), _S, None, "yes"),
    "-1/1 labels": (2 * _Y - 1, _S, None, None),
    "NaN score": (_Y, np.where(np.arange(12) == 3, np.nan, _S), None, None),
    "negative weight": (_Y, _S, np.where(np.arange(12) == 2, -1.0, _W), None),
    "no positives": (np.zeros(12, dtype=int), _S, None, None),
}


def _outcome(f):
    """The value, or the error type (CLI exit 2 counts as ValueError)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            value = f()
        except (ValueError, TypeError) as exc:
            return type(exc).__name__
    return value if isinstance(value, str) else round(float(value), 12)


def _cli(y, s, w, pos_label, tmp_path, *keys):
    path = tmp_path / "data.csv"
    rows = ["y,s" + (",w" if w is not None else "")]
    for i in range(len(y)):
        rows.append(f"{y[i]},{float(s[i])!r}" + (f",{float(w[i])!r}" if w is not None else ""))
    path.write_text("\n".join(rows) + "\n")
    argv = ["evaluate", str(path), "--label", "y", "--score", "s", "--json"]
    argv += ["--weight", "w"] if w is not None else []
    argv += ["--pos-label", str(pos_label)] if pos_label is not None else []
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        code = main(argv)
    if code == 2:
        return "ValueError"
    assert code == 0
    value = json.loads(out.getvalue())
    for key in keys:
        value = value[key]
    return value


def _dask(y, s, w):
    args = [da.from_array(np.asarray(y), chunks=5), da.from_array(np.asarray(s), chunks=5)]
    return args, (None if w is None else da.from_array(np.asarray(w), chunks=5))


@pytest.mark.parametrize("case", sorted(CASES))
def test_average_precision_agrees_everywhere(case, tmp_path):
    y, s, w, pos = CASES[case]

    def accumulator():
        return precall.Accumulator(pos_label=pos).update(y, s, sample_weight=w).evaluate().average_precision["step"]

    def on_dask():
        (dy, ds), dw = _dask(y, s, w)
        with dask.config.set(scheduler="synchronous"):
            return pdask.average_precision(dy, ds, sample_weight=dw, pos_label=pos)

    entry_points = {
        "average_precision": lambda: precall.average_precision(y, s, sample_weight=w, pos_label=pos),
        "threshold_table": lambda: precall.threshold_table(y, s, sample_weight=w, pos_label=pos).average_precision(),
        "evaluate": lambda: precall.evaluate(y, s, sample_weight=w, pos_label=pos).average_precision["step"],
        "Accumulator": accumulator,
        "dask": on_dask,
        "bootstrap": lambda: stats.bootstrap_ci(
            "average_precision" if pos is None else
            __import__("functools").partial(precall.average_precision, pos_label=pos),
            y, s, sample_weight=w, n_resamples=2, random_state=0).estimate,
        "cli": lambda: _cli(y, s, w, pos, tmp_path, "average_precision", "step"),
    }
    if case == "no positives":  # undefined: the bootstrap refuses it, everything else says 0.0 with a warning
        del entry_points["bootstrap"]
    outcomes = {name: _outcome(f) for name, f in entry_points.items()}
    assert len(set(outcomes.values())) == 1, outcomes


@pytest.mark.parametrize("case", sorted(CASES))
def test_roc_auc_agrees_everywhere(case):
    y, s, w, pos = CASES[case]

    def on_dask():
        (dy, ds), dw = _dask(y, s, w)
        with dask.config.set(scheduler="synchronous"):
            return pdask.roc_auc(dy, ds, sample_weight=dw, pos_label=pos)

    entry_points = {
        "roc_auc": lambda: precall.roc_auc(y, s, sample_weight=w, pos_label=pos),
        "dask": on_dask,
        "bootstrap": lambda: stats.bootstrap_ci(
            __import__("functools").partial(precall.roc_auc, pos_label=pos), y, s, sample_weight=w,
            n_resamples=2, random_state=0).estimate,
    }
    if w is None:
        entry_points["DeLong"] = lambda: stats.roc_auc_ci(y, s, pos_label=pos).estimate
    if case == "no positives":  # NaN with a warning; DeLong and the bootstrap refuse
        outcomes = {name: _outcome(f) for name, f in entry_points.items() if name in ("roc_auc", "dask")}
        assert all(np.isnan(v) for v in outcomes.values()), outcomes
        return
    outcomes = {name: _outcome(f) for name, f in entry_points.items()}
    assert len(set(outcomes.values())) == 1, outcomes
