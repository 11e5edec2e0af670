"""Benchmarks and fault scripts (not part of the test suite). `python -m bench` runs every bench
module present; each exposes `main()`. Shared here: the bench database, a real server process
(gunicorn, or runserver) on a loopback port, and a closed-loop load driver.

Everything runs against PostgreSQL named by BENCH_DATABASE_URL (default: spoke_bench) and never against the test databases."""

from __future__ import annotations

import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

ROOT = Path(__file__).resolve().parent.parent
DATABASE_URL = os.environ.get(
    "BENCH_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/spoke_bench"
)
BROKER_URL = os.environ.get("BENCH_BROKER_URL", "redis://127.0.0.1:6379/6")
RESULTS = ROOT / "var" / "bench"
_N = TypeVar("_N", int, float)


def knob(name: str, default: _N) -> _N:
    """A bench setting from the environment: `name`'s value read as the type of `default` (an int
    or a float), else `default`."""
    raw = os.environ.get(name)
    return default if raw is None else type(default)(raw)


def server_env(**extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        PYTHONPATH=str(ROOT),
        DJANGO_SETTINGS_MODULE="spokememory.settings",
        DATABASE_URL=DATABASE_URL,
        CELERY_BROKER_URL=BROKER_URL,
        SECRET_KEY=os.environ.get("SECRET_KEY", "bench-only-secret-key-not-for-production-use"),
        SPOKE_MEMORY_RATE="100000000/min",  # the bench measures throughput, not the throttle
        SPOKE_MEMORY_VAR_DIR=str(ROOT / "var" / "bench-var"),
        LOG_LEVEL="ERROR",
    )
    env.update(extra)
    return env


def setup_django(migrate: bool = True) -> None:
    """Configure Django in this (driver) process against the bench database, migrated (unless
    `migrate` is False: a database another code tree migrated, which it serves)."""
    for k, v in server_env().items():
        os.environ.setdefault(k, v)
    os.environ["DATABASE_URL"] = DATABASE_URL
    import django

    django.setup()
    from django.core.management import call_command

    _ensure_database()
    if migrate:
        call_command("migrate", verbosity=0, interactive=False)


def _ensure_database() -> None:
    import psycopg

    name = DATABASE_URL.rsplit("/", 1)[1]
    base = DATABASE_URL.rsplit("/", 1)[0] + "/postgres"
    with psycopg.connect(base, autocommit=True) as conn:
        if not conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone():
            conn.execute(f'CREATE DATABASE "{name}"')


@dataclass
class Seed:
    space_id: str
    token: str
    principal_id: str
    subject_ids: list[str]


def seed(space_id: str, subjects: int = 10) -> Seed:
    """A fresh space with a root-granted admin and `subjects` ensured subjects."""
    from tests import factories

    space = factories.make_space(space_id)
    admin, token = factories.make_admin(space, f"bench-admin-{space_id}", token_label="bench")
    ids = factories.ensure_subjects(admin, space_id, [f"u{i}" for i in range(subjects)])
    return Seed(space_id, token, admin.principal_id, ids)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_ready(url: str, timeout: float = 30.0, proc: subprocess.Popen | None = None) -> None:
    import httpx

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"server exited with {proc.returncode}")
        try:
            if httpx.get(url + "/healthz", timeout=1.0).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    raise RuntimeError("server did not become ready")


def use_database(url: str) -> None:
    """Point the bench (this process's Django and every server it starts) at another database;
    call before `setup_django()`. The fault scripts that stop PostgreSQL use their own cluster."""
    global DATABASE_URL
    DATABASE_URL = url


def start_gunicorn(
    port: int,
    workers: int = 2,
    threads: int = 1,
    app: str = "bench:wsgi_app()",
    log_level: str = "warning",
    output: Path | None = None,
    root: Path = ROOT,
    **env: str,
) -> subprocess.Popen:
    """A gunicorn server on 127.0.0.1:port, in its own session, returned once /healthz answers.
    `output`: a file for the server's stdout and stderr (else they are this process's). `root`:
    the checkout whose code it serves (another one, e.g. main before a change, for a before/after
    in one run; the same database and settings)."""
    cmd = [
        sys.executable,
        "-m",
        "gunicorn",
        app,
        "-b",
        f"127.0.0.1:{port}",
        "-w",
        str(workers),
        "--threads",
        str(threads),
        "--log-level",
        log_level,
        "--access-logfile",
        "-" if env.get("ACCESS") else "/dev/null",
    ]
    sink = None
    if output is not None:
        output.parent.mkdir(parents=True, exist_ok=True)
        sink = output.open("w")
    proc = subprocess.Popen(
        cmd,
        cwd=root,
        env=server_env(**{"PYTHONPATH": str(root), **env}),
        start_new_session=True,
        stdout=sink,
        stderr=subprocess.STDOUT if sink else None,
    )
    if sink is not None:
        sink.close()  # the child holds its own descriptor
    try:
        # generous: a loaded 2-core machine takes ~30 s to import the app in two workers
        wait_ready(f"http://127.0.0.1:{port}", timeout=180.0, proc=proc)
    except BaseException:
        stop(proc)
        raise
    return proc


@contextmanager
def gunicorn(
    workers: int = 2,
    threads: int = 1,
    port: int | None = None,
    app: str = "bench:wsgi_app()",
    root: Path = ROOT,
    **env: str,
):
    """A gunicorn server on loopback; yields its base URL and stops it (SIGTERM, then SIGKILL)."""
    port = port or free_port()
    proc = start_gunicorn(port, workers, threads, app, root=root, **env)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        stop(proc)


def stop(proc: subprocess.Popen, sig: int = signal.SIGTERM) -> None:
    if proc.poll() is None:
        os.killpg(proc.pid, sig)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


@dataclass
class Stats:
    name: str
    latencies: list[float] = field(default_factory=list)
    errors: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0

    @property
    def ok(self) -> int:
        return len(self.latencies)

    def pct(self, p: float) -> float:
        if not self.latencies:
            return float("nan")
        ordered = sorted(self.latencies)
        return ordered[min(len(ordered) - 1, int(p / 100 * len(ordered)))] * 1000

    def row(self) -> dict:
        total = self.ok + sum(self.errors.values())
        return {
            "name": self.name,
            "requests": total,
            "rps": round(self.ok / self.seconds, 1) if self.seconds else 0.0,
            "p50_ms": round(self.pct(50), 2),
            "p95_ms": round(self.pct(95), 2),
            "p99_ms": round(self.pct(99), 2),
            "mean_ms": round(statistics.fmean(self.latencies) * 1000, 2)
            if self.latencies
            else None,
            "error_rate": round(sum(self.errors.values()) / total, 4) if total else 0.0,
            "errors": dict(self.errors),
        }


def closed_loop(
    name: str,
    clients: int,
    seconds: float,
    make_worker: Callable[[int], Callable[[], str | None]],
    until: threading.Event | None = None,
) -> Stats:
    """`clients` threads, each calling its worker back to back until the time is up (or `until`
    is set, if given). A worker returns None on success or an error label; exceptions count as
    errors by type."""
    stats = Stats(name)
    lock = threading.Lock()
    stop_at = time.monotonic() + seconds

    def run(i: int) -> None:
        work = make_worker(i)
        local, errs = [], {}
        while time.monotonic() < stop_at and not (until is not None and until.is_set()):
            t = time.perf_counter()
            try:
                err = work()
            except Exception as exc:  # noqa: BLE001 - a bench counts failures, it does not stop
                err = type(exc).__name__
            if err is None:
                local.append(time.perf_counter() - t)
            else:
                errs[err] = errs.get(err, 0) + 1
        with lock:
            stats.latencies.extend(local)
            for k, v in errs.items():
                stats.errors[k] = stats.errors.get(k, 0) + v

    started = time.monotonic()
    threads = [threading.Thread(target=run, args=(i,)) for i in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    stats.seconds = time.monotonic() - started
    return stats


def merged(runs: list[Stats]) -> Stats:
    """The rounds of one row as one: latencies, seconds and errors added up."""
    out = runs[0]
    for extra in runs[1:]:
        out.latencies += extra.latencies
        out.seconds += extra.seconds
        for k, v in extra.errors.items():
            out.errors[k] = out.errors.get(k, 0) + v
    return out


def save(name: str, payload: dict) -> Path:
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / f"{name}.json"
    path.write_text(json.dumps(payload, indent=2))
    return path


def table(rows: list[dict], columns: list[str]) -> str:
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(str(r.get(c, "")) for c in columns) + " |" for r in rows]
    return "\n".join(lines)


def wsgi_app():
    """gunicorn factory (`bench:wsgi_app()`): the product's settings with the bench URLconf
    (the product's URLs plus the floor view)."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "spokememory.settings")
    os.environ.setdefault(
        "SECRET_KEY", "bench-only-secret-key-not-for-production-use"
    )  # a throwaway database
    import django
    from django.conf import settings

    django.setup(set_prefix=False)
    settings.ROOT_URLCONF = "bench.urls"
    from django.core.handlers.wsgi import WSGIHandler

    from spokememory.warm import warm

    handler = WSGIHandler()
    warm()  # as the product's wsgi module does
    return timed(handler) if os.environ.get("BENCH_TIMING") else handler


def timed(app):
    """The app with a `Bench-Timing` answer header (BENCH_TIMING=1; bench servers only): the
    handler's wall time, its thread's CPU time and the wall time of its SQL statements, in µs,
    as `wall=..;cpu=..;db=..`. A client's latency less `wall` is spent outside the app (waiting
    for a gunicorn thread, parsing, the network, the client itself); `wall` less `cpu` less `db`
    is the handler waiting for anything but its statements (the GIL, the cache, the CPU)."""
    from django.db import connection

    def wrapped(environ, start_response):
        db = [0.0]

        def on_sql(execute, sql, params, many, context):
            at = time.perf_counter()
            try:
                return execute(sql, params, many, context)
            finally:
                db[0] += time.perf_counter() - at

        def respond(status, headers, exc_info=None):
            wall = time.perf_counter() - started
            cpu = time.thread_time() - cpu_at
            value = f"wall={int(wall * 1e6)};cpu={int(cpu * 1e6)};db={int(db[0] * 1e6)}"
            return start_response(status, [*headers, ("Bench-Timing", value)], exc_info)

        started, cpu_at = time.perf_counter(), time.thread_time()
        with connection.execute_wrapper(on_sql):
            return app(environ, respond)

    return wrapped


def mcp_wsgi_app():
    """gunicorn factory (`bench:mcp_wsgi_app()`): `wsgi_app()`; Django serves /mcp/ itself
    (spokememory/urls.py, memory/mcp/http.py `endpoint`)."""
    return wsgi_app()
