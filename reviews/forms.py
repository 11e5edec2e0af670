"""Console forms. They shape input into wire requests; every rule about what is allowed is the
ops layer's (the same schemas and gates as the API), so the forms only parse."""

import re
from datetime import UTC
from urllib.parse import urlencode

from django import forms

from memory.access import CAPABILITIES
from memory.timeutil import iso

ID_SPLIT = re.compile(r"[\s,]+")


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

    def clean(self):
        super().clean()
        d = self.cleaned_data
        typed = (d.get("grantee_principal_id") or "").strip()
        d["grantee_principal_id"] = typed or (d.get("grantee_pick") or "").strip()
        if not d["grantee_principal_id"]:
            self.add_error(
                "grantee_principal_id", "Grantee: pick a principal or type its prn_… id."
            )
        return d

    def wire(self) -> dict:
        d = self.cleaned_data
        out: dict = {
            "grantee_principal_id": d["grantee_principal_id"],
            "capabilities": list(d["capabilities"]),
            "shared_access": bool(d["shared_access"]),
        }
        for name in ("subject_ids", "context_ids"):
            values = id_list(d[name])
            if values is not None:
                out[name] = values
        if d["expires_at"]:
            out["expires_at"] = iso(d["expires_at"].astimezone(UTC))
        if d["parent_grant_id"].strip():
            out["parent_grant_id"] = d["parent_grant_id"].strip()
        return out


# ---- shared fields ------------------------------------------------------------------------------

REASON_MAX = 1000  # SPEC Reason: at most 1000 characters


class TextField(forms.CharField):
    """Text as typed: browsers send CRLF line ends, content means LF; not stripped."""

    def __init__(self, **kwargs) -> None:
        kwargs.setdefault("strip", False)
        kwargs.setdefault("required", False)
        super().__init__(**kwargs)

    def to_python(self, value):
        value = super().to_python(value)
        return value.replace("\r\n", "\n") if value else value


class ReasonField(forms.CharField):
    """An optional reason: stripped, at most REASON_MAX characters (longer is cut, not refused,
    so a long paste never loses the action)."""

    def __init__(self, **kwargs) -> None:
        kwargs.setdefault("required", False)
        super().__init__(**kwargs)

    def to_python(self, value):
        text = super().to_python(value)
        return text if text is None else text[:REASON_MAX]


class ListWidget(forms.Widget):
    """Every value of a repeated field (`getlist`), e.g. the rows of the fragment form."""

    def value_from_datadict(self, data, files, name):
        return data.getlist(name) if hasattr(data, "getlist") else data.get(name, [])


class ListField(forms.Field):
    widget = ListWidget

    def to_python(self, value):
        return [str(v) for v in value or []]


def reason_member(reason: str) -> dict:
    """The optional `reason` member of a request: absent when blank."""
    return {"reason": reason} if reason else {}


class ReasonForm(forms.Form):
    """The optional reason of freeze, fence, revoke, delete."""

    reason = ReasonField()

    @classmethod
    def member_of(cls, data) -> dict:
        form = cls(data)
        return reason_member(form.cleaned_data["reason"]) if form.is_valid() else {}


class RecordEditForm(forms.Form):
    text = TextField()
    kind = forms.CharField(required=False, max_length=200)


# ---- queue --------------------------------------------------------------------------------------

LABELS = ["preference", "fact", "event", "plan", "cognition", "noise"]
ORDERS = [("oldest", "oldest first"), ("newest", "newest first")]
QUEUE_KEYS = ("subject", "label", "context", "order")


class QueueFilters(forms.Form):
    """The queue's filters, each a member of memory.candidates.list. They travel with the
    moderator through the review flow as a query string (`query()`)."""

    subject = forms.CharField(required=False, max_length=256)
    label = forms.ChoiceField(required=False, choices=[("", "any")] + [(x, x) for x in LABELS])
    context = forms.CharField(
        required=False,
        max_length=2000,
        help_text="capture placement: context ids, comma-separated; `shared` for shared",
    )
    order = forms.ChoiceField(required=False, choices=ORDERS)

    def __init__(self, data=None) -> None:
        data = {k: data.get(k, "") for k in QUEUE_KEYS} if data is not None else None
        super().__init__(data)
        self.is_valid()

    def value(self, name: str) -> str:
        return (self.cleaned_data or {}).get(name) or ""

    def selection(self) -> dict | None:
        ids = id_list(self.value("context")) or []
        contexts = sorted({i for i in ids if i != "shared"})
        shared = "shared" in ids
        if not ids:
            return None
        if not contexts:
            return {"mode": "shared"}
        mode = "contexts_and_shared" if shared else "contexts"
        return {"mode": mode, "context_ids": contexts}

    def members(self) -> dict:
        """The filter members of a memory.candidates.list request."""
        out: dict = {}
        if self.value("subject"):
            out["subject_id"] = self.value("subject")
        if self.value("label"):
            out["labels"] = [self.value("label")]
        selection = self.selection()
        if selection:
            out["selection"] = selection
        if self.value("order") == "newest":
            out["order"] = "newest"
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

    def fragments(self) -> list[dict]:
        d = self.cleaned_data
        texts = [t.replace("\r\n", "\n") for t in d.get("fragment_text", [])]
        kinds = [k.strip() for k in d.get("fragment_kind", [])]
        kinds += [""] * (len(texts) - len(kinds))
        return [{"text": t, "kind": k} for t, k in zip(texts, kinds, strict=False)]

    def clean(self):
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

    def decision(self, content: dict) -> dict:
        """The review decision for the candidate's proposed content."""
        d = self.cleaned_data
        action = d["action"]
        if action == "promote":
            decision: dict = {"action": "promote"}
            if d["kind"]:
                decision["kind"] = d["kind"]
            if "text" in self.data and d["text"] != content["text"]:
                # Only the text is edited here; structured data and cognition stay as proposed.
                decision["content_override"] = {**content, "text": d["text"]}
            return decision
        if action == "fragment":
            fragments = []
            for f in self.fragments():
                if f["text"].strip():
                    fragments.append(
                        {
                            "content": {"text": f["text"]},
                            **({"kind": f["kind"]} if f["kind"] else {}),
                        }
                    )
            return {"action": "fragment", "fragments": fragments}
        reason = d["reason"]
        if d["duplicate_of"]:
            reason = f"duplicate of {d['duplicate_of']}" + (f": {reason}" if reason else "")
        return {"action": "drop", **reason_member(reason[:REASON_MAX])}

    def kept(self) -> dict:
        """What the moderator typed, to render again after a refusal."""
        return {
            "action": self.data.get("action"),
            "text": self.data.get("text"),
            "kind": self.data.get("kind", ""),
            "reason": self.data.get("reason", ""),
            "fragments": self.fragments() if hasattr(self, "cleaned_data") else [],
        }
