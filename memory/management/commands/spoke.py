"""Operators' surface (SPEC §8): `python manage.py spoke <action> ...`. Each action prints one
JSON object on stdout and exits non-zero with a clear message on bad input."""

import json
import re

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from memory.models import ApiToken, Principal, Space
from memory.models.principals import hash_token
from memory.ops.grants import issue_root_grant
from memory.timeutil import now

SPACE_ID = re.compile(r"^[A-Za-z0-9._:@-]{1,128}$")
RATE = re.compile(r"^[1-9][0-9]{0,8}/(s|sec|second|m|min|minute|h|hour|d|day)$")


class Command(BaseCommand):
    help = "Operate spoke-memory: spaces, principals, tokens, root grants, demo data."

    def add_arguments(self, parser):
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
        p = sub.add_parser("set-rate", help="a principal's own request rate, or 'default'")
        p.add_argument("principal_id")
        p.add_argument("rate", help="N/s, N/min, N/hour or N/day; 'default' for SPOKE_MEMORY_RATE")
        p = sub.add_parser("demo")
        p.add_argument("--space-id", default="demo")

    def emit(self, payload: dict) -> None:
        self.stdout.write(json.dumps(payload, sort_keys=True))

    def handle(self, *args, **opts):
        action = opts["action"].replace("-", "_")
        self.emit(getattr(self, f"do_{action}")(opts))

    def do_create_space(self, opts) -> dict:
        space_id = opts["space_id"]
        if not SPACE_ID.match(space_id):
            raise CommandError("space_id must be 1-128 characters of [A-Za-z0-9._:@-]")
        if Space.objects.filter(space_id=space_id).exists():
            raise CommandError(f"space {space_id} already exists")
        at = now()
        Space.objects.create(
            space_id=space_id,
            display_name=opts.get("display_name") or space_id,
            created_at=at,
            updated_at=at,
        )
        return {"space_id": space_id}

    def do_create_principal(self, opts) -> dict:
        user = None
        if opts.get("user"):
            user = get_user_model().objects.filter(username=opts["user"]).first()
            if user is None:
                raise CommandError(f"no user named {opts['user']}")
            if Principal.objects.filter(user=user).exists():
                raise CommandError(f"user {opts['user']} is already linked to a principal")
        with transaction.atomic():
            principal = Principal.objects.create(
                display_name=opts["name"], kind=opts["kind"], user=user
            )
            token = principal.issue_token(label="created with the principal")
        return {"principal_id": principal.principal_id, "token": token}

    def _principal(self, principal_id: str) -> Principal:
        principal = Principal.objects.filter(principal_id=principal_id).first()
        if principal is None:
            raise CommandError(f"no principal {principal_id}")
        return principal

    def do_issue_token(self, opts) -> dict:
        return {"token": self._principal(opts["principal_id"]).issue_token()}

    def do_revoke_token(self, opts) -> dict:
        updated = ApiToken.objects.filter(
            token_hash=hash_token(opts["token"]), revoked_at__isnull=True
        ).update(revoked_at=now())
        if not updated:
            raise CommandError("no such active token")
        return {"revoked": True}

    def do_root_grant(self, opts) -> dict:
        space = Space.objects.filter(space_id=opts["space_id"]).first()
        if space is None:
            raise CommandError(f"no space {opts['space_id']}")
        grant = issue_root_grant(space, self._principal(opts["principal_id"]))
        return {"grant_id": grant.grant_id}

    def do_set_rate(self, opts) -> dict:
        principal = self._principal(opts["principal_id"])
        rate = opts["rate"].strip().lower()
        if rate == "default":
            principal.rate = None
        elif RATE.match(rate):
            principal.rate = rate
        else:
            raise CommandError("rate must be N/s, N/min, N/hour or N/day (N ≥ 1), or 'default'")
        principal.save(update_fields=["rate"])
        return {"principal_id": principal.principal_id, "rate": principal.rate or "default"}

    def do_demo(self, opts) -> dict:
        from memory.demo import build_demo

        return build_demo(opts["space_id"])
