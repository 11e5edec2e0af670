"""The subjects of a space (issue 41): who the space remembers, a page at a time, searched by id,
each with its count of live records and of pending candidates and its last activity (the latest
of the subject's own change, a record's write and a capture), newest activity first.

Only subjects the moderator's grants cover are listed (coverage of a subject is decided from its
id, as every op decides it), and the counts are of what the moderator may read: records through
`records_read`, candidates through `candidates_read` or `review`, each by placement, as the ops
filter them (memory.access.Coverage.placement_q). A space the moderator holds no grant in is not
found, as everywhere. One page is four queries whatever its size: the grants, the page of
subjects, the record counts and the candidate counts of that page."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.db.models import Count, Max, Q
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render

from memory.access import Coverage, coverage_for
from memory.models import Candidate, Record, Subject
from memory.timeutil import now
from memory.wire.errors import WireError
from reviews.console import principal_of

PAGE = 25
SEARCH_CHARS = 128
RECORDS = ["records_read"]
CANDIDATES = ["candidates_read", "review"]


def _covered(cov: Coverage) -> Q:
    """The subjects one of the caller's grants covers (by id; every subject for a grant with no
    subject_ids)."""
    named: set[str] = set()
    for g in cov.grants:
        if g.subject_ids is None:
            return Q()
        named.update(g.subject_ids)
    return Q(subject_id__in=sorted(named))


@login_required
def subjects(request: HttpRequest, space_id: str) -> HttpResponse:
    try:
        cov = coverage_for(space_id, principal_of(request), now())
    except WireError:
        raise Http404("space") from None
    search = request.GET.get("q", "").strip()[:SEARCH_CHARS]
    rows = Subject.objects.filter(space=cov.space).filter(_covered(cov))
    if search:
        rows = rows.filter(subject_id__icontains=search)
    rows = rows.order_by("-updated_at", "subject_id")
    page = Paginator(rows.only("pk", "subject_id", "kind", "state", "updated_at"), PAGE).get_page(
        request.GET.get("page")
    )
    pks = [s.pk for s in page]
    records = {
        r["subject_id"]: r
        for r in Record.objects.filter(space=cov.space, subject_id__in=pks, deleted_at__isnull=True)
        .filter(cov.placement_q(RECORDS))
        .values("subject_id")
        .annotate(n=Count("pk"), last=Max("updated_at"))
    }
    pending = {
        c["subject_id"]: c
        for c in Candidate.objects.filter(space=cov.space, subject_id__in=pks, state="pending")
        .filter(
            cov.placement_q(
                CANDIDATES,
                scope_field="scope_placement_scope",
                context_field="scope_context_id",
            )
        )
        .values("subject_id")
        .annotate(n=Count("pk"), last=Max("captured_at"))
    }
    listed = []
    for s in page:
        rec, cand = records.get(s.pk, {}), pending.get(s.pk, {})
        times = [t for t in (s.updated_at, rec.get("last"), cand.get("last")) if t is not None]
        listed.append(
            {
                "subject_id": s.subject_id,
                "kind": s.kind,
                "state": s.state,
                "records": rec.get("n", 0),
                "pending": cand.get("n", 0),
                "last_activity": max(times),
            }
        )
    return render(
        request,
        "reviews/subjects.html",
        {"space_id": space_id, "page": page, "subjects": listed, "q": search},
    )
