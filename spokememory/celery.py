"""The Celery application. Production: `celery -A spokememory worker` on any number of hosts and
one `celery -A spokememory beat` (it schedules the sweeper); embedded single host:
`celery -A spokememory worker -B`. See docs/workers.md."""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "spokememory.settings")

app = Celery("spokememory")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks(["memory"])
