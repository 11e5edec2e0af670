"""The fixtures of the async machinery's tests (workers, erasure, activation, transfer at scale).
Their factories and job helpers live in tests/memory/jobs.py, shared with the reflections and
transfer tests of tests/memory/ops/; they stay importable from here, for the modules that import
`tests.memory.async.conftest` by name."""

from tests.memory.jobs import (  # noqa: F401  (fixtures, and names imported from here)
    Worker,
    delete_record,
    job_state,
    make_candidate,
    make_profile,
    make_record,
    new_space,
    receipt_status,
    run_job_now,
    run_pending,
    s1_subject,
    start_worker,
    subject_row,
    update_record,
    wait_for,
    worker_env,
)
