"""What weighing a list page costs (docs/decisions/what-one-answer-may-weigh.md).

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/<db> python -m bench.page_weight [--records 2000] [--text-bytes 1000]

In a throwaway test database (created and dropped here), one subject holds N records of
`--text-bytes` of text each. Prints, median of `--repeat` runs: a full `memory.records.list`
page of 200 through the ops layer (`call`: gates, authorization, query, wire items, weighing);
the weighing alone (`cursors.take_page` over the same 200 wire items); and the floor it is set
against, the response's own JSON encoding of that page (`json_response`), which every answer
pays anyway."""

from __future__ import annotations

import argparse
import os

from bench.cursor_pages import _median_ms


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=2000)
    parser.add_argument("--text-bytes", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=30)
    args = parser.parse_args(argv)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "spokememory.settings")
    os.environ.setdefault("SECRET_KEY", "bench-only-secret-key-not-for-production-use")
    import django

    django.setup()
    from django.db import connection
    from django.test.utils import setup_databases, teardown_databases

    from bench.cursor_pages import fill  # after django.setup(): it imports models
    from memory.dispatch.responses import json_response
    from memory.models import Record
    from memory.ops.base import call
    from memory.selectors import cursors

    old = setup_databases(verbosity=0, interactive=False)
    try:
        principal, subject = fill(args.records)
        Record.objects.filter(subject=subject).update(content={"text": "x" * args.text_bytes})
        req = {"space_id": "bench", "subject_id": "u1", "page_size": 200}
        page = call(principal, "memory.records.list", req)
        items = page["records"]
        assert len(items) == 200
        full = _median_ms(lambda: call(principal, "memory.records.list", req), args.repeat)
        weigh = _median_ms(lambda: cursors.take_page(items, 200, lambda i: i), args.repeat)
        floor = _median_ms(lambda: json_response(page), args.repeat)
        print(
            f"{connection.vendor}, records of {args.text_bytes} text bytes, page_size 200 "
            f"({len(json_response(page).content)} bytes), median of {args.repeat} runs\n"
        )
        print("| records.list page ms | weighing ms | floor: the page's JSON response ms |")
        print("|---:|---:|---:|")
        print(f"| {full:.2f} | {weigh:.2f} | {floor:.2f} |")
    finally:
        teardown_databases(old, verbosity=0)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
