"""Issue 41, item 5: a console that speaks in words. The flash after a review, "My recent
actions" and the candidate's and record's titles name the memory by its first words (escaped,
truncated) and its subject, the id secondary; the similar records show their word overlap as a
labelled percentage, never recall's rescaled score; each space has a list of its subjects
(search, paging, counts of records and pending candidates, last activity) that shows only what
the moderator's grants cover."""

from __future__ import annotations

import re

import pytest

from memory.demo import DEMO_CAPTURES
from reviews.words import gist
from tests.reviews.conftest import ctx, logged_in, make_user

pytestmark = pytest.mark.django_db

LONG = (
    "Ada prefers green tea in the morning and black coffee after lunch, except on Fridays when "
    "she skips both."
)


def test_gist_is_the_first_words_cut_at_a_word():
    assert gist("Ada likes tea.") == "Ada likes tea."
    assert gist("  Ada\n likes\t tea. ") == "Ada likes tea."
    cut = gist(LONG)
    assert cut.endswith("…") and len(cut) <= 60 and LONG.startswith(cut[:-1])
    assert gist("") == "(no text)" and gist(None) == "(no text)"
    assert gist("x" * 200).endswith("…") and len(gist("x" * 200)) == 60


def test_promote_flash_names_the_memory_by_its_words_and_subject(mod, capture):
    (cid,) = capture(LONG, subject="user:ada")
    response = mod.post(
        f"/console/s/s1/candidates/{cid}/review/",
        {"idempotency_key": "k1", "action": "promote", "text": LONG},
        follow=True,
    )
    html = response.content.decode()
    (flash,) = re.findall(r'<li class="msg msg-success"[^>]*>(.*?)</li>', html, re.S)
    assert flash.startswith("Promoted &#x201C;Ada prefers green tea") or flash.startswith(
        "Promoted “Ada prefers green tea"
    )
    assert "about user:ada" in flash and f"candidate {cid}" in flash
    assert LONG not in flash  # truncated


def test_hostile_text_is_escaped_in_flash_title_and_recent_actions(mod, capture):
    hostile = "<script>alert(1)</script> hello"
    (cid,) = capture(hostile, subject="user:ada")
    page = mod.get(f"/console/s/s1/candidates/{cid}/").content.decode()
    title = re.search(r"<title>(.*?)</title>", page, re.S).group(1)
    assert "&lt;script&gt;" in title and "<script>" not in title
    response = mod.post(
        f"/console/s/s1/candidates/{cid}/review/",
        {"idempotency_key": "k2", "action": "dismiss"},
        follow=True,
    )
    html = response.content.decode()
    assert "<script>alert(1)" not in html and "&lt;script&gt;alert(1)" in html
    recent = mod.get("/console/s/s1/recent/").content.decode()
    assert "&lt;script&gt;alert(1)&lt;/script&gt; hello" in recent and "<script>" not in recent
    assert "about</span> user:ada" in recent and cid in recent


def test_candidate_and_record_titles_lead_with_words(mod, capture, record):
    (cid,) = capture("Grace wants a quote for 40 seats.", subject="user:grace")
    html = mod.get(f"/console/s/s1/candidates/{cid}/").content.decode()
    assert "<title>“Grace wants a quote for 40 seats.” · user:grace · candidate" in html
    h1 = re.search(r'<h1 id="candidate-title">(.*?)</h1>', html, re.S).group(1)
    assert h1.index("Grace wants") < h1.index(cid)
    rid = record("Grace's team uses the Pro plan.", subject="user:grace")
    html = mod.get(f"/console/s/s1/records/{rid}/").content.decode()
    assert "<title>“Grace&#x27;s team uses the Pro plan.” · user:grace · record" in html


def test_similar_records_show_word_overlap_as_a_labelled_percentage(mod, capture, record):
    record("Ada lives in Lisbon.", subject="u1")
    (cid,) = capture("Ada prefers email over phone calls.", subject="u1")
    response = mod.get(f"/console/s/s1/candidates/{cid}/")
    html = response.content.decode()
    (row,) = re.findall(r'<tr class="similar-row[^"]*">(.*?)</tr>', html, re.S)
    overlap = response.context["similar"][0]["overlap"]
    assert f'{round(overlap * 100)}% <small class="muted">word overlap</small>' in row
    assert 'class="quiet"' in row and "danger" not in row and "likely duplicate" not in row
    score = response.context["similar"][0]["score"]
    assert f"{score:.3f}" not in row  # recall's rescaled score is not shown as a likeness
    assert "<th>Word overlap</th>" in html and "<th>Score</th>" not in html


# --- the subject list ---------------------------------------------------------------------------


def test_subject_list_counts_records_and_pending_candidates(mod, capture, record, ops):
    record("Ada lives in Lisbon.", subject="user:ada")
    record("Ada likes jazz.", subject="user:ada")
    capture("Ada is learning Portuguese.", "Ada plays chess.", subject="user:ada")
    (done,) = capture("Grace wants a quote.", subject="user:grace")
    ops("memory.candidates.dismiss", {"space_id": "s1", "candidate_id": done})
    ops("memory.subjects.ensure", {"space_id": "s1", "subject_id": "user:quiet"})
    html = mod.get("/console/s/s1/subjects/").content.decode()
    rows = {
        m.group(1): (int(m.group(2)), int(m.group(3)))
        for m in re.finditer(
            r'<tr class="subject-row">.*?<code>([^<]+)</code>.*?class="count-records">(?:<a[^>]*>)?(\d+).*?class="count-pending">(?:<a[^>]*>)?(\d+)',
            html,
            re.S,
        )
    }
    assert rows == {"user:ada": (2, 2), "user:grace": (0, 0), "user:quiet": (0, 0)}
    assert 'href="/console/s/s1/queue/?subject=user%3Aada"' in html
    assert "Subjects</a>" in html  # in the space's navigation


def test_subject_list_searches_and_pages(mod, ops):
    for n in range(30):
        ops("memory.subjects.ensure", {"space_id": "s1", "subject_id": f"user:p{n:02d}"})
    ops("memory.subjects.ensure", {"space_id": "s1", "subject_id": "team:blue"})
    first = mod.get("/console/s/s1/subjects/").content.decode()
    assert first.count('class="subject-row"') == 25 and "page 1 of 2 · 31 subjects" in first
    second = mod.get("/console/s/s1/subjects/?page=2").content.decode()
    assert second.count('class="subject-row"') == 6
    found = mod.get("/console/s/s1/subjects/?q=team").content.decode()
    assert found.count('class="subject-row"') == 1 and "team:blue" in found
    none = mod.get("/console/s/s1/subjects/?q=%3Cb%3Enobody").content.decode()
    assert "No subject id contains “&lt;b&gt;nobody”" in none
    # a page past the end is the last page, a bad one the first: never an error
    assert mod.get("/console/s/s1/subjects/?page=99").status_code == 200
    assert mod.get("/console/s/s1/subjects/?page=x").status_code == 200


def test_subject_list_shows_only_what_the_grants_cover(ops, capture, record, give):
    record("Ada lives in Lisbon.", subject="user:ada")
    record("Ada's ticket notes.", subject="user:ada", placement=ctx("support"))
    capture("Grace wants a quote.", subject="user:grace")
    user, _ = make_user("narrow")
    give(user, "records_read", subject_ids=["user:ada"], context_ids=["support"])
    html = logged_in(user).get("/console/s/s1/subjects/").content.decode()
    assert "user:ada" in html and "user:grace" not in html
    (count,) = re.findall(r'class="count-records">(?:<a[^>]*>)?(\d+)', html)
    assert count == "1"  # the shared record is outside this grant's placement
    outsider, _ = make_user("outsider")
    assert logged_in(outsider).get("/console/s/s1/subjects/").status_code == 404


def test_the_demo_has_no_script_fixture():
    assert not [text for _, _, text in DEMO_CAPTURES if "<" in text or "script" in text]
