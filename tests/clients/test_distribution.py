"""The client distribution: depends on httpx only, imports nothing of Django or the provider,
and the example of its README runs against a live server."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from memory.services.operators import issue_root_grant
from tests.conftest import make_persona, make_space

CLIENT = Path(__file__).resolve().parents[2] / "clients" / "python"
NO_PROVIDER = (
    "import sys\n"
    "for name in ('django', 'rest_framework', 'memory', 'celery'):\n"
    "    sys.modules[name] = None  # importing any of them now fails\n"
)


def run_isolated(code: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run(  # noqa: S603 (our own interpreter)
        [sys.executable, "-c", NO_PROVIDER + code],
        cwd=str(CLIENT),
        env={**os.environ, "PYTHONPATH": str(CLIENT), **env},
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_the_distribution_depends_on_httpx_only():
    project = tomllib.loads((CLIENT / "pyproject.toml").read_text())["project"]
    assert project["name"] == "spoke-memory-client"
    assert [re.split(r"[<>=!~ ;\[]", d)[0] for d in project["dependencies"]] == ["httpx"]


def test_the_client_imports_without_django_or_the_provider():
    done = run_isolated(
        "import spoke_memory_client as c\n"
        "assert c.MemoryClient and c.AsyncMemoryClient and c.RevisionConflict\n"
        "print(c.__file__)\n"
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().startswith(str(CLIENT))


def readme_example() -> str:
    text = (CLIENT / "README.md").read_text()
    return re.search(r"```python\n(.*?)```", text, re.S).group(1)


@pytest.mark.django_db(transaction=True)
def test_the_readme_example_runs_against_a_live_server(live_server):
    app = make_persona("demo app")
    issue_root_grant(make_space("demo"), app.principal)
    example = readme_example()
    assert len(example.strip().splitlines()) <= 32
    done = run_isolated(example, SPOKE_URL=live_server.url, SPOKE_TOKEN=app.token)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("provider: ")
    assert lines[1] == "1 Lin prefers green tea over coffee."
    assert lines[2] == "conflict; current revision 1"
    assert app.token not in done.stdout + done.stderr


@pytest.mark.django_db(transaction=True)
def test_the_main_readme_python_tour_runs(live_server, tmp_path):
    from memory.demo import build_demo

    demo = build_demo()
    (tmp_path / "var").mkdir()
    (tmp_path / "var" / "demo.json").write_text(__import__("json").dumps(demo))
    text = (CLIENT.parents[1] / "README.md").read_text()
    section = text[text.index("## The tour in Python") :]
    tour = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    tour = tour.replace("http://127.0.0.1:8000", live_server.url)
    done = subprocess.run(  # noqa: S603 (our own interpreter)
        [sys.executable, "-c", NO_PROVIDER + tour],
        cwd=str(tmp_path),
        env={**os.environ, "PYTHONPATH": str(CLIENT)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert "spoke-cognition" in lines[1] and lines[2] == "acme:user"
    assert lines[3].startswith("committed [")
