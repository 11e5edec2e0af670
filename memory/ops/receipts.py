"""memory.receipts.get: by id, or by (space_id, op, idempotency_key) for a client that lost a
response. Visible to the principal that caused the receipt and to the space's admins."""

from memory.access import access_receipt
from memory.context import OpContext
from memory.models import IdempotencyKey, Receipt
from memory.ops.signatures import op
from memory.wire import types as t


@op("memory.receipts.get")
def get(ctx: OpContext, req: t.ReceiptsGetRequest) -> t.ReceiptsGetResponse:
    if "receipt_id" in req:
        receipt = Receipt.objects.filter(receipt_id=req["receipt_id"]).first()
    else:
        hit = (
            IdempotencyKey.objects.select_related("receipt")
            .filter(
                space_id=req["space_id"],
                receipt__space_id=req["space_id"],
                principal=ctx.principal,
                op=req["op"],
                key=req["idempotency_key"],
            )
            .first()
        )
        receipt = hit.receipt if hit else None
    return {"receipt": access_receipt(ctx.principal, ctx.at, receipt).to_wire()}
