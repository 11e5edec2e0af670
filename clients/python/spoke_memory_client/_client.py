"""MemoryClient and AsyncMemoryClient: the wire over HTTP (httpx), with session negotiation,
idempotency keys, bounded retries with backoff, and typed errors. The op methods themselves are
generated (`_ops.py`); this module holds the one request path both clients share."""

from __future__ import annotations

import asyncio
import random
import time
import uuid
from collections.abc import Iterable
from typing import Any, TypedDict, Unpack, cast

import httpx

from spoke_memory_client._ops import AsyncOpsMixin, OpsMixin
from spoke_memory_client.errors import (
    ConnectionFailed,
    RateLimited,
    SessionInvalid,
    SpokeError,
    Unavailable,
    UnexpectedResponse,
    error_from,
)
from spoke_memory_client.types import OPS, Session

USER_AGENT = "spoke-memory-client/0.1"


def new_idempotency_key() -> str:
    """A fresh key for one logical mutation (reused by every retry of it)."""
    return "py-" + uuid.uuid4().hex


def _retry_after(response: httpx.Response) -> float | None:
    value = response.headers.get("Retry-After")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        return None  # an HTTP date: fall back to the backoff


class Options(TypedDict, total=False):
    """Keyword options of both clients."""

    timeout: float  # seconds per request (default 30)
    max_retries: int  # re-sends after the first attempt (default 4)
    backoff: float  # first backoff in seconds (default 0.2), doubling per attempt
    max_backoff: float  # backoff ceiling in seconds (default 10)


class _Secret:
    """Holds the bearer token; its repr (in a debugger, vars(), a log of the object) hides it."""

    __slots__ = ("value",)

    def __init__(self, value: str) -> None:
        self.value = value

    def __repr__(self) -> str:
        return "<redacted>"

    __str__ = __repr__


class _Core:
    """What both clients share: configuration, request preparation and the retry policy."""

    def __init__(
        self,
        base_url: str,
        token: str,
        capabilities: Iterable[str] | None = None,
        *,
        timeout: float = 30.0,
        max_retries: int = 4,
        backoff: float = 0.2,
        max_backoff: float = 10.0,
    ) -> None:
        if not token:
            raise ValueError("a bearer token is required")
        self.base_url = base_url.rstrip("/")
        self.capabilities = sorted(set(capabilities)) if capabilities is not None else None
        self.timeout = timeout
        self.max_retries = max_retries
        self.backoff = backoff
        self.max_backoff = max_backoff
        self._token = _Secret(token)  # never in repr, str or errors
        self.session: Session | None = None

    def __repr__(self) -> str:
        session = self.session["session_id"] if self.session else None
        return (
            f"{type(self).__name__}(base_url={self.base_url!r}, "
            f"capabilities={self.capabilities!r}, session={session!r})"
        )

    def _headers(self) -> dict[str, str]:
        headers = {
            "Authorization": f"Bearer {self._token.value}",
            "Content-Type": "application/json",
            "Accept": "application/json",
            "User-Agent": USER_AGENT,
        }
        if self.session is not None:
            headers["Spoke-Session"] = self.session["session_id"]
        return headers

    @staticmethod
    def _prepare(op: str, body: dict[str, Any]) -> tuple[dict[str, Any], bool]:
        """The body without absent (None) members, a fresh idempotency key for a mutating op that
        has none, and whether the call may be re-sent after a connection error (reads always;
        mutations because they carry a key)."""
        body = {k: v for k, v in body.items() if v is not None}
        info = OPS.get(op)
        if info is not None and info["mutating"] and "idempotency_key" not in body:
            body["idempotency_key"] = new_idempotency_key()
        resendable = (info is not None and not info["mutating"]) or "idempotency_key" in body
        return body, resendable

    def _delay(self, attempt: int, retry_after: float | None) -> float:
        if retry_after is not None:
            return float(min(retry_after, 60.0))
        base: float = min(self.max_backoff, self.backoff * (2**attempt))
        return base * (0.5 + random.random() / 2)  # noqa: S311 (jitter, not a secret)

    def _outcome(self, response: httpx.Response) -> dict[str, Any]:
        try:
            body = response.json()
        except ValueError:
            body = None
        if response.status_code == 200 and isinstance(body, dict):
            return body
        if response.status_code == 200:
            raise UnexpectedResponse("unexpected_response", 200, "the answer is not a JSON object")
        raise error_from(response.status_code, body, _retry_after(response))

    def _judge(
        self, attempt: int, resendable: bool, outcome: httpx.Response | httpx.TransportError
    ) -> dict[str, Any] | float:
        """The answer's body, or how long to wait before sending attempt + 1, or raise. The one
        retry policy of both clients (see docs/clients.md)."""
        if isinstance(outcome, httpx.TransportError):
            if resendable and attempt < self.max_retries:
                return self._delay(attempt, None)
            name = type(outcome).__name__
            raise ConnectionFailed(
                "connection_failed", None, f"no answer from the provider ({name})"
            ) from outcome
        try:
            return self._outcome(outcome)
        except (Unavailable, RateLimited) as error:
            if attempt >= self.max_retries:
                raise
            return self._delay(attempt, error.retry_after)


class MemoryClient(_Core, OpsMixin):
    """A synchronous client of one provider, as one principal (its bearer token).

    With `capabilities`, the first call opens a session through /v1/connect and every call names
    it (`Spoke-Session`); an expired session is reopened once per call. Without, calls are judged
    with the negotiated set ["spoke-memory"].
    """

    def __init__(
        self,
        base_url: str,
        token: str,
        capabilities: Iterable[str] | None = None,
        *,
        transport: httpx.BaseTransport | None = None,
        **options: Unpack[Options],
    ) -> None:
        super().__init__(base_url, token, capabilities, **options)
        self._http = httpx.Client(base_url=self.base_url, timeout=self.timeout, transport=transport)
        self._sleep = time.sleep
        self._init_ops(self)

    def __enter__(self) -> MemoryClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the session (if one is open) and the connection pool."""
        try:
            if self.session is not None:
                try:
                    self._post("/v1/disconnect", {}, resendable=True)
                except SpokeError:
                    pass  # expired or unreachable: nothing left to close
                self.session = None
        finally:
            self._http.close()

    def connect(self) -> Session:
        """Open (or reopen) the session for `capabilities`; returns it."""
        if self.capabilities is None:
            raise ValueError("this client was made without capabilities")
        self.session = None
        answer = self._post("/v1/connect", {"capabilities": self.capabilities}, resendable=True)
        session = cast(Session, answer["session"])
        self.session = session
        return session

    def op(self, name: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
        """Any op by its full name, e.g. client.op("memory.records.get", {...})."""
        return self._call(name, body or {})

    def _call(self, op: str, body: dict[str, Any]) -> dict[str, Any]:
        body, resendable = self._prepare(op, body)
        if self.capabilities is not None and self.session is None:
            self.connect()
        try:
            return self._post(f"/v1/ops/{op}", body, resendable)
        except SessionInvalid:
            if self.capabilities is None:
                raise
            self.connect()  # expired or closed: reopen once, then the same request again
            return self._post(f"/v1/ops/{op}", body, resendable)

    def _post(self, path: str, body: dict[str, Any], resendable: bool) -> dict[str, Any]:
        attempt = 0
        while True:
            try:
                response = self._http.post(path, json=body, headers=self._headers())
            except httpx.TransportError as exc:
                verdict = self._judge(attempt, resendable, exc)
            else:
                verdict = self._judge(attempt, resendable, response)
            if isinstance(verdict, dict):
                return verdict
            self._sleep(verdict)
            attempt += 1


class AsyncMemoryClient(_Core, AsyncOpsMixin):
    """The asyncio twin of MemoryClient (same methods, awaited)."""

    def __init__(
        self,
        base_url: str,
        token: str,
        capabilities: Iterable[str] | None = None,
        *,
        transport: httpx.AsyncBaseTransport | None = None,
        **options: Unpack[Options],
    ) -> None:
        super().__init__(base_url, token, capabilities, **options)
        self._http = httpx.AsyncClient(
            base_url=self.base_url, timeout=self.timeout, transport=transport
        )
        self._sleep = asyncio.sleep
        self._init_ops(self)

    async def __aenter__(self) -> AsyncMemoryClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        try:
            if self.session is not None:
                try:
                    await self._post("/v1/disconnect", {}, resendable=True)
                except SpokeError:
                    pass
                self.session = None
        finally:
            await self._http.aclose()

    async def connect(self) -> Session:
        if self.capabilities is None:
            raise ValueError("this client was made without capabilities")
        self.session = None
        answer = await self._post(
            "/v1/connect", {"capabilities": self.capabilities}, resendable=True
        )
        session = cast(Session, answer["session"])
        self.session = session
        return session

    async def op(self, name: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
        return await self._call(name, body or {})

    async def _call(self, op: str, body: dict[str, Any]) -> dict[str, Any]:
        body, resendable = self._prepare(op, body)
        if self.capabilities is not None and self.session is None:
            await self.connect()
        try:
            return await self._post(f"/v1/ops/{op}", body, resendable)
        except SessionInvalid:
            if self.capabilities is None:
                raise
            await self.connect()
            return await self._post(f"/v1/ops/{op}", body, resendable)

    async def _post(self, path: str, body: dict[str, Any], resendable: bool) -> dict[str, Any]:
        attempt = 0
        while True:
            try:
                response = await self._http.post(path, json=body, headers=self._headers())
            except httpx.TransportError as exc:
                verdict = self._judge(attempt, resendable, exc)
            else:
                verdict = self._judge(attempt, resendable, response)
            if isinstance(verdict, dict):
                return verdict
            await self._sleep(verdict)
            attempt += 1
