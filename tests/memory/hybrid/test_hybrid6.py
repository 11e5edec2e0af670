"""hybrid/6 through the wire (docs/recall.md#scores): hybrid/4's order (its oracle and ranking
tests: test_hybrid6_ranking.py), each of the first memory.engine.hybrid6.POOL results (max_records
if more) scored by the shipped logistic model and made non-increasing down the list. Its answers
equal the plain policy (the oracle's list, its pool, memory.engine.hybrid6.fuse6) ids and scores;
the score is on one absolute scale (a query nothing stored resembles scores its top below the
documented threshold, a query a record answers above it); each result's record names the signals
that matched it in `extensions["spoke-recall-match"]`, in the answer only; an empty query is
engine/2's newest first; a model naming a feature the policy does not compute is refused."""

import json
from importlib import resources
from types import SimpleNamespace

import pytest

from memory.engine import hybrid3, hybrid6
from memory.engine.hybrid import SCORE_DIGITS

from .conftest import ids, needs_semantic
from .test_hybrid6_ranking import MORE, QUERIES, plain, sides
from .test_hybrid_recall import CORPUS


def scored(answer: dict) -> list[tuple[str, float]]:
    return [(r["record"]["record_id"], r["score"]) for r in answer["results"]]


def is_non_increasing(scores: list[float]) -> bool:
    return all(a >= b for a, b in zip(scores, scores[1:], strict=False))


@pytest.mark.parametrize("query", QUERIES)
@pytest.mark.parametrize(
    "selection",
    [
        None,  # the whole subject: no eligibility statement on either side
        {"mode": "contexts", "context_ids": ["c1"]},  # every record, through the eligibility checks
    ],
)
@needs_semantic
@pytest.mark.django_db
def test_hybrid6_answers_as_the_plain_policy(hybrid_engine, space, write, recall, query, selection):
    for text in CORPUS + MORE:
        write(text)  # all in context c1
    extra = {} if selection is None else {"selection": selection}
    answer = recall(query, budget={"max_records": 20}, **extra)
    assert answer["engine_policy_version"] == "hybrid/6"
    got = scored(answer)
    assert got
    assert got == plain(space, query, 20)[:20]
    assert [r["rank"] for r in answer["results"]] == list(range(1, len(got) + 1))
    assert all(0.0 < score < 1.0 for _, score in got)
    assert is_non_increasing([score for _, score in got])
    lexical, semantic = sides(space, query)
    lex, cos = dict(lexical), dict(semantic)
    for result in answer["results"]:
        rid = result["record"]["record_id"]
        match = result["record"]["extensions"][hybrid6.MATCH_KEY]
        expected = {"lexical": rid in lex, "vector": rid in cos}
        if rid in cos:
            expected["cosine"] = cos[rid]
        assert match == expected


@needs_semantic
@pytest.mark.django_db
def test_a_budget_past_the_pool_scores_every_result(hybrid_engine, space, write, recall):
    """max_records above POOL: the pool is max_records deep, every result scored by the model
    (none left with hybrid/4's fused score), still non-increasing; a smaller budget answers the
    same head and counts every eligible record."""
    n = hybrid6.POOL + 10
    for i in range(n):
        write(f"note {i}: green tea in the garden after the rain")
    wide = recall("green tea garden", budget={"max_records": n})
    assert len(wide["results"]) == wide["total_eligible"] == n
    assert scored(wide) == plain(space, "green tea garden", n)
    assert all(hybrid6.MATCH_KEY in r["record"]["extensions"] for r in wide["results"])
    assert is_non_increasing([score for _, score in scored(wide)])
    narrow = recall("green tea garden", budget={"max_records": 10})
    assert scored(narrow) == scored(wide)[:10]
    assert narrow["total_eligible"] == n
    assert narrow["truncation"]["omitted_count"] == n - 10


@needs_semantic
@pytest.mark.django_db
def test_the_score_is_absolute_below_the_threshold_when_nothing_answers(
    hybrid_engine, space, write, recall
):
    """A query nothing stored answers still has a top result (a weak neighbour on the cosine
    side, which hybrid/4's min-max score put at its side's best); hybrid/6 scores it below the
    documented threshold, and the top of a query a record answers above it."""
    write("I am learning Portuguese this year")
    write("The quarterly tax return is due next week")
    unrelated = recall("What is the weather in Lisbon?")
    assert unrelated["results"], "the cosine side keeps a weak neighbour"
    neighbour = unrelated["results"][0]
    assert neighbour["record"]["extensions"][hybrid6.MATCH_KEY]["vector"] is True
    assert hybrid3.fuse3(*sides(space, "What is the weather in Lisbon?"))[0][1] == pytest.approx(
        1 - hybrid3.LEXICAL_WEIGHT
    )  # hybrid/4's score: the best of its only side
    assert neighbour["score"] < hybrid6.THRESHOLD
    pet = write("I adopted a dog; my pets are a dog and two cats")
    answered = recall("Do I have a dog?")
    assert ids(answered)[0] == pet
    assert answered["results"][0]["score"] >= hybrid6.THRESHOLD


@needs_semantic
@pytest.mark.django_db
def test_the_match_is_in_the_answer_only(hybrid_engine, api, admin, space, session, write, recall):
    rid = write("I adopted a golden retriever puppy last spring")
    answer = recall("puppy")
    assert ids(answer) == [rid]
    match = answer["results"][0]["record"]["extensions"][hybrid6.MATCH_KEY]
    assert match["lexical"] is True and match["vector"] is True
    got = api(
        admin,
        "memory.records.get",
        {"space_id": space.space_id, "record_id": rid},
        session=session,
    )
    assert got.status == 200, got.body
    assert hybrid6.MATCH_KEY not in got.body["record"]["extensions"]
    assert {**got.body["record"]["extensions"], hybrid6.MATCH_KEY: match} == answer["results"][0][
        "record"
    ]["extensions"]


@needs_semantic
@pytest.mark.django_db
@pytest.mark.parametrize("query", ["", "the of and"])  # no text; stop words only: no term
def test_an_empty_query_is_engine2s_newest_first_without_a_match(
    hybrid_engine, settings, write, recall, query
):
    first = write(CORPUS[0])
    second = write(CORPUS[1])
    answer = recall(query)
    assert ids(answer) == [second, first]
    assert all(hybrid6.MATCH_KEY not in r["record"]["extensions"] for r in answer["results"])
    settings.SPOKE_MEMORY_ENGINE = "engine/2"
    lexical = recall(query)
    assert lexical["results"] == answer["results"]
    assert lexical["total_eligible"] == answer["total_eligible"]


# The policy's pure functions.


def test_non_increasing_is_the_running_minimum():
    assert hybrid6.non_increasing([]) == []
    assert hybrid6.non_increasing([0.4]) == [0.4]
    assert hybrid6.non_increasing([0.9, 0.95, 0.5, 0.7, 0.1, 0.1]) == [0.9, 0.9, 0.5, 0.5, 0.1, 0.1]
    assert hybrid6.non_increasing([0.1, 0.2, 0.3]) == [0.1, 0.1, 0.1]


LEXICAL_SIDE = [("a", 1.0), ("b", 0.62), ("c", 0.3)]
SEMANTIC_SIDE = [("c", 0.71), ("d", 0.55), ("a", 0.21)]


def test_fuse6_keeps_the_pools_order_and_names_what_matched():
    pool = hybrid3.fuse3(LEXICAL_SIDE, SEMANTIC_SIDE)
    out = hybrid6.fuse6(LEXICAL_SIDE, SEMANTIC_SIDE, pool)
    assert [s.record_id for s in out] == [record_id for record_id, _ in pool]
    assert {s.record_id: s.match for s in out} == {
        "a": {"lexical": True, "vector": True, "cosine": 0.21},
        "b": {"lexical": True, "vector": False},
        "c": {"lexical": True, "vector": True, "cosine": 0.71},
        "d": {"lexical": False, "vector": True, "cosine": 0.55},
    }
    rows = hybrid6.features(LEXICAL_SIDE, SEMANTIC_SIDE, pool)
    assert [s.score for s in out] == hybrid6.non_increasing(
        [round(hybrid6.probability(row), SCORE_DIGITS) for row in rows]
    )


def test_fuse6_never_reorders_and_caps_a_later_higher_probability():
    # "d" first though the model would score "a" (both sides' best) higher: the order is the
    # pool's, and a's score is capped at d's
    pool = [("d", 0.2), ("a", 0.9)]
    out = hybrid6.fuse6(LEXICAL_SIDE, SEMANTIC_SIDE, pool)
    d, a = (hybrid6.probability(row) for row in hybrid6.features(LEXICAL_SIDE, SEMANTIC_SIDE, pool))
    assert a > d
    assert [s.record_id for s in out] == ["d", "a"]
    assert out[0].score == out[1].score == round(d, SCORE_DIGITS)


def test_fuse6_scores_every_candidate_of_a_pool_past_POOL():
    n = hybrid6.POOL + 15
    lexical_side = [(f"r{i:03d}", round(1 - i / 100, 6)) for i in range(n)]
    semantic_side = [(f"r{i:03d}", round(0.8 - i / 200, 6)) for i in range(0, n, 2)]
    pool = hybrid3.fuse3(lexical_side, semantic_side)
    assert len(pool) == n
    out = hybrid6.fuse6(lexical_side, semantic_side, pool)
    assert [s.record_id for s in out] == [record_id for record_id, _ in pool]
    assert all(0.0 < s.score < 1.0 for s in out)
    assert is_non_increasing([s.score for s in out])
    cos = dict(semantic_side)
    for s in out:
        on_cosine = {"cosine": cos[s.record_id]} if s.record_id in cos else {}
        assert s.match == {"lexical": True, "vector": s.record_id in cos, **on_cosine}


def test_a_record_past_the_lexical_head_fuse3_reads_is_not_on_the_lexical_side():
    # The served head is max(max_records, LEXICAL_TOP_N) deep; fuse3 reads its first
    # LEXICAL_TOP_N, and so do the features and the match (as when the model was fitted).
    n = hybrid6.LEXICAL_TOP_N + 20
    lexical_side = [(f"r{i:03d}", round(1 - i / 1000, 6)) for i in range(n)]
    deep = f"r{n - 1:03d}"  # lexical rank n: past the head
    semantic_side = [(deep, 0.9), ("r000", 0.3)]
    pool = hybrid3.fuse3(lexical_side, semantic_side)
    at = [record_id for record_id, _ in pool].index(deep)
    out = hybrid6.fuse6(lexical_side, semantic_side, pool)
    assert out[at].match == {"lexical": False, "vector": True, "cosine": 0.9}
    row = hybrid6.features(lexical_side, semantic_side, pool)[at]
    named = dict(zip(hybrid6.FEATURES_AVAILABLE, row, strict=True))
    assert named["lexical"] == named["lexical_match"] == 0.0
    assert out[0].match["lexical"] is True  # r000, the head's best


def test_fuse3_hands_hybrid6_the_heads_it_read():
    """The served engine scores from the heads fuse3 read (hybrid3.fuse3_heads), not sorting and
    cutting the sides again: the same fused list, the same scores and matches as fuse6."""
    n = hybrid6.LEXICAL_TOP_N + 5
    lexical_side = [(f"r{i:03d}", round(1 - i / 1000, 6)) for i in range(n)] + [("r001", 0.5)]
    semantic_side = [(f"r{i:03d}", round(0.9 - i / 500, 6)) for i in range(n - 1, 0, -3)]
    fused, read = hybrid3.fuse3_heads(lexical_side, semantic_side)
    assert fused == hybrid3.fuse3(lexical_side, semantic_side)
    assert list(read.lexical) == [f"r{i:03d}" for i in range(hybrid6.LEXICAL_TOP_N)]
    assert read.lexical["r001"] == 0.999  # a duplicate keeps its best
    assert read.semantic == dict(semantic_side)
    pool = fused[: hybrid6.POOL]
    assert hybrid6.fuse6_heads(read, pool) == hybrid6.fuse6(lexical_side, semantic_side, pool)
    assert [s.match for s in hybrid6.fuse6_heads(read, pool)] == [
        s.match for s in hybrid6.fuse6(lexical_side, semantic_side, pool)
    ]


def test_the_features_are_the_two_sides_scores():
    pool = hybrid3.fuse3(LEXICAL_SIDE, SEMANTIC_SIDE)
    rows = dict(
        zip([r for r, _ in pool], hybrid6.features(LEXICAL_SIDE, SEMANTIC_SIDE, pool), strict=True)
    )
    named = {
        rid: dict(zip(hybrid6.FEATURES_AVAILABLE, row, strict=True)) for rid, row in rows.items()
    }
    fused = dict(pool)
    assert named["d"] == {
        "cosine": 0.55,
        "vector": 1.0,
        "lexical": 0.0,
        "lexical_match": 0.0,
        "fused": fused["d"],
        "fused_rank": 1.0 / ([r for r, _ in pool].index("d") + 1),
        "top_cosine": 0.71,
        "cosine_gap": pytest.approx(0.71 - 0.55),
    }
    assert named["b"]["vector"] == 0.0 and named["b"]["cosine"] == 0.0
    assert named["b"]["cosine_gap"] == 0.71  # off the cosine side: the whole top
    assert named["b"]["lexical"] == 0.62 and named["b"]["lexical_match"] == 1.0


def test_the_shipped_model_names_the_features_it_weighs():
    assert set(hybrid6.FEATURES) <= set(hybrid6.FEATURES_AVAILABLE)
    assert len(hybrid6.COEFFICIENTS) == len(hybrid6.FEATURES)
    assert 0.0 < hybrid6.THRESHOLD < 1.0
    row = tuple(0.0 for _ in hybrid6.FEATURES_AVAILABLE)
    assert hybrid6.probability(row) == pytest.approx(
        1 / (1 + 2.718281828459045**-hybrid6.INTERCEPT)
    )


def _model_from(tmp_path, monkeypatch, model: dict) -> dict:
    """hybrid6._model() reading `model` as its hybrid6.json (the package's files swapped for a
    folder holding it)."""
    (tmp_path / "hybrid6.json").write_text(json.dumps(model))
    monkeypatch.setattr(hybrid6, "resources", SimpleNamespace(files=lambda package: tmp_path))
    return hybrid6._model()


def test_a_model_naming_a_feature_the_policy_does_not_compute_is_refused(tmp_path, monkeypatch):
    shipped = json.loads(resources.files("memory.engine").joinpath("hybrid6.json").read_text())
    assert _model_from(tmp_path, monkeypatch, shipped) == shipped  # the loader reads this file
    bad = {**shipped, "features": [*shipped["features"][:-1], "speaker_named"]}
    with pytest.raises(ValueError, match="features memory.engine.hybrid6 does not compute"):
        _model_from(tmp_path, monkeypatch, bad)


def test_the_shipped_model_is_in_the_package_data():
    """hybrid6.json is read at import (MODEL = _model()): an installed wheel without it cannot
    import the engine, so pyproject's package data must name it."""
    import tomllib
    from pathlib import Path

    pyproject = tomllib.loads((Path(__file__).parents[3] / "pyproject.toml").read_text())
    shipped = pyproject["tool"]["setuptools"]["package-data"]["memory.engine"]
    assert "hybrid6.json" in shipped
