"""Display names for principals. A page names people by their display name, with the
`prn_…` id in a tooltip; the names are read in one query per page."""

from __future__ import annotations

from memory.models import Principal


def names(ids) -> dict[str, str]:
    wanted = {i for i in ids if i}
    if not wanted:
        return {}
    rows = Principal.objects.filter(principal_id__in=wanted).values_list(
        "principal_id", "display_name"
    )
    return dict(rows)


def annotate(items: list[dict], *fields: str) -> None:
    """Add `<field>_name` beside each principal-id field of each item (the id when unnamed)."""
    known = names(item.get(f) for item in items for f in fields)
    for item in items:
        for f in fields:
            if item.get(f):
                item[f"{f}_name"] = known.get(item[f]) or item[f]
