"""memory.records.list (SPEC §2.3, §2.7, §6.3): newest first, total_authorized over the whole
filtered authorized set, selection × provenance × kinds × cognition, keyset cursors bound to the
caller, the request, the subject (or space) revision and the grant state."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from tests.memory.ops.capture_world import C1, C2, SHARED, cognition_entry, world_fixture  # noqa: F401

pytestmark = pytest.mark.django_db


def ids(answer) -> list[str]:
    assert answer.status == 200, answer.body
    return [r["record_id"] for r in answer.body["records"]]


def test_newest_first_ties_by_record_id_desc(world):
    first = world.record_id(text="first")
    [cid] = world.candidate_ids(texts=["a and b"])
    refs = world.review(
        None,
        cid,
        {
            "action": "fragment",
            "fragments": [{"content": {"text": "a"}}, {"content": {"text": "b"}}],
        },
    ).receipt["refs"]
    frag = [r["id"] for r in refs[1:]]
    last = world.record_id(text="last")
    assert ids(world.list_records(subject_id="u1")) == [last, frag[1], frag[0], first]


def test_total_authorized_counts_the_whole_filtered_set_across_pages(world):
    made = [world.record_id(text=f"r{i}", kind="fact" if i % 2 else "plan") for i in range(7)]
    seen, cursor = [], None
    req = {"subject_id": "u1", "kinds": ["fact"], "page_size": 2}
    while True:
        page = world.list_records(**req, **({"cursor": cursor} if cursor else {}))
        assert page.body["total_authorized"] == 3
        seen += ids(page)
        cursor = page.body["next_cursor"]
        if cursor is None:
            break
    assert seen == [made[5], made[3], made[1]]


def test_tombstoned_only_on_request(world, api, admin):
    keep = world.record_id()
    gone = world.record_id()
    api(
        admin,
        "memory.records.delete",
        {"space_id": "s1", "record_id": gone, "expected_revision": 1},
    )
    assert ids(world.list_records()) == [keep]
    both = world.list_records(include_tombstoned=True)
    assert ids(both) == [gone, keep] and both.body["total_authorized"] == 2
    assert (
        both.body["records"][0]["content"] == {"text": ""}
        and "tombstone" in both.body["records"][0]
    )


@pytest.fixture
def spread(world, api, grant_to):
    """Four records: authored in c1 (admin), authored shared (writer), captured in c2 from
    context chat (capturer), captured shared from context web (admin)."""
    writer, _ = grant_to(capabilities=["records_write"], shared_access=True)
    capturer, _ = grant_to(capabilities=["capture"], shared_access=True)
    r = {
        "c1_authored": world.record_id(placement=C1, kind="fact"),
        "shared_authored": world.record_id(writer, placement=SHARED, kind="plan"),
    }
    [a] = world.candidate_ids(capturer, placement=C2, scope_extra={"source_context_id": "chat"})
    [b] = world.candidate_ids(placement=SHARED, scope_extra={"source_context_id": "web"})
    r["c2_captured"] = world.review(None, a, {"action": "promote", "kind": "fact"}).receipt["refs"][
        1
    ]["id"]
    r["shared_captured"] = world.review(None, b, {"action": "promote", "kind": "event"}).receipt[
        "refs"
    ][1]["id"]
    r["writer"], r["capturer"] = writer.id, capturer.id
    return r


@pytest.mark.parametrize(
    "selection, provenance, kinds, expected",
    [
        (None, None, None, {"c1_authored", "shared_authored", "c2_captured", "shared_captured"}),
        ({"mode": "shared"}, None, None, {"shared_authored", "shared_captured"}),
        ({"mode": "contexts", "context_ids": ["c1"]}, None, None, {"c1_authored"}),
        (
            {"mode": "contexts_and_shared", "context_ids": ["c2"]},
            None,
            None,
            {"shared_authored", "c2_captured", "shared_captured"},
        ),
        (None, {"sources": ["capture"]}, None, {"c2_captured", "shared_captured"}),
        ({"mode": "shared"}, {"sources": ["authored"]}, None, {"shared_authored"}),
        (None, {"source_context_ids": ["chat"]}, None, {"c2_captured"}),
        ({"mode": "shared"}, {"source_context_ids": ["chat"]}, None, set()),
        (None, {"principal_ids": ["writer"]}, None, {"shared_authored"}),
        (None, {"principal_ids": ["capturer"], "sources": ["capture"]}, None, {"c2_captured"}),
        (None, {"principal_ids": ["capturer"], "sources": ["authored"]}, None, set()),
        (
            {"mode": "contexts_and_shared", "context_ids": ["c1", "c2"]},
            {"sources": ["capture", "authored"]},
            ["fact"],
            {"c1_authored", "c2_captured"},
        ),
        ({"mode": "all"}, {"sources": ["import"]}, None, set()),
    ],
)
def test_selection_provenance_and_kinds_combine_by_and(
    world, spread, selection, provenance, kinds, expected
):
    body = {}
    if selection:
        body["selection"] = selection
    if provenance:
        provenance = {
            k: [spread.get(x, x) for x in v] if k == "principal_ids" else v
            for k, v in provenance.items()
        }
        body["provenance_filter"] = provenance
    if kinds:
        body["kinds"] = kinds
    answer = world.list_records(**body)
    assert set(ids(answer)) == {spread[k] for k in expected}
    assert answer.body["total_authorized"] == len(expected)


def test_selection_narrows_grants_and_never_widens_them(world, spread, grant_to):
    who, _ = grant_to(capabilities=["records_read"], context_ids=["c1"])
    assert set(ids(world.list_records(who))) == {spread["c1_authored"]}
    assert ids(world.list_records(who, selection={"mode": "contexts", "context_ids": ["c2"]})) == []
    assert ids(world.list_records(who, selection={"mode": "shared"})) == []
    assert world.list_records(who).body["total_authorized"] == 1


@pytest.mark.parametrize(
    "selection, status, code",
    [
        ({"mode": "contexts"}, 422, "INVALID_INPUT"),
        ({"mode": "contexts_and_shared"}, 422, "INVALID_INPUT"),
        ({"mode": "all", "context_ids": ["c1"]}, 422, "INVALID_INPUT"),
        ({"mode": "shared", "context_ids": ["c1"]}, 422, "INVALID_INPUT"),
        # SPEC §2.3: an empty context_ids is a bad selection, not a schema error (issue 13)
        ({"mode": "contexts", "context_ids": []}, 422, "INVALID_INPUT"),
        ({"mode": "contexts_and_shared", "context_ids": []}, 422, "INVALID_INPUT"),
        ({"mode": "all", "context_ids": []}, 422, "INVALID_INPUT"),
    ],
)
def test_bad_selection(world, selection, status, code):
    answer = world.list_records(selection=selection)
    assert (answer.status, answer.code) == (status, code)
    if status == 422:
        assert answer.error["details"] == {"reason": "selection", "field": "selection.context_ids"}


def test_list_without_records_read_is_permission_denied(world, grant_to):
    who, _ = grant_to(capabilities=["capture", "records_write"], subject_ids=["u1"])
    for body in ({"subject_id": "u1"}, {}):
        answer = world.list_records(who, **body)
        assert (answer.code, answer.error["details"]) == (
            "PERMISSION_DENIED",
            {"capability": "records_read"},
        )
    elsewhere, _ = grant_to(capabilities=["records_read"], subject_ids=["u2"])
    assert world.list_records(elsewhere).body["records"] == []


def test_subject_not_visible_is_not_found(world, grant_to):
    who, _ = grant_to(capabilities=["records_read"], subject_ids=["u2"])
    assert world.list_records(who, subject_id="u1").code == "NOT_FOUND"
    assert world.list_records(subject_id="never").error["details"] == {"resource": "subject"}


def test_cognition_filter_matches_one_entry_on_all_requirements(world, api, admin):
    session = api.connect(admin)
    goal = world.record_id(
        content={"text": "g", "cognition": [cognition_entry(type="goal", confidence=0.9)]}
    )
    split = world.record_id(
        content={
            "text": "s",
            "cognition": [
                cognition_entry(type="goal", confidence=0.1),
                cognition_entry(type="belief", confidence=0.9),
            ],
        }
    )
    world.record_id(content={"text": "none"})
    world.record_id(content={"text": "empty", "cognition": []})
    flt = {
        "require": [
            {"dimension": "type", "op": "eq", "value": "goal"},
            {"dimension": "confidence", "op": "gte", "value": 0.5},
        ]
    }
    answer = world.list_records(session=session, cognition_filter=flt)
    assert ids(answer) == [goal] and answer.body["total_authorized"] == 1
    either = {"require": [{"dimension": "type", "op": "in", "value": ["goal", "belief"]}]}
    page = world.list_records(session=session, cognition_filter=either, page_size=1)
    assert ids(page) == [split] and page.body["total_authorized"] == 2
    rest = world.list_records(
        session=session, cognition_filter=either, page_size=1, cursor=page.body["next_cursor"]
    )
    assert ids(rest) == [goal] and rest.body["next_cursor"] is None
    # the filter binds the cursor
    other = world.list_records(
        session=session, cognition_filter=flt, page_size=1, cursor=page.body["next_cursor"]
    )
    assert other.code == "CURSOR_INVALID"


def test_cognition_filter_needs_the_capability(world):
    flt = {"require": [{"dimension": "type", "op": "eq", "value": "goal"}]}
    assert world.list_records(cognition_filter=flt).code == "capability_missing"


@pytest.fixture
def paged(world):
    for i in range(3):
        world.record_id(text=f"r{i}")
    first = world.list_records(subject_id="u1", page_size=1)
    return first.body["next_cursor"]


def test_cursor_survives_an_unrelated_read(world, paged):
    world.list_records(subject_id="u1")
    assert world.list_records(subject_id="u1", page_size=1, cursor=paged).status == 200
    assert (
        world.list_records(subject_id="u1", page_size=2, cursor=paged).status == 200
    )  # page_size is free


def test_cursor_invalid_after_a_write_to_the_subject(world, paged):
    world.record_id(subject="u2")  # another subject: the subject-bound cursor holds
    assert world.list_records(subject_id="u1", page_size=1, cursor=paged).status == 200
    world.record_id()
    assert world.list_records(subject_id="u1", page_size=1, cursor=paged).code == "CURSOR_INVALID"


def test_space_wide_cursor_is_bound_to_the_space_revision(world):
    for i in range(3):
        world.record_id(text=f"r{i}")
    cursor = world.list_records(page_size=1).body["next_cursor"]
    world.record_id(subject="u2")
    assert world.list_records(page_size=1, cursor=cursor).code == "CURSOR_INVALID"


def test_cursor_invalid_after_a_grant_change(world, api, admin, grant_to):
    who, grant_id = grant_to(capabilities=["records_read"])
    for i in range(3):
        world.record_id(text=f"r{i}")
    cursor = world.list_records(who, subject_id="u1", page_size=1).body["next_cursor"]
    assert world.list_records(who, subject_id="u1", page_size=1, cursor=cursor).status == 200
    grant_to(who, capabilities=["recall"])
    assert (
        world.list_records(who, subject_id="u1", page_size=1, cursor=cursor).code
        == "CURSOR_INVALID"
    )


def test_cursor_tampered_foreign_or_for_another_request(world, paged, grant_to):
    assert (
        world.list_records(subject_id="u1", page_size=1, cursor=paged[:-3] + "abc").code
        == "CURSOR_INVALID"
    )
    assert (
        world.list_records(subject_id="u1", page_size=1, cursor="not-a-cursor").code
        == "CURSOR_INVALID"
    )
    assert (
        world.list_records(subject_id="u1", kinds=["fact"], page_size=1, cursor=paged).code
        == "CURSOR_INVALID"
    )
    assert (
        world.list_records(subject_id="u1", include_tombstoned=True, cursor=paged).code
        == "CURSOR_INVALID"
    )
    other, _ = grant_to(capabilities=["records_read"])
    assert (
        world.list_records(other, subject_id="u1", page_size=1, cursor=paged).code
        == "CURSOR_INVALID"
    )


def test_a_later_page_costs_the_same_queries_as_the_first(world):
    for i in range(12):
        world.record_id(text=f"r{i}")
    with CaptureQueriesContext(connection) as page_one:
        first = world.list_records(subject_id="u1", page_size=3)
    cursor = first.body["next_cursor"]
    for _ in range(2):
        cursor = world.list_records(subject_id="u1", page_size=3, cursor=cursor).body["next_cursor"]
    with CaptureQueriesContext(connection) as page_four:
        last = world.list_records(subject_id="u1", page_size=3, cursor=cursor)
    assert len(ids(last)) == 3 and last.body["next_cursor"] is None
    assert len(page_four.captured_queries) == len(page_one.captured_queries)


def test_an_integral_float_page_size_pages_like_the_integer(world):
    """JSON has one number type and the schema's "integer" admits 2.0: it once crashed the slice
    (500). Found by tests/hostile/test_record_model.py."""
    made = [world.record_id(text=f"r{i}") for i in range(3)]
    first = world.list_records(subject_id="u1", page_size=2.0)
    assert first.status == 200, first.body
    assert ids(first) == made[:0:-1] and first.body["next_cursor"] is not None
    rest = world.list_records(subject_id="u1", page_size=2.0, cursor=first.body["next_cursor"])
    assert ids(rest) == [made[0]] and rest.body["next_cursor"] is None


@pytest.mark.parametrize(
    "op, extra",
    [
        ("memory.candidates.list", {}),
        ("memory.grants.list", {"view": "admin"}),
        ("memory.reflections.list", {"subject_id": "u1"}),
    ],
)
def test_every_list_takes_an_integral_float_page_size(world, api, admin, op, extra):
    body = {"space_id": "s1", "page_size": 1.0, **extra}
    answer = api(admin, op, body, session=api.connect(admin))
    assert answer.status == 200, answer.body
    assert len(next(v for v in answer.body.values() if isinstance(v, list))) <= 1
