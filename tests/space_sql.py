"""The space-scoped statement checker (issue 30, docs/scaling.md): records every SQL statement a
block of code issues and says which ones touch a space-scoped table without naming the space.

A table is space-scoped when its model is in the `memory` app and not one of the REFERENCE models
(principals, tokens, sessions: the tables a Citus layout keeps as reference tables). A statement
names the space for one of its table references when

- that reference has an equality predicate on its own `space_id` column against a bound value or
  a literal (`"memory_record"."space_id" = %s`, `U0."space_id" = %s`, a one-value
  `"space_id" IN (%s)`; unqualified `space_id = %s` counts for a statement with one reference),
- or it is joined by an equality of `space_id` columns to a reference that names the space
  (`sub."space_id" = o."space_id"`: a co-located join, one shard),
- or it is the target of an INSERT (or COPY) whose column list carries `space_id`.

The parse is deliberately plain (regular expressions over the SQL Django and memory/statements.py
render: table names after FROM/JOIN/UPDATE/INTO, aliases after them), which is enough for the
statements this provider issues; a statement the parse cannot read names no space and fails."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from django.apps import apps
from django.db import connection

REFERENCE = {"Principal", "ApiToken", "WireSession"}

_KEYWORDS = {
    "WHERE",
    "JOIN",
    "INNER",
    "LEFT",
    "RIGHT",
    "FULL",
    "CROSS",
    "OUTER",
    "ON",
    "SET",
    "ORDER",
    "GROUP",
    "LIMIT",
    "OFFSET",
    "FOR",
    "RETURNING",
    "VALUES",
    "SELECT",
    "AS",
    "USING",
    "HAVING",
    "UNION",
    "WINDOW",
    "DEFAULT",
    "FROM",
    "AND",
    "OR",
}


def space_scoped_tables() -> dict[str, str]:
    """db_table -> model name of every space-scoped model."""
    return {
        m._meta.db_table: m.__name__
        for m in apps.get_app_config("memory").get_models()
        if m.__name__ not in REFERENCE
    }


_IDENT = r'"?([A-Za-z_][A-Za-z0-9_]*)"?'
_REF = re.compile(
    rf"\b(FROM|JOIN|UPDATE|INTO|COPY)\s+{_IDENT}(?:\s+(?:AS\s+)?{_IDENT})?(?:\s*\(([^)]*)\))?",
    re.IGNORECASE,
)
_BOUND = r"(?:%s|'[^']*'|\$\d+|-?\d+)"


@dataclass
class Ref:
    table: str
    qualifier: str  # the alias, or the table's own name
    verb: str
    columns: str | None = None


def table_refs(sql: str) -> list[Ref]:
    refs = []
    for m in _REF.finditer(sql):
        verb, table, alias, cols = m.group(1).upper(), m.group(2), m.group(3), m.group(4)
        if alias is not None and alias.upper() in _KEYWORDS:
            alias = None
        if verb in ("INTO", "COPY"):
            alias = None  # INSERT INTO t (cols): the parenthesis is the column list
        else:
            cols = None
        refs.append(Ref(table, alias or table, verb, cols))
    return refs


def _col(qualifier: str | None) -> str:
    q = rf'"?{re.escape(qualifier)}"?\.' if qualifier else r"(?<![.\w\"])"
    return rf'{q}"?space_id"?'


def names_space(sql: str, refs: list[Ref]) -> list[Ref]:
    """The references of `sql` to space-scoped tables that do not name the space."""
    scoped = space_scoped_tables()
    mine = [r for r in refs if r.table in scoped]
    named: set[str] = set()
    for r in mine:
        if r.verb in ("INTO", "COPY"):
            if r.columns is not None and re.search(r'(?<![\w])"?space_id"?(?![\w])', r.columns):
                named.add(r.qualifier)
            continue
        direct = rf"{_col(r.qualifier)}\s*(?:=\s*{_BOUND}|IN\s*\(\s*{_BOUND}\s*\))"
        if re.search(direct, sql, re.IGNORECASE):
            named.add(r.qualifier)
    if len(mine) == 1 and len(refs) == 1 and not named and mine[0].verb not in ("INTO", "COPY"):
        if re.search(rf"{_col(None)}\s*(?:=\s*{_BOUND}|IN\s*\(\s*{_BOUND}\s*\))", sql, re.I):
            named.add(mine[0].qualifier)
    # co-located joins: a.space_id = b.space_id carries the space across
    pairs = _pairs(sql)
    grew = True
    while grew:
        grew = False
        for a, b in pairs:
            if (a in named) != (b in named):
                named |= {a, b}
                grew = True
    return [r for r in mine if r.qualifier not in named]


_PAIR = re.compile(r'"?(\w+)"?\."?space_id"?\s*=\s*\(?\s*"?(\w+)"?\."?space_id"?', re.IGNORECASE)


_LOCKS = re.compile(r"\bFOR\s+(?:NO\s+KEY\s+)?(?:UPDATE|SHARE)\b|\bFOR\s+KEY\s+SHARE\b", re.I)


def _pairs(sql: str) -> list[tuple[str, str]]:
    """The `a.space_id = b.space_id` equalities of a statement (an outer reference in Django's
    parentheses too: `U0."space_id" = ("memory_job"."space_id")`)."""
    return _PAIR.findall(sql)


def not_colocated(sql: str, refs: list[Ref]) -> list[str]:
    """The space-scoped tables of a statement reading two or more of them that are not joined
    to the others on `space_id` (directly, through a chain of such equalities, or each naming
    the space): a join Citus cannot run shard by shard ("requires repartitioning"), also for
    the documented fan-outs, which may read every shard but only shard by shard."""
    scoped = space_scoped_tables()
    mine = [r for r in refs if r.table in scoped and r.verb not in ("INTO", "COPY")]
    if len(mine) < 2:
        return []
    unnamed = {r.qualifier for r in names_space(sql, refs)}
    group = {r.qualifier for r in mine if r.qualifier not in unnamed}  # each names the space
    if not group:
        group = {mine[0].qualifier}
    grew = True
    while grew:
        grew = False
        for a, b in _pairs(sql):
            if (a in group) != (b in group):
                group |= {a, b}
                grew = True
    return sorted({r.table for r in mine if r.qualifier not in group})


@dataclass
class Statement:
    label: str
    sql: str
    unnamed: list[str] = field(default_factory=list)  # space-scoped tables not naming the space
    apart: list[str] = field(default_factory=list)  # space-scoped tables joined off space_id
    params: object = None


@dataclass
class Recorder:
    label: str = "setup"
    statements: list[Statement] = field(default_factory=list)

    def record(self, sql: str, params: object = None) -> None:
        refs = table_refs(sql)
        missing = names_space(sql, refs)
        self.statements.append(
            Statement(
                self.label,
                sql,
                sorted({r.table for r in missing}),
                not_colocated(sql, refs),
                None if params is None else list(params),  # type: ignore[call-overload]
            )
        )

    def __call__(self, execute, sql, params, many, context):
        self.record(sql, None if many else params)
        return execute(sql, params, many, context)

    @contextmanager
    def phase(self, label: str) -> Iterator[None]:
        before, self.label = self.label, label
        try:
            yield
        finally:
            self.label = before

    def violations(
        self, exceptions: dict[tuple[str, str, str], str], skip: set[str] | frozenset = frozenset()
    ) -> list[Statement]:
        """Statements touching a space-scoped table without naming the space, except those of
        a documented exception: (phase label, table, a text the statement holds) -> reason,
        and those of the phases in `skip`; and every statement, exception or not, joining
        space-scoped tables other than on `space_id`, or locking rows (FOR UPDATE/SHARE)
        without naming the space."""
        out = []
        for s in self.statements:
            if s.label in skip:
                continue
            left = [
                t
                for t in s.unnamed
                if not any(
                    (label, table) == (s.label, t) and needle in s.sql
                    for label, table, needle in exceptions
                )
            ]
            if s.unnamed and _LOCKS.search(s.sql):
                left = s.unnamed  # a fan-out may read, but not lock: Citus refuses it
            if left or s.apart:
                out.append(Statement(s.label, s.sql, left, s.apart))
        return out


@contextmanager
def recording(recorder: Recorder) -> Iterator[Recorder]:
    with connection.execute_wrapper(recorder):
        yield recorder


_TASKS = re.compile(r"Task Count: (\d+)")


def task_counts(statements: list[Statement]) -> list[tuple[Statement, int, int]]:
    """On a Citus coordinator: each recorded statement touching a space-scoped table with its
    EXPLAIN's largest `Task Count` (1: one shard group, a router plan; more: a fan-out; -1: the
    EXPLAIN was refused, its error in `unnamed`) and its number of distributed subplans (steps
    the coordinator runs one after the other, e.g. the parts of a data-modifying CTE). Read
    after the fact with the statement's own parameters (the plan depends on the constants, not
    on the rows)."""
    scoped = space_scoped_tables()
    out = []
    with connection.cursor() as cur:
        for st in statements:
            head = st.sql.lstrip().split(None, 1)[0].upper()
            if head not in ("SELECT", "INSERT", "UPDATE", "DELETE", "WITH"):
                continue
            if not any(r.table in scoped for r in table_refs(st.sql)):
                continue
            if st.params is None and "%s" in st.sql:  # an executemany: not recorded with params
                continue
            cur.execute("SAVEPOINT explain_tasks")
            try:
                cur.execute("EXPLAIN " + st.sql, st.params)
            except Exception as exc:  # noqa: BLE001 - an EXPLAIN refused is what is reported
                cur.execute("ROLLBACK TO SAVEPOINT explain_tasks")
                out.append((Statement(st.label, st.sql, [f"EXPLAIN failed: {exc}"]), -1, 0))
                continue
            plan = "\n".join(row[0] for row in cur.fetchall())
            cur.execute("RELEASE SAVEPOINT explain_tasks")
            counts = [int(n) for n in _TASKS.findall(plan)]
            subplans = plan.count("Distributed Subplan")
            out.append((st, max(counts) if counts else 0, subplans))
    return out
