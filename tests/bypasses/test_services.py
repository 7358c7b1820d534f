"""curves.services: the bypass lifecycle, its transitions, validation and audit rows."""

import pytest
from django.contrib.auth.models import Group, Permission
from django.core.exceptions import PermissionDenied, ValidationError

from curves.models import BypassState, ParetoBypass, ParetoBypassAudit
from curves.services import (
    BypassTransitionError,
    bypass_approve,
    bypass_can_decide,
    bypass_reject,
    bypass_request,
    bypass_revoke,
)
from runs import demo as demo_runs
from tests.curves_db.builders import measure
from tests.curves_db.test_run_curves import SEED_KEY
from tests.factories import ConfigFactory, WorkflowRunFactory

pytestmark = pytest.mark.django_db


def audit_of(bypass: ParetoBypass) -> list[tuple[str, str, str | None, str]]:
    """(action, actor, state before, state after) of each audit row, oldest first."""
    return [
        (row.action, row.actor.username, row.before.get("state"), row.after["state"])
        for row in ParetoBypassAudit.objects.filter(bypass=bypass)
    ]


def test_the_approvers_group_grants_the_permission_and_superusers_hold_it(
    member, approver, superuser
):
    group = Group.objects.get(name="Bypass approvers")
    assert list(group.permissions.values_list("codename", flat=True)) == ["approve_paretobypass"]
    assert Permission.objects.get(codename="approve_paretobypass").name == (
        "Can approve Pareto bypass"
    )
    assert [bypass_can_decide(user=user) for user in (member, approver, superuser)] == [
        False,
        True,
        True,
    ]
    approver.is_active = False
    assert not bypass_can_decide(user=approver)


def test_request_stores_the_full_sha_from_a_prefix_and_audits_it(seed_run, member):
    bypass, created = bypass_request(
        run=seed_run,
        sha=demo_runs.SEED_PR_SHA[:7].upper(),
        curve_key=SEED_KEY,
        rationale="  c1 is dominated  ",
        actor=member,
    )

    assert created
    assert (bypass.sha, bypass.curve_key, bypass.run, bypass.state) == (
        demo_runs.SEED_PR_SHA,
        SEED_KEY,
        seed_run,
        BypassState.REQUESTED,
    )
    assert (bypass.rationale, bypass.requested_by, bypass.decided_by) == (
        "c1 is dominated",
        member,
        None,
    )
    [audit] = ParetoBypassAudit.objects.filter(bypass=bypass)
    assert (audit.action, audit.actor, audit.reason, audit.before) == (
        "request",
        member,
        "c1 is dominated",
        {},
    )
    assert audit.after == {
        "state": "requested",
        "sha": demo_runs.SEED_PR_SHA,
        "curve_key": SEED_KEY,
        "run": {"id": demo_runs.SEED_PR_RUN_ID, "attempt": 1},
        "rationale": "c1 is dominated",
        "requested_by": "member",
        "decided_by": None,
        "decided_at": None,
        "decision_reason": "",
    }


def test_requesting_twice_returns_the_existing_bypass(requested, seed_run, approver):
    again, created = bypass_request(
        run=seed_run,
        sha=demo_runs.SEED_PR_SHA,
        curve_key=SEED_KEY,
        rationale="me too",
        actor=approver,
    )

    assert (again.pk, created, again.rationale) == (requested.pk, False, requested.rationale)
    assert ParetoBypassAudit.objects.filter(bypass=requested).count() == 1


def test_request_approve_revoke(requested, approver, superuser):
    approved = bypass_approve(bypass=requested, actor=approver, reason="maintainers agree")

    assert (approved.state, approved.decided_by, approved.decision_reason) == (
        BypassState.APPROVED,
        approver,
        "maintainers agree",
    )
    assert approved.decided_at is not None
    assert approved.verdict_annotation == (
        f"admin bypass recorded by approver at {approved.decided_at:%Y-%m-%d %H:%M} UTC "
        f"for {demo_runs.SEED_PR_SHA}"
    )

    revoked = bypass_revoke(bypass=approved, actor=superuser, reason="a point was added")

    assert (revoked.state, revoked.decided_by, revoked.verdict_annotation) == (
        BypassState.REVOKED,
        superuser,
        "",
    )
    assert audit_of(requested) == [
        ("request", "member", None, "requested"),
        ("approve", "approver", "requested", "approved"),
        ("revoke", "root", "approved", "revoked"),
    ]
    revoke_row = ParetoBypassAudit.objects.get(bypass=requested, action="revoke")
    assert revoke_row.before["decided_by"] == "approver"
    assert revoke_row.after["decision_reason"] == "a point was added"


def test_request_reject_then_request_again(requested, seed_run, approver, member):
    rejected = bypass_reject(bypass=requested, actor=approver, reason="add c512 instead")
    assert rejected.state == BypassState.REJECTED

    again, created = bypass_request(
        run=seed_run,
        sha=demo_runs.SEED_PR_SHA,
        curve_key=SEED_KEY,
        rationale="c512 OOMs",
        actor=member,
    )

    assert (again.pk, created, again.state, again.rationale) == (
        requested.pk,
        False,
        BypassState.REQUESTED,
        "c512 OOMs",
    )
    assert (again.decided_by, again.decided_at, again.decision_reason) == (None, None, "")
    assert audit_of(requested) == [
        ("request", "member", None, "requested"),
        ("reject", "approver", "requested", "rejected"),
        ("request", "member", "rejected", "requested"),
    ]
    # The earlier decision stays in the audit.
    last = ParetoBypassAudit.objects.filter(bypass=requested).last()
    assert last.before["decision_reason"] == "add c512 instead"


@pytest.mark.parametrize(
    ("state", "decide"),
    [
        (BypassState.APPROVED, bypass_approve),
        (BypassState.APPROVED, bypass_reject),
        (BypassState.REJECTED, bypass_approve),
        (BypassState.REJECTED, bypass_revoke),
        (BypassState.REQUESTED, bypass_revoke),
        (BypassState.REVOKED, bypass_approve),
        (BypassState.REVOKED, bypass_revoke),
    ],
)
def test_other_transitions_are_refused_without_an_audit_row(requested, approver, state, decide):
    ParetoBypass.objects.filter(pk=requested.pk).update(state=state)

    with pytest.raises(BypassTransitionError, match=f"is {state}"):
        decide(bypass=requested, actor=approver, reason="why not")

    requested.refresh_from_db()
    assert requested.state == state
    assert ParetoBypassAudit.objects.filter(bypass=requested).count() == 1


def test_only_approvers_decide_and_a_reason_is_required(requested, member, approver):
    with pytest.raises(PermissionDenied):
        bypass_approve(bypass=requested, actor=member, reason="I am sure")
    with pytest.raises(ValidationError) as error:
        bypass_approve(bypass=requested, actor=approver, reason="   ")
    assert error.value.message_dict == {"reason": ["This field may not be blank."]}
    requested.refresh_from_db()
    assert requested.state == BypassState.REQUESTED


@pytest.mark.parametrize(
    ("sha", "curve_key", "rationale", "field", "message"),
    [
        (demo_runs.SEED_PR_SHA[:6], SEED_KEY, "r", "sha", "7 to 40 hexadecimal"),
        ("zzzzzzz", SEED_KEY, "r", "sha", "7 to 40 hexadecimal"),
        ("5499d1cc", SEED_KEY, "r", "sha", "give the full 40-digit SHA"),
        (
            demo_runs.SEED_PR_SHA,
            "dsv4/agentic-coding/b200/vllm/fp4/p90_e2el",
            "r",
            "curve",
            "has no curve",
        ),
        (demo_runs.SEED_PR_SHA, SEED_KEY, " ", "rationale", "may not be blank"),
    ],
)
def test_request_validation(seed_run, member, sha, curve_key, rationale, field, message):
    with pytest.raises(ValidationError) as error:
        bypass_request(
            run=seed_run, sha=sha, curve_key=curve_key, rationale=rationale, actor=member
        )

    assert list(error.value.message_dict) == [field]
    assert message in error.value.message_dict[field][0]
    assert not ParetoBypass.objects.exists()


def test_a_passing_curve_needs_no_bypass(db, member):
    run = WorkflowRunFactory()
    measure(run, ConfigFactory(), [1, 2, 4, 8, 16])

    with pytest.raises(ValidationError, match="passes; it needs no bypass"):
        bypass_request(
            run=run,
            sha=run.head_sha,
            curve_key="dsr1/1k1k/b200/sglang/fp8/median_e2el",
            rationale="r",
            actor=member,
        )


def test_the_assessed_commit_may_be_the_pr_head_given_in_full(seed_run, member):
    """Seed thread: the sweep ran on 1ed4ab45, the reviewer assessed the PR head 5499d1cc."""
    pr_head = "5499d1cc4a5c428c9489493382ef4f493423f468"
    bypass, created = bypass_request(
        run=seed_run, sha=pr_head.upper(), curve_key=SEED_KEY, rationale="r", actor=member
    )
    assert created and bypass.sha == pr_head
