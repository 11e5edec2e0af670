"""The Celery worker's own metrics and traces (spokememory/celery.py connects these):

- SPOKE_MEMORY_WORKER_METRICS_PORT set: the worker serves its registry (jobs by kind and
  outcome, job durations, embeddings drained, drain durations) at
  http://SPOKE_MEMORY_WORKER_METRICS_ADDR:PORT/metrics (default address 127.0.0.1: the port
  is unauthenticated, so keep it on loopback or a private network). A prefork pool's children
  (which run the tasks) write to PROMETHEUS_MULTIPROC_DIR, a new private directory unless it
  is set for the worker (spokememory/celery.py; a directory of its own, not the web's), and the
  port serves their sum.
- tracing (`tracing.py`) set up in the worker and again in each forked child.
- SPOKE_MEMORY_LOG_FORMAT=json: the worker's log lines (Celery's own, the tasks', redirected
  prints and warnings) in the JSON schema of `logs.py`, and no start-up banner (plain text):
  `json_celeryd`, `json_handlers`."""

from __future__ import annotations

import logging
import os
import sys

log = logging.getLogger("memory.observability")


def worker_started(**_: object) -> None:
    from memory.observability import tracing

    tracing.setup("worker")
    port = os.environ.get("SPOKE_MEMORY_WORKER_METRICS_PORT")
    if not port:
        return
    from prometheus_client import REGISTRY, CollectorRegistry, multiprocess, start_http_server

    addr = os.environ.get("SPOKE_MEMORY_WORKER_METRICS_ADDR", "127.0.0.1")
    registry = REGISTRY
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)
    start_http_server(int(port), addr=addr, registry=registry)
    log.info("worker metrics on http://%s:%s/metrics", addr, port)


def child_started(**_: object) -> None:
    from memory.observability import tracing

    tracing.setup("worker")


def _json() -> bool:
    from django.conf import settings

    return settings.SPOKE_MEMORY_LOG_FORMAT == "json"


def json_celeryd(instance: object = None, **_: object) -> None:
    """celeryd_init: in the JSON format, no banner (Celery prints it as plain text on stdout;
    its facts are in the JSON lines that follow, e.g. `... ready.`), and the notices Celery
    writes past logging (`worker: Warm shutdown (MainProcess)`, from its signal handlers, with
    `safe_say`) written as JSON lines of logger `celery.apps.worker` instead."""
    if instance is None or not _json():
        return
    instance.quiet = True  # type: ignore[attr-defined]
    from celery.apps import worker as celery_worker

    celery_worker.safe_say = _say_json


def _say_json(msg: str, f: object = sys.__stderr__) -> None:
    """Celery's `safe_say` in the JSON schema: one line written straight to the descriptor, as
    Celery's does (it runs in signal handlers: no logging lock is taken)."""
    from memory.observability.logs import JsonFormatter

    record = logging.LogRecord(
        "celery.apps.worker", logging.WARNING, __file__, 0, "%s", (str(msg).strip(),), None
    )
    try:
        os.write(f.fileno(), (JsonFormatter().format(record) + "\n").encode())  # type: ignore[attr-defined]
    except (AttributeError, OSError, ValueError):
        pass  # best effort, as Celery's own: a lost notice never aborts the shutdown


def json_handlers(logger: logging.Logger | None = None, **_: object) -> None:
    """after_setup_logger / after_setup_task_logger: in the JSON format, the handlers Celery
    installed on the root, task and multiprocessing loggers write JSON lines."""
    if logger is None or not _json():
        return
    from celery.utils.log import get_multiprocessing_logger

    from memory.observability.logs import JsonFormatter

    for each in (logger, get_multiprocessing_logger()):
        for handler in each.handlers:
            handler.setFormatter(JsonFormatter())
