"""Browser: the chart pages as a reviewer uses them, in Debian's Chromium."""

import csv
import io

import pytest

from runs.models import Config
from tests.browser.conftest import screenshot

pytestmark = [
    pytest.mark.browser,
    pytest.mark.django_db(transaction=True, serialized_rollback=True),
]


def chart_points(page, chart_id: str) -> int:
    """How many points Plotly drew on a chart."""
    return page.evaluate(
        "id => document.getElementById(id).data.reduce((n, t) => n + (t.x ? t.x.length : 0), 0)",
        chart_id,
    )


def test_inference_controls_change_the_chart_and_the_url(demo_server, page):
    page.goto(demo_server.url + "/inference")
    page.wait_for_selector("#chart-latency .main-svg")
    before = chart_points(page, "chart-latency")
    assert before > 0
    screenshot(page, "inference")

    page.select_option("select[name=model]", "gptoss")
    page.wait_for_url("**model=gptoss**")
    page.wait_for_selector("#chart-latency .main-svg")
    assert "gptoss" in page.locator("h1 ~ *").first.inner_text() or "gptoss" in page.content()
    after = chart_points(page, "chart-latency")
    assert after > 0 and after != before
    screenshot(page, "inference-gptoss")


def test_inference_csv_download_has_the_visible_points(demo_server, page):
    page.goto(demo_server.url + "/inference?model=dsr1&scenario=1k1k")
    page.wait_for_selector("#chart-latency .main-svg")
    button = page.locator("[data-csv-for=chart-latency]")
    with page.expect_download() as download_info:
        button.click()
    text = download_info.value.path().read_text()
    rows = list(csv.DictReader(io.StringIO(text)))
    assert len(rows) == chart_points(page, "chart-latency") - _frontier_duplicates(page)
    assert any(name.endswith("_s") for name in rows[0])  # latencies in seconds, named so
    assert {row["hardware"] for row in rows} >= {"b200", "mi355x"}


def _frontier_duplicates(page) -> int:
    """Frontier lines repeat their series' points as separate traces; CSV rows do not."""
    return page.evaluate(
        """() => document.getElementById('chart-latency').data
            .filter(t => (t.mode || '').indexOf('markers') < 0)
            .reduce((n, t) => n + (t.x ? t.x.length : 0), 0)"""
    )


def test_a_hostile_name_from_an_artifact_shows_as_text(demo_server, page):
    Config.objects.filter(framework="sglang").update(framework="<img src=x onerror=alert(1)>")
    dialogs = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    page.goto(demo_server.url + "/inference?model=dsr1&scenario=1k1k")
    page.wait_for_selector("#chart-latency .main-svg")
    assert page.get_by_text("<img src=x onerror=alert(1)>").first.is_visible()
    assert page.locator("img[src=x]").count() == 0
    page.goto(demo_server.url + "/runs/35702222222/")
    assert page.get_by_text("<img src=x onerror=alert(1)>").first.is_visible()
    assert dialogs == []
    screenshot(page, "hostile-name")


@pytest.mark.parametrize(
    "path", ["/", "/runs/", "/images/", "/evaluation", "/bypasses/", "/api/docs/"]
)
def test_every_page_opens(demo_server, page, path):
    response = page.goto(demo_server.url + path)
    assert response.status < 400, path
    page.wait_for_load_state("networkidle")
    name = path.strip("/").replace("/", "-") or "home-page"
    screenshot(page, f"page-{name}")
