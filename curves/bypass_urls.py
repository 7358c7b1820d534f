"""Pages of the Pareto coverage bypasses (mounted at the site root by infx_site.urls)."""

from django.urls import path

import runs.api_urls  # noqa: F401  registers the db_id path converter used below
from curves import bypass_views

app_name = "bypasses"

urlpatterns = [
    path("bypasses/", bypass_views.bypass_list_page, name="list"),
    path("bypasses/request/", bypass_views.bypass_request_submit, name="request"),
    path(
        "bypasses/<db_id:pk>/approve/",
        bypass_views.bypass_decide,
        {"decision": "approve"},
        name="approve",
    ),
    path(
        "bypasses/<db_id:pk>/reject/",
        bypass_views.bypass_decide,
        {"decision": "reject"},
        name="reject",
    ),
    path(
        "bypasses/<db_id:pk>/revoke/",
        bypass_views.bypass_decide,
        {"decision": "revoke"},
        name="revoke",
    ),
]
