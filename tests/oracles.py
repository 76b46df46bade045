"""Slow, obviously-correct reference implementations written from the definitions.

Everything here is plain Python loops over samples / operating points.  Nothing is
imported from precall, and nothing is vectorised beyond building the two reference
recall grids exactly the way the reference codes build them (that *is* the
definition of ``recall_grid="reference"``).

Conventions
-----------
An *operating point* k (k = 1..K, in order of decreasing threshold) has cumulative
true-positive weight ``tp[k]`` and false-positive weight ``fp[k]`` of the samples
"predicted positive" at that point.  ``n_pos`` / ``n_neg`` are the total positive /
negative weights.  Recall is ``tp / n_pos``, precision ``tp / (tp + fp)``.

* ties="group": one operating point per distinct score (samples with equal scores
  enter together), exactly like scikit-learn's ``_binary_clf_curve``.
* ties="stable": one operating point per sample, samples in descending score order,
  equal scores kept in input order (pycocotools / Detectron / the seed tables).

Zero-weight samples create no operating point in either mode.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from decimal import Decimal, localcontext
from fractions import Fraction

import numpy as np

__all__ = [
    "Points",
    "binarize",
    "operating_points",
    "ap_step",
    "ap_voc2007",
    "ap_voc2010",
    "ap_coco",
    "ap_trapezoid",
    "ap_interpolated",
    "average_precision",
    "roc_auc_pairwise",
    "best_f1",
    "VOC07_REFERENCE_GRID",
    "COCO_REFERENCE_GRID",
    "METHODS",
    "SEEDS",
    "average_precision_exact",
    "davis_goadrich_points",
    "min_ap_brute_force",
    "prg_from_definition",
    "rankings",
]

METHODS = ("step", "voc2007", "voc2010", "coco", "trapezoid", "interpolated")

# The float grids exactly as the reference codes build them.
# Detectron voc_eval.voc_ap(use_07_metric=True): ``for t in np.arange(0., 1.1, 0.1)``
VOC07_REFERENCE_GRID = [float(t) for t in np.arange(0.0, 1.1, 0.1)]
# pycocotools Params.setDetParams:
COCO_REFERENCE_GRID = [
    float(t) for t in np.linspace(0.0, 1.00, int(np.round((1.00 - 0.0) / 0.01)) + 1, endpoint=True)
]


# --------------------------------------------------------------------------- labels
def binarize(y_true, pos_label=None):
    """Return a list of bools: is sample i positive?

    pos_label=None follows scikit-learn: the labels must be a subset of {0, 1} or
    {-1, 1} (bools allowed), and 1 is positive.
    """
    labels = list(y_true)
    if pos_label is None:
        distinct = set()
        for v in labels:
            distinct.add(v.item() if hasattr(v, "item") else v)
        if not (distinct <= {0, 1} or distinct <= {-1, 1}):
            raise ValueError("oracle: labels are not {0,1}/{-1,1}; pass pos_label")
        pos_label = 1
    return [bool(v == pos_label) for v in labels]


# ------------------------------------------------------------------ operating points
@dataclass
class Points:
    thresholds: list  # decreasing (group) / non-increasing (stable) scores
    tp: list  # cumulative positive weight
    fp: list  # cumulative negative weight
    n_pos: float
    n_neg: float

    def __len__(self):
        return len(self.tp)

    @property
    def recall(self):
        return [t / self.n_pos for t in self.tp]

    @property
    def precision(self):
        out = []
        for t, f in zip(self.tp, self.fp):
            out.append(t / (t + f) if (t + f) != 0 else 0.0)
        return out


def _stable_descending_order(scores):
    """Indices in descending score order, equal scores in input order.

    A plain insertion sort, so stability is evident.
    """
    order = []
    for i in range(len(scores)):
        pos = len(order)
        # move left past every element with a strictly smaller score
        while pos > 0 and scores[order[pos - 1]] < scores[i]:
            pos -= 1
        order.insert(pos, i)
    return order


def operating_points(y_true, y_score, sample_weight=None, pos_label=None, ties="group"):
    """Confusion counts at every operating point (see module docstring)."""
    is_pos = binarize(y_true, pos_label)
    scores = [s.item() if hasattr(s, "item") else s for s in y_score]
    n = len(scores)
    assert len(is_pos) == n
    if sample_weight is None:
        weights = [1] * n  # integer counts
    else:
        weights = [float(w) for w in sample_weight]
        assert len(weights) == n

    keep = [i for i in range(n) if weights[i] != 0]
    order = _stable_descending_order([scores[i] for i in keep])
    order = [keep[j] for j in order]

    thresholds, tp, fp = [], [], []
    ctp = 0 if sample_weight is None else 0.0
    cfp = 0 if sample_weight is None else 0.0
    for pos, i in enumerate(order):
        if is_pos[i]:
            ctp += weights[i]
        else:
            cfp += weights[i]
        if ties == "stable":
            last_of_group = True
        elif ties == "group":
            last_of_group = pos == len(order) - 1 or scores[order[pos + 1]] != scores[i]
        else:
            raise ValueError(ties)
        if last_of_group:
            thresholds.append(scores[i])
            tp.append(ctp)
            fp.append(cfp)
    # Totals are the cumulative sums at the last sample, accumulated in the same
    # (sorted) order, so that recall at the lowest threshold is exactly 1 even with
    # float weights (as scikit-learn's tps / tps[-1]).
    n_pos, n_neg = ctp, cfp
    return Points(thresholds, tp, fp, n_pos, n_neg)


def exactly_rounded_points(y_true, y_score, sample_weight, pos_label=None):
    """Grouped operating points whose cumulative weights are summed exactly (fractions) and
    rounded once to float64 (``float(Fraction)`` rounds correctly): the best any float
    route can give.  :func:`operating_points` adds the floats in order, as scikit-learn's
    cumsum does, and so carries that sum's rounding error."""
    is_pos = binarize(y_true, pos_label)
    scores = [s.item() if hasattr(s, "item") else s for s in y_score]
    weights = [Fraction(float(w)) for w in sample_weight]
    keep = [i for i in range(len(scores)) if weights[i] != 0]
    order = [keep[j] for j in _stable_descending_order([scores[i] for i in keep])]
    thresholds, tp, fp = [], [], []
    ctp = cfp = Fraction(0)
    for pos, i in enumerate(order):
        if is_pos[i]:
            ctp += weights[i]
        else:
            cfp += weights[i]
        if pos == len(order) - 1 or scores[order[pos + 1]] != scores[i]:
            thresholds.append(scores[i])
            tp.append(float(ctp))
            fp.append(float(cfp))
    return Points(thresholds, tp, fp, float(ctp), float(cfp))


def exact_cumsum(values):
    """The cumulative sums of finite non-negative floats, each summed exactly (Python integers
    in units of the smallest term's last bit) and rounded once to float64 (``int / int`` and
    ``float(int)`` round correctly): what a compensated sum should land within an ulp of."""
    v = np.asarray(values, dtype=np.float64)
    if v.size == 0:
        return np.zeros(0)
    mant, expo = np.frexp(v)
    units = [int(m) << int(e) for m, e in zip((mant * 2.0**53).astype(np.int64).tolist(),
                                              (expo - expo.min()).tolist())]
    low = int(expo.min()) - 53  # v = units * 2**low, exactly
    out = []
    total = 0
    for u in units:
        total += u
        out.append(float(total << low) if low >= 0 else total / (1 << -low))
    return np.array(out)


def ulps_from_exact(got, values):
    """How many ulps of the exact value each cumulative sum ``got`` is from it (:func:`exact_cumsum`)."""
    exact = exact_cumsum(values)
    return np.abs(np.asarray(got, dtype=np.float64) - exact) / np.spacing(np.maximum(exact, np.finfo(float).tiny))


# ---------------------------------------------------------------- AP conventions
def ap_step(pts: Points) -> float:
    """sum_n (R_n - R_{n-1}) P_n with R_0 = 0 (scikit-learn's average_precision_score)."""
    total = 0.0
    prev_r = 0.0
    for r, p in zip(pts.recall, pts.precision):
        total += (r - prev_r) * p
        prev_r = r
    return total


def _recall_at_least(tp, n_pos, t, grid):
    """Is recall tp/n_pos >= t?  grid="reference": float comparison with the float
    grid value; grid="exact": t is the Fraction k/10 or k/100 and the comparison is
    made in exact rational arithmetic on the (float or int) counts."""
    if grid == "reference":
        return tp / n_pos >= t
    return Fraction(tp) / Fraction(n_pos) >= t


def ap_voc2007(pts: Points, grid="reference") -> float:
    """Detectron voc_ap(use_07_metric=True), 11-point interpolation."""
    if grid == "reference":
        ts = VOC07_REFERENCE_GRID
    elif grid == "exact":
        ts = [Fraction(k, 10) for k in range(11)]
    else:
        raise ValueError(grid)
    prec = pts.precision
    ap = 0.0
    for t in ts:
        best = None
        for k in range(len(pts)):
            if _recall_at_least(pts.tp[k], pts.n_pos, t, grid):
                if best is None or prec[k] > best:
                    best = prec[k]
        p = 0.0 if best is None else best
        ap = ap + p / 11.0
    return ap


def ap_voc2010(pts: Points) -> float:
    """The all-point envelope AP of Detectron's voc_ap, as plain loops from its definition."""
    mrec = [0.0] + list(pts.recall) + [1.0]
    mpre = [0.0] + list(pts.precision) + [0.0]
    # precision envelope: running max from the right
    for i in range(len(mpre) - 1, 0, -1):
        mpre[i - 1] = max(mpre[i - 1], mpre[i])
    # sum of rectangles where recall changes
    ap = 0.0
    for i in range(len(mrec) - 1):
        if mrec[i + 1] != mrec[i]:
            ap += (mrec[i + 1] - mrec[i]) * mpre[i + 1]
    return ap


def ap_coco(pts: Points, grid="reference") -> float:
    """pycocotools COCOeval.accumulate for one (category, area, maxDet, iouThr) cell,
    followed by the mean over the 101 recall thresholds."""
    eps = float(np.spacing(1))
    rc = [t / pts.n_pos for t in pts.tp]
    pr = [t / (f + t + eps) for t, f in zip(pts.tp, pts.fp)]
    # envelope, as in pycocotools
    for i in range(len(pr) - 1, 0, -1):
        if pr[i] > pr[i - 1]:
            pr[i - 1] = pr[i]
    if grid == "reference":
        ts = COCO_REFERENCE_GRID
    elif grid == "exact":
        ts = [Fraction(k, 100) for k in range(101)]
    else:
        raise ValueError(grid)
    q = []
    for t in ts:
        # np.searchsorted(rc, t, side="left"): first index with rc[i] >= t
        idx = None
        for i in range(len(rc)):
            if _recall_at_least(pts.tp[i], pts.n_pos, t, grid):
                idx = i
                break
        q.append(0.0 if idx is None else pr[idx])
    return math.fsum(q) / len(q)


def ap_trapezoid(pts: Points) -> float:
    """Trapezoidal area under the PR points, starting at (recall 0, precision 1)."""
    rs = [0.0] + list(pts.recall)
    ps = [1.0] + list(pts.precision)
    area = 0.0
    for k in range(1, len(rs)):
        area += (rs[k] - rs[k - 1]) * (ps[k] + ps[k - 1]) / 2.0
    return area


def _simpson(f, a, b, n=400):
    """Composite Simpson rule with n (even) panels on [a, b]."""
    h = (b - a) / n
    total = f(a) + f(b)
    for i in range(1, n):
        total += (4 if i % 2 else 2) * f(a + i * h)
    return total * h / 3.0


def ap_interpolated(pts: Points, panels=400) -> float:
    """Davis & Goadrich (2006) interpolated area under the PR curve.

    Between consecutive operating points A=(TPa,FPa) and B=(TPb,FPb), starting from
    (0, 0), the curve passes through TP = TPa + x, FP = FPa + s x with
    s = (FPb - FPa) / (TPb - TPa), x in [0, TPb - TPa]; precision there is
    (TPa + x) / (TPa + FPa + (1 + s) x), recall (TPa + x) / P.  We integrate
    precision d(recall) numerically (composite Simpson, many panels).
    """
    P = pts.n_pos
    area = 0.0
    tpa, fpa = 0.0, 0.0
    for tpb, fpb in zip(pts.tp, pts.fp):
        tpb, fpb = float(tpb), float(fpb)
        if tpb != tpa:
            s = (fpb - fpa) / (tpb - tpa)
            L = tpb - tpa

            if tpa + fpa == 0:
                # From the origin the curve is a straight line through (0,0):
                # precision is constant 1/(1+s) (the limit at x -> 0 as well).
                def f(x, s=s):
                    return 1.0 / (1.0 + s)
            else:

                def f(x, a=tpa, b=tpa + fpa, c=1.0 + s):
                    return (a + x) / (b + c * x)

            area += _simpson(f, 0.0, L, panels)
        tpa, fpa = tpb, fpb
    return area / P


def ap_interpolated_closed_form(pts: Points) -> float:
    """The same integral in closed form (independent check of the numeric one):
    int_0^L (a + x)/(b + c x) dx = L/c + (a - b/c)/c * ln((b + c L)/b)."""
    P = pts.n_pos
    area = 0.0
    tpa, fpa = 0.0, 0.0
    for tpb, fpb in zip(pts.tp, pts.fp):
        tpb, fpb = float(tpb), float(fpb)
        if tpb != tpa:
            s = (fpb - fpa) / (tpb - tpa)
            L = tpb - tpa
            a, b, c = tpa, tpa + fpa, 1.0 + s
            if b == 0:
                area += L / c
            else:
                area += L / c + (a - b / c) / c * math.log((b + c * L) / b)
        tpa, fpa = tpb, fpb
    return area / P


_AP = {
    "step": ap_step,
    "voc2007": ap_voc2007,
    "voc2010": ap_voc2010,
    "coco": ap_coco,
    "trapezoid": ap_trapezoid,
    "interpolated": ap_interpolated,
}


def average_precision(
    y_true,
    y_score,
    method="step",
    ties="group",
    sample_weight=None,
    pos_label=None,
    recall_grid="reference",
):
    pts = operating_points(y_true, y_score, sample_weight, pos_label, ties)
    if method in ("voc2007", "coco"):
        return _AP[method](pts, grid=recall_grid)
    return _AP[method](pts)


# ----------------------------------------------------------------------- ROC-AUC
def roc_auc_pairwise(y_true, y_score, sample_weight=None, pos_label=None):
    """P(score_pos > score_neg) + 0.5 P(score_pos == score_neg), pairs weighted by w_i w_j."""
    is_pos = binarize(y_true, pos_label)
    scores = [float(s) for s in y_score]
    n = len(scores)
    w = [1.0] * n if sample_weight is None else [float(x) for x in sample_weight]
    num = 0.0
    den = 0.0
    for i in range(n):
        if not is_pos[i]:
            continue
        for j in range(n):
            if is_pos[j]:
                continue
            ww = w[i] * w[j]
            den += ww
            if scores[i] > scores[j]:
                num += ww
            elif scores[i] == scores[j]:
                num += 0.5 * ww
    return num / den


# ----------------------------------------------------------------------- best F1
def best_f1(pts: Points):
    """max over operating points of F1 = 2 tp / (2 tp + fp + fn); returns
    (best f1, list of thresholds attaining it (within 1e-12))."""
    f1s = []
    for t, f in zip(pts.tp, pts.fp):
        fn = pts.n_pos - t
        d = 2 * t + f + fn
        f1s.append(2 * t / d if d else 0.0)
    m = max(f1s)
    return m, [th for th, v in zip(pts.thresholds, f1s) if abs(v - m) <= 1e-12]


# ------------------------------------------------------------------- seed values
SEEDS = {
    1: dict(
        scores=[0.65, 0.1, 0.15, 0.43, 0.97, 0.24, 0.82, 0.7, 0.32, 0.84],
        labels=[0, 0, 1, 0, 1, 1, 0, 1, 1, 1],
        expected={
            ("step", "group"): 0.768849,
            ("voc2010", "group"): 0.791667,
            ("voc2007", "group"): 0.803030,
            ("trapezoid", "group"): 0.748016,
        },
        roc_auc=0.583333,
    ),
    2: dict(
        scores=[0.23, 0.76, 0.01, 0.91, 0.13, 0.45, 0.12, 0.03, 0.38, 0.11,
                0.03, 0.09, 0.65, 0.07, 0.12, 0.24, 0.1, 0.23, 0.46, 0.08],
        labels=[0, 1, 0, 1, 0, 0, 1, 0, 1, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 1],
        expected={
            ("step", "group"): 0.643849,
            ("voc2010", "stable"): 0.662067,
            ("voc2007", "stable"): 0.670307,
        },
        roc_auc=0.732143,
    ),
    3: dict(
        scores=[0.9, 0.8, 0.7, 0.6, 0.3, 0.2, 0.1],
        labels=[0, 1, 1, 1, 0, 0, 0],
        expected={
            ("step", "group"): 0.638889,
            ("voc2010", "group"): 0.75,
            ("voc2007", "group"): 0.75,
        },
        roc_auc=0.75,
        pr_precision=[3 / 7, 1 / 2, 3 / 5, 3 / 4, 2 / 3, 1 / 2, 0, 1],
        pr_recall=[1, 1, 1, 1, 2 / 3, 1 / 3, 0, 0],
    ),
}


# ------------------------------------------------------------- PR space, imbalance
def rankings(n_pos, n_neg, ties):
    """Every ranking of n_pos positives and n_neg negatives, as (labels, scores).

    ties="stable": every order of the labels (distinct scores).  ties="group":
    every weak order, i.e. every sequence of tied runs (a run holds some
    positives and some negatives; positives and negatives are interchangeable
    among themselves, so a run is its two counts).
    """
    if ties == "stable":
        n = n_pos + n_neg
        for positions in _combinations(n, n_pos):
            labels = [1 if i in positions else 0 for i in range(n)]
            yield labels, list(range(n, 0, -1))
        return

    def runs(p, q):
        if p == 0 and q == 0:
            yield []
            return
        for a in range(p + 1):
            for b in range(q + 1):
                if a + b:
                    for rest in runs(p - a, q - b):
                        yield [(a, b)] + rest

    for seq in runs(n_pos, n_neg):
        labels, scores = [], []
        for k, (a, b) in enumerate(seq):
            labels += [1] * a + [0] * b
            scores += [len(seq) - k] * (a + b)
        yield labels, scores


def _combinations(n, k):
    if k == 0:
        yield set()
        return
    for first in range(n):
        for rest in _combinations(n - first - 1, k - 1):
            yield {first} | {first + 1 + r for r in rest}


def average_precision_exact(y_true, y_score, method="step", ties="group", sample_weight=None, recall_grid="reference"):
    """:func:`average_precision`, with the closed form for "interpolated" (the
    numeric integration loses ~1e-8 on steep segments)."""
    if method == "interpolated":
        return ap_interpolated_closed_form(operating_points(y_true, y_score, sample_weight, None, ties))
    return average_precision(y_true, y_score, method, ties, sample_weight, recall_grid=recall_grid)


def min_ap_brute_force(n_pos, n_neg, method, ties, recall_grid="reference"):
    """The smallest AP of ``method`` over every ranking of the class counts."""
    return min(
        average_precision_exact(labels, scores, method=method, ties=ties, recall_grid=recall_grid)
        for labels, scores in rankings(n_pos, n_neg, ties)
    )


def prg_from_definition(pts: Points):
    """Flach & Kull (2015): the precision-recall-gain points with recall gain in
    [0, 1] and the trapezoidal area under them, in exact rational arithmetic.

    precGain = (prec - pi) / ((1 - pi) prec), recGain = (rec - pi) / ((1 - pi) rec),
    pi = P / (P + N).  The operating points are the origin (nothing predicted
    positive) and every point of ``pts``; the curve starts where recall gain
    crosses 0, on the straight segment (in counts, i.e. in ROC space) between
    the last point with recall gain < 0 and the first with recall gain >= 0.
    Returns (recall gains, precision gains, area) as Fractions.
    """
    P, N = Fraction(pts.n_pos), Fraction(pts.n_neg)
    pi = P / (P + N)

    def gains(tp, fp):
        prec, rec = tp / (tp + fp), tp / P
        return (rec - pi) / ((1 - pi) * rec), (prec - pi) / ((1 - pi) * prec)

    counts = [(Fraction(0), Fraction(0))] + [(Fraction(t), Fraction(f)) for t, f in zip(pts.tp, pts.fp)]
    rg, pg = [], []
    for k, (tp, fp) in enumerate(counts):
        if tp == 0 or tp / P < pi:
            continue
        if not rg and tp / P > pi:  # first point past the crossing: add the crossing
            tp0, fp0 = counts[k - 1]
            target = pi * P
            fp_cross = fp0 + (target - tp0) * (fp - fp0) / (tp - tp0)
            r0, p0 = gains(target, fp_cross)
            rg.append(r0)
            pg.append(p0)
        r, p = gains(tp, fp)
        rg.append(r)
        pg.append(p)
    area = sum(((rg[i] - rg[i - 1]) * (pg[i] + pg[i - 1]) / 2 for i in range(1, len(rg))), Fraction(0))
    return rg, pg, area


def davis_goadrich_points(tp, fp):
    """Davis & Goadrich (2006), sec. 4: between consecutive points A and B, for each
    whole x with TP_A < x < TP_B, FP = FP_A + (x - TP_A)(FP_B - FP_A)/(TP_B - TP_A);
    returns (tp, fp) lists with the original points in place (Fractions)."""
    out_tp, out_fp = [Fraction(tp[0])], [Fraction(fp[0])]
    for k in range(1, len(tp)):
        ta, fa, tb, fb = Fraction(tp[k - 1]), Fraction(fp[k - 1]), Fraction(tp[k]), Fraction(fp[k])
        x = ta + 1
        while x < tb:
            out_tp.append(x)
            out_fp.append(fa + (x - ta) * (fb - fa) / (tb - ta))
            x += 1
        out_tp.append(tb)
        out_fp.append(fb)
    return out_tp, out_fp


def assert_tables_equal(a, b, exact: bool = True) -> None:
    """Two count tables agree: the same thresholds, and counts equal (``exact``) or
    within 1e-12 relative (weights summed in another order)."""
    np.testing.assert_array_equal(a.thresholds, b.thresholds)
    if exact:
        np.testing.assert_array_equal(a.tp, b.tp)
        np.testing.assert_array_equal(a.fp, b.fp)
        assert (a.n_pos, a.n_neg) == (b.n_pos, b.n_neg)
    else:
        np.testing.assert_allclose(a.tp, b.tp, rtol=1e-12)
        np.testing.assert_allclose(a.fp, b.fp, rtol=1e-12)
        np.testing.assert_allclose([a.n_pos, a.n_neg], [b.n_pos, b.n_neg], rtol=1e-12)


# ---------------------------------------------------------------------------
# the normal distribution in 60-digit decimal arithmetic (no mpmath needed)
_PI = Decimal("3.14159265358979323846264338327950288419716939937510582097494459")


def normal_sf_exact(z: float) -> Decimal:
    """``P(Z > z)`` of the standard normal for the double ``z`` (taken exactly), to
    about 50 significant digits: ``erfc(z / sqrt(2)) / 2`` from the Taylor series of
    ``erf`` below ``x = 3`` and the continued fraction of ``erfc`` (Abramowitz &
    Stegun 7.1.14, evaluated backwards) above."""
    with localcontext() as ctx:
        ctx.prec = 80
        x = abs(Decimal(z)) / Decimal(2).sqrt()
        if x < 3:
            term, total, n = x, x, 0
            while abs(term) > Decimal(10) ** -75:
                n += 1
                term = -term * x * x / n
                total += term / (2 * n + 1)
            upper = (1 - 2 * total / _PI.sqrt()) / 2  # erfc(x) / 2
        else:
            fraction = Decimal(0)
            for k in range(4000, 0, -1):  # x + (1/2)/(x + 1/(x + (3/2)/(x + ...)))
                fraction = (Decimal(k) / 2) / (x + fraction)
            upper = (-x * x).exp() / _PI.sqrt() / (x + fraction) / 2
        return +(upper if z >= 0 else 1 - upper)


def normal_cdf_exact(z: float) -> Decimal:
    """``P(Z <= z)`` to about 50 digits (see :func:`normal_sf_exact`)."""
    return normal_sf_exact(-z)


# --------------------------------------------------------------------------- COCO polygons
def coco_polygon_mask(xy, h, w):
    """pycocotools' ``rleFrPoly`` + ``decode`` (maskApi.c), transcribed with Python ints and
    floats: a flat column-major boolean mask of an ``h`` x ``w`` image.

    The C code walks every edge one step at a time on the 5x grid.  Between two steps where
    the walked x (``u``) does not change, or lies outside the image's columns, nothing is
    recorded, so a long edge (over 4096 steps) visits only the steps around each change of
    ``u`` near the image, found by bisection on the same float expression (``u`` is monotone
    along an edge); short edges are walked step by step as in C.  C's ``int`` is taken as
    unbounded (pycocotools' overflows beyond 2**31 / 5 pixels).
    """
    scale = 5.0
    k = len(xy) // 2
    x = [int(scale * xy[2 * j] + 0.5) for j in range(k)] + [int(scale * xy[0] + 0.5)]
    y = [int(scale * xy[2 * j + 1] + 0.5) for j in range(k)] + [int(scale * xy[1] + 0.5)]
    u, v = [], []
    for j in range(k):
        xs, xe, ys, ye = x[j], x[j + 1], y[j], y[j + 1]
        dx, dy = abs(xe - xs), abs(ys - ye)
        flip = (dx >= dy and xs > xe) or (dx < dy and ys > ye)
        if flip:
            xs, xe, ys, ye = xe, xs, ye, ys
        if dx >= dy:
            s = (ye - ys) / dx if dx else 0.0

            def point(t, xs=xs, ys=ys, s=s):
                return t + xs, int(ys + s * t + 0.5)
            n = dx
        else:
            s = (xe - xs) / dy

            def point(t, xs=xs, ys=ys, s=s):
                return int(xs + s * t + 0.5), t + ys
            n = dy
        ts = _steps_near_the_image(point, n, w) if n > 4096 else range(n + 1)
        order = sorted(ts, reverse=flip)
        for t in order:
            pu, pv = point(t)
            u.append(pu)
            v.append(pv)
    xs_, ys_ = [], []
    for j in range(1, len(u)):
        if u[j] != u[j - 1]:
            xd = float(u[j] if u[j] < u[j - 1] else u[j] - 1)
            xd = (xd + 0.5) / scale - 0.5
            if math.floor(xd) != xd or xd < 0 or xd > w - 1:
                continue
            yd = float(v[j] if v[j] < v[j - 1] else v[j - 1])
            yd = (yd + 0.5) / scale - 0.5
            yd = 0.0 if yd < 0 else (float(h) if yd > h else yd)
            xs_.append(int(xd))
            ys_.append(math.ceil(yd))
    a = sorted([xx * h + yy for xx, yy in zip(xs_, ys_)] + [h * w])
    diffs, p = [], 0
    for t in a:
        diffs.append(t - p)
        p = t
    b, j = [diffs[0]], 1
    while j < len(diffs):
        if diffs[j] > 0:
            b.append(diffs[j])
            j += 1
        else:
            j += 1
            if j < len(diffs):
                b[-1] += diffs[j]
                j += 1
    mask = np.zeros(h * w, dtype=bool)
    pos, on = 0, False
    for count in b:
        if on:
            mask[pos:pos + count] = True
        pos, on = pos + count, not on
    return mask


def _steps_near_the_image(point, n, w):
    """Steps 0 and n, and the first and last step (with their outer neighbours) of every value of
    ``u`` (monotone in t) in [-1, 5 w + 1]: between two of them ``u`` is constant or outside the
    image's columns, where the walk records nothing."""
    out = {0, n}
    rising = point(n)[0] >= point(0)[0]

    def first(pred):  # the first t in 0..n with pred(t) (pred monotone), n + 1 if none
        lo, hi = 0, n + 1
        while lo < hi:
            mid = (lo + hi) // 2
            if pred(mid):
                hi = mid
            else:
                lo = mid + 1
        return lo

    for q in range(-1, 5 * w + 2):
        if rising:
            a, b = first(lambda t: point(t)[0] >= q), first(lambda t: point(t)[0] > q) - 1
        else:
            a, b = first(lambda t: point(t)[0] <= q), first(lambda t: point(t)[0] < q) - 1
        if a <= b:
            out.update(t for t in (a - 1, a, b, b + 1) if 0 <= t <= n)
    return out


# ---------------------------------------------------------------------------
# detection diagnostics (issue 24): operating points from pycocotools' matching, and
# ultralytics' confusion matrix, written from their definitions, one image at a time
def coco_counts_at(coco_eval, class_id, confidence, iou_threshold=0.5):
    """(TP, FP, n_gt) of one class at ``score >= confidence``, read from a pycocotools ``COCOeval``
    (``evaluate()`` run) at area ``all`` and its largest ``maxDets``: its own matching
    (``dtMatches``, ``dtIgnore``, ``gtIgnore``) counted detection by detection."""
    p = coco_eval.params
    t = int(np.flatnonzero(np.isclose(p.iouThrs, iou_threshold))[0])
    tp = fp = n_gt = 0
    for e in coco_eval.evalImgs:
        if e is None or e["category_id"] != class_id or e["aRng"] != p.areaRng[0]:
            continue
        n_gt += sum(1 for g in e["gtIgnore"] if not g)
        for k, score in enumerate(e["dtScores"]):
            if score < confidence or e["dtIgnore"][t][k]:
                continue
            if e["dtMatches"][t][k] > 0:
                tp += 1
            else:
                fp += 1
    return tp, fp, n_gt


def prf(tp, fp, n_gt):
    """Precision, recall, F1 from counts (0 where a denominator is 0; recall NaN without ground truth)."""
    p = tp / (tp + fp) if tp + fp else 0.0
    r = tp / n_gt if n_gt else float("nan")
    f1 = 2 * p * r / (p + r) if n_gt and p + r > 0 else 0.0
    return p, r, f1


def best_f1_brute_force(coco_eval, class_id, iou_threshold=0.5):
    """Every score of the class's detections tried as the confidence: (best F1, its highest confidence)."""
    scores = sorted({s for e in coco_eval.evalImgs if e is not None and e["category_id"] == class_id
                     for s in e["dtScores"]}, reverse=True)
    best = (-1.0, float("nan"))
    for s in scores:
        f1 = prf(*coco_counts_at(coco_eval, class_id, s, iou_threshold))[2]
        if f1 > best[0]:
            best = (f1, s)
    return best


def _box_iou_xywh(a, b):
    ax2, ay2, bx2, by2 = a[:, 0] + a[:, 2], a[:, 1] + a[:, 3], b[:, 0] + b[:, 2], b[:, 1] + b[:, 3]
    iw = np.clip(np.minimum(ax2[:, None], bx2) - np.maximum(a[:, 0][:, None], b[:, 0]), 0, None)
    ih = np.clip(np.minimum(ay2[:, None], by2) - np.maximum(a[:, 1][:, None], b[:, 1]), 0, None)
    inter = iw * ih
    return inter / (a[:, 2:].prod(axis=1)[:, None] + b[:, 2:].prod(axis=1) - inter)


def ultralytics_confusion_matrix(gt, results, confidence=0.25, iou_threshold=0.45):
    """ultralytics' ``ConfusionMatrix.process_batch`` transcribed, image by image (COCO dicts in; crowd
    ground truths left out; detections kept at ``score >= confidence``, where ultralytics has ``>``):
    ``matrix[predicted, true]``, the last row and column background."""
    classes = sorted(c["id"] for c in gt["categories"])
    nc = len(classes)
    index = {c: k for k, c in enumerate(classes)}
    matrix = np.zeros((nc + 1, nc + 1), dtype=np.int64)
    for img in gt["images"]:
        labels = [a for a in gt["annotations"] if a["image_id"] == img["id"] and not a.get("iscrowd")]
        dets = [r for r in results if r["image_id"] == img["id"] and r["score"] >= confidence]
        gt_classes = [index[a["category_id"]] for a in labels]
        detection_classes = [index[r["category_id"]] for r in dets]
        if not labels:
            for dc in detection_classes:
                matrix[dc, nc] += 1
            continue
        if not dets:
            for gc in gt_classes:
                matrix[nc, gc] += 1
            continue
        iou = _box_iou_xywh(np.array([a["bbox"] for a in labels], float), np.array([r["bbox"] for r in dets], float))
        x = np.nonzero(iou > iou_threshold)
        if x[0].shape[0]:
            matches = np.concatenate((np.stack(x, 1), iou[x[0], x[1]][:, None]), 1)
            if x[0].shape[0] > 1:
                matches = matches[matches[:, 2].argsort()[::-1]]
                matches = matches[np.unique(matches[:, 1], return_index=True)[1]]
                matches = matches[matches[:, 2].argsort()[::-1]]
                matches = matches[np.unique(matches[:, 0], return_index=True)[1]]
        else:
            matches = np.zeros((0, 3))
        n = matches.shape[0] > 0
        m0, m1, _ = matches.transpose().astype(int)
        for i, gc in enumerate(gt_classes):
            j = m0 == i
            if n and sum(j) == 1:
                matrix[detection_classes[m1[j][0]], gc] += 1
            else:
                matrix[nc, gc] += 1
        for i, dc in enumerate(detection_classes):
            if not any(m1 == i):
                matrix[dc, nc] += 1
    return matrix


def torchvision_box_convert(boxes, in_fmt, out_fmt):
    """torchvision.ops.box_convert for in_fmt in (xyxy, xywh, cxcywh) -> xywh, its operations one by one
    (torchvision/ops/_box_convert.py: cxcywh goes to xyxy first), for torchmetrics where torchvision
    cannot be imported (its PyPI wheels are built for CUDA torch)."""
    import torch

    if out_fmt != "xywh" or in_fmt not in ("xyxy", "xywh", "cxcywh"):
        raise ValueError(f"the stand-in converts xyxy / xywh / cxcywh to xywh only; got {in_fmt} -> {out_fmt}")
    if in_fmt == "xywh":
        return boxes.clone()
    if in_fmt == "cxcywh":
        cx, cy, w, h = boxes.unbind(-1)
        boxes = torch.stack((cx - 0.5 * w, cy - 0.5 * h, cx + 0.5 * w, cy + 0.5 * h), dim=-1)
    x1, y1, x2, y2 = boxes.unbind(-1)
    return torch.stack((x1, y1, x2 - x1, y2 - y1), dim=-1)


def torchvision_stand_in():
    """Make torchmetrics' MeanAveragePrecision usable without torchvision: a ``torchvision.ops`` module
    with :func:`torchvision_box_convert` (all torchmetrics' mean_ap takes from it) and its availability
    flag set.  Returns a function that undoes it; a no-op when torchvision imports."""
    import importlib
    import sys
    import types

    mean_ap = importlib.import_module("torchmetrics.detection.mean_ap")
    try:
        import torchvision.ops  # noqa: F401
        return lambda: None
    except (ImportError, RuntimeError):
        pass
    saved = {k: sys.modules.get(k) for k in ("torchvision", "torchvision.ops")}
    flag = mean_ap._TORCHVISION_AVAILABLE
    stand_in, ops = types.ModuleType("torchvision"), types.ModuleType("torchvision.ops")
    ops.box_convert = torchvision_box_convert
    stand_in.ops = ops
    sys.modules.update({"torchvision": stand_in, "torchvision.ops": ops})
    mean_ap._TORCHVISION_AVAILABLE = True

    def restore():
        mean_ap._TORCHVISION_AVAILABLE = flag
        for k, v in saved.items():
            if v is None:
                sys.modules.pop(k, None)
            else:
                sys.modules[k] = v

    return restore


# ----------------------------------------------------------------------- DeLong of a subset against all rows
def _placements_pairwise(score_pos, score_neg):
    """psi(x, y) = 1 if x > y, 1/2 if equal, for every (positive, negative) pair: each positive's
    mean over the negatives (V10) and each negative's mean over the positives (V01)."""
    psi = (score_pos[:, None] > score_neg[None, :]) + 0.5 * (score_pos[:, None] == score_neg[None, :])
    return psi.mean(axis=1), psi.mean(axis=0)


def delong_subset_variance(positive, scores, subset):
    """Variance of AUC(subset rows) - AUC(all rows) from DeLong's placements, pair by pair: each row's
    first-order share of the difference, its sample variance (n - 1) within each of the four strata
    (in the subset or not, by class) times the stratum's size, summed (strata of one row add nothing)."""
    positive = np.asarray(positive, dtype=bool)
    scores = np.asarray(scores, dtype=np.float64)
    inside = np.zeros(positive.shape[0], dtype=bool)
    inside[subset] = True
    v10_all, v01_all = _placements_pairwise(scores[positive], scores[~positive])
    v10_sub, v01_sub = _placements_pairwise(scores[positive & inside], scores[~positive & inside])
    share = np.empty(positive.shape[0])
    share[positive] = -v10_all / positive.sum()
    share[~positive] = -v01_all / (~positive).sum()
    share[positive & inside] += v10_sub / (positive & inside).sum()
    share[~positive & inside] += v01_sub / (~positive & inside).sum()
    total = 0.0
    for stratum in (positive & inside, ~positive & inside, positive & ~inside, ~positive & ~inside):
        if stratum.sum() > 1:
            total += stratum.sum() * np.var(share[stratum], ddof=1)
    return total


def slice_legend(lines: list[str]) -> dict[str, str]:
    """The legend below a slice table (``slices:`` then ``  shown  'full name'``, a long full name wrapped
    onto indented lines): each full name's shown text, read independently of the code under test."""
    import ast

    if "slices:" not in lines:
        return {}
    entries: list[list[str]] = []
    for line in lines[lines.index("slices:") + 1:]:
        if not line.startswith("  "):
            break
        if line.startswith("   "):  # a full name wrapped: its next piece
            entries[-1][1] += line.strip()
        else:
            entries.append([part.strip() for part in line.strip().split("  ", 1)])
    return {ast.literal_eval(full): shown for shown, full in entries}
