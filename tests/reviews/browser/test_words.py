"""Browser (issue 41, item 5): the console speaks in words. A moderator opens the space's subject
list from the navigation, searches it, follows a subject's pending count into its filtered
queue, promotes a candidate and reads the flash, the tab title and "My recent actions" naming the
memory by its first words and subject; the candidate page shows word overlap as a labelled
percentage, red only for a likely duplicate. Screenshots: subjects, candidate-words,
recent-words (var/screenshots, or docs/screenshots with SPOKE_MEMORY_SCREENSHOTS_DIR)."""

import pytest

from memory.models import Space
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

    def capture(subject_id: str, *texts: str) -> list[str]:
        call(app, "memory.subjects.ensure", {"space_id": "s1", "subject_id": subject_id})
        receipt = call(
            app,
            "memory.capture",
            {
                "space_id": "s1",
                "subject_id": subject_id,
                "capture_scope": {"placement": {"scope": "shared"}},
                "items": [{"content": {"text": t}} for t in texts],
            },
        )["receipt"]
        return [r["id"] for r in receipt["refs"] if r["type"] == "candidate"]

    def record(subject_id: str, text: str) -> str:
        call(app, "memory.subjects.ensure", {"space_id": "s1", "subject_id": subject_id})
        receipt = call(
            app,
            "memory.records.create",
            {
                "space_id": "s1",
                "subject_id": subject_id,
                "kind": "preference",
                "placement": {"scope": "shared"},
                "content": {"text": text},
            },
        )["receipt"]
        return next(r["id"] for r in receipt["refs"] if r["type"] == "record")

    return capture, record


def test_subjects_search_then_promote_speaks_in_words(console, desk):
    capture, record = desk
    record("user:ada", "Ada prefers green tea in the morning.")
    record("user:ada", "Ada lives in Lisbon.")
    (tea,) = capture("user:ada", "Ada prefers green tea in the morning!")
    capture("user:grace", "Grace wants a quote for 40 seats before the end of the quarter.")
    tab = console("moderator")
    page = tab.page
    tab.go("/console/s/s1/queue/")
    page.click("nav.space-nav a:text('Subjects')")
    page.wait_for_url("**/console/s/s1/subjects/")
    rows = page.locator("tr.subject-row")
    assert rows.count() >= 2
    ada = rows.filter(has_text="user:ada")
    assert ada.locator(".count-records").inner_text() == "2"
    assert ada.locator(".count-pending").inner_text() == "1"
    tab.shot("subjects")
    page.fill("#subject-search input[name=q]", "grace")
    page.click("#subject-search button[type=submit]")
    page.wait_for_url("**/subjects/?q=grace")
    assert rows.count() == 1 and "user:grace" in rows.first.inner_text()
    page.fill("#subject-search input[name=q]", "ada")
    page.click("#subject-search button[type=submit]")
    page.wait_for_url("**/subjects/?q=ada")
    rows.first.locator(".count-pending a").click()
    page.wait_for_url("**/queue/?subject=user%3Aada")
    page.click(f"a[href*='/candidates/{tea}/']")
    page.locator("#promote-form").wait_for()
    assert page.title().startswith("“Ada prefers green tea in the morning!” · user:ada")
    duplicate = page.locator("tr.similar-row.duplicate")
    assert duplicate.count() == 1
    assert "100% word overlap" in " ".join(duplicate.locator("td.overlap").inner_text().split())
    red = duplicate.locator("button.danger")
    assert red.count() == 1
    quiet = page.locator("tr.similar-row:not(.duplicate) button.quiet")
    assert quiet.count() >= 1
    tab.shot("candidate-words")
    page.click("#promote-button")
    flash = page.locator(".msg-success").first
    flash.wait_for()
    text = flash.inner_text()
    assert text.startswith("Promoted “Ada prefers green tea in the morning!” about user:ada")
    assert tea in text  # the id, after the words
    recent = page.locator("#recent .recent-item").first
    recent.wait_for()
    assert "“Ada prefers green tea in the morning!”" in recent.inner_text()
    assert "user:ada" in recent.inner_text()
    tab.shot("recent-words")
