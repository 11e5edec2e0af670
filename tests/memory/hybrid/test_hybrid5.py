"""hybrid/5 through the wire (docs/recall.md#scores): hybrid/4's pool re-scored by the shipped
logistic model. Its answers equal the plain policy (hybrid/4's oracle lists, the pool's texts,
memory.engine.hybrid5.fuse5); the score is on one absolute scale (a query nothing stored answers
scores its top below the documented threshold, where hybrid/4 says ~1); each result's record
names the signals that matched it in `extensions["spoke-recall-match"]`, in the answer only; the
speaker named in the query lifts that speaker's records."""

import pytest

from memory.engine import hybrid3, hybrid5
from memory.models import Record

from .conftest import ids, needs_semantic
from .test_hybrid4 import MORE, QUERIES, oracle
from .test_hybrid_recall import CORPUS

pytestmark = [needs_semantic, pytest.mark.django_db]


def plain(space, query: str, max_records: int) -> list[tuple[str, float]]:
    """hybrid/5 stated plainly: hybrid/4's fused list (its oracle), its first POOL re-scored."""
    fused = oracle(space, query)
    pool = fused[: max(hybrid5.POOL, max_records)]
    texts = dict(Record.objects.filter(space=space).values_list("record_id", "text"))
    # the oracle's sides, again, for the features
    lexical, semantic = _sides(space, query)
    assert hybrid3.fuse3(lexical, semantic) == fused
    return [(s.record_id, s.score) for s in hybrid5.fuse5(lexical, semantic, pool, query, texts)]


def _sides(space, query: str):
    captured = []
    real = hybrid3.fuse3

    def spy(lexical, semantic):
        captured.append((lexical, semantic))
        return real(lexical, semantic)

    hybrid3.fuse3 = spy
    try:
        oracle(space, query)
    finally:
        hybrid3.fuse3 = real
    return captured[0]


@pytest.mark.parametrize("query", QUERIES)
def test_hybrid5_answers_as_the_plain_policy(hybrid5_engine, space, write, recall, query):
    for text in CORPUS + MORE:
        write(text)
    answer = recall(query, budget={"max_records": 20})
    assert answer["engine_policy_version"] == "hybrid/5"
    got = [(r["record"]["record_id"], r["score"]) for r in answer["results"]]
    assert got == plain(space, query, 20)[:20]
    assert all(0.0 < score < 1.0 for _, score in got)
    lexical, semantic = _sides(space, query)
    lex, cos = dict(lexical), dict(semantic)
    for result in answer["results"]:
        rid = result["record"]["record_id"]
        match = result["record"]["extensions"][hybrid5.MATCH_KEY]
        assert match["lexical"] is (rid in lex)
        assert match["vector"] is (rid in cos)
        assert match.get("cosine") == cos.get(rid)
        assert ("term_fraction" in match) is (rid in lex)
        assert match["boosts"] == []  # no record opens with a speaker's label; no names asked


def test_the_score_is_absolute_where_hybrid4_says_one(hybrid5_engine, settings, write, recall):
    """The issue's example: "does Ada have pets?" against a record about Portuguese. hybrid/4's
    min-max score puts any top at ~1; hybrid/5 puts it below the threshold, and a record that
    answers the question above it."""
    write("Ada: I am learning Portuguese this year.")
    write("Grace: The quarterly tax return is due next week.")
    unrelated = recall("Does Ada have pets?")
    assert unrelated["results"]
    assert unrelated["results"][0]["score"] < hybrid5.THRESHOLD
    settings.SPOKE_MEMORY_ENGINE = "hybrid/4"
    assert recall("Does Ada have pets?")["results"][0]["score"] > 0.9
    settings.SPOKE_MEMORY_ENGINE = "hybrid/5"
    pet = write("Ada: I adopted a dog, my pets are a dog and two cats.")
    answered = recall("Does Ada have pets?")
    assert ids(answered)[0] == pet
    assert answered["results"][0]["score"] >= hybrid5.THRESHOLD
    assert answered["results"][0]["record"]["extensions"][hybrid5.MATCH_KEY]["boosts"] == [
        "speaker_named",
        "proper_nouns",
    ]


def test_the_speaker_named_in_the_query_lifts_their_records(hybrid5_engine, write, recall):
    melanie = write("Melanie: I painted a sunrise over the lake last week.")
    caroline = write("Caroline: I painted a sunrise over the lake last week.")
    answer = recall("What did Caroline paint?")
    assert ids(answer)[:2] == [caroline, melanie]
    first, second = answer["results"][:2]
    assert first["score"] > second["score"]
    assert first["record"]["extensions"][hybrid5.MATCH_KEY]["boosts"] == [
        "speaker_named",
        "proper_nouns",
    ]
    assert second["record"]["extensions"][hybrid5.MATCH_KEY]["boosts"] == []


def test_the_match_is_in_the_answer_only(hybrid5_engine, api, admin, space, session, write, recall):
    rid = write("I adopted a golden retriever puppy last spring")
    answer = recall("puppy")
    assert hybrid5.MATCH_KEY in answer["results"][0]["record"]["extensions"]
    got = api(
        admin,
        "memory.records.get",
        {"space_id": space.space_id, "record_id": rid},
        session=session,
    )
    assert got.status == 200, got.body
    assert hybrid5.MATCH_KEY not in got.body["record"]["extensions"]


def test_an_empty_query_answers_newest_first_without_a_match(hybrid5_engine, write, recall):
    first = write("one")
    second = write("two")
    answer = recall("")
    assert ids(answer) == [second, first]
    assert all(hybrid5.MATCH_KEY not in r["record"]["extensions"] for r in answer["results"])


def test_speaker_named_reads_a_leading_label_only():
    assert hybrid5.speaker_named("What did Caroline paint?", "Caroline: a sunrise")
    assert hybrid5.speaker_named("what did caroline paint", "Caroline: a sunrise")
    assert not hybrid5.speaker_named("What did Melanie paint?", "Caroline: a sunrise")
    assert not hybrid5.speaker_named("What did Caroline paint?", "I met Caroline: she paints")
    assert hybrid5.speaker_named("Did Mary Jane call?", "Mary Jane: I called")
    assert not hybrid5.speaker_named("Did Mary call?", "Mary Jane: I called")
    assert not hybrid5.speaker_named("Caroline?", "no label here")


def test_the_shipped_model_names_the_features_it_weighs():
    assert set(hybrid5.FEATURES) <= set(hybrid5.ALL_FEATURES)
    assert len(hybrid5.COEFFICIENTS) == len(hybrid5.FEATURES)
    assert 0.0 < hybrid5.THRESHOLD < 1.0
    row = tuple(0.0 for _ in hybrid5.ALL_FEATURES)
    assert hybrid5.probability(row) == pytest.approx(
        1 / (1 + 2.718281828459045**-hybrid5.INTERCEPT)
    )
