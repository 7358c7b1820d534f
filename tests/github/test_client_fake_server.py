"""Layer 2: ActionsClient against FakeGitHub over real loopback sockets (api and blob on two ports,
so the download redirect is cross-origin)."""

import hashlib
import os
import socket
import zipfile

import pytest

from runs.github import (
    ActionsClient,
    ArtifactExpired,
    ArtifactTooLarge,
    GitHubUnavailable,
    PermissionDenied,
    RateLimited,
    RunNotFound,
    github_client_from_settings,
)
from tests.github.conftest import FAKE_TOKEN
from tests.github.fakegithub import FakeGitHub, zip_bytes

RESULTS_ZIP = zip_bytes(
    {"results.json": b'{"tput_per_gpu": 1234.5}', "logs/server.log": b"ready\n" * 100}
)


def zip_requests(fake: FakeGitHub) -> list:
    return [request for request in fake.api_requests if request.path.endswith("/zip")]


def test_run_and_its_attempts(fake_github, fake_github_client):
    fake_github.add_run(7, pull_requests=[{"id": 1, "number": 12}])
    fake_github.add_run(7, attempt=2, conclusion="failure")

    latest = fake_github_client.run_get(repo=fake_github.repo, run_id=7)
    first = fake_github_client.run_get(repo=fake_github.repo, run_id=7, attempt=1)

    assert (latest.attempt, latest.conclusion) == (2, "failure")
    assert (first.attempt, first.conclusion, first.pr_numbers) == (1, "success", (12,))
    assert first.run_started_at < latest.run_started_at


def test_unknown_run_is_run_not_found(fake_github, fake_github_client):
    with pytest.raises(RunNotFound):
        fake_github_client.run_get(repo=fake_github.repo, run_id=404)


def test_artifact_listing_walks_every_page(fake_github, fake_github_client):
    fake_github.add_run(7)
    added = [fake_github.add_artifact(7, f"bmk_{index}", b"PK") for index in range(205)]

    listed = fake_github_client.run_artifacts_list(repo=fake_github.repo, run_id=7)

    assert [artifact.id for artifact in listed] == [artifact["id"] for artifact in added]
    paths = [request.path for request in fake_github.api_requests]
    assert paths[0].startswith("/repos/") and len(paths) == 3
    assert all(path.startswith(f"/repositories/{fake_github.repo_id}/") for path in paths[1:])


def test_download_streams_a_real_zip_and_keeps_the_token_off_the_blob_host(
    fake_github, fake_github_client, tmp_path
):
    fake_github.add_run(7)
    fake_github.add_artifact(7, "bmk_results", RESULTS_ZIP)
    [listed] = fake_github_client.run_artifacts_list(repo=fake_github.repo, run_id=7)

    result = fake_github_client.artifact_download(
        repo=fake_github.repo,
        artifact_id=listed.id,
        dest=tmp_path / "results.zip",
        size_in_bytes=listed.size_in_bytes,
    )

    assert result.sha256 == listed.digest == hashlib.sha256(RESULTS_ZIP).hexdigest()
    assert result.content_type == "application/zip"
    with zipfile.ZipFile(result.path) as archive:
        assert archive.read("results.json") == b'{"tput_per_gpu": 1234.5}'
    assert all(
        request.headers.get("Authorization") == f"Bearer {FAKE_TOKEN}"
        for request in fake_github.api_requests
    )
    assert len(fake_github.blob_requests) == 1
    assert "Authorization" not in fake_github.blob_requests[0].headers


def test_stale_signed_url_gets_exactly_one_fresh_redirect(
    fake_github, fake_github_client, tmp_path
):
    fake_github.add_run(7)
    artifact = fake_github.add_artifact(7, "bmk_results", RESULTS_ZIP)
    fake_github.issue_stale_signed_urls(1)

    result = fake_github_client.artifact_download(
        repo=fake_github.repo, artifact_id=artifact["id"], dest=tmp_path / "r.zip"
    )

    assert result.path.read_bytes() == RESULTS_ZIP
    assert len(zip_requests(fake_github)) == 2
    assert [response.status_code for _, response in fake_github.blob.log] == [403, 200]


def test_two_stale_signed_urls_give_up_without_a_third_redirect(
    fake_github, fake_github_client, tmp_path
):
    fake_github.add_run(7)
    artifact = fake_github.add_artifact(7, "bmk_results", RESULTS_ZIP)
    fake_github.issue_stale_signed_urls(2)

    with pytest.raises(PermissionDenied, match="blob storage refused"):
        fake_github_client.artifact_download(
            repo=fake_github.repo, artifact_id=artifact["id"], dest=tmp_path / "r.zip"
        )

    assert len(zip_requests(fake_github)) == 2
    assert not (tmp_path / "r.zip").exists()


def test_expired_artifact_answers_410(fake_github, fake_github_client, tmp_path):
    fake_github.add_run(7)
    artifact = fake_github.add_artifact(7, "old", RESULTS_ZIP, expired=True)

    with pytest.raises(ArtifactExpired):
        fake_github_client.artifact_download(
            repo=fake_github.repo, artifact_id=artifact["id"], dest=tmp_path / "r.zip"
        )


def test_declared_length_over_the_cap_aborts_before_writing(fake_github, tmp_path):
    fake_github.add_run(7)
    artifact = fake_github.add_artifact(7, "huge", os.urandom(4096))
    dest = tmp_path / "huge.zip"

    with (
        ActionsClient(
            base_url=fake_github.base_url, token=FAKE_TOKEN, max_download_bytes=1024
        ) as client,
        pytest.raises(ArtifactTooLarge),
    ):
        client.artifact_download(repo=fake_github.repo, artifact_id=artifact["id"], dest=dest)

    assert not dest.exists()


def test_private_repository_without_token_asks_for_one(fake_github_servers):
    api, blob = fake_github_servers
    with FakeGitHub(token=FAKE_TOKEN, private=True, api=api, blob=blob) as fake:
        fake.add_run(7)
        with (
            ActionsClient(base_url=fake.base_url, token="", max_download_bytes=1024) as client,
            pytest.raises(PermissionDenied, match="GITHUB_TOKEN"),
        ):
            client.run_get(repo=fake.repo, run_id=7)


def test_transient_502_is_retried_over_the_wire(fake_github, fake_github_client):
    fake_github.add_run(7)
    fake_github.fail_next_api_requests(status=502, count=2)

    assert fake_github_client.run_get(repo=fake_github.repo, run_id=7).id == 7
    assert len(fake_github.api_requests) == 3


def test_persistent_503_is_github_unavailable(fake_github, fake_github_client):
    fake_github.add_run(7)
    fake_github.fail_next_api_requests(status=503, count=10)

    with pytest.raises(GitHubUnavailable):
        fake_github_client.run_get(repo=fake_github.repo, run_id=7)


def test_secondary_rate_limit_is_raised_not_slept(fake_github, fake_github_client):
    fake_github.add_run(7)
    fake_github.fail_next_api_requests(
        status=403, headers={"Retry-After": "30"}, body='{"message": "secondary rate limit"}'
    )

    with pytest.raises(RateLimited) as raised:
        fake_github_client.run_get(repo=fake_github.repo, run_id=7)

    assert raised.value.wait_seconds == 30.0
    assert len(fake_github.api_requests) == 1


def test_polling_lists_matching_runs_newest_first(fake_github, fake_github_client):
    fake_github.add_run(7)
    fake_github.add_run(8, event="pull_request")
    fake_github.add_run(9)
    fake_github.add_run(10, status="in_progress", conclusion=None)

    runs = fake_github_client.workflow_runs_list(
        repo=fake_github.repo, workflow="run-sweep.yml", event="push"
    )

    assert [run.id for run in runs] == [9, 7]


def test_factory_reaches_the_fake_through_settings(fake_github, fake_github_settings):
    fake_github.add_run(7)

    with github_client_from_settings() as client:
        assert client.run_get(repo=fake_github_settings.GITHUB_REPOSITORY, run_id=7).id == 7

    assert fake_github.api_requests[0].headers["Authorization"] == f"Bearer {FAKE_TOKEN}"


def test_non_loopback_hosts_cannot_be_resolved():
    with pytest.raises(OSError, match="network access is blocked"):
        socket.getaddrinfo("api.github.com", 443)
