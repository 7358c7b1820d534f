"""Unofficial (pull-request) runs overlaid on the official pages, shared by /inference and
/evaluation.

Reviewers paste links like `/inference?unofficialRun=36159874837` into pull requests. The key
is matched whatever its case and plural (`unofficialRun`, `unofficialrun`, `UNOFFICIALRUNS`);
several ids, comma-separated or in repeated keys, overlay several runs (at most
MAX_UNOFFICIAL_RUNS). A page uses it like this:

    from curves.unofficial import unofficial_page_context
    context = unofficial_page_context(query=request.GET, page="evaluation",
                                      requested_by="/evaluation overlay")
    for entry in context["unofficial_ready"]:  # UnofficialRun, state READY, .run set
        ...  # draw the data of run_measured_in(run=entry.run)

and in its template, where the banners and the messages belong:

    {% include "curves/_unofficial_banner.html" %}  {# red NON-OFFICIAL banner per ready run #}
    {% include "curves/_unofficial_status.html" %}  {# message + next step per other run #}

The lower-level pieces: unofficial_run_ids_parse (ids and messages from a query),
unofficial_runs_resolve (ids -> UnofficialRun, asking for ingest jobs), unofficial_query_with
(the query with other runs, e.g. for links), ingest_error_kind (a failed job's error -> state).

A run already stored is ready at once. An unknown run gets an ingest job (runs.jobs); while it
is active the status partial polls `GET /unofficial/status/?ids=..&page=..` (every 2 s, htmx),
which answers with `HX-Refresh: true` once no run is ingesting any more, so the page reloads and
draws the overlay without the user reloading. In the embedded mode (eager Celery) the job runs
inside the first request, so that page already shows the outcome.

Every UnofficialRun has a `state` (UnofficialState) with a `message` saying what happened and a
`next_step` saying what to do about it. Job errors are read from the job's error text, which
runs.jobs and runs.github word consistently (ingest_error_kind), so no field is added to jobs.
"""

import re
from collections.abc import Iterable
from dataclasses import dataclass, replace
from datetime import timedelta
from enum import StrEnum
from urllib.parse import quote, urlencode

from django.conf import settings
from django.http import QueryDict
from django.urls import reverse
from django.utils import timezone

from curves.selectors import METRIC_COLUMNS, run_measured_in
from runs.jobs import ingest_job_request
from runs.models import (
    Artifact,
    ArtifactState,
    Cell,
    CellStatus,
    EvalResult,
    IngestJob,
    IngestJobState,
    WorkflowRun,
)
from runs.parsing.records import ArtifactKind
from runs.selectors import ingest_job_latest, run_get_latest_attempt

UNOFFICIAL_RUN_PARAM = "unofficialRun"  # the spelling links are written with
_PARAM_NAMES = {"unofficialrun", "unofficialruns"}  # what any spelling lowers to
MAX_UNOFFICIAL_RUNS = 5  # more lines than this make the charts unreadable
PAGES = ("inference", "evaluation")
# Run ids are GitHub's int64 ids (stored in a BigIntegerField).
_RUN_ID_MAX = 2**63 - 1
# A run that did not end ready is asked for again after this, so a re-run on GitHub or a token
# set meanwhile is picked up by a reload, without every page view calling GitHub.
RETRY_FINISHED_JOB_AFTER = timedelta(seconds=60)
# Artifact kinds that carry what the pages draw: benchmark cells and eval scores.
DATA_ARTIFACT_KINDS = (
    ArtifactKind.FIXED_SEQ,
    ArtifactKind.AGENTIC,
    ArtifactKind.RESULTS_AGGREGATE,
    ArtifactKind.EVAL,
    ArtifactKind.EVAL_AGGREGATE,
)
_RUN_ID_HINT = "use the number at the end of the GitHub Actions run URL (…/actions/runs/<id>)"


class UnofficialState(StrEnum):
    READY = "ready"  # stored with cells or evals: draw it
    INGESTING = "ingesting"  # an ingest job is queued or running
    INVALID = "invalid"  # the URL token is not a usable run id (run_id is None)
    NOT_FOUND = "not_found"  # GitHub has no such run in the repository
    EXPIRED = "expired"  # its benchmark and eval artifacts expired before we read them
    EMPTY = "empty"  # the run uploaded no benchmark or eval artifact
    NO_TOKEN = "no_token"  # noqa: S105 - a state name; the repository needs a GITHUB_TOKEN
    FAILED = "failed"  # the ingest failed otherwise: see its job


@dataclass(frozen=True, kw_only=True)
class UnofficialRun:
    """One run asked for in the URL, with what the page can show of it."""

    run_id: int | None  # None only for INVALID tokens
    state: UnofficialState
    message: str  # what happened, e.g. "Run 123 does not exist in owner/repo."
    next_step: str  # what the reader can do about it
    run: WorkflowRun | None = None  # its latest stored attempt
    job: IngestJob | None = None  # its latest ingest job
    cell_count: int = 0  # ok benchmark cells stored for it (of its source run when reused)
    eval_count: int = 0
    dismiss_query: str = ""  # the page's query without this run (set by unofficial_page_context)

    @property
    def is_ready(self) -> bool:
        return self.state == UnofficialState.READY

    @property
    def is_ingesting(self) -> bool:
        return self.state == UnofficialState.INGESTING

    @property
    def job_url(self) -> str:
        """The run page, which shows its latest ingest job."""
        if self.run_id is None:
            return ""
        return f"{reverse('runs:run_detail', args=[self.run_id])}#job-progress"

    @property
    def run_url(self) -> str:
        """The run page of the stored attempt."""
        if self.run is None:
            return ""
        path = reverse("runs:run_detail", args=[self.run.run_id])
        return f"{path}?attempt={self.run.run_attempt}"

    @property
    def github_url(self) -> str:
        """The attempt on GitHub; built from the stored repository, never from artifact text."""
        if self.run is None:
            return ""
        repository = quote(self.run.repository, safe="/")
        return (
            f"https://github.com/{repository}/actions/runs/{self.run.run_id}"
            f"/attempts/{self.run.run_attempt}"
        )

    @property
    def pull_requests(self) -> list[tuple[int, str]]:
        """(number, URL) of the pull requests the run belongs to."""
        if self.run is None:
            return []
        repository = quote(self.run.repository, safe="/")
        return [
            (number, f"https://github.com/{repository}/pull/{number}")
            for number in self.run.pr_numbers
            if isinstance(number, int)
        ]


# ---------------------------------------------------------------------------------------------
# The URL parameter
# ---------------------------------------------------------------------------------------------


def unofficial_query_keys(query: QueryDict) -> list[str]:
    """The keys of the query that name unofficial runs, in any case and plural."""
    return [key for key in query if key.lower() in _PARAM_NAMES]


def _run_ids_check(values: Iterable[str]) -> tuple[list[int], list[tuple[str, str]]]:
    """(valid ids, deduplicated, in order, capped; (message, next step) per problem) from
    comma-separated values."""
    run_ids: list[int] = []
    problems: list[tuple[str, str]] = []
    for value in values:
        for token in (part.strip() for part in value.split(",")):
            if not token:
                continue  # "1,,2" and a trailing comma are harmless
            if not token.isascii() or not token.isdigit():
                problems.append((f"“{token}” is not a run id", _RUN_ID_HINT))
            elif not 0 < int(token) <= _RUN_ID_MAX:
                problems.append((f"“{token}” is not a GitHub run id", _RUN_ID_HINT))
            elif int(token) not in run_ids:
                run_ids.append(int(token))
    if len(run_ids) > MAX_UNOFFICIAL_RUNS:
        problems.append(
            (
                f"{len(run_ids)} unofficial runs were asked for; "
                f"only the first {MAX_UNOFFICIAL_RUNS} are overlaid",
                "open a second link for the others",
            )
        )
    return run_ids[:MAX_UNOFFICIAL_RUNS], problems


def _query_run_ids_check(query: QueryDict) -> tuple[list[int], list[tuple[str, str]]]:
    return _run_ids_check(
        value for key in unofficial_query_keys(query) for value in query.getlist(key)
    )


def unofficial_run_ids_parse(query: QueryDict) -> tuple[list[int], list[str]]:
    """The unofficial run ids of a page's query, and a message for each bad token.

    Ids come from every key spelled unofficialRun(s) in any case, split on commas; they are
    positive GitHub run ids, deduplicated, in the order given, at most MAX_UNOFFICIAL_RUNS.
    Messages say what is wrong and what to do, e.g. "“abc” is not a run id: use the number at
    the end of the GitHub Actions run URL (…/actions/runs/<id>)".
    """
    run_ids, problems = _query_run_ids_check(query)
    return run_ids, [f"{message}: {next_step}" for message, next_step in problems]


def unofficial_query_with(query: QueryDict, *, run_ids: list[int]) -> QueryDict:
    """A copy of the query whose unofficial runs are `run_ids`, written as one canonical
    `unofficialRun=1,2` (none: the parameter is dropped); every other parameter is kept."""
    kept = query.copy()
    for key in unofficial_query_keys(query):
        del kept[key]
    if run_ids:
        kept[UNOFFICIAL_RUN_PARAM] = ",".join(str(run_id) for run_id in run_ids)
    return kept


# ---------------------------------------------------------------------------------------------
# What a run id stands for
# ---------------------------------------------------------------------------------------------


def ingest_error_kind(error: str) -> UnofficialState:
    """NOT_FOUND, NO_TOKEN or FAILED for a failed job's error text.

    runs.jobs words a missing run "run N does not exist in owner/repo"; runs.github words every
    credential problem with "GITHUB_TOKEN" (none for a private repository, or rejected) or
    "denied access" (a token without Actions: read). Anything else is a plain failure.
    """
    if re.search(r"\bdoes not exist in\b", error):
        return UnofficialState.NOT_FOUND
    if "GITHUB_TOKEN" in error or "denied access" in error:
        return UnofficialState.NO_TOKEN
    return UnofficialState.FAILED


def _stored_counts(run: WorkflowRun) -> tuple[int, int]:
    measured = run_measured_in(run=run)
    cells = Cell.objects.filter(run=measured, status=CellStatus.OK).count()
    evals = EvalResult.objects.filter(run=measured).count()
    return cells, evals


def _from_job_error(*, run_id: int, job: IngestJob, run: WorkflowRun | None) -> UnofficialRun:
    repository = job.repository
    kind = ingest_error_kind(job.error)
    if kind == UnofficialState.NOT_FOUND:
        message = f"Run {run_id} does not exist in {repository}."
        next_step = (
            f"Check the id: it is the number at the end of the run's URL, "
            f"https://github.com/{repository}/actions/runs/<id>."
        )
    elif kind == UnofficialState.NO_TOKEN:
        message = f"GitHub would not show run {run_id} of {repository} to this service."
        next_step = (
            "An admin sets GITHUB_TOKEN (a fine-grained token with Actions: read on "
            f"{repository}) and then this page is reloaded."
        )
    else:
        message = f"Ingesting run {run_id} failed: {job.error or 'no reason was recorded'}"
        next_step = "Open the job for details; reloading this page in a minute tries again."
    return UnofficialRun(
        run_id=run_id, state=kind, message=message, next_step=next_step, run=run, job=job
    )


def _from_artifacts(*, run: WorkflowRun, job: IngestJob | None) -> UnofficialRun:
    """The state of a stored run with no cells and no evals, from its data artifacts."""
    run_id = run.run_id
    data_artifacts = list(
        Artifact.objects.filter(run=run_measured_in(run=run), kind__in=DATA_ARTIFACT_KINDS)
    )
    if not data_artifacts:
        return UnofficialRun(
            run_id=run_id,
            state=UnofficialState.EMPTY,
            message=f"Run {run_id} uploaded no benchmark or eval artifacts.",
            next_step=(
                "Check that it is a sweep run (run-sweep.yml) whose benchmark jobs ran; "
                "the PR's sweep run is linked from the PR's checks."
            ),
            run=run,
            job=job,
        )
    if all(artifact.expired for artifact in data_artifacts):
        return UnofficialRun(
            run_id=run_id,
            state=UnofficialState.EXPIRED,
            message=(
                f"The benchmark and eval artifacts of run {run_id} expired on GitHub "
                "before they were read."
            ),
            next_step=(
                "Re-run the sweep on GitHub (or link a newer run of the PR); "
                "reload this page once it has finished."
            ),
            run=run,
            job=job,
        )
    failed = sum(artifact.state == ArtifactState.FAILED for artifact in data_artifacts)
    return UnofficialRun(
        run_id=run_id,
        state=UnofficialState.FAILED,
        message=(
            f"Run {run_id} is stored, but none of its {len(data_artifacts)} benchmark or eval "
            f"artifacts gave a result ({failed} failed to parse)."
        ),
        next_step="Open the run for each artifact's error.",
        run=run,
        job=job,
    )


def _classify(*, run_id: int, retry: bool) -> UnofficialRun | None:
    """What is known of the run; None when a new ingest job should be asked for (nothing is
    known, or `retry` and the last job ended without data longer ago than the retry delay)."""
    run = run_get_latest_attempt(run_id=run_id)
    job = ingest_job_latest(run_id=run_id)
    if run is not None:
        cells, evals = _stored_counts(run)
        if cells or evals:
            return UnofficialRun(
                run_id=run_id,
                state=UnofficialState.READY,
                message="",
                next_step="",
                run=run,
                job=job,
                cell_count=cells,
                eval_count=evals,
            )
    if job is not None and job.is_active:
        progress = (
            f"{job.artifacts_done} of {job.artifacts_total} artifacts read"
            if job.artifacts_total
            else "listing its artifacts"
            if job.state == IngestJobState.RUNNING
            else "waiting for a worker"
        )
        return UnofficialRun(
            run_id=run_id,
            state=UnofficialState.INGESTING,
            message=f"Run {run_id} is being ingested from GitHub: {progress}.",
            next_step="The overlay appears here when the job is done; no need to reload.",
            run=run,
            job=job,
        )
    ended = (job.finished_at or job.modified) if job is not None else None
    if job is None or (retry and ended < timezone.now() - RETRY_FINISHED_JOB_AFTER):
        return None
    if job.state == IngestJobState.FAILED:
        return _from_job_error(run_id=run_id, job=job, run=run)
    if run is not None:
        return _from_artifacts(run=run, job=job)
    # A finished job that stored nothing (the run was purged since).
    return UnofficialRun(
        run_id=run_id,
        state=UnofficialState.FAILED,
        message=f"Run {run_id} was ingested once but is no longer stored.",
        next_step="Reload this page in a minute to ingest it again.",
        job=job,
    )


def unofficial_runs_resolve(*, run_ids: list[int], requested_by: str) -> list[UnofficialRun]:
    """Each run id's state, in order; runs not stored get an ingest job of
    settings.GITHUB_REPOSITORY (the job already active for a run is reused).

    READY when the run (its source run, for a reused one) holds cells or evals. Otherwise the
    latest job decides: INGESTING while it is queued or running; when it failed, its error
    (NOT_FOUND, NO_TOKEN, FAILED with the job linked); when it finished, the run's benchmark
    and eval artifacts (EXPIRED when all expired, EMPTY when there are none, else FAILED).
    A job that ended without data more than RETRY_FINISHED_JOB_AFTER ago is asked for again.
    In the embedded mode (eager Celery) the job runs within this call.
    """
    resolved = []
    for run_id in run_ids:
        current = _classify(run_id=run_id, retry=True)
        if current is None:
            ingest_job_request(
                repository=settings.GITHUB_REPOSITORY, run_id=run_id, requested_by=requested_by
            )
            current = _classify(run_id=run_id, retry=False)
        resolved.append(current)
    return resolved


def overlay_cell_values(*, cell_ids: list[int]) -> dict[int, dict]:
    """Cell id -> every chart metric column (curves.selectors.METRIC_COLUMNS) as stored, and
    "disagg" of its config, for drawing run_curves points on any chart axes: one query (none
    for no ids)."""
    if not cell_ids:
        return {}
    rows = Cell.objects.filter(pk__in=cell_ids).values("pk", "config__disagg", *METRIC_COLUMNS)
    values_by_cell = {}
    for row in rows:
        row["disagg"] = row.pop("config__disagg")
        values_by_cell[row.pop("pk")] = row
    return values_by_cell


# ---------------------------------------------------------------------------------------------
# Template context
# ---------------------------------------------------------------------------------------------


def unofficial_status_url(*, run_ids: list[int], page: str) -> str:
    """The endpoint the progress partial polls while these runs are ingesting."""
    query = urlencode({"ids": ",".join(str(run_id) for run_id in run_ids), "page": page})
    return f"{reverse('curves:unofficial_status')}?{query}"


def _page_check(page: str) -> None:
    if page not in PAGES:
        raise ValueError(f"page must be one of {PAGES}, not {page!r}")


def unofficial_requested_by(*, username: str, page: str) -> str:
    """Who asked for an ingest job through an unofficialRun link (shown on the job)."""
    return f"/{page} unofficialRun link ({username or 'anonymous'})"


def unofficial_page_context(*, query: QueryDict, page: str, requested_by: str) -> dict:
    """What the banner and status partials need, for a page's query; no database query when
    the URL names no unofficial run.

    unofficial_runs: every entry in URL order, bad tokens (INVALID, run_id None) first, each
    with its dismiss_query; unofficial_ready: the READY ones; unofficial_ingesting: the
    INGESTING ones, which the progress partial polls through unofficial_status_url;
    unofficial_page: `page` ("inference" or "evaluation"); unofficial_run_ids: the valid ids;
    unofficial_query: their canonical `unofficialRun=1%2C2` ("" for none), for links to other
    views of the same runs.
    """
    _page_check(page)
    run_ids, problems = _query_run_ids_check(query)
    invalid = [
        UnofficialRun(run_id=None, state=UnofficialState.INVALID, message=message, next_step=step)
        for message, step in problems
    ]
    resolved = unofficial_runs_resolve(run_ids=run_ids, requested_by=requested_by)
    runs = [
        replace(
            entry,
            dismiss_query=unofficial_query_with(
                query, run_ids=[other for other in run_ids if other != entry.run_id]
            ).urlencode(),
        )
        for entry in [*invalid, *resolved]
    ]
    ingesting = [entry for entry in runs if entry.is_ingesting]
    return {
        "unofficial_runs": runs,
        "unofficial_ready": [entry for entry in runs if entry.is_ready],
        "unofficial_ingesting": ingesting,
        "unofficial_status_url": unofficial_status_url(
            run_ids=[entry.run_id for entry in ingesting], page=page
        ),
        "unofficial_page": page,
        "unofficial_run_ids": run_ids,
        "unofficial_query": unofficial_query_with(QueryDict(), run_ids=run_ids).urlencode(),
    }


def unofficial_status_context(*, ids: str, page: str, requested_by: str) -> dict:
    """For GET /unofficial/status/?ids=..&page=..: the progress partial's context for the runs
    of `ids` (comma-separated), and unofficial_reload, true once one of them is no longer
    ingesting: the page then reloads to draw it (or say why it cannot)."""
    _page_check(page)
    run_ids, _ = _run_ids_check([ids])
    runs = unofficial_runs_resolve(run_ids=run_ids, requested_by=requested_by)
    ingesting = [entry for entry in runs if entry.is_ingesting]
    return {
        "unofficial_runs": runs,
        "unofficial_ingesting": ingesting,
        "unofficial_status_url": unofficial_status_url(run_ids=run_ids, page=page),
        "unofficial_page": page,
        "unofficial_reload": not runs or len(ingesting) < len(runs),
    }
