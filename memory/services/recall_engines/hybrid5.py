"""hybrid/5 (docs/recall.md#scores, docs/recall-quality.md): hybrid/4's candidates (the engine/2
head and the cosine side over the bundled model's int8 ONNX form; the first
memory.engine.hybrid5.POOL of the fused list, or max_records if more) re-scored by the logistic
model of memory.engine.hybrid5, so `score` is a calibrated probability-like value on one absolute
scale, and each result's record says in `extensions["spoke-recall-match"]` which signals matched
it. The pool's texts are read once (one statement: record_id and text by pk) for the features
read from the text."""

from __future__ import annotations

from memory.embedding import embed
from memory.engine import hybrid3, hybrid5, rank
from memory.engine.hybrid import Ranking as Scores
from memory.recall_contract import Ranking, RecallQuery
from memory.selectors import recall as reads
from memory.services.recall_engines.fused import fused_ranking, register_embedder


def ranking(q: RecallQuery) -> Ranking:
    """hybrid/4's ranking (memory.services.recall_engines.fused), its pool re-scored by fuse5."""
    sides: list[tuple[Scores, Scores]] = []

    def fuse(lexical: Scores, semantic: Scores) -> list[tuple[str, float]]:
        sides.append((lexical, semantic))
        return hybrid3.fuse3(lexical, semantic)

    out = fused_ranking(
        q,
        lexical_top_n=hybrid5.LEXICAL_TOP_N,
        semantic_top_n=hybrid5.SEMANTIC_TOP_N,
        min_cosine=hybrid5.MIN_COSINE,
        fuse=fuse,
    )
    if not sides:  # an empty query: engine/2's newest first
        return out
    lexical, semantic = sides[0]
    pool = [(r.record_id, r.score) for r in out.ranked[: max(hybrid5.POOL, q.max_records)]]
    # The pool's texts by selectors.recall's per-pk look-up (an `id IN (…)` beside `space_id`
    # was planned as a read of the whole space on a never-analyzed table: issue 49).
    rows = reads.live_records(q.subject.space_id, [out.pks[record_id] for record_id, _ in pool])
    texts = {record.record_id: record.text for record in rows.values()}
    out.ranked = list[rank.Ranked](hybrid5.fuse5(lexical, semantic, pool, q.text, texts))
    return out


ENGINE = register_embedder(
    "hybrid/5",
    ranking,
    "hybrid/4's candidates re-scored by a logistic model fitted on LoCoMo dev conversations "
    "1-3: a calibrated score on one absolute scale, and the signals that matched each result",
    embed_model=embed.INT8_NAME,
)
