"""Hand-written methods the generated op namespaces inherit: `receipts.wait`."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, cast

from spoke_memory_client.types import MemoryReceipt

if TYPE_CHECKING:
    from spoke_memory_client._ops import _AsyncCaller, _Caller


class ReceiptTimeout(TimeoutError):
    """`receipts.wait` gave up while the receipt was still pending; `.receipt` is the last seen."""

    def __init__(self, receipt: MemoryReceipt, timeout: float) -> None:
        super().__init__(
            f"receipt {receipt['receipt_id']} still {receipt['status']} after {timeout:g}s"
        )
        self.receipt = receipt


def _next_interval(interval: float, max_interval: float) -> float:
    return min(max_interval, interval * 1.5)


class ReceiptsWait:
    _c: _Caller

    def wait(
        self,
        receipt_id: str,
        *,
        timeout: float = 60.0,
        interval: float = 0.05,
        max_interval: float = 1.0,
    ) -> MemoryReceipt:
        """Poll memory.receipts.get until the receipt is `committed` or `failed` (a failed receipt
        is returned, not raised: its `failure` says why). Raises ReceiptTimeout after `timeout`."""
        deadline = time.monotonic() + timeout
        while True:
            answer: dict[str, Any] = self._c._call(
                "memory.receipts.get", {"receipt_id": receipt_id}
            )
            receipt = cast(MemoryReceipt, answer["receipt"])
            if receipt["status"] != "pending":
                return receipt
            if time.monotonic() >= deadline:
                raise ReceiptTimeout(receipt, timeout)
            time.sleep(min(interval, max(0.0, deadline - time.monotonic())))
            interval = _next_interval(interval, max_interval)


class AsyncReceiptsWait:
    _c: _AsyncCaller

    async def wait(
        self,
        receipt_id: str,
        *,
        timeout: float = 60.0,
        interval: float = 0.05,
        max_interval: float = 1.0,
    ) -> MemoryReceipt:
        """Poll memory.receipts.get until the receipt is `committed` or `failed`."""
        import asyncio

        deadline = time.monotonic() + timeout
        while True:
            answer = await self._c._call("memory.receipts.get", {"receipt_id": receipt_id})
            receipt = cast(MemoryReceipt, answer["receipt"])
            if receipt["status"] != "pending":
                return receipt
            if time.monotonic() >= deadline:
                raise ReceiptTimeout(receipt, timeout)
            await asyncio.sleep(min(interval, max(0.0, deadline - time.monotonic())))
            interval = _next_interval(interval, max_interval)
