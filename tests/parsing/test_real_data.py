"""The parsers over the real data in ../shared/reference/real-data (skipped when absent)."""

import json
from pathlib import Path

import pytest
import yaml

from runs.parsing import classify_artifact, parse_artifact, read_artifact_files, wanted_members
from runs.parsing.normalise import KNOWN_MODEL_PREFIXES
from runs.parsing.records import INDEXED_METRICS
from tests.realdata import benchmark_serving_to_bmk_row, build_artifact_dir

pytestmark = pytest.mark.realdata
LIMITS = {"max_unzipped_bytes": 10_000_000, "max_members": 100}


def benchmark_serving_files(real_data: Path) -> list[Path]:
    return sorted((real_data / "benchmark-serving-results").glob("*/*.json"))


def test_all_supplemental_eval_rows_parse(real_data):
    data = (real_data / "supplemental-evals.json").read_bytes()
    parse = parse_artifact("eval_results_all", {"agg_eval_all.json": data})
    assert parse.row_errors == []
    assert parse.unmapped == []
    assert len(parse.evals) == 66
    for record in parse.evals:
        assert record.config.model_prefix in KNOWN_MODEL_PREFIXES
        assert (record.scenario, record.isl, record.osl) == ("1k8k", 1024, 8192)
        assert record.task == "gsm8k" and record.score_name == "em_strict"
        assert 0 <= record.em_strict <= 1 and record.n_eff == 1319
        assert record.invalid_metrics == {}
    rows = json.loads(data)
    assert [record.config.runner_label for record in parse.evals] == [row["hw"] for row in rows]
    assert {record.config.spec_method for record in parse.evals} == {"none", "mtp"}


def test_all_benchmark_serving_files_parse_into_cells(real_data, tmp_path):
    paths = benchmark_serving_files(real_data)
    assert len(paths) == 169
    for path in paths:
        name = f"bmk_{path.stem}"
        row = benchmark_serving_to_bmk_row(path)
        root = build_artifact_dir(
            tmp_path, name, {f"agg_{path.stem}.json": json.dumps(row).encode()}
        )
        kind, _ = classify_artifact(name)
        files = read_artifact_files(root, wanted=wanted_members(kind), **LIMITS)
        parse = parse_artifact(name, files)
        (cell,) = parse.cells
        assert parse.unmapped == [] and cell.invalid_metrics == {}
        assert cell.config.model_prefix in {"glm5", "minimaxm2.5", "qwen3.5"}
        assert cell.metrics["tput_per_gpu"] > 0 and cell.metrics["median_e2el"] > 0
        assert cell.scenario == f"isl{row['isl']}_osl{row['osl']}"
        assert cell.concurrency == row["conc"] and cell.image == "vllm/vllm-openai:latest"


def test_real_benchmark_rows_as_one_results_aggregate(real_data):
    rows = [benchmark_serving_to_bmk_row(path) for path in benchmark_serving_files(real_data)]
    parse = parse_artifact("results_bmk", {"agg_bmk.json": json.dumps(rows).encode()})
    assert len(parse.cells) == 169 and parse.row_errors == []
    assert all(set(cell.metrics) == set(INDEXED_METRICS) for cell in parse.cells)


def test_every_real_changelog_entry_parses(real_data):
    entries = yaml.safe_load((real_data / "perf-changelog.yaml").read_text())
    document = {"base_ref": "HEAD~1", "head_ref": "HEAD", "entries": entries}
    parse = parse_artifact(
        "changelog-metadata", {"changelog_metadata.json": json.dumps(document).encode()}
    )
    assert parse.row_errors == []
    assert len(parse.changelog) == len(entries) == 772
    assert sum(entry.evals_only for entry in parse.changelog) == sum(
        bool(entry.get("evals-only")) for entry in entries
    )
