"""Issue 13, item 5: the signing key and the HTTPS settings, in fresh processes (settings are
read once per process). The embedded default makes a random key once under var/ (mode 0600); a
deployment without SECRET_KEY refuses to start; `manage.py check --deploy` is clean under the
production environment of docs/deployment.md, and each HTTPS switch is an environment variable."""

from __future__ import annotations

import os
import secrets
import stat
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PUBLISHED_DEV_KEY = "dev-insecure-spoke-memory-key-set-SECRET_KEY-in-production"

# docs/deployment.md, "Production settings" (hosts are examples; nothing is connected to)
PRODUCTION = {
    "DATABASE_URL": "postgres://spoke@db.internal:5432/spoke",
    "CELERY_BROKER_URL": "redis://redis.internal:6379/0",
    "SPOKE_MEMORY_CACHE_URL": "redis://redis.internal:6379/1",
    "ALLOWED_HOSTS": "memory.example.org",
    "CSRF_TRUSTED_ORIGINS": "https://memory.example.org",
    "SECURE_SSL_REDIRECT": "1",
    "SECURE_HSTS_SECONDS": "31536000",
    "SECURE_HSTS_INCLUDE_SUBDOMAINS": "1",
    "SECURE_HSTS_PRELOAD": "1",
    "SESSION_COOKIE_SECURE": "1",
    "CSRF_COOKIE_SECURE": "1",
    "SECURE_PROXY_SSL_HEADER": "X-Forwarded-Proto",
}
# what the environment of this test run may hold that a deployment's would not (the browser
# tests set DJANGO_ALLOW_ASYNC_UNSAFE for Playwright, which check --deploy rightly refuses)
UNSET = (
    "SECRET_KEY",
    "DEBUG",
    "DATABASE_URL",
    "CELERY_BROKER_URL",
    "REDIS_URL",
    "DJANGO_ALLOW_ASYNC_UNSAFE",
    *PRODUCTION,
)


def run(args: list[str], var: Path, **env: str) -> subprocess.CompletedProcess:
    base = {k: v for k, v in os.environ.items() if k not in UNSET}
    base.update({"SPOKE_MEMORY_VAR_DIR": str(var), "PYTHONPATH": str(ROOT), **env})
    base["DJANGO_SETTINGS_MODULE"] = "spokememory.settings"
    return subprocess.run(
        [sys.executable, "manage.py", *args, *(["--no-imports"] if args[0] == "shell" else [])],
        cwd=ROOT,
        env=base,
        capture_output=True,
        text=True,
    )


PRINT_KEY = ["shell", "-c", "from django.conf import settings; print(settings.SECRET_KEY)"]


def test_the_embedded_default_makes_a_private_random_key_once_and_keeps_it(tmp_path):
    first = run(PRINT_KEY, tmp_path)
    assert first.returncode == 0, first.stderr
    key = first.stdout.strip()
    path = tmp_path / "secret_key"
    assert path.read_text().strip() == key and len(key) >= 50
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert key != PUBLISHED_DEV_KEY
    second = run(PRINT_KEY, tmp_path)
    assert second.stdout.strip() == key  # made once, then read
    other = run(PRINT_KEY, tmp_path / "elsewhere")
    assert other.stdout.strip() != key  # random per installation


def test_a_deployment_without_a_key_refuses_to_start(tmp_path):
    answer = run(["check"], tmp_path, DATABASE_URL=PRODUCTION["DATABASE_URL"])
    assert answer.returncode != 0
    assert "SECRET_KEY is not set" in answer.stderr and "docs/deployment.md" in answer.stderr
    assert not (tmp_path / "secret_key").exists()
    given = run(PRINT_KEY, tmp_path, DATABASE_URL=PRODUCTION["DATABASE_URL"], SECRET_KEY="k" * 60)
    assert given.returncode == 0 and given.stdout.strip() == "k" * 60


def _deploy_check(tmp_path: Path, **env: str) -> subprocess.CompletedProcess:
    return run(
        ["check", "--deploy", "--fail-level", "WARNING"],
        tmp_path,
        SECRET_KEY=secrets.token_urlsafe(50),
        **env,
    )


def test_check_deploy_is_clean_under_the_documented_production_environment(tmp_path):
    answer = _deploy_check(tmp_path, **PRODUCTION)
    assert answer.returncode == 0, answer.stderr
    assert "no issues" in answer.stdout


@pytest.mark.parametrize(
    "switch, warning",
    [
        ("SECURE_HSTS_SECONDS", "security.W004"),
        ("SECURE_SSL_REDIRECT", "security.W008"),
        ("SESSION_COOKIE_SECURE", "security.W012"),
        ("CSRF_COOKIE_SECURE", "security.W016"),
    ],
)
def test_each_https_switch_is_an_environment_variable(tmp_path, switch, warning):
    env = {**PRODUCTION, switch: "0"}
    answer = _deploy_check(tmp_path, **env)
    assert answer.returncode != 0 and warning in answer.stderr


def test_the_proxy_ssl_header_is_read_from_the_environment(tmp_path):
    code = "from django.conf import settings; print(settings.SECURE_PROXY_SSL_HEADER)"
    answer = run(["shell", "-c", code], tmp_path, **PRODUCTION, SECRET_KEY="k" * 60)
    assert answer.stdout.strip() == "('HTTP_X_FORWARDED_PROTO', 'https')"
    plain = run(["shell", "-c", code], tmp_path)
    assert plain.stdout.strip() == "None"


def test_server_side_cursors_can_be_switched_off_for_a_transaction_pooler(tmp_path):
    code = (
        "from django.conf import settings; "
        "print(settings.DATABASES['default']['DISABLE_SERVER_SIDE_CURSORS'])"
    )
    pooled = run(
        ["shell", "-c", code],
        tmp_path,
        **PRODUCTION,
        SECRET_KEY="k" * 60,
        DATABASE_DISABLE_SERVER_SIDE_CURSORS="1",
    )
    assert pooled.stdout.strip() == "True", pooled.stderr
    assert run(["shell", "-c", code], tmp_path).stdout.strip() == "False"
