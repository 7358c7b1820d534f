from django import forms
from django.contrib import admin, messages
from django.template.response import TemplateResponse

from runs import services
from runs.jobs import ingest_job_request
from runs.models import (
    Artifact,
    Cell,
    ChangelogEntry,
    Config,
    EvalResult,
    EvalThreshold,
    Image,
    IngestJob,
    RunAuditEvent,
    RunStats,
    ServerLog,
    UnmappedValue,
    WebhookDelivery,
    WorkflowRun,
)


class ArtifactInline(admin.TabularInline):
    model = Artifact
    fields = ("name", "kind", "state", "error", "size_bytes", "expired")
    readonly_fields = fields
    extra = 0
    can_delete = False
    show_change_link = True


@admin.register(WorkflowRun)
class WorkflowRunAdmin(admin.ModelAdmin):
    list_display = (
        "run_id",
        "run_attempt",
        "repository",
        "is_official",
        "event",
        "head_branch",
        "short_sha",
        "conclusion",
        "gh_created_at",
    )
    list_filter = ("is_official", "event", "conclusion", "repository")
    search_fields = ("=run_id", "head_sha", "head_branch", "workflow_name")
    date_hierarchy = "gh_created_at"
    raw_id_fields = ("source_run",)
    readonly_fields = ("hidden_from_official", "hidden_reason", "conclusion_override")
    inlines = [ArtifactInline]
    actions = ["reingest", "hide", "unhide", "override_conclusion", "purge"]

    @admin.action(description="Re-ingest from GitHub")
    def reingest(self, request, queryset):
        for run in queryset:
            job, created = ingest_job_request(
                repository=run.repository,
                run_id=run.run_id,
                run_attempt=run.run_attempt,
                requested_by=f"admin {request.user.username}",
            )
            verb = "queued" if created else "already running"
            self.message_user(request, f"Run {run.run_id}: job {job.pk} {verb}.")

    @admin.action(description="Hide from the official curves")
    def hide(self, request, queryset):
        return self._with_reason(request, queryset, "hide", services.run_hide)

    @admin.action(description="Show again on the official curves")
    def unhide(self, request, queryset):
        return self._with_reason(request, queryset, "unhide", services.run_unhide)

    @admin.action(description="Override the conclusion")
    def override_conclusion(self, request, queryset):
        return self._with_reason(
            request, queryset, "override_conclusion", services.run_conclusion_override
        )

    @admin.action(description="Purge the run and everything that came from it")
    def purge(self, request, queryset):
        return self._with_reason(request, queryset, "purge", services.run_purge)

    def _with_reason(self, request, queryset, action: str, change):
        """Ask for a reason (and a conclusion to override with), then apply `change` per run."""
        form = RunChangeForm(request.POST if "apply" in request.POST else None, action=action)
        if form.is_valid():
            extra = {}
            if action == "override_conclusion":
                extra["conclusion"] = form.cleaned_data["conclusion"]
            for run in queryset:
                change(run=run, actor=request.user, reason=form.cleaned_data["reason"], **extra)
            self.message_user(
                request, f"{action.replace('_', ' ')}: {queryset.count()} run(s).", messages.SUCCESS
            )
            return None
        return TemplateResponse(
            request,
            "admin/runs/run_change_reason.html",
            {
                **self.admin_site.each_context(request),
                "title": f"{action.replace('_', ' ').capitalize()}: give a reason",
                "form": form,
                "runs": queryset,
                "action": action,
                "opts": self.model._meta,
            },
        )


class RunChangeForm(forms.Form):
    reason = forms.CharField(widget=forms.Textarea(attrs={"rows": 3}), strip=True)
    conclusion = forms.CharField(
        required=False, max_length=30, help_text="Empty: back to GitHub's conclusion."
    )

    def __init__(self, *args, action: str, **kwargs):
        super().__init__(*args, **kwargs)
        if action != "override_conclusion":
            del self.fields["conclusion"]


@admin.register(Artifact)
class ArtifactAdmin(admin.ModelAdmin):
    list_display = ("name", "run", "kind", "state", "size_bytes", "expired", "processed_at")
    list_filter = ("state", "kind", "expired")
    search_fields = ("name", "=run__run_id", "error")
    raw_id_fields = ("run",)


@admin.register(Image)
class ImageAdmin(admin.ModelAdmin):
    list_display = ("reference", "registry", "repository", "tag")
    list_filter = ("registry",)
    search_fields = ("reference",)


@admin.register(Config)
class ConfigAdmin(admin.ModelAdmin):
    list_display = (
        "model_prefix",
        "hardware",
        "framework",
        "precision",
        "spec_method",
        "topology_label",
        "disagg",
        "multinode",
        "runner_label",
    )
    list_filter = ("model_prefix", "hardware", "framework", "precision", "disagg", "multinode")
    search_fields = ("model_prefix", "model", "hardware", "framework", "runner_label")


@admin.register(Cell)
class CellAdmin(admin.ModelAdmin):
    list_display = (
        "run",
        "config",
        "scenario",
        "concurrency",
        "status",
        "tput_per_gpu",
        "median_e2el",
        "p90_e2el",
        "image",
    )
    list_filter = ("status", "scenario", "config__model_prefix", "config__hardware")
    search_fields = ("=run__run_id", "result_name", "failure_reason")
    list_select_related = ("run", "config", "image")
    raw_id_fields = ("run", "config", "image", "artifact")


@admin.register(EvalResult)
class EvalResultAdmin(admin.ModelAdmin):
    list_display = ("run", "config", "task", "concurrency", "em_strict", "em_flexible", "n_eff")
    list_filter = ("task", "config__model_prefix", "config__hardware")
    search_fields = ("=run__run_id", "source")
    list_select_related = ("run", "config")
    raw_id_fields = ("run", "config", "image", "artifact")


@admin.register(RunStats)
class RunStatsAdmin(admin.ModelAdmin):
    list_display = ("run", "hardware", "runner_label", "n_success", "total")
    list_filter = ("hardware",)
    search_fields = ("=run__run_id",)
    raw_id_fields = ("run",)


@admin.register(ChangelogEntry)
class ChangelogEntryAdmin(admin.ModelAdmin):
    list_display = ("run", "position", "__str__", "pr_link", "evals_only", "append_only")
    list_filter = ("evals_only", "append_only")
    search_fields = ("=run__run_id", "pr_link")
    raw_id_fields = ("run",)


@admin.register(ServerLog)
class ServerLogAdmin(admin.ModelAdmin):
    list_display = ("result_name", "path", "size_bytes", "run")
    search_fields = ("result_name", "=run__run_id")
    raw_id_fields = ("run", "artifact")


@admin.register(UnmappedValue)
class UnmappedValueAdmin(admin.ModelAdmin):
    list_display = ("kind", "value", "run", "artifact", "where")
    list_filter = ("kind",)
    search_fields = ("value", "where")
    raw_id_fields = ("run", "artifact")


@admin.register(IngestJob)
class IngestJobAdmin(admin.ModelAdmin):
    list_display = (
        "pk",
        "repository",
        "github_run_id",
        "run_attempt",
        "state",
        "artifacts_done",
        "artifacts_total",
        "requested_by",
        "created",
        "finished_at",
    )
    list_filter = ("state",)
    search_fields = ("=github_run_id", "requested_by", "error")
    raw_id_fields = ("run",)


@admin.register(WebhookDelivery)
class WebhookDeliveryAdmin(admin.ModelAdmin):
    list_display = ("delivery_id", "event", "action", "job", "created")
    search_fields = ("delivery_id",)
    raw_id_fields = ("job",)


@admin.register(RunAuditEvent)
class RunAuditEventAdmin(admin.ModelAdmin):
    """Read-only: audit rows are written by the services and never edited."""

    list_display = ("at", "action", "repository", "run_id", "run_attempt", "actor_name", "reason")
    list_filter = ("action",)
    search_fields = ("=run_id", "actor_name", "reason")

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


@admin.register(EvalThreshold)
class EvalThresholdAdmin(admin.ModelAdmin):
    list_display = ("task", "model_prefix", "threshold")
    list_filter = ("task",)
    search_fields = ("task", "model_prefix")
