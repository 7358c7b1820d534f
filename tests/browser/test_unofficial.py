# ruff: noqa: F811  (pytest fixtures imported by name, then requested as arguments)
"""Browser: a reviewer opens the unofficial-run links pasted into a pull request."""

import pytest

from runs import demo
from tests.browser.conftest import screenshot
from tests.github.conftest import (  # noqa: F401  (fixtures)
    fake_github,
    fake_github_servers,
    fake_github_settings,
)
from tests.github.test_ingest_jobs import add_seed_artifacts
from tests.github.test_worker import worker, worker_env  # noqa: F401  (fixtures)

pytestmark = [
    pytest.mark.browser,
    pytest.mark.django_db(transaction=True, serialized_rollback=True),
]

UNKNOWN_RUN = 36159874837  # the run id of the seed thread's "View unofficial run" links


def broker_connections_forget(app) -> None:
    """Drop the connection and producer pools built for the previous broker URL, so the next
    message goes to the broker configured now (Celery keeps both for the app's life)."""
    app._pool = None
    app.amqp._producer_pool = None


def unofficial_markers(page, chart_id: str) -> int:
    """Points drawn as crosses: the overlay's markers."""
    return page.evaluate(
        """id => document.getElementById(id).data
            .filter(t => t.marker && String(t.marker.symbol).startsWith('x'))
            .reduce((n, t) => n + t.x.length, 0)""",
        chart_id,
    )


def test_a_stored_pr_run_overlays_with_its_banner(demo_server, page):
    page.goto(f"{demo_server.url}/inference?unofficialRun={demo.SEED_PR_RUN_ID}")
    page.wait_for_selector("#chart-latency .main-svg")
    assert "scenario=agentic-coding" in page.url  # switched to the run's model and scenario
    banner = page.locator(".unofficial-banner")
    assert (
        "NON-OFFICIAL" in banner.inner_text() and "dsv4-atom-disagg-agentic" in banner.inner_text()
    )
    assert unofficial_markers(page, "chart-latency") == 5
    assert page.get_by_text("4/5 frontier points").first.is_visible()
    screenshot(page, "inference-unofficial")

    page.locator(".unofficial-dismiss").click()
    page.wait_for_selector("#chart-latency .main-svg")
    assert "unofficialRun" not in page.url
    assert page.locator(".unofficial-banner").count() == 0

    page.goto(f"{demo_server.url}/evaluation?unofficialRun={demo.SEED_PR_RUN_ID}")
    page.wait_for_load_state("networkidle")
    assert page.locator(".unofficial-banner").count() == 1
    screenshot(page, "evaluation-unofficial")


@pytest.mark.services
def test_an_unknown_run_goes_from_live_progress_to_the_overlay(
    demo_server,
    page,
    fake_github,
    fake_github_settings,
    worker,
    worker_env,
    settings,  # noqa: F811
):
    """A real worker ingests the run from the fake GitHub while the page polls its progress."""
    from infx_site.celery import app

    fake_github.add_run(UNKNOWN_RUN, event="pull_request", head_branch="pr-branch")
    add_seed_artifacts(fake_github, run_id=UNKNOWN_RUN)
    fake_github.blob_delay_seconds = 0.6
    # This process (the live server) now queues tasks on Redis for the worker, like the web.
    previous = app.conf.task_always_eager, app.conf.broker_url
    app.conf.task_always_eager, app.conf.broker_url = False, worker_env["REDIS_URL"]
    broker_connections_forget(app)
    try:
        page.goto(f"{demo_server.url}/inference?unofficialRun={UNKNOWN_RUN}")
        page.wait_for_selector("#unofficial-progress")
        screenshot(page, "inference-unofficial-progress")
        # The page reloads by itself once the job is done and shows the overlay.
        page.wait_for_selector(".unofficial-banner", timeout=90_000)
        page.wait_for_selector("#chart-latency .main-svg")
        assert unofficial_markers(page, "chart-latency") == 5
        screenshot(page, "inference-unofficial-after-ingest")
    finally:
        app.conf.task_always_eager, app.conf.broker_url = previous
        broker_connections_forget(app)
