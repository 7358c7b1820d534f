"""The OpenAPI schema, its docs pages (local assets only), and schemathesis over the schema."""

import re

import pytest
import schemathesis
from django.contrib.auth.models import User
from django.core import signals
from django.core.wsgi import get_wsgi_application
from django.db import close_old_connections
from hypothesis import HealthCheck, given, settings
from rest_framework.authtoken.models import Token
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from curves.services import bypass_request
from runs.demo import SEED_PR_RUN_ID, SEED_PR_SHA
from runs.models import IngestJob
from runs.selectors import run_get_latest_attempt
from tests.curves_db.test_run_curves import SEED_KEY

# No 5xx, and every response documented: status code, content type and body. (Schemathesis's
# positive-data check is left out: the schema does not spell out that text may not hold NUL.)
CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
]
EXTERNAL_URL = re.compile(r"""(src|href)\s*=\s*["']?(https?:)?//""", re.IGNORECASE)


@pytest.mark.django_db
def test_the_schema_is_served_and_lists_the_endpoints(api_client):
    response = api_client.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")
    assert response.status_code == 200
    schema = response.json()
    assert schema["openapi"].startswith("3.")
    for path in [
        "/api/v1/runs/",
        "/api/v1/runs/{run_id}/",
        "/api/v1/runs/{run_id}/ingest/",
        "/api/v1/cells/",
        "/api/v1/evals/",
        "/api/v1/configs/",
        "/api/v1/configs/{id}/",
        "/api/v1/images/",
        "/api/v1/run-stats/",
        "/api/v1/changelog/",
        "/api/v1/jobs/",
        "/api/v1/jobs/{id}/",
        "/api/v1/runs/{run_id}/coverage/",
        "/api/v1/coverage/",
        "/api/v1/curves/",
        "/api/v1/bypasses/",
        "/api/v1/bypasses/{id}/",
        "/api/v1/bypasses/{id}/audit/",
        "/api/v1/bypasses/{id}/approve/",
        "/api/v1/bypasses/{id}/reject/",
        "/api/v1/bypasses/{id}/revoke/",
    ]:
        assert path in schema["paths"], path
    ingest = schema["paths"]["/api/v1/runs/{run_id}/ingest/"]["post"]
    assert {} not in ingest["security"]  # a token is required
    assert {} in schema["paths"]["/api/v1/runs/"]["get"]["security"]  # reads are public
    for decision in ("approve", "reject", "revoke"):
        assert {} not in schema["paths"][f"/api/v1/bypasses/{{id}}/{decision}/"]["post"]["security"]
    evals = schema["components"]["schemas"]["EvalResult"]["properties"]
    assert evals["threshold"]["type"] == "number" and evals["passed"]["type"] == "boolean"


@pytest.mark.django_db
@pytest.mark.parametrize("path", ["/api/docs/", "/api/redoc/"])
def test_the_docs_pages_use_local_assets_only(client, path):
    response = client.get(path)
    assert response.status_code == 200
    html = response.content.decode()
    assert "/static/drf_spectacular_sidecar/" in html
    assert not EXTERNAL_URL.search(html), EXTERNAL_URL.search(html)
    assert "http://" not in html and "https://" not in html
    for asset in re.findall(r'(?:src|href)="(/static/[^"]+)"', html):
        assert client.get(asset).status_code == 200, asset


@pytest.mark.django_db
def test_swagger_ui_sends_nothing_to_the_online_validator(client):
    assert '"validatorUrl": null' in client.get("/api/docs/").content.decode()


@pytest.fixture
def wsgi_app():
    """The real WSGI app, minus what Django's test client also skips: closing the database
    connection at each request's start and end, which would end the test's transaction."""
    for signal in (signals.request_started, signals.request_finished):
        signal.disconnect(close_old_connections)
    yield get_wsgi_application()
    for signal in (signals.request_started, signals.request_finished):
        signal.connect(close_old_connections)


def fuzz(operations, *, headers: dict) -> None:
    """Each operation fuzzed a little and reproducibly, every response checked."""
    for operation in operations:

        @given(case=operation.as_strategy())
        @settings(
            max_examples=20,
            derandomize=True,
            deadline=None,
            database=None,
            suppress_health_check=list(HealthCheck),
        )
        def call(case):
            # The WSGI transport asks for gzip but does not decode it, as HTTP clients do.
            case.call_and_validate(
                headers={**headers, "Accept-Encoding": "identity"}, checks=CHECKS
            )

        call()


@pytest.mark.django_db
def test_schemathesis_finds_no_server_error(demo, token, wsgi_app):
    """Every operation (the curves ones too), with a valid token so the ingest POST gets past
    authentication (its Celery task only starts on commit, which never comes inside a test)."""
    schema = schemathesis.openapi.from_wsgi("/api/schema/", wsgi_app)
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) >= 12

    fuzz(operations, headers={"Authorization": f"Token {token.key}"})
    assert IngestJob.objects.exists()  # the POST was exercised too


@pytest.mark.django_db
def test_schemathesis_finds_no_server_error_in_bypass_decisions(demo, wsgi_app):
    """The bypass operations as a superuser, so decisions get past the permission check, with
    a requested bypass of the seed PR's WARN curve to decide on."""
    superuser = User.objects.create_superuser(username="root")
    run = run_get_latest_attempt(run_id=SEED_PR_RUN_ID)
    bypass_request(
        run=run, sha=SEED_PR_SHA, curve_key=SEED_KEY, rationale="fuzzed", actor=superuser
    )
    schema = schemathesis.openapi.from_wsgi("/api/schema/", wsgi_app)
    operations = [
        operation
        for result in schema.get_all_operations()
        if "/bypasses/" in (operation := result.ok()).path
    ]
    assert len(operations) == 7

    fuzz(operations, headers={"Authorization": f"Token {Token.objects.create(user=superuser).key}"})
