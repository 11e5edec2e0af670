"""Shared by the fault scripts (`faults_*`): posting an op with its idempotency key, judging an
error answer (a clean wire error, docs/protocol.md#errors), and the exactly-once audit of acknowledged writes
against the database: one receipt and one key row per acknowledged key, and a space revision
that moved by exactly one per effect."""

from __future__ import annotations

import json

import httpx

from memory.wire.errors import STATUS


def client_for(url: str, token: str, timeout: float = 5.0) -> httpx.Client:
    return httpx.Client(
        base_url=url,
        timeout=timeout,
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
    )


def post_op(client: httpx.Client, op: str, body: dict) -> httpx.Response:
    return client.post(f"/v1/ops/{op}", content=json.dumps(body))


def unclean(response: httpx.Response, secret: str) -> str | None:
    """Why an error response is not a clean wire error (None when it is): JSON, exactly
    `{"error": envelope}` with a known code and its protocol status, no HTML or traceback, nothing
    of the request's content (`secret` is a marker every request's content carries), and
    `Retry-After` on 503 and 429."""
    text = response.text
    if secret in text:
        return "content echoed"
    if "Traceback" in text or "<html" in text.lower() or "<!doctype" in text.lower():
        return "html or traceback"
    if not response.headers.get("content-type", "").startswith("application/json"):
        return "not json"
    try:
        body = response.json()
    except ValueError:
        return "not json"
    error = body.get("error") if isinstance(body, dict) else None
    if set(body) != {"error"} or not isinstance(error, dict):
        return "not an error envelope"
    if (
        not {"code", "message", "extensions"} <= set(error)
        or STATUS.get(error["code"]) != response.status_code
    ):
        return f"bad envelope for {response.status_code}"
    if response.status_code in (429, 503) and not response.headers.get("retry-after", "").isdigit():
        return "no Retry-After"
    return None


def audit_receipts(
    space_id: str, principal_id: str, acked: dict[tuple[str, str], str]
) -> list[str]:
    """For every acknowledged (op, key) → receipt id: exactly one receipt with that key, the
    acknowledged one, and exactly one idempotency key row, pointing at it."""
    from memory.models import IdempotencyKey, Receipt

    problems = []
    receipts: dict[tuple[str, str], list[str]] = {}
    for op, key, rid in Receipt.objects.filter(
        space_id=space_id, idempotency_key__isnull=False
    ).values_list("op", "idempotency_key", "receipt_id"):
        receipts.setdefault((op, key), []).append(rid)
    rows: dict[tuple[str, str], list[str]] = {}
    for op, key, rid in IdempotencyKey.objects.filter(
        space_id=space_id, principal_id=principal_id
    ).values_list("op", "key", "receipt_id"):
        rows.setdefault((op, key), []).append(rid)
    for (op, key), receipt_id in acked.items():
        found = receipts.get((op, key), [])
        if found != [receipt_id]:
            problems.append(
                f"{op} {key}: receipts {len(found)}, acknowledged one among them: {receipt_id in found}"
            )
        if rows.get((op, key), []) != [receipt_id]:
            problems.append(
                f"{op} {key}: key rows {rows.get((op, key), [])} for receipt {receipt_id}"
            )
    for op_key in receipts.keys() - rows.keys():
        problems.append(f"{op_key[0]} {op_key[1]}: receipt without its key row")
    return problems


def audit_space_revision(space_id: str, before: int, effects: int) -> list[str]:
    """Since revision `before`, the space moved by exactly `effects`, and the receipts written
    since carry the revisions before+1 .. after, each exactly once (no commit without its
    receipt, no receipt without its commit)."""
    from memory.models import Receipt, Space

    after = Space.objects.get(space_id=space_id).revision
    problems = []
    if after - before != effects:
        problems.append(
            f"space revision moved by {after - before}, effects acknowledged: {effects}"
        )
    revisions = sorted(
        Receipt.objects.filter(space_id=space_id, space_revision__gt=before).values_list(
            "space_revision", flat=True
        )
    )
    if revisions != list(range(before + 1, after + 1)):
        problems.append(
            f"receipts since revision {before} do not carry {before + 1}..{after} once each"
        )
    return problems
