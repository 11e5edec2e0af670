"""Does a lexical match on near-ubiquitous terms only mislead hybrid/6's score? The offline trial
of 2026-12-07 (bench/results/2026-12-07-hybrid-6-ubiquitous-terms.md):
`python -m bench.tune_hybrid6_terms [--held-out]`.

The replay of bench.tune_hybrid6 (engine/2's pure ranking and the cosine side over the int8
MiniLM, hybrid/4's fusion, its first POOL), plus what the ranking statement already computes
and hybrid/6 is not given: which query terms each lexical candidate holds, and the candidate
statistics N and df (memory.engine.lexical: candidates = the records holding a query term).
Two kinds of feature beside memory.engine.hybrid6.FEATURES_AVAILABLE:

- `informative<F>`: on the lexical side and holding a query term with df/N ≤ F (F = 0.25, 0.5,
  0.75, 0.9): a match on near-ubiquitous terms only does not count as a lexical match;
- `lexical_idfw`: the lexical feature × max idf of the terms held / idf of a term held by one
  candidate (1 when the record holds the rarest possible term, ~0 on ubiquitous terms only).

Reading conversations 1-3 only (leave one conversation out, as bench.tune_hybrid6): the mean
log-likelihood of each feature set, the threshold by bench.tune_hybrid6's rule, the precision
and recall of "the top result is evidence" and the adversarial share below it, in-sample and
pooled over the three left-out fits; then the bench's greedy selection with `lexical_idfw`
available (the candidate). `--held-out`: the one reading of conversations 4-5, for the
candidate chosen on 1-3 (the model printed above, not refitted) beside the shipped
hybrid6.json."""

from __future__ import annotations

import argparse
import json
import math
import os
from collections import Counter
from pathlib import Path
from typing import Any

from bench._hybrid_common import ROOT
from bench.locomo import DEFAULT_DATA
from bench.tune_hybrid3 import cached_embed
from bench.tune_hybrid6 import TUNE, Conversation, fit, left_out_loglik, lexical_terms

FS = (0.25, 0.5, 0.75, 0.9)


def replay(data: Path) -> list[list[dict[str, Any]]]:
    """Per conversation, per question: its category, evidence, fused pool, feature rows."""
    from memory.embedding import embed
    from memory.engine import hybrid, hybrid3, hybrid6, lexical, lexicon
    from memory.engine.rank import Doc

    out = []
    for sample in json.loads(data.read_text()):
        conv = Conversation(sample)
        cache = ROOT / "var"
        vecs = cached_embed(cache, "tune6", embed.INT8_NAME, [t for _, t in conv.turns], "turn")
        qvecs = cached_embed(
            cache, "tune6", embed.INT8_NAME, [q for q, _, _ in conv.questions], "q"
        )
        docs = [Doc(d, 0, text) for d, text in conv.turns]
        toks = {d: set(lexicon.tokens(text)) for d, text in conv.turns}
        per = []
        for qi, (question, evidence, cat) in enumerate(conv.questions):
            lex = [(r.record_id, r.score) for r in lexical.rank(docs, question)]
            lex = lex[: hybrid6.LEXICAL_TOP_N] if lexical_terms(question) else []
            sem = hybrid.cosine_ranking(
                qvecs[qi], conv.ids, vecs, hybrid6.SEMANTIC_TOP_N, hybrid6.MIN_COSINE
            )
            wanted = set(lexicon.query_terms(question))
            held = {d: toks[d] & wanted for d in conv.ids if toks[d] & wanted}
            n, df = len(held), Counter(t for ts in held.values() for t in ts)
            fused = hybrid3.fuse3(lex, sem)[: hybrid6.POOL]
            on_lex = hybrid3.heads(lex, sem).lexical
            rows = []
            for (rid, _), row in zip(fused, hybrid6.features(lex, sem, fused), strict=True):
                named = dict(zip(hybrid6.FEATURES_AVAILABLE, row, strict=True))
                terms = held.get(rid, set()) if rid in on_lex else set()
                for f in FS:
                    named[f"informative{f}"] = float(any(df[t] / n <= f for t in terms))
                rarest = max((lexical.idf(df[t], n) for t in terms), default=0.0)
                named["lexical_idfw"] = named["lexical"] * rarest / lexical.idf(1, n) if n else 0.0
                rows.append(named)
            labels = [1.0 if rid in evidence else 0.0 for rid, _ in fused]
            per.append({"cat": cat, "rows": rows, "labels": labels})
        out.append(per)
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--held-out", action="store_true")
    args = parser.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "spokememory.settings")
    os.environ.setdefault("SECRET_KEY", "bench-only")
    import numpy as np

    from memory.engine import hybrid6

    pool = replay(args.data)

    def design(names, convs):
        xs, ys = [], []
        for ci in convs:
            for q in pool[ci]:
                if q["cat"] != 5:
                    xs += [[row[f] for f in names] for row in q["rows"]]
                    ys += q["labels"]
        return np.asarray(xs, dtype=float).reshape(len(ys), len(names)), np.asarray(ys)

    def loglik(names):
        return left_out_loglik(lambda convs: design(names, convs))

    def tops(model, convs, cats):
        out = []
        for ci in convs:
            for q in pool[ci]:
                if q["cat"] in cats:
                    if not q["rows"]:
                        out.append((0.0, 0.0))
                        continue
                    z = [
                        model["intercept"]
                        + sum(
                            c * row[f]
                            for c, f in zip(model["coefficients"], model["features"], strict=True)
                        )
                        for row in q["rows"]
                    ]
                    out.append((1 / (1 + math.exp(-z[0])), q["labels"][0]))
        return out  # the top's score: non_increasing leaves the first as it is

    def fitted(names, convs=TUNE):
        w, b = fit(*design(names, convs))
        return {"features": list(names), "coefficients": [float(c) for c in w], "intercept": b}

    def reading(items, t):
        above = [ok for s, ok in items if s >= t]
        good = sum(ok for _, ok in items)
        return sum(above) / max(len(above), 1), sum(above) / max(good, 1), len(above)

    def threshold(tt, adv):  # bench.tune_hybrid6's rule
        grid = [t / 100 for t in range(1, 100)]
        ok = [t for t in grid if reading(tt, t)[2] >= 10 and reading(tt, t)[0] >= 0.8]
        if ok:
            return ok[0]
        return next(t for t in grid if sum(s < t for s, _ in adv) >= 0.8 * len(adv))

    def line(label, names):
        model = fitted(names)
        tt, adv = tops(model, TUNE, (1, 2, 3, 4)), tops(model, TUNE, (5,))
        t = threshold(tt, adv)
        model["threshold"] = t
        lt, la = [], []  # pooled over the three left-out fits
        for held in TUNE:
            m = fitted(names, tuple(c for c in TUNE if c != held))
            lt += tops(m, (held,), (1, 2, 3, 4))
            la += tops(m, (held,), (5,))
        p, r, n = reading(tt, t)
        lp, lr, ln = reading(lt, t)
        print(
            f"| {label} | {loglik(names):.5f} | {t:.2f} | {p:.2f} / {r:.2f} / {n} | "
            f"{sum(s < t for s, _ in adv) / len(adv):.0%} | {lp:.2f} / {lr:.2f} / {ln} | "
            f"{sum(s < t for s, _ in la) / len(la):.0%} |"
        )
        return model

    shipped = list(hybrid6.FEATURES)
    print("conversations 1-3 only (precision / recall / tops at or above the threshold):")
    print(
        "| features | LOO log-likelihood | threshold | in-sample P / R / n | adversarial below "
        "| left-out P / R / n | left-out adversarial below |"
    )
    print("|---|---|---|---|---|---|---|")
    line("shipped (" + ", ".join(shipped) + ")", shipped)
    for f in FS:
        swap = [x if x != "lexical_match" else f"informative{f}" for x in shipped]
        line(f"lexical_match → informative{f}", swap)
        line(f"shipped + informative{f}", [*shipped, f"informative{f}"])
    line("lexical → lexical_idfw", [x if x != "lexical" else "lexical_idfw" for x in shipped])
    line("shipped + lexical_idfw", [*shipped, "lexical_idfw"])
    chosen: list[str] = []
    best = float("-inf")
    available = [*hybrid6.FEATURES_AVAILABLE, "lexical_idfw"]
    while True:
        options = [(loglik([*chosen, f]), f) for f in available if f not in chosen]
        if not options:
            break
        value, f = max(options)
        if value <= best + 1e-5:
            break
        chosen.append(f)
        best = value
    model = line("greedy, lexical_idfw available: " + ", ".join(chosen), chosen)
    print(
        "\ncandidate: "
        + json.dumps(
            {
                **model,
                "coefficients": [round(c, 6) for c in model["coefficients"]],
                "intercept": round(model["intercept"], 6),
            }
        )
    )
    if not args.held_out:
        return
    ship = {
        "features": shipped,
        "coefficients": list(hybrid6.COEFFICIENTS),
        "intercept": hybrid6.INTERCEPT,
        "threshold": hybrid6.THRESHOLD,
    }
    print(
        "\n| model | questions | threshold | precision | recall | tops at or above | adversarial below |"
    )
    print("|---|---|---|---|---|---|---|")
    for name, m in (("shipped hybrid6.json", ship), ("candidate", model)):
        for label, convs in (("tuning 1–3", TUNE), ("held out 4–5", (3, 4))):
            tt, adv = tops(m, convs, (1, 2, 3, 4)), tops(m, convs, (5,))
            p, r, n = reading(tt, m["threshold"])
            below = sum(s < m["threshold"] for s, _ in adv)
            print(
                f"| {name} | {label} | {m['threshold']:.2f} | {p:.2f} | {r:.2f} | {n}/{len(tt)} | "
                f"{below / len(adv):.0%} ({below}/{len(adv)}) |"
            )


if __name__ == "__main__":
    main()
