"""Ingest jobs: asking for a run to be ingested from GitHub, and doing it (services, not views).

`ingest_job_request` is the one entry point for every trigger (webhook, command, admin, API,
beat poll); it returns the job already queued or running for that run instead of a second one.
`ingest_job_execute` is what the Celery task runs: list the run's artifacts, download the newest
unexpired upload per name, and hand them to `run_ingest_artifacts`, which writes in one
transaction. A worker killed midway leaves the job running; the redelivered task starts it again.
"""

import logging
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import replace
from pathlib import Path

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from runs import github
from runs.models import (
    ACTIVE_JOB_STATES,
    ARTIFACT_DONE_STATES,
    Artifact,
    ArtifactState,
    IngestJob,
    IngestJobState,
)
from runs.parsing import classify_artifact
from runs.parsing.records import ArtifactError, ArtifactKind
from runs.services import (
    ArtifactInput,
    RunMetadata,
    artifact_parse,
    run_ingest_artifacts,
    run_upsert,
)

logger = logging.getLogger(__name__)

# Progress is a UPDATE (and a commit) per save: often enough for a live page, no more.
PROGRESS_SAVE_SECONDS = 0.5

# Kinds whose files the parsers never read: listed as skipped, never downloaded.
UNREAD_KINDS = {ArtifactKind.AGENTIC_RAW, ArtifactKind.GPU_METRICS, ArtifactKind.UNKNOWN}
# Downloaded before the rest: results_bmk repeats the rows of the per-cell benchmark uploads.
AGGREGATE_FIRST_KINDS = {ArtifactKind.RESULTS_AGGREGATE}
PER_CELL_KINDS = {ArtifactKind.FIXED_SEQ, ArtifactKind.AGENTIC}


class JobError(Exception):
    """A job cannot go on, and retrying will not help (no such run, no permission)."""


def ingest_job_request(
    *, repository: str, run_id: int, run_attempt: int | None = None, requested_by: str
) -> tuple[IngestJob, bool]:
    """Queue a job for the run unless one is active; returns (job, created)."""
    from runs.tasks import ingest_job_run  # the task module imports this one

    active = IngestJob.objects.filter(
        repository=repository, github_run_id=run_id, state__in=ACTIVE_JOB_STATES
    ).first()
    if active is not None:
        return active, False
    try:
        with transaction.atomic():
            job = IngestJob.objects.create(
                repository=repository,
                github_run_id=run_id,
                run_attempt=run_attempt,
                requested_by=requested_by[:200],
            )
    except IntegrityError:  # another request won the race for the lock
        return IngestJob.objects.get(
            repository=repository, github_run_id=run_id, state__in=ACTIVE_JOB_STATES
        ), False
    transaction.on_commit(lambda: ingest_job_run.delay(job.pk))
    return job, True


def _job_start(job_id: int) -> IngestJob | None:
    with transaction.atomic():
        job = IngestJob.objects.select_for_update().get(pk=job_id)
        if not job.is_active:
            return None  # finished already: a duplicate delivery of the task
        job.state = IngestJobState.RUNNING
        job.attempts += 1
        job.started_at = job.started_at or timezone.now()
        job.error = ""
        job.save(update_fields=["state", "attempts", "started_at", "error", "modified"])
    return job


def ingest_job_fail(*, job_id: int, error: str) -> None:
    IngestJob.objects.filter(pk=job_id, state__in=ACTIVE_JOB_STATES).update(
        state=IngestJobState.FAILED,
        error=error,
        finished_at=timezone.now(),
        modified=timezone.now(),
    )


def run_metadata_from_github(info: github.RunInfo, *, repository: str) -> RunMetadata:
    return RunMetadata(
        repository=repository,
        run_id=info.id,
        run_attempt=info.attempt,
        workflow_name=info.workflow_name,
        workflow_path=info.workflow_path,
        event=info.event,
        head_sha=info.head_sha,
        head_branch=info.head_branch or "",
        pr_numbers=tuple(info.pr_numbers),
        status=info.status or "",
        conclusion=info.conclusion or "",
        html_url=info.html_url,
        created_at=info.created_at,
        started_at=info.run_started_at,
        updated_at=info.updated_at,
    )


def artifacts_select(
    artifacts: list[github.ArtifactInfo], *, attempt_ended_at=None
) -> list[github.ArtifactInfo]:
    """The newest upload per name, unexpired ones first; uploads after the attempt ended belong
    to a later attempt and are left out."""
    chosen: dict[str, github.ArtifactInfo] = {}
    for artifact in artifacts:
        if attempt_ended_at and artifact.created_at and artifact.created_at > attempt_ended_at:
            continue
        current = chosen.get(artifact.name)
        rank = (not artifact.expired, artifact.created_at or timezone.now(), artifact.id)
        if current is None or rank > (
            not current.expired,
            current.created_at or timezone.now(),
            current.id,
        ):
            chosen[artifact.name] = artifact
    return sorted(chosen.values(), key=lambda artifact: artifact.name)


def ingest_job_execute(*, job_id: int, client: github.ActionsClient | None = None) -> IngestJob:
    """Run one job to its end. GitHub errors that can be retried propagate to the task."""
    job = _job_start(job_id)
    if job is None:
        return IngestJob.objects.get(pk=job_id)
    if client is None:
        with github.github_client_from_settings() as own_client:
            return _job_execute(job, own_client)
    return _job_execute(job, client)


def _job_execute(job: IngestJob, client: github.ActionsClient) -> IngestJob:
    try:
        info = client.run_get(
            repo=job.repository, run_id=job.github_run_id, attempt=job.run_attempt
        )
    except github.RunNotFound as exc:
        raise JobError(
            f"run {job.github_run_id} does not exist in {job.repository}: {exc}"
        ) from exc
    except github.PermissionDenied as exc:
        raise JobError(str(exc)) from exc
    run = run_upsert(meta=run_metadata_from_github(info, repository=job.repository))
    job.run = run
    job.run_attempt = info.attempt
    job.save(update_fields=["run", "run_attempt", "modified"])

    started = time.monotonic()
    listed = client.run_artifacts_list(repo=job.repository, run_id=job.github_run_id)
    job.timings = {"list_seconds": round(time.monotonic() - started, 3)}
    # Uploads after this attempt's last update belong to a later attempt (for the latest
    # attempt there are none: it is the run's newest state).
    selected = artifacts_select(listed, attempt_ended_at=info.updated_at)
    # Artifacts ingested, or recorded as skipped, by an earlier job: same id, same content.
    done = {
        artifact.github_id: artifact
        for artifact in Artifact.objects.filter(run=run, state__in=ARTIFACT_DONE_STATES)
    }
    skipped = []
    to_fetch = []
    # Expired uploads are recorded (as skipped) without a download, and not counted as work.
    expired = []
    now = timezone.now()
    for artifact in selected:
        kind = _kind(artifact)
        previous = done.get(artifact.id)
        if artifact.is_expired(now=now):
            expired.append(_artifact_input(artifact, path=None, expired=True))
        elif kind in UNREAD_KINDS:
            skipped.append(
                {"name": artifact.name, "reason": f"{kind.value} artifacts are not read"}
            )
        elif previous and (not artifact.digest or previous.digest == artifact.digest):
            reason = previous.error if previous.state == ArtifactState.SKIPPED else ""
            skipped.append({"name": artifact.name, "reason": reason or "already ingested"})
        else:
            to_fetch.append(artifact)
    job.artifacts_total = len(to_fetch)
    job.artifacts_done = 0
    job.skipped = skipped
    job.save(update_fields=["artifacts_total", "artifacts_done", "skipped", "timings", "modified"])

    with tempfile.TemporaryDirectory(prefix=f"infx-job-{job.pk}-") as tmp:
        started = time.monotonic()
        # results_bmk first: the per-cell uploads whose rows it holds need no download.
        first = [artifact for artifact in to_fetch if _kind(artifact) in AGGREGATE_FIRST_KINDS]
        downloaded = _artifacts_download(client, job=job, artifacts=first, folder=Path(tmp))
        covered = {}
        for index, aggregate in enumerate(downloaded):
            downloaded[index], stood_in = _aggregate_stand_in(aggregate, candidates=to_fetch)
            covered.update(stood_in)
        taken = {artifact.id for artifact in first} | covered.keys()
        rest = [artifact for artifact in to_fetch if artifact.id not in taken]
        if covered:
            job.artifacts_total -= len(covered)
            job.save(update_fields=["artifacts_total", "modified"])
        downloaded += _artifacts_download(client, job=job, artifacts=rest, folder=Path(tmp))
        job.timings["download_seconds"] = round(time.monotonic() - started, 3)
        started = time.monotonic()
        report = run_ingest_artifacts(
            run=run, sources=expired + list(covered.values()) + downloaded
        )
        job.timings["store_seconds"] = round(time.monotonic() - started, 3)

    job.counts = dict(report.totals)
    job.skipped = skipped + [
        {"name": outcome.name, "reason": outcome.message}
        for outcome in report.artifacts
        if outcome.state == ArtifactState.SKIPPED
    ]
    failures = [f"{outcome.name}: {outcome.message}" for outcome in report.failed]
    job.state = IngestJobState.PARTIAL if failures else IngestJobState.SUCCEEDED
    job.error = "\n".join(failures)
    job.finished_at = timezone.now()
    job.save()
    logger.info("ingest job %s finished: %s %s", job.pk, job.state, job.counts)
    run.refresh_from_db()
    if run.reused_run_id and run.source_run_id is None:
        # The measurements live in the reused PR run: fetch it too; the link follows.
        ingest_job_request(
            repository=run.repository,
            run_id=run.reused_run_id,
            run_attempt=run.reused_run_attempt,
            requested_by=f"reuse by run {run.run_id}",
        )
    return job


def _kind(artifact: github.ArtifactInfo) -> ArtifactKind:
    return classify_artifact(artifact.name)[0]


def _aggregate_stand_in(
    aggregate: ArtifactInput, *, candidates: list[github.ArtifactInfo]
) -> tuple[ArtifactInput, dict[int, ArtifactInput]]:
    """The downloaded results_bmk (with its parse, read once), and the per-cell benchmark
    uploads it stands in for, by id.

    The sweep writes results_bmk after its benchmark jobs, from every `bmk_*` row uploaded by
    then, so an upload older than it is in it: reading one file instead of a thousand saves
    the downloads and GitHub's rate limit. An upload as new as the aggregate or newer (a job
    re-run after it) is downloaded. The aggregate stands in only when it parses, every row is
    good and carries its whole identity, and it has at least as many rows as the uploads it
    replaces; otherwise every upload is downloaded as usual.
    """
    if aggregate.path is None or aggregate.created_at is None:
        return aggregate, {}
    older = [
        artifact
        for artifact in candidates
        if _kind(artifact) in PER_CELL_KINDS
        and artifact.created_at is not None
        and artifact.created_at < aggregate.created_at
    ]
    if not older:
        return aggregate, {}
    try:
        parse = artifact_parse(aggregate)
    except ArtifactError:
        return aggregate, {}  # recorded as failed by the write, with its error
    aggregate = replace(aggregate, parse=parse)
    complete = all(cell.identity_complete for cell in parse.cells)
    if parse.row_errors or not complete or len(parse.cells) < len(older):
        return aggregate, {}
    return aggregate, {
        artifact.id: _artifact_input(artifact, path=None, covered_by=aggregate.name)
        for artifact in older
    }


def _artifacts_download(
    client: github.ActionsClient, *, job: IngestJob, artifacts: list, folder: Path
) -> list[ArtifactInput]:
    """Download a few artifacts at a time (a small number, to stay clear of GitHub's secondary
    limits), saving the job's progress at most every PROGRESS_SAVE_SECONDS."""
    results: dict[int, ArtifactInput] = {}
    last_save = time.monotonic()
    workers = max(1, settings.GITHUB_DOWNLOAD_CONCURRENCY)
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="artifact") as pool:
        futures = {
            pool.submit(_artifact_fetch, client, job=job, artifact=artifact, folder=folder): index
            for index, artifact in enumerate(artifacts)
        }
        for future in as_completed(futures):
            results[futures[future]] = future.result()
            job.artifacts_done += 1
            if time.monotonic() - last_save >= PROGRESS_SAVE_SECONDS:
                job.save(update_fields=["artifacts_done", "modified"])
                last_save = time.monotonic()
    job.save(update_fields=["artifacts_done", "modified"])
    return [results[index] for index in range(len(artifacts))]


def _artifact_fetch(
    client: github.ActionsClient, *, job: IngestJob, artifact: github.ArtifactInfo, folder: Path
) -> ArtifactInput:
    dest = folder / f"{artifact.id}.bin"
    try:
        client.artifact_download(
            repo=job.repository,
            artifact_id=artifact.id,
            dest=dest,
            size_in_bytes=artifact.size_in_bytes,
        )
    except github.ArtifactExpired:
        return _artifact_input(artifact, path=None, expired=True)
    except (github.ArtifactTooLarge, github.ArtifactNotFound, github.PermissionDenied) as exc:
        return _artifact_input(artifact, path=None, download_error=str(exc))
    return _artifact_input(artifact, path=dest)


def _artifact_input(artifact: github.ArtifactInfo, *, path: Path | None, **state) -> ArtifactInput:
    return ArtifactInput(
        name=artifact.name,
        path=path,
        github_id=artifact.id,
        size_bytes=artifact.size_in_bytes,
        digest=artifact.digest,
        created_at=artifact.created_at,
        expires_at=artifact.expires_at,
        **state,
    )
