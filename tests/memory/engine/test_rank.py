"""Recall ranking and budget policy (memory.engine.rank; engine/1's, retired: its newest-first
order and budget serve every engine): pure, deterministic, stated."""

import random

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from memory.engine import rank
from memory.engine.rank import Doc, budget, query_terms, tokens

DAY = 86_400_000


def test_tokenizer_folds_case_and_splits_on_separators():
    assert tokens("Hello, WORLD! it's snake_case & kebab-case.") == [
        "hello",
        "world",
        "it",
        "s",
        "snake",
        "case",
        "kebab",
        "case",
    ]
    assert tokens("Über ÉLAN Σοφία Москва") == ["über", "élan", "σοφία", "москва"]
    assert tokens("日本語テキスト x—y “q” 1.5") == ["日本語テキスト", "x", "y", "q", "1", "5"]
    assert tokens("a" * 200 + " " + "b" * 201 + " c") == ["a" * 200, "c"]
    assert tokens("") == [] and tokens(" \t\n!?") == []


def test_query_terms_are_distinct_and_sorted():
    assert query_terms("Tea tea COFFEE, tea") == ["coffee", "tea"]


def test_non_matching_docs_are_not_ranked():
    docs = [Doc("rec_a", 0, "tea"), Doc("rec_b", 0, "coffee")]
    assert [r.record_id for r in rank.rank(docs, "tea")] == ["rec_a"]
    assert rank.rank(docs, "water") == []
    assert rank.rank([], "tea") == [] and rank.rank([], "") == []


def test_term_frequency_and_length_normalisation():
    docs = [
        Doc("rec_a", 0, "tea"),
        Doc("rec_b", 0, "tea tea tea"),
        Doc("rec_c", 0, "tea " + "word " * 30),
    ]
    ranked = rank.rank(docs, "tea")
    assert [r.record_id for r in ranked] == ["rec_b", "rec_a", "rec_c"]
    assert ranked[0].score == 1.0  # the best relevance and the newest


def test_rarer_terms_weigh_more():
    docs = [
        Doc("rec_a", 0, "common rare"),
        Doc("rec_b", 0, "common common"),
        Doc("rec_c", 0, "common"),
    ]
    assert rank.rank(docs, "common rare")[0].record_id == "rec_a"


def test_recency_is_relative_to_the_newest_match_not_the_clock():
    docs = [Doc("rec_old", 0, "tea"), Doc("rec_new", 30 * DAY, "tea")]
    ranked = rank.rank(docs, "tea")
    assert [(r.record_id, r.score) for r in ranked] == [("rec_new", 1.0), ("rec_old", 0.9)]
    shifted = [Doc(d.record_id, d.created_ms + 1000 * DAY, d.text) for d in docs]
    assert rank.rank(shifted, "tea") == ranked


def test_ties_go_by_record_id_whatever_the_input_order():
    docs = [Doc(f"rec_{c}", 5, "same text") for c in "dbca"]
    expected = ["rec_a", "rec_b", "rec_c", "rec_d"]
    for _ in range(5):
        random.shuffle(docs)
        assert [r.record_id for r in rank.rank(docs, "text")] == expected


def test_scores_are_rounded_to_six_decimals():
    docs = [Doc(f"rec_{i}", i * 1000, f"tea {'x ' * i}") for i in range(20)]
    for r in rank.rank(docs, "tea x"):
        assert r.score == round(r.score, 6) and 0 < r.score <= 1


def test_empty_query_is_newest_first_with_recency_scores():
    docs = [Doc("rec_b", DAY, ""), Doc("rec_a", DAY, ""), Doc("rec_c", 31 * DAY, "")]
    ranked = rank.rank(docs, " ... ")
    assert [(r.record_id, r.score) for r in ranked] == [
        ("rec_c", 1.0),
        ("rec_a", 0.5),
        ("rec_b", 0.5),
    ]


def test_ranking_is_a_pure_function():
    docs = [
        Doc(
            f"rec_{i:03d}",
            (i * 7919) % 1000 * DAY,
            " ".join(f"w{(i * j) % 13}" for j in range(i % 9 + 1)),
        )
        for i in range(200)
    ]
    first = rank.rank(docs, "w1 w5 w12")
    assert first == rank.rank(list(reversed(docs)), "w12 w5 w1 W1")


@pytest.mark.parametrize(
    "sizes, total, max_records, max_bytes, expected",
    [
        ([10, 10, 10], 3, 10, 100, (3, False, None, 0)),
        ([10, 10, 10], 3, 2, 100, (2, True, "max_records", 1)),
        ([10, 10], 5, 2, 100, (2, True, "max_records", 3)),
        ([10, 50, 10], 3, 10, 30, (1, True, "max_bytes", 2)),
        ([10, 20, 10], 3, 10, 30, (2, True, "max_bytes", 1)),
        ([40, 1], 2, 10, 30, (0, True, "max_bytes", 2)),
        ([10, 10, 10], 3, 3, 30, (3, False, None, 0)),
        ([10, 10, 10], 3, 2, 15, (1, True, "max_bytes", 2)),
        ([], 0, 10, 100, (0, False, None, 0)),
    ],
)
def test_budget_is_the_longest_prefix(sizes, total, max_records, max_bytes, expected):
    cut = budget(sizes, total, max_records, max_bytes)
    assert (cut.taken, cut.truncated, cut.reason, cut.omitted_count) == expected


def test_the_engine_imports_no_django():
    import ast
    import inspect

    tree = ast.parse(inspect.getsource(rank))
    modules = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)} | {
        a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names
    }
    assert not any(m and m.startswith(("django", "memory")) for m in modules)


def _reference_rank(docs, query):
    """engine/1 relevance exactly as its docstring states it, written the plain way (tokens()
    per document, a Counter, terms summed in sorted order): the oracle for the fast loop."""
    import math
    from collections import Counter

    from memory.engine.rank import (
        K1,
        RECENCY_WEIGHT,
        RELEVANCE_WEIGHT,
        SCORE_DECIMALS,
        B,
        Ranked,
        _recency,
        query_terms,
        tokens,
    )

    wanted = set(query_terms(query))
    matched = []
    for d in docs:
        toks = tokens(d.text)
        counts = Counter(t for t in toks if t in wanted)
        if counts:
            matched.append((d, counts, len(toks)))
    if not matched:
        return []
    n = len(matched)
    avgdl = sum(length for _, _, length in matched) / n
    df = Counter(t for _, counts, _ in matched for t in counts)
    idf = {t: math.log(1 + (n - df[t] + 0.5) / (df[t] + 0.5)) for t in df}
    newest = max(d.created_ms for d, _, _ in matched)
    rels = [
        (
            d,
            sum(
                idf[t] * c * (K1 + 1) / (c + K1 * (1 - B + B * length / avgdl))
                for t, c in sorted(counts.items())
            ),
        )
        for d, counts, length in matched
    ]
    best = max(r for _, r in rels)
    scored = [
        Ranked(
            d.record_id,
            round(
                RELEVANCE_WEIGHT * r / best + RECENCY_WEIGHT * _recency(d.created_ms, newest),
                SCORE_DECIMALS,
            ),
        )
        for d, r in rels
    ]
    return sorted(scored, key=lambda r: (-r.score, r.record_id))


_WORDS = [
    "tea",
    "Tea",
    "TEA",
    "coffee",
    "Ádám",
    "ádám",
    "x" * 201,
    "x" * 200,
    "porto",
    "ß",
    "Σίσυφος",
]
_SEPS = [" ", "  ", "-", "_", "'", ".", "\u2014", "\u3001", "\t", "!?", ""]


@settings(max_examples=400, deadline=None)
@given(
    texts=st.lists(
        st.lists(st.tuples(st.sampled_from(_WORDS), st.sampled_from(_SEPS)), max_size=12),
        max_size=25,
    ),
    query=st.lists(st.sampled_from(_WORDS + ["nothing"]), min_size=1, max_size=4),
    lead=st.sampled_from(["", " ", "--"]),
)
def test_fast_ranking_equals_the_plain_statement_of_the_policy(texts, query, lead):
    docs = [
        Doc(f"rec_{i:03d}", i * 3_600_000, lead + "".join(w + s for w, s in parts))
        for i, parts in enumerate(texts)
    ]
    q = " ".join(query)
    assume(query_terms(q))  # a query without a token is the newest-first rule, not relevance
    assert rank.rank(docs, q) == _reference_rank(docs, q)
