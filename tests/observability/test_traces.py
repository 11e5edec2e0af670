"""Issue 45, item 3: OpenTelemetry traces. A client's W3C `traceparent` on a REST capture and
its review is honoured (the spans `memory.capture` and `memory.candidates.review` continue the
client's trace), and the Celery task the review enqueues carries it to a real worker, whose
drain embeds the promoted record in a span of that same trace. The web side runs in this process
with the SDK's InMemorySpanExporter; the worker is another process, so it exports with the SDK's
ConsoleSpanExporter to a file (SPOKE_MEMORY_TRACES_FILE) that the test reads: no collector, no
OTLP endpoint. Under gunicorn, REST and MCP (/mcp/) both honour `traceparent`."""

from __future__ import annotations

import json
import secrets
import urllib.request
from pathlib import Path

import pytest
from django.test import Client
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from memory.models import PendingEmbedding, RecordEmbedding
from memory.observability import tracing
from spokememory.celery import app as celery_app
from tests import factories
from tests.conftest import embedding_writer, make_space
from tests.hostile.conftest import gunicorn
from tests.mcp.conftest import MODERN, Agent, http_client
from tests.memory.hybrid.conftest import needs_semantic
from tests.memory.jobs import wait_for, worker_env
from tests.observability.test_metrics import post


def traceparent() -> tuple[str, str]:
    trace_id = secrets.token_hex(16)
    return trace_id, f"00-{trace_id}-{secrets.token_hex(8)}-01"


def file_spans(path: Path) -> list[dict]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def trace_of(span: dict) -> str:
    return span["context"]["trace_id"].removeprefix("0x")


@pytest.fixture
def spans():
    exporter = InMemorySpanExporter()
    assert tracing.setup("test", exporter=exporter)
    yield exporter
    tracing.teardown()


@needs_semantic
@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_one_trace_from_a_rest_capture_through_the_workers_embedding(
    spans, settings, start_worker, tmp_path
):
    settings.SPOKE_MEMORY_DRAIN_WAKE_MS = 0  # the wake-up is sent from the request's own thread
    space = make_space("s1")
    _, token = factories.make_admin(space, "admin")
    trace_id, parent = traceparent()
    client = Client()
    headers = {"HTTP_AUTHORIZATION": f"Bearer {token}", "HTTP_TRACEPARENT": parent}

    def op(name: str, body: dict) -> dict:
        response = client.post(
            f"/v1/ops/{name}", json.dumps(body), content_type="application/json", **headers
        )
        assert response.status_code == 200, response.content
        return response.json()

    worker_file = tmp_path / "worker-spans.jsonl"
    celery_app.control.purge()  # no message of an earlier test (an untraced drain) is waiting
    with embedding_writer(settings, "hybrid/6"):
        start_worker(
            SPOKE_MEMORY_ENGINE="hybrid/6",
            OTEL_TRACES_EXPORTER="console",
            SPOKE_MEMORY_TRACES_FILE=str(worker_file),
        )
        op("memory.subjects.ensure", {"space_id": "s1", "subject_id": "u1"})
        captured = op(
            "memory.capture",
            {
                "space_id": "s1",
                "subject_id": "u1",
                "capture_scope": {"placement": {"scope": "shared"}},
                "items": [{"content": {"text": "prefers window seats on long flights"}}],
            },
        )
        candidate_id = captured["receipt"]["refs"][0]["id"]
        op(
            "memory.candidates.review",
            {"space_id": "s1", "candidate_id": candidate_id, "decision": {"action": "promote"}},
        )
        wait_for(
            lambda: RecordEmbedding.objects.exists() and not PendingEmbedding.objects.exists(),
            timeout=300,
            what="the worker to embed the promoted record",
        )
        drained = wait_for(
            lambda: [
                s
                for s in file_spans(worker_file)
                if s["name"] == "memory.drain_derived"
                and s["attributes"].get("memory.embeddings.made", 0) >= 1
                and trace_of(s) == trace_id
            ],
            timeout=60,
            what="the worker's drain span, in the client's trace",
        )
        # the task's run span ends after the drain span it encloses, and is exported after it:
        # wait for it too while the worker runs (read at once, it was missing under load)
        wait_for(
            lambda: any(
                s["name"].startswith("run/memory.tasks.drain_derived") and trace_of(s) == trace_id
                for s in file_spans(worker_file)
            ),
            timeout=60,
            what="the worker's task run span, in the client's trace",
        )

    web = spans.get_finished_spans()
    by_name = {s.name: s for s in web if format(s.context.trace_id, "032x") == trace_id}
    # the client's trace continues through both ops
    assert {"memory.capture", "memory.candidates.review"} <= set(by_name)
    review = by_name["memory.candidates.review"]
    assert review.attributes["memory.outcome"] == "ok"
    assert review.attributes["memory.space.id"] == "s1"
    # the task the review enqueued was published inside the review's span
    publish = [
        s
        for s in web
        if format(s.context.trace_id, "032x") == trace_id
        and s.attributes.get("celery.action") == "apply_async"
    ]
    assert publish, [s.name for s in web]
    # ... and the worker's drain that embedded the record is in the same trace
    assert trace_id in {trace_of(s) for s in drained}
    worker_spans = [s for s in file_spans(worker_file) if trace_of(s) == trace_id]
    run = [s for s in worker_spans if s["name"].startswith("run/memory.tasks.drain_derived")]
    assert run and run[0]["parent_id"].removeprefix("0x") in {
        format(s.context.span_id, "016x") for s in publish
    }
    # no span carries memory content
    text = json.dumps(worker_spans) + repr([dict(s.attributes or {}) for s in web])
    assert "window seats" not in text


@pytest.mark.django_db(transaction=True)
def test_rest_and_mcp_honour_traceparent_under_gunicorn(tmp_path):
    space = make_space("s1")
    _, token = factories.make_admin(space, "admin")
    spans_file = tmp_path / "web-spans.jsonl"
    env = worker_env(
        WEB_CONCURRENCY="1",
        OTEL_TRACES_EXPORTER="console",
        SPOKE_MEMORY_TRACES_FILE=str(spans_file),
    )
    rest_trace, rest_parent = traceparent()
    mcp_trace, mcp_parent = traceparent()
    with gunicorn(tmp_path, env) as port:
        request = urllib.request.Request(
            f"http://127.0.0.1:{port}/v1/ops/memory.subjects.ensure",
            data=json.dumps({"space_id": "s1", "subject_id": "u1"}).encode(),
            headers={
                "Authorization": f"Bearer {token}",
                "Content-Type": "application/json",
                "traceparent": rest_parent,
            },
        )
        with urllib.request.urlopen(request, timeout=60) as response:  # noqa: S310
            assert response.status == 200

        # MCP over streamable HTTP (the official SDK's client): every request carries it
        async def add_traceparent(request) -> None:
            request.headers["traceparent"] = mcp_parent

        agent = Agent(
            http_client(f"http://127.0.0.1:{port}/mcp/s1", token, MODERN, [add_traceparent])
        )
        try:
            agent.ok("remember", subject_id="u1", text="likes jazz")
        finally:
            agent.close()
        assert post(port, token, "memory.describe", {})[0] == 200  # untraced: a trace of its own
    found = file_spans(spans_file)
    ops = {(s["name"], trace_of(s)) for s in found}
    assert ("memory.subjects.ensure", rest_trace) in ops
    assert ("memory.capture", mcp_trace) in ops, sorted(ops)
    describe = [s for s in found if s["name"] == "memory.describe"]
    assert describe and trace_of(describe[0]) not in {rest_trace, mcp_trace}
