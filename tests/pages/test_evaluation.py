"""The /evaluation page: eval scores against thresholds from the database, controls in the URL,
server-rendered tables, the unofficial overlay, escaping and a fixed number of queries."""

import json
import re
from datetime import date

import pytest
from django.urls import reverse

from runs.demo import SEED_PR_RUN_ID
from runs.models import EvalResult, EvalThreshold
from runs.selectors import EVAL_THRESHOLD_FALLBACK
from tests.curves_db.builders import run_on
from tests.factories import ConfigFactory, EvalResultFactory, ImageFactory
from tests.pages.html import PageReader, page_read

pytestmark = pytest.mark.django_db

SCRIPT_TAG = "<script>alert(1)</script>"
ATTRIBUTE_TAG = "<b onmouseover=x>"
LATEST_OFFICIAL_RUN = 35702222222  # the demo's 2026-09-22 nightly
# Columns of the table: kind, GPU, framework, precision, variant, parallelism, scenario,
# concurrency, n-shot, strict, ± SE, flexible, ± SE, n_eff, threshold, result, image, date, run.
KIND, GPU, FRAMEWORK, CONCURRENCY, STRICT, THRESHOLD, RESULT, RUN = 0, 1, 2, 7, 9, 14, 15, 18


def evaluation_url() -> str:
    return reverse("runs:evaluation")


def evaluation_data(page: PageReader) -> dict:
    return json.loads(page.scripts["evaluation-data"])


def rows_of(chart: dict, kind: str) -> list[dict]:
    return [row for group in chart["groups"] if group["kind"] == kind for row in group["rows"]]


def set_threshold(*, model_prefix: str, task: str, threshold: float) -> None:
    EvalThreshold.objects.update_or_create(
        model_prefix=model_prefix, task=task, defaults={"threshold": threshold}
    )


def test_defaults_render_the_latest_official_row_of_each_config(client, demo_data):
    response = client.get(evaluation_url())

    assert response.status_code == 200
    page = page_read(response.content)
    assert page.selected == {"model": ["dsr1"], "task": [""], "date": [""], "run": [""]}
    assert page.inputs["unofficialRun"] == ""
    data = evaluation_data(page)
    [chart] = data["charts"]
    assert (chart["model"], chart["task"], chart["threshold"]) == ("dsr1", "gsm8k", 0.91)
    assert chart["threshold_label"] == "pass ≥ 0.91 (dsr1 gsm8k)"
    official = rows_of(chart, "official")
    assert len(official) == 8  # 4 configs x 2 scenarios, at c64
    assert {row["run_id"] for row in official} == {LATEST_OFFICIAL_RUN}
    assert rows_of(chart, "unofficial") == []
    assert chart["categories"][0] == "b200 / sglang / fp8 / TP8 EP8 / 1k1k c64"
    assert [row["x"] for row in official] == list(range(8))
    assert all(row["passed"] for row in official)  # the demo scores are 0.93 to 0.97
    assert b'aria-current="page">Evaluation</a>' in response.content
    assert b"pass \xe2\x89\xa5 0.91 (dsr1 gsm8k)" in response.content


def test_thresholds_come_from_the_database_and_flexible_scores_count(client, demo_data):
    [chart] = evaluation_data(page_read(client.get(evaluation_url()).content))["charts"]
    before = rows_of(chart, "official")
    lowest = min(before, key=lambda row: row["em_strict"])
    # Between the lowest row's flexible and strict scores: its strict passes, its flexible not.
    threshold = round((lowest["em_strict"] + lowest["em_flexible"]) / 2, 6)
    assert lowest["em_flexible"] < threshold <= lowest["em_strict"]
    set_threshold(model_prefix="dsr1", task="gsm8k", threshold=threshold)

    page = page_read(client.get(evaluation_url()).content)

    [chart] = evaluation_data(page)["charts"]
    assert chart["threshold"] == threshold
    failing = [row for row in rows_of(chart, "official") if not row["passed"]]
    assert [(row["label"], row["em_strict"]) for row in failing] == [
        (lowest["label"], lowest["em_strict"])
    ]
    results = [row[RESULT] for row in page.tables[0]]
    assert results.count("FAIL") == 1 and results.count("PASS") == 7


def test_a_model_without_any_threshold_falls_back_to_085(client):
    run = run_on(date(2026, 9, 22))
    config = ConfigFactory(model_prefix="newmodel")
    for concurrency, strict, flexible in ((8, 0.86, 0.86), (16, 0.84, 0.9)):
        EvalResultFactory(
            run=run,
            config=config,
            task="mmlu_pro",
            concurrency=concurrency,
            em_strict=strict,
            em_flexible=flexible,
        )

    page = page_read(client.get(evaluation_url()).content)

    [chart] = evaluation_data(page)["charts"]
    assert chart["threshold"] == EVAL_THRESHOLD_FALLBACK == 0.85
    assert chart["threshold_label"] == "pass ≥ 0.85 (newmodel mmlu_pro)"
    assert [(row["concurrency"], row["passed"]) for row in rows_of(chart, "official")] == [
        (8, True),
        (16, False),
    ]


def test_a_task_default_applies_to_a_model_without_its_own(client):
    run = run_on(date(2026, 9, 22))
    config = ConfigFactory(model_prefix="newmodel")
    EvalResultFactory(run=run, config=config, em_strict=0.89, em_flexible=0.89)

    [chart] = evaluation_data(page_read(client.get(evaluation_url()).content))["charts"]

    assert (chart["task"], chart["threshold"]) == ("gsm8k", 0.90)  # default.gsm8k
    assert rows_of(chart, "official")[0]["passed"] is False


def test_the_table_lists_every_row_with_its_scores_and_verdict(client, demo_data):
    page = page_read(client.get(evaluation_url(), {"model": "gptoss"}).content)

    [chart] = evaluation_data(page)["charts"]
    [table] = page.tables
    expected = [
        [
            "official",
            row["hardware"],
            row["framework"],
            str(row["concurrency"]),
            f"{row['em_strict']:.4f}",
            "0.91",
            "PASS" if row["passed"] else "FAIL",
            str(row["run_id"]),
        ]
        for row in rows_of(chart, "official")
    ]
    shown = [
        [r[KIND], r[GPU], r[FRAMEWORK], r[CONCURRENCY], r[STRICT], r[THRESHOLD], r[RESULT], r[RUN]]
        for r in table
    ]
    assert shown == expected
    assert len(table) == 6  # 3 configs x 2 scenarios
    first = rows_of(chart, "official")[0]
    assert table[0][10:14] == ["0.0046", f"{first['em_flexible']:.4f}", "0.0046", "1319"]


def test_controls_are_the_selection(client, demo_data):
    params = {"model": "gptoss", "task": "gsm8k", "date": "2026-09-21"}

    page = page_read(client.get(evaluation_url(), params).content)

    assert page.selected == {
        "model": ["gptoss"],
        "task": ["gsm8k"],
        "date": ["2026-09-21"],
        "run": [""],
    }
    [chart] = evaluation_data(page)["charts"]
    assert {row["date"] for row in rows_of(chart, "official")} == {"2026-09-21"}
    assert {row["run_id"] for row in rows_of(chart, "official")} == {35701111111}


def test_one_official_run_can_be_chosen(client, demo_data):
    page = page_read(client.get(evaluation_url(), {"run": "35700000000"}).content)

    assert page.selected["run"] == ["35700000000"]
    [chart] = evaluation_data(page)["charts"]
    assert {row["run_id"] for row in rows_of(chart, "official")} == {35700000000}
    assert len(rows_of(chart, "official")) == 8


def test_hidden_runs_do_not_count_and_a_reused_pr_run_counts_for_its_merge(client):
    pr_run = run_on(date(2026, 9, 20), is_official=False, event="pull_request")
    merge = run_on(date(2026, 9, 21), source_run=pr_run)
    hidden = run_on(date(2026, 9, 22), hidden_from_official=True)
    config = ConfigFactory()
    EvalResultFactory(run=pr_run, config=config, concurrency=64, em_strict=0.95)
    EvalResultFactory(run=hidden, config=config, concurrency=64, em_strict=0.5)

    page = page_read(client.get(evaluation_url()).content)

    [row] = rows_of(evaluation_data(page)["charts"][0], "official")
    assert (row["run_id"], row["measured_run_id"], row["em_strict"]) == (
        merge.run_id,
        pr_run.run_id,
        0.95,
    )
    assert page.selected["run"] == [""]
    assert f"(reused {pr_run.run_id})" in page.tables[0][0][RUN]


@pytest.mark.parametrize(
    ("params", "message", "fallback"),
    [
        (
            {"model": "llama-9000"},
            "Model “llama-9000” has no evals: showing dsr1.",
            ("model", "dsr1"),
        ),
        ({"task": "mmlu"}, "Task “mmlu” has no dsr1 evals: showing every task.", ("task", "")),
        ({"date": "2026-13-45"}, "Ignored date “2026-13-45”: expected a date", ("date", "")),
        ({"run": "latest"}, "Run “latest” is not an official run with dsr1 evals", ("run", "")),
        (
            {"run": str(SEED_PR_RUN_ID)},
            f"Run “{SEED_PR_RUN_ID}” is not an official run with dsr1 evals",
            ("run", ""),
        ),
        (
            {"unofficialRun": "abc"},
            "“abc” is not a run id</strong> Use the number at the end of the GitHub Actions",
            ("model", "dsr1"),
        ),
    ],
)
def test_bad_parameters_give_a_message_and_the_defaults(
    client, demo_data, params, message, fallback
):
    response = client.get(evaluation_url(), params)

    assert response.status_code == 200
    content = response.content.decode()
    assert message in content
    assert 'role="alert"' in content
    page = page_read(response.content)
    name, value = fallback
    assert page.selected[name] == [value]
    assert rows_of(evaluation_data(page)["charts"][0], "official")  # the defaults still draw


def test_a_date_before_any_run_says_so_with_a_way_back(client, demo_data):
    response = client.get(evaluation_url(), {"date": "2020-01-01", "task": "gsm8k"})

    content = response.content.decode()
    assert response.status_code == 200
    assert "No eval rows for this selection." in content
    assert 'href="?task=gsm8k"' in content


def test_without_evals_the_page_says_so(client):
    response = client.get(evaluation_url())

    assert response.status_code == 200
    assert b"No eval results are stored yet" in response.content
    assert b"plotly.min.js" not in response.content


@pytest.mark.parametrize(
    ("params", "queries"),
    [
        # models, tasks, runs of the model; official runs, their eval rows; thresholds.
        ({}, 6),
        ({"model": "gptoss", "date": "2026-09-21"}, 6),
        # The overlay: curves.unofficial reads the run, its latest job, its cell and eval
        # counts; then the run's eval rows.
        ({"unofficialRun": str(SEED_PR_RUN_ID)}, 11),
    ],
)
def test_the_page_makes_a_fixed_number_of_queries(
    client, demo_data, django_assert_num_queries, params, queries
):
    with django_assert_num_queries(queries):
        response = client.get(evaluation_url(), params)

    assert response.status_code == 200
    assert evaluation_data(page_read(response.content))["charts"][0]["row_count"] >= 3


def test_artifact_strings_are_escaped_in_the_page_and_its_json(client):
    run = run_on(date(2026, 9, 22))
    config = ConfigFactory(framework=SCRIPT_TAG, hardware=ATTRIBUTE_TAG, precision="fp'8\"&")
    image = ImageFactory(reference=ATTRIBUTE_TAG)
    EvalResultFactory(run=run, config=config, image=image, task=SCRIPT_TAG)

    response = client.get(evaluation_url())

    assert response.status_code == 200
    content = response.content.decode()
    assert "<script>alert" not in content
    assert "<b onmouseover" not in content
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in content  # table, controls, headings
    page = page_read(response.content)
    raw_json = page.scripts["evaluation-data"]
    assert "<" not in raw_json and ">" not in raw_json  # json_script encodes them
    [chart] = evaluation_data(page)["charts"]
    assert chart["id"] == "eval-chart-0"  # never built from the task name
    [row] = rows_of(chart, "official")
    # The JSON decodes to the artifact's own text; the page script escapes it for Plotly.
    assert (row["framework"], row["hardware"], row["image"]) == (
        SCRIPT_TAG,
        ATTRIBUTE_TAG,
        ATTRIBUTE_TAG,
    )
    assert page.tables[0][0][GPU : FRAMEWORK + 2] == [ATTRIBUTE_TAG, SCRIPT_TAG, "fp'8\"&"]


def test_plotly_comes_from_our_static_files_and_nothing_loads_from_elsewhere(client, demo_data):
    page = page_read(client.get(evaluation_url(), {"unofficialRun": SEED_PR_RUN_ID}).content)

    assert "/static/vendor/plotly.min.js" in page.sources
    assert "/static/js/charts-common.js" in page.sources
    assert page.sources.index("/static/js/charts-common.js") < page.sources.index(
        "/static/js/evaluation.js"
    )
    assert not [source for source in page.sources if re.match(r"(https?:)?//", source)]


# ---------------------------------------------------------------------------------------------
# The unofficial overlay (?unofficialRun=, curves.unofficial)
# ---------------------------------------------------------------------------------------------


def test_an_unofficial_run_overlays_its_rows_under_a_banner(client, demo_data):
    response = client.get(evaluation_url(), {"unofficialRun": str(SEED_PR_RUN_ID)})

    assert response.status_code == 200
    content = response.content.decode()
    assert "NON-OFFICIAL" in content
    page = page_read(response.content)
    assert page.selected["model"] == ["dsv4"]  # the run's model, without being asked
    assert page.inputs["unofficialRun"] == str(SEED_PR_RUN_ID)
    [chart] = evaluation_data(page)["charts"]
    assert chart["threshold_label"] == "pass ≥ 0.91 (dsv4 gsm8k)"
    [group] = [group for group in chart["groups"] if group["kind"] == "unofficial"]
    assert (group["key"], group["label"]) == (
        f"unofficial:{SEED_PR_RUN_ID}",
        f"UNOFFICIAL run {SEED_PR_RUN_ID}",
    )
    assert [(row["concurrency"], row["em_strict"], row["passed"]) for row in group["rows"]] == [
        (16, 0.978, True),
        (128, 0.9719, True),
        (256, 0.922, True),  # about 5 points below the others, still above the 0.91 bar
    ]
    assert {row["run_id"] for row in group["rows"]} == {SEED_PR_RUN_ID}
    assert chart["categories"][2].startswith("mi355x / atom-disagg / fp4 / mtp / ")
    assert chart["categories"][2].endswith(" / c256")  # no scenario recorded for these rows
    table = page.tables[0]
    assert [(row[KIND], row[CONCURRENCY], row[RESULT]) for row in table] == [
        ("UNOFFICIAL", "16", "PASS"),
        ("UNOFFICIAL", "128", "PASS"),
        ("UNOFFICIAL", "256", "PASS"),
    ]


def test_an_unofficial_row_below_a_raised_threshold_fails(client, demo_data):
    set_threshold(model_prefix="dsv4", task="gsm8k", threshold=0.95)

    page = page_read(client.get(evaluation_url(), {"unofficialRun": SEED_PR_RUN_ID}).content)

    [chart] = evaluation_data(page)["charts"]
    assert chart["threshold_label"] == "pass ≥ 0.95 (dsv4 gsm8k)"
    verdicts = [(row["concurrency"], row["passed"]) for row in rows_of(chart, "unofficial")]
    assert verdicts == [(16, True), (128, True), (256, False)]
    assert [row[RESULT] for row in page.tables[0]] == ["PASS", "PASS", "FAIL"]


def test_unofficial_rows_of_an_official_config_share_its_x_position(client, demo_data):
    pr_run = run_on(date(2026, 9, 23), is_official=False, event="pull_request")
    official = EvalResult.objects.get(
        run__run_id=LATEST_OFFICIAL_RUN,
        config__framework="sglang",
        config__hardware="b200",
        scenario="1k1k",
    )
    EvalResultFactory(
        run=pr_run, config=official.config, concurrency=64, em_strict=0.5, em_flexible=0.5
    )

    params = {"model": "dsr1", "unofficialRun": pr_run.run_id}
    page = page_read(client.get(evaluation_url(), params).content)

    [chart] = evaluation_data(page)["charts"]
    [row] = rows_of(chart, "unofficial")
    assert (row["x"], row["label"], row["passed"]) == (
        0,
        "b200 / sglang / fp8 / TP8 EP8 / 1k1k c64",
        False,
    )
    assert rows_of(chart, "official")[0]["em_strict"] == official.em_strict
    assert len(chart["categories"]) == 8


def test_an_unofficial_run_of_another_model_is_named_in_a_notice(client, demo_data):
    response = client.get(evaluation_url(), {"unofficialRun": SEED_PR_RUN_ID, "model": "dsr1"})

    content = response.content.decode()
    assert f"Unofficial run {SEED_PR_RUN_ID} has no dsr1 evals: choose dsv4" in content
    [chart] = evaluation_data(page_read(response.content))["charts"]
    assert rows_of(chart, "unofficial") == []
