"""The /inference page: official throughput-per-GPU charts with their numbers in tables.

Two charts share every control: y against interactivity (the trade-off users feel, as on the
public site) and y against a latency (the end-to-end latency the PR coverage check counts by
default, or TTFT). A benchmark engineer reads both at once; one chart with an x switch would
hide one of them behind a reload.

With `?unofficialRun=<id>` (curves.unofficial) the page overlays pull-request runs on the
official data of their model and scenario: series of kind "unofficial", a NON-OFFICIAL banner,
the runs' Pareto coverage and each point against the official frontier at its latency.
"""

from collections import defaultdict

from django.contrib import messages as flash
from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest
from django.shortcuts import redirect, render

from curves.charts import (
    DISPLAY_SWITCHES,
    LATENCY_METRICS,
    METRIC_LABELS,
    Y_METRICS,
    InferenceSelection,
    OverlayCurve,
    charts_build,
    gpu_costs_used,
    inference_selection_parse,
    overlay_comparisons,
    overlay_curves_load,
)
from curves.coverage import coverage_x_metric
from curves.derived import DERIVED_METRICS
from curves.unofficial import (
    PAGES,
    unofficial_page_context,
    unofficial_requested_by,
    unofficial_status_context,
)
from infx_site.querystrings import query_without


def _overlay_switch_url(
    *, request: HttpRequest, selection: InferenceSelection, overlays: list[OverlayCurve]
) -> str | None:
    """When the selected model and scenario show none of the unofficial runs' points, the URL
    of the first run's first curve instead (filters, hidden series and a pinned official run
    belong to the old selection and are dropped); None when there is nothing to switch to."""
    if not overlays or any(
        (overlay.identity.model, overlay.identity.scenario) == (selection.model, selection.scenario)
        for overlay in overlays
    ):
        return None
    target = overlays[0]
    query = request.GET.copy()
    for name in ("precision", "hardware", "framework", "hide", "run"):
        query.pop(name, None)
    query["model"], query["scenario"] = target.identity.model, target.identity.scenario
    flash.info(
        request,
        f"Showing {target.identity.model} · {target.identity.scenario}, where unofficial run "
        f"{target.entry.run_id} has its points (it has none for {selection.model} · "
        f"{selection.scenario}). Dismiss the run to browse other models.",
    )
    return f"{request.path}?{query.urlencode()}"


def inference(request: HttpRequest) -> HttpResponse:
    messages: list[str] = []
    asker = request.user.get_username()
    unofficial = unofficial_page_context(
        query=request.GET,
        page="inference",
        requested_by=unofficial_requested_by(username=asker, page="inference"),
    )
    overlays = overlay_curves_load(unofficial["unofficial_ready"])
    overlay_scenarios: dict[str, set[str]] = defaultdict(set)
    for overlay in overlays:
        overlay_scenarios[overlay.identity.model].add(overlay.identity.scenario)
    parsed = inference_selection_parse(
        query_params=request.GET, messages=messages, overlay_scenarios=overlay_scenarios
    )
    if parsed is None:
        return render(request, "curves/inference.html", {"notices": messages, **unofficial})
    selection, options = parsed
    switch_url = _overlay_switch_url(request=request, selection=selection, overlays=overlays)
    if switch_url is not None:
        return redirect(switch_url)
    shown = [
        overlay
        for overlay in overlays
        if (overlay.identity.model, overlay.identity.scenario)
        == (selection.model, selection.scenario)
    ]
    charts = charts_build(selection=selection, precisions=options.precisions, overlays=shown)
    official_series = [series for series in charts[0]["series"] if series["kind"] == "official"]
    shown_hardware = {series["hardware"] for series in charts[0]["series"]}
    gpu_costs, gpus_without_cost = gpu_costs_used(
        y_metric=selection.y_metric, hardware=shown_hardware
    )
    context = {
        **unofficial,
        "notices": messages,
        "selection": selection,
        "options": options,
        "y_choices": [(metric, METRIC_LABELS[metric]) for metric in Y_METRICS],
        "latency_choices": [(metric, METRIC_LABELS[metric]) for metric in LATENCY_METRICS],
        "display_switches": [
            (name, label, selection.display[name]) for name, label in DISPLAY_SWITCHES.items()
        ],
        "charts": charts,
        "page_data": {
            "model": selection.model,
            "scenario": selection.scenario,
            "charts": charts,
        },
        "official_series_count": len(official_series),
        "point_count": sum(len(series["points"]) for series in official_series),
        "overlay_point_count": sum(len(overlay.curve.points) for overlay in shown),
        "latest_date": max((series["date"] for series in official_series), default=None),
        "gpu_costs": gpu_costs,
        "gpus_without_cost": gpus_without_cost,
        "derived_y": selection.y_metric in DERIVED_METRICS,
        "filters_query": query_without(request.GET, "precision", "hardware", "framework"),
        "history_query": query_without(request.GET, "date", "run"),
        "overlays": overlays,
        "overlay_comparisons": overlay_comparisons(selection=selection, shown=shown),
        "coverage_x_metric": coverage_x_metric(selection.scenario),
        "coverage_x_label": METRIC_LABELS[coverage_x_metric(selection.scenario)],
    }
    return render(request, "curves/inference.html", context)


def unofficial_status(request: HttpRequest) -> HttpResponse:
    """GET /unofficial/status/?ids=1,2&page=inference: the progress of unofficial runs being
    ingested, polled by their page; HX-Refresh makes htmx reload the page once one is done."""
    page = request.GET.get("page", "")
    if page not in PAGES:
        return HttpResponseBadRequest(f"page must be one of {', '.join(PAGES)}")
    context = unofficial_status_context(
        ids=request.GET.get("ids", ""),
        page=page,
        requested_by=unofficial_requested_by(username=request.user.get_username(), page=page),
    )
    response = render(request, "curves/_unofficial_progress.html", context)
    if context["unofficial_reload"]:
        response["HX-Refresh"] = "true"
    return response
