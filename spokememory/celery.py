"""The Celery application. Production: `celery -A spokememory worker` on any number of hosts and
one `celery -A spokememory beat` (it schedules the sweeper); embedded single host:
`celery -A spokememory worker -B`. See docs/workers.md."""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "spokememory.settings")
# A worker serving its metrics port counts what its pool's children do (they run the tasks):
# prometheus_client's multiprocess mode, which must be chosen before it is first imported, in a
# new private directory unless PROMETHEUS_MULTIPROC_DIR names one (memory/observability/worker.py).
if os.environ.get("SPOKE_MEMORY_WORKER_METRICS_PORT") and not os.environ.get(
    "PROMETHEUS_MULTIPROC_DIR"
):
    import tempfile

    os.environ["PROMETHEUS_MULTIPROC_DIR"] = tempfile.mkdtemp(prefix="spoke-worker-metrics-")

app = Celery("spokememory")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks(["memory"])

# The worker's metrics port, traces and JSON logs (memory/observability/worker.py;
# docs/observability.md).
from celery.signals import (  # noqa: E402
    after_setup_logger,
    after_setup_task_logger,
    celeryd_init,
    worker_init,
    worker_process_init,
)

from memory.observability.worker import (  # noqa: E402
    child_started,
    json_celeryd,
    json_handlers,
    worker_started,
)

worker_init.connect(worker_started, weak=False)
worker_process_init.connect(child_started, weak=False)
# SPOKE_MEMORY_LOG_FORMAT=json: the worker's lines in the web's JSON schema (docs/observability.md).
celeryd_init.connect(json_celeryd, weak=False)
after_setup_logger.connect(json_handlers, weak=False)
after_setup_task_logger.connect(json_handlers, weak=False)
