"""What a run says about itself: `run-stats` (reliability per runner) and `changelog-metadata`
(what the run was for). A bad entry is skipped with its reason; a bad file is a bad artifact."""

from collections.abc import Mapping
from typing import Any

from runs.parsing.members import location, single_member
from runs.parsing.normalise import normalise_hardware
from runs.parsing.records import (
    ArtifactError,
    ArtifactKind,
    ArtifactParse,
    ChangelogRecord,
    RunStatsRecord,
    Unmapped,
    UnmappedKind,
)
from runs.parsing.values import RowReader, describe, load_json

RUN_STATS_FILE = "run_stats.json"
CHANGELOG_FILE = "changelog_metadata.json"
CHANGELOG_FLAGS = {
    "evals_only": "evals-only",
    "all_evals": "all-evals",
    "append_only": "append-only",
}


def _load_object(artifact: str, files: Mapping[str, bytes], name: str) -> RowReader:
    member = single_member(files, name, artifact=artifact)
    where = location(artifact, member)
    return RowReader(load_json(files[member], where=where), where=where)


def parse_run_stats(artifact: str, result_name: str, files: Mapping[str, bytes]) -> ArtifactParse:
    """run_stats.json = {"<runner label>": {"n_success": int, "total": int}}."""
    stats = _load_object(artifact, files, RUN_STATS_FILE)
    parse = ArtifactParse(kind=ArtifactKind.RUN_STATS, result_name=result_name)
    for runner_label, counts in stats.row.items():
        try:
            entry = RowReader(counts, where=f"{stats.where} [{runner_label!r}]")
            n_success = entry.integer("n_success", required=True)
            total = entry.integer("total", required=True)
            if n_success > total:
                raise ArtifactError(f"{entry.where}: n_success {n_success} > total {total}")
        except ArtifactError as exc:
            parse.row_errors.append(str(exc))
            continue
        hardware, known = normalise_hardware(runner_label)
        if not known:
            parse.unmapped.append(Unmapped(UnmappedKind.HARDWARE, runner_label, stats.where))
        parse.run_stats.append(RunStatsRecord(runner_label, hardware, n_success, total))
    return parse


def _texts(entry: RowReader, key: str) -> tuple[str, ...]:
    """A field given as one string or a list of strings."""
    value = entry.row.get(key)
    if value is None:
        return ()
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, list) or not all(isinstance(item, str) for item in items):
        raise ArtifactError(
            f"{entry.where}: field {key!r}: expected text or a list of text, got {describe(value)}"
        )
    return tuple(item.strip() for item in items if item.strip())


def _changelog_entry(entry: RowReader, *, position: int, base_ref: str, head_ref: str):
    config_keys = _texts(entry, "config-keys")
    if not config_keys:
        raise ArtifactError(f"{entry.where}: field 'config-keys': missing")
    return ChangelogRecord(
        position=position,
        config_keys=config_keys,
        description=_texts(entry, "description"),
        pr_link=entry.text("pr-link"),
        scenario_types=_texts(entry, "scenario-type"),
        base_ref=base_ref,
        head_ref=head_ref,
        **{field: bool(entry.flag(key)) for field, key in CHANGELOG_FLAGS.items()},
    )


def parse_changelog(artifact: str, result_name: str, files: Mapping[str, bytes]) -> ArtifactParse:
    """changelog_metadata.json = {base_ref, head_ref, entries: [...]}; position = entry index."""
    document = _load_object(artifact, files, CHANGELOG_FILE)
    entries: Any = document.row.get("entries")
    if not isinstance(entries, list):
        raise ArtifactError(f"{document.where}: field 'entries': expected a list")
    base_ref, head_ref = document.text("base_ref"), document.text("head_ref")
    parse = ArtifactParse(kind=ArtifactKind.CHANGELOG, result_name=result_name)
    parse.reused_run = _reused_run(document)
    for position, raw_entry in enumerate(entries):
        try:
            entry = RowReader(raw_entry, where=f"{document.where} entry {position}")
            record = _changelog_entry(
                entry, position=position, base_ref=base_ref, head_ref=head_ref
            )
        except ArtifactError as exc:
            parse.row_errors.append(str(exc))
            continue
        parse.changelog.append(record)
    return parse


# Keys under which a merge run's changelog metadata may name the PR run it reused
# (`/reuse-sweep-run <run id>`), in the spellings the producer has used.
REUSED_RUN_KEYS = ("reuse-sweep-run", "reused-run-id", "reused_run_id", "source_run_id")
REUSED_ATTEMPT_KEYS = ("reused-run-attempt", "reused_run_attempt", "source_run_attempt")


def _reused_run(document: RowReader) -> tuple[int, int | None] | None:
    for key in REUSED_RUN_KEYS:
        if document.has(key):
            run_id = document.integer(key, required=True, minimum=1)
            attempt = next(
                (document.integer(k, minimum=1) for k in REUSED_ATTEMPT_KEYS if document.has(k)),
                None,
            )
            return run_id, attempt
    return None
