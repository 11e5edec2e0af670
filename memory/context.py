"""The context every op handler and write service receives: who calls, which op, with which
negotiated flags, at what time. Below ops, services and selectors, so each can import it."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from memory.flags import CORE
from memory.models import Principal
from memory.timeutil import now


@dataclass
class OpContext:
    principal: Principal
    op: str
    negotiated: tuple[str, ...] = (CORE,)
    at: datetime = field(default_factory=now)
