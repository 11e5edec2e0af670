"""Display names for principals. A page names people by their display name, with the
`prn_…` id in a tooltip; the names are read in one query per page."""

from __future__ import annotations

from collections.abc import Iterable

from memory.models import Principal


def names(ids: Iterable[str | None]) -> dict[str, str]:
    wanted = {i for i in ids if i}
    if not wanted:
        return {}
    rows = Principal.objects.filter(principal_id__in=wanted).values_list(
        "principal_id", "display_name"
    )
    return dict(rows)


def named(ids: Iterable[str | None]) -> dict[str, str]:
    """Each of these principal ids to its display name (the id when unnamed), in one query. A
    page passes it as `principal_names`, where `{% who %}` looks the names up."""
    wanted = {i for i in ids if i}
    known = names(wanted)
    return {i: known.get(i) or i for i in wanted}
