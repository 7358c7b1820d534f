"""A fake GitHub Actions REST API on two real local HTTP servers, for tests.

`api` answers the REST endpoints the ingestion uses; artifact downloads answer 302 to `blob`, a
second server on another port, so the redirect is cross-origin like api.github.com -> blob
storage. The blob server rejects requests carrying an Authorization header, as Azure does.

    with FakeGitHub(token="t") as fake:
        fake.add_run(7, pull_requests=[{"number": 12}])
        fake.add_run(7, attempt=2, conclusion="failure")
        fake.add_artifact(7, "results", zip_bytes({"results.json": b"{}"}))
        client = ActionsClient(base_url=fake.base_url, token="t", max_download_bytes=10**6)

The payload builders (`run_payload`, `artifact_payload`) also serve respx-based tests.
"""

from __future__ import annotations

import hashlib
import io
import json
import re
import time
import zipfile
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import urlencode

from pytest_httpserver import HTTPServer
from werkzeug import Request, Response

DEFAULT_REPO = "SemiAnalysisAI/InferenceX"
DEFAULT_REPO_ID = 900_001
DEFAULT_WORKFLOW_PATH = ".github/workflows/run-sweep.yml"
# Attempt n of every fake run starts n-1 hours after this and lasts 30 minutes.
RUNS_CREATED_AT = datetime(2026, 1, 5, 10, 0, tzinfo=UTC)
ATTEMPT_SPACING = timedelta(hours=1)
ATTEMPT_DURATION = timedelta(minutes=30)
GITHUB_DEFAULT_PER_PAGE = 30
GITHUB_MAX_PER_PAGE = 100

_API_ROUTE = re.compile(
    r"^/(?:repos/(?P<full_name>[^/]+/[^/]+)|repositories/(?P<repo_id>\d+))(?P<rest>/.*)?$"
)
_RUN = re.compile(r"^/actions/runs/(?P<run_id>\d+)$")
_ATTEMPT = re.compile(r"^/actions/runs/(?P<run_id>\d+)/attempts/(?P<attempt>\d+)$")
_RUN_ARTIFACTS = re.compile(r"^/actions/runs/(?P<run_id>\d+)/artifacts$")
_ARTIFACT_ZIP = re.compile(r"^/actions/artifacts/(?P<artifact_id>\d+)/zip$")
_WORKFLOW_RUNS = re.compile(r"^/actions/workflows/(?P<workflow>[^/]+)/runs$")
_BLOB = re.compile(r"^/artifacts/(?P<artifact_id>\d+)/(?P<serial>\d+)$")


def zip_bytes(files: dict[str, bytes]) -> bytes:
    """An artifact zip built in memory (no binaries in the repository)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, content in files.items():
            archive.writestr(name, content)
    return buffer.getvalue()


def github_time(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def attempt_window(attempt: int) -> tuple[datetime, datetime]:
    """(run_started_at, updated_at) of attempt `attempt` of a fake run."""
    started = RUNS_CREATED_AT + (attempt - 1) * ATTEMPT_SPACING
    return started, started + ATTEMPT_DURATION


def minimal_repository(*, full_name: str, repo_id: int, api_url: str) -> dict[str, Any]:
    owner, name = full_name.split("/")
    return {
        "id": repo_id,
        "node_id": f"R_{repo_id}",
        "name": name,
        "full_name": full_name,
        "owner": {"login": owner, "id": repo_id + 1, "type": "Organization"},
        "private": False,
        "html_url": f"https://github.com/{full_name}",
        "url": f"{api_url}repos/{full_name}",
    }


def run_payload(
    *,
    run_id: int,
    attempt: int = 1,
    repo: str = DEFAULT_REPO,
    repo_id: int = DEFAULT_REPO_ID,
    api_url: str = "https://api.github.com/",
    **fields: Any,
) -> dict[str, Any]:
    """A WorkflowRun object shaped like the REST response; `fields` override any key."""
    started, updated = attempt_window(attempt)
    run_url = f"{api_url}repos/{repo}/actions/runs/{run_id}"
    repository = minimal_repository(full_name=repo, repo_id=repo_id, api_url=api_url)
    payload = {
        "id": run_id,
        "name": "Run Sweep",
        "node_id": f"WFR_{run_id}",
        "check_suite_id": run_id + 1,
        "head_branch": "main",
        "head_sha": hashlib.sha1(str(run_id).encode()).hexdigest(),  # noqa: S324 - a fake commit id
        "path": DEFAULT_WORKFLOW_PATH,
        "display_title": f"Sweep {run_id}",
        "run_number": run_id % 10_000,
        "event": "push",
        "status": "completed",
        "conclusion": "success",
        "workflow_id": 161_335,
        "url": run_url,
        "html_url": f"https://github.com/{repo}/actions/runs/{run_id}",
        "pull_requests": [],
        "created_at": github_time(RUNS_CREATED_AT),
        "updated_at": github_time(updated),
        "run_attempt": attempt,
        "run_started_at": github_time(started),
        "jobs_url": f"{run_url}/jobs",
        "logs_url": f"{run_url}/logs",
        "artifacts_url": f"{run_url}/artifacts",
        "previous_attempt_url": f"{run_url}/attempts/{attempt - 1}" if attempt > 1 else None,
        "repository": repository,
        "head_repository": repository,
        "head_repository_id": repo_id,
    }
    payload.update(fields)
    return payload


def artifact_payload(
    *,
    artifact_id: int,
    run_id: int,
    name: str,
    body: bytes,
    created_at: datetime = RUNS_CREATED_AT,
    expired: bool = False,
    repo: str = DEFAULT_REPO,
    repo_id: int = DEFAULT_REPO_ID,
    api_url: str = "https://api.github.com/",
    **fields: Any,
) -> dict[str, Any]:
    """An Artifact object shaped like the REST listing; `fields` override any key."""
    artifact_url = f"{api_url}repos/{repo}/actions/artifacts/{artifact_id}"
    retention = timedelta(days=1 if expired else 90)
    payload = {
        "id": artifact_id,
        "node_id": f"MDg6QXJ0aWZhY3Q{artifact_id}",
        "name": name,
        "size_in_bytes": len(body),
        "url": artifact_url,
        "archive_download_url": f"{artifact_url}/zip",
        "expired": expired,
        "digest": "sha256:" + hashlib.sha256(body).hexdigest(),
        "created_at": github_time(created_at),
        "updated_at": github_time(created_at),
        "expires_at": github_time(created_at + retention),
        "workflow_run": {
            "id": run_id,
            "repository_id": repo_id,
            "head_repository_id": repo_id,
            "head_branch": "main",
            "head_sha": hashlib.sha1(str(run_id).encode()).hexdigest(),  # noqa: S324
        },
    }
    payload.update(fields)
    return payload


@dataclass
class _StoredArtifact:
    run_id: int
    payload: dict[str, Any]
    body: bytes
    content_type: str


@dataclass(frozen=True)
class _QueuedFailure:
    status: int
    headers: dict[str, str]
    body: str


class FakeGitHub:
    """Two loopback servers: `api` (the base URL) and `blob` (where downloads redirect).

    `token`: when set, requests must carry `Bearer <token>` or none (401 otherwise).
    `private`: without that token, everything under the repository answers 404, as on GitHub.
    `api`/`blob`: running servers to reuse (stopping a server takes ~0.5 s, so the fixtures
    share one pair per session); the fake then only clears them when it stops.
    """

    def __init__(
        self,
        *,
        repo: str = DEFAULT_REPO,
        repo_id: int = DEFAULT_REPO_ID,
        token: str = "",
        private: bool = False,
        api: HTTPServer | None = None,
        blob: HTTPServer | None = None,
        threaded: bool = False,
    ) -> None:
        self.repo = repo
        self.repo_id = repo_id
        self.token = token
        self.private = private
        self._owns_servers = api is None or blob is None
        # threaded: serve concurrent downloads, as GitHub does (the benchmark wants that).
        self.api = api if api else HTTPServer(host="127.0.0.1", threaded=threaded)
        self.blob = blob if blob else HTTPServer(host="127.0.0.1", threaded=threaded)
        self._attempts_by_run: dict[int, dict[int, dict[str, Any]]] = {}
        self._artifacts: dict[int, _StoredArtifact] = {}
        self._next_artifact_id = 5_000_001
        self._signed_urls_issued = 0
        self._stale_signed_url_serials: set[int] = set()
        self._stale_signed_urls_to_issue = 0
        self._queued_api_failures: list[_QueuedFailure] = []
        self.blob_delay_seconds = 0.0

    # Lifecycle -------------------------------------------------------------------------------

    def start(self) -> FakeGitHub:
        for server, handler in ((self.api, self._serve_api), (self.blob, self._serve_blob)):
            server.clear()
            server.expect_request(re.compile(".*")).respond_with_handler(handler)
            if not server.is_running():
                server.start()
        return self

    def stop(self) -> None:
        try:
            # A bug in a handler surfaces here instead of as a puzzling 500.
            self.api.check_handler_errors()
            self.blob.check_handler_errors()
        finally:
            for server in (self.api, self.blob):
                if self._owns_servers:
                    server.stop()
                else:
                    server.clear()

    def __enter__(self) -> FakeGitHub:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    @property
    def base_url(self) -> str:
        return self.api.url_for("/")

    @property
    def api_requests(self) -> list[Request]:
        return [request for request, _ in self.api.log]

    @property
    def blob_requests(self) -> list[Request]:
        return [request for request, _ in self.blob.log]

    # Scenario setup --------------------------------------------------------------------------

    def add_run(self, run_id: int, attempt: int = 1, **fields: Any) -> dict[str, Any]:
        """Register attempt `attempt` of run `run_id`; the plain run URL serves the highest one."""
        payload = run_payload(
            run_id=run_id,
            attempt=attempt,
            repo=self.repo,
            repo_id=self.repo_id,
            api_url=self.base_url,
            **fields,
        )
        self._attempts_by_run.setdefault(run_id, {})[attempt] = payload
        return payload

    def add_artifact(
        self,
        run_id: int,
        name: str,
        zip_bytes: bytes,
        *,
        expired: bool = False,
        attempt: int | None = None,
        content_type: str = "application/zip",
        created_at: datetime | None = None,
        **fields: Any,
    ) -> dict[str, Any]:
        """Attach an artifact to a registered run. `created_at` defaults to a time inside
        `attempt`'s window (default: the latest attempt). For an `archive: false` upload pass
        the raw file bytes and `content_type="application/octet-stream"`."""
        attempts = self._attempts_by_run.get(run_id)
        if not attempts:
            raise ValueError(f"add_run({run_id}) before adding artifacts to it")
        started, _ = attempt_window(attempt or max(attempts))
        artifact_id = self._next_artifact_id
        self._next_artifact_id += 1
        payload = artifact_payload(
            artifact_id=artifact_id,
            run_id=run_id,
            name=name,
            body=zip_bytes,
            created_at=created_at
            or started + timedelta(minutes=10) + timedelta(seconds=artifact_id % 60),
            expired=expired,
            repo=self.repo,
            repo_id=self.repo_id,
            api_url=self.base_url,
            **fields,
        )
        self._artifacts[artifact_id] = _StoredArtifact(
            run_id=run_id, payload=payload, body=zip_bytes, content_type=content_type
        )
        return payload

    def issue_stale_signed_urls(self, count: int = 1) -> None:
        """The next `count` download redirects point at URLs that have already expired (403)."""
        self._stale_signed_urls_to_issue += count

    def fail_next_api_requests(
        self, *, status: int, count: int = 1, headers: dict[str, str] | None = None, body: str = ""
    ) -> None:
        """The next `count` API requests answer `status` (e.g. 502, or 403 + rate-limit headers)."""
        failure = _QueuedFailure(status=status, headers=headers or {}, body=body)
        self._queued_api_failures.extend([failure] * count)

    # API server ------------------------------------------------------------------------------

    def _serve_api(self, request: Request) -> Response:
        if self._queued_api_failures:
            failure = self._queued_api_failures.pop(0)
            return Response(failure.body, status=failure.status, headers=failure.headers)
        authorization = request.headers.get("Authorization")
        if authorization is not None and authorization != f"Bearer {self.token}":
            return _json_response({"message": "Bad credentials"}, status=401)
        route = _API_ROUTE.match(request.path)
        if route is None or not self._is_our_repo(route) or (self.private and not authorization):
            return _not_found()
        rest = route.group("rest") or ""
        if not rest:
            return _json_response(
                minimal_repository(full_name=self.repo, repo_id=self.repo_id, api_url=self.base_url)
            )
        if match := _RUN.match(rest):
            attempts = self._attempts_by_run.get(int(match["run_id"]))
            return _json_response(attempts[max(attempts)]) if attempts else _not_found()
        if match := _ATTEMPT.match(rest):
            attempts = self._attempts_by_run.get(int(match["run_id"]), {})
            payload = attempts.get(int(match["attempt"]))
            return _json_response(payload) if payload else _not_found()
        if match := _RUN_ARTIFACTS.match(rest):
            return self._serve_run_artifacts(request, rest=rest, run_id=int(match["run_id"]))
        if match := _ARTIFACT_ZIP.match(rest):
            return self._serve_artifact_redirect(artifact_id=int(match["artifact_id"]))
        if match := _WORKFLOW_RUNS.match(rest):
            return self._serve_workflow_runs(request, rest=rest, workflow=match["workflow"])
        return _not_found()

    def _is_our_repo(self, route: re.Match[str]) -> bool:
        if route["repo_id"] is not None:
            return int(route["repo_id"]) == self.repo_id
        return route["full_name"].lower() == self.repo.lower()

    def _serve_run_artifacts(self, request: Request, *, rest: str, run_id: int) -> Response:
        if run_id not in self._attempts_by_run:
            return _not_found()
        artifacts = [
            stored.payload for stored in self._artifacts.values() if stored.run_id == run_id
        ]
        return self._paged(request, rest=rest, items=artifacts, items_key="artifacts")

    def _serve_workflow_runs(self, request: Request, *, rest: str, workflow: str) -> Response:
        latest_attempts = [attempts[max(attempts)] for attempts in self._attempts_by_run.values()]
        runs = [
            run
            for run in sorted(latest_attempts, key=lambda run: run["id"], reverse=True)
            if workflow in (str(run["workflow_id"]), run["path"].rsplit("/", 1)[-1])
            and _matches_filters(run, request.args)
        ]
        return self._paged(request, rest=rest, items=runs, items_key="workflow_runs")

    def _paged(
        self, request: Request, *, rest: str, items: list[dict[str, Any]], items_key: str
    ) -> Response:
        """One page plus Link headers; like GitHub, they point at /repositories/{id}/..."""
        per_page = min(
            int(request.args.get("per_page", GITHUB_DEFAULT_PER_PAGE)), GITHUB_MAX_PER_PAGE
        )
        page = int(request.args.get("page", 1))
        last_page = max(1, -(-len(items) // per_page))
        page_url = self.api.url_for(f"/repositories/{self.repo_id}{rest}")
        query = {key: value for key, value in request.args.items() if key != "page"}
        links = [
            f'<{page_url}?{urlencode({**query, "page": number})}>; rel="{rel}"'
            for rel, number in (("next", page + 1), ("last", last_page))
            if page < last_page
        ]
        body = {
            "total_count": len(items),
            items_key: items[(page - 1) * per_page : page * per_page],
        }
        return _json_response(body, headers={"Link": ", ".join(links)} if links else {})

    def _serve_artifact_redirect(self, *, artifact_id: int) -> Response:
        stored = self._artifacts.get(artifact_id)
        if stored is None:
            return _not_found()
        if stored.payload["expired"]:
            return _json_response({"message": "Artifact has expired"}, status=410)
        self._signed_urls_issued += 1
        serial = self._signed_urls_issued
        if self._stale_signed_urls_to_issue:
            self._stale_signed_urls_to_issue -= 1
            self._stale_signed_url_serials.add(serial)
        location = self.blob.url_for(f"/artifacts/{artifact_id}/{serial}") + "?sig=fake&se=60"
        return Response(status=302, headers={"Location": location})

    # Blob server -----------------------------------------------------------------------------

    def _serve_blob(self, request: Request) -> Response:
        if self.blob_delay_seconds:
            time.sleep(self.blob_delay_seconds)  # a slow download, to stop a worker midway
        if "Authorization" in request.headers:
            return Response("InvalidAuthenticationInfo", status=400)
        match = _BLOB.match(request.path)
        stored = self._artifacts.get(int(match["artifact_id"])) if match else None
        if stored is None:
            return Response("BlobNotFound", status=404)
        if int(match["serial"]) in self._stale_signed_url_serials:
            return Response("AuthenticationFailed: signed URL expired", status=403)
        return Response(stored.body, status=200, content_type=stored.content_type)


def _matches_filters(run: dict[str, Any], args: Any) -> bool:
    status = args.get("status")
    return (
        (status is None or status in (run["status"], run["conclusion"]))
        and args.get("branch") in (None, run["head_branch"])
        and args.get("event") in (None, run["event"])
    )


def _json_response(
    body: Any, *, status: int = 200, headers: dict[str, str] | None = None
) -> Response:
    return Response(
        json.dumps(body), status=status, headers=headers, content_type="application/json"
    )


def _not_found() -> Response:
    return _json_response(
        {"message": "Not Found", "documentation_url": "https://docs.github.com/rest"}, status=404
    )
