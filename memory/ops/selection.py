"""The read side shared by records.list, recall and reflections (SPEC §2.3, §6.3): coverage ∩
selection ∩ provenance filter ∩ kinds ∩ cognition filter, combined by AND, after authorization
and before counts, ranking, page limits and byte budgets.

SQL narrows; the engine's cognition matcher decides. On PostgreSQL the equality requirements of
a cognition filter are pushed down as one JSON containment (`@>`) of a single entry, which is
exact for them (one entry must hold them all); every requirement is then checked in Python."""
from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from django.db import connection
from django.db.models import Q, QuerySet

from memory.access import Coverage
from memory.engine.cognition import content_matches
from memory.models import Record, Subject
from memory.models.records import CONTEXT, SHARED
from memory.wire.errors import invalid

CONTEXT_MODES = ("contexts", "contexts_and_shared")


@dataclass(frozen=True)
class ReadFilter:
    selection: dict
    provenance: dict | None = None
    kinds: tuple[str, ...] | None = None
    cognition: dict | None = None
    include_tombstoned: bool = False


def check_selection(selection: dict | None) -> dict:
    """The request's ReadSelection (default `{"mode": "all"}`), or 422 INVALID_INPUT."""
    selection = selection or {"mode": "all"}
    has_ids = bool(selection.get("context_ids"))
    if selection["mode"] in CONTEXT_MODES and not has_ids:
        raise invalid("selection", "selection.context_ids", "This selection mode needs a non-empty context_ids.")
    if selection["mode"] not in CONTEXT_MODES and "context_ids" in selection:
        raise invalid("selection", "selection.context_ids", "This selection mode takes no context_ids.")
    return selection


def read_filter(req: dict, include_tombstoned: bool = False) -> ReadFilter:
    kinds = req.get("kinds")
    return ReadFilter(
        selection=check_selection(req.get("selection")),
        provenance=req.get("provenance_filter"),
        kinds=tuple(sorted(set(kinds))) if kinds else None,
        cognition=req.get("cognition_filter"),
        include_tombstoned=include_tombstoned,
    )


def selection_q(selection: dict, scope_field: str = "placement_scope",
                context_field: str = "placement_context_id") -> Q:
    mode = selection["mode"]
    if mode == "all":
        return Q()
    shared = Q(**{scope_field: SHARED})
    if mode == "shared":
        return shared
    contexts = Q(**{scope_field: CONTEXT, f"{context_field}__in": selection["context_ids"]})
    return contexts if mode == "contexts" else contexts | shared


def provenance_q(provenance: dict | None) -> Q:
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


_EQ_PATHS = {
    "type": ("type",),
    "attribution.holder": ("attribution", "holder"),
    "attribution.source": ("attribution", "source"),
    "basis.kind": ("basis", "kind"),
    "polarity": ("polarity",),
}


def cognition_q(cognition: dict | None) -> Q:
    if cognition is None:
        return Q()
    q = Q(content__has_key="cognition")
    if connection.vendor != "postgresql":
        return q
    entry: dict = {}
    for req in cognition["require"]:
        if req["op"] == "eq" and req["dimension"] in _EQ_PATHS:
            node = entry
            *parents, leaf = _EQ_PATHS[req["dimension"]]
            for p in parents:
                node = node.setdefault(p, {})
            if leaf in node and node[leaf] != req["value"]:
                return Q(pk__in=[])  # two different values for one member: nothing can match
            node[leaf] = req["value"]
    if entry:
        q &= Q(content__cognition__contains=[entry])
    return q


def records_queryset(cov: Coverage, capabilities: list[str], flt: ReadFilter,
                     subject: Subject | None = None) -> QuerySet:
    """Records the caller may read through `capabilities`, narrowed by the filter. The
    cognition filter is only narrowed here: pass results through `matching()`."""
    qs = Record.objects.filter(space_id=cov.space_id)
    if subject is not None:
        qs = qs.filter(subject=subject)
    qs = qs.filter(cov.placement_q(capabilities))
    qs = qs.filter(selection_q(flt.selection)).filter(provenance_q(flt.provenance))
    if flt.kinds:
        qs = qs.filter(kind__in=flt.kinds)
    if not flt.include_tombstoned:
        qs = qs.filter(deleted_at__isnull=True)
    return qs.filter(cognition_q(flt.cognition))


def matching(records, flt: ReadFilter) -> Iterator[Record]:
    """The records that pass the cognition filter (all of them when there is none)."""
    for record in records:
        if content_matches(record.content, flt.cognition):
            yield record
