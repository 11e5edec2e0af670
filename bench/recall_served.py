"""Recall over HTTP on a database already loaded (issue 49): `python -m bench.recall_served
--database-url postgres://…/NAME_bench --token smk_… [--tree DIR] [--engine engine/2]`.

Serves `--tree` (default: this one) from the database as bench/recall_after_import.py serves it
(gunicorn 2 workers × 4 threads, no worker, `SPOKE_MEMORY_RATE` lifted), then runs that bench's
`measure` on subject u1 of space s1 with an admin token of the space: the first recall the
process serves, warm recalls of LoCoMo questions alternated with `records.get`, then recalls
right after a write (not drained: no worker runs). Used to put
two code trees side by side on the same loaded database, one after the other; it neither loads
nor drops anything."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import httpx

from bench import recall_after_import as rai
from bench._hybrid_common import ROOT


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--database-url", required=True)
    p.add_argument("--token", required=True, help="the loaded space's admin token")
    p.add_argument("--tree", type=Path, default=ROOT)
    p.add_argument("--engine", default="engine/2")
    p.add_argument("--rounds", type=int, default=200)
    p.add_argument("--port", type=int, default=8410)
    p.add_argument("--broker", default="redis://127.0.0.1:6379/10")
    p.add_argument("--locomo", type=Path, default=rai.LOCOMO)
    args = p.parse_args(argv)
    _, queries = rai.locomo_corpus(args.locomo)
    tree = args.tree.resolve()
    env = rai.env_for(tree, args.database_url, args.engine, args.broker)
    log = ROOT / "var" / "bench-rai" / "served.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    headers = {"Authorization": f"Bearer {args.token}", "Content-Type": "application/json"}
    with rai.served(tree, env, args.port, log, worker=False) as base:
        http = httpx.Client(base_url=base, headers=headers, timeout=600.0)
        from memory.flags import ALL_FLAGS

        session = http.post("/v1/connect", content=json.dumps({"capabilities": ALL_FLAGS}))
        http.headers["Spoke-Session"] = session.json()["session"]["session_id"]
        ids = rai.sample_ids(http)
        out = {
            "tree": str(tree),
            "engine": args.engine,
            **rai.measure(http, ids, args.rounds, queries),
        }
        out["load"] = rai.load()
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
