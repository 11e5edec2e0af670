"""Issue 38, finding 1, before and after in one run: an MCP `recall` tool call over streamable
HTTP whose `context_ids` hold BENCH_MCPADM_ITEMS (250,000) items, the last one breaking the
ContextId pattern, sent with a valid token whose principal holds no grant, for a space that does
not exist. `python -m bench mcp_admission`.

Each tree (BENCH_MCPADM_BEFORE=<a checkout of the code before the fix>, then this checkout) is
served by gunicorn as deployed (`-c spokememory/gunicorn_conf.py`: 2 workers x 4 threads) on its
own PostgreSQL database (BENCH_MCPADM_DB_BEFORE / _AFTER, dropped and re-created, migrated by that
tree's own code) with the Redis cache and broker on BENCH_MCPADM_REDIS. That tree's code seeds
it: a space with one record and a principal granted over it (the victim), and a principal with no
grant (the attacker). Measured, per tree:

- (a) the wall time for the server to answer the 250,000-item MCP call (one at a time; median of
  BENCH_MCPADM_REPEAT, 3), and the anchor: the same body over REST (`POST
  /v1/ops/memory.recall`, its `selection.context_ids`), same count;
- (b) the victim's `memory.records.get` over REST (one client, back to back) for
  BENCH_MCPADM_SECONDS (10): quiet, then while 4 attackers each send that MCP call back to back
  (the calls still in flight when the phase ends are waited for and not counted).

The rate limit is lifted (SPOKE_MEMORY_RATE, as the other benches do) so the victim's closed loop
is not throttled; the byte budgets and every other limit are the deployed defaults. Prints a
markdown report; BENCH_MCPADM_OUT writes it to a file too."""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx

from bench import ROOT, _live

BEFORE = os.environ.get("BENCH_MCPADM_BEFORE", "")
ITEMS = int(os.environ.get("BENCH_MCPADM_ITEMS", "250000"))
REPEAT = int(os.environ.get("BENCH_MCPADM_REPEAT", "3"))
SECONDS = float(os.environ.get("BENCH_MCPADM_SECONDS", "10"))
ATTACKERS = int(os.environ.get("BENCH_MCPADM_ATTACKERS", "4"))
PG = os.environ.get("BENCH_MCPADM_PG", "postgres://postgres@127.0.0.1:5432")
DATABASES = {
    "before": os.environ.get("BENCH_MCPADM_DB_BEFORE", "spoke_mcpbench_before"),
    "after": os.environ.get("BENCH_MCPADM_DB_AFTER", "spoke_mcpbench_after"),
}
PORTS = {"before": 8290, "after": 8291}
REDIS = os.environ.get("BENCH_MCPADM_REDIS", "redis://127.0.0.1:6379/11")
OUT = os.environ.get("BENCH_MCPADM_OUT", "")
WORK = ROOT / "var" / "bench-mcp-admission"
NO_SPACE = "no-such-space"
HANDSHAKE = "2025-11-25"

# Run in a subprocess with the tree's own code on its own database: migrate, then seed.
SEED = """
import json, django
django.setup()
from django.core.management import call_command
call_command("migrate", verbosity=0, interactive=False)
from memory.ops.base import call
from tests import factories
space = factories.make_space("victim")
admin, admin_token = factories.make_admin(space, "bench victim", token_label="bench")
factories.ensure_subjects(admin, "victim", ["u1"])
made = call(admin, "memory.records.create", {"space_id": "victim", "subject_id": "u1",
    "kind": "fact", "content": {"text": "Ada prefers green tea"},
    "placement": {"scope": "shared"}})
_, attacker_token = factories.make_principal("bench no-grant", token_label="bench")
print("SEED " + json.dumps({"victim": admin_token, "record_id": made["receipt"]["refs"][0]["id"],
    "attacker": attacker_token}))
"""


def env_for(tree: Path, database: str) -> dict[str, str]:
    return {
        **os.environ,
        "PYTHONPATH": f"{tree}:{tree / 'clients' / 'python'}",
        "DJANGO_SETTINGS_MODULE": "spokememory.settings",
        "DATABASE_URL": f"{PG}/{database}",
        "CELERY_BROKER_URL": REDIS,
        "SPOKE_MEMORY_CACHE_URL": REDIS,
        "SECRET_KEY": "bench-only-secret-key-not-for-production-use",
        "SPOKE_MEMORY_RATE": "100000000/min",
        "SPOKE_MEMORY_STATIC_HASHED": "0",
        "SPOKE_MEMORY_VAR_DIR": str(WORK / "var"),
        "WEB_CONCURRENCY": "2",
        "GUNICORN_THREADS": "4",
        "GUNICORN_ACCESS_LOG": "/dev/null",
        "LOG_LEVEL": "ERROR",
        "HF_HUB_OFFLINE": "1",
    }


def fresh(database: str) -> None:
    import psycopg

    if not database.startswith("spoke_mcpbench_"):
        raise SystemExit(f"refusing to drop {database!r}")
    with psycopg.connect(f"{PG}/postgres", autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{database}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{database}"')


def seed(tree: Path, env: dict[str, str]) -> dict:
    done = subprocess.run(  # noqa: S603 - our interpreter, our script
        [sys.executable, "-c", SEED], cwd=tree, env=env, capture_output=True, text=True
    )
    for line in done.stdout.splitlines():
        if line.startswith("SEED "):
            return json.loads(line[5:])
    raise RuntimeError(f"seed failed: {done.stderr[-2000:]}")


def context_ids() -> list[str]:
    return ["a"] * (ITEMS - 1) + ["bad id!"]  # the last breaks ^[A-Za-z0-9._:@-]{1,128}$


def mcp_body() -> bytes:
    params = {"name": "recall", "arguments": {"subject_id": "u1", "query": "tea"}}
    params["arguments"]["context_ids"] = context_ids()
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}
    return json.dumps(body, separators=(",", ":")).encode()


def rest_body() -> bytes:
    body = {
        "space_id": NO_SPACE,
        "subject_id": "u1",
        "query": {"text": "tea"},
        "selection": {"mode": "contexts_and_shared", "context_ids": context_ids()},
    }
    return json.dumps(body, separators=(",", ":")).encode()


def shape(answer: httpx.Response) -> str:
    """What came back, without echoing it: status and the error's code."""
    try:
        data = answer.json()
    except ValueError:
        return f"{answer.status_code}"
    if isinstance(data, dict) and "error" in data:
        err = data["error"]
        code = err.get("code") if isinstance(err, dict) else err
        return f"{answer.status_code} error {code}"
    result = data.get("result") if isinstance(data, dict) else None
    if isinstance(result, dict):
        structured = result.get("structuredContent") or {}
        code = structured.get("code") or (structured.get("error") or {}).get("code", "")
        return f"{answer.status_code} isError={result.get('isError')} {code}".strip()
    return f"{answer.status_code}"


def mcp_call(url: str, token: str, body: bytes) -> tuple[float, str]:
    headers = {
        "Authorization": f"Bearer {token}",
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": HANDSHAKE,
    }
    started = time.perf_counter()
    answer = httpx.post(f"{url}/mcp/{NO_SPACE}", content=body, headers=headers, timeout=120)
    return time.perf_counter() - started, shape(answer)


def rest_call(url: str, token: str, body: bytes) -> tuple[float, str]:
    headers = {"Authorization": f"Bearer {token}", "content-type": "application/json"}
    started = time.perf_counter()
    answer = httpx.post(f"{url}/v1/ops/memory.recall", content=body, headers=headers, timeout=120)
    return time.perf_counter() - started, shape(answer)


def victim_p95(url: str, creds: dict, attack: bytes | None) -> dict:
    """The victim's records.get, back to back for SECONDS; with `attack`, ATTACKERS threads send
    it as MCP calls back to back over the same SECONDS."""
    stop_at = time.monotonic() + SECONDS
    attacks: list[float] = []
    lock = threading.Lock()

    def attacker() -> None:
        while time.monotonic() < stop_at:
            wall, _ = mcp_call(url, creds["attacker"], attack or b"")
            with lock:
                attacks.append(wall)

    threads = [threading.Thread(target=attacker) for _ in range(ATTACKERS if attack else 0)]
    for t in threads:
        t.start()
    body = {"space_id": "victim", "record_id": creds["record_id"]}
    lat: list[float] = []
    errors = 0
    with httpx.Client(headers={"Authorization": f"Bearer {creds['victim']}"}, timeout=120) as c:
        while time.monotonic() < stop_at:
            started = time.perf_counter()
            answer = c.post(f"{url}/v1/ops/memory.records.get", json=body)
            if answer.status_code == 200:
                lat.append(time.perf_counter() - started)
            else:
                errors += 1
    for t in threads:
        t.join()
    lat.sort()
    return {
        "gets": len(lat),
        "errors": errors,
        "p50_ms": round(lat[len(lat) // 2] * 1000, 1) if lat else None,
        "p95_ms": round(lat[min(len(lat) - 1, int(len(lat) * 0.95))] * 1000, 1) if lat else None,
        "max_ms": round(lat[-1] * 1000, 1) if lat else None,
        "attack_calls": len(attacks),
    }


def measure(label: str, tree: Path) -> dict:
    database = DATABASES[label]
    fresh(database)
    env = env_for(tree, database)
    creds = seed(tree, env)
    mcp, rest = mcp_body(), rest_body()
    port = PORTS[label]
    url = f"http://127.0.0.1:{port}"
    out: dict = {"tree": str(tree), "database": database, "mcp_bytes": len(mcp)}
    with _live.web(env, WORK / f"gunicorn-{port}.log", tree=tree, port=port):
        # warm both workers' first-use paths (the MCP server, the ops) with small calls
        small = json.dumps(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "tools/call",
                "params": {"name": "recall", "arguments": {"subject_id": "u1", "query": "t"}},
            }
        ).encode()
        for _ in range(4):
            mcp_call(url, creds["attacker"], small)
        runs = [mcp_call(url, creds["attacker"], mcp) for _ in range(REPEAT)]
        out["mcp_s"] = [round(w, 3) for w, _ in runs]
        out["mcp_answer"] = runs[-1][1]
        runs = [rest_call(url, creds["attacker"], rest) for _ in range(REPEAT)]
        out["rest_s"] = [round(w, 3) for w, _ in runs]
        out["rest_answer"] = runs[-1][1]
        out["quiet"] = victim_p95(url, creds, None)
        out["attacked"] = victim_p95(url, creds, mcp)
    out["mcp_median_s"] = round(statistics.median(out["mcp_s"]), 3)
    out["rest_median_s"] = round(statistics.median(out["rest_s"]), 3)
    return out


def git(*args: str, cwd: Path = ROOT) -> str:
    return subprocess.run(  # noqa: S603 - fixed arguments
        ["git", *args],  # noqa: S607 - git from PATH
        cwd=cwd,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()


def main() -> dict:
    trees = {"before": Path(BEFORE), "after": ROOT} if BEFORE else {"after": ROOT}
    load_at_start = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()  # noqa: S607
    results = {label: measure(label, tree) for label, tree in trees.items()}
    load_at_end = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()  # noqa: S607
    commits = {
        label: git("rev-parse", "--short", "HEAD", cwd=tree) for label, tree in trees.items()
    }
    lines = [
        "# MCP admission (issue 38 finding 1), "
        + time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "",
        "Command: `BENCH_MCPADM_BEFORE=<checkout of 4baf148> python -m bench mcp_admission`. "
        + ", ".join(f"{k} = {v}" for k, v in commits.items())
        + f". A `recall` tools/call POST (protocol {HANDSHAKE}, no session) to `/mcp/{NO_SPACE}` "
        f"(a space that does not exist), `context_ids` of {ITEMS:,} items, the last breaking the "
        f"pattern, by a token whose principal holds no grant "
        f"({results[next(iter(results))]['mcp_bytes']:,} bytes); the anchor is the same body "
        "over REST `POST /v1/ops/memory.recall` (`selection.context_ids`). gunicorn as deployed "
        "(spokememory/gunicorn_conf.py, 2 workers x 4 threads), PostgreSQL (one database per "
        "tree), Redis cache; rate limit lifted (SPOKE_MEMORY_RATE), other limits default. "
        f"Victim: another principal's `memory.records.get` over REST, one client back to back, "
        f"{SECONDS:g} s quiet, then {SECONDS:g} s beside {ATTACKERS} attackers each sending the "
        "MCP call back to back.",
        "",
        f"Machine load: start `{load_at_start}`; end `{load_at_end}`.",
        "",
        "| code | MCP call wall s (median of "
        f"{REPEAT}) | runs | MCP answer | REST anchor s (median) | REST answer "
        "| victim p95 quiet ms | victim p95 attacked ms | victim gets quiet / attacked "
        "| attack calls answered |",
        "|---|---:|---|---|---:|---|---:|---:|---|---:|",
    ]
    for label, r in results.items():
        lines.append(
            f"| {label} ({commits[label]}) | {r['mcp_median_s']:.3f} | {r['mcp_s']} | "
            f"{r['mcp_answer']} | {r['rest_median_s']:.3f} | {r['rest_answer']} | "
            f"{r['quiet']['p95_ms']} | {r['attacked']['p95_ms']} | "
            f"{r['quiet']['gets']} / {r['attacked']['gets']} | {r['attacked']['attack_calls']} |"
        )
    lines += ["", "```json", json.dumps(results, indent=2), "```"]
    text = "\n".join(lines) + "\n"
    print(text)
    if OUT:
        path = ROOT / OUT
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return results


if __name__ == "__main__":
    main()
