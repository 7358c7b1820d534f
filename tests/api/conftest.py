"""API test fixtures: a REST client, token users, the demo data once per module, no throttling."""

import io

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.db import transaction
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient
from rest_framework.throttling import SimpleRateThrottle


@pytest.fixture(autouse=True)
def no_throttling(monkeypatch):
    """Rates are read once at import; a None rate lets every request through. Tests of the
    throttle set their own rates the same way."""
    monkeypatch.setattr(SimpleRateThrottle, "THROTTLE_RATES", {"anon": None, "user": None})


@pytest.fixture
def api_client() -> APIClient:
    return APIClient()


@pytest.fixture
def token(db) -> Token:
    user = get_user_model().objects.create_user(username="ci-bot", password="unused-password")
    return Token.objects.create(user=user)


@pytest.fixture
def token_client(token) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    return client


@pytest.fixture(scope="module")
def demo(django_db_setup, django_db_blocker):
    """The demo runs, loaded once per module inside a transaction rolled back afterwards; each
    test's own changes roll back to it (its db fixture nests a savepoint)."""
    with django_db_blocker.unblock(), transaction.atomic():
        call_command("load_demo", stdout=io.StringIO())
        yield
        transaction.set_rollback(True)
