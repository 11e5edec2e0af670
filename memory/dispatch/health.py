"""Health: liveness (`/healthz`: the process answers) and readiness (`/readyz`: the database and
the broker answer).

An unauthenticated `/readyz` says ready or not and nothing else: the embedding backlog is
provider-wide (another tenant's writes move it; after a model change it is the number of live
records of the whole provider), so it is shown only to an operator of the whole provider (under
a hybrid engine; it does not make the server unready): a request carrying
`Authorization: Bearer <SPOKE_MEMORY_HEALTH_TOKEN>` (the monitoring system's secret, when set),
or a signed-in console superuser (docs/decisions/readyz-counts.md)."""

from __future__ import annotations

import hmac

from celery import current_app
from django.conf import settings
from django.http import HttpRequest, HttpResponse

from memory import statements
from memory.dispatch.responses import json_response, wire_get


@wire_get
def healthz(request: HttpRequest) -> HttpResponse:
    return json_response({"status": "ok"})


@wire_get
def readyz(request: HttpRequest) -> HttpResponse:
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
    if not is_provider_operator(request):
        return json_response({"status": "ok"})
    from memory.services.recall_engines import registry

    backlogs = registry.backlogs()
    if "vectors" in backlogs:
        # records written (or left by a model change) but not yet embedded with the configured
        # model: recalled lexically until they are
        return json_response({"status": "ok", "embedding_backlog": backlogs["vectors"]})
    return json_response({"status": "ok"})


def is_provider_operator(request: HttpRequest) -> bool:
    """Whether the request may see provider-wide counts: the health token (constant-time
    compare; none is accepted while the setting is empty) or a console superuser's session."""
    wanted = settings.SPOKE_MEMORY_HEALTH_TOKEN
    header = request.headers.get("Authorization", "")
    if wanted and header.startswith("Bearer "):
        if hmac.compare_digest(header[len("Bearer ") :].strip().encode(), wanted.encode()):
            return True
    user = getattr(request, "user", None)
    return bool(user is not None and user.is_active and user.is_superuser)
