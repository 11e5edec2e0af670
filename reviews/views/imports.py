"""Import screen: stage a JSON Lines export file (as the exports screen downloads it: one
`{"bundle", "chunk"}` per line) into this space, watch the provider verify it, then activate it.

Stage: one memory.imports.stage per line, in order (ordinal 0 with the bundle opens the import;
later lines name it), each with a key derived from the form's key, so a resubmitted upload stages
nothing twice. The final chunk answers a pending receipt: verification runs on a worker and the
page polls that receipt (memory.receipts.get). A verified import is activated with a
confirmation on the page, because activation replaces the space's subjects, records,
candidates, profile documents and reflections; the activation receipt is polled likewise."""

import json
from collections.abc import Iterator
from typing import Any

from django import forms
from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.files.uploadedfile import UploadedFile
from django.forms.utils import ErrorDict
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from memory.access import effective_grants
from memory.admission import depth_of
from memory.models import Principal
from memory.ops.transfer import imports_whole_space
from memory.timeutil import now
from memory.wire import types as t
from memory.wire.errors import WireError
from reviews.console import PORT, act, describe, principal_of, receipt, ref_id
from reviews.views.space import space_wire

STAGE = "memory.imports.stage"
ACTIVATE = "memory.imports.activate"


class StageForm(forms.Form):
    """The upload, judged in this order: the uploader may import into the space at all (their
    principal holds a whole-space `import` grant: `allowed`), before anything reads the file;
    then its size; then its lines one at a time as they are staged (`lines()`), each bounded in
    bytes (limits.max_request_bytes: a line is one stage request) and nesting
    (limits.max_json_depth). Every refusal is a form error on the file, never a 500."""

    file = forms.FileField(help_text="An export downloaded as JSON Lines")
    idempotency_key = forms.CharField(max_length=150)

    def __init__(self, *args: Any, allowed: bool = True, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.allowed = allowed

    def full_clean(self) -> None:
        if self.is_bound and not self.allowed:
            # Nothing is cleaned, so the file is never read
            self._errors = ErrorDict()
            self.cleaned_data = {}
            self.add_error("file", NOT_ALLOWED)
            return
        super().full_clean()

    def clean_file(self) -> UploadedFile:
        upload: UploadedFile = self.cleaned_data["file"]
        limit = settings.SPOKE_MEMORY_MAX_IMPORT_UPLOAD_BYTES  # the request's bound covers it
        if (upload.size or 0) > limit:
            raise forms.ValidationError(f"The file is over {limit // (1024 * 1024)} MB.")
        first = next(self.lines(upload), None)
        if first is None or "bundle" not in first[1]:
            raise forms.ValidationError("The file holds no export (its first line has no bundle).")
        return upload

    @staticmethod
    def lines(upload: UploadedFile) -> Iterator[tuple[int, dict[str, Any]]]:
        """(line number, chunk line) for each non-blank line, read and parsed one at a time;
        raises ValidationError for the first line that is too long, too deep or not a chunk."""
        cap = settings.SPOKE_MEMORY_LIMITS["max_request_bytes"]
        depth = settings.SPOKE_MEMORY_LIMITS["max_json_depth"]
        for number, raw in bounded_lines(upload, cap):
            if not raw.strip():
                continue
            try:
                line = json.loads(raw)
            except RecursionError:
                raise forms.ValidationError(
                    f"Line {number} nests deeper than {depth} levels."
                ) from None
            except (ValueError, UnicodeDecodeError):
                raise forms.ValidationError(f"Line {number} is not JSON.") from None
            if depth_of(line) > depth:
                raise forms.ValidationError(f"Line {number} nests deeper than {depth} levels.")
            if not isinstance(line, dict) or "chunk" not in line:
                raise forms.ValidationError(f"Line {number} is not an export chunk.")
            yield number, line

    def wire(
        self, space_id: str, ordinal: int, line: dict[str, Any], import_id: str | None
    ) -> t.ImportsStageRequest:
        """The stage of the `ordinal`-th chunk line (its chunk as read: the op checks it): the
        first opens the import with the bundle, the later ones name it; each under its own key,
        derived from the form's one key."""
        out: t.ImportsStageRequest = {
            "space_id": space_id,
            "chunk": line["chunk"],
            "idempotency_key": f"{self.cleaned_data['idempotency_key']}:{ordinal}"[:200],
        }
        if ordinal == 0:
            out["bundle"] = line["bundle"]
        elif import_id is not None:
            out["import_id"] = import_id
        return out


NOT_ALLOWED = "You may not import into this space."


def bounded_lines(upload: UploadedFile, cap: int) -> Iterator[tuple[int, bytes]]:
    """The upload's lines (numbered from 1), read in chunks from its start; a line longer than
    `cap` bytes is refused as soon as it passes the cap (never held whole)."""
    upload.seek(0)
    number, partial = 0, b""
    for chunk in upload.chunks(65_536):
        pieces = chunk.split(b"\n")
        for piece in pieces[:-1]:
            number += 1
            if len(partial) + len(piece) > cap:
                raise forms.ValidationError(f"Line {number} is longer than {cap} bytes.")
            yield number, partial + piece
            partial = b""
        partial += pieces[-1]
        if len(partial) > cap:
            raise forms.ValidationError(f"Line {number + 1} is longer than {cap} bytes.")
    if partial:
        yield number + 1, partial


def may_import(space_id: str, principal: Principal) -> bool:
    """Whether the principal's effective grants in the space hold `import` over the whole space
    (what memory.imports.stage requires: checked again by the op)."""
    return imports_whole_space(effective_grants(space_id, principal, now()))


class ActivateForm(forms.Form):
    import_id = forms.CharField(max_length=80)
    idempotency_key = forms.CharField(max_length=150)
    confirmed = forms.BooleanField(
        error_messages={"required": "Tick the box: activation replaces the space's memory."}
    )

    def wire(self, space_id: str) -> t.ImportsActivateRequest:
        return {"space_id": space_id, "import_id": self.cleaned_data["import_id"]}


def _page(
    request: HttpRequest, space_id: str, form: forms.Form | None = None, status: int = 200
) -> HttpResponse:
    got, import_id = None, None
    receipt_id = request.GET.get("receipt")
    if receipt_id:
        got = call_receipt(request, space_id, receipt_id)
        import_id = ref_id(got, "import")
    return render(
        request,
        "reviews/imports.html",
        {
            "space_id": space_id,
            "space": space_wire(request, space_id),
            "form": form or StageForm(),
            "item": {"receipt": got, "import_id": import_id} if got else None,
        },
        status=status,
    )


def call_receipt(request: HttpRequest, space_id: str, receipt_id: str) -> t.MemoryReceipt:
    return receipt(request, space_id, receipt_id, STAGE, ACTIVATE)


@login_required
def imports(request: HttpRequest, space_id: str) -> HttpResponse:
    return _page(request, space_id)


@login_required
@require_POST
def stage(request: HttpRequest, space_id: str) -> HttpResponse:
    principal = principal_of(request)  # an account with no principal: 404, as on every page
    form = StageForm(request.POST, request.FILES, allowed=may_import(space_id, principal))
    if not form.is_valid():
        return _page(request, space_id, form, status=400)
    import_id, last, ordinal = None, None, -1
    try:
        for ordinal, (_, line) in enumerate(form.lines(form.cleaned_data["file"])):
            try:
                last = PORT.imports_stage(principal, form.wire(space_id, ordinal, line, import_id))[
                    "receipt"
                ]
            except WireError as err:
                messages.error(
                    request, f"Line {ordinal + 1}: {describe(err)} Nothing was activated."
                )
                return _page(request, space_id, form, status=err.status)
            import_id = import_id or ref_id(last, "import")
    except forms.ValidationError as err:
        form.add_error("file", err)
        messages.error(request, "Nothing was activated.")
        return _page(request, space_id, form, status=400)
    assert last is not None
    messages.success(
        request,
        f"Staged {ordinal + 1} chunk{'s' if ordinal else ''} into import {import_id}: "
        "the provider verifies it now.",
    )
    url = reverse("reviews:imports", args=[space_id])
    return redirect(f"{url}?receipt={last['receipt_id']}")


@login_required
@require_POST
def activate(request: HttpRequest, space_id: str) -> HttpResponse:
    form = ActivateForm(request.POST)
    url = reverse("reviews:imports", args=[space_id])
    if not form.is_valid():
        for errors in form.errors.values():
            messages.error(request, str(errors[0]))
        back = request.POST.get("receipt", "")
        return redirect(f"{url}?receipt={back}" if back else url)
    result = act(request, PORT.imports_activate, form.wire(space_id))
    if not result.ok:
        messages.error(request, describe(result.refusal))
        return redirect(url)
    messages.success(request, "Activation admitted: a worker swaps the space's memory now.")
    return redirect(f"{url}?receipt={result.receipt['receipt_id']}")


@login_required
def progress(request: HttpRequest, space_id: str, receipt_id: str) -> HttpResponse:
    """The htmx fragment: the stage-final or activation receipt, polling itself while pending."""
    got = call_receipt(request, space_id, receipt_id)
    return render(
        request,
        "reviews/_import.html",
        {"space_id": space_id, "item": {"receipt": got, "import_id": ref_id(got, "import")}},
    )
