"""precall.plot and ``precall plot``: rendered with Agg, checked through the
returned Axes (lines, legend entries, the drawn points against the curves of
the public API) and through the written files (size, not blank)."""

from __future__ import annotations

import csv
import subprocess
import sys

import numpy as np
import pytest

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

import precall  # noqa: E402
from precall import plot  # noqa: E402
from precall.cli import main  # noqa: E402


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


@pytest.fixture
def binary(rng):
    n = 120
    y = (rng.random(n) < 0.35).astype(int)
    return y, np.round(rng.random(n) + 0.5 * y, 2)


def _legend(ax):
    return [t.get_text() for t in ax.get_legend().get_texts()]


def _line(ax, startswith):
    return next(line for line in ax.get_lines() if line.get_label().startswith(startswith))


def test_pr_curve_draws_the_step_curve_step_ap_sums(binary):
    y, s = binary
    ax = plot.pr_curve(y, s, label="m")
    curve = precall.precision_recall_curve(y, s)
    line = _line(ax, "m (AP step")
    np.testing.assert_array_equal(line.get_xdata(), curve.recall)
    np.testing.assert_array_equal(line.get_ydata(), curve.precision)
    assert line.get_drawstyle() == "steps-post"
    # the area under the drawn step curve is step AP
    r, p = line.get_xdata(), line.get_ydata()
    assert np.sum((r[:-1] - r[1:]) * p[:-1]) == pytest.approx(precall.average_precision(y, s), abs=1e-12)
    assert f"m (AP step = {precall.average_precision(y, s):.3f})" in _legend(ax)
    baseline = _line(ax, "random classifier")
    assert baseline.get_ydata()[0] == pytest.approx(y.mean())
    assert ax.get_xlabel() == "Recall (Positive label: 1)" and ax.get_ylabel() == "Precision (Positive label: 1)"
    assert ax.get_xlim() == pytest.approx((-0.01, 1.01)) and ax.get_aspect() == 1.0


def test_pr_envelope_area_is_voc2010_and_eleven_points_average_voc2007(binary):
    y, s = binary
    ax = plot.pr_curve(y, s, envelope=True, eleven_point=True, baseline=False)
    env = _line(ax, "model envelope")
    r, p = env.get_xdata(), env.get_ydata()
    assert env.get_drawstyle() == "steps-pre"
    assert np.sum(np.diff(r) * p[1:]) == pytest.approx(precall.average_precision(y, s, method="voc2010"), abs=1e-12)
    points = _line(ax, "model 11 points")
    np.testing.assert_allclose(points.get_xdata(), np.linspace(0, 1, 11))
    assert np.mean(points.get_ydata()) == pytest.approx(precall.average_precision(y, s, method="voc2007"), abs=1e-12)
    assert len(_legend(ax)) == 3


def test_pr_iso_f1_curves_have_constant_f1(binary):
    y, s = binary
    ax = plot.pr_curve(y, s, iso_f1=(0.5,))
    iso = [line for line in ax.get_lines() if line.get_label().startswith("_")]
    assert len(iso) == 1
    r, p = iso[0].get_xdata(), iso[0].get_ydata()
    np.testing.assert_allclose(2 * p * r / (p + r), 0.5)


def test_several_models_one_legend_entry_each(binary, rng):
    y, s = binary
    models = {"a": s, "b": np.round(s + rng.normal(0, 0.3, len(s)), 2), "c": rng.random(len(s))}
    ax = plot.pr_curve(y, models)
    labels = _legend(ax)
    for name, scores in models.items():
        assert f"{name} (AP step = {precall.average_precision(y, scores):.3f})" in labels
    assert sum(lab.startswith("random classifier") for lab in labels) == 1
    ax = plot.roc_curve(y, models)
    assert len(_legend(ax)) == 4  # chance + three models
    assert not ax.collections  # several curves: no shading


def test_per_class_curves_one_baseline_and_the_micro_average(rng):
    y = rng.integers(0, 3, 90)
    z = rng.random((90, 3)) + np.eye(3)[y]
    ax = plot.pr_curve(y, z, method="voc2010")
    labels = _legend(ax)
    per_class = precall.average_precision(y, z, method="voc2010", average=None)
    for c in range(3):
        assert f"class {c} (AP voc2010 = {per_class[c]:.3f})" in labels
    micro = precall.average_precision(y, z, method="voc2010", average="micro")
    assert f"micro-average (AP voc2010 = {micro:.3f})" in labels
    assert sum("random" in lab for lab in labels) == 1  # one baseline, at the micro prevalence 1/3
    assert _line(ax, "random classifier (micro").get_ydata()[0] == pytest.approx(1 / 3)
    assert len(labels) == 5
    assert ax.get_xlabel() == "Recall"  # no single positive label
    ax = plot.roc_curve(y, z)
    aucs = precall.roc_auc(y, z, average=None)
    micro_auc = precall.roc_auc(y, z, average="micro")
    assert _legend(ax)[1:] == [f"class {c} (AUC = {aucs[c]:.3f})" for c in range(3)] + [
        f"micro-average (AUC = {micro_auc:.3f})"]


def test_roc_curve_shading_diagonal_and_partial_region(binary):
    y, s = binary
    ax = plot.roc_curve(y, s, max_fpr=0.25, label="m")
    curve = precall.roc_curve(y, s)  # the corners (drop_intermediate): the same polyline
    line = _line(ax, "m (AUC")
    np.testing.assert_array_equal(line.get_xdata(), curve.fpr)
    np.testing.assert_array_equal(line.get_ydata(), curve.tpr)
    auc, pauc = precall.roc_auc(y, s), precall.roc_auc(y, s, max_fpr=0.25)
    assert f"m (AUC = {auc:.3f}; FPR <= 0.25: {pauc:.3f})" in _legend(ax)
    assert "chance (AUC = 0.5)" in _legend(ax)
    assert any(lab.startswith("partial AUC region") for lab in _legend(ax))
    assert len(ax.collections) == 1  # the shaded area
    assert ax.get_xlabel() == "False Positive Rate (Positive label: 1)"


def test_threshold_table_plot(binary):
    y, s = binary
    table = precall.threshold_table(y, s)
    ax = table.plot("pr", label="t", envelope=True)
    assert _legend(ax)[0] == f"t (AP step = {table.average_precision():.3f})"
    ax = table.plot("roc")
    assert _legend(ax) == ["chance (AUC = 0.5)", f"model (AUC = {table.roc_auc():.3f})"]
    with pytest.raises(ValueError, match="`kind`"):
        table.plot("det")


def test_given_axes_are_used_and_returned(binary):
    y, s = binary
    fig, ax = plt.subplots()
    assert plot.pr_curve(y, s, ax=ax) is ax
    assert plot.roc_curve(y, s, ax=ax) is ax


def test_bad_input_names_the_argument(binary):
    y, s = binary
    with pytest.raises(ValueError, match="same length"):
        plot.pr_curve(y, s[:-1])
    with pytest.raises(ValueError, match="empty mapping"):
        plot.roc_curve(y, {})


# ------------------------------------------------------------------ precall plot
def _png_pixels(path):
    image = plt.imread(path)
    assert image.ndim == 3 and image.shape[0] > 200 and image.shape[1] > 200
    return image


@pytest.fixture
def csv_file(tmp_path, binary, rng):
    y, s = binary
    other = np.round(rng.random(len(y)), 2)
    path = tmp_path / "scores.csv"
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["y", "a", "b", "w"])
        for row in zip(y, s, other, rng.uniform(0.5, 2, len(y))):
            w.writerow(row)
    return path


@pytest.mark.parametrize("suffix", [".png", ".svg", ".pdf"])
def test_plot_command_writes_each_format(csv_file, tmp_path, suffix, capsys):
    out = tmp_path / f"fig{suffix}"
    code = main(["plot", str(csv_file), "--label", "y", "--score", "a", "--score", "b", "-o", str(out),
                 "--envelope", "--eleven-point", "--iso-f1", "--max-fpr", "0.3", "--weight", "w"])
    assert code == 0, capsys.readouterr().err
    assert out.stat().st_size > 5000
    head = out.read_bytes()[:8]
    assert head.startswith({".png": b"\x89PNG", ".svg": b"<?xml", ".pdf": b"%PDF"}[suffix])
    if suffix == ".png":
        image = _png_pixels(out)
        assert image[..., :3].std() > 0.05  # not blank


def test_plot_command_through_a_subprocess(csv_file, tmp_path):
    out = tmp_path / "roc.png"
    proc = subprocess.run([sys.executable, "-m", "precall", "plot", str(csv_file), "--label", "y",
                           "--score", "a", "--kind", "roc", "-o", str(out)],
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    image = _png_pixels(out)
    assert image.shape[1] < 1.3 * image.shape[0]  # one panel: about square


def test_plot_command_draws_each_prevalence(csv_file, tmp_path, capsys, monkeypatch):
    from matplotlib.figure import Figure

    saved = []
    original = Figure.savefig
    monkeypatch.setattr(Figure, "savefig", lambda self, *a, **k: (saved.append(self), original(self, *a, **k)))
    out = tmp_path / "prev.png"
    code = main(["plot", str(csv_file), "--label", "y", "--score", "a", "-o", str(out), "--prevalence", "0.05",
                 "--prevalence", "0.5"])
    assert code == 0, capsys.readouterr().err
    pr_ax, roc_ax = saved[0].axes
    legend = [t.get_text() for t in pr_ax.get_legend().get_texts()]
    y = np.loadtxt(csv_file, delimiter=",", skiprows=1)
    for pi in (0.05, 0.5):
        ap = precall.average_precision(y[:, 0], y[:, 1], prevalence=pi)
        assert f"a at prevalence {pi:g} (AP step = {ap:.3f})" in legend  # "a": the score column
    assert roc_ax.get_xlabel().startswith("False Positive Rate")
    message = main(["plot", str(csv_file), "--label", "y", "--score", "a", "--score", "b", "-o", str(out),
                    "--prevalence", "0.1"])
    assert message == 2 and "one model" in capsys.readouterr().err


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--score", "a", "-o", "x.jpg"], "must end in .png, .svg, .pdf"),
        (["--score", "nope", "-o", "x.png"], "nope"),
        (["--score", "a", "-o", "x.png", "--max-fpr", "2"], "--max-fpr"),
        (["--score", "a", "-o", "/nonexistent/dir/x.png"], "cannot write"),
    ],
)
def test_plot_command_errors_exit_2(csv_file, capsys, extra, message):
    assert main(["plot", str(csv_file), "--label", "y", *extra]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


# ------------------------------------------------------------------ precall report
class _Collector:
    """Text of every <td>, tags seen and any reference that would need the network."""

    def __init__(self, text):
        from html.parser import HTMLParser

        self.cells, self.tags, self.external, self.scripts = [], [], [], 0
        collector = self

        class Parser(HTMLParser):
            in_td = False

            def handle_starttag(self, tag, attrs):
                collector.tags.append(tag)
                if tag == "script":
                    collector.scripts += 1
                for key, value in attrs:
                    if key in ("src", "href", "xlink:href") and value and not value.startswith("#"):
                        collector.external.append(value)
                self.in_td = tag == "td"

            def handle_data(self, data):
                if self.in_td:
                    collector.cells.append(data)

            def handle_endtag(self, tag):
                self.in_td = False

        Parser().feed(text)


def test_report_is_self_contained_and_carries_the_numbers(tmp_path, binary, rng, capsys):
    y, s = binary
    other = np.round(rng.random(len(y)), 2)
    path = tmp_path / "models.csv"
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["y", "<script>alert(1)</script>", "b & c"])
        w.writerows(zip(y, s, other))
    out = tmp_path / "report.html"
    code = main(["report", str(path), "--label", "y", "--score", "<script>alert(1)</script>",
                 "--score", "b & c", "-o", str(out), "--rank-rows", "7"])
    assert code == 0, capsys.readouterr().err
    text = out.read_text()
    # the user's name is text everywhere: escaped in HTML, \u003c in the embedded JSON
    assert "<script>alert" not in text and "&lt;script&gt;alert(1)&lt;/script&gt;" in text
    assert "\\u003cscript>alert(1)\\u003c/script>" in text
    assert "b &amp; c" in text
    parsed = _Collector(text)
    # the only scripts are the report's own: its data (JSON) and its code, both inline
    assert parsed.scripts == 2 and text.count("<script") == 2 and parsed.external == []
    assert parsed.tags.count("svg") == 4  # the static pictures and the two interactive panels
    for scores in (s, other):
        ev = precall.evaluate(y, scores)
        for m in precall.AP_METHODS:
            assert f"{ev.average_precision[m]:.4f}" in parsed.cells
        assert f"{ev.roc_auc:.4f}" in parsed.cells
    table = precall.threshold_table(y, s)
    # rank tables at recall quantiles: the first threshold reaching recall k/7 of the highest
    for k in range(1, 8):
        row = int(np.flatnonzero(table.recall >= k / 7 * table.recall[-1] - 1e-12)[0])
        assert f"{table.thresholds[row]:.6g}" in parsed.cells
    assert f"{table.precision[-1]:.4f}" in parsed.cells and f"{table.tp[-1]}" in parsed.cells
    # DeLong's interval of each AUC, and the paired test of the two models
    for scores in (s, other):
        ci = precall.stats.roc_auc_ci(y, scores)
        assert f"[{ci.low:.4f}, {ci.high:.4f}]" in parsed.cells
    test = precall.stats.roc_auc_test(y, s, other)
    assert f"{test.p_value:.4g}" in parsed.cells and f"{test.difference:.4f}" in parsed.cells
    # summary, pair, conventions, the interactive readout, and two rank tables of 7 recalls (and the last row
    # when it differs)
    rows = (1 + 2) + (1 + 1) + (1 + 6) + (1 + 1)
    assert rows + 2 * (1 + 7) <= parsed.tags.count("tr") <= rows + 2 * (1 + 8)


def test_report_errors_exit_2(tmp_path, binary, capsys):
    y, s = binary
    path = tmp_path / "d.csv"
    with open(path, "w", newline="") as fh:
        csv.writer(fh).writerows([["y", "s"], *zip(y, s)])
    assert main(["report", str(path), "--label", "y", "--score", "s", "-o", str(tmp_path / "r.pdf")]) == 2
    assert "must end in .html" in capsys.readouterr().err
    assert main(["report", str(path), "--label", "y", "--score", "s", "-o", "/nonexistent/r.html"]) == 2
    assert "cannot write" in capsys.readouterr().err


def test_curve_results_plot_themselves(binary):
    y, s = binary
    pr = precall.precision_recall_curve(y, s)
    ax = pr.plot(label="m")
    line = _line(ax, "m")
    np.testing.assert_array_equal(line.get_xdata(), pr.recall)
    assert line.get_drawstyle() == "steps-post" and _legend(ax) == ["m"]
    roc = precall.roc_curve(y, s)
    ax = roc.plot(label="m")
    np.testing.assert_array_equal(_line(ax, "m").get_ydata(), roc.tpr)
    assert _legend(ax) == ["chance (AUC = 0.5)", "m"]


# ---------------------------------------------------------------------------
# prevalence overlays and the unachievable region
def test_pr_curve_at_several_prevalences_draws_the_api_curves(binary):
    y, s = binary
    ax = plot.pr_curve(y, s, label="m", prevalence=[0.01, 0.2])
    table = precall.threshold_table(y, s)
    for pi, t in [(y.mean(), table), (0.01, table.at_prevalence(0.01)), (0.2, table.at_prevalence(0.2))]:
        line = _line(ax, f"m at prevalence {pi:.3g} (AP step")
        curve = precall.precision_recall_curve(y, s, prevalence=None if t is table else pi)
        np.testing.assert_array_equal(line.get_xdata(), curve.recall)
        np.testing.assert_allclose(line.get_ydata(), curve.precision, rtol=1e-15)
        ap = precall.average_precision(y, s, prevalence=None if t is table else pi)
        assert line.get_label() == f"m at prevalence {pi:.3g} (AP step = {ap:.3f})"
        # the unachievable region: the area below r P / (r P + N') for these counts
        fill = next(c for c in ax.collections if c.get_label() == f"unachievable at prevalence {pi:.3g}")
        x, top = fill.get_paths()[0].vertices.T
        upper = top > 0
        np.testing.assert_allclose(top[upper], x[upper] * t.n_pos / (x[upper] * t.n_pos + t.n_neg), rtol=1e-12)
        assert top.max() == pytest.approx(t.n_pos / (t.n_pos + t.n_neg), rel=1e-12)  # reaches pi at recall 1
        # the baseline: precision = prevalence
        assert any(ln.get_ydata()[0] == pytest.approx(pi) for ln in ax.get_lines() if ln.get_linestyle() == ":")
    # the ROC panel beside: drawn once, the ROC curve of the data
    roc_ax = ax.figure.axes[1]
    roc_lines = [ln for ln in roc_ax.get_lines() if ln.get_label().startswith("m (every prevalence)")]
    assert len(roc_lines) == 1
    fpr, tpr, _ = precall.roc_curve(y, s)
    np.testing.assert_array_equal(roc_lines[0].get_xdata(), fpr)
    np.testing.assert_array_equal(roc_lines[0].get_ydata(), tpr)


def test_pr_curve_prevalence_needs_one_model(binary):
    y, s = binary
    with pytest.raises(ValueError, match="`prevalence` overlays one model's PR curve"):
        plot.pr_curve(y, {"a": s, "b": s[::-1]}, prevalence=0.1)
    with pytest.raises(ValueError, match="`prevalence` must be a finite number in"):
        plot.pr_curve(y, s, prevalence=[0.1, 1.0])
    fig, (a, b) = plt.subplots(1, 2)
    assert plot.pr_curve(y, s, prevalence=0.3, ax=a, roc_ax=b) is a
    assert len(b.get_lines()) == 2  # chance diagonal and the curve


def test_unachievable_region_on_a_plain_pr_plot(binary):
    y, s = binary
    ax = plot.pr_curve(y, s, unachievable=True)
    fill = next(c for c in ax.collections if c.get_label().startswith("unachievable"))
    x, top = fill.get_paths()[0].vertices.T
    upper = top > 0  # the polygon's upper edge (the rest is its base, precision 0)
    assert upper.sum() >= 200  # every drawn recall in (0, 1]
    np.testing.assert_allclose(top[upper], precall.min_precision(x[upper], n_pos=y.sum(), n_neg=(1 - y).sum()),
                               rtol=1e-12)


# the drawing is the kernel's: the points each convention averages (first ranked sample a negative)
FIRST_NEGATIVE = (np.array([0, 1, 1, 0, 1]), np.array([0.9, 0.8, 0.7, 0.6, 0.5]))


def test_eleven_points_drawn_average_to_voc2007_when_the_first_point_is_negative():
    y, s = FIRST_NEGATIVE
    ax = plot.pr_curve(y, s, eleven_point=True, baseline=False)
    points = _line(ax, "model 11 points")
    voc07 = precall.average_precision(y, s, method="voc2007")
    assert voc07 == pytest.approx(0.6424, abs=1e-4)  # Detectron's voc_ap(use_07_metric=True) on these points
    assert np.mean(points.get_ydata()) == pytest.approx(voc07, abs=1e-12)
    # scikit-learn's (recall 0, precision 1) sentinel is not one of the points: precision at recall 0 is 2/3
    assert points.get_ydata()[0] == pytest.approx(2 / 3)


@pytest.mark.parametrize("method", ["voc2007", "coco", "voc2010"])
def test_grid_and_envelope_methods_draw_the_kernel_points(method):
    y, s = FIRST_NEGATIVE
    ax = plot.pr_curve(y, s, method=method, baseline=False)
    line = _line(ax, f"model (AP {method}")
    value = precall.average_precision(y, s, method=method)
    terms = precall.threshold_table(y, s).ap_terms(method)
    x, p = line.get_xdata(), line.get_ydata()
    if method == "voc2010":  # the envelope as steps from recall 0: its area is the AP
        assert line.get_drawstyle() == "steps-pre"
        assert np.sum(np.diff(x) * p[1:]) == pytest.approx(value, abs=1e-12)
    else:
        np.testing.assert_array_equal(p, terms.precision)
        n = 11 if method == "voc2007" else 101
        assert len(p) == n and np.mean(p) == pytest.approx(value, abs=1e-12)


def test_coco_curve_is_not_the_step_curve():
    y, s = FIRST_NEGATIVE
    ax = plot.pr_curve(y, s, method="coco", baseline=False)
    line = _line(ax, "model (AP coco")
    step = precall.precision_recall_curve(y, s)
    assert len(line.get_ydata()) == 101 and len(line.get_ydata()) != len(step.precision)
