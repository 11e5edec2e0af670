"""Issue 38, findings 6 and 7, before and after in one run: the code before the fixes (the
branch's base commit, extracted with `git archive`) and the code now, each served by gunicorn as
deployed (spokememory/gunicorn_conf.py, one worker) on the same throwaway PostgreSQL database.

- Finding 6: recall over HTTP (hybrid/6 since issue 44; hybrid/2 when measured, the query embedded by an OpenAI-compatible server,
  tests/memory/hybrid/hostile_embed_server.py in its `bytext` mode) with
  SPOKE_MEMORY_EMBED_TIMEOUT_S=5, the server answering the query well (the anchor), trickling its
  answer (~12 s, each read in time), or answering 64 MiB; the recall's wall time and the growth
  of the web worker's peak RSS (VmHWM) over it.
- Finding 7: the console's import upload of a 60 MB JSON Lines file by a signed-in user whose
  principal holds no grant in the space; wall time and the web worker's peak RSS; the anchor is
  the same user's 1 KB upload.

Run: `DATABASE_URL=postgres://postgres@127.0.0.1:5432/spoke_trust_bench python -m
bench.trust_bounds [--base COMMIT] [--out bench/results/....md]`."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tarfile
import time
from io import BytesIO
from pathlib import Path

import httpx

from bench import _live, stop
from bench._hybrid_common import ROOT, fresh_database

WORK = ROOT / "var" / "bench-trust"
PORTS = {"before": 8120, "after": 8121}
EMBED_PORT = 8140
CSRF = "b" * 32


def git(*args: str) -> str:
    command = ["git", *args]  # noqa: S607 - git from PATH, as the developer runs it
    return subprocess.run(  # noqa: S603 - fixed arguments
        command, cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.strip()


def extract(commit: str) -> Path:
    target = WORK / f"tree-{commit[:12]}"
    if not (target / "manage.py").exists():
        target.mkdir(parents=True, exist_ok=True)
        command = ["git", "archive", commit]  # noqa: S607 - git from PATH
        data = subprocess.run(  # noqa: S603 - fixed arguments
            command, cwd=ROOT, capture_output=True, check=True
        ).stdout
        with tarfile.open(fileobj=BytesIO(data)) as tar:
            tar.extractall(target, filter="data")
    return target


def seed(database_url: str, embed_url: str) -> dict:
    """Space s1 with subject u1 and a few records with vectors (so recall embeds its query), an
    API token with a root grant; a console user whose principal holds no grant (a session)."""
    os.environ.update(
        DATABASE_URL=database_url,
        SPOKE_MEMORY_ENGINE="hybrid/6",
        SPOKE_MEMORY_EMBED_URL=embed_url,
        DJANGO_SETTINGS_MODULE="spokememory.settings",
    )
    os.environ.setdefault("SECRET_KEY", "bench-only-secret-key-not-for-production-use")
    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.contrib.sessions.backends.db import SessionStore
    from django.core.management import call_command

    from memory.models import Principal, Space
    from memory.ops.base import call
    from memory.services import hybrid_store
    from memory.services.operators import issue_root_grant, issue_token
    from memory.timeutil import now

    call_command("migrate", verbosity=0, interactive=False)
    at = now()
    space = Space.objects.create(space_id="s1", display_name="s1", created_at=at, updated_at=at)
    admin = Principal.objects.create(display_name="bench admin", kind="service")
    issue_root_grant(space, admin)
    token = issue_token(admin)
    call(admin, "memory.subjects.ensure", {"space_id": "s1", "subject_id": "u1"})
    for i, text in enumerate(
        ["Ada prefers green tea", "Ada lives in Porto", "Ada plans a trip to Japan"]
    ):
        call(
            admin,
            "memory.records.create",
            {
                "space_id": "s1",
                "subject_id": "u1",
                "placement": {"scope": "shared"},
                "content": {"text": text},
                "kind": "fact",
                "idempotency_key": f"seed-{i}",
            },
        )
    hybrid_store.drain()
    user = get_user_model().objects.create_user("nogrant", password="bench-only-password-1")
    Principal.objects.create(display_name="No grant", kind="user", user=user)
    session = SessionStore()
    session["_auth_user_id"] = str(user.pk)
    session["_auth_user_backend"] = "django.contrib.auth.backends.ModelBackend"
    session["_auth_user_hash"] = user.get_session_auth_hash()
    session.create()
    return {"token": token, "session": session.session_key}


def worker_hwm_mb(master: int) -> float:
    """The peak resident MiB of the gunicorn worker (the master's child)."""
    best = 0.0
    for task in Path(f"/proc/{master}/task").iterdir():
        for child in (task / "children").read_text().split():
            status = Path(f"/proc/{child}/status").read_text().splitlines()
            fields = dict(line.split(":", 1) for line in status)
            best = max(best, int(fields["VmHWM"].split()[0]) / 1024)
    return best


def recall(base: str, token: str, mode: str) -> tuple[float, int]:
    """One recall whose query the hostile server answers as `mode` (its first word)."""
    started = time.perf_counter()
    answer = httpx.post(
        f"{base}/v1/ops/memory.recall",
        json={"space_id": "s1", "subject_id": "u1", "query": {"text": f"{mode} tea for Ada"}},
        headers={"Authorization": f"Bearer {token}"},
        timeout=300.0,
    )
    return time.perf_counter() - started, answer.status_code


def upload(base: str, session: str, data: bytes) -> tuple[float, int]:
    started = time.perf_counter()
    answer = httpx.post(
        f"{base}/console/s/s1/imports/stage/",
        files={"file": ("export.jsonl", data, "application/jsonl")},
        data={"idempotency_key": "k1"},
        cookies={"sessionid": session, "csrftoken": CSRF},
        headers={"X-CSRFToken": CSRF},
        timeout=300.0,
    )
    return time.perf_counter() - started, answer.status_code


def sixty_mb() -> bytes:
    """60 MB of export-like JSON Lines: many small objects per line (what the parse costs)."""
    item = {"record_id": "rec_01", "content": {"text": "Ada prefers green tea"}, "revision": 1}
    line = json.dumps({"chunk": {"ordinal": 1, "records": [item] * 5000}}).encode() + b"\n"
    head = json.dumps({"bundle": {"format": "x"}, "chunk": {"ordinal": 0}}).encode() + b"\n"
    return head + line * (60_000_000 // len(line))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--base", default="4baf148")
    parser.add_argument("--out", default="")
    args = parser.parse_args()
    WORK.mkdir(parents=True, exist_ok=True)
    database = fresh_database(os.environ.get("DATABASE_URL"), "trust_bench")
    hostile = subprocess.Popen(  # noqa: S603 - our interpreter, our module
        [sys.executable, "-m", "tests.memory.hybrid.hostile_embed_server", str(EMBED_PORT), "64"],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    assert hostile.stdout is not None and hostile.stdout.readline().strip() == "ready"
    embed = f"http://127.0.0.1:{EMBED_PORT}"
    rows: list[tuple[str, str, str, float, int, float]] = []
    try:
        creds = seed(database, f"{embed}/ok/v1")
        data, small = sixty_mb(), sixty_mb()[:1000]
        trees = {"before": extract(git("rev-parse", args.base)), "after": ROOT}
        for label, tree in trees.items():
            base_env = {
                **os.environ,
                "DATABASE_URL": database,
                "SPOKE_MEMORY_ENGINE": "hybrid/6",
                "SPOKE_MEMORY_EMBED_TIMEOUT_S": "5",
                "SPOKE_MEMORY_EMBED_URL": f"{embed}/bytext/v1",
                "SPOKE_MEMORY_STATIC_HASHED": "0",  # no collectstatic needed for the pages
                "SPOKE_MEMORY_RATE": "100000000/min",
                "WEB_CONCURRENCY": "1",
                "GUNICORN_ACCESS_LOG": "/dev/null",
                "HF_HUB_OFFLINE": "1",
            }
            port = PORTS[label]
            url = f"http://127.0.0.1:{port}"
            env = {**base_env, "PYTHONPATH": f"{tree}:{tree / 'clients' / 'python'}"}
            log = WORK / f"gunicorn-{port}.log"
            with _live.web_process(env, log, tree=tree, port=port) as served:
                proc = served.proc
                recall(url, creds["token"], "ok")  # warm: the first recall's own set-up
                upload(url, creds["session"], small)
                for mode in ("ok", "trickle", "huge"):
                    hwm0 = worker_hwm_mb(proc.pid)
                    wall, status = recall(url, creds["token"], mode)
                    rows.append(
                        (label, "recall", mode, wall, status, worker_hwm_mb(proc.pid) - hwm0)
                    )
                for name, body in (("1 KB", small), ("60 MB", data)):
                    hwm0 = worker_hwm_mb(proc.pid)
                    wall, status = upload(url, creds["session"], body)
                    rows.append(
                        (label, "upload", name, wall, status, worker_hwm_mb(proc.pid) - hwm0)
                    )
    finally:
        stop(hostile)
    head = git("rev-parse", "--short", "HEAD")
    lines = [
        f"# trust bounds (issue 38 findings 6, 7), {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}",
        "",
        f"before = {args.base}, after = {head} (+ the working tree as run); gunicorn 1 worker, "
        "SPOKE_MEMORY_EMBED_TIMEOUT_S=5, hostile server: trickle ~12 s, huge 64 MiB.",
        "",
        "| code | what | case | wall s | HTTP | worker peak RSS growth MiB |",
        "|---|---|---|---:|---:|---:|",
    ]
    lines += [f"| {a} | {b} | {c} | {d:.2f} | {e} | {f:.0f} |" for a, b, c, d, e, f in rows]
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        out = ROOT / args.out
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text)


if __name__ == "__main__":
    main()
