"""hybrid/6 through the wire on a small fixed corpus: paraphrases found that engine/2 misses,
embeddings as derived copies (per revision, erased on delete), filters and grants still bound
the semantic side, same state + request → same answer, and the engine setting published."""

import pytest

from memory.models import Record, RecordEmbedding

from .conftest import ids, needs_semantic

pytestmark = [needs_semantic, pytest.mark.django_db]

CORPUS = [
    "I adopted a golden retriever puppy last spring",
    "My favourite food is sushi from the place downtown",
    "I work night shifts as a nurse at the city hospital",
    "We are planning a trip to Japan in October",
    "The quarterly tax return is due next week",
]
PARAPHRASE = "canine companion"  # no token in common with any record


def test_hybrid_recalls_a_paraphrase_the_lexical_engine_misses(
    hybrid_engine, settings, write, recall
):
    rid = {text: write(text) for text in CORPUS}
    puppy = rid[CORPUS[0]]
    hybrid = recall(PARAPHRASE, budget={"max_records": 3})
    assert hybrid["engine_policy_version"] == "hybrid/6"
    assert ids(hybrid)[0] == puppy
    assert [r["rank"] for r in hybrid["results"]] == list(range(1, len(hybrid["results"]) + 1))
    settings.SPOKE_MEMORY_ENGINE = "engine/2"
    lexical = recall(PARAPHRASE)
    assert lexical["engine_policy_version"] == "engine/2"
    assert puppy not in ids(lexical)
    assert lexical["total_eligible"] == 0


def test_hybrid_keeps_lexical_matches_first_when_both_agree(hybrid_engine, write, recall):
    rid = {text: write(text) for text in CORPUS}
    assert ids(recall("When is the trip to Japan?"))[0] == rid[CORPUS[3]]


def test_same_state_and_request_give_the_same_answer(hybrid_engine, write, recall):
    for text in CORPUS:
        write(text)
    # a pet (by meaning) and work (by its word): more than one record eligible
    first = recall("what pet do I have at work", budget={"max_records": 1})
    assert recall("what pet do I have at work", budget={"max_records": 1}) == first
    assert first["truncation"]["truncated"] is True, (
        first["total_eligible"],
        [r["score"] for r in first["results"]],
    )
    assert first["total_eligible"] == len(first["results"]) + first["truncation"]["omitted_count"]


def test_an_embedding_is_written_per_revision_and_erased_on_delete(
    hybrid_engine, api, admin, space, session, write
):
    record_id = write(CORPUS[0])
    record = Record.objects.get(space=space, record_id=record_id)
    assert list(
        RecordEmbedding.objects.filter(record=record).values_list("revision", flat=True)
    ) == [1]
    answer = api(
        admin,
        "memory.records.update",
        {
            "space_id": space.space_id,
            "record_id": record_id,
            "expected_revision": 1,
            "content": {"text": "My cat sleeps on the windowsill"},
        },
        session=session,
    )
    assert answer.status == 200, answer.body
    assert sorted(
        RecordEmbedding.objects.filter(record=record).values_list("revision", flat=True)
    ) == [1, 2]
    answer = api(
        admin,
        "memory.records.delete",
        {
            "space_id": space.space_id,
            "record_id": record_id,
            "expected_revision": 2,
        },
        session=session,
    )
    assert answer.status == 200, answer.body
    assert not RecordEmbedding.objects.filter(record=record).exists()


def test_recall_scores_the_current_revision(
    hybrid_engine, api, admin, space, session, write, recall
):
    updated = write(CORPUS[0])
    same_old_text = write(CORPUS[0])  # a later id: it loses a tie against `updated`
    answer = api(
        admin,
        "memory.records.update",
        {
            "space_id": space.space_id,
            "record_id": updated,
            "expected_revision": 1,
            "content": {"text": "Our kitten chases the laser pointer"},
        },
        session=session,
    )
    assert answer.status == 200, answer.body
    # Scored on revision 1's vector, `updated` would tie with `same_old_text` and win on id.
    assert ids(recall(PARAPHRASE))[0] == same_old_text
    assert ids(recall("feline"))[0] == updated


def test_a_deleted_record_is_not_recalled_by_meaning(
    hybrid_engine, api, admin, space, session, write, recall
):
    record_id = write(CORPUS[0])
    write(CORPUS[2])
    api(
        admin,
        "memory.records.delete",
        {
            "space_id": space.space_id,
            "record_id": record_id,
            "expected_revision": 1,
        },
        session=session,
    )
    assert record_id not in ids(recall(PARAPHRASE))


def test_selection_and_grants_bound_the_semantic_side(
    hybrid_engine, api, grant_to, space, write, recall
):
    puppy = write(CORPUS[0], context_id="c2")
    nurse = write(CORPUS[2], context_id="c1")
    assert puppy not in ids(
        recall(PARAPHRASE, selection={"mode": "contexts", "context_ids": ["c1"]})
    )
    narrow, _ = grant_to(capabilities=["recall"], context_ids=["c1"])
    answer = api(
        narrow,
        "memory.recall",
        {"space_id": space.space_id, "subject_id": "u1", "query": {"text": PARAPHRASE}},
    )
    assert answer.status == 200, answer.body
    assert puppy not in ids(answer.body["recall"])
    assert set(ids(answer.body["recall"])) <= {nurse}


def test_a_record_without_embedding_is_still_recalled_lexically_then_backfilled(
    settings, hybrid_engine, space, write, recall
):
    from memory.models import Subject
    from memory.services import derived, hybrid_store

    derived.WRITERS.remove(hybrid_store.write_embeddings)  # as if written under engine/2
    try:
        puppy = write(CORPUS[0])
    finally:
        derived.WRITERS.insert(0, hybrid_store.write_embeddings)  # before the fixture's drain
    write(CORPUS[2])
    assert ids(recall("golden retriever"))[0] == puppy
    assert puppy not in ids(recall(PARAPHRASE))
    assert hybrid_store.backfill(Subject.objects.get(space=space, subject_id="u1")) == 1
    write(CORPUS[4])  # moves the subject's revision, as any later write does
    assert ids(recall(PARAPHRASE))[0] == puppy


def test_the_engine_setting_is_the_published_engine_policy_version(settings, api, admin):
    settings.SPOKE_MEMORY_ENGINE = "engine/2"
    before = api(admin, "memory.describe", {}).body["provider"]["engine_policy_version"]
    settings.SPOKE_MEMORY_ENGINE = "hybrid/6"
    after = api(admin, "memory.describe", {}).body["provider"]["engine_policy_version"]
    assert (before, after) == ("engine/2", "hybrid/6")
