"""Settings, all from the environment. Defaults are the embedded set-up: SQLite and a
filesystem broker under var/, so `make run` needs no server. See docs/deployment.md."""

import logging
import os
import secrets
from pathlib import Path
from typing import Any

import dj_database_url
import drf_spectacular_sidecar
from django.core.exceptions import ImproperlyConfigured
from whitenoise.compress import Compressor  # type: ignore[import-untyped]

from memory.embedding.embed import default_engine
from memory.flags import ALL_FLAGS

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(os.environ.get("SPOKE_MEMORY_VAR_DIR", BASE_DIR / "var"))
VAR_DIR.mkdir(parents=True, exist_ok=True)
SWAGGER_UI_DIST = "static/drf_spectacular_sidecar/swagger-ui-dist"


def env_bool(name: str, default: bool) -> bool:
    value = os.environ.get(name)
    if value is None:
        return default
    return value.strip().lower() in {"1", "true", "yes", "on"}


def env_int(name: str, default: int) -> int:
    value = os.environ.get(name)
    return default if value is None or value == "" else int(value)


def env_float(name: str, default: float) -> float:
    value = os.environ.get(name)
    return default if value is None or value == "" else float(value)


def env_list(name: str, default: list[str]) -> list[str]:
    value = os.environ.get(name)
    if value is None:
        return default
    return [item.strip() for item in value.split(",") if item.strip()]


DEBUG = env_bool("DEBUG", False)
# The embedded default (no DATABASE_URL, or a SQLite one: `make run`) versus a deployment.
EMBEDDED = os.environ.get("DATABASE_URL", "sqlite:").startswith("sqlite:")
SECRET_KEY_FILE = VAR_DIR / "secret_key"


def _secret_key() -> str:
    """SECRET_KEY signs cursors, sessions and CSRF tokens. From the environment; else the key
    kept in var/secret_key; else, for the embedded default or DEBUG only, a random key made once
    into that file (mode 0600). A deployment (a server DATABASE_URL, DEBUG off) without either
    refuses to start: a key made per host would differ between web processes (docs/deployment.md)."""
    key = os.environ.get("SECRET_KEY", "")
    if key:
        return key
    try:
        return SECRET_KEY_FILE.read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        pass
    if not (EMBEDDED or DEBUG):
        raise ImproperlyConfigured(
            "SECRET_KEY is not set. This configuration names a database server "
            "(DATABASE_URL) with DEBUG off, so it is a deployment: set SECRET_KEY in the "
            "environment, the same long random value on every web and worker host (e.g. "
            "python -c 'import secrets; print(secrets.token_urlsafe(50))'). See "
            "docs/deployment.md."
        )
    key = secrets.token_urlsafe(50)
    # Written whole to a private temporary file, then linked into place: a web process and a
    # worker starting together both end up with the one key that won, never a half-written one.
    tmp = SECRET_KEY_FILE.with_name(f".secret_key.{os.getpid()}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(key + "\n")
    try:
        os.link(tmp, SECRET_KEY_FILE)
    except FileExistsError:
        key = SECRET_KEY_FILE.read_text(encoding="utf-8").strip()
    finally:
        tmp.unlink()
    return key


SECRET_KEY = _secret_key()

ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["localhost", "127.0.0.1", "[::1]", "testserver"])
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", [])
# Browser origins (`scheme://host[:port]`, exactly) the MCP endpoint serves besides those whose host
# is one of ALLOWED_HOSTS; a request without an Origin (a non-browser client) is always served
# (memory/mcp/http.py `origin_refusal`, docs/decisions/mcp-through-django.md).
SPOKE_MEMORY_MCP_ALLOWED_ORIGINS = env_list("SPOKE_MEMORY_MCP_ALLOWED_ORIGINS", [])

# RecordTerm's covering index INCLUDEs columns for PostgreSQL's index-only scans; SQLite ignores
# the INCLUDE and keeps a plain index, which is all it needs (models.W040 says just that).
SILENCED_SYSTEM_CHECKS = ["models.W040"]

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "rest_framework",
    "guardian",
    "django_htmx",
    "memory",
    "reviews",
]

MIDDLEWARE = [
    "spokememory.body_limits.BodyLimitMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    "reviews.middleware.ContentSecurityPolicyMiddleware",
]

ROOT_URLCONF = "spokememory.urls"
WSGI_APPLICATION = "spokememory.wsgi.application"
ASGI_APPLICATION = "spokememory.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

DATABASES = {
    "default": dj_database_url.parse(
        os.environ.get("DATABASE_URL", f"sqlite:///{VAR_DIR / 'spoke-memory.sqlite3'}"),
        conn_max_age=env_int("DATABASE_CONN_MAX_AGE", 60),
        conn_health_checks=True,
    )
}
# Behind a pooler in transaction mode (pgbouncer) a server-side cursor cannot outlive its
# transaction: set DATABASE_DISABLE_SERVER_SIDE_CURSORS=1 there (docs/deployment.md).
DATABASES["default"]["DISABLE_SERVER_SIDE_CURSORS"] = env_bool(
    "DATABASE_DISABLE_SERVER_SIDE_CURSORS", False
)
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # WAL and a busy timeout let the web process and a worker share the file.
    DATABASES["default"]["OPTIONS"] = {
        "timeout": 20,
        "transaction_mode": "IMMEDIATE",
        "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
    }
    DATABASES["default"]["CONN_MAX_AGE"] = 0
    DATABASES["default"]["TEST"] = {"NAME": str(VAR_DIR / "test-spoke-memory.sqlite3")}

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTHENTICATION_BACKENDS = [
    "reviews.ratelimit.LoginLimitBackend",  # first: a blocked login authenticates nowhere
    "django.contrib.auth.backends.ModelBackend",
    "guardian.backends.ObjectPermissionBackend",
]
# guardian: no anonymous user row; permission checks pass with_superuser explicitly.
ANONYMOUS_USER_NAME = None
GUARDIAN_RAISE_403 = False

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

# Static files are served by WhiteNoise from the web process itself, under gunicorn and runserver
# alike. With hashed names on (the default unless DEBUG), `collectstatic` writes compressed
# (gzip), content-hashed copies to STATIC_ROOT and pages link those names, cached for a
# year; `make run` runs collectstatic before it starts the server. With them off (DEBUG, the
# test suite), files are served straight from the source folders and no collectstatic is needed.
STATIC_URL = "static/"
STATICFILES_DIRS: list[Any] = [
    BASE_DIR / "static",
    # Swagger UI for /v1/docs, from the drf-spectacular-sidecar wheel (never a CDN).
    ("swagger-ui", Path(drf_spectacular_sidecar.__file__).parent / SWAGGER_UI_DIST),
]
STATIC_ROOT = Path(os.environ.get("STATIC_ROOT", VAR_DIR / "staticfiles"))
STATIC_HASHED = env_bool("SPOKE_MEMORY_STATIC_HASHED", not DEBUG)
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"
        if STATIC_HASHED
        else "django.contrib.staticfiles.storage.StaticFilesStorage"
    },
}
WHITENOISE_USE_FINDERS = not STATIC_HASHED
# Source maps are for a developer's browser only: not worth compressing (gzip; brotli at its
# best level took most of a minute of CPU for Swagger UI alone, on every collectstatic).
WHITENOISE_SKIP_COMPRESS_EXTENSIONS = [*Compressor.SKIP_COMPRESS_EXTENSIONS, "map"]
WHITENOISE_AUTOREFRESH = DEBUG

LOGIN_URL = "/console/login/"
LOGIN_REDIRECT_URL = "/console/"
SESSION_COOKIE_HTTPONLY = True
SESSION_COOKIE_SAMESITE = "Lax"
CSRF_COOKIE_SAMESITE = "Lax"
SESSION_COOKIE_SECURE = env_bool("SESSION_COOKIE_SECURE", False)
CSRF_COOKIE_SECURE = env_bool("CSRF_COOKIE_SECURE", SESSION_COOKIE_SECURE)

# HTTPS, each switch from the environment (docs/deployment.md, "Behind HTTPS"); all off by
# default, so `make run` serves plain HTTP on localhost.
SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", False)
# Load balancers probe over plain HTTP: the health endpoints are never redirected.
SECURE_REDIRECT_EXEMPT = [r"^healthz$", r"^readyz$"]
SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", False)
SECURE_HSTS_PRELOAD = env_bool("SECURE_HSTS_PRELOAD", False)
# The header a TLS-terminating proxy sets to say the client's request was HTTPS, e.g.
# SECURE_PROXY_SSL_HEADER=X-Forwarded-Proto (value `https`). Only when that proxy always sets
# (and overwrites) it: otherwise a client could claim HTTPS.
_proxy_ssl = os.environ.get("SECURE_PROXY_SSL_HEADER", "").strip()
SECURE_PROXY_SSL_HEADER = (
    ("HTTP_" + _proxy_ssl.upper().replace("-", "_"), "https") if _proxy_ssl else None
)

# Django's cache: the per-principal request throttle and the login limiter's counts. Shared by
# every process only with Redis (SPOKE_MEMORY_CACHE_URL, else REDIS_URL); the local-memory
# default counts per process (docs/deployment.md). A Redis that stops answering costs a request
# at most the socket timeout: then the throttle fails open and logins answer 503
# (docs/reliability.md#faults).
_cache_url = os.environ.get("SPOKE_MEMORY_CACHE_URL") or os.environ.get("REDIS_URL")
_cache_timeout_s = float(os.environ.get("SPOKE_MEMORY_CACHE_TIMEOUT_S", "0.5"))
SPOKE_MEMORY_CACHE_OPTIONS = {
    "socket_connect_timeout": _cache_timeout_s,
    "socket_timeout": _cache_timeout_s,
}
CACHES = {
    "default": (
        {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": _cache_url,
            "KEY_PREFIX": os.environ.get("SPOKE_MEMORY_CACHE_PREFIX", "spoke-memory"),
            "OPTIONS": SPOKE_MEMORY_CACHE_OPTIONS,
        }
        if _cache_url
        else {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}
    )
}

# The login limiter (reviews/ratelimit.py): failures per username and per client address, in
# fixed windows. The client address is REMOTE_ADDR unless a trusted proxy header is named
# (e.g. X-Forwarded-For); then the SPOKE_MEMORY_TRUSTED_PROXY_COUNT-th entry from its right.
SPOKE_MEMORY_LOGIN_MAX_ATTEMPTS = env_int("SPOKE_MEMORY_LOGIN_MAX_ATTEMPTS", 5)
SPOKE_MEMORY_LOGIN_MAX_ADDRESS_ATTEMPTS = env_int("SPOKE_MEMORY_LOGIN_MAX_ADDRESS_ATTEMPTS", 50)
SPOKE_MEMORY_LOGIN_WINDOW_S = env_int("SPOKE_MEMORY_LOGIN_WINDOW_S", 300)
_trusted = os.environ.get("SPOKE_MEMORY_TRUSTED_PROXY_HEADER", "").strip()
SPOKE_MEMORY_TRUSTED_PROXY_HEADER = "HTTP_" + _trusted.upper().replace("-", "_") if _trusted else ""
SPOKE_MEMORY_TRUSTED_PROXY_COUNT = max(1, env_int("SPOKE_MEMORY_TRUSTED_PROXY_COUNT", 1))

# Request bodies are bounded per route before anything reads them (spokememory/body_limits.py):
# the wire by limits.max_request_bytes, the console's import upload by its own limit, every other
# form (console, login, admin) by SPOKE_MEMORY_MAX_FORM_BYTES. Django's own limit on form data
# is the larger of the form and wire bounds, so it never pre-empts the wire's 413 envelope.
SPOKE_MEMORY_MAX_FORM_BYTES = env_int("SPOKE_MEMORY_MAX_FORM_BYTES", 1_048_576)
SPOKE_MEMORY_MAX_IMPORT_UPLOAD_BYTES = env_int("SPOKE_MEMORY_MAX_IMPORT_UPLOAD_BYTES", 67_108_864)

REST_FRAMEWORK: dict[str, Any] = {
    "DEFAULT_AUTHENTICATION_CLASSES": [],
    "DEFAULT_PERMISSION_CLASSES": [],
    "UNAUTHENTICATED_USER": None,
}

# --- spoke-memory -------------------------------------------------------------------------
SPOKE_MEMORY_PROVIDER_ID = os.environ.get("SPOKE_MEMORY_PROVIDER_ID", "spoke-memory-local")
SPOKE_MEMORY_SERVED_CAPABILITIES = sorted(env_list("SPOKE_MEMORY_SERVED_CAPABILITIES", ALL_FLAGS))
SPOKE_MEMORY_REQUIRED_PROFILE_KINDS = env_list("SPOKE_MEMORY_REQUIRED_PROFILE_KINDS", [])
# The recall engine policy (docs/recall.md): hybrid/6 (a calibrated score, docs/recall.md#scores)
# when the semantic extra is installed (as `make run` does), engine/2 without it; these two are
# served (engine/1 and hybrid/1–5 are retired: configuring one fails at start-up,
# docs/decisions/two-served-engines.md).
SPOKE_MEMORY_ENGINE = os.environ.get("SPOKE_MEMORY_ENGINE") or default_engine()
# The rerank stage before the cut (docs/recall.md#reranking, memory.services.rerank): off unless
# one of URL or MODEL is set.
# The per-process cache of the lexical head's postings (memory.selectors.lexical), in MiB; 0: none.
SPOKE_MEMORY_POSTINGS_CACHE_MB = env_int("SPOKE_MEMORY_POSTINGS_CACHE_MB", 64)
if SPOKE_MEMORY_POSTINGS_CACHE_MB < 0:
    raise ImproperlyConfigured("SPOKE_MEMORY_POSTINGS_CACHE_MB must be 0 or more.")
SPOKE_MEMORY_RERANK_URL = os.environ.get("SPOKE_MEMORY_RERANK_URL", "").strip()
SPOKE_MEMORY_RERANK_MODEL = os.environ.get("SPOKE_MEMORY_RERANK_MODEL", "").strip()
SPOKE_MEMORY_RERANK_WIRE = os.environ.get("SPOKE_MEMORY_RERANK_WIRE", "").strip().lower()
if SPOKE_MEMORY_RERANK_WIRE not in ("", "tei", "cohere"):
    raise ImproperlyConfigured("SPOKE_MEMORY_RERANK_WIRE must be tei, cohere or empty.")
SPOKE_MEMORY_RERANK_POOL = env_int("SPOKE_MEMORY_RERANK_POOL", 50)
SPOKE_MEMORY_RERANK_TIMEOUT_S = env_float("SPOKE_MEMORY_RERANK_TIMEOUT_S", 2.0)
SPOKE_MEMORY_RERANK_MAX_TEXT_BYTES = env_int("SPOKE_MEMORY_RERANK_MAX_TEXT_BYTES", 2_048)
SPOKE_MEMORY_RERANK_MAX_ANSWER_BYTES = env_int("SPOKE_MEMORY_RERANK_MAX_ANSWER_BYTES", 65_536)
if SPOKE_MEMORY_RERANK_POOL < 1 or SPOKE_MEMORY_RERANK_MAX_TEXT_BYTES < 16:
    raise ImproperlyConfigured(
        "SPOKE_MEMORY_RERANK_POOL must be at least 1, SPOKE_MEMORY_RERANK_MAX_TEXT_BYTES 16."
    )
SPOKE_MEMORY_REFLECTION_SYNTHESIZER = os.environ.get(
    "SPOKE_MEMORY_REFLECTION_SYNTHESIZER", "memory.engine.reflect.assemble"
)
SPOKE_MEMORY_LIMITS = {
    "max_request_bytes": env_int("SPOKE_MEMORY_MAX_REQUEST_BYTES", 1_048_576),
    "max_content_bytes": env_int("SPOKE_MEMORY_MAX_CONTENT_BYTES", 65_536),
    "max_capture_items": env_int("SPOKE_MEMORY_MAX_CAPTURE_ITEMS", 32),
    "max_page_size": env_int("SPOKE_MEMORY_MAX_PAGE_SIZE", 200),
    "max_recall_records": env_int("SPOKE_MEMORY_MAX_RECALL_RECORDS", 100),
    "max_recall_bytes": env_int("SPOKE_MEMORY_MAX_RECALL_BYTES", 262_144),
    "export_chunk_bytes": env_int("SPOKE_MEMORY_EXPORT_CHUNK_BYTES", 262_144),
    # A stored export is withdrawn this long after it commits (docs/protocol.md#ops; docs/transfer.md).
    "export_retention_s": env_int("SPOKE_MEMORY_EXPORT_RETENTION_S", 86_400),
    "max_extensions_bytes": env_int("SPOKE_MEMORY_MAX_EXTENSIONS_BYTES", 4_096),
    "reflection_min_records": env_int("SPOKE_MEMORY_REFLECTION_MIN_RECORDS", 3),
    "idempotency_retention_s": env_int("SPOKE_MEMORY_IDEMPOTENCY_RETENTION_S", 86_400),
    "session_ttl_s": env_int("SPOKE_MEMORY_SESSION_TTL_S", 3_600),
    # Bounds on input before it costs anything (issue 26; docs/decisions/input-bounds.md):
    # how deep a content object or extensions map may nest, how many items a request's id and
    # kind lists may hold, how many grants one principal may hold in one space.
    "max_json_depth": env_int("SPOKE_MEMORY_MAX_JSON_DEPTH", 32),
    "max_list_items": env_int("SPOKE_MEMORY_MAX_LIST_ITEMS", 256),
    "max_grants_per_principal": env_int("SPOKE_MEMORY_MAX_GRANTS_PER_PRINCIPAL", 64),
    # The bytes of request bodies one principal may send per minute, counted before a body is
    # read (docs/decisions/byte-budget.md); 0: no budget.
    "max_request_bytes_per_min": env_int("SPOKE_MEMORY_MAX_REQUEST_BYTES_PER_MIN", 67_108_864),
}
# The limiter (memory/limits.py; docs/decisions/limiter.md; docs/deployment.md "Limits"): each
# principal's request rate in cost units (SPOKE_MEMORY_RATE above, or its own `set-rate`), its
# space's (the space whose operators made it, shared by all its principals), and how many
# requests of one principal, and of one space, may be in flight at once on the whole server
# (default three quarters of its threads: WEB_CONCURRENCY x GUNICORN_THREADS; 0: no cap).
SPOKE_MEMORY_RATE = os.environ.get("SPOKE_MEMORY_RATE", "60000/min")
SPOKE_MEMORY_SPACE_RATE = os.environ.get("SPOKE_MEMORY_SPACE_RATE", "60000/min")
SPOKE_MEMORY_MAX_IN_FLIGHT = env_int(
    "SPOKE_MEMORY_MAX_IN_FLIGHT",
    max(1, env_int("WEB_CONCURRENCY", 2) * env_int("GUNICORN_THREADS", 4) * 3 // 4),
)
# Each request's PostgreSQL statements are cut at this many milliseconds, and a transaction left
# idle this long is ended (statement_timeout, idle_in_transaction_session_timeout; 0: none).
SPOKE_MEMORY_STATEMENT_TIMEOUT_MS = env_int("SPOKE_MEMORY_STATEMENT_TIMEOUT_MS", 30_000)
DATA_UPLOAD_MAX_MEMORY_SIZE = max(
    SPOKE_MEMORY_MAX_FORM_BYTES, SPOKE_MEMORY_LIMITS["max_request_bytes"]
)
# An import left in `staging` with no chunk this long is discarded by the beat sweep
# (memory.tasks.sweep_imports; docs/transfer.md). Not a wire limit.
SPOKE_MEMORY_IMPORT_STAGING_TTL_S = env_int("SPOKE_MEMORY_IMPORT_STAGING_TTL_S", 86_400)
# What one list page may weigh (its items' JSON, bytes); a page reaching it ends early with a
# next_cursor (docs/decisions/index.md). Not a wire limit: clients follow next_cursor either way.
SPOKE_MEMORY_PAGE_BYTES = env_int("SPOKE_MEMORY_PAGE_BYTES", 1_048_576)
# Judge every request with both schema validators and fail on a disagreement (the test suite).
SPOKE_MEMORY_SCHEMA_CROSSCHECK = os.environ.get("SPOKE_MEMORY_SCHEMA_CROSSCHECK", "") == "1"
# The secret a monitoring system sends (`Authorization: Bearer …`) to see provider-wide counts in
# /readyz (the embedding backlog); empty: only a signed-in console superuser sees them.
SPOKE_MEMORY_HEALTH_TOKEN = os.environ.get("SPOKE_MEMORY_HEALTH_TOKEN", "")
# Pending work still pending after this long is re-queued (then failed) by the sweeper.
SPOKE_MEMORY_JOB_TIMEOUT_S = env_int("SPOKE_MEMORY_JOB_TIMEOUT_S", 300)
# Content writes wake the derived-copy drain (embeddings) with at most one broker message per
# this many milliseconds per process: the first write of a burst at once, one more at the end of
# the window if any write came meanwhile (memory.tasks.wake_drain). 0: one message per write.
SPOKE_MEMORY_DRAIN_WAKE_MS = env_int("SPOKE_MEMORY_DRAIN_WAKE_MS", 100)

# --- Celery -------------------------------------------------------------------------------
# A Redis broker's socket timeouts (kombu waits forever by default: a hung Redis hung every
# request that publishes). Above the transport's 1 s BRPOP poll, so a worker's wait is unaffected.
_broker_timeout_s = float(os.environ.get("SPOKE_MEMORY_BROKER_TIMEOUT_S", "2"))
SPOKE_MEMORY_BROKER_SOCKET_OPTIONS = {
    "socket_timeout": _broker_timeout_s,
    "socket_connect_timeout": _broker_timeout_s,
}
_broker_dir = VAR_DIR / "broker"
CELERY_BROKER_URL = os.environ.get("CELERY_BROKER_URL", "filesystem://")
if CELERY_BROKER_URL.startswith("filesystem://"):
    for sub in ("in", "processed", "control"):
        (_broker_dir / sub).mkdir(parents=True, exist_ok=True)
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(_broker_dir / "in"),
        "data_folder_out": str(_broker_dir / "in"),
        "processed_folder": str(_broker_dir / "processed"),
        "control_folder": str(_broker_dir / "control"),  # kombu's default is ./control
        "store_processed": False,
    }
else:
    CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": SPOKE_MEMORY_JOB_TIMEOUT_S * 2}
    if CELERY_BROKER_URL.startswith(("redis://", "rediss://")):
        CELERY_BROKER_TRANSPORT_OPTIONS.update(SPOKE_MEMORY_BROKER_SOCKET_OPTIONS)
# A publish after a write's commit tries twice; then it is logged and the job waits in the job
# table for the sweeper (the outbox). With the socket timeouts above, a Redis broker that hangs
# costs a request at most ~5 s instead of forever (docs/reliability.md#faults).
CELERY_TASK_PUBLISH_RETRY_POLICY = {
    "max_retries": 1,
    "interval_start": 0,
    "interval_step": 0.2,
    "interval_max": 0.2,
}
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_RESULT_BACKEND = None
CELERY_TASK_IGNORE_RESULT = True
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_ALWAYS_EAGER = env_bool("CELERY_TASK_ALWAYS_EAGER", False)
CELERY_BEAT_SCHEDULE = {
    "sweep-stuck-jobs": {
        "task": "memory.tasks.sweep_jobs",
        "schedule": float(env_int("SPOKE_MEMORY_SWEEP_INTERVAL_S", 30)),
    },
    "withdraw-expired-exports": {
        "task": "memory.tasks.sweep_exports",
        "schedule": float(env_int("SPOKE_MEMORY_EXPORT_SWEEP_INTERVAL_S", 300)),
    },
    "sweep-abandoned-imports": {
        "task": "memory.tasks.sweep_imports",
        "schedule": float(env_int("SPOKE_MEMORY_EXPORT_SWEEP_INTERVAL_S", 300)),
    },
}

# Observability (docs/observability.md). /metrics answers a bearer of SPOKE_MEMORY_METRICS_TOKEN,
# or a peer in SPOKE_MEMORY_METRICS_ALLOW_FROM (addresses or CIDR networks; loopback by default)
# whose request carries no forwarding header; anyone else gets a 404.
SPOKE_MEMORY_METRICS_TOKEN = os.environ.get("SPOKE_MEMORY_METRICS_TOKEN", "")
SPOKE_MEMORY_METRICS_ALLOW_FROM = env_list(
    "SPOKE_MEMORY_METRICS_ALLOW_FROM", ["127.0.0.0/8", "::1/128"]
)
# The per-space gauges (review queue) name at most this many spaces; the rest sum as "_other".
SPOKE_MEMORY_METRICS_MAX_SPACES = env_int("SPOKE_MEMORY_METRICS_MAX_SPACES", 50)
# memory_bytes_total sums the live records' content (a scan of the records, not an index): each
# process answering /metrics recomputes it at most once per this many seconds.
SPOKE_MEMORY_METRICS_BYTES_EVERY_S = env_float("SPOKE_MEMORY_METRICS_BYTES_EVERY_S", 60.0)
# Log format: "text" (the plain lines below) or "json" (one JSON object per line, with one
# `memory.ops` line per op, one `memory.http` line per request and one `memory.jobs` line per
# job: memory/observability/logs.py; the worker's too: memory/observability/worker.py).
SPOKE_MEMORY_LOG_FORMAT = os.environ.get("SPOKE_MEMORY_LOG_FORMAT", "text").strip().lower()
if SPOKE_MEMORY_LOG_FORMAT not in ("text", "json"):
    raise ImproperlyConfigured("SPOKE_MEMORY_LOG_FORMAT must be text or json.")
_JSON_LOGS = SPOKE_MEMORY_LOG_FORMAT == "json"
if _JSON_LOGS:
    logging.captureWarnings(True)  # Python's warnings as log records (JSON lines), not raw text
_PER_REQUEST_LEVEL = "INFO" if _JSON_LOGS else "WARNING"

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {
        "plain": {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"},
        "json": {"()": "memory.observability.logs.JsonFormatter"},
    },
    "handlers": {
        "console": {
            "class": "logging.StreamHandler",
            "formatter": "json" if _JSON_LOGS else "plain",
        }
    },
    "root": {"handlers": ["console"], "level": os.environ.get("LOG_LEVEL", "WARNING")},
    "loggers": {
        "memory": {"level": os.environ.get("LOG_LEVEL", "INFO")},
        "memory.ops": {"level": _PER_REQUEST_LEVEL},
        "memory.http": {"level": _PER_REQUEST_LEVEL},
        "memory.jobs": {"level": _PER_REQUEST_LEVEL},
    },
}
if CELERY_BROKER_URL.startswith("filesystem://"):
    # The filesystem broker's URL has no host by design; kombu warns "No hostname was supplied"
    # on each connection, which nobody running `make run` can act on.
    LOGGING["loggers"]["kombu.connection"] = {"level": "ERROR"}  # type: ignore[index]
