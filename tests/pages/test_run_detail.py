"""The run page: summary, cells (failed ones with their reason), evals with pass/fail, images,
changelog, artifacts, jobs and links to the overlay pages."""

import pytest

from runs import demo
from runs.models import Cell, CellStatus, Config, EvalThreshold, WorkflowRun
from tests.factories import CellFactory, ConfigFactory, WorkflowRunFactory

pytestmark = pytest.mark.django_db


def test_the_seed_pr_run_page_has_every_section(client, demo_data):
    response = client.get(f"/runs/{demo.SEED_PR_RUN_ID}/")
    body = response.content.decode()
    assert response.status_code == 200
    assert len(response.context["cells"]) == 5
    assert demo.SEED_PR_IMAGE in body
    assert f"/inference?unofficialRun={demo.SEED_PR_RUN_ID}" in body
    assert f"/evaluation?unofficialRun={demo.SEED_PR_RUN_ID}" in body
    assert "dsv4-fp4-mi355x-atom-disagg-agentic-lmcache-dspark" in body  # changelog
    assert "pull/TBD" in body
    results = {(e.concurrency, e.passed) for e in response.context["evals"]}
    assert results == {(16, True), (128, True), (256, True)}  # dsv4 gsm8k bar is 0.91
    assert body.count(">PASS<") == 3


def test_eval_pass_fail_follows_the_thresholds_in_the_database(client, demo_data):
    EvalThreshold.objects.filter(model_prefix="dsv4", task="gsm8k").update(threshold=0.95)
    response = client.get(f"/runs/{demo.SEED_PR_RUN_ID}/")
    results = {e.concurrency: e.passed for e in response.context["evals"]}
    assert results == {16: True, 128: True, 256: False}


def test_failed_cells_show_their_reason(client, db):
    cell = CellFactory(status=CellStatus.FAILED, failure_reason="no successful request")
    body = client.get(f"/runs/{cell.run.run_id}/").content.decode()
    assert "no successful request" in body and "1 failed" in body


def test_a_merge_that_reused_a_pr_run_shows_the_pr_runs_cells(client, db):
    source = CellFactory().run
    merge = WorkflowRunFactory(source_run=source)
    response = client.get(f"/runs/{merge.run_id}/")
    assert [cell.run for cell in response.context["cells"]] == [source]
    assert f"Measured by run {source.run_id}" in response.content.decode()


def test_hostile_strings_from_artifacts_are_escaped(client, db):
    config = ConfigFactory(framework="<script>alert(1)</script>", identity_hash="x" * 64)
    run = WorkflowRunFactory(head_branch="<img src=x onerror=alert(1)>")
    CellFactory(run=run, config=config)
    body = client.get(f"/runs/{run.run_id}/").content.decode()
    assert "<script>alert(1)" not in body and "<img src=x" not in body
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in body


def test_run_page_query_count_does_not_grow_with_cells(
    client, demo_data, django_assert_max_num_queries
):
    run = WorkflowRun.objects.get(run_id=35700000000)
    assert Cell.objects.filter(run=run).count() > 100
    assert Config.objects.count() > 10
    with django_assert_max_num_queries(20):
        client.get(f"/runs/{run.run_id}/")


def test_unknown_run_is_a_404(client, db):
    assert client.get("/runs/123/").status_code == 404
