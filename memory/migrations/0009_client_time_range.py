"""docs/protocol.md#identifiers bounds every client time to 0001-01-01T00:00:00Z..9999-12-31T23:59:59.999Z once
normalized to UTC. Before the edge refused them, a cognition record could be stored with a time
an offset pushes out of that range (e.g. "9999-12-31T23:59:59-01:00"), and every cognition-
filtered read covering it then failed. The engine now reads such a value as no time at all;
this migration also rewrites each stored one to the bound it passed, spelled in UTC
("9999-12-31T23:59:59.999Z" or "0001-01-01T00:00:00.000Z"), in records, their history and
candidates, so what is stored is again what a write may send and an export of it imports.
Values that name no date (year 0, Feb 30) are left verbatim: they never denoted an instant and
never matched a filter."""

import re
from datetime import UTC, datetime

from django.db import migrations

SHAPE = re.compile(
    r"[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])[Tt]([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9]"
    r"(\.[0-9]{1,9})?([Zz]|[+-]([01][0-9]|2[0-3]):[0-5][0-9])"
)
EARLIEST = datetime(1, 1, 1, tzinfo=UTC)
LATEST = datetime(9999, 12, 31, 23, 59, 59, 999000, tzinfo=UTC)


def clamp(value):
    """The bound an out-of-range time passed, or None when `value` needs no rewrite."""
    if not isinstance(value, str) or SHAPE.fullmatch(value) is None:
        return None
    text = value[:-1] + "+00:00" if value.endswith(("Z", "z")) else value
    try:
        local = datetime.fromisoformat(text)
    except ValueError:
        return None  # names no date: left verbatim
    try:
        instant = local.astimezone(UTC)
    except OverflowError:  # an offset pushed 9999-12-31 or 0001-01-01 past what datetime holds
        return "9999-12-31T23:59:59.999Z" if local.year == 9999 else "0001-01-01T00:00:00.000Z"
    if instant > LATEST:
        return "9999-12-31T23:59:59.999Z"
    if instant < EARLIEST:
        return "0001-01-01T00:00:00.000Z"
    return None


def fixed(content):
    """`content` with its out-of-range cognition times clamped, or None when nothing changed."""
    if not isinstance(content, dict) or not isinstance(content.get("cognition"), list):
        return None
    changed = False
    for entry in content["cognition"]:
        times = entry.get("times") if isinstance(entry, dict) else None
        if not isinstance(times, dict):
            continue
        for name, value in list(times.items()):
            bound = clamp(value)
            if bound is not None:
                times[name] = bound
                changed = True
    return content if changed else None


def forwards(apps, schema_editor):
    for model in ("Record", "RecordRevision"):
        rows = apps.get_model("memory", model).objects.filter(content__has_key="cognition")
        for row in rows.only("pk", "content").iterator(chunk_size=500):
            content = fixed(row.content)
            if content is not None:
                row.content = content
                row.save(update_fields=["content"])
    Candidate = apps.get_model("memory", "Candidate")
    for row in Candidate.objects.only("pk", "proposed").iterator(chunk_size=500):
        content = fixed(row.proposed.get("content") if isinstance(row.proposed, dict) else None)
        if content is not None:
            row.proposed = {**row.proposed, "content": content}
            row.save(update_fields=["proposed"])


class Migration(migrations.Migration):
    dependencies = [("memory", "0005_job_heartbeat")]

    operations = [migrations.RunPython(forwards, migrations.RunPython.noop)]
