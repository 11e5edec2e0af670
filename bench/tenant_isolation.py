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

With `six` in BENCH_ISO_PHASES (issue 39): the victim as a parallel app (BENCH_ISO_APP_CLIENTS,
4, reads in flight), first quiet, then beside six principals of one other space (made by its
operators: home space), each a sequential client listing that space's records. With `narrow`:
a principal of the other space holding one narrow grant in the victim's space (recall, one
subject) runs BENCH_ISO_ATTACKERS clients of memory.recall there, beside the victim's reads.
With `team` in BENCH_ISO_PHASES, a phase after the quiet one: BENCH_ISO_ATTACKERS clients of an
app of the victim's own space (a second principal with records_read there) run
memory.records.list in it beside the victim's reads (an app beside its own agent's token: one
tenant, so neither yields to the other; docs/decisions/index.md "The heavier principal yields to a
lighter one"). With `alone` in BENCH_ISO_PHASES, the grant-heavy listers first run on a server that has served
nobody else (what they get unshared: the CPU share holds a principal only while another is served).
Each phase runs BENCH_ISO_SECONDS (30). With BENCH_ISO_BEFORE (a checkout of the code before a
change) its server runs the phases first, then this checkout's: a before/after in one run. Printed and saved (var/bench/tenant_isolation.json): the
victim's p50/p95/p99 per phase, and the attackers' own latency and answers. gunicorn as
deployed (2 workers x 4 threads) on PostgreSQL.

    flock /work/bench.lock .venv/bin/python -m bench tenant_isolation"""

from __future__ import annotations

import json
import multiprocessing
import os
import resource
import socket
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
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
APP_CLIENTS = knob("BENCH_ISO_APP_CLIENTS", 4)
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
# Server environments to run the phases under in turn, "|"-separated, each "NAME=VALUE ...",
# e.g. "SPOKE_MEMORY_SPACE_RATE=600/s|SPOKE_MEMORY_SPACE_RATE=60000/min"; empty: one run.
VARIANTS = os.environ.get("BENCH_ISO_VARIANTS", "").split("|")
# Which phases run (comma-separated): quiet, six, narrow, team, invalid, grants; and alone: the grant-heavy
# listers first on their own, before the victim's first request (what they get unshared).
PHASES = os.environ.get("BENCH_ISO_PHASES", "quiet,invalid,grants").split(",")
# The servers' cache (the throttle's counters, the byte budget) is a Redis, as deployed, so all
# their processes share one count.
CACHE_URL = os.environ.get("BENCH_CACHE_URL", BROKER_URL)


# The clients: "httpx" (as an app would call), or "raw": each request encoded once and sent
# over a plain keep-alive socket, the answer's status line and headers parsed by hand, so the
# load generators take as little of the machine's CPU as they can (the nearest this machine
# gets to clients on other hosts).
CLIENT = os.environ.get("BENCH_ISO_CLIENT", "httpx")
# CPUs for the attackers' process and for this (the victim's) process, e.g. "1" (taskset's
# list syntax, comma-separated); empty: any.
ATTACKER_CPUS = os.environ.get("BENCH_ISO_ATTACKER_CPUS", "")
VICTIM_CPUS = os.environ.get("BENCH_ISO_VICTIM_CPUS", "")
# BENCH_ISO_SPLIT=1: the attackers call a second server of their own (its own processes, the same
# database): a diagnosis of what the shared server's threads and GIL cost the victim.
SPLIT = os.environ.get("BENCH_ISO_SPLIT", "") == "1"
# BENCH_TIMING=1: the servers answer Bench-Timing (bench.timed); the victim's row splits its
# latency into outside the app, the handler's CPU, its SQL, and its other waits.
TIMING = os.environ.get("BENCH_TIMING", "") == "1"


def cpus(spec: str) -> set[int]:
    return {int(c) for c in spec.split(",") if c.strip()}


class Raw:
    """A keep-alive HTTP/1.1 connection sending pre-encoded requests; `send` answers the status
    and the headers (lower-cased names)."""

    def __init__(self, url: str) -> None:
        host, port = url.removeprefix("http://").split(":")
        self.address = (host, int(port))
        self.sock: socket.socket | None = None

    def encode(self, path: str, headers: dict[str, str], body: bytes) -> bytes:
        host = f"{self.address[0]}:{self.address[1]}"
        head = f"POST {path} HTTP/1.1\r\nHost: {host}\r\nContent-Length: {len(body)}\r\n"
        head += "".join(f"{k}: {v}\r\n" for k, v in headers.items())
        return (head + "\r\n").encode() + body

    def send(self, message: bytes) -> tuple[int, dict[str, str]]:
        if self.sock is None:
            self.sock = socket.create_connection(self.address, timeout=120)
            self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        try:
            self.sock.sendall(message)
            buf = b""
            while b"\r\n\r\n" not in buf:
                got = self.sock.recv(65536)
                if not got:
                    raise ConnectionError("closed")
                buf += got
            head, rest = buf.split(b"\r\n\r\n", 1)
            lines = head.decode("latin-1").split("\r\n")
            status = int(lines[0].split()[1])
            headers = {}
            for line in lines[1:]:
                k, _, v = line.partition(":")
                headers[k.strip().lower()] = v.strip()
            left = int(headers.get("content-length", "0")) - len(rest)
            while left > 0:
                got = self.sock.recv(min(left, 1 << 20))
                if not got:
                    raise ConnectionError("closed")
                left -= len(got)
        except OSError:
            self.close()
            raise
        if headers.get("connection", "").lower() == "close":
            self.close()
        return status, headers

    def close(self) -> None:
        if self.sock is not None:
            self.sock.close()
            self.sock = None


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


JSON = {"Content-Type": "application/json"}


def sender(url: str, token: str, session: str | None = None):
    """A function sending one op's body (a dict, or bytes encoded once) and answering its status
    and its Bench-Timing header: over httpx, or over a Raw socket (BENCH_ISO_CLIENT)."""
    headers = {"Authorization": f"Bearer {token}", **JSON}
    if session:
        headers["Spoke-Session"] = session
    if CLIENT == "raw":
        raw, encoded = Raw(url), {}

        def send_raw(op: str, body: dict | bytes) -> tuple[int, str | None]:
            key = (op, id(body))
            if key not in encoded:
                data = body if isinstance(body, bytes) else json.dumps(body).encode()
                encoded[key] = raw.encode(f"/v1/ops/{op}", headers, data)
            status, got = raw.send(encoded[key])
            return status, got.get("bench-timing")

        return send_raw
    c = httpx.Client(base_url=url, headers=headers, timeout=120)

    def send_httpx(op: str, body: dict | bytes) -> tuple[int, str | None]:
        content = body if isinstance(body, bytes) else json.dumps(body).encode()
        r = c.post(f"/v1/ops/{op}", content=content)
        return r.status_code, r.headers.get("bench-timing")

    return send_httpx


ATTACK_TIMINGS: list[dict[str, int]] = []  # in the attackers' process


def lister(url: str, token: str, space_id: str):
    """The attacker factory of a principal listing a space's records in a closed loop (one
    client per call): the grant-heavy listers, and the `team` phase's app."""

    def make(_i: int):
        send = sender(url, token)
        body = {"space_id": space_id}

        def work() -> str | None:
            status, timing = send("memory.records.list", body)
            if TIMING:
                ATTACK_TIMINGS.append(timing_of(timing) or {})
            return None if status == 200 else f"http_{status}"

        return work

    return make


def timing_of(header: str | None) -> dict[str, int] | None:
    if not header:
        return None
    return {k: int(v) for k, v in (p.split("=") for p in header.split(";"))}


class Victim:
    """The victim's closed loop: memory.records.get of one record. With TIMING, each answer's
    client latency and the server's Bench-Timing are kept (`samples`) for `split()`."""

    def __init__(self, url: str, token: str, space_id: str, record_id: str) -> None:
        self.url, self.token = url, token
        self.body = {"space_id": space_id, "record_id": record_id}
        self.samples: list[tuple[float, dict[str, int]]] = []

    def __call__(self, _i: int):
        send = sender(self.url, self.token)

        def work() -> str | None:
            at = time.perf_counter()
            status, timing = send("memory.records.get", self.body)
            took = time.perf_counter() - at
            parts = timing_of(timing)
            if parts:
                self.samples.append((took, parts))
            return None if status == 200 else f"http_{status}"

        return work

    def split(self) -> dict:
        """What the victim's latency is made of, in ms: the means over every request and over
        its slowest 5% (at or above its p95): outside the app (queueing for a gunicorn thread,
        parsing, the network, the client), the handler's CPU, its SQL, its other waits (the
        GIL, the cache, the CPU's other takers)."""
        if not self.samples:
            return {}
        ordered = sorted(self.samples, key=lambda s: s[0])
        out = {}
        for label, part in (("all", ordered), ("slowest5", ordered[int(0.95 * len(ordered)) :])):
            n = len(part)
            total = sum(t for t, _ in part) * 1e3 / n
            wall = sum(m["wall"] for _, m in part) / 1e3 / n
            cpu = sum(m["cpu"] for _, m in part) / 1e3 / n
            db = sum(m["db"] for _, m in part) / 1e3 / n
            out[label] = {
                "client_ms": round(total, 2),
                "outside_ms": round(total - wall, 2),
                "cpu_ms": round(cpu, 2),
                "db_ms": round(db, 2),
                "other_wait_ms": round(wall - cpu - db, 2),
            }
        return out


def _attack(name: str, attacker_make, out, count: int = ATTACKERS) -> None:
    if ATTACKER_CPUS:
        os.sched_setaffinity(0, cpus(ATTACKER_CPUS))
    row = closed_loop(name, count, SECONDS, attacker_make).row()
    if ATTACK_TIMINGS:  # the server's own time for the attackers' requests (BENCH_TIMING)
        n = len(ATTACK_TIMINGS)
        row["server_ms"] = {
            k: round(sum(t.get(k, 0) for t in ATTACK_TIMINGS) / 1e3 / n, 2)
            for k in ("wall", "cpu", "db")
        }
    used = resource.getrusage(resource.RUSAGE_SELF)  # this (forked) process's own
    row["client_cpu_s"] = round(used.ru_utime + used.ru_stime, 1)
    out.put(row)


def measured(
    name: str,
    victim: Victim,
    attacker_make=None,
    attackers_n: int = ATTACKERS,
    victims_n: int = VICTIMS,
) -> tuple[Stats, dict | None]:
    """The victim's closed loop for SECONDS, with the attackers' loop beside it in a process of
    their own (forked), so building and sending their bodies does not hold this process's GIL
    while the victim's client measures."""
    victim.samples = []
    row = None
    if attacker_make is not None:
        fork = multiprocessing.get_context("fork")
        out = fork.Queue()
        attackers = fork.Process(
            target=_attack, args=(f"{name} (attackers)", attacker_make, out, attackers_n)
        )
        attackers.start()
        time.sleep(1.0)  # the attack is under way before the victim measures
    everywhere = os.sched_getaffinity(0)
    if VICTIM_CPUS:  # this thread's, inherited by the victim's threads
        os.sched_setaffinity(0, cpus(VICTIM_CPUS))
    try:
        got = closed_loop(name, victims_n, SECONDS - (2.0 if attacker_make else 0.0), victim)
    finally:
        os.sched_setaffinity(0, everywhere)
    if attacker_make is not None:
        row = out.get(timeout=SECONDS + 300)
        attackers.join()
    return got, row


def alone(name: str, attacker_make) -> dict:
    """The attackers' loop for SECONDS with no victim (in a process of their own, as `measured`
    runs them): what the same load gets from a server that serves it alone."""
    fork = multiprocessing.get_context("fork")
    out = fork.Queue()
    attackers = fork.Process(target=_attack, args=(name, attacker_make, out))
    attackers.start()
    row = out.get(timeout=SECONDS + 300)
    attackers.join()
    return row


def main() -> dict:
    setup_django()
    from memory.access import grants_held
    from memory.models import Principal
    from memory.ops.base import call
    from memory.timeutil import now
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
    # the app of the victim's own space (the `team` phase)
    app, app_token = factories.make_principal(f"bench-app-{tag}", token_label="bench")
    call(
        Principal.objects.get(pk=calm.principal_id),
        "memory.grants.grant",
        {
            "space_id": calm.space_id,
            "grantee_principal_id": app.principal_id,
            "capabilities": ["records_read"],
            "shared_access": True,
        },
    )
    # issue 39: six principals made by the noisy space's operators (its home), each able to list
    # it; and one of them with one narrow grant in the victim's space (recall on one subject)
    from memory.models import Space

    noisy_space = Space.objects.get(pk=noisy.space_id)
    six = []
    for n in range(6):
        member, member_token = factories.make_principal(
            f"bench-six-{n}-{tag}", token_label="bench", home_space=noisy_space
        )
        call(
            Principal.objects.get(pk=noisy.principal_id),
            "memory.grants.grant",
            {
                "space_id": noisy.space_id,
                "grantee_principal_id": member.principal_id,
                "capabilities": ["records_read"],
                "shared_access": True,
            },
        )
        six.append(member_token)
    narrow, narrow_token = factories.make_principal(
        f"bench-narrow-{tag}", token_label="bench", home_space=noisy_space
    )
    call(
        Principal.objects.get(pk=calm.principal_id),
        "memory.grants.grant",
        {
            "space_id": calm.space_id,
            "grantee_principal_id": narrow.principal_id,
            "capabilities": ["recall"],
            "subject_ids": ["u0"],
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
    runs = [(label, root, env) for label, root in trees.items() for env in VARIANTS]
    for label, root, variant in runs:
        tag_ = " ".join(t for t in (label, variant) if t)
        tag_ = f"{tag_}: " if tag_ else ""
        extra = dict(kv.split("=", 1) for kv in variant.split() if kv)
        with ExitStack() as servers:

            def serve() -> str:
                return servers.enter_context(
                    gunicorn(
                        workers=WORKERS,
                        threads=THREADS,
                        root=root,  # noqa: B023 - used in this pass only
                        SPOKE_MEMORY_CACHE_URL=CACHE_URL,
                        **({"BENCH_TIMING": "1"} if TIMING else {}),
                        **extra,  # noqa: B023 - used in this pass only
                    )
                )

            url = serve()
            hostile = serve() if SPLIT else url
            # many grants: the hog issues itself GRANTS grants, one subject each, 4 at a time (once)
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

            def issue_grants() -> int:
                if "grants_issued" not in out:
                    started = time.monotonic()
                    with ThreadPoolExecutor(4) as pool:
                        codes = list(pool.map(issue, range(GRANTS)))
                    out["grants_issued"] = {
                        "asked": GRANTS,
                        "accepted": codes.count(200),
                        "refused_422": codes.count(422),
                        "seconds": round(time.monotonic() - started, 1),
                    }
                return grants_held(greedy.space_id, hog, now())  # this run's and any before it

            attacker_list = lister(hostile, hog_token, greedy.space_id)

            if GRANTS and "alone" in PHASES:
                # the listers on a server that has served nobody else: what they get alone
                held = issue_grants()
                out[f"{tag_}alone_grant_attackers"] = alone(
                    f"{ATTACKERS} clients of a principal with {held} grants, alone", attacker_list
                )
            victim = Victim(url, calm.token, calm.space_id, record_id)
            closed_loop("warm-up", VICTIMS, 3.0, victim)

            def phase(
                name: str,
                attacker_make=None,
                victim: Victim = victim,
                attackers_n: int = ATTACKERS,
                victims_n: int = VICTIMS,
            ) -> dict | None:
                got, attack = measured(name, victim, attacker_make, attackers_n, victims_n)
                rows.append({**got.row(), "phase": f"{tag_}{name}", "split": victim.split()})  # noqa: B023
                return attack

            if "quiet" in PHASES:
                phase("quiet")

            if "team" in PHASES:
                out[f"{tag_}team_app_attackers"] = phase(
                    f"{ATTACKERS} clients of an app of the victim's own space",
                    lister(hostile, app_token, calm.space_id),
                )

            if "six" in PHASES:
                phase(f"quiet, the victim an app of {APP_CLIENTS} clients", victims_n=APP_CLIENTS)

                def six_members(i: int):
                    send = sender(hostile, six[i % len(six)])  # noqa: B023 - this pass only
                    body = {"space_id": noisy.space_id}

                    def work() -> str | None:
                        status, _ = send("memory.records.list", body)
                        return None if status == 200 else f"http_{status}"

                    return work

                out[f"{tag_}six_principals_attackers"] = phase(
                    f"6 sequential principals of one space, the victim an app of {APP_CLIENTS}",
                    six_members,
                    attackers_n=6,
                    victims_n=APP_CLIENTS,
                )

            if "narrow" in PHASES:

                def narrow_grantee(_i: int):
                    send = sender(hostile, narrow_token)  # noqa: B023 - this pass only
                    body = {"space_id": calm.space_id, "subject_id": "u0", "query": {"text": "tea"}}

                    def work() -> str | None:
                        status, _ = send("memory.recall", body)
                        return None if status == 200 else f"http_{status}"

                    return work

                out[f"{tag_}narrow_grant_attackers"] = phase(
                    f"{ATTACKERS} clients of a narrow grantee in the victim's space", narrow_grantee
                )

            bodies = invalid_bodies(noisy.space_id)

            def attacker_invalid(i: int):
                c = client(hostile, noisy.token)  # noqa: B023 - used in this pass only
                flags = ["spoke-memory", "spoke-memory-transfer", "spoke-memory-reflection"]
                opened = c.post("/v1/connect", json={"capabilities": flags})
                session = opened.json()["session"]["session_id"]
                send = sender(hostile, noisy.token, session)  # noqa: B023
                n = [i]

                def work() -> str | None:
                    op, body = bodies[n[0] % len(bodies)]  # noqa: B023 - used in this pass
                    n[0] += 1
                    status, timing = send(op, body)
                    if TIMING:
                        ATTACK_TIMINGS.append(timing_of(timing) or {})
                    # refused as invalid (400, 413), or over its byte budget (429) once it exists
                    return None if status in (400, 413, 429) else f"http_{status}"

                return work

            if "invalid" in PHASES:
                out[f"{tag_}invalid_attackers"] = phase(
                    f"{ATTACKERS} clients, invalid 1 MB bodies", attacker_invalid
                )
            if not GRANTS or "grants" not in PHASES:
                continue

            held = issue_grants()
            out[f"{tag_}grant_attackers"] = phase(
                f"{ATTACKERS} clients of a principal with {held} grants", attacker_list
            )

    out["victim"] = rows
    columns = ["phase", "requests", "p50_ms", "p95_ms", "p99_ms", "error_rate"]
    print(table(rows, columns))
    for row in rows:
        if row.get("split"):
            print(f"{row['phase']}: {json.dumps(row['split'])}")
    for key in [k for k in out if k.endswith("_attackers")]:
        row = out.get(key)
        if row:
            print(
                f"{key}: {row['requests']} requests ({row['rps']}/s answered), "
                f"p50 {row['p50_ms']} ms, "
                f"errors {row['errors']}, their client's CPU {row['client_cpu_s']} s, "
                f"server per request {row.get('server_ms')}"
            )
    print("grants:", out.get("grants_issued"))
    save("tenant_isolation", out)
    return out


if __name__ == "__main__":
    main()
