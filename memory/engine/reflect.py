"""Reflection policy (docs/protocol.md#ops, #engine-policy): the basis digest, coverage inclusion, and the default
synthesizer `assemble`. Pure and deterministic: no Django, no I/O.

The synthesizer hook: `settings.SPOKE_MEMORY_REFLECTION_SYNTHESIZER` names a callable with the
signature of `assemble` below (keyword arguments `subject_id`, `records`, `profiles`,
`engine_policy_version`) returning `{"text": str, "structured"?: dict}`. A product plugs a
language model in by pointing the setting at its own function; the worker calls it with the
pinned record revisions only, and validates its answer against the ProfileContent schema."""

from __future__ import annotations

from typing import Any

from memory.wire.canonical import digest

# How record kinds and cognition entry types map onto the sections of a reflection.
SECTIONS = [
    ("prefers", "Prefers", {"preference"}, {"evaluation", "emotion"}),
    ("holds", "Holds", {"fact"}, {"belief"}),
    ("plans", "Plans", {"plan"}, {"goal", "intention"}),
    ("recently_did", "Recently did", {"event"}, {"perception"}),
]
OTHER = ("notes", "Other notes")
MAX_ITEMS_PER_SECTION = 10
MAX_ITEM_CHARS = 240


def basis_digest(basis: dict[str, Any]) -> str:
    """`state_digest` = "sha256:" + hex SHA-256 of RFC 8785 of the basis (without the digest)."""
    return digest({k: v for k, v in basis.items() if k != "state_digest"})


def coverage_includes(outer: dict[str, Any], inner: dict[str, Any]) -> bool:
    """Does coverage `outer` include coverage `inner`? Both are subject views:
    {all_contexts, context_ids, shared}."""
    if inner["shared"] and not outer["shared"]:
        return False
    if outer["all_contexts"]:
        return True
    if inner["all_contexts"]:
        return False
    return set(inner["context_ids"]) <= set(outer["context_ids"])


def _section(record: dict[str, Any]) -> str:
    kind = record["kind"]
    types = {
        c.get("type") for c in (record["content"].get("cognition") or []) if isinstance(c, dict)
    }
    for key, _title, kinds, _types in SECTIONS:
        if kind in kinds:
            return key
    for key, _title, _kinds, cognition_types in SECTIONS:
        if types & cognition_types:
            return key
    return OTHER[0]


def _line(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= MAX_ITEM_CHARS else text[: MAX_ITEM_CHARS - 1] + "…"


def assemble(
    *,
    subject_id: str,
    records: list[dict[str, Any]],
    profiles: list[dict[str, Any]],
    engine_policy_version: str,
) -> dict[str, Any]:
    """A readable reflection: what the subject prefers, holds, plans and recently did, each item
    followed by the record it came from. `records` are the pinned revisions, each
    {record_id, revision, kind, content, created_at (ISO string)}; `profiles` are
    {kind, revision, content}. Records are taken newest first within each section."""
    ordered = sorted(records, key=lambda r: (r["created_at"], r["record_id"]), reverse=True)
    sections: dict[str, list[dict[str, Any]]] = {key: [] for key, *_ in SECTIONS}
    sections[OTHER[0]] = []
    for record in ordered:
        sections[_section(record)].append(record)
    titles = {key: title for key, title, *_ in SECTIONS}
    titles[OTHER[0]] = OTHER[1]
    lines = [f"Reflection on {subject_id} from {len(records)} records ({engine_policy_version})."]
    if profiles:
        lines.append(
            "Profile documents: "
            + ", ".join(f"{p['kind']} r{p['revision']}" for p in profiles)
            + "."
        )
    structured: dict[str, Any] = {
        "subject_id": subject_id,
        "record_count": len(records),
        "sections": {},
    }
    for key, items in sections.items():
        if not items:
            continue
        shown = items[:MAX_ITEMS_PER_SECTION]
        lines.append("")
        lines.append(f"{titles[key]}:")
        for r in shown:
            lines.append(
                f"- {_line(r['content'].get('text', ''))} [{r['record_id']}@{r['revision']}]"
            )
        if len(items) > len(shown):
            lines.append(f"- … and {len(items) - len(shown)} more")
        structured["sections"][key] = [
            {"record_id": r["record_id"], "revision": r["revision"]} for r in items
        ]
    structured["record_refs"] = [
        {"record_id": r["record_id"], "revision": r["revision"]}
        for r in sorted(records, key=lambda r: r["record_id"])
    ]
    return {"text": "\n".join(lines), "structured": structured}
