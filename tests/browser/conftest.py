"""Playwright driving Debian's Chromium against a live test server with the demo data.

Chromium comes from apt (installed here when missing: `playwright install` cannot download
browsers on these machines). Screenshots of every page go to test-results/screenshots/.
"""

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from django.core.management import call_command

from tests.conftest import IN_CI

# Playwright's sync API runs an event loop in the test thread; the test's own ORM calls there
# are still synchronous, so Django's async guard would refuse them.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

SCREENSHOTS = Path(__file__).resolve().parents[2] / "test-results" / "screenshots"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def chromium_path() -> str | None:
    found = shutil.which("chromium")
    if found or os.geteuid() != 0:
        return found
    # As root (CI, these machines): install Debian's package, as the README says.
    for command in (["apt-get", "update", "-qq"], ["apt-get", "install", "-y", "-qq", "chromium"]):
        subprocess.run(command, check=False, capture_output=True, timeout=600)
    return shutil.which("chromium")


@pytest.fixture(scope="session")
def browser():
    path = chromium_path()
    if path is None:
        message = "Debian's chromium is not installed (apt-get install chromium)"
        pytest.fail(message) if IN_CI else pytest.skip(message)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=path, args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1400, "height": 1000}, accept_downloads=True)
    # Nothing may load from outside the test server.
    context.route("http*://**", lambda route: route.continue_()
                  if route.request.url.startswith(("http://localhost", "http://127.0.0.1"))
                  else route.abort())  # fmt: skip
    page = context.new_page()
    yield page
    context.close()


@pytest.fixture
def demo_server(live_server, transactional_db):
    call_command("load_demo", verbosity=0)
    return live_server


def screenshot(page, name: str) -> Path:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    return path
