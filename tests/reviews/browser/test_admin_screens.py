"""Browser: grants (issue, amplification denied, revoke) and freezing a space."""

import pytest

from memory.models import Grant, Space
from memory.ops.base import call
from memory.services.operators import issue_root_grant
from tests.reviews.conftest import make_user

pytestmark = pytest.mark.browser


@pytest.fixture
def people(transactional_db):
    space = Space.objects.create(space_id="s1", display_name="Support team")
    mod_user, mod = make_user("moderator")
    issue_root_grant(space, mod)
    lead_user, lead = make_user("lead")
    call(
        mod,
        "memory.grants.grant",
        {
            "space_id": "s1",
            "grantee_principal_id": lead.principal_id,
            "capabilities": ["grants_issue", "review", "records_read"],
            "subject_ids": ["user:ada"],
        },
    )
    _, agent = make_user("agent")
    return {"space": space, "mod": mod, "lead": lead, "agent": agent}


def test_issue_a_grant_see_amplification_denied_then_revoke(console, people):
    lead = console("lead")
    agent_id = people["agent"].principal_id
    lead.go("/console/s/s1/grants/")
    page = lead.page
    page.fill("input[name=grantee_principal_id]", agent_id)
    page.check("input[name=capabilities][value=review]")
    page.check("input[name=capabilities][value=records_write]")
    page.fill("input[name=subject_ids]", "user:ada, user:grace")
    page.click("#grant-form button[type=submit]")
    box = page.locator("#amplification")
    box.wait_for()
    text = box.inner_text()
    assert "none of your issuing grants holds records_write" in text
    assert (
        "Subjects: you asked for user:ada, user:grace; your issuing grant covers user:ada." in text
    )
    lead.shot("grants-amplification-denied")
    assert not Grant.objects.filter(grantee=people["agent"]).exists()

    page.uncheck("input[name=capabilities][value=records_write]")
    page.fill("input[name=subject_ids]", "user:ada")
    page.click("#grant-form button[type=submit]")
    page.locator(".msg-success").wait_for()
    grant = Grant.objects.get(grantee=people["agent"])
    lead.shot("grants")

    mod = console("moderator")
    mod.go("/console/s/s1/grants/")
    mod.page.click(f"#{grant.grant_id} a.button")
    mod.page.locator("#confirm-revoke").wait_for()
    mod.shot("grant-revoke-confirm")
    mod.page.fill("input[name=reason]", "rotation")
    mod.page.click("#confirm-revoke")
    mod.page.locator(".msg-success").wait_for()
    grant.refresh_from_db()
    assert grant.state == "revoked"
    assert "not effective" in mod.page.locator(f"#{grant.grant_id}").inner_text()
    assert mod.page.locator(f"#{grant.grant_id} a.button").count() == 0  # not offered again


def test_pick_the_grantee_by_display_name(console, people):
    mod = console("moderator")
    mod.go("/console/s/s1/grants/")
    page = mod.page
    lead = people["lead"]
    names = page.locator("#grantee-pick option").all_inner_texts()
    assert f"Lead ({lead.principal_id[:12]}…)" in names
    assert not any("Agent" in n for n in names)  # holds no grant here: not offered
    page.select_option("#grantee-pick", label=f"Lead ({lead.principal_id[:12]}…)")
    page.check("input[name=capabilities][value=profile_read]")
    page.click("#grant-form button[type=submit]")
    page.locator(".msg-success").wait_for()
    assert Grant.objects.filter(grantee=lead, capabilities=["profile_read"]).count() == 1


def test_freeze_space_then_unfreeze(console, people):
    mod = console("moderator")
    mod.go("/console/s/s1/space/?subject=")
    mod.page.fill("#freeze-form input[name=reason]", "incident 42")
    mod.page.click("#freeze-form button")
    mod.page.locator("#unfreeze-form").wait_for()
    assert mod.page.locator("#space-state").inner_text() == "frozen"
    mod.shot("space-frozen")
    assert Space.objects.get(space_id="s1").state == "frozen"
    mod.page.click("#unfreeze-form button")
    mod.page.locator("#freeze-form").wait_for()
    assert Space.objects.get(space_id="s1").state == "active"


def test_operator_revokes_a_token_of_a_principal_without_grants(console, people):
    from guardian.shortcuts import assign_perm

    from memory.models import ApiToken, Principal

    user, _ = make_user("operator", staff=True)
    assign_perm("memory.operate_space", user, people["space"])
    tab = console("operator")
    tab.go("/console/operate/s1/")
    page = tab.page
    page.fill("#principal-form input[name=display_name]", "Billing app")
    page.click("#principal-form button[type=submit]")
    secret = page.locator("#new-token .secret").inner_text()
    assert secret.startswith("smk_")
    billing = Principal.objects.get(display_name="Billing app")
    token = ApiToken.objects.get(principal=billing)
    tab.go("/console/operate/s1/")  # the POST's answer showed it; a page view does not
    assert secret not in page.content()  # shown once
    row = page.locator(f"#token-{token.pk}")
    assert "Billing app" in row.inner_text()
    row.locator("button.danger").click()  # the box is not ticked: the browser asks for it
    token.refresh_from_db()
    assert token.revoked_at is None
    row.locator("input[name=confirmed]").check()
    row.locator("button.danger").click()
    page.locator(".msg-success").wait_for()
    token.refresh_from_db()
    assert token.revoked_at is not None
    assert page.locator(f"#token-{token.pk}").count() == 0 and secret not in page.content()
