"""The suite's job helpers for the console's tests: `run_pending` (a pending receipt's job run
in this process, as a worker runs it), real worker processes (`Worker`, the `start_worker`
fixture) and `wait_for`. They live in tests/memory/jobs.py."""

from tests.memory import jobs as _jobs

run_pending = _jobs.run_pending
start_worker = _jobs.start_worker
wait_for = _jobs.wait_for
