"""Fault: the server process is killed (SIGKILL) while mutations are in flight; clients retry
with their idempotency keys once it is back. Exactly one effect per key: one receipt, one key
row, one subject; every retry answers 200 with the receipt of the first acknowledgement.

    python -m bench faults_kill        # FAULT_CLIENTS (16), FAULT_KEYS (400)"""
from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import threading
import time

import httpx

from bench import ROOT, free_port, save, seed, server_env, setup_django, stop, wait_ready

CLIENTS = int(os.environ.get("FAULT_CLIENTS", "16"))
KEYS = int(os.environ.get("FAULT_KEYS", "400"))


def start(port: int) -> subprocess.Popen:
    cmd = [sys.executable, "-m", "gunicorn", "bench:wsgi_app()", "-b", f"127.0.0.1:{port}", "-w", "2",
           "--threads", "4", "--log-level", "critical"]
    proc = subprocess.Popen(cmd, cwd=ROOT, env=server_env(), start_new_session=True)
    wait_ready(f"http://127.0.0.1:{port}", proc=proc)
    return proc


def fire(url: str, s, keys: list[str], answers: dict, stop_flag: threading.Event) -> None:
    client = httpx.Client(base_url=url, headers={"Authorization": f"Bearer {s.token}"}, timeout=5.0)
    for key in keys:
        if stop_flag.is_set():
            return
        body = {"space_id": s.space_id, "subject_id": f"k-{key}", "idempotency_key": key}
        try:
            r = client.post("/v1/ops/memory.subjects.ensure", content=json.dumps(body),
                            headers={"Content-Type": "application/json"})
            answers[key] = r.status_code, (r.json().get("receipt") or {}).get("receipt_id")
        except httpx.HTTPError as exc:
            answers[key] = type(exc).__name__, None


def main() -> dict:
    setup_django()
    from django.db import connection

    from memory.models import IdempotencyKey, Receipt, Subject

    s = seed(f"fault-kill-{int(time.time())}", subjects=1)
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
    receipts = Receipt.objects.filter(space_id=s.space_id, op="memory.subjects.ensure", idempotency_key__in=keys)
    per_key: dict[str, int] = {}
    for k in receipts.values_list("idempotency_key", flat=True):
        per_key[k] = per_key.get(k, 0) + 1
    problems += [f"{k}: {n} receipts" for k, n in per_key.items() if n != 1]
    problems += [f"{k}: no receipt" for k in keys if k not in per_key]
    if IdempotencyKey.objects.filter(space_key=s.space_id, key__in=keys).count() != len(keys):
        problems.append("key rows != keys")
    if Subject.objects.filter(space_id=s.space_id, subject_id__startswith="k-").count() != len(keys):
        problems.append("subjects != keys")
    out = {"keys": len(keys), "acknowledged_before_kill": len(acked), "failed_at_kill": len(failed),
           "not_sent_before_kill": len(never), "problems": problems[:20], "problem_count": len(problems)}
    print(out)
    save("faults_kill", out)
    if problems:
        raise SystemExit("exactly-once violated")
    return out


if __name__ == "__main__":
    main()
