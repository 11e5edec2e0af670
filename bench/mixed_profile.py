"""The mixed load (bench.mixed_load) against a profiled server: where the CPU goes per request
(docs/performance.md#mixed-load, "Profiled and tuned").

The server is the bench's app wrapped (`app()` below, `bench.mixed_profile:app()` for gunicorn):
per op, the thread CPU time (`time.thread_time`), wall time, query count and time spent in
queries; with BENCH_PROFILE_CPROFILE=1 also a cProfile of every request on the thread's CPU
clock (slows the server several times; the shares are what count). Each worker writes
var/bench/profile/<pid>.json (and .prof) every 100 requests. The driver then prints the table
and the CPU of the driver, the server and PostgreSQL (/proc, all of the machine's postgres
processes: keep other databases quiet) against the machine's busy time.

    python -m bench.mixed_profile            # BENCH_MIXED_SECONDS etc. as bench.mixed_load
    python -c "import pstats,glob; pstats.Stats(*glob.glob('var/bench/profile/*.prof')).sort_stats('cumulative').print_stats(60)"
"""

from __future__ import annotations

import functools
import json
import os
import resource
import shutil
import threading
import time
from collections import defaultdict
from pathlib import Path

import bench
from bench import RESULTS, mixed_load

OUT = RESULTS / "profile"


def app():
    """gunicorn factory: the bench's app, measured per op."""
    import cProfile
    import pstats

    inner = bench.wsgi_app()
    from django.db import connection

    profile = os.environ.get("BENCH_PROFILE_CPROFILE") == "1"
    lock, local = threading.Lock(), threading.local()
    state: dict = {"stats": None, "n": 0}
    per_op: dict = defaultdict(lambda: dict.fromkeys(("n", "cpu", "wall", "queries", "db"), 0.0))

    def timed(execute, sql, params, many, context):
        started = time.perf_counter()
        try:
            return execute(sql, params, many, context)
        finally:
            local.queries += 1
            local.db += time.perf_counter() - started

    def dump() -> None:
        OUT.mkdir(parents=True, exist_ok=True)
        if state["stats"] is not None:
            state["stats"].dump_stats(str(OUT / f"{os.getpid()}.prof"))
        (OUT / f"{os.getpid()}.json").write_text(json.dumps(per_op))

    def application(environ, start_response):
        op = environ.get("PATH_INFO", "").rsplit("/", 1)[-1]
        local.queries, local.db = 0, 0.0
        prof = cProfile.Profile(time.thread_time) if profile else None
        cpu, wall = time.thread_time(), time.perf_counter()
        with connection.execute_wrapper(timed):
            if prof:
                prof.enable()
            try:
                result = inner(environ, start_response)
                body = b"".join(result)
                if hasattr(result, "close"):
                    result.close()
            finally:
                if prof:
                    prof.disable()
        cpu, wall = time.thread_time() - cpu, time.perf_counter() - wall
        with lock:
            row = per_op[op]
            row["n"] += 1
            row["cpu"] += cpu
            row["wall"] += wall
            row["queries"] += local.queries
            row["db"] += local.db
            if prof:
                if state["stats"] is None:
                    state["stats"] = pstats.Stats(prof)
                else:
                    state["stats"].add(prof)
            state["n"] += 1
            if state["n"] % 100 == 0:
                dump()
        return [body]

    return application


def _postgres_cpu() -> float:
    """CPU seconds of every postgres process, with the postmaster's exited children."""
    total = 0
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            comm = Path(f"/proc/{pid}/comm").read_text().strip()
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if comm.startswith("postgres"):
            total += int(fields[11]) + int(fields[12])
            if fields[1] == "1":  # the postmaster: its children that exited
                total += int(fields[13]) + int(fields[14])
    return total / os.sysconf("SC_CLK_TCK")


def _machine() -> tuple[float, float]:
    values = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = values[3] + values[4]
    tick = os.sysconf("SC_CLK_TCK")
    return (sum(values) - idle) / tick, sum(values) / tick


def _cpu(usage) -> float:
    return usage.ru_utime + usage.ru_stime


def main() -> dict:
    shutil.rmtree(OUT, ignore_errors=True)
    mixed_load.gunicorn = functools.partial(bench.gunicorn, app="bench.mixed_profile:app()")  # type: ignore[assignment]
    me, kids = (
        resource.getrusage(resource.RUSAGE_SELF),
        resource.getrusage(resource.RUSAGE_CHILDREN),
    )
    pg, (busy, total), started = _postgres_cpu(), _machine(), time.time()
    out = mixed_load.main()
    me2, kids2 = (
        resource.getrusage(resource.RUSAGE_SELF),
        resource.getrusage(resource.RUSAGE_CHILDREN),
    )
    busy2, total2 = _machine()
    split = {
        "seconds": round(time.time() - started, 1),
        "driver_cpu_s": round(_cpu(me2) - _cpu(me), 1),
        "server_cpu_s": round(_cpu(kids2) - _cpu(kids), 1),
        "postgres_cpu_s": round(_postgres_cpu() - pg, 1),
        "machine_busy_s": round(busy2 - busy, 1),
        "machine_total_s": round(total2 - total, 1),
    }
    ops: dict = defaultdict(lambda: defaultdict(float))
    for path in OUT.glob("*.json"):
        for op, row in json.loads(path.read_text()).items():
            for k, v in row.items():
                ops[op][k] += v
    rows = [
        {
            "op": op,
            "count": int(r["n"]),
            "cpu_ms": round(r["cpu"] / r["n"] * 1000, 2),
            "wall_ms": round(r["wall"] / r["n"] * 1000, 2),
            "queries": round(r["queries"] / r["n"], 1),
            "db_wall_ms": round(r["db"] / r["n"] * 1000, 2),
        }
        for op, r in sorted(ops.items())
        if r["n"]
    ]
    print(bench.table(rows, ["op", "count", "cpu_ms", "wall_ms", "queries", "db_wall_ms"]))
    print(f"CPU by process: {split}")
    result = {**out, "profile": rows, "cpu": split}
    bench.save("mixed_profile", result)
    return result


if __name__ == "__main__":
    main()
