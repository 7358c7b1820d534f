"""The parsing layer: artifact name -> kind, artifact files -> records. Pure: no Django, no I/O
beyond `archive` reading the files it is pointed at.

Typical use::

    kind, result_name = classify_artifact(name)
    files = read_artifact_files(path, wanted=wanted_members(kind), max_unzipped_bytes=...,
                                max_members=...)
    parse = parse_artifact(name, files)  # raises ArtifactError for a bad artifact
"""

from collections.abc import Callable, Mapping

from runs.parsing.archive import read_artifact_bytes, read_artifact_files
from runs.parsing.benchmarks import (
    BENCHMARK_AGGREGATE_FILE,
    parse_agentic,
    parse_fixed_seq,
    parse_results_aggregate,
)
from runs.parsing.evals import (
    EVAL_AGGREGATE_FILE,
    META_FILE,
    RESULTS_FILE,
    parse_eval,
    parse_eval_aggregate,
)
from runs.parsing.members import basename
from runs.parsing.records import ArtifactError, ArtifactKind, ArtifactParse, Unmapped
from runs.parsing.run_metadata import (
    CHANGELOG_FILE,
    RUN_STATS_FILE,
    parse_changelog,
    parse_run_stats,
)
from runs.parsing.server_logs import is_log_file, parse_server_logs

__all__ = [
    "ArtifactError",
    "classify_artifact",
    "parse_artifact",
    "read_artifact_bytes",
    "read_artifact_files",
    "wanted_members",
]

# Artifacts with a fixed name, checked before the prefixes ("eval_results_all" is not an eval_).
EXACT_NAMES: dict[str, ArtifactKind] = {
    "results_bmk": ArtifactKind.RESULTS_AGGREGATE,
    "eval_results_all": ArtifactKind.EVAL_AGGREGATE,
    "run-stats": ArtifactKind.RUN_STATS,
    "changelog-metadata": ArtifactKind.CHANGELOG,
}
# Per-config artifacts `<prefix><RF>`; the first matching prefix wins, so longer ones come first.
NAME_PREFIXES: tuple[tuple[str, ArtifactKind], ...] = (
    ("bmk_agentic_", ArtifactKind.AGENTIC),
    ("bmk_", ArtifactKind.FIXED_SEQ),
    ("agentic_", ArtifactKind.AGENTIC_RAW),
    ("eval_", ArtifactKind.EVAL),
    ("server_logs_", ArtifactKind.SERVER_LOGS),
    ("gpu_metrics_", ArtifactKind.GPU_METRICS),
)

Parser = Callable[[str, str, Mapping[str, bytes]], ArtifactParse]
PARSERS: dict[ArtifactKind, Parser] = {
    ArtifactKind.FIXED_SEQ: parse_fixed_seq,
    ArtifactKind.AGENTIC: parse_agentic,
    ArtifactKind.RESULTS_AGGREGATE: parse_results_aggregate,
    ArtifactKind.EVAL: parse_eval,
    ArtifactKind.EVAL_AGGREGATE: parse_eval_aggregate,
    ArtifactKind.RUN_STATS: parse_run_stats,
    ArtifactKind.CHANGELOG: parse_changelog,
    ArtifactKind.SERVER_LOGS: parse_server_logs,
}
SKIPPED_KINDS: dict[ArtifactKind, str] = {
    ArtifactKind.AGENTIC_RAW: "raw aiperf files are not parsed",
    ArtifactKind.GPU_METRICS: "GPU telemetry is not parsed",
    ArtifactKind.UNKNOWN: "unknown artifact name",
}

# Which member basenames each kind reads; everything else stays in the archive.
MEMBER_FILTERS: dict[ArtifactKind, Callable[[str], bool]] = {
    ArtifactKind.FIXED_SEQ: lambda name: name.startswith("agg_") and name.endswith(".json"),
    ArtifactKind.AGENTIC: lambda name: name.endswith(".json"),
    ArtifactKind.RESULTS_AGGREGATE: lambda name: name == BENCHMARK_AGGREGATE_FILE,
    ArtifactKind.EVAL: lambda name: name == META_FILE or RESULTS_FILE.fullmatch(name) is not None,
    ArtifactKind.EVAL_AGGREGATE: lambda name: name == EVAL_AGGREGATE_FILE,
    ArtifactKind.RUN_STATS: lambda name: name == RUN_STATS_FILE,
    ArtifactKind.CHANGELOG: lambda name: name == CHANGELOG_FILE,
    ArtifactKind.SERVER_LOGS: is_log_file,
}


def _eval_result_name(rest: str) -> str:
    """`eval_<exp>_<RF>` repeats the experiment (`dsv4_8k1k_dsv4_8k1k_fp4_...`); drop one copy."""
    experiment = "_".join(rest.split("_", 2)[:2])
    doubled = f"{experiment}_{experiment}_"
    return rest[len(experiment) + 1 :] if rest.startswith(doubled) else rest


def classify_artifact(name: str) -> tuple[ArtifactKind, str]:
    """The artifact's kind and its result name (the RF; "" for run-wide artifacts)."""
    if name in EXACT_NAMES:
        return EXACT_NAMES[name], ""
    for prefix, kind in NAME_PREFIXES:
        if name.startswith(prefix) and len(name) > len(prefix):
            rest = name[len(prefix) :]
            return kind, _eval_result_name(rest) if kind is ArtifactKind.EVAL else rest
    return ArtifactKind.UNKNOWN, ""


def wanted_members(kind: ArtifactKind) -> Callable[[str], bool]:
    """A filter on member paths for `read_artifact_files`: only what the kind's parser reads."""
    accept = MEMBER_FILTERS.get(kind)
    if accept is None:
        return lambda member: False
    return lambda member: accept(basename(member))


def _dedupe(unmapped: list[Unmapped]) -> list[Unmapped]:
    """One report per (kind, value): the first place it was seen."""
    first: dict[tuple[str, str], Unmapped] = {}
    for item in unmapped:
        first.setdefault((item.kind, item.value), item)
    return list(first.values())


def parse_artifact(name: str, files: Mapping[str, bytes]) -> ArtifactParse:
    """Records from an artifact's files (as read with `wanted_members`).

    Raises ArtifactError for a bad artifact: a missing expected file, invalid JSON or UTF-8, a
    wrong top-level type, or missing/wrongly typed identity fields in a per-config artifact.
    Aggregates, run stats and changelogs skip a bad row and list it in `row_errors`.
    """
    kind, result_name = classify_artifact(name)
    parser = PARSERS.get(kind)
    if parser is None:
        return ArtifactParse(kind=kind, result_name=result_name, skipped_reason=SKIPPED_KINDS[kind])
    parse = parser(name, result_name, files)
    parse.unmapped = _dedupe(parse.unmapped)
    return parse
