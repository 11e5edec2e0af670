"""Fixtures the op families' tests share with tests elsewhere: recall's records made with the ORM
and its `recall` caller (tests/memory/recall/conftest.py, also used by the engines' tests), and
`run_job_now`, a pending receipt's job run in this process (tests/memory/jobs.py)."""

from tests.memory.jobs import run_job_now  # noqa: F401
from tests.memory.recall.conftest import make_record, recall  # noqa: F401
