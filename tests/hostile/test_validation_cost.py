"""Issue 26 item 6: an invalid 1 MB body cost 3.5 s of CPU before any authorization, because
the reference validator re-judged it in full (up to 20 errors, every item of an unbounded list).
Now every list a request may hold is bounded by a published limit (`limits.max_list_items`, with
the `{"$limit": name}` mechanism), an invalid body answers its first error only, and an
over-long list is refused for its length, not item by item. Speed itself is measured in
bench/validation_flood.py (docs/reliability.md); these tests hold the behaviour."""

from __future__ import annotations

import json

import pytest

from memory.wire.validation import catalog
from tests.hostile.conftest import census

pytestmark = pytest.mark.django_db

LIMIT = 256

# Every list member of a request that names ids, kinds or labels, with a body to put it in.
LISTS = [
    ("memory.records.list", ["kinds"], "fact{}", {}),
    ("memory.recall", ["kinds"], "fact{}", {"subject_id": "u1", "query": {"text": "q"}}),
    ("memory.candidates.list", ["labels"], "fact{}", {}),
    ("memory.profile.get", ["kinds"], "kind{}", {"subject_id": "u1"}),
    ("memory.exports.create", ["subject_ids"], "u{}", {}),
    (
        "memory.records.list",
        ["selection", "context_ids"],
        "c{}",
        {"selection": {"mode": "contexts"}},
    ),
    ("memory.records.list", ["provenance_filter", "source_context_ids"], "c{}", {}),
    ("memory.records.list", ["provenance_filter", "principal_ids"], "prn_{}", {}),
    (
        "memory.grants.grant",
        ["subject_ids"],
        "u{}",
        {"grantee_principal_id": "prn_x", "capabilities": ["recall"]},
    ),
    (
        "memory.grants.grant",
        ["context_ids"],
        "c{}",
        {"grantee_principal_id": "prn_x", "capabilities": ["recall"]},
    ),
]


def body_with(member: list[str], pattern: str, base: dict, n: int) -> dict:
    body: dict = json.loads(json.dumps({"space_id": "s1", **base}))
    at = body
    for key in member[:-1]:
        at = at.setdefault(key, {})
    at[member[-1]] = [pattern.format(i) for i in range(n)]
    return body


def test_describe_publishes_max_list_items(api, wired):
    limits = api(wired.admin, "memory.describe", {}).body["provider"]["limits"]
    assert limits["max_list_items"] == LIMIT


@pytest.mark.parametrize(("op", "member", "pattern", "base"), LISTS)
def test_a_list_at_max_list_items_passes_the_schema_and_one_more_is_refused(
    api, wired, op, member, pattern, base
):
    spec = catalog().ops[op]
    at_limit = body_with(member, pattern, base, LIMIT)
    assert not list(spec.request_validator.iter_errors(at_limit)), op
    before = census()
    answer = api(
        wired.admin, op, body_with(member, pattern, base, LIMIT + 1), session=wired.session
    )
    assert (answer.status, answer.code) == (400, "invalid_input"), answer.body
    assert answer.error["details"]["errors"] == [
        {"path": "/" + "/".join(member), "message": f"violates maxItems {LIMIT}"}
    ]
    assert census() == before


def test_a_content_holds_at_most_max_list_items_cognition_entries(api, wired):
    body = {
        "space_id": "s1",
        "subject_id": "u1",
        "kind": "fact",
        "placement": {"scope": "shared"},
        "content": {"text": "t", "cognition": [{}] * (LIMIT + 1)},
    }
    before = census()
    answer = api(wired.admin, "memory.records.create", body, session=wired.session)
    assert (answer.status, answer.code) == (400, "invalid_input"), answer.body
    assert answer.error["details"]["errors"][0]["path"] == "/content/cognition"
    assert census() == before


def test_an_invalid_body_answers_its_first_error_only(api, wired):
    """A body with a thousand wrong items answers one error, not twenty (the reference
    validator is not asked to find more once the body is known to be refused)."""
    body = {"space_id": "s1", "kinds": [1] * 200, "include_tombstoned": "no", "page_size": 0}
    answer = api(wired.admin, "memory.records.list", body, session=wired.session)
    assert (answer.status, answer.code) == (400, "invalid_input")
    assert len(answer.error["details"]["errors"]) == 1


def test_a_megabyte_list_is_refused_for_its_length_not_item_by_item(api, wired, settings):
    """100,000 kinds, the last one wrong: the answer names the list's length (found before any
    item is judged), not the bad item at its end."""
    kinds = ["fact"] * 100_000 + [1]
    raw = json.dumps({"space_id": "s1", "kinds": kinds})
    assert len(raw) < settings.SPOKE_MEMORY_LIMITS["max_request_bytes"]
    answer = api.raw(
        "/v1/ops/memory.records.list", raw, token=wired.admin.token, session=wired.session
    )
    assert (answer.status, answer.code) == (400, "invalid_input")
    assert answer.error["details"]["errors"] == [
        {"path": "/kinds", "message": f"violates maxItems {LIMIT}"}
    ]


def test_an_import_chunk_error_past_many_valid_objects_is_found(api, wired):
    """An unbounded list (a chunk's objects) whose first error lies past max_list_items items."""
    good = {"type": "subject", "data": {}}
    chunk = {
        "schema_version": 1,
        "export_id": "exp_x",
        "ordinal": 1,
        "chunk_count": 2,
        "objects": [good] * 300 + [{"type": "nothing"}],
        "digest": "sha256:" + "0" * 64,
        "extensions": {},
    }
    body = {"space_id": "s1", "import_id": "imp_x", "chunk": chunk}
    before = census()
    answer = api(wired.admin, "memory.imports.stage", body, session=wired.session)
    assert (answer.status, answer.code) == (400, "invalid_input")
    assert answer.error["details"]["errors"][0]["path"].startswith("/chunk/objects/")
    assert census() == before
