"""memory.receipts.get: by id, or by (space_id, op, idempotency_key) for a client that lost a
response. Visible to the principal that caused the receipt and to the space's admins."""

from memory.access import effective_grants, grant_has
from memory.models import IdempotencyKey, Receipt
from memory.ops.base import OpContext, op
from memory.wire.errors import not_found


def _visible(ctx: OpContext, receipt: Receipt) -> bool:
    if receipt.principal_id == ctx.principal.principal_id:
        return True
    if receipt.space_id is None:
        return False
    return any(
        grant_has(g, "space_admin")
        for g in effective_grants(receipt.space_id, ctx.principal, ctx.at)
    )


@op("memory.receipts.get")
def get(ctx: OpContext, req: dict) -> dict:
    if "receipt_id" in req:
        receipt = Receipt.objects.filter(receipt_id=req["receipt_id"]).first()
    else:
        hit = (
            IdempotencyKey.objects.select_related("receipt")
            .filter(
                space_key=req["space_id"],
                principal=ctx.principal,
                op=req["op"],
                key=req["idempotency_key"],
            )
            .first()
        )
        receipt = hit.receipt if hit else None
    if receipt is None or not _visible(ctx, receipt):
        raise not_found("receipt")
    return {"receipt": receipt.to_wire()}
