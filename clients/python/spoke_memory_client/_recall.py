"""Hand-written helpers of recall answers: `above_min_score`, `recall_match`."""

from __future__ import annotations

from typing import Any

from spoke_memory_client.types import RecallResponse, RecallResultResultsItem

MATCH_KEY = "spoke-recall-match"


def above_min_score(answer: RecallResponse, min_score: float) -> list[RecallResultResultsItem]:
    """The results of a `memory.recall` answer scoring at least `min_score`, best first.

    With the hybrid/6 engine (the provider's default with its semantic model) a score is
    calibrated: one threshold (the provider's documented one, docs/recall.md#scores) means the
    same for every query, so "nothing relevant is remembered" reads as an empty list. With
    engine/2 scores are relative to the query's best match; the floor then only trims the tail."""
    if not 0.0 <= min_score <= 1.0:
        raise ValueError(f"min_score must be between 0 and 1, not {min_score!r}")
    return [r for r in answer["recall"]["results"] if r["score"] >= min_score]


def recall_match(result: RecallResultResultsItem) -> dict[str, Any] | None:
    """Which signals matched a recall result (lexical, vector, cosine), as hybrid/6 says in its
    record's `extensions["spoke-recall-match"]`; None from an engine that does not say."""
    match = result["record"]["extensions"].get(MATCH_KEY)
    return dict(match) if isinstance(match, dict) else None
