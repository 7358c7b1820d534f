from django.contrib import admin
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularRedocView, SpectacularSwaggerView

urlpatterns = [
    path("admin/", admin.site.urls),
    path("accounts/", include("django.contrib.auth.urls")),
    path("api/v1/", include("curves.api_urls")),
    path("", include("runs.urls")),
    path("", include("curves.urls")),
    path("", include("curves.bypass_urls")),
    path("api/v1/", include("runs.api_urls")),
    path("api/schema/", SpectacularAPIView.as_view(), name="api-schema"),
    path("api/docs/", SpectacularSwaggerView.as_view(url_name="api-schema"), name="api-docs"),
    path(
        "api/redoc/",
        SpectacularRedocView.as_view(
            url_name="api-schema",
            template_name="runs/api_redoc.html",  # no web fonts
        ),
        name="api-redoc",
    ),
]

# JSON error bodies under /api/ (see runs.api), the usual pages elsewhere.
handler404 = "runs.api.not_found_page"
handler500 = "runs.api.server_error_page"
