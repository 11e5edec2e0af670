"""Recall latency at scale: `python -m bench.hybrid_latency [--records 20000] [--write-docs]`.

One subject holding `--records` records (LoCoMo turn texts, cycled, each made distinct by a
counter), then LoCoMo questions asked through `memory.recall` (max_records 10) on each engine
(`--engines`, default engine/2 hybrid/6: the served ones): p50/p95 of whole calls, plus the parts
the hybrid engines add (query embedding, cosine over the subject's vectors), and the floor of the
same run: `memory.records.get` of records of the same subject, through the same `call()`. Records are loaded with the record write service in batches (the derived-copy
writer embeds each batch), not one op call each: loading is not what is measured.

With `--worker-embed N` the product's own Celery worker (bench._live, started as `make run`
starts it) makes the vectors of the last N records their writes queued, the others getting
seeded random vectors of the model's dimension: the bench times the drain (index time per
1,000 records through the worker, at this subject size), reads the worker's memory, and asks
the questions only once the backlog (what /readyz shows as `embedding_backlog`) is 0.
`--reembed-model SPEC` then restarts the worker with another model, as an operator changing
`SPOKE_MEMORY_EMBED_MODEL` does, and counts the records it re-embeds per second for
`--reembed-seconds`."""

from __future__ import annotations

import argparse
import itertools
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


def random_vectors(
    space_id: str, subject_id: str, leave: int = 0, also: tuple[str, ...] = ()
) -> None:
    """Seeded random unit vectors of the configured model's dimension for the subject's records,
    but the last `leave` (by pk), which keep their place in the embedding backlog; the others
    leave it. `also`: the model keys of the other engines asked (hybrid/3's torch model beside
    hybrid/6's int8 form), whose vectors every record gets (the same random ones: latency only)."""
    import numpy as np

    from memory.embedding import embed
    from memory.models import PendingEmbedding, Record
    from memory.services.hybrid_store import store_vectors

    rng = np.random.default_rng(20261204)
    rows = list(
        Record.objects.filter(space_id=space_id, subject__subject_id=subject_id)
        .order_by("pk")
        .only("pk", "space_id", "subject_id", "revision")
    )
    rows = rows[: len(rows) - leave]
    dim = embed.embed(["the model's dimension"]).shape[1]
    vectors = rng.standard_normal((len(rows), dim)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    every = list(
        Record.objects.filter(space_id=space_id, subject__subject_id=subject_id)
        .order_by("pk")
        .only("pk", "space_id", "subject_id", "revision")
    )
    more = rng.standard_normal((len(every) - len(rows), dim)).astype(np.float32)
    more /= np.linalg.norm(more, axis=1, keepdims=True)
    for key in also:
        both = np.concatenate([vectors, more])
        for start in range(0, len(every), 2000):
            store_vectors(every[start : start + 2000], both[start : start + 2000], key)
    for start in range(0, len(rows), 2000):
        store_vectors(rows[start : start + 2000], vectors[start : start + 2000])
        PendingEmbedding.objects.filter(
            space_id=space_id, record_id__in=[r.pk for r in rows[start : start + 2000]]
        ).delete()


def backlog_rate(samples: list[tuple[float, int]]) -> tuple[float, float]:
    """(records per second, seconds before the backlog first fell) from (time, backlog) samples
    taken from the worker's start. The rate is counted from the first fall to the last, batch
    to batch, so the worker's start and model load are not in it."""
    drops = [b for a, b in itertools.pairwise(samples) if b[1] < a[1]]
    if len(drops) < 2:
        return float("nan"), float("nan")
    rate = (drops[0][1] - drops[-1][1]) / (drops[-1][0] - drops[0][0])
    return rate, drops[0][0] - samples[0][0]


def poll_backlog(
    seconds: float, until_zero: bool, until_some: bool = False
) -> list[tuple[float, int]]:
    """(time, backlog) every half second: the count /readyz shows as `embedding_backlog`."""
    from memory.services import hybrid_store

    samples = [(time.monotonic(), hybrid_store.backlog())]
    deadline = samples[0][0] + seconds
    while time.monotonic() < deadline:
        if (until_zero and samples[-1][1] == 0) or (until_some and samples[-1][1] > 0):
            break
        time.sleep(0.5)
        samples.append((time.monotonic(), hybrid_store.backlog()))
    return samples


def worker_env(embed_model: str) -> dict[str, str]:
    import os

    from django.db import connection

    from bench import _live

    db = connection.settings_dict
    if connection.vendor == "postgresql":
        url = f"postgres://{db.get('USER') or 'postgres'}@{db.get('HOST') or '127.0.0.1'}:{db.get('PORT') or 5432}/{db['NAME']}"
        if db.get("PASSWORD"):
            url = url.replace("@", f":{db['PASSWORD']}@", 1)
    else:
        url = f"sqlite:///{db['NAME']}"
    return _live.product_env(
        url,
        SPOKE_MEMORY_ENGINE=os.environ["SPOKE_MEMORY_ENGINE"],  # the engine the bench started on
        SPOKE_MEMORY_EMBED_MODEL=embed_model,
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--database-url", default=None)
    parser.add_argument("--records", type=int, default=20_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--engines", nargs="+", default=["engine/2", "hybrid/6"])
    parser.add_argument(
        "--random-vectors",
        action="store_true",
        help="load without embedding, then store seeded random unit vectors (latency only: "
        "the cosine pass and the queries cost the same whatever the vectors hold)",
    )
    parser.add_argument(
        "--embed-model", default="", help="SPOKE_MEMORY_EMBED_MODEL (default: the bundled model)"
    )
    parser.add_argument(
        "--worker-embed",
        type=int,
        default=0,
        help="the product's worker embeds the last N records (the rest: random vectors)",
    )
    parser.add_argument("--reembed-model", default=None, help="then change the model to this")
    parser.add_argument("--reembed-seconds", type=float, default=60.0)
    parser.add_argument("--write-docs", action="store_true")
    args = parser.parse_args(argv)
    if args.embed_model:
        import os

        os.environ["SPOKE_MEMORY_EMBED_MODEL"] = args.embed_model
    hybrid_too = any(e.startswith("hybrid/") for e in args.engines)
    embed_on_load = hybrid_too and (args.worker_embed > 0 or not args.random_vectors)
    # A hybrid engine at start-up registers the embedding writer, so the load embeds too.
    django_on(
        fresh_database(args.database_url, "bench-hybrid-latency"),
        next(e for e in args.engines if e.startswith("hybrid/")) if embed_on_load else "engine/2",
    )
    from django.conf import settings
    from django.db import connection

    from memory.embedding import embed
    from memory.engine import hybrid
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
    notes: list[str] = []
    # the models of the other hybrid engines asked (each engine ranks with its own when
    # --embed-model is not given): their vectors are seeded too
    first = settings.SPOKE_MEMORY_ENGINE
    keys = set()
    for engine in args.engines:
        if engine.startswith("hybrid/"):
            settings.SPOKE_MEMORY_ENGINE = engine
            keys.add(hybrid_store.model_key())
    settings.SPOKE_MEMORY_ENGINE = first
    also = tuple(sorted(keys - {hybrid_store.model_key()}))
    if args.worker_embed:
        from bench import _live

        random_vectors("latency", "u1", leave=args.worker_embed, also=also)
        queued = hybrid_store.backlog()
        from memory.tasks import drain_derived

        worker = _live.Worker(worker_env(args.embed_model), _live.LOGS / "latency-worker.log")
        try:
            drain_derived.delay()  # the writes' own wake-ups are queued too; this is the sweep's
            samples = poll_backlog(600.0, until_zero=True)
            memory = worker.memory_mb()
        finally:
            worker.stop()
        if samples[-1][1]:
            raise SystemExit(f"the worker left {samples[-1][1]} records unembedded")
        rate, start_up = backlog_rate(samples)
        notes.append(
            f"The product's worker embedded the last {queued} records (the others: random "
            f"vectors) in {samples[-1][0] - samples[0][0]:.0f} s from its start ({start_up:.0f} s "
            f"to start and load the model): {rate:.1f} records/s, **{1000 / rate:.0f} s per "
            f"1,000 records**. Worker memory at the end: pool child RSS "
            f"{memory.get('child_rss', 0):.0f} MiB (peak {memory.get('child_peak', 0):.0f}), "
            f"all its processes {memory.get('all_rss', 0):.0f} MiB. Questions asked after the "
            "backlog was 0, the worker stopped."
        )
    elif hybrid_too and args.random_vectors:
        random_vectors("latency", "u1", also=also)
    elif embed_on_load:
        # The writes queued their vectors (a worker embeds them after commit in the provider);
        # drained here, in batches, before any question.
        t0 = time.perf_counter()
        hybrid_store.drain_backlog()  # the worker's drain (it analyzes what it filled)
        load_s += time.perf_counter() - t0
    # No VACUUM ANALYZE here (issue 49): the bench measures the statistics the product leaves,
    # and recall's statements are written to stay bounded without any.
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
    emb: dict[str, list[float]] = {}  # the query's forward pass, per model
    cos: list[float] = []
    measured = set()
    for engine in [e for e in args.engines if e.startswith("hybrid/")]:
        settings.SPOKE_MEMORY_ENGINE = engine
        name = embed.identity().name
        if name in measured:
            continue
        measured.add(name)
        emb[name] = []
        vectors = hybrid_store.subject_vectors(subject)
        for q in questions:
            t0 = time.perf_counter()
            v = embed.embed([q])[0]
            emb[name].append(1000 * (time.perf_counter() - t0))
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
        f"| hybrid part: query embedding, {name} | {percentile(e, 0.5):.1f} | {percentile(e, 0.95):.1f} | {len(e)} | |"
        for name, e in emb.items()
    ]
    lines += [
        f"| hybrid part: cosine top-{4 * hybrid.SEMANTIC_TOP_N} over {args.records} vectors | "
        f"{percentile(cos, 0.5):.1f} | {percentile(cos, 0.95):.1f} | {len(cos)} | |",
        "",
        f"{args.records} records in one subject ({connection.vendor}); loaded"
        + (" (random vectors)" if args.random_vectors else " and embedded")
        + " in "
        f"{load_s:.0f} s; {len(questions)} LoCoMo questions, max_records 10. Embedding model: "
        f"{embed.identity().name} ({embed.identity().digest[:19]}…).",
        *notes,
    ]
    if args.reembed_model is not None:
        from bench import _live
        from memory.tasks import drain_derived

        worker = _live.Worker(worker_env(args.reembed_model), _live.LOGS / "reembed-worker.log")
        try:
            drain_derived.delay()  # what the beat sweep does every 30 s
            # the worker first queues every live record without a vector of the new model
            waited = poll_backlog(120.0, until_zero=False, until_some=True)
            samples = waited + poll_backlog(args.reembed_seconds, until_zero=False)
            peak = max(samples, key=lambda s: s[1])
            after = [s for s in samples if s[0] >= peak[0]]
            rate, _ = backlog_rate(after)
            done = peak[1] - after[-1][1]
            memory = worker.memory_mb()
        finally:
            worker.stop()
        name = args.reembed_model or "the bundled all-MiniLM-L6-v2"
        lines.append(
            f"Model changed to {name}: the worker queued {peak[1]} live records and re-embedded "
            f"{done} of them in the next {after[-1][0] - after[0][0]:.0f} s (model load included): "
            f"**{rate:.1f} records/s** batch to batch ({after[-1][1]} left when the bench stopped "
            "it; pool child RSS "
            f"{memory.get('child_rss', 0):.0f} MiB)."
        )
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
