"""gunicorn settings for the web process: `make run` and production start the same server,
`gunicorn -c spokememory/gunicorn_conf.py --bind HOST:PORT`. Each value can be changed from the
environment (the names below) or on the command line (which wins). See docs/deployment.md."""

import os
import tempfile
from typing import Any

wsgi_app = "spokememory.wsgi:application"

# Processes x threads. Ops are short (long work runs on Celery), and a thread waits on the
# database most of the time, so a few threads per process serve more than more processes would.
# WEB_CONCURRENCY is the name most platforms set; two per core is the usual starting point.
workers = int(os.environ.get("WEB_CONCURRENCY", "2"))
worker_class = "gthread"
threads = int(os.environ.get("GUNICORN_THREADS", "4"))

# A request still running after `timeout` seconds has its worker killed and restarted; a reload
# or stop waits `graceful_timeout` for requests in flight. Keep-alive covers a reverse proxy's
# pooled connections (set it above the proxy's idle timeout when the proxy reuses connections).
timeout = int(os.environ.get("GUNICORN_TIMEOUT", "60"))
graceful_timeout = int(os.environ.get("GUNICORN_GRACEFUL_TIMEOUT", "30"))
keepalive = int(os.environ.get("GUNICORN_KEEPALIVE", "5"))

# Recycle a worker after this many requests (jittered so they do not all restart at once).
max_requests = int(os.environ.get("GUNICORN_MAX_REQUESTS", "5000"))
max_requests_jitter = max_requests // 10

# The reverse proxy's address, whose X-Forwarded-* headers are believed (scheme, client).
forwarded_allow_ips = os.environ.get("FORWARDED_ALLOW_IPS", "127.0.0.1,::1")

# One line per request on stdout: client, method and path (no query string), status, bytes,
# duration (ms), user agent. Bodies, query strings and headers (so tokens and memory content)
# are never logged.
accesslog: str | None = os.environ.get("GUNICORN_ACCESS_LOG", "-")
if os.environ.get("SPOKE_MEMORY_LOG_FORMAT", "").strip().lower() == "json":
    # JSON lines (docs/observability.md): gunicorn's own lines in the app's schema, and the
    # app's `memory.http` line per request in place of the access log.
    accesslog = None
    logconfig_dict = {
        "formatters": {"json": {"()": "memory.observability.logs.JsonFormatter"}},
        "handlers": {
            name: {"class": "logging.StreamHandler", "formatter": "json", "stream": stream}
            for name, stream in (
                ("console", "ext://sys.stdout"),
                ("error_console", "ext://sys.stderr"),
            )
        },
        "loggers": {
            "gunicorn.error": {"level": "INFO", "handlers": ["error_console"], "propagate": False},
            "gunicorn.access": {"level": "CRITICAL", "handlers": [], "propagate": False},
        },
    }
access_log_format = '%(h)s "%(m)s %(U)s" %(s)s %(B)s %(M)sms "%(a)s"'
errorlog = "-"
loglevel = os.environ.get("GUNICORN_LOG_LEVEL", "info")

# gunicorn's runtime control socket (one per user, in $HOME) is off: several servers of one
# user (the demo, the test suite's, benchmarks) would fight over the one path.
control_socket_disable = True

# Prometheus metrics of every worker process, summed at /metrics (docs/observability.md):
# prometheus_client's multiprocess mode, in PROMETHEUS_MULTIPROC_DIR (a new private directory
# when unset), emptied when the server starts; a dead worker's live gauges are dropped.
if not os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
    os.environ["PROMETHEUS_MULTIPROC_DIR"] = tempfile.mkdtemp(prefix="spoke-metrics-")


def on_starting(server: Any) -> None:
    folder = os.environ["PROMETHEUS_MULTIPROC_DIR"]
    os.makedirs(folder, exist_ok=True)
    for name in os.listdir(folder):
        if name.endswith(".db"):
            os.unlink(os.path.join(folder, name))


def child_exit(server: Any, worker: Any) -> None:
    from prometheus_client import multiprocess

    multiprocess.mark_process_dead(worker.pid)
