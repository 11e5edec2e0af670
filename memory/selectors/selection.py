"""The read side shared by records.list, recall and reflections (docs/protocol.md#selection, #cognition-filter): coverage ∩
selection ∩ provenance filter ∩ kinds ∩ cognition filter, combined by AND, after authorization
and before counts, ranking, page limits and byte budgets.

SQL narrows; the engine's cognition matcher decides. On PostgreSQL the string and number
requirements of a cognition filter are pushed down as one jsonpath predicate over a single entry
(`content @? '$.cognition[*] ? (... && ...)'`), which is exact for them (one entry must hold them
all); every requirement is then checked again in Python, times included."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from django.db import connection
from django.db.models import BooleanField, Q, QuerySet
from django.db.models.expressions import RawSQL

from memory.access import Coverage
from memory.engine.cognition import GRAMMAR, content_matches
from memory.models import Record, Subject
from memory.models.records import CONTEXT, SHARED
from memory.wire.errors import invalid

CONTEXT_MODES = ("contexts", "contexts_and_shared")


@dataclass(frozen=True)
class ReadFilter:
    selection: dict[str, Any]
    provenance: dict[str, Any] | None = None
    kinds: tuple[str, ...] | None = None
    cognition: dict[str, Any] | None = None
    include_tombstoned: bool = False


def check_selection(selection: Mapping[str, Any] | None) -> dict[str, Any]:
    """The request's ReadSelection (default `{"mode": "all"}`), or 422 INVALID_INPUT."""
    selection = selection or {"mode": "all"}
    has_ids = bool(selection.get("context_ids"))
    if selection["mode"] in CONTEXT_MODES and not has_ids:
        raise invalid(
            "selection",
            "selection.context_ids",
            "This selection mode needs a non-empty context_ids.",
        )
    if selection["mode"] not in CONTEXT_MODES and "context_ids" in selection:
        raise invalid(
            "selection", "selection.context_ids", "This selection mode takes no context_ids."
        )
    return dict(selection)


def read_filter(req: Mapping[str, Any], include_tombstoned: bool = False) -> ReadFilter:
    kinds = req.get("kinds")
    return ReadFilter(
        selection=check_selection(req.get("selection")),
        provenance=req.get("provenance_filter"),
        kinds=tuple(sorted(set(kinds))) if kinds else None,
        cognition=req.get("cognition_filter"),
        include_tombstoned=include_tombstoned,
    )


def selection_q(
    selection: dict[str, Any],
    scope_field: str = "placement_scope",
    context_field: str = "placement_context_id",
) -> Q:
    mode = selection["mode"]
    if mode == "all":
        return Q()
    shared = Q(**{scope_field: SHARED})
    if mode == "shared":
        return shared
    contexts = Q(**{scope_field: CONTEXT, f"{context_field}__in": selection["context_ids"]})
    return contexts if mode == "contexts" else contexts | shared


def provenance_q(provenance: dict[str, Any] | None) -> Q:
    q = Q()
    if not provenance:
        return q
    if "source_context_ids" in provenance:
        q &= Q(prov_source_context_id__in=provenance["source_context_ids"])
    if "sources" in provenance:
        q &= Q(prov_source__in=provenance["sources"])
    if "principal_ids" in provenance:
        # The principal a record came from: its author (the capturing principal for captures).
        q &= Q(prov_author_principal_id__in=provenance["principal_ids"])
    return q


def _jsonpath_literal(value: Any) -> str:
    # JSON string and number literals are jsonpath literals too; non-ASCII is passed verbatim.
    return json.dumps(value, ensure_ascii=False)


def _jsonpath_condition(req: dict[str, Any]) -> str | None:
    """One requirement as a jsonpath filter condition on an entry (`@`), or None when it is
    left to the engine alone (times: they compare as instants, which jsonpath can't do immutably)."""
    dimension, op, value = req["dimension"], req["op"], req["value"]
    kind = GRAMMAR[dimension][1]
    path = "@." + ".".join(f'"{part}"' for part in dimension.split("."))
    if kind == "string":
        values = [value] if op == "eq" else value
        return "(" + " || ".join(f"{path} == {_jsonpath_literal(v)}" for v in values) + ")"
    if kind == "number":
        return f"{path} {'>=' if op == 'gte' else '<='} {_jsonpath_literal(value)}"
    return None


def cognition_jsonpath(cognition: Mapping[str, Any]) -> str | None:
    """`$.cognition[*] ? (c1 && c2 ...)`: some single entry satisfies every pushed-down
    requirement. Exact for strings and numbers (a non-number or a missing member compares false
    in lax mode, as in the engine), so SQL never drops a record the engine would keep."""
    conditions = [c for c in map(_jsonpath_condition, cognition["require"]) if c is not None]
    if not conditions:
        return None
    return "$.cognition[*] ? (" + " && ".join(conditions) + ")"


def cognition_q(cognition: Mapping[str, Any] | None) -> Q:
    if cognition is None:
        return Q()
    q = Q(content__has_key="cognition")
    if connection.vendor != "postgresql":
        return q
    path = cognition_jsonpath(cognition)
    if path is None:
        return q
    column = (
        connection.ops.quote_name(Record._meta.db_table)
        + "."
        + connection.ops.quote_name("content")
    )
    # The jsonpath is a bound parameter; only quoted identifiers are formatted in.
    return q & Q(RawSQL(f"{column} @? %s::jsonpath", [path], output_field=BooleanField()))  # noqa: S611


def records_queryset(
    cov: Coverage, capabilities: list[str], flt: ReadFilter, subject: Subject | None = None
) -> QuerySet[Record]:
    """Records the caller may read through `capabilities`, narrowed by the filter. The
    cognition filter is only narrowed here: pass results through `matching()`."""
    qs = Record.objects.filter(space_id=cov.space_id)
    if subject is not None:  # one subject: its own reach, one term whatever the grants
        qs = qs.filter(subject=subject).filter(cov.subject_q(capabilities, subject.subject_id))
    else:
        qs = qs.filter(cov.placement_q(capabilities))
    qs = qs.filter(selection_q(flt.selection)).filter(provenance_q(flt.provenance))
    if flt.kinds:
        qs = qs.filter(kind__in=flt.kinds)
    if not flt.include_tombstoned:
        qs = qs.filter(deleted_at__isnull=True)
    return qs.filter(cognition_q(flt.cognition))


def whole_subject(
    cov: Coverage, capabilities: list[str], flt: ReadFilter, subject: Subject
) -> bool:
    """`records_queryset(cov, capabilities, flt, subject)` is every live record of the subject:
    the caller's grants together cover all its contexts and its shared scope, and the filter
    narrows nothing. Lets a query over rows that exist only for live records (term rows) skip
    the eligibility join."""
    view = cov.subject_view(capabilities, subject.subject_id)
    return (
        view["all_contexts"]
        and view["shared"]
        and flt.selection["mode"] == "all"
        and not flt.provenance
        and not flt.kinds
        and flt.cognition is None
        and not flt.include_tombstoned
    )


def matching(records: Iterable[Record], flt: ReadFilter) -> Iterator[Record]:
    """The records that pass the cognition filter (all of them when there is none)."""
    for record in records:
        if content_matches(record.content, flt.cognition):
            yield record
