"""A principal with many grants of many shapes (issue 39; memory/access.py `placement_q`): the
time of its `memory.records.list` (whose COUNT reads every covered row of the space) and of a
`memory.recall` on one subject, in process, against an anchor holding one grant over the whole
space, on the same rows. BENCH_SHAPES_SUBJECTS (64) subjects, 16 contexts; each subject has
BENCH_SHAPES_PER_PLACE (10) records in every context and as many shared (64 x 17 x 10). The
many-grant principal holds 64 grants (limits.max_grants_per_principal): grant i on subject i in
its own pair of contexts (64 placements: 64 terms of the coverage filter before issue 39).

    python bench/grant_shapes.py --tree BEFORE --tree AFTER [--rounds 2] [--out FILE.md]

Each tree runs in a child process of its own code (PYTHONPATH=tree) on a fresh database of its
own (BENCH_DATABASE_URL with `_shapes<i>` appended, migrated by that tree), the trees
interleaved `--rounds` times. Run as a file, not `-m bench...`: the child imports the tree's
`memory`, not this checkout's."""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from itertools import combinations
from pathlib import Path

HERE = Path(__file__).resolve()
DATABASE_URL = os.environ.get(
    "BENCH_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/spoke_bench"
)
SUBJECTS = int(os.environ.get("BENCH_SHAPES_SUBJECTS", "64"))
CALLS = int(os.environ.get("BENCH_SHAPES_CALLS", "40"))
PER_PLACE = int(os.environ.get("BENCH_SHAPES_PER_PLACE", "10"))
CONTEXTS = [f"c{i}" for i in range(16)]


def serve() -> dict:
    """In the child: seed, then time the calls (run from the tree, against its database)."""
    import django

    django.setup()
    from memory.models import Principal, Space, Subject
    from memory.ops.base import call
    from memory.services import transfer_load as load
    from tests import factories

    space = factories.make_space("shapes")
    admin, _ = factories.make_admin(space, "shapes-admin")
    subjects = [f"u{i}" for i in range(SUBJECTS)]
    factories.ensure_subjects(admin, "shapes", subjects)
    loader = load.Loader(space)
    for subject_id in subjects:
        loader.subjects[subject_id] = Subject.objects.get(space=space, subject_id=subject_id).pk
    objects = []
    places = [{"scope": "context", "context_id": c} for c in CONTEXTS] + [{"scope": "shared"}]
    for s in subjects:
        for n in range(len(places) * PER_PLACE):
            placement = places[n % len(places)]
            at = f"2026-01-01T{n // 3600:02d}:{n // 60 % 60:02d}:{n % 60:02d}Z"
            objects.append(
                {
                    "type": "record",
                    "data": {
                        "subject_id": s,
                        "record_id": f"rec_{s}x{n:03d}",
                        "kind": "note",
                        "content": {"text": f"{s} likes tea number {n}"},
                        "placement": placement,
                        "provenance": {
                            "source": "authored",
                            "author_principal_id": admin.principal_id,
                            "created_at": at,
                        },
                        "revision": 1,
                        "created_at": at,
                        "updated_at": at,
                        "tombstone": None,
                        "extensions": {},
                    },
                }
            )
    loader.add(objects)
    loader.flush()
    from django.db import connection

    with connection.cursor() as cur:
        cur.execute("ANALYZE")
    many, _ = factories.make_principal("shapes-many")
    one, _ = factories.make_principal("shapes-one")
    pairs = list(combinations(CONTEXTS, 2))
    for i in range(64):
        call(
            Principal.objects.get(pk=admin.principal_id),
            "memory.grants.grant",
            {
                "space_id": "shapes",
                "grantee_principal_id": many.principal_id,
                "capabilities": ["records_read", "recall"],
                "subject_ids": [subjects[i % SUBJECTS]],
                "context_ids": list(pairs[i]),
            },
        )
    call(
        Principal.objects.get(pk=admin.principal_id),
        "memory.grants.grant",
        {
            "space_id": "shapes",
            "grantee_principal_id": one.principal_id,
            "capabilities": ["records_read", "recall"],
            "shared_access": True,
        },
    )
    assert Space.objects.filter(pk="shapes").exists()
    cases = {
        "records.list, 64 grants of 64 shapes": (many, "memory.records.list", {}),
        "records.list, 1 grant over the space": (one, "memory.records.list", {}),
        "recall u0, 64 grants of 64 shapes": (
            many,
            "memory.recall",
            {"subject_id": "u0", "query": {"text": "tea"}},
        ),
        "recall u0, 1 grant over the space": (
            one,
            "memory.recall",
            {"subject_id": "u0", "query": {"text": "tea"}},
        ),
    }
    out = {}
    for name, (who, op, body) in cases.items():
        principal = Principal.objects.get(pk=who.principal_id)
        request = {"space_id": "shapes", **body}
        answer = call(principal, op, request)
        total = answer.get("total_authorized")
        times = []
        for _ in range(CALLS):
            t = time.perf_counter()
            call(principal, op, request)
            times.append(time.perf_counter() - t)
        out[name] = {"p50_ms": round(statistics.median(times) * 1000, 2), "total": total}
    return out


def prepare(tree: Path, url: str) -> dict[str, str]:
    import psycopg

    name = url.rsplit("/", 1)[1]
    with psycopg.connect(url.rsplit("/", 1)[0] + "/postgres", autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')
    env = {
        **os.environ,
        "DATABASE_URL": url,
        "PYTHONPATH": str(tree),
        "DJANGO_SETTINGS_MODULE": "spokememory.settings",
        "SECRET_KEY": "bench-only-secret-key-not-for-production-use",
        "SPOKE_MEMORY_RATE": "100000000/min",
        "SPOKE_MEMORY_ENGINE": "engine/2",
        "LOG_LEVEL": "ERROR",
    }
    subprocess.run(  # noqa: S603 - our interpreter, fixed arguments
        [sys.executable, "manage.py", "migrate", "-v", "0"], cwd=tree, env=env, check=True
    )
    return env


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--tree", action="append", type=Path, default=[])
    p.add_argument("--rounds", type=int, default=1)
    p.add_argument("--out", type=Path)
    p.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args(argv or [])
    if args.serve:
        print(json.dumps(serve()))
        return
    trees = [t.resolve() for t in args.tree] or [HERE.parent.parent]
    runs = []
    for n in range(args.rounds):
        for i, tree in enumerate(trees):
            env = prepare(tree, f"{DATABASE_URL}_shapes{i}")
            got = subprocess.run(  # noqa: S603
                [sys.executable, str(HERE), "--serve"],
                cwd=tree,
                env=env,
                check=True,
                capture_output=True,
                text=True,
            )
            load = Path("/proc/loadavg").read_text().split()[0]
            runs.append({"round": n + 1, "tree": str(tree), "load": load, **json.loads(got.stdout)})
            print(json.dumps(runs[-1]), flush=True)
    if args.out:
        lines = ["| round | tree | case | p50 ms | total | load |", "|---|---|---|---|---|---|"]
        for run in runs:
            for case, row in run.items():
                if isinstance(row, dict):
                    lines.append(
                        f"| {run['round']} | {Path(run['tree']).name} | {case} | "
                        f"{row['p50_ms']} | {row['total']} | {run['load']} |"
                    )
        args.out.write_text("\n".join(lines) + "\n")
        args.out.with_suffix(".json").write_text(json.dumps(runs, indent=1) + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])
