"""The product as an operator runs it, for the benches that measure through it: the web server
with the product's own configuration (`gunicorn -c spokememory/gunicorn_conf.py`, the default
engine unless one is named) and a Celery worker started as `make run` starts it (one prefork
child), on a throwaway database and this environment's broker; the embedding backlog as the
product exposes it (`embedding_backlog` in /readyz); the worker's memory from /proc."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from bench import BROKER_URL, free_port, stop, wait_ready
from bench._hybrid_common import ROOT

LOGS = ROOT / "var" / "bench-live"
HEALTH_TOKEN = os.environ.get("SPOKE_MEMORY_HEALTH_TOKEN") or "bench-health-token"


def product_env(database_url: str, **extra: str) -> dict[str, str]:
    """The environment of the product's processes: no SPOKE_MEMORY_ENGINE (the default engine,
    what a fresh install serves) unless `extra` names one."""
    env = dict(os.environ)
    env.pop("SPOKE_MEMORY_ENGINE", None)
    env.pop("SPOKE_MEMORY_EMBED_MODEL", None)
    env.update(
        PYTHONPATH=str(ROOT),
        DJANGO_SETTINGS_MODULE="spokememory.settings",
        DATABASE_URL=database_url,
        CELERY_BROKER_URL=os.environ.get("CELERY_BROKER_URL", BROKER_URL),
        SECRET_KEY=os.environ.get("SECRET_KEY", "bench-only-secret-key-not-for-production-use"),
        SPOKE_MEMORY_RATE="100000000/min",  # the bench measures recall, not the throttle
        SPOKE_MEMORY_VAR_DIR=str(LOGS / "var"),
        GUNICORN_ACCESS_LOG="/dev/null",
        GUNICORN_LOG_LEVEL="warning",
        HF_HUB_OFFLINE="1",
        # /readyz shows the embedding backlog only to the monitoring system's token
        SPOKE_MEMORY_HEALTH_TOKEN=HEALTH_TOKEN,
    )
    env.update({k: v for k, v in extra.items() if v})
    return env


@dataclass
class Served:
    """A running web server: its process and base URL."""

    proc: subprocess.Popen
    url: str


def start_web(
    env: dict[str, str],
    log: Path,
    *,
    tree: Path = ROOT,
    port: int | None = None,
    timeout: float = 180.0,
    append: bool = False,
) -> Served:
    """The product's web server (`gunicorn -c spokememory/gunicorn_conf.py`) run from `tree` (a
    checkout: this one, or another for a before/after; `env` names its PYTHONPATH) on
    127.0.0.1:`port` (a free one unless given), its output in `log` (appended to with
    `append`); returned once /healthz answers, stopped if it does not within `timeout`."""
    port = port or free_port()
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("a" if append else "w") as sink:
        proc = subprocess.Popen(  # noqa: S603 - our own interpreter and fixed arguments
            [
                sys.executable,
                "-m",
                "gunicorn",
                "-c",
                "spokememory/gunicorn_conf.py",
                "--bind",
                f"127.0.0.1:{port}",
            ],
            cwd=tree,
            env=env,
            start_new_session=True,
            stdout=sink,
            stderr=subprocess.STDOUT,
        )
    try:
        wait_ready(f"http://127.0.0.1:{port}", timeout=timeout, proc=proc)
    except BaseException:
        stop(proc)
        raise
    return Served(proc, f"http://127.0.0.1:{port}")


@contextmanager
def web_process(env: dict[str, str], log: Path, **options: Any) -> Iterator[Served]:
    """`start_web(env, log, **options)`; yields the server (process and URL) and stops it."""
    served = start_web(env, log, **options)
    try:
        yield served
    finally:
        stop(served.proc)


@contextmanager
def web(env: dict[str, str], log: Path, **options: Any) -> Iterator[str]:
    """The product's web server on a loopback port (`start_web`'s options); yields its base URL."""
    with web_process(env, log, **options) as served:
        yield served.url


class Worker:
    """A Celery worker as `make run` starts it (prefork, one child), run from `tree`, its log in
    a file (appended to with `append`); `name` its node name (default: unique per start)."""

    def __init__(
        self,
        env: dict[str, str],
        log: Path,
        *,
        tree: Path = ROOT,
        name: str | None = None,
        append: bool = False,
    ) -> None:
        log.parent.mkdir(parents=True, exist_ok=True)
        self.log = log
        with log.open("a" if append else "w") as sink:
            self.proc = subprocess.Popen(  # noqa: S603 - our own interpreter and fixed arguments
                [
                    sys.executable,
                    "-m",
                    "celery",
                    "-A",
                    "spokememory",
                    "worker",
                    "--loglevel=INFO",
                    "--concurrency=1",
                    "--without-heartbeat",
                    "--without-gossip",
                    "--without-mingle",
                    "-n",
                    name or f"bench{os.getpid()}-{time.monotonic_ns()}@%h",
                ],
                cwd=tree,
                env=env,
                start_new_session=True,
                stdout=sink,
                stderr=subprocess.STDOUT,
            )

    def pids(self) -> list[int]:
        """The worker's main process and its descendants (the pool child)."""
        out, todo = [], [self.proc.pid]
        while todo:
            pid = todo.pop()
            out.append(pid)
            try:
                for task in Path(f"/proc/{pid}/task").iterdir():
                    todo += [int(c) for c in (task / "children").read_text().split()]
            except OSError:
                pass
        return out

    def memory_mb(self) -> dict[str, float]:
        """Resident and peak resident (VmRSS, VmHWM) MiB: the largest process (the pool child,
        which loads the model) and all of the worker's processes together."""
        per = []
        for pid in self.pids():
            try:
                fields = dict(
                    line.split(":", 1)
                    for line in Path(f"/proc/{pid}/status").read_text().splitlines()
                )
            except OSError:
                continue
            rss = int(fields.get("VmRSS", "0 kB").split()[0]) / 1024
            hwm = int(fields.get("VmHWM", "0 kB").split()[0]) / 1024
            per.append((rss, hwm))
        if not per:
            return {}
        return {
            "child_rss": max(r for r, _ in per),
            "child_peak": max(h for _, h in per),
            "all_rss": sum(r for r, _ in per),
        }

    def stop(self) -> None:
        stop(self.proc)


def backlog(url: str) -> int | None:
    """`embedding_backlog` from /readyz (None when the engine embeds nothing)."""
    body = httpx.get(
        url + "/readyz", timeout=10.0, headers={"Authorization": f"Bearer {HEALTH_TOKEN}"}
    ).json()
    return body.get("embedding_backlog")


def wait_drained(url: str, timeout: float, every: float = 0.5) -> list[tuple[float, int]]:
    """Poll /readyz until the embedding backlog is 0; returns (monotonic time, backlog) samples.
    Raises when the deadline passes first (a stuck worker fails the bench, it does not hang)."""
    samples: list[tuple[float, int]] = []
    deadline = time.monotonic() + timeout
    while True:
        left = backlog(url)
        samples.append((time.monotonic(), left or 0))
        if not left:
            return samples
        if time.monotonic() > deadline:
            raise SystemExit(
                f"the embedding backlog did not drain in {timeout:.0f} s ({left} left)"
            )
        time.sleep(every)
