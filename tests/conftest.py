"""Shared fixtures. Tests that need the real PostgreSQL, Redis or a Celery worker skip when those
are absent on a developer's machine, and fail when CI=true. Every test starts and ends with an
empty cache; `demo_data` loads the demo runs."""

import os
import socket
from pathlib import Path

import pytest
from django.core.cache import cache
from django.core.management import call_command

IN_CI = os.environ.get("CI", "").lower() == "true"
REAL_DATA = Path(__file__).resolve().parent.parent.parent / "shared" / "reference" / "real-data"


def _reachable(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=1):
            return True
    except OSError:
        return False


def require_service(name: str, host: str, port: int) -> None:
    if _reachable(host, port):
        return
    message = f"{name} is not reachable on {host}:{port}"
    if IN_CI:
        pytest.fail(f"{message} (CI=true: service tests must not skip)")
    pytest.skip(message)


@pytest.fixture
def redis_service():
    require_service("Redis", "127.0.0.1", 6379)
    return "redis://127.0.0.1:6379/14"


@pytest.fixture
def postgres_service():
    require_service("PostgreSQL", "127.0.0.1", 5432)
    return "postgres://postgres@127.0.0.1:5432/test"


@pytest.fixture
def real_data() -> Path:
    if not REAL_DATA.is_dir():
        pytest.skip(f"real data not found at {REAL_DATA}")
    return REAL_DATA


@pytest.fixture(autouse=True)
def empty_cache():
    # The locmem cache outlives a test's transaction; cached official points must not leak.
    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def demo_data(db):
    call_command("load_demo", verbosity=0)
