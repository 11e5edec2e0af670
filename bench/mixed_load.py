"""Mixed load (docs/performance.md "Mixed load"): BENCH_MIXED_CLIENTS (32) closed-loop clients
for BENCH_MIXED_SECONDS (120) against gunicorn on PostgreSQL, over BENCH_MIXED_SPACES (4)
spaces. The mix uses what this build serves: subjects.ensure / get / fence, grants.grant, and
records.create / get / recall when present. Every mutation carries an idempotency key. Then an
audit: every acknowledged write is present exactly once (its receipt, its key, its object).

    python -m bench mixed_load"""
from __future__ import annotations

import json
import os
import random
import threading
import time

import httpx

from bench import closed_loop, gunicorn, save, seed, setup_django, table

CLIENTS = int(os.environ.get("BENCH_MIXED_CLIENTS", "32"))
SECONDS = float(os.environ.get("BENCH_MIXED_SECONDS", "120"))
SPACES = int(os.environ.get("BENCH_MIXED_SPACES", "4"))
WORKERS = int(os.environ.get("BENCH_WORKERS", "2"))
THREADS = int(os.environ.get("BENCH_THREADS", "4"))


class Ledger:
    """Acknowledged writes, as the clients saw them."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.acked: list[dict] = []
        self.by_op: dict[str, list[float]] = {}

    def add(self, **row) -> None:
        with self.lock:
            self.acked.append(row)

    def time(self, op: str, seconds: float) -> None:
        with self.lock:
            self.by_op.setdefault(op, []).append(seconds)


def plan(served: set[str]) -> list[tuple[str, int]]:
    mix = [("memory.subjects.get", 30), ("memory.subjects.ensure", 25), ("memory.grants.grant", 10),
           ("memory.subjects.fence", 10)]
    if "memory.records.create" in served:
        mix += [("memory.records.create", 15), ("memory.records.get", 10)]
    if "memory.recall" in served:
        mix += [("memory.recall", 10)]
    return mix


def make_workers(url: str, seeds, ledger: Ledger, served: set[str]):
    mix = plan(served)
    ops, weights = [m[0] for m in mix], [m[1] for m in mix]

    def make(i: int):
        s = seeds[i % len(seeds)]
        rng = random.Random(i)
        client = httpx.Client(base_url=url, headers={"Authorization": f"Bearer {s.token}"}, timeout=30.0)
        n = [0]
        my_records: list[str] = []
        fenced = [False]

        def post(op: str, body: dict) -> httpx.Response:
            t = time.perf_counter()
            r = client.post(f"/v1/ops/{op}", content=json.dumps(body), headers={"Content-Type": "application/json"})
            ledger.time(op, time.perf_counter() - t)
            return r

        def one() -> str | None:
            op = rng.choices(ops, weights)[0]
            n[0] += 1
            key = f"c{i}-{n[0]}"
            own = f"c{i}"
            if op == "memory.subjects.get":
                body = {"space_id": s.space_id, "subject_id": rng.choice(s.subject_ids)}
            elif op == "memory.subjects.ensure":
                body = {"space_id": s.space_id, "subject_id": f"c{i}-s{n[0]}", "idempotency_key": key}
            elif op == "memory.grants.grant":
                body = {"space_id": s.space_id, "grantee_principal_id": s.principal_id, "capabilities": ["recall"],
                        "subject_ids": [own], "idempotency_key": key}
            elif op == "memory.subjects.fence":
                body = {"space_id": s.space_id, "subject_id": s.subject_ids[i % len(s.subject_ids)],
                        "action": "unfence" if fenced[0] else "fence", "context_id": own, "idempotency_key": key}
            elif op == "memory.records.create":
                body = {"space_id": s.space_id, "subject_id": s.subject_ids[0], "kind": "note",
                        "content": {"text": f"note {key}"}, "placement": {"scope": "shared"}, "idempotency_key": key}
            elif op == "memory.records.get":
                if not my_records:
                    return None
                body = {"space_id": s.space_id, "record_id": rng.choice(my_records)}
            else:
                body = {"space_id": s.space_id, "subject_id": s.subject_ids[0], "query": {"text": "note"}}
            r = post(op, body)
            if r.status_code != 200:
                return f"{op}:{r.status_code}"
            payload = r.json()
            if "receipt" in payload:
                receipt = payload["receipt"]
                ledger.add(op=op, space_id=s.space_id, key=key, receipt_id=receipt["receipt_id"], refs=receipt["refs"],
                           principal_id=s.principal_id)
                if op == "memory.subjects.fence":
                    fenced[0] = not fenced[0]
                if op == "memory.records.create":
                    my_records.extend(ref["id"] for ref in receipt["refs"] if ref["type"] == "record")
            return None

        return one

    return make


def audit(ledger: Ledger) -> dict:
    """Every acknowledged write exactly once: one receipt row, one key row pointing at it, and
    the object its first ref names."""
    from memory.models import Grant, IdempotencyKey, Receipt, Record, Subject

    problems = []
    ids = [row["receipt_id"] for row in ledger.acked]
    receipts = {r.receipt_id: r for r in Receipt.objects.filter(receipt_id__in=ids)}
    keys: dict[tuple, list] = {}
    for k in IdempotencyKey.objects.filter(receipt_id__in=ids).values("space_key", "op", "key", "receipt_id"):
        keys.setdefault((k["space_key"], k["op"], k["key"]), []).append(k["receipt_id"])
    if len(set(ids)) != len(ids):
        problems.append("a receipt id was acknowledged twice")
    for row in ledger.acked:
        receipt = receipts.get(row["receipt_id"])
        if receipt is None or receipt.status != "committed" or receipt.idempotency_key != row["key"]:
            problems.append(f"receipt {row['receipt_id']} missing or wrong")
            continue
        if keys.get((row["space_id"], row["op"], row["key"])) != [row["receipt_id"]]:
            problems.append(f"key {row['key']} not exactly once")
        ref = row["refs"][0]
        if ref["type"] == "subject":
            found = Subject.objects.filter(space_id=row["space_id"], subject_id=ref["id"]).count()
        elif ref["type"] == "grant":
            found = Grant.objects.filter(grant_id=ref["id"]).count()
        elif ref["type"] == "record":
            found = Record.objects.filter(space_id=row["space_id"], record_id=ref["id"]).count()
        else:
            found = 1
        if found != 1:
            problems.append(f"{ref['type']} {ref['id']} present {found} times")
    spaces = {row["space_id"] for row in ledger.acked}
    unacked = Receipt.objects.filter(space_id__in=spaces).exclude(receipt_id__in=ids).count()
    return {"acknowledged_writes": len(ids), "problems": problems[:20], "problem_count": len(problems),
            "committed_but_unacknowledged": unacked}


def main() -> dict:
    setup_django()
    from django.db import connection

    from memory.ops.base import HANDLERS

    stamp = int(time.time())
    seeds = [seed(f"bench-mixed-{stamp}-{k}", subjects=40) for k in range(SPACES)]
    # the seed's own writes (root grant bumps, ensures) are not the load's: count them out
    from memory.models import Receipt

    baseline = Receipt.objects.filter(space_id__in=[s.space_id for s in seeds]).values_list("receipt_id", flat=True)
    baseline = set(baseline)
    connection.close()
    ledger = Ledger()
    served = set(HANDLERS)
    with gunicorn(workers=WORKERS, threads=THREADS) as url:
        stats = closed_loop("mixed", CLIENTS, SECONDS, make_workers(url, seeds, ledger, served))
    result = audit(ledger)
    result["committed_but_unacknowledged"] -= len(baseline)
    per_op = []
    for op, lat in sorted(ledger.by_op.items()):
        lat.sort()
        per_op.append({"op": op, "count": len(lat), "p50_ms": round(lat[len(lat) // 2] * 1000, 1),
                       "p95_ms": round(lat[int(len(lat) * 0.95)] * 1000, 1),
                       "p99_ms": round(lat[min(len(lat) - 1, int(len(lat) * 0.99))] * 1000, 1)})
    row = stats.row()
    print(table([row], ["name", "requests", "rps", "p50_ms", "p95_ms", "p99_ms", "error_rate"]))
    print(table(per_op, ["op", "count", "p50_ms", "p95_ms", "p99_ms"]))
    print(f"audit: {result}")
    out = {"clients": CLIENTS, "seconds": SECONDS, "spaces": SPACES, "workers": WORKERS, "threads": THREADS,
           "total": row, "per_op": per_op, "audit": result}
    save("mixed_load", out)
    if result["problem_count"]:
        raise SystemExit("audit failed")
    return out


if __name__ == "__main__":
    main()
