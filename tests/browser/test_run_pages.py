"""Browser: the home page and a run page, as a person sees them."""

import pytest

from runs import demo
from tests.browser.conftest import screenshot

pytestmark = [
    pytest.mark.browser,
    pytest.mark.django_db(transaction=True, serialized_rollback=True),
]


def test_home_page_lists_runs_and_leads_to_a_run_page(demo_server, page):
    page.goto(demo_server.url + "/")
    assert page.get_by_role("heading", name="InferenceX benchmark runs").is_visible()
    screenshot(page, "home")
    page.get_by_role("link", name=str(demo.SEED_PR_RUN_ID), exact=True).first.click()
    page.wait_for_url(f"**/runs/{demo.SEED_PR_RUN_ID}/**")
    assert page.get_by_text("dsv4-atom-disagg-agentic").first.is_visible()
    screenshot(page, "run-detail")
