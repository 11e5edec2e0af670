"""engine/1's lexical index on PostgreSQL: the GIN index `record_recall_lexemes` over
`spoke_recall_lexemes(text)` (migration 0002), through which engine/1 and hybrid/1 narrow their
candidates (memory.selectors.recall.lexical_q). It exists exactly while the configured engine
reads it (`Engine.lexeme_index`); `manage.py migrate` makes it so, after the migrations
(docs/operators.md, "The lexical index follows the engine").

Why: every record write and every import activation maintains it (about half of activation's
time, docs/performance.md, issue 30), and engine/2, hybrid/2 and hybrid/3 never read it. What
is guaranteed either way: without the index PostgreSQL evaluates the same IMMUTABLE function on
each eligible record, so engine/1's answers are the same with and without it, only slower on a
large subject (tests/memory/recall/test_lexeme_index.py). A drop never loses data: the index
holds nothing the records do not, and building it again reads them.

The index is built and dropped CONCURRENTLY when the connection is not inside a transaction
(as `migrate` leaves it), so a running provider keeps reading and writing records meanwhile. A
concurrent build that failed leaves an invalid index behind; the next `migrate` drops and
rebuilds it."""

from __future__ import annotations

from typing import Any, Literal

from django.db import connections

from memory.models import Record
from memory.services.recall_engines import registry

NAME = "record_recall_lexemes"
State = Literal["valid", "invalid", "absent"]


def wanted() -> bool:
    """Whether the configured engine reads the index."""
    return registry.current().lexeme_index


def state(using: str = "default") -> State | None:
    """The index as it is in the database; None where there is no such index (not PostgreSQL)."""
    connection = connections[using]
    if connection.vendor != "postgresql":
        return None
    with connection.cursor() as cur:
        cur.execute(
            "SELECT i.indisvalid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid "
            "WHERE c.relname = %s AND pg_table_is_visible(c.oid)",
            [NAME],
        )
        row = cur.fetchone()
    if row is None:
        return "absent"
    return "valid" if row[0] else "invalid"


def reconcile(using: str = "default") -> str | None:
    """Build or drop the index so that it exists, valid, exactly when `wanted()`. Returns what
    it did ("built", "rebuilt", "dropped") or None when nothing needed doing (or not
    PostgreSQL)."""
    now = state(using)
    connection = connections[using]
    want = wanted() and now is not None and _function_exists(connection)
    if now is None or now == ("valid" if want else "absent"):
        return None
    how = "" if connection.in_atomic_block else "CONCURRENTLY"
    table = connection.ops.quote_name(Record._meta.db_table)
    with connection.cursor() as cur:
        if now != "absent":
            cur.execute(f"DROP INDEX {how} IF EXISTS {NAME}")
        if want:
            cur.execute(
                f"CREATE INDEX {how} IF NOT EXISTS {NAME} ON {table} "
                "USING gin (spoke_recall_lexemes(text))"
            )
            # An expression index has statistics of its own, gathered by ANALYZE only.
            cur.execute(f"ANALYZE {table}")
    if not want:
        return "dropped"
    return "rebuilt" if now == "invalid" else "built"


def _function_exists(connection: Any) -> bool:
    """Migration 0002 made the function (a database migrated back before it has none: then
    there is no index to keep either)."""
    with connection.cursor() as cur:
        cur.execute("SELECT to_regprocedure('spoke_recall_lexemes(text)') IS NOT NULL")
        return bool(cur.fetchone()[0])


def after_migrate(sender: Any, using: str = "default", **kwargs: Any) -> None:
    """post_migrate: reconcile once the migrations ran. `flush` (the test suite's transactional
    tests) sends the same signal without a plan: nothing then, the schema did not change."""
    if "plan" not in kwargs:
        return
    done = reconcile(using)
    if done and kwargs.get("verbosity", 1) >= 1 and kwargs.get("stdout") is not None:
        kwargs["stdout"].write(
            f"  {NAME} (engine/1's lexical index) {done}: the configured engine "
            f"{'reads' if wanted() else 'does not read'} it"
        )
