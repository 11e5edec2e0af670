"""LoCoMo recall as a user sees it: `python -m bench.locomo --live --database-url URL …`.

The product runs as an operator runs it (bench._live): the web server with its own
configuration and the default engine (or `--engines ONE`), and a Celery worker that makes the
embeddings. For each conversation a space and an admin token are made in the database (what
`manage.py spoke` does for an operator); everything after that goes over HTTP: the subject is
ensured, every turn written with `memory.records.create` (one request each, in dialogue order;
conversations written side by side by `--clients` threads), then the bench waits until /readyz
shows an embedding backlog of 0, and asks every question with `memory.recall` (max_records each
of `--ks`), timing whole HTTP calls on the client. Graded as bench.locomo grades."""

from __future__ import annotations

import json
import sys
import time
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx

from bench import _live
from bench.locomo import (
    BASELINE,
    HELD_OUT,
    Tally,
    create_request,
    questions,
    turn_text,
    turns_of,
)


def _admin(space_id: str) -> str:
    from tests import factories

    space = factories.make_space(space_id)
    _, token = factories.make_admin(space, f"bench {space_id}", token_label="bench")
    return token


class Client:
    def __init__(self, url: str, token: str) -> None:
        self.http = httpx.Client(
            base_url=url,
            headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
            timeout=60.0,
        )

    def op(self, name: str, body: dict) -> dict:
        answer = self.http.post(f"/v1/ops/{name}", content=json.dumps(body))
        if answer.status_code != 200:
            raise SystemExit(f"{name} answered {answer.status_code}: {answer.text[:300]}")
        return answer.json()


def ingest(url: str, token: str, space_id: str, sample: dict) -> tuple[dict, list[str], list[str]]:
    client = Client(url, token)
    subject_id = sample["sample_id"]
    client.op("memory.subjects.ensure", {"space_id": space_id, "subject_id": subject_id})
    dia_of: dict[str, str] = {}
    texts, dias = [], []
    for session, date, turn in turns_of(sample["conversation"]):
        text = turn_text(turn)
        receipt = client.op(
            "memory.records.create", create_request(space_id, subject_id, session, date, turn)
        )["receipt"]
        record_id = next(ref["id"] for ref in receipt["refs"] if ref["type"] == "record")
        dia_of[record_id] = turn["dia_id"]
        texts.append(text)
        dias.append(turn["dia_id"])
    return dia_of, texts, dias


def run_live(
    data: Path,
    database_url: str,
    only: tuple[int, ...] | None,
    embed_model: str,
    engine: str,
    ks: tuple[int, ...],
    clients: int,
    drain_timeout: float,
) -> tuple[Tally, dict]:

    samples = json.loads(data.read_text())
    chosen = [(i, s) for i, s in enumerate(samples) if only is None or i + 1 in only]
    tokens_of = {i: _admin(f"locomo-{s['sample_id']}") for i, s in chosen}
    env = _live.product_env(
        database_url, SPOKE_MEMORY_ENGINE=engine, SPOKE_MEMORY_EMBED_MODEL=embed_model
    )
    tally = Tally()
    facts: dict = {"conversations": 0, "turns": 0, "questions": defaultdict(int)}
    worker = _live.Worker(env, _live.LOGS / "worker.log")
    try:
        with _live.web(env, _live.LOGS / "web.log") as url:
            any_token = next(iter(tokens_of.values()))
            described = Client(url, any_token).op("memory.describe", {})
            facts["described"] = described
            t0 = time.monotonic()
            with ThreadPoolExecutor(max_workers=clients) as pool:
                written = dict(
                    zip(
                        [i for i, _ in chosen],
                        pool.map(
                            lambda item: ingest(
                                url, tokens_of[item[0]], f"locomo-{item[1]['sample_id']}", item[1]
                            ),
                            chosen,
                        ),
                        strict=True,
                    )
                )
            t1 = time.monotonic()
            left = _live.backlog(url)
            samples_ = _live.wait_drained(url, drain_timeout)
            t2 = time.monotonic()
            facts.update(
                ingest_s=t1 - t0,
                backlog_after_ingest=left,
                drain_after_ingest_s=t2 - t1,
                worker_mb=worker.memory_mb(),
                polls=len(samples_),
            )
            print(
                f"  written in {t1 - t0:.0f} s; backlog then {left}, drained {t2 - t1:.0f} s later",
                file=sys.stderr,
            )
            # Each web process loads the model on its first hybrid recall: warm both up.
            warm = Client(url, any_token)
            first_space = f"locomo-{chosen[0][1]['sample_id']}"
            for _ in range(8):
                warm.op(
                    "memory.recall",
                    {
                        "space_id": first_space,
                        "subject_id": chosen[0][1]["sample_id"],
                        "query": {"text": "warm up"},
                    },
                )
            for index, sample in chosen:
                split = "held-out" if index in HELD_OUT else "tuning"
                dia_of, texts, dias = written[index]
                client = Client(url, tokens_of[index])
                space_id, subject_id = f"locomo-{sample['sample_id']}", sample["sample_id"]
                facts["conversations"] += 1
                facts["turns"] += len(texts)
                for question, category, evidence in questions(
                    sample, texts, dias, facts, tally, split, ks
                ):
                    for k in ks:
                        t = time.perf_counter()
                        answer = client.op(
                            "memory.recall",
                            {
                                "space_id": space_id,
                                "subject_id": subject_id,
                                "query": {"text": question},
                                "budget": {"max_records": k},
                            },
                        )["recall"]
                        tally.latency["live"].append(1000 * (time.perf_counter() - t))
                        facts["engine"] = answer["engine_policy_version"]
                        returned = [dia_of[r["record"]["record_id"]] for r in answer["results"]]
                        tally.add("live", k, category, evidence, returned)
                        tally.add(f"live@{split}", k, category, evidence, returned)
                print(f"  {sample['sample_id']}: {len(texts)} turns asked", file=sys.stderr)
            facts["worker_mb_end"] = worker.memory_mb()
    finally:
        worker.stop()
    return tally, facts


def table(tally: Tally, facts: dict, ks: tuple[int, ...]) -> str:
    from bench._hybrid_common import percentile
    from bench.locomo import CATEGORIES

    engine = facts.get("engine", "?")
    main = (1, 2, 3, 4)
    lines = [
        "| system | k | recall@k | hit@k | R@k multi-hop | R@k temporal | R@k open-domain | R@k single-hop | R@k adversarial (apart) |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for system in (BASELINE, "live"):
        for k in ks:
            r, h, _ = tally.figure(system, k, main)
            per = [tally.figure(system, k, (c,))[0] for c in (1, 2, 3, 4, 5)]
            name = f"{engine}, live" if system == "live" else system
            lines.append(
                f"| {name} | {k} | {r:.1f} | {h:.1f} | "
                + " | ".join(f"{v:.1f}" for v in per)
                + " |"
            )
    k = 10 if 10 in ks else ks[0]
    lines += [
        "",
        f"| system | recall@{k}, tuning conversations (1–3) | recall@{k}, held out (4–5) | all asked "
        "| held-out multi-hop | temporal | open-domain | single-hop |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for system in (BASELINE, "live"):
        name = f"{engine}, live" if system == "live" else system
        tuned = tally.figure(f"{system}@tuning", k, main)[0]
        held = tally.figure(f"{system}@held-out", k, main)[0]
        every = tally.figure(system, k, main)[0]
        per = [tally.figure(f"{system}@held-out", k, (c,))[0] for c in main]
        lines.append(
            f"| {name} | {tuned:.1f} | {held:.1f} | {every:.1f} | "
            + " | ".join(f"{v:.1f}" for v in per)
            + " |"
        )
    lat = tally.latency["live"]
    q = facts["questions"]
    mb = facts.get("worker_mb_end") or {}
    provider = facts["described"]["provider"]
    model = provider.get("extensions", {}).get("spoke-recall", {}).get("embedding_model", {})
    lines += [
        "",
        f"memory.recall over HTTP ({engine}): p50 {percentile(lat, 0.5):.1f} ms, "
        f"p95 {percentile(lat, 0.95):.1f} ms, {len(lat)} calls.",
        f"{facts['conversations']} conversations, {facts['turns']} turns written one "
        "`memory.records.create` request each, questions: "
        + ", ".join(f"{CATEGORIES[c]} {q[c]}" for c in sorted(q))
        + f". Written in {facts['ingest_s']:.0f} s; the embedding backlog (/readyz) was "
        f"{facts['backlog_after_ingest']} then and 0 {facts['drain_after_ingest_s']:.0f} s later.",
        f"Embedding model (memory.describe): {model.get('name')} ({str(model.get('digest'))[:19]}…)."
        f" Worker RSS at the end: pool child "
        f"{mb.get('child_rss', float('nan')):.0f} MiB (peak {mb.get('child_peak', float('nan')):.0f}), "
        f"all its processes {mb.get('all_rss', float('nan')):.0f} MiB.",
    ]
    return "\n".join(lines)
