"""Issue 45, item 2: with SPOKE_MEMORY_LOG_FORMAT=json, the web server's output is JSON lines of
one schema (time, level, logger, message; request id, principal id, space, op, outcome, duration
on each op's line), and a full flow with planted content, a planted token and a refused body
leaves neither in the logs. The plain format stays the default."""

# Loopback URLs only.
# ruff: noqa: S310

from __future__ import annotations

import json
import logging
import urllib.request

import pytest

from memory.observability.logs import JsonFormatter
from tests import factories
from tests.conftest import make_space
from tests.hostile.conftest import gunicorn
from tests.observability.test_metrics import post
from tests.reviews.jobs import _jobs

PLANTED = "zq-planted-secret-7781"


@pytest.mark.django_db(transaction=True)
def test_json_logs_of_a_full_flow_hold_the_schema_and_no_content_token_or_body(tmp_path):
    space = make_space("s1")
    admin, token = factories.make_admin(space, "admin")
    env = _jobs.worker_env(WEB_CONCURRENCY="1", SPOKE_MEMORY_LOG_FORMAT="json", LOG_LEVEL="INFO")
    with gunicorn(tmp_path, env) as port:
        assert (
            post(port, token, "memory.subjects.ensure", {"space_id": "s1", "subject_id": "u1"})[0]
            == 200
        )
        note = {
            "space_id": "s1",
            "subject_id": "u1",
            "kind": "note",
            "content": {"text": f"the code is {PLANTED}"},
            "placement": {"scope": "shared"},
        }
        status, answer = post(port, token, "memory.records.create", note)
        assert status == 200, answer
        record_id = answer["receipt"]["refs"][0]["id"]
        for op, body in (
            ("memory.recall", {"space_id": "s1", "subject_id": "u1", "query": {"text": PLANTED}}),
            ("memory.records.get", {"space_id": "s1", "record_id": record_id}),
            (
                "memory.capture",
                {
                    "space_id": "s1",
                    "subject_id": "u1",
                    "capture_scope": {"placement": {"scope": "shared"}},
                    "items": [{"content": {"text": PLANTED}}],
                },
            ),
        ):
            status, answer = post(port, token, op, body)
            assert status == 200, answer
        # refused bodies: a schema error and unparseable JSON, both carrying the planted text
        assert (
            post(port, token, "memory.records.create", {"space_id": "s1", "x": PLANTED})[0] == 400
        )
        assert post(port, token, "memory.records.create", f'{{"{PLANTED}'.encode())[0] == 400
        # a bad token carrying the planted text, and an unknown space
        assert post(port, PLANTED, "memory.describe", {})[0] == 401
        assert post(port, token, "memory.records.list", {"space_id": PLANTED})[0] == 404
        request = urllib.request.Request(
            f"http://127.0.0.1:{port}/v1/ops/memory.describe",
            data=b"{}",
            headers={
                "Authorization": f"Bearer {token}",
                "Content-Type": "application/json",
                "X-Request-ID": "trace-me-42",
            },
        )
        with urllib.request.urlopen(request, timeout=60) as response:
            assert response.headers["X-Request-ID"] == "trace-me-42"
    output = (tmp_path / "gunicorn.log").read_text()
    assert PLANTED not in output
    assert token not in output
    lines = [json.loads(line) for line in output.splitlines() if line.strip()]  # all JSON
    assert lines
    for line in lines:
        assert {"time", "level", "logger", "message"} <= set(line), line
    ops = [line for line in lines if line["logger"] == "memory.ops"]
    create = [line for line in ops if line.get("op") == "memory.records.create"]
    assert [line["outcome"] for line in create] == ["ok"]  # the refused ones never ran
    (line,) = create
    assert line["principal_id"] == admin.principal_id and line["space"] == "s1"
    assert line["request_id"].startswith("req_") and line["duration_ms"] >= 0
    listed = [line for line in ops if line.get("op") == "memory.records.list"]
    assert [line["outcome"] for line in listed] == ["NOT_FOUND"]
    assert "space" not in listed[0]  # a space the op did not answer in is the caller's string
    http = [line for line in lines if line["logger"] == "memory.http"]
    assert {"route": "memory.describe", "status": 200, "request_id": "trace-me-42"}.items() <= http[
        -1
    ].items()
    assert any(line["status"] == 401 for line in http)


def test_an_exception_is_logged_by_class_and_frames_never_its_message():
    try:
        raise ValueError(f"row holds {PLANTED}")
    except ValueError:
        record = logging.LogRecord("memory.x", logging.ERROR, __file__, 1, "failed", (), None)
        import sys

        record.exc_info = sys.exc_info()
    line = json.loads(JsonFormatter().format(record))
    assert line["exc_type"] == "ValueError" and "test_logs.py" in line["stack"]
    assert PLANTED not in json.dumps(line)


def test_the_plain_format_is_the_default(settings):
    assert settings.SPOKE_MEMORY_LOG_FORMAT == "text"
    assert settings.LOGGING["handlers"]["console"]["formatter"] == "plain"


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_the_workers_logs_are_json_lines_of_the_schema_with_a_line_per_job_and_no_content(
    start_worker, tmp_path
):
    from memory.ops.base import call
    from tests.memory.jobs import make_record, receipt_status, subject_row, wait_for

    space = make_space("s1")
    admin, _ = factories.make_admin(space, "admin")
    make_record(subject_row("s1", "u1"), f"the code is {PLANTED}", context_id=None)
    output = tmp_path / "worker.log"
    worker = start_worker(
        SPOKE_MEMORY_LOG_FORMAT="json",
        LOG_LEVEL="INFO",
        CELERY_LOGLEVEL="INFO",
        CELERY_OUTPUT=str(output),
    )
    receipt = call(admin, "memory.exports.create", {"space_id": "s1"})["receipt"]
    assert receipt["status"] == "pending"
    wait_for(lambda: receipt_status(receipt["receipt_id"]) != "pending", what="the worker")
    assert receipt_status(receipt["receipt_id"]) == "committed"
    wait_for(lambda: "memory.jobs" in output.read_text(), what="the job's log line")
    worker.stop()
    text = output.read_text()
    assert PLANTED not in text
    lines = [json.loads(line) for line in text.splitlines() if line.strip()]  # all JSON: no banner
    for line in lines:
        assert {"time", "level", "logger", "message"} <= set(line), line
    assert any(line["logger"].startswith("celery") for line in lines)  # Celery's own lines too
    # the notice Celery writes past logging on SIGTERM, as a line of the schema too
    assert any("Warm shutdown" in line["message"] for line in lines)
    (job,) = [line for line in lines if line["logger"] == "memory.jobs"]
    assert {
        "op": "memory.exports.create",
        "space": "s1",
        "principal_id": admin.principal_id,
        "kind": "export.create",
        "outcome": "committed",
        "task": "memory.tasks.run_job",
    }.items() <= job.items(), job
    assert job["task_id"] and job["duration_ms"] >= 0
