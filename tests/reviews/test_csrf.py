"""Every console form is CSRF-protected: a POST without the token changes nothing."""

import pytest
from django.test import Client

from memory.models import Receipt, Space

pytestmark = pytest.mark.django_db

POSTS = [
    "/console/s/s1/space/freeze/",
    "/console/s/s1/space/unfreeze/",
    "/console/s/s1/space/fence/",
    "/console/s/s1/grants/issue/",
    "/console/s/s1/grants/grt_x/revoke/",
    "/console/s/s1/queue/bulk/",
    "/console/s/s1/candidates/cnd_x/review/",
    "/console/s/s1/recent/rcp_x/undo/",
    "/console/s/s1/imports/stage/",
    "/console/s/s1/imports/activate/",
    "/console/s/s1/records/rec_x/edit/",
    "/console/s/s1/records/rec_x/delete/",
    "/console/operate/s1/principals/",
    "/console/operate/s1/tokens/",
    "/console/operate/s1/tokens/revoke/",
    "/console/operate/s1/root-grants/",
    "/console/logout/",
]


@pytest.mark.parametrize("url", POSTS)
def test_post_without_csrf_token_is_refused(moderator, url):
    client = Client(enforce_csrf_checks=True)
    client.force_login(moderator)
    before = Receipt.objects.count()
    response = client.post(url, {"reason": "x", "idempotency_key": "k"})
    assert response.status_code == 403
    assert Receipt.objects.count() == before
    assert Space.objects.get(space_id="s1").state == "active"


def test_every_rendered_form_carries_the_token(mod):
    for url in (
        "/console/",
        "/console/s/s1/grants/",
        "/console/s/s1/space/",
        "/console/s/s1/queue/",
        "/console/s/s1/recent/",
        "/console/s/s1/imports/",
    ):
        html = mod.get(url).content.decode()
        assert html.count('<form method="post"') + html.count(
            '<form class="logout" method="post"'
        ) == html.count('name="csrfmiddlewaretoken"')
