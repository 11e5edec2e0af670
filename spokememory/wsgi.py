"""The web process's WSGI callable (gunicorn, spokememory/gunicorn_conf.py): /mcp/ goes to the MCP
server (memory/mcp/http.py, an ASGI app mounted under WSGI), everything else to Django."""

import os
import threading

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "spokememory.settings")
django_application = get_wsgi_application()

from spokememory.warm import warm  # noqa: E402 - after Django is set up

warm()

MCP_PREFIX = "/mcp/"
_mcp = None
_mcp_lock = threading.Lock()


def _mcp_application():
    """Made on the first MCP request of a worker (after gunicorn's fork: it owns a thread)."""
    global _mcp
    if _mcp is None:
        with _mcp_lock:
            if _mcp is None:
                from memory.mcp.http import wsgi_app

                _mcp = wsgi_app()
    return _mcp


def application(environ, start_response):
    if environ.get("PATH_INFO", "").startswith(MCP_PREFIX):
        return _mcp_application()(environ, start_response)
    return django_application(environ, start_response)
