"""Recall quality on LoCoMo (Maharana et al., ACL 2024): `python -m bench.locomo [--write-docs]`.

For each conversation of `../shared/data/locomo-dev.json`: a space and a subject; every turn a
retained record written through the ops layer (`memory.records.create`, text
"<speaker>: <text>", placed in the context `session_<n>`, the session date in
`content.structured`). Every question is then asked through `memory.recall` with max_records
k ∈ {5, 10, 20}, once per engine (engine/2, hybrid/6, or those `--engines` names;
the hybrid ones with
the model `--embed-model` names, default the bundled all-MiniLM-L6-v2), and plain BM25 (rank-bm25 BM25Okapi,
default parameters, lower-cased alphanumeric tokens) ranks the same turn texts in the same run.
recall@k = |evidence ∩ returned| / |evidence|; hit@k = any evidence returned; MRR = the mean of
1 / the rank of the first evidence in the k=20 answer. Categories 1–4 make the overall figures;
category 5 (adversarial) is reported apart. hybrid/6's calibration is read at its documented
threshold: precision and recall of "the top result is evidence" (categories 1–4) and the share
of adversarial questions whose top score is below it. Needs the `semantic` and
`bench` extras. Runs on a throwaway database (see `--database-url`)."""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from collections import defaultdict
from pathlib import Path

from bench._hybrid_common import (
    ROOT,
    django_on,
    fresh_database,
    percentile,
    public_url,
    space_with_admin,
)

KS = (5, 10, 20)
ENGINES = ("engine/2", "hybrid/6")
# hybrid/2's and hybrid/3's fusion constants were chosen on the first three conversations
# (bench.tune_hybrid2, bench.tune_hybrid3_fusion);
# the last two are held out, and reported apart.
HELD_OUT = (3, 4)
BASELINE = "bm25"
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
DEFAULT_DATA = ROOT.parent / "shared" / "data" / "locomo-dev.json"
# --write-docs records the run in bench/results/ (one file per day; docs/performance.md links it).
DOCS = ROOT / "bench" / "results" / f"{time.strftime('%Y-%m-%d', time.gmtime())}-recall-bench.md"
BEGIN, END = "<!-- locomo:begin -->", "<!-- locomo:end -->"
TOKEN = re.compile(r"[a-z0-9]+")


def tokens(text: str) -> list[str]:
    return TOKEN.findall(text.lower())


def turns_of(conversation: dict):
    """(session number, session date, turn) in dialogue order."""
    n = 1
    while f"session_{n}" in conversation:
        date = conversation.get(f"session_{n}_date_time", "")
        for turn in conversation[f"session_{n}"]:
            yield n, date, turn
        n += 1


def evidence_of(qa: dict, known: set[str]) -> set[str]:
    ids = set()
    for entry in qa.get("evidence", []):
        ids.update(part.strip() for part in entry.split(";"))
    return ids & known


def turn_text(turn: dict) -> str:
    return f"{turn['speaker']}: {turn['text']}"


def create_request(space_id: str, subject_id: str, session: int, date: str, turn: dict) -> dict:
    """The `memory.records.create` request that stores one turn."""
    return {
        "space_id": space_id,
        "subject_id": subject_id,
        "kind": "note",
        "content": {
            "text": turn_text(turn),
            "structured": {"dia_id": turn["dia_id"], "session": session, "session_date": date},
        },
        "placement": {"scope": "context", "context_id": f"session_{session}"},
    }


def ingest(sample: dict) -> tuple[object, str, str, dict[str, str], list[str], list[str]]:
    """Write one conversation through the ops layer. Returns the principal, space and subject
    ids, record_id → dia_id, and the turn texts with their dia_ids in order (for BM25)."""
    from memory.ops.base import call

    space_id = f"locomo-{sample['sample_id']}"
    subject_id = sample["sample_id"]
    principal = space_with_admin(space_id)
    call(principal, "memory.subjects.ensure", {"space_id": space_id, "subject_id": subject_id})
    dia_of: dict[str, str] = {}
    texts, dias = [], []
    for session, date, turn in turns_of(sample["conversation"]):
        text = turn_text(turn)
        receipt = call(
            principal,
            "memory.records.create",
            create_request(space_id, subject_id, session, date, turn),
        )["receipt"]
        record_id = next(ref["id"] for ref in receipt["refs"] if ref["type"] == "record")
        dia_of[record_id] = turn["dia_id"]
        texts.append(text)
        dias.append(turn["dia_id"])
    return principal, space_id, subject_id, dia_of, texts, dias


def questions(sample: dict, texts: list[str], dias: list[str], facts, tally, split: str, ks):
    """(question, category, evidence) of each of the conversation's questions that has evidence,
    each counted in `facts` and graded for the BM25 baseline (its latency tallied) first."""
    import numpy as np
    from rank_bm25 import BM25Okapi

    bm25 = BM25Okapi([tokens(t) for t in texts])
    known = set(dias)
    for qa in sample["qa"]:
        evidence = evidence_of(qa, known)
        if not evidence:
            continue
        category = int(qa["category"])
        facts["questions"][category] += 1
        t0 = time.perf_counter()
        scores = bm25.get_scores(tokens(qa["question"]))
        order = np.lexsort((np.arange(len(texts)), -scores))  # score desc, then turn order
        tally.latency[BASELINE].append(1000 * (time.perf_counter() - t0))
        for k in ks:
            top = [dias[i] for i in order[:k]]
            tally.add(BASELINE, k, category, evidence, top)
            tally.add(f"{BASELINE}@{split}", k, category, evidence, top)
        yield qa["question"], category, evidence


class Tally:
    def __init__(self) -> None:
        # (system, k, category) → [recall sum, hits, questions]
        self.sums: dict[tuple[str, int, int], list[float]] = defaultdict(lambda: [0.0, 0, 0])
        self.latency: dict[str, list[float]] = defaultdict(list)
        # (system, category) → reciprocal rank of the first evidence in the k=20 answer
        self.rr: dict[tuple[str, int], list[float]] = defaultdict(list)
        # system → (category, the top result's score, whether the top result is evidence)
        self.tops: dict[str, list[tuple[int, float, bool]]] = defaultdict(list)

    def add(
        self, system: str, k: int, category: int, evidence: set[str], returned: list[str]
    ) -> None:
        found = len(evidence & set(returned))
        cell = self.sums[(system, k, category)]
        cell[0] += found / len(evidence)
        cell[1] += 1 if found else 0
        cell[2] += 1

    def mrr(self, system: str, categories: tuple[int, ...]) -> float:
        values = [v for c in categories for v in self.rr.get((system, c), [])]
        return sum(values) / len(values) if values else float("nan")

    def calibration(self, system: str, threshold: float) -> tuple[float, float, float]:
        """Precision and recall of "the top result is evidence" read at `threshold` (categories
        1–4), and the share of adversarial questions (5) whose top score is below it."""
        main = [(s, ok) for c, s, ok in self.tops.get(system, []) if c != 5]
        above = [ok for s, ok in main if s >= threshold]
        good = sum(ok for _, ok in main)
        adversarial = [s for c, s, _ in self.tops.get(system, []) if c == 5]
        nan = float("nan")
        return (
            sum(above) / len(above) if above else nan,
            sum(above) / good if good else nan,
            sum(1 for s in adversarial if s < threshold) / len(adversarial) if adversarial else nan,
        )

    def figure(self, system: str, k: int, categories: tuple[int, ...]) -> tuple[float, float, int]:
        r = h = n = 0.0
        for c in categories:
            cell = self.sums.get((system, k, c))
            if cell:
                r, h, n = r + cell[0], h + cell[1], n + cell[2]
        return (100 * r / n, 100 * h / n, int(n)) if n else (float("nan"), float("nan"), 0)


def run(
    data: Path,
    limit: int | None,
    engines: tuple[str, ...] = ENGINES,
    only: tuple[int, ...] | None = None,
) -> tuple[Tally, dict]:
    from django.conf import settings

    from memory.ops.base import call

    samples = json.loads(data.read_text())[:limit]
    tally = Tally()
    facts = {
        "conversations": 0,
        "turns": 0,
        "questions": defaultdict(int),
        "ingest_s": 0.0,
        "embed_s": 0.0,
    }
    for index, sample in enumerate(samples):
        if only is not None and index + 1 not in only:
            continue
        split = "held-out" if index in HELD_OUT else "tuning"
        t0 = time.perf_counter()
        principal, space_id, subject_id, dia_of, texts, dias = ingest(sample)
        t1 = time.perf_counter()
        # Writes queue their vectors; the provider's worker embeds them after commit. Here the
        # backlog is drained in-process before any question, so every record has its vector.
        from memory.services import hybrid_store

        hybrid_store.drain()
        assert hybrid_store.backlog() == 0
        facts["ingest_s"] += t1 - t0
        facts["embed_s"] += time.perf_counter() - t1
        facts["conversations"] += 1
        facts["turns"] += len(texts)
        for question, category, evidence in questions(sample, texts, dias, facts, tally, split, KS):
            for engine in engines:
                settings.SPOKE_MEMORY_ENGINE = engine
                for k in KS:
                    t0 = time.perf_counter()
                    answer = call(
                        principal,
                        "memory.recall",
                        {
                            "space_id": space_id,
                            "subject_id": subject_id,
                            "query": {"text": question},
                            "budget": {"max_records": k},
                        },
                    )["recall"]
                    tally.latency[engine].append(1000 * (time.perf_counter() - t0))
                    if answer["engine_policy_version"] != engine:
                        raise SystemExit(
                            f"recall answered {answer['engine_policy_version']}, not {engine}"
                        )
                    returned = [dia_of[r["record"]["record_id"]] for r in answer["results"]]
                    tally.add(engine, k, category, evidence, returned)
                    tally.add(f"{engine}@{split}", k, category, evidence, returned)
                    if k == max(KS):
                        first = next((i for i, d in enumerate(returned, 1) if d in evidence), None)
                        for name in (engine, f"{engine}@{split}"):
                            tally.rr[(name, category)].append(1 / first if first else 0.0)
                            top = answer["results"][0] if answer["results"] else None
                            tally.tops[name].append(
                                (
                                    category,
                                    top["score"] if top else 0.0,
                                    bool(top and returned[0] in evidence),
                                )
                            )
        print(f"  {sample['sample_id']}: {len(texts)} turns", file=sys.stderr)
    return tally, facts


def table(tally: Tally, facts: dict, engines: tuple[str, ...] = ENGINES) -> str:
    main = (1, 2, 3, 4)
    lines = [
        "| system | k | recall@k | hit@k | R@k multi-hop | R@k temporal | R@k open-domain | R@k single-hop | R@k adversarial (apart) |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for system in (BASELINE, *engines):
        for k in KS:
            r, h, _ = tally.figure(system, k, main)
            per = [tally.figure(system, k, (c,))[0] for c in (1, 2, 3, 4, 5)]
            lines.append(
                f"| {system} | {k} | {r:.1f} | {h:.1f} | "
                + " | ".join(f"{v:.1f}" for v in per)
                + " |"
            )
    lines += [
        "",
        "| system | recall@10, tuning conversations (1–3) | recall@10, held out (4–5) | all five |",
        "|---|---|---|---|",
    ]
    for system in (BASELINE, *engines):
        tuned = tally.figure(f"{system}@tuning", 10, main)[0]
        held = tally.figure(f"{system}@held-out", 10, main)[0]
        every = tally.figure(system, 10, main)[0]
        lines.append(f"| {system} | {tuned:.1f} | {held:.1f} | {every:.1f} |")
    lines += [
        "",
        "| system | MRR (k=20) | multi-hop | temporal | open-domain | single-hop | held out (4–5) |",
        "|---|---|---|---|---|---|---|",
    ]
    for system in engines:
        cells = [tally.mrr(system, main)] + [tally.mrr(system, (c,)) for c in main]
        cells.append(tally.mrr(f"{system}@held-out", main))
        lines.append(f"| {system} | " + " | ".join(f"{v:.3f}" for v in cells) + " |")
    if "hybrid/6" in engines:
        from memory.engine import hybrid6

        at = hybrid6.THRESHOLD
        lines += [
            "",
            f"hybrid/6's calibration at its documented threshold {at} (docs/recall.md#scores):",
            "",
            "| questions | precision of “the top result is evidence” | recall | "
            "adversarial: top score below the threshold |",
            "|---|---|---|---|",
        ]
        for label, name in (
            ("all", "hybrid/6"),
            ("tuning (1–3)", "hybrid/6@tuning"),
            ("held out (4–5)", "hybrid/6@held-out"),
        ):
            p, r, below = tally.calibration(name, at)
            lines.append(f"| {label} | {p:.2f} | {r:.2f} | {100 * below:.0f}% |")
    lines += ["", "| system | recall p50 ms | recall p95 ms | calls |", "|---|---|---|---|"]
    for system in (BASELINE, *engines):
        lat = tally.latency[system]
        lines.append(
            f"| {system} | {percentile(lat, 0.5):.1f} | {percentile(lat, 0.95):.1f} | {len(lat)} |"
        )
    q = facts["questions"]
    lines += [
        "",
        f"{facts['conversations']} conversations, {facts['turns']} turns (records), questions: "
        + ", ".join(f"{CATEGORIES[c]} {q[c]}" for c in sorted(q))
        + f". Ingest through the ops layer: {facts['ingest_s']:.0f} s; the embedding backlog"
        f" drained in batches after it: {facts['embed_s']:.0f} s.",
        "bm25 latency is in-memory scoring only (no database, no ops layer); the engines' figures are "
        "whole `memory.recall` calls through `memory.ops.base.call`.",
    ]
    return "\n".join(lines)


def write_docs(text: str, command: str, db_vendor: str) -> None:
    block = (
        f"{BEGIN}\n## Recall quality (LoCoMo)\n\nMade by `{command}` (database: {db_vendor}; "
        "see docs/recall-quality.md for what is measured and why).\n\n"
        f"{text}\n{END}"
    )
    old = DOCS.read_text() if DOCS.exists() else "# Performance\n"
    if BEGIN in old and END in old:
        head, rest = old.split(BEGIN, 1)
        new = head + block + rest.split(END, 1)[1]
    else:
        new = old.rstrip("\n") + "\n\n" + block + "\n"
    DOCS.parent.mkdir(parents=True, exist_ok=True)
    DOCS.write_text(new)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument(
        "--database-url",
        default=None,
        help="throwaway database: default a SQLite file var/bench-locomo.sqlite3; "
        "a PostgreSQL URL must name a database ending in _bench (it is recreated)",
    )
    parser.add_argument("--limit", type=int, default=None, help="only the first N conversations")
    parser.add_argument(
        "--embed-model",
        default="",
        help="SPOKE_MEMORY_EMBED_MODEL for the hybrid engines: a sentence-transformers model "
        "directory or a cached name (default: the bundled all-MiniLM-L6-v2)",
    )
    parser.add_argument(
        "--engines", default=",".join(ENGINES), help="comma-separated engine policies to ask"
    )
    parser.add_argument(
        "--conversations",
        default="",
        help="comma-separated 1-based conversation numbers (e.g. 4,5: the held-out ones); "
        "default every one",
    )
    parser.add_argument(
        "--write-docs", action="store_true", help=f"write the table into {DOCS.name}"
    )
    parser.add_argument(
        "--live",
        action="store_true",
        help="through the running product (bench.locomo_live): the web server and a Celery "
        "worker making the embeddings, writes and questions over HTTP, questions asked once "
        "/readyz shows no embedding backlog; one engine (--engines ONE, default the product's)",
    )
    parser.add_argument("--ks", default="5,10,20", help="max_records asked (--live: default 10)")
    parser.add_argument(
        "--clients", type=int, default=2, help="--live: conversations written at once"
    )
    parser.add_argument(
        "--drain-timeout", type=float, default=600.0, help="--live: seconds to wait for the backlog"
    )
    args = parser.parse_args(argv)
    if args.live:
        live(args)
        return
    # Ingest with a hybrid engine set, so the derived-copy writer queues each record's vector.
    if args.embed_model:
        os.environ["SPOKE_MEMORY_EMBED_MODEL"] = args.embed_model
    django_on(fresh_database(args.database_url, "bench-locomo"), "hybrid/6")
    from django.db import connection

    from memory.embedding import embed

    embed.configure()
    model = embed.identity()
    print(f"embedding model: {model.name} ({model.digest[:19]}…)", file=sys.stderr)
    engines = tuple(e.strip() for e in args.engines.split(",") if e.strip())
    only = tuple(int(n) for n in args.conversations.split(",") if n.strip()) or None
    tally, facts = run(args.data, args.limit, engines, only)
    text = table(tally, facts, engines) + f"\nEmbedding model: {model.name} ({model.digest[:19]}…)."
    print(text)
    if args.write_docs:
        command = "python -m bench.locomo --write-docs" + (
            f" --limit {args.limit}" if args.limit else ""
        )
        if args.embed_model:
            command += f" --embed-model {args.embed_model}"
        if engines != ENGINES:
            command += f" --engines {','.join(engines)}"
        if only:
            command += f" --conversations {','.join(map(str, only))}"
        if args.database_url:
            command += f" --database-url {public_url(args.database_url)}"  # no credentials
        write_docs(text, command, connection.vendor)


def live(args: argparse.Namespace) -> None:
    from bench import locomo_live

    engines = [e.strip() for e in args.engines.split(",") if e.strip()]
    if args.engines == ",".join(ENGINES):
        engines = []
    if len(engines) > 1:
        raise SystemExit("--live asks one engine: the product's default, or --engines ONE")
    engine = engines[0] if engines else ""
    ks = tuple(int(k) for k in args.ks.split(",")) if args.ks != "5,10,20" else (10,)
    only = tuple(int(n) for n in args.conversations.split(",") if n.strip()) or None
    url = fresh_database(args.database_url, "bench-locomo-live")
    from memory.embedding import embed

    django_on(url, engine or embed.default_engine())
    t0 = time.monotonic()
    tally, facts = locomo_live.run_live(
        args.data, url, only, args.embed_model, engine, ks, args.clients, args.drain_timeout
    )
    text = locomo_live.table(tally, facts, ks)
    print(text)
    print(f"whole run: {time.monotonic() - t0:.0f} s", file=sys.stderr)


if __name__ == "__main__":
    main()
