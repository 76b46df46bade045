"""Pictures without defects (issue 25): what can be checked automatically of each kind.

Equal report panels, one legend entry per model with its band, distinct colours for up to
10 curves, digits that tell 0.9996 from 1, markers that never hide each other, the Youden and
closest-to-(0, 1) points (against brute force over scikit-learn's ROC curve), thresholds
printed on the curve, the best F1 at each prevalence, grid conventions not drawn past the
last recall, and detection pictures in the house style.  Long names (audit 20): shortened in every
legend and on every axis, the figure's size kept, no raw warning on stderr."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.colors import to_rgb  # noqa: E402
from sklearn.metrics import roc_curve as sk_roc_curve  # noqa: E402

import precall  # noqa: E402
from precall import plot  # noqa: E402
from precall._core.text import value_digits, values_text  # noqa: E402
from precall.cli import main  # noqa: E402
from precall.plot.report import html_report  # noqa: E402


@pytest.fixture(autouse=True)
def _close():
    yield
    plt.close("all")


def _data(n=600, seed=1, shift=1.2, models=1):
    rng = np.random.default_rng(seed)
    y = (rng.random(n) < 0.3).astype(int)
    scores = {f"m{k}": rng.normal(y * shift * (1 + 0.3 * k), 1.0) for k in range(models)}
    return y, scores


def _legend(ax):
    return [t.get_text() for t in ax.get_legend().get_texts()]


def _marks(ax):
    return [line for line in ax.get_lines() if line.get_linestyle() == "None" and len(line.get_xdata()) == 1]


# ------------------------------------------------------------------ equal panels
def _svg_sizes(text):
    return re.findall(r'<svg[^>]*?width="([\d.]+)pt" height="([\d.]+)pt"', text)


@pytest.mark.parametrize("kind", ["models", "classes"])
def test_report_panels_have_one_size(kind):
    if kind == "models":
        y, scores = _data(models=3)
        text = html_report(y, scores, max_fpr=0.2)
    else:
        rng = np.random.default_rng(2)
        y = rng.integers(0, 10, 800)
        scores = rng.random((800, 10)) + np.eye(10)[y]
        text = html_report(y, scores, labels=list(range(10)))
    sizes = _svg_sizes(text)
    assert len(sizes) == 2 and sizes[0] == sizes[1]  # the PR and the ROC panel: the same width and height


# ------------------------------------------------------------------ bands, colours, digits
@pytest.mark.parametrize("kind", ["pr", "roc"])
@pytest.mark.parametrize("models", [1, 3])
def test_one_legend_entry_per_model_with_its_band(kind, models):
    y, scores = _data(models=models, n=400)
    draw = plot.pr_curve if kind == "pr" else plot.roc_curve
    ax = draw(y, scores, ci=True, best_f1=False, **({"baseline": False} if kind == "pr" else {}))
    legend = ax.get_legend()
    texts = _legend(ax)
    assert [t.split(" (")[0] for t in texts if not t.startswith("chance")] == list(scores)
    assert legend.get_title().get_text().startswith("shaded: pointwise 95% bands")
    fills = [c for c in ax.collections if c.get_label().endswith("resamples)") or c.get_label() == "_band"]
    assert len(fills) == models
    # each model's entry is its band and its line, in the model's colour
    handles = {t: h for h, t in zip(*ax.get_legend_handles_labels())}
    for name in scores:
        line = next(h for t, h in handles.items() if t.startswith(name + " ("))
        band = line._precall_band
        assert np.allclose(to_rgb(band.get_facecolor()[0][:3]), to_rgb(line.get_color()))


def _lab(color):
    """CIELAB (D65) of an sRGB colour."""
    rgb = np.array(to_rgb(color))
    lin = np.where(rgb <= 0.04045, rgb / 12.92, ((rgb + 0.055) / 1.055) ** 2.4)
    xyz = np.array([[0.4124, 0.3576, 0.1805], [0.2126, 0.7152, 0.0722], [0.0193, 0.1192, 0.9505]]) @ lin
    xyz /= np.array([0.95047, 1.0, 1.08883])
    f = np.where(xyz > (6 / 29) ** 3, np.cbrt(xyz), xyz / (3 * (6 / 29) ** 2) + 4 / 29)
    return np.array([116 * f[1] - 16, 500 * (f[0] - f[1]), 200 * (f[1] - f[2])])


@pytest.mark.parametrize("n", [3, 5, 10])
def test_colours_of_up_to_ten_models_stay_distinct(n):
    y, scores = _data(models=n, n=300)
    ax = plot.roc_curve(y, scores)
    colours = [line.get_color() for line in ax.get_lines() if line.get_label().startswith("m")]
    assert len(colours) == n
    labs = [_lab(c) for c in colours]
    gray = _lab("0.55")  # the baselines
    for i in range(n):
        assert np.linalg.norm(labs[i] - gray) > 20
        for j in range(i):
            assert np.linalg.norm(labs[i] - labs[j]) > 20, (colours[i], colours[j])


@pytest.mark.parametrize("values, digits", [
    ([0.9996, 0.9991, 1.0], 4), ([0.75, 0.7, 0.8], 3), ([0.12345, 0.12346], 5), ([0.0004], 4),
    ([0.99999, 0.9999, 1.0], 5), ([1.0, 1.0, 1.0], 3), ([1 - 1e-15], 3), ([0.5, float("nan")], 3),
])
def test_digits_adapt_to_the_values_shown(values, digits):
    assert value_digits(values) == digits
    texts = values_text(values)
    for v, t in zip(values, texts):
        if np.isfinite(v):
            assert abs(float(t) - v) <= 0.5 * 10 ** -digits + 1e-15
    distinct = {v for v in values if np.isfinite(v)}
    assert len({t for v, t in zip(values, texts) if np.isfinite(v)}) == len({round(v, 9) for v in distinct})


def test_an_auc_of_0_9996_is_not_shown_as_1():
    rng = np.random.default_rng(3)
    y = np.r_[np.ones(500), np.zeros(500)]
    s = np.r_[rng.normal(4.6, 1, 500), rng.normal(0, 1, 500)]
    auc = precall.roc_auc(y, s)
    assert 0.9985 < auc < 0.99995
    ax = plot.roc_curve(y, s, label="m", ci=True)
    text = next(t for t in _legend(ax) if t.startswith("m ("))
    shown = re.findall(r"\d\.\d+", text)
    assert shown[0] != "1.000" and float(shown[0]) == pytest.approx(auc, abs=5e-5)


# ------------------------------------------------------------------ markers
def _hidden_pairs(ax):
    """Pairs of markers whose discs overlap in pixels where the one on top is not smaller:
    the one beneath would be (partly) hidden."""
    ax.figure.canvas.draw()
    marks = _marks(ax)
    out = []
    for i, a in enumerate(marks):
        for b in marks[i + 1:]:
            pa = ax.transData.transform((a.get_xdata()[0], a.get_ydata()[0]))
            pb = ax.transData.transform((b.get_xdata()[0], b.get_ydata()[0]))
            ra, rb = (m.get_markersize() * ax.figure.dpi / 72 / 2 for m in (a, b))
            if np.hypot(*(pa - pb)) < ra + rb:
                top, under = (a, b) if a.get_zorder() > b.get_zorder() else (b, a)
                if top.get_zorder() == under.get_zorder() or top.get_markersize() >= under.get_markersize() - 4:
                    out.append((a.get_label(), b.get_label()))
    return out


@pytest.mark.parametrize("kind", ["pr", "roc"])
def test_markers_never_hide_each_other(kind):
    y, scores = _data(n=500, seed=4)
    s = scores["m0"]
    table = precall.threshold_table(y, s)
    f1 = precall.evaluate(y, s).best_f1
    op = table.operating_point(threshold=f1.threshold)
    points = [("threshold", f1.threshold), ("recall", op.recall), ("best", "youden"), ("best", "closest"),
              ("threshold", float(np.median(s)))]
    draw = plot.pr_curve if kind == "pr" else plot.roc_curve
    ax = draw(y, s, label="m", best_f1=True, points=points)
    marks = _marks(ax)
    assert len(marks) == 1 + len(points)
    # the best F1 circle, the diamond at its threshold and the one at its recall coincide
    same = [m for m in marks if (m.get_xdata()[0], m.get_ydata()[0]) == ((op.recall, op.precision) if kind == "pr"
                                                                         else (op.fpr, op.recall))]
    assert len(same) >= 3
    assert len({m.get_markersize() for m in same}) == len(same)
    assert _hidden_pairs(ax) == []


def test_youden_and_closest_points_are_brute_force_over_scikit_learns_roc_curve():
    for seed in range(5):
        y, scores = _data(n=300, seed=seed)
        s = np.round(scores["m0"], 1)  # ties
        fpr, tpr, thr = sk_roc_curve(y, s, drop_intermediate=False)
        table = precall.threshold_table(y, s)
        j = tpr - fpr
        best = table.operating_point(best="youden")
        k = int(np.flatnonzero(j == j.max())[0])
        assert (best.threshold, best.recall, best.fpr) == (thr[k], tpr[k], fpr[k])
        d = (1 - tpr) ** 2 + fpr ** 2
        k = int(np.flatnonzero(d == d.min())[0])
        near = table.operating_point(best="closest")
        assert (near.threshold, near.recall, near.fpr) == (thr[k], tpr[k], fpr[k])
        ax = plot.roc_curve(y, s, label="m", best_f1=False, points=[("best", "youden")])
        mark = _marks(ax)[0]
        assert (mark.get_xdata()[0], mark.get_ydata()[0]) == (best.fpr, best.recall)
        assert mark.get_label().startswith(f"m: Youden J: J {plot.value_text(best.recall - best.fpr)}")


@pytest.mark.parametrize("kwargs, words", [
    ({"best": "middle"}, "`best` must be one of 'youden', 'closest'; got 'middle'"),
    ({"best": "youden", "recall": 0.5}, "give exactly one of"),
])
def test_best_point_errors_name_the_parameter(kwargs, words):
    table = precall.threshold_table([0, 1, 1, 0], [0.1, 0.9, 0.4, 0.3])
    with pytest.raises(ValueError, match=re.escape(words)):
        table.operating_point(**kwargs)
    with pytest.raises(ValueError, match="needs positives and negatives"):
        precall.threshold_table([1, 1], [0.2, 0.3]).operating_point(best="youden")


def test_thresholds_are_printed_on_the_curve_on_request():
    y, scores = _data(n=300, seed=5)
    s = scores["m0"]
    table = precall.threshold_table(y, s)
    ax = plot.pr_curve(y, s, best_f1=True, points=[("best", "youden")], print_thresholds=True)
    printed = sorted(t.get_text() for t in ax.texts)
    f1 = precall.evaluate(y, s).best_f1
    youden = table.operating_point(best="youden")
    expected = sorted(plot._threshold_shown(table, t) for t in (f1.threshold, youden.threshold))
    assert printed == expected and float(printed[0]) == pytest.approx(min(f1.threshold, youden.threshold), rel=1e-3)
    assert not plot.pr_curve(y, s, best_f1=True).texts


def test_prevalence_panels_mark_the_best_f1_of_each_curve():
    y, scores = _data(n=800, seed=6)
    s = scores["m0"]
    ax = plot.pr_curve(y, s, label="m", prevalence=[0.01, 0.1], best_f1=True)
    table = precall.threshold_table(y, s)
    for pi, t in ((None, table), (0.01, table.at_prevalence(0.01)), (0.1, table.at_prevalence(0.1))):
        f1 = t.evaluate().best_f1
        op = t.operating_point(threshold=f1.threshold)
        assert any((m.get_xdata()[0], m.get_ydata()[0]) == (op.recall, op.precision) for m in _marks(ax)), pi
    # the unachievable region at 1% has a solid edge along its floor
    edges = [line for line in ax.get_lines() if line.get_label() == "_unachievable edge"]
    assert len(edges) == 3 and max(edges[1].get_ydata()) == pytest.approx(
        precall.min_precision(1.0, n_pos=table.n_pos, n_neg=table.at_prevalence(0.01).n_neg))
    assert _hidden_pairs(ax) == []


@pytest.mark.parametrize("method", ["coco", "voc2007"])
def test_grid_curves_stop_at_the_last_recall_reached(method):
    # P above the last TP (ground truths never detected): the grid points past it are 0
    table = precall.ThresholdTable(thresholds=np.array([0.9, 0.8, 0.7]), tp=np.array([1.0, 2, 2]),
                                   fp=np.array([0.0, 0, 1]), n_pos=5.0, n_neg=1.0)
    fig, ax = plt.subplots()
    plot.setup_pr_axes(ax)
    plot.draw_pr(ax, table, label="d", method=method)
    line = next(line for line in ax.get_lines() if line.get_label().startswith("d ("))
    terms = table.ap_terms(method)
    x = line.get_xdata()
    assert x.max() <= 0.4 + 1e-12 and min(line.get_ydata()) > 0  # recall 2/5 is the last reached
    np.testing.assert_array_equal(line.get_ydata(), terms.precision[:len(x)])  # the kernel's own points
    assert np.sum(terms.precision[len(x):]) == 0


def test_detection_pictures_have_the_house_style(tmp_path, monkeypatch, capsys):
    from matplotlib.figure import Figure

    saved = []
    original = Figure.savefig
    monkeypatch.setattr(Figure, "savefig", lambda self, *a, **k: (saved.append((self, k)), original(self, *a, **k)))
    images = [{"id": i, "width": 100, "height": 100} for i in range(4)]
    gts = [{"id": i + 1, "image_id": i, "category_id": 1, "bbox": [10, 10, 30, 30], "area": 900, "iscrowd": 0}
           for i in range(4)]
    gt = {"images": images, "annotations": gts, "categories": [{"id": 1, "name": "cat"}]}
    dets = [{"image_id": i, "category_id": 1, "bbox": [10 + i, 10, 30, 30], "score": 0.9 - 0.1 * i} for i in range(3)]
    (tmp_path / "gt.json").write_text(json.dumps(gt))
    (tmp_path / "dt.json").write_text(json.dumps(dets))
    assert main(["detection", "coco", str(tmp_path / "gt.json"), str(tmp_path / "dt.json"), "--plot",
                 str(tmp_path / "plots")]) == 0, capsys.readouterr().err
    fig, kwargs = saved[0]
    ax = fig.axes[0]
    legend = ax.get_legend()
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    renderer = FigureCanvasAgg(fig).get_renderer()
    assert legend.get_window_extent(renderer).y1 < ax.get_window_extent(renderer).y0  # below the axes
    assert kwargs.get("bbox_inches") == "tight"
    for line in ax.get_lines():
        if line.get_label().startswith("IoU"):  # the coco curves stop at the last recall reached (3/4)
            assert line.get_xdata().max() <= 0.75 + 1e-12 and min(line.get_ydata()) > 0


def test_evaluate_prints_the_youden_and_closest_points(tmp_path, capsys):
    y, scores = _data(n=200, seed=7)
    s = scores["m0"]
    path = tmp_path / "s.csv"
    np.savetxt(path, np.c_[y, s], delimiter=",", header="y,s", comments="", fmt=["%d", "%.17g"])
    assert main(["evaluate", str(path), "--label", "y", "--score", "s", "--at-best", "youden", "--at-best",
                 "closest", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)["operating_points"]
    table = precall.threshold_table(y, s)
    for entry, name in zip(out, ("youden", "closest")):
        op = table.operating_point(best=name)
        assert entry["target"] == "best" and entry["value"] == name and entry["threshold"] == op.threshold
        assert (entry["tp"], entry["fp"], entry["recall"], entry["fpr"]) == (op.tp, op.fp, op.recall, op.fpr)
    assert main(["evaluate", str(path), "--label", "y", "--score", "s", "--at-best", "youden"]) == 0
    text = capsys.readouterr().out
    op = table.operating_point(best="youden")
    assert f"best Youden J (TPR - FPR): score >= " in text and f"recall {op.recall:.6f}" in text.replace("\n  ", " ")


# ------------------------------------------------------------------ long names (audit 20)
LONG = "x" * 300  # a class, model, slice or label name of 300 characters


def _long_shown(texts):
    """Whether any of ``texts`` shows a long run of the long name (a name not shortened)."""
    return any("x" * 25 in t for t in texts)


def _classes_file(path, names, n=400, seed=3):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, len(names), n)
    s = rng.random((n, len(names))) + 0.3 * np.eye(len(names))[y]
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(",".join(["y", *names]) + "\n")
        for a, row in zip(y, s):
            fh.write(",".join([names[a], *(f"{v:.4f}" for v in row)]) + "\n")
    return str(path)


def _png_size(path):
    import struct

    head = path.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", head[16:24])  # width, height of the IHDR chunk


def _plot_process(path, classes, out, *extra):
    import subprocess
    import sys

    return subprocess.run([sys.executable, "-m", "precall", "plot", path, "--label", "y", "--class-columns",
                           ",".join(classes), "-o", str(out), *extra], capture_output=True, text=True, check=False)


def test_a_long_class_name_keeps_the_plots_size_and_stderr_one_line(tmp_path):
    """``precall plot`` of a 300-character class name: the legend shortens it (the PNG was 3167 px wide,
    the two legends overlapped and matplotlib's raw 'Tight layout not applied' warning and its source
    line went to stderr); the picture has the size of the same plot with short names."""
    short = ["a", "b", "c", "d"]
    named = ["a", "b", LONG, "d"]
    sizes = {}
    for key, classes in (("short", short), ("long", named)):
        out = tmp_path / f"{key}.png"
        proc = _plot_process(_classes_file(tmp_path / f"{key}.csv", classes), classes, out)
        assert proc.returncode == 0, proc.stderr
        assert proc.stderr.splitlines() == [f"wrote {out}"]  # no raw warning, no source line
        sizes[key] = _png_size(out)
    (w_short, h_short), (w_long, h_long) = sizes["short"], sizes["long"]
    assert w_long <= 1.05 * w_short and h_long <= h_short + 40, sizes


def test_a_legend_taller_than_the_figure_gives_no_warning(tmp_path):
    """80 classes, every entry (--full): a legend of 41 rows under each panel; the layout is made for the
    panels, the file cropped to the legends (matplotlib warned 'Tight layout not applied' on stderr)."""
    classes = [f"class_{k}" for k in range(80)]
    out = tmp_path / "many.png"
    proc = _plot_process(_classes_file(tmp_path / "many.csv", classes, n=800), classes, out, "--full")
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.splitlines() == [f"wrote {out}"]
    width, height = _png_size(out)
    assert height > width  # the legends are in the file, below the panels


def test_a_legend_of_many_classes_is_capped_and_the_picture_bounded(tmp_path, capsys, monkeypatch):
    """300 classes: the legends listed every class (a PNG some 3800 px tall).  Now each shows the first
    :data:`precall.plot.LEGEND_ENTRIES` classes, one entry '... and 280 more', then the micro-average and
    the baseline, every curve drawn: the PNG about the size of a plot of 4 classes.  --full (library:
    max_legend=None) lists every class."""
    from matplotlib.figure import Figure

    classes = [f"c{k}" for k in range(300)]
    path = _classes_file(tmp_path / "many.csv", classes, n=1500)
    sizes = {}
    for key, names in (("few", classes[:4]), ("many", classes)):
        out = tmp_path / f"{key}.png"
        few = path if key == "many" else _classes_file(tmp_path / "few.csv", names)
        assert main(["plot", few, "--label", "y", "--class-columns", ",".join(names), "-o", str(out)]) == 0
        sizes[key] = _png_size(out)
    capsys.readouterr()
    (w_few, h_few), (w_many, h_many) = sizes["few"], sizes["many"]
    assert w_many <= 1.05 * w_few and h_many <= h_few + 250 and h_many < w_many, sizes
    saved = []
    monkeypatch.setattr(Figure, "savefig", lambda self, *a, **k: saved.append(self))  # the legends only
    for extra in ([], ["--full"]):
        assert main(["plot", path, "--label", "y", "--class-columns", ",".join(classes), "-o",
                     str(tmp_path / "m.png"), *extra]) == 0
        pr, roc = (_legend_texts(ax) for ax in saved[-1].axes)
        drawn = [line for line in saved[-1].axes[0].get_lines() if line.get_label().startswith("class ")]
        assert len(drawn) == 300  # every curve drawn
        if extra:
            assert len(pr) == 300 + 2 and len(roc) == 1 + 300 + 1 and not any("more" in t for t in pr + roc)
            continue
        assert pr[:20] == [t for t in pr if t.startswith("class ")] and pr[0].startswith("class c0 ")
        assert pr[20:] == ["... and 280 more", pr[21], pr[22]] and pr[21].startswith("micro-average")
        assert pr[22].startswith("random classifier") and len(roc) == 1 + 20 + 1 + 1 and roc[21] == pr[20]
    ax = plot.roc_curve(*_multi_data(k=30), max_legend=None)
    assert sum(t.startswith("class ") for t in _legend_texts(ax)) == 30
    ax = plot.pr_curve(*_multi_data(k=30), max_legend=5)
    assert [t for t in _legend_texts(ax) if not t.startswith("class ")][0] == "... and 25 more"
    with pytest.raises(ValueError, match="max_legend"):
        plot.pr_curve(*_multi_data(k=3), max_legend=0)


def _legend_texts(ax):
    return [t.get_text() for t in ax.get_legend().get_texts()]


def _multi_data(k, n=300, seed=4):
    rng = np.random.default_rng(seed)
    y = np.arange(n) % k
    return y, rng.random((n, k)) + 0.5 * np.eye(k)[y]


def test_long_names_in_the_cli_legends_neither_overlap_nor_show_whole(tmp_path, capsys, monkeypatch):
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    saved = []
    original = Figure.savefig
    monkeypatch.setattr(Figure, "savefig", lambda self, *a, **k: (saved.append(self), original(self, *a, **k))[1])
    classes = ["<script>", "a\"b'c", "\u00fcn\u00ef", LONG, "{{c}}&amp;"]
    path = _classes_file(tmp_path / "hostile.csv", classes)
    assert main(["plot", path, "--label", "y", "--class-columns", ",".join(classes), "-o",
                 str(tmp_path / "h.png")]) == 0, capsys.readouterr().err
    fig = saved[0]
    pr_ax, roc_ax = fig.axes
    for ax in (pr_ax, roc_ax):
        assert not _long_shown(_legend(ax)) and any("..." in t for t in _legend(ax))
    renderer = FigureCanvasAgg(fig).get_renderer()
    left, right = (ax.get_legend().get_window_extent(renderer) for ax in (pr_ax, roc_ax))
    assert left.x1 < right.x0  # side by side, apart


def _binary(n=300, seed=5):
    rng = np.random.default_rng(seed)
    y = (rng.random(n) < 0.4).astype(int)
    return y, rng.random(n) + 0.5 * y, rng.random(n) + 0.3 * y


def _three(n=300, seed=6):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 3, n)
    return y, rng.random((n, 3)) + 0.4 * np.eye(3)[y]


def _drawn_texts(ax):
    """Every text of a figure a user reads: legends, tick labels, axis labels, titles."""
    texts = []
    for a in ax.figure.axes:
        if a.get_legend() is not None:
            texts += [t.get_text() for t in a.get_legend().get_texts()]
        texts += [t.get_text() for t in a.get_yticklabels() + a.get_xticklabels()]
        texts += [a.get_xlabel(), a.get_ylabel(), a.get_title(), a.get_title(loc="left")]
    return texts


def _models_pr(**kw):
    y, a, b = _binary()
    return plot.pr_curve(y, {LONG: a, "b": b}, best_f1=True, points=[("recall", 0.5)], envelope=True, **kw)


def _models_roc(**kw):
    y, a, b = _binary()
    return plot.roc_curve(y, {LONG: a, "b": b}, best_f1=True, max_fpr=0.2, ci=True, **kw)


def _classes_pr(**kw):
    y, s = _three()
    return plot.pr_curve(np.array(["p", LONG, "q"])[y], s, labels=["p", LONG, "q"], macro=True, **kw)


def _classes_roc(**kw):
    y, s = _three()
    return plot.roc_curve(np.array(["p", LONG, "q"])[y], s, labels=["p", LONG, "q"], macro=True, **kw)


def _prevalences(**kw):
    y, a, _ = _binary()
    return plot.pr_curve(y, a, label=LONG, prevalence=[0.05], best_f1=True, **kw)


def _positive_label(**kw):
    y, a, _ = _binary()
    return plot.pr_curve(np.where(y == 1, LONG, "neg"), a, pos_label=LONG, **kw)


def _forest(**kw):
    y, a, _ = _binary(n=600)
    group = np.array([LONG, "short"])[np.arange(600) % 2]
    return plot.forest(precall.evaluate(y, a, by={LONG: group}), **kw)[0]


def _confusion(**kw):
    from types import SimpleNamespace

    from precall.plot.detection import draw_confusion_matrix

    cm = SimpleNamespace(matrix=np.array([[3, 1, 0], [0, 2, 1], [1, 0, 0]]), labels=[LONG, "b", "background"],
                         confidence=0.25, iou_threshold=0.45)
    return draw_confusion_matrix(cm, **kw)


@pytest.mark.parametrize("draw", [_models_pr, _models_roc, _classes_pr, _classes_roc, _prevalences, _positive_label,
                                  _forest, _confusion])
def test_every_legend_and_axis_shortens_a_long_name_unless_asked_not_to(draw):
    """Legends (models, classes, operating points, prevalences, envelope), axis labels (the positive
    label), the forest plot's slices and the confusion matrix's classes: a long name keeps its start and
    end around ``...`` within :data:`precall.plot.NAME_WIDTH` characters; ``max_name=None``: whole."""
    texts = _drawn_texts(draw())
    assert not _long_shown(texts) and any("x" * 10 + "..." + "x" * 10 in t for t in texts)
    plt.close("all")
    assert any(LONG in t for t in _drawn_texts(draw(max_name=None)))


def test_names_alike_once_shortened_stay_apart_in_the_legend():
    y, a, b = _binary()
    ax = plot.pr_curve(y, {"A" * 60 + "1" + "Z" * 60: a, "A" * 60 + "2" + "Z" * 60: b}, baseline=False)
    entries = _legend(ax)
    assert len(set(entries)) == 2 and all(t.split(" (AP")[0].endswith(("#1", "#2")) for t in entries)
    with pytest.raises(ValueError, match="max_name"):
        plot.pr_curve(y, a, max_name=3)


def test_the_report_shortens_long_names_in_its_pictures_and_keeps_them_in_its_tables():
    y, a, b = _binary()
    text = html_report(y, {LONG: a, "b": b})
    pictures = re.findall(r"<svg.*?</svg>", text, flags=re.S)
    assert len(pictures) >= 2 and not any("x" * 25 in svg for svg in pictures)
    data = json.loads(re.search(r'<script type="application/json" id="pc-data">(.*?)</script>', text).group(1))
    first = data["series"][0]
    assert first["full"] == LONG and not _long_shown([first["name"], first["label"]])
    assert f"<td>{LONG}</td>" in text  # the summary table: the whole name
