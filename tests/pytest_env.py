"""Loaded by pytest before Django's settings (`-p tests.pytest_env` in pyproject's addopts):
the suite's signing key. A deployment's settings refuse to start without SECRET_KEY (a server
DATABASE_URL with DEBUG off, as the PostgreSQL leg of the suite is); the suite is not one, and
its subprocess servers and workers inherit this key."""

import os

os.environ.setdefault("SECRET_KEY", "test-suite-only-" + "k" * 48)
