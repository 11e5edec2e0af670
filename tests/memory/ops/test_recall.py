"""memory.recall (docs/protocol.md#ops, #engine-policy): eligibility, coverage, ranking, budget, determinism."""

import json

import pytest

from memory.engine import lexical, rank
from memory.models import Record, Subject
from memory.selectors.selection import cognition_q
from memory.wire.canonical import content_bytes
from tests.conftest import requires_postgres
from tests.memory.engine.test_cognition import entry, flt
from tests.memory.recall.conftest import ids

pytestmark = pytest.mark.django_db


def test_ranks_matches_by_relevance_and_leaves_non_matches_out(make_record, recall, settings):
    make_record("tea and more tea, green tea", record_id="rec_a")
    make_record("I like tea", record_id="rec_b")
    make_record("coffee only", record_id="rec_c")
    body = recall({"query": {"text": "Tea"}}).body["recall"]
    assert [r["record"]["record_id"] for r in body["results"]] == ["rec_a", "rec_b"]
    assert [r["rank"] for r in body["results"]] == [1, 2]
    assert body["results"][0]["score"] > body["results"][1]["score"]
    assert body["total_eligible"] == 2
    assert body["truncation"] == {"truncated": False, "reason": None, "omitted_count": 0}
    assert body["engine_policy_version"] == settings.SPOKE_MEMORY_ENGINE  # the leg's served one
    assert body["results"][0]["record"]["content"] == {"text": "tea and more tea, green tea"}


def test_any_query_token_matches(make_record, recall):
    make_record("apples", record_id="rec_a")
    make_record("pears", record_id="rec_b")
    make_record("plums", record_id="rec_c")
    assert sorted(ids(recall({"query": {"text": "apples, pears!"}}))) == ["rec_a", "rec_b"]


def test_empty_or_blank_query_is_newest_first(make_record, recall):
    make_record("old", record_id="rec_z", age_days=3)
    make_record("new", record_id="rec_y", age_days=1)
    make_record("tied b", record_id="rec_b", age_days=2)
    make_record("tied a", record_id="rec_a", age_days=2)
    for text in ("", "   ", "?!-"):
        answer = recall({"query": {"text": text}})
        assert ids(answer) == ["rec_y", "rec_a", "rec_b", "rec_z"]
        assert answer.body["recall"]["total_eligible"] == 4
        assert answer.body["recall"]["results"][0]["score"] == 1.0


def test_empty_query_tie_at_the_budget_edge_breaks_by_record_id(make_record, recall):
    make_record("x", record_id="rec_c", age_days=1)
    make_record("x", record_id="rec_a", age_days=1)
    make_record("x", record_id="rec_b", age_days=1)
    answer = recall({"query": {"text": ""}, "budget": {"max_records": 2}})
    assert ids(answer) == ["rec_a", "rec_b"]
    assert answer.body["recall"]["truncation"] == {
        "truncated": True,
        "reason": "max_records",
        "omitted_count": 1,
    }


def test_recency_breaks_equal_relevance_and_ties_go_by_record_id(make_record, recall):
    make_record("note about rust", record_id="rec_old", age_days=60)
    make_record("note about rust", record_id="rec_new", age_days=0)
    make_record("note about rust", record_id="rec_aaa", age_days=0)
    assert ids(recall({"query": {"text": "rust"}})) == ["rec_aaa", "rec_new", "rec_old"]


# The same state and request must give this exact ranking on every database: the expected
# answer is the pure policy's (engine/2, memory.engine.lexical: stems, no stop words), computed
# once and written down. hybrid/6's head is this ranking (tests/memory/hybrid/test_hybrid6_ranking.py).
CORPUS = [
    ("rec_01", 10, "The user prefers green tea in the morning"),
    ("rec_02", 9, "Green tea, green tea, always green tea"),
    ("rec_03", 30, "Coffee after lunch; never tea after six"),
    ("rec_04", 1, "Meeting notes: the morning standup moved to 9:30"),
    ("rec_05", 1, "TEA ceremony in Kyoto, a long trip with many temples and gardens and more"),
    ("rec_06", 5, "unrelated words only"),
    ("rec_07", 2, "Morning"),
]
EXPECTED = [
    ("rec_01", 0.96245),
    ("rec_02", 0.943616),
    ("rec_07", 0.566171),
    ("rec_04", 0.421892),
    ("rec_05", 0.33257),
    ("rec_03", 0.265631),
]


def test_ranking_is_the_pure_policy_on_every_database(make_record, recall, settings):
    settings.SPOKE_MEMORY_ENGINE = "engine/2"
    for record_id, age, text in CORPUS:
        make_record(text, record_id=record_id, age_days=age)
    body = recall({"query": {"text": "green tea morning"}}).body["recall"]
    assert [(r["record"]["record_id"], r["score"]) for r in body["results"]] == EXPECTED
    docs = [rank.Doc(rid, -age * 86_400_000, text) for rid, age, text in CORPUS]
    assert [(r.record_id, r.score) for r in lexical.rank(docs, "green tea morning")] == EXPECTED


def test_same_state_and_request_give_byte_identical_answers(make_record, recall, api, admin):
    for record_id, age, text in CORPUS:
        make_record(text, record_id=record_id, age_days=age)
    request = {"query": {"text": "tea morning"}, "budget": {"max_records": 3}}
    first, second = recall(request), recall(request)
    assert json.dumps(first.body, sort_keys=False) == json.dumps(second.body, sort_keys=False)


def test_budget_by_records(make_record, recall):
    for i in range(5):
        make_record(f"walk {i}", record_id=f"rec_{i}")
    body = recall({"query": {"text": "walk"}, "budget": {"max_records": 2}}).body["recall"]
    assert len(body["results"]) == 2 and body["total_eligible"] == 5
    assert body["truncation"] == {"truncated": True, "reason": "max_records", "omitted_count": 3}


def test_default_budget_is_ten_records(make_record, recall):
    for i in range(12):
        make_record(f"walk {i}", record_id=f"rec_{i:02d}")
    body = recall({"query": {"text": "walk"}}).body["recall"]
    assert len(body["results"]) == 10
    assert body["truncation"] == {"truncated": True, "reason": "max_records", "omitted_count": 2}


def test_budget_by_bytes_is_the_longest_prefix(make_record, recall):
    a = make_record("swim swim swim", record_id="rec_a")
    make_record("swim " + "x" * 200, record_id="rec_b")
    make_record("swim", record_id="rec_d")
    c = make_record("swim", record_id="rec_c")
    assert ids(recall({"query": {"text": "swim"}})) == ["rec_a", "rec_c", "rec_d", "rec_b"]
    # room for rec_a and rec_c, not rec_d: the prefix stops there even if a later one would fit
    limit = content_bytes(a.content) + content_bytes(c.content) + 5
    body = recall({"query": {"text": "swim"}, "budget": {"max_bytes": limit}}).body["recall"]
    assert [r["record"]["record_id"] for r in body["results"]] == ["rec_a", "rec_c"]
    assert body["total_eligible"] == 4
    assert body["truncation"] == {"truncated": True, "reason": "max_bytes", "omitted_count": 2}


def test_first_result_over_max_bytes_gives_nothing(make_record, recall):
    make_record("swim " + "y" * 100)
    body = recall({"query": {"text": "swim"}, "budget": {"max_bytes": 20}}).body["recall"]
    assert body["results"] == [] and body["total_eligible"] == 1
    assert body["truncation"] == {"truncated": True, "reason": "max_bytes", "omitted_count": 1}


def test_budget_over_published_limits_is_a_schema_error(recall, ensure_subject):
    ensure_subject("u1")
    answer = recall({"query": {"text": "x"}, "budget": {"max_records": 10_000}}, expect=400)
    assert answer.body["error"]["details"]["reason"] == "schema"


def test_tombstones_are_never_recalled(make_record, recall):
    make_record("secret plan", record_id="rec_a")
    make_record("", record_id="rec_dead", deleted=True)
    assert ids(recall({"query": {"text": "plan"}})) == ["rec_a"]
    body = recall({"query": {"text": ""}}).body["recall"]
    assert [r["record"]["record_id"] for r in body["results"]] == ["rec_a"] and body[
        "total_eligible"
    ] == 1


def test_archived_subject_answers_200_with_nothing(make_record, recall):
    make_record("plan")
    Subject.objects.filter(subject_id="u1").update(state=Subject.ARCHIVED)
    body = recall({"query": {"text": "plan"}}).body["recall"]
    assert body["results"] == [] and body["total_eligible"] == 0
    assert body["truncation"] == {"truncated": False, "reason": None, "omitted_count": 0}


def test_fenced_subject_is_still_recalled(make_record, recall):
    make_record("plan")
    Subject.objects.filter(subject_id="u1").update(state=Subject.FENCED)
    assert recall({"query": {"text": "plan"}}).body["recall"]["total_eligible"] == 1


def test_subject_never_ensured_is_not_found(recall):
    answer = recall({"query": {"text": "x"}, "subject_id": "ghost"}, expect=404)
    assert answer.body["error"]["code"] == "NOT_FOUND"
    assert answer.body["error"]["details"]["resource"] == "subject"


def test_outsider_and_uncovered_subject_are_not_found(make_record, recall, outsider, grant_to):
    make_record("plan", subject_id="u2")
    assert (
        recall({"query": {"text": "plan"}, "subject_id": "u2"}, who=outsider, expect=404).body[
            "error"
        ]["details"]["resource"]
        == "space"
    )
    narrow, _ = grant_to(capabilities=["recall"], subject_ids=["u1"])
    answer = recall({"query": {"text": "plan"}, "subject_id": "u2"}, who=narrow, expect=404)
    assert answer.body["error"]["details"]["resource"] == "subject"


def test_visible_subject_without_recall_is_permission_denied(make_record, recall, grant_to):
    make_record("plan")
    reader, _ = grant_to(capabilities=["records_read"])
    answer = recall({"query": {"text": "plan"}}, who=reader, expect=403)
    assert answer.body["error"]["code"] == "PERMISSION_DENIED"
    assert answer.body["error"]["details"]["capability"] == "recall"


def test_uncovered_context_never_appears_and_never_counts(make_record, recall, grant_to):
    make_record("plan alpha", record_id="rec_c1", context_id="c1")
    make_record("plan plan plan beta", record_id="rec_c2", context_id="c2")
    make_record("plan shared", record_id="rec_sh", shared=True)
    narrow, _ = grant_to(capabilities=["recall"], context_ids=["c1"])
    for text in ("plan", ""):
        body = recall({"query": {"text": text}}, who=narrow).body["recall"]
        assert [r["record"]["record_id"] for r in body["results"]] == ["rec_c1"]
        assert body["total_eligible"] == 1
    # the uncovered records do not move the covered one's score either (statistics are per
    # caller): it is the score rec_c1 gets once it is the subject's only record
    alone = recall({"query": {"text": "plan"}}, who=narrow).body["recall"]["results"][0]["score"]
    Record.objects.filter(record_id__in=["rec_c2", "rec_sh"]).delete()
    only = recall({"query": {"text": "plan"}}).body["recall"]["results"]
    assert [(r["record"]["record_id"], r["score"]) for r in only] == [("rec_c1", alone)]


def test_shared_needs_shared_access(make_record, recall, grant_to):
    make_record("plan shared", record_id="rec_sh", shared=True)
    make_record("plan here", record_id="rec_c1")
    without, _ = grant_to(capabilities=["recall"])
    with_shared, _ = grant_to(capabilities=["recall"], shared_access=True)
    assert ids(recall({"query": {"text": "plan"}}, who=without)) == ["rec_c1"]
    assert sorted(ids(recall({"query": {"text": "plan"}}, who=with_shared))) == ["rec_c1", "rec_sh"]


def test_revoked_grant_recalls_nothing_at_once(make_record, recall, grant_to, api, admin):
    make_record("plan")
    reader, grant_id = grant_to(capabilities=["recall"])
    assert ids(recall({"query": {"text": "plan"}}, who=reader)) == ["rec_0001"]
    api(admin, "memory.grants.revoke", {"space_id": "s1", "grant_id": grant_id})
    recall({"query": {"text": "plan"}}, who=reader, expect=404)


@pytest.mark.parametrize(
    "selection, expected",
    [
        ({"mode": "all"}, ["rec_c1", "rec_c2", "rec_sh"]),
        ({"mode": "shared"}, ["rec_sh"]),
        ({"mode": "contexts", "context_ids": ["c2"]}, ["rec_c2"]),
        ({"mode": "contexts_and_shared", "context_ids": ["c1"]}, ["rec_c1", "rec_sh"]),
        ({"mode": "contexts", "context_ids": ["nowhere"]}, []),
    ],
)
def test_selection_narrows(make_record, recall, selection, expected):
    make_record("plan", record_id="rec_c1", context_id="c1")
    make_record("plan", record_id="rec_c2", context_id="c2")
    make_record("plan", record_id="rec_sh", shared=True)
    body = recall({"query": {"text": "plan"}, "selection": selection}).body["recall"]
    assert sorted(r["record"]["record_id"] for r in body["results"]) == expected
    assert body["total_eligible"] == len(expected)


def test_bad_selection_is_invalid_input(make_record, recall):
    make_record("plan")
    answer = recall({"query": {"text": "plan"}, "selection": {"mode": "contexts"}}, expect=422)
    assert answer.body["error"]["details"] == {
        "reason": "selection",
        "field": "selection.context_ids",
    }


def test_provenance_filter_and_kinds(make_record, recall, persona_factory):
    other = persona_factory("other")
    make_record("plan", record_id="rec_a", source="capture", source_context_id="c9", kind="fact")
    make_record("plan", record_id="rec_b", source="authored", author=other.id, kind="plan")
    make_record("plan", record_id="rec_c", source="import", kind="fact")
    assert ids(
        recall({"query": {"text": "plan"}, "provenance_filter": {"sources": ["capture", "import"]}})
    ) == ["rec_a", "rec_c"]
    assert ids(
        recall({"query": {"text": "plan"}, "provenance_filter": {"source_context_ids": ["c9"]}})
    ) == ["rec_a"]
    assert ids(
        recall({"query": {"text": "plan"}, "provenance_filter": {"principal_ids": [other.id]}})
    ) == ["rec_b"]
    assert sorted(ids(recall({"query": {"text": "plan"}, "kinds": ["fact"]}))) == ["rec_a", "rec_c"]
    assert ids(
        recall(
            {
                "query": {"text": "plan"},
                "kinds": ["fact"],
                "provenance_filter": {"sources": ["import"]},
            }
        )
    ) == ["rec_c"]


def test_recall_is_a_read_and_writes_nothing(make_record, recall, space):
    make_record("plan")
    before = (
        Subject.objects.get(subject_id="u1").revision,
        type(space).objects.get(pk="s1").revision,
    )
    recall({"query": {"text": "plan"}})
    assert (
        Subject.objects.get(subject_id="u1").revision,
        type(space).objects.get(pk="s1").revision,
    ) == before


@pytest.mark.parametrize("query", ["plan", ""])
def test_query_count_does_not_grow_with_records(make_record, admin, query):
    """The served engine's statements (coverage, the ranking, the result rows; hybrid/6 adds its
    vector checks) are as many for 40 records as for 3."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from memory.ops.base import call

    request = {"space_id": "s1", "subject_id": "u1", "query": {"text": query}}
    counts = []
    for size in (3, 40):
        while Record.objects.count() < size:
            make_record(f"plan {Record.objects.count()}")
        call(admin.principal, "memory.recall", request)  # warm: per-process caches filled
        with CaptureQueriesContext(connection) as seen:
            out = call(admin.principal, "memory.recall", request)
        counts.append(len(seen.captured_queries))
        assert out["recall"]["total_eligible"] == size
    assert counts[0] == counts[1], counts


def test_an_integral_float_budget_counts_like_the_integer(make_record, recall):
    """The schema's "integer" admits 2.0 (one JSON number type); it once crashed the slice (500)."""
    for i in range(3):
        make_record(f"walk {i}", record_id=f"rec_{i}")
    budget = {"max_records": 2, "max_bytes": 10_000}
    for query in ("walk", ""):
        as_int = recall({"query": {"text": query}, "budget": budget})
        floats = {k: float(v) for k, v in budget.items()}
        as_float = recall({"query": {"text": query}, "budget": floats})
        assert as_float.status == 200, as_float.body
        assert as_float.body == as_int.body and len(as_float.body["recall"]["results"]) == 2


# ---- the cognition filter -----------------------------------------------------------------------
# The cognition filter on memory.recall (docs/protocol.md#cognition-filter): gated by spoke-cognition, grammar-checked at
# dispatch, applied after authorization and before counts, ranking and budgets.


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


def _erasing_after_ranking(monkeypatch, erase) -> None:
    """The configured engine ranks, then `erase` runs before the op reads the ranked rows: a
    records.delete (or an import's activation replacing the space) committed by another request
    between the two statements, as READ COMMITTED lets it on PostgreSQL."""
    from memory import recall_contract

    real = recall_contract.current

    class Ranked:
        def __init__(self, engine):
            self._engine = engine

        def rank(self, query):
            ranking = self._engine.rank(query)
            erase()
            return ranking

        def __getattr__(self, name):  # the rest of the engine as it is (its embedding model…)
            return getattr(self._engine, name)

    monkeypatch.setattr(recall_contract, "current", lambda: Ranked(real()))


def test_a_record_tombstoned_between_ranking_and_reading_is_not_recalled(
    make_record, recall, monkeypatch
):
    make_record("the plan is secret", record_id="rec_a")
    make_record("the plan changed", record_id="rec_b")
    _erasing_after_ranking(
        monkeypatch,
        lambda: Record.objects.filter(record_id="rec_b").update(
            deleted_at="2026-12-05T00:00:00Z", deleted_by_principal_id="prn_x", content={"text": ""}
        ),
    )
    body = recall({"query": {"text": "plan"}}).body["recall"]
    assert [r["record"]["record_id"] for r in body["results"]] == ["rec_a"]
    assert all("tombstone" not in r["record"] for r in body["results"])
    assert body["total_eligible"] == 1


def test_records_removed_between_ranking_and_reading_answer_what_is_left(
    make_record, recall, monkeypatch
):
    """An import's activation replaces a space's records whole (transfer_load.clear_space): a
    recall ranked just before answers what is still there, not a 500."""
    make_record("the plan is secret", record_id="rec_a")
    make_record("the plan changed", record_id="rec_b")
    _erasing_after_ranking(monkeypatch, lambda: Record.objects.filter(record_id="rec_a").delete())
    body = recall({"query": {"text": "plan"}}).body["recall"]
    assert [r["record"]["record_id"] for r in body["results"]] == ["rec_b"]
    assert body["total_eligible"] == 1
