"""Tenant isolation under hostile load (issue 26 items 6 and 8; docs/reliability.md "Hostile
load and other tenants"). A victim tenant (its own space and principal) reads one record with
memory.records.get in a closed loop, with BENCH_ISO_VICTIMS (1) clients, while:

1. quiet: nothing else runs;
2. invalid bodies: BENCH_ISO_ATTACKERS (4) clients of another tenant send invalid ~1 MB bodies
   back to back (a 100,000-item `kinds` list, an import chunk whose last object is wrong, a
   capture of 20,000 items), each answered 400 invalid_input (or 413);
3. many grants: a principal of a third space with grants_issue issues itself BENCH_ISO_GRANTS
   (2,000) grants, one subject each (refused past limits.max_grants_per_principal where that
   bound exists), then BENCH_ISO_ATTACKERS clients run memory.records.list as it.

Each phase runs BENCH_ISO_SECONDS (30). With BENCH_ISO_BEFORE (a checkout of the code before a
change) its server runs the phases first, then this checkout's: a before/after in one run. Printed and saved (var/bench/tenant_isolation.json): the
victim's p50/p95/p99 per phase, and the attackers' own latency and answers. gunicorn as
deployed (2 workers x 4 threads) on PostgreSQL.

    flock /work/bench.lock .venv/bin/python -m bench tenant_isolation"""

from __future__ import annotations

import json
import multiprocessing
import os
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx

from bench import (
    BROKER_URL,
    ROOT,
    Stats,
    closed_loop,
    gunicorn,
    knob,
    save,
    seed,
    setup_django,
    table,
)

SECONDS = knob("BENCH_ISO_SECONDS", 30.0)
VICTIMS = knob("BENCH_ISO_VICTIMS", 1)
ATTACKERS = knob("BENCH_ISO_ATTACKERS", 4)
GRANTS = knob("BENCH_ISO_GRANTS", 2000)
WORKERS = knob("BENCH_WORKERS", 2)
THREADS = knob("BENCH_THREADS", 4)
# A checkout of the code before a change: its server runs the same phases first, then this
# one's, in one run (rows prefixed "before:" / "after:"). BENCH_ISO_GRANTS=0 skips the grants
# phase (its grants stay in the database, so a second server would start with them).
# The attackers' own request rate (`manage.py spoke set-rate`), e.g. "50/s"; empty: the
# server's rate, which the bench sets out of the way (bench.server_env).
ATTACKER_RATE = os.environ.get("BENCH_ISO_ATTACKER_RATE", "")
BEFORE = os.environ.get("BENCH_ISO_BEFORE", "")
# The servers' cache (the throttle's counters, the byte budget) is a Redis, as deployed, so all
# their processes share one count.
CACHE_URL = os.environ.get("BENCH_CACHE_URL", BROKER_URL)


def client(url: str, token: str) -> httpx.Client:
    return httpx.Client(base_url=url, headers={"Authorization": f"Bearer {token}"}, timeout=120)


def post(c: httpx.Client, op: str, body: dict | bytes) -> httpx.Response:
    content = body if isinstance(body, bytes) else json.dumps(body).encode()
    return c.post(f"/v1/ops/{op}", content=content, headers={"Content-Type": "application/json"})


def invalid_bodies(space_id: str) -> list[tuple[str, bytes]]:
    """Three shapes of an invalid body of about 1 MB (under max_request_bytes)."""
    kinds = {"space_id": space_id, "kinds": ["fact"] * 100_000 + [1]}
    record = {
        "type": "record",
        "data": {
            "schema_version": 1,
            "record_id": "rec_01",
            "subject_id": "u1",
            "kind": "fact",
            "content": {"text": "x" * 20},
            "placement": {"scope": "shared"},
            "provenance": {
                "source": "authored",
                "author_principal_id": "prn_a",
                "created_at": "2020-01-01T00:00:00.000Z",
            },
            "revision": 1,
            "created_at": "2020-01-01T00:00:00.000Z",
            "updated_at": "2020-01-01T00:00:00.000Z",
            "extensions": {},
        },
    }
    chunk = {
        "space_id": space_id,
        "import_id": "imp_x",
        "chunk": {
            "schema_version": 1,
            "export_id": "exp_x",
            "ordinal": 1,
            "chunk_count": 2,
            "objects": [record] * 2300 + [{"type": "record", "data": {}}],
            "digest": "sha256:" + "0" * 64,
            "extensions": {},
        },
    }
    capture = {
        "space_id": space_id,
        "subject_id": "u1",
        "capture_scope": {"placement": {"scope": "shared"}},
        "items": [{"content": {"text": "x" * 10}}] * 20_000,
    }
    out = [
        ("memory.records.list", kinds),
        ("memory.imports.stage", chunk),
        ("memory.capture", capture),
    ]
    return [(op, json.dumps(body).encode()) for op, body in out]


def victim(url: str, token: str, space_id: str, record_id: str):
    def make(_i: int):
        c = client(url, token)

        def work() -> str | None:
            r = post(c, "memory.records.get", {"space_id": space_id, "record_id": record_id})
            return None if r.status_code == 200 else f"http_{r.status_code}"

        return work

    return make


def _attack(name: str, attacker_make, out) -> None:
    out.put(closed_loop(name, ATTACKERS, SECONDS, attacker_make).row())


def measured(name: str, url: str, victim_make, attacker_make=None) -> tuple[Stats, dict | None]:
    """The victim's closed loop for SECONDS, with the attackers' loop beside it in a process of
    their own (forked), so building and sending their bodies does not hold this process's GIL
    while the victim's client measures."""
    if attacker_make is None:
        return closed_loop(name, VICTIMS, SECONDS, victim_make), None
    fork = multiprocessing.get_context("fork")
    out = fork.Queue()
    attackers = fork.Process(target=_attack, args=(f"{name} (attackers)", attacker_make, out))
    attackers.start()
    time.sleep(1.0)  # the attack is under way before the victim measures
    got = closed_loop(name, VICTIMS, SECONDS - 2.0, victim_make)
    row = out.get(timeout=SECONDS + 300)
    attackers.join()
    return got, row


def main() -> dict:
    setup_django()
    from memory.models import Principal
    from memory.ops.base import call
    from tests import factories

    tag = uuid.uuid4().hex[:8]
    calm, noisy, greedy = seed(f"iso-v-{tag}", 2), seed(f"iso-a-{tag}", 2), seed(f"iso-g-{tag}", 2)
    made = call(
        Principal.objects.get(pk=calm.principal_id),
        "memory.records.create",
        {
            "space_id": calm.space_id,
            "subject_id": "u0",
            "kind": "fact",
            "content": {"text": "Ada prefers tea."},
            "placement": {"scope": "shared"},
        },
    )
    record_id = made["receipt"]["refs"][0]["id"]
    # the greedy principal: grants_issue and records_read over the whole space, from an admin
    hog, hog_token = factories.make_principal(f"bench-hog-{tag}", token_label="bench")
    call(
        Principal.objects.get(pk=greedy.principal_id),
        "memory.grants.grant",
        {
            "space_id": greedy.space_id,
            "grantee_principal_id": hog.principal_id,
            "capabilities": ["grants_issue", "records_read"],
            "shared_access": True,
        },
    )
    if ATTACKER_RATE:
        from memory.services import operators

        for attacker in (noisy.principal_id, hog.principal_id):
            operators.set_rate(Principal.objects.get(pk=attacker), ATTACKER_RATE)
    rows: list[dict] = []
    out: dict[str, Any] = {}
    trees = {"before": Path(BEFORE), "after": ROOT} if BEFORE else {"": ROOT}
    for label, root in trees.items():
        tag_ = f"{label}: " if label else ""
        with gunicorn(
            workers=WORKERS, threads=THREADS, root=root, SPOKE_MEMORY_CACHE_URL=CACHE_URL
        ) as url:
            victim_make = victim(url, calm.token, calm.space_id, record_id)
            closed_loop("warm-up", VICTIMS, 3.0, victim_make)
            quiet, _ = measured("quiet", url, victim_make)
            rows.append({**quiet.row(), "phase": f"{tag_}quiet"})

            bodies = invalid_bodies(noisy.space_id)

            def attacker_invalid(i: int):
                c = client(url, noisy.token)
                flags = ["spoke-memory", "spoke-memory-transfer", "spoke-memory-reflection"]
                opened = c.post("/v1/connect", json={"capabilities": flags})
                c.headers["Spoke-Session"] = opened.json()["session"]["session_id"]
                n = [i]

                def work() -> str | None:
                    op, body = bodies[n[0] % len(bodies)]  # noqa: B023 - used in this pass
                    n[0] += 1
                    r = post(c, op, body)
                    # refused as invalid (400, 413), or over its byte budget (429) once it exists
                    return None if r.status_code in (400, 413, 429) else f"http_{r.status_code}"

                return work

            loud, attack = measured("invalid bodies", url, victim_make, attacker_invalid)
            rows.append({**loud.row(), "phase": f"{tag_}4 clients, invalid 1 MB bodies"})
            out[f"{tag_}invalid_attackers"] = attack
            if not GRANTS:
                continue

            # many grants: the hog issues itself GRANTS grants, one subject each, 4 at a time
            hog_client = client(url, hog_token)

            def issue(i: int) -> int:
                r = post(
                    hog_client,  # noqa: B023 - used in this pass only
                    "memory.grants.grant",
                    {
                        "space_id": greedy.space_id,
                        "grantee_principal_id": hog.principal_id,
                        "capabilities": ["records_read"],
                        "subject_ids": [f"s{i}"],
                        "context_ids": ["c1"],
                    },
                )
                return r.status_code

            started = time.monotonic()
            with ThreadPoolExecutor(4) as pool:
                codes = list(pool.map(issue, range(GRANTS)))
            out["grants_issued"] = {
                "asked": GRANTS,
                "accepted": codes.count(200),
                "refused_422": codes.count(422),
                "seconds": round(time.monotonic() - started, 1),
            }

            def attacker_list(_i: int):
                c = client(url, hog_token)

                def work() -> str | None:
                    r = post(c, "memory.records.list", {"space_id": greedy.space_id})
                    return None if r.status_code == 200 else f"http_{r.status_code}"

                return work

            granted, attack = measured("many grants", url, victim_make, attacker_list)
            held = out["grants_issued"]["accepted"] + 1
            rows.append(
                {**granted.row(), "phase": f"{tag_}4 clients of a principal with {held} grants"}
            )
            out[f"{tag_}grant_attackers"] = attack

    out["victim"] = rows
    columns = ["phase", "requests", "p50_ms", "p95_ms", "p99_ms", "error_rate"]
    print(table(rows, columns))
    for key in [k for k in out if k.endswith("_attackers")]:
        row = out.get(key)
        if row:
            print(
                f"{key}: {row['requests']} requests, p50 {row['p50_ms']} ms, errors {row['errors']}"
            )
    print("grants:", out.get("grants_issued"))
    save("tenant_isolation", out)
    return out


if __name__ == "__main__":
    main()
