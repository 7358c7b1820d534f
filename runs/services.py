"""Writes to the runs store: upserting runs and ingesting their artifacts.

Ingestion is two-phased. Reading and parsing every artifact happens first, outside any
transaction, and a bad artifact only marks that artifact failed. Then everything the run's
artifacts hold is written in one transaction, upserting on natural keys, so a second ingest of
the same input changes nothing and a crash leaves nothing half-written.
"""

import hashlib
import logging
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from django.conf import settings
from django.db import transaction
from django.db.models import Model
from django.utils import timezone

from runs.bulk import rows_insert
from runs.cache import data_generation_bump
from runs.models import (
    ARTIFACT_DONE_STATES,
    Artifact,
    ArtifactState,
    Cell,
    CellStatus,
    ChangelogEntry,
    Config,
    EvalResult,
    Image,
    RunAuditEvent,
    RunStats,
    ServerLog,
    UnmappedValue,
    WorkflowRun,
    config_identity_hash,
)
from runs.parsing import classify_artifact, parse_artifact, read_artifact_files, wanted_members
from runs.parsing.records import (
    ArtifactError,
    ArtifactKind,
    ArtifactParse,
    CellRecord,
    ConfigIdentity,
    EvalRecord,
)

logger = logging.getLogger(__name__)

# Aggregates repeat the per-config artifacts; they only fill in what those did not bring.
AGGREGATE_KINDS = {ArtifactKind.RESULTS_AGGREGATE, ArtifactKind.EVAL_AGGREGATE}


@dataclass(frozen=True)
class RunMetadata:
    """What is known of one run attempt, from GitHub or from the command line."""

    repository: str
    run_id: int
    run_attempt: int = 1
    workflow_name: str = ""
    workflow_path: str = ""
    event: str = ""
    head_sha: str = ""
    head_branch: str = ""
    pr_numbers: tuple[int, ...] = ()
    status: str = "completed"
    conclusion: str = ""
    html_url: str = ""
    created_at: datetime | None = None
    started_at: datetime | None = None
    updated_at: datetime | None = None


def run_is_official(*, event: str, head_branch: str, workflow_path: str) -> bool:
    """Official data is a push to main of the sweep workflow (any workflow when it is unknown)."""
    if event != "push" or head_branch != "main":
        return False
    return not workflow_path or workflow_path.endswith(settings.GITHUB_SWEEP_WORKFLOW)


def run_upsert(*, meta: RunMetadata) -> WorkflowRun:
    """Create or refresh the run attempt; fields the input leaves empty keep their stored value."""
    values = {
        "workflow_name": meta.workflow_name,
        "workflow_path": meta.workflow_path,
        "event": meta.event,
        "head_sha": meta.head_sha.lower(),
        "head_branch": meta.head_branch,
        "pr_numbers": list(meta.pr_numbers),
        "status": meta.status,
        "conclusion": meta.conclusion,
        "html_url": meta.html_url,
        "gh_created_at": meta.created_at,
        "gh_started_at": meta.started_at,
        "gh_updated_at": meta.updated_at,
    }
    run, created = WorkflowRun.objects.get_or_create(
        repository=meta.repository,
        run_id=meta.run_id,
        run_attempt=meta.run_attempt,
        defaults=values,
    )
    if not created:
        changed = [
            name
            for name, value in values.items()
            if value not in ("", [], None) and getattr(run, name) != value
        ]
        for name in changed:
            setattr(run, name, values[name])
        if changed:
            run.save(update_fields=[*changed, "modified"])
    official = run_is_official(
        event=run.event, head_branch=run.head_branch, workflow_path=run.workflow_path
    )
    if run.is_official != official:
        run.is_official = official
        run.save(update_fields=["is_official", "modified"])
    _reusing_runs_link(source=run)
    return run


def _reusing_runs_link(*, source: WorkflowRun) -> None:
    """Merge runs that declared this run as the one they reused now point at it."""
    waiting = WorkflowRun.objects.filter(
        repository=source.repository, reused_run_id=source.run_id, source_run__isnull=True
    )
    waiting.filter(reused_run_attempt=source.run_attempt).update(source_run=source)
    latest = source.run_attempt == max(
        WorkflowRun.objects.filter(repository=source.repository, run_id=source.run_id).values_list(
            "run_attempt", flat=True
        )
    )
    if latest:
        waiting.filter(reused_run_attempt__isnull=True).update(source_run=source)


def run_reuse_link(*, run: WorkflowRun, reused_run_id: int, reused_attempt: int | None) -> None:
    """Record that `run` (a merge) took its measurements from another run and attempt; link
    it now when that run is stored, or as soon as it is ingested."""
    source = (
        WorkflowRun.objects.filter(repository=run.repository, run_id=reused_run_id)
        .filter(**({"run_attempt": reused_attempt} if reused_attempt else {}))
        .order_by("-run_attempt")
        .first()
    )
    run.reused_run_id, run.reused_run_attempt, run.source_run = (
        reused_run_id,
        reused_attempt,
        source,
    )
    run.save(update_fields=["reused_run_id", "reused_run_attempt", "source_run", "modified"])


@dataclass(frozen=True)
class ArtifactInput:
    """An artifact to ingest: a zip, folder or single file on disk, or only its listing."""

    name: str
    path: Path | None
    github_id: int | None = None
    size_bytes: int | None = None
    digest: str = ""
    created_at: datetime | None = None
    expires_at: datetime | None = None
    expired: bool = False
    download_error: str = ""
    # Not downloaded because this aggregate (an artifact name) holds its rows.
    covered_by: str = ""
    # Already read by the caller (the job reads results_bmk first to plan its downloads).
    parse: ArtifactParse | None = None


@dataclass
class ArtifactOutcome:
    name: str
    state: str
    message: str = ""
    counts: Counter = field(default_factory=Counter)


@dataclass
class IngestReport:
    """What one ingest did, artifact by artifact, with totals per record kind and change."""

    run: WorkflowRun
    artifacts: list[ArtifactOutcome] = field(default_factory=list)
    totals: Counter = field(default_factory=Counter)

    @property
    def failed(self) -> list[ArtifactOutcome]:
        return [outcome for outcome in self.artifacts if outcome.state == ArtifactState.FAILED]


def artifact_content_digest(path: Path) -> str:
    """sha256 of a zip or single file, or of a folder's relative paths and contents."""
    digest = hashlib.sha256()
    if path.is_dir():
        for member in sorted(p for p in path.rglob("*") if p.is_file()):
            digest.update(str(member.relative_to(path)).encode())
            digest.update(b"\0")
            digest.update(member.read_bytes())
            digest.update(b"\0")
    else:
        with path.open("rb") as stream:
            for chunk in iter(lambda: stream.read(1 << 20), b""):
                digest.update(chunk)
    return digest.hexdigest()


@dataclass
class _Prepared:
    """One artifact after the read-and-parse phase."""

    source: ArtifactInput
    kind: ArtifactKind
    digest: str
    parse: ArtifactParse | None = None
    error: str = ""
    skip_reason: str = ""


def artifact_parse(source: ArtifactInput) -> ArtifactParse:
    """Read and parse a downloaded artifact; raises ArtifactError for a bad one."""
    if source.parse is not None:
        return source.parse
    kind, _ = classify_artifact(source.name)
    files = read_artifact_files(
        source.path,
        wanted=wanted_members(kind),
        max_unzipped_bytes=settings.MAX_UNZIPPED_BYTES,
        max_members=settings.MAX_ZIP_MEMBERS,
    )
    return parse_artifact(source.name, files)


def _artifact_prepare(*, source: ArtifactInput, previous: Artifact | None) -> _Prepared:
    kind, _ = classify_artifact(source.name)
    if source.expired:
        return _Prepared(source, kind, source.digest, skip_reason="artifact expired")
    if source.covered_by:
        reason = f"not downloaded: {source.covered_by} holds its rows"
        return _Prepared(source, kind, source.digest, skip_reason=reason)
    if source.path is None:
        error = source.download_error or "artifact was not downloaded"
        return _Prepared(source, kind, source.digest, error=error)
    try:
        digest = source.digest or artifact_content_digest(source.path)
    except OSError as exc:
        return _Prepared(source, kind, source.digest, error=f"cannot read {source.path}: {exc}")
    if (
        previous is not None
        and previous.state in ARTIFACT_DONE_STATES
        and previous.digest == digest
    ):
        return _Prepared(source, kind, digest, skip_reason="already ingested")
    try:
        parse = artifact_parse(source)
    except ArtifactError as exc:
        return _Prepared(source, kind, digest, error=str(exc))
    return _Prepared(source, kind, digest, parse=parse, skip_reason=parse.skipped_reason)


def _artifact_key(*, github_id: int | None, name: str) -> tuple[int | None, str]:
    """GitHub's id names an artifact; a local one (no id) is known by its name."""
    return (github_id, name if github_id is None else "")


def run_ingest_artifacts(*, run: WorkflowRun, sources: Iterable[ArtifactInput]) -> IngestReport:
    """Read, parse and store a run's artifacts; the whole write is one transaction."""
    existing = {
        _artifact_key(github_id=artifact.github_id, name=artifact.name): artifact
        for artifact in run.artifacts.all()
    }

    def previous_of(source: ArtifactInput) -> Artifact | None:
        return existing.get(_artifact_key(github_id=source.github_id, name=source.name))

    prepared = [
        _artifact_prepare(source=source, previous=previous_of(source)) for source in sources
    ]
    # Per-config artifacts first, so the aggregates only fill gaps.
    prepared.sort(key=lambda item: (item.kind in AGGREGATE_KINDS, item.source.name))

    report = IngestReport(run=run)
    unchanged = [item for item in prepared if item.skip_reason == "already ingested"]
    for item in unchanged:
        report.artifacts.append(
            ArtifactOutcome(item.source.name, ArtifactState.SKIPPED, item.skip_reason)
        )
        report.totals["artifacts_unchanged"] += 1
    to_record = [item for item in prepared if item.skip_reason != "already ingested"]
    with transaction.atomic():
        artifacts = _artifacts_save(
            run=run, items=to_record, previous=[previous_of(item.source) for item in to_record]
        )
        writer = _RunWriter(run=run)
        writer.lookups_load(item.parse for item in to_record if item.parse is not None)
        for item, artifact in zip(to_record, artifacts, strict=True):
            outcome = ArtifactOutcome(item.source.name, artifact.state, artifact.error)
            if artifact.row_errors:
                outcome.message = f"{len(artifact.row_errors)} rows left out: " + "; ".join(
                    artifact.row_errors[:3]
                )
            if item.parse is not None and not item.skip_reason:
                outcome.counts = writer.write(
                    artifact=artifact,
                    parse=item.parse,
                    fill_only=item.kind in AGGREGATE_KINDS,
                )
            elif item.skip_reason:
                outcome.message = item.skip_reason
            report.artifacts.append(outcome)
            report.totals.update(outcome.counts)
            report.totals[f"artifacts_{outcome.state}"] += 1
            if item.parse is not None and item.parse.reused_run is not None:
                reused_run_id, reused_attempt = item.parse.reused_run
                run_reuse_link(run=run, reused_run_id=reused_run_id, reused_attempt=reused_attempt)
        writer.flush()
        transaction.on_commit(data_generation_bump)
    return report


ARTIFACT_SAVED_FIELDS = (
    "name",
    "kind",
    "size_bytes",
    "digest",
    "gh_created_at",
    "expires_at",
    "expired",
    "state",
    "error",
    "row_errors",
    "processed_at",
    "modified",
)


def _artifacts_save(
    *, run: WorkflowRun, items: list[_Prepared], previous: list[Artifact | None]
) -> list[Artifact]:
    """Insert or update the artifact rows of this ingest in two statements, not one per row."""
    now = timezone.now()
    artifacts = []
    for item, artifact in zip(items, previous, strict=True):
        source = item.source
        if item.error:
            state = ArtifactState.FAILED
        elif item.skip_reason:
            state = ArtifactState.SKIPPED
        else:
            # Written in the same transaction as its records: ingested, or rolled back with them.
            state = ArtifactState.INGESTED
        artifact = artifact or Artifact(run=run, github_id=source.github_id)
        artifact.name = source.name
        artifact.kind = item.kind
        artifact.size_bytes = source.size_bytes
        artifact.digest = item.digest
        artifact.gh_created_at = source.created_at
        artifact.expires_at = source.expires_at
        artifact.expired = source.expired
        artifact.state = state
        artifact.error = item.error or (item.skip_reason if state == ArtifactState.SKIPPED else "")
        artifact.row_errors = list(item.parse.row_errors) if item.parse else []
        artifact.processed_at = now
        artifact.modified = now
        artifacts.append(artifact)
    stored = [artifact for artifact in artifacts if artifact.pk is not None]
    Artifact.objects.bulk_update(stored, ARTIFACT_SAVED_FIELDS, batch_size=500)
    new = [artifact for artifact in artifacts if artifact.pk is None]
    if new:
        rows_insert(
            Artifact,
            [
                {
                    field: getattr(artifact, field)
                    for field in ("run_id", "github_id", *ARTIFACT_SAVED_FIELDS)
                }
                for artifact in new
            ],
        )
        # COPY returns no ids: read them back by the artifacts' natural keys.
        ids = {
            _artifact_key(github_id=github_id, name=name): pk
            for pk, github_id, name in run.artifacts.values_list("pk", "github_id", "name")
        }
        for artifact in new:
            artifact.pk = ids[_artifact_key(github_id=artifact.github_id, name=artifact.name)]
            artifact._state.adding = False
    return artifacts


def image_reference_split(reference: str) -> dict[str, str]:
    """Split `registry/repo/name:tag@digest`; docker.io is implied when no registry is named."""
    rest, _, digest = reference.partition("@")
    name, tag = rest, ""
    last_slash = rest.rfind("/")
    if rest.rfind(":") > last_slash:
        name, _, tag = rest.rpartition(":")
    first, _, remainder = name.partition("/")
    if remainder and ("." in first or ":" in first or first == "localhost"):
        registry, repository = first, remainder
    else:
        registry, repository = "docker.io", name
    return {"registry": registry, "repository": repository, "tag": tag, "digest": digest}


class _RunWriter:
    """Upserts the records of one run's artifacts, caching lookups for the whole ingest."""

    def __init__(self, *, run: WorkflowRun):
        self.run = run
        self.configs: dict[ConfigIdentity, Config] = {}
        self.images: dict[str, Image] = {}
        self.cells = {
            (cell.config_id, cell.scenario, cell.concurrency, cell.recipe_fingerprint): cell
            for cell in Cell.objects.filter(run=run)
        }
        self.evals = {
            (ev.config_id, ev.task, ev.scenario, ev.concurrency): ev
            for ev in EvalResult.objects.filter(run=run)
        }
        # New rows wait as dicts and are inserted together by flush(), not one by one.
        self.new_cells: list[dict] = []
        self.new_evals: list[dict] = []

    def flush(self) -> None:
        rows_insert(Cell, self.new_cells)
        rows_insert(EvalResult, self.new_evals)
        self.new_cells, self.new_evals = [], []

    def write(self, *, artifact: Artifact, parse: ArtifactParse, fill_only: bool) -> Counter:
        counts: Counter = Counter()
        for record in parse.cells:
            counts[f"cells_{self._cell_upsert(record, artifact, fill_only)}"] += 1
        for record in parse.evals:
            counts[f"evals_{self._eval_upsert(record, artifact, fill_only)}"] += 1
        for stats in parse.run_stats:
            _, created = RunStats.objects.update_or_create(
                run=self.run,
                runner_label=stats.runner_label,
                defaults={
                    "hardware": stats.hardware,
                    "n_success": stats.n_success,
                    "total": stats.total,
                },
            )
            counts["run_stats_created" if created else "run_stats_updated"] += 1
        for entry in parse.changelog:
            _, created = ChangelogEntry.objects.update_or_create(
                run=self.run,
                position=entry.position,
                defaults={
                    "config_keys": list(entry.config_keys),
                    "description": list(entry.description),
                    "pr_link": entry.pr_link,
                    "evals_only": entry.evals_only,
                    "all_evals": entry.all_evals,
                    "append_only": entry.append_only,
                    "scenario_types": list(entry.scenario_types),
                    "base_ref": entry.base_ref,
                    "head_ref": entry.head_ref,
                },
            )
            counts["changelog_created" if created else "changelog_updated"] += 1
        for log in parse.server_logs:
            ServerLog.objects.update_or_create(
                artifact=artifact,
                path=log.path,
                defaults={
                    "run": self.run,
                    "result_name": log.result_name,
                    "size_bytes": log.size_bytes,
                    "text": log.text,
                },
            )
            counts["server_logs"] += 1
        for unmapped in parse.unmapped:
            _, created = UnmappedValue.objects.get_or_create(
                kind=unmapped.kind,
                value=unmapped.value[:300],
                run=self.run,
                defaults={"artifact": artifact, "where": unmapped.where[:1000]},
            )
            counts["unmapped_values"] += created
        return counts

    def lookups_load(self, parses: Iterable[ArtifactParse]) -> None:
        """Find or create every config and image the parses name, in a few queries in all."""
        records = [record for parse in parses for record in (*parse.cells, *parse.evals)]
        # Keyed by the (frozen, hashable) identity itself: hashing it to a digest is the slow part.
        # In the order written: identities that differ only in the runner label share one
        # hash, hence one Config, which takes the first one's fields (a cell's, not an eval's).
        hashes = {
            record.config: config_identity_hash(record.config)
            for record in records
            if record.config not in self.configs
        }
        defaults: dict[str, dict] = {}
        for identity, key in hashes.items():
            defaults.setdefault(key, vars(identity))
        configs = _unique_rows_ensure(Config, "identity_hash", defaults)
        self.configs.update({identity: configs[key] for identity, key in hashes.items()})
        references = {record.image for record in records if record.image} - self.images.keys()
        self.images.update(
            _unique_rows_ensure(
                Image, "reference", {ref: image_reference_split(ref) for ref in references}
            )
        )

    def _image_id(self, reference: str) -> int | None:
        return self.images[reference].pk if reference else None

    def _cell_upsert(self, record: CellRecord, artifact: Artifact, fill_only: bool) -> str:
        config = self.configs[record.config]
        key = (config.pk, record.scenario, record.concurrency, record.recipe_fingerprint)
        values = {
            "image_id": self._image_id(record.image),
            "artifact_id": artifact.pk,
            "result_name": record.result_name,
            "isl": record.isl,
            "osl": record.osl,
            "status": CellStatus.FAILED if record.failure_reason else CellStatus.OK,
            "failure_reason": record.failure_reason,
            "extra_metrics": record.extra_metrics,
            "invalid_metrics": record.invalid_metrics,
            **record.metrics,
        }
        natural_key = {
            "config_id": config.pk,
            "scenario": record.scenario,
            "concurrency": record.concurrency,
            "recipe_fingerprint": record.recipe_fingerprint,
        }
        return self._row_upsert(
            self.cells, self.new_cells, key, natural_key, values, fill_only=fill_only
        )

    def _eval_upsert(self, record: EvalRecord, artifact: Artifact, fill_only: bool) -> str:
        config = self.configs[record.config]
        key = (config.pk, record.task, record.scenario, record.concurrency)
        values = {
            "image_id": self._image_id(record.image),
            "artifact_id": artifact.pk,
            "n_shot": record.n_shot,
            "isl": record.isl,
            "osl": record.osl,
            "em_strict": record.em_strict,
            "em_strict_se": record.em_strict_se,
            "em_flexible": record.em_flexible,
            "em_flexible_se": record.em_flexible_se,
            "n_eff": record.n_eff,
            "score": record.score,
            "score_name": record.score_name,
            "score_se": record.score_se,
            "lm_eval_version": record.lm_eval_version,
            "source": record.source[:1000],
        }
        natural_key = {
            "config_id": config.pk,
            "task": record.task,
            "scenario": record.scenario,
            "concurrency": record.concurrency,
        }
        return self._row_upsert(
            self.evals, self.new_evals, key, natural_key, values, fill_only=fill_only
        )

    def _row_upsert(self, known: dict, pending: list, key, natural_key, values, *, fill_only):
        """A new row waits in `pending` for flush(); a known one is updated where it differs."""
        row = known.get(key)
        if row is None:
            known[key] = row = {"run_id": self.run.pk, **natural_key, **values}
            pending.append(row)
            return "created"
        return _changed_fields_save(row, values, fill_only=fill_only)


def _unique_rows_ensure(model, field: str, defaults_by_key: dict[str, dict]) -> dict[str, Model]:
    """The rows of `model` whose unique `field` takes each key, created where missing."""
    if not defaults_by_key:
        return {}
    found = model.objects.in_bulk(list(defaults_by_key), field_name=field)
    missing = [
        model(**{field: key}, **defaults)
        for key, defaults in defaults_by_key.items()
        if key not in found
    ]
    if missing:
        # Another ingest may create the same rows meanwhile: keep theirs, then read all back.
        model.objects.bulk_create(missing, ignore_conflicts=True)
        found = model.objects.in_bulk(list(defaults_by_key), field_name=field)
    return found


def _changed_fields_save(
    instance: Model | dict, values: Mapping[str, object], *, fill_only: bool
) -> str:
    """Save only what differs; in fill-only mode (aggregates) existing rows are left alone."""
    if fill_only:
        return "unchanged"
    if isinstance(instance, dict):  # created by an earlier artifact of this ingest, pending
        instance.update(values)
        return "updated"
    changed = [name for name, value in values.items() if getattr(instance, name) != value]
    if not changed:
        return "unchanged"
    for name in changed:
        setattr(instance, name, values[name])
    instance.save(update_fields=[*changed, "modified"])
    return "updated"


def artifact_inputs_from_paths(paths: Iterable[Path]) -> list[ArtifactInput]:
    """Artifacts on disk: a zip is named `<artifact>.zip`, a folder or plain file by its name."""
    inputs = []
    for path in paths:
        name = path.name[: -len(".zip")] if path.suffix == ".zip" and path.is_file() else path.name
        size = path.stat().st_size if path.is_file() else None
        inputs.append(ArtifactInput(name=name, path=path, size_bytes=size))
    return inputs


# Hand-made changes to runs: one atomic function per change, each writing its audit row.


def _run_audit(*, run: WorkflowRun, action: str, actor, reason: str, before, after) -> None:
    RunAuditEvent.objects.create(
        repository=run.repository,
        run_id=run.run_id,
        run_attempt=run.run_attempt,
        action=action,
        actor=actor if getattr(actor, "pk", None) else None,
        actor_name=getattr(actor, "username", "") or str(actor),
        reason=reason,
        before=before,
        after=after,
    )


def _reason_required(reason: str) -> str:
    reason = (reason or "").strip()
    if not reason:
        raise ValueError("a reason is required")
    return reason


def _run_visibility_set(*, run: WorkflowRun, hidden: bool, actor, reason: str) -> WorkflowRun:
    reason = _reason_required(reason)
    run = WorkflowRun.objects.select_for_update().get(pk=run.pk)
    before = {"hidden_from_official": run.hidden_from_official, "hidden_reason": run.hidden_reason}
    run.hidden_from_official, run.hidden_reason = hidden, reason if hidden else ""
    run.save(update_fields=["hidden_from_official", "hidden_reason", "modified"])
    after = {"hidden_from_official": hidden, "hidden_reason": run.hidden_reason}
    action = "hide" if hidden else "unhide"
    _run_audit(run=run, action=action, actor=actor, reason=reason, before=before, after=after)
    transaction.on_commit(data_generation_bump)
    return run


@transaction.atomic
def run_hide(*, run: WorkflowRun, actor, reason: str) -> WorkflowRun:
    """Take a run off the official curves; the reason is shown on the run page."""
    return _run_visibility_set(run=run, hidden=True, actor=actor, reason=reason)


@transaction.atomic
def run_unhide(*, run: WorkflowRun, actor, reason: str) -> WorkflowRun:
    """Put a hidden run back on the official curves."""
    return _run_visibility_set(run=run, hidden=False, actor=actor, reason=reason)


@transaction.atomic
def run_conclusion_override(
    *, run: WorkflowRun, conclusion: str, actor, reason: str
) -> WorkflowRun:
    """Override GitHub's conclusion (empty string: back to GitHub's)."""
    reason = _reason_required(reason)
    run = WorkflowRun.objects.select_for_update().get(pk=run.pk)
    before = {"conclusion_override": run.conclusion_override}
    run.conclusion_override = conclusion.strip()[:30]
    run.save(update_fields=["conclusion_override", "modified"])
    _run_audit(
        run=run,
        action="override_conclusion",
        actor=actor,
        reason=reason,
        before=before,
        after={"conclusion_override": run.conclusion_override},
    )
    transaction.on_commit(data_generation_bump)
    return run


@transaction.atomic
def run_purge(*, run: WorkflowRun, actor, reason: str) -> dict[str, int]:
    """Delete a run attempt and everything that came from it; returns the deleted counts."""
    reason = _reason_required(reason)
    run = WorkflowRun.objects.select_for_update().get(pk=run.pk)
    before = {
        "cells": run.cells.count(),
        "evals": run.evals.count(),
        "artifacts": run.artifacts.count(),
        "conclusion": run.conclusion,
        "head_sha": run.head_sha,
    }
    _run_audit(run=run, action="purge", actor=actor, reason=reason, before=before, after={})
    _, deleted = run.delete()
    transaction.on_commit(data_generation_bump)
    return deleted
