"""Recall right after an import, as a client sees it (issue 49):
`python -m bench.recall_after_import --database-url postgres://…/spoke_x_bench [--tree DIR …]`.

For each code tree (default: this one; `--tree /work/main` serves the code before the change):
a fresh database migrated by that tree, the product served from it as the README deploys it
(gunicorn -c spokememory/gunicorn_conf.py, 2 workers × 4 threads; one Celery worker; the
semantic extra; hybrid/6, the default), one subject of `--records` records loaded by an import (staged into
the database as staging leaves it, then `memory.imports.activate` over HTTP, run by the worker),
the embedding backlog drained by the worker (/readyz), then over HTTP on one keep-alive
connection: the first recall, warm recalls alternated with `records.get` of a random record
(p50/p95 of each), and recalls right after a `records.create` in the subject. Then each of
`--engines` (default engine/2) the same way on
the same database (the web server restarted with it). No ANALYZE from the bench: whatever
statistics the database has are the ones the product left. The machine's load (uptime) is noted
before and after."""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

import httpx

from bench import _live
from bench._hybrid_common import ROOT, fresh_database, percentile
from bench._live import HEALTH_TOKEN

# The synthetic corpus: every record holds "the subject mentioned something worth keeping", so
# these queries' terms match the whole subject (the lexical head ranks every record).
QUERIES = [
    "what did the subject mention about item 42",
    "something worth keeping",
    "the plan the subject mentioned",
    "item 977 preference",
    "what was worth keeping about record 12",
    "a fact the subject mentioned",
    "event item 300",
    "note about item 5",
]


LOCOMO = ROOT.parent / "shared" / "data" / "locomo-dev.json"


def locomo_corpus(path: Path) -> tuple[list[str], list[str]]:
    """LoCoMo's turns as record texts (cycled to fill the subject, as a long history repeats its
    words) and its questions of categories 1-4 as queries, in a fixed shuffled order: a query
    matches the few records that share its words, as in the issue's measurement."""
    from bench.locomo import turn_text, turns_of

    samples = json.loads(path.read_text())
    texts = [turn_text(t) for s in samples for _n, _d, t in turns_of(s["conversation"])]
    queries = [q["question"] for s in samples for q in s["qa"] if q.get("category") in (1, 2, 3, 4)]
    random.Random(49).shuffle(queries)  # noqa: S311 - a fixed order
    return texts, queries


def load() -> str:
    return Path("/proc/loadavg").read_text().split(" ", 3)[:3].__str__()


def env_for(tree: Path, url: str, engine: str, broker: str) -> dict[str, str]:
    env = dict(os.environ)
    env.pop("SPOKE_MEMORY_EMBED_MODEL", None)
    env.update(
        PYTHONPATH=f"{tree}:{tree}/clients/python",
        DJANGO_SETTINGS_MODULE="spokememory.settings",
        DATABASE_URL=url,
        CELERY_BROKER_URL=broker,
        SECRET_KEY="bench-only-secret-key-not-for-production-use",
        SPOKE_MEMORY_RATE="100000000/min",
        SPOKE_MEMORY_VAR_DIR=str(ROOT / "var" / "bench-rai"),
        SPOKE_MEMORY_ENGINE=engine,
        GUNICORN_ACCESS_LOG="/dev/null",
        GUNICORN_LOG_LEVEL="warning",
        WEB_CONCURRENCY="2",
        GUNICORN_THREADS="4",
        # a first recall of the code before issue 49 can take longer than the default 60 s:
        # measured, not killed
        GUNICORN_TIMEOUT="600",
        HF_HUB_OFFLINE="1",
        # /readyz shows the embedding backlog only to the monitoring system's token: without it
        # the field is absent, and the bench measured while the drain was still embedding
        SPOKE_MEMORY_HEALTH_TOKEN=HEALTH_TOKEN,
    )
    return env


@contextmanager
def served(tree: Path, env: dict[str, str], port: int, log: Path, worker: bool):
    """The product from `tree` (bench/_live.py): gunicorn on `port` and, with `worker`, one
    Celery worker, both appending to `log`; yields the base URL."""
    started = (
        _live.Worker(env, log, tree=tree, name=f"rai{port}@%h", append=True) if worker else None
    )
    try:
        with _live.web(env, log, tree=tree, port=port, timeout=300.0, append=True) as base:
            yield base
    finally:
        if started is not None:
            started.stop()


def setup(tree: Path, url: str, n: int, texts_file: Path | None) -> tuple[str, str]:
    """Migrate with the tree's code; a space, an admin token and a verified import of n records
    (in a child process of the tree's code: Django is set up once per process); the records'
    texts from `texts_file` (a JSON list) when given."""
    env = env_for(tree, url, "engine/2", "memory://")  # served by every tree
    subprocess.run(  # noqa: S603
        [sys.executable, "manage.py", "migrate", "-v", "0"], cwd=tree, env=env, check=True
    )
    code = (
        "import django, json; django.setup()\n"
        "from tests import factories\n"
        "from bench.transfer import write_import\n"
        "space = factories.make_space('s1')\n"
        "principal, token = factories.make_admin(space, 'bench admin', token_label='bench')\n"
        f"texts = json.load(open({str(texts_file)!r})) if {bool(texts_file)} else None\n"
        f"imp, _ = write_import(principal, 's1', {n}, texts=texts)\n"
        "print(json.dumps([token, imp]))\n"
    )
    env["PYTHONPATH"] = f"{ROOT}:{tree}"  # this bench's loader, the tree's models
    out = subprocess.run(  # noqa: S603
        [sys.executable, "-c", code],
        cwd=tree,
        env=env,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    token, imp = json.loads(out.strip().splitlines()[-1])
    return token, imp


def backlog(base: str) -> int:
    """`embedding_backlog` from /readyz, as the monitoring system reads it (hybrid/6 embeds:
    the field's absence is an error, not an empty backlog)."""
    body = httpx.get(
        base + "/readyz", timeout=30.0, headers={"Authorization": f"Bearer {HEALTH_TOKEN}"}
    ).json()
    if "embedding_backlog" not in body:
        raise SystemExit(f"/readyz shows no embedding backlog: {body}")
    return int(body["embedding_backlog"])


def sample_ids(http: httpx.Client) -> list[str]:
    """The ids of the subject's 50 newest records, for the `records.get` beside each recall: read
    with `records.list`, never a recall, so that the first recall measured is the first the
    web process serves (a recall here loaded the vector cache and read the postings, and the
    "first recall" was the second)."""
    answer = http.post(
        "/v1/ops/memory.records.list",
        content=json.dumps({"space_id": "s1", "subject_id": "u1", "page_size": 50}),
    )
    if answer.status_code != 200:
        raise SystemExit(f"records.list answered {answer.status_code}: {answer.text[:300]}")
    return [r["record_id"] for r in answer.json()["records"]]


def measure(http: httpx.Client, ids: list[str], rounds: int, queries: list[str]) -> dict:
    def timed(name: str, body: dict) -> float:
        t = time.perf_counter()
        answer = http.post(f"/v1/ops/{name}", content=json.dumps(body))
        took = (time.perf_counter() - t) * 1000
        if answer.status_code != 200:
            raise SystemExit(f"{name} answered {answer.status_code}: {answer.text[:300]}")
        return took

    def recall(q: str) -> float:
        return timed("memory.recall", {"space_id": "s1", "subject_id": "u1", "query": {"text": q}})

    rnd = random.Random(49)  # noqa: S311 - sampling
    first = recall(queries[0])
    recalls, gets = [], []
    for i in range(rounds):
        recalls.append(recall(queries[(i + 1) % len(queries)]))
        gets.append(timed("memory.records.get", {"space_id": "s1", "record_id": rnd.choice(ids)}))
    after = []
    for i in range(3):
        timed(
            "memory.records.create",
            {
                "space_id": "s1",
                "subject_id": "u1",
                "kind": "note",
                "content": {"text": f"a new note {i} the subject mentioned right now"},
                "placement": {"scope": "shared"},
            },
        )
        after.append(recall(queries[(rounds + 1 + i) % len(queries)]))
        time.sleep(2)  # the write's vector drained meanwhile (or not): the next write follows
    return {
        "first_recall_ms": round(first, 1),
        "recall_p50_ms": round(percentile(recalls, 0.5), 1),
        "recall_p95_ms": round(percentile(recalls, 0.95), 1),
        "get_p95_ms": round(percentile(gets, 0.95), 1),
        "after_write_ms": [round(x, 1) for x in after],
        "after_write_max_ms": round(max(after), 1),
    }


def one(
    tree: Path,
    url: str,
    n: int,
    rounds: int,
    broker: str,
    port: int,
    corpus: str,
    locomo: Path = LOCOMO,
    engines: tuple[str, ...] = ("engine/2",),
    first: str = "hybrid/6",
) -> dict:
    out: dict = {"tree": str(tree), "corpus": corpus, "records": n, "load_before": load()}
    texts_file = None
    queries = QUERIES
    if corpus == "locomo":
        texts, queries = locomo_corpus(locomo)
        texts_file = ROOT / "var" / "bench-rai" / "locomo-texts.json"
        texts_file.parent.mkdir(parents=True, exist_ok=True)
        texts_file.write_text(json.dumps(texts))
    out["commit"] = subprocess.run(  # noqa: S603
        ["git", "rev-parse", "--short", "HEAD"],  # noqa: S607
        cwd=tree,
        capture_output=True,
        text=True,
    ).stdout.strip()
    fresh_database(url, "")
    token, imp = setup(tree, url, n, texts_file)
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
    log = ROOT / "var" / "bench-rai" / f"{tree.name}.log"
    env = env_for(tree, url, first, broker)
    with served(tree, env, port, log, worker=True) as base:
        http = httpx.Client(base_url=base, headers=headers, timeout=600.0)
        from memory.flags import ALL_FLAGS

        session = http.post("/v1/connect", content=json.dumps({"capabilities": ALL_FLAGS}))
        assert session.status_code == 200, session.text
        http.headers["Spoke-Session"] = session.json()["session"]["session_id"]
        t = time.monotonic()
        answer = http.post(
            "/v1/ops/memory.imports.activate",
            content=json.dumps({"space_id": "s1", "import_id": imp}),
        )
        assert answer.status_code == 200, answer.text
        receipt = answer.json()["receipt"]["receipt_id"]
        while True:
            got = http.post(
                "/v1/ops/memory.receipts.get", content=json.dumps({"receipt_id": receipt})
            ).json()
            status = got.get("receipt", got).get("status")
            if status in ("committed", "failed", "rejected"):
                break
            time.sleep(0.5)
        assert status == "committed", got
        out["activation_s"] = round(time.monotonic() - t, 1)
        t = time.monotonic()
        while backlog(base):
            time.sleep(1)
        out["drain_s"] = round(time.monotonic() - t, 1)
        ids = sample_ids(http)
        out[first] = measure(http, ids, rounds, queries)
    for engine in engines:
        # each further engine on the same database, the web server restarted with it (and the
        # worker, for a hybrid: a write's vector is drained as in the first phase)
        env = env_for(tree, url, engine, broker)
        with served(tree, env, port, log, worker=engine.startswith("hybrid")) as base:
            http = httpx.Client(base_url=base, headers=headers, timeout=600.0)
            out[engine] = measure(http, ids, rounds, queries)
    out["load_after"] = load()
    return out


def main(argv: list[str] | None = None) -> None:
    import signal

    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # stop the servers on the way out
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--database-url", required=True, help="postgres://…/NAME_bench (dropped)")
    p.add_argument("--tree", action="append", type=Path, help="code tree(s) to serve")
    p.add_argument("--records", type=int, default=20_000)
    p.add_argument("--rounds", type=int, default=200)
    p.add_argument("--port", type=int, default=8190)
    p.add_argument(
        "--broker", default=os.environ.get("CELERY_BROKER_URL", "redis://127.0.0.1:6379/5")
    )
    p.add_argument(
        "--corpus",
        choices=("synthetic", "locomo"),
        default="locomo",
        help="records' texts and queries: LoCoMo's turns and questions (selective, as the issue "
        "measured), or numbered texts every query matches",
    )
    p.add_argument(
        "--locomo",
        type=Path,
        default=LOCOMO,
        help="the LoCoMo dev file (shared/data beside the repo)",
    )
    p.add_argument(
        "--engine",
        default="hybrid/6",
        help="the engine served while the import is activated and drained (hybrid/4 for a tree "
        "before issue 44's last round)",
    )
    p.add_argument(
        "--engines",
        default="engine/2",
        help="engines measured after hybrid/6 on the same database, comma-separated",
    )
    p.add_argument("--out", type=Path)
    args = p.parse_args(argv)
    runs = [
        one(
            tree.resolve(),
            args.database_url,
            args.records,
            args.rounds,
            args.broker,
            args.port,
            args.corpus,
            args.locomo,
            tuple(e.strip() for e in args.engines.split(",") if e.strip()),
            args.engine,
        )
        for tree in (args.tree or [ROOT])
    ]
    text = json.dumps(runs, indent=1)
    print(text)
    if args.out:
        args.out.write_text(text + "\n")


if __name__ == "__main__":
    main()
