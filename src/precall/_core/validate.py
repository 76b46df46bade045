"""Input validation: the one front door every entry point goes through.

Every public entry point (the in-memory metrics, multi-class averaging,
:class:`precall.Accumulator`, :mod:`precall.dask`, :mod:`precall.stats`, the
command line) passes labels, scores and weights through :func:`check_binary`
or :func:`check_multi` (:func:`is_multi` tells which) and its options through
:func:`check_options`, once; the layers below trust what comes out.  Messages
have one shape: "`name` must be ...; got ...", followed by how to fix it where
that helps.

``pos_label=None`` follows scikit-learn: ROC-AUC alone takes the greater of two
labels as positive (``roc_auc_score``); everything that reports an AP needs
labels in {0, 1} or {-1, 1} (``average_precision_score``).
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass
from typing import Any, Callable, Literal, get_args

import numpy as np

from . import scratch

__all__ = [
    "AP_METHODS",
    "AVERAGES",
    "BinaryInput",
    "Method",
    "MultiInput",
    "RECALL_GRIDS",
    "RecallGrid",
    "TIES",
    "Ties",
    "check_options",
    "check_bool",
    "check_label_types",
    "check_pos_label",
    "label_array",
    "object_array",
    "label_kind",
    "check_binary",
    "check_choice",
    "check_number",
    "check_numbers",
    "check_allocation",
    "MAX_ALLOCATION_BYTES",
    "check_on_undefined",
    "MIN_PREVALENCE",
    "check_prevalence",
    "check_prevalences",
    "check_probability",
]

PosLabelRule = Literal["strict", "greater"]

# ---------------------------------------------------------------------------
# options: each a Literal type and its values, checked by one function
Method = Literal["step", "voc2007", "voc2010", "coco", "trapezoid", "interpolated"]
Ties = Literal["group", "stable"]
RecallGrid = Literal["reference", "exact"]
Average = Literal["macro", "weighted", "micro", "samples"]
MultiClass = Literal["ovr", "ovo"]
Absent = Literal["zero", "skip"]

AP_METHODS: tuple[str, ...] = get_args(Method)
TIES: tuple[str, ...] = get_args(Ties)
RECALL_GRIDS: tuple[str, ...] = get_args(RecallGrid)
AVERAGES: tuple[str, ...] = get_args(Average)

_OPTIONS: dict[str, tuple[str, ...]] = {
    "method": AP_METHODS,
    "ties": TIES,
    "recall_grid": RECALL_GRIDS,
    "multi_class": get_args(MultiClass),
    "absent": get_args(Absent),
}


def check_options(**options: Any) -> None:
    """Check named string options against their allowed values (``method``, ``ties``,
    ``recall_grid``, ``multi_class``, ``absent``): ``ValueError`` naming the option."""
    for name, value in options.items():
        check_choice(value, name, _OPTIONS[name])


@dataclass(frozen=True)
class BinaryInput:
    """Validated binary input.

    Attributes
    ----------
    scores : ndarray
        1-D finite numeric scores (zero-weight samples removed).
    positive : ndarray of bool
        ``y_true == pos_label`` for each kept sample.
    weight : ndarray of float64 or None
        Strictly positive weights of the kept samples, or None (all ones).
    pos_label : object
        The label treated as positive.
    n_samples : int
        Number of samples given, before zero-weight samples were set aside.
    """

    scores: np.ndarray
    positive: np.ndarray
    weight: np.ndarray | None
    pos_label: Any
    n_samples: int


def _describe(values: np.ndarray, limit: int = 6) -> str:
    items = [repr(v.item() if hasattr(v, "item") else v) for v in values[:limit]]
    more = ", ..." if len(values) > limit else ""
    return "[" + ", ".join(items) + more + "]"


def _as_1d(x: Any, name: str, labels: bool = False) -> np.ndarray:
    """``x`` as a 1-D array (a column of shape (n, 1) as its values); ``labels``: through
    :func:`label_array` (no silent mixture of numbers and strings)."""
    arr = label_array(x, name) if labels else np.asarray(x)
    if arr.ndim == 2 and arr.shape[1] == 1:
        arr = arr[:, 0]
    if arr.ndim != 1:
        hint = ""
        if name == "y_score" and arr.ndim == 2:
            hint = (
                "; for binary input pass the positive class's column, for example "
                "`y_score[:, 1]`"
            )
            if arr.shape[1] > 2:  # scikit-learn's multi-class route: a class absent from this batch
                hint = (f"; {arr.shape[1]} columns are multi-class scores, but `y_true` holds at most two "
                        "labels: pass `labels=` naming the class of each column (a class may be absent from "
                        "`y_true`), or for binary input the positive class's column, for example `y_score[:, 1]`")
        raise ValueError(f"`{name}` must be 1-D; got an array of shape {arr.shape}{hint}")
    return arr


def _check_scores(y_score: Any) -> np.ndarray:
    scores = _as_1d(y_score, "y_score")
    kind = scores.dtype.kind
    if kind == "b":
        scores = scores.astype(np.float64)
    elif kind == "O":
        try:
            scores = scores.astype(np.float64)
        except (TypeError, ValueError):
            raise TypeError(
                "`y_score` must be numeric; got an object array with non-numeric "
                f"values such as {_describe(scores)}"
            ) from None
    elif kind not in "iuf":
        raise TypeError(
            f"`y_score` must be numeric (int or float); got dtype {scores.dtype} "
            f"with values such as {_describe(scores)}"
        )
    if kind == "f" or kind == "O":
        finite = np.isfinite(scores)
        if not finite.all():
            bad = np.flatnonzero(~finite)
            raise ValueError(
                f"`y_score` must be finite; got {bad.size} NaN or infinite value(s), "
                f"the first at index {bad[0]} ({scores[bad[0]].item()!r}). Remove or impute "
                "those rows before evaluating; precall never drops rows silently"
            )
    return scores


#: the smallest positive weight accepted: the smallest normal float64 (a subnormal weight has too few digits)
SMALLEST_WEIGHT = float(np.finfo(np.float64).tiny)


def _check_weight(sample_weight: Any, n: int, *, require_positive: bool = True) -> np.ndarray | None:
    """Finite, non-negative weights, one per sample; with ``require_positive`` at least
    one positive (off for one part of a larger input, e.g. a Spark partition)."""
    if sample_weight is None:
        return None
    w = _as_1d(sample_weight, "sample_weight")
    if w.dtype.kind not in "biuf":
        raise TypeError(f"`sample_weight` must be numeric; got dtype {w.dtype}")
    w = w.astype(np.float64, copy=False)
    if w.shape[0] != n:
        raise ValueError(
            f"`sample_weight` must have one weight per sample; got {w.shape[0]} "
            f"weights for {n} samples"
        )
    if not np.isfinite(w).all():
        bad = np.flatnonzero(~np.isfinite(w))
        raise ValueError(
            f"`sample_weight` must be finite; got {bad.size} NaN or infinite "
            f"weight(s), the first at index {bad[0]}"
        )
    if (w < 0).any():
        bad = np.flatnonzero(w < 0)
        raise ValueError(
            f"`sample_weight` must be non-negative; got {bad.size} negative "
            f"weight(s), the first at index {bad[0]} ({w[bad[0]].item()!r})"
        )
    small = (w < SMALLEST_WEIGHT) & (w != 0)
    if small.any():
        bad = np.flatnonzero(small)
        raise ValueError(
            f"`sample_weight` must be 0 or at least {SMALLEST_WEIGHT!r} (the smallest normal float64; a smaller "
            f"weight keeps too few digits for the metrics' sums); got {bad.size} weight(s) below it, the first at "
            f"index {bad[0]} ({w[bad[0]].item()!r}): multiply every weight by one number (every metric is the same)"
        )
    if require_positive and not (w > 0).any():
        raise ValueError("`sample_weight` must have at least one positive weight; got all zeros")
    with np.errstate(over="ignore"):
        total = float(np.sum(w))
    if not np.isfinite(total):
        raise ValueError(
            "`sample_weight` must have a finite total; the weights add up to more than the largest float64 "
            f"(the largest is {w.max().item()!r}): divide them all by one number (every metric is the same)"
        )
    return w


def _labels(y_true: np.ndarray) -> np.ndarray:
    """Distinct labels, avoiding a full sort for the common 0/1 encodings."""
    kind = y_true.dtype.kind
    if kind == "b":
        has_true = bool(y_true.any())
        has_false = not bool(y_true.all())
        return np.array([v for v, there in ((False, has_false), (True, has_true)) if there])
    if kind in "iu" and y_true.size:
        lo, hi = y_true.min(), y_true.max()
        if hi - lo <= 1:
            return np.unique(np.array([lo, hi], dtype=y_true.dtype))
        if lo == -1 and hi == 1:
            if (y_true == 0).any():
                return np.array([-1, 0, 1], dtype=y_true.dtype)
            return np.array([-1, 1], dtype=y_true.dtype)
    if kind == "f":
        if np.isnan(y_true).any():
            raise ValueError("`y_true` must not contain NaN; got NaN label(s)")
    if kind == "O":
        try:
            classes = np.unique(y_true)
        except TypeError:
            label_kind(y_true)  # a mixture of kinds: the error naming them
            raise TypeError(
                "`y_true` must hold labels of one comparable type (all numbers, all strings or all bytes); "
                f"got values that do not compare with each other in {_describe(y_true)}. Convert them to one "
                "type first"
            ) from None
        return _number_classes(classes, y_true)
    return np.unique(y_true)


def _number_classes(classes: np.ndarray, y_true: np.ndarray) -> np.ndarray:
    """The distinct labels of an object array as numbers when they are all numbers: bool, int and
    float compare by value (``True`` is the label 1), so ``[True, 1, 0, False]`` holds the labels
    ``[0, 1]``, of the type numpy gives the same values in a list (whichever of the equal values
    ``np.unique`` kept, whatever the rows' order); other labels as they are."""
    values = classes.tolist()
    if not values or any(_value_kind(v) != "number" for v in values):
        return classes
    examples = list({type(v): v for v in y_true.tolist()}.values())  # one row of each type present
    try:
        dtype = np.array(examples).dtype
        if dtype.kind not in "biuf":
            return classes
        numbers_ = np.array(values, dtype=dtype)
    except (TypeError, ValueError, OverflowError):
        return classes
    if numbers_.dtype.kind == "f" and np.isnan(numbers_).any():
        raise ValueError("`y_true` must not contain NaN; got NaN label(s)")
    as_listed = numbers_.tolist()
    if len(set(as_listed)) != len(values) or any(a != b for a, b in zip(as_listed, values)):
        return classes  # not exact in numpy's type (integers past 2**63, ...): kept as objects
    return numbers_


def _scalar(x: Any) -> Any:
    """A numpy scalar as the Python value; other objects unchanged."""
    return x.item() if isinstance(x, np.generic) else x


def _is_01_or_pm1(classes: np.ndarray) -> bool:
    if classes.dtype.kind not in "biuf":
        return False
    values = set(classes.tolist())
    return values <= {0, 1} or values <= {-1, 1}


# ---------------------------------------------------------------------------
# label types: numbers (bool, int, float: compared by value, 1 == 1.0 == True, as
# scikit-learn's ``pos_label in labels``), strings (str, numpy.str_) and bytes
# (bytes, numpy.bytes_) are three kinds that never equal each other
LabelKind = Literal["number", "string", "bytes"]
_KIND_OF_DTYPE: dict[str, LabelKind] = {"b": "number", "i": "number", "u": "number", "f": "number",
                                        "U": "string", "S": "bytes"}
_KIND_NAMES = {"number": "numbers", "string": "strings", "bytes": "bytes", None: "other objects"}
_KIND_ONE = {"number": "a number", "string": "a string", "bytes": "bytes", None: "another object"}


def _value_kind(value: Any) -> LabelKind | None:
    """The label kind of one value; None for anything else (an object compared by ``==``)."""
    return _type_kind(type(value))


def label_kind(classes: np.ndarray, name: str = "y_true") -> LabelKind | None:
    """The one kind of a label array ("number", "string", "bytes"); None for other objects; a
    ``TypeError`` naming ``name`` for a mixture of kinds."""
    kind = _KIND_OF_DTYPE.get(classes.dtype.kind)
    if kind is not None or classes.dtype.kind != "O":
        return kind
    kinds = {_value_kind(v) for v in classes.tolist()}
    if len(kinds) > 1:
        raise _mixture(name, kinds, classes.tolist())
    return kinds.pop() if kinds else None


def _mixture(name: str, kinds: set[LabelKind | None], values: Any) -> TypeError:
    """The error of labels of several kinds (numbers, strings, bytes, other objects)."""
    return TypeError(
        f"`{name}` must hold labels of one type (all numbers, all strings or all bytes); got "
        f"{' and '.join(sorted(_KIND_NAMES[k] for k in kinds))} in {_describe_values(values)}. Convert them to "
        "one type first: labels of different types never equal each other (1 and '1' are two labels), "
        "and numpy would turn a list of them into strings, merging them"
    )


def _describe_values(values: Any, limit: int = 6) -> str:
    """The first leaves of a (nested) list, tuple or array, as :func:`_describe` shows them."""
    leaves: list[Any] = []

    def walk(x: Any) -> None:
        for v in x:
            if len(leaves) > limit:
                return
            if isinstance(v, (list, tuple)) or (isinstance(v, np.ndarray) and v.ndim):
                walk(v)
            else:
                leaves.append(v)

    walk(values)
    return _describe(object_array(leaves), limit)


def object_array(values: Any) -> np.ndarray:
    """A 1-D object array of ``values`` (each one element, whatever it is: sequences kept as elements)."""
    out = np.empty(len(values), dtype=object)
    for i, v in enumerate(values):
        out[i] = v
    return out


def _type_kind(t: type) -> LabelKind | None:
    """The label kind of every value of type ``t`` (numbers: bool, int, float), None for other objects."""
    if issubclass(t, (bool, np.bool_, numbers.Real)):
        return "number"
    if issubclass(t, str):
        return "string"
    if issubclass(t, bytes):
        return "bytes"
    return None


def _leaf_kinds(x: Any, kinds: set[LabelKind | None]) -> None:
    """Add to ``kinds`` the label kinds of the leaves of a nested list or tuple (an array in it by
    its type's kind): one pass over the types present at each level."""
    for t in set(map(type, x)):
        if issubclass(t, (list, tuple)):
            for v in x:
                if isinstance(v, (list, tuple)):
                    _leaf_kinds(v, kinds)
        elif issubclass(t, np.ndarray):
            for v in x:
                if isinstance(v, np.ndarray):
                    if v.dtype.kind == "O":
                        _leaf_kinds(v.ravel().tolist(), kinds)
                    else:
                        kinds.add(_KIND_OF_DTYPE.get(v.dtype.kind))
        else:
            kinds.add(_type_kind(t))


def label_array(x: Any, name: str = "y_true", *, objects: bool = False) -> np.ndarray:
    """``np.asarray(x)`` for labels: a list or tuple (nested too) mixing numbers (bool included),
    strings and bytes is a ``TypeError`` naming ``name``, as an object array of them is, where
    numpy would turn every value into a string (``[0, 1, "1"]`` into ``["0", "1", "1"]``: two labels
    merged).  ``objects``: a flat list of several kinds is the object array of its values instead
    (``by=`` values, where an object column's ``1`` and ``"1"`` are two slices).  Only a list numpy
    made strings or bytes of is read again: a list of numbers costs nothing more."""
    arr = np.asarray(x)
    if arr.dtype.kind in "US" and isinstance(x, (list, tuple)):
        kinds: set[LabelKind | None] = set()
        _leaf_kinds(x, kinds)
        if len(kinds) > 1:
            if objects and arr.ndim == 1:
                return object_array(x)
            raise _mixture(name, kinds, x)
    return arr


def check_pos_label(pos_label: Any) -> Any:
    """Check that a given ``pos_label`` is one label (not NaN, not a sequence); returns it
    (a 0-d array as its scalar)."""
    if pos_label is None:
        return None
    if isinstance(pos_label, np.ndarray) and pos_label.ndim == 0:
        pos_label = pos_label[()]
    if isinstance(pos_label, (list, tuple, set, dict, np.ndarray)) or not _hashable(pos_label):
        raise TypeError(
            f"`pos_label` must be one label (a number, string or bytes, like the labels of `y_true`); got "
            f"{pos_label!r:.80} ({type(pos_label).__name__})"
        )
    if _value_kind(pos_label) == "number" and pos_label != pos_label:
        raise ValueError("`pos_label` must be a label of `y_true`; got nan, which equals no label")
    return pos_label


def _hashable(value: Any) -> bool:
    try:
        hash(value)
    except TypeError:
        return False
    return True


def _kind_hint(value: Any, want: LabelKind | None, classes: np.ndarray) -> str:
    """How to turn ``value`` into a label of kind ``want`` present in ``classes``."""
    present = classes.tolist()
    candidates: list[Any] = []
    if want == "number" and isinstance(value, (str, bytes)):
        try:
            number = float(value)
            candidates = [int(number) if number.is_integer() else number]
        except ValueError:
            pass
    elif want == "string":
        candidates = [value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)]
    elif want == "bytes" and isinstance(value, (str, bool, numbers.Real)):
        candidates = [str(value).encode("utf-8")]
    for c in candidates:
        if not present or c in present:
            return f"; pass {c!r}"
    return "; convert one of them so both are numbers, both strings or both bytes"


def check_label_types(classes: np.ndarray, value: Any, name: str = "pos_label") -> None:
    """The label-type rule: ``value`` (``pos_label``, or each of ``labels=``) must be of the kind
    of the labels ``classes`` of ``y_true``: a ``ValueError`` otherwise (as scikit-learn's
    "pos_label=... is not a valid label"), whether or not the batch holds that label.

    Numbers compare by value (``1``, ``1.0``, ``True``, ``numpy.int8(1)`` are one label), as
    ``pos_label in labels`` does in scikit-learn; ``"1"`` and ``b"1"`` are other labels.
    """
    if name == "pos_label":
        values, want = np.array([value], dtype=object), label_kind(classes)
    else:
        values, want = np.asarray(value), label_kind(classes)
    if values.size == 0 or classes.size == 0:
        return
    got = label_kind(values, name) if values.dtype.kind != "O" or values.size > 1 else _value_kind(values[0])
    if got != want:
        shown = f"{value!r}, {_KIND_ONE[got]}" if name == "pos_label" else f"{_KIND_NAMES[got]} {_describe(values)}"
        raise ValueError(
            f"`{name}` must be of the type of the labels of `y_true`, {_KIND_NAMES[want]} "
            f"{_describe(classes)} (bool, int and float labels compare by value); got {shown}, "
            "which equals none of them"
            + (_kind_hint(value, want, classes) if name == "pos_label" else
               "; convert one of them so both are numbers, both strings or both bytes")
        )


def _resolve_pos_label(classes: np.ndarray, pos_label: Any, rule: PosLabelRule, batch: bool = False) -> Any:
    if pos_label is not None:
        if classes.size >= 2 and pos_label not in classes.tolist() and not batch:
            raise ValueError(
                f"`pos_label` must be one of the labels in `y_true`, "
                f"{_describe(classes)}; got {pos_label!r}"
            )
        return pos_label
    if classes.size > 2:
        raise ValueError(
            f"`y_true` must be binary; got {classes.size} labels {_describe(classes)}. "
            "Pass `pos_label=` to evaluate one class against the rest"
        )
    if rule == "greater" and classes.size == 2:
        return _scalar(classes[-1])
    if _is_01_or_pm1(classes):
        return 1
    if classes.size == 1 and rule == "greater":
        return _scalar(classes[0])
    raise ValueError(
        f"`y_true` takes the labels {_describe(classes)}, which are not {{0, 1}} or "
        "{-1, 1}, so the positive class is ambiguous; pass `pos_label=` naming "
        "the positive label"
    )


def zero_weight_batch(sample_weight: Any, n_samples: int, check_rows: Callable[[], Any]) -> Any:
    """A batch of a stream (an ``Accumulator`` update, a dask partition) whose weights are all zero adds
    nothing: its labels and scores checked alone, ``check_rows()``'s value, after which the weights' length;
    None for any other batch (its weights are checked with it)."""
    if sample_weight is None:
        return None
    w = np.asarray(sample_weight)
    if not (w.size and w.dtype.kind in "iuf" and not np.any(w)):
        return None
    checked = check_rows()
    if w.shape != (n_samples,):
        raise ValueError(f"`sample_weight` must have one weight per sample ({n_samples}); got shape {w.shape}")
    return checked


def check_binary(
    y_true: Any,
    y_score: Any,
    sample_weight: Any = None,
    pos_label: Any = None,
    *,
    pos_label_rule: PosLabelRule = "strict",
    batch: bool = False,
) -> BinaryInput:
    """Validate binary-classification input.

    Parameters
    ----------
    y_true, y_score, sample_weight, pos_label
        As in the public functions.
    pos_label_rule : {"strict", "greater"}
        How ``pos_label=None`` is resolved. ``"strict"`` (scikit-learn's curves):
        labels must be a subset of {0, 1} or {-1, 1}, and 1 is positive.
        ``"greater"`` (scikit-learn's ``roc_auc_score``): of two labels, the
        greater is positive.
    batch : bool, default=False
        The input is one batch of a stream (:class:`precall.Accumulator`): a
        given ``pos_label`` need not occur in it.
    """
    scratch.next_call()
    labels = _as_1d(y_true, "y_true", labels=True)
    scores = _check_scores(y_score)
    n = labels.shape[0]
    if scores.shape[0] != n:
        raise ValueError(
            f"`y_true` and `y_score` must have the same length; got {n} labels and "
            f"{scores.shape[0]} scores"
        )
    if n == 0:
        raise ValueError("`y_true` and `y_score` must not be empty; got 0 samples")
    weight = _check_weight(sample_weight, n)
    classes = _labels(labels)
    pos_label = check_pos_label(pos_label)
    if pos_label is not None:
        check_label_types(classes, pos_label)
    pos = _resolve_pos_label(classes, pos_label, pos_label_rule, batch)
    try:  # boolean labels with True positive are the mask itself (read only: no copy of every row)
        mask = labels.dtype == np.bool_ and isinstance(pos, (bool, int, np.bool_, np.integer)) and pos == 1
        positive = labels if mask else np.asarray(labels == pos, dtype=bool)
    except (TypeError, ValueError):  # pragma: no cover - incomparable types
        positive = np.zeros(n, dtype=bool)
    if positive.shape != (n,):  # a comparison numpy could not broadcast
        positive = np.zeros(n, dtype=bool)
    if weight is not None and not (weight > 0).all():
        keep = weight > 0
        scores, positive, weight = scores[keep], positive[keep], weight[keep]
    return BinaryInput(scores, positive, weight, pos, n)


def check_bool(value: Any, name: str) -> bool:
    """Check a boolean option."""
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"`{name}` must be True or False; got {value!r}")
    return bool(value)


def check_choice(value: Any, name: str, choices: tuple[str, ...]) -> str:
    """Check that ``value`` is one of ``choices``."""
    if not isinstance(value, str) or value not in choices:
        raise ValueError(
            f"`{name}` must be one of {', '.join(repr(c) for c in choices)}; got {value!r}"
        )
    return value


def check_on_undefined(value: Any) -> Any:
    """Check the undefined-metric policy: "warn", "nan", "raise" or a number."""
    if isinstance(value, str):
        if value not in ("warn", "nan", "raise"):
            raise ValueError(
                "`on_undefined` must be 'warn', 'nan', 'raise' or a number to return "
                f"instead; got {value!r}"
            )
        return value
    if isinstance(value, numbers.Real) and not isinstance(value, bool):
        return float(value)
    raise TypeError(
        "`on_undefined` must be 'warn', 'nan', 'raise' or a number to return "
        f"instead; got {value!r}"
    )


def check_probability(value: Any, name: str, *, open_low: bool = True) -> float:
    """Check a number in (0, 1] (or [0, 1] when ``open_low`` is False): :func:`check_number`."""
    return check_number(value, name, low=0, high=1, low_open=open_low)


#: The smallest prevalence precall evaluates at.  Reweighting the negatives to prevalence ``pi``
#: multiplies them by ``(1 - pi) / pi``; from 1e-300 on that odds and the reweighted weight (in units of
#: the positives') stay far inside float range, below it (down to 5e-324) they overflow.
MIN_PREVALENCE = 1e-300


def check_prevalence(value: Any, name: str = "prevalence") -> float:
    """Check a class prevalence: a number in [:data:`MIN_PREVALENCE`, 1) (:func:`check_number`).

    Examples
    --------
    >>> check_prevalence(0.001)
    0.001
    >>> check_prevalence(1e-310)
    Traceback (most recent call last):
    ...
    ValueError: `prevalence` must be a finite number in [1e-300, 1) (the share of positives to evaluate at, e.g. 0.001); got 1e-310
    """
    return check_number(value, name, low=MIN_PREVALENCE, high=1, high_open=True,
                        hint="the share of positives to evaluate at, e.g. 0.001")


def check_prevalences(values: Any, name: str = "prevalences") -> tuple[float | None, ...]:
    """Check a sequence of prevalences, each None (the data's own) or in [1e-300, 1)."""
    if isinstance(values, (str, bytes)) or not hasattr(values, "__iter__"):
        raise TypeError(f"`{name}` must be a sequence of prevalences in [1e-300, 1) or None; got {values!r:.80}")
    return tuple(None if v is None else check_prevalence(v, name) for v in values)


def check_count(value: Any, name: str, *, positive: bool = False, whole: bool = False) -> float:
    """Check a total weight or count: finite and >= 0 (> 0 with ``positive``;
    a whole number with ``whole``), as a float (:func:`check_number`)."""
    return float(check_number(value, name, low=0, low_open=positive, integer=whole,
                              hint="a count of samples" if whole else ""))


# ---------------------------------------------------------------------------
# numeric options: one validator for every number a user passes as an option
def _interval(low: float | None, high: float | None, low_open: bool, high_open: bool) -> str:
    if low is None and high is None:
        return ""
    lo = "-inf" if low is None else f"{low:g}"
    hi = "inf" if high is None else f"{high:g}"
    return f"{'(' if low_open or low is None else '['}{lo}, {hi}{')' if high_open or high is None else ']'}"


def _describe_number_rule(low, high, low_open, high_open, integer) -> str:
    kind = "a whole number" if integer else "a finite number"
    interval = _interval(low, high, low_open, high_open)
    return f"{kind} in {interval}" if interval else kind


def check_number(
    value: Any,
    name: str,
    *,
    low: float | None = None,
    high: float | None = None,
    low_open: bool = False,
    high_open: bool = False,
    integer: bool = False,
    hint: str = "",
) -> Any:
    """Check one numeric option: a real number (not a bool), finite, within
    ``[low, high]`` (each end open with ``low_open`` / ``high_open``, absent when
    ``None``), a whole number with ``integer``.

    Returns a Python ``float`` (``int`` with ``integer``).  Raises ``TypeError``
    for a non-number and ``ValueError`` for NaN, infinity or a value out of range;
    the message names the option, what it takes and what it got, then ``hint``.

    Examples
    --------
    >>> check_number(0.5, "max_fpr", low=0, high=1, low_open=True)
    0.5
    >>> check_number(float("nan"), "max_fpr", low=0, high=1, low_open=True)
    Traceback (most recent call last):
    ...
    ValueError: `max_fpr` must be a finite number in (0, 1]; got nan
    """
    rule = _describe_number_rule(low, high, low_open, high_open, integer)
    suffix = f" ({hint})" if hint else ""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError(f"`{name}` must be {rule}{suffix}; got {value!r}")
    v = float(value)
    bad = not np.isfinite(v)
    if not bad and low is not None:
        bad = v <= low if low_open else v < low
    if not bad and high is not None:
        bad = v >= high if high_open else v > high
    if not bad and integer and not v.is_integer():
        bad = True
    if bad:
        raise ValueError(f"`{name}` must be {rule}{suffix}; got {value!r}")
    if integer:
        return int(value) if isinstance(value, numbers.Integral) else int(v)
    return v


def check_numbers(
    values: Any,
    name: str,
    *,
    low: float | None = None,
    high: float | None = None,
    low_open: bool = False,
    high_open: bool = False,
    integer: bool = False,
    min_len: int = 1,
    hint: str = "",
) -> np.ndarray:
    """Check a 1-D sequence of numeric option values (as :func:`check_number`
    checks one): returns a float64 array (int64 with ``integer``) of at least
    ``min_len`` values.

    Examples
    --------
    >>> check_numbers([0.5, 0.75], "iou_thresholds", low=0, high=1)
    array([0.5 , 0.75])
    >>> check_numbers([0.5, float("nan")], "iou_thresholds", low=0, high=1)
    Traceback (most recent call last):
    ...
    ValueError: `iou_thresholds` must be a sequence of finite numbers in [0, 1]; got nan at position 1
    """
    rule = _describe_number_rule(low, high, low_open, high_open, integer)
    rule = rule.replace("a whole number", "whole numbers").replace("a finite number", "finite numbers")
    suffix = f" ({hint})" if hint else ""
    if isinstance(values, (str, bytes)) or not hasattr(values, "__len__") and not hasattr(values, "__iter__"):
        raise TypeError(f"`{name}` must be a sequence of {rule}{suffix}; got {values!r:.80}")
    try:
        items = list(np.asarray(values, dtype=object).ravel()) if np.ndim(values) != 1 else list(values)
    except Exception:  # noqa: BLE001 - anything unreadable is a wrong type
        raise TypeError(f"`{name}` must be a sequence of {rule}{suffix}; got {values!r:.80}") from None
    if np.ndim(values) > 1:
        raise ValueError(f"`{name}` must be a flat sequence of {rule}{suffix}; got shape {np.shape(values)}")
    if len(items) < min_len:
        raise ValueError(
            f"`{name}` must hold at least {min_len} value{'s' if min_len != 1 else ''}{suffix}; got {values!r:.80}"
        )
    out = []
    for i, item in enumerate(items):
        try:
            out.append(check_number(item, name, low=low, high=high, low_open=low_open,
                                    high_open=high_open, integer=integer))
        except (TypeError, ValueError) as err:
            raise type(err)(f"`{name}` must be a sequence of {rule}{suffix}; got {item!r} at position {i}") from None
    return np.asarray(out, dtype=np.int64 if integer else np.float64)


MAX_ALLOCATION_BYTES: int = 8 * 2**30
"""The largest single allocation an option may ask for (8 GiB); anything larger is
refused before allocating, with the size it would have taken."""


def check_allocation(n_items: Any, itemsize: int, name: str, *, limit: int | None = None, hint: str = "") -> None:
    """Refuse an option whose allocation (``n_items * itemsize`` bytes) exceeds
    ``limit`` (default :data:`MAX_ALLOCATION_BYTES`) before anything is allocated.

    Examples
    --------
    >>> check_allocation(10**12, 8, "bins")
    Traceback (most recent call last):
    ...
    ValueError: `bins` = 1000000000000 would allocate 7.3 TiB (limit 8.0 GiB); choose a smaller value
    """
    limit = MAX_ALLOCATION_BYTES if limit is None else limit
    total = int(n_items) * int(itemsize)
    if total > limit:
        raise ValueError(
            f"`{name}` = {n_items} would allocate {_bytes(total)} (limit {_bytes(limit)}); "
            f"{hint or 'choose a smaller value'}"
        )


def _bytes(n: int) -> str:
    size = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if size < 1024 or unit == "PiB":
            return f"{size:.1f} {unit}"
        size /= 1024
    return f"{size:.1f} PiB"  # pragma: no cover


@dataclass(frozen=True)
class MultiInput:
    """Validated multi-class or multi-label input: one binary problem per column.

    Attributes
    ----------
    scores : ndarray of shape (n, k)
        Finite numeric scores, one column per class (zero-weight rows removed).
    positive : ndarray of bool, shape (n, k)
        Whether each sample belongs to each class.
    weight : ndarray of float64 or None
        Strictly positive row weights, or None.
    classes : ndarray
        The class of each column.
    multilabel : bool
        True for an indicator matrix ``y_true``; False for 1-D class labels.
    """

    scores: np.ndarray
    positive: np.ndarray
    weight: np.ndarray | None
    classes: np.ndarray
    multilabel: bool


def is_multi(y_true: Any, y_score: Any, labels: Any = None) -> bool:
    """Whether the input is multi-class or multi-label rather than binary.

    A 2-D ``y_true`` is multi-label.  A 2-D ``y_score`` with 1-D labels is
    multi-class when ``labels`` is given or ``y_true`` has more than two
    labels; with binary labels it stays binary, so that a two-column
    probability matrix gets the binary error that says which column to pass.
    """
    score_ndim = np.ndim(y_score)
    true_ndim = np.ndim(y_true)
    if score_ndim == 2 and np.shape(y_score)[1] == 1:
        score_ndim = 1
    if true_ndim == 2 and np.shape(y_true)[1] == 1:
        true_ndim = 1
    if true_ndim == 2:
        return True
    if score_ndim != 2 or true_ndim != 1:
        return False
    return labels is not None or _labels(label_array(y_true)).size > 2


def check_multi(y_true: Any, y_score: Any, sample_weight: Any = None, labels: Any = None) -> MultiInput:
    """Validate multi-class (1-D labels) or multi-label (indicator matrix) input."""
    scores = np.asarray(y_score)
    if scores.ndim != 2:
        raise ValueError(
            "`y_score` must be 2-D, of shape (n_samples, n_classes), for multi-class or "
            f"multi-label `y_true`; got shape {scores.shape}"
        )
    n, k = scores.shape
    try:
        scores = _check_scores(scores.reshape(-1)).reshape(n, k)
    except ValueError:
        bad = ~np.isfinite(scores.astype(np.float64))
        row, col = np.argwhere(bad)[0]
        raise ValueError(
            f"`y_score` must be finite; got {int(bad.sum())} NaN or infinite value(s), the "
            f"first at row {row}, column {col} ({scores[row, col].item()!r}). Remove or "
            "impute those rows before evaluating"
        ) from None
    truth = label_array(y_true)
    if truth.ndim == 0:
        raise ValueError(f"`y_true` must be 1-D (or a 2-D indicator matrix); got an array of shape {truth.shape}")
    if truth.shape[0] != n:
        raise ValueError(
            f"`y_true` and `y_score` must have the same number of samples; got "
            f"{truth.shape[0]} and {n}"
        )
    if n == 0:
        raise ValueError("`y_true` and `y_score` must not be empty; got 0 samples")
    weight = _check_weight(sample_weight, n)
    if truth.ndim == 2 and truth.shape[1] != 1:
        if truth.shape != scores.shape:
            raise ValueError(
                f"`y_score` must have the shape of the indicator matrix `y_true`, "
                f"{truth.shape}; got {scores.shape}"
            )
        if k == 0:
            raise ValueError(
                f"`y_true` (an indicator matrix) and `y_score` must have at least one column, one per label; "
                f"got shape {scores.shape}"
            )
        positive = _indicator(truth)
        if labels is None:
            classes = np.arange(k)
        else:
            classes = check_labels(labels)
            if classes.size != k:
                raise ValueError(
                    f"`labels` must name one class per column of `y_score`; got "
                    f"{classes.size} labels for {k} columns"
                )
        multilabel = True
    else:
        truth = _as_1d(truth, "y_true")
        present = _labels(truth)
        if labels is None:
            classes = present
        else:
            classes = check_labels(labels)
            check_label_types(present, classes, "labels")
            missing = np.setdiff1d(present, classes)
            if missing.size:
                raise ValueError(
                    f"`y_true` contains labels not in `labels`: {_describe(missing)}"
                )
        if classes.size != k:
            raise ValueError(
                f"`y_score` must have one column per class; got {k} columns for "
                f"{classes.size} classes {_describe(classes)}"
                + ("" if labels is not None else "; pass `labels=` to name the columns")
            )
        positive = truth[:, None] == classes[None, :]
        multilabel = False
    if weight is not None and not (weight > 0).all():
        keep = weight > 0
        scores, positive, weight = scores[keep], positive[keep], weight[keep]
    return MultiInput(scores, positive, weight, classes, multilabel)


def _indicator(truth: np.ndarray) -> np.ndarray:
    """A 0/1 (or bool) indicator matrix as bool; without a copy for bool and 1-byte ints."""
    kind = truth.dtype.kind
    if kind == "b":
        return truth
    if kind in "iu":
        ok = truth.size == 0 or (truth.min() >= 0 and truth.max() <= 1)
    elif kind == "f":
        ok = bool(((truth == 0) | (truth == 1)).all())
    else:
        ok = False
    if not ok:
        raise ValueError(
            "`y_true` as a 2-D array must be a 0/1 (or bool) indicator matrix, one "
            "column per class"
        )
    if kind in "iu" and truth.dtype.itemsize == 1:
        return truth.view(bool)
    return truth.astype(bool)


def check_labels(labels: Any) -> np.ndarray:
    """``labels=``, the class of each score column: 1-D, of one kind, unique, no NaN (which equals no
    label, so its class could never be named, as ``pos_label``)."""
    classes = _as_1d(labels, "labels", labels=True)
    if classes.dtype.kind == "O":
        label_kind(classes, "labels")
    nan = (np.isnan(classes) if classes.dtype.kind in "fc" else
           np.array([_value_kind(v) == "number" and v != v for v in classes.tolist()], dtype=bool)
           if classes.dtype.kind == "O" else np.zeros(classes.shape, dtype=bool))
    if nan.any():
        raise ValueError(f"`labels` must name classes of `y_true`; got nan at index {int(np.flatnonzero(nan)[0])}, "
                         "which equals no label (a NaN label of `y_true` is refused): drop it")
    if np.unique(classes).size != classes.size:
        raise ValueError(f"`labels` must be unique; got {_describe(classes)}")
    return classes
