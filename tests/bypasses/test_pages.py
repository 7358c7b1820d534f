"""The /bypasses/ page, its forms (login, CSRF, approvers only), the run page's coverage section
and the read-only admin."""

import re

import pytest
from django.test import Client

from curves.models import BypassState, ParetoBypass, ParetoBypassAudit
from curves.services import bypass_approve
from runs import demo as demo_runs
from tests.curves_db.test_run_curves import SEED_KEY

pytestmark = pytest.mark.django_db

LIST = "/bypasses/"
RUN_PAGE = f"/runs/{demo_runs.SEED_PR_RUN_ID}/"
CSRF_INPUT = re.compile(r'name="csrfmiddlewaretoken" value="([^"]+)"')


def signed_in(user, *, enforce_csrf: bool = False) -> Client:
    client = Client(enforce_csrf_checks=enforce_csrf)
    client.force_login(user)
    return client


def test_the_list_asks_for_login(requested, client):
    response = client.get(LIST)

    assert response.status_code == 302
    assert response["Location"] == f"/accounts/login/?next={LIST}"


def test_the_list_shows_each_request_with_its_curve_run_and_frontier(requested, member):
    html = signed_in(member).get(LIST).content.decode()

    assert SEED_KEY in html
    assert f"/runs/{demo_runs.SEED_PR_RUN_ID}/?attempt=1#coverage" in html
    assert "4/5 WARN" in html
    assert (
        "/inference?model=dsv4&amp;scenario=agentic-coding&amp;hardware=mi355x&amp;"
        "framework=atom-disagg&amp;precision=fp4"
    ) in html
    assert requested.rationale in html
    # Everyone signed in sees the state; only approvers get the forms.
    assert "<strong>requested</strong>" in html
    assert "Approve</button>" not in html


def test_an_approver_approves_from_the_list_with_a_csrf_token(requested, approver):
    client = signed_in(approver, enforce_csrf=True)
    html = client.get(LIST).content.decode()
    assert "Approve</button>" in html and "Reject</button>" in html
    approve_url = f"/bypasses/{requested.pk}/approve/"

    forged = client.post(approve_url, {"reason": "ok"})
    response = client.post(
        approve_url,
        {"reason": "maintainers agree", "csrfmiddlewaretoken": CSRF_INPUT.search(html)[1]},
    )

    assert forged.status_code == 403
    assert (response.status_code, response["Location"]) == (302, LIST)
    requested.refresh_from_db()
    assert (requested.state, requested.decided_by, requested.decision_reason) == (
        BypassState.APPROVED,
        approver,
        "maintainers agree",
    )
    assert "Revoke</button>" in client.get(LIST).content.decode()


@pytest.mark.parametrize("decision", ["approve", "reject", "revoke"])
def test_only_approvers_may_post_decisions(requested, client, member, decision):
    url = f"/bypasses/{requested.pk}/{decision}/"

    anonymous = client.post(url, {"reason": "x"})
    not_an_approver = signed_in(member).post(url, {"reason": "x"})

    assert anonymous.status_code == 302 and anonymous["Location"].startswith("/accounts/login/")
    assert not_an_approver.status_code == 403
    requested.refresh_from_db()
    assert requested.state == BypassState.REQUESTED


def test_page_decisions_report_errors_and_go_back(requested, approver, superuser):
    client = signed_in(superuser)
    no_reason = client.post(f"/bypasses/{requested.pk}/reject/", {"next": RUN_PAGE}, follow=True)
    wrong_state = client.post(
        f"/bypasses/{requested.pk}/revoke/", {"reason": "x", "next": "https://evil.example/"}
    )
    rejected = client.post(f"/bypasses/{requested.pk}/reject/", {"reason": "add c512"})

    assert no_reason.redirect_chain == [(RUN_PAGE, 302)]
    assert "reason: This field is required." in no_reason.content.decode()
    assert wrong_state["Location"] == LIST  # never off-site
    assert "only approved bypasses can be revoked" in client.get(LIST).content.decode()
    assert rejected.status_code == 302
    requested.refresh_from_db()
    assert (requested.state, requested.decided_by) == (BypassState.REJECTED, superuser)


def test_the_run_page_shows_coverage_and_the_request_form(seed_run, client, member):
    anonymous = client.get(RUN_PAGE).content.decode()
    member_client = signed_in(member, enforce_csrf=True)
    html = member_client.get(RUN_PAGE).content.decode()

    assert "Pareto coverage" in anonymous and "to request a bypass" in anonymous
    assert 'action="/bypasses/request/"' not in anonymous
    assert 'action="/bypasses/request/"' in html
    response = member_client.post(
        "/bypasses/request/",
        {
            "run_id": demo_runs.SEED_PR_RUN_ID,
            "attempt": 1,
            "sha": demo_runs.SEED_PR_SHA,
            "curve": SEED_KEY,
            "rationale": "c1 is dominated",
            "next": f"{RUN_PAGE}#coverage",
            "csrfmiddlewaretoken": CSRF_INPUT.search(html)[1],
        },
    )

    assert (response.status_code, response["Location"]) == (302, f"{RUN_PAGE}#coverage")
    bypass = ParetoBypass.objects.get()
    assert (bypass.sha, bypass.curve_key, bypass.requested_by) == (
        demo_runs.SEED_PR_SHA,
        SEED_KEY,
        member,
    )
    after = member_client.get(RUN_PAGE).content.decode()
    assert "requested</a> by member: c1 is dominated" in after
    assert 'action="/bypasses/request/"' not in after  # pending: nothing more to ask
    assert "Approve</button>" not in after


def test_the_run_page_lets_approvers_decide_and_shows_the_annotation(requested, approver):
    client = signed_in(approver)
    assert "Approve</button>" in client.get(RUN_PAGE).content.decode()

    bypass_approve(bypass=requested, actor=approver, reason="maintainers agree")
    html = client.get(RUN_PAGE).content.decode()

    assert "admin bypass recorded by approver at " in html
    assert "Revoke</button>" in html


def test_a_request_form_without_csrf_token_is_refused(seed_run, member):
    response = signed_in(member, enforce_csrf=True).post(
        "/bypasses/request/",
        {
            "run_id": demo_runs.SEED_PR_RUN_ID,
            "attempt": 1,
            "sha": demo_runs.SEED_PR_SHA,
            "curve": SEED_KEY,
            "rationale": "r",
        },
    )

    assert response.status_code == 403
    assert not ParetoBypass.objects.exists()


def test_the_admin_shows_bypasses_and_their_audit_read_only(requested, superuser):
    client = signed_in(superuser)
    audit = ParetoBypassAudit.objects.get(bypass=requested)

    assert client.get("/admin/curves/paretobypass/").status_code == 200
    change_page = client.get(f"/admin/curves/paretobypass/{requested.pk}/change/")
    assert change_page.status_code == 200 and 'name="_save"' not in change_page.content.decode()
    assert client.get("/admin/curves/paretobypass/add/").status_code == 403
    assert (
        client.post(
            f"/admin/curves/paretobypass/{requested.pk}/change/", {"state": "approved"}
        ).status_code
        == 403
    )
    assert client.get(f"/admin/curves/paretobypassaudit/{audit.pk}/change/").status_code == 200
    assert client.get("/admin/curves/paretobypassaudit/add/").status_code == 403
    assert client.post(f"/admin/curves/paretobypassaudit/{audit.pk}/delete/").status_code == 403
    requested.refresh_from_db()
    assert requested.state == BypassState.REQUESTED


def test_an_approver_who_is_not_staff_logs_in_on_the_plain_login_page(client, approver):
    approver.set_password("pw-for-approver")
    approver.save()
    assert not approver.is_staff
    page = client.get("/accounts/login/?next=/bypasses/")
    assert page.status_code == 200 and b"csrfmiddlewaretoken" in page.content
    response = client.post(
        "/accounts/login/",
        {"username": approver.username, "password": "pw-for-approver", "next": "/bypasses/"},
    )
    assert response.status_code == 302 and response["Location"] == "/bypasses/"
    assert client.get("/bypasses/").status_code == 200
