"""The base of every error the provider answers. Each code of the contract
(memory/wire/schemas/errors.json) has its own subclass, generated into
`memory/wire/error_codes.py` (`raise RevisionConflict("…", current_revision=3)`), which carries
the code's HTTP status and types its details; the dispatch turns any of them into the envelope
of docs/protocol.md#errors in one place (`memory/dispatch/responses.py`). Messages are for people and never
echo stored memory content or request content."""

from __future__ import annotations

from typing import Any, ClassVar


class WireError(Exception):
    """Raised anywhere below the edge. Raise the subclass named after the code; `of(code, …)`
    builds one from a code held as data (a verifier's finding, a receipt's failure)."""

    code: str = ""
    http_status: ClassVar[int] = 500
    # code -> the class that raises it, filled as the generated module defines them
    by_code: ClassVar[dict[str, type[WireError]]] = {}
    statuses: ClassVar[dict[str, int]] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "code" in cls.__dict__:
            WireError.by_code[cls.code] = cls
            WireError.statuses[cls.code] = cls.http_status

    def __init__(self, code: str, message: str, **details: Any) -> None:
        if code not in self.statuses:
            raise ValueError(f"unknown wire error code {code!r}")
        super().__init__(message)
        self.code = code
        self.message = message
        self.details = details
        self.headers: dict[str, str] = {}

    @classmethod
    def of(cls, code: str, message: str, **details: Any) -> WireError:
        """The error of `code` (its own class), for a code that is data rather than a choice
        made where the error is raised."""
        raiser = cls.by_code.get(code)
        if raiser is None:
            raise ValueError(f"unknown wire error code {code!r}")
        err = raiser.__new__(raiser)
        WireError.__init__(err, code, message, **details)  # details as data: not checked here
        return err

    @property
    def status(self) -> int:
        return self.statuses[self.code]

    def envelope(self) -> dict[str, Any]:
        err: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.details:
            err["details"] = self.details
        err["extensions"] = {}
        return {"error": err}
