"""`manage.py spoke citus-setup` (docs/scaling.md "Moving onto Citus"): on a Citus coordinator
with its workers added, after `manage.py migrate`, make every table of the provider a reference
table or a distributed one, in the order that works, idempotently.

- **Reference tables** (on every node): the principals and their tokens, and Django's auth,
  content-type, guardian and admin-log tables: read on every request, written rarely.
- **Distributed by `space_id`**, all co-located with `memory_space`: every other `memory` table
  (migration 0022 made their primary and foreign keys hold `space_id`).
- **Distributed by their own key**: `memory_wiresession` (`session_id`) and `django_session`
  (`session_key`), not co-located with anything.
- `django_migrations` stays a table of the coordinator alone (only `migrate` reads it).

The order: `citus.enable_local_reference_table_foreign_keys` off (else making a reference table
first turns every table with a foreign key to it into a Citus local table, which can then
not be distributed), and each table after every table its foreign keys point at. A table already
distributed as it should be is left alone; a Citus local table (left by an earlier attempt in
another order) is turned back into a plain one first. The schema has no SQL function of its own
to propagate (migration 0023 dropped engine/1's `spoke_recall_lexemes` with its index)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from django.apps import apps
from django.db import connection
from django.db.backends.utils import CursorWrapper

SPACE_KEY = "space_id"
ANCHOR = "memory_space"
REFERENCE_APPS = {"auth", "contenttypes", "guardian", "admin"}
REFERENCE_MODELS = {"memory.Principal", "memory.ApiToken"}
OWN_KEY = {"memory_wiresession": "session_id", "django_session": "session_key"}


class CitusError(Exception):
    """Not a Citus coordinator with workers, or a table Citus refused (the message says which)."""


@dataclass
class Layout:
    reference: list[str] = field(default_factory=list)
    by_space: list[str] = field(default_factory=list)
    own_key: dict[str, str] = field(default_factory=dict)

    def kind(self, table: str) -> str | None:
        if table in self.reference:
            return "reference"
        if table in self.by_space or table in self.own_key:
            return "distributed"
        return None


def layout() -> Layout:
    """Every table of the installed apps, by how Citus holds it (auto-created many-to-many
    tables included: they follow their app)."""
    out = Layout()
    for model in apps.get_models(include_auto_created=True):
        meta = model._meta
        if not meta.managed or meta.proxy:
            continue
        table, label = meta.db_table, f"{meta.app_label}.{model.__name__}"
        if table in OWN_KEY:
            out.own_key[table] = OWN_KEY[table]
        elif meta.app_label in REFERENCE_APPS or label in REFERENCE_MODELS:
            out.reference.append(table)
        elif meta.app_label == "memory":
            out.by_space.append(table)
    return out


def _one(cur: CursorWrapper, sql: str, params: list[Any] | None = None) -> Any:
    cur.execute(sql, params)
    row = cur.fetchone()
    return row[0] if row else None


def check_cluster(cur: CursorWrapper) -> int:
    """The number of active workers; CitusError when this is not a Citus coordinator with any."""
    if connection.vendor != "postgresql":
        raise CitusError("citus-setup needs PostgreSQL with the Citus extension (DATABASE_URL)")
    if _one(cur, "SELECT extversion FROM pg_extension WHERE extname = 'citus'") is None:
        raise CitusError(
            "the database has no Citus extension: run CREATE EXTENSION citus on the coordinator"
            " and on every worker, and add the workers (citus_add_node), first"
        )
    workers = _one(
        cur,
        "SELECT count(*) FROM pg_dist_node WHERE groupid <> 0 AND isactive"
        " AND noderole = 'primary'",
    )
    if not workers:
        raise CitusError("the coordinator has no active worker: add them with citus_add_node")
    return int(workers)


def _fk_targets(cur: CursorWrapper, tables: list[str]) -> dict[str, set[str]]:
    cur.execute(
        "SELECT r.relname, f.relname FROM pg_constraint c"
        " JOIN pg_class r ON r.oid = c.conrelid JOIN pg_class f ON f.oid = c.confrelid"
        " WHERE c.contype = 'f' AND r.relname = ANY(%s)"
        " AND r.relnamespace = current_schema()::regnamespace",
        [tables],
    )
    out: dict[str, set[str]] = {t: set() for t in tables}
    for table, target in cur.fetchall():
        if target != table and target in out:
            out[table].add(target)
    return out


def order(tables: list[str], targets: dict[str, set[str]]) -> list[str]:
    """Each table after every table its foreign keys point at (ties by name; the anchor of the
    co-location group before the tables co-located with it)."""
    done: list[str] = []
    left = sorted(tables, key=lambda t: (t != ANCHOR, t))
    while left:
        ready = [t for t in left if targets.get(t, set()) <= set(done)]
        if not ready:
            raise CitusError(f"foreign keys form a cycle among {sorted(left)}")
        done.append(ready[0])
        left.remove(ready[0])
    return done


def current(cur: CursorWrapper) -> dict[str, str]:
    """table -> 'reference' | 'distributed' | 'local' for the tables Citus already holds."""
    cur.execute("SELECT table_name::text, citus_table_type FROM citus_tables")
    return {name: kind for name, kind in cur.fetchall()}


def setup(shard_count: int | None = None) -> dict[str, Any]:
    """Distribute the schema (idempotent). Returns what it did, for the command's JSON."""
    plan = layout()
    done: dict[str, list[str]] = {"reference": [], "distributed": [], "unchanged": []}
    with connection.cursor() as cur:
        workers = check_cluster(cur)
        cur.execute("SET citus.enable_local_reference_table_foreign_keys = off")
        if shard_count is not None:
            cur.execute("SELECT set_config('citus.shard_count', %s, false)", [str(shard_count)])
        tables = [*plan.reference, *plan.by_space, *plan.own_key]
        present = set(
            _table for _table in tables if _one(cur, "SELECT to_regclass(%s)", [_table]) is not None
        )
        tables = [t for t in tables if t in present]
        held = current(cur)
        for table in tables:
            if held.get(table) == "local":  # an earlier attempt in another order made it one
                cur.execute(
                    "SELECT undistribute_table(%s, cascade_via_foreign_keys => true)", [table]
                )
        held = current(cur)
        for table in order(tables, _fk_targets(cur, tables)):
            want = plan.kind(table)
            if held.get(table) == want:
                done["unchanged"].append(table)
                continue
            if held.get(table) is not None:
                raise CitusError(f"{table} is already a {held[table]} table; expected {want}")
            try:
                if want == "reference":
                    cur.execute("SELECT create_reference_table(%s)", [table])
                elif table in plan.own_key:
                    cur.execute(
                        "SELECT create_distributed_table(%s, %s, colocate_with => 'none')",
                        [table, plan.own_key[table]],
                    )
                else:
                    cur.execute(
                        "SELECT create_distributed_table(%s, %s, colocate_with => %s)",
                        [table, SPACE_KEY, "default" if table == ANCHOR else ANCHOR],
                    )
            except Exception as exc:  # a refusal names the table it was about
                raise CitusError(f"{table}: {exc}") from exc
            done["reference" if want == "reference" else "distributed"].append(table)
        cur.execute("RESET citus.enable_local_reference_table_foreign_keys")
    return {"workers": workers, **done}


# reltuples of one shard, run on its worker (run_command_on_shards puts the shard's name for %s)
_SHARD_RELTUPLES = "SELECT reltuples FROM pg_class WHERE oid = '%s'::regclass"


def shard_rows(
    cur: CursorWrapper, tables: list[str], space_id: str | None = None
) -> dict[str, float]:
    """The planner's row counts of those `tables` Citus distributes (or replicates), read where
    they are: each shard's `pg_class.reltuples` on its worker (the coordinator's shell table holds
    no rows, and its `reltuples` says 0 or -1 whatever the shards hold). A worker plans a shard's
    statement from that shard's statistics, so the count is the one shard's: the shard holding
    `space_id` (a table distributed by the space), else the least any of the table's shards
    believes (a write to unknown spaces may have gone to that one); -1 when it was never
    analyzed. {} off Citus (no extension), or for tables Citus does not hold."""
    if connection.vendor != "postgresql" or not tables:
        return {}
    if _one(cur, "SELECT extversion FROM pg_extension WHERE extname = 'citus'") is None:
        return {}
    cur.execute(
        "SELECT logicalrelid::regclass::text,"
        " CASE WHEN partmethod = 'h' THEN column_to_column_name(logicalrelid, partkey) END"
        " FROM pg_dist_partition WHERE logicalrelid = ANY(CAST(%s AS regclass[]))",
        [tables],
    )
    out: dict[str, float] = {}
    for table, key in cur.fetchall():
        if space_id is not None and key == SPACE_KEY:
            cur.execute(
                "SELECT r.result FROM run_command_on_shards(%s, %s) r"
                " WHERE r.success AND r.shardid = get_shard_id_for_distribution_column(%s, %s)",
                [table, _SHARD_RELTUPLES, table, space_id],
            )
        else:
            cur.execute(
                "SELECT r.result FROM run_command_on_shards(%s, %s) r WHERE r.success",
                [table, _SHARD_RELTUPLES],
            )
        counts = [float(row[0]) for row in cur.fetchall()]
        if counts:
            out[table] = min(counts)
    return out
