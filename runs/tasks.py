"""Celery tasks. They take ids and call services; `retrying_task` holds the one retry policy.

Policy: GitHub rate limits reschedule the task for when the limit resets (never sleep in a
worker); outages and database hiccups retry with exponential backoff and jitter; everything
else (a run that does not exist, a parse or integrity error) fails at once. Tasks are acked late
and rejected when their worker dies, so a killed worker's job is delivered again.
"""

import functools
import logging
import random
from collections.abc import Callable

from celery import shared_task
from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.db import OperationalError

from runs import github, jobs
from runs.models import WorkflowRun

logger = logging.getLogger(__name__)

MAX_RETRIES = 8
RETRY_BASE_SECONDS = 30
RETRY_CAP_SECONDS = 3600
RETRYABLE = (github.GitHubUnavailable, OperationalError, SoftTimeLimitExceeded)


def retrying_task(*, on_give_up: Callable[..., None] | None = None, **task_options):
    """Register `func` as a bound Celery task with our retry policy.

    `on_give_up(*args, error=...)` is called once the task fails for good, so the caller can
    record the failure (an ingest job's state, for instance).
    """

    def decorate(func):
        @shared_task(
            bind=True,
            name=f"{func.__module__}.{func.__name__}",
            acks_late=True,
            reject_on_worker_lost=True,
            max_retries=MAX_RETRIES,
            soft_time_limit=settings.CELERY_TASK_SOFT_TIME_LIMIT,
            time_limit=settings.CELERY_TASK_TIME_LIMIT,
            **task_options,
        )
        @functools.wraps(func)
        def task(self, *args, **kwargs):
            try:
                return func(*args, **kwargs)
            except (github.RateLimited, *RETRYABLE) as exc:
                wait = retry_delay(exc, retries=self.request.retries)
                # Eager tasks (the embedded mode) cannot wait; they fail with the reason.
                if self.request.is_eager or self.request.retries >= self.max_retries:
                    _give_up(on_give_up, args, kwargs, error=_retry_message(exc, wait))
                    raise
                logger.warning("%s: retrying in %.0f s: %s", self.name, wait, exc)
                raise self.retry(exc=exc, countdown=wait) from exc
            except Exception as exc:
                _give_up(on_give_up, args, kwargs, error=str(exc) or type(exc).__name__)
                raise

        return task

    return decorate


def retry_delay(exc: Exception, *, retries: int) -> float:
    if isinstance(exc, github.RateLimited):
        return max(1.0, exc.wait_seconds)
    return github.backoff_with_jitter(
        attempt=retries, base=RETRY_BASE_SECONDS, cap=RETRY_CAP_SECONDS, rng=random.Random()
    )


def _retry_message(exc: Exception, wait: float) -> str:
    if isinstance(exc, github.RateLimited):
        return f"GitHub rate limit reached; try again in {wait:.0f} s ({exc})"
    return f"GitHub or the database is unavailable; try again later ({exc})"


def _give_up(on_give_up, args, kwargs, *, error: str) -> None:
    if on_give_up is not None:
        on_give_up(*args, error=error, **kwargs)


@retrying_task(on_give_up=lambda job_id, error: jobs.ingest_job_fail(job_id=job_id, error=error))
def ingest_job_run(job_id: int) -> str:
    return jobs.ingest_job_execute(job_id=job_id).state


@retrying_task()
def sweep_runs_poll() -> int:
    """Queue jobs for completed sweep runs on main that are not stored yet; returns how many."""
    repository = settings.GITHUB_REPOSITORY
    with github.github_client_from_settings() as client:
        runs = client.workflow_runs_list(
            repo=repository, workflow=settings.GITHUB_SWEEP_WORKFLOW, branch="main"
        )
    stored = set(
        WorkflowRun.objects.filter(
            repository=repository, run_id__in=[run.id for run in runs]
        ).values_list("run_id", "run_attempt")
    )
    queued = 0
    for run in runs:
        if (run.id, run.attempt) not in stored:
            _, created = jobs.ingest_job_request(
                repository=repository,
                run_id=run.id,
                run_attempt=run.attempt,
                requested_by="beat: sweep poll",
            )
            queued += created
    return queued
