"""A copilot run belongs to the person who asked for it: it holds their draft text and what the copilot wrote
for them. Every other member of the account, administrators included, gets the same 404 as for an id that does
not exist (so ids do not tell who asked for what), and every list shows a person their own runs only: the
status and stream views, the debug log, the Django admin."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User

from captain.copilot.models import CopilotRun
from helpdesk.models import Membership
from tests.factories import MembershipFactory, UserFactory

pytestmark = pytest.mark.django_db

BOBS_DRAFT = "Draft by Bob for the customer, private"
ALICES_SUMMARY = "Summary Alice asked for, private"


def run_for(acme, user: User | None, output: str) -> CopilotRun:
    return CopilotRun.objects.create(
        account=acme["account"],
        assistant=acme["assistant"],
        conversation=acme["conversation"],
        user=user,
        kind="draft",
        status="done",
        output=output,
    )


def run_urls(acme, run_id: int) -> tuple[str, str]:
    base = f"/app/accounts/{acme['account'].id}/copilot/runs/{run_id}/"
    return base, f"{base}stream"


def test_a_copilot_run_is_a_404_for_every_member_but_the_one_who_asked(client, acme):
    colleague = UserFactory(username="carol")
    MembershipFactory(account=acme["account"], user=colleague, role=Membership.Role.AGENT)
    run = run_for(acme, acme["agent"], BOBS_DRAFT)
    status_url, stream_url = run_urls(acme, run.pk)
    missing_status, missing_stream = run_urls(acme, run.pk + 1000)

    for someone_else in (colleague, acme["admin"]):
        client.force_login(someone_else)
        status = client.get(status_url)
        assert status.status_code == 404 and BOBS_DRAFT.encode() not in status.content
        # The same answer as for a run that does not exist: the id says nothing.
        assert status.content == client.get(missing_status).content
        assert client.get(stream_url).status_code == 404
        assert client.get(missing_stream).status_code == 404

    client.force_login(acme["agent"])
    mine = client.get(status_url)
    assert mine.status_code == 200 and mine.json()["output"] == BOBS_DRAFT


def test_a_run_whose_asker_is_gone_is_nobodys(client, acme):
    run = run_for(acme, None, BOBS_DRAFT)  # the user was deleted (SET_NULL)
    client.force_login(acme["admin"])
    status_url, stream_url = run_urls(acme, run.pk)
    assert client.get(status_url).status_code == 404
    assert client.get(stream_url).status_code == 404


def test_the_debug_log_lists_only_the_copilot_runs_the_viewer_asked_for(client, acme):
    bobs = run_for(acme, acme["agent"], BOBS_DRAFT)
    alices = run_for(acme, acme["admin"], ALICES_SUMMARY)
    client.force_login(acme["admin"])
    page = client.get(f"/app/accounts/{acme['account'].id}/conversations/{acme['conversation'].id}/runs/")
    html = page.content.decode()
    assert page.status_code == 200
    assert f'id="copilot-run-{alices.pk}"' in html and ALICES_SUMMARY in html
    assert f'id="copilot-run-{bobs.pk}"' not in html and BOBS_DRAFT not in html


def test_the_admin_shows_an_account_administrator_only_their_own_copilot_runs(client, acme):
    admin = acme["admin"]
    User.objects.filter(pk=admin.pk).update(is_staff=True)
    bobs = run_for(acme, acme["agent"], BOBS_DRAFT)
    alices = run_for(acme, admin, ALICES_SUMMARY)
    client.force_login(admin)

    listing = client.get("/admin/captain/copilotrun/")
    assert listing.status_code == 200
    assert [row.pk for row in listing.context["cl"].result_list] == [alices.pk]
    assert client.get(f"/admin/captain/copilotrun/{alices.pk}/change/").status_code == 200
    theirs = client.get(f"/admin/captain/copilotrun/{bobs.pk}/change/", follow=True)
    missing = client.get(f"/admin/captain/copilotrun/{bobs.pk + 1000}/change/", follow=True)
    assert BOBS_DRAFT not in theirs.content.decode()
    # Django's "does not exist" answer, the same as for an id nobody has.
    assert theirs.redirect_chain == missing.redirect_chain == [("/admin/", 302)]
