"""Fixtures for the GitHub layer. To share them with end-to-end tests, move this file's contents
into tests/conftest.py (the fake itself stays importable as tests.github.fakegithub)."""

import ipaddress
import socket
from collections.abc import Iterator

import pytest
from pytest_httpserver import HTTPServer

from runs.github import ActionsClient
from tests.github.fakegithub import FakeGitHub

FAKE_TOKEN = "ghs_fake_installation_token"
FAKE_MAX_DOWNLOAD_BYTES = 1024 * 1024


def _is_loopback(host: object) -> bool:
    if isinstance(host, bytes):
        host = host.decode()
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(str(host)).is_loopback
    except ValueError:
        return False


@pytest.fixture(autouse=True)
def loopback_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fail any lookup of a non-loopback host, so no test can reach the real GitHub."""
    real_getaddrinfo = socket.getaddrinfo

    def guarded_getaddrinfo(host, *args, **kwargs):
        if not _is_loopback(host):
            raise OSError(f"network access is blocked in tests (tried to resolve {host!r})")
        return real_getaddrinfo(host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", guarded_getaddrinfo)


@pytest.fixture(scope="session")
def fake_github_servers() -> Iterator[tuple[HTTPServer, HTTPServer]]:
    """One api + blob server pair for the session; each fake clears them after its test."""
    api, blob = HTTPServer(host="127.0.0.1"), HTTPServer(host="127.0.0.1")
    api.start()
    blob.start()
    yield api, blob
    api.stop()
    blob.stop()


@pytest.fixture
def fake_github(fake_github_servers) -> Iterator[FakeGitHub]:
    """A running fake GitHub with an empty state, expecting FAKE_TOKEN."""
    api, blob = fake_github_servers
    with FakeGitHub(token=FAKE_TOKEN, api=api, blob=blob) as fake:
        yield fake


@pytest.fixture
def fake_github_client(fake_github: FakeGitHub) -> Iterator[ActionsClient]:
    """An ActionsClient pointed at `fake_github`; transient retries do not sleep."""
    with ActionsClient(
        base_url=fake_github.base_url,
        token=FAKE_TOKEN,
        max_download_bytes=FAKE_MAX_DOWNLOAD_BYTES,
        sleep=lambda seconds: None,
    ) as client:
        yield client


@pytest.fixture
def fake_github_settings(settings, fake_github: FakeGitHub):
    """Settings pointed at `fake_github`, for code using github_client_from_settings()."""
    settings.GITHUB_API_URL = fake_github.base_url
    settings.GITHUB_TOKEN = FAKE_TOKEN
    settings.GITHUB_REPOSITORY = fake_github.repo
    settings.MAX_ARTIFACT_BYTES = FAKE_MAX_DOWNLOAD_BYTES
    return settings
