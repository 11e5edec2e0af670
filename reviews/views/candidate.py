"""Candidate screen: the proposed content (text; structured data pretty-printed; cognition as a
table), classification and its signals, capture scope, who captured it and when; and the review
actions. When another reviewer got there first (CANDIDATE_CONSUMED) the console says so plainly
and moves on to the next pending candidate: no error page."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from memory.ops.base import call
from memory.wire.errors import WireError
from reviews.console import act, describe, principal_of, read

# Labels that are also record kinds (the op falls back to `note` for the others).
KIND_LABELS = {"preference", "fact", "event", "plan"}
COGNITION_COLUMNS = [
    "type",
    "proposition",
    "attribution",
    "basis",
    "times",
    "polarity",
    "confidence",
    "intensity",
]


def _candidate(request, space_id: str, candidate_id: str) -> dict:
    return read(
        request, "memory.candidates.get", {"space_id": space_id, "candidate_id": candidate_id}
    )["candidate"]


def next_pending(request, space_id: str, after: str | None = None) -> str | None:
    """The oldest pending candidate the caller can see (other than `after`), or None."""
    try:
        answer = call(
            principal_of(request),
            "memory.candidates.list",
            {"space_id": space_id, "states": ["pending"], "page_size": 2},
        )
    except WireError:
        return None
    for c in answer["candidates"]:
        if c["candidate_id"] != after:
            return c["candidate_id"]
    return None


def _move_on(request, space_id: str, candidate_id: str):
    following = next_pending(request, space_id, after=candidate_id)
    if following:
        return redirect("reviews:candidate", space_id, following)
    return redirect("reviews:queue", space_id)


def _render(request, space_id: str, cand: dict, status: int = 200, form: dict | None = None):
    content = cand["proposed"]["content"]
    rows = [
        [_cell(entry.get(col)) for col in COGNITION_COLUMNS]
        for entry in content.get("cognition", [])
    ]
    fragments = (form or {}).get("fragments") or [{"text": content["text"], "kind": ""}]
    return render(
        request,
        "reviews/candidate.html",
        {
            "space_id": space_id,
            "c": cand,
            "content": content,
            "cognition_rows": rows,
            "cognition_columns": COGNITION_COLUMNS,
            "form": form or {},
            "fragments": fragments,
            "pending": cand["state"] == "pending",
            "default_kind": cand["proposed"].get("kind")
            or (label if (label := cand["classification"]["label"]) in KIND_LABELS else "note"),
        },
        status=status,
    )


def _cell(value) -> str:
    if value is None:
        return ""
    if isinstance(value, dict):
        return ", ".join(f"{k}: {_cell(v)}" for k, v in value.items())
    if isinstance(value, list):
        return ", ".join(_cell(v) for v in value)
    return str(value)


@login_required
def candidate(request, space_id: str, candidate_id: str):
    return _render(request, space_id, _candidate(request, space_id, candidate_id))


def decision_for(post, content: dict) -> dict:
    action = post.get("action")
    if action == "promote":
        decision: dict = {"action": "promote"}
        kind = post.get("kind", "").strip()
        if kind:
            decision["kind"] = kind
        text = post.get("text")
        if text is not None and text.replace("\r\n", "\n") != content["text"]:
            # Only the text is edited here; structured data and cognition stay as proposed.
            decision["content_override"] = {**content, "text": text.replace("\r\n", "\n")}
        return decision
    if action == "fragment":
        fragments = []
        for text, kind in zip(
            post.getlist("fragment_text"), post.getlist("fragment_kind"), strict=False
        ):
            text = text.replace("\r\n", "\n")
            if not text.strip():
                continue
            fragment: dict = {"content": {"text": text}}
            if kind.strip():
                fragment["kind"] = kind.strip()
            fragments.append(fragment)
        return {"action": "fragment", "fragments": fragments}
    if action == "drop":
        reason = post.get("reason", "").strip()[:1000]
        return {"action": "drop", **({"reason": reason} if reason else {})}
    raise Http404("unknown action")


@login_required
@require_POST
def review(request, space_id: str, candidate_id: str):
    cand = _candidate(request, space_id, candidate_id)
    action = request.POST.get("action")
    if action == "dismiss":
        body = {"space_id": space_id, "candidate_id": candidate_id}
        if request.POST.get("reason", "").strip():
            body["reason"] = request.POST["reason"].strip()[:1000]
        result = act(request, "memory.candidates.dismiss", body)
    else:
        decision = decision_for(request.POST, cand["proposed"]["content"])
        if action == "fragment" and not decision["fragments"]:
            messages.error(request, "A fragment needs some text: add at least one.")
            return _render(request, space_id, cand, status=400, form=_form(request.POST))
        result = act(
            request,
            "memory.candidates.review",
            {"space_id": space_id, "candidate_id": candidate_id, "decision": decision},
        )
    if result.ok:
        records = [r["id"] for r in result.receipt.get("refs", []) if r["type"] == "record"]
        done = {
            "promote": "Promoted",
            "fragment": "Fragmented",
            "drop": "Dropped",
            "dismiss": "Dismissed",
        }[action]
        messages.success(
            request, f"{done} {candidate_id}" + (f" into {', '.join(records)}." if records else ".")
        )
        return _move_on(request, space_id, candidate_id)
    if result.code == "CANDIDATE_CONSUMED":
        fresh = _candidate(request, space_id, candidate_id)
        messages.info(
            request,
            f"Another reviewer got there first: {candidate_id} was already {fresh['state']}. Moving on.",
        )
        return _move_on(request, space_id, candidate_id)
    messages.error(request, describe(result.error))
    return _render(request, space_id, cand, status=result.error.status, form=_form(request.POST))


def _form(post) -> dict:
    fragments = [
        {"text": t, "kind": k}
        for t, k in zip(post.getlist("fragment_text"), post.getlist("fragment_kind"), strict=False)
    ]
    return {
        "action": post.get("action"),
        "text": post.get("text"),
        "kind": post.get("kind", ""),
        "reason": post.get("reason", ""),
        "fragments": fragments,
    }
