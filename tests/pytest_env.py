"""Loaded by pytest before Django's settings (`-p tests.pytest_env` in pyproject's addopts):
the suite's signing key. A deployment's settings refuse to start without SECRET_KEY (a server
DATABASE_URL with DEBUG off, as the PostgreSQL leg of the suite is); the suite is not one, and
its subprocess servers and workers inherit this key."""

import os

os.environ.setdefault("SECRET_KEY", "test-suite-only-" + "k" * 48)

# The monitoring system's secret: /readyz shows provider-wide counts (the embedding backlog) only
# to a request carrying it (tests.conftest.OPERATOR_HEALTH) or a console superuser.
os.environ.setdefault("SPOKE_MEMORY_HEALTH_TOKEN", "test-suite-health-token")

# The suite runs what ships (issue 42): the PostgreSQL leg on the default engine of the installed
# extras (hybrid/6 with the semantic extra), the SQLite leg on engine/2 (the default of an
# install without the extra); SPOKE_MEMORY_ENGINE, when set, decides. Set before Django starts,
# so the registry installs that engine's derived-copy hooks; subprocess servers and workers
# inherit it.
if "SPOKE_MEMORY_ENGINE" not in os.environ:
    if os.environ.get("DATABASE_URL", "").startswith(("postgres", "postgresql")):
        from memory.embedding.embed import default_engine

        os.environ["SPOKE_MEMORY_ENGINE"] = default_engine()
    else:
        os.environ["SPOKE_MEMORY_ENGINE"] = "engine/2"

# The limiter (memory/limits.py) is on in the whole suite. Its cap on requests in flight counts
# the server's threads; the suite's in-process tests race requests of one principal as threads
# of this process, so the suite's default cap is generous (tests of the cap set their own).
os.environ.setdefault("SPOKE_MEMORY_MAX_IN_FLIGHT", "64")

# Under pytest-xdist (`pytest -n N`) each xdist worker gets its own broker and var folder, so the
# real Celery workers its tests start consume only its own tasks (with one shared broker a worker
# started by gw0 took gw1's tasks and ran them against gw0's test database). A Redis broker moves
# to another database number per xdist worker; the filesystem broker lives under the var folder.
_xdist = os.environ.get("PYTEST_XDIST_WORKER", "")
if _xdist.startswith("gw") and _xdist[2:].isdigit():
    import re
    from pathlib import Path

    _n = int(_xdist[2:]) + 1
    _var = Path(
        os.environ.get("SPOKE_MEMORY_VAR_DIR", Path(__file__).resolve().parent.parent / "var")
    )
    os.environ["SPOKE_MEMORY_VAR_DIR"] = str(_var / f"xdist-{_xdist}")
    _broker = os.environ.get("CELERY_BROKER_URL", "")
    _db = re.fullmatch(r"(rediss?://[^/]*)(?:/(\d+))?", _broker)
    if _db:
        os.environ["CELERY_BROKER_URL"] = f"{_db[1]}/{(int(_db[2] or 0) - _n) % 16}"
