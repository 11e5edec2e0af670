"""Capture classification (docs/protocol.md#engine-policy): a pure, deterministic function of a captured item's content
and the engine policy version. No Django, no I/O. Advisory only: it labels a candidate and says
which signals fired; it decides nothing (review does).

engine/1 labels: preference, fact, event, plan, cognition, noise. Each label has a set of lexical
signals; a non-empty cognition array is a signal of its own (docs/protocol.md#cognition-validation). The label with the most
signals wins, ties broken by the fixed order of LABEL_ORDER; confidence grows with the number of
signals of the winning label and is rounded to two decimals, so equal input gives equal output."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from memory.engine import ENGINE_POLICIES

LABELS = ("preference", "fact", "event", "plan", "cognition", "noise")
# Tie-break order: the more specific reading first.
LABEL_ORDER = ("cognition", "plan", "preference", "event", "fact", "noise")

_SIGNALS: dict[str, list[tuple[str, re.Pattern[str]]]] = {
    "preference": [
        (
            "preference_verb",
            re.compile(
                r"\b(prefers?|preferred|likes?|loves?|enjoys?|hates?|dislikes?|wants?|rather)\b"
            ),
        ),
        ("preference_marker", re.compile(r"\b(favou?rite|over|instead of|not a fan)\b")),
    ],
    "plan": [
        (
            "plan_verb",
            re.compile(
                r"\b(plans?|planning|intends?|going to|will|schedul(?:e|ed|ing)|aims? to)\b"
            ),
        ),
        (
            "future_time",
            re.compile(
                r"\b(tomorrow|next (?:week|month|year|quarter)|soon|later|before the end|by (?:monday|tuesday|wednesday|thursday|friday|january|february|march|april|may|june|july|august|september|october|november|december))\b"
            ),
        ),
    ],
    "event": [
        (
            "past_time",
            re.compile(
                r"\b(yesterday|last (?:week|month|year|spring|summer|autumn|fall|winter|night)|ago|earlier today)\b"
            ),
        ),
        (
            "event_verb",
            re.compile(
                r"\b(moved|met|visited|happened|attended|called|bought|started|finished|joined|left)\b"
            ),
        ),
        (
            "date_mention",
            re.compile(
                r"\b(\d{4}-\d{2}-\d{2}|on (?:monday|tuesday|wednesday|thursday|friday|saturday|sunday))\b"
            ),
        ),
    ],
    "fact": [
        (
            "copula",
            re.compile(r"\b(is|are|was|were|has|have|uses?|works? (?:at|as|for)|lives? in)\b"),
        ),
        ("possessive", re.compile(r"\b\w+'s\b")),
    ],
}

_WORD = re.compile(r"[^\W_]{2,}")


def _classify_v1(content: Mapping[str, object]) -> tuple[str, float, list[str]]:
    raw = content.get("text")
    text = raw if isinstance(raw, str) else ""
    lowered = text.lower()
    fired: dict[str, list[str]] = {label: [] for label in LABELS}
    if content.get("cognition"):
        fired["cognition"].append("cognition_present")
    if isinstance(content.get("structured"), dict) and content["structured"]:
        fired["fact"].append("structured_present")
    words = _WORD.findall(lowered)
    if len(words) < 2 and not fired["cognition"] and not fired["fact"]:
        return "noise", 0.9 if not words else 0.7, ["too_few_words"]
    for label, patterns in _SIGNALS.items():
        for name, pattern in patterns:
            if pattern.search(lowered):
                fired[label].append(name)
    best = max(LABEL_ORDER, key=lambda label: (len(fired[label]), -LABEL_ORDER.index(label)))
    if not fired[best]:
        return "noise", 0.4, ["no_signal"]
    confidence = min(0.95, 0.45 + 0.2 * len(fired[best]))
    if best == "cognition":
        confidence = 0.9
    signals = [s for label in LABEL_ORDER for s in fired[label]]
    return best, round(confidence, 2), signals


# Every engine policy this provider serves classifies with the same rules so far (engine/1's):
# engine/2 and hybrid/6 changed recall, not classification (the classification still names the
# policy version it was made under).
POLICIES: dict[str, Callable[[Mapping[str, object]], tuple[str, float, list[str]]]] = {
    version: _classify_v1 for version in ENGINE_POLICIES
}


def register_policy(version: str, like: str = "engine/2") -> None:
    """Classify captures under `version` as under `like` (the recall engine registry registers
    each served engine so); a version that has rules of its own keeps them."""
    POLICIES.setdefault(version, POLICIES[like])


def classify(content: Mapping[str, object], policy_version: str) -> dict[str, Any]:
    """The Classification object (docs/protocol.md#model-memorycandidate) of one captured item under a policy version.
    Raises ValueError for a version this engine does not implement (a configuration error)."""
    policy = POLICIES.get(policy_version)
    if policy is None:
        raise ValueError(f"no classification policy {policy_version!r}")
    label, confidence, signals = policy(content)
    return {
        "label": label,
        "confidence": confidence,
        "signals": signals,
        "policy_version": policy_version,
    }
