"""Browser: deciding with evidence and many at once — a likely duplicate shown and dropped as
such, a bulk promote of 20 candidates from the keyboard, shift-click ranges and the
nothing-selected message, and Undo of a promote from "My recent actions"."""

import pytest

from memory.models import Candidate, Principal, Record, Space
from memory.ops.base import call
from memory.services.operators import issue_root_grant
from tests.reviews.conftest import make_user

pytestmark = pytest.mark.browser


@pytest.fixture
def desk(transactional_db):
    space = Space.objects.create(space_id="s1", display_name="Support team")
    _, mod = make_user("moderator")
    _, app = make_user("app")
    for p in (mod, app):
        issue_root_grant(space, p)
    call(app, "memory.subjects.ensure", {"space_id": "s1", "subject_id": "user:ada"})

    class Desk:
        def capture(self, *texts, context="support"):
            ids = []
            for start in range(0, len(texts), 32):
                receipt = call(
                    app,
                    "memory.capture",
                    {
                        "space_id": "s1",
                        "subject_id": "user:ada",
                        "capture_scope": {
                            "placement": {"scope": "context", "context_id": context},
                            "source_context_id": "chat",
                        },
                        "items": [{"content": {"text": t}} for t in texts[start : start + 32]],
                    },
                )["receipt"]
                ids += [r["id"] for r in receipt["refs"] if r["type"] == "candidate"]
            return ids

        def record(self, text, kind="preference"):
            receipt = call(
                app,
                "memory.records.create",
                {
                    "space_id": "s1",
                    "subject_id": "user:ada",
                    "kind": kind,
                    "placement": {"scope": "context", "context_id": "support"},
                    "content": {"text": text},
                },
            )["receipt"]
            return next(r["id"] for r in receipt["refs"] if r["type"] == "record")

    return Desk()


def test_candidate_page_shows_a_duplicate_and_drops_it_as_such(console, desk):
    same = desk.record("Ada prefers green tea in the morning.")
    desk.record("Ada lives in Lisbon.", kind="fact")
    (cid,) = desk.capture("Ada prefers green tea in the morning!")
    tab = console("moderator")
    tab.go(f"/console/s/s1/candidates/{cid}/")
    page = tab.page
    assert page.locator("#duplicate-mark").inner_text() == "likely duplicate"
    row = page.locator("#similar tr.similar-row.duplicate")
    assert same in row.inner_text() and "100% word overlap" in row.inner_text()
    assert "App" in page.locator("#captured-by").inner_text()
    assert page.locator("#captured-at time").get_attribute("title").endswith("Z")
    tab.shot("candidate-duplicate")
    row.locator("button", has_text=f"Drop as duplicate of {same}").click()
    page.locator(".msg-success").wait_for()
    cand = Candidate.objects.get(candidate_id=cid)
    assert cand.state == "dropped" and cand.outcome["reason"] == f"duplicate of {same}"


def test_a_record_that_only_resembles_the_candidate_gets_no_red(console, desk):
    """Below the documented word overlap (reviews.similar.DUPLICATE_AT) the row is not marked
    and its drop button is drawn plainly: no red text, border or background (it was red-outlined
    at 25% overlap); a likely duplicate's button is red."""
    same = desk.record("Ada prefers green tea in the morning.")
    near = desk.record("Ada prefers to travel by train in the spring.")
    (cid,) = desk.capture("Ada prefers green tea in the morning!")
    tab = console("moderator")
    tab.go(f"/console/s/s1/candidates/{cid}/")
    page = tab.page
    red = "rgb(180, 35, 24)"  # --danger

    def colours(record_id: str) -> set[str]:
        button = page.locator("#similar button", has_text=f"Drop as duplicate of {record_id}")
        return set(
            button.evaluate(
                "b => { const s = getComputedStyle(b);"
                " return [s.color, s.borderTopColor, s.backgroundColor]; }"
            )
        )

    row = page.locator("#similar tr.similar-row", has_text=near)
    assert "duplicate" not in (row.get_attribute("class") or "")
    assert "likely duplicate" not in row.inner_text()
    assert red not in colours(near)
    assert red in colours(same)


def test_bulk_promote_of_20_by_keyboard(console, desk):
    ids = desk.capture(*[f"Ada works at Acme, team {i}." for i in range(20)])
    later = desk.capture("Ada prefers tea.", "Ada likes jazz.")
    tab = console("moderator")
    tab.go("/console/s/s1/queue/")
    page = tab.page
    page.locator("tr.candidate-row").first.wait_for()
    for _ in range(20):
        page.keyboard.press("x")
    assert page.locator("#bulk-top .selected-count").inner_text() == "20 selected"
    assert page.locator("input.pick:checked").count() == 20
    tab.shot("queue-bulk")
    page.keyboard.press("Shift+P")
    message = page.locator(".msg-success")
    message.wait_for()
    assert "20 candidates promoted into 20 records." in message.inner_text()
    assert Record.objects.filter(prov_candidate_id__in=ids).count() == 20
    assert set(
        Candidate.objects.filter(candidate_id__in=later).values_list("state", flat=True)
    ) == {"pending"}


def test_shift_click_ranges_select_all_and_nothing_selected(console, desk):
    desk.capture(*[f"note {i}" for i in range(8)])
    tab = console("moderator")
    tab.go("/console/s/s1/queue/")
    page = tab.page
    boxes = page.locator("input.pick")
    boxes.nth(1).click()
    boxes.nth(5).click(modifiers=["Shift"])
    assert page.locator("input.pick:checked").count() == 5
    page.locator("#select-all").click()
    assert page.locator("input.pick:checked").count() == 8
    page.locator("#select-all").click()
    assert page.locator("input.pick:checked").count() == 0
    page.locator("#bulk-bottom .bulk-dismiss").click()
    assert "Nothing selected" in page.locator("#bulk-note").inner_text()
    assert set(Candidate.objects.values_list("state", flat=True)) == {"pending"}


def test_undo_a_promote_from_my_recent_actions(console, desk):
    a, b = desk.capture("Ada prefers tea.", "Ada likes jazz.")
    tab = console("moderator")
    tab.go(f"/console/s/s1/candidates/{a}/")
    page = tab.page
    page.click("#promote-button")
    page.wait_for_url(f"**/candidates/{b}/")
    record = Record.objects.get(prov_candidate_id=a)
    page.click("#back-to-queue")
    undo = page.locator("#recent tr[data-receipt] .undo-button")
    undo.wait_for()  # the panel loads itself with htmx
    assert record.record_id in page.locator("#recent").inner_text()
    tab.shot("recent-actions")
    undo.click()
    message = page.locator(".msg-success")
    message.wait_for()
    assert f"is no longer a memory (deleted {record.record_id})" in message.inner_text()
    record.refresh_from_db()
    assert record.deleted_at is not None and record.delete_reason.startswith("undo: promote")
    page.locator("#recent .recent-item").first.wait_for()
    assert "undone" in page.locator("#recent").inner_text()


def test_queue_marks_a_duplicate_of_an_existing_record_and_links_it(console, desk):
    same = desk.record("Ada prefers green tea in the morning.")
    dup, fresh = desk.capture("ada prefers GREEN tea in the morning!!", "Ada moved to Porto.")
    tab = console("moderator")
    tab.go("/console/s/s1/queue/")
    page = tab.page
    badge = page.locator(f"tr[data-id='{dup}'] .badge-duplicate")
    assert badge.inner_text() == "duplicate of a record"
    assert page.locator(f"tr[data-id='{fresh}'] .badge-duplicate").count() == 0
    badge.click()
    page.wait_for_url(f"**/records/{same}/")


# Ids, times and names in the console: never split over two lines, and an id that names an
# object (candidate, record, grant, principal, subject) is a link to it.
WRAPPED = """() => [...document.querySelectorAll('main code, main time, main .who-name')]
  .filter(e => e.getClientRects().length > 1).map(e => e.textContent)"""
UNLINKED = """() => [...document.querySelectorAll('main code')]
  .filter(e => /^(cnd|rec|grt)_/.test(e.textContent.trim()) && !e.closest('a, h1, button'))
  .map(e => e.textContent)"""


def test_ids_and_times_never_break_mid_word_and_ids_link(console, desk):
    record = desk.record("Ada prefers green tea in the morning.")
    ids = desk.capture(*[f"Ada mentioned item {i} " + "and more " * 12 for i in range(3)])
    tab = console("moderator")
    page = tab.page
    page.set_viewport_size({"width": 560, "height": 900})
    for path in (
        "/console/s/s1/queue/",
        f"/console/s/s1/candidates/{ids[0]}/",
        f"/console/s/s1/records/{record}/",
        "/console/s/s1/records/",
        "/console/s/s1/grants/",
    ):
        tab.go(path)
        page.locator("main h1").wait_for()
        assert page.evaluate(WRAPPED) == [], path
        assert page.evaluate(UNLINKED) == [], path
    tab.go("/console/s/s1/queue/")
    subject = page.locator(f"tr[data-id='{ids[0]}'] a.subject-link")
    assert subject.inner_text() == "user:ada"
    subject.click()
    page.wait_for_url("**/space/?subject=user%3Aada")
    assert page.locator("#subject-state").inner_text() == "active"


def test_a_name_shows_its_id_selected_for_copying(console, desk):
    (cid,) = desk.capture("Ada prefers tea.")
    app = Principal.objects.get(display_name="App")
    tab = console("moderator")
    tab.go(f"/console/s/s1/candidates/{cid}/")
    page = tab.page
    name = page.locator("#captured-by .who-name")
    assert name.inner_text() == "App" and name.get_attribute("title") == app.principal_id
    shown = page.locator("#captured-by .who-id")
    assert not shown.is_visible()
    name.click()
    assert shown.is_visible() and shown.inner_text() == app.principal_id
    assert page.evaluate("() => window.getSelection().toString()") == app.principal_id
