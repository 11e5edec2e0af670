"""Console forms: each `.wire()` answers the op's typed request from valid input (members
absent when blank), and input a form cannot read is a message under its field, before any op
call; the views then change nothing."""

import pytest
from django.http import QueryDict

from memory.models import Receipt, Record, Subject
from memory.wire import types as t
from reviews.forms import (
    BulkForm,
    ExportForm,
    FenceForm,
    FreezeForm,
    GrantForm,
    QueueFilters,
    RecordDeleteForm,
    RecordEditForm,
    RecordFilters,
    ReviewForm,
    RevokeForm,
    SubjectForm,
    first_error,
)

CONTENT: t.Content = {"text": "Ada prefers tea.", "structured": {"drink": "tea"}}


def query(**values) -> QueryDict:
    data = QueryDict(mutable=True)
    for name, value in values.items():
        data.setlist(name, value if isinstance(value, list) else [value])
    return data


def test_queue_filters_wire_the_list_request():
    filters = QueueFilters(
        query(subject=" u1 ", label="fact", context="c2, shared c1", order="newest", cursor="cur")
    )
    assert filters.wire("s1", 50) == {
        "space_id": "s1",
        "states": ["pending"],
        "page_size": 50,
        "subject_id": "u1",
        "labels": ["fact"],
        "selection": {"mode": "contexts_and_shared", "context_ids": ["c1", "c2"]},
        "order": "newest",
        "cursor": "cur",
    }
    assert "cursor" not in filters.wire("s1", 2, paged=False)
    assert filters.filtered() and ("cursor", "cur") not in filters.hidden()


def test_queue_filters_leave_out_what_they_do_not_accept():
    filters = QueueFilters(query(label="not-a-label", order="sideways", context="shared"))
    assert filters.wire("s1", 50) == {
        "space_id": "s1",
        "states": ["pending"],
        "page_size": 50,
        "selection": {"mode": "shared"},
    }
    assert not QueueFilters(query()).filtered()


def test_bulk_form_wires_one_request_per_candidate_under_a_derived_key():
    form = BulkForm(
        query(
            action="drop",
            candidate_ids=["cnd_a", "cnd_a", "cnd_b"],
            reason=" dup ",
            idempotency_key="k",
        )
    )
    assert form.is_valid() and form.cleaned_data["candidate_ids"] == ["cnd_a", "cnd_b"]
    assert form.wire_review("s1", "cnd_b") == {
        "space_id": "s1",
        "candidate_id": "cnd_b",
        "decision": {"action": "drop", "reason": "dup"},
        "idempotency_key": "k:cnd_b",
    }
    dismiss = BulkForm(query(action="dismiss", candidate_ids=["cnd_a"], idempotency_key="k"))
    assert dismiss.is_valid()
    assert dismiss.wire_dismiss("s1", "cnd_a") == {
        "space_id": "s1",
        "candidate_id": "cnd_a",
        "idempotency_key": "k:cnd_a",
    }


def test_bulk_form_refuses_nothing_selected_and_an_unknown_action():
    assert (
        BulkForm(query(action="promote", idempotency_key="k"))
        .problem()
        .startswith("Nothing selected")
    )
    bad = BulkForm(query(action="explode", candidate_ids=["cnd_a"], idempotency_key="k"))
    assert not bad.is_valid() and bad.problem() == "Choose promote, drop or dismiss."


def test_review_form_wires_promote_with_only_the_edited_text():
    candidate = {"candidate_id": "cnd_1", "proposed": {"content": CONTENT}}
    same = ReviewForm(query(action="promote", text="Ada prefers tea.", kind=""))
    assert same.is_valid()
    assert same.wire_review("s1", candidate) == {
        "space_id": "s1",
        "candidate_id": "cnd_1",
        "decision": {"action": "promote"},
    }
    edited = ReviewForm(
        query(action="promote", text="Ada prefers green tea.\r\n", kind="preference")
    )
    assert edited.is_valid()
    assert edited.wire_review("s1", candidate)["decision"] == {
        "action": "promote",
        "kind": "preference",
        "content_override": {"text": "Ada prefers green tea.\n", "structured": {"drink": "tea"}},
    }


def test_review_form_wires_fragments_drop_and_dismiss():
    fragments = ReviewForm(
        query(action="fragment", fragment_text=["a", " ", "b"], fragment_kind=["fact", "", ""])
    )
    assert fragments.is_valid()
    assert fragments.decision(CONTENT) == {
        "action": "fragment",
        "fragments": [{"content": {"text": "a"}, "kind": "fact"}, {"content": {"text": "b"}}],
    }
    drop = ReviewForm(query(action="drop", duplicate_of="rec_1", reason="same"))
    assert drop.is_valid() and drop.decision(CONTENT) == {
        "action": "drop",
        "reason": "duplicate of rec_1: same",
    }
    dismiss = ReviewForm(query(action="dismiss", reason=""))
    assert dismiss.is_valid()
    assert dismiss.wire_dismiss("s1", "cnd_1") == {"space_id": "s1", "candidate_id": "cnd_1"}


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"action": "promote", "text": "  "}, "The text is empty"),
        ({"action": "promote", "text": "x", "kind": "Bad Kind!"}, "Kind: lower-case letters"),
        ({"action": "fragment", "fragment_text": [" "]}, "A fragment needs some text"),
        (
            {"action": "fragment", "fragment_text": ["x"], "fragment_kind": ["No"]},
            "Fragment 1: Kind:",
        ),
        ({"action": "sing"}, "Select a valid choice"),
    ],
)
def test_review_form_refuses_what_is_not_a_decision(data, message):
    form = ReviewForm(query(**data))
    assert not form.is_valid()
    assert message in " ".join(str(e) for errors in form.errors.values() for e in errors)


def test_grant_form_wires_the_grant_request():
    form = GrantForm(
        query(
            grantee_pick="prn_b",
            capabilities=["records_read", "recall"],
            subject_ids="u1, u2",
            context_ids="",
            expires_at="2027-01-31 18:00",
            parent_grant_id=" grt_1 ",
        )
    )
    assert form.is_valid()
    assert form.wire("s1") == {
        "space_id": "s1",
        "grantee_principal_id": "prn_b",
        "capabilities": ["records_read", "recall"],
        "shared_access": False,
        "subject_ids": ["u1", "u2"],
        "expires_at": "2027-01-31T18:00:00.000Z",
        "parent_grant_id": "grt_1",
    }
    nobody = GrantForm(query(capabilities=["recall"]))
    assert not nobody.is_valid() and "Grantee: pick a principal" in first_error(nobody)
    unknown = GrantForm(query(grantee_principal_id="prn_b", capabilities=["fly"]))
    assert not unknown.is_valid() and first_error(unknown).startswith("Capabilities: ")


def test_reason_forms_wire_their_ops_and_cut_a_long_reason():
    freeze = FreezeForm(query(reason="x" * 1200))
    assert freeze.is_valid() and freeze.wire("s1") == {"space_id": "s1", "reason": "x" * 1000}
    blank = RevokeForm(query(reason="  "))
    assert blank.is_valid() and blank.wire("s1", "grt_1") == {"space_id": "s1", "grant_id": "grt_1"}
    fence = FenceForm(query(subject_id=" u1 ", action="fence", context_id="c1", reason="r"))
    assert fence.is_valid()
    assert fence.wire("s1") == {
        "space_id": "s1",
        "subject_id": "u1",
        "action": "fence",
        "context_id": "c1",
        "reason": "r",
    }


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"action": "fence"}, "Subject: give the subject id."),
        ({"subject_id": "u1", "action": "melt"}, "Action: choose fence, unfence or archive."),
    ],
)
def test_fence_form_refuses_a_missing_subject_or_an_unknown_action(data, message):
    form = FenceForm(query(**data))
    assert not form.is_valid() and first_error(form) == message


RECORD = {
    "record_id": "rec_1",
    "kind": "fact",
    "content": CONTENT,
}


def test_record_forms_wire_update_and_delete_at_the_revision_read():
    edit = RecordEditForm(query(expected_revision="3", text="Ada prefers coffee.", kind="fact"))
    assert edit.is_valid()
    assert edit.wire("s1", RECORD) == {
        "space_id": "s1",
        "record_id": "rec_1",
        "expected_revision": 3,
        "content": {"text": "Ada prefers coffee.", "structured": {"drink": "tea"}},
    }
    unchanged = RecordEditForm(query(expected_revision="3", text="Ada prefers tea.", kind="fact"))
    assert unchanged.is_valid() and unchanged.wire("s1", RECORD) is None
    delete = RecordDeleteForm(query(expected_revision="3", reason="asked", confirmed="1"))
    assert delete.is_valid()
    assert delete.wire("s1", "rec_1") == {
        "space_id": "s1",
        "record_id": "rec_1",
        "expected_revision": 3,
        "reason": "asked",
    }
    forged = RecordDeleteForm(query(expected_revision="three"))
    assert not forged.is_valid() and first_error(forged).startswith("Expected revision: ")


def test_record_filters_wire_the_list_and_the_search():
    filters = RecordFilters(
        query(
            subject="u1", mode="contexts", contexts="c1 c2", kinds="fact", tombstoned="1", q=" tea "
        )
    )
    assert filters.wire("s1", 50) == {
        "space_id": "s1",
        "page_size": 50,
        "subject_id": "u1",
        "selection": {"mode": "contexts", "context_ids": ["c1", "c2"]},
        "kinds": ["fact"],
        "include_tombstoned": True,
    }
    assert filters.wire_recall("s1") == {
        "space_id": "s1",
        "subject_id": "u1",
        "query": {"text": "tea"},
        "selection": {"mode": "contexts", "context_ids": ["c1", "c2"]},
        "kinds": ["fact"],
    }
    loose = RecordFilters(query(mode="sideways", q="tea"))
    assert loose.wire("s1", 50) == {"space_id": "s1", "page_size": 50}
    assert loose.wire_recall("s1") is None  # recall is per subject


def test_subject_and_export_forms():
    assert SubjectForm(query(subject=" u1 ")).wire("s1") == {"space_id": "s1", "subject_id": "u1"}
    assert SubjectForm(query()).wire("s1") is None
    export = ExportForm(query(subject_ids="u1,u2"))
    assert export.is_valid() and export.wire("s1") == {
        "space_id": "s1",
        "subject_ids": ["u1", "u2"],
    }
    whole = ExportForm(query(subject_ids=""))
    assert whole.is_valid() and whole.wire("s1") == {"space_id": "s1"}


@pytest.mark.django_db
def test_a_fence_form_it_cannot_read_changes_nothing(mod, ops):
    ops("memory.subjects.ensure", {"space_id": "s1", "subject_id": "u1"})
    before = Receipt.objects.count()
    response = mod.post(
        "/console/s/s1/space/fence/",
        {"subject_id": "u1", "action": "melt", "idempotency_key": "a"},
        follow=True,
    )
    assert b"Action: choose fence, unfence or archive. Nothing changed." in response.content
    missing = mod.post(
        "/console/s/s1/space/fence/", {"action": "fence", "idempotency_key": "b"}, follow=True
    )
    assert b"Subject: give the subject id. Nothing changed." in missing.content
    assert Receipt.objects.count() == before
    assert Subject.objects.get(subject_id="u1").state == "active"


@pytest.mark.django_db
def test_a_record_form_with_a_forged_revision_changes_nothing(mod, record):
    rid = record("Ada")
    before = Receipt.objects.count()
    for action, data in (
        ("edit", {"expected_revision": "one", "text": "Bob", "idempotency_key": "e"}),
        ("delete", {"expected_revision": "", "confirmed": "1", "idempotency_key": "d"}),
    ):
        response = mod.post(f"/console/s/s1/records/{rid}/{action}/", data, follow=True)
        assert (
            b"Expected revision: " in response.content and b"Nothing changed." in response.content
        )
    assert Receipt.objects.count() == before
    stored = Record.objects.get(record_id=rid)
    assert stored.revision == 1 and stored.deleted_at is None
