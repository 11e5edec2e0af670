"""`manage.py spoke demo`: a demo space with subjects, candidates, records and profile documents,
a console login and an API token. Principals, tokens and root grants are made by
`memory.services.operators` (as `manage.py spoke` and the console make them); everything else
is written through the ops layer."""

import secrets
from typing import Any

from django.contrib.auth import get_user_model
from django.db import transaction
from guardian.shortcuts import assign_perm

from memory.models import ApiToken, Principal, ProfileDocument, Space
from memory.models.principals import hash_token
from memory.ops.base import HANDLERS, call
from memory.services import operators
from memory.timeutil import now

DEMO_SUBJECTS = {
    "user:ada": "acme:user",
    "user:grace": "acme:user",
}
DEMO_CAPTURES = [
    (
        "user:ada",
        {"scope": "context", "context_id": "support"},
        "Ada prefers email over phone calls.",
    ),
    (
        "user:ada",
        {"scope": "context", "context_id": "support"},
        "Ada's laptop is a 2021 ThinkPad; she plans to upgrade in March.",
    ),
    ("user:ada", {"scope": "shared"}, "Ada moved to Lisbon last spring."),
    (
        "user:grace",
        {"scope": "context", "context_id": "sales"},
        "Grace wants a quote for 40 seats before the end of the quarter.",
    ),
    (
        "user:grace",
        {"scope": "shared"},
        "Grace is out of the office until the 14th; Ken covers her urgent tickets.",
    ),
]
DEMO_RECORDS = [
    (
        "user:ada",
        "preference",
        {"scope": "shared"},
        "Ada likes concise answers with links to the docs.",
    ),
    (
        "user:grace",
        "fact",
        {"scope": "context", "context_id": "sales"},
        "Grace's team uses the Pro plan.",
    ),
]


# The seed's last step (subject, profile kind): once it exists, the demo data is all there.
SEED_LAST = ("user:ada", "preferences")
DEMO_APP_NAME = "Demo app"
DEMO_TOKEN_LABEL = "demo"
DEMO_AGENT_NAME = "Demo agent"
DEMO_AGENT_TOKEN_LABEL = "demo agent"


def _maybe(principal: Principal, op: str, request: dict[str, Any]) -> None:
    if op in HANDLERS:
        call(principal, op, request)


def build_demo(space_id: str = "demo", previous: dict[str, Any] | None = None) -> dict[str, Any]:
    """Make the demo space, or bring an existing one back to a usable state: re-running it leaves
    one demo app principal, one copy of the demo data and working credentials. `previous` is what
    an earlier run printed (var/demo.json): its password and token are kept while they still
    work, so a second `make run` prints the same ones.

    The accounts are made in one transaction. The data goes through the ops layer (each op its
    own durable transaction) with an idempotency key per step, and is written until its last
    step (Ada's profile document) exists: a run interrupted half-way is finished by the next
    one, whose replayed steps answer from their keys instead of writing twice."""
    with transaction.atomic():
        space, _ = _space(space_id)
        password = _moderator(space, _previous(previous, "console", "password"))
        service, token = _demo_app(space, _previous(previous, "api", "token"))
        agent, agent_token = _demo_agent(space, _previous(previous, "agent", "token"))
    if not _seeded(space):
        _seed(service, space_id)
    return {
        "space_id": space_id,
        "console": {"url": "/console/", "username": "moderator", "password": password},
        "api": {"principal_id": service.principal_id, "token": token},
        # The token to give an agent (MCP): capture, recall, read, create subjects; no review.
        "agent": {
            "principal_id": agent.principal_id,
            "token": agent_token,
            "capabilities": list(operators.AGENT_CAPABILITIES),
        },
    }


def _previous(previous: dict[str, Any] | None, section: str, key: str) -> str | None:
    part = (previous or {}).get(section)
    value = part.get(key) if isinstance(part, dict) else None
    return value if isinstance(value, str) and value else None


def _space(space_id: str) -> tuple[Space, bool]:
    at = now()
    return Space.objects.get_or_create(
        space_id=space_id,
        defaults={"display_name": "Demo space", "created_at": at, "updated_at": at},
    )


def _moderator(space: Space, old_password: str | None) -> str:
    User = get_user_model()
    user = User.objects.filter(username="moderator").first()
    if user is None:
        password = secrets.token_urlsafe(12)
        user = User.objects.create_user("moderator", password=password, is_staff=True)
    else:
        if old_password and user.check_password(old_password):
            password = old_password
        else:
            password = secrets.token_urlsafe(12)
            user.set_password(password)
        user.is_staff = True
        user.save()
    principal = Principal.objects.filter(user=user).first() or operators.create_principal(
        "Demo moderator", Principal.USER, username=user.get_username(), home=space
    )
    assign_perm("memory.operate_space", user, space)
    _ensure_root_grant(space, principal)
    return password


def _demo_app(space: Space, old_token: str | None) -> tuple[Principal, str]:
    service = (
        Principal.objects.filter(kind=Principal.SERVICE, display_name=DEMO_APP_NAME)
        .order_by("created_at", "principal_id")
        .first()
    )
    if service is None:
        return operators.create_principal_with_token(
            DEMO_APP_NAME,
            Principal.SERVICE,
            token_label=DEMO_TOKEN_LABEL,
            root_grant_in=space,
            home=space,  # the demo space's operators manage it on the console's Operate page
        )
    live = ApiToken.objects.filter(principal=service, revoked_at__isnull=True)
    if old_token and live.filter(token_hash=hash_token(old_token)).exists():
        token = old_token
    else:
        # The earlier demo tokens were printed and lost (or never printed): retire them.
        operators.revoke_tokens(live.filter(label=DEMO_TOKEN_LABEL))
        token = operators.issue_token(service, DEMO_TOKEN_LABEL)
    _ensure_root_grant(space, service)
    return service, token


def _demo_agent(space: Space, old_token: str | None) -> tuple[Principal, str]:
    """The demo's agent: operators.create_agent's grant (no review), made once; its token kept
    while it works, as the app's is."""
    agent = (
        Principal.objects.filter(kind=Principal.SERVICE, display_name=DEMO_AGENT_NAME)
        .order_by("created_at", "principal_id")
        .first()
    )
    if agent is None or not _holds_agent_grant(space, agent):
        if agent is not None:  # its grant was revoked: a fresh agent, the old one's tokens retired
            operators.revoke_tokens(ApiToken.objects.filter(principal=agent))
            agent.display_name = f"{DEMO_AGENT_NAME} (retired)"
            agent.save(update_fields=["display_name"])
        made, token, _ = operators.create_agent(
            space, DEMO_AGENT_NAME, home=space, token_label=DEMO_AGENT_TOKEN_LABEL
        )
        return made, token
    live = ApiToken.objects.filter(principal=agent, revoked_at__isnull=True)
    if old_token and live.filter(token_hash=hash_token(old_token)).exists():
        return agent, old_token
    operators.revoke_tokens(live.filter(label=DEMO_AGENT_TOKEN_LABEL))
    return agent, operators.issue_token(agent, DEMO_AGENT_TOKEN_LABEL)


def _holds_agent_grant(space: Space, agent: Principal) -> bool:
    return space.grants.filter(grantee=agent, parent__isnull=True, state="active").exists()


def _ensure_root_grant(space: Space, principal: Principal) -> None:
    if not space.grants.filter(grantee=principal, parent__isnull=True, state="active").exists():
        operators.issue_root_grant(space, principal)


def _seeded(space: Space) -> bool:
    return ProfileDocument.objects.filter(
        space=space,
        subject__space=space,  # both sides of the join name the space: one shard on Citus
        subject__subject_id=SEED_LAST[0],
        kind=SEED_LAST[1],
    ).exists()


def _seed(service: Principal, space_id: str) -> None:
    """The demo data, through the ops layer; every step keyed, so a replay writes nothing."""
    steps = 0

    def step(op: str, request: dict[str, Any]) -> None:
        nonlocal steps
        steps += 1
        _maybe(service, op, {**request, "idempotency_key": f"demo-seed:{space_id}:{steps}"})

    for subject_id, kind in DEMO_SUBJECTS.items():
        step(
            "memory.subjects.ensure",
            {"space_id": space_id, "subject_id": subject_id, "kind": kind},
        )
    for subject_id, placement, text in DEMO_CAPTURES:
        step(
            "memory.capture",
            {
                "space_id": space_id,
                "subject_id": subject_id,
                "capture_scope": {"placement": placement},
                "items": [{"content": {"text": text}}],
            },
        )
    for subject_id, kind, placement, text in DEMO_RECORDS:
        step(
            "memory.records.create",
            {
                "space_id": space_id,
                "subject_id": subject_id,
                "kind": kind,
                "placement": placement,
                "content": {"text": text},
            },
        )
    step(
        "memory.profile.update",
        {
            "space_id": space_id,
            "subject_id": "user:ada",
            "kind": "preferences",
            "content": {"text": "Prefers email. Concise answers."},
        },
    )
