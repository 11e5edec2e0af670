"""MCP against REST, side by side (docs/performance.md "MCP"): `python -m bench mcp_vs_rest`.

One server as the product serves it (gunicorn, spokememory's gunicorn settings' 2 workers x 4
threads, `bench:mcp_wsgi_app()`: the REST API with /mcp/ mounted beside it) on PostgreSQL; a
space whose subject holds BENCH_MCP_RECORDS (300) records. One client process, one request at a
time, each pair back to back on the same keep-alive HTTP library (httpx2, the SDK's own):

- recall: the same question as REST `memory.recall` and as the MCP `recall` tool, over a
  session of the initialize handshake and over the stateless 2026 protocol;
- write: REST `memory.capture` of one item and the MCP `remember` tool (a fresh text each).

The order of the three within a round rotates, so neither side always runs first. Prints p50 /
p95 / mean per path and the ratio MCP / REST (the issue's aim: at most 1.5x). The engine is
BENCH_MCP_ENGINE (engine/2, the lexical engine: the comparison is of the edges, not of the
engines, and it needs no embedding worker)."""

# ruff: noqa: S311 -- seeded pseudo-random texts for a reproducible benchmark, not secrets

from __future__ import annotations

import asyncio
import os
import random
import statistics
import time

from bench import gunicorn, save, seed, setup_django, table

ROUNDS = int(os.environ.get("BENCH_MCP_ROUNDS", "300"))
WARMUP = 10  # rounds first, not counted: each worker process starts its MCP loop on first use
RECORDS = int(os.environ.get("BENCH_MCP_RECORDS", "300"))
ENGINE = os.environ.get("BENCH_MCP_ENGINE", "engine/2")
WORDS = (
    "tea coffee porto lisbon cycling chess piano garden python rust jazz hiking sailing bread "
    "cheese opera museum football tennis running swimming painting poetry novels cinema"
).split()
MODERN = "2026-07-28"


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


async def drive(url: str, space_id: str, token: str, subject: str) -> dict[str, list[float]]:
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    headers = {"Authorization": f"Bearer {token}"}
    rng = random.Random(7)
    times: dict[str, list[float]] = {}
    errors: dict[str, int] = {}

    def timed(name: str, seconds: float) -> None:
        times.setdefault(name, []).append(seconds)

    async with (
        httpx2.AsyncClient(headers=headers, timeout=60.0) as rest,
        httpx2.AsyncClient(headers=headers, timeout=60.0) as h1,
        httpx2.AsyncClient(headers=headers, timeout=60.0) as h2,
        httpx2.AsyncClient(headers=headers, timeout=60.0) as raw,
        Client(streamable_http_client(f"{url}/mcp/{space_id}", http_client=h1)) as legacy,
        Client(
            streamable_http_client(f"{url}/mcp/{space_id}", http_client=h2), mode=MODERN
        ) as modern,
    ):
        mcp = {"mcp (handshake)": legacy, "mcp (stateless)": modern}
        for client in mcp.values():  # each session lists the tools once (output schemas)
            await client.list_tools()

        async def rest_op(op: str, body: dict) -> None:
            answer = await rest.post(f"{url}/v1/ops/{op}", json=body)
            if answer.status_code != 200:
                raise RuntimeError(f"{op}: {answer.status_code}")

        async def tool(client, name: str, args: dict) -> None:
            result = await client.call_tool(name, args)
            if result.is_error:
                raise RuntimeError(f"{name}: {result.structured_content}")

        async def raw_call(version: str, name: str, args: dict) -> None:
            # One JSON-RPC tools/call POST as a client of that protocol sends it, no SDK client:
            # what the server costs, apart from the SDK client's own work.
            params: dict = {"name": name, "arguments": args}
            extra = {}
            if version == MODERN:
                params["_meta"] = {
                    "io.modelcontextprotocol/protocolVersion": MODERN,
                    "io.modelcontextprotocol/clientCapabilities": {},
                }
                extra = {"mcp-method": "tools/call", "mcp-name": name}
            answer = await raw.post(
                f"{url}/mcp/{space_id}",
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

        raw_paths = {"raw POST (2025-11-25)": "2025-11-25", "raw POST (2026)": MODERN}

        for n in range(WARMUP + ROUNDS):
            question = " ".join(rng.choice(WORDS) for _ in range(3))
            recall = [
                (
                    "rest recall",
                    rest_op,
                    (
                        "memory.recall",
                        {
                            "space_id": space_id,
                            "subject_id": subject,
                            "query": {"text": question},
                        },
                    ),
                ),
                *[
                    (f"{k} recall", tool, (c, "recall", {"subject_id": subject, "query": question}))
                    for k, c in mcp.items()
                ],
                *[
                    (
                        f"{k} recall",
                        raw_call,
                        (v, "recall", {"subject_id": subject, "query": question}),
                    )
                    for k, v in raw_paths.items()
                ],
            ]
            write = [
                (
                    "rest capture",
                    rest_op,
                    (
                        "memory.capture",
                        {
                            "space_id": space_id,
                            "subject_id": subject,
                            "capture_scope": {"placement": {"scope": "shared"}},
                            "items": [{"content": {"text": text(rng)}}],
                        },
                    ),
                ),
                *[
                    (
                        f"{k} remember",
                        tool,
                        (c, "remember", {"subject_id": subject, "text": text(rng)}),
                    )
                    for k, c in mcp.items()
                ],
                *[
                    (
                        f"{k} remember",
                        raw_call,
                        (v, "remember", {"subject_id": subject, "text": text(rng)}),
                    )
                    for k, v in raw_paths.items()
                ],
            ]
            for group in (recall, write):
                shift = n % len(group)
                for name, fn, args in group[shift:] + group[:shift]:
                    started = time.perf_counter()
                    try:
                        await fn(*args)
                    except Exception as exc:  # noqa: BLE001 - counted and shown, not timed
                        errors[name] = errors.get(name, 0) + 1
                        if errors[name] == 1:
                            print(f"{name} failed: {type(exc).__name__}: {str(exc)[:300]}")
                        continue
                    if n >= WARMUP:
                        timed(name, time.perf_counter() - started)
    if errors:
        print(f"errors: {errors}")
    return times


def summary(times: dict[str, list[float]]) -> list[dict]:
    rows = []
    for name, lat in times.items():
        lat = sorted(lat)
        base = times["rest recall" if name.endswith("recall") else "rest capture"]
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
    with gunicorn(
        workers=2, threads=4, app="bench:mcp_wsgi_app()", SPOKE_MEMORY_ENGINE=ENGINE
    ) as url:
        times = asyncio.run(drive(url, space_id, s.token, s.subject_ids[0]))
    rows = summary(times)
    print(table(rows, ["path", "calls", "p50_ms", "p95_ms", "mean_ms", "mean_vs_rest"]))
    out = {"rounds": ROUNDS, "records": RECORDS, "engine": ENGINE, "rows": rows}
    save("mcp_vs_rest", out)
    return out
