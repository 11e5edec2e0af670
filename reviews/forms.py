"""Console forms. They shape input into wire requests: a screen's form has a `.wire(...)` that
returns the op's request TypedDict (`memory.wire.types`), so mypy checks every member a screen
sends (a form for two ops has one `wire_<op>` per op). Every rule about what is allowed is the
ops layer's (the same schemas and gates as the API), so the forms only parse; input a form
cannot read is a message under its field, and no op is called."""

import re
from collections.abc import Mapping
from datetime import UTC
from typing import Any, NotRequired, TypedDict, TypeVar
from urllib.parse import urlencode

from django import forms

from memory.access import CAPABILITIES
from memory.timeutil import iso
from memory.wire import types as t

ID_SPLIT = re.compile(r"[\s,]+")


def first_error(form: forms.Form) -> str:
    """A form's first refusal in words, prefixed by its field's label ("Kind: …") unless the
    message names its field itself."""
    for name, errors in form.errors.items():
        message = str(errors[0])
        if name not in form.fields or ":" in message:
            return message
        label = form.fields[name].label or name.replace("_", " ").capitalize()
        return f"{label}: {message}"
    return "The form could not be read; reload the page and try again."


def id_list(value: str) -> list[str] | None:
    items = [v for v in ID_SPLIT.split(value or "") if v]
    return items or None


class GrantForm(forms.Form):
    """The issue form. The grantee is picked by display name (`grantee_pick`, a choice among the
    principals the caller's grants list names) or typed as an id (`grantee_principal_id`, for a
    principal not yet in the space); a typed id wins."""

    grantee_principal_id = forms.CharField(max_length=80, required=False)
    grantee_pick = forms.CharField(max_length=80, required=False)
    capabilities = forms.MultipleChoiceField(choices=[(c, c) for c in CAPABILITIES])
    subject_ids = forms.CharField(required=False, help_text="Comma-separated; blank = all subjects")
    context_ids = forms.CharField(required=False, help_text="Comma-separated; blank = all contexts")
    shared_access = forms.BooleanField(required=False)
    expires_at = forms.DateTimeField(required=False, help_text="UTC, e.g. 2027-01-31 18:00")
    parent_grant_id = forms.CharField(required=False, max_length=80)

    def clean(self) -> dict[str, Any]:
        super().clean()
        d = self.cleaned_data
        typed = (d.get("grantee_principal_id") or "").strip()
        d["grantee_principal_id"] = typed or (d.get("grantee_pick") or "").strip()
        if not d["grantee_principal_id"]:
            self.add_error(
                "grantee_principal_id", "Grantee: pick a principal or type its prn_… id."
            )
        return d

    def wire(self, space_id: str) -> t.GrantsGrantRequest:
        d = self.cleaned_data
        out: t.GrantsGrantRequest = {
            "space_id": space_id,
            "grantee_principal_id": d["grantee_principal_id"],
            "capabilities": list(d["capabilities"]),
            "shared_access": bool(d["shared_access"]),
        }
        subject_ids, context_ids = id_list(d["subject_ids"]), id_list(d["context_ids"])
        if subject_ids is not None:
            out["subject_ids"] = subject_ids
        if context_ids is not None:
            out["context_ids"] = context_ids
        expires_at = iso(d["expires_at"].astimezone(UTC)) if d["expires_at"] else None
        if expires_at:
            out["expires_at"] = expires_at
        if d["parent_grant_id"].strip():
            out["parent_grant_id"] = d["parent_grant_id"].strip()
        return out


# ---- shared fields ------------------------------------------------------------------------------

REASON_MAX = 1000  # the protocol Reason: at most 1000 characters


class TextField(forms.CharField):
    """Text as typed: browsers send CRLF line ends, content means LF; not stripped."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("strip", False)
        kwargs.setdefault("required", False)
        super().__init__(**kwargs)

    def to_python(self, value: Any) -> str | None:
        text: str | None = super().to_python(value)
        return text.replace("\r\n", "\n") if text else text


class ReasonField(forms.CharField):
    """An optional reason: stripped, at most REASON_MAX characters (longer is cut, not refused,
    so a long paste never loses the action)."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("required", False)
        super().__init__(**kwargs)

    def to_python(self, value: Any) -> str | None:
        text = super().to_python(value)
        return text if text is None else text[:REASON_MAX]


class ListWidget(forms.Widget):
    """Every value of a repeated field (`getlist`), e.g. the rows of the fragment form."""

    def value_from_datadict(self, data: Any, files: Any, name: str) -> Any:
        return data.getlist(name) if hasattr(data, "getlist") else data.get(name, [])


class ListField(forms.Field):
    widget = ListWidget

    def to_python(self, value: Any) -> list[str]:
        return [str(v) for v in value or []]


class ReasonForm(forms.Form):
    """The optional reason of freeze, fence, revoke, delete (a subclass per op, each with its
    `.wire()`): absent from the request when blank."""

    reason = ReasonField()

    def reason_text(self) -> str:
        return self.cleaned_data.get("reason") or ""


class FreezeForm(ReasonForm):
    def wire(self, space_id: str) -> t.SpacesFreezeRequest:
        out: t.SpacesFreezeRequest = {"space_id": space_id}
        if self.reason_text():
            out["reason"] = self.reason_text()
        return out


class RevokeForm(ReasonForm):
    def wire(self, space_id: str, grant_id: str) -> t.GrantsRevokeRequest:
        out: t.GrantsRevokeRequest = {"space_id": space_id, "grant_id": grant_id}
        if self.reason_text():
            out["reason"] = self.reason_text()
        return out


FENCE_ACTIONS = ("fence", "unfence", "archive")


class FenceForm(ReasonForm):
    """Fence, unfence or archive a subject, or (with a context) one capture context of it.
    Archive is terminal: it needs `confirmed`."""

    subject_id = forms.CharField(error_messages={"required": "Subject: give the subject id."})
    action = forms.ChoiceField(
        choices=[(a, a) for a in FENCE_ACTIONS],
        error_messages={"invalid_choice": "choose fence, unfence or archive."},
    )
    context_id = forms.CharField(required=False)
    confirmed = forms.BooleanField(required=False)

    def wire(self, space_id: str) -> t.SubjectsFenceRequest:
        d = self.cleaned_data
        out: t.SubjectsFenceRequest = {
            "space_id": space_id,
            "subject_id": d["subject_id"],
            "action": d["action"],
        }
        if d["context_id"]:
            out["context_id"] = d["context_id"]
        if self.reason_text():
            out["reason"] = self.reason_text()
        return out


class RevisionForm(forms.Form):
    """A record form: the revision it was rendered with is the request's expected_revision."""

    expected_revision = forms.IntegerField()


class RecordDeleteForm(RevisionForm, ReasonForm):
    confirmed = forms.BooleanField(required=False)

    def wire(self, space_id: str, record_id: str) -> t.RecordsDeleteRequest:
        out: t.RecordsDeleteRequest = {
            "space_id": space_id,
            "record_id": record_id,
            "expected_revision": self.cleaned_data["expected_revision"],
        }
        if self.reason_text():
            out["reason"] = self.reason_text()
        return out


class RecordEditForm(RevisionForm):
    text = TextField()
    kind = forms.CharField(required=False, max_length=200)

    def wire(self, space_id: str, current: t.RetainedRecord) -> t.RecordsUpdateRequest | None:
        """The update of the record as read (`current`): only what was changed; None when
        nothing was."""
        d = self.cleaned_data
        out: t.RecordsUpdateRequest = {
            "space_id": space_id,
            "record_id": current["record_id"],
            "expected_revision": d["expected_revision"],
        }
        if "text" in self.data and d["text"] != current["content"]["text"]:
            out["content"] = {**current["content"], "text": d["text"]}
        if d["kind"] and d["kind"] != current["kind"]:
            out["kind"] = d["kind"]
        return out if "content" in out or "kind" in out else None


MODES = ["all", "contexts", "shared", "contexts_and_shared"]


class Filters(TypedDict):
    """The filter members memory.records.list and memory.recall share."""

    selection: NotRequired[t.ReadSelection]
    kinds: NotRequired[list[str]]


Filtered = TypeVar("Filtered", bound=Filters)


class RecordFilters(forms.Form):
    """The records screen's filters: memory.records.list (`.wire()`), or with a text `q`,
    memory.recall (`.wire_recall()`, per subject). A value it does not accept (an unknown mode)
    is left out, not an error page."""

    subject = forms.CharField(required=False)
    mode = forms.ChoiceField(required=False, choices=[(m, m) for m in MODES])
    contexts = forms.CharField(required=False)
    kinds = forms.CharField(required=False)
    tombstoned = forms.BooleanField(required=False)
    cursor = forms.CharField(required=False, strip=False)
    q = forms.CharField(required=False)

    def __init__(self, data: Mapping[str, Any]) -> None:
        super().__init__(data)
        self.is_valid()

    def value(self, name: str) -> str:
        return self.cleaned_data.get(name) or ""

    def _filter(self, out: Filtered) -> Filtered:
        """The selection and kinds members, shared by the list and the search."""
        mode = self.cleaned_data.get("mode")  # one of MODES (a ChoiceField), or absent
        if mode and mode != "all":
            selection: t.ReadSelection = {"mode": mode}
            contexts = id_list(self.value("contexts"))
            if contexts:
                selection["context_ids"] = contexts
            out["selection"] = selection
        kinds = id_list(self.value("kinds"))
        if kinds:
            out["kinds"] = kinds
        return out

    def wire(self, space_id: str, page_size: int) -> t.RecordsListRequest:
        out: t.RecordsListRequest = {"space_id": space_id, "page_size": page_size}
        if self.value("subject"):
            out["subject_id"] = self.value("subject")
        self._filter(out)
        if self.cleaned_data.get("tombstoned"):
            out["include_tombstoned"] = True
        if self.value("cursor"):
            out["cursor"] = self.value("cursor")
        return out

    def wire_recall(self, space_id: str) -> t.RecallRequest | None:
        """The text search (`q`) in the subject; None without a subject (recall is per
        subject)."""
        if not self.value("subject"):
            return None
        out: t.RecallRequest = {
            "space_id": space_id,
            "subject_id": self.value("subject"),
            "query": {"text": self.value("q")},
        }
        return self._filter(out)


class SubjectForm(forms.Form):
    """A subject looked up on the Space screen (memory.subjects.get)."""

    subject = forms.CharField(required=False)

    def __init__(self, data: Mapping[str, Any]) -> None:
        super().__init__(data)
        self.is_valid()

    def value(self) -> str:
        return self.cleaned_data.get("subject") or ""

    def wire(self, space_id: str) -> t.SubjectsGetRequest | None:
        return {"space_id": space_id, "subject_id": self.value()} if self.value() else None


class ExportForm(forms.Form):
    """An export of the space, optionally of named subjects (comma-separated)."""

    subject_ids = forms.CharField(required=False)

    def wire(self, space_id: str) -> t.ExportsCreateRequest:
        out: t.ExportsCreateRequest = {"space_id": space_id}
        subject_ids = id_list(self.cleaned_data["subject_ids"])
        if subject_ids:
            out["subject_ids"] = subject_ids
        return out


class PageForm(forms.Form):
    """A list screen's page: the op's cursor as given (the op judges it)."""

    cursor = forms.CharField(required=False, strip=False)

    def __init__(self, data: Mapping[str, Any]) -> None:
        super().__init__(data)
        self.is_valid()

    def value(self) -> str:
        return self.cleaned_data.get("cursor") or ""


# ---- queue --------------------------------------------------------------------------------------

LABELS = ["preference", "fact", "event", "plan", "cognition", "noise"]
ORDERS = [("oldest", "oldest first"), ("newest", "newest first")]
QUEUE_KEYS = ("subject", "label", "context", "order")


class QueueFilters(forms.Form):
    """The queue's filters, each a member of memory.candidates.list (`.wire()`). They travel
    with the moderator through the review flow as a query string (`query()`); the page's
    `cursor` does not."""

    subject = forms.CharField(required=False, max_length=256)
    label = forms.ChoiceField(required=False, choices=[("", "any")] + [(x, x) for x in LABELS])
    context = forms.CharField(
        required=False,
        max_length=2000,
        help_text="capture placement: context ids, comma-separated; `shared` for shared",
    )
    order = forms.ChoiceField(required=False, choices=ORDERS)
    cursor = forms.CharField(required=False, strip=False)

    def __init__(self, data: Mapping[str, Any] | None = None) -> None:
        keys = (*QUEUE_KEYS, "cursor")
        data = {k: data.get(k, "") for k in keys} if data is not None else None
        super().__init__(data)
        self.is_valid()

    def value(self, name: str) -> str:
        return (self.cleaned_data or {}).get(name) or ""

    def selection(self) -> t.ReadSelection | None:
        ids = id_list(self.value("context")) or []
        contexts = sorted({i for i in ids if i != "shared"})
        shared = "shared" in ids
        if not ids:
            return None
        if not contexts:
            return {"mode": "shared"}
        return {"mode": "contexts_and_shared" if shared else "contexts", "context_ids": contexts}

    def filtered(self) -> bool:
        """Whether a filter (or the newest-first order) is set: the page says "matching"."""
        wire = self.wire("", 1, paged=False)
        return any(k in wire for k in ("subject_id", "labels", "selection", "order"))

    def wire(self, space_id: str, page_size: int, *, paged: bool = True) -> t.CandidatesListRequest:
        """The pending candidates under these filters; from the page's cursor when `paged`."""
        out: t.CandidatesListRequest = {
            "space_id": space_id,
            "states": ["pending"],
            "page_size": page_size,
        }
        if self.value("subject"):
            out["subject_id"] = self.value("subject")
        if self.value("label"):
            out["labels"] = [self.value("label")]
        selection = self.selection()
        if selection:
            out["selection"] = selection
        if self.value("order") == "newest":
            out["order"] = "newest"
        if paged and self.value("cursor"):
            out["cursor"] = self.value("cursor")
        return out

    def hidden(self) -> list[tuple[str, str]]:
        """The set filters as (name, value) pairs for hidden fields of a POST form."""
        return [(k, self.value(k)) for k in QUEUE_KEYS if self.value(k)]

    def query(self) -> str:
        """The filters as a query string (with its `?`), or "" when none is set."""
        keep = {k: self.value(k) for k in QUEUE_KEYS if self.value(k)}
        if keep.get("order") == "oldest":
            del keep["order"]
        return "?" + urlencode(keep) if keep else ""


BULK_MAX = 50  # one queue page


class BulkForm(forms.Form):
    action = forms.ChoiceField(choices=[(a, a) for a in ("promote", "drop", "dismiss")])
    candidate_ids = ListField(required=False)
    reason = ReasonField()
    idempotency_key = forms.CharField(max_length=150)
    confirmed = forms.BooleanField(required=False)

    def clean_candidate_ids(self) -> list[str]:
        ids = list(dict.fromkeys(i.strip() for i in self.cleaned_data["candidate_ids"] if i))
        if not ids:
            raise forms.ValidationError("Nothing selected: tick the candidates first (x).")
        if len(ids) > BULK_MAX:
            raise forms.ValidationError(f"At most {BULK_MAX} candidates at once.")
        return ids

    def _key(self, candidate_id: str) -> str:
        return f"{self.cleaned_data['idempotency_key']}:{candidate_id}"[:200]

    def wire_review(self, space_id: str, candidate_id: str) -> t.CandidatesReviewRequest:
        """Promote or drop one selected candidate, under its own key derived from the form's."""
        d = self.cleaned_data
        decision: t.ReviewDecision
        if d["action"] == "drop":
            decision = {"action": "drop"}
            if d["reason"]:
                decision["reason"] = d["reason"]
        else:
            decision = {"action": "promote"}
        return {
            "space_id": space_id,
            "candidate_id": candidate_id,
            "decision": decision,
            "idempotency_key": self._key(candidate_id),
        }

    def wire_dismiss(self, space_id: str, candidate_id: str) -> t.CandidatesDismissRequest:
        out: t.CandidatesDismissRequest = {
            "space_id": space_id,
            "candidate_id": candidate_id,
            "idempotency_key": self._key(candidate_id),
        }
        if self.cleaned_data["reason"]:
            out["reason"] = self.cleaned_data["reason"]
        return out

    def problem(self) -> str:
        """The first refusal, in words."""
        for name in ("candidate_ids", "action", "idempotency_key"):
            if name in self.errors:
                message = str(self.errors[name][0])
                if name == "action":
                    return "Choose promote, drop or dismiss."
                if name == "idempotency_key":
                    return "The form is incomplete; reload the queue and try again."
                return message
        return "The form could not be read; reload the queue and try again."


# ---- candidate ----------------------------------------------------------------------------------

KIND = re.compile(r"[a-z][a-z0-9_]*\Z")
KIND_WORDS = "lower-case letters, digits and _, starting with a letter (at most 64)"


def check_kind(value: str) -> str:
    if value and (len(value) > 64 or not KIND.match(value)):
        raise forms.ValidationError(f"Kind: {KIND_WORDS}; got '{value[:80]}'.")
    return value


class ReviewForm(forms.Form):
    """One review action on a candidate. The form refuses what is plainly not a decision (an
    emptied promote text, a fragment form without text, a malformed kind) with a field message
    before any op call; everything else is the op's to judge."""

    action = forms.ChoiceField(choices=[(a, a) for a in ("promote", "fragment", "drop", "dismiss")])
    text = TextField()
    kind = forms.CharField(required=False, max_length=200)
    reason = ReasonField()
    duplicate_of = forms.CharField(required=False, max_length=80)
    fragment_text = ListField(required=False)
    fragment_kind = ListField(required=False)

    def clean_kind(self) -> str:
        return check_kind(self.cleaned_data["kind"])

    def fragments(self) -> list[dict[str, str]]:
        d = self.cleaned_data
        texts = [t.replace("\r\n", "\n") for t in d.get("fragment_text", [])]
        kinds = [k.strip() for k in d.get("fragment_kind", [])]
        kinds += [""] * (len(texts) - len(kinds))
        return [{"text": t, "kind": k} for t, k in zip(texts, kinds, strict=False)]

    def clean(self) -> dict[str, Any]:
        super().clean()
        d = self.cleaned_data
        action = d.get("action")
        if action == "promote" and "text" in self.data and not (d.get("text") or "").strip():
            self.add_error(
                "text",
                "The text is empty: a record needs some text. To keep nothing, drop the candidate.",
            )
        if action == "fragment":
            kept = [f for f in self.fragments() if f["text"].strip()]
            if not kept:
                self.add_error(None, "A fragment needs some text: add at least one.")
            for index, f in enumerate(kept):
                try:
                    check_kind(f["kind"])
                except forms.ValidationError as err:
                    self.add_error(None, f"Fragment {index + 1}: {err.messages[0]}")
        return d

    def decision(self, content: t.Content) -> t.ReviewDecision:
        """The review decision for the candidate's proposed content."""
        d = self.cleaned_data
        action = d["action"]
        if action == "promote":
            promote: t.ReviewDecisionPromote = {"action": "promote"}
            if d["kind"]:
                promote["kind"] = d["kind"]
            if "text" in self.data and d["text"] != content["text"]:
                # Only the text is edited here; structured data and cognition stay as proposed.
                promote["content_override"] = {**content, "text": d["text"]}
            return promote
        if action == "fragment":
            fragments: list[t.ReviewFragment] = []
            for f in self.fragments():
                if f["text"].strip():
                    fragment: t.ReviewFragment = {"content": {"text": f["text"]}}
                    if f["kind"]:
                        fragment["kind"] = f["kind"]
                    fragments.append(fragment)
            return {"action": "fragment", "fragments": fragments}
        reason = d["reason"]
        if d["duplicate_of"]:
            reason = f"duplicate of {d['duplicate_of']}" + (f": {reason}" if reason else "")
        drop: t.ReviewDecisionDrop = {"action": "drop"}
        if reason:
            drop["reason"] = reason[:REASON_MAX]
        return drop

    def wire_review(self, space_id: str, candidate: t.MemoryCandidate) -> t.CandidatesReviewRequest:
        """Promote, fragment or drop (`action`) the candidate as read."""
        return {
            "space_id": space_id,
            "candidate_id": candidate["candidate_id"],
            "decision": self.decision(candidate["proposed"]["content"]),
        }

    def wire_dismiss(self, space_id: str, candidate_id: str) -> t.CandidatesDismissRequest:
        out: t.CandidatesDismissRequest = {"space_id": space_id, "candidate_id": candidate_id}
        if self.cleaned_data["reason"]:
            out["reason"] = self.cleaned_data["reason"]
        return out

    def kept(self) -> dict[str, Any]:
        """What the moderator typed, to render again after a refusal."""
        return {
            "action": self.data.get("action"),
            "text": self.data.get("text"),
            "kind": self.data.get("kind", ""),
            "reason": self.data.get("reason", ""),
            "fragments": self.fragments() if hasattr(self, "cleaned_data") else [],
        }
