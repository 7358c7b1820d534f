import pytest
from django.core.cache import cache
from django.core.management import call_command


@pytest.fixture(autouse=True)
def empty_cache():
    # The locmem cache outlives a test's transaction; cached official points must not leak.
    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def demo_data(db):
    call_command("load_demo", verbosity=0)
