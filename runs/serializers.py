"""Output (and the one input) shapes of the REST API. Component names avoid the curves API's
(Run, SourceRun, Error ...), since both live in one OpenAPI schema."""

import math

from django.conf import settings
from django.core.validators import RegexValidator
from django.db import models
from django.urls import reverse
from rest_framework import serializers

from runs import selectors
from runs.models import (
    Artifact,
    Cell,
    ChangelogEntry,
    Config,
    EvalResult,
    Image,
    IngestJob,
    RunStats,
    WorkflowRun,
)

MAX_ATTEMPT = 2**31 - 1  # attempts are stored in a 32-bit column


def api_url(serializer: serializers.Serializer, *, name: str, query: str = "", **kwargs) -> str:
    """An absolute URL when the request is known, else a path."""
    path = reverse(f"runs_api:{name}", kwargs=kwargs) + (f"?{query}" if query else "")
    request = serializer.context.get("request")
    return request.build_absolute_uri(path) if request is not None else path


class FiniteFloatField(serializers.FloatField):
    """NaN and infinities have no JSON spelling; they read as null."""

    def to_representation(self, value) -> float | None:
        number = super().to_representation(value)
        return number if math.isfinite(number) else None


class ApiModelSerializer(serializers.ModelSerializer):
    serializer_field_mapping = {
        **serializers.ModelSerializer.serializer_field_mapping,
        models.FloatField: FiniteFloatField,
    }


# ---- errors ----------------------------------------------------------------------------------


class ApiErrorBodySerializer(serializers.Serializer):
    status = serializers.IntegerField(help_text="The HTTP status again.")
    code = serializers.CharField(help_text="not_found, invalid, not_authenticated, throttled ...")
    detail = serializers.CharField()
    fields = serializers.DictField(
        required=False, help_text="Validation errors only: parameter or field -> messages."
    )


class ApiErrorSerializer(serializers.Serializer):
    error = ApiErrorBodySerializer()


# ---- runs ------------------------------------------------------------------------------------


class RunRefSerializer(ApiModelSerializer):
    class Meta:
        model = WorkflowRun
        fields = ["run_id", "run_attempt"]


class WorkflowRunSerializer(ApiModelSerializer):
    url = serializers.SerializerMethodField(help_text="This attempt in the API.")
    pr_numbers = serializers.ListField(child=serializers.IntegerField(), read_only=True)
    conclusion = serializers.CharField(
        source="effective_conclusion", help_text="GitHub's conclusion unless an admin overrode it."
    )
    github_conclusion = serializers.CharField(source="conclusion")
    created_at = serializers.DateTimeField(source="gh_created_at", allow_null=True)
    started_at = serializers.DateTimeField(source="gh_started_at", allow_null=True)
    updated_at = serializers.DateTimeField(source="gh_updated_at", allow_null=True)
    source_run = RunRefSerializer(
        allow_null=True, help_text="For a merge that reused a PR run: where its data comes from."
    )

    class Meta:
        model = WorkflowRun
        fields = [
            "run_id",
            "run_attempt",
            "url",
            "repository",
            "workflow_name",
            "workflow_path",
            "event",
            "head_sha",
            "head_branch",
            "pr_numbers",
            "status",
            "conclusion",
            "github_conclusion",
            "html_url",
            "created_at",
            "started_at",
            "updated_at",
            "is_official",
            "hidden_from_official",
            "hidden_reason",
            "source_run",
        ]

    def get_url(self, run: WorkflowRun) -> str:
        return api_url(
            self, name="run-detail", run_id=run.run_id, query=f"attempt={run.run_attempt}"
        )


class RunArtifactSerializer(ApiModelSerializer):
    class Meta:
        model = Artifact
        fields = ["name", "kind", "state", "error", "size_bytes", "expired", "processed_at"]


class RunAttemptSerializer(WorkflowRunSerializer):
    cell_count = serializers.IntegerField()
    failed_cell_count = serializers.IntegerField()
    eval_count = serializers.IntegerField()
    artifacts = RunArtifactSerializer(many=True)

    class Meta(WorkflowRunSerializer.Meta):
        fields = [
            *WorkflowRunSerializer.Meta.fields,
            "cell_count",
            "failed_cell_count",
            "eval_count",
            "artifacts",
        ]


class RunDetailSerializer(serializers.Serializer):
    run_id = serializers.IntegerField()
    attempts = RunAttemptSerializer(many=True, help_text="Oldest first; the last is the latest.")


class RunDetailQuerySerializer(serializers.Serializer):
    attempt = serializers.IntegerField(
        required=False, min_value=1, max_value=MAX_ATTEMPT, help_text="Only this attempt."
    )


# ---- what was measured -----------------------------------------------------------------------


class ConfigSummarySerializer(ApiModelSerializer):
    topology = serializers.CharField(source="topology_label", help_text="TP8 EP8 DPA, P:.. D:..")
    gpu_count = serializers.IntegerField(allow_null=True)

    class Meta:
        model = Config
        fields = [
            "id",
            "model_prefix",
            "model",
            "hardware",
            "framework",
            "precision",
            "spec_method",
            "disagg",
            "multinode",
            "topology",
            "gpu_count",
        ]


class ConfigSerializer(ConfigSummarySerializer):
    class Meta:
        model = Config
        exclude = ["identity_hash", "created", "modified"]


class ImageSerializer(ApiModelSerializer):
    class Meta:
        model = Image
        fields = ["id", "reference", "registry", "repository", "tag", "digest"]


class RunScopedSerializer(ApiModelSerializer):
    """A row of one run attempt, named by GitHub run id and attempt."""

    run_id = serializers.IntegerField(source="run.run_id", help_text="GitHub run id.")
    run_attempt = serializers.IntegerField(source="run.run_attempt")


class CellSerializer(RunScopedSerializer):
    config = ConfigSummarySerializer()
    image = serializers.CharField(source="image.reference", allow_null=True)
    extra_metrics = serializers.DictField(read_only=True)
    invalid_metrics = serializers.DictField(
        child=serializers.CharField(), read_only=True, help_text="metric -> why it was rejected"
    )

    class Meta:
        model = Cell
        exclude = ["run", "artifact", "created", "modified"]


class EvalResultSerializer(RunScopedSerializer):
    """An eval score with the threshold that applies and whether it passes (needs the loaded
    thresholds in context["eval_thresholds"])."""

    config = ConfigSummarySerializer()
    image = serializers.CharField(source="image.reference", allow_null=True)
    threshold = serializers.SerializerMethodField(
        help_text="The model's threshold for the task, else the task default, else 0.85."
    )
    passed = serializers.SerializerMethodField(
        help_text="Every exact-match score (strict and flexible) reaches the threshold."
    )

    class Meta:
        model = EvalResult
        exclude = ["run", "artifact", "created", "modified"]

    def get_threshold(self, result: EvalResult) -> float:
        return selectors.eval_threshold_for(
            model_prefix=result.config.model_prefix,
            task=result.task,
            thresholds=self.context["eval_thresholds"],
        )

    def get_passed(self, result: EvalResult) -> bool:
        return selectors.eval_passes(
            em_strict=result.em_strict,
            em_flexible=result.em_flexible,
            threshold=self.get_threshold(result),
        )


class RunStatsSerializer(RunScopedSerializer):
    class Meta:
        model = RunStats
        fields = ["run_id", "run_attempt", "runner_label", "hardware", "n_success", "total"]


class ChangelogEntrySerializer(RunScopedSerializer):
    config_keys = serializers.ListField(child=serializers.CharField(), read_only=True)
    description = serializers.ListField(child=serializers.CharField(), read_only=True)
    scenario_types = serializers.ListField(child=serializers.CharField(), read_only=True)

    class Meta:
        model = ChangelogEntry
        exclude = ["id", "run", "created", "modified"]


# ---- ingest jobs -----------------------------------------------------------------------------


class IngestJobSkippedSerializer(serializers.Serializer):
    name = serializers.CharField()
    reason = serializers.CharField()


class IngestJobSerializer(ApiModelSerializer):
    url = serializers.SerializerMethodField(help_text="Poll this until `active` is false.")
    run_id = serializers.IntegerField(source="github_run_id", help_text="GitHub run id.")
    run = RunRefSerializer(allow_null=True, help_text="The stored run attempt, once fetched.")
    active = serializers.BooleanField(source="is_active", help_text="queued or running")
    progress_percent = serializers.IntegerField()
    duration_seconds = FiniteFloatField(allow_null=True)
    counts = serializers.DictField(
        child=serializers.IntegerField(), read_only=True, help_text="rows written, per kind"
    )
    skipped = IngestJobSkippedSerializer(many=True, read_only=True)

    class Meta:
        model = IngestJob
        fields = [
            "id",
            "url",
            "repository",
            "run_id",
            "run_attempt",
            "run",
            "state",
            "active",
            "progress_percent",
            "artifacts_done",
            "artifacts_total",
            "counts",
            "skipped",
            "error",
            "attempts",
            "requested_by",
            "created",
            "started_at",
            "finished_at",
            "duration_seconds",
        ]

    def get_url(self, job: IngestJob) -> str:
        return api_url(self, name="job-detail", pk=job.pk)


def default_repository() -> str:
    return settings.GITHUB_REPOSITORY


class IngestRequestSerializer(serializers.Serializer):
    repo = serializers.CharField(
        required=False,
        default=default_repository,
        max_length=200,
        validators=[
            RegexValidator(r"^[A-Za-z0-9-]{1,39}/[A-Za-z0-9._-]{1,100}$", "Expected owner/name.")
        ],
        help_text="owner/name; GITHUB_REPOSITORY when omitted.",
    )
    attempt = serializers.IntegerField(
        required=False,
        allow_null=True,
        default=None,
        min_value=1,
        max_value=MAX_ATTEMPT,
        help_text="Run attempt; the latest when omitted.",
    )
