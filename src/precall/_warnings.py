"""Warning classes used by precall."""

from __future__ import annotations

__all__ = ["UndefinedMetricWarning"]


class UndefinedMetricWarning(UserWarning):
    """A metric is undefined for the given input (for example, no positives).

    It subclasses :class:`UserWarning`, so filters written for scikit-learn's
    warnings of the same situations (``UserWarning`` and its subclass
    ``sklearn.exceptions.UndefinedMetricWarning``) also catch it.
    """
