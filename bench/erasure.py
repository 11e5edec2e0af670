"""Erasure and strict verification benchmark (issue 13, items 1 and 6).

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/spoke_async \
        python -m bench.erasure --records 20000 --deletes 30

1. `memory.records.delete` latency (in-process `call`, the console's path; the HTTP edge adds a
   constant) of records of subject u2, first in a space with nothing stored (the floor), then
   after two stored exports of subject u1 (N records each) and one import of that bundle staged
   into another space: each delete then scans every stored chunk of the space and every staged
   chunk of its bundles for the record's id, and matches none (the worst case: nothing is
   withdrawn, every chunk is read).
2. Import verification per object: the schema check alone (what verification did before, the
   floor) against the whole BundleChecker (schema, content, references), over the same staged
   objects, in this process."""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time

from bench.transfer import _setup_django, bench_record, drop, fill, stage_export


def deletes(principal, space_id: str, record_ids: list[str]) -> list[float]:
    from memory.ops.base import call

    out = []
    for rid in record_ids:
        t = time.perf_counter()
        call(
            principal,
            "memory.records.delete",
            {"space_id": space_id, "record_id": rid, "expected_revision": 1},
        )
        out.append((time.perf_counter() - t) * 1000)
    return out


def u2_records(principal, space_id: str, n: int) -> list[str]:
    from memory.ids import new_id
    from memory.models import RecordRevision, Subject
    from memory.timeutil import now
    from tests import factories

    at = now()
    factories.ensure_subjects(principal, space_id, ["u2"])
    subject = Subject.objects.get(space_id=space_id, subject_id="u2")
    ids = []
    for i in range(n):
        r = bench_record(
            at, f"u2 note {i}", space_id=space_id, subject=subject, record_id=new_id("record")
        )
        r.save(force_insert=True)
        RecordRevision.objects.create(
            record=r,
            revision=1,
            kind="note",
            content=r.content,
            placement_scope="shared",
            created_at=at,
        )
        ids.append(r.record_id)
    return ids


def run(n: int, d: int) -> dict:
    from memory.models import ExportChunk, ImportChunk
    from memory.ops.base import call
    from memory.services.operators import issue_root_grant
    from memory.services.transfer_verify import BundleChecker, object_validator
    from memory.tasks import run_job
    from tests import factories

    src, dst = "bench-erasure-src", "bench-erasure-dst"
    drop(src)
    drop(dst)
    principal, _ = factories.make_principal("bench")
    for sid in (src, dst):
        issue_root_grant(factories.make_space(sid), principal)
    fill(principal, src, n)
    victims = u2_records(principal, src, 2 * d)
    floor = deletes(principal, src, victims[:d])

    export_ids = []
    for _ in range(2):
        receipt = call(
            principal, "memory.exports.create", {"space_id": src, "subject_ids": ["u1"]}
        )["receipt"]
        run_job(receipt["receipt_id"])
        export_ids.append(receipt["refs"][0]["id"])
    _, import_id, _ = stage_export(principal, src, export_ids[0], dst)
    stored_mb = (
        sum(len(b) for b in ExportChunk.objects.values_list("objects_json", flat=True))
        + sum(len(b) for b in ImportChunk.objects.values_list("objects_json", flat=True))
    ) / 1e6
    with_copies = deletes(principal, src, victims[d:])

    objects = [
        o
        for c in ImportChunk.objects.filter(imp_id=import_id).order_by("ordinal")
        for o in json.loads(c.objects_json)
    ]
    validator = object_validator()
    t = time.perf_counter()
    assert all(validator.is_valid(o) for o in objects)
    schema_s = time.perf_counter() - t
    checker = BundleChecker()
    t = time.perf_counter()
    for i, o in enumerate(objects):
        checker.check(f"object {i}", o)
    strict_s = time.perf_counter() - t
    drop(src)
    drop(dst)
    return {
        "records_per_export": n,
        "stored_chunk_mb": round(stored_mb, 1),
        "delete_ms_median": {
            "floor_nothing_stored": round(statistics.median(floor), 1),
            "with_2_exports_and_1_staged_import": round(statistics.median(with_copies), 1),
        },
        "verify_objects_per_s": {
            "floor_schema_only": round(len(objects) / schema_s),
            "strict": round(len(objects) / strict_s),
        },
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=20_000)
    parser.add_argument("--deletes", type=int, default=30)
    args, _ = parser.parse_known_args()
    _setup_django()
    from django.db import connection

    if connection.vendor != "postgresql":
        print("warning: the published figures are for PostgreSQL", file=sys.stderr)
    print(json.dumps(run(args.records, args.deletes), indent=2))


if __name__ == "__main__":
    main()
