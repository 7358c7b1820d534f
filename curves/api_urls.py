"""/api/v1/: Pareto coverage of runs and official chart series (mounted by infx_site.urls)."""

from django.urls import path

from curves import api

app_name = "curves_api"

urlpatterns = [
    # str, not int: any other path segment gets a JSON 404 saying it is not a run id.
    path("runs/<str:run_id>/coverage/", api.RunCoverageApi.as_view(), name="run-coverage"),
    path("curves/", api.CurveChartApi.as_view(), name="curve-chart"),
]
