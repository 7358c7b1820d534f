"""JSON API of the curves: Pareto coverage of runs and commits, official chart series, and the
admin bypasses of coverage WARNs.

Views only parse parameters, call curves.selectors (reads) or curves.services (bypass writes)
and serialize. They follow the conventions of runs.api: the default permission (public reads,
signed-in writes) and throttles, its error body {"error": {"status", "code", "detail"[,
"fields"]}} and ETag/304 on GET.
"""

from collections.abc import Callable

from django.core.exceptions import ValidationError as DjangoValidationError
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import (
    OpenApiParameter,
    OpenApiResponse,
    extend_schema,
    extend_schema_view,
)
from rest_framework.exceptions import APIException, NotFound, ValidationError
from rest_framework.permissions import BasePermission, IsAuthenticated
from rest_framework.renderers import JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from curves import services
from curves.models import ParetoBypass
from curves.selectors import (
    bypass_audit_list,
    bypass_get,
    bypass_list,
    commit_coverage,
    official_chart_series,
    run_coverage,
)
from curves.serializers import (
    MAX_RUN_ID,
    BypassDecisionSerializer,
    BypassListQuerySerializer,
    BypassRequestSerializer,
    CommitCoverageQuerySerializer,
    CommitCoverageSerializer,
    CurveChartQuerySerializer,
    CurveChartSerializer,
    ParetoBypassAuditSerializer,
    ParetoBypassSerializer,
    RunCoverageQuerySerializer,
    RunCoverageSerializer,
)
from runs.api import (
    DETAIL_ERRORS,
    ERROR,
    INVALID,
    LIST_ERRORS,
    NOT_FOUND,
    THROTTLED,
    UNAUTHENTICATED,
    ConditionalGetMixin,
    ReadListApi,
)
from runs.selectors import run_attempts, run_get_latest_attempt

_HTML_SENSITIVE = str.maketrans({"<": "\\u003c", ">": "\\u003e", "&": "\\u0026"})


class HtmlSafeJSONRenderer(JSONRenderer):
    """JSON with <, > and & escaped (as json_script does): the data decodes unchanged, but a
    response pasted into or sniffed as HTML cannot open a tag."""

    def render(self, data, accepted_media_type=None, renderer_context=None) -> bytes:
        rendered = super().render(data, accepted_media_type, renderer_context)
        # The escapes only occur inside JSON strings, where they decode to the same characters.
        return rendered.decode().translate(_HTML_SENSITIVE).encode()


def chart_query_parse(query_params) -> tuple[dict, dict[str, list[str]]]:
    """The chart parameters as CurveChartQuerySerializer validates them, for the API and the
    /inference page: (values of the parameters that passed, messages by failing parameter).

    Failing parameters are left out of the values, so a page can report them and carry on with
    the rest; the values are empty when model or scenario is missing or invalid.
    """
    query = CurveChartQuerySerializer(data=query_params)
    if query.is_valid():
        return query.validated_data, {}
    passing = query_params.copy()
    for name in query.errors:
        passing.pop(name, None)
    retry = CurveChartQuerySerializer(data=passing)
    return (retry.validated_data if retry.is_valid() else {}), query.errors


class CurvesReadApi(ConditionalGetMixin, APIView):
    # Labels, verdicts and names come from artifacts: escape them for whoever pastes them in HTML.
    renderer_classes = [HtmlSafeJSONRenderer]


def _run_id_parse(text: str) -> int:
    """The run id in a URL path; a path naming no possible run is a 404, like an unknown run."""
    if not (text.isascii() and text.isdigit()) or int(text) > MAX_RUN_ID:
        raise NotFound(f"{text!r} is not a run id: run ids are positive integers")
    return int(text)


def _run_not_found(*, run_id: int, attempt: int | None) -> NotFound:
    attempts = run_attempts(run_id=run_id)
    if attempt is None or not attempts:
        return NotFound(f"run {run_id} is not stored")
    stored = ", ".join(str(number) for number in attempts)
    return NotFound(f"run {run_id} has no attempt {attempt} (stored attempts: {stored})")


class RunCoverageApi(CurvesReadApi):
    @extend_schema(
        summary="Pareto coverage of every curve of a run attempt",
        description=(
            "Curves of one workflow run attempt (of the reused PR run for a merge that reused "
            "one) with their PASS/WARN status, frontier, dominated and invalid points and the "
            "reviewer verdict; failed cells are listed apart."
        ),
        parameters=[
            OpenApiParameter("run_id", OpenApiTypes.INT64, OpenApiParameter.PATH),
            RunCoverageQuerySerializer,
        ],
        responses={200: RunCoverageSerializer, 400: INVALID, **DETAIL_ERRORS},
    )
    def get(self, request: Request, run_id: str) -> Response:
        query = RunCoverageQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        attempt = query.validated_data.get("attempt")
        number = _run_id_parse(run_id)
        run = run_get_latest_attempt(run_id=number, attempt=attempt)
        if run is None:
            raise _run_not_found(run_id=number, attempt=attempt)
        coverage = run_coverage(run=run, assessed_sha=query.validated_data.get("sha"))
        return Response(RunCoverageSerializer(coverage).data)


class CommitCoverageApi(CurvesReadApi):
    @extend_schema(
        summary="Pareto coverage of every run on a commit, with the bypass state of each curve",
        description=(
            "The latest attempt of every stored run whose head SHA starts with `sha`, and the "
            "run attempts that bypasses recorded for such a commit name (a PR head assessed "
            "with an earlier commit's run), newest first, each as in the run coverage endpoint. "
            "An empty list when none is stored."
        ),
        parameters=[CommitCoverageQuerySerializer],
        responses={
            200: CommitCoverageSerializer,
            400: INVALID,
            401: UNAUTHENTICATED,
            429: THROTTLED,
        },
    )
    def get(self, request: Request) -> Response:
        query = CommitCoverageQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        sha = query.validated_data["sha"]
        payload = {"sha": sha, "runs": commit_coverage(sha_prefix=sha)}
        return Response(CommitCoverageSerializer(payload).data)


class CurveChartApi(CurvesReadApi):
    @extend_schema(
        summary="Official chart series of one model and scenario",
        description=(
            "Official points grouped by hardware, framework, precision, spec method and disagg; "
            "each group shows its latest run date (at or before `date`), or only `run`. Every "
            "group carries its Pareto frontier on the chosen x and y metrics."
        ),
        parameters=[CurveChartQuerySerializer],
        responses={200: CurveChartSerializer, **LIST_ERRORS},
    )
    def get(self, request: Request) -> Response:
        params, errors = chart_query_parse(request.query_params)
        if errors:
            raise ValidationError(errors)
        series = official_chart_series(
            model=params["model"],
            scenario=params["scenario"],
            x_metric=params["x"],
            y_metric=params["y"],
            as_of=params.get("date"),
            run_id=params.get("run"),
            precisions=params.get("precision"),
            hardware=params.get("hardware"),
            frameworks=params.get("framework"),
        )
        payload = {
            "model": params["model"],
            "scenario": params["scenario"],
            "x_metric": params["x"],
            "y_metric": params["y"],
            "date": params.get("date"),
            "run": params.get("run"),
            "groups": series,
        }
        return Response(CurveChartSerializer(payload).data)


# ---- Pareto coverage bypasses ----------------------------------------------------------------


class Conflict(APIException):
    status_code = 409
    default_code = "conflict"
    default_detail = "The bypass is not in a state this change applies to."


class CanDecideBypass(BasePermission):
    message = "Only bypass approvers and superusers may approve, reject or revoke bypasses."

    def has_permission(self, request, view) -> bool:
        return services.bypass_can_decide(user=request.user)


def _service_call(change, **kwargs):
    """A bypass service's result, with its errors as API errors (400, 409)."""
    try:
        return change(**kwargs)
    except DjangoValidationError as error:
        raise ValidationError(error.message_dict) from error
    except services.BypassTransitionError as error:
        raise Conflict(str(error)) from error


def _bypass_or_404(pk: int) -> ParetoBypass:
    bypass = bypass_get(bypass_id=pk)
    if bypass is None:
        raise NotFound(f"bypass {pk} does not exist")
    return bypass


BYPASS_WRITE_ERRORS = {
    400: INVALID,
    401: UNAUTHENTICATED,
    403: OpenApiResponse(ERROR, description="Session without CSRF token, or not an approver."),
    429: THROTTLED,
}


class BypassListApi(ReadListApi):
    """GET: bypasses, pending requests first; POST: request one."""

    renderer_classes = [HtmlSafeJSONRenderer]
    serializer_class = ParetoBypassSerializer
    filter_backends: list = []  # BypassListQuerySerializer validates the parameters

    def get_queryset(self):
        query = BypassListQuerySerializer(data=self.request.query_params)
        query.is_valid(raise_exception=True)
        return bypass_list(
            sha_prefix=query.validated_data.get("sha"),
            curve_key=query.validated_data.get("curve"),
            state=query.validated_data.get("status"),
        )

    @extend_schema(
        summary="List Pareto coverage bypasses (CI: is there one for this SHA and curve?)",
        description=(
            "Pending requests first, then the most recently changed. CI asks "
            "`?sha=<sha>&curve=<key>&status=approved`: a bypass answers only for its own "
            "commit, so a non-empty list means an admin recorded one for exactly that SHA."
        ),
        parameters=[BypassListQuerySerializer],
        responses={200: ParetoBypassSerializer(many=True), **LIST_ERRORS},
    )
    def get(self, request: Request, *args, **kwargs) -> Response:
        return super().get(request, *args, **kwargs)

    @extend_schema(
        summary="Request a bypass of a WARN curve for its run's head commit",
        description=(
            "Needs a token (or a session with CSRF). Asking again returns the existing bypass "
            "(200) while it is requested or approved; a rejected or revoked one is requested "
            "again (200). 400 when the SHA is not the run's head SHA, the run is not stored, or "
            "the curve is not one of its WARN curves."
        ),
        request=BypassRequestSerializer,
        responses={
            201: OpenApiResponse(ParetoBypassSerializer, description="Requested."),
            200: OpenApiResponse(
                ParetoBypassSerializer, description="The existing bypass (requested again)."
            ),
            **BYPASS_WRITE_ERRORS,
        },
    )
    def post(self, request: Request) -> Response:
        payload = BypassRequestSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        data = payload.validated_data
        run = run_get_latest_attempt(run_id=data["run"], attempt=data.get("attempt"))
        if run is None:
            raise ValidationError({"run": [f"run {data['run']} is not stored"]})
        bypass, created = _service_call(
            services.bypass_request,
            run=run,
            sha=data["sha"],
            curve_key=data["curve"],
            rationale=data["rationale"],
            actor=request.user,
        )
        return Response(ParetoBypassSerializer(bypass).data, status=201 if created else 200)


class BypassDetailApi(ConditionalGetMixin, APIView):
    renderer_classes = [HtmlSafeJSONRenderer]

    @extend_schema(
        summary="One Pareto coverage bypass",
        responses={200: ParetoBypassSerializer, **DETAIL_ERRORS},
    )
    def get(self, request: Request, pk: int) -> Response:
        return Response(ParetoBypassSerializer(_bypass_or_404(pk)).data)


class BypassAuditListApi(ReadListApi):
    """Every change of state of one bypass, oldest first; read-only."""

    renderer_classes = [HtmlSafeJSONRenderer]
    serializer_class = ParetoBypassAuditSerializer
    filter_backends: list = []

    def get_queryset(self):
        return bypass_audit_list(bypass_id=_bypass_or_404(self.kwargs["pk"]).pk)

    @extend_schema(
        summary="The audit of one bypass: who changed what, when and why, before and after",
        responses={200: ParetoBypassAuditSerializer(many=True), 404: NOT_FOUND, **LIST_ERRORS},
    )
    def get(self, request: Request, *args, **kwargs) -> Response:
        return super().get(request, *args, **kwargs)


class BypassDecisionApi(APIView):
    """An approver's decision on one bypass; subclasses name the service."""

    renderer_classes = [HtmlSafeJSONRenderer]
    # IsAuthenticated first, so anonymous callers get 401 and signed-in non-approvers 403.
    permission_classes = [IsAuthenticated, CanDecideBypass]
    decide: Callable[..., ParetoBypass]  # a curves.services decision: bypass_approve ...

    def post(self, request: Request, pk: int) -> Response:
        bypass = _bypass_or_404(pk)
        payload = BypassDecisionSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        bypass = _service_call(
            self.decide,
            bypass=bypass,
            actor=request.user,
            reason=payload.validated_data["reason"],
        )
        return Response(ParetoBypassSerializer(bypass).data)


def _decision_schema(*, summary: str, conflict: str):
    return extend_schema(
        summary=summary,
        request=BypassDecisionSerializer,
        responses={
            200: ParetoBypassSerializer,
            404: NOT_FOUND,
            409: OpenApiResponse(ERROR, description=conflict),
            **BYPASS_WRITE_ERRORS,
        },
    )


@extend_schema_view(
    post=_decision_schema(
        summary="Approve a requested bypass (approvers only)", conflict="It is not requested."
    )
)
class BypassApproveApi(BypassDecisionApi):
    decide = staticmethod(services.bypass_approve)


@extend_schema_view(
    post=_decision_schema(
        summary="Reject a requested bypass (approvers only)", conflict="It is not requested."
    )
)
class BypassRejectApi(BypassDecisionApi):
    decide = staticmethod(services.bypass_reject)


@extend_schema_view(
    post=_decision_schema(
        summary="Revoke an approved bypass (approvers only)", conflict="It is not approved."
    )
)
class BypassRevokeApi(BypassDecisionApi):
    decide = staticmethod(services.bypass_revoke)
