"""One front door: every entry point gives the same value, or the same error type, on the same input.

Entry points: the in-memory functions, the table, ``evaluate``, the streaming
:class:`precall.Accumulator`, :mod:`precall.dask`, :mod:`precall.stats` (the
bootstrap's, DeLong's and ``compare_slices``' estimates) and the command line (``--json``; an error
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
        "compare_slices": lambda: stats.compare_slices(y, s, by=np.zeros(len(s)), sample_weight=w, pos_label=pos,
                                                       n_resamples=2, reference="overall").ap[0],
    }
    if case == "no positives":  # undefined: the bootstrap refuses it (compare_slices: NaN), the rest say 0.0
        del entry_points["bootstrap"], entry_points["compare_slices"]
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


# ------------------------------------------------------------------ label types
# One rule (scikit-learn's `pos_label in labels`): bool, int and float labels compare by value
# (1 == 1.0 == True); strings (str or numpy.str_) and bytes are other kinds, never equal to a number
# or to each other.  Every entry point, every batch and every partition refuses a mismatch with a
# ValueError, including a batch that does not hold the positive label (where a mismatch used to count
# every row as a negative).
_STR = np.where(_Y == 1, "1", "0")
_BYTES = _STR.astype("S1")
_MISMATCH = "ValueError"
LABEL_TYPE_CASES = {
    # name: (y_true, pos_label, the positive rows as the reference sees them, or the error)
    "int labels, str pos_label": (_Y, "1", _MISMATCH),
    "int labels, bytes pos_label": (_Y, b"1", _MISMATCH),
    "str labels, int pos_label": (_STR, 1, _MISMATCH),
    "str labels, bool pos_label": (_STR, True, _MISMATCH),
    "str labels, bytes pos_label": (_STR, b"1", _MISMATCH),
    "bytes labels, str pos_label": (_BYTES, "1", _MISMATCH),
    "object str labels, int pos_label": (_STR.astype(object), 1, _MISMATCH),
    "object int labels, str pos_label": (_Y.astype(object), "1", _MISMATCH),
    "float labels, str pos_label": (_Y.astype(float), "1.0", _MISMATCH),
    "one class (int), str pos_label": (np.ones(12, dtype=int), "1", _MISMATCH),
    "one class (str), int pos_label": (np.full(12, "1"), 1, _MISMATCH),
    "NaN pos_label": (_Y.astype(float), float("nan"), _MISMATCH),
    "list pos_label": (_Y, [1], "TypeError"),
    "int labels, float pos_label": (_Y, 1.0, _Y == 1),
    "float labels, int pos_label": (_Y.astype(float), 1, _Y == 1),
    "bool labels, int pos_label": (_Y == 1, 1, _Y == 1),
    "int labels, bool pos_label": (_Y, True, _Y == 1),
    "int labels, numpy int8 pos_label": (_Y, np.int8(1), _Y == 1),
    "int labels, 0-d array pos_label": (_Y, np.array(1), _Y == 1),
    "numpy str labels, str pos_label": (_STR, "1", _Y == 1),
    "object str labels, numpy str pos_label": (_STR.astype(object), np.str_("1"), _Y == 1),
    "bytes labels, numpy bytes pos_label": (_BYTES, np.bytes_(b"1"), _Y == 1),
    "object int labels, int pos_label": (_Y.astype(object), 1, _Y == 1),
}


def _label_entry_points(y, pos, metric):
    """Every binary entry point of `metric` ("ap" or "auc") on (y, _S) with `pos_label=pos`."""
    half = len(y) // 2

    def acc(**kw):
        return precall.Accumulator(pos_label=pos, **kw)

    def shipped():  # the positive label travels in the payload
        return precall.Accumulator.from_bytes(acc().to_bytes()).update(y, _S)

    def on_dask(chunks=5):
        dy, ds = da.from_array(np.asarray(y), chunks=chunks), da.from_array(_S, chunks=chunks)
        with dask.config.set(scheduler="synchronous"):
            f = pdask.average_precision if metric == "ap" else pdask.roc_auc
            return f(dy, ds, pos_label=pos)

    if metric == "auc":
        return {
            "roc_auc": lambda: precall.roc_auc(y, _S, pos_label=pos),
            "evaluate": lambda: precall.evaluate(y, _S, pos_label=pos).roc_auc,
            "table": lambda: precall.threshold_table(y, _S, pos_label=pos).roc_auc(),
            "Accumulator": lambda: acc().update(y, _S).table().roc_auc(),
            "binned": lambda: acc(bins=4096, score_range=(0, 1)).update(y, _S).roc_auc().value,
            "dask": on_dask,
            "DeLong": lambda: stats.roc_auc_ci(y, _S, pos_label=pos).estimate,
            "bootstrap": lambda: stats.bootstrap_ci(
                __import__("functools").partial(precall.roc_auc, pos_label=pos), y, _S,
                n_resamples=2, random_state=0).estimate,
        }
    return {
        "average_precision": lambda: precall.average_precision(y, _S, pos_label=pos),
        "evaluate": lambda: precall.evaluate(y, _S, pos_label=pos).average_precision["step"],
        "table": lambda: precall.threshold_table(y, _S, pos_label=pos).average_precision(),
        "precision_recall_curve": lambda: float(np.sum(
            -np.diff(precall.precision_recall_curve(y, _S, pos_label=pos).recall)
            * precall.precision_recall_curve(y, _S, pos_label=pos).precision[:-1])),
        "Accumulator": lambda: acc().update(y, _S).table().average_precision(),
        "binned": lambda: acc(bins=4096, score_range=(0, 1)).update(y, _S).average_precision().value,
        "Accumulator, two batches": lambda: acc().update(y[:half], _S[:half]).update(y[half:], _S[half:])
        .table().average_precision(),
        "Accumulator, merged": lambda: acc().update(y[:half], _S[:half]).merge(acc().update(y[half:], _S[half:]))
        .table().average_precision(),
        "Accumulator, from_bytes": lambda: shipped().table().average_precision(),
        "dask": on_dask,
        "dask, one-row partitions": lambda: on_dask(chunks=1),
        "bootstrap": lambda: stats.bootstrap_ci(
            __import__("functools").partial(precall.average_precision, pos_label=pos), y, _S,
            n_resamples=2, random_state=0).estimate,
    }


@pytest.mark.parametrize("metric", ["ap", "auc"])
@pytest.mark.parametrize("case", sorted(LABEL_TYPE_CASES))
def test_label_types_agree_everywhere(case, metric):
    y, pos, expected = LABEL_TYPE_CASES[case]
    entry_points = _label_entry_points(y, pos, metric)
    if isinstance(pos, bytes) and "Accumulator, from_bytes" in entry_points:
        # a payload's metadata is JSON: a bytes positive label is refused when shipped, with a TypeError
        with pytest.raises(TypeError, match="to be shipped"):
            entry_points.pop("Accumulator, from_bytes")()
    outcomes = {name: _outcome(f) for name, f in entry_points.items()}
    if isinstance(expected, str):
        assert set(outcomes.values()) == {expected}, outcomes
        return
    import sklearn.metrics as skm

    reference = (skm.average_precision_score if metric == "ap" else skm.roc_auc_score)(expected, _S)
    assert outcomes == {name: round(float(reference), 12) for name in outcomes}, outcomes


def test_label_types_message_names_both_and_the_fix():
    with pytest.raises(ValueError, match=r"`pos_label` must be of the type of the labels of `y_true`.*pass 1"):
        precall.Accumulator(pos_label="1").update([1], [0.5])
    with pytest.raises(ValueError, match=r"`pos_label`.*strings.*got 1, a number.*pass '1'"):
        precall.average_precision(["1"], [0.5], pos_label=1)


@pytest.mark.parametrize("first,second", [
    (_Y, _STR), (_STR, _Y), (_STR, _BYTES), (_Y, _Y.astype(object).astype(str)),
])
def test_accumulator_batch_of_another_label_type_is_refused(first, second):
    # the positive label fixes the kind for the accumulator's life: a later batch of another kind is
    # refused, never counted as negatives
    pos = first[1].item()
    acc = precall.Accumulator(pos_label=pos).update(first, _S)
    with pytest.raises(ValueError, match="pos_label"):
        acc.update(second, _S)
    with pytest.raises(ValueError, match="pos_label"):
        precall.Accumulator.from_bytes(acc.to_bytes()).update(second[:1], _S[:1])


@pytest.mark.parametrize("a,b,same", [
    (1, 1.0, True), (1, True, True), (np.int64(1), 1, True), ("1", np.str_("1"), True),
    ("1", 1, False), (1, "1", False), ("1", b"1", False), (None, 1, False), (0, 1, False),
])
def test_merge_compares_positive_labels_by_the_label_rule(a, b, same):
    left = precall.Accumulator(pos_label=a)
    right = precall.Accumulator(pos_label=b)
    if same:
        assert left.merge(right).pos_label == a
    else:
        with pytest.raises(ValueError, match="pos_label"):
            left.merge(right)


_Y3 = np.array([0, 1, 2, 0, 1, 2, 0, 1, 2, 2, 1, 0])
_S3 = np.random.default_rng(3).random((12, 3))
_S3 = _S3 / _S3.sum(axis=1, keepdims=True)  # probabilities, as scikit-learn's multi-class ROC-AUC wants


@pytest.mark.parametrize("truth", ["int", "float", "str", "bytes"])
@pytest.mark.parametrize("kind", ["int", "float", "bool", "str", "bytes", "object str"])
def test_multiclass_labels_of_another_type(truth, kind):
    # `labels=` names the columns: it must be of the kind of `y_true`'s labels (numbers by value)
    y = {"int": _Y3, "float": _Y3.astype(float), "str": _Y3.astype(str), "bytes": _Y3.astype("S1")}[truth]
    labels = {"int": [0, 1, 2], "float": [0.0, 1.0, 2.0], "bool": [False, True, 2], "str": ["0", "1", "2"],
              "bytes": [b"0", b"1", b"2"], "object str": np.array(["0", "1", "2"], dtype=object)}[kind]
    entry_points = {
        "average_precision": lambda: precall.average_precision(y, _S3, labels=labels, average="macro"),
        "roc_auc": lambda: precall.roc_auc(y, _S3, labels=labels, multi_class="ovr", average="macro"),
        "evaluate": lambda: float(np.mean(precall.evaluate(y, _S3, labels=labels).per_class_average_precision())),
        "Accumulator": lambda: float(np.mean([
            t.average_precision() for t in precall.Accumulator(labels=labels).update(y, _S3).tables().values()])),
    }
    outcomes = {name: _outcome(f) for name, f in entry_points.items()}
    numbers = {"int", "float", "bool"}
    same_kind = (truth in numbers and kind in numbers) or truth == kind or (truth == "str" and kind == "object str")
    if not same_kind:
        assert set(outcomes.values()) == {_MISMATCH}, outcomes
        return
    import sklearn.metrics as skm

    onehot = np.arange(3)[None, :] == _Y3[:, None]
    assert outcomes["average_precision"] == round(float(skm.average_precision_score(onehot, _S3)), 12)
    assert outcomes["roc_auc"] == round(float(skm.roc_auc_score(_Y3, _S3, multi_class="ovr")), 12)
    assert outcomes["Accumulator"] == outcomes["average_precision"] == outcomes["evaluate"], outcomes


# ------------------------------------------------------------------ labels of several kinds in a list
# numpy turns a list of numbers and strings into strings ([0, 1, "1"] -> ["0", "1", "1"]: two labels
# merged); precall reads the list's values first, so a list is refused as the object array of the same
# values is, at every entry point, with the message naming the mixture
def _mixed(form):
    values = [1 if v else 0 for v in _Y.tolist()]
    values[1], values[7] = "1", "1"
    if form == "bytes and strings":
        return [b"1" if v == "1" else str(v) for v in values]
    return {"list": values, "tuple": tuple(values), "nested": [[v] for v in values],
            "object array": np.array(values, dtype=object)}[form]


def _mixed_entry_points(y, pos):
    def sliced(f):
        return lambda: f(y, _S, pos_label=pos, by=np.arange(12) % 2)

    return {
        "average_precision": lambda: precall.average_precision(y, _S, pos_label=pos),
        "roc_auc": lambda: precall.roc_auc(y, _S, pos_label=pos),
        "roc_auc max_fpr": lambda: precall.roc_auc(y, _S, pos_label=pos, max_fpr=0.5),
        "evaluate": lambda: precall.evaluate(y, _S, pos_label=pos),
        "threshold_table": lambda: precall.threshold_table(y, _S, pos_label=pos),
        "precision_recall_curve": lambda: precall.precision_recall_curve(y, _S, pos_label=pos),
        "roc_curve": lambda: precall.roc_curve(y, _S, pos_label=pos),
        "det_curve": lambda: precall.det_curve(y, _S, pos_label=pos),
        "auprg": lambda: precall.auprg(y, _S, pos_label=pos),
        "Accumulator": lambda: precall.Accumulator(pos_label=pos).update(y, _S),
        "binned": lambda: precall.Accumulator(pos_label=pos, bins=64, score_range=(0, 1)).update(y, _S),
        "DeLong": lambda: stats.roc_auc_ci(y, _S, pos_label=pos),
        "bootstrap": lambda: stats.bootstrap_ci(
            __import__("functools").partial(precall.roc_auc, pos_label=pos), y, _S, n_resamples=2, random_state=0),
        "average_precision by": sliced(precall.average_precision),
        "evaluate by": sliced(precall.evaluate),
        "threshold_table by": sliced(precall.threshold_table),
    }


@pytest.mark.parametrize("pos", [None, 1, "1"])
@pytest.mark.parametrize("form", ["list", "tuple", "nested", "object array", "bytes and strings"])
def test_labels_of_several_kinds_are_refused_everywhere(form, pos):
    y = _mixed(form)
    kinds = "bytes and strings" if form == "bytes and strings" else "numbers and strings"
    for name, f in _mixed_entry_points(y, pos).items():
        with pytest.raises(TypeError, match=rf"`y_true` must hold labels of one type.*got {kinds} in \[") as info:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                f()
        assert "Convert them to one type" in str(info.value), name


@pytest.mark.parametrize("form", ["list", "object array"])
def test_multiclass_labels_of_several_kinds_are_refused_everywhere(form):
    y = [0, "1", 2, 0, 1, 2, 0, 1, 2, 2, 1, 0]
    y = np.array(y, dtype=object) if form == "object array" else y
    entry_points = {
        "average_precision": lambda: precall.average_precision(y, _S3),
        "roc_auc ovr": lambda: precall.roc_auc(y, _S3),
        "roc_auc ovo": lambda: precall.roc_auc(y, _S3, multi_class="ovo"),
        "evaluate": lambda: precall.evaluate(y, _S3),
        "evaluate by": lambda: precall.evaluate(y, _S3, by=np.arange(12) % 2),
        "Accumulator": lambda: precall.Accumulator(labels=[0, 1, 2]).update(y, _S3),
        "bootstrap": lambda: stats.bootstrap_ci("average_precision", y, _S3, n_resamples=2, random_state=0),
    }
    for name, f in entry_points.items():
        with pytest.raises(TypeError, match=r"`y_true` must hold labels of one type.*got numbers and strings"):
            f()
    labels = [0, "1", 2] if form == "list" else np.array([0, "1", 2], dtype=object)
    for f in (lambda: precall.average_precision(_Y3, _S3, labels=labels),
              lambda: precall.evaluate(_Y3, _S3, labels=labels),
              lambda: precall.Accumulator(labels=labels).update(_Y3, _S3)):
        with pytest.raises(TypeError, match=r"`labels` must hold labels of one type.*got numbers and strings"):
            f()


def test_by_values_of_several_kinds_in_a_list_are_the_object_column_slices():
    # by=: 1 and "1" are two slices in an object column; a list of them is that column, not strings
    by = [1, "1"] * 6
    listed = precall.evaluate(_Y, _S, by=by)
    column = precall.evaluate(_Y, _S, by=np.array(by, dtype=object))
    assert listed.names == column.names and len(listed) == 2
    assert listed.to_dict() == column.to_dict()


# ------------------------------------------------------------------ numbers of every type are labels by value
def _numbers(one, zero, container):
    values = [(one if i % 2 else 1) if v else (zero if i % 3 else 0) for i, v in enumerate(_Y.tolist())]
    return np.array(values, dtype=container) if container is not list else values


@pytest.mark.parametrize("metric", ["ap", "auc"])
@pytest.mark.parametrize("one,zero", [(True, 0), (True, False), (1.0, False), (True, 0.0)])
def test_object_numbers_of_every_type_are_binary_labels_by_value(one, zero, metric):
    # {0, True} is {0, 1}: every entry point takes an object array of bool, int and float labels as
    # binary labels with the int labels' numbers, as it takes a list of them or a numpy bool array
    import sklearn.metrics as skm

    reference = round(float((skm.average_precision_score if metric == "ap" else skm.roc_auc_score)(_Y, _S)), 12)
    for y in (_numbers(one, zero, object), _numbers(one, zero, list), _Y == 1):
        outcomes = {name: _outcome(f) for name, f in _label_entry_points(y, None, metric).items()}
        assert outcomes == {name: reference for name in outcomes}, outcomes
        for pos in (1, True, 1.0):
            assert precall.average_precision(y, _S, pos_label=pos) == precall.average_precision(_Y, _S)
        assert precall.evaluate(y, _S).to_dict() == precall.evaluate(_Y, _S).to_dict()


def test_labels_of_every_number_type_are_named_by_value():
    y = np.array([True, 2, 0, False, 1, 2], dtype=object)
    with pytest.raises(ValueError, match=r"`y_true` must be binary; got 3 labels \[0, 1, 2\]"):
        precall.average_precision(y, _S[:6])
    with pytest.raises(ValueError, match=r"`y_true` must be binary; got 3 labels \[0.0, 1.0, 2.0\]"):
        precall.average_precision(np.array([True, 2, 0, False, 1, 2.0], dtype=object), _S[:6])  # as a list gives
    multi = precall.evaluate(y, _S3[:6])
    assert multi.classes.tolist() == [0, 1, 2]
    ints = precall.evaluate(np.array([1, 2, 0, 0, 1, 2]), _S3[:6])
    assert (multi.average_precision, multi.roc_auc) == (ints.average_precision, ints.roc_auc)
    assert [e.to_dict() for e in multi.per_class] == [e.to_dict() for e in ints.per_class]
