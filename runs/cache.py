"""One cache generation number for everything derived from the runs store.

Readers put the generation in their cache keys; every ingest bumps it, so cached charts and
coverage go stale all at once without anyone tracking which keys to delete.
"""

from django.core.cache import cache

GENERATION_KEY = "infx:data-generation"


def data_generation() -> int:
    generation = cache.get(GENERATION_KEY)
    if generation is None:
        cache.add(GENERATION_KEY, 1, timeout=None)
        generation = cache.get(GENERATION_KEY, 1)
    return generation


def data_generation_bump() -> None:
    try:
        cache.incr(GENERATION_KEY)
    except ValueError:  # the key was evicted or never set
        cache.set(GENERATION_KEY, 2, timeout=None)


def generation_key(*parts: object) -> str:
    """A cache key that is only valid for the current data generation."""
    return ":".join(["infx", str(data_generation()), *(str(part) for part in parts)])
