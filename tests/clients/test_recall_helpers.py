"""The Python client's recall helpers (spoke_memory_client._recall): `above_min_score` keeps the
results of a recall answer at or above a floor and refuses a floor off the 0-1 scale;
`recall_match` reads hybrid/6's `extensions["spoke-recall-match"]`, None from other engines. The
answer comes through MemoryClient.recall over a scripted transport (tests/clients/test_client.py)."""

from __future__ import annotations

import httpx
import pytest
from spoke_memory_client import MemoryClient, above_min_score, recall_match

from tests.clients.test_client import SESSION


def _record(record_id: str, extensions: dict) -> dict:
    return {
        "schema_version": 1,
        "record_id": record_id,
        "space_id": "s1",
        "subject_id": "u1",
        "kind": "note",
        "content": {"text": "x"},
        "extensions": extensions,
    }


MATCH = {"lexical": True, "vector": True, "cosine": 0.61}
ANSWER = {
    "recall": {
        "results": [
            {"record": _record("rec_a", {"spoke-recall-match": MATCH}), "score": 0.71, "rank": 1},
            {"record": _record("rec_b", {}), "score": 0.47, "rank": 2},
            {"record": _record("rec_c", {"other": {"k": 1}}), "score": 0.12, "rank": 3},
        ],
        "total_eligible": 3,
        "truncation": {"truncated": False, "reason": None, "omitted_count": 0},
        "engine_policy_version": "hybrid/6",
    }
}


def answer() -> dict:
    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/v1/connect":
            return httpx.Response(200, json={"session": SESSION})
        return httpx.Response(200, json=ANSWER)

    with MemoryClient("http://provider", "tok", transport=httpx.MockTransport(handler)) as client:
        return client.recall(space_id="s1", subject_id="u1", query={"text": "tea"})


def test_above_min_score_keeps_what_reaches_the_floor():
    got = answer()
    assert [r["record"]["record_id"] for r in above_min_score(got, 0.47)] == ["rec_a", "rec_b"]
    assert [r["record"]["record_id"] for r in above_min_score(got, 0.5)] == ["rec_a"]
    assert above_min_score(got, 1.0) == []
    assert len(above_min_score(got, 0.0)) == 3


@pytest.mark.parametrize("floor", [-0.1, 1.5])
def test_a_floor_off_the_scale_is_refused(floor):
    with pytest.raises(ValueError, match="between 0 and 1"):
        above_min_score(answer(), floor)


def test_recall_match_reads_the_extension():
    results = answer()["recall"]["results"]
    assert recall_match(results[0]) == MATCH
    assert recall_match(results[1]) is None
    assert recall_match(results[2]) is None
