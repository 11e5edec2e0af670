"""The base of every model whose rows live in one space (docs/scaling.md "Citus layout"): each
such table carries `space_id`, the distribution key a Citus cluster would shard it by, and every
statement on it names it (tests/memory/test_space_scoped_sql.py). The tables reachable only
through a parent (a record's revisions, terms and vectors, a job, an export's chunks) carry a
copy of the parent's `space_id`, set when the row is written and never changed."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, TypeVar

from django.db import models

T = TypeVar("T")
L = TypeVar("L", bound=str)


def choice(value: str, choices: tuple[L, ...]) -> L:
    """A column's value as the wire's literal type for it (a state, a kind: `choices` are the
    wire's); a value outside them is a corrupt row, refused (ValueError), never answered."""
    for known in choices:
        if known == value:
            return known
    raise ValueError(f"{value!r} is not one of {choices!r}")


def copied_space() -> models.ForeignKey[Any, Any]:
    """The copied `space_id` of a row reachable through a parent: NOT NULL, set once from the
    parent. No foreign-key constraint (the parent's own carries it, and a check per row would
    cost the import's bulk writes), no index of its own (the unique constraints and look-ups
    that need it list it)."""
    return models.ForeignKey(
        "memory.Space",
        on_delete=models.DO_NOTHING,
        db_constraint=False,
        db_index=False,
        related_name="+",
    )


class SpaceScoped(models.Model):
    """`save()` of a stored row updates `WHERE pk = … AND space_id = …` (one shard), and a row
    saved without its copied space takes its parent's (`space_parent`: the relation holding it)."""

    space_parent: str | None = None

    class Meta:
        abstract = True

    def save(self, *args: Any, **kwargs: Any) -> None:
        if self.space_parent is not None and getattr(self, "space_id", None) is None:
            self.space_id = getattr(self, self.space_parent).space_id
        super().save(*args, **kwargs)

    def _do_update(
        self,
        base_qs: models.QuerySet[Any],
        using: Any,
        pk_val: Any,
        values: Any,
        update_fields: Any,
        forced_update: bool,
    ) -> bool:
        base_qs = base_qs.filter(space_id=self.space_id)
        return super()._do_update(base_qs, using, pk_val, values, update_fields, forced_update)


def by_space(rows: Iterable[T]) -> dict[str, list[T]]:
    """Rows grouped by their space, in first-seen order: a statement per space, each naming it."""
    out: dict[str, list[T]] = {}
    for row in rows:
        out.setdefault(row.space_id, []).append(row)  # type: ignore[attr-defined]
    return out
