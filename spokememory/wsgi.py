"""The web process's WSGI callable (gunicorn, spokememory/gunicorn_conf.py): Django, with /mcp/
routed to the MCP server (memory/mcp/http.py, an ASGI app mounted under WSGI)."""

import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "spokememory.settings")
django_application = get_wsgi_application()

from memory.mcp.http import with_mcp  # noqa: E402 - after Django is set up
from spokememory.warm import warm  # noqa: E402

warm()
application = with_mcp(django_application)
