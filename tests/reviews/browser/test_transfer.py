"""Browser: an export downloaded as one JSON Lines file re-imports into another space through
the import page (stage → verify → activate), and the space exported again has equal digests.
The jobs run in-process with the suite's `run_pending`, as a worker runs them."""

import pytest

from memory.models import Receipt, Record, Space
from memory.ops.base import call
from memory.services.operators import issue_root_grant
from tests.reviews.conftest import make_user
from tests.reviews.jobs import run_pending

pytestmark = pytest.mark.browser


def bundle_of(principal, space_id: str, receipt: Receipt) -> dict:
    body = {"space_id": space_id, "export_id": receipt.refs[0]["id"], "ordinal": 0}
    return call(principal, "memory.exports.get", body)["bundle"]


def test_download_then_import_into_another_space_with_equal_digests(console, transactional_db):
    s1 = Space.objects.create(space_id="s1", display_name="Support team")
    s2 = Space.objects.create(space_id="s2", display_name="Copy")
    _, mod = make_user("moderator")
    issue_root_grant(s1, mod)
    issue_root_grant(s2, mod)
    call(mod, "memory.subjects.ensure", {"space_id": "s1", "subject_id": "user:ada"})
    for text in ("Ada prefers tea.", "Ada lives in <b>Lisbon</b>."):
        call(
            mod,
            "memory.records.create",
            {
                "space_id": "s1",
                "subject_id": "user:ada",
                "kind": "fact",
                "placement": {"scope": "shared"},
                "content": {"text": text},
            },
        )
    tab = console("moderator")
    page = tab.page
    tab.go("/console/s/s1/exports/")
    page.click("#export-button")
    page.locator(".msg-success").wait_for()
    export = Receipt.objects.get(op="memory.exports.create")
    run_pending(export.receipt_id)
    download_link = page.locator("a.download")
    download_link.wait_for()  # the card polls itself until the export is ready
    with page.expect_download() as info:
        download_link.click()
    path = info.value.path()
    assert info.value.suggested_filename.endswith(".jsonl")

    tab.go("/console/s/s2/imports/")
    page.set_input_files("#stage-form input[type=file]", str(path))
    page.click("#stage-button")
    page.locator(".msg-success").wait_for()
    final = Receipt.objects.filter(op="memory.imports.stage").latest("created_at")
    run_pending(final.receipt_id)
    page.locator("#activate-form").wait_for()  # the verification card polls itself
    tab.shot("import-verified")
    page.click("#activate-button")  # not confirmed: the browser refuses the form
    assert not Receipt.objects.filter(op="memory.imports.activate").exists()
    page.check("#activate-confirm")
    page.click("#activate-button")
    page.locator(".msg-success").wait_for()
    activation = Receipt.objects.get(op="memory.imports.activate")
    run_pending(activation.receipt_id)
    page.locator("#import-active").wait_for()
    assert Record.objects.filter(space=s2).count() == 2

    call(mod, "memory.exports.create", {"space_id": "s2", "idempotency_key": "again"})
    again = Receipt.objects.get(op="memory.exports.create", space_id="s2")
    run_pending(again.receipt_id)
    first, second = bundle_of(mod, "s1", export), bundle_of(mod, "s2", again)
    assert second["object_counts"] == first["object_counts"]
    assert second["chunk_digests"] == first["chunk_digests"]
