"""Fixed-shape hot queries without the ORM's per-call SQL compilation.

Every request authenticates (token → principal) and loads the caller's coverage (effective grants
joined with their space). Their SQL never changes shape, yet the ORM compiles it afresh each time,
which profiling showed to be a third of a read's cost. `Columns` renders a model's columns once
and turns result rows back into model instances through the same field converters the ORM applies
(JSON, datetimes on SQLite, …), so the instances are the ORM's own."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import cache
from typing import Any, Generic, TypeVar

from django.db import connection, models

M = TypeVar("M", bound=models.Model)


class Columns(Generic[M]):
    """A model's concrete columns under a table alias, and how to build instances from them."""

    def __init__(self, model: type[M], alias: str) -> None:
        self.model = model
        self.fields = [f for f in model._meta.concrete_fields]
        self.names = [f.attname for f in self.fields]
        self.table = connection.ops.quote_name(model._meta.db_table)
        self.alias = alias
        self.sql = ", ".join(f"{alias}.{connection.ops.quote_name(f.column)}" for f in self.fields)
        self.converters = [self._converters(f) for f in self.fields]
        self.width = len(self.fields)

    @staticmethod
    def _converters(field: Any) -> tuple[list[Callable[..., Any]], Any]:
        col = field.get_col(field.model._meta.db_table)
        return [*connection.ops.get_db_converters(col), *field.get_db_converters(connection)], col

    def build(self, row: Sequence[Any], start: int = 0) -> M:
        values = list(row[start : start + self.width])
        for i, (funcs, col) in enumerate(self.converters):
            for func in funcs:
                values[i] = func(values[i], col, connection)
        return self.model.from_db(connection.alias, self.names, values)


def columns(model: type[M], alias: str) -> Columns[M]:
    """One `Columns` per (model, alias) for the process (models and the vendor do not change)."""
    return _columns(model, alias)


@cache
def _columns(model: type[models.Model], alias: str) -> Columns[Any]:
    return Columns(model, alias)


def quoted(model: type[models.Model], column: str) -> str:
    field = model._meta.get_field(column)
    if not isinstance(field, models.Field):  # a relation's reverse side has no column
        raise TypeError(f"{model.__name__}.{column} is not a concrete field")
    return connection.ops.quote_name(field.column)


def fetch(sql: str, params: Sequence[Any]) -> list[tuple[Any, ...]]:
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        found: list[tuple[Any, ...]] = cursor.fetchall()
        return found


def fetch_binary(sql: str, params: Sequence[Any]) -> list[tuple[Any, ...]]:
    """`fetch`, PostgreSQL's answer in binary form: a bytea column arrives as its bytes instead
    of hex text that psycopg decodes (a subject's vectors load 3× faster:
    docs/decisions/postings-cache.md). The statement is bound by the server (psycopg's `Cursor`;
    Django's default binds on the client, which cannot ask for binary results) and runs through
    Django's cursor wrapper, so execute wrappers and query logging see it as any other. The
    columns must be ones whose binary form psycopg loads as it loads their text (integers,
    bytea, text)."""
    if connection.vendor != "postgresql":
        return fetch(sql, params)
    import psycopg

    connection.ensure_connection()
    raw: Any = psycopg.Cursor(connection.connection)  # what Django's own cursor() wraps
    raw.format = psycopg.pq.Format.BINARY
    wrapped = (
        connection.make_debug_cursor(raw)
        if connection.queries_logged
        else connection.make_cursor(raw)
    )
    with wrapped as cursor:
        cursor.execute(sql, params)
        found: list[tuple[Any, ...]] = cursor.fetchall()
        return found
