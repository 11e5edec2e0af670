"""Queue screen: a space's pending candidates, oldest first, paginated by the op's own keyset
cursor (memory.candidates.list), filterable by subject (an op member) and by classification
label and capture context. The last two are not members of the op, so the console narrows the
op's pages: it reads up to SCAN_PAGES pages of max size per screen and shows how far it got; the
authorization and the order stay the op's. Bulk dismiss/drop calls the op once per candidate."""

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from memory.ops.base import call
from memory.wire.errors import WireError
from reviews.console import describe, new_key, principal_of

PAGE_SIZE = 50
SCAN_PAGES = 5
LABELS = ["preference", "fact", "event", "plan", "cognition", "noise"]


def context_of(candidate: dict) -> str:
    placement = candidate["capture_scope"]["placement"]
    return placement.get("context_id", "") if placement["scope"] == "context" else "shared"


def _matches(candidate: dict, label: str, context: str) -> bool:
    if label and candidate["classification"]["label"] != label:
        return False
    return not context or context_of(candidate) == context


def queue_page(request, space_id: str, params) -> dict:
    """One screen of the queue; raises Http404 when the space is not visible."""
    subject = params.get("subject", "").strip()
    label = params.get("label", "").strip()
    context = params.get("context", "").strip()
    cursor = params.get("cursor") or None
    narrowed = bool(label or context)
    size = settings.SPOKE_MEMORY_LIMITS["max_page_size"] if narrowed else PAGE_SIZE
    body = {"space_id": space_id, "states": ["pending"], "page_size": size}
    if subject:
        body["subject_id"] = subject
    shown: list[dict] = []
    total, scanned, error = 0, 0, None
    principal = principal_of(request)
    for _ in range(SCAN_PAGES if narrowed else 1):
        if cursor:
            body["cursor"] = cursor
        try:
            answer = call(principal, "memory.candidates.list", body)
        except WireError as err:
            if err.code == "NOT_FOUND" and err.details.get("resource") == "space":
                raise Http404(err.message) from err
            error = err
            cursor = None
            break
        total = answer["total_authorized"]
        scanned += len(answer["candidates"])
        shown.extend(c for c in answer["candidates"] if _matches(c, label, context))
        cursor = answer["next_cursor"]
        if not cursor or len(shown) >= PAGE_SIZE:
            break
    return {
        "space_id": space_id,
        "candidates": shown,
        "total": total,
        "scanned": scanned,
        "next_cursor": cursor,
        "subject": subject,
        "label": label,
        "context": context,
        "narrowed": narrowed,
        "labels": LABELS,
        "error": describe(error) if error else None,
        "label_counts": _counts(c["classification"]["label"] for c in shown),
        "context_counts": _counts(context_of(c) for c in shown),
        "first_page": not params.get("cursor"),
        "bulk_key": new_key(),
    }


def _counts(values) -> list[tuple[str, int]]:
    out: dict[str, int] = {}
    for v in values:
        out[v] = out.get(v, 0) + 1
    return sorted(out.items())


@login_required
def queue(request, space_id: str):
    ctx = queue_page(request, space_id, request.GET)
    template = (
        "reviews/_queue_table.html"
        if request.htmx and not request.htmx.boosted
        else "reviews/queue.html"
    )
    return render(request, template, ctx)


@login_required
@require_POST
def bulk(request, space_id: str):
    """Dismiss or drop the selected candidates. Each candidate gets its own key derived from the
    form's key, so a resubmit of the same form does each one at most once."""
    action = request.POST.get("action")
    ids = request.POST.getlist("candidate_ids")[: PAGE_SIZE * SCAN_PAGES]
    key = request.POST.get("idempotency_key", "")[:150]
    reason = request.POST.get("reason", "").strip()[:1000]
    done, taken, failed = 0, 0, []
    for cid in ids:
        if action == "dismiss":
            op, body = "memory.candidates.dismiss", {"space_id": space_id, "candidate_id": cid}
            if reason:
                body["reason"] = reason
        elif action == "drop":
            decision = {"action": "drop", **({"reason": reason} if reason else {})}
            op, body = (
                "memory.candidates.review",
                {"space_id": space_id, "candidate_id": cid, "decision": decision},
            )
        else:
            messages.error(request, "Choose dismiss or drop.")
            break
        if key:
            body["idempotency_key"] = f"{key}:{cid}"[:200]
        try:
            call(principal_of(request), op, body)
            done += 1
        except WireError as err:
            if err.code == "CANDIDATE_CONSUMED":
                taken += 1
            else:
                failed.append(describe(err))
    if done:
        messages.success(
            request,
            f"{done} candidate{'s' if done != 1 else ''} {action}ped."
            if action == "drop"
            else f"{done} candidate{'s' if done != 1 else ''} dismissed.",
        )
    if taken:
        messages.info(request, f"{taken} had already been handled by another reviewer.")
    for line in sorted(set(failed)):
        messages.error(request, line)
    return redirect(reverse("reviews:queue", args=[space_id]) + _keep(request.POST))


def _keep(post) -> str:
    from urllib.parse import urlencode

    keep = {k: post.get(k) for k in ("subject", "label", "context") if post.get(k)}
    return "?" + urlencode(keep) if keep else ""
