"""Reflections screen: a subject's reflections with their stale badge and the reflection state,
Generate (idempotent, gated like the API, errors as messages), and the generation's progress
fragment, which polls itself while the receipt is pending and brings the refreshed list once it
is terminal. Jobs are run in-process with the suite's helper (tests/memory/async); the browser
test runs them on a real worker."""

import pytest
from django.test import Client

from memory.models import Job, Receipt, Reflection
from tests.reviews.conftest import ctx, logged_in
from tests.reviews.jobs import run_pending

pytestmark = pytest.mark.django_db

PAGE = "/console/s/s1/subjects/u1/reflections/"
GENERATE = PAGE + "generate/"
OP = "memory.reflections.generate"
POLL = 'hx-trigger="every 2s"'


@pytest.fixture
def three(record):
    return [
        record("Ada prefers green tea.", kind="preference"),
        record("Ada lives in Lisbon.", kind="fact"),
        record("Ada plans a trip to Porto.", kind="plan", placement=ctx("travel")),
    ]


def generate(client, key: str = "g1"):
    return client.post(GENERATE, {"idempotency_key": key}, follow=True)


def receipt_of(response) -> str:
    return response.redirect_chain[-1][0].split("receipt=")[1]


def fragment(client, receipt_id: str) -> str:
    response = client.get(f"{PAGE}receipts/{receipt_id}/")
    assert response.status_code == 200
    return response.content.decode()


def nothing_generated() -> bool:
    return (
        not Receipt.objects.filter(op=OP).exists()
        and not Job.objects.exists()
        and not Reflection.objects.exists()
    )


def test_page_shows_state_and_a_generate_form(mod, three):
    html = mod.get(PAGE).content.decode()
    assert 'id="record-count">3 (at least 3 needed)' in html
    assert 'id="missing-kinds">none' in html and 'id="latest">none yet' in html
    assert 'id="no-reflections"' in html
    assert 'name="csrfmiddlewaretoken"' in html and 'name="idempotency_key"' in html
    assert f'action="{GENERATE}"' in html


def test_generate_shows_pending_progress_then_the_reflection_without_reload(mod, three):
    response = generate(mod)
    assert response.status_code == 200 and b"Generation admitted" in response.content
    receipt_id = receipt_of(response)
    html = response.content.decode()
    assert 'id="generation"' in html and POLL in html and 'data-status="pending"' in html
    assert 'id="no-reflections"' in html

    pending = fragment(mod, receipt_id)
    assert POLL in pending and 'data-status="pending"' in pending and "hx-swap-oob" not in pending

    assert run_pending(receipt_id).status == "committed"
    done = fragment(mod, receipt_id)
    reflection = Reflection.objects.get()
    assert POLL not in done and "hx-get" not in done and 'data-status="committed"' in done
    assert f'id="generated">Reflection <a href="#{reflection.reflection_id}">' in done
    # The terminal answer carries the refreshed panel out of band: state and the new reflection.
    assert 'id="reflection-panel" hx-swap-oob="true"' in done
    assert f'id="{reflection.reflection_id}"' in done and "Ada prefers green tea." in done
    assert (
        f'<code>{reflection.reflection_id}</code></a> <span class="badge badge-current">current'
        in done
    )

    page = mod.get(PAGE).content.decode()
    assert f'id="{reflection.reflection_id}"' in page and "badge-stale" not in page


def test_a_reflection_turns_stale_when_its_records_change(mod, three, record):
    receipt_id = receipt_of(generate(mod))
    run_pending(receipt_id)
    rid = Reflection.objects.get().reflection_id
    record("Ada now prefers coffee.", kind="preference")
    html = mod.get(PAGE).content.decode()
    # The list's read-time `stale`, and the state's latest_reflection.stale.
    assert f'<code>{rid}</code></a> <span class="badge badge-stale"' in html
    assert (
        f'id="latest"><a href="#{rid}"><code>{rid}</code></a> <span class="badge badge-stale">stale'
        in html
    )
    assert 'id="record-count">4' in html


def test_reflection_content_is_escaped(mod, record):
    record("<script>alert(1)</script>", kind="note")
    record("<img src=x onerror=alert(2)>", kind="note")
    record("plain", kind="note")
    receipt_id = receipt_of(generate(mod))
    run_pending(receipt_id)
    for html in (fragment(mod, receipt_id), mod.get(PAGE).content.decode()):
        assert "<script>alert(1)" not in html and "<img src=x" not in html
        assert (
            "&lt;script&gt;alert(1)&lt;/script&gt;" in html
            and "&lt;img src=x onerror=alert(2)&gt;" in html
        )


def test_double_submit_with_the_same_key_is_one_receipt_and_one_job(mod, three):
    first = receipt_of(generate(mod, "same"))
    second = receipt_of(generate(mod, "same"))
    assert first == second
    assert Receipt.objects.filter(op=OP).count() == 1 and Job.objects.count() == 1
    assert receipt_of(generate(mod, "other")) != first
    assert Receipt.objects.filter(op=OP).count() == 2


def test_insufficient_data_is_a_message_and_nothing_is_created(mod, record):
    record("only one")
    record("and two")
    response = generate(mod)
    assert response.status_code == 200
    assert (
        b"Too few eligible records to generate a reflection. (INSUFFICIENT_DATA)"
        in response.content
    )
    assert b"not enough yet" in response.content
    assert nothing_generated()


def test_missing_required_profile_is_a_message(mod, three, settings):
    settings.SPOKE_MEMORY_REQUIRED_PROFILE_KINDS = ["personality"]
    response = generate(mod)
    assert b"REQUIRED_PROFILE_MISSING" in response.content
    assert b'id="missing-kinds">personality' in response.content
    assert nothing_generated()


def test_frozen_space_is_a_message_and_nothing_is_created(mod, three, ops):
    ops("memory.spaces.freeze", {"space_id": "s1", "reason": "audit"})
    response = generate(mod)
    assert response.status_code == 200 and b"SPACE_FROZEN" in response.content
    assert nothing_generated()


def test_fenced_subject_is_a_message(mod, three, ops):
    ops("memory.subjects.fence", {"space_id": "s1", "subject_id": "u1", "action": "fence"})
    response = generate(mod)
    assert b"SUBJECT_FENCED" in response.content
    assert nothing_generated()


def test_reader_without_generate_gets_permission_denied(three, give, stranger):
    give(stranger, "reflections_read", shared_access=True)
    client = logged_in(stranger)
    assert client.get(PAGE).status_code == 200
    response = generate(client)
    assert response.status_code == 200 and b"PERMISSION_DENIED" in response.content
    assert nothing_generated()


def test_a_failed_generation_shows_its_failure_and_stops_polling(mod, three, ops):
    receipt_id = receipt_of(generate(mod))
    ops("memory.records.delete", {"space_id": "s1", "record_id": three[0], "expected_revision": 1})
    assert run_pending(receipt_id).status == "failed"
    done = fragment(mod, receipt_id)
    assert POLL not in done and 'data-status="failed"' in done
    assert "(INSUFFICIENT_DATA)" in done and 'id="no-reflections"' in done


def test_without_coverage_everything_is_not_found(mod, three, stranger):
    receipt_id = receipt_of(generate(mod))
    client = logged_in(stranger)
    assert client.get(PAGE).status_code == 404
    assert client.get(f"{PAGE}receipts/{receipt_id}/").status_code == 404
    assert client.post(GENERATE, {"idempotency_key": "x"}).status_code == 404
    assert Receipt.objects.filter(op=OP).count() == 1


def test_a_grant_without_reflections_read_is_not_found(three, give, stranger):
    give(stranger, "records_read", shared_access=True)
    assert logged_in(stranger).get(PAGE).status_code == 404


def test_receipts_of_others_and_of_other_ops_are_not_shown(mod, three, ops, give, stranger):
    receipt_id = receipt_of(generate(mod))
    give(stranger, "reflections_read", "reflections_generate")
    # Not the stranger's receipt and the stranger is no space admin: memory.receipts.get says NOT_FOUND.
    assert logged_in(stranger).get(f"{PAGE}receipts/{receipt_id}/").status_code == 404
    assert logged_in(stranger).get(f"{PAGE}?receipt={receipt_id}").status_code == 404
    freeze = ops("memory.spaces.freeze", {"space_id": "s1"})["receipt"]["receipt_id"]
    assert mod.get(f"{PAGE}receipts/{freeze}/").status_code == 404


def test_unknown_subject_is_not_found(mod, three):
    assert mod.get("/console/s/s1/subjects/ghost/reflections/").status_code == 404
    assert (
        mod.post(
            "/console/s/s1/subjects/ghost/reflections/generate/", {"idempotency_key": "x"}
        ).status_code
        == 404
    )


def test_generate_needs_the_csrf_token(moderator, three):
    client = Client(enforce_csrf_checks=True)
    client.force_login(moderator)
    assert client.post(GENERATE, {"idempotency_key": "k"}).status_code == 403
    assert nothing_generated()


def test_links_from_the_subject_and_record_pages(mod, three):
    assert (
        f'id="subject-reflections" href="{PAGE}"'
        in mod.get("/console/s/s1/space/?subject=u1").content.decode()
    )
    assert f'href="{PAGE}"' in mod.get(f"/console/s/s1/records/{three[0]}/").content.decode()


def test_older_pages_follow_the_ops_cursor_and_an_outdated_one_says_so(mod, three, monkeypatch):
    monkeypatch.setattr("reviews.views.reflections.PAGE_SIZE", 1)
    for key in ("a", "b"):
        run_pending(receipt_of(generate(mod, key)))
    older, newer = Reflection.objects.order_by("generated_at", "reflection_id")
    first = mod.get(PAGE).content.decode()
    assert f'id="{newer.reflection_id}"' in first and f'id="{older.reflection_id}"' not in first
    cursor = first.split('id="older" href="?cursor=')[1].split('"')[0]
    second = mod.get(f"{PAGE}?cursor={cursor}").content.decode()
    assert f'id="{older.reflection_id}"' in second and 'id="older"' not in second
    run_pending(receipt_of(generate(mod, "c")))  # the subject's revision moves: the cursor is void
    outdated = mod.get(f"{PAGE}?cursor={cursor}")
    assert outdated.status_code == 200
    assert b"The reflections changed since that page was drawn" in outdated.content
