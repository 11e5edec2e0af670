"""A `BENCH_PATCH` for `python -m bench.transfer`: wall-clock timers around import activation's
steps, printed to stderr when the job process exits (docs/performance.md, Transfer, issue 30).

    BENCH_PATCH=bench/activation_timers.py python -m bench.transfer --activation-only ...

Each COPY's rows are built first ("gen <table>") and then written ("copy <table>"), so the
worker's Python and the server's work are timed apart (the job itself streams them, overlapped:
the total here is a little longer than the job's own)."""

import atexit
import collections
import sys
import time

from django.db.backends.base import base as dbbase

from memory.services import transfer_jobs as jobs
from memory.services import transfer_load as load

SECONDS: collections.defaultdict[str, float] = collections.defaultdict(float)
CALLS: collections.Counter[str] = collections.Counter()


def timed(name, fn):
    def wrapper(*args, **kwargs):
        start = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            SECONDS[name] += time.perf_counter() - start
            CALLS[name] += 1

    return wrapper


_insert_rows = load.insert_rows


def insert_rows(model, names, rows):
    table = model._meta.db_table
    start = time.perf_counter()
    rows = list(rows)
    SECONDS["gen " + table] += time.perf_counter() - start
    return timed("copy " + table, _insert_rows)(model, names, rows)


_staged_objects = jobs.staged_objects


def staged_objects(imp):
    chunks = _staged_objects(imp)
    while True:
        start = time.perf_counter()
        try:
            item = next(chunks)
        except StopIteration:
            return
        finally:
            SECONDS["read, check, parse chunks"] += time.perf_counter() - start
        yield item


load.insert_rows = insert_rows
load.clear_space = jobs.load.clear_space = timed("clear_space", load.clear_space)
load.BatchKeys.check = timed("foreign-key anti-joins", load.BatchKeys.check)  # type: ignore[method-assign]
load._next_ids = timed("record ids", load._next_ids)
load.Loader._load_subject = timed("subjects", load.Loader._load_subject)  # type: ignore[method-assign]
dbbase.BaseDatabaseWrapper.commit = timed("COMMIT", dbbase.BaseDatabaseWrapper.commit)  # type: ignore[method-assign]
jobs.staged_objects = staged_objects


@atexit.register
def show() -> None:
    for name, seconds in sorted(SECONDS.items(), key=lambda kv: -kv[1]):
        print(f"  {name:40s} {seconds:8.2f} s  ({CALLS[name]} calls)", file=sys.stderr)
