"""A history checker under faults (issue 45, item 6). Concurrent clients create, read, update
(compare-and-set on `expected_revision`), delete and recall records against gunicorn and a
Celery worker while a fault schedule kills the worker (SIGKILL, then a new one), crashes and
restarts PostgreSQL (`pg_ctl stop -m immediate`) and kills and restarts Redis. Every request and
its answer is recorded, a retry with the request's own idempotency key included. Afterwards,
`check()` judges the whole history against the final database:

- every acknowledged create is present (or its tombstone, when a delete of it was sent);
- no lost update: two acknowledged updates of one record never both succeeded from the same
  `expected_revision`, and the final content is the last acknowledged writer's;
- an acknowledged delete left a tombstone;
- replays answer the original receipt (one receipt id per (op, key));
- every read returns content some write of that record sent, at the revision it wrote;
- a principal with no grant never reads a record (every read by the outsider is 404).

Never the machine's servers: it starts its own PostgreSQL (bench/_pgcluster.py, initdb in a temp
dir, port HISTORY_PG_PORT) and its own Redis (HISTORY_REDIS_PORT), both removed at the end.

    python -m bench history     # HISTORY_S (60), HISTORY_CLIENTS (4), HISTORY_FAULT_EVERY_S (8)
"""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import defaultdict
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from bench import (
    ROOT,
    knob,
    save,
    seed,
    server_env,
    setup_django,
    start_gunicorn,
    stop,
    table,
    use_database,
)

DURATION_S = knob("HISTORY_S", 60.0)
CLIENTS = knob("HISTORY_CLIENTS", 4)
FAULT_EVERY_S = knob("HISTORY_FAULT_EVERY_S", 8.0)
RETRY_S = knob("HISTORY_RETRY_S", 60.0)
PG_PORT = knob("HISTORY_PG_PORT", 8215)
REDIS_PORT = knob("HISTORY_REDIS_PORT", 8216)
WEB_PORT = knob("HISTORY_WEB_PORT", 8217)
DBNAME = "spoke_metrics_history"


# --- the history and its checker ---------------------------------------------------------------


@dataclass
class Event:
    """One request and its answer. `status` None: no answer (transport error or timeout)."""

    client: str
    op: str
    key: str | None
    record_id: str | None = None
    expected_revision: int | None = None
    text: str | None = None
    status: int | None = None
    receipt_id: str | None = None
    read_revision: int | None = None
    read_text: str | None = None
    t0: float = 0.0
    t1: float = 0.0

    @property
    def acked(self) -> bool:
        return self.status == 200


@dataclass
class Final:
    revision: int
    text: str | None
    deleted: bool


@dataclass
class Verdict:
    problems: list[str] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)

    @property
    def clean(self) -> bool:
        return not self.problems


def check(events: list[Event], final: dict[str, Final]) -> Verdict:
    verdict = Verdict()
    out = verdict.problems
    acked = [e for e in events if e.acked]
    verdict.counts = {
        "requests": len(events),
        "acknowledged": len(acked),
        "unanswered": sum(e.status is None for e in events),
        "records": len(final),
    }
    # replays answer the original receipt
    receipts: dict[tuple[str, str], set[str]] = defaultdict(set)
    for e in acked:
        if e.key is not None and e.receipt_id is not None:
            receipts[(e.op, e.key)].add(e.receipt_id)
    for (op, key), ids in sorted(receipts.items()):
        if len(ids) > 1:
            out.append(f"{op} {key}: replays answered {len(ids)} different receipts")
    # what each record's writes sent: revision -> candidate texts (acked or in doubt)
    written: dict[str, dict[int, set[str]]] = defaultdict(lambda: defaultdict(set))
    deletes_sent: set[str] = set()
    for e in events:
        if e.record_id is None or e.status not in (200, None):
            continue
        if e.op == "memory.records.create" and e.text is not None:
            written[e.record_id][1].add(e.text)
        elif e.op == "memory.records.update" and e.expected_revision is not None:
            written[e.record_id][e.expected_revision + 1].add(e.text or "")
        elif e.op == "memory.records.delete":
            deletes_sent.add(e.record_id)
    # every acknowledged create is there (or its tombstone, when a delete was sent)
    for e in acked:
        if e.op == "memory.records.create" and e.record_id is not None:
            got = final.get(e.record_id)
            if got is None:
                out.append(f"{e.record_id}: acknowledged create is missing")
            elif got.deleted and e.record_id not in deletes_sent:
                out.append(f"{e.record_id}: deleted, but no delete of it was sent")
    # no lost update: one acknowledged success per (record, expected_revision)
    winners: dict[tuple[str, int], list[Event]] = defaultdict(list)
    for e in acked:
        if e.op in ("memory.records.update", "memory.records.delete") and e.record_id:
            winners[(e.record_id, e.expected_revision or 0)].append(e)
    for (record_id, expected), won in sorted(winners.items()):
        distinct = {(w.op, w.key) for w in won}  # a replay of one request is one success
        if len(distinct) > 1:
            out.append(
                f"{record_id}: lost update: {len(distinct)} acknowledged writes from revision"
                f" {expected}"
            )
    # the final content is the last acknowledged writer's (when nothing in doubt came later)
    for record_id, got in sorted(final.items()):
        updates = [e for e in acked if e.op == "memory.records.update" and e.record_id == record_id]
        if updates and not got.deleted:
            last = max(updates, key=lambda e: e.expected_revision or 0)
            after = (last.expected_revision or 0) + 1
            if got.revision < after:
                out.append(f"{record_id}: revision {got.revision} < acknowledged {after}")
            elif got.revision == after and got.text != last.text:
                out.append(f"{record_id}: final content is not the last acknowledged update's")
        if any(e.op == "memory.records.delete" and e.record_id == record_id for e in acked):
            if not got.deleted:
                out.append(f"{record_id}: acknowledged delete left no tombstone")
    # every read returns what some write of that revision sent; the outsider reads nothing
    for e in events:
        if e.op != "memory.records.get" or e.status != 200:
            continue
        if e.client == "outsider":
            out.append(f"{e.record_id}: read by a principal without a grant")
            continue
        sent = written.get(e.record_id or "", {}).get(e.read_revision or 0, set())
        if e.read_text not in sent:
            out.append(f"{e.record_id}: read revision {e.read_revision} with content no write sent")
    return verdict


# --- the run -----------------------------------------------------------------------------------


class Redis:
    def __init__(self, port: int) -> None:
        self.port = port
        self.dir = Path(tempfile.mkdtemp(prefix="spoke-history-redis-"))
        self.proc: subprocess.Popen | None = None

    def start(self) -> None:
        self.proc = subprocess.Popen(  # noqa: S603 - a fixed binary and arguments
            [
                shutil.which("redis-server") or "redis-server",
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                str(self.dir),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        deadline = time.monotonic() + 20
        import socket

        while time.monotonic() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5):
                    return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("redis did not start")

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(10)

    def close(self) -> None:
        self.kill()
        shutil.rmtree(self.dir, ignore_errors=True)


class Worker:
    def __init__(self, env: dict[str, str]) -> None:
        self.env = env
        self.proc: subprocess.Popen | None = None

    def start(self) -> None:
        self.proc = subprocess.Popen(  # noqa: S603 - our own interpreter and fixed arguments
            [sys.executable, "-m", "celery", "-A", "spokememory", "worker", "--pool=solo",
             "--loglevel=ERROR", "--without-heartbeat", "--without-gossip", "--without-mingle",
             "-B", "-s", str(Path(tempfile.gettempdir()) / f"spoke-history-beat-{os.getpid()}")],
            cwd=ROOT, env=self.env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            start_new_session=True,
        )  # fmt: skip

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(10)


class Clients:
    def __init__(self, url: str, space_id: str, token: str, outsider: str) -> None:
        import httpx

        self.url, self.space_id = url, space_id
        self.token, self.outsider = token, outsider
        self.events: list[Event] = []
        self.lock = threading.Lock()
        self.records: list[str] = []
        self.stop = threading.Event()
        self.httpx = httpx

    def send(self, who: str, token: str, op: str, body: dict, event: Event) -> dict | None:
        """One attempt; recorded. Returns the answer's JSON on 200."""
        event.t0 = time.monotonic()
        try:
            response = self.httpx.post(
                f"{self.url}/v1/ops/{op}",
                content=json.dumps(body),
                headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
                timeout=10.0,
            )
            event.status = response.status_code
            answer = response.json() if response.status_code == 200 else None
        except (self.httpx.HTTPError, ValueError):
            answer = None
        event.t1 = time.monotonic()
        if answer is not None and "receipt" in answer:
            event.receipt_id = answer["receipt"]["receipt_id"]
        with self.lock:
            self.events.append(event)
        return answer

    def until_answered(
        self, who: str, op: str, body: dict, **fields: Any
    ) -> tuple[dict | None, list[Event]]:
        """Send, and retry with the same key until answered 2xx or a 4xx, for RETRY_S.
        Returns the answer and every attempt's event."""
        deadline = time.monotonic() + RETRY_S
        attempts: list[Event] = []
        while True:
            event = Event(client=who, op=op, key=body.get("idempotency_key"), **fields)
            attempts.append(event)
            answer = self.send(who, self.token, op, body, event)
            if answer is not None or (event.status is not None and 400 <= event.status < 500):
                return answer, attempts
            if time.monotonic() > deadline:
                return None, attempts
            time.sleep(random.uniform(0.05, 0.4))  # noqa: S311

    def run(self, n: int) -> None:
        rng = random.Random(n)
        who = f"c{n}"
        seq = 0
        while not self.stop.is_set():
            seq += 1
            key = f"{who}-{seq}"
            choice = rng.random()
            with self.lock:
                known = list(self.records)
            if choice < 0.3 or not known:
                text = f"{key} history note"
                body = {"space_id": self.space_id, "subject_id": f"u{n}", "kind": "note",
                        "content": {"text": text}, "placement": {"scope": "shared"},
                        "idempotency_key": key}  # fmt: skip
                answer, attempts = self.until_answered(
                    who, "memory.records.create", body, text=text
                )
                if answer is not None:
                    record_id = answer["receipt"]["refs"][0]["id"]
                    with self.lock:
                        for attempt in attempts:  # the key's attempts all wrote this record
                            attempt.record_id = record_id
                        self.records.append(record_id)
                continue
            record_id = rng.choice(known)
            read = self.read(who, self.token, record_id)
            if read is None or rng.random() < 0.3:
                continue
            revision, _ = read
            if rng.random() < 0.08:
                body = {"space_id": self.space_id, "record_id": record_id,
                        "expected_revision": revision, "idempotency_key": key}  # fmt: skip
                self.until_answered(who, "memory.records.delete", body, record_id=record_id,
                                    expected_revision=revision)  # fmt: skip
                continue
            text = f"{key} update"
            body = {"space_id": self.space_id, "record_id": record_id,
                    "expected_revision": revision, "content": {"text": text},
                    "idempotency_key": key}  # fmt: skip
            self.until_answered(who, "memory.records.update", body, record_id=record_id,
                                expected_revision=revision, text=text)  # fmt: skip

    def read(self, who: str, token: str, record_id: str) -> tuple[int, str] | None:
        event = Event(client=who, op="memory.records.get", key=None, record_id=record_id)
        answer = self.send(who, token, "memory.records.get",
                           {"space_id": self.space_id, "record_id": record_id}, event)  # fmt: skip
        if answer is None:
            return None
        record = answer["record"]
        if "tombstone" in record:
            event.status = 410  # a tombstone: not a content read
            return None
        event.read_revision = record["revision"]
        event.read_text = record["content"]["text"]
        return event.read_revision, event.read_text

    def snoop(self) -> None:
        rng = random.Random(99)
        while not self.stop.is_set():
            with self.lock:
                known = list(self.records)
            if known:
                self.read("outsider", self.outsider, rng.choice(known))
            time.sleep(0.05)


def faults(pg, redis: Redis, worker: Worker, stop: threading.Event, log: list[dict]) -> None:
    schedule = ("worker", "postgres", "redis")
    i = 0
    while not stop.wait(FAULT_EVERY_S):
        kind = schedule[i % len(schedule)]
        i += 1
        at = time.monotonic()
        if kind == "worker":
            worker.kill()
            worker.start()
        elif kind == "postgres":
            pg.stop("immediate")
            time.sleep(1.0)
            pg.start()
        else:
            redis.kill()
            time.sleep(1.0)
            redis.start()
        log.append({"fault": kind, "at": round(at, 3), "took_s": round(time.monotonic() - at, 2)})


def final_state(space_id: str) -> dict[str, Final]:
    from django.db import close_old_connections

    from memory.models import Record

    close_old_connections()
    return {
        r.record_id: Final(r.revision, (r.content or {}).get("text"), r.deleted_at is not None)
        for r in Record.objects.filter(space_id=space_id)
    }


def main() -> dict:
    from bench._pgcluster import Cluster

    redis = Redis(REDIS_PORT)
    redis.start()
    try:
        with Cluster(PG_PORT) as pg:
            return _run(pg, redis)
    finally:
        redis.close()


def _run(pg, redis: Redis) -> dict:
    use_database(pg.url(DBNAME))
    setup_django()
    from tests import factories

    s = seed(f"history-{int(time.time())}", subjects=CLIENTS)
    _, outsider = factories.make_principal("history-outsider")
    broker = f"redis://127.0.0.1:{REDIS_PORT}/0"
    extra = {
        "CELERY_BROKER_URL": broker,
        "SPOKE_MEMORY_CACHE_URL": f"redis://127.0.0.1:{REDIS_PORT}/1",
        "DATABASE_URL": pg.url(DBNAME),
        "SPOKE_MEMORY_SWEEP_INTERVAL_S": "5",
    }
    worker = Worker(server_env(**extra))
    worker.start()
    web = start_gunicorn(
        WEB_PORT, workers=2, threads=2, app="spokememory.wsgi:application", **extra
    )
    clients = Clients(f"http://127.0.0.1:{WEB_PORT}", s.space_id, s.token, outsider)
    stop_faults = threading.Event()
    fault_log: list[dict] = []
    threads = [threading.Thread(target=clients.run, args=(i,), daemon=True) for i in range(CLIENTS)]
    threads.append(threading.Thread(target=clients.snoop, daemon=True))
    injector = threading.Thread(
        target=faults, args=(pg, redis, worker, stop_faults, fault_log), daemon=True
    )
    try:
        for t in threads:
            t.start()
        injector.start()
        time.sleep(DURATION_S)
        stop_faults.set()
        injector.join(60)
        clients.stop.set()
        for t in threads:
            t.join(RETRY_S + 30)
        verdict = check(clients.events, final_state(s.space_id))
    finally:
        stop(web)
        worker.kill()
    out = {
        "duration_s": DURATION_S,
        "clients": CLIENTS,
        "faults": fault_log,
        "counts": verdict.counts,
        "problems": verdict.problems[:50],
        "clean": verdict.clean,
    }
    print(table([verdict.counts | {"faults": len(fault_log), "problems": len(verdict.problems)}],
                [*verdict.counts, "faults", "problems"]))  # fmt: skip
    for problem in verdict.problems[:50]:
        print("PROBLEM", problem)
    save("history", out)
    if not verdict.clean:
        raise SystemExit(1)
    return out


if __name__ == "__main__":
    main()


__all__ = ["Event", "Final", "Verdict", "asdict", "check"]
