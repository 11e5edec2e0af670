"""Against gunicorn as deployed (issue 49, parts 3 and 4): a fresh web worker makes its encoder
before it serves its first request; the subject's vector cache stays warm across requests in
the process; after a write only the changed row's vector is read. What the worker read is its
own log (LOG_LEVEL=DEBUG: memory.embeddings says each load of a subject's vectors and how many
it read), never a time."""

# Loopback URLs only.
# ruff: noqa: S310

from __future__ import annotations

import json
import re
import urllib.request

import pytest

from memory.services import hybrid_store
from tests.conftest import make_space
from tests.hostile.conftest import gunicorn
from tests.reviews.jobs import _jobs

from .conftest import needs_semantic

pytestmark = [needs_semantic, pytest.mark.django_db(transaction=True)]


def op(port: int, token: str, name: str, body: dict) -> dict:
    req = urllib.request.Request(
        f"http://127.0.0.1:{port}/v1/ops/{name}",
        data=json.dumps(body).encode(),
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
    )
    with urllib.request.urlopen(req, timeout=60) as answer:
        return json.loads(answer.read())


def loads(log: str) -> list[tuple[int, str]]:
    """(vectors read, how) of each load of a subject's vectors the worker logged."""
    return [
        (int(n), how)
        for n, how in re.findall(
            r"vector cache of subject \d+: \d+ vectors, (\d+) read now \((.+?)\)", log
        )
    ]


def test_a_served_worker_is_ready_and_keeps_its_vectors_warm(tmp_path, settings):
    from tests.conftest import Persona, factories

    settings.SPOKE_MEMORY_ENGINE = "hybrid/6"
    space = make_space("s1")
    admin = Persona(*factories.make_admin(space, "admin"))
    env = _jobs.worker_env(
        WEB_CONCURRENCY="1", GUNICORN_THREADS="4", SPOKE_MEMORY_ENGINE="hybrid/6", LOG_LEVEL="DEBUG"
    )
    log_path = tmp_path / "gunicorn.log"
    with gunicorn(tmp_path, env) as port:
        op(port, admin.token, "memory.subjects.ensure", {"space_id": "s1", "subject_id": "u1"})
        for i in range(12):
            op(
                port,
                admin.token,
                "memory.records.create",
                {
                    "space_id": "s1",
                    "subject_id": "u1",
                    "kind": "note",
                    "content": {"text": f"note {i} about the garden and the rain"},
                    "placement": {"scope": "shared"},
                },
            )
        settings.SPOKE_MEMORY_ENGINE = "hybrid/6"
        assert hybrid_store.drain() == 12  # the worker's drain, here
        recall = {"space_id": "s1", "subject_id": "u1", "query": {"text": "garden rain"}}
        for _ in range(4):
            assert op(port, admin.token, "memory.recall", recall)["recall"]["results"]
        assert loads(log_path.read_text()) == [(12, "full load")]  # once, then warm

        op(
            port,
            admin.token,
            "memory.records.create",
            {
                "space_id": "s1",
                "subject_id": "u1",
                "kind": "note",
                "content": {"text": "a new note about the river"},
                "placement": {"scope": "shared"},
            },
        )
        assert hybrid_store.drain() == 1
        for _ in range(3):
            assert op(port, admin.token, "memory.recall", recall)["recall"]["results"]
        log = log_path.read_text()
        assert loads(log) == [(12, "full load"), (1, "by generation")]
    # the encoder was made before the worker's first request (the start-up probe of /healthz)
    ready = log.find("encoder all-MiniLM-L6-v2-int8 ready in worker")
    first_request = log.find('"GET /healthz')
    assert 0 <= ready < first_request, log[-3000:]
