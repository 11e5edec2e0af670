"""The gauges read from the database when /metrics is scraped (once per scrape, by the process
that answers it, so gunicorn's processes never double-count them): items stored, the embedding
backlog, the job queue's depth and oldest age by kind, the review queue's size and oldest
pending age per space, the content bytes stored per space, and the database's connections.
Cross-space scans, like the job sweeper's: each an aggregate over an index (candidate_queue,
job_state_age), except the content bytes (a sum over the live records' content), which each
process recomputes at most once per SPOKE_MEMORY_METRICS_BYTES_EVERY_S.

The per-space gauges carry the space id, an operator-made name (never a subject, a principal or
content), for the SPOKE_MEMORY_METRICS_MAX_SPACES spaces with the most pending candidates (the
most bytes, for memory_bytes_total); the rest are summed under `space="_other"`. A database that cannot be reached makes
`memory_metrics_database_up` 0 and leaves the other gauges out: the scrape still answers."""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from typing import Any

from django.conf import settings
from django.db import DatabaseError, connection
from django.db.models import BigIntegerField, Count, Func, Min, Q, Sum
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from memory.timeutil import now

log = logging.getLogger("memory.observability")
OTHER = "_other"


class StoredJsonBytes(Func):
    """The bytes of a JSON column's value in the text form the database gives it (PostgreSQL's
    jsonb output, Django's json.dumps on SQLite: `{"text": "a"}` is 13 bytes on both)."""

    template = "length(%(expressions)s)"
    output_field = BigIntegerField()

    def as_postgresql(self, compiler: Any, connection: Any, **extra: Any) -> Any:
        return self.as_sql(
            compiler, connection, template="octet_length((%(expressions)s)::text)", **extra
        )

    def as_sqlite(self, compiler: Any, connection: Any, **extra: Any) -> Any:
        return self.as_sql(
            compiler, connection, template="length(CAST(%(expressions)s AS BLOB))", **extra
        )


# (monotonic time computed, [(space id, bytes)] largest first) of this process's last sum
_bytes: tuple[float, list[tuple[str, int]]] | None = None


def content_bytes() -> list[tuple[str, int]]:
    """Live records' content bytes per space, largest first; recomputed at most once per
    SPOKE_MEMORY_METRICS_BYTES_EVERY_S in this process."""
    global _bytes
    from memory.models import Record

    at = time.monotonic()
    if _bytes is not None and at - _bytes[0] < settings.SPOKE_MEMORY_METRICS_BYTES_EVERY_S:
        return _bytes[1]
    rows = (
        Record.objects.filter(deleted_at__isnull=True)
        .values("space_id")
        .annotate(n=Sum(StoredJsonBytes("content")))
        .order_by("-n", "space_id")
    )
    _bytes = (at, [(row["space_id"], int(row["n"] or 0)) for row in rows])
    return _bytes[1]


class DatabaseCollector(Collector):
    def collect(self) -> Iterator[GaugeMetricFamily]:
        up = GaugeMetricFamily(
            "memory_metrics_database_up",
            "Whether the scrape could read the database's gauges (1) or not (0).",
        )
        try:
            families = list(self._families())
        except DatabaseError as exc:
            log.warning("metrics: database gauges unavailable (%s)", type(exc).__name__)
            up.add_metric([], 0)
            yield up
            return
        up.add_metric([], 1)
        yield up
        yield from families

    def describe(self) -> list[Any]:
        return []  # collected at scrape time only (no database work at registration)

    def _families(self) -> Iterator[GaugeMetricFamily]:
        from memory.models import Candidate, Job, PendingEmbedding, Record

        at = now()
        items = GaugeMetricFamily(
            "memory_items_total",
            "Memory records stored, by state (live, deleted: a tombstone).",
            labels=["state"],
        )
        counts = Record.objects.aggregate(
            live=Count("pk", filter=Q(deleted_at__isnull=True)),
            deleted=Count("pk", filter=Q(deleted_at__isnull=False)),
        )
        for state in ("live", "deleted"):
            items.add_metric([state], counts[state] or 0)
        yield items

        backlog = GaugeMetricFamily(
            "memory_embedding_backlog",
            "Records whose vector is still to be made (the derived-copy backlog).",
        )
        backlog.add_metric([], PendingEmbedding.objects.count())
        yield backlog

        depth = GaugeMetricFamily(
            "memory_jobs_queue_depth",
            "Jobs not finished, by kind and state (queued, running).",
            labels=["kind", "state"],
        )
        age = GaugeMetricFamily(
            "memory_jobs_oldest_age_seconds",
            "Age of the oldest unfinished job, by kind and state (since it was last enqueued).",
            labels=["kind", "state"],
        )
        rows = (
            Job.objects.filter(state__in=[Job.QUEUED, Job.RUNNING])
            .values("kind", "state")
            .annotate(n=Count("pk"), oldest=Min("enqueued_at"))
            .order_by()
        )
        for row in rows:
            labels = [row["kind"][:40], row["state"]]
            depth.add_metric(labels, row["n"])
            age.add_metric(labels, max(0.0, (at - row["oldest"]).total_seconds()))
        yield depth
        yield age

        size = GaugeMetricFamily(
            "memory_review_queue_size",
            "Candidates pending review, per space (the largest queues; the rest as _other).",
            labels=["space"],
        )
        oldest = GaugeMetricFamily(
            "memory_review_oldest_pending_age_seconds",
            "Age of the oldest candidate pending review, per space.",
            labels=["space"],
        )
        queues = list(
            Candidate.objects.filter(state=Candidate.PENDING)
            .values("space_id")
            .annotate(n=Count("pk"), oldest=Min("captured_at"))
            .order_by("-n", "space_id")
        )
        keep = settings.SPOKE_MEMORY_METRICS_MAX_SPACES
        for row in queues[:keep]:
            size.add_metric([row["space_id"]], row["n"])
            oldest.add_metric([row["space_id"]], max(0.0, (at - row["oldest"]).total_seconds()))
        rest = queues[keep:]
        if rest:
            size.add_metric([OTHER], sum(r["n"] for r in rest))
            first = min(r["oldest"] for r in rest)
            oldest.add_metric([OTHER], max(0.0, (at - first).total_seconds()))
        yield size
        yield oldest

        stored = GaugeMetricFamily(
            "memory_bytes_total",
            "Bytes of live records' content, per space (the largest; the rest as _other).",
            labels=["space"],
        )
        spaces = content_bytes()
        for space_id, n in spaces[:keep]:
            stored.add_metric([space_id], n)
        if spaces[keep:]:
            stored.add_metric([OTHER], sum(n for _, n in spaces[keep:]))
        yield stored

        if connection.vendor == "postgresql":
            conns = GaugeMetricFamily(
                "memory_db_connections",
                "Connections to this database, by state (pg_stat_activity: active, idle, ...).",
                labels=["state"],
            )
            with connection.cursor() as cur:
                cur.execute(
                    "SELECT coalesce(state, 'unknown'), count(*) FROM pg_stat_activity"
                    " WHERE datname = current_database() GROUP BY 1"
                )
                for state, n in cur.fetchall():
                    conns.add_metric([str(state)[:32]], n)
            limit = GaugeMetricFamily(
                "memory_db_connections_max", "The server's max_connections setting."
            )
            with connection.cursor() as cur:
                cur.execute("SHOW max_connections")
                limit.add_metric([], int(cur.fetchone()[0]))
            yield conns
            yield limit
