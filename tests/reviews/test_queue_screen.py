"""Queue screen: oldest first, filters, counts, pagination, bulk dismiss/drop."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from memory.models import Candidate, Receipt, Record
from reviews.views.queue import PAGE_SIZE
from tests.reviews.conftest import ctx, logged_in

pytestmark = pytest.mark.django_db


def test_pending_candidates_oldest_first_with_counts(mod, capture):
    first, second = capture("Ada prefers tea.", "Ada moved to Lisbon last spring.")
    html = mod.get("/console/s/s1/queue/").content.decode()
    assert html.index(first) < html.index(second)
    assert "<strong>2</strong> pending candidates" in html


def test_filter_by_subject_label_and_context(mod, capture):
    (tea,) = capture("Ada prefers tea over coffee.", subject="u1", placement=ctx("support"))
    (move,) = capture("Grace moved to Porto last year.", subject="u2", placement=ctx("sales"))
    assert move not in mod.get("/console/s/s1/queue/?subject=u1").content.decode()
    by_label = mod.get("/console/s/s1/queue/?label=preference").content.decode()
    assert tea in by_label and move not in by_label
    by_context = mod.get("/console/s/s1/queue/?context=sales").content.decode()
    assert move in by_context and tea not in by_context


def test_unknown_subject_filter_says_so_without_an_error_page(mod, capture):
    capture("x")
    response = mod.get("/console/s/s1/queue/?subject=ghost")
    assert response.status_code == 200
    assert b"NOT_FOUND" in response.content


def test_pagination_follows_the_op_cursor(mod, capture):
    ids = capture(*[f"note {i}" for i in range(PAGE_SIZE + 3)])
    first = mod.get("/console/s/s1/queue/")
    html = first.content.decode()
    assert ids[0] in html and ids[PAGE_SIZE] not in html
    link = first.context["next_cursor"]
    second = mod.get("/console/s/s1/queue/", {"cursor": link}).content.decode()
    assert ids[PAGE_SIZE] in second and ids[0] not in second


def test_query_count_does_not_grow_with_the_page(mod, capture):
    capture(*[f"note {i}" for i in range(3)])
    with CaptureQueriesContext(connection) as small:
        mod.get("/console/s/s1/queue/")
    capture(*[f"more {i}" for i in range(30)])
    with CaptureQueriesContext(connection) as big:
        mod.get("/console/s/s1/queue/")
    assert len(big.captured_queries) == len(small.captured_queries)


def test_htmx_request_gets_the_table_only(mod, capture):
    capture("x")
    html = mod.get("/console/s/s1/queue/", HTTP_HX_REQUEST="true").content.decode()
    assert html.lstrip().startswith('<section id="queue">') and "<html" not in html


def test_bulk_dismiss_and_drop(mod, capture):
    a, b, c = capture("one", "two", "three")
    mod.post(
        "/console/s/s1/queue/bulk/",
        {"action": "dismiss", "candidate_ids": [a, b], "idempotency_key": "k1"},
    )
    mod.post(
        "/console/s/s1/queue/bulk/",
        {
            "action": "drop",
            "candidate_ids": [c],
            "reason": "spam",
            "idempotency_key": "k2",
            "confirmed": "1",
        },
    )
    states = dict(Candidate.objects.values_list("candidate_id", "state"))
    assert states == {a: "dismissed", b: "dismissed", c: "dropped"}
    assert Candidate.objects.get(candidate_id=c).outcome["reason"] == "spam"


def test_bulk_resubmit_does_each_once_and_reports_taken_ones(mod, capture):
    a, b = capture("one", "two")
    mod.post(
        "/console/s/s1/queue/bulk/",
        {"action": "dismiss", "candidate_ids": [a], "idempotency_key": "k1"},
    )
    again = mod.post(
        "/console/s/s1/queue/bulk/",
        {"action": "dismiss", "candidate_ids": [a], "idempotency_key": "k1"},
        follow=True,
    )
    assert b"already been handled" not in again.content  # same key: a replay, not a second try
    other = mod.post(
        "/console/s/s1/queue/bulk/",
        {"action": "drop", "candidate_ids": [a, b], "idempotency_key": "k2", "confirmed": "1"},
        follow=True,
    )
    assert b"1 had already been handled by another reviewer" in other.content
    assert Candidate.objects.get(candidate_id=b).state == "dropped"


def test_outsider_sees_not_found(stranger, capture):
    capture("secret")
    client = logged_in(stranger)
    assert client.get("/console/s/s1/queue/").status_code == 404
    assert client.post(
        "/console/s/s1/queue/bulk/", {"action": "drop", "candidate_ids": ["x"]}
    ).status_code in (302, 404)


def test_narrow_grant_sees_only_its_subjects(ops, capture, stranger):
    (mine,) = capture("mine", subject="u1")
    (theirs,) = capture("theirs", subject="u2")
    ops(
        "memory.grants.grant",
        {
            "space_id": "s1",
            "grantee_principal_id": stranger.principal.principal_id,
            "capabilities": ["review", "records_write"],
            "subject_ids": ["u1"],
            "shared_access": True,
        },
    )
    html = logged_in(stranger).get("/console/s/s1/queue/").content.decode()
    assert mine in html and theirs not in html


# ---- filters served by memory.candidates.list ------------------------------------------------


def test_filtered_counts_are_over_the_whole_filtered_set(mod, capture):
    capture(*[f"Ada works at Acme {i}." for i in range(PAGE_SIZE + 5)], placement=ctx("sales"))
    capture("I prefer tea over coffee.", placement=ctx("sales"))
    capture("Bob works at Initech.", placement=ctx("support"))
    response = mod.get("/console/s/s1/queue/?label=fact&context=sales")
    assert response.context["total"] == PAGE_SIZE + 5
    html = response.content.decode()
    assert f"<strong>{PAGE_SIZE + 5}</strong> pending candidates you can see matching" in html
    assert "On this page:" in html and f"fact: {PAGE_SIZE}" in html
    assert mod.get("/console/s/s1/queue/?context=support").context["total"] == 1
    assert mod.get("/console/s/s1/queue/?context=shared").context["total"] == 0
    both = mod.get("/console/s/s1/queue/?context=support,sales&label=preference")
    assert both.context["total"] == 1


def test_order_newest_and_previous_page(mod, moderator, capture):
    ids = capture(*[f"note {i}" for i in range(PAGE_SIZE + 3)])
    newest = mod.get("/console/s/s1/queue/?order=newest")
    html = newest.content.decode()
    assert html.index(ids[-1]) < html.index(ids[-2]) and ids[0] not in html
    first = mod.get("/console/s/s1/queue/")
    assert first.context["prev_cursor"] is None and b'id="prev-page"' not in first.content
    second = mod.get("/console/s/s1/queue/", {"cursor": first.context["next_cursor"]})
    assert second.context["prev_cursor"] == ""  # back to the first page
    assert b'id="prev-page"' in second.content
    # a bookmarked page whose predecessor was never seen offers First, not Previous
    elsewhere = logged_in(moderator).get(
        "/console/s/s1/queue/", {"cursor": first.context["next_cursor"]}
    )
    assert elsewhere.context["prev_cursor"] is None
    assert b'id="prev-page"' not in elsewhere.content and b'id="first-page"' in elsewhere.content


def test_bad_filter_values_are_ignored_not_an_error(mod, capture):
    (cid,) = capture("x")
    response = mod.get("/console/s/s1/queue/?label=<b>nope</b>&order=sideways")
    assert response.status_code == 200 and cid in response.content.decode()
    assert b"<b>nope</b>" not in response.content


def test_filters_persist_through_the_review_flow(mod, capture):
    (tea,) = capture("I prefer tea over coffee.", placement=ctx("sales"))
    (fact1, fact2) = capture("Ada works at Acme.", "Bob works at Initech.", placement=ctx("sales"))
    (other,) = capture("Cy works at Globex.", placement=ctx("support"))
    q = "?label=fact&context=sales"
    html = mod.get("/console/s/s1/queue/" + q).content.decode()
    assert f'/console/s/s1/candidates/{fact1}/?label=fact&amp;context=sales"' in html
    assert tea not in html and other not in html
    page = mod.get(f"/console/s/s1/candidates/{fact1}/" + q).content.decode()
    assert 'href="/console/s/s1/queue/?label=fact&amp;context=sales" id="back-to-queue"' in page
    assert '<input type="hidden" name="label" value="fact">' in page
    # after the action the next candidate is the head of the same filtered queue
    after = mod.post(
        f"/console/s/s1/candidates/{fact1}/review/",
        {"action": "drop", "idempotency_key": "k1", "label": "fact", "context": "sales"},
    )
    assert after.status_code == 302
    assert after["Location"] == f"/console/s/s1/candidates/{fact2}/?label=fact&context=sales"
    last = mod.post(
        f"/console/s/s1/candidates/{fact2}/review/",
        {"action": "dismiss", "idempotency_key": "k2", "label": "fact", "context": "sales"},
    )
    # the filtered queue is empty: back to it (tea and other are still pending elsewhere)
    assert last["Location"] == "/console/s/s1/queue/?label=fact&context=sales"
    assert Candidate.objects.get(candidate_id=tea).state == "pending"


def test_duplicate_badge_for_the_same_text_of_one_subject(mod, capture):
    a, b = capture("Ada prefers tea.", "ada prefers  TEA!")
    (c,) = capture("Ada prefers tea.", subject="u2")
    response = mod.get("/console/s/s1/queue/")
    rows = {x["candidate_id"]: x for x in response.context["candidates"]}
    assert rows[b]["duplicate_of"] == a
    assert "duplicate_of" not in rows[a] and "duplicate_of" not in rows[c]
    assert b"badge-duplicate" in response.content


def test_duplicate_badge_for_an_existing_record_of_the_subject(mod, capture, record, ops):
    same = record("Ada prefers green tea.")
    gone = record("Grace plays chess on Sundays.")
    ops(
        "memory.records.delete",
        {"space_id": "s1", "record_id": gone, "expected_revision": 1},
    )
    record("Ada prefers coffee.", subject="u2")
    dup, unlike, deleted = capture(
        "ada prefers GREEN tea!",
        "Ada prefers green tea with lemon.",
        "Grace plays chess on Sundays.",
    )
    (elsewhere,) = capture("Ada prefers coffee", subject="u3")
    response = mod.get("/console/s/s1/queue/")
    rows = {x["candidate_id"]: x for x in response.context["candidates"]}
    assert rows[dup]["duplicate_record"] == same
    for cid in (unlike, deleted, elsewhere):  # other text, a deleted record, another subject
        assert "duplicate_record" not in rows[cid]
    html = response.content.decode()
    assert f'href="/console/s/s1/records/{same}/"' in html and "duplicate of a record" in html


def test_duplicate_badge_only_for_records_the_moderator_may_read(ops, capture, record, stranger):
    record("Ada prefers tea.", placement=ctx("sales"))
    (cid,) = capture("Ada prefers tea.", placement=ctx("support"))
    ops(
        "memory.grants.grant",
        {
            "space_id": "s1",
            "grantee_principal_id": stranger.principal.principal_id,
            "capabilities": ["review", "records_read"],
            "context_ids": ["support"],
        },
    )
    response = logged_in(stranger).get("/console/s/s1/queue/")
    (row,) = response.context["candidates"]
    assert row["candidate_id"] == cid and "duplicate_record" not in row
    assert b"duplicate of a record" not in response.content


def test_record_duplicates_cost_the_same_queries_however_many_match(mod, capture, record):
    capture(*[f"note {i}" for i in range(3)])
    record("note 1")
    with CaptureQueriesContext(connection) as small:
        mod.get("/console/s/s1/queue/")
    for i in range(3, 30):
        record(f"more {i}")
    capture(*[f"more {i}" for i in range(3, 30)])
    with CaptureQueriesContext(connection) as big:
        response = mod.get("/console/s/s1/queue/")
    marked = [c for c in response.context["candidates"] if "duplicate_record" in c]
    assert len(marked) == 28
    assert len(big.captured_queries) == len(small.captured_queries)


def test_duplicate_of_an_old_record_among_many_alike_is_found(mod, capture, record, monkeypatch):
    # Every record shares all terms but its number: the check reads the records holding the
    # candidate's rarest term, not the newest of all those alike.
    monkeypatch.setattr("reviews.similar.MATCH_ROWS", 3)
    first = record("Ada mentioned topic 1000 while talking about plans.")
    for i in range(1001, 1012):
        record(f"Ada mentioned topic {i} while talking about plans.")
    (cid,) = capture("ada mentioned TOPIC 1000, while talking about plans")
    (row,) = mod.get("/console/s/s1/queue/").context["candidates"]
    assert row["candidate_id"] == cid and row["duplicate_record"] == first


def test_queue_escapes_content(mod, capture):
    capture("<script>alert(1)</script>")
    html = mod.get("/console/s/s1/queue/").content.decode()
    assert "<script>alert(1)" not in html and "&lt;script&gt;alert(1)" in html


# ---- bulk ----------------------------------------------------------------------------------------


def test_bulk_promote_makes_one_record_each_and_a_double_submit_does_one_thing(mod, capture):
    ids = capture(*[f"Ada works at Acme {i}." for i in range(4)])
    form = {"action": "promote", "candidate_ids": ids[:3], "idempotency_key": "bulk-1"}
    first = mod.post("/console/s/s1/queue/bulk/", form, follow=True)
    assert b"3 candidates promoted into 3 records." in first.content
    again = mod.post("/console/s/s1/queue/bulk/", form, follow=True)
    assert b"already been handled" not in again.content
    assert Record.objects.filter(prov_candidate_id__in=ids).count() == 3
    assert Candidate.objects.get(candidate_id=ids[3]).state == "pending"


def test_bulk_with_nothing_selected_says_so_and_does_nothing(mod, capture):
    capture("x")
    before = Receipt.objects.count()
    response = mod.post(
        "/console/s/s1/queue/bulk/?x=1",
        {"action": "promote", "idempotency_key": "k", "label": "fact"},
        follow=True,
    )
    assert b"Nothing selected" in response.content
    assert response.redirect_chain[-1][0] == "/console/s/s1/queue/?label=fact"
    assert Receipt.objects.count() == before


@pytest.mark.parametrize(
    "form, says",
    [
        ({"action": "explode", "candidate_ids": ["c"], "idempotency_key": "k"}, b"Choose promote"),
        ({"action": "drop", "candidate_ids": ["c"]}, b"The form is incomplete"),
    ],
)
def test_bulk_bad_forms_change_nothing(mod, capture, form, says):
    capture("x")
    before = Receipt.objects.count()
    response = mod.post("/console/s/s1/queue/bulk/", form, follow=True)
    assert says in response.content and Receipt.objects.count() == before


def test_bulk_drop_asks_once_on_the_page(mod, capture):
    a, b = capture("one", "two")
    ask = mod.post(
        "/console/s/s1/queue/bulk/",
        {
            "action": "drop",
            "candidate_ids": [a, b],
            "idempotency_key": "k",
            "reason": "<i>spam</i>",
            "context": "shared",
        },
    )
    html = ask.content.decode()
    assert ask.status_code == 200 and "Drop 2 candidates?" in html
    assert "cannot be undone" in html and "&lt;i&gt;spam&lt;/i&gt;" in html
    assert 'href="/console/s/s1/queue/?context=shared" id="cancel-drop"' in html
    assert set(Candidate.objects.values_list("state", flat=True)) == {"pending"}
    mod.post(
        "/console/s/s1/queue/bulk/",
        {"action": "drop", "candidate_ids": [a, b], "idempotency_key": "k", "confirmed": "1"},
    )
    assert set(Candidate.objects.values_list("state", flat=True)) == {"dropped"}


def test_bulk_promote_needs_records_write(capture, give, stranger):
    (cid,) = capture("x")
    give(stranger, "review", shared_access=True)
    response = logged_in(stranger).post(
        "/console/s/s1/queue/bulk/",
        {"action": "promote", "candidate_ids": [cid], "idempotency_key": "k"},
        follow=True,
    )
    assert b"PERMISSION_DENIED" in response.content
    assert Candidate.objects.get(candidate_id=cid).state == "pending"
