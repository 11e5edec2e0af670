"""Cursor pages: page 1000 of memory.records.list costs what page 1 costs (docs/protocol.md#cursors).

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/<db> python -m bench.cursor_pages [--records 50000]

Runs in a throwaway test database (created and dropped here, like the test runner does), fills
one subject with N records by bulk insert, walks every page of memory.records.list through the
ops layer (`call`, the same gates as the HTTP edge), and prints a markdown table: queries and
median time of page 1 and the last page, next to the floor (the bare keyset SQL query of that
page), the bare COUNT behind total_authorized (the same on every page) and, for contrast, the
OFFSET query a page-number pagination would need. Set BENCH_EXPLAIN=1 to print query plans."""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from datetime import timedelta

import django


def _setup() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "spokememory.settings")
    os.environ.setdefault(
        "SECRET_KEY", "bench-only-secret-key-not-for-production-use"
    )  # a throwaway database
    django.setup()


def _median_ms(fn, repeat: int) -> float:
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - start) * 1000)
    return statistics.median(samples)


def fill(n: int):
    from memory.models import Record, Subject
    from memory.timeutil import now
    from tests import factories

    at = now()
    space = factories.make_space("bench")
    principal, _ = factories.make_admin(space, "bench")
    factories.ensure_subjects(principal, "bench", ["u1"])
    subject = Subject.objects.get(space=space, subject_id="u1")
    base = at - timedelta(milliseconds=n)
    rows = (
        Record(
            space=space,
            subject=subject,
            record_id=f"rec_{i:026d}",
            kind="fact",
            content={"text": f"record number {i}"},
            text=f"record number {i}",
            placement_scope="context" if i % 3 else "shared",
            placement_context_id="c1" if i % 3 else None,
            prov_source="authored",
            prov_author_principal_id=principal.principal_id,
            prov_created_at=at,
            created_at=base
            + timedelta(milliseconds=i // 2),  # pairs share a time: ties by record_id
            updated_at=at,
        )
        for i in range(n)
    )
    batch: list[Record] = []
    for row in rows:
        batch.append(row)
        if len(batch) == 5000:
            Record.objects.bulk_create(batch)
            batch = []
    Record.objects.bulk_create(batch)
    from django.db import connection

    if connection.vendor == "postgresql":
        with connection.cursor() as cur:
            cur.execute("ANALYZE memory_record")  # fresh statistics, as autovacuum would give
    return principal, subject


def floor_sql(subject_pk: int, position: list | None, size: int, offset: int | None = None):
    from django.db import connection

    from memory.timeutil import parse

    sql = "SELECT id, record_id, created_at, content FROM memory_record WHERE subject_id = %s AND deleted_at IS NULL"
    params: list = [subject_pk]
    if position is not None:
        sql += " AND (created_at < %s OR (created_at = %s AND record_id < %s))"
        at = parse(position[0])
        params += [at, at, position[1]]
    sql += " ORDER BY created_at DESC, record_id DESC LIMIT %s"
    params.append(size + 1)
    if offset is not None:
        sql += " OFFSET %s"
        params.append(offset)

    def run():
        with connection.cursor() as cur:
            cur.execute(sql, params)
            return cur.fetchall()

    return run


def count_sql(subject_pk: int):
    from django.db import connection

    def run():
        with connection.cursor() as cur:
            cur.execute(
                "SELECT COUNT(*) FROM memory_record WHERE subject_id = %s AND deleted_at IS NULL",
                [subject_pk],
            )
            return cur.fetchone()

    return run


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=50_000)
    parser.add_argument("--page-size", type=int, default=50)
    parser.add_argument("--repeat", type=int, default=15)
    args = parser.parse_args(argv)
    _setup()
    from django.db import connection
    from django.test.utils import CaptureQueriesContext, setup_databases, teardown_databases

    from memory.ops.base import call
    from memory.selectors import cursors

    old = setup_databases(verbosity=0, interactive=False)
    try:
        principal, subject = fill(args.records)
        req = {"space_id": "bench", "subject_id": "u1", "page_size": args.page_size}

        def page(cursor):
            return call(
                principal, "memory.records.list", {**req, **({"cursor": cursor} if cursor else {})}
            )

        # walk to the last page, keeping the cursor (and keyset position) that opens each page
        cursors_by_page: dict[int, str | None] = {1: None}
        number, cursor = 1, None
        while True:
            answer = page(cursor)
            if answer["next_cursor"] is None:
                break
            number += 1
            cursor = cursors_by_page[number] = answer["next_cursor"]
        last = number
        total = answer["total_authorized"]
        rows = []
        if os.environ.get("BENCH_EXPLAIN"):
            from memory.access import coverage_for
            from memory.selectors.selection import read_filter, records_queryset
            from memory.timeutil import now

            cov = coverage_for("bench", principal, now())
            qs = records_queryset(cov, ["records_read"], read_filter(req), subject)
            print(qs.order_by("-created_at", "-record_id")[:51].explain(analyze=True))
            print(qs.explain(analyze=True))
        for n in (1, last):
            c = cursors_by_page[n]
            with CaptureQueriesContext(connection) as q:
                page(c)
            position = None
            if c is not None:
                from django.core import signing

                position = signing.loads(c, salt=cursors.SALT)["k"]
            rows.append(
                (
                    n,
                    len(q.captured_queries),
                    _median_ms(lambda c=c: page(c), args.repeat),
                    _median_ms(floor_sql(subject.pk, position, args.page_size), args.repeat),
                    _median_ms(
                        floor_sql(subject.pk, None, args.page_size, (n - 1) * args.page_size),
                        args.repeat,
                    ),
                    _median_ms(count_sql(subject.pk), args.repeat),
                )
            )
        print(
            f"{connection.vendor}, {total} records in one subject, page_size {args.page_size}, "
            f"median of {args.repeat} runs\n"
        )
        print(
            "| page | queries | records.list ms | floor: bare keyset SQL ms | bare COUNT SQL ms "
            "| contrast: OFFSET SQL ms |"
        )
        print("|---:|---:|---:|---:|---:|---:|")
        for n, queries, op_ms, floor_ms, offset_ms, count_ms in rows:
            print(
                f"| {n} | {queries} | {op_ms:.2f} | {floor_ms:.2f} | {count_ms:.2f} | {offset_ms:.2f} |"
            )
        same = rows[0][1] == rows[1][1]
        print(f"\nqueries equal on page 1 and page {last}: {same}")
        return 0 if same else 1
    finally:
        teardown_databases(old, verbosity=0)


if __name__ == "__main__":
    sys.exit(main())
