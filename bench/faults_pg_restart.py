"""Fault: PostgreSQL restarts under load (docs/reliability.md). Never the machine's server: the
script makes its own throwaway cluster (bench/_pgcluster.py: initdb in a temp dir, port 5499
or a free one, fsync on), migrates the provider into it and starts gunicorn against it.

FAULT_CLIENTS threads, each with its own subject, loop over acknowledged writes with unique
idempotency keys: memory.records.create, memory.capture (one item), memory.candidates.review
(promote that candidate). A request that is not acknowledged (2xx) is retried with the SAME key
(bounded: FAULT_RETRY_S per request). Meanwhile PostgreSQL is stopped twice, `-m immediate` (a
crash: recovery runs at the next start) and `-m fast`, kept down FAULT_DOWN_S, and started.
Checked: every error answer is a clean wire error (JSON envelope, no HTML, no traceback, no
content; 503 `unavailable` with Retry-After while the database is away, never 500), the service
recovers by itself (no gunicorn restart; time to the first success after each start), and the
audit: every acknowledged write is in the database exactly once with all its parts, and nothing
else is.

    python -m bench faults_pg_restart     # FAULT_CLIENTS (8), FAULT_DOWN_S (3), FAULT_STEADY_S (5)"""

from __future__ import annotations

import random
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from dataclasses import dataclass, field

import httpx

from bench import (
    RESULTS,
    ROOT,
    free_port,
    knob,
    save,
    seed,
    setup_django,
    start_gunicorn,
    stop,
    table,
    use_database,
)
from bench._faults import audit_receipts, audit_space_revision, client_for, post_op, unclean
from bench._pgcluster import Cluster

CLIENTS = knob("FAULT_CLIENTS", 8)
DOWN_S = knob("FAULT_DOWN_S", 3.0)
STEADY_S = knob("FAULT_STEADY_S", 5.0)
RETRY_S = knob("FAULT_RETRY_S", 60.0)
WORKERS = knob("FAULT_WORKERS", 3)
THREADS = knob("FAULT_THREADS", 2)
PG_PORT = knob("FAULT_PG_PORT", 5499)
SECRET = "pgfault-content-marker"
MODES = ("immediate", "fast")
DBNAME = "spoke_pgfault"
SERVER_LOG = RESULTS / "faults_pg_restart.server.log"


@dataclass
class Attempt:
    sent: float
    received: float
    op: str
    key: str
    status: int | str  # HTTP status, or the transport error's type
    problem: str | None = None
    outcome_unknown: bool = False


@dataclass
class Load:
    url: str
    token: str
    space_id: str
    stop: threading.Event = field(default_factory=threading.Event)  # finish the cycle, then end
    abort: threading.Event = field(default_factory=threading.Event)  # Ctrl-C: end now
    attempts: list[Attempt] = field(default_factory=list)
    acked: dict[tuple[str, str], dict] = field(default_factory=dict)  # (op, key) -> receipt
    gave_up: list[tuple[str, str]] = field(default_factory=list)
    crashed: list[str] = field(default_factory=list)  # clients that died of an exception
    lock: threading.Lock = field(default_factory=threading.Lock)

    def until_acked(self, client: httpx.Client, op: str, body: dict) -> dict | None:
        """Post until a 2xx acknowledgement, with the same key every time; None if it never came."""
        key = body["idempotency_key"]
        deadline = time.monotonic() + RETRY_S
        pause = 0.05
        while time.monotonic() < deadline and not self.abort.is_set():
            sent = time.monotonic()
            try:
                r = post_op(client, op, body)
            except httpx.HTTPError as exc:
                self.note(
                    Attempt(sent, time.monotonic(), op, key, type(exc).__name__, "transport error")
                )
            else:
                attempt = Attempt(sent, time.monotonic(), op, key, r.status_code)
                if 200 <= r.status_code < 300:
                    receipt = r.json()["receipt"]  # a 2xx that is not a receipt crashes the client
                    if SECRET in r.text or receipt["status"] != "committed":
                        attempt.problem = "content echoed or not committed"
                    self.note(attempt)
                    with self.lock:
                        self.acked[(op, key)] = receipt
                    return receipt
                attempt.problem = unclean(r, SECRET)
                if attempt.problem is None and r.status_code == 500:
                    attempt.problem = "internal_error, not unavailable"
                if attempt.problem is None and r.status_code == 503:
                    attempt.outcome_unknown = (r.json()["error"].get("details") or {}).get(
                        "outcome"
                    ) == "unknown"
                self.note(attempt)
            time.sleep(pause * random.uniform(0.5, 1.0))
            pause = min(pause * 2, 0.5)
        with self.lock:
            self.gave_up.append((op, key))
        return None

    def note(self, attempt: Attempt) -> None:
        with self.lock:
            self.attempts.append(attempt)

    def client(self, i: int) -> None:
        try:
            self.cycles(i)
        except Exception as exc:  # noqa: BLE001 - reported as a problem, not lost with the thread
            with self.lock:
                self.crashed.append(f"client {i}: {type(exc).__name__}")

    def cycles(self, i: int) -> None:
        """One client: create a record, capture an item, review (promote) the candidate; again."""
        http = client_for(self.url, self.token, timeout=10.0)
        subject = f"u{i}"
        n = 0
        while not self.stop.is_set():
            key = f"c{i}-n{n}"
            text = {"text": f"{SECRET} {key} note about the weather on day {n}"}
            self.until_acked(
                http,
                "memory.records.create",
                {
                    "space_id": self.space_id,
                    "subject_id": subject,
                    "kind": "note",
                    "content": text,
                    "placement": {"scope": "shared"},
                    "idempotency_key": f"{key}-create",
                },
            )
            captured = self.until_acked(
                http,
                "memory.capture",
                {
                    "space_id": self.space_id,
                    "subject_id": subject,
                    "capture_scope": {"placement": {"scope": "shared"}},
                    "items": [{"content": {"text": f"{SECRET} {key} I prefer tea in the morning"}}],
                    "idempotency_key": f"{key}-capture",
                },
            )
            if captured is not None:
                self.until_acked(
                    http,
                    "memory.candidates.review",
                    {
                        "space_id": self.space_id,
                        "candidate_id": captured["refs"][0]["id"],
                        "decision": {"action": "promote"},
                        "idempotency_key": f"{key}-review",
                    },
                )
            n += 1
        http.close()

    def first_success_after(self, t: float) -> float | None:
        with self.lock:
            times = [
                a.received
                for a in self.attempts
                if a.sent >= t and isinstance(a.status, int) and a.status < 300
            ]
        return min(times) if times else None

    def last_success_before(self, t: float) -> float | None:
        with self.lock:
            times = [
                a.received
                for a in self.attempts
                if a.received <= t and isinstance(a.status, int) and a.status < 300
            ]
        return max(times) if times else None


def wait_for_success(load: Load, t: float, timeout: float = 60.0) -> float | None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = load.first_success_after(t)
        if found is not None:
            return found
        time.sleep(0.05)
    return None


def restart(pg: Cluster, load: Load, mode: str) -> dict:
    """Stop PostgreSQL (`mode`), keep it down DOWN_S, start it; then wait for the service."""
    began = time.monotonic()
    stop_s = pg.stop(mode)
    stopped = time.monotonic()
    time.sleep(DOWN_S)
    starting = time.monotonic()
    start_s = pg.start()
    ready = time.monotonic()
    first_ok = wait_for_success(load, ready)
    last_ok = load.last_success_before(began)
    return {
        "mode": mode,
        "began": began,
        "stopped": stopped,
        "starting": starting,
        "ready": ready,
        "stop_s": round(stop_s, 2),
        "start_s": round(start_s, 2),
        "down_s": round(ready - began, 2),
        "first_success_after_ready_s": None if first_ok is None else round(first_ok - ready, 3),
        "client_gap_s": None
        if first_ok is None or last_ok is None
        else round(first_ok - last_ok, 2),
    }


def run_load(pg: Cluster, load: Load) -> list[dict]:
    threads = [threading.Thread(target=load.client, args=(i,), daemon=True) for i in range(CLIENTS)]
    for t in threads:
        t.start()
    restarts = []
    try:
        time.sleep(STEADY_S)
        for mode in MODES:
            restarts.append(restart(pg, load, mode))
            time.sleep(STEADY_S)
    except BaseException:
        load.abort.set()
        raise
    finally:
        load.stop.set()
        for t in threads:
            t.join(RETRY_S * 3 + 30)
    return restarts


def windows(load: Load, restarts: list[dict]) -> dict:
    """Status counts over the run and while PostgreSQL was away (sent once the stop began,
    answered before the start returned: stopping, stopped, crash recovery), and the successes
    while it was stopped outright (sent after the stop returned, answered before the start
    began), which must be none."""
    out = {"all": Counter(), "down": Counter(), "unknown_outcome": 0, "ok_while_stopped": 0}
    for a in load.attempts:
        ok = isinstance(a.status, int) and a.status < 300
        out["all"][str(a.status)] += 1
        out["unknown_outcome"] += a.outcome_unknown
        if any(r["began"] <= a.sent and a.received <= r["ready"] for r in restarts):
            out["down"][str(a.status)] += 1
        if ok and any(r["stopped"] <= a.sent and a.received <= r["starting"] for r in restarts):
            out["ok_while_stopped"] += 1
    return out


def audit(load: Load, principal_id: str, before: dict) -> list[str]:
    """Against the database: each acknowledged write exactly once, with every part of it, and
    nothing that was not acknowledged (or still in doubt) is there."""
    from memory.models import Candidate, Record, RecordRevision, Subject

    space_id = load.space_id
    acked = load.acked
    problems = audit_receipts(
        space_id, principal_id, {k: r["receipt_id"] for k, r in acked.items()}
    )
    problems += audit_space_revision(space_id, before["space_revision"], len(acked))
    records = {r.record_id: r for r in Record.objects.filter(space_id=space_id)}
    candidates = {c.candidate_id: c for c in Candidate.objects.filter(space_id=space_id)}
    history: dict[int, list[int]] = {}
    for record_pk, revision in RecordRevision.objects.filter(record__space_id=space_id).values_list(
        "record_id", "revision"
    ):
        history.setdefault(record_pk, []).append(revision)
    expected_records: set[str] = set()
    per_subject: Counter = Counter()
    for (op, key), receipt in acked.items():
        refs = receipt["refs"]
        client = key.split("-", 1)[0]
        per_subject[f"u{client[1:]}"] += 1
        if op == "memory.records.create":
            record = records.get(refs[0]["id"])
            expected_records.add(refs[0]["id"])
            if (
                record is None
                or key.removesuffix("-create") not in record.text
                or record.prov_source != "authored"
            ):
                problems.append(f"{key}: the record is missing or is not this request's")
        elif op == "memory.capture":
            candidate = candidates.get(refs[0]["id"])
            if (
                candidate is None
                or key.removesuffix("-capture") not in candidate.proposed["content"]["text"]
            ):
                problems.append(f"{key}: the candidate is missing or is not this request's")
        else:
            candidate = candidates.get(refs[0]["id"])
            record_ids = [r["id"] for r in refs[1:]]
            expected_records.update(record_ids)
            if (
                candidate is None
                or candidate.state != "promoted"
                or candidate.outcome["record_ids"] != record_ids
            ):
                problems.append(f"{key}: the candidate is not consumed by this review")
            if len(record_ids) != 1 or any(
                rid not in records or records[rid].prov_candidate_id != refs[0]["id"]
                for rid in record_ids
            ):
                problems.append(
                    f"{key}: the reviewed record is missing or is not from this candidate"
                )
    if set(records) != expected_records:
        problems.append(f"records: {len(records)} stored, {len(expected_records)} acknowledged")
    captured = {r["refs"][0]["id"] for (op, _), r in acked.items() if op == "memory.capture"}
    if set(candidates) != captured:
        problems.append(f"candidates: {len(candidates)} stored, {len(captured)} acknowledged")
    reviewed = sum(op == "memory.candidates.review" for op, _ in acked)
    consumed = sum(c.state != Candidate.PENDING for c in candidates.values())
    if consumed != reviewed:
        problems.append(f"consumed candidates: {consumed}, reviews acknowledged: {reviewed}")
    for record in records.values():
        if sorted(history.get(record.pk, [])) != list(range(1, record.revision + 1)):
            problems.append(
                f"{record.record_id}: revision rows do not match revision {record.revision}"
            )
    for subject_id, revision in Subject.objects.filter(space_id=space_id).values_list(
        "subject_id", "revision"
    ):
        if revision != before["subjects"][subject_id] + per_subject[subject_id]:
            problems.append(
                f"subject {subject_id}: revision {revision}, expected "
                f"{before['subjects'][subject_id] + per_subject[subject_id]}"
            )
    return problems


def report(out: dict) -> None:
    rows = [
        {
            "restart": f"-m {r['mode']}",
            **{
                k: r[k]
                for k in (
                    "stop_s",
                    "start_s",
                    "down_s",
                    "first_success_after_ready_s",
                    "client_gap_s",
                )
            },
        }
        for r in out["restarts"]
    ]
    print(
        table(
            rows,
            [
                "restart",
                "stop_s",
                "start_s",
                "down_s",
                "first_success_after_ready_s",
                "client_gap_s",
            ],
        )
    )
    print({k: v for k, v in out.items() if k != "restarts"})


def main() -> dict:
    import django.apps

    if django.apps.apps.ready:  # Django already set up by another bench in this process
        code = subprocess.run(
            [sys.executable, "-m", "bench", "faults_pg_restart"], cwd=ROOT
        ).returncode
        if code:
            raise RuntimeError(f"faults_pg_restart failed (exit {code})")
        return {}
    previous = signal.signal(signal.SIGTERM, _interrupt)
    try:
        with Cluster(PG_PORT) as pg:
            return _run(pg)
    finally:
        signal.signal(signal.SIGTERM, previous)


def _interrupt(signum, frame):
    raise KeyboardInterrupt  # let the finally blocks stop gunicorn and remove the cluster


def _run(pg: Cluster) -> dict:
    use_database(pg.url(DBNAME))
    setup_django()
    from django.db import connection

    from memory.models import Space, Subject

    s = seed(f"fault-pg-{int(time.time())}", subjects=CLIENTS)
    before = {
        "space_revision": Space.objects.get(space_id=s.space_id).revision,
        "subjects": dict(
            Subject.objects.filter(space_id=s.space_id).values_list("subject_id", "revision")
        ),
    }
    connection.close()
    port = free_port()
    # Django logs every 5xx (each 503 while the database is away): to a file, not the report.
    server = start_gunicorn(
        port, workers=WORKERS, threads=THREADS, log_level="critical", output=SERVER_LOG
    )
    started = time.monotonic()
    try:
        load = Load(f"http://127.0.0.1:{port}", s.token, s.space_id)
        restarts = run_load(pg, load)
        duration = time.monotonic() - started
        alive = server.poll() is None
    finally:
        stop(server)
    counts = windows(load, restarts)
    problems = [f"{a.op} {a.key}: {a.problem} ({a.status})" for a in load.attempts if a.problem]
    problems += [f"{op} {key}: never acknowledged" for op, key in load.gave_up]
    problems += load.crashed
    problems += [
        f"{r['mode']}: no success after the restart"
        for r in restarts
        if r["first_success_after_ready_s"] is None
    ]
    if not alive:
        problems.append("gunicorn exited")
    if counts["ok_while_stopped"]:
        problems.append(f"{counts['ok_while_stopped']} successes while PostgreSQL was stopped")
    problems += audit(load, s.principal_id, before)
    recovered = "automatic recovery in progress" in pg.log_tail(400)
    if not recovered:
        problems.append("no crash recovery after -m immediate: the fault did not happen")
    out = {
        "clients": CLIENTS,
        "gunicorn": f"{WORKERS}x{THREADS}",
        "duration_s": round(duration, 1),
        "requests": len(load.attempts),
        "acknowledged": len(load.acked),
        "by_op": dict(Counter(op for op, _ in load.acked)),
        "status_all": dict(counts["all"]),
        "status_while_down": dict(counts["down"]),
        "outcome_unknown_503": counts["unknown_outcome"],
        "crash_recovery_ran": recovered,
        "restarts": [
            {k: v for k, v in r.items() if k not in ("began", "stopped", "starting", "ready")}
            for r in restarts
        ],
        "server_log_lines": sum(1 for _ in SERVER_LOG.open()),
        "problem_count": len(problems),
        "problems": problems[:20],
    }
    report(out)
    save("faults_pg_restart", out)
    if problems:
        raise RuntimeError(f"faults_pg_restart: {len(problems)} problems, first: {problems[0]}")
    return out


if __name__ == "__main__":
    main()
