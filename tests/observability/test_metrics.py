"""Issue 45, item 1: /metrics after a short flow, parsed with prometheus_client's own parser.
Against gunicorn as deployed (two processes: multiprocess mode sums them) and through the test
client (single-process); who may scrape (loopback by default, a configured network, the operator
token; a forwarded request is never taken for loopback)."""

# Loopback URLs only.
# ruff: noqa: S310

from __future__ import annotations

import json
import urllib.error
import urllib.request

import pytest
from django.db import connection
from prometheus_client.parser import text_string_to_metric_families

from memory.observability import metrics
from tests import factories
from tests.conftest import make_space
from tests.hostile.conftest import gunicorn
from tests.reviews.jobs import _jobs


def parse(text: str) -> dict[str, list]:
    """name -> samples (every sample of the family, suffixed names included)."""
    out: dict[str, list] = {}
    for family in text_string_to_metric_families(text):
        out[family.name] = list(family.samples)
    return out


def value(samples: list, name: str, **labels: str) -> float:
    found = [
        s.value
        for s in samples
        if s.name == name and all(s.labels.get(k) == v for k, v in labels.items())
    ]
    assert found, f"no sample {name} {labels}"
    return sum(found)


def post(port: int, token: str, op: str, body: dict | bytes) -> tuple[int, dict]:
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}/v1/ops/{op}",
        data=data,
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read() or b"{}")


def scrape(port: int, headers: dict[str, str] | None = None) -> tuple[int, str]:
    request = urllib.request.Request(f"http://127.0.0.1:{port}/metrics", headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as err:
        return err.code, ""


def flow(port: int, token: str, records: int = 3) -> None:
    """A short tour: a subject, notes, recalls, a capture, a refused body, an unknown op."""
    assert (
        post(port, token, "memory.subjects.ensure", {"space_id": "s1", "subject_id": "u1"})[0]
        == 200
    )
    for i in range(records):
        status, answer = post(
            port,
            token,
            "memory.records.create",
            {
                "space_id": "s1",
                "subject_id": "u1",
                "kind": "note",
                "content": {"text": f"likes green tea, cup {i}"},
                "placement": {"scope": "shared"},
            },
        )
        assert status == 200, answer
    for query in ("green tea", "nothing like it at all"):
        status, answer = post(
            port,
            token,
            "memory.recall",
            {"space_id": "s1", "subject_id": "u1", "query": {"text": query}},
        )
        assert status == 200, answer
    status, answer = post(
        port,
        token,
        "memory.capture",
        {
            "space_id": "s1",
            "subject_id": "u1",
            "capture_scope": {"placement": {"scope": "shared"}},
            "items": [{"content": {"text": "moved to Lyon"}}],
        },
    )
    assert status == 200, answer
    status, answer = post(port, token, "memory.records.create", {"space_id": "s1"})
    assert (status, answer["error"]["code"]) == (400, "invalid_input")
    assert post(port, token, "memory.records.undelete", {})[0] == 404


@pytest.mark.django_db(transaction=True)
def test_a_scrape_after_a_flow_shows_every_metric_summed_over_the_processes(tmp_path):
    space = make_space("s1")
    _, token = factories.make_admin(space, "admin")
    env = _jobs.worker_env(WEB_CONCURRENCY="2", PROMETHEUS_MULTIPROC_DIR=str(tmp_path / "prom"))
    with gunicorn(tmp_path, env) as port:
        flow(port, token)
        status, text = scrape(port)
    assert status == 200
    m = parse(text)
    ops = m["memory_operations"]
    assert value(ops, "memory_operations_total", op="memory.records.create", outcome="ok") == 3
    assert value(ops, "memory_operations_total", op="memory.recall", outcome="ok") == 2
    assert value(ops, "memory_operations_total", op="memory.capture", outcome="ok") == 1
    duration = m["memory_operation_duration_seconds"]
    create = {"op": "memory.records.create", "outcome": "ok"}
    assert value(duration, "memory_operation_duration_seconds_count", **create) == 3
    assert 0 < value(duration, "memory_operation_duration_seconds_sum", **create) < 60
    refused = m["memory_admission_refusals"]
    assert (
        value(
            refused,
            "memory_admission_refusals_total",
            op="memory.records.create",
            code="invalid_input",
        )
        == 1
    )
    assert value(m["memory_recall_results_count"], "memory_recall_results_count_count") == 2
    assert value(m["memory_recall_results_count"], "memory_recall_results_count_sum") >= 1
    top = m["memory_recall_top_similarity"]
    assert value(top, "memory_recall_top_similarity_count") >= 1
    http = m["memory_http_requests"]
    assert value(http, "memory_http_requests_total", route="memory.records.create", code="200") == 3
    assert value(http, "memory_http_requests_total", route="unknown_op", code="404") == 1
    assert value(http, "memory_http_requests_total", route="memory.records.create", code="400") == 1
    # the scrape itself is in flight while it is answered: at least one, and not more than the
    # two processes' threads
    assert 1 <= value(m["memory_http_requests_in_flight"], "memory_http_requests_in_flight") <= 8
    assert value(m["memory_metrics_database_up"], "memory_metrics_database_up") == 1
    assert value(m["memory_items_total"], "memory_items_total", state="live") == 3
    assert value(m["memory_items_total"], "memory_items_total", state="deleted") == 0
    stored = 3 * len('{"text": "likes green tea, cup 0"}')  # the stored JSON text's bytes
    assert value(m["memory_bytes_total"], "memory_bytes_total", space="s1") == stored
    assert value(m["memory_review_queue_size"], "memory_review_queue_size", space="s1") == 1
    age = value(
        m["memory_review_oldest_pending_age_seconds"],
        "memory_review_oldest_pending_age_seconds",
        space="s1",
    )
    assert 0 <= age < 3600
    assert "memory_embedding_backlog" in m
    assert "memory_jobs_queue_depth" in m and "memory_jobs_oldest_age_seconds" in m
    if connection.vendor == "postgresql":
        assert value(m["memory_db_connections"], "memory_db_connections") >= 1
        assert value(m["memory_db_connections_max"], "memory_db_connections_max") > 0
    # no label anywhere carries the subject or the content
    assert "u1" not in text and "green tea" not in text and "Lyon" not in text


@pytest.mark.django_db(transaction=True)
def test_metrics_is_not_served_to_a_forwarded_request_or_a_wrong_token(tmp_path):
    env = _jobs.worker_env(WEB_CONCURRENCY="1", SPOKE_MEMORY_METRICS_TOKEN="op-secret-token")
    with gunicorn(tmp_path, env) as port:
        assert scrape(port)[0] == 200  # loopback
        # a reverse proxy on this host forwarding an outside caller: not loopback
        assert scrape(port, {"X-Forwarded-For": "203.0.113.9"})[0] == 404
        assert scrape(port, {"Forwarded": "for=203.0.113.9"})[0] == 404
        assert (
            scrape(port, {"X-Forwarded-For": "203.0.113.9", "Authorization": "Bearer nope"})[0]
            == 404
        )
        status, text = scrape(
            port, {"X-Forwarded-For": "203.0.113.9", "Authorization": "Bearer op-secret-token"}
        )
        assert status == 200 and "memory_http_requests_total{" in text


@pytest.mark.django_db
def test_the_test_client_scrape_is_single_process_and_guarded(client, settings):
    before = metrics.REFUSALS.labels(limit="in_flight")._value.get()
    metrics.refused("in_flight")
    metrics.refused("made-up")
    response = client.get("/metrics")
    assert response.status_code == 200
    m = parse(response.content.decode())
    assert value(m["memory_refusals"], "memory_refusals_total", limit="in_flight") == before + 1
    assert value(m["memory_refusals"], "memory_refusals_total", limit="other") >= 1
    # another address: 404, as a path that does not exist; a configured network lets it in
    assert client.get("/metrics", REMOTE_ADDR="10.1.2.3").status_code == 404
    settings.SPOKE_MEMORY_METRICS_ALLOW_FROM = ["10.1.0.0/16"]
    assert client.get("/metrics", REMOTE_ADDR="10.1.2.3").status_code == 200
    assert client.get("/metrics").status_code == 404  # loopback is no longer listed
    assert client.post("/metrics", REMOTE_ADDR="10.1.2.3").status_code == 404


@pytest.mark.django_db
def test_memory_bytes_total_is_the_live_content_bytes_per_space_named_or_other(client, settings):
    from memory.ops.base import call

    settings.SPOKE_MEMORY_METRICS_BYTES_EVERY_S = 0  # recomputed at each scrape
    settings.SPOKE_MEMORY_METRICS_MAX_SPACES = 1
    written: dict[str, list[str]] = {"sa": ["a cup of tea", "to be deleted"], "sb": ["x" * 90]}
    for space_id, texts in written.items():
        admin, _ = factories.make_admin(make_space(space_id), f"admin-{space_id}")
        factories.ensure_subjects(admin, space_id, ["u1"])
        for text in texts:
            answer = call(
                admin,
                "memory.records.create",
                {"space_id": space_id, "subject_id": "u1", "kind": "note",
                 "content": {"text": text}, "placement": {"scope": "shared"}},
            )  # fmt: skip
            record_id = answer["receipt"]["refs"][0]["id"]
        if space_id == "sa":  # a tombstone's content is erased: it counts for nothing
            body = {"space_id": "sa", "record_id": record_id, "expected_revision": 1}
            call(admin, "memory.records.delete", body)
    text = client.get("/metrics").content.decode()
    samples = parse(text)["memory_bytes_total"]
    # the stored JSON text of {"text": ...}: 12 bytes around the text
    assert value(samples, "memory_bytes_total", space="sb") == 12 + 90
    assert value(samples, "memory_bytes_total", space="_other") == 12 + len("a cup of tea")
    assert {s.labels["space"] for s in samples} == {"sb", "_other"}
    assert "a cup of tea" not in text and "u1" not in text


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_a_prefork_workers_metrics_port_counts_the_jobs_its_pool_child_ran(start_worker):
    """`make run`'s worker is prefork: its child runs the tasks, its main process serves the
    port; the port must show the child's counts (multiprocess mode, chosen by the worker)."""
    import socket

    from memory.ops.base import call
    from tests.memory.jobs import receipt_status, wait_for

    admin, _ = factories.make_admin(make_space("s1"), "admin")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    start_worker(CELERY_POOL="prefork", SPOKE_MEMORY_WORKER_METRICS_PORT=str(port))
    receipt = call(admin, "memory.exports.create", {"space_id": "s1"})["receipt"]
    wait_for(lambda: receipt_status(receipt["receipt_id"]) != "pending", what="the worker")
    assert receipt_status(receipt["receipt_id"]) == "committed"

    def jobs() -> float:
        """export.create jobs the port counts (0 while it does not answer yet)."""
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as answer:
                text = answer.read().decode()
        except OSError:
            return 0.0
        samples = parse(text).get("memory_jobs", [])
        return sum(
            s.value
            for s in samples
            if s.name == "memory_jobs_total" and s.labels.get("kind") == "export.create"
        )

    # the counter is written when the job ends, just after its receipt commits
    wait_for(jobs, what="the worker's port to count the export")
    assert jobs() == 1
