"""Per-slice intervals and comparisons (precall.stats.compare_slices) against the functions on each slice's rows."""

from __future__ import annotations

import functools
import itertools
import json
import math
import textwrap
import warnings

import numpy as np
import pytest

import oracles
import precall
from precall import stats
from precall._core.normal import isf as stats_normal_isf


def _data(n=900, seed=0):
    rng = np.random.default_rng(seed)
    g = rng.choice(["north", "south", "east", "west"], n, p=[0.4, 0.3, 0.2, 0.1])
    y = (rng.random(n) < 0.35).astype(int)
    shift = {"north": 1.5, "south": 1.0, "east": 0.6, "west": 0.1}
    s = np.round(y * np.vectorize(shift.get)(g) + rng.standard_normal(n), 2)  # ties
    return y, s, g


@pytest.fixture(scope="module")
def compared():
    y, s, g = _data()
    return y, s, g, stats.compare_slices(y, s, by=g, method="voc2010", n_resamples=300, random_state=7)


@pytest.mark.parametrize("stratified", [False, True])
@pytest.mark.parametrize("rest", [False, True])
def test_each_interval_is_bootstrap_ci_of_its_rows_with_the_documented_seed(compared, rest, stratified):
    """A slice's rows (and the rest's) are one stratum by default, each class its own with stratified=True."""
    y, s, g, c = compared
    if stratified:
        c = stats.compare_slices(y, s, by=g, method="voc2010", n_resamples=300, random_state=7, stratified=True)
    assert c.stratified is stratified and c.to_dict()["stratified"] is stratified
    assert ("stratified by class" in c.describe()) is stratified
    metric = functools.partial(precall.average_precision, method="voc2010")
    for i, name in enumerate(c.names):
        mask = (g != name) if rest else (g == name)
        ci = stats.bootstrap_ci(metric, y[mask], s[mask], n_resamples=300, stratified=stratified,
                                random_state=np.random.SeedSequence(7, spawn_key=(i, 1) if rest else (i,)))
        assert ci.stratified is stratified
        if not rest:
            assert (c.ap[i], c.ap_low[i], c.ap_high[i]) == (ci.estimate, ci.low, ci.high)
            own = ci
        else:
            own = stats.bootstrap_ci(metric, y[g == name], s[g == name], n_resamples=300, stratified=stratified,
                                     random_state=stats.slice_seed(7, i))
            d = own.replicates - ci.replicates
            pair = c.vs_reference[i]
            assert pair.ap_difference == own.estimate - ci.estimate
            assert (pair.ap_difference_low, pair.ap_difference_high) == _quantiles(d)
            # the p-value by the one rule of stats.bootstrap_tests: the percentile interval at level
            # 1 - p touches 0 (brute force over levels), not resolved below 1 / replicates
            levels = np.linspace(0.0005, 0.9995, 2000)
            excludes = [not (np.quantile(d, (1 - L) / 2) <= 0 <= np.quantile(d, (1 + L) / 2)) for L in levels]
            brute = min([1 - L for L, e in zip(levels, excludes) if e], default=1.0)
            assert pair.ap_p_value == pytest.approx(max(brute, 1 / d.size), abs=6e-4)


def test_roc_auc_intervals_and_tests_equal_delong_on_the_rows(compared):
    y, s, g, c = compared
    for i, name in enumerate(c.names):
        mask = g == name
        ci = stats.roc_auc_ci(y[mask], s[mask])
        assert (c.auc[i], c.auc_low[i], c.auc_high[i]) == (ci.estimate, ci.low, ci.high)
        t = stats.roc_auc_test_unpaired(y[mask], s[mask], y[~mask], s[~mask])
        pair = c.vs_reference[i]
        assert (pair.auc_difference, pair.auc_difference_low, pair.auc_difference_high, pair.auc_p_value) == (
            t.difference, t.low, t.high, t.p_value)
    for a, b in itertools.permutations(c.names, 2):
        t = stats.roc_auc_test_unpaired(y[g == a], s[g == a], y[g == b], s[g == b])
        pair = c.compare(a, b)
        assert (pair.auc_difference, pair.auc_p_value) == (t.difference, t.p_value)
        assert pair.ap_difference == c.ap[c.index(a)] - c.ap[c.index(b)]


def test_worst_first_and_holm(compared):
    y, s, g, c = compared
    assert [c.names[i] for i in c.ranked] == sorted(c.names, key=lambda n: c.ap[c.index(n)])
    assert c.names[c.ranked[0]] == "west"  # the weakest signal
    raw = np.array([p.auc_p_value for p in c.vs_reference])
    assert c.auc_p_holm.tolist() == _holm_oracle(raw).tolist()


def _holm_oracle(p):
    """Holm (1979) from the definition: reject in order while p_(k) <= alpha / (m - k + 1); the adjusted
    p-value is the smallest alpha that rejects the hypothesis."""
    m = len(p)
    out = []
    for i in range(m):
        order = sorted(range(m), key=lambda j: p[j])
        k = order.index(i)
        out.append(min(1.0, max((m - j) * p[order[j]] for j in range(k + 1))))
    return np.array(out)


@pytest.mark.parametrize("p", [[0.01, 0.04, 0.03, 0.005], [0.5, 0.5, 0.5], [1e-12, 0.2], [0.3], [0.02, 0.02, 0.9]])
def test_holm_equals_the_definition(p):
    assert stats.holm(p).tolist() == pytest.approx(_holm_oracle(p).tolist(), rel=0, abs=0)
    assert math.isnan(stats.holm([math.nan, 0.1])[0]) and stats.holm([math.nan, 0.1])[1] == 0.1


def test_undefined_slices_reported_not_ranked_and_min_support():
    rng = np.random.default_rng(3)
    g = np.repeat([0, 1, 2, 3], [200, 40, 1, 150])
    y = (rng.random(g.size) < 0.5).astype(int)
    y[g == 1] = 0  # no positives
    y[g == 3] = 1  # no negatives
    s = rng.random(g.size)
    with warnings.catch_warnings():
        warnings.simplefilter("error", precall.UndefinedMetricWarning)  # the policy is NaN here, quietly
        c = stats.compare_slices(y, s, by=g, n_resamples=50, min_support=10)
    assert math.isnan(c.ap[1]) and math.isnan(c.auc[1]) and math.isnan(c.auc[3]) and not math.isnan(c.ap[3])
    assert 1 not in c.ranked and 2 not in c.ranked  # no positives; below min_support
    assert math.isnan(c.ap_p_holm[1]) and math.isnan(c.auc_p_holm[3])
    text = c.to_text()
    assert max(map(len, text.splitlines())) <= 80 and "not ranked" in text
    d = json.loads(json.dumps(c.to_dict()))
    assert [row["slice"] for row in d["slices"]] == list(c.names)


def test_text_prints_an_undefined_difference_as_nan_never_plus_nan():
    """A slice whose reference has no negatives (the other slice is all positives): its ROC-AUC
    difference is undefined.  SliceComparison.to_text printed it ``+nan`` (a signed format of NaN), and
    SlicePair's text too; now ``nan`` as SlicedEvaluation.to_text prints an undefined number, and a
    defined difference keeps its sign."""
    rng = np.random.default_rng(0)
    ya = rng.integers(0, 2, 40)
    y = np.r_[ya, np.ones(30, dtype=int)]
    s = np.r_[rng.random(40) + 0.4 * ya, rng.random(30)]
    by = np.repeat(["a", "b"], [40, 30])
    c = stats.compare_slices(y, s, by=by, n_resamples=50)
    assert math.isnan(c.vs_reference[0].auc_difference) and not math.isnan(c.vs_reference[0].ap_difference)
    text, pair = c.to_text(), str(c.vs_reference[0])
    assert "+nan" not in text and "+nan" not in pair, (text, pair)
    row = next(line for line in text.splitlines() if line.startswith("a "))
    assert row.split()[-3:] == ["0.7903", "nan", "nan"] and row.split()[4] == "-0.1467", text
    assert "ROC-AUC nan [nan, nan]" in pair and "AP -0.1467" in pair
    assert "nan" in str(precall.evaluate(y, s, by=by, on_undefined="nan"))  # as the sliced evaluation prints it


def test_text_is_bounded_with_many_slices():
    rng = np.random.default_rng(4)
    g = rng.integers(0, 30, 3000)
    y = (rng.random(3000) < 0.5).astype(int)
    c = stats.compare_slices(y, rng.random(3000), by=g, n_resamples=20)
    lines = c.to_text(k=3).splitlines()
    # a title wrapped over two lines, the header, 3 worst, "...", 3 best, a blank line, then resamples, seeds
    # and design
    assert "more ranked slices" in lines[3 + 3] and lines[3 + 7] == "" and "resamples a slice" in lines[3 + 8]
    assert len(lines) == 3 + 8 + len(textwrap.wrap(c._footer(), 80))
    assert max(map(len, lines)) <= 80
    pd = pytest.importorskip("pandas")
    assert isinstance(c.to_frame(), pd.DataFrame) and len(c.to_frame()) == 30


@pytest.mark.parametrize("kw, exc, name", [
    ({"method": "nope"}, ValueError, "`method`"),
    ({"reference": "bogus"}, ValueError, "`reference`"),
    ({"level": 1.5}, ValueError, "`level`"),
    ({"level": float("nan")}, ValueError, "`level`"),
    ({"n_resamples": 1}, ValueError, "`n_resamples`"),
    ({"n_resamples": "100"}, TypeError, "`n_resamples`"),
    ({"min_support": -1}, ValueError, "`min_support`"),
    ({"random_state": -3}, ValueError, "`random_state`"),
    ({"by": "country"}, TypeError, "`by`"),
    ({"by": [0, 1]}, ValueError, "`by`"),
])
def test_bad_options_name_the_parameter(kw, exc, name):
    args = {"by": [0, 0, 1, 1], **kw}
    with pytest.raises(exc, match=name):
        stats.compare_slices([0, 1, 0, 1], [0.1, 0.8, 0.3, 0.6], **args)


@pytest.mark.parametrize("y_a, s_a", [([1], [0.5]), ([0], [0.5]), ([1, 1], [0.2, 0.4]), ([0, 1], [0.3, 0.6]),
                                      ([0, 0, 1], [0.1, 0.2, 0.3])])
def test_unpaired_delong_without_a_variance_is_nan_not_a_crash(y_a, s_a):
    """A sample with fewer than two positives or negatives (one row: n - 1 = 0 in Welch's df) gives NaN."""
    with pytest.warns(precall.UndefinedMetricWarning):
        t = stats.roc_auc_test_unpaired(y_a, s_a, [0, 1, 0, 1, 1], [0.1, 0.9, 0.3, 0.4, 0.7])
    assert math.isnan(t.p_value) and math.isnan(t.statistic) and math.isnan(t.low)
    t = stats.roc_auc_test_unpaired(y_a, s_a, [1, 0], [0.4, 0.5], on_undefined="nan")
    assert math.isnan(t.p_value)


def test_too_many_slices_refused_before_any_resample_with_how_to_ask_for_fewer(monkeypatch):
    """Each slice costs two bootstraps (its rows and the rest's): the number of slices is bounded."""
    from precall.stats import slices as stats_slices

    monkeypatch.setattr(stats_slices, "MAX_SLICES", 5)
    monkeypatch.setattr(stats_slices, "bootstrap_cis", lambda *a, **k: pytest.fail("resampled before the check"))
    rng = np.random.default_rng(0)
    y = (rng.random(60) < 0.5).astype(int)
    with pytest.raises(ValueError, match=r"number of slices.*\[0, 5\].*group rare values"):
        stats.compare_slices(y, rng.random(60), by=np.arange(60) % 6)


def test_progress_reports_the_fraction_of_slices_done_and_can_stop():
    y, s, g = _data(300)
    seen: list[float] = []
    c = stats.compare_slices(y, s, by=g, n_resamples=50, progress=seen.append)
    assert seen == sorted(seen) and seen[-1] == pytest.approx(1.0) and len(seen) >= 2 * len(c.names)
    plain = stats.compare_slices(y, s, by=g, n_resamples=50)
    assert np.array_equal(c.ap_low, plain.ap_low) and c.vs_reference == plain.vs_rest  # the same draws

    class Stop(Exception):
        pass

    def stop(done: float) -> None:
        if done > 0.25:
            raise Stop

    with pytest.raises(Stop):
        stats.compare_slices(y, s, by=g, n_resamples=50, progress=stop)
    with pytest.raises(TypeError, match="`progress`"):
        stats.compare_slices(y, s, by=g, n_resamples=50, progress=1)


def _quantiles(d):
    """The 95% percentile bounds, as compare_slices computes them (undefined replicates left out)."""
    return tuple(np.quantile(d[~np.isnan(d)], [(1 - 0.95) / 2, (1 + 0.95) / 2]))


# ---------------------------------------------------------------------------
# reference="overall": each slice against every row (the slice among them)
@pytest.fixture(scope="module")
def versus_all():
    y, s, g = _data()
    return y, s, g, stats.compare_slices(y, s, by=g, method="voc2010", n_resamples=300, random_state=7,
                                         reference="overall")


def test_overall_keeps_the_slices_intervals_and_names_the_reference(compared, versus_all):
    *_, rest = compared
    *_, overall = versus_all
    for field in ("ap", "ap_low", "ap_high", "auc", "auc_low", "auc_high", "n_samples", "n_pos", "ranked"):
        assert np.array_equal(getattr(rest, field), getattr(overall, field), equal_nan=True), field
    assert {p.b for p in overall.vs_reference} == {"overall"} and overall.reference == "overall"
    assert {(p.ap_method, p.auc_method) for p in overall.vs_reference} == {("bootstrap-joint", "delong-subset")}
    assert {(p.ap_method, p.auc_method) for p in rest.vs_reference} == {("bootstrap-independent", "delong-unpaired")}
    with pytest.raises(AttributeError, match="vs_reference"):
        overall.vs_rest
    d = overall.to_dict()
    assert d["reference"] == "overall" and "AP - overall" in d["slices"][0] and "AUC - overall" in d["slices"][0]
    assert "vs all rows" in " ".join(overall.to_text().split())


def test_overall_points_are_the_metrics_on_the_slice_minus_on_all_rows(versus_all):
    y, s, g, c = versus_all
    ap_all = precall.average_precision(y, s, method="voc2010")
    auc_all = precall.roc_auc(y, s)
    for i, name in enumerate(c.names):
        m = g == name
        pair = c.vs_reference[i]
        ap = precall.average_precision(y[m], s[m], method="voc2010")
        auc = precall.roc_auc(y[m], s[m])
        assert (pair.ap_difference, pair.ap_ratio) == (ap - ap_all, ap / ap_all)  # bit for bit
        assert (pair.auc_difference, pair.auc_ratio) == (auc - auc_all, auc / auc_all)
        assert pair.ap_difference_low < pair.ap_difference < pair.ap_difference_high
        assert pair.auc_ratio_low < pair.auc_ratio < pair.auc_ratio_high


def test_overall_points_do_not_depend_on_the_order_of_the_rows(versus_all):
    y, s, g, c = versus_all
    perm = np.random.default_rng(1).permutation(y.shape[0])
    p = stats.compare_slices(y[perm], s[perm], by=g[perm], method="voc2010", n_resamples=300, random_state=7,
                             reference="overall")
    assert p.names == c.names and np.array_equal(p.ap, c.ap) and np.array_equal(p.auc, c.auc)
    for a, b in zip(p.vs_reference, c.vs_reference):
        assert (a.ap_difference, a.ap_ratio, a.auc_difference, a.auc_ratio) == (
            b.ap_difference, b.ap_ratio, b.auc_difference, b.auc_ratio)
        # DeLong's variance sums the rows in another order: the same to rounding
        assert (a.auc_difference_low, a.auc_difference_high, a.auc_p_value) == pytest.approx(
            (b.auc_difference_low, b.auc_difference_high, b.auc_p_value), rel=1e-9)


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("n", [60, 40_000])  # 40,000 continuous scores: the cells exceed MAX_CELLS (score blocks)
def test_a_slice_of_every_row_differs_from_all_rows_by_exactly_zero(n, weighted):
    rng = np.random.default_rng(2)
    y = (rng.random(n) < 0.3).astype(int)
    s = y + rng.standard_normal(n)
    w = rng.integers(1, 4, n).astype(float) if weighted else None
    c = stats.compare_slices(y, s, by=np.zeros(n), sample_weight=w, n_resamples=50, reference="overall")
    (pair,) = c.vs_reference
    assert (pair.ap_difference, pair.ap_difference_low, pair.ap_difference_high, pair.ap_p_value) == (0, 0, 0, 1)
    assert (pair.auc_difference, pair.auc_difference_low, pair.auc_difference_high, pair.auc_p_value) == (0, 0, 0, 1)
    assert (pair.ap_ratio, pair.ap_ratio_low, pair.ap_ratio_high) == (1, 1, 1)
    assert (pair.auc_ratio, pair.auc_ratio_low, pair.auc_ratio_high) == (1, 1, 1)


def test_overall_roc_auc_variance_is_delong_of_the_shared_cases_pair_by_pair(versus_all):
    """The ROC-AUC interval and p-value against all rows: the difference's DeLong variance, computed
    here from every (positive, negative) pair of the slice and of all rows (oracles.py), normal z."""
    y, s, g, c = versus_all
    z = stats_normal_isf((1 - 0.95) / 2)
    for i, name in enumerate(c.names):
        pair = c.vs_reference[i]
        sd = math.sqrt(oracles.delong_subset_variance(y == 1, s, np.flatnonzero(g == name)))
        assert (pair.auc_difference_low, pair.auc_difference_high) == pytest.approx(
            (pair.auc_difference - z * sd, pair.auc_difference + z * sd), rel=1e-10)
        assert pair.auc_p_value == pytest.approx(math.erfc(abs(pair.auc_difference) / sd / math.sqrt(2)), rel=1e-9)


def test_stratified_variance_with_the_classes_as_strata_is_delongs_variance():
    from precall.stats.delong import row_placements, stratified_variance, subset_delong

    y, s, _ = _data(400, seed=5)
    positive = y == 1
    place, auc = row_placements(positive, s)
    terms = np.where(positive, place / positive.sum(), place / (~positive).sum())
    assert stratified_variance(terms, positive.astype(np.int64)) == pytest.approx(stats.roc_auc_variance(y, s),
                                                                                  rel=1e-12)
    assert auc == precall.roc_auc(y, s)
    assert subset_delong(positive, s, np.arange(400), place, auc)[1:] == (0.0, 0.0, 0.0)


def test_overall_delong_agrees_with_the_joint_bootstrap_and_is_narrower_than_unpaired():
    """Two designs for the ROC-AUC against all rows on the same data: DeLong's variance of the
    difference (unweighted) and the joint bootstrap (weights of one: the rows path).  Their interval
    widths agree within 12%; the unpaired test's (the slice against all rows as if independent) is
    wider by more than that for a slice of 30% of the rows."""
    rng = np.random.default_rng(8)
    n = 3000
    g = rng.choice(["a", "b"], n, p=[0.3, 0.7])
    y = (rng.random(n) < 0.3).astype(int)
    s = np.round(y * 1.2 + rng.standard_normal(n), 3)
    delong = stats.compare_slices(y, s, by=g, n_resamples=20, reference="overall")
    boot = stats.compare_slices(y, s, by=g, n_resamples=1500, reference="overall", sample_weight=np.ones(n))
    counts = stats.compare_slices(y, s, by=g, n_resamples=1500, reference="overall")
    for i, name in enumerate(delong.names):
        d, b, k = delong.vs_reference[i], boot.vs_reference[i], counts.vs_reference[i]
        width = d.auc_difference_high - d.auc_difference_low
        assert width / (b.auc_difference_high - b.auc_difference_low) == pytest.approx(1, abs=0.12), name
        # the AP's joint bootstrap drawn as counts of cells (unweighted) and as rows (weights of one)
        assert (k.ap_difference_high - k.ap_difference_low) / (b.ap_difference_high - b.ap_difference_low) \
            == pytest.approx(1, abs=0.12), name
        m = g == name
        unpaired = stats.roc_auc_test_unpaired(y[m], s[m], y, s)
        if name == "a":
            assert (unpaired.high - unpaired.low) / width > 1.12


@pytest.mark.parametrize("stratified", [False, True])
def test_overall_weighted_replicates_by_hand_with_the_documented_seed(stratified):
    """With weights, slice i against all rows is one bootstrap seeded slice_seed(random_state, i, rest=True)
    that draws the slice's rows and then the rest's rows (numpy's integers, one block; with stratified=True
    class by class): the slice's replicate is its draws, the overall one every draw.  Here it is by hand,
    each replicate's AP and ROC-AUC computed by precall on the drawn rows with their weights."""
    y, s, g = _data(300, seed=3)
    w = np.random.default_rng(3).integers(0, 4, 300).astype(float)  # zero weights are set aside
    B = 120
    c = stats.compare_slices(y, s, by=g, sample_weight=w, n_resamples=B, random_state=11, reference="overall",
                             stratified=stratified)
    keep = w > 0
    y, s, g, w = y[keep], s[keep], g[keep], w[keep]
    classes = [y == 0, y == 1] if stratified else [np.ones_like(y, dtype=bool)]
    for i, name in enumerate(c.names):
        inside = g == name
        strata = [np.flatnonzero(inside & k) for k in classes] + [np.flatnonzero(~inside & k) for k in classes]
        strata = [r for r in strata if r.size]
        n_own = sum(1 for r in strata if inside[r[0]])
        rng = np.random.default_rng(stats.slice_seed(11, i, rest=True))
        local = [rng.integers(0, r.size, (B, r.size)) for r in strata]
        reps = {"ap": ([], []), "auc": ([], [])}
        for b in range(B):
            drawn = [r[loc[b]] for r, loc in zip(strata, local)]
            for part, rows in ((0, np.concatenate(drawn[:n_own])), (1, np.concatenate(drawn))):
                reps["ap"][part].append(precall.average_precision(y[rows], s[rows], sample_weight=w[rows],
                                                                  on_undefined="nan"))
                reps["auc"][part].append(precall.roc_auc(y[rows], s[rows], sample_weight=w[rows], on_undefined="nan"))
        pair = c.vs_reference[i]
        for key, low, high in (("ap", pair.ap_difference_low, pair.ap_difference_high),
                               ("auc", pair.auc_difference_low, pair.auc_difference_high)):
            d = np.array(reps[key][0]) - np.array(reps[key][1])
            assert (low, high) == pytest.approx(_quantiles(d), abs=1e-12), (name, key)
        assert (pair.ap_method, pair.auc_method) == ("bootstrap-joint", "bootstrap-joint")


# ---------------------------------------------------------------------------
# sample_weight
@pytest.mark.parametrize("reference", ["rest", "overall"])
def test_weighted_points_are_the_weighted_metrics_and_scikit_learns(reference):
    sklearn_metrics = pytest.importorskip("sklearn.metrics")
    y, s, g = _data(600, seed=4)
    w = np.random.default_rng(4).gamma(2.0, 1.0, 600)
    w[::17] = 0.0
    c = stats.compare_slices(y, s, by=g, sample_weight=w, n_resamples=50, reference=reference)
    assert c.weighted and "weighted rows" in c.to_text()
    for i, name in enumerate(c.names):
        m = g == name
        assert c.ap[i] == precall.average_precision(y[m], s[m], sample_weight=w[m])
        assert c.auc[i] == precall.roc_auc(y[m], s[m], sample_weight=w[m])
        assert c.n_pos[i] == pytest.approx(w[m][y[m] == 1].sum(), rel=1e-12) and c.n_samples[i] == m.sum()
        assert c.ap[i] == pytest.approx(sklearn_metrics.average_precision_score(y[m], s[m], sample_weight=w[m]),
                                        rel=1e-12)
        assert c.auc[i] == pytest.approx(sklearn_metrics.roc_auc_score(y[m], s[m], sample_weight=w[m]), rel=1e-12)
        other = ~m if reference == "rest" else np.ones_like(m)
        pair = c.vs_reference[i]
        assert pair.ap_difference == c.ap[i] - precall.average_precision(y[other], s[other], sample_weight=w[other])
        assert pair.auc_difference == c.auc[i] - precall.roc_auc(y[other], s[other], sample_weight=w[other])
        assert pair.auc_method.startswith("bootstrap")


def test_weighted_slice_intervals_are_the_weighted_bootstrap_of_its_rows():
    y, s, g = _data(500, seed=6)
    w = np.random.default_rng(6).integers(0, 3, 500).astype(float)
    c = stats.compare_slices(y, s, by=g, sample_weight=w, n_resamples=150, random_state=5)
    for i, name in enumerate(c.names):
        m, r = g == name, g != name
        seed, rest_seed = stats.slice_seed(5, i), stats.slice_seed(5, i, rest=True)
        ap, auc = stats.bootstrap_cis([precall.average_precision, precall.roc_auc], y[m], s[m], sample_weight=w[m],
                                      n_resamples=150, random_state=seed, stratified=False)
        assert (c.ap_low[i], c.ap_high[i], c.auc_low[i], c.auc_high[i]) == (ap.low, ap.high, auc.low, auc.high)
        alone = stats.bootstrap_ci(precall.average_precision, y[m], s[m], sample_weight=w[m], n_resamples=150,
                                   random_state=seed, stratified=False)
        assert (alone.low, alone.high) == (ap.low, ap.high)  # the AP interval whatever else is bootstrapped
        rest_ap, rest_auc = stats.bootstrap_cis([precall.average_precision, precall.roc_auc], y[r], s[r],
                                                sample_weight=w[r], n_resamples=150, random_state=rest_seed,
                                                stratified=False)
        pair = c.vs_reference[i]
        d = auc.replicates - rest_auc.replicates
        assert (pair.auc_difference_low, pair.auc_difference_high) == _quantiles(d)
        d = ap.replicates - rest_ap.replicates
        assert (pair.ap_difference_low, pair.ap_difference_high) == _quantiles(d)
    a, b = c.names[:2]
    pair = c.compare(a, b)
    assert pair.auc_method == "bootstrap-independent"
    assert pair.auc_difference == c.auc[0] - c.auc[1]


@pytest.mark.parametrize("reference", ["rest", "overall"])
def test_integer_weights_give_the_points_of_repeated_rows(reference):
    y, s, g = _data(400, seed=9)
    k = np.random.default_rng(9).integers(0, 4, 400)  # 0: the row left out
    weighted = stats.compare_slices(y, s, by=g, sample_weight=k, n_resamples=30, reference=reference)
    repeated = stats.compare_slices(np.repeat(y, k), np.repeat(s, k), by=np.repeat(g, k), n_resamples=30,
                                    reference=reference)
    assert weighted.names == repeated.names
    assert np.array_equal(weighted.n_pos, repeated.n_pos)
    assert weighted.ap == pytest.approx(repeated.ap, rel=1e-12)
    assert weighted.auc == pytest.approx(repeated.auc, rel=1e-12)
    for a, b in zip(weighted.vs_reference, repeated.vs_reference):
        assert (a.ap_difference, a.ap_ratio, a.auc_difference, a.auc_ratio) == pytest.approx(
            (b.ap_difference, b.ap_ratio, b.auc_difference, b.auc_ratio), rel=1e-12, abs=1e-14)


@pytest.mark.parametrize("reference", ["rest", "overall"])
def test_zero_weights_set_rows_aside(reference):
    """Zero-weight rows change nothing but the count of rows given; a slice of zero-weight rows only
    is reported (its name and rows), undefined and not ranked."""
    y, s, g = _data(500, seed=10)
    w = np.random.default_rng(10).integers(1, 3, 500).astype(float)
    y2, s2, g2 = np.r_[y, 1, 0, 1], np.r_[s, 0.5, 0.1, 0.3], np.concatenate([g, ["north", "zzz", "zzz"]])
    c = stats.compare_slices(y2, s2, by=g2, sample_weight=np.r_[w, 0, 0, 0], n_resamples=40, reference=reference)
    plain = stats.compare_slices(y, s, by=g, sample_weight=w, n_resamples=40, reference=reference)
    assert c.names == (*plain.names, "zzz")
    for field in ("ap", "ap_low", "ap_high", "auc", "auc_low", "auc_high", "ranked"):
        assert np.array_equal(getattr(c, field)[:len(plain.names)] if field != "ranked" else c.ranked,
                              getattr(plain, field)), field
    assert c.vs_reference[:-1] == plain.vs_reference
    north = c.index("north")
    assert c.n_samples[north] == plain.n_samples[north] + 1 and c.n_samples[-1] == 2
    assert math.isnan(c.ap[-1]) and len(c.names) - 1 not in c.ranked


@pytest.mark.parametrize("kw, match", [
    ({"sample_weight": [1, -1, 1, 1]}, r"`sample_weight` must be non-negative"),
    ({"sample_weight": [1, 1, 1]}, r"`sample_weight` must have one weight per sample"),
    ({"reference": "bogus"}, r"`reference` must be one of 'rest', 'overall'; got 'bogus'"),
    ({"reference": "all"}, r"`reference` must be one of 'rest', 'overall'"),
])
def test_bad_weights_and_reference_say_what_to_pass(kw, match):
    with pytest.raises(ValueError, match=match):
        stats.compare_slices([0, 1, 0, 1], [0.1, 0.8, 0.3, 0.6], by=[0, 0, 1, 1], **kw)


@pytest.mark.parametrize("reference", ["rest", "overall"])
def test_to_csv_reads_back_as_to_frame(tmp_path, reference):
    """SliceComparison.to_csv: a column per by column with the slice's value, then to_frame's columns
    (NaN empty), written to a path or returned; pandas reads it back as to_frame."""
    pd = pytest.importorskip("pandas")
    y, s, g = _data(400, seed=9)
    day = np.where(np.arange(400) % 2 == 0, "mon", "tue")
    y[(g == "west") & (day == "tue")] = 0  # a slice without positives: NaN numbers, empty cells
    c = stats.compare_slices(y, s, by={"region": g, "day": day}, n_resamples=40, reference=reference)
    text = c.to_csv()
    path = tmp_path / "c.csv"
    assert c.to_csv(path) is None and path.read_text(encoding="utf-8") == text
    assert "nan" not in text.lower()
    got = pd.read_csv(path, index_col=["region", "day"])
    want = c.to_frame()
    assert list(got.columns) == list(want.columns) and list(got.index) == list(want.index)
    for column in want.columns:
        if column == "slice":
            assert got[column].tolist() == want[column].tolist()
        else:
            np.testing.assert_array_equal(got[column].to_numpy(dtype=float), want[column].to_numpy(dtype=float))


@pytest.mark.parametrize("reference", ["rest", "overall"])
def test_a_slice_with_one_positive_has_no_ap_interval_or_comparison(reference):
    """A slice whose resamples only repeat its one positive: its AP interval and the AP comparisons
    drawn from the same replicates are NaN (quietly, as its DeLong interval), not zero-width."""
    rng = np.random.default_rng(5)
    g = np.repeat([0, 1, 2], [120, 40, 120])
    y = (rng.random(g.size) < 0.4).astype(int)
    y[g == 1] = 0
    y[np.flatnonzero(g == 1)[3]] = 1  # one positive among 40 rows
    s = rng.random(g.size) + 0.5 * y
    with warnings.catch_warnings():
        warnings.simplefilter("error", precall.UndefinedMetricWarning)
        c = stats.compare_slices(y, s, by=g, n_resamples=50, reference=reference)
    assert not math.isnan(c.ap[1]) and math.isnan(c.ap_low[1]) and math.isnan(c.ap_high[1])
    assert math.isnan(c.auc_low[1])  # DeLong's, as before
    pair = c.vs_reference[1]
    assert math.isnan(pair.ap_difference_low) and math.isnan(pair.ap_difference_high) and math.isnan(pair.ap_p_value)
    for i in (0, 2):
        assert c.ap_low[i] < c.ap[i] < c.ap_high[i] and not math.isnan(c.vs_reference[i].ap_p_value)
