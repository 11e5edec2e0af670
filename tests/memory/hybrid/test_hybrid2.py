"""hybrid/2 through the wire: the engine/2 head fused with the cosine side; paraphrases found;
a record without a vector ranked by its lexical rank alone; total_eligible = lexical matches ∪
the semantic side, exact; the fusion function's stated rule."""

import pytest

from memory.engine import hybrid2
from memory.models import Record, RecordEmbedding

from .conftest import ids, needs_semantic
from .test_hybrid_recall import CORPUS, PARAPHRASE

pytestmark = [needs_semantic, pytest.mark.django_db]


def test_hybrid2_recalls_a_paraphrase_engine2_misses(hybrid2_engine, settings, write, recall):
    rid = {text: write(text) for text in CORPUS}
    answer = recall(PARAPHRASE, budget={"max_records": 3})
    assert answer["engine_policy_version"] == "hybrid/2"
    assert ids(answer)[0] == rid[CORPUS[0]]
    settings.SPOKE_MEMORY_ENGINE = "engine/2"
    lexical = recall(PARAPHRASE)
    assert lexical["engine_policy_version"] == "engine/2" and lexical["total_eligible"] == 0


def test_total_eligible_counts_lexical_matches_and_the_semantic_side_once(
    hybrid2_engine, settings, write, recall
):
    for text in CORPUS:
        write(text)
    settings.SPOKE_MEMORY_ENGINE = "engine/2"
    lexical = recall("trip to Japan", budget={"max_records": 1})
    settings.SPOKE_MEMORY_ENGINE = "hybrid/2"
    fused = recall("trip to Japan", budget={"max_records": 1})
    assert lexical["total_eligible"] == 1
    assert fused["total_eligible"] >= lexical["total_eligible"]
    assert fused["total_eligible"] == len(fused["results"]) + fused["truncation"]["omitted_count"]
    everything = recall("trip to Japan", budget={"max_records": 100})
    assert everything["total_eligible"] == len(everything["results"])
    assert len(set(ids(everything))) == len(ids(everything))


def test_a_record_without_a_vector_is_ranked_by_its_lexical_rank(hybrid2_engine, write, recall):
    rid = write("The quarterly tax return is due next week")
    write("I adopted a golden retriever puppy last spring")
    RecordEmbedding.objects.filter(record=Record.objects.get(record_id=rid)).delete()
    answer = recall("quarterly tax return")
    assert ids(answer)[0] == rid
    assert answer["results"][0]["score"] == round(1 / (hybrid2.RRF_K + 1), 6)


def test_fuse2_is_rrf_over_the_lexical_head_and_the_semantic_side():
    lexical = [("a", 1.0), ("b", 0.5), ("c", 0.2)]
    semantic = [("c", 0.9), ("d", 0.8)]
    k = hybrid2.RRF_K
    expected = {
        "a": 1 / (k + 1),
        "b": 1 / (k + 2),
        "c": 1 / (k + 3) + 1 / (k + 1),
        "d": 1 / (k + 2),
    }
    fused = hybrid2.fuse2(lexical, semantic)
    assert dict(fused) == {rid: round(v, 6) for rid, v in expected.items()}
    assert [rid for rid, _ in fused] == sorted(expected, key=lambda r: (-round(expected[r], 6), r))
