"""The public curves API: /api/v1/runs/<run id>/coverage/ and /api/v1/curves/."""

import json
from datetime import date

import pytest
from django.contrib.auth.models import User
from django.urls import reverse
from drf_spectacular.generators import SchemaGenerator
from rest_framework.test import APIClient

from runs import demo
from tests.curves_db.builders import measure, run_on
from tests.curves_db.test_run_curves import SEED_KEY, SEED_VERDICT
from tests.factories import CellFactory, ConfigFactory, ImageFactory

pytestmark = pytest.mark.django_db

HOSTILE = "<script>alert(1)</script>"


@pytest.fixture
def client():
    return APIClient()


def coverage_url(run_id) -> str:
    return reverse("curves_api:run-coverage", kwargs={"run_id": run_id})


def curves_url() -> str:
    return reverse("curves_api:curve-chart")


def test_seed_pr_coverage(client, demo_data):
    response = client.get(coverage_url(demo.SEED_PR_RUN_ID))

    assert response.status_code == 200
    assert response["Content-Type"] == "application/json"
    body = response.json()
    assert body["run"] == {
        "id": demo.SEED_PR_RUN_ID,
        "attempt": 1,
        "repository": "SemiAnalysisAI/InferenceX",
        "head_sha": demo.SEED_PR_SHA,
        "branch": "dsv4-atom-disagg-agentic",
        "official": False,
        "source_run": None,
    }
    assert body["failed_cells"] == []
    [curve] = body["curves"]
    cell_ids = {point["concurrency"]: point["cell_id"] for point in curve["frontier"]}
    assert {key: curve[key] for key in curve if key not in ("frontier", "dominated", "label")} == {
        "key": SEED_KEY,
        "x_metric": "p90_e2el",
        "y_metric": "tput_per_gpu",
        "status": "WARN",
        "measured_points": 5,
        "invalid_points": 0,
        "frontier_points": 4,
        "recommended_points": 5,
        "invalid": [],
        "verdict": SEED_VERDICT,
        "bypass": None,
        "bypass_state": "none",
    }
    assert curve["frontier"][0] == {
        "concurrency": 16,
        "x": 19.9,
        "y": 5150.0,
        "cell_id": cell_ids[16],
    }
    assert [point["concurrency"] for point in curve["frontier"]] == [16, 64, 128, 256]
    [dominated] = curve["dominated"]
    assert dominated == {
        "concurrency": 1,
        "x": 21.7,
        "y": 380.0,
        "cell_id": dominated["cell_id"],
        "dominated_by": curve["frontier"][0],
        "relation": "at higher p90 E2EL and lower throughput",
    }


def test_coverage_of_a_chosen_attempt_and_of_a_reused_run(client):
    pr_run = run_on(date(2026, 9, 22), is_official=False)
    config = ConfigFactory()
    measure(pr_run, config, [4, 8])
    retry = run_on(date(2026, 9, 22), run_id=pr_run.run_id, run_attempt=2, is_official=False)
    measure(retry, config, [4, 8, 16])
    CellFactory(run=pr_run, config=config, concurrency=64, status="failed", failure_reason="OOM")
    merge = run_on(date(2026, 9, 23), source_run=pr_run)

    latest = client.get(coverage_url(pr_run.run_id)).json()
    first = client.get(coverage_url(pr_run.run_id), {"attempt": 1}).json()
    merged = client.get(coverage_url(merge.run_id)).json()

    assert (latest["run"]["attempt"], latest["curves"][0]["measured_points"]) == (2, 3)
    assert latest["failed_cells"] == []
    assert (first["run"]["attempt"], first["curves"][0]["measured_points"]) == (1, 2)
    [failed] = first["failed_cells"]
    assert {key: failed[key] for key in ("concurrency", "reason", "curve_key")} == {
        "concurrency": 64,
        "reason": "OOM",
        "curve_key": "dsr1/1k1k/b200/sglang/fp8/median_e2el",
    }
    assert merged["run"]["official"] is True
    assert merged["run"]["source_run"] == {
        "id": pr_run.run_id,
        "attempt": 1,
        "head_sha": pr_run.head_sha,
    }
    assert merged["curves"][0]["measured_points"] == 2
    assert merged["failed_cells"] == first["failed_cells"]


def not_found(detail):
    return {"error": {"status": 404, "code": "not_found", "detail": detail}}


def invalid(fields):
    detail = f"Invalid input: {', '.join(fields)}."
    return {"error": {"status": 400, "code": "invalid", "detail": detail, "fields": fields}}


def test_coverage_errors_are_json(client):
    run = run_on(date(2026, 9, 22))

    unknown_run = client.get(coverage_url(123))
    unknown_attempt = client.get(coverage_url(run.run_id), {"attempt": 3})
    not_a_run_id = client.get(coverage_url("abc"))
    huge_run_id = client.get(coverage_url(str(2**64)))
    bad_attempt = client.get(coverage_url(run.run_id), {"attempt": "abc"})
    zero_attempt = client.get(coverage_url(run.run_id), {"attempt": 0})

    assert (unknown_run.status_code, unknown_run.json()) == (
        404,
        not_found("run 123 is not stored"),
    )
    assert (unknown_attempt.status_code, unknown_attempt.json()) == (
        404,
        not_found(f"run {run.run_id} has no attempt 3 (stored attempts: 1)"),
    )
    assert (not_a_run_id.status_code, not_a_run_id.json()) == (
        404,
        not_found("'abc' is not a run id: run ids are positive integers"),
    )
    assert huge_run_id.status_code == 404
    assert (bad_attempt.status_code, bad_attempt.json()) == (
        400,
        invalid({"attempt": ["A valid integer is required."]}),
    )
    assert zero_attempt.status_code == 400
    assert zero_attempt["Content-Type"] == "application/json"


def test_coverage_endpoint_query_count(client, django_assert_num_queries):
    run = run_on(date(2026, 9, 22), is_official=False)
    for hardware in ("b200", "mi355x", "h200"):
        for tp in (4, 8):
            config = ConfigFactory(hardware=hardware, tp=tp)
            measure(run, config, [tp, 2 * tp, 4 * tp], image=ImageFactory())
            CellFactory(run=run, config=config, concurrency=512, status="failed")

    # The run (with its source run), its ok cells, its failed cells.
    with django_assert_num_queries(3):
        body = client.get(coverage_url(run.run_id)).json()

    assert len(body["curves"]) == 3
    assert len(body["failed_cells"]) == 6


def test_curves_of_the_demo_official_data(client, demo_data):
    response = client.get(curves_url(), {"model": "dsr1", "scenario": "1k1k"})

    assert response.status_code == 200
    body = response.json()
    assert {
        key: body[key] for key in ("model", "scenario", "x_metric", "y_metric", "date", "run")
    } == {
        "model": "dsr1",
        "scenario": "1k1k",
        "x_metric": "median_e2el",
        "y_metric": "tput_per_gpu",
        "date": None,
        "run": None,
    }
    assert [group["label"] for group in body["groups"]] == [
        "b200 / sglang / fp8",
        "b200 / trt / fp4",
        "mi355x / atom / fp4",
        "mi355x / sglang / fp8",
    ]
    group = body["groups"][0]
    assert group["date"] == "2026-09-22"
    assert [point["concurrency"] for point in group["points"]] == [4, 8, 16, 32, 64, 128, 256]
    assert {point["run_id"] for point in group["points"]} == {35702222222}
    frontier_ids = [point["cell_id"] for point in group["frontier"]]
    assert frontier_ids and set(frontier_ids) <= {point["cell_id"] for point in group["points"]}
    xs = [point["x"] for point in group["frontier"]]
    assert xs == sorted(xs)


def test_curves_filters_and_axes(client, demo_data):
    older = client.get(
        curves_url(),
        {"model": "dsr1", "scenario": "8k1k", "date": "2026-09-20", "precision": ["fp4", "fp8"]},
    ).json()
    one_run = client.get(
        curves_url(),
        {"model": "dsr1", "scenario": "1k1k", "run": 35701111111, "hardware": "mi355x"},
    ).json()
    costs = client.get(
        curves_url(),
        {
            "model": "gptoss",
            "scenario": "1k1k",
            "x": "cost_per_million_tokens",
            "y": "tokens_per_mw",
        },
    ).json()

    assert {group["date"] for group in older["groups"]} == {"2026-09-20"}
    assert older["date"] == "2026-09-20"
    assert [group["label"] for group in one_run["groups"]] == [
        "mi355x / atom / fp4",
        "mi355x / sglang / fp8",
    ]
    assert {p["run_id"] for g in one_run["groups"] for p in g["points"]} == {35701111111}
    assert (costs["x_metric"], costs["y_metric"]) == ("cost_per_million_tokens", "tokens_per_mw")
    assert all(p["x"] > 0 and p["y"] > 0 for g in costs["groups"] for p in g["points"])


def test_curves_parameter_errors_are_clear_json(client):
    def fields(**params):
        response = client.get(curves_url(), {"model": "dsr1", "scenario": "1k1k", **params})
        assert response.status_code == 400
        return response.json()["error"]["fields"]

    [message] = fields(x="mean_e2el")["x"]
    assert message.startswith('unknown metric "mean_e2el"; known: tput_per_gpu, ')
    assert message.endswith(", cost_per_million_tokens, tokens_per_mw")
    assert fields(y="<b>")["y"][0].startswith('unknown metric "<b>"')
    assert fields(date="2026-13-40") == {
        "date": ["Date has wrong format. Use one of these formats instead: YYYY-MM-DD."]
    }
    assert fields(run="latest") == {"run": ["A valid integer is required."]}
    assert list(fields(run=str(2**64))) == ["run"]
    missing = client.get(curves_url())
    assert (missing.status_code, missing.json()) == (
        400,
        invalid({"model": ["This field is required."], "scenario": ["This field is required."]}),
    )


def test_hostile_strings_come_back_escaped_and_unmodified(client):
    run = run_on(date(2026, 9, 22), head_branch=HOSTILE)
    config = ConfigFactory(framework=HOSTILE, runner_label=HOSTILE)
    measure(run, config, [4, 8])
    CellFactory(run=run, config=config, concurrency=64, status="failed", failure_reason=HOSTILE)

    coverage = client.get(coverage_url(run.run_id))
    chart = client.get(curves_url(), {"model": "dsr1", "scenario": "1k1k", "framework": HOSTILE})

    for response in (coverage, chart):
        assert response.status_code == 200
        assert b"<script>" not in response.content
        assert b"\\u003cscript\\u003e" in response.content
    coverage_body = json.loads(coverage.content)
    [curve] = coverage_body["curves"]
    assert coverage_body["run"]["branch"] == HOSTILE
    assert curve["key"] == "dsr1/1k1k/b200/%3Cscript%3Ealert%281%29%3C%2Fscript%3E/fp8/median_e2el"
    assert f"/ {HOSTILE} / fp8 / {HOSTILE} /" in curve["label"]
    assert coverage_body["failed_cells"][0]["reason"] == HOSTILE
    [group] = json.loads(chart.content)["groups"]
    assert group["framework"] == HOSTILE


def test_the_api_is_public_and_read_only(client):
    run = run_on(date(2026, 9, 22))
    assert client.get(coverage_url(run.run_id)).status_code == 200  # no credentials
    user = User.objects.create_user("reader")
    client.force_authenticate(user)
    assert client.post(coverage_url(run.run_id)).status_code == 405
    assert client.delete(curves_url()).status_code == 405


def test_an_unchanged_coverage_is_a_cheap_304(client):
    run = run_on(date(2026, 9, 22))
    measure(run, ConfigFactory(), [4, 8])
    first = client.get(coverage_url(run.run_id))

    again = client.get(coverage_url(run.run_id), HTTP_IF_NONE_MATCH=first["ETag"])

    assert again.status_code == 304


def test_the_schema_documents_parameters_and_responses():
    schema = SchemaGenerator().get_schema(request=None, public=True)

    chart = schema["paths"]["/api/v1/curves/"]["get"]
    coverage = schema["paths"]["/api/v1/runs/{run_id}/coverage/"]["get"]
    assert {parameter["name"] for parameter in chart["parameters"]} == {
        "model", "scenario", "precision", "hardware", "framework", "date", "run", "x", "y"
    }  # fmt: skip
    assert {"200", "400"} <= set(chart["responses"])
    assert {parameter["name"] for parameter in coverage["parameters"]} == {
        "run_id",
        "attempt",
        "sha",
    }
    assert {"200", "400", "404"} <= set(coverage["responses"])
