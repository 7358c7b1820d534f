"""Benchmark rows to cells: fixed-seq `bmk_<RF>`, agentic `bmk_agentic_<RF>` and `results_bmk`."""

import re
from collections.abc import Mapping
from typing import Any

from runs.parsing.aggregate import parse_array_rows
from runs.parsing.identity import identity_complete, is_identity_key, read_identity
from runs.parsing.members import location, members_matching, missing_member
from runs.parsing.normalise import AGENTIC_SCENARIO, normalise_image, scenario_name
from runs.parsing.records import (
    INDEXED_METRICS,
    ArtifactKind,
    ArtifactParse,
    CellRecord,
    Unmapped,
)
from runs.parsing.values import RowReader, collect_metrics, is_numeric, load_json

LATENCY_METRICS = ("ttft", "tpot", "itl", "e2el", "intvty")
# Agentic rows nest their metrics; indexed metric -> dotted path in the row (REFERENCE section 3).
AGENTIC_METRIC_PATHS: dict[str, str] = {
    "tput_per_gpu": "request_metrics.throughput.per_gpu.total_tput_tps",
    "output_tput_per_gpu": "request_metrics.throughput.per_gpu.output_tput_tps",
    "input_tput_per_gpu": "request_metrics.throughput.per_gpu.input_tput_tps",
    **{
        f"{stat}_{metric}": f"request_metrics.latency.{metric}.{percentile}"
        for metric in LATENCY_METRICS
        for stat, percentile in (("median", "p50"), ("p90", "p90"), ("p99", "p99"))
    },
    "prefix_cache_hit_rate": "request_metrics.cache.theoretical_cache_hit_rate",
    "num_requests_total": "num_requests_total",
    "num_requests_successful": "num_requests_successful",
    "num_requests_errored": "request_accounting.records_error_dropped",
}
# Agentic subtrees that describe the setup (names, versions, dataset), not a measurement.
AGENTIC_DESCRIPTIVE_KEYS = frozenset({"router", "dataset", "kv_p2p_transfer"})
BENCHMARK_AGGREGATE_FILE = "agg_bmk.json"


def is_agentic_row(row: Mapping[str, Any]) -> bool:
    scenario_type = row.get("scenario_type")
    return (isinstance(scenario_type, str) and scenario_type.startswith("agentic")) or isinstance(
        row.get("request_metrics"), Mapping
    )


def flatten(tree: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """Nested objects as dotted keys ("a.b.c"); lists and scalars are leaves."""
    flat: dict[str, Any] = {}
    for key, value in tree.items():
        dotted = f"{prefix}{key}"
        if isinstance(value, Mapping):
            flat.update(flatten(value, f"{dotted}."))
        else:
            flat[dotted] = value
    return flat


def _is_measurement_path(dotted: str) -> bool:
    top = dotted.split(".", 1)[0]
    return not is_identity_key(top) and top not in AGENTIC_DESCRIPTIVE_KEYS


def benchmark_cell(
    row: Any, *, where: str, result_name: str = ""
) -> tuple[CellRecord, list[Unmapped]]:
    """One benchmark row (fixed-seq or agentic) as a cell. Raises ArtifactError for a bad row."""
    reader = RowReader(row, where=where)
    identity, unmapped = read_identity(reader, name_hint=result_name)
    conc = reader.integer("conc", required=True, minimum=1)
    if is_agentic_row(reader.row):
        isl = osl = None
        scenario = reader.text("scenario_type") or AGENTIC_SCENARIO
        flat = flatten(reader.row)
        raw_metrics = {name: flat.get(path) for name, path in AGENTIC_METRIC_PATHS.items()}
        consumed = set(AGENTIC_METRIC_PATHS.values())
        raw_extras = {
            key: value
            for key, value in flat.items()
            if key not in consumed and _is_measurement_path(key) and is_numeric(value)
        }
    else:
        isl = reader.integer("isl", required=True, minimum=1)
        osl = reader.integer("osl", required=True, minimum=1)
        scenario = scenario_name(isl, osl)
        raw_metrics = {name: reader.row.get(name) for name in INDEXED_METRICS}
        raw_extras = {
            key: value
            for key, value in reader.row.items()
            if key not in raw_metrics and not is_identity_key(key) and is_numeric(value)
        }

    metrics, invalid = collect_metrics(raw_metrics)
    # extras may be legitimately signed (deltas), so only non-finite values are rejected there
    extras, invalid_extras = collect_metrics(raw_extras, allow_negative=True)
    failure_reason = ""
    if metrics["num_requests_successful"] == 0:
        total = metrics["num_requests_total"]
        failure_reason = "no successful requests" + (f" (0 of {total:.0f})" if total else "")
    cell = CellRecord(
        config=identity,
        image=normalise_image(reader.text("image")),
        scenario=scenario,
        isl=isl,
        osl=osl,
        concurrency=conc,
        recipe_fingerprint=reader.text("recipe_fingerprint"),
        result_name=result_name,
        metrics=metrics,
        extra_metrics={key: value for key, value in extras.items() if value is not None},
        failure_reason=failure_reason,
        invalid_metrics=invalid | invalid_extras,
        identity_complete=identity_complete(reader),
    )
    return cell, unmapped


def _aggregate_row(row: Any, where: str) -> tuple[CellRecord, list[Unmapped]]:
    return benchmark_cell(row, where=where)  # aggregate rows do not carry their result name


# What may follow the result name in a member's name; compiled once, not per artifact.
FIXED_SEQ_PART = re.compile(r"(_.+)?\.json")
AGENTIC_PART = re.compile(r"(_conc\d+)?\.json")


def _parse_cell_files(
    kind: ArtifactKind,
    artifact: str,
    result_name: str,
    files: Mapping[str, bytes],
    *,
    prefix: str,
    rest: re.Pattern,
) -> ArtifactParse:
    members = members_matching(
        files,
        lambda base: base.startswith(prefix) and rest.fullmatch(base, len(prefix)) is not None,
    )
    if not members:
        raise missing_member(files, f"a result file for {result_name}", artifact=artifact)
    parse = ArtifactParse(kind=kind, result_name=result_name)
    for member in members:
        where = location(artifact, member)
        cell, unmapped = benchmark_cell(
            load_json(files[member], where=where), where=where, result_name=result_name
        )
        parse.cells.append(cell)
        parse.unmapped.extend(unmapped)
    return parse


def parse_fixed_seq(artifact: str, result_name: str, files: Mapping[str, bytes]) -> ArtifactParse:
    """`agg_<RF>.json`, or for multinode several `agg_<RF>_<part>.json`: one cell each."""
    return _parse_cell_files(
        ArtifactKind.FIXED_SEQ,
        artifact,
        result_name,
        files,
        prefix=f"agg_{result_name}",
        rest=FIXED_SEQ_PART,
    )


def parse_agentic(artifact: str, result_name: str, files: Mapping[str, bytes]) -> ArtifactParse:
    """`<RF>.json`, or for multinode `<RF>_conc<N>.json` per concurrency: one cell each."""
    return _parse_cell_files(
        ArtifactKind.AGENTIC, artifact, result_name, files, prefix=result_name, rest=AGENTIC_PART
    )


def parse_results_aggregate(
    artifact: str, result_name: str, files: Mapping[str, bytes]
) -> ArtifactParse:
    """`agg_bmk.json`: every benchmark row of the run; a bad row is skipped with its reason."""
    parse = ArtifactParse(kind=ArtifactKind.RESULTS_AGGREGATE, result_name=result_name)
    parse.cells = parse_array_rows(
        files, BENCHMARK_AGGREGATE_FILE, artifact=artifact, parse_row=_aggregate_row, into=parse
    )
    return parse
