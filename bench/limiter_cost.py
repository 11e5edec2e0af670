"""What the limiter costs a request (issue 39; memory/limits.py): one sequential client's
`memory.records.get` latency on servers that differ only in the limiter's store, in one run:

- `redis, home space`: the limiter in Redis (SPOKE_MEMORY_CACHE_URL), as deployed, for a
  principal made by its space's operators (its counters are kept twice, for it and its space:
  the most round trips a request makes);
- `redis, no home space`: the same server, a principal with no home space (half the counters);
- `in-process`: no Redis cache: the embedded default's store, counting in the server's memory
  (no round trip): the floor;
- with BENCH_LIMCOST_BEFORE (another checkout), that tree's server too, Redis, home space.

Each server is gunicorn as deployed (BENCH_WORKERS x BENCH_THREADS), all three up at once on the
same database; the client measures them in turn, BENCH_LIMCOST_ROUNDS (8) slices of
BENCH_LIMCOST_SLICE_S (4 s) each, interleaved, so the machine's load falls on all alike. All run
with SPOKE_MEMORY_RATE lifted (bench.server_env): a lifted rate is counted all the same, it only
never refuses. Also printed: one Redis PING's round trip from this process, and the limiter's
own round trips, counted on the server (`MONITOR` over one request of each principal).

    python -m bench limiter_cost   (BENCH_LIMCOST_OUT=FILE.md writes the record)"""

from __future__ import annotations

import json
import os
import statistics
import time
from contextlib import ExitStack
from pathlib import Path

import httpx

from bench import BROKER_URL, ROOT, gunicorn, knob, save, setup_django, table

ROUNDS = knob("BENCH_LIMCOST_ROUNDS", 8)
SLICE_S = knob("BENCH_LIMCOST_SLICE_S", 4.0)
WORKERS = knob("BENCH_WORKERS", 2)
THREADS = knob("BENCH_THREADS", 4)
CACHE_URL = os.environ.get("BENCH_CACHE_URL", BROKER_URL)
OUT = os.environ.get("BENCH_LIMCOST_OUT", "")
# Another checkout (e.g. the code before a change to the limiter) served beside, Redis store,
# the home-space principal: a before/after in the same run.
BEFORE = os.environ.get("BENCH_LIMCOST_BEFORE", "")


def loadavg() -> float:
    return float(Path("/proc/loadavg").read_text().split()[0])


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(p * len(ordered)))] * 1000, 3)


def redis_round_trips(url: str, send) -> int:  # noqa: ANN001
    """The limiter's round trips to the Redis at `url` while `send()` runs, from what Redis
    receives (MONITOR, on a connection of its own): each script call one, and the pipeline of
    the release (its commands arrive back to back) one."""
    import redis

    client = redis.Redis.from_url(url)
    scripts, pipelined = 0, 0
    with client.monitor() as monitor:
        send()
        connection = monitor.connection
        while connection is not None and connection.can_read(timeout=0.5):
            seen = monitor.next_command()
            verb = seen["command"].split(" ", 1)[0].upper()
            if seen.get("client_type") == "lua" or ":limits:" not in seen["command"]:
                continue
            scripts += verb in ("EVALSHA", "EVAL")
            pipelined += verb == "ZREM"
    return scripts + (1 if pipelined else 0)


def main() -> dict:
    setup_django()
    import redis

    from memory.models import Principal, Space
    from memory.ops.base import call
    from tests import factories

    tag = f"limcost-{int(time.time())}"
    space = factories.make_space(tag)
    admin, _ = factories.make_admin(space, f"bench-admin-{tag}", token_label="bench")
    factories.ensure_subjects(admin, tag, ["u0"])
    made = call(
        admin,
        "memory.records.create",
        {
            "space_id": tag,
            "subject_id": "u0",
            "kind": "fact",
            "content": {"text": "Ada prefers tea."},
            "placement": {"scope": "shared"},
        },
    )
    record_id = made["receipt"]["refs"][0]["id"]
    tokens = {}
    for label, home in (("home", Space.objects.get(pk=tag)), ("none", None)):
        who, token = factories.make_principal(
            f"bench-{label}-{tag}", token_label="bench", home_space=home
        )
        call(
            Principal.objects.get(pk=admin.principal_id),
            "memory.grants.grant",
            {
                "space_id": tag,
                "grantee_principal_id": who.principal_id,
                "capabilities": ["records_read"],
                "shared_access": True,
            },
        )
        tokens[label] = token
    body = json.dumps({"space_id": tag, "record_id": record_id}).encode()
    headers = {"Content-Type": "application/json"}

    ping = redis.Redis.from_url(CACHE_URL)
    pings = []
    for _ in range(2000):
        t = time.perf_counter()
        ping.ping()
        pings.append(time.perf_counter() - t)

    redis_store = {"SPOKE_MEMORY_CACHE_URL": CACHE_URL}
    # name -> (the tree served, its environment, whose token; a name served by the same server)
    variants: dict[str, tuple[Path, dict[str, str], str]] = {
        "redis, home space": (ROOT, redis_store, "home"),
        "redis, no home space": (ROOT, redis_store, "none"),
        "in-process": (ROOT, {"SPOKE_MEMORY_CACHE_URL": "", "REDIS_URL": ""}, "home"),
    }
    if BEFORE:
        variants[f"redis, home space, {Path(BEFORE).name}"] = (Path(BEFORE), redis_store, "home")
    load = [loadavg()]
    samples: dict[str, list[float]] = {name: [] for name in variants}
    trips: dict[str, int] = {}
    with ExitStack() as stack:
        urls: dict[str, str] = {}
        servers: dict[tuple, str] = {}
        for name, (root, env, _) in variants.items():
            same = (root, tuple(sorted(env.items())))
            if same not in servers:
                servers[same] = stack.enter_context(
                    gunicorn(workers=WORKERS, threads=THREADS, root=root, **env)
                )
            urls[name] = servers[same]
        clients = {
            name: stack.enter_context(
                httpx.Client(
                    base_url=urls[name],
                    headers={"Authorization": f"Bearer {tokens[who]}"},
                    timeout=30,
                )
            )
            for name, (_, _, who) in variants.items()
        }

        def get(name: str) -> None:
            r = clients[name].post("/v1/ops/memory.records.get", content=body, headers=headers)
            if r.status_code != 200:
                raise RuntimeError(f"{name}: {r.status_code} {r.text[:200]}")

        for name in variants:  # warm every worker's connections and caches
            for _ in range(200):
                get(name)
        for name in [n for n in variants if n.startswith("redis")]:
            trips[name] = redis_round_trips(CACHE_URL, lambda n=name: get(n))
        for _ in range(ROUNDS):
            for name in variants:
                stop_at = time.monotonic() + SLICE_S
                while time.monotonic() < stop_at:
                    t = time.perf_counter()
                    get(name)
                    samples[name].append(time.perf_counter() - t)
            load.append(loadavg())
    floor = statistics.median(samples["in-process"])
    rows = []
    for name, got in samples.items():
        rows.append(
            {
                "store": name,
                "requests": len(got),
                "p50_ms": pct(got, 0.5),
                "p95_ms": pct(got, 0.95),
                "redis_round_trips": trips.get(name, 0),
                "p50_over_in_process_ms": round((statistics.median(got) - floor) * 1000, 3),
            }
        )
    columns = [
        "store",
        "requests",
        "p50_ms",
        "p95_ms",
        "redis_round_trips",
        "p50_over_in_process_ms",
    ]
    text = table(rows, columns)
    ping_line = f"Redis PING from the client's process: p50 {pct(pings, 0.5)} ms"
    load_line = f"load (1 min) at the start and after each round: {load}"
    print(text)
    print(ping_line)
    print(load_line)
    out = {"rows": rows, "ping_p50_ms": pct(pings, 0.5), "load": load}
    save("limiter_cost", out)
    if OUT:
        Path(OUT).write_text(
            "# bench.limiter_cost: the limiter's store, one sequential client's records.get\n\n"
            f"gunicorn {WORKERS} x {THREADS} per server, PostgreSQL, Redis {CACHE_URL}; "
            f"{ROUNDS} rounds of {SLICE_S:.0f} s per store, interleaved.\n\n"
            f"{text}\n\n{ping_line}.\n{load_line}.\n"
        )
    return out


if __name__ == "__main__":
    main()
