"""A memory named by its words (issue 41): the console's flashes, "My recent actions" and page
titles say what a candidate or record *says* — its first words, truncated, beside its subject —
with the `cnd_…`/`rec_…` id as a secondary detail. The text is stored memory content: untrusted,
so it is only ever rendered escaped (Django's autoescape in templates; messages are plain strings
that the template escapes), never logged."""

from __future__ import annotations

GIST_CHARS = 60


def gist(text: str | None, limit: int = GIST_CHARS) -> str:
    """The text's first words on one line, at most `limit` characters, cut at a word boundary
    with an ellipsis when longer; "(no text)" for an empty one."""
    flat = " ".join((text or "").split())
    if not flat:
        return "(no text)"
    if len(flat) <= limit:
        return flat
    cut = flat[: limit - 1]
    space = cut.rfind(" ")
    if space >= limit // 2:
        cut = cut[:space]
    return cut.rstrip(" ,.;:") + "…"


def named(text: str | None, subject_id: str) -> str:
    """“First words…” about subject_id."""
    return f"\u201c{gist(text)}\u201d about {subject_id}"
