"""Candidates for hybrid/3, measured offline: `python -m bench.tune_hybrid3 --embed-model PATH …`.

The same offline replay as bench.tune_hybrid2 (the pure policies over the LoCoMo dev file: the
engine/2 ranking of each conversation's turns, fused by hybrid/2's RRF with the cosine ranking of
their embeddings), varying what hybrid/3 could change, one thing at a time:

- the **model** (each `--embed-model`: a sentence-transformers directory or cached name);
- **neighbouring-record context**: each turn embedded together with the one before it in the
  conversation (the stored record before it in time);
- **stored session time**: each turn embedded with its session's date in front
  (`[8 May, 2023] Caroline: …`), so "when…" questions can meet the date;
- RRF k ∈ {1, 2, 5} with each (hybrid/2's k = 2 was tuned for MiniLM).

Scored by recall@10 (categories 1–4, and per category) on conversations 1–3 (tuning) and 4–5
(held out), and on all five. Embeddings are cached under var/ per model and variant."""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
from pathlib import Path

from bench._hybrid_common import ROOT
from bench.locomo import DEFAULT_DATA, evidence_of, turns_of

TUNE, HELD = {0, 1, 2}, {3, 4}
VARIANTS = ("turn", "previous+turn", "date+turn")


def cached_embed(cache: Path, prefix: str, model: str, texts: list[str], tag: str):
    """The model's vectors of `texts`, kept as `<cache>/<prefix>-<key>.npy` (key: the model, the
    tag and the texts), so a second run embeds nothing."""
    import numpy as np

    from memory.embedding import embed

    key = hashlib.sha256((model + "\0" + tag + "\0" + "\n".join(texts)).encode()).hexdigest()[:16]
    path = cache / f"{prefix}-{key}.npy"
    if path.exists():
        return np.load(path)
    embed.configure(embed.Config(model=model))
    vectors = embed.embed(texts)
    path.parent.mkdir(parents=True, exist_ok=True)
    np.save(path, vectors)
    return vectors


def _embed(model: str, texts: list[str], tag: str):
    return cached_embed(ROOT / "var", "tune3", model, texts, tag)


def score(questions: list[list[tuple[str, set[str], int]]], ranked_of) -> dict:
    """recall@10 (percent) per (split, category), category 0 = all: `questions` per conversation
    as (question, evidence ids, category); `ranked_of(conversation, question)` the ids ranked,
    best first."""
    sums: dict[tuple[str, int], list[float]] = {}
    for ci, qas in enumerate(questions):
        split = "tune" if ci in TUNE else "held"
        for qi, (_, evidence, category) in enumerate(qas):
            got = set(ranked_of(ci, qi)[:10])
            r = len(evidence & got) / len(evidence)
            for key in ((split, 0), ("all", 0), (split, category), ("all", category)):
                cell = sums.setdefault(key, [0.0, 0])
                cell[0] += r
                cell[1] += 1
    return {k: 100 * v[0] / v[1] for k, v in sums.items()}


def print_table(rows: list[tuple[str, dict]]) -> None:
    print(
        "| candidate | tuning (1–3) | held out (4–5) | all five | held-out multi-hop | "
        "temporal | open-domain | single-hop |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for name, s in rows:
        print(
            f"| {name} | {s[('tune', 0)]:.1f} | {s[('held', 0)]:.1f} | {s[('all', 0)]:.1f} | "
            + " | ".join(f"{s.get(('held', c), float('nan')):.1f}" for c in (1, 2, 3, 4))
            + " |"
        )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--embed-model", action="append", default=[])
    args = parser.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from memory.engine import hybrid, lexical
    from memory.engine.rank import Doc

    models = args.embed_model or [""]
    samples = json.loads(args.data.read_text())
    convs = []
    for sample in samples:
        turns = [
            (t["dia_id"], f"{t['speaker']}: {t['text']}", date)
            for _, date, t in turns_of(sample["conversation"])
        ]
        known = {d for d, _, _ in turns}
        qas = [
            (qa["question"], evidence_of(qa, known), int(qa["category"]))
            for qa in sample["qa"]
            if qa.get("category") in (1, 2, 3, 4)
        ]
        convs.append((turns, [q for q in qas if q[1]]))

    def texts_of(variant: str) -> list[str]:
        out = []
        for turns, _ in convs:
            for i, (_, text, date) in enumerate(turns):
                if variant == "previous+turn" and i > 0:
                    out.append(turns[i - 1][1] + "\n" + text)
                elif variant == "date+turn":
                    out.append(f"[{date.split(' on ')[-1]}] {text}")
                else:
                    out.append(text)
        return out

    lexical_rankings = []
    for turns, qas in convs:
        docs = [Doc(d, 0, text) for d, text, _ in turns]
        lexical_rankings.append(
            [[(r.record_id, r.score) for r in lexical.rank(docs, q)] for q, _, _ in qas]
        )

    questions_of = [qas for _, qas in convs]

    def scored(fused_of) -> dict:
        return score(questions_of, lambda ci, qi: [rid for rid, _ in fused_of(ci, qi)])

    rows = [("engine/2 alone", scored(lambda ci, qi: lexical_rankings[ci][qi]))]
    for model in models:
        questions = [q for _, qas in convs for q, _, _ in qas]
        qvecs = _embed(model, questions, "questions")
        for variant in VARIANTS:
            vectors = _embed(model, texts_of(variant), variant)
            cosine = []
            offset = qoffset = 0
            for turns, qas in convs:
                ids = [d for d, _, _ in turns]
                matrix = vectors[offset : offset + len(turns)]
                offset += len(turns)
                cosine.append(
                    [
                        hybrid.cosine_ranking(qvecs[qoffset + qi], ids, matrix, 50, 0.2)
                        for qi in range(len(qas))
                    ]
                )
                qoffset += len(qas)
            name = Path(model).name if model else "all-MiniLM-L6-v2 (bundled)"
            for k in (1, 2, 5):
                rows.append(
                    (
                        f"{name}, {variant}, RRF k={k}",
                        scored(
                            lambda ci, qi, k=k, cosine=cosine: hybrid.fuse(
                                lexical_rankings[ci][qi][:100], cosine[ci][qi], k=k
                            )
                        ),
                    )
                )
            print(f"  {name} {variant} done", file=sys.stderr)
    print_table(rows)


if __name__ == "__main__":
    main()
