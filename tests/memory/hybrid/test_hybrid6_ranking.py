"""hybrid/6's ranking through the wire, and its oracle: hybrid/4's fused list unchanged (the
engine/2 head and the cosine side over the int8 ONNX form's vectors, fused by min-max normalised
scores, CombSUM, memory.engine.hybrid3). `sides`, `oracle` and `plain` state the policy plainly
(engine/2's pure ranking and the cosine ranking of the stored vectors, fused by fuse3; its pool
scored by memory.engine.hybrid6.fuse6), for this module and tests/memory/hybrid/test_hybrid6.py,
which holds hybrid/6's answers to them. Here: paraphrases found; a record without a vector ranked
by its lexical side alone; total_eligible exact; the filters bound the semantic side; an
unreachable embeddings server answers lexically; the fusion function's stated rule."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from memory.embedding import embed
from memory.engine import hybrid, hybrid3, hybrid6, lexical
from memory.engine.rank import Doc
from memory.models import Record, RecordEmbedding
from memory.selectors.recall import ms

from .conftest import ids, needs_semantic
from .test_hybrid_recall import CORPUS, PARAPHRASE

MORE = [
    "My sister lives in Lisbon and works as a nurse",
    "The dog loves chasing tennis balls in the park",
    "I prefer green tea over coffee in the afternoon",
    "We adopted a second dog, a small terrier",
    "The shelter needs blankets and dog food",
    "I volunteer at the animal shelter on weekends",
    "Running a marathon is my goal for next year",
]
QUERIES = [
    "dog",
    "What pet did I adopt?",
    "Where does my sister live and what is her job?",
    "what do I drink in the afternoon",
    "canine companion",
    "tax deadline",
]


Side = list[tuple[str, float]]


def sides(space, query: str, *, semantic: bool = True) -> tuple[Side, Side]:
    """The two sides stated plainly: engine/2's pure ranking of every live record, and the cosine
    ranking of the stored vectors of their current revisions (none with `semantic=False`: the
    query could not be embedded)."""
    records = list(Record.objects.filter(space=space, deleted_at__isnull=True))
    docs = [Doc(r.record_id, ms(r.created_at), r.text) for r in records]
    lex = [(x.record_id, x.score) for x in lexical.rank(docs, query)]
    if not semantic:
        return lex, []
    import numpy as np

    by_pk = {r.pk: r for r in records}
    rows = RecordEmbedding.objects.filter(record__in=records, model_id=embed.identity().key)
    current = [row for row in rows if row.revision == by_pk[row.record_id].revision]
    if not current:
        return lex, []
    matrix = np.stack([np.frombuffer(row.vector, dtype="<f4") for row in current])
    cos = hybrid.cosine_ranking(
        embed.embed([query])[0],
        [by_pk[row.record_id].record_id for row in current],
        matrix,
        hybrid3.SEMANTIC_TOP_N,
        hybrid3.MIN_COSINE,
    )
    return lex, cos


def oracle(space, query: str) -> Side:
    """hybrid/6's ranking (hybrid/4's fused list) stated plainly: fuse3 of the two sides."""
    return hybrid3.fuse3(*sides(space, query))


def plain(space, query: str, max_records: int, *, semantic: bool = True) -> Side:
    """hybrid/6 stated plainly: the oracle's list, its first POOL (max_records if more) scored by
    fuse6 over the same two sides."""
    lex, cos = sides(space, query, semantic=semantic)
    pool = hybrid3.fuse3(lex, cos)[: max(hybrid6.POOL, max_records)]
    return [(s.record_id, s.score) for s in hybrid6.fuse6(lex, cos, pool)]


@needs_semantic
@pytest.mark.django_db
@pytest.mark.parametrize("query", QUERIES)
def test_hybrid6_ranks_as_hybrid4s_fused_list(hybrid_engine, space, write, recall, query):
    """The order is the oracle's, every fused candidate kept (a budget past the fused list); the
    scores are hybrid/6's own (test_hybrid6.py)."""
    assert embed.identity().name == embed.INT8_NAME  # hybrid/6's own model: the int8 form
    for text in CORPUS + MORE:
        write(text)
    answer = recall(query, budget={"max_records": 100})
    assert answer["engine_policy_version"] == "hybrid/6"
    expected = oracle(space, query)
    assert expected  # every query finds something in this corpus
    assert ids(answer) == [record_id for record_id, _ in expected]
    assert [r["rank"] for r in answer["results"]] == list(range(1, len(expected) + 1))


@needs_semantic
@pytest.mark.django_db
def test_a_whole_subject_recall_reads_no_eligibility_for_its_semantic_side(
    hybrid_engine, write, recall
):
    """A caller who may read every live record of the subject (selection.whole_subject): the
    subject's cached vectors are exactly its live records', so the semantic side's records need
    no eligibility statement (their pks come with the vectors)."""
    for text in CORPUS + MORE:
        write(text)
    recall("dog")  # fills the vector cache
    with CaptureQueriesContext(connection) as seen:
        answer = recall("What pet did I adopt?", budget={"max_records": 20})
    assert len(answer["results"]) > 1
    checks = [
        q["sql"]
        for q in seen.captured_queries
        if q["sql"].startswith('SELECT "memory_record"."record_id"')
        and '"record_id" IN (' in q["sql"]
    ]
    assert checks == []


@needs_semantic
@pytest.mark.django_db
def test_hybrid6_recalls_a_paraphrase_engine2_misses(hybrid_engine, settings, write, recall):
    rid = {text: write(text) for text in CORPUS}
    answer = recall(PARAPHRASE, budget={"max_records": 3})
    assert ids(answer)[0] == rid[CORPUS[0]]
    settings.SPOKE_MEMORY_ENGINE = "engine/2"
    assert recall(PARAPHRASE)["total_eligible"] == 0


@needs_semantic
@pytest.mark.django_db
def test_total_eligible_counts_lexical_matches_and_the_semantic_side_once(
    hybrid_engine, write, recall
):
    for text in CORPUS + MORE:
        write(text)
    one = recall("dog", budget={"max_records": 1})
    assert one["total_eligible"] == len(one["results"]) + one["truncation"]["omitted_count"]
    everything = recall("dog", budget={"max_records": 100})
    assert everything["total_eligible"] == len(everything["results"]) == one["total_eligible"]
    assert len(set(ids(everything))) == len(ids(everything))


@needs_semantic
@pytest.mark.django_db
def test_a_record_without_a_vector_is_ranked_by_its_lexical_side_alone(
    hybrid_engine, space, write, recall
):
    rid = write("The quarterly tax return is due next week")
    write("I adopted a golden retriever puppy last spring")
    RecordEmbedding.objects.filter(record=Record.objects.get(record_id=rid)).delete()
    answer = recall("quarterly tax return")
    assert ids(answer)[0] == rid
    top = answer["results"][0]
    # the only lexical match, off the cosine side: scored from its lexical side alone
    assert top["record"]["extensions"][hybrid6.MATCH_KEY] == {"lexical": True, "vector": False}
    assert [(r["record"]["record_id"], r["score"]) for r in answer["results"]] == plain(
        space, "quarterly tax return", 10
    )[: len(answer["results"])]


@needs_semantic
@pytest.mark.django_db
def test_selection_bounds_the_semantic_side(hybrid_engine, write, recall):
    puppy = write(CORPUS[0], context_id="c2")
    nurse = write(CORPUS[2], context_id="c1")
    answer = recall(PARAPHRASE, selection={"mode": "contexts", "context_ids": ["c1"]})
    assert puppy not in ids(answer)
    assert set(ids(answer)) <= {nurse}


@needs_semantic
@pytest.mark.django_db
def test_an_unreachable_embeddings_server_recalls_lexically(hybrid_engine, space, write, recall):
    rid = write("The quarterly tax return is due next week")
    write(CORPUS[0])
    embed.configure(embed.Config(url="http://127.0.0.1:9/v1", timeout_s=0.5))
    try:
        answer = recall("quarterly tax return")
        assert ids(answer) == [rid]
        top = answer["results"][0]
        assert top["record"]["extensions"][hybrid6.MATCH_KEY] == {"lexical": True, "vector": False}
        # scored as the plain policy scores it with an empty cosine side
        assert top["score"] == plain(space, "quarterly tax return", 10, semantic=False)[0][1]
        assert recall(PARAPHRASE)["results"] == []
    finally:
        embed.configure()


def test_fuse3_is_a_weighted_sum_of_min_max_normalised_scores():
    lexical_side = [("a", 1.0), ("b", 0.6), ("c", 0.2)]
    semantic_side = [("c", 0.9), ("d", 0.5), ("e", 0.3)]
    w = hybrid3.LEXICAL_WEIGHT
    expected = {
        "a": w * 1.0,
        "b": w * 0.5,
        "c": w * 0.0 + (1 - w) * 1.0,
        "d": (1 - w) * (0.2 / 0.6),
        "e": 0.0,
    }
    fused = hybrid3.fuse3(lexical_side, semantic_side)
    assert fused == sorted(
        ((rid, round(v, 6)) for rid, v in expected.items()), key=lambda x: (-x[1], x[0])
    )


def test_fuse3_keeps_a_lead_that_rrf_flattens():
    # "a" leads the lexical side by far; "b" is near the top of both: RRF puts b first, CombSUM a
    lexical_side = [("a", 1.0), ("b", 0.2), ("c", 0.19), ("d", 0.1)]
    semantic_side = [("b", 0.5), ("e", 0.49), ("a", 0.2)]
    assert hybrid.fuse(lexical_side, semantic_side, k=2)[0][0] == "b"
    assert hybrid3.fuse3(lexical_side, semantic_side)[0][0] == "a"


def test_fuse3_cuts_each_side_to_its_head_and_is_order_independent():
    lexical_side = [(f"l{n:03d}", 1 - n / 1000) for n in range(hybrid3.LEXICAL_TOP_N + 5)]
    semantic_side = [(f"s{n:03d}", 0.9 - n / 1000) for n in range(hybrid3.SEMANTIC_TOP_N + 5)]
    fused = hybrid3.fuse3(lexical_side, semantic_side)
    assert len(fused) == hybrid3.LEXICAL_TOP_N + hybrid3.SEMANTIC_TOP_N
    assert fused == hybrid3.fuse3(list(reversed(lexical_side)), list(reversed(semantic_side)))
    # a side of one, or of equal scores, normalises to 1; nothing fuses to nothing
    assert hybrid3.fuse3([("x", 0.4)], []) == [("x", hybrid3.LEXICAL_WEIGHT)]
    assert hybrid3.fuse3([], [("y", 0.3), ("z", 0.3)]) == [
        ("y", round(1 - hybrid3.LEXICAL_WEIGHT, 6)),
        ("z", round(1 - hybrid3.LEXICAL_WEIGHT, 6)),
    ]
    assert hybrid3.fuse3([], []) == []
