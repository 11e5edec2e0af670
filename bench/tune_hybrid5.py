"""hybrid/5's calibration, fitted offline: `python -m bench.tune_hybrid5 [--write] [--boosts]`.

The offline replay of bench.tune_hybrid3 (the LoCoMo dev file; each conversation's turns ranked
by the pure engine/2 policy and by cosine over the int8 ONNX form of the bundled MiniLM, hybrid/4's
model), then:

1. hybrid/4's fused list of each question (memory.engine.hybrid3.fuse3) is the pool; each
   candidate gets hybrid/5's features (memory.engine.hybrid5.features) and the label "is
   evidence";
2. a logistic regression (Newton's method, a small L2 penalty) is fitted on the candidates of
   conversations 1–3's questions of categories 1–4; category 5 (adversarial: no evidence in the
   conversation) is never fitted on;
3. the threshold is the smallest score at which "the top result is evidence" holds for at least
   `--precision` of the tuning questions whose top result reaches it (or, when no threshold
   reaches it, the one with the best F1 of that reading);
4. reported, per split (tuning 1–3, held out 4–5, all five) and category: R@5/10/20 and MRR of
   hybrid/4 and hybrid/5; the calibration at the threshold (precision and recall of "the top
   result is evidence" on categories 1–4, and the share of adversarial questions whose top
   score is below it).

`--boosts` also measures the candidate boosts of issue 44 (part 2) as extra features, each
added alone: proper-noun overlap, rare-term (idf-weighted) overlap, the speaker named in the
query, and date proximity for "when" questions. `--write` stores the fitted model in
memory/engine/hybrid5.json (features, coefficients, intercept, threshold, what it was fitted
on). Embeddings are cached under var/."""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import sys
import time
from collections import Counter
from pathlib import Path

from bench._hybrid_common import ROOT
from bench.locomo import DEFAULT_DATA, evidence_of, turns_of
from bench.tune_hybrid3 import cached_embed

TUNE, HELD = (0, 1, 2), (3, 4)
KS = (5, 10, 20)
MODEL_PATH = ROOT / "memory" / "engine" / "hybrid5.json"
CAPITAL = re.compile(r"\b[A-Z][a-z]+\b")


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
    def __init__(self, sample: dict) -> None:
        from memory.engine import lexicon

        self.turns = [
            (t["dia_id"], f"{t['speaker']}: {t['text']}", t["speaker"], date)
            for _, date, t in turns_of(sample["conversation"])
        ]
        known = {d for d, *_ in self.turns}
        self.questions = [
            (qa["question"], evidence_of(qa, known), int(qa["category"]))
            for qa in sample["qa"]
            if int(qa["category"]) in (1, 2, 3, 4, 5)
        ]
        # Category 5 keeps its questions even without evidence (it has none by design).
        self.questions = [q for q in self.questions if q[1] or q[2] == 5]
        self.ids = [d for d, *_ in self.turns]
        self.text = {d: text for d, text, *_ in self.turns}
        self.speaker = {d: s for d, _, s, _ in self.turns}
        self.date = {d: date for d, *_, date in self.turns}
        self.terms = {d: set(lexicon.tokens(text)) for d, text, *_ in self.turns}
        df = Counter(t for terms in self.terms.values() for t in terms)
        n = len(self.turns)
        self.idf = {t: math.log(1 + (n - c + 0.5) / (c + 0.5)) for t, c in df.items()}


def boosts(conv: Conversation, question: str, record_id: str) -> dict[str, float]:
    """The candidate boosts of part 2 for one candidate."""
    from memory.engine import lexicon

    q_terms = set(lexicon.query_terms(question))
    shared = q_terms & conv.terms[record_id]
    idf_all = sum(conv.idf.get(t, 0.0) for t in q_terms) or 1.0
    rare = sum(conv.idf.get(t, 0.0) for t in shared) / idf_all
    names = {w.lower() for w in CAPITAL.findall(question)[0:] if w.lower() not in ("what", "when")}
    words = set(re.findall(r"[a-z]+", conv.text[record_id].lower()))
    proper = len(names & words) / len(names) if names else 0.0
    speaker = 1.0 if conv.speaker[record_id].lower() in question.lower() else 0.0
    when = 1.0 if question.lower().startswith("when") else 0.0
    dated = (
        1.0
        if re.search(
            r"\b(yesterday|last|ago|week|month|year|today)\b", conv.text[record_id].lower()
        )
        else 0.0
    )
    return {
        "rare_terms": rare,
        "proper_nouns": proper,
        "speaker_named": speaker,
        "when_x_dated": when * dated,
        "term_fraction": len(shared) / len(q_terms) if q_terms else 0.0,
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--precision", type=float, default=0.8)
    parser.add_argument("--write", action="store_true")
    parser.add_argument("--boosts", action="store_true")
    parser.add_argument("--adversarial", type=float, default=0.8)
    parser.add_argument(
        "--features",
        default="cosine,vector,lexical,lexical_match,fused,fused_rank,top_cosine,cosine_gap,"
        "speaker_named",
        help="the model's features, of memory.engine.hybrid5.ALL_FEATURES",
    )
    args = parser.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "spokememory.settings")
    os.environ.setdefault("SECRET_KEY", "bench-only")
    import numpy as np

    from memory.embedding import embed
    from memory.engine import hybrid, hybrid3, hybrid5, lexical
    from memory.engine.rank import Doc

    convs = [Conversation(s) for s in json.loads(args.data.read_text())]
    model = embed.INT8_NAME
    cache = ROOT / "var"
    pool = []  # per conversation, per question: (ids, rows, labels, boosts, hybrid/4 order)
    t0 = time.perf_counter()
    # the engine/2 and cosine sides of each question, kept (the lexical side takes minutes)
    replay_path = cache / "tune5-replay.json"
    replay = json.loads(replay_path.read_text()) if replay_path.exists() else {}
    for ci, conv in enumerate(convs):
        vecs = cached_embed(cache, "tune5", model, [t for _, t, *_ in conv.turns], "turn")
        qvecs = cached_embed(cache, "tune5", model, [q for q, _, _ in conv.questions], "q")
        docs = [Doc(d, 0, text) for d, text, *_ in conv.turns]
        per = []
        for qi, (question, evidence, _) in enumerate(conv.questions):
            key = f"{ci}\t{question}"
            if key not in replay:
                lex = [(r.record_id, r.score) for r in lexical.rank(docs, question)]
                lex = lex[: hybrid5.LEXICAL_TOP_N] if lexical_terms(question) else []
                sem = hybrid.cosine_ranking(
                    qvecs[qi], conv.ids, vecs, hybrid5.SEMANTIC_TOP_N, hybrid5.MIN_COSINE
                )
                replay[key] = [lex, sem]
            lex, sem = ([tuple(item) for item in side] for side in replay[key])
            fused = hybrid5.pool(lex, sem)
            rows = hybrid5.features(lex, sem, fused, question, conv.text)
            ids = [i for i, _ in fused]
            labels = [1.0 if i in evidence else 0.0 for i in ids]
            extra = [boosts(conv, question, i) for i in ids] if args.boosts else []
            per.append((ids, rows, labels, extra, [i for i, _ in hybrid3.fuse3(lex, sem)]))
        pool.append(per)
        print(f"  {len(conv.turns)} turns, {len(conv.questions)} questions", file=sys.stderr)
    replay_path.write_text(json.dumps(replay))
    print(f"replay built in {time.perf_counter() - t0:.0f} s", file=sys.stderr)
    names = tuple(n.strip() for n in args.features.split(",") if n.strip())
    index = tuple(hybrid5.ALL_FEATURES.index(n) for n in names)

    def design(extra_names: tuple[str, ...], convs_: tuple[int, ...]):
        xs, ys = [], []
        for ci in convs_:
            for qi, (ids, rows, labels, extra, _) in enumerate(pool[ci]):
                if convs[ci].questions[qi][2] == 5:
                    continue
                for j, row in enumerate(rows):
                    xs.append([row[i] for i in index] + [extra[j][n] for n in extra_names])
                    ys.append(labels[j])
        return np.asarray(xs, dtype=float), np.asarray(ys, dtype=float)

    def scores_of(w, b, extra_names, ci, qi):
        ids, rows, _, extra, _ = pool[ci][qi]
        out = []
        for j, row in enumerate(rows):
            x = tuple(row[i] for i in index) + tuple(extra[j][n] for n in extra_names)
            out.append((ids[j], hybrid5.probability(x, tuple(w), b, tuple(range(len(x))))))
        out.sort(key=lambda item: (-item[1], item[0]))
        return out

    def evaluate(order_of):
        """(split, category) → {R@k, MRR, n} over categories 1–4 (0 = all of 1–4)."""
        sums: dict[tuple[str, int], Counter] = {}
        for ci, conv in enumerate(convs):
            split = "tune" if ci in TUNE else "held"
            for qi, (_, evidence, cat) in enumerate(conv.questions):
                if cat == 5:
                    continue
                order = order_of(ci, qi)
                first = next((r for r, i in enumerate(order, 1) if i in evidence), None)
                for key in ((split, 0), ("all", 0), (split, cat), ("all", cat)):
                    cell = sums.setdefault(key, Counter())
                    cell["n"] += 1
                    cell["mrr"] += 1 / first if first else 0.0
                    for k in KS:
                        cell[f"r{k}"] += len(evidence & set(order[:k])) / len(evidence)
        return {
            k: {m: 100 * v[m] / v["n"] for m in v if m != "n"} | {"n": v["n"]}
            for k, v in sums.items()
        }

    h4 = evaluate(lambda ci, qi: pool[ci][qi][4])

    def fitted(extra_names: tuple[str, ...]):
        x, y = design(extra_names, TUNE)
        w, b = fit(x, y)
        return w, b, evaluate(lambda ci, qi: [i for i, _ in scores_of(w, b, extra_names, ci, qi)])

    w, b, h5 = fitted(())
    print(
        "| engine | split | R@5 | R@10 | R@20 | MRR | R@10 multi-hop | temporal | open-domain | single-hop |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for name, res in (("hybrid/4", h4), ("hybrid/5", h5)):
        for split in ("tune", "held", "all"):
            s = res[(split, 0)]
            print(
                f"| {name} | {split} | {s['r5']:.1f} | {s['r10']:.1f} | {s['r20']:.1f} | "
                f"{s['mrr'] / 100:.3f} | "
                + " | ".join(f"{res[(split, c)]['r10']:.1f}" for c in (1, 2, 3, 4))
                + " |"
            )

    # Calibration: the top result's score and whether it is evidence, per question.
    def tops(convs_: tuple[int, ...], cats: tuple[int, ...]):
        out = []
        for ci in convs_:
            for qi, (_, evidence, cat) in enumerate(convs[ci].questions):
                if cat not in cats:
                    continue
                ranked = scores_of(w, b, (), ci, qi)
                if ranked:
                    out.append((ranked[0][1], ranked[0][0] in evidence))
                else:
                    out.append((0.0, False))
        return out

    def reading(items, t):
        above = [ok for s, ok in items if s >= t]
        good = sum(ok for _, ok in items)
        precision = sum(above) / len(above) if above else float("nan")
        recall = sum(above) / good if good else float("nan")
        return precision, recall, len(above)

    tune_tops = tops(TUNE, (1, 2, 3, 4))
    tune_adv = tops(TUNE, (5,))
    grid = [t / 100 for t in range(1, 100)]
    threshold = next(
        (
            t
            for t in grid
            if reading(tune_tops, t)[2] >= 10 and reading(tune_tops, t)[0] >= args.precision
        ),
        None,
    )
    chosen = f"the smallest with precision ≥ {args.precision}"
    if threshold is None:
        chosen = (
            f"no threshold reaches precision {args.precision}: the smallest with "
            f"{args.adversarial:.0%} of the adversarial questions below it"
        )
        threshold = next(
            t
            for t in grid
            if sum(1 for s, _ in tune_adv if s < t) >= args.adversarial * len(tune_adv)
        )
    print(f"\nthreshold {threshold:.2f} (chosen by {chosen} on conversations 1–3)")
    print("| questions | precision of 'top is evidence' at it | recall | share above |")
    print("|---|---|---|---|")
    for label, convs_ in (("tuning 1–3", TUNE), ("held out 4–5", HELD), ("all five", TUNE + HELD)):
        items = tops(convs_, (1, 2, 3, 4))
        p, r, n = reading(items, threshold)
        print(f"| {label}, categories 1–4 | {p:.2f} | {r:.2f} | {n}/{len(items)} |")
    for label, convs_ in (("held out 4–5", HELD), ("all five", TUNE + HELD)):
        adv = tops(convs_, (5,))
        below = sum(1 for s, _ in adv if s < threshold)
        print(
            f"| {label}, adversarial: top score below the threshold | {100 * below / len(adv):.0f}% ({below}/{len(adv)}) | | |"
        )
    print("\nthreshold sweep (all five, categories 1–4; adversarial below):")
    every = tops(TUNE + HELD, (1, 2, 3, 4))
    adv_all = tops(TUNE + HELD, (5,))
    for t in (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7):
        p, r, n = reading(every, t)
        below = sum(1 for s, _ in adv_all if s < t) / len(adv_all)
        print(f"  {t:.1f}: precision {p:.2f} recall {r:.2f} adversarial below {100 * below:.0f}%")

    if args.boosts:
        print("\n| boost feature added | held-out R@10 | Δ vs hybrid/5 | per category 1–4 |")
        print("|---|---|---|---|")
        for name in (
            "rare_terms",
            "proper_nouns",
            "speaker_named",
            "when_x_dated",
            "term_fraction",
        ):
            _, _, res = fitted((name,))
            s = res[("held", 0)]["r10"]
            print(
                f"| {name} | {s:.1f} | {s - h5[('held', 0)]['r10']:+.1f} | "
                + " / ".join(f"{res[('held', c)]['r10']:.1f}" for c in (1, 2, 3, 4))
                + " |"
            )
        _, _, res = fitted(("rare_terms", "proper_nouns", "speaker_named", "term_fraction"))
        print(
            f"| all but date | {res[('held', 0)]['r10']:.1f} | "
            f"{res[('held', 0)]['r10'] - h5[('held', 0)]['r10']:+.1f} | "
            + " / ".join(f"{res[('held', c)]['r10']:.1f}" for c in (1, 2, 3, 4))
            + " |"
        )

    print(
        "\ncoefficients: "
        + ", ".join(f"{n} {c:+.3f}" for n, c in zip(names, w, strict=True))
        + f", intercept {b:+.3f}"
    )
    if args.write:
        MODEL_PATH.write_text(
            json.dumps(
                {
                    "features": list(names),
                    "coefficients": [round(float(c), 6) for c in w],
                    "intercept": round(b, 6),
                    "threshold": threshold,
                    "fitted_on": "LoCoMo dev conversations 1-3, categories 1-4, "
                    f"{embed.INT8_NAME}; python -m bench.tune_hybrid5 --write",
                },
                indent=2,
            )
            + "\n"
        )
        print(f"wrote {MODEL_PATH.relative_to(ROOT)}", file=sys.stderr)


def lexical_terms(question: str) -> bool:
    from memory.engine import lexicon

    return bool(lexicon.query_terms(question))


if __name__ == "__main__":
    main()
