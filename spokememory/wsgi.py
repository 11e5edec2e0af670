"""The web process's WSGI callable (gunicorn, spokememory/gunicorn_conf.py): Django, which also
serves /mcp/ (a view running the MCP server, memory/mcp/http.py, behind every middleware)."""

import os

from django.core.wsgi import get_wsgi_application

from memory.observability import tracing

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "spokememory.settings")
tracing.setup("web")  # opt-in (OTEL_* environment); before Django loads its middleware
django_application = get_wsgi_application()

from memory.observability.wsgi import observe_wsgi  # noqa: E402 - after Django is set up
from spokememory.warm import warm  # noqa: E402

warm()
application = observe_wsgi(django_application)
