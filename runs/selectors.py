"""Reads of the runs store (writes live in services.py)."""

from django.db.models import QuerySet

from runs.models import WorkflowRun


def run_list_recent(*, official: bool | None = None, limit: int = 20) -> QuerySet[WorkflowRun]:
    runs = WorkflowRun.objects.all()
    if official is not None:
        runs = runs.filter(is_official=official)
    return runs.order_by("-gh_created_at", "-run_id")[:limit]
