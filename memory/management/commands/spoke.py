"""Operators' surface (docs/protocol.md#operators): `python manage.py spoke <action> ...`. Each action prints one
JSON object on stdout and exits non-zero with a clear message on bad input."""

import json
import os
import tempfile
from argparse import ArgumentParser
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from memory.services import operators
from memory.services.operators import OperatorError

TOKEN_VARIABLE = "SPOKE_MEMORY_TOKEN"


class Command(BaseCommand):
    help = "Operate spoke-memory: spaces, principals, tokens, root grants, demo data."

    def add_arguments(self, parser: ArgumentParser) -> None:
        sub = parser.add_subparsers(dest="action", required=True)
        p = sub.add_parser("create-space")
        p.add_argument("space_id")
        p.add_argument("--display-name")
        p = sub.add_parser("create-principal")
        p.add_argument("name")
        p.add_argument("--kind", choices=["service", "user"], default="service")
        p.add_argument("--user")
        p = sub.add_parser("issue-token")
        p.add_argument("principal_id")
        p = sub.add_parser("revoke-token")
        p.add_argument("token")
        p = sub.add_parser("root-grant")
        p.add_argument("space_id")
        p.add_argument("principal_id")
        p = sub.add_parser(
            "create-agent",
            help="a principal for an agent, its token and a grant in SPACE_ID to capture, recall, "
            "read records and profiles and create subjects: nothing that reviews",
        )
        p.add_argument("space_id")
        p.add_argument("--name", default="Agent", help="its display name (default: Agent)")
        p.add_argument(
            "--subjects",
            nargs="+",
            metavar="SUBJECT_ID",
            help="narrow the grant to these subjects (default: every subject of the space)",
        )
        p = sub.add_parser("set-rate", help="a principal's own request rate, or 'default'")
        p.add_argument("principal_id")
        p.add_argument("rate", help="N/s, N/min, N/hour or N/day; 'default' for SPOKE_MEMORY_RATE")
        p = sub.add_parser(
            "mcp",
            help="serve the MCP tools over stdio as the principal of $SPOKE_MEMORY_TOKEN",
        )
        p.add_argument("--space", required=True, metavar="SPACE_ID")
        sub.add_parser(
            "prepare-embedder",
            help="make the configured engine's embedding model ready (hybrid/6: export the int8 "
            "ONNX form of the bundled model, once per install) and print its identity",
        )
        p = sub.add_parser(
            "citus-setup",
            help="on a Citus coordinator with workers, after migrate: make the reference and the "
            "distributed tables, co-located by space_id (idempotent; docs/scaling.md)",
        )
        p.add_argument(
            "--shard-count",
            type=int,
            metavar="N",
            help="shards of the space co-location group when it is first made (Citus's default: 32)",
        )
        p = sub.add_parser("demo")
        p.add_argument("--space-id", default="demo")
        p.add_argument(
            "--save",
            metavar="PATH",
            help="write the JSON to PATH atomically (mode 0600); an earlier file's password and "
            "token are kept while they still work",
        )
        p.add_argument(
            "--welcome",
            metavar="BASE_URL",
            help="print a short block for a person (console, login, token, docs) instead of JSON",
        )

    def emit(self, payload: dict[str, Any]) -> None:
        self.stdout.write(json.dumps(payload, sort_keys=True))

    def handle(self, *args: Any, **opts: Any) -> None:
        action = opts["action"].replace("-", "_")
        if action == "mcp":  # stdout is the protocol's channel: nothing else is written there
            from memory.mcp.stdio import serve_stdio

            try:
                serve_stdio(opts["space"], os.environ.get(TOKEN_VARIABLE))
            except OperatorError as err:
                raise CommandError(str(err)) from None
            return
        try:
            payload = getattr(self, f"do_{action}")(opts)
        except OperatorError as err:
            raise CommandError(str(err)) from None
        if opts.get("save"):
            write_atomically(Path(opts["save"]), json.dumps(payload, indent=2, sort_keys=True))
        if opts.get("welcome"):
            self.stdout.write(welcome(payload, opts["welcome"]))
        else:
            self.emit(payload)

    def do_create_space(self, opts: dict[str, Any]) -> dict[str, Any]:
        space = operators.create_space(opts["space_id"], opts.get("display_name"))
        return {"space_id": space.space_id}

    def do_create_principal(self, opts: dict[str, Any]) -> dict[str, Any]:
        principal, token = operators.create_principal_with_token(
            opts["name"],
            opts["kind"],
            username=opts.get("user") or "",
            token_label="created with the principal",
        )
        return {"principal_id": principal.principal_id, "token": token}

    def do_create_agent(self, opts: dict[str, Any]) -> dict[str, Any]:
        space = operators.get_space(opts["space_id"])
        principal, token, grant = operators.create_agent(
            space, opts["name"], opts.get("subjects"), home=space
        )
        return {
            "principal_id": principal.principal_id,
            "token": token,
            "grant_id": grant.grant_id,
            "capabilities": grant.capabilities,
            "subject_ids": grant.subject_ids,
        }

    def do_issue_token(self, opts: dict[str, Any]) -> dict[str, Any]:
        return {"token": operators.issue_token(operators.get_principal(opts["principal_id"]))}

    def do_revoke_token(self, opts: dict[str, Any]) -> dict[str, Any]:
        operators.revoke_token_value(opts["token"])
        return {"revoked": True}

    def do_root_grant(self, opts: dict[str, Any]) -> dict[str, Any]:
        space = operators.get_space(opts["space_id"])
        grant = operators.issue_root_grant(space, operators.get_principal(opts["principal_id"]))
        return {"grant_id": grant.grant_id}

    def do_set_rate(self, opts: dict[str, Any]) -> dict[str, Any]:
        principal = operators.set_rate(operators.get_principal(opts["principal_id"]), opts["rate"])
        return {"principal_id": principal.principal_id, "rate": principal.rate or "default"}

    def do_prepare_embedder(self, opts: dict[str, Any]) -> dict[str, Any]:
        from memory.services.recall_engines import registry

        return {
            "engine_policy_version": registry.current().version,
            "embedding_model": registry.model_pin(),
        }

    def do_citus_setup(self, opts: dict[str, Any]) -> dict[str, Any]:
        from memory.services import citus

        count = opts.get("shard_count")
        if count is not None and not 1 <= count <= 4096:
            raise CommandError("--shard-count must be between 1 and 4096")
        try:
            return citus.setup(shard_count=count)
        except citus.CitusError as err:
            raise CommandError(str(err)) from None

    def do_demo(self, opts: dict[str, Any]) -> dict[str, Any]:
        from memory.demo import build_demo

        return build_demo(opts["space_id"], previous=read_previous(opts.get("save")))


def read_previous(path: str | None) -> dict[str, Any] | None:
    """What an earlier run saved, or None when there is none or it is unreadable."""
    if not path:
        return None
    try:
        loaded = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return loaded if isinstance(loaded, dict) else None


def write_atomically(path: Path, text: str) -> None:
    """A reader sees the old file or the new one, never a half-written one (credentials: 0600)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text + "\n")
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o600)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def welcome(demo: dict[str, Any], base_url: str) -> str:
    base = base_url.rstrip("/")
    rows = [
        ("Console", f"{base}{demo['console']['url']}"),
        ("Login", demo["console"]["username"]),
        ("Password", demo["console"]["password"]),
        ("API token", demo["api"]["token"]),
        ("Agent token", demo["agent"]["token"]),
        ("API docs", f"{base}/v1/docs"),
        ("MCP URL", f"{base}/mcp/{demo['space_id']}"),
    ]
    width = max(len(label) for label, _ in rows)
    lines = [f"  {label + ':':<{width + 1}}  {value}" for label, value in rows]
    rule = "-" * max(len(line) for line in lines)
    return "\n".join([rule, f"  spoke-memory is starting at {base}/", *lines, rule])
