"""The HTML report's interactive curves, driven in headless Chromium (selenium).

Hover shows the threshold table's row (threshold, precision, recall, FPR, F1, TP/FP/FN/TN),
the threshold control moves the markers of both curves to the table's rows with their
confusion counts, zoom / pan / reset change the axes, the log-scale FPR toggle, show/hide per
curve, no console errors, and without JavaScript (and in print) the static pictures show.

Needs ``chromium`` and ``chromedriver`` (Debian: ``apt-get install chromium chromium-driver``)
and ``selenium``; the tests skip without them unless ``PRECALL_REQUIRE_BROWSER=1`` (CI), when
they fail instead.
"""

from __future__ import annotations

import os
import shutil

import numpy as np
import pytest

import precall
from precall._core.text import fixed, threshold_texts
from precall.plot.report import html_report

pytestmark = pytest.mark.browser

REQUIRED = os.environ.get("PRECALL_REQUIRE_BROWSER") == "1"


def _driver(javascript: bool = True):
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.options import Options
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        (pytest.fail if REQUIRED else pytest.skip)("selenium is not installed")
    binary = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
    driver_path = shutil.which("chromedriver")
    if binary is None or driver_path is None:
        (pytest.fail if REQUIRED else pytest.skip)("chromium and chromedriver are not installed")
    options = Options()
    options.binary_location = binary
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--window-size=1300,1800", "--force-device-scale-factor=1"):
        options.add_argument(arg)
    if not javascript:
        options.add_experimental_option("prefs", {"profile.managed_default_content_settings.javascript": 2})
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service(driver_path), options=options)


@pytest.fixture(scope="module")
def browser():
    driver = _driver()
    yield driver
    driver.quit()


def _data(n=160, seed=5):
    rng = np.random.default_rng(seed)
    y = (rng.random(n) < 0.35).astype(int)
    a = np.round(rng.normal(y * 1.5, 1.0), 3)  # ties: some rows share a score
    b = rng.normal(y * 0.7, 1.0)
    return y, {"strong": a, "weak": b}


def _open(driver, tmp_path, text, name="r.html"):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    driver.get_log("browser")  # only this page's messages from here
    driver.get(path.as_uri())
    driver.execute_script("document.getElementById('pc-app').scrollIntoView()")
    return path


def _errors(driver):
    return [e for e in driver.get_log("browser") if e["level"] in ("SEVERE", "ERROR")]


def _expected(table, i):
    """The readout of the table's row i, as the report's rank tables print it."""
    op = table._point(i)
    t = threshold_texts(table.thresholds, 6, [i])[0]
    count = lambda v: str(int(v)) if float(v).is_integer() else f"{v:.6g}"  # noqa: E731
    return {"threshold": t, "tp": count(op.tp), "fp": count(op.fp), "fn": count(op.fn), "tn": count(op.tn),
            "precision": fixed(op.precision, 4), "recall": fixed(op.recall, 4), "fpr": fixed(op.fpr, 4),
            "f1": fixed(op.f1, 4)}


def _readout(driver):
    return driver.execute_script(
        "var o = {}; document.querySelectorAll('#pc-readout [data-k]').forEach("
        "function (c) { o[c.getAttribute('data-k')] = c.textContent; }); return o;")


def _isolated_rows(tables, kind, spacing=0.02):
    """(series index, row) of rows whose point on ``kind`` lies at least ``spacing`` (axis
    units) from every other row's of every curve: a hover there can mean only that row."""
    points = []
    for j, t in enumerate(tables):
        x, yv = (t.recall, t.precision) if kind == "pr" else (t.fpr, t.recall)
        points += [(j, i, float(x[i]), float(yv[i])) for i in range(len(t))]
    xy = np.array([(p[2], p[3]) for p in points])
    out = []
    for k, p in enumerate(points):
        d = np.hypot(*(xy - xy[k]).T)
        d[k] = np.inf
        if d.min() > spacing:
            out.append(p[:2])
    return out


def test_hover_shows_the_threshold_table_row(browser, tmp_path):
    from selenium.webdriver.common.actions.action_builder import ActionBuilder

    y, scores = _data(n=40)
    _open(browser, tmp_path, html_report(y, scores))
    tables = [precall.threshold_table(y, s) for s in scores.values()]
    checked = 0
    for kind in ("pr", "roc"):
        rows = _isolated_rows(tables, kind)
        assert len(rows) >= 3
        for j, i in rows[:: max(1, len(rows) // 4)]:
            t = tables[j]
            x, yv = (t.recall[i], t.precision[i]) if kind == "pr" else (t.fpr[i], t.recall[i])
            px, py = browser.execute_script(f"return window.precallReport.toPixel('{kind}', {x}, {yv})")
            action = ActionBuilder(browser)
            action.pointer_action.move_to_location(int(round(px)), int(round(py)))
            action.perform()
            lines = browser.execute_script(
                "var t = document.getElementById('pc-tip'); return t.hidden ? null : "
                "Array.prototype.map.call(t.children, function (d) { return d.textContent; });")
            e = _expected(t, i)
            assert lines == [list(scores)[j], f"score \u2265 {e['threshold']}", f"precision {e['precision']}",
                             f"recall {e['recall']}", f"FPR {e['fpr']}", f"F1 {e['f1']}",
                             f"TP {e['tp']}  FP {e['fp']}  FN {e['fn']}  TN {e['tn']}"], (kind, j, i)
            checked += 1
    assert checked >= 6
    assert _errors(browser) == []


def test_threshold_control_moves_both_markers_to_the_table_rows(browser, tmp_path):
    from selenium.webdriver.common.keys import Keys

    y, scores = _data(seed=6)
    _open(browser, tmp_path, html_report(y, scores))
    for j, (name, s) in enumerate(scores.items()):
        table = precall.threshold_table(y, s)
        browser.execute_script(f"var e = document.getElementById('pc-series'); e.value = '{j}';"
                               "e.dispatchEvent(new Event('change'));")
        # it starts at the best F1 row
        f1 = table.evaluate().best_f1
        assert _readout(browser)["threshold"] == _expected(table, int(np.flatnonzero(table.thresholds ==
                                                                                  f1.threshold)[-1]))["threshold"]
        slider = browser.find_element("id", "pc-slider")
        n = int(slider.get_attribute("max")) + 1
        assert n == len(table)  # a small table: every row is there
        slider.send_keys(Keys.HOME)
        for step in range(n):
            if step:
                slider.send_keys(Keys.RIGHT)
            if step % 7 and step != n - 1:
                continue
            shown = _readout(browser)
            i = int(slider.get_attribute("value"))
            assert i == step
            e = _expected(table, i)
            assert shown == {"name": name, **e}
            for kind, (x, yv) in (("pr", (table.recall[i], table.precision[i])),
                                  ("roc", (table.fpr[i], table.recall[i]))):
                cx, cy = browser.execute_script(
                    f"var m = document.getElementById('pc-mark-{kind}'); return window.precallReport.toData("
                    f"'{kind}', +m.getAttribute('cx'), +m.getAttribute('cy'));")
                assert (cx, cy) == pytest.approx((x, yv), abs=1e-9)
    assert _errors(browser) == []


def test_every_rank_table_row_is_a_stop_of_the_control(browser, tmp_path):
    """A large curve is thinned, but the rows the rank table prints are kept (exact counts)."""
    rng = np.random.default_rng(8)
    y = (rng.random(60_000) < 0.3).astype(int)
    s = rng.normal(y, 1.0)
    _open(browser, tmp_path, html_report(y, {"m": s}, rank_rows=25))
    table = precall.threshold_table(y, s)
    stops = browser.execute_script("return JSON.parse(document.getElementById('pc-data').textContent)"
                                   ".series[0].t")
    assert len(stops) < len(table)  # thinned
    from precall.plot.report import _rank_indices

    texts = threshold_texts(table.thresholds, 6)
    for i in _rank_indices(table, 25)[::6]:  # the control stops there, with the table's numbers
        k = stops.index(texts[i])
        browser.execute_script(f"var s = document.getElementById('pc-slider'); s.value = {k};"
                               "s.dispatchEvent(new Event('input'));")
        assert _readout(browser) == {"name": "m", **_expected(table, i)}
    assert set(texts[i] for i in _rank_indices(table, 25)) <= set(stops)
    assert _errors(browser) == []


def test_zoom_pan_reset_and_log_fpr_change_the_axes(browser, tmp_path):
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.actions.wheel_input import ScrollOrigin

    y, scores = _data(seed=7)
    _open(browser, tmp_path, html_report(y, scores))
    view = lambda kind: browser.execute_script(f"return window.precallReport.view('{kind}')")  # noqa: E731
    ticks = lambda kind: browser.execute_script(  # noqa: E731
        f"return Array.prototype.map.call(document.querySelectorAll('#pc-{kind} .pc-xticks text'),"
        "function (t) { return t.textContent; })")
    start, start_ticks = view("pr"), ticks("pr")
    browser.find_element("css selector", "[data-chart=pr][data-zoom=in]").click()
    zoomed = view("pr")
    assert zoomed[1] - zoomed[0] == pytest.approx((start[1] - start[0]) / 2)
    assert ticks("pr") != start_ticks
    svg = browser.find_element("id", "pc-pr")
    ActionChains(browser).scroll_from_origin(ScrollOrigin.from_element(svg), 0, -120).perform()
    wheel = view("pr")
    assert wheel[1] - wheel[0] < zoomed[1] - zoomed[0]
    ActionChains(browser).move_to_element(svg).click_and_hold().move_by_offset(60, 0).release().perform()
    panned = view("pr")
    assert panned[0] < wheel[0] and panned[1] - panned[0] == pytest.approx(wheel[1] - wheel[0])
    ActionChains(browser).double_click(svg).perform()
    assert view("pr") == pytest.approx(start)
    assert view("roc") == pytest.approx(start)  # the other panel untouched
    # log-scale FPR
    browser.find_element("id", "pc-logfpr").click()
    log_view, log_ticks = view("roc"), ticks("roc")
    floor = browser.execute_script("return window.precallReport.logFloor")
    assert log_view[0] == pytest.approx(np.log10(floor)) and log_view[1] > 0
    assert any(t.startswith("1e-") for t in log_ticks) and "1" in log_ticks
    label = browser.execute_script("return document.querySelector('#pc-roc .pc-label').textContent")
    assert "log" in label
    browser.find_element("id", "pc-logfpr").click()
    assert view("roc") == pytest.approx(start)
    assert _errors(browser) == []


def test_show_and_hide_each_curve(browser, tmp_path):
    y, scores = _data(seed=9)
    _open(browser, tmp_path, html_report(y, scores))
    count = lambda i: browser.execute_script(  # noqa: E731
        f"return document.querySelectorAll('.pc-curve[data-series=\"{i}\"]').length")
    assert count(0) == 2 and count(1) == 2  # PR and ROC
    button = browser.find_element("css selector", "#pc-legend button[data-i='1']")
    assert button.text.startswith("weak (AP step")
    button.click()
    assert count(1) == 0 and count(0) == 2 and button.get_attribute("aria-pressed") == "false"
    button.click()
    assert count(1) == 2 and button.get_attribute("aria-pressed") == "true"
    assert _errors(browser) == []


def test_multiclass_report_is_interactive(browser, tmp_path):
    rng = np.random.default_rng(10)
    y = rng.integers(0, 4, 400)
    s = rng.random((400, 4)) + 0.8 * np.eye(4)[y]
    _open(browser, tmp_path, html_report(y, s, labels=[0, 1, 2, 3]))
    names = browser.execute_script(
        "return Array.prototype.map.call(document.querySelectorAll('#pc-legend button'), function (b) {"
        " return b.textContent; })")
    assert [n.split(" (")[0] for n in names] == ["class 0", "class 1", "class 2", "class 3", "micro-average",
                                                 "macro-average"]
    options = browser.execute_script(
        "return Array.prototype.map.call(document.querySelectorAll('#pc-series option'), function (o) {"
        " return o.textContent; })")
    assert options == ["class 0", "class 1", "class 2", "class 3", "micro-average"]  # the macro has no thresholds
    table = precall.per_class_tables(y, s, labels=[0, 1, 2, 3])[2]
    browser.execute_script("var e = document.getElementById('pc-series'); e.value = '2';"
                           "e.dispatchEvent(new Event('change'));"
                           "var s = document.getElementById('pc-slider'); s.value = 5;"
                           "s.dispatchEvent(new Event('input'));")
    assert _readout(browser) == {"name": "class 2", **_expected(table, 5)}
    assert _errors(browser) == []


def test_static_pictures_without_javascript_and_in_print(browser, tmp_path):
    y, scores = _data(seed=11)
    text = html_report(y, scores)
    _open(browser, tmp_path, text)
    shown = lambda: browser.execute_script(  # noqa: E731
        "return [document.getElementById('pc-app').offsetParent !== null,"
        " document.querySelector('.figures.static').offsetParent !== null]")
    assert shown() == [True, False]
    browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {"media": "print"})
    try:
        assert shown() == [False, True]
    finally:
        browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {"media": ""})
    plain = _driver(javascript=False)
    try:
        plain.get((tmp_path / "r.html").as_uri())
        assert plain.execute_script is not None
        app = plain.find_element("id", "pc-app")
        static = plain.find_elements("css selector", ".figures.static svg")
        assert not app.is_displayed() and len(static) == 2 and all(f.is_displayed() for f in static)
    finally:
        plain.quit()
