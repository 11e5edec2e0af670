"""The machine-readable form of the bench run records (issue 43): beside every Markdown run file
`bench/results/<stem>.md` a `<stem>.run.json` holding what the docs' result tables say of it.

The tables in docs/performance.md and docs/reliability.md are the source: each row of a table
with a `record` column gives what is measured, the figure, the floor or anchor measured in the
same run, the command, the commit and the machine, and links its run record in
`bench/results/`. This writes, for every run record, its `.run.json`:

    {"record": "<stem>.md", "date": "YYYY-MM-DD", "moved_from": "...", "written_up_in": "<commit>",
     "commands": ["python -m bench ..."],          # the bench commands the record names
     "figures": [{"page", "section", "what", "figure", "floor", "command", "commit", "machine"}]}

`figures` is empty for a record no table row cites (an earlier run, kept as history).
A bench that writes its own record writes this file too (or runs this tool after).

    python -m tools.run_records          # rewrite the .run.json files
    python -m tools.run_records --check  # exit 1 when one is missing or out of date (make lint)

Reads Markdown only; imports nothing of Django or the provider."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results"
PAGES = [ROOT / "docs" / "performance.md", ROOT / "docs" / "reliability.md"]
LINK = re.compile(r"\]\(\.\./bench/results/([^)#\s]+)\)")
MOVED = re.compile(
    r"<!-- Moved from (\S+) \(section \"([^\"]+)\"\)(?:; the run was written up in commit (\w+))?"
)
COMMAND = re.compile(r"`((?:[A-Z_]+=\S+\s+)*(?:\.venv/bin/)?python -m bench[^`]*)`")


def _cells(line: str) -> list[str]:
    """A table row's cells, `\\|` inside a cell kept."""
    inner = line.strip()[1:-1]
    return [c.strip().replace("\\|", "|") for c in re.split(r"(?<!\\)\|", inner)]


def _column(header: list[str], *words: str) -> int | None:
    for i, name in enumerate(header):
        if any(w in name.lower() for w in words):
            return i
    return None


def rows() -> list[dict[str, Any]]:
    """Every row of every result table of the result pages (see `table_rows`)."""
    out = []
    for page in PAGES:
        out += table_rows(page.read_text(encoding="utf-8"), page.relative_to(ROOT).as_posix())
    return out


def _code(cell: str | None) -> str | None:
    """A cell that is one code span, without its backticks."""
    if cell and cell.startswith("`") and cell.endswith("`") and cell.count("`") == 2:
        return cell[1:-1]
    return cell


def table_rows(text: str, page: str) -> list[dict[str, Any]]:
    """Every row of every table in `text` that has a `record` column: its cells by meaning, the
    run records it links (`../bench/results/<file>`) and where it stands."""
    out = []
    section = ""
    header: list[str] | None = None
    for number, line in enumerate(text.splitlines(), 1):
        if line.startswith("#"):
            section, header = re.sub(r'<a id="[^"]*"></a>', "", line.lstrip("#")).strip(), None
            continue
        if not line.startswith("|"):
            header = None
            continue
        cells = _cells(line)
        if header is None:
            header = cells
            continue
        record = _column(header, "record")
        if record is None or set("".join(cells)) <= set("-: "):
            continue
        by = {
            key: cells[i] if (i := _column(header, *words)) is not None and i < len(cells) else None
            for key, words in (
                ("figure", ("figure", "outcome")),
                ("floor", ("floor", "anchor")),
                ("command", ("command",)),
                ("commit", ("commit",)),
                ("machine", ("machine",)),
            )
        }
        out.append(
            {
                "page": page,
                "line": number,
                "section": section,
                "what": cells[0],
                **by,
                "command": _code(by["command"]),
                "records": LINK.findall(cells[record] if record < len(cells) else ""),
            }
        )
    return out


def render() -> dict[Path, str]:
    """The `.run.json` of every Markdown run record, as it should be on disk."""
    by_record: dict[str, list[dict[str, Any]]] = {}
    for row in rows():
        for name in row["records"]:
            figure = {k: row[k] for k in ("page", "section", "what", "figure", "floor")}
            figure |= {k: row[k] for k in ("command", "commit", "machine")}
            by_record.setdefault(name, []).append(figure)
    files = {}
    for path in sorted(RESULTS.glob("*.md")):
        if path.name == "README.md":
            continue
        text = path.read_text(encoding="utf-8")
        moved = MOVED.search(text.splitlines()[0] if text else "")
        commands = []
        for m in COMMAND.finditer(text):
            command = " ".join(m.group(1).split())
            if command not in commands:
                commands.append(command)
        data = {
            "record": path.name,
            "date": path.name[:10],
            "moved_from": f'{moved.group(1)} "{moved.group(2)}"' if moved else None,
            "written_up_in": moved.group(3) if moved else None,
            "commands": commands,
            "figures": by_record.get(path.name, []),
        }
        target = path.with_name(path.stem + ".run.json")
        files[target] = json.dumps(data, indent=1, ensure_ascii=False) + "\n"
    return files


def main(argv: list[str]) -> int:
    files = render()
    stale = [p for p, text in files.items() if not p.exists() or p.read_text("utf-8") != text]
    orphans = [
        p for p in RESULTS.glob("*.run.json") if p not in files
    ]  # a .run.json whose Markdown record is gone
    if "--check" in argv:
        for p in stale + orphans:
            print(f"{p.relative_to(ROOT)} is out of date: run python -m tools.run_records")
        return 1 if stale or orphans else 0
    for p in stale:
        p.write_text(files[p], encoding="utf-8")
        print(f"wrote {p.relative_to(ROOT)}")
    for p in orphans:
        p.unlink()
        print(f"removed {p.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
