"""Writes of the curves app: the Pareto coverage bypasses (REFERENCE §4, PR check 14).

One atomic function per change of state, each locking the bypass row, checking the transition
and writing its ParetoBypassAudit row in the same transaction:

    (none) --request--> requested --approve--> approved --revoke--> revoked
                        requested --reject---> rejected
    rejected / revoked --request--> requested (the same row; the audit keeps the old decision)

Who may decide is answered in one place, bypass_can_decide.
"""

from django.core.exceptions import PermissionDenied, ValidationError
from django.db import IntegrityError, transaction
from django.utils import timezone

from curves.models import BypassState, ParetoBypass, ParetoBypassAudit
from curves.selectors import run_curves
from runs.models import WorkflowRun

APPROVE_PERMISSION = "curves.approve_paretobypass"
SHA_PREFIX_MIN_LENGTH = 7
_HEX_DIGITS = frozenset("0123456789abcdef")
# A rejected or revoked bypass may be asked for again; one pending or approved is returned as is.
_REQUESTABLE_AGAIN = (BypassState.REJECTED, BypassState.REVOKED)


class BypassTransitionError(Exception):
    """The bypass is not in a state this change starts from (the API answers 409)."""


def bypass_can_decide(*, user) -> bool:
    """Approvers: active users holding the approve permission (the "Bypass approvers" group
    grants it) and superusers."""
    return bool(user and user.is_authenticated and user.has_perm(APPROVE_PERMISSION))


def _snapshot(bypass: ParetoBypass) -> dict:
    run = bypass.run
    return {
        "state": bypass.state,
        "sha": bypass.sha,
        "curve_key": bypass.curve_key,
        "run": {"id": run.run_id, "attempt": run.run_attempt} if run else None,
        "rationale": bypass.rationale,
        "requested_by": bypass.requested_by.get_username(),
        "decided_by": bypass.decided_by.get_username() if bypass.decided_by else None,
        "decided_at": bypass.decided_at.isoformat() if bypass.decided_at else None,
        "decision_reason": bypass.decision_reason,
    }


def _audit(*, bypass: ParetoBypass, action: str, actor, reason: str, before: dict) -> None:
    ParetoBypassAudit.objects.create(
        bypass=bypass,
        action=action,
        actor=actor,
        reason=reason,
        before=before,
        after=_snapshot(bypass),
    )


def _text_required(text: str, *, field: str) -> str:
    text = (text or "").strip()
    if not text:
        raise ValidationError({field: ["This field may not be blank."]})
    return text


def _is_hex(text: str) -> bool:
    return set(text) <= _HEX_DIGITS


def _assessed_sha(*, run: WorkflowRun, sha: str) -> str:
    """The full SHA of the assessed commit.

    Reviewers assess the PR head, which may be a later commit than the one the sweep ran on (in
    the seed thread: run on 1ed4ab45, assessed 5499d1cc), so any full 40-digit SHA is taken as
    given; a shorter prefix (7+ digits) must be the run's own head SHA, which it stands for.
    """
    sha = sha.strip().lower()
    if not SHA_PREFIX_MIN_LENGTH <= len(sha) <= 40 or not _is_hex(sha):
        raise ValidationError({"sha": ["7 to 40 hexadecimal characters of a SHA."]})
    if len(sha) == 40:
        return sha
    head_sha = run.head_sha.lower()
    if len(head_sha) != 40 or not head_sha.startswith(sha):
        raise ValidationError(
            {
                "sha": [
                    f"{sha} is not a prefix of the head SHA of {run}; give the full 40-digit "
                    "SHA of the assessed commit."
                ]
            }
        )
    return head_sha


def _curve_needing_bypass(*, run: WorkflowRun, curve_key: str) -> None:
    curves = {curve.key: curve for curve in run_curves(run=run)}
    curve = curves.get(curve_key)
    if curve is None:
        known = ", ".join(curves) or "none"
        raise ValidationError(
            {
                "curve": [
                    f"run {run.run_id} attempt {run.run_attempt} has no curve {curve_key!r}; "
                    f"its curves: {known}"
                ]
            }
        )
    if curve.coverage.status == "PASS":
        raise ValidationError({"curve": [f"{curve_key} passes; it needs no bypass."]})


def _locked_bypasses():
    # of=self: PostgreSQL cannot lock the nullable side of the outer join to decided_by.
    return ParetoBypass.objects.select_for_update(of=("self",)).select_related(
        "run", "requested_by", "decided_by"
    )


@transaction.atomic
def bypass_request(
    *, run: WorkflowRun, sha: str, curve_key: str, rationale: str, actor
) -> tuple[ParetoBypass, bool]:
    """Ask for a bypass of one WARN curve of `run` on its head commit; (bypass, created).

    `sha` is the assessed commit: a full SHA, or a prefix of the run's head SHA; the full SHA
    is stored. Asking for one that
    is pending or approved returns it unchanged; a rejected or revoked one is requested again.
    ValidationError for a SHA that is not the run's, a curve the run lacks or that passes.
    """
    rationale = _text_required(rationale, field="rationale")
    full_sha = _assessed_sha(run=run, sha=sha)
    _curve_needing_bypass(run=run, curve_key=curve_key)
    lookup = {"sha": full_sha, "curve_key": curve_key}
    bypass = _locked_bypasses().filter(**lookup).first()
    if bypass is None:
        try:
            # A savepoint, so a concurrent first request is found below instead of failing.
            with transaction.atomic():
                bypass = ParetoBypass.objects.create(
                    **lookup, run=run, rationale=rationale, requested_by=actor
                )
        except IntegrityError:
            bypass = _locked_bypasses().get(**lookup)
        else:
            _audit(
                bypass=bypass,
                action=ParetoBypassAudit.Action.REQUEST,
                actor=actor,
                reason=rationale,
                before={},
            )
            return bypass, True
    if bypass.state not in _REQUESTABLE_AGAIN:
        return bypass, False
    before = _snapshot(bypass)
    bypass.state = BypassState.REQUESTED
    bypass.run, bypass.rationale, bypass.requested_by = run, rationale, actor
    bypass.decided_by, bypass.decided_at, bypass.decision_reason = None, None, ""
    bypass.save()
    _audit(
        bypass=bypass,
        action=ParetoBypassAudit.Action.REQUEST,
        actor=actor,
        reason=rationale,
        before=before,
    )
    return bypass, False


def _decide(
    *, bypass: ParetoBypass, actor, reason: str, action: str, source: str, target: str
) -> ParetoBypass:
    if not bypass_can_decide(user=actor):
        raise PermissionDenied("Only bypass approvers and superusers may decide on bypasses.")
    reason = _text_required(reason, field="reason")
    bypass = _locked_bypasses().get(pk=bypass.pk)
    if bypass.state != source:
        raise BypassTransitionError(
            f"bypass {bypass.pk} is {bypass.state}: only {source} bypasses can be {target}"
        )
    before = _snapshot(bypass)
    bypass.state = target
    bypass.decided_by, bypass.decided_at, bypass.decision_reason = actor, timezone.now(), reason
    bypass.save(update_fields=["state", "decided_by", "decided_at", "decision_reason", "modified"])
    _audit(bypass=bypass, action=action, actor=actor, reason=reason, before=before)
    return bypass


@transaction.atomic
def bypass_approve(*, bypass: ParetoBypass, actor, reason: str) -> ParetoBypass:
    """Record the admin bypass: requested -> approved."""
    return _decide(
        bypass=bypass,
        actor=actor,
        reason=reason,
        action=ParetoBypassAudit.Action.APPROVE,
        source=BypassState.REQUESTED,
        target=BypassState.APPROVED,
    )


@transaction.atomic
def bypass_reject(*, bypass: ParetoBypass, actor, reason: str) -> ParetoBypass:
    """requested -> rejected."""
    return _decide(
        bypass=bypass,
        actor=actor,
        reason=reason,
        action=ParetoBypassAudit.Action.REJECT,
        source=BypassState.REQUESTED,
        target=BypassState.REJECTED,
    )


@transaction.atomic
def bypass_revoke(*, bypass: ParetoBypass, actor, reason: str) -> ParetoBypass:
    """Withdraw a recorded bypass: approved -> revoked."""
    return _decide(
        bypass=bypass,
        actor=actor,
        reason=reason,
        action=ParetoBypassAudit.Action.REVOKE,
        source=BypassState.APPROVED,
        target=BypassState.REVOKED,
    )
