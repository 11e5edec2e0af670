"""The lexical candidate set is the engine tokenizer's on every database: PostgreSQL's
`spoke_recall_lexemes()` (and its GIN index) must agree with `memory.engine.rank.tokens`."""

import importlib
import pkgutil

import pytest
from django.db import connection

import memory.migrations
from memory.engine import rank
from memory.models import Record
from memory.selectors.recall import lexical_q
from tests.conftest import CITUS, requires_postgres
from tests.memory.recall.conftest import ids

pytestmark = pytest.mark.django_db

TRICKY = [
    "Héllo, WORLD_foo—bar über Über a-b",
    "user@example.com http://example.org/path?q=1 C:\\dir\\file.txt",
    "ΣΊΣΥΦΟΣ «quote» 1.5e3 naïve 日本語テキスト",
    "it's don't O'Brien",
    "x" * 201 + " tail " + "y" * 200,
    "tabs\tand\nnewlines\u00a0nbsp\u2003emspace",
    "ÀÉÎÕÜ ĲǄ Ѐ",
]


def _migrations_sql() -> list[str]:
    """Every migration's `spoke_recall_lexemes`, oldest first (migration names sort by number)."""
    found = []
    for info in sorted(pkgutil.iter_modules(memory.migrations.__path__), key=lambda i: i.name):
        module = importlib.import_module(f"memory.migrations.{info.name}")
        if hasattr(module, "RECALL_LEXEMES_SQL"):
            found.append(module.RECALL_LEXEMES_SQL)
    assert found, "no migration defines spoke_recall_lexemes"
    return found


def test_the_latest_migration_sql_is_the_engine_tokenizer():
    assert _migrations_sql()[-1] == rank.lexemes_function_sql()


def test_the_fold_table_changes_only_a_to_z_and_u00c0_to_u052f():
    # migration 0019's proof rests on it: a text without a character of U+00C0–U+052F folds
    # with lower(... COLLATE "C") to what translate() with the whole table gives
    assert all("A" <= c <= "Z" or "\u00c0" <= c <= "\u052f" for c in rank.FOLD_FROM)
    assert [c for c in rank.FOLD_FROM if c.isascii()] == list("ABCDEFGHIJKLMNOPQRSTUVWXYZ")
    assert rank.FOLD_TO[:26] == "abcdefghijklmnopqrstuvwxyz"


@requires_postgres
@pytest.mark.parametrize("text", TRICKY)
def test_postgres_lexemes_equal_python_tokens(text):
    with connection.cursor() as cur:
        cur.execute("SELECT tsvector_to_array(spoke_recall_lexemes(%s))", [text])
        lexemes = cur.fetchone()[0]
    assert sorted(lexemes) == sorted(set(rank.tokens(text)))


@requires_postgres
def test_postgres_candidates_equal_python_matches(make_record):
    for i, text in enumerate(TRICKY):
        make_record(text, record_id=f"rec_{i}")
    vocabulary = sorted(
        {t for text in TRICKY for t in rank.tokens(text)} | {"absent", "xx", "Über"}
    )
    for word in vocabulary:
        terms = rank.query_terms(word)
        got = set(Record.objects.filter(lexical_q(terms)).values_list("record_id", flat=True))
        want = {f"rec_{i}" for i, text in enumerate(TRICKY) if set(terms) & set(rank.tokens(text))}
        assert got == want, word


@requires_postgres
def test_postgres_uses_the_gin_index(make_record):
    with connection.cursor() as cur:
        cur.execute("SELECT indexdef FROM pg_indexes WHERE indexname = 'record_recall_lexemes'")
        assert "gin (spoke_recall_lexemes(text))" in cur.fetchone()[0]
        if CITUS:  # the workers plan each shard's statement: the setting must reach them
            cur.execute("SET LOCAL citus.propagate_set_commands = 'local'")
        cur.execute("SET LOCAL enable_seqscan = off")
        sql, params = Record.objects.filter(lexical_q(["tea"])).query.sql_with_params()
        cur.execute("EXPLAIN " + sql, params)
        plan = "\n".join(row[0] for row in cur.fetchall())
    assert "record_recall_lexemes" in plan


def test_case_and_punctuation_fold_the_same_way_on_every_database(make_record, recall):
    make_record("Über-Café at 9:30", record_id="rec_a")
    make_record("uber cafe", record_id="rec_b")
    assert ids(recall({"query": {"text": "über"}})) == ["rec_a"]
    assert ids(recall({"query": {"text": "CAFÉ"}})) == ["rec_a"]
    assert ids(recall({"query": {"text": "30"}})) == ["rec_a"]
    assert ids(recall({"query": {"text": "cafe"}})) == ["rec_b"]


@requires_postgres
def test_postgres_lexemes_equal_python_tokens_on_any_text():
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    letters = st.characters(exclude_categories=("Cs",), exclude_characters="\x00")
    mixed = st.sampled_from(
        ["A", "z", "Ü", "ß", "İ", "Σ", "ς", "-", "_", " ", "\u00a0", "’", "9", "日"]
    )

    @settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
    @given(
        st.text(st.one_of(letters, mixed), max_size=120)
        | st.text(mixed, min_size=195, max_size=420)
    )
    def check(text):
        with connection.cursor() as cur:
            cur.execute("SELECT tsvector_to_array(spoke_recall_lexemes(%s))", [text])
            assert sorted(cur.fetchone()[0]) == sorted(set(rank.tokens(text)))

    check()


# Characters for the old-vs-new comparison: token characters in and out of the fold range
# (ASCII, Latin-1 letters, Greek, Cyrillic, CJK, an astral emoji, a combining accent, U+052F
# and U+0530 at the range's edge) and separators of every class (ASCII, C1/Latin-1 punctuation,
# NBSP, ×, ÷, General Punctuation, arrows, CJK punctuation, BOM, a control character).
TOKEN_CHARS = "aZ09ÀÉßÿĲΣςДжԯ\u0530日本😀\u0301İ"
SEPARATORS = " \t\n\r\x01-_'@.:/\u00a0«×÷\u2003’—“…→\u3000\ufeff"


@requires_postgres
def test_0019_lexemes_equal_0002_lexemes_on_any_text():
    """The GIN index built with 0002's function stays valid under 0019's only if the two agree on
    every text (migration 0019 has the argument); this checks it on adversarial texts: token
    lengths at and around the 200-character bound and far over it, every separator class,
    Unicode in and out of the fold range, empty strings and separator-only texts."""
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    first, *_, latest = _migrations_sql()
    assert latest == rank.lexemes_function_sql()
    old = first.replace("FUNCTION spoke_recall_lexemes(", "FUNCTION pg_temp.lexemes_0002(")
    with connection.cursor() as cur:
        cur.execute(old)

    token = st.one_of(
        st.integers(0, 12),
        st.sampled_from([199, 200, 201, 202]),
        st.integers(190, 210),
        st.integers(400, 3000),
    ).flatmap(lambda n: st.text(st.sampled_from(TOKEN_CHARS), min_size=n, max_size=n))
    gap = st.text(st.sampled_from(SEPARATORS), min_size=1, max_size=4)
    built = st.lists(st.tuples(token, gap), max_size=8).map(
        lambda parts: "".join(t + g for t, g in parts)
    )
    # the same, with the trailing separator dropped: a token may end the text
    ending = built.map(lambda text: text.rstrip(SEPARATORS))
    anything = st.text(st.characters(exclude_categories=("Cs",), exclude_characters="\x00"))

    @settings(max_examples=400, deadline=None, suppress_health_check=list(HealthCheck))
    @given(st.one_of(built, ending, anything, st.just(""), gap))
    def check(text):
        with connection.cursor() as cur:
            cur.execute(
                "SELECT pg_temp.lexemes_0002(d)::text, spoke_recall_lexemes(d)::text, "
                "tsvector_to_array(spoke_recall_lexemes(d)) FROM (SELECT %s::text AS d) x",
                [text],
            )
            before, after, words = cur.fetchone()
        assert after == before
        assert sorted(words) == sorted(set(rank.tokens(text)))

    check()
