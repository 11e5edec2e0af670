"""Transfer benchmark: export a space of N records and re-import it into a fresh space.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/spoke_async \
        python -m bench.transfer --records 100000 300000 1000000

Each worker job (export, verify, activate) runs in a fresh child process exactly as a Celery
worker runs it (`memory.tasks.run_job(receipt_id)`), so the child's peak RSS (VmHWM) is the
worker's peak memory for that job alone; the figure printed next to it is the child's RSS after
Django start-up, before the job. Staging goes through the ops layer (`memory.ops.base.call`,
the same schema gates as the HTTP edge), chunk by chunk, as a client would.
Figures: records/s and MB/s of canonical chunk JSON for each phase.

Profiling: BENCH_PROFILE=DIR writes each job's cProfile (pstats) to DIR/<receipt_id>.prof;
BENCH_PATCH=FILE[:FILE...] runs each FILE's Python in each job process before the job (ad-hoc
timers, bench/activation_cpu.py, bench/activation_rss.py).

Activation alone, before/after in one run (issue 30):

    DATABASE_URL=... python -m bench.transfer --activation-only --records 100000 \
        --baseline-tree ../main-at-start --rounds 2

writes a verified import of N records (the records `fill` makes, as an export renders and chunks
them) straight into the database (no source space, export, staging or verification: those are
measured by the full run), then activates one copy of it with the code of `--baseline-tree` (a
checkout of the code to compare with, e.g. a git worktree; its job runs in a child process
started in that directory) and one with this tree's, alternating for `--rounds`, each into a
fresh space. `--reexport` also exports this tree's last activated space and checks its chunk
digests are the bundle's (lossless). Without `--baseline-tree` only this tree's activation runs
(one leg: the 1,000,000-record run, where a second leg would double a ~10-minute run)."""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from collections.abc import Iterator


def stage_export(principal, src: str, export_id: str, dst: str) -> tuple[dict, str, dict]:
    """Stage every chunk of a committed export of `src` into `dst`, as a client would (exports.get
    then imports.stage, chunk by chunk, through the ops layer). Returns the bundle, the import
    id and the last staging receipt (the one whose job verifies)."""
    from memory.ops.base import call

    first = call(
        principal, "memory.exports.get", {"space_id": src, "export_id": export_id, "ordinal": 0}
    )
    bundle = first["bundle"]
    staged = call(
        principal,
        "memory.imports.stage",
        {"space_id": dst, "bundle": bundle, "chunk": first["chunk"]},
    )["receipt"]
    import_id = staged["refs"][0]["id"]
    for ordinal in range(1, bundle["chunk_count"]):
        chunk = call(
            principal,
            "memory.exports.get",
            {"space_id": src, "export_id": export_id, "ordinal": ordinal},
        )["chunk"]
        staged = call(
            principal,
            "memory.imports.stage",
            {"space_id": dst, "import_id": import_id, "chunk": chunk},
        )["receipt"]
    return bundle, import_id, staged


def _setup_django() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "spokememory.settings")
    os.environ.setdefault(
        "SECRET_KEY", "bench-only-secret-key-not-for-production-use"
    )  # a throwaway database
    import django

    django.setup()


def peak_rss_mb() -> float:
    """This process's peak resident set (VmHWM). ru_maxrss is not used: on Linux it carries the
    parent's peak across fork+exec, which would hide the job's own figure."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def child(receipt_id: str) -> None:
    """Run one job like a worker and print its memory figures."""
    _setup_django()
    from django.db import connection

    from memory.engine import lexicon
    from memory.services.transfer_verify import object_validator
    from memory.tasks import run_job

    connection.ensure_connection()
    for patch in filter(None, os.environ.get("BENCH_PATCH", "").split(os.pathsep)):
        exec(open(patch).read(), {})  # noqa: S102
    object_validator()  # built once per worker process: part of the baseline, not of the job
    lexicon.tokens("warm")  # the tokenizer's character classes, likewise (~1.5 s, once)
    base = peak_rss_mb()
    profile_dir = os.environ.get("BENCH_PROFILE")
    start = time.perf_counter()
    if profile_dir:  # cProfile of the job alone, one file per receipt (pstats)
        import cProfile

        cProfile.runctx(
            "run_job(receipt_id)",
            globals(),
            {"run_job": run_job, "receipt_id": receipt_id},
            os.path.join(profile_dir, f"{receipt_id}.prof"),
        )
    else:
        run_job(receipt_id)
    elapsed = time.perf_counter() - start
    print(json.dumps({"seconds": elapsed, "rss_base_mb": base, "rss_peak_mb": peak_rss_mb()}))


def run_in_worker(receipt_id: str, tree: str | None = None) -> dict:
    out = subprocess.run(  # noqa: S603 (our own interpreter, fixed arguments)
        [sys.executable, "-m", "bench.transfer", "--child", receipt_id],
        check=True,
        stdout=subprocess.PIPE,
        text=True,
        cwd=tree,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def bench_record(at, text: str, kind: str = "note", context_id: str | None = None, **fields):
    """A record the benches write straight into the database (authored by prn_bench at `at`,
    revision 1; shared unless `context_id`): an op would take far longer for 100k of them."""
    from memory.models import Record

    return Record(
        kind=kind,
        content={"text": text},
        text=text,
        placement_scope="context" if context_id else "shared",
        placement_context_id=context_id,
        prov_source="authored",
        prov_author_principal_id="prn_bench",
        prov_created_at=at,
        revision=1,
        created_at=at,
        updated_at=at,
        **fields,
    )


KINDS = ["preference", "fact", "plan", "event", "note"]


def numbered(i: int, at, texts: list[str] | None = None, **fields):
    """Record i of a space `fill` makes: its text, kind and placement follow from i (the text is
    `texts[i % len(texts)]` when a corpus is given, e.g. LoCoMo's turns)."""
    if texts:
        text = texts[i % len(texts)]
    else:
        text = f"record {i}: the subject mentioned something worth keeping, item {i % 977} " + (
            "z" * 120
        )
    return bench_record(at, text, KINDS[i % 5], "c1" if i % 2 else None, **fields)


def fill(principal, space_id: str, n: int) -> None:
    """Subject u1 (ensured through the op, as `principal`) with n records written directly."""
    from memory.ids import new_id
    from memory.models import Record, RecordRevision, Subject
    from memory.timeutil import now
    from tests import factories

    at = now()
    factories.ensure_subjects(principal, space_id, ["u1"])
    subject = Subject.objects.get(space_id=space_id, subject_id="u1")
    batch = 5000
    for start in range(0, n, batch):
        records = [
            numbered(i, at, space_id=space_id, subject=subject, record_id=new_id("record"))
            for i in range(start, min(n, start + batch))
        ]
        made = Record.objects.bulk_create(records)
        RecordRevision.objects.bulk_create(
            [
                RecordRevision(
                    space_id=r.space_id,
                    record=r,
                    revision=1,
                    kind=r.kind,
                    content=r.content,
                    placement_scope=r.placement_scope,
                    placement_context_id=r.placement_context_id,
                    created_at=at,
                )
                for r in made
            ]
        )


def record_objects(n: int, texts: list[str] | None = None) -> Iterator[dict]:
    """The export objects of a space `fill` made: subject u1, then n records in id order."""
    from memory.ids import new_id
    from memory.models import Subject
    from memory.timeutil import now

    at = now()
    subject = Subject(subject_id="u1", created_at=at, updated_at=at)
    yield {"type": "subject", "data": subject.to_wire(include_space=False)}
    for i, record_id in enumerate(sorted(new_id("record") for _ in range(n))):
        record = numbered(i, at, texts, record_id=record_id)
        yield {"type": "record", "data": record.to_wire("u1", include_space=False)}


def write_import(
    principal, space_id: str, n: int, like: str | None = None, texts: list[str] | None = None
) -> tuple[str, dict]:
    """A verified import of n records into space_id, chunked and digested as an export and
    staging make it; `like`: copy the chunks of that import instead of making new ones."""
    from django.conf import settings
    from django.db import connection

    from memory.engine import transfer as policy
    from memory.ids import new_id
    from memory.models import Import, ImportChunk
    from memory.services.transfer_codec import canonical
    from memory.timeutil import iso, now
    from memory.wire.canonical import digest_bytes

    if like is not None:
        source = Import.objects.get(pk=like)
        imp = Import.objects.create(
            space_id=space_id,
            principal=principal,
            bundle=source.bundle,
            state="verified",
            next_ordinal=source.next_ordinal,
            created_at=now(),
            updated_at=now(),
        )
        with connection.cursor() as cur:
            cur.execute(
                "INSERT INTO memory_importchunk (space_id, imp_id, ordinal, objects_json, digest) "
                "SELECT %s, %s, ordinal, objects_json, digest FROM memory_importchunk "
                "WHERE space_id = %s AND imp_id = %s",
                [space_id, imp.pk, source.space_id, like],
            )
        return imp.pk, source.bundle
    export_id, at = new_id("export"), now()
    imp = Import.objects.create(
        space_id=space_id, principal=principal, bundle={}, created_at=at, updated_at=at
    )
    limit = settings.SPOKE_MEMORY_LIMITS["export_chunk_bytes"]
    digests: list[str] = []
    page: list = []
    for ordinal, (_objects, body) in enumerate(
        policy.partition(record_objects(n, texts), limit, canonical)
    ):
        digests.append(digest_bytes(body))
        page.append(
            ImportChunk(
                space_id=space_id,
                imp=imp,
                ordinal=ordinal,
                objects_json=body.decode("utf-8"),
                digest=digests[-1],
            )
        )
        if len(page) == 50:
            ImportChunk.objects.bulk_create(page)
            page = []
    ImportChunk.objects.bulk_create(page)
    counts = {**policy.empty_counts(), "subject": 1, "record": n}
    imp.bundle = {
        "schema_version": 1,
        "export_id": export_id,
        "space_id": "bench-origin",
        "format_version": policy.FORMAT_VERSION,
        "provider_id": settings.SPOKE_MEMORY_PROVIDER_ID,
        "engine_policy_version": settings.SPOKE_MEMORY_ENGINE,
        "authority_generation": 1,
        "space_revision": 1,
        "created_at": iso(at),
        "chunk_count": len(digests),
        "object_counts": counts,
        "chunk_digests": digests,
        "bundle_digest": policy.bundle_digest(
            export_id, "bench-origin", policy.FORMAT_VERSION, digests, counts
        ),
        "extensions": {},
    }
    imp.state, imp.next_ordinal = "verified", len(digests)
    imp.save(update_fields=["bundle", "state", "next_ordinal"])
    return imp.pk, imp.bundle


def exports_as(principal, space_id: str, bundle: dict) -> bool:
    """Export `space_id` again (its job in a worker process) and say whether the new bundle has
    the chunk digests and object counts of `bundle`: the round trip was lossless."""
    from memory.ops.base import call

    again = call(principal, "memory.exports.create", {"space_id": space_id})["receipt"]
    run_in_worker(again["receipt_id"])
    again_bundle = call(
        principal,
        "memory.exports.get",
        {"space_id": space_id, "export_id": again["refs"][0]["id"], "ordinal": 0},
    )["bundle"]
    return (
        again_bundle["chunk_digests"] == bundle["chunk_digests"]
        and again_bundle["object_counts"] == bundle["object_counts"]
    )


def activation_only(n: int, baseline: str | None, rounds: int, reexport: bool) -> dict:
    from memory.ops.base import call
    from memory.services.operators import issue_root_grant
    from tests import factories

    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    principal, _ = factories.make_principal("bench")
    # The chunks are written once, into an import that is never activated (an activation
    # deletes its chunks); each activated import copies them.
    holder = f"bench-act-{n}-chunks"
    drop(holder)
    factories.make_space(holder)
    template, bundle = write_import(principal, holder, n)
    results: dict[str, list] = {"baseline": [], "this": []}
    last = ""
    for r in range(rounds):
        legs = (("baseline", baseline), ("this", here)) if baseline else (("this", here),)
        for name, tree in legs:
            sid = f"bench-act-{n}-{name}-{r}"
            drop(sid)
            issue_root_grant(factories.make_space(sid), principal)
            import_id, _ = write_import(principal, sid, n, like=template)
            receipt = call(
                principal, "memory.imports.activate", {"space_id": sid, "import_id": import_id}
            )["receipt"]
            load = os.getloadavg()
            act = run_in_worker(receipt["receipt_id"], tree)
            results[name].append(
                {
                    "records_per_s": round(n / act["seconds"]),
                    "seconds": round(act["seconds"], 1),
                    "rss_base_mb": round(act["rss_base_mb"]),
                    "rss_peak_mb": round(act["rss_peak_mb"]),
                    "load_1min_before": round(load[0], 1),
                }
            )
            last = sid
            print(json.dumps({"records": n, name: results[name][-1]}), flush=True)
    out: dict = {"records": n, "chunks": bundle["chunk_count"], **results}
    if not baseline:
        del out["baseline"]
    if reexport:
        out["lossless"] = exports_as(principal, last, bundle)
    print(json.dumps(out), flush=True)
    return out


def drop(space_id: str) -> None:
    from memory.models import Export, Import, Space
    from memory.services.transfer_load import clear_space

    space = Space.objects.filter(pk=space_id).first()
    if space is not None:
        clear_space(space)
        Export.objects.filter(space=space).delete()
        Import.objects.filter(space=space).delete()
        space.delete()


def one(n: int) -> dict:
    from django.conf import settings

    from memory.models import ExportChunk
    from memory.ops.base import call
    from memory.services.operators import issue_root_grant
    from tests import factories

    src, dst = f"bench-src-{n}", f"bench-dst-{n}"
    drop(src)
    drop(dst)
    principal, _ = factories.make_principal("bench")
    for sid in (src, dst):
        issue_root_grant(factories.make_space(sid), principal)
    t = time.perf_counter()
    fill(principal, src, n)
    fill_s = time.perf_counter() - t

    receipt = call(principal, "memory.exports.create", {"space_id": src})["receipt"]
    exp = run_in_worker(receipt["receipt_id"])
    export_id = receipt["refs"][0]["id"]
    total_bytes = sum(
        len(b)
        for b in ExportChunk.objects.filter(export_id=export_id)
        .values_list("objects_json", flat=True)
        .iterator()
    )

    t = time.perf_counter()
    bundle, import_id, staged = stage_export(principal, src, export_id, dst)
    stage_s = time.perf_counter() - t
    ver = run_in_worker(staged["receipt_id"])
    act_receipt = call(
        principal, "memory.imports.activate", {"space_id": dst, "import_id": import_id}
    )["receipt"]
    act = run_in_worker(act_receipt["receipt_id"])

    lossless = exports_as(principal, dst, bundle)
    mb = total_bytes / 1e6

    def rate(seconds: float) -> dict:
        return {
            "records_per_s": round(n / seconds),
            "mb_per_s": round(mb / seconds, 1),
            "seconds": round(seconds, 1),
        }

    result = {
        "records": n,
        "chunk_bytes": settings.SPOKE_MEMORY_LIMITS["export_chunk_bytes"],
        "chunks": bundle["chunk_count"],
        "bundle_mb": round(mb, 1),
        "fill_s": round(fill_s, 1),
        "export": {
            **rate(exp["seconds"]),
            "rss_base_mb": round(exp["rss_base_mb"]),
            "rss_peak_mb": round(exp["rss_peak_mb"]),
        },
        "stage": rate(stage_s),
        "verify": {
            **rate(ver["seconds"]),
            "rss_base_mb": round(ver["rss_base_mb"]),
            "rss_peak_mb": round(ver["rss_peak_mb"]),
        },
        "activate": {
            **rate(act["seconds"]),
            "rss_base_mb": round(act["rss_base_mb"]),
            "rss_peak_mb": round(act["rss_peak_mb"]),
        },
        "lossless": lossless,
    }
    print(json.dumps(result), flush=True)  # before the (long, untimed) clean-up
    if not os.environ.get("BENCH_KEEP"):
        drop(src)
        drop(dst)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--activation-only", action="store_true")
    parser.add_argument("--baseline-tree", help="with --activation-only: the code to compare with")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--reexport", action="store_true")
    args = parser.parse_args()
    if args.child:
        child(args.child)
        return
    _setup_django()
    from django.db import connection

    if connection.vendor != "postgresql":
        print(
            "warning: the published figures are for PostgreSQL (set DATABASE_URL)", file=sys.stderr
        )
    for n in args.records:
        if args.activation_only:
            activation_only(n, args.baseline_tree, args.rounds, args.reexport)
        else:
            one(n)


if __name__ == "__main__":
    main()
