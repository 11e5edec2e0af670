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
from tests.conftest import requires_postgres
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


def _migration_sql() -> str:
    for info in pkgutil.iter_modules(memory.migrations.__path__):
        module = importlib.import_module(f"memory.migrations.{info.name}")
        if hasattr(module, "RECALL_LEXEMES_SQL"):
            return module.RECALL_LEXEMES_SQL
    raise AssertionError("no migration defines spoke_recall_lexemes")


def test_migration_sql_is_the_engine_tokenizer():
    assert _migration_sql() == rank.lexemes_function_sql()


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
        cur.execute("SET enable_seqscan = off")
        sql, params = Record.objects.filter(lexical_q(["tea"])).query.sql_with_params()
        cur.execute("EXPLAIN " + sql, params)
        plan = "\n".join(row[0] for row in cur.fetchall())
        cur.execute("RESET enable_seqscan")
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
