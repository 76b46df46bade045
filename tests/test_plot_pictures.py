"""The pictures of issue 16 and the user strings of issue 15, read back from the drawn
artists (line data, legend texts, fill_between paths) and compared with the API's numbers."""

from __future__ import annotations

import csv
import functools
import io
import logging
import warnings

import numpy as np
import pytest

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

import precall  # noqa: E402
from precall import plot, stats  # noqa: E402
from precall.cli import main  # noqa: E402


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def _legend(ax):
    return [t.get_text() for t in ax.get_legend().get_texts()]


def _line(ax, startswith):
    return next(line for line in ax.get_lines() if line.get_label().startswith(startswith))


def _fill(ax, startswith):
    return next(c for c in ax.collections if c.get_label().startswith(startswith))


def _data(n, seed=3, prevalence=0.2, shift=1.0):
    rng = np.random.default_rng(seed)
    y = (rng.random(n) < prevalence).astype(int)
    return y, rng.normal(0, 1, n) + shift * y


# ------------------------------------------------------------------ thinning
def _step_distance(x, y, kept):
    """Distance of every vertex of the full steps-post curve to the L-shaped piece of the thinned
    curve between the kept vertices around it (an upper bound of the distance to the thinned curve)."""
    seg = np.searchsorted(kept, np.arange(x.size), side="right") - 1
    a = kept[seg]
    b = kept[np.minimum(seg + 1, kept.size - 1)]
    # steps-post from (xa, ya) to (xb, yb): horizontal at ya to xb, then vertical to yb
    x0, x1 = np.minimum(x[a], x[b]), np.maximum(x[a], x[b])
    dh = np.hypot(np.clip(x, x0, x1) - x, y[a] - y)
    y0, y1 = np.minimum(y[a], y[b]), np.maximum(y[a], y[b])
    dv = np.hypot(x[b] - x, np.clip(y, y0, y1) - y)
    return np.minimum(dh, dv)


def test_thin_keeps_every_point_within_a_cell_diagonal():
    y, s = _data(300_000)
    curve = precall.precision_recall_curve(y, s)
    kept, cell = plot.thin(curve.recall, curve.precision, steps=True)
    assert kept.size <= plot.THIN_BUDGET < curve.recall.size
    assert kept[0] == 0 and kept[-1] == curve.recall.size - 1
    d = _step_distance(curve.recall, curve.precision, kept)
    assert d.max() <= cell * np.sqrt(2) + 1e-12 and d.max() < 1e-3
    # short curves are drawn whole
    idx, cell = plot.thin(np.arange(10.0), np.arange(10.0))
    assert cell == 0 and np.array_equal(idx, np.arange(10))


def test_thin_ends_on_curves_with_undefined_values(tmp_path, capsys):
    """A class without positives has recall 0 / 0 = NaN at every threshold: NaN != NaN made every vertex a
    cell of its own, and ``thin`` doubled its cell for ever (``precall report`` of three class columns,
    one without rows, never finished).  NaN vertices are one cell; what alternates with them is strided."""
    x = np.linspace(0.0, 1.0, 20_000)
    for y in (np.full(x.size, np.nan), np.where(np.arange(x.size) % 2, np.nan, 0.5),
              np.where(np.arange(x.size) % 3 == 0, np.inf, x)):
        kept, _ = plot.thin(x, y, budget=500)
        assert 2 <= kept.size <= 500 and kept[0] == 0 and kept[-1] == x.size - 1
        assert np.all(np.diff(kept) > 0)
    rng = np.random.default_rng(0)
    labels = rng.choice(["a", "b"], 20_000)
    rows = "".join(f"{c},{p:.6f},{q:.6f},{r:.6f}\n" for c, (p, q, r) in zip(labels, rng.random((20_000, 3))))
    path = tmp_path / "absent.csv"
    path.write_text("y,a,b,c\n" + rows)
    out = tmp_path / "absent.html"
    assert main(["report", str(path), "--label", "y", "--class-columns", "a,b,c", "-o", str(out)]) == 0
    assert out.stat().st_size > 0 and "'c'" in capsys.readouterr().err


def test_thin_polyline_roc():
    y, s = _data(300_000, seed=4)
    roc = precall.roc_curve(y, s, drop_intermediate=False)
    kept, cell = plot.thin(roc.fpr, roc.tpr)
    assert kept.size <= plot.THIN_BUDGET
    # every full vertex lies within a cell diagonal of the segment of the thinned polyline around it
    seg = np.clip(np.searchsorted(kept, np.arange(roc.fpr.size), side="right") - 1, 0, kept.size - 2)
    a, b = kept[seg], kept[seg + 1]
    p = np.c_[roc.fpr, roc.tpr]
    pa, pb = p[a], p[b]
    d = pb - pa
    t = np.clip(np.einsum("ij,ij->i", p - pa, d) / np.maximum(np.einsum("ij,ij->i", d, d), 1e-300), 0, 1)
    dist = np.linalg.norm(p - (pa + t[:, None] * d), axis=1)
    assert dist.max() <= cell * np.sqrt(2) + 1e-12 < 1e-3 + 1e-12


def test_a_large_curve_is_drawn_thinned_and_quoted_from_the_full_table():
    y, s = _data(200_000, seed=5)
    ax = plot.pr_curve(y, s, label="m", envelope=True)
    line = _line(ax, "m (AP step")
    full = precall.precision_recall_curve(y, s)
    assert len(line.get_xdata()) <= plot.THIN_BUDGET < full.recall.size
    # the drawn points are points of the full curve
    pairs = set(zip(full.recall.tolist(), full.precision.tolist()))
    assert all(pt in pairs for pt in zip(line.get_xdata().tolist(), line.get_ydata().tolist()))
    assert line.get_label() == f"m (AP step = {precall.average_precision(y, s):.3f})"
    ax = plot.roc_curve(y, s, label="m")
    assert len(_line(ax, "m (AUC").get_xdata()) <= plot.THIN_BUDGET
    assert _line(ax, "m (AUC").get_label() == f"m (AUC = {precall.roc_auc(y, s):.3f})"


def test_report_of_a_million_rows_is_small(tmp_path):
    y, s = _data(1_000_000, seed=6)
    other = s + np.random.default_rng(7).normal(0, 1, s.size)
    text = precall.report.html_report(y, {"a": s, "b": other})
    assert len(text.encode()) < 5_000_000  # 189 KB; main wrote about 45 MB
    ev = precall.evaluate(y, s)
    assert f"{ev.average_precision['step']:.4f}" in text and f"{ev.roc_auc:.4f}" in text


# ------------------------------------------------------------------ intervals and bands
def test_roc_band_and_delong_interval_in_the_legend():
    y, s = _data(2000, seed=8)
    ax = plot.roc_curve(y, s, label="m", ci=True)
    ci = stats.roc_auc_ci(y, s)
    assert f"m (AUC = {ci.estimate:.3f} [{ci.low:.3f}, {ci.high:.3f}])" in _legend(ax)
    band = _fill(ax, "95% band")
    x = band.get_paths()[0].vertices[:, 0]
    direct = plot.roc_band(precall.threshold_table(y, s))
    np.testing.assert_allclose(np.sort(np.unique(x)), np.unique(direct.x))
    assert (direct.low <= direct.high).all()
    # the curve lies inside its band nearly everywhere (pointwise 95%)
    roc = precall.roc_curve(y, s)
    tpr = np.interp(direct.x, roc.fpr, roc.tpr)
    assert np.mean((direct.low - 1e-9 <= tpr) & (tpr <= direct.high + 1e-9)) > 0.9
    assert 0.005 < np.mean(direct.high - direct.low) < 0.2


def test_band_matches_a_row_bootstrap():
    """Counts over blocks = the stratified bootstrap of rows: the band's width agrees with a
    direct row bootstrap of TPR at FPR 0.2 within Monte Carlo error."""
    y, s = _data(3000, seed=9)
    band = plot.roc_band(precall.threshold_table(y, s), n_resamples=400, random_state=1)
    rng = np.random.default_rng(2)
    pos, neg = s[y == 1], s[y == 0]
    tprs = []
    for _ in range(400):
        p = rng.choice(pos, pos.size)
        q = rng.choice(neg, neg.size)
        roc = precall.roc_curve(np.r_[np.ones(p.size), np.zeros(q.size)], np.r_[p, q])
        tprs.append(np.interp(0.2, roc.fpr, roc.tpr))
    low, high = np.percentile(tprs, [2.5, 97.5])
    i = int(np.argmin(abs(band.x - 0.2)))
    assert band.low[i] == pytest.approx(low, abs=0.02) and band.high[i] == pytest.approx(high, abs=0.02)


def test_pr_band_and_bootstrap_interval_in_the_legend():
    y, s = _data(1500, seed=10)
    ax = plot.pr_curve(y, s, label="m", ci=True)
    ci = stats.bootstrap_ci(functools.partial(precall.average_precision), y, s, n_resamples=stats.DEFAULT_RESAMPLES,
                            random_state=0, resample="counts")
    assert f"m (AP step = {ci.estimate:.3f} [{ci.low:.3f}, {ci.high:.3f}])" in _legend(ax)
    band = plot.pr_band(precall.threshold_table(y, s))
    x, _ = _fill(ax, "95% band").get_paths()[0].vertices.T
    assert set(np.round(x, 12)) <= set(np.round(band.x, 12))
    ok = np.isfinite(band.low)
    assert ok.sum() >= 95 and (band.low[ok] <= band.high[ok]).all()


def test_band_as_counts_needs_whole_counts_and_says_to_give_the_rows():
    y, s = _data(200, seed=11)
    w = np.full(y.size, 0.5)
    with pytest.raises(ValueError, match="whole.*`rows`"):
        plot.pr_band(precall.threshold_table(y, s, sample_weight=w))


def test_band_of_fractional_weights_is_the_weighted_row_bootstrap():
    """Weights that are not whole: the plot draws the band of the weighted rows (each class's
    rows resampled, a drawn row counting its weight, as the intervals draw them); its width
    agrees with a direct weighted row bootstrap of TPR at FPR 0.2 within Monte Carlo error."""
    y, s = _data(3000, seed=9)
    w = np.random.default_rng(4).random(y.size) * 2 + 0.01
    table = precall.threshold_table(y, s, sample_weight=w)
    band = plot.roc_band(table, n_resamples=400, random_state=1, rows=(s, y == 1, w))
    assert band.resample == "rows" and band.n_blocks > 1000
    rng = np.random.default_rng(2)
    pos, neg = np.flatnonzero(y == 1), np.flatnonzero(y == 0)
    tprs = []
    for _ in range(400):
        rows = np.r_[rng.choice(pos, pos.size), rng.choice(neg, neg.size)]
        roc = precall.roc_curve(y[rows], s[rows], sample_weight=w[rows])
        tprs.append(np.interp(0.2, roc.fpr, roc.tpr))
    low, high = np.percentile(tprs, [2.5, 97.5])
    i = int(np.argmin(abs(band.x - 0.2)))
    assert band.low[i] == pytest.approx(low, abs=0.02) and band.high[i] == pytest.approx(high, abs=0.02)
    # what pr_curve / roc_curve draw with the weights: these bands, no error
    ax = plot.roc_curve(y, s, sample_weight=w, label="m", ci=True)
    x, _ = _fill(ax, "95% band").get_paths()[0].vertices.T
    assert set(np.round(x, 12)) <= set(np.round(band.x, 12))
    ax = plot.pr_curve(y, s, sample_weight=w, label="m", ci=True)
    pr = plot.pr_band(table, rows=(s, y == 1, w))
    assert pr.resample == "rows" and np.isfinite(pr.low).sum() >= 95
    with pytest.raises(ValueError, match="not the rows"):
        plot.pr_band(table, rows=(s[:-1], y[:-1] == 1, w[:-1]))


def test_roc_legend_interval_of_several_models():
    y, s = _data(800, seed=12)
    t = s + np.random.default_rng(1).normal(0, 1, s.size)
    ax = plot.roc_curve(y, {"a": s, "b": t}, ci=True)
    for name, scores in (("a", s), ("b", t)):
        ci = stats.roc_auc_ci(y, scores)
        assert f"{name} (AUC = {ci.estimate:.3f} [{ci.low:.3f}, {ci.high:.3f}])" in _legend(ax)


# ------------------------------------------------------------------ operating points, legend, labels
def test_best_f1_and_operating_points_are_marked_with_their_threshold():
    y, s = _data(500, seed=13)
    ax = plot.pr_curve(y, s, label="m", best_f1=True, points=[("recall", 0.8), ("threshold", 0.5)])
    f1 = precall.evaluate(y, s).best_f1
    table = precall.threshold_table(y, s)
    mark = _line(ax, "m: best F1")
    assert mark.get_label() == f"m: best F1 {f1.f1:.3f} (score \u2265 {f1.threshold:.4g})"
    op = table.operating_point(threshold=f1.threshold)
    assert (mark.get_xdata()[0], mark.get_ydata()[0]) == (op.recall, op.precision)
    at = table.operating_point(recall=0.8)
    mark = _line(ax, "m: recall 0.8")
    assert mark.get_label() == f"m: recall 0.8 (score \u2265 {at.threshold:.4g})"
    assert (mark.get_xdata()[0], mark.get_ydata()[0]) == (at.recall, at.precision)
    ax = plot.roc_curve(y, s, label="m", best_f1=True)
    mark = _line(ax, "m: best F1")
    assert (mark.get_xdata()[0], mark.get_ydata()[0]) == (op.fpr, op.recall)


def test_legend_sits_below_the_axes():
    y, s = _data(500, seed=14)
    for ax in (plot.pr_curve(y, s, iso_f1=True), plot.roc_curve(y, s)):
        ax.figure.canvas.draw()
        legend = ax.get_legend().get_window_extent()
        axes = ax.get_window_extent()
        assert legend.y1 <= axes.y0  # entirely under the data area


def test_series_name_is_the_model_name_and_labels_name_the_positive_label():
    pd = pytest.importorskip("pandas")
    y, s = _data(300, seed=15)
    ax = plot.pr_curve(pd.Series(y), pd.Series(s, name="gbm"))
    assert _legend(ax)[0].startswith("gbm (AP step")
    ax = plot.roc_curve(np.where(y == 1, "spam", "ham"), pd.Series(s, name="gbm"), pos_label="spam")
    assert _legend(ax)[1].startswith("gbm (AUC")
    assert ax.get_xlabel() == "False Positive Rate (Positive label: spam)"
    assert ax.get_ylabel() == "True Positive Rate (Positive label: spam)"


def test_envelope_is_dashed_and_ends_at_the_last_recall_reached():
    # detection-like: a positive no threshold reaches (n_pos > tp[-1]): voc2010's envelope is 0 past
    # the last recall; the drawn envelope stops there instead of dropping to 0 as a vertical line
    table = precall.ThresholdTable(np.array([0.9, 0.8, 0.7]), np.array([1, 1, 2]), np.array([0, 1, 1]),
                                   n_pos=4, n_neg=5)
    _, ax = plt.subplots()
    plot.draw_pr(ax, table, label="m", envelope=True)
    env = _line(ax, "m envelope")
    r, p = env.get_xdata(), env.get_ydata()
    assert r[-1] == pytest.approx(0.5) and (p > 0).all()
    assert np.sum(np.diff(r) * p[1:]) == pytest.approx(table.average_precision(method="voc2010"), abs=1e-12)
    assert env.get_linestyle() != "-" and env.get_zorder() < _line(ax, "m (AP step").get_zorder()


# ------------------------------------------------------------------ issue 15: user strings
def test_mathtext_in_a_label_or_title_is_drawn_as_written(tmp_path, capsys, caplog):
    y, s = _data(200, seed=16)
    ax = plot.pr_curve(y, s, label="$\\foo$")
    ax.figure.savefig(io.BytesIO(), format="png")  # no ValueError from mathtext
    assert _legend(ax)[0].startswith("\\$\\foo\\$ (AP step")
    path = tmp_path / "m.csv"
    with open(path, "w", newline="") as fh:
        csv.writer(fh).writerows([["y", "$\\foo$"], *zip(y, s)])
    with caplog.at_level(logging.DEBUG):
        assert main(["plot", str(path), "--label", "y", "--score", "$\\foo$", "--title", "$\\bar$",
                     "-o", str(tmp_path / "m.png")]) == 0
        assert main(["report", str(path), "--label", "y", "--score", "$\\foo$", "--title", "$\\bar$",
                     "-o", str(tmp_path / "m.html")]) == 0
    err = capsys.readouterr().err
    assert err.splitlines() == [f"wrote {tmp_path / 'm.png'}", f"wrote {tmp_path / 'm.html'}"]
    assert not [r for r in caplog.records if r.name.startswith("matplotlib.mathtext") or r.levelno >= logging.WARNING]


def test_bidi_and_control_characters_are_neutralised_in_the_report(tmp_path, capsys):
    y, s = _data(200, seed=17)
    name = "evil\u202egnp.exe\x07\x1b[31m"
    path = tmp_path / "bidi\u202e.csv"
    with open(path, "w", newline="") as fh:
        csv.writer(fh).writerows([["y\u2066", name], *zip(y, s)])
    out = tmp_path / "r.html"
    assert main(["report", str(path), "--label", "y\u2066", "--score", name, "--title", "t\u202et\x00",
                 "-o", str(out)]) == 0, capsys.readouterr().err
    text = out.read_text(encoding="utf-8")
    for ch in ["\u202e", "\u2066", "\x07", "\x1b", "\x00"]:
        assert ch not in text
    assert "evil[U+202E]gnp.exe\u2407\u241b[31m" in text and "[U+2066]" in text
    assert plot.visible("a\u202bb\u200fc\x7f") == "a[U+202B]b[U+200F]c\u2421"


def test_control_characters_are_drawn_in_the_font_without_warnings(tmp_path, capsys):
    """A control character in a name is drawn as Python's escape (``\\x1b``): DejaVu Sans, matplotlib's
    default font, has no Control Pictures (``\u241b``), and each drawing of one warned "Glyph 9243 missing
    from font(s)" (6-10 identical lines from plot and report).  A glyph the font lacks otherwise (CJK)
    is warned of once."""
    y, s = _data(200, seed=19)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ax = plot.pr_curve(y, s, label="m\x1b[31m\x7f")
        ax.figure.savefig(io.BytesIO(), format="png")
    assert _legend(ax)[0].startswith("m\\x1b[31m\\x7f (AP step")
    path = tmp_path / "esc.csv"
    with open(path, "w", newline="") as fh:
        csv.writer(fh).writerows([["y", "m\x1b[31m", "\u6a21\u578b"], *zip(y, s, s)])
    for command, out in (("plot", "e.png"), ("report", "e.html")):
        assert main([command, str(path), "--label", "y", "--score", "m\x1b[31m", "-o", str(tmp_path / out)]) == 0
        assert capsys.readouterr().err.splitlines() == [f"wrote {tmp_path / out}"]
        assert main([command, str(path), "--label", "y", "--score", "\u6a21\u578b", "-o", str(tmp_path / out)]) == 0
        lines = capsys.readouterr().err.splitlines()
        assert len(lines) == len(set(lines)) <= 3 and lines[-1] == f"wrote {tmp_path / out}"


# ------------------------------------------------------------------ the CLI
@pytest.fixture
def csv_file(tmp_path):
    y, s = _data(400, seed=18)
    path = tmp_path / "s.csv"
    with open(path, "w", newline="") as fh:
        csv.writer(fh).writerows([["y", "a", "w"], *zip(y, s, np.ones_like(y))])
    return path


@pytest.mark.parametrize("extra, message", [
    (["--kind", "pr", "--max-fpr", "0.2"], "--max-fpr"),
    (["--kind", "roc", "--envelope"], "--envelope"),
    (["--kind", "roc", "--eleven-point"], "--eleven-point"),
])
def test_plot_refuses_options_of_the_other_kind(csv_file, tmp_path, capsys, extra, message):
    assert main(["plot", str(csv_file), "--label", "y", "--score", "a", "-o", str(tmp_path / "x.png"),
                 *extra]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1 and not (tmp_path / "x.png").exists()


def test_plot_ci_and_points_from_the_cli(csv_file, tmp_path, capsys, monkeypatch):
    from matplotlib.figure import Figure

    saved = []
    original = Figure.savefig
    monkeypatch.setattr(Figure, "savefig", lambda self, *a, **k: (saved.append(self), original(self, *a, **k)))
    out = tmp_path / "ci.png"
    assert main(["plot", str(csv_file), "--label", "y", "--score", "a", "-o", str(out), "--ci",
                 "--at-recall", "0.5", "--at-threshold", "0.3", "--weight", "w"]) == 0, capsys.readouterr().err
    pr_ax, roc_ax = saved[0].axes
    data = np.loadtxt(csv_file, delimiter=",", skiprows=1)
    y, s = data[:, 0], data[:, 1]
    legend = _legend(pr_ax)
    assert pr_ax.get_legend().get_title().get_text().startswith("shaded: pointwise 95% bands")  # the model's entry
    assert not any("band" in t for t in legend)  # shows its band: no entry of its own
    assert any(t.startswith("a: recall 0.5 (score") for t in legend)
    assert any(t.startswith("a: threshold 0.3 (score") for t in legend)
    assert any(t.startswith("a: best F1") for t in legend)
    roc_legend = _legend(roc_ax)
    ci = stats.roc_auc_ci(y, s, sample_weight=data[:, 2], method="percentile",
                          n_resamples=stats.DEFAULT_RESAMPLES, random_state=0)
    assert f"a (AUC = {ci.estimate:.3f} [{ci.low:.3f}, {ci.high:.3f}])" in roc_legend


def test_report_ci_and_partial_auc(csv_file, tmp_path, capsys):
    out = tmp_path / "r.html"
    assert main(["report", str(csv_file), "--label", "y", "--score", "a", "-o", str(out), "--ci",
                 "--max-fpr", "0.25"]) == 0, capsys.readouterr().err
    text = out.read_text()
    data = np.loadtxt(csv_file, delimiter=",", skiprows=1)
    y, s = data[:, 0], data[:, 1]
    assert f"{precall.roc_auc(y, s, max_fpr=0.25):.4f}" in text
    ci = stats.bootstrap_ci(precall.average_precision, y, s, n_resamples=2000, random_state=0, resample="counts")
    assert f"[{ci.low:.4f}, {ci.high:.4f}]" in text
    assert "pAUC FPR &lt;= 0.25" in text


def test_class_columns_from_the_cli_give_a_compact_legend(tmp_path, capsys, monkeypatch):
    from matplotlib.figure import Figure

    rng = np.random.default_rng(19)
    y = rng.integers(0, 4, 300)
    z = rng.random((300, 4)) + np.eye(4)[y]
    path = tmp_path / "m.csv"
    with open(path, "w", newline="") as fh:
        csv.writer(fh).writerows([["y", "0", "1", "2", "3"], *([int(a), *b] for a, b in zip(y, z))])
    saved = []
    original = Figure.savefig
    monkeypatch.setattr(Figure, "savefig", lambda self, *a, **k: (saved.append(self), original(self, *a, **k)))
    assert main(["plot", str(path), "--label", "y", "--class-columns", "0,1,2,3", "-o", str(tmp_path / "m.png")]) == 0, \
        capsys.readouterr().err
    pr_ax, roc_ax = saved[0].axes
    assert len(_legend(pr_ax)) == 4 + 1 + 1  # each class, the micro-average, one baseline
    assert len(_legend(roc_ax)) == 1 + 4 + 1  # the chance diagonal, each class, the micro-average
    micro = precall.average_precision(y, z, average="micro")
    assert f"micro-average (AP step = {micro:.3f})" in _legend(pr_ax)


# ------------------------------------------------------------------ the multi-class report
from html.parser import HTMLParser  # noqa: E402

from sklearn.metrics import (  # noqa: E402
    average_precision_score,
    precision_recall_curve,
    roc_auc_score,
    roc_curve,
)


class _Tables(HTMLParser):
    """The text of every table cell of an HTML document: tables[i][row][column]."""

    def __init__(self):
        super().__init__()
        self.tables, self._cell = [], None

    def handle_starttag(self, tag, attrs):
        if tag == "table":
            self.tables.append([])
        elif tag == "tr":
            self.tables[-1].append([])
        elif tag in ("td", "th"):
            self._cell = ""

    def handle_endtag(self, tag):
        if tag in ("td", "th"):
            self.tables[-1][-1].append(self._cell)
            self._cell = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell += data


def _html_tables(text):
    parser = _Tables()
    parser.feed(text)
    return parser.tables


NAMES = ("setosa", "versicolor", "virginica")


def _three_classes(n=600, seed=21, weights=False):
    """Labels 0/1/2 with score columns p_setosa, p_versicolor, p_virginica: the mapping case."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 3, n)
    s = rng.random((n, 3)) + 0.6 * np.eye(3)[y]
    s = np.round(s, 2)  # ties
    w = rng.integers(1, 4, n).astype(float) if weights else None
    return y, s, w


def _write_three(path, y, s, w=None, named=False):
    header = ["y", *(f"p_{c}" for c in NAMES)] + (["w"] if w is not None else [])
    with open(path, "w", newline="") as fh:
        rows = [[NAMES[a] if named else int(a), *b] + ([c] if w is not None else []) for a, b, c in
                zip(y, s.tolist(), w if w is not None else [None] * len(y))]
        csv.writer(fh).writerows([header, *rows])
    return path


@pytest.fixture
def saved_figures(monkeypatch):
    """Every matplotlib Figure saved while the test runs (the report's two SVG figures)."""
    from matplotlib.figure import Figure

    saved = []
    original = Figure.savefig
    monkeypatch.setattr(Figure, "savefig", lambda self, *a, **k: (saved.append(self), original(self, *a, **k))[1])
    return saved


@pytest.mark.parametrize("spec", [["--class-columns", "a=p_a,b=p_b,c=p_c"], ["--class-prefix", "p_"]])
def test_plot_class_mapping_and_prefix_draw_the_classes(tmp_path, capsys, monkeypatch, spec):
    """``plot`` takes the class columns as ``evaluate`` does: LABEL=COLUMN pairs or a prefix."""
    from matplotlib.figure import Figure

    rng = np.random.default_rng(23)
    y = rng.choice(["a", "b", "c"], 200)
    z = rng.random((200, 3)) + 0.4 * (y[:, None] == np.array(["a", "b", "c"]))
    path = tmp_path / "m.csv"
    with open(path, "w", newline="") as fh:
        csv.writer(fh).writerows([["y", "p_a", "p_b", "p_c"], *([a, *b] for a, b in zip(y, z))])
    saved = []
    original = Figure.savefig
    monkeypatch.setattr(Figure, "savefig", lambda self, *a, **k: (saved.append(self), original(self, *a, **k)))
    assert main(["plot", str(path), "--label", "y", *spec, "-o", str(tmp_path / "m.png")]) == 0, \
        capsys.readouterr().err
    legend = _legend(saved[0].axes[0])
    for c in "abc":
        ap = precall.average_precision(y == c, z[:, "abc".index(c)])
        assert f"class {c} (AP step = {ap:.3f})" in legend, legend
    micro = precall.average_precision(y, z, labels=["a", "b", "c"], average="micro")
    assert f"micro-average (AP step = {micro:.3f})" in legend


MAPPING = "0=p_setosa,1=p_versicolor,2=p_virginica"


@pytest.mark.parametrize("weighted", [False, True])
def test_multiclass_report_numbers_are_precall_evaluate(tmp_path, capsys, weighted):
    y, s, w = _three_classes(weights=weighted)
    path = _write_three(tmp_path / "iris.csv", y, s, w)
    out = tmp_path / "r.html"
    argv = ["report", str(path), "--label", "y", "--class-columns", MAPPING, "-o", str(out)]
    assert main(argv + (["--weight", "w"] if weighted else [])) == 0, capsys.readouterr().err
    summary = _html_tables(out.read_text(encoding="utf-8"))[0]
    header, rows = summary[0], {r[0]: r for r in summary[1:]}
    ev = precall.evaluate(y.astype(str), s, labels=["0", "1", "2"], sample_weight=w)
    assert isinstance(ev, precall.MultiEvaluation)
    col = {name: header.index(name) for name in header}
    assert [r[col["score column"]] for r in summary[1:4]] == [f"p_{c}" for c in NAMES]
    for k, c in enumerate(["0", "1", "2"]):
        e = ev.per_class[k]
        row = rows[c]
        assert row[col["support"]] == f"{ev.support[k]:.0f}"
        for m in precall.AP_METHODS:
            assert row[col[f"AP {m}"]] == f"{e.average_precision[m]:.4f}", (c, m)
        assert row[col["ROC-AUC"]] == f"{e.roc_auc:.4f}"
        assert row[col["best F1"]] == f"{e.best_f1.f1:.4f}"
        assert row[col["at score >="]] == f"{e.best_f1.threshold:.6g}"
    for average in ("macro", "weighted", "micro"):
        for m in precall.AP_METHODS:
            assert rows[average][col[f"AP {m}"]] == f"{ev.average_precision[average][m]:.4f}", (average, m)
        assert rows[average][col["ROC-AUC"]] == f"{ev.roc_auc[average]:.4f}"
    assert rows["one-vs-one"][col["ROC-AUC"]] == f"{ev.roc_auc['ovo']:.4f}"
    # and the library agrees with scikit-learn (the references of these numbers)
    assert ev.average_precision["macro"]["step"] == pytest.approx(
        average_precision_score(np.eye(3)[y], s, average="macro", sample_weight=w), abs=1e-12)
    assert ev.roc_auc["macro"] == pytest.approx(
        roc_auc_score(np.eye(3)[y], s, average="macro", sample_weight=w), abs=1e-12)


def test_multiclass_report_draws_the_pooled_micro_curve_and_the_macro_curves(tmp_path, capsys, saved_figures):
    y, s, _ = _three_classes(n=900, seed=22)
    path = _write_three(tmp_path / "iris.csv", y, s, named=True)  # labels setosa, ...: --class-prefix p_
    assert main(["report", str(path), "--label", "y", "--class-prefix", "p_", "-o", str(tmp_path / "r.html")]) == 0
    capsys.readouterr()
    pr_ax, roc_ax = (f.axes[0] for f in saved_figures)
    onehot = np.eye(3)[y]
    # micro: the curve of every (sample, class) cell pooled, as scikit-learn draws it
    p, r, _ = precision_recall_curve(onehot.ravel(), s.ravel())
    micro = _line(pr_ax, "micro-average")
    np.testing.assert_array_equal(micro.get_xdata(), r)
    np.testing.assert_array_equal(micro.get_ydata(), p)
    fpr, tpr, _ = roc_curve(onehot.ravel(), s.ravel())
    micro = _line(roc_ax, "micro-average")
    np.testing.assert_array_equal(micro.get_xdata(), fpr)
    np.testing.assert_array_equal(micro.get_ydata(), tpr)
    # macro PR: the drawn step curve's area is the macro AP (step)
    macro = _line(pr_ax, "macro-average")
    assert macro.get_drawstyle() == "steps-post"
    mx, my = macro.get_xdata(), macro.get_ydata()
    area = -np.sum(np.diff(mx) * my[:-1])
    assert area == pytest.approx(average_precision_score(onehot, s, average="macro"), abs=1e-12)
    # macro ROC: scikit-learn's example (mean TPR interpolated on a common FPR grid) away from
    # the classes' vertical rises, and the drawn polyline's area is the macro one-vs-rest AUC
    macro = _line(roc_ax, "macro-average")
    fx, ty = macro.get_xdata(), macro.get_ydata()
    assert np.trapezoid(ty, fx) == pytest.approx(roc_auc_score(onehot, s, average="macro"), abs=1e-12)
    curves = [roc_curve(onehot[:, j], s[:, j]) for j in range(3)]
    grid = np.linspace(0.0005, 0.9995, 1000)
    grid = grid[~np.isin(grid, np.concatenate([c[0] for c in curves]))]
    sk_mean = np.mean([np.interp(grid, f, t) for f, t, _ in curves], axis=0)
    np.testing.assert_allclose(np.interp(grid, fx, ty), sk_mean, atol=1e-12)
    # one baseline, and a compact legend: classes, micro, macro, baseline (PR); chance first (ROC)
    labels = _legend(pr_ax)
    assert len(labels) == 3 + 2 + 1 and sum("random" in t for t in labels) == 1
    ev = precall.evaluate(np.array(NAMES)[y], s, labels=list(NAMES))
    assert f"macro-average (AP step = {ev.average_precision['macro']['step']:.3f})" in labels
    assert f"micro-average (AP step = {ev.average_precision['micro']['step']:.3f})" in labels
    assert f"macro-average (AUC = {ev.roc_auc['macro']:.3f})" in _legend(roc_ax)
    assert len(_legend(roc_ax)) == 1 + 3 + 2


def test_multiclass_report_ci_and_partial_auc(tmp_path, capsys):
    import functools

    y, s, _ = _three_classes(n=300, seed=23)
    path = _write_three(tmp_path / "iris.csv", y, s)
    out = tmp_path / "r.html"
    assert main(["report", str(path), "--label", "y", "--class-columns", MAPPING, "-o", str(out), "--ci",
                 "--max-fpr", "0.2"]) == 0, capsys.readouterr().err
    text = out.read_text(encoding="utf-8")
    summary = _html_tables(text)[0]
    header, rows = summary[0], {r[0]: r for r in summary[1:]}
    labels = y.astype(str)
    classes = ["0", "1", "2"]
    ap, auc = stats.bootstrap_cis([functools.partial(precall.average_precision, average="macro", labels=classes),
                                   functools.partial(precall.roc_auc, average="macro", labels=classes)],
                                  labels, s, n_resamples=2000, random_state=0)  # one draw for both
    assert rows["macro 95% CI"][header.index("AP step")] == f"[{ap.low:.4f}, {ap.high:.4f}]"
    assert rows["macro 95% CI"][header.index("ROC-AUC")] == f"[{auc.low:.4f}, {auc.high:.4f}]"
    assert f"[{ap.low:.3f}, {ap.high:.3f}]" in text  # in the macro curve's legend too
    column = header.index("pAUC FPR <= 0.2")
    for k, c in enumerate(classes):
        assert rows[c][column] == f"{precall.roc_auc(labels == c, s[:, k], max_fpr=0.2):.4f}"
    assert rows["macro"][column] == "-"


def test_multiclass_report_of_a_million_rows_and_ten_classes_is_small():
    from precall.plot.report import CI_MAX_CELLS

    rng = np.random.default_rng(24)
    k = 10
    n = CI_MAX_CELLS // k + 1  # one row past the intervals' limit
    y = rng.integers(0, k, n)
    s = rng.random((n, k)) + 0.5 * np.eye(k)[y]
    with pytest.warns(UserWarning, match="no intervals in the report"):
        text = precall.report.html_report(y, s, labels=list(range(k)), ci=True)
    assert len(text.encode()) < 5_000_000  # about 0.5 MB
    assert "No intervals" in text  # the bootstrap is skipped, visibly, above CI_MAX_CELLS cells
    ev = precall.evaluate(y, s, labels=list(range(k)))
    assert f"{ev.average_precision['micro']['step']:.4f}" in text and f"{ev.roc_auc['ovo']:.4f}" in text


def test_multiclass_report_escapes_class_labels(tmp_path, capsys):
    y, s, _ = _three_classes(n=120, seed=25)
    names = ["a\u202eb", "c\x07", "$x$"]
    path = tmp_path / "m.csv"
    with open(path, "w", newline="") as fh:
        csv.writer(fh).writerows([["y", *names], *([names[a], *b] for a, b in zip(y, s.tolist()))])
    out = tmp_path / "r.html"
    assert main(["report", str(path), "--label", "y", "--class-columns", ",".join(names), "-o", str(out)]) == 0, \
        capsys.readouterr().err
    text = out.read_text(encoding="utf-8")
    assert "\u202e" not in text and "\x07" not in text
    assert "a[U+202E]b" in text and "c\u2407" in text


@pytest.mark.parametrize("extra, words", [
    (["--score", "p_setosa", "--class-columns", MAPPING], ["--score", "--class-columns"]),
    (["--class-columns", MAPPING, "--class-prefix", "p_"], ["--class-columns", "--class-prefix"]),
    ([], ["--score", "--class-columns"]),
    (["--class-columns", MAPPING, "--pos-label", "1"], ["--pos-label"]),
    (["--class-columns", "0=p_setosa,1=p_versicolor,2=p_nope"], ["'p_nope'"]),
    (["--class-columns", "0=p_setosa,1=p_versicolor"], ["'2'"]),  # a label with no class column
    (["--class-columns", "0=p_setosa"], ["at least two"]),
    (["--class-prefix", "q_"], ["--class-prefix", "0 column(s)"]),
])
def test_multiclass_report_errors_are_one_line(tmp_path, capsys, extra, words):
    y, s, _ = _three_classes(n=60, seed=26)
    path = _write_three(tmp_path / "iris.csv", y, s)
    out = tmp_path / "r.html"
    assert main(["report", str(path), "--label", "y", "-o", str(out), *extra]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert all(w in err for w in words), err
    assert not out.exists()


def test_html_report_refuses_mixed_arguments():
    y, s, _ = _three_classes(n=60, seed=27)
    with pytest.raises(ValueError, match="pos_label"):
        precall.report.html_report(y, s, labels=[0, 1, 2], pos_label=1)
    with pytest.raises(ValueError, match="score_columns"):
        precall.report.html_report(y == 1, {"a": s[:, 1]}, labels=[0, 1])
    with pytest.raises(ValueError, match="one column per class"):
        precall.report.html_report(y, s, labels=[0, 1, 2], score_columns=["a"])


def test_multiclass_report_with_a_class_without_rows_gives_undefined_intervals_as_evaluate(tmp_path, capsys):
    """A class without rows: its AP and AUC are undefined, and so are the intervals of the macro
    averages that include them.  ``report --ci`` shows them NaN with the warning ``evaluate --ci``
    prints (naming the class, the fix said with --class-columns), as the one policy says; it said
    "no intervals in the report: ROC-AUC is undefined on the input", while evaluate exited 2."""
    import json

    y, s, _ = _three_classes(n=150, seed=28)
    y[y == 2] = 1  # no row of class 2: its AP is 0 (with a warning), its AUC undefined
    path = _write_three(tmp_path / "iris.csv", y, s)
    out = tmp_path / "r.html"
    assert main(["report", str(path), "--label", "y", "--class-columns", MAPPING, "-o", str(out), "--ci"]) == 0
    report_err = capsys.readouterr().err
    assert main(["evaluate", str(path), "--label", "y", "--class-columns", MAPPING, "--ci", "--method", "step",
                 "--json"]) == 0
    evaluated = capsys.readouterr()
    got = json.loads(evaluated.out)["intervals"]
    assert got["average_precision"]["step"]["low"] is None and got["roc_auc"]["high"] is None
    said = [line for line in evaluated.err.splitlines() if "confidence interval" in line]
    assert len(said) == 1 and "class '2'" in said[0] and "--class-columns" in said[0], evaluated.err
    assert "`labels`" not in said[0] and said[0] in report_err.splitlines(), report_err
    text = out.read_text(encoding="utf-8")
    summary = _html_tables(text)[0]
    header, rows = summary[0], {r[0]: r for r in summary[1:]}
    assert rows["macro 95% CI"][header.index("AP step")] == "[nan, nan]"
    assert rows["macro 95% CI"][header.index("ROC-AUC")] == "[nan, nan]"
    assert "Undefined:</strong>" in text and "class 2: no positive sample" in text
    ev = precall.evaluate(y.astype(str), s, labels=["0", "1", "2"], on_undefined=0.0)
    assert f"macro-average (AP step = {ev.average_precision['macro']['step']:.3f})" in text  # no interval


UNDEFINED_SHOWN = {"warn": ("0", "nan"), "nan": ("nan", "nan"), "zero": ("0", "0")}  # AP, ROC-AUC of no rows


@pytest.mark.parametrize("command", ["plot", "report"])
@pytest.mark.parametrize("policy", ["warn", "nan", "zero", "raise"])
def test_plot_and_report_take_on_undefined_as_evaluate(tmp_path, capsys, saved_figures, command, policy):
    """``plot`` and ``report`` draw and print numbers a class without rows leaves undefined; they take
    ``--on-undefined`` as ``evaluate`` does (same choices, default warn): the legends and the report's
    table quote the value ``precall.evaluate`` gives under the policy (the plot's legend said nan, the
    report's table 0, whatever was asked), raise: one line naming the class, nothing written, exit 2."""
    y, s, _ = _three_classes(n=150, seed=28)
    y[y == 2] = 1  # no row of class 2
    path = _write_three(tmp_path / "iris.csv", y, s)
    out = tmp_path / ("m.png" if command == "plot" else "m.html")
    code = main([command, str(path), "--label", "y", "--class-columns", MAPPING, "-o", str(out),
                 "--on-undefined", policy])
    err = capsys.readouterr().err
    if policy == "raise":
        lines = err.strip().splitlines()
        assert code == 2 and len(lines) == 1 and not out.exists(), err
        assert "class(es) '2' have no rows" in lines[0] and "--on-undefined raise" in lines[0], err
        return
    assert code == 0, err
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", precall.UndefinedMetricWarning)
        ev = precall.evaluate(y.astype(str), s, labels=["0", "1", "2"],
                              on_undefined=0.0 if policy == "zero" else policy)
    ap, auc = ev.per_class[2].average_precision["step"], ev.per_class[2].roc_auc
    assert [f"{v:g}" for v in (ap, auc)] == list(UNDEFINED_SHOWN[policy])
    pr, roc = (saved_figures[0].axes if command == "plot" else [f.axes[0] for f in saved_figures[:2]])
    assert f"class 2 (AP step = {plot.value_text(ap)})" in _legend(pr), _legend(pr)
    assert f"class 2 (AUC = {plot.value_text(auc)})" in _legend(roc), _legend(roc)
    if command == "report":
        summary = _html_tables(out.read_text(encoding="utf-8"))[0]
        header, rows = summary[0], {r[0]: r for r in summary[1:]}
        assert rows["2"][header.index("AP step")] == ("nan" if policy == "nan" else "0.0000")
        assert rows["2"][header.index("ROC-AUC")] == ("0.0000" if policy == "zero" else "nan")
        assert rows["macro"][header.index("ROC-AUC")] == (f"{ev.roc_auc['macro']:.4f}")


def test_multiclass_report_of_one_label_says_what_is_undefined(tmp_path, capsys):
    """Every row of one label: each class's ROC-AUC and the macro ROC curve are undefined.  The report
    is written (exit 0) with the warnings evaluate and plot give, and says so; it exited 2 with
    "`tables` must hold a class with both positives and negatives; got none"."""
    path = tmp_path / "one.csv"
    path.write_text("y,a,b\na,0.1,0.5\na,0.2,0.4\na,0.3,0.3\n")
    out = tmp_path / "r.html"
    args = [str(path), "--label", "y", "--class-columns", "a,b"]
    assert main(["report", *args, "-o", str(out)]) == 0
    report_err = capsys.readouterr().err
    assert main(["evaluate", *args]) == 0
    evaluate_err = capsys.readouterr().err
    assert main(["plot", *args, "--kind", "roc", "-o", str(tmp_path / "r.png")]) == 0
    plot_err = capsys.readouterr().err
    named = [line for line in report_err.splitlines() if "class(es)" in line]
    assert len(named) == 2 and "'b' have no rows" in named[0] and "'a' have every row" in named[1], report_err
    assert all(line in plot_err.splitlines() for line in named), plot_err
    assert all(line.split(" (")[0] in evaluate_err for line in named), evaluate_err  # (+ --on-undefined)
    assert "Traceback" not in report_err and "`tables`" not in report_err
    assert "so is their macro-average" in report_err  # the curve the report draws beside plot's
    text = out.read_text(encoding="utf-8")
    assert "Undefined:</strong>" in text and "macro-average ROC curve is undefined" in text
    rows = {r[0]: r for r in _html_tables(text)[0][1:]}
    assert rows["a"][-3] == "nan" and rows["macro"][-3] == "nan"  # ROC-AUC, as evaluate prints it
    with pytest.warns(precall.UndefinedMetricWarning):
        html = precall.report.html_report(["a"] * 3, np.array([[0.1, 0.5], [0.2, 0.4], [0.3, 0.3]]),
                                          labels=["a", "b"], ci=True, n_resamples=50)
    assert "[nan, nan]" in html


def test_pr_and_roc_curve_draw_the_macro_average_of_classes_on_request():
    y, s, _ = _three_classes(n=300, seed=29)
    ax = plot.pr_curve(y, s, macro=True)
    ev = precall.evaluate(y, s)
    assert f"macro-average (AP step = {ev.average_precision['macro']['step']:.3f})" in _legend(ax)
    ax = plot.roc_curve(y, s, macro=True)
    assert f"macro-average (AUC = {ev.roc_auc['macro']:.3f})" in _legend(ax)
    assert not any(t.startswith("macro") for t in _legend(plot.roc_curve(y, s)))  # off by default


def test_interval_legends_say_method_resamples_and_seed():
    """The intervals in the legend ("a (AP step = 0.723 [0.679, 0.773])") named no method, resamples or
    seed, and the bands no seed: the legend's title says both, and the numbers are the functions'."""
    rng = np.random.default_rng(0)
    y = rng.random(300) < 0.4
    s = rng.random(300) + 0.3 * y
    ax = plot.pr_curve(y, s, ci=True)
    title = ax.get_legend().get_title().get_text()
    assert "pointwise 95% bands (bootstrap, 200 resamples, seed 0)" in title
    assert "[ ]: 95% intervals of AP (percentile bootstrap, 2000 resamples, seed 0)" in title
    ci = stats.bootstrap_ci(precall.average_precision, y, s)
    assert f"[{ci.low:.3f}, {ci.high:.3f}]" in " ".join(t.get_text() for t in ax.get_legend().get_texts())
    ax = plot.roc_curve(y, s, ci=True)
    assert "[ ]: 95% intervals of AUC (DeLong)" in ax.get_legend().get_title().get_text()
    ax = plot.roc_curve(y, s, sample_weight=np.ones(300), ci=True)
    assert "AUC (percentile bootstrap, 2000 resamples, seed 0)" in ax.get_legend().get_title().get_text()
    plt.close("all")
