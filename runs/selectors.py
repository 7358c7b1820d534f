"""Reads of the runs store (writes live in services.py)."""

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, date

from django.db.models import (
    Count,
    Exists,
    IntegerField,
    Max,
    Min,
    OuterRef,
    Prefetch,
    QuerySet,
    Subquery,
)
from django.db.models.functions import Coalesce, TruncDate

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


# ---------------------------------------------------------------------------------------------
# Pages
# ---------------------------------------------------------------------------------------------


def run_page_list(*, queryset: QuerySet[WorkflowRun]) -> QuerySet[WorkflowRun]:
    """Runs for the /runs/ table, each with its cell, failed-cell and eval counts."""
    return queryset.annotate(
        cell_count=_count_per_run(Cell.objects.filter(status=CellStatus.OK)),
        failed_count=_count_per_run(Cell.objects.filter(status=CellStatus.FAILED)),
        eval_count=_count_per_run(EvalResult.objects.all()),
    )


def run_filter_choices() -> dict[str, list[str]]:
    """The models and GPUs anything was measured on, for the /runs/ filter form."""
    configs = Config.objects.order_by()
    return {
        "models": sorted(set(configs.values_list("model_prefix", flat=True))),
        "hardware": sorted(set(configs.values_list("hardware", flat=True))),
    }


def image_usage_list() -> QuerySet[Image]:
    """Every image with when it was first and last seen and how many runs and configs used it."""
    seen = Coalesce("cells__run__gh_created_at", "cells__run__created")
    return Image.objects.annotate(
        first_seen=Min(seen),
        last_seen=Max(seen),
        run_count=Count("cells__run", distinct=True),
        config_count=Count("cells__config", distinct=True),
    ).order_by("-last_seen", "reference")


def image_usage(*, image: Image) -> dict[str, list]:
    """The runs and configs that used an image (through their cells)."""
    cells = Cell.objects.filter(image=image)
    return {
        "runs": list(
            WorkflowRun.objects.filter(pk__in=cells.values("run_id")).order_by(
                "-gh_created_at", "-run_id"
            )
        ),
        "configs": list(Config.objects.filter(pk__in=cells.values("config_id"))),
    }


# ---------------------------------------------------------------------------------------------
# The /evaluation page: eval rows of the official runs, or of chosen runs, for one model
# ---------------------------------------------------------------------------------------------


def official_runs_visible() -> QuerySet[WorkflowRun]:
    """Official run attempts an admin has not hidden, annotated with their date (run_date, UTC)
    and the run whose artifacts hold their measurements (measured_in_pk, measured_in_run_id):
    for a merge that reused a PR run, that PR run."""
    return WorkflowRun.objects.filter(is_official=True, hidden_from_official=False).annotate(
        # Runs stored without GitHub timestamps fall back to when they were stored.
        run_date=TruncDate(Coalesce("gh_created_at", "created")),
        measured_in_pk=Coalesce("source_run_id", "pk"),
        measured_in_run_id=Coalesce("source_run__run_id", "run_id"),
    )


@dataclass(frozen=True, kw_only=True)
class EvalRunRef:
    """The run an eval row is shown for: the official run (also when its evals were measured in
    the PR run it reused), or an unofficial run itself."""

    run_id: int  # GitHub run id
    run_attempt: int
    measured_run_id: int  # GitHub run id of the run whose artifacts hold the row
    date: date  # UTC


@dataclass(frozen=True, kw_only=True)
class EvalRow:
    result: EvalResult  # its config and image are loaded
    run: EvalRunRef


def _eval_row_order(row: EvalRow) -> tuple:
    result, config = row.result, row.result.config
    return (
        result.task,
        config.hardware,
        config.framework,
        config.precision,
        config.spec_method,
        config.topology_label,
        result.scenario,
        result.concurrency or 0,
        result.pk,
    )


def official_eval_rows(
    *, model: str, as_of: date | None = None, run_id: int | None = None
) -> list[EvalRow]:
    """The official eval rows of one model, every task: for each (config, task, scenario,
    concurrency) the row of the newest visible official run dated at or before as_of, or only of
    official run run_id (a later attempt wins over an earlier one). Sorted by task, then config
    and concurrency. Two queries (one when no official run matches)."""
    runs = official_runs_visible()
    if as_of is not None:
        runs = runs.filter(run_date__lte=as_of)
    if run_id is not None:
        runs = runs.filter(run_id=run_id)
    shown_for: dict[int, EvalRunRef] = {}  # measurement run pk -> the official run
    recency: dict[int, tuple] = {}
    # Oldest first, so a measurement reused by several official runs counts for the first one.
    for run in runs.order_by("run_date", "run_id", "run_attempt").values(
        "run_id",
        "run_attempt",
        "run_date",
        "gh_created_at",
        "created",
        "measured_in_pk",
        "measured_in_run_id",
    ):
        if run["measured_in_pk"] in shown_for:
            continue
        shown_for[run["measured_in_pk"]] = EvalRunRef(
            run_id=run["run_id"],
            run_attempt=run["run_attempt"],
            measured_run_id=run["measured_in_run_id"],
            date=run["run_date"],
        )
        recency[run["measured_in_pk"]] = (
            run["gh_created_at"] or run["created"],
            run["run_id"],
            run["run_attempt"],
        )
    if not shown_for:
        return []
    results = EvalResult.objects.filter(
        run_id__in=list(shown_for), config__model_prefix=model
    ).select_related("config", "image")
    latest: dict[tuple, EvalRow] = {}
    for result in sorted(results, key=lambda result: recency[result.run_id], reverse=True):
        key = (result.config_id, result.task, result.scenario, result.concurrency)
        latest.setdefault(key, EvalRow(result=result, run=shown_for[result.run_id]))
    return sorted(latest.values(), key=_eval_row_order)


def run_eval_rows(*, runs: Iterable[WorkflowRun]) -> list[EvalRow]:
    """Every eval row of these run attempts, of every model (of the PR run a merge reused), each
    shown for its own run; sorted like official_eval_rows. One query; run.source_run must be
    loaded."""
    shown_for: dict[int, EvalRunRef] = {}
    for run in runs:
        measured = run.source_run if run.source_run_id else run
        shown_for[measured.pk] = EvalRunRef(
            run_id=run.run_id,
            run_attempt=run.run_attempt,
            measured_run_id=measured.run_id,
            date=(run.gh_created_at or run.created).astimezone(UTC).date(),
        )
    if not shown_for:
        return []
    results = EvalResult.objects.filter(run_id__in=list(shown_for)).select_related(
        "config", "image"
    )
    rows = [EvalRow(result=result, run=shown_for[result.run_id]) for result in results]
    return sorted(rows, key=_eval_row_order)


def _official_evals(*, model: str | None = None) -> QuerySet[EvalResult]:
    evals = EvalResult.objects.filter(run_id__in=official_runs_visible().values("measured_in_pk"))
    return evals if model is None else evals.filter(config__model_prefix=model)


def official_eval_models() -> list[str]:
    """Model prefixes with official eval rows, sorted. One query."""
    field = "config__model_prefix"
    return list(_official_evals().order_by(field).values_list(field, flat=True).distinct())


def official_eval_tasks(*, model: str) -> list[str]:
    """The eval tasks of the model's official rows, sorted. One query."""
    return list(
        _official_evals(model=model).order_by("task").values_list("task", flat=True).distinct()
    )


def official_eval_runs(*, model: str) -> list[tuple[int, date]]:
    """(GitHub run id, date) of the visible official runs holding eval rows of the model, newest
    first. One query."""
    measured = EvalResult.objects.filter(
        run_id=OuterRef("measured_in_pk"), config__model_prefix=model
    )
    runs = official_runs_visible().filter(Exists(measured))
    return list(runs.order_by("-run_date", "-run_id").values_list("run_id", "run_date").distinct())


def run_page_details(*, run: WorkflowRun) -> dict:
    """Everything the run page lists besides coverage: the cells and evals (of the reused PR
    run for a merge that reused one), with eval pass/fail, the images, changelog and jobs."""
    measured = run.source_run or run
    cells = list(
        Cell.objects.filter(run=measured)
        .select_related("config", "image")
        .order_by("scenario", "config__hardware", "config__framework", "concurrency")
    )
    evals = list(
        EvalResult.objects.filter(run=measured)
        .select_related("config", "image")
        .order_by("task", "config__hardware", "concurrency")
    )
    if evals:
        thresholds = eval_thresholds_load()
        for result in evals:
            result.threshold = eval_threshold_for(
                model_prefix=result.config.model_prefix, task=result.task, thresholds=thresholds
            )
            result.passed = eval_passes(
                em_strict=result.em_strict,
                em_flexible=result.em_flexible,
                threshold=result.threshold,
            )
    images = {row.image for row in (*cells, *evals) if row.image is not None}
    return {
        "cells": cells,
        "failed_cells": [cell for cell in cells if cell.status == CellStatus.FAILED],
        "evals": evals,
        "images": sorted(images, key=lambda image: image.reference),
        "changelog": list(run.changelog.all()),
        "jobs": list(IngestJob.objects.filter(github_run_id=run.run_id).order_by("-created")[:20]),
    }
