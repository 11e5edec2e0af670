"""Fixtures of the client tests: the two ports of the contract suite (the provider's in-process
MemoryPort and MemoryClient over a live server), the real-worker fixture of the async tests, and
pytest's `pythonpath` puts clients/python first, so this worktree's client is what runs."""

from __future__ import annotations

import importlib
import time
from typing import Any

import pytest
from spoke_memory_client import MemoryClient, SpokeError

from memory.flags import ALL_FLAGS
from memory.ops.port import InProcessMemoryPort
from memory.wire.errors import WireError
from tools.codegen.wire import op_method

_async = importlib.import_module("tests.memory.async.conftest")  # `async` is a keyword
start_worker = _async.start_worker


class Refused(Exception):
    """An error answer, whichever port gave it (WireError in-process, SpokeError over HTTP)."""

    def __init__(self, code: str, details: dict) -> None:
        super().__init__(code)
        self.code, self.details = code, details


class InProcess:
    """The provider's MemoryPort: `port.records_get(principal, request)`."""

    name = "in-process"

    def __init__(self) -> None:
        self.port = InProcessMemoryPort()

    def __call__(self, who, name: str, /, **request: Any) -> dict:
        method = getattr(self.port, op_method(name))
        try:
            return method(who.principal, request)
        except WireError as exc:
            raise Refused(exc.code, exc.details) from exc

    def wait(self, who, receipt_id: str, timeout: float = 120.0) -> dict:
        deadline = time.monotonic() + timeout
        while True:
            receipt = self(who, "memory.receipts.get", receipt_id=receipt_id)["receipt"]
            if receipt["status"] != "pending" or time.monotonic() > deadline:
                return receipt
            time.sleep(0.05)


class OverHttp:
    """MemoryClient against the live server: `client.records.get(space_id=..., ...)`."""

    name = "http"

    def __init__(self, base_url: str) -> None:
        self.base_url = base_url
        self.clients: dict[str, MemoryClient] = {}

    def client(self, who) -> MemoryClient:
        if who.id not in self.clients:
            self.clients[who.id] = MemoryClient(self.base_url, who.token, capabilities=ALL_FLAGS)
        return self.clients[who.id]

    def __call__(self, who, name: str, /, **request: Any) -> dict:
        target: Any = self.client(who)
        for part in name.split(".")[1:]:
            target = getattr(target, part)
        try:
            return target(**request)
        except SpokeError as exc:
            raise Refused(exc.code, exc.details) from exc

    def wait(self, who, receipt_id: str, timeout: float = 120.0) -> dict:
        return dict(self.client(who).receipts.wait(receipt_id, timeout=timeout))

    def close(self) -> None:
        for client in self.clients.values():
            client.close()


@pytest.fixture(params=["in-process", "http"])
def port(request, transactional_db):
    if request.param == "in-process":
        yield InProcess()
        return
    live_server = request.getfixturevalue("live_server")
    over = OverHttp(live_server.url)
    yield over
    over.close()
