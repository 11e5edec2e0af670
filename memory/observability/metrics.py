"""The provider's Prometheus metrics, defined once (prometheus_client). Names follow
memory-semconv v0.1.0 where it defines one (`memory_operation_duration_seconds`,
`memory_recall_results_count`, `memory_recall_top_similarity`, `memory_items_total`); the rest
are ours, prefixed `memory_`. Every label takes values from a bounded set this module or the
contract fixes (an op name of the catalog, an error code, a limit name, a job kind, a status
class); none carries a subject, a principal, content or a caller's string. The per-space gauges
(`collect.py`) take the operator-made space ids, at most SPOKE_MEMORY_METRICS_MAX_SPACES of them.

Under gunicorn these are written to PROMETHEUS_MULTIPROC_DIR (spokememory/gunicorn_conf.py sets
it up) and the scrape sums every process's; a Celery worker exposes its own (`worker.py`)."""

from __future__ import annotations

from prometheus_client import Counter, Gauge, Histogram

# Seconds: 1 ms .. 30 s (a recall's p95 target is tens of ms; an import stage may take seconds).
DURATION_BUCKETS = (
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 10.0, 30.0
)  # fmt: skip

OPERATIONS = Counter(
    "memory_operations",
    "Ops run, by op and outcome (ok, or the wire error code).",
    ["op", "outcome"],
)
OPERATION_DURATION = Histogram(
    "memory_operation_duration_seconds",
    "Time an op's handler took (after admission), by op and outcome.",
    ["op", "outcome"],
    buckets=DURATION_BUCKETS,
)
ADMISSION_REFUSALS = Counter(
    "memory_admission_refusals",
    "Requests refused by admission (storability, capability, schema, grammar), by op and code.",
    ["op", "code"],
)
RECALL_RESULTS = Histogram(
    "memory_recall_results_count",
    "Results a recall answered.",
    buckets=(0, 1, 2, 3, 5, 10, 20, 50, 100, 250),
)
RECALL_TOP_SIMILARITY = Histogram(
    "memory_recall_top_similarity",
    "The score of a recall's first result (recalls with at least one result).",
    buckets=(0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 1.0),
)
HTTP_REQUESTS = Counter(
    "memory_http_requests",
    "HTTP requests answered, by route class and status code.",
    ["route", "code"],
)
HTTP_DURATION = Histogram(
    "memory_http_request_duration_seconds",
    "Time from a request's arrival to its answer's last byte, by route class.",
    ["route"],
    buckets=DURATION_BUCKETS,
)
IN_FLIGHT = Gauge(
    "memory_http_requests_in_flight",
    "HTTP requests being served now (all web processes).",
    multiprocess_mode="livesum",
)
REFUSALS = Counter(
    "memory_refusals",
    "Requests refused by a limit (rate, bytes, in_flight, body_size).",
    ["limit"],
)
LIMITS = ("rate", "bytes", "in_flight", "body_size")

# The worker's (exposed by the worker process itself, `worker.py`).
JOBS = Counter(
    "memory_jobs",
    "Jobs a worker finished, by kind and outcome (committed, failed).",
    ["kind", "outcome"],
)
JOB_DURATION = Histogram(
    "memory_job_duration_seconds",
    "Time a job took on a worker, by kind.",
    ["kind"],
    buckets=DURATION_BUCKETS,
)
EMBEDDINGS_DRAINED = Counter(
    "memory_embeddings_drained",
    "Derived copies (record embeddings) a worker's drains made.",
)
DRAIN_DURATION = Histogram(
    "memory_embedding_drain_duration_seconds",
    "Time one drain of the derived-copy backlog took on a worker.",
    buckets=DURATION_BUCKETS,
)


def refused(limit: str) -> None:
    """Count a request refused by `limit` (one of LIMITS; anything else counts as "other").
    The edge's refusal points call this (memory/limits.py `rate_limited`)."""
    REFUSALS.labels(limit=limit if limit in LIMITS else "other").inc()
