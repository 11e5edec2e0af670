"""The TypeScript client (clients/typescript) under Node's own test runner against the live
provider: this test starts the server (pytest-django's live_server on this leg's database) and a
real Celery worker, makes the spaces and principals the Node suite needs, runs `node --test` with
the base URL and token in its environment, and asserts every Node test passed (none skipped).
`npm ci` runs first when clients/typescript/node_modules is missing or older than the lock file
(CI's .ci/setup.d/40-typescript has done it already)."""

from __future__ import annotations

import fcntl
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from memory.services.operators import issue_root_grant
from tests.conftest import make_persona, make_space

TS = Path(__file__).resolve().parents[2] / "clients" / "typescript"


def _npm(*args: str) -> None:
    done = subprocess.run(  # noqa: S603 (npm with fixed arguments)
        ["npm", *args, "--no-audit", "--no-fund"],  # noqa: S607
        cwd=TS,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, f"npm {' '.join(args)}:\n{done.stdout}\n{done.stderr}"


@pytest.fixture(scope="module")
def node_suite() -> Path:
    """The compiled Node tests (.build/test), their dev dependencies installed first if needed."""
    assert shutil.which("node") and shutil.which("npm"), "Node 20+ and npm are needed"
    with open(TS / ".build.lock", "w") as lock:  # two legs at once share this folder
        fcntl.flock(lock, fcntl.LOCK_EX)
        installed = TS / "node_modules" / ".package-lock.json"
        if (
            not installed.exists()
            or installed.stat().st_mtime < (TS / "package-lock.json").stat().st_mtime
        ):
            _npm("ci")
        _npm("run", "pretest")
    return TS / ".build" / "test"


def run_node(*files: Path, **env: str) -> tuple[int, str]:
    done = subprocess.run(  # noqa: S603 (our node, fixed arguments)
        ["node", "--test", "--test-concurrency=1", "--test-reporter=tap", *map(str, files)],  # noqa: S607
        cwd=TS,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=900,
    )
    return done.returncode, done.stdout + done.stderr


def counts(output: str) -> dict[str, int]:
    return {
        k: int(v) for k, v in re.findall(r"^# (pass|fail|skipped|cancelled) (\d+)$", output, re.M)
    }


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_the_node_suite_passes_against_the_live_provider(live_server, start_worker, node_suite):
    app = make_persona("ts app")
    for space_id in ("ts1", "ts-import", "ts-freeze"):
        issue_root_grant(make_space(space_id), app.principal)
    grantee = make_persona("ts grantee")
    start_worker()
    suites = [node_suite / f"{name}.test.js" for name in ("families", "behaviour", "pending")]
    rc, output = run_node(
        *suites,
        SPOKE_URL=live_server.url,
        SPOKE_TOKEN=app.token,
        SPOKE_SPACE="ts1",
        SPOKE_IMPORT_SPACE="ts-import",
        SPOKE_FREEZE_SPACE="ts-freeze",
        SPOKE_GRANTEE=grantee.id,
    )
    assert rc == 0, output[-20000:]
    tally = counts(output)
    assert tally["fail"] == 0 and tally["skipped"] == 0 and tally["cancelled"] == 0, output
    written = sum(
        len(re.findall(r"^\s*test\(", (TS / "test" / f"{name}.test.ts").read_text(), re.M))
        for name in ("families", "behaviour", "pending")
    )
    assert tally["pass"] == written, output
    assert app.token not in output


def test_the_package_packs_installs_imports_and_decides_retries(node_suite):
    """npm pack / install / import / type-check (pack.test.ts), and the client's decisions on
    answers the live provider cannot be made to give (scripted.test.ts)."""
    rc, output = run_node(node_suite / "pack.test.js", node_suite / "scripted.test.js")
    assert rc == 0, output[-20000:]
    written = sum(
        len(re.findall(r"^\s*test\(", (TS / "test" / f"{name}.test.ts").read_text(), re.M))
        for name in ("pack", "scripted")
    )
    assert counts(output) == {"pass": written, "fail": 0, "skipped": 0, "cancelled": 0}, output
