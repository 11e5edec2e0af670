"""The MCP server: the SDK's low-level `Server` with two handlers, `tools/list` (the tools this
caller may use: the review tools only for a principal whose grants in the space include
`review`) and `tools/call` (arguments checked against the tool's input schema, then the tool's
op through the REST edge's gates). The same server serves streamable HTTP (memory/mcp/http.py)
and stdio (`manage.py spoke mcp`); only how the caller is found differs (`CallerOf`, called per
request in the request's thread; it raises a WireError, the 401, for a token no longer valid).

Django's ORM is synchronous: a handler's database work runs outside the event loop (`in_thread`:
over HTTP in the web thread itself, the loop paused; over stdio in a worker thread).

Every failure of a call becomes a tool result with `isError` (the wire code, message and
details, as a REST error envelope carries them), never a protocol error, a 500 or a broken
session. Nothing here logs arguments or answers: memory content never enters a log line."""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import anyio.to_thread
import mcp_types as types
from django.db import close_old_connections
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_REQUEST
from ulid import ULID

from memory.access import effective_grants, grant_has
from memory.mcp.bridge import current
from memory.mcp.tools import (
    TOOL_LIST,
    TOOLS,
    UNTRUSTED_FIELDS,
    UNTRUSTED_FRAME,
    Caller,
    Tool,
    check_arguments,
    description_of,
    marked,
    output_schema_of,
)
from memory.outage import is_outage, unavailable
from memory.timeutil import now
from memory.wire.errors import InternalError, WireError

log = logging.getLogger("memory.mcp")

CallerOf = Callable[[ServerRequestContext[Any, Any]], Caller]

INSTRUCTIONS = (
    "Long-term memory of people (subjects) in one space. A subject is the person (or agent, team) "
    "a memory is about, named by the application's stable id for them (such as user:ada), the "
    "same in every conversation; remember creates a subject it has not seen yet when your grant "
    "holds subjects_write. `recall` finds reviewed memories; "
    "`remember` proposes one, which a person reviews before recall can find it; `forget` erases "
    "one. Arguments and answers never need more than the subject_id and plain text."
)


def is_reviewer(caller: Caller) -> bool:
    """Whether the caller's effective grants in the space hold `review` (space_admin does)."""
    return any(
        grant_has(g, "review") for g in effective_grants(caller.space_id, caller.principal, now())
    )


def offered(caller: Caller) -> list[Tool]:
    reviewer = is_reviewer(caller)
    return [t for t in TOOL_LIST if reviewer or not t.reviewer_only]


T = TypeVar("T")


def in_thread(fn: Callable[[], T]) -> Awaitable[T]:
    """Synchronous work (the ORM) for a handler on the event loop. Over HTTP the web thread that
    serves the request runs it with its loop paused (memory/mcp/bridge.py: no thread hand-off;
    the request's database connection is handled as Django handles a request's); elsewhere
    (stdio) a thread of anyio's pool runs it, closing its connection when it is too old or
    broken, as Django does after a request."""
    bridge = current()
    if bridge is not None:
        return bridge.run_sync(fn)

    def run() -> T:
        close_old_connections()
        try:
            return fn()
        finally:
            close_old_connections()

    return anyio.to_thread.run_sync(run)


def tool_error(err: WireError) -> types.CallToolResult:
    envelope = err.envelope()
    if "Retry-After" in err.headers:
        envelope["error"].setdefault("details", {})["retry_after_s"] = int(
            err.headers["Retry-After"]
        )
    return types.CallToolResult(
        content=[types.TextContent(text=json.dumps(envelope, ensure_ascii=False))],
        structured_content=envelope,
        is_error=True,
    )


def unknown_tool(name: str) -> WireError:
    # The name is the caller's own string: not echoed (a hostile name is request content).
    # An MCP-only reason (no op answers it), so the class is chosen by code, as data.
    return WireError.of("invalid_input", "No such tool for this caller.", reason="unknown_tool")


def run_tool(caller: Caller, name: str, arguments: dict[str, Any]) -> types.CallToolResult:
    """One tools/call, synchronously (in a worker thread): never raises."""
    tool = TOOLS.get(name)
    try:
        if tool is None or (tool.reviewer_only and not is_reviewer(caller)):
            raise unknown_tool(name)
        check_arguments(tool, arguments)
        result = marked(tool, tool.run(caller, arguments))
    except WireError as err:
        return tool_error(err)
    except Exception as exc:  # noqa: BLE001 - a failure is a tool error, never a broken session
        if is_outage(exc):
            log.warning("database unavailable: %s", type(exc.__cause__ or exc).__name__)
            return tool_error(unavailable())
        request_id = f"req_{ULID()}"
        log.error(
            "internal error %s in tool %s: %s",
            request_id,
            name if tool else "?",
            type(exc).__name__,
            exc_info=exc,
        )
        return tool_error(InternalError("An internal error occurred.", request_id=request_id))
    return types.CallToolResult(
        content=[types.TextContent(text=answer_text(name, result))],
        structured_content=result,
    )


def answer_text(name: str, result: dict[str, Any]) -> str:
    """The text block a model reads: the structured result as JSON; for a tool that answers
    stored text, framed as untrusted data (a preamble, then the JSON between <untrusted-data>
    tags, with every < and > in it escaped as \\u003c/\\u003e, so no stored text can close the
    frame; it stays valid JSON)."""
    text = json.dumps(result, ensure_ascii=False)
    if name not in UNTRUSTED_FIELDS:
        return text
    text = text.replace("<", "\\u003c").replace(">", "\\u003e")
    return f"{UNTRUSTED_FRAME}\n<untrusted-data>\n{text}\n</untrusted-data>"


def describe(tool: Tool) -> types.Tool:
    return types.Tool(
        name=tool.name,
        title=tool.title,
        description=description_of(tool),
        input_schema=tool.input_schema,
        output_schema=output_schema_of(tool),
        annotations=types.ToolAnnotations(
            read_only_hint=tool.name
            in ("recall", "list_memories", "get_memory", "get_profile", "list_candidates"),
            destructive_hint=tool.name in ("forget", "review_candidate"),
            idempotent_hint=tool.name not in ("remember", "review_candidate"),
            open_world_hint=False,
        ),
    )


def input_schema(name: str) -> dict[str, Any] | None:
    tool = TOOLS.get(name)
    return tool.input_schema if tool else None


def build_server(caller_of: CallerOf) -> Server:
    # The caller is found per request, in the thread that does the request's database work:
    # over stdio that re-reads the token (one revoked while the process runs is refused at the
    # next request, as REST refuses it), which raises the 401 WireError.
    async def list_tools(
        ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        try:
            tools = await in_thread(lambda: offered(caller_of(ctx)))
        except WireError as err:
            raise MCPError(code=INVALID_REQUEST, message=err.message) from None
        return types.ListToolsResult(tools=[describe(t) for t in tools])

    async def call_tool(
        ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        def call() -> types.CallToolResult:
            try:
                caller = caller_of(ctx)
            except WireError as err:
                return tool_error(err)
            return run_tool(caller, params.name, dict(params.arguments or {}))

        return await in_thread(call)

    return Server(
        "spoke-memory",
        version="1",
        instructions=INSTRUCTIONS,
        # The 2026 transport checks a tools/call's Mcp-Param-* headers against the tool's input
        # schema; without this it would run the tools/list handler (a grants query) per call.
        get_tool_input_schema=input_schema,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )
