"""The /inference charts: parsing the page's controls and building each chart's series
(official and unofficial overlays), the points' payload for Plotly and the comparison of
overlay points with the official frontier. No request handling: curves/views.py does that."""

import math
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date

from django.http import QueryDict
from django.urls import reverse

from curves.api import chart_query_parse
from curves.compare import (
    Baseline,
    OfficialFrontier,
    PointChange,
    baseline_choose,
    point_changes,
)
from curves.coverage import Y_METRIC, coverage_x_metric
from curves.derived import DERIVED_METRICS, cost_per_million_tokens, tokens_per_mw
from curves.frontier import Point, frontier_for_metrics, higher_is_better
from curves.identity import CurveIdentity
from curves.models import GpuCost
from curves.selectors import (
    ChartPoint,
    ChartSeries,
    RunCurve,
    RunCurvePoint,
    official_chart_series,
    official_frameworks,
    official_hardware,
    official_models,
    official_precisions,
    official_run_dates,
    official_scenarios,
    run_coverage,
    run_measured_in,
)
from curves.unofficial import (
    UnofficialRun,
    overlay_cell_values,
)


@dataclass(frozen=True, kw_only=True)
class MetricLabel:
    title: str
    unit: str
    csv_unit: str  # suffix of the CSV column: tput_per_gpu_tok_s, median_e2el_s...
    decimals: int  # shown in tables and hover text


# The metrics this page offers. Latencies are stored in seconds.
METRIC_LABELS: dict[str, MetricLabel] = {
    "tput_per_gpu": MetricLabel(
        title="Throughput per GPU", unit="tok/s/GPU", csv_unit="tok_s", decimals=0
    ),
    "output_tput_per_gpu": MetricLabel(
        title="Output throughput per GPU", unit="tok/s/GPU", csv_unit="tok_s", decimals=0
    ),
    "input_tput_per_gpu": MetricLabel(
        title="Input throughput per GPU", unit="tok/s/GPU", csv_unit="tok_s", decimals=0
    ),
    "cost_per_million_tokens": MetricLabel(
        title="Cost per million tokens", unit="$/M tok", csv_unit="usd", decimals=3
    ),
    "tokens_per_mw": MetricLabel(
        title="Throughput per megawatt", unit="tok/s/MW", csv_unit="tok_s", decimals=0
    ),
    "median_intvty": MetricLabel(
        title="Interactivity (median)", unit="tok/s/user", csv_unit="tok_s", decimals=1
    ),
    "median_e2el": MetricLabel(
        title="End-to-end latency (median)", unit="s", csv_unit="s", decimals=2
    ),
    "p90_e2el": MetricLabel(title="End-to-end latency (p90)", unit="s", csv_unit="s", decimals=2),
    "median_ttft": MetricLabel(
        title="Time to first token (median)", unit="s", csv_unit="s", decimals=3
    ),
    "p90_ttft": MetricLabel(title="Time to first token (p90)", unit="s", csv_unit="s", decimals=3),
}
Y_METRICS = (
    "tput_per_gpu",
    "output_tput_per_gpu",
    "input_tput_per_gpu",
    "cost_per_million_tokens",
    "tokens_per_mw",
)
INTERACTIVITY_METRIC = "median_intvty"
LATENCY_METRICS = ("median_e2el", "p90_e2el", "median_ttft", "p90_ttft")
# Display switches the page applies in the browser; in the URL so a link keeps them.
DISPLAY_SWITCHES = {
    "optimal": "Hide non-optimal",
    "logx": "Log x",
    "logy": "Log y",
    "labels": "Parallelism labels",
}


@dataclass(frozen=True, kw_only=True)
class InferenceOptions:
    """What the official data offers for the page's controls."""

    models: list[str]
    scenarios: list[str]
    precisions: list[str]
    hardware: list[str]
    frameworks: list[str]
    run_dates: list[date]


@dataclass(frozen=True, kw_only=True)
class InferenceSelection:
    model: str
    scenario: str
    y_metric: str
    latency_metric: str  # x of the second chart
    as_of: date | None
    run_id: int | None
    precisions: list[str] | None  # None: all
    hardware: list[str] | None
    frameworks: list[str] | None
    display: dict[str, bool]  # DISPLAY_SWITCHES name -> on


def _choice_resolve(
    *, name: str, value: str, choices: list[str], scope: str = "", messages: list[str]
) -> str:
    """value when it is one of the choices, else the first choice with a message saying so."""
    if value in choices:
        return value
    if value:
        messages.append(f"{name} “{value}” has no official data{scope}: showing {choices[0]}.")
    return choices[0]


def _filter_resolve(
    *, name: str, values: list[str] | None, choices: list[str], messages: list[str]
) -> list[str] | None:
    """The chosen values that the data offers; None (no filter) when none are left."""
    if values is None:
        return None
    unknown = [value for value in values if value not in choices]
    if unknown:
        listed = ", ".join(f"“{value}”" for value in unknown)
        messages.append(f"No official {name} {listed} for this model and scenario: ignored.")
    known = [value for value in values if value in choices]
    return known or None


def _metric_resolve(
    *, name: str, value: str, choices: tuple[str, ...], default: str, messages: list[str]
) -> str:
    if value in choices:
        return value
    messages.append(
        f"The {name} axis offers {', '.join(choices)}; “{value}” is not one of them: "
        f"showing {default}."
    )
    return default


def inference_selection_parse(
    *,
    query_params: QueryDict,
    messages: list[str],
    overlay_scenarios: Mapping[str, set[str]],
) -> tuple[InferenceSelection, InferenceOptions] | None:
    """The page's selection from its URL, falling back to defaults with a message for each
    parameter that is wrong. overlay_scenarios (model -> scenarios of the unofficial runs shown)
    are offered too, so a run of a model without official data can still be drawn. None when
    there is no data at all."""
    models = sorted(set(official_models()) | set(overlay_scenarios))
    if not models:
        return None
    model = _choice_resolve(
        name="Model", value=query_params.get("model", ""), choices=models, messages=messages
    )
    scenarios = sorted(set(official_scenarios(model=model)) | overlay_scenarios.get(model, set()))
    scenario = _choice_resolve(
        name="Scenario",
        value=query_params.get("scenario", ""),
        choices=scenarios,
        scope=f" for {model}",
        messages=messages,
    )
    # The API's validation, on the model and scenario resolved above.
    resolved = query_params.copy()
    resolved.setlist("model", [model])
    resolved.setlist("scenario", [scenario])
    params, errors = chart_query_parse(resolved)
    for name, problems in errors.items():
        given = ", ".join(query_params.getlist(name))
        messages.append(f"Ignored {name} “{given}”: {' '.join(str(p) for p in problems)}")
    options = InferenceOptions(
        models=models,
        scenarios=scenarios,
        precisions=official_precisions(model=model, scenario=scenario),
        hardware=official_hardware(model=model, scenario=scenario),
        frameworks=official_frameworks(model=model, scenario=scenario),
        run_dates=official_run_dates(model=model, scenario=scenario),
    )
    selection = InferenceSelection(
        model=model,
        scenario=scenario,
        y_metric=_metric_resolve(
            name="y", value=params["y"], choices=Y_METRICS, default=Y_METRIC, messages=messages
        ),
        latency_metric=_metric_resolve(
            name="latency (x)",
            value=params["x"],
            choices=LATENCY_METRICS,
            default=coverage_x_metric(scenario),
            messages=messages,
        ),
        as_of=params.get("date"),
        run_id=params.get("run"),
        precisions=_filter_resolve(
            name="precision",
            values=params.get("precision"),
            choices=options.precisions,
            messages=messages,
        ),
        hardware=_filter_resolve(
            name="GPU", values=params.get("hardware"), choices=options.hardware, messages=messages
        ),
        frameworks=_filter_resolve(
            name="framework",
            values=params.get("framework"),
            choices=options.frameworks,
            messages=messages,
        ),
        display={name: query_params.get(name) == "1" for name in DISPLAY_SWITCHES},
    )
    return selection, options


def _series_key(series: ChartSeries) -> str:
    """Names a series in the URL's `hide` parameter (legend toggles), across reloads."""
    group = series.group
    layout = "disagg" if group.disagg else "agg"
    return "|".join((group.hardware, group.framework, group.precision, group.spec_method, layout))


def _series_selected(series: ChartSeries, *, selection: InferenceSelection) -> bool:
    group = series.group
    return all(
        chosen is None or value in chosen
        for value, chosen in (
            (group.precision, selection.precisions),
            (group.hardware, selection.hardware),
            (group.framework, selection.frameworks),
        )
    )


def _run_url(*, run_id: int, run_attempt: int) -> str:
    return f"{reverse('runs:run_detail', args=[run_id])}?attempt={run_attempt}"


def _metric_payload(metric: str) -> dict:
    label = METRIC_LABELS[metric]
    return {
        "metric": metric,
        "title": label.title,
        "unit": label.unit,
        "csv_column": f"{metric}_{label.csv_unit}",
        "decimals": label.decimals,
        "higher_is_better": higher_is_better(metric),
    }


def _official_series(*, selection: InferenceSelection, x_metric: str) -> list[ChartSeries]:
    """Every official series of the model, scenario and date or run, whatever the precision,
    GPU and framework filters: those are applied by _series_selected, so the colours, which
    index every hardware+framework pair, stay put when the filters change."""
    return official_chart_series(
        model=selection.model,
        scenario=selection.scenario,
        x_metric=x_metric,
        y_metric=selection.y_metric,
        as_of=selection.as_of,
        run_id=selection.run_id,
    )


def _pair_key(series: ChartSeries) -> str:
    return f"{series.group.hardware}|{series.group.framework}"


def _point_payload(chart_point: ChartPoint, *, on_frontier: bool) -> dict:
    point = chart_point.point
    return {
        "cell_id": point.cell_id,
        "concurrency": point.concurrency,
        "topology": point.topology,
        "image": point.image,
        "date": point.date.isoformat(),
        "run_id": point.run_id,
        "run_attempt": point.run_attempt,
        "run_url": _run_url(run_id=point.run_id, run_attempt=point.run_attempt),
        "x": chart_point.x,
        "y": chart_point.y,
        "frontier": on_frontier,
    }


def _series_payload(series: ChartSeries, *, colour: int, symbol: int) -> dict:
    group = series.group
    frontier_cells = {chart_point.point.cell_id for chart_point in series.frontier}
    return {
        "kind": "official",
        "key": _series_key(series),
        "label": group.label,
        "hardware": group.hardware,
        "framework": group.framework,
        "precision": group.precision,
        "spec_method": group.spec_method,
        "disagg": group.disagg,
        "date": group.date.isoformat(),
        "colour": colour,
        "symbol": symbol,
        "points": [
            _point_payload(chart_point, on_frontier=chart_point.point.cell_id in frontier_cells)
            for chart_point in series.points
        ],
    }


# ---------------------------------------------------------------------------------------------
# Unofficial runs (curves.unofficial): their curves as overlay series, and against official
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class OverlayCurve:
    """One curve of a ready unofficial run, with its coverage and bypass."""

    entry: UnofficialRun
    curve: RunCurve

    @property
    def identity(self) -> CurveIdentity:
        return self.curve.identity


def overlay_curves_load(ready: list[UnofficialRun]) -> list[OverlayCurve]:
    """Every curve of the ready runs, in URL order then curve key: two queries per run."""
    return [
        OverlayCurve(entry=entry, curve=curve)
        for entry in ready
        for curve in run_coverage(run=entry.run).curves
    ]


def _overlay_pair_key(overlay: OverlayCurve) -> str:
    return f"{overlay.identity.hardware}|{overlay.identity.framework}"


def _overlay_label(identity: CurveIdentity) -> str:
    parts = [identity.hardware, identity.framework, identity.precision]
    if identity.spec_method:
        parts.append(identity.spec_method)
    return " / ".join(parts)


def _overlay_value(values: dict, *, metric: str, cost: GpuCost | None) -> float | None:
    """A chart value of one overlay cell, as the official series compute theirs."""
    if metric == "cost_per_million_tokens":
        value = cost_per_million_tokens(
            values["tput_per_gpu"], cost.dollars_per_gpu_hour if cost else None
        )
    elif metric == "tokens_per_mw":
        value = tokens_per_mw(values["tput_per_gpu"], cost.watts_per_gpu if cost else None)
    else:
        value = values[metric]
    return value if value is not None and math.isfinite(value) else None


def _overlay_series_payload(
    overlay: OverlayCurve,
    *,
    x_metric: str,
    y_metric: str,
    values_by_cell: dict[int, dict],
    cost: GpuCost | None,
    colour: int,
) -> dict:
    """A chart series of kind "unofficial": ✕ markers and a dashed frontier in the browser."""
    run = overlay.entry.run
    measured = run_measured_in(run=run)  # a merge that reused a PR run shows the PR run's cells
    identity = overlay.identity
    run_date = (measured.gh_created_at or measured.created).date().isoformat()
    chart_points = [
        (
            point,
            _overlay_value(values_by_cell[point.cell_id], metric=x_metric, cost=cost),
            _overlay_value(values_by_cell[point.cell_id], metric=y_metric, cost=cost),
        )
        for point in overlay.curve.points
    ]
    frontier_cells = {
        point.ref
        for point in frontier_for_metrics(
            (
                Point(x=x, y=y, concurrency=point.concurrency, ref=point.cell_id)
                for point, x, y in chart_points
                if x is not None and y is not None
            ),
            x_metric=x_metric,
            y_metric=y_metric,
        )
    }
    return {
        "kind": "unofficial",
        "key": f"unofficial|{run.run_id}|{overlay.curve.key}",
        "label": f"UNOFFICIAL run {run.run_id} · {_overlay_label(identity)}",
        "hardware": identity.hardware,
        "framework": identity.framework,
        "precision": identity.precision,
        "spec_method": identity.spec_method or "none",
        "disagg": any(values_by_cell[point.cell_id]["disagg"] for point in overlay.curve.points),
        "date": run_date,
        "colour": colour,
        "symbol": 0,
        "run_id": run.run_id,
        "run_attempt": run.run_attempt,
        "branch": run.head_branch,
        "head_sha": run.head_sha,
        "points": [
            {
                "cell_id": point.cell_id,
                "concurrency": point.concurrency,
                "topology": point.topology,
                "image": point.image,
                "date": run_date,
                "run_id": measured.run_id,
                "run_attempt": measured.run_attempt,
                "run_url": _run_url(run_id=measured.run_id, run_attempt=measured.run_attempt),
                "x": x,
                "y": y,
                "frontier": point.cell_id in frontier_cells,
            }
            for point, x, y in chart_points
        ],
    }


@dataclass(frozen=True, kw_only=True)
class OverlayPointRow:
    """One point of an overlay curve in the "change against official" table (coverage axes)."""

    point: RunCurvePoint
    on_frontier: bool  # on the run's own frontier (the coverage count)
    change: PointChange | None  # None for a point without usable x and y


@dataclass(frozen=True, kw_only=True)
class OverlayComparison:
    overlay: OverlayCurve
    baseline: Baseline
    rows: list[OverlayPointRow]


def overlay_comparisons(
    *, selection: InferenceSelection, shown: list[OverlayCurve]
) -> list[OverlayComparison]:
    """Each shown overlay curve against the official frontier of its GPU, engine and precision,
    on the coverage axes (tput_per_gpu against the scenario's E2EL), whatever axes the charts
    show: the comparison reviewers make beside the coverage count."""
    if not shown:
        return []
    official = [
        OfficialFrontier(
            hardware=series.group.hardware,
            framework=series.group.framework,
            precision=series.group.precision,
            label=series.group.label,
            points=tuple(Point(x=cp.x, y=cp.y) for cp in series.frontier),
        )
        for series in official_chart_series(
            model=selection.model,
            scenario=selection.scenario,
            x_metric=coverage_x_metric(selection.scenario),
            y_metric=Y_METRIC,
            as_of=selection.as_of,
            run_id=selection.run_id,
        )
    ]
    comparisons = []
    for overlay in shown:
        identity, coverage = overlay.identity, overlay.curve.coverage
        valid = [*coverage.frontier, *(entry.point for entry in coverage.dominated)]
        baseline = baseline_choose(
            official,
            hardware=identity.hardware,
            framework=identity.framework,
            precision=identity.precision,
        )
        frontiers = [frontier.points for frontier in baseline.frontiers]
        change_of = {
            change.point.ref: change
            for change in point_changes(valid, official_frontiers=frontiers)
        }
        frontier_cells = {point.ref for point in coverage.frontier}
        rows = [
            OverlayPointRow(
                point=point,
                on_frontier=point.cell_id in frontier_cells,
                change=change_of.get(point.cell_id),
            )
            for point in overlay.curve.points
        ]
        comparisons.append(OverlayComparison(overlay=overlay, baseline=baseline, rows=rows))
    return comparisons


def charts_build(
    *,
    selection: InferenceSelection,
    precisions: list[str],
    overlays: list[OverlayCurve],
) -> list[dict]:
    """Both charts with their axes and selected series (the official ones, then the overlays
    of the selected model and scenario), for the page's JSON and its tables."""
    every_series_by_chart = {
        chart_id: (x_metric, _official_series(selection=selection, x_metric=x_metric))
        for chart_id, x_metric in (
            ("chart-interactivity", INTERACTIVITY_METRIC),
            ("chart-latency", selection.latency_metric),
        )
    }
    # Both charts hold the same series (only x differs), so one colour map serves both.
    _, first_series = next(iter(every_series_by_chart.values()))
    pairs = sorted({_pair_key(series) for series in first_series})
    colour_of = {pair: index for index, pair in enumerate(pairs)}
    # An overlay takes the colour of its GPU+engine; one without an official counterpart takes
    # the next free colour, so it is never mistaken for an official series.
    for overlay in overlays:
        colour_of.setdefault(_overlay_pair_key(overlay), len(colour_of))
    symbol_of = {precision: index for index, precision in enumerate(precisions)}
    cost_of: dict[str, GpuCost] = {}
    if overlays and selection.y_metric in DERIVED_METRICS:
        overlay_gpus = {overlay.identity.hardware for overlay in overlays}
        cost_of = {
            cost.hardware: cost for cost in GpuCost.objects.filter(hardware__in=overlay_gpus)
        }
    values_by_cell = overlay_cell_values(
        cell_ids=[point.cell_id for overlay in overlays for point in overlay.curve.points]
    )
    return [
        {
            "id": chart_id,
            "x": _metric_payload(x_metric),
            "y": _metric_payload(selection.y_metric),
            "series": [
                _series_payload(
                    series,
                    colour=colour_of[_pair_key(series)],
                    symbol=symbol_of.get(series.group.precision, 0),
                )
                for series in every_series
                if _series_selected(series, selection=selection)
            ]
            + [
                _overlay_series_payload(
                    overlay,
                    x_metric=x_metric,
                    y_metric=selection.y_metric,
                    values_by_cell=values_by_cell,
                    cost=cost_of.get(overlay.identity.hardware),
                    colour=colour_of[_overlay_pair_key(overlay)],
                )
                for overlay in overlays
            ],
        }
        for chart_id, (x_metric, every_series) in every_series_by_chart.items()
    ]


def gpu_costs_used(*, y_metric: str, hardware: set[str]) -> tuple[list[GpuCost], list[str]]:
    """The GpuCost rows a derived y metric used, and the GPUs that have none (their points are
    left out); nothing for a measured metric."""
    if y_metric not in DERIVED_METRICS or not hardware:
        return [], []
    costs = list(GpuCost.objects.filter(hardware__in=hardware))
    return costs, sorted(hardware - {cost.hardware for cost in costs})
