"""The cognition filter on memory.recall (SPEC §6.3): gated by spoke-cognition, grammar-checked at
dispatch, applied after authorization and before counts, ranking and budgets."""

import pytest

from memory.models import Record
from memory.selectors.selection import cognition_q
from tests.conftest import requires_postgres
from tests.memory.engine.test_cognition import entry, flt

pytestmark = pytest.mark.django_db


def _ids(body):
    return [r["record"]["record_id"] for r in body["results"]]


@pytest.fixture
def corpus(make_record):
    make_record(
        "plan one", record_id="rec_belief", cognition=[entry(type="belief", confidence=0.9)]
    )
    make_record("plan two", record_id="rec_goal", cognition=[entry(type="goal", confidence=0.3)])
    make_record(
        "plan three",
        record_id="rec_mixed",
        cognition=[entry(type="goal", confidence=0.1), entry(type="belief", confidence=0.2)],
    )
    make_record("plan four", record_id="rec_empty", cognition=[])
    make_record("plan five", record_id="rec_none")


def test_filter_narrows_results_and_total(corpus, recall):
    body = recall(
        {"query": {"text": "plan"}, "cognition_filter": flt(("type", "eq", "belief"))}
    ).body["recall"]
    assert sorted(r["record"]["record_id"] for r in body["results"]) == ["rec_belief", "rec_mixed"]
    assert body["total_eligible"] == 2


def test_requirements_on_different_entries_do_not_match(corpus, recall):
    body = recall(
        {
            "query": {"text": "plan"},
            "cognition_filter": flt(("type", "eq", "goal"), ("confidence", "gte", 0.2)),
        }
    ).body["recall"]
    assert [r["record"]["record_id"] for r in body["results"]] == ["rec_goal"]
    assert body["total_eligible"] == 1


def test_empty_and_absent_cognition_never_match(corpus, recall):
    body = recall({"query": {"text": ""}, "cognition_filter": flt(("confidence", "gte", 0))}).body[
        "recall"
    ]
    assert sorted(r["record"]["record_id"] for r in body["results"]) == [
        "rec_belief",
        "rec_goal",
        "rec_mixed",
    ]


def test_filter_applies_before_the_budget(corpus, recall):
    body = recall(
        {
            "query": {"text": "plan"},
            "cognition_filter": flt(("type", "in", ["belief", "goal"])),
            "budget": {"max_records": 1},
        }
    ).body["recall"]
    assert len(body["results"]) == 1 and body["total_eligible"] == 3
    assert body["truncation"] == {"truncated": True, "reason": "max_records", "omitted_count": 2}


def test_filter_never_widens_coverage(make_record, recall, grant_to):
    make_record("plan", record_id="rec_c1", cognition=[entry()], context_id="c1")
    make_record("plan", record_id="rec_c2", cognition=[entry()], context_id="c2")
    narrow, _ = grant_to(capabilities=["recall"], context_ids=["c1"])
    body = recall(
        {"query": {"text": "plan"}, "cognition_filter": flt(("type", "eq", "belief"))}, who=narrow
    ).body["recall"]
    assert _ids(body) == ["rec_c1"] and body["total_eligible"] == 1


def test_needs_spoke_cognition(corpus, api, admin):
    session = api.connect(admin, ["spoke-memory"])
    answer = api(
        admin,
        "memory.recall",
        {
            "space_id": "s1",
            "subject_id": "u1",
            "query": {"text": "plan"},
            "cognition_filter": flt(("type", "eq", "belief")),
        },
        session=session,
    )
    assert answer.status == 403 and answer.code == "capability_missing"
    assert answer.error["details"]["required"] == "spoke-cognition"
    without_session = api(
        admin,
        "memory.recall",
        {
            "space_id": "s1",
            "subject_id": "u1",
            "query": {"text": "plan"},
            "cognition_filter": flt(("type", "eq", "belief")),
        },
    )
    assert without_session.status == 403 and without_session.code == "capability_missing"


def test_unsupported_requirement_is_a_dispatch_error(corpus, recall):
    answer = recall(
        {
            "query": {"text": "plan"},
            "cognition_filter": flt(("type", "eq", "belief"), ("mood", "eq", "happy")),
        },
        expect=400,
    )
    assert answer.body["error"]["code"] == "invalid_input"
    assert answer.body["error"]["details"] == {
        "reason": "unsupported_cognition_requirement",
        "requirement_index": 1,
    }


def test_time_requirements_match_as_instants(make_record, recall):
    make_record(
        "plan",
        record_id="rec_a",
        cognition=[entry(times={"recorded_at": "2026-01-10T00:00:00.000Z"})],
    )
    body = recall(
        {
            "query": {"text": "plan"},
            "cognition_filter": flt(("times.recorded_at", "gte", "2026-01-10T01:00:00+01:00")),
        }
    ).body["recall"]
    assert _ids(body) == ["rec_a"]
    body = recall(
        {
            "query": {"text": "plan"},
            "cognition_filter": flt(("times.recorded_at", "lt", "2026-01-10T01:00:00+01:00")),
        }
    ).body["recall"]
    assert _ids(body) == []


FILTERS = [
    flt(("type", "eq", "belief")),
    flt(("type", "in", ["goal", "emotion"])),
    flt(("type", "eq", "goal"), ("confidence", "gte", 0.2)),
    flt(("confidence", "lte", 0.2), ("attribution.holder", "eq", "ada")),
    flt(
        ("attribution.source", "in", ["self_report"]),
        ("polarity", "eq", "affirmed"),
        ("intensity", "gte", 0.2),
    ),
    flt(("basis.kind", "eq", "stated"), ("type", "eq", "belief"), ("type", "eq", "goal")),
    flt(("attribution.holder", "eq", 'quote " and \\ and ü')),
    flt(("attribution.holder", "in", ["line\nbreak\u0001 😀", "nobody"])),
    flt(("confidence", "gte", 1e-05), ("intensity", "lte", 10**30)),
    flt(("times.recorded_at", "gte", "2000-01-01T00:00:00Z")),
]


@requires_postgres
@pytest.mark.parametrize("cognition_filter", FILTERS)
def test_postgres_pushdown_is_exact_for_what_it_pushes(corpus, make_record, cognition_filter):
    from memory.engine.cognition import content_matches

    make_record(
        "odd",
        record_id="rec_odd",
        cognition=[
            entry(attribution={"holder": 'quote " and \\ and ü', "source": "observed"}),
            entry(confidence=True, polarity="negated"),
            entry(attribution={"holder": "line\nbreak\u0001 😀", "source": "observed"}),
        ],
    )
    narrowed = set(
        Record.objects.filter(cognition_q(cognition_filter)).values_list("record_id", flat=True)
    )
    decided = {
        r.record_id for r in Record.objects.all() if content_matches(r.content, cognition_filter)
    }
    assert decided <= narrowed
    if not any(r["dimension"].startswith("times.") for r in cognition_filter["require"]):
        assert narrowed == decided
