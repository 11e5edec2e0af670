"""End-to-end harness: Playwright for Python driving Debian's /usr/bin/chromium (never a
downloaded browser) against pytest-django's live_server. Without Chromium the tests skip with
the reason, except on CI (CI=true), where a missing browser is a failure."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from tests.reviews.browser.chromium import CHROMIUM, FLAGS
from tests.reviews.conftest import PASSWORD

# Screenshots go to var/screenshots, so a test run never rewrites the committed ones; to refresh
# the docs' pictures, run the browser tests with SPOKE_MEMORY_SCREENSHOTS_DIR=docs/screenshots.
SCREENSHOTS = Path(
    os.environ.get(
        "SPOKE_MEMORY_SCREENSHOTS_DIR",
        Path(__file__).resolve().parents[3] / "var" / "screenshots",
    )
)
ON_CI = os.environ.get("CI", "").lower() == "true"

pytestmark = pytest.mark.browser


def _missing() -> str | None:
    if not (Path(CHROMIUM).exists() or shutil.which(CHROMIUM)):
        return f"Chromium not found at {CHROMIUM} (apt-get install chromium, or set CHROMIUM_PATH)"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "playwright is not installed (pip install -e '.[test]')"
    return None


def launch_browser():
    """The session's one Chromium (the `browser` fixture of tests/conftest.py, shared with
    tests/test_first_run.py: Playwright's sync API allows one running instance per thread)."""
    reason = _missing()
    if reason:
        if ON_CI:
            pytest.fail(f"browser tests must run on CI: {reason}")
        pytest.skip(reason)
    # Playwright's sync API runs an event loop in this thread; the live server's ORM calls
    # happen in its own thread, but fixtures touching the ORM here need the async guard off.
    previous = os.environ.get("DJANGO_ALLOW_ASYNC_UNSAFE")
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    from playwright.sync_api import sync_playwright

    try:
        with sync_playwright() as pw:
            chromium = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=FLAGS)
            yield chromium
            chromium.close()
    finally:
        if previous is None:
            os.environ.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
        else:
            os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = previous


class Console:
    """A logged-in browser tab on the live server, with helpers in the domain's words."""

    def __init__(self, browser, live_server, username: str) -> None:
        self.base = live_server.url
        self.context = browser.new_context(viewport={"width": 1360, "height": 900})
        self.page = self.context.new_page()
        self.dialogs: list[str] = []
        self.page.on("dialog", lambda d: (self.dialogs.append(d.message), d.dismiss()))
        self.page.goto(f"{self.base}/console/login/")
        self.page.fill("input[name=username]", username)
        self.page.fill("input[name=password]", PASSWORD)
        self.page.click("button[type=submit]")
        self.page.wait_for_url(f"{self.base}/console/")

    def go(self, path: str) -> None:
        self.page.goto(f"{self.base}{path}")

    def shot(self, name: str) -> None:
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        self.page.screenshot(path=str(SCREENSHOTS / f"{name}.png"), full_page=True)

    def close(self) -> None:
        self.context.close()


@pytest.fixture
def console(browser, live_server, transactional_db):
    opened: list[Console] = []

    def open_as(username: str) -> Console:
        tab = Console(browser, live_server, username)
        opened.append(tab)
        return tab

    yield open_as
    for tab in opened:
        tab.close()
