"""The observability tests' fixtures: real workers (tests/memory/jobs.py)."""

from tests.memory.jobs import start_worker  # noqa: F401  (a fixture)
