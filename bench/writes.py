"""The write path against its own floor (docs/performance.md#write-path).

Under gunicorn (BENCH_WORKERS × BENCH_THREADS, default 2 × 4) on PostgreSQL, closed-loop clients
on loopback, all in ONE space, in interleaved rounds:

- floor: a bare Django view in the same server doing the minimum a correct mutation needs, one
  durable transaction inserting one record row and moving the space revision by one;
- `memory.records.create`, every client on one subject, and each client on its own subject;
- `memory.capture` with one item;
- `memory.subjects.get` (the read the issue compares writes with).

    python -m bench writes        # BENCH_SECONDS (8) per round, BENCH_CLIENTS (8), BENCH_ROUNDS (2)
    SPOKE_MEMORY_ENGINE=hybrid/6 python -m bench writes   # with the semantic extra's embedder
    SPOKE_MEMORY_ENGINE=hybrid/6 BENCH_WORKER=1 python -m bench writes   # its worker running too

Under a hybrid engine a write queues its record for a vector and wakes the embedding drain. By
default no worker runs during the load (the write path alone) and the backlog is drained here,
in-process, after it; with BENCH_WORKER=1 a Celery worker (as `make run` starts it, same broker
and database) runs from before the warm-up, embedding while the clients write on the same cores,
as one node serves, and the bench waits for it to empty the backlog after the load.

Reports throughput, p50/p95, create ÷ floor, create ÷ subjects.get, capture ÷ create, and checks
that the space revision moved by exactly the number of committed mutations."""

from __future__ import annotations

import json
import os
import time

import httpx

from bench import ROOT, closed_loop, gunicorn, knob, merged, save, seed, setup_django, table

SECONDS = knob("BENCH_SECONDS", 8.0)
CLIENTS = knob("BENCH_CLIENTS", 8)
WORKERS = knob("BENCH_WORKERS", 2)
THREADS = knob("BENCH_THREADS", 4)
ROUNDS = knob("BENCH_ROUNDS", 2)
ENGINE = os.environ.get("SPOKE_MEMORY_ENGINE", "engine/2")
WITH_WORKER = knob("BENCH_WORKER", 0)

FLOOR = "floor: bare view, insert record + bump space revision"
CREATE_ONE = "memory.records.create (one subject)"
CREATE_OWN = "memory.records.create (subject per client)"
CAPTURE = "memory.capture (1 item)"
READ = "memory.subjects.get"


def _worker(url: str, path: str, body_for, headers: dict):
    def make(i: int):
        client = httpx.Client(base_url=url, headers=headers, timeout=30.0)
        n = 0

        def one() -> str | None:
            nonlocal n
            n += 1
            r = client.post(path, content=json.dumps(body_for(i, n)))
            return None if r.status_code == 200 else f"http_{r.status_code}"

        return one

    return make


def targets(s, subject_pk: int) -> list[tuple[str, str, object]]:
    sid = s.space_id

    def text(i: int, n: int) -> dict:
        return {"text": f"client {i} wrote note {n} about the write path"}

    def create(subject):
        return lambda i, n: {
            "space_id": sid,
            "subject_id": subject(i),
            "kind": "note",
            "content": text(i, n),
            "placement": {"scope": "shared"},
        }

    out = [
        (
            FLOOR,
            "/bench/floor-write",
            lambda i, n: {
                "space_id": sid,
                "subject_pk": subject_pk,
                "principal_id": s.principal_id,
                "kind": "note",
                "content": text(i, n),
            },
        ),
        (CREATE_ONE, "/v1/ops/memory.records.create", create(lambda i: "u0")),
        (CREATE_OWN, "/v1/ops/memory.records.create", create(lambda i: f"u{i % 10}")),
        (
            CAPTURE,
            "/v1/ops/memory.capture",
            lambda i, n: {
                "space_id": sid,
                "subject_id": f"u{i % 10}",
                "capture_scope": {"placement": {"scope": "shared"}},
                "items": [{"content": text(i, n)}],
            },
        ),
        (READ, "/v1/ops/memory.subjects.get", lambda i, n: {"space_id": sid, "subject_id": "u1"}),
    ]
    if ENGINE != "engine/1":  # capture classifies with the engine policy; only engine/1 has one
        out = [t for t in out if t[0] != CAPTURE]
    return out


def _drain() -> dict:
    """The worker's side under a hybrid engine: embed the backlog the load left, in batches,
    here."""
    from django.conf import settings

    from memory.services import hybrid_store

    settings.SPOKE_MEMORY_ENGINE = ENGINE
    backlog = hybrid_store.backlog()
    started = time.perf_counter()
    done = hybrid_store.drain()
    seconds = time.perf_counter() - started
    return {"backlog": backlog, "embedded": done, "rec_per_s": round(done / seconds, 1)}


def _wait_drained(worker, timeout: float = 600.0) -> dict:
    """With BENCH_WORKER: wait until the running worker has emptied the backlog."""
    from memory.services import hybrid_store

    started = time.perf_counter()
    backlog = hybrid_store.backlog()
    while (left := hybrid_store.backlog()) and time.perf_counter() - started < timeout:
        time.sleep(0.5)
    return {
        "backlog_after_load": backlog,
        "left": left,
        "drain_after_load_s": round(time.perf_counter() - started, 1),
        "worker_mb": worker.memory_mb(),
    }


def _start_worker():
    """A Celery worker as `make run` starts it, on the bench's database and broker; returns once
    it says it is ready (its model is loaded when the first drain asks for it)."""
    from bench import _live, server_env

    worker = _live.Worker(
        server_env(SPOKE_MEMORY_ENGINE=ENGINE), ROOT / "var" / "bench-writes-worker.log"
    )
    deadline = time.monotonic() + 120
    while " ready." not in worker.log.read_text():
        if worker.proc.poll() is not None or time.monotonic() > deadline:
            worker.stop()
            raise SystemExit(f"the worker did not start; see {worker.log}")
        time.sleep(0.5)
    return worker


def main() -> dict:
    setup_django()
    from django.db import connection

    from memory.models import Receipt, Space, Subject

    s = seed(f"bench-writes-{int(time.time())}")
    subject_pk = Subject.objects.get(space_id=s.space_id, subject_id="u0").pk
    revision_before = Space.objects.get(pk=s.space_id).revision
    receipts_before = Receipt.objects.filter(space_id=s.space_id).count()
    connection.close()
    headers = {"Authorization": f"Bearer {s.token}", "Content-Type": "application/json"}
    results: dict[str, list] = {}
    todo = targets(s, subject_pk)
    hybrid = ENGINE.startswith("hybrid/")
    worker = _start_worker() if WITH_WORKER and hybrid else None
    try:
        with gunicorn(workers=WORKERS, threads=THREADS, SPOKE_MEMORY_ENGINE=ENGINE) as url:
            for name, path, body in todo:  # warm-up
                closed_loop(name, CLIENTS, 1.0, _worker(url, path, body, headers))
            for _ in range(ROUNDS):  # interleaved, so drift on the shared machine hits all alike
                for name, path, body in todo:
                    results.setdefault(name, []).append(
                        closed_loop(name, CLIENTS, SECONDS, _worker(url, path, body, headers))
                    )
        drained = _wait_drained(worker) if worker else None
    finally:
        if worker:
            worker.stop()
    rows = [merged(runs).row() for runs in results.values()]
    by = {row["name"]: row["rps"] or 1.0 for row in rows}
    for row in rows:
        row["vs_floor"] = f"{row['rps'] / by[FLOOR]:.2f}"
        row["vs_read"] = f"{row['rps'] / by[READ]:.2f}"
    print(
        table(
            rows,
            ["name", "requests", "rps", "p50_ms", "p95_ms", "error_rate", "vs_floor", "vs_read"],
        )
    )
    # the audit: every committed mutation moved the space revision by exactly one
    committed = Receipt.objects.filter(space_id=s.space_id).count() - receipts_before
    moved = Space.objects.get(pk=s.space_id).revision - revision_before
    revisions = list(
        Receipt.objects.filter(space_id=s.space_id, space_revision__isnull=False)
        .order_by("space_revision")
        .values_list("space_revision", flat=True)
    )
    audit = {
        "receipts": committed,
        "space_revision_moved": moved,
        "receipt_revisions_distinct": len(set(revisions)) == len(revisions),
        # the floor view bumps without a receipt (warm-up included): moved = receipts + those
        "floor_bumps": moved - committed,
    }
    print(f"engine {ENGINE}; audit: {audit}")
    if worker:
        print(f"embedding backlog, drained by the running worker: {drained}")
    elif hybrid:
        drained = _drain()
        print(f"embedding backlog drained in batches: {drained}")
    out = {
        "engine": ENGINE,
        "clients": CLIENTS,
        "workers": WORKERS,
        "threads": THREADS,
        "seconds_per_round": SECONDS,
        "rounds": ROUNDS,
        "rows": rows,
        "audit": audit,
        "with_worker": bool(worker),
        "drain": drained,
    }
    path = save(f"writes-{ENGINE.replace('/', '_')}", out)
    print(f"figures: {path}")
    return out


if __name__ == "__main__":
    main()
