"""Recall latency at scale: `python -m bench.hybrid_latency [--records 20000] [--write-docs]`.

One subject holding `--records` records (LoCoMo turn texts, cycled, each made distinct by a
counter), then LoCoMo questions asked through `memory.recall` (max_records 10) on each engine
(`--engines`, default engine/1 hybrid/1 engine/2 hybrid/2): p50/p95 of whole calls, plus the parts
the hybrid engines add (query embedding, cosine over the subject's vectors), and the floor of the
same run: `memory.records.get` of records of the same subject, through the same `call()`. Records are loaded with the record write service in batches (the derived-copy
writer embeds each batch), not one op call each: loading is not what is measured."""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from bench._hybrid_common import django_on, fresh_database, percentile, public_url, space_with_admin
from bench.locomo import BEGIN, DEFAULT_DATA, DOCS, turns_of

LAT_BEGIN, LAT_END = BEGIN.replace("locomo", "hybrid-latency"), "<!-- hybrid-latency:end -->"


def load(
    principal, space_id: str, subject_id: str, texts: list[str], n: int, batch: int = 500
) -> float:
    from django.db import transaction
    from django.db.models import F

    from memory.models import Space, Subject
    from memory.ops.base import call
    from memory.services.record_store import Placement, Provenance, create_records
    from memory.timeutil import now

    call(principal, "memory.subjects.ensure", {"space_id": space_id, "subject_id": subject_id})
    space = Space.objects.get(space_id=space_id)
    subject = Subject.objects.get(space=space, subject_id=subject_id)
    provenance = Provenance(source="authored", author_principal_id=principal.principal_id)
    t0 = time.perf_counter()
    for start in range(0, n, batch):
        items = [
            ("note", {"text": f"{texts[i % len(texts)]} (#{i})"})
            for i in range(start, min(n, start + batch))
        ]
        with transaction.atomic():
            at = now()
            create_records(
                space,
                subject,
                items,
                Placement("context", f"c{start // batch % 8}"),
                provenance,
                at,
            )
            Subject.objects.filter(pk=subject.pk).update(revision=F("revision") + 1, updated_at=at)
        print(f"  {min(n, start + batch)} records", file=sys.stderr)
    return time.perf_counter() - t0


def random_vectors(space_id: str, subject_id: str) -> None:
    import numpy as np

    from memory.engine import embed
    from memory.models import Record
    from memory.services.hybrid_store import store_vectors

    rng = np.random.default_rng(20261204)
    rows = list(
        Record.objects.filter(space_id=space_id, subject__subject_id=subject_id).only(
            "pk", "subject_id", "revision"
        )
    )
    vectors = rng.standard_normal((len(rows), embed.DIM)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    store_vectors(rows, vectors)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--database-url", default=None)
    parser.add_argument("--records", type=int, default=20_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument(
        "--engines", nargs="+", default=["engine/1", "hybrid/1", "engine/2", "hybrid/2"]
    )
    parser.add_argument(
        "--random-vectors",
        action="store_true",
        help="load without embedding, then store seeded random unit vectors (latency only: "
        "the cosine pass and the queries cost the same whatever the vectors hold)",
    )
    parser.add_argument("--write-docs", action="store_true")
    args = parser.parse_args(argv)
    hybrid_too = any(e.startswith("hybrid/") for e in args.engines)
    embed_on_load = hybrid_too and not args.random_vectors
    # A hybrid engine at start-up registers the embedding writer, so the load embeds too.
    django_on(
        fresh_database(args.database_url, "bench-hybrid-latency"),
        "hybrid/2" if embed_on_load else "engine/2",
    )
    from django.conf import settings
    from django.db import connection

    from memory.engine import embed, hybrid
    from memory.models import Subject
    from memory.ops.base import call
    from memory.services import hybrid_store

    samples = json.loads(args.data.read_text())
    texts = [
        f"{t['speaker']}: {t['text']}" for s in samples for _, _, t in turns_of(s["conversation"])
    ]
    questions = [qa["question"] for s in samples for qa in s["qa"]][: args.queries]
    principal = space_with_admin("latency")
    load_s = load(principal, "latency", "u1", texts, args.records)
    if hybrid_too and args.random_vectors:
        random_vectors("latency", "u1")
    elif embed_on_load:
        # The writes queued their vectors (a worker embeds them after commit in the provider);
        # drained here, in batches, before any question.
        t0 = time.perf_counter()
        hybrid_store.drain()
        load_s += time.perf_counter() - t0
    if connection.vendor == "postgresql":
        # What autovacuum does shortly after a bulk load; without statistics the planner sees
        # empty tables and picks nested loops over thousands of rows.
        with connection.cursor() as cur:
            cur.execute("VACUUM ANALYZE")  # autovacuum is off on some servers (this one)
    subject = Subject.objects.get(space_id="latency", subject_id="u1")
    rows = []
    from memory.models import Record

    some = list(
        Record.objects.filter(subject=subject)
        .order_by("record_id")
        .values_list("record_id", flat=True)[:: max(1, args.records // len(questions))]
    )[: len(questions)]
    lat = []
    for rid in some:
        t0 = time.perf_counter()
        call(principal, "memory.records.get", {"space_id": "latency", "record_id": rid})
        lat.append(1000 * (time.perf_counter() - t0))
    floor = (percentile(lat, 0.5), percentile(lat, 0.95))
    rows.append(("floor: memory.records.get", floor[0], floor[1], len(lat)))
    for engine in args.engines:
        settings.SPOKE_MEMORY_ENGINE = engine
        req = {"space_id": "latency", "subject_id": "u1", "budget": {"max_records": 10}}
        call(
            principal, "memory.recall", {**req, "query": {"text": "warm up"}}
        )  # fills the vector cache
        lat = []
        for q in questions:
            t0 = time.perf_counter()
            call(principal, "memory.recall", {**req, "query": {"text": q}})
            lat.append(1000 * (time.perf_counter() - t0))
        rows.append(
            (f"memory.recall, {engine}", percentile(lat, 0.5), percentile(lat, 0.95), len(lat))
        )
    emb, cos = [], []
    vectors = hybrid_store.subject_vectors(subject)
    for q in questions if hybrid_too else []:
        t0 = time.perf_counter()
        v = embed.embed([q])[0]
        emb.append(1000 * (time.perf_counter() - t0))
        t0 = time.perf_counter()
        hybrid.cosine_ranking(v, vectors.ids, vectors.matrix, top_n=4 * hybrid.SEMANTIC_TOP_N)
        cos.append(1000 * (time.perf_counter() - t0))
    lines = [
        "| measured | p50 ms | p95 ms | calls | p95 / floor p95 |",
        "|---|---|---|---|---|",
    ]
    lines += [
        f"| {e} | {p50:.1f} | {p95:.1f} | {n} | {p95 / floor[1]:.1f}× |" for e, p50, p95, n in rows
    ]
    lines += [
        f"| hybrid part: query embedding | {percentile(emb, 0.5):.1f} | {percentile(emb, 0.95):.1f} | {len(emb)} | |",
        f"| hybrid part: cosine top-{4 * hybrid.SEMANTIC_TOP_N} over {len(vectors.ids)} vectors | "
        f"{percentile(cos, 0.5):.1f} | {percentile(cos, 0.95):.1f} | {len(cos)} | |",
        "",
        f"{args.records} records in one subject ({connection.vendor}); loaded"
        + (" (random vectors)" if args.random_vectors else " and embedded")
        + " in "
        f"{load_s:.0f} s; {len(questions)} LoCoMo questions, max_records 10.",
    ]
    text = "\n".join(lines)
    print(text)
    if args.write_docs:
        command = "python -m bench.hybrid_latency --write-docs" + (
            f" --database-url {public_url(args.database_url)}" if args.database_url else ""
        )
        block = f"{LAT_BEGIN}\n## Recall latency at {args.records} records per subject\n\nMade by `{command}`.\n\n{text}\n{LAT_END}"
        old = DOCS.read_text() if DOCS.exists() else "# Performance\n"
        if LAT_BEGIN in old and LAT_END in old:
            head, rest = old.split(LAT_BEGIN, 1)
            new = head + block + rest.split(LAT_END, 1)[1]
        else:
            new = old.rstrip("\n") + "\n\n" + block + "\n"
        DOCS.write_text(new)


if __name__ == "__main__":
    main()
