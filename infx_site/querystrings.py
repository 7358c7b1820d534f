"""Small helpers for building page URLs from the current query string."""

from django.http import QueryDict


def query_without(query_params: QueryDict, *names: str) -> str:
    """The URL query with some parameters dropped, for "reset" links."""
    kept = query_params.copy()
    for name in names:
        kept.pop(name, None)
    return kept.urlencode()
