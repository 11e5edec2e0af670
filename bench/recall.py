"""Recall benchmark (PostgreSQL): `DATABASE_URL=postgres://... python -m bench.recall`.

Builds (once; `--rebuild` to start over) three spaces of n = 1,000, 10,000 and 100,000 records,
each spread over n/100 subjects of 100 records, plus one big subject with n/5 records (20,000 in
the largest space). Texts are 8-20 words drawn from a 5,000-word Zipf-like vocabulary with a
fixed seed. For each space it times, in the same run and on the same queries:

- recall: `memory.ops.base.call(principal, "memory.recall", ...)` in-process (schema gates,
  coverage, the lexical narrowing, the engine ranking and budget, the wire records), on
  `--engine` (default engine/2; the records' term rows are written as they are loaded);
- floor: the raw read recall is built on (the postings of the query's terms in the subject's
  term rows, `memory_recordterm`: the distinct records holding any of them). Before engine/1
  was retired (issue 42) it was the GIN-indexed full-text match over `spoke_recall_lexemes`.

and prints p50/p95 in milliseconds and the p50/p95 ratio recall/floor, as a Markdown table."""
# ruff: noqa: S311 -- seeded pseudo-random data for a reproducible benchmark, not secrets

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time
from datetime import UTC, datetime, timedelta


def _setup(engine: str) -> None:
    os.environ["SPOKE_MEMORY_ENGINE"] = engine
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "spokememory.settings")
    os.environ.setdefault(
        "SECRET_KEY", "bench-only-secret-key-not-for-production-use"
    )  # a throwaway database
    import django

    django.setup()


SCALES = (1_000, 10_000, 100_000)
VOCAB_SIZE = 5_000
SEED = 20260101
T0 = datetime(2026, 1, 1, tzinfo=UTC)


def vocabulary(rng: random.Random) -> tuple[list[str], list[float]]:
    letters = "abcdefghijklmnopqrstuvwxyz"
    words = sorted(
        {
            "".join(rng.choice(letters) for _ in range(rng.randint(3, 9)))
            for _ in range(VOCAB_SIZE * 2)
        }
    )
    rng.shuffle(words)
    words = words[:VOCAB_SIZE]
    weights = [1 / (rank + 1) ** 1.05 for rank in range(len(words))]
    return words, weights


def build_space(n: int, rebuild: bool) -> tuple[str, list[str], str]:
    from django.db import connection

    from memory.models import Principal, Record, Space, Subject
    from memory.services import term_store
    from memory.services.operators import issue_root_grant
    from tests import factories

    space_id = f"bench-recall-{n}"
    subject_ids = [f"user-{i:05d}" for i in range(n // 100)]
    if rebuild:
        Space.objects.filter(space_id=space_id).delete()
    space = Space.objects.filter(space_id=space_id).first()
    expected = n + n // 5
    if space is not None and Record.objects.filter(space=space).count() == expected:
        return space_id, subject_ids, "big"
    Space.objects.filter(space_id=space_id).delete()
    space = factories.make_space(space_id)
    principal = (
        Principal.objects.filter(display_name="bench-recall").first()
        or factories.make_principal("bench-recall")[0]
    )
    issue_root_grant(space, principal)
    rng = random.Random(SEED + n)
    words, weights = vocabulary(random.Random(SEED))
    by_id = {
        s.subject_id: s
        for s in Subject.objects.filter(
            space=space,
            subject_id__in=factories.ensure_subjects(principal, space_id, [*subject_ids, "big"]),
        )
    }
    subjects = [by_id[s] for s in [*subject_ids, "big"]]
    plan = [(subj, 100) for subj in subjects[:-1]] + [(subjects[-1], n // 5)]
    batch: list[Record] = []
    seq = 0
    started = time.perf_counter()
    for subject, count in plan:
        for _ in range(count):
            seq += 1
            text = " ".join(rng.choices(words, weights, k=rng.randint(8, 20)))
            at = T0 + timedelta(minutes=seq)
            shared = rng.random() < 0.1
            batch.append(
                Record(
                    space=space,
                    subject=subject,
                    record_id=f"rec_{seq:08d}",
                    kind="note",
                    content={"text": text},
                    text=text,
                    placement_scope="shared" if shared else "context",
                    placement_context_id=None if shared else f"c{rng.randint(1, 3)}",
                    prov_source="authored",
                    prov_author_principal_id=principal.principal_id,
                    prov_created_at=at,
                    created_at=at,
                    updated_at=at,
                )
            )
            if len(batch) >= 5_000:
                term_store.write_terms(Record.objects.bulk_create(batch))
                batch = []
    if batch:
        term_store.write_terms(Record.objects.bulk_create(batch))
    with connection.cursor() as cur:
        # What autovacuum does after a bulk load (this machine's PostgreSQL runs with
        # autovacuum off): statistics for the planner and the visibility map, without which
        # the covering term index cannot be read index-only.
        cur.execute("VACUUM ANALYZE memory_record")
        cur.execute("VACUUM ANALYZE memory_recordterm")
    print(
        f"# built {space_id}: {expected} records in {time.perf_counter() - started:.1f}s",
        file=sys.stderr,
    )
    return space_id, subject_ids, "big"


def queries(count: int, broad: bool = False) -> list[str]:
    rng = random.Random(SEED + 1)
    words, _ = vocabulary(random.Random(SEED))
    # mid-frequency words, 2-3 per query: the shape of a real recall query; "broad" queries use
    # the 20 commonest words and match a large share of the subject (the worst case)
    pool = words[:20] if broad else words[20:2_000]
    return [" ".join(rng.sample(pool, rng.randint(2, 3))) for _ in range(count)]


def floor_sql(subject_pk: int, query: str) -> int:
    from django.db import connection

    from memory.engine import lexicon

    with connection.cursor() as cur:
        cur.execute(
            "SELECT DISTINCT record_id FROM memory_recordterm WHERE subject_id = %s "
            "AND term = ANY(%s)",
            [subject_pk, lexicon.query_terms(query)],
        )
        return len(cur.fetchall())


def timed(fn, items) -> list[float]:
    out = []
    for item in items:
        start = time.perf_counter()
        fn(item)
        out.append((time.perf_counter() - start) * 1000)
    return out


def pct(values: list[float], q: int) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[q - 1]


def run(n: int, rebuild: bool, iterations: int) -> list[tuple]:
    from memory.models import Principal, Subject
    from memory.ops.base import call

    space_id, subject_ids, big = build_space(n, rebuild)
    principal = Principal.objects.get(display_name="bench-recall")
    rng = random.Random(SEED + 2)
    rows = []
    scenarios = (
        ("100-record subject", lambda: rng.choice(subject_ids), False),
        (f"{n // 5:,}-record subject", lambda: big, False),
        (f"{n // 5:,}-record subject, broad query", lambda: big, True),
    )
    for label, pick, broad in scenarios:
        qs = queries(iterations if not broad else max(iterations // 3, 20), broad)
        targets = [pick() for _ in qs]
        pks = {
            s.subject_id: s.pk
            for s in Subject.objects.filter(space_id=space_id, subject_id__in=set(targets))
        }
        work = list(zip(targets, qs, strict=True))

        def recall(item):
            subject_id, text = item
            return call(
                principal,
                "memory.recall",
                {"space_id": space_id, "subject_id": subject_id, "query": {"text": text}},
            )

        def floor(item, pks=pks):
            subject_id, text = item
            return floor_sql(pks[subject_id], text)

        for _ in range(
            2
        ):  # warm caches and connections, then interleave so both see the same state
            timed(recall, work[:20])
            timed(floor, work[:20])
        r, f = timed(recall, work), timed(floor, work)
        eligible = statistics.mean(recall(w)["recall"]["total_eligible"] for w in work[:20])
        rows.append(
            (f"{n:,}", label, f"{eligible:.0f}", pct(r, 50), pct(r, 95), pct(f, 50), pct(f, 95))
        )
    return rows


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rebuild", action="store_true", help="drop and rebuild the bench spaces")
    parser.add_argument("--iterations", type=int, default=300)
    parser.add_argument("--scales", default=",".join(map(str, SCALES)))
    parser.add_argument(
        "--engine", default="engine/2", help="a served engine: engine/2 or hybrid/6"
    )
    args = parser.parse_args(argv)
    _setup(args.engine)
    from django.core.management import call_command
    from django.db import connection

    if connection.vendor != "postgresql":
        sys.exit("bench.recall needs PostgreSQL: set DATABASE_URL=postgres://...")
    call_command("migrate", verbosity=0)
    print(
        "| space records | subject | mean eligible | recall p50 ms | recall p95 ms | floor p50 ms | floor p95 ms | ratio p50 | ratio p95 |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for n in map(int, args.scales.split(",")):
        for space, label, eligible, rp50, rp95, fp50, fp95 in run(n, args.rebuild, args.iterations):
            print(
                f"| {space} | {label} | {eligible} | {rp50:.2f} | {rp95:.2f} | {fp50:.2f} | {fp95:.2f} "
                f"| {rp50 / fp50:.1f}× | {rp95 / fp95:.1f}× |",
                flush=True,
            )


if __name__ == "__main__":
    main()
