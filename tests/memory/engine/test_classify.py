"""Capture classification (docs/protocol.md#engine-policy; engine/1's rules, which every served
policy keeps): pure, deterministic, versioned, advisory."""

import ast
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memory.engine import classify as engine
from memory.engine.classify import LABELS, classify

COG = {
    "view": "recorded_at",
    "type": "goal",
    "proposition": "p",
    "attribution": {"holder": "h", "source": "observed"},
    "basis": {"kind": "observed"},
    "times": {"recorded_at": "2026-01-01T00:00:00.000Z"},
}


@pytest.mark.parametrize(
    "text, label",
    [
        ("Ada prefers email over phone calls.", "preference"),
        ("Grace is going to renew the contract next month.", "plan"),
        ("Ada moved to Lisbon last spring.", "event"),
        ("Grace's team uses the Pro plan.", "fact"),
        ("", "noise"),
        ("ok", "noise"),
        ("lorem ipsum dolor", "noise"),
    ],
)
def test_labels(text, label):
    out = classify({"text": text}, "engine/2")
    assert out["label"] == label
    assert (
        out["label"] in LABELS
        and 0 <= out["confidence"] <= 1
        and out["policy_version"] == "engine/2"
    )


def test_a_non_empty_cognition_array_is_a_signal_and_empty_is_not():
    with_cog = classify({"text": "x", "cognition": [COG]}, "engine/2")
    assert with_cog["label"] == "cognition" and "cognition_present" in with_cog["signals"]
    empty = classify({"text": "x", "cognition": []}, "engine/2")
    assert "cognition_present" not in empty["signals"] and empty["label"] == "noise"


def test_structured_content_is_a_fact_signal():
    out = classify({"text": "x", "structured": {"plan": "pro"}}, "engine/2")
    assert out["label"] == "fact" and "structured_present" in out["signals"]


def test_signals_name_every_rule_that_fired_and_confidence_grows_with_them():
    one = classify({"text": "Ada likes tea"}, "engine/2")
    two = classify({"text": "Ada likes tea over coffee"}, "engine/2")
    assert one["signals"] == ["preference_verb"] and two["signals"] == [
        "preference_verb",
        "preference_marker",
    ]
    assert two["confidence"] > one["confidence"]


def test_deterministic_and_does_not_mutate_its_input():
    content = {"text": "Ada will move to Porto next year", "cognition": [COG]}
    snapshot = repr(content)
    assert classify(content, "engine/2") == classify(content, "engine/2")
    assert repr(content) == snapshot


def test_unknown_policy_version_is_refused():
    with pytest.raises(ValueError):
        classify({"text": "x"}, "engine/99")


def test_the_engine_imports_no_django_and_does_no_io():
    tree = ast.parse(Path(engine.__file__).read_text())
    modules = {
        a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names
    }
    modules |= {
        n.module.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module
    }
    assert modules <= {"__future__", "re", "collections", "typing", "memory"}
    assert all(
        n.module == "memory.engine" or not n.module.startswith("memory")
        for n in ast.walk(tree)
        if isinstance(n, ast.ImportFrom) and n.module
    )


contents = st.fixed_dictionaries(
    {"text": st.text(max_size=200)},
    optional={
        "structured": st.dictionaries(st.text(max_size=5), st.integers(), max_size=3),
        "cognition": st.lists(st.just(COG), max_size=2),
    },
)


@given(contents)
def test_any_content_gets_a_label_a_bounded_confidence_and_the_same_answer_twice(content):
    out = classify(content, "engine/2")
    assert out == classify(content, "engine/2")
    assert out["label"] in LABELS and 0 <= out["confidence"] <= 1
    assert all(isinstance(s, str) for s in out["signals"])
    assert ("cognition_present" in out["signals"]) == bool(content.get("cognition"))


@pytest.mark.parametrize("version", ["engine/2", "hybrid/6"])
def test_every_served_engine_policy_classifies(version):
    """Capture classifies under whatever engine is configured (both served policies keep
    engine/1's rules and name their own version)."""
    out = classify({"text": "I prefer green tea over coffee"}, version)
    assert out["policy_version"] == version
    assert out["label"] == classify({"text": "I prefer green tea over coffee"}, "engine/2")["label"]


@pytest.mark.parametrize("version", ["engine/1", "hybrid/1", "hybrid/2", "hybrid/3"])
def test_a_retired_policy_classifies_nothing(version):
    with pytest.raises(ValueError, match="no classification policy"):
        classify({"text": "I prefer green tea over coffee"}, version)
