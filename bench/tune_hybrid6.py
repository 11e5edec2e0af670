"""hybrid/6's calibration, fitted offline: `python -m bench.tune_hybrid6 [--write]`.

hybrid/6 answers hybrid/4's order unchanged and only scores it: each candidate of the pool gets
the probability that it is evidence from a logistic model (memory.engine.hybrid6), made
non-increasing down the list (a result never scores above one ranked before it). Its recall@k
is hybrid/4's by construction, so this bench chooses and reads only the score.

The offline replay of bench.tune_hybrid3 (the LoCoMo dev file; engine/2 and the cosine side over
the int8 MiniLM per question; cached under var/). Then, reading conversations 1-3 only:

1. the features: greedy forward selection over memory.engine.hybrid6.FEATURES_AVAILABLE (what
   the served engine computes without reading a record's text) by the leave-one-conversation-out
   log-likelihood of the candidates' labels ("is evidence"), categories 1-4; stops when no
   feature adds to it;
2. the model: a logistic regression on those features over all of conversations 1-3's
   candidates (`fit`: Newton's method, a small L2 penalty);
3. the threshold: the smallest score at which "the top result is evidence" holds for at least
   `--precision` of the tuning questions whose top reaches it, or, when none does, the smallest
   below which `--adversarial` of the tuning adversarial questions' top scores fall.

Reported for tuning (1-3), held out (4-5) and all five: the precision and recall of "the top
result is evidence" at the threshold, the share of adversarial questions (category 5: no evidence)
whose top score is below it, and a reliability table (the results of the first ten, by score
bucket: mean score against the share that is evidence). `--write` stores the model in
memory/engine/hybrid6.json."""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench._hybrid_common import ROOT
from bench.locomo import DEFAULT_DATA, evidence_of, turns_of
from bench.tune_hybrid3 import cached_embed

MODEL_PATH = ROOT / "memory" / "engine" / "hybrid6.json"
TUNE, HELD = (0, 1, 2), (3, 4)


def left_out_loglik(design: Callable[[tuple[int, ...]], tuple[Any, Any]]) -> float:
    """The mean log-likelihood of each of conversations 1-3 (TUNE) under the logistic model
    fitted on the other two: `design(conversations)` gives (features, labels)."""
    import numpy as np

    total, n = 0.0, 0
    for held in TUNE:
        w, b = fit(*design(tuple(c for c in TUNE if c != held)))
        x, y = design((held,))
        z = x @ w + b
        total += float(np.sum(y * z - np.logaddexp(0.0, z)))
        n += len(y)
    return total / n


def fit(x, y, l2: float = 1e-2, steps: int = 50):
    """Logistic regression by Newton's method: (coefficients, intercept)."""
    import numpy as np

    xa = np.hstack([x, np.ones((x.shape[0], 1))])
    w = np.zeros(xa.shape[1])
    for _ in range(steps):
        p = 1 / (1 + np.exp(-xa @ w))
        grad = xa.T @ (p - y) + l2 * np.r_[w[:-1], 0]
        h = (xa * (p * (1 - p))[:, None]).T @ xa + l2 * np.eye(xa.shape[1])
        step = np.linalg.solve(h, grad)
        w -= step
        if np.abs(step).max() < 1e-8:
            break
    return w[:-1], float(w[-1])


class Conversation:
    """One LoCoMo conversation: its turns as records, its questions (category 5 kept without
    evidence: it has none by design)."""

    def __init__(self, sample: dict) -> None:
        self.turns = [
            (t["dia_id"], f"{t['speaker']}: {t['text']}")
            for _, _, t in turns_of(sample["conversation"])
        ]
        known = {d for d, _ in self.turns}
        self.questions = [
            (qa["question"], evidence_of(qa, known), int(qa["category"]))
            for qa in sample["qa"]
            if int(qa["category"]) in (1, 2, 3, 4, 5)
        ]
        self.questions = [q for q in self.questions if q[1] or q[2] == 5]
        self.ids = [d for d, _ in self.turns]


def lexical_terms(question: str) -> bool:
    from memory.engine import lexicon

    return bool(lexicon.query_terms(question))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--precision", type=float, default=0.8)
    parser.add_argument("--adversarial", type=float, default=0.8)
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "spokememory.settings")
    os.environ.setdefault("SECRET_KEY", "bench-only")
    import numpy as np

    from memory.embedding import embed
    from memory.engine import hybrid, hybrid3, hybrid6, lexical
    from memory.engine.rank import Doc

    convs = [Conversation(s) for s in json.loads(args.data.read_text())]
    cache = ROOT / "var"
    t0 = time.perf_counter()
    replay_path = cache / "tune6-replay.json"
    replay = json.loads(replay_path.read_text()) if replay_path.exists() else {}
    # per conversation, per question: (ids in hybrid/4's order, feature rows, labels)
    pool: list[list[tuple[list[str], list[tuple[float, ...]], list[float]]]] = []
    for ci, conv in enumerate(convs):
        vecs = cached_embed(cache, "tune6", embed.INT8_NAME, [t for _, t in conv.turns], "turn")
        qvecs = cached_embed(
            cache, "tune6", embed.INT8_NAME, [q for q, _, _ in conv.questions], "q"
        )
        docs = [Doc(d, 0, text) for d, text in conv.turns]
        per = []
        for qi, (question, evidence, _) in enumerate(conv.questions):
            key = f"{ci}\t{question}"
            if key not in replay:
                lex = [(r.record_id, r.score) for r in lexical.rank(docs, question)]
                lex = lex[: hybrid6.LEXICAL_TOP_N] if lexical_terms(question) else []
                sem = hybrid.cosine_ranking(
                    qvecs[qi], conv.ids, vecs, hybrid6.SEMANTIC_TOP_N, hybrid6.MIN_COSINE
                )
                replay[key] = [lex, sem]
            lex, sem = ([tuple(item) for item in side] for side in replay[key])
            fused = hybrid3.fuse3(lex, sem)[: hybrid6.POOL]
            rows = hybrid6.features(lex, sem, fused)
            per.append(
                ([i for i, _ in fused], rows, [1.0 if i in evidence else 0.0 for i, _ in fused])
            )
        pool.append(per)
    cache.mkdir(exist_ok=True)
    replay_path.write_text(json.dumps(replay))
    print(f"replay built in {time.perf_counter() - t0:.0f} s", file=sys.stderr)

    def design(index, convs_):
        xs, ys = [], []
        for ci in convs_:
            for qi, (_, rows, labels) in enumerate(pool[ci]):
                if convs[ci].questions[qi][2] == 5:
                    continue
                xs += [[row[i] for i in index] for row in rows]
                ys += labels
        return np.asarray(xs, dtype=float).reshape(len(ys), len(index)), np.asarray(ys)

    def loglik(index):
        return left_out_loglik(lambda convs_: design(index, convs_))

    names = hybrid6.FEATURES_AVAILABLE
    chosen: list[int] = []
    best = float("-inf")
    print("feature selection (leave one of conversations 1-3 out; mean log-likelihood):")
    while len(chosen) < len(names):
        value, i = max((loglik((*chosen, i)), i) for i in range(len(names)) if i not in chosen)
        if value <= best + 1e-5:
            break
        chosen.append(i)
        best = value
        print(f"  + {names[i]}: {value:.5f}")
    index = tuple(chosen)
    w, b = fit(*design(index, TUNE))
    model = {
        "features": [names[i] for i in index],
        "coefficients": [round(float(c), 6) for c in w],
        "intercept": round(b, 6),
    }

    def scored(ci, qi):
        _, rows, labels = pool[ci][qi]
        probs = [
            hybrid6.probability(tuple(row[i] for i in index), tuple(w), b, tuple(range(len(index))))
            for row in rows
        ]
        return list(zip(hybrid6.non_increasing(probs), labels, strict=True))

    def tops(convs_, cats):
        out = []
        for ci in convs_:
            for qi, (_, _, cat) in enumerate(convs[ci].questions):
                if cat in cats:
                    got = scored(ci, qi)
                    out.append(got[0] if got else (0.0, 0.0))
        return out

    def reading(items, t):
        above = [ok for s, ok in items if s >= t]
        good = sum(ok for _, ok in items)
        return (
            sum(above) / len(above) if above else float("nan"),
            sum(above) / good if good else float("nan"),
            len(above),
        )

    tune_tops, tune_adv = tops(TUNE, (1, 2, 3, 4)), tops(TUNE, (5,))
    grid = [t / 100 for t in range(1, 100)]
    threshold = next(
        (
            t
            for t in grid
            if reading(tune_tops, t)[2] >= 10 and reading(tune_tops, t)[0] >= args.precision
        ),
        None,
    )
    how = f"the smallest with precision ≥ {args.precision} on conversations 1–3"
    if threshold is None:
        how = (
            f"no threshold reaches precision {args.precision} on conversations 1–3: the smallest "
            f"with {args.adversarial:.0%} of their adversarial questions below it"
        )
        threshold = next(
            t for t in grid if sum(s < t for s, _ in tune_adv) >= args.adversarial * len(tune_adv)
        )
    model["threshold"] = threshold
    print(f"\nthreshold {threshold:.2f} ({how})")
    print(
        "| questions | precision of 'top is evidence' | recall | tops at or above | adversarial below |"
    )
    print("|---|---|---|---|---|")
    for label, convs_ in (("tuning 1–3", TUNE), ("held out 4–5", HELD), ("all five", TUNE + HELD)):
        p, r, n = reading(tops(convs_, (1, 2, 3, 4)), threshold)
        adv = tops(convs_, (5,))
        below = sum(s < threshold for s, _ in adv)
        print(
            f"| {label} | {p:.2f} | {r:.2f} | {n}/{len(tops(convs_, (1, 2, 3, 4)))} | "
            f"{100 * below / len(adv):.0f}% ({below}/{len(adv)}) |"
        )
    print("\nreliability, held out 4–5, the first ten results of categories 1–4's questions:")
    print("| score | results | mean score | share that is evidence |")
    print("|---|---|---|---|")
    buckets: dict[int, list[tuple[float, float]]] = {}
    for ci in HELD:
        for qi, (_, _, cat) in enumerate(convs[ci].questions):
            if cat != 5:
                for s, ok in scored(ci, qi)[:10]:
                    buckets.setdefault(min(int(s * 10), 9), []).append((s, ok))
    for k in sorted(buckets):
        items = buckets[k]
        print(
            f"| {k / 10:.1f}–{(k + 1) / 10:.1f} | {len(items)} | "
            f"{sum(s for s, _ in items) / len(items):.2f} | {sum(ok for _, ok in items) / len(items):.2f} |"
        )
    print("\nmodel: " + json.dumps(model))
    if args.write:
        model["fitted_on"] = (
            f"LoCoMo dev conversations 1-3, categories 1-4, {embed.INT8_NAME}; "
            "python -m bench.tune_hybrid6 --write"
        )
        MODEL_PATH.write_text(json.dumps(model, indent=2) + "\n")
        print(f"wrote {MODEL_PATH.relative_to(ROOT)}", file=sys.stderr)


if __name__ == "__main__":
    main()
