"""Fault: the Redis that holds the request-rate counts, the login limiter's counts and the Celery
broker goes away (issue 26, item 7). Nothing is lost (PostgreSQL holds every write; the job
table is the outbox), so the wire must keep working: the limiter counts in each process alone,
with a log line, a pending op still answers `pending` with its job queued, and the console login, whose
limiter cannot count, answers `503` with `Retry-After` (it fails closed: docs/reliability.md
"Redis down"); never `500 internal_error`. A private `redis-server` on a free port, really
stopped (and really frozen with SIGSTOP); the machine's shared Redis is never touched."""

from __future__ import annotations

import logging
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator

import pytest
from django.test import Client, override_settings

from memory.models import Job
from spokememory.celery import app
from tests.conftest import free_port
from tests.reviews.conftest import PASSWORD, make_user

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.skipif(shutil.which("redis-server") is None, reason="needs redis-server"),
]


REDIS_SERVER = shutil.which("redis-server") or "redis-server"


class PrivateRedis:
    """A redis-server of the test's own, on a free loopback port, without persistence."""

    def __init__(self) -> None:
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.dir = tempfile.mkdtemp(prefix="spoke-redis-")
        self.proc: subprocess.Popen | None = None

    def start(self) -> None:
        self.proc = subprocess.Popen(  # noqa: S603 - a fixed argv
            [
                REDIS_SERVER,
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                self.dir,
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 30  # a deadline for a broken start, not a timed assertion
        while time.monotonic() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1) as s:
                    s.sendall(b"PING\r\n")
                    if s.recv(16).startswith(b"+PONG"):
                        return
            except OSError:
                time.sleep(0.05)
        raise AssertionError("the private redis-server did not start")

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.terminate()
            self.proc.wait(30)
            self.proc = None

    def pause(self) -> None:
        assert self.proc is not None
        os.kill(self.proc.pid, signal.SIGSTOP)

    def resume(self) -> None:
        assert self.proc is not None
        os.kill(self.proc.pid, signal.SIGCONT)


@pytest.fixture
def redis() -> Iterator[PrivateRedis]:
    server = PrivateRedis()
    server.start()
    try:
        yield server
    finally:
        if server.proc is not None:
            server.resume()
        server.stop()
        shutil.rmtree(server.dir, ignore_errors=True)


def _drop_broker_connections() -> None:
    from kombu import pools

    app.close()
    app.amqp._producer_pool = None
    pools.reset()


@pytest.fixture
def on_redis(redis, settings) -> Iterator[PrivateRedis]:
    """The cache (throttle and login limiter) and the Celery broker on the private Redis, as a
    deployment with REDIS_URL runs them (the publish retries left at their defaults)."""
    caches = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": redis.url,
            "KEY_PREFIX": "redis-down-test",
            "OPTIONS": settings.SPOKE_MEMORY_CACHE_OPTIONS,
        }
    }
    # broker_write_url and broker_read_url too: once the app is configured they hold the
    # settings' URL, and publishing reads broker_write_url
    urls = ("broker_url", "broker_write_url", "broker_read_url")
    saved = {k: app.conf.get(k) for k in (*urls, "task_always_eager", "broker_transport_options")}
    app.conf.update(
        dict.fromkeys(urls, redis.url),
        task_always_eager=False,
        broker_transport_options=dict(settings.SPOKE_MEMORY_BROKER_SOCKET_OPTIONS),
    )
    _drop_broker_connections()
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    try:
        with override_settings(CACHES=caches):
            yield redis
    finally:
        app.conf.update(saved)
        _drop_broker_connections()


def create(api, admin, session, text: str):
    return api(
        admin,
        "memory.records.create",
        {
            "space_id": "s1",
            "subject_id": "u1",
            "kind": "note",
            "content": {"text": text},
            "placement": {"scope": "shared"},
        },
        session,
    )


def test_writes_and_reads_go_on_and_pending_work_is_queued_while_redis_is_down(
    on_redis, api, admin, ensure_subject, caplog, django_capture_on_commit_callbacks
):
    session = api.connect(admin)
    ensure_subject("u1")
    assert create(api, admin, session, "before the outage").status == 200  # counted in Redis
    on_redis.stop()

    with caplog.at_level(logging.WARNING):
        answer = create(api, admin, session, "during the outage")
    assert (answer.status, answer.receipt["status"]) == (200, "committed"), answer.body
    # the limiter counts in this process instead, and said so (memory/limits.py)
    assert "limiter: Redis unreachable" in caplog.text
    record_id = answer.receipt["refs"][0]["id"]
    got = api(admin, "memory.records.get", {"space_id": "s1", "record_id": record_id}, session)
    assert got.status == 200
    assert got.body["record"]["content"] == {"text": "during the outage"}

    # A pending op: accepted, its job row queued (the broker publish fails after commit and is
    # only logged; the sweeper sends it once the broker is back: tests/faults/test_broker_down.py).
    with django_capture_on_commit_callbacks(execute=True):
        pending = api(admin, "memory.exports.create", {"space_id": "s1"}, session)
    assert (pending.status, pending.receipt["status"]) == (200, "pending"), pending.body
    job = Job.objects.get(receipt_id=pending.receipt["receipt_id"])
    assert job.state == Job.QUEUED

    assert Client().get("/readyz").status_code == 503  # the broker is down: not ready

    on_redis.start()  # back on the same port: the throttle counts again
    assert create(api, admin, session, "after the outage").status == 200


def test_requests_go_on_when_redis_hangs(
    on_redis, api, admin, ensure_subject, django_capture_on_commit_callbacks
):
    """A frozen Redis (SIGSTOP: connections accepted, nothing answered) costs a write the
    cache's socket timeout, and a pending op's publish the broker's, not a hung request (kombu
    waited forever before)."""
    session = api.connect(admin)
    ensure_subject("u1")
    on_redis.pause()
    try:
        answer = create(api, admin, session, "while redis hangs")
        with django_capture_on_commit_callbacks(execute=True):
            pending = api(admin, "memory.exports.create", {"space_id": "s1"}, session)
    finally:
        on_redis.resume()
    assert (answer.status, answer.receipt["status"]) == (200, "committed"), answer.body
    assert (pending.status, pending.receipt["status"]) == (200, "pending"), pending.body
    assert Job.objects.get(receipt_id=pending.receipt["receipt_id"]).state == Job.QUEUED


def login(client: Client, password: str):
    return client.post("/console/login/", {"username": "operator", "password": password})


@pytest.mark.parametrize("path", ["/console/login/", "/admin/login/"])
def test_console_login_answers_503_while_its_limiter_cannot_count(on_redis, space, path):
    make_user("operator", staff=True, superuser=True)
    on_redis.stop()
    for password in ("not the password", PASSWORD):
        client = Client()
        response = client.post(
            path, {"username": "operator", "password": password, "next": "/admin/"}
        )
        assert response.status_code == 503
        assert response["Retry-After"].isdigit()
        assert "_auth_user_id" not in client.session  # nobody logged in unlimited
    on_redis.start()
    client = Client()
    assert login(client, PASSWORD).status_code == 302
    assert "_auth_user_id" in client.session
