"""Fixtures for the hostile-input suite: a wired admin (root grant on `s1`, a session with every
flag, one ensured subject) and a row census to prove that rejected input wrote nothing."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest
from django.apps import apps

from tests.conftest import free_port

ROOT = Path(__file__).resolve().parents[2]


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


def shared_fact(text: str, key: str | None = None) -> dict:
    """A records.create body of a shared fact about `u1` in `s1` (with an idempotency key if
    given)."""
    body = {
        "space_id": "s1",
        "subject_id": "u1",
        "kind": "fact",
        "content": {"text": text},
        "placement": {"scope": "shared"},
    }
    if key:
        body["idempotency_key"] = key
    return body


@contextmanager
def gunicorn(tmp_path: Path, env: dict[str, str]) -> Iterator[int]:
    """gunicorn with the deployed configuration (spokememory/gunicorn_conf.py) and `env`, on a
    free loopback port, until it answers /healthz; yields the port, stops its process group."""
    port = free_port()
    log = (tmp_path / "gunicorn.log").open("w")
    proc = subprocess.Popen(  # noqa: S603 - our own interpreter and fixed arguments
        [
            sys.executable,
            "-m",
            "gunicorn",
            "-c",
            str(ROOT / "spokememory" / "gunicorn_conf.py"),
            "--bind",
            f"127.0.0.1:{port}",
        ],
        cwd=ROOT,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 120  # a bound so a broken server fails, not hangs
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=5):  # noqa: S310
                    break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    pytest.fail((tmp_path / "gunicorn.log").read_text()[-3000:])
                time.sleep(0.2)
        yield port
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(timeout=60)
        log.close()
