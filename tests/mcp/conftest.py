"""Fixtures of the MCP tests: the web server as production runs it (gunicorn with
spokememory/gunicorn_conf.py, two workers) on the suite's test database, and agents that talk to
it with the official SDK's own client — over streamable HTTP (the initialize handshake, or the
stateless 2026 protocol) or over stdio (`manage.py spoke mcp`). An agent keeps one client
session open across calls (an anyio blocking portal), so a test can interleave tool calls with
REST calls and database checks."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx2
import pytest
from anyio.from_thread import start_blocking_portal
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from tests.conftest import free_port

ROOT = Path(__file__).resolve().parents[2]
worker_env = importlib.import_module("tests.memory.async.conftest").worker_env
MODERN = "2026-07-28"


@dataclass
class Server:
    base: str
    proc: subprocess.Popen
    log: Path

    def url(self, space_id: str = "s1") -> str:
        return f"{self.base}/mcp/{space_id}"

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def start_server(log: Path, workers: int = 2, **env: str) -> Server:
    """gunicorn as `make run` and production start it, on the TEST database; waits for /healthz
    (bounded, so a server that cannot start fails the test instead of hanging it)."""
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    proc = subprocess.Popen(
        [
            str(Path(sys.executable).with_name("gunicorn")),
            "-c",
            "spokememory/gunicorn_conf.py",
            "--bind",
            f"127.0.0.1:{port}",
        ],
        cwd=ROOT,
        env=worker_env(WEB_CONCURRENCY=str(workers), **env),
        stdin=subprocess.DEVNULL,
        stdout=log.open("w"),
        stderr=subprocess.STDOUT,
    )
    server = Server(base, proc, log)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"gunicorn exited with {proc.returncode}:\n{log.read_text()[-4000:]}")
        try:
            with urllib.request.urlopen(f"{base}/healthz", timeout=5) as answer:  # noqa: S310
                if answer.status == 200:
                    return server
        except (urllib.error.URLError, OSError):
            pass
        time.sleep(0.3)
    server.stop()
    pytest.fail(f"gunicorn did not serve /healthz:\n{log.read_text()[-4000:]}")


@pytest.fixture(scope="module")
def web(django_db_setup, django_db_blocker, tmp_path_factory) -> Iterator[Server]:
    """One server (two workers) for a module's tests; each test's data is committed
    (transactional tests), so the server's processes see it."""
    with django_db_blocker.unblock():
        server = start_server(tmp_path_factory.mktemp("mcp-web") / "gunicorn.log")
    yield server
    server.stop()


class ToolFailed(AssertionError):
    pass


class Agent:
    """One SDK client session, used synchronously: `agent.call("recall", subject_id=...)`
    answers the tool result; `agent.ok(...)` its structured content (failing on a tool error);
    `agent.error(...)` the error envelope of a tool error (failing on a success)."""

    def __init__(self, make_client: Callable[[], Client]) -> None:
        self._stack = ExitStack()
        self.portal = self._stack.enter_context(start_blocking_portal())
        self.client = self._stack.enter_context(
            self.portal.wrap_async_context_manager(make_client())
        )

    def close(self) -> None:
        self._stack.close()

    def tools(self) -> list[str]:
        return [t.name for t in self.portal.call(self.client.list_tools).tools]

    def call(self, name: str, /, **arguments: Any):
        return self.portal.call(self.client.call_tool, name, arguments)

    def ok(self, name: str, /, **arguments: Any) -> dict:
        result = self.call(name, **arguments)
        if result.is_error:
            raise ToolFailed(f"{name} failed: {result.structured_content}")
        # What a model reads (the text block) says the same as the structured content (framed
        # as untrusted data where it holds stored text: memory/mcp/server.py `answer_text`).
        assert json.loads(unframed(result.content[0].text)) == result.structured_content
        return result.structured_content

    def error(self, name: str, /, **arguments: Any) -> dict:
        result = self.call(name, **arguments)
        assert result.is_error, f"{name} succeeded: {result.structured_content}"
        envelope = result.structured_content["error"]
        assert json.loads(result.content[0].text)["error"] == envelope
        return envelope


def unframed(text: str) -> str:
    """The JSON of a tool's text block: as it is, or from between the untrusted-data tags."""
    if "\n<untrusted-data>\n" not in text:
        return text
    preamble, _, rest = text.partition("\n<untrusted-data>\n")
    body, _, tail = rest.rpartition("\n</untrusted-data>")
    assert preamble and tail == "", text
    return body


def http_client(
    url: str, token: str | None, mode: str = "legacy", hooks: list | None = None
) -> Callable[[], Client]:
    def make() -> Client:
        headers = {"Authorization": f"Bearer {token}"} if token is not None else {}
        http = httpx2.AsyncClient(
            headers=headers,
            timeout=httpx2.Timeout(60.0),
            event_hooks={"request": hooks or []},
            # a new connection per request: each may land on any worker
            limits=httpx2.Limits(max_keepalive_connections=0),
        )
        return Client(streamable_http_client(url, http_client=http), mode=mode)

    return make


def stdio_client(space_id: str, token: str | None, **env: str) -> Callable[[], Client]:
    def make() -> Client:
        environ = worker_env(**env)
        environ.pop("SPOKE_MEMORY_TOKEN", None)
        if token is not None:
            environ["SPOKE_MEMORY_TOKEN"] = token
        return Client(
            StdioServerParameters(
                command=sys.executable,
                args=["manage.py", "spoke", "mcp", "--space", space_id],
                env=environ,
                cwd=str(ROOT),
            )
        )

    return make


@pytest.fixture
def connect(web, django_db_blocker):
    """`connect(persona, transport="http" | "http-modern" | "stdio", space_id="s1")`: an agent
    of that persona; closed at the end of the test."""
    agents: list[Agent] = []

    def open_agent(who, transport: str = "http", space_id: str = "s1") -> Agent:
        token = who.token if who is not None else None
        if transport == "stdio":
            make = stdio_client(space_id, token)
        else:
            make = http_client(
                web.url(space_id), token, MODERN if transport == "http-modern" else "legacy"
            )
        agent = Agent(make)
        agents.append(agent)
        return agent

    yield open_agent
    for agent in agents:
        agent.close()
