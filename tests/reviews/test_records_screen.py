"""Records screen: list, filters, search, detail with history and tombstone, edit/delete with CAS."""

import pytest

from memory.models import Record
from memory.ops.base import HANDLERS
from tests.reviews.conftest import ctx, logged_in

pytestmark = pytest.mark.django_db


def test_list_with_kind_and_selection_filters(mod, record):
    tea = record("Ada likes tea.", kind="preference", placement=ctx("support"))
    lisbon = record("Ada lives in Lisbon.", kind="fact")
    all_ = mod.get("/console/s/s1/records/?subject=u1").content.decode()
    assert tea in all_ and lisbon in all_ and "<strong>2</strong>" in all_
    kinds = mod.get("/console/s/s1/records/?kinds=preference").content.decode()
    assert tea in kinds and lisbon not in kinds
    shared = mod.get("/console/s/s1/records/?mode=shared").content.decode()
    assert lisbon in shared and tea not in shared


needs_recall = pytest.mark.skipif(
    "memory.recall" not in HANDLERS, reason="memory.recall is not built on this branch"
)


def test_search_without_recall_says_so(mod, record):
    record("Ada likes tea.")
    html = mod.get("/console/s/s1/records/?q=tea&subject=u1").content.decode()
    if "memory.recall" in HANDLERS:
        assert "does not serve" not in html
    else:
        assert "Text search needs memory.recall" in html


@needs_recall
def test_search_needs_a_subject_and_finds_by_text(mod, record):
    tea = record("Ada likes tea.")
    lisbon = record("Ada lives in Lisbon.")
    assert b"give the subject id" in mod.get("/console/s/s1/records/?q=tea").content
    html = mod.get("/console/s/s1/records/?q=tea&subject=u1").content.decode()
    assert tea in html and lisbon not in html


def test_bad_selection_is_explained(mod, record):
    record("x")
    response = mod.get("/console/s/s1/records/?mode=contexts")
    assert response.status_code == 200 and b"INVALID_INPUT" in response.content


def test_detail_edit_and_history(mod, record):
    rid = record("Ada likes tea.")
    mod.post(
        f"/console/s/s1/records/{rid}/edit/",
        {
            "expected_revision": "1",
            "text": "Ada likes green tea.",
            "kind": "preference",
            "idempotency_key": "e1",
        },
    )
    rec = Record.objects.get(record_id=rid)
    assert rec.content["text"] == "Ada likes green tea." and rec.revision == 2
    html = mod.get(f"/console/s/s1/records/{rid}/").content.decode()
    assert 'id="history"' in html and "Ada likes green tea." in html


def test_stale_edit_explains_the_revision_conflict_and_saves_nothing(mod, record, ops):
    rid = record("Ada likes tea.")
    ops(
        "memory.records.update",
        {
            "space_id": "s1",
            "record_id": rid,
            "expected_revision": 1,
            "content": {"text": "changed elsewhere"},
        },
    )
    response = mod.post(
        f"/console/s/s1/records/{rid}/edit/",
        {"expected_revision": "1", "text": "mine", "idempotency_key": "e2"},
    )
    assert response.status_code == 409
    html = response.content.decode()
    assert "you edited revision 1, it is now at revision 2" in html
    assert Record.objects.get(record_id=rid).content["text"] == "changed elsewhere"


def test_delete_leaves_a_tombstone(mod, record):
    rid = record("Ada likes tea.")
    mod.post(
        f"/console/s/s1/records/{rid}/delete/",
        {"expected_revision": "1", "reason": "asked", "idempotency_key": "d1", "confirmed": "1"},
    )
    html = mod.get(f"/console/s/s1/records/{rid}/").content.decode()
    assert 'id="tombstone"' in html and "asked" in html and "Ada likes tea." not in html
    assert 'id="edit-form"' not in html
    assert rid not in mod.get("/console/s/s1/records/").content.decode()
    assert rid in mod.get("/console/s/s1/records/?tombstoned=1").content.decode()


def test_outsider_sees_not_found(record, stranger):
    rid = record("secret")
    client = logged_in(stranger)
    assert client.get(f"/console/s/s1/records/{rid}/").status_code == 404
    assert client.get("/console/s/s1/records/").status_code == 404
    assert (
        client.post(
            f"/console/s/s1/records/{rid}/delete/", {"expected_revision": "1", "confirmed": "1"}
        ).status_code
        == 404
    )
    assert Record.objects.get(record_id=rid).deleted_at is None


def test_delete_asks_once_on_the_page(mod, record):
    rid = record("Ada likes tea.")
    html = mod.get(f"/console/s/s1/records/{rid}/").content.decode()
    assert 'id="delete-confirm"' in html and "cannot be restored" in html
    response = mod.post(
        f"/console/s/s1/records/{rid}/delete/",
        {"expected_revision": "1", "idempotency_key": "d1"},
        follow=True,
    )
    assert b"Tick the box to delete" in response.content
    assert Record.objects.get(record_id=rid).deleted_at is None
