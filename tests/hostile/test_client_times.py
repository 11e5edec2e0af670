"""Issue 13, item 3 (docs/protocol.md#identifiers): every time a client sends, in any accepted spelling, denotes an
instant in 0001-01-01T00:00:00Z..9999-12-31T23:59:59.999Z once normalized to UTC, else
`400 invalid_input` (`reason: "schema"`) at the edge and nothing is stored; never a 5xx. A value
stored before the edge refused it never poisons a later read, and migration 0009 rewrites it."""

from __future__ import annotations

import importlib

import pytest
from django.apps import apps as django_apps
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memory.models import Candidate, Grant, Record, RecordRevision
from tests.hostile.conftest import census
from tests.memory.ops.capture_world import C1, cognition_entry, world_fixture  # noqa: F401

pytestmark = pytest.mark.django_db

LATE = "9999-12-31T23:59:59-01:00"  # 10000-01-01T00:59:59Z
EARLY = "0001-01-01T00:00:00+01:00"  # 0000-12-31T23:00:00Z
OUT_OF_RANGE = [
    LATE,
    EARLY,
    "9999-12-31t23:59:59.9999z",
    "0000-06-01T00:00:00Z",
    "2026-02-30T00:00:00Z",
]
IN_RANGE = ["9999-12-31T23:59:59.999Z", "0001-01-01T00:00:00-01:00", "9999-12-31T22:59:59+01:00"]


@pytest.fixture
def call(world):
    """Call an op as the world's admin in a session with every flag (cognition included)."""
    session = world.api.connect(world.admin)
    return lambda op, body: world.api(world.admin, op, body, session=session)


def time_filter(value: str, dimension: str = "times.recorded_at", op: str = "gte") -> dict:
    return {"require": [{"dimension": dimension, "op": op, "value": value}]}


def assert_schema_error(answer, path: str) -> None:
    assert answer.status == 400, answer.body
    assert answer.code == "invalid_input"
    assert answer.error["details"]["reason"] == "schema"
    assert [e["path"] for e in answer.error["details"]["errors"]] == [path]


@pytest.mark.parametrize("value", OUT_OF_RANGE)
def test_a_filter_time_out_of_range_is_a_schema_error_on_every_filtering_op(world, call, value):
    world.record_id()
    body = {"space_id": "s1", "subject_id": "u1", "cognition_filter": time_filter(value)}
    for op, extra in [
        ("memory.records.list", {}),
        ("memory.recall", {"query": {"text": "Ada"}}),
        ("memory.reflections.state", {}),
        ("memory.reflections.list", {}),
        ("memory.reflections.generate", {}),
    ]:
        answer = call(op, {**body, **extra})
        assert_schema_error(answer, "/cognition_filter/require/0/value")


def test_a_filter_value_that_is_no_time_at_all_stays_a_grammar_error(call):
    body = {"space_id": "s1", "cognition_filter": time_filter("yesterday")}
    answer = call("memory.records.list", body)
    assert answer.status == 400
    assert answer.error["details"]["reason"] == "unsupported_cognition_requirement"


@pytest.mark.parametrize("value", OUT_OF_RANGE)
def test_a_cognition_record_time_out_of_range_is_refused_and_nothing_stored(world, value):
    [cid] = world.candidate_ids(texts=["a"])
    before = census()
    entry = cognition_entry(times={"recorded_at": "2026-01-01T00:00:00Z", "occurred_at": value})
    content = {"text": "t", "cognition": [entry]}
    path = "/cognition/0/times/occurred_at"
    assert_schema_error(world.create(content=content), "/content" + path)
    capture = world.capture(texts=[{"content": {"text": "ok"}}, {"content": content}])
    assert_schema_error(capture, "/items/1/content" + path)
    fragment = {"action": "fragment", "fragments": [{"content": content}]}
    assert_schema_error(world.review(None, cid, fragment), "/decision/fragments/0/content" + path)
    promote = {"action": "promote", "content_override": content}
    assert_schema_error(world.review(None, cid, promote), "/decision/content_override" + path)
    assert census() == before


def test_a_grant_expiry_out_of_range_is_refused(api, admin, space, persona_factory):
    grantee = persona_factory("g")
    body = {"space_id": "s1", "grantee_principal_id": grantee.id, "capabilities": ["recall"]}
    for value in OUT_OF_RANGE:
        answer = api(admin, "memory.grants.grant", {**body, "expires_at": value})
        assert_schema_error(answer, "/expires_at")
    assert Grant.objects.filter(grantee=grantee.principal).count() == 0
    answer = api(admin, "memory.grants.grant", {**body, "expires_at": "9999-12-31T23:59:59.999Z"})
    assert answer.status == 200, answer.body


@pytest.mark.parametrize("value", IN_RANGE)
def test_times_at_the_bounds_are_accepted_and_compare_as_instants(world, call, value):
    content = {"text": "t", "cognition": [cognition_entry(times={"recorded_at": value})]}
    rid = world.record_id(content=content)
    hit = call("memory.records.list", {"space_id": "s1", "cognition_filter": time_filter(value)})
    assert [r["record_id"] for r in hit.body["records"]] == [rid]
    flt = time_filter(value, op="lt")
    miss = call("memory.records.list", {"space_id": "s1", "cognition_filter": flt})
    assert miss.status == 200 and miss.body["records"] == []


def _poison(world) -> str:
    """A record stored before the edge refused such times (written past the edge)."""
    rid = world.record_id(content={"text": "x", "cognition": [cognition_entry()]})
    poisoned = {"text": "x", "cognition": [cognition_entry(times={"recorded_at": LATE})]}
    Record.objects.filter(space_id="s1", record_id=rid).update(content=poisoned)
    RecordRevision.objects.filter(
        space_id="s1", record__space_id="s1", record__record_id=rid
    ).update(content=poisoned)
    return rid


def test_a_stored_out_of_range_time_never_poisons_a_read(world, call):
    poisoned = _poison(world)
    good = world.record_id(content={"text": "Ada", "cognition": [cognition_entry()]})
    flt = time_filter("2000-01-01T00:00:00Z")
    listed = call("memory.records.list", {"space_id": "s1", "cognition_filter": flt})
    assert listed.status == 200, listed.body
    assert [r["record_id"] for r in listed.body["records"]] == [good]
    recall = call(
        "memory.recall",
        {"space_id": "s1", "subject_id": "u1", "query": {"text": ""}, "cognition_filter": flt},
    )
    assert recall.status == 200, recall.body
    assert [r["record"]["record_id"] for r in recall.body["recall"]["results"]] == [good]
    assert poisoned != good


@pytest.mark.single_node(
    reason="runs a data migration's code, which ran before distribution on a cluster"
)
def test_migration_0009_rewrites_stored_out_of_range_times_to_the_bound(world):
    rid = _poison(world)
    [cid] = world.candidate_ids(texts=["a"])
    bad = {"text": "c", "cognition": [cognition_entry(times={"recorded_at": EARLY})]}
    Candidate.objects.filter(candidate_id=cid).update(proposed={"content": bad})
    migration = importlib.import_module("memory.migrations.0009_client_time_range")
    migration.forwards(django_apps, None)
    record = Record.objects.get(record_id=rid)
    assert record.content["cognition"][0]["times"]["recorded_at"] == "9999-12-31T23:59:59.999Z"
    history = RecordRevision.objects.get(record=record)
    assert history.content == record.content
    proposed = Candidate.objects.get(candidate_id=cid).proposed["content"]
    assert proposed["cognition"][0]["times"]["recorded_at"] == "0001-01-01T00:00:00.000Z"
    # what is stored is again what a write may send
    assert world.create(content=record.content).status == 200


# --- never a 5xx: random times, every accepted spelling, every op that takes a time ----------
def _spelled(when, frac, offset, sep, zulu) -> str:
    year, month, day, hour, minute, second = when
    text = f"{year:04d}-{month:02d}-{day:02d}{sep}{hour:02d}:{minute:02d}:{second:02d}"
    if frac:
        text += "." + frac
    if offset is None:
        return text + zulu
    sign, hh, mm = offset
    return text + f"{sign}{hh:02d}:{mm:02d}"


WHEN = st.one_of(
    st.tuples(
        st.one_of(st.sampled_from([0, 1, 1969, 2026, 9999]), st.integers(0, 9999)),
        st.integers(1, 12),
        st.integers(1, 31),
        st.integers(0, 23),
        st.integers(0, 59),
        st.integers(0, 59),
    ),
    # the edges of the range, where an offset tips a time over
    st.sampled_from([(9999, 12, 31, 23, 59, 59), (9999, 12, 31, 0, 0, 0), (1, 1, 1, 0, 0, 0)]),
)
TIMES = st.builds(
    _spelled,
    WHEN,
    st.one_of(st.just(""), st.from_regex(r"[0-9]{1,9}", fullmatch=True)),
    st.one_of(
        st.none(),
        st.tuples(st.sampled_from("+-"), st.integers(0, 23), st.integers(0, 59)),
    ),
    st.sampled_from("Tt"),
    st.sampled_from("Zz"),
)


def _requests(value: str, cid: str) -> list[tuple[str, dict]]:
    content = {"text": "t", "cognition": [cognition_entry(times={"recorded_at": value})]}
    flt = {"cognition_filter": time_filter(value)}
    read = {"space_id": "s1", "subject_id": "u1"}
    return [
        ("memory.records.list", {**read, **flt}),
        ("memory.recall", {**read, "query": {"text": "t"}, **flt}),
        ("memory.reflections.state", {**read, **flt}),
        ("memory.reflections.list", {**read, **flt}),
        ("memory.reflections.generate", {**read, **flt}),
        (
            "memory.records.create",
            {**read, "kind": "fact", "content": content, "placement": C1},
        ),
        (
            "memory.capture",
            {**read, "capture_scope": {"placement": C1}, "items": [{"content": content}]},
        ),
        (
            "memory.candidates.review",
            {
                "space_id": "s1",
                "candidate_id": cid,
                "decision": {"action": "fragment", "fragments": [{"content": content}]},
            },
        ),
        (
            "memory.grants.grant",
            {
                "space_id": "s1",
                "grantee_principal_id": "prn_nobody",
                "capabilities": ["recall"],
                "expires_at": value,
            },
        ),
    ]


def test_random_times_never_answer_5xx_on_any_op_that_takes_a_time(world, call):
    rid = world.record_id(content={"text": "t", "cognition": [cognition_entry()]})
    world.api(
        world.admin,
        "memory.records.update",
        {"space_id": "s1", "record_id": rid, "expected_revision": 1, "kind": "note"},
    )
    [cid] = world.candidate_ids(texts=["seed"])

    @settings(
        max_examples=60,
        deadline=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    )
    @given(value=TIMES)
    def check(value):
        for op, body in _requests(value, cid):
            answer = call(op, body)
            assert answer.status < 500, (op, value, answer.body)
            if answer.status == 400:
                assert answer.error["details"]["reason"] in (
                    "schema",
                    "unsupported_cognition_requirement",
                )
        update = {"space_id": "s1", "record_id": rid, "expected_revision": 999}
        content = {"text": "t", "cognition": [cognition_entry(times={"occurred_at": value})]}
        answer = call("memory.records.update", {**update, "content": content})
        assert answer.status < 500, (value, answer.body)

    check()
