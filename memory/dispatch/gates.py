"""Gates 4-6 of SPEC §1.4 (capability, request schema, cognition grammar), shared by the HTTP
edge and by in-process callers (the console), so both are judged the same way."""

from memory.engine.cognition import grammar_error
from memory.wire.errors import WireError
from memory.wire.validation import catalog, request_errors

COGNITION_FLAG = "spoke-cognition"


def capability_missing(required: str, negotiated) -> WireError:
    return WireError(
        "capability_missing",
        f"This request needs the '{required}' capability, which this session has not negotiated.",
        required=required,
        negotiated=sorted(negotiated),
    )


def check_request(op: str, body: dict, negotiated) -> None:
    spec = catalog().ops[op]
    if spec.flag not in negotiated:
        raise capability_missing(spec.flag, negotiated)
    if "cognition_filter" in body and COGNITION_FLAG not in negotiated:
        raise capability_missing(COGNITION_FLAG, negotiated)
    errors = request_errors(spec, body)
    if errors:
        raise WireError(
            "invalid_input",
            "The request does not match the op's schema.",
            reason="schema",
            errors=errors,
        )
    cf = body.get("cognition_filter")
    if cf is not None:
        index = grammar_error(cf)
        if index is not None:
            raise WireError(
                "invalid_input",
                "The cognition filter names a dimension, operator or value this provider does not support.",
                reason="unsupported_cognition_requirement",
                requirement_index=index,
            )
