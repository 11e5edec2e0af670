"""The web process's WSGI callable (gunicorn, spokememory/gunicorn_conf.py): Django, which also
serves /mcp/ (a view running the MCP server, memory/mcp/http.py, behind every middleware)."""

import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "spokememory.settings")
application = get_wsgi_application()

from spokememory.warm import warm  # noqa: E402 - after Django is set up

warm()
