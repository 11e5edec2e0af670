"""Issue 41, item 4: every documented example runs, in any order, on one fresh server. The
README's curl tour, its Python tour, its MCP example, its typed-client tours (Python and
TypeScript), both client READMEs' examples (docs/mcp.md links the README's MCP example, not a copy) are read
from the documents themselves and run, as pasted, against one gunicorn server (as `make run`
serves it, here on the test database) holding a fresh demo (var/demo.json in the working
folder), in the documents' order and in the reverse order, each order on its own fresh server and
run twice in a row; any error fails the test. (Before this, the client READMEs' examples made
`user:lin` without a kind and the README's Python tour after them failed with
SUBJECT_KIND_CONFLICT: the reversed order failed on the old READMEs.)"""

# ruff: noqa: S607
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.clients.test_typescript import node_suite, run_ts_example  # noqa: F401 (fixture)
from tests.mcp.conftest import start_server

ROOT = Path(__file__).resolve().parents[1]
BASE = "http://127.0.0.1:8000"

pytestmark = pytest.mark.django_db(transaction=True)


def section(path: str, heading: str) -> str:
    text = (ROOT / path).read_text(encoding="utf-8")
    return text.split(heading, 1)[1].split("\n## ", 1)[0]


def block(path: str, heading: str, lang: str) -> str:
    (code,) = re.findall(rf"```{lang}\n(.*?)```", section(path, heading), re.S)
    return code


def first_block(path: str, lang: str) -> str:
    return re.findall(rf"```{lang}\n(.*?)```", (ROOT / path).read_text(encoding="utf-8"), re.S)[0]


# (name, language, code): every example a reader is told to run
EXAMPLES = [
    ("README curl tour", "sh", lambda: block("README.md", "## A five-minute tour", "sh")),
    ("README Python tour", "python", lambda: block("README.md", "## A five-minute tour", "python")),
    ("README MCP", "python", lambda: block("README.md", "## Agents over MCP", "python")),
    (
        "README typed Python",
        "python",
        lambda: block("README.md", "## The tour in Python", "python"),
    ),
    ("README TypeScript", "ts", lambda: block("README.md", "## The tour in TypeScript", "ts")),
    ("Python client README", "python", lambda: first_block("clients/python/README.md", "python")),
    ("TS client README", "ts", lambda: first_block("clients/typescript/README.md", "ts")),
]


@pytest.fixture
def demo_server(django_db_blocker, tmp_path):
    from memory.demo import build_demo

    demo = build_demo()
    (tmp_path / "var").mkdir()
    (tmp_path / "var" / "demo.json").write_text(json.dumps(demo))
    with django_db_blocker.unblock():
        server = start_server(tmp_path / "gunicorn.log")
    yield server, tmp_path, demo
    server.stop()


def runner(base: str, folder: Path, demo: dict) -> Callable[[str, str, str, int], str]:
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT / "clients" / "python"),
        # the client READMEs: "SPOKE_TOKEN is api.token in var/demo.json"
        "SPOKE_URL": base,
        "SPOKE_TOKEN": demo["api"]["token"],
    }

    def run(name: str, lang: str, code: str, n: int) -> str:
        code = code.replace(BASE, base)
        if lang == "sh":
            done = subprocess.run(
                ["bash", "-euo", "pipefail", "-c", code],
                cwd=folder,
                env=env,
                capture_output=True,
                text=True,
                timeout=300,
            )
            errors = [line for line in done.stdout.splitlines() if line.startswith('{"error"')]
            assert not errors, f"{name}: {errors}"
        elif lang == "python":
            done = subprocess.run(
                [sys.executable, "-c", code],
                cwd=folder,
                env=env,
                capture_output=True,
                text=True,
                timeout=300,
            )
        else:
            code = code.replace('"var/demo.json"', json.dumps(str(folder / "var" / "demo.json")))
            done = run_ts_example(code, folder / f"ts-{n}", **env)
        assert done.returncode == 0, f"{name} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
        return done.stdout

    return run


@pytest.mark.parametrize("order", ["as-documented", "reversed"])
def test_every_documented_example_runs_in_either_order_twice(demo_server, node_suite, order):  # noqa: F811
    """A fresh server and demo per order (the test database is emptied between the two), the
    examples in that order, then the same order again: the second pass meets everything the
    first one left (subjects, kinds, idempotency keys, records)."""
    server, folder, demo = demo_server
    run = runner(server.base, folder, demo)
    examples = [(name, lang, code()) for name, lang, code in EXAMPLES]
    if order == "reversed":
        examples.reverse()
    outputs: dict[str, list[str]] = {}
    for n, (name, lang, code) in enumerate([*examples, *examples]):
        outputs.setdefault(name, []).append(run(name, lang, code, n))
    assert all(len(runs) == 2 for runs in outputs.values())
    assert "concise answers" in outputs["README Python tour"][1]
    assert "concise answers" in outputs["README MCP"][0]  # its recall over MCP
    # no example printed a token
    for runs in outputs.values():
        for out in runs:
            assert demo["api"]["token"] not in out and demo["agent"]["token"] not in out
