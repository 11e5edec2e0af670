"""A history checker under faults (issue 45, item 6). Concurrent clients create, read, update
(compare-and-set on `expected_revision`) and delete records, capture candidates and review them
(promote or drop; two clients may race for one), and recall, against gunicorn and a Celery worker,
while a fault schedule kills the worker (SIGKILL, then a new one), crashes and restarts
PostgreSQL (`pg_ctl stop -m immediate`) and kills and restarts Redis. A reader whose grant covers
shared and one context (not the other) and an outsider with no grant read and recall too. Every
request and its answer is recorded, a retry with the request's own idempotency key included.
Afterwards, `check()` judges the whole history against the final database:

- every acknowledged create is present (or its tombstone, when a delete of it was sent);
- no lost update: two acknowledged updates of one record never both succeeded from the same
  `expected_revision`, and the final content is the last acknowledged writer's;
- an acknowledged delete left a tombstone;
- replays answer the original receipt (one receipt id per (op, key));
- every acknowledged capture's candidate exists; a promoted candidate became exactly one record
  (the one its receipt names), a dropped one none, and no candidate two; one acknowledged review
  per candidate;
- every read and recall returns content some write of that record sent, at the revision it wrote,
  only records the reader's grants cover, and no record whose tombstone was acknowledged before
  the request was sent.

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
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections import defaultdict
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from bench import (
    RESULTS,
    ROOT,
    free_port,
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

CREATE, UPDATE, DELETE = "memory.records.create", "memory.records.update", "memory.records.delete"
GET, RECALL = "memory.records.get", "memory.recall"
CAPTURE, REVIEW = "memory.capture", "memory.candidates.review"


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
    candidate_id: str | None = None  # a capture's new candidate; the candidate a review decided
    action: str | None = None  # a review's decision: promote or drop
    # a recall's results: (record id, revision, content text; None for a tombstone)
    results: list[tuple[str, int, str | None]] | None = None

    @property
    def acked(self) -> bool:
        return self.status == 200


@dataclass
class Final:
    revision: int
    text: str | None
    deleted: bool
    placement: str = "shared"  # "shared" or "context:<context id>"
    candidate_id: str | None = None  # the candidate a review made it from


@dataclass
class Verdict:
    problems: list[str] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)

    @property
    def clean(self) -> bool:
        return not self.problems


Covers = Mapping[str, Callable[[Final], bool]]
NO_GRANT: Covers = {"outsider": lambda record: False}


def check(
    events: list[Event],
    final: dict[str, Final],
    candidates: dict[str, str] | None = None,
    covers: Covers = NO_GRANT,
) -> Verdict:
    """Judge `events` against the final records (`final`) and candidates' states (`candidates`,
    candidate id -> state; None: no captures to judge). `covers[client](record)`: whether that
    client's grants cover a record (a client not named covers everything)."""
    verdict = Verdict()
    out = verdict.problems
    acked = [e for e in events if e.acked]
    verdict.counts = {
        "requests": len(events),
        "acknowledged": len(acked),
        "unanswered": sum(e.status is None for e in events),
        "records": len(final),
        "promoted": len(
            {e.candidate_id for e in acked if e.op == REVIEW and e.action == "promote"}
        ),
        "dropped": len({e.candidate_id for e in acked if e.op == REVIEW and e.action == "drop"}),
        "recalls": sum(e.op == RECALL and e.acked for e in events),
        "recalled": sum(len(e.results or []) for e in acked if e.op == RECALL),
    }
    # replays answer the original receipt
    receipts: dict[tuple[str, str], set[str]] = defaultdict(set)
    for e in acked:
        if e.key is not None and e.receipt_id is not None:
            receipts[(e.op, e.key)].add(e.receipt_id)
    for (op, key), ids in sorted(receipts.items()):
        if len(ids) > 1:
            out.append(f"{op} {key}: replays answered {len(ids)} different receipts")
    # what each record's writes sent: revision -> candidate texts (acked or in doubt); a promoted
    # record's first revision is its candidate's captured text
    captured = {e.candidate_id: e.text for e in events if e.op == CAPTURE and e.candidate_id}
    written: dict[str, dict[int, set[str]]] = defaultdict(lambda: defaultdict(set))
    deletes_sent: set[str] = set()
    for e in events:
        if e.record_id is None or e.status not in (200, None):
            continue
        if e.op == CREATE and e.text is not None:
            written[e.record_id][1].add(e.text)
        elif e.op == UPDATE and e.expected_revision is not None:
            written[e.record_id][e.expected_revision + 1].add(e.text or "")
        elif e.op == DELETE:
            deletes_sent.add(e.record_id)
    for record_id, got in final.items():
        if got.candidate_id in captured:
            written[record_id][1].add(captured[got.candidate_id] or "")
    # when each record's tombstone was first acknowledged (the answer's arrival)
    tombstoned_at: dict[str, float] = {}
    for e in acked:
        if e.op == DELETE and e.record_id is not None:
            tombstoned_at[e.record_id] = min(e.t1, tombstoned_at.get(e.record_id, e.t1))
    # every acknowledged create is there (or its tombstone, when a delete was sent)
    for e in acked:
        if e.op == CREATE and e.record_id is not None and e.record_id not in final:
            out.append(f"{e.record_id}: acknowledged create is missing")
    for record_id, got in sorted(final.items()):
        if got.deleted and record_id not in deletes_sent and record_id in written:
            out.append(f"{record_id}: deleted, but no delete of it was sent")
    # no lost update: one acknowledged success per (record, expected_revision)
    winners: dict[tuple[str, int], list[Event]] = defaultdict(list)
    for e in acked:
        if e.op in (UPDATE, DELETE) and e.record_id:
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
        updates = [e for e in acked if e.op == UPDATE and e.record_id == record_id]
        if updates and not got.deleted:
            last = max(updates, key=lambda e: e.expected_revision or 0)
            after = (last.expected_revision or 0) + 1
            if got.revision < after:
                out.append(f"{record_id}: revision {got.revision} < acknowledged {after}")
            elif got.revision == after and got.text != last.text:
                out.append(f"{record_id}: final content is not the last acknowledged update's")
        if record_id in tombstoned_at and not got.deleted:
            out.append(f"{record_id}: acknowledged delete left no tombstone")
    if candidates is not None:
        _check_captures(acked, final, candidates, out)
    # reads and recalls: covered by the reader's grants, content some write sent, and nothing
    # after its tombstone was acknowledged
    for e in events:
        if not e.acked:
            continue
        if e.op == GET:
            seen = [(e.record_id or "", e.read_revision or 0, e.read_text)]
            verb = "read"
        elif e.op == RECALL:
            seen, verb = list(e.results or []), "recalled"
        else:
            continue
        for record_id, revision, text in seen:
            got = final.get(record_id)
            cover = covers.get(e.client)
            if cover is not None and (got is None or not cover(got)):
                out.append(f"{record_id}: {verb} by {e.client}, whose grants do not cover it")
                continue
            if record_id in tombstoned_at and e.t0 > tombstoned_at[record_id]:
                out.append(f"{record_id}: {verb} after its tombstone was acknowledged")
            elif text is None:
                if verb == "recalled":
                    out.append(f"{record_id}: a recall returned its tombstone")
            elif text not in written.get(record_id, {}).get(revision, set()):
                out.append(f"{record_id}: {verb} revision {revision} with content no write sent")
    return verdict


def _check_captures(
    acked: list[Event], final: dict[str, Final], candidates: dict[str, str], out: list[str]
) -> None:
    """Every acknowledged capture's candidate exists; a candidate becomes at most one record (the
    mix promotes, never fragments), exactly one when a promote of it was acknowledged (the
    record its receipt names) or its state is promoted, none when it was dropped."""
    made: dict[str, list[str]] = defaultdict(list)
    for record_id, got in final.items():
        if got.candidate_id is not None:
            made[got.candidate_id].append(record_id)
    decided: dict[str, set[tuple[str | None, str | None]]] = defaultdict(set)
    for e in acked:
        if e.op == CAPTURE and e.candidate_id is not None and e.candidate_id not in candidates:
            out.append(f"{e.candidate_id}: acknowledged capture is missing")
        if e.op == REVIEW and e.candidate_id is not None:
            decided[e.candidate_id].add((e.action, e.key))
            records = made.get(e.candidate_id, [])
            if e.action == "promote" and e.record_id not in records:
                out.append(
                    f"{e.candidate_id}: promoted, but the record its receipt names is not its"
                )
            if e.action == "drop" and records:
                out.append(f"{e.candidate_id}: dropped, but became {len(records)} record(s)")
    for candidate_id, ways in sorted(decided.items()):
        if len(ways) > 1:
            out.append(f"{candidate_id}: {len(ways)} acknowledged reviews")
        (action, _), *_ = sorted(ways, key=str)
        expected = {"promote": "promoted", "drop": "dropped"}.get(action or "")
        if candidates.get(candidate_id) != expected:
            out.append(
                f"{candidate_id}: acknowledged {action}, but its state is {candidates.get(candidate_id)}"
            )
    for candidate_id in sorted(set(candidates) | set(made)):
        records, state = made.get(candidate_id, []), candidates.get(candidate_id)
        if len(records) > 1:
            out.append(f"{candidate_id}: became {len(records)} records")
        elif state == "promoted" and not records:
            out.append(f"{candidate_id}: promoted, but no record was made")
        elif state != "promoted" and records:
            out.append(f"{candidate_id}: {state}, but became a record")


# --- the run -----------------------------------------------------------------------------------

SHARED = {"scope": "shared"}
OPEN = {"scope": "context", "context_id": "c-open"}
SECRET = {"scope": "context", "context_id": "c-secret"}
PLACEMENTS = (SHARED, OPEN, SECRET)
QUERIES = ("history note", "captured note", "update", "note update")
# What each non-admin client's grants cover: the reader holds records_read and recall over
# shared and c-open (not c-secret); the outsider holds no grant.
COVERS: Covers = {
    "outsider": lambda record: False,
    "reader": lambda record: record.placement in ("shared", "context:c-open"),
}


def free(port: int) -> int:
    from bench._pgcluster import port_free

    return port if port_free(port) else free_port()


class Redis:
    def __init__(self, port: int) -> None:
        self.port = free(port)
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
    def __init__(self, url: str, space_id: str, tokens: dict[str, str]) -> None:
        import httpx

        self.url, self.space_id, self.tokens = url, space_id, tokens
        self.events: list[Event] = []
        self.lock = threading.Lock()
        self.records: list[str] = []
        self.pending: list[str] = []  # captured candidates no review of which was answered
        self.stop = threading.Event()
        self.httpx = httpx

    def send(self, who: str, op: str, body: dict, event: Event) -> dict | None:
        """One attempt as `who` (a client's token: the admin's, the reader's or the outsider's);
        recorded. Returns the answer's JSON on 200."""
        token = self.tokens.get(who, self.tokens["admin"])
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
            answer = self.send(who, op, body, event)
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
                known, pending = list(self.records), list(self.pending)
            if choice < 0.2 or not known:
                self.create(who, key, f"u{n}", rng.choice(PLACEMENTS))
            elif choice < 0.32:
                self.capture(who, key, f"u{n}", rng.choice(PLACEMENTS))
            elif choice < 0.44:
                if pending:  # two clients may pick one candidate: one review wins
                    action = "promote" if rng.random() < 0.6 else "drop"
                    self.review(who, key, rng.choice(pending), action)
            elif choice < 0.52:
                self.recall(who, f"u{rng.randrange(CLIENTS)}", rng.choice(QUERIES))
            else:
                self.change(who, key, rng, rng.choice(known))

    def create(self, who: str, key: str, subject: str, placement: dict) -> None:
        text = f"{key} history note"
        body = {"space_id": self.space_id, "subject_id": subject, "kind": "note",
                "content": {"text": text}, "placement": placement,
                "idempotency_key": key}  # fmt: skip
        answer, attempts = self.until_answered(who, CREATE, body, text=text)
        if answer is not None:
            record_id = answer["receipt"]["refs"][0]["id"]
            with self.lock:
                for attempt in attempts:  # the key's attempts all wrote this record
                    attempt.record_id = record_id
                self.records.append(record_id)

    def capture(self, who: str, key: str, subject: str, placement: dict) -> None:
        text = f"{key} captured note"
        body = {"space_id": self.space_id, "subject_id": subject,
                "capture_scope": {"placement": placement},
                "items": [{"content": {"text": text}}], "idempotency_key": key}  # fmt: skip
        answer, attempts = self.until_answered(who, CAPTURE, body, text=text)
        if answer is not None:
            candidate_id = answer["receipt"]["refs"][0]["id"]
            with self.lock:
                for attempt in attempts:
                    attempt.candidate_id = candidate_id
                self.pending.append(candidate_id)

    def review(self, who: str, key: str, candidate_id: str, action: str) -> None:
        body = {"space_id": self.space_id, "candidate_id": candidate_id,
                "decision": {"action": action}, "idempotency_key": key}  # fmt: skip
        answer, attempts = self.until_answered(
            who, REVIEW, body, candidate_id=candidate_id, action=action
        )
        if answer is None and attempts[-1].status != 409:
            return  # in doubt: left pending here (another client may review it: one wins)
        with self.lock:
            if candidate_id in self.pending:
                self.pending.remove(candidate_id)
            refs = answer["receipt"]["refs"] if answer is not None else []
            if action == "promote" and len(refs) > 1:
                for attempt in attempts:
                    attempt.record_id = refs[1]["id"]
                self.records.append(refs[1]["id"])

    def change(self, who: str, key: str, rng: random.Random, record_id: str) -> None:
        """Read a record, then (mostly) update or (rarely) delete it from the revision read."""
        read = self.read(who, record_id)
        if read is None or rng.random() < 0.3:
            return
        revision, _ = read
        if rng.random() < 0.08:
            body = {"space_id": self.space_id, "record_id": record_id,
                    "expected_revision": revision, "idempotency_key": key}  # fmt: skip
            self.until_answered(who, DELETE, body, record_id=record_id,
                                expected_revision=revision)  # fmt: skip
            return
        text = f"{key} update"
        body = {"space_id": self.space_id, "record_id": record_id,
                "expected_revision": revision, "content": {"text": text},
                "idempotency_key": key}  # fmt: skip
        self.until_answered(who, UPDATE, body, record_id=record_id,
                            expected_revision=revision, text=text)  # fmt: skip

    def read(self, who: str, record_id: str) -> tuple[int, str] | None:
        event = Event(client=who, op=GET, key=None, record_id=record_id)
        answer = self.send(who, GET, {"space_id": self.space_id, "record_id": record_id}, event)
        if answer is None:
            return None
        record = answer["record"]
        if "tombstone" in record:
            event.status = 410  # a tombstone: not a content read
            return None
        event.read_revision = record["revision"]
        event.read_text = record["content"]["text"]
        return event.read_revision, event.read_text

    def recall(self, who: str, subject: str, query: str) -> None:
        event = Event(client=who, op=RECALL, key=None)
        body = {"space_id": self.space_id, "subject_id": subject, "query": {"text": query}}
        answer = self.send(who, RECALL, body, event)
        if answer is not None:
            event.results = [
                (
                    hit["record"]["record_id"],
                    hit["record"]["revision"],
                    None if "tombstone" in hit["record"] else hit["record"]["content"].get("text"),
                )
                for hit in answer["recall"]["results"]
            ]

    def snoop(self) -> None:
        """The reader (grants over shared and c-open only) and the outsider (no grant) read
        records and recall subjects."""
        rng = random.Random(99)
        while not self.stop.is_set():
            with self.lock:
                known = list(self.records)
            if known:
                record_id = rng.choice(known)
                self.read("outsider", record_id)
                self.read("reader", record_id)
            subject, query = f"u{rng.randrange(CLIENTS)}", rng.choice(QUERIES)
            self.recall("reader", subject, query)
            if rng.random() < 0.2:
                self.recall("outsider", subject, query)
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


def final_state(space_id: str) -> tuple[dict[str, Final], dict[str, str]]:
    """The space's records and its candidates' states, read after the run."""
    from django.db import close_old_connections

    from memory.models import Candidate, Record

    close_old_connections()
    records = {
        r.record_id: Final(
            r.revision,
            (r.content or {}).get("text"),
            r.deleted_at is not None,
            placement="shared"
            if r.placement_scope == "shared"
            else f"context:{r.placement_context_id}",
            candidate_id=r.prov_candidate_id,
        )
        for r in Record.objects.filter(space_id=space_id)
    }
    candidates = dict(
        Candidate.objects.filter(space_id=space_id).values_list("candidate_id", "state")
    )
    return records, candidates


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
    broker = f"redis://127.0.0.1:{redis.port}/0"
    extra = {
        "CELERY_BROKER_URL": broker,
        "SPOKE_MEMORY_CACHE_URL": f"redis://127.0.0.1:{redis.port}/1",
        "DATABASE_URL": pg.url(DBNAME),
        "SPOKE_MEMORY_SWEEP_INTERVAL_S": "5",
    }
    # this (driver) process too uses only the run's own PostgreSQL and Redis
    os.environ.update(extra)
    use_database(pg.url(DBNAME))
    setup_django()
    from memory.models import Principal
    from memory.ops.base import call
    from tests import factories

    s = seed(f"history-{int(time.time())}", subjects=CLIENTS)
    _, outsider = factories.make_principal("history-outsider")
    reader, reader_token = factories.make_principal("history-reader")
    call(
        Principal.objects.get(principal_id=s.principal_id),
        "memory.grants.grant",
        {"space_id": s.space_id, "grantee_principal_id": reader.principal_id,
         "capabilities": ["records_read", "recall"], "shared_access": True,
         "context_ids": [OPEN["context_id"]]},
    )  # fmt: skip
    worker = Worker(server_env(**extra))
    worker.start()
    port = free(WEB_PORT)
    web = start_gunicorn(port, workers=2, threads=2, app="spokememory.wsgi:application",
                         output=RESULTS / "history-web.log", **extra)  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    tokens = {"admin": s.token, "reader": reader_token, "outsider": outsider}
    clients = Clients(url, s.space_id, tokens)
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
        records, candidates = final_state(s.space_id)
        verdict = check(clients.events, records, candidates, COVERS)
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
