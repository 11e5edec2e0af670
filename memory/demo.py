"""`manage.py spoke demo`: a demo space with subjects, candidates, records and profile documents,
a console login and an API token. Principals, tokens and root grants are made by
`memory.services.operators` (as `manage.py spoke` and the console make them); everything else
is written through the ops layer."""

import secrets

from django.contrib.auth import get_user_model
from guardian.shortcuts import assign_perm

from memory.models import Principal, Space
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
        "<script>alert('untrusted content is shown as text')</script>",
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


def _maybe(principal: Principal, op: str, request: dict) -> None:
    if op in HANDLERS:
        call(principal, op, request)


def build_demo(space_id: str = "demo") -> dict:
    at = now()
    space, _ = Space.objects.get_or_create(
        space_id=space_id,
        defaults={"display_name": "Demo space", "created_at": at, "updated_at": at},
    )
    User = get_user_model()
    password = secrets.token_urlsafe(12)
    user = User.objects.filter(username="moderator").first()
    if user is None:
        user = User.objects.create_user("moderator", password=password, is_staff=True)
    else:
        user.set_password(password)
        user.is_staff = True
        user.save()
    principal = Principal.objects.filter(user=user).first() or operators.create_principal(
        "Demo moderator", Principal.USER, username=user.get_username()
    )
    assign_perm("memory.operate_space", user, space)
    if not space.grants.filter(grantee=principal, parent__isnull=True, state="active").exists():
        operators.issue_root_grant(space, principal)
    service, token = operators.create_principal_with_token(
        "Demo app", Principal.SERVICE, token_label="demo", root_grant_in=space
    )
    for subject_id, kind in DEMO_SUBJECTS.items():
        _maybe(
            service,
            "memory.subjects.ensure",
            {"space_id": space_id, "subject_id": subject_id, "kind": kind},
        )
    for subject_id, placement, text in DEMO_CAPTURES:
        _maybe(
            service,
            "memory.capture",
            {
                "space_id": space_id,
                "subject_id": subject_id,
                "capture_scope": {"placement": placement},
                "items": [{"content": {"text": text}}],
            },
        )
    for subject_id, kind, placement, text in DEMO_RECORDS:
        _maybe(
            service,
            "memory.records.create",
            {
                "space_id": space_id,
                "subject_id": subject_id,
                "kind": kind,
                "placement": placement,
                "content": {"text": text},
            },
        )
    _maybe(
        service,
        "memory.profile.update",
        {
            "space_id": space_id,
            "subject_id": "user:ada",
            "kind": "preferences",
            "content": {"text": "Prefers email. Concise answers."},
        },
    )
    return {
        "space_id": space_id,
        "console": {"url": "/console/", "username": "moderator", "password": password},
        "api": {"principal_id": service.principal_id, "token": token},
    }
