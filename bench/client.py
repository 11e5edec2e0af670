"""The client's own cost against its floor (docs/performance.md#clients).

One closed loop, one call at a time, `memory.records.get` of one record:
- over HTTP (gunicorn, 1 worker, loopback): the floor is a bare `httpx.Client.post` of the same
  body with the same headers (and the same `Spoke-Session` for the session row); against it,
  `MemoryClient` without a session and with one (`capabilities`), which add body preparation,
  the typed method and error decoding;
- in-process: the floor is `memory.ops.base.call`; against it, `InProcessMemoryPort.records_get`.
Rounds are interleaved so drift on a shared machine hits every row alike; the median per-call
time of the rounds is reported with its share of the floor.

    python -m bench client          # BENCH_CALLS (300) per round, BENCH_ROUNDS (5)"""

from __future__ import annotations

import json
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

from bench import ROOT, gunicorn, save, seed, setup_django, table
from bench.dispatch import make_record

CALLS = int(os.environ.get("BENCH_CALLS", "300"))
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "5"))


def _timed(fn: Callable[[], object], n: int) -> float:
    started = time.perf_counter()
    for _ in range(n):
        fn()
    return (time.perf_counter() - started) / n * 1000


def _rows(times: dict[str, list[float]]) -> list[dict]:
    """Each row against the floor row above it (the nearest preceding `floor: ...`)."""
    medians = {name: statistics.median(v) for name, v in times.items()}
    rows, floor = [], 0.0
    for name, ms in medians.items():
        if name.startswith("floor:"):
            floor = ms
        rows.append(
            {
                "name": name,
                "ms_per_call": round(ms, 3),
                "overhead_ms": round(ms - floor, 3),
                "share_of_floor": f"{100 * floor / ms:.0f}%",
            }
        )
    return rows


def main() -> dict:
    setup_django()
    sys.path.insert(0, str(ROOT / "clients" / "python"))
    import httpx
    from django.db import connection
    from spoke_memory_client import MemoryClient

    from memory.flags import ALL_FLAGS
    from memory.models import Principal
    from memory.ops.base import call
    from memory.ops.port import InProcessMemoryPort

    s = seed(f"bench-client-{int(time.time())}", subjects=2)
    admin = Principal.objects.get(principal_id=s.principal_id)
    record_id = make_record(s)
    body = {"space_id": s.space_id, "record_id": record_id}

    port = InProcessMemoryPort()
    local = {
        "floor: memory.ops.base.call": lambda: call(admin, "memory.records.get", body),
        "InProcessMemoryPort.records_get": lambda: port.records_get(admin, body),
    }
    local_times: dict[str, list[float]] = {name: [] for name in local}
    for name, fn in local.items():
        _timed(fn, 20)  # warm-up
    for _ in range(ROUNDS):
        for name, fn in local.items():
            local_times[name].append(_timed(fn, CALLS))
    connection.close()

    headers = {"Authorization": f"Bearer {s.token}", "Content-Type": "application/json"}
    with gunicorn(workers=1) as url:
        raw = httpx.Client(base_url=url, headers=headers, timeout=10.0)
        plain = MemoryClient(url, s.token)
        session = MemoryClient(url, s.token, capabilities=ALL_FLAGS)

        def floor() -> object:
            r = raw.post("/v1/ops/memory.records.get", content=json.dumps(body))
            assert r.status_code == 200, r.status_code
            return r.json()

        session.connect()
        assert session.session is not None
        with_session = {**headers, "Spoke-Session": session.session["session_id"]}

        def floor_session() -> object:
            r = raw.post(
                "/v1/ops/memory.records.get", content=json.dumps(body), headers=with_session
            )
            assert r.status_code == 200, r.status_code
            return r.json()

        remote = {
            "floor: httpx.Client.post": floor,
            "MemoryClient.records.get": lambda: plain.records.get(**body),
            "floor: httpx.Client.post (session)": floor_session,
            "MemoryClient.records.get (session)": lambda: session.records.get(**body),
        }
        remote_times: dict[str, list[float]] = {name: [] for name in remote}
        for fn in remote.values():
            _timed(fn, 20)
        for _ in range(ROUNDS):
            for name, fn in remote.items():
                remote_times[name].append(_timed(fn, CALLS))
        raw.close()
        plain.close()
        session.close()

    # The client's own work alone: the same two callers over a transport that answers at once.
    answer = httpx.Response(200, json={"record": {"record_id": body["record_id"]}})
    mock = httpx.MockTransport(lambda request: answer)
    bare = httpx.Client(base_url="http://bench.invalid", headers=headers, transport=mock)
    typed = MemoryClient("http://bench.invalid", s.token, transport=mock)
    offline = {
        "floor: httpx.Client.post (no network)": lambda: bare.post(
            "/v1/ops/memory.records.get", content=json.dumps(body)
        ).json(),
        "MemoryClient.records.get (no network)": lambda: typed.records.get(**body),
    }
    offline_times: dict[str, list[float]] = {name: [] for name in offline}
    for _ in range(ROUNDS):
        for name, fn in offline.items():
            offline_times[name].append(_timed(fn, CALLS * 10))
    over_http = _rows(remote_times) + _rows(offline_times)
    in_process = _rows(local_times)
    columns = ["name", "ms_per_call", "overhead_ms", "share_of_floor"]
    print("over HTTP (gunicorn, 1 worker, loopback, one call at a time):")
    print(table(over_http, columns))
    print("in-process:")
    print(table(in_process, columns))
    out = {
        "calls_per_round": CALLS,
        "rounds": ROUNDS,
        "load_average": os.getloadavg()[0],
        "over_http": over_http,
        "in_process": in_process,
    }
    path: Path = save("client", out)
    print(f"saved {path}")
    return out


if __name__ == "__main__":
    main()
