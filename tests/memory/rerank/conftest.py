"""The rerank tests' parts: rerank_server.py as a real process on a free port of this suite's
range, and records written and recalled through the HTTP API (memory.records.create,
memory.recall) on the served engine."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
# The ports a test's server may take (SPOKE_TEST_PORTS="lo-hi"; else any free port).
PORTS = os.environ.get("SPOKE_TEST_PORTS", "")


def port() -> int:
    """A TCP port free on the loopback now: the first free one of SPOKE_TEST_PORTS when set."""
    lo, _, hi = PORTS.partition("-")
    candidates = range(int(lo), int(hi) + 1) if lo.isdigit() and hi.isdigit() else [0]
    for candidate in candidates:
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", candidate))
            except OSError:
                continue
            return int(s.getsockname()[1])
    raise RuntimeError(f"no free port in {PORTS}")


class Server:
    """rerank_server.py as a subprocess; `url(mode, wire)` for a behaviour on a wire."""

    def __init__(self) -> None:
        self.port = port()
        self.proc = subprocess.Popen(  # noqa: S603 - our interpreter, our module
            [sys.executable, "-m", "tests.memory.rerank.rerank_server", str(self.port)],
            cwd=str(ROOT),
            env={**os.environ, "PYTHONPATH": str(ROOT)},
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.proc.stdout is not None
        assert self.proc.stdout.readline().strip() == "ready", "the server did not start"

    def url(self, mode: str = "ok", wire: str = "tei") -> str:
        path = "v1/rerank" if wire == "cohere" else "rerank"
        return f"http://127.0.0.1:{self.port}/{mode}/{path}"

    def last(self) -> dict:
        """The shape of the last request the server read."""
        with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/last", timeout=10) as r:  # noqa: S310
            return json.loads(r.read())

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=30)


@pytest.fixture(scope="module")
def server():
    running = Server()
    yield running
    running.stop()


@pytest.fixture
def reranker(settings):
    """Configure the reranker for one test: reranker(url=…) or reranker(model=…)."""
    settings.SPOKE_MEMORY_RERANK_URL = ""
    settings.SPOKE_MEMORY_RERANK_MODEL = ""
    settings.SPOKE_MEMORY_RERANK_WIRE = ""

    def configure(url: str = "", model: str = "", wire: str = "", **more) -> None:
        settings.SPOKE_MEMORY_RERANK_URL = url
        settings.SPOKE_MEMORY_RERANK_MODEL = model
        settings.SPOKE_MEMORY_RERANK_WIRE = wire
        for name, value in more.items():
            setattr(settings, f"SPOKE_MEMORY_RERANK_{name.upper()}", value)

    return configure


@pytest.fixture
def session(api, admin):
    return api.connect(admin)


@pytest.fixture
def write(api, admin, space, ensure_subject, session):
    """Create a note of u1 through memory.records.create; returns its record_id."""
    ensure_subject("u1")

    def create(text: str) -> str:
        body = {
            "space_id": space.space_id,
            "subject_id": "u1",
            "kind": "note",
            "content": {"text": text},
            "placement": {"scope": "context", "context_id": "c1"},
        }
        answer = api(admin, "memory.records.create", body, session=session)
        assert answer.status == 200, answer.body
        return answer.receipt["refs"][0]["id"]

    return create


@pytest.fixture
def recall(api, admin, space, session):
    """memory.recall of u1 over HTTP; asserts a 200 inside the answer schema (the api checks)."""

    def run(text: str, **extra) -> dict:
        body = {"space_id": space.space_id, "subject_id": "u1", "query": {"text": text}, **extra}
        answer = api(admin, "memory.recall", body, session=session)
        assert answer.status == 200, answer.body
        return answer.body["recall"]

    return run


def ids(answer: dict) -> list[str]:
    return [r["record"]["record_id"] for r in answer["results"]]
