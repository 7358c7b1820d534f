"""Unofficial runs on /inference (`?unofficialRun=<id>`): the parameter, the states of a run
(stored, ingested on the fly from the fake GitHub, missing, expired, private, failed), the
banner, the overlay series, the coverage and comparison panel, the status endpoint, escaping,
and the interpolation on the official frontier."""

# The GitHub fixtures are imported below, so test parameters "redefine" them (F811).
# ruff: noqa: F811

import math

import pytest
from django.http import QueryDict
from django.urls import reverse
from hypothesis import given
from hypothesis import strategies as st

from curves.compare import (
    OfficialFrontier,
    baseline_choose,
    best_official_throughput_at,
    official_throughput_at,
    point_changes,
)
from curves.derived import cost_per_million_tokens
from curves.frontier import Point, frontier
from curves.models import GpuCost
from curves.unofficial import (
    MAX_UNOFFICIAL_RUNS,
    UnofficialState,
    ingest_error_kind,
    unofficial_query_with,
    unofficial_run_ids_parse,
)
from runs import demo
from runs.models import Cell, Config, IngestJob, IngestJobState, WorkflowRun

# The GitHub fixtures of tests/github (a fake GitHub on loopback, settings pointed at it, and no
# lookup of any other host), imported rather than moved, so their autouse guard stays scoped
# to the modules that serve a fake GitHub.
from tests.github.conftest import (  # noqa: F401
    FAKE_TOKEN,
    fake_github,
    fake_github_servers,
    fake_github_settings,
    loopback_only,
)
from tests.github.fakegithub import FakeGitHub
from tests.github.test_ingest_jobs import LATER, add_seed_artifacts, zip_of
from tests.pages.html import page_data, page_read

SEED = demo.SEED_PR_RUN_ID
NEW_RUN = 36159874837  # the run of the seed thread's "View unofficial run" links
HOSTILE = "<img src=x onerror=alert(1)>"


def inference(query: str) -> str:
    return f"{reverse('curves:inference')}?{query}"


def unofficial_series(response) -> list[dict]:
    charts = page_data(page_read(response.content))["charts"]
    return [series for series in charts[1]["series"] if series["kind"] == "unofficial"]


# ---------------------------------------------------------------------------------------------
# The parameter
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("unofficialRun=36159874837", [36159874837]),
        ("unofficialrun=36159874837", [36159874837]),
        ("unofficialRuns=1,2", [1, 2]),
        ("UNOFFICIALRUNS=3", [3]),
        ("unofficialRun=1,%202,,3,&unofficialruns=2,4", [1, 2, 3, 4]),  # dedup, order kept
        ("unofficialRun=5&unofficialRun=6&model=dsv4", [5, 6]),
        ("model=dsv4&unofficial=1&run=2", []),
    ],
)
def test_the_key_is_found_whatever_its_case_and_plural(query, expected):
    assert unofficial_run_ids_parse(QueryDict(query)) == (expected, [])


def test_bad_tokens_get_a_message_with_what_to_do():
    run_ids, messages = unofficial_run_ids_parse(QueryDict("unofficialRun=abc,12,-3,0,١٢"))

    assert run_ids == [12]
    assert messages[0] == (
        "“abc” is not a run id: use the number at the end of the GitHub Actions run URL "
        "(…/actions/runs/<id>)"
    )
    assert len(messages) == 4  # -3, 0 and the Arabic-Indic digits too


def test_more_runs_than_the_cap_are_cut_with_a_message():
    ids = ",".join(str(n) for n in range(1, MAX_UNOFFICIAL_RUNS + 3))
    run_ids, [message] = unofficial_run_ids_parse(QueryDict(f"unofficialRuns={ids}"))

    assert run_ids == list(range(1, MAX_UNOFFICIAL_RUNS + 1))
    assert "only the first 5 are overlaid" in message


def test_a_query_with_other_runs_keeps_every_other_parameter():
    query = QueryDict("model=dsv4&unofficialrun=1,2&UnofficialRuns=3&hide=a&hide=b")

    assert unofficial_query_with(query, run_ids=[1, 3]).urlencode() == (
        "model=dsv4&hide=a&hide=b&unofficialRun=1%2C3"
    )
    assert unofficial_query_with(query, run_ids=[]).urlencode() == "model=dsv4&hide=a&hide=b"


@pytest.mark.parametrize(
    ("error", "kind"),
    [
        ("run 5 does not exist in o/r: workflow run 5 not found (HTTP 404)", "not_found"),
        ("o/r is private or invisible without credentials: a GITHUB_TOKEN with Actions: "
         "read is needed", "no_token"),
        ("GitHub rejected the GITHUB_TOKEN for workflow run 5 (HTTP 401)", "no_token"),
        ("GitHub denied access to workflow run 5 (HTTP 403)", "no_token"),
        ("GitHub rate limit reached; try again in 61 s (slow down)", "failed"),
        ("", "failed"),
    ],
)  # fmt: skip
def test_a_failed_jobs_error_says_what_kind_of_failure_it_is(error, kind):
    assert ingest_error_kind(error) == UnofficialState(kind)


# ---------------------------------------------------------------------------------------------
# A stored run
# ---------------------------------------------------------------------------------------------


@pytest.mark.django_db
def test_a_stored_run_shows_its_banner_overlay_and_coverage(client, demo_data):
    response = client.get(inference(f"unofficialRun={SEED}"), follow=True)

    assert response.status_code == 200
    content = response.content.decode()
    assert "NON-OFFICIAL" in content
    assert "dsv4-atom-disagg-agentic" in content  # branch
    assert "1ed4ab45" in content  # head SHA
    assert 'href="https://github.com/SemiAnalysisAI/InferenceX/pull/2731"' in content
    run_link = f"https://github.com/SemiAnalysisAI/InferenceX/actions/runs/{SEED}/attempts/1"
    assert f'href="{run_link}"' in content
    assert "success" in content  # conclusion
    [series] = unofficial_series(response)
    assert series["label"] == f"UNOFFICIAL run {SEED} · mi355x / atom-disagg / fp4"
    assert series["branch"] == "dsv4-atom-disagg-agentic"
    assert [point["concurrency"] for point in series["points"]] == [1, 16, 64, 128, 256]
    assert [point["frontier"] for point in series["points"]] == [False, True, True, True, True]
    # The coverage panel: status, n/5 and the reviewers' verdict sentence; no bypass yet.
    assert "WARN</span> 4/5" in content
    assert (
        "4/5 frontier points from 5 measured bmk_agentic_* artifacts (tput_per_gpu vs "
        "p90_e2el: c16, c64, c128, c256 on the frontier; c1 is dominated by c16 at higher "
        "p90 E2EL and lower throughput)"
    ) in content
    assert "none for <code>1ed4ab45</code>" in content


@pytest.mark.django_db
def test_the_overlay_takes_its_gpu_and_engines_colour_or_a_free_one(client, demo_data):
    response = client.get(inference(f"unofficialRun={SEED}&model=dsv4&scenario=agentic-coding"))

    charts = page_data(page_read(response.content))["charts"]
    official = [series for series in charts[0]["series"] if series["kind"] == "official"]
    [overlay] = unofficial_series(response)
    # No official atom-disagg series: a colour no official series uses.
    assert overlay["colour"] not in {series["colour"] for series in official}

    # The same run on an engine with official data takes that series' colour.
    Config.objects.filter(cells__run__run_id=SEED).update(framework="mori-sglang")
    response = client.get(inference(f"unofficialRun={SEED}&model=dsv4&scenario=agentic-coding"))
    charts = page_data(page_read(response.content))["charts"]
    [overlay] = unofficial_series(response)
    [same_pair] = [
        s for s in charts[0]["series"] if (s["kind"], s["framework"]) == ("official", "mori-sglang")
    ]
    assert overlay["colour"] == same_pair["colour"]


@pytest.mark.django_db
@pytest.mark.parametrize("y_metric", ["output_tput_per_gpu", "cost_per_million_tokens"])
def test_the_overlay_follows_the_charts_axes(client, demo_data, y_metric):
    GpuCost.objects.update_or_create(
        hardware="mi355x", defaults={"dollars_per_gpu_hour": 2.5, "watts_per_gpu": 1400}
    )
    query = f"unofficialRun={SEED}&model=dsv4&scenario=agentic-coding&y={y_metric}&x=p90_ttft"

    response = client.get(inference(query))

    [series] = unofficial_series(response)
    cells = {cell.pk: cell for cell in Cell.objects.filter(run__run_id=SEED)}
    for point in series["points"]:
        cell = cells[point["cell_id"]]
        expected = (
            cost_per_million_tokens(cell.tput_per_gpu, 2.5)
            if y_metric == "cost_per_million_tokens"
            else cell.output_tput_per_gpu
        )
        assert point["y"] == pytest.approx(expected)
        assert point["x"] == pytest.approx(cell.p90_ttft)


@pytest.mark.django_db
def test_the_change_table_compares_each_point_with_the_official_frontier(client, demo_data):
    response = client.get(inference(f"unofficialRun={SEED}&model=dsv4&scenario=agentic-coding"))

    content = response.content.decode()
    # No official atom-disagg: the best official mi355x fp4 series is the baseline, said so.
    assert "no official atom-disagg series" in content
    page = page_read(response.content)
    change_table = page.tables[-1]
    assert [row[0] for row in change_table] == ["1", "16", "64", "128", "256"]
    ratios = [row[-1] for row in change_table]
    # Every point's p90 E2EL lies within the official frontier's range, so each has a ratio.
    assert all(ratio.startswith("×") for ratio in ratios)


@pytest.mark.django_db
def test_controls_without_the_runs_points_switch_to_its_model_and_scenario(client, demo_data):
    response = client.get(inference(f"model=dsr1&scenario=1k1k&hardware=b200&unofficialRun={SEED}"))

    assert response.status_code == 302
    target = QueryDict(response.url.split("?", 1)[1])
    assert (target["model"], target["scenario"]) == ("dsv4", "agentic-coding")
    assert target["unofficialRun"] == str(SEED)
    assert "hardware" not in target  # a filter of the old selection
    followed = client.get(response.url)
    assert followed.status_code == 200
    assert "where unofficial run 35855544139 has its points" in followed.content.decode()
    assert page_read(followed.content).selected["model"] == ["dsv4"]
    assert unofficial_series(followed)


@pytest.mark.django_db
def test_controls_showing_the_runs_points_stay_and_keep_the_run_in_the_form(client, demo_data):
    response = client.get(inference(f"model=dsv4&scenario=agentic-coding&unofficialrun={SEED}"))

    assert response.status_code == 200
    assert f'name="unofficialRun" value="{SEED}"' in response.content.decode()


@pytest.mark.django_db
def test_a_bad_id_says_what_to_do_and_the_page_still_draws(client, demo_data):
    response = client.get(inference("unofficialRun=abc"))

    assert response.status_code == 200
    content = response.content.decode()
    assert "“abc” is not a run id" in content
    assert "Use the number at the end of the GitHub Actions run URL" in content
    assert page_data(page_read(response.content))["charts"][0]["series"]


@pytest.mark.django_db
def test_dismissing_a_run_drops_only_that_id(client, demo_data):
    IngestJob.objects.create(
        repository="SemiAnalysisAI/InferenceX",
        github_run_id=NEW_RUN,
        requested_by="t",
        state=IngestJobState.RUNNING,
    )
    query = f"model=dsv4&scenario=agentic-coding&unofficialRuns={SEED},{NEW_RUN}&logx=1"

    content = client.get(inference(query)).content.decode()

    dismiss = (
        f'href="/inference?model=dsv4&amp;scenario=agentic-coding&amp;logx=1'
        f'&amp;unofficialRun={NEW_RUN}"'
    )
    assert dismiss in content


@pytest.mark.django_db
def test_artifact_strings_of_the_run_are_escaped(client, demo_data):
    WorkflowRun.objects.filter(run_id=SEED).update(head_branch=HOSTILE)

    response = client.get(inference(f"unofficialRun={SEED}"), follow=True)

    content = response.content.decode()
    assert HOSTILE not in content
    assert "<img" not in content
    assert "&lt;img src=x onerror=alert(1)&gt;" in content  # the banner
    raw_json = page_read(response.content).scripts["inference-data"]
    assert "<" not in raw_json and "\\u003Cimg src=x onerror=alert(1)\\u003E" in raw_json
    [series] = unofficial_series(response)
    assert series["branch"] == HOSTILE  # the script escapes it for Plotly


@pytest.mark.django_db
def test_a_run_with_only_evals_says_where_to_see_it(client, demo_data):
    WorkflowRun.objects.get(run_id=SEED).cells.all().delete()

    response = client.get(inference(f"unofficialRun={SEED}"), follow=True)

    content = response.content.decode()
    assert "has no benchmark results, only 3 eval scores" in content
    assert f"/evaluation?unofficialRun={SEED}" in content


# ---------------------------------------------------------------------------------------------
# Runs not stored: ingested from the fake GitHub within the request (eager Celery)
# ---------------------------------------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_an_unknown_run_is_ingested_and_drawn_in_the_same_request(
    client, fake_github_settings, fake_github
):
    fake_github.add_run(NEW_RUN, event="pull_request", head_branch="pr-branch",
                 pull_requests=[{"number": 2731}])  # fmt: skip
    add_seed_artifacts(fake_github, run_id=NEW_RUN)

    response = client.get(inference(f"unofficialRun={NEW_RUN}"), follow=True)

    assert response.status_code == 200
    job = IngestJob.objects.get(github_run_id=NEW_RUN)
    assert job.state == IngestJobState.SUCCEEDED, job.error
    assert "unofficialRun link" in job.requested_by
    [series] = unofficial_series(response)
    assert len(series["points"]) == 5
    assert "NON-OFFICIAL" in response.content.decode()
    # A second view draws the stored run at once: no new job.
    client.get(inference(f"unofficialRun={NEW_RUN}"), follow=True)
    assert IngestJob.objects.filter(github_run_id=NEW_RUN).count() == 1


@pytest.mark.django_db(transaction=True)
def test_a_run_that_does_not_exist_says_so(client, fake_github_settings):
    response = client.get(inference("unofficialRun=123"))

    content = response.content.decode()
    assert "Run 123 does not exist in SemiAnalysisAI/InferenceX." in content
    assert "it is the number at the end of the run&#x27;s URL" in content
    assert IngestJob.objects.get().state == IngestJobState.FAILED


@pytest.mark.django_db(transaction=True)
def test_a_run_whose_artifacts_expired_says_so(client, fake_github_settings, fake_github):
    fake_github.add_run(NEW_RUN, event="pull_request")
    fake_github.add_artifact(NEW_RUN, "bmk_agentic_x", zip_of({"x.json": {}}), expired=True)
    fake_github.add_artifact(
        NEW_RUN, "eval_results_all", zip_of({"agg_eval_all.json": []}), expired=True
    )

    content = client.get(inference(f"unofficialRun={NEW_RUN}")).content.decode()

    assert f"The benchmark and eval artifacts of run {NEW_RUN} expired on GitHub" in content
    assert "Re-run the sweep on GitHub" in content


@pytest.mark.django_db(transaction=True)
def test_a_run_without_benchmark_or_eval_artifacts_says_so(
    client, fake_github_settings, fake_github
):
    fake_github.add_run(NEW_RUN, event="pull_request")
    fake_github.add_artifact(NEW_RUN, "run-stats", zip_of({"run_stats.json": {}}), expires_at=LATER)

    content = client.get(inference(f"unofficialRun={NEW_RUN}")).content.decode()

    assert f"Run {NEW_RUN} uploaded no benchmark or eval artifacts." in content


@pytest.mark.django_db(transaction=True)
def test_a_private_repository_without_a_token_says_an_admin_must_set_one(
    client, settings, fake_github_servers
):
    api, blob = fake_github_servers
    with FakeGitHub(token=FAKE_TOKEN, private=True, api=api, blob=blob) as fake:
        fake.add_run(NEW_RUN)
        settings.GITHUB_API_URL = fake.base_url
        settings.GITHUB_REPOSITORY = fake.repo
        settings.GITHUB_TOKEN = ""

        content = client.get(inference(f"unofficialRun={NEW_RUN}")).content.decode()

    assert f"GitHub would not show run {NEW_RUN}" in content
    assert "An admin sets GITHUB_TOKEN" in content


@pytest.mark.django_db(transaction=True)
def test_a_failed_ingest_links_to_its_job(client, fake_github_settings, fake_github):
    fake_github.add_run(NEW_RUN)
    fake_github.fail_next_api_requests(
        status=403, headers={"retry-after": "61"}, body="secondary rate limit", count=3
    )

    content = client.get(inference(f"unofficialRun={NEW_RUN}")).content.decode()

    job = IngestJob.objects.get()
    assert f"Ingesting run {NEW_RUN} failed: GitHub rate limit reached" in content
    assert f'href="/runs/{NEW_RUN}/#job-progress">Ingest job {job.pk} (failed)' in content
    # Reloading at once shows the same failure instead of calling GitHub again.
    client.get(inference(f"unofficialRun={NEW_RUN}"))
    assert IngestJob.objects.count() == 1


# ---------------------------------------------------------------------------------------------
# Live progress
# ---------------------------------------------------------------------------------------------


@pytest.mark.django_db
def test_a_run_being_ingested_polls_the_status_endpoint(client):
    IngestJob.objects.create(
        repository="SemiAnalysisAI/InferenceX",
        github_run_id=NEW_RUN,
        requested_by="t",
        state=IngestJobState.RUNNING,
        artifacts_total=14,
        artifacts_done=3,
    )

    content = client.get(inference(f"unofficialRun={NEW_RUN}")).content.decode()

    assert f"Run {NEW_RUN} is being ingested from GitHub: 3 of 14 artifacts read." in content
    assert f'hx-get="/unofficial/status/?ids={NEW_RUN}&amp;page=inference"' in content
    assert "htmx-2.min.js" in content

    fragment = client.get(
        reverse("curves:unofficial_status"), {"ids": NEW_RUN, "page": "inference"}
    )
    assert fragment.status_code == 200
    assert 'id="unofficial-progress"' in fragment.content.decode()
    assert "3 / 14 artifacts" in fragment.content.decode()
    assert "HX-Refresh" not in fragment.headers


@pytest.mark.django_db
def test_the_status_endpoint_asks_for_a_reload_once_a_run_is_done(client, demo_data):
    response = client.get(reverse("curves:unofficial_status"), {"ids": SEED, "page": "inference"})

    assert response.status_code == 200
    assert response.headers["HX-Refresh"] == "true"
    assert 'id="unofficial-progress"' in response.content.decode()


@pytest.mark.django_db
def test_the_status_endpoint_rejects_an_unknown_page(client):
    response = client.get(reverse("curves:unofficial_status"), {"ids": "1", "page": "admin"})

    assert response.status_code == 400


# ---------------------------------------------------------------------------------------------
# The official throughput at a latency (curves.compare)
# ---------------------------------------------------------------------------------------------

coordinates = st.floats(min_value=0.01, max_value=1e6, allow_nan=False, allow_infinity=False)
point_sets = st.lists(st.tuples(coordinates, coordinates), min_size=1, max_size=12)


def official_frontier(pairs) -> list[Point]:
    return frontier((Point(x=x, y=y) for x, y in pairs), maximise_x=False, maximise_y=True)


def test_interpolation_is_linear_between_frontier_points():
    line = [Point(x=10, y=100), Point(x=20, y=300), Point(x=40, y=400)]

    assert official_throughput_at(line, x=10) == 100
    assert official_throughput_at(line, x=15) == pytest.approx(200)
    assert official_throughput_at(line, x=30) == pytest.approx(350)
    assert official_throughput_at(line, x=40) == 400
    assert official_throughput_at(line, x=9.99) is None
    assert official_throughput_at(line, x=40.01) is None
    assert official_throughput_at([], x=1) is None


@given(pairs=point_sets, share=st.floats(min_value=0, max_value=1))
def test_inside_the_frontier_the_value_lies_between_its_neighbours(pairs, share):
    line = official_frontier(pairs)
    x = line[0].x + share * (line[-1].x - line[0].x)

    value = official_throughput_at(line, x=x)

    assert value is not None
    below = max((p for p in line if p.x <= x), key=lambda p: p.x)
    above = min((p for p in line if p.x >= x), key=lambda p: p.x)
    assert below.y - 1e-6 * below.y <= value <= above.y + 1e-6 * above.y


@given(pairs=point_sets)
def test_at_a_frontier_point_the_value_is_its_throughput(pairs):
    line = official_frontier(pairs)

    assert [official_throughput_at(line, x=p.x) for p in line] == [p.y for p in line]


@given(pairs=point_sets, x=coordinates)
def test_outside_the_frontiers_range_there_is_no_value(pairs, x):
    line = official_frontier(pairs)

    value = official_throughput_at(line, x=x)

    assert (value is None) == (not line[0].x <= x <= line[-1].x)


@given(pairs=point_sets, xs=st.lists(st.floats(min_value=0, max_value=1), min_size=2))
def test_the_value_never_falls_with_latency(pairs, xs):
    line = official_frontier(pairs)
    span = line[-1].x - line[0].x
    values = [official_throughput_at(line, x=line[0].x + s * span) for s in sorted(xs)]

    assert all(b >= a - 1e-9 * abs(a) for a, b in zip(values, values[1:], strict=False))


@given(first=point_sets, second=point_sets, x=coordinates)
def test_the_best_of_several_frontiers_is_the_highest_value(first, second, x):
    lines = [official_frontier(first), official_frontier(second)]
    values = [v for v in (official_throughput_at(line, x=x) for line in lines) if v is not None]

    assert best_official_throughput_at(lines, x=x) == (max(values) if values else None)


def test_point_changes_give_the_ratio_to_the_official_value():
    line = [Point(x=10, y=100), Point(x=20, y=200)]
    points = [Point(x=15, y=300, ref="c64"), Point(x=5, y=50, ref="c1")]

    inside, outside = point_changes(points, official_frontiers=[line])

    assert (inside.official_y, inside.ratio) == (150, 2)
    assert math.isclose(inside.percent, 100)
    assert (outside.official_y, outside.ratio, outside.percent) == (None, None, None)


def test_the_baseline_is_the_same_engine_else_the_gpus_best():
    def series(hardware, framework, precision):
        return OfficialFrontier(
            hardware=hardware, framework=framework, precision=precision, label=framework, points=()
        )

    official = [series("mi355x", "sglang", "fp4"), series("mi355x", "atom", "fp4"),
                series("b200", "atom", "fp4"), series("mi355x", "atom", "fp8")]  # fmt: skip

    same = baseline_choose(official, hardware="mi355x", framework="atom", precision="fp4")
    assert same.same_framework and same.labels == ["atom"]
    other = baseline_choose(official, hardware="mi355x", framework="new", precision="fp4")
    assert not other.same_framework and other.labels == ["sglang", "atom"]
    none = baseline_choose(official, hardware="h100", framework="atom", precision="fp4")
    assert none.frontiers == ()
