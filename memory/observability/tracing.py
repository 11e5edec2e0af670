"""OpenTelemetry traces, opt-in by the standard environment (docs/observability.md):

- off unless OTEL_TRACES_EXPORTER names an exporter (`console`, `otlp`) or an OTLP endpoint is
  set (OTEL_EXPORTER_OTLP_ENDPOINT / OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, exporter `otlp`), and
  OTEL_SDK_DISABLED is not true; OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES, OTEL_TRACES_SAMPLER
  (+ _ARG) and OTEL_PROPAGATORS are the SDK's own;
- `console` writes one JSON span per line to stdout, or to SPOKE_MEMORY_TRACES_FILE when set
  (the SDK's ConsoleSpanExporter: traces without a collector); `otlp` needs the
  opentelemetry-exporter-otlp package (not a dependency: a deployment that ships to a collector
  installs it);
- once on: the official instrumentations of Django, psycopg, Celery (the task a request enqueues
  carries its `traceparent`; the worker's task span continues the trace) and urllib (the
  embeddings server); the WSGI middleware around the whole web app (so /mcp/ honours
  `traceparent` as REST does); and the span `memory.<op>` of every op (`observe.py`)."""

from __future__ import annotations

import json
import logging
import os
import threading
from collections.abc import Callable
from typing import Any

log = logging.getLogger("memory.observability")
_lock = threading.Lock()
_set_up_in: int | None = None  # the pid whose provider is installed


def exporter_name() -> str | None:
    if os.environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return None
    name = os.environ.get("OTEL_TRACES_EXPORTER", "").strip().lower()
    if name and name != "none":
        return name.split(",")[0].strip()
    if os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT") or os.environ.get(
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"
    ):
        return "otlp"
    return None


def enabled() -> bool:
    return _set_up_in is not None or exporter_name() is not None


def _one_line(span: Any) -> str:
    return json.dumps(json.loads(span.to_json()), separators=(",", ":")) + "\n"


def _exporter(name: str) -> tuple[Any, bool] | None:
    """(exporter, batched) for an OTEL_TRACES_EXPORTER name."""
    from opentelemetry.sdk.trace.export import ConsoleSpanExporter

    if name == "console":
        path = os.environ.get("SPOKE_MEMORY_TRACES_FILE")
        out = open(path, "a", buffering=1, encoding="utf-8") if path else None  # noqa: SIM115
        if out is None:
            return ConsoleSpanExporter(formatter=_one_line), False
        return ConsoleSpanExporter(out=out, formatter=_one_line), False
    if name == "otlp":
        try:
            from opentelemetry.exporter.otlp.proto.http.trace_exporter import (  # type: ignore[import-not-found]
                OTLPSpanExporter,
            )
        except ImportError:
            log.warning(
                "OTEL_TRACES_EXPORTER=otlp but opentelemetry-exporter-otlp is not installed:"
                " traces are off"
            )
            return None
        return OTLPSpanExporter(), True
    log.warning(
        "OTEL_TRACES_EXPORTER=%s is not supported here (console, otlp): traces are off", name
    )
    return None


def setup(role: str, exporter: Any = None) -> bool:
    """Install the tracer provider and the instrumentations in this process (once per process;
    again in a forked child). `exporter`: an exporter to use instead of the environment's (the
    tests' InMemorySpanExporter). Returns whether tracing is on."""
    global _set_up_in
    with _lock:
        if _set_up_in == os.getpid():
            return True
        if exporter is None:
            name = exporter_name()
            made = _exporter(name) if name else None
            if made is None:
                return False
            exporter, batched = made
        else:
            batched = False
        from opentelemetry import trace
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor

        attributes = {"service.name": os.environ.get("OTEL_SERVICE_NAME", "spoke-memory")}
        attributes["spoke.role"] = role
        provider = TracerProvider(resource=Resource.create(attributes))
        processor = BatchSpanProcessor(exporter) if batched else SimpleSpanProcessor(exporter)
        provider.add_span_processor(processor)
        global _provider
        if _provider is None:
            trace.set_tracer_provider(provider)
        else:  # a forked child (prefork worker), or set up again after `teardown` (tests)
            trace._TRACER_PROVIDER = provider  # noqa: SLF001
        _provider = provider
        _instrument()
        _set_up_in = os.getpid()
        return True


_provider: Any = None


def teardown() -> None:
    """Undo `setup` in this process: instrumentations removed, the provider shut down (the
    tests' in-memory exporter; a server never calls this)."""
    global _set_up_in
    with _lock:
        for instrumentor in _instrumentors():
            if instrumentor.is_instrumented_by_opentelemetry:
                instrumentor.uninstrument()
        if _provider is not None:
            _provider.shutdown()
        _set_up_in = None


def _instrumentors() -> list[Any]:
    from opentelemetry.instrumentation.celery import CeleryInstrumentor
    from opentelemetry.instrumentation.django import DjangoInstrumentor
    from opentelemetry.instrumentation.psycopg import PsycopgInstrumentor
    from opentelemetry.instrumentation.urllib import URLLibInstrumentor

    return [DjangoInstrumentor(), PsycopgInstrumentor(), CeleryInstrumentor(), URLLibInstrumentor()]


def _instrument() -> None:
    for instrumentor in _instrumentors():
        if not instrumentor.is_instrumented_by_opentelemetry:
            instrumentor.instrument()


def wrap_wsgi(app: Callable[..., Any]) -> Callable[..., Any]:
    """The web app under OpenTelemetry's WSGI middleware when tracing is on (it extracts a
    request's `traceparent`, /mcp/ included); the app itself otherwise."""
    if not enabled():
        return app
    from opentelemetry.instrumentation.wsgi import OpenTelemetryMiddleware

    return OpenTelemetryMiddleware(app)


def flush() -> None:
    from opentelemetry import trace

    provider = trace.get_tracer_provider()
    force = getattr(provider, "force_flush", None)
    if force is not None:
        force()
