"""Fault: the server process is killed (SIGKILL) while mutations are in flight; clients retry
with their idempotency keys once it is back. Exactly one effect per key: one receipt, one key
row, one subject; every retry answers 200 with the receipt of the first acknowledgement.

    python -m bench faults_kill        # FAULT_CLIENTS (16), FAULT_KEYS (400)"""

from __future__ import annotations

import os
import random
import signal
import threading
import time

import httpx

from bench import free_port, save, seed, setup_django, start_gunicorn, stop
from bench._faults import audit_receipts, audit_space_revision, client_for, post_op

CLIENTS = int(os.environ.get("FAULT_CLIENTS", "16"))
KEYS = int(os.environ.get("FAULT_KEYS", "400"))


OP = "memory.subjects.ensure"


def start(port: int):
    return start_gunicorn(port, workers=2, threads=4, log_level="critical")


def fire(url: str, s, keys: list[str], answers: dict, stop_flag: threading.Event) -> None:
    client = client_for(url, s.token)
    for key in keys:
        if stop_flag.is_set():
            return
        body = {"space_id": s.space_id, "subject_id": f"k-{key}", "idempotency_key": key}
        try:
            r = post_op(client, OP, body)
            answers[key] = r.status_code, (r.json().get("receipt") or {}).get("receipt_id")
        except httpx.HTTPError as exc:
            answers[key] = type(exc).__name__, None


def main() -> dict:
    setup_django()
    from django.db import connection

    from memory.models import Space, Subject

    s = seed(f"fault-kill-{int(time.time())}", subjects=1)
    revision_before = Space.objects.get(space_id=s.space_id).revision
    connection.close()
    keys = [f"key-{i}" for i in range(KEYS)]
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    proc = start(port)
    first: dict = {}
    flag = threading.Event()
    chunks = [keys[i::CLIENTS] for i in range(CLIENTS)]
    threads = [threading.Thread(target=fire, args=(url, s, c, first, flag)) for c in chunks]
    for t in threads:
        t.start()
    time.sleep(random.Random(7).uniform(0.5, 1.5))
    os.killpg(proc.pid, signal.SIGKILL)  # the whole server, mid-request
    proc.wait()
    flag.set()
    for t in threads:
        t.join()
    acked = {k: v[1] for k, v in first.items() if v[0] == 200}
    failed = [k for k in keys if k in first and first[k][0] != 200]
    never = [k for k in keys if k not in first]
    proc = start(port)
    try:
        retry: dict = {}
        fire(url, s, keys, retry, threading.Event())
    finally:
        stop(proc)
    problems = []
    for key in keys:
        status, receipt_id = retry[key]
        if status != 200:
            problems.append(f"{key}: retry answered {status}")
        elif key in acked and acked[key] != receipt_id:
            problems.append(f"{key}: retry got another receipt than the first acknowledgement")
    settled = {(OP, k): v[1] for k, v in retry.items() if v[0] == 200}
    problems += audit_receipts(s.space_id, s.principal_id, settled)
    problems += audit_space_revision(s.space_id, revision_before, len(keys))
    if Subject.objects.filter(space_id=s.space_id, subject_id__startswith="k-").count() != len(
        keys
    ):
        problems.append("subjects != keys")
    out = {
        "keys": len(keys),
        "acknowledged_before_kill": len(acked),
        "failed_at_kill": len(failed),
        "not_sent_before_kill": len(never),
        "problems": problems[:20],
        "problem_count": len(problems),
    }
    print(out)
    save("faults_kill", out)
    if problems:
        raise SystemExit("exactly-once violated")
    return out


if __name__ == "__main__":
    main()
