"""Every hand-written SQL statement of the provider, in one place (beside `memory/rows.py`, which
renders a model's columns once and builds instances from result rows).

Each exists because the ORM could not say it in one round trip (the revision bumps with their
re-check, the commit tail) or because its compilation cost on every request was measurable (the
per-request look-ups of a fixed shape; rows.py says how much). Each is rendered once per process
from the models' metadata (table and column names, never a value: values are always bound), and
each has a test that proves it answers what the ORM query it stands for answers
(tests/memory/test_statements.py). Policy modules (access.py) say what to ask; this module says
how it is asked."""

from __future__ import annotations

from functools import cache, partial
from typing import Any

from django.db import connection, models
from django.db.backends.base.base import BaseDatabaseWrapper

from memory import rows
from memory.models import (
    ApiToken,
    Grant,
    IdempotencyKey,
    Principal,
    Receipt,
    Record,
    RecordRevision,
    RecordTerm,
    Space,
    Subject,
    VectorGeneration,
)

# A liveness probe of the database (readiness).
PING = "SELECT 1"
# One snapshot for the rest of a transaction (PostgreSQL: the export job reads the space once).
REPEATABLE_READ = "SET TRANSACTION ISOLATION LEVEL REPEATABLE READ"


@cache
def coverage(share: bool = False, with_subject: bool = False, once: bool = False) -> str:
    """A principal's effective grants in a space (`access.effective_q`: active, no revoked
    ancestor, unexpired at the bound time), in issue order, joined with the space (and one
    subject of it). Parameters: [space_id, principal_id, ACTIVE, False, at] (with `once` those
    five twice, first for the sub-select; with `with_subject` the subject id before the last
    five). `once`: only the first grant's row carries the space and subject columns (NULL on the
    others), so a principal with many grants in the space does not pay for decoding the same
    space and subject once per grant (the first grant is chosen by a sub-select with the same
    conditions, evaluated once per statement). `share`: FOR SHARE OF the grant rows."""
    g, s = rows.columns(Grant, "g"), rows.columns(Space, "s")
    col = partial(rows.quoted, Grant)
    space_pk = f"s.{rows.quoted(Space, 'space_id')}"
    effective = (
        " WHERE {a}.{space} = %s AND {a}.{grantee} = %s AND {a}.{state} = %s"
        " AND {a}.{revoked} = %s AND ({a}.{expires} IS NULL OR {a}.{expires} > %s)"
        " ORDER BY {a}.{created}, {a}.{pk}"
    )
    names = {
        "space": col("space"),
        "grantee": col("grantee"),
        "state": col("state"),
        "revoked": col("ancestor_revoked"),
        "expires": col("expires_at"),
        "created": col("created_at"),
        "pk": col("grant_id"),
    }
    on = f"{space_pk} = g.{col('space')}"
    if once:
        first = f"SELECT f.{col('grant_id')} FROM {g.table} f"  # noqa: S608 - names from model metadata; values are bound
        on += f" AND g.{col('grant_id')} = ({first}{effective.format(a='f', **names)} LIMIT 1)"
    select, join = f"SELECT {g.sql}, {s.sql}", f" {'LEFT ' if once else ''}JOIN {s.table} s ON {on}"
    if with_subject:
        sub = rows.columns(Subject, "sub")
        select += f", {sub.sql}"
        join += (
            f" LEFT JOIN {sub.table} sub ON sub.{rows.quoted(Subject, 'space')} = {space_pk}"
            f" AND sub.{rows.quoted(Subject, 'subject_id')} = %s"
        )
    return (
        f"{select} FROM {g.table} g{join}"  # noqa: S608 - names from model metadata; values are bound
        + effective.format(a="g", **names)
        + (" FOR SHARE OF g" if share else "")
    )


def _joined(
    base: rows.Columns[Any],
    other: rows.Columns[Any],
    on: tuple[str, str],
    select: str,
    space: str = "",
) -> str:
    """SELECT `select` FROM base JOIN other ON other.<on[0]> = base.<on[1]> (aliases as named);
    with `space` (a field of both holding the space), AND other.<space> = base.<space> too: a
    join within one space (one shard under Citus, docs/scaling.md)."""
    key, fk = rows.quoted(other.model, on[0]), rows.quoted(base.model, on[1])
    sql = (
        f"SELECT {select} FROM {base.table} {base.alias}"  # noqa: S608 - names from model metadata; values are bound
        f" JOIN {other.table} {other.alias} ON {other.alias}.{key} = {base.alias}.{fk}"
    )
    if space:
        sql += (
            f" AND {other.alias}.{rows.quoted(other.model, space)}"
            f" = {base.alias}.{rows.quoted(base.model, space)}"
        )
    return sql


def _where(cols: rows.Columns[Any], *names: str) -> str:
    """WHERE alias.name = %s AND … (each value bound)."""
    return " WHERE " + " AND ".join(
        f"{cols.alias}.{rows.quoted(cols.model, n)} = %s" for n in names
    )


@cache
def placed(model: type[models.Model], id_field: str, lock: bool) -> str:
    """An object of a space by its wire id, with its subject. Parameters: [space_id, id].
    `lock`: FOR UPDATE of the object's row alone (PostgreSQL; SQLite's writer lock is the whole
    database)."""
    o, sub = rows.columns(model, "o"), rows.columns(Subject, "sub")
    sql = _joined(o, sub, ("id", "subject"), f"{o.sql}, {sub.sql}", "space") + _where(
        o, "space", id_field
    )
    if lock and connection.features.has_select_for_update:
        sql += " FOR UPDATE OF o" if connection.features.has_select_for_update_of else " FOR UPDATE"
    return sql


@cache
def token_principal() -> str:
    """The principal of an unrevoked API token, with the token's hash last. Parameters:
    [token_hash]."""
    p, t = rows.columns(Principal, "p"), rows.columns(ApiToken, "t")
    token_hash = f"t.{rows.quoted(ApiToken, 'token_hash')}"
    return (
        _joined(t, p, ("principal_id", "principal"), f"{p.sql}, {token_hash}")
        + _where(t, "token_hash")
        + f" AND t.{rows.quoted(ApiToken, 'revoked_at')} IS NULL"
    )


@cache
def idempotency_key() -> str:
    """An idempotency key row with its receipt. Parameters: [space_id, principal_id, op, key]."""
    k, r = rows.columns(IdempotencyKey, "k"), rows.columns(Receipt, "r")
    return _joined(k, r, ("receipt_id", "receipt"), f"{k.sql}, {r.sql}", "space_id") + _where(
        k, "space_id", "principal", "op", "key"
    )


def _subject_bump(gate: str) -> str:
    """A subject's bump without RETURNING: [updated_at, space_id, pk] and `gate`'s parameters."""
    q = connection.ops.quote_name
    sub = Subject._meta
    st = q(sub.db_table)
    return (
        f"UPDATE {st} SET {q('revision')} = {q('revision')} + 1,"  # noqa: S608 - names from model metadata; values are bound
        f" {q('updated_at')} = %s WHERE {st}.{q('space_id')} = %s"
        f" AND {st}.{q(sub.pk.column)} = %s{gate}"
    )


def _space_bump(after: str = "") -> str:
    """The space's bump: [updated_at, pk, state, activation_pending] and `after`'s."""
    q = connection.ops.quote_name
    space = Space._meta
    sp = q(space.db_table)
    return (
        f"UPDATE {sp} SET {q('revision')} = {q('revision')} + 1,"  # noqa: S608 - names from model metadata; values are bound
        f" {q('updated_at')} = %s WHERE {sp}.{q(space.pk.column)} = %s"
        f" AND {sp}.{q('state')} = %s AND {sp}.{q('activation_pending')} = %s{after}"
        f" RETURNING {q('revision')}"
    )


@cache
def revision_bumps() -> dict[str, str]:
    """The two revision bumps of a mutation's commit: each takes its row lock, moves the revision
    by one and re-checks the gate state in the same statement (RETURNING: PostgreSQL, SQLite ≥
    3.35). "subject": [updated_at, space_id, pk] -> (revision, state, fenced_context_ids);
    "space": [updated_at, pk, state and activation_pending the body saw] -> (revision,), no row
    when either moved. Columns are qualified by their table, so each names its space even inside
    the commit tail's WITH."""
    q = connection.ops.quote_name
    return {
        "subject": _subject_bump("")
        + f" RETURNING {q('revision')}, {q('state')}, {q('fenced_context_ids')}",
        "space": _space_bump(),
    }


def _insert_select(model: type[models.Model], skip: str, source: str) -> str:
    """INSERT INTO model (every column) SELECT %s::type, … with `skip`'s column from `source`."""
    q = connection.ops.quote_name
    columns, values = [], []
    for f in model._meta.concrete_fields:
        if f.primary_key and isinstance(f, models.AutoField):
            continue
        columns.append(q(f.column))
        # django-stubs lacks Field.cast_db_type (Django has it)
        cast_type = f.cast_db_type  # type: ignore[attr-defined]
        values.append(source if f.name == skip else f"%s::{cast_type(connection)}")
    return (
        f"INSERT INTO {q(model._meta.db_table)} ({', '.join(columns)}) SELECT {', '.join(values)}"
    )


def insert_values(obj: models.Model, skip: str) -> list[Any]:
    """The bound values of `obj`'s row for `commit_tail` (every concrete column but `skip` and
    an auto primary key), as the ORM would save them."""
    return [
        f.get_db_prep_save(getattr(obj, f.attname), connection)
        for f in obj._meta.concrete_fields
        if f.name != skip and not (f.primary_key and isinstance(f, models.AutoField))
    ]


@cache
def commit_tail(with_key: bool, subjects: int = 0, rows: tuple[str, ...] = ()) -> str:
    """PostgreSQL: the whole serialized end of a mutation as one statement, so the subject and
    space row locks are held for one round trip and the COMMIT: each touched subject's bump (in
    the order given, which is key order), the space bump, the receipt insert (its space_revision
    taken from the space bump) and the idempotency key insert. Each bump re-checks the gate
    state the body saw, and each runs only once the one before it found its row (`EXISTS` on the
    previous bump: the row locks are taken in that order, subjects before the space). Parameters:
    per subject [updated_at, space_id, pk, state, fenced_context_ids as JSON text], then the
    space bump's,
    the receipt's `insert_values` (without space_revision), the key's (without receipt), then
    each of `rows`' parameters: `rows` are INSERT statements (`unnest_insert`) of rows the body
    handed to the tail (`mutation.defer_rows`: the embedding backlog), each run as a CTE of its
    own after the rest. One row: (space_revision, each subject's new revision); a NULL
    space_revision: a gate moved, nothing was inserted (and the transaction must roll the bumps
    and those rows back)."""
    q = connection.ops.quote_name
    fenced = Subject._meta.get_field("fenced_context_ids").db_type(connection)
    st = q(Subject._meta.db_table)
    gate = f" AND {st}.{q('state')} = %s AND {st}.{q('fenced_context_ids')} = %s::{fenced}"
    ctes, after = [], ""
    for i in range(subjects):
        ctes.append(f"s{i} AS ({_subject_bump(gate + after)} RETURNING {q('revision')})")
        after = f" AND EXISTS (SELECT 1 FROM s{i})"  # noqa: S608 - a CTE's name
    ctes.append(f"sp AS ({_space_bump(after)})")
    ctes.append(
        f"r AS ({_insert_select(Receipt, 'space_revision', 'sp.revision')} FROM sp"
        f" RETURNING {q('receipt_id')}, {q('space_revision')})"
    )
    if with_key:
        receipt_id = f"r.{q('receipt_id')}"
        ctes.append(f"k AS ({_insert_select(IdempotencyKey, 'receipt', receipt_id)} FROM r)")
    ctes += [f"x{i} AS ({sql})" for i, sql in enumerate(rows)]
    picks = [f"(SELECT {q('space_revision')} FROM r)"]  # noqa: S608 - names from model metadata
    picks += [f"(SELECT {q('revision')} FROM s{i})" for i in range(subjects)]  # noqa: S608 - same
    return f"WITH {', '.join(ctes)} SELECT {', '.join(picks)}"  # noqa: S608 - names from model metadata


def _field(model: type[models.Model], name: str) -> models.Field[Any, Any]:
    """A concrete field of `model` by name or attname (a column, not a relation's reverse)."""
    found = model._meta.get_field(name)
    if not isinstance(found, models.Field) or not found.column:
        raise TypeError(f"{model.__name__}.{name} is not a column")
    return found


# A record's first revision row copies these of the record's columns (record_store._snapshot).
_REVISION_FROM_RECORD = {
    "space": "space",
    "record": "id",
    "revision": "revision",
    "kind": "kind",
    "content": "content",
    "placement_scope": "placement_scope",
    "placement_context_id": "placement_context_id",
    "created_at": "updated_at",
}


# A new record's term rows (memory.services.term_store.TERM_FIELDS): the first three columns
# from the record the statement inserts, the others from one array each.
_TERMS_FROM_RECORD = {"space": "space", "record": "id", "subject": "subject"}
_TERMS_FROM_ARRAYS = ("term", "tf", "length", "created_ms")


@cache
def record_with_revision(terms: bool = False) -> str:
    """PostgreSQL: a new record and its revision row as one statement (one round trip, where
    the ORM sends two): the record INSERT, and the revision row made from what it RETURNING
    (`record_store._snapshot`'s columns). With `terms`, its term rows too (engine/2's derived
    copy, `term_store.term_rows`): the record's space, id and subject, and the term, tf, length
    and created_ms of each row from one array each (empty arrays: no row). Parameters: the
    record's `insert_values` (no skip), then with `terms` the four arrays. One row: the
    record's primary key."""
    q = connection.ops.quote_name
    record, revision = Record._meta, RecordRevision._meta
    columns = [
        f for f in record.concrete_fields if not (f.primary_key and isinstance(f, models.AutoField))
    ]
    names = ", ".join(q(f.column) for f in columns)
    marks = ", ".join("%s" for _ in columns)
    copied = [_field(RecordRevision, n) for n in _REVISION_FROM_RECORD]
    if {f.name for f in revision.concrete_fields} - {"id", *_REVISION_FROM_RECORD}:
        raise RuntimeError("a RecordRevision column has no source in the record")
    sources = [_field(Record, n).column for n in _REVISION_FROM_RECORD.values()]
    term_sources = [_field(Record, n).column for n in _TERMS_FROM_RECORD.values()]
    kept = [record.pk.column, *sources, *(term_sources if terms else ())]
    returning = ", ".join(q(c) for c in dict.fromkeys(kept))
    sql = (
        f"WITH r AS (INSERT INTO {q(record.db_table)} ({names}) VALUES ({marks})"  # noqa: S608 - names from model metadata; values are bound
        f" RETURNING {returning}),"
        f" v AS (INSERT INTO {q(revision.db_table)} ({', '.join(q(f.column) for f in copied)})"
        f" SELECT {', '.join(f'r.{q(c)}' for c in sources)} FROM r)"
    )
    if terms:
        filled = [_field(RecordTerm, n) for n in (*_TERMS_FROM_RECORD, *_TERMS_FROM_ARRAYS)]
        arrays = [_field(RecordTerm, n) for n in _TERMS_FROM_ARRAYS]
        sql += (
            f", t AS (INSERT INTO {q(RecordTerm._meta.db_table)}"  # noqa: S608 - names from model metadata; values are bound
            f" ({', '.join(q(f.column) for f in filled)})"
            f" SELECT {', '.join(f'r.{q(c)}' for c in term_sources)}, u.*"
            f" FROM r, unnest({', '.join(f'%s::{f.db_type(connection)}[]' for f in arrays)}) u)"
        )
    return sql + f" SELECT r.{q(record.pk.column)} FROM r"  # noqa: S608 - names from model metadata


@cache
def unnest_insert(
    model: type[models.Model],
    fields: tuple[str, ...],
    conflict: tuple[str, ...] = (),
    update: tuple[str, ...] = (),
) -> str:
    """PostgreSQL: many rows of `model` in one statement whose shape does not depend on how
    many (the ORM's bulk_create compiles one placeholder per value, on every call): INSERT …
    SELECT FROM unnest(one array per column). With `conflict` (the fields of a unique
    constraint) and `update`: ON CONFLICT … DO UPDATE SET each `update` field to the new row's,
    as bulk_create(update_conflicts=True) says it. Parameters: one list per field, in order."""
    q = connection.ops.quote_name
    meta = model._meta
    columns = [_field(model, n) for n in fields]
    arrays = ", ".join(f"%s::{f.db_type(connection)}[]" for f in columns)
    sql = (
        f"INSERT INTO {q(meta.db_table)} ({', '.join(q(f.column) for f in columns)})"  # noqa: S608 - names from model metadata; values are bound
        f" SELECT * FROM unnest({arrays})"
    )
    if conflict:
        unique = ", ".join(q(_field(model, n).column) for n in conflict)
        sets = ", ".join(
            f"{q(c)} = EXCLUDED.{q(c)}" for c in (_field(model, n).column for n in update)
        )
        sql += f" ON CONFLICT ({unique}) DO UPDATE SET {sets}"
    return sql


@cache
def space_key_share() -> str:
    """PostgreSQL: FOR KEY SHARE on a space row, which every mutation's commit tail locks FOR
    UPDATE: waits for the mutations in flight and holds off new ones. Parameters: [space_id]."""
    table = connection.ops.quote_name(Space._meta.db_table)
    column = connection.ops.quote_name(Space._meta.pk.column)
    return f"SELECT 1 FROM {table} WHERE {table}.{column} = %s FOR KEY SHARE"  # noqa: S608 - names from model metadata


@cache
def vector_generation_bump(subjects: int, step: int = 1) -> str:
    """Add `step` to the vector generation (memory.models.VectorGeneration) of `subjects`
    subjects, a subject without a row getting one at `step`. Parameters: (subject pk, space_id)
    per subject, in subject pk order (concurrent drains then lock the rows in one order)."""
    table = connection.ops.quote_name(VectorGeneration._meta.db_table)
    q = connection.ops.quote_name
    subject, space, generation = (
        q(_field(VectorGeneration, n).column) for n in ("subject", "space", "generation")
    )
    step = int(step)
    values = ", ".join([f"(%s, %s, {step})"] * subjects)
    return (
        f"INSERT INTO {table} ({subject}, {space}, {generation}) VALUES {values}"  # noqa: S608 - names from model metadata
        f" ON CONFLICT ({subject}, {space}) DO UPDATE SET {generation} = {table}.{generation} + {step}"
    )


def execute(sql: str, params: list[Any] | None = None) -> tuple[Any, ...] | None:
    """Run one statement; its first row, if it returns any."""
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchone() if cursor.description else None


CITUS_SEQUENTIAL = (
    "SELECT set_config('citus.multi_shard_modify_mode', 'sequential', false)"
    " FROM pg_extension WHERE extname = 'citus'"
)


def session_settings(sender: object, connection: BaseDatabaseWrapper, **_: object) -> None:
    """`connection_created`: what every PostgreSQL session of the provider runs without. JIT
    compilation (on by default, past jit_above_cost) costs ~0.8 s of LLVM per statement whose
    estimate crosses it — a recall ranking over a large subject does — for statements that run
    in milliseconds. A `SET` on the new session rather than a libpq startup option, which
    pgbouncer refuses unless told to ignore it (docs/deployment.md).

    On a Citus coordinator, multi-shard statements run over one connection per worker
    (`citus.multi_shard_modify_mode = sequential`): Citus refuses a write to a reference table
    (a new principal, a token) in a transaction after a multi-shard statement ran in parallel
    ("cannot modify table … because there was a parallel operation on a distributed table"),
    and the provider's fan-outs (spaces.list, receipts.get by id, the sweepers' scans) are few
    and small. Without the extension the statement sets nothing."""
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SET jit = off")
            cursor.execute(CITUS_SEQUENTIAL)
