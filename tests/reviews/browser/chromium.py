"""How every browser run here starts Chromium: Debian's package (never a downloaded browser),
headless, with the flags this closed network needs. Shared by the browser tests and by
docs/screenshots/make_run_shots.py; imports nothing of Django."""

from __future__ import annotations

import os

CHROMIUM = os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium")
FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
