"""Where scikit-learn's own ranking tests found precall's drop-ins differing (issue 15)."""

from __future__ import annotations

import subprocess
import sys
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.metrics import label_ranking_average_precision_score

import precall


def test_ovo_without_an_average_raises_like_scikit_learn():
    y, s = [0, 1, 2, 1], np.random.default_rng(0).random((4, 3))
    with pytest.raises(NotImplementedError):  # scikit-learn's type ...
        precall.roc_auc(y, s, multi_class="ovo", average=None)
    with pytest.raises(ValueError, match="average=None"):  # ... and precall's
        precall.roc_auc(y, s, multi_class="ovo", average=None)


@pytest.mark.parametrize("y", [[0, 1, 2, 1], [[1, 0, 1], [0, 1, 0], [1, 1, 0], [0, 0, 1]]])
def test_pos_label_on_multi_input_is_refused(y):
    s = np.random.default_rng(1).random((4, 3))
    with pytest.raises(ValueError, match="pos_label"):
        precall.average_precision(y, s, pos_label=2)
    assert precall.average_precision(y, s, pos_label=1) == precall.average_precision(y, s)  # scikit-learn's 1


def test_label_ranking_average_precision_inputs():
    y = [[1, 0, 0], [0, 0, 1], [1, 1, 0]]
    s = [[0.75, 0.5, 1], [1, 0.2, 0.1], [0.3, 0.6, 0.1]]
    expected = label_ranking_average_precision_score(y, s)
    assert precall.label_ranking_average_precision(sp.csr_matrix(y), s) == pytest.approx(expected)
    for y1, s1 in (([[1], [0]], [[0.3], [0.2]]), ([[0], [0]], [[0.3], [0.2]])):
        assert precall.label_ranking_average_precision(y1, s1) == label_ranking_average_precision_score(y1, s1)
    with pytest.raises(ValueError, match="same shape"):
        precall.label_ranking_average_precision([[1, 0], [0, 1]], [[0.3, 0.1, 0.2], [0.2, 0.1, 0.3]])


def test_the_warning_is_scikit_learns_when_scikit_learn_is_loaded_first():
    code = ("import sklearn.exceptions, warnings, precall\n"
            "assert issubclass(precall.UndefinedMetricWarning, sklearn.exceptions.UndefinedMetricWarning)\n"
            "with warnings.catch_warnings(record=True) as w:\n"
            "    warnings.simplefilter('always')\n"
            "    precall.roc_auc([1, 1], [0.2, 0.4])\n"
            "assert issubclass(w[0].category, sklearn.exceptions.UndefinedMetricWarning)\n")
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert issubclass(precall.UndefinedMetricWarning, UserWarning)
