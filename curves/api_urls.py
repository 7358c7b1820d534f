"""/api/v1/: Pareto coverage of runs and commits, official chart series and coverage bypasses
(mounted by infx_site.urls)."""

from django.urls import path

import runs.api_urls  # noqa: F401  registers the db_id path converter used below
from curves import api

app_name = "curves_api"

urlpatterns = [
    # str, not int: any other path segment gets a JSON 404 saying it is not a run id.
    path("runs/<str:run_id>/coverage/", api.RunCoverageApi.as_view(), name="run-coverage"),
    path("coverage/", api.CommitCoverageApi.as_view(), name="commit-coverage"),
    path("curves/", api.CurveChartApi.as_view(), name="curve-chart"),
    path("bypasses/", api.BypassListApi.as_view(), name="bypass-list"),
    path("bypasses/<db_id:pk>/", api.BypassDetailApi.as_view(), name="bypass-detail"),
    path("bypasses/<db_id:pk>/audit/", api.BypassAuditListApi.as_view(), name="bypass-audit"),
    path("bypasses/<db_id:pk>/approve/", api.BypassApproveApi.as_view(), name="bypass-approve"),
    path("bypasses/<db_id:pk>/reject/", api.BypassRejectApi.as_view(), name="bypass-reject"),
    path("bypasses/<db_id:pk>/revoke/", api.BypassRevokeApi.as_view(), name="bypass-revoke"),
]
