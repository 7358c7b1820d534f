"""The ingestion write path: idempotent, per-artifact errors, one transaction per run."""

import json
import zipfile
from pathlib import Path
from unittest import mock

import pytest
from django.core.management import CommandError, call_command

from runs import demo
from runs.bulk import rows_insert
from runs.models import (
    Artifact,
    ArtifactState,
    Cell,
    CellStatus,
    ChangelogEntry,
    Config,
    EvalResult,
    Image,
    RunStats,
    ServerLog,
    UnmappedValue,
    WorkflowRun,
)
from runs.services import (
    RunMetadata,
    artifact_inputs_from_paths,
    image_reference_split,
    run_ingest_artifacts,
    run_is_official,
    run_upsert,
)

pytestmark = pytest.mark.django_db

SERIES = demo.FIXED_SEQ_SERIES[0]


def write_zip(folder: Path, artifact: str, files: dict[str, bytes | str]) -> Path:
    path = folder / f"{artifact}.zip"
    with zipfile.ZipFile(path, "w") as archive:
        for name, data in files.items():
            archive.writestr(name, data)
    return path


def bmk_zip(folder: Path, conc: int, **overrides) -> Path:
    row = demo.fixed_seq_row(SERIES, scenario="1k1k", conc=conc, rng=demo.random.Random(conc))
    row.update(overrides)
    rf = demo.result_name(SERIES, exp="dsr1_1k1k", conc=conc)
    return write_zip(folder, f"bmk_{rf}", {f"agg_{rf}.json": json.dumps(row)})


def run_for(run_id: int = 1, **fields) -> WorkflowRun:
    return run_upsert(meta=RunMetadata(repository="o/r", run_id=run_id, **fields))


def ingest(run: WorkflowRun, paths: list[Path]):
    return run_ingest_artifacts(run=run, sources=artifact_inputs_from_paths(paths))


def snapshot() -> dict:
    models = (Artifact, Cell, Config, EvalResult, Image, RunStats, ChangelogEntry, ServerLog)
    return {
        model.__name__: sorted(map(str, model.objects.values_list("pk", "modified")))
        for model in models
    }


def test_bmk_artifacts_become_cells_with_config_and_image(tmp_path):
    run = run_for()
    report = ingest(run, [bmk_zip(tmp_path, 4), bmk_zip(tmp_path, 8)])
    assert report.totals["cells_created"] == 2
    assert not report.failed
    cell = Cell.objects.get(concurrency=8)
    assert cell.status == CellStatus.OK
    assert cell.config.hardware == "b200"
    assert cell.config.runner_label == "b200-nv_0"
    assert cell.image.repository == "lmsysorg/sglang"
    assert cell.tput_per_gpu > 0
    assert "mean_ttft" in cell.extra_metrics
    assert Config.objects.count() == 1
    assert set(Artifact.objects.values_list("state", flat=True)) == {ArtifactState.INGESTED}


def test_ingesting_the_same_input_twice_changes_nothing(tmp_path):
    run = run_for()
    paths = [bmk_zip(tmp_path, 4), bmk_zip(tmp_path, 8)]
    ingest(run, paths)
    before = snapshot()
    report = ingest(run, paths)
    assert report.totals["artifacts_unchanged"] == 2
    assert snapshot() == before


def test_the_aggregate_only_fills_cells_the_per_config_artifacts_lack(tmp_path):
    run = run_for()
    row4 = demo.fixed_seq_row(SERIES, scenario="1k1k", conc=4, rng=demo.random.Random(4))
    row16 = demo.fixed_seq_row(SERIES, scenario="1k1k", conc=16, rng=demo.random.Random(16))
    aggregate = write_zip(
        tmp_path,
        "results_bmk",
        {"agg_bmk.json": json.dumps([{**row4, "tput_per_gpu": 1.0}, row16])},
    )
    report = ingest(run, [aggregate, bmk_zip(tmp_path, 4)])
    assert report.totals["cells_created"] == 2
    assert Cell.objects.get(concurrency=4).tput_per_gpu == pytest.approx(row4["tput_per_gpu"])
    assert Cell.objects.get(concurrency=4).artifact.name.startswith("bmk_")


def test_a_broken_artifact_is_recorded_and_the_others_still_go_in(tmp_path):
    run = run_for()
    broken = tmp_path / "bmk_broken.zip"
    broken.write_bytes(b"PK\x03\x04 this is not really a zip")
    bad_json = write_zip(tmp_path, "run-stats", {"run_stats.json": "{not json"})
    report = ingest(run, [broken, bad_json, bmk_zip(tmp_path, 4)])
    states = dict(Artifact.objects.values_list("name", "state"))
    assert states["bmk_broken"] == ArtifactState.FAILED
    assert states["run-stats"] == ArtifactState.FAILED
    assert Artifact.objects.get(name="bmk_broken").error
    assert Cell.objects.count() == 1
    assert len(report.failed) == 2


def test_a_failure_while_writing_rolls_the_whole_run_back(tmp_path):
    run = run_for()
    paths = [bmk_zip(tmp_path, 4), bmk_zip(tmp_path, 8)]

    def insert_failing_on_cells(model, rows, **kwargs):
        if model is Cell:
            raise RuntimeError("the database went away")
        rows_insert(model, rows, **kwargs)  # the artifacts are written, then rolled back

    with (
        mock.patch("runs.services.rows_insert", side_effect=insert_failing_on_cells),
        pytest.raises(RuntimeError),
    ):
        ingest(run, paths)
    assert Cell.objects.count() == 0
    assert Artifact.objects.count() == 0


def test_unknown_names_are_kept_and_flagged(tmp_path):
    run = run_for()
    ingest(run, [bmk_zip(tmp_path, 4, hw="tpu-v9_0", framework="warpdrive")])
    cell = Cell.objects.get()
    assert cell.config.framework == "warpdrive"
    flagged = set(UnmappedValue.objects.values_list("kind", "value"))
    assert ("framework", "warpdrive") in flagged
    assert any(kind == "hardware" for kind, _ in flagged)


def test_official_means_a_push_to_main_of_the_sweep_workflow():
    assert run_is_official(event="push", head_branch="main", workflow_path="")
    assert run_is_official(
        event="push", head_branch="main", workflow_path=".github/workflows/run-sweep.yml"
    )
    assert not run_is_official(
        event="push", head_branch="main", workflow_path=".github/workflows/lint.yml"
    )
    assert not run_is_official(event="pull_request", head_branch="main", workflow_path="")
    assert not run_is_official(event="push", head_branch="feature", workflow_path="")


def test_run_upsert_is_unique_per_attempt_and_keeps_known_fields():
    first = run_for(run_id=7, head_sha="ABC", event="push", head_branch="main")
    again = run_for(run_id=7)
    assert again.pk == first.pk
    assert again.head_sha == "abc"
    assert again.is_official
    second_attempt = run_upsert(meta=RunMetadata(repository="o/r", run_id=7, run_attempt=2))
    assert second_attempt.pk != first.pk


@pytest.mark.parametrize(
    ("reference", "expected"),
    [
        (
            "rocm/atom-dev:nightly_202609221542",
            ("docker.io", "rocm/atom-dev", "nightly_202609221542"),
        ),
        (
            "nvcr.io/nvidia/tensorrt-llm/release:1.2.0",
            ("nvcr.io", "nvidia/tensorrt-llm/release", "1.2.0"),
        ),
        ("localhost:5000/img", ("localhost:5000", "img", "")),
        ("ubuntu", ("docker.io", "ubuntu", "")),
    ],
)
def test_image_reference_split(reference, expected):
    parts = image_reference_split(reference)
    assert (parts["registry"], parts["repository"], parts["tag"]) == expected


def test_ingest_artifacts_command_prints_and_is_idempotent(tmp_path):
    path = bmk_zip(tmp_path, 4)
    out = _call("ingest_artifacts", str(path), "--run-id", "99", "--branch", "main")
    assert "ingested" in out and "cells_created=1" in out
    out = _call("ingest_artifacts", str(path), "--run-id", "99")
    assert "already ingested" in out
    assert Cell.objects.count() == 1


def test_ingest_artifacts_command_rejects_missing_paths(tmp_path):
    with pytest.raises(CommandError, match="no such file"):
        call_command("ingest_artifacts", str(tmp_path / "nope.zip"), "--run-id", "1")


def test_unzipped_folders_are_ingested_like_zips(tmp_path):
    folder = tmp_path / "run-stats"
    folder.mkdir()
    (folder / "run_stats.json").write_text(
        json.dumps({"mi355x-amds_0": {"n_success": 3, "total": 4}})
    )
    ingest(run_for(), [folder])
    stats = RunStats.objects.get()
    assert (stats.hardware, stats.n_success, stats.total) == ("mi355x", 3, 4)


def test_load_demo_builds_official_runs_and_the_seed_pr_run():
    _call("load_demo")
    assert WorkflowRun.objects.filter(is_official=True).count() == 3
    pr_run = WorkflowRun.objects.get(run_id=demo.SEED_PR_RUN_ID)
    assert not pr_run.is_official
    cells = Cell.objects.filter(run=pr_run)
    assert sorted(cells.values_list("concurrency", flat=True)) == [1, 16, 64, 128, 256]
    assert {cell.image.reference for cell in cells} == {demo.SEED_PR_IMAGE}
    assert {cell.config.framework for cell in cells} == {"atom-disagg"}
    assert EvalResult.objects.filter(run=pr_run, task="gsm8k").count() == 3
    assert ServerLog.objects.filter(run=pr_run).count() == 5
    assert ChangelogEntry.objects.filter(run=pr_run).exists()
    assert not Artifact.objects.filter(state=ArtifactState.FAILED).exists()
    before = snapshot()
    _call("load_demo")
    assert snapshot() == before


def _call(*args) -> str:
    from io import StringIO

    out = StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


def changelog_zip(folder: Path, **top_level) -> Path:
    document = {"base_ref": "main~1", "head_ref": "main", "entries": [], **top_level}
    return write_zip(
        folder, "changelog-metadata", {"changelog_metadata.json": json.dumps(document)}
    )


def test_a_merge_run_that_reused_a_stored_pr_run_links_to_it(tmp_path):
    pr_run = run_for(run_id=10, event="pull_request", head_branch="feature")
    ingest(pr_run, [bmk_zip(tmp_path, 4)])
    merge = run_for(run_id=11, event="push", head_branch="main")
    ingest(merge, [changelog_zip(tmp_path, **{"reuse-sweep-run": 10})])
    merge.refresh_from_db()
    assert merge.source_run == pr_run
    assert merge.cells.count() == 0
    assert Cell.objects.get().run == pr_run  # the measurement keeps its origin


def test_a_merge_ingested_before_its_source_is_linked_when_the_source_arrives(tmp_path):
    merge = run_for(run_id=21, event="push", head_branch="main")
    ingest(merge, [changelog_zip(tmp_path, reused_run_id=20, reused_run_attempt=2)])
    merge.refresh_from_db()
    assert (merge.reused_run_id, merge.reused_run_attempt, merge.source_run) == (20, 2, None)
    run_for(run_id=20)  # attempt 1 is not the one reused
    merge.refresh_from_db()
    assert merge.source_run is None
    source = run_upsert(meta=RunMetadata(repository="o/r", run_id=20, run_attempt=2))
    merge.refresh_from_db()
    assert merge.source_run == source


def test_ingest_artifacts_command_records_a_reuse(tmp_path):
    source = run_for(run_id=30)
    _call("ingest_artifacts", str(changelog_zip(tmp_path)), "--run-id", "31", "--repo", "o/r",
          "--reused-run", "30")  # fmt: skip
    assert WorkflowRun.objects.get(run_id=31).source_run == source
