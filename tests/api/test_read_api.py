"""The read endpoints: filters, pagination, one run, conditional GET, errors, query counts."""

import json
from datetime import UTC, datetime

import pytest
from django.core.cache import cache
from rest_framework.throttling import SimpleRateThrottle

from runs.api import server_error_page
from runs.models import Cell, Config, IngestJobState
from tests.factories import (
    CellFactory,
    ConfigFactory,
    IngestJobFactory,
    WorkflowRunFactory,
)

SEED_PR_RUN_ID = 35855544139
SEED_PR_SHA = "1ed4ab45c0de5f1e4b7a2d9c3e8f6a0b1c2d3e4f"


def run_ids(response) -> list[int]:
    assert response.status_code == 200, response.content
    return [row["run_id"] for row in response.json()["results"]]


def assert_error(response, *, status: int, code: str) -> dict:
    assert response.status_code == status
    body = response.json()
    assert set(body) == {"error"}
    assert body["error"]["status"] == status
    assert body["error"]["code"] == code
    assert isinstance(body["error"]["detail"], str) and body["error"]["detail"]
    return body["error"]


# ---- run filters -----------------------------------------------------------------------------


@pytest.fixture
def runs(db) -> dict:
    return {
        "merge": WorkflowRunFactory(
            run_id=101,
            head_sha="abcdef1234567890abcdef1234567890abcdef12",
            gh_created_at=datetime(2026, 9, 20, 2, tzinfo=UTC),
        ),
        "pr": WorkflowRunFactory(
            run_id=102,
            event="pull_request",
            head_branch="feature",
            pr_numbers=[123, 4567],
            is_official=False,
            gh_created_at=datetime(2026, 9, 21, 23, 59, tzinfo=UTC),
        ),
        "other_pr": WorkflowRunFactory(
            run_id=103,
            event="pull_request",
            head_branch="feature-2",
            pr_numbers=[1234],
            is_official=False,
            conclusion="failure",
            conclusion_override="success",
            gh_created_at=datetime(2026, 9, 22, tzinfo=UTC),
        ),
        "fork": WorkflowRunFactory(
            run_id=104,
            repository="someone/InferenceX",
            conclusion="failure",
            gh_created_at=datetime(2026, 9, 23, tzinfo=UTC),
        ),
    }


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ({}, [104, 103, 102, 101]),
        ({"pr": 123}, [102]),  # an element of the list, not a substring of 1234
        ({"pr": 1234}, [103]),
        ({"pr": 4567}, [102]),
        ({"pr": 9}, []),
        ({"sha": "ABCDEF1"}, [101]),  # a prefix, any case
        ({"sha": "abcdef1234567890abcdef1234567890abcdef12"}, [101]),
        ({"official": "true"}, [104, 101]),
        ({"official": "false"}, [103, 102]),
        ({"branch": "feature"}, [102]),
        ({"event": "pull_request"}, [103, 102]),
        ({"repository": "someone/InferenceX"}, [104]),
        ({"conclusion": "success"}, [103, 102, 101]),  # an override wins over GitHub's
        ({"conclusion": "failure"}, [104]),
        ({"created_after": "2026-09-21", "created_before": "2026-09-22"}, [103, 102]),
        ({"created_before": "2026-09-20"}, [101]),
    ],
)
def test_run_filters(api_client, runs, query, expected):
    assert run_ids(api_client.get("/api/v1/runs/", query)) == expected


@pytest.mark.parametrize(
    "query",
    [{"sha": "abc12"}, {"sha": "not-a-sha!"}, {"pr": "x"}, {"created_after": "yesterday"}],
)
def test_invalid_run_filters_are_a_400_naming_the_parameter(api_client, runs, query):
    error = assert_error(api_client.get("/api/v1/runs/", query), status=400, code="invalid")
    assert set(error["fields"]) == set(query)


def test_a_run_row_says_what_ci_needs(api_client, runs):
    [row] = api_client.get("/api/v1/runs/", {"pr": 1234}).json()["results"]
    assert row["conclusion"] == "success"
    assert row["github_conclusion"] == "failure"
    assert row["pr_numbers"] == [1234]
    assert row["url"] == "http://testserver/api/v1/runs/103/?attempt=1"
    assert row["created_at"] == "2026-09-22T00:00:00Z"


# ---- pagination ------------------------------------------------------------------------------


def test_page_number_pagination(api_client, runs):
    first = api_client.get("/api/v1/runs/", {"page_size": 3}).json()
    assert first["count"] == 4
    assert [row["run_id"] for row in first["results"]] == [104, 103, 102]
    second = api_client.get(first["next"]).json()
    assert [row["run_id"] for row in second["results"]] == [101]
    assert second["next"] is None
    error = assert_error(api_client.get("/api/v1/runs/", {"page": 9}), status=404, code="not_found")
    assert "Invalid page" in error["detail"]


def test_cells_are_cursor_paginated_in_stored_order(api_client, db):
    run = WorkflowRunFactory()
    cells = CellFactory.create_batch(5, run=run, config=ConfigFactory())
    seen, url = [], "/api/v1/cells/?page_size=2"
    while url:
        page = api_client.get(url).json()
        assert "count" not in page  # a cursor never counts the table
        seen += [row["id"] for row in page["results"]]
        url = page["next"]
    assert seen == [cell.pk for cell in cells]
    assert_error(api_client.get("/api/v1/cells/?cursor=bogus"), status=404, code="not_found")


# ---- cells, evals and the rest, on the demo data ---------------------------------------------


@pytest.mark.parametrize(
    ("query", "count"),
    [
        ({"run": SEED_PR_RUN_ID}, 5),
        ({"run": SEED_PR_RUN_ID, "attempt": 2}, 0),
        ({"run": SEED_PR_RUN_ID, "scenario": "agentic-coding", "concurrency": 64}, 1),
        ({"model": "dsv4", "hardware": "mi355x", "framework": "mori-sglang"}, None),
        ({"model": "dsr1", "precision": "fp4", "status": "ok"}, None),
        ({"status": "failed"}, None),
    ],
)
def test_cell_filters(api_client, demo, db, query, count):
    response = api_client.get("/api/v1/cells/", {**query, "page_size": 1000})
    assert response.status_code == 200
    rows = response.json()["results"]
    expected = Cell.objects.filter(
        **{
            key.replace("model", "config__model_prefix")
            .replace("hardware", "config__hardware")
            .replace("framework", "config__framework")
            .replace("precision", "config__precision")
            .replace("run", "run__run_id")
            .replace("attempt", "run__run_attempt"): value
            for key, value in query.items()
        }
    ).count()
    assert len(rows) == expected
    if count is not None:
        assert expected == count
    for row in rows:
        assert row["run_id"] == query.get("run", row["run_id"])
        assert row["config"]["model_prefix"] == query.get("model", row["config"]["model_prefix"])


def test_a_cell_row(api_client, demo, db):
    url = f"/api/v1/cells/?run={SEED_PR_RUN_ID}&concurrency=64"
    [row] = api_client.get(url).json()["results"]
    assert row["run_id"] == SEED_PR_RUN_ID and row["run_attempt"] == 1
    assert row["config"]["hardware"] == "mi355x"
    assert row["config"]["topology"]
    assert row["image"] == "rocm/atom-dev:nightly_202609221542"
    assert row["scenario"] == "agentic-coding" and row["status"] == "ok"
    assert row["tput_per_gpu"] > 0 and row["p90_e2el"] > 0


def test_the_seed_pr_run_found_by_sha_prefix(api_client, demo, db):
    assert run_ids(api_client.get("/api/v1/runs/", {"sha": SEED_PR_SHA[:7]})) == [SEED_PR_RUN_ID]
    assert run_ids(api_client.get("/api/v1/runs/", {"pr": 2731})) == [SEED_PR_RUN_ID]


def test_evals_of_the_seed_pr_run(api_client, demo, db):
    rows = api_client.get("/api/v1/evals/", {"run": SEED_PR_RUN_ID}).json()["results"]
    assert len(rows) == 3
    for row in rows:
        assert row["config"]["model_prefix"] == "dsv4"
        assert row["threshold"] == 0.91  # models.dsv4.gsm8k
        assert row["passed"] is (min(row["em_strict"], row["em_flexible"]) >= 0.91)


@pytest.mark.parametrize(
    ("path", "query", "count"),
    [
        ("/api/v1/run-stats/", {"run": SEED_PR_RUN_ID}, 1),
        ("/api/v1/run-stats/", {"hardware": "b200"}, 3),
        ("/api/v1/changelog/", {"run": SEED_PR_RUN_ID}, 1),
        ("/api/v1/images/", {"repository": "vllm/vllm-openai"}, 2),
    ],
)
def test_other_lists_filter(api_client, demo, db, path, query, count):
    response = api_client.get(path, query)
    assert response.status_code == 200
    assert response.json()["count"] == count


def test_a_changelog_entry(api_client, demo, db):
    [entry] = api_client.get("/api/v1/changelog/", {"run": SEED_PR_RUN_ID}).json()["results"]
    assert entry["run_id"] == SEED_PR_RUN_ID
    assert entry["config_keys"] and all(isinstance(key, str) for key in entry["config_keys"])


def test_config_filters(api_client, demo, db):
    query = {"model": "dsr1", "hardware": "b200", "precision": "fp4"}
    body = api_client.get("/api/v1/configs/", query).json()
    expected = Config.objects.filter(model_prefix="dsr1", hardware="b200", precision="fp4")
    assert body["count"] == expected.count() > 0
    assert {row["id"] for row in body["results"]} == set(expected.values_list("pk", flat=True))


def test_one_config(api_client, demo, db):
    config_id = api_client.get("/api/v1/configs/", {"model": "dsv4"}).json()["results"][0]["id"]
    config = api_client.get(f"/api/v1/configs/{config_id}/").json()
    assert config["model_prefix"] == "dsv4" and config["tp"] == 8
    assert_error(api_client.get("/api/v1/configs/999999/"), status=404, code="not_found")


# ---- one run ---------------------------------------------------------------------------------


def test_one_run_with_all_its_attempts(api_client, db):
    first = WorkflowRunFactory(run_id=555, run_attempt=1, conclusion="failure")
    WorkflowRunFactory(run_id=555, run_attempt=2, head_sha=first.head_sha)
    CellFactory.create_batch(3, run=first, config=ConfigFactory())
    body = api_client.get("/api/v1/runs/555/").json()
    assert body["run_id"] == 555
    assert [(a["run_attempt"], a["conclusion"]) for a in body["attempts"]] == [
        (1, "failure"),
        (2, "success"),
    ]
    assert [a["cell_count"] for a in body["attempts"]] == [3, 0]

    only = api_client.get("/api/v1/runs/555/", {"attempt": 1}).json()
    assert [a["run_attempt"] for a in only["attempts"]] == [1]
    error = assert_error(
        api_client.get("/api/v1/runs/555/", {"attempt": 3}), status=404, code="not_found"
    )
    assert error["detail"] == "attempt 3 of run 555 is not stored"
    assert_error(api_client.get("/api/v1/runs/556/"), status=404, code="not_found")
    assert_error(api_client.get("/api/v1/runs/555/?attempt=0"), status=400, code="invalid")


def test_a_demo_run_lists_its_artifacts_and_counts(api_client, demo, db):
    [attempt] = api_client.get(f"/api/v1/runs/{SEED_PR_RUN_ID}/").json()["attempts"]
    assert attempt["cell_count"] == 5 and attempt["eval_count"] == 3
    assert attempt["failed_cell_count"] == 0
    assert len(attempt["artifacts"]) == 14
    assert {artifact["state"] for artifact in attempt["artifacts"]} <= {"ingested", "skipped"}


# ---- jobs ------------------------------------------------------------------------------------


def test_jobs(api_client, db):
    job = IngestJobFactory(github_run_id=777, state=IngestJobState.RUNNING, artifacts_total=4)
    IngestJobFactory(github_run_id=778, state=IngestJobState.SUCCEEDED)
    body = api_client.get(f"/api/v1/jobs/{job.pk}/").json()
    assert body["url"] == f"http://testserver/api/v1/jobs/{job.pk}/"
    assert (body["run_id"], body["state"], body["active"]) == (777, "running", True)
    assert body["run"] is None
    listed = api_client.get("/api/v1/jobs/", {"state": "running"}).json()
    assert [row["id"] for row in listed["results"]] == [job.pk]
    assert_error(api_client.get("/api/v1/jobs/999999/"), status=404, code="not_found")


# ---- conditional GET -------------------------------------------------------------------------


def test_etag_and_304_and_a_new_etag_when_the_body_changes(api_client, db):
    job = IngestJobFactory(state=IngestJobState.RUNNING, artifacts_total=10)
    url = f"/api/v1/jobs/{job.pk}/"
    first = api_client.get(url)
    etag = first["ETag"]
    assert etag.startswith('"') and etag.endswith('"')

    unchanged = api_client.get(url, HTTP_IF_NONE_MATCH=etag)
    assert unchanged.status_code == 304
    assert unchanged.content == b""
    assert unchanged["ETag"] == etag

    job.artifacts_done = 5
    job.save()
    changed = api_client.get(url, HTTP_IF_NONE_MATCH=etag)
    assert changed.status_code == 200
    assert changed["ETag"] != etag
    assert changed.json()["progress_percent"] == 50


def test_lists_have_etags_too(api_client, runs):
    first = api_client.get("/api/v1/runs/", {"pr": 123})
    assert (
        api_client.get("/api/v1/runs/", {"pr": 123}, HTTP_IF_NONE_MATCH=first["ETag"]).status_code
        == 304
    )
    other = api_client.get("/api/v1/runs/", {"pr": 1234})
    assert other["ETag"] != first["ETag"]


def test_errors_carry_no_etag(api_client, db):
    assert not api_client.get("/api/v1/jobs/999999/").has_header("ETag")


# ---- errors ----------------------------------------------------------------------------------


def test_error_bodies_share_one_shape(api_client, token_client, db):
    assert_error(token_client.delete("/api/v1/runs/"), status=405, code="method_not_allowed")
    assert_error(api_client.delete("/api/v1/runs/"), status=401, code="not_authenticated")
    assert_error(api_client.get("/api/v1/no-such-thing/"), status=404, code="not_found")
    assert_error(
        api_client.get("/api/v1/runs/1234567890123456789012/"), status=404, code="not_found"
    )
    assert_error(
        api_client.get("/api/v1/runs/", HTTP_ACCEPT="text/csv"), status=406, code="not_acceptable"
    )


def test_throttled_requests_get_the_error_body_and_retry_after(api_client, db, monkeypatch):
    monkeypatch.setattr(SimpleRateThrottle, "THROTTLE_RATES", {"anon": "2/min", "user": None})
    cache.clear()
    try:
        assert api_client.get("/api/v1/jobs/").status_code == 200
        assert api_client.get("/api/v1/jobs/").status_code == 200
        throttled = api_client.get("/api/v1/jobs/")
        assert_error(throttled, status=429, code="throttled")
        assert int(throttled["Retry-After"]) > 0
    finally:
        cache.clear()


# ---- API_READ_REQUIRES_AUTH ------------------------------------------------------------------


def test_reads_are_public_by_default(api_client, runs):
    assert api_client.get("/api/v1/runs/").status_code == 200


@pytest.mark.parametrize(
    "path",
    ["/api/v1/runs/", "/api/v1/runs/101/", "/api/v1/cells/", "/api/v1/evals/", "/api/v1/jobs/"],
)
def test_api_read_requires_auth_makes_reads_private(api_client, token_client, runs, settings, path):
    settings.API_READ_REQUIRES_AUTH = True
    error = assert_error(api_client.get(path), status=401, code="not_authenticated")
    assert error["detail"] == "Authentication credentials were not provided."
    assert token_client.get(path).status_code == 200
    bad = api_client.get(path, HTTP_AUTHORIZATION="Token not-a-real-token")
    assert_error(bad, status=401, code="authentication_failed")


# ---- no N+1 ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "queries"),
    [
        ("/api/v1/runs/", 2),  # count, page
        (f"/api/v1/runs/{SEED_PR_RUN_ID}/", 2),  # attempts with counts, artifacts
        ("/api/v1/cells/?page_size=1000", 1),  # a cursor page needs no count
        ("/api/v1/evals/?page_size=1000", 3),  # count, page, thresholds
        ("/api/v1/configs/", 2),
        ("/api/v1/images/", 2),
        ("/api/v1/run-stats/", 2),
        ("/api/v1/changelog/", 2),
        ("/api/v1/jobs/", 2),
    ],
)
def test_query_counts_do_not_grow_with_rows(
    api_client, demo, db, django_assert_num_queries, path, queries
):
    IngestJobFactory.create_batch(3)
    with django_assert_num_queries(queries):
        response = api_client.get(path)
    assert response.status_code == 200
    body = response.json()
    assert body.get("results") or body.get("attempts")


def test_a_token_adds_one_query(token_client, demo, db, django_assert_max_num_queries):
    with django_assert_max_num_queries(3):
        assert token_client.get("/api/v1/cells/?page_size=1000").status_code == 200


def test_server_errors_under_api_are_json_too(rf):
    response = server_error_page(rf.get("/api/v1/runs/"))
    assert response.status_code == 500
    assert json.loads(response.content)["error"]["code"] == "server_error"
    assert b"<html" in server_error_page(rf.get("/")).content
