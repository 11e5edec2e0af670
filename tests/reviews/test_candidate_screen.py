"""Candidate screen: content shown as text, structured, cognition; promote/fragment/drop/dismiss;
the 'another reviewer got there first' notice."""

import re

import pytest

from memory.models import Candidate, Receipt, Record, Space
from memory.ops.base import call
from memory.services.operators import issue_root_grant
from memory.wire.errors import WireError
from reviews.console import describe, field_words
from tests.reviews.conftest import ctx, logged_in, make_user

pytestmark = pytest.mark.django_db

COGNITION = [
    {
        "view": "recorded_at",
        "type": "belief",
        "proposition": "tea is better",
        "attribution": {"holder": "ada", "source": "self_report"},
        "basis": {"kind": "stated"},
        "times": {"recorded_at": "2026-01-02T03:04:05.000Z"},
        "confidence": 0.8,
    }
]


def page(client, cid):
    return client.get(f"/console/s/s1/candidates/{cid}/")


def review(client, cid, **data):
    return client.post(
        f"/console/s/s1/candidates/{cid}/review/",
        {"idempotency_key": "k-" + cid, **data},
        follow=True,
    )


def test_page_shows_content_classification_scope_and_who(mod, ops, moderator):
    ops("memory.subjects.ensure", {"space_id": "s1", "subject_id": "u1"})
    receipt = ops(
        "memory.capture",
        {
            "space_id": "s1",
            "subject_id": "u1",
            "capture_scope": {
                "placement": {"scope": "context", "context_id": "support"},
                "source_context_id": "chat",
            },
            "items": [
                {
                    "content": {
                        "text": "Ada prefers tea.",
                        "structured": {"drink": "tea"},
                        "cognition": COGNITION,
                    }
                }
            ],
        },
    )["receipt"]
    cid = receipt["refs"][0]["id"]
    html = page(mod, cid).content.decode()
    assert "Ada prefers tea." in html
    assert "&quot;drink&quot;: &quot;tea&quot;" in html  # pretty-printed, escaped
    assert "<td>tea is better</td>" in html and "<td>belief</td>" in html
    assert "context <code>support</code>" in html and "<code>chat</code>" in html
    # captured by: the display name, the id in the tooltip
    assert f'title="{moderator.principal.principal_id}"' in html
    assert ">Moderator</span>" in html
    assert "preference_verb" in html  # a signal of the classification


def test_untrusted_content_is_escaped(mod, capture):
    (cid,) = capture("<script>alert(1)</script><img src=x onerror=alert(2)>")
    html = page(mod, cid).content.decode()
    assert "<script>alert(1)</script>" not in html and "<img src=x" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;&lt;img src=x onerror=alert(2)&gt;" in html


def test_promote_with_edited_text_and_kind(mod, capture):
    (cid,) = capture("Ada prefers tea.")
    review(mod, cid, action="promote", text="Ada prefers green tea.", kind="preference")
    record = Record.objects.get(prov_candidate_id=cid)
    assert record.content["text"] == "Ada prefers green tea." and record.kind == "preference"
    assert Candidate.objects.get(candidate_id=cid).state == "promoted"


def test_promote_as_proposed_sends_no_override(mod, capture):
    (cid,) = capture("Ada prefers tea.")
    review(mod, cid, action="promote", text="Ada prefers tea.", kind="")
    record = Record.objects.get(prov_candidate_id=cid)
    assert record.content == {"text": "Ada prefers tea."} and record.kind == "preference"


def test_fragment_into_two(mod, capture):
    (cid,) = capture("Ada prefers tea and lives in Lisbon.")
    review(
        mod,
        cid,
        action="fragment",
        fragment_text=["Ada prefers tea.", "Ada lives in Lisbon.", "  "],
        fragment_kind=["preference", "fact", ""],
    )
    records = sorted(Record.objects.filter(prov_candidate_id=cid).values_list("kind", "text"))
    assert records == [("fact", "Ada lives in Lisbon."), ("preference", "Ada prefers tea.")]


def test_fragment_with_no_text_changes_nothing(mod, capture):
    (cid,) = capture("x")
    response = review(mod, cid, action="fragment", fragment_text=[" "], fragment_kind=[""])
    assert response.status_code == 400 and b"at least one" in response.content
    assert Candidate.objects.get(candidate_id=cid).state == "pending"


def test_drop_with_reason_and_dismiss(mod, capture):
    a, b = capture("one", "two")
    review(mod, a, action="drop", reason="duplicate")
    review(mod, b, action="dismiss")
    assert Candidate.objects.get(candidate_id=a).outcome == {
        "action": "drop",
        "record_ids": [],
        "reason": "duplicate",
    }
    assert Candidate.objects.get(candidate_id=b).state == "dismissed"
    assert not Record.objects.exists()


def test_after_an_action_the_next_pending_candidate_opens(mod, capture):
    a, b = capture("one", "two")
    response = mod.post(
        f"/console/s/s1/candidates/{a}/review/", {"action": "drop", "idempotency_key": "x"}
    )
    assert response["Location"] == f"/console/s/s1/candidates/{b}/"
    last = mod.post(
        f"/console/s/s1/candidates/{b}/review/", {"action": "drop", "idempotency_key": "y"}
    )
    assert last["Location"] == "/console/s/s1/queue/"


def test_double_submit_promotes_once(mod, capture):
    (cid,) = capture("Ada prefers tea.")
    review(mod, cid, action="promote", text="Ada prefers tea.")
    second = review(mod, cid, action="promote", text="Ada prefers tea.")
    assert Record.objects.filter(prov_candidate_id=cid).count() == 1
    assert b"got there first" not in second.content


def test_another_reviewer_got_there_first(mod, capture, ops, space):
    (cid,) = capture("Ada prefers tea.")
    _, other = make_user("other")
    issue_root_grant(space, other)
    call(
        other,
        "memory.candidates.review",
        {"space_id": "s1", "candidate_id": cid, "decision": {"action": "drop"}},
    )
    response = review(mod, cid, action="promote", text="Ada prefers tea.")
    assert response.status_code == 200
    assert (
        f"(candidate {cid}) was already dropped".encode() in response.content
        and b"Another reviewer got there first: \xe2\x80\x9c" in response.content
    )
    assert not Record.objects.exists()


def test_frozen_space_blocks_review_with_a_message(mod, capture):
    (cid,) = capture("Ada prefers tea.")
    Space.objects.filter(space_id="s1").update(state="frozen")
    response = review(mod, cid, action="promote", text="edited")
    assert response.status_code == 409
    assert b"SPACE_FROZEN" in response.content
    assert b"edited" in response.content  # the edit is kept in the form
    assert Candidate.objects.get(candidate_id=cid).state == "pending"


def test_bad_kind_is_explained_and_changes_nothing(mod, capture):
    (cid,) = capture("x")
    response = review(mod, cid, action="promote", kind="Not A Kind")
    assert response.status_code == 400
    html = response.content.decode()
    assert 'id="kind-error"' in html and "Kind: lower-case letters" in html
    assert "got &#x27;Not A Kind&#x27;" in html
    assert Candidate.objects.get(candidate_id=cid).state == "pending"


def test_reviewer_without_records_write_is_denied(capture, ops, stranger):
    (cid,) = capture("x")
    ops(
        "memory.grants.grant",
        {
            "space_id": "s1",
            "grantee_principal_id": stranger.principal.principal_id,
            "capabilities": ["review"],
            "shared_access": True,
        },
    )
    response = review(logged_in(stranger), cid, action="promote")
    assert response.status_code == 403 and b"PERMISSION_DENIED" in response.content


def test_outsider_sees_not_found(capture, stranger):
    (cid,) = capture("secret")
    client = logged_in(stranger)
    assert page(client, cid).status_code == 404
    assert (
        client.post(f"/console/s/s1/candidates/{cid}/review/", {"action": "drop"}).status_code
        == 404
    )
    assert Candidate.objects.get(candidate_id=cid).state == "pending"


# ---- evidence ----------------------------------------------------------------------------------


def test_similar_records_with_score_and_a_duplicate_mark(mod, capture, record):
    same = record("Ada prefers green tea in the morning.", kind="preference")
    other = record("Ada lives in Lisbon.", kind="fact")
    (cid,) = capture("Ada prefers green tea in the morning!")
    response = page(mod, cid)
    similar = {s["record"]["record_id"]: s for s in response.context["similar"]}
    assert similar[same]["duplicate"] and similar[same]["overlap"] == 1.0
    assert other not in similar or not similar[other]["duplicate"]
    html = response.content.decode()
    assert 'id="duplicate-mark"' in html and f"Drop as duplicate of {same}" in html
    assert "at 85% or more" in html  # the threshold is stated, as a percentage
    assert f'href="/console/s/s1/records/{same}/"' in html


def test_only_a_likely_duplicate_gets_the_loud_drop_button(mod, capture, record):
    """Every similar record can be named in a drop, but a record that merely resembles the
    candidate (recall finds something for any text of the subject) must not look like the
    obvious next click."""
    same = record("Ada prefers green tea in the morning.", kind="preference")
    other = record("Ada prefers to travel by train in the spring.", kind="preference")
    (cid,) = capture("Ada prefers green tea in the morning!")
    html = page(mod, cid).content.decode()
    found = re.findall(r'class="([^"]*)"[^>]*>Drop as duplicate of (rec_[0-9A-Z]+)<', html)
    by_record = {rid: cls for cls, rid in found}
    assert by_record[same] == "danger"
    assert by_record[other] == "quiet"  # drawn plainly: no red (static/reviews/console.css)


def test_drop_as_duplicate_records_which_one(mod, capture, record):
    same = record("Ada prefers tea.", kind="preference")
    (cid,) = capture("Ada prefers tea.")
    review(mod, cid, action="drop", duplicate_of=same)
    cand = Candidate.objects.get(candidate_id=cid)
    assert cand.state == "dropped" and cand.outcome["reason"] == f"duplicate of {same}"


def test_newest_records_and_profile_documents(mod, ops, capture, record):
    old = record("First thing.")
    new = record("<b>Second</b> thing.")
    ops(
        "memory.profile.update",
        {
            "space_id": "s1",
            "subject_id": "u1",
            "kind": "persona",
            "content": {"text": "<i>Ada</i>"},
        },
    )
    (cid,) = capture("Something else entirely.")
    response = page(mod, cid)
    assert [r["record_id"] for r in response.context["newest"]] == [new, old]
    html = response.content.decode()
    assert "&lt;b&gt;Second&lt;/b&gt;" in html and "<b>Second" not in html
    assert "persona" in html and "&lt;i&gt;Ada&lt;/i&gt;" in html


def test_panels_without_their_grant_say_so(capture, give, stranger):
    (cid,) = capture("Ada prefers tea.")
    give(stranger, "review", "records_write", shared_access=True)
    response = page(logged_in(stranger), cid)
    assert response.status_code == 200
    html = response.content.decode()
    assert "Your grants do not include recall on this subject." in html
    assert "Your grants do not include records_read on this subject." in html


def test_provenance_names_people_and_times(mod, capture, moderator):
    (cid,) = capture("x")
    html = page(mod, cid).content.decode()
    assert 'id="captured-by"><span class="who-name"' in html and ">Moderator<" in html
    assert "<time datetime=" in html and "just now</time>" in html


def test_frozen_space_is_a_banner_and_disables_actions(mod, ops, capture):
    (cid,) = capture("x")
    ops("memory.spaces.freeze", {"space_id": "s1", "reason": "audit <now>"})
    html = page(mod, cid).content.decode()
    assert 'id="blocked-banner"' in html and "The space is frozen: audit &lt;now&gt;." in html
    assert '<fieldset class="row actions" data-keyboard="candidate" disabled' in html
    ops("memory.spaces.unfreeze", {"space_id": "s1"})
    assert 'id="blocked-banner"' not in page(mod, cid).content.decode()


def test_fenced_capture_context_is_a_banner(mod, ops, capture):
    (cid,) = capture("x", placement=ctx("sales"))
    ops(
        "memory.subjects.fence",
        {"space_id": "s1", "subject_id": "u1", "action": "fence", "context_id": "sales"},
    )
    html = page(mod, cid).content.decode()
    assert "The capture context sales is fenced for this subject." in html
    ops("memory.subjects.fence", {"space_id": "s1", "subject_id": "u1", "action": "fence"})
    assert "The subject u1 is fenced" in page(mod, cid).content.decode()


def test_promote_with_the_text_emptied_is_refused_with_a_field_message(mod, capture):
    (cid,) = capture("Ada prefers tea.")
    before = Receipt.objects.count()
    response = review(mod, cid, action="promote", text=" \r\n ")
    assert response.status_code == 400
    html = response.content.decode()
    assert 'id="text-error"' in html and "The text is empty" in html
    assert 'aria-invalid="true"' in html
    assert Candidate.objects.get(candidate_id=cid).state == "pending"
    assert Receipt.objects.count() == before and not Record.objects.exists()


def test_bad_fragment_kind_names_the_fragment(mod, capture):
    (cid,) = capture("x")
    response = review(
        mod, cid, action="fragment", fragment_text=["a", "b"], fragment_kind=["fact", "Bad!"]
    )
    assert response.status_code == 400 and b"Fragment 2: Kind: lower-case" in response.content
    assert Candidate.objects.get(candidate_id=cid).state == "pending"


@pytest.mark.parametrize(
    "path, words",
    [
        ("/decision/kind", "Kind"),
        ("/decision/fragments/0/kind", "Fragment 1 kind"),
        ("/decision/content_override/text", "Text"),
        ("", "The request"),
    ],
)
def test_schema_errors_are_named_in_words(path, words):
    err = WireError(
        "invalid_input",
        "The request does not match the op's schema.",
        reason="schema",
        errors=[{"path": path, "message": "is too long"}],
    )
    assert field_words(path) == words
    assert describe(err) == f"{words}: is too long (invalid_input)"


def test_a_review_post_with_the_filters_and_a_crlf_text(mod, capture):
    (cid,) = capture("Ada prefers tea.")
    review(mod, cid, action="promote", text="Ada prefers tea.\r\nAnd cake.", label="preference")
    assert (
        Record.objects.get(prov_candidate_id=cid).content["text"] == "Ada prefers tea.\nAnd cake."
    )
