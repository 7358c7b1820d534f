"""The /inference page: controls in the URL, chart JSON, server-rendered tables, escaping."""

import re
from datetime import date

import pytest
from django.urls import reverse

from curves.derived import cost_per_million_tokens
from curves.models import GpuCost
from curves.selectors import official_chart_series
from tests.curves_db.builders import measure, run_on
from tests.factories import ConfigFactory, ImageFactory
from tests.pages.html import page_data, page_read

pytestmark = pytest.mark.django_db

SCRIPT_TAG = "<script>alert(1)</script>"
ATTRIBUTE_TAG = "<b onmouseover=x>"


def inference_url() -> str:
    return reverse("curves:inference")


def series_labels(chart: dict) -> list[str]:
    return [series["label"] for series in chart["series"]]


def test_defaults_render_both_charts_of_the_first_model_and_scenario(client, demo_data):
    response = client.get(inference_url())

    assert response.status_code == 200
    page = page_read(response.content)
    assert page.selected == {
        "model": ["dsr1"],
        "scenario": ["1k1k"],
        "y": ["tput_per_gpu"],
        "x": ["median_e2el"],
        "date": [""],
    }
    assert page.checked["precision"] == ["fp4", "fp8"]  # no filter: every box checked
    assert page.checked["hardware"] == ["b200", "mi355x"]
    assert not page.checked["optimal"]
    data = page_data(page)
    assert (data["model"], data["scenario"]) == ("dsr1", "1k1k")
    interactivity, latency = data["charts"]
    assert (interactivity["x"]["metric"], interactivity["y"]["metric"]) == (
        "median_intvty",
        "tput_per_gpu",
    )
    assert latency["x"]["metric"] == "median_e2el"
    assert latency["x"]["csv_column"] == "median_e2el_s"
    assert latency["y"]["csv_column"] == "tput_per_gpu_tok_s"
    assert series_labels(interactivity) == [
        "b200 / sglang / fp8",
        "b200 / trt / fp4",
        "mi355x / atom / fp4",
        "mi355x / sglang / fp8",
    ]
    assert series_labels(latency) == series_labels(interactivity)
    assert {series["kind"] for series in latency["series"]} == {"official"}
    assert b'aria-current="page">Inference</a>' in response.content
    assert page.tables[0]


def test_agentic_coding_defaults_to_p90_latency(client, demo_data):
    page = page_read(client.get(inference_url(), {"model": "dsv4"}).content)

    assert page.selected["scenario"] == ["agentic-coding"]
    assert page.selected["x"] == ["p90_e2el"]
    assert page_data(page)["charts"][1]["x"]["metric"] == "p90_e2el"


def test_explicit_parameters_are_the_selection_and_the_chart_data(client, demo_data):
    params = {
        "model": "gptoss",
        "scenario": "8k1k",
        "y": "cost_per_million_tokens",
        "x": "p90_ttft",
        "hardware": ["b200", "h200"],
        "date": "2026-09-21",
        "optimal": "1",
        "logy": "1",
    }

    response = client.get(inference_url(), params)

    page = page_read(response.content)
    assert page.selected == {
        "model": ["gptoss"],
        "scenario": ["8k1k"],
        "y": ["cost_per_million_tokens"],
        "x": ["p90_ttft"],
        "date": ["2026-09-21"],
    }
    assert page.checked["hardware"] == ["b200", "h200"]
    assert page.checked["optimal"] == ["1"] and page.checked["logy"] == ["1"]
    assert not page.checked["logx"]
    _, latency = page_data(page)["charts"]
    assert latency["x"]["metric"] == "p90_ttft"
    assert series_labels(latency) == ["b200 / vllm / fp4", "h200 / vllm / fp4"]
    expected = official_chart_series(
        model="gptoss",
        scenario="8k1k",
        x_metric="p90_ttft",
        y_metric="cost_per_million_tokens",
        as_of=date(2026, 9, 21),
        hardware=["b200"],
    )[0]
    b200 = latency["series"][0]
    assert [(p["concurrency"], p["x"], p["y"]) for p in b200["points"]] == [
        (p.point.concurrency, p.x, p.y) for p in expected.points
    ]
    assert {p["date"] for p in b200["points"]} == {"2026-09-21"}
    cost = GpuCost.objects.get(hardware="b200")
    first = expected.points[0]
    assert b200["points"][0]["y"] == pytest.approx(
        cost_per_million_tokens(first.point.metrics["tput_per_gpu"], cost.dollars_per_gpu_hour)
    )
    # The note names the GPU cost values used and links to where they are edited.
    assert reverse("admin:curves_gpucost_changelist").encode() in response.content
    assert b"b200 $3.20/GPU-hour, 1900 W" in response.content


def test_a_run_id_selects_that_run(client, demo_data):
    official = official_chart_series(model="dsr1", scenario="1k1k")[0].points[0].point

    page = page_read(client.get(inference_url(), {"run": str(official.run_id)}).content)

    assert page.inputs["run"] == str(official.run_id)
    runs = {p["run_id"] for s in page_data(page)["charts"][0]["series"] for p in s["points"]}
    assert runs == {official.run_id}


@pytest.mark.parametrize(
    ("params", "message", "fallback"),
    [
        (
            {"model": "llama-9000"},
            "Model “llama-9000” has no official data: showing dsr1.",
            ("model", "dsr1"),
        ),
        (
            {"scenario": "128k1k"},
            "Scenario “128k1k” has no official data for dsr1",
            ("scenario", "1k1k"),
        ),
        ({"date": "2026-13-45"}, "Ignored date “2026-13-45”: Date has wrong format", ("date", "")),
        ({"y": "vibes"}, "Ignored y “vibes”: unknown metric", ("y", "tput_per_gpu")),
        ({"x": "median_intvty"}, "“median_intvty” is not one of them", ("x", "median_e2el")),
        ({"run": "latest"}, "Ignored run “latest”: A valid integer is required", ("run", "")),
        ({"hardware": "h100"}, "No official GPU “h100” for this model", ("hardware", "")),
    ],
)
def test_bad_parameters_give_a_message_and_the_defaults(
    client, demo_data, params, message, fallback
):
    response = client.get(inference_url(), params)

    assert response.status_code == 200
    page = page_read(response.content)
    assert message in response.content.decode()
    assert 'role="alert"' in response.content.decode()
    name, value = fallback
    if name == "run":
        assert page.inputs["run"] == value
    elif name == "hardware":
        assert page.checked["hardware"] == ["b200", "mi355x"]  # no filter left
    else:
        assert page.selected[name] == [value]
    assert page_data(page)["charts"][0]["series"]  # the defaults still draw


def test_the_tables_list_every_point_with_its_values(client, demo_data):
    page = page_read(client.get(inference_url()).content)

    interactivity, latency = page_data(page)["charts"]
    for chart, table in ((interactivity, page.tables[0]), (latency, page.tables[1])):
        expected = [
            [
                series["hardware"],
                series["framework"],
                series["precision"],
                str(point["concurrency"]),
                f"{point['x']:.{chart['x']['decimals']}f}",
                f"{point['y']:.{chart['y']['decimals']}f}",
                "yes" if point["frontier"] else "no",
                point["topology"],
                str(point["run_id"]),
            ]
            for series in chart["series"]
            for point in series["points"]
        ]
        # Columns: GPU, framework, precision, concurrency, x, y, Pareto-optimal, parallelism,
        # variant, image, date, run.
        shown = [[*row[:8], row[11]] for row in table]
        assert shown == expected
        assert len(table) == 28


def test_artifact_strings_are_escaped_in_the_page_and_its_json(client):
    run = run_on(date(2026, 9, 22))
    image = ImageFactory(reference=ATTRIBUTE_TAG)
    config = ConfigFactory(framework=SCRIPT_TAG, hardware=ATTRIBUTE_TAG, precision="fp'8\"&")
    measure(run, config, [4, 8], image=image)

    response = client.get(inference_url())

    assert response.status_code == 200
    content = response.content.decode()
    assert SCRIPT_TAG not in content
    assert "<script>alert" not in content
    assert "<b onmouseover" not in content
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in content  # in the table and the controls
    page = page_read(response.content)
    raw_json = page.scripts["inference-data"]
    assert "<" not in raw_json and ">" not in raw_json  # json_script encodes them
    assert "\\u003Cscript\\u003Ealert(1)\\u003C/script\\u003E" in raw_json
    [series] = page_data(page)["charts"][0]["series"]
    # The JSON decodes to the artifact's own text; the page script escapes it for Plotly.
    assert (series["framework"], series["hardware"]) == (SCRIPT_TAG, ATTRIBUTE_TAG)
    assert series["points"][0]["image"] == ATTRIBUTE_TAG
    assert page.tables[0][0][:3] == [ATTRIBUTE_TAG, SCRIPT_TAG, "fp'8\"&"]


def test_plotly_comes_from_our_static_files_and_nothing_loads_from_elsewhere(client, demo_data):
    page = page_read(client.get(inference_url()).content)

    assert "/static/vendor/plotly.min.js" in page.sources
    assert "/static/js/inference.js" in page.sources
    assert not [source for source in page.sources if re.match(r"(https?:)?//", source)]


@pytest.mark.parametrize(
    ("y_metric", "queries"),
    [
        # models, scenarios, precisions, hardware, frameworks, run dates; official points (3,
        # then cached for the second chart).
        ("tput_per_gpu", 9),
        # One GpuCost query per chart in the selector, one for the note.
        ("tokens_per_mw", 12),
    ],
)
def test_the_page_makes_a_fixed_number_of_queries(
    client, demo_data, django_assert_num_queries, y_metric, queries
):
    with django_assert_num_queries(queries):
        response = client.get(inference_url(), {"y": y_metric})

    assert response.status_code == 200
    assert len(page_data(page_read(response.content))["charts"][0]["series"]) == 4


def test_without_official_data_the_page_says_so(client):
    response = client.get(inference_url())

    assert response.status_code == 200
    assert b"No official runs are stored yet" in response.content
    assert b"plotly.min.js" not in response.content


def test_a_date_before_any_run_shows_an_empty_state_with_a_way_back(client, demo_data):
    response = client.get(inference_url(), {"date": "2020-01-01", "hardware": "b200"})

    assert response.status_code == 200
    content = response.content.decode()
    assert "No official points for this selection." in content
    assert 'href="?date=2020-01-01"' in content  # every precision, GPU and framework
    assert 'href="?hardware=b200"' in content  # the latest runs
    assert page_data(page_read(response.content))["charts"][0]["series"] == []
