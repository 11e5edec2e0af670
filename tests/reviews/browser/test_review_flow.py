"""Browser: a moderator's day — queue, promote with an edit, fragment, drop, the race notice,
untrusted content, a frozen space, keyboard shortcuts. Screenshots of each main screen."""

import pytest

from memory.models import Candidate, Record, Space
from memory.ops.base import call
from memory.services.operators import issue_root_grant
from tests.reviews.conftest import make_user

pytestmark = pytest.mark.browser

XSS = "<script>window.__pwned = 1; alert('x')</script><img src=x onerror=\"window.__pwned = 2; alert('y')\">"


@pytest.fixture
def desk(transactional_db):
    space = Space.objects.create(space_id="s1", display_name="Support team")
    _, mod = make_user("moderator")
    _, second = make_user("second")
    _, app = make_user("app")
    for p in (mod, second, app):
        issue_root_grant(space, p)
    call(app, "memory.subjects.ensure", {"space_id": "s1", "subject_id": "user:ada"})

    def capture(*texts, placement=None):
        receipt = call(
            app,
            "memory.capture",
            {
                "space_id": "s1",
                "subject_id": "user:ada",
                "capture_scope": {
                    "placement": placement or {"scope": "context", "context_id": "support"}
                },
                "items": [{"content": {"text": t}} for t in texts],
            },
        )["receipt"]
        return [r["id"] for r in receipt["refs"] if r["type"] == "candidate"]

    return capture


def test_queue_promote_with_edit_then_record_is_listed(console, desk):
    cid, _ = desk("Ada prefers email over phone calls.", "Ada moved to Lisbon last spring.")
    tab = console("moderator")
    tab.go("/console/s/s1/queue/")
    tab.page.locator("tr.candidate-row").first.wait_for()
    assert "2 pending candidates" in tab.page.locator("#queue-counts").inner_text()
    assert tab.page.locator("tr.candidate-row td").nth(5).inner_text() == "context support"
    tab.shot("queue")
    tab.page.click(f"a[href$='/candidates/{cid}/']")
    tab.page.locator("#promote-form").wait_for()
    # the console serves no docs/ files: a moderator reads why the score is not shown, not a
    # repository path that is neither a link nor reachable from the browser
    similar = tab.page.locator("#similar").inner_text()
    assert "docs/" not in similar and ".md" not in similar
    assert "it is not a measure of likeness, so it is not shown" in similar
    tab.shot("candidate")
    tab.page.fill("#promote-text", "Ada prefers email, never phone calls.")
    tab.page.fill("#promote-kind", "preference")
    tab.page.click("#promote-button")
    tab.page.locator(".msg-success").wait_for()
    record = Record.objects.get(prov_candidate_id=cid)
    tab.go("/console/s/s1/records/?subject=user:ada")
    row = tab.page.locator("#records tbody tr").first
    assert "Ada prefers email, never phone calls." in row.inner_text()
    assert record.record_id in row.inner_text()
    # the placement in the queue's words (its "Capture scope" column: "context support")
    assert row.locator("td").nth(4).inner_text() == "context support"
    tab.shot("records")
    tab.page.click(f"a[href$='/records/{record.record_id}/']")
    tab.page.locator("#history").wait_for()
    tab.shot("record")


def test_fragment_into_two_records(console, desk):
    (cid,) = desk("Ada prefers tea and lives in Lisbon.")
    tab = console("moderator")
    tab.go(f"/console/s/s1/candidates/{cid}/")
    page = tab.page
    page.locator("#fragments textarea").first.fill("Ada prefers tea.")
    page.locator("#fragments input[name=fragment_kind]").first.fill("preference")
    page.click("#add-fragment")
    page.click("#add-fragment")
    assert page.locator("#fragments .fragment").count() == 3
    # Remove is a minor action: the secondary (quiet) style, never the primary one that the
    # panel's Fragment button has, for the rendered row and an added one alike
    background = "el => getComputedStyle(el).backgroundColor"
    primary = page.locator("#fragment-button").evaluate(background)
    removes = page.locator("#fragments .remove-fragment")
    for n in range(3):
        assert removes.nth(n).evaluate(background) == "rgb(255, 255, 255)" != primary
    page.locator("#fragments .remove-fragment").nth(2).click()
    assert page.locator("#fragments .fragment").count() == 2
    page.locator("#fragments textarea").nth(1).fill("Ada lives in Lisbon.")
    page.locator("#fragments input[name=fragment_kind]").nth(1).fill("fact")
    tab.shot("candidate-fragment")
    page.click("#fragment-button")
    page.locator(".msg-success").wait_for()
    assert sorted(Record.objects.filter(prov_candidate_id=cid).values_list("kind", "text")) == [
        ("fact", "Ada lives in Lisbon."),
        ("preference", "Ada prefers tea."),
    ]


def test_drop_with_reason(console, desk):
    (cid,) = desk("buy cheap watches")
    tab = console("moderator")
    tab.go(f"/console/s/s1/candidates/{cid}/")
    tab.page.fill("#drop-reason", "spam")
    tab.page.click("#drop-button")
    tab.page.locator(".msg-success").wait_for()
    assert Candidate.objects.get(candidate_id=cid).outcome["reason"] == "spam"


def test_two_reviewers_second_sees_the_notice(console, desk):
    (cid,) = desk("Ada prefers tea.")
    first, second = console("moderator"), console("second")
    first.go(f"/console/s/s1/candidates/{cid}/")
    second.go(f"/console/s/s1/candidates/{cid}/")
    first.page.click("#promote-button")
    first.page.locator(".msg-success").wait_for()
    second.page.click("#drop-button")
    notice = second.page.locator(".msg-info")
    notice.wait_for()
    assert "Another reviewer got there first: “" in notice.inner_text()
    assert f"(candidate {cid}) was already promoted" in notice.inner_text()
    second.shot("another-reviewer-first")
    assert Candidate.objects.get(candidate_id=cid).state == "promoted"


def test_untrusted_content_renders_as_text_and_runs_nothing(console, desk):
    (cid,) = desk(XSS)
    tab = console("moderator")
    for path in ("/console/s/s1/queue/", f"/console/s/s1/candidates/{cid}/"):
        tab.go(path)
        tab.page.wait_for_load_state("load")
        assert tab.page.evaluate("window.__pwned") is None
        assert tab.page.locator("img[src=x]").count() == 0
    assert tab.page.locator("#proposed-text").inner_text() == XSS
    tab.page.click("#promote-button")
    tab.page.locator(".msg-success").wait_for()
    record = Record.objects.get(prov_candidate_id=cid)
    tab.go(f"/console/s/s1/records/{record.record_id}/")
    assert tab.page.locator("#record-text").inner_text() == XSS
    assert tab.page.evaluate("window.__pwned") is None
    assert tab.dialogs == []


def test_frozen_space_blocks_review_with_a_message(console, desk):
    (cid,) = desk("Ada prefers tea.")
    tab = console("moderator")
    tab.go("/console/s/s1/space/")
    tab.page.fill("#freeze-form input[name=reason]", "audit")
    tab.page.click("#freeze-form button")
    tab.page.locator("#unfreeze-form").wait_for()
    tab.shot("space")
    tab.go(f"/console/s/s1/candidates/{cid}/")
    banner = tab.page.locator("#blocked-banner")
    assert "The space is frozen: audit." in banner.inner_text()
    assert tab.page.locator("#promote-button").is_disabled()
    assert tab.page.locator("#drop-button").is_disabled()
    tab.page.keyboard.press("p")  # the shortcuts are off too
    tab.shot("review-blocked-frozen")
    assert Candidate.objects.get(candidate_id=cid).state == "pending"


def test_keyboard_shortcuts(console, desk):
    a, b, c = desk("Ada prefers tea.", "Ada likes jazz.", "noise noise")
    tab = console("moderator")
    tab.go("/console/s/s1/queue/")
    page = tab.page
    page.locator("#shortcuts").wait_for()
    assert "promote" in page.locator("#shortcuts").inner_text()
    page.keyboard.press("j")
    page.keyboard.press("j")
    page.keyboard.press("k")
    assert page.locator("tr.candidate-row.selected").get_attribute("data-href").endswith(f"/{a}/")
    page.keyboard.press("j")
    page.keyboard.press("p")  # opens b with the promote panel
    page.wait_for_url(f"**/candidates/{b}/?do=promote")
    # the Promote button has the focus, not the text: a second p (or Enter) promotes, as the
    # README's tour says, and a click in the text still edits it first
    assert page.evaluate("document.activeElement.id") == "promote-button"
    page.keyboard.press("p")  # promotes as shown, then moves on to the next pending
    page.wait_for_url(f"**/candidates/{a}/")
    assert Candidate.objects.get(candidate_id=b).state == "promoted"
    page.keyboard.press("d")
    assert page.evaluate("document.activeElement.id") == "drop-reason"
    page.keyboard.type("dup")
    page.keyboard.press("Enter")
    page.wait_for_url(f"**/candidates/{c}/")
    assert Candidate.objects.get(candidate_id=a).outcome["reason"] == "dup"
    page.keyboard.press("f")
    assert page.evaluate("document.activeElement.name") == "fragment_text"


def test_queue_enter_f_d_open_the_highlighted_row_and_j_k_on_a_candidate_go_back(console, desk):
    """The queue's `Enter`, `f` and `d` (docs/console.md), and a candidate page's `j`/`k` back to
    the queue it was opened from, its filter kept; nothing is reviewed on the way."""
    a, b, c = desk("Ada prefers tea.", "Ada likes jazz.", "noise noise")
    tab = console("moderator")
    page = tab.page
    tab.go("/console/s/s1/queue/?subject=user:ada")
    page.locator("tr.candidate-row").first.wait_for()
    page.keyboard.press("j")
    page.keyboard.press("Enter")  # opens the highlighted row, no action ready
    page.wait_for_url(f"**/candidates/{a}/?subject=user*")
    assert page.evaluate("document.activeElement.tagName") == "BODY"
    page.keyboard.press("j")
    page.wait_for_url("**/queue/?subject=user*")
    page.keyboard.press("j")
    page.keyboard.press("j")
    page.keyboard.press("f")
    page.wait_for_url(f"**/candidates/{b}/?*do=fragment")
    assert page.evaluate("document.activeElement.name") == "fragment_text"
    page.evaluate("document.activeElement.blur()")  # keys typed in the text field are text
    page.keyboard.press("k")
    page.wait_for_url("**/queue/?subject=user*")
    for _ in range(3):
        page.keyboard.press("j")
    page.keyboard.press("d")
    page.wait_for_url(f"**/candidates/{c}/?*do=drop")
    assert page.evaluate("document.activeElement.id") == "drop-reason"
    states = Candidate.objects.filter(candidate_id__in=[a, b, c]).values_list("state", flat=True)
    assert set(states) == {"pending"}


def test_queue_shift_x_dismisses_and_shift_d_drops_the_selection_after_its_confirm(console, desk):
    a, b, c, d = desk("Ada prefers tea.", "Ada likes jazz.", "Ada runs.", "Ada reads.")
    tab = console("moderator")
    page = tab.page
    tab.go("/console/s/s1/queue/")
    page.locator("tr.candidate-row").first.wait_for()
    page.keyboard.press("x")
    page.keyboard.press("x")
    page.keyboard.press("Shift+X")
    page.locator(".msg-success").wait_for()
    states = dict(Candidate.objects.values_list("candidate_id", "state"))
    assert states == {a: "dismissed", b: "dismissed", c: "pending", d: "pending"}
    page.locator(f"tr.candidate-row[data-id='{c}']").wait_for()
    page.keyboard.press("x")
    page.keyboard.press("Shift+D")  # a drop cannot be undone: it asks once
    page.locator("#bulk-confirm").wait_for()
    assert page.locator("h1").inner_text() == "Drop 1 candidate?"
    assert Candidate.objects.get(candidate_id=c).state == "pending"
    # the confirm is kept on the keyboard: its Drop button has the focus, Enter drops
    assert page.evaluate("document.activeElement.id") == "confirm-drop"
    page.keyboard.press("Enter")
    page.locator(".msg-success").wait_for()
    states = dict(Candidate.objects.values_list("candidate_id", "state"))
    assert states == {a: "dismissed", b: "dismissed", c: "dropped", d: "pending"}


def test_queue_keys_typed_into_a_field_are_text(console, desk):
    (a,) = desk("Ada prefers tea.")
    tab = console("moderator")
    page = tab.page
    tab.go("/console/s/s1/queue/")
    page.locator("tr.candidate-row").first.wait_for()
    page.click("#bulk-form input[name=reason]")
    page.keyboard.type("jxkpfdPDX")
    assert page.input_value("#bulk-form input[name=reason]") == "jxkpfdPDX"
    assert page.locator("tr.candidate-row.selected").count() == 0
    assert page.locator("input.pick:checked").count() == 0
    assert Candidate.objects.get(candidate_id=a).state == "pending"


def test_queue_filter_updates_the_table_in_place(console, desk):
    tea, move = desk("Ada prefers tea over coffee.", "Ada moved to Lisbon last spring.")
    tab = console("moderator")
    tab.go("/console/s/s1/queue/")
    page = tab.page
    page.evaluate("window.__samePage = true")
    page.select_option("select[name=label]", "event")
    page.wait_for_url("**/queue/?*label=event*")
    page.locator(f"a[href*='/candidates/{tea}/']").wait_for(state="detached")
    assert page.locator(f"a[href*='/candidates/{move}/']").count() == 1
    assert page.evaluate("window.__samePage") is True  # swapped by htmx, not a reload
    page.keyboard.press("j")
    assert f"/{move}/?" in page.locator("tr.candidate-row.selected").get_attribute("data-href")


def test_queue_shift_d_then_tab_enter_cancels_the_drop(console, desk):
    (a,) = desk("Ada prefers tea.")
    tab = console("moderator")
    page = tab.page
    tab.go("/console/s/s1/queue/")
    page.locator("tr.candidate-row").first.wait_for()
    page.keyboard.press("x")
    page.keyboard.press("Shift+D")
    page.locator("#bulk-confirm").wait_for()
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.id") == "cancel-drop"
    page.keyboard.press("Enter")
    page.wait_for_url("**/queue/")
    page.locator(f"tr.candidate-row[data-id='{a}']").wait_for()
    assert Candidate.objects.get(candidate_id=a).state == "pending"
