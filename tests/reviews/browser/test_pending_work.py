"""Browser: pending work on a real Celery worker. Generate a reflection and create an export,
see the pending receipt, start a worker, and watch the page update itself to done without a
reload (htmx polling), then the reflection listed (content escaped) and the export's summary.
The worker starts only after the pending state was seen, so the update is really watched."""

import pytest

from memory.models import Export, Reflection, Space
from memory.ops.base import call
from memory.services.operators import issue_root_grant
from tests.reviews.conftest import make_user
from tests.reviews.jobs import start_worker  # noqa: F401 (a fixture)

pytestmark = [pytest.mark.browser, pytest.mark.worker]

XSS = '<script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2">'
DONE_WITHIN_MS = 180_000  # a deadline so a broken worker fails the test; no timing is asserted


@pytest.fixture
def ada(transactional_db):
    space = Space.objects.create(space_id="s1", display_name="Support team")
    _, mod = make_user("moderator")
    issue_root_grant(space, mod)
    call(
        mod,
        "memory.subjects.ensure",
        {"space_id": "s1", "subject_id": "user:ada", "kind": "acme:user"},
    )

    def write(text: str, kind: str = "fact") -> None:
        call(
            mod,
            "memory.records.create",
            {
                "space_id": "s1",
                "subject_id": "user:ada",
                "kind": kind,
                "placement": {"scope": "shared"},
                "content": {"text": text},
            },
        )

    for text, kind in [
        ("Ada prefers email over phone calls.", "preference"),
        ("Ada lives in Lisbon.", "fact"),
        ("Ada plans a trip to Porto in May.", "plan"),
        (XSS, "note"),
    ]:
        write(text, kind)
    return write


def watch_to_done(tab, card: str, start) -> None:
    """The card shows its receipt pending and polls; only then a worker starts, and the card
    updates itself to committed with no navigation of the page, and stops polling."""
    tab.page.locator(f'{card} .receipt-status[data-status="pending"]').wait_for()
    assert tab.page.locator(card).get_attribute("hx-trigger") == "every 2s"
    seen: list[str] = []
    tab.page.on(
        "framenavigated", lambda f: seen.append(f.url) if f == tab.page.main_frame else None
    )
    start()
    done = tab.page.locator(f'{card} .receipt-status[data-status="committed"]')
    done.wait_for(timeout=DONE_WITHIN_MS)
    assert seen == []  # updated in place: no reload, no navigation
    assert tab.page.locator(card).get_attribute("hx-trigger") is None


def test_generate_a_reflection_and_watch_it_finish(console, ada, start_worker):  # noqa: F811
    tab = console("moderator")
    tab.go("/console/s/s1/space/?subject=user:ada")
    tab.page.click("#subject-reflections")
    tab.page.locator("#no-reflections").wait_for()
    tab.page.click("#generate-button")
    assert "Generation admitted" in tab.page.locator(".msg-success").inner_text()
    watch_to_done(tab, "#generation", start_worker)
    first = Reflection.objects.get().reflection_id
    article = tab.page.locator(f"article#{first}")
    assert "Ada prefers email over phone calls." in article.inner_text()
    assert "<script>window.__pwned = 1</script>" in article.inner_text()  # shown as text
    assert tab.page.evaluate("window.__pwned") is None
    assert "current" in tab.page.locator("#latest").inner_text()

    # A new record makes it stale; a second generation (the worker is still up) is current.
    ada("Ada switched to tea in the afternoon.", "preference")
    tab.page.reload()
    assert tab.page.locator(f"article#{first} .badge-stale").inner_text() == "stale"
    # The reloaded page still shows the first receipt's committed card: wait for the page the
    # click leads to before looking for "committed" again.
    with tab.page.expect_navigation():
        tab.page.click("#generate-button")
    tab.page.locator('#generation .receipt-status[data-status="committed"]').wait_for(
        timeout=DONE_WITHIN_MS
    )
    second = Reflection.objects.exclude(reflection_id=first).get().reflection_id
    tab.page.locator(f"article#{second} .badge-current").wait_for()
    assert tab.page.locator("article.reflection").count() == 2
    assert tab.page.evaluate("window.__pwned") is None
    tab.shot("reflections")


def test_create_an_export_and_watch_it_finish(console, ada, start_worker):  # noqa: F811
    tab = console("moderator")
    tab.go("/console/s/s1/queue/")
    tab.page.click("nav.space-nav a:text('Exports')")
    tab.page.locator("#no-exports").wait_for()
    tab.page.click("#export-button")
    watch_to_done(tab, "article.export", start_worker)
    export = Export.objects.get()
    assert export.state == "ready"
    card = tab.page.locator("article.export")
    assert card.locator(".bundle-digest").inner_text() == export.bundle["bundle_digest"]
    assert card.locator(".chunk-count").inner_text() == str(export.bundle["chunk_count"])
    assert "record 4" in card.locator(".object-counts").inner_text()
    assert "Lisbon" not in tab.page.content()  # a summary, never the bundle's content
    tab.shot("exports")
