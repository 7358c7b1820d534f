"""Bypass fixtures: the five kinds of caller, a requested bypass of the seed PR's WARN curve, and
the API fixtures (demo data once per module, no throttling) shared with tests/api."""

import pytest
from django.contrib.auth.models import Group, User
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from curves.models import ParetoBypass
from curves.services import bypass_request
from runs import demo as demo_runs
from runs.selectors import run_get_latest_attempt
from tests.api.conftest import api_client, demo, no_throttling  # noqa: F401  shared fixtures
from tests.curves_db.test_run_curves import SEED_KEY

# A CSRF secret as the cookie holds it; sent back unmasked in the header, as a script may.
CSRF_SECRET = "k" * 32
ACTORS = ("anonymous", "token_user", "session_user", "approver", "superuser")


@pytest.fixture
def seed_run(demo, db):  # noqa: F811  (the shared fixture, not a redefinition)
    return run_get_latest_attempt(run_id=demo_runs.SEED_PR_RUN_ID)


@pytest.fixture
def member(db) -> User:
    return User.objects.create_user(username="member")  # no password: hashing one is slow


@pytest.fixture
def approver(db) -> User:
    user = User.objects.create_user(username="approver")  # no password: hashing one is slow
    user.groups.add(Group.objects.get(name="Bypass approvers"))
    return user


@pytest.fixture
def superuser(db) -> User:
    return User.objects.create_superuser(username="root")  # no password: hashing one is slow


def token_client(user: User) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
    return client


def session_client(user: User, *, csrf: bool = True) -> APIClient:
    """Signed in with a session, as a browser is; CSRF checks on, token sent when csrf."""
    client = APIClient(enforce_csrf_checks=True)
    client.force_login(user)
    if csrf:
        client.cookies["csrftoken"] = CSRF_SECRET
        client.credentials(HTTP_X_CSRFTOKEN=CSRF_SECRET)
    return client


@pytest.fixture
def client_of(db, member, approver, superuser):
    """The API client of one kind of caller (see ACTORS)."""

    def make(actor: str) -> APIClient:
        if actor == "anonymous":
            return APIClient()
        if actor == "token_user":
            return token_client(User.objects.create_user(username="ci-bot"))
        if actor == "session_user":
            return session_client(member)
        return token_client({"approver": approver, "superuser": superuser}[actor])

    return make


@pytest.fixture
def requested(seed_run, member) -> ParetoBypass:
    bypass, _ = bypass_request(
        run=seed_run,
        sha=demo_runs.SEED_PR_SHA,
        curve_key=SEED_KEY,
        rationale="c1 is dominated; no lower point exists on this image",
        actor=member,
    )
    return bypass
