"""The real benchmark data, wrapped into artifacts, through the whole ingestion into the store."""

import json
import re
from collections import defaultdict

import pytest

from runs.models import Artifact, ArtifactState, Cell, EvalResult
from runs.services import RunMetadata, artifact_inputs_from_paths, run_ingest_artifacts, run_upsert
from tests.realdata import benchmark_serving_to_bmk_row, build_artifact_dir

pytestmark = [pytest.mark.realdata, pytest.mark.django_db]


def test_169_benchmark_serving_files_and_66_eval_rows_are_stored(real_data, tmp_path):
    files = sorted((real_data / "benchmark-serving-results").glob("*/*.json"))
    assert len(files) == 169
    folders = [
        build_artifact_dir(
            tmp_path, f"bmk_{path.stem}", {f"agg_{path.stem}.json": json.dumps(row).encode()}
        )
        for path in files
        for row in [benchmark_serving_to_bmk_row(path)]
    ]
    run = run_upsert(meta=RunMetadata(repository="o/r", run_id=1, event="push", head_branch="main"))

    report = run_ingest_artifacts(run=run, sources=artifact_inputs_from_paths(folders))

    assert not report.failed
    assert Cell.objects.filter(run=run, status="ok").count() == 169
    assert not Artifact.objects.exclude(state=ArtifactState.INGESTED).exists()
    assert set(Cell.objects.values_list("config__model_prefix", flat=True)) == {
        "glm5",
        "minimaxm2.5",
        "qwen3.5",
    }
    again = run_ingest_artifacts(run=run, sources=artifact_inputs_from_paths(folders))
    assert again.totals["artifacts_unchanged"] == 169


def test_the_66_supplemental_eval_rows_are_stored_one_run_per_sweep(real_data, tmp_path):
    """The file gathers two sweeps (January and February); each becomes its own run."""
    rows = json.loads((real_data / "supplemental-evals.json").read_text())
    by_month = defaultdict(list)
    for row in rows:
        by_month[re.search(r"results_(\d{4}-\d{2})", row["source"])[1]].append(row)
    assert sorted(by_month) == ["2026-01", "2026-02"]
    for run_id, month_rows in enumerate(by_month.values(), start=1):
        folder = build_artifact_dir(
            tmp_path / str(run_id),
            "eval_results_all",
            {"agg_eval_all.json": json.dumps(month_rows).encode()},
        )
        run = run_upsert(meta=RunMetadata(repository="o/r", run_id=run_id))
        report = run_ingest_artifacts(run=run, sources=artifact_inputs_from_paths([folder]))
        assert not report.failed
        assert report.totals["evals_created"] == len(month_rows)
    assert EvalResult.objects.count() == 66
    assert EvalResult.objects.filter(em_strict__gte=0.9).count() > 50
