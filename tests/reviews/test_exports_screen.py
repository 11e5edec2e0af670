"""Exports screen: Create export (idempotent, gated like the API, errors as messages), the
caller's recent exports with their receipts' progress, each polling itself while pending and
showing the bundle summary (digests, chunk and object counts, never content) once committed.
Jobs run in-process with the suite's helper; the browser test runs them on a real worker."""

import json

import pytest
from django.test import Client

from memory.models import Export, Grant, Job, Receipt
from tests.conftest import Persona
from tests.reviews.conftest import logged_in
from tests.reviews.jobs import run_pending

pytestmark = pytest.mark.django_db

PAGE = "/console/s/s1/exports/"
OP = "memory.exports.create"
POLL = 'hx-trigger="every 2s"'
SECRET = "Ada's door code is 4711."


def create(client, key: str = "e1", **form):
    return client.post(PAGE + "create/", {"idempotency_key": key, **form}, follow=True)


def receipts() -> list[Receipt]:
    return list(Receipt.objects.filter(op=OP).order_by("created_at"))


def fragment(client, receipt_id: str) -> str:
    response = client.get(f"{PAGE}{receipt_id}/")
    assert response.status_code == 200
    return response.content.decode()


@pytest.fixture
def content(record):
    return [record(SECRET), record("<script>alert(1)</script>", kind="note", subject="u2")]


def test_page_has_a_create_form_and_no_exports_yet(mod):
    html = mod.get(PAGE).content.decode()
    assert (
        'id="export-form"' in html
        and 'name="csrfmiddlewaretoken"' in html
        and 'name="idempotency_key"' in html
    )
    assert 'id="no-exports"' in html
    space_page = mod.get("/console/s/s1/space/").content.decode()
    assert f'href="{PAGE}"' in space_page  # in the space navigation


def test_create_shows_progress_then_the_bundle_summary(mod, content):
    response = create(mod)
    (receipt,) = receipts()
    export = Export.objects.get()
    html = response.content.decode()
    assert f"Export {export.export_id} admitted" in html
    assert (
        f'id="export-{receipt.receipt_id}"' in html
        and POLL in html
        and 'data-status="pending"' in html
    )
    assert fragment(mod, receipt.receipt_id).count(POLL) == 1

    assert run_pending(receipt.receipt_id).status == "committed"
    export.refresh_from_db()
    done = fragment(mod, receipt.receipt_id)
    assert POLL not in done and "hx-get" not in done and 'data-status="committed"' in done
    assert f'<code class="bundle-digest">{export.bundle["bundle_digest"]}</code>' in done
    assert f'class="chunk-count">{export.bundle["chunk_count"]}<' in done
    assert "record 2" in done and "subject 2" in done
    page = mod.get(PAGE).content.decode()
    assert export.bundle["bundle_digest"] in page and POLL not in page
    for html in (done, page):  # a summary, not the bundle's content
        assert SECRET not in html and "door code" not in html and "alert(1)" not in html


def test_export_of_named_subjects(mod, content):
    create(mod, subject_ids="u2")
    receipt_id = receipts()[0].receipt_id
    run_pending(receipt_id)
    assert Export.objects.get().subject_ids == ["u2"]
    done = fragment(mod, receipt_id)
    assert "subject 1" in done and "record 1" in done


def test_unknown_subject_is_a_message_and_nothing_is_created(mod, content):
    response = create(mod, subject_ids="u1, ghost")
    assert response.status_code == 200 and b"NOT_FOUND" in response.content
    assert not receipts() and not Export.objects.exists() and not Job.objects.exists()


def test_double_submit_with_the_same_key_is_one_export_and_one_job(mod, content):
    create(mod, "same")
    response = create(mod, "same")
    assert len(receipts()) == 1 and Export.objects.count() == 1 and Job.objects.count() == 1
    assert response.content.decode().count('class="card export"') == 1
    create(mod, "other")
    assert Export.objects.count() == 2


def test_a_frozen_space_can_still_be_exported(mod, content, ops):
    ops("memory.spaces.freeze", {"space_id": "s1"})
    response = create(mod)
    assert b"can still be exported" in response.content and b"SPACE_FROZEN" not in response.content
    run_pending(receipts()[0].receipt_id)
    assert Export.objects.get().state == "ready"


def test_without_the_export_capability_it_is_a_message(content, give, stranger):
    give(stranger, "records_read", shared_access=True)
    response = create(logged_in(stranger))
    assert response.status_code == 200 and b"PERMISSION_DENIED" in response.content
    assert not receipts() and not Export.objects.exists()


def test_a_failed_export_shows_its_failure_and_stops_polling(mod, moderator, content, ops):
    create(mod)
    receipt_id = receipts()[0].receipt_id
    # The exporter's only grant is revoked before the worker runs: the job fails, content-free.
    ops(
        "memory.grants.revoke",
        {"space_id": "s1", "grant_id": Grant.objects.get(grantee=moderator.principal).grant_id},
    )
    failed = run_pending(receipt_id)
    assert failed.status == "failed"
    done = fragment(mod, receipt_id)  # the receipt stays visible to the principal that caused it
    assert POLL not in done and 'data-status="failed"' in done
    assert f"{failed.failure['message']} ({failed.failure['code']})" in done
    assert 'class="bundle-digest"' not in done


def test_the_list_shows_only_the_callers_own_exports(mod, content, give, stranger):
    create(mod)
    give(stranger, "export", shared_access=True)
    client = logged_in(stranger)
    assert b'id="no-exports"' in client.get(PAGE).content
    mine = receipts()[0].receipt_id
    assert client.get(f"{PAGE}{mine}/").status_code == 404  # not the stranger's receipt
    create(client, "s-1")
    html = client.get(PAGE).content.decode()
    assert html.count('class="card export"') == 1 and mine not in html


def test_without_coverage_everything_is_not_found(mod, content, stranger):
    create(mod)
    client = logged_in(stranger)
    assert client.get(PAGE).status_code == 404
    assert client.get(f"{PAGE}{receipts()[0].receipt_id}/").status_code == 404
    assert client.post(PAGE + "create/", {"idempotency_key": "x"}).status_code == 404
    assert len(receipts()) == 1


def test_a_receipt_of_another_op_is_not_an_export(mod, ops):
    freeze = ops("memory.spaces.freeze", {"space_id": "s1"})["receipt"]["receipt_id"]
    assert mod.get(f"{PAGE}{freeze}/").status_code == 404


def test_create_needs_the_csrf_token(moderator):
    client = Client(enforce_csrf_checks=True)
    client.force_login(moderator)
    assert client.post(PAGE + "create/", {"idempotency_key": "k"}).status_code == 403
    assert not receipts() and not Export.objects.exists()


def test_a_ready_export_its_creator_can_no_longer_read_shows_the_error(
    content, ops, give, stranger
):
    export_grant = give(stranger, "export", shared_access=True)
    give(stranger, "records_read")  # keeps the stranger in the space
    client = logged_in(stranger)
    create(client)
    receipt_id = receipts()[0].receipt_id
    run_pending(receipt_id)
    assert 'class="bundle-digest"' in fragment(client, receipt_id)
    ops("memory.grants.revoke", {"space_id": "s1", "grant_id": export_grant})
    html = client.get(PAGE).content.decode()
    assert 'data-status="committed"' in html and "(PERMISSION_DENIED)" in html
    assert 'class="bundle-digest"' not in html


@pytest.fixture
def api_bytes(moderator, api):
    """The raw body the HTTP API serves the moderator for memory.exports.get."""
    persona = Persona(moderator.principal, moderator.principal.issue_token())
    session = api.connect(persona)

    def get(export_id: str, ordinal: int) -> bytes:
        response = api.client.post(
            "/v1/ops/memory.exports.get",
            data=json.dumps({"space_id": "s1", "export_id": export_id, "ordinal": ordinal}),
            content_type="application/json",
            HTTP_AUTHORIZATION=f"Bearer {persona.token}",
            HTTP_SPOKE_SESSION=session,
        )
        assert response.status_code == 200
        return response.content

    return get


def test_download_is_one_json_lines_file_of_what_exports_get_serves(mod, content, ops, api_bytes):
    create(mod)
    (receipt,) = receipts()
    run_pending(receipt.receipt_id)
    export = Export.objects.get()
    assert 'class="button download"' in fragment(mod, receipt.receipt_id)
    response = mod.get(f"{PAGE}{receipt.receipt_id}/download/")
    assert response.status_code == 200 and response["Content-Type"] == "application/x-ndjson"
    assert response["Content-Disposition"] == f'attachment; filename="s1-{export.export_id}.jsonl"'
    lines = b"".join(response.streaming_content).split(b"\n")
    assert lines[-1] == b""
    lines = lines[:-1]
    bundle = ops(
        "memory.exports.get", {"space_id": "s1", "export_id": export.export_id, "ordinal": 0}
    )["bundle"]
    assert len(lines) == bundle["chunk_count"]
    for ordinal, line in enumerate(lines):
        assert line == api_bytes(export.export_id, ordinal)


def test_download_of_a_pending_or_foreign_export_is_not_found(mod, content, give, stranger):
    create(mod)
    (receipt,) = receipts()
    assert mod.get(f"{PAGE}{receipt.receipt_id}/download/").status_code == 404  # pending
    run_pending(receipt.receipt_id)
    give(stranger, "export", "records_read")
    other = logged_in(stranger).get(f"{PAGE}{receipt.receipt_id}/download/")
    assert other.status_code == 404
