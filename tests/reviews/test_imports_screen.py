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


# --- issue 38, finding 7: authorize first, then parse lazily and bounded ----------------------
# Each failed before: the whole file was JSON-parsed before anyone asked whether the uploader
# may import, and a line nested 100,000 deep was a 500 (RecursionError) for any logged-in user.

DEEP = b'{"chunk": ' + b"[" * 100_000 + b"]" * 100_000 + b"}\n"


def nothing_staged() -> bool:
    return (
        not Import.objects.exists()
        and not Receipt.objects.filter(op__startswith="memory.imports").exists()
    )


def test_an_uploader_without_principal_or_grant_is_refused_unread(stranger, s2):
    from tests.reviews.conftest import make_user

    nobody = make_user("nobody")[0]
    nobody.principal.delete()
    nobody.refresh_from_db()
    for user in (stranger, nobody):  # a principal with no grant in s2; an account with none
        response = upload(logged_in(user), DEEP)
        assert response.status_code == 404  # absent and forbidden look the same
    assert nothing_staged()


def test_a_grant_without_import_is_a_form_error(moderator, s2):
    from memory.ops.base import call
    from tests.reviews.conftest import make_user

    user, principal = make_user("reader")
    body = {
        "space_id": "s2",
        "grantee_principal_id": principal.principal_id,
        "capabilities": ["records_read", "review", "candidates_read"],
        "shared_access": True,
    }
    call(moderator.principal, "memory.grants.grant", body)
    response = upload(logged_in(user), DEEP)
    assert response.status_code == 400
    assert b"You may not import into this space." in response.content
    assert nothing_staged()


@pytest.mark.parametrize(
    "data, says",
    [
        (DEEP, b"Line 1 nests deeper than 32 levels."),
        (b'{"chunk": ' + b"[" * 100 + b"]" * 100 + b"}\n", b"Line 1 nests deeper than 32 levels."),
        (b'{"chunk": "' + b"x" * 1_100_000 + b'"}\n', b"Line 1 is longer than"),
    ],
)
def test_a_line_too_deep_or_too_long_is_a_form_error(mod, s2, data, says):
    response = upload(mod, data)
    assert response.status_code == 400 and says in response.content
    assert nothing_staged()
