from datetime import UTC

from django.conf import settings
from django.core.validators import MinValueValidator, RegexValidator
from django.db import models
from django.db.models import Q

from runs.models import TimestampedModel


class GpuCost(models.Model):
    """Editable cost and power estimates of one GPU, for cost and energy charts."""

    hardware = models.CharField(
        max_length=100, unique=True, help_text="GPU key as in Config.hardware: h100, mi355x..."
    )
    watts_per_gpu = models.FloatField(
        validators=[MinValueValidator(1)],
        help_text="All-in watts per GPU: the GPU plus its share of host, network and cooling.",
    )
    dollars_per_gpu_hour = models.FloatField(
        validators=[MinValueValidator(0.01)], help_text="All-in rental cost per GPU-hour in USD."
    )
    notes = models.TextField(blank=True)
    modified = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["hardware"]
        verbose_name = "GPU cost"

    def __str__(self) -> str:
        return f"{self.hardware}: {self.watts_per_gpu:g} W, ${self.dollars_per_gpu_hour:g}/h"


class BypassState(models.TextChoices):
    REQUESTED = "requested"
    APPROVED = "approved"
    REJECTED = "rejected"
    REVOKED = "revoked"


FULL_SHA = RegexValidator(r"^[0-9a-f]{40}$", "40 lowercase hexadecimal characters.")


class ParetoBypass(TimestampedModel):
    """An admin bypass of a Pareto coverage WARN (REFERENCE §4): one curve on one commit.

    One row per (sha, curve_key); its state moves only through curves.services, each change
    with a ParetoBypassAudit row. A rejected or revoked bypass can be requested again: the same
    row goes back to requested, and the audit keeps the earlier decision.
    """

    sha = models.CharField(
        max_length=40, validators=[FULL_SHA], help_text="The assessed run's head commit SHA."
    )
    curve_key = models.CharField(max_length=500, help_text="As in the coverage API's curve key.")
    run = models.ForeignKey(
        "runs.WorkflowRun",
        # A purged run leaves its bypass and audit in place: the SHA and curve still say what
        # was bypassed, and the audit rows name the run.
        null=True,
        on_delete=models.SET_NULL,
        related_name="pareto_bypasses",
        help_text="The run attempt whose curve was assessed.",
    )
    state = models.CharField(
        max_length=20, choices=BypassState.choices, default=BypassState.REQUESTED
    )
    rationale = models.TextField(help_text="Why the curve should merge below the recommendation.")
    # PROTECT: who asked and who decided must outlive user clean-ups.
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.PROTECT, related_name="+"
    )
    decided_at = models.DateTimeField(null=True)
    decision_reason = models.TextField(blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["sha", "curve_key"], name="uniq_bypass_sha_curve"),
            models.CheckConstraint(
                condition=Q(sha__regex=r"^[0-9a-f]{40}$"), name="bypass_sha_full_lowercase"
            ),
            models.CheckConstraint(
                condition=Q(state__in=BypassState.values), name="bypass_state_known"
            ),
        ]
        ordering = ["-modified", "-pk"]
        permissions = [("approve_paretobypass", "Can approve Pareto bypass")]
        verbose_name = "Pareto bypass"
        verbose_name_plural = "Pareto bypasses"

    def __str__(self) -> str:
        return f"{self.curve_key} @ {self.sha[:8]} ({self.state})"

    @property
    def is_approved(self) -> bool:
        return self.state == BypassState.APPROVED

    @property
    def verdict_annotation(self) -> str:
        """What an approved bypass adds to the curve's WARN verdict ("" otherwise)."""
        if not self.is_approved:
            return ""
        decided_at = self.decided_at.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")
        return (
            f"admin bypass recorded by {self.decided_by.get_username()} at {decided_at} "
            f"for {self.sha}"
        )


class ParetoBypassAudit(models.Model):
    """One change of state of a bypass: who, what, when, why, before and after. Never edited."""

    class Action(models.TextChoices):
        REQUEST = "request"
        APPROVE = "approve"
        REJECT = "reject"
        REVOKE = "revoke"

    bypass = models.ForeignKey(ParetoBypass, on_delete=models.PROTECT, related_name="audit")
    action = models.CharField(max_length=20, choices=Action.choices)
    actor = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    at = models.DateTimeField(auto_now_add=True)
    reason = models.TextField(blank=True)
    before = models.JSONField(default=dict, blank=True, help_text="{} for a new bypass.")
    after = models.JSONField(default=dict)

    class Meta:
        ordering = ["at", "pk"]
        verbose_name = "Pareto bypass audit record"

    def __str__(self) -> str:
        return f"{self.action} of bypass {self.bypass_id} at {self.at:%Y-%m-%d %H:%M}"
