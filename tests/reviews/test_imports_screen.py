"""Import screen: a downloaded export file staged into another space, verified on a worker,
activated after a confirmation on the page; the re-export has equal digests. Bad files and a
missing confirmation change nothing."""

import io

import pytest

from memory.models import Import, Receipt, Record
from memory.services.operators import issue_root_grant
from tests.conftest import make_space
from tests.reviews.conftest import logged_in
from tests.reviews.jobs import run_pending

pytestmark = pytest.mark.django_db


def upload(client, data: bytes, key="i1", space="s2"):
    f = io.BytesIO(data)
    f.name = "export.jsonl"
    return client.post(
        f"/console/s/{space}/imports/stage/", {"file": f, "idempotency_key": key}, follow=True
    )


def export_file(client, ops) -> tuple[bytes, dict]:
    client.post("/console/s/s1/exports/create/", {"idempotency_key": "e"})
    receipt = Receipt.objects.get(op="memory.exports.create")
    run_pending(receipt.receipt_id)
    data = b"".join(
        client.get(f"/console/s/s1/exports/{receipt.receipt_id}/download/").streaming_content
    )
    export_id = receipt.refs[0]["id"]
    bundle = ops("memory.exports.get", {"space_id": "s1", "export_id": export_id, "ordinal": 0})[
        "bundle"
    ]
    return data, bundle


@pytest.fixture
def s2(moderator):
    space = make_space("s2")
    issue_root_grant(space, moderator.principal)
    return space


def test_stage_verify_activate_then_re_export_has_equal_digests(mod, ops, record, s2):
    record("Ada prefers tea.")
    record("<b>Grace</b> lives in Porto.", subject="u2")
    data, bundle = export_file(mod, ops)
    staged = upload(mod, data)
    html = staged.content.decode()
    assert "Staged 1 chunk into import" in html and 'hx-trigger="every 2s"' in html
    final = Receipt.objects.filter(op="memory.imports.stage").latest("created_at")
    assert not Record.objects.filter(space__space_id="s2").exists()
    assert run_pending(final.receipt_id).status == "committed"
    page = mod.get(f"/console/s/s2/imports/?receipt={final.receipt_id}").content.decode()
    assert 'id="activate-form"' in page and "replaces" in page
    import_id = Import.objects.get().import_id
    # without the confirmation nothing happens
    refused = mod.post(
        "/console/s/s2/imports/activate/",
        {"import_id": import_id, "idempotency_key": "a1", "receipt": final.receipt_id},
        follow=True,
    )
    assert b"Tick the box" in refused.content
    assert not Receipt.objects.filter(op="memory.imports.activate").exists()
    done = mod.post(
        "/console/s/s2/imports/activate/",
        {"import_id": import_id, "idempotency_key": "a1", "confirmed": "1"},
        follow=True,
    )
    assert b"Activation admitted" in done.content
    activation = Receipt.objects.get(op="memory.imports.activate")
    assert run_pending(activation.receipt_id).status == "committed"
    shown = mod.get(f"/console/s/s2/imports/{activation.receipt_id}/").content.decode()
    assert 'id="import-active"' in shown and "every 2s" not in shown
    assert Record.objects.filter(space__space_id="s2").count() == 2
    # export s2 again: equal object counts and chunk digests
    mod.post("/console/s/s2/exports/create/", {"idempotency_key": "e2"})
    again = Receipt.objects.filter(op="memory.exports.create", space_id="s2").get()
    run_pending(again.receipt_id)
    second = ops(
        "memory.exports.get", {"space_id": "s2", "export_id": again.refs[0]["id"], "ordinal": 0}
    )["bundle"]
    assert second["object_counts"] == bundle["object_counts"]
    assert second["chunk_digests"] == bundle["chunk_digests"]


def test_a_resubmitted_upload_stages_nothing_twice(mod, ops, record, s2):
    record("x")
    data, _ = export_file(mod, ops)
    upload(mod, data, key="same")
    upload(mod, data, key="same")
    assert Import.objects.count() == 1


@pytest.mark.parametrize(
    "data, says",
    [
        (b"not json\n", b"Line 1 is not JSON."),
        (b'{"x": 1}\n', b"Line 1 is not an export chunk."),
        (b'{"chunk": {}}\n', b"its first line has no bundle"),
        (b"", b"The submitted file is empty."),
    ],
)
def test_bad_files_are_refused_with_a_field_message(mod, s2, data, says):
    response = upload(mod, data)
    assert response.status_code == 400 and says in response.content
    assert (
        not Import.objects.exists()
        and not Receipt.objects.filter(op__startswith="memory.imports").exists()
    )


def test_a_tampered_file_is_refused_by_the_op(mod, ops, record, s2):
    record("Ada prefers tea.")
    data, _ = export_file(mod, ops)
    tampered = data.replace(b"Ada prefers tea.", b"Ada prefers gin.")
    response = upload(mod, tampered)
    final = Receipt.objects.filter(op="memory.imports.stage").order_by("created_at").last()
    if response.status_code == 200:  # staged; verification on the worker rejects it
        assert run_pending(final.receipt_id).status == "failed"
        page = mod.get(f"/console/s/s2/imports/?receipt={final.receipt_id}").content.decode()
        assert 'id="activate-form"' not in page and "receipt-failure" in page
    else:
        assert b"Nothing was activated" in response.content


def test_outsider_sees_not_found(stranger, s2):
    client = logged_in(stranger)
    assert client.get("/console/s/s2/imports/").status_code == 404
