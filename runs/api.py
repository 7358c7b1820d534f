"""The REST API for CI scripts and other programs: reads of the runs store, and ingest jobs.

Views only parse the request, call selectors (reads) or runs.jobs (the one write) and serialize.
Every error body is {"error": {"status", "code", "detail"}} (validation errors add "fields"),
every GET answers If-None-Match with 304, lists are paginated.
"""

from django.conf import settings
from django.core.exceptions import PermissionDenied as DjangoPermissionDenied
from django.http import Http404, JsonResponse
from django.utils.cache import get_conditional_response, set_response_etag
from django.utils.functional import SimpleLazyObject
from django.views import defaults
from drf_spectacular.openapi import AutoSchema
from drf_spectacular.utils import OpenApiResponse, extend_schema, extend_schema_view
from rest_framework import exceptions, generics
from rest_framework.pagination import CursorPagination, PageNumberPagination
from rest_framework.permissions import SAFE_METHODS, IsAuthenticated
from rest_framework.response import Response
from rest_framework.views import APIView
from rest_framework.views import exception_handler as drf_exception_handler

from runs import filters, selectors, serializers
from runs.jobs import ingest_job_request
from runs.permissions import PublicReadOrAuthenticated

API_PREFIX = "/api/"


# ---- errors ----------------------------------------------------------------------------------


def error_body(*, status: int, code: str, detail: str, fields: dict | None = None) -> dict:
    error = {"status": status, "code": code, "detail": detail}
    if fields is not None:
        error["fields"] = fields
    return {"error": error}


def api_exception_handler(exc: Exception, context: dict) -> Response | None:
    """DRF's handler with every error in one body shape; None (a 500) for unexpected errors."""
    if isinstance(exc, Http404):
        exc = exceptions.NotFound(*exc.args)
    elif isinstance(exc, DjangoPermissionDenied):
        exc = exceptions.PermissionDenied(*exc.args)
    response = drf_exception_handler(exc, context)
    if response is None:
        return None
    if isinstance(exc, exceptions.ValidationError):
        fields = exc.detail if isinstance(exc.detail, dict) else {"non_field_errors": exc.detail}
        response.data = error_body(
            status=response.status_code,
            code="invalid",
            detail=f"Invalid input: {', '.join(fields)}.",
            fields=fields,
        )
    else:
        response.data = error_body(
            status=response.status_code, code=str(exc.get_codes()), detail=str(exc.detail)
        )
    return response


def _is_api(request) -> bool:
    return request.path_info.startswith(API_PREFIX)


def not_found_page(request, exception):
    """handler404: a JSON error body under /api/ (no route matched), else the HTML page."""
    if _is_api(request):
        body = error_body(status=404, code="not_found", detail="No API endpoint at this path.")
        return JsonResponse(body, status=404)
    return defaults.page_not_found(request, exception)


def server_error_page(request):
    """handler500: a JSON error body under /api/, else the HTML page."""
    if _is_api(request):
        body = error_body(status=500, code="server_error", detail="Server error (logged).")
        return JsonResponse(body, status=500)
    return defaults.server_error(request)


ERROR = serializers.ApiErrorSerializer
INVALID = OpenApiResponse(ERROR, description="Invalid parameters; `fields` says which and why.")
UNAUTHENTICATED = OpenApiResponse(
    ERROR, description="No valid token (reads only need one with API_READ_REQUIRES_AUTH)."
)
NOT_FOUND = OpenApiResponse(ERROR, description="Nothing stored under this id.")
NO_SUCH_PAGE = OpenApiResponse(ERROR, description="No such page or cursor.")
THROTTLED = OpenApiResponse(ERROR, description="Too many requests; see Retry-After.")
LIST_ERRORS = {400: INVALID, 401: UNAUTHENTICATED, 404: NO_SUCH_PAGE, 429: THROTTLED}
DETAIL_ERRORS = {401: UNAUTHENTICATED, 404: NOT_FOUND, 429: THROTTLED}


# ---- shared view behaviour -------------------------------------------------------------------


class ApiSchema(AutoSchema):
    """Marks public reads as callable without credentials ({} security), which drf-spectacular
    only infers for AllowAny."""

    def get_auth(self) -> list[dict]:
        auths = super().get_auth()
        public_read = (
            self.method in SAFE_METHODS
            and not settings.API_READ_REQUIRES_AUTH
            and any(
                isinstance(permission, PublicReadOrAuthenticated)
                for permission in self.view.get_permissions()
            )
        )
        if public_read and {} not in auths:
            auths.append({})
        return auths


class ConditionalGetMixin:
    """An ETag hashed from the rendered body, so any change to the body changes it, and 304
    for a GET whose If-None-Match still matches (cheap polling for CI scripts)."""

    def finalize_response(self, request, response, *args, **kwargs):
        response = super().finalize_response(request, response, *args, **kwargs)
        if request.method not in ("GET", "HEAD") or response.status_code != 200:
            return response
        response.render()
        set_response_etag(response)
        return get_conditional_response(request, etag=response.get("ETag"), response=response)


class PagePagination(PageNumberPagination):
    page_size_query_param = "page_size"
    max_page_size = 1000


class CellCursorPagination(CursorPagination):
    """Cells are the big list: a cursor stays cheap and stable while runs are ingested."""

    ordering = "id"
    page_size_query_param = "page_size"
    max_page_size = 1000


class ReadListApi(ConditionalGetMixin, generics.ListAPIView):
    """A paginated, filterable list."""

    pagination_class = PagePagination


class ReadDetailApi(ConditionalGetMixin, generics.RetrieveAPIView):
    """One row by id."""


# ---- runs ------------------------------------------------------------------------------------


@extend_schema_view(
    get=extend_schema(
        summary="List workflow run attempts",
        responses={200: serializers.WorkflowRunSerializer, **LIST_ERRORS},
    )
)
class WorkflowRunListApi(ReadListApi):
    """Newest first, one row per attempt; `sha` takes a full SHA or a prefix of 7 or more."""

    serializer_class = serializers.WorkflowRunSerializer
    filterset_class = filters.WorkflowRunFilter

    def get_queryset(self):
        return selectors.run_list()


class RunDetailApi(ConditionalGetMixin, APIView):
    """Every stored attempt of a GitHub run, oldest first, with its artifacts and counts."""

    @extend_schema(
        summary="One workflow run with its stored attempts",
        parameters=[serializers.RunDetailQuerySerializer],
        responses={200: serializers.RunDetailSerializer, 400: INVALID, **DETAIL_ERRORS},
    )
    def get(self, request, run_id: int):
        query = serializers.RunDetailQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        attempt = query.validated_data.get("attempt")
        attempts = selectors.run_attempt_list(run_id=run_id, attempt=attempt)
        if not attempts:
            which = f"run {run_id}" if attempt is None else f"attempt {attempt} of run {run_id}"
            raise exceptions.NotFound(f"{which} is not stored")
        data = {"run_id": run_id, "attempts": attempts}
        return Response(serializers.RunDetailSerializer(data, context={"request": request}).data)


class RunIngestApi(APIView):
    """Needs a token. 201 with the new job, or 200 with the job already queued or running for
    the run; `Location` is the job to poll."""

    permission_classes = [IsAuthenticated]

    @extend_schema(
        summary="Start ingesting a run from GitHub, or get the job already running",
        request=serializers.IngestRequestSerializer,
        responses={
            201: OpenApiResponse(serializers.IngestJobSerializer, description="Job started."),
            200: OpenApiResponse(
                serializers.IngestJobSerializer, description="A job was already running."
            ),
            400: INVALID,
            401: UNAUTHENTICATED,
            403: OpenApiResponse(ERROR, description="Session without CSRF token."),
            429: THROTTLED,
        },
    )
    def post(self, request, run_id: int):
        payload = serializers.IngestRequestSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        job, created = ingest_job_request(
            repository=payload.validated_data["repo"],
            run_id=run_id,
            run_attempt=payload.validated_data["attempt"],
            requested_by=f"api {request.user.get_username()}",
        )
        body = serializers.IngestJobSerializer(job, context={"request": request}).data
        return Response(body, status=201 if created else 200, headers={"Location": body["url"]})


# ---- what was measured -----------------------------------------------------------------------


@extend_schema_view(
    get=extend_schema(
        summary="List cells (measured points)",
        responses={200: serializers.CellSerializer, **LIST_ERRORS},
    )
)
class CellListApi(ReadListApi):
    """Cursor-paginated (follow `next` until it is null), in the order they were stored."""

    serializer_class = serializers.CellSerializer
    filterset_class = filters.CellFilter
    pagination_class = CellCursorPagination

    def get_queryset(self):
        return selectors.cell_list()


@extend_schema_view(
    get=extend_schema(
        summary="List eval results with their threshold and pass/fail",
        responses={200: serializers.EvalResultSerializer, **LIST_ERRORS},
    )
)
class EvalResultListApi(ReadListApi):
    """`threshold` is the model's own for the task, else the task's default, else 0.85;
    `passed` is whether every exact-match score (strict and flexible) reaches it."""

    serializer_class = serializers.EvalResultSerializer
    filterset_class = filters.EvalResultFilter

    def get_queryset(self):
        return selectors.eval_result_list()

    def get_serializer_context(self):
        # Lazy: loaded once when the first row needs it, never for schema generation.
        thresholds = SimpleLazyObject(selectors.eval_thresholds_load)
        return {**super().get_serializer_context(), "eval_thresholds": thresholds}


@extend_schema_view(
    get=extend_schema(
        summary="List configs (served setups)",
        responses={200: serializers.ConfigSerializer, **LIST_ERRORS},
    )
)
class ConfigListApi(ReadListApi):
    """The served setups cells and evals point to: model, GPU, engine, precision, topology."""

    serializer_class = serializers.ConfigSerializer
    filterset_class = filters.ConfigFilter

    def get_queryset(self):
        return selectors.config_list()


@extend_schema_view(
    get=extend_schema(
        summary="One config", responses={200: serializers.ConfigSerializer, **DETAIL_ERRORS}
    )
)
class ConfigDetailApi(ReadDetailApi):
    """One served setup."""

    serializer_class = serializers.ConfigSerializer

    def get_queryset(self):
        return selectors.config_list()


@extend_schema_view(
    get=extend_schema(
        summary="List docker images",
        responses={200: serializers.ImageSerializer, **LIST_ERRORS},
    )
)
class ImageListApi(ReadListApi):
    """Docker images the cells and evals ran, split into registry, repository and tag."""

    serializer_class = serializers.ImageSerializer
    filterset_class = filters.ImageFilter

    def get_queryset(self):
        return selectors.image_list()


@extend_schema_view(
    get=extend_schema(
        summary="List run stats (cells succeeded per hardware)",
        responses={200: serializers.RunStatsSerializer, **LIST_ERRORS},
    )
)
class RunStatsListApi(ReadListApi):
    """Per run attempt and runner: how many of its cells succeeded."""

    serializer_class = serializers.RunStatsSerializer
    filterset_class = filters.RunStatsFilter

    def get_queryset(self):
        return selectors.run_stats_list()


@extend_schema_view(
    get=extend_schema(
        summary="List changelog entries (what each run was for)",
        responses={200: serializers.ChangelogEntrySerializer, **LIST_ERRORS},
    )
)
class ChangelogEntryListApi(ReadListApi):
    """The changelog metadata of runs: which config keys each run was for and why."""

    serializer_class = serializers.ChangelogEntrySerializer
    filterset_class = filters.ChangelogEntryFilter

    def get_queryset(self):
        return selectors.changelog_entry_list()


# ---- ingest jobs -----------------------------------------------------------------------------


@extend_schema_view(
    get=extend_schema(
        summary="List ingest jobs",
        responses={200: serializers.IngestJobSerializer, **LIST_ERRORS},
    )
)
class IngestJobListApi(ReadListApi):
    """Ingest jobs, newest first."""

    serializer_class = serializers.IngestJobSerializer
    filterset_class = filters.IngestJobFilter

    def get_queryset(self):
        return selectors.ingest_job_list()


@extend_schema_view(
    get=extend_schema(
        summary="One ingest job: state, progress, counts, errors",
        responses={200: serializers.IngestJobSerializer, **DETAIL_ERRORS},
    )
)
class IngestJobDetailApi(ReadDetailApi):
    """Poll it until `active` is false; If-None-Match makes an unchanged job a cheap 304."""

    serializer_class = serializers.IngestJobSerializer

    def get_queryset(self):
        return selectors.ingest_job_list()
