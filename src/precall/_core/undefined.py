"""Undefined results: the warning class and the one policy every metric applies."""

from __future__ import annotations

import warnings
from typing import Any

__all__ = ["NO_POSITIVES", "ONE_CLASS_ROC", "UndefinedMetricWarning", "undefined"]


class UndefinedMetricWarning(UserWarning):
    """A metric is undefined for the given input (for example, no positives).

    It subclasses :class:`UserWarning`, so filters written for scikit-learn's
    warnings of the same situations (``UserWarning`` and its subclass
    ``sklearn.exceptions.UndefinedMetricWarning``) also catch it.
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
        raise ValueError(f"{metric} is undefined: {message}")
    return float(policy)
