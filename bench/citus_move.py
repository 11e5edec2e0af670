"""A space's shards moved to the other worker and back while clients write to it (docs/scaling.md
"Moving a space"), on a distributed database of a Citus coordinator (`bench/citus.sh move` makes
one; BENCH_DATABASE_URL names it):

- BENCH_CLIENTS (8) closed-loop clients under gunicorn (2 × 4, on BENCH_PORT or a free port) run
  `bench.mixed_load`'s mix (capture, review, records create/update/get, recall, subjects, grants;
  every mutation with an idempotency key) in one space;
- after BENCH_SECONDS (15) of load, `citus_move_shard_placement` moves the shard of
  `memory_space` holding that space (and with it the co-located shard of every space-scoped
  table) from its worker to the other, in BENCH_MOVE_MODE (`auto`: logical replication, writes
  go on; or `block_writes`); BENCH_SECONDS later it moves it back; the load stops BENCH_SECONDS
  after that, so both moves run under load;
- the audit is `bench.mixed_load`'s: every acknowledged write present exactly once (its receipt,
  its key, every object it names at least at the acknowledged revision), and no write committed
  without an answer; then the space's placement after each move. Errors are counted by status,
  not hidden; the slowest request overlapping each move shows the switch's pause beside the
  slowest outside the moves.

    BENCH_DATABASE_URL=postgres://…:9700/<distributed db> python -m bench citus_move"""

from __future__ import annotations

import json
import os
import threading
import time

from bench import DATABASE_URL, closed_loop, gunicorn, knob, seed, setup_django, table
from bench.mixed_load import Ledger, audit, make_workers

SECONDS = knob("BENCH_SECONDS", 15.0)
CLIENTS = knob("BENCH_CLIENTS", 8)
PORT = knob("BENCH_PORT", 0)
MODE = os.environ.get("BENCH_MOVE_MODE", "auto")


def _placement(cur, space_id: str) -> tuple[int, str, int]:
    """The shard of `memory_space` holding the space, and the worker holding that shard."""
    cur.execute(
        "SELECT s.shardid, n.nodename, n.nodeport FROM pg_dist_shard s"
        " JOIN pg_dist_placement pl ON pl.shardid = s.shardid"
        " JOIN pg_dist_node n ON n.groupid = pl.groupid"
        " WHERE s.shardid = get_shard_id_for_distribution_column('memory_space', %s)",
        [space_id],
    )
    row = cur.fetchone()
    return int(row[0]), str(row[1]), int(row[2])


def main() -> dict | None:
    if "PYTEST_CURRENT_TEST" in os.environ:
        return None
    setup_django()
    import psycopg
    from django.db import connection

    from memory.models import Receipt
    from memory.ops.base import HANDLERS

    with connection.cursor() as cur:
        cur.execute("SELECT count(*) FROM pg_extension WHERE extname = 'citus'")
        if not cur.fetchone()[0]:
            print("skipped: BENCH_DATABASE_URL is not a Citus database (bench/citus.sh move)")
            return None
    s = seed(f"move-{int(time.time())}", subjects=8)
    baseline = set(Receipt.objects.filter(space_id=s.space_id).values_list("receipt_id", flat=True))
    with connection.cursor() as cur:
        shard, source_host, source_port = _placement(cur, s.space_id)
        cur.execute(
            "SELECT nodename, nodeport FROM pg_dist_node WHERE groupid <> 0 AND isactive"
            " AND shouldhaveshards AND (nodename, nodeport) <> (%s, %s)"
            " ORDER BY nodeport LIMIT 1",
            [source_host, source_port],
        )
        target_host, target_port = cur.fetchone()
        cur.execute(  # the shards of every co-located table over the same hash range
            "SELECT count(*) FROM pg_dist_shard s JOIN pg_dist_partition p USING (logicalrelid)"
            " WHERE p.colocationid = (SELECT colocationid FROM pg_dist_partition"
            " WHERE logicalrelid = 'memory_space'::regclass)"
            " AND s.shardminvalue = (SELECT shardminvalue FROM pg_dist_shard WHERE shardid = %s)",
            [shard],
        )
        colocated = int(cur.fetchone()[0])
    connection.close()
    moves: list[dict] = []
    spans: list[tuple[float, float]] = []
    spans_lock = threading.Lock()

    def move(at: float, src: tuple[str, int], dst: tuple[str, int]) -> None:
        time.sleep(at)
        row: dict = {"from": f"{src[0]}:{src[1]}", "to": f"{dst[0]}:{dst[1]}"}
        started = time.monotonic()
        try:
            with psycopg.connect(DATABASE_URL, autocommit=True) as conn:
                conn.execute(
                    "SELECT citus_move_shard_placement(%s, %s, %s, %s, %s,"
                    " shard_transfer_mode => %s::citus.shard_transfer_mode)",
                    [shard, src[0], src[1], dst[0], dst[1], MODE],
                )
                placed = conn.execute(
                    "SELECT n.nodeport FROM pg_dist_placement pl JOIN pg_dist_node n"
                    " USING (groupid) WHERE pl.shardid = %s",
                    [shard],
                ).fetchall()
            row["placed_after"] = [p[0] for p in placed]
        except Exception as exc:  # noqa: BLE001 - reported in the result
            row["error"] = f"{type(exc).__name__}: {exc}"
        row["window"] = (started, time.monotonic())
        moves.append(row)

    done = threading.Event()

    def mover() -> None:
        src, dst = (source_host, source_port), (target_host, target_port)
        try:
            move(SECONDS, src, dst)
            move(SECONDS, dst, src)
            time.sleep(SECONDS)
        finally:
            done.set()

    ledger = Ledger()

    with gunicorn(workers=2, threads=4, port=PORT or None, app="bench:wsgi_app()") as url:
        inner = make_workers(url, [s], ledger, set(HANDLERS))

        def make(i: int):
            one = inner(i)

            def timed() -> str | None:
                a = time.monotonic()
                try:
                    return one()
                finally:
                    with spans_lock:
                        spans.append((a, time.monotonic()))

            return timed

        t0 = time.monotonic()
        thread = threading.Thread(target=mover)
        thread.start()
        stats = closed_loop("mixed load while the space moves", CLIENTS, 3600.0, make, done)
        thread.join()
    result = audit(ledger)
    result["committed_but_unacknowledged"] -= len(baseline)
    windows = [m["window"] for m in moves]
    for row in moves:
        a, b = row.pop("window")
        row["seconds"] = round(b - a, 2)
        row["started_at_s"] = round(a - t0, 1)
        overlapping = [e - s_ for s_, e in spans if s_ < b and e > a]
        row["requests_overlapping"] = len(overlapping)
        row["slowest_overlapping_ms"] = round(max(overlapping, default=0.0) * 1000, 1)
    outside = [e - s_ for s_, e in spans if not any(s_ < b and e > a for a, b in windows)]
    out = {
        "mode": MODE,
        "clients": CLIENTS,
        "seconds": round(stats.seconds, 1),
        "shard": shard,
        "colocated_shards_moved_each_time": colocated,
        "moves": moves,
        "slowest_outside_moves_ms": round(max(outside, default=0.0) * 1000, 1),
        "audit": result,
        "errors": stats.errors,
    }
    columns = ["name", "requests", "rps", "p50_ms", "p95_ms", "p99_ms", "error_rate"]
    print(table([stats.row()], columns))
    print(json.dumps(out, indent=1))
    ok = (
        not result["problem_count"]
        and not result["committed_but_unacknowledged"]
        and len(moves) == 2
        and all("error" not in m for m in moves)
        and moves[0].get("placed_after") == [target_port]
        and moves[1].get("placed_after") == [source_port]
    )
    if not ok:
        raise SystemExit("the move lost or refused something (above)")
    return out


if __name__ == "__main__":
    main()
