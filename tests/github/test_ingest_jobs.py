"""Ingestion from GitHub end to end: triggers -> job -> fake GitHub on loopback -> rows."""

import hashlib
import hmac
import io
import json
import zipfile
from datetime import UTC, datetime, timedelta

import pytest
from django.core.management import CommandError, call_command

from runs import demo, jobs, services, tasks
from runs.github import ArtifactInfo, RateLimited
from runs.models import (
    Artifact,
    ArtifactState,
    Cell,
    IngestJob,
    IngestJobState,
    RunAuditEvent,
    WebhookDelivery,
    WorkflowRun,
)
from tests.github.fakegithub import FakeGitHub, github_time

pytestmark = pytest.mark.django_db(transaction=True)

RUN_ID = 35855544139
SECRET = "It's a Secret to Everybody"
LATER = github_time(datetime.now(UTC) + timedelta(days=60))


def zip_of(files: dict[str, object]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, content in files.items():
            archive.writestr(name, content if isinstance(content, str) else json.dumps(content))
    return buffer.getvalue()


def add_seed_artifacts(fake: FakeGitHub, run_id: int = RUN_ID) -> None:
    """The seed PR run's five agentic cells, plus artifacts that are skipped or expired."""
    series = demo.SEED_PR_SERIES
    for conc, tput, p90 in demo.SEED_PR_POINTS:
        row = demo.agentic_row(series, conc=conc, tput=tput, p90_e2el=p90, disagg=True)
        rf = demo.result_name(series, exp="dsv4_agentic", conc=conc, disagg=True)
        fake.add_artifact(
            run_id, f"bmk_agentic_{rf}", zip_of({f"{rf}.json": row}), expires_at=LATER
        )
    fake.add_artifact(
        run_id, "gpu_metrics_x", zip_of({"gpu_metrics.csv": "a,b\n"}), expires_at=LATER
    )
    fake.add_artifact(run_id, "run-stats", zip_of({"run_stats.json": {}}), expired=True)


@pytest.fixture
def github_ready(fake_github_settings, fake_github):
    fake_github_settings.GITHUB_WEBHOOK_SECRET = SECRET
    fake_github.add_run(RUN_ID, event="pull_request", head_branch="pr-branch",
                        pull_requests=[{"number": 2731}])  # fmt: skip
    add_seed_artifacts(fake_github)
    return fake_github


def signed_post(client, payload: dict, *, event="workflow_run", delivery="d-1", secret=SECRET):
    body = json.dumps(payload).encode()
    signature = "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
    return client.post(
        "/webhooks/github/",
        data=body,
        content_type="application/json",
        headers={
            "X-Hub-Signature-256": signature,
            "X-GitHub-Event": event,
            "X-GitHub-Delivery": delivery,
        },
    )


def completed_payload(run_id: int = RUN_ID, attempt: int = 1) -> dict:
    return {
        "action": "completed",
        "workflow_run": {"id": run_id, "run_attempt": attempt},
        "repository": {"full_name": "SemiAnalysisAI/InferenceX"},
    }


def test_webhook_completed_run_is_ingested(client, github_ready):
    response = signed_post(client, completed_payload())
    assert response.status_code == 202
    job = IngestJob.objects.get(pk=response.json()["job"])
    assert job.state == IngestJobState.SUCCEEDED, job.error
    assert job.artifacts_done == job.artifacts_total == 5
    assert job.counts["cells_created"] == 5
    assert set(job.timings) == {"list_seconds", "download_seconds", "store_seconds"}
    reasons = {item["name"]: item["reason"] for item in job.skipped}
    assert "not read" in reasons["gpu_metrics_x"]
    assert reasons["run-stats"] == "artifact expired"
    run = WorkflowRun.objects.get(run_id=RUN_ID)
    assert run.pr_numbers == [2731] and not run.is_official
    assert Cell.objects.filter(run=run).count() == 5
    assert Artifact.objects.get(name="run-stats").state == ArtifactState.SKIPPED


def test_webhook_redelivery_is_not_processed_twice(client, github_ready):
    signed_post(client, completed_payload(), delivery="same")
    response = signed_post(client, completed_payload(), delivery="same")
    assert response.json()["status"] == "duplicate delivery"
    assert IngestJob.objects.count() == 1
    assert WebhookDelivery.objects.count() == 1


@pytest.mark.parametrize(
    ("headers", "status"),
    [({}, 401), ({"X-Hub-Signature-256": "sha256=" + "0" * 64}, 403),
     ({"X-Hub-Signature": "sha1=abc"}, 401)],
)  # fmt: skip
def test_webhook_without_a_valid_signature_starts_nothing(client, settings, headers, status):
    settings.GITHUB_WEBHOOK_SECRET = SECRET
    response = client.post(
        "/webhooks/github/",
        data=json.dumps(completed_payload()),
        content_type="application/json",
        headers={"X-GitHub-Event": "workflow_run", "X-GitHub-Delivery": "x", **headers},
    )
    assert response.status_code == status
    assert not IngestJob.objects.exists()


def test_webhook_answers_ping_and_ignores_other_actions(client, settings):
    settings.GITHUB_WEBHOOK_SECRET = SECRET
    assert signed_post(client, {"zen": "hi"}, event="ping").status_code == 200
    payload = {**completed_payload(), "action": "requested"}
    assert signed_post(client, payload, delivery="d-2").status_code == 204
    assert not IngestJob.objects.exists()


def test_reingesting_a_finished_run_changes_nothing(github_ready):
    call_command("ingest_run", str(RUN_ID), stdout=io.StringIO())
    cells_before = list(Cell.objects.values_list("pk", "modified"))
    out = io.StringIO()
    call_command("ingest_run", str(RUN_ID), stdout=out)
    assert "succeeded" in out.getvalue()
    assert list(Cell.objects.values_list("pk", "modified")) == cells_before
    second = IngestJob.objects.order_by("-pk").first()
    assert second.artifacts_total == 0
    assert sum(item["reason"] == "already ingested" for item in second.skipped) == 5


def test_ingest_run_command_prints_progress(github_ready):
    out = io.StringIO()
    call_command("ingest_run", str(RUN_ID), stdout=out)
    text = out.getvalue()
    assert "5/5 artifacts" in text
    assert "skipped gpu_metrics_x" in text


def test_ingest_run_command_fails_clearly_for_a_missing_run(fake_github_settings):
    with pytest.raises(CommandError, match="does not exist"):
        call_command("ingest_run", "123", stdout=io.StringIO())
    assert IngestJob.objects.get().state == IngestJobState.FAILED


def test_a_broken_artifact_makes_the_job_partial(github_ready):
    github_ready.add_artifact(RUN_ID, "results_bmk", b"PK\x03\x04garbage", expires_at=LATER)
    with pytest.raises(CommandError, match="failed artifacts"):
        call_command("ingest_run", str(RUN_ID), stdout=io.StringIO())
    job = IngestJob.objects.get()
    assert job.state == IngestJobState.PARTIAL
    assert "results_bmk" in job.error
    assert Cell.objects.count() == 5


def test_only_one_job_per_run_is_active(settings):
    settings.CELERY_TASK_ALWAYS_EAGER = False  # keep the job queued
    from infx_site.celery import app

    app.conf.task_always_eager = False
    try:
        first, created = jobs.ingest_job_request(repository="o/r", run_id=5, requested_by="a")
        again, created_again = jobs.ingest_job_request(repository="o/r", run_id=5, requested_by="b")
    finally:
        app.conf.task_always_eager = True
    assert created and not created_again
    assert again.pk == first.pk


def test_newest_unexpired_upload_per_name_wins():
    def artifact(artifact_id, name, day, expired=False):
        created = datetime(2026, 9, day, tzinfo=UTC)
        return ArtifactInfo(artifact_id, name, 10, "", created, created, expired)

    chosen = jobs.artifacts_select(
        [artifact(1, "a", 1), artifact(2, "a", 3), artifact(3, "b", 5), artifact(4, "b", 6, True)]
    )
    assert [item.id for item in chosen] == [2, 3]
    attempt_one = jobs.artifacts_select(
        [artifact(1, "a", 1), artifact(2, "a", 3)],
        attempt_ended_at=datetime(2026, 9, 2, tzinfo=UTC),
    )
    assert [item.id for item in attempt_one] == [1]


def test_rate_limits_reschedule_instead_of_sleeping():
    limited = RateLimited("slow down", wait_seconds=61, primary=False)
    assert tasks.retry_delay(limited, retries=0) == 61
    delays = [tasks.retry_delay(OSError(), retries=n) for n in range(3)]
    assert all(delay > 0 for delay in delays)


def test_a_rate_limited_eager_job_fails_with_the_reason(github_ready):
    github_ready.fail_next_api_requests(
        status=403, headers={"retry-after": "61"}, body="secondary rate limit", count=3
    )
    job, _ = jobs.ingest_job_request(
        repository="SemiAnalysisAI/InferenceX", run_id=RUN_ID, requested_by="test"
    )
    job.refresh_from_db()
    assert job.state == IngestJobState.FAILED
    assert "rate limit" in job.error


def test_a_job_interrupted_midway_completes_when_started_again(github_ready, monkeypatch):
    job = IngestJob.objects.create(
        repository="SemiAnalysisAI/InferenceX", github_run_id=RUN_ID, requested_by="test"
    )
    real_fetch = jobs._artifact_fetch
    calls = {"n": 0}

    def dying_fetch(*args, **kwargs):
        calls["n"] += 1
        if calls["n"] == 3:
            raise SystemExit("worker killed")
        return real_fetch(*args, **kwargs)

    monkeypatch.setattr(jobs, "_artifact_fetch", dying_fetch)
    with pytest.raises(SystemExit):
        jobs.ingest_job_execute(job_id=job.pk)
    job.refresh_from_db()
    assert job.state == IngestJobState.RUNNING
    assert Cell.objects.count() == 0  # nothing half-written
    monkeypatch.setattr(jobs, "_artifact_fetch", real_fetch)
    job = jobs.ingest_job_execute(job_id=job.pk)
    assert job.state == IngestJobState.SUCCEEDED
    assert job.attempts == 2
    assert Cell.objects.count() == 5


def test_run_page_shows_the_jobs_progress(client, github_ready):
    call_command("ingest_run", str(RUN_ID), stdout=io.StringIO())
    page = client.get(f"/runs/{RUN_ID}/").content.decode()
    assert "Ingest job" in page and "Succeeded" in page
    assert "5 / 5 artifacts" in page
    fragment = client.get(f"/runs/{RUN_ID}/job/").content.decode()
    assert 'id="job-progress"' in fragment and "hx-get" not in fragment


def test_an_active_job_fragment_polls_itself(client):
    IngestJob.objects.create(repository="o/r", github_run_id=9, requested_by="t", state="running")
    fragment = client.get("/runs/9/job/").content.decode()
    assert 'hx-trigger="every 2s"' in fragment


@pytest.fixture
def admin_user(django_user_model):
    return django_user_model.objects.create_superuser("boss", "boss@example.com", "pw")


def test_hide_override_and_purge_are_audited(admin_user, github_ready):
    call_command("ingest_run", str(RUN_ID), stdout=io.StringIO())
    run = WorkflowRun.objects.get()
    services.run_hide(run=run, actor=admin_user, reason="bad node")
    services.run_conclusion_override(
        run=run, conclusion="failure", actor=admin_user, reason="flaky"
    )
    run.refresh_from_db()
    assert run.hidden_from_official and run.effective_conclusion == "failure"
    deleted = services.run_purge(run=run, actor=admin_user, reason="garbage")
    assert deleted["runs.Cell"] == 5
    assert not WorkflowRun.objects.exists()
    actions = list(RunAuditEvent.objects.order_by("at").values_list("action", "actor_name"))
    assert actions == [
        ("hide", "boss"),
        ("override_conclusion", "boss"),
        ("purge", "boss"),
    ]
    with pytest.raises(ValueError, match="reason"):
        services.run_hide(run=WorkflowRun(pk=1), actor=admin_user, reason=" ")


def test_admin_hide_action_asks_for_a_reason(client, admin_user):
    run = WorkflowRun.objects.create(repository="o/r", run_id=3)
    client.force_login(admin_user)
    url = "/admin/runs/workflowrun/"
    form = {"action": "hide", "_selected_action": [run.pk]}
    assert "give a reason" in client.post(url, form).content.decode()
    client.post(url, {**form, "apply": "1", "reason": "broken GPU"})
    run.refresh_from_db()
    assert run.hidden_reason == "broken GPU"
    assert RunAuditEvent.objects.get().reason == "broken GPU"


def test_a_merge_run_that_reused_a_pr_run_fetches_and_links_it(github_ready):
    merge_id = RUN_ID + 1
    github_ready.add_run(merge_id)
    changelog = {"base_ref": "a", "head_ref": "b", "entries": [], "reuse-sweep-run": RUN_ID}
    github_ready.add_artifact(
        merge_id, "changelog-metadata", zip_of({"changelog_metadata.json": changelog}),
        expires_at=LATER,
    )  # fmt: skip
    call_command("ingest_run", str(merge_id), stdout=io.StringIO())
    merge = WorkflowRun.objects.get(run_id=merge_id)
    source = WorkflowRun.objects.get(run_id=RUN_ID)
    assert merge.source_run == source and merge.is_official
    assert source.cells.count() == 5 and merge.cells.count() == 0


def test_ingesting_an_earlier_attempt_leaves_out_uploads_of_a_later_one(github_ready):
    github_ready.add_run(RUN_ID, attempt=2)
    later = demo.result_name(demo.SEED_PR_SERIES, exp="dsv4_agentic", conc=512, disagg=True)
    row = demo.agentic_row(demo.SEED_PR_SERIES, conc=512, tput=1.0, p90_e2el=9.0, disagg=True)
    github_ready.add_artifact(
        RUN_ID, f"bmk_agentic_{later}", zip_of({f"{later}.json": row}), attempt=2, expires_at=LATER
    )
    call_command("ingest_run", str(RUN_ID), "--attempt", "1", stdout=io.StringIO())
    first = WorkflowRun.objects.get(run_id=RUN_ID, run_attempt=1)
    assert sorted(first.cells.values_list("concurrency", flat=True)) == [1, 16, 64, 128, 256]
    call_command("ingest_run", str(RUN_ID), stdout=io.StringIO())
    latest = WorkflowRun.objects.get(run_id=RUN_ID, run_attempt=2)
    assert 512 in latest.cells.values_list("concurrency", flat=True)
