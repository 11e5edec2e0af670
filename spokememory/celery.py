"""The Celery application. Production: `celery -A spokememory worker` on any number of hosts and
one `celery -A spokememory beat` (it schedules the sweeper); embedded single host:
`celery -A spokememory worker -B`. See docs/workers.md."""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "spokememory.settings")

app = Celery("spokememory")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks(["memory"])

# The worker's metrics port and traces (memory/observability/worker.py; docs/observability.md).
from celery.signals import worker_init, worker_process_init  # noqa: E402

from memory.observability.worker import child_started, worker_started  # noqa: E402

worker_init.connect(worker_started, weak=False)
worker_process_init.connect(child_started, weak=False)
