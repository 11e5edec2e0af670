"""Review queue page with 10,000 pending candidates: server time and query count of the first,
middle and last page, of filtered pages (label, capture placement, subject, all three, newest
first; each filter a member of memory.candidates.list) and of one candidate page with its
evidence panels, against floors measured in the same run (a bare Django view through the same
middleware, and the bare keyset query + count each page needs). Then a subject holding 20,000
records (`--records`) with 100 pending candidates, half of them the text of one of its records:
its queue page (the duplicate check against existing records runs over that subject) and a
candidate page of it (the similar-records panel recalls over the 20,000 records).

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/<db> python -m bench.queue_page \
        [--candidates N] [--records N]

It creates a throw-away test database (test_<name>), fills it through the ops layer
(memory.capture, as a principal with a root grant) and drops it at the end."""

from __future__ import annotations

import argparse
import os
import statistics
import time

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "spokememory.settings")

os.environ.setdefault(
    "SECRET_KEY", "bench-only-secret-key-not-for-production-use"
)  # a throwaway database

# Pages link static files by their plain names (no collectstatic manifest in a throw-away run).
os.environ.setdefault("SPOKE_MEMORY_STATIC_HASHED", "0")

import django  # noqa: E402

django.setup()

from django.conf import settings  # noqa: E402
from django.db import connection  # noqa: E402
from django.http import HttpResponse  # noqa: E402
from django.test import Client  # noqa: E402
from django.test.utils import CaptureQueriesContext, override_settings, setup_test_environment  # noqa: E402
from django.urls import include, path  # noqa: E402

RUNS = 21


def bare(request):
    return HttpResponse(b"ok")


urlpatterns = [path("bare/", bare), path("console/", include("reviews.urls"))]


def fill(n: int):
    from django.contrib.auth import get_user_model

    from memory.ops.base import call
    from tests import factories

    space = factories.make_space("bench")
    user = get_user_model().objects.create_user("bench", password="x")  # noqa: S106
    principal, _ = factories.make_admin(space, "bench", kind="user", user=user)
    per_call = settings.SPOKE_MEMORY_LIMITS["max_capture_items"]
    subjects = factories.ensure_subjects(principal, "bench", [f"user:{i}" for i in range(20)])
    made = 0
    while made < n:
        k = min(per_call, n - made)
        subject = subjects[(made // per_call) % len(subjects)]
        placement = (
            {"scope": "context", "context_id": f"c{made % 5}"} if made % 3 else {"scope": "shared"}
        )
        call(
            principal,
            "memory.capture",
            {
                "space_id": "bench",
                "subject_id": subject,
                "capture_scope": {"placement": placement},
                "items": [{"content": {"text": text(made + i)}} for i in range(k)],
            },
        )
        made += k
    return user, principal


TEXTS = [  # classified preference, fact, event, noise (engine/1)
    "Candidate {n}: the user prefers option {n} over the others.",
    "Candidate {n}: the user works at company {n}.",
    "Candidate {n}: meeting on Friday at 3pm.",
    "Candidate {n}: lol ok",
]


def text(n: int) -> str:
    return TEXTS[n % len(TEXTS)].format(n=n)


def cursors(principal, pages: int) -> list[str | None]:
    from memory.ops.base import call

    out: list[str | None] = [None]
    cursor = None
    for _ in range(pages - 1):
        body = {"space_id": "bench", "states": ["pending"], "page_size": 50}
        if cursor:
            body["cursor"] = cursor
        cursor = call(principal, "memory.candidates.list", body)["next_cursor"]
        if not cursor:
            break
        out.append(cursor)
    return out


def timed(rows) -> list[tuple[float, float, int]]:
    """Median and p90 ms and the query count of each row. The rows are timed in rounds (every
    row once per round, RUNS rounds) so a burst of load from other work on a shared machine
    falls on all rows alike instead of on whichever row was running."""
    for _, fn in rows:
        fn()  # warm
    samples: list[list[float]] = [[] for _ in rows]
    queries = [0] * len(rows)
    for _ in range(RUNS):
        for i, (_, fn) in enumerate(rows):
            with CaptureQueriesContext(connection) as q:
                t0 = time.perf_counter()
                fn()
                samples[i].append((time.perf_counter() - t0) * 1000)
            queries[i] = len(q.captured_queries)
    return [
        (statistics.median(s), statistics.quantiles(s, n=10)[-1], n)
        for s, n in zip(samples, queries, strict=True)
    ]


def getter(client, url: str):
    def get():
        response = client.get(url)
        assert response.status_code == 200, response.status_code

    return get


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--candidates", type=int, default=10_000)
    parser.add_argument("--records", type=int, default=20_000)
    args = parser.parse_args()
    setup_test_environment()
    old = connection.creation.create_test_db(verbosity=0, autoclobber=True)
    try:
        with override_settings(ROOT_URLCONF="bench.queue_page", DEBUG=False):
            run(args.candidates, args.records)
    finally:
        connection.creation.destroy_test_db(old, verbosity=0)


BIG = "user:big"
BIG_PENDING = 100


def record_text(i: int) -> str:
    return f"Record {i}: the user mentioned topic {i % 997} while talking about plan {i % 13}."


def loaded_text(i: int) -> str:
    return f"{record_text(i)} (#{i})"  # what bench.hybrid_latency.load stores for record i


def fill_big(principal, records: int) -> None:
    """`records` records of one subject, loaded with the record write service in batches (as
    bench.hybrid_latency loads them: loading is not what is measured), vectors stored for a
    hybrid engine (seeded random: the cosine pass costs the same whatever they hold), then 100
    pending candidates of the subject through memory.capture: every other one the text of one of
    its records with the case and punctuation changed (a duplicate by the queue's rule)."""
    from django.conf import settings

    from bench.hybrid_latency import load, random_vectors
    from memory.models import PendingEmbedding
    from memory.ops.base import call

    load(principal, "bench", BIG, [record_text(i) for i in range(records)], records)
    if settings.SPOKE_MEMORY_ENGINE.startswith("hybrid/"):
        random_vectors("bench", BIG)
        PendingEmbedding.objects.all().delete()
    texts = [
        loaded_text(i * 37 % records).upper().replace(".", "!")
        if i % 2
        else f"New fact {i} about the user."
        for i in range(BIG_PENDING)
    ]
    for start in range(0, BIG_PENDING, 32):
        call(
            principal,
            "memory.capture",
            {
                "space_id": "bench",
                "subject_id": BIG,
                "capture_scope": {"placement": {"scope": "shared"}},
                "items": [{"content": {"text": t}} for t in texts[start : start + 32]],
            },
        )


def run(n: int, records: int) -> None:
    from django.conf import settings

    from memory.models import Candidate

    t0 = time.perf_counter()
    user, principal = fill(n)
    print(
        f"filled {n} pending candidates in {time.perf_counter() - t0:.1f}s on {connection.vendor}"
    )
    t0 = time.perf_counter()
    fill_big(principal, records)
    print(
        f"loaded {records} records and {BIG_PENDING} candidates of {BIG} in "
        f"{time.perf_counter() - t0:.1f}s; engine {settings.SPOKE_MEMORY_ENGINE}"
    )
    if connection.vendor == "postgresql":
        with connection.cursor() as c:  # statistics as a live table has them
            for table in ("memory_candidate", "memory_record", "memory_recordterm"):
                c.execute(f"ANALYZE {table}")
    pages = cursors(principal, (n + BIG_PENDING + 49) // 50)
    client = Client()
    client.force_login(user)
    rows = [("bare view (floor)", lambda: client.get("/bare/"))]

    def bare_query(offset_cursor_row):
        def q():
            qs = Candidate.objects.filter(space_id="bench", state="pending").select_related(
                "subject"
            )
            if offset_cursor_row is not None:
                qs = qs.filter(captured_at__gte=offset_cursor_row.captured_at)
            list(qs.order_by("captured_at", "candidate_id")[:51])
            qs.count()

        return q

    mid = Candidate.objects.filter(space_id="bench").order_by("captured_at", "candidate_id")[n // 2]
    rows.append(("bare keyset query + count (floor)", bare_query(mid)))
    for label, index in (
        ("queue page: first", 0),
        ("queue page: middle", len(pages) // 2),
        ("queue page: last", len(pages) - 1),
    ):
        cursor = pages[index]
        url = "/console/s/bench/queue/" + (f"?cursor={cursor}" if cursor else "")
        rows.append((f"{label} (page {index + 1} of {len(pages)})", getter(client, url)))

    def filtered_floor():
        qs = Candidate.objects.filter(
            space_id="bench",
            state="pending",
            classification__label__in=["fact"],
            scope_placement_scope="context",
            scope_context_id__in=["c1"],
        ).select_related("subject")
        list(qs.order_by("captured_at", "candidate_id")[:51])
        qs.count()

    rows.append(("bare filtered query + count (floor)", filtered_floor))
    for label, query in (
        ("filtered: label=fact", "label=fact"),
        ("filtered: placement=c1", "context=c1"),
        ("filtered: placement=shared", "context=shared"),
        ("filtered: subject=user:3", "subject=user:3"),
        ("filtered: label=fact, placement=c1", "label=fact&context=c1"),
        ("filtered: all three, newest first", "label=fact&context=c1&subject=user:3&order=newest"),
    ):
        rows.append((label, getter(client, f"/console/s/bench/queue/?{query}")))
    first = Candidate.objects.filter(space_id="bench").order_by("captured_at", "candidate_id")[0]
    rows.append(
        (
            "candidate page with evidence panels",
            getter(client, f"/console/s/bench/candidates/{first.candidate_id}/?label=preference"),
        )
    )
    rows.append(
        (
            f"queue page: subject={BIG} ({records} records, {BIG_PENDING} pending)",
            getter(client, f"/console/s/bench/queue/?subject={BIG}"),
        )
    )
    big_first = (
        Candidate.objects.filter(space_id="bench", subject__subject_id=BIG).order_by(
            "captured_at", "candidate_id"
        )[1]  # the text of a record: a duplicate
    )
    rows.append(
        (
            f"candidate page, subject of {records} records",
            getter(client, f"/console/s/bench/candidates/{big_first.candidate_id}/?subject={BIG}"),
        )
    )
    rows += parts_of_the_candidate_page(principal, big_first.candidate_id, records)
    check_big(client, records)
    print(f"{'what':52} {'median ms':>10} {'p90 ms':>8} {'queries':>8}")
    for (label, _), (ms, p90, queries) in zip(rows, timed(rows), strict=True):
        print(f"{label:52} {ms:10.1f} {p90:8.1f} {queries:8d}")


def parts_of_the_candidate_page(principal, candidate_id: str, records: int):
    """The two evidence reads of that candidate page that grow with the subject, alone through
    `call()` with the page's own requests: what the console adds is the page minus these."""
    from memory.ops.base import call

    text = call(
        principal, "memory.candidates.get", {"space_id": "bench", "candidate_id": candidate_id}
    )["candidate"]["proposed"]["content"]["text"]
    where = {"space_id": "bench", "subject_id": BIG}
    return [
        (
            f"  part: memory.recall of its text, budget 5 ({records} records)",
            lambda: call(
                principal,
                "memory.recall",
                {**where, "query": {"text": text[:4096]}, "budget": {"max_records": 5}},
            ),
        ),
        (
            "  part: memory.records.list, newest 5 and the total",
            lambda: call(principal, "memory.records.list", {**where, "page_size": 5}),
        ),
    ]


def check_big(client, records: int) -> None:
    """The big subject's pages show what they are measured for (not an empty panel)."""
    queue = client.get(f"/console/s/bench/queue/?subject={BIG}")
    marked = sum(1 for c in queue.context["candidates"] if "duplicate_record" in c)
    print(f"queue page of {BIG}: {marked} of {len(queue.context['candidates'])} rows marked")
    assert marked == min(50, BIG_PENDING) // 2, marked
    first = queue.context["candidates"][1]
    page = client.get(f"/console/s/bench/candidates/{first['candidate_id']}/?subject={BIG}")
    assert page.context["similar"] and page.context["duplicates"], "no similar records shown"
    assert page.context["newest_total"] == records


if __name__ == "__main__":
    main()
