"""A `BENCH_PATCH` for `python -m bench.transfer`: the job process's resident set (VmRSS),
sampled every BENCH_RSS_EVERY seconds (default 5) by a daemon thread over the whole job and
printed to stderr as one JSON line when the process exits (docs/performance.md, Transfer,
issue 30: "worker memory flat" over a 1,000,000-record activation, not only its peak).

    BENCH_PATCH=$PWD/bench/activation_cpu.py:$PWD/bench/activation_rss.py \
      python -m bench.transfer --activation-only --records 1000000 --reexport

The thread wakes once per interval and reads one /proc file; it adds nothing measurable to a
job that runs for minutes."""

import atexit
import json
import os
import sys
import threading
import time


def rss_mb() -> float:
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


EVERY = float(os.environ.get("BENCH_RSS_EVERY", "5"))
T0 = time.monotonic()
SAMPLES: list[tuple[float, float]] = []


def sample() -> None:
    while True:
        SAMPLES.append((round(time.monotonic() - T0, 1), round(rss_mb(), 1)))
        time.sleep(EVERY)


threading.Thread(target=sample, daemon=True, name="bench-rss").start()


@atexit.register
def show_rss() -> None:
    SAMPLES.append((round(time.monotonic() - T0, 1), round(rss_mb(), 1)))
    print(json.dumps({"rss_samples_s_mb": SAMPLES}), file=sys.stderr, flush=True)
