"""Reads of the runs store (writes live in services.py)."""

from collections.abc import Mapping

from django.db.models import Count, IntegerField, OuterRef, Prefetch, QuerySet, Subquery
from django.db.models.functions import Coalesce

from runs.models import (
    Artifact,
    Cell,
    CellStatus,
    ChangelogEntry,
    Config,
    EvalResult,
    EvalThreshold,
    Image,
    IngestJob,
    RunStats,
    WorkflowRun,
)


def run_list_recent(*, official: bool | None = None, limit: int = 20) -> QuerySet[WorkflowRun]:
    runs = WorkflowRun.objects.all()
    if official is not None:
        runs = runs.filter(is_official=official)
    return runs.order_by("-gh_created_at", "-run_id")[:limit]


def run_get_latest_attempt(*, run_id: int, attempt: int | None = None) -> WorkflowRun | None:
    """The given attempt of a run, or its latest one; None when it is not stored."""
    runs = WorkflowRun.objects.filter(run_id=run_id).select_related("source_run")
    if attempt is not None:
        runs = runs.filter(run_attempt=attempt)
    return runs.order_by("-run_attempt").first()


def ingest_job_latest(*, run_id: int) -> IngestJob | None:
    return IngestJob.objects.filter(github_run_id=run_id).order_by("-created").first()


def run_attempts(*, run_id: int) -> list[int]:
    return list(
        WorkflowRun.objects.filter(run_id=run_id)
        .order_by("run_attempt")
        .values_list("run_attempt", flat=True)
    )


# ---------------------------------------------------------------------------------------------
# REST API reads: base querysets with every relation the serializers follow, in a stable order
# (pagination needs one), so a page costs a fixed number of queries.
# ---------------------------------------------------------------------------------------------


def run_list() -> QuerySet[WorkflowRun]:
    return WorkflowRun.objects.select_related("source_run").order_by(
        "-gh_created_at", "-run_id", "-run_attempt", "-pk"
    )


def _count_per_run(rows: QuerySet) -> Coalesce:
    """How many of `rows` belong to the outer run: a subquery, so counting cells and evals of
    the same run does not multiply the joined rows."""
    counts = rows.filter(run=OuterRef("pk")).order_by().values("run").annotate(n=Count("pk"))
    return Coalesce(Subquery(counts.values("n"), output_field=IntegerField()), 0)


def run_attempt_list(*, run_id: int, attempt: int | None = None) -> list[WorkflowRun]:
    """The stored attempts of a run (only `attempt` when given), oldest first, with their
    artifacts and how many cells and evals each holds."""
    runs = (
        WorkflowRun.objects.filter(run_id=run_id)
        .select_related("source_run")
        .prefetch_related(Prefetch("artifacts", queryset=Artifact.objects.order_by("name")))
        .annotate(
            cell_count=_count_per_run(Cell.objects.all()),
            failed_cell_count=_count_per_run(Cell.objects.filter(status=CellStatus.FAILED)),
            eval_count=_count_per_run(EvalResult.objects.all()),
        )
        .order_by("run_attempt")
    )
    if attempt is not None:
        runs = runs.filter(run_attempt=attempt)
    return list(runs)


def cell_list() -> QuerySet[Cell]:
    return Cell.objects.select_related("run", "config", "image")


def eval_result_list() -> QuerySet[EvalResult]:
    return EvalResult.objects.select_related("run", "config", "image").order_by(
        "-run__gh_created_at", "run_id", "task", "config_id", "concurrency", "pk"
    )


def config_list() -> QuerySet[Config]:
    return Config.objects.order_by("model_prefix", "hardware", "framework", "precision", "pk")


def image_list() -> QuerySet[Image]:
    return Image.objects.order_by("reference")


def run_stats_list() -> QuerySet[RunStats]:
    return RunStats.objects.select_related("run").order_by("run_id", "hardware", "runner_label")


def changelog_entry_list() -> QuerySet[ChangelogEntry]:
    return ChangelogEntry.objects.select_related("run").order_by("run_id", "position")


def ingest_job_list() -> QuerySet[IngestJob]:
    return IngestJob.objects.select_related("run").order_by("-created", "-pk")


# ---------------------------------------------------------------------------------------------
# Eval pass/fail (REFERENCE §5)
# ---------------------------------------------------------------------------------------------

EVAL_THRESHOLD_FALLBACK = 0.85
# (model prefix, or EvalThreshold.DEFAULT_PREFIX for a task's default; task) -> threshold
EvalThresholds = Mapping[tuple[str, str], float]


def eval_thresholds_load() -> dict[tuple[str, str], float]:
    """Every stored threshold in one query, for eval_threshold_for."""
    return {
        (model_prefix, task): threshold
        for model_prefix, task, threshold in EvalThreshold.objects.values_list(
            "model_prefix", "task", "threshold"
        )
    }


def eval_threshold_for(*, model_prefix: str, task: str, thresholds: EvalThresholds) -> float:
    """The model's own threshold for the task, else the task's default, else 0.85."""
    for prefix in (model_prefix, EvalThreshold.DEFAULT_PREFIX):
        threshold = thresholds.get((prefix, task))
        if threshold is not None:
            return threshold
    return EVAL_THRESHOLD_FALLBACK


def eval_passes(*, em_strict: float | None, em_flexible: float | None, threshold: float) -> bool:
    """Every exact-match score the row reports reaches the threshold (stderrs are not scores).

    A row reporting neither score has nothing that could pass, so it does not; NaN never passes.
    """
    scores = [score for score in (em_strict, em_flexible) if score is not None]
    return bool(scores) and all(score >= threshold for score in scores)
