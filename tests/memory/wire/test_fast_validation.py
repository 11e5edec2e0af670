"""The compiled request validator (jsonschema-rs) and the reference one (jsonschema) agree on
validity; the client sees the compiled validator's first error, worded like the reference's
(issue 26: re-judging an invalid body with the reference validator cost seconds). The whole suite runs with
SPOKE_MEMORY_SCHEMA_CROSSCHECK, so every request it sends is a cross-check too; this file adds
generated instances per op."""

import json

import pytest
from django.test import override_settings
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memory.wire.validation import ValidatorsDisagree, catalog, request_errors, schema_errors

OPS = sorted(catalog().ops)
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**53) + 1, 2**53 - 1),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=30),
)


def values(keys):
    return st.recursive(
        scalars,
        lambda inner: st.one_of(
            st.lists(inner, max_size=4),
            st.dictionaries(st.sampled_from(keys) | st.text(max_size=8), inner, max_size=5),
        ),
        max_leaves=12,
    )


KEYS = sorted(
    {k for spec in catalog().ops.values() for k in spec.request.get("properties", {})}
    | {
        "text",
        "scope",
        "context_id",
        "action",
        "content",
        "placement",
        "kind",
        "max_records",
        "fragments",
        "reason",
        "dimension",
        "operator",
        "value",
        "structured",
        "cognition",
    }
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    op=st.sampled_from(OPS), body=st.dictionaries(st.sampled_from(KEYS), values(KEYS), max_size=6)
)
def test_both_validators_judge_generated_bodies_alike(op, body):
    spec = catalog().ops[op]
    assert spec.request_fast.is_valid(body) == (not schema_errors(spec.request_validator, body))


def test_valid_minimal_bodies_pass_both():
    for op, body in [
        ("memory.subjects.get", {"space_id": "s1", "subject_id": "u1"}),
        ("memory.recall", {"space_id": "s1", "subject_id": "u1", "query": {"text": "tea"}}),
        (
            "memory.records.create",
            {
                "space_id": "s1",
                "subject_id": "u1",
                "kind": "note",
                "content": {"text": "x"},
                "placement": {"scope": "shared"},
            },
        ),
    ]:
        spec = catalog().ops[op]
        assert spec.request_fast.is_valid(body)
        assert request_errors(spec, body) == []


PATTERN = "^[A-Za-z0-9._:@-]{1,128}$(?!\\n)"


@pytest.mark.parametrize(
    ("body", "error"),
    [
        (
            {"space_id": "s1", "subject_id": "u1", "secret": "do-not-echo"},
            {"path": "/", "message": 'Additional properties are not allowed ("secret" unexpected)'},
        ),
        (
            {"space_id": "s1", "subject_id": 7},
            {"path": "/subject_id", "message": "must be of type string"},
        ),
        ({"space_id": "s1"}, {"path": "/", "message": '"subject_id" is a required property'}),
        (
            {"space_id": "s1", "subject_id": "do not echo"},
            {"path": "/subject_id", "message": "violates pattern " + json.dumps(PATTERN)},
        ),
    ],
)
def test_an_invalid_body_gets_its_first_error_naming_no_value(body, error):
    spec = catalog().ops["memory.subjects.get"]
    errors = request_errors(spec, body)
    assert errors == [error]
    assert schema_errors(spec.request_validator, body)  # the reference validator agrees
    assert "echo" not in str(errors)


class _AlwaysValid:
    def is_valid(self, _body):
        return True


def test_a_disagreement_fails_under_crosscheck_and_the_reference_wins_without(monkeypatch):
    spec = catalog().ops["memory.subjects.get"]
    monkeypatch.setattr(spec, "request_fast", _AlwaysValid())  # a compiled validator gone wrong
    body = {"space_id": "s1"}
    with override_settings(SPOKE_MEMORY_SCHEMA_CROSSCHECK=True), pytest.raises(ValidatorsDisagree):
        request_errors(spec, body)
    with override_settings(SPOKE_MEMORY_SCHEMA_CROSSCHECK=False):
        assert request_errors(spec, body) == []  # production trusts a "valid" verdict: see docs
