"""/api/v1/: the runs store for CI scripts (mounted by infx_site.urls)."""

from django.urls import path, register_converter

from runs import api


class DatabaseIdConverter:
    """A non-negative id that fits a BIGINT column: longer digit strings are a 404, not an
    overflow in the database driver."""

    regex = "[0-9]{1,18}"

    def to_python(self, value: str) -> int:
        return int(value)

    def to_url(self, value: int) -> str:
        return str(value)


register_converter(DatabaseIdConverter, "db_id")

app_name = "runs_api"

urlpatterns = [
    path("runs/", api.WorkflowRunListApi.as_view(), name="run-list"),
    path("runs/<db_id:run_id>/", api.RunDetailApi.as_view(), name="run-detail"),
    path("runs/<db_id:run_id>/ingest/", api.RunIngestApi.as_view(), name="run-ingest"),
    path("cells/", api.CellListApi.as_view(), name="cell-list"),
    path("evals/", api.EvalResultListApi.as_view(), name="eval-list"),
    path("configs/", api.ConfigListApi.as_view(), name="config-list"),
    path("configs/<db_id:pk>/", api.ConfigDetailApi.as_view(), name="config-detail"),
    path("images/", api.ImageListApi.as_view(), name="image-list"),
    path("run-stats/", api.RunStatsListApi.as_view(), name="run-stats-list"),
    path("changelog/", api.ChangelogEntryListApi.as_view(), name="changelog-list"),
    path("jobs/", api.IngestJobListApi.as_view(), name="job-list"),
    path("jobs/<db_id:pk>/", api.IngestJobDetailApi.as_view(), name="job-detail"),
]
