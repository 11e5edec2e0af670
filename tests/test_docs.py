"""The docs state only what the code serves (issue 43): every engine, setting and op a page names
exists, and the default engine a page names is the one the code picks. Also: every relative link
between the pages resolves, the generated reference pages are current, and every row of the result
tables links a run record in bench/results/ that has its machine-readable `.run.json`.

The checks read docs/*.md (the decision records included), README.md and the Makefile; the
dated run records in bench/results/ are history and may name what no longer exists."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from memory.embedding import embed, embed_onnx
from memory.ops import base as ops_base
from memory.services.recall_engines import registry
from tools import run_records, settings_doc
from tools.codegen import protocol

ROOT = Path(__file__).resolve().parents[1]
PAGES = sorted((ROOT / "docs").rglob("*.md")) + [ROOT / "README.md"]

ENGINE = r"(?:engine|hybrid)/\d+"
# "hybrid/6 (the default)", "`engine/2` (default without the extra)", "hybrid/6, the default",
# "hybrid/6 (the default engine)"
AFTER = re.compile(
    rf"(?P<engine>{ENGINE})`?\**\s*(?:\((?:the )?default(?P<q>[^)]*)\)|, the default\b(?P<q2>[^.;]*))"
)
# "The default is **`hybrid/6`**", "the default engine is hybrid/6", "default engine (hybrid/6)"
BEFORE = re.compile(
    rf"[Tt]he default(?: engine)? is \**`?(?P<engine>{ENGINE})|default engine \(`?(?P<engine2>{ENGINE})"
)
HISTORY = re.compile(r"\b(before|was|were|earlier|used to|then|once)\b")


def default_engines() -> dict[str, str]:
    """The code's default per install: the whole semantic extra, torch without ONNX Runtime,
    neither (memory.embedding.embed.default_engine with the install probes set)."""
    out = {}
    for kind, semantic, onnx in (
        ("full", True, True),
        ("partial", True, False),
        ("none", False, False),
    ):
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(embed, "installed", lambda s=semantic: s)
            mp.setattr(embed_onnx, "installed", lambda o=onnx: o)
            out[kind] = embed.default_engine()
    return out


def _install_of(qualifier: str) -> str:
    q = qualifier.lower()
    if "onnx" in q and "without" in q:
        return "partial"
    if "without" in q:
        return "none"
    return "full"


def default_claims(text: str) -> list[tuple[str, str, str]]:
    """(engine, install kind, the words) for every place the text names a default engine."""
    claims = []
    for m in AFTER.finditer(text):
        qualifier = m.group("q") or m.group("q2") or ""
        if HISTORY.search(qualifier):
            continue
        claims.append((m.group("engine"), _install_of(qualifier), m.group(0)))
    for m in BEFORE.finditer(text):
        # "Without the extra the default is engine/2", "the default is hybrid/6 (... without ...)"
        head = text[max(0, m.start() - 40) : m.start()].split(".")[-1]
        tail = text[m.end() : m.end() + 60].split(".")[0]
        claims.append(
            (m.group("engine") or m.group("engine2"), _install_of(head + tail), m.group(0))
        )
    return claims


def wrong_defaults(text: str, defaults: dict[str, str]) -> list[str]:
    return [
        f"{words!r} names {engine}; the code's default there is {defaults[kind]}"
        for engine, kind, words in default_claims(text)
        if engine != defaults[kind]
    ]


def _pages_text() -> dict[Path, str]:
    """The pages that state what the code does now: a superseded decision record is history, and
    may name a setting or a default that is gone."""
    texts = {p: p.read_text(encoding="utf-8") for p in PAGES}
    texts = {p: t for p, t in texts.items() if "Superseded by" not in t[:400]}
    texts[ROOT / "Makefile"] = (ROOT / "Makefile").read_text(encoding="utf-8")
    return texts


def test_the_default_engine_the_docs_name_is_the_one_the_code_picks() -> None:
    defaults = default_engines()
    assert defaults["full"] == "hybrid/6"  # what the product serves with `make install`
    claims = 0
    problems = []
    for path, text in _pages_text().items():
        claims += len(default_claims(text))
        problems += [f"{path.relative_to(ROOT)}: {p}" for p in wrong_defaults(text, defaults)]
    assert claims >= 3, "the checker found no claims at all: its patterns no longer match the docs"
    assert problems == []


@pytest.mark.parametrize(
    "planted",
    [
        "The default is **`hybrid/4`**: exact BM25 ...",
        "The default is **`hybrid/1`**: exact BM25 ...",
        "`SPOKE_MEMORY_ENGINE`: `hybrid/3` (default with the `semantic` extra)",
        "the recall engine, engine/1 (the default), ranks",
        "`engine/1` (default without the extra)",
    ],
)
def test_a_planted_wrong_default_is_caught(planted: str) -> None:
    assert wrong_defaults(planted, default_engines()) != []


def test_a_right_or_historical_default_is_not_flagged() -> None:
    text = (
        "The default is **`hybrid/6`**. `engine/2` (default without the extra). "
        "`engine/2` (default with the extra but without ONNX Runtime). "
        "`hybrid/4` (the default before hybrid/6). Without the extra the default is `engine/2`."
    )
    assert wrong_defaults(text, default_engines()) == []


# Where the docs give hybrid/6's documented threshold (docs/recall.md#scores) as a number.
THRESHOLD_SITES = {
    "docs/recall.md": r"documented threshold is (\d\.\d+)|description names (\d\.\d+)",
    "docs/clients.md": r"above_min_score\(answer, (\d\.\d+)\)",
    "README.md": r"hybrid/6's threshold of (\d\.\d+)|top result below (\d\.\d+)",
    "docs/recall-quality.md": r"at the threshold (\d\.\d+)",
}


def thresholds_named(text: str, pattern: str) -> set[float]:
    return {float(next(g for g in m.groups() if g)) for m in re.finditer(pattern, text)}


def test_the_threshold_the_docs_name_is_the_one_the_engine_ships() -> None:
    from memory.engine import hybrid6

    named = {
        page: thresholds_named((ROOT / page).read_text(encoding="utf-8"), pattern)
        for page, pattern in THRESHOLD_SITES.items()
    }
    assert named == {page: {hybrid6.THRESHOLD} for page in THRESHOLD_SITES}


def test_a_planted_stale_threshold_is_caught() -> None:
    text = "The documented threshold is 0.47 (`memory/engine/hybrid6.json`)."
    assert thresholds_named(text, THRESHOLD_SITES["docs/recall.md"]) == {0.47}


# The pages that say what a provider serves and how to run it (issue 42): they name only the
# served engines. Elsewhere (measurements, decisions, the protocol's examples) a retired engine
# may be named as history.
CURRENT = (
    "README.md",
    "docs/recall.md",
    "docs/architecture.md",
    "docs/deployment.md",
    "docs/settings.md",
    "docs/operators.md",
    "docs/howto.md",
)


def test_every_engine_the_docs_name_is_served() -> None:
    registry.load()
    served = set(registry.policies())
    named = {
        (path.relative_to(ROOT).as_posix(), e)
        for path, text in _pages_text().items()
        for e in re.findall(rf"\b{ENGINE}\b", text)
    }
    assert {(p, e) for p, e in named if e not in served | set(registry.RETIRED)} == set()
    assert {(p, e) for p, e in named if p in CURRENT and e not in served} == set()


def _settings_defined() -> set[str]:
    from django.conf import settings

    names = set(settings_doc.scan())
    names |= {n for n in dir(settings) if n.startswith("SPOKE_MEMORY_")}
    # Knobs of the test suite itself (e.g. SPOKE_MEMORY_SCREENSHOTS_DIR for the browser tests).
    for path in (ROOT / "tests").rglob("*.py"):
        if path.name != "test_docs.py":
            names |= set(
                re.findall(r'"(SPOKE_MEMORY_[A-Z0-9_]+)"', path.read_text(encoding="utf-8"))
            )
    return names


def unknown_settings(text: str, defined: set[str]) -> set[str]:
    return {n for n in re.findall(r"\bSPOKE_MEMORY_[A-Z0-9_]*[A-Z0-9]\b", text) if n not in defined}


def unknown_ops(text: str, ops: set[str]) -> set[str]:
    """memory.<family>[.<verb>] names that are no op (a family alone, or `memory.records.*`, must
    hold some op); module paths (memory.services.…) are not ops and are let be."""
    families = {op.split(".")[1] for op in ops}
    unknown = set()
    for m in re.finditer(r"\bmemory\.([a-z_]+)(?:\.([a-z_]+))?(?P<star>\.\*)?", text):
        if m.group(1) not in families:
            continue
        name = m.group(0).removesuffix(".*")
        if m.group("star") or (m.group(2) is None and name not in ops):
            if not any(op.startswith(name + ".") for op in ops):
                unknown.add(name)
        elif name not in ops:
            unknown.add(name)
    return unknown


def test_every_setting_the_docs_name_exists() -> None:
    defined = _settings_defined()
    named = {
        (path.relative_to(ROOT).as_posix(), name)
        for path, text in _pages_text().items()
        for name in unknown_settings(text, defined)
    }
    assert named == set()


def test_a_planted_unknown_setting_is_caught() -> None:
    text = "Set `SPOKE_MEMORY_NO_SUCH_SETTING=1`, and `SPOKE_MEMORY_MAX_PAGE_SIZE` as before."
    assert unknown_settings(text, _settings_defined()) == {"SPOKE_MEMORY_NO_SUCH_SETTING"}


def test_every_op_the_docs_name_exists() -> None:
    ops = set(ops_base.HANDLERS)
    assert len(ops) == 33
    named = {
        (path.relative_to(ROOT).as_posix(), name)
        for path, text in _pages_text().items()
        for name in unknown_ops(text, ops)
    }
    assert named == set()


def test_a_planted_unknown_op_is_caught() -> None:
    text = (
        "Call `memory.exports.list`, then `memory.records.get`; `memory.records.*`, "
        "`memory.reflections` and the module `memory.services.erasure` are fine."
    )
    assert unknown_ops(text, set(ops_base.HANDLERS)) == {"memory.exports.list"}


LINK = re.compile(r"\]\((?!https?://|mailto:|#)([^)\s]+?)(?:#([^)\s]*))?\)")


def _anchors(path: Path) -> set[str]:
    text = path.read_text(encoding="utf-8")
    ids = set(re.findall(r'<a id="([^"]+)"', text))
    for heading in re.findall(r"^#+ (.+)$", text, flags=re.M):
        ids.add(re.sub(r"[^a-z0-9 _-]", "", heading.lower().strip()).replace(" ", "-"))
    return ids


def test_every_relative_link_and_anchor_between_the_pages_resolves() -> None:
    broken = []
    for path in PAGES:
        for m in LINK.finditer(path.read_text(encoding="utf-8")):
            target = (path.parent / m.group(1)).resolve()
            if not target.exists():
                broken.append(f"{path.relative_to(ROOT)}: {m.group(0)}")
            elif m.group(2) and target.suffix == ".md" and m.group(2) not in _anchors(target):
                broken.append(f"{path.relative_to(ROOT)}: {m.group(0)} (no such anchor)")
    assert broken == []


def test_no_page_cites_a_path_outside_the_repository() -> None:
    outside = {
        f"{path.relative_to(ROOT)}: {m.group(0)}"
        for path in PAGES
        for m in re.finditer(
            r"\.\./shared/\S*|/work/\S*|\bSPEC\.md\b", path.read_text(encoding="utf-8")
        )
    }
    assert outside == set()


def test_every_decision_record_is_listed_in_the_decisions_index() -> None:
    index = (ROOT / "docs" / "decisions" / "index.md").read_text(encoding="utf-8")
    listed = set(re.findall(r"\]\(([a-z0-9-]+\.md)\)", index))
    records = {p.name for p in (ROOT / "docs" / "decisions").glob("*.md")} - {"index.md"}
    assert records - listed == set(), "add a line for each to docs/decisions/index.md"


def test_the_generated_reference_pages_are_current() -> None:
    assert (ROOT / "docs" / "protocol.md").read_text(encoding="utf-8") == protocol.render()
    assert (ROOT / "docs" / "settings.md").read_text(encoding="utf-8") == settings_doc.render(
        settings_doc.scan()
    )


def test_every_result_row_links_a_run_record_that_exists() -> None:
    """docs/performance.md and docs/reliability.md: each table row names its run record in
    bench/results/ (not "same", not a record that is gone)."""
    rows = run_records.rows()
    assert len(rows) >= 20, "the checker found no rows: its table parsing no longer matches"
    missing = [
        f"{r['page']}:{r['line']} {r['what'][:60]!r}"
        for r in rows
        if not r["records"] or not all((run_records.RESULTS / n).exists() for n in r["records"])
    ]
    assert missing == []


def test_a_planted_row_without_its_run_record_is_caught() -> None:
    page = (
        "## Recall\n\n| what | figure | floor | command | commit | machine | record |\n"
        "|---|---|---|---|---|---|---|\n"
        "| a | 1 ms | 2 ms | `python -m bench x` | abc | dev2 | same |\n"
        "| b | 1 ms | 2 ms | `python -m bench x` | abc | dev2 |"
        " [gone](../bench/results/1999-01-01-gone.md) |\n"
    )
    rows = run_records.table_rows(page, "planted.md")
    assert [r["records"] for r in rows] == [[], ["1999-01-01-gone.md"]]
    assert rows[0]["command"] == "python -m bench x" and rows[0]["floor"] == "2 ms"
    assert not (run_records.RESULTS / "1999-01-01-gone.md").exists()


def test_every_run_record_has_its_current_machine_readable_form() -> None:
    """Each bench/results/<stem>.md has <stem>.run.json with the figures the tables cite
    (`python -m tools.run_records` writes them; `make lint` checks them)."""
    files = run_records.render()
    assert len(files) == len([p for p in run_records.RESULTS.glob("*.md") if p.name != "README.md"])
    stale = [p.name for p, text in files.items() if not p.exists() or p.read_text("utf-8") != text]
    assert stale == []
    cited = {n for r in run_records.rows() for n in r["records"]}
    for path, text in files.items():
        data = json.loads(text)
        assert data["record"] == path.name.removesuffix(".run.json") + ".md"
        assert bool(data["figures"]) == (data["record"] in cited)


def test_every_setting_has_its_sentence() -> None:
    """The settings reference gives each variable one sentence (issue 43 item 3), not the
    generator's placeholder."""
    page = settings_doc.render(settings_doc.scan())
    missing = [line.split("`")[1] for line in page.splitlines() if "Not described yet" in line]
    assert missing == [], "add a sentence to tools/settings_doc.py DESCRIPTIONS"


def spoke_commands() -> set[str]:
    """The subcommands `manage.py spoke` serves, read from its argument parser."""
    import argparse

    from memory.management.commands.spoke import Command

    parser = Command().create_parser("manage.py", "spoke")
    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return set(subs[0].choices)


def undocumented_commands(text: str, commands: set[str]) -> set[str]:
    return {c for c in commands if f"manage.py spoke {c}" not in text}


def test_every_cli_command_is_in_the_cli_reference() -> None:
    commands = spoke_commands()
    assert {"create-space", "create-agent", "citus-setup", "demo"} <= commands
    text = (ROOT / "docs" / "operators.md").read_text(encoding="utf-8")
    assert undocumented_commands(text, commands) == set()


def test_a_command_missing_from_the_cli_reference_is_caught() -> None:
    text = "| `python manage.py spoke create-space SPACE_ID` | ... |"
    assert undocumented_commands(text, {"create-space", "citus-setup"}) == {"citus-setup"}
