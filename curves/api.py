"""Read-only JSON API of the curves: a run's Pareto coverage and official chart series.

Views only parse parameters, call curves.selectors and serialize. They follow the conventions of
runs.api: the default (public read) permission and throttles, its error body
{"error": {"status", "code", "detail"[, "fields"]}} and ETag/304 on GET.
"""

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.renderers import JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from curves.selectors import official_chart_series, run_curves, run_failed_cells
from curves.serializers import (
    MAX_RUN_ID,
    CurveChartQuerySerializer,
    CurveChartSerializer,
    RunCoverageQuerySerializer,
    RunCoverageSerializer,
)
from runs.api import DETAIL_ERRORS, INVALID, LIST_ERRORS, ConditionalGetMixin
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
        payload = {
            "run": run,
            "curves": run_curves(run=run),
            "failed_cells": run_failed_cells(run=run),
        }
        return Response(RunCoverageSerializer(payload).data)


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
