"""The history checker of `python -m bench history` (issue 45, item 6) judges a history it is
given: a clean one passes, and each kind of anomaly it exists to find is reported, a planted lost
update first. (The run under faults is `.ci/run`'s history step and a bench: docs/reliability.md.)"""

from __future__ import annotations

from bench.history import COVERS, Event, Final, check


def create(client: str, key: str, record_id: str, text: str, receipt: str) -> Event:
    return Event(client, "memory.records.create", key, record_id=record_id, text=text, status=200,
                 receipt_id=receipt)  # fmt: skip


def update(client, key, record_id, expected, text, receipt, status=200) -> Event:
    return Event(client, "memory.records.update", key, record_id=record_id,
                 expected_revision=expected, text=text, status=status, receipt_id=receipt)  # fmt: skip


def read(client, record_id, revision, text, status=200) -> Event:
    return Event(client, "memory.records.get", None, record_id=record_id, status=status,
                 read_revision=revision, read_text=text)  # fmt: skip


def clean_history() -> tuple[list[Event], dict[str, Final]]:
    events = [
        create("c0", "c0-1", "rec_a", "first", "rcpt_1"),
        create("c0", "c0-1", "rec_a", "first", "rcpt_1"),  # a replay: the same receipt
        read("c1", "rec_a", 1, "first"),
        update("c1", "c1-1", "rec_a", 1, "second", "rcpt_2"),
        update("c0", "c0-2", "rec_a", 1, "lost race", None, status=409),  # CAS refused
        Event(
            "c0",
            "memory.records.update",
            "c0-3",
            record_id="rec_a",
            expected_revision=2,
            text="in doubt",
            status=None,
        ),  # fmt: skip
        read("c0", "rec_a", 2, "second"),
        read("outsider", "rec_a", None, None, status=404),
    ]
    return events, {"rec_a": Final(revision=2, text="second", deleted=False)}


def test_a_clean_history_passes():
    events, final = clean_history()
    verdict = check(events, final)
    assert verdict.clean, verdict.problems
    assert verdict.counts["acknowledged"] == 5 and verdict.counts["unanswered"] == 1


def test_a_planted_lost_update_fails():
    events, final = clean_history()
    # a second writer's update from the same revision was ALSO acknowledged: one overwrote the
    # other without either seeing it
    events.append(update("c2", "c2-1", "rec_a", 1, "overwritten", "rcpt_3"))
    verdict = check(events, final)
    assert any("lost update" in p for p in verdict.problems), verdict.problems


def test_a_lost_acknowledged_create_fails():
    events, final = clean_history()
    events.append(create("c3", "c3-1", "rec_b", "gone", "rcpt_4"))
    verdict = check(events, final)
    assert verdict.problems == ["rec_b: acknowledged create is missing"]


def test_a_replay_with_another_receipt_fails():
    events, final = clean_history()
    events.append(create("c0", "c0-1", "rec_a", "first", "rcpt_other"))
    verdict = check(events, final)
    assert any("2 different receipts" in p for p in verdict.problems), verdict.problems


def test_a_read_of_content_no_write_sent_fails_and_an_outsider_read_fails():
    events, final = clean_history()
    events.append(read("c1", "rec_a", 2, "never written"))
    events.append(read("outsider", "rec_a", 2, "second"))
    problems = check(events, final).problems
    assert "rec_a: read revision 2 with content no write sent" in problems
    assert "rec_a: read by outsider, whose grants do not cover it" in problems


def test_final_content_not_the_last_acknowledged_writers_fails():
    events, _ = clean_history()
    problems = check(events, {"rec_a": Final(revision=2, text="first", deleted=False)}).problems
    assert problems == ["rec_a: final content is not the last acknowledged update's"]


def test_an_acknowledged_delete_without_a_tombstone_fails():
    events, final = clean_history()
    events.append(
        Event(
            "c1",
            "memory.records.delete",
            "c1-9",
            record_id="rec_a",
            expected_revision=2,
            status=200,
            receipt_id="rcpt_9",
        )  # fmt: skip
    )
    problems = check(events, final).problems
    assert problems == ["rec_a: acknowledged delete left no tombstone"]


# ---- captures, reviews and recalls ---------------------------------------------------------------


def capture(client, key, candidate_id, text, receipt) -> Event:
    return Event(client, "memory.capture", key, text=text, status=200, receipt_id=receipt,
                 candidate_id=candidate_id)  # fmt: skip


def review(client, key, candidate_id, action, receipt, record_id=None, status=200) -> Event:
    return Event(client, "memory.candidates.review", key, record_id=record_id, status=status,
                 receipt_id=receipt, candidate_id=candidate_id, action=action)  # fmt: skip


def recall(client, results, t0=0.0) -> Event:
    return Event(client, "memory.recall", None, status=200, results=results, t0=t0, t1=t0)


def review_history() -> tuple[list[Event], dict[str, Final], dict[str, str]]:
    events = [
        capture("c0", "c0-1", "cand_p", "promote me", "rcpt_c1"),
        capture("c0", "c0-2", "cand_d", "drop me", "rcpt_c2"),
        capture("c1", "c1-1", "cand_s", "secret note", "rcpt_c3"),
        review("c1", "c1-2", "cand_p", "promote", "rcpt_r1", record_id="rec_p"),
        review("c1", "c1-2", "cand_p", "promote", "rcpt_r1", record_id="rec_p"),  # a replay
        review("c2", "c2-1", "cand_p", "drop", None, status=409),  # lost the race
        review("c0", "c0-3", "cand_d", "drop", "rcpt_r2"),
        review("c0", "c0-4", "cand_s", "promote", "rcpt_r3", record_id="rec_s"),
        Event(
            "c2",
            "memory.records.delete",
            "c2-2",
            record_id="rec_p",
            expected_revision=1,
            status=200,
            receipt_id="rcpt_x",
            t0=5.0,
            t1=6.0,
        ),  # fmt: skip
        recall("c0", [("rec_p", 1, "promote me"), ("rec_s", 1, "secret note")], t0=4.0),
        recall("reader", [("rec_p", 1, "promote me")], t0=5.5),  # sent before the delete's answer
        recall("reader", [], t0=7.0),
        recall("outsider", []),
    ]
    final = {
        "rec_p": Final(1, None, True, placement="shared", candidate_id="cand_p"),
        "rec_s": Final(
            1, "secret note", False, placement="context:c-secret", candidate_id="cand_s"
        ),
    }
    return events, final, {"cand_p": "promoted", "cand_d": "dropped", "cand_s": "promoted"}


def test_a_clean_history_of_captures_reviews_and_recalls_passes():
    events, final, candidates = review_history()
    verdict = check(events, final, candidates, COVERS)
    assert verdict.clean, verdict.problems
    assert (verdict.counts["promoted"], verdict.counts["dropped"]) == (2, 1)


def test_a_promoted_candidate_made_twice_or_not_at_all_fails():
    events, final, candidates = review_history()
    final["rec_p2"] = Final(1, "promote me", False, candidate_id="cand_p")
    problems = check(events, final, candidates, COVERS).problems
    assert "cand_p: became 2 records" in problems
    events, final, candidates = review_history()
    del final["rec_s"]
    problems = check(events, final, candidates, COVERS).problems
    assert "cand_s: promoted, but the record its receipt names is not its" in problems
    assert "cand_s: promoted, but no record was made" in problems


def test_a_dropped_candidate_that_became_a_record_fails():
    events, final, candidates = review_history()
    final["rec_d"] = Final(1, "drop me", False, candidate_id="cand_d")
    problems = check(events, final, candidates, COVERS).problems
    assert "cand_d: dropped, but became 1 record(s)" in problems
    assert "cand_d: dropped, but became a record" in problems


def test_two_acknowledged_reviews_of_one_candidate_fail():
    events, final, candidates = review_history()
    events.append(review("c2", "c2-9", "cand_d", "drop", "rcpt_r9"))
    problems = check(events, final, candidates, COVERS).problems
    assert problems == ["cand_d: 2 acknowledged reviews"]


def test_an_acknowledged_capture_with_no_candidate_fails():
    events, final, candidates = review_history()
    events.append(capture("c3", "c3-1", "cand_gone", "lost", "rcpt_c9"))
    problems = check(events, final, candidates, COVERS).problems
    assert problems == ["cand_gone: acknowledged capture is missing"]


def test_a_recall_of_an_uncovered_record_fails():
    events, final, candidates = review_history()
    events.append(recall("reader", [("rec_s", 1, "secret note")]))
    events.append(recall("outsider", [("rec_s", 1, "secret note")]))
    problems = check(events, final, candidates, COVERS).problems
    assert problems == [
        "rec_s: recalled by reader, whose grants do not cover it",
        "rec_s: recalled by outsider, whose grants do not cover it",
    ]


def test_a_recall_after_the_tombstone_was_acknowledged_fails():
    events, final, candidates = review_history()
    events.append(recall("c1", [("rec_p", 1, "promote me")], t0=6.5))
    events.append(recall("c1", [("rec_s", 1, None)]))
    problems = check(events, final, candidates, COVERS).problems
    assert problems == [
        "rec_p: recalled after its tombstone was acknowledged",
        "rec_s: a recall returned its tombstone",
    ]


def test_a_read_after_the_tombstone_was_acknowledged_fails():
    events, final, candidates = review_history()
    events.append(read("c1", "rec_p", 1, "promote me"))
    events[-1].t0 = 6.1
    problems = check(events, final, candidates, COVERS).problems
    assert problems == ["rec_p: read after its tombstone was acknowledged"]
