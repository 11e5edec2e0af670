"""Helpers shared by the capture, candidates and records tests: placements, request builders and
a snapshot of every row count that an erroring request must leave unchanged."""

from __future__ import annotations

import pytest

from memory.models import Candidate, IdempotencyKey, Receipt, Record, RecordRevision, Space, Subject

C1 = {"scope": "context", "context_id": "c1"}
C2 = {"scope": "context", "context_id": "c2"}
SHARED = {"scope": "shared"}


def cognition_entry(**over) -> dict:
    entry = {
        "view": "recorded_at",
        "type": "belief",
        "proposition": "the user believes tea is better than coffee",
        "attribution": {"holder": "u1", "source": "self_report"},
        "basis": {"kind": "stated"},
        "times": {"recorded_at": "2026-01-02T03:04:05.000Z"},
    }
    entry.update(over)
    return entry


def state() -> dict:
    """Everything a failed request must not change."""
    return {
        "candidates": list(
            Candidate.objects.order_by("pk").values_list(
                "candidate_id", "state", "revision", "proposed"
            )
        ),
        "records": list(
            Record.objects.order_by("pk").values_list(
                "record_id",
                "revision",
                "content",
                "placement_scope",
                "placement_context_id",
                "kind",
            )
        ),
        "revisions": RecordRevision.objects.count(),
        "receipts": Receipt.objects.count(),
        "keys": IdempotencyKey.objects.count(),
        "space": list(Space.objects.order_by("pk").values_list("space_id", "revision")),
        "subjects": list(Subject.objects.order_by("pk").values_list("subject_id", "revision")),
    }


class World:
    def __init__(self, api, admin):
        self.api, self.admin = api, admin

    def capture(self, who=None, texts=("Ada prefers tea.",), placement=None, subject="u1", **extra):
        body = {
            "space_id": "s1",
            "subject_id": subject,
            "capture_scope": {"placement": placement or C1, **extra.pop("scope_extra", {})},
            "items": [{"content": {"text": t}} if isinstance(t, str) else t for t in texts],
            **extra,
        }
        return self.api(who or self.admin, "memory.capture", body)

    def candidate_ids(self, *args, **kwargs) -> list[str]:
        answer = self.capture(*args, **kwargs)
        assert answer.status == 200, answer.body
        return [r["id"] for r in answer.receipt["refs"]]

    def review(self, who, candidate_id, decision, **extra):
        return self.api(
            who or self.admin,
            "memory.candidates.review",
            {"space_id": "s1", "candidate_id": candidate_id, "decision": decision, **extra},
        )

    def create(
        self,
        who=None,
        text="Ada works at Acme.",
        placement=None,
        kind="fact",
        subject="u1",
        **extra,
    ):
        content = extra.pop("content", {"text": text})
        return self.api(
            who or self.admin,
            "memory.records.create",
            {
                "space_id": "s1",
                "subject_id": subject,
                "kind": kind,
                "content": content,
                "placement": placement or C1,
                **extra,
            },
        )

    def record_id(self, *args, **kwargs) -> str:
        answer = self.create(*args, **kwargs)
        assert answer.status == 200, answer.body
        return answer.receipt["refs"][0]["id"]

    def record(self, record_id, who=None) -> dict:
        answer = self.api(
            who or self.admin, "memory.records.get", {"space_id": "s1", "record_id": record_id}
        )
        assert answer.status == 200, answer.body
        return answer.body["record"]

    def candidate(self, candidate_id, who=None) -> dict:
        answer = self.api(
            who or self.admin,
            "memory.candidates.get",
            {"space_id": "s1", "candidate_id": candidate_id},
        )
        assert answer.status == 200, answer.body
        return answer.body["candidate"]

    def list_records(self, who=None, session=None, **body):
        return self.api(
            who or self.admin, "memory.records.list", {"space_id": "s1", **body}, session=session
        )


@pytest.fixture(name="world")
def world_fixture(api, admin, ensure_subject) -> World:
    ensure_subject("u1")
    ensure_subject("u2")
    return World(api, admin)
