"""The Celery worker's own metrics and traces (spokememory/celery.py connects these):

- SPOKE_MEMORY_WORKER_METRICS_PORT set: the worker serves its registry (jobs by kind and
  outcome, job durations, embeddings drained, drain durations, process metrics) at
  http://SPOKE_MEMORY_WORKER_METRICS_ADDR:PORT/metrics (default address 127.0.0.1: the port
  is unauthenticated, so keep it on loopback or a private network). A prefork pool's children
  write to PROMETHEUS_MULTIPROC_DIR when it is set for the worker (a directory of its own,
  not the web's), and the port serves their sum.
- tracing (`tracing.py`) set up in the worker and again in each forked child."""

from __future__ import annotations

import logging
import os

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
