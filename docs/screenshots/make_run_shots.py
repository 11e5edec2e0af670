"""The README's console pictures, taken from what `make run` serves: `python
docs/screenshots/make_run_shots.py [BASE_URL]` while `make run` runs in the same checkout (the
moderator's password is read from var/demo.json). Headless Debian Chromium through Playwright,
as the browser tests drive it. Writes docs/screenshots/make-run-*.png. Run the README's curl tour
first, so the queue shows the tour's candidate (and one `remember` by the demo's agent over MCP,
*Noor prefers mornings.* about user:noor, for a subject an agent made). Writes the home page too."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from playwright.sync_api import sync_playwright

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
from tests.reviews.browser.chromium import CHROMIUM, FLAGS  # noqa: E402 -- the tests' own launch

OUT = ROOT / "docs" / "screenshots"


def main() -> None:
    base = (sys.argv[1] if len(sys.argv) > 1 else "http://127.0.0.1:8000").rstrip("/")
    demo = json.loads((ROOT / "var" / "demo.json").read_text())
    console, space = demo["console"], demo["space_id"]
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        page = browser.new_page(viewport={"width": 1280, "height": 800})
        page.goto(f"{base}/console/login/")
        page.fill("input[name=username]", console["username"])
        page.fill("input[name=password]", console["password"])
        page.click("button[type=submit]")
        page.wait_for_load_state("networkidle")
        at = f"{base}/console/s/{space}"
        shots = {"make-run-home": f"{base}/", "make-run-queue": f"{at}/queue/"}
        page.goto(shots["make-run-queue"])
        # the README tour's capture (it has a similar record of Ada's), else the first one
        tour = page.locator("tr.candidate-row", has_text="Ada is learning Portuguese.")
        row = tour.first if tour.count() else page.locator("tr.candidate-row").first
        link = row.locator("a[href*='/candidates/']").first
        if link.count():
            shots["make-run-candidate"] = base + link.get_attribute("href")
        shots["make-run-subjects"] = f"{at}/subjects/"
        shots["make-run-records"] = f"{at}/records/"
        shots["make-run-grants"] = f"{at}/grants/"
        shots["make-run-space"] = f"{at}/space/"
        shots["make-run-operate"] = f"{base}/console/operate/{space}/"
        for name, url in shots.items():
            page.goto(url)
            page.wait_for_load_state("networkidle")
            page.screenshot(path=str(OUT / f"{name}.png"), full_page=False)
            print(f"{name}: {url} -> {page.title()!r}")
        browser.close()


if __name__ == "__main__":
    main()
