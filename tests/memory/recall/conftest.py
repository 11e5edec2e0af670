"""Records made directly with the ORM (the capture/records ops are built elsewhere), so recall can
be tested on exact, fixed state: ids, times, placements and provenance chosen by the test; each
with the served engine's derived copies (term rows; under hybrid/6 its vector queued), as every
content write path writes them."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from itertools import count

import pytest
from django.db.models import F

from memory.models import Record, RecordRevision, Subject
from memory.models.records import CONTEXT, SHARED
from memory.services import derived

T0 = datetime(2026, 1, 1, tzinfo=UTC)


@pytest.fixture
def make_record(admin, space, ensure_subject):
    seq = count(1)

    def make(
        text: str = "",
        subject_id: str = "u1",
        *,
        record_id: str | None = None,
        kind: str = "note",
        context_id: str | None = "c1",
        shared: bool = False,
        cognition: list | None = None,
        structured: dict | None = None,
        age_days: float | None = None,
        at: datetime | None = None,
        source: str = "authored",
        source_context_id: str | None = None,
        author: str | None = None,
        deleted: bool = False,
    ) -> Record:
        n = next(seq)
        if not Subject.objects.filter(space=space, subject_id=subject_id).exists():
            ensure_subject(subject_id)
        subject = Subject.objects.get(space=space, subject_id=subject_id)
        created = at or (
            T0 - timedelta(days=age_days) if age_days is not None else T0 + timedelta(seconds=n)
        )
        content: dict = {"text": text}
        if structured is not None:
            content["structured"] = structured
        if cognition is not None:
            content["cognition"] = cognition
        if deleted:
            content = {"text": ""}
        scope = SHARED if shared else CONTEXT
        record = Record.objects.create(
            space=space,
            subject=subject,
            record_id=record_id or f"rec_{n:04d}",
            kind=kind,
            content=content,
            text=content["text"],
            placement_scope=scope,
            placement_context_id=None if shared else context_id,
            prov_source=source,
            prov_source_context_id=source_context_id,
            prov_author_principal_id=author or admin.id,
            prov_created_at=created,
            revision=1,
            created_at=created,
            updated_at=created,
            deleted_at=created + timedelta(seconds=1) if deleted else None,
            deleted_by_principal_id=admin.id if deleted else None,
        )
        RecordRevision.objects.create(
            record=record,
            revision=1,
            kind=kind,
            content=content,
            placement_scope=scope,
            placement_context_id=record.placement_context_id,
            created_at=created,
        )
        if not deleted:
            # the served engine's derived copies (term rows; hybrid/6: its vector queued), as
            # every content write path keeps them
            derived.content_written([record])
        # and the subject's revision moves, as every write to its records moves it (the caches
        # recall reads through are kept by it)
        Subject.objects.filter(pk=subject.pk).update(revision=F("revision") + 1)
        return record

    return make


@pytest.fixture
def recall(api, admin):
    """memory.recall through the HTTP edge with every flag negotiated; checks the response schema."""
    from memory.wire.validation import catalog, schema_errors

    sessions: dict[str, str] = {}

    def run(body: dict, who=None, expect: int = 200):
        who = who or admin
        if who.id not in sessions:
            sessions[who.id] = api.connect(who)
        answer = api(
            who,
            "memory.recall",
            {"space_id": "s1", "subject_id": "u1", **body},
            session=sessions[who.id],
        )
        assert answer.status == expect, answer.body
        if expect == 200:
            assert (
                schema_errors(catalog().ops["memory.recall"].response_validator, answer.body) == []
            )
        return answer

    return run


def ids(answer) -> list[str]:
    return [r["record"]["record_id"] for r in answer.body["recall"]["results"]]
