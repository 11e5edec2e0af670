"""Mixed load (docs/performance.md#mixed-load): BENCH_MIXED_CLIENTS (32) closed-loop clients
for BENCH_MIXED_SECONDS (120) against gunicorn on PostgreSQL, over BENCH_MIXED_SPACES (4)
spaces. The mix: capture, candidates.review (promote, some drops) of the client's own captures,
records.create / update (CAS on the acknowledged revision) / get, recall, and some
subjects.get / ensure and grants.grant. Every mutation carries an idempotency key. Then an audit:
every acknowledged write is present exactly once (its receipt, its key, every object it names,
at least at the acknowledged revision; reviewed candidates no longer pending).

    python -m bench mixed_load

Before/after in one run: `python -m bench.mixed_load --tree BEFORE --tree AFTER --rounds 2`
serves each code tree in turn, interleaved (BEFORE AFTER BEFORE AFTER), so the machine's load
falls on both alike; each tree has a database of its own (BENCH_DATABASE_URL with `_0`, `_1`
appended, made afresh and migrated by that tree's code, since the trees' migrations may differ),
and each run's seeding, load and audit run in a child process of this bench against it. The
servers count their limits in the Redis of BENCH_CACHE_URL (default BENCH_BROKER_URL), as
deployed. `--out FILE.md` writes the record (each run's figures and the load around it) and a
`.json` beside it."""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx

from bench import (
    BROKER_URL,
    DATABASE_URL,
    ROOT,
    closed_loop,
    gunicorn,
    save,
    seed,
    setup_django,
    table,
)

CLIENTS = int(os.environ.get("BENCH_MIXED_CLIENTS", "32"))
SECONDS = float(os.environ.get("BENCH_MIXED_SECONDS", "120"))
SPACES = int(os.environ.get("BENCH_MIXED_SPACES", "4"))
WORKERS = int(os.environ.get("BENCH_WORKERS", "2"))
THREADS = int(os.environ.get("BENCH_THREADS", "4"))
# The served app: the REST API alone (`bench:wsgi_app()`) or with MCP mounted beside it
# (`bench:mcp_wsgi_app()`, as the product serves since issue 28).
APP = os.environ.get("BENCH_APP", "bench:mcp_wsgi_app()")
# The servers' cache (the limiter's counters and semaphores), a Redis as deployed.
CACHE_URL = os.environ.get("BENCH_CACHE_URL", BROKER_URL)


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
    """The issue's mix: capture, review, records writes and recall, with reads around them."""
    mix = [
        ("memory.subjects.get", 10),
        ("memory.subjects.ensure", 5),
        ("memory.grants.grant", 3),
        ("memory.capture", 20),
        ("memory.candidates.review", 15),
        ("memory.records.create", 10),
        ("memory.records.update", 10),
        ("memory.records.get", 12),
        ("memory.recall", 15),
    ]
    return [(op, weight) for op, weight in mix if op in served]


WORDS = "tea coffee porto lisbon cycling chess piano garden python rust jazz hiking".split()


def make_workers(url: str, seeds, ledger: Ledger, served: set[str]):
    mix = plan(served)
    ops, weights = [m[0] for m in mix], [m[1] for m in mix]

    def make(i: int):
        s = seeds[i % len(seeds)]
        rng = random.Random(i)
        client = httpx.Client(
            base_url=url, headers={"Authorization": f"Bearer {s.token}"}, timeout=30.0
        )
        n = [0]
        subject = s.subject_ids[i % len(s.subject_ids)]
        records: dict[str, int] = {}  # this client's records and their last acknowledged revision
        pending: list[str] = []  # this client's captured, not yet reviewed candidates

        def post(op: str, body: dict) -> httpx.Response:
            t = time.perf_counter()
            r = client.post(
                f"/v1/ops/{op}",
                content=json.dumps(body),
                headers={"Content-Type": "application/json"},
            )
            ledger.time(op, time.perf_counter() - t)
            return r

        def text() -> str:
            return f"{subject} likes {rng.choice(WORDS)} and {rng.choice(WORDS)} ({n[0]})"

        def request(op: str, key: str) -> dict | None:
            space = {"space_id": s.space_id}
            if op == "memory.subjects.get":
                return {**space, "subject_id": rng.choice(s.subject_ids)}
            if op == "memory.subjects.ensure":
                return {**space, "subject_id": f"c{i}-s{n[0]}", "idempotency_key": key}
            if op == "memory.grants.grant":
                return {
                    **space,
                    "grantee_principal_id": s.principal_id,
                    "capabilities": ["recall"],
                    "subject_ids": [subject],
                    "idempotency_key": key,
                }
            if op == "memory.capture":
                items = [{"content": {"text": text()}} for _ in range(rng.choice((1, 1, 2)))]
                return {
                    **space,
                    "subject_id": subject,
                    "capture_scope": {"placement": {"scope": "shared"}},
                    "items": items,
                    "idempotency_key": key,
                }
            if op == "memory.candidates.review":
                if not pending:
                    return None
                decision = (
                    {"action": "drop", "reason": "noise"}
                    if rng.random() < 0.2
                    else {"action": "promote"}
                )
                return {
                    **space,
                    "candidate_id": pending.pop(0),
                    "decision": decision,
                    "idempotency_key": key,
                }
            if op == "memory.records.create":
                return {
                    **space,
                    "subject_id": subject,
                    "kind": "note",
                    "content": {"text": text()},
                    "placement": {"scope": "shared"},
                    "idempotency_key": key,
                }
            if op == "memory.records.update":
                if not records:
                    return None
                rid = rng.choice(sorted(records))
                return {
                    **space,
                    "record_id": rid,
                    "expected_revision": records[rid],
                    "content": {"text": text()},
                    "idempotency_key": key,
                }
            if op == "memory.records.get":
                return {**space, "record_id": rng.choice(sorted(records))} if records else None
            return {
                **space,
                "subject_id": subject,
                "query": {"text": f"what does {subject} like {rng.choice(WORDS)}"},
            }

        def one() -> str | None:
            op = rng.choices(ops, weights)[0]
            n[0] += 1
            key = f"c{i}-{n[0]}"
            body = request(op, key)
            if body is None:
                return None
            r = post(op, body)
            if r.status_code != 200:
                return f"{op}:{r.status_code}"
            payload = r.json()
            if "receipt" in payload:
                receipt = payload["receipt"]
                ledger.add(
                    op=op,
                    space_id=s.space_id,
                    key=key,
                    receipt_id=receipt["receipt_id"],
                    refs=receipt["refs"],
                    principal_id=s.principal_id,
                )
                for ref in receipt["refs"]:
                    if ref["type"] == "record":
                        records[ref["id"]] = ref["revision"]
                    elif ref["type"] == "candidate" and op == "memory.capture":
                        pending.append(ref["id"])
            return None

        return one

    return make


def _ref_problem(row: dict, ref: dict) -> str | None:
    """Each object an acknowledged receipt names is present exactly once, at least at the
    revision the receipt acknowledged; a reviewed candidate is no longer pending."""
    from memory.models import Candidate, Grant, Record, Subject

    model, field = {
        "subject": (Subject, "subject_id"),
        "grant": (Grant, "grant_id"),
        "record": (Record, "record_id"),
        "candidate": (Candidate, "candidate_id"),
    }.get(ref["type"], (None, None))
    if model is None:
        return None
    rows = list(model.objects.filter(space_id=row["space_id"], **{field: ref["id"]}))
    if len(rows) != 1:
        return f"{ref['type']} {ref['id']} present {len(rows)} times"
    if getattr(rows[0], "revision", ref["revision"]) < ref["revision"]:
        return f"{ref['type']} {ref['id']} behind its acknowledged revision"
    if (
        row["op"] == "memory.candidates.review"
        and ref["type"] == "candidate"
        and rows[0].state == "pending"
    ):
        return f"candidate {ref['id']} acknowledged as reviewed but still pending"
    return None


def audit(ledger: Ledger) -> dict:
    """Every acknowledged write exactly once: one receipt row, one key row pointing at it, and
    the object its first ref names."""
    from memory.models import IdempotencyKey, Receipt

    problems = []
    ids = [row["receipt_id"] for row in ledger.acked]
    receipts = {r.receipt_id: r for r in Receipt.objects.filter(receipt_id__in=ids)}
    keys: dict[tuple, list] = {}
    for k in IdempotencyKey.objects.filter(receipt_id__in=ids).values(
        "space_id", "op", "key", "receipt_id"
    ):
        keys.setdefault((k["space_id"], k["op"], k["key"]), []).append(k["receipt_id"])
    if len(set(ids)) != len(ids):
        problems.append("a receipt id was acknowledged twice")
    for row in ledger.acked:
        receipt = receipts.get(row["receipt_id"])
        if (
            receipt is None
            or receipt.status != "committed"
            or receipt.idempotency_key != row["key"]
        ):
            problems.append(f"receipt {row['receipt_id']} missing or wrong")
            continue
        if keys.get((row["space_id"], row["op"], row["key"])) != [row["receipt_id"]]:
            problems.append(f"key {row['key']} not exactly once")
        for ref in row["refs"]:
            problem = _ref_problem(row, ref)
            if problem:
                problems.append(problem)
    spaces = {row["space_id"] for row in ledger.acked}
    unacked = Receipt.objects.filter(space_id__in=spaces).exclude(receipt_id__in=ids).count()
    return {
        "acknowledged_writes": len(ids),
        "problems": problems[:20],
        "problem_count": len(problems),
        "committed_but_unacknowledged": unacked,
    }


def run(root: Path = ROOT, migrate: bool = True) -> dict:
    """One run: seed, serve `root`'s code under the load, audit."""
    setup_django(migrate=migrate)
    from django.db import connection

    from memory.ops.base import HANDLERS

    stamp = int(time.time())
    seeds = [seed(f"bench-mixed-{stamp}-{k}", subjects=40) for k in range(SPACES)]
    # the seed's own writes (root grant bumps, ensures) are not the load's: count them out
    from memory.models import Receipt

    baseline = Receipt.objects.filter(space_id__in=[s.space_id for s in seeds]).values_list(
        "receipt_id", flat=True
    )
    baseline = set(baseline)
    connection.close()
    ledger = Ledger()
    served = set(HANDLERS)
    with gunicorn(
        workers=WORKERS, threads=THREADS, app=APP, root=root, SPOKE_MEMORY_CACHE_URL=CACHE_URL
    ) as url:
        stats = closed_loop("mixed", CLIENTS, SECONDS, make_workers(url, seeds, ledger, served))
    result = audit(ledger)
    result["committed_but_unacknowledged"] -= len(baseline)
    per_op = []
    for op, lat in sorted(ledger.by_op.items()):
        lat.sort()
        per_op.append(
            {
                "op": op,
                "count": len(lat),
                "p50_ms": round(lat[len(lat) // 2] * 1000, 1),
                "p95_ms": round(lat[int(len(lat) * 0.95)] * 1000, 1),
                "p99_ms": round(lat[min(len(lat) - 1, int(len(lat) * 0.99))] * 1000, 1),
            }
        )
    row = stats.row()
    print(table([row], ["name", "requests", "rps", "p50_ms", "p95_ms", "p99_ms", "error_rate"]))
    print(table(per_op, ["op", "count", "p50_ms", "p95_ms", "p99_ms"]))
    print(f"audit: {result}")
    out = {
        "tree": str(root),
        "commit": commit(root),
        "clients": CLIENTS,
        "seconds": SECONDS,
        "spaces": SPACES,
        "workers": WORKERS,
        "threads": THREADS,
        "app": APP,
        "total": row,
        "per_op": per_op,
        "audit": result,
    }
    save("mixed_load", out)
    return out


def commit(root: Path) -> str:
    found = subprocess.run(  # noqa: S603
        ["git", "rev-parse", "--short", "HEAD"],  # noqa: S607
        cwd=root,
        capture_output=True,
        text=True,
        check=False,
    )
    return found.stdout.strip()


def loadavg() -> list[float]:
    return [float(x) for x in Path("/proc/loadavg").read_text().split()[:3]]


def prepare(tree: Path, url: str) -> None:
    """A fresh database for the tree, migrated by the tree's own code."""
    import psycopg

    name = url.rsplit("/", 1)[1]
    with psycopg.connect(url.rsplit("/", 1)[0] + "/postgres", autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')
    env = {**os.environ, "DATABASE_URL": url, "PYTHONPATH": str(tree)}
    env.setdefault("SECRET_KEY", "bench-only-secret-key-not-for-production-use")
    subprocess.run(  # noqa: S603 - our interpreter, fixed arguments
        [sys.executable, "manage.py", "migrate", "-v", "0"], cwd=tree, env=env, check=True
    )


def compare(trees: list[Path], rounds: int, out: Path | None) -> list[dict]:
    """The trees in turn, `rounds` times (A B A B ...), each on its own database."""
    urls = {tree: f"{DATABASE_URL}_{i}" for i, tree in enumerate(trees)}
    for tree, url in urls.items():
        prepare(tree, url)
    runs = []
    for n in range(rounds):
        for tree in trees:
            with tempfile.NamedTemporaryFile(suffix=".json") as sink:
                before = loadavg()
                subprocess.run(  # noqa: S603 - our interpreter, fixed arguments
                    [sys.executable, "-m", "bench.mixed_load", "--serve", str(tree)]
                    + ["--json", sink.name],
                    cwd=ROOT,
                    env={**os.environ, "BENCH_DATABASE_URL": urls[tree]},
                    check=False,  # a failed audit is a figure of the record, not a crash
                )
                got = json.loads(Path(sink.name).read_text())  # the run's own, or it failed
            runs.append({"round": n + 1, "load_before": before, "load_after": loadavg(), **got})
    rows = [
        {
            "round": r["round"],
            "tree": f"{Path(r['tree']).name} ({r['commit']})",
            "rps": r["total"]["rps"],
            "p50_ms": r["total"]["p50_ms"],
            "p95_ms": r["total"]["p95_ms"],
            "errors": r["total"]["errors"],
            "audit_problems": r["audit"]["problem_count"],
            "load": f"{r['load_before'][0]:.1f} → {r['load_after'][0]:.1f}",
        }
        for r in runs
    ]
    columns = ["round", "tree", "rps", "p50_ms", "p95_ms", "errors", "audit_problems", "load"]
    text = table(rows, columns)
    means = {
        tree: round(sum(r["total"]["rps"] for r in runs if r["tree"] == str(tree)) / rounds, 1)
        for tree in trees
    }
    summary = ", ".join(f"{tree.name}: {rps} req/s" for tree, rps in means.items())
    print(text)
    print(f"mean of {rounds} rounds: {summary}")
    if out is not None:
        out.write_text(
            f"# bench.mixed_load, {' vs '.join(t.name for t in trees)}, interleaved\n\n"
            f"{CLIENTS} clients, {SECONDS:.0f} s a run, {SPACES} spaces, gunicorn "
            f"{WORKERS} x {THREADS}, PostgreSQL, the limiter's Redis {CACHE_URL}; "
            f"load = /proc/loadavg (1 min) before → after each run.\n\n{text}\n\n"
            f"Mean of {rounds} rounds: {summary}.\n"
        )
        out.with_suffix(".json").write_text(json.dumps(runs, indent=1) + "\n")
    return runs


def main(argv: list[str] | None = None) -> dict | list[dict]:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--tree", action="append", type=Path, help="code trees to serve in turn")
    p.add_argument("--rounds", type=int, default=1, help="how many times each tree, interleaved")
    p.add_argument("--out", type=Path, help="a markdown record of a --tree comparison")
    p.add_argument("--serve", type=Path, help=argparse.SUPPRESS)  # one run, for `compare`
    p.add_argument("--json", type=Path, help=argparse.SUPPRESS)
    args = p.parse_args(argv or [])
    if args.tree:
        return compare([t.resolve() for t in args.tree], args.rounds, args.out)
    out = run(args.serve.resolve(), migrate=False) if args.serve else run()
    if args.json:
        args.json.write_text(json.dumps(out))
    if out["audit"]["problem_count"]:
        raise SystemExit("audit failed")
    return out


if __name__ == "__main__":
    main(sys.argv[1:])
