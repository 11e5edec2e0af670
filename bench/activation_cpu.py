"""A `BENCH_PATCH` for `python -m bench.transfer`: the CPU seconds the job's PostgreSQL backend
and the worker process spent, printed to stderr as one JSON line when the job process exits
(docs/performance.md, Transfer, issue 30). CPU time, unlike the wall clock, hardly moves with
what else runs on a shared machine, so it compares schemas and code measured minutes apart.

    BENCH_PATCH=$PWD/bench/activation_cpu.py python -m bench.transfer --activation-only ...

The backend is the one serving the job's connection (`pg_backend_pid()`, read from
/proc/PID/stat: the database on the same host); its figure leaves out PostgreSQL's background
writers (WAL writer, checkpointer, autovacuum)."""

import atexit
import json
import os
import resource
import sys

from django.db import connection


def backend_cpu_s(pid: int) -> float:
    with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime


def worker_cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


with connection.cursor() as _cur:
    _cur.execute("SELECT pg_backend_pid()")
    PID = _cur.fetchone()[0]
START = (backend_cpu_s(PID), worker_cpu_s())


@atexit.register
def show() -> None:
    backend, worker = backend_cpu_s(PID) - START[0], worker_cpu_s() - START[1]
    print(
        json.dumps({"backend_cpu_s": round(backend, 2), "worker_cpu_s": round(worker, 2)}),
        file=sys.stderr,
        flush=True,
    )
