"""hybrid/3 candidates beyond the model, offline: `python -m bench.tune_hybrid3_fusion --cache DIR
--embed-model "" --embed-model PATH …`.

The replay of bench.tune_hybrid3 (the LoCoMo dev file, each conversation's turns ranked by the
engine/2 policy and by cosine, fused), varying what a hybrid/3 could change on the query side and
in the fusion, never the stored text:

- **fusion**: RRF (k, semantic weight) against score normalisation + weighted CombSUM (min-max or
  z-score of each side's head, lexical weight α), and the head sizes of each side;
- **BM25**: k1, b; statistics over the candidates (engine/2) or over the whole subject;
- **query processing**: extra question words dropped, speaker names dropped (the two speakers of
  the conversation), RM3 pseudo-relevance feedback (expansion terms from the first pass's head);
- **query-side embedding text**: the question as asked, without its question words, or with an
  instruction prompt in front.

Every choice is made on conversations 1–3 (recall@10, categories 1–4) and read on 4–5, which
no choice sees. Embeddings are cached as .npy under --cache (outside the repository)."""

# ruff: noqa: B023 - every closure here is called within the loop iteration that made it

from __future__ import annotations

import argparse
import hashlib
import itertools
import json
import math
import os
import re
import sys
from collections import Counter
from pathlib import Path

from bench.locomo import DEFAULT_DATA, evidence_of, turns_of
from bench.tune_hybrid3 import cached_embed, print_table, score

QUESTION_WORDS = frozenset(
    "kind type sort mention mentioned likely think thing things go went get got much many ever "
    "also recently one would could might favorite favourite name names".split()
)
FINE_ALPHAS = (0.4, 0.45, 0.5, 0.55, 0.6, 0.65, 0.7, 0.75)
PROMPT = "Represent this question for searching relevant conversation turns: "


def _embed(cache: Path, model: str, texts: list[str], tag: str):
    return cached_embed(cache, "tune3f", model, texts, tag)


def strip_question(q: str) -> str:
    from memory.engine.lexicon import STOP_WORDS

    words = re.findall(r"[\w']+|[^\w\s]", q)
    kept = [w for w in words if w.lower() not in STOP_WORDS and w not in "?"]
    return " ".join(kept) or q


class Corpus:
    """One conversation: per-turn stemmed token counts, an inverted index, whole-subject stats."""

    def __init__(self, texts: list[str], stem=None):
        from memory.engine import lexicon

        self.tokens = [lexicon.tokens(t) if stem is None else stem(t) for t in texts]
        self.tf = [Counter(t) for t in self.tokens]
        self.length = [len(t) for t in self.tokens]
        self.index: dict[str, list[int]] = {}
        for i, tf in enumerate(self.tf):
            for term in tf:
                self.index.setdefault(term, []).append(i)
        self.n = len(texts)
        self.avgdl = sum(self.length) / max(1, self.n)

    def bm25(
        self, weights: dict[str, float], k1: float, b: float, whole: bool
    ) -> list[tuple[int, float]]:
        """(turn, relevance) of the candidates, normalised by the best (engine/2 with recency 1:
        0.8 × rel/best + 0.2), best first, ties by turn id order as given."""
        cands = sorted({i for t in weights for i in self.index.get(t, ())})
        if not cands:
            return []
        if whole:
            n, avgdl = self.n, self.avgdl
            df = {t: len(self.index.get(t, ())) for t in weights}
        else:
            n = len(cands)
            avgdl = sum(self.length[i] for i in cands) / n
            df = {t: len(self.index.get(t, ())) for t in weights}
        out = []
        for i in cands:
            norm = k1 * (1 - b + b * self.length[i] / avgdl)
            rel = 0.0
            for t in sorted(weights):
                c = self.tf[i].get(t, 0)
                if c:
                    idf = math.log(1 + (n - df[t] + 0.5) / (df[t] + 0.5))
                    rel += weights[t] * idf * c * (k1 + 1) / (c + norm)
            out.append((i, rel))
        best = max(r for _, r in out) or 1.0
        return [(i, round(0.8 * r / best + 0.2, 6)) for i, r in out]


def rm3(corpus: Corpus, first: list[tuple[int, float]], terms: list[str], m: int, e: int, lam):
    """Query term weights after RM3: the original terms (weight λ, spread evenly) mixed with the
    `e` heaviest terms of the first pass's top `m` turns (weight 1 − λ, by score-weighted term
    frequency)."""
    head = sorted(first, key=lambda x: -x[1])[:m]
    mass: Counter[str] = Counter()
    for i, s in head:
        if corpus.length[i]:
            for t, c in corpus.tf[i].items():
                mass[t] += s * c / corpus.length[i]
    total = sum(mass.values()) or 1.0
    expansion = dict(mass.most_common(e))
    w: dict[str, float] = {t: lam / len(terms) for t in terms}
    for t, v in expansion.items():
        w[t] = w.get(t, 0.0) + (1 - lam) * v / total
    return w


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--embed-model", action="append", default=[])
    parser.add_argument("--cache", type=Path, required=True)
    parser.add_argument("--out", type=Path, help="write the full grid (JSON) here")
    args = parser.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import numpy as np

    from memory.engine import hybrid, lexical, lexicon
    from memory.engine.rank import Doc

    samples = json.loads(args.data.read_text())
    convs = []
    for sample in samples:
        c = sample["conversation"]
        turns = [(t["dia_id"], f"{t['speaker']}: {t['text']}") for _, _, t in turns_of(c)]
        known = {d for d, _ in turns}
        qas = [
            (qa["question"], evidence_of(qa, known), int(qa["category"]))
            for qa in sample["qa"]
            if qa.get("category") in (1, 2, 3, 4)
        ]
        names = set(lexicon.tokens(c["speaker_a"] + " " + c["speaker_b"]))
        convs.append((turns, [q for q in qas if q[1]], names))
    corpora = [Corpus([t for _, t in turns]) for turns, _, _ in convs]

    # The engine/2 oracle and this replay agree at k1 = 1.2, b = 0.75, candidate statistics.
    for ci, (turns, qas, _) in enumerate(convs[:1]):
        docs = [Doc(d, 0, text) for d, text in turns]
        for q, _, _ in qas[:40]:
            want = [(r.record_id, r.score) for r in lexical.rank(docs, q)]
            terms = lexicon.query_terms(q)
            got = corpora[ci].bm25({t: 1.0 for t in terms}, 1.2, 0.75, False)
            got = sorted(((turns[i][0], s) for i, s in got), key=lambda x: (-x[1], x[0]))
            assert got == want, q

    questions_of = [qas for _, qas, _ in convs]

    def scored(ranked_of) -> dict:
        return score(questions_of, ranked_of)

    # ---- lexical variants: (name) -> per conv, per question: [(dia_id, score)] best first
    def lexical_variant(k1=1.2, b=0.75, whole=False, drop=frozenset(), names=False, rm=None):
        out = []
        for ci, (turns, qas, speakers) in enumerate(convs):
            rows = []
            for q, _, _ in qas:
                terms = [
                    t
                    for t in lexicon.query_terms(q)
                    if t not in drop and not (names and t in speakers)
                ] or lexicon.query_terms(q)
                w = {t: 1.0 for t in terms}
                ranked = corpora[ci].bm25(w, k1, b, whole)
                if rm is not None and ranked:
                    m, e, lam = rm
                    w = rm3(corpora[ci], ranked, terms, m, e, lam)
                    ranked = corpora[ci].bm25(w, k1, b, whole)
                rows.append(
                    sorted(((turns[i][0], s) for i, s in ranked), key=lambda x: (-x[1], x[0]))
                )
            out.append(rows)
        return out

    import pickle

    lex_cache = args.cache / (
        "tune3f-lexical-" + hashlib.sha256(args.data.read_bytes()).hexdigest()[:16] + ".pickle"
    )
    if lex_cache.exists():
        lex_grid = pickle.loads(lex_cache.read_bytes())  # noqa: S301 - our own cache file
    else:
        drop_q = frozenset(lexicon.tokens(" ".join(QUESTION_WORDS)))
        lex_grid: dict[str, list] = {"engine/2": lexical_variant()}
        for k1, b in itertools.product((0.6, 0.9, 1.2, 1.5, 2.0), (0.3, 0.5, 0.75, 0.9)):
            if (k1, b) != (1.2, 0.75):
                lex_grid[f"k1={k1} b={b}"] = lexical_variant(k1=k1, b=b)
        lex_grid["whole-subject idf"] = lexical_variant(whole=True)
        lex_grid["question words out"] = lexical_variant(drop=drop_q)
        lex_grid["speaker names out"] = lexical_variant(names=True)
        for m, e, lam in itertools.product((3, 5, 10), (5, 10, 20), (0.5, 0.7, 0.85)):
            lex_grid[f"RM3 m={m} e={e} λ={lam}"] = lexical_variant(rm=(m, e, lam))
        lex_cache.parent.mkdir(parents=True, exist_ok=True)
        lex_cache.write_bytes(pickle.dumps(lex_grid))
    print(f"  {len(lex_grid)} lexical variants", file=sys.stderr)

    rows: list[tuple[str, dict]] = []
    lex_scores = {
        name: scored(lambda ci, qi, v=v: [d for d, _ in v[ci][qi]]) for name, v in lex_grid.items()
    }
    best_lex = max(lex_scores, key=lambda n: lex_scores[n][("tune", 0)])
    for name in ("engine/2", best_lex, "whole-subject idf", "question words out"):
        rows.append((f"lexical alone: {name}", lex_scores[name]))
    best_rm = max(
        (n for n in lex_scores if n.startswith("RM3")), key=lambda n: lex_scores[n][("tune", 0)]
    )
    rows.append((f"lexical alone: {best_rm} (best RM3 on tuning)", lex_scores[best_rm]))
    rows.append(("lexical alone: speaker names out", lex_scores["speaker names out"]))
    best_kb = max(
        (n for n in lex_scores if n.startswith("k1=")), key=lambda n: lex_scores[n][("tune", 0)]
    )
    rows.append((f"lexical alone: {best_kb} (best k1, b on tuning)", lex_scores[best_kb]))

    # ---- semantic side: per model and query text, full similarity rows per question
    def fuse_rrf(lex, sem, k, w_sem, lex_n):
        return [d for d, _ in hybrid.fuse(lex[:lex_n], sem, k=k, weights=(1.0, w_sem))]

    def fuse_sum(lex, sem, alpha, norm, lex_n):
        lex = lex[:lex_n]
        out: dict[str, float] = {}
        for side, weight in ((lex, alpha), (sem, 1 - alpha)):
            if not side:
                continue
            vals = np.array([s for _, s in side], dtype=np.float64)
            if norm == "minmax":
                lo, hi = vals.min(), vals.max()
                z = (vals - lo) / (hi - lo) if hi > lo else np.ones_like(vals)
            else:  # z-score, shifted so the head's worst is 0 (as an absent record)
                sd = vals.std()
                z = (vals - vals.min()) / sd if sd > 0 else np.ones_like(vals)
            for (d, _), v in zip(side, z, strict=True):
                out[d] = out.get(d, 0.0) + weight * float(v)
        return [d for d, _ in sorted(out.items(), key=lambda x: (-round(x[1], 6), x[0]))]

    results = {}
    fine: dict[tuple[float, int], dict[str, dict]] = {}
    for model in args.embed_model or [""]:
        mname = Path(model).name if model else "all-MiniLM-L6-v2 (bundled)"
        questions = [q for _, qas, _ in convs for q, _, _ in qas]
        texts = [t for turns, _, _ in convs for _, t in turns]
        vectors = _embed(args.cache, model, texts, "turn")
        qtexts = {
            "question": questions,
            "question words out": [strip_question(q) for q in questions],
            "prompt": [PROMPT + q for q in questions],
        }
        for qname, qt in qtexts.items():
            qvecs = _embed(args.cache, model, qt, "q:" + qname)
            sims = []  # per conv, per question: cosine ranking, top 200 ≥ 0.0
            off = qoff = 0
            for turns, qas, _ in convs:
                ids = [d for d, _ in turns]
                mat = vectors[off : off + len(turns)]
                off += len(turns)
                sims.append(
                    [
                        hybrid.cosine_ranking(qvecs[qoff + i], ids, mat, 200, 0.0)
                        for i in range(len(qas))
                    ]
                )
                qoff += len(qas)
            results[(mname, qname)] = sims
            print(f"  {mname} / {qname} embedded", file=sys.stderr)

        def sem_cut(sem, n, floor):
            return [x for x in sem if x[1] >= floor][:n]

        base_sims = results[(mname, "question")]

        def grid_row(label, lexv, sims, fuser):
            s = scored(lambda ci, qi: fuser(lexv[ci][qi], sims[ci][qi]))
            return label, s

        cands: list[tuple[str, dict]] = []
        e2 = lex_grid["engine/2"]
        # hybrid/2 itself (baseline of this run)
        h2 = grid_row(
            f"{mname}: hybrid/2 (RRF k=2, heads 100/50, cos ≥ 0.2)",
            e2,
            base_sims,
            lambda lx, sm: fuse_rrf(lx, sem_cut(sm, 50, 0.2), 2, 1.0, 100),
        )
        rows.append(h2)
        # fusion grid over engine/2 + plain question
        for k, w, ln, sn, fl in itertools.product(
            (1, 2, 5), (0.7, 1.0, 1.5), (50, 100), (50, 100), (0.2,)
        ):
            cands.append(
                grid_row(
                    f"{mname}: RRF k={k} w_sem={w} heads {ln}/{sn} cos ≥ {fl}",
                    e2,
                    base_sims,
                    lambda lx, sm, k=k, w=w, ln=ln, sn=sn, fl=fl: fuse_rrf(
                        lx, sem_cut(sm, sn, fl), k, w, ln
                    ),
                )
            )
        rrf_best = max(cands, key=lambda r: r[1][("tune", 0)])
        rows.append((rrf_best[0] + " (best RRF on tuning)", rrf_best[1]))
        sums = []
        sum_cfg = {}
        for a, norm, ln, sn in itertools.product(
            (0.3, 0.4, 0.5, 0.6, 0.7), ("minmax", "z"), (20, 50, 100), (20, 50, 100)
        ):
            sums.append(
                grid_row(
                    f"{mname}: CombSUM {norm} α={a} heads {ln}/{sn}",
                    e2,
                    base_sims,
                    lambda lx, sm, a=a, norm=norm, ln=ln, sn=sn: fuse_sum(
                        lx, sem_cut(sm, sn, 0.0), a, norm, ln
                    ),
                )
            )
            sum_cfg[id(sums[-1])] = (a, norm, ln, sn)
        sum_best = max(sums, key=lambda r: r[1][("tune", 0)])
        rows.append((sum_best[0] + " (best CombSUM on tuning)", sum_best[1]))
        # query-side embedding text, hybrid/2 fusion
        for qname in ("question words out", "prompt"):
            rows.append(
                grid_row(
                    f"{mname}: hybrid/2, query embedded as '{qname}'",
                    e2,
                    results[(mname, qname)],
                    lambda lx, sm: fuse_rrf(lx, sem_cut(sm, 50, 0.2), 2, 1.0, 100),
                )
            )
        # lexical variants under hybrid/2 fusion
        lexrows = []
        for lname, lexv in lex_grid.items():
            if lname == "engine/2":
                continue
            lexrows.append(
                grid_row(
                    f"{mname}: hybrid/2 fusion over lexical '{lname}'",
                    lexv,
                    base_sims,
                    lambda lx, sm: fuse_rrf(lx, sem_cut(sm, 50, 0.2), 2, 1.0, 100),
                )
            )
        for lname in ("whole-subject idf", "question words out", "speaker names out"):
            rows.append(next(r for r in lexrows if f"'{lname}'" in r[0]))
        for prefix in ("k1=", "RM3"):
            sub = [r for r in lexrows if f"'{prefix}" in r[0]]
            best = max(sub, key=lambda r: r[1][("tune", 0)])
            rows.append((best[0] + " (best on tuning)", best[1]))
        a_, norm_, ln_, sn_ = sum_cfg[id(sum_best)]
        fs = lambda lx, sm: fuse_sum(lx, sem_cut(sm, sn_, 0.0), a_, norm_, ln_)  # noqa: E731
        for qname in ("question words out", "prompt"):
            rows.append(
                grid_row(
                    f"{mname}: best CombSUM, query embedded as '{qname}'",
                    e2,
                    results[(mname, qname)],
                    fs,
                )
            )
        joint = [
            grid_row(f"{mname}: best CombSUM over lexical '{lname}'", lexv, base_sims, fs)
            for lname, lexv in lex_grid.items()
            if lname != "engine/2"
        ]
        for lname in ("whole-subject idf", "speaker names out", "question words out"):
            rows.append(next(r for r in joint if f"'{lname}'" in r[0]))
        for prefix in ("k1=", "RM3"):
            sub = [r for r in joint if f"'{prefix}" in r[0]]
            best = max(sub, key=lambda r: r[1][("tune", 0)])
            rows.append((best[0] + " (best on tuning)", best[1]))
        # neighbour smoothing: a turn's fused value plus β × its neighbours' (not a stored-text
        # change; needs the record order)
        order = [{d: i for i, (d, _) in enumerate(turns)} for turns, _, _ in convs]
        for beta in (0.1, 0.2, 0.3):

            def smooth(ci, qi, beta=beta):
                lx = e2[ci][qi]
                sm = sem_cut(base_sims[ci][qi], sn_, 0.0)
                ranked = fuse_sum(lx, sm, a_, norm_, ln_)
                n = len(ranked)
                val = {d: (n - r) / n for r, d in enumerate(ranked)}
                ids = [d for d, _ in convs[ci][0]]
                out = {}
                for d, v in val.items():
                    i = order[ci][d]
                    nb = [ids[j] for j in (i - 1, i + 1) if 0 <= j < len(ids)]
                    out[d] = v + beta * sum(val.get(x, 0.0) for x in nb)
                return [d for d, _ in sorted(out.items(), key=lambda x: (-x[1], x[0]))]

            rows.append((f"{mname}: best CombSUM + neighbour smoothing β={beta}", scored(smooth)))
        results[(mname, "grids")] = (cands, sums, lexrows)
        # the product's shape: lexical head 100 (as hybrid/2), cosine floor 0.2, min-max
        for a, sn in itertools.product(FINE_ALPHAS, (50, 100, 200)):
            fine.setdefault((a, sn), {})[mname] = scored(
                lambda ci, qi, a=a, sn=sn: fuse_sum(
                    e2[ci][qi], sem_cut(base_sims[ci][qi], sn, 0.2), a, "minmax", 100
                )
            )
        print(f"  {mname} grids done", file=sys.stderr)

    # one set of constants for every model (the model is a setting): the best mean tuning score
    chosen = max(
        fine, key=lambda cfg: sum(v[("tune", 0)] for v in fine[cfg].values()) / len(fine[cfg])
    )
    for mname, s in fine[chosen].items():
        rows.append(
            (
                f"{mname}: CombSUM min-max α={chosen[0]}, heads 100/{chosen[1]}, cos ≥ 0.2 "
                "(chosen: best mean tuning over the models)",
                s,
            )
        )
    # hybrid/3's rule: the best tuning figure of the first model given (the bundled one)
    first = next(iter(next(iter(fine.values()))))
    mine = max(fine, key=lambda cfg: fine[cfg][first][("tune", 0)])
    for mname, s in fine[mine].items():
        rows.append(
            (
                f"{mname}: CombSUM min-max α={mine[0]}, heads 100/{mine[1]}, cos ≥ 0.2 "
                f"(chosen: best tuning of {first})",
                s,
            )
        )
    print(
        "fine grid (α, semantic head): "
        + "; ".join(
            f"{cfg}: "
            + ", ".join(f"{m[:6]} {v[('tune', 0)]:.1f}/{v[('held', 0)]:.1f}" for m, v in r.items())
            for cfg, r in sorted(fine.items())
        ),
        file=sys.stderr,
    )
    print_table(rows)
    if args.out:
        dump = {}
        for key, val in results.items():
            if key[1] == "grids":
                for group, rs in zip(("rrf", "combsum", "lexical"), val, strict=True):
                    dump[f"{key[0]}/{group}"] = [
                        (n, s[("tune", 0)], s[("held", 0)], s[("all", 0)]) for n, s in rs
                    ]
        dump["lexical-alone"] = [
            (n, s[("tune", 0)], s[("held", 0)], s[("all", 0)]) for n, s in lex_scores.items()
        ]
        args.out.write_text(json.dumps(dump, indent=1))


if __name__ == "__main__":
    main()
