"""How hybrid/2's fusion constants were chosen: `python -m bench.tune_hybrid2 [--tune 0 1 2]`.

Offline replay of the pure policies (no database: `memory.engine.lexical.rank` over each
conversation's turn texts, `memory.engine.hybrid.cosine_ranking` over their embeddings) on the
LoCoMo dev file. The grid is scored by recall@10 (categories 1–4) on the `--tune` conversations
only; the best setting is then reported on the held-out conversations (the others) and on all
five, next to engine/2 alone and to hybrid/1's constants. Turn embeddings are cached in var/."""

from __future__ import annotations

import argparse
import itertools
import json
import os
from pathlib import Path

from bench._hybrid_common import ROOT
from bench.locomo import DEFAULT_DATA, evidence_of, turns_of

CACHE = ROOT / "var" / "locomo-embeddings.npy"


def _setup() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "spokememory.settings")
    os.environ.setdefault("SECRET_KEY", "bench-only")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--tune", type=int, nargs="+", default=[0, 1, 2])
    args = parser.parse_args(argv)
    _setup()
    import numpy as np

    from memory.embedding import embed
    from memory.engine import hybrid, hybrid2, lexical
    from memory.engine.rank import Doc

    samples = json.loads(args.data.read_text())
    convs = []
    for sample in samples:
        turns = [
            (t["dia_id"], f"{t['speaker']}: {t['text']}")
            for _, _, t in turns_of(sample["conversation"])
        ]
        qas = [
            (qa["question"], evidence_of(qa, {d for d, _ in turns}))
            for qa in sample["qa"]
            if qa.get("category") in (1, 2, 3, 4)
        ]
        convs.append((turns, [(q, e) for q, e in qas if e]))
    all_texts = [text for turns, _ in convs for _, text in turns]
    if CACHE.exists() and np.load(CACHE).shape[0] == len(all_texts):
        vectors = np.load(CACHE)
    else:
        vectors = embed.embed(all_texts)
        CACHE.parent.mkdir(parents=True, exist_ok=True)
        np.save(CACHE, vectors)
    # Per question: the engine/2 ranking and the cosine similarities (computed once).
    prepared = []  # (conversation index, evidence, lexical ids, cosine ranking)
    offset = 0
    for ci, (turns, qas) in enumerate(convs):
        ids = [d for d, _ in turns]
        docs = [Doc(d, 0, text) for d, text in turns]
        matrix = vectors[offset : offset + len(turns)]
        offset += len(turns)
        qvecs = embed.embed([q for q, _ in qas])
        for (question, evidence), qv in zip(qas, qvecs, strict=True):
            lex = [(r.record_id, r.score) for r in lexical.rank(docs, question)]
            cos = hybrid.cosine_ranking(qv, ids, matrix, top_n=200, min_cosine=0.0)
            prepared.append((ci, evidence, lex, cos))

    def recall_at(setting, which, k=10) -> float:
        total, n = 0.0, 0
        for ci, evidence, lex, cos in prepared:
            if ci not in which:
                continue
            if setting[0] == "convex":
                _, alpha, lex_n, sem_n, floor = setting
                sem = [(rid, s) for rid, s in cos if s >= floor][:sem_n]
                fused = hybrid2.convex(lex[:lex_n], sem, alpha)
            else:
                rrf_k, wl, ws, lex_n, sem_n, floor = setting
                sem = [(rid, s) for rid, s in cos if s >= floor][:sem_n]
                fused = hybrid.fuse(lex[:lex_n], sem, k=rrf_k, weights=(wl, ws))
            got = [rid for rid, _ in fused[:k]]
            total += len(evidence & set(got)) / len(evidence)
            n += 1
        return 100 * total / n

    tune = set(args.tune)
    held = set(range(len(convs))) - tune
    every = set(range(len(convs)))
    grid = list(
        itertools.product(
            [2, 5, 10, 20, 40, 60],  # RRF k
            [1.0],  # lexical weight
            [0.5, 0.75, 1.0, 1.25, 1.5, 2.0],  # semantic weight
            [20, 50, 100],  # lexical depth
            [20, 50, 100],  # semantic depth
            [0.1, 0.2, 0.3],  # cosine floor
        )
    )
    grid += list(
        itertools.product(
            ["convex"],
            [0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8],  # weight of the lexical score
            [20, 50, 100],
            [20, 50, 100],
            [0.1, 0.2, 0.3],
        )
    )
    scored = sorted(((recall_at(s, tune), str(s), s) for s in grid), reverse=True)
    print(
        "semantic alone:",
        [round(recall_at(("convex", 0.0, 100, 100, 0.0), w), 1) for w in (tune, held, every)],
    )
    hybrid1 = (hybrid.RRF_K, 1.0, 1.0, 10**9, hybrid.SEMANTIC_TOP_N, hybrid.MIN_COSINE)
    print("top settings on the tuning conversations (k, w_lex, w_sem, lex_n, sem_n, floor):")
    for value, name, _ in scored[:8]:
        print(f"  {value:.1f}  {name}")
    best_rrf = next(s for _, _, s in scored if s[0] != "convex")
    best_convex = next(s for _, _, s in scored if s[0] == "convex")
    print(f"tuning conversations {sorted(tune)}, held out {sorted(held)}; recall@10 (cat 1-4):")
    print("| system | tuned on | held out | all five |")
    print("|---|---|---|---|")
    rows = [
        ("engine/2 alone", None),
        (f"hybrid/1 constants {hybrid1[:3] + hybrid1[4:]}", hybrid1),
        (f"best RRF on tuning set {best_rrf}", best_rrf),
        (f"best convex on tuning set {best_convex}", best_convex),
    ]
    for name, s in rows:
        if s is None:
            vals = [recall_at_lexical(prepared, w) for w in (tune, held, every)]
        else:
            vals = [recall_at(s, w) for w in (tune, held, every)]
        print(f"| {name} | {vals[0]:.1f} | {vals[1]:.1f} | {vals[2]:.1f} |")


def recall_at_lexical(prepared, which, k=10) -> float:
    total, n = 0.0, 0
    for ci, evidence, lex, _ in prepared:
        if ci in which:
            total += len(evidence & {rid for rid, _ in lex[:k]}) / len(evidence)
            n += 1
    return 100 * total / n


if __name__ == "__main__":
    main()
