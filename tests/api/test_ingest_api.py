"""POST /api/v1/runs/<run id>/ingest/: who may start a job, and what comes back."""

import pytest
from django.test import override_settings
from rest_framework.test import APIClient

from runs.models import IngestJob, IngestJobState

URL = "/api/v1/runs/35855544139/ingest/"


def job_url(job: IngestJob) -> str:
    return f"http://testserver/api/v1/jobs/{job.pk}/"


@pytest.mark.django_db
def test_anonymous_is_401_and_starts_nothing(api_client):
    response = api_client.post(URL, {}, format="json")
    assert response.status_code == 401
    assert response["WWW-Authenticate"] == "Token"
    assert response.json()["error"]["code"] == "not_authenticated"
    assert not IngestJob.objects.exists()


@pytest.mark.django_db
def test_a_bad_token_is_401(api_client):
    api_client.credentials(HTTP_AUTHORIZATION="Token 0123456789abcdef")
    response = api_client.post(URL, {}, format="json")
    assert response.status_code == 401
    assert response.json()["error"] == {
        "status": 401,
        "code": "authentication_failed",
        "detail": "Invalid token.",
    }
    assert not IngestJob.objects.exists()


@pytest.mark.django_db
@override_settings(GITHUB_REPOSITORY="SemiAnalysisAI/InferenceX")
def test_a_token_starts_a_job_then_gets_the_running_one(token_client):
    created = token_client.post(URL, {}, format="json")
    assert created.status_code == 201
    job = IngestJob.objects.get()
    assert created["Location"] == job_url(job)
    body = created.json()
    assert body["url"] == job_url(job)
    assert (body["repository"], body["run_id"], body["run_attempt"]) == (
        "SemiAnalysisAI/InferenceX",
        35855544139,
        None,
    )
    assert (body["state"], body["active"]) == ("queued", True)
    assert job.requested_by == "api ci-bot"

    again = token_client.post(URL, {"attempt": 2}, format="json")
    assert again.status_code == 200
    assert again.json()["id"] == job.pk
    assert again["Location"] == job_url(job)
    assert IngestJob.objects.count() == 1

    polled = token_client.get(again["Location"])
    assert polled.status_code == 200 and polled.json()["state"] == "queued"


@pytest.mark.django_db
def test_a_finished_job_does_not_block_a_new_one(token_client):
    first = token_client.post(URL, {"repo": "someone/fork", "attempt": 2}, format="json").json()
    IngestJob.objects.filter(pk=first["id"]).update(state=IngestJobState.SUCCEEDED)
    second = token_client.post(URL, {"repo": "someone/fork", "attempt": 2}, format="json")
    assert second.status_code == 201
    assert (second.json()["repository"], second.json()["run_attempt"]) == ("someone/fork", 2)
    assert second.json()["id"] != first["id"]


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("payload", "field"),
    [({"repo": "not a repo"}, "repo"), ({"attempt": 0}, "attempt"), ({"attempt": "x"}, "attempt")],
)
def test_a_bad_payload_is_a_400(token_client, payload, field):
    response = token_client.post(URL, payload, format="json")
    assert response.status_code == 400
    error = response.json()["error"]
    assert (error["code"], list(error["fields"])) == ("invalid", [field])
    assert not IngestJob.objects.exists()


@pytest.mark.django_db
def test_malformed_json_is_a_400_in_the_same_shape(token_client):
    response = token_client.post(URL, "{nope", content_type="application/json")
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "parse_error"


@pytest.mark.django_db
def test_a_session_user_needs_the_csrf_token(django_user_model):
    user = django_user_model.objects.create_user(username="someone", password="unused-password")
    client = APIClient(enforce_csrf_checks=True)
    client.force_login(user)
    response = client.post(URL, {}, format="json")
    assert response.status_code == 403
    assert response.json()["error"]["code"] == "permission_denied"


@pytest.mark.django_db
def test_ingest_is_post_only(token_client):
    response = token_client.get(URL)
    assert response.status_code == 405
    assert response.json()["error"]["code"] == "method_not_allowed"
