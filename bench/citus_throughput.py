"""Writes and recall throughput, one node vs the Citus cluster, in ONE run (docs/scaling.md "What
was measured"; `bench/citus.sh throughput` makes both databases and runs it):

- BENCH_SINGLE_URL: a plain database (no extension) on the coordinator's own server;
  BENCH_CLUSTER_URL: a distributed one on the same coordinator (`manage.py spoke citus-setup`,
  two workers). Both migrated beforehand. Each gets a seeded space (a root-granted admin, 10
  subjects) and BENCH_PRELOAD (400) records written through `memory.records.create` first, so
  recall has a corpus;
- one gunicorn per database (BENCH_WORKERS × BENCH_THREADS, 2 × 4; on BENCH_PORT and the next,
  or free ports), both up for the whole run; BENCH_CLIENTS (8) closed-loop clients on loopback;
- BENCH_ROUNDS (3) rounds of BENCH_SECONDS (8) per op and database, interleaved (one node, the
  cluster, the next op, …) so the shared machine's drift hits both alike: `memory.records.create`
  (a subject per client), `memory.recall` (a subject's records, engine BENCH_ENGINE = engine/2:
  no embedder, no drain), `memory.subjects.get`;
- the load average (1 min) is read before every round and printed beside the table.

Every server runs on this machine's cores, the coordinator's and both workers' PostgreSQL
included: the ratio is the distributed path's cost when two workers share two cores, not what
more machines give.

    BENCH_SINGLE_URL=postgres://…:9800/a BENCH_CLUSTER_URL=postgres://…:9800/b \\
        python -m bench citus_throughput"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import httpx

from bench import ROOT, closed_loop, gunicorn, knob, merged, save, table

SECONDS = knob("BENCH_SECONDS", 8.0)
CLIENTS = knob("BENCH_CLIENTS", 8)
WORKERS = knob("BENCH_WORKERS", 2)
THREADS = knob("BENCH_THREADS", 4)
ROUNDS = knob("BENCH_ROUNDS", 3)
PRELOAD = knob("BENCH_PRELOAD", 400)
PORT = knob("BENCH_PORT", 0)
ENGINE = os.environ.get("BENCH_ENGINE", "engine/2")
WORDS = "tea coffee porto lisbon cycling chess piano garden python rust jazz hiking".split()


def _seed_here() -> None:
    """In a child process pointed at one database (BENCH_DATABASE_URL): a fresh space; prints
    its space id and token as JSON."""
    from bench import seed, setup_django

    setup_django(migrate=False)
    s = seed(f"bench-tp-{int(time.time())}")
    print(json.dumps({"space_id": s.space_id, "token": s.token}))


def _seed(url: str) -> dict:
    out = subprocess.run(
        [sys.executable, "-m", "bench.citus_throughput", "--seed"],
        cwd=ROOT,
        env={**os.environ, "BENCH_DATABASE_URL": url, "SPOKE_MEMORY_ENGINE": ENGINE},
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def _text(i: int, n: int) -> str:
    w = WORDS[(i + n) % len(WORDS)], WORDS[(3 * i + n) % len(WORDS)]
    return f"client {i} note {n}: likes {w[0]} and {w[1]} on weekends"


def _ops(space_id: str) -> list[tuple[str, str, object]]:
    return [
        (
            "memory.records.create",
            "/v1/ops/memory.records.create",
            lambda i, n: {
                "space_id": space_id,
                "subject_id": f"u{i % 10}",
                "kind": "note",
                "content": {"text": _text(i, n)},
                "placement": {"scope": "shared"},
            },
        ),
        (
            "memory.recall",
            "/v1/ops/memory.recall",
            lambda i, n: {
                "space_id": space_id,
                "subject_id": f"u{(i + n) % 10}",
                "query": {"text": f"what does this person like {WORDS[n % len(WORDS)]}"},
            },
        ),
        (
            "memory.subjects.get",
            "/v1/ops/memory.subjects.get",
            lambda i, n: {"space_id": space_id, "subject_id": f"u{i % 10}"},
        ),
    ]


def _client(url: str, token: str, path: str, body_for):
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}

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


def _preload(url: str, token: str, space_id: str) -> None:
    create = _ops(space_id)[0]
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
    with httpx.Client(base_url=url, headers=headers, timeout=30.0) as client:
        for n in range(PRELOAD):
            r = client.post(create[1], content=json.dumps(create[2](n % CLIENTS, n)))
            if r.status_code != 200:
                raise SystemExit(f"preload failed: {r.status_code} {r.text[:200]}")


def load1() -> float:
    return float(open("/proc/loadavg").read().split()[0])  # noqa: PTH123, SIM115 - one read


def main() -> dict | None:
    if "PYTEST_CURRENT_TEST" in os.environ:
        return None
    urls = {
        "one node": os.environ.get("BENCH_SINGLE_URL"),
        "cluster": os.environ.get("BENCH_CLUSTER_URL"),
    }
    if not all(urls.values()):
        print("bench.citus_throughput: set BENCH_SINGLE_URL and BENCH_CLUSTER_URL (bench/citus.sh)")
        return None
    seeds = {k: _seed(str(u)) for k, u in urls.items()}
    results: dict[tuple[str, str], list] = {}
    loads: list[float] = []
    env = {"SPOKE_MEMORY_ENGINE": ENGINE}
    ports = [PORT, PORT + 1] if PORT else [None, None]
    with (
        gunicorn(WORKERS, THREADS, ports[0], DATABASE_URL=str(urls["one node"]), **env) as one,
        gunicorn(WORKERS, THREADS, ports[1], DATABASE_URL=str(urls["cluster"]), **env) as many,
    ):
        served = {"one node": one, "cluster": many}
        for where, url in served.items():
            _preload(url, seeds[where]["token"], seeds[where]["space_id"])
            for name, path, body in _ops(seeds[where]["space_id"]):  # warm-up
                closed_loop(name, CLIENTS, 1.0, _client(url, seeds[where]["token"], path, body))
        for _ in range(ROUNDS):
            for i in range(3):
                for where, url in served.items():
                    name, path, body = _ops(seeds[where]["space_id"])[i]
                    loads.append(load1())
                    results.setdefault((name, where), []).append(
                        closed_loop(
                            name, CLIENTS, SECONDS, _client(url, seeds[where]["token"], path, body)
                        )
                    )
    rows = []
    merged_rows = {key: merged(runs).row() for key, runs in results.items()}
    for (name, where), row in merged_rows.items():
        base = merged_rows[(name, "one node")]["rps"] or 1.0
        rows.append({**row, "name": f"{name} ({where})", "vs_one_node": f"{row['rps'] / base:.2f}"})
    print(table(rows, ["name", "requests", "rps", "p50_ms", "p95_ms", "error_rate", "vs_one_node"]))
    print(
        f"engine {ENGINE}; {CLIENTS} clients, gunicorn {WORKERS}x{THREADS} per database,"
        f" {ROUNDS} rounds x {SECONDS:.0f} s; load (1 min) before the rounds:"
        f" {min(loads):.2f}-{max(loads):.2f}"
    )
    out = {
        "engine": ENGINE,
        "clients": CLIENTS,
        "workers": WORKERS,
        "threads": THREADS,
        "seconds_per_round": SECONDS,
        "rounds": ROUNDS,
        "preload": PRELOAD,
        "rows": rows,
        "load1_before_rounds": loads,
    }
    path = save("citus-throughput", out)
    print(f"figures: {path}")
    return out


if __name__ == "__main__":
    if sys.argv[1:] == ["--seed"]:
        _seed_here()
    else:
        main()
