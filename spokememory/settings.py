"""Settings, all from the environment. Defaults are the embedded set-up: SQLite and a
filesystem broker under var/, so `make run` needs no server. See docs/deployment.md."""

import os
import warnings
from pathlib import Path
from typing import Any

import dj_database_url

from memory.flags import ALL_FLAGS

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(os.environ.get("SPOKE_MEMORY_VAR_DIR", BASE_DIR / "var"))
VAR_DIR.mkdir(parents=True, exist_ok=True)


def env_bool(name: str, default: bool) -> bool:
    value = os.environ.get(name)
    if value is None:
        return default
    return value.strip().lower() in {"1", "true", "yes", "on"}


def env_int(name: str, default: int) -> int:
    value = os.environ.get(name)
    return default if value is None or value == "" else int(value)


def env_list(name: str, default: list[str]) -> list[str]:
    value = os.environ.get(name)
    if value is None:
        return default
    return [item.strip() for item in value.split(",") if item.strip()]


DEBUG = env_bool("DEBUG", False)
SECRET_KEY = os.environ.get("SECRET_KEY", "")
if not SECRET_KEY:
    # A development default only: cursors and sessions signed with it are forgeable by anyone
    # who reads this file. Production must set SECRET_KEY.
    SECRET_KEY = "dev-insecure-spoke-memory-key-set-SECRET_KEY-in-production"  # noqa: S105
    warnings.warn("SECRET_KEY is not set: using the insecure development key", stacklevel=1)

ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["localhost", "127.0.0.1", "[::1]", "testserver"])
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", [])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "guardian",
    "django_htmx",
    "memory",
    "reviews",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
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

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = VAR_DIR / "staticfiles"

LOGIN_URL = "/console/login/"
LOGIN_REDIRECT_URL = "/console/"
SESSION_COOKIE_HTTPONLY = True
SESSION_COOKIE_SAMESITE = "Lax"
CSRF_COOKIE_SAMESITE = "Lax"
SESSION_COOKIE_SECURE = env_bool("SESSION_COOKIE_SECURE", False)
CSRF_COOKIE_SECURE = SESSION_COOKIE_SECURE

# The request body limit is enforced by the dispatch gate (413 payload_too_large), which reads
# the body itself; Django's own limit sits above it so it never pre-empts the wire error.
DATA_UPLOAD_MAX_MEMORY_SIZE = None

REST_FRAMEWORK: dict[str, Any] = {
    "DEFAULT_AUTHENTICATION_CLASSES": [],
    "DEFAULT_PERMISSION_CLASSES": [],
    "UNAUTHENTICATED_USER": None,
    "DEFAULT_THROTTLE_RATES": {"principal": os.environ.get("SPOKE_MEMORY_RATE", "60000/min")},
}

# --- spoke-memory -------------------------------------------------------------------------
SPOKE_MEMORY_PROVIDER_ID = os.environ.get("SPOKE_MEMORY_PROVIDER_ID", "spoke-memory-local")
SPOKE_MEMORY_SERVED_CAPABILITIES = sorted(env_list("SPOKE_MEMORY_SERVED_CAPABILITIES", ALL_FLAGS))
SPOKE_MEMORY_REQUIRED_PROFILE_KINDS = env_list("SPOKE_MEMORY_REQUIRED_PROFILE_KINDS", [])
SPOKE_MEMORY_ENGINE = os.environ.get("SPOKE_MEMORY_ENGINE", "engine/1")
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
    "reflection_min_records": env_int("SPOKE_MEMORY_REFLECTION_MIN_RECORDS", 3),
    "idempotency_retention_s": env_int("SPOKE_MEMORY_IDEMPOTENCY_RETENTION_S", 86_400),
    "session_ttl_s": env_int("SPOKE_MEMORY_SESSION_TTL_S", 3_600),
}
# Pending work still pending after this long is re-queued (then failed) by the sweeper.
# Judge every request with both schema validators and fail on a disagreement (the test suite).
SPOKE_MEMORY_SCHEMA_CROSSCHECK = os.environ.get("SPOKE_MEMORY_SCHEMA_CROSSCHECK", "") == "1"
SPOKE_MEMORY_JOB_TIMEOUT_S = env_int("SPOKE_MEMORY_JOB_TIMEOUT_S", 300)

# --- Celery -------------------------------------------------------------------------------
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
}

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": os.environ.get("LOG_LEVEL", "WARNING")},
    "loggers": {"memory": {"level": os.environ.get("LOG_LEVEL", "INFO")}},
}
