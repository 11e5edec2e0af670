"""Fixtures for the hostile-input suite: a wired admin (root grant on `s1`, a session with every
flag, one ensured subject) and a row census to prove that rejected input wrote nothing."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from django.apps import apps


def census() -> dict[str, int]:
    """Row count of every table of the project's apps (memory, auth, sessions included)."""
    return {m._meta.label: m._default_manager.count() for m in apps.get_models()}


@dataclass
class Wired:
    admin: object
    session: str
    space_id: str = "s1"
    subject_id: str = "u1"

    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.admin.token}", "Spoke-Session": self.session}


@pytest.fixture
def wired(api, admin, ensure_subject) -> Wired:
    ensure_subject("u1")
    return Wired(admin=admin, session=api.connect(admin))


@pytest.fixture
def keep_test_connection():
    """Calling the WSGI application directly (not through django.test.Client) would close the
    test transaction's connection at request end; the test client disconnects the same hook."""
    from django.core import signals
    from django.db import close_old_connections

    signals.request_started.disconnect(close_old_connections)
    signals.request_finished.disconnect(close_old_connections)
    try:
        yield
    finally:
        signals.request_started.connect(close_old_connections)
        signals.request_finished.connect(close_old_connections)
