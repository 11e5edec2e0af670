"""The cognition filter (docs/protocol.md#cognition-filter): grammar, and matching on every dimension and operator."""

import pytest

from memory.engine.cognition import content_matches, grammar_error


def entry(**over):
    base = {
        "view": "recorded_at",
        "type": "belief",
        "proposition": "p",
        "attribution": {"holder": "ada", "source": "self_report"},
        "basis": {"kind": "stated"},
        "times": {
            "recorded_at": "2026-01-10T00:00:00.000Z",
            "occurred_at": "2026-01-05T12:00:00.000Z",
        },
        "polarity": "affirmed",
        "confidence": 0.7,
        "intensity": 0.2,
    }
    base.update(over)
    return base


def flt(*reqs):
    return {"require": [{"dimension": d, "op": o, "value": v} for d, o, v in reqs]}


def matches(content, *reqs):
    return content_matches(content, flt(*reqs))


@pytest.mark.parametrize(
    "dimension, op, hit, miss",
    [
        ("type", "eq", "belief", "goal"),
        ("type", "in", ["goal", "belief"], ["goal", "emotion"]),
        ("attribution.holder", "eq", "ada", "bob"),
        ("attribution.holder", "in", ["ada"], ["bob", "cy"]),
        ("attribution.source", "eq", "self_report", "observed"),
        ("attribution.source", "in", ["inferred", "self_report"], ["inferred"]),
        ("basis.kind", "eq", "stated", "inferred"),
        ("basis.kind", "in", ["observed", "stated"], ["observed"]),
        ("polarity", "eq", "affirmed", "negated"),
        ("polarity", "in", ["affirmed"], ["negated"]),
        ("confidence", "gte", 0.7, 0.71),
        ("confidence", "lte", 0.7, 0.69),
        ("intensity", "gte", 0, 0.5),
        ("intensity", "lte", 0.2, 0.1),
        ("times.recorded_at", "gte", "2026-01-10T00:00:00Z", "2026-01-10T00:00:00.001Z"),
        ("times.recorded_at", "lt", "2026-01-10T00:00:00.001Z", "2026-01-10T00:00:00Z"),
        ("times.occurred_at", "gte", "2026-01-05T13:00:00+01:00", "2026-01-05T12:00:01Z"),
        ("times.occurred_at", "lt", "2026-01-06T00:00:00Z", "2026-01-05T13:00:00+01:00"),
    ],
)
def test_each_dimension_and_operator(dimension, op, hit, miss):
    content = {"text": "t", "cognition": [entry()]}
    assert grammar_error(flt((dimension, op, hit))) is None
    assert matches(content, (dimension, op, hit))
    assert not matches(content, (dimension, op, miss))


@pytest.mark.parametrize("dimension", ["polarity", "confidence", "intensity", "times.occurred_at"])
def test_an_entry_without_the_member_does_not_match(dimension):
    bare = entry()
    if "." in dimension:
        del bare["times"]["occurred_at"]
    else:
        del bare[dimension]
    value = {
        "polarity": "affirmed",
        "confidence": 0,
        "intensity": 0,
        "times.occurred_at": "2000-01-01T00:00:00Z",
    }[dimension]
    op = "eq" if dimension == "polarity" else "gte"
    assert not matches({"text": "t", "cognition": [bare]}, (dimension, op, value))


def test_requirements_met_on_different_entries_do_not_match():
    content = {
        "text": "t",
        "cognition": [entry(type="goal", confidence=0.2), entry(type="belief", confidence=0.9)],
    }
    assert not matches(content, ("type", "eq", "goal"), ("confidence", "gte", 0.5))
    assert matches(content, ("type", "eq", "belief"), ("confidence", "gte", 0.5))


def test_no_cognition_never_matches():
    assert not matches({"text": "t"}, ("type", "in", ["belief", "goal"]))
    assert not matches({"text": "t", "cognition": []}, ("type", "in", ["belief", "goal"]))
    assert content_matches({"text": "t"}, None)


def test_a_boolean_is_not_a_number():
    assert not matches(
        {"text": "t", "cognition": [entry(confidence=True)]}, ("confidence", "gte", 0.5)
    )


@pytest.mark.parametrize(
    "reqs, index",
    [
        ([("mood", "eq", "x")], 0),
        ([("type", "eq", "belief"), ("type", "gte", "belief")], 1),
        ([("confidence", "eq", 0.5)], 0),
        ([("confidence", "gte", "high")], 0),
        ([("confidence", "gte", True)], 0),
        ([("confidence", "gte", float("nan"))], 0),
        ([("type", "in", [])], 0),
        ([("type", "in", "belief")], 0),
        ([("type", "eq", ["belief"])], 0),
        ([("times.recorded_at", "lte", "2026-01-01T00:00:00Z")], 0),
        ([("times.recorded_at", "gte", "yesterday")], 0),
        ([("times.recorded_at", "gte", "2026-01-01T00:00:00")], 0),
        ([("times.valid_from", "gte", "2026-01-01T00:00:00Z")], 0),
        ([("proposition", "eq", "x")], 0),
    ],
)
def test_grammar_errors_name_the_first_bad_requirement(reqs, index):
    assert grammar_error(flt(*reqs)) == index


def test_grammar_accepts_the_whole_table():
    assert (
        grammar_error(
            flt(
                ("type", "eq", "belief"),
                ("confidence", "lte", 1),
                ("times.occurred_at", "lt", "2026-01-01T00:00:00.000Z"),
            )
        )
        is None
    )
