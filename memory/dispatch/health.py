"""Health: liveness (`/healthz`: the process answers) and readiness (`/readyz`: the database and
the broker answer; under a hybrid engine also the embedding backlog, which does not make it unready)."""

from __future__ import annotations

from celery import current_app

from memory import statements
from memory.dispatch.responses import json_response, wire_get


@wire_get
def healthz(request):
    return json_response({"status": "ok"})


@wire_get
def readyz(request):
    problems = []
    try:
        statements.execute(statements.PING)
    except Exception:  # noqa: BLE001
        problems.append("database")
    try:
        # the project's app (spokememory/__init__.py makes it current as Django loads), reached
        # without importing the project package from below it
        with current_app.connection_for_write() as conn:
            conn.ensure_connection(max_retries=1, timeout=2)
    except Exception:  # noqa: BLE001
        problems.append("broker")
    if problems:
        return json_response({"status": "unavailable", "unavailable": problems}, status=503)
    from memory.services.recall_engines import registry

    backlogs = registry.backlogs()
    if "vectors" in backlogs:
        # records written (or left by a model change) but not yet embedded with the configured
        # model: recalled lexically until they are
        return json_response({"status": "ok", "embedding_backlog": backlogs["vectors"]})
    return json_response({"status": "ok"})
