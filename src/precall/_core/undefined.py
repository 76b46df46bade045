"""Undefined results: the warning class and the one policy every metric applies."""

from __future__ import annotations

import re
import sys
import warnings
from typing import Any

__all__ = ["NO_POSITIVES", "ONE_CLASS_ROC", "RAISED", "UNRANKED_POSITIVES", "UndefinedMetricWarning", "raised_text",
           "undefined"]


def _base() -> type:
    """scikit-learn's ``UndefinedMetricWarning`` when scikit-learn is already imported, else
    ``UserWarning`` (its base).  Importing scikit-learn here would cost about a second at every
    ``import precall``; when it is loaded first (as in code that mixes the two), precall's
    warning is a subclass of scikit-learn's, so ``pytest.warns(sklearn...UndefinedMetricWarning)``
    and filters written for scikit-learn catch precall's too."""
    if "sklearn" in sys.modules:
        try:
            from sklearn.exceptions import UndefinedMetricWarning as sklearn_warning  # noqa: PLC0415
        except ImportError:  # pragma: no cover - a broken scikit-learn
            return UserWarning
        return sklearn_warning
    return UserWarning


class UndefinedMetricWarning(_base()):  # type: ignore[misc]
    """A metric is undefined for the given input (for example, no positives).

    It subclasses :class:`UserWarning` and, when scikit-learn is imported before
    precall, ``sklearn.exceptions.UndefinedMetricWarning`` (see :func:`_base`).
    """


NO_POSITIVES = (
    "No positive class found in y_true, recall is set to one for all thresholds; "
    "average precision is undefined and reported as 0.0 (scikit-learn's convention). "
    "Choose another result with on_undefined='nan', 'raise' or a number"
)
ONE_CLASS_ROC = (
    "Only one class is present in y_true. ROC AUC score is not defined in that case. "
    "Choose another result than NaN with on_undefined='raise' or a number"
)

UNRANKED_POSITIVES = (
    "{missing:g} of the {n_pos:g} positives are never ranked (ground truths no detection found): the minimum AP "
    "is that of a ranking of every positive, so it and the normalised AP are undefined here. The result is NaN"
)


def undefined(metric: str, message: str, default: float, policy: Any, stacklevel: int = 4) -> float:
    """The value of an undefined metric under ``policy`` (checked by
    :func:`precall._core.validate.check_on_undefined`): ``"warn"`` returns ``default``
    with an :class:`UndefinedMetricWarning`, ``"nan"`` NaN, ``"raise"`` raises
    ``ValueError``, a number is returned as given."""
    if policy == "warn":
        warnings.warn(message, UndefinedMetricWarning, stacklevel=stacklevel)
        return default
    if policy == "nan":
        return float("nan")
    if policy == "raise":
        raise ValueError(f"{metric} is undefined: {raised_text(message)}")
    return float(policy)


_REPORTED = re.compile(r"(?:,| and|;)? (?:is )?(?:reported|returned|set) as (?:0\.0|NaN|nan|-1)(?: \([^)]*\))?"
                       r"|\s*The (?:result|value) is NaN\.?|\s*(?:The interval is undefined and )?[Ii]ts bounds are NaN\.?")
RAISED = "Stopped by on_undefined='raise'; 'warn', 'nan' or a number give a result instead"


def raised_text(message: str) -> str:
    """A warning's ``message`` as the error of ``on_undefined="raise"``: without what the other policies
    report (nothing is reported) and their advice, which named ``"raise"`` itself; :data:`RAISED` instead."""
    kept = _REPORTED.sub("", message.split("Choose another result")[0]).strip()
    return f"{kept.rstrip('.;,')}. {RAISED}" if kept else RAISED
