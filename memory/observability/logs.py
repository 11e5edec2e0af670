"""The JSON log format (SPOKE_MEMORY_LOG_FORMAT=json; the plain text format otherwise): one JSON
object per line, the schema docs/observability.md documents:

  time         RFC 3339 UTC with microseconds          always
  level        DEBUG | INFO | WARNING | ERROR | CRITICAL always
  logger       the logger's name                       always
  message      the log message (never content, a token or a body: the project logs none)
  request_id   the HTTP request's id (X-Request-ID)    when logged while serving a request
  principal_id the op's caller                         when logged inside an op
  space        the op's space                          when logged inside an op that names one
  op           the op's name                           when logged inside an op
  outcome      ok, or the wire error code              on the `memory.ops` line of each op
  duration_ms  the op's (or request's) duration        on `memory.ops` and `memory.http` lines
  route, status  the route class and HTTP status       on the `memory.http` line of each request
  kind         the job's kind                          on the `memory.jobs` line of each job
               (outcome there: committed, failed or again; principal_id, space and op: the
               job's receipt's, on every line logged while the job runs)
  task, task_id  the Celery task's name and id         on a worker, inside a task
  trace_id, span_id  the current span's                when tracing is on
  exc_type, stack  an exception's class and frames     when one is logged (its message is left
                                                       out: a database error's message can quote
                                                       the values of a row)
"""

from __future__ import annotations

import json
import logging
import traceback
from datetime import UTC, datetime

from memory.observability.context import OP, PRINCIPAL_ID, REQUEST_ID, SPACE_ID

_EXTRA = ("outcome", "duration_ms", "route", "status", "kind")


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        out: dict[str, object] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="microseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        for key, var in (
            ("request_id", REQUEST_ID),
            ("principal_id", PRINCIPAL_ID),
            ("space", SPACE_ID),
            ("op", OP),
        ):
            value = var.get()
            if value is not None:
                out[key] = value
        for key in _EXTRA:
            value = getattr(record, key, None)
            if value is not None:
                out[key] = value
        task = _current_task()
        if task is not None:
            out["task"], out["task_id"] = task
        span = _current_span()
        if span is not None:
            out["trace_id"], out["span_id"] = span
        if record.exc_info and record.exc_info[0] is not None:
            out["exc_type"] = record.exc_info[0].__name__
            out["stack"] = "".join(traceback.format_tb(record.exc_info[2]))
        return json.dumps(out, ensure_ascii=False, default=str)


def _current_span() -> tuple[str, str] | None:
    from opentelemetry import trace

    ctx = trace.get_current_span().get_span_context()
    if not ctx.is_valid:
        return None
    return format(ctx.trace_id, "032x"), format(ctx.span_id, "016x")


def _current_task() -> tuple[str, str] | None:
    """The Celery task this worker thread runs now (name, id), or None (a web process, or a
    worker between tasks)."""
    from celery import current_task

    request = getattr(current_task, "request", None) if current_task else None
    task_id = getattr(request, "id", None)
    if not task_id:
        return None
    return str(current_task.name), str(task_id)
