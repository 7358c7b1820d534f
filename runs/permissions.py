"""The API's default permission, kept apart from runs.api: DRF imports its default classes while
rest_framework.views is still loading, so this module must not import any view."""

from django.conf import settings
from rest_framework.permissions import SAFE_METHODS, BasePermission


class PublicReadOrAuthenticated(BasePermission):
    """Reads are open unless API_READ_REQUIRES_AUTH is set; every write needs a signed-in user
    (a token for CI scripts)."""

    def has_permission(self, request, view) -> bool:
        if request.method in SAFE_METHODS and not settings.API_READ_REQUIRES_AUTH:
            return True
        return bool(request.user and request.user.is_authenticated)
