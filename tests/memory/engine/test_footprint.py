"""memory.engine.transfer.footprint_includes: exact inclusion of unions of grant rectangles
(the coverage an export was made with, docs/protocol.md#ops), checked against brute force on a small
universe with hypothesis."""

from hypothesis import given
from hypothesis import strategies as st

from memory.engine.transfer import footprint_includes

SUBJECTS = ["u1", "u2", "u3"]
CONTEXTS = ["c1", "c2", "c3"]


def rect(subject_ids=None, context_ids=None, shared=False) -> dict:
    return {"subject_ids": subject_ids, "context_ids": context_ids, "shared": shared}


def test_examples():
    everything = rect(shared=True)
    c1 = rect(["u1"], ["c1"])
    assert footprint_includes([everything], [c1])
    assert not footprint_includes([c1], [everything])
    assert footprint_includes([c1], [c1]) and footprint_includes([], [])
    assert not footprint_includes([], [c1])
    # The union counts, not one grant: c1 + c2 over two grants covers {c1, c2}.
    assert footprint_includes([c1, rect(["u1"], ["c2"])], [rect(["u1"], ["c1", "c2"])])
    # "every context" is never covered by a list, however long.
    assert not footprint_includes([rect(None, CONTEXTS)], [rect(None, None)])
    # "every subject" likewise.
    assert not footprint_includes([rect(SUBJECTS, None)], [rect(None, ["c1"])])
    # shared is its own placement.
    assert not footprint_includes([rect(None, None)], [rect(None, [], True)])
    assert footprint_includes([rect(None, None, True)], [rect(["u1"], [], True)])


ids = st.one_of(st.none(), st.lists(st.sampled_from(SUBJECTS), unique=True))
ctxs = st.one_of(st.none(), st.lists(st.sampled_from(CONTEXTS), unique=True))
rects = st.lists(st.builds(rect, ids, ctxs, st.booleans()), max_size=3)

# "u9" and "c9" stand for every id the rectangles cannot name.
POINTS = [
    (s, p)
    for s in SUBJECTS + ["u9"]
    for p in [("context", c) for c in CONTEXTS + ["c9"]] + [("shared",)]
]


def covered(rects: list[dict], s: str, p: tuple) -> bool:
    for r in rects:
        if r["subject_ids"] is not None and s not in r["subject_ids"]:
            continue
        if p == ("shared",):
            if r["shared"]:
                return True
        elif r["context_ids"] is None or p[1] in r["context_ids"]:
            return True
    return False


@given(rects, rects)
def test_agrees_with_brute_force(current, made):
    expected = all(covered(current, s, p) for s, p in POINTS if covered(made, s, p))
    assert footprint_includes(current, made) == expected
