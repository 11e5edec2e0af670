"""Planner statistics after the product's own bulk writes (PostgreSQL; nothing elsewhere).

PostgreSQL plans from the statistics ANALYZE gathers (pg_class.reltuples, pg_statistic); a
table nobody analyzed, or one analyzed while it was empty, is planned from guesses, and a guess
can turn a statement that reads a subject's rows once into one that reads them once per row
(issue 49: a 35 s first recall after an import on a server with autovacuum off). Autovacuum
analyzes a table once `autovacuum_analyze_threshold + autovacuum_analyze_scale_factor ×
reltuples` rows changed (50 + 10 % by default), but only when it runs (it may be off, and its
naptime and thresholds come round late after a bulk load). So every path that writes many rows
at once — import activation, the embedding drain and the backfills, the lexical index build —
calls `analyze_grown` with what it wrote, and the tables that crossed autovacuum's own
threshold are analyzed now, before the path's receipt commits (ANALYZE runs inside a
transaction block on PostgreSQL; rows the transaction wrote are sampled as live, rows it
deleted are not, so the statistics describe the state that commits).

ANALYZE holds a SHARE UPDATE EXCLUSIVE lock on its table until the transaction ends (it does
not block reads or writes, only another ANALYZE, VACUUM or index build of the table); tables
are always taken in name order, so two activations analyzing the same tables cannot deadlock.
An operator who loads rows by other means (pg_restore, COPY, a script) runs `ANALYZE` on the
tables after it (docs/deployment.md)."""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping

from django.db import DatabaseError, connection, models, transaction

from memory.services import citus

log = logging.getLogger("memory.stats")

# autovacuum's defaults (autovacuum_analyze_threshold, autovacuum_analyze_scale_factor)
THRESHOLD = 50
SCALE = 0.1


def _tables(models_: Iterable[type[models.Model]]) -> list[str]:
    return sorted({m._meta.db_table for m in models_})


def analyze(models_: Iterable[type[models.Model]]) -> list[str]:
    """ANALYZE the models' tables now (PostgreSQL), in name order; returns the tables analyzed
    (none on another database)."""
    if connection.vendor != "postgresql":
        return []
    tables = _tables(models_)
    with connection.cursor() as cur:
        for table in tables:
            cur.execute(f"ANALYZE {connection.ops.quote_name(table)}")
    if tables:
        log.info("statistics gathered for %s", ", ".join(tables))
    return tables


def believed_rows(
    models_: Iterable[type[models.Model]], space_id: str | None = None
) -> dict[str, float]:
    """table → the planner's row count (pg_class.reltuples; -1: never analyzed) (PostgreSQL). On
    a Citus coordinator a distributed table's count is its shards', on the workers
    (`citus.shard_rows`: the shard holding `space_id` when the caller wrote one space)."""
    tables = _tables(models_)
    if connection.vendor != "postgresql" or not tables:
        return {}
    with connection.cursor() as cur:
        cur.execute(
            "SELECT c.relname, c.reltuples FROM pg_class c"
            " WHERE c.oid = ANY(CAST(%s AS regclass[]))",
            [tables],
        )
        believed = {name: float(rows) for name, rows in cur.fetchall()}
        believed.update(citus.shard_rows(cur, tables, space_id))
        return believed


def analyze_grown(
    written: Mapping[type[models.Model], int], space_id: str | None = None
) -> list[str]:
    """ANALYZE those of the tables whose rows written (inserted, updated or deleted) by the
    caller reach autovacuum's own threshold against what the planner believes the table holds
    (every table never analyzed, or analyzed empty, that was written to at all past the
    threshold's constant). `space_id`: the one space the caller wrote (on Citus, the shard whose
    statistics count). Returns the tables analyzed."""
    if connection.vendor != "postgresql":
        return []
    counts: dict[str, int] = {}
    for model, n in written.items():
        counts[model._meta.db_table] = counts.get(model._meta.db_table, 0) + n
    believed = believed_rows((m for m, n in written.items() if n > 0), space_id)
    grown = [
        table
        for table, rows in believed.items()
        if counts[table] >= THRESHOLD + SCALE * max(rows, 0.0)
    ]
    if not grown:
        return []
    with connection.cursor() as cur:
        for table in sorted(grown):
            cur.execute(f"ANALYZE {connection.ops.quote_name(table)}")
    log.info("statistics gathered for %s after a bulk write", ", ".join(sorted(grown)))
    return sorted(grown)


def vacuum_after_commit(tables: list[str]) -> None:
    """Once the caller's transaction commits, VACUUM those tables (PostgreSQL; VACUUM cannot run
    inside a transaction block). Recall reads the term rows through a covering index, and an
    index-only scan skips the heap only for pages the visibility map marks all-visible: a table
    just filled by a bulk write has none marked until a VACUUM, so every posting costs a heap
    fetch (issue 49: 10,414 of them per query at 20,000 records, the lexical head ~25 % slower)
    until autovacuum comes round — or never, where it is off. Runs after the receipt commits: a
    failure is logged, never the job's."""
    if connection.vendor != "postgresql" or not tables:
        return

    def run() -> None:
        if connection.in_atomic_block:  # called inside an outer transaction: nothing to do now
            return
        try:
            with connection.cursor() as cur:
                for table in sorted(tables):
                    cur.execute(f"VACUUM {connection.ops.quote_name(table)}")
        except DatabaseError:
            log.warning("VACUUM after a bulk write failed (autovacuum will come round)")
            return
        log.info("vacuumed %s after a bulk write", ", ".join(sorted(tables)))

    transaction.on_commit(run)
