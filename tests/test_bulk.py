"""rows_insert: COPY on PostgreSQL, bulk_create on SQLite; the same rows either way."""

import pytest
from django.utils import timezone

from runs.bulk import rows_insert
from runs.models import Artifact, ArtifactState, Cell, Config, WorkflowRun

pytestmark = pytest.mark.django_db


def test_rows_insert_writes_defaults_timestamps_json_and_integers():
    run = WorkflowRun.objects.create(repository="o/r", run_id=1)
    config = Config.objects.create(
        identity_hash="h" * 64, model_prefix="dsr1", hardware="b200", framework="sglang",
        precision="fp8", runner_label="b200_0",
    )  # fmt: skip
    before = timezone.now()
    rows_insert(
        Cell,
        [
            {
                "run_id": run.pk,
                "config_id": config.pk,
                "scenario": "1k1k",
                "concurrency": 8,
                "tput_per_gpu": 1234.5,
                "num_requests_total": 5177.0,  # metrics arrive as floats
                "extra_metrics": {"mean_tpot": 0.02, "note": "quote ' and tab \t"},
                "invalid_metrics": {"p99_e2el": "NaN"},
            },
            {"run_id": run.pk, "config_id": config.pk, "scenario": "8k1k", "concurrency": 8},
        ],
    )

    first, second = Cell.objects.order_by("scenario")
    assert first.num_requests_total == 5177
    assert first.extra_metrics == {"mean_tpot": 0.02, "note": "quote ' and tab \t"}
    assert first.invalid_metrics == {"p99_e2el": "NaN"}
    assert first.created >= before and first.modified >= before
    assert second.status == "ok" and second.extra_metrics == {} and second.tput_per_gpu is None


def test_rows_insert_of_nothing_does_nothing():
    rows_insert(Artifact, [])
    assert not Artifact.objects.exists()


def test_rows_insert_keeps_hostile_text_as_text():
    run = WorkflowRun.objects.create(repository="o/r", run_id=2)
    hostile = "<script>alert(1)</script>\\N\n\r\\.\x7f'; DROP TABLE runs_cell; --"
    rows_insert(
        Artifact,
        [{"run_id": run.pk, "github_id": 7, "name": hostile, "kind": "unknown",
          "state": ArtifactState.SKIPPED, "error": hostile, "row_errors": [hostile]}],
    )  # fmt: skip
    artifact = Artifact.objects.get()
    assert artifact.name == artifact.error == hostile
    assert artifact.row_errors == [hostile]
