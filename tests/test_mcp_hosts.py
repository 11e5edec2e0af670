"""Issue 41, item 3: docs/mcp.md's host sections, each a complete file for its host. Every JSON
block is read from docs/mcp.md itself and validated against the shape its host documents (the
keys, their types, and what the host refuses: Claude Desktop has no remote entries in its config
file, VS Code's key is `servers`). tests/test_first_run.py starts the Claude Desktop block's
command through the official SDK client against `make run`; the streamable-HTTP example runs in
tests/test_examples.py."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

ROOT = Path(__file__).resolve().parents[1]
MCP_DOC = ROOT / "docs" / "mcp.md"

STRINGS = {"type": "object", "additionalProperties": {"type": "string"}}
STR_LIST = {"type": "array", "items": {"type": "string"}}

# Claude Desktop (modelcontextprotocol.io "Connect to local MCP servers"): stdio servers only,
# `command` (absolute path), `args`, `env`.
CLAUDE_DESKTOP_STDIO = {
    "type": "object",
    "required": ["command"],
    "additionalProperties": False,
    "properties": {
        "command": {"type": "string", "pattern": "^/"},
        "args": STR_LIST,
        "env": STRINGS,
    },
}
# Claude Code's .mcp.json (docs.anthropic.com "Connect Claude Code to tools via MCP"): stdio
# entries (type stdio, command, args, env) or remote ones (type http | sse, url, headers).
CLAUDE_CODE_ENTRY = {
    "oneOf": [
        {
            "type": "object",
            "required": ["type", "url"],
            "additionalProperties": False,
            "properties": {
                "type": {"enum": ["http", "sse"]},
                "url": {"type": "string", "pattern": "^https?://"},
                "headers": STRINGS,
            },
        },
        {
            "type": "object",
            "required": ["command"],
            "additionalProperties": False,
            "properties": {
                "type": {"const": "stdio"},
                "command": {"type": "string"},
                "args": STR_LIST,
                "env": STRINGS,
            },
        },
    ]
}
# Cursor's mcp.json (docs.cursor.com "Model Context Protocol"): stdio (command, args, env) or
# remote (url, headers).
CURSOR_ENTRY = {
    "oneOf": [
        {
            "type": "object",
            "required": ["url"],
            "additionalProperties": False,
            "properties": {"url": {"type": "string", "pattern": "^https?://"}, "headers": STRINGS},
        },
        {
            "type": "object",
            "required": ["command"],
            "additionalProperties": False,
            "properties": {"command": {"type": "string"}, "args": STR_LIST, "env": STRINGS},
        },
    ]
}
# VS Code's .vscode/mcp.json (code.visualstudio.com "Use MCP servers in VS Code"): `servers`,
# each stdio (type stdio, command, args, env) or http/sse (type, url, headers); `inputs` of
# promptString with id, description, password.
VSCODE = {
    "type": "object",
    "required": ["servers"],
    "additionalProperties": False,
    "properties": {
        "inputs": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["type", "id", "description"],
                "additionalProperties": False,
                "properties": {
                    "type": {"const": "promptString"},
                    "id": {"type": "string"},
                    "description": {"type": "string"},
                    "password": {"type": "boolean"},
                },
            },
        },
        "servers": {
            "type": "object",
            "minProperties": 1,
            "additionalProperties": {
                "oneOf": [
                    {
                        "type": "object",
                        "required": ["type", "url"],
                        "additionalProperties": False,
                        "properties": {
                            "type": {"enum": ["http", "sse"]},
                            "url": {"type": "string", "pattern": "^https?://"},
                            "headers": STRINGS,
                        },
                    },
                    {
                        "type": "object",
                        "required": ["type", "command"],
                        "additionalProperties": False,
                        "properties": {
                            "type": {"const": "stdio"},
                            "command": {"type": "string"},
                            "args": STR_LIST,
                            "env": STRINGS,
                        },
                    },
                ]
            },
        },
    },
}


def servers_of(entry: dict) -> dict:
    return {
        "type": "object",
        "required": ["mcpServers"],
        "additionalProperties": False,
        "properties": {
            "mcpServers": {"type": "object", "minProperties": 1, "additionalProperties": entry}
        },
    }


SHAPES = {
    "Claude Desktop": servers_of(CLAUDE_DESKTOP_STDIO),
    "Claude Code": servers_of(CLAUDE_CODE_ENTRY),
    "Cursor": servers_of(CURSOR_ENTRY),
    "VS Code": VSCODE,
}


def host_sections() -> dict[str, str]:
    text = MCP_DOC.read_text(encoding="utf-8")
    hosts = text.split("\n## Hosts\n", 1)[1].split("\n## ", 1)[0]
    parts = re.split(r"^### (.+)$", hosts, flags=re.M)
    return {parts[i].strip(): parts[i + 1] for i in range(1, len(parts), 2)}


def host_json(host: str) -> dict:
    (block,) = re.findall(r"```json\n(.*?)```", host_sections()[host], re.S)
    return json.loads(block)


def test_every_host_has_a_section():
    assert list(host_sections()) == [*SHAPES, "Any client over streamable HTTP"]


@pytest.mark.parametrize("host", list(SHAPES))
def test_each_hosts_file_has_its_hosts_documented_shape(host):
    config = host_json(host)
    errors = [e.message for e in Draft202012Validator(SHAPES[host]).iter_errors(config)]
    assert errors == []
    servers = config.get("mcpServers") or config["servers"]
    (entry,) = servers.values()
    if "url" in entry:
        assert entry["url"] == "http://127.0.0.1:8000/mcp/demo"
        assert entry["headers"]["Authorization"].startswith("Bearer ")
    else:
        assert entry["args"][-3:] == ["mcp", "--space", "demo"]
        assert entry["env"] == {"SPOKE_MEMORY_TOKEN": "smk_…"}


@pytest.mark.parametrize(
    "host, wrong",
    [
        # the README's old HTTP entry: Claude Desktop's file takes stdio servers only
        (
            "Claude Desktop",
            {"mcpServers": {"s": {"type": "http", "url": "http://x/mcp/demo"}}},
        ),
        ("Claude Desktop", {"mcpServers": {"s": {"command": "python", "args": []}}}),  # relative
        # VS Code's key is `servers`
        ("VS Code", {"mcpServers": {"s": {"type": "http", "url": "http://x/mcp/demo"}}}),
        ("Cursor", {"mcpServers": {"s": {"url": "http://x", "headers": {"a": 1}}}}),
    ],
)
def test_the_shapes_refuse_what_the_host_refuses(host, wrong):
    assert not Draft202012Validator(SHAPES[host]).is_valid(wrong)


def test_the_token_references_are_the_hosts_own_syntax():
    assert "${SPOKE_MEMORY_TOKEN}" in json.dumps(host_json("Claude Code"))
    assert "${env:SPOKE_MEMORY_TOKEN}" in json.dumps(host_json("Cursor"))
    vscode = host_json("VS Code")
    (prompt,) = vscode["inputs"]
    assert f"${{input:{prompt['id']}}}" in json.dumps(vscode["servers"])
    assert prompt["password"] is True
