"""MCP against REST, side by side (docs/performance.md#clients): `python -m bench mcp_vs_rest`.

One server as the product serves it (gunicorn, spokememory's gunicorn settings' 2 workers x 4
threads, `bench:mcp_wsgi_app()`: the REST API with /mcp/ mounted beside it) on PostgreSQL; a
space whose subject holds BENCH_MCP_RECORDS (300) records. One client process, one request at a
time, each on its own keep-alive HTTP client of one library (httpx2, the SDK's own):

- recall: the same question as REST `memory.recall`, as the MCP `recall` tool through the SDK's
  client over a session of the initialize handshake and over the stateless 2026 protocol, and
  as one raw JSON-RPC `tools/call` POST of each protocol (no SDK client: the server's cost
  alone, which the issue's aim is about; the SDK rows add what an agent's client costs);
- write: REST `memory.capture` of one item and the MCP `remember` tool the same four ways (a
  fresh text each).

With BENCH_MCP_BEFORE (a checkout of the code before a change) a second server runs that code on
the same database, and every round runs on both, alternating which goes first: a before/after
in one run. The order of the paths within a round rotates, so none always runs first. Prints p50 /
p95 / mean per path and the ratio MCP / REST (the issue's aim: at most 1.5x). The engine is
BENCH_MCP_ENGINE (engine/2, the lexical engine: the comparison is of the edges, not of the
engines, and it needs no embedding worker)."""

# ruff: noqa: S311 -- seeded pseudo-random texts for a reproducible benchmark, not secrets

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import statistics
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from bench import ROOT, gunicorn, save, seed, setup_django, table

ROUNDS = int(os.environ.get("BENCH_MCP_ROUNDS", "300"))
WARMUP = 10  # rounds first, not counted: each worker process starts its MCP loop on first use
RECORDS = int(os.environ.get("BENCH_MCP_RECORDS", "300"))
ENGINE = os.environ.get("BENCH_MCP_ENGINE", "engine/2")
WORDS = (
    "tea coffee porto lisbon cycling chess piano garden python rust jazz hiking sailing bread "
    "cheese opera museum football tennis running swimming painting poetry novels cinema"
).split()
MODERN = "2026-07-28"
HANDSHAKE = "2025-11-25"
# A checkout of the code before a change (e.g. `git worktree add --detach ../before main`): its
# server is started beside this one's on the same database, and every round runs on both, in
# alternating order (rows prefixed "before:" and "after:").
BEFORE = os.environ.get("BENCH_MCP_BEFORE", "")
Op = Callable[[str], Awaitable[None]]
# gunicorn workers per server (threads: 4). The before/after of the thread hand-offs ran with 1:
# the server before it held a database connection per anyio worker thread (up to 40 a process
# beside its 4 web threads'), and two such servers would take the shared PostgreSQL's 100.
WORKERS = int(os.environ.get("BENCH_MCP_WORKERS", "2"))


def text(rng: random.Random) -> str:
    return "Ada " + " ".join(rng.choice(WORDS) for _ in range(rng.randint(6, 14))) + "."


def load(space_id: str, token_principal, subject: str, rng: random.Random) -> None:
    from memory.ops.base import call

    for _ in range(RECORDS):
        call(
            token_principal,
            "memory.records.create",
            {
                "space_id": space_id,
                "subject_id": subject,
                "kind": "fact",
                "content": {"text": text(rng)},
                "placement": {"scope": "shared"},
            },
        )


async def drive(
    urls: dict[str, str], space_id: str, token: str, subject: str
) -> dict[str, list[float]]:
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    headers = {"Authorization": f"Bearer {token}"}
    rng = random.Random(7)
    times: dict[str, list[float]] = {}
    errors: dict[str, int] = {}

    async with contextlib.AsyncExitStack() as stack:

        async def http() -> Any:
            return await stack.enter_async_context(
                httpx2.AsyncClient(headers=headers, timeout=60.0)
            )

        servers: list[tuple[list[tuple[str, Op]], list[tuple[str, Op]]]] = []
        for label, url in urls.items():
            prefix = f"{label}: " if len(urls) > 1 else ""
            endpoint = f"{url}/mcp/{space_id}"
            rest, raw = await http(), await http()
            sdk = {
                "mcp (handshake)": await stack.enter_async_context(
                    Client(streamable_http_client(endpoint, http_client=await http()))
                ),
                "mcp (stateless)": await stack.enter_async_context(
                    Client(streamable_http_client(endpoint, http_client=await http()), mode=MODERN)
                ),
            }
            for client in sdk.values():  # each session lists the tools once (output schemas)
                await client.list_tools()

            def rest_op(op: str, body: Callable[[str], dict], rest=rest, url=url) -> Op:
                async def run(arg: str) -> None:
                    answer = await rest.post(f"{url}/v1/ops/{op}", json=body(arg))
                    if answer.status_code != 200:
                        raise RuntimeError(f"{op}: {answer.status_code}")

                return run

            def tool(client: Any, name: str, args: Callable[[str], dict]) -> Op:
                async def run(arg: str) -> None:
                    result = await client.call_tool(name, args(arg))
                    if result.is_error:
                        raise RuntimeError(f"{name}: {result.structured_content}")

                return run

            def raw_call(
                version: str, name: str, args: Callable[[str], dict], raw=raw, endpoint=endpoint
            ) -> Op:
                # One JSON-RPC tools/call POST as a client of that protocol sends it, without the
                # SDK's client: what the server costs, apart from the client's own work.
                async def run(arg: str) -> None:
                    params: dict = {"name": name, "arguments": args(arg)}
                    extra = {}
                    if version == MODERN:
                        params["_meta"] = {
                            "io.modelcontextprotocol/protocolVersion": MODERN,
                            "io.modelcontextprotocol/clientCapabilities": {},
                        }
                        extra = {"mcp-method": "tools/call", "mcp-name": name}
                    answer = await raw.post(
                        endpoint,
                        json={"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params},
                        headers={
                            "accept": "application/json, text/event-stream",
                            "mcp-protocol-version": version,
                            **extra,
                        },
                    )
                    result = answer.json().get("result") if answer.status_code == 200 else None
                    if result is None or result.get("isError"):
                        raise RuntimeError(f"{name}: {answer.status_code} {answer.text[:200]}")

                return run

            def recall_args(q: str) -> dict:
                return {"subject_id": subject, "query": q}

            def remember_args(t: str) -> dict:
                return {"subject_id": subject, "text": t}

            raw_versions = {"raw POST (2025-11-25)": HANDSHAKE, "raw POST (2026)": MODERN}
            recall = [
                (
                    "rest recall",
                    rest_op(
                        "memory.recall",
                        lambda q: {
                            "space_id": space_id,
                            "subject_id": subject,
                            "query": {"text": q},
                        },
                    ),
                ),
                *[(f"{k} recall", tool(c, "recall", recall_args)) for k, c in sdk.items()],
                *[
                    (f"{k} recall", raw_call(v, "recall", recall_args))
                    for k, v in raw_versions.items()
                ],
            ]
            write = [
                (
                    "rest capture",
                    rest_op(
                        "memory.capture",
                        lambda t: {
                            "space_id": space_id,
                            "subject_id": subject,
                            "capture_scope": {"placement": {"scope": "shared"}},
                            "items": [{"content": {"text": t}}],
                        },
                    ),
                ),
                *[(f"{k} remember", tool(c, "remember", remember_args)) for k, c in sdk.items()],
                *[
                    (f"{k} remember", raw_call(v, "remember", remember_args))
                    for k, v in raw_versions.items()
                ],
            ]
            servers.append(
                (
                    [(prefix + name, fn) for name, fn in recall],
                    [(prefix + name, fn) for name, fn in write],
                )
            )

        for n in range(WARMUP + ROUNDS):
            question = " ".join(rng.choice(WORDS) for _ in range(3))
            order = servers[n % len(servers) :] + servers[: n % len(servers)]
            for recall, write in order:
                for group in (recall, write):
                    shift = n % len(group)
                    for name, fn in group[shift:] + group[:shift]:
                        a = question if group is recall else text(rng)
                        started = time.perf_counter()
                        try:
                            await fn(a)
                        except Exception as exc:  # noqa: BLE001 - counted and shown, not timed
                            errors[name] = errors.get(name, 0) + 1
                            if errors[name] == 1:
                                print(f"{name} failed: {type(exc).__name__}: {str(exc)[:300]}")
                            continue
                        if n >= WARMUP:
                            times.setdefault(name, []).append(time.perf_counter() - started)
    if errors:
        print(f"errors: {errors}")
    return times


def summary(times: dict[str, list[float]]) -> list[dict]:
    rows = []
    for name, lat in times.items():
        lat = sorted(lat)
        prefix = name.split(": ")[0] + ": " if ": " in name else ""
        base = times[prefix + ("rest recall" if name.endswith("recall") else "rest capture")]
        rows.append(
            {
                "path": name,
                "calls": len(lat),
                "p50_ms": round(lat[len(lat) // 2] * 1000, 2),
                "p95_ms": round(lat[int(len(lat) * 0.95)] * 1000, 2),
                "mean_ms": round(statistics.fmean(lat) * 1000, 2),
                "mean_vs_rest": round(statistics.fmean(lat) / statistics.fmean(base), 2),
            }
        )
    return rows


def main() -> dict:
    os.environ["SPOKE_MEMORY_ENGINE"] = ENGINE
    setup_django()
    from django.db import connection

    from memory.models import Principal

    space_id = f"mcpb{int(time.time())}"
    s = seed(space_id, subjects=1)
    load(
        space_id,
        Principal.objects.get(principal_id=s.principal_id),
        s.subject_ids[0],
        random.Random(1),
    )
    connection.close()
    trees = {"before": Path(BEFORE), "after": ROOT} if BEFORE else {"": ROOT}
    with contextlib.ExitStack() as stack:
        urls = {
            label: stack.enter_context(
                gunicorn(
                    workers=WORKERS,
                    threads=4,
                    app="bench:mcp_wsgi_app()",
                    root=root,
                    SPOKE_MEMORY_ENGINE=ENGINE,
                )
            )
            for label, root in trees.items()
        }
        times = asyncio.run(drive(urls, space_id, s.token, s.subject_ids[0]))
    rows = summary(times)
    print(table(rows, ["path", "calls", "p50_ms", "p95_ms", "mean_ms", "mean_vs_rest"]))
    out = {
        "rounds": ROUNDS,
        "records": RECORDS,
        "engine": ENGINE,
        "before": BEFORE,
        "workers": WORKERS,
        "rows": rows,
    }
    save("mcp_vs_rest", out)
    return out
