"""Queue screen: oldest first, filters, counts, pagination, bulk dismiss/drop."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from memory.models import Candidate
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
