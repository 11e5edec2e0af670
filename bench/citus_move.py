"""A space's shards moved to the other worker while clients write to it (docs/scaling.md "Moving
a space"), on a distributed database of a Citus coordinator (`bench/citus.sh move` makes one;
BENCH_DATABASE_URL names it):

- BENCH_CLIENTS (4) closed-loop clients under gunicorn (2 × 4) write `memory.records.create`
  into one space, each with an idempotency key, for BENCH_SECONDS (30);
- a quarter of the way in, `citus_move_shard_placement` moves the shard of `memory_space` holding
  that space (and with it the co-located shards of every space-scoped table) from its worker to
  the other, in BENCH_MOVE_MODE (`auto`: logical replication, writes go on; `block_writes`);
- the audit: every write answered 200 is in the database after the move (its record and its
  receipt), the space revision moved once per answered write, and the shard is on the other
  worker. Errors are counted by status, not hidden.

    BENCH_DATABASE_URL=postgres://…:9700/<distributed db> python -m bench citus_move"""

from __future__ import annotations

import json
import os
import threading
import time

import httpx

from bench import DATABASE_URL, closed_loop, gunicorn, knob, seed, setup_django, table

SECONDS = knob("BENCH_SECONDS", 30.0)
CLIENTS = knob("BENCH_CLIENTS", 4)
MODE = os.environ.get("BENCH_MOVE_MODE", "auto")


def _placement(cur, space_id: str) -> tuple[int, str, int]:
    cur.execute(
        "SELECT s.shardid, p.nodename, p.nodeport FROM pg_dist_shard s"
        " JOIN pg_dist_placement pl ON pl.shardid = s.shardid"
        " JOIN pg_dist_node p ON p.groupid = pl.groupid"
        " WHERE s.shardid = get_shard_id_for_distribution_column('memory_space', %s)",
        [space_id],
    )
    return cur.fetchone()


def main() -> None:
    if "PYTEST_CURRENT_TEST" in os.environ:
        return
    setup_django()
    import psycopg
    from django.db import connection

    from memory.models import Receipt, Record, Space

    with connection.cursor() as cur:
        cur.execute("SELECT count(*) FROM pg_extension WHERE extname = 'citus'")
        if not cur.fetchone()[0]:
            print("skipped: BENCH_DATABASE_URL is not a Citus database (bench/citus.sh move)")
            return
    s = seed(f"move-{int(time.time())}", subjects=2)
    with connection.cursor() as cur:
        before = _placement(cur, s.space_id)
        cur.execute(
            "SELECT nodename, nodeport FROM pg_dist_node WHERE groupid <> 0 AND isactive"
            " AND (nodename, nodeport) <> (%s, %s) ORDER BY nodeport LIMIT 1",
            [before[1], before[2]],
        )
        target = cur.fetchone()
    revision0 = Space.objects.get(pk=s.space_id).revision
    acked: dict[int, list[str]] = {}
    moved: dict = {}

    def make(i: int):
        client = httpx.Client(
            base_url=url,
            headers={"Authorization": f"Bearer {s.token}", "Content-Type": "application/json"},
            timeout=120.0,
        )
        mine = acked.setdefault(i, [])
        n = 0

        def one() -> str | None:
            nonlocal n
            n += 1
            body = {
                "space_id": s.space_id,
                "subject_id": f"u{i % 2}",
                "kind": "note",
                "content": {"text": f"client {i} note {n} written while the space moves"},
                "placement": {"scope": "shared"},
                "idempotency_key": f"move-{i}-{n}",
            }
            r = client.post("/v1/ops/memory.records.create", content=json.dumps(body))
            if r.status_code != 200:
                return f"http_{r.status_code}"
            mine.append(r.json()["receipt"]["refs"][0]["id"])
            return None

        return one

    def mover() -> None:
        time.sleep(SECONDS / 4)
        started = time.perf_counter()
        try:
            with psycopg.connect(DATABASE_URL, autocommit=True) as conn:
                conn.execute(
                    "SELECT citus_move_shard_placement(%s, %s, %s, %s, %s,"
                    " shard_transfer_mode => %s::citus.shard_transfer_mode)",
                    [before[0], before[1], before[2], target[0], target[1], MODE],
                )
            moved["seconds"] = round(time.perf_counter() - started, 2)
        except Exception as exc:  # noqa: BLE001 - reported in the result
            moved["error"] = f"{type(exc).__name__}: {exc}"

    with gunicorn(workers=2, threads=4) as url:
        thread = threading.Thread(target=mover)
        thread.start()
        stats = closed_loop("records.create while the space moves", CLIENTS, SECONDS, make)
        thread.join()
    ids = [r for rs in acked.values() for r in rs]
    with connection.cursor() as cur:
        after = _placement(cur, s.space_id)
    stored = set(
        Record.objects.filter(space_id=s.space_id, record_id__in=ids).values_list(
            "record_id", flat=True
        )
    )
    receipts = Receipt.objects.filter(space_id=s.space_id, op="memory.records.create").count()
    revision = Space.objects.get(pk=s.space_id).revision
    print(table([stats.row()], list(stats.row().keys())))
    print(
        json.dumps(
            {
                "mode": MODE,
                "move": moved,
                "shard": before[0],
                "from": f"{before[1]}:{before[2]}",
                "to_after": f"{after[1]}:{after[2]}",
                "answered_200": len(ids),
                "answered_200_and_stored": len(stored),
                "lost": len(ids) - len(stored),
                "receipts": receipts,
                "space_revision_moved": revision - revision0,
                "errors": stats.errors,
            }
        )
    )
