"""Layer 1: ActionsClient against respx routes (no sockets; unrouted requests fail the test)."""

import hashlib
import random
from datetime import UTC, datetime

import httpx
import pytest
import respx

from runs.github import (
    API_VERSION,
    DEFAULT_USER_AGENT,
    ActionsClient,
    ArtifactExpired,
    ArtifactInfo,
    ArtifactTooLarge,
    GitHubError,
    GitHubUnavailable,
    NotFound,
    PermissionDenied,
    RateLimited,
    RunInfo,
    RunNotFound,
)
from tests.github.fakegithub import (
    DEFAULT_REPO,
    DEFAULT_REPO_ID,
    artifact_payload,
    minimal_repository,
    run_payload,
)

API = "https://api.github.test"
REPO_URL = f"{API}/repos/{DEFAULT_REPO}"
BLOB = "https://blob.example.net"
TOKEN = "ghp_unit_test_token"
MAX_BYTES = 1000
PINNED_NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


@pytest.fixture
def github_api():
    with respx.mock(assert_all_called=False) as mock:
        yield mock


@pytest.fixture
def sleeps() -> list[float]:
    return []


def make_client(*, token: str, sleeps: list[float]) -> ActionsClient:
    return ActionsClient(
        base_url=API,
        token=token,
        max_download_bytes=MAX_BYTES,
        sleep=sleeps.append,
        rng=random.Random(7),
    )


@pytest.fixture
def client(sleeps):
    with make_client(token=TOKEN, sleeps=sleeps) as github:
        yield github


@pytest.fixture
def anonymous_client(sleeps):
    with make_client(token="", sleeps=sleeps) as github:
        yield github


def api_run(run_id: int, **fields) -> dict:
    return run_payload(run_id=run_id, api_url=f"{API}/", **fields)


# Reads ---------------------------------------------------------------------------------------


def test_run_get_maps_the_workflow_run_and_sends_github_headers(github_api, client):
    fork = minimal_repository(full_name="someone/InferenceX", repo_id=77, api_url=f"{API}/")
    payload = api_run(
        42,
        pull_requests=[{"id": 1, "number": 7}, {"id": 2, "number": 9}],
        head_repository=fork,
        head_branch="feature/x",
    )
    route = github_api.get(f"{REPO_URL}/actions/runs/42").respond(json=payload)

    run = client.run_get(repo=DEFAULT_REPO, run_id=42)

    assert run == RunInfo(
        id=42,
        attempt=1,
        workflow_id=payload["workflow_id"],
        workflow_name="Run Sweep",
        workflow_path=".github/workflows/run-sweep.yml",
        event="push",
        head_sha=payload["head_sha"],
        head_branch="feature/x",
        pr_numbers=(7, 9),
        status="completed",
        conclusion="success",
        html_url=f"https://github.com/{DEFAULT_REPO}/actions/runs/42",
        created_at=datetime(2026, 1, 5, 10, 0, tzinfo=UTC),
        run_started_at=datetime(2026, 1, 5, 10, 0, tzinfo=UTC),
        updated_at=datetime(2026, 1, 5, 10, 30, tzinfo=UTC),
        repository=DEFAULT_REPO,
        head_repository="someone/InferenceX",
    )
    sent = route.calls.last.request.headers
    assert sent["Authorization"] == f"Bearer {TOKEN}"
    assert sent["Accept"] == "application/vnd.github+json"
    assert sent["X-GitHub-Api-Version"] == API_VERSION == "2022-11-28"
    assert sent["User-Agent"] == DEFAULT_USER_AGENT


def test_run_get_with_attempt_reads_the_attempt_endpoint(github_api, client):
    github_api.get(f"{REPO_URL}/actions/runs/42/attempts/2").respond(
        json=api_run(42, attempt=2, conclusion="failure")
    )

    run = client.run_get(repo=DEFAULT_REPO, run_id=42, attempt=2)

    assert (run.attempt, run.conclusion) == (2, "failure")
    assert run.run_started_at == datetime(2026, 1, 5, 11, 0, tzinfo=UTC)


def test_nullable_run_fields_become_blank_strings():
    payload = api_run(
        5,
        name=None,
        head_branch=None,
        status=None,
        conclusion=None,
        head_repository=None,
        pull_requests=[],
    )
    del payload["run_started_at"]

    run = RunInfo.from_json(payload)

    assert (run.workflow_name, run.head_branch, run.status, run.conclusion) == ("", "", "", "")
    assert (run.head_repository, run.pr_numbers, run.run_started_at) == ("", (), None)


def test_without_a_token_no_authorization_header_is_sent(github_api, anonymous_client):
    route = github_api.get(f"{REPO_URL}/actions/runs/42").respond(json=api_run(42))

    anonymous_client.run_get(repo=DEFAULT_REPO, run_id=42)

    assert "Authorization" not in route.calls.last.request.headers


def test_artifact_list_follows_link_pagination(github_api, client):
    page_two_url = f"{API}/repositories/{DEFAULT_REPO_ID}/actions/runs/42/artifacts"
    first = [
        artifact_payload(artifact_id=1, run_id=42, name="a", body=b"zip-a"),
        artifact_payload(artifact_id=2, run_id=42, name="b", body=b"zip-b", digest=None),
    ]
    second = [
        artifact_payload(artifact_id=3, run_id=42, name="a", body=b"zip-c", expired=True),
    ]
    second[0]["digest"] = second[0]["digest"].removeprefix("sha256:")  # the bare-hex form
    page_one = github_api.get(f"{REPO_URL}/actions/runs/42/artifacts").respond(
        json={"total_count": 3, "artifacts": first},
        headers={"Link": f'<{page_two_url}?per_page=100&page=2>; rel="next"'},
    )
    page_two = github_api.get(page_two_url).respond(json={"total_count": 3, "artifacts": second})

    artifacts = client.run_artifacts_list(repo=DEFAULT_REPO, run_id=42)

    assert [artifact.id for artifact in artifacts] == [1, 2, 3]
    assert page_one.calls.last.request.url.params["per_page"] == "100"
    assert page_two.calls.last.request.url.params["page"] == "2"
    assert artifacts[0] == ArtifactInfo(
        id=1,
        name="a",
        size_in_bytes=5,
        digest=hashlib.sha256(b"zip-a").hexdigest(),
        created_at=datetime(2026, 1, 5, 10, 0, tzinfo=UTC),
        expires_at=datetime(2026, 4, 5, 10, 0, tzinfo=UTC),
        expired=False,
    )
    assert artifacts[1].digest == ""
    assert artifacts[2].digest == hashlib.sha256(b"zip-c").hexdigest()
    assert artifacts[2].expired


def test_pagination_link_to_another_host_is_refused(github_api, client):
    github_api.get(f"{REPO_URL}/actions/runs/42/artifacts").respond(
        json={"total_count": 40, "artifacts": []},
        headers={"Link": '<https://evil.example/steal?page=2>; rel="next"'},
    )

    with pytest.raises(GitHubError, match="off the API host"):
        client.run_artifacts_list(repo=DEFAULT_REPO, run_id=42)


def test_workflow_runs_list_sends_filters_and_stops_at_max_pages(github_api, client):
    route = github_api.get(f"{REPO_URL}/actions/workflows/run-sweep.yml/runs").respond(
        json={"total_count": 300, "workflow_runs": [api_run(9), api_run(8)]},
        headers={"Link": f'<{API}/repositories/1/actions/workflows/1/runs?page=2>; rel="next"'},
    )

    runs = client.workflow_runs_list(
        repo=DEFAULT_REPO, workflow="run-sweep.yml", branch="main", event="push", per_page=2
    )

    assert [run.id for run in runs] == [9, 8]
    assert dict(route.calls.last.request.url.params) == {
        "status": "completed",
        "branch": "main",
        "event": "push",
        "per_page": "2",
    }


def test_unexpected_payload_is_a_github_error(github_api, client):
    github_api.get(f"{REPO_URL}/actions/runs/42").respond(json={"id": 42})

    with pytest.raises(GitHubError, match="unexpected payload"):
        client.run_get(repo=DEFAULT_REPO, run_id=42)


@pytest.mark.parametrize("repo", ["no-slash", "a/b/c", "../x", "owner/..", "a b/c"])
def test_repository_names_that_could_bend_the_url_are_refused(client, repo):
    with pytest.raises(ValueError, match="owner/name"):
        client.run_get(repo=repo, run_id=1)


def test_artifact_is_expired_by_flag_or_by_date():
    payload = artifact_payload(artifact_id=1, run_id=1, name="a", body=b"x")  # expires 2026-04-05
    listed = ArtifactInfo.from_json(payload)
    flagged = ArtifactInfo.from_json({**payload, "expired": True})

    assert not listed.is_expired(now=PINNED_NOW)
    assert listed.is_expired(now=datetime(2026, 4, 5, 10, 0, tzinfo=UTC))
    assert flagged.is_expired(now=PINNED_NOW)


# Error mapping -------------------------------------------------------------------------------


def test_404_on_a_run_is_run_not_found(github_api, client):
    route = github_api.get(f"{REPO_URL}/actions/runs/42").respond(404, json={"message": "x"})

    with pytest.raises(RunNotFound):
        client.run_get(repo=DEFAULT_REPO, run_id=42)

    assert route.call_count == 1


def test_404_without_token_on_an_invisible_repo_asks_for_a_token(github_api, anonymous_client):
    github_api.get(f"{REPO_URL}/actions/runs/42").respond(404)
    github_api.get(REPO_URL).respond(404)

    with pytest.raises(PermissionDenied, match="GITHUB_TOKEN"):
        anonymous_client.run_get(repo=DEFAULT_REPO, run_id=42)


def test_404_without_token_on_a_public_repo_is_run_not_found(github_api, anonymous_client):
    github_api.get(f"{REPO_URL}/actions/runs/42").respond(404)
    github_api.get(REPO_URL).respond(json={"full_name": DEFAULT_REPO})

    with pytest.raises(RunNotFound):
        anonymous_client.run_get(repo=DEFAULT_REPO, run_id=42)


def test_401_without_token_asks_for_a_token(github_api, anonymous_client):
    github_api.get(f"{REPO_URL}/actions/runs/42").respond(401)

    with pytest.raises(PermissionDenied, match="GITHUB_TOKEN .* is needed"):
        anonymous_client.run_get(repo=DEFAULT_REPO, run_id=42)


def test_401_with_a_token_says_it_was_rejected(github_api, client):
    github_api.get(f"{REPO_URL}/actions/runs/42").respond(401)

    with pytest.raises(PermissionDenied, match="rejected the GITHUB_TOKEN"):
        client.run_get(repo=DEFAULT_REPO, run_id=42)


def test_404_on_a_workflow_is_not_found(github_api, client):
    github_api.get(f"{REPO_URL}/actions/workflows/nope.yml/runs").respond(404)

    with pytest.raises(NotFound):
        client.workflow_runs_list(repo=DEFAULT_REPO, workflow="nope.yml")


def test_403_with_retry_after_is_a_secondary_rate_limit_without_sleeping(
    github_api, client, sleeps
):
    route = github_api.get(f"{REPO_URL}/actions/runs/42").respond(
        403,
        headers={"retry-after": "61", "x-ratelimit-remaining": "4000"},
        json={"message": "You have exceeded a secondary rate limit."},
    )

    with pytest.raises(RateLimited) as raised:
        client.run_get(repo=DEFAULT_REPO, run_id=42)

    assert (raised.value.wait_seconds, raised.value.primary) == (61.0, False)
    assert route.call_count == 1
    assert sleeps == []


def test_429_with_exhausted_quota_waits_until_reset(github_api, client, sleeps, time_machine):
    time_machine.move_to(PINNED_NOW, tick=False)
    reset_at = int(PINNED_NOW.timestamp()) + 120
    github_api.get(f"{REPO_URL}/actions/runs/42/artifacts").respond(
        429,
        headers={"x-ratelimit-remaining": "0", "x-ratelimit-reset": str(reset_at)},
        json={"message": "API rate limit exceeded"},
    )

    with pytest.raises(RateLimited) as raised:
        client.run_artifacts_list(repo=DEFAULT_REPO, run_id=42)

    assert (raised.value.wait_seconds, raised.value.primary) == (121.0, True)
    assert sleeps == []


def test_403_secondary_limit_message_waits_at_least_a_minute(github_api, client):
    github_api.get(f"{REPO_URL}/actions/runs/42").respond(
        403, json={"message": "You have exceeded a secondary rate limit. Please wait."}
    )

    with pytest.raises(RateLimited) as raised:
        client.run_get(repo=DEFAULT_REPO, run_id=42)

    assert 60 <= raised.value.wait_seconds <= 75
    assert not raised.value.primary


def test_plain_403_is_permission_denied_and_not_retried(github_api, client, sleeps):
    route = github_api.get(f"{REPO_URL}/actions/runs/42").respond(
        403, json={"message": "Resource not accessible by integration"}
    )

    with pytest.raises(PermissionDenied):
        client.run_get(repo=DEFAULT_REPO, run_id=42)

    assert (route.call_count, sleeps) == (1, [])


def test_5xx_is_retried_with_short_backoff_then_succeeds(github_api, client, sleeps):
    route = github_api.get(f"{REPO_URL}/actions/runs/42")
    route.side_effect = [
        httpx.Response(502),
        httpx.Response(503),
        httpx.Response(200, json=api_run(42)),
    ]

    assert client.run_get(repo=DEFAULT_REPO, run_id=42).id == 42

    assert route.call_count == 3
    assert len(sleeps) == 2
    assert 0.5 <= sleeps[0] <= 0.625
    assert 1.0 <= sleeps[1] <= 1.25


def test_5xx_exhausting_the_retries_is_github_unavailable(github_api, client, sleeps):
    route = github_api.get(f"{REPO_URL}/actions/runs/42").respond(500)

    with pytest.raises(GitHubUnavailable, match="failed 4 times; last: HTTP 500"):
        client.run_get(repo=DEFAULT_REPO, run_id=42)

    assert route.call_count == 4
    assert len(sleeps) == 3


def test_connection_errors_are_retried(github_api, client, sleeps):
    route = github_api.get(f"{REPO_URL}/actions/runs/42")
    route.side_effect = [httpx.ConnectError("refused"), httpx.Response(200, json=api_run(42))]

    assert client.run_get(repo=DEFAULT_REPO, run_id=42).id == 42
    assert len(sleeps) == 1


def test_persistent_timeouts_are_github_unavailable(github_api, client):
    github_api.get(f"{REPO_URL}/actions/runs/42").mock(side_effect=httpx.ReadTimeout("slow"))

    with pytest.raises(GitHubUnavailable, match="ReadTimeout"):
        client.run_get(repo=DEFAULT_REPO, run_id=42)


# Downloads -----------------------------------------------------------------------------------


def redirect_to_blob(github_api, *, artifact_id: int, blob_path: str):
    return github_api.get(f"{REPO_URL}/actions/artifacts/{artifact_id}/zip").respond(
        302, headers={"Location": f"{BLOB}{blob_path}?sig=secret"}
    )


def test_download_follows_the_redirect_without_the_token(github_api, client, tmp_path):
    api_route = redirect_to_blob(github_api, artifact_id=3, blob_path="/a/3")
    body = b"PK\x03\x04zipdata"
    blob_route = github_api.get(f"{BLOB}/a/3").respond(
        content=body, headers={"Content-Type": "application/zip"}
    )

    result = client.artifact_download(repo=DEFAULT_REPO, artifact_id=3, dest=tmp_path / "a.zip")

    assert api_route.calls.last.request.headers["Authorization"] == f"Bearer {TOKEN}"
    assert "Authorization" not in blob_route.calls.last.request.headers
    assert result.sha256 == hashlib.sha256(body).hexdigest()
    assert (result.size_bytes, result.content_type) == (len(body), "application/zip")
    assert (tmp_path / "a.zip").read_bytes() == body


def test_unzipped_single_file_artifact_is_saved_as_is(github_api, client, tmp_path):
    body = b'{"tput_per_gpu": 1234.5}'
    redirect_to_blob(github_api, artifact_id=4, blob_path="/raw/4")
    github_api.get(f"{BLOB}/raw/4").respond(
        content=body, headers={"Content-Type": "application/octet-stream"}
    )

    result = client.artifact_download(repo=DEFAULT_REPO, artifact_id=4, dest=tmp_path / "a.bin")

    assert result.content_type == "application/octet-stream"
    assert result.sha256 == hashlib.sha256(body).hexdigest()
    assert result.path.read_bytes() == body


def test_410_on_download_is_artifact_expired(github_api, client, tmp_path):
    github_api.get(f"{REPO_URL}/actions/artifacts/5/zip").respond(
        410, json={"message": "Artifact has expired"}
    )

    with pytest.raises(ArtifactExpired):
        client.artifact_download(repo=DEFAULT_REPO, artifact_id=5, dest=tmp_path / "a.zip")


def test_listed_as_expired_fails_before_any_request(github_api, client, tmp_path):
    with pytest.raises(ArtifactExpired):
        client.artifact_download(
            repo=DEFAULT_REPO, artifact_id=5, dest=tmp_path / "a.zip", expired=True
        )

    assert github_api.calls.call_count == 0


def test_listed_size_over_the_cap_fails_before_any_request(github_api, client, tmp_path):
    with pytest.raises(ArtifactTooLarge):
        client.artifact_download(
            repo=DEFAULT_REPO, artifact_id=6, dest=tmp_path / "a.zip", size_in_bytes=MAX_BYTES + 1
        )

    assert github_api.calls.call_count == 0


def test_streaming_counter_aborts_past_the_cap_and_removes_the_partial_file(
    github_api, client, tmp_path
):
    redirect_to_blob(github_api, artifact_id=7, blob_path="/big/7")
    # An iterator body is sent chunked, without Content-Length: only the counter can stop it.
    github_api.get(f"{BLOB}/big/7").mock(
        return_value=httpx.Response(200, content=iter([b"x" * 600, b"y" * 600]))
    )
    dest = tmp_path / "big.zip"

    with pytest.raises(ArtifactTooLarge):
        client.artifact_download(repo=DEFAULT_REPO, artifact_id=7, dest=dest, size_in_bytes=10)

    assert not dest.exists()


def test_missing_artifact_is_not_found(github_api, client, tmp_path):
    github_api.get(f"{REPO_URL}/actions/artifacts/8/zip").respond(404)

    with pytest.raises(NotFound):
        client.artifact_download(repo=DEFAULT_REPO, artifact_id=8, dest=tmp_path / "a.zip")
