"""Regenerate docs/report.png: the interactive report of the bundled yardstick data, as
headless Chromium shows it (pointer on the curve, the threshold control at the best F1).

    python docs/make_report_png.py        # needs precall[plot], selenium, chromium + chromedriver
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "..", "src", "precall", "data", "yardstick_two_class_example.csv")


def main() -> int:
    from selenium import webdriver
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.actions.action_builder import ActionBuilder

    folder = tempfile.mkdtemp()
    html = os.path.join(folder, "report.html")
    subprocess.run([sys.executable, "-m", "precall", "report", DATA, "--label", "truth", "--pos-label", "Class1",
                    "--score", "Class1", "--ci", "-o", html], check=True)
    options = Options()
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--window-size=1100,900",
                "--force-device-scale-factor=1", "--hide-scrollbars"):
        options.add_argument(arg)
    driver = webdriver.Chrome(service=Service(shutil.which("chromedriver")), options=options)
    try:
        driver.get("file://" + html)
        driver.execute_script("document.getElementById('pc-app').scrollIntoView()")
        # hover the Class1 curve at recall 0.75 on the PR panel: the readout of that row
        x, y = driver.execute_script(
            "var d = JSON.parse(document.getElementById('pc-data').textContent).series[0], i = 0;"
            "while (d.tp[i] / d.P < 0.75) { i++; }"
            "return window.precallReport.toPixel('pr', d.tp[i] / d.P, d.tp[i] / (d.tp[i] + d.fp[i]));")
        action = ActionBuilder(driver)
        action.pointer_action.move_to_location(int(x), int(y))
        action.perform()
        out = os.path.join(HERE, "report.png")
        driver.find_element("id", "pc-app").screenshot(out)
    finally:
        driver.quit()
    shutil.rmtree(folder)
    print(f"wrote {out} ({os.path.getsize(out) // 1024} KB)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
