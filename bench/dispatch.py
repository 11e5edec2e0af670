"""Dispatch overhead against its floor (docs/performance.md#dispatch).

Under gunicorn on PostgreSQL, closed-loop clients on loopback call read ops through the full
edge (token, session, gates, coverage, handler) and, in the same server, a bare Django view
doing the same single-row select (the floor). Reports throughput, p50/p95 and the ratio to the
floor, then profiles the op in-process with pyinstrument to say where the gap goes.

    python -m bench dispatch            # BENCH_SECONDS (8) per round, BENCH_CLIENTS (8)"""

from __future__ import annotations

import json
import os

import httpx

from bench import closed_loop, gunicorn, merged, save, seed, setup_django, table

SECONDS = float(os.environ.get("BENCH_SECONDS", "8"))
CLIENTS = int(os.environ.get("BENCH_CLIENTS", "8"))
WORKERS = int(os.environ.get("BENCH_WORKERS", "2"))
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "2"))


def _worker(url: str, path: str, body: dict, headers: dict):
    def make(i: int):
        client = httpx.Client(base_url=url, headers=headers, timeout=10.0)
        raw = json.dumps(body)

        def one() -> str | None:
            r = client.post(path, content=raw)
            return None if r.status_code == 200 else f"http_{r.status_code}"

        return one

    return make


def targets(s, record_id: str | None) -> list[tuple[str, str, dict, str]]:
    """(name, path, body, floor name): each op is compared with the bare view doing its select."""
    from memory.ops.base import HANDLERS

    subject = {"space_id": s.space_id, "subject_id": "u1"}
    out = [
        (FLOOR_SUBJECT, "/bench/floor", subject, FLOOR_SUBJECT),
        ("memory.subjects.get", "/v1/ops/memory.subjects.get", subject, FLOOR_SUBJECT),
    ]
    if record_id and "memory.records.get" in HANDLERS:
        record = {"space_id": s.space_id, "record_id": record_id}
        out += [
            (FLOOR_RECORD, "/bench/floor-record", record, FLOOR_RECORD),
            ("memory.records.get", "/v1/ops/memory.records.get", record, FLOOR_RECORD),
        ]
        if "memory.recall" in HANDLERS:
            out.append(
                (
                    "memory.recall",
                    "/v1/ops/memory.recall",
                    {**subject, "query": {"text": "bench note"}},
                    FLOOR_RECORD,
                )
            )
    return out


FLOOR_SUBJECT = "floor: bare view, subject select"
FLOOR_RECORD = "floor: bare view, record select"


def make_record(s) -> str | None:
    from memory.models import Principal
    from memory.ops.base import HANDLERS, call

    if "memory.records.create" not in HANDLERS:
        return None
    admin = Principal.objects.get(principal_id=s.principal_id)
    receipt = call(
        admin,
        "memory.records.create",
        {
            "space_id": s.space_id,
            "subject_id": "u1",
            "kind": "note",
            "content": {"text": "bench note about the floor"},
            "placement": {"scope": "shared"},
        },
    )["receipt"]
    return (
        receipt["refs"][-1]["id"]
        if receipt["refs"][-1]["type"] == "record"
        else receipt["refs"][0]["id"]
    )


def profile(s, path: str, body: dict, n: int = 800) -> str:
    """pyinstrument over n in-process requests through the WSGI app (no network)."""
    from django.test import Client, override_settings
    from pyinstrument import Profiler

    with override_settings(ROOT_URLCONF="bench.urls"):
        return _profile(s, path, body, n, Client, Profiler)


def _profile(s, path, body, n, Client, Profiler) -> str:
    client = Client()
    headers = {"HTTP_AUTHORIZATION": f"Bearer {s.token}"}
    raw = json.dumps(body)
    for _ in range(50):
        client.post(path, raw, content_type="application/json", **headers)
    profiler = Profiler(interval=0.0005)
    profiler.start()
    for _ in range(n):
        client.post(path, raw, content_type="application/json", **headers)
    profiler.stop()
    return profiler.output_text(unicode=False, color=False, show_all=False)


def in_process(s, todo, rounds: int = 8, n: int = 200) -> list[dict]:
    """Per-request time through the WSGI stack in this process (Django's test client: the same
    middleware, no network, no load driver), interleaved rounds, median: the server's own cost."""
    import statistics
    import time

    from django.test import Client, override_settings

    headers = {"HTTP_AUTHORIZATION": f"Bearer {s.token}"}
    times: dict[str, list[float]] = {name: [] for name, *_ in todo}
    with override_settings(ROOT_URLCONF="bench.urls"):
        client = Client()
        for _ in range(rounds):
            for name, path, body, _floor in todo:
                raw = json.dumps(body)
                started = time.perf_counter()
                for _ in range(n):
                    response = client.post(path, raw, content_type="application/json", **headers)
                times[name].append((time.perf_counter() - started) / n * 1000)
                assert response.status_code == 200, (name, response.status_code)
    floors = {name: floor for name, _path, _body, floor in todo}
    medians = {name: statistics.median(v) for name, v in times.items()}
    return [
        {
            "name": name,
            "ms_per_request": round(ms, 3),
            "vs_floor": f"{100 * medians[floors[name]] / ms:.0f}%",
        }
        for name, ms in medians.items()
    ]


def main() -> dict:
    setup_django()
    import time

    from django.db import connection

    s = seed(f"bench-dispatch-{int(time.time())}")
    record_id = make_record(s)
    connection.close()
    headers = {"Authorization": f"Bearer {s.token}", "Content-Type": "application/json"}
    results: dict[str, list] = {}
    with gunicorn(workers=WORKERS) as url:
        todo = targets(s, record_id)
        for _ in range(max(1, int(SECONDS > 0))):  # warm-up
            for name, path, body, _floor in todo:
                closed_loop(name, CLIENTS, 1.0, _worker(url, path, body, headers))
        for _ in range(
            ROUNDS
        ):  # interleaved rounds, so drift from the shared machine hits all alike
            for name, path, body, _floor in todo:
                results.setdefault(name, []).append(
                    closed_loop(name, CLIENTS, SECONDS, _worker(url, path, body, headers))
                )
    rows = [merged(runs).row() for runs in results.values()]
    by_name = {row["name"]: row for row in rows}
    floors = {name: floor for name, _path, _body, floor in todo}
    for row in rows:
        floor = by_name[floors[row["name"]]]
        row["vs_floor"] = f"{100 * row['rps'] / (floor['rps'] or 1.0):.0f}%"
    print(
        table(
            rows,
            ["name", "requests", "rps", "p50_ms", "p95_ms", "p99_ms", "error_rate", "vs_floor"],
        )
    )
    local = in_process(s, todo)
    print("in-process (no network, no driver):")
    print(table(local, ["name", "ms_per_request", "vs_floor"]))
    record = {"space_id": s.space_id, "record_id": record_id}
    prof = profile(s, "/v1/ops/memory.records.get", record)
    prof_floor = profile(s, "/bench/floor-record", record)
    out = {
        "clients": CLIENTS,
        "workers": WORKERS,
        "seconds_per_round": SECONDS,
        "rounds": ROUNDS,
        "rows": rows,
        "in_process": local,
        "profile_records_get": prof,
        "profile_floor": prof_floor,
    }
    path = save("dispatch", out)
    print(f"profile and figures: {path}")
    return out


if __name__ == "__main__":
    main()
