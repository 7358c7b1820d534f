"""Server-rendered run pages: the list with its filters, images, and the home page."""

import pytest

from runs import demo
from runs.models import Image, WorkflowRun

pytestmark = pytest.mark.django_db


def run_ids(response) -> set[int]:
    return {run.run_id for run in response.context["page"]}


def test_run_list_shows_every_run_with_counts(client, demo_data):
    response = client.get("/runs/")
    assert response.status_code == 200
    assert run_ids(response) == set(WorkflowRun.objects.values_list("run_id", flat=True))
    pr_run = next(run for run in response.context["page"] if run.run_id == demo.SEED_PR_RUN_ID)
    assert (pr_run.cell_count, pr_run.failed_count, pr_run.eval_count) == (5, 0, 3)


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("official=false", {demo.SEED_PR_RUN_ID}),
        ("branch=dsv4-atom-disagg-agentic", {demo.SEED_PR_RUN_ID}),
        ("pr=2731", {demo.SEED_PR_RUN_ID}),
        (f"sha={demo.SEED_PR_SHA[:7].upper()}", {demo.SEED_PR_RUN_ID}),
        (
            "model=dsv4&hardware=mi355x",
            {35700000000, 35701111111, 35702222222, demo.SEED_PR_RUN_ID},
        ),
        ("model=gptoss&official=false", set()),
    ],
)
def test_run_list_filters(client, demo_data, query, expected):
    assert run_ids(client.get(f"/runs/?{query}")) == expected


def test_run_list_explains_a_bad_filter(client, demo_data):
    response = client.get("/runs/?sha=xyz&pr=abc")
    assert response.status_code == 200
    assert b"Some filters were not understood" in response.content
    assert run_ids(response) == set()


def test_run_list_paginates_and_keeps_filters(client, demo_data, monkeypatch):
    monkeypatch.setattr("runs.views.RUNS_PER_PAGE", 2)
    first = client.get("/runs/?official=true")
    assert len(run_ids(first)) == 2
    assert b"official=true&amp;page=2" in first.content
    assert len(run_ids(client.get("/runs/?official=true&page=2"))) == 1


def test_run_list_query_count_does_not_grow_with_runs(client, demo_data, django_assert_num_queries):
    with django_assert_num_queries(4):  # count, page, two filter-choice lists
        client.get("/runs/")


def test_images_list_first_and_last_seen_and_usage(client, demo_data):
    response = client.get("/images/")
    seed = next(i for i in response.context["images"] if i.reference == demo.SEED_PR_IMAGE)
    # Three topologies: TP8, DP-attention with EP8, and DP-attention with the DRAM KV tier.
    assert (seed.run_count, seed.config_count) == (1, 3)
    assert seed.first_seen == seed.last_seen
    detail = client.get(f"/images/{seed.pk}/")
    assert [run.run_id for run in detail.context["runs"]] == [demo.SEED_PR_RUN_ID]
    assert b"atom-disagg" in detail.content


def test_image_pages_escape_hostile_references(client, db):
    image = Image.objects.create(reference="<script>alert(1)</script>", repository="<b>x</b>")
    body = client.get(f"/images/{image.pk}/").content
    assert b"<script>alert(1)" not in body and b"&lt;script&gt;" in body
    assert b"<b>x</b>" not in client.get("/images/").content


def test_home_links_latest_official_run_charts_and_unofficial_runs(client, demo_data):
    body = client.get("/").content.decode()
    assert "/runs/35702222222/?attempt=1" in body
    assert "/inference" in body and "/runs/?official=false" in body
    assert str(demo.SEED_PR_RUN_ID) in body
