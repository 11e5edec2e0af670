"""The recall engine contract's names where engines first imported them: they live in
memory.recall_contract (below services/, issue 42 part 3); import them from there."""

from memory.recall_contract import (
    DerivedCopy,
    Engine,
    Insert,
    LoadedRecord,
    Ranking,
    RecallQuery,
)

__all__ = ["DerivedCopy", "Engine", "Insert", "LoadedRecord", "Ranking", "RecallQuery"]
