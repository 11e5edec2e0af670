"""The Celery application. Workers: `celery -A spokememory worker -B` (beat runs the sweeper)."""
import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "spokememory.settings")

app = Celery("spokememory")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks(["memory"])
