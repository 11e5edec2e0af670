"""Console forms. They shape input into wire requests; every rule about what is allowed is the
ops layer's (the same schemas and gates as the API), so the forms only parse."""

import re
from datetime import UTC

from django import forms

from memory.access import CAPABILITIES
from memory.timeutil import iso

ID_SPLIT = re.compile(r"[\s,]+")


def id_list(value: str) -> list[str] | None:
    items = [v for v in ID_SPLIT.split(value or "") if v]
    return items or None


class GrantForm(forms.Form):
    grantee_principal_id = forms.CharField(max_length=80)
    capabilities = forms.MultipleChoiceField(choices=[(c, c) for c in CAPABILITIES])
    subject_ids = forms.CharField(required=False, help_text="Comma-separated; blank = all subjects")
    context_ids = forms.CharField(required=False, help_text="Comma-separated; blank = all contexts")
    shared_access = forms.BooleanField(required=False)
    expires_at = forms.DateTimeField(required=False, help_text="UTC, e.g. 2027-01-31 18:00")
    parent_grant_id = forms.CharField(required=False, max_length=80)

    def wire(self) -> dict:
        d = self.cleaned_data
        out: dict = {
            "grantee_principal_id": d["grantee_principal_id"].strip(),
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
