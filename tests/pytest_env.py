"""Loaded by pytest before Django's settings (`-p tests.pytest_env` in pyproject's addopts):
the suite's signing key. A deployment's settings refuse to start without SECRET_KEY (a server
DATABASE_URL with DEBUG off, as the PostgreSQL leg of the suite is); the suite is not one, and
its subprocess servers and workers inherit this key."""

import os

os.environ.setdefault("SECRET_KEY", "test-suite-only-" + "k" * 48)

# The per-principal limit on requests in flight counts a web process's threads (gunicorn's);
# the suite's in-process tests race many requests of one principal as threads of this process,
# so it is off here and in the servers started from here, unless a test sets it
# (tests/hostile/test_in_flight.py runs gunicorn as deployed, with its default).
os.environ.setdefault("SPOKE_MEMORY_MAX_IN_FLIGHT", "0")

# The same for each principal's share of a web process's time while it serves others
# (tests/hostile/test_cpu_share.py turns it on where it tests it).
os.environ.setdefault("SPOKE_MEMORY_SHARED_CPU_SHARE", "0")
