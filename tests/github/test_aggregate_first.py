"""results_bmk first: per-cell uploads older than it are recorded without a download."""

import json
import random
from datetime import UTC, datetime, timedelta

import pytest

from runs import demo
from runs.jobs import ingest_job_request
from runs.models import Artifact, ArtifactState, Cell, IngestJob, IngestJobState
from tests.github.fakegithub import FakeGitHub, attempt_window, github_time
from tests.ziputil import make_zip

pytestmark = pytest.mark.django_db(transaction=True)

RUN_ID, OTHER_RUN_ID = 36_000_000_001, 36_000_000_002
STARTED, ENDED = attempt_window(1)
DURING_SWEEP = STARTED + timedelta(minutes=5)
AFTER_SWEEP = ENDED - timedelta(minutes=2)
CONCURRENCIES = (4, 8, 16, 32, 64)
KEPT_UNTIL = github_time(datetime.now(UTC) + timedelta(days=60))


def zip_of(name: str, document) -> bytes:
    return make_zip({name: json.dumps(document).encode()})


def sweep_rows() -> dict[str, dict]:
    """Five fixed-seq cells and two agentic ones, by artifact name."""
    rng = random.Random(3)
    series = demo.FIXED_SEQ_SERIES[0]
    rows = {}
    for conc in CONCURRENCIES:
        rf = demo.result_name(series, exp=f"{series.model_prefix}_1k1k", conc=conc)
        rows[f"bmk_{rf}"] = demo.fixed_seq_row(series, scenario="1k1k", conc=conc, rng=rng)
    agentic = demo.AGENTIC_SERIES[0]
    for conc in (16, 32):
        rf = demo.result_name(agentic, exp="dsv4_agentic", conc=conc)
        rows[f"bmk_agentic_{rf}"] = demo.agentic_row(
            agentic, conc=conc, tput=900 + conc, p90_e2el=4 + conc / 10, disagg=False
        )
    return rows


def member_name(artifact: str) -> str:
    if artifact.startswith("bmk_agentic_"):
        return artifact.removeprefix("bmk_agentic_") + ".json"
    return "agg_" + artifact.removeprefix("bmk_") + ".json"


def upload(fake: FakeGitHub, run_id: int, name: str, body: bytes, *, created_at) -> None:
    fake.add_artifact(run_id, name, body, created_at=created_at, expires_at=KEPT_UNTIL)


def add_sweep(
    fake: FakeGitHub,
    run_id: int,
    rows: dict[str, dict],
    *,
    aggregate_rows: list | None = None,
    aggregate_at=AFTER_SWEEP,
    with_aggregate: bool = True,
) -> None:
    fake.add_run(run_id)
    for name, row in rows.items():
        upload(fake, run_id, name, zip_of(member_name(name), row), created_at=DURING_SWEEP)
    if with_aggregate:
        document = list(rows.values()) if aggregate_rows is None else aggregate_rows
        upload(
            fake, run_id, "results_bmk", zip_of("agg_bmk.json", document), created_at=aggregate_at
        )


def ingest(fake: FakeGitHub, run_id: int = RUN_ID) -> IngestJob:
    job, _ = ingest_job_request(repository=fake.repo, run_id=run_id, requested_by="test")
    job.refresh_from_db()
    assert job.state == IngestJobState.SUCCEEDED, job.error
    return job


def downloaded(fake: FakeGitHub) -> list[str]:
    """The artifact ids the blob host served, in order."""
    return [request.path.split("/")[2] for request in fake.blob_requests]


def cell_values(run_id: int) -> list[tuple]:
    return sorted(
        Cell.objects.filter(run__run_id=run_id).values_list(
            "config__identity_hash", "scenario", "concurrency", "status", "tput_per_gpu",
            "median_e2el", "p90_e2el", "num_requests_successful", "extra_metrics",
        )
    )  # fmt: skip


def test_a_finished_sweep_downloads_only_its_aggregate(fake_github_settings, fake_github):
    rows = sweep_rows()
    add_sweep(fake_github, RUN_ID, rows)

    job = ingest(fake_github)

    assert len(downloaded(fake_github)) == 1
    assert job.artifacts_total == job.artifacts_done == 1
    assert Cell.objects.filter(run__run_id=RUN_ID).count() == len(rows)
    per_cell = Artifact.objects.exclude(name="results_bmk")
    assert {artifact.state for artifact in per_cell} == {ArtifactState.SKIPPED}
    assert all("results_bmk holds its rows" in artifact.error for artifact in per_cell)
    reasons = {item["name"]: item["reason"] for item in job.skipped}
    assert set(reasons) == set(rows)


def test_the_run_page_sums_up_the_skipped_uploads_by_reason(
    client, fake_github_settings, fake_github
):
    rows = sweep_rows()
    add_sweep(fake_github, RUN_ID, rows)
    ingest(fake_github)

    page = client.get(f"/runs/{RUN_ID}/").content.decode()

    assert f"{len(rows)} artifacts skipped: {len(rows)} not downloaded: results_bmk" in page


def test_the_aggregate_gives_the_same_cells_as_the_per_cell_uploads(
    fake_github_settings, fake_github
):
    rows = sweep_rows()
    add_sweep(fake_github, RUN_ID, rows)
    add_sweep(fake_github, OTHER_RUN_ID, rows, with_aggregate=False)

    ingest(fake_github, RUN_ID)
    ingest(fake_github, OTHER_RUN_ID)

    assert len(downloaded(fake_github)) == 1 + len(rows)
    assert cell_values(RUN_ID) == cell_values(OTHER_RUN_ID)


def test_an_upload_newer_than_the_aggregate_is_downloaded_and_wins(
    fake_github_settings, fake_github
):
    rows = sweep_rows()
    add_sweep(fake_github, RUN_ID, rows)
    name = next(iter(rows))
    rerun = {**rows[name], "tput_per_gpu": 12345.0}
    later = AFTER_SWEEP + timedelta(minutes=1)
    upload(fake_github, RUN_ID, name, zip_of(member_name(name), rerun), created_at=later)

    job = ingest(fake_github)

    assert job.artifacts_total == 2
    assert Artifact.objects.get(name=name).state == ArtifactState.INGESTED
    assert Cell.objects.filter(tput_per_gpu=12345.0).count() == 1


@pytest.mark.parametrize(
    "aggregate_rows",
    [
        pytest.param("bad row", id="a-bad-row"),
        pytest.param("missing row", id="fewer-rows-than-uploads"),
        pytest.param("no disagg", id="rows-without-their-disagg-flag"),
        pytest.param("not json", id="unreadable"),
    ],
)
def test_an_aggregate_that_cannot_stand_in_leaves_every_upload_downloaded(
    fake_github_settings, fake_github, aggregate_rows
):
    rows = sweep_rows()
    good = list(rows.values())
    document = {
        "bad row": [*good[1:], {"hw": "b200"}],
        "missing row": good[1:],
        "no disagg": [
            {key: value for key, value in row.items() if key != "disagg"} for row in good
        ],
        "not json": None,
    }[aggregate_rows]
    add_sweep(fake_github, RUN_ID, rows, aggregate_rows=document)
    if document is None:  # replace the aggregate with a zip that holds no JSON
        later = AFTER_SWEEP + timedelta(minutes=1)
        upload(fake_github, RUN_ID, "results_bmk", b"not a zip", created_at=later)

    job, _ = ingest_job_request(repository=fake_github.repo, run_id=RUN_ID, requested_by="t")
    job.refresh_from_db()

    assert len(downloaded(fake_github)) == 1 + len(rows)
    per_cell = Artifact.objects.exclude(name="results_bmk")
    assert {artifact.state for artifact in per_cell} == {ArtifactState.INGESTED}
    assert Cell.objects.filter(run__run_id=RUN_ID).count() == len(rows)


def test_an_aggregate_uploaded_with_the_last_cell_does_not_stand_in_for_it(
    fake_github_settings, fake_github
):
    rows = sweep_rows()
    add_sweep(fake_github, RUN_ID, rows, aggregate_at=DURING_SWEEP)

    job = ingest(fake_github)

    assert job.artifacts_total == 1 + len(rows)


def test_reingesting_downloads_nothing_and_changes_nothing(fake_github_settings, fake_github):
    add_sweep(fake_github, RUN_ID, sweep_rows())
    ingest(fake_github)
    before = list(Cell.objects.values_list("pk", "modified"))
    served = len(fake_github.blob_requests)

    second = ingest(fake_github)

    assert len(fake_github.blob_requests) == served
    assert second.artifacts_total == 0
    assert list(Cell.objects.values_list("pk", "modified")) == before
    reasons = {item["reason"] for item in second.skipped}
    assert "already ingested" in reasons
    assert any("results_bmk holds its rows" in reason for reason in reasons)
