"""GitHub Actions layer: workflow runs, their artifacts, artifact downloads, webhook signatures.

Plain httpx rather than githubkit: the download needs manual redirect control (a fresh signed
URL after a blob 403, no token to the blob host) and byte-capped streaming, and we map errors and
retries ourselves, so githubkit would only add pydantic models we avoid and a second error tree.

Nothing here sleeps on a rate limit: `RateLimited` carries the wait and the Celery task
reschedules. Only short transient failures (5xx, network errors, timeouts) are retried in-process.
"""

from __future__ import annotations

import hashlib
import hmac
import random
import re
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
from django.conf import settings

API_VERSION = "2022-11-28"
DEFAULT_USER_AGENT = "infx-dashboard (+https://github.com/SemiAnalysisAI/InferenceX)"
# Read is the gap between chunks, not the whole download, so large artifacts still fit.
DEFAULT_TIMEOUT = httpx.Timeout(30.0, read=120.0)
PAGE_SIZE_MAX = 100
# GitHub's reset is whole seconds and clocks drift; waiting one extra second avoids a wasted call.
RESET_MARGIN_SECONDS = 1.0
SECONDARY_LIMIT_MIN_WAIT_SECONDS = 60.0
SECONDARY_LIMIT_MAX_WAIT_SECONDS = 3600.0
TRANSIENT_BACKOFF_BASE_SECONDS = 0.5
TRANSIENT_BACKOFF_CAP_SECONDS = 4.0
# Signed blob URLs live about a minute; one fresh redirect covers a slow start, not a broken host.
SIGNED_URL_ATTEMPTS = 2
DOWNLOAD_CHUNK_BYTES = 64 * 1024

_TRANSIENT_ERRORS = (httpx.TimeoutException, httpx.NetworkError, httpx.RemoteProtocolError)
_REPO_FULL_NAME = re.compile(r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+")
_SHARED_RNG = random.Random()


class GitHubError(Exception):
    """Base class: any GitHub failure that retrying right now will not fix by itself."""


class NotFound(GitHubError):
    """404: the object does not exist (or was deleted)."""


class RunNotFound(NotFound):
    """404 on a workflow run or its artifact list."""


class ArtifactNotFound(NotFound):
    """404 on an artifact (deleted, or never existed)."""


class ArtifactExpired(GitHubError):
    """410 Gone on download, or the listing already says the artifact expired."""


class ArtifactTooLarge(GitHubError):
    """The artifact is (or turned out while streaming to be) larger than the download cap."""


class PermissionDenied(GitHubError):
    """403 that is not a rate limit, 401, or a private repository without a GITHUB_TOKEN."""


class RateLimited(GitHubError):
    """Primary or secondary rate limit: retry no sooner than `wait_seconds` from now."""

    def __init__(self, message: str, *, wait_seconds: float, primary: bool) -> None:
        super().__init__(message)
        self.wait_seconds = wait_seconds
        self.primary = primary


class GitHubUnavailable(GitHubError):
    """5xx, network errors or timeouts that persisted through the in-process retries."""


def backoff_with_jitter(
    *, attempt: int, base: float, cap: float, rng: random.Random = _SHARED_RNG
) -> float:
    """`base * 2**attempt` (attempt counts from 0), capped at `cap`, plus up to 25 % random jitter.

    The jitter only adds, so `base` stays a floor (GitHub asks for >= 60 s on secondary limits).
    """
    delay = min(cap, base * 2.0 ** min(attempt, 64))  # the exponent bound keeps floats finite
    return delay + rng.uniform(0.0, delay / 4)


def rate_limit_wait(
    *,
    status: int,
    headers: Mapping[str, str],
    body: str,
    attempt: int,
    now: float,
    rng: random.Random = _SHARED_RNG,
) -> float | None:
    """Seconds to wait before calling GitHub again, or None when the response is no rate limit.

    Order from GitHub's docs: `Retry-After`; else `x-ratelimit-remaining: 0` until
    `x-ratelimit-reset` (epoch seconds, compared with `now`); else a secondary-limit message
    (or any 429) waits at least a minute, growing with `attempt` (0 for the first hit).
    A 403 with none of these is a permission error: None.
    """
    if status not in (403, 429):
        return None
    lowered = {name.lower(): value for name, value in headers.items()}
    retry_after = _seconds_or_none(lowered.get("retry-after"))
    if retry_after is not None:
        return max(0.0, retry_after)
    reset_at = _seconds_or_none(lowered.get("x-ratelimit-reset"))
    if lowered.get("x-ratelimit-remaining") == "0" and reset_at is not None:
        return max(0.0, reset_at - now) + RESET_MARGIN_SECONDS
    if status == 429 or "rate limit" in body.lower():
        return backoff_with_jitter(
            attempt=attempt,
            base=SECONDARY_LIMIT_MIN_WAIT_SECONDS,
            cap=SECONDARY_LIMIT_MAX_WAIT_SECONDS,
            rng=rng,
        )
    return None


def webhook_signature_valid(*, secret: str, body: bytes, header: str | None) -> bool:
    """Check `X-Hub-Signature-256` (HMAC-SHA256 of the raw body). No SHA-1 fallback, by design."""
    if not secret or not header or not header.startswith("sha256="):
        return False
    expected = "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
    return hmac.compare_digest(expected.encode(), header.encode())


@dataclass(frozen=True, slots=True)
class RunInfo:
    """One attempt of a workflow run. Missing strings are "" to match the model's blank fields."""

    id: int
    attempt: int
    workflow_id: int | None
    workflow_name: str
    workflow_path: str
    event: str
    head_sha: str
    head_branch: str
    # Empty for pull requests from forks (GitHub leaves pull_requests empty there).
    pr_numbers: tuple[int, ...]
    status: str
    conclusion: str
    html_url: str
    created_at: datetime
    # Start of this attempt; read from /attempts/{n} for per-attempt timing.
    run_started_at: datetime | None
    updated_at: datetime
    repository: str
    head_repository: str

    @classmethod
    def from_json(cls, payload: Mapping[str, Any]) -> RunInfo:
        """Build from a REST WorkflowRun object; the webhook's `workflow_run` has the same shape."""
        return cls(
            id=payload["id"],
            attempt=payload.get("run_attempt") or 1,
            workflow_id=payload.get("workflow_id"),
            workflow_name=payload.get("name") or "",
            workflow_path=payload.get("path") or "",
            event=payload.get("event") or "",
            head_sha=payload["head_sha"],
            head_branch=payload.get("head_branch") or "",
            pr_numbers=tuple(pr["number"] for pr in payload.get("pull_requests") or ()),
            status=payload.get("status") or "",
            conclusion=payload.get("conclusion") or "",
            html_url=payload.get("html_url") or "",
            created_at=_aware_datetime(payload["created_at"]),
            run_started_at=_optional_aware_datetime(payload.get("run_started_at")),
            updated_at=_aware_datetime(payload["updated_at"]),
            repository=payload["repository"]["full_name"],
            head_repository=(payload.get("head_repository") or {}).get("full_name") or "",
        )


@dataclass(frozen=True, slots=True)
class ArtifactInfo:
    """An artifact as listed for a run. `digest` is bare hex ("" before upload-artifact v4)."""

    id: int
    name: str
    size_in_bytes: int
    digest: str
    created_at: datetime | None
    expires_at: datetime | None
    expired: bool

    @classmethod
    def from_json(cls, payload: Mapping[str, Any]) -> ArtifactInfo:
        return cls(
            id=payload["id"],
            name=payload["name"],
            size_in_bytes=payload["size_in_bytes"],
            digest=(payload.get("digest") or "").removeprefix("sha256:"),
            created_at=_optional_aware_datetime(payload.get("created_at")),
            expires_at=_optional_aware_datetime(payload.get("expires_at")),
            expired=bool(payload.get("expired")),
        )

    def is_expired(self, *, now: datetime) -> bool:
        """The flag can lag behind `expires_at`, so check both before downloading."""
        return self.expired or (self.expires_at is not None and self.expires_at <= now)


@dataclass(frozen=True, slots=True)
class DownloadedArtifact:
    path: Path
    sha256: str
    size_bytes: int
    # application/zip normally; application/octet-stream for `archive: false` uploads.
    content_type: str


class ActionsClient:
    """Read-only client for the Actions endpoints the ingestion needs. Use it as a context manager
    (or call `close()`) so the connection pools are released."""

    def __init__(
        self,
        *,
        base_url: str,
        token: str = "",
        max_download_bytes: int,
        user_agent: str = DEFAULT_USER_AGENT,
        timeout: httpx.Timeout = DEFAULT_TIMEOUT,
        transient_retries: int = 3,
        sleep: Callable[[float], None] = time.sleep,
        rng: random.Random = _SHARED_RNG,
    ) -> None:
        self._has_token = bool(token)
        self._max_download_bytes = max_download_bytes
        self._transient_retries = transient_retries
        self._sleep = sleep
        self._rng = rng
        api_headers = {
            "User-Agent": user_agent,
            "Accept": "application/vnd.github+json",
            "X-GitHub-Api-Version": API_VERSION,
        }
        if token:
            api_headers["Authorization"] = f"Bearer {token}"
        self._api = httpx.Client(
            base_url=base_url, headers=api_headers, timeout=timeout, follow_redirects=False
        )
        # Blob URLs are pre-signed: this client has no token to leak (the blob host rejects it).
        self._blob = httpx.Client(
            headers={"User-Agent": user_agent}, timeout=timeout, follow_redirects=True
        )

    def __enter__(self) -> ActionsClient:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        self._api.close()
        self._blob.close()

    def run_get(self, *, repo: str, run_id: int, attempt: int | None = None) -> RunInfo:
        """The run's latest attempt, or attempt `attempt` (its own timing and conclusion)."""
        path = f"{_repo_path(repo)}/actions/runs/{run_id}"
        subject = f"run {run_id} of {repo}"
        if attempt is not None:
            path += f"/attempts/{attempt}"
            subject = f"attempt {attempt} of {subject}"
        response = self._api_get(url=path)
        self._raise_for_error(response, repo=repo, subject=subject, not_found=RunNotFound)
        return _decode(response, subject=subject, build=RunInfo.from_json)

    def run_artifacts_list(self, *, repo: str, run_id: int) -> list[ArtifactInfo]:
        """Every artifact of the run (artifacts belong to the run, not to an attempt)."""
        return self._paged_items(
            url=f"{_repo_path(repo)}/actions/runs/{run_id}/artifacts",
            params={"per_page": PAGE_SIZE_MAX},
            repo=repo,
            subject=f"artifacts of run {run_id} of {repo}",
            not_found=RunNotFound,
            max_pages=None,
            items_key="artifacts",
            parse_item=ArtifactInfo.from_json,
        )

    def workflow_runs_list(
        self,
        *,
        repo: str,
        workflow: str | int,
        status: str | None = "completed",
        branch: str | None = None,
        event: str | None = None,
        per_page: int = PAGE_SIZE_MAX,
        max_pages: int = 1,
    ) -> list[RunInfo]:
        """Newest runs of a workflow (file name or id), for polling. Raise `max_pages` to backfill;
        GitHub returns at most 1,000 runs for a filtered listing."""
        filters = {"status": status, "branch": branch, "event": event, "per_page": per_page}
        return self._paged_items(
            url=f"{_repo_path(repo)}/actions/workflows/{quote(str(workflow), safe='')}/runs",
            params={name: value for name, value in filters.items() if value is not None},
            repo=repo,
            subject=f"runs of workflow {workflow} of {repo}",
            not_found=NotFound,
            max_pages=max_pages,
            items_key="workflow_runs",
            parse_item=RunInfo.from_json,
        )

    def artifact_download(
        self,
        *,
        repo: str,
        artifact_id: int,
        dest: Path,
        size_in_bytes: int | None = None,
        expired: bool = False,
    ) -> DownloadedArtifact:
        """Stream the artifact into `dest` and return its SHA-256 and content type.

        Pass `size_in_bytes` and `expired` from the listing to fail before any request. The body
        is saved as served: a zip, or the single raw file of an `archive: false` upload.
        """
        subject = f"artifact {artifact_id} of {repo}"
        if expired:
            raise ArtifactExpired(f"{subject} has expired")
        if size_in_bytes is not None:
            self._check_size(subject=subject, size=size_in_bytes)
        for _ in range(SIGNED_URL_ATTEMPTS):
            blob_url = self._signed_blob_url(repo=repo, artifact_id=artifact_id, subject=subject)
            response = self._get_with_retries(client=self._blob, url=blob_url, stream=True)
            try:
                if response.status_code == 403:
                    continue  # the signed URL expired before we used it: ask for a new one
                if not response.is_success:
                    raise GitHubError(
                        f"blob storage answered HTTP {response.status_code} for {subject}"
                    )
                return self._save_stream(response=response, dest=dest, subject=subject)
            finally:
                response.close()
        raise PermissionDenied(
            f"blob storage refused {SIGNED_URL_ATTEMPTS} signed URLs for {subject}"
        )

    def _signed_blob_url(self, *, repo: str, artifact_id: int, subject: str) -> str:
        response = self._api_get(url=f"{_repo_path(repo)}/actions/artifacts/{artifact_id}/zip")
        if response.status_code == 410:
            raise ArtifactExpired(f"{subject} has expired (HTTP 410)")
        location = response.headers.get("location")
        if response.is_redirect and location:
            return str(response.url.join(location))
        self._raise_for_error(response, repo=repo, subject=subject, not_found=ArtifactNotFound)
        raise GitHubError(f"expected a redirect for {subject}, got HTTP {response.status_code}")

    def _save_stream(
        self, *, response: httpx.Response, dest: Path, subject: str
    ) -> DownloadedArtifact:
        declared_length = response.headers.get("content-length", "")
        if declared_length.isdigit():
            self._check_size(subject=subject, size=int(declared_length))
        sha256 = hashlib.sha256()
        received = 0
        try:
            with dest.open("wb") as out:
                for chunk in _body_chunks(response, subject=subject):
                    received += len(chunk)
                    # Counted while streaming: Content-Length may be absent or wrong.
                    self._check_size(subject=subject, size=received)
                    sha256.update(chunk)
                    out.write(chunk)
        except BaseException:
            dest.unlink(missing_ok=True)  # a partial file must never reach the parser
            raise
        return DownloadedArtifact(
            path=dest,
            sha256=sha256.hexdigest(),
            size_bytes=received,
            content_type=response.headers.get("content-type", ""),
        )

    def _check_size(self, *, subject: str, size: int) -> None:
        if size > self._max_download_bytes:
            raise ArtifactTooLarge(
                f"{subject} exceeds the download cap of {self._max_download_bytes} bytes"
            )

    def _paged_items[T](
        self,
        *,
        url: str,
        params: dict[str, Any],
        repo: str,
        subject: str,
        not_found: type[NotFound],
        max_pages: int | None,
        items_key: str,
        parse_item: Callable[[Mapping[str, Any]], T],
    ) -> list[T]:
        """The items of every page, following `Link: rel="next"` (its URL carries the query)."""
        items: list[T] = []
        next_url: str | None = url
        page_params: dict[str, Any] | None = params
        pages_read = 0
        while next_url and (max_pages is None or pages_read < max_pages):
            self._require_api_origin(next_url)
            response = self._api_get(url=next_url, params=page_params)
            self._raise_for_error(response, repo=repo, subject=subject, not_found=not_found)
            items += _decode(
                response,
                subject=subject,
                build=lambda body: [parse_item(item) for item in body[items_key]],
            )
            pages_read += 1
            next_url = response.links.get("next", {}).get("url")
            page_params = None
        return items

    def _require_api_origin(self, url: str) -> None:
        # A Link URL on another host would receive our token.
        target, base = httpx.URL(url), self._api.base_url
        if target.is_absolute_url and (target.scheme, target.host, target.port) != (
            base.scheme,
            base.host,
            base.port,
        ):
            raise GitHubError(f"refusing to follow a pagination link off the API host: {url}")

    def _api_get(self, *, url: str, params: Mapping[str, Any] | None = None) -> httpx.Response:
        return self._get_with_retries(client=self._api, url=url, params=params, stream=False)

    def _get_with_retries(
        self,
        *,
        client: httpx.Client,
        url: str,
        params: Mapping[str, Any] | None = None,
        stream: bool,
    ) -> httpx.Response:
        """GET, retrying only 5xx and network failures, with short jittered backoff."""
        last_failure = ""
        for attempt in range(self._transient_retries + 1):
            if attempt:
                self._sleep(
                    backoff_with_jitter(
                        attempt=attempt - 1,
                        base=TRANSIENT_BACKOFF_BASE_SECONDS,
                        cap=TRANSIENT_BACKOFF_CAP_SECONDS,
                        rng=self._rng,
                    )
                )
            request = client.build_request("GET", url, params=params)
            try:
                response = client.send(request, stream=stream)
            except _TRANSIENT_ERRORS as exc:
                last_failure = f"{type(exc).__name__}: {exc}"
                continue
            if response.status_code < 500:
                return response
            response.close()
            last_failure = f"HTTP {response.status_code}"
        raise GitHubUnavailable(
            f"GET {_without_query(url)} failed {self._transient_retries + 1} times; "
            f"last: {last_failure}"
        )

    def _raise_for_error(
        self, response: httpx.Response, *, repo: str, subject: str, not_found: type[NotFound]
    ) -> None:
        status = response.status_code
        if response.is_success:
            return
        if status in (403, 429):
            wait_seconds = rate_limit_wait(
                status=status,
                headers=response.headers,
                body=response.text,
                attempt=0,
                now=time.time(),
                rng=self._rng,
            )
            if wait_seconds is not None:
                primary = response.headers.get("x-ratelimit-remaining") == "0"
                kind = "primary" if primary else "secondary"
                raise RateLimited(
                    f"GitHub {kind} rate limit on {subject}; retry in {wait_seconds:.0f} s",
                    wait_seconds=wait_seconds,
                    primary=primary,
                )
            raise PermissionDenied(f"GitHub denied access to {subject} (HTTP 403)")
        if status == 401:
            if not self._has_token:
                raise _token_needed(repo)
            raise PermissionDenied(f"GitHub rejected the GITHUB_TOKEN for {subject} (HTTP 401)")
        if status == 404:
            # Without a token a private repository answers 404 everywhere, like a missing object.
            if not self._has_token and not self._repo_visible(repo):
                raise _token_needed(repo)
            raise not_found(f"{subject} not found (HTTP 404)")
        raise GitHubError(f"unexpected HTTP {status} for {subject}: {response.text[:200]}")

    def _repo_visible(self, repo: str) -> bool:
        response = self._api_get(url=_repo_path(repo))
        if response.status_code == 404:
            return False
        self._raise_for_error(response, repo=repo, subject=f"repository {repo}", not_found=NotFound)
        return True


def github_client_from_settings() -> ActionsClient:
    return ActionsClient(
        base_url=settings.GITHUB_API_URL,
        token=settings.GITHUB_TOKEN,
        max_download_bytes=settings.MAX_ARTIFACT_BYTES,
    )


def _token_needed(repo: str) -> PermissionDenied:
    return PermissionDenied(
        f"{repo} is private or invisible without credentials: "
        "a GITHUB_TOKEN with Actions: read is needed"
    )


def _repo_path(repo: str) -> str:
    # The name goes into the URL path, so "owner/name" is all it may be.
    if not _REPO_FULL_NAME.fullmatch(repo) or any(part in (".", "..") for part in repo.split("/")):
        raise ValueError(f"not a GitHub repository full name (owner/name): {repo!r}")
    return f"/repos/{repo}"


def _decode[T](response: httpx.Response, *, subject: str, build: Callable[[Any], T]) -> T:
    try:
        return build(response.json())
    except (KeyError, TypeError, ValueError) as exc:
        raise GitHubError(f"unexpected payload for {subject}: {exc!r}") from exc


def _body_chunks(response: httpx.Response, *, subject: str) -> Iterator[bytes]:
    try:
        yield from response.iter_bytes(DOWNLOAD_CHUNK_BYTES)
    except _TRANSIENT_ERRORS as exc:
        raise GitHubUnavailable(f"download of {subject} broke off: {exc}") from exc


def _aware_datetime(value: str) -> datetime:
    parsed = datetime.fromisoformat(value)
    if parsed.tzinfo is None:
        raise ValueError(f"timestamp without a time zone: {value!r}")
    return parsed


def _optional_aware_datetime(value: str | None) -> datetime | None:
    return _aware_datetime(value) if value else None


def _seconds_or_none(value: str | None) -> float | None:
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None


def _without_query(url: str) -> str:
    # Signed blob URLs carry their credential in the query string: keep it out of messages.
    return url.split("?", 1)[0]
