"""The runs store: workflow runs, their artifacts, and what was measured in them.

Every table has a natural key as a unique constraint, so writing the same thing twice never
duplicates it; the ingestion services upsert on those keys.
"""

import hashlib
import json
from collections import Counter
from dataclasses import asdict

from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models import Q

from runs.parsing.records import ArtifactKind, ConfigIdentity, UnmappedKind


class TimestampedModel(models.Model):
    created = models.DateTimeField(auto_now_add=True)
    modified = models.DateTimeField(auto_now=True)

    class Meta:
        abstract = True


class WorkflowRun(TimestampedModel):
    """One attempt of a GitHub Actions workflow run of the benchmark repository."""

    repository = models.CharField(max_length=200, help_text="owner/name")
    run_id = models.BigIntegerField(db_index=True)
    run_attempt = models.PositiveIntegerField(default=1)
    workflow_name = models.CharField(max_length=200, blank=True)
    workflow_path = models.CharField(max_length=300, blank=True)
    event = models.CharField(max_length=50, blank=True)
    head_sha = models.CharField(max_length=40, blank=True, db_index=True)
    head_branch = models.CharField(max_length=255, blank=True)
    pr_numbers = models.JSONField(default=list, blank=True)
    status = models.CharField(max_length=30, blank=True)
    conclusion = models.CharField(max_length=30, blank=True)
    html_url = models.URLField(max_length=500, blank=True)
    gh_created_at = models.DateTimeField(null=True, blank=True)
    gh_started_at = models.DateTimeField(null=True, blank=True)
    gh_updated_at = models.DateTimeField(null=True, blank=True)
    is_official = models.BooleanField(default=False, db_index=True)
    hidden_from_official = models.BooleanField(
        default=False, help_text="An admin took this run off the official curves."
    )
    hidden_reason = models.TextField(blank=True)
    conclusion_override = models.CharField(
        max_length=30, blank=True, help_text="Set by an admin; wins over GitHub's conclusion."
    )
    reused_run_id = models.BigIntegerField(
        null=True, blank=True, help_text="The PR run whose measurements this merge run reused."
    )
    reused_run_attempt = models.PositiveIntegerField(null=True, blank=True)
    source_run = models.ForeignKey(
        "self",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="reused_by",
        help_text="For a merge that reused a PR run: the run its measurements come from.",
    )

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["repository", "run_id", "run_attempt"], name="uniq_run_attempt"
            )
        ]
        indexes = [models.Index(fields=["is_official", "-gh_created_at"])]
        ordering = ["-gh_created_at", "-run_id", "-run_attempt"]

    def __str__(self) -> str:
        return f"{self.repository} run {self.run_id} attempt {self.run_attempt}"

    @property
    def short_sha(self) -> str:
        return self.head_sha[:8]

    @property
    def effective_conclusion(self) -> str:
        return self.conclusion_override or self.conclusion


class ArtifactState(models.TextChoices):
    PENDING = "pending"
    DOWNLOADED = "downloaded"
    PARSED = "parsed"
    INGESTED = "ingested"
    FAILED = "failed"
    SKIPPED = "skipped"


# An artifact in one of these states, with the same content, needs no new work.
ARTIFACT_DONE_STATES = (ArtifactState.INGESTED, ArtifactState.SKIPPED)


class Artifact(TimestampedModel):
    """One uploaded artifact; its state makes each artifact processed once."""

    run = models.ForeignKey(WorkflowRun, on_delete=models.CASCADE, related_name="artifacts")
    github_id = models.BigIntegerField(
        null=True, blank=True, help_text="Null for artifacts ingested from local files."
    )
    name = models.CharField(max_length=500)
    kind = models.CharField(max_length=30, choices=[(k.value, k.name) for k in ArtifactKind])
    size_bytes = models.BigIntegerField(null=True, blank=True)
    digest = models.CharField(max_length=100, blank=True)
    gh_created_at = models.DateTimeField(null=True, blank=True)
    expires_at = models.DateTimeField(null=True, blank=True)
    expired = models.BooleanField(default=False)
    state = models.CharField(
        max_length=20, choices=ArtifactState.choices, default=ArtifactState.PENDING, db_index=True
    )
    error = models.TextField(blank=True, help_text="why it failed, or why it was skipped")
    row_errors = models.JSONField(
        default=list, blank=True, help_text="rows of an aggregate left out, with the reason"
    )
    processed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["run", "github_id"],
                condition=Q(github_id__isnull=False),
                name="uniq_artifact_github_id",
            ),
            models.UniqueConstraint(
                fields=["run", "name"],
                condition=Q(github_id__isnull=True),
                name="uniq_local_artifact_name",
            ),
        ]
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class Image(TimestampedModel):
    """A docker image reference, split into its parts."""

    reference = models.CharField(max_length=500, unique=True)
    registry = models.CharField(max_length=200, blank=True)
    repository = models.CharField(max_length=300)
    tag = models.CharField(max_length=200, blank=True)
    digest = models.CharField(max_length=100, blank=True)

    class Meta:
        ordering = ["reference"]

    def __str__(self) -> str:
        return self.reference


def config_identity_hash(identity: ConfigIdentity) -> str:
    """A stable digest of the identity fields: the Config natural key.

    The runner label is left out: one setup runs on many runners (`mi355x-amds_0`, `_1`), and
    eval rows report it upper-cased, yet cells and evals of one setup must share a Config.
    """
    fields = asdict(identity)
    del fields["runner_label"]
    payload = json.dumps(fields, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(payload.encode()).hexdigest()


class Config(TimestampedModel):
    """The identity of a served setup: model, GPU, engine, precision and topology."""

    identity_hash = models.CharField(max_length=64, unique=True, editable=False)
    model_prefix = models.CharField(max_length=100, db_index=True)
    model = models.CharField(max_length=300, blank=True)
    hardware = models.CharField(max_length=100, db_index=True)
    runner_label = models.CharField(
        max_length=200, blank=True, help_text="raw runner label as first seen"
    )
    framework = models.CharField(max_length=100, db_index=True)
    precision = models.CharField(max_length=50, db_index=True)
    spec_method = models.CharField(max_length=50, default="none")
    disagg = models.BooleanField(default=False)
    multinode = models.BooleanField(default=False)
    tp = models.PositiveIntegerField(null=True, blank=True)
    pp = models.PositiveIntegerField(null=True, blank=True)
    ep = models.PositiveIntegerField(null=True, blank=True)
    dcp = models.PositiveIntegerField(null=True, blank=True)
    pcp = models.PositiveIntegerField(null=True, blank=True)
    dp_attention = models.BooleanField(null=True, blank=True)
    prefill_tp = models.PositiveIntegerField(null=True, blank=True)
    prefill_ep = models.PositiveIntegerField(null=True, blank=True)
    prefill_dp_attention = models.BooleanField(null=True, blank=True)
    prefill_workers = models.PositiveIntegerField(null=True, blank=True)
    prefill_gpus = models.PositiveIntegerField(null=True, blank=True)
    decode_tp = models.PositiveIntegerField(null=True, blank=True)
    decode_ep = models.PositiveIntegerField(null=True, blank=True)
    decode_dp_attention = models.BooleanField(null=True, blank=True)
    decode_workers = models.PositiveIntegerField(null=True, blank=True)
    decode_gpus = models.PositiveIntegerField(null=True, blank=True)
    kv_offload = models.CharField(max_length=50, blank=True)
    kv_offload_backend = models.CharField(max_length=100, blank=True)

    class Meta:
        ordering = ["model_prefix", "hardware", "framework", "precision"]

    def __str__(self) -> str:
        name = f"{self.model_prefix}-{self.precision}-{self.hardware}-{self.framework}"
        return f"{name} {self.topology_label}"

    @classmethod
    def identity_fields(cls) -> list[str]:
        return list(ConfigIdentity.__dataclass_fields__)

    def to_identity(self) -> ConfigIdentity:
        return ConfigIdentity(**{name: getattr(self, name) for name in self.identity_fields()})

    @property
    def gpu_count(self) -> int | None:
        if self.prefill_gpus or self.decode_gpus:
            return (self.prefill_gpus or 0) + (self.decode_gpus or 0)
        if self.tp:
            return self.tp * (self.pp or 1)
        return None

    @property
    def topology_label(self) -> str:
        """Parallelism in the form chart labels use: TP8, EP8, DPA, or prefill/decode for disagg."""

        def side(tp, ep, dpa, workers=None) -> str:
            parts = [f"TP{tp}"] if tp else []
            if ep and ep > 1:
                parts.append(f"EP{ep}")
            if dpa:
                parts.append("DPA")
            text = " ".join(parts)
            return f"{workers}x{text}" if workers and workers > 1 else text

        if self.disagg and (self.prefill_tp or self.decode_tp):
            prefill = side(
                self.prefill_tp, self.prefill_ep, self.prefill_dp_attention, self.prefill_workers
            )
            decode = side(
                self.decode_tp, self.decode_ep, self.decode_dp_attention, self.decode_workers
            )
            return f"P:{prefill} D:{decode}"
        return side(self.tp, self.ep, self.dp_attention)


class CellStatus(models.TextChoices):
    OK = "ok"
    FAILED = "failed"


class Cell(TimestampedModel):
    """One measured point of a run: a config at one scenario and concurrency."""

    run = models.ForeignKey(WorkflowRun, on_delete=models.CASCADE, related_name="cells")
    config = models.ForeignKey(Config, on_delete=models.PROTECT, related_name="cells")
    image = models.ForeignKey(
        Image, null=True, blank=True, on_delete=models.PROTECT, related_name="cells"
    )
    artifact = models.ForeignKey(
        Artifact, null=True, blank=True, on_delete=models.SET_NULL, related_name="cells"
    )
    result_name = models.CharField(max_length=500, blank=True, db_index=True)
    scenario = models.CharField(max_length=50, db_index=True)
    isl = models.PositiveIntegerField(null=True, blank=True)
    osl = models.PositiveIntegerField(null=True, blank=True)
    concurrency = models.PositiveIntegerField()
    recipe_fingerprint = models.CharField(max_length=64, blank=True)
    status = models.CharField(max_length=10, choices=CellStatus.choices, default=CellStatus.OK)
    failure_reason = models.TextField(blank=True)

    tput_per_gpu = models.FloatField(null=True, blank=True, db_index=True)
    output_tput_per_gpu = models.FloatField(null=True, blank=True)
    input_tput_per_gpu = models.FloatField(null=True, blank=True)
    median_ttft = models.FloatField(null=True, blank=True)
    p90_ttft = models.FloatField(null=True, blank=True)
    p99_ttft = models.FloatField(null=True, blank=True)
    median_tpot = models.FloatField(null=True, blank=True)
    p90_tpot = models.FloatField(null=True, blank=True)
    p99_tpot = models.FloatField(null=True, blank=True)
    median_itl = models.FloatField(null=True, blank=True)
    p90_itl = models.FloatField(null=True, blank=True)
    p99_itl = models.FloatField(null=True, blank=True)
    median_e2el = models.FloatField(null=True, blank=True)
    p90_e2el = models.FloatField(null=True, blank=True)
    p99_e2el = models.FloatField(null=True, blank=True)
    median_intvty = models.FloatField(null=True, blank=True)
    p90_intvty = models.FloatField(null=True, blank=True)
    p99_intvty = models.FloatField(null=True, blank=True)
    prefix_cache_hit_rate = models.FloatField(null=True, blank=True)
    num_requests_total = models.PositiveIntegerField(null=True, blank=True)
    num_requests_successful = models.PositiveIntegerField(null=True, blank=True)
    num_requests_errored = models.PositiveIntegerField(null=True, blank=True)
    extra_metrics = models.JSONField(default=dict, blank=True)
    invalid_metrics = models.JSONField(
        default=dict, blank=True, help_text="metric -> why the reported value was rejected"
    )

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["run", "config", "scenario", "concurrency", "recipe_fingerprint"],
                name="uniq_cell",
            )
        ]
        indexes = [models.Index(fields=["run", "scenario"])]
        ordering = ["scenario", "config_id", "concurrency"]

    def __str__(self) -> str:
        return f"{self.config} {self.scenario} c{self.concurrency}"


class EvalResult(TimestampedModel):
    """An lm-eval score of one config in one run."""

    run = models.ForeignKey(WorkflowRun, on_delete=models.CASCADE, related_name="evals")
    config = models.ForeignKey(Config, on_delete=models.PROTECT, related_name="evals")
    image = models.ForeignKey(
        Image, null=True, blank=True, on_delete=models.PROTECT, related_name="evals"
    )
    artifact = models.ForeignKey(
        Artifact, null=True, blank=True, on_delete=models.SET_NULL, related_name="evals"
    )
    task = models.CharField(max_length=100, db_index=True)
    n_shot = models.PositiveIntegerField(null=True, blank=True)
    concurrency = models.PositiveIntegerField(null=True, blank=True)
    scenario = models.CharField(max_length=50, blank=True)
    isl = models.PositiveIntegerField(null=True, blank=True)
    osl = models.PositiveIntegerField(null=True, blank=True)
    em_strict = models.FloatField(null=True, blank=True)
    em_strict_se = models.FloatField(null=True, blank=True)
    em_flexible = models.FloatField(null=True, blank=True)
    em_flexible_se = models.FloatField(null=True, blank=True)
    n_eff = models.PositiveIntegerField(null=True, blank=True)
    score = models.FloatField(null=True, blank=True)
    score_name = models.CharField(max_length=100, blank=True)
    score_se = models.FloatField(null=True, blank=True)
    lm_eval_version = models.CharField(max_length=50, blank=True)
    source = models.CharField(max_length=1000, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["run", "config", "task", "scenario", "concurrency"],
                name="uniq_eval",
            )
        ]
        ordering = ["task", "config_id", "concurrency"]

    def __str__(self) -> str:
        return f"{self.task} {self.config} c{self.concurrency}"


class RunStats(TimestampedModel):
    """Reliability per hardware: how many cells of a run succeeded."""

    run = models.ForeignKey(WorkflowRun, on_delete=models.CASCADE, related_name="stats")
    runner_label = models.CharField(max_length=200)
    hardware = models.CharField(max_length=100)
    n_success = models.PositiveIntegerField()
    total = models.PositiveIntegerField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["run", "runner_label"], name="uniq_run_stats")
        ]
        verbose_name_plural = "run stats"

    def __str__(self) -> str:
        return f"{self.hardware}: {self.n_success}/{self.total}"


class ChangelogEntry(TimestampedModel):
    """One entry of a run's changelog-metadata: what the run was for."""

    run = models.ForeignKey(WorkflowRun, on_delete=models.CASCADE, related_name="changelog")
    position = models.PositiveIntegerField()
    config_keys = models.JSONField(default=list)
    description = models.JSONField(default=list)
    pr_link = models.CharField(max_length=500, blank=True)
    evals_only = models.BooleanField(default=False)
    all_evals = models.BooleanField(default=False)
    append_only = models.BooleanField(default=False)
    scenario_types = models.JSONField(default=list)
    base_ref = models.CharField(max_length=255, blank=True)
    head_ref = models.CharField(max_length=255, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["run", "position"], name="uniq_changelog_position")
        ]
        ordering = ["run_id", "position"]
        verbose_name_plural = "changelog entries"

    def __str__(self) -> str:
        return ", ".join(self.config_keys)


class ServerLog(TimestampedModel):
    """A server log file kept from a server_logs_<RF> artifact; linked to cells by RF."""

    run = models.ForeignKey(WorkflowRun, on_delete=models.CASCADE, related_name="server_logs")
    artifact = models.ForeignKey(Artifact, on_delete=models.CASCADE, related_name="server_logs")
    result_name = models.CharField(max_length=500, db_index=True)
    path = models.CharField(max_length=500)
    size_bytes = models.PositiveIntegerField()
    text = models.TextField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["artifact", "path"], name="uniq_server_log_path")
        ]

    def __str__(self) -> str:
        return f"{self.result_name}/{self.path}"


class UnmappedValue(TimestampedModel):
    """A model, hardware, framework, precision or spec name no normaliser table knows."""

    kind = models.CharField(max_length=20, choices=[(k.value, k.name) for k in UnmappedKind])
    value = models.CharField(max_length=300)
    run = models.ForeignKey(WorkflowRun, on_delete=models.CASCADE, related_name="unmapped_values")
    artifact = models.ForeignKey(
        Artifact, null=True, blank=True, on_delete=models.SET_NULL, related_name="unmapped_values"
    )
    where = models.CharField(max_length=1000, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["kind", "value", "run"], name="uniq_unmapped_per_run")
        ]
        ordering = ["kind", "value"]

    def __str__(self) -> str:
        return f"{self.kind}: {self.value}"


class IngestJobState(models.TextChoices):
    QUEUED = "queued"
    RUNNING = "running"
    SUCCEEDED = "succeeded"
    PARTIAL = "partial"  # some artifacts failed
    FAILED = "failed"


ACTIVE_JOB_STATES = (IngestJobState.QUEUED, IngestJobState.RUNNING)


class IngestJob(TimestampedModel):
    """One request to ingest a run attempt from GitHub, with its progress and outcome."""

    repository = models.CharField(max_length=200)
    github_run_id = models.BigIntegerField(db_index=True)
    run_attempt = models.PositiveIntegerField(
        null=True, blank=True, help_text="Empty: the latest attempt."
    )
    run = models.ForeignKey(
        WorkflowRun, null=True, blank=True, on_delete=models.SET_NULL, related_name="ingest_jobs"
    )
    state = models.CharField(
        max_length=20, choices=IngestJobState.choices, default=IngestJobState.QUEUED
    )
    requested_by = models.CharField(max_length=200, help_text="who or what asked for it")
    artifacts_total = models.PositiveIntegerField(default=0)
    artifacts_done = models.PositiveIntegerField(default=0)
    counts = models.JSONField(default=dict, blank=True)
    skipped = models.JSONField(default=list, blank=True, help_text="[{name, reason}]")
    error = models.TextField(blank=True)
    timings = models.JSONField(
        default=dict, blank=True, help_text="seconds spent listing, downloading and storing"
    )
    attempts = models.PositiveIntegerField(default=0, help_text="times a worker started it")
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            # The lock: at most one queued or running job per run.
            models.UniqueConstraint(
                fields=["repository", "github_run_id"],
                condition=Q(state__in=ACTIVE_JOB_STATES),
                name="one_active_ingest_job_per_run",
            )
        ]
        ordering = ["-created"]

    def __str__(self) -> str:
        return f"job {self.pk}: {self.repository} run {self.github_run_id} ({self.state})"

    @property
    def is_active(self) -> bool:
        return self.state in ACTIVE_JOB_STATES

    @property
    def progress_percent(self) -> int:
        if not self.artifacts_total:
            return 0
        return round(100 * self.artifacts_done / self.artifacts_total)

    @property
    def duration_seconds(self) -> float | None:
        if self.started_at and self.finished_at:
            return (self.finished_at - self.started_at).total_seconds()
        return None

    @property
    def skipped_reasons(self) -> list[tuple[str, int]]:
        """(reason, how many artifacts) over the skipped ones, the most common first: a sweep
        skips a thousand uploads for one reason."""
        return Counter(item.get("reason", "") for item in self.skipped).most_common()


class WebhookDelivery(TimestampedModel):
    """A GitHub webhook delivery id, kept so a redelivery is not processed twice."""

    delivery_id = models.CharField(max_length=100, unique=True)
    event = models.CharField(max_length=50)
    action = models.CharField(max_length=50, blank=True)
    job = models.ForeignKey(IngestJob, null=True, blank=True, on_delete=models.SET_NULL)

    class Meta:
        verbose_name_plural = "webhook deliveries"

    def __str__(self) -> str:
        return f"{self.event} {self.delivery_id}"


class RunAuditEvent(models.Model):
    """Who changed a run by hand, what, when and why. Rows are never edited."""

    class Action(models.TextChoices):
        HIDE = "hide"
        UNHIDE = "unhide"
        OVERRIDE_CONCLUSION = "override_conclusion"
        PURGE = "purge"
        REINGEST = "reingest"

    at = models.DateTimeField(auto_now_add=True)
    repository = models.CharField(max_length=200)
    run_id = models.BigIntegerField(db_index=True)
    run_attempt = models.PositiveIntegerField(null=True, blank=True)
    action = models.CharField(max_length=30, choices=Action.choices)
    actor = models.ForeignKey(
        "auth.User", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    actor_name = models.CharField(max_length=150)
    reason = models.TextField(blank=True)
    before = models.JSONField(default=dict, blank=True)
    after = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["-at"]

    def __str__(self) -> str:
        return f"{self.action} run {self.run_id} by {self.actor_name}"


class EvalThreshold(TimestampedModel):
    """The lowest exact-match score that passes an eval task, for one model prefix or all."""

    DEFAULT_PREFIX = ""

    model_prefix = models.CharField(
        max_length=100, blank=True, help_text="Empty: the default for every model."
    )
    task = models.CharField(max_length=100)
    threshold = models.FloatField(
        validators=[MinValueValidator(0.0), MaxValueValidator(1.0)],
        help_text="A score passes when it is at least this.",
    )

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["model_prefix", "task"], name="uniq_eval_threshold")
        ]
        ordering = ["task", "model_prefix"]

    def __str__(self) -> str:
        return f"{self.model_prefix or 'default'} {self.task} >= {self.threshold}"
