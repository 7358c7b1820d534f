"""Reads of the runs store (writes live in services.py)."""

from django.db.models import QuerySet

from runs.models import IngestJob, WorkflowRun


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
