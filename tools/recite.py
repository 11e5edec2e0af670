"""Rewrites citations of the contract and of the old single-file decisions to the pages in docs/.

Before docs/protocol.md existed, docs and code cited `../shared/SPEC.md` ("SPEC §2.6"), a file a
clone of this repository does not have, and `docs/decisions.md "Title"`, now one record per
decision under docs/decisions/. This rewrites:

- `SPEC §2.6` (and `SPEC §3.9, §2.4`) → `docs/protocol.md#authorization` (`…#receipt…, #receipts`),
  the protocol's stable anchors (the section numbers are the same);
- a path to SPEC.md → `docs/protocol.md`; a bare "the SPEC" → "the protocol";
- `decisions.md "Title"` → `docs/decisions/<slug>.md` (by the record's title, or the area's
  heading in docs/decisions/index.md); a bare `docs/decisions.md` → `docs/decisions/index.md`;
- `performance.md "Section"` / `reliability.md "Section"` → the table that now holds it.

Inside docs/ and README.md (`--docs`) citations become relative Markdown links; elsewhere
(`--code`: Python, TypeScript and its committed dist/, JSON schemas, templates, bench results)
plain `docs/...` paths in the comment or string as it was. Generated files are rewritten like
their sources, so `python -m tools.codegen.wire --check` and the TypeScript dist check still
agree; `--code` runs the generator after rewriting to be sure.

    python -m tools.recite --code           # after merging: rewrite the code's citations
    python -m tools.recite --docs           # the docs (done once on the docs branch)
    python -m tools.recite --code --check   # exit 1 and list the files that still cite SPEC
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"

# The protocol's section anchors, by the section number SPEC.md and docs/protocol.md share.
ANCHORS = {
    "1": "transport",
    "1.1": "endpoints",
    "1.2": "authentication",
    "1.3": "sessions",
    "1.4": "dispatch",
    "1.5": "errors",
    "2": "shared-rules",
    "2.1": "identifiers",
    "2.2": "placement",
    "2.3": "selection",
    "2.4": "receipts",
    "2.5": "idempotency",
    "2.6": "authorization",
    "2.7": "cursors",
    "2.8": "content",
    "2.9": "limits",
    "3": "models",
    "3.10": "selection",
    "3.11": "selection",
    "4": "grants",
    "5": "ops",
    "5.1": "review-decision",
    "5.2": "reflection-basis",
    "5.3": "transfer-format",
    "6": "cognition",
    "6.1": "cognition-record",
    "6.2": "cognition-validation",
    "6.3": "cognition-filter",
    "7": "engine-policy",
    "8": "operators",
}
for _n, _m in enumerate(
    "MemorySpace Subject Principal MemoryGrant RetainedRecord MemoryCandidate ProfileDocument "
    "Reflection MemoryReceipt".split(),
    1,
):
    ANCHORS[f"3.{_n}"] = "model-" + _m.lower()
ANCHORS["3.12"] = "model-memoryexportbundle"
ANCHORS["3.13"] = "model-memoryexportchunk"

# Sections of the old performance.md / reliability.md that code cites, and their tables now.
RESULTS = {
    "write path": "performance.md#write-path",
    "mixed load": "performance.md#mixed-load",
    "profiled and tuned": "performance.md#mixed-load",
    "dispatch overhead": "performance.md#dispatch",
    "python client overhead": "performance.md#clients",
    "mcp": "performance.md#clients",
    "transfer": "performance.md#transfer",
    "cursor pages": "performance.md#pages",
    "recall": "performance.md#recall-latency",
    "redis down": "reliability.md#faults",
    "hostile input": "reliability.md#hostile-input",
    "faults": "reliability.md#faults",
}

NUM = r"§\s?\d+(?:\.\d+)?"
CITE = re.compile(rf"\bSPEC(?:'s)?\s?(?P<nums>{NUM}(?:\s?(?:,|and|or|/)\s?(?:{NUM}|\d+\.\d+))*)")
SPEC_PATH = re.compile(r"`?(?:\.\./|/work/)?shared/SPEC\.md`?|`?\bSPEC\.md\b`?")
BARE = [
    (re.compile(r"\b([Aa]n?) SPEC\b"), "a protocol"),
    (re.compile(r"\b(its|their|our|his|her) SPEC\b"), r"\1 protocol"),
    (re.compile(r"\b[Tt]he SPEC's\b"), "the protocol's"),
    (re.compile(r"\b[Tt]he SPEC\b"), "the protocol"),
    (re.compile(r"\bSPEC's\b"), "the protocol's"),
    (re.compile(r"(?<![-\w])SPEC\b(?![_\w])"), "the protocol"),
]
DECISION_CITE = re.compile(r"(?:docs/)?decisions\.md,?\s?[\"“]([^\"”]+)[\"”]")
DECISION_BARE = re.compile(r"(?<![/\w])`?(?:docs/)?decisions\.md\b`?")
RESULT_CITE = re.compile(r"(?:docs/)?(performance|reliability)\.md,?\s?[\"“]([^\"”]+)[\"”]")

CODE_SUFFIXES = {".py", ".ts", ".js", ".mjs", ".json", ".html", ".md", ".txt", ".toml", ".cfg"}
SKIP_DIRS = {"node_modules", "var", "tools", "__pycache__", "build", "target"}
SKIP_LINES = ("--reembed-model",)


def _norm(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", " ", text.lower()).strip()


def _heading_anchor(text: str) -> str:
    return re.sub(r"[^a-z0-9 -]", "", text.lower()).replace(" ", "-")


def decision_titles() -> list[tuple[str, str]]:
    """(normalised title, target relative to docs/) for every record and every area heading."""
    out = []
    for path in sorted((DOCS / "decisions").glob("*.md")):
        first = path.read_text(encoding="utf-8").split("\n", 1)[0]
        if path.name != "index.md" and first.startswith("# "):
            out.append((_norm(first[2:]), f"decisions/{path.name}"))
    index = DOCS / "decisions" / "index.md"
    if index.exists():
        for line in index.read_text(encoding="utf-8").splitlines():
            if line.startswith("## "):
                out.append((_norm(line[3:]), f"decisions/index.md#{_heading_anchor(line[3:])}"))
    return out


def find_decision(title: str, titles: list[tuple[str, str]]) -> str:
    want = _norm(title)
    for exact in (True, False):
        for norm, target in titles:
            if (norm == want) if exact else (norm.startswith(want) or want.startswith(norm)):
                return target
    return "decisions/index.md"


WIDTH = 100  # ruff's line length


def _comment_above(line: str) -> list[str]:
    """A code line whose trailing comment grew past the line length: the comment on its own line
    above it (ruff format would otherwise split the code, not the comment)."""
    m = re.match(r"^(\s*)(\S.*?)\s{2}# (.*)$", line)
    if (
        not m
        or m.group(2).lstrip().startswith(("#", '"', "'"))
        or m.group(2).count('"') % 2
        or re.fullmatch(r"[)\]},\s]*", m.group(2))  # a closing bracket's comment stays put
    ):
        return [line]
    return [f"{m.group(1)}# {m.group(3)}", f"{m.group(1)}{m.group(2)}"]


def _capitalised(m: re.Match[str], words: str) -> str:
    """`words` (group references expanded), capitalised as the text it replaces was: "The SPEC"
    → "The protocol", "a SPEC" → "a protocol", a bare "SPEC" where it starts a sentence."""
    words = m.expand(words)
    found = m.group(0)
    if found.startswith("SPEC"):
        before = m.string[: m.start()].rstrip(" *_`(")
        upper = not before or before.endswith(".")
    else:
        upper = found[0].isupper()
    return words[0].upper() + words[1:] if upper else words


class Rewriter:
    def __init__(self, prefix: str, links: bool) -> None:
        """prefix: the path from the file to docs/ ("" inside docs/, "docs/" in code, ...)."""
        self.prefix = prefix
        self.links = links
        self.titles = decision_titles()

    def target(self, rel: str, label: str) -> str:
        return f"[{label}]({self.prefix}{rel})" if self.links else f"{self.prefix}{rel}"

    def path(self, m: re.Match[str], rel: str, label: str) -> str:
        """A bare path: a link in docs (its backticks dropped), the new path in code (kept)."""
        if self.links:
            return self.target(rel, label)
        tick = "`" if m.group(0).startswith("`") else ""
        return f"{tick}{self.prefix}{rel}{tick}"

    def cite(self, m: re.Match[str]) -> str:
        nums = re.findall(r"\d+(?:\.\d+)?", m.group("nums"))
        anchors = [ANCHORS.get(n, ANCHORS.get(n.split(".")[0], "top")) for n in nums]
        if self.links:
            return ", ".join(
                f"[protocol §{n}]({self.prefix}protocol.md#{a})"
                for n, a in zip(nums, anchors, strict=True)
            )
        return f"{self.prefix}protocol.md#" + ", #".join(anchors)

    def line(self, line: str) -> str:
        if any(s in line for s in SKIP_LINES):
            return line
        line = CITE.sub(self.cite, line)
        line = SPEC_PATH.sub(
            lambda m: (
                self.target("protocol.md", "the protocol")
                if self.links
                else self.prefix + "protocol.md"
            ),
            line,
        )
        for pattern, words in BARE:
            line = pattern.sub(lambda m, w=words: _capitalised(m, w), line)
        line = DECISION_CITE.sub(
            lambda m: self.target(find_decision(m.group(1), self.titles), m.group(1)), line
        )
        line = DECISION_BARE.sub(
            lambda m: (
                self.target("decisions/index.md", "decisions")
                if self.links
                else self.prefix + "decisions/index.md"
            ),
            line,
        )
        line = RESULT_CITE.sub(self.result, line)
        return line

    def result(self, m: re.Match[str]) -> str:
        rel = RESULTS.get(_norm(m.group(2)).replace("  ", " "), f"{m.group(1)}.md")
        return self.target(rel, m.group(2))

    def text(self, text: str, python: bool = False) -> str:
        out = []
        for old in text.split("\n"):
            new = self.line(old)
            if python and new != old and len(new) > WIDTH:
                out += _comment_above(new)
            else:
                out.append(new)
        return "\n".join(out)


def doc_files() -> list[Path]:
    skip = {DOCS / "protocol.md", DOCS / "settings.md"}
    return [p for p in sorted(DOCS.rglob("*.md")) if p not in skip] + [ROOT / "README.md"]


def code_files() -> list[Path]:
    out = []
    for dirpath, dirnames, filenames in os.walk(ROOT):
        here = Path(dirpath)
        # Tools' caches and build output (.mypy_cache, .ruff_cache, clients/rust/target, ...)
        # are not the project's text: walking them cost minutes once mypy had run.
        dirnames[:] = [
            d for d in dirnames if d not in SKIP_DIRS and not d.startswith(".") and here / d != DOCS
        ]
        for name in filenames:
            path = here / name
            if path.suffix in CODE_SUFFIXES and path != ROOT / "README.md":
                out.append(path)
    return sorted(out)


def rewrite(paths: list[Path], docs: bool, check: bool) -> list[Path]:
    changed = []
    for path in paths:
        try:
            old = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, FileNotFoundError):
            continue
        if docs:
            depth = len(path.relative_to(DOCS).parts) - 1 if DOCS in path.parents else -1
            prefix = "docs/" if depth < 0 else "../" * depth
            new = Rewriter(prefix, links=True).text(old)
        else:
            new = Rewriter("docs/", links=False).text(old, python=path.suffix == ".py")
        if new != old:
            changed.append(path)
            if not check:
                path.write_text(new, encoding="utf-8")
    return changed


def main(argv: list[str]) -> int:
    check = "--check" in argv
    docs = "--docs" in argv
    code = "--code" in argv or not docs
    changed: list[Path] = []
    if docs:
        changed += rewrite(doc_files(), docs=True, check=check)
    if code:
        changed += rewrite(code_files(), docs=False, check=check)
    for path in changed:
        print(("cites the old paths: " if check else "rewrote ") + str(path.relative_to(ROOT)))
    if check:
        return 1 if changed else 0
    if code and changed:
        # Generated files were rewritten with their sources; regenerate to be sure they agree.
        subprocess.run([sys.executable, "-m", "tools.codegen.wire"], cwd=ROOT, check=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
