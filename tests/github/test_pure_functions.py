"""The I/O-free helpers other modules reuse: rate-limit waits, backoff, webhook signatures."""

import hashlib
import hmac
import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from runs.github import backoff_with_jitter, rate_limit_wait, webhook_signature_valid

DOCS_SECRET = "It's a Secret to Everybody"
DOCS_BODY = b"Hello, World!"
DOCS_SIGNATURE = "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17"
NOW = 1_760_000_000.0


# Webhook signature ---------------------------------------------------------------------------


def test_docs_test_vector_is_accepted():
    assert webhook_signature_valid(secret=DOCS_SECRET, body=DOCS_BODY, header=DOCS_SIGNATURE)


@pytest.mark.parametrize(
    ("secret", "header"),
    [
        pytest.param(DOCS_SECRET, None, id="missing header"),
        pytest.param(DOCS_SECRET, "", id="empty header"),
        pytest.param(DOCS_SECRET, DOCS_SIGNATURE.removeprefix("sha256="), id="no sha256= prefix"),
        pytest.param(
            DOCS_SECRET, "sha1=01dc10d0c83e72ed246219cdd91669667fe2ca59", id="sha1 not accepted"
        ),
        pytest.param("another secret", DOCS_SIGNATURE, id="wrong secret"),
        pytest.param("", DOCS_SIGNATURE, id="empty secret"),
        pytest.param(DOCS_SECRET, DOCS_SIGNATURE.upper(), id="different hex case"),
        pytest.param(DOCS_SECRET, DOCS_SIGNATURE + "\u00e9", id="non-ascii header"),
    ],
)
def test_bad_signatures_are_rejected(secret, header):
    assert not webhook_signature_valid(secret=secret, body=DOCS_BODY, header=header)


@given(body=st.binary(min_size=1, max_size=512), data=st.data())
def test_any_single_byte_change_is_rejected(body, data):
    header = "sha256=" + hmac.new(DOCS_SECRET.encode(), body, hashlib.sha256).hexdigest()
    position = data.draw(st.integers(min_value=0, max_value=len(body) - 1))
    replacement = data.draw(
        st.integers(min_value=0, max_value=255).filter(lambda b: b != body[position])
    )
    tampered = body[:position] + bytes([replacement]) + body[position + 1 :]

    assert webhook_signature_valid(secret=DOCS_SECRET, body=body, header=header)
    assert not webhook_signature_valid(secret=DOCS_SECRET, body=tampered, header=header)


# Backoff -------------------------------------------------------------------------------------


@pytest.mark.parametrize(("attempt", "floor"), [(0, 0.5), (1, 1.0), (2, 2.0), (3, 4.0), (9, 4.0)])
def test_backoff_grows_exponentially_up_to_the_cap(attempt, floor):
    delay = backoff_with_jitter(attempt=attempt, base=0.5, cap=4.0, rng=random.Random(attempt))
    assert floor <= delay <= floor * 1.25


@given(
    attempt=st.integers(min_value=0, max_value=10_000),
    base=st.floats(min_value=0.01, max_value=100),
    seed=st.integers(),
)
def test_backoff_stays_between_floor_and_capped_jitter(attempt, base, seed):
    cap = 3600.0
    delay = backoff_with_jitter(attempt=attempt, base=base, cap=cap, rng=random.Random(seed))
    assert min(base, cap) <= delay <= cap * 1.25


# Rate-limit wait -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("status", "headers", "body"),
    [
        pytest.param(404, {"x-ratelimit-remaining": "0"}, "", id="404 is never a rate limit"),
        pytest.param(500, {"retry-after": "5"}, "", id="5xx is for backoff, not here"),
        pytest.param(403, {"x-ratelimit-remaining": "12"}, "Resource not accessible", id="403"),
    ],
)
def test_not_a_rate_limit(status, headers, body):
    assert rate_limit_wait(status=status, headers=headers, body=body, attempt=0, now=NOW) is None


def test_retry_after_wins():
    headers = {"Retry-After": "61", "x-ratelimit-remaining": "0", "x-ratelimit-reset": "9999999999"}
    wait = rate_limit_wait(status=403, headers=headers, body="", attempt=3, now=NOW)
    assert wait == 61.0


def test_exhausted_primary_limit_waits_until_reset_plus_margin():
    headers = {"x-ratelimit-remaining": "0", "x-ratelimit-reset": str(int(NOW) + 120)}
    wait = rate_limit_wait(status=429, headers=headers, body="", attempt=0, now=NOW)
    assert wait == 121.0


def test_reset_in_the_past_waits_only_the_margin():
    headers = {"x-ratelimit-remaining": "0", "x-ratelimit-reset": str(int(NOW) - 30)}
    assert rate_limit_wait(status=403, headers=headers, body="", attempt=0, now=NOW) == 1.0


@pytest.mark.parametrize(
    ("status", "body"),
    [
        (403, '{"message": "You have exceeded a secondary rate limit."}'),
        (429, ""),
    ],
)
def test_secondary_limit_waits_at_least_a_minute_and_grows(status, body):
    waits = [
        rate_limit_wait(
            status=status, headers={}, body=body, attempt=attempt, now=NOW, rng=random.Random(1)
        )
        for attempt in range(3)
    ]
    assert 60 <= waits[0] <= 75
    assert 120 <= waits[1] <= 150
    assert 240 <= waits[2] <= 300


def test_unparseable_retry_after_falls_back_to_the_other_signals():
    headers = {"retry-after": "soon", "x-ratelimit-remaining": "0", "x-ratelimit-reset": "0"}
    assert rate_limit_wait(status=403, headers=headers, body="", attempt=0, now=0.0) == 1.0
