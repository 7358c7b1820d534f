"""official_points and the page-control helpers: the official data of one model and scenario."""

import math
from datetime import date

import pytest

from curves.derived import cost_per_million_tokens, tokens_per_mw
from curves.frontier import Point, frontier_for_metrics
from curves.models import GpuCost
from curves.selectors import (
    official_chart_series,
    official_frameworks,
    official_hardware,
    official_models,
    official_points,
    official_precisions,
    official_run_dates,
    official_scenarios,
)
from runs.cache import data_generation_bump
from runs.models import CellStatus
from tests.curves_db.builders import measure, run_on
from tests.factories import CellFactory, ConfigFactory

pytestmark = pytest.mark.django_db

DAY1, DAY2, DAY3 = date(2026, 9, 20), date(2026, 9, 21), date(2026, 9, 22)


def points_by_group(groups):
    """{group label: [(concurrency, topology, GitHub run id), ...]}"""
    return {
        group.label: [(point.concurrency, point.topology, point.run_id) for point in group.points]
        for group in groups
    }


@pytest.fixture
def b200():
    return ConfigFactory(hardware="b200", framework="sglang", precision="fp8", tp=8)


@pytest.fixture
def mi355x():
    return ConfigFactory(
        hardware="mi355x", runner_label="mi355x-amds_0", framework="sglang", precision="fp8"
    )


def test_each_group_shows_the_points_of_its_own_latest_run_date(b200, mi355x):
    day1, day2 = run_on(DAY1), run_on(DAY2)
    measure(day1, b200, [4, 8])
    measure(day1, mi355x, [4, 8])
    measure(day2, b200, [4, 8, 16])  # the newest nightly did not sweep mi355x

    groups = official_points(model="dsr1", scenario="1k1k")

    assert points_by_group(groups) == {
        "b200 / sglang / fp8": [
            (4, "TP8", day2.run_id),
            (8, "TP8", day2.run_id),
            (16, "TP8", day2.run_id),
        ],
        "mi355x / sglang / fp8": [(4, "TP8", day1.run_id), (8, "TP8", day1.run_id)],
    }
    assert [group.date for group in groups] == [DAY2, DAY1]


def test_a_topology_dropped_by_the_newest_run_does_not_linger(b200):
    tp4 = ConfigFactory(tp=4, ep=4, dp_attention=True)
    day1, day2 = run_on(DAY1), run_on(DAY2)
    measure(day1, b200, [4, 8])
    measure(day1, tp4, [16, 32])
    measure(day2, b200, [4, 8])

    [group] = official_points(model="dsr1", scenario="1k1k")

    assert {point.topology for point in group.points} == {"TP8"}
    assert {point.run_id for point in group.points} == {day2.run_id}


def test_hidden_and_unofficial_runs_are_not_official_data(b200):
    day1 = run_on(DAY1)
    hidden = run_on(DAY2, hidden_from_official=True, hidden_reason="broken image")
    pull_request = run_on(DAY3, is_official=False, event="pull_request")
    for run in (day1, hidden, pull_request):
        measure(run, b200, [4, 8])

    [group] = official_points(model="dsr1", scenario="1k1k")

    assert group.date == DAY1
    assert {point.run_id for point in group.points} == {day1.run_id}
    assert official_run_dates() == [DAY1]


def test_as_of_ignores_later_runs(b200):
    day1, day2 = run_on(DAY1), run_on(DAY2)
    measure(day1, b200, [4, 8], tput_scale=1.0)
    measure(day2, b200, [4, 8], tput_scale=2.0)

    [before] = official_points(model="dsr1", scenario="1k1k", as_of=DAY1)
    [latest] = official_points(model="dsr1", scenario="1k1k", as_of=DAY3)

    assert (before.date, [point.metrics["tput_per_gpu"] for point in before.points]) == (
        DAY1,
        [400.0, 800.0],
    )
    assert (latest.date, {point.run_id for point in latest.points}) == (DAY2, {day2.run_id})
    assert official_points(model="dsr1", scenario="1k1k", as_of=date(2026, 9, 1)) == []


def test_run_id_selects_one_official_run_even_an_older_one(b200, mi355x):
    day1, day2 = run_on(DAY1), run_on(DAY2)
    measure(day1, b200, [4])
    measure(day1, mi355x, [4])
    measure(day2, b200, [8])

    groups = official_points(model="dsr1", scenario="1k1k", run_id=day1.run_id)

    assert points_by_group(groups) == {
        "b200 / sglang / fp8": [(4, "TP8", day1.run_id)],
        "mi355x / sglang / fp8": [(4, "TP8", day1.run_id)],
    }
    unofficial = run_on(DAY2, is_official=False)
    measure(unofficial, b200, [16])
    assert official_points(model="dsr1", scenario="1k1k", run_id=unofficial.run_id) == []


def test_a_merge_that_reused_a_pr_run_shows_the_pr_runs_cells_on_its_own_date(b200):
    pr_run = run_on(DAY1, is_official=False, event="pull_request")
    measure(pr_run, b200, [4, 8])
    merge = run_on(DAY2, source_run=pr_run)

    [group] = official_points(model="dsr1", scenario="1k1k")

    assert group.date == DAY2
    assert {(point.run_id, point.source_run_id) for point in group.points} == {
        (merge.run_id, pr_run.run_id)
    }
    assert official_run_dates(model="dsr1") == [DAY2]
    assert official_hardware(model="dsr1") == ["b200"]


def test_a_cell_measured_twice_on_the_latest_date_counts_once_from_the_latest_run(b200, mi355x):
    morning = run_on(DAY2)
    evening = run_on(DAY2, gh_created_at=morning.gh_created_at.replace(hour=20))
    measure(morning, b200, [4, 8], tput_scale=1.0)
    measure(morning, mi355x, [4])
    measure(evening, b200, [8], tput_scale=3.0)

    groups = {group.hardware: group for group in official_points(model="dsr1", scenario="1k1k")}

    assert [
        (point.concurrency, point.run_id, point.metrics["tput_per_gpu"])
        for point in groups["b200"].points
    ] == [(4, morning.run_id, 400.0), (8, evening.run_id, 2400.0)]
    assert [point.run_id for point in groups["mi355x"].points] == [morning.run_id]


def test_only_the_latest_attempt_of_an_official_run_counts(b200):
    first = run_on(DAY1)
    second = run_on(DAY1, run_id=first.run_id, run_attempt=2)
    measure(first, b200, [4, 8], tput_scale=1.0)
    measure(second, b200, [4, 8], tput_scale=2.0)

    [group] = official_points(model="dsr1", scenario="1k1k")

    assert {point.run_attempt for point in group.points} == {2}
    assert [point.metrics["tput_per_gpu"] for point in group.points] == [800.0, 1600.0]


def test_filters_model_scenario_and_failed_cells(b200, mi355x):
    run = run_on(DAY1)
    fp4 = ConfigFactory(precision="fp4", framework="trt", tp=4)
    gptoss = ConfigFactory(model_prefix="gptoss", model="openai/gpt-oss-120b")
    measure(run, b200, [4])
    measure(run, mi355x, [4])
    measure(run, fp4, [4])
    measure(run, gptoss, [4])
    measure(run, b200, [8], scenario="8k1k")
    CellFactory(run=run, config=b200, concurrency=512, status=CellStatus.FAILED)

    def labels(**filters):
        return [group.label for group in official_points(model="dsr1", scenario="1k1k", **filters)]

    assert labels() == ["b200 / sglang / fp8", "b200 / trt / fp4", "mi355x / sglang / fp8"]
    assert labels(precisions=["fp4"]) == ["b200 / trt / fp4"]
    assert labels(hardware=["mi355x"], frameworks=["sglang"]) == ["mi355x / sglang / fp8"]
    assert labels(frameworks=[]) == []
    # Neither the 8k1k cell nor the failed cell is a 1k1k point.
    [b200_sglang] = official_points(
        model="dsr1", scenario="1k1k", hardware=["b200"], frameworks=["sglang"]
    )
    assert [point.concurrency for point in b200_sglang.points] == [4]


def test_groups_split_by_spec_method_and_disagg():
    run = run_on(DAY1)
    measure(run, ConfigFactory(spec_method="none"), [4], scenario="agentic-coding")
    measure(run, ConfigFactory(spec_method="mtp"), [4], scenario="agentic-coding")
    disagg = ConfigFactory(spec_method="mtp", disagg=True, prefill_tp=8, decode_tp=8, tp=None)
    measure(run, disagg, [4], scenario="agentic-coding")

    groups = official_points(model="dsr1", scenario="agentic-coding")

    # Sorted by (hardware, framework, precision, spec method, disagg).
    assert [group.label for group in groups] == [
        "b200 / sglang / fp8 / mtp",
        "b200 / sglang / fp8 / mtp / disagg",
        "b200 / sglang / fp8",
    ]
    assert groups[1].points[0].topology == "P:TP8 D:TP8"


def test_points_carry_every_chart_metric_and_their_identity(b200):
    run = run_on(DAY1)
    [cell] = measure(run, b200, [4])

    [group] = official_points(model="dsr1", scenario="1k1k")
    [point] = group.points

    assert (point.cell_id, point.config_id, point.date, point.image) == (cell.pk, b200.pk, DAY1, "")
    assert point.metrics["tput_per_gpu"] == 400.0
    assert point.metrics["median_e2el"] == 1.4
    assert point.metrics["p90_ttft"] is None
    assert {"output_tput_per_gpu", "p99_e2el", "median_intvty", "p90_intvty"} <= set(point.metrics)


def build_official_history():
    """Three nightlies of four groups with two topologies each: an N+1 would show."""
    configs = [
        ConfigFactory(hardware=hardware, framework=framework, tp=tp)
        for hardware, framework in (("b200", "sglang"), ("mi355x", "atom"), ("h200", "vllm"))
        for tp in (4, 8)
    ] + [ConfigFactory(hardware="b200", framework="trt", precision="fp4")]
    for day in (DAY1, DAY2, DAY3):
        run = run_on(day)
        for config in configs:
            measure(run, config, [4, 8, 16, 32])
    return configs


def test_official_points_take_three_queries_then_come_from_the_cache(django_assert_num_queries):
    build_official_history()

    with django_assert_num_queries(3):
        groups = official_points(model="dsr1", scenario="1k1k")
    with django_assert_num_queries(0):
        cached = official_points(model="dsr1", scenario="1k1k")

    assert cached == groups
    assert len(groups) == 4
    assert sum(len(group.points) for group in groups) == 7 * 4


def test_an_ingest_bumping_the_generation_refreshes_the_cached_points(b200):
    measure(run_on(DAY1), b200, [4])
    assert len(official_points(model="dsr1", scenario="1k1k")[0].points) == 1

    measure(run_on(DAY2), b200, [4, 8])
    assert len(official_points(model="dsr1", scenario="1k1k")[0].points) == 1  # still cached
    data_generation_bump()

    assert len(official_points(model="dsr1", scenario="1k1k")[0].points) == 2


def test_page_control_helpers_list_the_official_data_in_one_query_each(
    django_assert_num_queries,
):
    build_official_history()
    measure(
        run_on(DAY3), ConfigFactory(model_prefix="gptoss", framework="vllm"), [4], scenario="8k1k"
    )
    hidden = run_on(date(2026, 9, 25), hidden_from_official=True)
    measure(hidden, ConfigFactory(model_prefix="qwen3.5"), [4])

    with django_assert_num_queries(1):
        assert official_models() == ["dsr1", "gptoss"]
    with django_assert_num_queries(1):
        assert official_scenarios(model="gptoss") == ["8k1k"]
    with django_assert_num_queries(1):
        assert official_precisions(model="dsr1", scenario="1k1k") == ["fp4", "fp8"]
    with django_assert_num_queries(1):
        assert official_hardware(model="dsr1") == ["b200", "h200", "mi355x"]
    with django_assert_num_queries(1):
        assert official_frameworks(model="dsr1") == ["atom", "sglang", "trt", "vllm"]
    with django_assert_num_queries(1):
        assert official_run_dates(model="dsr1", scenario="1k1k") == [DAY3, DAY2, DAY1]
    assert official_run_dates(model="gptoss") == [DAY3]


def test_chart_series_use_the_frontier_rule_and_the_gpu_cost_table(django_assert_num_queries):
    build_official_history()
    GpuCost.objects.filter(hardware="h200").delete()

    with django_assert_num_queries(4):  # three for the points, one for the GPU costs
        series = official_chart_series(
            model="dsr1",
            scenario="1k1k",
            x_metric="cost_per_million_tokens",
            y_metric="tokens_per_mw",
        )
    with django_assert_num_queries(1):  # the points are cached; GPU costs are read fresh
        official_chart_series(model="dsr1", scenario="1k1k", x_metric="tokens_per_mw")
    with django_assert_num_queries(0):  # stored metrics only: no cost lookup
        official_chart_series(model="dsr1", scenario="1k1k")

    by_hardware = {(s.group.hardware, s.group.framework): s for s in series}
    b200 = by_hardware[("b200", "sglang")]
    cost = GpuCost.objects.get(hardware="b200")
    for chart_point in b200.points:
        tput = chart_point.point.metrics["tput_per_gpu"]
        assert chart_point.x == cost_per_million_tokens(tput, cost.dollars_per_gpu_hour)
        assert chart_point.y == tokens_per_mw(tput, cost.watts_per_gpu)
    expected = frontier_for_metrics(
        [
            Point(x=p.x, y=p.y, concurrency=p.point.concurrency, ref=p.point.cell_id)
            for p in b200.points
        ],
        x_metric="cost_per_million_tokens",
        y_metric="tokens_per_mw",
    )
    assert [p.point.cell_id for p in b200.frontier] == [point.ref for point in expected]
    # No cost entry for h200: no derived values, so nothing to draw a frontier through.
    h200 = by_hardware[("h200", "vllm")]
    assert {(p.x, p.y) for p in h200.points} == {(None, None)}
    assert h200.frontier == ()


def test_chart_series_default_to_the_coverage_axes_and_drop_unusable_values(b200):
    run = run_on(DAY1)
    measure(run, b200, [4, 8, 16])
    CellFactory(run=run, config=b200, concurrency=32, median_e2el=None)
    CellFactory(run=run, config=b200, concurrency=64, median_e2el=math.inf)

    [series] = official_chart_series(model="dsr1", scenario="1k1k")

    assert (series.x_metric, series.y_metric) == ("median_e2el", "tput_per_gpu")
    assert [(p.point.concurrency, p.x) for p in series.points][3:] == [(32, None), (64, None)]
    assert [p.point.concurrency for p in series.frontier] == [4, 8, 16]


def test_chart_series_reject_an_unknown_metric():
    with pytest.raises(ValueError, match="unknown chart metric 'mean_e2el'"):
        official_chart_series(model="dsr1", scenario="1k1k", x_metric="mean_e2el")
